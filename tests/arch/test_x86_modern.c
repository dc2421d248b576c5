/*
 * test_x86_modern.c - the x86 flush behaviours that v5.1 lacks, as the
 * policy knobs the --kernel presets set (src/arch/x86.c, src/mm/policy.c).
 *
 * Rules checked (arch/x86/mm/tlb.c):
 *  - x86_flush_local (4ce94eabac16, v5.13): `first` flushes locally, then
 *    sends the IPIs and waits; `concurrent` sends the IPIs, flushes locally
 *    while they are in flight, then waits. Same IPIs and flushes; with one
 *    target the initiator's time is 2L + send + latency + handler (first)
 *    against L + send + latency + handler (concurrent), L the local flush. A
 *    flush with no other CPU in mm_cpumask is the local flush alone in both.
 *  - x86_tlb_gen (aa44284960d5, v6.0): a handler whose flush asks for a
 *    generation the CPU already reached does nothing (`new_gen`); with
 *    `mm_gen` it catches up with the mm's newer generation by a full flush,
 *    and the later flush's handler then finds nothing to do.
 *  - x86_cpumask (209954cbc7d0, 953753db887f, v6.14): `eager` drops a CPU
 *    from the previous mm's mm_cpumask at switch_mm; `lazy` keeps it there
 *    until a flush handler - remote, or the initiator's own - finds the mm
 *    not loaded and clears it (no flush work). A lazy CPU that a
 *    table-freeing flush sends to init_mm stays in the mask too, so the
 *    next table-freeing flush IPIs it once more: one IPI more than v5.1.
 *  - x86_should_flush (6db2526c1d69, v6.14): `loaded_mm` skips a CPU of the
 *    mask whose loaded_mm is another mm for a flush that freed no tables,
 *    except the first such flush after a second (should_trim_cpumask), which
 *    IPIs and trims it; `not_lazy` IPIs it.
 *  - x86_table_free (a37259732a7d, v6.15): `page` frees page-table pages
 *    right after munmap's flush; `rcu` frees them a grace period later. The
 *    flush and its IPIs are the same.
 */
#include "test_util.h"

#define H 0x100000000000ull
#define PG 4096ull

static bool in_cpumask(const mm_context_t *mm, int cpu)
{
	return (mm->cpumask[cpu / 64] >> (cpu % 64)) & 1;
}

struct ctl {
	volatile int done;
	int ran;
	int mode;		/* the knob value under test */
	int mode2;
	uint64_t el, el_local;
	uint64_t full, pages;	/* flushes on the measured CPU */
	uint64_t ipis[4];
	bool mask[4];
};

static struct sim *new_sim(int cpus, const int64_t *ov)
{
	return tsim_new_p("x86-24", cpus, NESTED_FULLMM, ov);
}

/* keeps running user code of its mm: never lazy */
static void busy_thread(struct sim *s, struct sim_thread *t)
{
	struct ctl *c = t->arg;
	while (!c->done)
		sim_step(s, YP_USER, 100000);
}

/* runs briefly, then exits: its CPU goes lazy with the mm loaded */
static void short_thread(struct sim *s, struct sim_thread *t)
{
	(void)t;
	sim_step(s, YP_USER, 1000);
}

static uint64_t elapsed_since(struct sim *s, uint64_t t0)
{
	return s->now + s->curr->pending_ns - t0;
}

/* ---- x86_flush_local ---- */

static void flush_local_main(struct sim *s, struct sim_thread *t)
{
	struct ctl *c = t->arg;
	struct mm_struct *mm = task_of(t)->mm;
	/* alone in the mask: the local flush only */
	uint64_t t0 = s->now + t->pending_ns;
	flush_tlb_mm_range(s, &mm->context, H, H + 4 * PG, 12, false);
	c->el_local = elapsed_since(s, t0);
	tsim_spawn(s, busy_thread, c, 1);
	sim_step(s, YP_USER, 1000000);
	uint64_t ipi = s->m.ipi_sent, pages = s->m.flush_local_pages;
	t0 = s->now + t->pending_ns;
	flush_tlb_mm_range(s, &mm->context, H, H + 4 * PG, 12, false);
	c->el = elapsed_since(s, t0);
	c->ipis[0] = s->m.ipi_sent - ipi;
	c->pages = s->m.flush_local_pages - pages;
	c->done = 1;
	c->ran = 1;
}

static void test_flush_local(void **state)
{
	(void)state;
	static const int64_t ov[] = {P_ipi_send_ns,	100,  P_ipi_latency_ns, 1000,
				     P_ipi_handler_ns, 200,  P_invlpg_ns,	50,
				     -1};
	uint64_t el[2], el_local[2];
	for (int m = 0; m < 2; m++) {
		struct ctl c = {0};
		struct sim *s = new_sim(4, ov);
		machine_of(s)->policy.x86_flush_local =
			m ? X86_FLUSH_LOCAL_CONCURRENT : X86_FLUSH_LOCAL_FIRST;
		tsim_spawn(s, flush_local_main, &c, 0);
		tsim_run(s);
		assert_int_equal(c.ran, 1);
		assert_int_equal(c.ipis[0], 1);	/* CPU 1 */
		assert_int_equal(c.pages, 8);	/* 4 INVLPG here, 4 there */
		el[m] = c.el;
		el_local[m] = c.el_local;
		tsim_free(s);
	}
	uint64_t L = 4 * 50, round = 100 + 1000 + 200;
	assert_int_equal(el_local[0], L);
	assert_int_equal(el_local[1], L);
	assert_int_equal(el[0], L + round + L);	/* local, then send .. remote INVLPGs */
	assert_int_equal(el[1], round + L);	/* the local INVLPGs hide in the round */
}

/* ---- x86_tlb_gen ---- */

/* CPU 2 keeps IRQs off while flush A (CPU 0) waits for it, flushes B itself
 * (catching up to B's generation), and flush C (CPU 1) queues behind A; at
 * local_irq_enable A's handler runs with A's generation already passed and
 * C's generation not reached yet. */
static void gen_cpu2(struct sim *s, struct sim_thread *t)
{
	struct ctl *c = t->arg;
	struct mm_struct *mm = task_of(t)->mm;
	local_irq_disable(s);
	sim_step(s, YP_USER, 10000);
	flush_tlb_mm_range(s, &mm->context, H + PG, H + 2 * PG, 12, false);	/* B */
	sim_step(s, YP_USER, 20000);
	uint64_t full = s->m.flush_full, pages = s->m.flush_local_pages;
	uint64_t rcv = s->m.ipi_received;
	local_irq_enable(s);	/* A's handler, then C's */
	c->full = s->m.flush_full - full;
	c->pages = s->m.flush_local_pages - pages;
	c->ipis[0] = s->m.ipi_received - rcv;
	c->ran++;
}

static void gen_cpu1(struct sim *s, struct sim_thread *t)
{
	struct ctl *c = t->arg;
	struct mm_struct *mm = task_of(t)->mm;
	sim_step(s, YP_USER, 20000);
	flush_tlb_mm_range(s, &mm->context, H + 2 * PG, H + 3 * PG, 12, false);	/* C */
	c->ran++;
}

static void gen_cpu0(struct sim *s, struct sim_thread *t)
{
	struct ctl *c = t->arg;
	struct mm_struct *mm = task_of(t)->mm;
	tsim_spawn(s, gen_cpu1, c, 1);
	tsim_spawn(s, gen_cpu2, c, 2);
	sim_step(s, YP_USER, 8000);	/* CPU 2 has started (idle exit, schedule in) */
	flush_tlb_mm_range(s, &mm->context, H, H + PG, 12, false);	/* A */
	c->ran++;
}

static void test_tlb_gen(void **state)
{
	(void)state;
	for (int m = 0; m < 2; m++) {
		struct ctl c = {0};
		struct sim *s = new_sim(3, NULL);
		machine_of(s)->policy.x86_tlb_gen = m ? X86_TLB_GEN_NEW : X86_TLB_GEN_MM;
		tsim_spawn(s, gen_cpu0, &c, 0);
		tsim_run(s);
		assert_int_equal(c.ran, 3);
		assert_int_equal(c.ipis[0], 2);	/* A's and C's handlers ran at the enable */
		if (m == 0) {
			/* A: behind the mm by two generations -> full flush; C: done */
			assert_int_equal(c.full, 1);
			assert_int_equal(c.pages, 0);
		} else {
			/* A: its generation reached -> nothing; C: one behind -> INVLPG */
			assert_int_equal(c.full, 0);
			assert_int_equal(c.pages, 1);
		}
		assert_int_equal(arch_cpu(s, 2)->ctxs[arch_cpu(s, 2)->loaded_mm_asid].tlb_gen,
				 tsim_mm(s, 0)->context.tlb_gen);
		tsim_free(s);
	}
}

/* ---- x86_cpumask and x86_should_flush: a CPU that switched to another mm ---- */

static uint64_t ipis_of(struct sim *s, mm_context_t *mm, bool freed_tables)
{
	uint64_t n = s->m.ipi_sent;
	flush_tlb_mm_range(s, mm, H, H + PG, 12, freed_tables);
	return s->m.ipi_sent - n;
}

/* CPU 1 ran a thread of mm A, then runs a thread of mm B (switch_mm A -> B);
 * CPU 0 runs A and flushes A: twice without freeing tables, then once freeing
 * tables, then once more. */
static void switch_main(struct sim *s, struct sim_thread *t)
{
	struct ctl *c = t->arg;
	mm_context_t *a = &task_of(t)->mm->context;
	sim_step(s, YP_USER, 1000000);
	assert_ptr_equal(arch_cpu(s, 1)->loaded_mm, &tsim_mm(s, 1)->context);
	c->mask[0] = in_cpumask(a, 1);
	uint64_t pages = s->m.flush_local_pages;
	c->ipis[0] = ipis_of(s, a, false);
	c->pages = s->m.flush_local_pages - pages;	/* CPU 0's INVLPG only */
	c->mask[1] = in_cpumask(a, 1);
	c->ipis[1] = ipis_of(s, a, false);
	c->ipis[2] = ipis_of(s, a, true);
	c->mask[2] = in_cpumask(a, 1);
	c->ipis[3] = ipis_of(s, a, true);
	c->done = 1;
	c->ran = 1;
}

static void run_switch(int cpumask, int should, struct ctl *c)
{
	struct sim *s = new_sim(2, NULL);
	machine_of(s)->policy.x86_cpumask = cpumask;
	machine_of(s)->policy.x86_should_flush = should;
	struct mm_struct *a = tsim_mm(s, 0), *b = mm_alloc(s);
	tsim_spawn_mm(s, short_thread, c, a, 1);
	tsim_spawn_mm(s, busy_thread, c, b, 1);
	tsim_spawn(s, switch_main, c, 0);
	tsim_run(s);
	assert_int_equal(c->ran, 1);
	(void)b;
	tsim_free(s);
}

static void test_cpumask_switch_away(void **state)
{
	(void)state;
	for (int should = 0; should < 2; should++) {
		/* eager: CPU 1 left A's mask at the switch; nothing goes to it */
		struct ctl c = {0};
		run_switch(X86_CPUMASK_EAGER, should, &c);
		assert_false(c.mask[0]);
		assert_int_equal(c.ipis[0] + c.ipis[1] + c.ipis[2] + c.ipis[3], 0);
	}
	/* lazy + not_lazy (209954cbc7d0 alone): the first flush IPIs CPU 1,
	 * whose handler only clears it from the mask */
	struct ctl c = {0};
	run_switch(X86_CPUMASK_LAZY, X86_SHOULD_FLUSH_NOT_LAZY, &c);
	assert_true(c.mask[0]);
	assert_int_equal(c.ipis[0], 1);
	assert_int_equal(c.pages, 1);
	assert_false(c.mask[1]);
	assert_int_equal(c.ipis[1] + c.ipis[2] + c.ipis[3], 0);
	/* lazy + loaded_mm (6db2526c1d69): flushes that free no tables skip
	 * CPU 1; the table-freeing one IPIs every CPU of the mask and trims it */
	memset(&c, 0, sizeof(c));
	run_switch(X86_CPUMASK_LAZY, X86_SHOULD_FLUSH_LOADED_MM, &c);
	assert_true(c.mask[0]);
	assert_int_equal(c.ipis[0], 0);
	assert_int_equal(c.ipis[1], 0);
	assert_true(c.mask[1]);
	assert_int_equal(c.ipis[2], 1);
	assert_false(c.mask[2]);
	assert_int_equal(c.ipis[3], 0);
}

/* once a second: the first flush after next_trim_cpumask IPIs the stale CPU */
static void trim_main(struct sim *s, struct sim_thread *t)
{
	struct ctl *c = t->arg;
	mm_context_t *a = &task_of(t)->mm->context;
	sim_step(s, YP_USER, 1000000);
	c->ipis[0] = ipis_of(s, a, false);	/* t = 1 ms: no trim */
	c->mask[0] = in_cpumask(a, 1);
	sim_step(s, YP_USER, X86_TRIM_PERIOD_NS);
	c->ipis[1] = ipis_of(s, a, false);	/* t > 1 s: trims */
	c->mask[1] = in_cpumask(a, 1);
	c->el = a->next_trim_ns - s->now;
	c->done = 1;
	c->ran = 1;
}

static void test_should_flush_trim(void **state)
{
	(void)state;
	struct ctl c = {0};
	struct sim *s = new_sim(2, NULL);
	machine_of(s)->policy.x86_cpumask = X86_CPUMASK_LAZY;
	machine_of(s)->policy.x86_should_flush = X86_SHOULD_FLUSH_LOADED_MM;
	struct mm_struct *b = mm_alloc(s);
	tsim_spawn(s, short_thread, &c, 1);
	tsim_spawn_mm(s, busy_thread, &c, b, 1);
	tsim_spawn(s, trim_main, &c, 0);
	tsim_run(s);
	assert_int_equal(c.ran, 1);
	assert_int_equal(c.ipis[0], 0);
	assert_true(c.mask[0]);
	assert_int_equal(c.ipis[1], 1);
	assert_false(c.mask[1]);
	/* the next trim is a second after this one (the flush's own time
	 * passed since: at most one IPI round) */
	assert_true(c.el <= X86_TRIM_PERIOD_NS && c.el > X86_TRIM_PERIOD_NS - 100000);
	tsim_free(s);
}

/* ---- a lazy CPU and table-freeing flushes ---- */

static void lazy_main(struct sim *s, struct sim_thread *t)
{
	struct ctl *c = t->arg;
	mm_context_t *a = &task_of(t)->mm->context;
	sim_step(s, YP_USER, 1000000);
	assert_true(arch_cpu(s, 1)->is_lazy);
	c->ipis[0] = ipis_of(s, a, true);	/* CPU 1 -> init_mm */
	assert_null(arch_cpu(s, 1)->loaded_mm);
	c->mask[0] = in_cpumask(a, 1);
	c->ipis[1] = ipis_of(s, a, false);
	c->ipis[2] = ipis_of(s, a, true);
	c->mask[1] = in_cpumask(a, 1);
	c->ipis[3] = ipis_of(s, a, true);
	c->ran = 1;
}

static void test_cpumask_lazy_cpu(void **state)
{
	(void)state;
	static const struct {
		int cpumask, should;
		uint64_t ipis[4];
		bool mask0;
	} want[] = {
		/* v5.1: the lazy CPU leaves the mask at the switch to init_mm */
		{X86_CPUMASK_EAGER, X86_SHOULD_FLUSH_NOT_LAZY, {1, 0, 0, 0}, false},
		/* 209954cbc7d0 alone: the next flush of any kind trims it */
		{X86_CPUMASK_LAZY, X86_SHOULD_FLUSH_NOT_LAZY, {1, 1, 0, 0}, true},
		/* v6.14: only the next table-freeing flush does: one IPI more
		 * than v5.1 for this CPU's lazy episode */
		{X86_CPUMASK_LAZY, X86_SHOULD_FLUSH_LOADED_MM, {1, 0, 1, 0}, true},
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		struct ctl c = {0};
		struct sim *s = new_sim(2, NULL);
		machine_of(s)->policy.x86_cpumask = want[i].cpumask;
		machine_of(s)->policy.x86_should_flush = want[i].should;
		tsim_spawn(s, short_thread, &c, 1);
		tsim_spawn(s, lazy_main, &c, 0);
		tsim_run(s);
		assert_int_equal(c.ran, 1);
		for (int k = 0; k < 4; k++)
			assert_int_equal(c.ipis[k], want[i].ipis[k]);
		assert_int_equal(c.mask[0], want[i].mask0);
		assert_false(c.mask[1]);
		tsim_free(s);
	}
}

/* ---- 953753db887f: the initiator clears itself too ---- */

/* CPU 0 ran mm A, now runs mm B and flushes A (as a remote-mm flush such as
 * process_madvise does); CPU 1 runs A. */
static void stale_local_flusher(struct sim *s, struct sim_thread *t)
{
	struct ctl *c = t->arg;
	mm_context_t *a = &tsim_mm(s, 0)->context;
	sim_step(s, YP_USER, 1000000);
	c->mask[0] = in_cpumask(a, 0);
	uint64_t pages = s->m.flush_local_pages, full = s->m.flush_full;
	c->ipis[0] = ipis_of(s, a, false);
	c->pages = s->m.flush_local_pages - pages;
	c->full = s->m.flush_full - full;
	c->mask[1] = in_cpumask(a, 0);
	c->done = 1;
	c->ran = 1;
}

static void test_cpumask_local_stale(void **state)
{
	(void)state;
	for (int should = 0; should < 2; should++) {
		struct ctl c = {0};
		struct sim *s = new_sim(2, NULL);
		machine_of(s)->policy.x86_flush_local = X86_FLUSH_LOCAL_CONCURRENT;
		machine_of(s)->policy.x86_cpumask = X86_CPUMASK_LAZY;
		machine_of(s)->policy.x86_should_flush = should;
		struct mm_struct *b = mm_alloc(s);
		tsim_spawn(s, short_thread, &c, 0);
		tsim_spawn_mm(s, stale_local_flusher, &c, b, 0);
		tsim_spawn(s, busy_thread, &c, 1);
		tsim_run(s);
		assert_int_equal(c.ran, 1);
		assert_true(c.mask[0]);			/* left there by the switch */
		assert_int_equal(c.ipis[0], 1);		/* CPU 1 runs A */
		assert_int_equal(c.pages, 1);		/* CPU 1's INVLPG; none here */
		assert_int_equal(c.full, 0);
		/* not_lazy: the local flush_tlb_func runs and clears CPU 0;
		 * loaded_mm: should_flush_tlb is false for CPU 0 too, so it stays
		 * until a trim or a table-freeing flush */
		assert_int_equal(c.mask[1], should == X86_SHOULD_FLUSH_LOADED_MM);
		tsim_free(s);
	}
}

/* ---- x86_table_free ---- */

static void table_main(struct sim *s, struct sim_thread *t)
{
	struct ctl *c = t->arg;
	tsim_spawn(s, busy_thread, c, 1);
	uint64_t a = sys_mmap(s, H, PG, TLBSIM_MAP_PRIVATE);
	assert_true(a == H);
	assert_int_equal(user_access(s, a, true), 0);
	sim_step(s, YP_USER, 100000);
	uint64_t f0 = s->m.tables_freed, ipi = s->m.ipi_sent;
	assert_int_equal(sys_munmap(s, a, PG), 0);
	c->ipis[0] = s->m.ipi_sent - ipi;
	c->ipis[1] = s->m.tables_freed - f0;	/* at munmap's return */
	sim_step(s, YP_USER, (uint64_t)P(s, P_rcu_grace_ns) + 1000000u);
	c->ipis[2] = s->m.tables_freed - f0;	/* a grace period later */
	c->done = 1;
	c->ran = 1;
}

static void test_table_free(void **state)
{
	(void)state;
	uint64_t r[2][3];
	for (int m = 0; m < 2; m++) {
		struct ctl c = {0};
		struct sim *s = new_sim(2, NULL);
		machine_of(s)->policy.x86_table_free = m ? X86_TABLE_FREE_RCU : X86_TABLE_FREE_PAGE;
		tsim_spawn(s, table_main, &c, 0);
		tsim_run(s);
		assert_int_equal(c.ran, 1);
		if (tsim_violation(s)->text[0])
			fail_msg("%s", tsim_violation(s)->text);
		memcpy(r[m], c.ipis, sizeof(r[m]));
		tsim_free(s);
	}
	/* the lone VMA: every table below the root goes (levels - 1 = 3) */
	assert_int_equal(r[0][1], 3);
	assert_int_equal(r[0][2], 3);
	assert_int_equal(r[1][1], 0);
	assert_int_equal(r[1][2], 3);
	assert_int_equal(r[0][0], r[1][0]);	/* the same flush IPIs */
	assert_int_equal(r[0][0], 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_flush_local),
		cmocka_unit_test(test_tlb_gen),
		cmocka_unit_test(test_cpumask_switch_away),
		cmocka_unit_test(test_should_flush_trim),
		cmocka_unit_test(test_cpumask_lazy_cpu),
		cmocka_unit_test(test_cpumask_local_stale),
		cmocka_unit_test(test_table_free),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
