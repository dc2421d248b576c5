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
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/explore.h"
#include "sim/grow.h"
#include "sim/sim.h"

static const char *const yp_names[YP_COUNT] = {
#define X(e, s) s,
	TLBSIM_YIELD_POINTS(X)
#undef X
};

const char *yield_point_name(enum yield_point yp)
{
	return (unsigned)yp < YP_COUNT ? yp_names[yp] : "?";
}

/* ---- PRNG: xoshiro256** seeded by splitmix64 ---- */
static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void rng_seed(struct rng *r, uint64_t seed)
{
	uint64_t x = seed;
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&x);
}

static inline uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t rng_next(struct rng *r)
{
	uint64_t *s = r->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

uint64_t rng_below(struct rng *r, uint64_t n)
{
	if (n == 0)
		return 0;
	/* Lemire's multiply-shift; the tiny bias is irrelevant here and it
	 * is deterministic. */
	return (uint64_t)(((unsigned __int128)rng_next(r) * n) >> 64);
}

/* ---- event heap ---- */
static inline bool ev_before(const struct event *a, const struct event *b)
{
	return a->time < b->time || (a->time == b->time && a->seq < b->seq);
}

static void heap_push(struct sim *s, struct event ev)
{
	if (GROW(&s->heap, &s->cap_heap, s->nheap, (size_t)s->nheap + 1, 256))
		sim_bug(s, __FILE__, __LINE__, "event heap allocation failed");
	ev.seq = s->seq++;
	uint32_t i = s->nheap++;
	while (i > 0) {
		uint32_t parent = (i - 1) / 2;
		if (!ev_before(&ev, &s->heap[parent]))
			break;
		s->heap[i] = s->heap[parent];
		i = parent;
	}
	s->heap[i] = ev;
}

static struct event heap_pop(struct sim *s)
{
	struct event top = s->heap[0];
	struct event last = s->heap[--s->nheap];
	uint32_t i = 0, n = s->nheap;
	for (;;) {
		uint32_t l = 2 * i + 1, r = l + 1, m = i;
		const struct event *best = &last;
		if (l < n && ev_before(&s->heap[l], best)) {
			m = l;
			best = &s->heap[l];
		}
		if (r < n && ev_before(&s->heap[r], best))
			m = r;
		if (m == i)
			break;
		s->heap[i] = s->heap[m];
		i = m;
	}
	if (n > 0)
		s->heap[i] = last;
	return top;
}

static void ready_push(struct sim *s, struct event ev)
{
	if (GROW(&s->ready.e, &s->ready.cap, s->ready.n, (size_t)s->ready.n + 1, 16))
		sim_bug(s, __FILE__, __LINE__, "ready list allocation failed");
	ev.seq = ++s->seq;
	s->ready.e[s->ready.n++] = ev;
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
void sim_fail(struct sim *s, int err, const char *fmt, ...)
{
	if (s->error)
		return;
	s->error = err;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(s->errmsg, sizeof(s->errmsg), fmt, ap);
	va_end(ap);
}

void sim_bug(struct sim *s, const char *file, int line, const char *what)
{
	fprintf(stderr, "tlbsim: internal error at %s:%d: %s (sim time %llu ns, seed replay: "
		"same command)\n", file, line, what, (unsigned long long)s->now);
	abort();
}

static const char *const inv_names[INV_COUNT] = {
#define X(e, n, d) n,
	TLBSIM_INVARIANTS(X)
#undef X
};
static const char *const inv_descs[INV_COUNT] = {
#define X(e, n, d) d,
	TLBSIM_INVARIANTS(X)
#undef X
};

const char *inv_name(int kind)
{
	return kind >= 0 && kind < INV_COUNT ? inv_names[kind] : "?";
}

const char *inv_desc(int kind)
{
	return kind >= 0 && kind < INV_COUNT ? inv_descs[kind] : "?";
}

void describe_flush(const struct sim *s, const struct flush_note *f, char *buf, size_t len);

void sim_violation(struct sim *s, enum inv_id kind, int cpu, uint64_t va, uint32_t frame,
		   const char *entry, const char *fmt, ...)
{
	s->m.violations++;
	bool wanted = !s->ex || s->ex->want_kind < 0 || s->ex->want_kind == (int)kind;
	if (s->first_violation.kind < 0 && wanted) {
		struct violation_rec *v = &s->first_violation;
		v->kind = kind;
		v->cpu = cpu;
		v->tid = s->curr ? s->curr->id : -1;
		v->va = va;
		v->frame = frame;
		v->time = s->now;
		v->step = s->ex ? s->ex->steps : 0;
		snprintf(v->entry, sizeof(v->entry), "%s", entry ? entry : "");
		if (s->curr)
			describe_flush(s, &s->curr->last_flush, v->flush, sizeof(v->flush));
		else
			snprintf(v->flush, sizeof(v->flush), "(freed outside a thread)");
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(v->text, sizeof(v->text), fmt, ap);
		va_end(ap);
	}
	if (s->ex) {
		explore_trace(s, TR_VIOLATION, (uint64_t)kind, va);
		if (wanted)
			s->ex->stop = true;
	}
}

/* ---- time-ordered strategy ---- */
static bool time_ordered_yield(struct sim *s, struct sim_thread *t, enum yield_point yp)
{
	(void)yp;
	uint64_t wake = s->now + t->pending_ns;
	/* Keep running if we would be the next event anyway: an event already
	 * queued at the same time was queued first and wins the tie. */
	if (s->nheap == 0 || wake < s->heap[0].time) {
		s->now = wake;
		t->pending_ns = 0;
		return false;
	}
	return true;
}

const struct sched_ops sched_time_ordered = {
	.name = "time",
	.yield = time_ordered_yield,
};

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

/* ---- switching ---- */
static void switch_to_scheduler(struct sim *s)
{
	struct sim_thread *t = s->curr;
	coro_switch(&t->co, &s->main_co);
}

void sim_step_arg(struct sim *s, enum yield_point yp, uint64_t cost_ns, uint64_t a, uint64_t b)
{
	struct sim_thread *t = s->curr;
	SIM_BUG_ON(s, !t);
	if (cost_ns)
		sim_charge(s, cost_ns);
	if (s->ex) {
		/* check mode: one global clock, order chosen by the strategy */
		s->now += t->pending_ns;
		t->pending_ns = 0;
		explore_trace(s, yp, a, b);
		if (!explore_yield(s, t, yp))
			return;
	} else if (!s->sched->yield(s, t, yp)) {
		return;
	}
	queue_resume(s, t, s->now + t->pending_ns);
	t->pending_ns = 0;
	t->state = TS_RUNNABLE;
	switch_to_scheduler(s);
}

void sim_step(struct sim *s, enum yield_point yp, uint64_t cost_ns)
{
	sim_step_arg(s, yp, cost_ns, 0, 0);
}

/* CPU cpu has nothing to run: go idle (lazy TLB on x86). */
static void cpu_pick_next(struct sim *s, int cpu, uint64_t at)
{
	struct sim_cpu *c = &s->cpus[cpu];
	struct sim_thread *n = c->rq_head;
	if (!n) {
		c->curr = NULL;
		s->arch->enter_lazy_tlb(s, cpu);
		return;
	}
	c->rq_head = n->rq_next;
	if (!c->rq_head)
		c->rq_tail = NULL;
	n->rq_next = NULL;
	c->curr = n;
	s->arch->switch_mm(s, cpu, n->mm);
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
		s->arch->switch_mm(s, t->cpu, t->mm);
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

void *sim_obj_alloc(struct sim *s, size_t size)
{
	if (GROW(&s->objs, &s->cap_objs, s->nobjs, (size_t)s->nobjs + 1, 64))
		sim_bug(s, __FILE__, __LINE__, "out of host memory for kernel objects");
	void *p = calloc(1, size);
	if (!p)
		sim_bug(s, __FILE__, __LINE__, "out of host memory for kernel objects");
	s->objs[s->nobjs++] = p;
	return p;
}

/* ---- threads ---- */
static void thread_trampoline(void *arg)
{
	struct sim_thread *t = arg;
	struct sim *s = t->sim;
	t->fn(s, t);
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

struct sim_thread *sim_thread_create(struct sim *s, thread_fn fn, void *arg, uint64_t arg2,
				     struct mm_struct *mm, int cpu, uint64_t start_delay)
{
	if (GROW(&s->threads, &s->cap_threads, (size_t)s->nthreads, (size_t)s->nthreads + 1, 16)) {
		sim_fail(s, TLBSIM_ENOMEM, "out of memory creating thread");
		return NULL;
	}
	struct sim_thread *t = calloc(1, sizeof(*t));
	if (!t) {
		sim_fail(s, TLBSIM_ENOMEM, "out of memory creating thread");
		return NULL;
	}
	t->id = s->nthreads;
	t->fn = fn;
	t->arg = arg;
	t->arg2 = arg2;
	t->mm = mm;
	t->cpu = cpu % s->nr_cpus;
	t->mode = MODE_USER;
	t->state = TS_SLEEPING;
	if (coro_create(&t->co, s->stack_size, thread_trampoline, t) != 0) {
		free(t);
		sim_fail(s, TLBSIM_ENOMEM, "cannot allocate a coroutine stack");
		return NULL;
	}
	t->co.return_to = &s->main_co;
	t->sim = s;
	s->threads[s->nthreads++] = t;
	s->live_threads++;
	if (s->ex)
		explore_add_thread(s, t);
	uint64_t at = s->now + (s->curr ? s->curr->pending_ns : 0) + start_delay;
	cpu_enqueue(s, t, at);
	return t;
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
	if (t->state == TS_DONE)
		coro_destroy(&t->co);
}

int sim_run(struct sim *s)
{
	if (s->ex)
		return explore_run(s);
	while (s->nheap > 0 && !s->error) {
		struct event ev = heap_pop(s);
		SIM_BUG_ON(s, ev.time < s->now);
		s->now = ev.time;
		sim_dispatch(s, &ev);
	}
	if (s->error)
		return s->error;
	if (s->live_threads > 0) {
		sim_fail(s, TLBSIM_EINTERNAL, "deadlock: %d simulated threads asleep forever",
			 s->live_threads);
		return s->error;
	}
	return 0;
}

int sim_init(struct sim *s, const struct tlbsim_profile *prof, int nr_cpus,
	     const int64_t *params, const struct tlbsim_policy *pol, uint64_t seed)
{
	memset(s, 0, sizeof(*s));
	s->profile = prof;
	s->arch = prof->arch == ARCH_X86_64 ? &arch_x86_64_ops : &arch_arm64_ops;
	s->nr_cpus = nr_cpus;
	memcpy(s->p, params, sizeof(s->p));
	s->policy = *pol;
	s->sched = &sched_time_ordered;
	s->stack_size = 128 * 1024;
	s->next_ctx_id = 1;
	s->first_violation.kind = -1;
	s->cpumask_words = (uint32_t)((nr_cpus + 63) / 64);
	rng_seed(&s->rng, seed);
	coro_init_main(&s->main_co);
	s->cpus = calloc((size_t)nr_cpus, sizeof(*s->cpus));
	if (!s->cpus)
		return TLBSIM_ENOMEM;
	for (int i = 0; i < nr_cpus; i++)
		s->cpus[i].id = i;
	return hw_init(s, nr_cpus, prof->page_shift, prof->arch == ARCH_X86_64);
}

void sim_destroy(struct sim *s)
{
	for (uint32_t i = 0; i < s->nheap; i++)
		if (s->heap[i].kind == EV_CALL && s->heap[i].drop)
			s->heap[i].drop(s, s->heap[i].ptr, s->heap[i].data);
	for (uint32_t i = 0; i < s->ready.n; i++)
		if (s->ready.e[i].kind == EV_CALL && s->ready.e[i].drop)
			s->ready.e[i].drop(s, s->ready.e[i].ptr, s->ready.e[i].data);
	for (int i = 0; i < s->nthreads; i++) {
		struct sim_thread *t = s->threads[i];
		if (t->state != TS_DONE)
			coro_destroy(&t->co);
		free(t->gather_pages);
		free(t);
	}
	free(s->threads);
	for (int i = 0; i < s->nr_mms; i++)
		mm_destroy(s, &s->mms[i]);
	free(s->mms);
	for (uint32_t i = 0; i < s->nshm; i++)
		free(s->all_shm[i]->pages);
	free(s->all_shm);
	for (uint32_t i = 0; i < s->nobjs; i++)
		free(s->objs[i]);
	free(s->objs);
	hw_destroy(s);
	free(s->cpus);
	free(s->heap);
	free(s->ready.e);
	memset(s, 0, sizeof(*s));
}
