/*
 * tcache.c - the translation caches: per-CPU leaf TLB and walk cache, both
 * set-associative with deterministic LRU (a per-cache stamp counter, lowest
 * way on ties), plus a dense list of valid entries for whole-cache scans.
 */
#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE 1	/* MAP_ANONYMOUS */
#endif
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "hw/hw.h"

/*
 * Large zeroed arrays (a CPU's TLB sets, its counting filter, the per-slot
 * CPU bitmaps) come straight from anonymous mmap: the kernel hands out zero
 * pages lazily, so a run touches only the sets it uses. Through calloc they
 * would be cleared eagerly once glibc's adaptive mmap threshold has risen
 * past them (it does after the first large free): a check of 1024 CPUs with
 * 1024-set TLBs then wrote ~370 MB per schedule, half a second each. Under
 * ASan calloc stays, so overflows of these arrays are still caught.
 */
#define HW_ZALLOC_MMAP_MIN (128u << 10)

void *hw_zalloc(size_t bytes)
{
#ifndef HW_ASAN
	if (bytes >= HW_ZALLOC_MMAP_MIN) {
		void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		return p == MAP_FAILED ? NULL : p;
	}
#endif
	return calloc(1, bytes ? bytes : 1);
}

void hw_zfree(void *p, size_t bytes)
{
	if (!p)
		return;
#ifndef HW_ASAN
	if (bytes >= HW_ZALLOC_MMAP_MIN) {
		munmap(p, bytes);
		return;
	}
#endif
	free(p);
}

int tcache_init(struct tcache *tc, uint32_t sets, uint32_t ways)
{
	memset(tc, 0, sizeof(*tc));
	if (sets == 0 || (sets & (sets - 1)) || ways == 0 || ways > 64)
		return -1;
	tc->sets = sets;
	tc->ways = ways;
	tc->e = hw_zalloc((size_t)sets * ways * sizeof(*tc->e));
	tc->dense = hw_zalloc((size_t)sets * ways * sizeof(*tc->dense));
	return tc->e && tc->dense ? 0 : -1;
}

int tcache_enable_filter(struct tcache *tc)
{
	uint32_t n = 1;
	while (n < 8 * tc->sets * tc->ways)
		n <<= 1;
	if (tc->ndense || n > TC_FILT_MAX_SLOTS)
		return -1;
	tc->filt = hw_zalloc(n * sizeof(*tc->filt));
	tc->filt_mask = n - 1;
	return tc->filt ? 0 : -1;
}

void tcache_destroy(struct tcache *tc)
{
	size_t n = (size_t)tc->sets * tc->ways;
	hw_zfree(tc->e, n * sizeof(*tc->e));
	hw_zfree(tc->dense, n * sizeof(*tc->dense));
	if (tc->filt)
		hw_zfree(tc->filt, ((size_t)tc->filt_mask + 1) * sizeof(*tc->filt));
	memset(tc, 0, sizeof(*tc));
}


/* a call for the rarer removals (not inlined into hw_access's walk) */
__attribute__((noinline)) void tc_remove(struct hw *hw, struct tcache *tc, struct tc_entry *e)
{
	tc_remove_inline(hw, tc, e);
}

/* tc_remove() of every entry tagged tag, in dense order from the end: the
 * same removals in the same order (so the same dense list is left), with the
 * cache's fields in registers and the per-tag and emptiness bits settled
 * once at the end (nothing observes the cache in between). kind is a
 * constant, so the TC_LEAF and TC_WALK copies test no pointer per entry. */
static inline __attribute__((always_inline)) uint32_t
remove_tag(struct hw *hw, struct tcache *tc, uint32_t tag, enum tc_kind kind)
{
	uint32_t *dense = tc->dense;
	struct tc_entry *ents = tc->e;
	uint64_t *reg_word = tc->reg_word, *slot_word = tc->slot_word;
	uint8_t *filt = tc->filt;
	/* in locals: the byte stores below (valid, filter counters) may alias
	 * any field, so fields read in the loop would be reloaded per entry */
	struct frame *frames = hw->frames;
	const uint32_t fmask = tc->filt_mask;
	const uint64_t bit = tc->busy_bit, nbit = ~bit;
	const uint32_t stride = tc->tag_stride;
	const bool regs = TC_HAS_REG(kind, tc);
	const bool filter = TC_HAS_FILT(kind, tc);
	/* each removal shrinks the dense list by one: removed = n0 - n */
	const uint32_t n0 = tc->ndense;
	uint32_t n = n0;
	for (uint32_t i = n; i-- > 0;) {
		struct tc_entry *e = &ents[dense[i]];
		if (e->tag != tag)
			continue;
		SIM_BUG_ON(hw->sim, !e->valid);
		const uint64_t key = e->key;
		frames[e->frame].tlb_refs--;
		e->valid = 0;
		if (regs) {
			uint32_t r = tc_region(key);
			if (--tc->regcnt[r] == 0)
				reg_word[(size_t)r * stride] &= nbit;
		}
		if (filter) {
			uint32_t k = tc_filt_hash(key, tag, fmask);
			uint8_t *c = &filt[k];
			if (*c != UINT8_MAX && --(*c) == 0 && TC_HAS_SLOT(kind, tc))
				slot_word[(size_t)k * stride] &= nbit;
		}
		/* e's dense index is i (dense[e->dense] == e). The last entry
		 * moves into it; when e is the last (every entry behind it was
		 * removed too: a whole-tag flush of a cache holding that tag
		 * only) the move is a no-op and skipped */
		if (--n != i) {
			uint32_t last = dense[n];
			dense[i] = last;
			ents[last].dense = i;
		}
	}
	const uint32_t removed = n0 - n;
	if (!removed)
		return 0;
	tc->ndense = n;
	uint32_t h = tag & (TC_TAGCNT - 1);
	if ((tc->tagcnt[h] -= removed) == 0 && tc->tag_word)
		tc->tag_word[(size_t)h * stride] &= nbit;
	if (!n && tc->busy_word)
		*tc->busy_word &= nbit;
	return removed;
}

uint32_t tc_remove_tag_leaf(struct hw *hw, struct tcache *tc, uint32_t tag)
{
	return remove_tag(hw, tc, tag, TC_LEAF);
}

uint32_t tc_remove_tag_walk(struct hw *hw, struct tcache *tc, uint32_t tag)
{
	return remove_tag(hw, tc, tag, TC_WALK);
}

uint32_t tc_remove_tag(struct hw *hw, struct tcache *tc, uint32_t tag)
{
	/* the copy by the pointers themselves (any cache may come here) */
	if (tc->reg_word && tc->filt && tc->slot_word)
		return tc_remove_tag_leaf(hw, tc, tag);
	if (!tc->reg_word && !tc->filt)
		return tc_remove_tag_walk(hw, tc, tag);
	return remove_tag(hw, tc, tag, TC_ANY);
}

/* The way a fill of set takes when it holds no entry to replace: the lowest
 * invalid way; else the least recently used way (lowest way on equal
 * stamps), evicted. */
static inline struct tc_entry *tc_victim(struct hw *hw, struct tcache *tc, struct tc_entry *set)
{
	const uint32_t ways = tc->ways;
	for (uint32_t w = 0; w < ways; w++)
		if (!set[w].valid)
			return &set[w];
	struct tc_entry *victim = &set[0];
	for (uint32_t w = 1; w < ways; w++)
		if (set[w].stamp < victim->stamp)
			victim = &set[w];
	tc_remove(hw, tc, victim);
	return victim;
}

void tc_fill(struct hw *hw, struct tcache *tc, uint64_t key, int depth, uint32_t tag,
	     uint32_t frame, uint8_t perm)
{
	struct tc_entry *set = &tc->e[(size_t)tc_set(tc, key, depth) * tc->ways];
	/* an entry of the same (key, depth, tag) is replaced; else tc_victim.
	 * The tag count and the leaf filter say exactly when no same entry can
	 * be held (the common case: a fill follows a lookup that missed). */
	struct tc_entry *victim = NULL;
	bool may_same = tc->tagcnt[tag & (TC_TAGCNT - 1)] &&
			(!tc->filt || tc->filt[tc_filt_slot(tc, key, tag)]);
	if (may_same)
		for (uint32_t w = 0; w < tc->ways; w++) {
			struct tc_entry *e = &set[w];
			if (e->key == key && e->valid && e->depth == depth && e->tag == tag) {
				victim = e;
				break;
			}
		}
	if (victim)
		tc_remove(hw, tc, victim);
	else
		victim = tc_victim(hw, tc, set);
	tc_install(hw, tc, victim, key, depth, tag, frame, perm);
}

/* tc_fill_miss of a full set: evict (kept out of line, so the common fill
 * into an invalid way makes no call and saves no registers) */
__attribute__((noinline)) void tc_fill_evict(struct hw *hw, struct tcache *tc, struct tc_entry *set,
					     uint64_t key, int depth, uint32_t tag, uint32_t frame,
					     uint8_t perm)
{
	tc_install(hw, tc, tc_victim(hw, tc, set), key, depth, tag, frame, perm);
}

void tc_fill_miss(struct hw *hw, struct tcache *tc, uint64_t key, int depth, uint32_t tag,
		  uint32_t frame, uint8_t perm)
{
	uint32_t fslot = tc->filt ? tc_filt_slot(tc, key, tag) : 0;
	tc_fill_miss_k(hw, tc, key, depth, tag, frame, perm, fslot, TC_ANY);
}


uint32_t tc_find_key_range(const struct tcache *tc, uint32_t from, uint64_t kfirst,
			   uint64_t kspan)
{
	const uint32_t n = tc->ndense;
	const uint32_t *dense = tc->dense;
	const struct tc_entry *e = tc->e;
	for (uint32_t i = from; i < n; i++)
		if (e[dense[i]].key - kfirst <= kspan)
			return i;
	return n;
}
