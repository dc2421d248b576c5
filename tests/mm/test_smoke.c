/* Smoke test of the test harness: one thread maps, writes, unmaps. */
#include "test_util.h"

static void body(struct sim *s, struct sim_thread *t)
{
	uint64_t a = sys_mmap(s, 0, 1 << 20, TLBSIM_MAP_PRIVATE);
	assert_true(a != TLBSIM_EINVAL_VA);
	assert_int_equal(user_access(s, a, true), 0);
	assert_int_equal(sys_munmap(s, a, 1 << 20), 0);
	*(int *)t->arg = 1;
}

static void test_harness_runs_a_thread(void **state)
{
	int done = 0;
	struct sim *s = tsim_new("x86-24", 4, NESTED_FULLMM);
	tsim_spawn(s, body, &done, 1);
	tsim_run(s);
	assert_int_equal(done, 1);
	assert_int_equal(s->m.page_faults, 1);
	tsim_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_harness_runs_a_thread)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
