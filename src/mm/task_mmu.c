/*
 * task_mmu.c - /proc/PID/clear_refs: page aging and soft-dirty tracking.
 *
 * Mirrors clear_refs_write() of fs/proc/task_mmu.c (v5.1 with the knobs
 * clear_refs and tlb_flush_cond for what later releases changed). Writing
 * 1 (all), 2 (anonymous) or 3 (file-backed) ages the PTEs of those VMAs:
 * ptep_test_and_clear_young() on each present PTE, no flush needed (a stale
 * young TLB entry only makes the page look used). Writing 4 clears the
 * soft-dirty state: every present PTE is write-protected and loses its
 * soft-dirty bit (clear_soft_dirty: ptep_modify_prot_start / pte_wrprotect /
 * pte_clear_soft_dirty / ptep_modify_prot_commit), so the next write
 * faults and the fault's pte_mkdirty() sets the bit again - unless a CPU
 * still holds a writable TLB entry and writes through it. Soft-dirty exists
 * on x86 only (CONFIG_HAVE_ARCH_SOFT_DIRTY); on arm64 type 4 changes no PTE,
 * as clear_soft_dirty() is then an empty stub. Writing 5 (peak RSS reset)
 * touches no PTE and is accepted as a no-op. A huge PMD entry (THP) is aged
 * or soft-dirty-cleared whole (clear_refs_huge_pmd, huge_memory.c).
 *
 * The flush, by knob clear_refs:
 *  - gather (b3a81d0841a9 "mm: fix KSM data corruption", v4.13..v5.10): the
 *    walk runs inside tlb_gather_mmu(&tlb, mm, 0, -1) / tlb_finish_mmu, a
 *    fullmm gather (it raises tlb_flush_pending, so KSM sees the flush is
 *    outstanding) that records nothing. Whether its finish flushes is
 *    tlb_flush_mmu_tlbonly's rule (knob tlb_flush_cond): up to v5.5 a
 *    fullmm gather always flushes on x86 (arm64's tlb_flush() skips a
 *    fullmm gather that freed no tables); from 0758cd830494 (v5.6) a gather
 *    that cleared nothing flushes nothing - the soft-dirty clear then
 *    returns with writable entries cached, until 912efa17e512;
 *  - flush_mm (912efa17e512 "mm: proc: Invalidate TLB after clearing
 *    soft-dirty page state", v5.11): no gather; the soft-dirty clear raises
 *    tlb_flush_pending around the walk and ends with flush_tlb_mm().
 *
 * Locking: mmap_sem for read (v5.1). The kernel briefly took it for write
 * to clear VM_SOFTDIRTY from the VMAs (then downgraded); VM_SOFTDIRTY is not
 * modelled (the VMA-level soft-dirty state only matters for mappings newer
 * than the last clear, which the tracker sees as dirty anyway). Not
 * modelled either: VM_PFNMAP VMAs (none exist), swap entries,
 * ClearPageReferenced / page_idle, mmu notifiers.
 */
#include "mm/mm.h"
#include "mm/points.h"

enum clear_refs_type {
	CLEAR_REFS_ALL = 1,
	CLEAR_REFS_ANON,
	CLEAR_REFS_MAPPED,
	CLEAR_REFS_SOFT_DIRTY,
	CLEAR_REFS_MM_HIWATER_RSS,
	CLEAR_REFS_LAST,
};

/* clear_refs_test_walk() (fs/proc/task_mmu.c, v5.1): type 2 skips
 * file-backed VMAs, type 3 anonymous ones */
static bool clear_refs_test_walk(const struct vm_area_struct *v, int type)
{
	if (type == CLEAR_REFS_ANON && v->file)
		return false;
	if (type == CLEAR_REFS_MAPPED && !v->file)
		return false;
	return true;
}

/*
 * clear_refs_pte_range() (fs/proc/task_mmu.c, v5.1) for [addr, end) within
 * one PTE table: under the PTE lock, clear_soft_dirty() or
 * ptep_test_and_clear_young() of each present PTE. Returns the PTEs changed.
 */
static uint64_t clear_refs_pte_range(struct sim *s, struct mm_struct *mm, uint64_t addr,
				     uint64_t end, int type)
{
	struct hw *hw = hw_of(s);
	const struct pt_geom *g = &hw->geom;
	if (!pte_lookup(s, mm, addr))
		return 0;		/* pmd_none: no PTE table here */
	sim_step_arg(s, YP_PTE, (uint64_t)P(s, P_lock_op_ns), addr, 0);	/* the PTE lock */
	pte_t *first = pte_lookup(s, mm, addr);
	if (!first)
		return 0;
	pte_t *table = first - pt_index(g, g->levels - 1, addr);
	uint64_t i0 = pt_index(g, g->levels - 1, addr);
	uint64_t n = (end - addr) >> g->page_shift;
	uint64_t changed = 0;
	sim_charge(s, n * (uint64_t)P(s, P_pte_scan_ns));
	for (uint64_t i = table_next_used(g, table, i0, i0 + n); i < i0 + n;
	     i = table_next_used(g, table, i + 1, i0 + n)) {
		pte_t old = table[i];
		if (!pte_present(old))
			continue;
		if (type == CLEAR_REFS_SOFT_DIRTY) {
			if (!hw->fmt->soft_dirty)
				continue;	/* clear_soft_dirty(): an empty stub */
			/* clear_soft_dirty(): the exchange, pte_wrprotect,
			 * pte_clear_soft_dirty, the commit (D stays) */
			table[i] = old & ~(PTE_WRITE | PTE_SOFT_DIRTY);
		} else {
			if (!(old & PTE_YOUNG))
				continue;
			table[i] = old & ~PTE_YOUNG;	/* ptep_test_and_clear_young() */
		}
		sim_charge(s, (uint64_t)P(s, P_lock_op_ns));	/* the atomic */
		changed++;
	}
	return changed;
}

/* walk_page_range() (mm/pagewalk.c, v5.1) over every VMA clear_refs_test_walk()
 * accepts, one PTE table at a time (pmd_addr_end); a huge PMD entry goes to
 * the huge branch of clear_refs_pte_range (clear_refs_huge_pmd,
 * huge_memory.c) */
static uint64_t clear_refs_walk(struct sim *s, struct mm_struct *mm, int type)
{
	const struct pt_geom *g = &hw_of(s)->geom;
	uint64_t span = g->ptrs_per_pte << g->page_shift;	/* one PTE table's reach */
	uint64_t changed = 0;
	for (int i = 0; i < mm->nr_vmas; i++) {
		struct vm_area_struct *v = mm->vmas[i];
		if (!clear_refs_test_walk(v, type))
			continue;
		uint64_t start = v->vm_start, end = v->vm_end;
		for (uint64_t a = start, next; a < end; a = next) {
			next = (a & ~(span - 1)) + span;	/* pmd_addr_end() */
			if (next > end || next < a)
				next = end;
			uint32_t pmd_table = huge_pmd_table(s, v, a);
			if (pmd_table != NO_FRAME) {
				changed += clear_refs_huge_pmd(s, v, pmd_table, a,
							       type == CLEAR_REFS_SOFT_DIRTY);
				continue;
			}
			changed += clear_refs_pte_range(s, mm, a, next, type);
			/* the walk may have slept on a PTE lock: the VMA array
			 * is stable under mmap_sem, the VMA pointer too */
		}
	}
	return changed;
}

/* After a soft-dirty clear returned: tell the observer of every page whose
 * PTE is now clean of soft-dirty (what a pagemap read reports as clean) */
static void soft_dirty_report(struct sim *s, struct mm_struct *mm)
{
	struct kernel *k = kernel_of(s);
	if (!k->hooks || !k->hooks->soft_dirty_clean || !hw_of(s)->fmt->soft_dirty)
		return;		/* no tracking without soft-dirty bits (arm64) */
	const struct pt_geom *g = &hw_of(s)->geom;
	for (int i = 0; i < mm->nr_vmas; i++) {
		const struct vm_area_struct *v = mm->vmas[i];
		for (uint64_t a = v->vm_start; a < v->vm_end; a += g->page_size) {
			pte_t *p = pte_lookup(s, mm, a);
			if (!p) {
				/* no PTE table: skip to the next one; a huge PMD
				 * entry is the page of its whole block */
				uint64_t span = g->ptrs_per_pte << g->page_shift;
				uint64_t next = (a & ~(span - 1)) + span;
				pte_t *pmdp = hw_pmd_lookup(hw_of(s), mm->pgd, a);
				if (pmdp && pmd_trans_huge_entry(*pmdp) &&
				    !(*pmdp & PTE_SOFT_DIRTY))
					k->hooks->soft_dirty_clean(k->hooks_ctx, a & ~(span - 1),
								   pte_pfn(*pmdp));
				if (next <= a)
					break;
				a = next - g->page_size;
				continue;
			}
			if (pte_present(*p) && !(*p & PTE_SOFT_DIRTY))
				k->hooks->soft_dirty_clean(k->hooks_ctx, a, pte_pfn(*p));
		}
	}
}

/*
 * write(open("/proc/self/clear_refs"), "N") -> clear_refs_write()
 * (fs/proc/task_mmu.c, v5.1 + knobs). Returns 0, or -1 (EINVAL) for a type
 * outside 1..5.
 */
int sys_clear_refs(struct sim *s, int type)
{
	struct mm_struct *mm = current_task(s)->mm;
	struct kernel *k = kernel_of(s);
	struct machine *mc = machine_of(s);
	sim_set_mode(s, MODE_SYS);
	sim_step_arg(s, YP_SYSCALL, syscall_cost(s), SYS_CLEAR_REFS, (uint64_t)type);
	kernel_entry(s);
	if (type < CLEAR_REFS_ALL || type >= CLEAR_REFS_LAST) {
		sim_set_mode(s, MODE_USER);
		return -1;
	}
	if (type == CLEAR_REFS_MM_HIWATER_RSS) {
		sim_set_mode(s, MODE_USER);	/* reset_mm_hiwater_rss(): no PTE */
		return 0;
	}
	uint64_t cookie = k->hooks && k->hooks->syscall_enter
				  ? k->hooks->syscall_enter(k->hooks_ctx, SYS_CLEAR_REFS) : 0;
	bool soft_dirty = type == CLEAR_REFS_SOFT_DIRTY;
	down_read(s, &mm->mmap_sem);
	sim_charge(s, (uint64_t)P(s, P_vma_op_ns));	/* the walk's setup */
	if (mc->policy.clear_refs == CLEAR_REFS_GATHER) {
		struct mmu_gather tlb;
		tlb_gather_mmu(s, &tlb, mm, 0, ~0ull);
		clear_refs_walk(s, mm, type);
		tlb_finish_mmu(s, &tlb, 0, ~0ull);
	} else if (soft_dirty) {
		/* inc_tlb_flush_pending(): an atomic on the line tlb_gather_mmu uses */
		mm->tlb_flush_pending++;
		sim_step(s, YP_PENDING_INC,
			 (uint64_t)P(s, P_lock_op_ns) + line_rmw(s, &mm->flush_pending_line));
		clear_refs_walk(s, mm, type);
		mc->arch->flush_tlb_mm(s, &mm->context);
		/* dec_tlb_flush_pending() */
		sim_step(s, YP_PENDING_DEC,
			 (uint64_t)P(s, P_lock_op_ns) + line_rmw(s, &mm->flush_pending_line));
		mm->tlb_flush_pending--;
	} else {
		clear_refs_walk(s, mm, type);	/* aging: no flush at all */
	}
	up_read(s, &mm->mmap_sem);
	if (soft_dirty) {
		if (k->hooks && k->hooks->range_unmapped)
			k->hooks->range_unmapped(k->hooks_ctx, mm, 0, hw_of(s)->geom.task_size,
						 SYS_CLEAR_REFS, cookie);
		soft_dirty_report(s, mm);
	}
	sim_set_mode(s, MODE_USER);
	return 0;
}
