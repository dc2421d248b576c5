/*
 * test_stress_ng.c - the stress-ng-tlb workload (src/workload/stress_ng.c),
 * checked against its event trace, one rule per test:
 *  - pinning and rotation: child i (thread i + 1, forked after the parent,
 *    thread 0) starts on CPU i and stays there until its first move; every
 *    move goes from the CPU it ran on to the next one (mod CPUs), the k-th
 *    not before k rotation periods after its first event, and there is one
 *    per period elapsed (within one loop); the parent moves first to the
 *    one CPU no child starts on, then, whenever a child has rotated onto its
 *    CPU, to the CPU that child left; rotate=0: children never move;
 *  - one bogo op per completed loop of a child (5 mprotect calls and one
 *    msync each) or of the parent (3 msync calls, no mprotect): ops =
 *    child mprotects / 5 + parent msyncs / 3;
 *  - tlb_shootdowns counts the flush handler calls (irq_tlb_count): on x86
 *    one per IPI target the user flushes sent (the workload makes no kernel
 *    flush: ipi_received), and under v5.1 up to one more per flush that
 *    freed no tables, which the sender runs itself when it runs the mm
 *    (on_each_cpu_cond_mask); on arm64 (broadcast TLBIs) it is 0, and so are
 *    both rates; the rates are counts in the window over its length;
 *  - determinism: the same seed gives the same metrics, byte for byte;
 *  - bad parameters are refused with a one-line message naming them.
 */
#include "test_util.h"

#define MAXT 16

struct ev {
	uint64_t mprotects[MAXT], msyncs[MAXT];
	int first_cpu[MAXT];
	uint64_t first_time[MAXT], last_time[MAXT];
	int nmig[MAXT];
	uint64_t mig_time[MAXT][256];
	int mig_from[MAXT][256], mig_to[MAXT][256];
	bool moved_off[MAXT];		/* a record on another CPU than expected */
	uint64_t ipi_targets;
	uint64_t cond_rounds;	/* flushes that freed no tables and IPIed others */
};

static void cfg_init(struct tlbsim_config *cfg, const char *profile, int cpus, const char *procs,
		     const char *rotate, uint64_t duration_ns, uint64_t seed)
{
	tlbsim_config_init(cfg);
	cfg->workload = "stress-ng-tlb";
	cfg->profile = profile;
	cfg->cpus = cpus;
	cfg->seed = seed;
	if (duration_ns)
		cfg->duration_ns = duration_ns;
	else
		cfg->iters = 3;
	const char *kv[][2] = {{"procs", procs}, {"rotate", rotate}, {"pages", "64"}};
	for (int i = 0; i < 3; i++) {
		snprintf(cfg->wparams[i].name, sizeof(cfg->wparams[i].name), "%s", kv[i][0]);
		snprintf(cfg->wparams[i].value, sizeof(cfg->wparams[i].value), "%s", kv[i][1]);
	}
	cfg->nwparams = 3;
	cfg->overrides[0].param = P_kpti;
	cfg->overrides[0].value = 0;
	cfg->noverrides = 1;
}

static struct tlbsim_metrics run_traced(const struct tlbsim_config *cfg, struct ev *e)
{
	char err[TLBSIM_ERRLEN];
	struct tlbsim_resolved res;
	if (tlbsim_resolve(cfg, &res, err, sizeof(err)))
		fail_msg("resolve: %s", err);
	struct trace_buf tb = {0};
	struct core_opts o = {.want_kind = -1, .trace = e ? &tb : NULL};
	struct run_outcome out;
	if (tlbsim_run_one(cfg, &res, &o, &out, err, sizeof(err)))
		fail_msg("stress-ng-tlb: %s", err);
	assert_int_equal(out.m.violations, 0);
	if (!e)
		return out.m;
	memset(e, 0, sizeof(*e));
	for (int i = 0; i < MAXT; i++)
		e->first_cpu[i] = -1;
	int cur[MAXT];
	for (uint32_t k = 0; k < tb.n; k++) {
		const struct trace_rec *r = &tb.r[k];
		if (r->pt == &tp_ipi_target)
			e->ipi_targets++;
		if (r->pt == &tp_ipi_send_cpumask && r->b == 0)
			e->cond_rounds++;
		int t = r->tid;
		if (t < 0 || t >= MAXT || r->cpu < 0)
			continue;
		if (r->pt->flags & (SP_COUNTER | SP_IDLE))
			continue;		/* not an event of the thread */
		if (e->first_cpu[t] < 0) {
			e->first_cpu[t] = r->cpu;
			e->first_time[t] = r->time;
			cur[t] = r->cpu;
		}
		e->last_time[t] = r->time;
		if (r->pt == &tp_sched_migrate) {
			int n = e->nmig[t]++;
			assert_true(n < 256);
			e->mig_time[t][n] = r->time;
			e->mig_from[t][n] = (int)r->a;
			e->mig_to[t][n] = (int)r->b;
			cur[t] = (int)r->b;
			continue;
		}
		if (r->cpu != cur[t])
			e->moved_off[t] = true;
		if (r->pt == &tp_syscall && r->a == SYS_MPROTECT)
			e->mprotects[t]++;
		if (r->pt == &tp_syscall && r->a == SYS_MSYNC)
			e->msyncs[t]++;
	}
	trace_buf_free(&tb);
	return out.m;
}

/* the CPU child c (thread c + 1, started on CPU c) is on at time `at` */
static int child_cpu_at(const struct ev *e, int c, uint64_t at)
{
	int cpu = c;
	for (int k = 0; k < e->nmig[c + 1] && e->mig_time[c + 1][k] <= at; k++)
		cpu = e->mig_to[c + 1][k];
	return cpu;
}

#define CPUS 4
#define PROCS 3
#define ROTATE_NS 200000u

static void test_pinned_and_rotated(void **state)
{
	(void)state;
	struct tlbsim_config cfg;
	cfg_init(&cfg, "x86-24", CPUS, "3", "200us", 2000000, 1);
	static struct ev e;
	run_traced(&cfg, &e);
	/* the parent: first to CPU PROCS (the one CPU without a child); every
	 * later move goes from a CPU a child is on to one no child is on */
	assert_int_equal(e.first_cpu[0], 0);
	assert_true(e.nmig[0] >= 2);
	assert_int_equal(e.mig_from[0][0], 0);
	assert_int_equal(e.mig_to[0][0], PROCS);
	for (int k = 1; k < e.nmig[0]; k++) {
		bool from_taken = false, to_taken = false;
		for (int c = 0; c < PROCS; c++) {
			int cpu = child_cpu_at(&e, c, e.mig_time[0][k]);
			from_taken |= cpu == e.mig_from[0][k];
			to_taken |= cpu == e.mig_to[0][k];
		}
		assert_true(from_taken);
		assert_false(to_taken);
	}
	for (int i = 0; i < PROCS; i++) {
		int t = i + 1;
		assert_int_equal(e.first_cpu[t], i);
		assert_false(e.moved_off[t]);
		int cpu = i;
		for (int k = 0; k < e.nmig[t]; k++) {
			assert_int_equal(e.mig_from[t][k], cpu);
			assert_int_equal(e.mig_to[t][k], (cpu + 1) % CPUS);
			cpu = (cpu + 1) % CPUS;
			assert_true(e.mig_time[t][k] >= e.first_time[t] + (uint64_t)(k + 1) * ROTATE_NS);
		}
		/* one move per period elapsed, give or take the loop in progress */
		uint64_t periods = (e.last_time[t] - e.first_time[t]) / ROTATE_NS;
		assert_true(periods >= 5);
		assert_true((uint64_t)e.nmig[t] + 1 >= periods);
		assert_true((uint64_t)e.nmig[t] <= periods);
	}
}

static void test_rotate_zero_stays_pinned(void **state)
{
	(void)state;
	struct tlbsim_config cfg;
	cfg_init(&cfg, "arm64-4k", CPUS, "3", "0", 1000000, 1);
	static struct ev e;
	run_traced(&cfg, &e);
	for (int i = 0; i < PROCS; i++) {
		assert_int_equal(e.first_cpu[i + 1], i);
		assert_int_equal(e.nmig[i + 1], 0);
		assert_false(e.moved_off[i + 1]);
	}
}

static void test_bogo_op_definition(void **state)
{
	(void)state;
	struct tlbsim_config cfg;
	cfg_init(&cfg, "x86-24", CPUS, "3", "100us", 0, 7);
	static struct ev e;
	struct tlbsim_metrics m = run_traced(&cfg, &e);
	assert_int_equal(e.mprotects[0], 0);
	assert_int_equal(e.msyncs[0] % 3, 0);
	uint64_t loops = e.msyncs[0] / 3;
	assert_true(loops >= 4);		/* warm-up + 3 measured */
	for (int t = 1; t <= PROCS; t++) {
		assert_int_equal(e.mprotects[t] % 5, 0);
		assert_int_equal(e.msyncs[t], e.mprotects[t] / 5);
		assert_true(e.mprotects[t] / 5 >= 4);
		loops += e.mprotects[t] / 5;
	}
	assert_int_equal(m.ops, loops);
	assert_int_equal(m.bogo_ops_per_sec, m.ops_per_sec);
	assert_true(m.bogo_ops_per_sec > 0);
	assert_true(m.bogo_ops_per_sec <= m.ops * 1000000000u / m.window_ns);
}

static void test_shootdowns_are_flush_ipis_received(void **state)
{
	(void)state;
	struct tlbsim_config cfg;
	cfg_init(&cfg, "x86-24", CPUS, "3", "100us", 2000000, 3);
	static struct ev e;
	struct tlbsim_metrics m = run_traced(&cfg, &e);
	assert_int_equal(m.kernel_flushes, 0);
	assert_true(m.tlb_shootdowns > 0);
	assert_int_equal(m.ipi_received, e.ipi_targets);
	/* at most one sender call per flush that freed no tables: none when
	 * the sender does not run the mm (msync's page_mkclean flushes the
	 * other processes' mms) */
	assert_true(m.tlb_shootdowns > e.ipi_targets);
	assert_true(m.tlb_shootdowns <= e.ipi_targets + e.cond_rounds);
	assert_true(m.tlb_shootdowns_per_sec > 0);
	assert_true(m.tlb_shootdowns_per_sec <= m.tlb_shootdowns * 1000000000u / m.window_ns);
	assert_true(m.ipis_per_sec > 0 && m.ipis_per_sec < m.tlb_shootdowns_per_sec);
	/* arm64: broadcast TLBIs, no flush IPI */
	cfg_init(&cfg, "arm64-4k", CPUS, "3", "100us", 1000000, 3);
	m = run_traced(&cfg, NULL);
	assert_true(m.tlbi.vae1is + m.tlbi.vale1is > 0);
	assert_int_equal(m.tlb_shootdowns, 0);
	assert_int_equal(m.tlb_shootdowns_per_sec, 0);
	assert_int_equal(m.ipis_per_sec, 0);
	assert_true(m.bogo_ops_per_sec > 0);
	assert_true(strstr(m.notes, "MADV_COLLAPSE") != NULL);
}

static void test_deterministic(void **state)
{
	(void)state;
	struct tlbsim_config cfg;
	cfg_init(&cfg, "x86-24", CPUS, "auto", "100us", 0, 11);
	struct tlbsim_metrics a = run_traced(&cfg, NULL);
	struct tlbsim_metrics b = run_traced(&cfg, NULL);
	assert_memory_equal(&a, &b, sizeof(a));
	cfg.seed = 12;
	struct tlbsim_metrics c = run_traced(&cfg, NULL);
	assert_true(c.wall_ns != a.wall_ns || c.ops != a.ops);
}

static void expect_bad(const char *name, const char *value, const char *msg)
{
	struct tlbsim_config cfg;
	cfg_init(&cfg, "x86-24", CPUS, "auto", "1s", 0, 1);
	snprintf(cfg.wparams[3].name, sizeof(cfg.wparams[3].name), "%s", name);
	snprintf(cfg.wparams[3].value, sizeof(cfg.wparams[3].value), "%s", value);
	cfg.nwparams = 4;
	struct tlbsim_resolved res;
	struct tlbsim_metrics m;
	char err[TLBSIM_ERRLEN];
	assert_int_equal(tlbsim_run(&cfg, &res, &m, err, sizeof(err)), TLBSIM_EINVAL);
	if (!strstr(err, msg))
		fail_msg("%s=%s: '%s' does not say '%s'", name, value, err, msg);
	assert_null(strchr(err, '\n'));
}

static void test_bad_parameters(void **state)
{
	(void)state;
	expect_bad("procs", "5", "procs=5: want auto or 1 to 4");
	expect_bad("procs", "x", "procs=x");
	expect_bad("rotate", "10", "rotate=10: want a simulated period");
	expect_bad("rotate", "5min", "rotate=5min");
	expect_bad("file_pages", "0", "file_pages=0: want 1 to 65536");
	expect_bad("fs", "btrfs", "fs=btrfs: want ext4 or tmpfs");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pinned_and_rotated),
		cmocka_unit_test(test_rotate_zero_stays_pinned),
		cmocka_unit_test(test_bogo_op_definition),
		cmocka_unit_test(test_shootdowns_are_flush_ipis_received),
		cmocka_unit_test(test_deterministic),
		cmocka_unit_test(test_bad_parameters),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
