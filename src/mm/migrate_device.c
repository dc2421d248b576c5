/*
 * migrate_device.c - a device driver migrating anonymous pages with the
 * migrate_vma API (mm/migrate_device.c, v6.0; mm/migrate.c v4.14 .. v5.18,
 * where 8763cb45ab96 and 8c3328f1f36a added it), with the knobs
 * migrate_flush (60bae7370896) and migrate_dirty (fd35ca3d12cc).
 *
 * The driver (the calling task; lib/test_hmm.c's dmirror_migrate is the
 * pattern) holds mmap_lock for read throughout and:
 *  - migrate_vma_setup(): migrate_vma_collect() walks the range PTE table by
 *    PTE table (walk_page_range -> migrate_vma_collect_pmd). Under the PTE
 *    lock each present anonymous page is referenced and trylocked, its PTE
 *    cleared (ptep_get_and_clear) and replaced with a migration entry
 *    (writable if the PTE was); the mapping's rmap and reference go. Since
 *    fd35ca3d12cc (v6.0) a dirty cleared PTE marks the page dirty first
 *    (knob migrate_dirty). One flush_tlb_range() of the table's part of the
 *    range follows when any PTE was replaced: before pte_unmap_unlock()
 *    since 60bae7370896 (v6.0), after it before (knob migrate_flush);
 *  - copies each collected page to a page it allocated (the device's copy
 *    engine; the model allocates the destination from system memory);
 *  - migrate_vma_pages(): the new page takes the old one's mapping state
 *    (folio_migrate_flags: dirty, anonymous, swap-backed or lazyfree);
 *  - migrate_vma_finalize(): remove_migration_ptes() maps the new page
 *    wherever the migration entry is still in place (a zap may have removed
 *    it: the new page is then freed), the old page is unlocked (waking the
 *    faults that wait in migration_entry_wait) and released.
 *
 * The I3 point is the driver's copy (mm_hooks.migrate_copied): what the old
 * page holds then, and whether it is dirty, is what the new page gets. A
 * write into the old page after it (through a TLB entry the collect did not
 * flush) is lost; a page whose cleared PTE was dirty but which is not marked
 * dirty by then is migrated as clean - for a lazyfree (MADV_FREE) page,
 * which reclaim discards when clean, the data written since MADV_FREE is
 * lost. The I2 point is migrate_vma_setup's return (no CPU may translate a
 * page it unmapped any more), and with migrate_flush=after_unlock a
 * MADV_DONTNEED or munmap that takes the PTE lock between the unlock and the
 * flush finds only migration entries, has nothing to flush and returns while
 * a CPU still translates the page (60bae7370896's race): I2 at its return.
 *
 * Not modelled: holes and the zero page (migrate_vma_collect_hole,
 * migrate_vma_insert_page), device-private pages and their entries, the
 * migration of a THP as one page (migrate_vma_collect_pmd splits a
 * PMD-mapped THP with split_huge_page, huge_memory.c's split_huge_page_at,
 * and skips the extent when it cannot: the model does the same; the huge
 * zero page is not modelled), swap entries, pages mapped more than once, mmu notifiers, the second
 * unmap pass (migrate_vma_unmap, try_to_migrate) for a page the collect
 * could not lock (it is skipped: not migrated), a failed copy. A fork that
 * meets a migration entry does not give the child one (the kernel copies
 * it); mprotect leaves it as it is (the kernel makes a writable one
 * read-only); mremap moves it as it is. Both take mmap_lock for write, so
 * they meet one only when the driver dropped mmap_lock meanwhile, which
 * the model's driver never does.
 */
#include <inttypes.h>
#include <stdio.h>

#include "mm/mm.h"
#include "mm/points.h"

enum migrate_step {
	MIG_STEP_COLLECT,	/* a PTE replaced with a migration entry */
	MIG_STEP_FLUSH,		/* collect's flush_tlb_range */
	MIG_STEP_UNLOCK,	/* collect's pte_unmap_unlock */
	MIG_STEP_COPY,		/* the driver copies a page */
	MIG_STEP_REMAP,		/* remove_migration_pte maps the new page */
	MIG_STEP_GONE,		/* the migration entry is gone: the new page is dropped */
	MIG_STEP_COUNT
};

static void fmt_migrate(char *buf, size_t len, uint64_t a, uint64_t b)
{
	static const char *const steps[MIG_STEP_COUNT] = {
		[MIG_STEP_COLLECT] = "migrate_vma_collect_pmd: migration entry",
		[MIG_STEP_FLUSH] = "migrate_vma_collect_pmd: flush_tlb_range",
		[MIG_STEP_UNLOCK] = "migrate_vma_collect_pmd: pte_unmap_unlock",
		[MIG_STEP_COPY] = "driver copy",
		[MIG_STEP_REMAP] = "remove_migration_pte: new page mapped",
		[MIG_STEP_GONE] = "remove_migration_pte: entry gone, new page dropped",
	};
	snprintf(buf, len, "tlbsim_migrate: %s address=0x%" PRIx64,
		 b < MIG_STEP_COUNT ? steps[b] : "?", a);
}

static const struct sim_point tp_migrate = {"tlbsim_migrate", fmt_migrate, 0};

/* a page of the migration (struct migrate_vma's src/dst arrays) */
struct mig_page {
	uint64_t addr;
	uint32_t src, dst;
	uint32_t src_gen;
};

/*
 * migrate_vma_collect_pmd() (mm/migrate_device.c, v6.0; mm/migrate.c
 * v4.14 .. v5.18) for [start, end) within one PTE table: the pages it
 * collected are appended to pages[*n].
 */
static void migrate_vma_collect_pmd(struct sim *s, struct vm_area_struct *vma, uint32_t table,
				    uint64_t start, uint64_t end, struct mig_page *pages, uint32_t *n)
{
	struct kernel *k = kernel_of(s);
	struct hw *hw = hw_of(s);
	const struct pt_geom *g = &hw->geom;
	struct mm_struct *mm = vma->vm_mm;
	const struct tlbsim_policy *pol = &machine_of(s)->policy;
	int d = g->levels - 1;
	uint32_t unmapped = 0;
	/* pte_offset_map_lock(): held as an rmap walker holds it, so that
	 * zaps and mprotect wait for it and it waits for them */
	rmap_ptl_lock(s, table);
	sim_step_arg(s, YP_PTE, (uint64_t)P(s, P_lock_op_ns), start, 0);
	for (uint64_t addr = start; addr < end; addr += g->page_size) {
		pte_t *tab = table_of(hw, table);
		uint64_t idx = pt_index(g, d, addr);
		pte_t pte = tab[idx];
		sim_charge(s, (uint64_t)P(s, P_pte_scan_ns));
		if (!pte_present(pte))
			continue;		/* holes, swap and migration entries */
		uint32_t f = pte_pfn(pte);
		struct frame *fr = frame_of(hw, f);
		if (is_zero_frame(s, f) || !(fr->pgflags & PG_ANON) || fr->state != FRAME_DATA)
			continue;
		/* get_page(); trylock_page(): a locked page is not migrated */
		if (fr->pgflags & PG_LOCKED)
			continue;
		fr->refcount++;
		fr->pgflags |= PG_LOCKED;
		/* ptep_get_and_clear(), and since fd35ca3d12cc the dirty bit to
		 * the page (folio_mark_dirty) */
		sim_step_arg(s, &tp_migrate, (uint64_t)P(s, P_pte_zap_ns), addr, MIG_STEP_COLLECT);
		pte = tab[idx];
		/* 6c287605fd56 (v5.19; presets 6.0+, migrate_flush=under_ptl):
		 * an anonymous page mapped exclusively (PageAnonExclusive; here:
		 * mapped once - the mapping's reference and the collect's - and
		 * not KSM) is unshared with ptep_clear_flush(), a flush_tlb_page
		 * of its own before the migration entry; the range flush below
		 * still follows */
		if (pol->migrate_flush == MIGRATE_FLUSH_UNDER_PTL && fr->refcount == 2 &&
		    !(fr->pgflags & (PG_KSM | PG_DUPED))) {
			set_entry(s, table, idx, 0);
			machine_of(s)->arch->flush_tlb_page(s, &mm->context, addr);
		}
		if (pol->migrate_dirty == MIGRATE_DIRTY_COPY && !fmt_pte_clean(hw->fmt, pte))
			fr->pgflags |= PG_DIRTY;
		/* make_migration_entry(): writable if the PTE was; set_pte_at() */
		set_entry(s, table, idx, pfn_pte(f, PTE_MIGRATION | (pte & PTE_WRITE)));
		if (k->hooks && k->hooks->migrate_unmapped)
			k->hooks->migrate_unmapped(k->hooks_ctx, f, pte);
		/* page_remove_rmap(); put_page(): the mapping's reference (the
		 * collect's get_page keeps the page) */
		fr->refcount--;
		pages[*n] = (struct mig_page){.addr = addr, .src = f, .dst = NO_FRAME,
					      .src_gen = fr->gen};
		(*n)++;
		unmapped++;
	}
	if (pol->migrate_flush == MIGRATE_FLUSH_UNDER_PTL) {
		/* 60bae7370896: the flush before the unlock */
		if (unmapped) {
			sim_trace(s, &tp_migrate, start, MIG_STEP_FLUSH);
			machine_of(s)->arch->flush_tlb_range(s, &mm->context, start, end);
		}
		rmap_ptl_unlock(s);
		sim_step_arg(s, &tp_migrate, (uint64_t)P(s, P_lock_op_ns), start, MIG_STEP_UNLOCK);
	} else {
		rmap_ptl_unlock(s);
		sim_step_arg(s, &tp_migrate, (uint64_t)P(s, P_lock_op_ns), start, MIG_STEP_UNLOCK);
		if (unmapped) {
			sim_trace(s, &tp_migrate, start, MIG_STEP_FLUSH);
			machine_of(s)->arch->flush_tlb_range(s, &mm->context, start, end);
		}
	}
}

/*
 * remove_migration_pte() (mm/migrate.c, v5.1 .. v6.0) of one page: if addr
 * still holds src's migration entry, map dst there (vm_page_prot: old and
 * clean, writable when the entry was) and give it the mapping's reference;
 * true if it did.
 */
static bool remove_migration_pte(struct sim *s, struct vm_area_struct *vma, uint64_t addr,
				 uint32_t src, uint32_t dst)
{
	struct kernel *k = kernel_of(s);
	struct hw *hw = hw_of(s);
	struct mm_struct *mm = vma->vm_mm;
	uint32_t table = pte_table_of(s, mm, addr);
	if (!table)
		return false;
	rmap_ptl_lock(s, table);
	sim_step_arg(s, YP_PTE, (uint64_t)P(s, P_lock_op_ns), addr, 0);
	pte_t *ptep = pte_lookup(s, mm, addr);
	bool mapped = false;
	if (ptep && is_migration_pte(*ptep) && pte_pfn(*ptep) == src) {
		pte_t pte = pfn_pte(dst, PTE_VALID | PTE_USER) | (*ptep & PTE_WRITE);
		pte = fmt_pte_mkclean(hw->fmt, pte);
		frame_of(hw, dst)->refcount++;		/* get_page + page_add_anon_rmap */
		*ptep = pte;
		if (k->hooks && k->hooks->page_mapped)
			k->hooks->page_mapped(k->hooks_ctx, dst, false);
		mapped = true;
	}
	rmap_ptl_unlock(s);
	sim_step_arg(s, &tp_migrate, (uint64_t)P(s, P_lock_op_ns), addr,
		     mapped ? MIG_STEP_REMAP : MIG_STEP_GONE);
	return mapped;
}

/* put_page() of a frame the model counts references of */
static void put_frame(struct sim *s, uint32_t f)
{
	struct frame *fr = frame_of(hw_of(s), f);
	if (--fr->refcount == 0)
		frame_free(hw_of(s), f);
}

/* the pages one migrate_vma_setup() call takes: drivers migrate in chunks
 * of a fixed array (lib/test_hmm.c: 64 pages) */
#define MIGRATE_CHUNK 64u

/*
 * One chunk [start, end) of a driver's migration (lib/test_hmm.c
 * dmirror_migrate_to_device's loop body): migrate_vma_setup, the copy,
 * migrate_vma_pages, migrate_vma_finalize. The pages migrated.
 */
static uint32_t migrate_chunk(struct sim *s, struct vm_area_struct *vma, uint64_t start,
			      uint64_t end, uint64_t cookie)
{
	struct kernel *k = kernel_of(s);
	struct hw *hw = hw_of(s);
	const struct pt_geom *g = &hw->geom;
	struct mm_struct *mm = vma->vm_mm;
	uint64_t ps = g->page_size;
	struct mig_page pages[MIGRATE_CHUNK];
	uint32_t n = 0;
	/* migrate_vma_collect(): walk_page_range() over the PTE tables */
	uint64_t pmd_size = 1ull << g->pmd_shift;
	for (uint64_t a = start; a < end;) {
		uint64_t next = (a & ~(pmd_size - 1)) + pmd_size;
		if (next > end || next < a)
			next = end;
		/* migrate_vma_collect_pmd: a huge PMD entry's THP is split
		 * (split_huge_page); if it cannot be, the extent is skipped
		 * (migrate_vma_collect_skip) */
		if (split_huge_page_at(s, vma, a) < 0) {
			a = next;
			continue;
		}
		uint32_t table = pte_table_of(s, mm, a);
		if (table)
			migrate_vma_collect_pmd(s, vma, table, a, next, pages, &n);
		a = next;
	}
	/* migrate_vma_setup returns: no CPU may translate a page it unmapped
	 * (the pages it collected: a racing zap's own flush is the zap's) */
	for (uint32_t i = 0; i < n && k->hooks && k->hooks->range_unmapped; i++)
		k->hooks->range_unmapped(k->hooks_ctx, mm, pages[i].addr, pages[i].addr + ps,
					 SYS_MIGRATE_VMA, cookie);
	/* the driver allocates and copies (dmirror_migrate_alloc_and_copy) */
	for (uint32_t i = 0; i < n; i++) {
		struct mig_page *p = &pages[i];
		p->dst = alloc_frame(s, FRAME_DATA, 0);
		struct frame *nf = frame_of(hw, p->dst);
		nf->refcount = 1;
		nf->pgflags = PG_ANON | PG_LOCKED;	/* lock_page(dpage) */
		sim_step_arg(s, &tp_migrate,
			     (uint64_t)P(s, P_page_alloc_ns) +
				     (uint64_t)P(s, P_copy_4k_ns) * (ps >> 12),
			     p->addr, MIG_STEP_COPY);
		if (k->hooks && k->hooks->migrate_copied)
			k->hooks->migrate_copied(k->hooks_ctx, p->addr, p->src, p->dst);
	}
	/* migrate_vma_pages(): folio_migrate_flags */
	for (uint32_t i = 0; i < n; i++) {
		struct frame *of = frame_of(hw, pages[i].src), *nf = frame_of(hw, pages[i].dst);
		nf->pgflags |= of->pgflags & (PG_DIRTY | PG_LAZYFREE);
	}
	/* migrate_vma_finalize(): remove_migration_ptes, unlock and release */
	for (uint32_t i = 0; i < n; i++) {
		struct mig_page *p = &pages[i];
		remove_migration_pte(s, vma, p->addr, p->src, p->dst);
		unlock_page(s, p->src);
		put_frame(s, p->src);
		unlock_page(s, p->dst);
		put_frame(s, p->dst);
	}
	return n;
}

/* The driver's migration of [addr, addr+len) (see the top of the file) */
int64_t sys_migrate_vma(struct sim *s, uint64_t addr, uint64_t len)
{
	struct kernel *k = kernel_of(s);
	struct mm_struct *mm = current_task(s)->mm;
	uint64_t ps = hw_of(s)->geom.page_size;
	uint64_t start = addr & ~(ps - 1);
	uint64_t end = (addr + len + ps - 1) & ~(ps - 1);
	if (!len || end <= start)
		return -1;
	sim_set_mode(s, MODE_SYS);
	sim_step_arg(s, YP_SYSCALL, syscall_cost(s), SYS_MIGRATE_VMA, start);
	kernel_entry(s);
	uint64_t cookie = k->hooks && k->hooks->syscall_enter
				  ? k->hooks->syscall_enter(k->hooks_ctx, SYS_MIGRATE_VMA)
				  : 0;
	int64_t done = -1;
	down_read(s, &mm->mmap_sem);
	/* migrate_vma_setup()'s checks: one VMA covering the range; the model
	 * migrates private anonymous memory only (vma_is_anonymous) */
	struct vm_area_struct *vma = find_vma(mm, start);
	if (vma && vma->vm_start <= start && vma->vm_end >= end && !vma->file &&
	    !(vma->vm_flags & (VM_SHARED | VM_PFNMAP | VM_MIXEDMAP))) {
		done = 0;
		for (uint64_t a = start; a < end && !s->error; a += MIGRATE_CHUNK * ps) {
			uint64_t e = end - a > MIGRATE_CHUNK * ps ? a + MIGRATE_CHUNK * ps : end;
			done += migrate_chunk(s, vma, a, e, cookie);
		}
	}
	up_read(s, &mm->mmap_sem);
	sim_set_mode(s, MODE_USER);
	return done;
}
