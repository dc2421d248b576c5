/*
 * test_frames.c - storage that never moves (src/hw/hw.c frame table,
 * src/sim/grow.h), and the regression for the zap_pte_range use-after-free.
 *
 * Rules checked:
 *  - a struct frame pointer taken once stays the descriptor of that frame
 *    however many frames are allocated later (the frame table is chunked);
 *  - grow_array() keeps the elements in use, refuses sizes that overflow and
 *    leaves the array unchanged when it refuses;
 *  - the configurations that used to free the frame table under a thread
 *    suspended in zap_pte_range (another thread's frame_alloc grew it) run
 *    to completion with consistent counts (under the asan preset, which
 *    also moves every grown array, the old code failed here with a
 *    heap-use-after-free in zap_pte_range).
 */
#include <stdio.h>

#include "sim/grow.h"
#include "test_util.h"

static void test_frame_pointer_is_stable(void **state)
{
	(void)state;
	struct sim *s = tsim_new("x86-24", 2, NESTED_FULLMM);
	uint32_t f0 = frame_alloc(hw_of(s), FRAME_DATA, 0);
	struct frame *p0 = frame_of(hw_of(s), f0);
	p0->nr_used = 0x1234;
	for (int i = 0; i < 200000; i++)
		(void)frame_alloc(hw_of(s), FRAME_DATA, 0);
	assert_ptr_equal(frame_of(hw_of(s), f0), p0);
	assert_int_equal(p0->nr_used, 0x1234);
	assert_int_equal(p0->state, FRAME_DATA);
	tsim_free(s);
}

static void test_grow_array(void **state)
{
	(void)state;
	int *a = NULL;
	size_t cap = 0;
	for (int i = 0; i < 1000; i++) {
		assert_int_equal(GROW(&a, &cap, (size_t)i, (size_t)i + 1, 4), 0);
		assert_true(cap >= (size_t)i + 1);
		a[i] = i * 7;
	}
	for (int i = 0; i < 1000; i++)
		assert_int_equal(a[i], i * 7);
	int *before = a;
	size_t cap_before = cap;
	assert_int_equal(grow_array((void **)&a, &cap, 1000, SIZE_MAX / 2, sizeof(int), 4), -1);
	assert_ptr_equal(a, before);
	assert_int_equal(cap, cap_before);
	free(a);
}

/* The reproducers of the use-after-free: a thread suspended in
 * zap_pte_range while others fault in new pages. */
static void run_config(const char *profile, const char *touch, int64_t iters)
{
	struct tlbsim_config cfg;
	tlbsim_config_init(&cfg);
	cfg.workload = "mmap8";
	cfg.profile = profile;
	cfg.iters = iters;
	snprintf(cfg.wparams[0].name, sizeof(cfg.wparams[0].name), "touch");
	snprintf(cfg.wparams[0].value, sizeof(cfg.wparams[0].value), "%s", touch);
	cfg.nwparams = 1;
	struct tlbsim_resolved res;
	struct tlbsim_metrics m;
	char err[TLBSIM_ERRLEN];
	int rc = tlbsim_run(&cfg, &res, &m, err, sizeof(err));
	if (rc)
		fail_msg("%s touch=%s: %s", profile, touch, err);
	uint64_t touched = (uint64_t)atoll(touch) * 16 * (uint64_t)iters;
	/* every touched page faulted once and was freed once */
	assert_int_equal(m.page_faults - 16 /* each thread's first stack write */, touched);
	assert_true(m.pages_freed >= touched);
	assert_int_equal(m.violations, 0);
}

static void test_zap_survives_frame_growth(void **state)
{
	(void)state;
	run_config("falkor-46", "64", 10);
	run_config("falkor-46", "256", 2);
	run_config("arm64-4k", "64", 10);
	run_config("arm64-16k", "64", 10);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_frame_pointer_is_stable),
		cmocka_unit_test(test_grow_array),
		cmocka_unit_test(test_zap_survives_frame_growth),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
