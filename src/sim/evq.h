/*
 * evq.h - the engine's queue of pending entities.
 *
 * Time-ordered mode: heaps ordered by (time, seq), seq being the insertion
 * counter, so equal times run in queueing order (the order is total, so
 * how the pending events are stored does not change which one runs next).
 * Check mode: an unordered ready list; the exploration strategy picks.
 * Events are copied in and out: nothing points into the arrays (grow.h).
 */
#ifndef TLBSIM_EVQ_H
#define TLBSIM_EVQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sim;
struct sim_thread;
enum ev_kind { EV_RESUME, EV_CALL };
typedef void (*ev_fn)(struct sim *s, void *arg, uint64_t data);

struct event {
	uint64_t time;
	uint64_t seq;
	enum ev_kind kind;
	void *ptr;		/* EV_RESUME: the thread; EV_CALL: fn's argument */
	ev_fn fn;
	ev_fn drop;		/* called instead of fn if the sim is destroyed first */
	uint64_t data;
	uint8_t entity;		/* check mode: sim_call_entity's weight class (0: not one) */
	int32_t prio;		/* check mode, an entity: its pct priority, drawn once
				 * when queued (explore_entity_prio) */
};

/* A resume: 24 bytes, so a sift moves little (thread events are the bulk). */
struct evq_node {
	uint64_t time;
	uint64_t seq;
	struct sim_thread *t;
};

/* Two binary min-heaps on (time, seq): thread resumes, and callbacks (rare,
 * but many sit far in the future, e.g. RCU grace periods, and would deepen
 * the resume heap). The next event is the earlier of the two tops, so the
 * order is exactly one heap's. */
struct evq {
	struct evq_node *heap;	/* EV_RESUME */
	uint32_t nheap;
	size_t cap_heap;
	struct event *calls;	/* EV_CALL */
	uint32_t ncalls;
	size_t cap_calls;
	struct event *ready;	/* check mode */
	uint32_t nready;
	size_t cap_ready;
	/* the earlier of the two tops' times, UINT64_MAX when both heaps are
	 * empty (evq_init): a step's fast path compares with it alone */
	uint64_t top_time;
	/* calls[0].time, UINT64_MAX when there is no callback: whether a
	 * resume is next is then one compare of times (evq_resume_next) */
	uint64_t calls_top;
};

/* (time, seq) as one 128-bit key: the same lexicographic order, compared
 * without branches */
#define EVQ_KEY(a) (((unsigned __int128)(a)->time << 64) | (a)->seq)
#define EVQ_BEFORE(a, b) (EVQ_KEY(a) < EVQ_KEY(b))

int evq_heap_grow(struct evq *q);
int evq_calls_grow(struct evq *q);

static inline bool evq_empty(const struct evq *q)
{
	return q->nheap == 0 && q->ncalls == 0;
}
static inline uint32_t evq_count(const struct evq *q)
{
	return q->nheap + q->ncalls;
}
/* Time of the next event (the queue is not empty). */
static inline uint64_t evq_top_time(const struct evq *q)
{
	return q->top_time;
}
/* top_time from the two tops, after the top of either heap changed */
static inline void evq_retop(struct evq *q)
{
	uint64_t h = q->nheap ? q->heap[0].time : UINT64_MAX;
	uint64_t c = q->calls_top;
	q->top_time = h < c ? h : c;
}
static inline void evq_init(struct evq *q)
{
	q->top_time = UINT64_MAX;
	q->calls_top = UINT64_MAX;
}
/* Is the next event the resume heap's top? In (time, seq) order: a
 * callback before it, or none queued, says no. A top strictly before
 * calls_top is before every callback; only a tie needs the seqs. */
static inline bool evq_resume_next(const struct evq *q)
{
	if (!q->nheap)
		return false;
	if (q->heap[0].time < q->calls_top)
		return true;
	return !q->ncalls || !EVQ_BEFORE(&q->calls[0], &q->heap[0]);
}
/* Pending event i (0 <= i < evq_count()), in no particular order. */
static inline struct event evq_at(const struct evq *q, uint32_t i)
{
	if (i >= q->nheap)
		return q->calls[i - q->nheap];
	const struct evq_node *n = &q->heap[i];
	return (struct event){.time = n->time, .seq = n->seq, .kind = EV_RESUME, .ptr = n->t};
}

#define EVQ_SIFT_UP(arr, i, x)                                  \
	do {                                                    \
		while (i > 0) {                                 \
			uint32_t parent_ = (i - 1) / 2;         \
			if (!EVQ_BEFORE(&(x), &(arr)[parent_]))  \
				break;                          \
			(arr)[i] = (arr)[parent_];              \
			i = parent_;                            \
		}                                               \
		(arr)[i] = (x);                                 \
	} while (0)

/* Fill the hole at the root with `last`: each level moves the earlier child
 * up while it is before `last`. Keys are unique (seq), so each level picks
 * the same minimum of (last, left, right) as a three-way compare would:
 * the array's layout, and so evq_at's order, is unchanged. */
#define EVQ_SIFT_DOWN(arr, n, last)                                          \
	do {                                                                 \
		uint32_t i_ = 0, c_;                                         \
		unsigned __int128 k_ = EVQ_KEY(&(last));                     \
		while ((c_ = 2 * i_ + 1) < (n)) {                            \
			if (c_ + 1 < (n) && EVQ_BEFORE(&(arr)[c_ + 1], &(arr)[c_])) \
				c_++;                                        \
			if (!(EVQ_KEY(&(arr)[c_]) < k_))                     \
				break;                                       \
			(arr)[i_] = (arr)[c_];                               \
			i_ = c_;                                             \
		}                                                            \
		if ((n) > 0)                                                 \
			(arr)[i_] = (last);                                  \
	} while (0)

/* A thread's resume at (time, seq): 0, or -1 when the host allocation fails */
static inline int evq_resume_push(struct evq *q, uint64_t time, uint64_t seq, struct sim_thread *t)
{
	if (q->nheap == q->cap_heap && evq_heap_grow(q))
		return -1;
	struct evq_node *h = q->heap;
	uint32_t i = q->nheap++;
	/* EVQ_SIFT_UP's moves, times compared first */
	while (i > 0) {
		uint32_t p = (i - 1) / 2;
		if (h[p].time < time || (h[p].time == time && h[p].seq < seq))
			break;
		h[i] = h[p];
		i = p;
	}
	h[i] = (struct evq_node){.time = time, .seq = seq, .t = t};
	if (time < q->top_time)
		q->top_time = time;
	return 0;
}

/* 0, or -1 when the host allocation fails */
static inline int evq_heap_push(struct evq *q, const struct event *evp)
{
	if (evp->kind == EV_CALL) {
		if (q->ncalls == q->cap_calls && evq_calls_grow(q))
			return -1;
		struct event ev = *evp;
		uint32_t i = q->ncalls++;
		EVQ_SIFT_UP(q->calls, i, ev);
		if (ev.time < q->calls_top)	/* the root is the earliest */
			q->calls_top = ev.time;
		if (ev.time < q->top_time)
			q->top_time = ev.time;
		return 0;
	}
	return evq_resume_push(q, evp->time, evp->seq, evp->ptr);
}

/* EVQ_SIFT_DOWN for the resume heap (the same moves, so the same layout),
 * written out for the common case: the earlier child by time alone unless
 * the times tie (rare), in the (time, seq) order either way */
static inline void evq_resume_sift_down(struct evq_node *h, uint32_t n, struct evq_node x)
{
	/* byte offsets: node i at 24 i, its children at 2 (24 i) + 24 and
	 * + 48, each one addressing mode */
	const size_t sz = sizeof(*h);
	char *base = (char *)h;
	size_t end = (size_t)n * sz, i = 0, c;
	while ((c = 2 * i + sz) < end) {
		const struct evq_node *l = (const struct evq_node *)(base + c);
		if (c + sz < end) {
			uint64_t tl = l[0].time, tr = l[1].time;
			if (__builtin_expect(tl == tr, 0))
				c += l[1].seq < l[0].seq ? sz : 0;
			else
				c += tr < tl ? sz : 0;
		}
		const struct evq_node *p = (const struct evq_node *)(base + c);
		if (p->time > x.time || (p->time == x.time && p->seq > x.seq))
			break;		/* x is before it (keys are unique) */
		*(struct evq_node *)(base + i) = *p;
		i = c;
	}
	if (n > 0)
		*(struct evq_node *)(base + i) = x;
}

/* The earliest thread resume (read it first) replaced by the resume of t at
 * (time, seq), which is not before it (the resume heap is not empty). */
static inline void evq_resume_replace_top(struct evq *q, uint64_t time, uint64_t seq,
					  struct sim_thread *t)
{
	evq_resume_sift_down(q->heap, q->nheap,
			     (struct evq_node){.time = time, .seq = seq, .t = t});
	uint64_t c = q->calls_top;	/* evq_retop, nheap > 0 */
	q->top_time = q->heap[0].time < c ? q->heap[0].time : c;
}

/* The earliest thread resume, removed (the resume heap is not empty). */
static inline struct evq_node evq_resume_pop(struct evq *q)
{
	struct evq_node top = q->heap[0];
	struct evq_node last = q->heap[--q->nheap];
	evq_resume_sift_down(q->heap, q->nheap, last);
	evq_retop(q);
	return top;
}

/* The next event, removed (the queue is not empty). */
static inline struct event evq_heap_pop(struct evq *q)
{
	if (!evq_resume_next(q)) {
		struct event top = q->calls[0];
		struct event last = q->calls[--q->ncalls];
		EVQ_SIFT_DOWN(q->calls, q->ncalls, last);
		q->calls_top = q->ncalls ? q->calls[0].time : UINT64_MAX;
		evq_retop(q);
		return top;
	}
	struct evq_node top = evq_resume_pop(q);
	return (struct event){.time = top.time, .seq = top.seq, .kind = EV_RESUME, .ptr = top.t};
}

int evq_ready_push(struct evq *q, const struct event *ev);
void evq_ready_remove(struct evq *q, uint32_t i);
void evq_free(struct evq *q);

#endif
