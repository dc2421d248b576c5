/*
 * test_walk.c - MMU walk and cache-fill rules (mmu.c) through user_access()
 * and mmu_access().
 *
 * Rules (kernel-model 3.1, 4.1, 9.3; Intel SDM 3A 4.10):
 *  - a first access to a new page misses, walks, faults once; the retried
 *    access walks again and fills the TLB; later accesses hit without a walk;
 *  - the walker starts from the deepest walk-cache hit: after only the leaf
 *    was invalidated the access re-walks (one walk, no fault) without reading
 *    the upper-level entries;
 *  - invalid descriptors are never cached;
 *  - arm64: a leaf with AF=0 raises an access-flag fault and is not cached;
 *    x86: the walker sets A itself; a TLB entry cached without D forces a
 *    re-walk on the first write, which sets D in the PTE;
 *  - x86: a page fault invalidates the entries used for the faulting VA;
 *  - a walk through a cached entry whose table frame was freed is detected
 *    (frame generation mismatch -> violation).
 */
#include "test_util.h"

#define CPU 2
#define VA_A (1ull << 40)

/* Frame of the table at `depth` on the path of va (NO_FRAME if missing). */
static uint32_t table_at(struct sim *s, uint64_t va, int depth)
{
	const struct pt_geom *g = &hw_of(s)->geom;
	uint32_t table = tsim_mm(s, 0)->pgd;
	for (int d = 0; d < depth; d++) {
		pte_t e = table_of(hw_of(s), table)[pt_index(g, d, va)];
		if (!pte_present(e))
			return NO_FRAME;
		table = pte_pfn(e);
	}
	return table;
}

/* Pointer to the descriptor for va at depth (levels-1 = the PTE). */
static pte_t *desc(struct sim *s, uint64_t va, int depth)
{
	uint32_t t = table_at(s, va, depth);
	assert_int_not_equal(t, NO_FRAME);
	return &table_of(hw_of(s), t)[pt_index(&hw_of(s)->geom, depth, va)];
}

static pte_t *ptep(struct sim *s, uint64_t va)
{
	return desc(s, va, hw_of(s)->geom.levels - 1);
}

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

static const struct tc_entry *leaf(struct sim *s, uint64_t va)
{
	const struct pt_geom *g = &hw_of(s)->geom;
	return find(&hw_of(s)->cpu[CPU].tlb, va >> g->page_shift, g->levels - 1,
		    machine_of(s)->arch->user_tag(s, CPU));
}

static const struct tc_entry *walk_entry(struct sim *s, uint64_t va, int depth)
{
	return find(&hw_of(s)->cpu[CPU].wc, va >> hw_of(s)->geom.shift[depth], depth,
		    machine_of(s)->arch->user_tag(s, CPU));
}

static int pmd_depth(struct sim *s)
{
	return hw_of(s)->geom.levels - 2;
}

static void inv_page(struct sim *s, enum inv_kind kind, uint64_t va)
{
	struct inv_op op = {.kind = kind, .tag = machine_of(s)->arch->user_tag(s, CPU), .start = va,
			    .end = va + hw_of(s)->geom.page_size, .stride = hw_of(s)->geom.page_size};
	hw_invalidate_cpu(hw_of(s), CPU, &op);
}

/* ---- populate: one thread maps VA_A (3 pages) and writes the first ---- */
struct pop {
	int flags;
	bool write;
	bool ok;
};

static void populate_fn(struct sim *s, struct sim_thread *t)
{
	struct pop *p = t->arg;
	uint64_t ps = hw_of(s)->geom.page_size;
	if (sys_mmap(s, VA_A, 3 * ps, p->flags) != VA_A)
		return;
	p->ok = user_access(s, VA_A, p->write) == 0;
}

static struct sim *populated(const char *profile)
{
	struct sim *s = tsim_new(profile, 4, NESTED_FULLMM);
	struct pop p = {.flags = TLBSIM_MAP_PRIVATE, .write = true};
	tsim_spawn(s, populate_fn, &p, CPU);
	tsim_run(s);
	assert_true(p.ok);
	assert_non_null(leaf(s, VA_A));
	for (int d = 0; d <= pmd_depth(s); d++)
		assert_non_null(walk_entry(s, VA_A, d));
	return s;
}

static const char *const all_profiles[] = {"x86-24", "arm64-4k", "arm64-16k", "falkor-46"};
#define NR_PROFILES 4

/* ---- 1. fault once, then hit ---- */
struct snap {
	uint64_t faults, walks, misses;
};

static struct snap snap(struct sim *s)
{
	return (struct snap){s->m.page_faults, s->m.page_walks, s->m.tlb_misses};
}

struct hit_rec {
	struct snap m0, m1, m2, m3;
	bool ok;
};

static void fault_then_hit_fn(struct sim *s, struct sim_thread *t)
{
	struct hit_rec *r = t->arg;
	uint64_t a = sys_mmap(s, VA_A, hw_of(s)->geom.page_size, TLBSIM_MAP_PRIVATE);
	if (a != VA_A)
		return;
	r->m0 = snap(s);
	if (user_access(s, a, true))
		return;
	r->m1 = snap(s);
	if (user_access(s, a, true))
		return;
	r->m2 = snap(s);
	if (user_access(s, a + 8, false))	/* same page, other offset */
		return;
	r->m3 = snap(s);
	r->ok = true;
}

/* First touch: miss -> walk -> fault (no PTE) -> kernel installs the PTE ->
 * retried access misses again, walks, fills. So 1 fault, 2 walks, 2 misses.
 * Then the page is in the TLB: no miss, no walk, no fault. */
static void test_first_access_faults_once_then_hits(void **state)
{
	(void)state;
	for (int p = 0; p < NR_PROFILES; p++) {
		struct sim *s = tsim_new(all_profiles[p], 4, NESTED_FULLMM);
		struct hit_rec r = {0};
		tsim_spawn(s, fault_then_hit_fn, &r, CPU);
		tsim_run(s);
		assert_true(r.ok);
		assert_int_equal(r.m1.faults - r.m0.faults, 1);
		assert_int_equal(r.m1.walks - r.m0.walks, 2);
		assert_int_equal(r.m1.misses - r.m0.misses, 2);
		assert_int_equal(r.m2.faults, r.m1.faults);
		assert_int_equal(r.m2.walks, r.m1.walks);
		assert_int_equal(r.m2.misses, r.m1.misses);
		assert_int_equal(r.m3.walks, r.m1.walks);
		assert_int_equal(r.m3.faults, r.m1.faults);
		assert_int_equal(s->m.page_faults, 1);
		tsim_free(s);
	}
}

/* ---- 2. leaf-only invalidation -> re-walk from the walk cache ---- */
struct rewalk_rec {
	struct snap before, after;
	uint32_t wc_before, wc_after;
	bool leaf_gone, leaf_back, ok;
};

static void rewalk_fn(struct sim *s, struct sim_thread *t)
{
	struct rewalk_rec *r = t->arg;
	if (sys_mmap(s, VA_A, hw_of(s)->geom.page_size, TLBSIM_MAP_PRIVATE) != VA_A ||
	    user_access(s, VA_A, true))
		return;
	inv_page(s, INV_VA_LEAF, VA_A);
	r->leaf_gone = leaf(s, VA_A) == NULL;
	r->wc_before = hw_of(s)->cpu[CPU].wc.ndense;
	r->before = snap(s);
	if (user_access(s, VA_A, true))
		return;
	r->after = snap(s);
	r->wc_after = hw_of(s)->cpu[CPU].wc.ndense;
	r->leaf_back = leaf(s, VA_A) != NULL;
	r->ok = true;
}

static void test_leaf_invalidated_rewalks_without_fault(void **state)
{
	(void)state;
	for (int p = 0; p < NR_PROFILES; p++) {
		struct sim *s = tsim_new(all_profiles[p], 4, NESTED_FULLMM);
		struct rewalk_rec r = {0};
		tsim_spawn(s, rewalk_fn, &r, CPU);
		tsim_run(s);
		assert_true(r.ok);
		assert_true(r.leaf_gone);
		assert_true(r.leaf_back);
		assert_int_equal(r.after.walks - r.before.walks, 1);
		assert_int_equal(r.after.misses - r.before.misses, 1);
		assert_int_equal(r.after.faults, r.before.faults);
		/* the walk cache was neither dropped nor grown */
		assert_int_equal(r.wc_after, r.wc_before);
		assert_int_equal(r.wc_before, (uint32_t)hw_of(s)->geom.levels - 1);
		tsim_free(s);
	}
}

/* The walk starts at the deepest walk-cache hit: with the PMD-level walk entry
 * cached, the PMD descriptor in memory is not read, so clearing it (without
 * invalidating) does not stop the access. Control: once the walk entries are
 * gone too, the walk reads the cleared PMD descriptor and faults. */
static void test_walk_starts_at_deepest_walk_cache_hit(void **state)
{
	(void)state;
	for (int p = 0; p < NR_PROFILES; p++) {
		struct sim *s = populated(all_profiles[p]);
		uint64_t fpte = 0;
		pte_t *pmdp = desc(s, VA_A, pmd_depth(s));
		pte_t saved = *pmdp;
		inv_page(s, INV_VA_LEAF, VA_A);
		*pmdp = 0;		/* the walker must not need it */
		uint64_t w0 = s->m.page_walks;
		assert_int_equal(tsim_mmu_access(s, CPU, tsim_mm(s, 0), VA_A, false, &fpte), 0);
		assert_int_equal(s->m.page_walks, w0 + 1);
		assert_non_null(leaf(s, VA_A));

		/* control: drop leaf and walk entries; now the walk reads *pmdp */
		inv_page(s, INV_VA_ALL, VA_A);
		assert_null(walk_entry(s, VA_A, pmd_depth(s)));
		assert_int_equal(tsim_mmu_access(s, CPU, tsim_mm(s, 0), VA_A, false, &fpte), -1);
		assert_null(leaf(s, VA_A));
		*pmdp = saved;
		assert_int_equal(tsim_mmu_access(s, CPU, tsim_mm(s, 0), VA_A, false, &fpte), 0);
		assert_int_equal(s->m.violations, 0);
		tsim_free(s);
	}
}

/* ---- 3. invalid descriptors are never cached ---- */
static void test_invalid_descriptors_not_cached(void **state)
{
	(void)state;
	for (int p = 0; p < NR_PROFILES; p++) {
		struct sim *s = populated(all_profiles[p]);
		const struct pt_geom *g = &hw_of(s)->geom;
		bool x86 = machine_of(s)->profile->arch == ARCH_X86_64;
		uint64_t ps = g->page_size, fpte = 1;
		uint32_t wc0 = hw_of(s)->cpu[CPU].wc.ndense, tlb0 = hw_of(s)->cpu[CPU].tlb.ndense;

		/* (a) PTE none inside an existing PTE table (mapped VMA, never touched) */
		assert_true(pte_none(*ptep(s, VA_A + ps)));
		assert_int_equal(tsim_mmu_access(s, CPU, tsim_mm(s, 0), VA_A + ps, false, &fpte), -1);
		assert_int_equal(fpte, 0);		/* live PTE reported: none */
		assert_null(leaf(s, VA_A + ps));
		assert_int_equal(hw_of(s)->cpu[CPU].tlb.ndense, tlb0);
		if (x86) {
			/* SDM 4.10.4.1: the fault invalidated the paging-structure
			 * entries used for the faulting VA (shared with VA_A) */
			for (int d = 0; d <= pmd_depth(s); d++)
				assert_null(walk_entry(s, VA_A, d));
			assert_non_null(leaf(s, VA_A));
		} else {
			assert_int_equal(hw_of(s)->cpu[CPU].wc.ndense, wc0);
		}

		/* (b) PMD descriptor none: no PMD-level walk entry may appear */
		uint64_t far = VA_A + 4 * (1ull << g->pmd_shift);
		assert_int_equal(table_at(s, far, g->levels - 1), NO_FRAME);
		assert_int_equal(tsim_mmu_access(s, CPU, tsim_mm(s, 0), far, true, &fpte), -1);
		assert_null(walk_entry(s, far, pmd_depth(s)));
		assert_null(leaf(s, far));

		/* (c) nothing at all mapped there (top-level descriptor none; on
		 * arm64 16K level 0 resolves only VA bit 47, so set it) */
		uint64_t none = x86 ? 1ull << 46 : 3ull << 46;
		assert_int_equal(table_at(s, none, 1), NO_FRAME);
		uint32_t wc1 = hw_of(s)->cpu[CPU].wc.ndense, tlb1 = hw_of(s)->cpu[CPU].tlb.ndense;
		assert_int_equal(tsim_mmu_access(s, CPU, tsim_mm(s, 0), none, false, &fpte), -1);
		assert_null(walk_entry(s, none, 0));
		assert_int_equal(hw_of(s)->cpu[CPU].tlb.ndense, tlb1);
		if (!x86)
			assert_int_equal(hw_of(s)->cpu[CPU].wc.ndense, wc1);
		tsim_free(s);
	}
}

/* ---- 4. access flag ---- */

/* arm64: AF=0 -> access-flag fault, nothing cached, PTE left unchanged (no
 * hardware AF update); the walk is redone on every attempt. */
static void test_arm64_af_clear_not_cached(void **state)
{
	(void)state;
	static const char *const arm[] = {"arm64-4k", "arm64-16k", "falkor-46"};
	for (int p = 0; p < 3; p++) {
		struct sim *s = populated(arm[p]);
		uint64_t fpte = 0;
		inv_page(s, INV_VA_LEAF, VA_A);
		pte_t *pp = ptep(s, VA_A);
		*pp &= ~PTE_YOUNG;
		pte_t old = *pp;
		uint64_t w0 = s->m.page_walks;
		for (int i = 0; i < 2; i++) {
			assert_int_equal(tsim_mmu_access(s, CPU, tsim_mm(s, 0), VA_A, false, &fpte), -1);
			assert_int_equal(fpte, old);
			assert_null(leaf(s, VA_A));
			assert_int_equal(*pp, old);
		}
		assert_int_equal(s->m.page_walks, w0 + 2);
		/* the walk entries above the leaf were valid: still cached */
		assert_non_null(walk_entry(s, VA_A, pmd_depth(s)));
		/* the kernel sets AF (pte_mkyoung): now it is cached */
		*pp |= PTE_YOUNG;
		assert_int_equal(tsim_mmu_access(s, CPU, tsim_mm(s, 0), VA_A, false, &fpte), 0);
		assert_non_null(leaf(s, VA_A));
		tsim_free(s);
	}
}

/* x86: the walker sets the accessed bit itself; no fault. */
static void test_x86_walker_sets_accessed(void **state)
{
	(void)state;
	struct sim *s = populated("x86-24");
	uint64_t fpte = 0;
	inv_page(s, INV_X86_INVLPG, VA_A);
	pte_t *pp = ptep(s, VA_A);
	*pp &= ~PTE_YOUNG;
	assert_int_equal(tsim_mmu_access(s, CPU, tsim_mm(s, 0), VA_A, false, &fpte), 0);
	assert_true(*pp & PTE_YOUNG);
	assert_non_null(leaf(s, VA_A));
	tsim_free(s);
}

/* ---- 5. dirty ---- */
struct dirty_rec {
	uint8_t perm_after_read, perm_after_write;
	pte_t pte_after_read, pte_after_write;
	struct snap before, after_write, after_write2;
	bool ok;
};

/* (runs as a simulated thread: no cmocka assertions in here) */
static void dirty_fn(struct sim *s, struct sim_thread *t)
{
	struct dirty_rec *r = t->arg;
	/* MAP_SHARED: a read fault installs a writable, clean PTE */
	if (sys_mmap(s, VA_A, hw_of(s)->geom.page_size, TLBSIM_MAP_SHARED) != VA_A ||
	    user_access(s, VA_A, false))
		return;
	const struct tc_entry *e = leaf(s, VA_A);
	if (!e)
		return;
	uint32_t pt = table_at(s, VA_A, hw_of(s)->geom.levels - 1);
	if (pt == NO_FRAME)
		return;
	pte_t *pp = &table_of(hw_of(s), pt)[pt_index(&hw_of(s)->geom, hw_of(s)->geom.levels - 1, VA_A)];
	r->perm_after_read = e->perm;
	r->pte_after_read = *pp;
	r->before = snap(s);
	if (user_access(s, VA_A, true))
		return;
	r->after_write = snap(s);
	r->pte_after_write = *pp;
	e = leaf(s, VA_A);
	if (!e)
		return;
	r->perm_after_write = e->perm;
	if (user_access(s, VA_A, true))
		return;
	r->after_write2 = snap(s);
	/* unmap: the shmem object is released by munmap, not by sim teardown */
	r->ok = sys_munmap(s, VA_A, hw_of(s)->geom.page_size) == 0;
}

/* x86: a write through a TLB entry cached without D re-walks (no fault),
 * and the walker sets D in the PTE; the next write hits. */
static void test_x86_write_to_clean_entry_rewalks_and_sets_dirty(void **state)
{
	(void)state;
	struct sim *s = tsim_new("x86-24", 4, NESTED_FULLMM);
	struct dirty_rec r = {0};
	tsim_spawn(s, dirty_fn, &r, CPU);
	tsim_run(s);
	assert_true(r.ok);
	assert_true(r.pte_after_read & PTE_WRITE);
	assert_false(r.pte_after_read & PTE_DIRTY);
	assert_true(r.perm_after_read & PTE_WRITE);
	assert_false(r.perm_after_read & PTE_DIRTY);
	assert_int_equal(r.after_write.faults, r.before.faults);
	assert_int_equal(r.after_write.walks - r.before.walks, 1);
	assert_true(r.pte_after_write & PTE_DIRTY);
	assert_true(r.perm_after_write & PTE_DIRTY);
	assert_int_equal(r.after_write2.walks, r.after_write.walks);
	assert_int_equal(r.after_write2.faults, r.after_write.faults);
	tsim_free(s);
}

/* arm64 counterpart: the clean writable PTE is RDONLY (DBM model), the cached
 * read-only entry raises a permission fault on the write; the kernel makes it
 * dirty/writable and invalidates (flush_tlb_fix_spurious_fault), so one fault
 * and the write completes with PTE dirty and no longer read-only. */
static void test_arm64_write_to_clean_entry_faults_once(void **state)
{
	(void)state;
	struct sim *s = tsim_new("falkor-46", 4, NESTED_FULLMM);
	struct dirty_rec r = {0};
	tsim_spawn(s, dirty_fn, &r, CPU);
	tsim_run(s);
	assert_true(r.ok);
	assert_true(r.pte_after_read & PTE_RDONLY);
	assert_true(r.perm_after_read & PTE_RDONLY);
	assert_int_equal(r.after_write.faults - r.before.faults, 1);
	assert_true(r.pte_after_write & PTE_DIRTY);
	assert_false(r.pte_after_write & PTE_RDONLY);
	assert_false(r.perm_after_write & PTE_RDONLY);
	assert_int_equal(r.after_write2.faults, r.after_write.faults);
	assert_int_equal(r.after_write2.walks, r.after_write.walks);
	tsim_free(s);
}

/* ---- 6. walk through a freed table ---- */

/* Unhook and free VA_A's PTE table while the PMD-level walk entry still points
 * at it. Freeing is a LATENT I1 violation (a reachable cached entry holds the
 * frame); the next access that walks through the stale entry is detected by
 * the generation mismatch (REALIZED), and it faults (no valid table there). */
static void free_pte_table(struct sim *s)
{
	const struct pt_geom *g = &hw_of(s)->geom;
	uint32_t pt = table_at(s, VA_A, g->levels - 1);
	uint32_t pmd = table_at(s, VA_A, pmd_depth(s));
	assert_int_not_equal(pt, NO_FRAME);
	assert_int_equal(frame_of(hw_of(s), pt)->state, FRAME_PGTABLE);
	/* empty the PTE table (the data page stays allocated: not under test) */
	pte_t *pp = ptep(s, VA_A);
	assert_true(pte_present(*pp));
	*pp = 0;
	frame_of(hw_of(s), pt)->nr_used--;
	assert_int_equal(frame_of(hw_of(s), pt)->nr_used, 0);
	/* pmd_clear */
	table_of(hw_of(s), pmd)[pt_index(g, pmd_depth(s), VA_A)] = 0;
	frame_of(hw_of(s), pmd)->nr_used--;
	frame_free(hw_of(s), pt);
}

static void test_walk_through_freed_table_detected(void **state)
{
	(void)state;
	for (int p = 0; p < NR_PROFILES; p++) {
		struct sim *s = populated(all_profiles[p]);
		uint64_t fpte = 0;
		inv_page(s, INV_VA_LEAF, VA_A);		/* leaf-only: walk entry stays */
		const struct tc_entry *we = walk_entry(s, VA_A, pmd_depth(s));
		assert_non_null(we);
		uint32_t pt = table_at(s, VA_A, hw_of(s)->geom.levels - 1);
		assert_int_equal(we->frame, pt);
		assert_int_equal(s->m.violations, 0);
		free_pte_table(s);
		assert_int_equal(s->m.violations, 1);	/* I1 latent at free time */
		assert_non_null(strstr(tsim_violation(s)->text, "I1"));
		assert_int_equal(tsim_mmu_access(s, CPU, tsim_mm(s, 0), VA_A, false, &fpte), -1);
		assert_int_equal(s->m.violations, 2);	/* stale walk entry used */
		assert_null(leaf(s, VA_A));
		tsim_free(s);
	}
}

/* Control: with VAE1IS before the free (the correct kernel order), neither the
 * free nor the next access reports anything. */
static void test_freed_table_after_walk_invalidation_is_clean(void **state)
{
	(void)state;
	for (int p = 0; p < NR_PROFILES; p++) {
		struct sim *s = populated(all_profiles[p]);
		uint64_t fpte = 0;
		inv_page(s, INV_VA_ALL, VA_A);
		assert_null(walk_entry(s, VA_A, pmd_depth(s)));
		free_pte_table(s);
		assert_int_equal(tsim_mmu_access(s, CPU, tsim_mm(s, 0), VA_A, false, &fpte), -1);
		assert_int_equal(s->m.violations, 0);
		tsim_free(s);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_first_access_faults_once_then_hits),
		cmocka_unit_test(test_leaf_invalidated_rewalks_without_fault),
		cmocka_unit_test(test_walk_starts_at_deepest_walk_cache_hit),
		cmocka_unit_test(test_invalid_descriptors_not_cached),
		cmocka_unit_test(test_arm64_af_clear_not_cached),
		cmocka_unit_test(test_x86_walker_sets_accessed),
		cmocka_unit_test(test_x86_write_to_clean_entry_rewalks_and_sets_dirty),
		cmocka_unit_test(test_arm64_write_to_clean_entry_faults_once),
		cmocka_unit_test(test_walk_through_freed_table_detected),
		cmocka_unit_test(test_freed_table_after_walk_invalidation_is_clean),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
