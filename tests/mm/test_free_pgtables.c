/*
 * test_free_pgtables.c - the free_pgtables / free_pgd_range floor/ceiling rule
 * (mm/memory.c and mm/mmap.c unmap_region, v5.1; kernel-model.md 2.2, 1.4,
 * 1.7).
 *
 * Rule: munmap frees a page-table page only if the whole VA span it covers
 * lies inside [floor, ceiling), where floor is the end of the previous VMA
 * and ceiling the start of the next one (0 = no limit). A PTE table covers
 * PMD_SIZE (2 MiB on 4K, 32 MiB on 16K, 512 MiB on 64K); a PMD table covers
 * PUD_SIZE (1 GiB on 4K, 64 GiB on 16K, the 4 TiB PGD entry on 3-level 64K).
 * free_pgd_range rounds addr down / ceiling down to PMD_SIZE, moves addr up
 * when it is below floor, and returns when nothing is left. Freed tables are
 * released after the flush: at once on x86 native, after an RCU grace period
 * on arm64 (tlb_remove_table). MADV_DONTNEED never frees page tables (2.3).
 *
 * Page-table state is checked directly through frame_of(hw_of(s), )->table.
 */
#include "test_util.h"

/* 16 TiB: aligned to every table span of every profile. */
#define H 0x100000000000ull

static const char *const profiles[] = {"x86-24", "arm64-4k", "arm64-16k", "falkor-46"};
#define NPROFILES (sizeof(profiles) / sizeof(profiles[0]))

struct ctx {
	int ran;
	int scenario;
	uint64_t u[16];
};

/* The entry at `depth` that translates va, or 0 when a table above is missing. */
static pte_t entry_at(struct sim *s, uint64_t va, int depth)
{
	const struct pt_geom *g = &hw_of(s)->geom;
	uint32_t table = tsim_mm(s, 0)->pgd;
	for (int d = 0;; d++) {
		pte_t e = frame_of(hw_of(s), table)->table[pt_index(g, d, va)];
		if (d == depth)
			return e;
		if (!pte_present(e))
			return 0;
		table = pte_pfn(e);
	}
}

static uint64_t pmd_size(struct sim *s) { return 1ull << hw_of(s)->geom.pmd_shift; }
static uint64_t pud_size(struct sim *s) { return 1ull << hw_of(s)->geom.pud_shift; }
static int d_pmd(struct sim *s) { return hw_of(s)->geom.levels - 2; }	/* entries -> PTE tables */
static int d_pud(struct sim *s) { return hw_of(s)->geom.levels - 3; }	/* entries -> PMD tables */
static bool is_arm64(struct sim *s) { return machine_of(s)->profile->arch == ARCH_ARM64; }

static void wait_rcu(struct sim *s)
{
	sim_step(s, YP_USER, (uint64_t)P(s, P_rcu_grace_ns) + 1000000u);
}

static uint64_t map_page(struct sim *s, uint64_t at)
{
	uint64_t a = sys_mmap(s, at, hw_of(s)->geom.page_size, TLBSIM_MAP_PRIVATE);
	assert_true(a == at);
	assert_int_equal(user_access(s, a, true), 0);
	return a;
}

static struct sim *run_scenario(const char *profile, thread_fn fn, struct ctx *c)
{
	struct sim *s = tsim_new(profile, 2, NESTED_FULLMM);
	tsim_spawn(s, fn, c, 0);
	tsim_run(s);
	assert_int_equal(c->ran, 1);
	return s;
}

/* ---------------------------------------------------------------------- */
/* The only VMA of the mm: floor = FIRST_USER_ADDRESS (0), ceiling =
 * USER_PGTABLES_CEILING (0, no limit): every table below the root on the
 * path of A is freed: levels - 1 tables. */
static void body_lone(struct sim *s, struct sim_thread *t)
{
	struct ctx *c = t->arg;
	uint64_t ps = hw_of(s)->geom.page_size;
	uint64_t a = map_page(s, H + 4 * ps);
	assert_true(pte_present(entry_at(s, a, d_pmd(s))));
	uint64_t f0 = s->m.tables_freed;
	assert_int_equal(sys_munmap(s, a, ps), 0);
	/* unhooked at once */
	assert_false(pte_present(entry_at(s, a, 0)));
	c->u[0] = s->m.tables_freed - f0;	/* before RCU */
	wait_rcu(s);
	c->u[1] = s->m.tables_freed - f0;
	c->ran = 1;
}

static void test_lone_mapping_frees_all_its_tables(void **state)
{
	for (size_t i = 0; i < NPROFILES; i++) {
		struct ctx c = {0};
		struct sim *s = run_scenario(profiles[i], body_lone, &c);
		uint64_t want = (uint64_t)hw_of(s)->geom.levels - 1;
		if (is_arm64(s))
			assert_int_equal(c.u[0], 0);	/* RCU-deferred */
		else
			assert_int_equal(c.u[0], want);	/* freed with the page batch */
		assert_int_equal(c.u[1], want);
		assert_int_equal(s->m.violations, 0);
		tsim_free(s);
	}
}

/* A neighbouring VMA in the same PMD_SIZE span keeps the PTE table: above A
 * (ceiling side, scenario 0) or below A (floor side, scenario 1). Unmapping
 * the neighbour afterwards frees it. */
static void body_same_pmd_span(struct sim *s, struct sim_thread *t)
{
	struct ctx *c = t->arg;
	uint64_t ps = hw_of(s)->geom.page_size;
	uint64_t a = H + 4 * ps;
	uint64_t b = c->scenario == 0 ? H + 8 * ps : H;
	map_page(s, a);
	map_page(s, b);
	pte_t pmd_before = entry_at(s, a, d_pmd(s));
	assert_true(pte_present(pmd_before));
	assert_true(entry_at(s, b, d_pmd(s)) == pmd_before);	/* one PTE table */
	uint64_t f0 = s->m.tables_freed;

	assert_int_equal(sys_munmap(s, a, ps), 0);
	wait_rcu(s);
	c->u[0] = s->m.tables_freed - f0;
	c->u[1] = entry_at(s, a, d_pmd(s)) == pmd_before;	/* still hooked */
	c->u[2] = pte_present(entry_at(s, a, d_pmd(s) + 1));	/* A's PTE */
	c->u[3] = pte_present(entry_at(s, b, d_pmd(s) + 1));	/* B's PTE */

	assert_int_equal(sys_munmap(s, b, ps), 0);
	wait_rcu(s);
	c->u[4] = s->m.tables_freed - f0;
	c->u[5] = pte_present(entry_at(s, a, 0));
	c->ran = 1;
}

static void test_neighbour_in_same_pmd_span_keeps_pte_table(void **state)
{
	for (size_t i = 0; i < NPROFILES; i++) {
		for (int sc = 0; sc < 2; sc++) {
			struct ctx c = {.scenario = sc};
			struct sim *s = run_scenario(profiles[i], body_same_pmd_span, &c);
			assert_int_equal(c.u[0], 0);
			assert_int_equal(c.u[1], 1);
			assert_int_equal(c.u[2], 0);
			assert_int_equal(c.u[3], 1);
			/* now the last VMA: all levels - 1 tables go */
			assert_int_equal(c.u[4], hw_of(s)->geom.levels - 1);
			assert_int_equal(c.u[5], 0);
			tsim_free(s);
		}
	}
}

/* Neighbour N in the next PMD span but in the same PUD span: A's PTE table
 * is freed (its span [H, H+PMD_SIZE) lies in [0, N)), the PMD table is not
 * (its span [H, H+PUD_SIZE) reaches past the ceiling N). */
static void body_next_pmd_span(struct sim *s, struct sim_thread *t)
{
	struct ctx *c = t->arg;
	uint64_t ps = hw_of(s)->geom.page_size;
	uint64_t a = map_page(s, H + 4 * ps);
	uint64_t n = map_page(s, H + pmd_size(s));
	pte_t pud_before = entry_at(s, a, d_pud(s));
	assert_true(entry_at(s, n, d_pud(s)) == pud_before);	/* same PMD table */
	assert_true(entry_at(s, n, d_pmd(s)) != entry_at(s, a, d_pmd(s)));
	uint64_t f0 = s->m.tables_freed;
	assert_int_equal(sys_munmap(s, a, ps), 0);
	c->u[0] = pte_present(entry_at(s, a, d_pmd(s)));
	c->u[1] = entry_at(s, a, d_pud(s)) == pud_before;
	c->u[2] = pte_present(entry_at(s, n, d_pmd(s) + 1));
	wait_rcu(s);
	c->u[3] = s->m.tables_freed - f0;
	c->ran = 1;
}

static void test_neighbour_in_next_pmd_span_frees_only_pte_table(void **state)
{
	for (size_t i = 0; i < NPROFILES; i++) {
		struct ctx c = {0};
		struct sim *s = run_scenario(profiles[i], body_next_pmd_span, &c);
		assert_int_equal(c.u[0], 0);
		assert_int_equal(c.u[1], 1);
		assert_int_equal(c.u[2], 1);
		assert_int_equal(c.u[3], 1);
		tsim_free(s);
	}
}

/* Neighbour N2 in the next PUD span (same PGD entry on 4-level layouts, the
 * next PGD entry on 3-level 64K): PTE table and PMD table are freed (the PMD
 * table's span [H, H+PUD_SIZE) lies in [0, N2)); nothing above. */
static void body_next_pud_span(struct sim *s, struct sim_thread *t)
{
	struct ctx *c = t->arg;
	uint64_t ps = hw_of(s)->geom.page_size;
	uint64_t a = map_page(s, H + 4 * ps);
	map_page(s, H + pud_size(s));
	uint64_t f0 = s->m.tables_freed;
	assert_int_equal(sys_munmap(s, a, ps), 0);
	c->u[0] = pte_present(entry_at(s, a, d_pud(s)));
	c->u[1] = d_pud(s) > 0 ? pte_present(entry_at(s, a, d_pud(s) - 1)) : 1;
	wait_rcu(s);
	c->u[2] = s->m.tables_freed - f0;
	c->ran = 1;
}

static void test_pmd_table_freed_when_pud_span_free(void **state)
{
	for (size_t i = 0; i < NPROFILES; i++) {
		struct ctx c = {0};
		struct sim *s = run_scenario(profiles[i], body_next_pud_span, &c);
		assert_int_equal(c.u[0], 0);	/* PMD table unhooked */
		assert_int_equal(c.u[1], 1);	/* the level above stays */
		assert_int_equal(c.u[2], 2);
		tsim_free(s);
	}
}

/* free_pgd_range called directly inside a gather on an empty PTE table
 * (MADV_DONTNEED zapped the PTE and, by rule 2.3, freed no table):
 *  - floor inside the PMD span (H + page) -> addr moves up past the span:
 *    nothing freed, nothing recorded;
 *  - ceiling inside the span (H + PMD_SIZE - page) -> rounded down to H:
 *    nothing freed;
 *  - floor H, ceiling H + PMD_SIZE: the PTE table is freed, recorded as
 *    freed_tables + cleared_pmds with the one-page range [H, H+PAGE_SIZE)
 *    at the first address the table covers (1.4), not at A; the PMD table
 *    is not (its PUD span is cut by the ceiling): no cleared_puds.
 *  - with floor H, ceiling H + PUD_SIZE - PMD_SIZE the PMD table stays; with
 *    ceiling H + PUD_SIZE it is freed too (cleared_puds). */
static void body_direct(struct sim *s, struct sim_thread *t)
{
	struct ctx *c = t->arg;
	struct mm_struct *mm = task_of(t)->mm;
	uint64_t ps = hw_of(s)->geom.page_size, pmd = pmd_size(s), pud = pud_size(s);
	uint64_t a = map_page(s, H + 4 * ps);
	uint64_t f0 = s->m.tables_freed;
	assert_int_equal(sys_madvise_dontneed(s, a, ps), 0);
	assert_false(pte_present(entry_at(s, a, d_pmd(s) + 1)));
	assert_true(pte_present(entry_at(s, a, d_pmd(s))));	/* DONTNEED keeps the table */
	wait_rcu(s);
	assert_int_equal(s->m.tables_freed, f0);

	struct mmu_gather tlb;
	const uint64_t cut[][2] = {{H + ps, 0}, {0, H + pmd - ps}, {H + ps, H + pmd - ps}};
	for (size_t i = 0; i < sizeof(cut) / sizeof(cut[0]); i++) {
		tlb_gather_mmu(s, &tlb, mm, a, a + ps);
		free_pgd_range(s, &tlb, a, a + ps, cut[i][0], cut[i][1]);
		assert_false(tlb.freed_tables);
		assert_false(tlb.cleared_pmds);
		assert_true(tlb.end == 0);
		tlb_finish_mmu(s, &tlb, a, a + ps);
		assert_true(pte_present(entry_at(s, a, d_pmd(s))));
	}
	wait_rcu(s);
	assert_int_equal(s->m.tables_freed, f0);

	c->u[9] = c->scenario;
	if (c->scenario == 0) {
		/* exactly the PMD span */
		tlb_gather_mmu(s, &tlb, mm, a, a + ps);
		free_pgd_range(s, &tlb, a, a + ps, H, H + pmd);
		c->u[0] = tlb.freed_tables;
		c->u[1] = tlb.cleared_pmds;
		c->u[2] = tlb.cleared_puds;
		c->u[3] = tlb.start == H && tlb.end == H + ps;
		tlb_finish_mmu(s, &tlb, a, a + ps);
		c->u[4] = pte_present(entry_at(s, a, d_pmd(s)));
		c->u[5] = pte_present(entry_at(s, a, d_pud(s)));
	} else if (c->scenario == 1) {
		/* PUD span minus one PMD span: PMD table kept */
		tlb_gather_mmu(s, &tlb, mm, a, a + ps);
		free_pgd_range(s, &tlb, a, a + ps, H, H + pud - pmd);
		c->u[0] = tlb.freed_tables;
		c->u[1] = tlb.cleared_pmds;
		c->u[2] = tlb.cleared_puds;
		c->u[3] = tlb.start == H && tlb.end == H + ps;
		tlb_finish_mmu(s, &tlb, a, a + ps);
		c->u[4] = pte_present(entry_at(s, a, d_pmd(s)));
		c->u[5] = pte_present(entry_at(s, a, d_pud(s)));
	} else {
		/* the whole PUD span: PMD table freed as well */
		tlb_gather_mmu(s, &tlb, mm, a, a + ps);
		free_pgd_range(s, &tlb, a, a + ps, H, H + pud);
		c->u[0] = tlb.freed_tables;
		c->u[1] = tlb.cleared_pmds;
		c->u[2] = tlb.cleared_puds;
		c->u[3] = tlb.start == H && tlb.end == H + ps;
		tlb_finish_mmu(s, &tlb, a, a + ps);
		c->u[4] = pte_present(entry_at(s, a, d_pmd(s)));
		c->u[5] = pte_present(entry_at(s, a, d_pud(s)));
		c->u[6] = d_pud(s) > 0 ? pte_present(entry_at(s, a, d_pud(s) - 1)) : 1;
	}
	wait_rcu(s);
	c->u[7] = s->m.tables_freed - f0;
	c->ran = 1;
}

static void test_free_pgd_range_floor_ceiling(void **state)
{
	for (size_t i = 0; i < NPROFILES; i++) {
		for (int sc = 0; sc < 3; sc++) {
			struct ctx c = {.scenario = sc};
			struct sim *s = run_scenario(profiles[i], body_direct, &c);
			assert_int_equal(c.u[0], 1);	/* freed_tables */
			assert_int_equal(c.u[1], 1);	/* cleared_pmds */
			assert_int_equal(c.u[2], sc == 2);	/* cleared_puds iff PMD table freed */
			/* the table frees record one page at the first covered address,
			 * which is H for both the PTE and the PMD table */
			assert_int_equal(c.u[3], 1);
			assert_int_equal(c.u[4], 0);	/* PTE table unhooked */
			assert_int_equal(c.u[5], sc != 2);
			if (sc == 2)
				assert_int_equal(c.u[6], 1);	/* nothing above the PMD table */
			assert_int_equal(c.u[7], sc == 2 ? 2 : 1);
			assert_int_equal(s->m.violations, 0);
			tsim_free(s);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lone_mapping_frees_all_its_tables),
		cmocka_unit_test(test_neighbour_in_same_pmd_span_keeps_pte_table),
		cmocka_unit_test(test_neighbour_in_next_pmd_span_frees_only_pte_table),
		cmocka_unit_test(test_pmd_table_freed_when_pud_span_free),
		cmocka_unit_test(test_free_pgd_range_floor_ceiling),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
