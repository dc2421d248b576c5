/*
 * hw.h - the hardware model: physical frames, page-table formats, per-CPU TLBs
 * and walk caches, the MMU walk, and the invalidation primitives.
 *
 * Invariants
 *  - A frame is FREE, DATA or PGTABLE. Every allocation and every free bumps its
 *    generation number, so a cached reference (frame, gen) whose gen differs
 *    from the frame's is stale (the frame was freed or reused).
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
#include <stdint.h>

struct sim;

typedef uint64_t pte_t;

#define PTE_VALID  (1ull << 0)
#define PTE_TABLE  (1ull << 1)	/* non-leaf descriptor */
#define PTE_WRITE  (1ull << 2)	/* x86 RW; arm64 PTE_WRITE (DBM) */
#define PTE_DIRTY  (1ull << 3)	/* x86 D; arm64 software PTE_DIRTY */
#define PTE_YOUNG  (1ull << 4)	/* x86 A; arm64 AF */
#define PTE_RDONLY (1ull << 5)	/* arm64 AP[2] (hardware read-only) */
#define PTE_USER   (1ull << 6)
#define PTE_GLOBAL (1ull << 7)
#define PTE_PFN_SHIFT 12
#define PTE_PFN_MASK 0xffffffffull
#define pte_pfn(p) ((uint32_t)(((p) >> PTE_PFN_SHIFT) & PTE_PFN_MASK))
#define pfn_pte(pfn, flags) (((pte_t)(pfn) << PTE_PFN_SHIFT) | (flags))
#define pte_present(p) (((p) & PTE_VALID) != 0)
#define pte_none(p) ((p) == 0)

#define NO_FRAME 0xffffffffu

enum frame_state { FRAME_FREE = 0, FRAME_DATA, FRAME_PGTABLE };

struct frame {
	uint8_t state;		/* enum frame_state */
	uint8_t depth;		/* PGTABLE: depth of the table (0 = root) */
	uint8_t rcu_checked;	/* I1 checked when handed to RCU */
	uint8_t lazyfree;	/* DATA: MADV_FREE'd and clean (I3) */
	uint32_t gen;		/* bumped on every alloc and free */
	uint32_t refcount;	/* DATA: references (page cache, mappings) */
	uint32_t tlb_refs;	/* cache entries on all CPUs holding this frame */
	uint32_t nr_used;	/* PGTABLE: non-none descriptors */
	uint32_t next_free;
	uint64_t unlink_epoch;	/* PGTABLE: sim->unlink_epoch when unlinked */
	uint64_t map_epoch;	/* DATA: sim->map_epoch when last mapped (I2) */
	uint64_t dirty_epoch;	/* DATA: sim->map_epoch when a PTE last became dirty (I3) */
	pte_t *table;		/* PGTABLE: descriptors (ptrs_per_table entries) */
};

/* Page-table geometry. depth 0 = top level; depth levels-1 = PTE level. */
struct pt_geom {
	int levels;
	int page_shift;
	int shift[8];		/* VA shift of the entries at each depth */
	int bits[8];		/* index bits at each depth */
	/* kernel names: *_SHIFT of folded levels equal the next level up */
	int pmd_shift, pud_shift, p4d_shift, pgdir_shift;
	int depth_pmd, depth_pud;	/* depth of the PMD/PUD table, -1 if folded */
	uint64_t page_size;
	uint64_t ptrs_per_pte;
	uint64_t task_size;
};

void pt_geom_init(struct pt_geom *g, int page_shift, bool x86);
static inline uint64_t pt_index(const struct pt_geom *g, int depth, uint64_t va)
{
	return (va >> g->shift[depth]) & ((1ull << g->bits[depth]) - 1);
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

struct tc_entry {
	uint64_t key;		/* va >> shift[depth] */
	uint32_t tag;		/* ASID / PCID, or TC_TAG_GLOBAL */
	uint32_t frame;		/* leaf: data frame; walk: next-level table frame */
	uint32_t gen;		/* frame generation when filled */
	uint32_t stamp;		/* LRU stamp */
	uint32_t dense;		/* index in tcache.dense */
	uint8_t valid;
	uint8_t depth;		/* leaf: levels-1; walk entry at depth d -> table at d+1 */
	uint8_t perm;		/* leaf: PTE_WRITE | PTE_DIRTY | PTE_RDONLY copy */
	uint8_t pad;
};

struct tcache {
	struct tc_entry *e;
	uint32_t sets, ways;
	uint32_t *dense;	/* indices of valid entries, unordered */
	uint32_t ndense;
	uint32_t clock;
};

int tcache_init(struct tcache *tc, uint32_t sets, uint32_t ways);
void tcache_destroy(struct tcache *tc);

/* One CPU's caches. */
struct hw_cpu {
	struct tcache tlb;
	struct tcache wc;
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
};

struct hw {
	struct pt_geom geom;
	/* Frame table in chunks of FRAME_CHUNK frames that never move, so a
	 * struct frame pointer stays valid across yields (grow.h) */
	struct frame **chunks;
	size_t nchunks, cap_chunks;
	uint32_t nframes;
	uint32_t free_head;
	pte_t *table_pool;	/* recycled table buffers (linked through entry 0) */
	uint64_t frames_in_use;
	struct hw_cpu *cpu;
	int nr_cpus;
};

#define FRAME_CHUNK_SHIFT 10
#define FRAME_CHUNK (1u << FRAME_CHUNK_SHIFT)

/* The frame descriptor of frame number f (stable storage). */
static inline struct frame *frame_of(const struct hw *hw, uint32_t f)
{
	return &hw->chunks[f >> FRAME_CHUNK_SHIFT][f & (FRAME_CHUNK - 1)];
}

int hw_init(struct sim *s, int nr_cpus, int page_shift, bool x86);
void hw_destroy(struct sim *s);

uint32_t frame_alloc(struct sim *s, enum frame_state st, int depth);
/* Release a frame to the allocator. Reports I1 to the checker when a cache
 * entry still holds it. */
void frame_free(struct sim *s, uint32_t f);

/* Caches */
struct tc_entry *tc_lookup(struct tcache *tc, uint64_t key, int depth, uint32_t tag);
void tc_fill(struct sim *s, struct tcache *tc, uint64_t key, int depth, uint32_t tag,
	     uint32_t frame, uint8_t perm);
void tc_remove(struct sim *s, struct tcache *tc, struct tc_entry *e);

/* Apply an invalidation to one CPU's caches. Returns entries removed. */
uint32_t hw_invalidate_cpu(struct sim *s, int cpu, const struct inv_op *op);

struct mm_struct;
/* A user access on cpu through the MMU (mmu.c): 0, or -1 on a fault with
 * *fault_pte = the live PTE (for the livelock detector). */
int mmu_access(struct sim *s, int cpu, struct mm_struct *mm, uint64_t va, bool write,
	       uint64_t *fault_pte);
/* Oracle (check.c) */
void check_frame_free(struct sim *s, uint32_t f);
void check_tables_to_rcu(struct sim *s, const uint32_t *tables, uint32_t n);
void check_range_unmapped(struct sim *s, struct mm_struct *mm, uint64_t start, uint64_t end,
			  uint64_t call_epoch, const char *call);

/* MMU walk result */
enum walk_result { WALK_OK, WALK_FAULT_TRANSLATION, WALK_FAULT_PERMISSION, WALK_FAULT_ACCESS };

#endif
