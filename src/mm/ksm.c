/*
 * ksm.c - KSM: ksmd merging two identical anonymous pages (mm/ksm.c, v5.1,
 * with the knob ksm_wp for what b3a81d0841a9 and 6c287605fd56 changed).
 *
 * ksmd found two pages with the same content (the checksum and the
 * unstable tree's memcmp_pages, not modelled: page contents are not
 * modelled, ksm_merge() is told which two pages are identical) and calls
 * try_to_merge_two_pages(): the scanned page becomes the KSM page in place
 * (try_to_merge_with_ksm_page(rmap_item, page, NULL)), then the other page
 * is merged into it (try_to_merge_with_ksm_page(tree_rmap_item, tree_page,
 * page)); if that fails the KSM page, mapped once, is broken again
 * (break_cow). Each try_to_merge_with_ksm_page() holds mmap_sem for read
 * and runs try_to_merge_one_page() under the page lock (trylock_page: a
 * locked page is skipped, not waited for):
 *  - write_protect_page(), under the PTE lock: if the PTE is writable or
 *    dirty - or, by knob ksm_wp, a flush of the mm is pending
 *    (mm_tlb_flush_pending, b3a81d0841a9 "mm: fix KSM data corruption",
 *    v4.13), or the page is PageAnonExclusive (6c287605fd56, v5.19) - the
 *    PTE is cleared and flushed (ptep_clear_flush: flush_tlb_page), the
 *    page dirtied if the PTE was, and a write-protected clean PTE set.
 *    Otherwise the PTE is left alone: already read-only and clean, it is
 *    assumed that no CPU can still write the page;
 *  - the first page: it becomes the KSM page (PageKsm, SetPageDirty);
 *  - the second: pages_identical() compares it with the KSM page, then
 *    replace_page() - under the PTE lock, if the PTE is still what
 *    write_protect_page() left (pte_same) - maps the KSM page read-only
 *    in its place (ptep_clear_flush + set_pte_at_notify) and frees it.
 *
 * The comparison is the I3 point: it judges both pages' contents after
 * write_protect_page() made them read-only. A write that still reaches
 * either page afterwards, through a TLB entry that kept write permission
 * because write_protect_page() skipped the flush, is not in what KSM
 * merged once replace_page() commits: into the replaced page it is lost
 * when the page is freed, into the KSM page it shows through the other
 * mapping (the mm_hooks ksm_compared and ksm_replaced; the oracle's
 * WATCH_KSM). If the merge is abandoned instead (the PTE changed), the
 * pages stay as they are and nothing is lost. Nadav Amit's report behind
 * b3a81d0841a9 has the PTE made clean by MADV_FREE and read-only by a
 * soft-dirty clear_refs, both flushes still pending.
 *
 * Model simplifications: the caller's task plays ksmd (its CPU runs the
 * merge; the mm is its own); find_mergeable_vma accepts any private
 * anonymous VMA (VM_MERGEABLE, madvise(MADV_MERGEABLE), is implied); no
 * stable/unstable trees, rmap_items or checksums; ksmd holds a reference
 * (FOLL_GET) to the KSM page only from when it became one (the model counts
 * mappings in the page's refcount, and an earlier reference would change
 * what a write fault or MADV_FREE does to the page); the page it replaces
 * may be freed under it (MADV_DONTNEED, a copy on write), which fails the
 * PTE checks and abandons the merge; the page_mapcount /
 * page_count check against GUP pins (none are modelled), the swap cache,
 * mlock and mmu notifiers are not modelled (a THP is split first:
 * ksm_split_thp). The clear and
 * the set of each ptep_clear_flush() + set_pte_at are done together before
 * the flush, under the PTE lock (a CPU that walks meanwhile sees the
 * read-only PTE where the kernel's would fault on the cleared one and wait
 * for the lock).
 */
#include "mm/mm.h"
#include "mm/points.h"

/* cost of pages_identical(): memcmp of two pages - it reads two pages where
 * a copy reads one and writes one, so charged as a copy (copy_4k_ns per
 * 4 KiB; first principles, no separate measurement) */
static uint64_t pages_identical_ns(struct sim *s)
{
	return (uint64_t)P(s, P_copy_4k_ns) * (hw_of(s)->geom.page_size >> 12);
}

static void ksm_step(struct sim *s, uint64_t cost, uint64_t addr, enum ksm_step st,
		     const struct mm_struct *mm)
{
	sim_step_arg(s, YP_KSM, cost, addr, (uint64_t)st | (uint64_t)mm->tlb_flush_pending << 8);
}

/* find_mergeable_vma() (mm/ksm.c, v5.1): the VMA containing addr, if KSM
 * may merge there - in the model any private anonymous VMA */
static struct vm_area_struct *find_mergeable_vma(struct mm_struct *mm, uint64_t addr)
{
	struct vm_area_struct *v = find_vma(mm, addr);
	if (!v || v->vm_start > addr || v->file || (v->vm_flags & VM_SHARED))
		return NULL;
	return v;
}

/* get_mergeable_page() / follow_page() (mm/ksm.c, v5.1): the anonymous page
 * mapped at addr, or NO_FRAME (none, the zero page, a page-cache page) */
static uint32_t get_mergeable_page(struct sim *s, struct mm_struct *mm, uint64_t addr)
{
	if (!find_mergeable_vma(mm, addr))
		return NO_FRAME;
	pte_t *ptep = pte_lookup(s, mm, addr);
	if (!ptep || !pte_present(*ptep))
		return NO_FRAME;
	uint32_t f = pte_pfn(*ptep);
	if (is_zero_frame(s, f) || !(frame_of(hw_of(s), f)->pgflags & PG_ANON))
		return NO_FRAME;
	return f;
}

/* pte_dirty() of the arch pgtable.h: x86 D; arm64 the software dirty bit or
 * hardware dirtiness (DBM-writable and not RDONLY) */
static bool ksm_pte_dirty(const struct pt_format *fmt, pte_t pte)
{
	return !fmt_pte_clean(fmt, pte);
}

/*
 * write_protect_page() (mm/ksm.c, v5.1; the condition by knob ksm_wp) for
 * frame f mapped at addr in vma: 0 with *orig_pte the PTE it left, or -1
 * when the page is no longer mapped there.
 */
static int write_protect_page(struct sim *s, struct vm_area_struct *vma, uint32_t f,
			      uint64_t addr, pte_t *orig_pte)
{
	struct mm_struct *mm = vma->vm_mm;
	struct hw *hw = hw_of(s);
	struct frame *fr = frame_of(hw, f);
	enum ksm_wp_policy pol = machine_of(s)->policy.ksm_wp;
	/* page_vma_mapped_walk(): the PTE lock, held to the end (through
	 * the flush: a zap or mprotect of the PTE waits for it) */
	sim_step_arg(s, YP_PTE, (uint64_t)P(s, P_lock_op_ns), addr, 0);
	uint32_t table = pte_table_of(s, mm, addr);
	if (!table)
		return -1;
	rmap_ptl_lock(s, table);
	pte_t *ptep = pte_lookup(s, mm, addr);
	if (!ptep || !pte_present(*ptep) || pte_pfn(*ptep) != f) {
		rmap_ptl_unlock(s);
		return -1;
	}
	pte_t pte = *ptep;
	/* PageAnonExclusive: an anonymous page mapped only here that fork has
	 * not shared since a write fault last reused it (PG_DUPED) */
	bool exclusive = fr->refcount == 1 && !(fr->pgflags & (PG_KSM | PG_DUPED));
	bool flush = (pte & PTE_WRITE) || ksm_pte_dirty(hw->fmt, pte) ||
		     (pol >= KSM_WP_PENDING && mm->tlb_flush_pending > 0) ||
		     (pol == KSM_WP_EXCLUSIVE && exclusive);
	sim_trace(s, YP_KSM, addr,
		  (uint64_t)(flush ? KSM_STEP_WP_FLUSH : KSM_STEP_WP_SKIP) |
			  (uint64_t)mm->tlb_flush_pending << 8);
	if (flush) {
		/* ptep_clear_flush(); set_page_dirty() of a dirty PTE's page;
		 * pte_mkclean(pte_wrprotect()); set_pte_at_notify() */
		if (ksm_pte_dirty(hw->fmt, pte))
			fr->pgflags |= PG_DIRTY;
		*ptep = fmt_pte_mkclean(hw->fmt, pte & ~PTE_WRITE);
		sim_charge(s, (uint64_t)P(s, P_lock_op_ns));	/* the exchange */
		pte = *ptep;
		/* the observer is told: an mprotect or clear_refs that returns
		 * meanwhile finds this PTE read-only and the entry still cached,
		 * which is this flush's business, not the returning call's */
		struct kernel *k = kernel_of(s);
		if (k->hooks && k->hooks->ksm_clearing)
			k->hooks->ksm_clearing(k->hooks_ctx, f, true);
		machine_of(s)->arch->flush_tlb_page(s, &mm->context, addr);
		if (k->hooks && k->hooks->ksm_clearing)
			k->hooks->ksm_clearing(k->hooks_ctx, f, false);
	}
	/* what this function left under the PTE lock: a fault that waited for
	 * the lock and changed the PTE since makes replace_page() give up */
	*orig_pte = pte;
	rmap_ptl_unlock(s);
	return 0;
}

/* pages_identical() (mm/ksm.c, v5.1): the contents are not modelled, the
 * caller said the two pages are identical; what the comparison judged is
 * told to the observer (the I3 point) */
static bool pages_identical(struct sim *s, struct mm_struct *mm, uint64_t addr, uint32_t page,
			    uint32_t kpage)
{
	struct kernel *k = kernel_of(s);
	ksm_step(s, pages_identical_ns(s), addr, KSM_STEP_COMPARE, mm);
	if (k->hooks && k->hooks->ksm_compared) {
		k->hooks->ksm_compared(k->hooks_ctx, page);
		k->hooks->ksm_compared(k->hooks_ctx, kpage);
	}
	return true;
}

/*
 * replace_page() (mm/ksm.c, v5.1): under the PTE lock, if the PTE is still
 * orig_pte, map kpage read-only (get_page, page_add_anon_rmap, mk_pte with
 * vm_page_prot), ptep_clear_flush (flush_tlb_page), then page_remove_rmap
 * and put_page of the old page (freed when it was the last reference).
 * 0, or -1 (-EFAULT) when the PTE changed.
 */
static int replace_page(struct sim *s, struct vm_area_struct *vma, uint32_t page, uint32_t kpage,
			uint64_t addr, pte_t orig_pte)
{
	struct mm_struct *mm = vma->vm_mm;
	struct hw *hw = hw_of(s);
	struct kernel *k = kernel_of(s);
	sim_step_arg(s, YP_PTE, (uint64_t)P(s, P_lock_op_ns), addr, 0);	/* pte_offset_map_lock */
	uint32_t table = pte_table_of(s, mm, addr);
	if (!table)
		return -1;
	rmap_ptl_lock(s, table);
	pte_t *ptep = pte_lookup(s, mm, addr);
	if (!ptep || *ptep != orig_pte) {
		rmap_ptl_unlock(s);
		return -1;				/* !pte_same */
	}
	sim_trace(s, YP_KSM, addr, (uint64_t)KSM_STEP_REPLACE | (uint64_t)mm->tlb_flush_pending << 8);
	frame_of(hw, kpage)->refcount++;		/* get_page + page_add_anon_rmap */
	*ptep = fmt_pte_mkclean(hw->fmt, pfn_pte(kpage, PTE_VALID | PTE_USER | PTE_YOUNG));
	sim_charge(s, (uint64_t)P(s, P_lock_op_ns));	/* the exchange */
	if (k->hooks && k->hooks->ksm_replaced)
		k->hooks->ksm_replaced(k->hooks_ctx, page, kpage);
	machine_of(s)->arch->flush_tlb_page(s, &mm->context, addr);
	if (k->hooks && k->hooks->page_mapped)
		k->hooks->page_mapped(k->hooks_ctx, kpage, false);
	struct frame *fr = frame_of(hw, page);		/* page_remove_rmap + put_page */
	if (--fr->refcount == 0)
		frame_free(hw, page);
	rmap_ptl_unlock(s);				/* pte_unmap_unlock */
	return 0;
}

/*
 * try_to_merge_one_page() (mm/ksm.c, v5.1): page mapped at addr in vma,
 * kpage the KSM page to map instead, or NO_FRAME to make page the KSM page.
 * 0 merged, -1 not.
 */
static int try_to_merge_one_page(struct sim *s, struct vm_area_struct *vma, uint32_t page,
				 uint32_t kpage, uint64_t addr)
{
	struct hw *hw = hw_of(s);
	struct frame *fr = frame_of(hw, page);
	uint32_t gen = fr->gen;
	pte_t orig_pte = 0;
	int err = -1;
	if (page == kpage)
		return 0;				/* ksm page forked */
	if (!(fr->pgflags & PG_ANON))
		return -1;
	/* trylock_page(): a locked page is skipped, ksmd comes back later */
	sim_step_arg(s, YP_LOCK_PAGE, (uint64_t)P(s, P_lock_op_ns), page,
		     (fr->pgflags & PG_LOCKED) != 0);
	if (fr->gen != gen || fr->state != FRAME_DATA || (fr->pgflags & PG_LOCKED))
		return -1;
	fr->pgflags |= PG_LOCKED;
	if (write_protect_page(s, vma, page, addr, &orig_pte) == 0) {
		if (kpage == NO_FRAME) {
			/* set_page_stable_node(): PageKsm; SetPageDirty so
			 * reclaim would swap it rather than drop it */
			fr->pgflags |= PG_KSM | PG_DIRTY;
			/* ksmd's reference to the KSM page (get_mergeable_page's
			 * FOLL_GET), dropped when the merge is over (ksm_merge):
			 * a write fault that copies it away meanwhile does not
			 * free it */
			fr->refcount++;
			err = 0;
		} else if (frame_of(hw, kpage)->state == FRAME_DATA &&
			   (frame_of(hw, kpage)->pgflags & PG_KSM) &&
			   pages_identical(s, vma->vm_mm, addr, page, kpage)) {
			err = replace_page(s, vma, page, kpage, addr, orig_pte);
		}
	}
	/* unlock_page() - unless the page was freed meanwhile (replace_page
	 * dropped the last reference, or a zap did): nothing holds it then */
	if (fr->gen == gen && fr->state == FRAME_DATA)
		unlock_page(s, page);
	return err;
}

/* try_to_merge_with_ksm_page() (mm/ksm.c, v5.1): mmap_sem for read,
 * find_mergeable_vma, try_to_merge_one_page */
static int try_to_merge_with_ksm_page(struct sim *s, struct mm_struct *mm, uint64_t addr,
				      uint32_t page, uint32_t kpage)
{
	int err = -1;
	down_read(s, &mm->mmap_sem);
	struct vm_area_struct *vma = find_mergeable_vma(mm, addr);
	if (vma && get_mergeable_page(s, mm, addr) == page)
		err = try_to_merge_one_page(s, vma, page, kpage, addr);
	up_read(s, &mm->mmap_sem);
	return err;
}

/* break_cow() -> break_ksm() (mm/ksm.c, v5.1): under mmap_sem for read, a
 * write fault on the KSM page (FAULT_FLAG_WRITE | FAULT_FLAG_REMOTE) gives
 * the address a private copy again */
static void break_cow(struct sim *s, struct mm_struct *mm, uint64_t addr)
{
	down_read(s, &mm->mmap_sem);
	struct vm_area_struct *vma = find_mergeable_vma(mm, addr);
	uint32_t f = vma ? get_mergeable_page(s, mm, addr) : NO_FRAME;
	if (f != NO_FRAME && (frame_of(hw_of(s), f)->pgflags & PG_KSM)) {
		ksm_step(s, 0, addr, KSM_STEP_BREAK_COW, mm);
		handle_mm_fault(s, vma, addr, FAULT_FLAG_WRITE);
	}
	up_read(s, &mm->mmap_sem);
}

/*
 * try_to_merge_one_page()'s split of a THP (mm/ksm.c, v5.1: PageTransCompound
 * -> split_huge_page, under the page lock; a THP that cannot be split is not
 * merged): the model splits a PMD-mapped THP at addr (split_huge_page_at,
 * huge_memory.c) when ksmd picks the pages, under the mmap_sem read hold of
 * the lookup, before the PTE path below: both pages at once (the kernel
 * splits the second only when it merges it, after the first merged). One
 * that stays PMD-mapped is no mergeable page (get_mergeable_page: no PTE),
 * so the merge fails.
 */
static void ksm_split_thp(struct sim *s, struct mm_struct *mm, uint64_t addr)
{
	struct vm_area_struct *vma = find_mergeable_vma(mm, addr);
	if (vma)
		split_huge_page_at(s, vma, addr);
}

/*
 * ksmd's cmp_and_merge_page() -> try_to_merge_two_pages() (mm/ksm.c, v5.1)
 * for the page at addr1 (the scanned page, which becomes the KSM page) and
 * the page at addr2 (the unstable tree's page, replaced by it), both in the
 * current task's mm and taken as identical. 0 merged, -1 not (no page, not
 * anonymous, locked, the same page, or a PTE that changed meanwhile).
 */
int ksm_merge(struct sim *s, uint64_t addr1, uint64_t addr2)
{
	struct mm_struct *mm = current_task(s)->mm;
	uint64_t ps = hw_of(s)->geom.page_size;
	addr1 &= ~(ps - 1);
	addr2 &= ~(ps - 1);
	sim_set_mode(s, MODE_SYS);
	ksm_step(s, (uint64_t)P(s, P_lock_op_ns), addr1, KSM_STEP_SCAN, mm);
	down_read(s, &mm->mmap_sem);
	ksm_split_thp(s, mm, addr1);
	ksm_split_thp(s, mm, addr2);
	uint32_t page = get_mergeable_page(s, mm, addr1);
	uint32_t tree_page = get_mergeable_page(s, mm, addr2);
	up_read(s, &mm->mmap_sem);
	int err = -1;
	struct hw *hw = hw_of(s);
	if (page != NO_FRAME && tree_page != NO_FRAME && page != tree_page &&
	    !(frame_of(hw, page)->pgflags & PG_KSM) &&
	    try_to_merge_with_ksm_page(s, mm, addr1, page, NO_FRAME) == 0) {
		err = try_to_merge_with_ksm_page(s, mm, addr2, tree_page, page);
		if (err)
			break_cow(s, mm, addr1);
		struct frame *fr = frame_of(hw, page);		/* put_page */
		if (--fr->refcount == 0)
			frame_free(hw, page);
	}
	if (err)
		ksm_step(s, 0, addr2, KSM_STEP_ABORT, mm);
	sim_set_mode(s, MODE_USER);
	return err;
}
