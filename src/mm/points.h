/*
 * points.h - the mm model's scheduler-visible points and trace events
 * (sim/trace.h), with their payloads (a, b):
 *   user            a user access            a = address, b = write
 *   syscall         syscall entry            a = enum mm_syscall, b = address
 *   lock            mmap_sem operation       a = enum lock_op
 *   pte_update      a PTE install / table populate under the PTL
 *   fault           page-fault entry         a = address, b = write
 *   gather_init     tlb_gather_mmu           a = tlb_flush_pending after ++
 *   zap_pte         one PTE cleared          a = address, b = 1 for MADV_FREE
 *   free_table      a table unlinked         a = address, b = level (depth)
 *   end_vma         tlb_end_vma
 *   finish_check_nested, finish_policy (a = nested knob value),
 *   free_pages, table_flush, pending_dec     sub-steps of tlb_finish_mmu
 *   pending_inc     inc_tlb_flush_pending outside a gather (change_protection)
 *   thread          thread creation (clone)
 *   tlb_finish_mmu (event)   a = tlb_flush_pending read, b = nested decision
 *   tlbsim_call_rcu_tables (event)  a = first table frame, b = tables
 *   writeback       a page cleaned for I/O   a = index, b = frame
 *   tlbsim_fault_retry (event)  the TRIED attempt begins: a = address, b = flags
 *   tlbsim_spurious (event)  the spurious branch: a = address, b = TLBIs issued
 *   page_mkwrite    ->page_mkwrite           a = address
 *   tlbsim_dirty_throttle (event)  a = ns the task sleeps
 *   workqueue_execute_start  a kworker starts a work item
 *   kernel_pte      a kernel PTE install/clear under init_mm.page_table_lock  a = va, b = install
 *   vmalloc         a vmalloc-space step (alloc, free, pool, free tree)  a = va, b = enum vmap_step
 *   purge_vmap_node  a = node, b = areas
 *   tlbsim_ksm      a KSM step (ksm.c)         a = address, b = enum ksm_step
 *   tlbsim_prot     a NUMA-hinting / migration / userfaultfd / COW step
 *                   (mprotect.c, migrate.c, fault.c)  a = address, b = enum prot_step
 *   tlbsim_table_free_one  a table freed outside the batch (mmu_gather.c)
 *                   a = table frame, b = enum table_one_why
 *   tlbsim_hugetlb  huge_pmd_share / huge_pmd_unshare (hugetlb.c)
 *                   a = PMD table frame, b = share count after | 1 << 32 for unshare
 *   tlbsim_thp      a collapse or GUP-fast step (khugepaged.c)
 *                   a = address (table frame for pte_free, CPUs for the sync),
 *                   b = enum thp_step | level << 8
 */
#ifndef TLBSIM_MM_POINTS_H
#define TLBSIM_MM_POINTS_H

#include "sim/trace.h"

/* counter: a = sleeping waiters on all rwsems of kind b (mmap_lock or
 * i_mmap_rwsem), recorded when it changes (run mode, tracing) */
extern const struct sim_point tp_rwsem_waiters;
extern const struct sim_point tp_user, tp_syscall, tp_lock, tp_pte_update, tp_fault,
	tp_gather_init, tp_zap_pte, tp_free_table, tp_end_vma, tp_finish_check_nested,
	tp_finish_policy, tp_free_pages, tp_table_flush, tp_pending_dec, tp_thread,
	tp_tlb_finish_mmu, tp_call_rcu_tables, tp_rcu_free_tables, tp_writeback, tp_fault_retry, tp_spurious,
	tp_page_mkwrite, tp_throttle, tp_work, tp_kpte, tp_vmalloc, tp_purge_node, tp_klock,
	tp_lock_page, tp_pending_inc, tp_ksm, tp_prot, tp_table_free_one, tp_hugetlb,
	tp_thp;

#define YP_USER (&tp_user)
#define YP_SYSCALL (&tp_syscall)
#define YP_LOCK (&tp_lock)
#define YP_PTE (&tp_pte_update)
#define YP_FAULT (&tp_fault)
#define YP_GATHER_INIT (&tp_gather_init)
#define YP_ZAP_PTE (&tp_zap_pte)
#define YP_FREE_TABLE (&tp_free_table)
#define YP_END_VMA (&tp_end_vma)
#define YP_FINISH_CHECK_NESTED (&tp_finish_check_nested)
#define YP_FINISH_POLICY (&tp_finish_policy)
#define YP_FREE_PAGES (&tp_free_pages)
#define YP_TABLE_FLUSH (&tp_table_flush)
#define YP_PENDING_DEC (&tp_pending_dec)
#define YP_PENDING_INC (&tp_pending_inc)
#define YP_THREAD (&tp_thread)
#define TR_NESTED (&tp_tlb_finish_mmu)
#define TR_RCU_FREE (&tp_call_rcu_tables)
#define TR_RCU_FREED (&tp_rcu_free_tables)
#define YP_WRITEBACK (&tp_writeback)
#define YP_LOCK_PAGE (&tp_lock_page)
#define TR_FAULT_RETRY (&tp_fault_retry)
#define TR_SPURIOUS (&tp_spurious)
#define YP_PAGE_MKWRITE (&tp_page_mkwrite)
#define TR_THROTTLE (&tp_throttle)
#define YP_WORK (&tp_work)
#define YP_KPTE (&tp_kpte)
#define YP_VMALLOC (&tp_vmalloc)
#define YP_PURGE_NODE (&tp_purge_node)
#define YP_KLOCK (&tp_klock)
#define YP_KSM (&tp_ksm)
#define YP_PROT (&tp_prot)
#define YP_TABLE_FREE_ONE (&tp_table_free_one)
#define YP_HUGETLB (&tp_hugetlb)
#define YP_THP (&tp_thp)

/* tlbsim_thp's b: the step (and a page-table level << 8) */
enum thp_step {
	THP_STEP_CHECK,		/* collapse_pte_mapped_thp checks the PTEs */
	THP_STEP_PMD_LOCK,	/* pmd_lock; pmdp_collapse_flush */
	THP_STEP_SYNC,		/* tlb_remove_table_sync_one sent its IPIs */
	THP_STEP_PTE_FREE,	/* pte_free of the retracted table */
	THP_STEP_GUP_READ,	/* GUP-fast reads a level's entry */
	THP_STEP_GUP_RECHECK,	/* GUP-fast re-reads the PMD entry / the PTE */
	THP_STEP_ISOLATE,	/* collapse_huge_page: the pages' references */
	THP_STEP_COPY,		/* collapse_huge_page copies a small page */
	THP_STEP_COUNT
};

/* tlbsim_table_free_one's b */
enum table_one_why {
	TABLE_ONE_USERS,	/* mm_users < 2 (table_free_users=shortcut) */
	TABLE_ONE_NOBATCH,	/* the batch page could not be allocated */
};

/* tlbsim_ksm's b: the step, and mm->tlb_flush_pending << 8 */
enum ksm_step {
	KSM_STEP_SCAN,		/* ksmd takes up the page (get_mergeable_page) */
	KSM_STEP_WP_FLUSH,	/* write_protect_page flushes */
	KSM_STEP_WP_SKIP,	/* write_protect_page leaves the PTE and the TLBs alone */
	KSM_STEP_COMPARE,	/* pages_identical */
	KSM_STEP_REPLACE,	/* replace_page maps the KSM page */
	KSM_STEP_ABORT,		/* the merge gives up */
	KSM_STEP_BREAK_COW,	/* break_cow of a KSM page left with one mapping */
	KSM_STEP_COUNT
};

/* tlbsim_prot's b: the step, and mm->tlb_flush_pending << 8 */
enum prot_step {
	PROT_STEP_NUMA_SCAN,	/* task_numa_work: change_prot_numa over a VMA begins */
	PROT_STEP_NUMA_FAULT,	/* do_numa_page on a PROT_NONE PTE */
	PROT_STEP_NUMA_RESTORE,	/* do_numa_page maps the page again (no migration) */
	PROT_STEP_UNMAP_FLUSH,	/* migration's ptep_clear_flush: pte_accessible, flushed */
	PROT_STEP_UNMAP_NOFLUSH,	/* ...: not pte_accessible, no flush */
	PROT_STEP_MIGRATE_COPY,	/* migrate_page_copy */
	PROT_STEP_MIGRATE_REMAP,	/* remove_migration_ptes maps the new page */
	PROT_STEP_MIGRATE_FAIL,	/* the page cannot be migrated (not anonymous, mapped twice, pinned) */
	PROT_STEP_UFFD_WP,	/* UFFDIO_WRITEPROTECT: mwriteprotect_range begins */
	PROT_STEP_USERFAULT,	/* a write to a uffd-wp PTE: handle_userfault */
	PROT_STEP_WP_FLUSH,	/* do_wp_page flushes for a pending uffd-wp flush */
	PROT_STEP_COW_COPY,	/* wp_page_copy copies the page */
	PROT_STEP_PIN,		/* get_user_pages took a reference */
	PROT_STEP_COUNT
};

#endif
