/*
 * test_invariants.c - the invariant oracle (src/check/check.c, src/hw/mmu.c,
 * src/mm/memory.c livelock detector) on hand-built, deterministic states.
 *
 * Every scenario runs inside simulated threads (tests/test_util.h harness,
 * time-ordered mode, so nothing stops at a violation: s->m.violations counts
 * every report and s->first_violation keeps the first). Stale cache entries
 * are made the honest way - a real access fills the TLB / walk cache - and
 * then the page tables or frames are changed behind the caches' back, as a
 * buggy kernel path would. Each invariant has a case where it must fire and
 * cases where it must not (kernel-model.md 7, 9.3):
 *
 *  I1           a reachable leaf entry maps a data frame at the moment the
 *               frame is freed; a reachable walk-cache entry points at a
 *               page table at the moment the table is handed to RCU.
 *  I1-realized  an access uses a walk-cache entry whose table frame was
 *               freed and reallocated (generation mismatch).
 *  I2           when munmap/madvise(DONTNEED) returns, no CPU reaches an old
 *               translation of the range: one to a frame mapped when the call
 *               began (map_epoch <= call_epoch) that the live tables no longer
 *               map there.
 *  I3           a write through a cached writable+dirty entry into a page the
 *               kernel judged clean (MADV_FREE: lazyfree, PTE clean; or
 *               writeback: page_mkclean).
 *  stale-walk   an access walks through a table that was unlinked and handed
 *               to RCU (its flush completed) but is not yet freed.
 *  livelock     livelock_faults identical faults (same cpu, va, PTE) in a
 *               row; the detector reports once and recovers by invalidating
 *               the CPU.
 *  windows      x86 lazy-CPU leaves whose tlb_gen is behind the mm's and
 *               arm64 leaves tagged with the ASID of no live mm are not
 *               reachable, so they are not I1.
 *  ASID reuse   (kernel-model 3.6, arch/arm64/mm/context.c) an arm64 leaf
 *               tagged X is reachable if a live mm holds X in the current
 *               generation; but a CPU that owes a rollover flush can only
 *               use entries of the ASID in its TTBR0 before it invalidates
 *               everything: a leaf of an mm whose number was handed to
 *               another mm at the rollover is not I1, while the leaf of the
 *               mm the CPU still runs (its ASID reserved) is.
 */
#include "test_util.h"

#include <stdio.h>

/* ---- helpers ---- */

/* set_entry() of memory.c (static there): keep nr_used and the occupancy
 * bitmap consistent so that frame_free()'s empty-table check holds. */
static void tset_entry(struct sim *s, uint32_t table, uint64_t idx, pte_t val)
{
	struct frame *fr = frame_of(hw_of(s), table);
	uint64_t *map = table_used_map(&hw_of(s)->geom, fr->table);
	pte_t old = fr->table[idx];
	if (pte_none(old) && !pte_none(val)) {
		fr->nr_used++;
		map[idx / 64] |= 1ull << (idx % 64);
	} else if (!pte_none(old) && pte_none(val)) {
		fr->nr_used--;
		map[idx / 64] &= ~(1ull << (idx % 64));
	}
	fr->table[idx] = val;
}

/* tables[d] = the live table at depth d on the path of va (0 = pgd). */
static void path_tables(struct sim *s, struct mm_struct *mm, uint64_t va, uint32_t *tables)
{
	const struct pt_geom *g = &hw_of(s)->geom;
	tables[0] = mm->pgd;
	for (int d = 0; d < g->levels - 1; d++) {
		pte_t e = table_of(hw_of(s), tables[d])[pt_index(g, d, va)];
		assert_true(pte_present(e));
		tables[d + 1] = pte_pfn(e);
	}
}

static int leaf_depth(struct sim *s)
{
	return hw_of(s)->geom.levels - 1;
}

/* Clear va's PTE in the live tables (no flush); returns the frame it mapped. */
static uint32_t clear_pte(struct sim *s, struct mm_struct *mm, uint64_t va)
{
	uint32_t t[8];
	path_tables(s, mm, va, t);
	int d = leaf_depth(s);
	uint64_t idx = pt_index(&hw_of(s)->geom, d, va);
	pte_t e = table_of(hw_of(s), t[d])[idx];
	assert_true(pte_present(e));
	tset_entry(s, t[d], idx, 0);
	return pte_pfn(e);
}

/* Unlink the (empty) PTE table of va from its parent (pmd_clear); returns it. */
static uint32_t unlink_pte_table(struct sim *s, struct mm_struct *mm, uint64_t va)
{
	uint32_t t[8];
	path_tables(s, mm, va, t);
	int d = leaf_depth(s);
	assert_int_equal(frame_of(hw_of(s), t[d])->nr_used, 0);
	tset_entry(s, t[d - 1], pt_index(&hw_of(s)->geom, d - 1, va), 0);
	kernel_of(s)->hooks->table_unlinked(kernel_of(s)->hooks_ctx, t[d]);
	return t[d];
}

static void inv(struct sim *s, int cpu, enum inv_kind kind, uint64_t va)
{
	uint64_t ps = hw_of(s)->geom.page_size;
	struct inv_op op = {.kind = kind, .tag = machine_of(s)->arch->user_tag(s, cpu), .start = va,
			    .end = va + ps, .stride = ps};
	hw_invalidate_cpu(hw_of(s), cpu, &op);
}

static void inv_all(struct sim *s, int cpu)
{
	struct inv_op op = {.kind = INV_ALL};
	hw_invalidate_cpu(hw_of(s), cpu, &op);
}

/* Cached walk entry of cpu at depth d for va (NULL if none). */
static struct tc_entry *walk_entry(struct sim *s, int cpu, int d, uint64_t va)
{
	return tc_lookup(&hw_of(s)->cpu[cpu].wc, va >> hw_of(s)->geom.shift[d], d,
			 machine_of(s)->arch->user_tag(s, cpu));
}

static struct tc_entry *leaf_entry(struct sim *s, int cpu, uint64_t va, uint32_t tag)
{
	return tc_lookup(&hw_of(s)->cpu[cpu].tlb, va >> hw_of(s)->geom.page_shift, leaf_depth(s), tag);
}

/* A private page mapped and written by the current thread. */
static uint64_t map_and_write(struct sim *s)
{
	uint64_t ps = hw_of(s)->geom.page_size;
	uint64_t a = sys_mmap(s, 0, ps, TLBSIM_MAP_PRIVATE);
	assert_true(a != TLBSIM_EINVAL_VA);
	assert_int_equal(user_access(s, a, true), 0);
	assert_int_equal(user_access(s, a, true), 0);	/* now a TLB hit */
	assert_non_null(leaf_entry(s, sim_current(s)->cpu, a,
				   machine_of(s)->arch->user_tag(s, sim_current(s)->cpu)));
	return a;
}

static void assert_no_violation(struct sim *s)
{
	assert_int_equal(s->m.violations, 0);
	assert_int_equal(tsim_violation(s)->kind, -1);
}

static void assert_violation(struct sim *s, int kind)
{
	if (tsim_violation(s)->kind != kind)
		fail_msg("want %s, got %s (%s)", inv_name(kind),
			 tsim_violation(s)->kind >= 0 ? inv_name(tsim_violation(s)->kind) : "none",
			 tsim_violation(s)->text);
	assert_true(s->m.violations >= 1);
}

struct one {
	int variant;
	uint64_t va;
	uint32_t frame;
	uint32_t table;
	uint64_t n, n2;
	int ran;
};

static void run_one(const char *profile, int cpus, thread_fn fn, struct one *o, int cpu,
		    struct sim **out, const int64_t *ov)
{
	struct sim *s = tsim_new_p(profile, cpus, NESTED_FULLMM, ov);
	tsim_spawn(s, fn, o, cpu);
	tsim_run(s);
	assert_int_equal(o->ran, 1);
	*out = s;
}

/* ---- I1, data page ---- */

/* Rule: a data frame freed while a reachable leaf TLB entry still maps it is
 * an I1 violation (variant 0); freeing it after the CPU's TLB was invalidated
 * is not (variant 1). */
static void i1_data_body(struct sim *s, struct sim_thread *t)
{
	struct one *o = t->arg;
	uint64_t a = map_and_write(s);
	uint32_t f = clear_pte(s, task_of(t)->mm, a);
	if (o->variant == 1)
		inv_all(s, t->cpu);
	struct frame *fr = frame_of(hw_of(s), f);
	assert_int_equal(fr->state, FRAME_DATA);
	assert_int_equal(fr->refcount, 1);
	fr->refcount--;			/* put_page() of the last reference */
	frame_free(hw_of(s), f);
	o->va = a;
	o->frame = f;
	o->ran = 1;
}

/* The oracle's per-frame state reads as zero until written, whatever was
 * asked for before (oracle_frame zeroes its chunks on demand): frames below
 * and above a written one, across a chunk boundary, and in a chunk skipped
 * over; a written one keeps its value. */
static void oracle_frames_zero_then_kept(void)
{
	struct sim *s = tsim_new("falkor-46", 2, NESTED_FULLMM);
	struct oracle *o = tsim_oracle(s);
	static const uint32_t order[] = {700, 3, 1023, 1024, 4000, 0, 2047, 699, 701, 3000};
	static const struct oracle_frame zero;
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		struct oracle_frame *of = oracle_frame(o, order[i]);
		assert_non_null(of);
		assert_memory_equal(of, &zero, sizeof(zero));
		of->map_epoch = 1000 + order[i];
		of->copy_to = order[i];
	}
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		assert_true(oracle_frame(o, order[i])->map_epoch == 1000 + order[i]);
		assert_int_equal(oracle_frame(o, order[i])->copy_to, order[i]);
	}
	tsim_free(s);
}

static void test_oracle_frame_state_starts_zero(void **state)
{
	(void)state;
	/* twice: the second sim's chunks are likely the first one's memory */
	oracle_frames_zero_then_kept();
	oracle_frames_zero_then_kept();
}

static void test_i1_data_fires_without_invalidation(void **state)
{
	static const char *const profiles[] = {"x86-24", "falkor-46", "arm64-4k"};
	for (size_t i = 0; i < sizeof(profiles) / sizeof(profiles[0]); i++) {
		struct one o = {.variant = 0};
		struct sim *s;
		run_one(profiles[i], 4, i1_data_body, &o, 1, &s, NULL);
		assert_violation(s, INV_I1);
		assert_int_equal(s->m.violations, 1);
		assert_int_equal(tsim_violation(s)->cpu, 1);
		assert_int_equal(tsim_violation(s)->frame, o.frame);
		assert_true(tsim_violation(s)->va == o.va);
		assert_non_null(strstr(tsim_violation(s)->text, "data frame"));
		assert_non_null(strstr(tsim_violation(s)->entry, "TLB leaf"));
		tsim_free(s);
	}
}

static void test_i1_data_quiet_after_invalidation(void **state)
{
	static const char *const profiles[] = {"x86-24", "falkor-46", "arm64-4k"};
	for (size_t i = 0; i < sizeof(profiles) / sizeof(profiles[0]); i++) {
		struct one o = {.variant = 1};
		struct sim *s;
		run_one(profiles[i], 4, i1_data_body, &o, 1, &s, NULL);
		assert_no_violation(s);
		assert_int_equal(frame_of(hw_of(s), o.frame)->state, FRAME_FREE);
		tsim_free(s);
	}
}

/* Rule (check_frame's scan): the scan of the CPUs for a freed frame's
 * entries stops only once it has seen every entry holding the frame
 * (frame.tlb_refs): an entry from the frame's earlier life (an older gen) on
 * a CPU scanned first does not end it before the reachable entry on a later
 * CPU. falkor-46: the mm's ASID is the same on every CPU, so CPU 0, which
 * holds entries of it, is scanned. */
static void i1_after_stale_body(struct sim *s, struct sim_thread *t)
{
	struct one *o = t->arg;
	struct hw *hw = hw_of(s);
	uint64_t a = map_and_write(s);
	uint32_t tag = machine_of(s)->arch->user_tag(s, t->cpu);
	uint32_t f = pte_pfn(*hw_pte_lookup(hw, task_of(t)->mm->pgd, a));
	struct frame *fr = frame_of(hw, f);
	/* CPU 0: an entry of f filled before f's last reuse */
	uint64_t vpn = a >> hw->geom.page_shift;
	tc_fill(hw, &hw->cpu[0].tlb, vpn + 1, leaf_depth(s), tag, f, 0);
	struct tc_entry *old = tc_lookup(&hw->cpu[0].tlb, vpn + 1, leaf_depth(s), tag);
	assert_non_null(old);
	old->gen = fr->gen - 1;
	assert_int_equal(fr->tlb_refs, 2);	/* CPU 0's old one, CPU 1's */
	assert_int_equal(clear_pte(s, task_of(t)->mm, a), f);
	fr->refcount--;
	frame_free(hw, f);
	o->va = a;
	o->frame = f;
	o->ran = 1;
}

static void test_i1_found_past_an_older_entry(void **state)
{
	(void)state;
	struct one o = {0};
	struct sim *s;
	run_one("falkor-46", 4, i1_after_stale_body, &o, 1, &s, NULL);
	assert_violation(s, INV_I1);
	assert_int_equal(tsim_violation(s)->cpu, 1);
	assert_int_equal(tsim_violation(s)->frame, o.frame);
	assert_true(tsim_violation(s)->va == o.va);
	tsim_free(s);
}

/* Rule (I5, on_kernel_mapped): mapping a kernel VA again while some CPU's
 * TLB still holds a global entry of its old translation is I5, on whichever
 * CPU holds it: the first CPU, and one past the first 64 (the CPU bitmaps'
 * second word). */
static void test_i5_on_any_cpu(void **state)
{
	(void)state;
	static const int cpus[][2] = {{4, 0}, {4, 3}, {130, 0}, {130, 64}, {130, 129}};
	for (size_t i = 0; i < sizeof(cpus) / sizeof(cpus[0]); i++) {
		struct sim *s = tsim_new("x86-24", cpus[i][0], NESTED_FULLMM);
		struct hw *hw = hw_of(s);
		int c = cpus[i][1];
		uint64_t va = 0xffffc90000010000ull;
		uint32_t oldf = frame_alloc(hw, FRAME_DATA, 0), newf = frame_alloc(hw, FRAME_DATA, 0);
		uint64_t vpn = va >> hw->geom.page_shift;
		/* unrelated global entries on other CPUs, at other VAs */
		for (int k = 0; k < cpus[i][0]; k += 7)
			if (k != c)
				tc_fill(hw, &hw->cpu[k].tlb, vpn + 1 + (uint64_t)k, leaf_depth(s),
					TC_TAG_GLOBAL, oldf, 0);
		kernel_of(s)->hooks->kernel_mapped(kernel_of(s)->hooks_ctx, va, newf);
		assert_no_violation(s);
		tc_fill(hw, &hw->cpu[c].tlb, vpn, leaf_depth(s), TC_TAG_GLOBAL, oldf, 0);
		kernel_of(s)->hooks->kernel_mapped(kernel_of(s)->hooks_ctx, va, newf);
		assert_violation(s, INV_I5);
		assert_int_equal(tsim_violation(s)->cpu, c);
		assert_int_equal(tsim_violation(s)->frame, oldf);
		tsim_free(s);
	}
}

/* ---- I1, page table at the RCU hand-off ---- */

/* Rule: handing a page table to RCU (check_tables_to_rcu) while a reachable
 * walk-cache entry still points at it is I1 (variant 0); after a VAE1IS-style
 * INV_VA_ALL (variant 1) or an ASIDE1IS-style INV_TAG (variant 2) of that
 * ASID on the CPU it is not. A leaf-only invalidation (variant 3) leaves the
 * walk entry, so it still fires. */
static void i1_rcu_body(struct sim *s, struct sim_thread *t)
{
	struct one *o = t->arg;
	uint64_t a = map_and_write(s);
	int d = leaf_depth(s);
	struct tc_entry *w = walk_entry(s, t->cpu, d - 1, a);
	assert_non_null(w);
	(void)clear_pte(s, task_of(t)->mm, a);
	uint32_t p = unlink_pte_table(s, task_of(t)->mm, a);
	assert_int_equal(w->frame, p);
	switch (o->variant) {
	case 1: inv(s, t->cpu, INV_VA_ALL, a); break;
	case 2: {
		struct inv_op op = {.kind = INV_TAG, .tag = machine_of(s)->arch->user_tag(s, t->cpu)};
		hw_invalidate_cpu(hw_of(s), t->cpu, &op);
		break;
	}
	case 3: inv(s, t->cpu, INV_VA_LEAF, a); break;
	}
	kernel_of(s)->hooks->tables_to_rcu(kernel_of(s)->hooks_ctx, &p, 1);
	assert_true(frame_of(hw_of(s), p)->watch & WATCH_RCU);
	o->va = a;
	o->table = p;
	o->ran = 1;
}

static void test_i1_table_fires_at_rcu_handoff(void **state)
{
	static const char *const profiles[] = {"falkor-46", "arm64-4k"};
	for (size_t i = 0; i < 2; i++) {
		for (int variant = 0; variant <= 3; variant += 3) {
			struct one o = {.variant = variant};
			struct sim *s;
			run_one(profiles[i], 4, i1_rcu_body, &o, 2, &s, NULL);
			assert_violation(s, INV_I1);
			assert_int_equal(s->m.violations, 1);
			assert_int_equal(tsim_violation(s)->cpu, 2);
			assert_int_equal(tsim_violation(s)->frame, o.table);
			assert_non_null(strstr(tsim_violation(s)->text, "page-table frame"));
			assert_non_null(strstr(tsim_violation(s)->text, "handed to RCU"));
			assert_non_null(strstr(tsim_violation(s)->entry, "walk-cache"));
			tsim_free(s);
		}
	}
}

static void test_i1_table_quiet_after_walk_invalidation(void **state)
{
	static const char *const profiles[] = {"falkor-46", "arm64-4k"};
	for (size_t i = 0; i < 2; i++) {
		for (int variant = 1; variant <= 2; variant++) {
			struct one o = {.variant = variant};
			struct sim *s;
			run_one(profiles[i], 4, i1_rcu_body, &o, 2, &s, NULL);
			assert_no_violation(s);
			tsim_free(s);
		}
	}
}

/* ---- I1 realized ---- */

/* Rule: an access that walks through a walk-cache entry whose table frame was
 * freed and reallocated (its generation changed) is I1-realized (variant 0).
 * If the walk entry was invalidated before the free (variant 1), the same
 * access walks the live tables: no violation of any kind. */
static void i1_realized_body(struct sim *s, struct sim_thread *t)
{
	struct one *o = t->arg;
	uint64_t a = map_and_write(s);
	int d = leaf_depth(s);
	assert_non_null(walk_entry(s, t->cpu, d - 1, a));
	(void)clear_pte(s, task_of(t)->mm, a);
	uint32_t p = unlink_pte_table(s, task_of(t)->mm, a);
	/* the leaf goes either way (a leaf-only flush) */
	inv(s, t->cpu, INV_VA_LEAF, a);
	if (o->variant == 1)
		inv(s, t->cpu, INV_VA_ALL, a);
	frame_free(hw_of(s), p);
	if (o->variant == 0) {
		/* the latent I1 at the free is expected (tested above); clear the
		 * record so that the access's own report becomes visible */
		assert_int_equal(tsim_violation(s)->kind, INV_I1);
		assert_int_equal(s->m.violations, 1);
		tsim_violation(s)->kind = -1;
	}
	uint32_t again = frame_alloc(hw_of(s), FRAME_PGTABLE, d);
	assert_int_equal(again, p);	/* LIFO free list: the same frame, new gen */
	uint64_t fpte = 0;
	int rc = tsim_mmu_access(s, t->cpu, task_of(t)->mm, a, false, &fpte);
	assert_int_equal(rc, -1);	/* the reused table is empty / unlinked */
	frame_free(hw_of(s), again);
	o->va = a;
	o->table = p;
	o->ran = 1;
}

static void test_i1_realized_fires_on_reused_table(void **state)
{
	static const char *const profiles[] = {"falkor-46", "arm64-4k", "x86-24"};
	for (size_t i = 0; i < 3; i++) {
		struct one o = {.variant = 0};
		struct sim *s;
		run_one(profiles[i], 4, i1_realized_body, &o, 0, &s, NULL);
		assert_violation(s, INV_I1_REALIZED);
		assert_int_equal(s->m.violations, 2);
		assert_int_equal(tsim_violation(s)->frame, o.table);
		assert_int_equal(tsim_violation(s)->cpu, 0);
		assert_true(tsim_violation(s)->va == o.va);
		assert_non_null(strstr(tsim_violation(s)->entry, "walk-cache entry"));
		tsim_free(s);
	}
}

static void test_i1_realized_quiet_when_walk_entry_gone(void **state)
{
	static const char *const profiles[] = {"falkor-46", "arm64-4k", "x86-24"};
	for (size_t i = 0; i < 3; i++) {
		struct one o = {.variant = 1};
		struct sim *s;
		run_one(profiles[i], 4, i1_realized_body, &o, 0, &s, NULL);
		assert_no_violation(s);
		tsim_free(s);
	}
}

/* ---- I2 ---- */

/* Rule: at the return of an unmapping call that began at call_epoch, a
 * reachable leaf entry in the range for a frame mapped no later than
 * call_epoch (map_epoch <= call_epoch) whose PTE is now none is I2.
 * variant 0: stale entry, PTE cleared            -> fires
 * variant 1: page mapped after the call began    -> quiet
 * variant 2: entry invalidated before the return -> quiet
 * variant 3: the live PTE still maps the frame   -> quiet
 * variant 4: the stale entry is outside the range -> quiet */
static void i2_body(struct sim *s, struct sim_thread *t)
{
	struct one *o = t->arg;
	uint64_t ps = hw_of(s)->geom.page_size;
	uint64_t call_epoch = 0;
	if (o->variant == 1)
		call_epoch = ++tsim_oracle(s)->map_epoch;	/* the call began before the mapping */
	uint64_t a = map_and_write(s);
	uint32_t f = pte_pfn(*pte_lookup(s, task_of(t)->mm, a));
	if (o->variant != 1) {
		call_epoch = ++tsim_oracle(s)->map_epoch;
		assert_true(oracle_frame(tsim_oracle(s), f)->map_epoch <= call_epoch);
	} else {
		assert_true(oracle_frame(tsim_oracle(s), f)->map_epoch > call_epoch);
	}
	if (o->variant != 3)
		(void)clear_pte(s, task_of(t)->mm, a);
	if (o->variant == 2)
		inv(s, t->cpu, INV_VA_LEAF, a);
	uint64_t start = a, end = a + ps;
	if (o->variant == 4) {
		start = a + ps;
		end = a + 16 * ps;
	}
	kernel_of(s)->hooks->range_unmapped(kernel_of(s)->hooks_ctx, task_of(t)->mm, start, end,
					    SYS_MUNMAP, call_epoch);
	o->va = a;
	o->frame = f;
	o->ran = 1;
}

static void test_i2_fires_for_stale_old_translation(void **state)
{
	static const char *const profiles[] = {"x86-24", "falkor-46"};
	for (size_t i = 0; i < 2; i++) {
		struct one o = {.variant = 0};
		struct sim *s;
		run_one(profiles[i], 4, i2_body, &o, 3, &s, NULL);
		assert_violation(s, INV_I2);
		assert_int_equal(s->m.violations, 1);
		assert_int_equal(tsim_violation(s)->cpu, 3);
		assert_int_equal(tsim_violation(s)->frame, o.frame);
		assert_true(tsim_violation(s)->va == o.va);
		assert_non_null(strstr(tsim_violation(s)->text, "munmap of ["));
		tsim_free(s);
	}
}

static void test_i2_quiet_cases(void **state)
{
	static const char *const profiles[] = {"x86-24", "falkor-46"};
	for (size_t i = 0; i < 2; i++) {
		for (int variant = 1; variant <= 4; variant++) {
			struct one o = {.variant = variant};
			struct sim *s;
			run_one(profiles[i], 4, i2_body, &o, 3, &s, NULL);
			if (s->m.violations)
				fail_msg("%s variant %d: unexpected %s", profiles[i], variant,
					 tsim_violation(s)->text);
			assert_no_violation(s);
			tsim_free(s);
		}
	}
}

/* ---- I3 ---- */

enum i3_mode {
	I3_STALE,		/* PTE cleaned + lazyfree behind a live W+D entry: fires */
	I3_NOT_LAZYFREE,	/* same, but the page is not lazyfree: quiet */
	I3_INVALIDATED,		/* same, but the writer's entry was flushed: quiet */
	I3_REAL_MADV_FREE,	/* sys_madvise_free (flushes): quiet */
};

struct i3 {
	enum i3_mode mode;
	volatile int stage;
	uint64_t page;
	uint32_t frame;
	int lazyfree_after_madvise;
	int wrote;
	int cleaned;
};

static void wait_stage(struct sim *s, struct i3 *st, int want)
{
	for (int i = 0; st->stage < want; i++) {
		assert_true(i < 100000);
		sim_step(s, YP_USER, 100);
	}
}

/* CPU 0: writes the page (its TLB caches it writable+dirty), lets CPU 1
 * clean it, then writes again. */
static void i3_writer(struct sim *s, struct sim_thread *t)
{
	struct i3 *st = t->arg;
	st->page = map_and_write(s);
	st->frame = pte_pfn(*pte_lookup(s, task_of(t)->mm, st->page));
	struct tc_entry *e = leaf_entry(s, t->cpu, st->page, machine_of(s)->arch->user_tag(s, t->cpu));
	assert_true(e->perm & PTE_WRITE);
	assert_true(e->perm & PTE_DIRTY);
	st->stage = 1;
	wait_stage(s, st, 2);
	assert_int_equal(user_access(s, st->page, true), 0);
	st->wrote = 1;
}

/* CPU 1: the MADV_FREE side. */
static void i3_cleaner(struct sim *s, struct sim_thread *t)
{
	struct i3 *st = t->arg;
	wait_stage(s, st, 1);
	if (st->mode == I3_REAL_MADV_FREE) {
		assert_int_equal(sys_madvise_free(s, st->page, hw_of(s)->geom.page_size), 0);
		/* the kernel judged the page clean: a stale write would be I3 */
		st->lazyfree_after_madvise = !!(frame_of(hw_of(s), st->frame)->watch & WATCH_CLEAN);
	} else {
		pte_t *ptep = pte_lookup(s, task_of(t)->mm, st->page);
		assert_non_null(ptep);
		pte_t e = *ptep & ~(PTE_DIRTY | PTE_YOUNG);	/* pte_mkold(pte_mkclean()) */
		if (machine_of(s)->profile->arch == ARCH_ARM64)
			e |= PTE_RDONLY;
		*ptep = e;
		struct frame *fr = frame_of(hw_of(s), st->frame);
		if (st->mode != I3_NOT_LAZYFREE)
			fr->watch |= WATCH_CLEAN;
		else
			fr->watch &= (uint8_t)~WATCH_CLEAN;
		oracle_frame(tsim_oracle(s), st->frame)->dirty_epoch = 0;
		if (st->mode == I3_INVALIDATED)
			inv(s, 0, INV_VA_LEAF, st->page);	/* the flush reached CPU 0 */
	}
	st->cleaned = 1;
	st->stage = 2;
}

static struct sim *run_i3(const char *profile, struct i3 *st)
{
	struct sim *s = tsim_new(profile, 4, NESTED_FULLMM);
	tsim_spawn(s, i3_writer, st, 0);
	tsim_spawn(s, i3_cleaner, st, 1);
	tsim_run(s);
	assert_int_equal(st->wrote, 1);
	assert_int_equal(st->cleaned, 1);
	return s;
}

static void test_i3_fires_on_write_through_stale_dirty_entry(void **state)
{
	static const char *const profiles[] = {"x86-24", "falkor-46"};
	for (size_t i = 0; i < 2; i++) {
		struct i3 st = {.mode = I3_STALE};
		struct sim *s = run_i3(profiles[i], &st);
		assert_violation(s, INV_I3);
		assert_int_equal(s->m.violations, 1);
		assert_int_equal(tsim_violation(s)->cpu, 0);
		assert_true(tsim_violation(s)->va == st.page);
		assert_int_equal(tsim_violation(s)->frame, st.frame);
		assert_non_null(strstr(tsim_violation(s)->text, "MADV_FREE"));
		tsim_free(s);
	}
}

static void test_i3_quiet_cases(void **state)
{
	static const char *const profiles[] = {"x86-24", "falkor-46"};
	static const enum i3_mode modes[] = {I3_NOT_LAZYFREE, I3_INVALIDATED, I3_REAL_MADV_FREE};
	for (size_t i = 0; i < 2; i++) {
		for (size_t m = 0; m < 3; m++) {
			struct i3 st = {.mode = modes[m]};
			struct sim *s = run_i3(profiles[i], &st);
			if (s->m.violations)
				fail_msg("%s mode %d: unexpected %s", profiles[i], (int)modes[m],
					 tsim_violation(s)->text);
			assert_no_violation(s);
			if (modes[m] == I3_REAL_MADV_FREE)
				assert_int_equal(st.lazyfree_after_madvise, 1);
			/* the second write re-dirtied the page through the PTE */
			if (modes[m] != I3_NOT_LAZYFREE) {
				assert_true(*pte_lookup(s, tsim_mm(s, 0), st.page) & PTE_DIRTY);
				assert_int_equal(frame_of(hw_of(s), st.frame)->watch & WATCH_CLEAN, 0);
			}
			tsim_free(s);
		}
	}
}

/* ---- stale walk ---- */

/* Rule: an access that walks through a walk-cache entry to a table that was
 * unlinked and handed to RCU (rcu_checked = 1, frame not yet freed) is a
 * stale-walk violation (variant 0). Quiet: the same unlinked table not yet
 * handed to RCU (variant 1: the flush that covers it may still come), a live
 * table (variant 2), or the walk entry invalidated (variant 3). */
static void stale_walk_body(struct sim *s, struct sim_thread *t)
{
	struct one *o = t->arg;
	uint64_t a = map_and_write(s);
	int d = leaf_depth(s);
	struct tc_entry *w = walk_entry(s, t->cpu, d - 1, a);
	assert_non_null(w);
	uint32_t p = w->frame;
	inv(s, t->cpu, INV_VA_LEAF, a);		/* force a walk */
	if (o->variant != 2) {
		(void)clear_pte(s, task_of(t)->mm, a);
		assert_int_equal(unlink_pte_table(s, task_of(t)->mm, a), p);
	}
	if (o->variant == 0 || o->variant == 3)
		frame_of(hw_of(s), p)->watch |= WATCH_RCU;	/* handed to RCU, not yet freed */
	if (o->variant == 3)
		inv(s, t->cpu, INV_VA_ALL, a);
	uint64_t fpte = 0;
	int rc = tsim_mmu_access(s, t->cpu, task_of(t)->mm, a, false, &fpte);
	assert_int_equal(rc, o->variant == 2 ? 0 : -1);
	o->va = a;
	o->table = p;
	o->ran = 1;
}

static void test_stale_walk_fires(void **state)
{
	static const char *const profiles[] = {"falkor-46", "arm64-4k", "x86-24"};
	for (size_t i = 0; i < 3; i++) {
		struct one o = {.variant = 0};
		struct sim *s;
		run_one(profiles[i], 4, stale_walk_body, &o, 1, &s, NULL);
		assert_violation(s, INV_STALE_WALK);
		assert_int_equal(s->m.violations, 1);
		assert_int_equal(tsim_violation(s)->frame, o.table);
		assert_int_equal(tsim_violation(s)->cpu, 1);
		assert_true(tsim_violation(s)->va == o.va);
		tsim_free(s);
	}
}

static void test_stale_walk_quiet_cases(void **state)
{
	static const char *const profiles[] = {"falkor-46", "arm64-4k", "x86-24"};
	for (size_t i = 0; i < 3; i++) {
		for (int variant = 1; variant <= 3; variant++) {
			struct one o = {.variant = variant};
			struct sim *s;
			run_one(profiles[i], 4, stale_walk_body, &o, 1, &s, NULL);
			if (s->m.violations)
				fail_msg("%s variant %d: unexpected %s", profiles[i], variant,
					 tsim_violation(s)->text);
			assert_no_violation(s);
			tsim_free(s);
		}
	}
}

/* ---- livelock ---- */

/* Rule (I6, kernel-model 5.5/7.1): on arm64 a stale walk-cache entry to a
 * detached, empty PTE table while the live tables map the page makes every
 * access fault; the spurious-fault path only issues a leaf VALE1IS, which
 * does not remove the walk entry, so the fault repeats with the PTE
 * unchanged. After livelock_faults such faults the detector reports
 * INV_LIVELOCK once and recovers (invalidates the CPU), and the access
 * completes. Variant 1: the walk entry was invalidated (a correct VAE1IS):
 * no fault, no violation. */
#define LIVELOCK_N 8

static void livelock_body(struct sim *s, struct sim_thread *t)
{
	struct one *o = t->arg;
	const struct pt_geom *g = &hw_of(s)->geom;
	uint64_t a = map_and_write(s);
	int d = leaf_depth(s);
	uint32_t tb[8];
	path_tables(s, task_of(t)->mm, a, tb);
	uint32_t f = clear_pte(s, task_of(t)->mm, a);
	uint32_t old = unlink_pte_table(s, task_of(t)->mm, a);	/* detached, empty, not freed */
	/* the page is mapped again through a new PTE table */
	uint32_t nt = frame_alloc(hw_of(s), FRAME_PGTABLE, d);
	tset_entry(s, tb[d - 1], pt_index(g, d - 1, a), pfn_pte(nt, PTE_VALID | PTE_TABLE | PTE_USER));
	tset_entry(s, nt, pt_index(g, d, a),
		   pfn_pte(f, PTE_VALID | PTE_USER | PTE_YOUNG | PTE_WRITE | PTE_DIRTY));
	/* the buggy flush: leaf only */
	inv(s, t->cpu, INV_VA_LEAF, a);
	if (o->variant == 1)
		inv(s, t->cpu, INV_VA_ALL, a);
	else
		assert_int_equal(walk_entry(s, t->cpu, d - 1, a)->frame, old);
	uint64_t faults0 = s->m.page_faults, vale0 = s->m.tlbi.vale1is;
	assert_int_equal(user_access(s, a, true), 0);	/* completes */
	o->n = s->m.page_faults - faults0;
	o->n2 = s->m.tlbi.vale1is - vale0;
	/* after the recovery the CPU walks the live tables */
	struct tc_entry *w = walk_entry(s, t->cpu, d - 1, a);
	assert_non_null(w);
	assert_int_equal(w->frame, nt);
	o->va = a;
	o->table = old;
	o->ran = 1;
}

static void test_livelock_fires_and_recovers(void **state)
{
	static const char *const profiles[] = {"falkor-46", "arm64-4k"};
	const int64_t ov[] = {P_livelock_faults, LIVELOCK_N, -1};
	for (size_t i = 0; i < 2; i++) {
		struct one o = {.variant = 0};
		struct sim *s;
		run_one(profiles[i], 4, livelock_body, &o, 0, &s, ov);
		assert_violation(s, INV_LIVELOCK);
		assert_int_equal(s->m.violations, 1);
		assert_int_equal(tsim_violation(s)->cpu, 0);
		assert_true(tsim_violation(s)->va == o.va);
		/* exactly livelock_faults faults, each "repaired" by a leaf-only
		 * VALE1IS that did not help */
		assert_int_equal(o.n, LIVELOCK_N);
		assert_true(o.n2 >= LIVELOCK_N - 1);
		tsim_free(s);
	}
}

static void test_livelock_quiet_with_correct_walk_cache(void **state)
{
	static const char *const profiles[] = {"falkor-46", "arm64-4k"};
	const int64_t ov[] = {P_livelock_faults, LIVELOCK_N, -1};
	for (size_t i = 0; i < 2; i++) {
		struct one o = {.variant = 1};
		struct sim *s;
		run_one(profiles[i], 4, livelock_body, &o, 0, &s, ov);
		assert_no_violation(s);
		assert_int_equal(o.n, 0);
		tsim_free(s);
	}
}

/* Rule: the detector wants livelock_faults faults in a row; with fewer
 * (threshold above what the access takes to be repaired) nothing is
 * reported. Here every fault is a real one on a different page. */
static void few_faults_body(struct sim *s, struct sim_thread *t)
{
	struct one *o = t->arg;
	uint64_t ps = hw_of(s)->geom.page_size;
	uint64_t a = sys_mmap(s, 0, 16 * ps, TLBSIM_MAP_PRIVATE);
	for (int i = 0; i < 16; i++)
		assert_int_equal(user_access(s, a + (uint64_t)i * ps, true), 0);
	o->n = s->m.page_faults;
	o->ran = 1;
}

static void test_livelock_quiet_for_distinct_faults(void **state)
{
	const int64_t ov[] = {P_livelock_faults, 2, -1};
	struct one o = {0};
	struct sim *s;
	run_one("falkor-46", 4, few_faults_body, &o, 0, &s, ov);
	assert_int_equal(o.n, 16);
	assert_no_violation(s);
	tsim_free(s);
}

/* ---- deliberate windows ---- */

/* x86: a CPU that ran the mm and went idle is lazy with the mm loaded. A
 * flush that skips it (no tables freed) bumps mm->context.tlb_gen, so its leaf
 * entries are unreachable: switch_mm will see tlb_gen behind and flush.
 * Freeing the page then is not I1 (variant 1: a real madvise(DONTNEED) from
 * CPU 0; variant 2: PTE cleared + tlb_gen bumped by hand). Variant 0: the
 * same lazy leaf without any flush (tlb_gen equal) is reachable: I1. */
struct lazy {
	int variant;
	struct sim_thread *writer;
	uint64_t page;
	uint32_t frame;
	uint32_t tag;
	int ran;
	int lazy_leaf_survived;
};

static void lazy_writer(struct sim *s, struct sim_thread *t)
{
	struct lazy *st = t->arg;
	st->page = map_and_write(s);
	st->frame = pte_pfn(*pte_lookup(s, task_of(t)->mm, st->page));
	st->tag = machine_of(s)->arch->user_tag(s, t->cpu);
}

static void lazy_main(struct sim *s, struct sim_thread *t)
{
	struct lazy *st = t->arg;
	sim_join(s, st->writer);
	const struct arch_cpu *ac1 = arch_cpu(s, 1);
	assert_true(ac1->is_lazy);
	assert_true(ac1->loaded_mm == &task_of(t)->mm->context);
	assert_non_null(leaf_entry(s, 1, st->page, st->tag));
	if (st->variant == 1) {
		assert_int_equal(sys_madvise_dontneed(s, st->page, hw_of(s)->geom.page_size), 0);
		assert_int_equal(frame_of(hw_of(s), st->frame)->state, FRAME_FREE);
	} else {
		uint32_t f = clear_pte(s, task_of(t)->mm, st->page);
		assert_int_equal(f, st->frame);
		if (st->variant == 2)
			task_of(t)->mm->context.tlb_gen++;	/* a flush that skipped the lazy CPU */
		frame_of(hw_of(s), f)->refcount = 0;
		frame_free(hw_of(s), f);
	}
	/* the window really exists: CPU 1 still holds the leaf */
	st->lazy_leaf_survived = leaf_entry(s, 1, st->page, st->tag) != NULL;
	st->ran = 1;
}

static struct sim *run_lazy(struct lazy *st)
{
	struct sim *s = tsim_new("x86-24", 4, NESTED_FULLMM);
	st->writer = tsim_spawn(s, lazy_writer, st, 1);
	tsim_spawn(s, lazy_main, st, 0);
	tsim_run(s);
	assert_int_equal(st->ran, 1);
	return s;
}

static void test_window_x86_lazy_leaf_behind_tlb_gen_not_i1(void **state)
{
	for (int variant = 1; variant <= 2; variant++) {
		struct lazy st = {.variant = variant};
		struct sim *s = run_lazy(&st);
		assert_int_equal(st.lazy_leaf_survived, 1);
		if (s->m.violations)
			fail_msg("variant %d: unexpected %s", variant, tsim_violation(s)->text);
		assert_no_violation(s);
		tsim_free(s);
	}
}

static void test_window_x86_lazy_leaf_current_tlb_gen_is_i1(void **state)
{
	struct lazy st = {.variant = 0};
	struct sim *s = run_lazy(&st);
	assert_violation(s, INV_I1);
	assert_int_equal(tsim_violation(s)->cpu, 1);
	assert_int_equal(tsim_violation(s)->frame, st.frame);
	tsim_free(s);
}

/* arm64 W3: leaf entries tagged with the ASID of an mm that is no longer
 * live (users == 0) cannot be used before the ASID is recycled with a full
 * flush: freeing their frames is not I1. The live-ASID counterpart is
 * test_i1_data_fires_without_invalidation. */
static void dead_asid_body(struct sim *s, struct sim_thread *t)
{
	struct one *o = t->arg;
	uint64_t a = map_and_write(s);
	uint32_t f = clear_pte(s, task_of(t)->mm, a);
	tsim_mm(s, 0)->users = 0;
	frame_of(hw_of(s), f)->refcount = 0;
	frame_free(hw_of(s), f);
	tsim_mm(s, 0)->users = 1;
	/* the entry is really still cached */
	assert_non_null(leaf_entry(s, t->cpu, a, tsim_mm(s, 0)->context.asid));
	o->ran = 1;
}

static void test_window_arm64_dead_asid_not_i1(void **state)
{
	static const char *const profiles[] = {"falkor-46", "arm64-4k"};
	for (size_t i = 0; i < 2; i++) {
		struct one o = {0};
		struct sim *s;
		run_one(profiles[i], 4, dead_asid_body, &o, 2, &s, NULL);
		assert_no_violation(s);
		tsim_free(s);
	}
}

/* ---- seed 001: writeback (I3) and remote stale read-only entries (I6) ---- */

struct wb {
	int stale;		/* 1: clean the PTE without the flush */
	volatile int stage;
	uint64_t page;
	uint32_t frame;
	int wrote, ran;
};

static void wb_writer(struct sim *s, struct sim_thread *t)
{
	struct wb *st = t->arg;
	uint64_t ps = hw_of(s)->geom.page_size;
	struct inode *f = sys_tmpfile(s, &fs_ext4, ps);
	st->page = sys_mmap_file(s, 0, ps, TLBSIM_MAP_SHARED, f, 0);
	assert_int_equal(user_access(s, st->page, true), 0);
	assert_int_equal(user_access(s, st->page, true), 0);	/* a TLB hit now */
	st->frame = find_get_page(s, f, 0);
	struct tc_entry *e = leaf_entry(s, t->cpu, st->page, machine_of(s)->arch->user_tag(s, t->cpu));
	assert_non_null(e);
	assert_true(e->perm & PTE_WRITE);
	st->stage = 1;
	for (int i = 0; st->stage < 2; i++) {
		assert_true(i < 100000);
		sim_step(s, YP_USER, 100);
	}
	assert_int_equal(user_access(s, st->page, true), 0);
	st->wrote = 1;
}

/* CPU 1 writes the file back: page_mkclean (write-protect, clean, flush),
 * or - the buggy variant - the same without the flush */
static void wb_cleaner(struct sim *s, struct sim_thread *t)
{
	struct wb *st = t->arg;
	for (int i = 0; st->stage < 1; i++) {
		assert_true(i < 100000);
		sim_step(s, YP_USER, 100);
	}
	struct mm_struct *mm = tsim_mm(s, 0);
	struct vm_area_struct *vma = find_vma(mm, st->page);
	if (!st->stale) {
		sys_fsync(s, vma->file);
	} else {
		struct hw *hw = hw_of(s);
		pte_t *ptep = pte_lookup(s, mm, st->page);
		*ptep = fmt_pte_mkclean(hw->fmt, *ptep & ~(pte_t)PTE_WRITE);
		frame_of(hw, st->frame)->pgflags &= (uint8_t)~PG_DIRTY;
		struct kernel *k = kernel_of(s);
		k->hooks->page_cleaned(k->hooks_ctx, st->frame);
	}
	st->stage = 2;
	st->ran = 1;
}

/* Rule (I3 for writeback, clear_page_dirty_for_io -> page_mkclean): once
 * writeback has cleaned a page, a write through a CPU's still-cached
 * writable entry is lost. page_mkclean's flush removes that entry, so the
 * next write faults (wp_page_shared -> page_mkwrite) and re-dirties the page:
 * no violation. Without the flush the write goes through the stale entry. */
static void test_i3_writeback(void **state)
{
	for (int stale = 0; stale <= 1; stale++) {
		struct wb st = {.stale = stale};
		struct sim *s = tsim_new("arm64-4k", 4, NESTED_FULLMM);
		tsim_spawn(s, wb_writer, &st, 0);
		tsim_spawn(s, wb_cleaner, &st, 1);
		tsim_run(s);
		assert_int_equal(st.wrote + st.ran, 2);
		if (stale) {
			assert_violation(s, INV_I3);
			assert_true(tsim_violation(s)->va == st.page);
			assert_non_null(strstr(tsim_violation(s)->text, "writeback"));
		} else {
			assert_no_violation(s);
			assert_true(frame_of(hw_of(s), st.frame)->pgflags & PG_DIRTY);
		}
		tsim_free(s);
	}
}

struct ro {
	enum spurious_flush_policy pol;
	volatile int stage;
	uint64_t page;
	uint64_t faults;
	int ran;
};

/* CPU 1: reads the page (caches the writable-clean PTE read-only: RDONLY),
 * waits for CPU 0's upgrade, then writes */
static void ro_reader(struct sim *s, struct sim_thread *t)
{
	struct ro *st = t->arg;
	for (int i = 0; st->stage < 1; i++) {
		assert_true(i < 100000);
		sim_step(s, YP_USER, 100);
	}
	assert_int_equal(user_access(s, st->page, false), 0);
	st->stage = 2;
	for (int i = 0; st->stage < 3; i++) {
		assert_true(i < 100000);
		sim_step(s, YP_USER, 100);
	}
	uint64_t f0 = s->m.page_faults;
	assert_int_equal(user_access(s, st->page, true), 0);
	st->faults = s->m.page_faults - f0;
	st->ran = 1;
}

/* CPU 0: maps the tmpfs page, then makes the PTE dirty and writable and
 * flushes only its own TLB - what a write fault does with the upgrade made
 * local (cb1fa2e99955) */
static void ro_upgrader(struct sim *s, struct sim_thread *t)
{
	struct ro *st = t->arg;
	uint64_t ps = hw_of(s)->geom.page_size;
	struct inode *f = sys_tmpfile(s, &fs_tmpfs, ps);
	st->page = sys_mmap_file(s, 0, ps, TLBSIM_MAP_SHARED, f, 0);
	st->stage = 1;
	for (int i = 0; st->stage < 2; i++) {
		assert_true(i < 100000);
		sim_step(s, YP_USER, 100);
	}
	pte_t *ptep = pte_lookup(s, task_of(t)->mm, st->page);
	assert_true(*ptep & PTE_RDONLY);
	*ptep = fmt_pte_mkdirty(hw_of(s)->fmt, *ptep);
	inv(s, t->cpu, INV_VA_LEAF, st->page);
	st->stage = 3;
}

/* Rule (I6 with a local upgrade, cb1fa2e99955): a CPU left with a stale
 * read-only entry after another CPU made the PTE writable and dirty with a
 * local flush takes a permission fault; the handler finds nothing to change
 * (the spurious branch) and only a flush of its own TLB there heals it:
 * `local` and `broadcast` do, one fault. A no-op spurious hook (v5.10) never
 * heals it: that kernel relies on the upgrade being broadcast, so pairing
 * it with a local upgrade livelocks -> I6. */
static void test_livelock_remote_stale_readonly(void **state)
{
	const int64_t ov[] = {P_livelock_faults, LIVELOCK_N, -1};
	enum spurious_flush_policy pols[] = {SPURIOUS_LOCAL, SPURIOUS_BROADCAST, SPURIOUS_NOOP};
	for (int i = 0; i < 3; i++) {
		struct ro st = {.pol = pols[i]};
		struct sim *s = tsim_new_p("arm64-4k", 4, NESTED_FULLMM, ov);
		machine_of(s)->policy.spurious_flush = st.pol;
		tsim_spawn(s, ro_upgrader, &st, 0);
		tsim_spawn(s, ro_reader, &st, 1);
		tsim_run(s);
		assert_int_equal(st.ran, 1);
		if (st.pol == SPURIOUS_NOOP) {
			assert_violation(s, INV_LIVELOCK);
			assert_int_equal(st.faults, LIVELOCK_N);
		} else {
			assert_no_violation(s);
			assert_int_equal(st.faults, 1);
		}
		tsim_free(s);
	}
}

/* x86 spec_walks=1 (kernel-model 8.6) with two processes: only a CPU whose
 * CR3 loads the table's mm can walk into it speculatively. Process B runs
 * on CPU 1 the whole time (it never flushes its paging-structure caches);
 * process A on CPU 0 munmaps a page and frees its page tables: not I1 for
 * CPU 1. (The same with A's own lazy CPU is I1: test_explore
 * mmap5_x86_prefix_spec_walks_lazy_i1.) */
struct twoproc {
	volatile int done;
	int ran;
	uint64_t tables_freed;
};

static void spec_b(struct sim *s, struct sim_thread *t)
{
	struct twoproc *p = t->arg;
	while (!p->done)
		sim_step(s, YP_USER, 1000);
}

static void spec_a(struct sim *s, struct sim_thread *t)
{
	struct twoproc *p = t->arg;
	sim_step(s, YP_USER, 10000);	/* B runs on CPU 1 */
	assert_ptr_equal(arch_cpu(s, 1)->loaded_mm, &tsim_mm(s, 1)->context);
	uint64_t a = map_and_write(s);
	uint64_t t0 = s->m.tables_freed;
	assert_int_equal(sys_munmap(s, a, hw_of(s)->geom.page_size), 0);
	p->tables_freed = s->m.tables_freed - t0;
	p->done = 1;
	p->ran = 1;
}

static void test_spec_walk_other_process_not_i1(void **state)
{
	(void)state;
	const int64_t ov[] = {P_spec_walks, 1, -1};
	struct sim *s = tsim_new_p("x86-24", 4, NESTED_FULLMM, ov);
	struct twoproc p = {0};
	tsim_spawn_mm(s, spec_a, &p, tsim_mm(s, 0), 0);
	tsim_spawn_mm(s, spec_b, &p, mm_alloc(s), 1);
	tsim_run(s);
	assert_int_equal(p.ran, 1);
	assert_true(p.tables_freed >= 1);
	if (s->m.violations)
		fail_msg("unexpected %s", tsim_violation(s)->text);
	assert_no_violation(s);
	tsim_free(s);
}

/* arm64 ASID reuse. mm A (ASID 1) writes a page on CPU 2; its PTE is
 * cleared without a flush, so the leaf stays cached there. Then CPU 0
 * switches through other mms until the 7 ASIDs of asid_bits=3 run out (or
 * not), and A's page is freed. */
enum reuse_variant {
	REUSE_AFTER_ROLLOVER,	/* CPU 2 left A first; A's number went to another mm */
	REUSE_NO_ROLLOVER,	/* CPU 2 left A; no rollover: A still holds ASID 1 */
	REUSE_CPU_KEEPS_MM,	/* CPU 2 still runs A across the rollover (reserved) */
};

static void reuse_writer(struct sim *s, struct sim_thread *t)
{
	struct one *o = t->arg;
	o->va = map_and_write(s);
	o->frame = clear_pte(s, task_of(t)->mm, o->va);
	o->ran = 1;
}

static struct sim *run_reuse(enum reuse_variant v, struct one *o)
{
	const int64_t ov[] = {P_asid_bits, 3, -1};
	struct sim *s;
	run_one("falkor-46", 4, reuse_writer, o, 2, &s, ov);
	const struct arch_ops *arch = machine_of(s)->arch;
	struct mm_struct *a = tsim_mm(s, 0);
	assert_int_equal(a->context.asid, 1);
	for (int i = 1; i <= 8; i++)
		assert_non_null(mm_alloc(s));
	int next = 1;
	if (v != REUSE_CPU_KEEPS_MM)
		arch->switch_mm(s, 2, &tsim_mm(s, next++)->context);	/* ASID 2 */
	/* ASIDs up to 7, then (but for REUSE_NO_ROLLOVER) one mm more */
	int last = v == REUSE_NO_ROLLOVER ? 6 : 7;
	while (next <= last)
		arch->switch_mm(s, 0, &tsim_mm(s, next++)->context);
	assert_int_equal(s->m.asid_rollovers, v == REUSE_NO_ROLLOVER ? 0 : 1);
	if (v == REUSE_AFTER_ROLLOVER) {
		/* the last mm got A's number in the new generation */
		assert_int_equal(tsim_mm(s, last)->context.asid, 1);
		assert_int_equal(tsim_mm(s, last)->context.asid_gen, 2);
	}
	/* A's leaf really is still on CPU 2 */
	assert_non_null(leaf_entry(s, 2, o->va, 1));
	frame_of(hw_of(s), o->frame)->refcount = 0;
	frame_free(hw_of(s), o->frame);
	return s;
}

static void test_window_arm64_reused_asid_not_i1(void **state)
{
	(void)state;
	struct one o = {0};
	struct sim *s = run_reuse(REUSE_AFTER_ROLLOVER, &o);
	assert_true(arch_cpu(s, 2)->flush_pending);
	if (s->m.violations)
		fail_msg("unexpected %s", tsim_violation(s)->text);
	assert_no_violation(s);
	tsim_free(s);
}

static void test_window_arm64_live_asid_is_i1(void **state)
{
	(void)state;
	for (int v = REUSE_NO_ROLLOVER; v <= REUSE_CPU_KEEPS_MM; v++) {
		struct one o = {0};
		struct sim *s = run_reuse((enum reuse_variant)v, &o);
		assert_violation(s, INV_I1);
		assert_int_equal(tsim_violation(s)->cpu, 2);
		assert_int_equal(tsim_violation(s)->frame, o.frame);
		tsim_free(s);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_oracle_frame_state_starts_zero),
		cmocka_unit_test(test_i1_data_fires_without_invalidation),
		cmocka_unit_test(test_i1_data_quiet_after_invalidation),
		cmocka_unit_test(test_i1_found_past_an_older_entry),
		cmocka_unit_test(test_i5_on_any_cpu),
		cmocka_unit_test(test_i1_table_fires_at_rcu_handoff),
		cmocka_unit_test(test_i1_table_quiet_after_walk_invalidation),
		cmocka_unit_test(test_i1_realized_fires_on_reused_table),
		cmocka_unit_test(test_i1_realized_quiet_when_walk_entry_gone),
		cmocka_unit_test(test_i2_fires_for_stale_old_translation),
		cmocka_unit_test(test_i2_quiet_cases),
		cmocka_unit_test(test_i3_fires_on_write_through_stale_dirty_entry),
		cmocka_unit_test(test_i3_quiet_cases),
		cmocka_unit_test(test_stale_walk_fires),
		cmocka_unit_test(test_stale_walk_quiet_cases),
		cmocka_unit_test(test_livelock_fires_and_recovers),
		cmocka_unit_test(test_livelock_quiet_with_correct_walk_cache),
		cmocka_unit_test(test_livelock_quiet_for_distinct_faults),
		cmocka_unit_test(test_window_x86_lazy_leaf_behind_tlb_gen_not_i1),
		cmocka_unit_test(test_window_x86_lazy_leaf_current_tlb_gen_is_i1),
		cmocka_unit_test(test_window_arm64_dead_asid_not_i1),
		cmocka_unit_test(test_i3_writeback),
		cmocka_unit_test(test_livelock_remote_stale_readonly),
		cmocka_unit_test(test_spec_walk_other_process_not_i1),
		cmocka_unit_test(test_window_arm64_reused_asid_not_i1),
		cmocka_unit_test(test_window_arm64_live_asid_is_i1),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
