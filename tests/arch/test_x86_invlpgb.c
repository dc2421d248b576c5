/*
 * test_x86_invlpgb.c - x86_flush=invlpgb: AMD INVLPGB broadcast flushing
 * with global ASIDs (src/arch/x86.c; arch/x86/mm/tlb.c, v6.15).
 *
 * Rules checked:
 *  - an mm active on more than 3 CPUs gets a global ASID after an IPI flush
 *    (consider_global_asid, at most 32 jiffies later: the pid/jiffies test),
 *    and every CPU running it moves onto that ASID;
 *  - a flush of an mm with a global ASID issues INVLPGBs (one per
 *    invlpgb_count_max pages) and one TLBSYNC and sends no IPI, and every
 *    CPU's TLB loses the entries;
 *  - an mm that runs on one CPU, or on 2 (not more than 3), keeps per-CPU
 *    ASIDs: local flushes and IPIs, no INVLPGB;
 *  - when the global ASIDs run out (global_asid_available == 0), a second
 *    mm active on many CPUs stays on IPIs;
 *  - the space (allocate_global_asid, mm_free_global_asid): the search
 *    starts from the last ASID handed out; a freed ASID is reused only
 *    after the wrap-around flush (one INVLPGB + TLBSYNC on every CPU), which
 *    the first allocation also does;
 *  - kernel flushes (flush_tlb_kernel_range) are INVLPGBs + one TLBSYNC, no
 *    IPI; the whole-TLB form is one INVLPGB;
 *  - without INVLPGB in the profile (x86-24), x86_flush=invlpgb changes
 *    nothing: IPIs, no global ASID.
 */
#include "test_util.h"

#define H 0x100000000000ull
#define PG 4096ull
#define KVA 0xffffc90000000000ull

struct ctl {
	volatile int done;
	volatile int touch;
	uint64_t va;
	int ran;
	int iters;		/* flushes until the mm had a global ASID */
	uint64_t ipi, invlpgb, tlbsync, flushes;
	bool had_before[8], has_after[8];
	bool on_global[8];
	int global_asid;
};

static struct sim *new_sim(const char *profile, int cpus, const int64_t *ov)
{
	struct sim *s = tsim_new_p(profile, cpus, NESTED_FULLMM, ov);
	machine_of(s)->policy.x86_flush = X86_FLUSH_INVLPGB;
	return s;
}

/* keeps running user code of its mm (never lazy); reads c->va while asked */
static void busy_thread(struct sim *s, struct sim_thread *t)
{
	struct ctl *c = t->arg;
	while (!c->done) {
		if (c->touch && c->va)
			assert_int_equal(user_access(s, c->va, false), 0);
		sim_step(s, YP_USER, 100000);
	}
}

/* does cpu hold a leaf TLB entry for va under its current user tag? */
static bool tlb_has(struct sim *s, int cpu, uint64_t va)
{
	struct hw *hw = hw_of(s);
	uint32_t tag = machine_of(s)->arch->user_tag(s, cpu);
	return tc_lookup(&hw->cpu[cpu].tlb, va >> hw->geom.page_shift, hw->geom.levels - 1,
			 tag) != NULL;
}

/* flush one page of mm every millisecond until it has a global ASID (at
 * most max times); returns the number of flushes */
static int flush_until_global(struct sim *s, mm_context_t *mm, uint64_t va, int max)
{
	int i;
	for (i = 1; i <= max; i++) {
		flush_tlb_mm_range(s, mm, va, va + PG, 12, false);
		if (mm->global_asid)
			return i;
		sim_step(s, YP_USER, 1000000);
	}
	return i;
}

/* ---- global ASID, INVLPGB + TLBSYNC, no IPI ---- */

static void bcast_main(struct sim *s, struct sim_thread *t)
{
	struct ctl *c = t->arg;
	mm_context_t *mm = &task_of(t)->mm->context;
	c->va = sys_mmap(s, 0, 64 * PG, TLBSIM_MAP_PRIVATE);
	for (uint64_t p = 0; p < 64; p++)
		assert_int_equal(user_access(s, c->va + p * PG, true), 0);
	for (int cpu = 1; cpu <= 4; cpu++)
		tsim_spawn(s, busy_thread, c, cpu);
	sim_step(s, YP_USER, 1000000);	/* they run */
	c->iters = flush_until_global(s, mm, c->va, 64);
	c->global_asid = mm->global_asid;
	/* the transition: the flush after the assignment IPIs the stragglers,
	 * which reload CR3 with the global ASID */
	for (int i = 0; i < 2; i++) {
		flush_tlb_mm_range(s, mm, c->va, c->va + PG, 12, false);
		sim_step(s, YP_USER, 1000000);
	}
	for (int cpu = 0; cpu <= 4; cpu++)
		c->on_global[cpu] = arch_cpu(s, cpu)->loaded_mm_asid == mm->global_asid;
	/* every CPU caches the page, then stops touching it */
	c->touch = 1;
	sim_step(s, YP_USER, 1000000);
	c->touch = 0;
	sim_step(s, YP_USER, 1000000);
	assert_int_equal(user_access(s, c->va, false), 0);
	for (int cpu = 0; cpu <= 4; cpu++)
		c->had_before[cpu] = tlb_has(s, cpu, c->va);
	uint64_t ipi = s->m.ipi_sent, inv = s->m.invlpgb, sync = s->m.tlbsync;
	/* 20 pages: three INVLPGBs of at most 8 pages (invlpgb_count_max) */
	flush_tlb_mm_range(s, mm, c->va, c->va + 20 * PG, 12, false);
	c->ipi = s->m.ipi_sent - ipi;
	c->invlpgb = s->m.invlpgb - inv;
	c->tlbsync = s->m.tlbsync - sync;
	for (int cpu = 0; cpu <= 4; cpu++)
		c->has_after[cpu] = tlb_has(s, cpu, c->va);
	/* a full flush: one INVLPGB of the PCID */
	inv = s->m.invlpgb;
	sync = s->m.tlbsync;
	ipi = s->m.ipi_sent;
	flush_tlb_mm_range(s, mm, 0, TLB_FLUSH_ALL, 12, true);
	c->invlpgb += 100 * (s->m.invlpgb - inv);
	c->tlbsync += 100 * (s->m.tlbsync - sync);
	c->ipi += 100 * (s->m.ipi_sent - ipi);
	c->done = 1;
	c->ran = 1;
}

static void test_global_asid_broadcast(void **state)
{
	(void)state;
	struct ctl c = {0};
	struct sim *s = new_sim("milan-72", 8, NULL);
	tsim_spawn(s, bcast_main, &c, 0);
	tsim_run(s);
	assert_int_equal(c.ran, 1);
	/* 5 CPUs run the mm: a global ASID within one 32-jiffy cycle */
	assert_true(c.iters <= 33);
	assert_true(c.global_asid >= TLB_NR_DYN_ASIDS);
	for (int cpu = 0; cpu <= 4; cpu++) {
		assert_true(c.on_global[cpu]);
		assert_true(c.had_before[cpu]);
		assert_false(c.has_after[cpu]);
	}
	assert_int_equal(c.invlpgb, 3 + 100 * 1);
	assert_int_equal(c.tlbsync, 1 + 100 * 1);
	assert_int_equal(c.ipi, 0);
	tsim_free(s);
}

/* ---- an mm on 1 or 2 CPUs keeps per-CPU ASIDs ---- */

static void few_main(struct sim *s, struct sim_thread *t)
{
	struct ctl *c = t->arg;
	mm_context_t *mm = &task_of(t)->mm->context;
	c->va = sys_mmap(s, 0, PG, TLBSIM_MAP_PRIVATE);
	assert_int_equal(user_access(s, c->va, true), 0);
	for (int cpu = 1; cpu < 1 + c->iters; cpu++)
		tsim_spawn(s, busy_thread, c, cpu);
	sim_step(s, YP_USER, 1000000);
	uint64_t ipi = s->m.ipi_sent, pages = s->m.flush_local_pages;
	uint64_t inv = s->m.invlpgb;
	flush_until_global(s, mm, c->va, 64);
	c->ipi = s->m.ipi_sent - ipi;
	c->flushes = s->m.flush_local_pages - pages;
	c->invlpgb = s->m.invlpgb - inv;
	c->global_asid = mm->global_asid;
	c->on_global[0] = arch_cpu(s, 0)->loaded_mm_asid < TLB_NR_DYN_ASIDS;
	c->done = 1;
	c->ran = 1;
}

static void test_few_cpus_keep_local_asid(void **state)
{
	(void)state;
	for (int others = 0; others <= 2; others++) {
		struct ctl c = {.iters = others};
		struct sim *s = new_sim("milan-72", 4, NULL);
		tsim_spawn(s, few_main, &c, 0);
		tsim_run(s);
		assert_int_equal(c.ran, 1);
		assert_int_equal(c.global_asid, 0);
		assert_true(c.on_global[0]);	/* a per-CPU ASID */
		assert_int_equal(c.invlpgb, 0);
		/* 64 one-page flushes: an INVLPG on every CPU of the mm, and an
		 * IPI to each other one */
		assert_int_equal(c.ipi, 64 * (uint64_t)others);
		assert_int_equal(c.flushes, 64 * (uint64_t)(others + 1));
		tsim_free(s);
	}
}

/* ---- exhaustion: no global ASID left, IPIs ---- */

struct two {
	struct ctl a, b;
	volatile int a_done;
};

static void exh_b_main(struct sim *s, struct sim_thread *t)
{
	struct two *w = t->arg;
	struct ctl *c = &w->b;
	mm_context_t *mm = &task_of(t)->mm->context;
	while (!w->a_done)
		sim_step(s, YP_USER, 100000);
	c->va = sys_mmap(s, 0, PG, TLBSIM_MAP_PRIVATE);
	assert_int_equal(user_access(s, c->va, true), 0);
	uint64_t inv = s->m.invlpgb, ipi = s->m.ipi_sent;
	c->iters = flush_until_global(s, mm, c->va, 64);
	c->invlpgb = s->m.invlpgb - inv;
	c->ipi = s->m.ipi_sent - ipi;
	c->global_asid = mm->global_asid;
	c->done = 1;
	w->a.done = 1;
	c->ran = 1;
}

static void exh_a_main(struct sim *s, struct sim_thread *t)
{
	struct two *w = t->arg;
	struct ctl *c = &w->a;
	mm_context_t *mm = &task_of(t)->mm->context;
	c->va = sys_mmap(s, 0, PG, TLBSIM_MAP_PRIVATE);
	assert_int_equal(user_access(s, c->va, true), 0);
	sim_step(s, YP_USER, 1000000);
	c->iters = flush_until_global(s, mm, c->va, 64);
	c->global_asid = mm->global_asid;
	w->a_done = 1;
	c->ran = 1;
}

static void test_exhaustion_falls_back(void **state)
{
	(void)state;
	static const int64_t ov[] = {P_global_asids, 1, -1};
	struct two w;
	memset(&w, 0, sizeof(w));
	struct sim *s = new_sim("milan-72", 10, ov);
	struct mm_struct *a = tsim_mm(s, 0), *b = mm_alloc(s);
	for (int cpu = 1; cpu <= 4; cpu++)
		tsim_spawn_mm(s, busy_thread, &w.a, a, cpu);
	for (int cpu = 6; cpu <= 9; cpu++)
		tsim_spawn_mm(s, busy_thread, &w.b, b, cpu);
	tsim_spawn_mm(s, exh_a_main, &w, a, 0);
	tsim_spawn_mm(s, exh_b_main, &w, b, 5);
	tsim_run(s);
	assert_int_equal(w.a.ran + w.b.ran, 2);
	assert_true(w.a.global_asid >= TLB_NR_DYN_ASIDS);	/* the only one */
	assert_int_equal(w.b.global_asid, 0);
	assert_int_equal(w.b.iters, 65);		/* never got one */
	assert_int_equal(w.b.invlpgb, 0);
	assert_int_equal(w.b.ipi, 64 * 4);		/* every flush IPIs its 4 CPUs */
	assert_int_equal(machine_of(s)->gasid.available, 0);
	tsim_free(s);
}

/* ---- the global ASID space: allocation, free, wrap-around ---- */

static void alloc_main(struct sim *s, struct sim_thread *t)
{
	struct ctl *c = t->arg;
	struct machine *mc = machine_of(s);
	mm_context_t *m[4];
	for (int i = 0; i < 4; i++)
		m[i] = &mm_alloc(s)->context;
	uint64_t inv = s->m.invlpgb;
	/* the first allocation is at the edge of the space: a reset flush,
	 * then the search from TLB_NR_DYN_ASIDS */
	use_global_asid(s, m[0]);
	assert_int_equal(m[0]->global_asid, TLB_NR_DYN_ASIDS);
	assert_true(m[0]->asid_transition);
	assert_int_equal(s->m.invlpgb - inv, 1);
	use_global_asid(s, m[0]);		/* it keeps the one it has */
	assert_int_equal(m[0]->global_asid, TLB_NR_DYN_ASIDS);
	use_global_asid(s, m[1]);
	assert_int_equal(m[1]->global_asid, TLB_NR_DYN_ASIDS + 1);
	assert_int_equal(mc->gasid.available, 0);
	/* a freed ASID is not handed out before the next wrap-around */
	mm_free_global_asid(s, m[0]);
	assert_int_equal(m[0]->global_asid, 0);
	assert_int_equal(mc->gasid.available, 1);
	use_global_asid(s, m[2]);
	assert_int_equal(m[2]->global_asid, TLB_NR_DYN_ASIDS + 2);	/* the last one */
	/* at the edge again: the reset flush makes the freed ones reusable */
	mm_free_global_asid(s, m[1]);
	inv = s->m.invlpgb;
	uint64_t sync = s->m.tlbsync;
	use_global_asid(s, m[3]);
	assert_int_equal(s->m.invlpgb - inv, 1);
	assert_int_equal(s->m.tlbsync - sync, 1);
	assert_int_equal(m[3]->global_asid, TLB_NR_DYN_ASIDS);
	c->ran = 1;
}

static void test_global_asid_space(void **state)
{
	(void)state;
	/* 2 available: MAX_ASID_AVAILABLE = 2 + TLB_NR_DYN_ASIDS + 1, so the
	 * ASIDs are TLB_NR_DYN_ASIDS .. TLB_NR_DYN_ASIDS + 2 */
	static const int64_t ov[] = {P_global_asids, 2, -1};
	struct ctl c = {0};
	struct sim *s = new_sim("milan-72", 2, ov);
	tsim_spawn(s, alloc_main, &c, 0);
	tsim_run(s);
	assert_int_equal(c.ran, 1);
	tsim_free(s);
}

/* ---- kernel flushes ---- */

static void kflush_main(struct sim *s, struct sim_thread *t)
{
	struct ctl *c = t->arg;
	void (*kflush)(struct sim *, uint64_t, uint64_t) =
		machine_of(s)->arch->flush_tlb_kernel_range;
	uint64_t ipi = s->m.ipi_sent, inv = s->m.invlpgb, sync = s->m.tlbsync;
	kflush(s, KVA, KVA + 20 * PG);		/* 20 pages: 3 INVLPGBs */
	kflush(s, KVA, KVA + 100 * PG);		/* above the ceiling: flush all */
	c->ipi = s->m.ipi_sent - ipi;
	c->invlpgb = s->m.invlpgb - inv;
	c->tlbsync = s->m.tlbsync - sync;
	c->ran = 1;
}

static void test_kernel_flush(void **state)
{
	(void)state;
	for (int m = 0; m < 2; m++) {
		struct ctl c = {0};
		struct sim *s = new_sim("milan-72", 8, NULL);
		machine_of(s)->policy.x86_flush = m ? X86_FLUSH_INVLPGB : X86_FLUSH_IPI;
		tsim_spawn(s, kflush_main, &c, 0);
		tsim_run(s);
		assert_int_equal(c.ran, 1);
		if (m) {
			assert_int_equal(c.ipi, 0);
			assert_int_equal(c.invlpgb, 3 + 1);
			assert_int_equal(c.tlbsync, 2);
			assert_int_equal(s->m.kernel_flush_ipis, 0);
		} else {
			assert_int_equal(c.ipi, 2 * 7);	/* on_each_cpu, twice */
			assert_int_equal(c.invlpgb + c.tlbsync, 0);
		}
		assert_int_equal(s->m.kernel_flushes, 2);
		tsim_free(s);
	}
}

/* ---- without INVLPGB in the profile ---- */

static void test_intel_profile_unchanged(void **state)
{
	(void)state;
	struct ctl c = {.iters = 4};
	struct sim *s = new_sim("x86-24", 6, NULL);
	tsim_spawn(s, few_main, &c, 0);
	tsim_run(s);
	assert_int_equal(c.ran, 1);
	assert_int_equal(c.global_asid, 0);
	assert_int_equal(c.invlpgb, 0);
	assert_int_equal(c.ipi, 64 * 4);
	tsim_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_global_asid_broadcast),
		cmocka_unit_test(test_few_cpus_keep_local_asid),
		cmocka_unit_test(test_exhaustion_falls_back),
		cmocka_unit_test(test_global_asid_space),
		cmocka_unit_test(test_kernel_flush),
		cmocka_unit_test(test_intel_profile_unchanged),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
