/*
 * test_huge_memory.c - PMD-mapped transparent huge pages: the block (huge)
 * descriptor in the MMU and the leaf TLB (src/hw: mmu.c, invalidate.c).
 *
 * Rules:
 *  - hw: a present PMD-level descriptor with PTE_HUGE (x86 PS, arm64 level-2
 *    block) ends the walk: an access to any page of the 2 MiB block reads
 *    the levels down to the PMD only and fills ONE leaf TLB entry (TC_BLOCK,
 *    depth = the PMD table's, key = the block's first page); accesses to any
 *    other page of the block hit it without a walk;
 *  - hw: a by-VA invalidation (VALE1IS-like INV_VA_LEAF, INVLPG) of ANY page
 *    of the block removes the block entry, per CPU and as a broadcast, by
 *    address and by the dense scan; an address outside the block leaves it;
 *    a whole-tag flush removes it;
 *  - hw: 4K leaves next to a block entry keep their behaviour (a flush of a
 *    4K page outside the block removes that page only);
 *  - fault: after madvise(MADV_HUGEPAGE) a write fault in a 2 MiB-aligned
 *    range the private anonymous VMA covers maps one huge page with a block
 *    entry (do_huge_pmd_anonymous_page), cached as one TLB entry; without
 *    the madvise the same fault maps a 4K PTE;
 *  - zap: munmap of the whole block clears the entry and records a
 *    PMD-sized flush (tlb_remove_pmd_tlb_entry: cleared_pmds, PMD stride):
 *    x86 one INVLPG (1 page <= the ceiling), no full flush; arm64 one TLBI
 *    VALE1IS; the page is freed after the flush and no block entry remains;
 *  - split: __split_huge_pmd flushes the block entry (pmdp_invalidate) from
 *    every CPU before the PTE table it populates is reachable; the 512 PTEs
 *    map the huge page, a later access caches a 4K entry; on arm64 the
 *    flush is flush_pmd_tlb_range: from v5.9 (arm64_ttl not none) one
 *    VAE1IS of PMD stride, before it the generic page-stride flush_tlb_range,
 *    whose 512 pages reach MAX_TLBI_OPS: one ASIDE1IS;
 *  - oracle: a block entry used after its huge page was freed without a
 *    flush is reported (I1).
 */
#include "test_util.h"

#define AT 0x40000000ull
#define MB2 (2ull << 20)
#define CPU 1

struct ctx {
	const char *profile;
	uint32_t frame;
	int walk_levels, hit_levels[3];
	uint32_t nblock_after_fill, leaves_after_fill;
	bool removed_in_block[4];
	bool kept_outside;
	bool removed_by_tag;
	bool small_one_removed;
	uint32_t translated;
};

static uint32_t tag_of(struct sim *s)
{
	return machine_of(s)->arch->user_tag(s, CPU);
}

/* install a block descriptor for [AT, AT + PMD_SIZE) mapping frame f */
static pte_t *install_block(struct sim *s, uint32_t f)
{
	struct hw *hw = hw_of(s);
	const struct pt_geom *g = &hw->geom;
	uint32_t table = tsim_mm(s, 0)->pgd;
	for (int d = 0; d < g->depth_pmd; d++)
		table = __pte_alloc(s, table, d, AT);
	uint64_t idx = pt_index(g, g->depth_pmd, AT);
	pte_t e = pfn_pte(f, PTE_VALID | PTE_HUGE | PTE_USER | PTE_YOUNG | PTE_WRITE);
	e = fmt_pte_mkdirty(hw->fmt, e);
	set_entry(s, table, idx, e);
	return &table_of(hw, table)[idx];
}

/* cpu caches the block entry of [AT, AT + PMD_SIZE) (count: 0 or 1) */
static uint32_t block_at(struct sim *s, int cpu)
{
	const struct pt_geom *g = &hw_of(s)->geom;
	return tc_peek(&hw_of(s)->cpu[cpu].tlb, hw_block_key(g, AT >> g->page_shift), g->depth_pmd,
		       machine_of(s)->arch->user_tag(s, cpu)) != NULL;
}

static int access(struct sim *s, uint64_t va)
{
	struct hw_access acc;
	hw_access(hw_of(s), CPU, tsim_mm(s, 0)->pgd, tag_of(s), va, false, &acc);
	assert_false(acc.fault);
	return acc.levels_read;
}

static void fill(struct sim *s)
{
	assert_int_equal(block_at(s, CPU), 0);
	assert_int_not_equal(access(s, AT + 5 * hw_of(s)->geom.page_size), 0);
	assert_int_equal(block_at(s, CPU), 1);
}

static void hw_fn(struct sim *s, struct sim_thread *t)
{
	struct ctx *c = t->arg;
	struct hw *hw = hw_of(s);
	const struct pt_geom *g = &hw->geom;
	uint64_t pmd = 1ull << g->pmd_shift;
	/* four 4K leaves elsewhere: single-address ops take the by-address
	 * path (fewer op addresses than cached entries) */
	uint64_t small = tsim_map_written(s, 4);
	c->frame = alloc_zeroed_frame(s, FRAME_DATA, 0, 0);
	pte_t *pmdp = install_block(s, c->frame);
	struct tcache *tlb = &hw->cpu[CPU].tlb;
	uint32_t leaves0 = tlb->ndense;

	c->walk_levels = access(s, AT + 7 * g->page_size);
	c->hit_levels[0] = access(s, AT);
	c->hit_levels[1] = access(s, AT + pmd - g->page_size);
	c->hit_levels[2] = access(s, AT + pmd / 2 + 123);
	c->nblock_after_fill = block_at(s, CPU);
	c->leaves_after_fill = tlb->ndense - leaves0;
	c->translated = tsim_translate(s, CPU, tsim_mm(s, 0), AT + pmd - 1);

	/* by address, one CPU: the last page of the block */
	struct inv_op op = {.kind = INV_VA_LEAF, .tag = tag_of(s), .start = AT + pmd - g->page_size,
			    .end = AT + pmd, .stride = g->page_size};
	hw_invalidate_cpu(hw, CPU, &op);
	c->removed_in_block[0] = block_at(s, CPU) == 0;

	/* the dense scan: a page-by-page flush of the whole block */
	fill(s);
	op.start = AT + g->page_size;
	op.end = AT + pmd;
	hw_invalidate_cpu(hw, CPU, &op);
	c->removed_in_block[1] = block_at(s, CPU) == 0;

	/* a broadcast of one page in the middle (INVLPG on x86, VAE1IS-like
	 * on arm64) */
	fill(s);
	struct inv_op b = {.kind = machine_is_x86(s) ? INV_X86_INVLPG : INV_VA_ALL,
			   .tag = tag_of(s), .start = AT + pmd / 2, .end = AT + pmd / 2 + g->page_size,
			   .stride = g->page_size};
	hw_invalidate_bcast(hw, &b, NULL, NULL);
	c->removed_in_block[2] = block_at(s, CPU) == 0;

	/* a PMD-stride range op starting at the block (a THP zap's flush) */
	fill(s);
	struct inv_op r = {.kind = INV_VA_LEAF, .tag = tag_of(s), .start = AT, .end = AT + pmd,
			   .stride = pmd};
	hw_invalidate_bcast(hw, &r, NULL, NULL);
	c->removed_in_block[3] = block_at(s, CPU) == 0;

	/* outside the block: the next page after it, and the page before */
	fill(s);
	struct inv_op o = {.kind = INV_VA_LEAF, .tag = tag_of(s), .start = AT + pmd,
			   .end = AT + pmd + g->page_size, .stride = g->page_size};
	hw_invalidate_bcast(hw, &o, NULL, NULL);
	o.start = AT - g->page_size;
	o.end = AT;
	hw_invalidate_cpu(hw, CPU, &o);
	c->kept_outside = block_at(s, CPU) == 1;

	/* a 4K page: that leaf only */
	uint32_t before = tlb->ndense;
	o.start = small + g->page_size;
	o.end = o.start + g->page_size;
	hw_invalidate_cpu(hw, CPU, &o);
	c->small_one_removed = tlb->ndense == before - 1 && block_at(s, CPU) == 1 &&
			       !tsim_leaf_of(s, CPU, o.start) && tsim_leaf_of(s, CPU, small);

	struct inv_op all = {.kind = INV_TAG, .tag = tag_of(s)};
	hw_invalidate_cpu(hw, CPU, &all);
	c->removed_by_tag = block_at(s, CPU) == 0;

	/* tear down by hand: the descriptor and the frame */
	*pmdp = 0;
	hw_invalidate_cpu(hw, CPU, &all);
	frame_free(hw, c->frame);
}

static void run_hw(const char *profile)
{
	struct sim *s = tsim_new(profile, 2, NESTED_FULLMM);
	struct ctx c = {.profile = profile};
	tsim_spawn(s, hw_fn, &c, CPU);
	tsim_run(s);
	const struct pt_geom *g = &hw_of(s)->geom;
	assert_int_equal(c.walk_levels, g->depth_pmd + 1);
	for (int i = 0; i < 3; i++)
		assert_int_equal(c.hit_levels[i], 0);
	assert_int_equal(c.nblock_after_fill, 1);
	assert_int_equal(c.leaves_after_fill, 1);
	assert_int_equal(c.translated, c.frame);
	for (int i = 0; i < 4; i++)
		assert_true(c.removed_in_block[i]);
	assert_true(c.kept_outside);
	assert_true(c.small_one_removed);
	assert_true(c.removed_by_tag);
	tsim_free(s);
}

static void test_block_entry_x86(void **state)
{
	(void)state;
	run_hw("x86-24");
}

static void test_block_entry_arm64(void **state)
{
	(void)state;
	run_hw("falkor-46");
}

struct mctx {
	bool madvise;
	bool huge_pmd, fault_ok, hit_ok;
	uint32_t nblock_fault, frame;
	struct tlbsim_metrics m0, m1;
	uint32_t nblock_after_zap, gen_at_fault;
	bool freed;
	/* split */
	int split_ret;
	struct tlbsim_metrics split0, split1;
	uint32_t other_nblock_before, other_nblock_after, pte_frame, refcount_split;
	bool small_leaf;
	bool freed_after_munmap;
	/* the other thread's handshake */
	uint64_t a;
	bool faulted, other_cached, split_done;
};

static pte_t pmd_at(struct sim *s, uint64_t va)
{
	pte_t *p = hw_pmd_lookup(hw_of(s), tsim_mm(s, 0)->pgd, va);
	return p ? *p : 0;
}

static void fault_zap_fn(struct sim *s, struct sim_thread *t)
{
	struct mctx *c = t->arg;
	struct hw *hw = hw_of(s);
	uint64_t a = sys_mmap(s, AT, 2 * MB2, TLBSIM_MAP_PRIVATE);
	assert_int_equal(a, AT);
	if (c->madvise)
		assert_int_equal(sys_madvise_hugepage(s, a, 2 * MB2), 0);
	c->fault_ok = user_access(s, a + 8192, true) == 0;
	c->huge_pmd = (pmd_at(s, a) & PTE_HUGE) != 0;
	c->hit_ok = user_access(s, a + MB2 - 1, false) == 0;
	c->nblock_fault = block_at(s, CPU);
	if (!c->huge_pmd)
		return;
	c->frame = pte_pfn(pmd_at(s, a));
	c->gen_at_fault = frame_of(hw, c->frame)->gen;
	c->m0 = *hw->m;
	assert_int_equal(sys_munmap(s, a, MB2), 0);
	c->m1 = *hw->m;
	c->nblock_after_zap = block_at(s, CPU) + block_at(s, 0);
	c->freed = frame_of(hw, c->frame)->gen != c->gen_at_fault;
	sys_munmap(s, a + MB2, MB2);
}

static void run_fault_zap(const char *profile, bool madv, struct mctx *c)
{
	struct sim *s = tsim_new(profile, 2, NESTED_FULLMM);
	c->madvise = madv;
	tsim_spawn(s, fault_zap_fn, c, CPU);
	tsim_run(s);
	assert_int_equal(tsim_violation(s)->kind, -1);
	tsim_free(s);
}

static void test_fault_needs_madvise(void **state)
{
	(void)state;
	struct mctx c = {0};
	run_fault_zap("x86-24", false, &c);
	assert_true(c.fault_ok);
	assert_false(c.huge_pmd);
	assert_int_equal(c.nblock_fault, 0);
}

static void test_fault_zap_x86(void **state)
{
	(void)state;
	struct mctx c = {0};
	run_fault_zap("x86-24", true, &c);
	assert_true(c.fault_ok && c.huge_pmd && c.hit_ok);
	assert_int_equal(c.nblock_fault, 1);
	/* stride PMD_SHIFT: one page to flush, INVLPG, no full flush */
	assert_int_equal(c.m1.flush_full - c.m0.flush_full, 0);
	assert_int_equal(c.m1.flush_local_pages - c.m0.flush_local_pages, 1);
	assert_int_equal(c.nblock_after_zap, 0);
	assert_true(c.freed);
}

static void test_fault_zap_arm64(void **state)
{
	(void)state;
	struct mctx c = {0};
	run_fault_zap("arm64-4k", true, &c);
	assert_true(c.fault_ok && c.huge_pmd && c.hit_ok);
	assert_int_equal(c.nblock_fault, 1);
	/* stride PMD_SIZE, last level: one TLBI VALE1IS */
	assert_int_equal(c.m1.tlbi.vale1is - c.m0.tlbi.vale1is, 1);
	assert_int_equal(c.m1.tlbi.vae1is - c.m0.tlbi.vae1is, 0);
	assert_int_equal(c.m1.tlbi.aside1is - c.m0.tlbi.aside1is, 0);
	assert_int_equal(c.nblock_after_zap, 0);
	assert_true(c.freed);
}

#define OTHER 0

static void split_fn(struct sim *s, struct sim_thread *t)
{
	struct mctx *c = t->arg;
	struct hw *hw = hw_of(s);
	uint64_t a = sys_mmap(s, AT, MB2, TLBSIM_MAP_PRIVATE);
	assert_int_equal(sys_madvise_hugepage(s, a, MB2), 0);
	assert_int_equal(user_access(s, a, true), 0);
	c->frame = pte_pfn(pmd_at(s, a));
	c->gen_at_fault = frame_of(hw, c->frame)->gen;
	/* a thread of this mm on another CPU caches the block too */
	c->a = a;
	c->faulted = true;
	TSIM_WAIT_UNTIL(s, c->other_cached);
	c->other_nblock_before = block_at(s, OTHER);
	c->split0 = s->m;
	c->split_ret = sys_split_huge_pmd(s, a);
	c->split1 = s->m;
	c->split_done = true;
	c->other_nblock_after = block_at(s, OTHER) + block_at(s, CPU);
	c->pte_frame = tsim_pte_frame(s, tsim_mm(s, 0), a + 511 * 4096);
	c->refcount_split = frame_of(hw, c->frame)->refcount;
	assert_int_equal(user_access(s, a + 4096, false), 0);
	c->small_leaf = tsim_leaf_of(s, CPU, a + 4096) != NULL;
	assert_int_equal(sys_munmap(s, a, MB2), 0);
	c->freed_after_munmap = frame_of(hw, c->frame)->gen != c->gen_at_fault;
}

static void split_other_fn(struct sim *s, struct sim_thread *t)
{
	struct mctx *c = t->arg;
	TSIM_WAIT_UNTIL(s, c->faulted);
	assert_int_equal(user_access(s, c->a + 12345, false), 0);
	c->other_cached = true;
	TSIM_WAIT_UNTIL(s, c->split_done);
}

static void run_split_ttl(const char *profile, enum arm64_ttl_policy ttl, struct mctx *out)
{
	struct tlbsim_config cfg;
	tlbsim_config_init(&cfg);
	cfg.policy.nested = NESTED_FULLMM;
	cfg.policy.arm64_ttl = ttl;
	struct sim *s = tsim_new_pol(profile, 2, &cfg.policy, NULL);
	struct mctx c = {0};
	tsim_spawn(s, split_fn, &c, CPU);
	tsim_spawn(s, split_other_fn, &c, OTHER);
	tsim_run(s);
	assert_int_equal(tsim_violation(s)->kind, -1);
	assert_int_equal(c.other_nblock_before, 1);
	assert_int_equal(c.split_ret, 1);
	assert_int_equal(c.other_nblock_after, 0);
	assert_int_equal(c.pte_frame, c.frame);
	assert_int_equal(c.refcount_split, 512);
	assert_true(c.small_leaf);
	assert_true(c.freed_after_munmap);
	tsim_free(s);
	if (out)
		*out = c;
}

static void run_split(const char *profile)
{
	run_split_ttl(profile, ARM64_TTL_LEAF_ONLY, NULL);
}

static void test_split_x86(void **state)
{
	(void)state;
	run_split("x86-24");
}

static void test_split_arm64(void **state)
{
	(void)state;
	struct mctx c;
	run_split_ttl("arm64-4k", ARM64_TTL_LEAF_ONLY, &c);
	assert_int_equal(c.split1.tlbi.vae1is - c.split0.tlbi.vae1is, 1);
	assert_int_equal(c.split1.tlbi.aside1is - c.split0.tlbi.aside1is, 0);
	run_split_ttl("arm64-4k", ARM64_TTL_LEVEL, &c);
	assert_int_equal(c.split1.tlbi.vae1is - c.split0.tlbi.vae1is, 1);
	run_split_ttl("arm64-4k", ARM64_TTL_NONE, &c);	/* before v5.9 */
	assert_int_equal(c.split1.tlbi.vae1is - c.split0.tlbi.vae1is, 0);
	assert_int_equal(c.split1.tlbi.aside1is - c.split0.tlbi.aside1is, 1);
}

/* the huge page freed without a flush while the block entry is cached */
static void stale_fn(struct sim *s, struct sim_thread *t)
{
	(void)t;
	struct hw *hw = hw_of(s);
	uint64_t a = sys_mmap(s, AT, MB2, TLBSIM_MAP_PRIVATE);
	assert_int_equal(sys_madvise_hugepage(s, a, MB2), 0);
	assert_int_equal(user_access(s, a, true), 0);
	pte_t *pmdp = hw_pmd_lookup(hw, tsim_mm(s, 0)->pgd, a);
	uint32_t f = pte_pfn(*pmdp);
	*pmdp = 0;
	frame_of(hw, f)->refcount = 0;
	frame_free(hw, f);
	user_access(s, a + MB2 - 4096, false);
}

static void test_stale_block_is_i1(void **state)
{
	(void)state;
	struct sim *s = tsim_new("x86-24", 2, NESTED_FULLMM);
	tsim_spawn(s, stale_fn, NULL, CPU);
	tsim_run(s);
	assert_int_equal(tsim_violation(s)->kind, INV_I1);
	tsim_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_block_entry_x86),
		cmocka_unit_test(test_block_entry_arm64),
		cmocka_unit_test(test_fault_needs_madvise),
		cmocka_unit_test(test_fault_zap_x86),
		cmocka_unit_test(test_fault_zap_arm64),
		cmocka_unit_test(test_split_x86),
		cmocka_unit_test(test_split_arm64),
		cmocka_unit_test(test_stale_block_is_i1),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
