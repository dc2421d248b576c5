/*
 * test_async.c - completion windows in check mode (-D async_completion=1,
 * the default): src/arch/arm64.c (arm64_tlbi_nosync, arm64_dsb_ish,
 * arm64_tlbi_batch), src/arch/irq.c (the IPI entities), src/sim/explore.c.
 *
 * Rules checked:
 *  - arm64: a broadcast TLBI takes effect on the issuing CPU at issue and on
 *    another CPU that holds an entry it removes only when the explorer runs
 *    that CPU's completion, or at the issuer's DSB ISH, which completes every
 *    TLBI the issuing thread still has in flight;
 *  - a DSB executed by another thread (another CPU: flush_tlb_batched_pending
 *    as a DSB, arm64_batch=dsb) completes none of them;
 *  - through flush_tlb_page: some schedule lets another CPU run and still
 *    translate through the entry between the TLBI and the DSB; in every
 *    schedule the entry is gone when flush_tlb_page returns; with
 *    async_completion=0 the window never exists (completion at issue);
 *  - a CPU that holds nothing the TLBI removes gets no entity (the schedule
 *    is the same as with completion at issue);
 *  - the canonical order at the in-flight point is [issuer, completion on
 *    CPU 1]: decision 0 completes at the DSB, decision 1 before it, and a
 *    replayed prefix reproduces each;
 *  - x86 INVLPGB: pending on another CPU until the issuer's TLBSYNC, or
 *    completed before it when the explorer picks the entity;
 *  - x86: a flush IPI is delivered, handled and acknowledged at three
 *    scheduling points, in that order, before the sender's flush returns;
 *    some schedule runs another thread between delivery and handling; an
 *    IPI to a CPU with IRQs off is handled at its local_irq_enable;
 *  - run mode: no entity, no in-flight TLBI, no IPI point: completion at
 *    issue as before.
 */
#include "sim/explore.h"
#include "test_util.h"

/* a simulation in check mode driven by ex (strategy st, seed), with
 * async_completion = async and, if tb, tracing into tb */
static struct sim *csim_new_pol(const char *profile, int nr_cpus, struct explore *ex,
			       enum explore_strategy st, uint64_t seed, int64_t async,
			       struct trace_buf *tb, bool invlpgb)
{
	explore_init(ex, st, seed, 3, 200, NULL, 0);
	const struct tlbsim_profile *prof = tlbsim_profile_find(profile);
	assert_non_null(prof);
	struct tlbsim_config cfg;
	tlbsim_config_init(&cfg);
	cfg.profile = profile;
	if (invlpgb)
		cfg.policy.x86_flush = X86_FLUSH_INVLPGB;
	cfg.overrides[cfg.noverrides].param = P_jitter;
	cfg.overrides[cfg.noverrides++].value = 0;
	cfg.overrides[cfg.noverrides].param = P_async_completion;
	cfg.overrides[cfg.noverrides++].value = async;
	cfg.overrides[cfg.noverrides].param = P_kpti;
	cfg.overrides[cfg.noverrides++].value = 0;
	struct tlbsim_resolved res;
	memset(&res, 0, sizeof(res));
	res.profile = prof;
	res.cpus = nr_cpus;
	struct core_opts o = {.want_kind = -1, .no_workload = true, .ex = ex, .trace = tb};
	struct tlbsim_sim *ts = malloc(sizeof(*ts));
	assert_non_null(ts);
	char err[TLBSIM_ERRLEN];
	if (core_build(ts, &cfg, &res, &o, err, sizeof(err)))
		fail_msg("core_build: %s", err);
	struct sim *s = core_sim(ts);
	s->on_bug = tsim_on_bug;
	assert_non_null(mm_alloc(s));
	return s;
}

static struct sim *csim_new(const char *profile, int nr_cpus, struct explore *ex,
			   enum explore_strategy st, uint64_t seed, int64_t async,
			   struct trace_buf *tb)
{
	return csim_new_pol(profile, nr_cpus, ex, st, seed, async, tb, false);
}

static void csim_free(struct sim *s, struct explore *ex)
{
	tsim_free(s);
	explore_free(ex);
}

/* cpu caches a leaf for va tagged with mm's ASID (arm64) */
static bool leaf_on(struct sim *s, int cpu, struct mm_struct *mm, uint64_t va)
{
	struct hw *hw = hw_of(s);
	return tc_peek(&hw->cpu[cpu].tlb, va >> hw->geom.page_shift, hw->geom.levels - 1,
		       mm->context.asid) != NULL;
}

/* fill cpu's TLB with mm's translation of va (a read through its MMU) */
static void fill_on(struct sim *s, int cpu, struct mm_struct *mm, uint64_t va)
{
	struct hw_access acc;
	hw_access(hw_of(s), cpu, mm->pgd, mm->context.asid, va, false, &acc);
	assert_false(acc.fault);
	assert_true(leaf_on(s, cpu, mm, va));
}

/* index of the first record of pt at or after from (with a == cpu if cpu >= 0), or -1 */
static int find_rec(const struct trace_buf *tb, uint32_t from, const struct sim_point *pt, int cpu)
{
	for (uint32_t i = from; i < tb->n; i++)
		if (tb->r[i].pt == pt && (cpu < 0 || tb->r[i].a == (uint64_t)cpu))
			return (int)i;
	return -1;
}

/* ---- arm64: pending until the issuer's DSB; another thread's DSB completes nothing ---- */

struct dsb_x {
	volatile bool issued, other_done;
	uint64_t va;
	uint32_t inflight;
	uint32_t live_before_other, live_after_other;
	bool cpu1_after_issue, cpu0_after_issue, cpu1_after_other, any_after_own;
	uint32_t live_after_own;
	int other_cpu;
};

static void dsb_issuer(struct sim *s, struct sim_thread *t)
{
	struct dsb_x *x = t->arg;
	struct mm_struct *mm = task_of(t)->mm;
	uint64_t ps = hw_of(s)->geom.page_size;
	uint64_t a = sys_mmap(s, 0, ps, TLBSIM_MAP_PRIVATE);
	assert_int_equal(user_access(s, a, false), 0);
	x->va = a;
	for (int c = 0; c < 3; c++)
		fill_on(s, c, mm, a);
	struct inv_op inv = {.kind = INV_VA_LEAF, .tag = mm->context.asid, .start = a,
			     .end = a + ps, .stride = ps};
	x->inflight = arm64_tlbi_nosync(s, &inv);
	x->cpu0_after_issue = leaf_on(s, 0, mm, a);
	x->cpu1_after_issue = leaf_on(s, 1, mm, a);
	x->issued = true;
	while (!x->other_done)
		sim_sleep_for(s, 100);
	arm64_dsb_ish(s);
	x->any_after_own = leaf_on(s, 1, mm, a) || leaf_on(s, 2, mm, a);
	x->live_after_own = machine_of(s)->nlive;
}

static void dsb_other(struct sim *s, struct sim_thread *t)
{
	struct dsb_x *x = t->arg;
	while (!x->issued)
		sim_sleep_for(s, 100);
	struct mm_struct *mm = task_of(t)->mm;
	x->live_before_other = machine_of(s)->nlive;
	arm64_dsb_ish(s);	/* this CPU's DSB */
	x->live_after_other = machine_of(s)->nlive;
	x->cpu1_after_other = leaf_on(s, 1, mm, x->va);
	x->other_done = true;
}

static void test_arm64_pending_until_issuer_dsb(void **state)
{
	(void)state;
	int other_saw_pending = 0;
	for (int seed = 1; seed <= 100; seed++) {
		struct explore ex;
		struct dsb_x x = {0};
		struct sim *s = csim_new("arm64-4k", 3, &ex, EX_RANDOM, (uint64_t)seed, 1, NULL);
		tsim_spawn(s, dsb_issuer, &x, 0);
		tsim_spawn(s, dsb_other, &x, 2);
		tsim_run(s);
		assert_int_equal(x.inflight, 2);		/* CPUs 1 and 2 owe it */
		assert_false(x.cpu0_after_issue);		/* the issuer's own: at issue */
		assert_true(x.cpu1_after_issue);		/* not yet on CPU 1 */
		/* the other thread's DSB completed none of the issuer's TLBIs */
		assert_int_equal(x.live_after_other, x.live_before_other);
		if (x.live_before_other) {
			other_saw_pending++;
			if (x.live_before_other == 2)
				assert_true(x.cpu1_after_other);
		}
		/* the issuer's DSB: complete everywhere */
		assert_false(x.any_after_own);
		assert_int_equal(x.live_after_own, 0);
		csim_free(s, &ex);
	}
	assert_true(other_saw_pending > 0);
}

/* a CPU holding nothing the TLBI removes owes nothing */
static void nothing_owed(struct sim *s, struct sim_thread *t)
{
	uint32_t *n = t->arg;
	struct mm_struct *mm = task_of(t)->mm;
	uint64_t ps = hw_of(s)->geom.page_size;
	uint64_t a = sys_mmap(s, 0, 2 * ps, TLBSIM_MAP_PRIVATE);
	assert_int_equal(user_access(s, a, false), 0);
	assert_int_equal(user_access(s, a + ps, false), 0);
	fill_on(s, 1, mm, a + ps);	/* CPU 1 holds the other page only */
	struct inv_op inv = {.kind = INV_VA_LEAF, .tag = mm->context.asid, .start = a,
			     .end = a + ps, .stride = ps};
	*n = arm64_tlbi_nosync(s, &inv);
	arm64_dsb_ish(s);
}

static void test_arm64_no_entity_without_entry(void **state)
{
	(void)state;
	struct explore ex;
	uint32_t n = 99;
	struct sim *s = csim_new("arm64-4k", 2, &ex, EX_REPLAY, 1, 1, NULL);
	tsim_spawn(s, nothing_owed, &n, 0);
	tsim_run(s);
	assert_int_equal(n, 0);
	csim_free(s, &ex);
}

/* ---- the canonical order: at the in-flight point, [issuer, entity] ---- */

static void lone_issuer(struct sim *s, struct sim_thread *t)
{
	(void)t;
	struct mm_struct *mm = task_of(t)->mm;
	uint64_t ps = hw_of(s)->geom.page_size;
	uint64_t a = sys_mmap(s, 0, ps, TLBSIM_MAP_PRIVATE);
	assert_int_equal(user_access(s, a, false), 0);
	fill_on(s, 1, mm, a);
	flush_tlb_page(s, &mm->context, a);
	assert_false(leaf_on(s, 1, mm, a));
}

/* replay prefix (n decisions); returns the tlbi_complete record's b */
static uint64_t lone_run(const uint32_t *prefix, uint32_t n, uint32_t *nopt0, uint32_t *ndec)
{
	struct explore ex;
	struct trace_buf tb = {0};
	struct sim *s = csim_new("arm64-4k", 2, &ex, EX_REPLAY, 1, 1, &tb);
	ex.prefix = prefix;
	ex.nprefix = n;
	tsim_spawn(s, lone_issuer, NULL, 0);
	tsim_run(s);
	int i = find_rec(&tb, 0, &tp_tlbi_complete, 1);
	assert_true(i >= 0);
	uint64_t b = tb.r[i].b;
	*ndec = ex.ndec;
	*nopt0 = ex.ndec ? ex.nopt[0] : 0;
	assert_false(ex.diverged);
	csim_free(s, &ex);
	trace_buf_free(&tb);
	return b;
}

static void test_canonical_order_and_replay(void **state)
{
	(void)state;
	uint32_t nopt0, ndec;
	/* all zeros: the issuer continues, its DSB completes the TLBI */
	uint64_t b = lone_run(NULL, 0, &nopt0, &ndec);
	assert_int_equal(ndec, 1);		/* the one point with a choice */
	assert_int_equal(nopt0, 2);		/* the issuer, CPU 1's completion */
	assert_int_equal((b >> 32) & 1, 1);	/* at the issuer's DSB */
	/* decision 1 = the entity: CPU 1 completes before the DSB */
	static const uint32_t one[] = {1};
	b = lone_run(one, 1, &nopt0, &ndec);
	assert_int_equal(nopt0, 2);
	assert_int_equal((b >> 32) & 1, 0);
	assert_int_equal(b >> 33, 0);		/* issued by T0 */
}

/* ---- x86 INVLPGB: pending until the issuer's TLBSYNC ---- */

static void invlpgb_issuer(struct sim *s, struct sim_thread *t)
{
	bool *stale = t->arg;
	struct mm_struct *mm = task_of(t)->mm;
	const struct pt_geom *g = &hw_of(s)->geom;
	uint64_t a = sys_mmap(s, 0, g->page_size, TLBSIM_MAP_PRIVATE);
	assert_int_equal(user_access(s, a, false), 0);
	use_global_asid(s, &mm->context);
	assert_true(mm->context.global_asid != 0);
	/* CPU 1 caches the page under the global ASID's PCID (kern_pcid) */
	uint32_t tag = (uint32_t)mm->context.global_asid + 1;
	struct hw_access acc;
	hw_access(hw_of(s), 1, mm->pgd, tag, a, false, &acc);
	assert_false(acc.fault);
	flush_tlb_mm_range(s, &mm->context, a, a + g->page_size, (unsigned)g->page_shift, false);
	*stale = tc_peek(&hw_of(s)->cpu[1].tlb, a >> g->page_shift, g->levels - 1, tag) != NULL;
}

static uint64_t invlpgb_run(const uint32_t *prefix, uint32_t n)
{
	struct explore ex;
	struct trace_buf tb = {0};
	bool stale = true;
	struct sim *s = csim_new_pol("milan-72", 2, &ex, EX_REPLAY, 1, 1, &tb, true);
	ex.prefix = prefix;
	ex.nprefix = n;
	tsim_spawn(s, invlpgb_issuer, &stale, 0);
	tsim_run(s);
	assert_false(stale);			/* complete when the flush returns */
	assert_true(s->m.invlpgb > 0);
	assert_int_equal(s->m.ipi_sent, 0);
	int i = find_rec(&tb, 0, &tp_tlbi_complete, 1);
	assert_true(i >= 0);
	uint64_t b = tb.r[i].b;
	assert_false(ex.diverged);
	csim_free(s, &ex);
	trace_buf_free(&tb);
	return b;
}

static void test_x86_invlpgb_until_tlbsync(void **state)
{
	(void)state;
	assert_int_equal((invlpgb_run(NULL, 0) >> 32) & 1, 1);	/* at the TLBSYNC */
	static const uint32_t one[] = {1};
	assert_int_equal((invlpgb_run(one, 1) >> 32) & 1, 0);	/* before it */
}

/* ---- arm64: the window through flush_tlb_page, over random schedules ---- */

struct win_x {
	volatile uint64_t va;
	volatile bool touched, flushed;
	bool saw_window;		/* CPU 1 ran with its entry while the TLBI was in flight */
	bool stale_after_return;	/* CPU 1 still had the entry when flush_tlb_page returned */
	uint64_t inflight_points;	/* tlbi_inflight yield points passed */
};

static void win_issuer(struct sim *s, struct sim_thread *t)
{
	struct win_x *x = t->arg;
	struct mm_struct *mm = task_of(t)->mm;
	uint64_t ps = hw_of(s)->geom.page_size;
	uint64_t a = sys_mmap(s, 0, ps, TLBSIM_MAP_PRIVATE);
	assert_int_equal(user_access(s, a, false), 0);
	x->va = a;
	TSIM_WAIT_UNTIL(s, x->touched);
	flush_tlb_page(s, &mm->context, a);
	x->stale_after_return = leaf_on(s, 1, mm, a);
	x->flushed = true;
}

static void win_observer(struct sim *s, struct sim_thread *t)
{
	struct win_x *x = t->arg;
	struct mm_struct *mm = task_of(t)->mm;
	TSIM_WAIT_UNTIL(s, x->va);
	assert_int_equal(user_access(s, x->va, false), 0);
	x->touched = true;
	while (!x->flushed) {
		if (machine_of(s)->nlive && leaf_on(s, 1, mm, x->va))
			x->saw_window = true;
		sim_step(s, YP_USER, 10);
	}
}

/* runs of seeds 1..n with async_completion = async: how many saw the
 * window; none may leave the entry after the flush returned */
static int window_runs(int64_t async, int n)
{
	int saw = 0;
	for (int seed = 1; seed <= n; seed++) {
		struct explore ex;
		struct win_x x = {0};
		struct sim *s = csim_new("arm64-4k", 2, &ex, EX_RANDOM, (uint64_t)seed, async, NULL);
		tsim_spawn(s, win_issuer, &x, 0);
		tsim_spawn(s, win_observer, &x, 1);
		tsim_run(s);
		assert_false(x.stale_after_return);
		saw += x.saw_window;
		csim_free(s, &ex);
	}
	return saw;
}

static void test_arm64_window_before_dsb(void **state)
{
	(void)state;
	assert_true(window_runs(1, 200) > 0);
}

static void test_arm64_no_window_when_immediate(void **state)
{
	(void)state;
	assert_int_equal(window_runs(0, 200), 0);
}

/* ---- x86: deliver, handle, ack ---- */

static const struct sim_point tp_returned = {"test_flush_returned", NULL, 0};
static const struct sim_point tp_observer = {"test_observer_step", NULL, 0};

struct ipi_x {
	volatile uint64_t va;
	volatile bool touched, flushed;
	bool irqs_off;			/* the observer disables IRQs around its loop */
	uint64_t received_before, received_after;
};

static void ipi_sender(struct sim *s, struct sim_thread *t)
{
	struct ipi_x *x = t->arg;
	struct mm_struct *mm = task_of(t)->mm;
	const struct pt_geom *g = &hw_of(s)->geom;
	uint64_t a = sys_mmap(s, 0, g->page_size, TLBSIM_MAP_PRIVATE);
	assert_int_equal(user_access(s, a, false), 0);
	x->va = a;
	TSIM_WAIT_UNTIL(s, x->touched);
	x->received_before = s->m.ipi_received;
	flush_tlb_mm_range(s, &mm->context, a, a + g->page_size, (unsigned)g->page_shift, false);
	x->received_after = s->m.ipi_received;
	sim_trace(s, &tp_returned, 0, 0);
	x->flushed = true;
}

static void ipi_observer(struct sim *s, struct sim_thread *t)
{
	struct ipi_x *x = t->arg;
	TSIM_WAIT_UNTIL(s, x->va);
	assert_int_equal(user_access(s, x->va, false), 0);
	if (x->irqs_off)
		local_irq_disable(s);
	x->touched = true;
	for (int i = 0; i < 8 || (!x->irqs_off && !x->flushed); i++)
		sim_step(s, &tp_observer, 10);
	if (x->irqs_off)
		local_irq_enable(s);
	TSIM_WAIT_UNTIL(s, x->flushed);
}

static void test_x86_ipi_points_ordered(void **state)
{
	(void)state;
	int between = 0;
	for (int seed = 1; seed <= 100; seed++) {
		struct explore ex;
		struct trace_buf tb = {0};
		struct ipi_x x = {0};
		struct sim *s = csim_new("x86-24", 2, &ex, EX_RANDOM, (uint64_t)seed, 1, &tb);
		tsim_spawn(s, ipi_sender, &x, 0);
		tsim_spawn(s, ipi_observer, &x, 1);
		tsim_run(s);
		int d = find_rec(&tb, 0, &tp_ipi_deliver, 1);
		assert_true(d >= 0);
		int h = find_rec(&tb, (uint32_t)d, &tp_ipi_handle, 1);
		int k = find_rec(&tb, (uint32_t)(h < 0 ? 0 : h), &tp_ipi_ack, 1);
		int r = find_rec(&tb, 0, &tp_returned, -1);
		assert_true(h > d);
		assert_int_equal(tb.r[h].b, 0);		/* IRQs on: handled in place */
		assert_true(k > h);
		assert_true(r > k);			/* the sender waited for the ack */
		assert_int_equal(x.received_after - x.received_before, 1);
		if (find_rec(&tb, (uint32_t)d, &tp_observer, -1) >= 0 &&
		    find_rec(&tb, (uint32_t)d, &tp_observer, -1) < h)
			between++;
		csim_free(s, &ex);
		trace_buf_free(&tb);
	}
	assert_true(between > 0);	/* separate points: the target ran in between */
}

static void test_x86_ipi_irqs_off(void **state)
{
	(void)state;
	int deferred = 0;
	for (int seed = 1; seed <= 50; seed++) {
		struct explore ex;
		struct trace_buf tb = {0};
		struct ipi_x x = {.irqs_off = true};
		struct sim *s = csim_new("x86-24", 2, &ex, EX_RANDOM, (uint64_t)seed, 1, &tb);
		tsim_spawn(s, ipi_sender, &x, 0);
		tsim_spawn(s, ipi_observer, &x, 1);
		tsim_run(s);
		int h = find_rec(&tb, 0, &tp_ipi_handle, 1);
		int k = find_rec(&tb, 0, &tp_ipi_ack, 1);
		int r = find_rec(&tb, 0, &tp_returned, -1);
		assert_true(h >= 0 && k > h && r > k);
		assert_int_equal(x.received_after - x.received_before, 1);
		deferred += tb.r[h].b == 1;
		csim_free(s, &ex);
		trace_buf_free(&tb);
	}
	assert_true(deferred > 0);
}

/* ---- run mode: completion at issue, no entities ---- */

struct run_x {
	bool async_seen;
	uint32_t inflight;
	bool cpu1_after_issue;
};

static void run_issuer(struct sim *s, struct sim_thread *t)
{
	struct run_x *x = t->arg;
	struct mm_struct *mm = task_of(t)->mm;
	uint64_t ps = hw_of(s)->geom.page_size;
	uint64_t a = sys_mmap(s, 0, ps, TLBSIM_MAP_PRIVATE);
	assert_int_equal(user_access(s, a, false), 0);
	fill_on(s, 1, mm, a);
	x->async_seen = async_completion(s);
	struct inv_op inv = {.kind = INV_VA_LEAF, .tag = mm->context.asid, .start = a,
			     .end = a + ps, .stride = ps};
	x->inflight = arm64_tlbi_nosync(s, &inv);
	x->cpu1_after_issue = leaf_on(s, 1, mm, a);
}

static void test_run_mode_immediate(void **state)
{
	(void)state;
	struct run_x x = {0};
	struct sim *s = tsim_new("arm64-4k", 2, NESTED_FULLMM);
	tsim_spawn(s, run_issuer, &x, 0);
	tsim_run(s);
	assert_false(x.async_seen);
	assert_int_equal(x.inflight, 0);
	assert_false(x.cpu1_after_issue);
	assert_int_equal(machine_of(s)->nlive, 0);
	tsim_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_arm64_pending_until_issuer_dsb),
		cmocka_unit_test(test_arm64_no_entity_without_entry),
		cmocka_unit_test(test_canonical_order_and_replay),
		cmocka_unit_test(test_arm64_window_before_dsb),
		cmocka_unit_test(test_arm64_no_window_when_immediate),
		cmocka_unit_test(test_x86_invlpgb_until_tlbsync),
		cmocka_unit_test(test_x86_ipi_points_ordered),
		cmocka_unit_test(test_x86_ipi_irqs_off),
		cmocka_unit_test(test_run_mode_immediate),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
