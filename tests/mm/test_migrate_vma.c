/*
 * test_migrate_vma.c - a driver's device migration (src/mm/migrate_device.c,
 * mm/migrate_device.c v6.0 + the knobs migrate_flush and migrate_dirty).
 *
 * Rules checked:
 *  - migrating a page another CPU caches: afterwards the address maps a
 *    new frame, with the old PTE's write permission, clean; the old frame
 *    is freed, the new one has the mapping's reference only and is
 *    unlocked; under both migrate_flush values the collect emits one
 *    flush_tlb_range of the page - x86: one IPI to the other CPU and an
 *    INVLPG on each (2 local page flushes), no full flush; arm64: one
 *    TLBI VAE1IS (flush_tlb_range is not last-level), no IPI; under
 *    under_ptl (v6.0 presets) the page, mapped once (PageAnonExclusive,
 *    6c287605fd56), is first cleared with ptep_clear_flush: one more
 *    flush_tlb_page - x86 an IPI round and 2 INVLPGs, arm64 a VALE1IS;
 *  - migrate_flush=under_ptl (60bae7370896): whenever the PTE holds the
 *    migration entry and the migrating task no longer holds the PTE lock,
 *    no CPU caches the old page; after_unlock: there is such a moment;
 *  - migrate_dirty=copy (fd35ca3d12cc): a dirty PTE marks the page (and
 *    so the new page) dirty; drop: it does not, and for a lazyfree page
 *    written after MADV_FREE the oracle reports I3 at the copy; a clean
 *    PTE dirties nothing under either value;
 *  - a write fault on the migration entry waits for the migration and then
 *    writes the new page;
 *  - MADV_DONTNEED that meets the migration entry clears it with no flush
 *    and frees no page (the migration holds it); migrate_vma_finalize then
 *    maps nothing and releases both pages;
 *  - the I3 point by hand: a write through a writable entry into a page
 *    the driver has copied is reported;
 *  - a shared or file mapping, or a range with no mapping, is refused (-1).
 */
#include "test_util.h"

static const int64_t no_kpti[] = {P_kpti, 0, -1};

struct mig {
	uint64_t a;
	bool free_first;		/* MADV_FREE, then write again */
	volatile int cached;
	volatile bool done;
	int64_t ret;
	uint32_t old_frame;
	pte_t old_pte, new_pte;
	uint8_t new_flags;
	uint32_t new_refs;
	uint32_t old_state;
	struct tlbsim_metrics m0, m1;
	/* the observer */
	bool window;			/* migration entry, PTL dropped, old page cached */
	bool saw_entry;
};

static void cacher_body(struct sim *s, struct sim_thread *t)
{
	struct mig *x = t->arg;
	TSIM_WAIT_UNTIL(s, x->a);
	assert_int_equal(user_access(s, x->a, false), 0);	/* CPU 1 caches the page */
	x->cached = 1;
	TSIM_WAIT_UNTIL(s, x->done);		/* stay on the CPU: not lazy */
}

static void driver_body(struct sim *s, struct sim_thread *t)
{
	struct mig *x = t->arg;
	struct mm_struct *mm = task_of(t)->mm;
	uint64_t ps = hw_of(s)->geom.page_size;
	uint64_t a = tsim_map_written(s, 1);
	if (x->free_first) {
		assert_int_equal(sys_madvise_free(s, a, ps), 0);
		assert_int_equal(user_access(s, a, true), 0);	/* dirty PTE, clean page */
	}
	x->old_pte = *pte_lookup(s, mm, a);
	x->old_frame = pte_pfn(x->old_pte);
	x->a = a;
	TSIM_WAIT_UNTIL(s, x->cached);
	x->m0 = s->m;
	x->ret = sys_migrate_vma(s, a, ps);
	x->m1 = s->m;
	x->new_pte = *pte_lookup(s, mm, a);
	const struct frame *nf = frame_of(hw_of(s), pte_pfn(x->new_pte));
	x->new_flags = nf->pgflags;
	x->new_refs = nf->refcount;
	x->old_state = frame_of(hw_of(s), x->old_frame)->state;
	x->done = true;
}

/* on CPU 2: watch the window between the collect's unlock and its flush */
static void observer_body(struct sim *s, struct sim_thread *t)
{
	struct mig *x = t->arg;
	TSIM_WAIT_UNTIL(s, x->a);
	struct mm_struct *mm = task_of(t)->mm;
	struct task *drv = task_of(s->threads[0]);
	while (!x->done) {
		pte_t *p = pte_lookup(s, mm, x->a);
		if (p && is_migration_pte(*p)) {
			x->saw_entry = true;
			if (!drv->ptl_table && tsim_leaf_of(s, 1, x->a))
				x->window = true;
		}
		sim_step(s, YP_USER, 10);
	}
}

static struct sim *run_mig(const char *profile, struct mig *x, enum migrate_flush_policy f,
			   enum migrate_dirty_policy d, bool observe)
{
	struct sim *s = tsim_new_p(profile, 3, NESTED_FULLMM, no_kpti);
	machine_of(s)->policy.migrate_flush = f;
	machine_of(s)->policy.migrate_dirty = d;
	tsim_spawn(s, driver_body, x, 0);
	tsim_spawn(s, cacher_body, x, 1);
	if (observe)
		tsim_spawn(s, observer_body, x, 2);
	tsim_run(s);
	return s;
}

static void assert_migrated(struct sim *s, const struct mig *x)
{
	assert_int_equal(x->ret, 1);
	assert_true(pte_present(x->new_pte));
	assert_int_not_equal(pte_pfn(x->new_pte), x->old_frame);
	assert_int_equal(x->new_pte & PTE_WRITE, x->old_pte & PTE_WRITE);
	assert_true(fmt_pte_clean(hw_of(s)->fmt, x->new_pte));
	assert_int_equal(x->old_state, FRAME_FREE);
	assert_int_equal(x->new_refs, 1);
	assert_false(x->new_flags & PG_LOCKED);
	assert_true(x->new_flags & PG_ANON);
}

static void test_migrate_emits(void **state)
{
	(void)state;
	for (int f = 0; f < MIGRATE_FLUSH_COUNT; f++) {
		struct mig x = {0};
		struct sim *s = run_mig("x86-24", &x, (enum migrate_flush_policy)f,
					MIGRATE_DIRTY_COPY, false);
		assert_migrated(s, &x);
		/* under_ptl (v6.0+): the exclusive page's ptep_clear_flush
		 * first (6c287605fd56), then the range flush: two rounds */
		const uint64_t rounds = f == MIGRATE_FLUSH_UNDER_PTL ? 2 : 1;
		assert_int_equal(x.m1.ipi_sent - x.m0.ipi_sent, rounds);
		assert_int_equal(x.m1.flush_local_pages - x.m0.flush_local_pages, 2 * rounds);
		assert_int_equal(x.m1.flush_full - x.m0.flush_full, 0);
		const struct tc_entry *e = tsim_leaf_of(s, 1, x.a);
		assert_true(!e || e->frame != x.old_frame);	/* the flush reached CPU 1 */
		assert_int_equal(s->m.violations, 0);
		tsim_free(s);

		struct mig y = {0};
		s = run_mig("arm64-4k", &y, (enum migrate_flush_policy)f, MIGRATE_DIRTY_COPY, false);
		assert_migrated(s, &y);
		assert_int_equal(y.m1.tlbi.vae1is - y.m0.tlbi.vae1is, 1);
		/* flush_tlb_page: last level */
		assert_int_equal(y.m1.tlbi.vale1is - y.m0.tlbi.vale1is, rounds - 1);
		assert_int_equal(y.m1.ipi_sent - y.m0.ipi_sent, 0);
		assert_int_equal(s->m.violations, 0);
		tsim_free(s);
	}
}

static void test_flush_under_ptl(void **state)
{
	(void)state;
	const char *profiles[] = {"x86-24", "arm64-4k"};
	for (int p = 0; p < 2; p++) {
		struct mig x = {0};
		struct sim *s = run_mig(profiles[p], &x, MIGRATE_FLUSH_UNDER_PTL,
					MIGRATE_DIRTY_COPY, true);
		assert_migrated(s, &x);
		assert_true(x.saw_entry);
		assert_false(x.window);
		tsim_free(s);

		struct mig y = {0};
		s = run_mig(profiles[p], &y, MIGRATE_FLUSH_AFTER_UNLOCK, MIGRATE_DIRTY_COPY, true);
		assert_migrated(s, &y);
		assert_true(y.saw_entry);
		assert_true(y.window);
		tsim_free(s);
	}
}

static void test_dirty_bit(void **state)
{
	(void)state;
	const char *profiles[] = {"x86-24", "arm64-4k"};
	for (int p = 0; p < 2; p++) {
		for (int d = 0; d < MIGRATE_DIRTY_COUNT; d++) {
			/* a dirty PTE of a lazyfree page */
			struct mig x = {.free_first = true};
			struct sim *s = run_mig(profiles[p], &x, MIGRATE_FLUSH_UNDER_PTL,
						(enum migrate_dirty_policy)d, false);
			assert_false(fmt_pte_clean(hw_of(s)->fmt, x.old_pte));
			assert_int_equal(x.ret, 1);
			assert_true(x.new_flags & PG_LAZYFREE);
			if (d == MIGRATE_DIRTY_COPY) {
				assert_true(x.new_flags & PG_DIRTY);
				assert_int_equal(s->m.violations, 0);
			} else {
				assert_false(x.new_flags & PG_DIRTY);
				assert_true(s->m.violations > 0);
				assert_int_equal(tsim_violation(s)->kind, INV_I3);
				assert_int_equal(tsim_violation(s)->frame, x.old_frame);
			}
			tsim_free(s);
		}
	}
}

/* a write fault on the migration entry */
struct waiter {
	uint64_t a;
	volatile bool started, done;
	int ret;
	uint32_t old_frame, frame_after;
	uint64_t faults;
};

static void waiter_driver(struct sim *s, struct sim_thread *t)
{
	struct waiter *x = t->arg;
	uint64_t ps = hw_of(s)->geom.page_size;
	uint64_t a = tsim_map_written(s, 1);
	x->old_frame = tsim_pte_frame(s, task_of(t)->mm, a);
	x->a = a;
	TSIM_WAIT_UNTIL(s, x->started);
	assert_int_equal(sys_migrate_vma(s, a, ps), 1);
	TSIM_WAIT_UNTIL(s, x->done);
}

static void waiter_writer(struct sim *s, struct sim_thread *t)
{
	struct waiter *x = t->arg;
	TSIM_WAIT_UNTIL(s, x->a);
	struct mm_struct *mm = task_of(t)->mm;
	x->started = true;
	for (;;) {	/* wait for the migration entry, without caching the page */
		pte_t *p = pte_lookup(s, mm, x->a);
		if (p && is_migration_pte(*p))
			break;
		sim_step(s, YP_USER, 10);
	}
	uint64_t f0 = s->m.page_faults;
	x->ret = user_access(s, x->a, true);
	x->faults = s->m.page_faults - f0;
	x->frame_after = tsim_pte_frame(s, mm, x->a);
	x->done = true;
}

static void test_fault_waits(void **state)
{
	(void)state;
	struct waiter x = {0};
	struct sim *s = tsim_new_p("x86-24", 2, NESTED_FULLMM, no_kpti);
	tsim_spawn(s, waiter_driver, &x, 0);
	tsim_spawn(s, waiter_writer, &x, 1);
	tsim_run(s);
	assert_int_equal(x.ret, 0);
	assert_true(x.faults >= 1);
	assert_int_not_equal(x.frame_after, x.old_frame);
	assert_int_not_equal(x.frame_after, NO_FRAME);
	assert_int_equal(s->m.violations, 0);
	tsim_free(s);
}

/* MADV_DONTNEED meets the migration entry (under_ptl: after the collect's
 * flush and unlock) */
struct zapper {
	uint64_t a;
	volatile bool done_zap, done_mig;
	int64_t ret;
	uint32_t old_frame;
	uint64_t zap_ipis, zap_local;
	uint32_t state_during;		/* the old frame while the migration holds it */
	pte_t pte_end;
	uint32_t state_end;
};

static void zapper_driver(struct sim *s, struct sim_thread *t)
{
	struct zapper *x = t->arg;
	uint64_t ps = hw_of(s)->geom.page_size;
	uint64_t a = tsim_map_written(s, 1);
	x->old_frame = tsim_pte_frame(s, task_of(t)->mm, a);
	x->a = a;
	x->ret = sys_migrate_vma(s, a, ps);
	pte_t *p = pte_lookup(s, task_of(t)->mm, a);
	x->pte_end = p ? *p : 0;
	x->state_end = frame_of(hw_of(s), x->old_frame)->state;
	x->done_mig = true;
	TSIM_WAIT_UNTIL(s, x->done_zap);
}

static void zapper_zap(struct sim *s, struct sim_thread *t)
{
	struct zapper *x = t->arg;
	TSIM_WAIT_UNTIL(s, x->a);
	struct mm_struct *mm = task_of(t)->mm;
	struct task *drv = task_of(s->threads[0]);
	for (;;) {	/* the entry in place, the collect's flush and unlock done */
		pte_t *p = pte_lookup(s, mm, x->a);
		if (p && is_migration_pte(*p) && !drv->ptl_table)
			break;
		sim_step(s, YP_USER, 1);
	}
	uint64_t ipi0 = s->m.ipi_sent, loc0 = s->m.flush_local_pages;
	assert_int_equal(sys_madvise_dontneed(s, x->a, hw_of(s)->geom.page_size), 0);
	x->zap_ipis = s->m.ipi_sent - ipi0;
	x->zap_local = s->m.flush_local_pages - loc0;
	x->state_during = frame_of(hw_of(s), x->old_frame)->state;
	x->done_zap = true;
	TSIM_WAIT_UNTIL(s, x->done_mig);
}

static void test_zap_meets_entry(void **state)
{
	(void)state;
	struct zapper x = {0};
	struct sim *s = tsim_new_p("x86-24", 2, NESTED_FULLMM, no_kpti);
	tsim_spawn(s, zapper_driver, &x, 0);
	tsim_spawn(s, zapper_zap, &x, 1);
	tsim_run(s);
	/* the zap cleared the migration entry: nothing to flush, no page to
	 * free (the migration holds it); finalize found no entry, mapped
	 * nothing and released both pages */
	assert_int_equal(x.ret, 1);
	assert_int_equal(x.zap_ipis, 0);
	assert_int_equal(x.zap_local, 0);
	assert_int_equal(x.state_during, FRAME_DATA);
	assert_true(pte_none(x.pte_end));
	assert_int_equal(x.state_end, FRAME_FREE);
	assert_int_equal(s->m.violations, 0);
	tsim_free(s);
}

/* the oracle's rule by hand: a write into a copied page through a cached
 * entry that no PTE grants any more (the PTE is a migration entry) */
struct byhand {
	uint64_t a;
	bool copy;
	volatile bool cached, copied;
	uint32_t f;
};

static void byhand_main(struct sim *s, struct sim_thread *t)
{
	struct byhand *x = t->arg;
	uint64_t a = tsim_map_written(s, 1);
	x->f = tsim_pte_frame(s, task_of(t)->mm, a);
	x->a = a;
	TSIM_WAIT_UNTIL(s, x->cached);
	struct kernel *k = kernel_of(s);
	if (x->copy) {
		/* as migrate_vma_collect_pmd leaves it: a migration entry (its
		 * flush skipped, so CPU 1 keeps its writable entry), then the
		 * driver's copy */
		pte_t *ptep = pte_lookup(s, task_of(t)->mm, a);
		*ptep = pfn_pte(x->f, PTE_MIGRATION | (*ptep & PTE_WRITE));
		k->hooks->migrate_copied(k->hooks_ctx, a, x->f, x->f);
	}
	x->copied = true;
}

static void byhand_writer(struct sim *s, struct sim_thread *t)
{
	struct byhand *x = t->arg;
	TSIM_WAIT_UNTIL(s, x->a);
	assert_int_equal(user_access(s, x->a, true), 0);
	x->cached = true;
	TSIM_WAIT_UNTIL(s, x->copied);
	assert_int_equal(user_access(s, x->a, true), 0);
}

static void test_i3_after_copy(void **state)
{
	(void)state;
	for (int c = 0; c < 2; c++) {
		struct byhand x = {.copy = c};
		struct sim *s = tsim_new_p("x86-24", 2, NESTED_FULLMM, no_kpti);
		tsim_spawn(s, byhand_main, &x, 0);
		tsim_spawn(s, byhand_writer, &x, 1);
		tsim_run(s);
		if (c) {
			assert_true(s->m.violations > 0);
			assert_int_equal(tsim_violation(s)->kind, INV_I3);
			assert_int_equal(tsim_violation(s)->cpu, 1);
			assert_int_equal(tsim_violation(s)->frame, x.f);
		} else {
			assert_int_equal(s->m.violations, 0);
		}
		tsim_free(s);
	}
}

static void refused_body(struct sim *s, struct sim_thread *t)
{
	int64_t *r = t->arg;
	uint64_t ps = hw_of(s)->geom.page_size;
	uint64_t sh = sys_mmap(s, 0, ps, TLBSIM_MAP_SHARED);
	assert_int_equal(user_access(s, sh, true), 0);
	r[0] = sys_migrate_vma(s, sh, ps);
	r[1] = sys_migrate_vma(s, 0x200000000ull, ps);
	uint64_t pv = sys_mmap(s, 0, 2 * ps, TLBSIM_MAP_PRIVATE);
	r[2] = sys_migrate_vma(s, pv, 2 * ps);		/* nothing present: 0 pages */
	r[3] = sys_migrate_vma(s, pv, 0);
}

static void test_refused(void **state)
{
	(void)state;
	int64_t r[4] = {9, 9, 9, 9};
	struct sim *s = tsim_new_p("x86-24", 1, NESTED_FULLMM, no_kpti);
	tsim_spawn(s, refused_body, r, 0);
	tsim_run(s);
	assert_int_equal(r[0], -1);
	assert_int_equal(r[1], -1);
	assert_int_equal(r[2], 0);
	assert_int_equal(r[3], -1);
	tsim_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_migrate_emits),
		cmocka_unit_test(test_flush_under_ptl),
		cmocka_unit_test(test_dirty_bit),
		cmocka_unit_test(test_fault_waits),
		cmocka_unit_test(test_zap_meets_entry),
		cmocka_unit_test(test_i3_after_copy),
		cmocka_unit_test(test_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
