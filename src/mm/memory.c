/*
 * memory.c - page-table population, zapping and freeing.
 *
 * Mirrors mm/memory.c (v5.1): __pte_alloc and friends, zap_page_range /
 * unmap_vmas / unmap_single_vma / unmap_page_range with zap_p4d_range ->
 * zap_pud_range -> zap_pmd_range -> zap_pte_range, and free_pgtables ->
 * free_pgd_range -> free_p4d_range -> free_pud_range -> free_pmd_range ->
 * free_pte_range with the floor/ceiling rule. Folded levels are skipped the
 * way the kernel's pXd_offset() of a folded level returns its parent: with 3
 * levels (64K pages) the PGD entries point straight at PMD tables, with 4
 * levels P4D is folded into the PGD. The fault path is in fault.c.
 *
 * Nothing here keeps a pointer into storage that can move across a yield:
 * frame descriptors and table buffers never move while the frame is a table.
 */
#include <stdio.h>
#include <stdlib.h>

#include "mm/mm.h"
#include "mm/points.h"

static inline uint64_t span(const struct pt_geom *g, int depth)
{
	return 1ull << g->shift[depth];
}

/* pXd_addr_end(): next boundary of the entry span at depth, capped at end */
static inline uint64_t addr_end(const struct pt_geom *g, int depth, uint64_t addr, uint64_t end)
{
	uint64_t b = (addr + span(g, depth)) & ~(span(g, depth) - 1);
	return (b - 1 < end - 1) ? b : end;
}

/* ---- zapping ---- */

static void zap_pte_range_locked(struct sim *s, struct mmu_gather *tlb,
				 struct vm_area_struct *vma, uint32_t pte_table, uint64_t addr,
				 uint64_t end);

/* zap_pte_range() under the PTE table's lock: flush_tlb_batched_pending(mm)
 * first (3ea277194daa, v4.13; knob ubc_check_zap), so that a PTE reclaim
 * cleared without a flush is not left cached when munmap/MADV_DONTNEED
 * returns */
static void zap_pte_range(struct sim *s, struct mmu_gather *tlb, struct vm_area_struct *vma,
			  uint32_t pte_table, uint64_t addr, uint64_t end)
{
	ptl_lock(s, pte_table);
	if (machine_of(s)->policy.ubc_check_zap)
		flush_tlb_batched_pending(s, vma->vm_mm);
	zap_pte_range_locked(s, tlb, vma, pte_table, addr, end);
	ptl_unlock(s);
}

/*
 * zap_pte_range() (mm/memory.c, v5.1): clear present PTEs of [addr,end) in
 * one PTE table, record them in the gather and queue their pages. A dirty PTE
 * of a file page (not PageAnon) dirties the page (set_page_dirty) and forces
 * a flush before the PTE lock is dropped (tlb_flush_mmu_tlbonly), so no CPU
 * can go on writing through a stale entry once the page may be written back;
 * the batch is then freed and the walk restarts where it stopped. A full page
 * batch forces the same. The rmap of such a page goes with its PTE (v3.15
 * .. v6.0: page_mkclean then finds it unmapped and neither waits for this
 * PTE lock nor flushes) or after the flush (knob zap_rmap=delayed,
 * 5df397dec7c4 "mm: delay page_remove_rmap() until after the TLB has been
 * flushed", v6.1).
 */
static void zap_pte_range_locked(struct sim *s, struct mmu_gather *tlb,
				 struct vm_area_struct *vma, uint32_t pte_table, uint64_t addr,
				 uint64_t end)
{
	struct hw *hw = hw_of(s);
	const struct pt_geom *g = &hw->geom;
	int d = g->levels - 1;
	uint64_t n = (end - addr) >> g->page_shift;
	uint64_t idx_end = pt_index(g, d, addr) + n;
	sim_charge(s, n * (uint64_t)P(s, P_pte_scan_ns));	/* each PTE is read once */
	struct frame *fr = frame_of(hw, pte_table);	/* stable storage */
again:;
	if (fr->nr_used == 0)
		return;
	bool force_flush = false;
	bool delay_rmap = machine_of(s)->policy.zap_rmap == ZAP_RMAP_DELAYED;
	uint32_t rss = 0;		/* pages taken off the mm's counters */
	for (; addr < end && fr->nr_used; addr += g->page_size) {
		/* skip none slots by the occupancy bitmap */
		uint64_t cur = pt_index(g, d, addr);
		uint64_t next = table_next_used(g, fr->table, cur, idx_end);
		if (next >= idx_end) {
			addr = end;
			break;
		}
		addr += (next - cur) << g->page_shift;
		uint64_t idx = next;
		pte_t pte = fr->table[idx];
		if (pte_none(pte))
			continue;
		sim_step_arg(s, YP_ZAP_PTE, (uint64_t)P(s, P_pte_zap_ns), addr, 0);
		pte = fr->table[idx];		/* ptep_get_and_clear_full under PTL */
		if (pte_none(pte))
			continue;
		if (is_migration_pte(pte)) {
			/* a migration entry (migrate.c, migrate_device.c):
			 * cleared, with nothing cached to flush and no page
			 * reference to drop (the migration holds the page) */
			set_entry(s, pte_table, idx, 0);
			rss++;
			continue;
		}
		set_entry(s, pte_table, idx, 0);
		if (vma->vm_flags & (VM_PFNMAP | VM_MIXEDMAP)) {
			/* vm_normal_page() is NULL for a PFN mapping: the
			 * driver owns the frame (pfnmap.c) */
			tlb_remove_tlb_entry(tlb, addr, g->page_size);
			continue;
		}
		tlb_remove_tlb_entry(tlb, addr, g->page_size);
		uint32_t page = pte_pfn(pte);
		if (is_zero_frame(s, page))
			continue;	/* vm_normal_page() is NULL: nothing to free */
		rss++;
		if (vma->file && !(frame_of(hw, page)->pgflags & PG_ANON) &&
		    !fmt_pte_clean(hw->fmt, pte)) {
			force_flush = true;
			set_page_dirty(s, vma->file, page);
			/* zap_rmap=delayed (5df397dec7c4, v6.1): the page stays
			 * mapped for rmap walkers until tlb_flush_rmaps() after
			 * the flush; early (v3.15..v6.0): page_remove_rmap()
			 * now, with the PTE (page_mapped() sees no mapping) */
			if (delay_rmap)
				frame_of(hw, page)->pgflags |= PG_DELAY_RMAP;
		}
		if (__tlb_remove_page(s, tlb, page)) {
			force_flush = true;
			addr += g->page_size;
			break;
		}
	}
	/* add_mm_rss_vec(): one atomic on the mm's rss_stat line (the
	 * counters share it) per pass that zapped pages */
	if (rss)
		sim_charge(s, (uint64_t)P(s, P_lock_op_ns) + line_rmw(s, &vma->vm_mm->rss_line));
	if (force_flush) {
		/* flush under the PTL (tlb_flush_mmu_tlbonly), and with
		 * delayed rmaps remove them now (tlb_flush_rmaps) */
		tlb_flush_mmu_tlbonly(s, tlb);
		if (delay_rmap)
			tlb_flush_rmaps(s, tlb);
	}
	if (force_flush) {
		/* then free the batch (tlb_flush_mmu_free) and go on (the
		 * kernel drops and retakes the PTE lock around this; the
		 * model's zap_pte_range holds it throughout) */
		tlb_flush_mmu_free(s, tlb);
		if (addr < end)
			goto again;
	}
}

/* zap_pmd_range() (v5.1): the PMD table at `depth` maps PTE tables */
static void zap_pmd_range(struct sim *s, struct mmu_gather *tlb, struct vm_area_struct *vma,
			  uint32_t pmd_table, int depth, uint64_t addr, uint64_t end)
{
	struct hw *hw = hw_of(s);
	const struct pt_geom *g = &hw->geom;
	struct frame *fr = frame_of(hw, pmd_table);
	uint64_t next;
	for (; addr != end; addr = next) {
		next = addr_end(g, depth, addr, end);
		if (fr->nr_used == 0)
			return;
		pte_t pmd = fr->table[pt_index(g, depth, addr)];
		if (pmd_trans_huge_entry(pmd)) {
			/* is_swap_pmd / pmd_trans_huge (huge_memory.c; a
			 * PROT_NONE huge entry too): a whole huge entry is
			 * zapped, a partly unmapped one split first */
			if (next - addr == hpage_pmd_size(s)) {
				zap_huge_pmd(s, tlb, vma, pmd_table, addr);
				continue;
			}
			__split_huge_pmd(s, vma, pmd_table, addr);
			pmd = fr->table[pt_index(g, depth, addr)];
		}
		if (!pte_present(pmd) || pmd_trans_huge_entry(pmd))
			continue;		/* pmd_none_or_trans_huge_or_clear_bad */
		zap_pte_range(s, tlb, vma, pte_pfn(pmd), addr, next);
	}
}

/* zap_pud_range() (v5.1): the PUD table at `depth` maps PMD tables. In a
 * hugetlb VMA (unshare != NULL), __unmap_hugepage_range's
 * huge_pmd_unshare() first: a shared PMD table is dropped, not zapped.
 * From a4a118f2eead (v5.16, hugetlb_unshare_flush=before_unlock) the
 * gather's range is widened to the PUD (tlb_flush_pmd_range); before it the
 * unshare recorded nothing in the gather ("the TLB flush was not recorded
 * in mmu_gather", its message) and no flush of this munmap covered it */
static void zap_pud_range(struct sim *s, struct mmu_gather *tlb, struct vm_area_struct *vma,
			  uint32_t pud_table, int depth, uint64_t addr, uint64_t end,
			  bool *unshared)
{
	struct hw *hw = hw_of(s);
	const struct pt_geom *g = &hw->geom;
	struct frame *fr = frame_of(hw, pud_table);
	uint64_t next;
	for (; addr != end; addr = next) {
		next = addr_end(g, depth, addr, end);
		if (fr->nr_used == 0)
			return;
		uint64_t idx = pt_index(g, depth, addr);
		pte_t pud = fr->table[idx];
		if (!pte_present(pud))
			continue;
		if (unshared && huge_pmd_unshare(s, pud_table, idx)) {
			if (machine_of(s)->policy.hugetlb_unshare_flush ==
			    HUGETLB_UNSHARE_FLUSH_BEFORE_UNLOCK) {
				uint64_t pud_size = 1ull << g->pud_shift;
				__tlb_adjust_range(tlb, addr & ~(pud_size - 1), pud_size);
				tlb->cleared_pmds = 1;
			}
			*unshared = true;
			continue;
		}
		zap_pmd_range(s, tlb, vma, pte_pfn(pud), depth + 1, addr, next);
	}
}

/* zap_p4d_range() (v5.1) with P4D folded into the PGD: the PGD entries map
 * PUD tables (4 levels) or, with the PUD folded too, PMD tables (3 levels) */
static void zap_p4d_range(struct sim *s, struct mmu_gather *tlb, struct vm_area_struct *vma,
			  uint32_t pgd, uint64_t addr, uint64_t end, bool *unshared)
{
	struct hw *hw = hw_of(s);
	const struct pt_geom *g = &hw->geom;
	struct frame *fr = frame_of(hw, pgd);
	uint64_t next;
	for (; addr != end; addr = next) {
		next = addr_end(g, 0, addr, end);
		if (fr->nr_used == 0)
			return;
		pte_t p4d = fr->table[pt_index(g, 0, addr)];
		if (!pte_present(p4d))
			continue;
		if (g->depth_pud >= 0)
			zap_pud_range(s, tlb, vma, pte_pfn(p4d), 1, addr, next, unshared);
		else
			zap_pmd_range(s, tlb, vma, pte_pfn(p4d), 1, addr, next);
	}
}

/* unmap_page_range() (v5.1) */
static void unmap_page_range(struct sim *s, struct mmu_gather *tlb, struct vm_area_struct *vma,
			     uint64_t addr, uint64_t end)
{
	tlb_start_vma(s, tlb, vma);
	zap_p4d_range(s, tlb, vma, tlb->mm->pgd, addr, end, NULL);
	tlb_end_vma(s, tlb, vma);
}

/* unmap_page_range() of a hugetlb VMA: __unmap_hugepage_range (mm/hugetlb.c,
 * v5.1) with huge_pmd_unshare; base-page PTEs stand for the huge ones */
void unmap_page_range_hugetlb(struct sim *s, struct mmu_gather *tlb, struct vm_area_struct *vma,
			      uint64_t addr, uint64_t end, bool *force_flush)
{
	tlb_start_vma(s, tlb, vma);
	zap_p4d_range(s, tlb, vma, tlb->mm->pgd, addr, end, force_flush);
	tlb_end_vma(s, tlb, vma);
}

/* unmap_single_vma() (v5.1) */
void unmap_single_vma(struct sim *s, struct mmu_gather *tlb, struct vm_area_struct *vma,
		      uint64_t start_addr, uint64_t end_addr)
{
	uint64_t start = start_addr > vma->vm_start ? start_addr : vma->vm_start;
	uint64_t end = end_addr < vma->vm_end ? end_addr : vma->vm_end;
	if (start >= end)
		return;
	if ((vma->vm_flags & VM_HUGETLB) && vma->file) {
		unmap_hugepage_range_locked(s, tlb, vma, start, end);
		return;
	}
	unmap_page_range(s, tlb, vma, start, end);
}

/* unmap_vmas() */
void unmap_vmas(struct sim *s, struct mmu_gather *tlb, struct vm_area_struct **vmas, int n,
		uint64_t start, uint64_t end)
{
	for (int i = 0; i < n && vmas[i]->vm_start < end; i++)
		unmap_single_vma(s, tlb, vmas[i], start, end);
}

/* zap_page_range(vma, start, size) (mm/memory.c, v5.1) */
void zap_page_range(struct sim *s, struct vm_area_struct *vma, uint64_t start, uint64_t size)
{
	struct mmu_gather tlb;
	uint64_t end = start + size;
	tlb_gather_mmu(s, &tlb, current_task(s)->mm, start, end);
	unmap_single_vma(s, &tlb, vma, start, end);
	tlb_finish_mmu(s, &tlb, start, end);
}

/* ---- freeing page tables ---- */

/* Unlink-side of pte_free_tlb() / pmd_free_tlb() / pud_free_tlb(), chosen by
 * the freed table's level: one scheduler-visible step per freed table */
static void free_table_at(struct sim *s, struct mmu_gather *tlb, int table_depth, uint32_t table,
			  uint64_t addr)
{
	const struct pt_geom *g = &hw_of(s)->geom;
	struct kernel *k = kernel_of(s);
	sim_step_arg(s, YP_FREE_TABLE, (uint64_t)P(s, P_page_free_ns), addr, (uint64_t)table_depth);
	if (k->hooks && k->hooks->table_unlinked)
		k->hooks->table_unlinked(k->hooks_ctx, table);
	if (table_depth == g->levels - 1)
		pte_free_tlb(s, tlb, table, addr);
	else if (table_depth == g->depth_pmd)
		pmd_free_tlb(s, tlb, table, addr);
	else
		pud_free_tlb(s, tlb, table, addr);
}

/* The tail of free_pmd_range() / free_pud_range(): free `table` (at depth,
 * referenced by entry pidx of `parent`) itself if its whole span, rounded to
 * the parent entry's span, lies inside [floor, ceiling) (ceiling 0 = no upper
 * limit) and it is empty. */
static void free_table_if_unused(struct sim *s, struct mmu_gather *tlb, uint32_t parent,
				 uint64_t pidx, uint32_t table, int depth, uint64_t start,
				 uint64_t end, uint64_t floor, uint64_t ceiling)
{
	struct hw *hw = hw_of(s);
	const struct pt_geom *g = &hw->geom;
	uint64_t mask = ~(span(g, depth - 1) - 1);	/* PUD_MASK / PGDIR_MASK */
	start &= mask;
	if (start < floor)
		return;
	if (ceiling) {
		ceiling &= mask;
		if (!ceiling)
			return;
	}
	if (end - 1 > ceiling - 1)
		return;
	if (frame_of(hw, table)->nr_used != 0)
		return;
	set_entry(s, parent, pidx, 0);
	free_table_at(s, tlb, depth, table, start);
}

/* free_pte_range() (v5.1): pmd_clear + pte_free_tlb of one PTE table */
static void free_pte_range(struct sim *s, struct mmu_gather *tlb, uint32_t pmd_table,
			   uint64_t idx, uint32_t pte_table, uint64_t addr)
{
	const struct pt_geom *g = &hw_of(s)->geom;
	SIM_BUG_ON(s, frame_of(hw_of(s), pte_table)->nr_used != 0);
	set_entry(s, pmd_table, idx, 0);
	free_table_at(s, tlb, g->levels - 1, pte_table, addr);
}

/* free_pmd_range() (v5.1): the PTE tables under the PMD table at `depth`,
 * then the PMD table itself */
static void free_pmd_range(struct sim *s, struct mmu_gather *tlb, uint32_t parent,
			   uint64_t pidx, uint32_t pmd_table, int depth, uint64_t addr,
			   uint64_t end, uint64_t floor, uint64_t ceiling)
{
	const struct pt_geom *g = &hw_of(s)->geom;
	uint64_t start = addr, next;
	for (; addr != end; addr = next) {
		next = addr_end(g, depth, addr, end);
		uint64_t idx = pt_index(g, depth, addr);
		pte_t pmd = table_of(hw_of(s), pmd_table)[idx];
		/* the zap removed every huge entry of the range: a huge
		 * entry's pfn is a data page, never a table to free */
		SIM_BUG_ON(s, pmd_trans_huge_entry(pmd));
		if (!pte_present(pmd) || pmd_trans_huge_entry(pmd))
			continue;	/* pmd_none_or_clear_bad */
		free_pte_range(s, tlb, pmd_table, idx, pte_pfn(pmd), addr);
	}
	free_table_if_unused(s, tlb, parent, pidx, pmd_table, depth, start, end, floor, ceiling);
}

/* free_pud_range() (v5.1): the PMD tables under the PUD table at `depth`,
 * then the PUD table itself */
static void free_pud_range(struct sim *s, struct mmu_gather *tlb, uint32_t parent,
			   uint64_t pidx, uint32_t pud_table, int depth, uint64_t addr,
			   uint64_t end, uint64_t floor, uint64_t ceiling)
{
	const struct pt_geom *g = &hw_of(s)->geom;
	uint64_t start = addr, next;
	for (; addr != end; addr = next) {
		next = addr_end(g, depth, addr, end);
		uint64_t idx = pt_index(g, depth, addr);
		pte_t pud = table_of(hw_of(s), pud_table)[idx];
		if (!pte_present(pud))
			continue;
		free_pmd_range(s, tlb, pud_table, idx, pte_pfn(pud), depth + 1, addr, next, floor,
			       ceiling);
	}
	free_table_if_unused(s, tlb, parent, pidx, pud_table, depth, start, end, floor, ceiling);
}

/* free_p4d_range() (v5.1), P4D folded: walk the PGD entries; the root table
 * itself is never freed here */
static void free_p4d_range(struct sim *s, struct mmu_gather *tlb, uint32_t pgd, uint64_t addr,
			   uint64_t end, uint64_t floor, uint64_t ceiling)
{
	const struct pt_geom *g = &hw_of(s)->geom;
	uint64_t next;
	for (; addr != end; addr = next) {
		next = addr_end(g, 0, addr, end);
		uint64_t idx = pt_index(g, 0, addr);
		pte_t p4d = table_of(hw_of(s), pgd)[idx];
		if (!pte_present(p4d))
			continue;
		if (g->depth_pud >= 0)
			free_pud_range(s, tlb, pgd, idx, pte_pfn(p4d), 1, addr, next, floor, ceiling);
		else
			free_pmd_range(s, tlb, pgd, idx, pte_pfn(p4d), 1, addr, next, floor, ceiling);
	}
}

/* free_pgd_range() (mm/memory.c, v5.1) */
void free_pgd_range(struct sim *s, struct mmu_gather *tlb, uint64_t addr, uint64_t end,
		    uint64_t floor, uint64_t ceiling)
{
	const struct pt_geom *g = &hw_of(s)->geom;
	uint64_t pmd_size = 1ull << g->pmd_shift, pmd_mask = ~(pmd_size - 1);

	addr &= pmd_mask;
	if (addr < floor) {
		addr += pmd_size;
		if (!addr)
			return;
	}
	if (ceiling) {
		ceiling &= pmd_mask;
		if (!ceiling)
			return;
	}
	if (end - 1 > ceiling - 1)
		end -= pmd_size;
	if (addr > end - 1)
		return;
	free_p4d_range(s, tlb, tlb->mm->pgd, addr, end, floor, ceiling);
}

/* unlink_file_vma() (mm/mmap.c, v5.1): take vma off its file's i_mmap under
 * i_mmap_rwsem (write), so rmap walks no longer find it */
static void unlink_file_vma(struct sim *s, struct vm_area_struct *vma)
{
	struct inode *ino = vma->file;
	if (!ino)
		return;
	down_write(s, &ino->i_mmap_rwsem);
	i_mmap_remove(ino, vma);
	up_write(s, &ino->i_mmap_rwsem);
}

/* free_pgtables(tlb, vma, floor, ceiling) (mm/memory.c, v5.1) over the
 * detached VMAs of an unmap: each VMA leaves its file's i_mmap
 * (unlink_file_vma); runs of VMAs closer than PMD_SIZE share one
 * free_pgd_range; floor is the previous VMA's end, ceiling the next VMA's
 * start (0: none) */
void free_pgtables(struct sim *s, struct mmu_gather *tlb, struct vm_area_struct **vmas, int n,
		   uint64_t floor, uint64_t ceiling)
{
	uint64_t pmd_size = 1ull << hw_of(s)->geom.pmd_shift;
	for (int i = 0; i < n;) {
		uint64_t addr = vmas[i]->vm_start;
		int j = i;
		unlink_file_vma(s, vmas[i]);
		while (j + 1 < n && vmas[j + 1]->vm_start <= vmas[j]->vm_end + pmd_size) {
			j++;
			unlink_file_vma(s, vmas[j]);
		}
		free_pgd_range(s, tlb, addr, vmas[j]->vm_end, floor,
			       j + 1 < n ? vmas[j + 1]->vm_start : ceiling);
		i = j + 1;
	}
}

/* pgd_offset() .. pte_offset_map() without allocation (mm/pagewalk-style) */
pte_t *pte_lookup(struct sim *s, struct mm_struct *mm, uint64_t addr)
{
	return hw_pte_lookup(hw_of(s), mm->pgd, addr);
}

/* ---- fork: copying the page tables ---- */

/*
 * ptep_set_wrprotect() / pte_wrprotect() (arch/{x86,arm64}/include/asm/
 * pgtable.h, v5.1): drop the write permission; arm64 first turns a
 * hardware-dirty entry (writable, RDONLY clear) into a software-dirty one and
 * sets RDONLY.
 */
pte_t pte_wrprotect_fmt(const struct pt_format *fmt, pte_t pte)
{
	if (fmt->rdonly && (pte & PTE_WRITE) && !(pte & PTE_RDONLY))
		pte |= PTE_DIRTY;
	pte &= ~PTE_WRITE;
	if (fmt->rdonly)
		pte |= PTE_RDONLY;
	return pte;
}

/* pte_alloc_map_lock() / pmd_alloc() / pud_alloc() of the child's side of
 * copy_*_range(): the child's PTE table for addr, allocating the missing
 * levels. The child's mm is new and write-locked by its only user: no race
 * to lose. NO_FRAME when frames ran out (the run has failed). dst_table:
 * the table at `depth` (copy_huge_pmd's PMD table). */
static uint32_t dst_table(struct sim *s, struct mm_struct *mm, uint64_t addr, int depth)
{
	struct hw *hw = hw_of(s);
	const struct pt_geom *g = &hw->geom;
	uint32_t table = mm->pgd;
	for (int d = 0; d < depth; d++) {
		uint64_t idx = pt_index(g, d, addr);
		pte_t e = table_of(hw, table)[idx];
		if (!pte_present(e)) {
			uint32_t nt = alloc_zeroed_frame(s, FRAME_PGTABLE, d + 1, 0);
			if (nt == NO_FRAME)
				return NO_FRAME;
			set_entry(s, table, idx, pfn_pte(nt, PTE_VALID | PTE_TABLE | PTE_USER));
			e = table_of(hw, table)[idx];
		}
		table = pte_pfn(e);
	}
	return table;
}

static uint32_t dst_pte_table(struct sim *s, struct mm_struct *mm, uint64_t addr)
{
	return dst_table(s, mm, addr, hw_of(s)->geom.levels - 1);
}

/*
 * copy_pte_range() -> copy_one_pte() (mm/memory.c, v5.1; copy_present_pte
 * since v5.10 keeps these rules) for [addr, end) within one PTE table: under
 * both PTE locks, each present PTE is copied into the child. A COW mapping
 * (private, may write) write-protects a writable PTE in the parent
 * (ptep_set_wrprotect: no flush here - dup_mmap flushes the parent's whole mm
 * at the end) and gives the child the write-protected value; a shared
 * mapping's copy is made clean; the copy is made old (pte_mkold). A normal
 * page gains a reference and a mapping (get_page, page_dup_rmap); the zero
 * page does not. Cost: pte_scan_ns per slot read, and per copied PTE
 * pte_zap_ns - the same work as a zap in reverse (a PTE store, the page's
 * refcount and mapcount atomics, the rss counter). No lock breaks
 * (the kernel drops the locks every 32 entries only when rescheduling is due).
 */
static void copy_pte_range(struct sim *s, struct vm_area_struct *dst, struct vm_area_struct *src,
			   pte_t *stab, uint64_t addr, uint64_t end)
{
	struct hw *hw = hw_of(s);
	const struct pt_geom *g = &hw->geom;
	struct kernel *k = kernel_of(s);
	int d = g->levels - 1;
	uint64_t i0 = pt_index(g, d, addr);
	uint64_t n = (end - addr) >> g->page_shift;
	uint32_t dtab = dst_pte_table(s, dst->vm_mm, addr);
	if (dtab == NO_FRAME)
		return;
	bool cow = !(src->vm_flags & VM_SHARED);	/* is_cow_mapping(): VM_MAYWRITE is implied */
	sim_step_arg(s, YP_PTE, 2 * (uint64_t)P(s, P_lock_op_ns), addr, 0);	/* both PTLs */
	sim_charge(s, n * (uint64_t)P(s, P_pte_scan_ns));
	for (uint64_t i = table_next_used(g, stab, i0, i0 + n); i < i0 + n;
	     i = table_next_used(g, stab, i + 1, i0 + n)) {
		pte_t pte = stab[i];
		if (!pte_present(pte))
			continue;
		if (cow && (pte & PTE_WRITE)) {
			stab[i] = pte_wrprotect_fmt(hw->fmt, pte);	/* ptep_set_wrprotect */
			pte = stab[i];
		}
		if (src->vm_flags & VM_SHARED)
			pte = fmt_pte_mkclean(hw->fmt, pte);
		pte &= ~PTE_YOUNG;					/* pte_mkold */
		uint32_t f = pte_pfn(pte);
		if (!is_zero_frame(s, f)) {
			frame_of(hw, f)->refcount++;			/* get_page */
			if (frame_of(hw, f)->pgflags & PG_ANON)	/* page_try_dup_anon_rmap */
				frame_of(hw, f)->pgflags |= PG_DUPED;
			if (k->hooks && k->hooks->page_dup)
				k->hooks->page_dup(k->hooks_ctx, f);
		}
		set_entry(s, dtab, i, pte);
		sim_charge(s, (uint64_t)P(s, P_pte_zap_ns));
	}
}

/* copy_pud_range() / copy_pmd_range() (mm/memory.c, v5.1): the source table
 * at `depth`; an absent entry is skipped (pXd_none_or_clear_bad); a huge
 * PMD entry (pmd_trans_huge; its VMA covers the whole block) goes to
 * copy_huge_pmd() (huge_memory.c) */
static void copy_table_range(struct sim *s, struct vm_area_struct *dst, struct vm_area_struct *src,
			     uint32_t table, int depth, uint64_t addr, uint64_t end)
{
	struct hw *hw = hw_of(s);
	const struct pt_geom *g = &hw->geom;
	if (depth == g->levels - 1) {
		copy_pte_range(s, dst, src, table_of(hw, table), addr, end);
		return;
	}
	uint64_t next;
	for (; addr != end && !s->error; addr = next) {
		next = addr_end(g, depth, addr, end);
		if (frame_of(hw, table)->nr_used == 0)
			return;
		pte_t e = table_of(hw, table)[pt_index(g, depth, addr)];
		if (depth == g->depth_pmd && pmd_trans_huge_entry(e)) {
			uint32_t dpmd = dst_table(s, dst->vm_mm, addr, depth);
			if (dpmd == NO_FRAME)
				return;
			if (copy_huge_pmd(s, dst, src, dpmd, table, addr))
				continue;
			e = table_of(hw, table)[pt_index(g, depth, addr)];
		}
		if (!pte_present(e) || pmd_trans_huge_entry(e))
			continue;
		copy_table_range(s, dst, src, pte_pfn(e), depth + 1, addr, next);
	}
}

/*
 * copy_page_range(dst_mm, src_mm, vma) (mm/memory.c, v5.1): fork's copy of
 * one VMA's page tables. A VMA without an anon_vma is skipped - its pages
 * refault in the child - which the model takes to be every shared mapping
 * (an anon_vma exists only for private ones; a private VMA never written is
 * copied although the kernel would skip it: read-only PTEs, the same flushes).
 */
void copy_page_range(struct sim *s, struct vm_area_struct *dst, struct vm_area_struct *src)
{
	if (src->vm_flags & VM_SHARED)
		return;
	copy_table_range(s, dst, src, src->vm_mm->pgd, 0, src->vm_start, src->vm_end);
}
