/*
 * invalidate.c - applying an invalidation (struct inv_op) to one CPU's caches.
 *
 * A range op is a start, end and stride: exactly the addresses the kernel's
 * TLBI / INVLPG loop would issue. Cost is O(min(entries cached, ops)): either
 * the op addresses are looked up in their sets, or the dense list of cached
 * entries is scanned with an exact "does some op address fall in this entry's
 * span" test.
 */
#include "hw/hw.h"


/* op_hits when rounding off = lo - start up to a stride wraps 64 bits: the
 * rounding as the 64-bit arithmetic does it, the sums in 128 bits */
static __attribute__((noinline, cold)) bool op_hits_wide(const struct inv_op *op, uint64_t lo,
							 uint64_t size, uint64_t off)
{
	uint64_t k = (off + op->stride - 1) / op->stride;
	unsigned __int128 a = (unsigned __int128)op->start + (unsigned __int128)k * op->stride;
	return a < (unsigned __int128)lo + size && a < op->end;
}

/* Does some op address start + k*stride (< end) fall in [lo, lo+size)? */
static inline bool op_hits(const struct inv_op *op, uint64_t lo, uint64_t size)
{
	if (op->start >= op->end || lo >= op->end || lo + size <= op->start)
		return false;	/* disjoint: the common case, no division */
	/* overlapping, op addresses every size bytes from a size-aligned start
	 * and lo size-aligned (a page-by-page flush of leaf entries): lo itself
	 * is an op address */
	if (op->stride == size && ((op->start | lo) & (size - 1)) == 0)
		return true;
	/* the first op address a >= lo (or start): does it lie below lo + size
	 * and end? Measured as offsets from lo, which fit 64 bits (lo < end),
	 * the test is the exact one of 128-bit sums */
	if (lo <= op->start)
		return op->start - lo < size;	/* a = start, and start < end */
	uint64_t off = lo - op->start;
	if (__builtin_expect(off > UINT64_MAX - (op->stride - 1), 0))
		return op_hits_wide(op, lo, size, off);
	uint64_t k = (off + op->stride - 1) / op->stride;
	uint64_t d = k * op->stride - off;	/* a - lo, below stride: k * stride <= off + stride - 1 */
	return d < size && d < op->end - lo;
}

/* FEAT_TTL (Arm ARM D8.13, TLBI with a TTL hint): a hinted VA TLBI need
 * only remove the entries of walks whose leaf is at the hinted level - the
 * leaves of that depth and the walk entries above it; a walk entry at or
 * below it (a table descriptor where the hint says a block is) may stay */
static inline bool ttl_spares(const struct hw *hw, const struct inv_op *op,
			      const struct tc_entry *e, bool leaf)
{
	if (!op->ttl || !hw->ttl)
		return false;
	int d = op->ttl - 1;
	return leaf ? e->depth != d : e->depth >= d;
}

static bool leaf_matches(const struct hw *hw, const struct inv_op *op, const struct tc_entry *e)
{
	const struct pt_geom *g = &hw->geom;
	if (ttl_spares(hw, op, e, true))
		return false;
	switch (op->kind) {
	case INV_VA_LEAF:
	case INV_VA_ALL:
		if (e->tag != op->tag)
			return false;
		break;
	case INV_X86_INVLPG:
		/* a Global entry matches whatever the PCID - except on parts
		 * with the INVLPG erratum (ce0b15d11ad8) while PCIDs are on */
		if (e->tag == TC_TAG_GLOBAL ? hw->invlpg_global_miss : e->tag != op->tag)
			return false;
		break;
	case INV_VA_LEAF_ANYTAG:
	case INV_VA_ALL_ANYTAG:
		break;
	case INV_TAG:
	case INV_TAG_NONGLOBAL:
		return e->tag == op->tag;
	case INV_ALL:
		return true;
	}
	return op_hits(op, e->key << g->page_shift, tc_leaf_size(g, e));
}

static bool walk_matches(const struct hw *hw, const struct inv_op *op, const struct tc_entry *e)
{
	const struct pt_geom *g = &hw->geom;
	if (ttl_spares(hw, op, e, false))
		return false;
	switch (op->kind) {
	case INV_VA_LEAF:
	case INV_VA_LEAF_ANYTAG:
		return false;
	case INV_VA_ALL:
		if (e->tag != op->tag)
			return false;
		break;
	case INV_VA_ALL_ANYTAG:
		break;
	case INV_X86_INVLPG:
		/* Intel SDM 3A 4.10.4.1: INVLPG drops all paging-structure-cache
		 * entries of the current PCID, whatever the address. */
		return e->tag == op->tag && op->start < op->end;
	case INV_TAG:
	case INV_TAG_NONGLOBAL:
		return e->tag == op->tag;
	case INV_ALL:
		return true;
	}
	int sh = g->shift[e->depth];
	return op_hits(op, e->key << sh, 1ull << sh);
}

/* leaf: tc is a CPU's leaf TLB (TC_LEAF), else its walk cache (TC_WALK); a
 * constant in each copy (inv_dense_leaf / inv_dense_walk) */
static inline __attribute__((always_inline)) uint32_t
inv_dense(struct hw *hw, struct tcache *tc, const struct inv_op *op, bool leaf)
{
	const enum tc_kind kind = leaf ? TC_LEAF : TC_WALK;
	uint32_t removed = 0;
	if ((op->kind == INV_VA_ALL || (leaf && op->kind == INV_VA_LEAF)) && !op->ttl) {
		/* the common broadcast (VALE1IS / VAE1IS of one ASID): the tests of
		 * leaf_matches / walk_matches without their switch, tag first */
		const struct pt_geom *g = &hw->geom;
		if (leaf && tc->nblock) {
			/* block entries span a PMD: their own size */
			for (uint32_t i = tc->ndense; i-- > 0;) {
				struct tc_entry *e = &tc->e[tc->dense[i]];
				if (e->tag == op->tag &&
				    op_hits(op, e->key << g->page_shift, tc_leaf_size(g, e))) {
					tc_remove_inline_k(hw, tc, e, kind);
					removed++;
				}
			}
			return removed;
		}
		for (uint32_t i = tc->ndense; i-- > 0;) {
			struct tc_entry *e = &tc->e[tc->dense[i]];
			if (e->tag != op->tag)
				continue;
			int sh = leaf ? g->page_shift : g->shift[e->depth];
			if (op_hits(op, e->key << sh, 1ull << sh)) {
				tc_remove_inline_k(hw, tc, e, kind);
				removed++;
			}
		}
		return removed;
	}
	if (op->kind == INV_TAG) {
		/* a whole ASID (ASIDE1IS, a PCID flush): every entry of the tag */
		return leaf ? tc_remove_tag_leaf(hw, tc, op->tag) : tc_remove_tag_walk(hw, tc, op->tag);
	}
	for (uint32_t i = tc->ndense; i-- > 0;) {
		struct tc_entry *e = &tc->e[tc->dense[i]];
		if (leaf ? leaf_matches(hw, op, e) : walk_matches(hw, op, e)) {
			tc_remove_inline_k(hw, tc, e, kind);
			removed++;
		}
	}
	return removed;
}

static __attribute__((noinline)) uint32_t inv_dense_leaf(struct hw *hw, struct tcache *tc,
							 const struct inv_op *op)
{
	return inv_dense(hw, tc, op, true);
}

static __attribute__((noinline)) uint32_t inv_dense_walk(struct hw *hw, struct tcache *tc,
							 const struct inv_op *op)
{
	return inv_dense(hw, tc, op, false);
}

/* The leaf TLB's filter says no entry leaf_matches() could remove for key
 * is held (only for ops that match by tag) */
static inline bool filt_may_hold(const struct tcache *tc, const struct inv_op *op, uint64_t key)
{
	switch (op->kind) {
	case INV_VA_LEAF:
	case INV_VA_ALL:
		return tc_filt_maybe(tc, key, op->tag);
	case INV_X86_INVLPG:
		return tc_filt_maybe(tc, key, op->tag) || tc_filt_maybe(tc, key, TC_TAG_GLOBAL);
	default:
		return true;
	}
}

/* Per-address form: look only in the sets the op addresses map to (leaf:
 * as inv_dense's, a constant in each copy). */
static inline __attribute__((always_inline)) uint32_t
inv_by_address(struct hw *hw, struct tcache *tc, const struct inv_op *op, bool leaf)
{
	const enum tc_kind kind = leaf ? TC_LEAF : TC_WALK;
	const struct pt_geom *g = &hw->geom;
	uint32_t removed = 0;
	/* a leaf TLB holding block entries: also the block entry of each op
	 * address (depth_pmd, keyed by the block's first page) */
	bool blocks = leaf && tc->nblock;
	for (unsigned __int128 a = op->start; a < op->end; a += op->stride) {
		int d0 = leaf ? g->levels - 1 : 0;
		int d1 = leaf ? g->levels - 1 : g->levels - 2;
		if (blocks)
			d0 = g->depth_pmd;
		for (int d = d0; d <= d1; d++) {
			uint64_t key = (uint64_t)a >> g->shift[d];
			if (leaf && d < g->levels - 1) {
				if (d != g->depth_pmd)
					continue;
				key = hw_block_key(g, (uint64_t)a >> g->page_shift);
			}
			if (leaf && tc->filt && !filt_may_hold(tc, op, key))
				continue;
			struct tc_entry *set = &tc->e[(size_t)tc_set(tc, key, d) * tc->ways];
			for (uint32_t w = 0; w < tc->ways; w++) {
				struct tc_entry *e = &set[w];
				if (!e->valid || e->key != key || e->depth != d)
					continue;
				if (leaf ? leaf_matches(hw, op, e) : walk_matches(hw, op, e)) {
					tc_remove_inline_k(hw, tc, e, kind);
					removed++;
				}
			}
		}
	}
	return removed;
}

static __attribute__((noinline)) uint32_t inv_by_address_leaf(struct hw *hw, struct tcache *tc,
							      const struct inv_op *op)
{
	return inv_by_address(hw, tc, op, true);
}

static __attribute__((noinline)) uint32_t inv_by_address_walk(struct hw *hw, struct tcache *tc,
							      const struct inv_op *op)
{
	return inv_by_address(hw, tc, op, false);
}

static bool op_is_by_address(enum inv_kind k)
{
	return k == INV_VA_LEAF || k == INV_VA_ALL || k == INV_VA_LEAF_ANYTAG ||
	       k == INV_VA_ALL_ANYTAG || k == INV_X86_INVLPG;
}

/* The cache may hold an entry op removes, by the tag counts (ops that
 * match by tag only; leaf: INVLPG also removes global entries) */
static inline bool may_hold_tag(const struct tcache *tc, const struct inv_op *op, bool leaf)
{
	switch (op->kind) {
	case INV_TAG:
	case INV_TAG_NONGLOBAL:
	case INV_VA_LEAF:
	case INV_VA_ALL:
		return tc->tagcnt[op->tag & (TC_TAGCNT - 1)] != 0;
	case INV_X86_INVLPG:
		return tc->tagcnt[op->tag & (TC_TAGCNT - 1)] != 0 ||
		       (leaf && tc->tagcnt[TC_TAG_GLOBAL & (TC_TAGCNT - 1)] != 0);
	default:
		return true;
	}
}

/* op addresses of a by-address op (0 for an empty one), else 0 */
static uint64_t inv_nops(const struct inv_op *op)
{
	if (!op_is_by_address(op->kind) || op->start >= op->end)
		return 0;
	return (op->end - op->start - 1) / op->stride + 1;
}

/* What of one CPU's caches an invalidation may touch */
enum { INV_PART_LEAF = 1, INV_PART_WALK = 2 };

static uint32_t invalidate_cpu(struct hw *hw, int cpu, const struct inv_op *op, uint64_t nops,
			       unsigned parts)
{
	struct hw_cpu *hc = &hw->cpu[cpu];
	uint32_t removed = 0;
	if (op_is_by_address(op->kind) && nops == 0)
		return 0;
	/* leaf TLB */
	if ((parts & INV_PART_LEAF) && hc->tlb.ndense && may_hold_tag(&hc->tlb, op, true)) {
		if (op->kind == INV_TAG)
			removed += tc_remove_tag_leaf(hw, &hc->tlb, op->tag);	/* inv_dense's */
		else if (op_is_by_address(op->kind) && nops < hc->tlb.ndense)
			removed += inv_by_address_leaf(hw, &hc->tlb, op);
		else
			removed += inv_dense_leaf(hw, &hc->tlb, op);
	}
	/* walk cache */
	if ((parts & INV_PART_WALK) && hc->wc.ndense && op->kind != INV_VA_LEAF &&
	    op->kind != INV_VA_LEAF_ANYTAG && may_hold_tag(&hc->wc, op, false)) {
		uint32_t levels = (uint32_t)hw->geom.levels;
		if (op->kind == INV_TAG)
			removed += tc_remove_tag_walk(hw, &hc->wc, op->tag);	/* inv_dense's */
		else if (op->kind != INV_X86_INVLPG && op_is_by_address(op->kind) &&
		    nops * (levels - 1) < hc->wc.ndense)
			removed += inv_by_address_walk(hw, &hc->wc, op);
		else
			removed += inv_dense_walk(hw, &hc->wc, op);
	}
	return removed;
}

uint32_t hw_invalidate_cpu(struct hw *hw, int cpu, const struct inv_op *op)
{
	return invalidate_cpu(hw, cpu, op, inv_nops(op), INV_PART_LEAF | INV_PART_WALK);
}

/* Above this many op addresses a broadcast visits the CPUs by tag instead
 * of looking each address up in hw.tlb_slotcpus */
#define BCAST_SLOT_OPS 64u

void hw_invalidate_bcast(struct hw *hw, const struct inv_op *op,
			 void (*hit)(void *ctx, int cpu, uint32_t removed), void *ctx)
{
	const uint32_t W = hw->cpu_words;
	if (op->kind == INV_TAG) {
		/* a whole ASID (ASIDE1IS, a PCID flush): invalidate_cpu's
		 * INV_TAG steps on the CPUs of hw_inv_cpus_word, in CPU order,
		 * without its dispatch on the op */
		const uint32_t h = op->tag & (TC_TAGCNT - 1);
		for (uint32_t wi = 0; wi < W; wi++) {
			uint64_t m = hw->tlb_tagcpus[(size_t)h * W + wi] |
				     hw->wc_tagcpus[(size_t)h * W + wi];
			for (; m; m &= m - 1) {
				int c = (int)(wi * 64) + __builtin_ctzll(m);
				struct hw_cpu *hc = &hw->cpu[c];
				uint32_t removed = 0;
				if (hc->tlb.ndense && hc->tlb.tagcnt[h])
					removed += tc_remove_tag_leaf(hw, &hc->tlb, op->tag);
				if (hc->wc.ndense && hc->wc.tagcnt[h])
					removed += tc_remove_tag_walk(hw, &hc->wc, op->tag);
				if (removed && hit)
					hit(ctx, c, removed);
			}
		}
		return;
	}
	uint64_t nops = inv_nops(op);
	if (op_is_by_address(op->kind) && nops == 0)
		return;
	bool by_slot = (op->kind == INV_VA_LEAF || op->kind == INV_VA_ALL) && hw->tlb_slotcpus &&
		       hw->nr_cpus > 0 && nops <= BCAST_SLOT_OPS;
	uint64_t leafm[4] = {0};
	if (by_slot && (W > 4 || hw->nblock))
		by_slot = false;	/* more than 256 CPUs, or block entries: by tag */
	if (by_slot) {
		/* the CPUs whose leaf TLB may hold one of the op's (key, tag) */
		const struct tcache *tc0 = &hw->cpu[0].tlb;
		int sh = hw->geom.page_shift;
		for (uint64_t k = 0, a = op->start; k < nops; k++, a += op->stride) {
			const uint64_t *row =
				&hw->tlb_slotcpus[(size_t)tc_filt_slot(tc0, a >> sh, op->tag) * W];
			for (uint32_t wi = 0; wi < W; wi++)
				leafm[wi] |= row[wi];
		}
	}
	for (uint32_t wi = 0; wi < W; wi++) {
		uint64_t all, leaf, walk;
		if (by_slot) {
			leaf = leafm[wi];
			walk = op->kind == INV_VA_ALL ? hw->wc_tagcpus[(size_t)(op->tag & (TC_TAGCNT - 1)) * W + wi]
						      : 0;
			all = leaf | walk;
		} else if (op->kind == INV_VA_LEAF || op->kind == INV_VA_ALL) {
			/* many addresses: the leaf TLBs that hold the tag and a
			 * page of the op's address range; the walk caches by tag */
			uint32_t h = op->tag & (TC_TAGCNT - 1);
			int sh = hw->geom.page_shift;
			uint64_t kfirst = op->start >> sh, klast = (op->end - 1) >> sh;
			if (hw->nblock) {
				/* a block entry sits in its first page's region */
				kfirst = hw_block_key(&hw->geom, kfirst);
				klast = hw_block_key(&hw->geom, klast) + hw->geom.ptrs_per_pte - 1;
			}
			leaf = hw->tlb_tagcpus[(size_t)h * W + wi] &
			       hw_tlb_range_cpus_word(hw, kfirst, klast, wi);
			walk = op->kind == INV_VA_ALL ? hw->wc_tagcpus[(size_t)h * W + wi] : 0;
			all = leaf | walk;
		} else {
			all = leaf = walk = hw_inv_cpus_word(hw, op, wi);
		}
		for (uint64_t m = all; m; m &= m - 1) {
			uint64_t bit = m & -m;
			int c = (int)(wi * 64) + __builtin_ctzll(m);
			unsigned parts = ((leaf & bit) ? INV_PART_LEAF : 0) | ((walk & bit) ? INV_PART_WALK : 0);
			uint32_t removed = invalidate_cpu(hw, c, op, nops, parts);
			if (removed && hit)
				hit(ctx, c, removed);
		}
	}
}

/* Would hw_invalidate_cpu(hw, cpu, op) remove something? (a scan that
 * removes nothing: the checker's test for a CPU that owes a broadcast) */
bool hw_invalidate_hits(const struct hw *hw, int cpu, const struct inv_op *op)
{
	const struct hw_cpu *hc = &hw->cpu[cpu];
	if (op_is_by_address(op->kind) && inv_nops(op) == 0)
		return false;
	for (uint32_t i = 0; i < hc->tlb.ndense; i++)
		if (leaf_matches(hw, op, &hc->tlb.e[hc->tlb.dense[i]]))
			return true;
	if (op->kind == INV_VA_LEAF || op->kind == INV_VA_LEAF_ANYTAG)
		return false;
	for (uint32_t i = 0; i < hc->wc.ndense; i++)
		if (walk_matches(hw, op, &hc->wc.e[hc->wc.dense[i]]))
			return true;
	return false;
}
