/*
 * mm.h - the kernel mm model (v5.1 baseline): struct kernel (the simulated
 * kernel on its machine), per-task state, mm_struct, VMAs, mmap_sem, shmem
 * objects, mmu_gather, and the syscall/fault entry points the workloads call.
 * Names mirror the kernel's; each function's comment names the kernel
 * function, file and version it mirrors. Where each one lives:
 *   rwsem.c       down_read/up_read/down_write/up_write/downgrade_write
 *   mmap.c        get_unmapped_area, do_mmap (sys_mmap), __do_munmap
 *                 (sys_munmap), unmap_region, free_pgtables, VMA list,
 *                 exit_mmap
 *   madvise.c     madvise(MADV_DONTNEED / MADV_FREE)
 *   memory.c      __pte_alloc, zap_page_range, unmap_vmas, unmap_single_vma,
 *                 unmap_page_range, zap_p4d/pud/pmd/pte_range,
 *                 free_pgd_range and free_p4d/pud/pmd/pte_range
 *   fault.c       do_page_fault (do_user_addr_fault), handle_mm_fault,
 *                 handle_pte_fault, do_anonymous_page, do_fault
 *   shmem.c       shmem_zero_setup, shmem_getpage, the final fput
 *   mmu_gather.c  tlb_gather_mmu, tlb_finish_mmu, tlb_flush_mmu, table RCU
 *   kernel.c      struct kernel, tasks, mm_struct lifetime, context switch
 *   fork.c        tasklist_lock (qrwlock), kernel stacks, copy_process
 *                 (sys_fork), execve (sys_execve), mmput/mmdrop
 *   exit.c        do_exit, exit_notify, wait4 (__do_wait), release_task
 *   policy.c      the policy knobs (tlbsim_nested_policy in mmu_gather.c)
 *   mprotect.c    mprotect: mprotect_fixup, change_protection (v5.1)
 *   msync.c       msync (v5.1): vfs_fsync_range of shared file mappings
 *   rmap.c        reclaim: shrink_page_list over named pages, try_to_unmap_one
 *                 with the batched flush, flush_tlb_batched_pending, the PTL
 *                 as reclaim sees it, the MADV_FREE discard
 *   ksm.c         KSM's merge of two pages: try_to_merge_one_page,
 *                 write_protect_page, replace_page (mm/ksm.c, v5.1)
 *   migrate_device.c  a driver's device migration: migrate_vma_setup,
 *                 migrate_vma_collect_pmd, migrate_vma_pages/finalize,
 *                 (mm/migrate_device.c, v6.0)
 *   pfnmap.c      a driver's VM_PFNMAP mapping (remap_pfn_range) and its
 *                 revocation (unmap_mapping_range, then the frames freed)
 *   hugetlb.c     hugetlb PMD sharing: huge_pmd_share / huge_pmd_unshare
 *   khugepaged.c  collapse_pte_mapped_thp (pmdp_collapse_flush, pte_free),
 *                 retract_page_tables, collapse_huge_page (anonymous),
 *                 tlb_remove_table_sync_one, the GUP-fast walker (mm/gup.c)
 *
 * Ordering rule kept by mmu_gather (include/asm-generic/tlb.h): unhook the
 * translation, invalidate every CPU that may cache it, and only then free the
 * memory it pointed at.
 */
#ifndef TLBSIM_MM_H
#define TLBSIM_MM_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/arch.h"
#include "arch/tlb.h"
#include "hw/hw.h"
#include "sim/sim.h"

struct task;

/* ---- rw_semaphore (mmap_sem) ---- */
/*
 * The cache line of a kernel object's hot word (an rwsem's count, an mm's
 * tlb_flush_pending or rss_stat): the CPU that wrote it last. An atomic
 * read-modify-write on a line another CPU wrote last first has to fetch it
 * (line_transfer_ns, calibration C13) and then owns it; on a line it owns
 * already it costs what an uncontended atomic costs (lock_op_ns, charged by
 * the caller). Plain reads are not modelled (they would share the line).
 */
struct cacheline {
	int32_t owner;			/* last writer's CPU + 1; 0: nobody yet */
};

/* The transfer cost an atomic RMW on l by CPU cpu pays now (0 or
 * line_transfer_ns); the CPU owns the line afterwards. */
static inline uint64_t line_rmw_on(struct sim *s, struct cacheline *l, int cpu)
{
	int32_t me = cpu + 1, prev = l->owner;
	l->owner = me;
	return prev && prev != me ? (uint64_t)P(s, P_line_transfer_ns) : 0;
}

/* line_rmw_on() by the current CPU */
static inline uint64_t line_rmw(struct sim *s, struct cacheline *l)
{
	return line_rmw_on(s, l, cur_cpu(s));
}

struct rw_semaphore {
	struct cacheline count;		/* sem->count (the owner field shares it) */
	int readers;			/* active readers */
	bool writer;			/* held for write */
	struct task *wait_head;		/* FIFO of sleeping waiters */
	struct task *wait_tail;
	struct task *spin_head;		/* writers spinning on a running writer owner */
	struct task *spin_tail;		/* (the OSQ, FIFO) */
	uint8_t kind;			/* RWSEM_MMAP_LOCK or RWSEM_I_MMAP (trace counters) */
};
enum { RWSEM_MMAP_LOCK, RWSEM_I_MMAP, RWSEM_KINDS };

/* ---- tasklist_lock: a queued rwlock (fork.c; kernel/locking/qrwlock.c) ---- */
struct qrwlock {
	int readers;			/* _QR_BIAS count: readers holding it, and the reader
					 * at the queue head (it adds its bias there) */
	bool wlocked;			/* _QW_LOCKED */
	bool waiting;			/* _QW_WAITING: the writer at the queue head waits */
	struct task *wait_head;		/* wait_lock (a FIFO qspinlock): spinning waiters, */
	struct task *wait_tail;		/* the head holds wait_lock */
};

/* ---- files: an inode, its page cache, and the filesystem kind ---- */

/* What differs between the filesystems modelled (data, not code). */
struct fs_type {
	const char *name;		/* "tmpfs", "ext4" */
	bool page_mkwrite;		/* vm_ops->page_mkwrite (ext4_page_mkwrite; shmem has none) */
	bool account_dirty;		/* the bdi accounts dirty pages and writes them back */
};
extern const struct fs_type fs_tmpfs, fs_ext4, fs_hugetlbfs;
const struct fs_type *fs_type_find(const char *name);

/* page flags kept in struct frame.pgflags (struct page's flags) */
#define PG_DIRTY 0x1u
#define PG_ANON 0x2u		/* PageAnon: not a page-cache page */
#define PG_LOCKED 0x4u		/* PageLocked: lock_page() held */
#define PG_LAZYFREE 0x8u	/* anon page with PageSwapBacked clear (MADV_FREE) */
/* a page-cache page whose PTE a zap cleared and whose rmap removal waits for
 * the gather's flush (zap_rmap=delayed: 5df397dec7c4's delay_rmap): it
 * still counts as mapped (page_mapped) */
#define PG_DELAY_RMAP 0x10u
#define PG_KSM 0x20u		/* PageKsm: a KSM page (ksm.c); a write to it always copies */
/* a page-table page reachable from more than one mm (hugetlb PMD sharing,
 * hugetlb.c): the PMD table and the PTE tables under it */
#define PG_PT_SHARED 0x40u
/* an anonymous page fork shared, not PageAnonExclusive (6c287605fd56,
 * v5.19: page_try_dup_anon_rmap clears it) even once the other mm has let
 * it go, until a write fault reuses it (page_move_anon_rmap sets it again) */
#define PG_DUPED 0x80u

struct pagecache_ent {
	uint64_t index;
	uint32_t frame;
};

struct vm_area_struct;

/* struct inode with its address_space (include/linux/fs.h) */
struct inode {
	const struct fs_type *fs;
	uint32_t refs;			/* struct file references, including mappings */
	uint64_t size;			/* i_size, bytes */
	uint32_t nr;
	size_t cap;
	struct pagecache_ent *pages;	/* the page cache, sorted by index */
	/* i_mmap: the VMAs mapping the file (VMAs are stable objects; walk
	 * this array by index: it may grow while a walk yields) */
	struct vm_area_struct **mmap;
	int nr_mmap;
	size_t cap_mmap;
	struct rw_semaphore i_mmap_rwsem;	/* taken for read by rmap walks */
	uint64_t nr_dirty;		/* dirty pages in the page cache */
	struct inode *next_free;
	struct inode *fput_next;	/* a task's deferred final fputs */
};

/* ---- VMAs ---- */
#define VM_READ    0x1u
#define VM_WRITE   0x2u
#define VM_SHARED  0x8u
#define VM_GROWSDOWN 0x100u
#define VM_UFFD_WP 0x1000u	/* registered with UFFDIO_REGISTER_MODE_WP (userfaultfd_wp) */
#define VM_PFNMAP  0x400u	/* page-ranges managed without struct page (remap_pfn_range) */
#define VM_MIXEDMAP 0x10000000u	/* may map PFNs without a struct page (vm_insert_mixed) */
#define VM_HUGETLB 0x00400000u	/* a hugetlbfs mapping (hugetlb.c) */
#define VM_HUGEPAGE 0x20000000u	/* madvise(MADV_HUGEPAGE): THP wanted (huge_memory.c) */

struct mm_struct;

struct vm_area_struct {
	uint64_t vm_start, vm_end;
	uint32_t vm_flags;
	uint64_t vm_pgoff;		/* file: page offset of vm_start */
	struct inode *file;		/* vm_file's inode; NULL: anonymous */
	struct mm_struct *vm_mm;
	struct vm_area_struct *next_free;
	bool linked;			/* in vm_mm's vmas (find_vma's cache checks it) */
};

/* vma_wants_writenotify(): a shared writable file mapping starts read-only
 * when the filesystem wants to hear of the first write (mm/mmap.c) */
static inline bool vma_wants_writenotify(const struct vm_area_struct *vma)
{
	return (vma->vm_flags & (VM_SHARED | VM_WRITE)) == (VM_SHARED | VM_WRITE) && vma->file &&
	       (vma->file->fs->page_mkwrite || vma->file->fs->account_dirty);
}

struct mm_struct {
	int id;
	uint32_t pgd;			/* root table frame */
	struct vm_area_struct **vmas;	/* sorted by vm_start */
	int nr_vmas;
	size_t cap_vmas;
	struct rw_semaphore mmap_sem;
	int tlb_flush_pending;		/* mm->tlb_flush_pending */
	struct cacheline flush_pending_line;	/* its cache line */
	struct cacheline rss_line;	/* mm->rss_stat (atomic_long_t counters) */
	uint64_t mmap_base;
	/* unmapped_area_topdown's memo (mmap.c): while gap_len != 0 and
	 * gap_base == mmap_base, every gap it scans whose top lies above
	 * gap_top is shorter than gap_len. Linking a VMA only shrinks gaps and
	 * keeps it true; do_munmap raises gap_top past the gap it opens;
	 * exit_mmap clears it. */
	uint64_t gap_len, gap_top, gap_base;
	/* a guess at how many VMAs start at or below gap_top (where the scan
	 * resumes), checked against the array before it is used */
	int gap_idx;
	/* find_vma's cache (the kernel's per-task vmacache, here per mm, by
	 * 16 MiB window of the address): a hit is used only if still linked
	 * and covering the address, so it is exact. 64 windows (1 GiB before
	 * two share a slot): mmap8's sixteen 16 MiB mappings and their
	 * threads' stacks fit without evicting each other, which 16 did not */
#define VMACACHE_SIZE 64
	struct vm_area_struct *vmacache[VMACACHE_SIZE];
	int users;			/* mm_users */
	/* mm_users' share from the threads (CLONE_VM) still running, which
	 * `users` leaves out; read only by tlb_remove_table's mm_users < 2
	 * shortcut (knob table_free_users) */
	int thread_users;
	int count;			/* mm_count: 1 for all users + 1 per CPU whose
					 * active_mm it is (lazy TLB references) */
	int slot;			/* index in kernel.mms while it is there */
	struct mm_struct *next_free;	/* freed mm_structs, reused by mm_alloc */
	mm_context_t context;		/* arch-owned: ASID, ctx_id, tlb_gen, cpumask */
	/* mm->tlb_flush_batched (rmap.c): ubc_flag=bool: 0/1; gen: pending
	 * generation in bits 0-14, flushed generation in bits 16-30 */
	uint32_t tlb_flush_batched;
	/* NUMA balancing (migrate.c): the pages the last numa_scan made
	 * PROT_NONE are on another node than the CPUs that fault on them
	 * (the hinting fault migrates them) */
	bool numa_misplaced;
};

struct lazyfree_rec;

/* struct tlbflush_unmap_batch (include/linux/sched.h, v5.1; rmap.c): the
 * reclaim task's deferred flush. x86: the mms whose CPUs need the flush
 * (arch_tlbbatch_add_mm); arm64 (v6.5+): the TLBIs issued without their DSB,
 * not yet known complete (a TLBI is complete only after the issuer's DSB). */
#define UBC_MAX 32
struct tlbflush_unmap_batch {
	bool flush_required;
	bool writable;			/* a dirty PTE was cleared */
	uint32_t nmm;
	struct mm_struct *mms[UBC_MAX];	/* x86: mms to flush */
	uint32_t nva;
	uint64_t va[UBC_MAX];		/* arm64: TLBI VALE1IS issued, no DSB yet */
	uint32_t asid[UBC_MAX];
};

/* ---- per-task kernel state (struct task_struct's share of it) ---- */
struct task {
	struct sim_thread thread;	/* the engine's thread; first member */
	struct mm_struct *mm;
	/* rwsem waiter */
	struct task *wait_next;
	bool wait_write;
	/* lock_page waiter (kernel.page_waiters) */
	struct task *pgwait_next;
	uint32_t pgwait_frame;
	bool wait_granted;		/* reader: lock granted by the waker */
	bool wait_woken;		/* writer: woken, will retry the lock */
	uint32_t *gather_pages;		/* mmu_gather page batch storage */
	/* inside tlb_finish_mmu's forced (nested) flush: observers read it
	 * when told of a flush (a field, not a hook call each way) */
	bool in_nested_finish;
	/* task_work: files whose final fput waits for the return to user
	 * mode (fput, filemap.c) */
	struct inode *fput_work;
	/* MADV_FREE's record of the pages it looked at (madvise.c); task-owned
	 * so a run stopped inside the call frees it */
	struct lazyfree_rec *lazyfree;
	size_t cap_lazyfree;
	/* dirty throttling (current->nr_dirtied, nr_dirtied_pause) */
	uint32_t nr_dirtied;
	uint32_t nr_dirtied_pause;
	/* tasklist_lock waiter (fork.c; wait_next, wait_write and wait_granted
	 * as for the rwsem): a reader at the queue head has added its bias */
	bool qr_counted;
	/* processes (fork.c, exit.c): set for tasks made by sys_fork only */
	thread_fn fork_fn;		/* the child's body; do_exit() follows it */
	uint64_t stack;			/* kernel stack VA (CONFIG_VMAP_STACK); 0: none */
	struct task *parent;		/* real_parent; NULL: none (init reaps it) */
	struct task *children, *children_tail;	/* ->children, in fork order */
	struct task *sibling;
	int exit_state;			/* 0, EXIT_ZOMBIE, EXIT_DEAD */
	bool wait_chld;			/* on its wait_chldexit queue (do_wait) */
	bool chld_woken;		/* a child's exit_notify woke it */
	bool chld_sleeping;		/* asleep in do_wait */
	/* reclaim (rmap.c): the per-task unmap batch, and the PTE table whose
	 * lock (the split PTL) this task holds in a path that synchronises with
	 * reclaim (0: none) */
	struct tlbflush_unmap_batch tlb_ubc;
	uint32_t ptl_table;
	uint32_t ptl_table2;		/* move_ptes' second PTE lock (mremap.c) */
};

/* task_struct->exit_state (include/linux/sched.h) */
#define EXIT_DEAD 0x10
#define EXIT_ZOMBIE 0x20

/* A FIFO of waiting tasks linked through wait_next (the lock wait lists of
 * rwsem, tasklist_lock and the vmalloc locks). */
static inline void q_append(struct task **head, struct task **tail, struct task *t)
{
	t->wait_next = NULL;
	if (*tail)
		(*tail)->wait_next = t;
	else
		*head = t;
	*tail = t;
}

static inline struct task *q_pop(struct task **head, struct task **tail)
{
	struct task *t = *head;
	*head = t->wait_next;
	if (!*head)
		*tail = NULL;
	t->wait_next = NULL;
	return t;
}

static inline struct task *task_of(struct sim_thread *t)
{
	return container_of(t, struct task, thread);
}
/* `current` */
static inline struct task *current_task(struct sim *s)
{
	return s->curr ? task_of(s->curr) : NULL;
}

/* ---- system calls and lock operations, as traced ---- */
enum mm_syscall { SYS_MMAP, SYS_MUNMAP, SYS_MADVISE_DONTNEED, SYS_MADVISE_FREE, SYS_MPROTECT,
		  SYS_CLEAR_REFS, SYS_MSYNC, SYS_FORK, SYS_MREMAP, SYS_FTRUNCATE, SYS_NUMA_SCAN,
		  SYS_UFFD_WP, SYS_MIGRATE_VMA, SYS_DRIVER_UNMAP, SYS_MADVISE_HUGEPAGE,
		  SYS_SPLIT_HUGE_PMD, SYS_COUNT };
const char *mm_syscall_name(enum mm_syscall c);	/* "munmap", "madvise(MADV_DONTNEED)" */
enum lock_op { LOCK_DOWN_READ = 1, LOCK_UP_READ, LOCK_DOWN_WRITE, LOCK_UP_WRITE,
	       LOCK_DOWNGRADE_WRITE, LOCK_OP_END };
const char *lock_op_name(enum lock_op op);

/* A page MADV_FREE looked at (madvise_free_pte_range), for observers. */
struct lazyfree_rec {
	uint64_t va;
	uint32_t frame;
	uint64_t cookie;		/* what mm_hooks.lazyfree_seen returned */
};

/* Kernel events an observer may subscribe to (all optional). */
struct mm_hooks {
	/* a syscall that unmaps or zaps entered the kernel; the cookie comes
	 * back with range_unmapped */
	uint64_t (*syscall_enter)(void *ctx, enum mm_syscall call);
	/* munmap / madvise(MADV_DONTNEED) of [start, end) is about to return;
	 * or mprotect (call SYS_MPROTECT), a soft-dirty clear_refs (call
	 * SYS_CLEAR_REFS, the whole address space) or fork (SYS_FORK, the
	 * parent's private VMAs): no CPU may still write through a cached entry
	 * where the PTE is now read-only */
	void (*range_unmapped)(void *ctx, struct mm_struct *mm, uint64_t start, uint64_t end,
			       enum mm_syscall call, uint64_t cookie);
	/* a PTE now maps data frame f (dirty: writable and dirty) */
	void (*page_mapped)(void *ctx, uint32_t f, bool dirty);
	/* the fault path made the PTE of frame f dirty */
	void (*page_dirtied)(void *ctx, uint32_t f);
	/* a page table was unlinked from its parent (free_pgd_range) */
	void (*table_unlinked)(void *ctx, uint32_t table);
	/* page tables, flushed, are handed to RCU for freeing */
	void (*tables_to_rcu)(void *ctx, const uint32_t *tables, uint32_t n);
	/* MADV_FREE looked at the page of frame f; returns its cookie */
	uint64_t (*lazyfree_seen)(void *ctx, uint32_t f);
	/* MADV_FREE returned; these are the pages it looked at */
	void (*lazyfree_done)(void *ctx, struct mm_struct *mm, const struct lazyfree_rec *r,
			      uint32_t n);
	/* a user access by the current task faulted; live_pte is what the
	 * kernel sees for va */
	void (*user_fault)(void *ctx, int cpu, uint64_t va, pte_t live_pte);
	/* writeback made the page of frame f clean and write-protected every
	 * PTE mapping it (page_mkclean, clear_page_dirty_for_io) */
	void (*page_cleaned)(void *ctx, uint32_t f);
	/* a soft-dirty clear_refs returned and the PTE of va (frame f) has no
	 * soft-dirty bit: a pagemap read now reports the page clean */
	void (*soft_dirty_clean)(void *ctx, uint64_t va, uint32_t f);
	/* KSM compared the page of frame f (pages_identical) after write-
	 * protecting it: a write that reaches f from now on is not in what
	 * KSM merged (ksm.c) */
	void (*ksm_compared)(void *ctx, uint32_t f);
	/* replace_page() mapped the KSM page kpage where page was: the merge of
	 * the two compared pages is done */
	void (*ksm_replaced)(void *ctx, uint32_t page, uint32_t kpage);
	/* KSM's write_protect_page() flushes the PTE of frame f (in) or has
	 * flushed it: the kernel's PTE is cleared meanwhile (ptep_clear_flush,
	 * under the PTE lock), the model's already read-only (ksm.c) */
	void (*ksm_clearing)(void *ctx, uint32_t f, bool in);
	/* a kernel PTE for va is about to map frame f (vmalloc, KASAN shadow) */
	void (*kernel_mapped)(void *ctx, uint64_t va, uint32_t f);
	/* the kernel PTE of va was cleared (no flush yet) */
	void (*kernel_unmapped)(void *ctx, uint64_t va);
	/* a page the kernel mapped is freed before the flush of its VA: the
	 * tolerated windows W1 (vfree's pages) and W2 (a released shadow page) */
	void (*kernel_page_freed)(void *ctx, uint32_t f, bool shadow);
	/* fork's copy_page_range gave the child a PTE to data frame f: an
	 * anonymous page is now mapped by more than one mm */
	void (*page_dup)(void *ctx, uint32_t f);
	/* reclaim cleared the clean PTE of lazyfree frame f at va and will
	 * discard the page (try_to_unmap_one's MADV_FREE check) */
	void (*lazyfree_discard)(void *ctx, struct mm_struct *mm, uint64_t va, uint32_t f);
	/* migration (migrate_page_copy) or a COW (wp_page_copy) copied frame
	 * old into frame nf, which replaces it: a write into old
	 * through a stale writable entry from now on is lost (I3) */
	void (*page_copied)(void *ctx, uint32_t old, uint32_t nf, bool migration);
	/* device migration (migrate_device.c): migrate_vma_collect_pmd replaced
	 * the PTE `old` of frame f with a migration entry (the page's dirty
	 * flag, carried or not, is in its pgflags by now) */
	void (*migrate_unmapped)(void *ctx, uint32_t f, pte_t old);
	/* the driver copied page src to dst between migrate_vma_setup and
	 * migrate_vma_pages: the I3 point of migration */
	void (*migrate_copied)(void *ctx, uint64_t va, uint32_t src, uint32_t dst);
	/* a GUP-fast walk on cpu (IRQs off, no lock) read the level-`depth`
	 * table frame `table` for va after it was freed (khugepaged.c) */
	void (*gup_fast_freed)(void *ctx, int cpu, uint64_t va, uint32_t table, int depth);
};

/* ---- work items (workqueue.c) ---- */
struct work_struct {
	void (*fn)(struct sim *s, struct work_struct *w);
	struct work_struct *next;
	bool pending;			/* queued, not yet started */
	bool running;
	int cpu;			/* where it runs (while running) */
	struct sim_thread *flusher;	/* waiting in flush_work() */
};
struct worker_pool;
/* queue_work_on(cpu, system_wq, w); false if w was already pending */
bool schedule_work_on(struct sim *s, int cpu, struct work_struct *w);
/* on the current CPU (CPU 0 from an event callback) */
bool schedule_work(struct sim *s, struct work_struct *w);
void flush_work(struct sim *s, struct work_struct *w);

/* ---- the kernel address space: vmalloc and KASAN (vmalloc.c, kasan.c) ---- */

/* Kernel virtual addresses (init_mm's page tables, global TLB entries). */
struct kva_layout {
	uint64_t vmalloc_start, vmalloc_end;	/* VMALLOC_START / VMALLOC_END */
	uint64_t kasan_shadow_offset;		/* KASAN_SHADOW_OFFSET (generic) */
};
/* ---- the kernel ---- */
struct vma_pool {
	struct vm_area_struct *free;
	struct inode *inode_free;
};

struct kernel {
	struct machine mach;		/* first member: machine_of / hw_of work on it */
	struct task *page_waiters;	/* tasks asleep in lock_page (any page) */
	struct mm_struct **mms;		/* every mm ever created (stable objects) */
	int nr_mms;
	size_t cap_mms;
	struct vma_pool pool;
	struct mmu_table_batch *tbatch_free;
	uint32_t rwsem_waiters[RWSEM_KINDS];	/* sleeping waiters, all semaphores
						 * of a kind (trace counters) */
	/* every kernel object (VMA, shmem object, table batch) ever allocated,
	 * owned here so a run stopped mid-syscall (check mode) frees cleanly */
	void **objs;
	uint32_t nobjs;
	size_t cap_objs;
	struct inode **all_inodes;	/* every inode ever created (owns their arrays) */
	uint32_t ninodes;
	size_t cap_inodes;
	uint64_t nr_file_dirty;		/* NR_FILE_DIRTY: dirty pages of accounted files */
	/* per CPU (mm/page-writeback.c): bdp_ratelimits, dirty_throttle_leaks */
	uint32_t *bdp_ratelimits;
	uint32_t *dirty_throttle_leaks;
	bool dirty_exceeded;		/* wb->dirty_exceeded */
	/* ZERO_PAGE: the shared zeroed page an anonymous read fault maps
	 * read-only (allocated on first use; NO_FRAME until then). Never freed,
	 * never counted as mapped (vm_normal_page() is NULL for it). */
	uint32_t zero_frame;
	/* get_user_pages references held by scenario tasks (gup_pin):
	 * frames, NO_FRAME for a free slot */
#define GUP_PINS 16
	uint32_t pins[GUP_PINS];
	/* CPUs inside a GUP-fast walk (IRQs off; khugepaged.c): an RCU grace
	 * period cannot end, and tlb_remove_table_sync_one's IPI is not taken,
	 * until they are out (mmu_gather.c) */
	int gup_fast_walkers;
	struct worker_pool *wq_pools;	/* per CPU, on first use */
	struct kva_layout kva;
	bool kasan;			/* CONFIG_KASAN + KASAN_VMALLOC (a workload's kernel) */
	uint32_t init_pgd;		/* init_mm's root table; NO_FRAME until first used */
	struct vmap *vmap;		/* the vmalloc allocator (vmalloc.c), on first use */
	/* processes (fork.c, exit.c) */
	struct qrwlock tasklist_lock;
	uint64_t *cached_stacks;	/* per CPU, NR_CACHED_STACKS VAs (0: empty) */
	struct mm_struct **active_mm;	/* per CPU: the mm its page tables belong to */
	struct mm_struct *mm_free;	/* freed mm_structs */
	int next_mm_id;
	int fork_next_cpu;		/* placement of new tasks: where the scan starts */
	struct {
		uint64_t forks, execs, exits, reaped;
		uint64_t from_cache, vmalloced;		/* alloc_thread_stack_node */
		uint64_t to_cache, to_rcu;		/* free_thread_stack */
		uint64_t rcu_to_cache, rcu_vfree;	/* thread_stack_free_rcu */
	} proc;
	int nr_reclaim_ptl;		/* PTE-table locks reclaim holds now (rmap.c) */
	struct pfn_dev *pfn_devs;	/* drivers' PFN mappings (pfnmap.c), newest first */
	/* failure injection: the next allocations of an mmu_gather table
	 * batch page that fail (scenario fail_table_batch(N); -D
	 * table_batch_fail=1 makes every one fail) */
	int64_t table_batch_fail;
	const struct mm_hooks *hooks;
	void *hooks_ctx;
};

/* syscall entry + exit: entry_SYSCALL_64 (arch/x86/entry/entry_64.S) and
 * el0_svc (arch/arm64/kernel/entry.S), v5.1; with page-table isolation (x86
 * PTI since v4.15, arm64 KPTI since v4.16: kpti=1) the trampoline's CR3 or
 * TTBR switches on both ways cost pti_syscall_ns more */
static inline uint64_t syscall_cost(struct sim *s)
{
	return (uint64_t)P(s, P_syscall_ns) + (P(s, P_kpti) ? (uint64_t)P(s, P_pti_syscall_ns) : 0);
}

static inline struct kernel *kernel_of(struct sim *s)
{
	return container_of(machine_of(s), struct kernel, mach);
}

/* kernel.c */
int kernel_init(struct kernel *k, const struct tlbsim_profile *prof, int nr_cpus,
		const int64_t *params, const struct tlbsim_policy *pol, uint64_t seed,
		struct sim_stack_pool *pool);
void kernel_destroy(struct kernel *k);
/* A new address space (mm_alloc + mm_init); NULL (and sim error) on failure. */
struct mm_struct *mm_alloc(struct sim *s);
/* A task (size >= sizeof(struct task): callers may embed it) running fn in
 * mm on cpu after start_delay ns; NULL (and sim error) on failure. */
struct task *task_create(struct sim *s, size_t size, thread_fn fn, void *arg,
			 struct mm_struct *mm, int cpu, uint64_t start_delay);
/* A zeroed kernel object owned by the kernel (freed by kernel_destroy). On
 * host memory exhaustion the run stops with TLBSIM_ENOMEM (sim_fatal). */
void *kernel_obj_alloc(struct sim *s, size_t size);
/* The same, not zeroed: for a large buffer its user fills before it reads
 * (calloc's memset of it is host work the simulation does not need). */
void *kernel_obj_alloc_uninit(struct sim *s, size_t size);
/* frame_alloc() for kernel callers: never NO_FRAME (the run stops instead). */
uint32_t alloc_frame(struct sim *s, enum frame_state st, int depth);
/* Make mm the active_mm of the current CPU: switch_mm() to it and move the
 * CPU's lazy reference (activate_mm of exec, kernel/sched/core.c's
 * context_switch bookkeeping). */
void activate_mm(struct sim *s, struct mm_struct *mm);

/* ---- entry points used by workloads (simulated syscalls) ---- */
#define TLBSIM_MAP_SHARED 0x01
#define TLBSIM_MAP_PRIVATE 0x02

uint64_t sys_mmap(struct sim *s, uint64_t hint, uint64_t len, int flags);
/* mmap(hint, len, PROT_READ|PROT_WRITE, flags, fd, pgoff << PAGE_SHIFT) of
 * an open file (its inode) */
uint64_t sys_mmap_file(struct sim *s, uint64_t hint, uint64_t len, int flags, struct inode *file,
		       uint64_t pgoff);
/* open(O_TMPFILE)-like: mkstemp + unlink + ftruncate(size) of a file on fs;
 * the returned inode holds the caller's open file reference */
struct inode *sys_tmpfile(struct sim *s, const struct fs_type *fs, uint64_t size);
/* close() of that reference */
void sys_close(struct sim *s, struct inode *file);
/* fsync(): write back the file's dirty pages (page_mkclean each) */
void sys_fsync(struct sim *s, struct inode *file);
/* msync(addr, len, flags) (msync.c, v5.1): flags TLBSIM_MS_ASYNC or
 * TLBSIM_MS_SYNC (MS_INVALIDATE is not modelled). 0, or -1: EINVAL (bad
 * flags, unaligned addr) or ENOMEM (a hole in the range) */
#define TLBSIM_MS_ASYNC 0x1
#define TLBSIM_MS_SYNC 0x4
int sys_msync(struct sim *s, uint64_t addr, uint64_t len, int flags);
/* sched_setaffinity(t, {cpu}): t moves to cpu (at once if it sleeps, else at
 * its next preemption point) */
void sys_sched_setaffinity(struct sim *s, struct task *t, int cpu);
int sys_munmap(struct sim *s, uint64_t addr, uint64_t len);
/* mmap.c: __do_munmap under mmap_sem (write); true if it downgraded */
bool do_munmap(struct sim *s, struct mm_struct *mm, uint64_t start, uint64_t end, bool downgrade);
struct vm_area_struct *copy_vma(struct sim *s, struct vm_area_struct *vma, uint64_t addr,
				uint64_t len, uint64_t pgoff, bool *need_rmap_locks);
uint64_t mremap_unmapped_area(struct sim *s, struct mm_struct *mm, uint64_t len);
/* mremap(addr, old_len, new_len, MREMAP_MAYMOVE [| MREMAP_FIXED, new_addr])
 * (mremap.c, v5.1): the new address, or TLBSIM_EINVAL_VA */
uint64_t sys_mremap(struct sim *s, uint64_t addr, uint64_t old_len, uint64_t new_len, bool fixed,
		    uint64_t new_addr);
/* the table at depth (0 = PGD) on addr's walk in mm, or NO_FRAME */
uint32_t mm_table_at(struct sim *s, struct mm_struct *mm, uint64_t addr, int depth);
int sys_madvise_dontneed(struct sim *s, uint64_t addr, uint64_t len);
int sys_madvise_free(struct sim *s, uint64_t addr, uint64_t len);
/* ksmd merging the pages mapped at addr1 and addr2 of the current task's
 * mm, whose contents it takes as identical (ksm.c): 0 merged, -1 not */
int ksm_merge(struct sim *s, uint64_t addr1, uint64_t addr2);
/* hugetlb.c: PMD sharing of hugetlbfs mappings */
uint32_t huge_pmd_share(struct sim *s, struct vm_area_struct *vma, uint64_t addr,
			uint32_t pud_table);
bool huge_pmd_unshare(struct sim *s, uint32_t pud_table, uint64_t idx);
void unmap_hugepage_range_locked(struct sim *s, struct mmu_gather *tlb,
				 struct vm_area_struct *vma, uint64_t start, uint64_t end);
/* memory.c: unmap_page_range() of a hugetlb VMA (unsharing; *force_flush
 * set when a PMD table was unshared) */
void unmap_page_range_hugetlb(struct sim *s, struct mmu_gather *tlb, struct vm_area_struct *vma,
			      uint64_t addr, uint64_t end, bool *force_flush);
/* fail_table_batch(N): the next n table batch page allocations fail */
void mmu_gather_fail_batches(struct sim *s, int64_t n);
/* write "type" to /proc/self/clear_refs (task_mmu.c); 0 or -1 (EINVAL) */
int sys_clear_refs(struct sim *s, int type);
/* mprotect(addr, len, prot) (mprotect.c, v5.1): prot is TLBSIM_PROT_READ,
 * optionally | TLBSIM_PROT_WRITE (PROT_NONE, PROT_EXEC and write-only are not
 * modelled: -1). 0, or -1 (EINVAL, ENOMEM for a hole in the range). */
#define TLBSIM_PROT_READ 0x1
#define TLBSIM_PROT_WRITE 0x2
int sys_mprotect(struct sim *s, uint64_t addr, uint64_t len, int prot);
/* NUMA balancing's scan (task_numa_work -> change_prot_numa, mprotect.c):
 * the PTEs of [addr, addr + len) made PROT_NONE; misplaced: the hinting
 * faults that follow migrate the pages. Pages made PROT_NONE, or -1. */
int64_t numa_scan(struct sim *s, uint64_t addr, uint64_t len, bool misplaced);
/* ioctl(UFFDIO_WRITEPROTECT) over [addr, addr + len) (mprotect.c): wp 1
 * protects, 0 resolves; the VMA is taken as registered for write-protect
 * (UFFDIO_REGISTER_MODE_WP). 0, or -1 (the range is not in one anonymous
 * VMA) */
int sys_uffd_writeprotect(struct sim *s, uint64_t addr, uint64_t len, bool wp);
/* get_user_pages(FOLL_GET) of the page at addr (migrate.c): a reference the
 * caller holds (an O_DIRECT buffer, vmsplice) until gup_unpin(handle).
 * A handle >= 0, or -1 (no page, or the pin table is full). */
int gup_pin(struct sim *s, uint64_t addr);
int gup_unpin(struct sim *s, int handle);
/* migrate.c: pte_accessible(mm, pte) (arch pgtable.h; knob pte_accessible) */
bool pte_accessible(struct sim *s, const struct mm_struct *mm, pte_t pte);
/* migrate_misplaced_page() for the anonymous page f mapped at addr by a
 * PROT_NONE PTE (do_numa_page, v5.14): 0 migrated, -1 not */
int migrate_misplaced_page(struct sim *s, struct vm_area_struct *vma, uint64_t addr, uint32_t f);
/* The live PTE slot for addr in mm, or NULL if a table is missing. */
pte_t *pte_lookup(struct sim *s, struct mm_struct *mm, uint64_t addr);
/* A user access by the current task; takes faults as needed (fault.c).
 * 0, or -1 for an access outside any VMA or one its protection refuses (a
 * write to a VMA without VM_WRITE): the SIGSEGV, which is not modelled
 * further - the caller decides (workloads fail the run). */
int user_access(struct sim *s, uint64_t va, bool write);
/* user_access() of n pages as one user-mode step (fault.c); 0, or -1 as user_access */
int user_access_many(struct sim *s, const uint64_t *va, int n, bool write);

/* rwsem (kernel/locking/rwsem.c, v5.1 semantics, see docs/design.md) */
/* The lock operations' uncontended paths are inline (rwsem.c has the
 * waits and wake-ups): each is the one step (lock_op_ns plus the count's
 * line transfer, mm/points.h YP_LOCK) and the test of the fast path. */
extern const struct sim_point tp_lock;
static inline void rwsem_step(struct sim *s, struct rw_semaphore *sem, enum lock_op op)
{
	sim_step_arg(s, &tp_lock, (uint64_t)P(s, P_lock_op_ns) + line_rmw(s, &sem->count), op,
		     sem->kind);
}
void down_write_wait(struct sim *s, struct rw_semaphore *sem);
void up_write_wake(struct sim *s, struct rw_semaphore *sem);
void down_read(struct sim *s, struct rw_semaphore *sem);
void up_read(struct sim *s, struct rw_semaphore *sem);
/* down_write() (kernel/locking/rwsem.c and rwsem-xadd.c, v5.1: the fast path,
 * else rwsem_down_write_failed in rwsem.c's down_write_wait) */
static inline void down_write(struct sim *s, struct rw_semaphore *sem)
{
	rwsem_step(s, sem, LOCK_DOWN_WRITE);
	if (!sem->writer && sem->readers == 0 && !sem->spin_head)
		sem->writer = true;		/* fast path, or an unqueued steal */
	else
		down_write_wait(s, sem);
}
/* up_write() (kernel/locking/rwsem.c and rwsem-xadd.c, v5.1): a spinning
 * writer takes the lock first; otherwise wake the queue front (rwsem_wake) */
static inline void up_write(struct sim *s, struct rw_semaphore *sem)
{
	SIM_BUG_ON(s, !sem->writer);
	rwsem_step(s, sem, LOCK_UP_WRITE);
	sem->writer = false;
	if (sem->spin_head || sem->wait_head)
		up_write_wake(s, sem);
}
bool down_write_trylock(struct sim *s, struct rw_semaphore *sem);
void downgrade_write(struct sim *s, struct rw_semaphore *sem);

/* mmu_gather (mm/mmu_gather.c, include/asm-generic/tlb.h, v5.1) */
void tlb_gather_mmu(struct sim *s, struct mmu_gather *tlb, struct mm_struct *mm,
		    uint64_t start, uint64_t end);
void tlb_finish_mmu(struct sim *s, struct mmu_gather *tlb, uint64_t start, uint64_t end);
bool __tlb_remove_page(struct sim *s, struct mmu_gather *tlb, uint32_t frame);
void pte_free_tlb(struct sim *s, struct mmu_gather *tlb, uint32_t table, uint64_t address);
void pmd_free_tlb(struct sim *s, struct mmu_gather *tlb, uint32_t table, uint64_t address);
void pud_free_tlb(struct sim *s, struct mmu_gather *tlb, uint32_t table, uint64_t address);
void tlb_flush_mmu_tlbonly(struct sim *s, struct mmu_gather *tlb);
void tlb_flush_mmu_free(struct sim *s, struct mmu_gather *tlb);
void tlb_flush_rmaps(struct sim *s, struct mmu_gather *tlb);
void tlb_flush_mmu(struct sim *s, struct mmu_gather *tlb);
void tlb_start_vma(struct sim *s, struct mmu_gather *tlb, struct vm_area_struct *vma);
void tlb_end_vma(struct sim *s, struct mmu_gather *tlb, struct vm_area_struct *vma);
/* What tlb_finish_mmu does to the gather when mm_tlb_flush_nested() (the
 * `nested` knob; not a kernel function) */
void tlbsim_nested_policy(struct sim *s, struct mmu_gather *tlb, uint64_t start, uint64_t end);
static inline bool mm_tlb_flush_nested(const struct mm_struct *mm)
{
	return mm->tlb_flush_pending > 1;
}

/* memory.c */
void zap_page_range(struct sim *s, struct vm_area_struct *vma, uint64_t start, uint64_t size);
void unmap_vmas(struct sim *s, struct mmu_gather *tlb, struct vm_area_struct **vmas, int n,
		uint64_t start, uint64_t end);
void unmap_single_vma(struct sim *s, struct mmu_gather *tlb, struct vm_area_struct *vma,
		      uint64_t start, uint64_t end);
void free_pgd_range(struct sim *s, struct mmu_gather *tlb, uint64_t addr, uint64_t end,
		    uint64_t floor, uint64_t ceiling);
void free_pgtables(struct sim *s, struct mmu_gather *tlb, struct vm_area_struct **vmas, int n,
		   uint64_t floor, uint64_t ceiling);
/* set_pte_at() / pmd_populate() / pmd_clear() and friends (arch pgtable.h):
 * store a descriptor, keeping the table's occupancy count and bitmap.
 * --memory-model tso: a change of a present entry is x86's locked
 * read-modify-write of it (ptep_get_and_clear: XCHG; ptep_set_wrprotect /
 * ptep_test_and_clear_young: LOCK BTR) and drains the writing CPU's store
 * buffer before it is visible (tso.c) */
static inline void set_entry(struct sim *s, uint32_t table, uint64_t idx, pte_t val)
{
	struct hw *hw = hw_of(s);
	struct frame *fr = frame_of(hw, table);
	uint64_t *map = table_used_map(&hw->geom, fr->table);
	pte_t old = fr->table[idx];
	if (__builtin_expect(machine_of(s)->tso != NULL, 0) && s->curr && pte_present(old))
		tso_drain_all(s, s->curr->cpu, TSO_LOCKED);
	if (pte_none(old) && !pte_none(val)) {
		fr->nr_used++;
		map[idx / 64] |= 1ull << (idx % 64);
	} else if (!pte_none(old) && pte_none(val)) {
		fr->nr_used--;
		map[idx / 64] &= ~(1ull << (idx % 64));
	}
	fr->table[idx] = val;
}


/* fault.c: fault flags and results (include/linux/mm.h, mm_types.h, v5.8) */
#define FAULT_FLAG_WRITE 0x01u
#define FAULT_FLAG_MKWRITE 0x02u
#define FAULT_FLAG_ALLOW_RETRY 0x04u
#define FAULT_FLAG_KILLABLE 0x10u
#define FAULT_FLAG_TRIED 0x20u
#define FAULT_FLAG_USER 0x40u
#define FAULT_FLAG_DEFAULT (FAULT_FLAG_ALLOW_RETRY | FAULT_FLAG_KILLABLE)
typedef unsigned vm_fault_t;
#define VM_FAULT_SIGBUS 0x0002u
#define VM_FAULT_WRITE 0x0008u
#define VM_FAULT_NOPAGE 0x0100u
#define VM_FAULT_RETRY 0x0400u
#define VM_FAULT_FALLBACK 0x0800u	/* a huge PMD fault: split, take the PTE path */
#define VM_FAULT_COMPLETED 0x4000u	/* v6.0 */
vm_fault_t handle_mm_fault(struct sim *s, struct vm_area_struct *vma, uint64_t address,
			   unsigned flags);

/* VMA helpers (mmap.c) */
struct vm_area_struct *find_vma(struct mm_struct *mm, uint64_t addr);
int vma_index(struct mm_struct *mm, uint64_t addr);
/* __split_vma() (mm/mmap.c, v5.1): split mm->vmas[i] at addr; the new VMA
 * (index i + 1) is the upper part */
void split_vma(struct sim *s, struct mm_struct *mm, int i, uint64_t addr);
/* vma_merge() as mprotect_fixup() gets it (mm/mmap.c, v5.1), for file-backed
 * VMAs (shared anonymous ones are shmem files) only: mm->vmas[i] merges with
 * the next and then the previous VMA when they are adjacent, have the same
 * flags and file and map contiguous file pages. Private anonymous VMAs are
 * never merged (no anon_vma in the model to tell which may). */
void vma_merge_file_neighbours(struct sim *s, struct mm_struct *mm, int i);

/* filemap.c: inodes and their page cache */
struct inode *inode_new(struct sim *s, const struct fs_type *fs, uint64_t size);
void iput(struct sim *s, struct inode *ino);	/* drop a reference; the last frees */
/* fput() (fs/file_table.c, v5.1): drop a file reference; the final one is
 * deferred (task_work_add) to the current task's return to user mode, where
 * task_work_run() does __fput: the inode's eviction and page frees. */
void fput(struct sim *s, struct inode *ino);
/* task_work_run() (kernel/task_work.c, v5.1): run the current task's
 * deferred final fputs (syscall exit, do_exit's exit_task_work). */
void task_work_run(struct sim *s);
/* The page cache frame at index, or NO_FRAME (find_get_page). */
uint32_t find_get_page(struct sim *s, struct inode *ino, uint64_t index);
/* Find or allocate (zeroed, clean) the page at index; charges the lookup or
 * the allocation. */
uint32_t filemap_getpage(struct sim *s, struct inode *ino, uint64_t index);
/* set_page_dirty(): true if the page went clean -> dirty now (accounted for
 * an accounting filesystem: account_page_dirtied) */
bool set_page_dirty(struct sim *s, struct inode *ino, uint32_t frame);
/* balance_dirty_pages_ratelimited(mapping) (mm/page-writeback.c) */
void balance_dirty_pages_ratelimited(struct sim *s, struct inode *ino);
/* page_mkclean() of one page: write-protect and clean every PTE mapping it,
 * flushing each (mm/rmap.c); then the page is clean */
void page_mkclean(struct sim *s, struct inode *ino, uint64_t index, uint32_t frame);
/* write back every dirty page of the file (a flusher's write_cache_pages) */
void writeback_inode(struct sim *s, struct inode *ino);
/* truncation (filemap.c): zap every mapping of the pages from index first
 * (unmap_mapping_range), then drop them from the page cache */
void unmap_mapping_range(struct sim *s, struct inode *ino, uint64_t first);
void truncate_inode_pages(struct sim *s, struct inode *ino, uint64_t first);
/* ftruncate(fd, size) (mmap.c): 0, or -1 */
int sys_ftruncate(struct sim *s, struct inode *file, uint64_t size);
/* write back the dirty pages of indexes first..last (write_cache_pages of a
 * range: __filemap_fdatawrite_range) */
void writeback_range(struct sim *s, struct inode *ino, uint64_t first, uint64_t last);
/* lock_page() / unlock_page() (mm/filemap.c): PG_locked as a sleeping lock */
void lock_page(struct sim *s, uint32_t f);
void unlock_page(struct sim *s, uint32_t f);
void i_mmap_insert(struct sim *s, struct inode *ino, struct vm_area_struct *vma);
void i_mmap_remove(struct inode *ino, struct vm_area_struct *vma);

/* THREAD_SIZE and THREAD_ALIGN of the kernel stacks (x86-64: 16 KiB, 32 KiB
 * with KASAN, aligned to THREAD_SIZE; arm64: the same sizes, aligned to
 * 2 x THREAD_SIZE with VMAP_STACK) */
uint64_t thread_size(struct sim *s);
uint64_t thread_align(struct sim *s);
/* A kernel access to va by the current CPU (through init_mm's tables, global
 * TLB entries); with KASAN every access checks the shadow byte first. */
void kernel_access(struct sim *s, uint64_t va, bool write);
/* __vmalloc_node_range(size, align, VMALLOC_START, VMALLOC_END): a mapped,
 * zeroed area of size bytes (plus the guard page); its address, or 0 when
 * the vmalloc space is exhausted (after the synchronous purge). */
uint64_t vmalloc_range(struct sim *s, uint64_t size, uint64_t align);
static inline uint64_t vmalloc(struct sim *s, uint64_t size)
{
	return vmalloc_range(s, size, 4096);
}
/* vfree(addr) (mm/vmalloc.c, v6.10): unmap without a flush, free the pages
 * now, put the area on the lazy list (may schedule the drain). */
void vfree(struct sim *s, uint64_t addr);
/* addr is the start of an area vmalloc returned and vfree has not freed */
bool vmalloc_busy(struct sim *s, uint64_t addr);
/* vfree_atomic(addr) from an interrupt/RCU callback on cpu: the vfree runs
 * later in a kworker of cpu (delayed_vfree_work). */
void vfree_atomic(struct sim *s, int cpu, uint64_t addr);
/* the synchronous purge of the allocation-failure path and of
 * vm_unmap_aliases (reclaim_and_purge_vmap_areas) */
void vmalloc_purge_sync(struct sim *s);
void vmalloc_destroy(struct kernel *k);

/* kernel page tables (kasan.c): map / unmap one page of init_mm (no flush) */
void kernel_map_page(struct sim *s, uint64_t va, uint32_t frame);
uint32_t kernel_unmap_page(struct sim *s, uint64_t va);
bool kernel_mapped(struct sim *s, uint64_t va);
/* KASAN vmalloc shadow (kasan.c) */
#define KASAN_VMALLOC_PAGE_RANGE 0x1u
#define KASAN_VMALLOC_TLB_FLUSH 0x2u
void kasan_populate_vmalloc(struct sim *s, uint64_t addr, uint64_t size);
void kasan_poison_vmalloc(struct sim *s, uint64_t start, uint64_t size);
unsigned kasan_release_vmalloc(struct sim *s, uint64_t start, uint64_t end, uint64_t free_start,
			       uint64_t free_end, unsigned flags);

/* The task's kernel entry (entry_SYSCALL_64 / el0_svc / the fault entry):
 * pt_regs are pushed at the top of its kernel stack. Only tasks made by
 * sys_fork have a modelled stack. */
static inline void kernel_entry(struct sim *s)
{
	struct task *t = s->curr ? task_of(s->curr) : NULL;
	if (t && t->stack)
		kernel_access(s, t->stack + thread_size(s) - 8, true);
}

/* ---- processes (fork.c, exit.c, mmap.c), v6.10 ---- */
/* tasklist_lock (kernel/locking/qrwlock.c, v6.10): read_lock with IRQs on;
 * write_lock_irq disables IRQs before it spins and write_unlock_irq enables
 * them after the unlock. Waiters spin (busy) in FIFO order; a waiting
 * writer blocks new readers. */
void read_lock(struct sim *s, struct qrwlock *l);
void read_unlock(struct sim *s, struct qrwlock *l);
void write_lock_irq(struct sim *s, struct qrwlock *l);
void write_unlock_irq(struct sim *s, struct qrwlock *l);
/* fork(): copy_process() of the current task: a task of `size` bytes (>=
 * sizeof(struct task); callers may embed it) with a kernel stack and a new
 * mm, running fn(arg) and then exiting (do_exit); cpu < 0: the kernel places
 * it (the least loaded CPU). NULL, with the run stopped, on failure. */
struct task *sys_fork(struct sim *s, size_t size, thread_fn fn, void *arg, int cpu);
/* execve(): the current task gets a new mm; the old one is released
 * (mmput: exit_mmap when it was the last user). */
void sys_execve(struct sim *s);
/* wait4(-1, NULL, 0, NULL): wait for a child to exit and reap it; the child,
 * or NULL when there is none (ECHILD). */
struct task *sys_wait4(struct sim *s);
/* do_exit() of the current task (a forked task calls it after its body). */
void do_exit(struct sim *s);
/* mmput() / mmdrop() (kernel/fork.c): drop a user / a reference */
void mmput(struct sim *s, struct mm_struct *mm);
void mmdrop(struct sim *s, struct mm_struct *mm);
/* tasklist_lock write section body: hold it tasklist_write_hold_ns (fork.c) */
void tasklist_write_section(struct sim *s);
/* put_task_stack() of a dead task, on the CPU it died on (fork.c) */
void put_task_stack(struct sim *s, struct task *tk);
/* exit_mmap() (mm/mmap.c, v6.10): the fullmm teardown of mm (mmap.c) */
void exit_mmap(struct sim *s, struct mm_struct *mm);
/* fork's copy of the address space (fork.c, mmap.c, memory.c): dup_mmap of
 * oldmm into the new mm; vm_area_dup + link of one VMA into mm; the PTEs of
 * src's range copied into dst (COW: both write-protected) */
void dup_mmap(struct sim *s, struct mm_struct *mm, struct mm_struct *oldmm);
struct vm_area_struct *vm_area_dup_link(struct sim *s, struct mm_struct *mm,
					const struct vm_area_struct *orig);
void copy_page_range(struct sim *s, struct vm_area_struct *dst, struct vm_area_struct *src);
/* KASAN-scaled first-principles kernel cost (ns x kasan_slowdown when on) */
static inline uint64_t kasan_cost(struct sim *s, int64_t ns)
{
	return (uint64_t)ns * (kernel_of(s)->kasan ? (uint64_t)P(s, P_kasan_slowdown) : 1u);
}

/* is_zero_pfn() */
static inline bool is_zero_frame(struct sim *s, uint32_t f)
{
	return f == kernel_of(s)->zero_frame;
}

/* shmem.c */
struct inode *shmem_zero_setup(struct sim *s, uint64_t size);

/* clear_page of frame f on the current CPU: zero_warm_4k_ns per 4 KiB when
 * the CPU cleared f recently enough for its lines to be cached
 * (frame_clear), else zero_4k_ns */
static inline uint64_t zero_page_cost(struct sim *s, uint32_t f)
{
	struct hw *hw = hw_of(s);
	bool warm = frame_clear(hw, f, cur_cpu(s), (uint32_t)P(s, P_zero_cache_kb));
	return (uint64_t)P(s, warm ? P_zero_warm_4k_ns : P_zero_4k_ns) * (hw->geom.page_size >> 12);
}

/* A page allocated and cleared (alloc_zeroed_user_highpage_movable,
 * include/linux/highmem.h, and pte_alloc_one's __GFP_ZERO, arch pgalloc.h,
 * v5.8): page_alloc_ns + extra_ns + the clear */
uint32_t alloc_zeroed_frame(struct sim *s, enum frame_state st, int depth, uint64_t extra_ns);


/* ---- reclaim with batched unmap flushes (rmap.c, vmscan.c-side) ---- */
/* pte_offset_map_lock()'s PTE-table lock as far as reclaim sees it: taken by
 * the paths that call flush_tlb_batched_pending (they never wait for each
 * other in the model; they wait for a reclaim task that holds it). */
void ptl_lock_wait(struct sim *s, uint32_t table);
static inline void ptl_lock(struct sim *s, uint32_t table)
{
	/* no reclaim task holds a PTL: nothing to wait for (ptl_lock_wait's
	 * loop would not run) */
	struct task *t = current_task(s);
	if (t && table && !kernel_of(s)->nr_reclaim_ptl)
		t->ptl_table = table;
	else
		ptl_lock_wait(s, table);
}
static inline void ptl_unlock(struct sim *s)
{
	struct task *t = current_task(s);
	if (t)
		t->ptl_table = 0;
}
/* the PTE lock as an rmap walker takes it (page_vma_mapped_walk: reclaim's
 * try_to_unmap_one, page_mkclean): waits for any holder, and the paths
 * that take ptl_lock wait for it */
void rmap_ptl_lock(struct sim *s, uint32_t table);
void rmap_ptl_unlock(struct sim *s);
/* move_ptes (mremap.c) holds the old table's lock with rmap_ptl_lock and the
 * new one's with these: both wait for any holder, zaps and walkers for them */
void rmap_ptl_lock2(struct sim *s, uint32_t table);
void rmap_ptl_unlock2(struct sim *s);
/* The PTE table mapping addr in mm, or 0 */
uint32_t pte_table_of(struct sim *s, struct mm_struct *mm, uint64_t addr);
/* flush_tlb_batched_pending(mm) (mm/rmap.c, v4.13+): under the PTL */
void flush_tlb_batched_pending_slow(struct sim *s, struct mm_struct *mm);
static inline void flush_tlb_batched_pending(struct sim *s, struct mm_struct *mm)
{
	/* a zero tlb_flush_batched owes nothing under either ubc_flag */
	if (mm->tlb_flush_batched)
		flush_tlb_batched_pending_slow(s, mm);
}
/* shrink_page_list() in two parts (rmap.c): unmap up to SWAP_CLUSTER_MAX
 * pages of [start, end) of mm (lazyfree pages; the flush may be deferred),
 * putting the pages to free on rl; then try_to_unmap_flush() and the frees */
#define SWAP_CLUSTER_MAX 32u
struct reclaim_list {
	uint32_t n;
	uint32_t pages[SWAP_CLUSTER_MAX];
};
uint32_t shrink_page_list_unmap(struct sim *s, struct mm_struct *mm, uint64_t start, uint64_t end,
				struct reclaim_list *rl);
void shrink_page_list_finish(struct sim *s, struct reclaim_list *rl);
/* The current task as a reclaim actor: shrink_page_list over the pages
 * mapped at [addr, addr+len) of its mm; the pages reclaimed. */
int64_t sys_reclaim(struct sim *s, uint64_t addr, uint64_t len);

/* ---- device memory (migrate_device.c, pfnmap.c) ---- */
/* is_migration_entry() of a PTE (include/linux/swapops.h) */
static inline bool is_migration_pte(pte_t p)
{
	return !pte_present(p) && (p & PTE_MIGRATION);
}
/* A device driver's migrate_vma_setup / copy / migrate_vma_pages /
 * migrate_vma_finalize of [addr, addr+len) of the current task's mm: the
 * pages migrated, or -1 (not one private anonymous VMA) */
int64_t sys_migrate_vma(struct sim *s, uint64_t addr, uint64_t len);
/* A driver's PFN mapping (pfnmap.c): frames it owns, no struct page
 * refcount for the mapping; the mapping's device file */
struct pfn_dev {
	struct pfn_dev *next;
	struct inode *file;		/* the device file (the driver holds a reference) */
	uint64_t addr;			/* where pfnmap() mapped it */
	uint32_t n;			/* frames */
	bool released;			/* driver_unmap() gave the frames back */
	uint32_t frames[];
};
/* mmap() of a device file whose mmap handler remap_pfn_range()s n fresh
 * driver frames (VM_PFNMAP; mixed: VM_MIXEDMAP); the address or
 * TLBSIM_EINVAL_VA */
uint64_t sys_pfnmap(struct sim *s, uint64_t hint, uint64_t len, bool mixed);
/* __pte_alloc() and friends (fault.c): the table at depth+1 under va's entry
 * of `table`, allocated if missing */
uint32_t __pte_alloc(struct sim *s, uint32_t table, int depth, uint64_t va);
/* do_mmap() -> mmap_region() (mm/mmap.c, v5.1) of a device file at pgoff 0
 * with extra vm_flags, calling the driver's mmap handler f_mmap under
 * mmap_sem (write) once the VMA is linked (mmap.c) */
uint64_t do_mmap_dev(struct sim *s, uint64_t hint, uint64_t len, int flags, struct inode *file,
		     uint32_t vm_flags, void (*f_mmap)(struct sim *, struct vm_area_struct *, void *),
		     void *arg);
/* The driver revokes the mapping made at addr: unmap_mapping_range() of its
 * device file, then gives the frames back to the page allocator. 0, or -1
 * (no such mapping, or already released). */
int driver_unmap(struct sim *s, uint64_t addr);


/* ---- THP collapse and GUP-fast (khugepaged.c) ---- */
/* collapse_pte_mapped_thp() of the huge-page-aligned range around addr of
 * the current task's mm, under mmap_lock for write (MADV_COLLAPSE of a file
 * range the page cache holds as one huge page), then retract_page_tables()
 * of the other mms mapping it; collapse_huge_page() for an anonymous VMA:
 * 1 when the caller's range was collapsed, 0 when it does not qualify */
int64_t sys_collapse(struct sim *s, uint64_t addr);
/* tlb_remove_table_sync_one() (v6.1): IPI every other CPU and wait */
void tlb_remove_table_sync_one(struct sim *s);
/* get_user_pages_fast() of the page at addr of the current task's mm (IRQs
 * off, lockless walk, re-check): the pages got, 0 or 1 */
int64_t gup_fast(struct sim *s, uint64_t addr);

/* PMD-mapped anonymous THP (huge_memory.c) */
uint64_t hpage_pmd_size(struct sim *s);
bool thp_vma_suitable(struct sim *s, const struct vm_area_struct *vma, uint64_t address);
vm_fault_t do_huge_pmd_anonymous_page(struct sim *s, struct vm_area_struct *vma,
				      uint32_t pmd_table, uint64_t address);
void zap_huge_pmd(struct sim *s, struct mmu_gather *tlb, struct vm_area_struct *vma,
		  uint32_t pmd_table, uint64_t addr);
bool __split_huge_pmd(struct sim *s, struct vm_area_struct *vma, uint32_t pmd_table,
		      uint64_t address);
int sys_madvise_hugepage(struct sim *s, uint64_t addr, uint64_t len);
int sys_split_huge_pmd(struct sim *s, uint64_t addr);
/* a fault on a present huge PMD entry of pmd_table (huge_memory.c):
 * do_huge_pmd_wp_page or huge_pmd_set_accessed; VM_FAULT_FALLBACK when the
 * entry was split and the PTE path is to handle the fault */
vm_fault_t huge_pmd_fault(struct sim *s, struct vm_area_struct *vma, uint32_t pmd_table,
			  uint64_t address, bool write);
/* the PMD table whose entry for addr is huge (present or PROT_NONE), or NO_FRAME */
uint32_t huge_pmd_table(struct sim *s, const struct vm_area_struct *vma, uint64_t addr);
/* change_huge_pmd() for mprotect and (prot_numa) the NUMA scan: the PTEs'
 * worth changed (HPAGE_PMD_NR) or 0 */
uint64_t change_huge_pmd(struct sim *s, struct vm_area_struct *vma, uint32_t pmd_table,
			 uint64_t addr, bool writable, bool prot_numa);
/* the NUMA scan's PROT_NONE entry of a present PTE or huge PMD (mprotect.c) */
pte_t pte_mkprotnone(const struct pt_format *fmt, pte_t pte);
/* copy_huge_pmd() (fork): false if the source entry is no longer huge */
bool copy_huge_pmd(struct sim *s, struct vm_area_struct *dst, struct vm_area_struct *src,
		   uint32_t dst_pmd_table, uint32_t src_pmd_table, uint64_t addr);
/* move_huge_pmd() (mremap): true if the huge entry moved */
bool move_huge_pmd(struct sim *s, struct vm_area_struct *vma, uint64_t old_addr,
		   uint64_t new_addr, uint64_t old_end, uint32_t old_pmd_table,
		   uint32_t new_pmd_table);
/* clear_refs on a huge PMD entry: 1 if it changed */
uint64_t clear_refs_huge_pmd(struct sim *s, struct vm_area_struct *vma, uint32_t pmd_table,
			     uint64_t addr, bool soft_dirty);
/* pte_modify() of the write permission (mprotect.c) and pte_wrprotect()
 * (memory.c), shared with the huge PMD paths */
pte_t pte_modify_prot(const struct pt_format *fmt, pte_t pte, bool writable,
		      bool dirty_accountable);
pte_t pte_wrprotect_fmt(const struct pt_format *fmt, pte_t pte);
/* split_huge_page() of the THP mapped at address (huge_memory.c): 1 split,
 * 0 no huge PMD entry there, -1 not splittable (a reference, the lock) */
int split_huge_page_at(struct sim *s, struct vm_area_struct *vma, uint64_t address);

#endif
