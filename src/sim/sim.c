/*
 * sim.c - the discrete-event engine (see sim.h).
 *
 * Each simulated thread is a coroutine. The scheduler context pops the
 * earliest event from a binary heap ordered by (time, seq) and either resumes
 * a thread or runs a callback. A running thread advances simulated time only
 * through sim_step(): its charged cost is added, and if the new time is still
 * earlier than every queued event the thread simply continues (the heap would
 * hand control straight back), otherwise it re-queues itself and switches to
 * the scheduler. That fast path keeps the host cost of a step a few ns when
 * no other thread could interleave.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "sim/explore.h"
#include "sim/grow.h"
#include "sim/sim.h"

/* steps (and events) between two looks at the host clock and the stop flag;
 * a power of two */
#define SIM_POLL_PERIOD 4096u
#define SIM_POLL_MASK (SIM_POLL_PERIOD - 1)

uint64_t sim_host_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- queueing ---- */
static void heap_push(struct sim *s, struct event ev)
{
	ev.seq = s->seq++;
	if (evq_heap_push(&s->q, &ev))
		sim_oom(s, "the event queue");
}

static uint64_t ready_push(struct sim *s, struct event ev)
{
	ev.seq = ++s->seq;
	if (ev.entity)
		ev.prio = explore_entity_prio(s->ex, ev.seq);
	if (evq_ready_push(&s->q, &ev))
		sim_oom(s, "the ready list");
	return ev.seq;
}

void sim_call_at(struct sim *s, uint64_t time, ev_fn fn, ev_fn drop, void *arg, uint64_t data)
{
	struct event ev = {.time = time, .kind = EV_CALL, .ptr = arg, .fn = fn, .drop = drop,
			   .data = data};
	if (s->ex)
		ready_push(s, ev);	/* check mode: the strategy decides when */
	else
		heap_push(s, ev);
}

/* Check mode: withdraw the first ready callback that fn matches with key;
 * true if there was one. */
static bool ready_cancel(struct sim *s, bool (*match)(const struct event *e, const void *key),
			 const void *key)
{
	for (uint32_t i = 0; i < s->q.nready; i++)
		if (s->q.ready[i].kind == EV_CALL && match(&s->q.ready[i], key)) {
			evq_ready_remove(&s->q, i);
			return true;
		}
	return false;
}

struct call_key {
	ev_fn fn;
	uint64_t data;
};

static bool match_call(const struct event *e, const void *key)
{
	const struct call_key *k = key;
	return e->fn == k->fn && e->data == k->data;
}

static bool match_seq(const struct event *e, const void *key)
{
	return e->seq == *(const uint64_t *)key;
}

void sim_cancel_call(struct sim *s, ev_fn fn, uint64_t data)
{
	SIM_BUG_ON(s, !s->ex);
	struct call_key k = {fn, data};
	ready_cancel(s, match_call, &k);
}

uint64_t sim_call_entity(struct sim *s, ev_fn fn, void *arg, uint64_t data,
			 enum sim_entity_kind kind)
{
	SIM_BUG_ON(s, !s->ex);
	struct event ev = {.time = s->now, .kind = EV_CALL, .ptr = arg, .fn = fn, .data = data,
			   .entity = (uint8_t)kind};
	return ready_push(s, ev);
}

bool sim_call_cancel(struct sim *s, uint64_t seq)
{
	return ready_cancel(s, match_seq, &seq);
}

static void queue_resume(struct sim *s, struct sim_thread *t, uint64_t time)
{
	if (s->ex) {
		struct event ev = {.time = time, .kind = EV_RESUME, .ptr = t};
		ready_push(s, ev);
	} else if (evq_resume_push(&s->q, time, s->seq++, t))	/* heap_push's */
		sim_oom(s, "the event queue");
}

/* ---- errors ---- */
static void vfail(struct sim *s, int err, const char *fmt, va_list ap)
{
	if (s->error)
		return;
	s->error = err;
	vsnprintf(s->errmsg, sizeof(s->errmsg), fmt, ap);
}

void sim_fail(struct sim *s, int err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vfail(s, err, fmt, ap);
	va_end(ap);
}

static void switch_to_scheduler(struct sim *s)
{
	struct sim_thread *t = s->curr;
	coro_switch(&t->co, &s->main_co);
}

static void sim_poll(struct sim *s);

/*
 * The running thread gives up the host (it yielded, slept, was preempted
 * or migrated; it is not exiting). Run mode does here what sim_run's loop
 * would do next when the next event resumes a thread: poll, pop it and
 * switch straight to that thread (or just return when it is this one),
 * one context switch instead of two through the scheduler's stack. Any
 * other next event (a callback), an error or a stop goes through the
 * scheduler as before. The events run, their order and their count are
 * the same either way.
 */
/* (s->error | s->stopped) below: one test for "either is set" */

/* sim_dispatch of the event resuming n at time, done by the running
 * thread t: n runs (t returns at once if n is t) */
static inline void hand_off(struct sim *s, struct sim_thread *t, struct sim_thread *n,
			    uint64_t time)
{
	SIM_BUG_ON(s, time < s->now);
	s->now = time;
	s->m.events++;
	s->last_ran = t;
	n->state = TS_RUNNING;
	s->curr = n;
	if (n != t)
		coro_switch(&t->co, &n->co);
}

static void switch_away(struct sim *s)
{
	struct sim_thread *t = s->curr;
	if (s->ex)
		goto sched;
	if (__builtin_expect((s->m.events & SIM_POLL_MASK) == 0, 0)) {
		sim_poll(s);
		/* sim_run polls again at this count: once the run is over */
		goto sched;
	}
	struct evq *q = &s->q;
	if ((s->error | (int)s->stopped) || !evq_resume_next(q))
		goto sched;
	struct evq_node n = evq_resume_pop(q);
	hand_off(s, t, n.t, n.time);
	return;
sched:
	switch_to_scheduler(s);
}

/*
 * Run mode: the running thread t yields, to resume at time at, because an
 * event comes first. Queueing t's resume and popping the next event is one
 * replacement of the heap's top (the next event is a thread's resume: its
 * time is not after at, and t's is queued last, so it loses a tie); the
 * order of events is what queue_resume + switch_away give.
 */
static void yield_to_next(struct sim *s, struct sim_thread *t, uint64_t at)
{
	struct evq *q = &s->q;
	/* only sim_step_arg calls it, in run mode, with at not before
	 * q->top_time: if the next event is a resume, it is not after at.
	 * The queue is not empty: with no callback queued, a resume is next. */
	if ((s->m.events & SIM_POLL_MASK) == 0 || (s->error | (int)s->stopped) ||
	    !evq_resume_next(q)) {
		queue_resume(s, t, at);
		t->pending_ns = 0;
		t->state = TS_RUNNABLE;
		switch_away(s);
		return;
	}
	t->pending_ns = 0;
	t->state = TS_RUNNABLE;
	struct evq_node top = q->heap[0];
	evq_resume_replace_top(q, at, s->seq++, t);
	hand_off(s, t, top.t, top.time);
}

void sim_fatal(struct sim *s, int err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vfail(s, err, fmt, ap);
	va_end(ap);
	if (!s->curr)
		return;
	/* abandon the run: this thread is never resumed (sim_run sees the
	 * error and stops; sim_destroy frees the stack) */
	s->curr->state = TS_SLEEPING;
	for (;;)
		switch_to_scheduler(s);
}

void sim_oom(struct sim *s, const char *what)
{
	if (s->host_limit)
		sim_fatal(s, TLBSIM_ENOMEM, "out of host memory for %s: %llu MiB held, budget "
			  "%llu MiB (--max-memory)", what, (unsigned long long)(s->host_bytes >> 20),
			  (unsigned long long)(s->host_limit >> 20));
	else
		sim_fatal(s, TLBSIM_ENOMEM, "out of host memory for %s: %llu MiB held", what,
			  (unsigned long long)(s->host_bytes >> 20));
}

void sim_bug(struct sim *s, const char *file, int line, const char *what)
{
	if (s->on_bug)
		s->on_bug(file, line, what);
	fprintf(stderr, "tlbsim: internal error at %s:%d: %s (sim time %llu ns, seed replay: "
		"same command)\n", file, line, what, (unsigned long long)s->now);
	abort();
}

int sim_host_charge(struct sim *s, uint64_t bytes)
{
	if (s->host_limit && s->host_bytes + bytes > s->host_limit)
		return -1;
	s->host_bytes += bytes;
	return 0;
}

void sim_stop_schedule(struct sim *s)
{
	if (s->ex)
		s->ex->stop = true;
}

/* ---- accounting ---- */

_Static_assert(MODE_SYS == MODE_USER + 1, "sim_set_mode moves t->acct by one slot");

/* t->acct after t->cpu or t->mode changed */
static inline void thread_acct(struct sim *s, struct sim_thread *t)
{
	t->acct = &s->cpus[t->cpu].mode_ns[t->mode];
}

/* The soft-lockup watchdog (kernel/watchdog.c, v6.10: watchdog_timer_fn's
 * is_softlockup(): the CPU's touch timestamp older than 2 x watchdog_thresh).
 * t runs on its CPU; the episode started when the CPU last scheduled or t
 * last entered kernel mode, whichever is later. Counted once per episode. */
static void softlockup_check(struct sim *s, const struct sim_thread *t)
{
	uint64_t thresh = 2 * (uint64_t)P(s, P_watchdog_thresh_s) * 1000000000u;
	if (!thresh || t->mode != MODE_SYS)
		return;
	struct sim_cpu_watchdog *w = &s->wd[t->cpu];
	uint64_t since = w->sched_at > t->kernel_since ? w->sched_at : t->kernel_since;
	uint64_t now = s->now + t->pending_ns;
	if (now > since && now - since > thresh && w->counted_since != since) {
		w->counted_since = since;
		s->m.softlockups++;
		sim_trace(s, &tp_softlockup, (uint64_t)t->cpu, now - since);
	}
}

void sim_set_mode_user(struct sim *s, struct sim_thread *t)
{
	if (t->mode != MODE_USER) {
		softlockup_check(s, t);
		t->mode = MODE_USER;
		t->acct--;	/* mode_ns[MODE_SYS] -> mode_ns[MODE_USER] */
	}
	if (t->migrate_to)
		sim_preempt_point(s);
}

void sim_steal_at(struct sim *s, int cpu, uint64_t at, uint64_t ns)
{
	struct sim_cpu *c = &s->cpus[cpu];
	if (!c->curr) {
		/* an idle CPU runs the handler from at: a thread woken onto it
		 * meanwhile starts when the handler is done, without an idle
		 * exit (the CPU is awake), so the handler's sys time and the
		 * thread's never overlap */
		c->sys_ns += ns;
		uint64_t from = c->idle_at > at ? c->idle_at : at;
		c->idle_at = from + ns;
		if (c->idle_at > s->steal_until)
			s->steal_until = c->idle_at;
		return;
	}
	sim_steal(s, cpu, ns);
}

void sim_steal(struct sim *s, int cpu, uint64_t ns)
{
	struct sim_cpu *c = &s->cpus[cpu];
	struct sim_thread *t = c->curr;
	if (t && t->spinning) {
		/* the handler interrupts the spin: the spin's own sys time
		 * covers it, and the spinner sees a release only after it */
		uint64_t now = s->now + (s->curr ? s->curr->pending_ns : 0);
		uint64_t from = t->spin_irq_until > now ? t->spin_irq_until : now;
		t->spin_irq_until = from + ns;
		return;
	}
	c->sys_ns += ns;
	if (t && t->state != TS_SLEEPING)
		t->pending_ns += ns;
}

bool sim_cpu_idle(struct sim *s, int cpu)
{
	return s->cpus[cpu].curr == NULL;
}

int sim_cpu_nr_running(const struct sim *s, int cpu)
{
	const struct sim_cpu *c = &s->cpus[cpu];
	int n = c->curr != NULL;
	for (const struct sim_thread *q = c->rq_head; q; q = q->rq_next)
		n++;
	return n;
}

/* ---- trace ---- */
void sim_trace_cpu(struct sim *s, int cpu, const struct sim_point *pt, uint64_t a, uint64_t b)
{
	if (!s->trace || !trace_in_window(s->trace, s->now))
		return;
	uint32_t n = s->trace->n;
	sim_trace_rec(s, pt, a, b);
	if (s->trace->n > n)
		s->trace->r[n].cpu = (int16_t)cpu;
}

void sim_trace_rec(struct sim *s, const struct sim_point *pt, uint64_t a, uint64_t b)
{
	struct trace_buf *tb = s->trace;
	if (!trace_in_window(tb, s->now))
		return;		/* outside the window: never stored */
	if (tb->max && tb->n >= tb->max) {
		tb->dropped++;
		return;
	}
	if (GROW(&tb->r, &tb->cap, tb->n, (size_t)tb->n + 1, 1024))
		return;		/* the trace is a diagnostic: drop, never fail */
	struct sim_thread *t = s->curr;
	struct trace_rec *r = &tb->r[tb->n++];
	memset(r, 0, sizeof(*r));	/* padding too: equal traces are equal bytes */
	r->step = s->steps;
	r->time = s->now;
	r->cpu = (int16_t)(t ? t->cpu : -1);
	r->tid = (int16_t)(t ? t->id : -1);
	r->pt = pt;
	r->a = a;
	r->b = b;
}

/* Run mode, tracing: the timeline's counter of threads waiting in run
 * queues, and CPUs going idle (not recorded in check mode, whose trace is a
 * counterexample's steps) */
static inline void trace_queued(struct sim *s)
{
	if (s->trace && !s->ex)
		sim_trace(s, &tp_nr_queued, s->nr_queued, 0);
}

/* The trace window opens (an event at its start, run mode): from here every
 * step takes the slow path and is recorded. Not an event of the model: it
 * is not counted. */
static void trace_window_open(struct sim *s, void *arg, uint64_t data)
{
	(void)arg;
	(void)data;
	s->m.events--;
	/* The thread that ran last yielded only because this event cut its
	 * fast path if its resume is now the next event (it queued it last, so
	 * it is earlier than every other): the dispatch that resumes it would
	 * not have happened untraced, and is not counted either. */
	const struct evq *q = &s->q;
	if (q->nheap && s->last_ran && q->heap[0].t == s->last_ran && evq_resume_next(q))
		s->m.events--;
	if (s->slow_countdown > 1) {
		s->steps -= s->slow_countdown - 1;
		s->slow_countdown = 1;
		s->poll_at = SIM_POLL_PERIOD;
	}
}

/* ---- stopping a long run ---- */
/*
 * The stop flags' poll, every SIM_POLL_PERIOD events or steps. The caller's
 * interrupted() is asked when interrupted_period_ns of host time has passed
 * since it was last asked (at every poll when 0): the CLI's callback is a
 * system call, while reading the clock is a vDSO call.
 */
static void sim_poll(struct sim *s)
{
	const uint64_t now = s->interrupted_period_ns || s->deadline_host_ns ? sim_host_ns() : 0;
	int sig = 0;
	if (s->interrupted && now >= s->interrupted_next_ns) {
		s->interrupted_next_ns = now + s->interrupted_period_ns;
		sig = s->interrupted(s->interrupted_ctx);
	}
	if (sig) {
		s->stopped = SIM_STOP_SIGNAL;
		s->stop_signal = sig;
	} else if (s->deadline_host_ns && now >= s->deadline_host_ns)
		s->stopped = SIM_STOP_TIME_LIMIT;
}

/* ---- switching ---- */

/* schedule() out of a task to the idle task, or from it into a woken one:
 * half a context switch each (ctx_switch_ns) */
static inline uint64_t sched_half(const struct sim *s)
{
	return (uint64_t)P(s, P_ctx_switch_ns) / 2;
}

static inline void cpu_pick_next(struct sim *s, int cpu, uint64_t at);

/* Run mode: is the time slice of t, running at a yield point, over while
 * another thread waits for its CPU (check_preempt_tick(): the running task
 * had its ideal runtime, kernel/sched/fair.c, v5.1)? Acted on only in user
 * mode: the kernel is not preemptible (sim.h), so a thread in a syscall or a
 * fault finishes it first. */
static bool slice_over(const struct sim *s, const struct sim_thread *t)
{
	const struct sim_cpu *c = &s->cpus[t->cpu];
	uint64_t slice = (uint64_t)P(s, P_sched_slice_ns);
	return c->rq_head && slice && t->mode == MODE_USER &&
	       s->now + t->pending_ns - c->slice_start >= slice;
}

/*
 * The slice of t is over (scheduler_tick -> task_tick_fair -> check_preempt_tick
 * sets need_resched; the switch happens on the way back to user mode,
 * kernel/sched/core.c and kernel/sched/fair.c, v5.1): t goes to the tail of
 * its CPU's run queue and the head gets the CPU exactly as after a sleep
 * (cpu_pick_next: switch_to, ctx_switch_ns). t resumes when it is picked.
 */
static void preempt(struct sim *s, struct sim_thread *t)
{
	struct sim_cpu *c = &s->cpus[t->cpu];
	uint64_t at = s->now + t->pending_ns;
	sim_trace(s, &tp_sched_preempt, 0, 0);
	t->pending_ns = 0;
	t->state = TS_RUNNABLE;
	t->rq_next = NULL;
	c->rq_tail->rq_next = t;	/* the queue is not empty (slice_over) */
	c->rq_tail = t;
	s->nr_queued++;
	trace_queued(s);
	cpu_pick_next(s, t->cpu, at);
	switch_away(s);
}

/* A thread now waits in a run queue: from the next step on, run mode takes
 * the slow path at every step (time slices) until no thread waits. The steps
 * counted ahead for the window cut short are taken back. */
static void slow_path_every_step(struct sim *s)
{
	if (!s->ex && s->slow_countdown > 1) {
		s->steps -= s->slow_countdown - 1;
		s->slow_countdown = 1;
		s->poll_at = SIM_POLL_PERIOD;
	}
}

/* Run mode, every SIM_POLL_PERIOD steps, and every step while tracing or
 * while a thread waits in a run queue: record the trace; every
 * SIM_POLL_PERIOD steps look at the stop flag and the host clock and stop
 * the run at this event boundary if asked (the time charged so far has
 * elapsed and the thread is never resumed); end the thread's time slice if
 * it is over. Returns true if t was preempted (it has its CPU back now). So
 * the common fast path of a step is the one countdown test. */
static bool sim_step_slow(struct sim *s, struct sim_thread *t, const struct sim_point *yp,
			  uint64_t a, uint64_t b)
{
	if (s->ex) {
		/* check mode: one global clock, order chosen by the strategy;
		 * the countdown stays at 1 (sim_set_explore) */
		s->slow_countdown = 1;
		s->now += t->pending_ns;
		t->pending_ns = 0;
		sim_trace(s, yp, a, b);
		if (explore_yield(s, t, yp)) {
			queue_resume(s, t, s->now);
			t->state = TS_RUNNABLE;
			switch_away(s);
		}
		return true;
	}
	uint32_t period = (s->trace && trace_in_window(s->trace, s->now)) || s->nr_queued
				  ? 1 : SIM_POLL_PERIOD;
	s->slow_countdown = period;
	sim_trace(s, yp, a, b);
	s->steps += period;
	if (s->steps >= s->poll_at) {
		s->poll_at = (s->steps | SIM_POLL_MASK) + 1;
		sim_poll(s);
		if (s->stopped) {
			s->now += t->pending_ns;
			t->pending_ns = 0;
			t->state = TS_SLEEPING;
			for (;;)
				switch_to_scheduler(s);
		}
	}
	softlockup_check(s, t);
	if (s->nr_queued && slice_over(s, t)) {
		preempt(s, t);
		return true;
	}
	return false;
}

/* sim_step_arg (sim.h) after its charge: the inline part only skips this
 * when the countdown would not reach 0 and no event comes first, where this
 * does nothing but what it does */
/* sim_step_arg (sim.h) after its charge, when the countdown does not reach 0
 * and an event comes first: what sim_step_out does then */
void sim_step_yield(struct sim *s, struct sim_thread *t, uint64_t wake)
{
	s->slow_countdown--;
	/* wake >= top_time, which is UINT64_MAX when the queue is empty */
	if (__builtin_expect(wake == UINT64_MAX, 0) && evq_empty(&s->q)) {
		s->now = wake;
		t->pending_ns = 0;
		return;
	}
	yield_to_next(s, t, wake);
}

void sim_step_out(struct sim *s, struct sim_thread *t, const struct sim_point *yp, uint64_t a,
		  uint64_t b)
{
	/* check mode always takes the slow path, which decides its steps */
	if (__builtin_expect(--s->slow_countdown == 0, 0) && sim_step_slow(s, t, yp, a, b))
		return;		/* check mode, or preempted at the end of its slice */
	/* the time-ordered strategy, the only one of run mode (sim_run), inline:
	 * keep running while no queued event comes first (an event queued at
	 * the same time was queued first and wins the tie); top_time is
	 * UINT64_MAX when the queue is empty */
	uint64_t wake = s->now + t->pending_ns;
	if (wake < s->q.top_time || evq_empty(&s->q)) {
		s->now = wake;
		t->pending_ns = 0;
		return;
	}
	yield_to_next(s, t, wake);
}

/* The thread running on CPU cpu gives it up at time at (sleep, exit,
 * preemption): the head of the run queue runs after ctx_switch_ns, or, with
 * nothing queued, the CPU goes idle (the machine decides what that means, e.g.
 * x86 lazy TLB). */
static inline __attribute__((always_inline)) void cpu_pick_next(struct sim *s, int cpu,
								uint64_t at)
{
	struct sim_cpu *c = &s->cpus[cpu];
	struct sim_thread *n = c->rq_head;
	s->wd[cpu].sched_at = at;
	if (!n) {
		if (s->trace && !s->ex)
			sim_trace(s, &tp_cpu_idle, (uint64_t)cpu, 0);
		c->curr = NULL;
		c->idle_at = at + sim_jittered(s, (uint64_t)P(s, P_idle_entry_ns));
		if (s->cpu_ops)
			s->cpu_ops->switch_to(s, cpu, NULL);
		return;
	}
	c->rq_head = n->rq_next;
	if (!c->rq_head)
		c->rq_tail = NULL;
	n->rq_next = NULL;
	s->nr_queued--;
	trace_queued(s);
	s->m.context_switches++;
	c->need_resched = false;
	c->curr = n;
	if (s->cpu_ops)
		s->cpu_ops->switch_to(s, cpu, n);
	c->sys_ns += (uint64_t)P(s, P_ctx_switch_ns);
	n->state = TS_RUNNABLE;
	c->slice_start = at + (uint64_t)P(s, P_ctx_switch_ns);
	queue_resume(s, n, c->slice_start);
}

__attribute__((noinline))	/* one call site per lock path; keeps callers small */
void sim_sleep(struct sim *s)
{
	struct sim_thread *t = s->curr;
	SIM_BUG_ON(s, !t);
	/* nothing else to run: schedule() out to the idle task */
	if (!s->cpus[t->cpu].rq_head)
		sim_charge_sys(s, sched_half(s));
	/* time charged so far elapses before the thread sleeps */
	uint64_t at = s->now + t->pending_ns;
	softlockup_check(s, t);
	sim_trace(s, &tp_sched_sleep, 0, 0);
	t->pending_ns = 0;
	t->state = TS_SLEEPING;
	t->sleep_start = at;
	cpu_pick_next(s, t->cpu, at);
	switch_away(s);
}

/* wakeup: t was asleep (sim_wake, a joiner), not a new thread: queued behind
 * a running thread it sets need_resched (wakeup preemption; a new task starts
 * behind its parent's slice, START_DEBIT, and does not) */
static inline __attribute__((always_inline)) void cpu_enqueue(struct sim *s, struct sim_thread *t,
							       uint64_t at, bool wakeup)
{
	struct sim_cpu *c = &s->cpus[t->cpu];
	/* a thread never resumes before the time it went to sleep or spin
	 * (its own charged time may run ahead of the waker's clock) */
	if (at < t->sleep_start)
		at = t->sleep_start;
	if (t->spinning) {
		/* a spinner never left its CPU: it sees the change at once, or
		 * when the interrupt handlers that hit the spin are done */
		SIM_BUG_ON(s, c->curr != t);
		if (at < t->spin_irq_until)
			at = t->spin_irq_until;
		t->spinning = false;
		c->sys_ns += at - t->spin_start;
		t->state = TS_RUNNABLE;
		queue_resume(s, t, at);
		return;
	}
	if (!c->curr) {
		/* idle exit (or the rest of the idle entry, which then sees
		 * need_resched and does not enter the idle state), then
		 * schedule() in */
		uint64_t start = at >= c->idle_at ? at + sim_jittered(s, (uint64_t)P(s, P_idle_exit_ns))
						  : c->idle_at;
		uint64_t in = sim_jittered(s, sched_half(s));
		s->wd[t->cpu].sched_at = at;
		c->curr = t;
		if (s->cpu_ops)
			s->cpu_ops->switch_to(s, t->cpu, t);
		t->state = TS_RUNNABLE;
		c->sys_ns += in;
		c->slice_start = start + in;
		queue_resume(s, t, c->slice_start);
		return;
	}
	t->state = TS_RUNNABLE;
	t->rq_next = NULL;
	if (c->rq_tail)
		c->rq_tail->rq_next = t;
	else
		c->rq_head = t;
	c->rq_tail = t;
	if (wakeup)
		c->need_resched = true;
	if (s->nr_queued++ == 0)
		slow_path_every_step(s);
	trace_queued(s);
}

/*
 * Migration (sched_setaffinity -> __set_cpus_allowed_ptr, kernel/sched/
 * core.c v5.1: a sleeping task is placed on an allowed CPU when it wakes; a
 * running one is pushed off by the stopper, migration_cpu_stop, which can
 * only run when the task is preemptible).
 */
void sim_migrate(struct sim *s, int cpu)
{
	struct sim_thread *t = s->curr;
	SIM_BUG_ON(s, !t);
	cpu %= s->nr_cpus;
	t->migrate_to = 0;
	if (cpu == t->cpu)
		return;
	/* schedule() out, as a sleep: the old CPU runs its queue or idles */
	if (!s->cpus[t->cpu].rq_head)
		sim_charge_sys(s, sched_half(s));
	uint64_t at = s->now + t->pending_ns;
	sim_trace(s, &tp_sched_migrate, (uint64_t)t->cpu, (uint64_t)cpu);
	t->pending_ns = 0;
	t->state = TS_SLEEPING;
	t->sleep_start = at;
	cpu_pick_next(s, t->cpu, at);
	t->cpu = cpu;
	thread_acct(s, t);
	cpu_enqueue(s, t, at, false);
	switch_away(s);
}

void sim_request_migrate(struct sim *s, struct sim_thread *t, int cpu)
{
	cpu %= s->nr_cpus;
	if (t == s->curr) {
		sim_migrate(s, cpu);
		return;
	}
	if (t->state == TS_SLEEPING && !t->spinning) {
		t->cpu = cpu;
		thread_acct(s, t);
		t->migrate_to = 0;
		return;
	}
	if (t->state != TS_DONE)
		t->migrate_to = cpu + 1;
}

void sim_preempt_point(struct sim *s)
{
	struct sim_thread *t = s->curr;
	if (t && t->migrate_to)
		sim_migrate(s, t->migrate_to - 1);
}

void sim_set_need_resched(struct sim *s, int cpu)
{
	if (s->cpus[cpu].rq_head)
		s->cpus[cpu].need_resched = true;
}

void sim_cond_resched(struct sim *s)
{
	struct sim_thread *t = s->curr;
	if (s->ex || !t)
		return;
	struct sim_cpu *c = &s->cpus[t->cpu];
	if (!c->rq_head)
		return;
	uint64_t slice = (uint64_t)P(s, P_sched_slice_ns);
	if (!c->need_resched &&
	    !(slice && s->now + t->pending_ns - c->slice_start >= slice))
		return;
	preempt(s, t);
}

void sim_wake(struct sim *s, struct sim_thread *t, uint64_t delay_ns)
{
	SIM_BUG_ON(s, t->state != TS_SLEEPING);
	uint64_t at = s->now + sim_jittered(s, delay_ns);
	if (s->curr)
		at += s->curr->pending_ns;	/* the waker's charged time has elapsed */
	cpu_enqueue(s, t, at, true);
}

static void sleep_for_wake(struct sim *s, void *arg, uint64_t data)
{
	(void)data;
	sim_wake(s, arg, 0);
}

void sim_sleep_for(struct sim *s, uint64_t ns)
{
	struct sim_thread *t = s->curr;
	SIM_BUG_ON(s, !t);
	sim_call_at(s, s->now + t->pending_ns + ns, sleep_for_wake, NULL, t, 0);
	sim_sleep(s);
}

void sim_spin_wait(struct sim *s)
{
	struct sim_thread *t = s->curr;
	SIM_BUG_ON(s, !t);
	uint64_t at = s->now + t->pending_ns;
	t->pending_ns = 0;
	t->state = TS_SLEEPING;
	t->spinning = true;
	t->spin_start = at;
	t->spin_irq_until = 0;
	t->sleep_start = at;
	switch_away(s);
}

void sim_spin_to_sleep(struct sim *s, struct sim_thread *t)
{
	SIM_BUG_ON(s, !t->spinning);
	uint64_t at = s->now + (s->curr ? s->curr->pending_ns : 0);
	if (at < t->spin_start)
		at = t->spin_start;
	if (at < t->spin_irq_until)
		at = t->spin_irq_until;
	t->spinning = false;
	s->cpus[t->cpu].sys_ns += at - t->spin_start;
	if (!s->cpus[t->cpu].rq_head) {
		/* schedule() out to the idle task */
		uint64_t out = sim_jittered(s, sched_half(s));
		s->cpus[t->cpu].sys_ns += out;
		at += out;
	}
	t->sleep_start = at;
	cpu_pick_next(s, t->cpu, at);
}

/* ---- threads ---- */
static void thread_trampoline(void *arg)
{
	struct sim_thread *t = arg;
	struct sim *s = t->sim;
	t->fn(s, t);
	softlockup_check(s, t);
	sim_trace(s, &tp_sched_exit, 0, 0);
	/* exit: wake a joiner, release the CPU */
	t->state = TS_DONE;
	if (!t->daemon)
		s->live_threads--;
	uint64_t at = s->now + t->pending_ns;
	t->pending_ns = 0;
	if (at > s->exit_at)
		s->exit_at = at;	/* the run lasts until its last charge elapsed */
	if (t->joiner && t->joiner->state == TS_SLEEPING)
		cpu_enqueue(s, t->joiner, at + (uint64_t)P(s, P_wakeup_ns), true);
	cpu_pick_next(s, t->cpu, at);
	/* returning switches to co.return_to (the scheduler) */
}

void sim_thread_set_daemon(struct sim *s, struct sim_thread *t)
{
	if (t->daemon || t->state == TS_NEW || t->state == TS_DONE)
		return;
	t->daemon = true;
	s->live_threads--;
}

struct sim_thread *sim_thread_alloc(struct sim *s, size_t size)
{
	SIM_BUG_ON(s, size < sizeof(struct sim_thread));
	if (GROW(&s->threads, &s->cap_threads, (size_t)s->nthreads, (size_t)s->nthreads + 1, 16)) {
		sim_fail(s, TLBSIM_ENOMEM, "out of host memory creating a thread");
		return NULL;
	}
	struct sim_thread *t = calloc(1, size);
	if (!t) {
		sim_fail(s, TLBSIM_ENOMEM, "out of host memory creating a thread");
		return NULL;
	}
	t->id = s->nthreads;
	t->sim = s;
	t->state = TS_NEW;
	s->threads[s->nthreads++] = t;
	return t;
}

int sim_thread_start(struct sim *s, struct sim_thread *t, thread_fn fn, void *arg, int cpu,
		     uint64_t start_delay)
{
	SIM_BUG_ON(s, t->state != TS_NEW);
	t->fn = fn;
	t->arg = arg;
	t->cpu = cpu % s->nr_cpus;
	t->mode = MODE_USER;
	thread_acct(s, t);
	t->state = TS_SLEEPING;
	if (sim_host_charge(s, s->stack_size)) {
		t->state = TS_DONE;
		sim_oom(s, "thread stacks");
		return TLBSIM_ENOMEM;
	}
	struct sim_stack_pool *pool = s->stack_pool;
	struct coro_stack st;
	int crc;
	if (pool && pool->n && pool->stack_size == s->stack_size) {
		st = pool->st[--pool->n];
		crc = 0;
	} else {
		crc = coro_stack_map(&st, s->stack_size);
		s->stacks_mapped++;
	}
	if (crc == 0) {
		/* each thread's stack top at another offset in its page: the
		 * threads' hottest frames (the switch path) would otherwise all
		 * fall in the same L1 sets */
		st.skew = coro_stack_skew((unsigned)t->id);
		crc = coro_create_on(&t->co, &st, thread_trampoline, t);
		if (crc)
			coro_stack_unmap(&st);
	}
	if (crc != 0) {
		t->state = TS_DONE;	/* never ran: nothing to destroy */
		sim_fail(s, TLBSIM_ENOMEM, "cannot allocate a coroutine stack");
		return TLBSIM_ENOMEM;
	}
	t->co.return_to = &s->main_co;
	s->live_threads++;
	if (s->ex)
		explore_add_thread(s, t);
	uint64_t at = s->now + (s->curr ? s->curr->pending_ns : 0) + start_delay;
	cpu_enqueue(s, t, at, false);
	return 0;
}

void sim_join(struct sim *s, struct sim_thread *t)
{
	struct sim_thread *me = s->curr;
	if (t->state == TS_DONE)
		return;
	SIM_BUG_ON(s, t->joiner != NULL);
	t->joiner = me;
	sim_sleep(s);
}

/* ---- thread stacks ---- */

/* t's stack back to the pool when there is one with room, else unmapped. */
static void thread_stack_put(struct sim *s, struct sim_thread *t)
{
	struct sim_stack_pool *pool = s->stack_pool;
	if (!pool || (pool->n && pool->stack_size != s->stack_size) ||
	    pool->n == SIM_STACK_POOL_MAX) {
		coro_destroy(&t->co);
		return;
	}
	struct coro_stack st;
	coro_release(&t->co, &st);
	if (!st.base)
		return;
	pool->stack_size = s->stack_size;
	pool->st[pool->n++] = st;
}

void sim_stack_pool_free(struct sim_stack_pool *p)
{
	while (p->n)
		coro_stack_unmap(&p->st[--p->n]);
	if (p->frames.base)
		munmap(p->frames.base, p->frames.bytes);
	p->frames.base = NULL;
	while (p->tables.head) {
		void *t = p->tables.head;
		memcpy(&p->tables.head, t, sizeof(p->tables.head));
		free(t);
	}
	p->tables.n = 0;
	if (p->caches)
		p->caches_free(p->caches);
	p->caches = NULL;
}

/* ---- main loop ---- */

/*
 * sim_jit_amp's one-multiply range. p = jit_pct 0: jit_mul 0, every ns (the
 * amp is 0). p in [1, 99]: M = jit_mul = ceil(p 2^64 / 100) = p 2^64 / 100 +
 * k / 100 with k in [0, 99] (k = 0 if 100 divides p 2^64, else 100 minus
 * its remainder). For ns < jit_lim = UINT64_MAX / 100: ns p < 2^64, so the
 * division's ns p does not wrap; write ns p = 100 a + r, r <= 99; then
 * ns M / 2^64 = a + (r + ns k / 2^64) / 100 with ns k < 2^64, so its floor
 * is a = ns p / 100 exactly. Other p (and ns from jit_lim on): the division.
 */
static void sim_jit_setup(struct sim *s)
{
	uint64_t p = s->jit_pct;
	if (p == 0) {
		s->jit_mul = 0;
		s->jit_lim = UINT64_MAX;
	} else if (p <= 99) {
		s->jit_mul = (uint64_t)((((unsigned __int128)p << 64) + 99) / 100);
		s->jit_lim = UINT64_MAX / 100;
	} else {
		s->jit_mul = 0;
		s->jit_lim = 0;
	}
	/*
	 * The draw's levels: A = floor(p 2^32 / 100), level i of L =
	 * SIM_JIT_LEVELS is -A + 2 A i / (L - 1) (rounded toward zero), so
	 * level 0 is -A and level L - 1 is +A. For p <= 100, |f_i| <= 2^32,
	 * and ns < 2^31 gives |ns f_i| < 2^63. Costs below jit_min = ceil(100
	 * / p) would move by less than 1 ns: exact, as sim_jit_amp's 0 says.
	 * Larger p (not accepted from the command line) and p 0 (exact and
	 * check mode): no fast path.
	 */
	s->jit_lazy = 0;
	if (p == 0) {
		s->jit_min = UINT64_MAX;
		s->jit_span = 0;
		return;
	}
	if (p > 100) {
		s->jit_min = 1;
		s->jit_span = 0;
		return;
	}
	/* the levels are computed at the first draw (jit_levels): a check
	 * schedule sets jit_pct to 0 before any (sim_set_explore), and
	 * computing them for each of its sims was 3 % of a small check's host
	 * time. Until then jit_min 0 and jit_span 0 send every draw to
	 * sim_jittered_slow, which computes them first. */
	s->jit_min = 0;
	s->jit_span = 0;
	s->jit_lazy = 1;
}

/* The levels of sim_jit_setup, at the first draw that needs them. */
static void jit_levels(struct sim *s)
{
	const uint64_t p = s->jit_pct;
	s->jit_lazy = 0;
	s->jit_min = (100 + p - 1) / p;
	s->jit_span = (1ull << 31) - s->jit_min;
	int64_t a = (int64_t)((p << 32) / 100);
	for (int i = 0; i < SIM_JIT_LEVELS; i++)
		s->jit_tab[i] = -a + (2 * a * i) / (SIM_JIT_LEVELS - 1);
}

/* Costs from 2^31 ns on (and every cost for p > 100): uniform in [ns -
 * amp, ns + amp], amp = ns p / 100, from 32 bits of the jitter stream. */
uint64_t sim_jittered_slow(struct sim *s, uint64_t ns)
{
	if (__builtin_expect(s->jit_lazy, 0)) {
		jit_levels(s);
		return sim_jittered(s, ns);
	}
	uint64_t amp = sim_jit_amp(s, ns);
	if (!amp)
		return ns;
	uint64_t r = sim_jit_next(s) >> 32;
	uint64_t off = (uint64_t)(((unsigned __int128)(2 * amp + 1) * r) >> 32);
	return ns - amp + off;
}

void sim_set_explore(struct sim *s, struct explore *ex)
{
	s->ex = ex;
	s->jit_pct = ex ? 0 : s->jitter_pct;
	sim_jit_setup(s);
	/* check mode takes sim_step_slow at every step */
	s->slow_countdown = 1;
}

/* Run one event: a callback, or a thread until its next switch. */
void sim_dispatch(struct sim *s, const struct event *ev)
{
	s->m.events++;
	if (ev->kind == EV_CALL) {
		ev->fn(s, ev->ptr, ev->data);
		return;
	}
	struct sim_thread *t = ev->ptr;
	t->state = TS_RUNNING;
	s->curr = t;
	coro_switch(&s->main_co, &t->co);
	/* the thread that switched back: t, or one that t (or a successor)
	 * handed the host to directly (switch_away) */
	t = s->curr;
	s->curr = NULL;
	s->last_ran = t;
	if (t->state == TS_DONE) {
		thread_stack_put(s, t);
		sim_host_release(s, s->stack_size);
	}
}

int sim_run(struct sim *s)
{
	if (s->ex)
		return explore_run(s);
	SIM_BUG_ON(s, s->sched != &sched_time_ordered);	/* sim_step_arg inlines it */
	if (s->trace && s->trace->from > s->now)
		sim_call_at(s, s->trace->from, trace_window_open, NULL, NULL, 0);
	while (!evq_empty(&s->q) && !s->error && !s->stopped) {
		struct event ev = evq_heap_pop(&s->q);
		if (ev.kind == EV_CALL && ev.fn == trace_window_open && !s->live_threads)
			continue;	/* the run is over: time does not move on */
		SIM_BUG_ON(s, ev.time < s->now);
		s->now = ev.time;
		sim_dispatch(s, &ev);
		if (__builtin_expect((s->m.events & SIM_POLL_MASK) == 0, 0))
			sim_poll(s);
	}
	if (s->error)
		return s->error;
	if (s->stopped)
		return 0;
	if (s->live_threads > 0) {
		sim_fail_deadlock(s);
		return s->error;
	}
	return 0;
}

void sim_fail_deadlock(struct sim *s)
{
	char where[TLBSIM_ERRLEN] = "";
	int err = TLBSIM_EINTERNAL;
	if (s->deadlock_where)
		err = s->deadlock_where(s, s->deadlock_arg, where, sizeof(where));
	sim_fail(s, err, "deadlock: %d simulated threads asleep forever%s", s->live_threads, where);
}

uint64_t sim_elapsed_until(const struct sim *s)
{
	uint64_t t = s->now > s->exit_at ? s->now : s->exit_at;
	return t > s->steal_until ? t : s->steal_until;
}

uint64_t sim_charged_until(const struct sim *s)
{
	uint64_t t = sim_elapsed_until(s);
	for (uint32_t i = 0; i < evq_count(&s->q); i++) {
		struct event ev = evq_at(&s->q, i);
		if (ev.kind != EV_RESUME)
			continue;
		const struct sim_thread *th = ev.ptr;
		if (ev.time + th->pending_ns > t)
			t = ev.time + th->pending_ns;
	}
	return t;
}

int sim_init(struct sim *s, int nr_cpus, const int64_t *params, uint64_t seed)
{
	memset(s, 0, sizeof(*s));
	s->nr_cpus = nr_cpus;
	memcpy(s->p, params, sizeof(s->p));
	s->sched = &sched_time_ordered;
	s->stack_size = 128 * 1024;
	s->slow_countdown = 1;
	s->poll_at = SIM_POLL_PERIOD;
	evq_init(&s->q);
	rng_seed(&s->rng, seed);
	s->jitter_pct = (uint32_t)params[P_jitter];
	s->jit_pct = s->jitter_pct;
	sim_jit_setup(s);
	/* splitmix64 of the seed: a non-zero xorshift state apart from rng */
	uint64_t z = seed + 0x9E3779B97F4A7C15ull * 3;
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	s->jit_state = (z ^ (z >> 31)) | 1;
	coro_init_main(&s->main_co);
	s->cpus = calloc((size_t)nr_cpus, sizeof(*s->cpus));
	s->wd = calloc((size_t)nr_cpus, sizeof(*s->wd));
	if (!s->cpus || !s->wd)
		return TLBSIM_ENOMEM;
	for (int c = 0; c < nr_cpus; c++)
		s->wd[c].counted_since = ~0ull;
	return 0;
}

static void drop_pending(struct sim *s, const struct event *e, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (e[i].kind == EV_CALL && e[i].drop)
			e[i].drop(s, e[i].ptr, e[i].data);
}

void sim_destroy(struct sim *s)
{
	for (uint32_t i = 0; i < evq_count(&s->q); i++) {
		struct event ev = evq_at(&s->q, i);
		drop_pending(s, &ev, 1);
	}
	drop_pending(s, s->q.ready, s->q.nready);
	for (int i = 0; i < s->nthreads; i++) {
		struct sim_thread *t = s->threads[i];
		if (t->state != TS_DONE && t->state != TS_NEW)
			thread_stack_put(s, t);
		free(t);
	}
	free(s->threads);
	free(s->cpus);
	free(s->wd);
	s->wd = NULL;
	evq_free(&s->q);
	s->threads = NULL;
	s->cpus = NULL;
	s->nthreads = 0;
}
