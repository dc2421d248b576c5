/*
 * test_arm64_asid.c - the arm64 ASID allocator (src/arch/arm64.c) against
 * kernel-model.md 3.6 and arch/arm64/mm/context.c (v5.8).
 *
 * Rules checked:
 *  - an mm gets its ASID at its first switch_mm (init_new_context sets
 *    context.id = 0), searching the map upwards from the last ASID handed
 *    out; ASID 0 is never handed out; asid_bits = 3 gives 7 user ASIDs
 *    (with KPTI they come in pairs: even numbers only, 3 usable with 3 bits);
 *  - switch_mm to the mm the CPU already runs does nothing; a switch with
 *    the mm's generation current and the CPU's active ASID set is the fast
 *    path (no allocation, no flush);
 *  - no free ASID: flush_context starts a new generation, reserves every
 *    CPU's active ASID (or the one it reserved at the previous rollover if it
 *    has not switched since), rebuilds the map from them and marks every CPU
 *    flush-pending; asid_rollovers counts it;
 *  - new_context for an mm of an old generation keeps its number if some
 *    CPU reserved it (all such reservations move to the new generation) or
 *    if the number is still free, else takes a free one;
 *  - a flush-pending CPU does one local full flush (TLBI VMALLE1, counted in
 *    tlbi.local) at its next switch_mm into another mm, before it runs with
 *    the new context, and only one however many rollovers it missed;
 *  - end to end with processes rotating on a CPU by time slices: after a
 *    rollover an ASID number is reused, and no access ever translates
 *    through another process's stale entry; an mm that keeps running on a
 *    CPU across rollovers keeps its ASID and nobody else gets it; no
 *    invariant violation.
 */
#include "test_util.h"

#define H 0x100000000000ull

static uint64_t gen(struct sim *s)
{
	return machine_of(s)->asid.generation;
}

/* switch cpu to mm i; returns the local flushes it caused */
static uint64_t sw(struct sim *s, int cpu, int i)
{
	uint64_t l0 = s->m.tlbi.local;
	machine_of(s)->arch->switch_mm(s, cpu, &tsim_mm(s, i)->context);
	const struct arch_cpu *ac = arch_cpu(s, cpu);
	assert_ptr_equal(ac->ttbr0_mm, &tsim_mm(s, i)->context);
	assert_int_equal(ac->ttbr0_asid, tsim_mm(s, i)->context.asid);
	assert_false(ac->flush_pending);
	return s->m.tlbi.local - l0;
}

static void want_asid(struct sim *s, int i, uint32_t asid, uint64_t g)
{
	const mm_context_t *c = &tsim_mm(s, i)->context;
	if (c->asid != asid || c->asid_gen != g)
		fail_msg("mm %d: ASID %u generation %llu, want %u generation %llu", i, c->asid,
			 (unsigned long long)c->asid_gen, asid, (unsigned long long)g);
}

/* a leaf TLB entry on cpu (any frame), so a flush shows */
static void plant_entry(struct sim *s, int cpu, uint32_t tag)
{
	struct hw *hw = hw_of(s);
	uint32_t f = frame_alloc(hw, FRAME_DATA, 0);
	assert_true(f != NO_FRAME);
	tc_fill(hw, &hw->cpu[cpu].tlb, 0x1234 + cpu, hw->geom.levels - 1, tag, f, 0);
}

static void test_allocation_and_rollover(void **state)
{
	(void)state;
	const int64_t ov[] = {P_asid_bits, 3, -1};
	struct sim *s = tsim_new_p("falkor-46", 4, NESTED_FULLMM, ov);
	struct machine *mc = machine_of(s);
	for (int i = 1; i < 10; i++)
		assert_non_null(mm_alloc(s));
	assert_int_equal(mc->asid.nr, 8);
	assert_int_equal(gen(s), 1);
	for (int i = 0; i < 10; i++)
		want_asid(s, i, 0, 0);		/* nothing before the first switch */

	/* first switches: ASIDs 1, 2, ... in switch order, no flush */
	assert_int_equal(sw(s, 0, 0), 0);
	want_asid(s, 0, 1, 1);
	assert_int_equal(sw(s, 1, 1), 0);
	want_asid(s, 1, 2, 1);
	for (int i = 2; i <= 6; i++) {
		assert_int_equal(sw(s, 0, i), 0);
		want_asid(s, i, (uint32_t)i + 1, 1);
	}
	/* back to a CPU's current mm, or a fast-path switch: nothing changes */
	assert_int_equal(sw(s, 0, 6), 0);
	assert_int_equal(sw(s, 0, 0), 0);
	assert_int_equal(sw(s, 0, 6), 0);
	want_asid(s, 0, 1, 1);
	assert_int_equal(s->m.asid_rollovers, 0);
	for (int c = 0; c < 4; c++)
		plant_entry(s, c, 5);

	/* mm 7: all 7 ASIDs taken -> rollover. CPU 0 ran mm 6 (ASID 7), CPU 1
	 * runs mm 1 (ASID 2), CPUs 2 and 3 ran nothing: the new map holds 7, 2
	 * and 0; mm 7 gets the first free one, 1 (mm 0's old number). CPU 0
	 * flushes at once (one local TLBI), every other CPU owes one. */
	assert_int_equal(sw(s, 0, 7), 1);
	assert_int_equal(s->m.asid_rollovers, 1);
	assert_int_equal(gen(s), 2);
	want_asid(s, 7, 1, 2);
	assert_int_equal(hw_of(s)->cpu[0].tlb.ndense, 0);
	for (int c = 1; c < 4; c++) {
		assert_true(arch_cpu(s, c)->flush_pending);
		assert_int_equal(hw_of(s)->cpu[c].tlb.ndense, 1);
	}
	assert_int_equal(machine_of(s)->asid.reserved[0], asid_ctxid(1, 7));
	assert_int_equal(machine_of(s)->asid.reserved[1], asid_ctxid(1, 2));
	assert_int_equal(machine_of(s)->asid.reserved[2], 0);
	/* mm 1 keeps running on CPU 1 with its ASID; CPU 1 has not flushed */
	want_asid(s, 1, 2, 1);
	assert_int_equal(arch_cpu(s, 1)->ttbr0_asid, 2);

	/* mm 1 on CPU 2: its number was reserved -> kept, now generation 2;
	 * CPU 2 does the flush it owes */
	assert_int_equal(sw(s, 2, 1), 1);
	want_asid(s, 1, 2, 2);
	assert_int_equal(hw_of(s)->cpu[2].tlb.ndense, 0);
	assert_int_equal(machine_of(s)->asid.reserved[1], asid_ctxid(2, 2));
	/* mm 6 (reserved by CPU 0) keeps 7 too; CPU 3 flushes */
	assert_int_equal(sw(s, 3, 6), 1);
	want_asid(s, 6, 7, 2);
	/* mm 5's number (6) is still free: it keeps it */
	assert_int_equal(sw(s, 0, 5), 0);
	want_asid(s, 5, 6, 2);
	/* mm 0's number went to mm 7: the next free one after the last
	 * handed out (1) is 3 */
	assert_int_equal(sw(s, 0, 0), 0);
	want_asid(s, 0, 3, 2);
	/* CPU 1 leaves mm 1: its one flush, before it runs mm 7 */
	assert_true(arch_cpu(s, 1)->flush_pending);
	assert_int_equal(sw(s, 1, 7), 1);
	assert_int_equal(hw_of(s)->cpu[1].tlb.ndense, 0);
	/* every CPU flushed exactly once; later switches flush nothing */
	assert_int_equal(s->m.tlbi.local, 4);
	assert_int_equal(sw(s, 1, 0), 0);
	assert_int_equal(sw(s, 2, 5), 0);
	assert_int_equal(sw(s, 3, 7), 0);
	assert_int_equal(s->m.tlbi.local, 4);

	/* numbers in the current generation are unique */
	for (int i = 0; i < 10; i++)
		for (int j = i + 1; j < 10; j++) {
			const mm_context_t *a = &tsim_mm(s, i)->context, *b = &tsim_mm(s, j)->context;
			if (a->asid_gen == gen(s) && b->asid_gen == gen(s))
				assert_int_not_equal(a->asid, b->asid);
		}
	tsim_free(s);
}

/* A CPU that misses two rollovers (it never switches) keeps its reserved
 * ASID through both and flushes once when it finally switches. */
static void test_missed_rollovers_one_flush(void **state)
{
	(void)state;
	const int64_t ov[] = {P_asid_bits, 2, -1};	/* 3 ASIDs */
	struct sim *s = tsim_new_p("arm64-4k", 2, NESTED_FULLMM, ov);
	for (int i = 1; i < 8; i++)
		assert_non_null(mm_alloc(s));
	sw(s, 1, 0);			/* CPU 1 runs mm 0 (ASID 1) throughout */
	for (int i = 1; i < 8; i++)
		sw(s, 0, i);
	assert_true(s->m.asid_rollovers >= 2);
	want_asid(s, 0, 1, 1);		/* never re-switched: still generation 1 */
	for (int i = 1; i < 8; i++)
		if (tsim_mm(s, i)->context.asid_gen == gen(s))
			assert_int_not_equal(tsim_mm(s, i)->context.asid, 1);
	assert_int_equal(machine_of(s)->asid.reserved[1], asid_ctxid(1, 1));
	uint64_t l0 = s->m.tlbi.local;
	assert_int_equal(l0, s->m.asid_rollovers);	/* CPU 0, once per rollover */
	assert_int_equal(sw(s, 1, 7), 1);
	assert_int_equal(sw(s, 1, 0), 0);
	assert_int_equal(s->m.tlbi.local, l0 + 1);
	tsim_free(s);
}

/* KPTI: ASIDs come in pairs (kernel ASID even, user ASID odd); the allocator
 * hands out even numbers, 2^(bits-1) - 1 of them. */
static void test_kpti_pairs(void **state)
{
	(void)state;
	const int64_t ov[] = {P_asid_bits, 4, P_kpti, 1, -1};
	struct sim *s = tsim_new_p("falkor-46", 2, NESTED_FULLMM, ov);
	for (int i = 1; i < 8; i++)
		assert_non_null(mm_alloc(s));
	for (int i = 0; i < 7; i++) {
		sw(s, 0, i);
		want_asid(s, i, 2u * ((uint32_t)i + 1), 1);
	}
	assert_int_equal(s->m.asid_rollovers, 0);
	sw(s, 0, 7);
	assert_int_equal(s->m.asid_rollovers, 1);
	want_asid(s, 7, 2, 2);
	assert_int_equal(arm64_user_asids(4, 1), 7);
	assert_int_equal(arm64_user_asids(3, 0), 7);
	assert_int_equal(arm64_user_asids(16, 0), 65535);
	tsim_free(s);
}

/* ---- processes rotating on a CPU across rollovers ---- */

#define NPROC 10
#define ROUNDS 3
#define SLICE 1000000
#define STEP 100000

struct rot {
	int finished;
	int wrong;		/* accesses that did not translate to the own frame */
	int pending_bad;	/* a flush-pending CPU ran a current-generation mm */
	int reserved_bad;	/* the long runner's ASID held by another mm */
	int long_asid_changed;
	uint32_t long_asid;
	struct mm_struct *long_mm;
	struct mm_struct *late_mm;
	int late_ran;
};

static void check_own(struct sim *s, struct sim_thread *t, struct rot *r)
{
	int cpu = t->cpu;
	struct mm_struct *mm = task_of(t)->mm;
	const struct arch_cpu *ac = arch_cpu(s, cpu);
	assert_ptr_equal(ac->ttbr0_mm, &mm->context);
	if (ac->flush_pending && mm->context.asid_gen == gen(s))
		r->pending_bad++;
	uint32_t want = tsim_pte_frame(s, mm, H);
	if (want == NO_FRAME || tsim_translate(s, cpu, mm, H) != want)
		r->wrong++;
	/* while the long runner runs on CPU 1, its number is nobody else's */
	struct kernel *k = kernel_of(s);
	for (int i = 0; r->long_mm && i < k->nr_mms; i++) {
		const mm_context_t *c = &k->mms[i]->context;
		if (k->mms[i] != r->long_mm && c->asid_gen == gen(s) && c->asid == r->long_asid)
			r->reserved_bad++;
	}
}

static void rot_proc(struct sim *s, struct sim_thread *t)
{
	struct rot *r = t->arg;
	assert_true(sys_mmap(s, H, hw_of(s)->geom.page_size, TLBSIM_MAP_PRIVATE) == H);
	for (int round = 0; round < ROUNDS; round++) {
		assert_int_equal(user_access(s, H, true), 0);
		check_own(s, t, r);
		for (int k = 0; k < 10; k++) {
			sim_step(s, YP_USER, STEP);
			check_own(s, t, r);
		}
	}
	r->finished++;
}

static void late_proc(struct sim *s, struct sim_thread *t)
{
	struct rot *r = t->arg;
	assert_true(sys_mmap(s, H, hw_of(s)->geom.page_size, TLBSIM_MAP_PRIVATE) == H);
	assert_int_equal(user_access(s, H, true), 0);
	check_own(s, t, r);
	r->late_ran = 1;
}

static void long_runner(struct sim *s, struct sim_thread *t)
{
	struct rot *r = t->arg;
	struct mm_struct *mm = task_of(t)->mm;
	assert_true(sys_mmap(s, H, hw_of(s)->geom.page_size, TLBSIM_MAP_PRIVATE) == H);
	assert_int_equal(user_access(s, H, true), 0);
	r->long_mm = mm;
	r->long_asid = mm->context.asid;
	while (r->finished < NPROC) {
		sim_step(s, YP_USER, STEP);
		assert_int_equal(user_access(s, H, true), 0);
		check_own(s, t, r);
		if (mm->context.asid != r->long_asid ||
		    arch_cpu(s, t->cpu)->ttbr0_asid != r->long_asid)
			r->long_asid_changed++;
	}
	r->long_mm = NULL;
	/* a process that starts on CPU 1 after the rollovers: CPU 1's one flush */
	tsim_spawn_mm(s, late_proc, r, r->late_mm, t->cpu);
}

static void test_rollover_processes(void **state)
{
	(void)state;
	static const char *const profiles[] = {"falkor-46", "arm64-4k"};
	for (int pi = 0; pi < 2; pi++) {
		const int64_t ov[] = {P_asid_bits, 3, P_sched_slice_ns, SLICE, -1};
		struct sim *s = tsim_new_p(profiles[pi], 4, NESTED_FULLMM, ov);
		struct rot r = {0};
		/* mm 0: the long runner on CPU 1; NPROC processes on CPU 0 */
		tsim_spawn_mm(s, long_runner, &r, tsim_mm(s, 0), 1);
		for (int i = 0; i < NPROC; i++)
			tsim_spawn_mm(s, rot_proc, &r, mm_alloc(s), 0);
		r.late_mm = mm_alloc(s);
		tsim_run(s);
		assert_int_equal(r.finished, NPROC);
		assert_int_equal(r.late_ran, 1);
		/* 12 mms, 7 ASIDs, the rotation visits each of the 10 several
		 * times: more than one rollover, with numbers reused */
		assert_true(s->m.asid_rollovers >= 2);
		assert_true(s->m.context_switches >= NPROC * ROUNDS);
		assert_int_equal(r.wrong, 0);
		assert_int_equal(r.pending_bad, 0);
		assert_int_equal(r.reserved_bad, 0);
		assert_int_equal(r.long_asid_changed, 0);
		/* CPU 0 flushed once per rollover (it made them), CPU 1 once when
		 * the late process came; CPUs 2 and 3 never switched */
		assert_int_equal(s->m.tlbi.local, s->m.asid_rollovers + 1);
		assert_true(arch_cpu(s, 2)->flush_pending);
		if (s->m.violations)
			fail_msg("%s: %s", profiles[pi], tsim_violation(s)->text);
		tsim_free(s);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_allocation_and_rollover),
		cmocka_unit_test(test_missed_rollovers_one_flush),
		cmocka_unit_test(test_kpti_pairs),
		cmocka_unit_test(test_rollover_processes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
