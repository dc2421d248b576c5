/*
 * hw.h - the hardware model: physical frames, page-table formats, per-CPU TLBs
 * and walk caches, the MMU walk, and the invalidation primitives.
 *
 * The hardware works on struct hw alone: it knows frames, descriptors, caches
 * and tags, not processes or mm_structs (the walker takes a root table frame
 * and a tag). What differs between x86-64 and arm64 page tables is data, a
 * struct pt_format chosen at init. Observers (the invariant checker) see
 * hardware events through struct hw_hooks; with no hooks installed the cost
 * is one pointer test per event.
 *
 * Invariants
 *  - A frame is FREE, DATA or PGTABLE. Every allocation and every free bumps its
 *    generation number, so a cached reference (frame, gen) whose gen differs
 *    from the frame's is stale (the frame was freed or reused).
 *  - Frame descriptors live in one reserved address range that never moves:
 *    a struct frame pointer stays valid for the life of the hw (grow.h
 *    explains why that matters).
 *  - Page tables live in PGTABLE frames; a descriptor names the next frame.
 *    Descriptor bits are a neutral encoding (VALID, TABLE, WRITE, DIRTY, YOUNG,
 *    RDONLY, USER, GLOBAL + pfn); the geometry (levels, index bits, shifts) is
 *    exactly the architecture's: x86-64 4-level 4K, arm64 48-bit VA with 4K
 *    (4 levels), 16K (4 levels, 1-bit level 0) and 64K (3 levels).
 *  - frame.tlb_refs counts the TLB/walk-cache entries on all CPUs that hold
 *    the frame, so "is this frame still reachable from some cache" is O(1)
 *    when the answer is no.
 *  - Caches never hold an entry for an invalid descriptor; arm64 never caches
 *    a leaf with AF=0 (kernel-model 3.1); x86 caches dirty state separately.
 *  - Range invalidations cost O(min(entries cached, pages in range)) per CPU.
 */
#ifndef TLBSIM_HW_H
#define TLBSIM_HW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/sim.h"

/* built with AddressSanitizer (gcc or clang): large zeroed arrays come from
 * calloc (tcache.c), and recycled table buffers are checked clear (frame.c) */
#if defined(__SANITIZE_ADDRESS__)
#define HW_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HW_ASAN 1
#endif
#endif

typedef uint64_t pte_t;

#define PTE_VALID  (1ull << 0)
#define PTE_TABLE  (1ull << 1)	/* non-leaf descriptor */
#define PTE_WRITE  (1ull << 2)	/* x86 RW; arm64 PTE_WRITE (DBM) */
#define PTE_DIRTY  (1ull << 3)	/* x86 D; arm64 software PTE_DIRTY */
#define PTE_YOUNG  (1ull << 4)	/* x86 A; arm64 AF */
#define PTE_RDONLY (1ull << 5)	/* arm64 AP[2] (hardware read-only) */
#define PTE_USER   (1ull << 6)
#define PTE_GLOBAL (1ull << 7)
#define PTE_SOFT_DIRTY (1ull << 8)	/* x86 _PAGE_SOFT_DIRTY (a software bit) */
/* software PTEs with VALID clear, which the MMU faults on and never caches:
 * PROT_NONE kept by the kernel as a mapping (x86 _PAGE_PROTNONE, arm64
 * PTE_PROT_NONE: the kernel's pte_present() is true, pfn and the preserved
 * write bit kept), and a migration entry (a swap-type entry naming the page
 * being migrated) */
#define PTE_PROTNONE (1ull << 9)
#define PTE_UFFD_WP (1ull << 10)	/* x86 _PAGE_UFFD_WP, arm64 PTE_UFFD_WP (software) */
#define PTE_MIGRATION (1ull << 11)
/* a block (huge) descriptor at the PMD level: the walk stops there and the
 * entry maps the whole PMD-sized range (x86 PS bit in a PDE, Intel SDM 3A
 * 4.5; arm64 a level-2 block descriptor, bit[1] clear, Arm ARM D8.3). Above
 * the pfn field, so pte_pfn() is unchanged. */
#define PTE_HUGE (1ull << 44)
#define PTE_PFN_SHIFT 12
#define PTE_PFN_MASK 0xffffffffull
#define pte_pfn(p) ((uint32_t)(((p) >> PTE_PFN_SHIFT) & PTE_PFN_MASK))
#define pfn_pte(pfn, flags) (((pte_t)(pfn) << PTE_PFN_SHIFT) | (flags))
#define pte_present(p) (((p) & PTE_VALID) != 0)
#define pte_none(p) ((p) == 0)
/* pmd_trans_huge() of a PMD entry (v5.1): a block descriptor (PTE_HUGE) that
 * is present or PROT_NONE (the NUMA scan's change_huge_pmd; x86
 * pmd_present() and pmd_trans_huge() are true for _PAGE_PROTNONE|_PAGE_PSE,
 * arm64 pmd_present() for PTE_PROT_NONE). Every kernel walker that reads a
 * PMD entry tests this before taking the entry for a table pointer: the
 * pfn of such an entry is a data page. The MMU faults on a PROT_NONE one. */
#define pmd_trans_huge_entry(p) \
	(((p) & PTE_HUGE) != 0 && ((p) & (PTE_VALID | PTE_PROTNONE)) != 0)

#define NO_FRAME 0xffffffffu

enum frame_state { FRAME_FREE = 0, FRAME_DATA, FRAME_PGTABLE };

/* frame.watch bits: set by an observer, cleared by the hardware when the frame
 * is allocated; while any is set the hardware reports uses of the frame
 * (hw_hooks.watched_walk / watched_write). */
#define WATCH_RCU   0x1u	/* table handed to RCU after its flush (stale-walk) */
#define WATCH_CLEAN 0x2u	/* page judged clean by MADV_FREE or writeback (I3) */
#define WATCH_SOFTDIRTY 0x4u	/* page reported clean by soft-dirty tracking (I3) */
#define WATCH_KSM 0x8u		/* page compared by KSM after write-protection (I3) */
#define WATCH_COPIED 0x10u	/* page copied by migration (NUMA or device) or COW, the copy
				 * replacing it (I3) */

struct frame {
	uint8_t state;		/* enum frame_state */
	uint8_t depth;		/* PGTABLE: depth of the table (0 = root) */
	uint8_t watch;		/* WATCH_* bits, owned by the observer */
	uint8_t pgflags;	/* the kernel's page flags (struct page); cleared on
				 * allocation, never read by the hardware */
	uint16_t zero_cpu;	/* 1 + the CPU that last cleared the frame, 0 = none */
	uint32_t gen;		/* bumped on every alloc and free */
	uint32_t refcount;	/* DATA: references (page cache, mappings) */
	uint32_t tlb_refs;	/* cache entries on all CPUs holding this frame */
	uint32_t nr_used;	/* PGTABLE: non-none descriptors */
	uint32_t next_free;
	uint32_t zero_stamp;	/* zero_cpu's zeroed_kb right after that clear */
	pte_t *table;		/* PGTABLE: descriptors (ptrs_per_table entries) */
};

/*
 * What differs between the two page-table formats. The kernel's per-arch
 * pgtable.h helpers (pte_mkdirty, pte_mkclean, ...) and the MMU's fill and
 * permission rules read these flags; nothing else branches on the arch.
 */
struct pt_format {
	const char *name;
	/* x86: the walker sets A (and D on a write) in the PTE; write permission
	 * is the RW bit; a cached entry without D is re-walked on a write */
	bool hw_sets_ad;
	/* arm64: AF=0 raises an access-flag fault and is never cached; hardware
	 * write permission is the inverse RDONLY bit (AP[2]), PTE_WRITE is the
	 * DBM/software write bit */
	bool af_fault;
	bool rdonly;
	/* x86: a page fault drops the faulting VA's TLB and paging-structure
	 * entries (SDM 3A 4.10.4.1) */
	bool fault_flushes_va;
	/* x86 CONFIG_MEM_SOFT_DIRTY: pte_mkdirty() also sets the soft-dirty
	 * bit, which /proc/PID/clear_refs clears; arm64 has no soft-dirty
	 * tracking (no CONFIG_HAVE_ARCH_SOFT_DIRTY) */
	bool soft_dirty;
	uint64_t task_size;	/* TASK_SIZE of the 48-bit user VA */
};
extern const struct pt_format pt_format_x86_64;
extern const struct pt_format pt_format_arm64;

/* pgtable.h helpers (arch/{x86,arm64}/include/asm/pgtable.h) over the format */
static inline pte_t fmt_pte_mkdirty(const struct pt_format *f, pte_t p)
{
	p |= PTE_DIRTY | (f->soft_dirty ? PTE_SOFT_DIRTY : 0);
	return f->rdonly ? p & ~PTE_RDONLY : p;
}
static inline pte_t fmt_pte_mkclean(const struct pt_format *f, pte_t p)
{
	p &= ~PTE_DIRTY;
	return f->rdonly ? p | PTE_RDONLY : p;
}
/* clean from reclaim's point of view: no dirty bit, and on arm64 not
 * hardware-writable (a DBM-writable entry is dirty) */
static inline bool fmt_pte_clean(const struct pt_format *f, pte_t p)
{
	return !(p & PTE_DIRTY) && (!f->rdonly || (p & PTE_RDONLY));
}

/* Page-table geometry. depth 0 = top level; depth levels-1 = PTE level. */
struct pt_geom {
	int levels;
	int page_shift;
	int shift[8];		/* VA shift of the entries at each depth */
	int bits[8];		/* index bits at each depth */
	uint64_t idx_mask[8];	/* (1 << bits[d]) - 1, for pt_index */
	/* kernel names: *_SHIFT of folded levels equal the next level up */
	int pmd_shift, pud_shift, p4d_shift, pgdir_shift;
	int depth_pmd, depth_pud;	/* depth of the PMD/PUD table, -1 if folded */
	uint64_t page_size;
	uint64_t ptrs_per_pte;
	uint64_t task_size;
};

void pt_geom_init(struct pt_geom *g, int page_shift, uint64_t task_size);
static inline uint64_t pt_index(const struct pt_geom *g, int depth, uint64_t va)
{
	return (va >> g->shift[depth]) & g->idx_mask[depth];
}

/* A table buffer holds ptrs_per_pte descriptors followed by a bitmap of the
 * non-none ones, so sparse tables are scanned by set bit, not by slot. */
static inline uint64_t *table_used_map(const struct pt_geom *g, pte_t *table)
{
	return (uint64_t *)(table + g->ptrs_per_pte);
}
/* First non-none index in [from, to) of a table, or `to`. */
static inline uint64_t table_next_used(const struct pt_geom *g, pte_t *table, uint64_t from,
				       uint64_t to)
{
	const uint64_t *map = table_used_map(g, table);
	while (from < to) {
		uint64_t w = map[from / 64] >> (from % 64);
		if (w)
			return from + (uint64_t)__builtin_ctzll(w) < to ? from + (uint64_t)__builtin_ctzll(w)
									 : to;
		from = (from / 64 + 1) * 64;
	}
	return to;
}

/* ---- translation caches (TLB and walk cache share one structure) ---- */
#define TC_TAG_GLOBAL 0xffffffffu
/* tc_entry.perm bit of a leaf TLB entry filled from a block (PTE_HUGE)
 * descriptor: depth is the PMD table's (levels-2) and key the first page
 * number of the block (VA >> PAGE_SHIFT, block-aligned), so the entry sits
 * in the block's address region and filter slot of that page; it
 * translates every page of the block (PTE_VALID's bit: perm never holds it) */
#define TC_BLOCK 0x01u

struct tc_entry {
	uint64_t key;		/* va >> shift[depth] */
	uint32_t tag;		/* ASID / PCID, or TC_TAG_GLOBAL */
	uint32_t frame;		/* leaf: data frame; walk: next-level table frame */
	uint32_t gen;		/* frame generation when filled */
	uint32_t stamp;		/* LRU stamp */
	uint32_t dense;		/* index in tcache.dense */
	uint8_t valid;
	uint8_t depth;		/* leaf: levels-1; walk entry at depth d -> table at d+1 */
	uint8_t perm;		/* leaf: PTE_WRITE | PTE_DIRTY | PTE_RDONLY copy, and
				 * TC_BLOCK for a block entry */
	uint8_t pad;
};

struct tcache {
	struct tc_entry *e;
	uint32_t sets, ways;
	uint32_t *dense;	/* indices of valid entries, unordered */
	uint32_t ndense;
	uint32_t clock;
	/* optional: a bit kept set while the cache holds any entry (a CPU's
	 * bit in hw.tlb_busy), so scans over CPUs can skip empty TLBs */
	uint64_t *busy_word;
	uint64_t busy_bit;
	/* optional: the CPU's word in row 0 of its kind's per-tag CPU bitmap
	 * (hw.tlb_tagcpus / hw.wc_tagcpus); the bit of row h (stride
	 * tag_stride words) is kept set while tagcnt[h] != 0, so a broadcast
	 * invalidation of one tag visits only the CPUs that hold some of it */
	uint64_t *tag_word;
	uint32_t tag_stride;
	/* optional (leaf TLBs with a filter): the CPU's word in row 0 of
	 * hw.tlb_slotcpus; the bit of row k (stride tag_stride) is kept set
	 * while filt[k] != 0 */
	uint64_t *slot_word;
	/* optional (leaf TLBs): a counting filter of the (key, tag) pairs held,
	 * so a by-address invalidation skips a CPU without touching its sets
	 * (a broadcast TLBI visits every CPU). filt[tc_filt_slot()] counts the
	 * valid entries hashing there, 8 slots per entry; 0 means none is held.
	 * A counter that reaches 255 sticks there (always "maybe"). */
	uint8_t *filt;
	uint32_t filt_mask;
	/* entries held per tag hash (tag & (TC_TAGCNT - 1)), exact: an
	 * invalidation of one ASID/PCID skips a cache that holds none of it */
	uint32_t tagcnt[64];
	/* optional (leaf TLBs): the CPU's word in row 0 of hw.tlb_regcpus; the
	 * bit of row r (stride tag_stride) is kept set while regcnt[r] != 0 */
	uint64_t *reg_word;
	/* entries held per address region hash (tc_region()), exact */
	uint32_t regcnt[64];
	/* leaf TLBs: 1 once a block (TC_BLOCK) entry was filled, and from
	 * then on (sticky, so tc_fill and tc_remove do not count); 0 keeps
	 * every lookup and invalidation on its 4K-only path */
	uint32_t nblock;
	/* 1 once a filter counter reached 255 (it sticks): the filter and the
	 * slot bitmap are then cleared in full when the arrays are kept for
	 * another simulation (hw_destroy) */
	uint32_t filt_sat;
};
#define TC_TAGCNT 64u
/* A leaf TLB's counting filter has 8 slots per entry, rounded up to a power
 * of two, and at most TC_FILT_MAX_SLOTS (16 MiB per CPU, and as many rows of
 * the machine-wide slot bitmap): at most TC_FILT_MAX_SLOTS / 8 entries per
 * leaf TLB (tlbsim_resolve refuses more) */
#define TC_FILT_MAX_SLOTS (1u << 24)

/*
 * Address regions of the leaf TLBs: a leaf key (VA >> PAGE_SHIFT) falls in
 * region (key >> TC_REGION_SHIFT) mod TC_NREGIONS, i.e. 2 MiB of VA per
 * region with 4K pages, wrapping every 128 MiB. A CPU's bit in row r of
 * hw.tlb_regcpus is set while its TLB holds an entry of region r, so "which
 * CPUs may cache a page of [start, end)" costs a few row ORs for a range of
 * up to TC_NREGIONS - 1 regions instead of a scan of every TLB.
 */
#define TC_REGION_SHIFT 9
#define TC_NREGIONS 64u
static inline uint32_t tc_region(uint64_t key)
{
	return (uint32_t)(key >> TC_REGION_SHIFT) & (TC_NREGIONS - 1);
}

int tcache_init(struct tcache *tc, uint32_t sets, uint32_t ways);
/* Zeroed arrays of any size; large ones are mapped lazily (tcache.c). */
void *hw_zalloc(size_t bytes);
void hw_zfree(void *p, size_t bytes);
/* Turn the counting filter on (an empty cache only). 0 or -1. */
int tcache_enable_filter(struct tcache *tc);
/* tc_filt_slot of a filter of mask + 1 slots (for loops that keep the
 * mask in a local) */
static inline uint32_t tc_filt_hash(uint64_t key, uint32_t tag, uint32_t mask)
{
	uint64_t h = (key ^ ((uint64_t)tag << 40)) * 0x9e3779b97f4a7c15ull;
	return (uint32_t)(h >> 32) & mask;
}
static inline uint32_t tc_filt_slot(const struct tcache *tc, uint64_t key, uint32_t tag)
{
	return tc_filt_hash(key, tag, tc->filt_mask);
}
/* false: no entry (key, tag) is in the cache; true: there may be one */
static inline bool tc_filt_maybe(const struct tcache *tc, uint64_t key, uint32_t tag)
{
	return !tc->filt || tc->filt[tc_filt_slot(tc, key, tag)];
}
/* The first dense index >= from whose entry's key lies in [kfirst, kfirst +
 * kspan], or tc->ndense. */
uint32_t tc_find_key_range(const struct tcache *tc, uint32_t from, uint64_t kfirst,
			   uint64_t kspan);
/* the set of (key, depth): a multiplicative hash, so nearby keys spread */
static inline uint32_t tc_set(const struct tcache *tc, uint64_t key, int depth)
{
	uint64_t h = (key + (uint64_t)depth * 0x51ull) * 0x9e3779b97f4a7c15ull;
	return (uint32_t)(h >> 40) & (tc->sets - 1);
}

void tcache_destroy(struct tcache *tc);

/* The entry (key, depth) tagged exactly tag, without touching the LRU state
 * (for observers), or NULL. */
static inline const struct tc_entry *tc_peek(const struct tcache *tc, uint64_t key, int depth,
					     uint32_t tag)
{
	const struct tc_entry *set = &tc->e[(size_t)tc_set(tc, key, depth) * tc->ways];
	for (uint32_t w = 0; w < tc->ways; w++)
		if (set[w].valid && set[w].key == key && set[w].depth == depth && set[w].tag == tag)
			return &set[w];
	return NULL;
}

/* One CPU's caches. */
struct hw_cpu {
	struct tcache tlb;
	struct tcache wc;
	uint32_t zeroed_kb;	/* KiB this CPU has cleared (frame_clear), wraps */
};

/* Predicate form of an invalidation, applied to one CPU's caches. */
enum inv_kind {
	INV_VA_LEAF,		/* leaf entries of tag for VAs in the op set (VALE1IS) */
	INV_VA_ALL,		/* leaf + walk entries used for those VAs (VAE1IS) */
	INV_VA_LEAF_ANYTAG,	/* VAALE1IS */
	INV_VA_ALL_ANYTAG,	/* VAAE1IS */
	INV_TAG,		/* everything of tag (ASIDE1IS, CR3 reload of a PCID) */
	INV_TAG_NONGLOBAL,	/* x86 INVPCID single-context / CR3 */
	INV_ALL,		/* VMALLE1IS / INVPCID all incl. global */
	INV_X86_INVLPG,		/* leaf for VAs of tag or global + all walk entries of tag */
};

struct inv_op {
	enum inv_kind kind;
	uint32_t tag;
	uint64_t start, end;	/* op addresses: start, start+stride, ... < end */
	uint64_t stride;
	/* arm64 TTL hint of an INV_VA_* op: 1 + the depth of the leaf entry
	 * (the level of the walk holding it); 0: none. With hw.ttl it removes
	 * only leaves of that depth and walk entries above it. */
	uint8_t ttl;
};

/* Hardware events an observer may subscribe to (all optional). */
struct hw_hooks {
	/* frame f is about to be released (its state is still intact) */
	void (*frame_free)(void *ctx, uint32_t f);
	/* a cached entry whose frame was freed or reused since the fill was used
	 * for an access or a walk (what = "leaf TLB entry" / "walk-cache entry") */
	void (*stale_use)(void *ctx, int cpu, const char *what, uint64_t va, uint32_t frame);
	/* a walk started from a walk-cache entry to a watched table frame */
	void (*watched_walk)(void *ctx, int cpu, int depth, uint64_t va, uint32_t frame);
	/* a write completed through a cached writable+dirty leaf to a watched frame */
	void (*watched_write)(void *ctx, int cpu, uint64_t va, const struct tc_entry *te);
	/* the walker set the dirty bit of a PTE mapping frame f (hw_sets_ad) */
	void (*pte_dirtied)(void *ctx, uint32_t f);
};

struct hw {
	struct sim *sim;	/* for internal-bug reports only */
	const struct pt_format *fmt;
	/* arm64 ARMv8.1 HAFDBS: the walker sets AF, and clears RDONLY on a write
	 * to a DBM (PTE_WRITE) page, instead of faulting */
	bool afdbm;
	/* arm64 FEAT_TTL honoured: a level-hinted TLBI (inv_op.ttl) keeps the
	 * entries of walks whose leaf is at another level */
	bool ttl;
	/* x86 erratum (Alder/Raptor Lake with PCIDs): INVLPG leaves Global
	 * leaf entries */
	bool invlpg_global_miss;
	struct pt_geom geom;
	/* Frame table: one flat array in an address range reserved at init
	 * (inaccessible until used, made accessible FRAME_CHUNK frames at a
	 * time), so it never moves and a struct frame pointer stays valid
	 * across yields (grow.h), and frame_of is one index */
	struct frame *frames;
	uint64_t frames_cap;	/* frames the reservation holds */
	uint64_t frames_ready;	/* frames usable and charged (FRAME_CHUNK multiple) */
	uint64_t frames_mapped;	/* frames accessible (>= frames_ready when reused) */
	uint32_t nframes;
	uint32_t free_head;
	pte_t *table_pool;	/* recycled table buffers (linked through entry 0) */
	uint64_t frames_in_use;
	uint64_t host_bytes;	/* host memory held by frames and tables */
	struct hw_cpu *cpu;
	int nr_cpus;
	uint64_t *tlb_busy;	/* bitmap: CPUs whose leaf TLB holds an entry */
	/* TC_TAGCNT rows of cpu_words words: row h has the bit of each CPU whose
	 * leaf TLB (walk cache) holds an entry whose tag hashes to h */
	uint64_t *tlb_tagcpus, *wc_tagcpus;
	/* filt_mask + 1 rows of cpu_words words: row k has the bit of each CPU
	 * whose leaf TLB's filter slot k is non-zero (every CPU's TLB has the
	 * same geometry, so the same slot function), so a broadcast
	 * invalidation of a few addresses of one tag finds the CPUs that may
	 * hold one of them without visiting the others */
	uint64_t *tlb_slotcpus;
	size_t slotcpus_bytes;
	/* TC_NREGIONS rows of cpu_words words: row r has the bit of each CPU
	 * whose leaf TLB holds an entry of address region r (tc_region) */
	uint64_t *tlb_regcpus;
	uint32_t cpu_words;
	/* 1 once some leaf TLB filled a block (TC_BLOCK) entry (sticky) */
	uint32_t nblock;
	struct tlbsim_metrics *m;	/* counters: tlb_misses, page_walks, *_freed */
	const struct hw_hooks *hooks;
	void *hooks_ctx;
};

#define FRAME_CHUNK_SHIFT 10
#define FRAME_CHUNK (1u << FRAME_CHUNK_SHIFT)

/* The frame descriptor of frame number f (stable storage). */
static inline struct frame *frame_of(const struct hw *hw, uint32_t f)
{
	return &hw->frames[f];
}
static inline pte_t *table_of(const struct hw *hw, uint32_t f)
{
	return frame_of(hw, f)->table;
}

/* The next CPU >= from whose leaf TLB holds an entry, or nr_cpus. */
static inline int hw_next_busy_tlb(const struct hw *hw, int from)
{
	while (from < hw->nr_cpus) {
		uint64_t w = hw->tlb_busy[from / 64] >> (from % 64);
		if (w)
			return from + __builtin_ctzll(w);
		from = (from / 64 + 1) * 64;
	}
	return hw->nr_cpus;
}
/* Word wi of the bitmap of CPUs whose leaf TLB may hold an entry with a key
 * in [kfirst, klast] (a superset: by address region) */
static inline uint64_t hw_tlb_range_cpus_word(const struct hw *hw, uint64_t kfirst, uint64_t klast,
					      uint32_t wi)
{
	uint64_t r0 = kfirst >> TC_REGION_SHIFT, r1 = klast >> TC_REGION_SHIFT;
	if (r1 - r0 >= TC_NREGIONS - 1)
		return hw->tlb_busy[wi];
	uint64_t m = 0;
	for (uint64_t r = r0; r <= r1; r++)
		m |= hw->tlb_regcpus[(size_t)(r & (TC_NREGIONS - 1)) * hw->cpu_words + wi];
	return m;
}

/* Word wi of the bitmap of CPUs whose caches may hold an entry that op
 * removes: for ops that match by tag, the CPUs holding an entry whose tag
 * hashes like op's (INVLPG: or a global one); else every CPU. A superset:
 * hw_invalidate_cpu() on a CPU outside it would remove nothing. */
static inline uint64_t hw_inv_cpus_word(const struct hw *hw, const struct inv_op *op, uint32_t wi)
{
	uint32_t h = op->tag & (TC_TAGCNT - 1), W = hw->cpu_words;
	switch (op->kind) {
	case INV_VA_LEAF:
		return hw->tlb_tagcpus[(size_t)h * W + wi];
	case INV_VA_ALL:
	case INV_TAG:
	case INV_TAG_NONGLOBAL:
		return hw->tlb_tagcpus[(size_t)h * W + wi] | hw->wc_tagcpus[(size_t)h * W + wi];
	case INV_X86_INVLPG: {
		uint32_t g = TC_TAG_GLOBAL & (TC_TAGCNT - 1);
		return hw->tlb_tagcpus[(size_t)h * W + wi] | hw->wc_tagcpus[(size_t)h * W + wi] |
		       hw->tlb_tagcpus[(size_t)g * W + wi];
	}
	default:
		break;
	}
	int rest = hw->nr_cpus - (int)wi * 64;
	return rest >= 64 ? ~0ull : (1ull << rest) - 1;
}

/* Geometry of the caches of every CPU. */
struct hw_cache_geom {
	uint32_t tlb_sets, tlb_ways, wc_sets, wc_ways;
};
int hw_init(struct hw *hw, struct sim *sim, int nr_cpus, int page_shift,
	    const struct pt_format *fmt, const struct hw_cache_geom *cg,
	    struct tlbsim_metrics *m);
void hw_destroy(struct hw *hw);

/* A frame in state st, or NO_FRAME when the host allocation fails. */
uint32_t frame_alloc(struct hw *hw, enum frame_state st, int depth);
/* Release a frame to the allocator (reported to hooks->frame_free first). */
void frame_free(struct hw *hw, uint32_t f);
/* cpu clears frame f (clear_page): true if f's lines are still in cpu's
 * cache, i.e. cpu cleared f last and has cleared fewer than cache_kb KiB
 * (f included) since. Records the clear. */
bool frame_clear(struct hw *hw, uint32_t f, int cpu, uint32_t cache_kb);

/* Caches */

/* The bookkeeping a cache keeps, for code that knows it at compile time:
 * hw_init gives every CPU's leaf TLB all of it (TC_LEAF: busy_word,
 * tag_word, reg_word, filt and slot_word set) and every walk cache the tag
 * rows only (TC_WALK: tag_word set, the others NULL); TC_ANY tests each
 * pointer (any cache, e.g. the tests'). test_tcache checks hw_init's. */
enum tc_kind { TC_ANY, TC_LEAF, TC_WALK };
#define TC_HAS_BUSY(kind, tc) ((kind) == TC_LEAF || ((kind) == TC_ANY && (tc)->busy_word))
#define TC_HAS_TAGW(kind, tc) ((kind) != TC_ANY || (tc)->tag_word)
#define TC_HAS_REG(kind, tc) ((kind) == TC_LEAF || ((kind) == TC_ANY && (tc)->reg_word))
#define TC_HAS_FILT(kind, tc) ((kind) == TC_LEAF || ((kind) == TC_ANY && (tc)->filt))
#define TC_HAS_SLOT(kind, tc) ((kind) == TC_LEAF || ((kind) == TC_ANY && (tc)->slot_word))

/* tc_lookup_k with fslot = tc_filt_slot(tc, key, tag) computed by the
 * caller (ignored without a filter), which fills with the same slot after a
 * miss: one hash for both */
static inline __attribute__((always_inline)) struct tc_entry *
tc_lookup_slot_k(struct tcache *tc, uint64_t key, int depth, uint32_t tag, uint32_t fslot,
		 enum tc_kind kind)
{
	/* exact shortcuts for a miss: no entry of the tag (nor a global one),
	 * or the leaf filter holds neither (key, tag) nor (key, global) */
	const uint32_t hg = TC_TAG_GLOBAL & (TC_TAGCNT - 1);
	bool globals = tc->tagcnt[hg] != 0;
	if (!tc->tagcnt[tag & (TC_TAGCNT - 1)] && !globals)
		return NULL;
	if (TC_HAS_FILT(kind, tc) && !tc->filt[fslot] &&
	    (!globals || !tc->filt[tc_filt_slot(tc, key, TC_TAG_GLOBAL)]))
		return NULL;
	struct tc_entry *set = &tc->e[(size_t)tc_set(tc, key, depth) * tc->ways];
	for (uint32_t w = 0; w < tc->ways; w++) {
		struct tc_entry *e = &set[w];
		/* the key first: it differs in almost every way scanned */
		/* then the tag: the exact one is the common match, a
		 * global entry the rare one (GCC otherwise tests it first) */
		if (e->key == key && e->valid && e->depth == depth &&
		    (__builtin_expect(e->tag == tag, 1) || e->tag == TC_TAG_GLOBAL)) {
			e->stamp = ++tc->clock;
			return e;
		}
	}
	return NULL;
}
static inline __attribute__((always_inline)) struct tc_entry *
tc_lookup_k(struct tcache *tc, uint64_t key, int depth, uint32_t tag, enum tc_kind kind)
{
	uint32_t fslot = TC_HAS_FILT(kind, tc) ? tc_filt_slot(tc, key, tag) : 0;
	return tc_lookup_slot_k(tc, key, depth, tag, fslot, kind);
}
static inline struct tc_entry *tc_lookup(struct tcache *tc, uint64_t key, int depth, uint32_t tag)
{
	return tc_lookup_k(tc, key, depth, tag, TC_ANY);
}
void tc_fill(struct hw *hw, struct tcache *tc, uint64_t key, int depth, uint32_t tag,
	     uint32_t frame, uint8_t perm);
/* tc_fill when the cache holds no entry (key, depth, tag), e.g. right after
 * a tc_lookup of it returned NULL: the same result without the search for
 * an entry to replace. */
void tc_fill_miss(struct hw *hw, struct tcache *tc, uint64_t key, int depth, uint32_t tag,
		  uint32_t frame, uint8_t perm);
/* Fill the invalid entry e with (key, depth, tag) -> frame and count it
 * (fslot: tc_filt_slot(tc, key, tag) when the cache has a filter). */
static inline __attribute__((always_inline)) void
tc_install_k(struct hw *hw, struct tcache *tc, struct tc_entry *e, uint64_t key, int depth,
	     uint32_t tag, uint32_t frame, uint8_t perm, uint32_t fslot, enum tc_kind kind)
{
	struct frame *fr = frame_of(hw, frame);
	uint32_t n = tc->ndense;
	e->key = key;
	e->depth = (uint8_t)depth;
	e->tag = tag;
	e->frame = frame;
	e->gen = fr->gen;
	e->perm = perm;
	e->valid = 1;
	e->stamp = ++tc->clock;
	e->dense = n;
	if (!n && TC_HAS_BUSY(kind, tc))
		*tc->busy_word |= tc->busy_bit;
	tc->dense[n] = (uint32_t)(e - tc->e);
	tc->ndense = n + 1;
	uint32_t h = tag & (TC_TAGCNT - 1);
	if (tc->tagcnt[h]++ == 0 && TC_HAS_TAGW(kind, tc))
		tc->tag_word[(size_t)h * tc->tag_stride] |= tc->busy_bit;
	if (TC_HAS_REG(kind, tc)) {
		uint32_t r = tc_region(key);
		if (tc->regcnt[r]++ == 0)
			tc->reg_word[(size_t)r * tc->tag_stride] |= tc->busy_bit;
	}
	if (TC_HAS_FILT(kind, tc)) {
		uint32_t k = fslot;
		uint8_t *c = &tc->filt[k];
		const uint8_t cv = *c;	/* once: the word store may alias it */
		if (cv == 0 && TC_HAS_SLOT(kind, tc))
			tc->slot_word[(size_t)k * tc->tag_stride] |= tc->busy_bit;
		if (cv != UINT8_MAX) {
			*c = (uint8_t)(cv + 1);
			if (__builtin_expect(cv == UINT8_MAX - 1, 0))
				tc->filt_sat = 1;
		}
	}
	fr->tlb_refs++;
}
static inline void tc_install(struct hw *hw, struct tcache *tc, struct tc_entry *e, uint64_t key,
			      int depth, uint32_t tag, uint32_t frame, uint8_t perm)
{
	tc_install_k(hw, tc, e, key, depth, tag, frame, perm,
		     tc->filt ? tc_filt_slot(tc, key, tag) : 0, TC_ANY);
}

/* tc_fill_miss of a full set: evict a victim, install */
void tc_fill_evict(struct hw *hw, struct tcache *tc, struct tc_entry *set, uint64_t key, int depth,
		   uint32_t tag, uint32_t frame, uint8_t perm);
/* tc_fill_miss's body, for hw_access's walk */
static inline __attribute__((always_inline)) void
tc_fill_miss_k(struct hw *hw, struct tcache *tc, uint64_t key, int depth, uint32_t tag,
	       uint32_t frame, uint8_t perm, uint32_t fslot, enum tc_kind kind)
{
	const uint32_t ways = tc->ways;
	struct tc_entry *set = &tc->e[(size_t)tc_set(tc, key, depth) * ways];
	/* tc_victim's first choice, the lowest invalid way, inline */
	for (uint32_t w = 0; w < ways; w++)
		if (!set[w].valid) {
			tc_install_k(hw, tc, &set[w], key, depth, tag, frame, perm, fslot, kind);
			return;
		}
	tc_fill_evict(hw, tc, set, key, depth, tag, frame, perm);
}
void tc_remove(struct hw *hw, struct tcache *tc, struct tc_entry *e);
/* tc_remove's body, for the invalidation loops (kind: as tc_lookup_k) */
static inline __attribute__((always_inline)) void
tc_remove_inline_k(struct hw *hw, struct tcache *tc, struct tc_entry *e, enum tc_kind kind)
{
	SIM_BUG_ON(hw->sim, !e->valid);
	frame_of(hw, e->frame)->tlb_refs--;
	e->valid = 0;
	uint32_t h = e->tag & (TC_TAGCNT - 1);
	if (--tc->tagcnt[h] == 0 && TC_HAS_TAGW(kind, tc))
		tc->tag_word[(size_t)h * tc->tag_stride] &= ~tc->busy_bit;
	if (TC_HAS_REG(kind, tc)) {
		uint32_t r = tc_region(e->key);
		if (--tc->regcnt[r] == 0)
			tc->reg_word[(size_t)r * tc->tag_stride] &= ~tc->busy_bit;
	}
	if (TC_HAS_FILT(kind, tc)) {
		uint32_t k = tc_filt_slot(tc, e->key, e->tag);
		uint8_t *c = &tc->filt[k];
		if (*c != UINT8_MAX && --(*c) == 0 && TC_HAS_SLOT(kind, tc))
			tc->slot_word[(size_t)k * tc->tag_stride] &= ~tc->busy_bit;
	}
	uint32_t i = e->dense;
	uint32_t last = tc->dense[--tc->ndense];
	tc->dense[i] = last;
	tc->e[last].dense = i;
	if (!tc->ndense && TC_HAS_BUSY(kind, tc))
		*tc->busy_word &= ~tc->busy_bit;
}
static inline void tc_remove_inline(struct hw *hw, struct tcache *tc, struct tc_entry *e)
{
	tc_remove_inline_k(hw, tc, e, TC_ANY);
}
/* Remove every entry tagged exactly tag (as tc_remove() on each, scanning
 * the dense list from its end). Returns the count. */
uint32_t tc_remove_tag(struct hw *hw, struct tcache *tc, uint32_t tag);
/* tc_remove_tag of a TC_LEAF / TC_WALK cache (hw_init's CPU caches) */
uint32_t tc_remove_tag_leaf(struct hw *hw, struct tcache *tc, uint32_t tag);
uint32_t tc_remove_tag_walk(struct hw *hw, struct tcache *tc, uint32_t tag);

/* Apply an invalidation to one CPU's caches. Returns entries removed. */
uint32_t hw_invalidate_cpu(struct hw *hw, int cpu, const struct inv_op *op);
/* Would hw_invalidate_cpu() remove an entry? (nothing is removed) */
bool hw_invalidate_hits(const struct hw *hw, int cpu, const struct inv_op *op);
/* Apply a broadcast invalidation to every CPU, in CPU order, visiting only
 * those hw_inv_cpus_word() names; hit(ctx, cpu, removed) for each CPU that
 * lost entries. */
void hw_invalidate_bcast(struct hw *hw, const struct inv_op *op,
			 void (*hit)(void *ctx, int cpu, uint32_t removed), void *ctx);

/* The live PTE slot for va under root, or NULL if a table is missing or a
 * block descriptor maps va. */
pte_t *hw_pte_lookup(const struct hw *hw, uint32_t root, uint64_t va);
/* The PMD table (level depth_pmd) that maps va under root, or NO_FRAME when
 * a level above it is not present. */
uint32_t hw_pmd_table(const struct hw *hw, uint32_t root, uint64_t va);
/* The live PMD slot (an entry of the PMD table) for va under root, or NULL
 * if a table above it is missing. */
pte_t *hw_pmd_lookup(const struct hw *hw, uint32_t root, uint64_t va);
/* The first page number of the block holding page number vpn */
static inline uint64_t hw_block_key(const struct pt_geom *g, uint64_t vpn)
{
	return vpn & ~(g->ptrs_per_pte - 1);
}
/* Bytes a leaf TLB entry translates */
static inline uint64_t tc_leaf_size(const struct pt_geom *g, const struct tc_entry *e)
{
	return (e->perm & TC_BLOCK) ? 1ull << g->pmd_shift : g->page_size;
}

/* Outcome of a user access through the MMU (mmu.c). */
struct hw_access {
	bool fault;		/* the access faulted */
	int levels_read;	/* table levels the walk read (0: TLB hit) */
	pte_t live_pte;		/* on a fault: the live PTE (0 if none) */
};
/* A user access on cpu: TLB lookup, walk from root for tag, fills, A/D. */
void hw_access(struct hw *hw, int cpu, uint32_t root, uint32_t tag, uint64_t va, bool write,
	       struct hw_access *out);

#endif
