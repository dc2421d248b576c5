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

/* 0, or -1 when the host allocation fails */
int evq_heap_push(struct evq *q, const struct event *ev);
struct event evq_heap_pop(struct evq *q);
int evq_ready_push(struct evq *q, const struct event *ev);
void evq_ready_remove(struct evq *q, uint32_t i);
void evq_free(struct evq *q);

#endif
