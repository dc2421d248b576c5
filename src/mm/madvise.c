/*
 * madvise.c - madvise(MADV_DONTNEED) and madvise(MADV_FREE), v5.1.
 *
 * Mirrors mm/madvise.c (v5.1): do_madvise() with mmap_sem held for read walks
 * the VMAs of the range; MADV_DONTNEED zaps each piece through
 * zap_page_range() (madvise_dontneed_single_vma); MADV_FREE
 * (madvise_free_single_vma -> madvise_free_pte_range) makes every present
 * private anonymous page old and clean - one with PG_dirty only when it is
 * mapped once (page_mapcount) - records it in a gather, and lets reclaim
 * discard it later unless it is written again (mark_page_lazyfree:
 * PG_LAZYFREE; the discard is in rmap.c).
 */
#include "mm/mm.h"
#include "mm/points.h"
#include "sim/grow.h"

typedef void (*madvise_vma_fn)(struct sim *s, struct vm_area_struct *v, uint64_t start,
			       uint64_t end, void *arg);

/* madvise_walk_vmas() (mm/madvise.c; the loop of do_madvise() in v5.1): call
 * fn for each VMA piece of [start, end); -1 (ENOMEM) on a hole. */
static int madvise_walk_vmas(struct sim *s, struct mm_struct *mm, uint64_t start, uint64_t end,
			     madvise_vma_fn fn, void *arg)
{
	for (uint64_t a = start; a < end;) {
		struct vm_area_struct *v = find_vma(mm, a);
		if (!v || v->vm_start >= end)
			return -1;
		uint64_t st = a > v->vm_start ? a : v->vm_start;
		uint64_t en = end < v->vm_end ? end : v->vm_end;
		fn(s, v, st, en, arg);
		a = en;
	}
	return 0;
}

/* madvise_dontneed_single_vma() (v5.1) */
static void madvise_dontneed_single_vma(struct sim *s, struct vm_area_struct *v, uint64_t st,
					uint64_t en, void *arg)
{
	(void)arg;
	zap_page_range(s, v, st, en - st);
}

/* madvise(addr, len, MADV_DONTNEED) (mm/madvise.c, v5.1): mmap_sem held for
 * read; madvise_dontneed_single_vma() per VMA. */
int sys_madvise_dontneed(struct sim *s, uint64_t addr, uint64_t len)
{
	struct mm_struct *mm = current_task(s)->mm;
	struct kernel *k = kernel_of(s);
	uint64_t ps = hw_of(s)->geom.page_size;
	int ret = 0;
	sim_set_mode(s, MODE_SYS);
	sim_step_arg(s, YP_SYSCALL, syscall_cost(s), SYS_MADVISE_DONTNEED, addr);
	kernel_entry(s);
	uint64_t cookie = k->hooks && k->hooks->syscall_enter
				  ? k->hooks->syscall_enter(k->hooks_ctx, SYS_MADVISE_DONTNEED) : 0;
	if (addr & (ps - 1)) {
		ret = -1;
		goto out;
	}
	len = (len + ps - 1) & ~(ps - 1);
	uint64_t end = addr + len;
	down_read(s, &mm->mmap_sem);
	ret = madvise_walk_vmas(s, mm, addr, end, madvise_dontneed_single_vma, NULL);
	up_read(s, &mm->mmap_sem);
	if (k->hooks && k->hooks->range_unmapped)
		k->hooks->range_unmapped(k->hooks_ctx, mm, addr, end, SYS_MADVISE_DONTNEED, cookie);
out:
	sim_set_mode(s, MODE_USER);
	return ret;
}

/* The pages one MADV_FREE call looked at, for observers (mm_hooks); the
 * records live in the task (nothing on the host heap that a run stopped
 * inside the call could leak). */
struct madv_free_seen {
	struct task *tk;
	uint32_t n;
	bool record;
};

/* madvise_free_single_vma() -> madvise_free_pte_range() (v4.5..v5.1) */
static void madvise_free_single_vma(struct sim *s, struct vm_area_struct *v, uint64_t st,
				    uint64_t en, void *arg)
{
	struct madv_free_seen *seen = arg;
	struct kernel *k = kernel_of(s);
	struct mm_struct *mm = current_task(s)->mm;
	struct hw *hw = hw_of(s);
	uint64_t ps = hw->geom.page_size;
	if (v->file)
		return;		/* MADV_FREE applies to private anonymous memory */
	/* A PMD-mapped THP in the range: madvise_free_huge_pmd() (mm/huge_memory.c,
	 * v5.1) splits one the range covers in part, and madvise_free_pte_range
	 * splits a PTE-mapped one (split_huge_page) before freeing its pages;
	 * the model splits every THP the range touches (split_huge_page_at:
	 * pmdp_invalidate flushes the block first), where the kernel marks a
	 * wholly covered one clean and old in its PMD entry, and the PTE loop
	 * below then frees the base pages lazily. A THP with a reference
	 * besides its mapping (a pin) is not split and is left as it is. */
	if (v->vm_flags & VM_HUGEPAGE) {
		uint64_t hsz = hpage_pmd_size(s);
		for (uint64_t a = st & ~(hsz - 1); a < en; a += hsz)
			(void)split_huge_page_at(s, v, a);
	}
	struct mmu_gather tlb;
	uint32_t locked = 0;		/* the PTE table whose lock we hold */
	tlb_gather_mmu(s, &tlb, mm, st, en);
	tlb_start_vma(s, &tlb, v);
	for (uint64_t p = st; p < en; p += ps) {
		/* madvise_free_pte_range() per PTE table: pte_offset_map_lock,
		 * then flush_tlb_batched_pending(mm) (3ea277194daa, v4.13; knob
		 * ubc_check_madv_free) */
		uint32_t table = pte_table_of(s, mm, p);
		if (table != locked) {
			ptl_unlock(s);
			locked = table;
			ptl_lock(s, table);
			if (table && machine_of(s)->policy.ubc_check_madv_free)
				flush_tlb_batched_pending(s, mm);
		}
		pte_t *ptep = pte_lookup(s, mm, p);
		if (!ptep || !pte_present(*ptep))
			continue;
		uint32_t f = pte_pfn(*ptep);
		if (is_zero_frame(s, f))
			continue;
		/* a dirty page (PG_dirty; no swap cache here) is taken only when
		 * mapped once - its dirty flag could not be cleared for the other
		 * mappings; a clean one shared after fork is aged, cleaned in
		 * this mm and marked lazyfree all the same (reclaim frees it
		 * only once it is mapped once and still clean) */
		if ((frame_of(hw, f)->pgflags & PG_DIRTY) && frame_of(hw, f)->refcount != 1)
			continue;
		sim_step_arg(s, YP_ZAP_PTE, (uint64_t)P(s, P_pte_zap_ns), p, 1);
		ptep = pte_lookup(s, mm, p);
		if (!ptep || !pte_present(*ptep) || pte_pfn(*ptep) != f)
			continue;
		if (seen->record) {
			struct task *tk = seen->tk;
			if (GROW(&tk->lazyfree, &tk->cap_lazyfree, seen->n, (size_t)seen->n + 1, 16))
				sim_oom(s, "MADV_FREE");
			struct lazyfree_rec *r = &tk->lazyfree[seen->n++];
			r->va = p;
			r->frame = f;
			r->cookie = k->hooks->lazyfree_seen(k->hooks_ctx, f);
		}
		/* ClearPageDirty(); mark_page_lazyfree(): !PageSwapBacked */
		frame_of(hw, f)->pgflags = (frame_of(hw, f)->pgflags & ~PG_DIRTY) | PG_LAZYFREE;
		pte_t e = *ptep;
		if (!(e & (PTE_YOUNG | PTE_DIRTY)))
			continue;	/* already old and clean: nothing recorded */
		e = fmt_pte_mkclean(hw->fmt, e & ~PTE_YOUNG);	/* pte_mkold(pte_mkclean()) */
		*ptep = e;
		tlb_remove_tlb_entry(&tlb, p, ps);
	}
	ptl_unlock(s);
	tlb_end_vma(s, &tlb, v);
	tlb_finish_mmu(s, &tlb, st, en);
}

/* madvise(addr, len, MADV_FREE) (mm/madvise.c, v4.5..v5.1) */
int sys_madvise_free(struct sim *s, uint64_t addr, uint64_t len)
{
	struct mm_struct *mm = current_task(s)->mm;
	struct kernel *k = kernel_of(s);
	uint64_t ps = hw_of(s)->geom.page_size;
	struct madv_free_seen seen = {
		.tk = current_task(s),
		.record = k->hooks && k->hooks->lazyfree_seen && k->hooks->lazyfree_done,
	};
	int ret = 0;
	sim_set_mode(s, MODE_SYS);
	sim_step_arg(s, YP_SYSCALL, syscall_cost(s), SYS_MADVISE_FREE, addr);
	kernel_entry(s);
	if (addr & (ps - 1)) {
		ret = -1;
		goto out;
	}
	len = (len + ps - 1) & ~(ps - 1);
	down_read(s, &mm->mmap_sem);
	ret = madvise_walk_vmas(s, mm, addr, addr + len, madvise_free_single_vma, &seen);
	up_read(s, &mm->mmap_sem);
	/* the call has completed: the pages it saw are lazily freeable */
	if (seen.record)
		k->hooks->lazyfree_done(k->hooks_ctx, mm, seen.tk->lazyfree, seen.n);
out:
	sim_set_mode(s, MODE_USER);
	return ret;
}
