/*
 * test_wall.c - the run's wall time and the CPUs' busy time (src/sim/sim.c,
 * src/core/core.c finish_metrics): user + sys + idle = wall x cpus.
 *
 * Rules checked:
 *  - time a thread charged before it exited has elapsed: the run lasts until
 *    the latest exit's charged time (sim.exit_at), so no CPU is busy for
 *    longer than wall (before, wall was the last event's time and a final
 *    charge of the last thread to exit made a CPU busier than the run long);
 *  - an interrupt handler on an idle CPU (sim_steal_at) occupies it from the
 *    interrupt's arrival: a thread woken there meanwhile starts when the
 *    handler is done, without an idle exit, so the handler's sys time and
 *    the thread's never overlap;
 *  - such a handler that ends after the last thread exited has elapsed as
 *    well: the run lasts until it ends (sim_elapsed_until; before, its sys
 *    time could exceed the run's wall time: lazy_tables with a 1 ms IPI
 *    handler, -D ipi_handler_ns=1000000, seeds 4 and 8).
 */
#include "test_util.h"

static void charge_and_exit(struct sim *s, struct sim_thread *t)
{
	(void)t;
	sim_set_mode(s, MODE_SYS);
	sim_step(s, YP_THREAD, 100);
	sim_charge_sys(s, 7777);	/* no yield point after it */
}

static void test_last_charge_elapses(void **state)
{
	(void)state;
	struct sim *s = tsim_new("x86-24", 2, NESTED_FULLMM);
	tsim_spawn(s, charge_and_exit, NULL, 1);
	tsim_run(s);
	uint64_t wall = s->now > s->exit_at ? s->now : s->exit_at;
	for (int c = 0; c < s->nr_cpus; c++)
		assert_true(s->cpus[c].user_ns + s->cpus[c].sys_ns <= wall);
	assert_true(s->exit_at >= s->cpus[1].sys_ns);
	assert_true(s->exit_at > s->now);	/* the case the fix is about */
	tsim_free(s);
}

struct hw_ctl {
	struct sim_thread *sleeper;
	uint64_t handler_end, resumed;
};

static void sleeper_fn(struct sim *s, struct sim_thread *t)
{
	struct hw_ctl *h = t->arg;
	sim_sleep(s);
	h->resumed = s->now;
}

static void interrupter(struct sim *s, struct sim_thread *t)
{
	struct hw_ctl *h = t->arg;
	sim_step(s, YP_THREAD, 20000);		/* CPU 1 is idle, past its idle entry */
	assert_null(s->cpus[1].curr);
	uint64_t now = s->now + t->pending_ns;
	uint64_t sys0 = s->cpus[1].sys_ns;
	sim_steal_at(s, 1, now, 5000);
	assert_int_equal(s->cpus[1].sys_ns, sys0 + 5000);
	h->handler_end = now + 5000;
	sim_wake(s, h->sleeper, 0);		/* lands during the handler */
}

static void test_idle_handler_blocks_wakeup(void **state)
{
	(void)state;
	struct sim *s = tsim_new("x86-24", 2, NESTED_FULLMM);
	struct hw_ctl h = {0};
	h.sleeper = tsim_spawn(s, sleeper_fn, &h, 1);
	tsim_spawn(s, interrupter, &h, 0);
	tsim_run(s);
	/* starts at the handler's end plus schedule() in; no idle exit */
	uint64_t in = (uint64_t)P(s, P_ctx_switch_ns) / 2;
	assert_int_equal(h.resumed, h.handler_end + in);
	tsim_free(s);
}

/* a 1 ms handler on idle CPU 1, then the only thread exits at once */
static void steal_and_exit(struct sim *s, struct sim_thread *t)
{
	uint64_t *end = t->arg;
	sim_step(s, YP_THREAD, 20000);		/* CPU 1 is idle, past its idle entry */
	assert_null(s->cpus[1].curr);
	uint64_t now = s->now + t->pending_ns;
	sim_steal_at(s, 1, now, 1000000);
	*end = now + 1000000;
}

static void test_idle_handler_elapses(void **state)
{
	(void)state;
	struct sim *s = tsim_new("x86-24", 2, NESTED_FULLMM);
	uint64_t end = 0;
	tsim_spawn(s, steal_and_exit, &end, 0);
	tsim_run(s);
	assert_true(s->exit_at < end);		/* the case the rule is about */
	uint64_t wall = sim_elapsed_until(s);
	assert_int_equal(wall, end);
	for (int c = 0; c < s->nr_cpus; c++)
		assert_true(s->cpus[c].user_ns + s->cpus[c].sys_ns <= wall);
	tsim_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_last_charge_elapses),
		cmocka_unit_test(test_idle_handler_blocks_wakeup),
		cmocka_unit_test(test_idle_handler_elapses),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
