/*
 * test_mprotect.c - mprotect(2) (src/mm/mprotect.c, mm/mprotect.c v5.1).
 *
 * Rules checked:
 *  - mprotect(PROT_READ) takes write permission away from every present PTE
 *    of the range (arm64: PTE_WRITE clear and AP[2] = RDONLY set; x86: RW
 *    clear), keeps pfn and dirtiness, and a later user write is refused
 *    (user_access -1: the SIGSEGV); a read still works;
 *  - change_protection flushes with flush_tlb_range(vma, start, end) when
 *    at least one PTE was present: the whole range, present or not. arm64:
 *    one VAE1IS per page (last_level = false in v5.1's flush_tlb_range),
 *    one ASIDE1IS from MAX_TLBI_OPS = PTRS_PER_PTE pages; x86:
 *    flush_tlb_mm_range - INVLPG per page up to the ceiling (33), a full
 *    flush above it, and one IPI per other CPU of mm_cpumask running the mm;
 *  - a range without a present PTE flushes nothing (no TLBI, no tlb_gen
 *    bump, no IPI);
 *  - mprotect(PROT_READ|PROT_WRITE) of a private mapping rewrites the PTEs
 *    (and flushes) but leaves them read-only (PAGE_COPY): the next write
 *    takes a write fault (do_wp_page -> wp_page_reuse) and then succeeds;
 *  - mprotect_fixup splits the VMA when the range covers it in part;
 *  - mm->tlb_flush_pending is raised while change_protection runs and back
 *    to 0 when mprotect returns (inc/dec_tlb_flush_pending);
 *  - after mprotect(PROT_READ) returns no other CPU holds a writable TLB
 *    entry for the range, and the checker (I2) reports nothing; the same
 *    PTE change made without the flush leaves CPU 1's writable entry in
 *    place and the checker reports I2 at the return.
 */
#include "test_util.h"

#define NP 4

static const int64_t no_kpti[] = {P_kpti, 0, -1};


static bool leaf_writable(struct sim *s, const struct tc_entry *e)
{
	if (!e)
		return false;
	return machine_is_x86(s) ? (e->perm & PTE_WRITE) != 0 : !(e->perm & PTE_RDONLY);
}

/* ---- one task: PTE bits, TLBI counts, write refused ---- */

struct single {
	uint64_t touched;		/* pages written before mprotect */
	uint64_t len_pages;		/* mprotect range */
	pte_t before[NP], after_ro[NP], after_rw[NP];
	int write_ro, read_ro, write_rw;
	int ret_ro, ret_rw;
	struct tlbsim_metrics m0, m1, m2;
	uint64_t gen0, gen1;
	int nvmas;
};

static void single_body(struct sim *s, struct sim_thread *t)
{
	struct single *x = t->arg;
	struct mm_struct *mm = task_of(t)->mm;
	uint64_t ps = hw_of(s)->geom.page_size;
	uint64_t len = x->len_pages * ps;
	uint64_t a = sys_mmap(s, 0, len, TLBSIM_MAP_PRIVATE);
	assert_true(a != TLBSIM_EINVAL_VA);
	for (uint64_t i = 0; i < x->touched; i++)
		assert_int_equal(user_access(s, a + i * ps, true), 0);
	for (int i = 0; i < NP && (uint64_t)i < x->touched; i++)
		x->before[i] = *pte_lookup(s, mm, a + (uint64_t)i * ps);
	x->m0 = s->m;
	x->gen0 = mm->context.tlb_gen;
	x->ret_ro = sys_mprotect(s, a, len, TLBSIM_PROT_READ);
	x->m1 = s->m;
	x->gen1 = mm->context.tlb_gen;
	x->nvmas = mm->nr_vmas;
	for (int i = 0; i < NP && (uint64_t)i < x->touched; i++)
		x->after_ro[i] = *pte_lookup(s, mm, a + (uint64_t)i * ps);
	x->write_ro = user_access(s, a, true);
	x->read_ro = user_access(s, a, false);
	x->ret_rw = sys_mprotect(s, a, len, TLBSIM_PROT_READ | TLBSIM_PROT_WRITE);
	x->m2 = s->m;
	for (int i = 0; i < NP && (uint64_t)i < x->touched; i++)
		x->after_rw[i] = *pte_lookup(s, mm, a + (uint64_t)i * ps);
	x->write_rw = user_access(s, a, true);
}

static struct single run_single(const char *profile, uint64_t touched, uint64_t len_pages)
{
	struct single x = {.touched = touched, .len_pages = len_pages};
	struct sim *s = tsim_new_p(profile, 2, NESTED_FULLMM, no_kpti);
	tsim_spawn(s, single_body, &x, 0);
	tsim_run(s);
	assert_int_equal(s->m.violations, 0);
	tsim_free(s);
	return x;
}

static void test_wrprotect_arm64(void **state)
{
	(void)state;
	/* 2 of 4 pages present: every present PTE loses write permission */
	struct single x = run_single("arm64-4k", 2, NP);
	assert_int_equal(x.ret_ro, 0);
	for (int i = 0; i < 2; i++) {
		assert_true(x.before[i] & PTE_WRITE);
		assert_false(x.before[i] & PTE_RDONLY);
		assert_false(x.after_ro[i] & PTE_WRITE);
		assert_true(x.after_ro[i] & PTE_RDONLY);
		assert_true(x.after_ro[i] & PTE_DIRTY);		/* dirtiness kept */
		assert_int_equal(pte_pfn(x.after_ro[i]), pte_pfn(x.before[i]));
	}
	/* the flush: the whole 4-page range, VAE1IS per page, nothing else */
	assert_int_equal(x.m1.tlbi.vae1is - x.m0.tlbi.vae1is, NP);
	assert_int_equal(x.m1.tlbi.vale1is - x.m0.tlbi.vale1is, 0);
	assert_int_equal(x.m1.tlbi.aside1is - x.m0.tlbi.aside1is, 0);
	/* the write is refused, the read is not */
	assert_int_equal(x.write_ro, -1);
	assert_int_equal(x.read_ro, 0);
	/* RW again: the present PTEs are rewritten (and flushed) but stay
	 * read-only (PAGE_COPY); the write then faults and succeeds */
	assert_int_equal(x.ret_rw, 0);
	assert_int_equal(x.m2.tlbi.vae1is - x.m1.tlbi.vae1is, NP);
	assert_false(x.after_rw[0] & PTE_WRITE);
	assert_int_equal(x.write_rw, 0);
	assert_int_equal(x.nvmas, 1);
}

static void test_wrprotect_x86(void **state)
{
	(void)state;
	struct single x = run_single("x86-24", 2, NP);
	for (int i = 0; i < 2; i++) {
		assert_true(x.before[i] & PTE_WRITE);
		assert_false(x.after_ro[i] & PTE_WRITE);
		assert_true(x.after_ro[i] & PTE_DIRTY);
		assert_int_equal(pte_pfn(x.after_ro[i]), pte_pfn(x.before[i]));
	}
	/* one flush_tlb_mm_range of 4 pages: INVLPG x 4 on the only CPU, no IPI */
	assert_int_equal(x.gen1 - x.gen0, 1);
	assert_int_equal(x.m1.flush_local_pages - x.m0.flush_local_pages, NP);
	assert_int_equal(x.m1.flush_full - x.m0.flush_full, 0);
	assert_int_equal(x.m1.ipi_sent - x.m0.ipi_sent, 0);
	assert_int_equal(x.write_ro, -1);
	assert_int_equal(x.read_ro, 0);
	assert_int_equal(x.write_rw, 0);
}

/* the arm64 threshold: MAX_TLBI_OPS pages -> one ASIDE1IS; x86: above the
 * ceiling of 33 pages a full flush */
static void test_thresholds(void **state)
{
	(void)state;
	struct single x = run_single("arm64-4k", 1, 512);
	assert_int_equal(x.m1.tlbi.vae1is - x.m0.tlbi.vae1is, 0);
	assert_int_equal(x.m1.tlbi.aside1is - x.m0.tlbi.aside1is, 1);
	x = run_single("arm64-4k", 1, 511);
	assert_int_equal(x.m1.tlbi.vae1is - x.m0.tlbi.vae1is, 511);
	assert_int_equal(x.m1.tlbi.aside1is - x.m0.tlbi.aside1is, 0);
	x = run_single("x86-24", 1, 33);
	assert_int_equal(x.m1.flush_local_pages - x.m0.flush_local_pages, 33);
	assert_int_equal(x.m1.flush_full - x.m0.flush_full, 0);
	x = run_single("x86-24", 1, 34);
	assert_int_equal(x.m1.flush_local_pages - x.m0.flush_local_pages, 0);
	assert_int_equal(x.m1.flush_full - x.m0.flush_full, 1);
}

/* nothing present: no flush at all */
static void test_no_present_no_flush(void **state)
{
	(void)state;
	struct single x = run_single("arm64-4k", 0, NP);
	assert_int_equal(x.ret_ro, 0);
	assert_int_equal(x.m1.tlbi.vae1is + x.m1.tlbi.vale1is + x.m1.tlbi.aside1is,
			 x.m0.tlbi.vae1is + x.m0.tlbi.vale1is + x.m0.tlbi.aside1is);
	x = run_single("x86-24", 0, NP);
	assert_int_equal(x.gen1, x.gen0);
	assert_int_equal(x.m1.flush_local_pages, x.m0.flush_local_pages);
	assert_int_equal(x.m1.flush_full, x.m0.flush_full);
	assert_int_equal(x.m1.ipi_sent, x.m0.ipi_sent);
}

/* ---- VMA split ---- */

struct split {
	int nvmas;
	uint32_t flags[3];
	int w[3];
};

static void split_body(struct sim *s, struct sim_thread *t)
{
	struct split *x = t->arg;
	struct mm_struct *mm = task_of(t)->mm;
	uint64_t ps = hw_of(s)->geom.page_size;
	uint64_t a = sys_mmap(s, 0, 3 * ps, TLBSIM_MAP_PRIVATE);
	int before = mm->nr_vmas;
	assert_int_equal(sys_mprotect(s, a + ps, ps, TLBSIM_PROT_READ), 0);
	x->nvmas = mm->nr_vmas - before;
	for (int i = 0; i < 3; i++) {
		x->flags[i] = find_vma(mm, a + (uint64_t)i * ps)->vm_flags;
		x->w[i] = user_access(s, a + (uint64_t)i * ps, true);
	}
	/* a hole: ENOMEM */
	assert_int_equal(sys_mprotect(s, a + 3 * ps, ps, TLBSIM_PROT_READ), -1);
	/* PROT_NONE is not modelled: refused */
	assert_int_equal(sys_mprotect(s, a, ps, 0), -1);
}

static void test_split(void **state)
{
	(void)state;
	struct split x = {0};
	struct sim *s = tsim_new("arm64-4k", 2, NESTED_FULLMM);
	tsim_spawn(s, split_body, &x, 0);
	tsim_run(s);
	tsim_free(s);
	assert_int_equal(x.nvmas, 2);
	assert_int_equal(x.flags[0] & (VM_READ | VM_WRITE), VM_READ | VM_WRITE);
	assert_int_equal(x.flags[1] & (VM_READ | VM_WRITE), VM_READ);
	assert_int_equal(x.flags[2] & (VM_READ | VM_WRITE), VM_READ | VM_WRITE);
	assert_int_equal(x.w[0], 0);
	assert_int_equal(x.w[1], -1);
	assert_int_equal(x.w[2], 0);
}

/* ---- several CPUs: stale writable entries, IPIs, tlb_flush_pending ---- */

struct multi {
	uint64_t a;
	volatile int touched;		/* helpers that wrote the page */
	volatile bool done;
	bool no_flush;			/* make the PTE read-only by hand, no flush */
	int helpers;
	bool writable_before[4], writable_after[4];
	int max_pending, pending_after;
	struct tlbsim_metrics m0, m1;
};

static void helper_body(struct sim *s, struct sim_thread *t)
{
	struct multi *x = t->arg;
	TSIM_WAIT_UNTIL(s, x->a);
	assert_int_equal(user_access(s, x->a, true), 0);
	x->touched++;
	while (!x->done) {		/* stay on the CPU: not lazy */
		int p = task_of(t)->mm->tlb_flush_pending;
		if (p > x->max_pending)
			x->max_pending = p;
		sim_step(s, YP_USER, 10);
	}
}

static void main_body(struct sim *s, struct sim_thread *t)
{
	struct multi *x = t->arg;
	struct mm_struct *mm = task_of(t)->mm;
	struct kernel *k = kernel_of(s);
	uint64_t ps = hw_of(s)->geom.page_size;
	uint64_t a = sys_mmap(s, 0, NP * ps, TLBSIM_MAP_PRIVATE);
	assert_int_equal(user_access(s, a, true), 0);
	x->a = a;
	TSIM_WAIT_UNTIL(s, x->touched >= x->helpers);
	for (int c = 0; c <= x->helpers; c++)
		x->writable_before[c] = leaf_writable(s, tsim_leaf_of(s, c, a));
	x->m0 = s->m;
	if (!x->no_flush) {
		assert_int_equal(sys_mprotect(s, a, NP * ps, TLBSIM_PROT_READ), 0);
	} else {
		/* what mprotect does to the PTE, without its flush, and the
		 * checker's look at the return */
		uint64_t cookie = k->hooks->syscall_enter(k->hooks_ctx, SYS_MPROTECT);
		pte_t *ptep = pte_lookup(s, mm, a);
		*ptep &= ~PTE_WRITE;
		if (!machine_is_x86(s))
			*ptep |= PTE_RDONLY;
		k->hooks->range_unmapped(k->hooks_ctx, mm, a, a + NP * ps, SYS_MPROTECT, cookie);
	}
	x->m1 = s->m;
	x->pending_after = mm->tlb_flush_pending;
	for (int c = 0; c <= x->helpers; c++)
		x->writable_after[c] = leaf_writable(s, tsim_leaf_of(s, c, a));
	x->done = true;
}

static struct sim *run_multi(const char *profile, struct multi *x)
{
	struct sim *s = tsim_new_p(profile, 4, NESTED_FULLMM, no_kpti);
	tsim_spawn(s, main_body, x, 0);
	for (int c = 1; c <= x->helpers; c++)
		tsim_spawn(s, helper_body, x, c);
	tsim_run(s);
	return s;
}

static void check_stale_gone(const char *profile)
{
	struct multi x = {.helpers = 2};
	struct sim *s = run_multi(profile, &x);
	/* before: CPUs 0..2 all hold a writable entry for the page */
	for (int c = 0; c <= 2; c++)
		assert_true(x.writable_before[c]);
	/* after mprotect returned: none does, and the checker agrees */
	for (int c = 0; c <= 2; c++)
		assert_false(x.writable_after[c]);
	assert_int_equal(s->m.violations, 0);
	/* the flush was pending while it ran, and is not any more */
	assert_int_equal(x.max_pending, 1);
	assert_int_equal(x.pending_after, 0);
	if (machine_is_x86(s)) {
		/* CPUs 1 and 2 run the mm: one IPI each; INVLPG x NP on all 3 */
		assert_int_equal(x.m1.ipi_sent - x.m0.ipi_sent, 2);
		assert_int_equal(x.m1.flush_local_pages - x.m0.flush_local_pages, 3 * NP);
	} else {
		/* broadcast: NP VAE1IS whatever the number of CPUs, no IPI */
		assert_int_equal(x.m1.tlbi.vae1is - x.m0.tlbi.vae1is, NP);
		assert_int_equal(x.m1.ipi_sent - x.m0.ipi_sent, 0);
	}
	tsim_free(s);
}

static void test_stale_gone_arm64(void **state)
{
	(void)state;
	check_stale_gone("arm64-4k");
}

static void test_stale_gone_x86(void **state)
{
	(void)state;
	check_stale_gone("x86-24");
}

/* without the flush CPU 1 keeps writing through its entry: I2 */
static void check_missing_flush_found(const char *profile)
{
	struct multi x = {.helpers = 1, .no_flush = true};
	struct sim *s = run_multi(profile, &x);
	assert_true(x.writable_before[1]);
	assert_true(x.writable_after[1]);
	assert_true(s->m.violations > 0);
	assert_int_equal(tsim_violation(s)->kind, INV_I2);
	assert_int_equal(tsim_violation(s)->va, x.a);
	tsim_free(s);
}

static void test_missing_flush_found_arm64(void **state)
{
	(void)state;
	check_missing_flush_found("arm64-4k");
}

static void test_missing_flush_found_x86(void **state)
{
	(void)state;
	check_missing_flush_found("x86-24");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wrprotect_arm64),
		cmocka_unit_test(test_wrprotect_x86),
		cmocka_unit_test(test_thresholds),
		cmocka_unit_test(test_no_present_no_flush),
		cmocka_unit_test(test_split),
		cmocka_unit_test(test_stale_gone_arm64),
		cmocka_unit_test(test_stale_gone_x86),
		cmocka_unit_test(test_missing_flush_found_arm64),
		cmocka_unit_test(test_missing_flush_found_x86),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
