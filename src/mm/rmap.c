/*
 * rmap.c - page reclaim's unmap with batched TLB flushes, and the lazyfree
 * (MADV_FREE) discard.
 *
 * Mirrors mm/vmscan.c shrink_page_list() and mm/rmap.c try_to_unmap() ->
 * try_to_unmap_one() (v5.1), with the deferred ("batched") flush of
 * 72b252aed506 (v4.3, ARCH_WANT_BATCHED_UNMAP_TLB_FLUSH on x86): when
 * should_defer_flush() says so, the PTE is cleared under the page-table lock
 * without a flush; set_tlb_ubc_flush_pending() records the flush in the
 * reclaiming task's struct tlbflush_unmap_batch and marks
 * mm->tlb_flush_batched; try_to_unmap_flush() flushes before any page of the
 * batch is freed. Because another task may change the same page tables
 * between the clear and that flush, the paths that rely on "no PTE, so no
 * cached translation" call flush_tlb_batched_pending(mm) under the PTL first
 * (3ea277194daa, v4.13: change_pte_range, zap_pte_range,
 * madvise_free_pte_range, move_ptes; the knobs ubc_check_*).
 *
 * The reclaim actor: the current task reclaims the pages mapped at a range of
 * its mm, in address order, SWAP_CLUSTER_MAX (32) pages per
 * shrink_page_list() call - the pages LRU scanning would have isolated,
 * named instead of found; a PMD-mapped THP is split first
 * (reclaim_split_thp). What is not modelled: LRU aging and
 * page_referenced() (the named pages are treated as cold: a young PTE does
 * not save them), swap (there is no swap device: add_to_swap() fails, so a
 * swap-backed anonymous page is kept and only lazyfree pages are unmapped),
 * file pages, pages mapped by more than one PTE (fork's shared pages are
 * skipped), the anon_vma lock (reclaim looks the PTE up in the one mm).
 *
 * The PTL: the model has no page-table spinlock elsewhere. Here a task that
 * holds a PTE table's lock in a path that synchronises with reclaim records
 * it in task->ptl_table; reclaim waits for any holder of the table it wants,
 * the callers wait only for a reclaim holder (they never contended with
 * each other before this file existed, and do not now). Waiting is a
 * re-check every lock_op_ns (a spin).
 */
#include "arch/points.h"
#include "mm/mm.h"
#include "mm/points.h"

#define PTL_RECLAIM 0x80000000u
/* mm->tlb_flush_batched in the generation form (mm/rmap.c) */
#define TLB_FLUSH_BATCH_FLUSHED_SHIFT 16
#define TLB_FLUSH_BATCH_PENDING_MASK ((1u << (TLB_FLUSH_BATCH_FLUSHED_SHIFT - 1)) - 1)
#define TLB_FLUSH_BATCH_PENDING_LARGE (TLB_FLUSH_BATCH_PENDING_MASK / 2)

static void fmt_unmap(char *buf, size_t len, uint64_t a, uint64_t b)
{
	static const char *const what[] = {"deferred (set_tlb_ubc_flush_pending)",
					   "flushed (ptep_clear_flush)", "lazyfree discard",
					   "lazyfree re-dirtied: PTE restored, kept", "kept"};
	snprintf(buf, len, "tlbsim_try_to_unmap_one: 0x%llx %s", (unsigned long long)a,
		 b < 5 ? what[b] : "?");
}

static void fmt_batched(char *buf, size_t len, uint64_t a, uint64_t b)
{
	snprintf(buf, len, "tlbsim_flush_tlb_batched_pending: tlb_flush_batched=0x%llx %s",
		 (unsigned long long)a, b ? "-> flush" : "(nothing pending)");
}

static void fmt_ubc_flush(char *buf, size_t len, uint64_t a, uint64_t b)
{
	(void)b;
	snprintf(buf, len, "tlbsim_try_to_unmap_flush: %llu entries", (unsigned long long)a);
}

static const struct sim_point tp_unmap_one = {"try_to_unmap_one", fmt_unmap, 0};
static const struct sim_point tp_batched = {"flush_tlb_batched_pending", fmt_batched, 0};
static const struct sim_point tp_ubc_flush = {"try_to_unmap_flush", fmt_ubc_flush, 0};
static const struct sim_point tp_ptl_spin = {"ptl_spin", NULL, SP_QUIET};

enum { UNMAP_DEFERRED, UNMAP_FLUSHED, UNMAP_DISCARD, UNMAP_REDIRTIED, UNMAP_KEPT };

/* ---- the PTL as reclaim sees it ---- */

/* Does a task other than the current one hold table's lock (reclaim_only:
 * a reclaim task)? */
static bool ptl_busy(struct sim *s, uint32_t table, bool reclaim_only)
{
	struct task *me = current_task(s);
	for (int i = 0; i < s->nthreads; i++) {
		struct task *t = task_of(s->threads[i]);
		if (t == me)
			continue;
		/* ptl_table2: the second lock move_ptes holds (mremap.c) */
		for (int j = 0; j < 2; j++) {
			uint32_t held = j ? t->ptl_table2 : t->ptl_table;
			if (!held || (held & ~PTL_RECLAIM) != table)
				continue;
			if (!reclaim_only || (held & PTL_RECLAIM))
				return true;
		}
	}
	return false;
}

/* pte_offset_map_lock()'s spin_lock(ptl) (mm/memory.c, v5.1) for a path that
 * synchronises with reclaim: waits only while a reclaim task holds it */
void ptl_lock_wait(struct sim *s, uint32_t table)
{
	struct kernel *k = kernel_of(s);
	struct task *t = current_task(s);
	if (!t || !table)
		return;
	while (k->nr_reclaim_ptl && ptl_busy(s, table, true))
		sim_sleep_for(s, (uint64_t)P(s, P_lock_op_ns));
	t->ptl_table = table;
}

/* the PTL taken by an rmap walker's page_vma_mapped_walk()
 * (mm/page_vma_mapped.c, v5.1, map_pte + spin_lock: reclaim's
 * try_to_unmap_one, page_mkclean): waits for any holder */
void rmap_ptl_lock(struct sim *s, uint32_t table)
{
	struct kernel *k = kernel_of(s);
	if (ptl_busy(s, table, false))
		sim_trace(s, &tp_ptl_spin, table, 0);
	while (ptl_busy(s, table, false))
		sim_sleep_for(s, (uint64_t)P(s, P_lock_op_ns));
	current_task(s)->ptl_table = table | PTL_RECLAIM;
	k->nr_reclaim_ptl++;
}

void rmap_ptl_unlock(struct sim *s)
{
	kernel_of(s)->nr_reclaim_ptl--;
	current_task(s)->ptl_table = 0;
}

/* move_ptes' second PTE lock (mm/mremap.c, v5.1: the new table's,
 * spin_lock_nested), held like rmap_ptl_lock's beside the first: it waits
 * for any holder, and the zaps and rmap walkers wait for it */
void rmap_ptl_lock2(struct sim *s, uint32_t table)
{
	struct kernel *k = kernel_of(s);
	while (ptl_busy(s, table, false))
		sim_sleep_for(s, (uint64_t)P(s, P_lock_op_ns));
	current_task(s)->ptl_table2 = table | PTL_RECLAIM;
	k->nr_reclaim_ptl++;
}

void rmap_ptl_unlock2(struct sim *s)
{
	kernel_of(s)->nr_reclaim_ptl--;
	current_task(s)->ptl_table2 = 0;
}

/* pgd_offset() .. pmd_offset() (include/linux/pgtable.h): the frame of the
 * PTE table that maps addr, 0 if a level is missing or a huge PMD entry
 * maps the range */
uint32_t pte_table_of(struct sim *s, struct mm_struct *mm, uint64_t addr)
{
	struct hw *hw = hw_of(s);
	const struct pt_geom *g = &hw->geom;
	uint32_t f = mm->pgd;
	for (int d = 0; d < g->levels - 1; d++) {
		pte_t e = table_of(hw, f)[pt_index(g, d, addr)];
		if (!pte_present(e) || (e & PTE_HUGE))
			return 0;	/* a huge entry maps a page, not a table */
		f = pte_pfn(e);
	}
	return f;
}

/* ---- the batch ---- */

static bool arm64_batches(struct sim *s)
{
	return !machine_is_x86(s) && machine_of(s)->policy.arm64_batch != ARM64_BATCH_NONE;
}

/*
 * should_defer_flush(mm, flags) (mm/rmap.c, v4.3..v5.1; arm64 v6.5):
 * shrink_page_list always passes TTU_BATCH_FLUSH. x86 (v4.3+): defer when
 * mm_cpumask has a CPU other than this one. arm64
 * (arch_tlbbatch_should_defer, v6.5+): always, except on a CPU with the
 * repeat-TLBI erratum (ARM64_WORKAROUND_REPEAT_TLBI, Falkor), where a TLBI
 * is followed by its DSB anyway; arm64_batch=none: never.
 */
static bool should_defer_flush(struct sim *s, struct mm_struct *mm)
{
	if (!machine_is_x86(s))
		return arm64_batches(s) && !P(s, P_repeat_tlbi);
	int me = cur_cpu(s);
	for (int c = 0; c < s->nr_cpus; c++)
		if (c != me && ((mm->context.cpumask[c / 64] >> (c % 64)) & 1))
			return true;
	return false;
}

/*
 * set_tlb_ubc_flush_pending(mm, pteval, uaddr) (mm/rmap.c, v4.3; the
 * generation form of tlb_flush_batched from 5ee2fa2f0636, v5.17): x86
 * arch_tlbbatch_add_mm() bumps the mm's tlb_gen and adds mm_cpumask to the
 * batch; arm64 arch_tlbbatch_add_pending() (v6.5) issues TLBI VALE1IS
 * without a DSB (__flush_tlb_page_nosync). Check mode: the TLBI is issued
 * here and completes on each other CPU at a point the explorer chooses, at
 * the latest at this thread's DSB ISH (try_to_unmap_flush; arm64_tlbi_nosync,
 * async_completion); run mode applies it at that DSB. Then flush_required,
 * tlb_flush_batched, and writable for a dirty PTE.
 */
static void set_tlb_ubc_flush_pending(struct sim *s, struct mm_struct *mm, uint64_t va, bool dirty)
{
	struct tlbflush_unmap_batch *ubc = &current_task(s)->tlb_ubc;
	if (machine_is_x86(s)) {
		bool have = false;
		for (uint32_t i = 0; i < ubc->nmm; i++)
			have |= ubc->mms[i] == mm;
		if (!have && ubc->nmm < UBC_MAX)
			ubc->mms[ubc->nmm++] = mm;
		mm->context.tlb_gen++;			/* inc_mm_tlb_gen() */
	} else {
		if (ubc->nva < UBC_MAX) {
			ubc->va[ubc->nva] = va;
			ubc->asid[ubc->nva++] = mm->context.asid;
		}
		if (s->ex) {
			uint64_t ps = hw_of(s)->geom.page_size;
			struct inv_op inv = {.kind = INV_VA_LEAF, .tag = mm->context.asid,
					     .start = va, .end = va + ps, .stride = ps};
			uint32_t n = arm64_tlbi_nosync(s, &inv);	/* no DSB */
			if (n)
				sim_trace(s, YP_TLBI_INFLIGHT, n, 0);
		}
	}
	sim_charge(s, (uint64_t)P(s, P_lock_op_ns) + line_rmw(s, &mm->flush_pending_line));
	ubc->flush_required = true;
	if (machine_of(s)->policy.ubc_flag == UBC_FLAG_BOOL) {
		mm->tlb_flush_batched = 1;
	} else if ((mm->tlb_flush_batched & TLB_FLUSH_BATCH_PENDING_MASK) >
		   TLB_FLUSH_BATCH_PENDING_LARGE) {
		mm->tlb_flush_batched = 1;		/* pending 1, flushed 0 */
	} else {
		mm->tlb_flush_batched++;
	}
	if (dirty)
		ubc->writable = true;
}

static void no_hit(void *ctx, int cpu, uint32_t removed)
{
	(void)ctx, (void)cpu, (void)removed;
}

/*
 * try_to_unmap_flush() (mm/rmap.c, v4.3): if the batch needs it, flush.
 * x86 arch_tlbbatch_flush(): a full flush of the batch's CPUs - modelled as
 * flush_tlb_mm of each mm in the batch (flush_tlb_mm_range with
 * TLB_FLUSH_ALL: IPIs to each mm's CPUs). arm64 (v6.5): DSB ISH, which
 * completes the TLBIs this CPU issued (run mode applies them here; check
 * mode issued them in set_tlb_ubc_flush_pending).
 */
static void try_to_unmap_flush(struct sim *s)
{
	struct tlbflush_unmap_batch *ubc = &current_task(s)->tlb_ubc;
	if (!ubc->flush_required)
		return;
	sim_step_arg(s, &tp_ubc_flush, 0, machine_is_x86(s) ? ubc->nmm : ubc->nva, 0);
	if (machine_is_x86(s)) {
		mm_context_t *ctx[UBC_MAX];
		for (uint32_t i = 0; i < ubc->nmm; i++)
			ctx[i] = &ubc->mms[i]->context;
		machine_of(s)->arch->tlbbatch_flush(s, ctx, ubc->nmm);
	} else {
		uint64_t ps = hw_of(s)->geom.page_size;
		for (uint32_t i = 0; i < ubc->nva && !s->ex; i++) {
			struct inv_op inv = {.kind = INV_VA_LEAF, .tag = ubc->asid[i],
					     .start = ubc->va[i], .end = ubc->va[i] + ps,
					     .stride = ps};
			hw_invalidate_bcast(hw_of(s), &inv, no_hit, NULL);
		}
		arm64_dsb_ish(s);
		sim_charge(s, (uint64_t)P(s, P_dsb_ns));
	}
	ubc->flush_required = false;
	ubc->writable = false;
	ubc->nmm = 0;
	ubc->nva = 0;
}

/* arch_flush_tlb_batched_pending(mm) (db6c1f6f236d, v6.5; flush_tlb_mm
 * before and on x86): arm64_batch=dsb is a DSB ISH on this CPU, which
 * completes only the TLBIs this CPU issued, none of the reclaim CPU's */
static void arch_flush_tlb_batched_pending(struct sim *s, struct mm_struct *mm)
{
	if (!machine_is_x86(s) && machine_of(s)->policy.arm64_batch == ARM64_BATCH_DSB) {
		arm64_dsb_ish(s);
		sim_charge(s, (uint64_t)P(s, P_dsb_ns));
		return;
	}
	machine_of(s)->arch->flush_tlb_range(s, &mm->context, 0, TLB_FLUSH_ALL);
}

/*
 * flush_tlb_batched_pending(mm) (mm/rmap.c, v4.13 3ea277194daa), called
 * under the PTL: if reclaim may have cleared a PTE of this mm without
 * flushing yet, flush the whole mm. ubc_flag=bool: the v4.13..v5.16 bool,
 * cleared after the flush (a batch added during the flush is lost); gen:
 * the pending/flushed generations of 5ee2fa2f0636 (v5.17): flushed =
 * pending by cmpxchg against the value read before the flush.
 */
void flush_tlb_batched_pending_slow(struct sim *s, struct mm_struct *mm)
{
	uint32_t batch = mm->tlb_flush_batched;
	bool gen = machine_of(s)->policy.ubc_flag == UBC_FLAG_GEN;
	uint32_t pending = batch & TLB_FLUSH_BATCH_PENDING_MASK;
	bool need = gen ? pending != batch >> TLB_FLUSH_BATCH_FLUSHED_SHIFT : batch != 0;
	if (!need)
		return;
	sim_trace(s, &tp_batched, batch, 1);
	arch_flush_tlb_batched_pending(s, mm);
	if (!gen)
		mm->tlb_flush_batched = 0;
	else if (mm->tlb_flush_batched == batch)	/* atomic_cmpxchg */
		mm->tlb_flush_batched = pending | (pending << TLB_FLUSH_BATCH_FLUSHED_SHIFT);
}

/* ---- try_to_unmap_one and shrink_page_list ---- */

/* put_page() (include/linux/mm.h, v5.1) of a page reclaim holds or unmapped;
 * the last reference frees it */
static void reclaim_put_page(struct sim *s, uint32_t f)
{
	struct frame *fr = frame_of(hw_of(s), f);
	SIM_BUG_ON(s, fr->refcount == 0);
	if (--fr->refcount == 0) {
		fr->pgflags &= ~(PG_LAZYFREE | PG_DIRTY);
		frame_free(hw_of(s), f);
	}
}

/*
 * try_to_unmap_one() (mm/rmap.c, v5.1) for the one PTE of mm mapping frame f
 * at va: under the PTL, clear it - ptep_get_and_clear() and
 * set_tlb_ubc_flush_pending() when should_defer_flush(), else
 * ptep_clear_flush() - and move its dirty bit to the page (set_page_dirty).
 * A lazyfree page (!PageSwapBacked) that is not dirty is discarded (the
 * caller frees it after try_to_unmap_flush); a dirty one was written after
 * MADV_FREE: its PTE is put back, it becomes swap-backed again and stays.
 * Returns true if the PTE is gone (the page's mapping reference dropped).
 */
static bool try_to_unmap_one(struct sim *s, struct mm_struct *mm, uint64_t va, uint32_t f)
{
	struct kernel *k = kernel_of(s);
	struct hw *hw = hw_of(s);
	const struct pt_geom *g = &hw->geom;
	struct frame *fr = frame_of(hw, f);
	uint32_t table = pte_table_of(s, mm, va);
	if (!table)
		return false;
	rmap_ptl_lock(s, table);
	pte_t *ptep = pte_lookup(s, mm, va);
	if (pte_table_of(s, mm, va) != table || !ptep || !pte_present(*ptep) ||
	    pte_pfn(*ptep) != f) {
		rmap_ptl_unlock(s);
		return false;
	}
	uint64_t idx = pt_index(g, g->levels - 1, va);
	pte_t pteval = *ptep;			/* ptep_get_and_clear(): atomic */
	set_entry(s, table, idx, 0);
	bool dirty = !fmt_pte_clean(hw->fmt, pteval);
	bool deferred = should_defer_flush(s, mm);
	if (deferred)
		set_tlb_ubc_flush_pending(s, mm, va, dirty);
	if (dirty)
		fr->pgflags |= PG_DIRTY;	/* set_page_dirty() */
	int what = deferred ? UNMAP_DEFERRED : UNMAP_FLUSHED;
	bool gone = true;
	if (fr->pgflags & PG_LAZYFREE) {
		if (!(fr->pgflags & PG_DIRTY)) {
			what = UNMAP_DISCARD;
			if (k->hooks && k->hooks->lazyfree_discard)
				k->hooks->lazyfree_discard(k->hooks_ctx, mm, va, f);
		} else {
			set_entry(s, table, idx, pteval);	/* set_pte_at(): remap */
			fr->pgflags &= ~PG_LAZYFREE;		/* SetPageSwapBacked() */
			what = UNMAP_REDIRTIED;
			gone = false;
		}
	}
	sim_trace(s, &tp_unmap_one, va, (uint64_t)what);
	if (!deferred)
		machine_of(s)->arch->flush_tlb_page(s, &mm->context, va);	/* ptep_clear_flush */
	rmap_ptl_unlock(s);
	if (gone)
		reclaim_put_page(s, f);		/* page_remove_rmap(); put_page() */
	return gone;
}

/*
 * shrink_page_list() (mm/vmscan.c, v5.1) of a PMD-mapped anonymous THP:
 * a swap-backed THP is split before add_to_swap, or when add_to_swap fails
 * (split_huge_page_to_list, which freezes and splits the PMD mapping:
 * split_huge_page_at, huge_memory.c) - with no swap device both lead to the
 * split and then the subpages are kept, as any swap-backed page; a lazyfree
 * THP is unmapped with TTU_SPLIT_HUGE_PMD (split_huge_pmd_address), here
 * the same split, its subpages then discarded one by one by the PTE path.
 * A THP that cannot be split (a reference, locked) stays PMD-mapped and
 * kept. The rmap walk's anon_vma lock, which keeps the VMA and its tables
 * while the PMD is split, is mmap_sem for read in the model (taken only
 * here, when a huge entry maps the page).
 */
static void reclaim_split_thp(struct sim *s, struct mm_struct *mm, uint64_t va)
{
	down_read(s, &mm->mmap_sem);
	struct vm_area_struct *vma = find_vma(mm, va);
	if (vma && vma->vm_start <= va)
		split_huge_page_at(s, vma, va);
	up_read(s, &mm->mmap_sem);
}

/*
 * shrink_page_list() (mm/vmscan.c, v5.1) over at most SWAP_CLUSTER_MAX
 * named pages, first part: per page, isolate it (a reference),
 * trylock_page; a swap-backed anonymous page is kept (no swap: add_to_swap
 * fails); a lazyfree page goes through try_to_unmap (try_to_unmap_one) and,
 * if discarded, page_ref_freeze(page, 1) and the PageDirty re-check decide
 * that it goes on the free list. The flush may still be pending.
 */
uint32_t shrink_page_list_unmap(struct sim *s, struct mm_struct *mm, uint64_t start, uint64_t end,
				struct reclaim_list *rl)
{
	struct hw *hw = hw_of(s);
	uint64_t ps = hw->geom.page_size;
	rl->n = 0;
	for (uint64_t va = start; va < end && rl->n < SWAP_CLUSTER_MAX; va += ps) {
		/* isolate_lru_page(): a scheduler-visible step per page */
		sim_step_arg(s, YP_PTE, (uint64_t)P(s, P_lock_op_ns), va, 0);
		pte_t *pmdp = hw_pmd_lookup(hw, mm->pgd, va);
		if (pmdp && pte_present(*pmdp) && (*pmdp & PTE_HUGE))
			reclaim_split_thp(s, mm, va);
		pte_t *ptep = pte_lookup(s, mm, va);
		if (!ptep || !pte_present(*ptep))
			continue;
		uint32_t f = pte_pfn(*ptep);
		struct frame *fr = frame_of(hw, f);
		if (is_zero_frame(s, f) || !(fr->pgflags & PG_ANON) || fr->refcount != 1 ||
		    (fr->pgflags & PG_LOCKED))
			continue;
		fr->refcount++;			/* the isolation reference */
		fr->pgflags |= PG_LOCKED;	/* trylock_page() */
		bool freed = false;
		if ((fr->pgflags & PG_LAZYFREE) && try_to_unmap_one(s, mm, va, f) &&
		    fr->refcount == 1 && !(fr->pgflags & PG_DIRTY) && (fr->pgflags & PG_LAZYFREE)) {
			/* page_ref_freeze(page, 1) and the PageDirty re-check held */
			freed = true;
			rl->pages[rl->n++] = f;
		}
		fr->pgflags &= ~PG_LOCKED;	/* unlock_page() (nothing sleeps on an anon page here) */
		if (!freed)
			reclaim_put_page(s, f);	/* putback_lru_page() */
	}
	return rl->n;
}

/* shrink_page_list()'s end: try_to_unmap_flush(), then free_unref_page_list */
void shrink_page_list_finish(struct sim *s, struct reclaim_list *rl)
{
	try_to_unmap_flush(s);
	if (rl->n)
		sim_step_arg(s, YP_FREE_PAGES, rl->n * (uint64_t)P(s, P_page_free_ns), rl->n, 0);
	for (uint32_t i = 0; i < rl->n; i++)
		reclaim_put_page(s, rl->pages[i]);
	rl->n = 0;
}

/* The reclaim actor (kswapd's balance_pgdat -> shrink_node ->
 * shrink_inactive_list, v5.1, reduced to named pages): the pages of
 * [addr, addr+len) of the current task's mm, SWAP_CLUSTER_MAX at a time. */
int64_t sys_reclaim(struct sim *s, uint64_t addr, uint64_t len)
{
	struct mm_struct *mm = current_task(s)->mm;
	uint64_t ps = hw_of(s)->geom.page_size;
	int64_t n = 0;
	if (!mm || (addr & (ps - 1)))
		return -1;
	uint64_t end = addr + ((len + ps - 1) & ~(ps - 1));
	sim_set_mode(s, MODE_SYS);
	for (uint64_t a = addr; a < end;) {
		uint64_t next = a + SWAP_CLUSTER_MAX * ps;
		if (next > end || next < a)
			next = end;
		struct reclaim_list rl;
		n += shrink_page_list_unmap(s, mm, a, next, &rl);
		shrink_page_list_finish(s, &rl);
		a = next;
	}
	sim_set_mode(s, MODE_USER);
	return n;
}
