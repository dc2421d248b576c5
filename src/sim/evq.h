/*
 * evq.h - the engine's queue of pending entities.
 *
 * Time-ordered mode: a binary heap ordered by (time, seq), seq being the
 * insertion counter, so equal times run in queueing order.
 * Check mode: an unordered ready list; the exploration strategy picks.
 * Events are copied in and out: nothing points into the arrays (grow.h).
 */
#ifndef TLBSIM_EVQ_H
#define TLBSIM_EVQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sim;
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
};

struct evq {
	struct event *heap;
	uint32_t nheap;
	size_t cap_heap;
	struct event *ready;	/* check mode */
	uint32_t nready;
	size_t cap_ready;
};

static inline bool ev_before(const struct event *a, const struct event *b)
{
	return a->time < b->time || (a->time == b->time && a->seq < b->seq);
}

int evq_heap_grow(struct evq *q);

/* 0, or -1 when the host allocation fails */
static inline int evq_heap_push(struct evq *q, const struct event *evp)
{
	if (q->nheap == q->cap_heap && evq_heap_grow(q))
		return -1;
	struct event ev = *evp;
	uint32_t i = q->nheap++;
	while (i > 0) {
		uint32_t parent = (i - 1) / 2;
		if (!ev_before(&ev, &q->heap[parent]))
			break;
		q->heap[i] = q->heap[parent];
		i = parent;
	}
	q->heap[i] = ev;
	return 0;
}

static inline struct event evq_heap_pop(struct evq *q)
{
	struct event top = q->heap[0];
	struct event last = q->heap[--q->nheap];
	uint32_t i = 0, n = q->nheap;
	for (;;) {
		uint32_t l = 2 * i + 1, r = l + 1, m = i;
		const struct event *best = &last;
		if (l < n && ev_before(&q->heap[l], best)) {
			m = l;
			best = &q->heap[l];
		}
		if (r < n && ev_before(&q->heap[r], best))
			m = r;
		if (m == i)
			break;
		q->heap[i] = q->heap[m];
		i = m;
	}
	if (n > 0)
		q->heap[i] = last;
	return top;
}

int evq_ready_push(struct evq *q, const struct event *ev);
void evq_ready_remove(struct evq *q, uint32_t i);
void evq_free(struct evq *q);

#endif
