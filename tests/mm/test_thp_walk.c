/*
 * test_thp_walk.c - the walkers that meet a PMD-mapped anonymous THP
 * (src/mm: gup_fast, khugepaged.c; gup_pin, migrate.c; sys_collapse;
 * reclaim, rmap.c; ksm_merge, ksm.c; sys_migrate_vma, migrate_device.c;
 * split_huge_page_at, huge_memory.c).
 *
 * Rules:
 *  - gup_fast on a huge PMD entry gets the huge page at the PMD level (1),
 *    holds a reference on it during the walk (refcount raised) and gives it
 *    back (refcount as before);
 *  - gup_fast: a split of the PMD between the walk's read of the entry and
 *    its re-check makes the walk fail (0) and drop its reference, on arm64
 *    (the split's broadcast TLBI does not wait for the walk) and on x86 (the
 *    split's flush IPI waits for the walk's IRQs-off section, but
 *    pmdp_invalidate changed the entry before that flush);
 *  - collapse of a range already PMD-mapped does nothing (0): the PMD entry
 *    is the same block entry, the page the same, no TLB flush;
 *  - pin of an address in a huge PMD takes a reference on the huge page
 *    (refcount 2); the page outlives a munmap while pinned and unpin frees
 *    it;
 *  - reclaim, ksm_merge and migrate on a THP first split it: afterwards the
 *    PMD entry points to a PTE table, no CPU's TLB holds the block entry,
 *    and each subpage is a page of its own (reclaim: every page is kept, no
 *    swap; ksm: the subpage is merged with the other page; migrate: all 512
 *    subpages are migrated to new pages);
 *  - a pinned THP cannot be split (can_split_huge_page): reclaim leaves it
 *    PMD-mapped;
 *  - MADV_FREE of a THP splits it too, then frees each base page lazily.
 */
#include "test_util.h"

#define AT 0x40000000ull
#define MB2 (2ull << 20)
#define CPU 1
#define OTHER 0

enum op { OP_GUP, OP_GUP_SPLIT, OP_COLLAPSE, OP_PIN, OP_RECLAIM, OP_RECLAIM_PINNED, OP_KSM,
	  OP_MIGRATE, OP_FREE };

struct ctx {
	enum op op;
	/* handshake with the other CPU's thread, which caches the block */
	bool faulted, other_cached, done;
	/* results */
	uint32_t head, gen_head;
	pte_t pmd_before, pmd_after;
	int64_t ret, ret2;
	uint32_t refcount_during, refcount_after, refcount_mid;
	uint32_t blocks_before, blocks_after;
	uint32_t sub_frame, sub_refcount, frame_at2;
	bool head_freed, head_freed_mid, sub_lazyfree;
	uint64_t flushes;
	/* the racing splitter (OP_GUP_SPLIT) */
	int64_t split_ret;
	bool split_done, walked;
};

static pte_t pmd_at(struct sim *s, uint64_t va)
{
	pte_t *p = hw_pmd_lookup(hw_of(s), tsim_mm(s, 0)->pgd, va);
	return p ? *p : 0;
}

static uint32_t block_at(struct sim *s, int cpu)
{
	const struct pt_geom *g = &hw_of(s)->geom;
	return tc_peek(&hw_of(s)->cpu[cpu].tlb, hw_block_key(g, AT >> g->page_shift), g->depth_pmd,
		       machine_of(s)->arch->user_tag(s, cpu)) != NULL;
}

static uint64_t flushes(struct sim *s)
{
	const struct tlbsim_metrics *m = hw_of(s)->m;
	return m->flush_full + m->flush_local_pages + m->tlbi.vale1is + m->tlbi.vae1is +
	       m->tlbi.aside1is + s->m.ipi_sent;
}

static void main_fn(struct sim *s, struct sim_thread *t)
{
	struct ctx *c = t->arg;
	struct hw *hw = hw_of(s);
	struct mm_struct *mm = tsim_mm(s, 0);
	uint64_t ps = hw->geom.page_size;
	assert_int_equal(sys_mmap(s, AT, MB2, TLBSIM_MAP_PRIVATE), AT);
	assert_int_equal(sys_madvise_hugepage(s, AT, MB2), 0);
	assert_int_equal(user_access(s, AT, true), 0);
	c->pmd_before = pmd_at(s, AT);
	assert_true(c->pmd_before & PTE_HUGE);
	c->head = pte_pfn(c->pmd_before);
	c->gen_head = frame_of(hw, c->head)->gen;
	c->faulted = true;
	TSIM_WAIT_UNTIL(s, c->other_cached);
	c->blocks_before = block_at(s, OTHER) + block_at(s, CPU);
	uint64_t f0 = flushes(s);
	switch (c->op) {
	case OP_GUP:
	case OP_GUP_SPLIT:
		c->ret = gup_fast(s, AT + 5 * ps);
		c->walked = true;
		if (c->op == OP_GUP_SPLIT)
			TSIM_WAIT_UNTIL(s, c->split_done);
		break;
	case OP_COLLAPSE:
		c->ret = sys_collapse(s, AT);
		break;
	case OP_PIN:
		c->ret = gup_pin(s, AT + 7 * ps);
		c->refcount_mid = frame_of(hw, c->head)->refcount;
		assert_int_equal(sys_munmap(s, AT, MB2), 0);
		c->head_freed_mid = frame_of(hw, c->head)->gen != c->gen_head;
		c->ret2 = gup_unpin(s, (int)c->ret);
		break;
	case OP_RECLAIM:
		c->ret = sys_reclaim(s, AT, MB2);
		break;
	case OP_RECLAIM_PINNED:
		assert_true(gup_pin(s, AT) >= 0);
		c->ret = sys_reclaim(s, AT, MB2);
		break;
	case OP_KSM: {
		/* another VMA's page, taken as identical to subpage 3 */
		uint64_t b = sys_mmap(s, AT + 2 * MB2, ps, TLBSIM_MAP_PRIVATE);
		assert_int_equal(b, AT + 2 * MB2);
		assert_int_equal(user_access(s, b, true), 0);
		c->ret = ksm_merge(s, AT + 3 * ps, b);
		c->frame_at2 = tsim_pte_frame(s, mm, b);
		break;
	}
	case OP_MIGRATE:
		c->ret = sys_migrate_vma(s, AT, MB2);
		break;
	case OP_FREE:
		c->ret = sys_madvise_free(s, AT, MB2);
		break;
	}
	c->flushes = flushes(s) - f0;
	c->pmd_after = pmd_at(s, AT);
	c->blocks_after = block_at(s, OTHER) + block_at(s, CPU);
	c->head_freed = frame_of(hw, c->head)->gen != c->gen_head;
	if (!c->head_freed)
		c->refcount_after = frame_of(hw, c->head)->refcount;
	c->sub_frame = tsim_pte_frame(s, mm, AT + 3 * ps);
	if (c->sub_frame != NO_FRAME) {
		c->sub_refcount = frame_of(hw, c->sub_frame)->refcount;
		c->sub_lazyfree = (frame_of(hw, c->sub_frame)->pgflags & PG_LAZYFREE) != 0;
	}
	c->done = true;
}

/* the other CPU: caches the block entry; for OP_GUP samples the huge
 * page's refcount while the walk runs; for OP_GUP_SPLIT splits the PMD
 * once the walk holds its reference */
static void other_fn(struct sim *s, struct sim_thread *t)
{
	struct ctx *c = t->arg;
	struct kernel *k = kernel_of(s);
	TSIM_WAIT_UNTIL(s, c->faulted);
	assert_int_equal(user_access(s, AT + 12345, false), 0);
	c->other_cached = true;
	if (c->op == OP_GUP) {
		while (!c->done) {
			if (k->gup_fast_walkers) {
				uint32_t r = frame_of(hw_of(s), c->head)->refcount;
				if (r > c->refcount_during)
					c->refcount_during = r;
			}
			sim_sleep_for(s, 100);
		}
	} else if (c->op == OP_GUP_SPLIT) {
		TSIM_WAIT_UNTIL(s, frame_of(hw_of(s), c->head)->refcount == 2 || c->walked);
		c->refcount_during = frame_of(hw_of(s), c->head)->refcount;
		c->split_ret = sys_split_huge_pmd(s, AT);
		c->split_done = true;
	}
	TSIM_WAIT_UNTIL(s, c->done);
}

static struct sim *run(const char *profile, struct ctx *c)
{
	int64_t ov[] = {P_walk_level_ns, 20000, -1};
	struct sim *s = tsim_new_p(profile, 2, NESTED_FULLMM, ov);
	tsim_spawn(s, main_fn, c, CPU);
	tsim_spawn(s, other_fn, c, OTHER);
	tsim_run(s);
	assert_int_equal(tsim_violation(s)->kind, -1);
	assert_int_equal(c->blocks_before, 2);
	return s;
}

/* after a split by reclaim, KSM or migration */
static void assert_split(struct ctx *c)
{
	assert_true(pte_present(c->pmd_after));
	assert_false(c->pmd_after & PTE_HUGE);		/* a PTE table */
	assert_int_equal(c->blocks_after, 0);
}

static void gup(const char *profile)
{
	struct ctx c = {.op = OP_GUP};
	tsim_free(run(profile, &c));
	assert_int_equal(c.ret, 1);
	assert_int_equal(c.refcount_during, 2);
	assert_int_equal(c.refcount_after, 1);
	assert_int_equal(c.pmd_after, c.pmd_before);
}

static void test_gup_fast_huge_x86(void **state)
{
	(void)state;
	gup("x86-24");
}

static void test_gup_fast_huge_arm64(void **state)
{
	(void)state;
	gup("arm64-4k");
}

static void test_gup_fast_split_arm64(void **state)
{
	(void)state;
	struct ctx c = {.op = OP_GUP_SPLIT};
	tsim_free(run("arm64-4k", &c));
	assert_int_equal(c.refcount_during, 2);		/* the walk's reference */
	assert_int_equal(c.split_ret, 1);
	assert_int_equal(c.ret, 0);			/* the re-check failed */
	assert_int_equal(c.refcount_after, 512);	/* the split's PTEs' only */
	assert_split(&c);
}

static void test_gup_fast_split_x86(void **state)
{
	(void)state;
	struct ctx c = {.op = OP_GUP_SPLIT};
	tsim_free(run("x86-24", &c));
	assert_int_equal(c.refcount_during, 2);
	assert_int_equal(c.split_ret, 1);
	/* the flush IPI waited for the walk, but pmdp_invalidate cleared the
	 * entry before flushing: the re-check sees the change */
	assert_int_equal(c.ret, 0);
	assert_int_equal(c.refcount_after, 512);
	assert_split(&c);
}

static void test_collapse_pmd_mapped(void **state)
{
	(void)state;
	const char *profiles[] = {"x86-24", "arm64-4k"};
	for (int i = 0; i < 2; i++) {
		struct ctx c = {.op = OP_COLLAPSE};
		tsim_free(run(profiles[i], &c));
		assert_int_equal(c.ret, 0);
		assert_int_equal(c.pmd_after, c.pmd_before);
		assert_int_equal(c.blocks_after, 2);
		assert_int_equal(c.flushes, 0);
		assert_int_equal(c.refcount_after, 1);
	}
}

static void test_pin_huge(void **state)
{
	(void)state;
	const char *profiles[] = {"x86-24", "arm64-4k"};
	for (int i = 0; i < 2; i++) {
		struct ctx c = {.op = OP_PIN};
		tsim_free(run(profiles[i], &c));
		assert_true(c.ret >= 0);
		assert_int_equal(c.refcount_mid, 2);
		assert_false(c.head_freed_mid);	/* the pin keeps it past munmap */
		assert_int_equal(c.ret2, 0);
		assert_true(c.head_freed);	/* unpin dropped the last reference */
	}
}

static void reclaim(const char *profile)
{
	struct ctx c = {.op = OP_RECLAIM};
	tsim_free(run(profile, &c));
	assert_int_equal(c.ret, 0);		/* swap-backed: kept */
	assert_split(&c);
	assert_int_equal(c.refcount_after, 1);	/* subpage 0's mapping */
	assert_int_not_equal(c.sub_frame, NO_FRAME);
	assert_int_not_equal(c.sub_frame, c.head);
	assert_int_equal(c.sub_refcount, 1);
}

static void test_reclaim_splits_x86(void **state)
{
	(void)state;
	reclaim("x86-24");
}

static void test_reclaim_splits_arm64(void **state)
{
	(void)state;
	reclaim("arm64-4k");
}

static void test_reclaim_pinned_not_split(void **state)
{
	(void)state;
	struct ctx c = {.op = OP_RECLAIM_PINNED};
	tsim_free(run("x86-24", &c));
	assert_int_equal(c.ret, 0);
	assert_int_equal(c.pmd_after, c.pmd_before);
	assert_int_equal(c.refcount_after, 2);
}

static void ksm(const char *profile)
{
	struct ctx c = {.op = OP_KSM};
	tsim_free(run(profile, &c));
	assert_int_equal(c.ret, 0);		/* merged */
	assert_split(&c);
	assert_int_not_equal(c.sub_frame, c.head);
	assert_int_equal(c.frame_at2, c.sub_frame);
}

static void test_ksm_splits_x86(void **state)
{
	(void)state;
	ksm("x86-24");
}

static void test_ksm_splits_arm64(void **state)
{
	(void)state;
	ksm("arm64-4k");
}

static void migrate(const char *profile)
{
	struct ctx c = {.op = OP_MIGRATE};
	tsim_free(run(profile, &c));
	assert_int_equal(c.ret, 512);		/* every subpage */
	assert_split(&c);
	assert_true(c.head_freed);		/* subpage 0 moved away */
	assert_int_not_equal(c.sub_frame, NO_FRAME);
	assert_int_equal(c.sub_refcount, 1);
}

static void test_migrate_splits_x86(void **state)
{
	(void)state;
	migrate("x86-24");
}

static void test_migrate_splits_arm64(void **state)
{
	(void)state;
	migrate("arm64-4k");
}

/* MADV_FREE of a THP: split first (madvise_free_huge_pmd /
 * madvise_free_pte_range's split_huge_page), then each base page, now
 * exclusively mapped, is freed lazily */
static void madv_free(const char *profile)
{
	struct ctx c = {.op = OP_FREE};
	tsim_free(run(profile, &c));
	assert_int_equal(c.ret, 0);
	assert_split(&c);
	assert_int_not_equal(c.sub_frame, NO_FRAME);
	assert_int_not_equal(c.sub_frame, c.head);
	assert_int_equal(c.sub_refcount, 1);
	assert_true(c.sub_lazyfree);
}

static void test_madv_free_splits_x86(void **state)
{
	(void)state;
	madv_free("x86-24");
}

static void test_madv_free_splits_arm64(void **state)
{
	(void)state;
	madv_free("arm64-4k");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gup_fast_huge_x86),
		cmocka_unit_test(test_gup_fast_huge_arm64),
		cmocka_unit_test(test_gup_fast_split_arm64),
		cmocka_unit_test(test_gup_fast_split_x86),
		cmocka_unit_test(test_collapse_pmd_mapped),
		cmocka_unit_test(test_pin_huge),
		cmocka_unit_test(test_reclaim_splits_x86),
		cmocka_unit_test(test_reclaim_splits_arm64),
		cmocka_unit_test(test_reclaim_pinned_not_split),
		cmocka_unit_test(test_ksm_splits_x86),
		cmocka_unit_test(test_ksm_splits_arm64),
		cmocka_unit_test(test_migrate_splits_x86),
		cmocka_unit_test(test_migrate_splits_arm64),
		cmocka_unit_test(test_madv_free_splits_x86),
		cmocka_unit_test(test_madv_free_splits_arm64),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
