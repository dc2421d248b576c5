/* evq.c - event heap and ready list (see evq.h). */
#include <stdlib.h>

#include "sim/evq.h"
#include "sim/grow.h"

int evq_heap_grow(struct evq *q)
{
	return GROW(&q->heap, &q->cap_heap, q->nheap, (size_t)q->nheap + 1, 256);
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
	free(q->ready);
	q->heap = q->ready = NULL;
	q->nheap = q->nready = 0;
	q->cap_heap = q->cap_ready = 0;
}
