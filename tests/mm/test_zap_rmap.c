/*
 * test_zap_rmap.c - the rmap of a dirty shared file page zapped by
 * zap_pte_range, the split PTE lock, and page_mkclean's early return
 * (src/mm/memory.c, mmu_gather.c, filemap.c; knob zap_rmap).
 *
 * Rules checked:
 *  - zap_rmap=delayed (5df397dec7c4, v6.1): while MADV_DONTNEED's zap has
 *    cleared a dirty shared-file PTE and not yet flushed, the page still
 *    counts as mapped (PG_DELAY_RMAP), and the rmap goes away after the
 *    flush (tlb_flush_rmaps), before the call returns; zap_rmap=early
 *    (v3.15..v6.0): the page is never seen mapped once its PTE is gone;
 *    both dirty the page (set_page_dirty) and emit the same flush;
 *  - page_mkclean of a page no PTE maps does nothing: no i_mmap walk (it
 *    does not wait for i_mmap_rwsem), no flush - writeback of such a page
 *    flushes nothing;
 *  - the PTE lock: an rmap walker (page_mkclean, reclaim: rmap_ptl_lock)
 *    does not get it while a zap holds it (ptl_lock), and a zap does not get
 *    it while a walker holds it; each gets it once it is released.
 */
#include "test_util.h"

static const int64_t no_kpti[] = {P_kpti, 0, -1};

/* ---- the delayed rmap, seen from another CPU ---- */

struct zr {
	uint64_t a;
	uint32_t frame;
	volatile bool touched, done;
	bool saw_delay, saw_delay_pte_present;
	uint8_t flags_after;
	struct tlbsim_metrics m0, m1;
};

static void watcher_body(struct sim *s, struct sim_thread *t)
{
	struct zr *x = t->arg;
	TSIM_WAIT_UNTIL(s, x->a);
	assert_int_equal(user_access(s, x->a, true), 0);	/* a dirty entry here too */
	x->touched = true;
	while (!x->done) {
		if (frame_of(hw_of(s), x->frame)->pgflags & PG_DELAY_RMAP) {
			x->saw_delay = true;
			pte_t *p = pte_lookup(s, task_of(t)->mm, x->a);
			if (p && pte_present(*p))
				x->saw_delay_pte_present = true;
		}
		sim_step(s, YP_USER, 10);
	}
}

static void zapper_body(struct sim *s, struct sim_thread *t)
{
	struct zr *x = t->arg;
	struct mm_struct *mm = task_of(t)->mm;
	uint64_t ps = hw_of(s)->geom.page_size;
	struct inode *f = sys_tmpfile(s, &fs_ext4, ps);
	uint64_t a = sys_mmap_file(s, 0, ps, TLBSIM_MAP_SHARED, f, 0);
	assert_int_equal(user_access(s, a, true), 0);
	x->frame = pte_pfn(*pte_lookup(s, mm, a));
	x->a = a;
	TSIM_WAIT_UNTIL(s, x->touched);
	x->m0 = s->m;
	assert_int_equal(sys_madvise_dontneed(s, a, ps), 0);
	x->m1 = s->m;
	x->flags_after = frame_of(hw_of(s), x->frame)->pgflags;
	x->done = true;
}

static struct zr run_zr(const char *profile, enum zap_rmap_policy p)
{
	struct zr x = {0};
	struct sim *s = tsim_new_p(profile, 2, NESTED_FULLMM, no_kpti);
	machine_of(s)->policy.zap_rmap = p;
	tsim_spawn(s, zapper_body, &x, 0);
	tsim_spawn(s, watcher_body, &x, 1);
	tsim_run(s);
	assert_int_equal(s->m.violations, 0);
	tsim_free(s);
	return x;
}

static void test_delayed_rmap(void **state)
{
	(void)state;
	const char *profiles[] = {"x86-24", "arm64-4k"};
	for (int i = 0; i < 2; i++) {
		struct zr e = run_zr(profiles[i], ZAP_RMAP_EARLY);
		struct zr d = run_zr(profiles[i], ZAP_RMAP_DELAYED);
		/* early: never mapped-by-rmap without its PTE */
		assert_false(e.saw_delay);
		/* delayed: mapped for rmap walkers while the PTE is gone and the
		 * flush outstanding */
		assert_true(d.saw_delay);
		assert_false(d.saw_delay_pte_present);
		/* both: the rmap is gone and the page dirty when the call
		 * returns, after the same flush */
		assert_false(e.flags_after & PG_DELAY_RMAP);
		assert_false(d.flags_after & PG_DELAY_RMAP);
		assert_true(e.flags_after & PG_DIRTY);
		assert_true(d.flags_after & PG_DIRTY);
		assert_int_equal(e.m1.ipi_sent - e.m0.ipi_sent, d.m1.ipi_sent - d.m0.ipi_sent);
		assert_int_equal(e.m1.flush_local_pages - e.m0.flush_local_pages,
				 d.m1.flush_local_pages - d.m0.flush_local_pages);
		assert_int_equal(e.m1.tlbi.vale1is - e.m0.tlbi.vale1is,
				 d.m1.tlbi.vale1is - d.m0.tlbi.vale1is);
		assert_int_equal(e.m1.tlbi.vae1is - e.m0.tlbi.vae1is,
				 d.m1.tlbi.vae1is - d.m0.tlbi.vae1is);
	}
}

/* ---- page_mkclean of an unmapped page ---- */

struct unm {
	struct inode *f;
	volatile bool locked;
	struct tlbsim_metrics m0, m1;
	uint8_t flags_before, flags_after;
	uint64_t fsync_done, rwsem_released;
};

/* holds the file's i_mmap_rwsem for write for 50 us */
static void rmap_holder_body(struct sim *s, struct sim_thread *t)
{
	struct unm *x = t->arg;
	TSIM_WAIT_UNTIL(s, x->f);
	down_write(s, &x->f->i_mmap_rwsem);
	x->locked = true;
	sim_step(s, YP_USER, 50000);
	x->rwsem_released = s->now;
	up_write(s, &x->f->i_mmap_rwsem);
}

static void unmapped_body(struct sim *s, struct sim_thread *t)
{
	struct unm *x = t->arg;
	struct mm_struct *mm = task_of(t)->mm;
	uint64_t ps = hw_of(s)->geom.page_size;
	struct inode *f = sys_tmpfile(s, &fs_ext4, ps);
	uint64_t a = sys_mmap_file(s, 0, ps, TLBSIM_MAP_SHARED, f, 0);
	assert_int_equal(user_access(s, a, true), 0);
	uint32_t frame = pte_pfn(*pte_lookup(s, mm, a));
	assert_int_equal(sys_munmap(s, a, ps), 0);	/* dirty page, no PTE */
	x->f = f;
	TSIM_WAIT_UNTIL(s, x->locked);
	x->flags_before = frame_of(hw_of(s), frame)->pgflags;
	x->m0 = s->m;
	sys_fsync(s, f);
	x->fsync_done = s->now;
	x->m1 = s->m;
	x->flags_after = frame_of(hw_of(s), frame)->pgflags;
}

static void test_mkclean_unmapped(void **state)
{
	(void)state;
	struct unm x = {0};
	struct sim *s = tsim_new_p("x86-24", 2, NESTED_FULLMM, no_kpti);
	tsim_spawn(s, unmapped_body, &x, 0);
	tsim_spawn(s, rmap_holder_body, &x, 1);
	tsim_run(s);
	tsim_free(s);
	assert_true(x.flags_before & PG_DIRTY);
	assert_false(x.flags_after & PG_DIRTY);		/* written back */
	/* no rmap walk: it did not wait for i_mmap_rwsem */
	assert_true(x.fsync_done < x.rwsem_released);
	assert_int_equal(x.m1.flush_local_pages, x.m0.flush_local_pages);
	assert_int_equal(x.m1.flush_full, x.m0.flush_full);
	assert_int_equal(x.m1.ipi_sent, x.m0.ipi_sent);
}

/* ---- the PTE lock: an rmap walker waits for a holder, and back ---- */

struct ptl {
	uint32_t table;
	bool walker_holds;		/* the holder is the rmap walker */
	volatile bool held;
	uint64_t released_at, acquired_at;
};

static void holder_body(struct sim *s, struct sim_thread *t)
{
	struct ptl *x = t->arg;
	if (x->walker_holds)
		rmap_ptl_lock(s, x->table);
	else
		ptl_lock(s, x->table);
	x->held = true;
	sim_step(s, YP_USER, 5000);		/* hold it for 5 us */
	x->released_at = s->now;
	if (x->walker_holds)
		rmap_ptl_unlock(s);
	else
		ptl_unlock(s);
}

static void waiter_body(struct sim *s, struct sim_thread *t)
{
	struct ptl *x = t->arg;
	TSIM_WAIT_UNTIL(s, x->held);
	if (x->walker_holds) {
		ptl_lock(s, x->table);
		x->acquired_at = s->now;
		ptl_unlock(s);
	} else {
		rmap_ptl_lock(s, x->table);
		x->acquired_at = s->now;
		rmap_ptl_unlock(s);
	}
}

static void test_pte_lock(void **state)
{
	(void)state;
	for (int w = 0; w < 2; w++) {
		struct ptl x = {.table = 12345, .walker_holds = w};
		struct sim *s = tsim_new_p("x86-24", 2, NESTED_FULLMM, no_kpti);
		tsim_spawn(s, holder_body, &x, 0);
		tsim_spawn(s, waiter_body, &x, 1);
		tsim_run(s);
		assert_true(x.released_at > 0);
		assert_true(x.acquired_at >= x.released_at);
		assert_int_equal(kernel_of(s)->nr_reclaim_ptl, 0);
		tsim_free(s);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_delayed_rmap),
		cmocka_unit_test(test_mkclean_unmapped),
		cmocka_unit_test(test_pte_lock),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
