/*
 * test_thp_prot.c - mprotect, fork, mremap and clear_refs of PMD-mapped
 * anonymous huge pages (src/mm/huge_memory.c: change_huge_pmd,
 * copy_huge_pmd, do_huge_pmd_wp_page, huge_pmd_set_accessed, move_huge_pmd,
 * clear_refs_huge_pmd; mm/huge_memory.c, mm/mprotect.c, mm/mremap.c,
 * fs/proc/task_mmu.c v5.1).
 *
 * Rules:
 *  - mprotect(PROT_READ) of a whole huge page keeps the block entry (same
 *    page) and makes it read-only; when it returns no CPU - the caller's nor
 *    another that cached the block writable - holds a writable translation
 *    of it; a write is refused (SIGSEGV); after mprotect(READ|WRITE) the
 *    entry is still read-only (a private mapping) and a write reuses the
 *    page (mapped once): the block entry becomes writable, same page;
 *  - mprotect of part of a huge page splits it: 512 PTEs mapping the page,
 *    the part read-only, the rest writable, no block entry cached anywhere;
 *  - fork: parent and child block entries map the same page, both
 *    write-protected, the page's refcount 2; no CPU keeps a writable block
 *    entry of the parent when fork returns; a write in the child splits its
 *    block and copies the subpage (the child sees a new page at that
 *    address, the parent still the huge page); after the child is gone the
 *    parent's write reuses the huge page (block entry writable, same page);
 *    a parent's write while the child maps the page splits the parent's
 *    block and copies that subpage only (the other PTEs still map the huge
 *    page), and the child's block is untouched until its own write;
 *  - mremap of a whole aligned huge page to an aligned address moves the
 *    block entry (same page at the new address, none at the old one, the
 *    old address unmapped) and no CPU still translates the old address;
 *    to an unaligned address the huge page is split and its PTEs moved
 *    (the new address reads the same page);
 *  - clear_refs 4 (soft-dirty, x86) write-protects the block entry and
 *    clears its soft-dirty bit, no CPU keeps it writable; the next write
 *    makes it writable and soft-dirty again without a split; clear_refs 1
 *    clears the block entry's young bit and keeps it huge;
 *  - UFFDIO_WRITEPROTECT of a huge page splits it (no uffd-wp huge entry
 *    in the model): the PTEs are write-protected and uffd-wp;
 *  - the oracle finds nothing in any of these.
 */
#include "test_util.h"

#define AT 0x40000000ull
#define NEW 0x80000000ull
#define MB2 (2ull << 20)
#define CPU 1
#define OTHER 0

struct ctx {
	const char *profile;
	int what;
	uint64_t a;
	bool faulted, other_cached, done;
	uint32_t frame;
	pte_t pmd_after, pmd_after2, pmd_new, pmd_old;
	bool writable_anywhere, block_anywhere, old_translated;
	int write_ret, write_ret2;
	uint32_t refcount_after, pte_frame, pte_frame2, new_frame;
	pte_t pte_lo, pte_hi;
	/* fork */
	pte_t child_pmd, child_pmd_after_write;
	uint32_t child_frame_after_write, child_refcount;
	bool parent_first, parent_wrote;
	uint32_t parent_frame_written, parent_frame_other, child_frame_other;
};

/* map [AT, AT + 2M) huge and written; the other thread caches it writable */
static uint64_t map_huge(struct sim *s, struct ctx *c)
{
	uint64_t a = sys_mmap(s, AT, MB2, TLBSIM_MAP_PRIVATE);
	assert_int_equal(a, AT);
	assert_int_equal(sys_madvise_hugepage(s, a, MB2), 0);
	assert_int_equal(user_access(s, a, true), 0);
	assert_true(tsim_pmd(s, current_task(s)->mm, a) & PTE_HUGE);
	c->frame = pte_pfn(tsim_pmd(s, current_task(s)->mm, a));
	c->a = a;
	c->faulted = true;
	TSIM_WAIT_UNTIL(s, c->other_cached);
	return a;
}

static void other_fn(struct sim *s, struct sim_thread *t)
{
	struct ctx *c = t->arg;
	TSIM_WAIT_UNTIL(s, c->faulted);
	assert_int_equal(user_access(s, c->a + 12345, true), 0);
	c->other_cached = true;
	TSIM_WAIT_UNTIL(s, c->done);
}

enum { W_MPROTECT, W_MPROTECT_PART, W_MREMAP, W_MREMAP_UNALIGNED, W_SOFTDIRTY, W_AGE, W_UFFD };

static void main_fn(struct sim *s, struct sim_thread *t)
{
	struct ctx *c = t->arg;
	struct mm_struct *mm = current_task(s)->mm;
	struct hw *hw = hw_of(s);
	uint64_t a = map_huge(s, c);
	switch (c->what) {
	case W_MPROTECT:
		assert_int_equal(sys_mprotect(s, a, MB2, TLBSIM_PROT_READ), 0);
		c->pmd_after = tsim_pmd(s, mm, a);
		c->writable_anywhere = tsim_block_cached(s, a, true);
		c->write_ret = user_access(s, a + 4096, true);
		assert_int_equal(sys_mprotect(s, a, MB2, TLBSIM_PROT_READ | TLBSIM_PROT_WRITE), 0);
		c->write_ret2 = user_access(s, a + 8192, true);
		c->pmd_after2 = tsim_pmd(s, mm, a);
		break;
	case W_MPROTECT_PART:
		assert_int_equal(sys_mprotect(s, a + MB2 / 2, 4096, TLBSIM_PROT_READ), 0);
		c->pmd_after = tsim_pmd(s, mm, a);
		c->block_anywhere = tsim_block_cached(s, a, false);
		c->pte_lo = *pte_lookup(s, mm, a);
		c->pte_hi = *pte_lookup(s, mm, a + MB2 / 2);
		c->pte_frame = pte_pfn(c->pte_lo);
		c->pte_frame2 = pte_pfn(c->pte_hi);
		c->write_ret = user_access(s, a + MB2 / 2, true);
		c->write_ret2 = user_access(s, a + 4096, true);
		break;
	case W_MREMAP:
	case W_MREMAP_UNALIGNED: {
		uint64_t to = c->what == W_MREMAP ? NEW : NEW + 4096;
		assert_int_equal(sys_mremap(s, a, MB2, MB2, true, to), to);
		c->pmd_new = tsim_pmd(s, mm, to);
		c->pmd_old = tsim_pmd(s, mm, a);
		c->old_translated = tsim_block_cached(s, a, false);
		for (int cpu = 0; cpu < s->nr_cpus; cpu++)
			if (tsim_leaf_of(s, cpu, a))
				c->old_translated = true;
		c->write_ret = user_access(s, a, false);
		c->write_ret2 = user_access(s, to + 4096, true);
		c->new_frame = tsim_translate(s, CPU, mm, to + 8192);
		sys_munmap(s, to, MB2);
		break;
	}
	case W_SOFTDIRTY:
	case W_AGE:
		assert_int_equal(sys_clear_refs(s, c->what == W_SOFTDIRTY ? 4 : 1), 0);
		c->pmd_after = tsim_pmd(s, mm, a);
		c->writable_anywhere = tsim_block_cached(s, a, true);
		c->write_ret = user_access(s, a + 4096, true);
		c->pmd_after2 = tsim_pmd(s, mm, a);
		break;
	case W_UFFD:
		assert_int_equal(sys_uffd_writeprotect(s, a, MB2, true), 0);
		c->pmd_after = tsim_pmd(s, mm, a);
		c->block_anywhere = tsim_block_cached(s, a, false);
		c->pte_lo = *pte_lookup(s, mm, a + 4096);
		break;
	}
	c->refcount_after = frame_of(hw, c->frame)->refcount;
	c->done = true;
	if (c->what != W_MREMAP && c->what != W_MREMAP_UNALIGNED)
		sys_munmap(s, a, MB2);
}

static struct sim *run(struct ctx *c)
{
	struct sim *s = tsim_new(c->profile, 2, NESTED_FULLMM);
	tsim_spawn(s, main_fn, c, CPU);
	tsim_spawn(s, other_fn, c, OTHER);
	tsim_run(s);
	assert_int_equal(tsim_violation(s)->kind, -1);
	return s;
}

static void check_mprotect(const char *profile)
{
	struct ctx c = {.profile = profile, .what = W_MPROTECT};
	struct sim *s = run(&c);
	assert_true(c.pmd_after & PTE_HUGE);
	assert_int_equal(pte_pfn(c.pmd_after), c.frame);
	assert_false(tsim_pmd_writable(s, c.pmd_after));
	assert_false(c.writable_anywhere);
	assert_int_equal(c.write_ret, -1);		/* SIGSEGV: the VMA is read-only */
	assert_int_equal(c.write_ret2, 0);		/* do_huge_pmd_wp_page: reuse */
	assert_true(c.pmd_after2 & PTE_HUGE);
	assert_int_equal(pte_pfn(c.pmd_after2), c.frame);
	assert_true(tsim_pmd_writable(s, c.pmd_after2));
	tsim_free(s);
}

static void test_mprotect_whole_x86(void **state)
{
	(void)state;
	check_mprotect("x86-24");
}

static void test_mprotect_whole_arm64(void **state)
{
	(void)state;
	check_mprotect("arm64-4k");
}

static void check_mprotect_part(const char *profile)
{
	struct ctx c = {.profile = profile, .what = W_MPROTECT_PART};
	struct sim *s = run(&c);
	assert_false(c.pmd_after & PTE_HUGE);		/* a PTE table now */
	assert_true(pte_present(c.pmd_after));
	assert_false(c.block_anywhere);
	assert_int_equal(c.pte_frame, c.frame);
	assert_int_equal(c.pte_frame2, c.frame);
	assert_true(tsim_pmd_writable(s, c.pte_lo));
	assert_false(tsim_pmd_writable(s, c.pte_hi));
	assert_int_equal(c.write_ret, -1);
	assert_int_equal(c.write_ret2, 0);
	tsim_free(s);
}

static void test_mprotect_part_splits_x86(void **state)
{
	(void)state;
	check_mprotect_part("x86-24");
}

static void test_mprotect_part_splits_arm64(void **state)
{
	(void)state;
	check_mprotect_part("arm64-4k");
}

static void check_mremap(const char *profile, int what)
{
	struct ctx c = {.profile = profile, .what = what};
	struct sim *s = run(&c);
	if (what == W_MREMAP) {
		assert_true(c.pmd_new & PTE_HUGE);
		assert_int_equal(pte_pfn(c.pmd_new), c.frame);
	} else {
		assert_false(c.pmd_new & PTE_HUGE);
	}
	assert_false(c.pmd_old & PTE_HUGE);
	assert_false(c.old_translated);
	assert_int_equal(c.write_ret, -1);		/* the old address is unmapped */
	assert_int_equal(c.write_ret2, 0);
	assert_int_equal(c.new_frame, c.frame);		/* the same data */
	tsim_free(s);
}

static void test_mremap_moves_block_x86(void **state)
{
	(void)state;
	check_mremap("x86-24", W_MREMAP);
}

static void test_mremap_moves_block_arm64(void **state)
{
	(void)state;
	check_mremap("arm64-4k", W_MREMAP);
}

static void test_mremap_unaligned_splits(void **state)
{
	(void)state;
	check_mremap("x86-24", W_MREMAP_UNALIGNED);
	check_mremap("arm64-4k", W_MREMAP_UNALIGNED);
}

static void test_clear_refs_soft_dirty_x86(void **state)
{
	(void)state;
	struct ctx c = {.profile = "x86-24", .what = W_SOFTDIRTY};
	struct sim *s = run(&c);
	assert_true(c.pmd_after & PTE_HUGE);
	assert_false(c.pmd_after & (PTE_WRITE | PTE_SOFT_DIRTY));
	assert_false(c.writable_anywhere);
	assert_int_equal(c.write_ret, 0);
	assert_true(c.pmd_after2 & PTE_HUGE);		/* reused, not split */
	assert_int_equal(pte_pfn(c.pmd_after2), c.frame);
	assert_true(c.pmd_after2 & PTE_WRITE);
	assert_true(c.pmd_after2 & PTE_SOFT_DIRTY);
	tsim_free(s);
}

static void test_clear_refs_age(void **state)
{
	(void)state;
	const char *profiles[] = {"x86-24", "arm64-4k"};
	for (int i = 0; i < 2; i++) {
		struct ctx c = {.profile = profiles[i], .what = W_AGE};
		struct sim *s = run(&c);
		assert_true(c.pmd_after & PTE_HUGE);
		assert_false(c.pmd_after & PTE_YOUNG);
		assert_int_equal(c.write_ret, 0);
		assert_true(c.pmd_after2 & PTE_HUGE);
		tsim_free(s);
	}
}

static void test_uffd_wp_splits(void **state)
{
	(void)state;
	struct ctx c = {.profile = "x86-24", .what = W_UFFD};
	struct sim *s = run(&c);
	assert_false(c.pmd_after & PTE_HUGE);
	assert_false(c.block_anywhere);
	assert_int_equal(pte_pfn(c.pte_lo), c.frame);
	assert_false(c.pte_lo & PTE_WRITE);
	assert_true(c.pte_lo & PTE_UFFD_WP);
	tsim_free(s);
}

/* ---- fork ---- */
static void child_fn(struct sim *s, struct sim_thread *t)
{
	struct ctx *c = t->arg;
	struct mm_struct *mm = current_task(s)->mm;
	if (c->parent_first)
		TSIM_WAIT_UNTIL(s, c->parent_wrote);
	c->child_pmd = tsim_pmd(s, mm, AT);
	c->child_refcount = frame_of(hw_of(s), pte_pfn(c->child_pmd))->refcount;
	assert_int_equal(user_access(s, AT + MB2 / 2, false), 0);
	assert_int_equal(user_access(s, AT + 4096, true), 0);
	c->child_pmd_after_write = tsim_pmd(s, mm, AT);
	c->child_frame_after_write = tsim_pte_frame(s, mm, AT + 4096);
	c->child_frame_other = tsim_pte_frame(s, mm, AT + 16 * 4096);
}

static void fork_fn(struct sim *s, struct sim_thread *t)
{
	struct ctx *c = t->arg;
	struct mm_struct *mm = current_task(s)->mm;
	uint64_t a = map_huge(s, c);
	struct task *child = sys_fork(s, sizeof(struct task), child_fn, c, 0);
	assert_non_null(child);
	c->pmd_after = tsim_pmd(s, mm, a);
	c->writable_anywhere = tsim_block_cached(s, a, true);
	c->done = true;
	if (c->parent_first) {
		/* the page is mapped by the child too: split, COW */
		assert_int_equal(user_access(s, a + 8192, true), 0);
		c->pmd_after2 = tsim_pmd(s, mm, a);
		c->parent_frame_written = tsim_pte_frame(s, mm, a + 8192);
		c->parent_frame_other = tsim_pte_frame(s, mm, a + 16 * 4096);
		c->parent_wrote = true;
		assert_non_null(sys_wait4(s));
		sys_munmap(s, a, MB2);
		return;
	}
	assert_non_null(sys_wait4(s));
	c->refcount_after = frame_of(hw_of(s), c->frame)->refcount;
	c->write_ret = user_access(s, a + 8192, true);
	c->pmd_after2 = tsim_pmd(s, mm, a);
	sys_munmap(s, a, MB2);
}

static void check_fork(const char *profile)
{
	struct ctx c = {.profile = profile};
	struct sim *s = tsim_new(profile, 2, NESTED_FULLMM);
	tsim_spawn(s, fork_fn, &c, CPU);
	tsim_spawn(s, other_fn, &c, OTHER);
	tsim_run(s);
	assert_int_equal(tsim_violation(s)->kind, -1);
	/* after fork: both entries huge, the same page, write-protected */
	assert_true(c.pmd_after & PTE_HUGE);
	assert_int_equal(pte_pfn(c.pmd_after), c.frame);
	assert_false(tsim_pmd_writable(s, c.pmd_after));
	assert_false(c.writable_anywhere);
	assert_true(c.child_pmd & PTE_HUGE);
	assert_int_equal(pte_pfn(c.child_pmd), c.frame);
	assert_false(tsim_pmd_writable(s, c.child_pmd));
	assert_int_equal(c.child_refcount, 2);
	/* the child's write: split, and a copy of the subpage */
	assert_false(c.child_pmd_after_write & PTE_HUGE);
	assert_int_not_equal(c.child_frame_after_write, c.frame);
	assert_int_not_equal(c.child_frame_after_write, NO_FRAME);
	/* the child is gone: the parent's page is mapped once again, reused */
	assert_int_equal(c.refcount_after, 1);
	assert_int_equal(c.write_ret, 0);
	assert_true(c.pmd_after2 & PTE_HUGE);
	assert_int_equal(pte_pfn(c.pmd_after2), c.frame);
	assert_true(tsim_pmd_writable(s, c.pmd_after2));
	tsim_free(s);
}

/* the parent writes first, while the child maps the page too */
static void check_fork_parent_first(const char *profile)
{
	struct ctx c = {.profile = profile, .parent_first = true};
	struct sim *s = tsim_new(profile, 2, NESTED_FULLMM);
	tsim_spawn(s, fork_fn, &c, CPU);
	tsim_spawn(s, other_fn, &c, OTHER);
	tsim_run(s);
	assert_int_equal(tsim_violation(s)->kind, -1);
	assert_false(c.writable_anywhere);
	/* the parent's block split, the written subpage copied, the others
	 * still the huge page */
	assert_false(c.pmd_after2 & PTE_HUGE);
	assert_int_not_equal(c.parent_frame_written, c.frame);
	assert_int_not_equal(c.parent_frame_written, NO_FRAME);
	assert_int_equal(c.parent_frame_other, c.frame);
	/* the child still has its block, and COWs its own write */
	assert_true(c.child_pmd & PTE_HUGE);
	assert_int_equal(pte_pfn(c.child_pmd), c.frame);
	assert_false(c.child_pmd_after_write & PTE_HUGE);
	assert_int_not_equal(c.child_frame_after_write, c.frame);
	assert_int_not_equal(c.child_frame_after_write, c.parent_frame_written);
	assert_int_equal(c.child_frame_other, c.frame);
	tsim_free(s);
}

static void test_fork_parent_writes_first(void **state)
{
	(void)state;
	check_fork_parent_first("x86-24");
	check_fork_parent_first("arm64-4k");
}

static void test_fork_x86(void **state)
{
	(void)state;
	check_fork("x86-24");
}

static void test_fork_arm64(void **state)
{
	(void)state;
	check_fork("arm64-4k");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mprotect_whole_x86),
		cmocka_unit_test(test_mprotect_whole_arm64),
		cmocka_unit_test(test_mprotect_part_splits_x86),
		cmocka_unit_test(test_mprotect_part_splits_arm64),
		cmocka_unit_test(test_mremap_moves_block_x86),
		cmocka_unit_test(test_mremap_moves_block_arm64),
		cmocka_unit_test(test_mremap_unaligned_splits),
		cmocka_unit_test(test_clear_refs_soft_dirty_x86),
		cmocka_unit_test(test_clear_refs_age),
		cmocka_unit_test(test_uffd_wp_splits),
		cmocka_unit_test(test_fork_x86),
		cmocka_unit_test(test_fork_arm64),
		cmocka_unit_test(test_fork_parent_writes_first),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
