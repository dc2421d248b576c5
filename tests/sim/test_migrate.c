/*
 * test_migrate.c - thread migration in the engine (sim_migrate,
 * sim_request_migrate, sim_preempt_point; kernel/sched/core.c v5.1
 * sched_setaffinity / migration_cpu_stop).
 *
 * Rules checked:
 *  - a thread that moves itself continues on the new CPU, and the CPU it
 *    left runs its run queue's head or goes idle;
 *  - a request for a sleeping thread moves it at once: it wakes on the new
 *    CPU;
 *  - a request for a running thread waits for its next preemption point:
 *    kernel code without one keeps running on the old CPU; the return to
 *    user mode (sim_set_mode(MODE_USER)) or sim_preempt_point moves it.
 */
#include "test_util.h"

struct mig {
	struct sim_thread *other;
	int cpu_before, cpu_mid, cpu_after;
	int step;
};

/* a charge's counter follows the thread's CPU and mode (t->acct) */
static void assert_acct(struct sim *s, const struct sim_thread *t)
{
	assert_ptr_equal(t->acct, &s->cpus[t->cpu].mode_ns[t->mode]);
}

static void self_mover(struct sim *s, struct sim_thread *t)
{
	struct mig *m = t->arg;
	m->cpu_before = cur_cpu(s);
	sim_migrate(s, 3);
	m->cpu_after = cur_cpu(s);
	assert_int_equal(t->cpu, 3);
	assert_ptr_equal(s->cpus[3].curr, t);
	assert_acct(s, t);
}

static void test_self_migration(void **state)
{
	(void)state;
	struct sim *s = tsim_new("x86-24", 4, NESTED_FULLMM);
	struct mig m = {0};
	tsim_spawn(s, self_mover, &m, 1);
	tsim_run(s);
	assert_int_equal(m.cpu_before, 1);
	assert_int_equal(m.cpu_after, 3);
	assert_null(s->cpus[1].curr);	/* nothing else to run: idle */
	tsim_free(s);
}

static void sleeper(struct sim *s, struct sim_thread *t)
{
	struct mig *m = t->arg;
	m->cpu_before = cur_cpu(s);
	assert_acct(s, t);
	sim_sleep(s);
	m->cpu_after = cur_cpu(s);
	assert_acct(s, t);
}

static void mover_of_sleeper(struct sim *s, struct sim_thread *t)
{
	struct mig *m = t->arg;
	sim_step(s, YP_THREAD, 10000);		/* the sleeper is asleep by now */
	assert_int_equal(m->other->state, TS_SLEEPING);
	sim_request_migrate(s, m->other, 2);
	assert_int_equal(m->other->cpu, 2);	/* moved at once */
	sim_wake(s, m->other, 0);
}

static void test_sleeping_thread_moves_at_once(void **state)
{
	(void)state;
	struct sim *s = tsim_new("x86-24", 4, NESTED_FULLMM);
	struct mig m = {0};
	m.other = tsim_spawn(s, sleeper, &m, 0);
	tsim_spawn(s, mover_of_sleeper, &m, 1);
	tsim_run(s);
	assert_int_equal(m.cpu_before, 0);
	assert_int_equal(m.cpu_after, 2);
	tsim_free(s);
}

/* kernel work in steps; the request lands after its first step */
static void busy_kernel(struct sim *s, struct sim_thread *t)
{
	struct mig *m = t->arg;
	sim_set_mode(s, MODE_SYS);
	assert_acct(s, t);
	sim_step(s, YP_THREAD, 1000);
	m->step = 1;
	sim_step(s, YP_THREAD, 100000);		/* the request arrives meanwhile */
	m->cpu_mid = cur_cpu(s);		/* no preemption point yet */
	sim_set_mode(s, MODE_USER);		/* return to user: moves */
	m->cpu_after = cur_cpu(s);
	assert_acct(s, t);
	sim_set_mode(s, MODE_SYS);
	sim_set_mode(s, MODE_SYS);		/* no change: stays */
	assert_acct(s, t);
	sim_set_mode(s, MODE_USER);
	assert_acct(s, t);
}

static void requester(struct sim *s, struct sim_thread *t)
{
	struct mig *m = t->arg;
	sim_step(s, YP_THREAD, 5000);
	assert_int_equal(m->step, 1);
	sim_request_migrate(s, m->other, 3);
	assert_int_equal(m->other->cpu, 0);	/* still running there */
}

static void test_running_thread_moves_at_preemption_point(void **state)
{
	(void)state;
	struct sim *s = tsim_new("x86-24", 4, NESTED_FULLMM);
	struct mig m = {0};
	m.other = tsim_spawn(s, busy_kernel, &m, 0);
	tsim_spawn(s, requester, &m, 1);
	tsim_run(s);
	assert_int_equal(m.cpu_mid, 0);
	assert_int_equal(m.cpu_after, 3);
	tsim_free(s);
}

static void preempt_point_thread(struct sim *s, struct sim_thread *t)
{
	struct mig *m = t->arg;
	sim_set_mode(s, MODE_SYS);
	t->migrate_to = 2 + 1;			/* as a request would leave it */
	sim_step(s, YP_THREAD, 100);
	m->cpu_mid = cur_cpu(s);
	sim_preempt_point(s);
	m->cpu_after = cur_cpu(s);
	assert_int_equal(t->migrate_to, 0);
}

static void test_preempt_point(void **state)
{
	(void)state;
	struct sim *s = tsim_new("x86-24", 4, NESTED_FULLMM);
	struct mig m = {0};
	tsim_spawn(s, preempt_point_thread, &m, 1);
	tsim_run(s);
	assert_int_equal(m.cpu_mid, 1);
	assert_int_equal(m.cpu_after, 2);
	tsim_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_self_migration),
		cmocka_unit_test(test_sleeping_thread_moves_at_once),
		cmocka_unit_test(test_running_thread_moves_at_preemption_point),
		cmocka_unit_test(test_preempt_point),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
