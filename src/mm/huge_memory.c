/*
 * huge_memory.c - PMD-mapped anonymous transparent huge pages (mm/huge_memory.c,
 * mm/pgtable-generic.c, include/asm-generic/tlb.h, v5.1).
 *
 * A VMA opts in with madvise(MADV_HUGEPAGE) (VM_HUGEPAGE; the model's THP
 * "enabled" setting is madvise, so no VMA gets huge pages otherwise). A fault
 * in a private anonymous VMA that covers the whole PMD-aligned range around
 * the address, with a none PMD entry, maps one huge page with a block
 * descriptor (PTE_HUGE) in the PMD table; the MMU caches it as one TLB entry
 * for the whole block (src/hw). Model simplifications: the huge page is one
 * data frame (the compound page's head; the frame's generation stands for
 * all 512 subpages), a read fault maps a new huge page as a write fault
 * would (no huge zero page), and no PTE table is deposited at fault time
 * (the split allocates its table). Only a 4K granule gets huge PMDs.
 *
 * Unmapping: zap_pmd_range (memory.c) zaps a huge entry whose whole range
 * is unmapped with zap_huge_pmd and splits one that is partly unmapped
 * (__split_huge_pmd) before zapping its PTEs.
 *
 * The other walkers that know huge entries: mprotect (change_huge_pmd from
 * change_protection, mprotect.c; a block partly in the range is split;
 * UFFDIO_WRITEPROTECT splits), fork (copy_huge_pmd from copy_page_range,
 * memory.c), the fault on a huge entry (huge_pmd_fault:
 * do_huge_pmd_numa_page, do_huge_pmd_wp_page, huge_pmd_set_accessed),
 * mremap (move_huge_pmd from move_page_tables, mremap.c; an unaligned
 * extent splits), clear_refs (clear_refs_huge_pmd, task_mmu.c) and the NUMA
 * scan (change_huge_pmd with prot_numa: a PROT_NONE huge entry). Each
 * recognises a huge entry with pmd_trans_huge_entry() (hw.h), which a
 * PROT_NONE block satisfies too: not present to the MMU, still huge - never
 * a table pointer - to every kernel walker.
 */
#include "mm/mm.h"
#include "mm/points.h"

uint64_t hpage_pmd_size(struct sim *s)
{
	return 1ull << hw_of(s)->geom.pmd_shift;
}

/* transhuge_vma_suitable() + the anonymous checks of
 * do_huge_pmd_anonymous_page (mm/huge_memory.c, v5.1) and
 * __transparent_hugepage_enabled's madvise mode */
bool thp_vma_suitable(struct sim *s, const struct vm_area_struct *vma, uint64_t address)
{
	const struct pt_geom *g = &hw_of(s)->geom;
	uint64_t size = hpage_pmd_size(s), haddr = address & ~(size - 1);
	return g->page_shift == 12 && (vma->vm_flags & VM_HUGEPAGE) && !vma->file &&
	       !(vma->vm_flags & (VM_SHARED | VM_HUGETLB | VM_PFNMAP | VM_MIXEDMAP)) &&
	       haddr >= vma->vm_start && haddr + size <= vma->vm_end;
}

/*
 * do_huge_pmd_anonymous_page() (mm/huge_memory.c, v5.1) with
 * __do_huge_pmd_anonymous_page: allocate and clear the huge page, then
 * under the PMD lock install the block entry unless someone else populated
 * the PMD meanwhile (the page is then given back and the fault retried by
 * the PTE path). Entry: young; dirty and writable if the VMA is
 * (mk_huge_pmd + maybe_pmd_mkwrite(pmd_mkdirty)), read-only otherwise.
 */
vm_fault_t do_huge_pmd_anonymous_page(struct sim *s, struct vm_area_struct *vma,
				      uint32_t pmd_table, uint64_t address)
{
	struct hw *hw = hw_of(s);
	struct kernel *k = kernel_of(s);
	const struct pt_geom *g = &hw->geom;
	uint64_t idx = pt_index(g, g->depth_pmd, address);
	/* clear_huge_page: 512 base pages' worth of clearing */
	uint32_t f = alloc_zeroed_frame(s, FRAME_DATA, 0,
					(g->ptrs_per_pte - 1) * (uint64_t)P(s, P_page_alloc_ns));
	frame_of(hw, f)->pgflags |= PG_ANON;
	sim_step(s, YP_PTE, (uint64_t)P(s, P_lock_op_ns));	/* pmd_lock */
	if (!pte_none(table_of(hw, pmd_table)[idx])) {
		struct frame *fr = frame_of(hw, f);
		if (--fr->refcount == 0)
			frame_free(hw, f);
		return VM_FAULT_NOPAGE;
	}
	pte_t e = pfn_pte(f, PTE_VALID | PTE_HUGE | PTE_USER | PTE_YOUNG);
	if (vma->vm_flags & VM_WRITE)
		e = fmt_pte_mkdirty(hw->fmt, e | PTE_WRITE);
	else
		e = fmt_pte_mkclean(hw->fmt, e);	/* arm64: RDONLY */
	set_entry(s, pmd_table, idx, e);
	if (k->hooks && k->hooks->page_mapped)
		k->hooks->page_mapped(k->hooks_ctx, f, (vma->vm_flags & VM_WRITE) != 0);
	return 0;
}

/*
 * zap_huge_pmd() (mm/huge_memory.c, v5.1): under the PMD lock clear the
 * entry (pmdp_huge_get_and_clear_full), record it in the gather with
 * tlb_remove_pmd_tlb_entry() (include/asm-generic/tlb.h v5.1:
 * __tlb_adjust_range of HPAGE_PMD_SIZE and cleared_pmds, so the gather's
 * flush uses a PMD_SIZE stride: x86 flush_tlb_mm_range with stride_shift
 * PMD_SHIFT, arm64 __flush_tlb_range with stride PMD_SIZE, last level), and
 * queue the page (tlb_remove_page_size), freed only after that flush.
 */
void zap_huge_pmd(struct sim *s, struct mmu_gather *tlb, struct vm_area_struct *vma,
		  uint32_t pmd_table, uint64_t addr)
{
	struct hw *hw = hw_of(s);
	const struct pt_geom *g = &hw->geom;
	uint64_t idx = pt_index(g, g->depth_pmd, addr);
	ptl_lock(s, pmd_table);
	sim_step_arg(s, YP_ZAP_PTE, (uint64_t)P(s, P_pte_zap_ns), addr, 0);
	pte_t pmd = table_of(hw, pmd_table)[idx];
	if (!pmd_trans_huge_entry(pmd)) {
		ptl_unlock(s);
		return;		/* split or zapped meanwhile */
	}
	set_entry(s, pmd_table, idx, 0);
	/* tlb_remove_pmd_tlb_entry() */
	__tlb_adjust_range(tlb, addr, hpage_pmd_size(s));
	tlb->cleared_pmds = 1;
	(void)vma;
	bool full = __tlb_remove_page(s, tlb, pte_pfn(pmd));
	ptl_unlock(s);
	if (full)
		tlb_flush_mmu(s, tlb);
}

/*
 * pmdp_invalidate() (mm/pgtable-generic.c, v5.1): make the PMD entry not
 * present (pmdp_establish with pmd_mknotpresent; the model clears it: no
 * walker may use it) and flush_pmd_tlb_range() of [address, address +
 * HPAGE_PMD_SIZE) - x86's flush_tlb_range (no override), and arm64's own
 * from v5.9 (arm64_flush_pmd_tlb_range). Returns the old entry.
 */
static pte_t pmdp_invalidate(struct sim *s, struct vm_area_struct *vma, uint32_t pmd_table,
			     uint64_t idx, uint64_t address)
{
	pte_t old = table_of(hw_of(s), pmd_table)[idx];
	set_entry(s, pmd_table, idx, 0);
	if (machine_is_x86(s))
		machine_of(s)->arch->flush_tlb_range(s, &vma->vm_mm->context, address,
						     address + hpage_pmd_size(s));
	else
		arm64_flush_pmd_tlb_range(s, &vma->vm_mm->context, address,
					  address + hpage_pmd_size(s));
	return old;
}

/*
 * __split_huge_pmd() -> __split_huge_pmd_locked() (mm/huge_memory.c, v5.1),
 * anonymous page: under the PMD lock, pmdp_invalidate() (the huge entry is
 * gone from every TLB before any PTE of the range is visible), then a PTE
 * table is filled with one entry per subpage, carrying the huge entry's
 * write/dirty/young bits (and PROT_NONE: a NUMA-scanned huge entry gives
 * PROT_NONE PTEs), and pmd_populate() points the PMD entry at it.
 * The model maps every subpage PTE to the huge page's one frame (its
 * refcount: one per PTE). Returns true if a huge entry was split.
 */
bool __split_huge_pmd(struct sim *s, struct vm_area_struct *vma, uint32_t pmd_table,
		      uint64_t address)
{
	struct hw *hw = hw_of(s);
	const struct pt_geom *g = &hw->geom;
	uint64_t haddr = address & ~(hpage_pmd_size(s) - 1);
	uint64_t idx = pt_index(g, g->depth_pmd, haddr);
	/* pgtable_trans_huge_withdraw: the model allocates the table here */
	uint32_t pt = alloc_zeroed_frame(s, FRAME_PGTABLE, g->depth_pmd + 1, 0);
	ptl_lock(s, pmd_table);
	sim_step(s, YP_PTE, (uint64_t)P(s, P_lock_op_ns));
	pte_t pmd = table_of(hw, pmd_table)[idx];
	if (!pmd_trans_huge_entry(pmd)) {
		ptl_unlock(s);
		frame_free(hw, pt);
		return false;
	}
	pte_t old = pmdp_invalidate(s, vma, pmd_table, idx, haddr);
	uint32_t f = pte_pfn(old);
	/* a PROT_NONE huge entry gives PROT_NONE PTEs (the PTE takes the
	 * PMD's protection, pmd_protnone's too: __split_huge_pmd_locked's
	 * mk_pte(vma->vm_page_prot) + the bits; v5.1 keeps the hinting
	 * faults the scan asked for) */
	pte_t bits = old & (PTE_VALID | PTE_USER | PTE_YOUNG | PTE_WRITE | PTE_DIRTY | PTE_RDONLY |
			    PTE_SOFT_DIRTY | PTE_PROTNONE);
	struct frame *fr = frame_of(hw, f);
	for (uint64_t i = 0; i < g->ptrs_per_pte; i++)
		set_entry(s, pt, i, pfn_pte(f, bits & ~(PTE_PFN_MASK << PTE_PFN_SHIFT)));
	fr->refcount += (uint32_t)g->ptrs_per_pte - 1;
	set_entry(s, pmd_table, idx, pfn_pte(pt, PTE_VALID | PTE_TABLE | PTE_USER));	/* pmd_populate */
	ptl_unlock(s);
	return true;
}

/*
 * huge_pmd_set_accessed() (mm/huge_memory.c, v5.1): a fault on a huge entry
 * that needs no copy - a read, or a write the entry already allows - makes
 * it young (and dirty for a write) with pmdp_set_access_flags(), the
 * arch's ptep_set_access_flags() on the PMD slot (arm64's pmdp_ variant is
 * that function; x86's differs only in the flush of a changed entry, which
 * the model's x86 back end makes as for a PTE), under the PMD lock.
 */
static vm_fault_t huge_pmd_set_accessed(struct sim *s, struct vm_area_struct *vma,
					uint32_t pmd_table, uint64_t idx, uint64_t haddr,
					pte_t orig, bool write)
{
	struct hw *hw = hw_of(s);
	struct kernel *k = kernel_of(s);
	pte_t *pmdp = &table_of(hw, pmd_table)[idx];
	if (*pmdp != orig)
		return 0;			/* !pmd_same: the access retries */
	pte_t entry = orig | PTE_YOUNG;		/* pmd_mkyoung */
	if (write) {
		entry = fmt_pte_mkdirty(hw->fmt, entry);	/* pmd_mkdirty */
		if (k->hooks && k->hooks->page_dirtied)
			k->hooks->page_dirtied(k->hooks_ctx, pte_pfn(entry));
	}
	if (machine_of(s)->arch->ptep_set_access_flags(s, &vma->vm_mm->context, haddr, pmdp,
							entry, write))
		s->m.af_faults++;
	return 0;
}

/*
 * do_huge_pmd_wp_page() (mm/huge_memory.c): a write fault on a
 * write-protected huge entry (fork's copy_huge_pmd, a private mapping made
 * writable again by mprotect). Under the PMD lock, if the entry is still the
 * one that faulted: a page mapped only here (page_trans_huge_mapcount() ==
 * 1; the model: refcount 1) is reused - young, dirty and writable
 * (maybe_pmd_mkwrite(pmd_mkdirty)) through pmdp_set_access_flags(), as
 * wp_page_reuse does for a PTE. Otherwise, after the unlock, the huge entry
 * is split (__split_huge_pmd, whose pmdp_invalidate flushes the block; in
 * huge_pmd_fault) and the fault falls back to the PTE path, whose
 * do_wp_page copies the subpage. That fallback is v5.8's rule (3917c80280c9 "thp: change CoW semantics for
 * anon-THP") for every version: v5.1 copies the whole huge page into a new
 * one (alloc_hugepage_vma, copy_user_huge_page, then
 * pmdp_huge_clear_flush_notify) or, without one, into 512 small pages
 * (do_huge_pmd_wp_page_fallback), and splits only when that fails too. The
 * old block leaves every TLB before the new mapping is visible either way.
 */
static vm_fault_t do_huge_pmd_wp_page(struct sim *s, struct vm_area_struct *vma,
				      uint32_t pmd_table, uint64_t idx, uint64_t haddr, pte_t orig)
{
	struct hw *hw = hw_of(s);
	struct kernel *k = kernel_of(s);
	pte_t *pmdp = &table_of(hw, pmd_table)[idx];
	if (*pmdp != orig)
		return 0;
	if (frame_of(hw, pte_pfn(orig))->refcount == 1) {
		pte_t entry = fmt_pte_mkdirty(hw->fmt, orig | PTE_YOUNG | PTE_WRITE);
		if (k->hooks && k->hooks->page_dirtied)
			k->hooks->page_dirtied(k->hooks_ctx, pte_pfn(entry));
		if (machine_of(s)->arch->ptep_set_access_flags(s, &vma->vm_mm->context, haddr,
								pmdp, entry, true))
			s->m.af_faults++;
		return VM_FAULT_WRITE;
	}
	return VM_FAULT_FALLBACK;	/* the caller splits after the unlock */
}

/*
 * do_huge_pmd_numa_page() (mm/huge_memory.c, v5.1): the NUMA-hinting fault
 * on a huge entry the scan made PROT_NONE (change_huge_pmd with
 * prot_numa). Under the PMD lock, if the entry is still the one that
 * faulted, it is restored (clear_pmdnuma: pmd_modify(vm_page_prot),
 * pmd_mkyoung, pmd_mkwrite if the scan saved the write bit, set_pmd_at): no
 * flush, the entry only gains permissions, and no TLB held the PROT_NONE
 * entry. Model: no migration of a huge page - v5.1 would migrate a
 * misplaced one (migrate_misplaced_transhuge_page, after a flush of the
 * block when mm_tlb_flush_pending); here the entry is restored whatever
 * the scan's `misplaced` said (the PTE path, do_numa_page in fault.c, is
 * the one that migrates).
 */
static vm_fault_t do_huge_pmd_numa_page(struct sim *s, struct vm_area_struct *vma,
					uint32_t pmd_table, uint64_t idx, uint64_t haddr,
					pte_t orig)
{
	struct hw *hw = hw_of(s);
	struct mm_struct *mm = vma->vm_mm;
	pte_t *pmdp = &table_of(hw, pmd_table)[idx];
	sim_step_arg(s, YP_PROT, (uint64_t)P(s, P_lock_op_ns), haddr,
		     (uint64_t)PROT_STEP_NUMA_FAULT | (uint64_t)mm->tlb_flush_pending << 8);
	if (*pmdp != orig)
		return 0;				/* !pmd_same: the access retries */
	pte_t entry = (orig & ~PTE_PROTNONE) | PTE_VALID | PTE_YOUNG;
	if (hw->fmt->rdonly && (entry & PTE_WRITE))
		entry &= ~PTE_RDONLY;			/* arm64 pmd_mkwrite */
	*pmdp = entry;					/* set_pmd_at */
	sim_charge(s, (uint64_t)P(s, P_lock_op_ns));
	sim_trace(s, YP_PROT, haddr,
		  (uint64_t)PROT_STEP_NUMA_RESTORE | (uint64_t)mm->tlb_flush_pending << 8);
	return 0;
}

/*
 * The huge-PMD branch of __handle_mm_fault() (mm/memory.c, v5.1) for a
 * huge entry (pmd_trans_huge): a PROT_NONE one (the NUMA scan's) goes to
 * do_huge_pmd_numa_page(); for a present one a write the entry does not
 * allow goes to wp_huge_pmd() -> do_huge_pmd_wp_page(), anything else to
 * huge_pmd_set_accessed().
 */
vm_fault_t huge_pmd_fault(struct sim *s, struct vm_area_struct *vma, uint32_t pmd_table,
			  uint64_t address, bool write)
{
	struct hw *hw = hw_of(s);
	const struct pt_geom *g = &hw->geom;
	uint64_t haddr = address & ~(hpage_pmd_size(s) - 1);
	uint64_t idx = pt_index(g, g->depth_pmd, haddr);
	pte_t orig = table_of(hw, pmd_table)[idx];
	if (!pmd_trans_huge_entry(orig))
		return 0;
	ptl_lock(s, pmd_table);
	sim_step_arg(s, YP_PTE, (uint64_t)P(s, P_lock_op_ns), haddr, 0);	/* pmd_lock */
	vm_fault_t r;
	if (orig & PTE_PROTNONE)	/* pmd_protnone && vma_is_accessible */
		r = do_huge_pmd_numa_page(s, vma, pmd_table, idx, haddr, orig);
	else if (write && !(orig & PTE_WRITE))
		r = do_huge_pmd_wp_page(s, vma, pmd_table, idx, haddr, orig);
	else
		r = huge_pmd_set_accessed(s, vma, pmd_table, idx, haddr, orig, write);
	ptl_unlock(s);
	if (r & VM_FAULT_FALLBACK)
		__split_huge_pmd(s, vma, pmd_table, haddr);
	return r;
}

/* The PMD table whose entry for addr is a huge one (pmd_trans_huge,
 * present or PROT_NONE), or NO_FRAME: the test of the page walkers'
 * pmd level (change_pmd_range, walk_pmd_range, v5.1). Only a VM_HUGEPAGE
 * VMA has huge entries, so others cost no lookup. */
uint32_t huge_pmd_table(struct sim *s, const struct vm_area_struct *vma, uint64_t addr)
{
	struct hw *hw = hw_of(s);
	const struct pt_geom *g = &hw->geom;
	if (!(vma->vm_flags & VM_HUGEPAGE))
		return NO_FRAME;
	uint32_t t = hw_pmd_table(hw, vma->vm_mm->pgd, addr);
	if (t == NO_FRAME || !pmd_trans_huge_entry(table_of(hw, t)[pt_index(g, g->depth_pmd, addr)]))
		return NO_FRAME;
	return t;
}

/*
 * change_huge_pmd() (mm/huge_memory.c, v5.1) for mprotect and the NUMA
 * scan: change_pmd_range calls it for a huge entry whose whole
 * HPAGE_PMD_SIZE lies in the range. Under the PMD lock, pmdp_invalidate()
 * (which flushes the block's range itself, flush_pmd_tlb_range),
 * pmd_modify() of the new protection (pte_modify's rules: write permission
 * replaced, pfn, young and dirty kept; no dirty_accountable for a huge
 * entry), set_pmd_at(). With prot_numa an entry already PROT_NONE is left
 * alone (returns 0), any other becomes PROT_NONE with its write bit saved
 * (preserve_write, pmd_mk_savedwrite: pte_mkprotnone's rules; v5.1 does not
 * skip a huge page mapped twice, unlike the PTE path); mprotect gives a
 * PROT_NONE entry the new protection as any other. Returns HPAGE_PMD_NR -
 * the `pages` that make change_protection_range flush the whole range at
 * its end - or 0 if nothing changed (split or zapped meanwhile).
 */
uint64_t change_huge_pmd(struct sim *s, struct vm_area_struct *vma, uint32_t pmd_table,
			 uint64_t addr, bool writable, bool prot_numa)
{
	struct hw *hw = hw_of(s);
	const struct pt_geom *g = &hw->geom;
	uint64_t idx = pt_index(g, g->depth_pmd, addr);
	ptl_lock(s, pmd_table);
	sim_step_arg(s, YP_PTE, (uint64_t)P(s, P_lock_op_ns), addr, 0);	/* __pmd_trans_huge_lock */
	pte_t pmd = table_of(hw, pmd_table)[idx];
	if (!pmd_trans_huge_entry(pmd)) {
		ptl_unlock(s);
		return 0;
	}
	if (prot_numa && (pmd & PTE_PROTNONE)) {
		ptl_unlock(s);
		return 0;
	}
	pte_t old = pmdp_invalidate(s, vma, pmd_table, idx, addr);
	if (prot_numa) {
		set_entry(s, pmd_table, idx, pte_mkprotnone(hw->fmt, old));
	} else {
		if (old & PTE_PROTNONE)
			old = (old & ~PTE_PROTNONE) | PTE_VALID;
		set_entry(s, pmd_table, idx, pte_modify_prot(hw->fmt, old, writable, false));
	}
	ptl_unlock(s);
	return g->ptrs_per_pte;			/* HPAGE_PMD_NR */
}

/*
 * copy_huge_pmd() (mm/huge_memory.c, v5.1), from fork's copy_pmd_range for
 * a huge entry (whose whole range the VMA covers): under both PMD locks,
 * the page gains a reference and a mapping (get_page, page_dup_rmap), the
 * parent's entry is write-protected (pmdp_set_wrprotect; no flush here:
 * dup_mmap flushes the parent's mm at the end) and the child gets the
 * write-protected, old entry (pmd_mkold(pmd_wrprotect())). No PTE table is
 * deposited (see the top of this file). Cost: one copied PTE's.
 */
bool copy_huge_pmd(struct sim *s, struct vm_area_struct *dst, struct vm_area_struct *src,
		   uint32_t dst_pmd_table, uint32_t src_pmd_table, uint64_t addr)
{
	struct hw *hw = hw_of(s);
	struct kernel *k = kernel_of(s);
	const struct pt_geom *g = &hw->geom;
	uint64_t idx = pt_index(g, g->depth_pmd, addr);
	(void)dst;
	(void)src;
	sim_step_arg(s, YP_PTE, 2 * (uint64_t)P(s, P_lock_op_ns), addr, 0);	/* both PMD locks */
	pte_t pmd = table_of(hw, src_pmd_table)[idx];
	if (!pmd_trans_huge_entry(pmd))
		return false;
	uint32_t f = pte_pfn(pmd);
	frame_of(hw, f)->refcount++;				/* get_page */
	frame_of(hw, f)->pgflags |= PG_DUPED;			/* page_try_dup_anon_rmap */
	if (k->hooks && k->hooks->page_dup)
		k->hooks->page_dup(k->hooks_ctx, f);
	pmd = pte_wrprotect_fmt(hw->fmt, pmd);
	table_of(hw, src_pmd_table)[idx] = pmd;			/* pmdp_set_wrprotect */
	set_entry(s, dst_pmd_table, idx, pmd & ~PTE_YOUNG);	/* pmd_mkold, set_pmd_at */
	sim_charge(s, (uint64_t)P(s, P_pte_zap_ns));
	return true;
}

/*
 * move_huge_pmd() (mm/huge_memory.c, v5.1), from move_page_tables for an
 * extent of one whole HPAGE_PMD_SIZE at PMD-aligned old and new addresses
 * with a huge old entry and an empty new one: under the old PMD lock and
 * the new one, pmdp_huge_get_and_clear() of the old entry, set_pmd_at() at
 * the new place (move_soft_dirty_pmd: x86 marks it soft-dirty), and - the
 * old entry was present - flush_tlb_range() of the old HPAGE_PMD_SIZE
 * before the locks are dropped. False when it does not apply (the caller
 * splits and moves PTEs).
 */
bool move_huge_pmd(struct sim *s, struct vm_area_struct *vma, uint64_t old_addr,
		   uint64_t new_addr, uint64_t old_end, uint32_t old_pmd_table,
		   uint32_t new_pmd_table)
{
	struct hw *hw = hw_of(s);
	const struct pt_geom *g = &hw->geom;
	uint64_t size = hpage_pmd_size(s);
	if ((old_addr & (size - 1)) || (new_addr & (size - 1)) || old_end - old_addr < size)
		return false;
	uint64_t oi = pt_index(g, g->depth_pmd, old_addr), ni = pt_index(g, g->depth_pmd, new_addr);
	if (!pte_none(table_of(hw, new_pmd_table)[ni]))
		return false;			/* WARN_ON(!pmd_none(*new_pmd)) */
	rmap_ptl_lock(s, old_pmd_table);
	if (new_pmd_table != old_pmd_table)
		rmap_ptl_lock2(s, new_pmd_table);
	sim_step_arg(s, YP_PTE, (uint64_t)P(s, P_lock_op_ns), old_addr, 1);	/* the PMD locks */
	pte_t pmd = table_of(hw, old_pmd_table)[oi];
	bool moved = pmd_trans_huge_entry(pmd);
	if (moved) {
		set_entry(s, old_pmd_table, oi, 0);		/* pmdp_huge_get_and_clear */
		if (hw->fmt->soft_dirty)
			pmd |= PTE_SOFT_DIRTY;			/* move_soft_dirty_pmd */
		set_entry(s, new_pmd_table, ni, pmd);		/* set_pmd_at */
		machine_of(s)->arch->flush_tlb_range(s, &vma->vm_mm->context, old_addr,
						     old_addr + size);
	}
	if (new_pmd_table != old_pmd_table)
		rmap_ptl_unlock2(s);
	rmap_ptl_unlock(s);
	return moved;
}

/*
 * The huge-PMD branch of clear_refs_pte_range() (fs/proc/task_mmu.c, v5.1)
 * under the PMD lock (pmd_trans_huge_lock). Soft-dirty (type 4):
 * clear_soft_dirty_pmd() - pmdp_invalidate() (which flushes the block),
 * then the entry back write-protected and without its soft-dirty bit,
 * dirty and young kept; an empty stub without soft-dirty (arm64). Aging:
 * pmdp_test_and_clear_young() (ClearPageReferenced and page_idle are not
 * modelled, as for the PTEs). 1 if the entry changed.
 */
uint64_t clear_refs_huge_pmd(struct sim *s, struct vm_area_struct *vma, uint32_t pmd_table,
			     uint64_t addr, bool soft_dirty)
{
	struct hw *hw = hw_of(s);
	const struct pt_geom *g = &hw->geom;
	uint64_t idx = pt_index(g, g->depth_pmd, addr);
	uint64_t changed = 0;
	ptl_lock(s, pmd_table);
	sim_step_arg(s, YP_PTE, (uint64_t)P(s, P_lock_op_ns), addr, 0);	/* pmd_trans_huge_lock */
	pte_t pmd = table_of(hw, pmd_table)[idx];
	if (!pmd_trans_huge_entry(pmd)) {
		ptl_unlock(s);
		return 0;
	}
	if (soft_dirty) {
		if (hw->fmt->soft_dirty) {
			pte_t old = pmdp_invalidate(s, vma, pmd_table, idx, addr);
			set_entry(s, pmd_table, idx,
				  pte_wrprotect_fmt(hw->fmt, old) & ~PTE_SOFT_DIRTY);
			changed = 1;
		}
	} else if (pmd & PTE_YOUNG) {
		table_of(hw, pmd_table)[idx] = pmd & ~PTE_YOUNG;	/* pmdp_test_and_clear_young */
		sim_charge(s, (uint64_t)P(s, P_lock_op_ns));
		changed = 1;
	}
	ptl_unlock(s);
	return changed;
}

/*
 * madvise(addr, len, MADV_HUGEPAGE) (mm/madvise.c + hugepage_madvise(),
 * mm/huge_memory.c, v5.1): mmap_sem for write, VM_HUGEPAGE on the VMAs the
 * range touches (the model sets it on each whole VMA, without splitting
 * one). 0, or -1 (unaligned address, or a hole in the range: -ENOMEM).
 */
int sys_madvise_hugepage(struct sim *s, uint64_t addr, uint64_t len)
{
	struct mm_struct *mm = current_task(s)->mm;
	uint64_t ps = hw_of(s)->geom.page_size;
	int ret = 0;
	sim_set_mode(s, MODE_SYS);
	sim_step_arg(s, YP_SYSCALL, syscall_cost(s), SYS_MADVISE_HUGEPAGE, addr);
	kernel_entry(s);
	if (addr & (ps - 1)) {
		ret = -1;
		goto out;
	}
	uint64_t end = addr + ((len + ps - 1) & ~(ps - 1));
	down_write(s, &mm->mmap_sem);
	for (uint64_t a = addr; a < end;) {
		struct vm_area_struct *v = find_vma(mm, a);
		if (!v || v->vm_start >= end) {
			ret = -1;
			break;
		}
		if (v->vm_start > a)
			ret = -1;
		v->vm_flags |= VM_HUGEPAGE;
		a = v->vm_end;
	}
	up_write(s, &mm->mmap_sem);
out:
	sim_set_mode(s, MODE_USER);
	return ret;
}

/*
 * split_huge_pmd(vma, pmd, address) as a statement (the kernel splits on
 * mprotect, partial munmap, MADV_DONTNEED of part of the range, ...):
 * under mmap_sem for read, split the huge entry mapping addr in the current
 * task's mm. 1 if one was split, 0 if none maps addr, -1 without a VMA.
 */
int sys_split_huge_pmd(struct sim *s, uint64_t addr)
{
	struct mm_struct *mm = current_task(s)->mm;
	int ret = 0;
	sim_set_mode(s, MODE_SYS);
	sim_step_arg(s, YP_SYSCALL, syscall_cost(s), SYS_SPLIT_HUGE_PMD, addr);
	kernel_entry(s);
	down_read(s, &mm->mmap_sem);
	struct vm_area_struct *v = find_vma(mm, addr);
	if (!v || v->vm_start > addr) {
		ret = -1;
	} else {
		uint32_t pmd_table = hw_pmd_table(hw_of(s), mm->pgd, addr);
		if (pmd_table != NO_FRAME)
			ret = __split_huge_pmd(s, v, pmd_table, addr) ? 1 : 0;
	}
	up_read(s, &mm->mmap_sem);
	sim_set_mode(s, MODE_USER);
	return ret;
}

/*
 * split_huge_page(page) (split_huge_page_to_list, mm/huge_memory.c, v5.1)
 * of the anonymous THP that the huge PMD entry at address maps, for the
 * callers that need base pages: shrink_page_list (no swap: add_to_swap
 * fails on the THP, which is then split), KSM's try_to_merge_one_page and
 * the collect of a migration (migrate_vma_collect_pmd). With a reference
 * and the page lock (get_page, trylock_page: a locked page is not split),
 * can_split_huge_page: no reference but the mapping's and the caller's (a
 * pin makes it -EBUSY). unmap_page freezes the mapping (try_to_unmap with
 * TTU_SPLIT_FREEZE: split_huge_pmd_address -> __split_huge_pmd_locked with
 * freeze: under the PMD lock, pmdp_invalidate - the block entry is flushed
 * from every TLB first - and a PTE table of migration entries, the PMD's
 * dirty bit to the page), __split_huge_page makes each tail page a page of
 * its own, and remap_page (remove_migration_ptes) maps each subpage by a
 * PTE: old, clean, writable if the PMD was (maybe_mkwrite), soft-dirty if
 * it was; a PROT_NONE huge entry (the NUMA scan's) is split the same way,
 * its subpages mapped present again (remove_migration_pte's vm_page_prot).
 * Model: the THP is one frame (huge_memory.c's header); the split
 * gives subpages 1..511 frames of their own (the head's frame stays
 * subpage 0's), each with its mapping's reference and the head's flags.
 * The freeze's migration entries and the remap are done in the one PMD-lock
 * hold (no walker can see the entries, so they are not written). Returns 1
 * when the THP was split, 0 when no huge entry maps address, -1 when it
 * could not be split (a reference held, the page locked).
 */
int split_huge_page_at(struct sim *s, struct vm_area_struct *vma, uint64_t address)
{
	struct hw *hw = hw_of(s);
	const struct pt_geom *g = &hw->geom;
	struct kernel *k = kernel_of(s);
	uint64_t haddr = address & ~(hpage_pmd_size(s) - 1);
	uint64_t idx = pt_index(g, g->depth_pmd, haddr);
	uint32_t pmd_table = hw_pmd_table(hw, vma->vm_mm->pgd, haddr);
	if (pmd_table == NO_FRAME)
		return 0;
	pte_t pmd = table_of(hw, pmd_table)[idx];
	if (!pmd_trans_huge_entry(pmd))
		return 0;
	uint32_t f = pte_pfn(pmd);
	struct frame *fr = frame_of(hw, f);
	/* get_page, trylock_page, can_split_huge_page */
	if (fr->state != FRAME_DATA || (fr->pgflags & PG_LOCKED) || fr->refcount != 1)
		return -1;
	fr->refcount++;
	fr->pgflags |= PG_LOCKED;
	int ret = -1;
	uint32_t pt = alloc_zeroed_frame(s, FRAME_PGTABLE, g->depth_pmd + 1, 0);
	if (pt == NO_FRAME)
		goto out;
	ptl_lock(s, pmd_table);
	sim_step_arg(s, YP_PTE, (uint64_t)P(s, P_lock_op_ns), haddr, 0);
	pmd = table_of(hw, pmd_table)[idx];
	if (!pmd_trans_huge_entry(pmd) || pte_pfn(pmd) != f || fr->refcount != 2) {
		ptl_unlock(s);
		frame_free(hw, pt);
		goto out;
	}
	pte_t old = pmdp_invalidate(s, vma, pmd_table, idx, haddr);
	if (!fmt_pte_clean(hw->fmt, old))
		fr->pgflags |= PG_DIRTY;		/* SetPageDirty */
	pte_t bits = PTE_VALID | PTE_USER | (old & (PTE_WRITE | PTE_SOFT_DIRTY));
	for (uint64_t i = 0; i < g->ptrs_per_pte; i++) {
		uint32_t sub = f;
		if (i) {
			sub = alloc_frame(s, FRAME_DATA, 0);	/* the tail page */
			if (sub == NO_FRAME)
				break;
			frame_of(hw, sub)->pgflags = fr->pgflags & (PG_ANON | PG_DIRTY | PG_LAZYFREE);
		}
		set_entry(s, pt, i, fmt_pte_mkclean(hw->fmt, pfn_pte(sub, bits)));
		if (k->hooks && k->hooks->page_mapped)
			k->hooks->page_mapped(k->hooks_ctx, sub, false);
	}
	set_entry(s, pmd_table, idx, pfn_pte(pt, PTE_VALID | PTE_TABLE | PTE_USER));	/* pmd_populate */
	ptl_unlock(s);
	ret = 1;
out:
	unlock_page(s, f);
	if (--fr->refcount == 0)	/* put_page */
		frame_free(hw, f);
	return ret;
}
