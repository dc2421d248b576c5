/*
 * test_ttl_errata.c - arm64 FEAT_TTL level hints (knob arm64_ttl, profile
 * parameters ttl / ttl_ignored) and the x86 INVLPG Global-entry erratum
 * (parameter invlpg_global_miss, knob x86_invlpg_miss).
 *
 * Rules:
 *  - tlb_get_level (c4ab2cbc1d87, v5.9) hints the level of the only level
 *    of entries the gather cleared; a gather that freed a PTE table after
 *    its leaf flush has only cleared_pmds set, so `level` hints 2 and a
 *    TTL-honouring TLB keeps the walk entry to the freed table (I1);
 *    `leaf_only` (52218fcd61cb) gives no hint when tables were freed; a part
 *    that ignores the hint (ttl_ignored) and `none` are clean; the hint
 *    changes no TLBI count.
 *  - INVLPG on a part with the erratum and PCIDs leaves a Global (kernel)
 *    TLB entry; with x86_invlpg_miss=nopcid (ce0b15d11ad8) the kernel runs
 *    without PCIDs and INVLPG removes it.
 */
#include "test_util.h"

#define A 0x10000000ull
#define KEEP 0x10400000ull	/* same PMD table, another PTE table */

struct tctx {
	bool touched;
	int ran;
	uint64_t vae1is, vale1is, rvae1is;
};

static void t_touch(struct sim *s, struct sim_thread *t)
{
	struct tctx *c = t->arg;
	assert_int_equal(user_access(s, A, false), 0);
	c->touched = true;
}

static void t_unmap(struct sim *s, struct sim_thread *t)
{
	struct tctx *c = t->arg;
	uint64_t ps = hw_of(s)->geom.page_size;
	assert_true(sys_mmap(s, KEEP, ps, TLBSIM_MAP_PRIVATE) == KEEP);
	assert_int_equal(user_access(s, KEEP, true), 0);
	assert_true(sys_mmap(s, A, ps, TLBSIM_MAP_PRIVATE) == A);
	tsim_spawn(s, t_touch, c, 1);
	while (!c->touched)
		sim_step(s, YP_USER, 1000);
	uint64_t e0 = s->m.tlbi.vae1is, l0 = s->m.tlbi.vale1is, r0 = s->m.tlbi.rvae1is;
	assert_int_equal(sys_munmap(s, A, ps), 0);
	c->vae1is = s->m.tlbi.vae1is - e0;
	c->vale1is = s->m.tlbi.vale1is - l0;
	c->rvae1is = s->m.tlbi.rvae1is - r0;
	sim_step(s, YP_USER, (uint64_t)P(s, P_rcu_grace_ns) + 1000000u);
	c->ran = 1;
}

static int ttl_run(const char *profile, enum arm64_ttl_policy ttl, bool ignored, struct tctx *c)
{
	const int64_t ov[] = {P_ttl_ignored, ignored ? 1 : 0, -1};
	struct sim *s = tsim_new_p(profile, 2, NESTED_FULLMM, ov);
	machine_of(s)->policy.arm64_ttl = ttl;
	tsim_spawn(s, t_unmap, c, 0);
	tsim_run(s);
	assert_int_equal(c->ran, 1);
	int kind = tsim_violation(s)->kind;
	tsim_free(s);
	return kind;
}

static void test_ttl_level_hint_keeps_walk_entry(void **state)
{
	(void)state;
	struct tctx lvl = {0}, leaf = {0}, none = {0}, ign = {0}, nottl = {0};
	assert_int_equal(ttl_run("arm64-v84", ARM64_TTL_LEVEL, false, &lvl), INV_I1);
	assert_int_equal(ttl_run("arm64-v84", ARM64_TTL_LEAF_ONLY, false, &leaf), -1);
	assert_int_equal(ttl_run("arm64-v84", ARM64_TTL_NONE, false, &none), -1);
	assert_int_equal(ttl_run("arm64-v84", ARM64_TTL_LEVEL, true, &ign), -1);
	assert_int_equal(ttl_run("arm64-4k", ARM64_TTL_LEVEL, false, &nottl), -1);
	/* the hint is a field of the same TLBIs: one VALE1IS (tlb_end_vma),
	 * one op for the table free, whatever the hint - the free's gather
	 * has a PMD stride and is widened to 512 pages, so arm64-v84
	 * (FEAT_TLBIRANGE) takes one RVAE1IS and arm64-4k one VAE1IS; under
	 * none (kernels before v5.9, no range TLBIs either) arm64-v84 too
	 * takes the one VAE1IS of the PMD stride */
	struct tctx *all[] = {&lvl, &leaf, &none, &ign, &nottl};
	for (size_t i = 0; i < 5; i++) {
		bool range = all[i] != &nottl && all[i] != &none;
		assert_int_equal(all[i]->vale1is, 1);
		assert_int_equal(all[i]->vae1is, range ? 0 : 1);
		assert_int_equal(all[i]->rvae1is, range ? 1 : 0);
	}
}

/* ---- INVLPG erratum ---- */
struct kctx {
	int ran;
	bool survived;
	int64_t pcid;
};

static void k_body(struct sim *s, struct sim_thread *t)
{
	struct kctx *c = t->arg;
	struct hw *hw = hw_of(s);
	uint64_t ps = hw->geom.page_size;
	uint64_t va = vmalloc_range(s, ps, ps);
	kernel_access(s, va, false);
	assert_non_null(tc_peek(&hw->cpu[0].tlb, va >> hw->geom.page_shift, hw->geom.levels - 1,
				TC_TAG_GLOBAL));
	flush_tlb_kernel_range(s, va, va + ps);		/* one page: INVLPG */
	c->survived = tc_peek(&hw->cpu[0].tlb, va >> hw->geom.page_shift, hw->geom.levels - 1,
			      TC_TAG_GLOBAL) != NULL;
	c->pcid = P(s, P_pcid);
	c->ran = 1;
}

static struct kctx invlpg_run(const char *profile, enum x86_invlpg_miss_policy v)
{
	struct kctx c = {0};
	struct tlbsim_config cfg;
	tlbsim_config_init(&cfg);
	cfg.policy.x86_invlpg_miss = v;
	struct sim *s = tsim_new_pol(profile, 2, &cfg.policy, NULL);
	tsim_spawn(s, k_body, &c, 0);
	tsim_run(s);
	assert_int_equal(c.ran, 1);
	tsim_free(s);
	return c;
}

static void test_invlpg_erratum_leaves_global_entry(void **state)
{
	(void)state;
	struct kctx bad = invlpg_run("adl-16", X86_INVLPG_MISS_IGNORE);
	assert_true(bad.survived);
	assert_int_equal(bad.pcid, 1);
	struct kctx fixed = invlpg_run("adl-16", X86_INVLPG_MISS_NOPCID);
	assert_false(fixed.survived);
	assert_int_equal(fixed.pcid, 0);
	struct kctx ok = invlpg_run("x86-24", X86_INVLPG_MISS_IGNORE);
	assert_false(ok.survived);
	assert_int_equal(ok.pcid, 1);
}

static void test_presets(void **state)
{
	(void)state;
	struct {
		const char *v;
		int ttl, inv;
	} k[] = {{"5.8", ARM64_TTL_NONE, X86_INVLPG_MISS_IGNORE},
		 {"5.13", ARM64_TTL_LEVEL, X86_INVLPG_MISS_IGNORE},
		 {"6.0", ARM64_TTL_LEAF_ONLY, X86_INVLPG_MISS_IGNORE},
		 {"6.6", ARM64_TTL_LEAF_ONLY, X86_INVLPG_MISS_NOPCID}};
	for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
		struct tlbsim_policy p;
		tlbsim_policy_default(&p);
		p.given = 0;
		tlbsim_policy_apply_kernel(&p, tlbsim_kernel_find(k[i].v));
		assert_int_equal(p.arm64_ttl, k[i].ttl);
		assert_int_equal(p.x86_invlpg_miss, k[i].inv);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ttl_level_hint_keeps_walk_entry),
		cmocka_unit_test(test_invlpg_erratum_leaves_global_entry),
		cmocka_unit_test(test_presets),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
