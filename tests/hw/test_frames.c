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
 *    heap-use-after-free in zap_pte_range);
 *  - clear_page is cache-warm only on the CPU that cleared the frame last,
 *    and only while that CPU has cleared less than zero_cache_kb since
 *    (frame_clear); zero_page_cost charges zero_warm_4k_ns or zero_4k_ns
 *    per 4 KiB accordingly;
 *  - with a stack pool (the checker's) the frame table's range outlives a
 *    simulation: the next one takes the same range, sees every descriptor
 *    zeroed (its results equal a run without the pool) and gives it back.
 */
#include <stdio.h>

#include "sim/grow.h"
#include "mm/mm.h"
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
	snprintf(cfg.wparams[1].name, sizeof(cfg.wparams[1].name), "uws");
	snprintf(cfg.wparams[1].value, sizeof(cfg.wparams[1].value), "0");
	cfg.nwparams = 2;
	struct tlbsim_resolved res;
	struct tlbsim_metrics m;
	char err[TLBSIM_ERRLEN];
	int rc = tlbsim_run(&cfg, &res, &m, err, sizeof(err));
	if (rc)
		fail_msg("%s touch=%s: %s", profile, touch, err);
	uint64_t touched = (uint64_t)atoll(touch) * 16 * (uint64_t)iters;
	/* every touched page faulted once and was freed once (no user
	 * working set: uws=0) */
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

/* frame_clear: warm = same CPU as the last clear, and the KiB that CPU has
 * cleared since (this page included) fit in cache_kb */
static void test_frame_clear_warmth(void **state)
{
	(void)state;
	struct sim *s = tsim_new("x86-24", 4, NESTED_FULLMM);	/* 4 KiB pages */
	struct hw *hw = hw_of(s);
	uint32_t f = frame_alloc(hw, FRAME_DATA, 0);
	uint32_t g = frame_alloc(hw, FRAME_DATA, 0);
	assert_false(frame_clear(hw, f, 1, 16));	/* never cleared: cold */
	assert_true(frame_clear(hw, f, 1, 16));		/* again on cpu 1: warm */
	assert_false(frame_clear(hw, f, 2, 16));	/* another CPU: cold */
	assert_false(frame_clear(hw, f, 1, 16));	/* cpu 2 cleared it last */
	/* cpu 1 clears 3 other pages: 12 KiB + this 4 KiB = 16 KiB fit */
	for (int i = 0; i < 3; i++)
		frame_clear(hw, g, 1, 16);
	assert_true(frame_clear(hw, f, 1, 16));
	/* 4 other pages: 20 KiB do not fit in 16 KiB */
	for (int i = 0; i < 4; i++)
		frame_clear(hw, g, 1, 16);
	assert_false(frame_clear(hw, f, 1, 16));
	/* cache_kb 0: never warm */
	assert_false(frame_clear(hw, f, 1, 0));
	/* the warmth survives free and reallocation (the lines stay cached) */
	frame_free(hw, f);
	uint32_t f2 = frame_alloc(hw, FRAME_DATA, 0);
	assert_int_equal(f2, f);
	assert_true(frame_clear(hw, f2, 1, 16));
	tsim_free(s);
}

struct zc {
	uint32_t f;
	uint64_t cost[3];
};

static void zc_thread(struct sim *s, struct sim_thread *t)
{
	struct zc *z = t->arg;
	for (int i = 0; i < 3; i++)
		z->cost[i] = zero_page_cost(s, z->f);
}

/* zero_page_cost on the running task's CPU: cold first, warm after */
static void test_zero_page_cost(void **state)
{
	(void)state;
	for (int arm = 0; arm < 2; arm++) {
		const char *prof = arm ? "falkor-46" : "x86-24";
		struct sim *s = tsim_new(prof, 4, NESTED_FULLMM);
		struct hw *hw = hw_of(s);
		uint64_t k4 = hw->geom.page_size >> 12;
		struct zc z = {.f = frame_alloc(hw, FRAME_DATA, 0)};
		tsim_spawn(s, zc_thread, &z, 2);
		tsim_run(s);
		assert_int_equal(z.cost[0], (uint64_t)P(s, P_zero_4k_ns) * k4);
		assert_int_equal(z.cost[1], (uint64_t)P(s, P_zero_warm_4k_ns) * k4);
		assert_int_equal(z.cost[2], (uint64_t)P(s, P_zero_warm_4k_ns) * k4);
		assert_true(P(s, P_zero_warm_4k_ns) < P(s, P_zero_4k_ns));
		assert_int_equal(frame_of(hw, z.f)->zero_cpu, 2 + 1);
		tsim_free(s);
	}
}

/* one mmap8 run of 4 threads x 50 iterations on x86-24 (pool: the caller's, or
 * NULL: the run keeps its own for itself) */
static struct run_outcome run_mmap8(struct sim_stack_pool *pool)
{
	struct tlbsim_config cfg;
	struct tlbsim_resolved res;
	tsim_workload_cfg(&cfg, &res, "mmap8", "x86-24", 4, 50);
	char err[TLBSIM_ERRLEN];
	struct core_opts o = {.want_kind = -1, .stack_pool = pool};
	struct run_outcome out;
	if (tlbsim_run_one(&cfg, &res, &o, &out, err, sizeof(err)))
		fail_msg("mmap8: %s", err);
	return out;
}

static void test_frame_range_pooled(void **state)
{
	(void)state;
	struct run_outcome alone = run_mmap8(NULL);
	struct sim_stack_pool *pool = calloc(1, sizeof(*pool));
	assert_non_null(pool);
	struct run_outcome first = run_mmap8(pool);
	void *base = pool->frames.base;
	assert_non_null(base);
	assert_true(pool->frames.dirty > 0);
	assert_true(pool->frames.mapped >= pool->frames.dirty);
	struct run_outcome second = run_mmap8(pool);
	assert_ptr_equal(pool->frames.base, base);	/* taken and given back */
	const struct run_outcome *o[3] = {&alone, &first, &second};
	for (int i = 1; i < 3; i++) {
		assert_int_equal(o[i]->m.wall_ns, alone.m.wall_ns);
		assert_int_equal(o[i]->m.ops, alone.m.ops);
		assert_int_equal(o[i]->m.tlb_misses, alone.m.tlb_misses);
		assert_int_equal(o[i]->m.page_walks, alone.m.page_walks);
		assert_int_equal(o[i]->m.tables_freed, alone.m.tables_freed);
		assert_int_equal(o[i]->m.violations, 0);
		assert_int_equal(o[i]->steps, alone.steps);
	}
	sim_stack_pool_free(pool);
	assert_null(pool->frames.base);
	free(pool);
}

/* A run whose caller keeps no pool (tlbsim_run_one's own): the stack of a
 * thread that ended is the next new thread's, so a kernel build of many
 * short tasks maps about as many stacks as tasks run at once, not one per
 * task; the results are a pooled run's. */
static void test_run_reuses_stacks(void **state)
{
	(void)state;
	struct tlbsim_config cfg;
	struct tlbsim_resolved res;
	/* 4 job slots x 40 jobs, short ones on small working sets, each job
	 * sh -c -> gcc -> cc1 (three tasks) */
	tsim_workload_cfg(&cfg, &res, "kbuild", "x86-24", 4, 40);
	const char *w[][2] = {{"job_ms", "1"}, {"ws_pages", "4"}};
	for (int i = 0; i < 2; i++) {
		snprintf(cfg.wparams[i].name, sizeof(cfg.wparams[i].name), "%s", w[i][0]);
		snprintf(cfg.wparams[i].value, sizeof(cfg.wparams[i].value), "%s", w[i][1]);
	}
	cfg.nwparams = 2;
	char err[TLBSIM_ERRLEN];
	if (tlbsim_resolve(&cfg, &res, err, sizeof(err)))
		fail_msg("kbuild: %s", err);
	struct core_opts o = {.want_kind = -1};
	struct run_outcome own, pooled;
	if (tlbsim_run_one(&cfg, &res, &o, &own, err, sizeof(err)))
		fail_msg("kbuild: %s", err);
	struct sim_stack_pool *pool = calloc(1, sizeof(*pool));
	assert_non_null(pool);
	o.stack_pool = pool;
	if (tlbsim_run_one(&cfg, &res, &o, &pooled, err, sizeof(err)))
		fail_msg("kbuild: %s", err);
	sim_stack_pool_free(pool);
	free(pool);
	print_message("kbuild: %llu threads, %llu stacks mapped\n",
		      (unsigned long long)own.threads, (unsigned long long)own.stacks_mapped);
	assert_true(own.threads >= 100);
	assert_true(own.stacks_mapped * 10 <= own.threads);
	assert_int_equal(pooled.stacks_mapped, own.stacks_mapped);
	assert_int_equal(pooled.threads, own.threads);
	assert_int_equal(pooled.m.wall_ns, own.m.wall_ns);
	assert_int_equal(pooled.m.ops, own.m.ops);
	assert_int_equal(pooled.steps, own.steps);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_frame_pointer_is_stable),
		cmocka_unit_test(test_grow_array),
		cmocka_unit_test(test_frame_clear_warmth),
		cmocka_unit_test(test_zero_page_cost),
		cmocka_unit_test(test_zap_survives_frame_growth),
		cmocka_unit_test(test_frame_range_pooled),
		cmocka_unit_test(test_run_reuses_stacks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
