/*
 * test_clear_refs.c - /proc/PID/clear_refs (src/mm/task_mmu.c,
 * fs/proc/task_mmu.c v5.1 + the knobs clear_refs and tlb_flush_cond).
 *
 * Rules checked:
 *  - x86: writing 4 write-protects every present PTE and clears its
 *    soft-dirty bit, keeping pfn and the dirty bit; the next write faults
 *    (wp_page_reuse) and pte_mkdirty() sets soft-dirty and write again;
 *  - arm64 has no soft-dirty tracking: writing 4 changes no PTE;
 *  - writing 1 / 2 / 3 clears the young bit of the present PTEs of all /
 *    anonymous / file-backed (here: shmem) VMAs only; 5 is a no-op; any
 *    other value is EINVAL (-1);
 *  - what each policy emits for a soft-dirty clear of an mm that another
 *    CPU runs (x86): clear_refs=gather with tlb_flush_cond=end - the fullmm
 *    gather's finish flushes the whole mm (a full flush on each of the two
 *    CPUs, one IPI to the other); gather with bits (0758cd830494) - nothing at all, the
 *    other CPU keeps its writable entry, and the checker reports I2 at the
 *    return; flush_mm (912efa17e512) - flush_tlb_mm: a full flush and the
 *    IPI, whatever tlb_flush_cond says. Aging (1) under flush_mm flushes
 *    nothing. arm64: gather with end flushes nothing either (tlb_flush()
 *    skips a fullmm gather that freed no tables), flush_mm is one ASIDE1IS;
 *  - tlb_flush_cond=bits still flushes a gather that cleared PTEs (munmap);
 *  - I3: after a soft-dirty clear returned, a write through a cached
 *    writable entry to a page whose PTE has no soft-dirty bit is reported
 *    (the write the tracker will never see); the same write after the
 *    entry was flushed faults, sets the bit and is not reported.
 */
#include "test_util.h"

static const int64_t no_kpti[] = {P_kpti, 0, -1};

/* ---- one task: the PTE bits ---- */

struct single {
	pte_t before, cleared, rewritten, anon_after[4], shm_after[4];
	int ret_bad0, ret_bad6, ret_rss, write_after;
};

static void softdirty_body(struct sim *s, struct sim_thread *t)
{
	struct single *x = t->arg;
	struct mm_struct *mm = task_of(t)->mm;
	uint64_t a = sys_mmap(s, 0, hw_of(s)->geom.page_size, TLBSIM_MAP_PRIVATE);
	assert_int_equal(user_access(s, a, true), 0);
	x->before = *pte_lookup(s, mm, a);
	assert_int_equal(sys_clear_refs(s, 4), 0);
	x->cleared = *pte_lookup(s, mm, a);
	x->write_after = user_access(s, a, true);
	x->rewritten = *pte_lookup(s, mm, a);
	x->ret_bad0 = sys_clear_refs(s, 0);
	x->ret_bad6 = sys_clear_refs(s, 6);
	x->ret_rss = sys_clear_refs(s, 5);
}

static struct single run_softdirty(const char *profile, enum clear_refs_policy p)
{
	struct single x = {0};
	struct sim *s = tsim_new_p(profile, 2, NESTED_FULLMM, no_kpti);
	machine_of(s)->policy.clear_refs = p;
	tsim_spawn(s, softdirty_body, &x, 0);
	tsim_run(s);
	assert_int_equal(s->m.violations, 0);
	tsim_free(s);
	return x;
}

static void test_softdirty_x86(void **state)
{
	(void)state;
	for (int p = 0; p < CLEAR_REFS_COUNT; p++) {
		struct single x = run_softdirty("x86-24", (enum clear_refs_policy)p);
		/* a write fault made it writable, dirty and soft-dirty */
		assert_true(x.before & PTE_WRITE);
		assert_true(x.before & PTE_DIRTY);
		assert_true(x.before & PTE_SOFT_DIRTY);
		/* the clear: write-protected, soft-dirty gone, D and pfn kept */
		assert_false(x.cleared & PTE_WRITE);
		assert_false(x.cleared & PTE_SOFT_DIRTY);
		assert_true(x.cleared & PTE_DIRTY);
		assert_int_equal(pte_pfn(x.cleared), pte_pfn(x.before));
		/* the next write faults and sets both again */
		assert_int_equal(x.write_after, 0);
		assert_true(x.rewritten & PTE_WRITE);
		assert_true(x.rewritten & PTE_SOFT_DIRTY);
		assert_int_equal(pte_pfn(x.rewritten), pte_pfn(x.before));
		assert_int_equal(x.ret_bad0, -1);
		assert_int_equal(x.ret_bad6, -1);
		assert_int_equal(x.ret_rss, 0);
	}
}

static void test_softdirty_arm64_none(void **state)
{
	(void)state;
	struct single x = run_softdirty("arm64-4k", CLEAR_REFS_FLUSH_MM);
	assert_false(x.before & PTE_SOFT_DIRTY);
	assert_true(x.cleared == x.before);
	assert_int_equal(x.write_after, 0);
}

/* ---- aging: which VMAs lose their young bits ---- */

struct aging {
	pte_t anon[4], shm[4];	/* after touching, then after types 2, 3, 1 */
};

static void aging_body(struct sim *s, struct sim_thread *t)
{
	struct aging *x = t->arg;
	struct mm_struct *mm = task_of(t)->mm;
	uint64_t ps = hw_of(s)->geom.page_size;
	uint64_t a = sys_mmap(s, 0, ps, TLBSIM_MAP_PRIVATE);
	uint64_t b = sys_mmap(s, 0, ps, TLBSIM_MAP_SHARED);	/* shmem: file-backed */
	assert_int_equal(user_access(s, a, true), 0);
	assert_int_equal(user_access(s, b, true), 0);
	static const int types[] = {0, 2, 3, 1};
	for (int i = 0; i < 4; i++) {
		if (types[i]) {
			/* young again before each clear (the entries were not
			 * flushed, so set the bits by hand) */
			*pte_lookup(s, mm, a) |= PTE_YOUNG;
			*pte_lookup(s, mm, b) |= PTE_YOUNG;
			assert_int_equal(sys_clear_refs(s, types[i]), 0);
		}
		x->anon[i] = *pte_lookup(s, mm, a);
		x->shm[i] = *pte_lookup(s, mm, b);
	}
}

static void test_aging_by_type(void **state)
{
	(void)state;
	const char *profiles[] = {"x86-24", "arm64-4k"};
	for (int p = 0; p < 2; p++) {
		struct aging x = {0};
		struct sim *s = tsim_new_p(profiles[p], 2, NESTED_FULLMM, no_kpti);
		tsim_spawn(s, aging_body, &x, 0);
		tsim_run(s);
		tsim_free(s);
		assert_true(x.anon[0] & PTE_YOUNG);
		assert_true(x.shm[0] & PTE_YOUNG);
		/* 2: anonymous only */
		assert_false(x.anon[1] & PTE_YOUNG);
		assert_true(x.shm[1] & PTE_YOUNG);
		/* 3: file-backed only */
		assert_true(x.anon[2] & PTE_YOUNG);
		assert_false(x.shm[2] & PTE_YOUNG);
		/* 1: both; write permission untouched */
		assert_false(x.anon[3] & PTE_YOUNG);
		assert_false(x.shm[3] & PTE_YOUNG);
		assert_int_equal(x.anon[3] & PTE_WRITE, x.anon[0] & PTE_WRITE);
	}
}

/* ---- two CPUs: what each policy emits, and the checker ---- */

struct multi {
	int type;
	bool by_hand;			/* the clear without its flush, hooks by hand */
	uint64_t a;
	volatile int touched;
	volatile bool cleared, done;
	int write_after;
	bool writable_after;		/* CPU 1's entry after the clear returned */
	pte_t pte_after_write;
	struct tlbsim_metrics m0, m1;
};


static void writer_body(struct sim *s, struct sim_thread *t)
{
	struct multi *x = t->arg;
	TSIM_WAIT_UNTIL(s, x->a);
	assert_int_equal(user_access(s, x->a, true), 0);
	x->touched++;
	TSIM_WAIT_UNTIL(s, x->cleared);		/* stay on the CPU: not lazy */
	x->write_after = user_access(s, x->a, true);
	x->pte_after_write = *pte_lookup(s, task_of(t)->mm, x->a);
	x->done = true;
}

static void clearer_body(struct sim *s, struct sim_thread *t)
{
	struct multi *x = t->arg;
	struct mm_struct *mm = task_of(t)->mm;
	struct kernel *k = kernel_of(s);
	uint64_t a = sys_mmap(s, 0, hw_of(s)->geom.page_size, TLBSIM_MAP_PRIVATE);
	assert_int_equal(user_access(s, a, false), 0);
	x->a = a;
	TSIM_WAIT_UNTIL(s, x->touched >= 1);
	x->m0 = s->m;
	if (!x->by_hand) {
		assert_int_equal(sys_clear_refs(s, x->type), 0);
	} else {
		/* what a soft-dirty clear does to the PTE, with no flush, and
		 * only the I3 hook at the return (not the I2 look) */
		pte_t *p = pte_lookup(s, mm, a);
		*p &= ~(PTE_WRITE | PTE_SOFT_DIRTY);
		k->hooks->soft_dirty_clean(k->hooks_ctx, a, pte_pfn(*p));
	}
	x->m1 = s->m;
	x->writable_after = tsim_leaf_writable(s, 1, a);
	x->cleared = true;
	TSIM_WAIT_UNTIL(s, x->done);
}

static struct sim *run_multi(const char *profile, struct multi *x, enum clear_refs_policy p,
			     enum tlb_flush_cond_policy c)
{
	struct sim *s = tsim_new_p(profile, 2, NESTED_FULLMM, no_kpti);
	machine_of(s)->policy.clear_refs = p;
	machine_of(s)->policy.tlb_flush_cond = c;
	tsim_spawn(s, clearer_body, x, 0);
	tsim_spawn(s, writer_body, x, 1);
	tsim_run(s);
	return s;
}

static void test_emits_x86(void **state)
{
	(void)state;
	struct {
		enum clear_refs_policy p;
		enum tlb_flush_cond_policy c;
		int type;
		uint64_t full, ipis;
		bool stale;
	} cases[] = {
		{CLEAR_REFS_GATHER, TLB_FLUSH_COND_END, 4, 2, 1, false},
		{CLEAR_REFS_GATHER, TLB_FLUSH_COND_BITS, 4, 0, 0, true},
		{CLEAR_REFS_FLUSH_MM, TLB_FLUSH_COND_END, 4, 2, 1, false},
		{CLEAR_REFS_FLUSH_MM, TLB_FLUSH_COND_BITS, 4, 2, 1, false},
		{CLEAR_REFS_FLUSH_MM, TLB_FLUSH_COND_BITS, 1, 0, 0, true},
		{CLEAR_REFS_GATHER, TLB_FLUSH_COND_END, 1, 2, 1, false},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct multi x = {.type = cases[i].type};
		struct sim *s = run_multi("x86-24", &x, cases[i].p, cases[i].c);
		assert_int_equal(x.m1.flush_full - x.m0.flush_full, cases[i].full);
		assert_int_equal(x.m1.ipi_sent - x.m0.ipi_sent, cases[i].ipis);
		assert_int_equal(x.writable_after, cases[i].stale);
		assert_int_equal(x.write_after, 0);
		if (cases[i].type == 4 && cases[i].stale) {
			/* the write went through the stale entry: no fault, no
			 * soft-dirty bit; the checker saw it at the return */
			assert_false(x.pte_after_write & PTE_SOFT_DIRTY);
			assert_true(s->m.violations > 0);
			assert_int_equal(tsim_violation(s)->kind, INV_I2);
		} else {
			assert_int_equal(s->m.violations, 0);
			if (cases[i].type == 4)
				assert_true(x.pte_after_write & PTE_SOFT_DIRTY);
		}
		tsim_free(s);
	}
}

static void test_emits_arm64(void **state)
{
	(void)state;
	struct multi x = {.type = 4};
	struct sim *s = run_multi("arm64-4k", &x, CLEAR_REFS_GATHER, TLB_FLUSH_COND_END);
	assert_int_equal(x.m1.tlbi.aside1is - x.m0.tlbi.aside1is, 0);
	assert_int_equal(x.m1.tlbi.vae1is - x.m0.tlbi.vae1is, 0);
	assert_int_equal(s->m.violations, 0);	/* no PTE changed */
	tsim_free(s);
	struct multi y = {.type = 4};
	s = run_multi("arm64-4k", &y, CLEAR_REFS_FLUSH_MM, TLB_FLUSH_COND_BITS);
	assert_int_equal(y.m1.tlbi.aside1is - y.m0.tlbi.aside1is, 1);
	tsim_free(s);
}

/* I3 alone: the clear without its flush and without the I2 look */
static void test_i3_lost_to_tracker(void **state)
{
	(void)state;
	struct multi x = {.type = 4, .by_hand = true};
	struct sim *s = run_multi("x86-24", &x, CLEAR_REFS_FLUSH_MM, TLB_FLUSH_COND_BITS);
	assert_true(x.writable_after);
	assert_true(s->m.violations > 0);
	assert_int_equal(tsim_violation(s)->kind, INV_I3);
	assert_int_equal(tsim_violation(s)->cpu, 1);
	tsim_free(s);
}

/* tlb_flush_cond=bits still flushes what a gather cleared */
struct unmap {
	struct tlbsim_metrics m0, m1;
};

static void unmap_body(struct sim *s, struct sim_thread *t)
{
	struct unmap *x = t->arg;
	uint64_t ps = hw_of(s)->geom.page_size;
	uint64_t a = tsim_map_written(s, 1);
	x->m0 = s->m;
	assert_int_equal(sys_munmap(s, a, ps), 0);
	x->m1 = s->m;
}

static void test_bits_flushes_cleared(void **state)
{
	(void)state;
	for (int c = 0; c < TLB_FLUSH_COND_COUNT; c++) {
		struct unmap x = {0};
		struct sim *s = tsim_new_p("x86-24", 2, NESTED_FULLMM, no_kpti);
		machine_of(s)->policy.tlb_flush_cond = (enum tlb_flush_cond_policy)c;
		tsim_spawn(s, unmap_body, &x, 0);
		tsim_run(s);
		assert_true(x.m1.flush_local_pages + x.m1.flush_full >
			    x.m0.flush_local_pages + x.m0.flush_full);
		assert_int_equal(s->m.violations, 0);
		tsim_free(s);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_softdirty_x86),
		cmocka_unit_test(test_softdirty_arm64_none),
		cmocka_unit_test(test_aging_by_type),
		cmocka_unit_test(test_emits_x86),
		cmocka_unit_test(test_emits_arm64),
		cmocka_unit_test(test_i3_lost_to_tracker),
		cmocka_unit_test(test_bits_flushes_cleared),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
