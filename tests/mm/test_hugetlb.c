/*
 * test_hugetlb.c - hugetlb PMD sharing (src/mm/hugetlb.c; mm/hugetlb.c
 * huge_pmd_share / huge_pmd_unshare, v5.1) and the knob
 * hugetlb_unshare_flush (a4a118f2eead, v5.16).
 *
 * Rules:
 *  - two MAP_SHARED mappings of one hugetlbfs file at the same offset,
 *    each covering the whole PUD-aligned range, share one PMD table: the
 *    second fault points its PUD entry at the first one's table (page_count
 *    2); the table and the PTE tables under it are marked shared;
 *  - a mapping that does not cover the PUD range shares nothing;
 *  - an unmap of a shared range clears its own PUD entry and drops the
 *    share (huge_pmd_unshare), zaps nothing, frees no table, and the other
 *    mm keeps its translation;
 *  - mprotect of a shared range unshares it too (hugetlb_change_protection)
 *    and flushes the PUD range with flush_tlb_range before the unlock; an
 *    mprotect that changed no PTE flushes its range all the same;
 *  - with before_unlock the unsharing unmap has flushed (x86: a full flush,
 *    the PUD range is above the ceiling) by the time it releases
 *    i_mmap_rwsem; with after_unlock it has not (its flush comes at
 *    tlb_finish_mmu).
 */
#include "test_util.h"

#define AT 0x4000000000ull	/* 256 GiB: PUD-aligned */
#define GB (1ull << 30)

struct ctx {
	struct inode *file;
	uint64_t len;			/* the second mapping's length */
	int phase;
	uint32_t pmd[2];		/* the PMD table each mm's PUD entry points to */
	uint32_t pte_table;
	uint32_t frame[2];		/* the data frame each mm translates AT to */
	uint32_t count_shared, count_after;
	uint64_t tables_freed;
	uint32_t unsharer_frame;	/* mm 0's PTE after mm 1 unmapped */
	uint32_t pud_after;		/* mm 1's PUD entry target after its mprotect */
	uint64_t flushes_at_unlock;	/* x86 full flushes when i_mmap_rwsem came free */
	int ran;
};

static uint32_t pud_target(struct sim *s, struct mm_struct *mm, uint64_t va)
{
	struct hw *hw = hw_of(s);
	const struct pt_geom *g = &hw->geom;
	uint32_t t = mm->pgd;
	for (int d = 0; d <= g->depth_pud; d++) {
		pte_t e = table_of(hw, t)[pt_index(g, d, va)];
		if (!pte_present(e))
			return NO_FRAME;
		t = pte_pfn(e);
	}
	return t;
}

static void wait_phase(struct sim *s, struct ctx *c, int p)
{
	while (c->phase < p)
		sim_step(s, YP_USER, 1000);
}

/* mm 0 (cpu 0): create and map the file, write AT; later read it back */
static void first(struct sim *s, struct sim_thread *t)
{
	struct ctx *c = t->arg;
	c->file = sys_tmpfile(s, &fs_hugetlbfs, GB);
	assert_true(sys_mmap_file(s, AT, GB, TLBSIM_MAP_SHARED, c->file, 0) == AT);
	assert_int_equal(user_access(s, AT, true), 0);
	c->pmd[0] = pud_target(s, current_task(s)->mm, AT);
	c->frame[0] = tsim_pte_frame(s, current_task(s)->mm, AT);
	c->phase = 1;
	wait_phase(s, c, 3);
	c->unsharer_frame = tsim_pte_frame(s, current_task(s)->mm, AT);
	c->ran++;
}

/* mm 1 (cpu 1): map the same file, read AT (sharing), unmap */
static void second(struct sim *s, struct sim_thread *t)
{
	struct ctx *c = t->arg;
	wait_phase(s, c, 1);
	struct mm_struct *mm = current_task(s)->mm;
	assert_true(sys_mmap_file(s, AT, c->len, TLBSIM_MAP_SHARED, c->file, 0) == AT);
	assert_int_equal(user_access(s, AT, false), 0);
	c->pmd[1] = pud_target(s, mm, AT);
	c->frame[1] = tsim_pte_frame(s, mm, AT);
	c->count_shared = frame_of(hw_of(s), c->pmd[0])->refcount;
	c->pte_table = pte_pfn(table_of(hw_of(s), c->pmd[0])[pt_index(&hw_of(s)->geom,
								       hw_of(s)->geom.depth_pmd, AT)]);
	uint64_t f0 = s->m.tables_freed;
	assert_int_equal(sys_munmap(s, AT, c->len), 0);
	c->tables_freed = s->m.tables_freed - f0;
	c->count_after = frame_of(hw_of(s), c->pmd[0])->refcount;
	c->phase = 3;
	c->ran++;
}

static struct sim *share_run(uint64_t len, struct ctx *c)
{
	struct sim *s = tsim_new("x86-24", 2, NESTED_FULLMM);
	c->len = len;
	tsim_spawn(s, first, c, 0);
	tsim_spawn_mm(s, second, c, mm_alloc(s), 1);
	tsim_run(s);
	assert_int_equal(c->ran, 2);
	return s;
}

static void test_share_and_unshare(void **state)
{
	(void)state;
	struct ctx c = {0};
	struct sim *s = share_run(GB, &c);
	/* shared: one PMD table, page_count 2, the same page at AT */
	assert_int_not_equal(c.pmd[0], NO_FRAME);
	assert_int_equal(c.pmd[1], c.pmd[0]);
	assert_int_equal(c.count_shared, 2);
	assert_int_equal(c.frame[1], c.frame[0]);
	assert_true(frame_of(hw_of(s), c.pmd[0])->pgflags & PG_PT_SHARED);
	assert_true(frame_of(hw_of(s), c.pte_table)->pgflags & PG_PT_SHARED);
	/* unshared: the share dropped, mm 0's translation intact; the
	 * unsharer frees only its own tables above the PMD level */
	assert_int_equal(c.count_after, 1);
	assert_int_equal(c.unsharer_frame, c.frame[0]);
	assert_true(c.tables_freed <= (uint64_t)hw_of(s)->geom.depth_pud);
	assert_int_equal(tsim_violation(s)->kind, -1);
	tsim_free(s);
}

static void test_partial_mapping_shares_nothing(void **state)
{
	(void)state;
	struct ctx c = {0};
	struct sim *s = share_run(2ull << 20, &c);
	assert_int_not_equal(c.pmd[1], NO_FRAME);
	assert_int_not_equal(c.pmd[1], c.pmd[0]);
	assert_int_equal(c.count_shared, 1);
	tsim_free(s);
}

/* the flush's place: mm 0 takes i_mmap_rwsem for write while mm 1's
 * unsharing munmap holds it and counts the full flushes when it gets it */
static void locker(struct sim *s, struct sim_thread *t)
{
	struct ctx *c = t->arg;
	c->file = sys_tmpfile(s, &fs_hugetlbfs, GB);
	assert_true(sys_mmap_file(s, AT, GB, TLBSIM_MAP_SHARED, c->file, 0) == AT);
	assert_int_equal(user_access(s, AT, true), 0);
	c->phase = 1;
	/* poll finely: the munmap holds i_mmap_rwsem for well under a us */
	while (!(c->phase == 2 && c->file->i_mmap_rwsem.writer) && c->phase < 3)
		sim_step(s, YP_USER, 1);
	assert_int_equal(c->phase, 2);
	uint64_t f0 = s->m.flush_full;
	down_write(s, &c->file->i_mmap_rwsem);
	c->flushes_at_unlock = s->m.flush_full - f0;
	up_write(s, &c->file->i_mmap_rwsem);
	c->ran++;
}

static void unsharer(struct sim *s, struct sim_thread *t)
{
	struct ctx *c = t->arg;
	wait_phase(s, c, 1);
	assert_true(sys_mmap_file(s, AT, GB, TLBSIM_MAP_SHARED, c->file, 0) == AT);
	assert_int_equal(user_access(s, AT, false), 0);
	/* the locker queues on i_mmap_rwsem once this munmap holds it */
	c->phase = 2;
	assert_int_equal(sys_munmap(s, AT, GB), 0);
	c->phase = 3;
	c->ran++;
}

static uint64_t flushes_before_unlock(enum hugetlb_unshare_flush_policy v)
{
	struct ctx c = {0};
	struct sim *s = tsim_new("x86-24", 2, NESTED_FULLMM);
	machine_of(s)->policy.hugetlb_unshare_flush = v;
	tsim_spawn(s, locker, &c, 0);
	tsim_spawn_mm(s, unsharer, &c, mm_alloc(s), 1);
	tsim_run(s);
	assert_int_equal(c.ran, 2);
	tsim_free(s);
	return c.flushes_at_unlock;
}

static void test_unshare_flush_before_unlock(void **state)
{
	(void)state;
	assert_int_equal(flushes_before_unlock(HUGETLB_UNSHARE_FLUSH_BEFORE_UNLOCK), 1);
	assert_int_equal(flushes_before_unlock(HUGETLB_UNSHARE_FLUSH_AFTER_UNLOCK), 0);
}

/* mm 1 (cpu 1): map, read (sharing), mprotect read-only */
static void protector(struct sim *s, struct sim_thread *t)
{
	struct ctx *c = t->arg;
	wait_phase(s, c, 1);
	struct mm_struct *mm = current_task(s)->mm;
	assert_true(sys_mmap_file(s, AT, GB, TLBSIM_MAP_SHARED, c->file, 0) == AT);
	assert_int_equal(user_access(s, AT, false), 0);
	c->pmd[1] = pud_target(s, mm, AT);
	c->count_shared = frame_of(hw_of(s), c->pmd[0])->refcount;
	uint64_t f0 = s->m.flush_full;
	assert_int_equal(sys_mprotect(s, AT, GB, TLBSIM_PROT_READ), 0);
	c->flushes_at_unlock = s->m.flush_full - f0;
	c->count_after = frame_of(hw_of(s), c->pmd[0])->refcount;
	c->pud_after = pud_target(s, mm, AT);
	c->phase = 3;
	c->ran++;
}

static void test_mprotect_unshares(void **state)
{
	(void)state;
	struct ctx c = {0};
	struct sim *s = tsim_new("x86-24", 2, NESTED_FULLMM);
	tsim_spawn(s, first, &c, 0);
	tsim_spawn_mm(s, protector, &c, mm_alloc(s), 1);
	tsim_run(s);
	assert_int_equal(c.ran, 2);
	assert_int_equal(c.pmd[1], c.pmd[0]);
	assert_int_equal(c.count_shared, 2);
	assert_int_equal(c.count_after, 1);
	assert_int_equal(c.pud_after, NO_FRAME);	/* its PUD entry is clear */
	assert_int_not_equal(c.unsharer_frame, NO_FRAME);	/* mm 0 still maps AT */
	assert_int_equal(c.flushes_at_unlock, 1);	/* the PUD range: a full flush */
	tsim_free(s);
}

/* an mprotect that rewrites no PTE: nothing of the range was touched */
static void untouched(struct sim *s, struct sim_thread *t)
{
	struct ctx *c = t->arg;
	c->file = sys_tmpfile(s, &fs_hugetlbfs, GB);
	assert_true(sys_mmap_file(s, AT, GB, TLBSIM_MAP_SHARED, c->file, 0) == AT);
	uint64_t f0 = s->m.flush_full + s->m.flush_local_pages;
	assert_int_equal(sys_mprotect(s, AT, GB, TLBSIM_PROT_READ), 0);
	c->flushes_at_unlock = s->m.flush_full + s->m.flush_local_pages - f0;
	c->ran++;
}

/* Rule (hugetlb_change_protection, mm/hugetlb.c, v4.20..v6.x): the range
 * is flushed before i_mmap_rwsem is released whether or not a PTE changed
 * (flush_hugetlb_tlb_range has no `pages` test, unlike
 * change_protection_range): an mprotect of an untouched hugetlb mapping
 * still flushes it once (x86: the range is above the ceiling, a full
 * flush). */
static void test_mprotect_flushes_unchanged(void **state)
{
	(void)state;
	struct ctx c = {0};
	struct sim *s = tsim_new("x86-24", 1, NESTED_FULLMM);
	tsim_spawn(s, untouched, &c, 0);
	tsim_run(s);
	assert_int_equal(c.ran, 1);
	assert_int_equal(c.flushes_at_unlock, 1);
	tsim_free(s);
}

static void test_presets(void **state)
{
	(void)state;
	struct {
		const char *v;
		int want;
	} k[] = {{"4.14", HUGETLB_UNSHARE_FLUSH_AFTER_UNLOCK},
		 {"5.13", HUGETLB_UNSHARE_FLUSH_AFTER_UNLOCK},
		 {"6.0", HUGETLB_UNSHARE_FLUSH_BEFORE_UNLOCK},
		 {"6.18", HUGETLB_UNSHARE_FLUSH_BEFORE_UNLOCK}};
	for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
		struct tlbsim_policy p;
		tlbsim_policy_default(&p);
		p.given = 0;
		tlbsim_policy_apply_kernel(&p, tlbsim_kernel_find(k[i].v));
		assert_int_equal(p.hugetlb_unshare_flush, k[i].want);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_share_and_unshare),
		cmocka_unit_test(test_partial_mapping_shares_nothing),
		cmocka_unit_test(test_unshare_flush_before_unlock),
		cmocka_unit_test(test_mprotect_unshares),
		cmocka_unit_test(test_mprotect_flushes_unchanged),
		cmocka_unit_test(test_presets),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
