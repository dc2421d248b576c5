/* evq.c - event heap and ready list (see evq.h). */
#include <stdlib.h>

#include "sim/evq.h"
#include "sim/grow.h"

int evq_heap_grow(struct evq *q)
{
	return GROW(&q->heap, &q->cap_heap, q->nheap, (size_t)q->nheap + 1, 256);
}

int evq_calls_grow(struct evq *q)
{
	return GROW(&q->calls, &q->cap_calls, q->ncalls, (size_t)q->ncalls + 1, 64);
}

int evq_ready_push(struct evq *q, const struct event *ev)
{
	if (GROW(&q->ready, &q->cap_ready, q->nready, (size_t)q->nready + 1, 16))
		return -1;
	q->ready[q->nready++] = *ev;
	return 0;
}

void evq_ready_remove(struct evq *q, uint32_t i)
{
	q->ready[i] = q->ready[--q->nready];
}

void evq_free(struct evq *q)
{
	free(q->heap);
	free(q->calls);
	free(q->ready);
	q->heap = NULL;
	q->calls = q->ready = NULL;
	q->nheap = q->nready = q->ncalls = 0;
	q->cap_heap = q->cap_ready = q->cap_calls = 0;
	q->top_time = UINT64_MAX;
	q->calls_top = UINT64_MAX;
}
