/*
 * test_engine.c - the discrete-event engine (src/sim/sim.c, run.c).
 *
 * Rules checked (sim.h, sim.c file comments, tlbsim.h):
 *  - events run in (time, seq) order: threads resume in simulated-time
 *    order; at equal times the one queued first runs first;
 *  - fast path: a thread whose next time is earlier than every queued event
 *    keeps running without a switch (no new event);
 *  - sim_sleep gives up the CPU (it goes idle if nothing else is queued);
 *    sim_wake(t, delay) makes t runnable delay ns after the waker's current
 *    time; a thread that sleeps with nothing else queued on its CPU pays
 *    schedule() out (ctx_switch_ns / 2, sys) and its CPU then enters the
 *    idle state for idle_entry_ns; a thread woken (or started) on an idle
 *    CPU pays idle_exit_ns and then schedule() in (ctx_switch_ns / 2, sys),
 *    or, woken before the idle entry ended, starts when the entry ends plus
 *    schedule() in (no idle exit: the idle loop saw need_resched); a
 *    spinning waiter never left its CPU (no idle exit; the spin is sys
 *    time); a thread queued behind a running one starts ctx_switch_ns after
 *    that one gives up the CPU; thread exit wakes a joiner after wakeup_ns;
 *    joining a finished thread returns at once;
 *  - accounting: each CPU's user/sys time equals what its threads charged in
 *    each mode; tlbsim_run's idle = wall x cpus - (user + sys);
 *  - determinism: same config + seed -> identical metrics; the seed drives
 *    the workloads' jitter; all state of a run lives in its struct sim, so
 *    two sims in one process do not interfere;
 *  - jitter: none in check mode (sim_set_explore), which keeps exact times;
 *  - rng: xoshiro256** seeded through splitmix64 (sim.c), rng_below(n) in
 *    [0, n).
 *  - time slices (CFS: scheduler_tick -> check_preempt_tick sets
 *    need_resched once the running task had its slice while others wait;
 *    kernel/sched/fair.c, v5.1): in run mode a thread at a user-mode yield
 *    point whose CPU has a queued thread and that has held the CPU for
 *    sched_slice_ns goes to the tail of the run queue; the head runs after
 *    ctx_switch_ns. The kernel is not preemptible (PREEMPT_NONE/VOLUNTARY):
 *    a thread in kernel mode keeps the CPU until it is back in user mode.
 *    sched_slice_ns = 0: no slices (the first thread runs to completion).
 *    Check mode never slices. context_switches counts every hand-over of a
 *    CPU from one thread to another. An oversubscribed workload with short
 *    slices is preempted and still reproducible.
 *  - check mode (explore.h): a decision's index is the chosen candidate's
 *    rank in the canonical order (the current thread, completion entities
 *    and timed callbacks by queueing order, threads by id between them),
 *    whatever the order of the ready list and however long it is; random
 *    weighs the candidates (entities 1 or 16, others 4) and pct takes the
 *    highest priority, the earliest among equals.
 */
#include "test_util.h"

/* ---- event order ---- */

struct rec {
	int id;
	uint64_t t;
};

struct order {
	struct rec r[64];
	int n;
	uint64_t cost[3];
	int steps[3];
	struct sim_thread *th[3];
};

static void order_thread(struct sim *s, struct sim_thread *t)
{
	struct order *o = t->arg;
	int id = t->cpu;	/* one thread per CPU: CPU number = id */
	for (int i = 0; i < o->steps[id]; i++) {
		assert_true(o->n < 64);
		o->r[o->n++] = (struct rec){id, s->now};
		sim_step(s, YP_USER, o->cost[id]);
	}
}

/* The CR3 write of switching a CPU to a thread's mm elapses on that CPU
 * before the thread's first step ends (x86 switch_mm); the timing tests of
 * the engine leave it out. */
static const int64_t no_cr3_ov[] = {P_cr3_flush_ns, 0, -1};

/* A (CPU0) steps 300 ns, B (CPU1) 500 ns, C (CPU2) 300 ns, all starting at
 * the same time T in spawn order A, B, C. Relative resume times:
 *   A, C: 0 300 600 900 1200 1500 1800; B: 0 500 1000 1500 2000.
 * Ties: at 0 spawn order; at every A/C tie A was re-queued first (it ran
 * first at the previous tie); at 1500 B was queued at 1000, A and C at
 * 1200 -> B, A, C. */
static void test_event_order(void **state)
{
	(void)state;
	struct order o = {.cost = {300, 500, 300}, .steps = {7, 5, 7}};
	struct sim *s = tsim_new_p("x86-24", 4, NESTED_FULLMM, no_cr3_ov);
	for (int i = 0; i < 3; i++)
		o.th[i] = tsim_spawn(s, order_thread, &o, i);
	tsim_run(s);
	enum { A, B, C };
	const struct rec want[] = {
		{A, 0},	   {B, 0},    {C, 0},	 {A, 300},  {C, 300},  {B, 500},  {A, 600},
		{C, 600},  {A, 900},  {C, 900},	 {B, 1000}, {A, 1200}, {C, 1200}, {B, 1500},
		{A, 1500}, {C, 1500}, {A, 1800}, {C, 1800}, {B, 2000},
	};
	int nw = (int)(sizeof(want) / sizeof(want[0]));
	assert_int_equal(o.n, nw);
	uint64_t t0 = o.r[0].t;
	for (int i = 0; i < nw; i++) {
		if (o.r[i].id != want[i].id || o.r[i].t - t0 != want[i].t)
			fail_msg("record %d: thread %d at +%llu, want thread %d at +%llu", i,
				 o.r[i].id, (unsigned long long)(o.r[i].t - t0), want[i].id,
				 (unsigned long long)want[i].t);
	}
	tsim_free(s);
}

/* ---- fast path ---- */

static void lone_thread(struct sim *s, struct sim_thread *t)
{
	uint64_t *out = t->arg;
	uint64_t t0 = s->now;
	for (int i = 0; i < 10000; i++)
		sim_step(s, YP_USER, 10);
	out[0] = s->now - t0;
}

/* A lone thread is never switched: one event (its first resume) for 10000
 * steps, and its time still advances by every step's cost. Two threads on
 * two CPUs stepping in lock-step must switch at (nearly) every step. */
static void test_fast_path(void **state)
{
	(void)state;
	uint64_t out[2] = {0};
	struct sim *s = tsim_new_p("x86-24", 4, NESTED_FULLMM, no_cr3_ov);
	tsim_spawn(s, lone_thread, out, 0);
	tsim_run(s);
	assert_int_equal(out[0], 10000 * 10);
	assert_int_equal(s->m.events, 1);
	tsim_free(s);

	s = tsim_new_p("x86-24", 4, NESTED_FULLMM, no_cr3_ov);
	tsim_spawn(s, lone_thread, &out[0], 0);
	tsim_spawn(s, lone_thread, &out[1], 1);
	tsim_run(s);
	assert_int_equal(out[0], 10000 * 10);
	assert_int_equal(out[1], 10000 * 10);
	assert_true(s->m.events >= 10000);
	tsim_free(s);
}

/* ---- sleep / wake / join ---- */

#define WAKEUP 700
#define IDLE_EXIT 2500
#define CTXSW 400
#define IDLE_ENTRY 300

static const int64_t sleep_ov[] = {P_wakeup_ns,	 WAKEUP, P_idle_exit_ns, IDLE_EXIT,
				   P_ctx_switch_ns, CTXSW, P_cr3_flush_ns, 0,
				   P_idle_entry_ns, IDLE_ENTRY, -1};

struct sw {
	struct sim_thread *sleeper;
	uint64_t t_sleep, t_resume, t_wake;
	bool spin;
	bool idle_seen, sleeping_seen;
	uint64_t cpu0_busy_at_wake;
	uint64_t waker_step;		/* 0: 5000 ns */
	int ran;
};

static void sleeper_thread(struct sim *s, struct sim_thread *t)
{
	struct sw *w = t->arg;
	sim_step(s, YP_USER, 0);
	w->t_sleep = s->now;
	if (w->spin)
		sim_spin_wait(s);
	else
		sim_sleep(s);
	w->t_resume = s->now;
	w->ran = 1;
}

static void waker_thread(struct sim *s, struct sim_thread *t)
{
	struct sw *w = t->arg;
	sim_step(s, YP_USER, w->waker_step ? w->waker_step : 5000);
	w->idle_seen = sim_cpu_idle(s, 0);
	w->sleeping_seen = w->sleeper->state == TS_SLEEPING;
	w->cpu0_busy_at_wake = s->cpus[0].user_ns + s->cpus[0].sys_ns;
	w->t_wake = s->now;
	sim_wake(s, w->sleeper, (uint64_t)P(s, P_wakeup_ns));
	sim_step(s, YP_USER, 100000);	/* keep running past the wake-up */
}

/* Sleeping: CPU0 is idle while its thread sleeps; the thread resumes
 * wakeup_ns + idle_exit_ns + ctx_switch_ns / 2 after the wake (its CPU had
 * entered the idle state). CPU 0's busy time is the two halves of a context
 * switch: schedule() in when the thread first started on the idle CPU, and
 * schedule() out when it slept; then schedule() in once more. */
static void test_sleep_wake_idle(void **state)
{
	(void)state;
	struct sw w = {0};
	struct sim *s = tsim_new_p("x86-24", 2, NESTED_FULLMM, sleep_ov);
	w.sleeper = tsim_spawn(s, sleeper_thread, &w, 0);
	tsim_spawn(s, waker_thread, &w, 1);
	tsim_run(s);
	assert_int_equal(w.ran, 1);
	assert_true(w.idle_seen);
	assert_true(w.sleeping_seen);
	assert_int_equal(w.cpu0_busy_at_wake, CTXSW);
	assert_true(w.t_wake + WAKEUP >= w.t_sleep + CTXSW / 2 + IDLE_ENTRY);
	assert_int_equal(w.t_resume, w.t_wake + WAKEUP + IDLE_EXIT + CTXSW / 2);
	assert_int_equal(s->cpus[0].user_ns, 0);
	assert_int_equal(s->cpus[0].sys_ns, CTXSW + CTXSW / 2);
	tsim_free(s);
}

/* A wake-up that reaches a CPU still entering the idle state: the thread
 * starts when the entry ends (ctx_switch_ns / 2 + idle_entry_ns after it
 * slept), plus schedule() in, and pays no idle exit. Both threads start at
 * the same time on idle CPUs; the waker wakes 1000 ns after the sleep with
 * delay 700, long before the 5000 ns entry ends. */
static void test_wake_during_idle_entry(void **state)
{
	(void)state;
	struct sw w = {.waker_step = 1000};
	const int64_t ov[] = {P_wakeup_ns,     WAKEUP,	   P_idle_exit_ns, IDLE_EXIT,
			      P_ctx_switch_ns, CTXSW,	   P_cr3_flush_ns, 0,
			      P_idle_entry_ns, 5000, -1};
	struct sim *s = tsim_new_p("x86-24", 2, NESTED_FULLMM, ov);
	w.sleeper = tsim_spawn(s, sleeper_thread, &w, 0);
	tsim_spawn(s, waker_thread, &w, 1);
	tsim_run(s);
	assert_int_equal(w.ran, 1);
	assert_true(w.idle_seen);
	assert_true(w.t_wake + WAKEUP < w.t_sleep + CTXSW / 2 + 5000);
	assert_int_equal(w.t_resume, w.t_sleep + CTXSW / 2 + 5000 + CTXSW / 2);
	tsim_free(s);
}

/* Spinning: the CPU stays busy (not idle); the waiter resumes exactly
 * delay after the wake (no idle exit) and the spin is charged as sys. */
static void test_spin_wake(void **state)
{
	(void)state;
	struct sw w = {.spin = true};
	struct sim *s = tsim_new_p("x86-24", 2, NESTED_FULLMM, sleep_ov);
	w.sleeper = tsim_spawn(s, sleeper_thread, &w, 0);
	tsim_spawn(s, waker_thread, &w, 1);
	tsim_run(s);
	assert_int_equal(w.ran, 1);
	assert_false(w.idle_seen);
	assert_int_equal(w.t_resume, w.t_wake + WAKEUP);
	/* the spin, and schedule() in when it first started on the idle CPU */
	assert_int_equal(s->cpus[0].sys_ns, w.t_resume - w.t_sleep + CTXSW / 2);
	assert_int_equal(s->cpus[0].user_ns, 0);
	tsim_free(s);
}

struct jit {
	uint64_t d[2000];
	int n;
};

static void jit_thread(struct sim *s, struct sim_thread *t)
{
	struct jit *j = t->arg;
	for (j->n = 0; j->n < 2000; j->n++) {
		uint64_t t0 = s->now + t->pending_ns;
		sim_charge(s, 10000);
		j->d[j->n] = s->now + t->pending_ns - t0;
	}
}

static void run_jit(int64_t pct, uint64_t seed, struct jit *j)
{
	const int64_t ov[] = {P_jitter, pct, -1};
	struct sim *s = tsim_new_p("x86-24", 1, NESTED_FULLMM, ov);
	rng_seed(&s->rng, seed);
	s->jit_state = seed * 0x9E3779B97F4A7C15ull | 1;
	tsim_spawn(s, jit_thread, j, 0);
	tsim_run(s);
	tsim_free(s);
}

/* The jitter rule: a charged cost c is drawn uniformly in [c - c x J/100,
 * c + c x J/100]: every draw inside, both ends of the range reached to
 * within 1 %, the mean within 1 % of c; J = 0 charges c exactly; the same
 * stream state gives the same draws. */
static void test_jitter_bounds(void **state)
{
	(void)state;
	struct jit a, b, z;
	run_jit(5, 3, &a);
	run_jit(5, 3, &b);
	run_jit(0, 3, &z);
	uint64_t lo = ~0ull, hi = 0, sum = 0;
	for (int i = 0; i < 2000; i++) {
		assert_true(a.d[i] >= 9500 && a.d[i] <= 10500);
		lo = a.d[i] < lo ? a.d[i] : lo;
		hi = a.d[i] > hi ? a.d[i] : hi;
		sum += a.d[i];
		assert_int_equal(z.d[i], 10000);
	}
	assert_true(lo < 9600 && hi > 10400);
	assert_true(sum / 2000 > 9900 && sum / 2000 < 10100);
	assert_memory_equal(a.d, b.d, sizeof(a.d));
}

/* Check mode keeps exact times: with an explorer set (sim_set_explore) a
 * cost is charged as is and the jitter stream does not move; without one
 * again, jitter draws resume from the same stream state. */
static void test_jitter_not_in_check_mode(void **state)
{
	(void)state;
	const int64_t ov[] = {P_jitter, 5, -1};
	struct sim *s = tsim_new_p("x86-24", 1, NESTED_FULLMM, ov);
	struct explore ex;
	explore_init(&ex, EX_REPLAY, 1, 1, 0, NULL, 0);
	sim_set_explore(s, &ex);
	uint64_t st = s->jit_state;
	for (int i = 0; i < 100; i++)
		assert_int_equal(sim_jittered(s, 10000), 10000);
	assert_true(s->jit_state == st);
	sim_set_explore(s, NULL);
	int moved = 0;
	for (int i = 0; i < 100; i++) {
		uint64_t d = sim_jittered(s, 10000);
		assert_true(d >= 9500 && d <= 10500);
		moved += d != 10000;
	}
	assert_true(s->jit_state != st && moved > 90);
	explore_free(&ex);
	tsim_free(s);
}

/* sim_jit_amp's one-multiply range gives ns * pct / 100 (64-bit, wrapping
 * as the division always did) for every pct and ns: the range's ends, both
 * sides of them, the largest values and a spread of others. */
static void test_jitter_amp_exact(void **state)
{
	(void)state;
	const int64_t ov[] = {P_jitter, 5, -1};
	struct sim *s = tsim_new_p("x86-24", 1, NESTED_FULLMM, ov);
	const uint32_t pcts[] = {0, 1, 2, 3, 5, 7, 10, 33, 49, 50, 51, 97, 99, 100, 101, 250,
				 UINT32_MAX};
	uint64_t x = 88172645463325252ull;
	for (size_t pi = 0; pi < sizeof(pcts) / sizeof(pcts[0]); pi++) {
		s->jitter_pct = pcts[pi];
		sim_set_explore(s, NULL);	/* jit_pct and the range from jitter_pct */
		uint64_t p = pcts[pi];
		const uint64_t edges[] = {0, 1, 2, p ? 100 / p : 0, s->jit_lim, UINT64_MAX / 100,
					  UINT64_MAX / 99, UINT64_MAX / (p ? p : 1), UINT64_MAX};
		for (size_t e = 0; e < sizeof(edges) / sizeof(edges[0]); e++)
			for (int d = -3; d <= 3; d++) {
				uint64_t ns = edges[e] + (uint64_t)(int64_t)d;
				assert_true(sim_jit_amp(s, ns) == ns * p / 100);
			}
		for (int i = 0; i < 200000; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			uint64_t ns = x >> (x % 64);	/* every magnitude */
			assert_true(sim_jit_amp(s, ns) == ns * p / 100);
		}
	}
	tsim_free(s);
}

/* The draw's ranges (sim_jittered): for jitter J = p/100, a cost ns below
 * ceil(100/p) is charged exactly and draws nothing; from there to 2^31 ns
 * it lands in [ns - ceil(ns J), ns + ceil(ns J)] on one of 256 evenly
 * spread levels, the ends of the range among them (to 1 ns), rounded to the
 * nearest ns so that the mean stays ns even where ns J is a nanosecond or
 * two; from 2^31 ns on in [ns - floor(ns J), ns + floor(ns J)]. */
static void test_jitter_ranges(void **state)
{
	(void)state;
	const int64_t ov[] = {P_jitter, 5, -1};
	struct sim *s = tsim_new_p("x86-24", 1, NESTED_FULLMM, ov);
	const uint64_t pcts[] = {1, 2, 3, 5, 7, 10, 33, 50, 100};
	for (size_t pi = 0; pi < sizeof(pcts) / sizeof(pcts[0]); pi++) {
		uint64_t p = pcts[pi];
		s->jitter_pct = (uint32_t)p;
		sim_set_explore(s, NULL);
		uint64_t small = (100 + p - 1) / p;
		for (uint64_t ns = 0; ns < small; ns++) {
			uint64_t st = s->jit_state;
			assert_true(sim_jittered(s, ns) == ns);
			assert_true(s->jit_state == st);
		}
		const uint64_t nss[] = {small, small + 1, 10000, 123457, (1ull << 30) + 7,
					(1ull << 31) - 1, 1ull << 31, (1ull << 31) + 1, 1ull << 40,
					UINT64_MAX / 200};
		for (size_t k = 0; k < sizeof(nss) / sizeof(nss[0]); k++) {
			uint64_t ns = nss[k];
			bool fast = ns < (1ull << 31);
			uint64_t up = fast ? (ns * p + 99) / 100 : ns * p / 100;
			uint64_t down = up;
			uint64_t lo = UINT64_MAX, hi = 0, seen = 0;
			uint64_t levels[4] = {0};
			for (int i = 0; i < 20000; i++) {
				uint64_t d = sim_jittered(s, ns);
				assert_true(d >= ns - down && d <= ns + up);
				lo = d < lo ? d : lo;
				hi = d > hi ? d : hi;
				if (ns == (1ull << 30) + 7) {
					/* the level of d: (d - lo_end) spread over 255 steps */
					uint64_t lv = (uint64_t)(((unsigned __int128)(d - (ns - down)) *
								  255 + (down + up) / 2) / (down + up));
					levels[lv / 64] |= 1ull << (lv % 64);
				}
			}
			/* the ends: level 0 and 255 are -A and +A, A = floor(p 2^32
			 * / 100), so ns A / 2^32 may fall short of ns J by < 1 ns */
			if (fast)
				assert_true(lo <= ns - down + 1 && hi + 1 >= ns + up);
			if (ns == (1ull << 30) + 7) {
				for (int w = 0; w < 4; w++)
					seen += (uint64_t)__builtin_popcountll(levels[w]);
				assert_int_equal(seen, 256);
			}
		}
	}
	/* the mean: 200000 draws of 25 ns at 5 % (a +-1.25 ns range) average
	 * 25 ns to 0.01 ns; a truncating draw would average 24.5 */
	s->jitter_pct = 5;
	sim_set_explore(s, NULL);
	uint64_t sum = 0;
	for (int i = 0; i < 200000; i++)
		sum += sim_jittered(s, 25);
	assert_true(sum >= 200000 * 25 - 2000 && sum <= 200000 * 25 + 2000);
	tsim_free(s);
}

struct st {
	struct sim_thread *spinner;
	uint64_t spin_at, resume_at, steal_at, wake_at;
};

static void st_spinner(struct sim *s, struct sim_thread *t)
{
	struct st *x = t->arg;
	sim_set_mode(s, MODE_SYS);
	x->spin_at = s->now;
	sim_spin_wait(s);
	x->resume_at = s->now;
}

static void st_other(struct sim *s, struct sim_thread *t)
{
	struct st *x = t->arg;
	sim_step(s, YP_USER, 10000);
	x->steal_at = s->now;
	sim_steal(s, 0, 8000);	/* an IPI handler interrupts the spin */
	sim_step(s, YP_USER, 1000);
	x->wake_at = s->now;
	sim_wake(s, x->spinner, 0);	/* released while the handler runs */
	sim_step(s, YP_USER, 20000);
}

/* Interrupt time on a spinning CPU (sim_steal): the spin's sys time covers
 * the handler (nothing counted twice: busy never exceeds the elapsed time),
 * and a release during the handler is seen when the handler ends. */
static void test_steal_from_spinner(void **state)
{
	(void)state;
	struct st x = {0};
	struct sim *s = tsim_new_p("x86-24", 2, NESTED_FULLMM, sleep_ov);
	x.spinner = tsim_spawn(s, st_spinner, &x, 0);
	tsim_spawn(s, st_other, &x, 1);
	tsim_run(s);
	assert_true(x.wake_at < x.steal_at + 8000);
	assert_int_equal(x.resume_at, x.steal_at + 8000);
	/* the spin, and schedule() in when the spinner started on its idle CPU */
	assert_int_equal(s->cpus[0].sys_ns, x.resume_at - x.spin_at + CTXSW / 2);
	assert_true(s->cpus[0].sys_ns + s->cpus[0].user_ns <= s->now);
	tsim_free(s);
}

struct rq {
	uint64_t a_end, c_start;
};

static void rq_a(struct sim *s, struct sim_thread *t)
{
	struct rq *r = t->arg;
	sim_step(s, YP_USER, 3000);
	r->a_end = s->now;
}

static void rq_c(struct sim *s, struct sim_thread *t)
{
	struct rq *r = t->arg;
	r->c_start = s->now;
}

/* Two threads on one CPU: the second waits in the run queue and starts
 * ctx_switch_ns after the first one exits. */
static void test_run_queue(void **state)
{
	(void)state;
	struct rq r = {0};
	struct sim *s = tsim_new_p("x86-24", 2, NESTED_FULLMM, sleep_ov);
	tsim_spawn(s, rq_a, &r, 0);
	tsim_spawn(s, rq_c, &r, 0);
	tsim_run(s);
	assert_int_equal(r.c_start, r.a_end + CTXSW);
	tsim_free(s);
}

struct jn {
	uint64_t b_exit, a_resume, a_second;
	int ran;
};

static void join_child(struct sim *s, struct sim_thread *t)
{
	struct jn *j = t->arg;
	sim_step(s, YP_USER, 10000);
	j->b_exit = s->now;
}

static void join_parent(struct sim *s, struct sim_thread *t)
{
	struct jn *j = t->arg;
	struct sim_thread *b = tsim_spawn(s, join_child, j, 1);
	sim_join(s, b);
	j->a_resume = s->now;
	assert_int_equal(b->state, TS_DONE);
	sim_join(s, b);		/* already finished: returns at once */
	j->a_second = s->now;
	j->ran = 1;
}

/* Exit wakes the joiner wakeup_ns later; its CPU went idle while it slept,
 * so + idle_exit_ns + schedule() in (ctx_switch_ns / 2). */
static void test_join(void **state)
{
	(void)state;
	struct jn j = {0};
	struct sim *s = tsim_new_p("x86-24", 2, NESTED_FULLMM, sleep_ov);
	tsim_spawn(s, join_parent, &j, 0);
	tsim_run(s);
	assert_int_equal(j.ran, 1);
	assert_int_equal(j.a_resume, j.b_exit + WAKEUP + IDLE_EXIT + CTXSW / 2);
	assert_int_equal(j.a_second, j.a_resume);
	tsim_free(s);
}

/* ---- time slices ---- */

#define SLICE 1000000
#define STEP 100000

struct slice_log {
	int id[256];
	uint64_t t[256];
	int n;
	int sys_steps[2];	/* thread i: steps in kernel mode first */
	int steps;
};

static void slice_thread(struct sim *s, struct sim_thread *t)
{
	struct slice_log *l = t->arg;
	int me = t->id;		/* spawned first: 0, second: 1 */
	for (int i = 0; i < l->steps; i++) {
		assert_true(l->n < 256);
		l->id[l->n] = me;
		l->t[l->n++] = s->now;
		if (i < l->sys_steps[me])
			sim_set_mode(s, MODE_SYS);
		sim_step(s, YP_USER, STEP);
		sim_set_mode(s, MODE_USER);
	}
}

static struct sim *slice_sim(int64_t slice, struct slice_log *l)
{
	const int64_t ov[] = {P_sched_slice_ns, slice, P_ctx_switch_ns, CTXSW, P_cr3_flush_ns, 0,
			      -1};
	struct sim *s = tsim_new_p("x86-24", 2, NESTED_FULLMM, ov);
	struct sim_thread *a = tsim_spawn(s, slice_thread, l, 0);
	struct sim_thread *b = tsim_spawn(s, slice_thread, l, 0);
	assert_int_equal(a->id, 0);
	assert_int_equal(b->id, 1);
	return s;
}

/* Two threads on one CPU that never sleep alternate every slice: each runs
 * exactly SLICE / STEP steps, and the other starts ctx_switch_ns after the
 * switch. */
static void test_time_slice_alternates(void **state)
{
	(void)state;
	struct slice_log l = {.steps = 35};
	struct sim *s = slice_sim(SLICE, &l);
	tsim_run(s);
	assert_int_equal(l.n, 70);
	/* A B A B A B A B: 10 steps each (one slice), then A's last 5 steps
	 * and its exit, then B's last 5 */
	const int want_id[] = {0, 1, 0, 1, 0, 1, 0, 1}, want_len[] = {10, 10, 10, 10, 10, 10, 5, 5};
	int seg = 0, len = 0;
	for (int i = 0; i < l.n; i++) {
		if (i > 0 && l.id[i] != l.id[i - 1]) {
			assert_int_equal(len, want_len[seg]);
			/* the other thread starts ctx_switch_ns after the switch */
			assert_int_equal(l.t[i], l.t[i - 1] + STEP + CTXSW);
			seg++;
			len = 0;
		} else if (i > 0) {
			assert_int_equal(l.t[i], l.t[i - 1] + STEP);
		}
		assert_true(seg < 8);
		assert_int_equal(l.id[i], want_id[seg]);
		len++;
	}
	assert_int_equal(seg, 7);
	assert_int_equal(len, 5);
	assert_int_equal(l.t[SLICE / STEP], l.t[0] + SLICE + CTXSW);
	/* every hand-over of CPU 0 from one thread to the other, the last one
	 * at A's exit */
	assert_int_equal(s->m.context_switches, 7);
	assert_int_equal(s->nr_queued, 0);
	tsim_free(s);
}

/* sched_slice_ns = 0: no slices; the first thread runs to completion, the
 * second starts ctx_switch_ns after it exits (one context switch). */
static void test_time_slice_off(void **state)
{
	(void)state;
	struct slice_log l = {.steps = 35};
	struct sim *s = slice_sim(0, &l);
	tsim_run(s);
	assert_int_equal(l.n, 70);
	for (int i = 0; i < 35; i++) {
		assert_int_equal(l.id[i], 0);
		assert_int_equal(l.id[35 + i], 1);
	}
	assert_int_equal(l.t[35], l.t[34] + STEP + CTXSW);
	assert_int_equal(s->m.context_switches, 1);
	tsim_free(s);
}

/* A thread in the kernel is not preempted: its slice ended at 1 ms, but it
 * was in kernel mode until 2.5 ms; the switch happens at its first yield
 * point back in user mode (2.6 ms). */
static void test_time_slice_not_in_kernel(void **state)
{
	(void)state;
	struct slice_log l = {.steps = 30, .sys_steps = {25, 0}};
	struct sim *s = slice_sim(SLICE, &l);
	tsim_run(s);
	uint64_t t0 = l.t[0];
	int first_b = -1;
	for (int i = 0; i < l.n && first_b < 0; i++)
		if (l.id[i] == 1)
			first_b = i;
	assert_int_equal(first_b, 26);
	assert_int_equal(l.t[first_b], t0 + 26 * STEP + CTXSW);
	tsim_free(s);
}

struct cr {
	struct sim_thread *sleeper;
	bool resched;		/* the hog calls sim_cond_resched after each step */
	uint64_t t_wake, s_resume, h_start, h_end, n_start;
	uint64_t h_steps_at_resume;
	int h_steps;
};

static void cr_sleeper(struct sim *s, struct sim_thread *t)
{
	struct cr *c = t->arg;
	sim_sleep(s);
	c->s_resume = s->now;
	c->h_steps_at_resume = (uint64_t)c->h_steps;
}

static void cr_hog(struct sim *s, struct sim_thread *t)
{
	struct cr *c = t->arg;
	sim_set_mode(s, MODE_SYS);
	c->h_start = s->now;
	for (int i = 0; i < 20; i++) {
		sim_step(s, YP_USER, STEP);
		c->h_steps++;
		if (c->resched)
			sim_cond_resched(s);
	}
	c->h_end = s->now;
}

static void cr_waker(struct sim *s, struct sim_thread *t)
{
	struct cr *c = t->arg;
	sim_step(s, YP_USER, 250000);
	c->t_wake = s->now;
	sim_wake(s, c->sleeper, WAKEUP);
}

static void cr_new(struct sim *s, struct sim_thread *t)
{
	struct cr *c = t->arg;
	c->n_start = s->now;
}

static struct sim *cr_sim(struct cr *c)
{
	const int64_t ov[] = {P_sched_slice_ns, 0, P_wakeup_ns, WAKEUP, P_ctx_switch_ns, CTXSW,
			      P_cr3_flush_ns, 0, -1};
	struct sim *s = tsim_new_p("x86-24", 2, NESTED_FULLMM, ov);
	c->sleeper = tsim_spawn(s, cr_sleeper, c, 0);
	tsim_spawn(s, cr_hog, c, 0);
	tsim_spawn(s, cr_waker, c, 1);
	return s;
}

/* Wakeup preemption at a voluntary preemption point (cond_resched, kernel
 * mode, no time slices): a thread woken behind a CPU hog runs at the hog's
 * next sim_cond_resched after the wake-up, ctx_switch_ns later, and the hog
 * resumes after it; the CPU is handed over twice. */
static void test_cond_resched_wakeup_preempts(void **state)
{
	(void)state;
	struct cr c = {.resched = true};
	struct sim *s = cr_sim(&c);
	tsim_run(s);
	/* woken during the hog's third step (the waker's 250 us step after
	 * CPU 1's idle exit): it runs when that step ends */
	assert_true(c.t_wake + WAKEUP > c.h_start + 2 * STEP);
	assert_true(c.t_wake + WAKEUP < c.h_start + 3 * STEP);
	assert_int_equal(c.h_steps_at_resume, 3);
	assert_int_equal(c.s_resume, c.h_start + 3 * STEP + CTXSW);
	assert_int_equal(c.h_steps, 20);
	assert_int_equal(s->m.context_switches, 3);
	tsim_free(s);
}

/* Without a preemption point the woken thread waits until the hog leaves
 * the CPU (the kernel is not preemptible). */
static void test_cond_resched_none_no_preemption(void **state)
{
	(void)state;
	struct cr c = {.resched = false};
	struct sim *s = cr_sim(&c);
	tsim_run(s);
	assert_int_equal(c.h_steps_at_resume, 20);
	assert_int_equal(c.s_resume, c.h_end + CTXSW);
	tsim_free(s);
}

/* A new thread queued behind the hog is not a wake-up (START_DEBIT): the
 * hog's sim_cond_resched does not give it the CPU while no slice is over. */
static void test_cond_resched_new_thread_waits(void **state)
{
	(void)state;
	struct cr c = {.resched = true};
	const int64_t ov[] = {P_sched_slice_ns, 0, P_ctx_switch_ns, CTXSW, P_cr3_flush_ns, 0, -1};
	struct sim *s = tsim_new_p("x86-24", 2, NESTED_FULLMM, ov);
	tsim_spawn(s, cr_hog, &c, 0);
	tsim_spawn(s, cr_new, &c, 0);
	tsim_run(s);
	assert_int_equal(c.n_start, c.h_end + CTXSW);
	assert_int_equal(s->m.context_switches, 1);
	tsim_free(s);
}

/* Same configuration, same schedule; a run of mmap8 with more threads than
 * CPUs (time slices and run queues in use) is reproducible. */
static void test_time_slice_determinism(void **state)
{
	(void)state;
	struct slice_log l1 = {.steps = 35}, l2 = {.steps = 35};
	struct sim *s = slice_sim(SLICE, &l1);
	tsim_run(s);
	struct tlbsim_metrics m1 = s->m;
	tsim_free(s);
	s = slice_sim(SLICE, &l2);
	tsim_run(s);
	assert_memory_equal(&m1, &s->m, sizeof(m1));
	tsim_free(s);
	assert_memory_equal(&l1, &l2, sizeof(l1));
}

static void run_oversubscribed(const char *profile, int64_t slice, uint64_t seed,
			       struct tlbsim_metrics *m)
{
	struct tlbsim_config cfg;
	struct tlbsim_resolved res;
	char err[256];
	tlbsim_config_init(&cfg);
	cfg.profile = profile;
	cfg.cpus = 2;
	cfg.threads = 6;
	cfg.iters = 20;
	cfg.seed = seed;
	cfg.overrides[0].param = P_sched_slice_ns;
	cfg.overrides[0].value = slice;
	cfg.noverrides = 1;
	memset(m, 0, sizeof(*m));
	if (tlbsim_run(&cfg, &res, m, err, sizeof(err)))
		fail_msg("tlbsim_run: %s", err);
}

/* mmap8 with 6 threads on 2 CPUs and 2 us slices: threads are preempted
 * (more CPU hand-overs than without slices), and the run is reproducible. */
static void test_time_slice_workload_determinism(void **state)
{
	(void)state;
	const char *profiles[] = {"falkor-46", "x86-24"};
	for (int i = 0; i < 2; i++) {
		struct tlbsim_metrics a, b, none;
		run_oversubscribed(profiles[i], 2000, 7, &a);
		run_oversubscribed(profiles[i], 2000, 7, &b);
		assert_memory_equal(&a, &b, sizeof(a));
		run_oversubscribed(profiles[i], 0, 7, &none);
		assert_true(a.context_switches > none.context_switches);
		assert_int_equal(a.ops, 6 * 20);
		assert_int_equal(a.violations, 0);
	}
}

/* Check mode keeps its own scheduling: with "always continue" decisions the
 * first thread runs to completion although its slice ended long ago. */
static void test_time_slice_not_in_check_mode(void **state)
{
	(void)state;
	struct slice_log l = {.steps = 35};
	const int64_t ov[] = {P_sched_slice_ns, SLICE, -1};
	struct sim *s = tsim_new_p("x86-24", 2, NESTED_FULLMM, ov);
	struct explore ex;
	explore_init(&ex, EX_REPLAY, 1, 1, 0, NULL, 0);
	sim_set_explore(s, &ex);
	tsim_spawn(s, slice_thread, &l, 0);
	tsim_spawn(s, slice_thread, &l, 0);
	tsim_run(s);
	assert_int_equal(l.n, 70);
	for (int i = 0; i < 35; i++)
		assert_int_equal(l.id[i], 0);
	assert_int_equal(s->m.context_switches, 1);
	sim_set_explore(s, NULL);
	explore_free(&ex);
	tsim_free(s);
}

/* ---- check mode: which candidate a decision runs ---- */

/* Labels of what runs first after thread A's decision: an entity's queue
 * index, a timed callback 200000 + its index, thread B, or A itself. */
#define DEC_B 100000u
#define DEC_A 100001u
#define DEC_CALL 200000u
#define DEC_MAXE 400

struct dec_case {
	int nent, ncalls;
	uint32_t prefix[64];	/* replay: A writes its decision's index here */
	uint32_t k;		/* replay: the index A's decision is given */
	uint64_t eseq[DEC_MAXE];
	bool cancelled[DEC_MAXE];
	bool armed, first_set, b_done;
	bool b_in;		/* B was a candidate of A's decision (not ended) */
	uint32_t first;		/* the label that ran first after the decision */
	uint32_t ndec;		/* A's decision: its number in the schedule */
	struct rng rng;		/* random: the stream before A's decision */
	int prio_a, prio_b;
	uint32_t calls_ran[64];	/* the callbacks in the order they ran */
	int ncalls_ran;
};

static void dec_log(struct dec_case *c, uint32_t label)
{
	if (c->armed && !c->first_set) {
		c->first = label;
		c->first_set = true;
	}
}

static void dec_entity(struct sim *s, void *arg, uint64_t data)
{
	(void)s;
	dec_log(arg, (uint32_t)data);
}

static void dec_call(struct sim *s, void *arg, uint64_t data)
{
	(void)s;
	struct dec_case *c = arg;
	dec_log(c, DEC_CALL + (uint32_t)data);
	if (c->ncalls_ran < 64)
		c->calls_ran[c->ncalls_ran++] = (uint32_t)data;
}

/* A queues entities of both kinds, withdraws every third (the ready list,
 * which removes by moving its last entry, is then out of queueing order)
 * and queues timed callbacks; then one step: the decision. */
static void dec_thread_a(struct sim *s, struct sim_thread *t)
{
	struct dec_case *c = t->arg;
	for (int i = 0; i < c->nent; i++)
		c->eseq[i] = sim_call_entity(s, dec_entity, c, (uint64_t)i,
					     i % 2 ? ENTITY_PROMPT : ENTITY_LATE);
	for (int i = 0; i < c->nent; i += 3)
		c->cancelled[i] = sim_call_cancel(s, c->eseq[i]);
	for (int j = 0; j < c->ncalls; j++)
		sim_call_at(s, s->now + 1000 + (uint64_t)j, dec_call, NULL, c, (uint64_t)j);
	c->ndec = s->ex->ndec;
	c->prefix[c->ndec] = c->k;
	c->rng = s->ex->rng;
	c->prio_a = s->ex->prio[t->id];
	c->b_in = !c->b_done;
	c->armed = true;
	sim_step(s, YP_USER, 10);
	dec_log(c, DEC_A);
}

static void dec_thread_b(struct sim *s, struct sim_thread *t)
{
	struct dec_case *c = t->arg;
	c->prio_b = s->ex->prio[t->id];
	sim_step(s, YP_USER, 10);
	dec_log(c, DEC_B);
	c->b_done = true;
}

/* The candidates of A's decision in canonical order (explore.h): A, the
 * entities still queued by queueing order, B unless it has ended, then the
 * callbacks by queueing order. Returns their number. */
static int dec_canon(const struct dec_case *c, uint32_t *label, bool b_in)
{
	int n = 0;
	label[n++] = DEC_A;
	for (int i = 0; i < c->nent; i++)
		if (!c->cancelled[i])
			label[n++] = (uint32_t)i;
	if (b_in)
		label[n++] = DEC_B;
	for (int j = 0; j < c->ncalls; j++)
		label[n++] = DEC_CALL + (uint32_t)j;
	return n;
}

static void dec_run(struct dec_case *c, enum explore_strategy st, uint64_t seed)
{
	struct sim *s = tsim_new_p("x86-24", 2, NESTED_FULLMM, NULL);
	struct explore ex;
	explore_init(&ex, st, seed, 1, 0, c->prefix, 64);
	sim_set_explore(s, &ex);
	tsim_spawn(s, dec_thread_a, c, 0);
	tsim_spawn(s, dec_thread_b, c, 1);
	tsim_run(s);
	assert_true(c->first_set);
	sim_set_explore(s, NULL);
	explore_free(&ex);
	tsim_free(s);
}

/* A decision's index is the rank in the canonical order: given index k
 * (replay, dfs), the k-th candidate runs, in short candidate lists and in
 * long ones (more than 64 entries, once sorted another way). */
static void test_decision_index_is_canonical_rank(void **state)
{
	(void)state;
	static const int sizes[][2] = {{5, 3}, {300, 40}};
	for (int z = 0; z < 2; z++) {
		struct dec_case probe = {.nent = sizes[z][0], .ncalls = sizes[z][1]};
		uint32_t label[DEC_MAXE + 64];
		dec_run(&probe, EX_REPLAY, 1);	/* k = 0: A continues */
		assert_int_equal(probe.first, DEC_A);
		int n = dec_canon(&probe, label, probe.b_in);
		const int ks[] = {1, 2, n / 2, n - 41, n - 3, n - 2, n - 1};
		for (size_t i = 0; i < sizeof(ks) / sizeof(ks[0]); i++) {
			if (ks[i] < 1 || ks[i] >= n)
				continue;
			struct dec_case c = {.nent = sizes[z][0], .ncalls = sizes[z][1],
					     .k = (uint32_t)ks[i]};
			dec_run(&c, EX_REPLAY, 1);
			assert_true(c.b_in == probe.b_in);
			assert_int_equal(c.first, label[ks[i]]);
		}
	}
}

/* random: a completion entity weighs 1 (ENTITY_LATE) or
 * EXPLORE_RANDOM_WEIGHT x ENTITY_PROMPT_WEIGHT (ENTITY_PROMPT), any other
 * candidate EXPLORE_RANDOM_WEIGHT; the draw r below the total picks the
 * first candidate in canonical order whose running sum of weights passes r
 * (uniform, one draw below n, when no entity is a candidate). pct: the
 * highest priority runs, the earliest in canonical order among equals
 * (timed callbacks -1, entities their explore_entity_prio): the callbacks
 * run last, in queueing order. */
static void test_decision_random_and_pct_rules(void **state)
{
	(void)state;
	static const int sizes[][2] = {{0, 30}, {7, 2}, {300, 40}};
	for (int z = 0; z < 3; z++) {
		for (uint64_t seed = 1; seed <= 6; seed++) {
			struct dec_case c = {.nent = sizes[z][0], .ncalls = sizes[z][1]};
			dec_run(&c, EX_RANDOM, seed);
			uint32_t label[DEC_MAXE + 64];
			int n = dec_canon(&c, label, c.b_in);
			uint64_t w[DEC_MAXE + 64], total = 0;
			bool any = false;
			for (int i = 0; i < n; i++) {
				uint32_t l = label[i];
				w[i] = l >= DEC_B ? EXPLORE_RANDOM_WEIGHT
				       : l % 2	  ? EXPLORE_RANDOM_WEIGHT * ENTITY_PROMPT_WEIGHT
						  : 1;
				total += w[i];
				any |= w[i] != EXPLORE_RANDOM_WEIGHT;
			}
			int idx;
			if (!any) {
				idx = (int)rng_below(&c.rng, (uint64_t)n);
			} else {
				uint64_t r = rng_below(&c.rng, total);
				for (idx = 0; r >= w[idx]; idx++)
					r -= w[idx];
			}
			assert_int_equal(c.first, label[idx]);

			struct dec_case p = {.nent = sizes[z][0], .ncalls = sizes[z][1]};
			struct sim *s = tsim_new_p("x86-24", 2, NESTED_FULLMM, NULL);
			struct explore ex;
			explore_init(&ex, EX_PCT, seed, 1, 0, NULL, 0);
			sim_set_explore(s, &ex);
			tsim_spawn(s, dec_thread_a, &p, 0);
			tsim_spawn(s, dec_thread_b, &p, 1);
			tsim_run(s);
			n = dec_canon(&p, label, p.b_in);
			int best = 0, bp = p.prio_a;
			for (int i = 1; i < n; i++) {
				uint32_t l = label[i];
				int pr = l == DEC_B ? p.prio_b
					 : l == DEC_A ? p.prio_a
					 : l < DEC_MAXE ? explore_entity_prio(&ex, p.eseq[l])
							: -1;	/* a timed callback */
				if (pr > bp) {
					bp = pr;
					best = i;
				}
			}
			assert_int_equal(p.first, label[best]);
			/* the callbacks (priority -1, below any thread's or
			 * entity's) ran last, tied: in canonical order */
			assert_int_equal(p.ncalls_ran, p.ncalls);
			for (int j = 0; j < p.ncalls_ran; j++)
				assert_int_equal(p.calls_ran[j], j);
			sim_set_explore(s, NULL);
			explore_free(&ex);
			tsim_free(s);
		}
	}
}

/* ---- accounting ---- */

static void acct_thread(struct sim *s, struct sim_thread *t)
{
	const uint64_t *c = t->arg;	/* user x3, then sys x2 */
	for (int i = 0; i < 3; i++)
		sim_step(s, YP_USER, c[0]);
	sim_set_mode(s, MODE_SYS);
	for (int i = 0; i < 2; i++)
		sim_step(s, YP_SYSCALL, c[1]);
	sim_charge_sys(s, c[2]);
	sim_set_mode(s, MODE_USER);
	sim_step(s, YP_USER, 0);
}

/* Per-CPU user/sys equal exactly what the threads charged (switch costs set
 * to 0 so nothing else is charged); wall = the latest finish. */
static void test_accounting_harness(void **state)
{
	(void)state;
	const int64_t ov[] = {P_ctx_switch_ns, 0, P_cr3_flush_ns, 0, P_idle_exit_ns, 0, -1};
	const uint64_t c0[3] = {1000, 250, 77}, c1[3] = {10, 4000, 0};
	struct sim *s = tsim_new_p("x86-24", 3, NESTED_FULLMM, ov);
	tsim_spawn(s, acct_thread, (void *)c0, 0);
	tsim_spawn(s, acct_thread, (void *)c1, 1);
	tsim_run(s);
	assert_int_equal(s->cpus[0].user_ns, 3 * c0[0]);
	assert_int_equal(s->cpus[0].sys_ns, 2 * c0[1] + c0[2]);
	assert_int_equal(s->cpus[1].user_ns, 3 * c1[0]);
	assert_int_equal(s->cpus[1].sys_ns, 2 * c1[1] + c1[2]);
	assert_int_equal(s->cpus[2].user_ns + s->cpus[2].sys_ns, 0);
	uint64_t e0 = 3 * c0[0] + 2 * c0[1] + c0[2], e1 = 3 * c1[0] + 2 * c1[1] + c1[2];
	assert_int_equal(s->now, e0 > e1 ? e0 : e1);
	tsim_free(s);
}

static int run_cfg(const char *wl, const char *profile, int threads, int64_t iters, uint64_t seed,
		   struct tlbsim_metrics *m, struct tlbsim_resolved *res)
{
	struct tlbsim_config cfg;
	char err[256];
	tlbsim_config_init(&cfg);
	cfg.workload = wl;
	cfg.profile = profile;
	cfg.threads = threads;
	cfg.iters = iters;
	cfg.seed = seed;
	memset(m, 0, sizeof(*m));
	int rc = tlbsim_run(&cfg, res, m, err, sizeof(err));
	if (rc)
		fail_msg("tlbsim_run: %s", err);
	return rc;
}

/* tlbsim_run: idle = wall x cpus - (user + sys); work was done in both
 * modes (user stores and loop overhead; syscalls and faults). */
static void test_accounting_tlbsim_run(void **state)
{
	(void)state;
	const char *profiles[] = {NULL, "x86-24"};
	for (int i = 0; i < 2; i++) {
		struct tlbsim_metrics m;
		struct tlbsim_resolved res;
		run_cfg("mmap8", profiles[i], 2, 5, 1, &m, &res);
		assert_true(m.wall_ns > 0);
		assert_true(m.user_ns > 0);
		assert_true(m.sys_ns > 0);
		assert_int_equal(m.ops, 2 * 5);
		assert_int_equal(m.idle_ns + m.user_ns + m.sys_ns, m.wall_ns * (uint64_t)res.cpus);
	}
}

/* ---- determinism ---- */

static void test_determinism(void **state)
{
	(void)state;
	struct tlbsim_metrics a, b;
	struct tlbsim_resolved res;
	const char *profiles[] = {NULL, "x86-24", "arm64-4k"};
	for (int i = 0; i < 3; i++) {
		run_cfg("mmap8", profiles[i], 2, 5, 1, &a, &res);
		run_cfg("mmap8", profiles[i], 2, 5, 1, &b, &res);
		assert_memory_equal(&a, &b, sizeof(a));
		run_cfg("mmap8", profiles[i], 2, 5, 12345, &a, &res);
		run_cfg("mmap8", profiles[i], 2, 5, 12345, &b, &res);
		assert_memory_equal(&a, &b, sizeof(a));
	}
	/* the seed drives mmap8's per-iteration user-loop jitter: with one
	 * thread every iteration is on the critical path, so the wall time
	 * (or the schedule) differs between seeds */
	run_cfg("mmap8", NULL, 1, 5, 1, &a, &res);
	run_cfg("mmap8", NULL, 1, 5, 2, &b, &res);
	assert_true(a.wall_ns != b.wall_ns || a.events != b.events);
	/* with two threads the jitter still shows in the metrics */
	run_cfg("mmap8", NULL, 2, 5, 1, &a, &res);
	run_cfg("mmap8", NULL, 2, 5, 2, &b, &res);
	assert_true(memcmp(&a, &b, sizeof(a)) != 0);
}

/* ---- two sims in one process ---- */

struct result {
	struct tlbsim_metrics m;
	uint64_t now;
	uint64_t cpu_time[8];
};

static void work_thread(struct sim *s, struct sim_thread *t)
{
	uint64_t ps = hw_of(s)->geom.page_size;
	for (int it = 0; it < 3; it++) {
		uint64_t a = sys_mmap(s, 0, 8 * ps, TLBSIM_MAP_SHARED);
		assert_true(a != TLBSIM_EINVAL_VA);
		for (int k = 0; k < 8; k++)
			assert_int_equal(user_access(s, a + (uint64_t)k * ps, k & 1), 0);
		assert_int_equal(sys_madvise_dontneed(s, a, 4 * ps), 0);
		assert_int_equal(sys_munmap(s, a, 8 * ps), 0);
		sim_charge(s, rng_below(&s->rng, 1000));
		sim_step(s, YP_USER, 100 + (uint64_t)t->cpu);
	}
}

static struct sim *make_sim(const char *profile)
{
	return tsim_new(profile, 4, NESTED_FULLMM);
}

static void spawn_work(struct sim *s)
{
	for (int c = 0; c < 3; c++)
		tsim_spawn(s, work_thread, NULL, c);
}

static struct result result_of(struct sim *s)
{
	struct result r;
	memset(&r, 0, sizeof(r));
	r.m = s->m;
	r.now = s->now;
	for (int c = 0; c < s->nr_cpus && c < 4; c++) {
		r.cpu_time[2 * c] = s->cpus[c].user_ns;
		r.cpu_time[2 * c + 1] = s->cpus[c].sys_ns;
	}
	return r;
}

static struct result alone(const char *profile)
{
	struct sim *s = make_sim(profile);
	spawn_work(s);
	tsim_run(s);
	struct result r = result_of(s);
	tsim_free(s);
	return r;
}

static void test_two_sims(void **state)
{
	(void)state;
	const char *pa = "falkor-46", *pb = "x86-24";
	struct result ra = alone(pa), rb = alone(pb);
	struct result rb2 = alone(pb);
	assert_memory_equal(&rb, &rb2, sizeof(rb));	/* alone is reproducible */
	assert_true(ra.m.gathers > 0 && rb.m.gathers > 0);

	/* both created and populated, then A run to completion, then B */
	struct sim *a = make_sim(pa), *b = make_sim(pb);
	spawn_work(a);
	spawn_work(b);
	tsim_run(a);
	tsim_run(b);
	struct result xa = result_of(a), xb = result_of(b);
	assert_memory_equal(&xa, &ra, sizeof(ra));
	assert_memory_equal(&xb, &rb, sizeof(rb));
	tsim_free(a);
	tsim_free(b);

	/* B created first, A runs while B waits with its threads queued; B
	 * runs after A was destroyed */
	b = make_sim(pb);
	spawn_work(b);
	a = make_sim(pa);
	spawn_work(a);
	tsim_run(a);
	xa = result_of(a);
	tsim_free(a);
	tsim_run(b);
	xb = result_of(b);
	tsim_free(b);
	assert_memory_equal(&xa, &ra, sizeof(ra));
	assert_memory_equal(&xb, &rb, sizeof(rb));

	/* same profile for both */
	struct result ra2 = alone(pa);
	a = make_sim(pa);
	b = make_sim(pa);
	spawn_work(b);
	spawn_work(a);
	tsim_run(b);
	tsim_run(a);
	xa = result_of(a);
	xb = result_of(b);
	assert_memory_equal(&xa, &ra2, sizeof(ra2));
	assert_memory_equal(&xb, &ra2, sizeof(ra2));
	tsim_free(a);
	tsim_free(b);
}

/* ---- rng ---- */

/* Reference splitmix64 and xoshiro256** (Blackman & Vigna, public-domain
 * reference code), written here independently of sim.c */
static uint64_t ref_splitmix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t ref_rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static uint64_t ref_next(uint64_t st[4])
{
	const uint64_t result = ref_rotl(st[1] * 5, 7) * 9;
	const uint64_t t = st[1] << 17;
	st[2] ^= st[0];
	st[3] ^= st[1];
	st[1] ^= st[2];
	st[0] ^= st[3];
	st[2] ^= t;
	st[3] = ref_rotl(st[3], 45);
	return result;
}

static void test_rng(void **state)
{
	(void)state;
	const uint64_t seeds[] = {0, 1, 2, 42, 0xdeadbeefcafef00dull};
	for (int i = 0; i < 5; i++) {
		struct rng r1, r2;
		rng_seed(&r1, seeds[i]);
		rng_seed(&r2, seeds[i]);
		uint64_t x = seeds[i], st[4];
		for (int k = 0; k < 4; k++)
			st[k] = ref_splitmix(&x);
		for (int k = 0; k < 1000; k++) {
			uint64_t v = rng_next(&r1);
			assert_int_equal(v, rng_next(&r2));
			assert_int_equal(v, ref_next(st));
		}
	}
	/* different seeds: different streams */
	struct rng a, b;
	rng_seed(&a, 1);
	rng_seed(&b, 2);
	int same = 0;
	for (int k = 0; k < 100; k++)
		same += rng_next(&a) == rng_next(&b);
	assert_true(same < 100);

	/* rng_below(n) in [0, n); n = 1 -> always 0; small n hits every value */
	const uint64_t ns[] = {1, 2, 3, 7, 10, 1000, 1ull << 32, (1ull << 63) + 1, UINT64_MAX};
	struct rng r;
	rng_seed(&r, 7);
	for (int i = 0; i < 9; i++)
		for (int k = 0; k < 2000; k++)
			assert_true(rng_below(&r, ns[i]) < ns[i]);
	int hit[10] = {0};
	for (int k = 0; k < 2000; k++)
		hit[rng_below(&r, 10)]++;
	for (int v = 0; v < 10; v++)
		assert_true(hit[v] > 0);
	/* deterministic */
	struct rng c, d;
	rng_seed(&c, 99);
	rng_seed(&d, 99);
	for (int k = 0; k < 100; k++)
		assert_int_equal(rng_below(&c, 12345), rng_below(&d, 12345));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_event_order),
		cmocka_unit_test(test_fast_path),
		cmocka_unit_test(test_sleep_wake_idle),
		cmocka_unit_test(test_wake_during_idle_entry),
		cmocka_unit_test(test_spin_wake),
		cmocka_unit_test(test_run_queue),
		cmocka_unit_test(test_join),
		cmocka_unit_test(test_time_slice_alternates),
		cmocka_unit_test(test_time_slice_off),
		cmocka_unit_test(test_time_slice_not_in_kernel),
		cmocka_unit_test(test_cond_resched_wakeup_preempts),
		cmocka_unit_test(test_steal_from_spinner),
		cmocka_unit_test(test_jitter_bounds),
		cmocka_unit_test(test_jitter_not_in_check_mode),
		cmocka_unit_test(test_jitter_amp_exact),
		cmocka_unit_test(test_jitter_ranges),
		cmocka_unit_test(test_cond_resched_none_no_preemption),
		cmocka_unit_test(test_cond_resched_new_thread_waits),
		cmocka_unit_test(test_time_slice_determinism),
		cmocka_unit_test(test_time_slice_workload_determinism),
		cmocka_unit_test(test_time_slice_not_in_check_mode),
		cmocka_unit_test(test_decision_index_is_canonical_rank),
		cmocka_unit_test(test_decision_random_and_pct_rules),
		cmocka_unit_test(test_accounting_harness),
		cmocka_unit_test(test_accounting_tlbsim_run),
		cmocka_unit_test(test_determinism),
		cmocka_unit_test(test_two_sims),
		cmocka_unit_test(test_rng),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
