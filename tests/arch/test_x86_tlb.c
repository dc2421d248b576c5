/*
 * test_x86_tlb.c - the x86-64 TLB back end (src/arch/x86.c) against
 * kernel-model.md section 4 (v4.20..v5.1), plus the arm64 contrast for
 * ptep_set_access_flags (5.3).
 *
 * Rules checked (kernel-model sections in brackets):
 *  - flush_tlb_mm_range [4.3]: ((end - start) >> stride_shift) >
 *    tlb_single_page_flush_ceiling (33) -> TLB_FLUSH_ALL; otherwise the
 *    handler INVLPGs each stride [4.4] (when its tlb_gen is exactly one
 *    behind); every call bumps mm->context.tlb_gen.
 *  - native_flush_tlb_others [4.3]: IPIs go to the other CPUs of
 *    mm_cpumask; lazy CPUs only when freed_tables. A lazy CPU that takes the
 *    IPI leaves lazy mode by switching to init_mm instead of flushing [4.4],
 *    which drops it from mm_cpumask [4.2]. A flush that freed no tables
 *    also runs the handler on the sender (on_each_cpu_cond_mask, up to
 *    v5.12): tlb_shootdowns counts it, ipi_received does not.
 *  - switch_mm_irqs_off [4.2]: coming back from lazy mode to the same mm
 *    re-checks ctxs[slot].tlb_gen against mm tlb_gen and flushes if stale;
 *    choose_new_asid: reuse the slot whose ctx_id matches (flush iff its
 *    tlb_gen is behind), otherwise the next round-robin slot of
 *    TLB_NR_DYN_ASIDS = 6 with a full flush. Without PCID every switch
 *    flushes. In this model init_mm occupies no PCID slot (arch/x86.c), so
 *    the first six user mms take slots 0..5 and the 7th wraps to slot 0.
 *  - with processes [4.2]: 8 processes rotating on one CPU by time slices
 *    take PCID slots round-robin (more processes than the 6 slots: a switch
 *    to an evicted mm takes the next slot and flushes it, a switch to an mm
 *    still in a slot whose tlb_gen is current does not), every access reads
 *    the process's own frame, and the loaded slot is always caught up to the
 *    mm's tlb_gen. A flush of mm A (munmap on another CPU) while CPU 0 runs
 *    another mm sends CPU 0 no IPI (it left A's mm_cpumask); the slot's
 *    tlb_gen stays behind and the switch back to A flushes it (one full
 *    flush), so the unmapped page is gone and nothing is an I1/I2.
 *  - ptep_set_access_flags [4.6]: x86 stores the PTE only if changed &&
 *    dirty and never flushes; arm64 v5.1 [5.3]: if the PTE changed, update
 *    it and flush_tlb_fix_spurious_fault = flush_tlb_page = one VALE1IS.
 */
#include "test_util.h"

#define H 0x100000000000ull
#define PG 4096ull

struct xdelta {
	uint64_t ipi_sent, ipi_received, flush_local, flush_full, tlbi, tlb_gen;
};

static uint64_t tlbi_total(const struct tlbsim_metrics *m)
{
	return m->tlbi.vale1is + m->tlbi.vae1is + m->tlbi.aside1is + m->tlbi.vaale1is +
	       m->tlbi.vmalle1is + m->tlbi.local;
}

struct snap {
	struct tlbsim_metrics m;
	uint64_t tlb_gen;
};

static struct snap snap(struct sim *s)
{
	return (struct snap){.m = s->m, .tlb_gen = tsim_mm(s, 0)->context.tlb_gen};
}

static struct xdelta xdiff(struct sim *s, const struct snap *a)
{
	const struct tlbsim_metrics *b = &s->m;
	return (struct xdelta){
		.ipi_sent = b->ipi_sent - a->m.ipi_sent,
		.ipi_received = b->ipi_received - a->m.ipi_received,
		.flush_local = b->flush_local_pages - a->m.flush_local_pages,
		.flush_full = b->flush_full - a->m.flush_full,
		.tlbi = tlbi_total(b) - tlbi_total(&a->m),
		.tlb_gen = tsim_mm(s, 0)->context.tlb_gen - a->tlb_gen,
	};
}

static bool in_cpumask(const struct mm_struct *mm, int cpu)
{
	return (mm->context.cpumask[cpu / 64] >> (cpu % 64)) & 1;
}

struct ctl {
	volatile int done;
	int ran;
	uint64_t el;		/* test_kvm16_ipi: the flush's elapsed time */
};

/* runs a thread of the mm, then exits: its CPU goes lazy with mm loaded */
static void short_thread(struct sim *s, struct sim_thread *t)
{
	(void)t;
	sim_step(s, YP_USER, 1000);
}

/* keeps running user code of the mm: never lazy */
static void busy_thread(struct sim *s, struct sim_thread *t)
{
	struct ctl *c = t->arg;
	while (!c->done)
		sim_step(s, YP_USER, 1000);
}

static void run_main(const char *profile, int cpus, const int64_t *ov, thread_fn fn, struct ctl *c)
{
	struct sim *s = tsim_new_p(profile, cpus, NESTED_FULLMM, ov);
	tsim_spawn(s, fn, c, 0);
	tsim_run(s);
	assert_int_equal(c->ran, 1);
	tsim_free(s);
}

/* ---- the INVLPG ceiling ---- */

static void ceiling_main(struct sim *s, struct sim_thread *t)
{
	struct ctl *c = t->arg;
	struct mm_struct *mm = task_of(t)->mm;
	assert_ptr_equal(arch_cpu(s, 0)->loaded_mm, &mm->context);
	struct snap a = snap(s);

	/* 33 pages: not > 33 -> 33 INVLPG on the initiating CPU, no IPI (no
	 * other CPU in mm_cpumask) */
	flush_tlb_mm_range(s, &mm->context, H, H + 33 * PG, 12, false);
	struct xdelta d = xdiff(s, &a);
	assert_int_equal(d.flush_local, 33);
	assert_int_equal(d.flush_full, 0);
	assert_int_equal(d.ipi_sent, 0);
	assert_int_equal(d.tlb_gen, 1);

	/* 34 pages: > 33 -> full flush */
	a = snap(s);
	flush_tlb_mm_range(s, &mm->context, H, H + 34 * PG, 12, false);
	d = xdiff(s, &a);
	assert_int_equal(d.flush_local, 0);
	assert_int_equal(d.flush_full, 1);
	assert_int_equal(d.tlb_gen, 1);

	/* the ceiling counts strides: 33 x 2 MiB -> 33 INVLPG, 34 -> full */
	a = snap(s);
	flush_tlb_mm_range(s, &mm->context, H, H + 33 * (2ull << 20), 21, true);
	d = xdiff(s, &a);
	assert_int_equal(d.flush_local, 33);
	assert_int_equal(d.flush_full, 0);
	a = snap(s);
	flush_tlb_mm_range(s, &mm->context, H, H + 34 * (2ull << 20), 21, true);
	d = xdiff(s, &a);
	assert_int_equal(d.flush_local, 0);
	assert_int_equal(d.flush_full, 1);

	/* TLB_FLUSH_ALL -> full flush; one page -> one INVLPG */
	a = snap(s);
	flush_tlb_mm_range(s, &mm->context, 0, TLB_FLUSH_ALL, 12, false);
	flush_tlb_mm_range(s, &mm->context, H, H + PG, 12, false);
	d = xdiff(s, &a);
	assert_int_equal(d.flush_full, 1);
	assert_int_equal(d.flush_local, 1);
	assert_int_equal(d.tlb_gen, 2);
	assert_int_equal(d.tlbi, 0);
	c->ran = 1;
}

static void test_flush_ceiling(void **state)
{
	(void)state;
	struct ctl c = {0};
	run_main("x86-24", 4, NULL, ceiling_main, &c);
}

/* ---- IPIs and lazy CPUs ---- */

static void ipi_main(struct sim *s, struct sim_thread *t)
{
	struct ctl *c = t->arg;
	struct mm_struct *mm = task_of(t)->mm;
	tsim_spawn(s, short_thread, c, 1);
	tsim_spawn(s, busy_thread, c, 2);
	sim_step(s, YP_USER, 1000000);	/* 1 ms: CPU1's thread has exited */

	assert_true(arch_cpu(s, 1)->is_lazy);
	assert_ptr_equal(arch_cpu(s, 1)->loaded_mm, &mm->context);
	assert_true(in_cpumask(mm, 1));
	assert_false(arch_cpu(s, 2)->is_lazy);
	assert_ptr_equal(arch_cpu(s, 2)->loaded_mm, &mm->context);
	assert_true(in_cpumask(mm, 2));
	assert_null(arch_cpu(s, 3)->loaded_mm);
	assert_false(in_cpumask(mm, 3));

	/* freed_tables = false: lazy CPU1 skipped -> 1 IPI (CPU2); INVLPG
	 * locally and on CPU2 */
	struct snap a = snap(s);
	flush_tlb_mm_range(s, &mm->context, H, H + PG, 12, false);
	struct xdelta d = xdiff(s, &a);
	assert_int_equal(d.ipi_sent, 1);
	assert_int_equal(d.ipi_received, 1);
	assert_int_equal(d.flush_local, 2);
	assert_int_equal(d.flush_full, 0);
	assert_true(arch_cpu(s, 1)->is_lazy);
	assert_ptr_equal(arch_cpu(s, 1)->loaded_mm, &mm->context);
	assert_true(in_cpumask(mm, 1));

	/* freed_tables = true: lazy CPU1 gets an IPI too -> 2 IPIs; CPU1
	 * switches to init_mm instead of flushing and leaves mm_cpumask */
	a = snap(s);
	flush_tlb_mm_range(s, &mm->context, H, H + PG, 12, true);
	d = xdiff(s, &a);
	assert_int_equal(d.ipi_sent, 2);
	assert_int_equal(d.ipi_received, 2);
	assert_int_equal(d.flush_local, 2);	/* CPU0 + CPU2; CPU1 did not flush */
	assert_int_equal(d.flush_full, 0);
	assert_null(arch_cpu(s, 1)->loaded_mm);
	assert_false(arch_cpu(s, 1)->is_lazy);
	assert_false(in_cpumask(mm, 1));
	assert_true(in_cpumask(mm, 2));

	/* later flushes, with or without freed tables, do not IPI CPU1 */
	for (int ft = 0; ft <= 1; ft++) {
		a = snap(s);
		flush_tlb_mm_range(s, &mm->context, H, H + PG, 12, ft);
		d = xdiff(s, &a);
		assert_int_equal(d.ipi_sent, 1);
		assert_int_equal(d.ipi_received, 1);
		assert_int_equal(d.tlb_gen, 1);
	}
	c->done = 1;
	c->ran = 1;
}

static void test_ipis_and_lazy(void **state)
{
	(void)state;
	struct ctl c = {0};
	run_main("x86-24", 4, NULL, ipi_main, &c);
}

/* ---- the sender's own handler call (v4.20..v5.12) ---- */

struct selfctl {
	struct ctl ctl;		/* the busy thread's */
	int ran;
	uint64_t shoot[2], recv[2];	/* by freed_tables */
	uint64_t full[2], pages[2];	/* CPU 0's flush work in the handler calls */
};

static void self_main(struct sim *s, struct sim_thread *t)
{
	struct selfctl *c = t->arg;
	struct mm_struct *mm = task_of(t)->mm;
	tsim_spawn(s, busy_thread, &c->ctl, 2);
	sim_step(s, YP_USER, 1000000);
	assert_false(arch_cpu(s, 2)->is_lazy);
	for (int ft = 0; ft <= 1; ft++) {
		uint64_t sh = s->m.tlb_shootdowns, rc = s->m.ipi_received;
		uint64_t full = s->m.flush_full, pages = s->m.flush_local_pages;
		flush_tlb_mm_range(s, &mm->context, H, H + PG, 12, ft);
		c->shoot[ft] = s->m.tlb_shootdowns - sh;
		c->recv[ft] = s->m.ipi_received - rc;
		c->full[ft] = s->m.flush_full - full;
		c->pages[ft] = s->m.flush_local_pages - pages;
	}
	c->ctl.done = 1;
	c->ran = 1;
}

/* Rule (arch/x86/mm/tlb.c v4.20..v5.12, native_flush_tlb_others; kernel/smp.c
 * on_each_cpu_cond_mask): a flush that freed no tables goes through
 * on_each_cpu_cond_mask(tlb_is_not_lazy, flush_tlb_func_remote, ...,
 * mm_cpumask), which runs the handler on the sender too - it is in the mask
 * and not lazy - after the IPIs: irq_tlb_count (tlb_shootdowns) counts one
 * more than the IPIs received, and the sender's TLB, flushed first by
 * flush_tlb_mm_range, needs nothing more (one INVLPG here, one on CPU 2). A
 * flush that freed tables uses smp_call_function_many, which skips the
 * sender. x86_flush_local=concurrent (v5.13, 4c1ba3923e6c/4ce94eabac16):
 * the initiator's flush_tlb_func call is local and not counted; x86_lazy=
 * never (before b956575bed91: smp_call_function_many always): not counted
 * either. */
static void test_sender_runs_own_handler(void **state)
{
	(void)state;
	for (int mode = 0; mode < 3; mode++) {
		struct selfctl c = {0};
		struct sim *s = tsim_new_p("x86-24", 4, NESTED_FULLMM, NULL);
		if (mode == 1)
			machine_of(s)->policy.x86_flush_local = X86_FLUSH_LOCAL_CONCURRENT;
		if (mode == 2)
			machine_of(s)->policy.x86_lazy = X86_LAZY_NEVER;
		tsim_spawn(s, self_main, &c, 0);
		tsim_run(s);
		assert_int_equal(c.ran, 1);
		for (int ft = 0; ft <= 1; ft++) {
			assert_int_equal(c.recv[ft], 1);		/* CPU 2 */
			assert_int_equal(c.shoot[ft], mode == 0 && !ft ? 2 : 1);
			assert_int_equal(c.pages[ft], 2);
			assert_int_equal(c.full[ft], 0);
		}
		tsim_free(s);
	}
}

/* ---- the IPI targets on a machine of more than 64 CPUs ---- */

/* CPUs running the mm, around the cpumask's word boundaries */
static const int wide_cpus[] = {1, 62, 63, 64, 65, 127, 128, 129};
#define NWIDE ((int)(sizeof(wide_cpus) / sizeof(wide_cpus[0])))

static void wide_main(struct sim *s, struct sim_thread *t)
{
	struct ctl *c = t->arg;
	struct mm_struct *mm = task_of(t)->mm;
	for (int i = 0; i < NWIDE; i++)
		tsim_spawn(s, busy_thread, c, wide_cpus[i]);
	sim_step(s, YP_USER, 100000);
	int in_mask = 0;
	for (int cpu = 0; cpu < s->nr_cpus; cpu++)
		in_mask += in_cpumask(mm, cpu);
	assert_int_equal(in_mask, NWIDE + 1);
	struct snap a = snap(s);
	flush_tlb_mm_range(s, &mm->context, H, H + PG, 12, false);
	struct xdelta d = xdiff(s, &a);
	/* one IPI to each other CPU of the mask, whichever word holds its bit;
	 * none to a CPU outside it */
	assert_int_equal(d.ipi_sent, NWIDE);
	assert_int_equal(d.ipi_received, NWIDE);
	for (int i = 0; i < NWIDE; i++) {
		const struct arch_cpu *ac = arch_cpu(s, wide_cpus[i]);
		assert_int_equal(ac->ctxs[ac->loaded_mm_asid].tlb_gen, mm->context.tlb_gen);
	}
	assert_true(arch_cpu(s, 66)->ctxs[0].tlb_gen < mm->context.tlb_gen);
	c->done = 1;
	c->ran = 1;
}

/* native_flush_tlb_others [4.3] on 130 CPUs (three cpumask words): the
 * flush IPIs reach exactly the other CPUs of mm_cpumask, those whose bits
 * sit at either side of a word boundary included, and each handler brings
 * its CPU's context up to the mm's tlb_gen */
static void test_ipis_wide_mask(void **state)
{
	(void)state;
	struct ctl c = {0};
	run_main("x86-256", 130, NULL, wide_main, &c);
}

/* ---- the kvm16 profile: a one-target flush IPI as measured in the guest ---- */

static void busy_sibling(struct sim *s, struct sim_thread *t)
{
	(void)t;
	sim_step(s, YP_USER, 10000000);	/* running (not lazy) on CPU 1 */
}

static void kvm_main(struct sim *s, struct sim_thread *t)
{
	struct ctl *c = t->arg;
	struct mm_struct *mm = task_of(t)->mm;
	tsim_spawn(s, busy_sibling, NULL, 1);
	sim_step(s, YP_USER, 100000);
	struct snap a = snap(s);
	uint64_t t0 = s->now + t->pending_ns;
	flush_tlb_mm_range(s, &mm->context, H, H + PG, 12, false);
	c->el = s->now + t->pending_ns - t0;
	assert_int_equal(xdiff(s, &a).ipi_sent, 1);
	c->ran = 1;
}

/* The kvm16 rule: a one-page flush with one other running CPU of the mm
 * costs the initiator 1.38 us more than without it in the guest (the probe:
 * 4.78 vs 3.40 us per op), i.e. send + latency + handler + one INVLPG =
 * 1380 ns, against 775 ns on bare metal (x86-24): the same flush takes
 * exactly 605 ns longer there. */
static void test_kvm16_ipi(void **state)
{
	(void)state;
	struct ctl bare = {0}, vm = {0};
	run_main("x86-24", 2, NULL, kvm_main, &bare);
	run_main("kvm16", 2, NULL, kvm_main, &vm);
	assert_int_equal(vm.el - bare.el, 1380 - 775);
	struct sim *s = tsim_new("kvm16", 0, NESTED_FULLMM);
	assert_int_equal(s->nr_cpus, 16);
	assert_int_equal(P(s, P_ipi_send_ns) + P(s, P_ipi_latency_ns) + P(s, P_ipi_handler_ns) +
				 P(s, P_invlpg_ns),
			 1380);
	tsim_free(s);
}

/* ---- tlb_gen catch-up on switch_mm after lazy mode ---- */

static void tlbgen_main(struct sim *s, struct sim_thread *t)
{
	struct ctl *c = t->arg;
	struct mm_struct *mm = task_of(t)->mm;
	struct arch_cpu *ac1 = arch_cpu(s, 1);
	tsim_spawn(s, short_thread, c, 1);
	sim_step(s, YP_USER, 1000000);
	assert_true(ac1->is_lazy);
	assert_ptr_equal(ac1->loaded_mm, &mm->context);
	int slot = ac1->loaded_mm_asid;
	assert_int_equal(ac1->ctxs[slot].ctx_id, mm->context.ctx_id);
	assert_int_equal(ac1->ctxs[slot].tlb_gen, mm->context.tlb_gen);

	/* no flush in between: running a thread of the mm again on CPU1
	 * (switch_mm from lazy mode to the same mm) does not flush */
	uint64_t f0 = s->m.flush_full;
	tsim_spawn(s, short_thread, c, 1);	/* CPU1 idle: switch_mm at once */
	assert_int_equal(s->m.flush_full, f0);
	assert_false(ac1->is_lazy);
	sim_step(s, YP_USER, 1000000);
	assert_true(ac1->is_lazy);

	/* three flushes while CPU1 is lazy (freed_tables=false: skipped);
	 * each bumps mm->context.tlb_gen by one */
	uint64_t gen0 = mm->context.tlb_gen;
	struct snap a = snap(s);
	for (int i = 1; i <= 3; i++) {
		flush_tlb_mm_range(s, &mm->context, H, H + PG, 12, false);
		assert_int_equal(mm->context.tlb_gen, gen0 + (uint64_t)i);
	}
	struct xdelta d = xdiff(s, &a);
	assert_int_equal(d.ipi_sent, 0);
	assert_int_equal(d.flush_full, 0);
	assert_true(ac1->ctxs[slot].tlb_gen < mm->context.tlb_gen);

	/* CPU1 runs the mm again: stale slot -> full flush on switch_mm, and
	 * the slot is caught up */
	f0 = s->m.flush_full;
	tsim_spawn(s, short_thread, c, 1);
	assert_int_equal(s->m.flush_full, f0 + 1);
	assert_int_equal(ac1->loaded_mm_asid, slot);
	assert_int_equal(ac1->ctxs[slot].tlb_gen, mm->context.tlb_gen);
	sim_step(s, YP_USER, 1000000);
	c->ran = 1;
}

static void test_tlb_gen_catch_up(void **state)
{
	(void)state;
	struct ctl c = {0};
	run_main("x86-24", 4, NULL, tlbgen_main, &c);
}

/* ---- PCID slots ---- */

#define NMM 8

static void add_mms(struct sim *s)
{
	/* tsim_new made mms[0] */
	assert_int_equal(kernel_of(s)->nr_mms, 1);
	for (int i = 1; i < NMM; i++)
		assert_non_null(mm_alloc(s));
	assert_int_equal(kernel_of(s)->nr_mms, NMM);
}

/* switch CPU 0 to mm i; returns the number of full flushes it caused */
static uint64_t sw(struct sim *s, int i)
{
	uint64_t f0 = s->m.flush_full;
	machine_of(s)->arch->switch_mm(s, 0, &tsim_mm(s, i)->context);
	assert_ptr_equal(arch_cpu(s, 0)->loaded_mm, &tsim_mm(s, i)->context);
	assert_true(in_cpumask(tsim_mm(s, i), 0));
	return s->m.flush_full - f0;
}

static void test_pcid_slots(void **state)
{
	(void)state;
	struct sim *s = tsim_new("x86-24", 2, NESTED_FULLMM);
	add_mms(s);
	struct arch_cpu *ac = arch_cpu(s, 0);

	/* first use of each of six mms: a new slot each, full flush */
	for (int i = 0; i < TLB_NR_DYN_ASIDS; i++) {
		assert_int_equal(sw(s, i), 1);
		assert_int_equal(ac->loaded_mm_asid, i);
		if (i > 0)
			assert_false(in_cpumask(tsim_mm(s, i - 1), 0));
	}
	/* switching among them again: slot reuse, no flush */
	for (int round = 0; round < 2; round++)
		for (int i = TLB_NR_DYN_ASIDS - 1; i >= 0; i--) {
			assert_int_equal(sw(s, i), 0);
			assert_int_equal(ac->loaded_mm_asid, i);
		}
	/* a slot whose tlb_gen is behind the mm's flushes on reuse (a flush
	 * of mm 3 elsewhere while this CPU ran something else) */
	tsim_mm(s, 3)->context.tlb_gen++;
	assert_int_equal(sw(s, 3), 1);
	assert_int_equal(ac->loaded_mm_asid, 3);
	assert_int_equal(ac->ctxs[3].tlb_gen, tsim_mm(s, 3)->context.tlb_gen);
	assert_int_equal(sw(s, 2), 0);
	assert_int_equal(sw(s, 3), 0);

	/* 7th mm: round-robin wraps to slot 0 (evicting mm 0), full flush */
	assert_int_equal(sw(s, 6), 1);
	assert_int_equal(ac->loaded_mm_asid, 0);
	assert_int_equal(ac->ctxs[0].ctx_id, tsim_mm(s, 6)->context.ctx_id);
	assert_int_equal(sw(s, 1), 0);		/* mm 1 still in slot 1 */
	/* back to the evicted mm 0: no slot matches -> next slot (1), flush */
	assert_int_equal(sw(s, 0), 1);
	assert_int_equal(ac->loaded_mm_asid, 1);
	/* which evicted mm 1 */
	assert_int_equal(sw(s, 1), 1);
	assert_int_equal(ac->loaded_mm_asid, 2);
	assert_int_equal(sw(s, 6), 0);
	assert_int_equal(ac->loaded_mm_asid, 0);
	tsim_free(s);
}

/* ---- processes: PCID slots and tlb_gen catch-up with real threads ---- */

#define NPROC 8
#define SLICE 1000000
#define STEP 100000

/* What the test expects of CPU 0's slots, kept by the rule of
 * choose_new_asid (not by reading the model). */
struct rr {
	uint64_t slot_ctx[TLB_NR_DYN_ASIDS];
	int next;
	const mm_context_t *last;	/* mm the test last saw on CPU 0 */
	uint64_t want_full;		/* full flushes the rule predicts */
	int switches, misses, wrong, behind, finished;
};

/* Called by a thread of CPU 0 as soon as it can have been switched in (at
 * start and after every point where it can be preempted); mapped: H is
 * mapped, check what the CPU reads there. */
static void note_switch(struct sim *s, struct sim_thread *t, struct rr *r, bool mapped)
{
	const mm_context_t *me = &task_of(t)->mm->context;
	const struct arch_cpu *ac = arch_cpu(s, 0);
	assert_ptr_equal(ac->loaded_mm, me);
	if (r->last != me) {
		r->switches++;
		int slot = -1;
		for (int i = 0; i < TLB_NR_DYN_ASIDS; i++)
			if (r->slot_ctx[i] == me->ctx_id)
				slot = i;
		if (slot < 0) {		/* evicted or new: next slot, full flush */
			slot = r->next;
			r->next = (r->next + 1) % TLB_NR_DYN_ASIDS;
			r->slot_ctx[slot] = me->ctx_id;
			r->want_full++;
			r->misses++;
		}
		assert_int_equal(ac->loaded_mm_asid, slot);
		r->last = me;
	}
	/* the loaded slot is caught up with the mm */
	if (ac->ctxs[ac->loaded_mm_asid].tlb_gen != me->tlb_gen)
		r->behind++;
	if (!mapped)
		return;
	uint32_t want = tsim_pte_frame(s, task_of(t)->mm, H);
	if (want == NO_FRAME || tsim_translate(s, 0, task_of(t)->mm, H) != want)
		r->wrong++;
}

static void rr_proc(struct sim *s, struct sim_thread *t)
{
	struct rr *r = t->arg;
	int rounds = 2 + t->id % 3;	/* processes finish at different times */
	note_switch(s, t, r, false);
	assert_true(sys_mmap(s, H, PG, TLBSIM_MAP_PRIVATE) == H);
	for (int round = 0; round < rounds; round++) {
		assert_int_equal(user_access(s, H, true), 0);
		note_switch(s, t, r, true);
		for (int k = 0; k < 10; k++) {
			sim_step(s, YP_USER, STEP);
			note_switch(s, t, r, true);
		}
	}
	r->finished++;
}

static void test_pcid_slots_processes(void **state)
{
	(void)state;
	const int64_t ov[] = {P_sched_slice_ns, SLICE, -1};
	struct sim *s = tsim_new_p("x86-24", 4, NESTED_FULLMM, ov);
	struct rr r = {0};
	tsim_spawn_mm(s, rr_proc, &r, tsim_mm(s, 0), 0);
	for (int i = 1; i < NPROC; i++)
		tsim_spawn_mm(s, rr_proc, &r, mm_alloc(s), 0);
	tsim_run(s);
	assert_int_equal(r.finished, NPROC);
	assert_int_equal(r.wrong, 0);
	assert_int_equal(r.behind, 0);
	/* the first switch came from idle; every other one is a CPU hand-over */
	assert_int_equal(r.switches, (int)s->m.context_switches + 1);
	/* more processes than slots: evictions; once only a few are left,
	 * switches hit their slots */
	assert_true(r.misses > NPROC);
	assert_true(r.misses < r.switches);
	/* nothing else flushed: every full flush is a slot the rule predicts */
	assert_int_equal(s->m.flush_full, r.want_full);
	assert_int_equal(s->m.ipi_sent, 0);
	if (s->m.violations)
		fail_msg("%s", tsim_violation(s)->text);
	tsim_free(s);
}

/* tlb_gen catch-up across processes: process A runs a0 on CPU 0 (sharing it
 * with process B) and a1 on CPU 1. */
struct catchup {
	struct sim_thread *a0;
	volatile int a0_asleep, unmapped, b_stop;
	uint64_t full_after_unmap, ipi_unmap, gen_after_unmap;
	int slot;
	uint64_t slot_gen_before;
	int ran;
};

static void catchup_a0(struct sim *s, struct sim_thread *t)
{
	struct catchup *c = t->arg;
	struct mm_struct *mm = task_of(t)->mm;
	assert_true(sys_mmap(s, H, 2 * PG, TLBSIM_MAP_PRIVATE) == H);
	assert_int_equal(user_access(s, H, true), 0);
	assert_int_equal(user_access(s, H + PG, true), 0);
	uint32_t old = tsim_pte_frame(s, mm, H);
	assert_int_equal(tsim_translate(s, 0, mm, H), old);
	c->slot = arch_cpu(s, 0)->loaded_mm_asid;
	c->a0_asleep = 1;
	sim_sleep(s);		/* CPU 0 switches to B */
	/* back on CPU 0 after a1's munmap: the switch found the slot behind */
	assert_true(c->unmapped);
	const struct arch_cpu *ac = arch_cpu(s, 0);
	assert_ptr_equal(ac->loaded_mm, &mm->context);
	assert_int_equal(ac->loaded_mm_asid, c->slot);
	assert_int_equal(s->m.flush_full - c->full_after_unmap, 1);
	assert_int_equal(ac->ctxs[c->slot].tlb_gen, mm->context.tlb_gen);
	/* the unmapped page is gone from CPU 0; the other one is still ours */
	assert_int_equal(tsim_translate(s, 0, mm, H), NO_FRAME);
	assert_int_equal(tsim_translate(s, 0, mm, H + PG), tsim_pte_frame(s, mm, H + PG));
	c->b_stop = 1;
	c->ran = 1;
}

static void catchup_a1(struct sim *s, struct sim_thread *t)
{
	struct catchup *c = t->arg;
	struct mm_struct *mm = task_of(t)->mm;
	while (!c->a0_asleep)
		sim_step(s, YP_USER, 1000);
	sim_step(s, YP_USER, 100000);	/* B now runs on CPU 0 */
	const struct arch_cpu *ac0 = arch_cpu(s, 0);
	assert_ptr_not_equal(ac0->loaded_mm, &mm->context);
	assert_false(in_cpumask(mm, 0));
	c->slot_gen_before = ac0->ctxs[c->slot].tlb_gen;
	uint64_t ipi0 = s->m.ipi_sent;
	assert_int_equal(sys_munmap(s, H, PG), 0);
	c->ipi_unmap = s->m.ipi_sent - ipi0;
	c->gen_after_unmap = mm->context.tlb_gen;
	/* CPU 0's slot of A is behind now, and its leaf of H still there */
	assert_true(ac0->ctxs[c->slot].tlb_gen < mm->context.tlb_gen);
	assert_int_equal(ac0->ctxs[c->slot].ctx_id, mm->context.ctx_id);
	c->full_after_unmap = s->m.flush_full;
	c->unmapped = 1;
	sim_wake(s, c->a0, (uint64_t)P(s, P_wakeup_ns));	/* queued behind B */
}

static void catchup_b(struct sim *s, struct sim_thread *t)
{
	struct catchup *c = t->arg;
	assert_true(sys_mmap(s, H, PG, TLBSIM_MAP_PRIVATE) == H);
	assert_int_equal(user_access(s, H, true), 0);
	while (!c->b_stop)	/* never sleeps: a0 gets CPU 0 back by a slice */
		sim_step(s, YP_USER, STEP);
}

static void test_tlb_gen_catch_up_processes(void **state)
{
	(void)state;
	const int64_t ov[] = {P_sched_slice_ns, SLICE, -1};
	struct sim *s = tsim_new_p("x86-24", 4, NESTED_FULLMM, ov);
	struct catchup c = {0};
	struct mm_struct *a = tsim_mm(s, 0), *b = mm_alloc(s);
	c.a0 = tsim_spawn_mm(s, catchup_a0, &c, a, 0);
	tsim_spawn_mm(s, catchup_a1, &c, a, 1);
	tsim_spawn_mm(s, catchup_b, &c, b, 0);
	tsim_run(s);
	assert_int_equal(c.ran, 1);
	assert_int_equal(c.ipi_unmap, 0);	/* CPU 0 was not in A's mm_cpumask */
	assert_true(c.slot_gen_before < c.gen_after_unmap);
	if (s->m.violations)
		fail_msg("%s", tsim_violation(s)->text);
	tsim_free(s);
}

/* Without PCID there is one context: every switch to another mm flushes. */
static void test_no_pcid_every_switch_flushes(void **state)
{
	(void)state;
	const int64_t ov[] = {P_pcid, 0, -1};
	struct sim *s = tsim_new_p("x86-24", 2, NESTED_FULLMM, ov);
	add_mms(s);
	const int seq[] = {0, 1, 0, 1, 2, 3, 4, 5, 6, 7, 0, 2};
	for (unsigned i = 0; i < sizeof(seq) / sizeof(seq[0]); i++)
		assert_int_equal(sw(s, seq[i]), 1);
	tsim_free(s);
}

/* ---- ptep_set_access_flags ---- */

/* x86 [4.6]: a write fault on a present read-only private PTE of an
 * exclusively owned anonymous page goes through handle_mm_fault's
 * present-PTE path (wp_page_reuse + pte_mkdirty) into ptep_set_access_flags,
 * which stores the PTE and flushes nothing: no INVLPG, no full flush, no IPI
 * although another CPU runs the mm, no tlb_gen bump. The read-only PTE is
 * made by hand (what fork's COW leaves for a page whose other mapping went
 * away): a read fault alone would map the shared zero page. */
static void x86_spurious_main(struct sim *s, struct sim_thread *t)
{
	struct ctl *c = t->arg;
	struct mm_struct *mm = task_of(t)->mm;
	tsim_spawn(s, busy_thread, c, 2);
	assert_true(sys_mmap(s, H, PG, TLBSIM_MAP_PRIVATE) == H);
	assert_int_equal(user_access(s, H, true), 0);
	sim_step(s, YP_USER, 100000);
	assert_false(arch_cpu(s, 2)->is_lazy);
	assert_true(in_cpumask(mm, 2));
	pte_t *ptep = pte_lookup(s, mm, H);
	assert_non_null(ptep);
	assert_true(pte_present(*ptep));
	*ptep &= ~(pte_t)(PTE_WRITE | PTE_DIRTY);
	struct inv_op all = {.kind = INV_ALL};
	hw_invalidate_cpu(hw_of(s), 0, &all);

	uint64_t pf0 = s->m.page_faults;
	struct snap a = snap(s);
	assert_int_equal(user_access(s, H, true), 0);
	struct xdelta d = xdiff(s, &a);
	assert_int_equal(s->m.page_faults - pf0, 1);
	assert_int_equal(d.ipi_sent, 0);
	assert_int_equal(d.ipi_received, 0);
	assert_int_equal(d.flush_local, 0);
	assert_int_equal(d.flush_full, 0);
	assert_int_equal(d.tlbi, 0);
	assert_int_equal(d.tlb_gen, 0);
	ptep = pte_lookup(s, mm, H);
	assert_true((*ptep & (PTE_WRITE | PTE_DIRTY)) == (PTE_WRITE | PTE_DIRTY));

	/* direct calls: changed && dirty -> stored, returns 1; changed &&
	 * !dirty -> not stored, returns 1; unchanged -> 0; never a flush */
	a = snap(s);
	pte_t old = *ptep;
	pte_t nw = old & ~PTE_YOUNG;
	assert_true(machine_of(s)->arch->ptep_set_access_flags(s, &mm->context, H, ptep, nw, false));
	assert_int_equal(*ptep, old);
	assert_true(machine_of(s)->arch->ptep_set_access_flags(s, &mm->context, H, ptep, nw, true));
	assert_int_equal(*ptep, nw);
	assert_false(machine_of(s)->arch->ptep_set_access_flags(s, &mm->context, H, ptep, nw, true));
	assert_int_equal(*ptep, nw);
	*ptep = old;
	d = xdiff(s, &a);
	assert_int_equal(d.ipi_sent + d.flush_local + d.flush_full + d.tlbi + d.tlb_gen, 0);
	c->done = 1;
	c->ran = 1;
}

static void test_x86_set_access_flags_no_flush(void **state)
{
	(void)state;
	struct ctl c = {0};
	run_main("x86-24", 4, NULL, x86_spurious_main, &c);
}

/* arm64 v5.1 [5.3]: ptep_set_access_flags on a changed PTE updates it (AF,
 * WRITE, DIRTY ORed in, RDONLY the more permissive) and issues one broadcast
 * VALE1IS; an unchanged PTE returns 0 with no TLBI. Through the fault path:
 * the first write to a clean writable shared page (RDONLY set) takes a
 * permission fault whose ptep_set_access_flags flushes one VALE1IS. */
static void arm64_access_main(struct sim *s, struct sim_thread *t)
{
	struct ctl *c = t->arg;
	struct mm_struct *mm = task_of(t)->mm;
	uint64_t ps = hw_of(s)->geom.page_size;
	assert_true(sys_mmap(s, H, 2 * ps, TLBSIM_MAP_SHARED) == H);
	assert_int_equal(user_access(s, H, false), 0);
	assert_int_equal(user_access(s, H + ps, false), 0);

	pte_t *ptep = pte_lookup(s, mm, H);
	assert_non_null(ptep);
	pte_t old = *ptep;
	assert_true(old & PTE_RDONLY);
	assert_true(old & PTE_WRITE);
	assert_false(old & PTE_DIRTY);

	pte_t entry = (old | PTE_DIRTY | PTE_YOUNG) & ~PTE_RDONLY;
	struct tlbsim_metrics m0 = s->m;
	assert_true(machine_of(s)->arch->ptep_set_access_flags(s, &mm->context, H, ptep, entry, true));
	assert_int_equal(s->m.tlbi.vale1is - m0.tlbi.vale1is, 1);
	assert_int_equal(tlbi_total(&s->m) - tlbi_total(&m0), 1);
	assert_true(*ptep & PTE_DIRTY);
	assert_false(*ptep & PTE_RDONLY);
	assert_int_equal(pte_pfn(*ptep), pte_pfn(old));

	/* the same entry again: pte_same -> 0, no TLBI */
	m0 = s->m;
	assert_false(machine_of(s)->arch->ptep_set_access_flags(s, &mm->context, H, ptep, *ptep, true));
	assert_int_equal(tlbi_total(&s->m) - tlbi_total(&m0), 0);

	/* through handle_mm_fault: write to the second (clean, RDONLY) page */
	m0 = s->m;
	assert_int_equal(user_access(s, H + ps, true), 0);
	assert_int_equal(s->m.page_faults - m0.page_faults, 1);
	assert_int_equal(s->m.tlbi.vale1is - m0.tlbi.vale1is, 1);
	assert_int_equal(tlbi_total(&s->m) - tlbi_total(&m0), 1);
	ptep = pte_lookup(s, mm, H + ps);
	assert_true(*ptep & PTE_DIRTY);
	assert_false(*ptep & PTE_RDONLY);
	c->ran = 1;
}

static void test_arm64_set_access_flags_flushes(void **state)
{
	(void)state;
	const char *profiles[] = {"falkor-46", "arm64-4k"};
	for (int i = 0; i < 2; i++) {
		struct ctl c = {0};
		run_main(profiles[i], 4, NULL, arm64_access_main, &c);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_flush_ceiling),
		cmocka_unit_test(test_ipis_and_lazy),
		cmocka_unit_test(test_sender_runs_own_handler),
		cmocka_unit_test(test_ipis_wide_mask),
		cmocka_unit_test(test_kvm16_ipi),
		cmocka_unit_test(test_tlb_gen_catch_up),
		cmocka_unit_test(test_pcid_slots),
		cmocka_unit_test(test_no_pcid_every_switch_flushes),
		cmocka_unit_test(test_pcid_slots_processes),
		cmocka_unit_test(test_tlb_gen_catch_up_processes),
		cmocka_unit_test(test_x86_set_access_flags_no_flush),
		cmocka_unit_test(test_arm64_set_access_flags_flushes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
