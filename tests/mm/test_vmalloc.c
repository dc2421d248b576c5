/*
 * test_vmalloc.c - the vmalloc lazy purge, the KASAN vmalloc shadow and the
 * kernel-range flushes (seed 003), one kernel rule per test:
 *  - vfree clears the PTEs and frees the pages without a flush (W1);
 *  - a purge flushes the whole lazy range once (kasan off: exactly one
 *    kernel flush per purge, a global one);
 *  - the shadow-unit rule of kasan_release_vmalloc and its edges;
 *  - flushes per purge by kasan_flush: per_area one per area that released
 *    a shadow page, per_node and per_node_late one per node;
 *  - per_node flushes a node's shadow before any of its areas goes back to a
 *    pool; per_node_late after;
 *  - an IPI round waits for a CPU with IRQs off;
 *  - x86 flush_tlb_kernel_range: INVLPG up to tlb_single_page_flush_ceiling
 *    pages, a global flush above; arm64: VAALE1IS up to MAX_DVM_OPS pages,
 *    VMALLE1IS above (strict >).
 */
#include "test_util.h"

struct vctx {
	uint64_t a, b;
	uint64_t n[8];
	int ran;
};

static struct sim *new_sim(const char *profile, int cpus, bool kasan)
{
	struct sim *s = tsim_new(profile, cpus, NESTED_FULLMM);
	kernel_of(s)->kasan = kasan;
	return s;
}

/* ---- vfree: no flush ---- */

static void vfree_main(struct sim *s, struct sim_thread *t)
{
	struct vctx *c = t->arg;
	uint64_t ps = hw_of(s)->geom.page_size;
	c->a = vmalloc(s, 4 * ps);
	kernel_access(s, c->a, true);
	uint64_t fl = s->m.kernel_flushes, freed = s->m.pages_freed;
	vfree(s, c->a);
	c->n[0] = s->m.kernel_flushes - fl;
	c->n[1] = s->m.pages_freed - freed;
	c->n[2] = kernel_mapped(s, c->a);
	c->n[3] = s->m.vfree_lazy;
	c->n[4] = tsim_oracle(s)->w1_windows;
	c->ran = 1;
}

/* Rule (free_unmap_vmap_area -> vunmap_range_noflush, vfree, v6.10): vfree
 * clears the area's PTEs and frees its pages at once, with no TLB flush; the
 * area goes to the lazy list. The CPU that used it still caches its
 * translation to a freed page: the tolerated window W1. */
static void test_vfree_no_flush(void **state)
{
	struct vctx c = {0};
	struct sim *s = new_sim("x86-24", 4, false);
	tsim_spawn(s, vfree_main, &c, 0);
	tsim_run(s);
	assert_int_equal(c.ran, 1);
	assert_int_equal(c.n[0], 0);
	assert_int_equal(c.n[1], 4);
	assert_int_equal(c.n[2], 0);
	assert_int_equal(c.n[3], 1);
	assert_int_equal(c.n[4], 1);
	assert_int_equal(s->m.violations, 0);
	tsim_free(s);
}

/* ---- one flush per purge ---- */

/* free areas until the drain runs; n[0] = areas freed */
static void purge_main(struct sim *s, struct sim_thread *t)
{
	struct vctx *c = t->arg;
	uint64_t ps = hw_of(s)->geom.page_size;
	uint64_t pages = 0;
	int fls = 0;
	for (int n = s->nr_cpus; n; n >>= 1)
		fls++;
	uint64_t max = (uint64_t)fls * ((32ull << 20) / ps);
	while (pages <= max) {
		uint64_t a = vmalloc(s, 256 * ps);
		vfree(s, a);
		pages += 257;	/* with the guard page */
		c->n[0]++;
	}
	sim_step(s, YP_USER, 100000000);	/* let the kworker purge */
	c->ran = 1;
}

/* Rule (__purge_vmap_area_lazy, v6.9+): when vmap_lazy_nr passes
 * lazy_max_pages() the drain work purges every lazy area with one
 * flush_tlb_kernel_range over their whole span (here > 33 pages: a global
 * flush on every CPU); without KASAN nothing else is flushed. */
static void test_one_flush_per_purge(void **state)
{
	for (int x86 = 0; x86 <= 1; x86++) {
		struct vctx c = {0};
		struct sim *s = new_sim(x86 ? "x86-24" : "arm64-4k", 4, false);
		tsim_spawn(s, purge_main, &c, 0);
		tsim_run(s);
		assert_int_equal(c.ran, 1);
		assert_int_equal(s->m.purges, 1);
		assert_int_equal(s->m.kernel_flushes, 1);
		if (x86) {
			/* global on every CPU: no INVLPG, 3 IPIs (flush_full also
			 * counts the PCID flushes of context switches) */
			assert_int_equal(s->m.flush_local_pages, 0);
			assert_true(s->m.flush_full >= 4);
			assert_int_equal(s->m.kernel_flush_ipis, 3);
		} else {
			assert_int_equal(s->m.tlbi.vmalle1is, 1);
		}
		assert_int_equal(s->m.vfree_lazy, c.n[0]);
		tsim_free(s);
	}
}

/* ---- the shadow-unit rule ---- */

static void unit_main(struct sim *s, struct sim_thread *t)
{
	struct vctx *c = t->arg;
	uint64_t ps = hw_of(s)->geom.page_size, u = 8 * ps;	/* 32 KiB of VA per shadow page */
	uint64_t base = kernel_of(s)->kva.vmalloc_start + 64 * u;
	/* populate rounds out: [base, base + 36 KiB) needs 2 shadow pages */
	kasan_populate_vmalloc(s, base, u + ps);
	c->n[0] = s->m.pages_freed;
	uint64_t f0 = s->m.shadow_pages_freed;
	/* the area alone: only the whole unit inside, one flush */
	c->n[1] = kasan_release_vmalloc(s, base, base + u + ps, base, base + u + ps,
					KASAN_VMALLOC_PAGE_RANGE | KASAN_VMALLOC_TLB_FLUSH);
	c->n[2] = s->m.shadow_pages_freed - f0;
	/* the neighbour to the right is free: the partial unit goes too */
	kasan_populate_vmalloc(s, base, u + ps);
	f0 = s->m.shadow_pages_freed;
	kasan_release_vmalloc(s, base, base + u + ps, base, base + 2 * u,
			      KASAN_VMALLOC_PAGE_RANGE);
	c->n[3] = s->m.shadow_pages_freed - f0;
	/* an area smaller than a unit releases nothing and flushes nothing */
	kasan_populate_vmalloc(s, base + 4 * u, 2 * ps);
	f0 = s->m.shadow_pages_freed;
	uint64_t fl = s->m.kernel_flushes;
	c->n[4] = kasan_release_vmalloc(s, base + 4 * u, base + 4 * u + 2 * ps, base + 4 * u,
					base + 4 * u + 2 * ps,
					KASAN_VMALLOC_PAGE_RANGE | KASAN_VMALLOC_TLB_FLUSH);
	c->n[5] = s->m.shadow_pages_freed - f0 + (s->m.kernel_flushes - fl);
	/* an unaligned area of 2 units covers one whole unit only */
	kasan_populate_vmalloc(s, base + 8 * u + ps, 2 * u);
	f0 = s->m.shadow_pages_freed;
	kasan_release_vmalloc(s, base + 8 * u + ps, base + 10 * u + ps, base + 8 * u + ps,
			      base + 10 * u + ps, KASAN_VMALLOC_PAGE_RANGE);
	c->n[6] = s->m.shadow_pages_freed - f0;
	c->ran = 1;
}

/* Rule (kasan_populate_vmalloc / kasan_release_vmalloc, mm/kasan/shadow.c):
 * one shadow page per 32 KiB of vmalloc space (4K pages); populate rounds
 * out, release rounds in and frees a partial unit only when the free region
 * shows the neighbour free; nothing to release: no flush. */
static void test_shadow_unit_rule(void **state)
{
	struct vctx c = {0};
	struct sim *s = new_sim("x86-24", 2, true);
	tsim_spawn(s, unit_main, &c, 0);
	tsim_run(s);
	assert_int_equal(c.ran, 1);
	assert_int_equal(c.n[1], 1);	/* one flush */
	assert_int_equal(c.n[2], 1);	/* one page: the whole unit */
	assert_int_equal(c.n[3], 2);	/* the right partial unit too */
	assert_int_equal(c.n[4], 0);
	assert_int_equal(c.n[5], 0);
	assert_int_equal(c.n[6], 1);
	tsim_free(s);
}

/* ---- flushes per purge by kasan_flush, and their order ---- */

/* two CPUs (two vmap nodes): each frees two stack-sized areas (one shadow
 * unit each), then CPU 0 passes lazy_max_pages() with a large area */
static void knob_worker(struct sim *s, struct sim_thread *t)
{
	struct vctx *c = t->arg;
	uint64_t a = vmalloc_range(s, thread_size(s), thread_align(s));
	uint64_t b = vmalloc_range(s, thread_size(s), thread_align(s));
	kernel_access(s, a, true);
	kernel_access(s, b, true);
	vfree(s, a);
	vfree(s, b);
	c->n[t->cpu]++;
}

static void knob_main(struct sim *s, struct sim_thread *t)
{
	struct vctx *c = t->arg;
	struct sim_thread *w1 = tsim_spawn(s, knob_worker, c, 1);
	knob_worker(s, t);
	sim_join(s, w1);
	uint64_t ps = hw_of(s)->geom.page_size;
	uint64_t big = 2 * ((32ull << 20) / ps);	/* fls(2) x 32 MiB */
	/* allocated on CPU 0 but larger than any pool: the free space */
	vfree(s, vmalloc(s, big * ps));
	sim_step(s, YP_USER, 200000000);
	c->ran = 1;
}

static struct sim *run_knob(enum kasan_flush_policy k, struct vctx *c, struct trace_buf *tb)
{
	struct sim *s = new_sim("x86-24", 2, true);
	machine_of(s)->policy.kasan_flush = k;
	s->trace = tb;
	tsim_spawn(s, knob_main, c, 0);
	tsim_run(s);
	assert_int_equal(c->ran, 1);
	assert_int_equal(s->m.purges, 1);
	return s;
}

/* Rule (purge_vmap_node, v6.10 and 9e9e085effe9): besides the purge's one
 * flush of the lazy range, per_area flushes once per area that released a
 * shadow page (4 stacks + the large area: 5); per_node and per_node_late
 * once per node with areas (2). */
static void test_flushes_per_knob(void **state)
{
	const struct {
		enum kasan_flush_policy k;
		uint64_t flushes;
	} want[] = {{KASAN_FLUSH_PER_AREA, 1 + 5}, {KASAN_FLUSH_PER_NODE, 1 + 2},
		    {KASAN_FLUSH_PER_NODE_LATE, 1 + 2}};
	for (size_t i = 0; i < 3; i++) {
		struct vctx c = {0};
		struct sim *s = run_knob(want[i].k, &c, NULL);
		assert_int_equal(s->m.kernel_flushes, want[i].flushes);
		assert_int_equal(s->m.purge_vmap_node_calls, 2);
		assert_true(s->m.shadow_pages_freed >= 4);
		tsim_free(s);
	}
}

/* Rule (9e9e085effe9): per_node depopulates and flushes a node's shadow
 * before any of its areas goes back to a pool; the withdrawn draft
 * (per_node_late) flushed after the pool returns. Read from the trace: for
 * each node, the flush of the shadow range against the first pool return. */
static void test_flush_before_pool_return(void **state)
{
	for (int late = 0; late <= 1; late++) {
		struct vctx c = {0};
		struct trace_buf tb = {0};
		struct sim *s = run_knob(late ? KASAN_FLUSH_PER_NODE_LATE : KASAN_FLUSH_PER_NODE, &c,
					 &tb);
		const struct kva_layout *l = &kernel_of(s)->kva;
		const uint64_t sh0 = (l->vmalloc_start >> 3) + l->kasan_shadow_offset;
		const uint64_t sh1 = (l->vmalloc_end >> 3) + l->kasan_shadow_offset;
		int64_t flush_at = -1, pool_at = -1;
		for (uint32_t i = 0; i < tb.n; i++) {
			const struct trace_rec *r = &tb.r[i];
			if (r->pt == YP_KFLUSH && r->a >= sh0 && r->a < sh1 && flush_at < 0 &&
			    pool_at < 0)
				flush_at = i;
			if (r->pt == YP_VMALLOC && r->b == 2 /* pool_return */ && pool_at < 0)
				pool_at = i;
		}
		assert_true(pool_at >= 0);
		if (late) {
			assert_true(flush_at < 0);	/* no shadow flush before the pool return */
		} else {
			assert_true(flush_at >= 0);
			assert_true(flush_at < pool_at);
		}
		free(tb.r);
		tsim_free(s);
	}
}

/* ---- IPIs and IRQs-off CPUs ---- */

static void irqs_off_thread(struct sim *s, struct sim_thread *t)
{
	struct vctx *c = t->arg;
	sim_set_mode(s, MODE_SYS);
	kernel_access(s, c->a, false);		/* caches the translation */
	local_irq_disable(s);
	c->n[0] = 1;
	for (int i = 0; i < 100; i++)
		sim_step(s, YP_USER, 1000);	/* 100 us with IRQs off */
	c->n[1] = tc_peek(&hw_of(s)->cpu[t->cpu].tlb, c->a >> 12, hw_of(s)->geom.levels - 1,
			  TC_TAG_GLOBAL) != NULL;	/* not flushed yet */
	c->b = s->now + t->pending_ns;
	local_irq_enable(s);
	c->n[2] = tc_peek(&hw_of(s)->cpu[t->cpu].tlb, c->a >> 12, hw_of(s)->geom.levels - 1,
			  TC_TAG_GLOBAL) != NULL;
}

static void flusher(struct sim *s, struct sim_thread *t)
{
	struct vctx *c = t->arg;
	c->a = vmalloc(s, 4096);
	struct sim_thread *o = tsim_spawn(s, irqs_off_thread, c, 1);
	while (!c->n[0])
		sim_step(s, YP_USER, 1000);
	flush_tlb_kernel_range(s, c->a, c->a + 4096);
	c->n[3] = s->now + t->pending_ns;
	sim_join(s, o);
	c->ran = 1;
}

/* Rule (smp_call_function_many_cond, v6.10): a CPU with IRQs disabled runs
 * the flush IPI only when it enables them; its stale entry stays until
 * then, and the sender spins until that handler has run. */
static void test_ipi_waits_for_irqs_off(void **state)
{
	struct vctx c = {0};
	struct sim *s = new_sim("x86-24", 2, false);
	tsim_spawn(s, flusher, &c, 0);
	tsim_run(s);
	assert_int_equal(c.ran, 1);
	assert_int_equal(c.n[1], 1);	/* still cached while IRQs were off */
	assert_int_equal(c.n[2], 0);	/* flushed at local_irq_enable */
	assert_true(c.n[3] >= c.b);	/* the sender returned after that */
	assert_true(s->m.ipi_wait_irqs_off_ns > 0);
	tsim_free(s);
}

/* ---- the kernel flush thresholds ---- */

static void kflush_main(struct sim *s, struct sim_thread *t)
{
	struct vctx *c = t->arg;
	uint64_t ps = hw_of(s)->geom.page_size;
	uint64_t base = kernel_of(s)->kva.vmalloc_start;
	uint64_t l0 = s->m.flush_local_pages, f0 = s->m.flush_full;
	flush_tlb_kernel_range(s, base, base + c->a * ps);
	c->n[0] = s->m.flush_local_pages - l0;
	c->n[1] = s->m.flush_full - f0;
	c->n[2] = s->m.tlbi.vaale1is;
	c->n[3] = s->m.tlbi.vmalle1is;
	flush_tlb_kernel_range(s, base, base + (c->a + 1) * ps);
	c->n[4] = s->m.flush_local_pages - l0 - c->n[0];
	c->n[5] = s->m.flush_full - f0 - c->n[1];
	c->n[6] = s->m.tlbi.vaale1is - c->n[2];
	c->n[7] = s->m.tlbi.vmalle1is - c->n[3];
	c->ran = 1;
}

/* Rule (x86 flush_tlb_kernel_range, v6.10): up to
 * tlb_single_page_flush_ceiling (33) pages, INVLPG of each page on every
 * CPU; more, a global flush on every CPU. */
static void test_x86_kernel_ceiling(void **state)
{
	struct vctx c = {.a = 33};
	struct sim *s = new_sim("x86-24", 4, false);
	tsim_spawn(s, kflush_main, &c, 0);
	tsim_run(s);
	assert_int_equal(c.n[0], 33 * 4);
	assert_int_equal(c.n[1], 0);
	assert_int_equal(c.n[4], 0);
	assert_int_equal(c.n[5], 4);
	assert_int_equal(s->m.kernel_flush_ipis, 2 * 3);
	tsim_free(s);
}

/* Rule (arm64 flush_tlb_kernel_range, v6.7..v6.11): a TLBI VAALE1IS per
 * page while the range is at most MAX_DVM_OPS (PTRS_PER_PTE: 512 on 4K)
 * pages; above it (strictly), one VMALLE1IS. No IPIs. */
static void test_arm64_kernel_max_dvm(void **state)
{
	struct vctx c = {.a = 512};
	struct sim *s = new_sim("arm64-4k", 4, false);
	tsim_spawn(s, kflush_main, &c, 0);
	tsim_run(s);
	assert_int_equal(c.n[2], 512);
	assert_int_equal(c.n[3], 0);
	assert_int_equal(c.n[6], 0);
	assert_int_equal(c.n[7], 1);
	assert_int_equal(s->m.ipi_sent, 0);
	tsim_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vfree_no_flush),
		cmocka_unit_test(test_one_flush_per_purge),
		cmocka_unit_test(test_shadow_unit_rule),
		cmocka_unit_test(test_flushes_per_knob),
		cmocka_unit_test(test_flush_before_pool_return),
		cmocka_unit_test(test_ipi_waits_for_irqs_off),
		cmocka_unit_test(test_x86_kernel_ceiling),
		cmocka_unit_test(test_arm64_kernel_max_dvm),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
