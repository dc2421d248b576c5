/*
 * test_filemap.c - files, page cache and dirty pages, one rule per test:
 *  - zap_pte_range flushes a dirty file PTE before it drops the PTE lock
 *    (one flush per PTE table that held one), and dirties the page;
 *    anonymous PTEs wait for the gather's final flush;
 *  - the page cache keeps a file's pages across munmap; the last reference
 *    (close + every mapping gone) frees them;
 *  - i_mmap holds exactly the VMAs mapping a file: mmap adds, a split adds
 *    the new part, munmap removes (unlink_file_vma in free_pgtables);
 *  - dirty accounting (ext4 only) and balance_dirty_pages_ratelimited:
 *    no throttling below the freerun point, a pause above it;
 *  - page_mkclean write-protects and cleans every PTE of the page in every
 *    VMA that maps it, with one flush each.
 */
#include "test_util.h"

#define MiB (1ull << 20)

struct zctx {
	bool file;
	uint64_t invlpg, full, dirty_pages;
	int ran;
};

/* Two dirty pages in two PTE tables: the last page below a 2 MiB boundary B
 * and the page at B + 1 MiB; MADV_DONTNEED of [B - 4K, B + 1M + 4K). */
static uint64_t two_tables(struct sim *s, bool file, struct inode **fp)
{
	uint64_t len = 4 * MiB;
	struct inode *f = file ? sys_tmpfile(s, &fs_tmpfs, len) : NULL;
	uint64_t a = file ? sys_mmap_file(s, 0, len, TLBSIM_MAP_SHARED, f, 0)
			  : sys_mmap(s, 0, len, TLBSIM_MAP_PRIVATE);
	uint64_t b = (a + 2 * MiB) & ~(2 * MiB - 1);	/* a 2 MiB boundary inside */
	assert_true(b - 4096 >= a && b + MiB + 4096 <= a + len);
	assert_int_equal(user_access(s, b - 4096, true), 0);
	assert_int_equal(user_access(s, b + MiB, true), 0);
	*fp = f;
	return b;
}

static void zap_main(struct sim *s, struct sim_thread *t)
{
	struct zctx *c = t->arg;
	struct inode *f;
	uint64_t b = two_tables(s, c->file, &f);
	struct tlbsim_metrics m0 = s->m;
	assert_int_equal(sys_madvise_dontneed(s, b - 4096, MiB + 2 * 4096), 0);
	c->invlpg = s->m.flush_local_pages - m0.flush_local_pages;
	c->full = s->m.flush_full - m0.flush_full;
	c->dirty_pages = f ? f->nr_dirty : 0;
	c->ran = 1;
}

/* Rule (zap_pte_range, mm/memory.c v5.1..v5.8): a dirty PTE of a file page
 * sets force_flush; the gathered range is flushed before the PTE lock of
 * that table is dropped and the walk goes on - one flush per PTE table
 * here, each of one page (2 INVLPG); the page is marked dirty. For
 * anonymous pages the gathered range [B - 4K, B + 1M + 4K) is flushed once,
 * at tlb_finish_mmu: 258 pages > 33, one full flush. */
static void test_zap_dirty_file_pte_flushes_under_ptl(void **state)
{
	struct zctx cf = {.file = true}, ca = {.file = false};
	struct sim *s = tsim_new("x86-24", 2, NESTED_FULLMM);
	tsim_spawn(s, zap_main, &cf, 0);
	tsim_run(s);
	tsim_free(s);
	s = tsim_new("x86-24", 2, NESTED_FULLMM);
	tsim_spawn(s, zap_main, &ca, 0);
	tsim_run(s);
	tsim_free(s);
	assert_int_equal(cf.ran + ca.ran, 2);
	/* file: two forced flushes of one page each, nothing left at finish */
	assert_int_equal(cf.invlpg, 2);
	assert_int_equal(cf.full, 0);
	assert_int_equal(cf.dirty_pages, 2);
	/* anonymous: one flush of the whole gathered range at finish */
	assert_int_equal(ca.invlpg, 0);
	assert_int_equal(ca.full, 1);
}

/* The same on arm64: with the forced flushes each table's page goes alone
 * (2 VALE1IS) and tlb_end_vma finds an empty range; anonymous: tlb_end_vma
 * flushes the whole gathered range, 258 pages < 512: 258 VALE1IS. */
struct actx {
	bool file;
	uint64_t vale;
	int ran;
};

static void arm_zap_main(struct sim *s, struct sim_thread *t)
{
	struct actx *c = t->arg;
	struct inode *f;
	uint64_t b = two_tables(s, c->file, &f);
	uint64_t v0 = s->m.tlbi.vale1is;
	assert_int_equal(sys_madvise_dontneed(s, b - 4096, MiB + 2 * 4096), 0);
	c->vale = s->m.tlbi.vale1is - v0;
	c->ran = 1;
}

static void test_zap_dirty_file_pte_arm64(void **state)
{
	struct actx cf = {.file = true}, ca = {.file = false};
	for (int i = 0; i < 2; i++) {
		struct actx *c = i ? &ca : &cf;
		struct sim *s = tsim_new("arm64-4k", 2, NESTED_FULLMM);
		tsim_spawn(s, arm_zap_main, c, 0);
		tsim_run(s);
		assert_int_equal(c->ran, 1);
		assert_int_equal(s->m.violations, 0);
		tsim_free(s);
	}
	assert_int_equal(cf.vale, 2);
	assert_int_equal(ca.vale, 258);
}

/* ---- page cache lifetime and i_mmap ---- */

struct pctx {
	uint32_t nr_after_munmap, nr_mmap[4];
	uint64_t freed_at_close;
	int ran;
};

static void pc_main(struct sim *s, struct sim_thread *t)
{
	struct pctx *c = t->arg;
	uint64_t ps = hw_of(s)->geom.page_size;
	struct inode *f = sys_tmpfile(s, &fs_ext4, 8 * ps);
	uint64_t a = sys_mmap_file(s, 0, 8 * ps, TLBSIM_MAP_SHARED, f, 0);
	uint64_t b = sys_mmap_file(s, 0, 8 * ps, TLBSIM_MAP_PRIVATE, f, 0);
	c->nr_mmap[0] = (uint32_t)f->nr_mmap;			/* 2 */
	for (int i = 0; i < 8; i++)
		assert_int_equal(user_access(s, a + (uint64_t)i * ps, true), 0);
	assert_int_equal(sys_munmap(s, a + 2 * ps, ps), 0);	/* splits a in two */
	c->nr_mmap[1] = (uint32_t)f->nr_mmap;			/* 3 */
	assert_int_equal(sys_munmap(s, a, 8 * ps), 0);
	c->nr_mmap[2] = (uint32_t)f->nr_mmap;			/* 1 */
	c->nr_after_munmap = f->nr;				/* 8: the cache keeps them */
	assert_int_equal(sys_munmap(s, b, 8 * ps), 0);
	c->nr_mmap[3] = (uint32_t)f->nr_mmap;			/* 0 */
	uint32_t frames[8];
	for (int i = 0; i < 8; i++)
		frames[i] = find_get_page(s, f, (uint64_t)i);
	sys_close(s, f);					/* last reference */
	for (int i = 0; i < 8; i++)
		c->freed_at_close += frame_of(hw_of(s), frames[i])->state == FRAME_FREE;
	c->ran = 1;
}

/* Rule (mmap_region/__vma_link_file, __split_vma, unlink_file_vma, fput ->
 * evict/truncate_inode_pages): i_mmap lists each VMA of the file; the page
 * cache outlives the mappings and goes with the last file reference. */
static void test_page_cache_and_i_mmap(void **state)
{
	struct pctx c = {0};
	struct sim *s = tsim_new("arm64-4k", 2, NESTED_FULLMM);
	tsim_spawn(s, pc_main, &c, 0);
	tsim_run(s);
	assert_int_equal(c.ran, 1);
	assert_int_equal(c.nr_mmap[0], 2);
	assert_int_equal(c.nr_mmap[1], 3);
	assert_int_equal(c.nr_mmap[2], 1);
	assert_int_equal(c.nr_mmap[3], 0);
	assert_int_equal(c.nr_after_munmap, 8);
	assert_int_equal(c.freed_at_close, 8);
	tsim_free(s);
}

/* ---- dirty throttling ---- */

struct tctx {
	uint64_t throttle_ns, file_dirty;
	int ran;
};

static void dirty_main(struct sim *s, struct sim_thread *t)
{
	struct tctx *c = t->arg;
	uint64_t ps = hw_of(s)->geom.page_size;
	uint64_t n = 256;
	struct inode *f = sys_tmpfile(s, &fs_ext4, n * ps);
	uint64_t a = sys_mmap_file(s, 0, n * ps, TLBSIM_MAP_SHARED, f, 0);
	for (uint64_t i = 0; i < n; i++)
		assert_int_equal(user_access(s, a + i * ps, true), 0);
	c->throttle_ns = s->m.dirty_throttle_ns;
	c->file_dirty = kernel_of(s)->nr_file_dirty;
	c->ran = 1;
}

/* Rule (balance_dirty_pages_ratelimited / balance_dirty_pages, model): every
 * newly dirtied ext4 page counts in NR_FILE_DIRTY; below the freerun point
 * ((thresh + bg_thresh) / 2) nobody sleeps; above it the dirtier pauses.
 * 256 pages against 64 GiB of RAM: no pause. Against 1 MiB of RAM (thresh
 * 51 pages, freerun 38): the task is throttled. */
static void test_dirty_throttle(void **state)
{
	for (int small = 0; small <= 1; small++) {
		struct tctx c = {0};
		int64_t ov[] = {P_ram_mb, small ? 1 : 65536, -1};
		struct sim *s = tsim_new_p("arm64-4k", 2, NESTED_FULLMM, ov);
		tsim_spawn(s, dirty_main, &c, 0);
		tsim_run(s);
		assert_int_equal(c.ran, 1);
		assert_int_equal(c.file_dirty, 256);
		if (small)
			assert_true(c.throttle_ns > 0);
		else
			assert_int_equal(c.throttle_ns, 0);
		tsim_free(s);
	}
}

/* tmpfs accounts nothing and never throttles */
static void tmpfs_dirty_main(struct sim *s, struct sim_thread *t)
{
	struct tctx *c = t->arg;
	uint64_t ps = hw_of(s)->geom.page_size;
	struct inode *f = sys_tmpfile(s, &fs_tmpfs, 256 * ps);
	uint64_t a = sys_mmap_file(s, 0, 256 * ps, TLBSIM_MAP_SHARED, f, 0);
	for (uint64_t i = 0; i < 256; i++)
		assert_int_equal(user_access(s, a + i * ps, true), 0);
	c->throttle_ns = s->m.dirty_throttle_ns;
	c->file_dirty = kernel_of(s)->nr_file_dirty;
	c->ran = 1;
}

static void test_tmpfs_not_accounted(void **state)
{
	struct tctx c = {0};
	int64_t ov[] = {P_ram_mb, 1, -1};
	struct sim *s = tsim_new_p("arm64-4k", 2, NESTED_FULLMM, ov);
	tsim_spawn(s, tmpfs_dirty_main, &c, 0);
	tsim_run(s);
	assert_int_equal(c.ran, 1);
	assert_int_equal(c.file_dirty, 0);
	assert_int_equal(c.throttle_ns, 0);
	tsim_free(s);
}

/* ---- page_mkclean over several mappings ---- */

struct mctx {
	uint64_t vale;
	bool clean_a, clean_b;
	int ran;
};

static void mkclean_main(struct sim *s, struct sim_thread *t)
{
	struct mctx *c = t->arg;
	struct mm_struct *mm = task_of(t)->mm;
	struct hw *hw = hw_of(s);
	uint64_t ps = hw->geom.page_size;
	struct inode *f = sys_tmpfile(s, &fs_ext4, ps);
	uint64_t a = sys_mmap_file(s, 0, ps, TLBSIM_MAP_SHARED, f, 0);
	uint64_t b = sys_mmap_file(s, 0, ps, TLBSIM_MAP_SHARED, f, 0);
	assert_int_equal(user_access(s, a, true), 0);
	assert_int_equal(user_access(s, b, true), 0);
	uint64_t v0 = s->m.tlbi.vale1is;
	sys_fsync(s, f);
	c->vale = s->m.tlbi.vale1is - v0;
	pte_t pa = *pte_lookup(s, mm, a), pb = *pte_lookup(s, mm, b);
	c->clean_a = fmt_pte_clean(hw->fmt, pa) && !(pa & PTE_WRITE);
	c->clean_b = fmt_pte_clean(hw->fmt, pb) && !(pb & PTE_WRITE);
	c->ran = 1;
}

/* Rule (page_mkclean -> rmap_walk_file -> page_mkclean_one, mm/rmap.c):
 * every VMA of the file that maps the page gets its PTE write-protected
 * and cleaned, with one flush each (arm64: one VALE1IS per mapping). */
static void test_page_mkclean_every_mapping(void **state)
{
	struct mctx c = {0};
	struct sim *s = tsim_new("arm64-4k", 2, NESTED_FULLMM);
	machine_of(s)->policy.fault_retry = FAULT_RETRY_NONE;
	tsim_spawn(s, mkclean_main, &c, 0);
	tsim_run(s);
	assert_int_equal(c.ran, 1);
	assert_int_equal(c.vale, 2);
	assert_true(c.clean_a);
	assert_true(c.clean_b);
	assert_int_equal(s->m.violations, 0);
	tsim_free(s);
}

/* lock_page / unlock_page: a second locker sleeps until the holder unlocks,
 * then owns the page; writeback (fsync) of a page locked by a write fault
 * waits for the fault to finish with it */
struct pl {
	uint32_t f;
	uint64_t a_unlock, b_locked;
};

static void pl_a(struct sim *s, struct sim_thread *t)
{
	struct pl *p = t->arg;
	lock_page(s, p->f);
	sim_step(s, YP_USER, 50000);
	p->a_unlock = s->now + t->pending_ns;
	unlock_page(s, p->f);
}

static void pl_b(struct sim *s, struct sim_thread *t)
{
	struct pl *p = t->arg;
	sim_step(s, YP_USER, 1000);
	lock_page(s, p->f);
	p->b_locked = s->now + t->pending_ns;
	assert_true(frame_of(hw_of(s), p->f)->pgflags & PG_LOCKED);
	unlock_page(s, p->f);
}

static void test_lock_page(void **state)
{
	(void)state;
	struct sim *s = tsim_new("x86-24", 4, NESTED_FULLMM);
	struct pl p = {.f = frame_alloc(hw_of(s), FRAME_DATA, 0)};
	tsim_spawn(s, pl_a, &p, 0);
	tsim_spawn(s, pl_b, &p, 1);
	tsim_run(s);
	assert_true(p.a_unlock > 0);
	assert_true(p.b_locked >= p.a_unlock);	/* B slept until A unlocked */
	assert_false(frame_of(hw_of(s), p.f)->pgflags & PG_LOCKED);
	assert_null(kernel_of(s)->page_waiters);
	tsim_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_zap_dirty_file_pte_flushes_under_ptl),
		cmocka_unit_test(test_zap_dirty_file_pte_arm64),
		cmocka_unit_test(test_page_cache_and_i_mmap),
		cmocka_unit_test(test_dirty_throttle),
		cmocka_unit_test(test_tmpfs_not_accounted),
		cmocka_unit_test(test_page_mkclean_every_mapping),
		cmocka_unit_test(test_lock_page),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
