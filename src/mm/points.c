/* points.c - text of the mm model's points (see points.h), and the name
 * tables of syscalls and lock operations. */
#include <inttypes.h>
#include <stdio.h>

#include "mm/mm.h"
#include "mm/points.h"

static const char *const syscall_names[SYS_COUNT] = {
	[SYS_MMAP] = "mmap", [SYS_MUNMAP] = "munmap",
	[SYS_MADVISE_DONTNEED] = "madvise(MADV_DONTNEED)", [SYS_MADVISE_FREE] = "madvise(MADV_FREE)",
	[SYS_MPROTECT] = "mprotect", [SYS_CLEAR_REFS] = "clear_refs", [SYS_MSYNC] = "msync",
	[SYS_MREMAP] = "mremap", [SYS_FTRUNCATE] = "ftruncate",
	[SYS_MIGRATE_VMA] = "migrate_vma", [SYS_DRIVER_UNMAP] = "driver_unmap",
	[SYS_MADVISE_HUGEPAGE] = "madvise(MADV_HUGEPAGE)", [SYS_SPLIT_HUGE_PMD] = "split_huge_pmd",
	[SYS_FORK] = "fork",
	[SYS_NUMA_SCAN] = "change_prot_numa", [SYS_UFFD_WP] = "UFFDIO_WRITEPROTECT",
};

const char *mm_syscall_name(enum mm_syscall c)
{
	return (unsigned)c < SYS_COUNT ? syscall_names[c] : "?";
}

static const char *const lock_names[LOCK_OP_END] = {
	[LOCK_DOWN_READ] = "down_read", [LOCK_UP_READ] = "up_read",
	[LOCK_DOWN_WRITE] = "down_write", [LOCK_UP_WRITE] = "up_write",
	[LOCK_DOWNGRADE_WRITE] = "downgrade_write",
};

const char *lock_op_name(enum lock_op op)
{
	return op >= LOCK_DOWN_READ && op < LOCK_OP_END ? lock_names[op] : "lock op";
}

static void fmt_user(char *buf, size_t len, uint64_t a, uint64_t b)
{
	(void)b;
	snprintf(buf, len, "tlbsim_user_access: address=0x%" PRIx64, a);
}

static void fmt_syscall(char *buf, size_t len, uint64_t a, uint64_t b)
{
	snprintf(buf, len, "sys_enter: %s(0x%" PRIx64 ")", mm_syscall_name((enum mm_syscall)a), b);
}

/* a = the lock operation, b = the semaphore's kind: mmap_lock operations as
 * the kernel's mmap_lock tracepoints (include/trace/events/mmap_lock.h,
 * v5.10: start_locking and released; write=true for the writer side) */
static void fmt_lock(char *buf, size_t len, uint64_t a, uint64_t b)
{
	enum lock_op op = (enum lock_op)a;
	bool w = op == LOCK_DOWN_WRITE || op == LOCK_UP_WRITE;
	if (b == RWSEM_I_MMAP)
		snprintf(buf, len, "tlbsim_i_mmap_rwsem: %s", lock_op_name(op));
	else if (op == LOCK_DOWN_READ || op == LOCK_DOWN_WRITE)
		snprintf(buf, len, "mmap_lock_start_locking: write=%s (%s)", w ? "true" : "false",
			 lock_op_name(op));
	else if (op == LOCK_UP_READ || op == LOCK_UP_WRITE)
		snprintf(buf, len, "mmap_lock_released: write=%s (%s)", w ? "true" : "false",
			 lock_op_name(op));
	else
		snprintf(buf, len, "tlbsim_mmap_lock: %s", lock_op_name(op));
}

static void fmt_fault(char *buf, size_t len, uint64_t a, uint64_t b)
{
	(void)b;
	snprintf(buf, len, "page_fault_user: address=0x%" PRIx64, a);
}

static void fmt_gather_init(char *buf, size_t len, uint64_t a, uint64_t b)
{
	(void)b;
	snprintf(buf, len, "tlbsim_tlb_gather_mmu: tlb_flush_pending=%" PRIu64, a);
}

static void fmt_zap_pte(char *buf, size_t len, uint64_t a, uint64_t b)
{
	snprintf(buf, len, "tlbsim_zap_pte: address=0x%" PRIx64 "%s", a,
		 b ? " (MADV_FREE: make old+clean)" : "");
}

static void fmt_free_table(char *buf, size_t len, uint64_t a, uint64_t b)
{
	snprintf(buf, len, "tlbsim_free_table: level %" PRIu64 " table for 0x%" PRIx64
		 " unlinked (freed_tables=1)", b, a);
}

static void fmt_finish_enter(char *buf, size_t len, uint64_t a, uint64_t b)
{
	(void)a;
	(void)b;
	snprintf(buf, len, "tlbsim_tlb_finish_mmu: enter");
}

static void fmt_finish_nested(char *buf, size_t len, uint64_t a, uint64_t b)
{
	snprintf(buf, len, "tlbsim_tlb_finish_mmu: tlb_flush_pending=%" PRIu64 " -> %s", a,
		 b ? "mm_tlb_flush_nested() true"
		   : a > 1 ? "no nested check (nested_check=off)" : "not nested");
}

static void fmt_finish_policy(char *buf, size_t len, uint64_t a, uint64_t b)
{
	(void)b;
	const struct tlbsim_knob *kn = tlbsim_knob_get(0);
	snprintf(buf, len, "tlbsim_nested_policy: %s=%s", kn->name,
		 a < (uint64_t)kn->nvalues ? kn->values[a].name : "?");
}

static void fmt_call_rcu(char *buf, size_t len, uint64_t a, uint64_t b)
{
	snprintf(buf, len, "tlbsim_call_rcu: %" PRIu64 " page table(s) from frame %" PRIu64, b, a);
}

static void fmt_rcu_free(char *buf, size_t len, uint64_t a, uint64_t b)
{
	snprintf(buf, len, "tlbsim_rcu_free_tables: %" PRIu64 " page table(s) from frame %" PRIu64
		 " freed after the grace period", b, a);
}

static void fmt_writeback(char *buf, size_t len, uint64_t a, uint64_t b)
{
	snprintf(buf, len, "writeback_dirty_page: index=%" PRIu64 " frame=%" PRIu64, a, b);
}

static void fmt_fault_retry(char *buf, size_t len, uint64_t a, uint64_t b)
{
	snprintf(buf, len, "tlbsim_fault_retry: address=0x%" PRIx64 " flags=0x%" PRIx64
		 " (FAULT_FLAG_TRIED)", a, b);
}

static void fmt_spurious(char *buf, size_t len, uint64_t a, uint64_t b)
{
	snprintf(buf, len, "tlbsim_spurious_fault: address=0x%" PRIx64 " flush ops=%" PRIu64, a, b);
}

static void fmt_page_mkwrite(char *buf, size_t len, uint64_t a, uint64_t b)
{
	(void)b;
	snprintf(buf, len, "tlbsim_page_mkwrite: address=0x%" PRIx64, a);
}

static void fmt_throttle(char *buf, size_t len, uint64_t a, uint64_t b)
{
	(void)b;
	snprintf(buf, len, "balance_dirty_pages: pause=%" PRIu64 " ns", a);
}

/* the gathered pages go back to the allocator (release_pages, mm/swap.c,
 * v5.1, fires mm_page_free_batched once per page; one record per batch here) */
static void fmt_free_pages(char *buf, size_t len, uint64_t a, uint64_t b)
{
	(void)b;
	snprintf(buf, len, "mm_page_free_batched: %" PRIu64 " page(s) (tlb_flush_mmu_free)", a);
}

static void fmt_rwsem_waiters(char *buf, size_t len, uint64_t a, uint64_t b)
{
	snprintf(buf, len, "tlbsim_rwsem_waiters: %s sleeping waiters=%" PRIu64,
		 b == RWSEM_I_MMAP ? "i_mmap_rwsem" : "mmap_lock", a);
}

const struct sim_point tp_rwsem_waiters = {"rwsem_waiters", fmt_rwsem_waiters,
					   SP_QUIET | SP_COUNTER};
const struct sim_point tp_user = {"user", fmt_user, 0};
const struct sim_point tp_syscall = {"syscall", fmt_syscall, 0};
const struct sim_point tp_lock = {"lock", fmt_lock, 0};
const struct sim_point tp_pte_update = {"pte_update", NULL, SP_QUIET};
const struct sim_point tp_fault = {"fault", fmt_fault, 0};
const struct sim_point tp_gather_init = {"gather_init", fmt_gather_init, 0};
const struct sim_point tp_zap_pte = {"zap_pte", fmt_zap_pte, 0};
const struct sim_point tp_free_table = {"free_table", fmt_free_table, 0};
const struct sim_point tp_end_vma = {"end_vma", NULL, SP_QUIET};
const struct sim_point tp_finish_check_nested = {"finish_check_nested", fmt_finish_enter, 0};
const struct sim_point tp_finish_policy = {"finish_policy", fmt_finish_policy, 0};
const struct sim_point tp_free_pages = {"free_pages", fmt_free_pages, SP_QUIET};
const struct sim_point tp_table_flush = {"table_flush", NULL, SP_QUIET};
const struct sim_point tp_pending_dec = {"pending_dec", NULL, SP_QUIET};
const struct sim_point tp_pending_inc = {"pending_inc", NULL, SP_QUIET};
const struct sim_point tp_thread = {"thread", NULL, SP_QUIET};
const struct sim_point tp_tlb_finish_mmu = {"tlb_finish_mmu", fmt_finish_nested, 0};
const struct sim_point tp_call_rcu_tables = {"tlbsim_call_rcu_tables", fmt_call_rcu, 0};
const struct sim_point tp_rcu_free_tables = {"tlbsim_rcu_free_tables", fmt_rcu_free, 0};
const struct sim_point tp_writeback = {"writeback", fmt_writeback, 0};
static void fmt_lock_page(char *buf, size_t len, uint64_t a, uint64_t b)
{
	snprintf(buf, len, "tlbsim_lock_page: frame=%" PRIu64 "%s", a, b ? " (waits)" : "");
}
const struct sim_point tp_lock_page = {"lock_page", fmt_lock_page, 0};
const struct sim_point tp_fault_retry = {"tlbsim_fault_retry", fmt_fault_retry, 0};
const struct sim_point tp_spurious = {"tlbsim_spurious", fmt_spurious, 0};
const struct sim_point tp_page_mkwrite = {"page_mkwrite", fmt_page_mkwrite, 0};
const struct sim_point tp_throttle = {"tlbsim_dirty_throttle", fmt_throttle, 0};
const struct sim_point tp_work = {"workqueue_execute_start", NULL, 0};

static void fmt_kpte(char *buf, size_t len, uint64_t a, uint64_t b)
{
	snprintf(buf, len, "tlbsim_kernel_pte: %s va=0x%" PRIx64, b ? "set" : "clear", a);
}
static void fmt_vmalloc(char *buf, size_t len, uint64_t a, uint64_t b)
{
	static const char *const what[] = {"alloc", "vfree", "pool_return", "free_tree",
					   "lazy", "pool_take"};
	if (b == 0)
		snprintf(buf, len, "tlbsim_vmalloc: alloc size=0x%" PRIx64, a);
	else
		snprintf(buf, len, "tlbsim_vmalloc: %s va=0x%" PRIx64, b < 6 ? what[b] : "?", a);
}
static void fmt_purge_node(char *buf, size_t len, uint64_t a, uint64_t b)
{
	snprintf(buf, len, "purge_vmap_node: node=%" PRIu64 " areas=%" PRIu64, a, b);
}
const struct sim_point tp_kpte = {"kernel_pte", fmt_kpte, 0};
const struct sim_point tp_vmalloc = {"vmalloc", fmt_vmalloc, 0};
const struct sim_point tp_purge_node = {"purge_vmap_node", fmt_purge_node, 0};

static void fmt_klock(char *buf, size_t len, uint64_t a, uint64_t b)
{
	static const char *const name[] = {"free_vmap_area_lock", "vmap_purge_lock",
					   "vmap_node pool_lock", "vmap_node lazy.lock"};
	(void)b;
	snprintf(buf, len, "tlbsim_lock: %s", a < 4 ? name[a] : "?");
}
const struct sim_point tp_klock = {"kernel_lock", fmt_klock, 0};

static void fmt_ksm(char *buf, size_t len, uint64_t a, uint64_t b)
{
	static const char *const steps[KSM_STEP_COUNT] = {
		[KSM_STEP_SCAN] = "scan", [KSM_STEP_WP_FLUSH] = "write_protect_page: flush",
		[KSM_STEP_WP_SKIP] = "write_protect_page: read-only and clean, no flush",
		[KSM_STEP_COMPARE] = "pages_identical", [KSM_STEP_REPLACE] = "replace_page",
		[KSM_STEP_ABORT] = "merge abandoned", [KSM_STEP_BREAK_COW] = "break_cow",
	};
	unsigned st = (unsigned)(b & 0xff);
	snprintf(buf, len, "tlbsim_ksm: %s address=0x%" PRIx64 " tlb_flush_pending=%" PRIu64,
		 st < KSM_STEP_COUNT ? steps[st] : "?", a, b >> 8);
}

const struct sim_point tp_ksm = {"tlbsim_ksm", fmt_ksm, 0};

static void fmt_prot(char *buf, size_t len, uint64_t a, uint64_t b)
{
	static const char *const steps[PROT_STEP_COUNT] = {
		[PROT_STEP_NUMA_SCAN] = "change_prot_numa",
		[PROT_STEP_NUMA_FAULT] = "do_numa_page",
		[PROT_STEP_NUMA_RESTORE] = "do_numa_page: PTE restored",
		[PROT_STEP_UNMAP_FLUSH] = "migration unmap: pte_accessible, flush",
		[PROT_STEP_UNMAP_NOFLUSH] = "migration unmap: not pte_accessible, no flush",
		[PROT_STEP_MIGRATE_COPY] = "migrate_page_copy",
		[PROT_STEP_MIGRATE_REMAP] = "remove_migration_ptes",
		[PROT_STEP_MIGRATE_FAIL] = "migration refused",
		[PROT_STEP_UFFD_WP] = "mwriteprotect_range",
		[PROT_STEP_USERFAULT] = "handle_userfault (SIGBUS)",
		[PROT_STEP_WP_FLUSH] = "do_wp_page: uffd-wp flush pending, flush_tlb_page",
		[PROT_STEP_COW_COPY] = "wp_page_copy: copy",
		[PROT_STEP_PIN] = "get_user_pages",
	};
	unsigned st = (unsigned)(b & 0xff);
	snprintf(buf, len, "tlbsim_prot: %s address=0x%" PRIx64 " tlb_flush_pending=%" PRIu64,
		 st < PROT_STEP_COUNT ? steps[st] : "?", a, b >> 8);
}

const struct sim_point tp_prot = {"tlbsim_prot", fmt_prot, 0};
static void fmt_table_free_one(char *buf, size_t len, uint64_t a, uint64_t b)
{
	snprintf(buf, len, "tlbsim_table_free_one: table frame %" PRIu64 " freed at once (%s)", a,
		 b == TABLE_ONE_USERS ? "mm_users < 2" : "no batch page: tlb_remove_table_one");
}
const struct sim_point tp_table_free_one = {"tlbsim_table_free_one", fmt_table_free_one, 0};

static void fmt_hugetlb(char *buf, size_t len, uint64_t a, uint64_t b)
{
	snprintf(buf, len, "tlbsim_hugetlb: %s PMD table frame %" PRIu64 " (page_count %" PRIu64 ")",
		 (b >> 32) ? "huge_pmd_unshare" : "huge_pmd_share", a, b & 0xffffffffu);
}
const struct sim_point tp_hugetlb = {"tlbsim_hugetlb", fmt_hugetlb, 0};

static void fmt_thp(char *buf, size_t len, uint64_t a, uint64_t b)
{
	static const char *const steps[THP_STEP_COUNT] = {
		[THP_STEP_CHECK] = "collapse_pte_mapped_thp: check the PTEs",
		[THP_STEP_PMD_LOCK] = "collapse_pte_mapped_thp: pmd_lock, pmdp_collapse_flush",
		[THP_STEP_SYNC] = "tlb_remove_table_sync_one: IPIs sent to CPUs",
		[THP_STEP_PTE_FREE] = "pte_free of table frame",
		[THP_STEP_GUP_READ] = "GUP-fast: READ_ONCE of the entry",
		[THP_STEP_GUP_RECHECK] = "GUP-fast: re-check of the entry",
		[THP_STEP_ISOLATE] = "collapse_huge_page: isolate, the references",
		[THP_STEP_COPY] = "collapse_huge_page: copy the page at",
	};
	unsigned st = (unsigned)(b & 0xff);
	snprintf(buf, len, "tlbsim_thp: %s 0x%" PRIx64 " level=%" PRIu64,
		 st < THP_STEP_COUNT ? steps[st] : "?", a, b >> 8);
}
const struct sim_point tp_thp = {"tlbsim_thp", fmt_thp, 0};
