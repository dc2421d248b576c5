/*
 * test_user_ws.c - the user working set of mmap8 (glibc_user_work,
 * src/workload/glibc.c): each iteration a thread touches `uws` pages besides
 * its mapping (its stack top and uws - 1 pages of the process image).
 *
 * Rules checked, with one thread (no concurrency, so every count is exact
 * up to the first touches):
 *  - a flush that removes the whole ASID every iteration (on arm64-4k 1024
 *    pages zapped of a 4 MiB mapping: more than MAX_TLBI_OPS = 512, so
 *    __flush_tlb_range falls back to flush_tlb_mm, ASIDE1IS; on x86-24 a
 *    16 MiB munmap, above the 33-page INVLPG ceiling: a full flush) makes
 *    every working-set page miss again in every
 *    iteration: uws x iters more TLB misses than uws=0, plus at most the
 *    first touches' fault retries;
 *  - a flush by address (a 64 KiB mapping: 16 VAE1IS / INVLPG) leaves the
 *    working set in the TLB: only its first touches miss;
 *  - each of those misses is a page walk, and the user time grows by at
 *    least uws x user_access_ns per iteration.
 */
#include <stdio.h>

#include "test_util.h"

struct ws_run {
	uint64_t misses, walks, user_ns;
};

static struct ws_run run(const char *profile, const char *size, const char *touch, const char *uws,
			 int64_t iters)
{
	struct tlbsim_config cfg;
	tlbsim_config_init(&cfg);
	cfg.workload = "mmap8";
	cfg.profile = profile;
	cfg.iters = iters;
	cfg.threads = 1;
	const char *kv[3][2] = {{"size", size}, {"uws", uws}, {"touch", touch}};
	for (int i = 0; i < 3; i++) {
		snprintf(cfg.wparams[i].name, sizeof(cfg.wparams[i].name), "%s", kv[i][0]);
		snprintf(cfg.wparams[i].value, sizeof(cfg.wparams[i].value), "%s", kv[i][1]);
	}
	cfg.nwparams = 3;
	cfg.overrides[0].param = P_jitter;
	cfg.overrides[0].value = 0;
	cfg.noverrides = 1;
	struct tlbsim_resolved res;
	struct tlbsim_metrics m;
	char err[TLBSIM_ERRLEN];
	if (tlbsim_run(&cfg, &res, &m, err, sizeof(err)))
		fail_msg("%s size=%s uws=%s: %s", profile, size, uws, err);
	assert_int_equal(m.violations, 0);
	return (struct ws_run){m.tlb_misses, m.page_walks, m.user_ns};
}

static void test_whole_asid_flush_refills(void **state)
{
	(void)state;
	const char *cases[2][3] = {{"arm64-4k", "4M", "1024"}, {"x86-24", "16M", "1"}};
	const int64_t iters = 20;
	for (int i = 0; i < 2; i++) {
		struct ws_run a = run(cases[i][0], cases[i][1], cases[i][2], "0", iters);
		struct ws_run b = run(cases[i][0], cases[i][1], cases[i][2], "8", iters);
		uint64_t extra = b.misses - a.misses;
		/* 8 misses per iteration; the 7 image pages' first touches fault,
		 * and a faulting access misses once more when it is retried */
		assert_true(extra >= 8 * (uint64_t)iters);
		assert_true(extra <= 8 * (uint64_t)iters + 7);
		assert_true(b.walks - a.walks >= 8 * (uint64_t)iters);
		assert_true(b.user_ns >= a.user_ns + 8 * (uint64_t)iters * 2 /* user_access_ns */);
	}
}

static void test_flush_by_address_keeps_it(void **state)
{
	(void)state;
	const int64_t iters = 50;
	struct ws_run a = run("arm64-4k", "64K", "16", "0", iters);
	struct ws_run b = run("arm64-4k", "64K", "16", "8", iters);
	/* only the first touches miss: at most two per page (miss, fault, retry) */
	assert_true(b.misses - a.misses <= 2 * 8);
	assert_true(b.misses > a.misses);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_whole_asid_flush_refills),
		cmocka_unit_test(test_flush_by_address_keeps_it),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
