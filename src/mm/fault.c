/*
 * fault.c - the page-fault path and the user accesses that take it.
 *
 * Mirrors mm/memory.c (v5.1): handle_mm_fault -> __handle_mm_fault (tables
 * allocated with __pud_alloc / __pmd_alloc / __pte_alloc) -> handle_pte_fault
 * -> do_anonymous_page, do_fault (shmem: do_shared_fault / do_read_fault) or,
 * for a present PTE, the access-flag / spurious-fault path with
 * ptep_set_access_flags and flush_tlb_fix_spurious_fault. The arch entries
 * arch/x86/mm/fault.c do_user_addr_fault() and arch/arm64/mm/fault.c
 * do_page_fault() do the same here (mmap_sem for read, find_vma,
 * handle_mm_fault) and are modelled once, as do_page_fault().
 */
#include "mm/mm.h"
#include "mm/points.h"

/* __pte_alloc() / __pmd_alloc() / __pud_alloc(): allocate a zeroed table and
 * install it under the page-table lock unless someone else did. Returns the
 * table at depth+1 that va's entry in `table` (at depth) points to. */
static uint32_t __pte_alloc(struct sim *s, uint32_t table, int depth, uint64_t va)
{
	struct hw *hw = hw_of(s);
	const struct pt_geom *g = &hw->geom;
	uint64_t idx = pt_index(g, depth, va);
	pte_t e = table_of(hw, table)[idx];
	if (pte_present(e))
		return pte_pfn(e);
	sim_charge(s, (uint64_t)P(s, P_page_alloc_ns) + zero_page_cost(s));
	uint32_t nt = alloc_frame(s, FRAME_PGTABLE, depth + 1);
	sim_step(s, YP_PTE, (uint64_t)P(s, P_lock_op_ns));
	e = table_of(hw, table)[idx];
	if (pte_present(e)) {		/* lost the race: free ours */
		frame_free(hw, nt);
		return pte_pfn(e);
	}
	set_entry(s, table, idx, pfn_pte(nt, PTE_VALID | PTE_TABLE | PTE_USER));
	return nt;
}

/* What handle_pte_fault and its helpers work on (struct vm_fault, v5.1). */
struct vm_fault {
	struct vm_area_struct *vma;
	uint64_t address;		/* page-aligned */
	bool write;			/* FAULT_FLAG_WRITE */
	uint32_t pte_table;		/* the PTE table (vmf->pmd's target) */
	uint64_t idx;			/* index of the PTE in it */
};

static inline pte_t *vmf_pte(struct sim *s, const struct vm_fault *vmf)
{
	return &table_of(hw_of(s), vmf->pte_table)[vmf->idx];
}

/* mk_pte() + maybe_mkwrite(pte_mkdirty()) of do_anonymous_page() /
 * finish_fault() (mm/memory.c, v5.1), in the neutral descriptor encoding */
static pte_t mk_pte(struct sim *s, uint32_t f, const struct vm_area_struct *vma, bool write)
{
	const struct pt_format *fmt = hw_of(s)->fmt;
	pte_t pte = pfn_pte(f, PTE_VALID | PTE_USER | PTE_YOUNG);
	if (write)
		return fmt_pte_mkdirty(fmt, pte | PTE_WRITE);	/* maybe_mkwrite(pte_mkdirty()) */
	if ((vma->vm_flags & (VM_SHARED | VM_WRITE)) == (VM_SHARED | VM_WRITE))
		pte |= PTE_WRITE;			/* writable, clean */
	return fmt_pte_mkclean(fmt, pte);		/* arm64: RDONLY until dirtied */
}

/* Install frame f at the fault address unless someone else did meanwhile
 * (finish_fault / the tail of do_anonymous_page under the PTE lock). */
static void install_page(struct sim *s, struct vm_fault *vmf, uint32_t f)
{
	struct kernel *k = kernel_of(s);
	sim_step(s, YP_PTE, (uint64_t)P(s, P_lock_op_ns));	/* pte_offset_map_lock */
	if (!pte_none(*vmf_pte(s, vmf))) {		/* raced: someone installed it */
		struct frame *fr = frame_of(hw_of(s), f);
		if (--fr->refcount == 0)
			frame_free(hw_of(s), f);
		return;
	}
	set_entry(s, vmf->pte_table, vmf->idx, mk_pte(s, f, vmf->vma, vmf->write));
	if (k->hooks && k->hooks->page_mapped)
		k->hooks->page_mapped(k->hooks_ctx, f, vmf->write);
}

/* do_anonymous_page() (mm/memory.c, v5.1): a zeroed private page */
static void do_anonymous_page(struct sim *s, struct vm_fault *vmf)
{
	sim_charge(s, (uint64_t)P(s, P_page_alloc_ns) + zero_page_cost(s));
	uint32_t f = alloc_frame(s, FRAME_DATA, 0);
	install_page(s, vmf, f);
}

/* do_fault() -> do_shared_fault() / do_read_fault() (mm/memory.c, v5.1) for
 * a shmem mapping: the page comes from the object's page cache */
static void do_fault(struct sim *s, struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	uint64_t index = vma->vm_pgoff + ((vmf->address - vma->vm_start) >> hw_of(s)->geom.page_shift);
	uint32_t f = shmem_getpage(s, vma->shm, index);
	frame_of(hw_of(s), f)->refcount++;	/* get_page() for the mapping */
	install_page(s, vmf, f);
}

/* handle_pte_fault() (mm/memory.c, v5.1) for a present PTE: the
 * access-flag / spurious-fault path (do_wp_page() is only reached for a
 * private page this task owns, which wp_page_reuse() makes writable) */
static void handle_present_pte(struct sim *s, struct vm_fault *vmf)
{
	struct kernel *k = kernel_of(s);
	const struct arch_ops *arch = machine_of(s)->arch;
	struct mm_struct *mm = current_task(s)->mm;
	sim_step(s, YP_PTE, (uint64_t)P(s, P_lock_op_ns));
	pte_t *ptep = vmf_pte(s, vmf);
	pte_t entry = *ptep;
	if (vmf->write) {
		if (!(entry & PTE_WRITE))
			entry |= PTE_WRITE;		/* do_wp_page() -> wp_page_reuse() */
		entry = fmt_pte_mkdirty(hw_of(s)->fmt, entry);	/* pte_mkdirty() */
		if (k->hooks && k->hooks->page_dirtied)
			k->hooks->page_dirtied(k->hooks_ctx, pte_pfn(entry));
	}
	entry |= PTE_YOUNG;				/* pte_mkyoung() */
	if (!arch->ptep_set_access_flags(s, &mm->context, vmf->address, ptep, entry, vmf->write)) {
		if (vmf->write)
			arch->flush_tlb_fix_spurious_fault(s, &mm->context, vmf->address);
	}
}

/*
 * handle_mm_fault() -> __handle_mm_fault() -> handle_pte_fault() (mm/memory.c,
 * v5.1): allocate missing tables, then for a none PTE do_anonymous_page() or
 * do_fault(), and for a present PTE the access-flag / spurious-fault path.
 */
int handle_mm_fault(struct sim *s, struct vm_area_struct *vma, uint64_t address, bool write)
{
	const struct pt_geom *g = &hw_of(s)->geom;
	struct mm_struct *mm = current_task(s)->mm;
	uint32_t table = mm->pgd;
	for (int d = 0; d < g->levels - 1; d++)
		table = __pte_alloc(s, table, d, address);

	struct vm_fault vmf = {
		.vma = vma,
		.address = address & ~(g->page_size - 1),
		.write = write,
		.pte_table = table,
		.idx = pt_index(g, g->levels - 1, address),
	};
	if (pte_none(*vmf_pte(s, &vmf))) {
		if (vma->shm)
			do_fault(s, &vmf);
		else
			do_anonymous_page(s, &vmf);
		return 0;
	}
	handle_present_pte(s, &vmf);
	return 0;
}

/*
 * do_page_fault() (arch/arm64/mm/fault.c) / do_user_addr_fault()
 * (arch/x86/mm/fault.c), v5.1: enter the kernel, take mmap_sem for read,
 * find the VMA and call handle_mm_fault(). -1 for an address outside any VMA
 * (SIGSEGV).
 */
static int do_page_fault(struct sim *s, struct mm_struct *mm, uint64_t va, bool write)
{
	sim_set_mode(s, MODE_SYS);
	sim_step_arg(s, YP_FAULT, (uint64_t)P(s, P_fault_ns), va, write);
	down_read(s, &mm->mmap_sem);
	struct vm_area_struct *vma = find_vma(mm, va);
	if (!vma || va < vma->vm_start) {
		up_read(s, &mm->mmap_sem);
		sim_set_mode(s, MODE_USER);
		return -1;
	}
	handle_mm_fault(s, vma, va, write);
	up_read(s, &mm->mmap_sem);
	sim_set_mode(s, MODE_USER);
	return 0;
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
	struct kernel *k = kernel_of(s);
	for (;;) {
		struct hw_access acc;
		hw_access(&mc->hw, t->cpu, mm->pgd, mc->arch->user_tag(s, t->cpu), va, write, &acc);
		if (acc.levels_read)
			sim_charge(s, (uint64_t)acc.levels_read * (uint64_t)P(s, P_walk_level_ns));
		if (!acc.fault) {
			sim_step_arg(s, YP_USER, (uint64_t)P(s, P_user_access_ns), va, write);
			return 0;
		}
		s->m.page_faults++;
		if (k->hooks && k->hooks->user_fault)
			k->hooks->user_fault(k->hooks_ctx, t->cpu, va, acc.live_pte);
		if (do_page_fault(s, mm, va, write))
			return -1;
	}
}
