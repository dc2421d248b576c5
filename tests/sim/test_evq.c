/*
 * test_evq.c - the engine's event queue (src/sim/evq.h).
 *
 * Rules checked:
 *  - events leave in (time, seq) order whatever the mix of thread resumes
 *    and callbacks and however many share a time (the order is total);
 *  - top_time is always the time of the next event, and UINT64_MAX when
 *    the queue is empty (the step fast path compares with it alone), after
 *    pushes, pops and a replacement of the resume heap's root (what
 *    yield_to_next does: evq_resume_replace_top, which is EVQ_SIFT_DOWN +
 *    evq_retop);
 *  - both arrays stay binary min-heaps on (time, seq).
 */
#include "test_util.h"

#include "sim/evq.h"

/* xorshift64 for the test's own choices */
static uint64_t next_rand(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

struct key {
	uint64_t time, seq;
};

static bool key_before(struct key a, struct key b)
{
	return a.time < b.time || (a.time == b.time && a.seq < b.seq);
}

/* the queue's invariants, against the brute-force minimum of what it holds */
static void check_queue(const struct evq *q)
{
	uint64_t min = UINT64_MAX;
	for (uint32_t i = 0; i < q->nheap; i++) {
		if (q->heap[i].time < min)
			min = q->heap[i].time;
		if (i)
			assert_false(EVQ_BEFORE(&q->heap[i], &q->heap[(i - 1) / 2]));
	}
	for (uint32_t i = 0; i < q->ncalls; i++) {
		if (q->calls[i].time < min)
			min = q->calls[i].time;
		if (i)
			assert_false(EVQ_BEFORE(&q->calls[i], &q->calls[(i - 1) / 2]));
	}
	assert_true(q->top_time == min);
	assert_true(q->calls_top == (q->ncalls ? q->calls[0].time : UINT64_MAX));
	/* evq_resume_next: the resume heap's top is next in (time, seq) order */
	assert_true(evq_resume_next(q) ==
		    (q->nheap && (!q->ncalls || !EVQ_BEFORE(&q->calls[0], &q->heap[0]))));
	if (!evq_empty(q))
		assert_true(evq_top_time(q) == min);
}

/* evq_resume_sift_down and evq_resume_push make the moves EVQ_SIFT_DOWN and
 * EVQ_SIFT_UP make: the same array after every sift, ties in time (few
 * distinct times) included */
static void test_resume_sift_same_layout(void **state)
{
	(void)state;
	uint64_t x = 0x9E3779B97F4A7C15ull, next_seq = 0;
	struct evq_node a[32] = {0}, b[32] = {0};
	for (int round = 0; round < 20000; round++) {
		uint32_t n = (uint32_t)(next_rand(&x) % 32);
		uint64_t spread = next_rand(&x) & 1 ? 4 : 1000;
		/* a valid heap: sorted keys are one */
		for (uint32_t i = 0; i < n; i++) {
			uint64_t time = next_rand(&x) % spread;
			a[i] = (struct evq_node){.time = time, .seq = next_seq++};
		}
		for (uint32_t i = 1; i < n; i++)
			for (uint32_t j = i; j > 0 && EVQ_BEFORE(&a[j], &a[j - 1]); j--) {
				struct evq_node tmp = a[j];
				a[j] = a[j - 1];
				a[j - 1] = tmp;
			}
		/* a random heap from it: sift-ups in a shuffled order, which
		 * evq_resume_push does with the same moves */
		uint32_t m = 0;
		struct evq q = {0};
		evq_init(&q);
		for (uint32_t i = 0; i < n; i++) {
			struct evq_node v = a[(i * 7 + round) % n];
			uint32_t k = m++;
			EVQ_SIFT_UP(b, k, v);
			assert_int_equal(evq_resume_push(&q, v.time, v.seq, v.t), 0);
		}
		if (n)
			assert_memory_equal(q.heap, b, n * sizeof(b[0]));
		evq_free(&q);
		memcpy(a, b, sizeof(a));
		uint64_t vtime = next_rand(&x) % spread;
		struct evq_node v = {.time = vtime, .seq = next_seq++};
		EVQ_SIFT_DOWN(a, n, v);
		evq_resume_sift_down(b, n, v);
		assert_memory_equal(a, b, n * sizeof(a[0]));
	}
}

static void test_evq_order_and_top(void **state)
{
	(void)state;
	struct evq q = {0};
	evq_init(&q);
	check_queue(&q);
	uint64_t x = 88172645463325252ull, next_seq = 0;
	struct key last = {0, 0};
	bool popped = false;
	int threads[8];
	for (int round = 0; round < 20000; round++) {
		uint64_t r = next_rand(&x);
		/* small time range: many ties, broken by seq */
		uint64_t now = popped ? last.time : 0;
		uint64_t time = now + (r >> 8) % 6;
		if (evq_count(&q) < 40 && (r & 3) != 0) {
			struct event ev = {.time = time, .seq = next_seq++,
					   .kind = (r & 0x30) ? EV_RESUME : EV_CALL,
					   .ptr = &threads[(r >> 40) % 8]};
			assert_int_equal(evq_heap_push(&q, &ev), 0);
		} else if (!evq_empty(&q) && (r & 4) && evq_resume_next(&q) &&
			   q.heap[0].time <= time) {
			/* yield_to_next: a resume at `time` replaces the root */
			struct evq_node top = q.heap[0];
			evq_resume_replace_top(&q, time, next_seq++, NULL);
			struct key k = {top.time, top.seq};
			if (popped)
				assert_true(key_before(last, k));
			last = k;
			popped = true;
		} else if (!evq_empty(&q)) {
			uint64_t want = evq_top_time(&q);
			struct event ev = evq_heap_pop(&q);
			assert_true(ev.time == want);
			struct key k = {ev.time, ev.seq};
			if (popped)
				assert_true(key_before(last, k));
			last = k;
			popped = true;
		}
		check_queue(&q);
	}
	while (!evq_empty(&q)) {
		struct event ev = evq_heap_pop(&q);
		struct key k = {ev.time, ev.seq};
		assert_true(key_before(last, k));
		last = k;
		check_queue(&q);
	}
	assert_true(q.top_time == UINT64_MAX);
	evq_free(&q);
	assert_true(q.top_time == UINT64_MAX);
	assert_true(q.calls_top == UINT64_MAX);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_evq_order_and_top),
		cmocka_unit_test(test_resume_sift_same_layout),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
