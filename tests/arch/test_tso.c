/*
 * test_tso.c - the x86-TSO store buffers of tlbsim check --memory-model tso
 * (src/arch/tso.c) and the x86 switch_mm / should_flush_tlb at the level of
 * their loads and stores (src/arch/x86.c).
 *
 * Rules checked (x86-TSO, Intel SDM vol. 3A 9.2.2, 9.3):
 *  - a load passes its CPU's older buffered store to another address (SB:
 *    both CPUs read 0); the other CPU does not see a buffered store;
 *  - a load of an address in its own buffer takes the newest value stored
 *    there (forwarding); drains make the stores visible oldest first;
 *  - MFENCE, a locked instruction (inc_mm_tlb_gen in flush_tlb_mm_range,
 *    cpumask_set_cpu in switch_mm) and a serialising one (the CR3 write)
 *    drain the buffer, and withdraw its pending drain callback;
 *  - under SC (no --memory-model tso) a store is visible at once;
 *  - x86_switch_mb: `atomic` leaves LOADED_MM_SWITCHING in the buffer of a
 *    CPU whose mm_cpumask bit was already set while it reads tlb_gen (a
 *    flusher then reads the previous mm, sends no IPI and the oracle marks
 *    the CPU as missed through a reordering); `smp_mb` (83b0177a6c48)
 *    drains it first;
 *  - x86_switching: with LOADED_MM_SWITCHING visible, `skip` sends no IPI,
 *    `flush` (fea4e317f9e7) one;
 *  - the PTE level: a change of a present PTE (ptep_get_and_clear, XCHG on
 *    x86 SMP; the LOCK bit operations) drains the writing CPU's buffer
 *    before the new value is visible; a store into a none slot
 *    (set_pte_at: native_set_pte, a plain store) does not drain it.
 */
#include "test_util.h"

#define H 0x100000000000ull
#define PG 4096ull

/* a machine in check mode with store buffers (no thread has run) */
static struct sim *tso_sim(int cpus, struct explore *ex)
{
	struct sim *s = tsim_new("x86-24", cpus, NESTED_FULLMM);
	explore_init(ex, EX_REPLAY, 1, 2, 0, NULL, 0);
	sim_set_explore(s, ex);
	assert_int_equal(tso_enable(machine_of(s)), 0);
	return s;
}

static void tso_free(struct sim *s, struct explore *ex)
{
	tsim_free(s);
	explore_free(ex);
}

/* pending drain callbacks in the ready list */
static int drains_queued(struct sim *s)
{
	int n = 0;
	for (uint32_t i = 0; i < s->q.nready; i++)
		n += s->q.ready[i].kind == EV_CALL;
	return n;
}

/* run the first pending callback (a drain) */
static void run_one_call(struct sim *s)
{
	for (uint32_t i = 0; i < s->q.nready; i++) {
		if (s->q.ready[i].kind != EV_CALL)
			continue;
		struct event e = s->q.ready[i];
		evq_ready_remove(&s->q, i);
		e.fn(s, e.ptr, e.data);
		return;
	}
	fail_msg("no pending callback");
}

static void test_load_passes_store(void **state)
{
	(void)state;
	struct explore ex;
	struct sim *s = tso_sim(2, &ex);
	uintptr_t x = 0, y = 0;
	tso_store(s, 0, &x, 1, TSO_W_X);
	tso_store(s, 1, &y, 1, TSO_W_Y);
	/* SB: each load passes its own CPU's store to the other address */
	assert_int_equal(tso_load(s, 0, &y), 0);
	assert_int_equal(tso_load(s, 1, &x), 0);
	assert_int_equal(x, 0);
	assert_int_equal(y, 0);
	assert_int_equal(tso_pending(s, 0), 1);
	assert_int_equal(drains_queued(s), 2);	/* one per CPU with stores */
	tso_free(s, &ex);
}

static void test_forwarding(void **state)
{
	(void)state;
	struct explore ex;
	struct sim *s = tso_sim(2, &ex);
	uintptr_t x = 0;
	tso_store(s, 0, &x, 1, TSO_W_X);
	tso_store(s, 0, &x, 2, TSO_W_X);
	assert_int_equal(tso_load(s, 0, &x), 2);	/* the newest of its own */
	assert_int_equal(tso_load(s, 1, &x), 0);	/* memory */
	assert_int_equal(drains_queued(s), 1);
	run_one_call(s);			/* oldest first */
	assert_int_equal(x, 1);
	assert_int_equal(tso_load(s, 1, &x), 1);
	assert_int_equal(tso_load(s, 0, &x), 2);
	assert_int_equal(drains_queued(s), 1);	/* re-queued: one store left */
	run_one_call(s);
	assert_int_equal(x, 2);
	assert_int_equal(tso_pending(s, 0), 0);
	assert_int_equal(drains_queued(s), 0);
	tso_free(s, &ex);
}

static void test_fence_drains(void **state)
{
	(void)state;
	for (int why = 0; why < TSO_WHY_COUNT; why++) {
		struct explore ex;
		struct sim *s = tso_sim(2, &ex);
		uintptr_t x = 0, y = 0;
		tso_store(s, 0, &x, 1, TSO_W_X);
		tso_store(s, 0, &y, 1, TSO_W_Y);
		tso_fence(s, 0, (enum tso_why)why);
		assert_int_equal(x, 1);
		assert_int_equal(y, 1);
		assert_int_equal(tso_pending(s, 0), 0);
		assert_int_equal(drains_queued(s), 0);	/* the drain is withdrawn */
		tso_free(s, &ex);
	}
}

static void test_sc_stores_at_once(void **state)
{
	(void)state;
	struct sim *s = tsim_new("x86-24", 2, NESTED_FULLMM);
	uintptr_t x = 0;
	tso_store(s, 0, &x, 1, TSO_W_X);
	assert_int_equal(x, 1);
	assert_int_equal(tso_pending(s, 0), 0);
	assert_int_equal(tso_load(s, 1, &x), 1);
	tso_fence(s, 0, TSO_MFENCE);		/* a no-op */
	tsim_free(s);
}

/* ---- switch_mm and the flusher ---- */

struct ctl {
	int mb, switching;
	uint64_t ipis;
	uintptr_t vis_after_phase1;
	uint32_t pending_after_phase1;
	bool reordered;
	uint32_t pending_before_flush, pending_after_flush;
	uint32_t pending1_after_flush;	/* CPU 1's buffer after the flush */
	int ran;
};

static bool in_mask(const mm_context_t *mm, int cpu)
{
	return (mm->cpumask[cpu / 64] >> (cpu % 64)) & 1;
}

static void switch_cpu1(struct sim *s, mm_context_t *to)
{
	machine_of(s)->arch->switch_mm(s, 1, to);
}

/* CPU 0 runs mm A and drives CPU 1 (idle, no thread): A, flush (uses up
 * the once-a-second trim), B, back to A - phase 1 only - then flushes A */
static void flusher_main(struct sim *s, struct sim_thread *t)
{
	struct ctl *c = t->arg;
	mm_context_t *a = &tsim_mm(s, 0)->context, *b = &tsim_mm(s, 1)->context;
	struct arch_cpu *ac1 = arch_cpu(s, 1);
	switch_cpu1(s, a);
	x86_switch_finish(s, 1);
	tso_fence(s, 1, TSO_MFENCE);
	flush_tlb_mm_range(s, a, H, H + PG, 12, false);	/* trims: IPIs CPU 1 */
	switch_cpu1(s, b);
	x86_switch_finish(s, 1);
	tso_fence(s, 1, TSO_MFENCE);
	assert_true(in_mask(a, 1));			/* x86_cpumask=lazy */
	switch_cpu1(s, a);				/* the bit is already set */
	assert_true(machine_of(s)->tso[1].sw.pending);
	c->vis_after_phase1 = ac1->loaded_mm_mem;
	c->pending_after_phase1 = tso_pending(s, 1);
	/* CPU 0's own buffer: the flush's locked increment drains it */
	uintptr_t w = 0;
	tso_store(s, 0, &w, 1, TSO_W_X);
	c->pending_before_flush = tso_pending(s, 0);
	uint64_t n = s->m.ipi_sent;
	flush_tlb_mm_range(s, a, H, H + PG, 12, false);
	c->ipis = s->m.ipi_sent - n;
	c->pending_after_flush = tso_pending(s, 0);
	c->pending1_after_flush = tso_pending(s, 1);
	assert_int_equal(w, 1);
	c->reordered = tsim_oracle(s)->reordered[1];
	c->ran = 1;
}

static void run_switch(struct ctl *c)
{
	struct explore ex;
	struct sim *s = tso_sim(2, &ex);
	struct machine *mc = machine_of(s);
	mc->policy.x86_cpumask = X86_CPUMASK_LAZY;
	mc->policy.x86_should_flush = X86_SHOULD_FLUSH_LOADED_MM;
	mc->policy.x86_switch_mb = c->mb;
	mc->policy.x86_switching = c->switching;
	assert_non_null(mm_alloc(s));
	tsim_spawn(s, flusher_main, c, 0);
	tsim_run(s);
	assert_int_equal(c->ran, 1);
	tso_free(s, &ex);
}

static void test_switch_mb(void **state)
{
	(void)state;
	/* atomic (209954cbc7d0): no barrier, SWITCHING stays buffered while
	 * tlb_gen is read; the flusher reads B, skips CPU 1, and CPU 1's own
	 * view (SWITCHING, flushed by fea4e317f9e7) marks the reordering */
	struct ctl c = {.mb = X86_SWITCH_MB_ATOMIC, .switching = X86_SWITCHING_FLUSH};
	run_switch(&c);
	assert_int_not_equal(c.vis_after_phase1, TSO_SWITCHING);
	assert_true(c.pending_after_phase1 >= 1);
	assert_int_equal(c.ipis, 0);
	assert_true(c.reordered);
	/* smp_mb (83b0177a6c48): SWITCHING is visible before the read; the
	 * flusher IPIs CPU 1 */
	struct ctl d = {.mb = X86_SWITCH_MB_SMP_MB, .switching = X86_SWITCHING_FLUSH};
	run_switch(&d);
	assert_int_equal(d.vis_after_phase1, TSO_SWITCHING);
	assert_int_equal(d.pending_after_phase1, 0);
	assert_int_equal(d.ipis, 1);
	assert_false(d.reordered);
	/* the flush's atomic64_inc_return is locked: CPU 0's buffer drains */
	assert_int_equal(c.pending_before_flush, 1);
	assert_int_equal(c.pending_after_flush, 0);
}

static void test_switching(void **state)
{
	(void)state;
	/* SWITCHING visible (smp_mb): skip (6db2526c1d69) sends nothing, and
	 * CPU 1's own view says the same: no reordering */
	struct ctl c = {.mb = X86_SWITCH_MB_SMP_MB, .switching = X86_SWITCHING_SKIP};
	run_switch(&c);
	assert_int_equal(c.vis_after_phase1, TSO_SWITCHING);
	assert_int_equal(c.ipis, 0);
	assert_false(c.reordered);
	/* flush (fea4e317f9e7): one IPI */
	struct ctl d = {.mb = X86_SWITCH_MB_SMP_MB, .switching = X86_SWITCHING_FLUSH};
	run_switch(&d);
	assert_int_equal(d.ipis, 1);
	/* its handler finished CPU 1's switch (the CR3 write, then loaded_mm
	 * = A buffered) and flushed: INVLPG / the CR3 reload are serialising,
	 * and CPU 1's buffer is empty */
	assert_int_equal(d.pending1_after_flush, 0);
}

/* the CR3 write is serialising: finishing the switch drains what phase 1
 * left, then buffers loaded_mm = next */
static void cr3_main(struct sim *s, struct sim_thread *t)
{
	struct ctl *c = t->arg;
	mm_context_t *b = &tsim_mm(s, 1)->context;
	struct arch_cpu *ac1 = arch_cpu(s, 1);
	tso_store(s, 1, &ac1->is_lazy_mem, 0, TSO_W_IS_LAZY);	/* something buffered */
	switch_cpu1(s, b);		/* bit clear: cpumask_set_cpu (locked) drains */
	assert_int_equal(tso_pending(s, 1), 0);
	assert_int_equal(ac1->loaded_mm_mem, TSO_SWITCHING);
	tso_store(s, 1, &ac1->is_lazy_mem, 0, TSO_W_IS_LAZY);
	x86_switch_finish(s, 1);
	/* drained by the CR3 write, then loaded_mm = B buffered */
	assert_int_equal(tso_pending(s, 1), 1);
	assert_ptr_equal(ac1->loaded_mm, b);
	assert_int_equal(tso_load(s, 1, &ac1->loaded_mm_mem), (uintptr_t)b);
	assert_int_equal(tso_load(s, 0, &ac1->loaded_mm_mem), TSO_SWITCHING);
	c->ran = 1;
}

static void test_cr3_serialises(void **state)
{
	(void)state;
	struct explore ex;
	struct sim *s = tso_sim(2, &ex);
	assert_non_null(mm_alloc(s));
	struct ctl c = {0};
	tsim_spawn(s, cr3_main, &c, 0);
	tsim_run(s);
	assert_int_equal(c.ran, 1);
	tso_free(s, &ex);
}

/* ---- the PTE level ---- */

static void pte_main(struct sim *s, struct sim_thread *t)
{
	struct ctl *c = t->arg;
	struct mm_struct *mm = task_of(t)->mm;
	struct hw *hw = hw_of(s);
	uint64_t a = sys_mmap(s, H, PG, TLBSIM_MAP_PRIVATE);
	assert_true(a == H);
	assert_int_equal(user_access(s, a, true), 0);
	uint32_t tbl = pte_table_of(s, mm, a);
	uint64_t idx = pt_index(&hw->geom, hw->geom.levels - 1, a);
	pte_t saved = frame_of(hw, tbl)->table[idx];
	assert_true(pte_present(saved));
	uintptr_t x = 0;
	tso_store(s, 0, &x, 1, TSO_W_X);
	/* ptep_get_and_clear: XCHG, locked - x is visible first */
	set_entry(s, tbl, idx, 0);
	assert_int_equal(x, 1);
	assert_int_equal(tso_pending(s, 0), 0);
	/* set_pte_at into the none slot: a plain store, x stays buffered */
	tso_store(s, 0, &x, 2, TSO_W_X);
	set_entry(s, tbl, idx, saved);
	assert_int_equal(tso_pending(s, 0), 1);
	assert_int_equal(x, 1);
	assert_int_equal(tso_load(s, 0, &x), 2);
	tso_fence(s, 0, TSO_MFENCE);
	c->ran = 1;
}

static void test_pte_rmw_drains(void **state)
{
	(void)state;
	struct explore ex;
	struct sim *s = tso_sim(2, &ex);
	struct ctl c = {0};
	tsim_spawn(s, pte_main, &c, 0);
	tsim_run(s);
	assert_int_equal(c.ran, 1);
	tso_free(s, &ex);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_load_passes_store),
		cmocka_unit_test(test_forwarding),
		cmocka_unit_test(test_fence_drains),
		cmocka_unit_test(test_sc_stores_at_once),
		cmocka_unit_test(test_switch_mb),
		cmocka_unit_test(test_switching),
		cmocka_unit_test(test_cr3_serialises),
		cmocka_unit_test(test_pte_rmw_drains),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
