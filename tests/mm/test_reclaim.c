/*
 * test_reclaim.c - reclaim with batched unmap flushes and the lazyfree
 * discard (src/mm/rmap.c: mm/vmscan.c shrink_page_list, mm/rmap.c
 * try_to_unmap_one / set_tlb_ubc_flush_pending / try_to_unmap_flush /
 * flush_tlb_batched_pending, v5.1 with 3ea277194daa and the arm64 v6.5
 * batch).
 *
 * Rules checked:
 *  - a clean lazyfree page (MADV_FREE, not written since) is discarded: its
 *    PTE is cleared and the page freed; a page written after MADV_FREE is
 *    kept with its PTE put back and is swap-backed again; a page never
 *    MADV_FREEd is kept (no swap device); MADV_FREE leaves a page mapped
 *    more than once alone only when it has PG_dirty;
 *  - a batched (deferred) unmap leaves another CPU's TLB entry in place, and
 *    mm->tlb_flush_batched pending, until try_to_unmap_flush(); the page is
 *    freed only after that flush (x86 with another CPU in mm_cpumask; arm64
 *    with arm64_batch=flush_mm or dsb: the TLBI takes effect at the DSB);
 *    arm64_batch=none flushes each PTE at once (ptep_clear_flush);
 *  - mprotect and munmap with the check (ubc_check_* = on) flush the pending
 *    batch before they return: no CPU keeps the entry and the checker is
 *    silent; without it the entry survives the return and the checker
 *    reports I2;
 *  - flush_tlb_batched_pending: bool form clears the flag; generation form
 *    sets flushed = pending; nothing pending -> no flush;
 *  - a write through a stale dirty entry into a lazyfree page that a
 *    completed MADV_FREE judged clean and reclaim discarded is I3;
 *  - reclaim waits for the PTE table's lock held by another task, and
 *    clears the PTE only after the unlock.
 */
#include "test_util.h"

static const int64_t no_kpti[] = {P_kpti, 0, -1};


enum race { RACE_NONE, RACE_MPROTECT, RACE_MUNMAP };

struct rc {
	/* setup */
	bool madv_free;			/* MADV_FREE the page before reclaim */
	bool redirty;			/* and write it again */
	enum race race;			/* what main does between unmap and flush */
	bool plant_stale_dirty;		/* I3: a MADV_FREE whose flush was missed */
	bool helper_exits;		/* the helper exits after its access: CPU 1 lazy */
	/* shared with the helper */
	uint64_t a;
	volatile int touched;
	volatile bool write_now, wrote, done;
	int helper_write_ret;
	/* observed */
	uint32_t frame;
	pte_t pte_after_unmap;
	bool entry_after_unmap, entry_after_race, entry_after_flush;
	uint32_t nfreed;
	uint32_t batched_after_unmap;
	uint8_t state_after_unmap, state_after_flush;
	uint8_t pgflags_after;
	int race_ret;
	uint64_t flush_ipis;		/* IPIs sent by try_to_unmap_flush */
};

static void helper_body(struct sim *s, struct sim_thread *t)
{
	struct rc *x = t->arg;
	TSIM_WAIT_UNTIL(s, x->a);
	/* a write (dirty entry) when planting the stale dirty entry, else a
	 * read: this CPU caches the translation */
	assert_int_equal(user_access(s, x->a, x->plant_stale_dirty), 0);
	x->touched++;
	if (x->helper_exits)
		return;
	while (!x->done) {		/* stay on the CPU: in mm_cpumask, not lazy */
		if (x->write_now && !x->wrote) {
			x->helper_write_ret = user_access(s, x->a, true);
			x->wrote = true;
		}
		sim_step(s, YP_USER, 10);
	}
}

static void main_body(struct sim *s, struct sim_thread *t)
{
	struct rc *x = t->arg;
	struct mm_struct *mm = task_of(t)->mm;
	struct kernel *k = kernel_of(s);
	struct hw *hw = hw_of(s);
	uint64_t ps = hw->geom.page_size;
	uint64_t a = sys_mmap(s, 0, 2 * ps, TLBSIM_MAP_PRIVATE);
	assert_int_equal(user_access(s, a, true), 0);
	if (x->madv_free && !x->plant_stale_dirty)
		assert_int_equal(sys_madvise_free(s, a, ps), 0);
	if (x->redirty)
		assert_int_equal(user_access(s, a, true), 0);
	x->frame = tsim_pte_frame(s, mm, a);
	x->a = a;
	TSIM_WAIT_UNTIL(s, x->touched >= 1);
	if (x->plant_stale_dirty) {
		/* what a MADV_FREE whose flush another thread's gather swallowed
		 * leaves (99baac21e458): the PTE clean, the page lazyfree, the
		 * call completed - and CPU 1's writable+dirty entry in place */
		uint64_t cookie = k->hooks->lazyfree_seen(k->hooks_ctx, x->frame);
		pte_t *ptep = pte_lookup(s, mm, a);
		*ptep = fmt_pte_mkclean(hw->fmt, *ptep & ~PTE_YOUNG);
		frame_of(hw, x->frame)->pgflags |= PG_LAZYFREE;
		struct lazyfree_rec r = {.va = a, .frame = x->frame, .cookie = cookie};
		k->hooks->lazyfree_done(k->hooks_ctx, mm, &r, 1);
	}
	struct reclaim_list rl;
	shrink_page_list_unmap(s, mm, a, a + ps, &rl);
	x->nfreed = rl.n;
	pte_t *ptep = pte_lookup(s, mm, a);
	x->pte_after_unmap = ptep ? *ptep : 0;
	x->entry_after_unmap = tsim_leaf_of(s, 1, a) != NULL;
	x->batched_after_unmap = mm->tlb_flush_batched;
	x->state_after_unmap = frame_of(hw, x->frame)->state;
	if (x->plant_stale_dirty) {
		x->write_now = true;
		TSIM_WAIT_UNTIL(s, x->wrote);
	}
	if (x->race == RACE_MPROTECT)
		x->race_ret = sys_mprotect(s, a, ps, TLBSIM_PROT_READ);
	else if (x->race == RACE_MUNMAP)
		x->race_ret = sys_munmap(s, a, ps);
	x->entry_after_race = tsim_leaf_of(s, 1, a) != NULL;
	uint64_t ipi0 = s->m.ipi_sent;
	shrink_page_list_finish(s, &rl);
	x->flush_ipis = s->m.ipi_sent - ipi0;
	x->entry_after_flush = tsim_leaf_of(s, 1, a) != NULL;
	x->state_after_flush = frame_of(hw, x->frame)->state;
	x->pgflags_after = frame_of(hw, x->frame)->pgflags;
	x->done = true;
}

static struct sim *run_rc(const char *profile, struct rc *x, void (*setpol)(struct tlbsim_policy *))
{
	struct sim *s = tsim_new_p(profile, 2, NESTED_FULLMM, no_kpti);
	if (setpol)
		setpol(&machine_of(s)->policy);
	tsim_spawn(s, main_body, x, 0);
	tsim_spawn(s, helper_body, x, 1);
	tsim_run(s);
	return s;
}

/* ---- the lazyfree discard and what is kept ---- */

static void check_discard_rules(const char *profile)
{
	/* clean lazyfree: discarded, PTE cleared, freed after the flush */
	struct rc x = {.madv_free = true};
	struct sim *s = run_rc(profile, &x, NULL);
	assert_int_equal(x.nfreed, 1);
	assert_true(pte_none(x.pte_after_unmap));
	assert_int_equal(x.state_after_unmap, FRAME_DATA);
	assert_int_equal(x.state_after_flush, FRAME_FREE);
	assert_int_equal(s->m.violations, 0);
	tsim_free(s);

	/* written after MADV_FREE: kept, the PTE back (same frame, dirty),
	 * swap-backed again */
	struct rc y = {.madv_free = true, .redirty = true};
	s = run_rc(profile, &y, NULL);
	assert_int_equal(y.nfreed, 0);
	assert_true(pte_present(y.pte_after_unmap));
	assert_int_equal(pte_pfn(y.pte_after_unmap), y.frame);
	assert_false(fmt_pte_clean(hw_of(s)->fmt, y.pte_after_unmap));
	assert_int_equal(y.state_after_flush, FRAME_DATA);
	assert_false(y.pgflags_after & PG_LAZYFREE);
	tsim_free(s);

	/* never MADV_FREEd: swap-backed, no swap device: untouched */
	struct rc z = {0};
	s = run_rc(profile, &z, NULL);
	assert_int_equal(z.nfreed, 0);
	assert_true(pte_present(z.pte_after_unmap));
	assert_int_equal(pte_pfn(z.pte_after_unmap), z.frame);
	assert_true(z.entry_after_flush);
	assert_int_equal(z.batched_after_unmap, 0);
	tsim_free(s);
}

static void test_discard_x86(void **state)
{
	(void)state;
	check_discard_rules("x86-24");
}

static void test_discard_arm64(void **state)
{
	(void)state;
	check_discard_rules("arm64-4k");
}

/* ---- the deferred flush ---- */

static void check_deferred(const char *profile, void (*setpol)(struct tlbsim_policy *),
			   bool deferred)
{
	struct rc x = {.madv_free = true};
	struct sim *s = run_rc(profile, &x, setpol);
	assert_true(pte_none(x.pte_after_unmap));
	/* deferred: CPU 1 still holds the entry, the page is not freed, the
	 * mm is marked; else the entry went with ptep_clear_flush */
	assert_int_equal(x.entry_after_unmap, deferred);
	assert_int_equal(x.batched_after_unmap != 0, deferred);
	assert_int_equal(x.state_after_unmap, FRAME_DATA);
	/* after try_to_unmap_flush the entry is gone and the page freed */
	assert_false(x.entry_after_flush);
	assert_int_equal(x.state_after_flush, FRAME_FREE);
	assert_int_equal(s->m.violations, 0);
	tsim_free(s);
}

static void pol_arm64_dsb(struct tlbsim_policy *p)
{
	p->arm64_batch = ARM64_BATCH_DSB;
}

static void pol_arm64_none(struct tlbsim_policy *p)
{
	p->arm64_batch = ARM64_BATCH_NONE;
}

static void test_deferred_x86(void **state)
{
	(void)state;
	check_deferred("x86-24", NULL, true);
}

static void pol_range_freed(struct tlbsim_policy *p)
{
	p->x86_range_freed = X86_RANGE_FREED_TRUE;
}

/* Rule (arch/x86/mm/tlb.c arch_tlbbatch_flush, v4.20..v6.x): the batch is
 * one full flush of no mm (full_flush_tlb_info) that frees no tables, so a
 * lazy CPU is not IPIed - also from v6.14, where flush_tlb_range() says it
 * frees tables (x86_range_freed=true: 3ef938c35035) and IPIs lazy CPUs; it
 * was a flush_tlb_range() of the mm. A running CPU of the mm is IPIed. */
static void test_batch_flush_x86(void **state)
{
	(void)state;
	for (int freed = 0; freed < 2; freed++) {
		struct rc x = {.madv_free = true, .helper_exits = true};
		struct sim *s = run_rc("x86-24", &x, freed ? pol_range_freed : NULL);
		assert_int_equal(x.state_after_flush, FRAME_FREE);
		assert_int_equal(x.flush_ipis, 0);	/* CPU 1 is lazy */
		assert_int_equal(s->m.violations, 0);
		tsim_free(s);
		struct rc y = {.madv_free = true};
		s = run_rc("x86-24", &y, freed ? pol_range_freed : NULL);
		assert_int_equal(y.flush_ipis, 1);	/* CPU 1 runs the mm */
		assert_false(y.entry_after_flush);
		tsim_free(s);
	}
}

static void test_deferred_arm64(void **state)
{
	(void)state;
	check_deferred("arm64-4k", NULL, true);
	check_deferred("arm64-4k", pol_arm64_dsb, true);
	check_deferred("arm64-4k", pol_arm64_none, false);
}

/* ---- mprotect / munmap between the unmap and the flush ---- */

static void pol_no_mprotect_check(struct tlbsim_policy *p)
{
	p->ubc_check_mprotect = 0;
}

static void pol_no_zap_check(struct tlbsim_policy *p)
{
	p->ubc_check_zap = 0;
}

static void check_race(const char *profile, enum race race,
		       void (*setpol)(struct tlbsim_policy *), bool checked)
{
	struct rc x = {.madv_free = true, .race = race};
	struct sim *s = run_rc(profile, &x, setpol);
	assert_int_equal(x.race_ret, 0);
	assert_true(x.entry_after_unmap);
	if (checked) {
		/* flush_tlb_batched_pending flushed the mm before the return */
		assert_false(x.entry_after_race);
		assert_int_equal(s->m.violations, 0);
	} else {
		/* the call saw no PTE and returned with CPU 1's entry: I2 */
		assert_true(x.entry_after_race);
		assert_true(s->m.violations > 0);
		assert_int_equal(tsim_violation(s)->kind, INV_I2);
		assert_int_equal(tsim_violation(s)->va, x.a);
	}
	tsim_free(s);
}

static void test_mprotect_check_x86(void **state)
{
	(void)state;
	check_race("x86-24", RACE_MPROTECT, NULL, true);
	check_race("x86-24", RACE_MPROTECT, pol_no_mprotect_check, false);
}

static void test_munmap_check_x86(void **state)
{
	(void)state;
	check_race("x86-24", RACE_MUNMAP, NULL, true);
	check_race("x86-24", RACE_MUNMAP, pol_no_zap_check, false);
}

static void test_munmap_check_arm64(void **state)
{
	(void)state;
	check_race("arm64-4k", RACE_MUNMAP, NULL, true);
	check_race("arm64-4k", RACE_MUNMAP, pol_no_zap_check, false);
	/* v6.5's DSB-only flush_tlb_batched_pending completes nothing the
	 * reclaim CPU issued */
	check_race("arm64-4k", RACE_MUNMAP, pol_arm64_dsb, false);
}

/* ---- flush_tlb_batched_pending's flag forms ---- */

struct flag_case {
	enum ubc_flag_policy form;
	uint32_t before, after;
	bool flush;
};

static void flag_body(struct sim *s, struct sim_thread *t)
{
	struct flag_case *c = t->arg;
	struct mm_struct *mm = task_of(t)->mm;
	uint64_t gen0 = mm->context.tlb_gen;
	mm->tlb_flush_batched = c->before;
	flush_tlb_batched_pending(s, mm);
	c->after = mm->tlb_flush_batched;
	c->flush = mm->context.tlb_gen != gen0;
}

static void test_flag_forms(void **state)
{
	(void)state;
	struct {
		enum ubc_flag_policy form;
		uint32_t before, after;
		bool flush;
	} want[] = {
		{UBC_FLAG_BOOL, 0, 0, false},
		{UBC_FLAG_BOOL, 1, 0, true},
		{UBC_FLAG_GEN, 0, 0, false},
		{UBC_FLAG_GEN, (3u << 16) | 3u, (3u << 16) | 3u, false},	/* flushed == pending */
		{UBC_FLAG_GEN, (1u << 16) | 3u, (3u << 16) | 3u, true},	/* 2 pending */
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		struct flag_case c = {.form = want[i].form, .before = want[i].before};
		struct sim *s = tsim_new_p("x86-24", 2, NESTED_FULLMM, no_kpti);
		machine_of(s)->policy.ubc_flag = c.form;
		tsim_spawn(s, flag_body, &c, 0);
		tsim_run(s);
		assert_int_equal(c.after, want[i].after);
		assert_int_equal(c.flush, want[i].flush);
		tsim_free(s);
	}
}

/* ---- I3 at the lazyfree discard ---- */

static void check_discard_i3(const char *profile)
{
	struct rc x = {.madv_free = true, .plant_stale_dirty = true};
	struct sim *s = run_rc(profile, &x, NULL);
	assert_int_equal(x.nfreed, 1);			/* judged clean: discarded */
	assert_true(x.entry_after_unmap);		/* CPU 1's dirty entry */
	assert_int_equal(x.helper_write_ret, 0);	/* the write went through it */
	assert_true(s->m.violations > 0);
	assert_int_equal(tsim_violation(s)->kind, INV_I3);
	assert_int_equal(tsim_violation(s)->va, x.a);
	assert_non_null(strstr(tsim_violation(s)->text, "discarded"));
	tsim_free(s);
}

static void test_discard_i3_x86(void **state)
{
	(void)state;
	check_discard_i3("x86-24");
}

static void test_discard_i3_arm64(void **state)
{
	(void)state;
	check_discard_i3("arm64-4k");
}

/* ---- the PTL between reclaim and a caller of flush_tlb_batched_pending ---- */

struct ptl_case {
	uint64_t a;
	volatile bool locked;
	bool present_while_held;
	uint64_t unlock_at, unmapped_at;
	uint32_t nfreed;
};

static void ptl_holder(struct sim *s, struct sim_thread *t)
{
	struct ptl_case *c = t->arg;
	struct mm_struct *mm = task_of(t)->mm;
	uint64_t ps = hw_of(s)->geom.page_size;
	uint64_t a = tsim_map_written(s, 1);
	assert_int_equal(sys_madvise_free(s, a, ps), 0);
	ptl_lock(s, pte_table_of(s, mm, a));		/* as change_pte_range holds it */
	c->a = a;
	c->locked = true;
	sim_sleep_for(s, 50000);			/* 50 us inside the lock */
	c->present_while_held = tsim_pte_frame(s, mm, a) != NO_FRAME;
	c->unlock_at = s->now;
	ptl_unlock(s);
}

static void ptl_reclaimer(struct sim *s, struct sim_thread *t)
{
	struct ptl_case *c = t->arg;
	TSIM_WAIT_UNTIL(s, c->locked);
	struct reclaim_list rl;
	shrink_page_list_unmap(s, task_of(t)->mm, c->a, c->a + hw_of(s)->geom.page_size, &rl);
	c->unmapped_at = s->now;
	c->nfreed = rl.n;
	shrink_page_list_finish(s, &rl);
}

/* reclaim's try_to_unmap_one takes the PTE table's lock: it waits while
 * another task holds it, and clears the PTE after the unlock */
static void test_reclaim_waits_for_ptl(void **state)
{
	(void)state;
	struct ptl_case c = {0};
	struct sim *s = tsim_new_p("x86-24", 2, NESTED_FULLMM, no_kpti);
	tsim_spawn(s, ptl_holder, &c, 0);
	tsim_spawn(s, ptl_reclaimer, &c, 1);
	tsim_run(s);
	assert_true(c.present_while_held);
	assert_int_equal(c.nfreed, 1);
	assert_true(c.unmapped_at >= c.unlock_at);
	assert_int_equal(s->m.violations, 0);
	tsim_free(s);
}

/* ---- MADV_FREE of pages mapped more than once ---- */

struct mf {
	pte_t pte[3];
	uint8_t flags[3];
	uint64_t flushes;
	int ran;
};

static void mf_body(struct sim *s, struct sim_thread *t)
{
	struct mf *x = t->arg;
	struct mm_struct *mm = task_of(t)->mm;
	struct hw *hw = hw_of(s);
	uint64_t ps = hw->geom.page_size;
	uint64_t a = sys_mmap(s, 0, 3 * ps, TLBSIM_MAP_PRIVATE);
	for (int i = 0; i < 3; i++)
		assert_int_equal(user_access(s, a + (uint64_t)i * ps, true), 0);
	/* page 1 and page 2 mapped twice (as a forked child would share them);
	 * page 2 with PG_dirty */
	uint32_t f1 = pte_pfn(*pte_lookup(s, mm, a + ps)), f2 = pte_pfn(*pte_lookup(s, mm, a + 2 * ps));
	frame_of(hw, f1)->refcount++;
	frame_of(hw, f2)->refcount++;
	frame_of(hw, f2)->pgflags |= PG_DIRTY;
	uint64_t fl0 = s->m.flush_local_pages + s->m.flush_full;
	assert_int_equal(sys_madvise_free(s, a, 3 * ps), 0);
	x->flushes = s->m.flush_local_pages + s->m.flush_full - fl0;
	for (int i = 0; i < 3; i++) {
		x->pte[i] = *pte_lookup(s, mm, a + (uint64_t)i * ps);
		x->flags[i] = frame_of(hw, pte_pfn(x->pte[i]))->pgflags;
	}
	frame_of(hw, f1)->refcount--;
	frame_of(hw, f2)->refcount--;
	x->ran = 1;
}

/* Rule (madvise_free_pte_range, mm/madvise.c, v4.12..v5.x): the mapcount
 * test applies to a page with PG_dirty (or in the swap cache) only, whose
 * dirty flag cannot be cleared for the other mappings: it is left alone. A
 * clean-flagged page is aged and cleaned in this mm, flushed, and marked
 * lazyfree however many times it is mapped (the model skipped every page
 * mapped more than once, so MADV_FREE after fork flushed less). */
static void test_madv_free_shared_pages(void **state)
{
	(void)state;
	struct mf x = {0};
	struct sim *s = tsim_new("x86-24", 1, NESTED_FULLMM);
	tsim_spawn(s, mf_body, &x, 0);
	tsim_run(s);
	assert_int_equal(x.ran, 1);
	const struct pt_format *fmt = hw_of(s)->fmt;
	for (int i = 0; i < 2; i++) {
		assert_true(fmt_pte_clean(fmt, x.pte[i]));
		assert_false(x.pte[i] & PTE_YOUNG);
		assert_true(x.flags[i] & PG_LAZYFREE);
	}
	assert_false(fmt_pte_clean(fmt, x.pte[2]));
	assert_false(x.flags[2] & PG_LAZYFREE);
	assert_int_equal(x.flushes, 2);		/* INVLPG of pages 0 and 1 */
	tsim_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_madv_free_shared_pages),
		cmocka_unit_test(test_discard_x86),
		cmocka_unit_test(test_discard_arm64),
		cmocka_unit_test(test_deferred_x86),
		cmocka_unit_test(test_batch_flush_x86),
		cmocka_unit_test(test_deferred_arm64),
		cmocka_unit_test(test_mprotect_check_x86),
		cmocka_unit_test(test_munmap_check_x86),
		cmocka_unit_test(test_munmap_check_arm64),
		cmocka_unit_test(test_flag_forms),
		cmocka_unit_test(test_discard_i3_x86),
		cmocka_unit_test(test_discard_i3_arm64),
		cmocka_unit_test(test_reclaim_waits_for_ptl),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
