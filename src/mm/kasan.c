/*
 * kasan.c - the generic KASAN shadow of the vmalloc range
 * (mm/kasan/shadow.c, CONFIG_KASAN_VMALLOC, v6.10 and 9e9e085effe9), and
 * the kernel page-table helpers both it and vmalloc use.
 *
 * One shadow byte covers KASAN_GRANULE_SIZE (8) bytes, so one shadow page
 * covers 8 pages of vmalloc space (KASAN_MEMORY_PER_SHADOW_PAGE: 32 KiB on
 * 4K pages). Shadow pages are populated on demand when an area is allocated
 * (rounding out: a page shared with a neighbour is reused as is) and
 * released when areas are purged (rounding in, extended over a partial
 * unit only when the neighbouring space is free). Releasing clears the PTE
 * and frees the page before any flush (the tolerated window W2); the flush
 * of the shadow range is the caller's choice (the kasan_flush knob).
 */
#include "mm/mm.h"
#include "mm/points.h"

/* ---- init_mm's page tables ---- */

static uint32_t init_pgd(struct sim *s)
{
	struct kernel *k = kernel_of(s);
	if (k->init_pgd == NO_FRAME)
		k->init_pgd = alloc_frame(s, FRAME_PGTABLE, 0);
	return k->init_pgd;
}

/* The PTE table of va in init_mm, allocated as needed (pte_alloc_kernel /
 * the vmalloc page-table population; kernel page tables are never freed). */
static uint32_t kernel_pte_table(struct sim *s, uint64_t va)
{
	struct hw *hw = hw_of(s);
	const struct pt_geom *g = &hw->geom;
	uint32_t table = init_pgd(s);
	for (int d = 0; d < g->levels - 1; d++) {
		uint64_t idx = pt_index(g, d, va);
		pte_t e = table_of(hw, table)[idx];
		if (!pte_present(e)) {
			uint32_t nt = alloc_zeroed_frame(s, FRAME_PGTABLE, d + 1, 0);
			set_entry(s, table, idx, pfn_pte(nt, PTE_VALID | PTE_TABLE));
			e = table_of(hw, table)[idx];
		}
		table = pte_pfn(e);
	}
	return table;
}

/* set_pte_at(&init_mm, va, mk_pte(frame, PAGE_KERNEL)): no flush (a none
 * PTE is never cached). Observers see every kernel mapping made (I5). */
void kernel_map_page(struct sim *s, uint64_t va, uint32_t frame)
{
	struct kernel *k = kernel_of(s);
	const struct pt_format *fmt = hw_of(s)->fmt;
	uint32_t t = kernel_pte_table(s, va);
	uint64_t idx = pt_index(&hw_of(s)->geom, hw_of(s)->geom.levels - 1, va);
	if (k->hooks && k->hooks->kernel_mapped)
		k->hooks->kernel_mapped(k->hooks_ctx, va, frame);
	set_entry(s, t, idx, fmt_pte_mkdirty(fmt, pfn_pte(frame, PTE_VALID | PTE_WRITE | PTE_YOUNG)));
	sim_charge(s, (uint64_t)P(s, P_pte_zap_ns));
}

/* ptep_get_and_clear(&init_mm, va) without a flush: the frame it mapped, or
 * NO_FRAME when nothing was mapped */
uint32_t kernel_unmap_page(struct sim *s, uint64_t va)
{
	struct hw *hw = hw_of(s);
	struct kernel *k = kernel_of(s);
	if (k->init_pgd == NO_FRAME)
		return NO_FRAME;
	pte_t *ptep = hw_pte_lookup(hw, k->init_pgd, va);
	if (!ptep || !pte_present(*ptep))
		return NO_FRAME;
	uint32_t f = pte_pfn(*ptep);
	uint32_t t = kernel_pte_table(s, va);
	set_entry(s, t, pt_index(&hw->geom, hw->geom.levels - 1, va), 0);
	if (k->hooks && k->hooks->kernel_unmapped)
		k->hooks->kernel_unmapped(k->hooks_ctx, va);
	sim_charge(s, (uint64_t)P(s, P_pte_zap_ns));
	return f;
}

bool kernel_mapped(struct sim *s, uint64_t va)
{
	struct kernel *k = kernel_of(s);
	if (k->init_pgd == NO_FRAME)
		return false;
	pte_t *ptep = hw_pte_lookup(hw_of(s), k->init_pgd, va);
	return ptep && pte_present(*ptep);
}

/* An access through the MMU with init_mm's tables; kernel translations are
 * global (x86 G bit, arm64 nG=0): one TLB entry serves every address space. */
static void mmu_kernel(struct sim *s, uint64_t va, bool write)
{
	struct hw *hw = hw_of(s);
	struct hw_access acc;
	hw_access(hw, cur_cpu(s), init_pgd(s), TC_TAG_GLOBAL, va, write, &acc);
	if (acc.levels_read)
		sim_charge(s, (uint64_t)acc.levels_read * (uint64_t)P(s, P_walk_level_ns));
	SIM_BUG_ON(s, acc.fault);	/* the kernel touched an unmapped vmalloc address */
}

/* ---- the shadow ---- */

static inline uint64_t shadow_of(const struct kernel *k, uint64_t addr)
{
	return (addr >> 3) + k->kva.kasan_shadow_offset;
}

/* KASAN_MEMORY_PER_SHADOW_PAGE */
static inline uint64_t shadow_unit(struct sim *s)
{
	return 8 * hw_of(s)->geom.page_size;
}

void kernel_access(struct sim *s, uint64_t va, bool write)
{
	struct kernel *k = kernel_of(s);
	if (k->kasan)
		mmu_kernel(s, shadow_of(k, va), false);	/* the inline shadow check */
	mmu_kernel(s, va, write);
}

/*
 * kasan_populate_vmalloc(addr, size) (mm/kasan/shadow.c, v6.10): map a
 * shadow page, filled with KASAN_VMALLOC_INVALID, at every slot of the
 * area's shadow that has none (apply_to_page_range; under
 * init_mm.page_table_lock; no flush).
 */
void kasan_populate_vmalloc(struct sim *s, uint64_t addr, uint64_t size)
{
	struct kernel *k = kernel_of(s);
	if (!k->kasan)
		return;
	uint64_t ps = hw_of(s)->geom.page_size;
	uint64_t ss = shadow_of(k, addr) & ~(ps - 1);
	uint64_t se = (shadow_of(k, addr + size) + ps - 1) & ~(ps - 1);
	/* one scheduler-visible step for the range: what interleaves with
	 * other CPUs is the area's shadow being populated, not each PTE (the
	 * lock is taken and dropped per PTE; its cost is charged per PTE) */
	sim_step_arg(s, YP_KPTE, (uint64_t)P(s, P_lock_op_ns), ss, 1);
	for (uint64_t a = ss; a < se; a += ps) {
		if (kernel_mapped(s, a))
			continue;
		kernel_map_page(s, a, alloc_zeroed_frame(s, FRAME_DATA, 0,
							 (uint64_t)P(s, P_lock_op_ns)));
	}
}

/* kasan_poison_vmalloc(start, size): mark the area's shadow invalid (the
 * freeing CPU writes it, and caches the shadow translations) */
void kasan_poison_vmalloc(struct sim *s, uint64_t start, uint64_t size)
{
	struct kernel *k = kernel_of(s);
	if (!k->kasan)
		return;
	uint64_t ps = hw_of(s)->geom.page_size;
	uint64_t ss = shadow_of(k, start), se = shadow_of(k, start + size);
	for (uint64_t a = ss & ~(ps - 1); a < se; a += ps)
		mmu_kernel(s, a < ss ? ss : a, true);
	sim_charge(s, (size >> 3) / 64 * (uint64_t)P(s, P_user_access_ns));
}

/*
 * kasan_release_vmalloc(start, end, free_start, free_end, flags)
 * (mm/kasan/shadow.c, v6.10; the flags are 9e9e085effe9's): the shadow
 * pages of the whole units inside [start, end), extended over a partial
 * unit at either edge when [free_start, free_end) shows the neighbour free;
 * PAGE_RANGE clears each existing PTE and frees its page (no flush yet:
 * W2), TLB_FLUSH flushes the released shadow range. Returns the number of
 * kernel flushes issued (0 or 1).
 */
unsigned kasan_release_vmalloc(struct sim *s, uint64_t start, uint64_t end, uint64_t free_start,
			       uint64_t free_end, unsigned flags)
{
	struct kernel *k = kernel_of(s);
	if (!k->kasan)
		return 0;
	uint64_t u = shadow_unit(s), ps = hw_of(s)->geom.page_size;
	uint64_t rs = (start + u - 1) & ~(u - 1), re = end & ~(u - 1);
	uint64_t fs = (free_start + u - 1) & ~(u - 1), fe = free_end & ~(u - 1);
	if (start != rs && fs < rs)
		rs -= u;
	if (end != re && fe > re)
		re += u;
	if (re <= rs)
		return 0;
	uint64_t ss = shadow_of(k, rs), se = shadow_of(k, re);
	if (flags & KASAN_VMALLOC_PAGE_RANGE) {
		sim_step_arg(s, YP_KPTE, (uint64_t)P(s, P_lock_op_ns), ss, 0);	/* as in populate */
		for (uint64_t a = ss; a < se; a += ps) {
			if (!kernel_mapped(s, a))
				continue;
			sim_charge(s, (uint64_t)P(s, P_lock_op_ns));
			uint32_t f = kernel_unmap_page(s, a);
			if (f == NO_FRAME)
				continue;
			if (k->hooks && k->hooks->kernel_page_freed)
				k->hooks->kernel_page_freed(k->hooks_ctx, f, true);
			frame_free(hw_of(s), f);
			sim_charge(s, (uint64_t)P(s, P_page_free_ns));
			s->m.shadow_pages_freed++;
		}
	}
	if (flags & KASAN_VMALLOC_TLB_FLUSH) {
		flush_tlb_kernel_range(s, ss, se);
		return 1;
	}
	return 0;
}
