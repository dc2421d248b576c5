/*
 * test_trace_window.c - the trace window of the engine (src/sim/trace.h,
 * sim.c: sim_trace_rec, sim_step_slow, trace_window_open).
 *
 * Rules checked:
 *  - only records whose time lies in [from, to) are stored (to 0: no end);
 *  - run mode records every step while the window is open, from its first
 *    nanosecond: the window's start interrupts the fast path (without it the
 *    first recorded step could come up to SIM_POLL_PERIOD steps late);
 *  - tracing leaves simulated time and the events counted as they are;
 *  - at most max records are stored, the rest counted in dropped;
 *  - a run that ends before the window opens does not run on to its start.
 */
#include "test_util.h"

static const int64_t no_cr3_ov[] = {P_cr3_flush_ns, 0, -1};

#define NSTEPS 10000
#define STEP_NS 10

struct lone {
	uint64_t t0, dt;
};

static void lone_thread(struct sim *s, struct sim_thread *t)
{
	struct lone *l = t->arg;
	l->t0 = s->now;
	for (int i = 0; i < NSTEPS; i++)
		sim_step(s, YP_USER, STEP_NS);
	l->dt = s->now - l->t0;
}

/* Run a lone thread (steps at t0 + 10 k ns) with tb attached; return t0.
 * Tracing changes neither its time nor the events counted: one (its first
 * resume), as untraced (test_engine's fast path), the window's opening
 * included. */
static uint64_t run_lone(struct trace_buf *tb, uint64_t *end)
{
	struct lone l = {0};
	struct sim *s = tsim_new_p("x86-24", 2, NESTED_FULLMM, no_cr3_ov);
	s->trace = tb;
	tsim_spawn(s, lone_thread, &l, 0);
	tsim_run(s);
	assert_int_equal(l.dt, NSTEPS * STEP_NS);	/* time unchanged by tracing */
	assert_int_equal(s->m.events, 1);
	if (end)
		*end = s->now;
	s->trace = NULL;
	tsim_free(s);
	return l.t0;
}

/* the steps k in [0, NSTEPS) whose start t0 + 10 k lies in [from, to) */
static uint32_t steps_in(uint64_t t0, uint64_t from, uint64_t to)
{
	uint32_t n = 0;
	for (uint64_t k = 0; k < NSTEPS; k++) {
		uint64_t t = t0 + k * STEP_NS;
		n += t >= from && (!to || t < to);
	}
	return n;
}

static uint32_t user_records(const struct trace_buf *tb)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < tb->n; i++)
		n += tb->r[i].pt == YP_USER;
	return n;
}

static void test_window_mid_run(void **state)
{
	(void)state;
	struct trace_buf tb = {.from = 20000, .to = 30000};
	uint64_t t0 = run_lone(&tb, NULL);
	assert_true(t0 < 20000);
	for (uint32_t i = 0; i < tb.n; i++)
		if (tb.r[i].time < tb.from || tb.r[i].time >= tb.to)
			fail_msg("record %u at %llu ns, outside [20000, 30000)", i,
				 (unsigned long long)tb.r[i].time);
	/* every step of the window, from its first ns on */
	assert_int_equal(user_records(&tb), steps_in(t0, tb.from, tb.to));
	assert_true(user_records(&tb) >= 999);
	assert_int_equal(tb.dropped, 0);
	trace_buf_free(&tb);
}

static void test_window_open_end(void **state)
{
	(void)state;
	struct trace_buf tb = {.from = 90000, .to = 0};
	uint64_t t0 = run_lone(&tb, NULL);
	assert_int_equal(user_records(&tb), steps_in(t0, 90000, 0));
	assert_true(user_records(&tb) > 0);
	trace_buf_free(&tb);
}

static void test_window_max(void **state)
{
	(void)state;
	struct trace_buf tb = {.from = 0, .to = 0, .max = 100};
	uint64_t t0 = run_lone(&tb, NULL);
	assert_int_equal(tb.n, 100);
	assert_true(tb.dropped >= (uint64_t)steps_in(t0, 0, 0) - 100);
	trace_buf_free(&tb);
}

static void test_window_after_run(void **state)
{
	(void)state;
	uint64_t end_plain, end_traced;
	uint64_t t0 = run_lone(NULL, &end_plain);
	struct trace_buf tb = {.from = 1000000000, .to = 0};
	assert_int_equal(run_lone(&tb, &end_traced), t0);
	assert_int_equal(tb.n, 0);
	assert_int_equal(end_traced, end_plain);	/* the run did not move on to 1 s */
	trace_buf_free(&tb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_window_mid_run),
		cmocka_unit_test(test_window_open_end),
		cmocka_unit_test(test_window_max),
		cmocka_unit_test(test_window_after_run),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
