/*
 * tlb.h - struct mmu_gather and the inline helpers of
 * include/asm-generic/tlb.h (v5.1), shared by the mm model (mm/mmu_gather.c,
 * which drives a gather) and the arch back ends (whose tlb_flush() reads it).
 *
 * Ordering rule kept by mmu_gather: unhook the translation, invalidate every
 * CPU that may cache it, and only then free the memory it pointed at.
 *
 * v5.1 fields (kernel-model 1.2 with errata E2: no vma_exec / vma_huge).
 */
#ifndef TLBSIM_TLB_H
#define TLBSIM_TLB_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/arch.h"

#define MMU_GATHER_BUNDLE 8
#define TLBSIM_EINVAL_VA (~0ull)

struct mm_struct;

struct mmu_table_batch {
	uint32_t nr;
	uint32_t cap;
	uint32_t *tables;
	int cpu;			/* where call_rcu ran: the callback's CPU */
	struct mmu_table_batch *next_free;
};

struct mmu_gather {
	struct mm_struct *mm;
	mm_context_t *ctx;		/* &tlb->mm->context: what the arch reads of mm */
	struct mmu_table_batch *batch;	/* RCU table batch (arm64) */
	uint64_t start, end;
	bool fullmm;
	bool need_flush_all;
	bool freed_tables;
	bool cleared_ptes, cleared_pmds, cleared_puds, cleared_p4ds;
	unsigned int batch_count;	/* extra page-batch pages */
	/* page batches: the bundle plus batch_count batches, flattened */
	uint32_t nr_pages;
	uint32_t max_pages;		/* 8 + MAX_GATHER_BATCH * MAX_GATHER_BATCH_COUNT */
	uint32_t *pages;		/* frames queued for freeing */
	/* tlbsim bookkeeping */
	uint64_t start_arg, end_arg;	/* v5.1 tlb_finish_mmu arguments */
};

/* MAX_GATHER_BATCH = (PAGE_SIZE - 2*sizeof(void*)) / sizeof(void*) */
static inline uint32_t max_gather_batch(uint64_t page_size)
{
	return (uint32_t)((page_size - 16) / 8);
}

/* MAX_GATHER_BATCH_COUNT = 10000UL / MAX_GATHER_BATCH */
static inline uint32_t max_gather_batch_count(uint64_t page_size)
{
	return 10000u / max_gather_batch(page_size);
}

/* MAX_TABLE_BATCH = (PAGE_SIZE - sizeof(struct mmu_table_batch)) / sizeof(void*);
 * sizeof = rcu_head (16) + nr (4) padded to 24 */
static inline uint32_t max_table_batch(uint64_t page_size)
{
	return (uint32_t)((page_size - 24) / 8);
}

/* __tlb_reset_range() (include/asm-generic/tlb.h, v5.1) */
static inline void __tlb_reset_range(struct mmu_gather *tlb)
{
	if (tlb->fullmm) {
		tlb->start = tlb->end = ~0ull;
	} else {
		tlb->start = TLBSIM_EINVAL_VA;	/* TASK_SIZE: any value above user VAs */
		tlb->end = 0;
	}
	tlb->freed_tables = 0;
	tlb->cleared_ptes = 0;
	tlb->cleared_pmds = 0;
	tlb->cleared_puds = 0;
	tlb->cleared_p4ds = 0;
}

/* __tlb_adjust_range() */
static inline void __tlb_adjust_range(struct mmu_gather *tlb, uint64_t address,
				      uint64_t range_size)
{
	if (address < tlb->start)
		tlb->start = address;
	if (address + range_size > tlb->end)
		tlb->end = address + range_size;
}

/* tlb_remove_tlb_entry() -> __tlb_remove_tlb_entry + cleared_ptes */
static inline void tlb_remove_tlb_entry(struct mmu_gather *tlb, uint64_t address,
					uint64_t page_size)
{
	__tlb_adjust_range(tlb, address, page_size);
	tlb->cleared_ptes = 1;
}

/* tlb_get_unmap_shift(): the smallest level that was cleared */
static inline unsigned int tlb_get_unmap_shift(const struct pt_geom *g,
					       const struct mmu_gather *tlb)
{
	if (tlb->cleared_ptes)
		return (unsigned int)g->page_shift;
	if (tlb->cleared_pmds)
		return (unsigned int)g->pmd_shift;
	if (tlb->cleared_puds)
		return (unsigned int)g->pud_shift;
	if (tlb->cleared_p4ds)
		return (unsigned int)g->p4d_shift;
	return (unsigned int)g->page_shift;
}

static inline uint64_t tlb_get_unmap_size(const struct pt_geom *g, const struct mmu_gather *tlb)
{
	return 1ull << tlb_get_unmap_shift(g, tlb);
}

#endif
