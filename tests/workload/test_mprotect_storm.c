/*
 * test_mprotect_storm.c - what mprotect_storm emits, per arch and
 * arm64_local value (src/workload/mprotect_storm.c, mm/mprotect.c v5.1).
 *
 * Rules: a task's first loop (warm-up) finds no present PTE in either
 * mprotect and faults fresh pages in: no flush. Every later loop of a task
 * with P pages:
 *  - arm64, arm64_local=off: 2 x P VAE1IS (each mprotect's flush_tlb_range
 *    over the P pages, last_level = false) and P VALE1IS (each write fault's
 *    ptep_set_access_flags, v5.1), all broadcast; no IPI;
 *  - arm64_local=single_cpu_mm: each process only ever ran on its own CPU,
 *    so all 3 x P are local TLBIs and none is broadcast;
 *  - x86: 2 x P INVLPGs (two flush_tlb_mm_range of P <= 33 pages on the
 *    only CPU of the mm's cpumask), no IPI, no full flush from mprotect;
 *  - every loop writes P pages through a write fault: page_faults = P x ops.
 * With T tasks, the flushing loops are ops - T.
 */
#include "test_util.h"

#define P 4
#define T 2

static struct tlbsim_metrics run(const char *profile, const char *local)
{
	struct tlbsim_config cfg;
	tlbsim_config_init(&cfg);
	cfg.workload = "mprotect_storm";
	cfg.profile = profile;
	cfg.cpus = T;
	cfg.threads = T;
	cfg.iters = 3;
	char err[TLBSIM_ERRLEN];
	if (local)
		assert_int_equal(tlbsim_policy_set(&cfg.policy, "arm64_local", local, err,
						   sizeof(err)), 0);
	snprintf(cfg.wparams[0].name, sizeof(cfg.wparams[0].name), "pages");
	snprintf(cfg.wparams[0].value, sizeof(cfg.wparams[0].value), "%d", P);
	cfg.nwparams = 1;
	cfg.overrides[0].param = P_kpti;
	cfg.overrides[0].value = 0;
	cfg.noverrides = 1;
	struct tlbsim_resolved res;
	struct tlbsim_metrics m;
	int rc = tlbsim_run(&cfg, &res, &m, err, sizeof(err));
	if (rc)
		fail_msg("mprotect_storm: %s", err);
	assert_int_equal(m.violations, 0);
	assert_true(m.ops >= T * (1 + 3));
	assert_int_equal(m.page_faults, P * m.ops);
	assert_int_equal(m.ipi_sent, 0);
	return m;
}

static void test_arm64_off(void **state)
{
	(void)state;
	struct tlbsim_metrics m = run("arm64-4k", "off");
	uint64_t loops = m.ops - T;
	assert_int_equal(m.tlbi.vae1is, 2 * P * loops);
	assert_int_equal(m.tlbi.vale1is, P * loops);
	assert_int_equal(m.tlbi.local, 0);
}

static void test_arm64_single_cpu_mm(void **state)
{
	(void)state;
	struct tlbsim_metrics m = run("arm64-4k", "single_cpu_mm");
	uint64_t loops = m.ops - T;
	assert_int_equal(m.tlbi.vae1is, 0);
	assert_int_equal(m.tlbi.vale1is, 0);
	assert_int_equal(m.tlbi.local, 3 * P * loops);
	assert_int_equal(m.tlbi_local_skipped_broadcast, 3 * P * loops);
}

static void test_x86(void **state)
{
	(void)state;
	struct tlbsim_metrics m = run("x86-24", NULL);
	uint64_t loops = m.ops - T;
	assert_int_equal(m.flush_local_pages, 2 * P * loops);
	assert_int_equal(m.tlbi.vae1is + m.tlbi.vale1is, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_arm64_off),
		cmocka_unit_test(test_arm64_single_cpu_mm),
		cmocka_unit_test(test_x86),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
