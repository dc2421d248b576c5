/*
 * test_invalidate.c - the exact effect of each invalidation primitive
 * (hw_invalidate_cpu) on TLB and walk caches populated by real MMU walks.
 *
 * Layout (per geometry): a thread on CPU 1 maps and writes
 *   A, A+page, A+2*page  (one PTE table),
 *   B = A + 4*PMD_SIZE   (same upper tables as A, its own PTE table),
 *   C = A + 1 TiB rounded up to PGDIR_SIZE (the start of a different
 *       top-level entry: nothing shared with A),
 * so the CPU caches 5 leaf entries and these walk entries (one per non-leaf
 * level used): A's chain (levels-1 entries), B's PMD-level entry (the upper
 * ones are A's) and C's chain (levels-1 entries).
 *
 * Rules (kernel-model 3.1, 3.2, 4.1; Intel SDM 3A 4.10.4.1):
 *   VALE1IS   leaf of VA in ASID only; walk cache kept (the 000 bug).
 *   VAE1IS    leaf + walk entries used to translate VA, in ASID only.
 *   ASIDE1IS  everything of the ASID.   VMALLE1IS  everything.
 *   VAALE1IS  leaf of VA, any ASID; walk cache kept.
 *   INVLPG    leaf of VA in the current PCID plus global leaf of VA, and ALL
 *             paging-structure-cache entries of the current PCID.
 *   CR3 load  (no NOFLUSH) all non-global entries of the PCID.
 *   A range op acts at the op addresses start, start+stride, ... only.
 */
#include "test_util.h"

#define CPU 1
#define FOREIGN_DELTA 5		/* another ASID / PCID = own tag + 5 */

struct layout {
	uint64_t A, B, C, page, pmd;
	bool ok;
};

static void layout_init(struct sim *s, struct layout *L)
{
	const struct pt_geom *g = &hw_of(s)->geom;
	L->page = g->page_size;
	L->pmd = 1ull << g->pmd_shift;
	uint64_t pgdir = 1ull << g->shift[0];
	L->A = 1ull << 40;
	L->B = L->A + 4 * L->pmd;
	/* C starts a top-level region at or above A + 1 TiB, so [A, C) touches
	 * none of the regions C's walk entries cover */
	L->C = (L->A + (1ull << 40) + pgdir - 1) & ~(pgdir - 1);
	L->ok = false;
}

static void populate_fn(struct sim *s, struct sim_thread *t)
{
	struct layout *L = t->arg;
	if (sys_mmap(s, L->A, 3 * L->page, TLBSIM_MAP_PRIVATE) != L->A ||
	    sys_mmap(s, L->B, L->page, TLBSIM_MAP_PRIVATE) != L->B ||
	    sys_mmap(s, L->C, L->page, TLBSIM_MAP_PRIVATE) != L->C)
		return;
	uint64_t va[] = {L->A, L->A + L->page, L->A + 2 * L->page, L->B, L->C};
	for (int i = 0; i < 5; i++)
		if (user_access(s, va[i], true) != 0)
			return;
	L->ok = true;
}

/* ---- cache inspection without touching LRU state ---- */
static const struct tc_entry *find(const struct tcache *tc, uint64_t key, int depth,
				   uint32_t tag)
{
	for (uint32_t i = 0; i < tc->ndense; i++) {
		const struct tc_entry *e = &tc->e[tc->dense[i]];
		if (e->key == key && e->depth == depth && e->tag == tag)
			return e;
	}
	return NULL;
}

static bool has_leaf(struct sim *s, uint64_t va, uint32_t tag)
{
	const struct pt_geom *g = &hw_of(s)->geom;
	return find(&hw_of(s)->cpu[CPU].tlb, va >> g->page_shift, g->levels - 1, tag) != NULL;
}

static bool has_walk(struct sim *s, uint64_t va, int depth, uint32_t tag)
{
	return find(&hw_of(s)->cpu[CPU].wc, va >> hw_of(s)->geom.shift[depth], depth, tag) != NULL;
}

/* all walk entries used to translate va (depth 0 .. levels-2) */
static bool has_chain(struct sim *s, uint64_t va, uint32_t tag)
{
	for (int d = 0; d < hw_of(s)->geom.levels - 1; d++)
		if (!has_walk(s, va, d, tag))
			return false;
	return true;
}

static bool has_no_chain(struct sim *s, uint64_t va, uint32_t tag)
{
	for (int d = 0; d < hw_of(s)->geom.levels - 1; d++)
		if (has_walk(s, va, d, tag))
			return false;
	return true;
}

static int pmd_depth(struct sim *s)
{
	return hw_of(s)->geom.levels - 2;	/* walk entry pointing at a PTE table */
}

static uint32_t nr_walk_expected(struct sim *s)
{
	uint32_t n = (uint32_t)hw_of(s)->geom.levels - 1;
	return n + 1 + n;		/* A chain, B's PMD-level entry, C chain */
}

/*
 * Build a sim of `profile`, populate it from a thread on CPU, and check the
 * populated state. Returns the sim; *tag is the tag the MMU used.
 * With `foreign`, also plant a leaf and a PMD-level walk entry for A under
 * another tag.
 */
static struct sim *populated(const char *profile, struct layout *L, uint32_t *tag,
			     bool foreign)
{
	struct sim *s = tsim_new(profile, 4, NESTED_FULLMM);
	layout_init(s, L);
	tsim_spawn(s, populate_fn, L, CPU);
	tsim_run(s);
	assert_true(L->ok);
	*tag = machine_of(s)->arch->user_tag(s, CPU);
	if (machine_of(s)->profile->arch == ARCH_ARM64)
		assert_int_equal(*tag, tsim_mm(s, 0)->context.asid);

	/* the walks cached exactly the leaves and walk entries they used */
	assert_int_equal(hw_of(s)->cpu[CPU].tlb.ndense, 5);
	assert_int_equal(hw_of(s)->cpu[CPU].wc.ndense, nr_walk_expected(s));
	assert_true(has_leaf(s, L->A, *tag));
	assert_true(has_leaf(s, L->A + L->page, *tag));
	assert_true(has_leaf(s, L->A + 2 * L->page, *tag));
	assert_true(has_leaf(s, L->B, *tag));
	assert_true(has_leaf(s, L->C, *tag));
	assert_true(has_chain(s, L->A, *tag));
	assert_true(has_chain(s, L->B, *tag));
	assert_true(has_chain(s, L->C, *tag));
	/* other CPUs cache nothing */
	for (int c = 0; c < s->nr_cpus; c++)
		if (c != CPU)
			assert_int_equal(hw_of(s)->cpu[c].tlb.ndense + hw_of(s)->cpu[c].wc.ndense, 0);

	if (foreign) {
		const struct pt_geom *g = &hw_of(s)->geom;
		uint32_t f = frame_alloc(hw_of(s), FRAME_DATA, 0);
		tc_fill(hw_of(s), &hw_of(s)->cpu[CPU].tlb, L->A >> g->page_shift, g->levels - 1,
			*tag + FOREIGN_DELTA, f, 0);
		tc_fill(hw_of(s), &hw_of(s)->cpu[CPU].wc, L->A >> g->shift[pmd_depth(s)], pmd_depth(s),
			*tag + FOREIGN_DELTA, f, 0);
		assert_true(has_leaf(s, L->A, *tag + FOREIGN_DELTA));
		assert_true(has_walk(s, L->A, pmd_depth(s), *tag + FOREIGN_DELTA));
	}
	return s;
}

static struct inv_op op_page(struct sim *s, enum inv_kind kind, uint32_t tag, uint64_t va)
{
	struct inv_op op = {.kind = kind, .tag = tag, .start = va,
			    .end = va + hw_of(s)->geom.page_size, .stride = hw_of(s)->geom.page_size};
	return op;
}

static const char *const arm64_profiles[] = {"arm64-4k", "arm64-16k", "falkor-46"};
#define NR_ARM64 (sizeof(arm64_profiles) / sizeof(arm64_profiles[0]))

/* VALE1IS va, asid: removes the leaf of va in the ASID only; every walk-cache
 * entry stays (leaf-only invalidation keeps the walk cache: the 000 bug). */
static void test_vale1is_leaf_only(void **state)
{
	(void)state;
	for (size_t p = 0; p < NR_ARM64; p++) {
		struct layout L;
		uint32_t tag;
		struct sim *s = populated(arm64_profiles[p], &L, &tag, true);
		uint32_t wc_before = hw_of(s)->cpu[CPU].wc.ndense;
		struct inv_op op = op_page(s, INV_VA_LEAF, tag, L.A);
		assert_int_equal(hw_invalidate_cpu(hw_of(s), CPU, &op), 1);
		assert_false(has_leaf(s, L.A, tag));
		assert_true(has_leaf(s, L.A + L.page, tag));
		assert_true(has_leaf(s, L.B, tag));
		assert_true(has_leaf(s, L.C, tag));
		assert_true(has_leaf(s, L.A, tag + FOREIGN_DELTA));	/* other ASID */
		assert_int_equal(hw_of(s)->cpu[CPU].wc.ndense, wc_before);
		assert_true(has_chain(s, L.A, tag));
		tsim_free(s);
	}
}

/* VAE1IS va, asid: removes the leaf and the walk entries used to translate
 * va in that ASID. B shares A's upper tables, so only B's PMD-level entry
 * survives; C (different top-level entry) is untouched; the other ASID too. */
static void test_vae1is_leaf_and_walk(void **state)
{
	(void)state;
	for (size_t p = 0; p < NR_ARM64; p++) {
		struct layout L;
		uint32_t tag;
		struct sim *s = populated(arm64_profiles[p], &L, &tag, true);
		int nwalk = hw_of(s)->geom.levels - 1;
		struct inv_op op = op_page(s, INV_VA_ALL, tag, L.A);
		assert_int_equal(hw_invalidate_cpu(hw_of(s), CPU, &op), 1 + nwalk);
		assert_false(has_leaf(s, L.A, tag));
		assert_true(has_no_chain(s, L.A, tag));
		assert_true(has_leaf(s, L.A + L.page, tag));
		assert_true(has_leaf(s, L.A + 2 * L.page, tag));
		assert_true(has_leaf(s, L.B, tag));
		assert_true(has_walk(s, L.B, pmd_depth(s), tag));
		assert_true(has_leaf(s, L.C, tag));
		assert_true(has_chain(s, L.C, tag));
		assert_true(has_leaf(s, L.A, tag + FOREIGN_DELTA));
		assert_true(has_walk(s, L.A, pmd_depth(s), tag + FOREIGN_DELTA));
		assert_int_equal(hw_of(s)->cpu[CPU].wc.ndense, (uint32_t)nwalk + 1 + 1);
		tsim_free(s);
	}
}

/* VAE1IS over [A, A + 2*PMD_SIZE) with stride PMD_SIZE (what a gather that
 * only freed a PTE table emits): op addresses are A and A+PMD_SIZE only, so
 * the walk entries for A's region go, the leaf at A goes, but the leaves at
 * A+page and A+2*page, although inside [start, end), stay. */
static void test_range_with_pmd_stride(void **state)
{
	(void)state;
	for (size_t p = 0; p < NR_ARM64; p++) {
		struct layout L;
		uint32_t tag;
		struct sim *s = populated(arm64_profiles[p], &L, &tag, false);
		int nwalk = hw_of(s)->geom.levels - 1;
		struct inv_op op = {.kind = INV_VA_ALL, .tag = tag, .start = L.A,
				    .end = L.A + 2 * L.pmd, .stride = L.pmd};
		assert_int_equal(hw_invalidate_cpu(hw_of(s), CPU, &op), 1 + nwalk);
		assert_false(has_leaf(s, L.A, tag));
		assert_true(has_no_chain(s, L.A, tag));
		assert_true(has_leaf(s, L.A + L.page, tag));
		assert_true(has_leaf(s, L.A + 2 * L.page, tag));
		assert_true(has_leaf(s, L.B, tag));			/* outside the range */
		assert_true(has_walk(s, L.B, pmd_depth(s), tag));
		assert_true(has_chain(s, L.C, tag));
		tsim_free(s);

		/* A longer range, [A, A + 64*PMD_SIZE), has more op addresses
		 * than cached entries; B = A + 4*PMD_SIZE is now an op address,
		 * A+page and A+2*page still are not. */
		s = populated(arm64_profiles[p], &L, &tag, false);
		struct inv_op lop = {.kind = INV_VA_ALL, .tag = tag, .start = L.A,
				     .end = L.A + 64 * L.pmd, .stride = L.pmd};
		assert_int_equal(hw_invalidate_cpu(hw_of(s), CPU, &lop), 2 + nwalk + 1);
		assert_false(has_leaf(s, L.A, tag));
		assert_false(has_leaf(s, L.B, tag));
		assert_true(has_leaf(s, L.A + L.page, tag));
		assert_true(has_leaf(s, L.A + 2 * L.page, tag));
		assert_true(has_no_chain(s, L.A, tag));
		assert_false(has_walk(s, L.B, pmd_depth(s), tag));
		assert_true(has_leaf(s, L.C, tag));
		assert_true(has_chain(s, L.C, tag));
		tsim_free(s);
	}
}

/* The same range with page stride would hit every page: all three leaves. */
static void test_range_with_page_stride(void **state)
{
	(void)state;
	struct layout L;
	uint32_t tag;
	struct sim *s = populated("arm64-4k", &L, &tag, false);
	struct inv_op op = {.kind = INV_VA_LEAF, .tag = tag, .start = L.A,
			    .end = L.A + 2 * L.page + 1, .stride = L.page};
	assert_int_equal(hw_invalidate_cpu(hw_of(s), CPU, &op), 3);
	assert_false(has_leaf(s, L.A, tag));
	assert_false(has_leaf(s, L.A + L.page, tag));
	assert_false(has_leaf(s, L.A + 2 * L.page, tag));
	assert_true(has_leaf(s, L.B, tag));
	assert_true(has_chain(s, L.A, tag));
	/* an empty range (start == end) removes nothing */
	struct inv_op empty = {.kind = INV_VA_ALL, .tag = tag, .start = L.B, .end = L.B,
			       .stride = L.page};
	assert_int_equal(hw_invalidate_cpu(hw_of(s), CPU, &empty), 0);
	assert_true(has_leaf(s, L.B, tag));
	tsim_free(s);
}

/* ASIDE1IS asid: every leaf and walk entry of the ASID, nothing of another
 * ASID; then VMALLE1IS: everything that is left. */
static void test_aside1is_and_vmalle1is(void **state)
{
	(void)state;
	for (size_t p = 0; p < NR_ARM64; p++) {
		struct layout L;
		uint32_t tag;
		struct sim *s = populated(arm64_profiles[p], &L, &tag, true);
		struct inv_op aside = {.kind = INV_TAG, .tag = tag};
		assert_int_equal(hw_invalidate_cpu(hw_of(s), CPU, &aside), 5 + nr_walk_expected(s));
		assert_int_equal(hw_of(s)->cpu[CPU].tlb.ndense, 1);
		assert_int_equal(hw_of(s)->cpu[CPU].wc.ndense, 1);
		assert_true(has_leaf(s, L.A, tag + FOREIGN_DELTA));
		assert_true(has_walk(s, L.A, pmd_depth(s), tag + FOREIGN_DELTA));

		struct inv_op all = {.kind = INV_ALL};
		assert_int_equal(hw_invalidate_cpu(hw_of(s), CPU, &all), 2);
		assert_int_equal(hw_of(s)->cpu[CPU].tlb.ndense, 0);
		assert_int_equal(hw_of(s)->cpu[CPU].wc.ndense, 0);
		tsim_free(s);
	}
}

/* VMALLE1IS on a fully populated CPU: everything of every tag. */
static void test_vmalle1is_everything(void **state)
{
	(void)state;
	struct layout L;
	uint32_t tag;
	struct sim *s = populated("falkor-46", &L, &tag, true);
	struct inv_op all = {.kind = INV_ALL};
	assert_int_equal(hw_invalidate_cpu(hw_of(s), CPU, &all), 5 + nr_walk_expected(s) + 2);
	assert_int_equal(hw_of(s)->cpu[CPU].tlb.ndense, 0);
	assert_int_equal(hw_of(s)->cpu[CPU].wc.ndense, 0);
	tsim_free(s);
}

/* VAALE1IS va: the leaf of va whatever its ASID; no walk entry, no other VA. */
static void test_vaale1is_any_asid(void **state)
{
	(void)state;
	for (size_t p = 0; p < NR_ARM64; p++) {
		struct layout L;
		uint32_t tag;
		struct sim *s = populated(arm64_profiles[p], &L, &tag, true);
		uint32_t wc_before = hw_of(s)->cpu[CPU].wc.ndense;
		struct inv_op op = op_page(s, INV_VA_LEAF_ANYTAG, 0, L.A);
		assert_int_equal(hw_invalidate_cpu(hw_of(s), CPU, &op), 2);
		assert_false(has_leaf(s, L.A, tag));
		assert_false(has_leaf(s, L.A, tag + FOREIGN_DELTA));
		assert_true(has_leaf(s, L.A + L.page, tag));
		assert_true(has_leaf(s, L.B, tag));
		assert_int_equal(hw_of(s)->cpu[CPU].wc.ndense, wc_before);
		tsim_free(s);
	}
}

/* VAAE1IS va: leaf and walk entries for va whatever the ASID. */
static void test_vaae1is_any_asid(void **state)
{
	(void)state;
	struct layout L;
	uint32_t tag;
	struct sim *s = populated("arm64-4k", &L, &tag, true);
	int nwalk = hw_of(s)->geom.levels - 1;
	struct inv_op op = op_page(s, INV_VA_ALL_ANYTAG, 0, L.A);
	/* own leaf + own chain + foreign leaf + foreign PMD-level entry */
	assert_int_equal(hw_invalidate_cpu(hw_of(s), CPU, &op), 1 + nwalk + 2);
	assert_true(has_no_chain(s, L.A, tag));
	assert_false(has_walk(s, L.A, pmd_depth(s), tag + FOREIGN_DELTA));
	assert_true(has_walk(s, L.B, pmd_depth(s), tag));
	assert_true(has_chain(s, L.C, tag));
	tsim_free(s);
}

/* ---- x86 ---- */

/* Plant a global leaf (kernel-style, G bit) at va. */
static void plant_global_leaf(struct sim *s, uint64_t va)
{
	const struct pt_geom *g = &hw_of(s)->geom;
	uint32_t f = frame_alloc(hw_of(s), FRAME_DATA, 0);
	tc_fill(hw_of(s), &hw_of(s)->cpu[CPU].tlb, va >> g->page_shift, g->levels - 1, TC_TAG_GLOBAL, f, 0);
}

/* INVLPG va (current PCID): removes va's leaf of the PCID and the global leaf
 * of va, and ALL paging-structure-cache entries of the PCID, also those of
 * unrelated VAs (A's and B's chains) - Intel SDM 3A 4.10.4.1. Another PCID's
 * entries and other VAs' leaves (also global ones) stay. */
static void test_x86_invlpg(void **state)
{
	(void)state;
	struct layout L;
	uint32_t pcid;
	struct sim *s = populated("x86-24", &L, &pcid, true);
	plant_global_leaf(s, L.C);
	plant_global_leaf(s, L.B);
	struct inv_op op = op_page(s, INV_X86_INVLPG, pcid, L.C);
	assert_int_equal(hw_invalidate_cpu(hw_of(s), CPU, &op), 2 + nr_walk_expected(s));
	assert_false(has_leaf(s, L.C, pcid));
	assert_false(has_leaf(s, L.C, TC_TAG_GLOBAL));
	assert_true(has_leaf(s, L.B, TC_TAG_GLOBAL));
	assert_true(has_leaf(s, L.A, pcid));
	assert_true(has_leaf(s, L.A + L.page, pcid));
	assert_true(has_leaf(s, L.A + 2 * L.page, pcid));
	assert_true(has_leaf(s, L.B, pcid));
	assert_true(has_no_chain(s, L.A, pcid));
	assert_true(has_no_chain(s, L.B, pcid));
	assert_true(has_no_chain(s, L.C, pcid));
	/* another PCID's entries stay */
	assert_true(has_leaf(s, L.A, pcid + FOREIGN_DELTA));
	assert_true(has_walk(s, L.A, pmd_depth(s), pcid + FOREIGN_DELTA));
	assert_int_equal(hw_of(s)->cpu[CPU].wc.ndense, 1);
	tsim_free(s);
}

/* MOV CR3 without NOFLUSH (INVPCID single-context): all non-global entries of
 * the PCID, leaves and paging-structure caches; globals and other PCIDs stay. */
static void test_x86_cr3_reload(void **state)
{
	(void)state;
	struct layout L;
	uint32_t pcid;
	struct sim *s = populated("x86-24", &L, &pcid, true);
	plant_global_leaf(s, L.C);
	struct inv_op op = {.kind = INV_TAG_NONGLOBAL, .tag = pcid};
	assert_int_equal(hw_invalidate_cpu(hw_of(s), CPU, &op), 5 + nr_walk_expected(s));
	assert_false(has_leaf(s, L.A, pcid));
	assert_false(has_leaf(s, L.C, pcid));
	assert_true(has_no_chain(s, L.A, pcid));
	assert_true(has_no_chain(s, L.C, pcid));
	assert_true(has_leaf(s, L.C, TC_TAG_GLOBAL));
	assert_true(has_leaf(s, L.A, pcid + FOREIGN_DELTA));
	assert_true(has_walk(s, L.A, pmd_depth(s), pcid + FOREIGN_DELTA));
	assert_int_equal(hw_of(s)->cpu[CPU].tlb.ndense, 2);
	assert_int_equal(hw_of(s)->cpu[CPU].wc.ndense, 1);
	/* INVPCID all-including-global (INV_ALL) then removes the rest */
	struct inv_op all = {.kind = INV_ALL};
	assert_int_equal(hw_invalidate_cpu(hw_of(s), CPU, &all), 3);
	tsim_free(s);
}

/*
 * Range invalidation costs O(cached entries), not O(pages): [A, C) with page
 * stride is 1 TiB = 2^28 op addresses on 4K (about 2^33 on 16K, 3*2^24 on
 * 64K). With a handful of cached entries this must return at once; an
 * implementation walking every
 * op address would run for minutes (the ctest timeout catches it; no timing
 * is asserted). It removes exactly the entries inside the range: A's three
 * leaves and B's leaf, A's walk chain and B's PMD-level entry; C (at the end
 * address, outside the half-open range) stays.
 */
static void test_huge_range_cost_and_exactness(void **state)
{
	(void)state;
	static const char *const profiles[] = {"arm64-4k", "arm64-16k", "falkor-46", "x86-24"};
	for (size_t p = 0; p < 4; p++) {
		struct layout L;
		uint32_t tag;
		struct sim *s = populated(profiles[p], &L, &tag, false);
		int nwalk = hw_of(s)->geom.levels - 1;
		if (p == 0 || p == 3)
			assert_int_equal(L.C - L.A, 1ull << 40);	/* 1 TiB on 4K */
		bool x86 = machine_of(s)->profile->arch == ARCH_X86_64;
		struct inv_op op = {.kind = x86 ? INV_X86_INVLPG : INV_VA_ALL, .tag = tag,
				    .start = L.A, .end = L.C, .stride = L.page};
		uint32_t removed = hw_invalidate_cpu(hw_of(s), CPU, &op);
		assert_false(has_leaf(s, L.A, tag));
		assert_false(has_leaf(s, L.A + L.page, tag));
		assert_false(has_leaf(s, L.A + 2 * L.page, tag));
		assert_false(has_leaf(s, L.B, tag));
		assert_true(has_leaf(s, L.C, tag));
		assert_true(has_no_chain(s, L.A, tag));
		assert_false(has_walk(s, L.B, pmd_depth(s), tag));
		if (x86) {
			/* INVLPG also drops C's paging-structure entries */
			assert_int_equal(removed, 4 + nr_walk_expected(s));
			assert_true(has_no_chain(s, L.C, tag));
		} else {
			assert_int_equal(removed, 4 + (uint32_t)nwalk + 1);
			assert_true(has_chain(s, L.C, tag));
		}

		/* the whole 48-bit space with page stride (2^36 ops on 4K):
		 * removes the remaining leaf, nothing else (leaf-only op) */
		uint32_t wc_before = hw_of(s)->cpu[CPU].wc.ndense;
		struct inv_op whole = {.kind = INV_VA_LEAF, .tag = tag, .start = 0,
				       .end = 1ull << 48, .stride = L.page};
		assert_int_equal(hw_invalidate_cpu(hw_of(s), CPU, &whole), 1);
		assert_int_equal(hw_of(s)->cpu[CPU].tlb.ndense, 0);
		assert_int_equal(hw_of(s)->cpu[CPU].wc.ndense, wc_before);
		tsim_free(s);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vale1is_leaf_only),
		cmocka_unit_test(test_vae1is_leaf_and_walk),
		cmocka_unit_test(test_range_with_pmd_stride),
		cmocka_unit_test(test_range_with_page_stride),
		cmocka_unit_test(test_aside1is_and_vmalle1is),
		cmocka_unit_test(test_vmalle1is_everything),
		cmocka_unit_test(test_vaale1is_any_asid),
		cmocka_unit_test(test_vaae1is_any_asid),
		cmocka_unit_test(test_x86_invlpg),
		cmocka_unit_test(test_x86_cr3_reload),
		cmocka_unit_test(test_huge_range_cost_and_exactness),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
