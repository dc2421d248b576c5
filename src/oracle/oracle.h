/*
 * oracle.h - the invariant checker (kernel-model 7 and 9.3).
 *
 * The oracle subscribes to the hardware, arch and mm hooks (hw_hooks,
 * arch_hooks, mm_hooks) and owns every invariant, every violation record, the
 * notes of the last flush each thread issued, and the livelock detector.
 * Nothing below it names it. It runs in every mode when attached: `run`
 * counts what it sees, `check` stops a schedule at the first violation it
 * wants.
 *
 * Invariants:
 *   I1           a freed frame (data page at free, page table at its
 *                hand-off to RCU) is still reachable from a TLB or walk cache
 *   I1-realized  an access or walk used an entry whose frame was freed/reused
 *   I2           munmap/madvise(DONTNEED) returned while a CPU still
 *                translates the range to an old frame; mprotect or fork
 *                (its COW write-protection) returned while a CPU can still
 *                write through a cached writable entry
 *   I3           a write went through a stale dirty entry into a page that
 *                MADV_FREE judged clean (PTE still clean, or cleared by
 *                reclaim's lazyfree discard), writeback cleaned, clear_refs
 *                cleared of soft-dirty, or KSM compared for a merge, or a
 *                device migration copied (or copied as clean a lazyfree
 *                page whose PTE was dirty)
 *   stale-walk   a walk used a walk-cache entry to a table already unlinked
 *                and flushed (waiting for RCU)
 *   livelock     the same CPU faults on the same VA with an unchanged PTE
 *                livelock_faults times in a row (I6)
 */
#ifndef TLBSIM_ORACLE_H
#define TLBSIM_ORACLE_H

#include <stdbool.h>
#include <stdint.h>

#include "mm/mm.h"

#define TLBSIM_INVARIANTS(X)                                                     \
	X(INV_I1, "I1", "freed frame reachable from a TLB or walk cache")        \
	X(INV_I1_REALIZED, "I1-realized", "access or walk used a freed frame")   \
	X(INV_I2, "I2", "translation survives munmap/madvise/mprotect/clear_refs/fork/mremap return") \
	X(INV_I3, "I3", "write through stale dirty entry into a clean page")     \
	X(INV_STALE_WALK, "stale-walk", "walk entry to an unlinked table used")  \
	X(INV_LIVELOCK, "livelock", "identical faults with no PTE change")       \
	X(INV_I5, "I5", "kernel VA re-mapped while a stale translation survives") \
	X(INV_I4A, "I4a", "stale translation observed only through a store-buffer reordering") \
	X(INV_LITMUS, "litmus", "a litmus outcome sequential consistency forbids")
enum inv_id {
#define X(e, n, d) e,
	TLBSIM_INVARIANTS(X)
#undef X
	INV_COUNT
};
const char *inv_name(int kind);
const char *inv_desc(int kind);
/* enum inv_id of a name ("I1", "stale-walk", ...), or -1 */
int inv_lookup(const char *name);
/* every invariant's name, "I1, I1-realized, ... or litmus", into buf */
void inv_names_list(char *buf, size_t len);

struct violation_rec {
	int kind;		/* enum inv_id, -1 = none */
	int cpu, tid;
	uint64_t va;
	bool has_va;		/* false: the invariant has no single address */
	uint32_t frame;
	uint64_t step, time;
	char entry[160];	/* the cached entry */
	char flush[240];	/* the flush that should have removed it */
	char text[512];
};

/* The last flush a thread issued, as reports describe it. */
struct flush_report {
	struct flush_note n;
	bool nested;		/* issued by a nested tlb_finish_mmu */
	uint64_t step;
};

/* Per-thread observer state. */
struct oracle_thread {
	struct flush_report last_flush;
	/* livelock detection */
	uint64_t last_fault_va;
	uint64_t last_fault_pte;
	uint32_t same_faults;
};

/* Per-frame observer state (chunked like the frame table). */
/* who copied a WATCH_COPIED page (the I3 texts) */
enum copy_by { COPY_BY_MIGRATION, COPY_BY_COW, COPY_BY_DEVICE };

struct oracle_frame {
	uint64_t unlink_epoch;	/* PGTABLE: epoch when unlinked */
	const mm_context_t *unlink_mm;	/* PGTABLE: the mm it was unlinked from
					 * (NULL: not known) */
	uint64_t map_epoch;	/* DATA: epoch when last mapped (I2) */
	uint64_t dirty_epoch;	/* DATA: epoch when a PTE last became dirty (I3) */
	const mm_context_t *map_ctx;	/* DATA: the mm context that mapped it;
					 * PGTABLE: the one it was unlinked from */
	uint64_t map_ctx_id;	/* ... and its ctx_id then (never reused) */
	bool ksm_stale;		/* DATA: written through a stale writable entry after
				 * KSM compared it, before its merge was done */
	uint8_t copy_by;	/* DATA: WATCH_COPIED by enum copy_by */
	uint32_t copy_to;	/* DATA: the frame it was copied to */
	bool ksm_merged;	/* DATA: compared by KSM and merged since */
	bool ksm_clearing;	/* DATA: KSM's write_protect_page flushes its PTE, which
				 * the kernel has cleared meanwhile (not an mprotect or
				 * clear_refs I2 matter: KSM's own flush removes it) */
	uint32_t kernel_gen;	/* DATA: frame gen + 1 while a kernel (vmalloc or
				 * shadow) page: I1 does not apply, I5/W1/W2 do */
	uint32_t discard_gen;	/* DATA: frame gen + 1 once reclaim discarded it as
				 * a clean lazyfree page (its PTE cleared: I3) */
	bool mig_pte_dirty;	/* DATA: device migration replaced a dirty PTE of it
				 * with a migration entry (not yet copied) */
};

struct oracle_fchunk;
struct oracle {
	struct sim *s;
	int want_kind;			/* stop the schedule only at this invariant (-1: any) */
	uint64_t map_epoch;		/* bumped at every data-page mapping and zap call */
	uint64_t unlink_epoch;		/* bumped whenever a page table is unlinked */
	struct oracle_fchunk **fchunks;	/* oracle.c */
	size_t nfchunks, cap_fchunks;
	uint64_t *psc_epoch;		/* per CPU: unlink_epoch at its last PSC flush */
	struct oracle_thread *th;	/* by thread id */
	size_t cap_th;
	struct violation_rec first;	/* the first wanted violation */
	/* tolerated windows seen: a kernel page freed while a CPU still caches
	 * a translation to it, before the flush that covers its VA (W1: vfree's
	 * pages; W2: a released KASAN shadow page) */
	uint64_t w1_windows, w2_windows;
	/* kernel VAs whose PTE was cleared and that no completed
	 * flush_tlb_kernel_range has covered since (open addressing; 0 empty,
	 * 1 deleted): I5 forbids mapping them again */
	uint64_t *kclr;
	uint32_t kclr_cap, kclr_n, kclr_used;
	/* the last write through a stale writable entry into a page KSM had
	 * compared but not yet merged (reported if replace_page commits) */
	int ksm_stale_cpu;
	uint64_t ksm_stale_va;
	uint32_t ksm_stale_frame;
	/* --memory-model tso: per CPU, a flush left it out through a stale read
	 * since its last paging-structure flush (its I1/I2 become I4a) */
	bool *reordered;
};

/* Subscribe o to every hook of the kernel k (want_kind: -1 = any). */
int oracle_attach(struct oracle *o, struct kernel *k, int want_kind);
void oracle_free(struct oracle *o);

/* Report a violation (also for tests that plant one). */
void oracle_violation(struct oracle *o, enum inv_id kind, int cpu, uint64_t va, bool has_va,
		      uint32_t frame, const char *entry, const char *fmt, ...)
	__attribute__((format(printf, 8, 9)));

/* The observer state of frame f (grown on demand). */
struct oracle_frame *oracle_frame(struct oracle *o, uint32_t f);

/* One line describing a flush note (reports). */
void describe_flush(const struct flush_report *f, char *buf, size_t len);

#endif
