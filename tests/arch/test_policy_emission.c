/*
 * test_policy_emission.c - what one munmap emits when its tlb_finish_mmu is
 * nested, for every seed-000 row of kernel-model.md 9.6 (prefix, v1, v2,
 * keep_bits, fullmm, need_flush_all) and for the non-nested baseline, for the two
 * shapes of 9.6 on x86-24, arm64-4k, arm64-16k and falkor-46.
 *
 * Construction (deterministic): one simulated thread T0 maps the region,
 * writes it, and munmaps it while tsim_mm(s, 0)->tlb_flush_pending is raised by one
 * (standing in for another thread's gather in flight, so mm_tlb_flush_nested()
 * is true at FINISH_CHECK_NESTED); the counter is restored afterwards. Metric
 * deltas are taken around the whole munmap (plus one RCU grace period on
 * arm64 so that table frees, and the checker's verdict on them, are in).
 *
 *   S1: one private page (the profile's page size) at A = H + 4 pages. A neighbour
 *       mapping N lives in the next PMD span (same PMD table), so the munmap
 *       frees exactly A's PTE table P (free_pgtables rule, 2.2), recorded by
 *       pte_free_tlb as freed_tables + cleared_pmds, range [H, H+PAGE).
 *   S2: 16 MiB MAP_SHARED at H, first page written, MADV_DONTNEED over the
 *       16 MiB first (one dirty shared PTE zapped: zap_pte_range flushes it
 *       before the PTE lock drops, no table freed), then munmap: no PTE is
 *       left, P is freed as in S1. N sits at H + max(16 MiB, PMD_SIZE).
 *
 * Rules used for the expectations (kernel-model sections in brackets):
 *  - generic v5.1 tlb_end_vma flushes per VMA on arm64, never on x86 [1.8];
 *    so on arm64 S1 the zapped PTE is flushed at tlb_end_vma with one
 *    VALE1IS (no table freed yet: last_level), and the range is reset before
 *    free_pgtables; in S2 nothing is recorded before free_pgtables.
 *  - nested policies [1.9, 9.6]: prefix = reset + [start,end); v1 = keep bits,
 *    widen; v2 = reset + [start,end) + all bits; keep_bits = reset only start/end;
 *    fullmm = fullmm + reset + freed_tables; need_flush_all = reset +
 *    need_flush_all + freed_tables (and end == 0, so v5.1's
 *    tlb_flush_mmu_tlbonly does nothing [1.6]).
 *  - arm64 tlb_flush [3.3]: last_level = !freed_tables, stride = unmap size,
 *    fullmm -> ASIDE1IS iff freed_tables; __flush_tlb_range [3.4, E1]: range
 *    >= PTRS_PER_PTE * stride -> one ASIDE1IS, else one op per stride.
 *    After the fullmm flush the second tlbonly from the table flush sees
 *    fullmm without freed_tables: no TLBI [1.9 side-effect note].
 *  - x86 [4.3, 4.4]: flush_tlb_mm_range: more than 33 strides -> full flush;
 *    local flush on the initiator; IPIs to every other CPU of mm_cpumask when
 *    freed_tables, else only to non-lazy ones; a lazy CPU that takes the IPI
 *    switches to init_mm instead of flushing; others INVLPG per stride (the
 *    range case, their tlb_gen is exactly one behind) or flush the PCID.
 *    x86 setup: CPU1 ran a thread of the mm that touched N (and, in S1, A)
 *    and exited -> lazy with the mm loaded; CPU2 runs a thread of the mm that
 *    keeps spinning in user mode -> non-lazy; CPU3 never ran the mm.
 *  - checker [7, 7.1]: a walk-cache entry that survives the freeing of P is a
 *    latent violation: arm64 prefix / need_flush_all keep W (leaf-only or no
 *    TLBI); x86 prefix skips the lazy CPU1 that walked through P (S1 only);
 *    x86 need_flush_all frees A's page and P with no flush at all (S1). In S2
 *    on x86 no CPU walked through P after the DONTNEED flush (INVLPG drops
 *    every paging-structure entry of the PCID [4.1]).
 */
#include "test_util.h"

#define H 0x100000000000ull	/* 16 TiB: aligned to every table span */
#define MiB (1ull << 20)

enum shape { S1, S2 };
#define BASELINE (-1)

struct deltas {
	uint64_t vale, vae, aside, other_tlbi;
	uint64_t ipi_sent, ipi_received, flush_local, flush_full;
	uint64_t nested, gathers, violations;
};

struct run {
	enum shape shape;
	bool nested;
	volatile int done;
	int ran;
	struct deltas pre;	/* S2: the MADV_DONTNEED before the munmap */
	struct deltas d;	/* the munmap */
};

static struct deltas diff(const struct tlbsim_metrics *a, const struct tlbsim_metrics *b)
{
	struct deltas d = {
		.vale = b->tlbi.vale1is - a->tlbi.vale1is,
		.vae = b->tlbi.vae1is - a->tlbi.vae1is,
		.aside = b->tlbi.aside1is - a->tlbi.aside1is,
		.other_tlbi = (b->tlbi.vaale1is + b->tlbi.vmalle1is + b->tlbi.local) -
			      (a->tlbi.vaale1is + a->tlbi.vmalle1is + a->tlbi.local),
		.ipi_sent = b->ipi_sent - a->ipi_sent,
		.ipi_received = b->ipi_received - a->ipi_received,
		.flush_local = b->flush_local_pages - a->flush_local_pages,
		.flush_full = b->flush_full - a->flush_full,
		.nested = b->nested_finishes - a->nested_finishes,
		.gathers = b->gathers - a->gathers,
		.violations = b->violations - a->violations,
	};
	return d;
}

static uint64_t neighbour(struct sim *s)
{
	uint64_t pmd = 1ull << hw_of(s)->geom.pmd_shift;
	uint64_t off = 16 * MiB > pmd ? 16 * MiB : pmd;
	return H + ((off + pmd - 1) & ~(pmd - 1));
}

/* CPU1: touch memory of the mm, exit -> idle, lazy TLB with the mm loaded */
static void lazy_thread(struct sim *s, struct sim_thread *t)
{
	struct run *r = t->arg;
	assert_int_equal(user_access(s, neighbour(s), false), 0);
	if (r->shape == S1)
		assert_int_equal(user_access(s, H + 4 * hw_of(s)->geom.page_size, false), 0);
}

/* CPU2: touch memory of the mm, then keep running user code (non-lazy) */
static void busy_thread(struct sim *s, struct sim_thread *t)
{
	struct run *r = t->arg;
	assert_int_equal(user_access(s, neighbour(s), false), 0);
	while (!r->done)
		sim_step(s, YP_USER, 1000);
}

static void main_thread(struct sim *s, struct sim_thread *t)
{
	struct run *r = t->arg;
	struct mm_struct *mm = task_of(t)->mm;
	uint64_t ps = hw_of(s)->geom.page_size;
	bool x86 = machine_of(s)->profile->arch == ARCH_X86_64;
	uint64_t a = r->shape == S1 ? H + 4 * ps : H;
	uint64_t len = r->shape == S1 ? ps : 16 * MiB;

	uint64_t n = neighbour(s);
	assert_true(sys_mmap(s, n, ps, TLBSIM_MAP_PRIVATE) == n);
	assert_int_equal(user_access(s, n, true), 0);
	/* S1 private: a dirty shared PTE would add zap_pte_range's own flush
	 * (tests/mm/test_filemap.c states that rule) */
	assert_true(sys_mmap(s, a, len, r->shape == S1 ? TLBSIM_MAP_PRIVATE : TLBSIM_MAP_SHARED) == a);
	assert_int_equal(user_access(s, a, true), 0);

	if (x86) {
		assert_non_null(tsim_spawn(s, lazy_thread, r, 1));
		assert_non_null(tsim_spawn(s, busy_thread, r, 2));
		sim_step(s, YP_USER, 1000000);	/* 1 ms: both have run */
		assert_true(arch_cpu(s, 1)->is_lazy);
		assert_ptr_equal(arch_cpu(s, 1)->loaded_mm, &mm->context);
		assert_false(arch_cpu(s, 2)->is_lazy);
		assert_ptr_equal(arch_cpu(s, 2)->loaded_mm, &mm->context);
		assert_null(arch_cpu(s, 3)->loaded_mm);
	}

	struct tlbsim_metrics m0 = s->m;
	if (r->shape == S2) {
		assert_int_equal(sys_madvise_dontneed(s, a, len), 0);
		struct tlbsim_metrics m1 = s->m;
		r->pre = diff(&m0, &m1);
		m0 = m1;
	}
	assert_int_equal(mm->tlb_flush_pending, 0);
	if (r->nested)
		mm->tlb_flush_pending++;	/* another gather in flight */
	assert_int_equal(sys_munmap(s, a, len), 0);
	if (r->nested)
		mm->tlb_flush_pending--;
	assert_int_equal(mm->tlb_flush_pending, 0);
	if (!x86)	/* let the RCU table free (and its check) happen */
		sim_step(s, YP_USER, (uint64_t)P(s, P_rcu_grace_ns) + 1000000u);
	struct tlbsim_metrics m1 = s->m;
	r->d = diff(&m0, &m1);
	r->done = 1;
	r->ran = 1;
}

static struct run run_case(const char *profile, enum shape shape, int policy)
{
	struct run r = {.shape = shape, .nested = policy != BASELINE};
	enum nested_policy pol = policy == BASELINE ? NESTED_PREFIX : (enum nested_policy)policy;
	struct sim *s = tsim_new(profile, 4, pol);
	tsim_spawn(s, main_thread, &r, 0);
	tsim_run(s);
	assert_int_equal(r.ran, 1);
	tsim_free(s);
	return r;
}

/* Expected values. viol: 0 = no violation, 1 = at least one. */
struct expect {
	int policy;
	uint64_t vale, vae, aside;		/* arm64 */
	uint64_t ipi, flush_local, flush_full;	/* x86 */
	int viol;
};

static const char *pol_name(int p)
{
	static const char *const names[] = {"prefix", "v1", "v2", "fullmm", "need_flush_all",
					    "keep_bits"};
	return p == BASELINE ? "baseline(not nested)" : names[p];
}

#define CHECK(field, want)                                                             \
	do {                                                                            \
		if ((uint64_t)(want) != (field))                                        \
			fail_msg("%s %s %s: %s = %llu, want %llu", profile,             \
				 shape == S1 ? "S1" : "S2", pol_name(e->policy), #field,   \
				 (unsigned long long)(field), (unsigned long long)(want)); \
	} while (0)

static void check_table(const char *profile, enum shape shape, const struct expect *tab, size_t n)
{
	bool x86 = tlbsim_profile_find(profile)->arch == ARCH_X86_64;
	for (size_t i = 0; i < n; i++) {
		const struct expect *e = &tab[i];
		struct run r = run_case(profile, shape, e->policy);
		const struct deltas *d = &r.d;
		CHECK(d->gathers, 1);
		CHECK(d->nested, e->policy != BASELINE);
		CHECK(d->vale, x86 ? 0 : e->vale);
		CHECK(d->vae, x86 ? 0 : e->vae);
		CHECK(d->aside, x86 ? 0 : e->aside);
		CHECK(d->other_tlbi, 0);
		CHECK(d->ipi_sent, x86 ? e->ipi : 0);
		CHECK(d->ipi_received, d->ipi_sent);
		CHECK(d->flush_local, x86 ? e->flush_local : 0);
		CHECK(d->flush_full, x86 ? e->flush_full : 0);
		CHECK(d->violations != 0, e->viol);
		if (shape == S2) {
			/* MADV_DONTNEED of one present PTE, not nested, no table:
			 * arm64: 1 VALE1IS (the dirty-PTE flush in zap_pte_range;
			 * tlb_end_vma and finish then find an empty range);
			 * x86: 1 INVLPG locally + 1 on the non-lazy CPU2, lazy CPU1
			 * skipped (freed_tables = 0) -> 1 IPI. */
			const struct deltas *p = &r.pre;
			CHECK(p->gathers, 1);
			CHECK(p->nested, 0);
			CHECK(p->vale, x86 ? 0 : 1);
			CHECK(p->vae + p->aside + p->other_tlbi, 0);
			CHECK(p->ipi_sent, x86 ? 1 : 0);
			CHECK(p->flush_local, x86 ? 2 : 0);
			CHECK(p->flush_full, 0);
			CHECK(p->violations, 0);
		}
	}
}

#define TAB(t) (t), sizeof(t) / sizeof((t)[0])

/* ---- arm64 S1 (same counts on 4K and 64K: one page, one table) ----
 * Before finish: 1 VALE1IS already issued at tlb_end_vma; the gather holds
 * freed_tables + cleared_pmds, range [H, H+PAGE).
 *  baseline: last_level=false, stride PMD -> +1 VAE1IS.
 *  prefix:   bits reset, [A,A+PAGE), stride page, last level -> +1 VALE1IS;
 *            W (PMD entry -> P) survives -> violation when P is freed.
 *  v1:       bits kept, range [H, A+PAGE) (5 pages) < 1 PMD stride -> +1 VAE1IS.
 *  v2:       all bits, [A,A+PAGE), stride page -> +1 VAE1IS.
 *  keep_bits:     bits kept (stride PMD), [A,A+PAGE) -> +1 VAE1IS.
 *  fullmm:   fullmm + freed_tables -> +1 ASIDE1IS.
 *  need_flush_all: end == 0 -> nothing; W survives -> violation. */
static const struct expect arm64_s1[] = {
	{BASELINE, 1, 1, 0, 0, 0, 0, 0},
	{NESTED_PREFIX, 2, 0, 0, 0, 0, 0, 1},
	{NESTED_V1, 1, 1, 0, 0, 0, 0, 0},
	{NESTED_V2, 1, 1, 0, 0, 0, 0, 0},
	{NESTED_KEEP_BITS, 1, 1, 0, 0, 0, 0, 0},
	{NESTED_FULLMM, 1, 0, 1, 0, 0, 0, 0},
	{NESTED_NEED_FLUSH_ALL, 1, 0, 0, 0, 0, 0, 1},
};

static void test_falkor46_s1(void **state)
{
	check_table("falkor-46", S1, TAB(arm64_s1));
}

static void test_arm64_4k_s1(void **state)
{
	check_table("arm64-4k", S1, TAB(arm64_s1));
}

/* ---- arm64 S2, 64K: 16 MiB = 256 pages < 8192 ----
 * Before finish: nothing flushed (no PTE left); freed_tables + cleared_pmds,
 * range [H, H+64K).
 *  baseline: 1 VAE1IS (stride PMD).
 *  prefix:   256 VALE1IS (walk cache kept -> violation at P's free).
 *  v1/keep_bits:  [H, H+16M) with stride 512 MiB, all levels -> 1 VAE1IS.
 *  v2:       256 VAE1IS.
 *  fullmm:   1 ASIDE1IS.
 *  need_flush_all: no TLBI (violation: W and P). */
static const struct expect falkor_s2[] = {
	{BASELINE, 0, 1, 0, 0, 0, 0, 0},
	{NESTED_PREFIX, 256, 0, 0, 0, 0, 0, 1},
	{NESTED_V1, 0, 1, 0, 0, 0, 0, 0},
	{NESTED_V2, 0, 256, 0, 0, 0, 0, 0},
	{NESTED_KEEP_BITS, 0, 1, 0, 0, 0, 0, 0},
	{NESTED_FULLMM, 0, 0, 1, 0, 0, 0, 0},
	{NESTED_NEED_FLUSH_ALL, 0, 0, 0, 0, 0, 0, 1},
};

static void test_falkor46_s2(void **state)
{
	check_table("falkor-46", S2, TAB(falkor_s2));
}

/* ---- arm64 S2, 16K: 1024 pages < 2048; PMD stride 32 MiB ---- */
static const struct expect arm64_16k_s2[] = {
	{BASELINE, 0, 1, 0, 0, 0, 0, 0},
	{NESTED_PREFIX, 1024, 0, 0, 0, 0, 0, 1},
	{NESTED_V1, 0, 1, 0, 0, 0, 0, 0},
	{NESTED_V2, 0, 1024, 0, 0, 0, 0, 0},
	{NESTED_KEEP_BITS, 0, 1, 0, 0, 0, 0, 0},
	{NESTED_FULLMM, 0, 0, 1, 0, 0, 0, 0},
	{NESTED_NEED_FLUSH_ALL, 0, 0, 0, 0, 0, 0, 1},
};

static void test_arm64_16k_s2(void **state)
{
	check_table("arm64-16k", S2, TAB(arm64_16k_s2));
}

/* ---- arm64 S2, 4K: 4096 pages >= 512 ----
 *  prefix:   page stride, 4096 >= 512 -> 1 ASIDE1IS (walk cache flushed: the
 *            bug is masked, no violation, 3.4).
 *  v1/keep_bits:  stride 2 MiB: 16 MiB / 2 MiB = 8 < 512 -> 8 VAE1IS.
 *  v2:       page stride -> 1 ASIDE1IS.
 *  fullmm:   1 ASIDE1IS. need_flush_all: nothing (violation). */
static const struct expect arm64_4k_s2[] = {
	{BASELINE, 0, 1, 0, 0, 0, 0, 0},
	{NESTED_PREFIX, 0, 0, 1, 0, 0, 0, 0},
	{NESTED_V1, 0, 8, 0, 0, 0, 0, 0},
	{NESTED_V2, 0, 0, 1, 0, 0, 0, 0},
	{NESTED_KEEP_BITS, 0, 8, 0, 0, 0, 0, 0},
	{NESTED_FULLMM, 0, 0, 1, 0, 0, 0, 0},
	{NESTED_NEED_FLUSH_ALL, 0, 0, 0, 0, 0, 0, 1},
};

static void test_arm64_4k_s2(void **state)
{
	check_table("arm64-4k", S2, TAB(arm64_4k_s2));
}

/* ---- x86 S1 (CPU0 initiator, CPU1 lazy, CPU2 busy, CPU3 never) ----
 * Before finish: cleared_ptes (no end_vma flush on x86) + freed_tables +
 * cleared_pmds, range [H, A+PAGE) = 5 pages.
 *  baseline: 5 strides of 4K <= 33 -> INVLPG x5 locally and on CPU2; IPIs
 *            to CPU1 and CPU2 (freed_tables); CPU1 leaves lazy mode. -> 2 IPIs,
 *            10 INVLPG.
 *  prefix:   reset: [A,A+PAGE), 1 INVLPG; freed_tables=0 -> lazy CPU1
 *            skipped: 1 IPI, 2 INVLPG; CPU1 still caches the walk to P ->
 *            violation (7.1).
 *  v1:       as baseline (bits kept, range already contains [A,A+PAGE)).
 *  v2:       [A,A+PAGE), freed_tables -> 2 IPIs, 2 INVLPG.
 *  keep_bits:     bits kept (cleared_ptes: stride 4K), [A,A+PAGE) -> 2 IPIs, 2 INVLPG.
 *  fullmm:   TLB_FLUSH_ALL, freed_tables -> 2 IPIs; full flush on CPU0 and
 *            CPU2, CPU1 switches to init_mm -> 2 full flushes.
 *  need_flush_all: end == 0 -> no flush at all; A's page and P are freed
 *            while CPU0 still caches them -> violation. */
static const struct expect x86_s1[] = {
	{BASELINE, 0, 0, 0, 2, 10, 0, 0},
	{NESTED_PREFIX, 0, 0, 0, 1, 2, 0, 1},
	{NESTED_V1, 0, 0, 0, 2, 10, 0, 0},
	{NESTED_V2, 0, 0, 0, 2, 2, 0, 0},
	{NESTED_KEEP_BITS, 0, 0, 0, 2, 2, 0, 0},
	{NESTED_FULLMM, 0, 0, 0, 2, 0, 2, 0},
	{NESTED_NEED_FLUSH_ALL, 0, 0, 0, 0, 0, 0, 1},
};

static void test_x86_s1(void **state)
{
	check_table("x86-24", S1, TAB(x86_s1));
}

/* ---- x86 S2 ----
 * Before finish: freed_tables + cleared_pmds only, range [H, H+4K).
 *  baseline: stride 2 MiB, 1 stride -> 1 INVLPG here and on CPU2; 2 IPIs.
 *  prefix:   4096 pages > 33 -> full flush; non-lazy only: 1 IPI; CPU0 and
 *            CPU2 flush -> 2 full.
 *  v1/keep_bits:  [H, H+16M), stride 2 MiB: 8 <= 33 -> 8 INVLPG on CPU0 and CPU2;
 *            2 IPIs (CPU1 leaves lazy mode).
 *  v2/fullmm: full flush incl. lazy: 2 IPIs, 2 full flushes.
 *  need_flush_all: nothing. */
static const struct expect x86_s2[] = {
	{BASELINE, 0, 0, 0, 2, 2, 0, 0},
	{NESTED_PREFIX, 0, 0, 0, 1, 0, 2, 0},
	{NESTED_V1, 0, 0, 0, 2, 16, 0, 0},
	{NESTED_V2, 0, 0, 0, 2, 0, 2, 0},
	{NESTED_KEEP_BITS, 0, 0, 0, 2, 16, 0, 0},
	{NESTED_FULLMM, 0, 0, 0, 2, 0, 2, 0},
	{NESTED_NEED_FLUSH_ALL, 0, 0, 0, 0, 0, 0, 0},
};

static void test_x86_s2(void **state)
{
	check_table("x86-24", S2, TAB(x86_s2));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_falkor46_s1), cmocka_unit_test(test_arm64_4k_s1),
		cmocka_unit_test(test_falkor46_s2), cmocka_unit_test(test_arm64_16k_s2),
		cmocka_unit_test(test_arm64_4k_s2), cmocka_unit_test(test_x86_s1),
		cmocka_unit_test(test_x86_s2),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
