/* evq.c - event heap and ready list (see evq.h). */
#include <stdlib.h>

#include "sim/evq.h"
#include "sim/grow.h"

int evq_heap_push(struct evq *q, const struct event *evp)
{
	if (GROW(&q->heap, &q->cap_heap, q->nheap, (size_t)q->nheap + 1, 256))
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

struct event evq_heap_pop(struct evq *q)
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
