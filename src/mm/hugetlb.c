/*
 * hugetlb.c - hugetlb PMD sharing: huge_pmd_share() / huge_pmd_unshare()
 * (mm/hugetlb.c, arch/x86/mm/hugetlbpage.c before v4.19; mm/hugetlb.c, v5.1)
 * and the unmap that unshares (__unmap_hugepage_range).
 *
 * Two MAP_SHARED mappings of the same hugetlbfs file at the same
 * PUD-aligned offset share one PMD table: the second mm's fault finds the
 * first's table through the file's i_mmap (i_mmap_rwsem for read) and
 * points its PUD entry at it. The model has no block (huge) descriptors:
 * each entry of the shared PMD table points to a PTE table that stands for
 * the 2 MiB block, shared with it; the flush and free ordering is that of
 * the PMD table. The share count is the PMD table frame's refcount: 1 +
 * the sharers, page_count() as v5.1 reads it (pt_share_count from
 * 59d9094df3d7, v6.13); PG_PT_SHARED marks a table that was reachable
 * from more than one mm, so the oracle looks for it in every mm's caches.
 *
 * An unmap takes i_mmap_rwsem for write around __unmap_hugepage_range.
 * huge_pmd_unshare() clears this mm's PUD entry and drops a share; the other
 * mm may then free the table as soon as i_mmap_rwsem is released. Knob
 * hugetlb_unshare_flush: before a4a118f2eead ("hugetlbfs: flush TLBs
 * correctly after huge_pmd_unshare", v5.16) the unsharing mm flushed at
 * tlb_finish_mmu, after the unlock; since then __unmap_hugepage_range
 * flushes the PUD range (tlb_flush_mmu_tlbonly) before returning to the
 * unlock.
 *
 * mprotect of a hugetlb VMA unshares too (hugetlb_change_protection in
 * mprotect.c). Not modelled: hugetlb faults' own locking
 * (hugetlb_fault_mutex, the hugetlb vma lock of 40549ba8f8e0),
 * reservations, huge page allocation (the file's pages are base pages),
 * sharing through fork's copy_hugetlb_page_range (sys_fork copies the PTEs
 * into tables of its own), mremap of a hugetlb VMA (the normal path runs),
 * and GUP-fast (tlb_remove_table_sync_one after an unshare, 1013af4f585f).
 */
#include "mm/mm.h"
#include "mm/points.h"

/* vma_shareable() (mm/hugetlb.c, v5.1): a shared mapping covering the whole
 * PUD-aligned range around addr */
static bool vma_shareable(struct sim *s, const struct vm_area_struct *vma, uint64_t addr)
{
	const struct pt_geom *g = &hw_of(s)->geom;
	if (g->depth_pud < 0)
		return false;
	uint64_t pud_size = 1ull << g->pud_shift;
	uint64_t base = addr & ~(pud_size - 1), end = base + pud_size;
	return (vma->vm_flags & (VM_HUGETLB | VM_SHARED)) == (VM_HUGETLB | VM_SHARED) &&
	       vma->file && vma->vm_start <= base && end <= vma->vm_end;
}

/* the PMD table mm's PUD entry for addr points to, or NO_FRAME */
static uint32_t pud_target(struct sim *s, struct mm_struct *mm, uint64_t addr)
{
	struct hw *hw = hw_of(s);
	const struct pt_geom *g = &hw->geom;
	uint32_t table = mm->pgd;
	for (int d = 0; d <= g->depth_pud; d++) {
		pte_t e = table_of(hw, table)[pt_index(g, d, addr)];
		if (!pte_present(e))
			return NO_FRAME;
		table = pte_pfn(e);
	}
	return table;
}

/* mark a PMD table and the PTE tables under it as shared */
static void mark_shared(struct sim *s, uint32_t pmd_table)
{
	struct hw *hw = hw_of(s);
	const struct pt_geom *g = &hw->geom;
	struct frame *fr = frame_of(hw, pmd_table);
	fr->pgflags |= PG_PT_SHARED;
	for (uint64_t i = table_next_used(g, fr->table, 0, g->ptrs_per_pte); i < g->ptrs_per_pte;
	     i = table_next_used(g, fr->table, i + 1, g->ptrs_per_pte))
		frame_of(hw, pte_pfn(fr->table[i]))->pgflags |= PG_PT_SHARED;
}

/*
 * huge_pmd_share(mm, addr, pud) (mm/hugetlb.c, v5.1): called by the fault
 * path when the PUD entry of a shareable hugetlb VMA is none. Under
 * i_mmap_rwsem (read) look for another VMA of the file that maps the same
 * file offset at a PUD-aligned address of the same alignment and already
 * has a PMD table there; take a share of it and install it in this mm's
 * PUD entry (under the page-table lock, unless the entry was filled
 * meanwhile). Returns the PMD table now in the entry, or NO_FRAME when
 * there is nothing to share (the caller allocates one).
 */
uint32_t huge_pmd_share(struct sim *s, struct vm_area_struct *vma, uint64_t addr,
			uint32_t pud_table)
{
	struct hw *hw = hw_of(s);
	const struct pt_geom *g = &hw->geom;
	if (!vma_shareable(s, vma, addr))
		return NO_FRAME;
	struct inode *ino = vma->file;
	uint64_t pgoff = vma->vm_pgoff + ((addr - vma->vm_start) >> g->page_shift);
	uint64_t pud_mask = (1ull << g->pud_shift) - 1;
	uint32_t spte = NO_FRAME;
	down_read(s, &ino->i_mmap_rwsem);
	for (int i = 0; i < ino->nr_mmap && spte == NO_FRAME; i++) {
		struct vm_area_struct *svma = ino->mmap[i];
		if (svma == vma || svma->vm_pgoff > pgoff)
			continue;
		/* page_table_shareable(): same offset, same PUD alignment */
		uint64_t saddr = svma->vm_start + ((pgoff - svma->vm_pgoff) << g->page_shift);
		if (saddr >= svma->vm_end || (saddr & pud_mask) != (addr & pud_mask) ||
		    !vma_shareable(s, svma, saddr))
			continue;
		spte = pud_target(s, svma->vm_mm, saddr);
	}
	uint32_t got = NO_FRAME;
	if (spte != NO_FRAME) {
		sim_step_arg(s, YP_HUGETLB, (uint64_t)P(s, P_lock_op_ns), spte,
			     frame_of(hw, spte)->refcount + 1u);
		uint64_t idx = pt_index(g, g->depth_pud, addr);
		pte_t e = table_of(hw, pud_table)[idx];
		if (pte_none(e) && frame_of(hw, spte)->state == FRAME_PGTABLE) {
			frame_of(hw, spte)->refcount++;		/* get_page / pt_share_count */
			mark_shared(s, spte);
			set_entry(s, pud_table, idx, pfn_pte(spte, PTE_VALID | PTE_TABLE | PTE_USER));
			got = spte;
		} else if (pte_present(e)) {
			got = pte_pfn(e);
		}
	}
	up_read(s, &ino->i_mmap_rwsem);
	return got;
}

/* huge_pmd_unshare(mm, vma, &addr, ptep) (mm/hugetlb.c, v5.1): if the PMD
 * table under pud_table's entry idx is shared, clear the entry and drop the
 * share: true (the caller skips the range and must flush the PUD range). */
bool huge_pmd_unshare(struct sim *s, uint32_t pud_table, uint64_t idx)
{
	struct hw *hw = hw_of(s);
	pte_t e = table_of(hw, pud_table)[idx];
	if (!pte_present(e))
		return false;
	struct frame *pmd = frame_of(hw, pte_pfn(e));
	if (pmd->refcount <= 1)
		return false;
	sim_step_arg(s, YP_HUGETLB, (uint64_t)P(s, P_lock_op_ns), pte_pfn(e),
		     1ull << 32 | (pmd->refcount - 1u));
	set_entry(s, pud_table, idx, 0);			/* pud_clear */
	pmd->refcount--;					/* put_page */
	return true;
}

/*
 * __unmap_hugepage_range_final's caller in unmap_single_vma() (mm/memory.c,
 * v5.1): i_mmap_lock_write, the unmap (unsharing where shared), the
 * hugetlb_unshare_flush knob's flush, i_mmap_unlock_write.
 */
void unmap_hugepage_range_locked(struct sim *s, struct mmu_gather *tlb,
				 struct vm_area_struct *vma, uint64_t start, uint64_t end)
{
	struct inode *ino = vma->file;
	bool force_flush = false;
	down_write(s, &ino->i_mmap_rwsem);
	unmap_page_range_hugetlb(s, tlb, vma, start, end, &force_flush);
	/* a4a118f2eead: a shared PMD table we dropped may be freed by its last
	 * user once i_mmap_rwsem is released: flush first */
	if (force_flush &&
	    machine_of(s)->policy.hugetlb_unshare_flush == HUGETLB_UNSHARE_FLUSH_BEFORE_UNLOCK)
		tlb_flush_mmu_tlbonly(s, tlb);
	up_write(s, &ino->i_mmap_rwsem);
}
