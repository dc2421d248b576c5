/*
 * mm.h - the kernel mm model (v5.1 baseline): mm_struct, VMAs, mmap_sem,
 * shmem objects, mmu_gather, and the syscall/fault entry points the workloads
 * call. Names mirror the kernel's; each function's comment names the kernel
 * function, file and version it mirrors.
 *
 * Ordering rule kept by mmu_gather (include/asm-generic/tlb.h): unhook the
 * translation, invalidate every CPU that may cache it, and only then free the
 * memory it pointed at.
 */
#ifndef TLBSIM_MM_H
#define TLBSIM_MM_H

#include <stdbool.h>
#include <stdint.h>

#include "hw/hw.h"

struct sim;
struct sim_thread;

/* ---- rw_semaphore (mmap_sem) ---- */
struct rw_semaphore {
	int readers;			/* active readers */
	bool writer;			/* held for write */
	struct sim_thread *wait_head;	/* FIFO of sleeping waiters */
	struct sim_thread *wait_tail;
	struct sim_thread *spin_head;	/* writers spinning on a running writer owner */
	struct sim_thread *spin_tail;	/* (the OSQ, FIFO) */
};

/* ---- shmem object backing a MAP_SHARED|MAP_ANONYMOUS mapping ---- */
struct shmem_page {
	uint64_t index;
	uint32_t frame;
};
struct shmem_obj {
	uint32_t refs;			/* mappings (file references) */
	uint32_t nr;
	size_t cap;
	struct shmem_page *pages;	/* sorted by index */
	struct shmem_obj *next_free;
};

/* ---- VMAs ---- */
#define VM_READ    0x1u
#define VM_WRITE   0x2u
#define VM_SHARED  0x8u
#define VM_GROWSDOWN 0x100u
#define VM_STACK_THREAD 0x10000u	/* tlbsim: a thread stack (for reporting) */

struct vm_area_struct {
	uint64_t vm_start, vm_end;
	uint32_t vm_flags;
	uint64_t vm_pgoff;		/* shmem: page offset of vm_start */
	struct shmem_obj *shm;		/* NULL: private anonymous */
	struct vm_area_struct *next_free;
};

struct mm_struct {
	int id;
	uint32_t pgd;			/* root table frame */
	struct vm_area_struct **vmas;	/* sorted by vm_start */
	int nr_vmas;
	size_t cap_vmas;
	struct rw_semaphore mmap_sem;
	int tlb_flush_pending;		/* mm->tlb_flush_pending */
	uint64_t mmap_base;
	int users;
	/* arm64 */
	uint32_t asid;
	/* x86 */
	uint64_t ctx_id;		/* mm->context.ctx_id, never reused */
	uint64_t tlb_gen;		/* mm->context.tlb_gen */
	uint64_t *cpumask;		/* mm_cpumask */
};

/* ---- mmu_gather, v5.1 fields (kernel-model 1.2, E2) ---- */
#define MMU_GATHER_BUNDLE 8

struct mmu_table_batch {
	uint32_t nr;
	uint32_t cap;
	uint32_t *tables;
	struct mmu_table_batch *next_free;
};

struct mmu_gather {
	struct mm_struct *mm;
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

/* mmu_gather constants for a page size (kernel-model 1.2) */
uint32_t max_gather_batch(uint64_t page_size);
uint32_t max_gather_batch_count(uint64_t page_size);
uint32_t max_table_batch(uint64_t page_size);

/* ---- entry points used by workloads (simulated syscalls) ---- */
#define TLBSIM_MAP_SHARED 0x01
#define TLBSIM_MAP_PRIVATE 0x02
#define TLBSIM_EINVAL_VA (~0ull)

int mm_init(struct sim *s, struct mm_struct *mm, int id);
void mm_destroy(struct sim *s, struct mm_struct *mm);

uint64_t sys_mmap(struct sim *s, uint64_t hint, uint64_t len, int flags);
int sys_munmap(struct sim *s, uint64_t addr, uint64_t len);
int sys_madvise_dontneed(struct sim *s, uint64_t addr, uint64_t len);
int sys_madvise_free(struct sim *s, uint64_t addr, uint64_t len);
/* The live PTE slot for addr in mm, or NULL if a table is missing. */
pte_t *pte_lookup(struct sim *s, struct mm_struct *mm, uint64_t addr);
/* A user access by the current thread; takes faults as needed. */
int user_access(struct sim *s, uint64_t va, bool write);

/* rwsem (kernel/locking/rwsem.c, v5.1 semantics, see docs/design.md) */
void down_read(struct sim *s, struct rw_semaphore *sem);
void up_read(struct sim *s, struct rw_semaphore *sem);
void down_write(struct sim *s, struct rw_semaphore *sem);
void up_write(struct sim *s, struct rw_semaphore *sem);
void downgrade_write(struct sim *s, struct rw_semaphore *sem);

/* mmu_gather (mm/mmu_gather.c, include/asm-generic/tlb.h, v5.1) */
void tlb_gather_mmu(struct sim *s, struct mmu_gather *tlb, struct mm_struct *mm,
		    uint64_t start, uint64_t end);
void tlb_finish_mmu(struct sim *s, struct mmu_gather *tlb, uint64_t start, uint64_t end);
void __tlb_reset_range(struct mmu_gather *tlb);
void __tlb_adjust_range(struct mmu_gather *tlb, uint64_t address, uint64_t range_size);
void tlb_remove_tlb_entry(struct mmu_gather *tlb, uint64_t address, uint64_t page_size);
bool __tlb_remove_page(struct sim *s, struct mmu_gather *tlb, uint32_t frame);
void pte_free_tlb(struct sim *s, struct mmu_gather *tlb, uint32_t table, uint64_t address);
void pmd_free_tlb(struct sim *s, struct mmu_gather *tlb, uint32_t table, uint64_t address);
void pud_free_tlb(struct sim *s, struct mmu_gather *tlb, uint32_t table, uint64_t address);
void tlb_flush_mmu_tlbonly(struct sim *s, struct mmu_gather *tlb);
void tlb_flush_mmu(struct sim *s, struct mmu_gather *tlb);
void tlb_start_vma(struct sim *s, struct mmu_gather *tlb, struct vm_area_struct *vma);
void tlb_end_vma(struct sim *s, struct mmu_gather *tlb, struct vm_area_struct *vma);
unsigned int tlb_get_unmap_shift(const struct sim *s, const struct mmu_gather *tlb);
uint64_t tlb_get_unmap_size(const struct sim *s, const struct mmu_gather *tlb);
static inline bool mm_tlb_flush_nested(const struct mm_struct *mm)
{
	return mm->tlb_flush_pending > 1;
}

/* memory.c */
void free_pgd_range(struct sim *s, struct mmu_gather *tlb, uint64_t addr, uint64_t end,
		    uint64_t floor, uint64_t ceiling);
void unmap_vmas(struct sim *s, struct mmu_gather *tlb, struct vm_area_struct **vmas, int n,
		uint64_t start, uint64_t end);
void unmap_single_vma(struct sim *s, struct mmu_gather *tlb, struct vm_area_struct *vma,
		      uint64_t start, uint64_t end);
int handle_mm_fault(struct sim *s, struct vm_area_struct *vma, uint64_t address, bool write);

/* VMA helpers (mmap.c) */
struct vm_area_struct *find_vma(struct mm_struct *mm, uint64_t addr);
int vma_index(struct mm_struct *mm, uint64_t addr);

/* shmem */
void shmem_put(struct sim *s, struct shmem_obj *o);

#endif
