/* policy.c - the policy knobs and their named values (kernel-model 9.6). */
#include <stdio.h>
#include <stdbool.h>
#include <string.h>

#include "tlbsim/tlbsim.h"

static const struct tlbsim_knob_value nested_values[NESTED_COUNT] = {
	[NESTED_PREFIX] = {"prefix", "v4.20..v5.2-rc5: nested finish resets freed_tables/cleared_* "
				     "and flushes [start,end) (the 000 bug)"},
	[NESTED_V1] = {"v1", "keep the level bits, widen the range to include [start,end) "
			     "(the first v1 proposal of the 2019 thread)"},
	[NESTED_V2] = {"v2", "flush [start,end) as if every level were cleared and tables freed "
			     "(the v2 proposal, 2019-05-10)"},
	[NESTED_FULLMM] = {"fullmm", "fullmm=1, reset, freed_tables=1: flush the whole mm "
				     "(7a30df49f63a, upstream)"},
	[NESTED_NEED_FLUSH_ALL] = {"need_flush_all", "need_flush_all=1, reset, freed_tables=1 as "
						     "tested on v5.1 (flush_tlbonly sees end==0)"},
	[NESTED_KEEP_BITS] = {"keep_bits", "reset only start/end, keep the level bits (the reporter's "
				 "second experiment in the 2019 thread)"},
};

static const struct tlbsim_knob_value nested_check_values[2] = {
	{"off", "no nested check in tlb_finish_mmu: a gather that recorded nothing flushes "
		"nothing (before 99baac21e458, v4.14)"},
	{"on", "tlb_finish_mmu checks mm_tlb_flush_nested() (v4.14+)"},
};

static const struct tlbsim_knob_value x86_lazy_values[X86_LAZY_COUNT] = {
	[X86_LAZY_FREED_TABLES] = {"freed_tables", "flush IPIs reach lazy-TLB CPUs only when page "
						   "tables were freed (145f573b89a6, v4.20+)"},
	[X86_LAZY_NEVER] = {"never", "lazy-TLB CPUs never get flush IPIs (94b1b03b519b, "
				     "v4.14-rc1..rc4, before b956575bed91)"},
	[X86_LAZY_DEFER] = {"defer", "every flush IPIs lazy-TLB CPUs, which leave to init_mm; with "
				     "PCID a CPU goes to init_mm at once, never lazy "
				     "(b956575bed91, v4.14..v4.19)"},
};

static const struct tlbsim_knob_value fault_retry_values[FAULT_RETRY_COUNT] = {
	[FAULT_RETRY_NONE] = {"none", "a shared-file write fault throttles dirty pages with mmap_lock "
				      "held and never retries (before 89b15332af7c, v5.5)"},
	[FAULT_RETRY_DIRTY_THROTTLE] = {"dirty_throttle", "fault_dirty_shared_page drops mmap_lock "
							  "and returns VM_FAULT_RETRY on the first "
							  "attempt (89b15332af7c, v5.5..v5.19)"},
	[FAULT_RETRY_COMPLETED] = {"completed", "it drops mmap_lock and returns VM_FAULT_COMPLETED: "
						"no second attempt (d92725256b4f, v6.0)"},
};

static const struct tlbsim_knob_value spurious_flush_values[SPURIOUS_COUNT] = {
	[SPURIOUS_BROADCAST] = {"broadcast", "a spurious write fault and every access-flag update "
					     "flush with flush_tlb_page: arm64 broadcast VALE1IS (v5.8)"},
	[SPURIOUS_SKIP_TRIED] = {"skip_tried", "v5.8 + b7333b58f358: a retried (TRIED) fault skips "
					       "the spurious flush"},
	[SPURIOUS_SKIP_AF_UPDATE] = {"skip_af_update", "v5.8 + the NACKed RFC: a retried fault skips "
						       "mkdirty/mkyoung, the update and the flush"},
	[SPURIOUS_NOOP] = {"noop", "v5.8 + the arm64 v5.10 change: the spurious hook is a no-op; "
				   "ptep_set_access_flags broadcasts only when it makes a PTE dirty"},
	[SPURIOUS_LOCAL] = {"local", "v5.8 + cb1fa2e99955 (v6.19): both flushes are a local VALE1 + "
				     "DSB NSH (upstream also has b7333b58f358; see skip_tried)"},
};

static const struct tlbsim_knob_value vmap_purge_values[VMAP_PURGE_COUNT] = {
	[VMAP_PURGE_NODES] = {"nodes", "per-node lazy lists and size pools; one kernel flush per "
				       "purge, then each node's areas go back to its pools or the "
				       "free tree (282631cb2447, v6.9+)"},
	[VMAP_PURGE_GLOBAL] = {"global", "one merged lazy tree; the purge returns areas to the free "
					 "tree with free_vmap_area_lock held across every KASAN "
					 "shadow flush (v6.3..v6.8)"},
};

static const struct tlbsim_knob_value kasan_flush_values[KASAN_FLUSH_COUNT] = {
	[KASAN_FLUSH_PER_NODE] = {"per_node", "depopulate the shadow of every area of a node, one "
					      "flush, then return the areas (9e9e085effe9)"},
	[KASAN_FLUSH_PER_AREA] = {"per_area", "kasan_release_vmalloc per area, each with its own "
					      "flush_tlb_kernel_range (v6.9..v6.12)"},
	[KASAN_FLUSH_PER_NODE_LATE] = {"per_node_late", "the draft withdrawn in review (2024-07-22): "
						       "one flush after the areas went back to the "
						       "pools - a reused VA can meet a stale shadow "
						       "translation"},
};

static const struct tlbsim_knob_value arm64_local_values[ARM64_LOCAL_COUNT] = {
	[ARM64_LOCAL_OFF] = {"off", "upstream: every user flush is a broadcast TLBI ...IS, whatever "
				    "CPUs ran the mm"},
	[ARM64_LOCAL_SINGLE_CPU_MM] = {"single_cpu_mm", "the 2020 proposal (\"arm64: tlb: skip tlbi "
						       "broadcast\", Message-ID 20200223192520."
						       "20808-4-aarcange@redhat.com): an mm that has "
						       "only run on this CPU is flushed with the local "
						       "TLBI form + DSB NSH; the test and the TLBI "
						       "under preempt_disable"},
	[ARM64_LOCAL_PREEMPTIBLE] = {"single_cpu_mm_preemptible", "the same with the test made "
								  "preemptible: a task that migrates "
								  "between the test and the TLBI "
								  "flushes the wrong CPU (the race "
								  "the proposal had to close)"},
};

static const struct tlbsim_knob_value x86_flush_local_values[X86_FLUSH_LOCAL_COUNT] = {
	[X86_FLUSH_LOCAL_FIRST] = {"first", "flush_tlb_mm_range flushes the local TLB, then sends "
					    "the IPIs and waits (v4.20..v5.12)"},
	[X86_FLUSH_LOCAL_CONCURRENT] = {"concurrent", "the IPIs go out first and the local flush runs "
						      "while they are in flight (4ce94eabac16 "
						      "\"x86/mm/tlb: Flush remote and local TLBs "
						      "concurrently\", v5.13)"},
};

static const struct tlbsim_knob_value x86_tlb_gen_values[X86_TLB_GEN_COUNT] = {
	[X86_TLB_GEN_MM] = {"mm_gen", "flush_tlb_func does nothing only if the CPU caught up with "
				      "the mm's tlb_gen (v4.14..v5.19)"},
	[X86_TLB_GEN_NEW] = {"new_gen", "it also does nothing if the CPU caught up with the flush's "
					"new_tlb_gen (aa44284960d5 \"x86/mm/tlb: Avoid reading "
					"mm_tlb_gen when possible\", v6.0)"},
};

static const struct tlbsim_knob_value x86_cpumask_values[X86_CPUMASK_COUNT] = {
	[X86_CPUMASK_EAGER] = {"eager", "switch_mm clears the CPU from the previous mm's mm_cpumask "
					"(v4.20..v6.13)"},
	[X86_CPUMASK_LAZY] = {"lazy", "the CPU stays in it; the first flush IPI that finds the mm "
				      "not loaded clears it (209954cbc7d0 \"x86/mm/tlb: Update "
				      "mm_cpumask lazily\"), on the initiating CPU too (953753db887f "
				      "\"x86/mm/tlb: Also remove local CPU from mm_cpumask if "
				      "stale\"), v6.14"},
};

static const struct tlbsim_knob_value x86_should_flush_values[X86_SHOULD_FLUSH_COUNT] = {
	[X86_SHOULD_FLUSH_NOT_LAZY] = {"not_lazy", "a flush that freed no tables IPIs every CPU "
						   "of mm_cpumask not in lazy TLB mode "
						   "(native_flush_tlb_others, later "
						   "tlb_is_not_lazy; v4.20..v6.13)"},
	[X86_SHOULD_FLUSH_LOADED_MM] = {"loaded_mm", "should_flush_tlb also skips a CPU whose "
						     "loaded_mm is another mm, except once a second "
						     "per mm (6db2526c1d69 \"x86/mm/tlb: Only "
						     "trim the mm_cpumask once a second\", v6.14)"},
};

static const struct tlbsim_knob_value x86_table_free_values[X86_TABLE_FREE_COUNT] = {
	[X86_TABLE_FREE_PAGE] = {"page", "native x86 frees page-table pages with the data pages "
					 "right after the flush (tlb_remove_page, v4.20..v6.14)"},
	[X86_TABLE_FREE_RCU] = {"rcu", "page-table pages go to the RCU table batch and are freed "
				       "after a grace period (a37259732a7d \"x86/mm: Make "
				       "MMU_GATHER_RCU_TABLE_FREE unconditional\", v6.15)"},
};

static const struct tlbsim_knob_value x86_flush_values[X86_FLUSH_COUNT] = {
	[X86_FLUSH_IPI] = {"ipi", "remote CPUs are flushed by IPIs (flush_tlb_multi, on_each_cpu), "
				  "whatever the CPU offers (up to v6.14)"},
	[X86_FLUSH_INVLPGB] = {"invlpgb", "with INVLPGB (profile parameter invlpgb=1): an mm active "
					  "on more than 3 CPUs gets a global ASID and is flushed by "
					  "INVLPGB + TLBSYNC, no IPIs; kernel flushes too "
					  "(4afeb0ed1753 \"x86/mm: Enable broadcast TLB invalidation "
					  "for multi-threaded processes\", 82378c6c2f43 \"x86/mm: "
					  "Use INVLPGB for kernel TLB flushes\", v6.15)"},
};

static const struct tlbsim_knob_value tlb_flush_cond_values[TLB_FLUSH_COND_COUNT] = {
	[TLB_FLUSH_COND_END] = {"end", "tlb_flush_mmu_tlbonly flushes unless tlb->end is 0, so a "
				       "fullmm gather flushes even when it cleared nothing "
				       "(v4.20..v5.5)"},
	[TLB_FLUSH_COND_BITS] = {"bits", "it flushes only if freed_tables or a cleared_* level bit "
					 "is set: a gather that cleared nothing flushes nothing "
					 "(0758cd830494 \"asm-generic/tlb: avoid potential double "
					 "flush\", v5.6; 4.19 stable)"},
};

static const struct tlbsim_knob_value clear_refs_values[CLEAR_REFS_COUNT] = {
	[CLEAR_REFS_GATHER] = {"gather", "clear_refs_write wraps its page walk in a fullmm "
					 "mmu_gather (b3a81d0841a9 \"mm: fix KSM data corruption\", "
					 "v4.13..v5.10); with tlb_flush_cond=bits its finish flushes "
					 "nothing, and a soft-dirty clear leaves writable TLB entries "
					 "behind"},
	[CLEAR_REFS_FLUSH_MM] = {"flush_mm", "the soft-dirty clear raises tlb_flush_pending and "
					     "ends with flush_tlb_mm (912efa17e512 \"mm: proc: "
					     "Invalidate TLB after clearing soft-dirty page state\", "
					     "v5.11)"},
};

static const struct tlbsim_knob_value zap_rmap_values[ZAP_RMAP_COUNT] = {
	[ZAP_RMAP_EARLY] = {"early", "zap_pte_range removes a dirty file page's rmap with its PTE, "
				     "before the flush: page_mkclean finds the page unmapped, returns "
				     "without taking the PTE lock or flushing, and writeback can clean "
				     "it while a CPU still writes through a stale entry (v3.15..v6.0)"},
	[ZAP_RMAP_DELAYED] = {"delayed", "the rmap removal waits for the TLB flush under the PTE "
					 "lock (5df397dec7c4 \"mm: delay page_remove_rmap() until "
					 "after the TLB has been flushed\", v6.1)"},
};

static const struct tlbsim_knob_value ubc_check_values[2] = {
	{"off", "the path does not call flush_tlb_batched_pending(): it can return while a "
		"PTE reclaim cleared is still cached (v4.3..v4.12)"},
	{"on", "flush_tlb_batched_pending(mm) under the PTL before the PTEs are looked at "
	       "(3ea277194daa \"mm, mprotect: flush TLB if potentially racing with a parallel "
	       "reclaim leaving stale TLB entries\", v4.13)"},
};

static const struct tlbsim_knob_value ubc_flag_values[UBC_FLAG_COUNT] = {
	[UBC_FLAG_GEN] = {"gen", "mm->tlb_flush_batched holds pending and flushed generations; "
				 "flush_tlb_batched_pending sets flushed = pending by cmpxchg, so a "
				 "batch added during its flush stays pending (5ee2fa2f0636 "
				 "\"mm/rmap: fix potential batched TLB flush race\", v5.17)"},
	[UBC_FLAG_BOOL] = {"bool", "a bool set by set_tlb_ubc_flush_pending and cleared after "
				   "flush_tlb_batched_pending's flush: a PTE cleared during that flush "
				   "loses its mark (3ea277194daa, v4.13..v5.16)"},
};

static const struct tlbsim_knob_value arm64_batch_values[ARM64_BATCH_COUNT] = {
	[ARM64_BATCH_FLUSH_MM] = {"flush_mm", "reclaim issues TLBI VALE1IS without DSB, "
					      "try_to_unmap_flush is the DSB; flush_tlb_batched_pending "
					      "is flush_tlb_mm (4b634918384c \"arm64/mm: Close "
					      "theoretical race where stale TLB entry remains valid\", v6.16)"},
	[ARM64_BATCH_DSB] = {"dsb", "the same, but flush_tlb_batched_pending is a DSB ISH on its "
				    "own CPU, which does not complete another CPU's TLBIs "
				    "(43b3dfdd0455, db6c1f6f236d, v6.5)"},
	[ARM64_BATCH_NONE] = {"none", "arm64 does not batch: try_to_unmap_one flushes each PTE "
				      "with ptep_clear_flush (before v6.5)"},
};

static const struct tlbsim_knob_value ksm_wp_values[KSM_WP_COUNT] = {
	[KSM_WP_PTE] = {"pte", "KSM's write_protect_page flushes only a PTE that is writable or "
			       "dirty: a PTE another thread already made read-only and clean, "
			       "its own flush still pending, is skipped and a stale writable TLB "
			       "entry survives the page comparison (before b3a81d0841a9, v4.13)"},
	[KSM_WP_PENDING] = {"pending", "it also flushes when mm_tlb_flush_pending(mm) says a "
				       "flush of the mm is in flight (b3a81d0841a9 \"mm: fix KSM "
				       "data corruption\", v4.13..v5.18)"},
	[KSM_WP_EXCLUSIVE] = {"exclusive", "it also flushes every PageAnonExclusive page - any "
					   "anonymous page mapped only here (6c287605fd56 \"mm: "
					   "remember exclusively mapped anonymous pages with "
					   "PG_anon_exclusive\", v5.19)"},
};

static const struct tlbsim_knob_value mremap_flush_values[MREMAP_FLUSH_COUNT] = {
	[MREMAP_FLUSH_AFTER_PTL] = {"after_ptl", "move_ptes drops both PTE locks before any flush; "
						 "move_page_tables flushes the old range once at the "
						 "end (up to v4.8): writeback or truncate may take a "
						 "moved PTE while a CPU still caches the old one"},
	[MREMAP_FLUSH_DIRTY] = {"dirty", "move_ptes flushes under the PTE locks when a moved PTE "
					 "was dirty, other moves at the end after the locks "
					 "(5d1904204c99 \"mremap: fix race between mremap() and "
					 "page cleanning\", v4.9..v4.18): a clean moved page can be "
					 "truncated and freed while its old entry is cached"},
	[MREMAP_FLUSH_UNDER_PTL] = {"under_ptl", "move_ptes flushes the old range under both PTE "
						 "locks whenever it moved a present PTE "
						 "(eb66ae030829 \"mremap: properly flush TLB before "
						 "releasing the page\", v4.19)"},
};

static const struct tlbsim_knob_value mremap_pmd_values[MREMAP_PMD_COUNT] = {
	[MREMAP_PMD_NONE] = {"none", "no PMD-level move: every extent goes through move_ptes "
				     "(up to v5.0; arm64 until it selected HAVE_MOVE_PMD)"},
	[MREMAP_PMD_NEED_RMAP] = {"need_rmap", "a PMD-aligned PMD-sized extent moves its whole PTE "
					       "table with move_normal_pmd under the PMD locks only, "
					       "the rmap locks only when need_rmap_locks "
					       "(2c91bd4a4e2e \"mm: speed up mremap by 20x on large "
					       "regions\", v5.1..v5.13): a truncate's rmap walk "
					       "running meanwhile can zap the PTE through the moved "
					       "table and free the page before the old address is "
					       "flushed"},
	[MREMAP_PMD_RMAP_LOCKS] = {"rmap_locks", "move_normal_pmd always under the rmap locks "
						 "(i_mmap_rwsem for write: 97113eb39fa7 \"mm/mremap: "
						 "hold the rmap lock in write mode when moving page "
						 "table entries.\", v5.14; 5.13.3 stable)"},
};

static const struct tlbsim_knob_value numa_pending_values[NUMA_PENDING_COUNT] = {
	[NUMA_PENDING_NONE] = {"none", "change_protection (mprotect, the NUMA-hinting scan "
				       "change_prot_numa, UFFDIO_WRITEPROTECT) raises no "
				       "mm->tlb_flush_pending while its PTEs are changed and not yet "
				       "flushed: nobody can tell that a flush is in flight (before "
				       "20841405940e, v3.13)"},
	[NUMA_PENDING_RAISED] = {"raised", "change_protection_range raises it before the first "
					   "PTE and drops it after its flush_tlb_range "
					   "(20841405940e \"mm: fix TLB flush race between "
					   "migration, and change_protection_range\", v3.13)"},
};

static const struct tlbsim_knob_value pte_accessible_values[PTE_ACCESSIBLE_COUNT] = {
	[PTE_ACCESSIBLE_PRESENT] = {"present", "pte_accessible(mm, pte), which tells "
					       "ptep_clear_flush (migration's unmap) whether to "
					       "flush, is true only for a present PTE: a PROT_NONE "
					       "(NUMA-hinting) PTE is cleared without a flush although "
					       "a CPU may still cache it writable while the scan's "
					       "flush is pending (x86 before 20841405940e, v3.13)"},
	[PTE_ACCESSIBLE_PENDING] = {"pending", "it is also true for a PROT_NONE PTE while "
					       "mm_tlb_flush_pending(mm) (20841405940e, v3.13; "
					       "arm64's pte_accessible has the same test)"},
};

static const struct tlbsim_knob_value uffd_wp_flush_values[UFFD_WP_FLUSH_COUNT] = {
	[UFFD_WP_FLUSH_NONE] = {"none", "do_wp_page copies a page (COW) without looking at a "
				       "pending flush: after UFFDIO_WRITEPROTECT changed the PTE "
				       "under mmap_lock for read and deferred its flush, a CPU "
				       "can still write the old page after the copy (v5.7..v5.11)"},
	[UFFD_WP_FLUSH_PENDING] = {"pending", "do_wp_page first flushes the address "
					     "(flush_tlb_page) when userfaultfd_wp(vma) && "
					     "mm_tlb_flush_pending(mm) (6ce64428d621 "
					     "\"mm/userfaultfd: fix memory corruption due to "
					     "writeprotect\", v5.12; 5.10.y/5.11.y stable)"},
};

static const struct tlbsim_knob_value migrate_flush_values[MIGRATE_FLUSH_COUNT] = {
	[MIGRATE_FLUSH_UNDER_PTL] = {"under_ptl", "migrate_vma_collect_pmd flushes the PTEs it "
						  "replaced with migration entries before it drops the "
						  "PTE lock (60bae7370896 \"mm/migrate_device.c: flush "
						  "TLB while holding PTL\", v6.0), after a "
						  "ptep_clear_flush of each exclusive anonymous page "
						  "(6c287605fd56, v5.19)"},
	[MIGRATE_FLUSH_AFTER_UNLOCK] = {"after_unlock", "it flushes after pte_unmap_unlock "
							"(8c3328f1f36a, v4.14 .. v5.19): a "
							"MADV_DONTNEED or munmap that takes the "
							"lock meanwhile finds migration entries, "
							"flushes nothing and returns while a CPU "
							"still translates the page"},
};

static const struct tlbsim_knob_value migrate_dirty_values[MIGRATE_DIRTY_COUNT] = {
	[MIGRATE_DIRTY_COPY] = {"copy", "migrate_vma_collect_pmd marks the page dirty when the PTE "
					"it cleared was dirty (fd35ca3d12cc \"mm/migrate_device.c: "
					"copy pte dirty bit to page\", v6.0)"},
	[MIGRATE_DIRTY_DROP] = {"drop", "the cleared PTE's dirty bit is lost (v4.14 .. v5.19): a "
					"page written since it was last cleaned (MADV_FREE) is "
					"migrated as clean and reclaim may discard the data"},
};

static const struct tlbsim_knob_value pfnmap_flush_values[PFNMAP_FLUSH_COUNT] = {
	[PFNMAP_FLUSH_END_VMA] = {"end_vma", "tlb_end_vma flushes the gather after every "
					     "VM_PFNMAP or VM_MIXEDMAP VMA, before free_pgtables "
					     "takes it off the file's rmap (b67fbebd4cf9 "
					     "\"mmu_gather: Force tlb-flush VM_PFNMAP vmas\", "
					     "v5.19)"},
	[PFNMAP_FLUSH_NONE] = {"none", "x86 flushes an munmap only at tlb_finish_mmu (before "
				       "v5.19): a driver's unmap_mapping_range no longer finds "
				       "the unlinked VMA and the driver reuses the PFNs while a "
				       "CPU still caches them; arm64 flushes at every "
				       "tlb_end_vma either way"},
	[PFNMAP_FLUSH_STABLE_FIRST] = {"stable_first", "the stable trees' rewrite of b67fbebd4cf9 "
						       "(the 4.9.y .. 5.15.y stable trees, 2022): "
						       "unmap_region flushes after unmap_vmas when "
						       "the first VMA of the region is a PFN VMA - a "
						       "PFN VMA after another one is still "
						       "unlinked unflushed (no preset)"},
	[PFNMAP_FLUSH_STABLE_ANY] = {"stable_any", "its fix \"mm: Fix TLB flush for not-first "
						   "PFNMAP mappings in unmap_region()\" (the same "
						   "stable trees, September 2022, Message-ID "
						   "20220916100446.216671283@linuxfoundation.org): "
						   "when any VMA of the region is (no preset)"},
};

static const struct tlbsim_knob_value table_free_one_values[TABLE_FREE_ONE_COUNT] = {
	[TABLE_FREE_ONE_SYNC] = {"sync", "when tlb_remove_table cannot allocate its batch page, "
				       "tlb_remove_table_one IPIs every CPU (tlb_remove_table_"
				       "sync_one) and frees the table at once, before any TLB "
				       "invalidation: a walk cache may still hold it (x86 with "
				       "PARAVIRT's RCU table freeing v4.14..v4.18; powerpc radix "
				       "until 0ed1325967ab, v5.6; arm64 freed through "
				       "__p?d_free_tlb's flush before v4.20)"},
	[TABLE_FREE_ONE_INVALIDATE] = {"invalidate", "tlb_table_invalidate (the gather's flush) "
						     "first, then the IPI sync and the free "
						     "(d86564a2f085 \"mm/tlb, x86/mm: Support "
						     "invalidating TLB caches for RCU_TABLE_FREE\", "
						     "v4.19; arm64 from its RCU table freeing in "
						     "v4.20, HAVE_RCU_TABLE_INVALIDATE)"},
};

static const struct tlbsim_knob_value table_free_users_values[TABLE_FREE_USERS_COUNT] = {
	[TABLE_FREE_USERS_SHORTCUT] = {"shortcut", "tlb_remove_table frees a table at once when "
						   "mm_users < 2 (no concurrent walker assumed): "
						   "before the gather's flush, while another CPU's "
						   "walk cache (a thread that exited, a lazy or "
						   "speculative walker) may hold it (267239116987 \"mm, "
						   "powerpc: move the RCU page-table freeing into "
						   "generic code\", v3.0..v4.18)"},
	[TABLE_FREE_USERS_BATCH] = {"batch", "every table goes through the batch and is freed "
					     "after the flush and a grace period (\"mm/tlb: Remove "
					     "tlb_remove_table() non-concurrent condition\", "
					     "Message-ID 20180822154046.772017055@infradead.org, "
					     "v4.19)"},
};

static const struct tlbsim_knob_value arm64_pgtable_flush_values[ARM64_PGTABLE_FLUSH_COUNT] = {
	[ARM64_PGTABLE_FLUSH_HOOK] = {"hook", "arm64 __pte/__pmd/__pud_free_tlb invalidate the "
					      "table's walk-cache entries at once with "
					      "__flush_tlb_pgtable (TLBI VAE1IS + DSB per table); the "
					      "gather's flush is last-level only, VALE1IS "
					      "(285994a62c80 \"arm64: Invalidate the TLB corresponding "
					      "to intermediate page table levels\", v4.1, with "
					      "4150e50bf5f2; v4.1..v4.19)"},
	[ARM64_PGTABLE_FLUSH_GATHER] = {"gather", "no TLBI in the free hooks: the gather records "
						  "freed_tables and its flush uses the non-leaf "
						  "VAE1IS (\"arm64: tlb: Avoid synchronous TLBIs when "
						  "freeing page tables\", v4.20): a table freed "
						  "before that flush (table_free_users=shortcut, "
						  "table_free_one=sync) is still cached"},
};

static const struct tlbsim_knob_value x86_range_freed_values[X86_RANGE_FREED_COUNT] = {
	[X86_RANGE_FREED_FALSE] = {"false", "x86 flush_tlb_range() passes freed_tables=false: a "
					    "caller that cleared a PMD entry pointing to a PTE table "
					    "(pmdp_collapse_flush, mremap's move_normal_pmd) skips "
					    "lazy-TLB CPUs, whose paging-structure caches keep the "
					    "table (016c4d92cd16, v4.20..v6.13)"},
	[X86_RANGE_FREED_TRUE] = {"true", "it passes freed_tables=true, as arm64's flush_tlb_range "
					  "is non-leaf: lazy CPUs are IPIed too (3ef938c35035 "
					  "\"x86/mm: Fix flush_tlb_range() when used for zapping "
					  "normal PMDs\", v6.14; 6.6 stable)"},
};

static const struct tlbsim_knob_value hugetlb_unshare_flush_values[HUGETLB_UNSHARE_FLUSH_COUNT] = {
	[HUGETLB_UNSHARE_FLUSH_AFTER_UNLOCK] = {"after_unlock", "an unmap that unshared a hugetlb "
							    "PMD table (huge_pmd_unshare) leaves "
							    "the flush to tlb_finish_mmu, after "
							    "i_mmap_rwsem is released: the table's "
							    "last user can free it meanwhile while "
							    "this mm's CPUs still cache it "
							    "(24669e58477e, v3.11..v5.15)"},
	[HUGETLB_UNSHARE_FLUSH_BEFORE_UNLOCK] = {"before_unlock", "__unmap_hugepage_range flushes "
							      "the PUD range before returning to "
							      "the unlock (a4a118f2eead "
							      "\"hugetlbfs: flush TLBs correctly "
							      "after huge_pmd_unshare\", v5.16)"},
};

static const struct tlbsim_knob_value arm64_ttl_values[ARM64_TTL_COUNT] = {
	[ARM64_TTL_NONE] = {"none", "arm64 TLBIs carry no level hint, no range TLBI is issued "
				    "even on a FEAT_TLBIRANGE part, and a huge PMD's "
				    "pmdp_invalidate flushes page by page (the ASID at 512 pages) "
				    "(before c4ab2cbc1d87 and d1d3aa98b1d4, v5.8 and earlier); "
				    "later values: range TLBIs, and one level-2 VAE1IS of PMD "
				    "stride (flush_pmd_tlb_range)"},
	[ARM64_TTL_LEVEL] = {"level", "on FEAT_TTL parts (-D ttl=1) tlb_flush hints the level "
				      "tlb_get_level() reads from the cleared_* bits, also when "
				      "tables were freed: a gather that freed only a PTE table hints "
				      "level 2 and the walk entry to the table may survive "
				      "(c4ab2cbc1d87 \"arm64: tlb: Set the TTL field in "
				      "flush_tlb_range\", v5.9..v5.13)"},
	[ARM64_TTL_LEAF_ONLY] = {"leaf_only", "no hint when freed_tables is set: the TTL field is "
					      "valid only for leaf entries (52218fcd61cb \"arm64: "
					      "tlb: fix the TTL value of tlb_get_level\", v5.14; "
					      "5.9+ stable)"},
};

static const struct tlbsim_knob_value x86_invlpg_miss_values[X86_INVLPG_MISS_COUNT] = {
	[X86_INVLPG_MISS_IGNORE] = {"ignore", "PCIDs are used on a part whose INVLPG misses "
					      "Global entries (-D invlpg_global_miss=1): a kernel "
					      "range flush by INVLPG leaves stale kernel "
					      "translations (before ce0b15d11ad8, up to v6.3)"},
	[X86_INVLPG_MISS_NOPCID] = {"nopcid", "setup_pcid() does not enable PCIDs on such parts "
					      "(ce0b15d11ad8 \"x86/mm: Avoid incomplete Global "
					      "INVLPG flushes\", v6.4): every switch_mm flushes the "
					      "non-global TLB instead"},
};

static const struct tlbsim_knob_value x86_switch_mb_values[X86_SWITCH_MB_COUNT] = {
	[X86_SWITCH_MB_ATOMIC] = {"atomic", "switch_mm_irqs_off's only full barrier between its "
					    "store of loaded_mm and its read of next's tlb_gen is "
					    "cpumask_set_cpu's locked instruction: always there "
					    "while the bit is cleared at every switch (v4.20..v6.13), "
					    "missing when it is already set (209954cbc7d0, "
					    "v6.14..v6.17); matters only with --memory-model tso"},
	[X86_SWITCH_MB_SMP_MB] = {"smp_mb", "an smp_mb() when the bit is already set "
					    "(83b0177a6c48 \"x86/mm: Fix SMP ordering in "
					    "switch_mm_irqs_off()\", v6.18)"},
};

static const struct tlbsim_knob_value x86_switching_values[X86_SWITCHING_COUNT] = {
	[X86_SWITCHING_SKIP] = {"skip", "should_flush_tlb skips a CPU whose loaded_mm is "
					"LOADED_MM_SWITCHING (6db2526c1d69, v6.14)"},
	[X86_SWITCHING_FLUSH] = {"flush", "it IPIs such a CPU (fea4e317f9e7 \"x86/mm: Eliminate "
					  "window where TLB flushes may be inadvertently "
					  "skipped\", v6.15)"},
};

static const struct tlbsim_knob_value thp_collapse_range_values[THP_COLLAPSE_RANGE_COUNT] = {
	[THP_COLLAPSE_RANGE_END] = {"end", "collapse_pte_mapped_thp flushes from the address its "
					   "rmap loop left behind, the end of the extent: the "
					   "next 2 MiB, not the table it frees (27e1f8273113, "
					   "v5.4..v5.8)"},
	[THP_COLLAPSE_RANGE_HADDR] = {"haddr", "it flushes the huge-page-aligned range it "
					       "collapses (723a80dafed5 \"khugepaged: "
					       "collapse_pte_mapped_thp() flush the right "
					       "range\", v5.9)"},
};

static const struct tlbsim_knob_value thp_gup_sync_values[THP_GUP_SYNC_COUNT] = {
	[THP_GUP_SYNC_NONE] = {"none", "the collapse frees the PTE table right after the flush: "
				       "where the flush sends no IPI (arm64 TLBI, x86 INVLPGB) "
				       "a GUP-fast walk with IRQs off can still read it (up to "
				       "v6.0)"},
	[THP_GUP_SYNC_IPI] = {"ipi", "tlb_remove_table_sync_one() first: an IPI to every other "
				     "CPU, waited for (2ba99c5e0881 \"mm/khugepaged: fix GUP-fast "
				     "interaction by sending IPI\", v6.1)"},
};

static const struct tlbsim_knob knobs[] = {
	{"nested", "what tlb_finish_mmu does when mm_tlb_flush_nested() is true", NESTED_COUNT,
	 NESTED_FULLMM, nested_values},
	{"nested_check", "whether tlb_finish_mmu looks at mm_tlb_flush_nested() at all", 2, 1,
	 nested_check_values},
	{"x86_lazy", "x86: which lazy-TLB CPUs a flush IPIs", X86_LAZY_COUNT,
	 X86_LAZY_FREED_TABLES, x86_lazy_values},
	{"fault_retry", "what a shared-file write fault does about dirty throttling and mmap_lock",
	 FAULT_RETRY_COUNT, FAULT_RETRY_NONE, fault_retry_values},
	{"spurious_flush", "arm64: what a spurious write fault and an access-flag update flush "
			   "(x86 never flushes for either)", SPURIOUS_COUNT, SPURIOUS_BROADCAST,
	 spurious_flush_values},
	{"vmap_purge", "how lazily freed vmalloc areas are kept and purged", VMAP_PURGE_COUNT,
	 VMAP_PURGE_NODES, vmap_purge_values},
	{"kasan_flush", "when a vmalloc purge flushes the KASAN shadow it releases",
	 KASAN_FLUSH_COUNT, KASAN_FLUSH_PER_NODE, kasan_flush_values},
	{"x86_flush_local", "x86: whether the local flush runs before the IPIs or while they fly",
	 X86_FLUSH_LOCAL_COUNT, X86_FLUSH_LOCAL_FIRST, x86_flush_local_values},
	{"x86_tlb_gen", "x86: which tlb_gen tells a CPU's flush handler it has nothing to do",
	 X86_TLB_GEN_COUNT, X86_TLB_GEN_MM, x86_tlb_gen_values},
	{"x86_cpumask", "x86: when a CPU leaves the mm_cpumask of an mm it no longer runs",
	 X86_CPUMASK_COUNT, X86_CPUMASK_EAGER, x86_cpumask_values},
	{"x86_should_flush", "x86: which CPUs of mm_cpumask a flush that freed no tables IPIs",
	 X86_SHOULD_FLUSH_COUNT, X86_SHOULD_FLUSH_NOT_LAZY, x86_should_flush_values},
	{"x86_table_free", "x86: when a page-table page freed by munmap returns to the allocator",
	 X86_TABLE_FREE_COUNT, X86_TABLE_FREE_PAGE, x86_table_free_values},
	{"arm64_local", "arm64: whether a user flush of an mm that only ever ran on this CPU is "
			"local (never upstream)", ARM64_LOCAL_COUNT, ARM64_LOCAL_OFF,
	 arm64_local_values},
	{"x86_flush", "x86: IPIs or, on a CPU with INVLPGB, broadcast invalidation for "
		      "multi-threaded mms and kernel flushes", X86_FLUSH_COUNT, X86_FLUSH_IPI,
	 x86_flush_values},
	{"tlb_flush_cond", "when tlb_flush_mmu_tlbonly() issues the gather's flush",
	 TLB_FLUSH_COND_COUNT, TLB_FLUSH_COND_END, tlb_flush_cond_values},
	{"clear_refs", "how a write to /proc/PID/clear_refs flushes the PTEs it write-protected "
		       "or aged", CLEAR_REFS_COUNT, CLEAR_REFS_GATHER, clear_refs_values},
	{"zap_rmap", "when a zap removes the rmap of a dirty shared file page: before or after "
		     "its TLB flush", ZAP_RMAP_COUNT, ZAP_RMAP_EARLY, zap_rmap_values},
	{"ubc_check_mprotect", "whether change_pte_range (mprotect) flushes a pending reclaim batch",
	 2, 1, ubc_check_values},
	{"ubc_check_zap", "whether zap_pte_range (munmap, MADV_DONTNEED) flushes a pending "
			  "reclaim batch", 2, 1, ubc_check_values},
	{"ubc_check_madv_free", "whether madvise_free_pte_range (MADV_FREE) flushes a pending "
				"reclaim batch", 2, 1, ubc_check_values},
	{"ubc_flag", "how mm->tlb_flush_batched records a pending reclaim batch", UBC_FLAG_COUNT,
	 UBC_FLAG_GEN, ubc_flag_values},
	{"arm64_batch", "arm64: reclaim's batched unmap and what flush_tlb_batched_pending does",
	 ARM64_BATCH_COUNT, ARM64_BATCH_FLUSH_MM, arm64_batch_values},
	{"ksm_wp", "when KSM's write_protect_page() flushes the PTE it write-protects before "
		   "comparing the page", KSM_WP_COUNT, KSM_WP_PENDING, ksm_wp_values},
	{"mremap_flush", "where mremap's move_ptes flushes the old range: before or after it drops "
			 "the PTE locks", MREMAP_FLUSH_COUNT, MREMAP_FLUSH_UNDER_PTL, mremap_flush_values},
	{"mremap_pmd", "whether mremap moves whole PTE tables (move_normal_pmd) and under which "
		       "locks", MREMAP_PMD_COUNT, MREMAP_PMD_RMAP_LOCKS, mremap_pmd_values},
	{"numa_pending", "whether change_protection() raises mm->tlb_flush_pending until its "
			 "flush", NUMA_PENDING_COUNT, NUMA_PENDING_RAISED, numa_pending_values},
	{"pte_accessible", "whether pte_accessible() counts a PROT_NONE PTE while a flush is "
			   "pending (migration's ptep_clear_flush then flushes)",
	 PTE_ACCESSIBLE_COUNT, PTE_ACCESSIBLE_PENDING, pte_accessible_values},
	{"uffd_wp_flush", "whether do_wp_page() flushes a pending userfaultfd write-protect "
			  "flush before it copies the page", UFFD_WP_FLUSH_COUNT,
	 UFFD_WP_FLUSH_PENDING, uffd_wp_flush_values},
	{"migrate_flush", "device migration (migrate_vma_setup): whether the flush of the PTEs "
			  "replaced with migration entries comes before or after the PTE lock "
			  "is dropped", MIGRATE_FLUSH_COUNT, MIGRATE_FLUSH_UNDER_PTL,
	 migrate_flush_values},
	{"migrate_dirty", "device migration: whether the dirty bit of a PTE replaced with a "
			  "migration entry is carried to the page", MIGRATE_DIRTY_COUNT,
	 MIGRATE_DIRTY_COPY, migrate_dirty_values},
	{"pfnmap_flush", "whether munmap flushes a VM_PFNMAP / VM_MIXEDMAP VMA before the VMA "
			 "leaves the file's rmap (at tlb_end_vma, or in the stable trees' "
			 "unmap_region)", PFNMAP_FLUSH_COUNT,
	 PFNMAP_FLUSH_END_VMA, pfnmap_flush_values},
	{"table_free_one", "what tlb_remove_table does with a table when the batch page cannot be "
			   "allocated (-D table_batch_fail=1)", TABLE_FREE_ONE_COUNT,
	 TABLE_FREE_ONE_INVALIDATE, table_free_one_values},
	{"table_free_users", "whether tlb_remove_table frees a table at once when mm_users < 2",
	 TABLE_FREE_USERS_COUNT, TABLE_FREE_USERS_BATCH, table_free_users_values},
	{"arm64_pgtable_flush", "arm64: whether a freed table's walk-cache entries are invalidated "
				"in the free hook or by the gather's non-leaf flush",
	 ARM64_PGTABLE_FLUSH_COUNT, ARM64_PGTABLE_FLUSH_GATHER, arm64_pgtable_flush_values},
	{"x86_range_freed", "x86: the freed_tables argument of flush_tlb_range()",
	 X86_RANGE_FREED_COUNT, X86_RANGE_FREED_FALSE, x86_range_freed_values},
	{"hugetlb_unshare_flush", "when an unmap that unshared a hugetlb PMD table flushes: before "
				  "or after it releases i_mmap_rwsem", HUGETLB_UNSHARE_FLUSH_COUNT,
	 HUGETLB_UNSHARE_FLUSH_BEFORE_UNLOCK, hugetlb_unshare_flush_values},
	{"arm64_ttl", "arm64: the TTL level hint tlb_flush puts in its TLBIs on FEAT_TTL parts",
	 ARM64_TTL_COUNT, ARM64_TTL_LEAF_ONLY, arm64_ttl_values},
	{"x86_invlpg_miss", "x86: PCIDs on a part whose INVLPG misses Global entries, or not",
	 X86_INVLPG_MISS_COUNT, X86_INVLPG_MISS_NOPCID, x86_invlpg_miss_values},
	{"x86_switch_mb", "x86: the full barrier between switch_mm's loaded_mm store and its "
			  "tlb_gen read (--memory-model tso)", X86_SWITCH_MB_COUNT,
	 X86_SWITCH_MB_ATOMIC, x86_switch_mb_values},
	{"x86_switching", "x86: whether should_flush_tlb IPIs a CPU in the middle of switch_mm "
			  "(loaded_mm == LOADED_MM_SWITCHING; only --memory-model tso has that "
			  "window: under SC switch_mm is one step)", X86_SWITCHING_COUNT,
	 X86_SWITCHING_SKIP, x86_switching_values},
	{"thp_collapse_range", "the range collapse_pte_mapped_thp's pmdp_collapse_flush covers: "
			       "the huge page's, or the next one's", THP_COLLAPSE_RANGE_COUNT,
	 THP_COLLAPSE_RANGE_HADDR, thp_collapse_range_values},
	{"thp_gup_sync", "whether a THP collapse syncs with GUP-fast walkers "
			 "(tlb_remove_table_sync_one) before it frees the PTE table",
	 THP_GUP_SYNC_COUNT, THP_GUP_SYNC_IPI, thp_gup_sync_values},
};

/* tlbsim_policy.given has a bit per knob */
_Static_assert(sizeof(knobs) / sizeof(knobs[0]) <= 64,
	       "more knobs than bits in tlbsim_policy.given");

int tlbsim_knob_count(void)
{
	return (int)(sizeof(knobs) / sizeof(knobs[0]));
}

const struct tlbsim_knob *tlbsim_knob_get(int i)
{
	return i >= 0 && i < tlbsim_knob_count() ? &knobs[i] : NULL;
}

void tlbsim_policy_default(struct tlbsim_policy *pol)
{
	memset(pol, 0, sizeof(*pol));
	pol->nested = (enum nested_policy)knobs[0].default_value;
	pol->nested_check = knobs[1].default_value;
	pol->x86_lazy = (enum x86_lazy_policy)knobs[2].default_value;
	pol->fault_retry = (enum fault_retry_policy)knobs[3].default_value;
	pol->spurious_flush = (enum spurious_flush_policy)knobs[4].default_value;
	pol->vmap_purge = (enum vmap_purge_policy)knobs[5].default_value;
	pol->kasan_flush = (enum kasan_flush_policy)knobs[6].default_value;
	pol->x86_flush_local = (enum x86_flush_local_policy)knobs[7].default_value;
	pol->x86_tlb_gen = (enum x86_tlb_gen_policy)knobs[8].default_value;
	pol->x86_cpumask = (enum x86_cpumask_policy)knobs[9].default_value;
	pol->x86_should_flush = (enum x86_should_flush_policy)knobs[10].default_value;
	pol->x86_table_free = (enum x86_table_free_policy)knobs[11].default_value;
	pol->arm64_local = (enum arm64_local_policy)knobs[12].default_value;
	pol->x86_flush = (enum x86_flush_policy)knobs[13].default_value;
	pol->tlb_flush_cond = (enum tlb_flush_cond_policy)knobs[14].default_value;
	pol->clear_refs = (enum clear_refs_policy)knobs[15].default_value;
	pol->zap_rmap = (enum zap_rmap_policy)knobs[16].default_value;
	pol->ubc_check_mprotect = knobs[17].default_value;
	pol->ubc_check_zap = knobs[18].default_value;
	pol->ubc_check_madv_free = knobs[19].default_value;
	pol->ubc_flag = (enum ubc_flag_policy)knobs[20].default_value;
	pol->arm64_batch = (enum arm64_batch_policy)knobs[21].default_value;
	pol->ksm_wp = (enum ksm_wp_policy)knobs[22].default_value;
	pol->mremap_flush = (enum mremap_flush_policy)knobs[23].default_value;
	pol->mremap_pmd = (enum mremap_pmd_policy)knobs[24].default_value;
	pol->numa_pending = (enum numa_pending_policy)knobs[25].default_value;
	pol->pte_accessible = (enum pte_accessible_policy)knobs[26].default_value;
	pol->uffd_wp_flush = (enum uffd_wp_flush_policy)knobs[27].default_value;
	pol->migrate_flush = (enum migrate_flush_policy)knobs[28].default_value;
	pol->migrate_dirty = (enum migrate_dirty_policy)knobs[29].default_value;
	pol->pfnmap_flush = (enum pfnmap_flush_policy)knobs[30].default_value;
	pol->table_free_one = (enum table_free_one_policy)knobs[31].default_value;
	pol->table_free_users = (enum table_free_users_policy)knobs[32].default_value;
	pol->arm64_pgtable_flush = (enum arm64_pgtable_flush_policy)knobs[33].default_value;
	pol->x86_range_freed = (enum x86_range_freed_policy)knobs[34].default_value;
	pol->hugetlb_unshare_flush = (enum hugetlb_unshare_flush_policy)knobs[35].default_value;
	pol->arm64_ttl = (enum arm64_ttl_policy)knobs[36].default_value;
	pol->x86_invlpg_miss = (enum x86_invlpg_miss_policy)knobs[37].default_value;
	pol->x86_switch_mb = (enum x86_switch_mb_policy)knobs[38].default_value;
	pol->x86_switching = (enum x86_switching_policy)knobs[39].default_value;
	pol->thp_collapse_range = (enum thp_collapse_range_policy)knobs[40].default_value;
	pol->thp_gup_sync = (enum thp_gup_sync_policy)knobs[41].default_value;
}

static int *knob_slot(struct tlbsim_policy *pol, int k)
{
	switch (k) {
	case 0: return (int *)&pol->nested;
	case 1: return &pol->nested_check;
	case 2: return (int *)&pol->x86_lazy;
	case 3: return (int *)&pol->fault_retry;
	case 4: return (int *)&pol->spurious_flush;
	case 5: return (int *)&pol->vmap_purge;
	case 6: return (int *)&pol->kasan_flush;
	case 7: return (int *)&pol->x86_flush_local;
	case 8: return (int *)&pol->x86_tlb_gen;
	case 9: return (int *)&pol->x86_cpumask;
	case 10: return (int *)&pol->x86_should_flush;
	case 11: return (int *)&pol->x86_table_free;
	case 12: return (int *)&pol->arm64_local;
	case 13: return (int *)&pol->x86_flush;
	case 14: return (int *)&pol->tlb_flush_cond;
	case 15: return (int *)&pol->clear_refs;
	case 16: return (int *)&pol->zap_rmap;
	case 17: return &pol->ubc_check_mprotect;
	case 18: return &pol->ubc_check_zap;
	case 19: return &pol->ubc_check_madv_free;
	case 20: return (int *)&pol->ubc_flag;
	case 21: return (int *)&pol->arm64_batch;
	case 22: return (int *)&pol->ksm_wp;
	case 23: return (int *)&pol->mremap_flush;
	case 24: return (int *)&pol->mremap_pmd;
	case 25: return (int *)&pol->numa_pending;
	case 26: return (int *)&pol->pte_accessible;
	case 27: return (int *)&pol->uffd_wp_flush;
	case 28: return (int *)&pol->migrate_flush;
	case 29: return (int *)&pol->migrate_dirty;
	case 30: return (int *)&pol->pfnmap_flush;
	case 31: return (int *)&pol->table_free_one;
	case 32: return (int *)&pol->table_free_users;
	case 33: return (int *)&pol->arm64_pgtable_flush;
	case 34: return (int *)&pol->x86_range_freed;
	case 35: return (int *)&pol->hugetlb_unshare_flush;
	case 36: return (int *)&pol->arm64_ttl;
	case 37: return (int *)&pol->x86_invlpg_miss;
	case 38: return (int *)&pol->x86_switch_mb;
	case 39: return (int *)&pol->x86_switching;
	case 40: return (int *)&pol->thp_collapse_range;
	case 41: return (int *)&pol->thp_gup_sync;
	default: return NULL;
	}
}

const char *tlbsim_policy_value_name(const struct tlbsim_policy *pol, int k)
{
	int *slot = knob_slot((struct tlbsim_policy *)pol, k);
	if (!slot || *slot < 0 || *slot >= knobs[k].nvalues)
		return "?";
	return knobs[k].values[*slot].name;
}

int tlbsim_policy_set(struct tlbsim_policy *pol, const char *knob, const char *value, char *err,
		      size_t errlen)
{
	for (int k = 0; k < tlbsim_knob_count(); k++) {
		if (strcmp(knobs[k].name, knob) != 0)
			continue;
		for (int v = 0; v < knobs[k].nvalues; v++) {
			if (strcmp(knobs[k].values[v].name, value) == 0) {
				*knob_slot(pol, k) = v;
				pol->given |= 1ull << k;
				return TLBSIM_OK;
			}
		}
		snprintf(err, errlen, "unknown value '%s' for policy knob '%s' (see tlbsim list "
			 "policies)", value, knob);
		return TLBSIM_EINVAL;
	}
	snprintf(err, errlen, "unknown policy knob '%s' (see tlbsim list policies)", knob);
	return TLBSIM_EINVAL;
}

/* Set the knobs of a "k=v,k=v" list that are not given yet; mark them given
 * when `mark` (a kernel preset), leave them free when not (a workload's own
 * kernel default). Malformed text ends the list. */
static void apply_kv_list(struct tlbsim_policy *pol, const char *p, bool mark)
{
	while (*p) {
		char k[64], v[64];
		size_t kl = strcspn(p, "="), vl;
		if (kl >= sizeof(k) || p[kl] != '=')
			return;
		memcpy(k, p, kl);
		k[kl] = 0;
		p += kl + 1;
		vl = strcspn(p, ",");
		if (vl >= sizeof(v))
			return;
		memcpy(v, p, vl);
		v[vl] = 0;
		p += vl + (p[vl] == ',');
		for (int i = 0; i < tlbsim_knob_count(); i++) {
			if (strcmp(knobs[i].name, k) != 0 || (pol->given & (1ull << i)))
				continue;
			for (int j = 0; j < knobs[i].nvalues; j++)
				if (strcmp(knobs[i].values[j].name, v) == 0) {
					*knob_slot(pol, i) = j;
					if (mark)
						pol->given |= 1ull << i;
				}
		}
	}
}

void tlbsim_policy_apply_workload(struct tlbsim_policy *pol, const char *workload)
{
	const struct tlbsim_workload_desc *w = workload ? tlbsim_workload_find(workload) : NULL;
	if (w && w->default_policy)
		apply_kv_list(pol, w->default_policy, false);
}

void tlbsim_policy_apply_desc(struct tlbsim_policy *pol, const struct tlbsim_workload_desc *w)
{
	if (w && w->default_policy)
		apply_kv_list(pol, w->default_policy, false);
}

/*
 * Kernel-version presets: every knob as that release had it, from the
 * commits each knob value names (tlbsim list policies):
 *   nested_check  on from v4.14 (99baac21e458);
 *   nested        v4.14..v4.19 widened the range on a nested finish with no
 *                 level bits to lose (v1); v4.20 added the level tracking and
 *                 __tlb_reset_range, the 000 bug (prefix); fixed by
 *                 7a30df49f63a in v5.2-rc5/rc6 (fullmm);
 *   x86_lazy      b956575bed91 (v4.14-rc5) IPIs lazy CPUs at every flush,
 *                 and with PCID has no lazy mode (defer); from v4.20 only
 *                 when tables were freed (145f573b89a6, 016c4d92cd16;
 *                 the v4.19-rc version was reverted); never: the
 *                 v4.14-rc1..rc4 state, no preset;
 *   fault_retry   89b15332af7c in v5.5 (dirty_throttle); VM_FAULT_COMPLETED
 *                 from v6.0 (d92725256b4f);
 *   spurious_flush broadcast up to v5.8; b7333b58f358 in v5.9 (skip_tried);
 *                 arm64's no-op spurious hook from v5.10 (noop); local from
 *                 v6.19 (cb1fa2e99955);
 *   vmap_purge    one lazy tree up to v6.8 (global); nodes from v6.9
 *                 (282631cb2447);
 *   kasan_flush   one flush per area up to v6.12 (per_area); 9e9e085effe9 for
 *                 v6.13 (per_node);
 *   x86_flush_local first up to v5.12; concurrent from v5.13 (4ce94eabac16);
 *   x86_tlb_gen   mm_gen up to v5.19; new_gen from v6.0 (aa44284960d5);
 *   x86_cpumask   eager up to v6.13; lazy from v6.14 (209954cbc7d0,
 *                 953753db887f);
 *   x86_should_flush not_lazy up to v6.13; loaded_mm from v6.14
 *                 (6db2526c1d69);
 *   x86_table_free page up to v6.14; rcu from v6.15 (a37259732a7d);
 *   x86_switch_mb atomic up to v6.17 (a barrier only while switch_mm clears
 *                 and sets the mm_cpumask bits, up to v6.13); smp_mb from
 *                 v6.18 (83b0177a6c48);
 *   x86_switching skip up to v6.14 (the test exists from 6db2526c1d69);
 *                 flush from v6.15 (fea4e317f9e7);
 *   tlb_flush_cond end up to v5.5; bits from v5.6 (0758cd830494);
 *   mremap_flush  dirty v4.9..v4.18 (5d1904204c99); under_ptl from v4.19
 *                 (eb66ae030829); after_ptl (up to v4.8) is in no preset;
 *   mremap_pmd    none up to v5.0; need_rmap v5.1..v5.13 (2c91bd4a4e2e);
 *                 rmap_locks from v5.14 (97113eb39fa7; the 5.13 preset is
 *                 v5.13.0, before its 5.13.3 backport); arm64 selected
 *                 HAVE_MOVE_PMD later than x86, which the presets ignore;
 *   clear_refs    gather from v4.13 (b3a81d0841a9) to v5.10; flush_mm from
 *                 v5.11 (912efa17e512): v5.6..v5.10 is the window in which a
 *                 soft-dirty clear left writable TLB entries;
 *   zap_rmap      early up to v6.0; delayed from v6.1 (5df397dec7c4);
 *   ksm_wp        pending from v4.13 (b3a81d0841a9: write_protect_page also
 *                 flushes when mm_tlb_flush_pending) to v5.18; exclusive
 *                 from v5.19 (6c287605fd56: also every PageAnonExclusive
 *                 page); pte (no pending check) is before every preset;
 *   numa_pending, pte_accessible  raised / pending in every preset (both
 *                 from 20841405940e, v3.13);
 *   uffd_wp_flush none up to v5.10 (uffd-wp exists from v5.7; mainline
 *                 5.10 without the stable backport); pending from v5.12
 *                 (6ce64428d621);
 *   migrate_flush after_unlock v4.14..v5.19 (8c3328f1f36a); under_ptl
 *                 from v6.0 (60bae7370896);
 *   migrate_dirty drop v4.14..v5.19; copy from v6.0 (fd35ca3d12cc);
 *   pfnmap_flush  none up to v5.18; end_vma from v5.19 (b67fbebd4cf9;
 *                 the stable trees got a rewrite in unmap_region instead:
 *                 stable_first, then stable_any, in no preset);
 *   thp_collapse_range end v5.4..v5.8 (27e1f8273113); haddr from v5.9
 *                 (723a80dafed5); haddr before v5.4, which had no
 *                 collapse_pte_mapped_thp (the model runs it anyway);
 *   thp_gup_sync  none up to v6.0; ipi from v6.1 (2ba99c5e0881; v6.5
 *                 frees the table with pte_free_defer after RCU instead,
 *                 which the model expresses as the same sync);
 *   x86_flush     ipi up to v6.14; invlpgb from v6.15 (4afeb0ed1753,
 *                 82378c6c2f43): it changes nothing on a profile without
 *                 INVLPGB (parameter invlpgb=0, every Intel profile), where
 *                 the kernel also takes the IPI path.
 */
#define K_OLD_VMAP "vmap_purge=global,kasan_flush=per_area"
#define K_GATHER_END ",tlb_flush_cond=end,clear_refs=gather,zap_rmap=early,ksm_wp=pending"
#define K_GATHER_BITS ",tlb_flush_cond=bits,clear_refs=gather,zap_rmap=early,ksm_wp=pending"
#define K_FLUSH_MM ",tlb_flush_cond=bits,clear_refs=flush_mm,zap_rmap=early,ksm_wp=pending"
#define K_FLUSH_MM_EXCL ",tlb_flush_cond=bits,clear_refs=flush_mm,zap_rmap=early,ksm_wp=exclusive"
#define K_DELAY_RMAP ",tlb_flush_cond=bits,clear_refs=flush_mm,zap_rmap=delayed,ksm_wp=exclusive"
#define K_MREMAP_414 ",mremap_flush=dirty,mremap_pmd=none" K_UFFD_OLD
#define K_UFFD_OLD ",numa_pending=raised,pte_accessible=pending,uffd_wp_flush=none"
/* what kernels before v5.7 lack: the model still runs the ioctl */
#define K_NO_UFFD_WP "; UFFDIO_WRITEPROTECT (uffd_wp) did not exist before v5.7 (63b2d4174c4a)"
/* ... nor collapse_pte_mapped_thp before v5.4 */
#define K_NO_THP_PTE "; collapse_pte_mapped_thp (the collapse statement) did not exist before " \
	"v5.4 (27e1f8273113): the model runs it with the later fixed flush range"
/* ... nor KASAN's vmalloc shadow before v5.5 */
#define K_NO_KASAN_VM "; KASAN's vmalloc shadow and vmalloc'ed stacks under KASAN came in " \
	"v5.5 (3c5c3cfb9ef4): kbuild and vmtest with kasan=1 (their default) run them anyway"
#define K_UFFD_NEW ",numa_pending=raised,pte_accessible=pending,uffd_wp_flush=pending"
#define K_MREMAP_420 ",mremap_flush=under_ptl,mremap_pmd=none" K_UFFD_OLD
#define K_MREMAP_51 ",mremap_flush=under_ptl,mremap_pmd=need_rmap" K_UFFD_OLD
/* the 5.13 preset: mremap as 5.1, uffd-wp with 6ce64428d621 */
#define K_MREMAP_51_UFFD ",mremap_flush=under_ptl,mremap_pmd=need_rmap" K_UFFD_NEW
#define K_MREMAP_513 ",mremap_flush=under_ptl,mremap_pmd=rmap_locks" K_UFFD_NEW
/* device migration (v4.14+) and PFN mappings */
#define K_DEV_OLD ",migrate_flush=after_unlock,migrate_dirty=drop,pfnmap_flush=none"
#define K_DEV_60 ",migrate_flush=under_ptl,migrate_dirty=copy,pfnmap_flush=end_vma"
/* page-table freeing (mmu_gather.c): the mm_users shortcut and arm64's
 * free-hook TLBI up to v4.18/v4.19; the batch-failure path without an
 * invalidate up to v4.18 (d86564a2f085, v4.19: x86 and, from v4.20, arm64
 * invalidate first; 0ed1325967ab, v5.6, fixed powerpc radix only); x86
 * flush_tlb_range with
 * freed_tables=false up to v6.13 (3ef938c35035, v6.14); a hugetlb unshare
 * flushed after i_mmap_rwsem up to v5.15 (a4a118f2eead, v5.16); arm64 TTL
 * hints from v5.9 (c4ab2cbc1d87), leaf-only from v5.14 (52218fcd61cb);
 * PCIDs off on INVLPG-erratum parts from v6.4 (ce0b15d11ad8); THP collapse
 * flushing the wrong range v5.4..v5.8 (27e1f8273113..723a80dafed5) and
 * without the GUP-fast sync up to v6.0 (2ba99c5e0881, v6.1) */
#define K_PT_414 ",table_free_one=sync,table_free_users=shortcut,arm64_pgtable_flush=hook," \
	"x86_range_freed=false,hugetlb_unshare_flush=after_unlock,arm64_ttl=none,"            \
	"x86_invlpg_miss=ignore,thp_collapse_range=haddr,thp_gup_sync=none"
#define K_PT_420 ",table_free_one=invalidate,table_free_users=batch,arm64_pgtable_flush=gather," \
	"x86_range_freed=false,hugetlb_unshare_flush=after_unlock,arm64_ttl=none,"            \
	"x86_invlpg_miss=ignore,thp_collapse_range=haddr,thp_gup_sync=none"
#define K_PT_58 ",table_free_one=invalidate,table_free_users=batch,arm64_pgtable_flush=gather," \
	"x86_range_freed=false,hugetlb_unshare_flush=after_unlock,arm64_ttl=none,"            \
	"x86_invlpg_miss=ignore,thp_collapse_range=end,thp_gup_sync=none"
#define K_PT_59 ",table_free_one=invalidate,table_free_users=batch,arm64_pgtable_flush=gather," \
	"x86_range_freed=false,hugetlb_unshare_flush=after_unlock,arm64_ttl=level,"           \
	"x86_invlpg_miss=ignore,thp_collapse_range=haddr,thp_gup_sync=none"
#define K_PT_60 ",table_free_one=invalidate,table_free_users=batch,arm64_pgtable_flush=gather," \
	"x86_range_freed=false,hugetlb_unshare_flush=before_unlock,arm64_ttl=leaf_only,"      \
	"x86_invlpg_miss=ignore,thp_collapse_range=haddr,thp_gup_sync=none"
#define K_PT_66 ",table_free_one=invalidate,table_free_users=batch,arm64_pgtable_flush=gather," \
	"x86_range_freed=false,hugetlb_unshare_flush=before_unlock,arm64_ttl=leaf_only,"      \
	"x86_invlpg_miss=nopcid,thp_collapse_range=haddr,thp_gup_sync=ipi"
#define K_PT_618 ",table_free_one=invalidate,table_free_users=batch,arm64_pgtable_flush=gather," \
	"x86_range_freed=true,hugetlb_unshare_flush=before_unlock,arm64_ttl=leaf_only,"       \
	"x86_invlpg_miss=nopcid,thp_collapse_range=haddr,thp_gup_sync=ipi"
#define K_X86_OLD                                                               \
	",x86_flush_local=first,x86_tlb_gen=mm_gen,x86_cpumask=eager,"            \
	"x86_should_flush=not_lazy,x86_table_free=page,x86_flush=ipi,"            \
	"x86_switch_mb=atomic,x86_switching=skip"
#define K_X86_513                                                               \
	",x86_flush_local=concurrent,x86_tlb_gen=mm_gen,x86_cpumask=eager,"       \
	"x86_should_flush=not_lazy,x86_table_free=page,x86_flush=ipi,"            \
	"x86_switch_mb=atomic,x86_switching=skip"
#define K_X86_60                                                                \
	",x86_flush_local=concurrent,x86_tlb_gen=new_gen,x86_cpumask=eager,"      \
	"x86_should_flush=not_lazy,x86_table_free=page,x86_flush=ipi,"            \
	"x86_switch_mb=atomic,x86_switching=skip"
#define K_X86_618                                                               \
	",x86_flush_local=concurrent,x86_tlb_gen=new_gen,x86_cpumask=lazy,"       \
	"x86_should_flush=loaded_mm,x86_table_free=rcu,x86_flush=invlpgb,"        \
	"x86_switch_mb=smp_mb,x86_switching=flush"
#define K_VMA_LOCK                                                              \
	"faults under per-VMA locks (v6.4+) are not modelled: faults take "        \
	"mmap_lock"
#define K_X86_6X                                                                \
	"x86: the contended cache line of mm tlb_gen, which aa44284960d5 avoids "  \
	"reading, is not charged; mprotect and the NUMA scan flush as in v5.1 (a " \
	"huge PMD under its lock, then the range at the end): the mmu_gather of "  \
	"4a18419f71cd (v5.19), which defers the huge PMD's flush and on x86 "      \
	"skips it (pmdp_invalidate_ad), is not modelled; "
#define K_X86_14                                                                \
	"x86: the mm_cpumask atomics that 209954cbc7d0 saves at context switch "   \
	"are not charged (only the IPIs to stale CPUs it adds are); "              \
	"INVLPGB (x86_flush=invlpgb) is used only on a profile with invlpgb=1 "   \
	"(milan-72); the page-reclaim batch flush with INVLPGB is not modelled; "
/* reclaim's batched unmap (rmap.c): the tlb_flush_batched bool until
 * 5ee2fa2f0636 (v5.17); arm64 batches from v6.5 (43b3dfdd0455) with a
 * DSB-only flush_tlb_batched_pending until 4b634918384c (v6.16); every
 * preset is v4.13+ (3ea277194daa: all ubc_check_* on) */
#define K_UBC_BOOL ",ubc_flag=bool,arm64_batch=none"
#define K_UBC_NOARM ",arm64_batch=none"
#define K_UBC_DSB ",arm64_batch=dsb"
static const struct tlbsim_kernel_preset kernels[] = {
	{"4.14",
	 "nested=v1,nested_check=on,x86_lazy=defer,fault_retry=none,spurious_flush=broadcast,"
	 K_OLD_VMAP K_X86_OLD K_GATHER_END K_UBC_BOOL K_MREMAP_414 K_DEV_OLD K_PT_414,
	 "99baac21e458 (nested check); no level bits yet, a nested finish widens the range",
	 "arm64 had no level tracking before v4.20: tlb_flush issued page-stride VALE1IS over the "
	 "range and __p?d_free_tlb one VAE1IS per freed table (arm64_pgtable_flush=hook); the "
	 "model's stride still follows the level bits" K_NO_UFFD_WP K_NO_THP_PTE K_NO_KASAN_VM},
	{"4.20",
	 "nested=prefix,nested_check=on,x86_lazy=freed_tables,fault_retry=none,"
	 "spurious_flush=broadcast," K_OLD_VMAP K_X86_OLD K_GATHER_END K_UBC_BOOL K_MREMAP_420 K_DEV_OLD K_PT_420,
	 "a6d60245d6d9/22a61c3c4f13 (level tracking, the 000 bug with dd2283f2605e), "
	 "145f573b89a6/016c4d92cd16 (lazy CPUs IPIed only for freed tables)",
	 "arm64's range limit was 1024 TLBI ops (PTRS_PER_PTE from v5.0); the model uses "
	 "PTRS_PER_PTE" K_NO_UFFD_WP K_NO_THP_PTE K_NO_KASAN_VM},
	{"5.1",
	 "nested=prefix,nested_check=on,x86_lazy=freed_tables,fault_retry=none,"
	 "spurious_flush=broadcast," K_OLD_VMAP K_X86_OLD K_GATHER_END K_UBC_BOOL K_MREMAP_51 K_DEV_OLD K_PT_420,
	 "the seed-000 kernel: the nested finish resets the level bits",
	 &(K_NO_UFFD_WP K_NO_THP_PTE K_NO_KASAN_VM)[2]},
	{"5.2",
	 "nested=fullmm,nested_check=on,x86_lazy=freed_tables,fault_retry=none,"
	 "spurious_flush=broadcast," K_OLD_VMAP K_X86_OLD K_GATHER_END K_UBC_BOOL K_MREMAP_51 K_DEV_OLD K_PT_420,
	 "7a30df49f63a (the 000 fix, v5.2-rc5/rc6)", &(K_NO_UFFD_WP K_NO_THP_PTE K_NO_KASAN_VM)[2]},
	{"5.8",
	 "nested=fullmm,nested_check=on,x86_lazy=freed_tables,fault_retry=dirty_throttle,"
	 "spurious_flush=broadcast," K_OLD_VMAP K_X86_OLD K_GATHER_BITS K_UBC_BOOL K_MREMAP_51 K_DEV_OLD K_PT_58,
	 "89b15332af7c (the seed-001 kernel: retried write faults)", NULL},
	{"5.9",
	 "nested=fullmm,nested_check=on,x86_lazy=freed_tables,fault_retry=dirty_throttle,"
	 "spurious_flush=skip_tried," K_OLD_VMAP K_X86_OLD K_GATHER_BITS K_UBC_BOOL K_MREMAP_51 K_DEV_OLD K_PT_59,
	 "b7333b58f358 (the 001 fix)", NULL},
	{"5.10",
	 "nested=fullmm,nested_check=on,x86_lazy=freed_tables,fault_retry=dirty_throttle,"
	 "spurious_flush=noop," K_OLD_VMAP K_X86_OLD K_GATHER_BITS K_UBC_BOOL K_MREMAP_51 K_DEV_OLD K_PT_59,
	 "arm64's no-op spurious fault hook", NULL},
	{"5.13",
	 "nested=fullmm,nested_check=on,x86_lazy=freed_tables,fault_retry=dirty_throttle,"
	 "spurious_flush=noop," K_OLD_VMAP K_X86_513 K_FLUSH_MM K_UBC_BOOL K_MREMAP_51_UFFD K_DEV_OLD K_PT_59,
	 "x86 4ce94eabac16 (remote and local TLBs flushed concurrently)", NULL},
	{"6.0",
	 "nested=fullmm,nested_check=on,x86_lazy=freed_tables,fault_retry=completed,"
	 "spurious_flush=noop," K_OLD_VMAP K_X86_60 K_FLUSH_MM_EXCL K_UBC_NOARM K_MREMAP_513 K_DEV_60 K_PT_60,
	 "d92725256b4f (VM_FAULT_COMPLETED); x86 4ce94eabac16 (v5.13), aa44284960d5",
	 K_X86_6X K_VMA_LOCK},
	{"6.6",
	 "nested=fullmm,nested_check=on,x86_lazy=freed_tables,fault_retry=completed,"
	 "spurious_flush=noop," K_OLD_VMAP K_X86_60 K_DELAY_RMAP K_UBC_DSB K_MREMAP_513 K_DEV_60 K_PT_66,
	 "the v6.3..v6.8 vmalloc purge", K_X86_6X K_VMA_LOCK},
	{"6.10",
	 "nested=fullmm,nested_check=on,x86_lazy=freed_tables,fault_retry=completed,"
	 "spurious_flush=noop,vmap_purge=nodes,kasan_flush=per_area" K_X86_60 K_DELAY_RMAP K_UBC_DSB K_MREMAP_513 K_DEV_60 K_PT_66,
	 "282631cb2447 (vmap nodes: the seed-003 kernel)", K_X86_6X K_VMA_LOCK},
	{"6.11",
	 "nested=fullmm,nested_check=on,x86_lazy=freed_tables,fault_retry=completed,"
	 "spurious_flush=noop,vmap_purge=nodes,kasan_flush=per_area" K_X86_60 K_DELAY_RMAP K_UBC_DSB K_MREMAP_513 K_DEV_60 K_PT_66,
	 "as v6.10 (the 003 fix was posted against v6.11-rc1)", K_X86_6X K_VMA_LOCK},
	{"6.18",
	 "nested=fullmm,nested_check=on,x86_lazy=freed_tables,fault_retry=completed,"
	 "spurious_flush=noop,vmap_purge=nodes,kasan_flush=per_node" K_X86_618 K_DELAY_RMAP K_MREMAP_513 K_DEV_60 K_PT_618,
	 "9e9e085effe9 (the 003 fix, v6.13); x86 209954cbc7d0, 953753db887f, 6db2526c1d69 "
	 "(v6.14), a37259732a7d, 4afeb0ed1753, fea4e317f9e7 (v6.15), 83b0177a6c48 (v6.18)", K_X86_6X K_X86_14 K_VMA_LOCK},
};

int tlbsim_kernel_count(void)
{
	return (int)(sizeof(kernels) / sizeof(kernels[0]));
}

const struct tlbsim_kernel_preset *tlbsim_kernel_get(int i)
{
	return i >= 0 && i < tlbsim_kernel_count() ? &kernels[i] : NULL;
}

const struct tlbsim_kernel_preset *tlbsim_kernel_find(const char *version)
{
	if (!version)
		return NULL;
	if (version[0] == 'v')
		version++;
	for (int i = 0; i < tlbsim_kernel_count(); i++)
		if (strcmp(kernels[i].version, version) == 0)
			return &kernels[i];
	return NULL;
}

void tlbsim_policy_apply_kernel(struct tlbsim_policy *pol, const struct tlbsim_kernel_preset *k)
{
	apply_kv_list(pol, k->policy, true);
	/* a knob the preset does not name is one no release changed (an
	 * unmerged proposal such as arm64_local): the release has its default */
	for (int i = 0; i < tlbsim_knob_count(); i++)
		if (!(pol->given & (1ull << i))) {
			*knob_slot(pol, i) = knobs[i].default_value;
			pol->given |= 1ull << i;
		}
}
