/*
 * test_mremap.c - mremap(2) (src/mm/mremap.c, mm/mremap.c v5.1 + the knobs
 * mremap_flush and mremap_pmd) and ftruncate's unmap_mapping_range.
 *
 * Rules checked:
 *  - a move (MREMAP_FIXED, or MREMAP_MAYMOVE when the VMA cannot grow in
 *    place) carries every present PTE to the same offset of the new range
 *    with its pfn and bits (write, dirty; x86 also gets the soft-dirty bit,
 *    move_soft_dirty_pte), leaves no PTE and no VMA in the old range, and
 *    the new VMA maps the same file offset; a shrink unmaps the tail and
 *    returns the address; a grow with room after the VMA stays in place;
 *    overlapping or unaligned requests fail;
 *  - where the old range is flushed, per mremap_flush value: under_ptl
 *    (eb66ae030829) flushes in every move_ptes that moved a present PTE,
 *    with both PTE locks held; dirty (5d1904204c99) does so only for an
 *    extent that moved a dirty PTE and otherwise flushes once at the end,
 *    with no lock held; after_ptl flushes once at the end. For 100 pages
 *    (two move_ptes extents: LATENCY_LIMIT is 64 pages) on x86 that is two
 *    IPIs to the other CPU against one;
 *  - mremap_pmd: none moves PTE by PTE into a new PTE table; need_rmap and
 *    rmap_locks move the whole PTE table (the new PMD entry points to the
 *    old table, the old one is empty) with one flush of the PMD span;
 *    rmap_locks holds the file's i_mmap_rwsem for write during that flush,
 *    need_rmap does not;
 *  - I2 at mremap's return: a CPU that still translates an old address is
 *    reported (by hand: the PTE moved without a flush); a real mremap under
 *    every knob value returns clean;
 *  - ftruncate(0) zaps every mapping of the file and frees its pages;
 *  - move_ptes' PTE locks (rmap_ptl_lock, rmap_ptl_lock2) are waited for
 *    by a zap (ptl_lock) and by page_mkclean (rmap_ptl_lock) until they are
 *    dropped; a zap's own hold (ptl_lock) does not stop another zap.
 */
#include "test_util.h"

static const int64_t no_kpti[] = {P_kpti, 0, -1};

/* ---- one task: what a move does to PTEs and VMAs ---- */

struct single {
	pte_t before[3], after[3];
	bool old_empty, old_vma, new_vma;
	uint64_t a, b, pgoff_new;
	uint64_t shrink, grow, bad_overlap, bad_unaligned, bad_zero;
};

static void single_body(struct sim *s, struct sim_thread *t)
{
	struct single *x = t->arg;
	struct mm_struct *mm = task_of(t)->mm;
	uint64_t ps = hw_of(s)->geom.page_size;
	struct inode *f = sys_tmpfile(s, &fs_tmpfs, 8 * ps);
	uint64_t a = sys_mmap_file(s, 0, 3 * ps, TLBSIM_MAP_SHARED, f, 2);
	assert_int_equal(user_access(s, a, true), 0);
	assert_int_equal(user_access(s, a + ps, false), 0);
	assert_int_equal(user_access(s, a + 2 * ps, true), 0);
	for (int i = 0; i < 3; i++)
		x->before[i] = *pte_lookup(s, mm, a + (uint64_t)i * ps);
	uint64_t hole = sys_mmap(s, 0, 16 * ps, TLBSIM_MAP_PRIVATE);
	assert_int_equal(sys_munmap(s, hole, 16 * ps), 0);
	uint64_t b = sys_mremap(s, a, 3 * ps, 3 * ps, true, hole + 4 * ps);
	x->a = a;
	x->b = b;
	x->old_empty = true;
	for (int i = 0; i < 3; i++) {
		pte_t *p = pte_lookup(s, mm, a + (uint64_t)i * ps);
		if (p && !pte_none(*p))
			x->old_empty = false;
		x->after[i] = *pte_lookup(s, mm, b + (uint64_t)i * ps);
	}
	struct vm_area_struct *v = find_vma(mm, a);
	x->old_vma = v && v->vm_start <= a;
	v = find_vma(mm, b);
	x->new_vma = v && v->vm_start == b && v->vm_end == b + 3 * ps;
	x->pgoff_new = v ? v->vm_pgoff : 0;
	/* shrink: the tail goes, the address stays */
	x->shrink = sys_mremap(s, b, 3 * ps, 2 * ps, false, 0);
	/* grow in place: the page after b + 2 pages is free (the hole) */
	x->grow = sys_mremap(s, b, 2 * ps, 3 * ps, false, 0);
	x->bad_overlap = sys_mremap(s, b, 3 * ps, 3 * ps, true, b + ps);
	x->bad_unaligned = sys_mremap(s, b + 1, ps, ps, false, 0);
	x->bad_zero = sys_mremap(s, b, 0, ps, false, 0);
	sys_close(s, f);
}

static void test_move_keeps_ptes(void **state)
{
	(void)state;
	const char *profiles[] = {"x86-24", "arm64-4k"};
	for (int p = 0; p < 2; p++) {
		for (int k = 0; k < MREMAP_FLUSH_COUNT; k++) {
			struct single x = {0};
			struct sim *s = tsim_new_p(profiles[p], 2, NESTED_FULLMM, no_kpti);
			machine_of(s)->policy.mremap_flush = (enum mremap_flush_policy)k;
			tsim_spawn(s, single_body, &x, 0);
			tsim_run(s);
			bool x86 = machine_is_x86(s);
			uint64_t ps = hw_of(s)->geom.page_size;
			assert_int_equal(s->m.violations, 0);
			tsim_free(s);
			assert_true(x.b != TLBSIM_EINVAL_VA && x.b != x.a);
			assert_true(x.old_empty);
			assert_false(x.old_vma);
			assert_true(x.new_vma);
			assert_int_equal(x.pgoff_new, 2);	/* the same file offset */
			for (int i = 0; i < 3; i++) {
				pte_t want = x.before[i] | (x86 ? PTE_SOFT_DIRTY : 0);
				assert_true(pte_present(x.after[i]));
				assert_int_equal(pte_pfn(x.after[i]), pte_pfn(x.before[i]));
				assert_int_equal(x.after[i], want);
			}
			assert_int_equal(x.shrink, x.b);
			assert_int_equal(x.grow, x.b);
			assert_int_equal(x.bad_overlap, TLBSIM_EINVAL_VA);
			assert_int_equal(x.bad_unaligned, TLBSIM_EINVAL_VA);
			assert_int_equal(x.bad_zero, TLBSIM_EINVAL_VA);
			(void)ps;
		}
	}
}

/* ---- two CPUs: what each knob value emits, and where ---- */

struct probe {
	const struct arch_hooks *orig;
	void *orig_ctx;
	struct sim *s;
	uint64_t lo, hi;		/* the old range */
	int flushes, under_ptl, under_rmap;
	struct inode *file;
};

static void probe_flush(void *ctx, const struct flush_note *n)
{
	struct probe *p = ctx;
	struct kernel *k = kernel_of(p->s);
	/* a flush that covers the old range: by range, x86 TLB_FLUSH_ALL, or
	 * arm64's whole-ASID flush_tlb_mm (no range) */
	if ((n->start < p->hi && (n->end > p->lo || n->full)) || n->start == n->end) {
		p->flushes++;
		if (k->nr_reclaim_ptl > 0)
			p->under_ptl++;
		if (p->file && p->file->i_mmap_rwsem.writer)
			p->under_rmap++;
	}
	if (p->orig && p->orig->tlb_flush)
		p->orig->tlb_flush(p->orig_ctx, n);
}

static void probe_ipi(void *ctx, int n, bool freed)
{
	struct probe *p = ctx;
	if (p->orig && p->orig->ipi_sent)
		p->orig->ipi_sent(p->orig_ctx, n, freed);
}

static void probe_psc(void *ctx, int cpu)
{
	struct probe *p = ctx;
	if (p->orig && p->orig->psc_flush)
		p->orig->psc_flush(p->orig_ctx, cpu);
}

static void probe_kflush(void *ctx, uint64_t a, uint64_t b, bool all)
{
	struct probe *p = ctx;
	if (p->orig && p->orig->kernel_flush_done)
		p->orig->kernel_flush_done(p->orig_ctx, a, b, all);
}

static const struct arch_hooks probe_hooks = {
	.tlb_flush = probe_flush,
	.ipi_sent = probe_ipi,
	.psc_flush = probe_psc,
	.kernel_flush_done = probe_kflush,
};

struct multi {
	int pages;
	bool write;			/* dirty the pages before the move */
	bool file;			/* a shared tmpfs mapping, else private anon */
	uint64_t a, b;
	volatile int touched;
	volatile bool done;
	uint32_t old_pte_table, new_pte_table;	/* after the move */
	uint64_t ipis;
	struct probe probe;
};

static void other_body(struct sim *s, struct sim_thread *t)
{
	struct multi *x = t->arg;
	TSIM_WAIT_UNTIL(s, x->a);
	assert_int_equal(user_access(s, x->a, false), 0);
	x->touched = 1;
	TSIM_WAIT_UNTIL(s, x->done);		/* stay on the CPU: not lazy */
}

static void mover_body(struct sim *s, struct sim_thread *t)
{
	struct multi *x = t->arg;
	struct mm_struct *mm = task_of(t)->mm;
	const struct pt_geom *g = &hw_of(s)->geom;
	uint64_t ps = g->page_size, pmd = 1ull << g->shift[g->levels - 2];
	struct machine *mc = machine_of(s);
	uint64_t len = (uint64_t)x->pages * ps;
	struct inode *f = x->file ? sys_tmpfile(s, &fs_tmpfs, len) : NULL;
	uint64_t hole = sys_mmap(s, 0, 4 * pmd, TLBSIM_MAP_PRIVATE);
	assert_int_equal(sys_munmap(s, hole, 4 * pmd), 0);
	uint64_t src = (hole + pmd - 1) & ~(pmd - 1);
	uint64_t a = f ? sys_mmap_file(s, src, len, TLBSIM_MAP_SHARED, f, 0)
		       : sys_mmap(s, src, len, TLBSIM_MAP_PRIVATE);
	assert_int_equal(a, src);
	for (int i = 0; i < x->pages; i++)
		assert_int_equal(user_access(s, a + (uint64_t)i * ps, x->write), 0);
	x->a = a;
	TSIM_WAIT_UNTIL(s, x->touched);
	x->probe = (struct probe){.orig = mc->hooks, .orig_ctx = mc->hooks_ctx, .s = s,
				  .lo = a, .hi = a + len, .file = f};
	mc->hooks = &probe_hooks;
	mc->hooks_ctx = &x->probe;
	uint64_t ipi0 = s->m.ipi_sent;
	x->b = sys_mremap(s, a, len, len, true, a + pmd);
	x->ipis = s->m.ipi_sent - ipi0;
	mc->hooks = x->probe.orig;
	mc->hooks_ctx = x->probe.orig_ctx;
	x->old_pte_table = mm_table_at(s, mm, a, g->levels - 1);
	x->new_pte_table = mm_table_at(s, mm, x->b, g->levels - 1);
	x->done = true;
	if (f)
		sys_close(s, f);
}

static struct multi run_multi(const char *profile, int pages, bool write, bool file,
			      enum mremap_flush_policy fl, enum mremap_pmd_policy pm)
{
	struct multi x = {.pages = pages, .write = write, .file = file};
	struct sim *s = tsim_new_p(profile, 2, NESTED_FULLMM, no_kpti);
	machine_of(s)->policy.mremap_flush = fl;
	machine_of(s)->policy.mremap_pmd = pm;
	tsim_spawn(s, mover_body, &x, 0);
	tsim_spawn(s, other_body, &x, 1);
	tsim_run(s);
	assert_int_equal(s->m.violations, 0);	/* I2 at the return: clean */
	tsim_free(s);
	return x;
}

static void test_flush_where_and_how_often(void **state)
{
	(void)state;
	struct {
		enum mremap_flush_policy fl;
		bool write;
		int flushes, under_ptl;
	} cases[] = {
		/* 100 pages: move_ptes extents of 64 and 36 pages */
		{MREMAP_FLUSH_UNDER_PTL, false, 2, 2},
		{MREMAP_FLUSH_UNDER_PTL, true, 2, 2},
		{MREMAP_FLUSH_DIRTY, true, 2, 2},
		{MREMAP_FLUSH_DIRTY, false, 1, 0},
		{MREMAP_FLUSH_AFTER_PTL, true, 1, 0},
		{MREMAP_FLUSH_AFTER_PTL, false, 1, 0},
	};
	const char *profiles[] = {"x86-24", "arm64-4k"};
	for (int p = 0; p < 2; p++)
		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			struct multi x = run_multi(profiles[p], 100, cases[i].write, false,
						   cases[i].fl, MREMAP_PMD_RMAP_LOCKS);
			/* the old range's flushes by move_page_tables (the
			 * do_munmap of the emptied range adds its own, outside
			 * every lock: counted as not under the PTL) */
			assert_int_equal(x.probe.under_ptl, cases[i].under_ptl);
			assert_true(x.probe.flushes >= cases[i].flushes);
			struct multi y = run_multi(profiles[p], 100, cases[i].write, false,
						   MREMAP_FLUSH_AFTER_PTL, MREMAP_PMD_RMAP_LOCKS);
			assert_int_equal(x.probe.flushes - y.probe.flushes, cases[i].flushes - 1);
			if (p == 0)	/* x86: one IPI to the other CPU per flush */
				assert_int_equal(x.ipis - y.ipis, (uint64_t)(cases[i].flushes - 1));
		}
}

static void test_pmd_move(void **state)
{
	(void)state;
	const char *profiles[] = {"x86-24", "arm64-4k"};
	for (int p = 0; p < 2; p++) {
		struct sim *s = tsim_new_p(profiles[p], 2, NESTED_FULLMM, no_kpti);
		const struct pt_geom *g = &hw_of(s)->geom;
		int pages = (int)(1ull << (g->shift[g->levels - 2] - g->page_shift));
		tsim_free(s);
		/* none: the PTEs move into a new table; one flush per
		 * 64-page extent, under the PTL */
		struct multi n = run_multi(profiles[p], pages, false, true, MREMAP_FLUSH_UNDER_PTL,
					   MREMAP_PMD_NONE);
		assert_int_equal(n.old_pte_table, NO_FRAME);	/* freed by the munmap */
		assert_true(n.new_pte_table != NO_FRAME);
		assert_int_equal(n.probe.under_ptl, pages / 64);
		assert_int_equal(n.probe.under_rmap, 0);
		for (int k = MREMAP_PMD_NEED_RMAP; k < MREMAP_PMD_COUNT; k++) {
			struct multi x = run_multi(profiles[p], pages, false, true,
						   MREMAP_FLUSH_UNDER_PTL, (enum mremap_pmd_policy)k);
			/* the whole table moved: one flush of the PMD span, no
			 * PTE lock; the rmap lock only with rmap_locks */
			assert_int_equal(x.old_pte_table, NO_FRAME);
			assert_true(x.new_pte_table != NO_FRAME);
			assert_int_equal(x.probe.under_ptl, 0);
			assert_int_equal(x.probe.under_rmap, k == MREMAP_PMD_RMAP_LOCKS ? 1 : 0);
			assert_true(x.probe.flushes >= 1);
		}
	}
}

/* the PMD move hands the old PTE table itself to the new PMD entry */
struct same_table {
	uint32_t before, after;
};

static void same_table_body(struct sim *s, struct sim_thread *t)
{
	struct same_table *x = t->arg;
	struct mm_struct *mm = task_of(t)->mm;
	const struct pt_geom *g = &hw_of(s)->geom;
	uint64_t pmd = 1ull << g->shift[g->levels - 2];
	uint64_t hole = sys_mmap(s, 0, 4 * pmd, TLBSIM_MAP_PRIVATE);
	assert_int_equal(sys_munmap(s, hole, 4 * pmd), 0);
	uint64_t src = (hole + pmd - 1) & ~(pmd - 1);
	assert_int_equal(sys_mmap(s, src, pmd, TLBSIM_MAP_PRIVATE), src);
	assert_int_equal(user_access(s, src, true), 0);
	x->before = mm_table_at(s, mm, src, g->levels - 1);
	assert_int_equal(sys_mremap(s, src, pmd, pmd, true, src + pmd), src + pmd);
	x->after = mm_table_at(s, mm, src + pmd, g->levels - 1);
}

static void test_pmd_move_same_table(void **state)
{
	(void)state;
	for (int k = 0; k < MREMAP_PMD_COUNT; k++) {
		struct same_table x = {0};
		struct sim *s = tsim_new_p("x86-24", 1, NESTED_FULLMM, no_kpti);
		machine_of(s)->policy.mremap_pmd = (enum mremap_pmd_policy)k;
		tsim_spawn(s, same_table_body, &x, 0);
		tsim_run(s);
		assert_int_equal(s->m.violations, 0);
		tsim_free(s);
		if (k == MREMAP_PMD_NONE)
			assert_true(x.after != x.before);
		else
			assert_int_equal(x.after, x.before);
	}
}

/* ---- I2 at the return, by hand ---- */

struct byhand {
	uint64_t a;
	volatile int touched;
	volatile bool done;
};

static void byhand_other(struct sim *s, struct sim_thread *t)
{
	struct byhand *x = t->arg;
	TSIM_WAIT_UNTIL(s, x->a);
	assert_int_equal(user_access(s, x->a, false), 0);
	x->touched = 1;
	TSIM_WAIT_UNTIL(s, x->done);
}

static void byhand_mover(struct sim *s, struct sim_thread *t)
{
	struct byhand *x = t->arg;
	struct mm_struct *mm = task_of(t)->mm;
	struct kernel *k = kernel_of(s);
	uint64_t ps = hw_of(s)->geom.page_size;
	uint64_t a = tsim_map_written(s, 1);
	x->a = a;
	TSIM_WAIT_UNTIL(s, x->touched);
	uint64_t cookie = k->hooks->syscall_enter(k->hooks_ctx, SYS_MREMAP);
	/* the PTE leaves the old address with no flush */
	const struct pt_geom *g = &hw_of(s)->geom;
	set_entry(s, mm_table_at(s, mm, a, g->levels - 1), pt_index(g, g->levels - 1, a), 0);
	k->hooks->range_unmapped(k->hooks_ctx, mm, a, a + ps, SYS_MREMAP, cookie);
	x->done = true;
}

static void test_i2_at_return(void **state)
{
	(void)state;
	struct byhand x = {0};
	struct sim *s = tsim_new_p("x86-24", 2, NESTED_FULLMM, no_kpti);
	tsim_spawn(s, byhand_mover, &x, 0);
	tsim_spawn(s, byhand_other, &x, 1);
	tsim_run(s);
	assert_true(s->m.violations > 0);
	assert_int_equal(tsim_violation(s)->kind, INV_I2);
	tsim_free(s);
}

/* ---- ftruncate ---- */

struct trunc {
	bool mapped_before, mapped_after;
};

static void trunc_body(struct sim *s, struct sim_thread *t)
{
	struct trunc *x = t->arg;
	struct mm_struct *mm = task_of(t)->mm;
	uint64_t ps = hw_of(s)->geom.page_size;
	struct inode *f = sys_tmpfile(s, &fs_tmpfs, 2 * ps);
	uint64_t a = sys_mmap_file(s, 0, 2 * ps, TLBSIM_MAP_SHARED, f, 0);
	assert_int_equal(user_access(s, a + ps, true), 0);
	pte_t *p = pte_lookup(s, mm, a + ps);
	x->mapped_before = p && pte_present(*p);
	assert_int_equal(sys_ftruncate(s, f, ps), 0);
	p = pte_lookup(s, mm, a + ps);
	x->mapped_after = p && pte_present(*p);
	sys_munmap(s, a, 2 * ps);
	sys_close(s, f);
}

static void test_ftruncate_zaps(void **state)
{
	(void)state;
	struct trunc x = {0};
	struct sim *s = tsim_new_p("arm64-4k", 1, NESTED_FULLMM, no_kpti);
	tsim_spawn(s, trunc_body, &x, 0);
	tsim_run(s);
	assert_int_equal(s->m.violations, 0);
	tsim_free(s);
	assert_true(x.mapped_before);
	assert_false(x.mapped_after);
}

/* ---- the exclusive PTE lock of move_ptes ---- */

struct excl {
	uint32_t table;
	bool nowait;			/* the holder is a zap (ptl_lock) */
	volatile bool held, released;
	bool zap_saw_release, mkclean_saw_release;
	volatile int waiters_done;
};

static void excl_holder(struct sim *s, struct sim_thread *t)
{
	struct excl *x = t->arg;
	struct mm_struct *mm = task_of(t)->mm;
	uint64_t a = sys_mmap(s, 0, hw_of(s)->geom.page_size, TLBSIM_MAP_PRIVATE);
	assert_int_equal(user_access(s, a, true), 0);
	x->table = mm_table_at(s, mm, a, hw_of(s)->geom.levels - 1);
	if (x->nowait)
		ptl_lock(s, x->table);
	else
		rmap_ptl_lock2(s, x->table);	/* as move_ptes holds the new table's */
	x->held = true;
	for (int i = 0; i < 50; i++)	/* hold it across yield points */
		sim_step(s, YP_USER, 100);
	x->released = true;
	if (x->nowait)
		ptl_unlock(s);
	else
		rmap_ptl_unlock2(s);
	TSIM_WAIT_UNTIL(s, x->waiters_done >= 2);
}

static void excl_zap(struct sim *s, struct sim_thread *t)
{
	struct excl *x = t->arg;
	TSIM_WAIT_UNTIL(s, x->held);
	ptl_lock(s, x->table);
	x->zap_saw_release = x->released;
	ptl_unlock(s);
	x->waiters_done++;
}

static void excl_mkclean(struct sim *s, struct sim_thread *t)
{
	struct excl *x = t->arg;
	TSIM_WAIT_UNTIL(s, x->held);
	rmap_ptl_lock(s, x->table);
	x->mkclean_saw_release = x->released;
	rmap_ptl_unlock(s);
	x->waiters_done++;
}

static void test_move_lock_excludes(void **state)
{
	(void)state;
	for (int nowait = 0; nowait < 2; nowait++) {
		struct excl x = {.nowait = nowait};
		struct sim *s = tsim_new_p("x86-24", 3, NESTED_FULLMM, no_kpti);
		tsim_spawn(s, excl_holder, &x, 0);
		tsim_spawn(s, excl_zap, &x, 1);
		tsim_spawn(s, excl_mkclean, &x, 2);
		tsim_run(s);
		tsim_free(s);
		/* page_mkclean waits for any holder; a zap only for move_ptes */
		assert_true(x.mkclean_saw_release);
		assert_int_equal(x.zap_saw_release, !nowait);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_move_keeps_ptes),
		cmocka_unit_test(test_flush_where_and_how_often),
		cmocka_unit_test(test_pmd_move),
		cmocka_unit_test(test_pmd_move_same_table),
		cmocka_unit_test(test_i2_at_return),
		cmocka_unit_test(test_ftruncate_zaps),
		cmocka_unit_test(test_move_lock_excludes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
