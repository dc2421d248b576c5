/*
 * migrate.c - migrating an anonymous page for NUMA balancing, with the
 * pte_accessible() test that decides whether its unmap flushes; and
 * get_user_pages references (pins).
 *
 * Mirrors the base-page path of migrate_misplaced_page() (mm/migrate.c,
 * v5.14, called by do_numa_page with the PTE still PROT_NONE since
 * b99a342d4f11 "NUMA balancing: reduce TLB flush via delaying mapping on
 * hint page fault"): numamigrate_isolate_page, then migrate_pages ->
 * unmap_and_move -> __unmap_and_move:
 *  - trylock_page (MIGRATE_ASYNC: a locked page is not migrated);
 *  - try_to_migrate_one (try_to_unmap_one with TTU_MIGRATION before v5.15;
 *    mm/rmap.c), under the PTE lock: ptep_clear_flush() - the PTE cleared,
 *    flushed with flush_tlb_page() only if pte_accessible(mm, pte)
 *    (mm/pgtable-generic.c) - and a migration entry installed (writable if
 *    the PTE was: the PROT_NONE PTE keeps its saved write bit);
 *  - move_to_new_page -> migrate_page -> migrate_page_copy: the copy. This
 *    is the I3 point: from here on a write into the old page through a TLB
 *    entry the unmap did not flush is not in the new page (mm_hooks
 *    page_copied; the oracle's WATCH_COPIED);
 *  - remove_migration_ptes: under the PTE lock, the migration entry becomes
 *    a PTE of the new page (vm_page_prot, old, made writable again if the
 *    entry was), then unlock_page and the last reference of the old page
 *    goes (putback: freed - I1 if a CPU still caches it).
 *
 * pte_accessible(mm, pte) (arch/x86/include/asm/pgtable.h, v3.13+): a
 * present PTE, or - knob pte_accessible, 20841405940e "mm: fix TLB flush
 * race between migration, and change_protection_range" - a PROT_NONE one
 * while mm_tlb_flush_pending(mm): change_protection may have made it
 * PROT_NONE and not flushed yet, so a CPU may still write through a cached
 * writable entry. arm64's pte_accessible has the same pending test (and
 * looks at the young bit of a valid PTE, which the model's migration never
 * sees old); the model uses the x86 form on both.
 *
 * Both PTE steps take the PTE lock as an rmap walker does (rmap_ptl_lock,
 * rmap.c): they wait for a zap, mprotect or scan holding it, and those wait
 * for them. A task that faults on a migration entry waits for the page lock
 * (migration_entry_wait -> put_and_wait_on_page_locked) and retries.
 *
 * Not modelled: NUMA nodes and the placement policy (the scan says whether
 * its pages are misplaced), the batched unmap flush of v6.4
 * (migrate_pages_batch, 7e12beb8ca2a: try_to_migrate_one records the flush
 * with set_tlb_ubc_flush_pending when pte_accessible, and flushes before
 * the copy - the same rule), file and KSM pages, pages mapped more than
 * once, THP, compaction (the other migrator of 20841405940e's report: the
 * same unmap, started by the allocator instead of a hinting fault).
 */
#include "mm/mm.h"
#include "mm/points.h"

static void prot_step(struct sim *s, uint64_t cost, uint64_t addr, enum prot_step st,
		      const struct mm_struct *mm)
{
	sim_step_arg(s, YP_PROT, cost, addr, (uint64_t)st | (uint64_t)mm->tlb_flush_pending << 8);
}

bool pte_accessible(struct sim *s, const struct mm_struct *mm, pte_t pte)
{
	if (pte_present(pte))
		return true;
	return (pte & PTE_PROTNONE) &&
	       machine_of(s)->policy.pte_accessible == PTE_ACCESSIBLE_PENDING &&
	       mm->tlb_flush_pending > 0;		/* mm_tlb_flush_pending() */
}

/* try_to_migrate_one() for frame f at addr (mm/rmap.c): under the PTE lock,
 * ptep_clear_flush() and a migration entry. false if the PTE no longer maps
 * f (the migration fails). */
static bool try_to_migrate_one(struct sim *s, struct vm_area_struct *vma, uint64_t addr,
			       uint32_t f)
{
	struct mm_struct *mm = vma->vm_mm;
	struct hw *hw = hw_of(s);
	sim_step_arg(s, YP_PTE, (uint64_t)P(s, P_lock_op_ns), addr, 0);	/* page_vma_mapped_walk */
	uint32_t table = pte_table_of(s, mm, addr);
	if (!table)
		return false;
	rmap_ptl_lock(s, table);			/* the PTL, held through the flush */
	pte_t *ptep = pte_lookup(s, mm, addr);
	pte_t pte = ptep ? *ptep : 0;
	if (!(pte_present(pte) || (pte & PTE_PROTNONE)) || pte_pfn(pte) != f) {
		rmap_ptl_unlock(s);
		return false;
	}
	/* ptep_clear_flush(): ptep_get_and_clear, then flush_tlb_page if
	 * pte_accessible(); the migration entry replaces the PTE at once
	 * (set_pte_at under the same lock) */
	bool flush = pte_accessible(s, mm, pte);
	*ptep = pfn_pte(f, PTE_MIGRATION | (pte & PTE_WRITE));
	sim_charge(s, (uint64_t)P(s, P_lock_op_ns));		/* the exchange */
	if (pte & PTE_DIRTY)
		frame_of(hw, f)->pgflags |= PG_DIRTY;		/* set_page_dirty */
	sim_trace(s, YP_PROT, addr,
		  (uint64_t)(flush ? PROT_STEP_UNMAP_FLUSH : PROT_STEP_UNMAP_NOFLUSH) |
			  (uint64_t)mm->tlb_flush_pending << 8);
	if (flush)
		machine_of(s)->arch->flush_tlb_page(s, &mm->context, addr);
	rmap_ptl_unlock(s);
	return true;
}

/* remove_migration_pte() (mm/migrate.c): the migration entry for old at
 * addr becomes a PTE of nf; false if the entry is gone (zapped meanwhile) */
static bool remove_migration_pte(struct sim *s, struct vm_area_struct *vma, uint64_t addr,
				 uint32_t old, uint32_t nf)
{
	struct mm_struct *mm = vma->vm_mm;
	struct hw *hw = hw_of(s);
	struct kernel *k = kernel_of(s);
	prot_step(s, (uint64_t)P(s, P_lock_op_ns), addr, PROT_STEP_MIGRATE_REMAP, mm);
	uint32_t table = pte_table_of(s, mm, addr);
	if (!table)
		return false;
	rmap_ptl_lock(s, table);			/* page_vma_mapped_walk's PTL */
	pte_t *ptep = pte_lookup(s, mm, addr);
	if (!ptep || !(*ptep & PTE_MIGRATION) || pte_pfn(*ptep) != old) {
		rmap_ptl_unlock(s);
		return false;
	}
	/* pte_mkold(mk_pte(new, vm_page_prot)); maybe_mkwrite for a writable
	 * entry (the page is private: vm_page_prot is read-only) */
	pte_t pte = pfn_pte(nf, PTE_VALID | PTE_USER);
	if ((*ptep & PTE_WRITE) && (vma->vm_flags & VM_WRITE))
		pte |= PTE_WRITE;
	*ptep = fmt_pte_mkclean(hw->fmt, pte);
	if (k->hooks && k->hooks->page_mapped)
		k->hooks->page_mapped(k->hooks_ctx, nf, false);
	rmap_ptl_unlock(s);
	return true;
}

int migrate_misplaced_page(struct sim *s, struct vm_area_struct *vma, uint64_t addr, uint32_t f)
{
	struct mm_struct *mm = vma->vm_mm;
	struct hw *hw = hw_of(s);
	struct kernel *k = kernel_of(s);
	struct frame *fr = frame_of(hw, f);
	uint32_t gen = fr->gen;
	/* numamigrate_isolate_page / migrate_page_move_mapping's expected
	 * count: an anonymous page mapped once and not pinned; trylock_page */
	if (!(fr->pgflags & PG_ANON) || (fr->pgflags & (PG_KSM | PG_LOCKED)) || fr->refcount != 1) {
		sim_trace(s, YP_PROT, addr,
			  (uint64_t)PROT_STEP_MIGRATE_FAIL | (uint64_t)mm->tlb_flush_pending << 8);
		return -1;
	}
	/* alloc_misplaced_dst_page on the target node */
	sim_charge(s, (uint64_t)P(s, P_page_alloc_ns));
	uint32_t nf = alloc_frame(s, FRAME_DATA, 0);
	if (nf == NO_FRAME)
		return -1;
	struct frame *nfr = frame_of(hw, nf);
	if (fr->gen != gen || fr->state != FRAME_DATA || (fr->pgflags & PG_LOCKED)) {
		if (--nfr->refcount == 0)
			frame_free(hw, nf);
		return -1;
	}
	fr->pgflags |= PG_LOCKED;				/* trylock_page */
	if (!try_to_migrate_one(s, vma, addr, f)) {
		unlock_page(s, f);
		if (--nfr->refcount == 0)
			frame_free(hw, nf);
		sim_trace(s, YP_PROT, addr,
			  (uint64_t)PROT_STEP_MIGRATE_FAIL | (uint64_t)mm->tlb_flush_pending << 8);
		return -1;
	}
	/* migrate_page_copy(): the contents and the page state (dirty) */
	nfr->pgflags |= PG_ANON | (fr->pgflags & PG_DIRTY);
	if (k->hooks && k->hooks->page_copied)
		k->hooks->page_copied(k->hooks_ctx, f, nf, true);
	prot_step(s, (uint64_t)P(s, P_copy_4k_ns) * (hw->geom.page_size >> 12), addr,
		  PROT_STEP_MIGRATE_COPY, mm);
	if (!remove_migration_pte(s, vma, addr, f, nf)) {
		if (--nfr->refcount == 0)			/* no mapping took it */
			frame_free(hw, nf);
	}
	unlock_page(s, f);
	/* the old page's last reference (isolation's, which took over the
	 * mapping's at the unmap): putback frees it */
	if (--fr->refcount == 0)
		frame_free(hw, f);
	return 0;
}

/* get_user_pages(FOLL_GET) of one page (mm/gup.c): follow_page_pte, with
 * no fault (the page must be mapped), and get_page. The reference lives in
 * the kernel's pin table until gup_unpin (put_page). A huge PMD entry
 * (follow_page_mask -> follow_pmd_mask -> follow_trans_huge_pmd, mm/gup.c
 * + mm/huge_memory.c, v5.1) is followed under the PMD lock and the page
 * got there (the entry's read and get_page are one step in the model, as
 * the lock makes them): the subpage of addr, whose reference is the compound page's
 * (the model's one frame of the THP). The pin is a read (no FOLL_WRITE):
 * can_follow_write_pmd's write-fault path is not reached. */
int gup_pin(struct sim *s, uint64_t addr)
{
	struct mm_struct *mm = current_task(s)->mm;
	struct kernel *k = kernel_of(s);
	int slot = -1;
	for (int i = 0; i < GUP_PINS && slot < 0; i++)
		if (k->pins[i] == NO_FRAME)
			slot = i;
	sim_set_mode(s, MODE_SYS);
	prot_step(s, (uint64_t)P(s, P_lock_op_ns), addr, PROT_STEP_PIN, mm);
	down_read(s, &mm->mmap_sem);
	pte_t *ptep = pte_lookup(s, mm, addr);
	uint32_t f = ptep && pte_present(*ptep) ? pte_pfn(*ptep) : NO_FRAME;
	/* follow_pmd_mask: a huge PMD entry is followed at the PMD level
	 * (follow_trans_huge_pmd) */
	pte_t *pmdp = hw_pmd_lookup(hw_of(s), mm->pgd, addr);
	if (pmdp && pte_present(*pmdp) && (*pmdp & PTE_HUGE))
		f = pte_pfn(*pmdp);
	if (f != NO_FRAME && is_zero_frame(s, f))
		f = NO_FRAME;
	if (f != NO_FRAME && slot >= 0) {
		frame_of(hw_of(s), f)->refcount++;		/* get_page */
		k->pins[slot] = f;
	}
	up_read(s, &mm->mmap_sem);
	sim_set_mode(s, MODE_USER);
	return f != NO_FRAME && slot >= 0 ? slot : -1;
}

/* put_page() of a pin: 0, or -1 for a handle that holds nothing */
int gup_unpin(struct sim *s, int handle)
{
	struct kernel *k = kernel_of(s);
	if (handle < 0 || handle >= GUP_PINS || k->pins[handle] == NO_FRAME)
		return -1;
	uint32_t f = k->pins[handle];
	k->pins[handle] = NO_FRAME;
	struct frame *fr = frame_of(hw_of(s), f);
	if (--fr->refcount == 0)
		frame_free(hw_of(s), f);
	return 0;
}
