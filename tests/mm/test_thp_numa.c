/*
 * test_thp_numa.c - the NUMA scan on PMD-mapped anonymous huge pages
 * (src/mm/huge_memory.c: change_huge_pmd with prot_numa,
 * do_huge_pmd_numa_page, and every walker's pmd_trans_huge_entry;
 * mm/huge_memory.c, mm/mprotect.c v5.1).
 *
 * Rules:
 *  - numa_scan of a whole huge page makes the block entry PROT_NONE: not
 *    present to the MMU (VALID clear), still huge (PTE_HUGE), the same
 *    page, the write bit kept; it counts HPAGE_PMD_NR (512) pages; when it
 *    returns no CPU - neither the caller nor another that cached the block -
 *    holds a translation of the block; a second scan leaves it alone (0);
 *  - the next access faults (a page fault is counted) and restores the
 *    entry: present, huge, the same page, writable again, no split;
 *  - munmap of a PROT_NONE huge range frees the huge page (the frame is
 *    free afterwards; the refcount was 1 before);
 *  - fork of a PROT_NONE huge entry gives the child the PROT_NONE huge
 *    entry too (refcount 2); the child's exit drops its mapping (refcount
 *    back to 1); the parent's access restores its entry read-only
 *    (write-protected by the fork) and its write then reuses the page;
 *  - split_huge_pmd of a PROT_NONE huge entry gives PROT_NONE PTEs (not
 *    VALID, the page's pfn) and an access restores just that PTE;
 *  - mprotect(PROT_READ) of a PROT_NONE huge entry gives a present,
 *    read-only huge entry;
 *  - the oracle finds nothing in any of these; no SIM_BUG_ON fires (a huge
 *    entry's page is never freed as a page table).
 */
#include "test_util.h"

#define AT 0x40000000ull
#define MB2 (2ull << 20)
#define CPU 1
#define OTHER 0

struct ctx {
	const char *profile;
	int what;
	uint64_t a;
	bool faulted, other_cached, done;
	uint32_t frame;
	int64_t scanned, scanned2;
	pte_t pmd_scanned, pmd_after, pte_split, pte_split_after, pte_other;
	bool block_anywhere;
	uint64_t faults_before, faults_after;
	int access_ret, write_ret;
	uint32_t refcount_before, refcount_after, refcount_child, state_after;
	pte_t child_pmd;
};

static void other_fn(struct sim *s, struct sim_thread *t)
{
	struct ctx *c = t->arg;
	TSIM_WAIT_UNTIL(s, c->faulted);
	assert_int_equal(user_access(s, c->a + 12345, true), 0);
	c->other_cached = true;
	TSIM_WAIT_UNTIL(s, c->done);
}

enum { W_FAULT, W_MUNMAP, W_SPLIT, W_MPROTECT, W_FORK };

static void child_fn(struct sim *s, struct sim_thread *t)
{
	struct ctx *c = t->arg;
	c->child_pmd = tsim_pmd(s, current_task(s)->mm, AT);
	c->refcount_child = frame_of(hw_of(s), c->frame)->refcount;
}

static void main_fn(struct sim *s, struct sim_thread *t)
{
	struct ctx *c = t->arg;
	struct mm_struct *mm = current_task(s)->mm;
	struct hw *hw = hw_of(s);
	uint64_t a = sys_mmap(s, AT, MB2, TLBSIM_MAP_PRIVATE);
	assert_int_equal(a, AT);
	assert_int_equal(sys_madvise_hugepage(s, a, MB2), 0);
	assert_int_equal(user_access(s, a, true), 0);
	assert_true(tsim_pmd(s, mm, a) & PTE_HUGE);
	c->frame = pte_pfn(tsim_pmd(s, mm, a));
	c->a = a;
	c->faulted = true;
	TSIM_WAIT_UNTIL(s, c->other_cached);
	c->scanned = numa_scan(s, a, MB2, c->what == W_FAULT);
	c->pmd_scanned = tsim_pmd(s, mm, a);
	c->block_anywhere = tsim_block_cached(s, a, false);
	c->scanned2 = numa_scan(s, a, MB2, true);
	c->refcount_before = frame_of(hw, c->frame)->refcount;
	switch (c->what) {
	case W_FAULT:
		c->faults_before = s->m.page_faults;
		c->access_ret = user_access(s, a + 4096, false);
		c->faults_after = s->m.page_faults;
		c->pmd_after = tsim_pmd(s, mm, a);
		c->write_ret = user_access(s, a + 8192, true);
		break;
	case W_MUNMAP:
		break;
	case W_SPLIT:
		assert_int_equal(sys_split_huge_pmd(s, a), 1);
		c->pmd_after = tsim_pmd(s, mm, a);
		c->pte_split = *pte_lookup(s, mm, a + 4096);
		c->access_ret = user_access(s, a + 4096, false);
		c->pte_split_after = *pte_lookup(s, mm, a + 4096);
		c->pte_other = *pte_lookup(s, mm, a + 8192);
		break;
	case W_MPROTECT:
		assert_int_equal(sys_mprotect(s, a, MB2, TLBSIM_PROT_READ), 0);
		c->pmd_after = tsim_pmd(s, mm, a);
		c->access_ret = user_access(s, a + 4096, false);
		c->write_ret = user_access(s, a + 4096, true);
		break;
	case W_FORK: {
		struct task *child = sys_fork(s, sizeof(struct task), child_fn, c, 0);
		assert_non_null(child);
		assert_non_null(sys_wait4(s));
		c->refcount_after = frame_of(hw, c->frame)->refcount;
		c->access_ret = user_access(s, a + 4096, false);
		c->pmd_after = tsim_pmd(s, mm, a);
		c->write_ret = user_access(s, a + 4096, true);
		break;
	}
	}
	c->done = true;
	if (c->what != W_FORK)
		c->refcount_after = frame_of(hw, c->frame)->refcount;
	assert_int_equal(sys_munmap(s, a, MB2), 0);
	c->state_after = frame_of(hw, c->frame)->state;
}

static struct sim *run(struct ctx *c)
{
	struct sim *s = tsim_new(c->profile, 2, NESTED_FULLMM);
	tsim_spawn(s, main_fn, c, CPU);
	tsim_spawn(s, other_fn, c, OTHER);
	tsim_run(s);
	assert_int_equal(tsim_violation(s)->kind, -1);
	/* the scan: PROT_NONE, still huge, same page, write bit kept */
	assert_int_equal(c->scanned, 512);
	assert_true(c->pmd_scanned & PTE_HUGE);
	assert_true(c->pmd_scanned & PTE_PROTNONE);
	assert_false(pte_present(c->pmd_scanned));
	assert_int_equal(pte_pfn(c->pmd_scanned), c->frame);
	assert_true(c->pmd_scanned & PTE_WRITE);
	assert_false(c->block_anywhere);
	assert_int_equal(c->scanned2, 0);		/* already PROT_NONE */
	/* munmap at the end freed the huge page */
	assert_int_equal(c->state_after, FRAME_FREE);
	return s;
}

static void check_fault(const char *profile)
{
	struct ctx c = {.profile = profile, .what = W_FAULT};
	struct sim *s = run(&c);
	assert_int_equal(c.access_ret, 0);
	assert_true(c.faults_after > c.faults_before);	/* the MMU faulted */
	assert_true(pte_present(c.pmd_after));
	assert_true(c.pmd_after & PTE_HUGE);
	assert_false(c.pmd_after & PTE_PROTNONE);
	assert_int_equal(pte_pfn(c.pmd_after), c.frame);
	assert_true(tsim_pmd_writable(s, c.pmd_after));	/* the saved write bit */
	assert_int_equal(c.write_ret, 0);
	assert_int_equal(c.refcount_after, 1);
	tsim_free(s);
}

static void test_scan_fault_restores_x86(void **state)
{
	(void)state;
	check_fault("x86-24");
}

static void test_scan_fault_restores_arm64(void **state)
{
	(void)state;
	check_fault("arm64-4k");
}

static void test_munmap_protnone_frees(void **state)
{
	(void)state;
	const char *profiles[] = {"x86-24", "arm64-4k"};
	for (int i = 0; i < 2; i++) {
		struct ctx c = {.profile = profiles[i], .what = W_MUNMAP};
		struct sim *s = run(&c);
		assert_int_equal(c.refcount_before, 1);
		assert_int_equal(c.refcount_after, 1);
		tsim_free(s);
	}
}

static void test_split_keeps_protnone(void **state)
{
	(void)state;
	const char *profiles[] = {"x86-24", "arm64-4k"};
	for (int i = 0; i < 2; i++) {
		struct ctx c = {.profile = profiles[i], .what = W_SPLIT};
		struct sim *s = run(&c);
		assert_true(pte_present(c.pmd_after));		/* a PTE table now */
		assert_false(c.pmd_after & PTE_HUGE);
		assert_true(c.pte_split & PTE_PROTNONE);
		assert_false(pte_present(c.pte_split));
		assert_int_equal(pte_pfn(c.pte_split), c.frame);
		assert_int_equal(c.access_ret, 0);
		assert_true(pte_present(c.pte_split_after));
		assert_false(c.pte_split_after & PTE_PROTNONE);
		assert_int_equal(pte_pfn(c.pte_split_after), c.frame);
		assert_true(c.pte_other & PTE_PROTNONE);	/* untouched subpage */
		assert_int_equal(c.refcount_after, 512);	/* one per PTE */
		tsim_free(s);
	}
}

static void test_mprotect_protnone(void **state)
{
	(void)state;
	const char *profiles[] = {"x86-24", "arm64-4k"};
	for (int i = 0; i < 2; i++) {
		struct ctx c = {.profile = profiles[i], .what = W_MPROTECT};
		struct sim *s = run(&c);
		assert_true(pte_present(c.pmd_after));
		assert_true(c.pmd_after & PTE_HUGE);
		assert_false(c.pmd_after & PTE_PROTNONE);
		assert_int_equal(pte_pfn(c.pmd_after), c.frame);
		assert_false(tsim_pmd_writable(s, c.pmd_after));
		assert_int_equal(c.access_ret, 0);
		assert_int_equal(c.write_ret, -1);		/* read-only VMA */
		tsim_free(s);
	}
}

static void test_fork_protnone(void **state)
{
	(void)state;
	const char *profiles[] = {"x86-24", "arm64-4k"};
	for (int i = 0; i < 2; i++) {
		struct ctx c = {.profile = profiles[i], .what = W_FORK};
		struct sim *s = run(&c);
		assert_true(c.child_pmd & PTE_HUGE);
		assert_true(c.child_pmd & PTE_PROTNONE);
		assert_false(pte_present(c.child_pmd));
		assert_int_equal(pte_pfn(c.child_pmd), c.frame);
		assert_int_equal(c.refcount_child, 2);
		assert_int_equal(c.refcount_after, 1);		/* the child's exit */
		assert_int_equal(c.access_ret, 0);
		assert_true(pte_present(c.pmd_after));
		assert_true(c.pmd_after & PTE_HUGE);
		assert_false(tsim_pmd_writable(s, c.pmd_after));	/* fork's wrprotect */
		assert_int_equal(c.write_ret, 0);		/* reuse */
		tsim_free(s);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scan_fault_restores_x86),
		cmocka_unit_test(test_scan_fault_restores_arm64),
		cmocka_unit_test(test_munmap_protnone_frees),
		cmocka_unit_test(test_split_keeps_protnone),
		cmocka_unit_test(test_mprotect_protnone),
		cmocka_unit_test(test_fork_protnone),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
