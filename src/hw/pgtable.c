/*
 * pgtable.c - page-table geometry and the two descriptor formats.
 */
#include <string.h>

#include "hw/hw.h"

/* x86-64, 4-level paging (Intel SDM 3A ch. 4, AMD APM 2 ch. 5) */
const struct pt_format pt_format_x86_64 = {
	.name = "x86-64",
	.hw_sets_ad = true,
	.af_fault = false,
	.rdonly = false,
	.fault_flushes_va = true,
	.soft_dirty = true,
	.task_size = 0x7ffffffff000ull,	/* TASK_SIZE_MAX: 2^47 minus a guard page */
};

/* arm64 VMSAv8-64 stage 1, 48-bit VA, no hardware AF/DBM (kernel-model 3.1) */
const struct pt_format pt_format_arm64 = {
	.name = "arm64",
	.hw_sets_ad = false,
	.af_fault = true,
	.rdonly = true,
	.fault_flushes_va = false,
	.task_size = 1ull << 48,
};

void pt_geom_init(struct pt_geom *g, int page_shift, uint64_t task_size)
{
	memset(g, 0, sizeof(*g));
	g->page_shift = page_shift;
	g->page_size = 1ull << page_shift;
	int bpl = page_shift - 3;	/* descriptors per table: page_size / 8 */
	g->ptrs_per_pte = 1ull << bpl;
	g->task_size = task_size;
	/* 48-bit VA: levels = ceil((48 - page_shift) / bpl) */
	int va_bits = 48;
	int levels = (va_bits - page_shift + bpl - 1) / bpl;
	g->levels = levels;
	for (int d = levels - 1, sh = page_shift; d >= 0; d--, sh += bpl) {
		g->shift[d] = sh;
		g->bits[d] = sh + bpl <= va_bits ? bpl : va_bits - sh;
		g->idx_mask[d] = (1ull << g->bits[d]) - 1;
	}
	/* Kernel names. PTE table is at depth levels-1; its entries are PTEs.
	 * The PMD table is at depth levels-2, PUD table at levels-3 (if any). */
	g->pmd_shift = g->shift[levels - 2];
	g->depth_pmd = levels - 2;
	if (levels >= 4) {
		g->pud_shift = g->shift[levels - 3];
		g->depth_pud = levels - 3;
	} else {
		g->pud_shift = g->shift[0];	/* PUD folded into PGD */
		g->depth_pud = -1;
	}
	g->pgdir_shift = g->shift[0];
	g->p4d_shift = g->shift[0];		/* P4D folded (48-bit VA) */
}

/* pgd_offset() .. pte_offset_map() without allocation */
pte_t *hw_pte_lookup(const struct hw *hw, uint32_t root, uint64_t va)
{
	const struct pt_geom *g = &hw->geom;
	uint32_t table = root;
	for (int d = 0; d < g->levels - 1; d++) {
		pte_t e = table_of(hw, table)[pt_index(g, d, va)];
		if (!pte_present(e) || pmd_trans_huge_entry(e))
			return NULL;
		table = pte_pfn(e);
	}
	return &table_of(hw, table)[pt_index(g, g->levels - 1, va)];
}

uint32_t hw_pmd_table(const struct hw *hw, uint32_t root, uint64_t va)
{
	const struct pt_geom *g = &hw->geom;
	uint32_t table = root;
	for (int d = 0; d < g->depth_pmd; d++) {
		pte_t e = table_of(hw, table)[pt_index(g, d, va)];
		if (!pte_present(e))
			return NO_FRAME;
		table = pte_pfn(e);
	}
	return table;
}

pte_t *hw_pmd_lookup(const struct hw *hw, uint32_t root, uint64_t va)
{
	uint32_t table = hw_pmd_table(hw, root, va);
	if (table == NO_FRAME)
		return NULL;
	return &table_of(hw, table)[pt_index(&hw->geom, hw->geom.depth_pmd, va)];
}
