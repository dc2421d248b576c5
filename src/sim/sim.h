/*
 * sim.h - the engine: struct sim, simulated threads as coroutines, CPUs with
 * run queues and user/sys accounting, simulated time, the event queue, the
 * PRNG, and the scheduler interface with explicit yield points.
 *
 * The engine knows threads, CPUs, time, events, the scheduler strategy and
 * its PRNG, and nothing of the kernel or the machine above it. What a context
 * switch means for the machine reaches it through struct sim_cpu_ops,
 * installed from above (as the kernel's scheduler calls switch_mm through arch
 * hooks). Upper layers extend struct sim by embedding it (container_of): the
 * arch layer's struct machine embeds it, the mm layer's struct kernel embeds
 * the machine; per-task kernel state (struct task) embeds struct sim_thread.
 *
 * Determinism: events are ordered by (time, seq) where seq is the insertion
 * counter; the only randomness is sim->rng, seeded from the config. Nothing
 * depends on host addresses or host time (the host-time budget of a run only
 * decides where a partial run stops, and such a run says so).
 *
 * Threads call sim_step() at every point where another CPU may interleave
 * (lock operations, PTE updates, each sub-step of tlb_finish_mmu, TLBI issue
 * and DSB completion, IPI rounds). The time-ordered strategy resumes threads
 * in simulated-time order; the exploration strategy (explore.h) plugs in at
 * the same calls.
 *
 * CPUs: each has a current thread and a FIFO run queue. A queued thread gets
 * the CPU when the current one sleeps or exits or, in run mode, when the
 * current one's time slice (sched_slice_ns, 0 = none) is over: the CFS tick
 * only sets need_resched, and the modelled kernel is not preemptible (the
 * PREEMPT_NONE / PREEMPT_VOLUNTARY builds of the seeds' distributions), so
 * the switch happens at the thread's next yield point in user mode, or at a
 * voluntary preemption point in kernel mode (sim_cond_resched, where the
 * model has one: vmalloc and vfree), where a thread woken behind the
 * current one also takes the CPU (wakeup preemption). Check
 * mode has no time slices (its strategy decides who runs).
 *
 * Soft lockups (kernel/watchdog.c, v6.10): the watchdog's per-CPU timestamp
 * moves whenever the CPU schedules (a context switch, going idle, waking
 * from idle), and user mode counts as scheduling (the stopper thread would
 * preempt it at once), so a CPU is stuck while one thread stays in kernel
 * mode without leaving it. Stuck for more than 2 x watchdog_thresh_s counts
 * one soft lockup per episode (metrics.softlockups). Checked where it is
 * cheap: when a thread leaves its CPU or returns to user mode, and in the
 * run-mode slow path (every SIM_POLL_PERIOD steps, or every step while a
 * thread waits in a run queue).
 */
#ifndef TLBSIM_SIM_H
#define TLBSIM_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cost/params.h"
#include "sim/coro.h"
#include "sim/evq.h"
#include "sim/rng.h"
#include "sim/trace.h"
#include "tlbsim/tlbsim.h"

#ifndef container_of
#define container_of(ptr, type, member) ((type *)(void *)((char *)(ptr) - offsetof(type, member)))
#endif

enum thread_state { TS_NEW, TS_RUNNABLE, TS_RUNNING, TS_SLEEPING, TS_DONE };
enum cpu_mode { MODE_USER, MODE_SYS };	/* struct sim_cpu's mode_ns index */

struct sim;
struct sim_thread;
typedef void (*thread_fn)(struct sim *s, struct sim_thread *t);

struct sim_thread {
	int id;
	struct sim *sim;
	enum thread_state state;
	int cpu;
	enum cpu_mode mode;
	uint64_t pending_ns;		/* charged but not yet elapsed */
	uint64_t *acct;			/* &sim->cpus[cpu].mode_ns[mode], kept by
					 * sim.c wherever cpu or mode change: a
					 * charge adds there without indexing */
	struct coro co;
	thread_fn fn;
	void *arg;
	uint64_t sleep_start;
	bool spinning;			/* busy-waiting on its CPU (not asleep) */
	bool daemon;			/* a kernel thread: asleep at the end is not a deadlock */
	uint64_t spin_start;
	uint64_t spin_irq_until;	/* interrupt handlers that hit the spin end */
	uint64_t kernel_since;		/* when it last entered kernel mode (soft lockups) */
	struct sim_thread *rq_next;	/* run queue link */
	struct sim_thread *joiner;
	int migrate_to;			/* 1 + a CPU it must move to at its next
					 * preemption point (sim_request_migrate); 0: none */
};

/* 64 bytes: sim_charge indexes this array at every step */
struct sim_cpu {
	struct sim_thread *curr;
	struct sim_thread *rq_head, *rq_tail;
	uint64_t slice_start;		/* when curr got the CPU (time slices) */
	bool need_resched;		/* a thread was woken behind curr */
	union {
		struct {
			uint64_t user_ns, sys_ns;
		};
		uint64_t mode_ns[2];	/* by enum cpu_mode: a charge indexes, not branches */
	};
	uint64_t idle_at;		/* idle (curr NULL): when it finished entering
					 * the idle state (idle_entry_ns after it
					 * went idle); a wake-up before then skips
					 * the idle exit */
};

/* The soft-lockup watchdog's view of a CPU (kernel/watchdog.c: the per-CPU
 * touch timestamp the stopper thread updates whenever the CPU schedules). */
struct sim_cpu_watchdog {
	uint64_t sched_at;		/* the CPU last scheduled (switch, idle, wake) */
	uint64_t counted_since;		/* start of the last episode counted (~0: none) */
};

/* What a context switch does to the machine, installed from above. */
struct sim_cpu_ops {
	/* cpu starts running next, or goes idle (next == NULL) */
	void (*switch_to)(struct sim *s, int cpu, struct sim_thread *next);
	/* check mode: t is about to run on cpu (NULL: nothing to do) */
	void (*before_resume)(struct sim *s, int cpu);
};

/* Scheduler strategy: called at every yield point of the running thread after
 * its cost has been charged. Return true to switch away (the thread is
 * re-queued at now + pending), false to continue running. */
struct sched_ops {
	const char *name;
	bool (*yield)(struct sim *s, struct sim_thread *t, const struct sim_point *yp);
};
extern const struct sched_ops sched_time_ordered;

/* Why a run stopped before its threads finished. */
enum sim_stop {
	SIM_STOP_NONE,
	SIM_STOP_TIME_LIMIT,	/* the host-time budget ran out */
	SIM_STOP_SIGNAL,	/* interrupted() said so (SIGINT/SIGTERM) */
};

struct explore;

/* the jitter draw's factor levels (sim_jittered): the top
 * SIM_JIT_LEVEL_BITS bits of the jitter stream pick one */
#define SIM_JIT_LEVEL_BITS 8
#define SIM_JIT_LEVELS (1 << SIM_JIT_LEVEL_BITS)
struct sim {
	/* time and events */
	uint64_t now;
	uint64_t seq;
	uint64_t steps;			/* yield points passed (run mode: exact while
					 * tracing, else in units of SIM_POLL_PERIOD) */
	uint32_t slow_countdown;	/* run mode: steps until sim_step_slow() */
	uint64_t poll_at;		/* run mode: steps at which to poll next */
	struct evq q;
	struct coro main_co;
	struct sim_thread *curr;	/* running thread, NULL in scheduler */
	struct sim_thread *last_ran;	/* run mode: the thread the last event resumed */
	struct sim_thread **threads;
	int nthreads;
	size_t cap_threads;
	int live_threads;
	uint32_t nr_queued;		/* threads waiting in CPU run queues; while
					 * non-zero every step takes the slow path
					 * (time slices) */
	const struct sched_ops *sched;	/* run mode: sched_time_ordered, which
					 * sim_step_arg runs inline */
	struct explore *ex;		/* non-NULL in check mode (sim_set_explore) */
	struct rng rng;
	/* jitter (run mode): its own stream, so the workloads' draws do not
	 * depend on it; jitter_pct 0 = exact mode */
	uint64_t jit_state;
	uint32_t jitter_pct;
	uint32_t jit_pct;		/* what is drawn with: jitter_pct, 0 in check
					 * mode (sim_set_explore) */
	/* ns * jit_pct / 100 as one multiply for ns < jit_lim, where that is
	 * exact (sim_jit_amp) */
	uint64_t jit_lim, jit_mul;
	/* the draw (sim_jittered): costs below jit_min are exact (jit_min is
	 * UINT64_MAX when jit_pct is 0); those in [jit_min, jit_min +
	 * jit_span) take one of SIM_JIT_LEVELS factors, jit_tab[i] = f_i 2^32,
	 * f_i spread evenly over [-jit_pct/100, +jit_pct/100]; larger ones
	 * sim_jittered_slow (sim.c: sim_jit_setup) */
	uint64_t jit_min, jit_span;
	uint32_t jit_lazy;		/* jit_tab, jit_min and jit_span are not
					 * computed yet (sim.c: jit_levels) */
	int64_t jit_tab[SIM_JIT_LEVELS];
	size_t stack_size;
	struct sim_stack_pool *stack_pool;	/* NULL: map and unmap each stack */
	uint64_t stacks_mapped;		/* host: stacks mapped, not taken from the pool */
	uint64_t exit_at;		/* latest thread exit, its charged time included */
	/* latest end of a handler run on an idle CPU (sim_steal_at): its sys
	 * time has elapsed by then, so the run lasts at least that long */
	uint64_t steal_until;
	int error;			/* enum tlbsim_err */
	char errmsg[TLBSIM_ERRLEN];
	/* a workload's account of a deadlock (sim_fail_deadlock): where its
	 * threads sleep, appended to the message; returns the error to fail
	 * with (the scenario VM: TLBSIM_EINVAL when a task of the user's file
	 * waits forever). NULL: the message alone, TLBSIM_EINTERNAL. */
	int (*deadlock_where)(struct sim *s, void *arg, char *buf, size_t len);
	void *deadlock_arg;
	/* the caller's way to interrupt a run: a host-time deadline and a
	 * callback (e.g. "is SIGINT pending?"), polled every few thousand steps,
	 * the callback at most once per interrupted_period_ns of host time (0:
	 * at every poll) */
	uint64_t deadline_host_ns;	/* 0: none */
	int (*interrupted)(void *ctx);	/* non-zero (a signal number): stop */
	void *interrupted_ctx;
	uint64_t interrupted_period_ns;
	uint64_t interrupted_next_ns;	/* sim_host_ns() of its next call */
	enum sim_stop stopped;
	int stop_signal;		/* SIM_STOP_SIGNAL: what interrupted() returned */
	/* host memory held by this simulation (stacks, frames, tables, kernel
	 * objects) and the budget it may not exceed (0: none) */
	uint64_t host_bytes, host_limit;
	/* internal-bug handler (tests route it to cmocka's mock_assert) */
	void (*on_bug)(const char *file, int line, const char *what);

	/* CPUs and costs */
	int nr_cpus;
	struct sim_cpu *cpus;
	struct sim_cpu_watchdog *wd;	/* per CPU */
	int64_t p[P_COUNT];		/* cost/hardware parameters */
	const struct sim_cpu_ops *cpu_ops;
	void *cpu_ops_ctx;

	struct trace_buf *trace;	/* non-NULL: record every yield point */
	struct tlbsim_metrics m;	/* results, counted by every layer */
	/* a timed workload's measured window, once open (window.c): where a
	 * run stopped early (--time-limit, a signal) measures it to */
	bool window_open;
	uint64_t window_t0, window_ops0;
};

/*
 * Thread stacks kept between simulations run one after another (the checker
 * runs thousands of short schedules). Unmapping a used stack costs the host a
 * TLB shootdown (on a paravirtualised guest a hypercall of tens of us): it was
 * most of a check's host time. A simulation with a pool takes stacks from it
 * and gives them back when its threads end; the owner frees the pool after
 * the last simulation. Stack addresses never reach the model's results.
 */
#define SIM_STACK_POOL_MAX 256
struct sim_stack_pool {
	struct coro_stack st[SIM_STACK_POOL_MAX];
	uint32_t n;
	size_t stack_size;		/* the size the pooled stacks were mapped for */
	/* the frame table's reserved address range (hw/frame.c), kept for the
	 * same reason: base NULL, or `bytes` mapped at base, `mapped` frames of
	 * it accessible and the first `dirty` of them written */
	struct {
		void *base;
		size_t bytes;
		uint64_t cap, mapped, dirty;
	} frames;
	/* empty page-table buffers (hw/frame.c), kept so that the next
	 * simulation need not clear new ones (a 64K-granule table is 64 KiB):
	 * `n` of them, each `bytes` long, linked through their first word */
	struct {
		void *head;
		size_t bytes;
		uint32_t n;
	} tables;
	/* the translation caches' arrays of the last simulation, every entry
	 * removed (hw/frame.c): the next one of the same geometry takes them
	 * instead of clearing new ones; freed by caches_free */
	void *caches;
	void (*caches_free)(void *caches);
};
#define SIM_TABLE_POOL_MAX 256
/* Release everything pooled: stacks, the frame range, table buffers and the
 * kept caches (through caches_free). */
void sim_stack_pool_free(struct sim_stack_pool *p);

/* ---- lifecycle ---- */
int sim_init(struct sim *s, int nr_cpus, const int64_t *params, uint64_t seed);
void sim_destroy(struct sim *s);
/* Check mode with explorer ex (NULL: run mode), before any thread runs. */
void sim_set_explore(struct sim *s, struct explore *ex);
/* Run until all threads finished (or the run is stopped). 0 or an enum tlbsim_err. */
int sim_run(struct sim *s);
/* The time a run to its end lasted: the last event, the last thread exit
 * (its charged time included) or the end of the last interrupt handler run
 * on an idle CPU, whichever is latest - every CPU's charged time has elapsed
 * by then, so user + sys + idle = that x cpus. */
uint64_t sim_elapsed_until(const struct sim *s);
/* The time up to which charged work extends: sim_elapsed_until, or later
 * for threads queued to resume after time they were charged (a run stopped
 * early has them; sim_run run to its end has none). */
uint64_t sim_charged_until(const struct sim *s);
/* Run one event (engine internal, shared with the explore loop). */
void sim_dispatch(struct sim *s, const struct event *ev);
/* Record an error (the first one wins). */
void sim_fail(struct sim *s, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The run ended with live threads all asleep and nothing queued to wake them:
 * "deadlock: N simulated threads asleep forever", with the workload's
 * account of where (deadlock_where) */
void sim_fail_deadlock(struct sim *s);
/* Record an error and, inside a simulated thread, abandon the run: the thread
 * never resumes and sim_run() returns the error. Outside a thread it only
 * records the error. */
void sim_fatal(struct sim *s, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* sim_fatal(TLBSIM_ENOMEM) naming what could not be allocated, the host
 * memory the simulation holds and its budget. */
void sim_oom(struct sim *s, const char *what);
/* Stop exploring this schedule (check mode; no-op otherwise). */
void sim_stop_schedule(struct sim *s);
/* Account `bytes` more host memory to the simulation. 0, or -1 (nothing
 * accounted) when that would exceed the host memory budget. */
int sim_host_charge(struct sim *s, uint64_t bytes);
static inline void sim_host_release(struct sim *s, uint64_t bytes)
{
	s->host_bytes -= bytes < s->host_bytes ? bytes : s->host_bytes;
}
/* Host nanoseconds (CLOCK_MONOTONIC): for budgets only, never for results. */
uint64_t sim_host_ns(void);

/* ---- threads ---- */
/* Allocate a zeroed thread object of `size` bytes (>= sizeof(struct
 * sim_thread)); upper layers embed struct sim_thread first and fill in their
 * part before sim_thread_start(). The sim owns and frees it. NULL on failure. */
struct sim_thread *sim_thread_alloc(struct sim *s, size_t size);
/* Start t running fn on cpu after start_delay ns. 0, or an enum tlbsim_err. */
int sim_thread_start(struct sim *s, struct sim_thread *t, thread_fn fn, void *arg, int cpu,
		     uint64_t start_delay);
static inline struct sim_thread *sim_current(struct sim *s) { return s->curr; }
/* t is a daemon (a kernel worker): the run may end while it sleeps. */
void sim_thread_set_daemon(struct sim *s, struct sim_thread *t);
/* Wait for thread t to finish (current thread sleeps). */
void sim_join(struct sim *s, struct sim_thread *t);

/* ---- time ---- */
/* ns * s->jit_pct / 100 (in 64 bits, as it always was computed). For ns <
 * jit_lim it is the high word of ns * jit_mul, jit_mul = ceil(jit_pct *
 * 2^64 / 100) (sim.c: sim_jit_setup, where this is proved): one multiply
 * instead of a multiply and a division. */
static inline uint64_t sim_jit_amp(const struct sim *s, uint64_t ns)
{
	if (__builtin_expect(ns < s->jit_lim, 1))
		return (uint64_t)(((unsigned __int128)ns * s->jit_mul) >> 64);
	return ns * s->jit_pct / 100;
}
/* sim_jittered's draw for costs from 2^31 ns on, for every cost when
 * jit_pct is above 100, and the first draw, which computes the levels (sim.c) */
uint64_t sim_jittered_slow(struct sim *s, uint64_t ns);
/* The jitter stream's step: a 64-bit LCG (Knuth's MMIX multiplier and
 * increment). Only its top byte is used, the LCG's best bits. */
static inline uint64_t sim_jit_next(struct sim *s)
{
	uint64_t x = s->jit_state * 6364136223846793005ull + 1442695040888963407ull;
	s->jit_state = x;
	return x;
}
/* An operation's cost or a wake-up delay with jitter: ns (1 + f), f drawn
 * from SIM_JIT_LEVELS levels spread evenly over [-J, +J], J = jitter / 100
 * (the jitter parameter; run mode only: check mode explores orders and
 * keeps exact times). The result lies in [ns - ceil(ns J), ns + ceil(ns J)],
 * its mean ns.
 * A cost too small to move (ns J < 1) is exact and draws nothing. The level
 * is the top byte of the sim's own jitter stream; a table of the levels'
 * fixed-point factors makes the draw one multiply of ns. Inline: charges
 * are the engine's most frequent call. */
static inline uint64_t sim_jittered(struct sim *s, uint64_t ns)
{
	/* one compare takes ns in [jit_min, jit_min + jit_span) */
	if (__builtin_expect(ns - s->jit_min >= s->jit_span, 0)) {
		if (ns < s->jit_min)
			return ns;
		return sim_jittered_slow(s, ns);
	}
	int64_t f = s->jit_tab[sim_jit_next(s) >> (64 - SIM_JIT_LEVEL_BITS)];
	/* ns f rounded to the nearest ns (plus 2^31, then an arithmetic shift:
	 * a floor alone would take half a nanosecond off every draw on
	 * average); ns < 2^31 and |f| <= 2^32 keep the sum inside int64 */
	return ns + (uint64_t)(((int64_t)ns * f + (INT64_C(1) << 31)) >> 32);
}
/* Charge ns of CPU time in the current mode to the current thread's CPU. */
static inline void sim_charge(struct sim *s, uint64_t ns)
{
	struct sim_thread *t = s->curr;
	if (!t)
		return;
	ns = sim_jittered(s, ns);
	*t->acct += ns;
	t->pending_ns += ns;
}
/* Charge ns as sys time. */
static inline void sim_charge_sys(struct sim *s, uint64_t ns)
{
	struct sim_thread *t = s->curr;
	if (!t)
		return;
	ns = sim_jittered(s, ns);
	s->cpus[t->cpu].sys_ns += ns;
	t->pending_ns += ns;
}
/* sim_set_mode's return to user mode (sim.c: the soft-lockup check, a
 * pending migration) */
void sim_set_mode_user(struct sim *s, struct sim_thread *t);
/* The current thread enters (MODE_SYS) or leaves (MODE_USER) the kernel.
 * Inline: every call passes a constant mode, and entering is three stores. */
static inline void sim_set_mode(struct sim *s, enum cpu_mode mode)
{
	struct sim_thread *t = s->curr;
	if (!t)
		return;
	if (mode == MODE_SYS) {
		if (t->mode != MODE_SYS) {
			t->kernel_since = s->now + t->pending_ns;
			t->mode = MODE_SYS;
			t->acct++;	/* mode_ns[MODE_USER] -> mode_ns[MODE_SYS] */
		}
		return;
	}
	if (t->mode != MODE_USER || t->migrate_to)
		sim_set_mode_user(s, t);
}
/* ---- migration ---- */
/* The current thread moves to CPU cpu now: it leaves its CPU as if it slept
 * and is enqueued on cpu as a woken thread is (an idle CPU runs it after
 * idle_exit_ns). */
void sim_migrate(struct sim *s, int cpu);
/* Ask thread t to move to CPU cpu: a sleeping thread moves at once (it wakes
 * there); a running or runnable one at its next preemption point: the
 * return to user mode (sim_set_mode(MODE_USER)) or sim_preempt_point. */
void sim_request_migrate(struct sim *s, struct sim_thread *t, int cpu);
/* A point where the current thread may be preempted (a kernel with
 * CONFIG_PREEMPT, outside preempt_disable): a pending migration happens here. */
void sim_preempt_point(struct sim *s);
/* A yield point: charge cost_ns (current mode), record (a, b) if tracing,
 * then let the scheduler decide whether another thread runs first. In run
 * mode a thread in user mode whose time slice (sched_slice_ns) is over while
 * its CPU's run queue is not empty is preempted here. */
void sim_step_out(struct sim *s, struct sim_thread *t, const struct sim_point *yp, uint64_t a,
		  uint64_t b);
void sim_step_yield(struct sim *s, struct sim_thread *t, uint64_t wake);
/* Inline: the common step (no slow-path countdown due, no event before the
 * thread's new time) is a charge and a compare; everything else is
 * sim_step_out, which does what the whole step did (sim.c). */
static inline void sim_step_arg(struct sim *s, const struct sim_point *yp, uint64_t cost_ns,
				uint64_t a, uint64_t b)
{
	struct sim_thread *t = s->curr;
	/* no "if (cost_ns)": nearly every step has a cost, and a cost of 0
	 * draws nothing (its amp is 0) and adds 0 */
	uint64_t ns = sim_jittered(s, cost_ns);
	*t->acct += ns;
	t->pending_ns += ns;
	uint64_t wake = s->now + t->pending_ns;
	if (__builtin_expect(s->slow_countdown != 1, 1)) {
		if (__builtin_expect(wake < s->q.top_time, 1)) {
			s->slow_countdown--;
			s->now = wake;
			t->pending_ns = 0;
			return;
		}
		sim_step_yield(s, t, wake);	/* an event comes first */
		return;
	}
	sim_step_out(s, t, yp, a, b);
}
static inline void sim_step(struct sim *s, const struct sim_point *yp, uint64_t cost_ns)
{
	sim_step_arg(s, yp, cost_ns, 0, 0);
}
/* Record an event that is not a yield point (when tracing). */
void sim_trace_rec(struct sim *s, const struct sim_point *pt, uint64_t a, uint64_t b);
static inline void sim_trace(struct sim *s, const struct sim_point *pt, uint64_t a, uint64_t b)
{
	if (s->trace && trace_in_window(s->trace, s->now))
		sim_trace_rec(s, pt, a, b);
}
/* The same for an event of CPU cpu outside any thread (an entity of the
 * explorer: a TLBI completing there, an IPI handled there). */
void sim_trace_cpu(struct sim *s, int cpu, const struct sim_point *pt, uint64_t a, uint64_t b);
/* Sleep the current thread until sim_wake(); its CPU runs something else or
 * goes idle. Idle (nothing queued): the thread first pays schedule() out
 * (half of ctx_switch_ns, as sys) and the CPU then spends idle_entry_ns
 * entering the idle state (do_idle -> cpuidle_idle_call, kernel/sched/idle.c,
 * v5.1). A thread woken on an idle CPU resumes after the wake-up delay, the
 * idle exit (idle_exit_ns; none if the wake-up came before the idle entry
 * ended: it resumes when the entry ends) and schedule() in (the other half of
 * ctx_switch_ns, as sys). */
void sim_sleep(struct sim *s);
void sim_wake(struct sim *s, struct sim_thread *t, uint64_t delay_ns);
/* cond_resched() / might_sleep() (kernel/sched/core.c, v6.10): a voluntary
 * preemption point in kernel mode. Run mode: if a thread waits in this
 * CPU's run queue and either it was woken behind the current thread (wakeup
 * preemption: check_preempt_wakeup gives a sleeper that much vruntime credit
 * over a CPU hog, so need_resched is set at the wake-up) or the current
 * thread's slice is over, the current thread goes to the tail of the queue
 * and the head runs. Check mode: nothing (the strategy decides who runs). */
void sim_cond_resched(struct sim *s);
/* A thread just created on cpu counts as woken there (a kworker the kernel
 * had from boot, created here on first use). */
void sim_set_need_resched(struct sim *s, int cpu);
/* Sleep the current thread for ns (after its charged time), then wake it. */
void sim_sleep_for(struct sim *s, uint64_t ns);
/* Busy-wait on the CPU until sim_wake() (optimistic spinning): the CPU stays
 * busy and the waiting time is charged as sys when the thread resumes. */
void sim_spin_wait(struct sim *s);
/* Turn a spinning thread into a sleeping one (it gives up its CPU now). */
void sim_spin_to_sleep(struct sim *s, struct sim_thread *t);
/* Charge ns of interrupt (sys) time to CPU cpu, delaying whatever runs there
 * (a spinning thread: its spin covers the time, and it resumes no earlier
 * than the handlers end). */
void sim_steal(struct sim *s, int cpu, uint64_t ns);
/* The same for work that starts at time `at` (an interrupt's arrival): on an
 * idle CPU it also keeps a thread woken there from starting before it ends. */
void sim_steal_at(struct sim *s, int cpu, uint64_t at, uint64_t ns);
bool sim_cpu_idle(struct sim *s, int cpu);
/* Threads on cpu: the running one (if any) and those waiting in its queue. */
int sim_cpu_nr_running(const struct sim *s, int cpu);

/* Timed callbacks (RCU grace periods, ...) */
void sim_call_at(struct sim *s, uint64_t time, ev_fn fn, ev_fn drop, void *arg, uint64_t data);
/* Check mode: remove the pending callback (fn, data) from the ready list, if
 * there is one (a store-buffer drain made moot by a fence). */
void sim_cancel_call(struct sim *s, ev_fn fn, uint64_t data);
/* Check mode only: an entity the strategy may run at any decision from now
 * on (a callback candidate, ordered with the others by queueing order), e.g.
 * the completion of a broadcast TLBI on one CPU. Returns its seq, which
 * sim_call_cancel() takes to withdraw it before it ran (true if it was
 * still pending). */
/* How the random strategy weighs an entity against a thread (weight
 * EXPLORE_RANDOM_WEIGHT): ENTITY_LATE 1 (a completion a race needs late: it
 * happens soon, but seldom at the first chance), ENTITY_PROMPT the
 * weight of ENTITY_PROMPT_WEIGHT threads (a step the waiting sender needs to
 * progress). */
enum sim_entity_kind { ENTITY_LATE = 1, ENTITY_PROMPT = 2 };
uint64_t sim_call_entity(struct sim *s, ev_fn fn, void *arg, uint64_t data,
			 enum sim_entity_kind kind);
bool sim_call_cancel(struct sim *s, uint64_t seq);

/* ---- checks ---- */
#define SIM_BUG_ON(s, cond)                                                      \
	do {                                                                     \
		if (__builtin_expect(!!(cond), 0))                               \
			sim_bug((s), __FILE__, __LINE__, #cond);                 \
	} while (0)
void sim_bug(struct sim *s, const char *file, int line, const char *what);

static inline int64_t P(const struct sim *s, enum param_id id)
{
	return s->p[id];
}
static inline int cur_cpu(const struct sim *s)
{
	return s->curr ? s->curr->cpu : 0;
}

#endif
