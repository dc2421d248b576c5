/*
 * sim.h - the engine: struct sim (which owns all state of one simulation),
 * simulated threads as coroutines, the event queue on simulated time (ns),
 * the seeded PRNG, CPUs with run queues and user/sys time accounting, and
 * the scheduler interface with explicit yield points.
 *
 * Determinism: events are ordered by (time, seq) where seq is the insertion
 * counter; the only randomness is sim->rng, seeded from the config. Nothing
 * depends on host addresses or host time.
 *
 * Threads call sim_step() at every point where another CPU may interleave
 * (lock operations, PTE updates, each sub-step of tlb_finish_mmu, TLBI issue
 * and DSB completion, IPI rounds). The time-ordered strategy resumes threads
 * in simulated-time order; a strategy for interleaving exploration plugs in
 * at the same calls through struct sched_ops.
 */
#ifndef TLBSIM_SIM_H
#define TLBSIM_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/arch.h"
#include "cost/params.h"
#include "hw/hw.h"
#include "mm/mm.h"
#include "sim/coro.h"
#include "tlbsim/tlbsim.h"

/* Yield points: where another CPU may interleave (kernel-model 9.2). */
#define TLBSIM_YIELD_POINTS(X)                                                   \
	X(YP_USER, "user")                                                       \
	X(YP_SYSCALL, "syscall")                                                 \
	X(YP_LOCK, "lock")                                                       \
	X(YP_PTE, "pte_update")                                                  \
	X(YP_FAULT, "fault")                                                     \
	X(YP_GATHER_INIT, "gather_init")                                         \
	X(YP_ZAP_PTE, "zap_pte")                                                 \
	X(YP_FREE_TABLE, "free_table")                                           \
	X(YP_END_VMA, "end_vma")                                                 \
	X(YP_FINISH_CHECK_NESTED, "finish_check_nested")                         \
	X(YP_FINISH_POLICY, "finish_policy")                                     \
	X(YP_ARCH_FLUSH, "arch_flush")                                           \
	X(YP_TLBI_ISSUE, "tlbi_issue")                                           \
	X(YP_DSB, "dsb_ish")                                                     \
	X(YP_IPI, "ipi_round")                                                   \
	X(YP_FREE_PAGES, "free_pages")                                           \
	X(YP_TABLE_FLUSH, "table_flush")                                         \
	X(YP_PENDING_DEC, "pending_dec")                                         \
	X(YP_THREAD, "thread")

enum yield_point {
#define X(e, s) e,
	TLBSIM_YIELD_POINTS(X)
#undef X
	YP_COUNT
};
const char *yield_point_name(enum yield_point yp);

/* Invariants checked by the oracle (kernel-model 7, 9.3) */
#define TLBSIM_INVARIANTS(X)                                                     \
	X(INV_I1, "I1", "freed frame reachable from a TLB or walk cache")        \
	X(INV_I1_REALIZED, "I1-realized", "access or walk used a freed frame")   \
	X(INV_I2, "I2", "translation survives munmap/madvise return")            \
	X(INV_I3, "I3", "write through stale dirty entry into a clean page")     \
	X(INV_STALE_WALK, "stale-walk", "walk entry to an unlinked table used")  \
	X(INV_LIVELOCK, "livelock", "identical faults with no PTE change")
enum inv_id {
#define X(e, n, d) e,
	TLBSIM_INVARIANTS(X)
#undef X
	INV_COUNT
};
const char *inv_name(int kind);
const char *inv_desc(int kind);

/* The last flush a thread issued (for violation reports). */
struct flush_note {
	uint8_t what;		/* 0 none, 1 arm64 TLBI batch, 2 x86 flush_tlb_mm_range */
	uint8_t op;		/* enum tlbi_kind; x86: 1 = full flush */
	bool nested;		/* issued by a nested tlb_finish_mmu */
	bool freed_tables;	/* x86: freed_tables argument */
	uint64_t nops, start, end, stride;
	uint64_t step;
	int cpu;
	int ntargets;		/* x86: IPIs sent */
};

struct violation_rec {
	int kind;		/* enum inv_id, -1 = none */
	int cpu, tid;
	uint64_t va;
	uint32_t frame;
	uint64_t step, time;
	char entry[160];	/* the cached entry */
	char flush[240];	/* the flush that should have removed it */
	char text[512];
};
struct explore;

enum thread_state { TS_NEW, TS_RUNNABLE, TS_RUNNING, TS_SLEEPING, TS_DONE };
enum cpu_mode { MODE_USER, MODE_SYS };

struct sim_thread;
typedef void (*thread_fn)(struct sim *s, struct sim_thread *t);

struct sim_thread {
	int id;
	struct sim *sim;
	enum thread_state state;
	int cpu;
	enum cpu_mode mode;
	struct coro co;
	thread_fn fn;
	thread_fn user_fn;		/* glibc model: the pthread start routine */
	void *arg;
	uint64_t arg2;
	struct mm_struct *mm;
	uint64_t pending_ns;		/* charged but not yet elapsed */
	uint64_t sleep_start;
	/* rwsem waiter */
	struct sim_thread *wait_next;
	bool wait_write;
	bool wait_granted;		/* reader: lock granted by the waker */
	bool wait_woken;		/* writer: woken, will retry the lock */
	bool spinning;			/* busy-waiting on its CPU (not asleep) */
	uint64_t spin_start;
	/* run queue link */
	struct sim_thread *rq_next;
	/* join */
	struct sim_thread *joiner;
	/* stack (for glibc-style exit madvise) */
	uint64_t stack_lo, stack_hi;
	uint32_t *gather_pages;		/* mmu_gather page batch storage */
	struct flush_note last_flush;	/* for violation reports */
	bool in_nested_finish;
	/* livelock detection */
	uint64_t last_fault_va;
	uint64_t last_fault_pte;
	uint32_t same_faults;
};

struct sim_cpu {
	int id;
	struct sim_thread *curr;
	struct sim_thread *rq_head, *rq_tail;
	uint64_t user_ns, sys_ns;
	struct arch_cpu arch;
	uint64_t psc_epoch;		/* x86: unlink_epoch at the last PSC flush of the loaded PCID */
};

/* Event queue entry */
enum ev_kind { EV_RESUME, EV_CALL };
typedef void (*ev_fn)(struct sim *s, void *arg, uint64_t data);
struct event {
	uint64_t time;
	uint64_t seq;
	enum ev_kind kind;
	void *ptr;		/* thread or arg */
	ev_fn fn;
	ev_fn drop;		/* called instead of fn if the sim is destroyed first */
	uint64_t data;
};

/* Scheduler strategy interface. The time-ordered strategy is the default;
 * exploration strategies (next issue) implement the same hooks. */
struct sched_ops {
	const char *name;
	/* Called at every yield point of the running thread after its cost has
	 * been charged. Return true to switch away (the thread is re-queued at
	 * now + pending), false to continue running. */
	bool (*yield)(struct sim *s, struct sim_thread *t, enum yield_point yp);
};
extern const struct sched_ops sched_time_ordered;

struct rng {
	uint64_t s[4];
};
uint64_t rng_next(struct rng *r);
void rng_seed(struct rng *r, uint64_t seed);
/* uniform in [0, n) */
uint64_t rng_below(struct rng *r, uint64_t n);

struct vma_pool {
	struct vm_area_struct *free;
	struct shmem_obj *shm_free;
};

struct explore;

struct sim {
	/* engine */
	uint64_t now;
	uint64_t seq;
	struct event *heap;
	uint32_t nheap;
	size_t cap_heap;
	struct coro main_co;
	struct sim_thread *curr;	/* running thread, NULL in scheduler */
	struct sim_thread **threads;
	int nthreads;
	size_t cap_threads;
	int live_threads;
	const struct sched_ops *sched;
	struct explore *ex;		/* non-NULL in check mode */
	struct {
		struct event *e;
		uint32_t n;
		size_t cap;
	} ready;			/* check mode: runnable entities */
	struct rng rng;
	size_t stack_size;
	int error;			/* enum tlbsim_err */
	char errmsg[TLBSIM_ERRLEN];

	/* machine */
	const struct tlbsim_profile *profile;
	const struct arch_ops *arch;
	int nr_cpus;
	struct sim_cpu *cpus;
	int64_t p[P_COUNT];		/* cost/hardware parameters */
	struct tlbsim_policy policy;
	struct hw hw;
	uint64_t dvm_free_at;		/* arm64 DVM resource busy until */
	uint64_t unlink_epoch;		/* bumped whenever a page table is unlinked */
	uint64_t map_epoch;		/* bumped at every data-page mapping and zap call */
	uint32_t cpumask_words;

	/* kernel state */
	struct mm_struct *mms;
	int nr_mms;
	uint64_t next_ctx_id;
	struct vma_pool pool;
	struct mmu_table_batch *tbatch_free;
	/* every kernel object (VMA, shmem object, table batch) ever allocated,
	 * owned here so a run stopped mid-syscall (check mode) frees cleanly */
	void **objs;
	uint32_t nobjs;
	size_t cap_objs;
	struct shmem_obj **all_shm;
	uint32_t nshm;
	size_t cap_shm;

	/* workload */
	const struct tlbsim_resolved *cfg;
	void *wl;			/* workload private state */
	void *glibc;			/* glibc model state (stack cache) */

	/* results */
	struct tlbsim_metrics m;
	struct violation_rec first_violation;
};

/* ---- lifecycle ---- */
int sim_init(struct sim *s, const struct tlbsim_profile *prof, int nr_cpus,
	     const int64_t *params, const struct tlbsim_policy *pol, uint64_t seed);
void sim_destroy(struct sim *s);
/* Run until all threads finished. Returns 0 or an enum tlbsim_err. */
int sim_run(struct sim *s);
/* Run one event (engine internal, shared with the explore loop). */
void sim_dispatch(struct sim *s, const struct event *ev);
void sim_fail(struct sim *s, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Default parameters of a profile with cfg's -D overrides applied (run.c). */
void tlbsim_params_for(const struct tlbsim_profile *prof, const struct tlbsim_config *cfg,
		       int64_t *p);

/* One run of a resolved configuration; ex != NULL: one explored schedule. */
int tlbsim_run_one(const struct tlbsim_config *cfg, const struct tlbsim_resolved *res,
		   struct explore *ex, struct tlbsim_metrics *m, struct violation_rec *v,
		   char *err, size_t errlen);

/* Allocate a zeroed kernel object owned by the sim (freed by sim_destroy). */
void *sim_obj_alloc(struct sim *s, size_t size);

/* ---- threads ---- */
struct sim_thread *sim_thread_create(struct sim *s, thread_fn fn, void *arg, uint64_t arg2,
				     struct mm_struct *mm, int cpu, uint64_t start_delay);
static inline struct sim_thread *sim_current(struct sim *s) { return s->curr; }
/* Wait for thread t to finish (current thread sleeps). */
void sim_join(struct sim *s, struct sim_thread *t);

/* ---- time ---- */
/* Charge ns of CPU time in the current mode to the current thread's CPU. */
void sim_charge(struct sim *s, uint64_t ns);
/* Charge ns as sys time. */
void sim_charge_sys(struct sim *s, uint64_t ns);
void sim_set_mode(struct sim *s, enum cpu_mode mode);
/* A yield point: charge cost_ns (current mode), then let the scheduler
 * decide whether another thread runs first. */
void sim_step(struct sim *s, enum yield_point yp, uint64_t cost_ns);
/* The same with two trace arguments (recorded in check mode). */
void sim_step_arg(struct sim *s, enum yield_point yp, uint64_t cost_ns, uint64_t a, uint64_t b);
/* Sleep the current thread until sim_wake(); its CPU runs something else or
 * goes idle. */
void sim_sleep(struct sim *s);
void sim_wake(struct sim *s, struct sim_thread *t, uint64_t delay_ns);
/* Busy-wait on the CPU until sim_wake() (optimistic spinning): the CPU stays
 * busy and the waiting time is charged as sys when the thread resumes. */
void sim_spin_wait(struct sim *s);
/* Turn a spinning thread into a sleeping one (it gives up its CPU now). */
void sim_spin_to_sleep(struct sim *s, struct sim_thread *t);
/* Charge ns of interrupt (sys) time to CPU cpu, delaying whatever runs there. */
void sim_steal(struct sim *s, int cpu, uint64_t ns);
bool sim_cpu_idle(struct sim *s, int cpu);

/* Timed callbacks (RCU grace periods, ...) */
void sim_call_at(struct sim *s, uint64_t time, ev_fn fn, ev_fn drop, void *arg, uint64_t data);

/* ---- checks ---- */
#define SIM_BUG_ON(s, cond)                                                      \
	do {                                                                     \
		if (__builtin_expect(!!(cond), 0))                               \
			sim_bug((s), __FILE__, __LINE__, #cond);                 \
	} while (0)
void sim_bug(struct sim *s, const char *file, int line, const char *what)
	__attribute__((noreturn));
void sim_violation(struct sim *s, enum inv_id kind, int cpu, uint64_t va, uint32_t frame,
		   const char *entry, const char *fmt, ...) __attribute__((format(printf, 7, 8)));

static inline pte_t *table_of(struct sim *s, uint32_t f)
{
	return frame_of(&s->hw, f)->table;
}
static inline int64_t P(const struct sim *s, enum param_id id)
{
	return s->p[id];
}
static inline int cur_cpu(const struct sim *s)
{
	return s->curr ? s->curr->cpu : 0;
}

#endif
