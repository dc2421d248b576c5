/*
 * test_mmu_gather.c - mmu_gather recording and reset rules
 * (include/asm-generic/tlb.h and mm/mmu_gather.c as of v5.1; kernel-model.md
 * sections 1.2-1.9, 3.3-3.4, 4.3 and erratum E2).
 *
 * Every expected value below is derived from a rule quoted in the comment of
 * the test, not read back from the simulator.
 *
 * Contended lines (struct cacheline, mm.h): inc/dec_tlb_flush_pending are
 * atomics on the mm's tlb_flush_pending line and zap_pte_range's
 * add_mm_rss_vec one on its rss_stat line; each pays line_transfer_ns when
 * another CPU wrote that line last. Functions that call sim_step()
 * (tlb_gather_mmu, tlb_finish_mmu, the table recorders) run inside a simulated
 * thread; the pure helpers (__tlb_reset_range, tlb_get_unmap_shift, the batch
 * constants) are called directly.
 */
#include "test_util.h"

/* A user address aligned to every table span of every profile (16 TiB):
 * 4 TiB (64K PGD entry), 512 GiB (4K PGD entry), 1 GiB, 512 MiB, 2 MiB. */
#define H 0x100000000000ull

struct ctx {
	int ran;
	uint64_t u[8];
};

static struct sim *run_body(const char *profile, int cpus, enum nested_policy pol, thread_fn fn,
			    struct ctx *c)
{
	struct sim *s = tsim_new(profile, cpus, pol);
	tsim_spawn(s, fn, c, 0);
	tsim_run(s);
	assert_int_equal(c->ran, 1);
	return s;
}

static uint64_t tlbi_total(const struct sim *s)
{
	return s->m.tlbi.vale1is + s->m.tlbi.vae1is + s->m.tlbi.aside1is + s->m.tlbi.vaale1is +
	       s->m.tlbi.vmalle1is + s->m.tlbi.local;
}

/* Advance the current thread past one RCU grace period (arm64 table free). */
static void wait_rcu(struct sim *s)
{
	sim_step(s, YP_USER, (uint64_t)P(s, P_rcu_grace_ns) + 1000000u);
}

/* ---------------------------------------------------------------------- */
/* 1.3 tlb_gather_mmu: inc_tlb_flush_pending, empty range, bits clear;
 *     tlb_finish_mmu on an empty, non-nested gather flushes nothing (1.6:
 *     tlb_flush_mmu_tlbonly returns when end == 0) and decrements pending. */
static void body_gather_init(struct sim *s, struct sim_thread *t)
{
	struct ctx *c = t->arg;
	struct mm_struct *mm = task_of(t)->mm;
	struct mmu_gather tlb;
	memset(&tlb, 0, sizeof(tlb));
	/* stale values that tlb_gather_mmu must overwrite */
	tlb.start = 123;
	tlb.end = 456;
	tlb.fullmm = tlb.need_flush_all = tlb.freed_tables = true;
	tlb.cleared_ptes = tlb.cleared_pmds = tlb.cleared_puds = tlb.cleared_p4ds = true;
	tlb.nr_pages = 77;

	assert_int_equal(mm->tlb_flush_pending, 0);
	uint64_t gathers = s->m.gathers;
	tlb_gather_mmu(s, &tlb, mm, H, H + (1ull << 20));
	assert_int_equal(mm->tlb_flush_pending, 1);
	assert_int_equal(s->m.gathers, gathers + 1);
	assert_ptr_equal(tlb.mm, mm);
	assert_false(tlb.fullmm);
	assert_false(tlb.need_flush_all);
	assert_false(tlb.freed_tables);
	assert_false(tlb.cleared_ptes);
	assert_false(tlb.cleared_pmds);
	assert_false(tlb.cleared_puds);
	assert_false(tlb.cleared_p4ds);
	assert_null(tlb.batch);
	assert_int_equal(tlb.nr_pages, 0);
	/* empty encoding: start = TASK_SIZE (above every user VA), end = 0 */
	assert_true(tlb.end == 0);
	assert_true(tlb.start >= hw_of(s)->geom.task_size);
	assert_false(mm_tlb_flush_nested(mm));

	uint64_t tlbi = tlbi_total(s), full = s->m.flush_full, loc = s->m.flush_local_pages;
	uint64_t ipi = s->m.ipi_sent, gen = mm->context.tlb_gen, nested = s->m.nested_finishes;
	tlb_finish_mmu(s, &tlb, H, H + (1ull << 20));
	assert_int_equal(mm->tlb_flush_pending, 0);
	assert_int_equal(s->m.nested_finishes, nested);
	assert_int_equal(tlbi_total(s), tlbi);
	assert_int_equal(s->m.flush_full, full);
	assert_int_equal(s->m.flush_local_pages, loc);
	assert_int_equal(s->m.ipi_sent, ipi);
	assert_true(mm->context.tlb_gen == gen);	/* x86: no flush_tlb_mm_range call at all */
	c->ran = 1;
}

static void test_gather_init_arm64(void **state)
{
	struct ctx c = {0};
	tsim_free(run_body("falkor-46", 2, NESTED_PREFIX, body_gather_init, &c));
}

static void test_gather_init_x86(void **state)
{
	struct ctx c = {0};
	tsim_free(run_body("x86-24", 2, NESTED_PREFIX, body_gather_init, &c));
}

/* 1.2/1.3: fullmm iff start == 0 && end == ~0; a fullmm gather's range is
 * start = end = ~0 (1.5). 3.3: arm64 tlb_flush with fullmm and no freed
 * tables issues no TLBI (the dead ASID is never reused without a flush). */
static void body_fullmm(struct sim *s, struct sim_thread *t)
{
	struct ctx *c = t->arg;
	struct mm_struct *mm = task_of(t)->mm;
	struct mmu_gather tlb;

	tlb_gather_mmu(s, &tlb, mm, 0, ~0ull);
	assert_true(tlb.fullmm);
	assert_true(tlb.start == ~0ull);
	assert_true(tlb.end == ~0ull);
	uint64_t tlbi = tlbi_total(s);
	tlb_finish_mmu(s, &tlb, 0, ~0ull);
	assert_int_equal(tlbi_total(s), tlbi);
	assert_int_equal(mm->tlb_flush_pending, 0);

	const uint64_t cases[][2] = {
		{0, hw_of(s)->geom.task_size},	/* whole user range but not ~0 */
		{hw_of(s)->geom.page_size, ~0ull},	/* end ~0 but start != 0 */
		{H, H + hw_of(s)->geom.page_size},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		tlb_gather_mmu(s, &tlb, mm, cases[i][0], cases[i][1]);
		assert_false(tlb.fullmm);
		assert_true(tlb.end == 0);
		tlb_finish_mmu(s, &tlb, cases[i][0], cases[i][1]);
	}
	assert_int_equal(tlbi_total(s), tlbi);
	assert_int_equal(mm->tlb_flush_pending, 0);
	c->ran = 1;
}

static void test_fullmm_iff_whole_address_space(void **state)
{
	struct ctx c = {0};
	tsim_free(run_body("falkor-46", 2, NESTED_PREFIX, body_fullmm, &c));
}

/* 1.4: tlb_remove_tlb_entry = adjust_range(addr, PAGE_SIZE) + cleared_ptes;
 * unmap shift = PAGE_SHIFT. 3.3/3.4: arm64 flush with no table freed is
 * last-level (VALE1IS), stride one page, one op per page of [start,end). */
static void body_remove_tlb_entry(struct sim *s, struct sim_thread *t)
{
	struct ctx *c = t->arg;
	uint64_t ps = hw_of(s)->geom.page_size;
	struct mmu_gather tlb;
	tlb_gather_mmu(s, &tlb, task_of(t)->mm, H, H + 16 * ps);
	tlb_remove_tlb_entry(&tlb, H + 2 * ps, ps);
	assert_true(tlb.start == H + 2 * ps);
	assert_true(tlb.end == H + 3 * ps);
	tlb_remove_tlb_entry(&tlb, H, ps);
	tlb_remove_tlb_entry(&tlb, H + ps, ps);
	assert_true(tlb.start == H);
	assert_true(tlb.end == H + 3 * ps);
	assert_true(tlb.cleared_ptes);
	assert_false(tlb.cleared_pmds);
	assert_false(tlb.cleared_puds);
	assert_false(tlb.freed_tables);
	assert_int_equal(tlb_get_unmap_shift(&hw_of(s)->geom, &tlb), hw_of(s)->geom.page_shift);
	assert_true(tlb_get_unmap_size(&hw_of(s)->geom, &tlb) == ps);

	uint64_t vale = s->m.tlbi.vale1is, other = tlbi_total(s) - vale;
	tlb_finish_mmu(s, &tlb, H, H + 16 * ps);
	assert_int_equal(s->m.tlbi.vale1is - vale, 3);
	assert_int_equal(tlbi_total(s) - s->m.tlbi.vale1is, other);
	c->ran = 1;
}

static void test_remove_tlb_entry_widens_range(void **state)
{
	struct ctx c = {0};
	tsim_free(run_body("falkor-46", 2, NESTED_PREFIX, body_remove_tlb_entry, &c));
	memset(&c, 0, sizeof(c));
	tsim_free(run_body("arm64-4k", 2, NESTED_PREFIX, body_remove_tlb_entry, &c));
}

/* 1.4: pte_free_tlb(table, addr) = adjust_range(addr, PAGE_SIZE),
 * freed_tables = 1, cleared_pmds = 1; with no PTE cleared the unmap shift is
 * PMD_SHIFT (29 on 64K, 21 on 4K). 3.3/3.4: the arm64 flush is then
 * all-level (VAE1IS, last_level = !freed_tables) with stride PMD_SIZE: one
 * op for the one-page range. 1.7: arm64 frees the table only after an RCU
 * grace period. */
static void body_pte_free_tlb(struct sim *s, struct sim_thread *t)
{
	struct ctx *c = t->arg;
	const struct pt_geom *g = &hw_of(s)->geom;
	uint64_t ps = g->page_size;
	uint32_t table = frame_alloc(hw_of(s), FRAME_PGTABLE, g->levels - 1);
	struct mmu_gather tlb;
	tlb_gather_mmu(s, &tlb, task_of(t)->mm, H, H + ps);
	pte_free_tlb(s, &tlb, table, H);
	assert_true(tlb.freed_tables);
	assert_true(tlb.cleared_pmds);
	assert_false(tlb.cleared_ptes);
	assert_false(tlb.cleared_puds);
	assert_false(tlb.cleared_p4ds);
	assert_true(tlb.start == H);
	assert_true(tlb.end == H + ps);
	c->u[0] = tlb_get_unmap_shift(&hw_of(s)->geom, &tlb);
	c->u[1] = tlb_get_unmap_size(&hw_of(s)->geom, &tlb);

	uint64_t vae = s->m.tlbi.vae1is, vale = s->m.tlbi.vale1is, asid = s->m.tlbi.aside1is;
	uint64_t freed = s->m.tables_freed;
	tlb_finish_mmu(s, &tlb, H, H + ps);
	c->u[2] = s->m.tlbi.vae1is - vae;
	c->u[3] = s->m.tlbi.vale1is - vale;
	c->u[4] = s->m.tlbi.aside1is - asid;
	c->u[5] = s->m.tables_freed - freed;	/* right after finish */
	wait_rcu(s);
	c->u[6] = s->m.tables_freed - freed;	/* after a grace period */
	c->ran = 1;
}

static void check_pte_free(const char *profile, unsigned pmd_shift)
{
	struct ctx c = {0};
	struct sim *s = run_body(profile, 2, NESTED_PREFIX, body_pte_free_tlb, &c);
	assert_int_equal(c.u[0], pmd_shift);
	assert_true(c.u[1] == 1ull << pmd_shift);
	assert_int_equal(c.u[2], 1);	/* one VAE1IS */
	assert_int_equal(c.u[3], 0);	/* never leaf-only when a table was freed (I4) */
	assert_int_equal(c.u[4], 0);
	assert_int_equal(c.u[5], 0);	/* still waiting for RCU */
	assert_int_equal(c.u[6], 1);
	tsim_free(s);
}

static void test_pte_free_tlb_arm64_64k(void **state)
{
	check_pte_free("falkor-46", 29);
}

static void test_pte_free_tlb_arm64_4k(void **state)
{
	check_pte_free("arm64-4k", 21);
}

/* x86 native (1.7): the table goes through the page batch and is freed right
 * after the flush, no RCU. 4.3: stride_shift = PMD_SHIFT (21), one INVLPG for
 * the one-page range; no other CPU has the mm loaded, so no IPI. */
static void body_pte_free_x86(struct sim *s, struct sim_thread *t)
{
	struct ctx *c = t->arg;
	const struct pt_geom *g = &hw_of(s)->geom;
	uint32_t table = frame_alloc(hw_of(s), FRAME_PGTABLE, g->levels - 1);
	struct mmu_gather tlb;
	tlb_gather_mmu(s, &tlb, task_of(t)->mm, H, H + g->page_size);
	pte_free_tlb(s, &tlb, table, H);
	c->u[0] = tlb_get_unmap_shift(&hw_of(s)->geom, &tlb);
	uint64_t loc = s->m.flush_local_pages, full = s->m.flush_full, ipi = s->m.ipi_sent;
	uint64_t freed = s->m.tables_freed;
	tlb_finish_mmu(s, &tlb, H, H + g->page_size);
	c->u[1] = s->m.flush_local_pages - loc;
	c->u[2] = s->m.flush_full - full;
	c->u[3] = s->m.ipi_sent - ipi;
	c->u[4] = s->m.tables_freed - freed;
	c->ran = 1;
}

static void test_pte_free_tlb_x86(void **state)
{
	struct ctx c = {0};
	struct sim *s = run_body("x86-24", 2, NESTED_PREFIX, body_pte_free_x86, &c);
	assert_int_equal(c.u[0], 21);
	assert_int_equal(c.u[1], 1);
	assert_int_equal(c.u[2], 0);
	assert_int_equal(c.u[3], 0);
	assert_int_equal(c.u[4], 1);
	tsim_free(s);
}

/* 1.4: pmd_free_tlb sets freed_tables + cleared_puds (the level of the entry
 * that pointed to the table) and a one-page range; the unmap shift is then
 * PUD_SHIFT (30 on 4K). */
static void body_pmd_free_tlb(struct sim *s, struct sim_thread *t)
{
	struct ctx *c = t->arg;
	const struct pt_geom *g = &hw_of(s)->geom;
	uint32_t table = frame_alloc(hw_of(s), FRAME_PGTABLE, g->depth_pmd);
	struct mmu_gather tlb;
	tlb_gather_mmu(s, &tlb, task_of(t)->mm, H, H + g->page_size);
	pmd_free_tlb(s, &tlb, table, H);
	assert_true(tlb.freed_tables);
	assert_true(tlb.cleared_puds);
	assert_false(tlb.cleared_pmds);
	assert_false(tlb.cleared_ptes);
	assert_true(tlb.start == H);
	assert_true(tlb.end == H + g->page_size);
	c->u[0] = tlb_get_unmap_shift(&hw_of(s)->geom, &tlb);
	uint64_t vae = s->m.tlbi.vae1is, vale = s->m.tlbi.vale1is;
	tlb_finish_mmu(s, &tlb, H, H + g->page_size);
	c->u[1] = s->m.tlbi.vae1is - vae;
	c->u[2] = s->m.tlbi.vale1is - vale;
	wait_rcu(s);
	c->ran = 1;
}

static void test_pmd_free_tlb_sets_cleared_puds(void **state)
{
	struct ctx c = {0};
	struct sim *s = run_body("arm64-4k", 2, NESTED_PREFIX, body_pmd_free_tlb, &c);
	assert_int_equal(c.u[0], 30);
	assert_int_equal(c.u[1], 1);
	assert_int_equal(c.u[2], 0);
	assert_int_equal(s->m.tables_freed, 1);
	tsim_free(s);
}

/* 1.4: tlb_get_unmap_shift returns the smallest cleared level: PAGE_SHIFT if
 * cleared_ptes, else PMD_SHIFT, PUD_SHIFT, P4D_SHIFT; default PAGE_SHIFT. */
static void test_unmap_shift_smallest_level(void **state)
{
	struct sim *s = tsim_new("arm64-4k", 1, NESTED_PREFIX);
	struct mmu_gather tlb;
	memset(&tlb, 0, sizeof(tlb));
	assert_int_equal(tlb_get_unmap_shift(&hw_of(s)->geom, &tlb), 12);
	tlb.cleared_p4ds = 1;
	assert_int_equal(tlb_get_unmap_shift(&hw_of(s)->geom, &tlb), hw_of(s)->geom.p4d_shift);
	tlb.cleared_puds = 1;
	assert_int_equal(tlb_get_unmap_shift(&hw_of(s)->geom, &tlb), 30);
	tlb.cleared_pmds = 1;
	assert_int_equal(tlb_get_unmap_shift(&hw_of(s)->geom, &tlb), 21);
	tlb.cleared_ptes = 1;
	assert_int_equal(tlb_get_unmap_shift(&hw_of(s)->geom, &tlb), 12);
	tlb.freed_tables = 1;	/* freeing a table does not change the stride */
	assert_int_equal(tlb_get_unmap_shift(&hw_of(s)->geom, &tlb), 12);
	tsim_free(s);

	s = tsim_new("falkor-46", 1, NESTED_PREFIX);
	memset(&tlb, 0, sizeof(tlb));
	tlb.cleared_pmds = 1;
	assert_int_equal(tlb_get_unmap_shift(&hw_of(s)->geom, &tlb), 29);
	assert_true(tlb_get_unmap_size(&hw_of(s)->geom, &tlb) == 512ull << 20);
	tlb.cleared_ptes = 1;
	assert_int_equal(tlb_get_unmap_shift(&hw_of(s)->geom, &tlb), 16);
	tsim_free(s);
}

/* 1.5 __tlb_reset_range: non-fullmm -> start = TASK_SIZE, end = 0; fullmm ->
 * start = end = ~0; freed_tables and every cleared_* cleared either way;
 * fullmm and need_flush_all are not touched. */
static void test_reset_range(void **state)
{
	struct mmu_gather tlb;
	memset(&tlb, 0, sizeof(tlb));
	tlb.start = H;
	tlb.end = H + 4096;
	tlb.need_flush_all = tlb.freed_tables = true;
	tlb.cleared_ptes = tlb.cleared_pmds = tlb.cleared_puds = tlb.cleared_p4ds = true;
	__tlb_reset_range(&tlb);
	assert_true(tlb.end == 0);
	assert_true(tlb.start >= (1ull << 48));	/* TASK_SIZE or above on every profile */
	assert_false(tlb.freed_tables);
	assert_false(tlb.cleared_ptes);
	assert_false(tlb.cleared_pmds);
	assert_false(tlb.cleared_puds);
	assert_false(tlb.cleared_p4ds);
	assert_false(tlb.fullmm);
	assert_true(tlb.need_flush_all);

	tlb.fullmm = true;
	tlb.start = 0;
	tlb.end = H;
	tlb.freed_tables = tlb.cleared_pmds = true;
	__tlb_reset_range(&tlb);
	assert_true(tlb.start == ~0ull);
	assert_true(tlb.end == ~0ull);
	assert_false(tlb.freed_tables);
	assert_false(tlb.cleared_pmds);
	assert_true(tlb.fullmm);

	/* 1.4 __tlb_adjust_range after a reset starts from the empty range */
	tlb.fullmm = false;
	__tlb_reset_range(&tlb);
	__tlb_adjust_range(&tlb, H + 8192, 4096);
	assert_true(tlb.start == H + 8192);
	assert_true(tlb.end == H + 12288);
}

/* 1.6 (v4.20..v5.4): tlb_flush_mmu_tlbonly returns at once when end == 0,
 * even if level bits are set, and does not reset them. When end != 0 it
 * flushes and then resets the range. */
static void body_tlbonly(struct sim *s, struct sim_thread *t)
{
	struct ctx *c = t->arg;
	struct mm_struct *mm = task_of(t)->mm;
	uint64_t ps = hw_of(s)->geom.page_size;
	struct mmu_gather tlb;
	tlb_gather_mmu(s, &tlb, mm, H, H + ps);
	tlb.freed_tables = tlb.cleared_ptes = tlb.cleared_pmds = true;
	uint64_t tlbi = tlbi_total(s), gen = mm->context.tlb_gen, loc = s->m.flush_local_pages;
	uint64_t full = s->m.flush_full;
	tlb_flush_mmu_tlbonly(s, &tlb);
	assert_int_equal(tlbi_total(s), tlbi);
	assert_true(mm->context.tlb_gen == gen);
	assert_int_equal(s->m.flush_local_pages, loc);
	assert_int_equal(s->m.flush_full, full);
	assert_true(tlb.freed_tables);
	assert_true(tlb.cleared_ptes);
	assert_true(tlb.cleared_pmds);
	assert_true(tlb.end == 0);

	/* now record one PTE: the flush happens and resets everything */
	tlb.freed_tables = tlb.cleared_pmds = false;
	tlb_remove_tlb_entry(&tlb, H, ps);
	tlb_flush_mmu_tlbonly(s, &tlb);
	assert_true(tlb.end == 0);
	assert_false(tlb.cleared_ptes);
	c->u[0] = s->m.tlbi.vale1is;
	c->u[1] = tlbi_total(s) - tlbi;
	c->u[2] = mm->context.tlb_gen - gen;
	c->u[3] = s->m.flush_local_pages - loc;
	tlb_finish_mmu(s, &tlb, H, H + ps);	/* nothing left: no further flush */
	c->u[4] = tlbi_total(s) - tlbi;
	c->u[5] = mm->context.tlb_gen - gen;
	c->ran = 1;
}

static void test_tlbonly_skips_empty_range_arm64(void **state)
{
	struct ctx c = {0};
	struct sim *s = run_body("falkor-46", 2, NESTED_PREFIX, body_tlbonly, &c);
	assert_int_equal(c.u[0], 1);	/* one leaf VALE1IS for the one PTE */
	assert_int_equal(c.u[1], 1);
	assert_int_equal(c.u[4], 1);
	tsim_free(s);
}

static void test_tlbonly_skips_empty_range_x86(void **state)
{
	struct ctx c = {0};
	struct sim *s = run_body("x86-24", 2, NESTED_PREFIX, body_tlbonly, &c);
	assert_int_equal(c.u[2], 1);	/* one flush_tlb_mm_range: tlb_gen bumped once */
	assert_int_equal(c.u[3], 1);	/* one INVLPG on the local CPU */
	assert_int_equal(c.u[5], 1);
	tsim_free(s);
}

/* 1.2: MAX_GATHER_BATCH = (PAGE_SIZE - 16) / 8 -> 510 (4K), 2046 (16K),
 * 8190 (64K); MAX_GATHER_BATCH_COUNT = 10000 / MAX_GATHER_BATCH -> 19, 4, 1;
 * capacity 8 + count * batch = 9698 (4K), 8198 (64K);
 * MAX_TABLE_BATCH = (PAGE_SIZE - 24) / 8 -> 509, 8189. */
static void test_batch_constants(void **state)
{
	assert_int_equal(max_gather_batch(4096), 510);
	assert_int_equal(max_gather_batch(16384), 2046);
	assert_int_equal(max_gather_batch(65536), 8190);
	assert_int_equal(max_gather_batch_count(4096), 19);
	assert_int_equal(max_gather_batch_count(16384), 4);
	assert_int_equal(max_gather_batch_count(65536), 1);
	assert_int_equal(max_table_batch(4096), 509);
	assert_int_equal(max_table_batch(65536), 8189);
	assert_int_equal(MMU_GATHER_BUNDLE, 8);
}

static void body_capacity(struct sim *s, struct sim_thread *t)
{
	struct ctx *c = t->arg;
	struct mmu_gather tlb;
	tlb_gather_mmu(s, &tlb, task_of(t)->mm, H, H + hw_of(s)->geom.page_size);
	c->u[0] = tlb.max_pages;
	tlb_finish_mmu(s, &tlb, H, H + hw_of(s)->geom.page_size);
	c->ran = 1;
}

static void test_gather_capacity(void **state)
{
	struct ctx c = {0};
	tsim_free(run_body("x86-24", 1, NESTED_PREFIX, body_capacity, &c));
	assert_int_equal(c.u[0], 9698);
	memset(&c, 0, sizeof(c));
	tsim_free(run_body("falkor-46", 1, NESTED_PREFIX, body_capacity, &c));
	assert_int_equal(c.u[0], 8198);
}

/* 1.3/1.9: tlb_finish_mmu decrements tlb_flush_pending; it is "nested" iff
 * the counter is > 1 at the check. A nested finish flushes [start,end) even if
 * the gather recorded nothing (the 4.14 rule behind I2): prefix resets and
 * adjusts to [start,end) -> arm64 last-level, stride page: one VALE1IS per
 * page of a 4-page range; fullmm -> one ASIDE1IS. The outer, no longer nested
 * finish of an empty gather flushes nothing. */
static void body_nesting(struct sim *s, struct sim_thread *t)
{
	struct ctx *c = t->arg;
	struct mm_struct *mm = task_of(t)->mm;
	uint64_t ps = hw_of(s)->geom.page_size;
	struct mmu_gather outer, inner;
	tlb_gather_mmu(s, &outer, mm, H, H + ps);
	tlb_gather_mmu(s, &inner, mm, H, H + 4 * ps);
	assert_int_equal(mm->tlb_flush_pending, 2);
	assert_true(mm_tlb_flush_nested(mm));
	uint64_t n0 = s->m.nested_finishes;
	struct tlbsim_metrics m0 = s->m;
	tlb_finish_mmu(s, &inner, H, H + 4 * ps);
	assert_int_equal(mm->tlb_flush_pending, 1);
	assert_int_equal(s->m.nested_finishes, n0 + 1);
	c->u[0] = s->m.tlbi.vale1is - m0.tlbi.vale1is;
	c->u[1] = s->m.tlbi.aside1is - m0.tlbi.aside1is;
	c->u[2] = s->m.tlbi.vae1is - m0.tlbi.vae1is;
	uint64_t tlbi = tlbi_total(s);
	tlb_finish_mmu(s, &outer, H, H + ps);
	assert_int_equal(mm->tlb_flush_pending, 0);
	assert_int_equal(s->m.nested_finishes, n0 + 1);
	c->u[3] = tlbi_total(s) - tlbi;
	c->ran = 1;
}

static void test_finish_decrements_pending_and_detects_nesting(void **state)
{
	struct ctx c = {0};
	tsim_free(run_body("falkor-46", 1, NESTED_PREFIX, body_nesting, &c));
	assert_int_equal(c.u[0], 4);
	assert_int_equal(c.u[1], 0);
	assert_int_equal(c.u[2], 0);
	assert_int_equal(c.u[3], 0);

	memset(&c, 0, sizeof(c));
	tsim_free(run_body("falkor-46", 1, NESTED_FULLMM, body_nesting, &c));
	assert_int_equal(c.u[0], 0);
	assert_int_equal(c.u[1], 1);
	assert_int_equal(c.u[2], 0);
	assert_int_equal(c.u[3], 0);
}

/* ---- contended lines: tlb_flush_pending, rss_stat ---- */

struct gl {
	uint64_t gather[3];
	volatile bool a_done;
	uint64_t munmap_el[2];
	uint64_t base;
};

static uint64_t timed_gather(struct sim *s, struct sim_thread *t)
{
	struct mmu_gather tlb;
	uint64_t t0 = s->now + t->pending_ns;
	tlb_gather_mmu(s, &tlb, task_of(t)->mm, H, H + 4096);
	uint64_t el = s->now + t->pending_ns - t0;
	tlb_finish_mmu(s, &tlb, H, H + 4096);
	return el;
}

/* A gathers on CPU 0 (first writer of the line: lock_op_ns); B on CPU 1
 * then pays lock_op_ns + line_transfer_ns, and again only lock_op_ns. */
static void gl_a(struct sim *s, struct sim_thread *t)
{
	struct gl *x = t->arg;
	sim_set_mode(s, MODE_SYS);
	x->gather[0] = timed_gather(s, t);
	sim_set_mode(s, MODE_USER);
}

static void gl_b(struct sim *s, struct sim_thread *t)
{
	struct gl *x = t->arg;
	sim_step(s, YP_USER, 100000);
	sim_set_mode(s, MODE_SYS);
	x->gather[1] = timed_gather(s, t);
	x->gather[2] = timed_gather(s, t);
	sim_set_mode(s, MODE_USER);
}

static void test_flush_pending_line(void **state)
{
	(void)state;
	struct gl x = {0};
	struct sim *s = tsim_new("falkor-46", 2, NESTED_FULLMM);
	tsim_spawn(s, gl_a, &x, 0);
	tsim_spawn(s, gl_b, &x, 1);
	tsim_run(s);
	uint64_t lock = (uint64_t)P(s, P_lock_op_ns), xfer = (uint64_t)P(s, P_line_transfer_ns);
	assert_true(xfer > 0);
	assert_int_equal(x.gather[0], lock);
	assert_int_equal(x.gather[1], lock + xfer);
	assert_int_equal(x.gather[2], lock);
	tsim_free(s);
}

/* A maps 2 MiB, touches and unmaps its first page on CPU 0; then B touches a page on CPU 1 (its
 * fault's down_read takes the mmap_sem count's line) and unmaps it: B's
 * munmap pays exactly two transfers (tlb_flush_pending's line and rss_stat's,
 * both last written by A's munmap), so it is 2 x line_transfer_ns longer
 * than with line_transfer_ns = 0; B's second touch-and-unmap pays none. */
static void rl_a(struct sim *s, struct sim_thread *t)
{
	struct gl *x = t->arg;
	x->base = sys_mmap(s, H, 0x200000, TLBSIM_MAP_PRIVATE);
	assert_int_equal(x->base, H);
	assert_int_equal(user_access(s, H, true), 0);
	assert_int_equal(sys_munmap(s, H, hw_of(s)->geom.page_size), 0);
	x->a_done = true;
}

static void rl_b(struct sim *s, struct sim_thread *t)
{
	struct gl *x = t->arg;
	while (!x->a_done)
		sim_step(s, YP_USER, 1000);
	for (int i = 0; i < 2; i++) {
		uint64_t ps = hw_of(s)->geom.page_size;
		uint64_t va = H + 0x100000 + (uint64_t)i * ps;
		assert_int_equal(user_access(s, va, true), 0);
		uint64_t t0 = s->now + t->pending_ns;
		assert_int_equal(sys_munmap(s, va, ps), 0);
		x->munmap_el[i] = s->now + t->pending_ns - t0;
	}
}

static struct gl rl_run(int64_t xfer)
{
	const int64_t ov[] = {P_line_transfer_ns, xfer, -1};
	struct gl x = {0};
	struct sim *s = tsim_new_p("falkor-46", 2, NESTED_FULLMM, ov);
	tsim_spawn(s, rl_a, &x, 0);
	tsim_spawn(s, rl_b, &x, 1);
	tsim_run(s);
	tsim_free(s);
	return x;
}

static void test_rss_line(void **state)
{
	(void)state;
	struct gl x0 = rl_run(0), x1 = rl_run(1000);
	assert_int_equal(x1.munmap_el[0] - x0.munmap_el[0], 2 * 1000);
	assert_int_equal(x1.munmap_el[1], x0.munmap_el[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gather_init_arm64),
		cmocka_unit_test(test_flush_pending_line),
		cmocka_unit_test(test_rss_line),
		cmocka_unit_test(test_gather_init_x86),
		cmocka_unit_test(test_fullmm_iff_whole_address_space),
		cmocka_unit_test(test_remove_tlb_entry_widens_range),
		cmocka_unit_test(test_pte_free_tlb_arm64_64k),
		cmocka_unit_test(test_pte_free_tlb_arm64_4k),
		cmocka_unit_test(test_pte_free_tlb_x86),
		cmocka_unit_test(test_pmd_free_tlb_sets_cleared_puds),
		cmocka_unit_test(test_unmap_shift_smallest_level),
		cmocka_unit_test(test_reset_range),
		cmocka_unit_test(test_tlbonly_skips_empty_range_arm64),
		cmocka_unit_test(test_tlbonly_skips_empty_range_x86),
		cmocka_unit_test(test_batch_constants),
		cmocka_unit_test(test_gather_capacity),
		cmocka_unit_test(test_finish_decrements_pending_and_detects_nesting),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
