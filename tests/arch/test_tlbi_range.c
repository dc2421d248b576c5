/*
 * test_tlbi_range.c - FEAT_TLBIRANGE (profile parameter tlbi_range):
 * __flush_tlb_range_op's range encoding (arch/arm64/include/asm/tlbflush.h,
 * d1d3aa98b1d4, v5.9).
 *
 * Rules:
 *  - an odd page count takes one classic TLBI of one stride; an even count
 *    one range TLBI per scale s = 0..3 whose num = ((pages >> (5s + 1)) &
 *    31) - 1 is >= 0, covering (num + 1) << (5s + 1) pages;
 *  - with range TLBIs only a range of 32 << 16 pages or more falls back to
 *    flush_tlb_mm (ASIDE1IS); without them a range of PTRS_PER_PTE strides;
 *  - a range TLBI costs the issuer tlbi_range_op_ns whatever it covers;
 *  - it removes every page of its range from every CPU;
 *  - the range is first widened to whole strides (start rounded down, end
 *    up, 67a902a v4.20), and the page count split above is the widened
 *    one: a gather of a 2 MiB stride ending 4 KiB past a PMD boundary is
 *    512 pages, one range TLBI, not an odd count taken stride by stride;
 *  - an end of TLB_FLUSH_ALL (the model's whole-mm request) is one ASIDE1IS;
 *  - a kernel before v5.9 (arm64_ttl=none: d1d3aa98b1d4 came with the TTL
 *    hints) issues no range TLBI on a part that has them: per page, and
 *    the ASID at PTRS_PER_PTE pages.
 */
#include "test_util.h"

#define H 0x100000000000ull

struct rctx {
	uint64_t pages;
	bool last_level;
	uint64_t off, len, stride;	/* when stride: flush [H + off, H + off + len) */
	int ran;
	uint64_t classic, range, asid, cost_ns, left;
};

/* the expected (classic, range) counts, from the encoding rule */
static void expect_ops(uint64_t pages, uint64_t *classic, uint64_t *range)
{
	*classic = *range = 0;
	int64_t p = (int64_t)pages;
	int scale = 0;
	while (p > 0) {
		if (p % 2) {
			(*classic)++;
			p--;
			continue;
		}
		int64_t num = ((p >> (5 * scale + 1)) & 31) - 1;
		if (num >= 0) {
			(*range)++;
			p -= (num + 1) << (5 * scale + 1);
		}
		scale++;
	}
}

static void toucher(struct sim *s, struct sim_thread *t)
{
	struct rctx *c = t->arg;
	uint64_t ps = hw_of(s)->geom.page_size;
	for (uint64_t i = 0; i < c->pages && i < 64; i++)
		assert_int_equal(user_access(s, H + i * ps, false), 0);
	c->ran++;
}

static void flusher(struct sim *s, struct sim_thread *t)
{
	struct rctx *c = t->arg;
	uint64_t ps = hw_of(s)->geom.page_size;
	assert_true(sys_mmap(s, H, c->pages * ps, TLBSIM_MAP_PRIVATE) == H);
	tsim_spawn(s, toucher, c, 1);
	while (c->ran == 0)
		sim_step(s, YP_USER, 1000);
	const struct tlbsim_metrics *m = &s->m;
	uint64_t v0 = m->tlbi.vale1is + m->tlbi.vae1is, r0 = m->tlbi.rvale1is + m->tlbi.rvae1is;
	uint64_t a0 = m->tlbi.aside1is, sys0 = s->cpus[0].sys_ns;
	if (c->stride)
		__flush_tlb_range(s, &tsim_mm(s, 0)->context, H + c->off, H + c->off + c->len,
				  c->stride, c->last_level);
	else
		__flush_tlb_range(s, &tsim_mm(s, 0)->context, H, H + c->pages * ps, ps,
				  c->last_level);
	c->classic = m->tlbi.vale1is + m->tlbi.vae1is - v0;
	c->range = m->tlbi.rvale1is + m->tlbi.rvae1is - r0;
	c->asid = m->tlbi.aside1is - a0;
	c->cost_ns = s->cpus[0].sys_ns - sys0;
	c->left = 0;
	for (uint64_t i = 0; i < c->pages && i < 64; i++)
		c->left += tc_peek(&hw_of(s)->cpu[1].tlb, (H + i * ps) >> hw_of(s)->geom.page_shift,
				   hw_of(s)->geom.levels - 1, tsim_mm(s, 0)->context.asid) != NULL;
	c->ran++;
}

static struct rctx run_ttl(uint64_t pages, bool range, bool last_level, int64_t *op_ns,
			   enum arm64_ttl_policy ttl)
{
	struct rctx c = {.pages = pages, .last_level = last_level};
	const int64_t ov[] = {P_tlbi_range, range ? 1 : 0, P_dvm_occupancy_pct, 100, -1};
	struct tlbsim_config cfg;
	tlbsim_config_init(&cfg);
	cfg.policy.nested = NESTED_FULLMM;
	cfg.policy.arm64_ttl = ttl;
	struct sim *s = tsim_new_pol("arm64-4k", 2, &cfg.policy, ov);
	if (op_ns) {
		op_ns[0] = P(s, P_tlbi_op_ns);
		op_ns[1] = P(s, P_tlbi_range_op_ns);
		op_ns[2] = P(s, P_dsb_ns);
	}
	tsim_spawn(s, flusher, &c, 0);
	tsim_run(s);
	assert_int_equal(c.ran, 2);
	tsim_free(s);
	return c;
}

static struct rctx run(uint64_t pages, bool range, bool last_level, int64_t *op_ns)
{
	return run_ttl(pages, range, last_level, op_ns, ARM64_TTL_LEAF_ONLY);
}

/* [H + off, H + off + len) flushed with stride; 64 pages touched from H */
static struct rctx run_span(uint64_t off, uint64_t len, uint64_t stride, bool range,
			    bool last_level)
{
	struct rctx c = {.pages = (off + len + 4095) / 4096, .last_level = last_level,
			 .off = off, .len = len, .stride = stride};
	if (c.pages < 64 || len > (1ull << 40))	/* TLB_FLUSH_ALL: map 64 pages */
		c.pages = 64;
	const int64_t ov[] = {P_tlbi_range, range ? 1 : 0, P_dvm_occupancy_pct, 100, -1};
	struct sim *s = tsim_new_p("arm64-4k", 2, NESTED_FULLMM, ov);
	tsim_spawn(s, flusher, &c, 0);
	tsim_run(s);
	assert_int_equal(c.ran, 2);
	tsim_free(s);
	return c;
}

#define K4 0x1000ull
#define M2 0x200000ull

/* the stride widening: what a table-freeing gather (tlb_get_unmap_size:
 * PMD_SIZE when only PMDs were cleared) emits */
static void test_range_widened_to_stride(void **state)
{
	(void)state;
	struct {
		uint64_t off, len, stride;
		bool range;
		uint64_t classic, nrange, asid, left;
	} want[] = {
		/* 512 pages after widening: one range op (not one per stride) */
		{0, K4, M2, true, 0, 1, 0, 0},
		{0, K4, M2, false, 1, 0, 0, 63},
		/* 4 MiB + 4 KiB: five strides, 2560 pages = 512 (scale 1) +
		 * 2048 (scale 2) - two range ops; five VAE1IS without */
		{0, 4 * M2 + K4, M2, true, 0, 2, 0, 0},
		{0, 4 * M2 + K4, M2, false, 5, 0, 0, 63},
		/* an unaligned start is rounded down: [H, H + 4 MiB) */
		{K4, M2, M2, true, 0, 1, 0, 0},
		{K4, M2, M2, false, 2, 0, 0, 63},
		/* page stride, 2043 pages (a thread stack's MADV_DONTNEED):
		 * the odd page by one classic op, 2042 by range ops */
		{0, 2043 * K4, K4, true, 1, 2, 0, 0},
		/* TLB_FLUSH_ALL: the whole mm, range hardware or not */
		{0, TLB_FLUSH_ALL - H, K4, true, 0, 0, 1, 0},
		{0, TLB_FLUSH_ALL - H, K4, false, 0, 0, 1, 0},
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		struct rctx c = run_span(want[i].off, want[i].len, want[i].stride, want[i].range,
					 false);
		assert_int_equal(c.classic, want[i].classic);
		assert_int_equal(c.range, want[i].nrange);
		assert_int_equal(c.asid, want[i].asid);
		/* the widened range covers H even when off is not 0; a range
		 * op removes every page of it, a classic op of a 2 MiB stride
		 * only the entry at the stride's address (63 of the 64 touched
		 * pages stay) */
		assert_int_equal(c.left, want[i].left);
	}
}

static void test_range_encoding_counts(void **state)
{
	(void)state;
	const uint64_t sizes[] = {1, 2, 3, 31, 32, 33, 64, 65, 100, 511, 512, 1000};
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint64_t wc, wr;
		expect_ops(sizes[i], &wc, &wr);
		struct rctx c = run(sizes[i], true, true, NULL);
		assert_int_equal(c.classic, wc);
		assert_int_equal(c.range, wr);
		assert_int_equal(c.asid, 0);
		assert_int_equal(c.left, 0);
	}
	/* 32 pages: one RVALE1IS; 33: one VALE1IS + one RVALE1IS */
	uint64_t wc, wr;
	expect_ops(32, &wc, &wr);
	assert_int_equal(wc, 0);
	assert_int_equal(wr, 1);
}

static void test_without_range_per_page_and_threshold(void **state)
{
	(void)state;
	struct rctx c = run(100, false, false, NULL);
	assert_int_equal(c.classic, 100);
	assert_int_equal(c.range, 0);
	struct rctx big = run(512, false, false, NULL);	/* PTRS_PER_PTE: ASIDE1IS */
	assert_int_equal(big.asid, 1);
	assert_int_equal(big.classic, 0);
	struct rctx r = run(512, true, false, NULL);	/* one range op instead */
	assert_int_equal(r.asid, 0);
	assert_int_equal(r.range, 1);
	/* the same part under a kernel before v5.9: no range op */
	struct rctx old = run_ttl(512, true, false, NULL, ARM64_TTL_NONE);
	assert_int_equal(old.asid, 1);
	assert_int_equal(old.range, 0);
	struct rctx old100 = run_ttl(100, true, false, NULL, ARM64_TTL_NONE);
	assert_int_equal(old100.classic, 100);
	assert_int_equal(old100.range, 0);
}

/* the issuer pays tlbi_range_op_ns per range op, flat in the pages */
static void test_range_cost_flat(void **state)
{
	(void)state;
	int64_t ns[3];
	struct rctx a = run(32, true, true, ns);
	struct rctx b = run(64, true, true, NULL);
	assert_int_equal(a.range, 1);
	assert_int_equal(b.range, 1);
	assert_int_equal(a.cost_ns, (uint64_t)(ns[1] + ns[2]));
	assert_int_equal(b.cost_ns, a.cost_ns);
	struct rctx c = run(32, false, true, NULL);
	assert_int_equal(c.cost_ns, (uint64_t)(32 * ns[0] + ns[2]));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_range_encoding_counts),
		cmocka_unit_test(test_without_range_per_page_and_threshold),
		cmocka_unit_test(test_range_cost_flat),
		cmocka_unit_test(test_range_widened_to_stride),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
