/*
 * tlbsim.h - public API of the tlbsim engine.
 *
 * A caller fills a struct tlbsim_config (workload, profile, policy knobs, cost
 * overrides, seed), calls tlbsim_run(), and reads struct tlbsim_metrics.
 * All state of one run lives in a struct sim created and destroyed inside
 * tlbsim_run(); two runs in one process never share state.
 *
 * Errors are values: functions return 0 on success or a negative code and put
 * a one-line message into the caller's error buffer. Nothing here prints or
 * exits.
 */
#ifndef TLBSIM_TLBSIM_H
#define TLBSIM_TLBSIM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define TLBSIM_MAX_WPARAMS 16
#define TLBSIM_MAX_OVERRIDES 64
#define TLBSIM_ERRLEN 256

enum tlbsim_err {
	TLBSIM_OK = 0,
	TLBSIM_EINVAL = -1,	/* bad input: unknown name, malformed or absurd value */
	TLBSIM_ENOMEM = -2,	/* host allocation failed */
	TLBSIM_EINTERNAL = -3,	/* a model assertion failed (a tlbsim bug) */
};

/* ---- policy knobs (architecture.md principle 2: variants are data) ---- */

/* nested: what tlb_finish_mmu does when mm_tlb_flush_nested() (kernel-model 9.6) */
enum nested_policy {
	NESTED_PREFIX,		/* v4.20..v5.2-rc5: __tlb_reset_range + adjust to [start,end) */
	NESTED_V1,		/* keep level bits, widen range to include [start,end) */
	NESTED_V2,		/* the v2 patch: range [start,end), all bits set, freed_tables */
	NESTED_FULLMM,		/* 7a30df49f63a (upstream): fullmm=1, reset, freed_tables=1 */
	NESTED_NEED_FLUSH_ALL,	/* a reviewer's alternative on v5.1: need_flush_all=1, reset, freed_tables=1 */
	NESTED_KEEP_BITS,		/* the reporter's 2nd experiment: reset only start/end, keep bits */
	NESTED_COUNT
};

/* x86_lazy: which lazy-TLB CPUs get flush IPIs */
enum x86_lazy_policy {
	X86_LAZY_FREED_TABLES,	/* v4.20+: only when page tables were freed */
	X86_LAZY_NEVER,		/* before b956575bed91: never */
	X86_LAZY_DEFER,		/* b956575bed91, v4.14..v4.19: always; with PCID
				 * no lazy mode (tlb_defer_switch_to_init_mm) */
	X86_LAZY_COUNT
};

/* fault_retry: whether a shared-file write fault drops mmap_lock for dirty
 * throttling (mm/memory.c fault_dirty_shared_page) */
enum fault_retry_policy {
	FAULT_RETRY_NONE,		/* before 89b15332af7c: throttle with mmap_lock held */
	FAULT_RETRY_DIRTY_THROTTLE,	/* 89b15332af7c: drop the lock, VM_FAULT_RETRY */
	FAULT_RETRY_COMPLETED,		/* d92725256b4f (v6.0): drop it, VM_FAULT_COMPLETED */
	FAULT_RETRY_COUNT
};

/* spurious_flush: what a write fault that finds its PTE already as wanted
 * flushes, and what a real access-flag update flushes (each value is v5.8
 * with one fix applied) */
enum spurious_flush_policy {
	SPURIOUS_BROADCAST,	/* v5.8: flush_tlb_fix_spurious_fault = flush_tlb_page */
	SPURIOUS_SKIP_TRIED,	/* b7333b58f358: a TRIED fault skips the spurious flush */
	SPURIOUS_SKIP_AF_UPDATE,	/* the NACKed RFC: a TRIED fault skips the whole update */
	SPURIOUS_NOOP,		/* arm64 v5.10: hook a no-op; flush only when made dirty */
	SPURIOUS_LOCAL,		/* cb1fa2e99955: local VALE1 + DSB NSH for both */
	SPURIOUS_COUNT
};

/* vmap_purge: how lazily freed vmalloc areas are kept and purged */
enum vmap_purge_policy {
	VMAP_PURGE_NODES,	/* v6.9+: per-node lazy lists, pools, helpers (282631cb2447) */
	VMAP_PURGE_GLOBAL,	/* <= v6.8: one merged lazy tree, purged under free_vmap_area_lock */
	VMAP_PURGE_COUNT
};

/* kasan_flush: when a purge flushes the KASAN shadow it releases */
enum kasan_flush_policy {
	KASAN_FLUSH_PER_NODE,	/* 9e9e085effe9: depopulate a node's areas, one flush, then return them */
	KASAN_FLUSH_PER_AREA,	/* v6.10: kasan_release_vmalloc flushes per area */
	KASAN_FLUSH_PER_NODE_LATE,	/* the withdrawn draft: one flush after the areas went back to the pools */
	KASAN_FLUSH_COUNT
};

/* arm64_local: whether an arm64 user flush of an mm that has only ever run
 * on the flushing CPU is done with the local TLBI form instead of a broadcast */
enum arm64_local_policy {
	ARM64_LOCAL_OFF,		/* upstream: every user flush is broadcast (...IS) */
	ARM64_LOCAL_SINGLE_CPU_MM,	/* the 2020 proposal, test and TLBI under preempt_disable */
	ARM64_LOCAL_PREEMPTIBLE,	/* the same with the test preemptible (the race it closes) */
	ARM64_LOCAL_COUNT
};

/* The x86 flush behaviours of 5.13..6.15 that v5.1 lacks (arch/x86/mm/tlb.c,
 * arch/x86/include/asm/tlb.h); each defaults to the v5.1 behaviour. */
enum x86_flush_local_policy {
	X86_FLUSH_LOCAL_FIRST,		/* v4.20..v5.12: local flush, then the IPIs */
	X86_FLUSH_LOCAL_CONCURRENT,	/* 4ce94eabac16 (v5.13): IPIs, local flush while in flight */
	X86_FLUSH_LOCAL_COUNT
};
enum x86_tlb_gen_policy {
	X86_TLB_GEN_MM,		/* flush_tlb_func compares with mm's tlb_gen only */
	X86_TLB_GEN_NEW,	/* aa44284960d5 (v6.0): done if new_tlb_gen <= local gen */
	X86_TLB_GEN_COUNT
};
enum x86_cpumask_policy {
	X86_CPUMASK_EAGER,	/* switch_mm clears the CPU from prev's mm_cpumask */
	X86_CPUMASK_LAZY,	/* 209954cbc7d0 + 953753db887f (v6.14): cleared at a flush */
	X86_CPUMASK_COUNT
};
enum x86_should_flush_policy {
	X86_SHOULD_FLUSH_NOT_LAZY,	/* tlb_is_not_lazy: every non-lazy CPU of the mask */
	X86_SHOULD_FLUSH_LOADED_MM,	/* 6db2526c1d69 (v6.14): also skip other-mm CPUs */
	X86_SHOULD_FLUSH_COUNT
};
enum x86_table_free_policy {
	X86_TABLE_FREE_PAGE,	/* native: table pages freed with the data pages */
	X86_TABLE_FREE_RCU,	/* a37259732a7d (v6.15): after an RCU grace period */
	X86_TABLE_FREE_COUNT
};
/* x86_flush: how an x86 flush reaches other CPUs when the profile has
 * INVLPGB (parameter invlpgb; without it both values are the IPI path) */
enum x86_flush_policy {
	X86_FLUSH_IPI,		/* flush IPIs (every release up to v6.14) */
	X86_FLUSH_INVLPGB,	/* v6.15: INVLPGB + TLBSYNC for global-ASID mms and kernel flushes */
	X86_FLUSH_COUNT
};
/* tlb_flush_cond: when tlb_flush_mmu_tlbonly() issues the flush */
enum tlb_flush_cond_policy {
	TLB_FLUSH_COND_END,	/* v4.20..v5.5: unless tlb->end == 0 (a fullmm gather always flushes) */
	TLB_FLUSH_COND_BITS,	/* 0758cd830494 (v5.6): only if a level bit or freed_tables is set */
	TLB_FLUSH_COND_COUNT
};
/* clear_refs: how clear_refs_write() (fs/proc/task_mmu.c) flushes */
enum clear_refs_policy {
	CLEAR_REFS_GATHER,	/* b3a81d0841a9 (v4.13)..v5.10: a fullmm mmu_gather */
	CLEAR_REFS_FLUSH_MM,	/* 912efa17e512 (v5.11): inc_tlb_flush_pending + flush_tlb_mm */
	CLEAR_REFS_COUNT
};
/* mremap_flush: where move_ptes() (mm/mremap.c) flushes the old range */
enum mremap_flush_policy {
	MREMAP_FLUSH_AFTER_PTL,	/* up to v4.8: once, after every PTL was dropped */
	MREMAP_FLUSH_DIRTY,	/* 5d1904204c99 (v4.9): a dirty moved PTE under the PTLs, others after */
	MREMAP_FLUSH_UNDER_PTL,	/* eb66ae030829 (v4.19): any moved present PTE, under the PTLs */
	MREMAP_FLUSH_COUNT
};
/* mremap_pmd: the PMD-level move of move_page_tables() (mm/mremap.c) */
enum mremap_pmd_policy {
	MREMAP_PMD_NONE,	/* up to v5.0: every extent moves PTE by PTE */
	MREMAP_PMD_NEED_RMAP,	/* 2c91bd4a4e2e (v5.1): move_normal_pmd, rmap locks if need_rmap_locks */
	MREMAP_PMD_RMAP_LOCKS,	/* 97113eb39fa7: move_normal_pmd always under the rmap locks */
	MREMAP_PMD_COUNT
};
/* zap_rmap: when zap_pte_range removes the rmap of a dirty file page */
enum zap_rmap_policy {
	ZAP_RMAP_EARLY,		/* v3.15..v6.0: with its PTE, before the flush */
	ZAP_RMAP_DELAYED,	/* 5df397dec7c4 (v6.1): after the flush (tlb_flush_rmaps) */
	ZAP_RMAP_COUNT
};

/* the reclaim batch's mm->tlb_flush_batched (mm/rmap.c) */
enum ubc_flag_policy {
	UBC_FLAG_GEN,		/* pending/flushed generations, cmpxchg after the flush */
	UBC_FLAG_BOOL,		/* a bool cleared after the flush (v4.13 3ea277194daa) */
	UBC_FLAG_COUNT
};

/* arm64 batched unmap (ARCH_WANT_BATCHED_UNMAP_TLB_FLUSH, v6.5+) */
enum arm64_batch_policy {
	ARM64_BATCH_FLUSH_MM,	/* flush_tlb_batched_pending: flush_tlb_mm (4b634918384c) */
	ARM64_BATCH_DSB,	/* ...: a DSB ISH on this CPU only (43b3dfdd0455, v6.5) */
	ARM64_BATCH_NONE,	/* no batching: every unmap flushes at once (before v6.5) */
	ARM64_BATCH_COUNT
};
/* ksm_wp: when KSM's write_protect_page() (mm/ksm.c) flushes the PTE it
 * write-protects */
enum ksm_wp_policy {
	KSM_WP_PTE,		/* before b3a81d0841a9 (v4.13): only a writable or dirty PTE */
	KSM_WP_PENDING,		/* b3a81d0841a9 (v4.13)..v5.18: or mm_tlb_flush_pending(mm) */
	KSM_WP_EXCLUSIVE,	/* 6c287605fd56 (v5.19): or PageAnonExclusive(page) */
	KSM_WP_COUNT
};
/* numa_pending: whether change_protection() raises mm->tlb_flush_pending
 * (mm/mprotect.c change_protection_range) */
enum numa_pending_policy {
	NUMA_PENDING_NONE,	/* before 20841405940e (v3.13): no tlb_flush_pending at all */
	NUMA_PENDING_RAISED,	/* 20841405940e (v3.13): raised from the first PTE to the flush */
	NUMA_PENDING_COUNT
};
/* pte_accessible: whether x86's pte_accessible(mm, pte) counts a PROT_NONE
 * (NUMA-hinting) PTE accessible while a flush of the mm is pending */
enum pte_accessible_policy {
	PTE_ACCESSIBLE_PRESENT,	/* before 20841405940e (v3.13): only a present PTE */
	PTE_ACCESSIBLE_PENDING,	/* 20841405940e: or protnone && mm_tlb_flush_pending(mm) */
	PTE_ACCESSIBLE_COUNT
};
/* uffd_wp_flush: whether do_wp_page() flushes the faulting address before it
 * copies when userfaultfd_wp(vma) && mm_tlb_flush_pending(mm) */
enum uffd_wp_flush_policy {
	UFFD_WP_FLUSH_NONE,	/* v5.7 (uffd-wp) .. before 6ce64428d621 (v5.12) */
	UFFD_WP_FLUSH_PENDING,	/* 6ce64428d621 (v5.12; 5.10.y/5.11.y stable) */
	UFFD_WP_FLUSH_COUNT
};
/* migrate_flush: where migrate_vma_collect_pmd() (mm/migrate_device.c)
 * flushes the PTEs it replaced with migration entries */
enum migrate_flush_policy {
	MIGRATE_FLUSH_UNDER_PTL,	/* 60bae7370896 (v6.0): before pte_unmap_unlock */
	MIGRATE_FLUSH_AFTER_UNLOCK,	/* v4.14 (8c3328f1f36a)..v5.19: after it */
	MIGRATE_FLUSH_COUNT
};
/* migrate_dirty: whether migrate_vma_collect_pmd() carries a cleared PTE's
 * dirty bit to the page */
enum migrate_dirty_policy {
	MIGRATE_DIRTY_COPY,	/* fd35ca3d12cc (v6.0): folio_mark_dirty */
	MIGRATE_DIRTY_DROP,	/* v4.14..v5.19: the dirty bit is lost */
	MIGRATE_DIRTY_COUNT
};
/* pfnmap_flush: whether tlb_end_vma() (include/asm-generic/tlb.h) flushes a
 * VM_PFNMAP / VM_MIXEDMAP VMA where the architecture otherwise defers the
 * flush to the end of the gather (x86) */
enum pfnmap_flush_policy {
	PFNMAP_FLUSH_END_VMA,	/* b67fbebd4cf9 (v5.19): forced at tlb_end_vma */
	PFNMAP_FLUSH_NONE,	/* before: x86 flushes at tlb_finish_mmu only */
	PFNMAP_FLUSH_STABLE_FIRST,	/* stable rewrite: unmap_region flushes if the first VMA is */
	PFNMAP_FLUSH_STABLE_ANY,	/* its fix: if any VMA of the region is */
	PFNMAP_FLUSH_COUNT
};

/* table_free_one: tlb_remove_table() when the mmu_gather batch page cannot be
 * allocated (tlb_remove_table_one, mm/mmu_gather.c) */
enum table_free_one_policy {
	TABLE_FREE_ONE_SYNC,	/* before d86564a2f085 (v4.19): IPI sync, then free at once */
	TABLE_FREE_ONE_INVALIDATE,	/* d86564a2f085: tlb_table_invalidate() first */
	TABLE_FREE_ONE_COUNT
};
/* table_free_users: tlb_remove_table()'s mm_users < 2 shortcut */
enum table_free_users_policy {
	TABLE_FREE_USERS_SHORTCUT,	/* up to v4.18: mm_users < 2 frees the table at once */
	TABLE_FREE_USERS_BATCH,	/* a6f572084fbe (v4.19): always batched */
	TABLE_FREE_USERS_COUNT
};
/* arm64_pgtable_flush: where arm64 invalidates the walk cache for a freed table */
enum arm64_pgtable_flush_policy {
	ARM64_PGTABLE_FLUSH_HOOK,	/* 285994a62c80 (v4.1)..v4.19: __flush_tlb_pgtable in __p?d_free_tlb */
	ARM64_PGTABLE_FLUSH_GATHER,	/* v4.20: the gather's non-leaf TLBI (freed_tables) */
	ARM64_PGTABLE_FLUSH_COUNT
};
/* x86_range_freed: the freed_tables argument x86 flush_tlb_range() passes */
enum x86_range_freed_policy {
	X86_RANGE_FREED_FALSE,	/* 016c4d92cd16 (v4.20)..v6.12: false */
	X86_RANGE_FREED_TRUE,	/* 3ef938c35035 (v6.13): true (it may zap PMD-level entries) */
	X86_RANGE_FREED_COUNT
};

/* hugetlb_unshare_flush: when an unmap that unshared a hugetlb PMD table
 * flushes (mm/hugetlb.c __unmap_hugepage_range) */
enum hugetlb_unshare_flush_policy {
	HUGETLB_UNSHARE_FLUSH_AFTER_UNLOCK,	/* 24669e58477e (v3.11)..v5.15: at tlb_finish_mmu */
	HUGETLB_UNSHARE_FLUSH_BEFORE_UNLOCK,	/* a4a118f2eead (v5.16): before i_mmap_rwsem is released */
	HUGETLB_UNSHARE_FLUSH_COUNT
};

/* arm64_ttl: the level hint arm64's tlb_flush puts in its TLBIs (with the
 * profile parameter ttl: FEAT_TTL) */
enum arm64_ttl_policy {
	ARM64_TTL_NONE,		/* before c4ab2cbc1d87 (v5.9): no hints */
	ARM64_TTL_LEVEL,	/* c4ab2cbc1d87 (v5.9..v5.13): tlb_get_level from the cleared_* bits */
	ARM64_TTL_LEAF_ONLY,	/* 52218fcd61cb (v5.14): no hint when tables were freed */
	ARM64_TTL_COUNT
};
/* x86_invlpg_miss: what the kernel does on a part whose INVLPG misses
 * Global entries with PCIDs (profile parameter invlpg_global_miss) */
enum x86_invlpg_miss_policy {
	X86_INVLPG_MISS_IGNORE,	/* before ce0b15d11ad8 (v6.4): PCIDs used anyway */
	X86_INVLPG_MISS_NOPCID,	/* ce0b15d11ad8 (v6.4): PCIDs disabled on such parts */
	X86_INVLPG_MISS_COUNT
};

/* x86_switch_mb: the full barrier in switch_mm_irqs_off between the store of
 * cpu_tlbstate.loaded_mm (LOADED_MM_SWITCHING) and the read of next's tlb_gen
 * (matters only under --memory-model tso) */
enum x86_switch_mb_policy {
	X86_SWITCH_MB_ATOMIC,	/* the barrier is cpumask_set_cpu's locked op, done only
				 * when the bit is clear (209954cbc7d0, v6.14..v6.17) */
	X86_SWITCH_MB_SMP_MB,	/* 83b0177a6c48 (v6.18): smp_mb() when it was already set */
	X86_SWITCH_MB_COUNT
};
/* x86_switching: what should_flush_tlb() does with a CPU whose loaded_mm is
 * LOADED_MM_SWITCHING (matters with x86_should_flush=loaded_mm) */
enum x86_switching_policy {
	X86_SWITCHING_SKIP,	/* 6db2526c1d69 (v6.14): only loaded_mm == mm is flushed */
	X86_SWITCHING_FLUSH,	/* fea4e317f9e7 (v6.15): a switching CPU is flushed */
	X86_SWITCHING_COUNT
};
/* thp_collapse_range: the address collapse_pte_mapped_thp() gives
 * pmdp_collapse_flush() (the range flushed is that + HPAGE_PMD_SIZE) */
enum thp_collapse_range_policy {
	THP_COLLAPSE_RANGE_END,		/* the step-2 loop's addr, the extent's end
					 * (27e1f8273113, v5.4..v5.8) */
	THP_COLLAPSE_RANGE_HADDR,	/* haddr, the aligned start (723a80dafed5, v5.9) */
	THP_COLLAPSE_RANGE_COUNT
};
/* thp_gup_sync: whether the collapse calls tlb_remove_table_sync_one()
 * before it frees the PTE table */
enum thp_gup_sync_policy {
	THP_GUP_SYNC_NONE,	/* pte_free right after the flush (up to v6.0) */
	THP_GUP_SYNC_IPI,	/* 2ba99c5e0881 (v6.1): the IPI sync first */
	THP_GUP_SYNC_COUNT
};

/* the memory model of tlbsim check (--memory-model) */
enum tlbsim_memory_model {
	TLBSIM_MM_SC,		/* sequential consistency: every store visible at once */
	TLBSIM_MM_TSO,		/* x86-TSO: per-CPU FIFO store buffers (check mode) */
};

struct tlbsim_policy {
	enum nested_policy nested;
	int nested_check;		/* 1: mm_tlb_flush_nested() check (99baac21e458, v4.14) */
	enum x86_lazy_policy x86_lazy;
	enum fault_retry_policy fault_retry;
	enum spurious_flush_policy spurious_flush;
	enum vmap_purge_policy vmap_purge;
	enum kasan_flush_policy kasan_flush;
	enum x86_flush_local_policy x86_flush_local;
	enum x86_tlb_gen_policy x86_tlb_gen;
	enum x86_cpumask_policy x86_cpumask;
	enum x86_should_flush_policy x86_should_flush;
	enum x86_table_free_policy x86_table_free;
	enum arm64_local_policy arm64_local;
	enum x86_flush_policy x86_flush;
	enum tlb_flush_cond_policy tlb_flush_cond;
	enum clear_refs_policy clear_refs;
	enum mremap_flush_policy mremap_flush;
	enum mremap_pmd_policy mremap_pmd;
	enum zap_rmap_policy zap_rmap;
	/* flush_tlb_batched_pending() in change_pte_range / zap_pte_range /
	 * madvise_free_pte_range (1: called; 3ea277194daa, v4.13) */
	int ubc_check_mprotect, ubc_check_zap, ubc_check_madv_free;
	enum ubc_flag_policy ubc_flag;
	enum arm64_batch_policy arm64_batch;
	enum ksm_wp_policy ksm_wp;
	enum numa_pending_policy numa_pending;
	enum pte_accessible_policy pte_accessible;
	enum uffd_wp_flush_policy uffd_wp_flush;
	enum migrate_flush_policy migrate_flush;
	enum migrate_dirty_policy migrate_dirty;
	enum pfnmap_flush_policy pfnmap_flush;
	enum table_free_one_policy table_free_one;
	enum table_free_users_policy table_free_users;
	enum arm64_pgtable_flush_policy arm64_pgtable_flush;
	enum x86_range_freed_policy x86_range_freed;
	enum hugetlb_unshare_flush_policy hugetlb_unshare_flush;
	enum arm64_ttl_policy arm64_ttl;
	enum x86_invlpg_miss_policy x86_invlpg_miss;
	enum x86_switch_mb_policy x86_switch_mb;
	enum x86_switching_policy x86_switching;
	enum thp_collapse_range_policy thp_collapse_range;
	enum thp_gup_sync_policy thp_gup_sync;
	uint64_t given;			/* bit k: knob k was set by tlbsim_policy_set */
};

/* One knob = one name + named values; used by the CLI and `list policies`. */
struct tlbsim_knob_value {
	const char *name;
	const char *meaning;
};
struct tlbsim_knob {
	const char *name;
	const char *meaning;
	int nvalues;
	int default_value;
	const struct tlbsim_knob_value *values;
};
int tlbsim_knob_count(void);
const struct tlbsim_knob *tlbsim_knob_get(int i);
/* Set knob=value in *pol. Returns 0 or TLBSIM_EINVAL with a message in err. */
int tlbsim_policy_set(struct tlbsim_policy *pol, const char *knob, const char *value,
		      char *err, size_t errlen);
void tlbsim_policy_default(struct tlbsim_policy *pol);

/* ---- kernel-version presets (--kernel) ---- */
/* What one kernel release did, as knob values; `unmodelled` names what that
 * release does that no knob expresses (the model runs the knobs' paths). */
struct tlbsim_kernel_preset {
	const char *version;		/* "5.1" */
	const char *policy;		/* every knob: "nested=prefix,nested_check=on,..." */
	const char *why;		/* the commits that set those values */
	const char *unmodelled;		/* NULL: nothing known */
};
int tlbsim_kernel_count(void);
const struct tlbsim_kernel_preset *tlbsim_kernel_get(int i);
/* "5.1" or "v5.1"; NULL if there is no such preset */
const struct tlbsim_kernel_preset *tlbsim_kernel_find(const char *version);
/* Set every knob not yet given (tlbsim_policy_set) to the preset's value and
 * mark it given, so an explicit --policy wins and a workload's own kernel
 * default does not replace the release's value. */
void tlbsim_policy_apply_kernel(struct tlbsim_policy *pol, const struct tlbsim_kernel_preset *k);
/* The knobs of pol not set by tlbsim_policy_set take the workload's own
 * defaults (its default_policy: the kernel version it models). tlbsim_run
 * applies this itself; a front end calls it to print what will run. */
void tlbsim_policy_apply_workload(struct tlbsim_policy *pol, const char *workload);
/* The same for a workload given by its description (a scenario file's). */
struct tlbsim_workload_desc;
void tlbsim_policy_apply_desc(struct tlbsim_policy *pol, const struct tlbsim_workload_desc *w);
const char *tlbsim_policy_value_name(const struct tlbsim_policy *pol, int knob);

/* ---- profiles ---- */
enum tlbsim_arch { ARCH_X86_64, ARCH_ARM64 };

/* one cost-parameter value (-D name=value, or a profile file's line) */
struct tlbsim_override {
	int param;		/* enum param_id */
	int64_t value;
};

struct tlbsim_profile {
	const char *name;
	const char *description;
	enum tlbsim_arch arch;
	int page_shift;		/* 12, 14, 16 */
	int nr_cpus;
	/* cost parameters of this machine over the arch defaults (a profile
	 * file's; -D overrides these in turn) */
	const struct tlbsim_override *params;
	int nparams;
};
int tlbsim_profile_count(void);
const struct tlbsim_profile *tlbsim_profile_get(int i);
const struct tlbsim_profile *tlbsim_profile_find(const char *name);

/* A profile read from a text file (--profile FILE): "key = value" lines, '#'
 * comments; keys name, description, arch (x86-64 | arm64), page_size, cpus and
 * any cost parameter (tlbsim list params). tlbsim list profiles --dump NAME
 * writes a built-in one in this format. */
#define TLBSIM_PROFILE_MAX_PARAMS 128
struct tlbsim_profile_file {
	struct tlbsim_profile prof;
	char name[64];
	char description[256];
	struct tlbsim_override params[TLBSIM_PROFILE_MAX_PARAMS];
};
/* 0, or TLBSIM_EINVAL with "FILE:LINE: ..." in err (or a read error) */
int tlbsim_profile_load(const char *path, struct tlbsim_profile_file *pf, char *err,
			size_t errlen);
/* the file text of profile prof (with every parameter, its unit and source) */
void tlbsim_profile_dump(FILE *f, const struct tlbsim_profile *prof);

/* ---- workloads ---- */
struct tlbsim_wparam_desc {
	const char *name;
	const char *defval;	/* textual default */
	const char *meaning;
};
struct tlbsim_workload_desc {
	const char *name;
	const char *description;
	const char *default_profile;
	int default_threads;	/* 0: one per CPU; -k: k per CPU */
	int fixed_threads;	/* 1: the workload has its own thread structure;
				 * --threads does not apply (default_threads says
				 * how many run at once) */
	int64_t default_iters;
	int timed;		/* 1: a harness with a warm-up and a measured window
				 * (--duration applies; ops_per_sec is over the window) */
	/* "knob=value,..." the workload's kernel differs in from the global
	 * defaults (e.g. the v5.8 fault path); "" or NULL: none */
	const char *default_policy;
	int nparams;
	const struct tlbsim_wparam_desc *params;
	/* defaults used by `tlbsim check` (small instances explore fast) */
	int64_t check_iters;
	int check_cpus;
	const char *check_wparams;	/* "name=value,..." applied before -w */
	int default_cpus;	/* 0: the profile's CPU count (a scenario file's `cpus`) */
	/* a scenario file: FNV-1a of its text, so a replay token names the
	 * file it was made on; 0: a built-in workload */
	uint32_t source_hash;
};
int tlbsim_workload_count(void);
const struct tlbsim_workload_desc *tlbsim_workload_get(int i);
const struct tlbsim_workload_desc *tlbsim_workload_find(const char *name);

/* ---- configuration of one run ---- */
struct tlbsim_kv {
	char name[48];
	char value[80];
};

struct tlbsim_config {
	const char *workload;
	const char *profile;	/* NULL: the workload's default profile */
	/* a profile loaded from a file (owned by the caller); NULL: by name */
	const struct tlbsim_profile *profile_def;
	/* a workload compiled from a scenario file (owned by the caller, see
	 * src/scenario/scenario.h); NULL: the built-in named by workload */
	const struct tlbsim_workload_desc *workload_def;
	int cpus;		/* 0: profile default */
	int threads;		/* 0: workload default */
	int64_t iters;		/* 0: workload default */
	uint64_t duration_ns;	/* timed workloads: measured window; 0: by rounds */
	uint64_t seed;
	const char *kernel;	/* --kernel VERSION (its knobs are in policy); NULL: none */
	struct tlbsim_policy policy;
	int nwparams;
	struct tlbsim_kv wparams[TLBSIM_MAX_WPARAMS];
	int noverrides;
	struct tlbsim_override overrides[TLBSIM_MAX_OVERRIDES];
	enum tlbsim_memory_model memory_model;	/* check only; run/compare: SC */
};

void tlbsim_config_init(struct tlbsim_config *cfg);

/* ---- metrics ---- */
#define TLBSIM_METRICS(X)                                                         \
	X(wall_ns) X(user_ns) X(sys_ns) X(idle_ns) X(ops) X(page_faults)          \
	X(tlb_misses) X(page_walks) X(gathers) X(nested_finishes) X(ipi_sent)     \
	X(ipi_received) X(flush_local_pages) X(flush_full) X(dvm_wait_ns)         \
	X(lock_wait_ns) X(violations) X(events) X(tables_freed) X(pages_freed)      \
	X(ops_per_sec) X(ops_per_sec_task) X(fault_retries) X(spurious_faults)    \
	X(spurious_flushes) X(af_faults) X(page_mkwrite) X(dirty_throttle_ns)     \
	X(window_ns) X(asid_rollovers) X(context_switches)                       \
	X(kernel_flushes) X(kernel_flush_ipis) X(ipi_wait_irqs_off_ns)            \
	X(vfree_lazy) X(purges) X(purge_vmap_node_calls) X(purge_vmap_node_ns)    \
	X(purge_vmap_node_max_ns) X(shadow_pages_freed) X(tasklist_lock_waits)    \
	X(tasklist_lock_wait_ns) X(tasklist_lock_wait_max_ns) X(softlockups)     \
	X(tlbi_local_skipped_broadcast) X(records_per_sec) X(invlpgb) X(tlbsync)   \
	X(tlb_shootdowns) X(bogo_ops_per_sec) X(tlb_shootdowns_per_sec) X(ipis_per_sec) \
	X(cow_faults)
#define TLBSIM_TLBI_KINDS(X) X(vale1is) X(vae1is) X(aside1is) X(vaale1is) X(vmalle1is) X(local) \
	X(rvale1is) X(rvae1is)

struct tlbsim_metrics {
#define X(n) uint64_t n;
	TLBSIM_METRICS(X)
#undef X
	struct {
#define X(n) uint64_t n;
		TLBSIM_TLBI_KINDS(X)
#undef X
	} tlbi;
	char first_violation[512];	/* text of the first violation, "" if none */
	/* what the workload could not model and skipped ("" if nothing), e.g.
	 * stress-ng-tlb's MADV_COLLAPSE */
	char notes[256];
};

/* The fully resolved configuration a run used (for output). */
struct tlbsim_resolved {
	const struct tlbsim_profile *profile;
	const struct tlbsim_workload_desc *workload;
	int cpus;
	int threads;
	int64_t iters;
	uint64_t duration_ns;	/* timed workloads: 0 = stop by rounds (iters) */
	int nwparams;
	struct tlbsim_kv wparams[TLBSIM_MAX_WPARAMS];	/* all params, defaults filled in */
};

/* Validate cfg without running (resolves defaults). 0 or TLBSIM_EINVAL + err. */
int tlbsim_resolve(const struct tlbsim_config *cfg, struct tlbsim_resolved *res,
		   char *err, size_t errlen);

/* Run one simulation. 0 on success; negative enum tlbsim_err + err on failure. */
int tlbsim_run(const struct tlbsim_config *cfg, struct tlbsim_resolved *res,
	       struct tlbsim_metrics *m, char *err, size_t errlen);

#endif
