/*
 * khugepaged.c - the collapse of a PTE-mapped file THP into a PMD mapping,
 * which frees the PTE table (collapse_pte_mapped_thp, mm/khugepaged.c,
 * v5.4..v6.4) and those of the other mms mapping the file range
 * (retract_page_tables), the anonymous collapse (collapse_huge_page), and the lockless GUP-fast walker that races with it
 * (get_user_pages_fast -> lockless_pages_from_mm -> gup_pgd_range,
 * mm/gup.c, v6.1).
 *
 * collapse_pte_mapped_thp(mm, addr), introduced by 27e1f8273113 (v5.4):
 * the page cache already holds the file range around addr as one huge page
 * that this mm maps with PTEs. Under mmap_lock for write, it checks that
 * every present PTE of the huge-page-aligned range maps the huge page's
 * subpage of its index, drops those mappings (page_remove_rmap, the
 * refcount), clears the PMD entry with pmdp_collapse_flush() and frees the
 * PTE table at once (pte_free, no RCU); the next fault maps the range by
 * PMD. Knobs:
 *  - thp_collapse_range: pmdp_collapse_flush() is given the aligned start
 *    haddr (723a80dafed5, v5.9) or, before it, the address the step-2 loop
 *    left behind: haddr + HPAGE_PMD_SIZE, so the flush covers the next
 *    extent and leaves every CPU's walk entries to the table it frees (and
 *    its leaf entries, which still point to the right subpages). A 2 MiB
 *    range - 512 pages, above x86's tlb_single_page_flush_ceiling of 33 -
 *    is a full flush on x86, and on arm64 without FEAT_TLBIRANGE (512 pages
 *    reach MAX_TLBI_OPS) an ASID flush, where the wrong
 *    range is harmless, as the fix's message suspected.
 *  - thp_gup_sync: 2ba99c5e0881 (v6.1) calls tlb_remove_table_sync_one()
 *    between the flush and pte_free(): an IPI to every other CPU, waited
 *    for, which a GUP-fast walker with IRQs off takes only when its walk is
 *    over. Without it, an architecture whose flush needs no IPI (arm64's
 *    broadcast TLBI, x86 INVLPGB) frees the table under the walker.
 *
 * Model: the page cache's pages are base pages; the huge page is the file's
 * pages at the indexes of the aligned range (collapse_file's copy into a
 * compound page is not modelled), and the PMD mapping that replaces the
 * table is not either: the range faults back in through a new PTE table.
 * The collapse holds the file's i_mmap_rwsem for write around the
 * retraction, as 8d3c106e19e8 (v6.1) made it do; before that only the PMD
 * lock stood between rmap walkers (page_mkclean, truncate's zap) and the
 * table. That older locking is not a knob: it would need the model's rmap
 * walkers to notice a table freed under them, which they do not.
 * Not modelled: khugepaged's scan and its mm_slot list (the `collapse`
 * statement runs the function in the calling task, as MADV_COLLAPSE of
 * v6.1 does for a file range already huge: 7d8faaf15545, 34488399fa08),
 * the PMD mapping of an anonymous collapse (collapse_huge_page, below, and
 * retract_page_tables for the other mms of the file are modelled), the
 * pte_free_defer() of v6.5 (an RCU-deferred free; the
 * model keeps v6.1's IPI sync, which holds off the same walker). GUP-fast
 * always re-checks the PMD entry, as it does since 70cbc3cc78a9 ("mm: gup:
 * fix the fast GUP race against THP collapse"), also for older presets.
 */
#include "mm/mm.h"
#include "mm/points.h"

static uint64_t sync_one_fn(struct sim *s, int cpu, const void *data)
{
	(void)s, (void)cpu, (void)data;
	return 0;	/* tlb_remove_table_smp_sync: nothing to do */
}

/*
 * tlb_remove_table_sync_one() (mm/mmu_gather.c, v6.1, 2ba99c5e0881):
 * smp_call_function(tlb_remove_table_smp_sync, NULL, 1) - an IPI to every
 * other online CPU, and the wait for each handler. A CPU inside a GUP-fast
 * walk has IRQs off and runs it at local_irq_restore (irq.c). Without
 * CONFIG_MMU_GATHER_RCU_TABLE_FREE (include/asm-generic/tlb.h) it is an
 * empty inline: native x86 before a37259732a7d (x86_table_free=page), whose
 * flush IPI the walk already holds off.
 */
void tlb_remove_table_sync_one(struct sim *s)
{
	if (machine_is_x86(s) && machine_of(s)->policy.x86_table_free == X86_TABLE_FREE_PAGE)
		return;
	int self = cur_cpu(s);
	uint64_t t0 = s->now + s->curr->pending_ns, k = 0, finish = t0;
	struct ipi_round r = {0};
	for (int c = 0; c < s->nr_cpus; c++) {
		if (c == self)
			continue;
		k++;
		s->m.ipi_sent++;
		uint64_t at = t0 + k * (uint64_t)P(s, P_ipi_send_ns) + (uint64_t)P(s, P_ipi_latency_ns);
		uint64_t done;
		ipi_deliver(s, &r, c, at, sync_one_fn, &k, 0, &done);	/* no data */
		if (done > finish)
			finish = done;
	}
	sim_step_arg(s, YP_THP, 0, k, THP_STEP_SYNC);
	if (r.outstanding) {
		r.finish = finish > r.finish ? finish : r.finish;
		ipi_round_wait(s, &r);
	} else if (finish > s->now + s->curr->pending_ns) {
		sim_charge_sys(s, finish - (s->now + s->curr->pending_ns));
	}
}

/*
 * pmdp_collapse_flush(vma, address, pmdp) (mm/pgtable-generic.c, v5.4; x86
 * and arm64 use the generic one): clear the PMD entry and flush_tlb_range()
 * of [address, address + HPAGE_PMD_SIZE). Returns the old entry.
 */
static pte_t pmdp_collapse_flush(struct sim *s, struct vm_area_struct *vma, uint64_t address,
				 uint32_t pmd_table, uint64_t idx)
{
	const struct pt_geom *g = &hw_of(s)->geom;
	uint64_t size = 1ull << g->shift[g->levels - 2];
	pte_t old = table_of(hw_of(s), pmd_table)[idx];
	set_entry(s, pmd_table, idx, 0);		/* pmdp_huge_get_and_clear */
	machine_of(s)->arch->flush_tlb_range(s, &vma->vm_mm->context, address, address + size);
	return old;
}

/*
 * collapse_pte_mapped_thp(mm, addr) (mm/khugepaged.c, v5.4 27e1f8273113,
 * with 723a80dafed5 and 2ba99c5e0881 as knobs; the file header). Returns 1
 * when the table was retracted, 0 when the range does not qualify.
 */
static int retract_table(struct sim *s, struct vm_area_struct *vma, uint64_t haddr,
			 uint32_t pmd, uint64_t pidx, pte_t pe);

static int collapse_pte_mapped_thp(struct sim *s, struct mm_struct *mm, uint64_t addr)
{
	struct hw *hw = hw_of(s);
	const struct pt_geom *g = &hw->geom;
	uint64_t size = 1ull << g->shift[g->levels - 2], haddr = addr & ~(size - 1);
	struct vm_area_struct *vma = find_vma(mm, haddr);
	/* a file VMA covering the whole aligned range (hugepage_vma_check) */
	if (!vma || !vma->file || vma->vm_start > haddr || vma->vm_end < haddr + size ||
	    (vma->vm_flags & (VM_HUGETLB | VM_PFNMAP | VM_MIXEDMAP)))
		return 0;
	uint32_t pmd = hw_pmd_table(hw_of(s), mm->pgd, haddr);
	if (pmd == NO_FRAME)
		return 0;
	uint64_t pidx = pt_index(g, g->levels - 2, haddr);
	pte_t pe = table_of(hw, pmd)[pidx];
	if (!pte_present(pe) || (pe & PTE_HUGE))
		return 0;	/* no table, or already PMD-mapped */
	/* i_mmap_lock_write (8d3c106e19e8, v6.1): only GUP-fast and the MMU
	 * may walk the table from here on (see the file header) */
	struct inode *ino = vma->file;
	down_write(s, &ino->i_mmap_rwsem);
	int r = retract_table(s, vma, haddr, pmd, pidx, pe);
	up_write(s, &ino->i_mmap_rwsem);
	return r;
}

/*
 * The retraction of one mm's PTE table of the file range at haddr, with the
 * file's i_mmap_rwsem held for write and the mm's mmap_lock for write:
 * collapse_pte_mapped_thp's steps 1, 2 and 4 (v5.4..v6.4), or
 * retract_page_tables' collapse_and_free_pmd (v5.18..v6.4) for another mm,
 * which checks no PTE (collapse_file unmapped the small pages first; the
 * model's pages stay, so the same check applies). pe is the PMD entry read
 * before the lock. Returns 1 when the table was freed.
 */
static int retract_table(struct sim *s, struct vm_area_struct *vma, uint64_t haddr,
			 uint32_t pmd, uint64_t pidx, pte_t pe)
{
	struct hw *hw = hw_of(s);
	const struct pt_geom *g = &hw->geom;
	const struct tlbsim_policy *pol = &machine_of(s)->policy;
	struct inode *ino = vma->file;
	uint32_t pt = pte_pfn(pe);
	uint64_t pgoff = vma->vm_pgoff + ((haddr - vma->vm_start) >> g->page_shift);
	/* step 1: every present PTE maps the huge page's subpage of its index
	 * (the table may have gone while the lock was awaited) */
	sim_step_arg(s, YP_THP, (uint64_t)P(s, P_lock_op_ns), haddr, THP_STEP_CHECK);
	if (table_of(hw, pmd)[pidx] != pe)
		return 0;
	uint64_t i;
	for (i = table_next_used(g, table_of(hw, pt), 0, g->ptrs_per_pte); i < g->ptrs_per_pte;
	     i = table_next_used(g, table_of(hw, pt), i + 1, g->ptrs_per_pte)) {
		pte_t e = table_of(hw, pt)[i];
		if (!pte_present(e) || pte_pfn(e) != find_get_page(s, ino, pgoff + i))
			return 0;
	}
	/* step 2: page_remove_rmap and the references of the mappings; the
	 * loop leaves addr at the end of the extent */
	uint64_t a = haddr;
	for (i = 0; i < g->ptrs_per_pte; i++, a += g->page_size) {
		pte_t e = table_of(hw, pt)[i];
		if (pte_none(e))
			continue;
		struct frame *fr = frame_of(hw, pte_pfn(e));
		SIM_BUG_ON(s, fr->refcount < 2);	/* the page cache keeps one */
		fr->refcount--;
	}
	/* step 4: collapse the PMD under the PMD lock */
	sim_step_arg(s, YP_THP, (uint64_t)P(s, P_lock_op_ns), haddr, THP_STEP_PMD_LOCK);
	uint64_t flush_at = pol->thp_collapse_range == THP_COLLAPSE_RANGE_END ? a : haddr;
	pmdp_collapse_flush(s, vma, flush_at, pmd, pidx);
	struct kernel *k = kernel_of(s);
	if (k->hooks && k->hooks->table_unlinked)
		k->hooks->table_unlinked(k->hooks_ctx, pt);
	if (pol->thp_gup_sync == THP_GUP_SYNC_IPI)
		tlb_remove_table_sync_one(s);
	/* mm_dec_nr_ptes; pte_free(mm, pmd_pgtable(_pmd)): the table goes with
	 * its entries (the model empties it first) */
	for (i = table_next_used(g, table_of(hw, pt), 0, g->ptrs_per_pte); i < g->ptrs_per_pte;
	     i = table_next_used(g, table_of(hw, pt), i + 1, g->ptrs_per_pte))
		set_entry(s, pt, i, 0);
	sim_step_arg(s, YP_THP, (uint64_t)P(s, P_page_free_ns), pt, THP_STEP_PTE_FREE);
	frame_free(hw, pt);
	return 1;
}

/*
 * collapse_huge_page(mm, address) (mm/khugepaged.c, v6.1; the anonymous
 * collapse of khugepaged and MADV_COLLAPSE, with 2ba99c5e0881 as the
 * thp_gup_sync knob). Under mmap_lock for write (the anon_vma lock is not
 * modelled: the model has no anon_vma and no rmap walker of anonymous
 * pages that could meet the detached table): pmdp_collapse_flush() clears
 * the PMD entry and flushes the aligned 2 MiB (always from haddr; the
 * 723a80dafed5 slip was only in collapse_pte_mapped_thp); since v6.1
 * tlb_remove_table_sync_one(); then __collapse_huge_page_isolate checks
 * each page's references (is_refcount_suitable: the mapping's only - a
 * GUP-fast walker that kept its reference makes the collapse fail and the
 * PMD entry is put back), __collapse_huge_page_copy copies each small page
 * into the new huge page, clears the detached table's PTEs and frees the
 * small pages. The kernel keeps the detached table as the deposit of the
 * new PMD mapping (pgtable_trans_huge_deposit) and frees it with pte_free,
 * no RCU, when that mapping is zapped (zap_deposited_table), or refills it
 * at a split; a GUP-fast walker that read the PMD entry before the clear
 * can still be inside the table then. Model: there is no PMD mapping to
 * carry a deposit, so the detached table is freed right after the copy (the
 * deposit's free brought forward) and the range is mapped by PTEs of the
 * copies in a fresh table (dirty, writable if the VMA is: the huge PMD's
 * pmd_mkdirty / maybe_pmd_mkwrite). The invariant is I1 (a software walker
 * reads a freed table), not I3: the walker re-checks the PMD entry after
 * taking its reference (70cbc3cc78a9) and the isolate step sees any
 * reference taken before the clear, so no reference survives the copy; what
 * the sync protects is the table's memory. None PTEs stay none (the kernel
 * fills them, and the zero page's, with zeroed subpages, up to max_ptes_none;
 * in the model a zero-page PTE is cleared and left none). Returns 1 when the
 * range was collapsed, 0 when it does not qualify or a reference is held.
 */
static int collapse_huge_page(struct sim *s, struct mm_struct *mm, uint64_t addr)
{
	struct hw *hw = hw_of(s);
	const struct pt_geom *g = &hw->geom;
	const struct tlbsim_policy *pol = &machine_of(s)->policy;
	struct kernel *k = kernel_of(s);
	uint64_t size = 1ull << g->shift[g->levels - 2], haddr = addr & ~(size - 1);
	struct vm_area_struct *vma = find_vma(mm, haddr);
	/* hugepage_vma_revalidate: an anonymous VMA over the aligned range */
	if (!vma || vma->file || vma->vm_start > haddr || vma->vm_end < haddr + size ||
	    (vma->vm_flags & (VM_HUGETLB | VM_PFNMAP | VM_MIXEDMAP | VM_SHARED)))
		return 0;
	uint32_t pmd = hw_pmd_table(hw_of(s), mm->pgd, haddr);
	if (pmd == NO_FRAME)
		return 0;
	uint64_t pidx = pt_index(g, g->levels - 2, haddr);
	pte_t pe = table_of(hw, pmd)[pidx];
	/* find_pmd_or_thp_or_none: a huge entry is SCAN_PMD_MAPPED, the range
	 * is already one huge page and nothing is done (madvise_collapse counts
	 * it as a success; the statement reports 0: nothing was collapsed) */
	if (!pte_present(pe) || (pe & PTE_HUGE))
		return 0;
	uint32_t pt = pte_pfn(pe);
	/* hpage_collapse_scan_pmd: at least one page, each a private anonymous
	 * page (not KSM, not the zero page) */
	uint64_t i, n = 0;
	for (i = table_next_used(g, table_of(hw, pt), 0, g->ptrs_per_pte); i < g->ptrs_per_pte;
	     i = table_next_used(g, table_of(hw, pt), i + 1, g->ptrs_per_pte)) {
		pte_t e = table_of(hw, pt)[i];
		if (!pte_present(e))
			return 0;
		if (is_zero_frame(s, pte_pfn(e)))
			continue;		/* counts as none (max_ptes_none) */
		struct frame *fr = frame_of(hw, pte_pfn(e));
		if (fr->state != FRAME_DATA || !(fr->pgflags & PG_ANON) ||
		    (fr->pgflags & (PG_KSM | PG_LOCKED)))
			return 0;
		n++;
	}
	if (n == 0)
		return 0;
	sim_step_arg(s, YP_THP, (uint64_t)P(s, P_lock_op_ns), haddr, THP_STEP_PMD_LOCK);
	pmdp_collapse_flush(s, vma, haddr, pmd, pidx);
	if (pol->thp_gup_sync == THP_GUP_SYNC_IPI)
		tlb_remove_table_sync_one(s);
	/* __collapse_huge_page_isolate: the mapping's reference only */
	sim_step_arg(s, YP_THP, (uint64_t)P(s, P_lock_op_ns), haddr, THP_STEP_ISOLATE);
	for (i = table_next_used(g, table_of(hw, pt), 0, g->ptrs_per_pte); i < g->ptrs_per_pte;
	     i = table_next_used(g, table_of(hw, pt), i + 1, g->ptrs_per_pte)) {
		uint32_t f = pte_pfn(table_of(hw, pt)[i]);
		if (!is_zero_frame(s, f) && frame_of(hw, f)->refcount != 1) {
			set_entry(s, pmd, pidx, pe);	/* pmd_populate: undo */
			return 0;
		}
	}
	/* __collapse_huge_page_copy: copy, clear the PTE, free the small page */
	uint32_t copies[512];
	SIM_BUG_ON(s, g->ptrs_per_pte > 512);
	for (i = 0; i < g->ptrs_per_pte; i++) {
		copies[i] = NO_FRAME;
		pte_t e = table_of(hw, pt)[i];
		if (pte_none(e))
			continue;
		if (is_zero_frame(s, pte_pfn(e))) {
			set_entry(s, pt, i, 0);
			continue;
		}
		uint32_t f = pte_pfn(e), nf = alloc_frame(s, FRAME_DATA, 0);
		SIM_BUG_ON(s, nf == NO_FRAME);
		frame_of(hw, nf)->pgflags |= PG_ANON | PG_DIRTY;
		sim_step_arg(s, YP_THP, (uint64_t)P(s, P_copy_4k_ns) * (g->page_size >> 12),
			     haddr + i * g->page_size, THP_STEP_COPY);
		copies[i] = nf;
		set_entry(s, pt, i, 0);
		struct frame *fr = frame_of(hw, f);
		if (--fr->refcount == 0)
			frame_free(hw, f);
	}
	/* the deposited table's pte_free, brought forward (the header) */
	if (k->hooks && k->hooks->table_unlinked)
		k->hooks->table_unlinked(k->hooks_ctx, pt);
	sim_step_arg(s, YP_THP, (uint64_t)P(s, P_page_free_ns), pt, THP_STEP_PTE_FREE);
	frame_free(hw, pt);
	/* set_pmd_at of the huge page: here PTEs of the copies */
	uint32_t nt = __pte_alloc(s, pmd, g->levels - 2, haddr);
	for (i = 0; i < g->ptrs_per_pte; i++) {
		if (copies[i] == NO_FRAME)
			continue;
		pte_t e = pfn_pte(copies[i], PTE_VALID | PTE_USER);
		if (vma->vm_flags & VM_WRITE)
			e |= PTE_WRITE;
		set_entry(s, nt, i, fmt_pte_mkdirty(hw->fmt, e));
		if (k->hooks && k->hooks->page_mapped)
			k->hooks->page_mapped(k->hooks_ctx, copies[i], true);
	}
	return 1;
}

/*
 * retract_page_tables(mapping, pgoff, ...) (mm/khugepaged.c, v6.1; called by
 * collapse_file once the file range is one huge page): for every other
 * mm's VMA of the file that maps the range 2 MiB-aligned and whole, under
 * the file's i_mmap_rwsem for write (which it has taken since f3f0e1d2150b,
 * v4.8) and that mm's mmap_lock, taken with mmap_write_trylock (busy: the
 * mm is skipped; khugepaged would retry it from its mm_slot), clear the PMD
 * entry with pmdp_collapse_flush, run tlb_remove_table_sync_one (the
 * thp_gup_sync knob, 2ba99c5e0881 added it here too, in
 * collapse_and_free_pmd) and pte_free the table (v6.5's pte_free_defer, an
 * RCU-deferred free, is not modelled). The caller's own mm is left to
 * collapse_pte_mapped_thp, as MADV_COLLAPSE does (7d8faaf15545). The
 * anon_vma check (a private VMA with COW pages is skipped) is the PTE
 * check of retract_table here: the model has no anon_vma. Returns the
 * number of tables retracted.
 */
static int retract_page_tables(struct sim *s, struct vm_area_struct *self, uint64_t addr)
{
	struct hw *hw = hw_of(s);
	const struct pt_geom *g = &hw->geom;
	struct inode *ino = self->file;
	uint64_t size = 1ull << g->shift[g->levels - 2];
	uint64_t haddr = addr & ~(size - 1);
	uint64_t pgoff = self->vm_pgoff + ((haddr - self->vm_start) >> g->page_shift);
	int n = 0;
	if (haddr < self->vm_start)
		return 0;
	/* the model skips the lock when no other mm maps the file (nothing
	 * to retract; no step of a single-mm collapse changes) */
	int others = 0;
	for (int i = 0; i < ino->nr_mmap; i++)
		others += ino->mmap[i]->vm_mm != self->vm_mm;
	if (!others)
		return 0;
	down_write(s, &ino->i_mmap_rwsem);
	for (int i = 0; i < ino->nr_mmap; i++) {	/* by index: the array may change */
		struct vm_area_struct *vma = ino->mmap[i];
		struct mm_struct *mm = vma->vm_mm;
		if (mm == self->vm_mm || pgoff < vma->vm_pgoff)
			continue;
		uint64_t a = vma->vm_start + ((pgoff - vma->vm_pgoff) << g->page_shift);
		if ((a & (size - 1)) || a < vma->vm_start || a + size > vma->vm_end ||
		    (vma->vm_flags & (VM_HUGETLB | VM_PFNMAP | VM_MIXEDMAP)))
			continue;
		if (!down_write_trylock(s, &mm->mmap_sem))
			continue;
		uint32_t pmd = hw_pmd_table(hw_of(s), mm->pgd, a);
		if (pmd != NO_FRAME) {
			uint64_t pidx = pt_index(g, g->levels - 2, a);
			pte_t pe = table_of(hw, pmd)[pidx];
			if (pte_present(pe) && !(pe & PTE_HUGE))
				n += retract_table(s, vma, a, pmd, pidx, pe);
		}
		up_write(s, &mm->mmap_sem);
	}
	up_write(s, &ino->i_mmap_rwsem);
	return n;
}

/* madvise(MADV_COLLAPSE) of the huge-page range around addr (mm/khugepaged.c
 * madvise_collapse, v6.1; the model holds mmap_lock for write throughout):
 * collapse_huge_page for an anonymous VMA, collapse_pte_mapped_thp and
 * retract_page_tables for a file one. */
int64_t sys_collapse(struct sim *s, uint64_t addr)
{
	struct mm_struct *mm = current_task(s)->mm;
	kernel_entry(s);
	down_write(s, &mm->mmap_sem);
	const struct pt_geom *g = &hw_of(s)->geom;
	struct vm_area_struct *vma = find_vma(mm, addr & ~((1ull << g->shift[g->levels - 2]) - 1));
	int r = vma && !vma->file ? collapse_huge_page(s, mm, addr)
				  : collapse_pte_mapped_thp(s, mm, addr);
	if (vma && vma->file)
		retract_page_tables(s, vma, addr);
	up_write(s, &mm->mmap_sem);
	return r;
}

/*
 * The GUP-fast walk of one page (get_user_pages_fast(addr, 1, 0, &page):
 * lockless_pages_from_mm -> gup_pgd_range .. gup_pte_range, mm/gup.c,
 * v6.1): with IRQs off (local_irq_save) and no lock, READ_ONCE each level's
 * entry from the top; a none entry ends the walk (the caller would fall
 * back to the slow path). At the PTE: take a reference on the page
 * (try_grab_folio: fails on a page whose count is 0), then re-read the PMD
 * entry and the PTE and drop the reference if either changed. Every read is
 * a scheduling point; a read of a table that was freed (its frame's
 * generation moved since the entry above it was read) is reported to the
 * observer (I1 for a software walker) and ends the walk. A present huge
 * PMD entry (pmd_trans_huge of the entry read once, pmdp_get_lockless) ends
 * the walk at the PMD level: gup_huge_pmd() takes the reference on the
 * huge page (try_grab_folio of the head; the model's one frame of the
 * THP, one reference) and re-reads the PMD entry: changed (split,
 * zapped, collapsed meanwhile), the reference is dropped and the walk
 * fails. The reference is dropped before the return (as a short O_DIRECT
 * would drop it). Returns the pages got (0 or 1).
 */
int64_t gup_fast(struct sim *s, uint64_t addr)
{
	struct hw *hw = hw_of(s);
	const struct pt_geom *g = &hw->geom;
	struct kernel *k = kernel_of(s);
	struct mm_struct *mm = current_task(s)->mm;
	int cpu = cur_cpu(s);
	int64_t got = 0;
	uint32_t tables[8];
	uint32_t gens[8];
	pte_t seen[8];
	local_irq_disable(s);
	k->gup_fast_walkers++;
	uint32_t t = mm->pgd;
	uint32_t gen = frame_of(hw, t)->gen;
	int d, last = g->levels - 1;	/* the level whose entry maps the page */
	for (d = 0; d < g->levels; d++) {
		sim_step_arg(s, YP_THP, (uint64_t)P(s, P_walk_level_ns), addr,
			     THP_STEP_GUP_READ | (uint64_t)d << 8);
		struct frame *fr = frame_of(hw, t);
		if (fr->state != FRAME_PGTABLE || fr->gen != gen) {
			if (k->hooks && k->hooks->gup_fast_freed)
				k->hooks->gup_fast_freed(k->hooks_ctx, cpu, addr, t, d);
			goto out;
		}
		tables[d] = t;
		gens[d] = gen;
		seen[d] = fr->table[pt_index(g, d, addr)];
		if (!pte_present(seen[d]))
			goto out;
		t = pte_pfn(seen[d]);
		gen = frame_of(hw, t)->gen;
		if (d == g->depth_pmd && (seen[d] & PTE_HUGE)) {
			last = d;		/* pmd_trans_huge: gup_huge_pmd */
			break;
		}
	}
	/* gup_huge_pmd's pmd_access_permitted(orig, false): the model's walk
	 * is a read (no FOLL_WRITE), which a present user entry permits */
	struct frame *page = frame_of(hw, t);
	if (page->state != FRAME_DATA || page->refcount == 0)
		goto out;			/* try_grab_folio failed */
	page->refcount++;
	/* the re-check: the PMD entry, then the PTE (a read of its table too);
	 * gup_huge_pmd re-reads only the PMD entry */
	for (d = g->depth_pmd; d <= last; d++) {
		sim_step_arg(s, YP_THP, (uint64_t)P(s, P_walk_level_ns), addr,
			     THP_STEP_GUP_RECHECK | (uint64_t)d << 8);
		struct frame *fr = frame_of(hw, tables[d]);
		if (fr->state != FRAME_PGTABLE || fr->gen != gens[d]) {
			if (k->hooks && k->hooks->gup_fast_freed)
				k->hooks->gup_fast_freed(k->hooks_ctx, cpu, addr, tables[d], d);
			break;
		}
		if (fr->table[pt_index(g, d, addr)] != seen[d])
			break;
	}
	got = d == last + 1;
	/* put_page (the caller's, or gup_put_folio on the re-check's failure) */
	if (--page->refcount == 0)
		frame_free(hw, t);
out:
	k->gup_fast_walkers--;
	local_irq_enable(s);
	return got;
}
