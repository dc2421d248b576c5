/*
 * hw.c - frames, page-table geometry, translation caches and invalidations.
 * See hw.h for the invariants.
 */
#include <stdlib.h>
#include <string.h>

#include "sim/grow.h"
#include "sim/sim.h"

/* ---- geometry ---- */
void pt_geom_init(struct pt_geom *g, int page_shift, bool x86)
{
	memset(g, 0, sizeof(*g));
	g->page_shift = page_shift;
	g->page_size = 1ull << page_shift;
	int bpl = page_shift - 3;	/* descriptors per table: page_size / 8 */
	g->ptrs_per_pte = 1ull << bpl;
	g->task_size = x86 ? 0x7ffffffff000ull : (1ull << 48);
	/* 48-bit VA: levels = ceil((48 - page_shift) / bpl) */
	int va_bits = 48;
	int levels = (va_bits - page_shift + bpl - 1) / bpl;
	g->levels = levels;
	for (int d = levels - 1, sh = page_shift; d >= 0; d--, sh += bpl) {
		g->shift[d] = sh;
		g->bits[d] = sh + bpl <= va_bits ? bpl : va_bits - sh;
	}
	/* Kernel names. PTE table is at depth levels-1; its entries are PTEs.
	 * The PMD table is at depth levels-2, PUD table at levels-3 (if any). */
	g->pmd_shift = g->shift[levels - 2];
	g->depth_pmd = levels - 2;
	if (levels >= 4) {
		g->pud_shift = g->shift[levels - 3];
		g->depth_pud = levels - 3;
	} else {
		g->pud_shift = g->shift[0];	/* PUD folded into PGD */
		g->depth_pud = -1;
	}
	g->pgdir_shift = g->shift[0];
	g->p4d_shift = g->shift[0];		/* P4D folded (48-bit VA) */
}

/* ---- frames ---- */
int hw_init(struct sim *s, int nr_cpus, int page_shift, bool x86)
{
	struct hw *hw = &s->hw;
	pt_geom_init(&hw->geom, page_shift, x86);
	hw->free_head = NO_FRAME;
	hw->nr_cpus = nr_cpus;
	hw->cpu = calloc((size_t)nr_cpus, sizeof(*hw->cpu));
	if (!hw->cpu)
		return TLBSIM_ENOMEM;
	for (int i = 0; i < nr_cpus; i++) {
		if (tcache_init(&hw->cpu[i].tlb, (uint32_t)P(s, P_tlb_sets),
				(uint32_t)P(s, P_tlb_ways)) ||
		    tcache_init(&hw->cpu[i].wc, (uint32_t)P(s, P_wc_sets),
				(uint32_t)P(s, P_wc_ways)))
			return TLBSIM_ENOMEM;
	}
	return 0;
}

void hw_destroy(struct sim *s)
{
	struct hw *hw = &s->hw;
	for (uint32_t f = 0; f < hw->nframes; f++)
		free(frame_of(hw, f)->table);
	for (size_t c = 0; c < hw->nchunks; c++)
		free(hw->chunks[c]);
	free(hw->chunks);
	while (hw->table_pool) {
		pte_t *t = hw->table_pool;
		hw->table_pool = (pte_t *)(uintptr_t)t[0];
		free(t);
	}
	if (hw->cpu)
		for (int i = 0; i < hw->nr_cpus; i++) {
			tcache_destroy(&hw->cpu[i].tlb);
			tcache_destroy(&hw->cpu[i].wc);
		}
	free(hw->cpu);
}

static pte_t *table_buf_get(struct sim *s)
{
	struct hw *hw = &s->hw;
	pte_t *t = hw->table_pool;
	if (t) {
		hw->table_pool = (pte_t *)(uintptr_t)t[0];
		t[0] = 0;
		return t;
	}
	/* descriptors, then the occupancy bitmap (table_used_map) */
	t = calloc(hw->geom.ptrs_per_pte + hw->geom.ptrs_per_pte / 64, sizeof(pte_t));
	if (!t)
		sim_bug(s, __FILE__, __LINE__, "out of host memory for page tables");
	return t;
}

static void table_buf_put(struct sim *s, pte_t *t)
{
	/* Tables are empty when freed (free_pgd_range frees only empty ones). */
	t[0] = (pte_t)(uintptr_t)s->hw.table_pool;
	s->hw.table_pool = t;
}

uint32_t frame_alloc(struct sim *s, enum frame_state st, int depth)
{
	struct hw *hw = &s->hw;
	uint32_t f = hw->free_head;
	if (f != NO_FRAME) {
		hw->free_head = frame_of(hw, f)->next_free;
	} else {
		if (hw->nframes == NO_FRAME)
			sim_bug(s, __FILE__, __LINE__, "frame numbers exhausted");
		if ((hw->nframes & (FRAME_CHUNK - 1)) == 0) {
			/* a new chunk; the chunk table may move, the chunks never do */
			struct frame *c = calloc(FRAME_CHUNK, sizeof(*c));
			if (!c || GROW(&hw->chunks, &hw->cap_chunks, hw->nchunks, hw->nchunks + 1, 16)) {
				free(c);
				sim_bug(s, __FILE__, __LINE__, "out of host memory for frames");
			}
			hw->chunks[hw->nchunks++] = c;
		}
		f = hw->nframes++;
	}
	struct frame *fr = frame_of(hw, f);
	SIM_BUG_ON(s, fr->state != FRAME_FREE);
	fr->state = (uint8_t)st;
	fr->depth = (uint8_t)depth;
	fr->gen++;
	fr->refcount = 1;
	fr->nr_used = 0;
	fr->rcu_checked = 0;
	fr->lazyfree = 0;
	fr->next_free = NO_FRAME;
	fr->table = st == FRAME_PGTABLE ? table_buf_get(s) : NULL;
	hw->frames_in_use++;
	return f;
}

void frame_free(struct sim *s, uint32_t f)
{
	struct hw *hw = &s->hw;
	struct frame *fr = frame_of(hw, f);
	SIM_BUG_ON(s, fr->state == FRAME_FREE);
	if (fr->tlb_refs || (fr->state == FRAME_PGTABLE && P(s, P_spec_walks)))
		check_frame_free(s, f);
	if (fr->state == FRAME_PGTABLE) {
		SIM_BUG_ON(s, fr->nr_used != 0);
		table_buf_put(s, fr->table);
		fr->table = NULL;
		s->m.tables_freed++;
	} else {
		s->m.pages_freed++;
	}
	fr->state = FRAME_FREE;
	fr->gen++;
	fr->refcount = 0;
	fr->next_free = hw->free_head;
	hw->free_head = f;
	hw->frames_in_use--;
}

/* ---- translation caches ---- */
int tcache_init(struct tcache *tc, uint32_t sets, uint32_t ways)
{
	memset(tc, 0, sizeof(*tc));
	if (sets == 0 || (sets & (sets - 1)) || ways == 0 || ways > 64)
		return -1;
	tc->sets = sets;
	tc->ways = ways;
	tc->e = calloc((size_t)sets * ways, sizeof(*tc->e));
	tc->dense = calloc((size_t)sets * ways, sizeof(*tc->dense));
	return tc->e && tc->dense ? 0 : -1;
}

void tcache_destroy(struct tcache *tc)
{
	free(tc->e);
	free(tc->dense);
	memset(tc, 0, sizeof(*tc));
}

static inline uint32_t tc_set(const struct tcache *tc, uint64_t key, int depth)
{
	uint64_t h = (key + (uint64_t)depth * 0x51ull) * 0x9e3779b97f4a7c15ull;
	return (uint32_t)(h >> 40) & (tc->sets - 1);
}

struct tc_entry *tc_lookup(struct tcache *tc, uint64_t key, int depth, uint32_t tag)
{
	struct tc_entry *set = &tc->e[(size_t)tc_set(tc, key, depth) * tc->ways];
	for (uint32_t w = 0; w < tc->ways; w++) {
		struct tc_entry *e = &set[w];
		if (e->valid && e->key == key && e->depth == depth &&
		    (e->tag == tag || e->tag == TC_TAG_GLOBAL)) {
			e->stamp = ++tc->clock;
			return e;
		}
	}
	return NULL;
}

void tc_remove(struct sim *s, struct tcache *tc, struct tc_entry *e)
{
	SIM_BUG_ON(s, !e->valid);
	frame_of(&s->hw, e->frame)->tlb_refs--;
	e->valid = 0;
	uint32_t i = e->dense;
	uint32_t last = tc->dense[--tc->ndense];
	tc->dense[i] = last;
	tc->e[last].dense = i;
}

void tc_fill(struct sim *s, struct tcache *tc, uint64_t key, int depth, uint32_t tag,
	     uint32_t frame, uint8_t perm)
{
	uint32_t base = tc_set(tc, key, depth) * tc->ways;
	struct tc_entry *set = &tc->e[base];
	struct tc_entry *victim = NULL;
	for (uint32_t w = 0; w < tc->ways; w++) {
		struct tc_entry *e = &set[w];
		if (e->valid && e->key == key && e->depth == depth && e->tag == tag) {
			victim = e;
			break;
		}
	}
	if (victim) {
		tc_remove(s, tc, victim);
	} else {
		for (uint32_t w = 0; w < tc->ways; w++)
			if (!set[w].valid) {
				victim = &set[w];
				break;
			}
		if (!victim) {
			victim = &set[0];
			for (uint32_t w = 1; w < tc->ways; w++)
				if (set[w].stamp < victim->stamp)
					victim = &set[w];
			tc_remove(s, tc, victim);
		}
	}
	struct tc_entry *e = victim;
	e->key = key;
	e->depth = (uint8_t)depth;
	e->tag = tag;
	e->frame = frame;
	e->gen = frame_of(&s->hw, frame)->gen;
	e->perm = perm;
	e->valid = 1;
	e->stamp = ++tc->clock;
	e->dense = tc->ndense;
	tc->dense[tc->ndense++] = (uint32_t)(e - tc->e);
	frame_of(&s->hw, frame)->tlb_refs++;
}

/* ---- invalidation ---- */

/* Does some op address start + k*stride (< end) fall in [lo, lo+size)? */
static bool op_hits(const struct inv_op *op, uint64_t lo, uint64_t size)
{
	if (op->start >= op->end || lo >= op->end || lo + size <= op->start)
		return false;	/* disjoint: the common case, no division */
	unsigned __int128 a;
	if (lo <= op->start) {
		a = op->start;
	} else {
		uint64_t k = (lo - op->start + op->stride - 1) / op->stride;
		a = (unsigned __int128)op->start + (unsigned __int128)k * op->stride;
	}
	return a < (unsigned __int128)lo + size && a < op->end;
}

static bool leaf_matches(const struct sim *s, const struct inv_op *op, const struct tc_entry *e)
{
	const struct pt_geom *g = &s->hw.geom;
	switch (op->kind) {
	case INV_VA_LEAF:
	case INV_VA_ALL:
		if (e->tag != op->tag)
			return false;
		break;
	case INV_X86_INVLPG:
		if (e->tag != op->tag && e->tag != TC_TAG_GLOBAL)
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
	return op_hits(op, e->key << g->page_shift, g->page_size);
}

static bool walk_matches(const struct sim *s, const struct inv_op *op, const struct tc_entry *e)
{
	const struct pt_geom *g = &s->hw.geom;
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

static uint32_t inv_dense(struct sim *s, struct tcache *tc, const struct inv_op *op, bool leaf)
{
	uint32_t removed = 0;
	for (uint32_t i = tc->ndense; i-- > 0;) {
		struct tc_entry *e = &tc->e[tc->dense[i]];
		if (leaf ? leaf_matches(s, op, e) : walk_matches(s, op, e)) {
			tc_remove(s, tc, e);
			removed++;
		}
	}
	return removed;
}

/* Per-address form: look only in the sets the op addresses map to. */
static uint32_t inv_by_address(struct sim *s, struct tcache *tc, const struct inv_op *op,
			       bool leaf)
{
	const struct pt_geom *g = &s->hw.geom;
	uint32_t removed = 0;
	for (unsigned __int128 a = op->start; a < op->end; a += op->stride) {
		int d0 = leaf ? g->levels - 1 : 0;
		int d1 = leaf ? g->levels - 1 : g->levels - 2;
		for (int d = d0; d <= d1; d++) {
			uint64_t key = (uint64_t)a >> g->shift[d];
			struct tc_entry *set = &tc->e[(size_t)tc_set(tc, key, d) * tc->ways];
			for (uint32_t w = 0; w < tc->ways; w++) {
				struct tc_entry *e = &set[w];
				if (!e->valid || e->key != key || e->depth != d)
					continue;
				if (leaf ? leaf_matches(s, op, e) : walk_matches(s, op, e)) {
					tc_remove(s, tc, e);
					removed++;
				}
			}
		}
	}
	return removed;
}

static bool op_is_by_address(enum inv_kind k)
{
	return k == INV_VA_LEAF || k == INV_VA_ALL || k == INV_VA_LEAF_ANYTAG ||
	       k == INV_VA_ALL_ANYTAG || k == INV_X86_INVLPG;
}

uint32_t hw_invalidate_cpu(struct sim *s, int cpu, const struct inv_op *op)
{
	struct hw_cpu *hc = &s->hw.cpu[cpu];
	uint32_t removed = 0;
	uint64_t nops = 0;
	if (op_is_by_address(op->kind)) {
		if (op->start >= op->end)
			return 0;
		nops = (op->end - op->start - 1) / op->stride + 1;
	}
	/* leaf TLB */
	if (hc->tlb.ndense) {
		if (op_is_by_address(op->kind) && nops < hc->tlb.ndense)
			removed += inv_by_address(s, &hc->tlb, op, true);
		else
			removed += inv_dense(s, &hc->tlb, op, true);
	}
	/* walk cache */
	if (hc->wc.ndense && op->kind != INV_VA_LEAF && op->kind != INV_VA_LEAF_ANYTAG) {
		uint32_t levels = (uint32_t)s->hw.geom.levels;
		if (op->kind != INV_X86_INVLPG && op_is_by_address(op->kind) &&
		    nops * (levels - 1) < hc->wc.ndense)
			removed += inv_by_address(s, &hc->wc, op, false);
		else
			removed += inv_dense(s, &hc->wc, op, false);
	}
	return removed;
}
