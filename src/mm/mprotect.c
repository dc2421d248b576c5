/*
 * mprotect.c - mprotect(2), v5.1.
 *
 * Mirrors mm/mprotect.c (v5.1): do_mprotect_pkey() takes mmap_sem for write
 * and walks the VMAs of the range; mprotect_fixup() splits a VMA the range
 * covers only in part (split_vma, mm/mmap.c), sets the new vm_flags and
 * calls change_protection() -> change_protection_range(), which raises
 * mm->tlb_flush_pending (inc_tlb_flush_pending, a counter on every
 * configuration since 0a2dd266dd6b, v4.13, so that a concurrent
 * mm_tlb_flush_pending()/mm_tlb_flush_nested() reader knows a flush of this
 * mm is outstanding), rewrites every present PTE of the
 * range under its PTE table's lock (change_pte_range:
 * ptep_modify_prot_start / pte_modify / ptep_modify_prot_commit, counting
 * each present PTE), and - only if it counted any - flushes the whole range
 * with flush_tlb_range(vma, start, end) before dec_tlb_flush_pending(). No
 * mmu_gather: that came with 4a18419f71cd (v6.0).
 *
 * vma_merge: a file-backed VMA (a shared anonymous mapping is a shmem file)
 * merges back with its neighbours when mprotect gives them the same flags
 * again (vma_merge_file_neighbours, mmap.c; the kernel merges before it
 * changes the PTEs, here it is done after: the PTEs and the flushed range
 * are the same). A private anonymous VMA split by one mprotect stays split
 * when a later one gives both parts the same flags again (the model has no
 * anon_vma to say which may merge): a later mprotect of the whole range then
 * flushes once per piece where the kernel flushes once.
 *
 * Not modelled: PROT_NONE and PROT_EXEC (and write-only), pkeys, VM_MAYWRITE
 * (every VMA may be made writable), VM_ACCOUNT charging, the NUMA-hinting
 * prot_numa path, swap and migration entries (the model has neither), THP.
 *
 * Permissions, in the neutral PTE encoding (hw/hw.h): vma->vm_page_prot of a
 * private mapping never carries write permission (PAGE_COPY / PAGE_READONLY:
 * a write to a private page goes through the fault path, do_wp_page), nor
 * does a shared one whose filesystem wants write notification; a shared
 * writable tmpfs mapping's does (PAGE_SHARED). pte_modify() replaces the
 * write permission with the new protection's and keeps pfn, young and dirty;
 * on arm64 it first turns hardware dirtiness (writable, RDONLY clear) into
 * the software dirty bit, and every user protection sets PTE_RDONLY.
 * With dirty_accountable (vma_wants_writenotify) a dirty PTE is made
 * writable again (pte_mkwrite), as the filesystem already knows of it.
 */
#include "mm/mm.h"
#include "mm/points.h"

/* calc_vm_prot_bits() for the protections modelled */
static uint32_t calc_vm_prot_bits(int prot)
{
	return ((prot & TLBSIM_PROT_READ) ? VM_READ : 0u) |
	       ((prot & TLBSIM_PROT_WRITE) ? VM_WRITE : 0u);
}

/* Does vma->vm_page_prot (vma_set_page_prot, mm/mmap.c v5.1) carry write
 * permission? Only PAGE_SHARED of a shared writable mapping that wants no
 * write notification. */
static bool page_prot_writable(const struct vm_area_struct *vma)
{
	return (vma->vm_flags & (VM_SHARED | VM_WRITE)) == (VM_SHARED | VM_WRITE) &&
	       !vma_wants_writenotify(vma);
}

/* pte_modify(pte, newprot) (arch/{x86,arm64}/include/asm/pgtable.h, v5.1)
 * for the write permission, then the dirty_accountable pte_mkwrite() of
 * change_pte_range() */
static pte_t pte_modify_prot(const struct pt_format *fmt, pte_t pte, bool writable,
			     bool dirty_accountable)
{
	if (fmt->rdonly && (pte & PTE_WRITE) && !(pte & PTE_RDONLY))
		pte |= PTE_DIRTY;		/* pte_hw_dirty -> pte_mkdirty */
	pte &= ~PTE_WRITE;
	if (writable)
		pte |= PTE_WRITE;
	if (fmt->rdonly)
		pte |= PTE_RDONLY;		/* every arm64 user protection */
	if (dirty_accountable && (pte & PTE_DIRTY)) {
		pte |= PTE_WRITE;		/* pte_mkwrite() */
		if (fmt->rdonly)
			pte &= ~PTE_RDONLY;
	}
	return pte;
}

/*
 * change_pte_range() (mm/mprotect.c, v5.1) for the PTEs of [addr, end), all
 * in one PTE table: take the PTE lock (pte_offset_map_lock), rewrite each
 * present PTE (ptep_modify_prot_start is an atomic exchange that clears it,
 * ptep_modify_prot_commit stores the new value), drop the lock. Returns the
 * present PTEs it rewrote (the kernel's `pages`), whether or not the value
 * changed.
 */
static uint64_t change_pte_range(struct sim *s, struct vm_area_struct *vma, uint64_t addr,
				 uint64_t end, bool writable, bool dirty_accountable)
{
	struct hw *hw = hw_of(s);
	const struct pt_geom *g = &hw->geom;
	struct mm_struct *mm = vma->vm_mm;
	pte_t *first = pte_lookup(s, mm, addr);
	if (!first)
		return 0;		/* pmd_none: no PTE table here */
	sim_step_arg(s, YP_PTE, (uint64_t)P(s, P_lock_op_ns), addr, 0);	/* the PTE lock */
	ptl_lock(s, pte_table_of(s, mm, addr));
	first = pte_lookup(s, mm, addr);
	if (!first) {
		ptl_unlock(s);
		return 0;
	}
	/* flush_tlb_batched_pending(vma->vm_mm) under the PTL (3ea277194daa,
	 * v4.11): a PTE reclaim cleared without a flush would be skipped below
	 * as not present while a CPU still caches it */
	if (machine_of(s)->policy.ubc_check_mprotect)
		flush_tlb_batched_pending(s, mm);
	pte_t *table = first - pt_index(g, g->levels - 1, addr);
	uint64_t i0 = pt_index(g, g->levels - 1, addr);
	uint64_t n = (end - addr) >> g->page_shift;
	uint64_t pages = 0;
	sim_charge(s, n * (uint64_t)P(s, P_pte_scan_ns));
	for (uint64_t i = table_next_used(g, table, i0, i0 + n); i < i0 + n;
	     i = table_next_used(g, table, i + 1, i0 + n)) {
		pte_t old = table[i];
		if (!pte_present(old))
			continue;
		table[i] = pte_modify_prot(hw->fmt, old, writable, dirty_accountable);
		sim_charge(s, (uint64_t)P(s, P_lock_op_ns));	/* the exchange */
		pages++;
	}
	ptl_unlock(s);
	return pages;
}

/*
 * change_protection() -> change_protection_range() (mm/mprotect.c, v5.1):
 * inc_tlb_flush_pending(); change_pte_range() per PTE table of the range;
 * if any PTE was rewritten, flush_tlb_range(vma, start, end) - the whole
 * range, whatever was present; dec_tlb_flush_pending(). Returns `pages`.
 */
/*
 * hugetlb_change_protection() (mm/hugetlb.c, v5.1 with dff11abe280b): under
 * i_mmap_rwsem (write) a shared PMD table is unshared (huge_pmd_unshare),
 * the other PTEs changed; then, before the unlock, flush_hugetlb_tlb_range()
 * - x86's flush_tlb_range, whose freed_tables argument is the knob
 * x86_range_freed - over the PUD range when a table was unshared.
 */
static uint64_t hugetlb_change_protection(struct sim *s, struct vm_area_struct *vma,
					  uint64_t start, uint64_t end, bool writable,
					  bool dirty_accountable)
{
	struct mm_struct *mm = vma->vm_mm;
	struct hw *hw = hw_of(s);
	const struct pt_geom *g = &hw->geom;
	uint64_t pud_size = 1ull << g->pud_shift, span = g->ptrs_per_pte << g->page_shift;
	uint64_t f_start = start, f_end = end, pages = 0;
	bool shared_pmd = false;
	down_write(s, &vma->file->i_mmap_rwsem);
	for (uint64_t a = start, next; a < end; a = next) {
		next = (a & ~(span - 1)) + span;
		if (next > end || next < a)
			next = end;
		if (g->depth_pud >= 0) {
			uint32_t t = mm->pgd;
			for (int d = 0; d < g->depth_pud && t != NO_FRAME; d++) {
				pte_t e = table_of(hw, t)[pt_index(g, d, a)];
				t = pte_present(e) ? pte_pfn(e) : NO_FRAME;
			}
			if (t != NO_FRAME && huge_pmd_unshare(s, t, pt_index(g, g->depth_pud, a))) {
				shared_pmd = true;
				pages++;
				uint64_t base = a & ~(pud_size - 1);
				if (base < f_start)
					f_start = base;
				if (base + pud_size > f_end)
					f_end = base + pud_size;
				next = base + pud_size;
				continue;
			}
		}
		pages += change_pte_range(s, vma, a, next, writable, dirty_accountable);
	}
	/* flush before releasing i_mmap_rwsem: the unshared table's last user
	 * may free it right after */
	if (shared_pmd)
		machine_of(s)->arch->flush_tlb_range(s, &mm->context, f_start, f_end);
	else if (pages)
		machine_of(s)->arch->flush_tlb_range(s, &mm->context, start, end);
	up_write(s, &vma->file->i_mmap_rwsem);
	return pages;
}

static uint64_t change_protection(struct sim *s, struct vm_area_struct *vma, uint64_t start,
				  uint64_t end, bool dirty_accountable)
{
	struct mm_struct *mm = vma->vm_mm;
	const struct pt_geom *g = &hw_of(s)->geom;
	bool writable = page_prot_writable(vma);
	if ((vma->vm_flags & VM_HUGETLB) && vma->file)
		return hugetlb_change_protection(s, vma, start, end, writable, dirty_accountable);
	uint64_t span = g->ptrs_per_pte << g->page_shift;	/* one PTE table's reach */
	/* inc_tlb_flush_pending(): an atomic on the line tlb_gather_mmu uses */
	mm->tlb_flush_pending++;
	sim_step(s, YP_PENDING_INC,
		 (uint64_t)P(s, P_lock_op_ns) + line_rmw(s, &mm->flush_pending_line));
	uint64_t pages = 0;
	for (uint64_t a = start, next; a < end; a = next) {
		next = (a & ~(span - 1)) + span;	/* pmd_addr_end() */
		if (next > end || next < a)
			next = end;
		pages += change_pte_range(s, vma, a, next, writable, dirty_accountable);
	}
	/* Only flush the TLB if we actually modified any entries */
	if (pages)
		machine_of(s)->arch->flush_tlb_range(s, &mm->context, start, end);
	/* dec_tlb_flush_pending() */
	sim_step(s, YP_PENDING_DEC,
		 (uint64_t)P(s, P_lock_op_ns) + line_rmw(s, &mm->flush_pending_line));
	mm->tlb_flush_pending--;
	return pages;
}

/*
 * mprotect_fixup() (mm/mprotect.c, v5.1) for mm->vmas[i] and the part
 * [start, end) of it: nothing when the flags do not change; else split off
 * what lies outside the range, set vm_flags, change_protection() with
 * dirty_accountable = vma_wants_writenotify(), and merge a file-backed VMA
 * back with neighbours of the same flags (vma_merge).
 */
static void mprotect_fixup(struct sim *s, struct mm_struct *mm, int i, uint64_t start,
			   uint64_t end, uint32_t newflags)
{
	struct vm_area_struct *vma = mm->vmas[i];
	if (newflags == vma->vm_flags)
		return;
	if (start != vma->vm_start) {
		split_vma(s, mm, i, start);
		i++;
	}
	vma = mm->vmas[i];
	if (end != vma->vm_end)
		split_vma(s, mm, i, end);
	vma = mm->vmas[i];
	vma->vm_flags = newflags;		/* and vma_set_page_prot() */
	change_protection(s, vma, start, end, vma_wants_writenotify(vma));
	if (vma->file)
		vma_merge_file_neighbours(s, mm, i);
}

/*
 * mprotect(addr, len, prot) -> do_mprotect_pkey() (mm/mprotect.c, v5.1):
 * EINVAL for an unaligned start or a range past TASK_SIZE; mmap_sem held for
 * write (down_write_killable); ENOMEM when the range starts or continues in
 * a hole (the VMAs before the hole keep their new protection, as in the
 * kernel); mprotect_fixup() per VMA piece.
 */
int sys_mprotect(struct sim *s, uint64_t addr, uint64_t len, int prot)
{
	struct mm_struct *mm = current_task(s)->mm;
	struct kernel *k = kernel_of(s);
	uint64_t ps = hw_of(s)->geom.page_size;
	int ret = 0;
	sim_set_mode(s, MODE_SYS);
	sim_step_arg(s, YP_SYSCALL, syscall_cost(s), SYS_MPROTECT, addr);
	kernel_entry(s);
	uint64_t cookie = k->hooks && k->hooks->syscall_enter
				  ? k->hooks->syscall_enter(k->hooks_ctx, SYS_MPROTECT) : 0;
	len = (len + ps - 1) & ~(ps - 1);
	uint64_t end = addr + len;
	if ((addr & (ps - 1)) || end < addr || end > hw_of(s)->geom.task_size ||
	    (prot & ~(TLBSIM_PROT_READ | TLBSIM_PROT_WRITE)) || !(prot & TLBSIM_PROT_READ)) {
		ret = -1;
		goto out;
	}
	if (len == 0)
		goto out;
	uint32_t bits = calc_vm_prot_bits(prot);
	down_write(s, &mm->mmap_sem);
	sim_charge(s, (uint64_t)P(s, P_vma_op_ns));	/* find_vma, the walk's setup */
	for (uint64_t nstart = addr; nstart < end;) {
		int i = vma_index(mm, nstart);
		if (i >= mm->nr_vmas || mm->vmas[i]->vm_start > nstart) {
			ret = -1;			/* ENOMEM: a hole */
			break;
		}
		struct vm_area_struct *vma = mm->vmas[i];
		uint64_t tmp = vma->vm_end < end ? vma->vm_end : end;
		uint32_t newflags = (vma->vm_flags & ~(VM_READ | VM_WRITE)) | bits;
		mprotect_fixup(s, mm, i, nstart, tmp, newflags);
		nstart = tmp;
	}
	up_write(s, &mm->mmap_sem);
	if (k->hooks && k->hooks->range_unmapped)
		k->hooks->range_unmapped(k->hooks_ctx, mm, addr, end, SYS_MPROTECT, cookie);
out:
	sim_set_mode(s, MODE_USER);
	return ret;
}
