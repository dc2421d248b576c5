/*
 * test_fork_exec.c - what fork_exec emits, per arch and exec
 * (src/workload/fork_exec.c; kernel/fork.c dup_mmap, mm/memory.c
 * copy_page_range and wp_page_copy v5.1, fs/exec.c exec_mmap).
 *
 * With T parents of P pages, write_pct=100, and F = ops (forks, warm-up
 * included):
 *  - every fork's child writes P shared pages: P COW copies per fork,
 *    cow_faults = P x F;
 *  - page faults: each parent's first fill (P each), then per fork the
 *    child's P COW faults and the parent's P write-protect faults after
 *    wait4 (which reuse the page in place, counted as access-flag updates:
 *    af_faults = P x F); with exec=1 also the child's P faults on its fresh
 *    region;
 *  - arm64 (kpti off): per fork one ASIDE1IS for dup_mmap's flush of the
 *    parent and one for the child's exit_mmap (fullmm, tables freed), one
 *    more for the release of the inherited mm at exec with exec=1; plus one
 *    per parent for the launcher's fork of it and one for its own exit;
 *    2 x P VALE1IS per fork: the child's wp_page_copy flush and the
 *    parent's write-upgrade flush (ptep_set_access_flags, v5.1); no VAE1IS;
 *  - x86: the COW flushes are single-page local INVLPGs of the child's mm
 *    (flush_local_pages = P x F); no IPI - each parent's mm runs on one CPU;
 *  - every child's COW copy is freed at its exit (exec: at exec), and every
 *    parent's region at its exit: pages_freed >= P x F + T x P (+ P x F
 *    fresh pages with exec=1; kernel stacks vfree'd add to it);
 *  - with parent_threads=2 (the second thread on a CPU of its own) every
 *    fork's flush of the parent reaches that CPU: on x86 at least one IPI
 *    per fork; arm64's counts are unchanged (the ASIDE1IS is broadcast
 *    anyway);
 *  - the same configuration and seed give the same metrics.
 */
#include "test_util.h"

#define P 4
#define T 2

static struct tlbsim_metrics run_pt(const char *profile, int exec, uint64_t seed, int cpus,
				     int parent_threads)
{
	struct tlbsim_config cfg;
	tlbsim_config_init(&cfg);
	cfg.workload = "fork_exec";
	cfg.profile = profile;
	cfg.cpus = cpus;
	cfg.threads = T;
	cfg.iters = 3;
	cfg.seed = seed;
	snprintf(cfg.wparams[0].name, sizeof(cfg.wparams[0].name), "pages");
	snprintf(cfg.wparams[0].value, sizeof(cfg.wparams[0].value), "%d", P);
	snprintf(cfg.wparams[1].name, sizeof(cfg.wparams[1].name), "exec");
	snprintf(cfg.wparams[1].value, sizeof(cfg.wparams[1].value), "%d", exec);
	snprintf(cfg.wparams[2].name, sizeof(cfg.wparams[2].name), "parent_threads");
	snprintf(cfg.wparams[2].value, sizeof(cfg.wparams[2].value), "%d", parent_threads);
	cfg.nwparams = 3;
	cfg.overrides[0].param = P_kpti;
	cfg.overrides[0].value = 0;
	cfg.noverrides = 1;
	struct tlbsim_resolved res;
	struct tlbsim_metrics m;
	char err[TLBSIM_ERRLEN];
	int rc = tlbsim_run(&cfg, &res, &m, err, sizeof(err));
	if (rc)
		fail_msg("fork_exec: %s", err);
	assert_int_equal(m.violations, 0);
	assert_true(m.ops >= T * (1 + 3));
	assert_true(m.ops_per_sec > 0);
	uint64_t f = m.ops;
	assert_int_equal(m.cow_faults, P * f);
	assert_int_equal(m.af_faults, P * f);
	/* (+ each extra thread's first write to its stack) */
	assert_int_equal(m.page_faults, T * P + 2 * P * f + (exec ? P * f : 0) +
					       (uint64_t)(T * (parent_threads - 1)));
	/* (kernel stacks freed through vfree_atomic count too) */
	assert_true(m.pages_freed >= P * f + T * P + (exec ? P * f : 0));
	return m;
}

static struct tlbsim_metrics run(const char *profile, int exec, uint64_t seed)
{
	return run_pt(profile, exec, seed, T, 1);
}

static void test_arm64(void **state)
{
	(void)state;
	for (int exec = 0; exec <= 1; exec++) {
		struct tlbsim_metrics m = run("arm64-4k", exec, 1);
		assert_int_equal(m.tlbi.aside1is, (uint64_t)(2 + exec) * m.ops + 2 * T);
		assert_int_equal(m.tlbi.vale1is, 2 * P * m.ops);
		assert_int_equal(m.tlbi.vae1is, 0);
		assert_int_equal(m.ipi_sent, 0);
	}
}

static void test_x86(void **state)
{
	(void)state;
	for (int exec = 0; exec <= 1; exec++) {
		struct tlbsim_metrics m = run("x86-24", exec, 1);
		assert_int_equal(m.flush_local_pages, P * m.ops);
		assert_int_equal(m.ipi_sent, 0);
		assert_int_equal(m.tlbi.vale1is + m.tlbi.aside1is, 0);
		/* at least dup_mmap's full flush of the parent per fork */
		assert_true(m.flush_full >= m.ops);
	}
}

/* a second thread per parent on a CPU of its own (2 spare CPUs for the
 * children): x86 - every fork's flush of the parent IPIs that CPU; arm64 -
 * still one ASIDE1IS per fork for the parent, no IPI */
static void test_parent_threads(void **state)
{
	(void)state;
	struct tlbsim_metrics m = run_pt("x86-24", 0, 1, 2 * T + 2, 2);
	assert_true(m.ipi_sent >= m.ops);
	m = run_pt("arm64-4k", 0, 1, 2 * T + 2, 2);
	assert_int_equal(m.tlbi.aside1is, 2 * m.ops + 2 * T);
	assert_int_equal(m.ipi_sent, 0);
}

static void test_deterministic(void **state)
{
	(void)state;
	struct tlbsim_metrics a = run("falkor-46", 1, 7), b = run("falkor-46", 1, 7);
	assert_memory_equal(&a, &b, sizeof(a));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_arm64),
		cmocka_unit_test(test_x86),
		cmocka_unit_test(test_parent_threads),
		cmocka_unit_test(test_deterministic),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
