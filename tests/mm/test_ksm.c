/*
 * test_ksm.c - KSM's merge of two pages (src/mm/ksm.c, mm/ksm.c v5.1 + the
 * knob ksm_wp).
 *
 * Rules checked:
 *  - write_protect_page() of a PTE that is already read-only and clean:
 *    ksm_wp=pte never flushes it; ksm_wp=pending (b3a81d0841a9) flushes it
 *    only while mm_tlb_flush_pending(mm); ksm_wp=exclusive (6c287605fd56)
 *    flushes it for an anonymous page mapped only there and PageAnonExclusive
 *    (not one fork shared and no write fault has reused since). A writable or
 *    dirty PTE is flushed under every value;
 *  - what each value emits for a merge whose first page is read-only and
 *    clean and whose second is writable and dirty, with the mm running on
 *    two CPUs: x86 one IPI and an INVLPG on each CPU per flush_tlb_page, arm64
 *    one TLBI VALE1IS - 2 flushes (the second page's write_protect_page
 *    and replace_page) when the first page's is skipped, 3 otherwise;
 *  - after the merge both addresses map the first page read-only and
 *    clean; it is a KSM page (PageKsm, PageDirty) with two references; the
 *    second page is freed; a write to either address copies (do_wp_page
 *    never reuses a KSM page);
 *  - the I3 point: a CPU that kept a writable entry for the first page
 *    (the flush skipped) and writes it after the comparison is reported;
 *    when the flush was done its write faults, copies, and nothing is
 *    reported; a stale write between the comparison and replace_page is
 *    reported when replace_page commits, and not at all when the merge is
 *    abandoned;
 *  - write_protect_page() and replace_page() take the PTE table's lock
 *    (page_vma_mapped_walk, pte_offset_map_lock): while a zap or mprotect
 *    holds it, ksmd waits and leaves the PTE as it is;
 *  - a merge whose second page is locked gives up and breaks the KSM page
 *    again (break_cow: the first address gets a private writable copy);
 *    the same page twice, or an address with no anonymous page, is -1.
 */
#include "test_util.h"

static const int64_t no_kpti[] = {P_kpti, 0, -1};


struct merge {
	bool ro_clean;			/* make a's PTE read-only and clean by hand first */
	bool duped;			/* a's page as a fork shared it (PG_DUPED) */
	int pending;			/* mm->tlb_flush_pending raised by hand meanwhile */
	uint64_t a, b;
	volatile int touched;
	volatile bool merged, done;
	int ret;
	struct tlbsim_metrics m0, m1;
	pte_t pte_a, pte_b, pte_a_after;
	uint32_t fa, fb;		/* the frames before the merge */
	uint8_t flags_a;
	uint32_t refs_a, state_b;
	bool stale;			/* CPU 1 still caches a writable entry for a */
	int write_after;
};

static void writer_body(struct sim *s, struct sim_thread *t)
{
	struct merge *x = t->arg;
	TSIM_WAIT_UNTIL(s, x->a);
	assert_int_equal(user_access(s, x->a, true), 0);	/* cached writable+dirty */
	x->touched = 1;
	TSIM_WAIT_UNTIL(s, x->merged);		/* stay on the CPU: not lazy */
	x->write_after = user_access(s, x->a, true);
	x->pte_a_after = *pte_lookup(s, task_of(t)->mm, x->a);
	x->done = true;
}

static void ksmd_body(struct sim *s, struct sim_thread *t)
{
	struct merge *x = t->arg;
	struct mm_struct *mm = task_of(t)->mm;
	struct hw *hw = hw_of(s);
	uint64_t ps = hw->geom.page_size;
	uint64_t a = sys_mmap(s, 0, 2 * ps, TLBSIM_MAP_PRIVATE);
	x->b = a + ps;
	assert_int_equal(user_access(s, x->b, true), 0);
	x->a = a;
	TSIM_WAIT_UNTIL(s, x->touched);
	pte_t *pa = pte_lookup(s, mm, a);
	x->fa = pte_pfn(*pa);
	x->fb = pte_pfn(*pte_lookup(s, mm, x->b));
	if (x->duped)	/* fork shared it and the child is gone: not exclusive */
		frame_of(hw, x->fa)->pgflags |= PG_DUPED;
	if (x->ro_clean)	/* what MADV_FREE and a soft-dirty clear_refs leave */
		*pa = fmt_pte_mkclean(hw->fmt, *pa & ~(PTE_WRITE | PTE_YOUNG));
	mm->tlb_flush_pending += x->pending;
	x->m0 = s->m;
	x->ret = ksm_merge(s, a, x->b);
	x->m1 = s->m;
	mm->tlb_flush_pending -= x->pending;
	x->pte_a = *pte_lookup(s, mm, a);
	x->pte_b = *pte_lookup(s, mm, x->b);
	x->flags_a = frame_of(hw, x->fa)->pgflags;
	x->refs_a = frame_of(hw, x->fa)->refcount;
	x->state_b = frame_of(hw, x->fb)->state;
	x->stale = tsim_leaf_writable(s, 1, a);
	x->merged = true;
	TSIM_WAIT_UNTIL(s, x->done);
}

static struct sim *run_merge(const char *profile, struct merge *x, enum ksm_wp_policy p)
{
	struct sim *s = tsim_new_p(profile, 2, NESTED_FULLMM, no_kpti);
	machine_of(s)->policy.ksm_wp = p;
	tsim_spawn(s, ksmd_body, x, 0);
	tsim_spawn(s, writer_body, x, 1);
	tsim_run(s);
	return s;
}

/* the merged state: both addresses map page a read-only and clean */
static void assert_merged(struct sim *s, const struct merge *x)
{
	const struct pt_format *fmt = hw_of(s)->fmt;
	assert_int_equal(x->ret, 0);
	assert_int_equal(pte_pfn(x->pte_a), x->fa);
	assert_int_equal(pte_pfn(x->pte_b), x->fa);
	assert_false(x->pte_a & PTE_WRITE);
	assert_false(x->pte_b & PTE_WRITE);
	assert_true(fmt_pte_clean(fmt, x->pte_a));
	assert_true(fmt_pte_clean(fmt, x->pte_b));
	assert_true(x->flags_a & PG_KSM);
	assert_true(x->flags_a & PG_DIRTY);
	assert_false(x->flags_a & PG_LOCKED);
	assert_int_equal(x->refs_a, 2);			/* two mappings, ksmd's reference dropped */
	assert_int_equal(x->state_b, FRAME_FREE);	/* replace_page's put_page */
}

static void test_write_protect_page_x86(void **state)
{
	(void)state;
	struct {
		enum ksm_wp_policy p;
		bool ro_clean;
		int pending;
		uint64_t flushes;	/* flush_tlb_page calls */
		bool stale;
		bool duped;
	} cases[] = {
		{KSM_WP_PTE, true, 0, 2, true, false},
		{KSM_WP_PTE, true, 1, 2, true, false},		/* the bug: pending ignored */
		{KSM_WP_PENDING, true, 0, 2, true, false},
		{KSM_WP_PENDING, true, 1, 3, false, false},	/* b3a81d0841a9 */
		{KSM_WP_EXCLUSIVE, true, 0, 3, false, false},	/* 6c287605fd56 */
		{KSM_WP_EXCLUSIVE, true, 1, 3, false, false},
		/* one reference, but fork shared it: not PageAnonExclusive */
		{KSM_WP_EXCLUSIVE, true, 0, 2, true, true},
		{KSM_WP_PTE, false, 0, 3, false, false},	/* writable and dirty: always */
		{KSM_WP_PENDING, false, 0, 3, false, false},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct merge x = {.ro_clean = cases[i].ro_clean, .pending = cases[i].pending,
				  .duped = cases[i].duped};
		struct sim *s = run_merge("x86-24", &x, cases[i].p);
		assert_merged(s, &x);
		/* each flush_tlb_page: one IPI to the writer's CPU and an
		 * INVLPG of the page on each of the two CPUs (flush_tlb_func) */
		assert_int_equal(x.m1.ipi_sent - x.m0.ipi_sent, cases[i].flushes);
		assert_int_equal(x.m1.flush_local_pages - x.m0.flush_local_pages,
				 2 * cases[i].flushes);
		assert_int_equal(x.m1.flush_full - x.m0.flush_full, 0);
		assert_int_equal(x.stale, cases[i].stale);
		assert_int_equal(x.write_after, 0);
		if (cases[i].stale) {
			/* the write went into the compared page through the
			 * stale entry, no fault: the I3 point */
			assert_true(s->m.violations > 0);
			assert_int_equal(tsim_violation(s)->kind, INV_I3);
			assert_int_equal(tsim_violation(s)->cpu, 1);
			assert_int_equal(pte_pfn(x.pte_a_after), x.fa);
		} else {
			/* the write faulted and copied the KSM page */
			assert_int_equal(s->m.violations, 0);
			assert_int_not_equal(pte_pfn(x.pte_a_after), x.fa);
			assert_true(x.pte_a_after & PTE_WRITE);
		}
		tsim_free(s);
	}
}

static void test_write_protect_page_arm64(void **state)
{
	(void)state;
	struct {
		enum ksm_wp_policy p;
		int pending;
		uint64_t vale1is;
	} cases[] = {
		{KSM_WP_PTE, 1, 2},
		{KSM_WP_PENDING, 0, 2},
		{KSM_WP_PENDING, 1, 3},
		{KSM_WP_EXCLUSIVE, 0, 3},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct merge x = {.ro_clean = true, .pending = cases[i].pending};
		struct sim *s = run_merge("arm64-4k", &x, cases[i].p);
		assert_merged(s, &x);
		assert_int_equal(x.m1.tlbi.vale1is - x.m0.tlbi.vale1is, cases[i].vale1is);
		assert_int_equal(x.m1.ipi_sent - x.m0.ipi_sent, 0);
		assert_int_equal(x.stale, cases[i].vale1is == 2);
		tsim_free(s);
	}
}

/* ---- the oracle's rule by hand: a stale write between the comparison and
 * replace_page is lost only if the merge is done ---- */

struct byhand {
	bool commit;			/* call ksm_replaced after the write */
	uint64_t a;
	volatile int step;		/* 1: writer cached; 2: compared; 3: written */
	uint64_t violations_before_commit;
};

static void byhand_writer(struct sim *s, struct sim_thread *t)
{
	struct byhand *x = t->arg;
	TSIM_WAIT_UNTIL(s, x->a);
	assert_int_equal(user_access(s, x->a, true), 0);
	x->step = 1;
	TSIM_WAIT_UNTIL(s, x->step >= 2);
	assert_int_equal(user_access(s, x->a, true), 0);	/* through the stale entry */
	x->step = 3;
}

static void byhand_ksmd(struct sim *s, struct sim_thread *t)
{
	struct byhand *x = t->arg;
	struct mm_struct *mm = task_of(t)->mm;
	struct kernel *k = kernel_of(s);
	uint64_t ps = hw_of(s)->geom.page_size;
	uint64_t a = sys_mmap(s, 0, 2 * ps, TLBSIM_MAP_PRIVATE);
	assert_int_equal(user_access(s, a + ps, true), 0);
	x->a = a;
	TSIM_WAIT_UNTIL(s, x->step >= 1);
	pte_t *pa = pte_lookup(s, mm, a);
	*pa = fmt_pte_mkclean(hw_of(s)->fmt, *pa & ~PTE_WRITE);	/* no flush */
	uint32_t fa = pte_pfn(*pa), fb = pte_pfn(*pte_lookup(s, mm, a + ps));
	k->hooks->ksm_compared(k->hooks_ctx, fb);
	k->hooks->ksm_compared(k->hooks_ctx, fa);
	x->step = 2;
	TSIM_WAIT_UNTIL(s, x->step >= 3);
	x->violations_before_commit = s->m.violations;
	if (x->commit)
		k->hooks->ksm_replaced(k->hooks_ctx, fb, fa);
}

static void test_i3_only_when_merged(void **state)
{
	(void)state;
	for (int commit = 0; commit < 2; commit++) {
		struct byhand x = {.commit = commit};
		struct sim *s = tsim_new_p("x86-24", 2, NESTED_FULLMM, no_kpti);
		tsim_spawn(s, byhand_ksmd, &x, 0);
		tsim_spawn(s, byhand_writer, &x, 1);
		tsim_run(s);
		assert_int_equal(x.violations_before_commit, 0);
		if (commit) {
			assert_true(s->m.violations > 0);
			assert_int_equal(tsim_violation(s)->kind, INV_I3);
			assert_int_equal(tsim_violation(s)->cpu, 1);
			assert_int_equal(tsim_violation(s)->va, x.a);
		} else {
			assert_int_equal(s->m.violations, 0);	/* abandoned: nothing lost */
		}
		tsim_free(s);
	}
}

/* ---- a merge that fails: break_cow; bad arguments ---- */

struct fail {
	int ret_locked, ret_same, ret_none;
	uint32_t fa;
	pte_t pte_a;
	uint8_t flags_a_before_free;
};

static void fail_body(struct sim *s, struct sim_thread *t)
{
	struct fail *x = t->arg;
	struct mm_struct *mm = task_of(t)->mm;
	struct hw *hw = hw_of(s);
	uint64_t ps = hw->geom.page_size;
	uint64_t a = sys_mmap(s, 0, 3 * ps, TLBSIM_MAP_PRIVATE);
	assert_int_equal(user_access(s, a, true), 0);
	assert_int_equal(user_access(s, a + ps, true), 0);
	x->fa = pte_pfn(*pte_lookup(s, mm, a));
	uint32_t fb = pte_pfn(*pte_lookup(s, mm, a + ps));
	frame_of(hw, fb)->pgflags |= PG_LOCKED;		/* someone holds b's page lock */
	x->ret_locked = ksm_merge(s, a, a + ps);
	frame_of(hw, fb)->pgflags &= (uint8_t)~PG_LOCKED;
	x->pte_a = *pte_lookup(s, mm, a);
	x->ret_same = ksm_merge(s, a, a);
	x->ret_none = ksm_merge(s, a + ps, a + 2 * ps);	/* nothing at a + 2 pages */
}

static void test_merge_fails(void **state)
{
	(void)state;
	struct fail x = {0};
	struct sim *s = tsim_new_p("x86-24", 2, NESTED_FULLMM, no_kpti);
	tsim_spawn(s, fail_body, &x, 0);
	tsim_run(s);
	assert_int_equal(x.ret_locked, -1);
	/* break_cow: a has a private writable copy; the KSM page is gone */
	assert_int_not_equal(pte_pfn(x.pte_a), x.fa);
	assert_true(x.pte_a & PTE_WRITE);
	assert_int_equal(frame_of(hw_of(s), x.fa)->state, FRAME_FREE);
	assert_int_equal(x.ret_same, -1);
	assert_int_equal(x.ret_none, -1);
	assert_int_equal(s->m.violations, 0);
	tsim_free(s);
}

/* ---- the PTE lock ---- */

struct ptl_merge {
	uint64_t a, b;
	volatile bool locked;
	bool writable_while_held;
	uint64_t unlock_at, merged_at;
	int ret;
	pte_t pte_a;
};

static void ptl_holder_body(struct sim *s, struct sim_thread *t)
{
	struct ptl_merge *x = t->arg;
	struct mm_struct *mm = task_of(t)->mm;
	TSIM_WAIT_UNTIL(s, x->a);
	ptl_lock(s, pte_table_of(s, mm, x->a));	/* as change_pte_range holds it */
	x->locked = true;
	sim_sleep_for(s, 50000);			/* 50 us inside the lock */
	x->writable_while_held = (*pte_lookup(s, mm, x->a) & PTE_WRITE) != 0;
	x->unlock_at = s->now;
	ptl_unlock(s);
}

static void ptl_ksmd_body(struct sim *s, struct sim_thread *t)
{
	struct ptl_merge *x = t->arg;
	struct mm_struct *mm = task_of(t)->mm;
	uint64_t ps = hw_of(s)->geom.page_size;
	uint64_t a = sys_mmap(s, 0, 2 * ps, TLBSIM_MAP_PRIVATE);
	assert_int_equal(user_access(s, a, true), 0);
	assert_int_equal(user_access(s, a + ps, true), 0);
	x->b = a + ps;
	x->a = a;
	TSIM_WAIT_UNTIL(s, x->locked);
	x->ret = ksm_merge(s, a, x->b);
	x->merged_at = s->now;
	x->pte_a = *pte_lookup(s, mm, a);
}

static void test_merge_waits_for_ptl(void **state)
{
	(void)state;
	struct ptl_merge x = {0};
	struct sim *s = tsim_new_p("x86-24", 2, NESTED_FULLMM, no_kpti);
	tsim_spawn(s, ptl_ksmd_body, &x, 0);
	tsim_spawn(s, ptl_holder_body, &x, 1);
	tsim_run(s);
	assert_int_equal(x.ret, 0);
	assert_true(x.writable_while_held);	/* ksmd did not write-protect it meanwhile */
	assert_true(x.merged_at >= x.unlock_at);
	assert_false(x.pte_a & PTE_WRITE);
	assert_int_equal(s->m.violations, 0);
	tsim_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_write_protect_page_x86),
		cmocka_unit_test(test_write_protect_page_arm64),
		cmocka_unit_test(test_i3_only_when_merged),
		cmocka_unit_test(test_merge_fails),
		cmocka_unit_test(test_merge_waits_for_ptl),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
