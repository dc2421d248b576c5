/*
 * test_tcache.c - the set-associative translation cache (tc_fill, tc_lookup,
 * tc_remove) and frame.tlb_refs.
 *
 * Rules checked (hw.h invariants):
 *  - replacement inside a set is LRU and deterministic: filling ways+1
 *    distinct entries into one set evicts the least recently used one, and a
 *    lookup hit makes an entry most recently used;
 *  - an entry is identified by (key, depth, tag); a global entry matches any
 *    tag; refilling the same identity replaces it (no duplicate, no eviction);
 *  - the dense list holds exactly the valid entries, each knowing its slot;
 *  - frame.tlb_refs counts the cache entries holding the frame: +1 per fill,
 *    -1 per removal or eviction;
 *  - hw.tlb_tagcpus / hw.wc_tagcpus row h has a CPU's bit exactly while that
 *    CPU's cache holds an entry whose tag hashes to h, and hw.tlb_slotcpus
 *    row k exactly while its leaf TLB's filter slot k is non-zero, so a
 *    broadcast invalidation that visits only the CPUs these name
 *    (hw_invalidate_bcast) misses no CPU that holds something it removes;
 *  - hw.tlb_regcpus row r has a CPU's bit exactly while its leaf TLB holds
 *    an entry of address region r (tc_region), so the CPUs named by
 *    hw_tlb_range_cpus_word for a key range include every CPU whose leaf
 *    TLB holds a key in it;
 *  - the shortcuts tc_fill_miss (a fill after a missed lookup) and
 *    tc_remove_tag leave the cache and the CPU bitmaps exactly as tc_fill
 *    and tc_remove of each entry of the tag (dense list from its end) do;
 *  - hw_init gives every CPU's leaf TLB all the bookkeeping (TC_LEAF) and
 *    its walk cache the tag rows only (TC_WALK), as hw_access assumes.
 *  - with the checker's pool (struct sim_stack_pool), a simulation's
 *    translation caches and page tables go to the next one of the same
 *    machine: its caches hold no entry, every counter, filter slot and CPU
 *    bitmap is zero, its tables are all none; a machine of another size
 *    does not take them; a filter counter that reached 255 (it sticks) marks
 *    its cache, and the kept filter is cleared in full.
 */
#include "test_util.h"

/* Presence without touching LRU state (tc_lookup refreshes recency). */
static const struct tc_entry *peek(const struct tcache *tc, uint64_t key, int depth,
				   uint32_t tag)
{
	for (uint32_t i = 0; i < tc->sets * tc->ways; i++) {
		const struct tc_entry *e = &tc->e[i];
		if (e->valid && e->key == key && e->depth == depth && e->tag == tag)
			return e;
	}
	return NULL;
}

static uint32_t count_valid(const struct tcache *tc)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < tc->sets * tc->ways; i++)
		n += tc->e[i].valid;
	return n;
}

/* The dense list indexes exactly the valid entries and each entry's ->dense
 * is its position in the list. */
static void assert_dense_consistent(const struct tcache *tc)
{
	assert_int_equal(tc->ndense, count_valid(tc));
	for (uint32_t i = 0; i < tc->ndense; i++) {
		const struct tc_entry *e = &tc->e[tc->dense[i]];
		assert_true(e->valid);
		assert_int_equal(e->dense, i);
		for (uint32_t j = 0; j < i; j++)
			assert_int_not_equal(tc->dense[j], tc->dense[i]);
	}
}

static struct sim *new_sim(void)
{
	return tsim_new("x86-24", 2, NESTED_FULLMM);
}

/* A one-set, 4-way cache: every key lands in the same set. */
static void test_lru_eviction_single_set(void **state)
{
	(void)state;
	struct sim *s = new_sim();
	struct tcache tc;
	assert_int_equal(tcache_init(&tc, 1, 4), 0);
	uint32_t f[5];
	for (int i = 0; i < 5; i++)
		f[i] = frame_alloc(hw_of(s), FRAME_DATA, 0);

	for (int k = 0; k < 4; k++)
		tc_fill(hw_of(s), &tc, 100 + k, 3, 1, f[k], 0);
	assert_int_equal(tc.ndense, 4);
	/* fill order 100,101,102,103: 100 is LRU; a hit on 100 makes 101 LRU */
	assert_non_null(tc_lookup(&tc, 100, 3, 1));
	tc_fill(hw_of(s), &tc, 104, 3, 1, f[4], 0);
	assert_int_equal(tc.ndense, 4);
	assert_null(peek(&tc, 101, 3, 1));
	assert_non_null(peek(&tc, 100, 3, 1));
	assert_non_null(peek(&tc, 102, 3, 1));
	assert_non_null(peek(&tc, 103, 3, 1));
	assert_non_null(peek(&tc, 104, 3, 1));
	/* the evicted entry's frame lost its reference */
	assert_int_equal(frame_of(hw_of(s), f[1])->tlb_refs, 0);
	assert_int_equal(frame_of(hw_of(s), f[4])->tlb_refs, 1);

	/* without intervening lookups the next victim is the oldest fill: 102 */
	tc_fill(hw_of(s), &tc, 105, 3, 1, f[1], 0);
	assert_null(peek(&tc, 102, 3, 1));
	assert_non_null(peek(&tc, 100, 3, 1));
	assert_int_equal(frame_of(hw_of(s), f[2])->tlb_refs, 0);
	assert_dense_consistent(&tc);

	tcache_destroy(&tc);
	tsim_free(s);
}

/* Which set of a `sets`-set cache a (key, depth) maps to, found with a
 * direct-mapped scratch cache (slot index == set). Independent of the hash. */
static uint32_t set_of(struct sim *s, uint32_t sets, uint64_t key, int depth, uint32_t frame)
{
	struct tcache tc;
	assert_int_equal(tcache_init(&tc, sets, 1), 0);
	tc_fill(hw_of(s), &tc, key, depth, 1, frame, 0);
	assert_int_equal(tc.ndense, 1);
	uint32_t set = tc.dense[0];
	tc_remove(hw_of(s), &tc, &tc.e[set]);
	tcache_destroy(&tc);
	return set;
}

/* Same rule on the real TLB geometry (sets x ways of the profile): ways+1
 * keys colliding in one set evict the LRU one; entries of other sets are
 * untouched. */
static void test_lru_eviction_real_geometry(void **state)
{
	(void)state;
	struct sim *s = new_sim();
	struct tcache *tc = &hw_of(s)->cpu[0].tlb;
	uint32_t sets = tc->sets, ways = tc->ways;
	assert_true(ways >= 2 && ways < 64);
	uint32_t f = frame_alloc(hw_of(s), FRAME_DATA, 0);

	uint64_t same[65], other = 0;
	uint32_t n = 0, target = set_of(s, sets, 0, 3, f);
	bool have_other = false;
	for (uint64_t k = 0; n < ways + 1 && k < 1000000; k++) {
		uint32_t st = set_of(s, sets, k, 3, f);
		if (st == target)
			same[n++] = k;
		else if (!have_other) {
			other = k;
			have_other = true;
		}
	}
	assert_int_equal(n, ways + 1);
	assert_true(have_other);

	tc_fill(hw_of(s), tc, other, 3, 1, f, 0);
	for (uint32_t i = 0; i < ways; i++)
		tc_fill(hw_of(s), tc, same[i], 3, 1, f, 0);
	assert_int_equal(tc->ndense, ways + 1);
	/* refresh the oldest of the set: same[1] becomes the LRU */
	assert_non_null(tc_lookup(tc, same[0], 3, 1));
	tc_fill(hw_of(s), tc, same[ways], 3, 1, f, 0);
	assert_int_equal(tc->ndense, ways + 1);
	assert_null(peek(tc, same[1], 3, 1));
	assert_non_null(peek(tc, same[0], 3, 1));
	for (uint32_t i = 2; i <= ways; i++)
		assert_non_null(peek(tc, same[i], 3, 1));
	/* the other set's entry is older than everything but was not touched */
	assert_non_null(peek(tc, other, 3, 1));
	assert_int_equal(frame_of(hw_of(s), f)->tlb_refs, ways + 1);
	assert_dense_consistent(tc);
	tsim_free(s);
}

/* Replacement is a function of the operation sequence only: two caches fed
 * the same sequence end with the same content in the same slots. */
static void test_deterministic(void **state)
{
	(void)state;
	struct sim *s = new_sim();
	struct tcache a, b;
	assert_int_equal(tcache_init(&a, 4, 2), 0);
	assert_int_equal(tcache_init(&b, 4, 2), 0);
	uint32_t f = frame_alloc(hw_of(s), FRAME_DATA, 0);
	for (int round = 0; round < 2; round++) {
		struct tcache *tc = round ? &b : &a;
		for (uint64_t k = 0; k < 200; k++) {
			tc_fill(hw_of(s), tc, (k * 7919) % 61, (int)(k % 3), 1, f, 0);
			if (k % 5 == 0)
				tc_lookup(tc, (k * 13) % 61, (int)(k % 3), 1);
		}
	}
	for (uint32_t i = 0; i < 8; i++) {
		assert_int_equal(a.e[i].valid, b.e[i].valid);
		if (a.e[i].valid) {
			assert_int_equal(a.e[i].key, b.e[i].key);
			assert_int_equal(a.e[i].depth, b.e[i].depth);
		}
	}
	/* 200 fills into 8 slots: the cache is full */
	assert_int_equal(a.ndense, 8);
	assert_int_equal(frame_of(hw_of(s), f)->tlb_refs, 16);
	assert_dense_consistent(&a);
	assert_dense_consistent(&b);
	tcache_destroy(&a);
	tcache_destroy(&b);
	tsim_free(s);
}

/* Identity is (key, depth, tag); a global entry matches every tag; a refill
 * of the same identity replaces the entry in place. */
static void test_identity_and_refill(void **state)
{
	(void)state;
	struct sim *s = new_sim();
	struct tcache tc;
	assert_int_equal(tcache_init(&tc, 1, 8), 0);
	uint32_t f1 = frame_alloc(hw_of(s), FRAME_DATA, 0);
	uint32_t f2 = frame_alloc(hw_of(s), FRAME_DATA, 0);

	tc_fill(hw_of(s), &tc, 42, 3, 1, f1, PTE_WRITE);
	assert_null(tc_lookup(&tc, 42, 3, 2));		/* other tag */
	assert_null(tc_lookup(&tc, 42, 2, 1));		/* other depth */
	assert_null(tc_lookup(&tc, 43, 3, 1));		/* other key */
	struct tc_entry *e = tc_lookup(&tc, 42, 3, 1);
	assert_non_null(e);
	assert_int_equal(e->frame, f1);
	assert_int_equal(e->perm, PTE_WRITE);
	assert_int_equal(e->gen, frame_of(hw_of(s), f1)->gen);

	/* refill of the same identity: replaced, not duplicated */
	tc_fill(hw_of(s), &tc, 42, 3, 1, f2, PTE_WRITE | PTE_DIRTY);
	assert_int_equal(tc.ndense, 1);
	e = tc_lookup(&tc, 42, 3, 1);
	assert_non_null(e);
	assert_int_equal(e->frame, f2);
	assert_int_equal(e->perm, PTE_WRITE | PTE_DIRTY);
	assert_int_equal(frame_of(hw_of(s), f1)->tlb_refs, 0);
	assert_int_equal(frame_of(hw_of(s), f2)->tlb_refs, 1);

	/* a global entry (x86 G bit, kernel mappings) matches any tag */
	tc_fill(hw_of(s), &tc, 7, 3, TC_TAG_GLOBAL, f1, 0);
	assert_non_null(tc_lookup(&tc, 7, 3, 1));
	assert_non_null(tc_lookup(&tc, 7, 3, 99));
	assert_dense_consistent(&tc);
	tcache_destroy(&tc);
	tsim_free(s);
}

/* tc_remove from the front, middle and end keeps the dense list exact. */
static void test_remove_keeps_dense_consistent(void **state)
{
	(void)state;
	struct sim *s = new_sim();
	struct tcache tc;
	assert_int_equal(tcache_init(&tc, 4, 4), 0);
	uint32_t f = frame_alloc(hw_of(s), FRAME_DATA, 0);
	for (uint64_t k = 0; k < 12; k++)
		tc_fill(hw_of(s), &tc, k, 3, 1, f, 0);
	uint32_t filled = tc.ndense;
	assert_true(filled >= 4);
	assert_int_equal(frame_of(hw_of(s), f)->tlb_refs, filled);
	assert_dense_consistent(&tc);

	/* remove the entry at dense[0], then the last, then a middle one */
	uint32_t removed = 0;
	tc_remove(hw_of(s), &tc, &tc.e[tc.dense[0]]);
	removed++;
	assert_dense_consistent(&tc);
	tc_remove(hw_of(s), &tc, &tc.e[tc.dense[tc.ndense - 1]]);
	removed++;
	assert_dense_consistent(&tc);
	tc_remove(hw_of(s), &tc, &tc.e[tc.dense[tc.ndense / 2]]);
	removed++;
	assert_dense_consistent(&tc);
	assert_int_equal(tc.ndense, filled - removed);
	assert_int_equal(frame_of(hw_of(s), f)->tlb_refs, filled - removed);

	/* remove everything */
	while (tc.ndense)
		tc_remove(hw_of(s), &tc, &tc.e[tc.dense[tc.ndense - 1]]);
	assert_dense_consistent(&tc);
	assert_int_equal(frame_of(hw_of(s), f)->tlb_refs, 0);
	/* a removed entry is no longer found */
	for (uint64_t k = 0; k < 12; k++)
		assert_null(tc_lookup(&tc, k, 3, 1));
	tcache_destroy(&tc);
	tsim_free(s);
}

/* The leaf TLB's counting filter never hides an entry it holds: after any
 * sequence of fills (with evictions), replacements and removals, every valid
 * (key, tag) reads "maybe"; once the cache is empty every counter is 0 again
 * (exact counting). Also with counters forced to stick at 255. */
static void test_filter_never_hides(void **state)
{
	(void)state;
	struct sim *s = new_sim();
	struct tcache tc;
	assert_int_equal(tcache_init(&tc, 8, 2), 0);
	assert_int_equal(tcache_enable_filter(&tc), 0);
	uint32_t f = frame_alloc(hw_of(s), FRAME_DATA, 0);
	uint64_t x = 12345;
	for (int round = 0; round < 2000; round++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		uint64_t key = (x >> 33) % 64;
		uint32_t tag = (uint32_t)((x >> 20) % 3);
		if ((x >> 60) < 11 || !tc.ndense)
			tc_fill(hw_of(s), &tc, key, 3, tag, f, 0);
		else
			tc_remove(hw_of(s), &tc, &tc.e[tc.dense[(x >> 8) % tc.ndense]]);
		for (uint32_t i = 0; i < tc.ndense; i++) {
			const struct tc_entry *e = &tc.e[tc.dense[i]];
			assert_true(tc_filt_maybe(&tc, e->key, e->tag));
		}
		if (round == 1000)	/* a saturated counter must stay "maybe" */
			for (uint32_t i = 0; i < tc.ndense; i++) {
				const struct tc_entry *e = &tc.e[tc.dense[i]];
				tc.filt[tc_filt_slot(&tc, e->key, e->tag)] = UINT8_MAX;
			}
	}
	while (tc.ndense)
		tc_remove(hw_of(s), &tc, &tc.e[tc.dense[tc.ndense - 1]]);
	uint32_t nonzero = 0, stuck = 0;
	for (uint32_t i = 0; i <= tc.filt_mask; i++) {
		nonzero += tc.filt[i] != 0;
		stuck += tc.filt[i] == UINT8_MAX;
	}
	assert_int_equal(nonzero, stuck);	/* only the stuck ones remain */
	tcache_destroy(&tc);
	tsim_free(s);
}

/* CPU a's and CPU b's bits agree in every row of a per-CPU bitmap */
static void assert_rows_agree(const uint64_t *rows, size_t nrows, uint32_t stride, int a, int b)
{
	for (size_t r = 0; r < nrows; r++) {
		uint64_t w = rows[r * stride];
		assert_int_equal((w >> a) & 1, (w >> b) & 1);
	}
}

/* The shortcuts leave exactly what the generic forms leave: tc_fill_miss
 * after a missed tc_lookup is tc_fill (same way, evictions, stamps, dense
 * order, counts, filter, CPU bitmaps), and tc_remove_tag is tc_remove of
 * each entry of the tag from the dense list's end. CPU 0's caches take the
 * shortcuts, CPU 1's (same geometry) the generic forms: the leaf TLBs (every
 * bookkeeping kept) and the walk caches (no regions, filter or slot rows),
 * each with its own copy of tc_remove_tag. */
static void shortcuts_match_generic(struct hw *hw, struct tcache *fast, struct tcache *slow,
				    bool leafc)
{
	int leaf = hw->geom.levels - 1;
	uint32_t f[4];
	for (int i = 0; i < 4; i++)
		f[i] = frame_alloc(hw, leafc ? FRAME_DATA : FRAME_PGTABLE, 1);
	const uint32_t tags[4] = {1, 2, 65, TC_TAG_GLOBAL};	/* 1 and 65 share a tag hash */
	uint64_t nkeys = 3ull * fast->sets * fast->ways, x = 777;
	for (int round = 0; round < 60000; round++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		uint32_t tag = tags[(x >> 20) % 4];
		if ((x >> 56) == 0) {
			uint32_t n = tc_remove_tag(hw, fast, tag), m = 0;
			for (uint32_t i = slow->ndense; i-- > 0;)
				if (slow->e[slow->dense[i]].tag == tag) {
					tc_remove(hw, slow, &slow->e[slow->dense[i]]);
					m++;
				}
			assert_int_equal(n, m);
		} else {
			uint64_t key = (x >> 30) % nkeys;
			int depth = leafc ? leaf : (int)((x >> 4) % (uint64_t)leaf);
			uint32_t fr = f[(x >> 10) % 4];
			const struct tc_entry *a = tc_lookup(fast, key, depth, tag);
			const struct tc_entry *b = tc_lookup(slow, key, depth, tag);
			assert_int_equal(a ? a - fast->e : -1, b ? b - slow->e : -1);
			if (!a)
				tc_fill_miss(hw, fast, key, depth, tag, fr, (uint8_t)(x & 0xc));
			else
				tc_fill(hw, fast, key, depth, tag, fr, (uint8_t)(x & 0xc));
			tc_fill(hw, slow, key, depth, tag, fr, (uint8_t)(x & 0xc));
		}
		if (round % 97)
			continue;
		size_t n = (size_t)fast->sets * fast->ways;
		assert_memory_equal(fast->e, slow->e, n * sizeof(*fast->e));
		assert_int_equal(fast->ndense, slow->ndense);
		assert_int_equal(fast->clock, slow->clock);
		assert_memory_equal(fast->dense, slow->dense, fast->ndense * sizeof(*fast->dense));
		assert_memory_equal(fast->tagcnt, slow->tagcnt, sizeof(fast->tagcnt));
		assert_memory_equal(fast->regcnt, slow->regcnt, sizeof(fast->regcnt));
		if (leafc) {
			assert_memory_equal(fast->filt, slow->filt, (size_t)fast->filt_mask + 1);
			assert_rows_agree(hw->tlb_tagcpus, TC_TAGCNT, hw->cpu_words, 0, 1);
			assert_rows_agree(hw->tlb_regcpus, TC_NREGIONS, hw->cpu_words, 0, 1);
			assert_rows_agree(hw->tlb_slotcpus, (size_t)fast->filt_mask + 1,
					  hw->cpu_words, 0, 1);
			assert_rows_agree(hw->tlb_busy, 1, 1, 0, 1);
		} else {
			assert_null(fast->filt);
			assert_rows_agree(hw->wc_tagcpus, TC_TAGCNT, hw->cpu_words, 0, 1);
		}
	}
	assert_dense_consistent(fast);
	/* the frames are held by these two caches only */
	for (int i = 0; i < 4; i++) {
		uint32_t held = 0;
		for (uint32_t j = 0; j < fast->ndense; j++)
			held += fast->e[fast->dense[j]].frame == f[i];
		for (uint32_t j = 0; j < slow->ndense; j++)
			held += slow->e[slow->dense[j]].frame == f[i];
		assert_int_equal(frame_of(hw, f[i])->tlb_refs, held);
	}
}

static void test_shortcuts_match_generic(void **state)
{
	(void)state;
	struct sim *s = new_sim();
	struct hw *hw = hw_of(s);
	shortcuts_match_generic(hw, &hw->cpu[0].tlb, &hw->cpu[1].tlb, true);
	shortcuts_match_generic(hw, &hw->cpu[0].wc, &hw->cpu[1].wc, false);
	tsim_free(s);
}

/* hw_access uses the leaf TLB as a TC_LEAF cache and the walk cache as a
 * TC_WALK one (hw.h): hw_init must configure every CPU's caches so. */
static void test_cache_kinds(void **state)
{
	(void)state;
	struct sim *s = new_sim();
	struct hw *hw = hw_of(s);
	for (int c = 0; c < hw->nr_cpus; c++) {
		const struct tcache *t = &hw->cpu[c].tlb, *w = &hw->cpu[c].wc;
		assert_non_null(t->busy_word);
		assert_non_null(t->tag_word);
		assert_non_null(t->reg_word);
		assert_non_null(t->filt);
		assert_non_null(t->slot_word);
		assert_null(w->busy_word);
		assert_non_null(w->tag_word);
		assert_null(w->reg_word);
		assert_null(w->filt);
		assert_null(w->slot_word);
	}
	tsim_free(s);
}

/* A CPU cache as a new one: no valid entry, every count and filter slot 0 */
static void assert_cache_clear(const struct tcache *tc)
{
	assert_int_equal(tc->ndense, 0);
	assert_int_equal(count_valid(tc), 0);
	assert_int_equal(tc->clock, 0);
	assert_int_equal(tc->filt_sat, 0);
	for (int h = 0; h < 64; h++) {
		assert_int_equal(tc->tagcnt[h], 0);
		assert_int_equal(tc->regcnt[h], 0);
	}
	for (uint32_t k = 0; tc->filt && k <= tc->filt_mask; k++)
		assert_int_equal(tc->filt[k], 0);
}

static void assert_machine_clear(const struct hw *hw)
{
	for (int c = 0; c < hw->nr_cpus; c++) {
		assert_cache_clear(&hw->cpu[c].tlb);
		assert_cache_clear(&hw->cpu[c].wc);
	}
	const size_t w = hw->cpu_words;
	for (size_t j = 0; j < w; j++)
		assert_true(hw->tlb_busy[j] == 0);
	for (size_t j = 0; j < TC_TAGCNT * w; j++)
		assert_true(hw->tlb_tagcpus[j] == 0 && hw->wc_tagcpus[j] == 0);
	for (size_t j = 0; j < TC_NREGIONS * w; j++)
		assert_true(hw->tlb_regcpus[j] == 0);
	for (size_t j = 0; j < hw->slotcpus_bytes / sizeof(uint64_t); j++)
		assert_true(hw->tlb_slotcpus[j] == 0);
}

static struct sim *pool_sim(int cpus, struct sim_stack_pool *pool)
{
	struct tlbsim_config c0;
	tlbsim_config_init(&c0);
	return tsim_new_pool("falkor-46", cpus, &c0.policy, NULL, pool);
}

static void kept_thread(struct sim *s, struct sim_thread *t)
{
	(void)t;
	tsim_map_written(s, 3);	/* page tables and TLB entries left in use */
}

/* The checker's pool hands one simulation's caches and tables to the next
 * of the same machine, cleared; another machine size does not take them. */
static void test_pool_keeps_caches_cleared(void **state)
{
	(void)state;
	struct sim_stack_pool pool;
	memset(&pool, 0, sizeof(pool));
	struct sim *s = pool_sim(4, &pool);
	tsim_spawn(s, kept_thread, NULL, 1);
	tsim_run(s);
	struct hw *hw = hw_of(s);
	const struct tc_entry *e0 = hw->cpu[1].tlb.e;
	assert_true(hw->cpu[1].tlb.ndense > 0);
	/* a saturated filter counter of cpu 2 (it never comes down again) */
	struct tcache *t2 = &hw->cpu[2].tlb;
	uint32_t f = frame_alloc(hw, FRAME_DATA, 0);
	uint32_t k = tc_filt_slot(t2, 0x123, 7);
	t2->filt[k] = UINT8_MAX - 1;
	tc_fill(hw, t2, 0x123, hw->geom.levels - 1, 7, f, 0);
	assert_int_equal(t2->filt[k], UINT8_MAX);
	assert_int_equal(t2->filt_sat, 1);
	tsim_free(s);
	assert_non_null(pool.caches);
	assert_true(pool.tables.n > 0);
	uint32_t ntables = pool.tables.n;

	/* the same machine: the same arrays, cleared; tables from the pool */
	s = pool_sim(4, &pool);
	hw = hw_of(s);
	assert_null(pool.caches);
	assert_ptr_equal(hw->cpu[1].tlb.e, e0);
	assert_machine_clear(hw);
	/* the new machine's own tables (its pgd) came from the pool too */
	assert_true(pool.tables.n > 0 && pool.tables.n < ntables);
	uint32_t before = pool.tables.n;
	uint32_t tf = frame_alloc(hw, FRAME_PGTABLE, 1);
	assert_int_equal(pool.tables.n, before - 1);
	const pte_t *tab = frame_of(hw, tf)->table;
	for (uint64_t i = 0; i < hw->geom.ptrs_per_pte; i++)
		assert_true(tab[i] == 0);
	for (uint64_t i = 0; i < hw->geom.ptrs_per_pte / 64; i++)
		assert_true(table_used_map(&hw->geom, frame_of(hw, tf)->table)[i] == 0);
	frame_free(hw, tf);
	/* and it works as a new one */
	tsim_spawn(s, kept_thread, NULL, 0);
	tsim_run(s);
	assert_true(hw->cpu[0].tlb.ndense > 0);
	tsim_free(s);
	assert_non_null(pool.caches);

	/* another size of machine builds its own */
	s = pool_sim(2, &pool);
	assert_non_null(pool.caches);
	assert_ptr_not_equal(hw_of(s)->cpu[1].tlb.e, e0);
	assert_machine_clear(hw_of(s));
	tsim_free(s);
	sim_stack_pool_free(&pool);
	assert_null(pool.caches);
	assert_int_equal(pool.tables.n, 0);
}

/* tlb_refs counts entries on all caches (all CPUs, TLB and walk cache). */
static void test_tlb_refs_across_caches(void **state)
{
	(void)state;
	struct sim *s = new_sim();
	uint32_t f = frame_alloc(hw_of(s), FRAME_PGTABLE, 1);
	assert_int_equal(frame_of(hw_of(s), f)->tlb_refs, 0);
	tc_fill(hw_of(s), &hw_of(s)->cpu[0].wc, 5, 0, 1, f, 0);
	tc_fill(hw_of(s), &hw_of(s)->cpu[1].wc, 5, 0, 1, f, 0);
	tc_fill(hw_of(s), &hw_of(s)->cpu[1].wc, 6, 0, 1, f, 0);
	tc_fill(hw_of(s), &hw_of(s)->cpu[1].tlb, 6, 3, 1, f, 0);
	assert_int_equal(frame_of(hw_of(s), f)->tlb_refs, 4);
	tc_remove(hw_of(s), &hw_of(s)->cpu[1].wc, tc_lookup(&hw_of(s)->cpu[1].wc, 5, 0, 1));
	assert_int_equal(frame_of(hw_of(s), f)->tlb_refs, 3);
	/* an invalidation removing entries drops their references too */
	struct inv_op all = {.kind = INV_ALL};
	assert_int_equal(hw_invalidate_cpu(hw_of(s), 1, &all), 2);
	assert_int_equal(frame_of(hw_of(s), f)->tlb_refs, 1);
	assert_int_equal(hw_invalidate_cpu(hw_of(s), 0, &all), 1);
	assert_int_equal(frame_of(hw_of(s), f)->tlb_refs, 0);
	tsim_free(s);
}

static bool tagbit(const uint64_t *rows, const struct hw *hw, uint32_t h, int cpu)
{
	return rows[(size_t)h * hw->cpu_words + (uint32_t)cpu / 64] >> (cpu % 64) & 1;
}

static void test_tag_cpus_exact(void **state)
{
	(void)state;
	struct sim *s = tsim_new("x86-24", 70, NESTED_FULLMM);	/* two bitmap words */
	struct hw *hw = hw_of(s);
	assert_int_equal(hw->cpu_words, 2);
	uint32_t f = frame_alloc(hw, FRAME_DATA, 0);
	/* tags 3 and 67 share a hash row; TC_TAG_GLOBAL has its own */
	const uint32_t tags[] = {3, 67, 5, TC_TAG_GLOBAL};
	uint64_t x = 99;
	for (int round = 0; round < 6000; round++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		int cpu = (int)((x >> 40) % (uint64_t)hw->nr_cpus);
		struct tcache *tc = (x >> 35) & 1 ? &hw->cpu[cpu].wc : &hw->cpu[cpu].tlb;
		uint32_t tag = tags[(x >> 30) % 4];
		int depth = tc == &hw->cpu[cpu].wc ? 1 : hw->geom.levels - 1;
		/* 40 keys 97 pages apart: several address regions */
		if ((x >> 60) < 9 || !tc->ndense)
			tc_fill(hw, tc, (x >> 8) % 40 * 97, depth, tag, f, 0);
		else if ((x >> 60) < 15)
			tc_remove(hw, tc, &tc->e[tc->dense[(x >> 8) % tc->ndense]]);
		else if ((x >> 62) == 3 && (x & 1)) {
			/* a broadcast of a few addresses (by hw.tlb_slotcpus) or
			 * many (by tag) leaves nothing it removes anywhere */
			uint64_t ps = 1ull << hw->geom.page_shift, k0 = (x >> 4) % 40 * 97;
			uint64_t n = (x >> 23) & 1 ? 1 + (x >> 10) % 70 : 1 + (x >> 10) % 5000;
			struct inv_op op = {.kind = (x >> 21) & 1 ? INV_VA_ALL : INV_VA_LEAF,
					    .tag = tag == TC_TAG_GLOBAL ? 67 : tag,
					    .start = k0 * ps, .end = (k0 + n) * ps,
					    .stride = ps};
			hw_invalidate_bcast(hw, &op, NULL, NULL);
			for (int c = 0; c < hw->nr_cpus; c++)
				assert_int_equal(hw_invalidate_cpu(hw, c, &op), 0);
		} else {
			/* an invalidation of one tag: CPUs outside the candidate
			 * set must hold nothing it removes */
			struct inv_op op = {.kind = (x >> 20) & 1 ? INV_TAG : INV_X86_INVLPG,
					    .tag = tag == TC_TAG_GLOBAL ? 5 : tag,
					    .start = 0, .end = 40ull << hw->geom.page_shift,
					    .stride = 1ull << hw->geom.page_shift};
			for (int c = 0; c < hw->nr_cpus; c++)
				if (!(hw_inv_cpus_word(hw, &op, (uint32_t)c / 64) >> (c % 64) & 1))
					assert_int_equal(hw_invalidate_cpu(hw, c, &op), 0);
		}
		if (round % 500 == 0)
			for (int c = 0; c < hw->nr_cpus; c++)
				for (uint32_t k = 0; k <= hw->cpu[c].tlb.filt_mask; k++)
					assert_int_equal(tagbit(hw->tlb_slotcpus, hw, k, c),
							 hw->cpu[c].tlb.filt[k] != 0);
		/* the region rows are exact, and a key range names every CPU
		 * holding a key in it */
		uint64_t r0 = (x >> 5) % 4000, r1 = r0 + (x >> 17) % 2000;
		for (int c = 0; c < hw->nr_cpus; c++) {
			const struct tcache *lt = &hw->cpu[c].tlb;
			uint32_t per[TC_NREGIONS] = {0};
			bool in_range = false;
			for (uint32_t i = 0; i < lt->ndense; i++) {
				uint64_t k = lt->e[lt->dense[i]].key;
				per[tc_region(k)]++;
				in_range |= k >= r0 && k <= r1;
			}
			for (uint32_t r = 0; r < TC_NREGIONS; r++) {
				assert_int_equal(lt->regcnt[r], per[r]);
				assert_int_equal(tagbit(hw->tlb_regcpus, hw, r, c), per[r] != 0);
			}
			if (in_range)
				assert_true(hw_tlb_range_cpus_word(hw, r0, r1, (uint32_t)c / 64) >>
					    (c % 64) & 1);
		}
		for (int c = 0; c < hw->nr_cpus; c++)
			for (uint32_t h = 0; h < TC_TAGCNT; h++) {
				assert_int_equal(tagbit(hw->tlb_tagcpus, hw, h, c),
						 hw->cpu[c].tlb.tagcnt[h] != 0);
				assert_int_equal(tagbit(hw->wc_tagcpus, hw, h, c),
						 hw->cpu[c].wc.tagcnt[h] != 0);
			}
	}
	tsim_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lru_eviction_single_set),
		cmocka_unit_test(test_lru_eviction_real_geometry),
		cmocka_unit_test(test_deterministic),
		cmocka_unit_test(test_identity_and_refill),
		cmocka_unit_test(test_remove_keeps_dense_consistent),
		cmocka_unit_test(test_tlb_refs_across_caches),
		cmocka_unit_test(test_filter_never_hides),
		cmocka_unit_test(test_shortcuts_match_generic),
		cmocka_unit_test(test_cache_kinds),
		cmocka_unit_test(test_pool_keeps_caches_cleared),
		cmocka_unit_test(test_tag_cpus_exact),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
