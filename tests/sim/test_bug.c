/*
 * test_bug.c - death tests: the model's internal assertions (SIM_BUG_ON)
 * fire on the misuse they guard against. In tests SIM_BUG_ON reaches
 * cmocka's mock_assert (tests/test_util.h), so expect_assert_failure() sees
 * it; in the tool it prints the location and aborts.
 *
 * Rules:
 *  - releasing a rw_semaphore nobody holds (up_read, up_write) or
 *    downgrading one not held for write is a bug;
 *  - freeing a frame that is already free is a bug (double free);
 *  - removing a translation-cache entry that is not valid is a bug;
 *  - waking a thread that is not asleep, or starting a thread twice, is a
 *    bug;
 *  - a free of a page-table frame that still has entries is a bug
 *    (free_pgd_range frees only empty tables).
 */
#include "test_util.h"

static void test_up_read_unheld(void **state)
{
	(void)state;
	struct sim *s = tsim_new("x86-24", 2, NESTED_FULLMM);
	struct rw_semaphore sem = {0};
	expect_assert_failure(up_read(s, &sem));
	expect_assert_failure(up_write(s, &sem));
	expect_assert_failure(downgrade_write(s, &sem));
	tsim_free(s);
}

static void test_double_frame_free(void **state)
{
	(void)state;
	struct sim *s = tsim_new("falkor-46", 2, NESTED_FULLMM);
	uint32_t f = frame_alloc(hw_of(s), FRAME_DATA, 0);
	frame_free(hw_of(s), f);
	expect_assert_failure(frame_free(hw_of(s), f));
	tsim_free(s);
}

static void test_free_nonempty_table(void **state)
{
	(void)state;
	struct sim *s = tsim_new("falkor-46", 2, NESTED_FULLMM);
	uint32_t t = frame_alloc(hw_of(s), FRAME_PGTABLE, 1);
	set_entry(s, t, 3, pfn_pte(7, PTE_VALID));
	expect_assert_failure(frame_free(hw_of(s), t));
	set_entry(s, t, 3, 0);
	frame_free(hw_of(s), t);
	tsim_free(s);
}

static void test_remove_invalid_entry(void **state)
{
	(void)state;
	struct sim *s = tsim_new("arm64-4k", 2, NESTED_FULLMM);
	struct tcache *tc = &hw_of(s)->cpu[0].tlb;
	expect_assert_failure(tc_remove(hw_of(s), tc, &tc->e[0]));
	tsim_free(s);
}

static void noop(struct sim *s, struct sim_thread *t)
{
	(void)s;
	(void)t;
}

static void test_thread_misuse(void **state)
{
	(void)state;
	struct sim *s = tsim_new("x86-24", 2, NESTED_FULLMM);
	struct sim_thread *t = tsim_spawn(s, noop, NULL, 1);
	/* queued, not asleep */
	expect_assert_failure(sim_wake(s, t, 0));
	expect_assert_failure(sim_thread_start(s, t, noop, NULL, 1, 0));
	tsim_run(s);
	tsim_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_up_read_unheld),
		cmocka_unit_test(test_double_frame_free),
		cmocka_unit_test(test_free_nonempty_table),
		cmocka_unit_test(test_remove_invalid_entry),
		cmocka_unit_test(test_thread_misuse),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
