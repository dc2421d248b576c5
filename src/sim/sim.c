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

static void ready_push(struct sim *s, struct event ev)
{
	ev.seq = ++s->seq;
	if (evq_ready_push(&s->q, &ev))
		sim_oom(s, "the ready list");
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

static void queue_resume(struct sim *s, struct sim_thread *t, uint64_t time)
{
	struct event ev = {.time = time, .kind = EV_RESUME, .ptr = t};
	if (s->ex)
		ready_push(s, ev);
	else
		heap_push(s, ev);
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
void sim_charge(struct sim *s, uint64_t ns)
{
	struct sim_thread *t = s->curr;
	if (!t)
		return;
	struct sim_cpu *c = &s->cpus[t->cpu];
	if (t->mode == MODE_USER)
		c->user_ns += ns;
	else
		c->sys_ns += ns;
	t->pending_ns += ns;
}

void sim_charge_sys(struct sim *s, uint64_t ns)
{
	struct sim_thread *t = s->curr;
	if (!t)
		return;
	s->cpus[t->cpu].sys_ns += ns;
	t->pending_ns += ns;
}

void sim_set_mode(struct sim *s, enum cpu_mode mode)
{
	if (s->curr)
		s->curr->mode = mode;
}

void sim_steal(struct sim *s, int cpu, uint64_t ns)
{
	struct sim_cpu *c = &s->cpus[cpu];
	c->sys_ns += ns;
	if (c->curr && c->curr->state != TS_SLEEPING)
		c->curr->pending_ns += ns;
}

bool sim_cpu_idle(struct sim *s, int cpu)
{
	return s->cpus[cpu].curr == NULL;
}

/* ---- trace ---- */
void sim_trace_rec(struct sim *s, const struct sim_point *pt, uint64_t a, uint64_t b)
{
	struct trace_buf *tb = s->trace;
	if (GROW(&tb->r, &tb->cap, tb->n, (size_t)tb->n + 1, 1024))
		return;		/* the trace is a diagnostic: drop, never fail */
	struct sim_thread *t = s->curr;
	struct trace_rec *r = &tb->r[tb->n++];
	r->step = s->steps;
	r->time = s->now;
	r->cpu = (int16_t)(t ? t->cpu : -1);
	r->tid = (int16_t)(t ? t->id : -1);
	r->pt = pt;
	r->a = a;
	r->b = b;
}

/* ---- stopping a long run ---- */
static void sim_poll(struct sim *s)
{
	int sig = s->interrupted ? s->interrupted(s->interrupted_ctx) : 0;
	if (sig) {
		s->stopped = SIM_STOP_SIGNAL;
		s->stop_signal = sig;
	} else if (s->deadline_host_ns && sim_host_ns() >= s->deadline_host_ns)
		s->stopped = SIM_STOP_TIME_LIMIT;
}

/* ---- switching ---- */

/* Run mode, every SIM_POLL_PERIOD steps (every step while tracing): record
 * the trace, look at the stop flag and the host clock, and stop the run at
 * this event boundary if asked: the time charged so far has elapsed and the
 * thread is never resumed. */
static void sim_step_slow(struct sim *s, struct sim_thread *t, const struct sim_point *yp,
			  uint64_t a, uint64_t b)
{
	uint32_t period = s->trace ? 1 : SIM_POLL_PERIOD;
	s->slow_countdown = period;
	sim_trace(s, yp, a, b);
	s->steps += period;
	if (s->trace && (s->steps & SIM_POLL_MASK))
		return;
	sim_poll(s);
	if (!s->stopped)
		return;
	s->now += t->pending_ns;
	t->pending_ns = 0;
	t->state = TS_SLEEPING;
	for (;;)
		switch_to_scheduler(s);
}

void sim_step_arg(struct sim *s, const struct sim_point *yp, uint64_t cost_ns, uint64_t a,
		  uint64_t b)
{
	struct sim_thread *t = s->curr;
	SIM_BUG_ON(s, !t);
	if (cost_ns)
		sim_charge(s, cost_ns);
	if (s->ex) {
		/* check mode: one global clock, order chosen by the strategy */
		s->now += t->pending_ns;
		t->pending_ns = 0;
		sim_trace(s, yp, a, b);
		if (!explore_yield(s, t, yp))
			return;
	} else {
		if (__builtin_expect(--s->slow_countdown == 0, 0))
			sim_step_slow(s, t, yp, a, b);
		if (!s->sched->yield(s, t, yp))
			return;
	}
	queue_resume(s, t, s->now + t->pending_ns);
	t->pending_ns = 0;
	t->state = TS_RUNNABLE;
	switch_to_scheduler(s);
}

/* CPU cpu has nothing to run: go idle (the machine decides what that means,
 * e.g. x86 lazy TLB). */
static void cpu_pick_next(struct sim *s, int cpu, uint64_t at)
{
	struct sim_cpu *c = &s->cpus[cpu];
	struct sim_thread *n = c->rq_head;
	if (!n) {
		c->curr = NULL;
		if (s->cpu_ops)
			s->cpu_ops->switch_to(s, cpu, NULL);
		return;
	}
	c->rq_head = n->rq_next;
	if (!c->rq_head)
		c->rq_tail = NULL;
	n->rq_next = NULL;
	c->curr = n;
	if (s->cpu_ops)
		s->cpu_ops->switch_to(s, cpu, n);
	c->sys_ns += (uint64_t)P(s, P_ctx_switch_ns);
	n->state = TS_RUNNABLE;
	queue_resume(s, n, at + (uint64_t)P(s, P_ctx_switch_ns));
}

void sim_sleep(struct sim *s)
{
	struct sim_thread *t = s->curr;
	SIM_BUG_ON(s, !t);
	/* time charged so far elapses before the thread sleeps */
	uint64_t at = s->now + t->pending_ns;
	sim_trace(s, &tp_sched_sleep, 0, 0);
	t->pending_ns = 0;
	t->state = TS_SLEEPING;
	t->sleep_start = at;
	cpu_pick_next(s, t->cpu, at);
	switch_to_scheduler(s);
}

static void cpu_enqueue(struct sim *s, struct sim_thread *t, uint64_t at)
{
	struct sim_cpu *c = &s->cpus[t->cpu];
	/* a thread never resumes before the time it went to sleep or spin
	 * (its own charged time may run ahead of the waker's clock) */
	if (at < t->sleep_start)
		at = t->sleep_start;
	if (t->spinning) {
		/* a spinner never left its CPU: it sees the change at once */
		SIM_BUG_ON(s, c->curr != t);
		t->spinning = false;
		c->sys_ns += at - t->spin_start;
		t->state = TS_RUNNABLE;
		queue_resume(s, t, at);
		return;
	}
	if (!c->curr) {
		uint64_t delay = (uint64_t)P(s, P_idle_exit_ns);
		c->curr = t;
		if (s->cpu_ops)
			s->cpu_ops->switch_to(s, t->cpu, t);
		t->state = TS_RUNNABLE;
		queue_resume(s, t, at + delay);
		return;
	}
	t->state = TS_RUNNABLE;
	t->rq_next = NULL;
	if (c->rq_tail)
		c->rq_tail->rq_next = t;
	else
		c->rq_head = t;
	c->rq_tail = t;
}

void sim_wake(struct sim *s, struct sim_thread *t, uint64_t delay_ns)
{
	SIM_BUG_ON(s, t->state != TS_SLEEPING);
	uint64_t at = s->now + delay_ns;
	if (s->curr)
		at += s->curr->pending_ns;	/* the waker's charged time has elapsed */
	cpu_enqueue(s, t, at);
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
	t->sleep_start = at;
	switch_to_scheduler(s);
}

void sim_spin_to_sleep(struct sim *s, struct sim_thread *t)
{
	SIM_BUG_ON(s, !t->spinning);
	uint64_t at = s->now + (s->curr ? s->curr->pending_ns : 0);
	if (at < t->spin_start)
		at = t->spin_start;
	t->spinning = false;
	s->cpus[t->cpu].sys_ns += at - t->spin_start;
	cpu_pick_next(s, t->cpu, at);
}

/* ---- threads ---- */
static void thread_trampoline(void *arg)
{
	struct sim_thread *t = arg;
	struct sim *s = t->sim;
	t->fn(s, t);
	sim_trace(s, &tp_sched_exit, 0, 0);
	/* exit: wake a joiner, release the CPU */
	t->state = TS_DONE;
	s->live_threads--;
	uint64_t at = s->now + t->pending_ns;
	t->pending_ns = 0;
	if (t->joiner && t->joiner->state == TS_SLEEPING)
		cpu_enqueue(s, t->joiner, at + (uint64_t)P(s, P_wakeup_ns));
	cpu_pick_next(s, t->cpu, at);
	/* returning switches to co.return_to (the scheduler) */
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
	t->state = TS_SLEEPING;
	if (sim_host_charge(s, s->stack_size)) {
		t->state = TS_DONE;
		sim_oom(s, "thread stacks");
		return TLBSIM_ENOMEM;
	}
	if (coro_create(&t->co, s->stack_size, thread_trampoline, t) != 0) {
		t->state = TS_DONE;	/* never ran: nothing to destroy */
		sim_fail(s, TLBSIM_ENOMEM, "cannot allocate a coroutine stack");
		return TLBSIM_ENOMEM;
	}
	t->co.return_to = &s->main_co;
	s->live_threads++;
	if (s->ex)
		explore_add_thread(s, t);
	uint64_t at = s->now + (s->curr ? s->curr->pending_ns : 0) + start_delay;
	cpu_enqueue(s, t, at);
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

/* ---- main loop ---- */

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
	s->curr = NULL;
	if (t->state == TS_DONE) {
		coro_destroy(&t->co);
		sim_host_release(s, s->stack_size);
	}
}

int sim_run(struct sim *s)
{
	if (s->ex)
		return explore_run(s);
	while (s->q.nheap > 0 && !s->error && !s->stopped) {
		struct event ev = evq_heap_pop(&s->q);
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
		sim_fail(s, TLBSIM_EINTERNAL, "deadlock: %d simulated threads asleep forever",
			 s->live_threads);
		return s->error;
	}
	return 0;
}

uint64_t sim_charged_until(const struct sim *s)
{
	uint64_t t = s->now;
	for (uint32_t i = 0; i < s->q.nheap; i++) {
		const struct event *ev = &s->q.heap[i];
		if (ev->kind != EV_RESUME)
			continue;
		const struct sim_thread *th = ev->ptr;
		if (ev->time + th->pending_ns > t)
			t = ev->time + th->pending_ns;
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
	rng_seed(&s->rng, seed);
	coro_init_main(&s->main_co);
	s->cpus = calloc((size_t)nr_cpus, sizeof(*s->cpus));
	if (!s->cpus)
		return TLBSIM_ENOMEM;
	for (int i = 0; i < nr_cpus; i++)
		s->cpus[i].id = i;
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
	drop_pending(s, s->q.heap, s->q.nheap);
	drop_pending(s, s->q.ready, s->q.nready);
	for (int i = 0; i < s->nthreads; i++) {
		struct sim_thread *t = s->threads[i];
		if (t->state != TS_DONE && t->state != TS_NEW)
			coro_destroy(&t->co);
		free(t);
	}
	free(s->threads);
	free(s->cpus);
	evq_free(&s->q);
	s->threads = NULL;
	s->cpus = NULL;
	s->nthreads = 0;
}
