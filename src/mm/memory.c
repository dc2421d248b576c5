/*
 * memory.c - page-table population, zapping and freeing, and the fault path.
 *
 * Mirrors mm/memory.c (v5.1): __pte_alloc and friends, zap_pte_range /
 * unmap_single_vma / unmap_vmas, free_pgd_range / free_pgtables with the
 * floor/ceiling rule, handle_mm_fault -> handle_pte_fault with
 * do_anonymous_page / do_fault (shmem) and the spurious-fault path.
 * The MMU side of an access (TLB lookup, walk from the deepest walk-cache hit,
 * fills) lives in mmu.c.
 */
#include <stdio.h>
#include <stdlib.h>

#include "sim/grow.h"
#include "sim/sim.h"


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

/* set_pte_at() / pmd_populate() / pmd_clear() and friends (arch pgtable.h):
 * store a descriptor, keeping the table's occupancy count and bitmap */
static inline void set_entry(struct sim *s, uint32_t table, uint64_t idx, pte_t val)
{
	struct frame *fr = frame_of(&s->hw, table);
	uint64_t *map = table_used_map(&s->hw.geom, fr->table);
	pte_t old = fr->table[idx];
	if (pte_none(old) && !pte_none(val)) {
		fr->nr_used++;
		map[idx / 64] |= 1ull << (idx % 64);
	} else if (!pte_none(old) && pte_none(val)) {
		fr->nr_used--;
		map[idx / 64] &= ~(1ull << (idx % 64));
	}
	fr->table[idx] = val;
}

/* __pte_alloc() / __pmd_alloc() / __pud_alloc(): allocate a zeroed table and
 * install it under the page-table lock unless someone else did. Returns the
 * table at depth+1 that va's entry in `table` (at depth) points to. */
static uint32_t pgtable_alloc_next(struct sim *s, uint32_t table, int depth, uint64_t va)
{
	const struct pt_geom *g = &s->hw.geom;
	uint64_t idx = pt_index(g, depth, va);
	pte_t e = table_of(s, table)[idx];
	if (pte_present(e))
		return pte_pfn(e);
	uint64_t zero = (uint64_t)P(s, P_zero_4k_ns) * (g->page_size >> 12);
	sim_charge(s, (uint64_t)P(s, P_page_alloc_ns) + zero);
	uint32_t nt = frame_alloc(s, FRAME_PGTABLE, depth + 1);
	sim_step(s, YP_PTE, (uint64_t)P(s, P_lock_op_ns));
	e = table_of(s, table)[idx];
	if (pte_present(e)) {		/* lost the race: free ours */
		frame_free(s, nt);
		return pte_pfn(e);
	}
	set_entry(s, table, idx, pfn_pte(nt, PTE_VALID | PTE_TABLE | PTE_USER));
	return nt;
}

/* ---- zapping ---- */

/* zap_pte_range() (v5.1): clear present PTEs of [addr,end) in one PTE table,
 * record them in the gather and queue their pages. */
static void zap_pte_range(struct sim *s, struct mmu_gather *tlb, struct vm_area_struct *vma,
			  uint32_t pte_table, uint64_t addr, uint64_t end)
{
	const struct pt_geom *g = &s->hw.geom;
	int d = g->levels - 1;
	uint64_t n = (end - addr) >> g->page_shift;
	sim_charge(s, n * (uint64_t)P(s, P_pte_scan_ns));
	struct frame *fr = frame_of(&s->hw, pte_table);
	if (fr->nr_used == 0)
		return;
	bool force_flush = false;
	uint64_t idx0 = pt_index(g, d, addr);
	uint64_t idx_end = idx0 + n;
	for (; addr < end && fr->nr_used; addr += g->page_size) {
		/* skip none slots by the occupancy bitmap */
		uint64_t cur = pt_index(g, d, addr);
		uint64_t next = table_next_used(g, fr->table, cur, idx_end);
		if (next >= idx_end)
			break;
		addr += (next - cur) << g->page_shift;
		uint64_t idx = next;
		pte_t pte = fr->table[idx];
		if (pte_none(pte))
			continue;
		sim_step_arg(s, YP_ZAP_PTE, (uint64_t)P(s, P_pte_zap_ns), addr, 0);
		pte = fr->table[idx];		/* ptep_get_and_clear_full under PTL */
		if (pte_none(pte))
			continue;
		set_entry(s, pte_table, idx, 0);
		tlb_remove_tlb_entry(tlb, addr, g->page_size);
		if (__tlb_remove_page(s, tlb, pte_pfn(pte))) {
			force_flush = true;
			addr += g->page_size;
			break;
		}
	}
	if (force_flush) {
		/* the batch is full: flush under the PTL, free, continue */
		tlb_flush_mmu(s, tlb);
		if (addr < end)
			zap_pte_range(s, tlb, vma, pte_table, addr, end);
	}
}

/* zap_p4d_range() / zap_pud_range() / zap_pmd_range() (mm/memory.c, v5.1),
 * folded into one function over depth */
static void zap_level(struct sim *s, struct mmu_gather *tlb, struct vm_area_struct *vma,
		      uint32_t table, int depth, uint64_t addr, uint64_t end)
{
	const struct pt_geom *g = &s->hw.geom;
	struct frame *fr = frame_of(&s->hw, table);
	uint64_t next;
	for (; addr != end; addr = next) {
		next = addr_end(g, depth, addr, end);
		if (fr->nr_used == 0)
			return;
		pte_t e = fr->table[pt_index(g, depth, addr)];
		if (!pte_present(e))
			continue;
		if (depth + 1 == g->levels - 1)
			zap_pte_range(s, tlb, vma, pte_pfn(e), addr, next);
		else
			zap_level(s, tlb, vma, pte_pfn(e), depth + 1, addr, next);
	}
}

/* unmap_single_vma() -> unmap_page_range() (v5.1) */
void unmap_single_vma(struct sim *s, struct mmu_gather *tlb, struct vm_area_struct *vma,
		      uint64_t start_addr, uint64_t end_addr)
{
	uint64_t start = start_addr > vma->vm_start ? start_addr : vma->vm_start;
	uint64_t end = end_addr < vma->vm_end ? end_addr : vma->vm_end;
	if (start >= end)
		return;
	tlb_start_vma(s, tlb, vma);
	zap_level(s, tlb, vma, tlb->mm->pgd, 0, start, end);
	tlb_end_vma(s, tlb, vma);
}

/* unmap_vmas() */
void unmap_vmas(struct sim *s, struct mmu_gather *tlb, struct vm_area_struct **vmas, int n,
		uint64_t start, uint64_t end)
{
	for (int i = 0; i < n && vmas[i]->vm_start < end; i++)
		unmap_single_vma(s, tlb, vmas[i], start, end);
}

/* ---- freeing page tables ---- */

/* free_pte_range()'s pte_free_tlb() and free_pmd_range()/free_pud_range()'s
 * pmd_free_tlb()/pud_free_tlb(), chosen by the freed table's level */
static void free_table_at(struct sim *s, struct mmu_gather *tlb, int table_depth, uint32_t table,
			  uint64_t addr)
{
	const struct pt_geom *g = &s->hw.geom;
	sim_step_arg(s, YP_FREE_TABLE, (uint64_t)P(s, P_page_free_ns), addr, (uint64_t)table_depth);
	frame_of(&s->hw, table)->unlink_epoch = ++s->unlink_epoch;
	if (table_depth == g->levels - 1)
		pte_free_tlb(s, tlb, table, addr);
	else if (table_depth == g->depth_pmd)
		pmd_free_tlb(s, tlb, table, addr);
	else
		pud_free_tlb(s, tlb, table, addr);
}

/*
 * free_pmd_range() / free_pud_range() / free_p4d_range(), folded into one
 * function over depth (mm/memory.c, v5.1). `parent` holds the entry at
 * depth-1 that points to `table` (at depth). Frees every lower-level table
 * in [addr,end), then `table` itself if its whole span lies inside
 * [floor, ceiling) (ceiling 0 = no upper limit).
 */
static void free_range(struct sim *s, struct mmu_gather *tlb, uint32_t parent, uint64_t pidx,
		       uint32_t table, int depth, uint64_t addr, uint64_t end, uint64_t floor,
		       uint64_t ceiling)
{
	const struct pt_geom *g = &s->hw.geom;
	uint64_t start = addr, next;
	for (; addr != end; addr = next) {
		next = addr_end(g, depth, addr, end);
		uint64_t idx = pt_index(g, depth, addr);
		pte_t e = table_of(s, table)[idx];
		if (!pte_present(e))
			continue;
		uint32_t child = pte_pfn(e);
		if (depth + 1 == g->levels - 1) {
			/* free_pte_range(): pmd_clear + pte_free_tlb */
			SIM_BUG_ON(s, frame_of(&s->hw, child)->nr_used != 0);
			set_entry(s, table, idx, 0);
			free_table_at(s, tlb, depth + 1, child, addr);
		} else {
			free_range(s, tlb, table, idx, child, depth + 1, addr, next, floor, ceiling);
		}
	}
	if (depth == 0)
		return;
	/* free `table` itself? its span is that of the parent entry */
	uint64_t mask = ~(span(g, depth - 1) - 1);
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
	if (frame_of(&s->hw, table)->nr_used != 0)
		return;
	set_entry(s, parent, pidx, 0);
	free_table_at(s, tlb, depth, table, start);
}

/* free_pgd_range() (mm/memory.c, v5.1) */
void free_pgd_range(struct sim *s, struct mmu_gather *tlb, uint64_t addr, uint64_t end,
		    uint64_t floor, uint64_t ceiling)
{
	const struct pt_geom *g = &s->hw.geom;
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
	free_range(s, tlb, NO_FRAME, 0, tlb->mm->pgd, 0, addr, end, floor, ceiling);
}

/* ---- faults ---- */

static uint64_t zero_cost(struct sim *s)
{
	return (uint64_t)P(s, P_zero_4k_ns) * (s->hw.geom.page_size >> 12);
}

/* shmem_getpage(): find or allocate (and zero) the page at index */
static uint32_t shmem_getpage(struct sim *s, struct shmem_obj *o, uint64_t index)
{
	uint32_t lo = 0, hi = o->nr;
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		if (o->pages[mid].index < index)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < o->nr && o->pages[lo].index == index)
		return o->pages[lo].frame;
	sim_charge(s, (uint64_t)P(s, P_page_alloc_ns) + zero_cost(s));
	uint32_t f = frame_alloc(s, FRAME_DATA, 0);
	if (GROW(&o->pages, &o->cap, o->nr, (size_t)o->nr + 1, 8))
		sim_bug(s, __FILE__, __LINE__, "out of host memory for shmem");
	for (uint32_t i = o->nr; i > lo; i--)
		o->pages[i] = o->pages[i - 1];
	o->pages[lo].index = index;
	o->pages[lo].frame = f;
	o->nr++;
	return f;
}

/* mk_pte() + maybe_mkwrite(pte_mkdirty()) of do_anonymous_page() /
 * finish_fault() (mm/memory.c, v5.1), in the neutral descriptor encoding */
static pte_t mk_pte(struct sim *s, uint32_t f, struct vm_area_struct *vma, bool write)
{
	pte_t pte = pfn_pte(f, PTE_VALID | PTE_USER | PTE_YOUNG);
	if (write) {
		pte |= PTE_WRITE | PTE_DIRTY;		/* maybe_mkwrite(pte_mkdirty()) */
	} else if ((vma->vm_flags & (VM_SHARED | VM_WRITE)) == (VM_SHARED | VM_WRITE)) {
		pte |= PTE_WRITE;			/* writable, clean */
		if (s->profile->arch == ARCH_ARM64)
			pte |= PTE_RDONLY;		/* arm64 clean writable: DBM + RDONLY */
	} else if (s->profile->arch == ARCH_ARM64) {
		pte |= PTE_RDONLY;
	}
	return pte;
}

/*
 * handle_mm_fault() -> __handle_mm_fault() -> handle_pte_fault() (mm/memory.c,
 * v5.1): allocate missing tables, then for a none PTE do_anonymous_page() or
 * do_fault() (shmem: do_shared_fault / do_read_fault), and for a present PTE
 * the access-flag / spurious-fault path.
 */
int handle_mm_fault(struct sim *s, struct vm_area_struct *vma, uint64_t address, bool write)
{
	const struct pt_geom *g = &s->hw.geom;
	struct mm_struct *mm = sim_current(s)->mm;
	uint32_t table = mm->pgd;
	for (int d = 0; d < g->levels - 1; d++)
		table = pgtable_alloc_next(s, table, d, address);

	int d = g->levels - 1;
	uint64_t idx = pt_index(g, d, address);
	uint64_t page = address & ~(g->page_size - 1);
	pte_t *ptep = &table_of(s, table)[idx];
	if (pte_none(*ptep)) {
		uint32_t f;
		if (vma->shm) {
			uint64_t index = vma->vm_pgoff + ((page - vma->vm_start) >> g->page_shift);
			f = shmem_getpage(s, vma->shm, index);
			frame_of(&s->hw, f)->refcount++;	/* get_page() for the mapping */
		} else {
			sim_charge(s, (uint64_t)P(s, P_page_alloc_ns) + zero_cost(s));
			f = frame_alloc(s, FRAME_DATA, 0);
		}
		sim_step(s, YP_PTE, (uint64_t)P(s, P_lock_op_ns));	/* pte_offset_map_lock */
		ptep = &table_of(s, table)[idx];
		if (!pte_none(*ptep)) {			/* raced: someone installed it */
			struct frame *fr = frame_of(&s->hw, f);
			if (--fr->refcount == 0)
				frame_free(s, f);
			return 0;
		}
		set_entry(s, table, idx, mk_pte(s, f, vma, write));
		frame_of(&s->hw, f)->map_epoch = ++s->map_epoch;
		if (write)
			frame_of(&s->hw, f)->dirty_epoch = s->map_epoch;
		return 0;
	}

	/* present: handle_pte_fault() spurious / access-flag path */
	sim_step(s, YP_PTE, (uint64_t)P(s, P_lock_op_ns));
	ptep = &table_of(s, table)[idx];
	pte_t entry = *ptep;
	if (write) {
		if (!(entry & PTE_WRITE)) {
			/* do_wp_page(): only private anon here, exclusively owned
			 * -> wp_page_reuse() */
			entry |= PTE_WRITE;
		}
		entry |= PTE_DIRTY;			/* pte_mkdirty() */
		frame_of(&s->hw, pte_pfn(entry))->lazyfree = 0;
		frame_of(&s->hw, pte_pfn(entry))->dirty_epoch = ++s->map_epoch;
		if (s->profile->arch == ARCH_ARM64)
			entry &= ~PTE_RDONLY;
	}
	entry |= PTE_YOUNG;				/* pte_mkyoung() */
	if (!s->arch->ptep_set_access_flags(s, mm, page, ptep, entry, write)) {
		if (write)
			s->arch->flush_tlb_fix_spurious_fault(s, mm, page);
	}
	return 0;
}

/* The livelock detector (kernel-model 9.3, I6): the same CPU faulting on the
 * same VA with an unchanged PTE livelock_faults times in a row. */
static bool livelock_check(struct sim *s, struct sim_thread *t, uint64_t va, uint64_t pte)
{
	if (t->last_fault_va == va && t->last_fault_pte == pte && pte != 0) {
		if (++t->same_faults >= (uint32_t)P(s, P_livelock_faults)) {
			t->same_faults = 0;
			return true;
		}
	} else {
		t->last_fault_va = va;
		t->last_fault_pte = pte;
		t->same_faults = 1;
	}
	return false;
}

/*
 * A user-mode access by the current thread: translate through the MMU; on a
 * fault enter the kernel (do_page_fault), take mmap_sem for read, find the VMA
 * and call handle_mm_fault(), then retry the access.
 * Returns 0, or -1 for an access outside any VMA (SIGSEGV).
 */
int user_access(struct sim *s, uint64_t va, bool write)
{
	struct sim_thread *t = sim_current(s);
	struct mm_struct *mm = t->mm;
	for (;;) {
		uint64_t fault_pte = 0;
		if (mmu_access(s, t->cpu, mm, va, write, &fault_pte) == 0) {
			sim_step_arg(s, YP_USER, (uint64_t)P(s, P_user_access_ns), va, write);
			return 0;
		}
		s->m.page_faults++;
		if (livelock_check(s, t, va & ~(s->hw.geom.page_size - 1), fault_pte)) {
			char ent[160];
			snprintf(ent, sizeof(ent), "cpu %d: a cached entry the fault handler cannot "
				 "repair (spurious-fault flush is leaf-only)", t->cpu);
			sim_violation(s, INV_LIVELOCK, t->cpu, va, pte_pfn(fault_pte), ent,
				      "livelock: cpu %d faulted on va 0x%llx %u times with the PTE "
				      "(0x%llx) unchanged", t->cpu, (unsigned long long)va,
				      (unsigned)P(s, P_livelock_faults),
				      (unsigned long long)fault_pte);
			/* Recovery as on real hardware, eventually: something
			 * (migration, an ASID flush) invalidates this CPU. */
			struct inv_op all = {.kind = INV_ALL};
			hw_invalidate_cpu(s, t->cpu, &all);
		}
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
	}
}

/* pgd_offset() .. pte_offset_map() without allocation (mm/pagewalk-style) */
pte_t *pte_lookup(struct sim *s, struct mm_struct *mm, uint64_t addr)
{
	const struct pt_geom *g = &s->hw.geom;
	uint32_t table = mm->pgd;
	for (int d = 0; d < g->levels - 1; d++) {
		pte_t e = table_of(s, table)[pt_index(g, d, addr)];
		if (!pte_present(e))
			return NULL;
		table = pte_pfn(e);
	}
	return &table_of(s, table)[pt_index(g, g->levels - 1, addr)];
}
