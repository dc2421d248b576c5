/*
 * fault.c - the page-fault path and the user accesses that take it, v5.8.
 *
 * Mirrors arch/arm64/mm/fault.c do_page_fault() and arch/x86/mm/fault.c
 * do_user_addr_fault() (one function here: the retry loop with
 * FAULT_FLAG_ALLOW_RETRY / FAULT_FLAG_TRIED), and mm/memory.c:
 * handle_mm_fault -> __handle_mm_fault (tables allocated by __pud_alloc /
 * __pmd_alloc / __pte_alloc) -> handle_pte_fault -> do_anonymous_page,
 * do_fault (do_read_fault with do_fault_around, do_cow_fault,
 * do_shared_fault with do_page_mkwrite and fault_dirty_shared_page), do_wp_page
 * (wp_page_reuse, wp_page_shared, wp_page_copy), and for a present PTE the
 * access-flag / spurious-fault path with ptep_set_access_flags and
 * flush_tlb_fix_spurious_fault.
 *
 * The policy knobs: fault_retry (does fault_dirty_shared_page drop mmap_lock
 * and ask for a retry: 89b15332af7c; or report the fault completed:
 * d92725256b4f) and spurious_flush (what the retried fault's spurious branch
 * and an access-flag update flush: b7333b58f358, the NACKed RFC, the arm64
 * v5.10 no-op, cb1fa2e99955's local flush; see the arch back ends).
 */
#include "mm/mm.h"
#include "mm/points.h"

/* __pte_alloc() / __pmd_alloc() / __pud_alloc(): allocate a zeroed table and
 * install it under the page-table lock unless someone else did. Returns the
 * table at depth+1 that va's entry in `table` (at depth) points to. */
uint32_t __pte_alloc(struct sim *s, uint32_t table, int depth, uint64_t va)
{
	struct hw *hw = hw_of(s);
	const struct pt_geom *g = &hw->geom;
	uint64_t idx = pt_index(g, depth, va);
	pte_t e = table_of(hw, table)[idx];
	if (pte_present(e))
		return pte_pfn(e);
	uint32_t nt = alloc_zeroed_frame(s, FRAME_PGTABLE, depth + 1, 0);
	sim_step(s, YP_PTE, (uint64_t)P(s, P_lock_op_ns));
	e = table_of(hw, table)[idx];
	if (pte_present(e)) {		/* lost the race: free ours */
		frame_free(hw, nt);
		return pte_pfn(e);
	}
	set_entry(s, table, idx, pfn_pte(nt, PTE_VALID | PTE_TABLE | PTE_USER));
	/* a PTE table under a shared hugetlb PMD table is shared with it */
	frame_of(hw, nt)->pgflags |= frame_of(hw, table)->pgflags & PG_PT_SHARED;
	return nt;
}

/* What handle_pte_fault and its helpers work on (struct vm_fault, v5.8). */
struct vm_fault {
	struct vm_area_struct *vma;
	uint64_t address;		/* page-aligned */
	unsigned flags;			/* FAULT_FLAG_* */
	uint32_t pte_table;		/* the PTE table (vmf->pmd's target) */
	uint64_t idx;			/* index of the PTE in it */
	uint64_t pgoff;			/* file page index of address */
	pte_t orig_pte;
};

static inline pte_t *vmf_pte(struct sim *s, const struct vm_fault *vmf)
{
	return &table_of(hw_of(s), vmf->pte_table)[vmf->idx];
}

static inline bool vmf_write(const struct vm_fault *vmf)
{
	return vmf->flags & FAULT_FLAG_WRITE;
}

/* vma->vm_page_prot for a user page in the neutral encoding: writable-clean
 * for a shared writable mapping that does not want write notification
 * (tmpfs), read-only otherwise (private mappings; shared ones of a file
 * system with page_mkwrite or dirty accounting). Created young (every arm64
 * user protection has PTE_AF). */
static pte_t vm_page_prot(struct sim *s, const struct vm_area_struct *vma, uint32_t f)
{
	pte_t pte = pfn_pte(f, PTE_VALID | PTE_USER | PTE_YOUNG);
	if ((vma->vm_flags & (VM_SHARED | VM_WRITE)) == (VM_SHARED | VM_WRITE) &&
	    !vma_wants_writenotify(vma))
		pte |= PTE_WRITE;
	return fmt_pte_mkclean(hw_of(s)->fmt, pte);	/* arm64: RDONLY until dirtied */
}

/* mk_pte(page, vm_page_prot), then maybe_mkwrite(pte_mkdirty()) for a write
 * (alloc_set_pte / do_anonymous_page, mm/memory.c v5.8) */
static pte_t mk_pte(struct sim *s, uint32_t f, const struct vm_area_struct *vma, bool write)
{
	pte_t pte = vm_page_prot(s, vma, f);
	if (!write)
		return pte;
	if (vma->vm_flags & VM_WRITE)
		pte |= PTE_WRITE;				/* maybe_mkwrite() */
	return fmt_pte_mkdirty(hw_of(s)->fmt, pte);		/* pte_mkdirty() */
}

/* alloc_set_pte() under the PTE lock (finish_fault / do_anonymous_page /
 * do_fault_around): install frame f at the fault address unless someone else
 * did meanwhile. The caller's page reference goes to the mapping, or is
 * dropped when it lost. VM_FAULT_NOPAGE when it lost the race. */
static vm_fault_t install_page(struct sim *s, struct vm_fault *vmf, uint32_t f, bool write)
{
	struct kernel *k = kernel_of(s);
	sim_step(s, YP_PTE, (uint64_t)P(s, P_lock_op_ns));	/* pte_offset_map_lock */
	if (!pte_none(*vmf_pte(s, vmf))) {		/* raced: someone installed it */
		struct frame *fr = frame_of(hw_of(s), f);
		if (--fr->refcount == 0)
			frame_free(hw_of(s), f);
		return VM_FAULT_NOPAGE;
	}
	set_entry(s, vmf->pte_table, vmf->idx, mk_pte(s, f, vmf->vma, write));
	if (k->hooks && k->hooks->page_mapped)
		k->hooks->page_mapped(k->hooks_ctx, f, write);
	return 0;
}

/* do_anonymous_page() (mm/memory.c, v5.8): a read maps the shared zero page
 * read-only (my_zero_pfn + pte_mkspecial: no allocation, no refcount, no
 * rmap); a write allocates a zeroed private page */
static vm_fault_t do_anonymous_page(struct sim *s, struct vm_fault *vmf)
{
	if (!vmf_write(vmf)) {
		struct kernel *k = kernel_of(s);
		if (k->zero_frame == NO_FRAME)
			k->zero_frame = alloc_frame(s, FRAME_DATA, 0);
		sim_step(s, YP_PTE, (uint64_t)P(s, P_lock_op_ns));	/* pte_offset_map_lock */
		if (pte_none(*vmf_pte(s, vmf)))
			set_entry(s, vmf->pte_table, vmf->idx,
				  fmt_pte_mkclean(hw_of(s)->fmt,
						  pfn_pte(k->zero_frame, PTE_VALID | PTE_USER | PTE_YOUNG)));
		return 0;
	}
	uint32_t f = alloc_zeroed_frame(s, FRAME_DATA, 0, 0);
	frame_of(hw_of(s), f)->pgflags |= PG_ANON;
	return install_page(s, vmf, f, vmf_write(vmf));
}

/* __do_fault() -> filemap_fault / shmem_fault: the page-cache page, with a
 * reference for the mapping (get_page) */
static uint32_t __do_fault(struct sim *s, struct vm_fault *vmf)
{
	uint32_t f = filemap_getpage(s, vmf->vma->file, vmf->pgoff);
	frame_of(hw_of(s), f)->refcount++;
	return f;
}

/*
 * fault_dirty_shared_page() (mm/memory.c, 89b15332af7c): dirty the page; if
 * it was newly dirtied or the filesystem has page_mkwrite, throttle dirty
 * pages (balance_dirty_pages_ratelimited). With fault_retry=dirty_throttle
 * or completed, on the first attempt (maybe_unlock_mmap_for_io: ALLOW_RETRY
 * and not TRIED) mmap_lock is dropped first and VM_FAULT_RETRY (or, from
 * v6.0, VM_FAULT_COMPLETED) is returned; on a TRIED attempt nothing is
 * dropped. Before 89b15332af7c the throttle ran with mmap_lock held.
 */
static vm_fault_t fault_dirty_shared_page(struct sim *s, struct vm_fault *vmf, uint32_t f)
{
	struct inode *ino = vmf->vma->file;
	bool dirtied = set_page_dirty(s, ino, f);
	unlock_page(s, f);		/* locked by the caller since page_mkwrite */
	if (!dirtied && !ino->fs->page_mkwrite)
		return 0;
	enum fault_retry_policy pol = machine_of(s)->policy.fault_retry;
	bool fpin = pol != FAULT_RETRY_NONE && (vmf->flags & FAULT_FLAG_ALLOW_RETRY) &&
		    !(vmf->flags & FAULT_FLAG_TRIED);
	if (fpin)
		up_read(s, &vmf->vma->vm_mm->mmap_sem);
	balance_dirty_pages_ratelimited(s, ino);
	if (!fpin)
		return 0;
	return pol == FAULT_RETRY_COMPLETED ? VM_FAULT_COMPLETED : VM_FAULT_RETRY;
}

/* do_page_mkwrite() -> ->page_mkwrite (ext4_page_mkwrite ->
 * block_page_mkwrite, which dirties the page) */
static void do_page_mkwrite(struct sim *s, struct vm_fault *vmf, uint32_t f)
{
	s->m.page_mkwrite++;
	sim_step_arg(s, YP_PAGE_MKWRITE, (uint64_t)P(s, P_page_mkwrite_ns), vmf->address, 0);
	set_page_dirty(s, vmf->vma->file, f);
}

/* do_fault_around() -> filemap_map_pages() (mm/memory.c, mm/filemap.c):
 * map, read-only (vm_page_prot), every cached page of the fault_around_bytes
 * window whose PTE is none, within the VMA and this PTE table */
static void do_fault_around(struct sim *s, struct vm_fault *vmf)
{
	struct hw *hw = hw_of(s);
	const struct pt_geom *g = &hw->geom;
	struct vm_area_struct *vma = vmf->vma;
	uint64_t nr = (uint64_t)P(s, P_fault_around_bytes) >> g->page_shift;
	uint64_t span = nr << g->page_shift;
	uint64_t start = vmf->address & ~(span - 1);
	if (start < vma->vm_start)
		start = vma->vm_start;
	uint64_t table_end = (vmf->address | ((g->ptrs_per_pte << g->page_shift) - 1)) + 1;
	uint64_t end = start + span;
	if (end > vma->vm_end)
		end = vma->vm_end;
	if (end > table_end || end < start)
		end = table_end;
	sim_step(s, YP_PTE, (uint64_t)P(s, P_lock_op_ns));	/* the PTE lock */
	for (uint64_t a = start; a < end; a += g->page_size) {
		uint64_t idx = pt_index(g, g->levels - 1, a);
		if (!pte_none(table_of(hw, vmf->pte_table)[idx]))
			continue;
		uint64_t pgoff = vma->vm_pgoff + ((a - vma->vm_start) >> g->page_shift);
		uint32_t f = find_get_page(s, vma->file, pgoff);
		if (f == NO_FRAME)
			continue;
		sim_charge(s, (uint64_t)P(s, P_pagecache_lookup_ns));
		frame_of(hw, f)->refcount++;
		set_entry(s, vmf->pte_table, idx, vm_page_prot(s, vma, f));
		struct kernel *k = kernel_of(s);
		if (k->hooks && k->hooks->page_mapped)
			k->hooks->page_mapped(k->hooks_ctx, f, false);
	}
}

/* do_read_fault() (mm/memory.c, v5.8) */
static vm_fault_t do_read_fault(struct sim *s, struct vm_fault *vmf)
{
	if ((uint64_t)P(s, P_fault_around_bytes) >> hw_of(s)->geom.page_shift > 1) {
		do_fault_around(s, vmf);
		if (!pte_none(*vmf_pte(s, vmf)))
			return VM_FAULT_NOPAGE;
	}
	uint32_t f = __do_fault(s, vmf);
	return install_page(s, vmf, f, false);
}

/* do_cow_fault() (mm/memory.c, v5.8): a private write to a file page copies
 * it into a new anonymous page; no dirtying, no retry, no flush */
static vm_fault_t do_cow_fault(struct sim *s, struct vm_fault *vmf)
{
	struct hw *hw = hw_of(s);
	sim_charge(s, (uint64_t)P(s, P_page_alloc_ns));
	uint32_t cow = alloc_frame(s, FRAME_DATA, 0);
	frame_of(hw, cow)->pgflags |= PG_ANON;
	uint32_t f = __do_fault(s, vmf);
	sim_charge(s, (uint64_t)P(s, P_copy_4k_ns) * (hw->geom.page_size >> 12));
	struct frame *fr = frame_of(hw, f);		/* put_page of the file page */
	if (--fr->refcount == 0)
		frame_free(hw, f);
	return install_page(s, vmf, cow, true);
}

/* do_shared_fault() (mm/memory.c, v5.8) */
static vm_fault_t do_shared_fault(struct sim *s, struct vm_fault *vmf)
{
	uint32_t f = __do_fault(s, vmf);
	/* locked from page_mkwrite (block_page_mkwrite's lock_page, returned
	 * VM_FAULT_LOCKED), or from filemap_fault without one, until
	 * fault_dirty_shared_page */
	lock_page(s, f);
	if (vmf->vma->file->fs->page_mkwrite)
		do_page_mkwrite(s, vmf, f);
	vm_fault_t ret = install_page(s, vmf, f, true);	/* finish_fault */
	if (ret & VM_FAULT_NOPAGE) {
		unlock_page(s, f);
		return ret;
	}
	return ret | fault_dirty_shared_page(s, vmf, f);
}

/* do_fault() (mm/memory.c, v5.8) */
static vm_fault_t do_fault(struct sim *s, struct vm_fault *vmf)
{
	if (!vmf_write(vmf))
		return do_read_fault(s, vmf);
	if (!(vmf->vma->vm_flags & VM_SHARED))
		return do_cow_fault(s, vmf);
	return do_shared_fault(s, vmf);
}

static void page_dirtied(struct sim *s, uint32_t f)
{
	struct kernel *k = kernel_of(s);
	if (k->hooks && k->hooks->page_dirtied)
		k->hooks->page_dirtied(k->hooks_ctx, f);
}

/* wp_page_reuse() (mm/memory.c): make the present PTE young, dirty and
 * writable; ptep_set_access_flags() flushes as the arch and knob say */
static vm_fault_t wp_page_reuse(struct sim *s, struct vm_fault *vmf, pte_t *ptep)
{
	const struct pt_format *fmt = hw_of(s)->fmt;
	struct vm_area_struct *vma = vmf->vma;
	pte_t entry = *ptep | PTE_YOUNG;			/* pte_mkyoung() */
	entry = fmt_pte_mkdirty(fmt, entry | PTE_WRITE);	/* maybe_mkwrite(pte_mkdirty()) */
	page_dirtied(s, pte_pfn(entry));
	if (machine_of(s)->arch->ptep_set_access_flags(s, &vma->vm_mm->context, vmf->address, ptep,
						       entry, true))
		s->m.af_faults++;
	return VM_FAULT_WRITE;
}

/* wp_page_copy() (mm/memory.c): copy into a new anonymous page; replace the
 * PTE with ptep_clear_flush_notify() (a real flush_tlb_page on every arch) */
static vm_fault_t wp_page_copy(struct sim *s, struct vm_fault *vmf)
{
	struct hw *hw = hw_of(s);
	struct vm_area_struct *vma = vmf->vma;
	bool from_zero = is_zero_frame(s, pte_pfn(vmf->orig_pte));
	/* from the zero page: alloc_zeroed_user_highpage_movable; else a copy */
	uint32_t nf;
	if (from_zero)
		nf = alloc_zeroed_frame(s, FRAME_DATA, 0, 0);
	else {
		nf = alloc_frame(s, FRAME_DATA, 0);
		sim_charge(s, (uint64_t)P(s, P_page_alloc_ns) +
				      (uint64_t)P(s, P_copy_4k_ns) * (hw->geom.page_size >> 12));
	}
	frame_of(hw, nf)->pgflags |= PG_ANON;
	if (!from_zero) {
		/* cow_user_page(): the I3 point - a write into the old page
		 * through a stale writable entry from now on is not in the copy */
		struct kernel *k = kernel_of(s);
		sim_trace(s, YP_PROT, vmf->address,
			  (uint64_t)PROT_STEP_COW_COPY | (uint64_t)vma->vm_mm->tlb_flush_pending << 8);
		if (k->hooks && k->hooks->page_copied)
			k->hooks->page_copied(k->hooks_ctx, pte_pfn(vmf->orig_pte), nf, false);
	}
	sim_step(s, YP_PTE, (uint64_t)P(s, P_lock_op_ns));
	pte_t *ptep = vmf_pte(s, vmf);
	if (*ptep != vmf->orig_pte) {			/* !pte_same: someone else did it */
		if (--frame_of(hw, nf)->refcount == 0)
			frame_free(hw, nf);
		return 0;
	}
	uint32_t old = pte_pfn(*ptep);
	*ptep = mk_pte(s, nf, vma, true);
	s->m.cow_faults++;
	machine_of(s)->arch->flush_tlb_page(s, &vma->vm_mm->context, vmf->address);
	struct kernel *k = kernel_of(s);
	if (k->hooks && k->hooks->page_mapped)
		k->hooks->page_mapped(k->hooks_ctx, nf, true);
	if (!from_zero) {
		struct frame *of = frame_of(hw, old);	/* page_remove_rmap + put_page */
		if (--of->refcount == 0)
			frame_free(hw, old);
	}
	return VM_FAULT_WRITE;
}

/* wp_page_shared() (mm/memory.c, v5.8): a write to a read-only PTE of a
 * shared file page: ->page_mkwrite (outside the PTE lock), then reuse the
 * PTE if it did not change, then fault_dirty_shared_page() */
static vm_fault_t wp_page_shared(struct sim *s, struct vm_fault *vmf)
{
	uint32_t f = pte_pfn(vmf->orig_pte);
	frame_of(hw_of(s), f)->refcount++;		/* get_page */
	lock_page(s, f);	/* page_mkwrite's, or wp_page_shared's own lock_page */
	if (vmf->vma->file->fs->page_mkwrite) {
		do_page_mkwrite(s, vmf, f);
		sim_step(s, YP_PTE, (uint64_t)P(s, P_lock_op_ns));	/* finish_mkwrite_fault */
		if (*vmf_pte(s, vmf) != vmf->orig_pte) {
			unlock_page(s, f);
			struct frame *fr = frame_of(hw_of(s), f);
			if (--fr->refcount == 0)
				frame_free(hw_of(s), f);
			return VM_FAULT_NOPAGE;
		}
	}
	vm_fault_t ret = wp_page_reuse(s, vmf, vmf_pte(s, vmf));
	ret |= fault_dirty_shared_page(s, vmf, f);
	struct frame *fr = frame_of(hw_of(s), f);		/* put_page */
	if (--fr->refcount == 0)
		frame_free(hw_of(s), f);
	return ret;
}

/* do_wp_page() (mm/memory.c, v5.8): a write to a present read-only PTE; an
 * anonymous page is reused if it is not a KSM page and has one reference,
 * after waiting for its page lock if another holder (KSM) has it.
 * userfaultfd (v5.7+, v5.12): a PTE with the uffd-wp bit goes to
 * handle_userfault(VM_UFFD_WP), modelled with UFFD_FEATURE_SIGBUS (no
 * monitor thread: the access fails); in a VMA registered for write-protect,
 * while a flush of the mm is pending, flush_tlb_page() before anything is
 * copied - knob uffd_wp_flush (6ce64428d621 "mm/userfaultfd: fix memory
 * corruption due to writeprotect", v5.12): UFFDIO_WRITEPROTECT changes PTEs
 * under mmap_lock for read and flushes after, so a CPU may still write
 * through the old writable entry while this fault copies the page. */
static vm_fault_t do_wp_page(struct sim *s, struct vm_fault *vmf, pte_t *ptep)
{
	struct vm_area_struct *vma = vmf->vma;
	struct mm_struct *mm = vma->vm_mm;
	if ((vma->vm_flags & VM_UFFD_WP) && (vmf->orig_pte & PTE_UFFD_WP)) {
		sim_trace(s, YP_PROT, vmf->address,
			  (uint64_t)PROT_STEP_USERFAULT | (uint64_t)mm->tlb_flush_pending << 8);
		return VM_FAULT_SIGBUS;			/* userfaultfd_pte_wp */
	}
	if ((vma->vm_flags & VM_UFFD_WP) && mm->tlb_flush_pending > 0 &&
	    machine_of(s)->policy.uffd_wp_flush == UFFD_WP_FLUSH_PENDING) {
		sim_trace(s, YP_PROT, vmf->address,
			  (uint64_t)PROT_STEP_WP_FLUSH | (uint64_t)mm->tlb_flush_pending << 8);
		machine_of(s)->arch->flush_tlb_page(s, &mm->context, vmf->address);
	}
	if (is_zero_frame(s, pte_pfn(vmf->orig_pte)))
		return wp_page_copy(s, vmf);		/* vm_normal_page() is NULL */
	struct frame *fr = frame_of(hw_of(s), pte_pfn(vmf->orig_pte));
	if (vma->file && !(fr->pgflags & PG_ANON)) {
		if ((vma->vm_flags & (VM_SHARED | VM_WRITE)) == (VM_SHARED | VM_WRITE))
			return wp_page_shared(s, vmf);
		return wp_page_copy(s, vmf);			/* private file page: COW */
	}
	if (fr->pgflags & PG_KSM)
		return wp_page_copy(s, vmf);			/* PageKsm: always copied */
	if (fr->pgflags & PG_LOCKED) {
		/* !trylock_page(): drop the PTE lock, lock_page() (KSM holds it
		 * while it write-protects and merges the page), retake the PTE
		 * lock and give up if the PTE changed meanwhile */
		uint32_t f = pte_pfn(vmf->orig_pte);
		fr->refcount++;					/* get_page */
		lock_page(s, f);
		sim_step(s, YP_PTE, (uint64_t)P(s, P_lock_op_ns));
		bool same = *vmf_pte(s, vmf) == vmf->orig_pte;
		unlock_page(s, f);
		if (--fr->refcount == 0)			/* put_page */
			frame_free(hw_of(s), f);
		if (!same)
			return 0;			/* the access retries */
		ptep = vmf_pte(s, vmf);
		if (fr->pgflags & PG_KSM)
			return wp_page_copy(s, vmf);
	}
	if (fr->refcount == 1) {				/* reuse_swap_page() */
		fr->pgflags &= (uint8_t)~PG_DUPED;	/* page_move_anon_rmap: exclusive */
		return wp_page_reuse(s, vmf, ptep);
	}
	return wp_page_copy(s, vmf);
}

/*
 * handle_pte_fault() for a present PTE (mm/memory.c, v5.8, b7333b58f358):
 * under the PTE lock, a PTE that is no longer the one read before the lock
 * (!pte_same) ends the fault with nothing done; otherwise a write to a read-only PTE goes to do_wp_page();
 * otherwise the PTE is made young (and dirty for a write) with
 * ptep_set_access_flags(). If nothing changed the fault was spurious: for a
 * write, flush_tlb_fix_spurious_fault() - unless the knob skips it for a
 * retried (TRIED) fault. The NACKed RFC (skip_af_update) returned for a TRIED
 * fault before pte_mkdirty/pte_mkyoung and the whole update.
 */
static vm_fault_t handle_present_pte(struct sim *s, struct vm_fault *vmf)
{
	struct kernel *k = kernel_of(s);
	const struct arch_ops *arch = machine_of(s)->arch;
	enum spurious_flush_policy pol = machine_of(s)->policy.spurious_flush;
	struct mm_struct *mm = vmf->vma->vm_mm;
	bool tried = vmf->flags & FAULT_FLAG_TRIED;
	sim_step(s, YP_PTE, (uint64_t)P(s, P_lock_op_ns));
	pte_t *ptep = vmf_pte(s, vmf);
	pte_t entry = *ptep;
	/* !pte_same() against the unlocked read: someone changed the PTE
	 * between the read and the lock (update_mmu_tlb() is a no-op on x86
	 * and arm64); nothing is done, the access retries and faults again
	 * if it still must */
	if (entry != vmf->orig_pte || !pte_present(entry))
		return 0;
	if (vmf_write(vmf) && !(entry & PTE_WRITE))
		return do_wp_page(s, vmf, ptep);
	if (tried && pol == SPURIOUS_SKIP_AF_UPDATE)
		return 0;
	if (vmf_write(vmf)) {
		entry = fmt_pte_mkdirty(hw_of(s)->fmt, entry);	/* pte_mkdirty() */
		if (k->hooks && k->hooks->page_dirtied)
			k->hooks->page_dirtied(k->hooks_ctx, pte_pfn(entry));
	}
	entry |= PTE_YOUNG;					/* pte_mkyoung() */
	if (arch->ptep_set_access_flags(s, &mm->context, vmf->address, ptep, entry, vmf_write(vmf))) {
		s->m.af_faults++;
		return 0;
	}
	s->m.spurious_faults++;
	if (tried && pol == SPURIOUS_SKIP_TRIED)
		return 0;
	if (vmf_write(vmf)) {
		unsigned n = arch->flush_tlb_fix_spurious_fault(s, &mm->context, vmf->address);
		s->m.spurious_flushes += n;
		sim_trace(s, TR_SPURIOUS, vmf->address, n);
	}
	return 0;
}

/*
 * do_numa_page() (mm/memory.c, v5.14, b99a342d4f11): the NUMA-hinting fault
 * on a PTE the scan made PROT_NONE (numa_scan, mprotect.c). Under the PTE
 * lock, if the PTE is still the one that faulted: when the page is
 * misplaced (the scan said so) it is migrated with the PTE still PROT_NONE
 * (migrate_misplaced_page, migrate.c), which maps the new page; otherwise,
 * or when migration fails, the PTE is restored - pte_modify(vm_page_prot),
 * young, and writable again if the scan preserved the write bit
 * (pte_savedwrite): no flush, the PTE only gains permissions. Before
 * b99a342d4f11 (v5.14) the PTE was restored first and the page migrated
 * from a present PTE, whose unmap always flushes; the model runs the v5.14
 * order for every kernel.
 */
static vm_fault_t do_numa_page(struct sim *s, struct vm_fault *vmf)
{
	struct hw *hw = hw_of(s);
	struct vm_area_struct *vma = vmf->vma;
	struct mm_struct *mm = vma->vm_mm;
	sim_step_arg(s, YP_PROT, (uint64_t)P(s, P_lock_op_ns), vmf->address,
		     (uint64_t)PROT_STEP_NUMA_FAULT | (uint64_t)mm->tlb_flush_pending << 8);
	pte_t old = *vmf_pte(s, vmf);
	if (old != vmf->orig_pte)
		return 0;				/* !pte_same: the access retries */
	uint32_t f = pte_pfn(old);
	if (mm->numa_misplaced && !is_zero_frame(s, f) &&
	    migrate_misplaced_page(s, vma, vmf->address, f) == 0)
		return 0;				/* TNF_MIGRATED */
	if (mm->numa_misplaced) {
		/* TNF_MIGRATE_FAIL: retake the PTE lock, give up if it changed */
		sim_step(s, YP_PTE, (uint64_t)P(s, P_lock_op_ns));
		if (*vmf_pte(s, vmf) != old)
			return 0;
	}
	/* out_map: ptep_modify_prot_start / pte_modify / pte_mkyoung /
	 * pte_mkwrite if was_writable / ptep_modify_prot_commit */
	pte_t pte = (old & ~PTE_PROTNONE) | PTE_VALID | PTE_YOUNG;
	if (hw->fmt->rdonly && (pte & PTE_WRITE))
		pte &= ~PTE_RDONLY;			/* arm64 pte_mkwrite */
	*vmf_pte(s, vmf) = pte;
	sim_charge(s, (uint64_t)P(s, P_lock_op_ns));	/* the exchange */
	sim_trace(s, YP_PROT, vmf->address,
		  (uint64_t)PROT_STEP_NUMA_RESTORE | (uint64_t)mm->tlb_flush_pending << 8);
	return 0;
}

/* migration_entry_wait() (mm/migrate.c): hold the page, wait until the
 * migration unlocks it (put_and_wait_on_page_locked), and let the access
 * retry */
static vm_fault_t migration_entry_wait(struct sim *s, uint32_t f)
{
	struct frame *fr = frame_of(hw_of(s), f);
	if (fr->state != FRAME_DATA || !(fr->pgflags & PG_LOCKED))
		return 0;
	fr->refcount++;					/* get_page_unless_zero */
	lock_page(s, f);
	unlock_page(s, f);
	if (--fr->refcount == 0)			/* put_page */
		frame_free(hw_of(s), f);
	return 0;
}

/*
 * handle_mm_fault() -> __handle_mm_fault() -> handle_pte_fault() (mm/memory.c,
 * v5.8): allocate missing tables, then for a none PTE do_anonymous_page() or
 * do_fault(), for a migration entry migration_entry_wait() (do_swap_page),
 * for a PROT_NONE PTE of an accessible VMA do_numa_page(), and for a
 * present PTE the paths above.
 */
vm_fault_t handle_mm_fault(struct sim *s, struct vm_area_struct *vma, uint64_t address,
			   unsigned flags)
{
	const struct pt_geom *g = &hw_of(s)->geom;
	struct mm_struct *mm = vma->vm_mm;
	uint32_t table = mm->pgd;
	for (int d = 0; d < g->levels - 1; d++) {
		/* __handle_mm_fault (v5.1): a none PMD entry of a THP-enabled
		 * VMA -> create_huge_pmd(); a huge one the MMU faulted on ->
		 * huge_pmd_fault() (do_huge_pmd_numa_page for a PROT_NONE
		 * one, do_huge_pmd_wp_page or huge_pmd_set_accessed), which
		 * may split it and fall back to the PTE path below */
		if (d == g->depth_pmd) {
			pte_t pmd = table_of(hw_of(s), table)[pt_index(g, d, address)];
			if (pmd_trans_huge_entry(pmd)) {
				vm_fault_t r = huge_pmd_fault(s, vma, table, address,
							      flags & FAULT_FLAG_WRITE);
				if (!(r & VM_FAULT_FALLBACK))
					return r;
			}
			if (pte_none(pmd) && thp_vma_suitable(s, vma, address)) {
				vm_fault_t r = do_huge_pmd_anonymous_page(s, vma, table, address);
				if (r != VM_FAULT_NOPAGE)
					return r;
				if (pmd_trans_huge_entry(table_of(hw_of(s), table)[pt_index(g, d, address)]))
					return 0;
			}
		}
		/* huge_pte_alloc() (mm/hugetlb.c, v5.1): a shareable hugetlb
		 * VMA first looks for a PMD table to share */
		if (d == g->depth_pud && (vma->vm_flags & VM_HUGETLB) &&
		    pte_none(table_of(hw_of(s), table)[pt_index(g, d, address)])) {
			uint32_t shared = huge_pmd_share(s, vma, address, table);
			if (shared != NO_FRAME) {
				table = shared;
				continue;
			}
		}
		table = __pte_alloc(s, table, d, address);
	}

	uint64_t page = address & ~(g->page_size - 1);
	struct vm_fault vmf = {
		.vma = vma,
		.address = page,
		.flags = flags,
		.pte_table = table,
		.idx = pt_index(g, g->levels - 1, address),
		.pgoff = vma->vm_pgoff + ((page - vma->vm_start) >> g->page_shift),
	};
	pte_t pte = *vmf_pte(s, &vmf);
	/* a VM_PFNMAP / VM_MIXEDMAP VMA whose driver maps everything at mmap
	 * time (remap_pfn_range) and has no fault handler: SIGBUS */
	if (pte_none(pte) && (vma->vm_flags & (VM_PFNMAP | VM_MIXEDMAP)))
		return VM_FAULT_SIGBUS;
	if (pte_none(pte))
		return vma->file ? do_fault(s, &vmf) : do_anonymous_page(s, &vmf);
	if (pte & PTE_MIGRATION)
		return migration_entry_wait(s, pte_pfn(pte));
	if (pte & PTE_PROTNONE) {
		vmf.orig_pte = pte;
		return do_numa_page(s, &vmf);
	}
	vmf.orig_pte = pte;			/* the unlocked read */
	return handle_present_pte(s, &vmf);
}

/*
 * do_page_fault() (arch/arm64/mm/fault.c) / do_user_addr_fault()
 * (arch/x86/mm/fault.c), v5.8: enter the kernel once (fault_ns), take mmap_sem
 * for read, find the VMA, call handle_mm_fault(); on VM_FAULT_RETRY (the lock
 * was dropped) try again with FAULT_FLAG_TRIED; on VM_FAULT_COMPLETED (v6.0)
 * return without the lock. -1 for an address outside any VMA, or an access
 * the VMA's protection refuses (SIGSEGV: not delivered; user_access reports
 * it to the workload).
 */
static int do_page_fault(struct sim *s, struct mm_struct *mm, uint64_t va, bool write)
{
	unsigned flags = FAULT_FLAG_DEFAULT | FAULT_FLAG_USER | (write ? FAULT_FLAG_WRITE : 0);
	sim_set_mode(s, MODE_SYS);
	sim_step_arg(s, YP_FAULT, (uint64_t)P(s, P_fault_ns), va, write);
	kernel_entry(s);
	for (;;) {
		down_read(s, &mm->mmap_sem);
		struct vm_area_struct *vma = find_vma(mm, va);
		/* bad_area, and access_error() (x86) / the VM_FAULT_BADACCESS
		 * vm_flags test of __do_page_fault (arm64): a write to a VMA
		 * without VM_WRITE, or any access to one without VM_READ */
		if (!vma || va < vma->vm_start ||
		    !(vma->vm_flags & (write ? VM_WRITE : VM_READ | VM_WRITE))) {
			up_read(s, &mm->mmap_sem);
			sim_set_mode(s, MODE_USER);
			return -1;
		}
		vm_fault_t fault = handle_mm_fault(s, vma, va, flags);
		if (fault & VM_FAULT_SIGBUS) {		/* handle_userfault, UFFD_FEATURE_SIGBUS */
			up_read(s, &mm->mmap_sem);
			sim_set_mode(s, MODE_USER);
			return -1;
		}
		if (fault & VM_FAULT_COMPLETED)
			break;				/* the lock is already dropped */
		if ((fault & VM_FAULT_RETRY) && (flags & FAULT_FLAG_ALLOW_RETRY)) {
			flags |= FAULT_FLAG_TRIED;	/* the lock is already dropped */
			s->m.fault_retries++;
			sim_trace(s, TR_FAULT_RETRY, va, flags);
			continue;
		}
		up_read(s, &mm->mmap_sem);
		break;
	}
	sim_set_mode(s, MODE_USER);
	return 0;
}

/* user_access()'s fault path, out of line so that the hit path stays small */
static int user_access_fault(struct sim *s, struct sim_thread *t,
			     struct mm_struct *mm, uint64_t va, bool write,
			     pte_t live_pte)
{
	struct kernel *k = kernel_of(s);
	s->m.page_faults++;
	if (k->hooks && k->hooks->user_fault)
		k->hooks->user_fault(k->hooks_ctx, t->cpu, va, live_pte);
	return do_page_fault(s, mm, va, write);
}

/*
 * A user-mode access by the current task: translate through the MMU; on a
 * fault enter the kernel (do_page_fault), then retry the access.
 */
int user_access(struct sim *s, uint64_t va, bool write)
{
	struct sim_thread *t = sim_current(s);
	struct mm_struct *mm = task_of(t)->mm;
	struct machine *mc = machine_of(s);
	for (;;) {
		struct hw_access acc;
		hw_access(&mc->hw, t->cpu, mm->pgd, arch_user_tag(s, t->cpu), va, write, &acc);
		if (acc.levels_read)
			sim_charge(s, (uint64_t)acc.levels_read * (uint64_t)P(s, P_walk_level_ns));
		if (!acc.fault) {
			sim_step_arg(s, YP_USER, (uint64_t)P(s, P_user_access_ns), va, write);
			return 0;
		}
		if (user_access_fault(s, t, mm, va, write, acc.live_pte))
			return -1;
	}
}

/*
 * user_access() over n pages that a stretch of user code touches without a
 * system call between them (a loop's text, its libc and stack pages): the
 * same translations, fills and walks, page by page, but one user-mode step
 * for the stretch - its walks charged together, then n x user_access_ns -
 * instead of one per page. Nothing of the model happens between two such
 * touches (they are nanoseconds apart), and a step per page made the
 * working set the run's most frequent yield point. A page that faults ends
 * the stretch so far and is then taken as user_access() takes it.
 */
int user_access_many(struct sim *s, const uint64_t *va, int n, bool write)
{
	struct sim_thread *t = sim_current(s);
	struct mm_struct *mm = task_of(t)->mm;
	struct machine *mc = machine_of(s);
	int i = 0;
	while (i < n) {
		/* no yield inside a stretch: the CPU and the tag stay */
		uint32_t tag = arch_user_tag(s, t->cpu);
		uint64_t levels = 0;
		int first = i;
		struct hw_access acc = {0};
		for (; i < n; i++) {
			hw_access(&mc->hw, t->cpu, mm->pgd, tag, va[i], write, &acc);
			levels += (uint64_t)acc.levels_read;	/* a faulting walk too */
			if (acc.fault)
				break;
		}
		if (levels)
			sim_charge(s, levels * (uint64_t)P(s, P_walk_level_ns));
		if (i > first)
			sim_step_arg(s, YP_USER, (uint64_t)(i - first) * (uint64_t)P(s, P_user_access_ns),
				     va[first], write);
		if (i == n)
			break;
		/* va[i] faulted: the kernel, then the access again (user_access) */
		if (user_access_fault(s, t, mm, va[i], write, acc.live_pte) ||
		    user_access(s, va[i], write))
			return -1;
		i++;
	}
	return 0;
}
