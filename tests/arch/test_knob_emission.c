/*
 * What the nested_check and x86_lazy knobs emit (kernel-model 1.9, 4.3).
 */
#include "test_util.h"

struct ctx {
	uint64_t tlbi_before, tlbi_after;
	uint64_t aside_delta, vale_delta, full_delta;
};

/* madvise(DONTNEED) of a range with no pages while another gather is in
 * flight (tlb_flush_pending raised by hand): the gather records nothing. */
static void empty_zap_nested(struct sim *s, struct sim_thread *t)
{
	struct ctx *c = t->arg;
	uint64_t a = sys_mmap(s, 0, 1 << 20, TLBSIM_MAP_PRIVATE);
	tsim_mm(s, 0)->tlb_flush_pending++;
	uint64_t aside = s->m.tlbi.aside1is, vale = s->m.tlbi.vale1is, full = s->m.flush_full;
	sys_madvise_dontneed(s, a, 1 << 20);
	c->aside_delta = s->m.tlbi.aside1is - aside;
	c->vale_delta = s->m.tlbi.vale1is - vale;
	c->full_delta = s->m.flush_full - full;
	tsim_mm(s, 0)->tlb_flush_pending--;
}

/* Rule (99baac21e458, v4.14): with the nested check, a finish that sees
 * another gather in flight flushes even though it recorded nothing; with
 * nested=fullmm that is one ASIDE1IS on arm64. Without it (pre-4.14) an empty
 * gather flushes nothing. */
static void test_nested_check_arm64(void **state)
{
	for (int on = 0; on <= 1; on++) {
		struct ctx c = {0};
		struct sim *s = tsim_new("falkor-46", 4, NESTED_FULLMM);
		machine_of(s)->policy.nested_check = on;
		tsim_spawn(s, empty_zap_nested, &c, 1);
		tsim_run(s);
		assert_int_equal(c.aside_delta, on ? 1 : 0);
		assert_int_equal(c.vale_delta, 0);
		tsim_free(s);
	}
}

/* Same on x86: fullmm -> one full flush of the local CPU's PCID, or none. */
static void test_nested_check_x86(void **state)
{
	for (int on = 0; on <= 1; on++) {
		struct ctx c = {0};
		struct sim *s = tsim_new("x86-24", 4, NESTED_FULLMM);
		machine_of(s)->policy.nested_check = on;
		tsim_spawn(s, empty_zap_nested, &c, 1);
		tsim_run(s);
		assert_int_equal(c.full_delta, on ? 1 : 0);
		tsim_free(s);
	}
}

/* Rule (arch/x86/mm/tlb.c v4.20, native_flush_tlb_others): a flush that freed
 * page tables IPIs lazy-TLB CPUs too (x86_lazy=freed_tables); before
 * b956575bed91 lazy CPUs were never IPIed (x86_lazy=never). lazy_tables does
 * per iteration exactly one such flush with exactly one lazy CPU (the
 * writer thread's CPU after it exited; an IPIed lazy CPU switches to init_mm
 * and leaves mm_cpumask, so earlier writers' CPUs are not in it). */
static void run_lazy_tables_pcid(enum x86_lazy_policy lazy, int64_t iters, bool pcid,
				 struct tlbsim_metrics *m)
{
	struct tlbsim_config cfg;
	struct tlbsim_resolved res;
	char err[256];
	tlbsim_config_init(&cfg);
	cfg.workload = "lazy_tables";
	cfg.profile = "x86-24";
	cfg.cpus = 8;	/* writer threads land on CPUs 1..5, never on main's CPU 0 */
	cfg.iters = iters;
	cfg.policy.x86_lazy = lazy;
	if (!pcid) {
		cfg.overrides[cfg.noverrides].param = P_pcid;
		cfg.overrides[cfg.noverrides++].value = 0;
	}
	assert_int_equal(tlbsim_run(&cfg, &res, m, err, sizeof(err)), 0);
}

static void run_lazy_tables(enum x86_lazy_policy lazy, int64_t iters, struct tlbsim_metrics *m)
{
	run_lazy_tables_pcid(lazy, iters, true, m);
}

static void test_x86_lazy_ipis(void **state)
{
	struct tlbsim_metrics m;
	run_lazy_tables(X86_LAZY_FREED_TABLES, 5, &m);
	assert_int_equal(m.ipi_sent, 5);
	assert_int_equal(m.ipi_received, 5);
	assert_int_equal(m.violations, 0);
	run_lazy_tables(X86_LAZY_NEVER, 5, &m);
	assert_int_equal(m.ipi_sent, 0);
	assert_true(m.violations >= 1);	/* the lazy CPU's PSC reaches the freed table */
}

/* Rule (arch/x86/mm/tlb.c v4.14..v4.19, b956575bed91): enter_lazy_tlb goes
 * lazy only when tlb_defer_switch_to_init_mm() (no PCID); with PCID it
 * switches to init_mm at once, leaving mm_cpumask, so no flush IPIs it. A
 * lazy CPU stays in the mask and native_flush_tlb_others IPIs every CPU of
 * it, tables freed or not. Either way the freed table is unreachable. */
static void test_x86_lazy_defer(void **state)
{
	struct tlbsim_metrics m;
	run_lazy_tables_pcid(X86_LAZY_DEFER, 5, true, &m);
	assert_int_equal(m.ipi_sent, 0);	/* the writer's CPU left the mask */
	assert_int_equal(m.violations, 0);
	run_lazy_tables_pcid(X86_LAZY_DEFER, 5, false, &m);
	assert_int_equal(m.ipi_sent, 5);	/* the lazy CPU, once per iteration */
	assert_int_equal(m.ipi_received, 5);
	assert_int_equal(m.violations, 0);
	/* without PCID the v4.20 rule IPIs it too (tables were freed) */
	run_lazy_tables_pcid(X86_LAZY_FREED_TABLES, 5, false, &m);
	assert_int_equal(m.ipi_sent, 5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nested_check_arm64),
		cmocka_unit_test(test_nested_check_x86),
		cmocka_unit_test(test_x86_lazy_ipis),
		cmocka_unit_test(test_x86_lazy_defer),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
