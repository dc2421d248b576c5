/*
 * test_numa_uffd.c - the NUMA-hinting PROT_NONE path of change_protection
 * (src/mm/mprotect.c numa_scan, src/mm/fault.c do_numa_page, src/mm/migrate.c)
 * and userfaultfd write-protect (mprotect.c sys_uffd_writeprotect, fault.c
 * do_wp_page), with the knobs numa_pending, pte_accessible and uffd_wp_flush.
 *
 * Rules checked:
 *  - change_prot_numa makes each present PTE of the range PROT_NONE (VALID
 *    clear, the pfn and the write bit kept), skips the zero page and a
 *    private page mapped twice, returns the PTEs changed and flushes the
 *    range before it returns (x86: an IPI to the other CPU running the mm);
 *    it skips a dirty ext4 page (not a dirty tmpfs one), a page-cache page
 *    mapped twice in private mappings, and hugetlbfs and VM_PFNMAP VMAs;
 *  - while the scan is between its PTE change and its flush,
 *    mm->tlb_flush_pending is 1 with numa_pending=raised and 0 with none;
 *    pte_accessible() of the PROT_NONE PTE is then true only with
 *    pte_accessible=pending and the flag raised;
 *  - the hinting fault (do_numa_page) of a page that is not misplaced
 *    restores the PTE - present, young, writable again, the same frame -
 *    and flushes nothing;
 *  - of a misplaced page, it migrates it: a new frame mapped writable, the
 *    old frame freed; its unmap flushes (one flush_tlb_page: x86 one IPI and
 *    two INVLPGs, arm64 one TLBI VALE1IS, besides the access-flag fault's
 *    on the new PTE, which is old) exactly when pte_accessible()
 *    says so (pte_accessible=pending and a flush pending), else emits
 *    nothing; a pinned page is not migrated (the PTE is restored);
 *  - the I3 point (oracle): a write through a cached writable entry into a
 *    page after it was copied, the PTE no longer granting that write, is
 *    reported; a write through an entry the PTE still grants is not;
 *  - the I2 point (oracle): the scan or the ioctl returning while a CPU can
 *    still write through a cached entry where the PTE is now PROT_NONE or
 *    read-only is reported (the model's scan and ioctl always flush first);
 *  - UFFDIO_WRITEPROTECT(wp): PTE read-only with the uffd-wp bit, the VMA
 *    registered (VM_UFFD_WP), one range flush; a write then fails (the
 *    userfault, SIGBUS) and leaves the PTE alone; mode 0 clears the bit and
 *    leaves the PTE read-only (a writable PTE loses its write bit); the
 *    next write reuses a page with one reference and copies a pinned one;
 *    a range not in one private anonymous VMA is -1;
 *  - do_wp_page in a registered VMA while a flush is pending: with
 *    uffd_wp_flush=pending one flush_tlb_page more than with none (x86 one
 *    IPI, arm64 one VALE1IS), and none with no flush pending; the race of
 *    6ce64428d621 (a COW copy while another CPU still caches the old page
 *    writable) is I3 with none and clean with pending.
 */
#include "test_util.h"

static const int64_t no_kpti[] = {P_kpti, 0, -1};

/* a range [a, a + 2 pages) whose pages lie in two PTE tables, mapped
 * private in a fresh mapping */
static uint64_t map_across_tables(struct sim *s)
{
	const struct pt_geom *g = &hw_of(s)->geom;
	uint64_t ps = g->page_size, span = g->ptrs_per_pte << g->page_shift;
	uint64_t base = sys_mmap(s, 0, 2 * span + 2 * ps, TLBSIM_MAP_PRIVATE);
	uint64_t t = (base + span - 1) & ~(span - 1);
	return t + span - ps;
}

/* ---- the scan, observed from another CPU between its PTE change and its
 * flush ---- */
struct scan {
	bool misplaced;
	uint64_t a;
	volatile int phase;		/* 1: pages touched; 2: scan returned */
	int pending_seen;		/* tlb_flush_pending when the PTE turned PROT_NONE */
	int accessible_seen;
	bool seen;
	int64_t ret;
	pte_t pte_after;
	uint64_t ipi0, ipi1;
};

static void scan_owner(struct sim *s, struct sim_thread *t)
{
	struct scan *x = t->arg;
	struct mm_struct *mm = task_of(t)->mm;
	uint64_t ps = hw_of(s)->geom.page_size;
	uint64_t a = map_across_tables(s);
	assert_int_equal(user_access(s, a, true), 0);
	assert_int_equal(user_access(s, a + ps, true), 0);
	x->a = a;
	x->phase = 1;
	x->ipi0 = s->m.ipi_sent;
	x->ret = numa_scan(s, a, 2 * ps, x->misplaced);
	x->ipi1 = s->m.ipi_sent;
	x->pte_after = *pte_lookup(s, mm, a);
	x->phase = 2;
}

static void scan_observer(struct sim *s, struct sim_thread *t)
{
	struct scan *x = t->arg;
	struct mm_struct *mm = task_of(t)->mm;
	TSIM_WAIT_UNTIL(s, x->phase >= 1);
	while (x->phase < 2) {
		pte_t pte = *pte_lookup(s, mm, x->a);
		if (!x->seen && (pte & PTE_PROTNONE)) {
			x->seen = true;
			x->pending_seen = mm->tlb_flush_pending;
			x->accessible_seen = pte_accessible(s, mm, pte);
		}
		sim_step(s, YP_USER, 10);
	}
}

static void test_scan_pending_and_accessible(void **state)
{
	(void)state;
	struct {
		enum numa_pending_policy np;
		enum pte_accessible_policy pa;
		int pending, accessible;
	} cases[] = {
		{NUMA_PENDING_RAISED, PTE_ACCESSIBLE_PENDING, 1, 1},	/* 20841405940e */
		{NUMA_PENDING_RAISED, PTE_ACCESSIBLE_PRESENT, 1, 0},
		{NUMA_PENDING_NONE, PTE_ACCESSIBLE_PENDING, 0, 0},
		{NUMA_PENDING_NONE, PTE_ACCESSIBLE_PRESENT, 0, 0},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct scan x = {0};
		struct sim *s = tsim_new_p("x86-24", 2, NESTED_FULLMM, no_kpti);
		machine_of(s)->policy.numa_pending = cases[i].np;
		machine_of(s)->policy.pte_accessible = cases[i].pa;
		tsim_spawn(s, scan_owner, &x, 0);
		tsim_spawn(s, scan_observer, &x, 1);
		tsim_run(s);
		assert_true(x.seen);
		assert_int_equal(x.pending_seen, cases[i].pending);
		assert_int_equal(x.accessible_seen, cases[i].accessible);
		assert_int_equal(x.ret, 2);
		/* PROT_NONE: not valid, the write bit kept, the same page */
		assert_true(x.pte_after & PTE_PROTNONE);
		assert_false(pte_present(x.pte_after));
		assert_true(x.pte_after & PTE_WRITE);
		/* the range flush: one flush_tlb_range, an IPI to CPU 1 */
		assert_int_equal(x.ipi1 - x.ipi0, 1);
		assert_int_equal(tsim_mm(s, 0)->tlb_flush_pending, 0);
		assert_int_equal(s->m.violations, 0);
		tsim_free(s);
	}
}

/* ---- what the scan skips ---- */
struct skip {
	int64_t ret;
	pte_t pz, pshared, pnormal;
};

static void skip_body(struct sim *s, struct sim_thread *t)
{
	struct skip *x = t->arg;
	struct mm_struct *mm = task_of(t)->mm;
	uint64_t ps = hw_of(s)->geom.page_size;
	uint64_t a = sys_mmap(s, 0, 3 * ps, TLBSIM_MAP_PRIVATE);
	assert_int_equal(user_access(s, a, false), 0);		/* the zero page */
	assert_int_equal(user_access(s, a + ps, true), 0);
	assert_int_equal(user_access(s, a + 2 * ps, true), 0);
	/* a + ps mapped twice (a forked child would share it) */
	frame_of(hw_of(s), pte_pfn(*pte_lookup(s, mm, a + ps)))->refcount++;
	x->ret = numa_scan(s, a, 3 * ps, true);
	x->pz = *pte_lookup(s, mm, a);
	x->pshared = *pte_lookup(s, mm, a + ps);
	x->pnormal = *pte_lookup(s, mm, a + 2 * ps);
	frame_of(hw_of(s), pte_pfn(x->pshared))->refcount--;
}

static void test_scan_skips(void **state)
{
	(void)state;
	struct skip x = {0};
	struct sim *s = tsim_new_p("x86-24", 1, NESTED_FULLMM, no_kpti);
	tsim_spawn(s, skip_body, &x, 0);
	tsim_run(s);
	assert_int_equal(x.ret, 1);
	assert_true(pte_present(x.pz));
	assert_true(pte_present(x.pshared));
	assert_true(x.pnormal & PTE_PROTNONE);
	tsim_free(s);
}

/* ---- what the scan skips: file pages and whole VMAs ---- */
struct fskip {
	int64_t ret_ext4, ret_tmpfs, ret_priv, ret_huge, ret_pfn;
	pte_t ext4_dirty, ext4_clean, tmpfs_dirty, tmpfs_clean, priv_twice, priv_once;
	pte_t pfn_before, pfn_after;
	uint64_t flushes_huge;
};

static void fskip_body(struct sim *s, struct sim_thread *t)
{
	struct fskip *x = t->arg;
	struct mm_struct *mm = task_of(t)->mm;
	uint64_t ps = hw_of(s)->geom.page_size;
	/* shared ext4 and tmpfs mappings: page 0 written (PG_DIRTY), page 1 read */
	const struct fs_type *fs[2] = {&fs_ext4, &fs_tmpfs};
	for (int i = 0; i < 2; i++) {
		struct inode *f = sys_tmpfile(s, fs[i], 2 * ps);
		uint64_t a = sys_mmap_file(s, 0, 2 * ps, TLBSIM_MAP_SHARED, f, 0);
		assert_int_equal(user_access(s, a, true), 0);
		assert_int_equal(user_access(s, a + ps, false), 0);
		assert_true(frame_of(hw_of(s), pte_pfn(*pte_lookup(s, mm, a)))->pgflags & PG_DIRTY);
		int64_t r = numa_scan(s, a, 2 * ps, false);
		*(i ? &x->ret_tmpfs : &x->ret_ext4) = r;
		*(i ? &x->tmpfs_dirty : &x->ext4_dirty) = *pte_lookup(s, mm, a);
		*(i ? &x->tmpfs_clean : &x->ext4_clean) = *pte_lookup(s, mm, a + ps);
	}
	/* two private mappings of one ext4 file, read (page cache pages, not
	 * copied): page 0 is mapped by both, page 1 by the first only */
	struct inode *f = sys_tmpfile(s, &fs_ext4, 2 * ps);
	uint64_t p1 = sys_mmap_file(s, 0, 2 * ps, TLBSIM_MAP_PRIVATE, f, 0);
	uint64_t p2 = sys_mmap_file(s, 0, ps, TLBSIM_MAP_PRIVATE, f, 0);
	assert_int_equal(user_access(s, p1, false), 0);
	assert_int_equal(user_access(s, p1 + ps, false), 0);
	assert_int_equal(user_access(s, p2, false), 0);
	x->ret_priv = numa_scan(s, p1, 2 * ps, false);
	x->priv_twice = *pte_lookup(s, mm, p1);
	x->priv_once = *pte_lookup(s, mm, p1 + ps);
	/* hugetlbfs and a driver's VM_PFNMAP mapping: not scanned at all */
	uint64_t hs = 1ull << hw_of(s)->geom.pmd_shift;
	struct inode *hf = sys_tmpfile(s, &fs_hugetlbfs, hs);
	uint64_t h = sys_mmap_file(s, 0, hs, TLBSIM_MAP_SHARED, hf, 0);
	assert_true(h != TLBSIM_EINVAL_VA);
	assert_int_equal(user_access(s, h, true), 0);
	uint64_t fl0 = s->m.flush_local_pages + s->m.flush_full;
	x->ret_huge = numa_scan(s, h, hs, false);
	x->flushes_huge = s->m.flush_local_pages + s->m.flush_full - fl0;
	uint64_t d = sys_pfnmap(s, 0, ps, false);
	x->pfn_before = *pte_lookup(s, mm, d);
	x->ret_pfn = numa_scan(s, d, ps, false);
	x->pfn_after = *pte_lookup(s, mm, d);
}

/* Rule (change_pte_range's prot_numa skips, v4.17..v5.11; task_numa_work's
 * VMA skips): a dirty page-cache page that is not swap-backed (ext4) stays
 * as it is - 09a913a7a: MIGRATE_ASYNC cannot move every dirty page - while
 * a dirty tmpfs page (swap-backed) and clean pages are made PROT_NONE; in a
 * private (COW) mapping a page mapped more than once is skipped whether it
 * is anonymous or a page-cache page (859d4adc3: page_mapcount != 1); a
 * hugetlbfs, VM_PFNMAP or VM_MIXEDMAP VMA is not scanned (is_vm_hugetlb_page,
 * vma_migratable): no PTE changed, nothing flushed. */
static void test_scan_skips_file_pages_and_vmas(void **state)
{
	(void)state;
	struct fskip x = {0};
	struct sim *s = tsim_new_p("x86-24", 1, NESTED_FULLMM, no_kpti);
	tsim_spawn(s, fskip_body, &x, 0);
	tsim_run(s);
	assert_int_equal(x.ret_ext4, 1);
	assert_true(pte_present(x.ext4_dirty));
	assert_true(x.ext4_clean & PTE_PROTNONE);
	assert_int_equal(x.ret_tmpfs, 2);
	assert_true(x.tmpfs_dirty & PTE_PROTNONE);
	assert_true(x.tmpfs_clean & PTE_PROTNONE);
	assert_int_equal(x.ret_priv, 1);
	assert_true(pte_present(x.priv_twice));
	assert_true(x.priv_once & PTE_PROTNONE);
	assert_int_equal(x.ret_huge, 0);
	assert_int_equal(x.flushes_huge, 0);
	assert_int_equal(x.ret_pfn, 0);
	assert_true(pte_present(x.pfn_before));
	assert_int_equal(x.pfn_after, x.pfn_before);
	assert_int_equal(s->m.violations, 0);
	tsim_free(s);
}

/* ---- the hinting fault: restore, or migrate with the unmap's flush ---- */
struct hint {
	bool misplaced, pin;
	int pending;			/* tlb_flush_pending raised by hand for the fault */
	uint64_t a;
	volatile int phase;
	uint32_t f0, f1;
	pte_t pte;
	uint32_t old_state;
	struct tlbsim_metrics m0, m1;
};

static void hint_owner(struct sim *s, struct sim_thread *t)
{
	struct hint *x = t->arg;
	struct mm_struct *mm = task_of(t)->mm;
	uint64_t ps = hw_of(s)->geom.page_size;
	uint64_t a = tsim_map_written(s, 1);
	x->f0 = pte_pfn(*pte_lookup(s, mm, a));
	x->a = a;
	TSIM_WAIT_UNTIL(s, x->phase >= 1);		/* CPU 1 runs the mm */
	assert_int_equal(numa_scan(s, a, ps, x->misplaced), 1);
	/* a get_user_pages reference taken after the scan (the scan skips a
	 * page mapped twice, which the model tells by its references) */
	if (x->pin)
		frame_of(hw_of(s), x->f0)->refcount++;
	mm->tlb_flush_pending += x->pending;	/* a scan still in flight */
	x->m0 = s->m;
	assert_int_equal(user_access(s, a, false), 0);	/* the hinting fault */
	x->m1 = s->m;
	mm->tlb_flush_pending -= x->pending;
	x->pte = *pte_lookup(s, mm, a);
	x->f1 = pte_pfn(x->pte);
	x->old_state = frame_of(hw_of(s), x->f0)->state;
	if (x->pin)
		frame_of(hw_of(s), x->f0)->refcount--;
	x->phase = 2;
}

static void hint_other(struct sim *s, struct sim_thread *t)
{
	struct hint *x = t->arg;
	TSIM_WAIT_UNTIL(s, x->a);
	x->phase = 1;
	TSIM_WAIT_UNTIL(s, x->phase >= 2);
}

static struct sim *run_hint(const char *profile, struct hint *x, enum pte_accessible_policy pa)
{
	struct sim *s = tsim_new_p(profile, 2, NESTED_FULLMM, no_kpti);
	machine_of(s)->policy.pte_accessible = pa;
	tsim_spawn(s, hint_owner, x, 0);
	tsim_spawn(s, hint_other, x, 1);
	tsim_run(s);
	return s;
}

static void test_numa_fault_restores(void **state)
{
	(void)state;
	const char *profiles[] = {"x86-24", "arm64-4k"};
	for (int p = 0; p < 2; p++) {
		struct hint x = {.misplaced = false, .pending = 1};
		struct sim *s = run_hint(profiles[p], &x, PTE_ACCESSIBLE_PENDING);
		assert_int_equal(x.f1, x.f0);
		assert_true(pte_present(x.pte));
		assert_false(x.pte & PTE_PROTNONE);
		assert_true(x.pte & PTE_WRITE);		/* pte_savedwrite */
		assert_true(x.pte & PTE_YOUNG);
		assert_int_equal(x.m1.ipi_sent - x.m0.ipi_sent, 0);
		assert_int_equal(x.m1.flush_local_pages - x.m0.flush_local_pages, 0);
		assert_int_equal(x.m1.tlbi.vale1is - x.m0.tlbi.vale1is, 0);
		assert_int_equal(s->m.violations, 0);
		tsim_free(s);
	}
}

static void test_numa_fault_migrates(void **state)
{
	(void)state;
	struct {
		enum pte_accessible_policy pa;
		int pending;
		bool flush;
	} cases[] = {
		{PTE_ACCESSIBLE_PENDING, 1, true},	/* 20841405940e */
		{PTE_ACCESSIBLE_PENDING, 0, false},	/* the scan's flush is done */
		{PTE_ACCESSIBLE_PRESENT, 1, false},	/* before it */
		{PTE_ACCESSIBLE_PRESENT, 0, false},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		for (int arm = 0; arm < 2; arm++) {
			struct hint x = {.misplaced = true, .pending = cases[i].pending};
			struct sim *s = run_hint(arm ? "arm64-4k" : "x86-24", &x, cases[i].pa);
			assert_int_not_equal(x.f1, x.f0);
			assert_true(pte_present(x.pte));
			assert_true(x.pte & PTE_WRITE);		/* a writable migration entry */
			assert_int_equal(x.old_state, FRAME_FREE);
			if (arm) {
				/* + the access-flag fault on the new PTE, made
				 * old (pte_mkold): one VALE1IS under
				 * spurious_flush=broadcast */
				assert_int_equal(x.m1.tlbi.vale1is - x.m0.tlbi.vale1is,
						 cases[i].flush ? 2 : 1);
			} else {
				assert_int_equal(x.m1.ipi_sent - x.m0.ipi_sent, cases[i].flush ? 1 : 0);
				assert_int_equal(x.m1.flush_local_pages - x.m0.flush_local_pages,
						 cases[i].flush ? 2 : 0);
			}
			assert_int_equal(s->m.violations, 0);
			tsim_free(s);
		}
	}
}

static void test_numa_fault_pinned_not_migrated(void **state)
{
	(void)state;
	struct hint x = {.misplaced = true, .pin = true};
	struct sim *s = run_hint("x86-24", &x, PTE_ACCESSIBLE_PENDING);
	assert_int_equal(x.f1, x.f0);			/* restored in place */
	assert_true(pte_present(x.pte) && (x.pte & PTE_WRITE));
	assert_int_equal(s->m.violations, 0);
	tsim_free(s);
}

/* ---- the I3 point by hand ---- */
struct copied {
	bool ro;			/* make the PTE read-only (no flush) before the write */
	uint64_t a;
	volatile int step;
};

static void copied_writer(struct sim *s, struct sim_thread *t)
{
	struct copied *x = t->arg;
	TSIM_WAIT_UNTIL(s, x->a);
	assert_int_equal(user_access(s, x->a, true), 0);
	x->step = 1;
	TSIM_WAIT_UNTIL(s, x->step >= 2);
	assert_int_equal(user_access(s, x->a, true), 0);	/* through the cached entry */
	x->step = 3;
}

static void copied_owner(struct sim *s, struct sim_thread *t)
{
	struct copied *x = t->arg;
	struct mm_struct *mm = task_of(t)->mm;
	struct kernel *k = kernel_of(s);
	uint64_t a = tsim_map_written(s, 1);
	x->a = a;
	TSIM_WAIT_UNTIL(s, x->step >= 1);
	pte_t *p = pte_lookup(s, mm, a);
	if (x->ro)
		*p &= ~PTE_WRITE;			/* no flush */
	uint32_t nf = alloc_frame(s, FRAME_DATA, 0);
	k->hooks->page_copied(k->hooks_ctx, pte_pfn(*p), nf, false);
	x->step = 2;
	TSIM_WAIT_UNTIL(s, x->step >= 3);
	frame_free(hw_of(s), nf);
}

static void test_i3_at_copy(void **state)
{
	(void)state;
	for (int ro = 0; ro < 2; ro++) {
		struct copied x = {.ro = ro};
		struct sim *s = tsim_new_p("x86-24", 2, NESTED_FULLMM, no_kpti);
		tsim_spawn(s, copied_owner, &x, 0);
		tsim_spawn(s, copied_writer, &x, 1);
		tsim_run(s);
		if (ro) {
			assert_true(s->m.violations > 0);
			assert_int_equal(tsim_violation(s)->kind, INV_I3);
			assert_int_equal(tsim_violation(s)->cpu, 1);
			assert_int_equal(tsim_violation(s)->va, x.a);
		} else {
			assert_int_equal(s->m.violations, 0);	/* the PTE grants the write */
		}
		tsim_free(s);
	}
}

/* ---- the I2 point at the return of the scan and of the ioctl, by hand:
 * a PTE made PROT_NONE (or read-only) without the flush ---- */
struct i2 {
	enum mm_syscall call;
	uint64_t a;
	volatile int step;
};

static void i2_writer(struct sim *s, struct sim_thread *t)
{
	struct i2 *x = t->arg;
	TSIM_WAIT_UNTIL(s, x->a);
	assert_int_equal(user_access(s, x->a, true), 0);
	x->step = 1;
	TSIM_WAIT_UNTIL(s, x->step >= 2);
}

static void i2_owner(struct sim *s, struct sim_thread *t)
{
	struct i2 *x = t->arg;
	struct mm_struct *mm = task_of(t)->mm;
	struct kernel *k = kernel_of(s);
	uint64_t ps = hw_of(s)->geom.page_size;
	uint64_t a = tsim_map_written(s, 1);
	x->a = a;
	TSIM_WAIT_UNTIL(s, x->step >= 1);
	uint64_t cookie = k->hooks->syscall_enter(k->hooks_ctx, x->call);
	pte_t *p = pte_lookup(s, mm, a);
	if (x->call == SYS_NUMA_SCAN)
		*p = (*p & ~PTE_VALID) | PTE_PROTNONE;	/* the write bit saved */
	else
		*p = (*p & ~PTE_WRITE) | PTE_UFFD_WP;
	struct inv_op all = {.kind = INV_ALL};	/* this CPU's own entry: gone */
	hw_invalidate_cpu(hw_of(s), 0, &all);
	k->hooks->range_unmapped(k->hooks_ctx, mm, a, a + ps, x->call, cookie);
	x->step = 2;
}

static void test_i2_at_return(void **state)
{
	(void)state;
	enum mm_syscall calls[] = {SYS_NUMA_SCAN, SYS_UFFD_WP};
	for (int i = 0; i < 2; i++) {
		struct i2 x = {.call = calls[i]};
		struct sim *s = tsim_new_p("x86-24", 2, NESTED_FULLMM, no_kpti);
		tsim_spawn(s, i2_owner, &x, 0);
		tsim_spawn(s, i2_writer, &x, 1);
		tsim_run(s);
		assert_true(s->m.violations > 0);
		assert_int_equal(tsim_violation(s)->kind, INV_I2);
		assert_int_equal(tsim_violation(s)->cpu, 1);
		tsim_free(s);
	}
}

/* ---- UFFDIO_WRITEPROTECT ---- */
struct uwp {
	uint64_t a;
	volatile int phase;
	int r_wp, r_write_wp, r_unwp, r_write, r_bad;
	pte_t p_wp, p_after_fail, p_unwp, p_write;
	uint32_t f0, vm_flags;
	uint64_t ipi_wp, ipi_unwp;
};

static void uwp_owner(struct sim *s, struct sim_thread *t)
{
	struct uwp *x = t->arg;
	struct mm_struct *mm = task_of(t)->mm;
	uint64_t ps = hw_of(s)->geom.page_size;
	uint64_t a = tsim_map_written(s, 1);
	x->f0 = pte_pfn(*pte_lookup(s, mm, a));
	x->a = a;
	TSIM_WAIT_UNTIL(s, x->phase >= 1);
	uint64_t i0 = s->m.ipi_sent;
	x->r_wp = sys_uffd_writeprotect(s, a, ps, true);
	x->ipi_wp = s->m.ipi_sent - i0;
	x->p_wp = *pte_lookup(s, mm, a);
	x->vm_flags = find_vma(mm, a)->vm_flags;
	x->r_write_wp = user_access(s, a, true);		/* the userfault */
	x->p_after_fail = *pte_lookup(s, mm, a);
	i0 = s->m.ipi_sent;
	x->r_unwp = sys_uffd_writeprotect(s, a, ps, false);
	x->ipi_unwp = s->m.ipi_sent - i0;
	x->p_unwp = *pte_lookup(s, mm, a);
	x->r_write = user_access(s, a, true);
	x->p_write = *pte_lookup(s, mm, a);
	/* not one anonymous VMA: a range past the mapping, a shared mapping */
	uint64_t sh = sys_mmap(s, 0, ps, TLBSIM_MAP_SHARED);
	x->r_bad = sys_uffd_writeprotect(s, a, 2 * ps, true) == -1 &&
		   sys_uffd_writeprotect(s, sh, ps, true) == -1 &&
		   sys_uffd_writeprotect(s, a + 1, ps, true) == -1;
	x->phase = 2;
}

static void uwp_other(struct sim *s, struct sim_thread *t)
{
	struct uwp *x = t->arg;
	TSIM_WAIT_UNTIL(s, x->a);
	x->phase = 1;
	TSIM_WAIT_UNTIL(s, x->phase >= 2);
}

static void test_uffd_writeprotect(void **state)
{
	(void)state;
	struct uwp x = {0};
	struct sim *s = tsim_new_p("x86-24", 2, NESTED_FULLMM, no_kpti);
	tsim_spawn(s, uwp_owner, &x, 0);
	tsim_spawn(s, uwp_other, &x, 1);
	tsim_run(s);
	assert_int_equal(x.r_wp, 0);
	assert_true(x.vm_flags & VM_UFFD_WP);
	assert_true(pte_present(x.p_wp));
	assert_false(x.p_wp & PTE_WRITE);
	assert_true(x.p_wp & PTE_UFFD_WP);
	assert_int_equal(x.ipi_wp, 1);			/* flush_tlb_range: CPU 1 */
	assert_int_equal(x.r_write_wp, -1);		/* handle_userfault: SIGBUS */
	assert_int_equal(x.p_after_fail, x.p_wp);
	assert_int_equal(x.r_unwp, 0);
	assert_false(x.p_unwp & PTE_UFFD_WP);
	assert_false(x.p_unwp & PTE_WRITE);		/* left to the fault */
	assert_int_equal(x.ipi_unwp, 1);
	assert_int_equal(x.r_write, 0);
	assert_int_equal(pte_pfn(x.p_write), x.f0);	/* one reference: reused */
	assert_true(x.p_write & PTE_WRITE);
	assert_true(x.r_bad);
	assert_int_equal(s->m.violations, 0);
	tsim_free(s);
}

/* ---- do_wp_page's uffd-wp flush, and the race it closes ---- */
struct wpf {
	int pending;			/* raised by hand around the write fault */
	bool race;			/* CPU 1 keeps writing through its entry */
	uint64_t a;
	volatile int phase;
	uint32_t f0, f1;
	struct tlbsim_metrics m0, m1;
};

static void wpf_owner(struct sim *s, struct sim_thread *t)
{
	struct wpf *x = t->arg;
	struct mm_struct *mm = task_of(t)->mm;
	uint64_t ps = hw_of(s)->geom.page_size;
	uint64_t a = tsim_map_written(s, 1);
	assert_int_equal(sys_uffd_writeprotect(s, a, ps, false), 0);	/* registers */
	assert_int_equal(user_access(s, a, true), 0);			/* reused */
	x->f0 = pte_pfn(*pte_lookup(s, mm, a));
	int h = gup_pin(s, a);
	assert_true(h >= 0);
	x->a = a;
	TSIM_WAIT_UNTIL(s, x->phase >= 1);		/* CPU 1 caches a writable entry */
	/* what UFFDIO_WRITEPROTECT(0) leaves before its flush: the PTE
	 * read-only, the flush pending */
	const struct pt_format *fmt = hw_of(s)->fmt;
	pte_t *p = pte_lookup(s, mm, a);
	if (fmt->rdonly && !(*p & PTE_RDONLY))
		*p |= PTE_DIRTY;			/* pte_wrprotect: hw dirty kept */
	*p = (*p & ~PTE_WRITE) | (fmt->rdonly ? PTE_RDONLY : 0);
	struct inv_op all = {.kind = INV_ALL};	/* this CPU's own entry: gone */
	hw_invalidate_cpu(hw_of(s), 0, &all);
	mm->tlb_flush_pending += x->pending;
	x->m0 = s->m;
	assert_int_equal(user_access(s, a, true), 0);	/* do_wp_page: the copy */
	x->m1 = s->m;
	x->f1 = pte_pfn(*pte_lookup(s, mm, a));
	x->phase = 2;
	TSIM_WAIT_UNTIL(s, x->phase >= 3);
	mm->tlb_flush_pending -= x->pending;
	assert_int_equal(gup_unpin(s, h), 0);
}

static void wpf_other(struct sim *s, struct sim_thread *t)
{
	struct wpf *x = t->arg;
	TSIM_WAIT_UNTIL(s, x->a);
	assert_int_equal(user_access(s, x->a, true), 0);
	x->phase = 1;
	uint32_t f0 = pte_pfn(*pte_lookup(s, task_of(t)->mm, x->a));
	/* the race: store once the fault has copied the page, before its
	 * ptep_clear_flush reaches this CPU */
	TSIM_WAIT_UNTIL(s, x->phase >= 2 ||
			   (x->race && (frame_of(hw_of(s), f0)->watch & WATCH_COPIED)));
	if (x->race)
		assert_int_equal(user_access(s, x->a, true), 0);
	TSIM_WAIT_UNTIL(s, x->phase >= 2);
	x->phase = 3;
}

static struct sim *run_wpf(const char *profile, struct wpf *x, enum uffd_wp_flush_policy p)
{
	struct sim *s = tsim_new_p(profile, 2, NESTED_FULLMM, no_kpti);
	machine_of(s)->policy.uffd_wp_flush = p;
	tsim_spawn(s, wpf_owner, x, 0);
	tsim_spawn(s, wpf_other, x, 1);
	tsim_run(s);
	return s;
}

static void test_do_wp_page_uffd_flush(void **state)
{
	(void)state;
	struct {
		enum uffd_wp_flush_policy p;
		int pending;
		uint64_t flushes;	/* flush_tlb_page calls of the fault */
	} cases[] = {
		{UFFD_WP_FLUSH_NONE, 1, 1},	/* wp_page_copy's own flush only */
		{UFFD_WP_FLUSH_PENDING, 1, 2},	/* 6ce64428d621: one before the copy */
		{UFFD_WP_FLUSH_NONE, 0, 1},
		{UFFD_WP_FLUSH_PENDING, 0, 1},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		for (int arm = 0; arm < 2; arm++) {
			struct wpf x = {.pending = cases[i].pending};
			struct sim *s = run_wpf(arm ? "arm64-4k" : "x86-24", &x, cases[i].p);
			assert_int_not_equal(x.f1, x.f0);		/* pinned: copied */
			if (arm)
				assert_int_equal(x.m1.tlbi.vale1is - x.m0.tlbi.vale1is,
						 cases[i].flushes);
			else
				assert_int_equal(x.m1.ipi_sent - x.m0.ipi_sent, cases[i].flushes);
			tsim_free(s);
		}
	}
}

static void test_uffd_cow_race(void **state)
{
	(void)state;
	for (int p = 0; p < 2; p++) {
		struct wpf x = {.pending = 1, .race = true};
		struct sim *s = run_wpf("x86-24", &x, p ? UFFD_WP_FLUSH_PENDING : UFFD_WP_FLUSH_NONE);
		if (p) {
			assert_int_equal(s->m.violations, 0);
		} else {
			/* CPU 1's store went into the old page after the copy */
			assert_true(s->m.violations > 0);
			assert_int_equal(tsim_violation(s)->kind, INV_I3);
			assert_int_equal(tsim_violation(s)->cpu, 1);
			assert_int_equal(tsim_violation(s)->frame, x.f0);
		}
		tsim_free(s);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scan_pending_and_accessible),
		cmocka_unit_test(test_scan_skips),
		cmocka_unit_test(test_scan_skips_file_pages_and_vmas),
		cmocka_unit_test(test_numa_fault_restores),
		cmocka_unit_test(test_numa_fault_migrates),
		cmocka_unit_test(test_numa_fault_pinned_not_migrated),
		cmocka_unit_test(test_i3_at_copy),
		cmocka_unit_test(test_i2_at_return),
		cmocka_unit_test(test_uffd_writeprotect),
		cmocka_unit_test(test_do_wp_page_uffd_flush),
		cmocka_unit_test(test_uffd_cow_race),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
