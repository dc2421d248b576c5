/*
 * test_msync.c - msync(2) (src/mm/msync.c, mm/msync.c v5.1), one rule per
 * test:
 *  - MS_SYNC on a shared ext4 mapping writes back the dirty pages of the
 *    range (vfs_fsync_range -> write_cache_pages): each one is clean
 *    afterwards and its PTE write-protected and flushed (page_mkclean), in
 *    every mm that maps it; pages outside the range stay dirty;
 *  - MS_ASYNC does nothing (no I/O since v2.6.19): the page stays dirty, its
 *    PTE writable, nothing is flushed;
 *  - MS_SYNC on tmpfs (noop_fsync) and on a private mapping writes nothing;
 *  - bad input: MS_ASYNC | MS_SYNC, an unknown flag, an unaligned start are
 *    EINVAL (-1, nothing done); a hole in the range is ENOMEM (-1) after the
 *    mapped part was synced.
 * And mprotect's vma_merge of file-backed VMAs (mm/mmap.c v5.1): a shared
 * mapping split by mprotect(page, READ) is one VMA again after
 * mprotect(page, READ|WRITE), with its file's i_mmap and references as
 * before.
 */
#include "test_util.h"

struct mctx {
	const struct fs_type *fs;
	bool priv;
	int flags;
	uint64_t npages;		/* of the mapping; the first two are written */
	uint64_t sync_pages;		/* msync's range, from the start */
	int rc;
	uint64_t dirty_before, dirty_after;
	bool p0_writable, p1_writable;
	uint64_t flushes;		/* x86: INVLPGs + full flushes */
	int ran;
};

static bool writable(struct sim *s, struct mm_struct *mm, uint64_t va)
{
	pte_t *p = pte_lookup(s, mm, va);
	return p && pte_present(*p) && (*p & PTE_WRITE);
}

static void msync_main(struct sim *s, struct sim_thread *t)
{
	struct mctx *c = t->arg;
	struct mm_struct *mm = task_of(t)->mm;
	uint64_t ps = hw_of(s)->geom.page_size;
	struct inode *f = sys_tmpfile(s, c->fs, c->npages * ps);
	uint64_t a = sys_mmap_file(s, 0, c->npages * ps,
				   c->priv ? TLBSIM_MAP_PRIVATE : TLBSIM_MAP_SHARED, f, 0);
	assert_int_equal(user_access(s, a, true), 0);
	assert_int_equal(user_access(s, a + ps, true), 0);
	c->dirty_before = f->nr_dirty;
	uint64_t f0 = s->m.flush_local_pages + s->m.flush_full;
	c->rc = sys_msync(s, a, c->sync_pages * ps, c->flags);
	c->flushes = s->m.flush_local_pages + s->m.flush_full - f0;
	c->dirty_after = f->nr_dirty;
	c->p0_writable = writable(s, mm, a);
	c->p1_writable = writable(s, mm, a + ps);
	c->ran = 1;
}

static struct mctx run(const struct fs_type *fs, bool priv, int flags, uint64_t npages,
		       uint64_t sync_pages)
{
	struct mctx c = {.fs = fs, .priv = priv, .flags = flags, .npages = npages,
			 .sync_pages = sync_pages};
	struct sim *s = tsim_new("x86-24", 2, NESTED_FULLMM);
	machine_of(s)->policy.fault_retry = FAULT_RETRY_NONE;
	tsim_spawn(s, msync_main, &c, 0);
	tsim_run(s);
	assert_int_equal(c.ran, 1);
	assert_int_equal(s->m.violations, 0);
	tsim_free(s);
	return c;
}

/* MS_SYNC over the whole ext4 mapping: both dirty pages written back,
 * both PTEs write-protected, one single-page flush each */
static void test_ms_sync_writes_back(void **state)
{
	(void)state;
	struct mctx c = run(&fs_ext4, false, TLBSIM_MS_SYNC, 2, 2);
	assert_int_equal(c.rc, 0);
	assert_int_equal(c.dirty_before, 2);
	assert_int_equal(c.dirty_after, 0);
	assert_false(c.p0_writable);
	assert_false(c.p1_writable);
	assert_int_equal(c.flushes, 2);
}

/* MS_SYNC of the first page only: the second stays dirty and writable */
static void test_ms_sync_range_only(void **state)
{
	(void)state;
	struct mctx c = run(&fs_ext4, false, TLBSIM_MS_SYNC, 2, 1);
	assert_int_equal(c.rc, 0);
	assert_int_equal(c.dirty_after, 1);
	assert_false(c.p0_writable);
	assert_true(c.p1_writable);
	assert_int_equal(c.flushes, 1);
}

/* MS_ASYNC: no I/O, nothing changes */
static void test_ms_async_does_nothing(void **state)
{
	(void)state;
	struct mctx c = run(&fs_ext4, false, TLBSIM_MS_ASYNC, 2, 2);
	assert_int_equal(c.rc, 0);
	assert_int_equal(c.dirty_before, 2);
	assert_int_equal(c.dirty_after, 2);
	assert_true(c.p0_writable);
	assert_true(c.p1_writable);
	assert_int_equal(c.flushes, 0);
}

/* tmpfs: noop_fsync; a private mapping: not a shared file mapping */
static void test_ms_sync_tmpfs_and_private(void **state)
{
	(void)state;
	struct mctx c = run(&fs_tmpfs, false, TLBSIM_MS_SYNC, 2, 2);
	assert_int_equal(c.rc, 0);
	assert_int_equal(c.dirty_after, c.dirty_before);
	assert_int_equal(c.flushes, 0);
	assert_true(c.p0_writable);
	c = run(&fs_ext4, true, TLBSIM_MS_SYNC, 2, 2);
	assert_int_equal(c.rc, 0);
	assert_int_equal(c.flushes, 0);
	assert_true(c.p0_writable);		/* the private copy */
}

/* EINVAL for both flags and for an unknown flag: nothing is written */
static void test_bad_flags(void **state)
{
	(void)state;
	struct mctx c = run(&fs_ext4, false, TLBSIM_MS_SYNC | TLBSIM_MS_ASYNC, 2, 2);
	assert_int_equal(c.rc, -1);
	assert_int_equal(c.dirty_after, 2);
	c = run(&fs_ext4, false, 0x100, 2, 2);
	assert_int_equal(c.rc, -1);
	assert_int_equal(c.dirty_after, 2);
}

struct hctx {
	int unaligned, hole;
	uint64_t dirty_after;
	int ran;
};

static void hole_main(struct sim *s, struct sim_thread *t)
{
	struct hctx *c = t->arg;
	uint64_t ps = hw_of(s)->geom.page_size;
	struct inode *f = sys_tmpfile(s, &fs_ext4, ps);
	uint64_t a = sys_mmap_file(s, 0, 2 * ps, TLBSIM_MAP_SHARED, f, 0);
	assert_int_equal(sys_munmap(s, a + ps, ps), 0);		/* a hole after page 0 */
	assert_int_equal(user_access(s, a, true), 0);
	c->unaligned = sys_msync(s, a + 1, ps, TLBSIM_MS_SYNC);
	c->hole = sys_msync(s, a, 2 * ps, TLBSIM_MS_SYNC);
	c->dirty_after = f->nr_dirty;
	c->ran = 1;
}

/* unaligned: EINVAL; [page, hole): ENOMEM, the page written back anyway */
static void test_unaligned_and_hole(void **state)
{
	(void)state;
	struct hctx c = {0};
	struct sim *s = tsim_new("x86-24", 2, NESTED_FULLMM);
	machine_of(s)->policy.fault_retry = FAULT_RETRY_NONE;
	tsim_spawn(s, hole_main, &c, 0);
	tsim_run(s);
	assert_int_equal(c.ran, 1);
	assert_int_equal(c.unaligned, -1);
	assert_int_equal(c.hole, -1);
	assert_int_equal(c.dirty_after, 0);
	tsim_free(s);
}

/* ---- MS_SYNC cleans another process's PTE: a flush IPI to its CPU ---- */

struct xctx {
	struct inode *f;
	uint64_t a;
	bool mapped, synced;
	uint64_t shootdowns, ipis;
	bool other_writable;
	struct mm_struct *other;
};

static void other_proc(struct sim *s, struct sim_thread *t)
{
	struct xctx *c = t->arg;
	uint64_t ps = hw_of(s)->geom.page_size;
	assert_int_equal(sys_mmap_file(s, c->a, ps, TLBSIM_MAP_SHARED, c->f, 0), c->a);
	assert_int_equal(user_access(s, c->a, true), 0);
	c->mapped = true;
	while (!c->synced)			/* stays on its CPU, its mm loaded */
		sim_step(s, YP_USER, 1000);
	c->other_writable = writable(s, task_of(t)->mm, c->a);
}

static void syncer(struct sim *s, struct sim_thread *t)
{
	struct xctx *c = t->arg;
	uint64_t ps = hw_of(s)->geom.page_size;
	while (!c->mapped)
		sim_step(s, YP_USER, 1000);
	uint64_t sh0 = s->m.tlb_shootdowns, ip0 = s->m.ipi_received;
	assert_int_equal(sys_msync(s, c->a, ps, TLBSIM_MS_SYNC), 0);
	c->shootdowns = s->m.tlb_shootdowns - sh0;
	c->ipis = s->m.ipi_received - ip0;
	c->synced = true;
}

static void x_setup(struct sim *s, struct sim_thread *t)
{
	struct xctx *c = t->arg;
	uint64_t ps = hw_of(s)->geom.page_size;
	c->f = sys_tmpfile(s, &fs_ext4, ps);
	c->a = sys_mmap_file(s, 0, ps, TLBSIM_MAP_SHARED, c->f, 0);
	c->other = mm_alloc(s);
	tsim_spawn_mm(s, other_proc, c, c->other, 1);
	syncer(s, t);
}

/* the writeback's page_mkclean write-protects the other process's PTE and
 * flushes it on the CPU that runs it: one flush IPI received there, counted
 * as a TLB shootdown (irq_tlb_count) */
static void test_ms_sync_shoots_down_other_process(void **state)
{
	(void)state;
	struct xctx c = {0};
	struct sim *s = tsim_new("x86-24", 2, NESTED_FULLMM);
	machine_of(s)->policy.fault_retry = FAULT_RETRY_NONE;
	tsim_spawn(s, x_setup, &c, 0);
	tsim_run(s);
	assert_true(c.synced);
	assert_int_equal(c.shootdowns, 1);
	assert_int_equal(c.ipis, 1);
	assert_false(c.other_writable);
	assert_int_equal(s->m.violations, 0);
	tsim_free(s);
}

/* ---- vma_merge after mprotect of a shared file mapping ---- */

struct vctx {
	int vmas_split, vmas_merged, vmas_before;
	int nr_mmap_split, nr_mmap_merged;
	uint32_t refs_before, refs_after;
	int ran;
};

static void merge_main(struct sim *s, struct sim_thread *t)
{
	struct vctx *c = t->arg;
	struct mm_struct *mm = task_of(t)->mm;
	uint64_t ps = hw_of(s)->geom.page_size;
	struct inode *f = sys_tmpfile(s, &fs_ext4, 3 * ps);
	uint64_t a = sys_mmap_file(s, 0, 3 * ps, TLBSIM_MAP_SHARED, f, 0);
	c->vmas_before = mm->nr_vmas;
	c->refs_before = f->refs;
	assert_int_equal(sys_mprotect(s, a + ps, ps, TLBSIM_PROT_READ), 0);
	c->vmas_split = mm->nr_vmas;
	c->nr_mmap_split = f->nr_mmap;
	assert_int_equal(sys_mprotect(s, a + ps, ps, TLBSIM_PROT_READ | TLBSIM_PROT_WRITE), 0);
	c->vmas_merged = mm->nr_vmas;
	c->nr_mmap_merged = f->nr_mmap;
	c->refs_after = f->refs;
	struct vm_area_struct *v = find_vma(mm, a);
	assert_int_equal(v->vm_start, a);
	assert_int_equal(v->vm_end, a + 3 * ps);
	assert_int_equal(user_access(s, a + ps, true), 0);
	c->ran = 1;
}

static void test_mprotect_merges_file_vmas(void **state)
{
	(void)state;
	struct vctx c = {0};
	struct sim *s = tsim_new("arm64-4k", 2, NESTED_FULLMM);
	tsim_spawn(s, merge_main, &c, 0);
	tsim_run(s);
	assert_int_equal(c.ran, 1);
	assert_int_equal(c.vmas_split, c.vmas_before + 2);
	assert_int_equal(c.nr_mmap_split, 3);
	assert_int_equal(c.vmas_merged, c.vmas_before);
	assert_int_equal(c.nr_mmap_merged, 1);
	assert_int_equal(c.refs_after, c.refs_before);
	tsim_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ms_sync_writes_back),
		cmocka_unit_test(test_ms_sync_range_only),
		cmocka_unit_test(test_ms_async_does_nothing),
		cmocka_unit_test(test_ms_sync_tmpfs_and_private),
		cmocka_unit_test(test_bad_flags),
		cmocka_unit_test(test_unaligned_and_hole),
		cmocka_unit_test(test_ms_sync_shoots_down_other_process),
		cmocka_unit_test(test_mprotect_merges_file_vmas),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
