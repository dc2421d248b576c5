/*
 * mremap.c - mremap(2) that moves, v5.1.
 *
 * Mirrors mm/mremap.c (v5.1): sys_mremap() takes mmap_sem for write; a
 * shrink unmaps the tail, a grow extends the VMA in place when the gap after
 * it allows, and otherwise (MREMAP_MAYMOVE) or with MREMAP_FIXED the range
 * moves: move_vma() -> copy_vma() (mm/mmap.c) -> move_page_tables() ->
 * per PMD-sized extent either move_normal_pmd() (the whole PTE table moves
 * under the PMD locks; 2c91bd4a4e2e, v5.1) or move_ptes() (each present PTE
 * moves under both PTE locks: ptep_get_and_clear on the old slot,
 * set_pte_at on the new), then do_munmap() of the old range, which is empty
 * of PTEs by then.
 *
 * Where the old range is flushed is the knob `mremap_flush`:
 *   after_ptl  (up to v4.8) move_ptes never flushes; move_page_tables
 *              flushes the old range once, after every PTE lock was
 *              dropped. Writeback's page_mkclean can clean the moved PTE at
 *              its new address (flushing only that address) while a CPU
 *              still writes through the old entry: the write lands in a
 *              page judged clean (I3).
 *   dirty      (5d1904204c99, v4.9..v4.18) a moved dirty PTE forces the
 *              flush before the old PTE lock is dropped - but after the
 *              new one is (move_ptes unlocked new_ptl, then flushed, then
 *              unlocked old_ptl); clean moves still leave it to the end. A
 *              truncate that zaps the moved PTE at its new address and
 *              frees the page before that flush leaves the old entry
 *              pointing at a freed page (I1; CVE-2018-18281): for a clean
 *              move until the end, for a dirty one while the flush runs
 *              (eb66ae030829's message: the flush must come before the
 *              destination lock is released too).
 *   under_ptl  (eb66ae030829, v4.19) any moved present PTE forces the flush
 *              under both locks; no flush at the end.
 * And the knob `mremap_pmd`: none (up to v5.0, every extent through
 * move_ptes), need_rmap (v5.1..v5.13: move_normal_pmd takes the rmap locks
 * only when need_rmap_locks, which a new VMA never needs), rmap_locks
 * (97113eb39fa7: always). move_normal_pmd holds only the PMD locks, no PTE
 * lock, so without the rmap lock a truncate's walk of the file's VMAs runs
 * beside it: it can zap the PTE through the moved table at the new address
 * and free the page before the flush of the old address has completed (the
 * model finds this on arm64, the TLBI issued and its DSB not yet), or, as
 * 97113eb39fa7 describes, zap it through the old address it computed before
 * the move and flush that address while a CPU has cached the new one (I1).
 * The rmap lock (i_mmap_rwsem for write) excludes the walk.
 *
 * The PTE locks (rmap.c): move_ptes holds both (dirty: the old one only)
 * across its flush as an rmap walker holds one (rmap_ptl_lock,
 * rmap_ptl_lock2: it waits for zaps and page_mkclean, and they wait for
 * it), so whoever needs a lock held across the flush sees the moved PTE
 * only after that flush; under them it also calls
 * flush_tlb_batched_pending (3ea277194daa, v4.13).
 *
 * A huge PMD entry (huge_memory.c) moves whole with move_huge_pmd() when
 * its extent is one whole aligned HPAGE_PMD_SIZE on both sides, and is
 * split first otherwise.
 *
 * Not modelled: MREMAP_DONTUNMAP, mlock accounting, VM_ACCOUNT, userfaultfd,
 * move_normal_pud (v5.11), the anon_vma lock (the model
 * has no anonymous rmap walker), vma_merge of the new VMA (need_rmap_locks is
 * always false), hugetlb, error unwinding of a failed move.
 */
#include <inttypes.h>
#include <stdio.h>

#include "mm/mm.h"
#include "mm/points.h"

#define LATENCY_LIMIT_PAGES 64	/* LATENCY_LIMIT (64 * PAGE_SIZE) */

/* trace points: a = old address, b = PTEs moved (move_ptes) / 1 (a PMD) */
static void fmt_move(char *buf, size_t len, uint64_t a, uint64_t b)
{
	snprintf(buf, len, "tlbsim_mremap_move: 0x%" PRIx64 " moved, %" PRIu64 " %s, locks dropped",
		 a, b & ~((uint64_t)1 << 63), (b >> 63) ? "PMD" : "PTEs");
}
static const struct sim_point tp_mremap_move = {"mremap_move", fmt_move, 0};

/* pgd_offset() .. pmd_offset() of addr without allocation (get_old_pmd,
 * mm/mremap.c v5.1, and pte_offset_map's table): the table at depth */
uint32_t mm_table_at(struct sim *s, struct mm_struct *mm, uint64_t addr, int depth)
{
	struct hw *hw = hw_of(s);
	const struct pt_geom *g = &hw->geom;
	uint32_t t = mm->pgd;
	for (int d = 0; d < depth; d++) {
		pte_t e = table_of(hw, t)[pt_index(g, d, addr)];
		if (!pte_present(e))
			return NO_FRAME;
		t = pte_pfn(e);
	}
	return t;
}

/* alloc_new_pmd() + pte_alloc() (mm/mremap.c, mm/memory.c, v5.1): the table
 * at depth on new_addr's walk, allocating the missing levels above it */
static uint32_t alloc_table_at(struct sim *s, struct mm_struct *mm, uint64_t addr, int depth)
{
	struct hw *hw = hw_of(s);
	const struct pt_geom *g = &hw->geom;
	uint32_t t = mm->pgd;
	for (int d = 0; d < depth; d++) {
		uint64_t idx = pt_index(g, d, addr);
		pte_t e = table_of(hw, t)[idx];
		SIM_BUG_ON(s, pmd_trans_huge_entry(e));	/* the new range was unmapped */
		if (!pte_present(e)) {
			uint32_t nt = alloc_zeroed_frame(s, FRAME_PGTABLE, d + 1, 0);
			sim_step(s, YP_PTE, (uint64_t)P(s, P_lock_op_ns));
			e = table_of(hw, t)[idx];
			if (pte_present(e)) {
				frame_free(hw, nt);
			} else {
				e = pfn_pte(nt, PTE_VALID | PTE_TABLE | PTE_USER);
				set_entry(s, t, idx, e);
			}
		}
		t = pte_pfn(e);
	}
	return t;
}

/* take_rmap_locks() / drop_rmap_locks() (mm/mremap.c): the file's
 * i_mmap_rwsem for write (the anon_vma lock: no anonymous rmap walker is
 * modelled) */
static void take_rmap_locks(struct sim *s, struct vm_area_struct *vma)
{
	if (vma->file)
		down_write(s, &vma->file->i_mmap_rwsem);
}

static void drop_rmap_locks(struct sim *s, struct vm_area_struct *vma)
{
	if (vma->file)
		up_write(s, &vma->file->i_mmap_rwsem);
}

/* pte_dirty() (arch/{x86,arm64}/include/asm/pgtable.h): x86 D, arm64 the
 * software dirty bit or a writable entry with AP[2] clear (hardware dirty) */
static bool pte_is_dirty(const struct pt_format *fmt, pte_t pte)
{
	return (pte & PTE_DIRTY) || (fmt->rdonly && (pte & PTE_WRITE) && !(pte & PTE_RDONLY));
}

/*
 * move_ptes() (mm/mremap.c, v5.1; the flush by the mremap_flush knob) for
 * [old_addr, old_end), which lies in one PTE table on both sides: the rmap
 * locks if need_rmap_locks, the old PTE lock then the new one, every
 * present PTE moved with its pfn and bits (move_soft_dirty_pte sets x86's
 * soft-dirty bit), the old range flushed before the locks are dropped when
 * the knob forces it, else *need_flush for move_page_tables.
 */
static void move_ptes(struct sim *s, struct vm_area_struct *vma, uint64_t old_addr,
		      uint64_t old_end, uint64_t new_addr, bool need_rmap_locks, bool *need_flush)
{
	struct hw *hw = hw_of(s);
	const struct pt_geom *g = &hw->geom;
	struct mm_struct *mm = vma->vm_mm;
	enum mremap_flush_policy pol = machine_of(s)->policy.mremap_flush;
	int d = g->levels - 1;
	uint64_t len = old_end - old_addr;
	bool force_flush = false;
	uint64_t moved = 0;
	if (need_rmap_locks)
		take_rmap_locks(s, vma);
	sim_step_arg(s, YP_PTE, (uint64_t)P(s, P_lock_op_ns), old_addr, 0);	/* the PTE locks */
	uint32_t old_t = mm_table_at(s, mm, old_addr, d), new_t = mm_table_at(s, mm, new_addr, d);
	rmap_ptl_lock(s, old_t);
	if (new_t != old_t)
		rmap_ptl_lock2(s, new_t);
	flush_tlb_batched_pending(s, mm);	/* 3ea277194daa (v4.13) */
	uint64_t i0 = pt_index(g, d, old_addr), n = len >> g->page_shift;
	uint64_t j0 = pt_index(g, d, new_addr);
	pte_t *ot = table_of(hw, old_t);
	sim_charge(s, n * (uint64_t)P(s, P_pte_scan_ns));
	for (uint64_t i = table_next_used(g, ot, i0, i0 + n); i < i0 + n;
	     i = table_next_used(g, ot, i + 1, i0 + n)) {
		pte_t pte = ot[i];
		set_entry(s, old_t, i, 0);			/* ptep_get_and_clear */
		sim_charge(s, (uint64_t)P(s, P_lock_op_ns));	/* the exchange */
		if (pte_present(pte)) {
			if (pol == MREMAP_FLUSH_UNDER_PTL ||
			    (pol == MREMAP_FLUSH_DIRTY && pte_is_dirty(hw->fmt, pte)))
				force_flush = true;
			if (hw->fmt->soft_dirty)
				pte |= PTE_SOFT_DIRTY;		/* move_soft_dirty_pte */
		}
		set_entry(s, new_t, j0 + (i - i0), pte);	/* set_pte_at */
		moved++;
	}
	/* v4.9..v4.18 (dirty) dropped the new PTE lock before the flush and
	 * held only the old one across it: a zap at the new address could run
	 * meanwhile (the window eb66ae030829 closed for dirty moves too) */
	if (pol == MREMAP_FLUSH_DIRTY && new_t != old_t) {
		rmap_ptl_unlock2(s);
		/* the lock is free: a zap may take it before the flush starts */
		sim_step_arg(s, YP_PTE, 0, new_addr, 0);
	}
	if (force_flush)
		machine_of(s)->arch->flush_tlb_range(s, &mm->context, old_end - len, old_end);
	else if (pol != MREMAP_FLUSH_UNDER_PTL)
		*need_flush = true;
	if (pol != MREMAP_FLUSH_DIRTY && new_t != old_t)
		rmap_ptl_unlock2(s);
	rmap_ptl_unlock(s);
	if (need_rmap_locks)
		drop_rmap_locks(s, vma);
	/* the locks are released: another CPU's zap or rmap walk may run from
	 * here on, before whatever flush is still to come */
	sim_step_arg(s, &tp_mremap_move, 0, old_addr, moved);
}

/*
 * move_normal_pmd() (mm/mremap.c, v5.1, 2c91bd4a4e2e): both addresses
 * PMD-aligned and a whole PMD to move, the new PMD entry empty: under the
 * PMD locks the old entry is cleared, the new one set to the same PTE table
 * and the old range flushed (flush_tlb_range of one PMD span). No PTE lock
 * is taken.
 */
static bool move_normal_pmd(struct sim *s, struct vm_area_struct *vma, uint64_t old_addr,
			    uint64_t new_addr, uint64_t old_end, uint32_t old_pmd, uint32_t new_pmd)
{
	struct hw *hw = hw_of(s);
	const struct pt_geom *g = &hw->geom;
	int d = g->levels - 2;
	uint64_t pmd_size = 1ull << g->shift[d];
	if ((old_addr & (pmd_size - 1)) || (new_addr & (pmd_size - 1)) ||
	    old_end - old_addr < pmd_size)
		return false;
	uint64_t oi = pt_index(g, d, old_addr), ni = pt_index(g, d, new_addr);
	if (!pte_none(table_of(hw, new_pmd)[ni]))
		return false;			/* WARN_ON(!pmd_none(*new_pmd)) */
	sim_step_arg(s, YP_PTE, (uint64_t)P(s, P_lock_op_ns), old_addr, 1);	/* pmd_lock */
	pte_t pmd = table_of(hw, old_pmd)[oi];
	set_entry(s, old_pmd, oi, 0);			/* pmd_clear */
	set_entry(s, new_pmd, ni, pmd);			/* set_pmd_at */
	machine_of(s)->arch->flush_tlb_range(s, &vma->vm_mm->context, old_addr,
					     old_addr + pmd_size);
	sim_step_arg(s, &tp_mremap_move, 0, old_addr, (uint64_t)1 << 63 | 1);	/* the PMD locks dropped */
	return true;
}

/*
 * move_page_tables() (mm/mremap.c, v5.1): per extent up to the next PMD
 * boundary of the old address (and of the new one, and LATENCY_LIMIT for
 * move_ptes), skipping extents with no PTE table; a whole aligned PMD goes
 * through move_normal_pmd when the mremap_pmd knob has it; with
 * mremap_flush=after_ptl or dirty, a flush of the moved range at the end
 * when some move_ptes left one. Returns the bytes moved.
 */
static uint64_t move_page_tables(struct sim *s, struct vm_area_struct *vma, uint64_t old_addr,
				 struct vm_area_struct *new_vma, uint64_t new_addr, uint64_t len,
				 bool need_rmap_locks)
{
	const struct pt_geom *g = &hw_of(s)->geom;
	struct mm_struct *mm = vma->vm_mm;
	enum mremap_pmd_policy pmdpol = machine_of(s)->policy.mremap_pmd;
	int dpmd = g->levels - 2;
	uint64_t pmd_size = 1ull << g->shift[dpmd];
	uint64_t old_end = old_addr + len, extent;
	bool need_flush = false;
	(void)new_vma;
	for (; old_addr < old_end; old_addr += extent, new_addr += extent) {
		uint64_t next = (old_addr + pmd_size) & ~(pmd_size - 1);
		extent = next - old_addr;
		if (extent > old_end - old_addr)
			extent = old_end - old_addr;
		uint32_t old_pmd = mm_table_at(s, mm, old_addr, dpmd);	/* get_old_pmd */
		if (old_pmd == NO_FRAME ||
		    pte_none(table_of(hw_of(s), old_pmd)[pt_index(g, dpmd, old_addr)]))
			continue;
		uint32_t new_pmd = alloc_table_at(s, mm, new_addr, dpmd);	/* alloc_new_pmd */
		/* a huge PMD entry (huge_memory.c): a whole aligned extent
		 * goes to move_huge_pmd(), anything else splits it first
		 * (split_huge_pmd) and moves its PTEs; move_normal_pmd is
		 * for PTE tables only */
		if (pmd_trans_huge_entry(table_of(hw_of(s), old_pmd)[pt_index(g, dpmd, old_addr)])) {
			if (extent == pmd_size) {
				if (need_rmap_locks)
					take_rmap_locks(s, vma);
				bool moved = move_huge_pmd(s, vma, old_addr, new_addr, old_end,
							   old_pmd, new_pmd);
				if (need_rmap_locks)
					drop_rmap_locks(s, vma);
				if (moved)
					continue;
			}
			__split_huge_pmd(s, vma, old_pmd, old_addr);
			if (!pte_present(table_of(hw_of(s), old_pmd)[pt_index(g, dpmd, old_addr)]))
				continue;		/* pmd_trans_unstable */
		} else if (extent == pmd_size && pmdpol != MREMAP_PMD_NONE) {
			bool locks = need_rmap_locks || pmdpol == MREMAP_PMD_RMAP_LOCKS;
			if (locks)
				take_rmap_locks(s, vma);
			bool moved = move_normal_pmd(s, vma, old_addr, new_addr, old_end, old_pmd,
						     new_pmd);
			if (locks)
				drop_rmap_locks(s, vma);
			if (moved)
				continue;
		}
		alloc_table_at(s, mm, new_addr, g->levels - 1);	/* pte_alloc */
		next = (new_addr + pmd_size) & ~(pmd_size - 1);
		if (extent > next - new_addr)
			extent = next - new_addr;
		if (extent > (uint64_t)LATENCY_LIMIT_PAGES << g->page_shift)
			extent = (uint64_t)LATENCY_LIMIT_PAGES << g->page_shift;
		move_ptes(s, vma, old_addr, old_addr + extent, new_addr, need_rmap_locks,
			  &need_flush);
	}
	if (need_flush)
		machine_of(s)->arch->flush_tlb_range(s, &mm->context, old_end - len, old_addr);
	return len + old_addr - old_end;
}

/*
 * move_vma() (mm/mremap.c, v5.1): copy_vma() at new_addr (new_len, the file
 * offset of old_addr), move_page_tables() of old_len, do_munmap() of the old
 * range (mmap_sem stays held for write). Returns new_addr.
 */
static uint64_t move_vma(struct sim *s, struct vm_area_struct *vma, uint64_t old_addr,
			 uint64_t old_len, uint64_t new_len, uint64_t new_addr)
{
	struct mm_struct *mm = vma->vm_mm;
	uint64_t new_pgoff = vma->vm_pgoff + ((old_addr - vma->vm_start) >> hw_of(s)->geom.page_shift);
	bool need_rmap_locks;
	struct vm_area_struct *new_vma = copy_vma(s, vma, new_addr, new_len, new_pgoff,
						  &need_rmap_locks);
	move_page_tables(s, vma, old_addr, new_vma, new_addr, old_len, need_rmap_locks);
	do_munmap(s, mm, old_addr, old_addr + old_len, false);
	return new_addr;
}

/* vma_to_resize() (mm/mremap.c, v5.1): the VMA at addr, which must hold all
 * of [addr, addr + old_len); NULL for EFAULT */
static struct vm_area_struct *vma_to_resize(struct mm_struct *mm, uint64_t addr, uint64_t old_len)
{
	struct vm_area_struct *vma = find_vma(mm, addr);
	if (!vma || vma->vm_start > addr || old_len > vma->vm_end - addr)
		return NULL;
	return vma;
}

/*
 * mremap(addr, old_len, new_len, MREMAP_MAYMOVE [| MREMAP_FIXED], new_addr)
 * -> sys_mremap() (mm/mremap.c, v5.1) under mmap_sem (write): MREMAP_FIXED
 * goes to mremap_to() (unmap the target, shrink first, then move_vma);
 * otherwise a shrink unmaps the tail, a grow extends the VMA in place when
 * it ends at addr + old_len and the gap after it allows (vma_expandable), or
 * else moves it to a free range (get_unmapped_area). EINVAL for unaligned or
 * overlapping ranges, EFAULT/ENOMEM when no VMA holds the old range; an
 * old_len of 0 (duplicating a shared mapping) is refused too.
 */
uint64_t sys_mremap(struct sim *s, uint64_t addr, uint64_t old_len, uint64_t new_len, bool fixed,
		    uint64_t new_addr)
{
	struct mm_struct *mm = current_task(s)->mm;
	struct kernel *k = kernel_of(s);
	const struct pt_geom *g = &hw_of(s)->geom;
	uint64_t ps = g->page_size;
	uint64_t ret = TLBSIM_EINVAL_VA;
	uint64_t gone_start = 0, gone_end = 0;	/* the range that left addr */
	sim_set_mode(s, MODE_SYS);
	sim_step_arg(s, YP_SYSCALL, syscall_cost(s), SYS_MREMAP, addr);
	kernel_entry(s);
	uint64_t cookie = k->hooks && k->hooks->syscall_enter
				  ? k->hooks->syscall_enter(k->hooks_ctx, SYS_MREMAP) : 0;
	old_len = (old_len + ps - 1) & ~(ps - 1);
	new_len = (new_len + ps - 1) & ~(ps - 1);
	/* old_len 0 (a second mapping of a shared one) is not modelled */
	if ((addr & (ps - 1)) || !new_len || !old_len || old_len > g->task_size ||
	    addr > g->task_size - old_len ||
	    new_len > g->task_size)
		goto out;
	if (fixed && ((new_addr & (ps - 1)) || new_addr > g->task_size - new_len ||
		      (addr < new_addr + new_len && new_addr < addr + old_len)))
		goto out;		/* mremap_to's EINVAL: unaligned, beyond TASK_SIZE, overlap */
	down_write(s, &mm->mmap_sem);
	sim_charge(s, (uint64_t)P(s, P_vma_op_ns));	/* find_vma */
	if (fixed) {
		/* mremap_to() */
		do_munmap(s, mm, new_addr, new_addr + new_len, false);
		if (old_len > new_len) {
			do_munmap(s, mm, addr + new_len, addr + old_len, false);
			old_len = new_len;
		}
		struct vm_area_struct *vma = vma_to_resize(mm, addr, old_len);
		if (vma) {
			ret = move_vma(s, vma, addr, old_len, new_len, new_addr);
			gone_start = addr;
			gone_end = addr + old_len;
		}
	} else if (old_len >= new_len) {
		/* always allow a shrinking remap */
		if (old_len > new_len)
			do_munmap(s, mm, addr + new_len, addr + old_len, false);
		ret = addr;
		gone_start = addr + new_len;
		gone_end = addr + old_len;
	} else {
		struct vm_area_struct *vma = vma_to_resize(mm, addr, old_len);
		if (vma && old_len == vma->vm_end - addr) {
			/* vma_expandable(): the gap after the VMA holds the growth */
			struct vm_area_struct *next = find_vma(mm, vma->vm_end);
			uint64_t end = addr + new_len;
			if (end <= g->task_size && (!next || next->vm_start >= end)) {
				vma->vm_end = end;		/* vma_adjust */
				ret = addr;
				vma = NULL;
			}
		}
		if (vma) {
			uint64_t to = mremap_unmapped_area(s, mm, new_len);
			if (to != TLBSIM_EINVAL_VA) {
				ret = move_vma(s, vma, addr, old_len, new_len, to);
				gone_start = addr;
				gone_end = addr + old_len;
			}
		}
	}
	up_write(s, &mm->mmap_sem);
	if (gone_start < gone_end && k->hooks && k->hooks->range_unmapped)
		k->hooks->range_unmapped(k->hooks_ctx, mm, gone_start, gone_end, SYS_MREMAP, cookie);
out:
	task_work_run(s);
	sim_set_mode(s, MODE_USER);
	return ret;
}
