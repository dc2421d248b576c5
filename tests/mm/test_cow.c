/*
 * test_cow.c - fork's copy of the address space and copy-on-write
 * (src/mm/fork.c dup_mmap, src/mm/memory.c copy_page_range, src/mm/fault.c
 * do_wp_page / wp_page_copy, exec_mmap in sys_execve).
 *
 * Rules checked:
 *  - fork write-protects the parent's writable private PTEs and gives the
 *    child the same pages read-only and old; each page gains a reference;
 *  - the parent is flushed before fork returns (flush_tlb_mm in dup_mmap,
 *    v5.1): arm64 exactly one ASIDE1IS; x86 one full flush with an IPI to
 *    each other CPU running the parent; after fork no CPU of the parent
 *    can write through a cached writable entry (its write faults);
 *  - a shared mapping's PTEs are not copied (the child refaults them);
 *  - a child's write to a shared COW page copies it and flushes only the
 *    child's mm: arm64 one VALE1IS with the child's ASID, and the parent's
 *    cached entry of the page survives; x86 the child's tlb_gen moves, the
 *    parent's does not;
 *  - the parent's write after the child is gone reuses its page in place
 *    (no copy); a page fork shared is not PageAnonExclusive (PG_DUPED,
 *    6c287605fd56) until that write: still not once the child is gone;
 *  - after exec the old mm is released (its pages' references dropped, the
 *    mm gone), the CPU runs under a new ASID, and the old mapping is not
 *    reachable from it;
 *  - a child's exit tears its copy down with a fullmm gather: no per-page
 *    TLBIs on arm64;
 *  - the oracle's I2 at fork's return: a write-protected PTE whose writable
 *    entry a CPU still caches is a violation (what a fork without its flush
 *    would leave).
 */
#include "test_util.h"

#define NP 4

struct cow {
	bool shared;			/* the region is MAP_SHARED */
	bool exec;			/* the child execs after its write */
	bool second_thread;		/* a second parent thread runs on CPU 3 */
	int child_cpu;
	uint64_t p;
	struct mm_struct *pmm;
	uint32_t frame[NP];		/* the parent's pages before fork */
	/* around fork */
	bool write_hit_before, write_faults_after, b_write_faults_after;
	struct tlbsim_metrics f0, f1;
	uint64_t fork_tlbgen0, fork_tlbgen1;	/* x86: the parent's tlb_gen */
	pte_t ppte[NP], cpte[NP];
	bool cpte_present[NP];
	uint32_t refcount_after_fork;
	/* the child */
	struct mm_struct *cmm;
	struct tlbsim_metrics c0, c1;	/* around the child's write of page 0 */
	uint64_t ptlbgen0, ptlbgen1, ctlbgen0, ctlbgen1;
	uint32_t child_asid;
	uint32_t child_frame0;
	bool parent_entry_survives;
	/* exec */
	uint32_t tag_before_exec, tag_after_exec;
	uint32_t old_va_after_exec;
	uint32_t refcount_after_exec;
	struct tlbsim_metrics e0, e1;	/* around the child's exit */
	/* the parent after wait4 */
	struct tlbsim_metrics w0, w1;	/* around the parent's rewrite */
	uint32_t frame_after[NP];
	uint32_t refcount_after;
	uint8_t flags_fork, flags_wait, flags_rewrite;	/* page 1's pgflags */
	/* the second thread */
	volatile bool b_ready, done, parent_read_done;
	uint32_t ptag;			/* the parent's user tag on CPU 1 */
};

static void cow_child(struct sim *s, struct sim_thread *t)
{
	struct cow *c = t->arg;
	struct hw *hw = hw_of(s);
	uint64_t ps = hw->geom.page_size;
	c->cmm = task_of(t)->mm;
	for (int i = 0; i < NP; i++) {
		pte_t *e = pte_lookup(s, c->cmm, c->p + (uint64_t)i * ps);
		c->cpte_present[i] = e && pte_present(*e);
		c->cpte[i] = e ? *e : 0;
	}
	c->refcount_after_fork = frame_of(hw, c->frame[0])->refcount;
	if (c->shared)
		return;
	while (!c->parent_read_done)
		sim_step(s, YP_USER, 1000);
	/* a read first: the child's ASID is allocated and the page cached */
	assert_int_equal(user_access(s, c->p, false), 0);
	c->child_asid = c->cmm->context.asid;
	c->ptlbgen0 = c->pmm->context.tlb_gen;
	c->ctlbgen0 = c->cmm->context.tlb_gen;
	c->c0 = s->m;
	assert_int_equal(user_access(s, c->p, true), 0);
	c->c1 = s->m;
	c->ptlbgen1 = c->pmm->context.tlb_gen;
	c->ctlbgen1 = c->cmm->context.tlb_gen;
	c->child_frame0 = tsim_pte_frame(s, c->cmm, c->p);
	/* the parent (CPU 1) cached page 0 under its own tag before fork
	 * returned; the child's flush must leave it */
	if (!machine_is_x86(s)) {
		struct tc_entry *e = tc_lookup(&hw->cpu[1].tlb, c->p >> hw->geom.page_shift,
					       hw->geom.levels - 1, c->ptag);
		c->parent_entry_survives = e && e->frame == c->frame[0];
	}
	if (c->exec) {
		c->tag_before_exec = machine_of(s)->arch->user_tag(s, t->cpu);
		sys_execve(s);
		c->tag_after_exec = machine_of(s)->arch->user_tag(s, t->cpu);
		c->old_va_after_exec = tsim_translate(s, t->cpu, task_of(t)->mm, c->p + ps);
		c->refcount_after_exec = frame_of(hw, c->frame[1])->refcount;
	}
	c->e0 = s->m;
}

static void cow_thread_b(struct sim *s, struct sim_thread *t)
{
	struct cow *c = t->arg;
	uint64_t ps = hw_of(s)->geom.page_size;
	while (!c->p)
		sim_step(s, YP_USER, 1000);
	for (int i = 0; i < NP; i++)
		assert_int_equal(user_access(s, c->p + (uint64_t)i * ps, true), 0);
	c->b_ready = true;
	while (!c->done)
		sim_step(s, YP_USER, 1000);
}

static void cow_parent(struct sim *s, struct sim_thread *t)
{
	struct cow *c = t->arg;
	struct hw *hw = hw_of(s);
	uint64_t ps = hw->geom.page_size;
	c->pmm = task_of(t)->mm;
	uint64_t p = sys_mmap(s, 0, NP * ps, c->shared ? TLBSIM_MAP_SHARED : TLBSIM_MAP_PRIVATE);
	for (int i = 0; i < NP; i++) {
		assert_int_equal(user_access(s, p + (uint64_t)i * ps, true), 0);
		c->frame[i] = tsim_pte_frame(s, c->pmm, p + (uint64_t)i * ps);
	}
	c->p = p;
	while (c->second_thread && !c->b_ready)
		sim_step(s, YP_USER, 1000);
	uint64_t fp;
	c->write_hit_before = tsim_mmu_access(s, t->cpu, c->pmm, p, true, &fp) == 0;
	c->f0 = s->m;
	c->fork_tlbgen0 = c->pmm->context.tlb_gen;
	struct task *child = sys_fork(s, sizeof(struct task), cow_child, c, c->child_cpu);
	c->f1 = s->m;
	c->flags_fork = frame_of(hw, c->frame[1])->pgflags;
	c->fork_tlbgen1 = c->pmm->context.tlb_gen;
	assert_non_null(child);
	for (int i = 0; i < NP; i++) {
		pte_t *e = pte_lookup(s, c->pmm, p + (uint64_t)i * ps);
		c->ppte[i] = e ? *e : 0;
	}
	c->write_faults_after = tsim_mmu_access(s, t->cpu, c->pmm, p, true, &fp) != 0;
	if (c->second_thread)
		c->b_write_faults_after = tsim_mmu_access(s, 3, c->pmm, p, true, &fp) != 0;
	c->done = true;
	/* cache page 0 read-only under the parent's tag (the child looks) */
	assert_int_equal(user_access(s, p, false), 0);
	c->ptag = machine_of(s)->arch->user_tag(s, t->cpu);
	c->parent_read_done = true;
	assert_true(sys_wait4(s) == child);
	c->flags_wait = frame_of(hw, c->frame[1])->pgflags;
	c->w0 = s->m;
	for (int i = 0; i < NP; i++) {
		assert_int_equal(user_access(s, p + (uint64_t)i * ps, true), 0);
		c->frame_after[i] = tsim_pte_frame(s, c->pmm, p + (uint64_t)i * ps);
	}
	c->w1 = s->m;
	c->refcount_after = frame_of(hw, c->frame[0])->refcount;
	c->flags_rewrite = frame_of(hw, c->frame[1])->pgflags;
}

#define D(a, b, f) ((b).f - (a).f)

static struct sim *run_cow(const char *profile, struct cow *c)
{
	struct sim *s = tsim_new(profile, 4, NESTED_FULLMM);
	if (!c->child_cpu)
		c->child_cpu = 2;
	tsim_spawn(s, cow_parent, c, 1);
	if (c->second_thread)
		tsim_spawn(s, cow_thread_b, c, 3);
	tsim_run(s);
	assert_int_equal(s->m.violations, 0);
	return s;
}

/* fork write-protects both sides, shares the pages, flushes the parent */
static void check_fork_copy(struct sim *s, const struct cow *c)
{
	const struct pt_format *fmt = hw_of(s)->fmt;
	for (int i = 0; i < NP; i++) {
		assert_true(pte_present(c->ppte[i]));
		assert_false(c->ppte[i] & PTE_WRITE);
		if (fmt->rdonly)
			assert_true(c->ppte[i] & PTE_RDONLY);
		assert_int_equal(pte_pfn(c->ppte[i]), c->frame[i]);
		assert_true(c->cpte_present[i]);
		assert_false(c->cpte[i] & PTE_WRITE);
		assert_false(c->cpte[i] & PTE_YOUNG);		/* pte_mkold */
		assert_int_equal(pte_pfn(c->cpte[i]), c->frame[i]);
	}
	assert_int_equal(c->refcount_after_fork, 2);
	assert_true(c->write_hit_before);
	assert_true(c->write_faults_after);
}

static void test_fork_cow_arm64(void **state)
{
	struct cow c = {0};
	struct sim *s = run_cow("arm64-4k", &c);
	check_fork_copy(s, &c);
	/* dup_mmap's flush_tlb_mm(oldmm): one ASIDE1IS, nothing else */
	assert_int_equal(D(c.f0, c.f1, tlbi.aside1is), 1);
	assert_int_equal(D(c.f0, c.f1, tlbi.vale1is), 0);
	assert_int_equal(D(c.f0, c.f1, tlbi.vae1is), 0);
	/* the child's write: a copy, one leaf TLBI with the child's ASID */
	assert_int_equal(D(c.c0, c.c1, cow_faults), 1);
	assert_int_equal(D(c.c0, c.c1, tlbi.vale1is), 1);
	assert_int_equal(D(c.c0, c.c1, tlbi.aside1is), 0);
	assert_true(c.child_asid != c.pmm->context.asid);
	assert_true(c.child_frame0 != c.frame[0]);
	assert_true(c.parent_entry_survives);
	/* the child's exit: a fullmm teardown, one ASIDE1IS, no per-page TLBI */
	assert_int_equal(D(c.e0, c.w0, tlbi.vale1is), 0);
	assert_int_equal(D(c.e0, c.w0, tlbi.vae1is), 0);
	assert_int_equal(D(c.e0, c.w0, tlbi.aside1is), 1);
	/* the parent's rewrite reuses each page: no copy */
	assert_int_equal(D(c.w0, c.w1, cow_faults), 0);
	for (int i = 0; i < NP; i++)
		assert_int_equal(c.frame_after[i], c.frame[i]);
	assert_int_equal(c.refcount_after, 1);
	/* PageAnonExclusive: cleared by the fork, not by the child's exit,
	 * set again by the reusing write */
	assert_true(c.flags_fork & PG_DUPED);
	assert_true(c.flags_wait & PG_DUPED);
	assert_false(c.flags_rewrite & PG_DUPED);
	tsim_free(s);
}

static void test_fork_cow_x86(void **state)
{
	struct cow c = {0};
	struct sim *s = run_cow("x86-24", &c);
	check_fork_copy(s, &c);
	/* flush_tlb_mm: one flush of the parent's mm (its tlb_gen moves once),
	 * a full one (no INVLPG), local only (the parent runs on one CPU) */
	assert_int_equal(c.fork_tlbgen1, c.fork_tlbgen0 + 1);
	assert_true(D(c.f0, c.f1, flush_full) >= 1);
	assert_int_equal(D(c.f0, c.f1, flush_local_pages), 0);
	assert_int_equal(D(c.f0, c.f1, ipi_sent), 0);
	/* the child's COW flush is the child's mm's alone */
	assert_int_equal(D(c.c0, c.c1, cow_faults), 1);
	assert_int_equal(c.ctlbgen1, c.ctlbgen0 + 1);
	assert_int_equal(c.ptlbgen1, c.ptlbgen0);
	assert_int_equal(D(c.c0, c.c1, ipi_sent), 0);
	assert_int_equal(D(c.w0, c.w1, cow_faults), 0);
	for (int i = 0; i < NP; i++)
		assert_int_equal(c.frame_after[i], c.frame[i]);
	tsim_free(s);
}

/* a second thread of the parent on CPU 3 holds writable entries: fork's
 * flush reaches it (x86: an IPI) before fork returns */
static void test_fork_flushes_every_parent_cpu_x86(void **state)
{
	struct cow c = {.second_thread = true};
	struct sim *s = run_cow("x86-24", &c);
	check_fork_copy(s, &c);
	assert_int_equal(c.fork_tlbgen1, c.fork_tlbgen0 + 1);
	assert_int_equal(D(c.f0, c.f1, ipi_sent), 1);
	assert_true(c.b_write_faults_after);
	tsim_free(s);
}

static void test_fork_flushes_every_parent_cpu_arm64(void **state)
{
	struct cow c = {.second_thread = true};
	struct sim *s = run_cow("arm64-4k", &c);
	check_fork_copy(s, &c);
	assert_int_equal(D(c.f0, c.f1, tlbi.aside1is), 1);
	assert_true(c.b_write_faults_after);
	tsim_free(s);
}

/* a shared mapping's PTEs are not copied: the child refaults */
static void test_fork_skips_shared(void **state)
{
	struct cow c = {.shared = true};
	struct sim *s = run_cow("x86-24", &c);
	for (int i = 0; i < NP; i++)
		assert_false(c.cpte_present[i]);
	/* the parent's PTEs stay writable (no COW); the flush is still issued */
	for (int i = 0; i < NP; i++)
		assert_true(c.ppte[i] & PTE_WRITE);
	assert_int_equal(c.fork_tlbgen1, c.fork_tlbgen0 + 1);
	assert_false(c.write_faults_after);
	tsim_free(s);
}

/* exec: the old mm goes (its page references with it), a new ASID runs */
static void test_exec_releases_old_mm(void **state)
{
	static const char *const profiles[] = {"arm64-4k", "x86-24"};
	for (int i = 0; i < 2; i++) {
		struct cow c = {.exec = true};
		struct sim *s = run_cow(profiles[i], &c);
		assert_true(c.tag_after_exec != c.tag_before_exec);
		assert_int_equal(c.old_va_after_exec, NO_FRAME);
		assert_int_equal(c.refcount_after_exec, 1);	/* the parent's only */
		assert_int_equal(kernel_of(s)->proc.execs, 1);
		/* the old mm's teardown at exec was fullmm: no per-page TLBIs */
		if (i == 0)
			assert_int_equal(s->m.tlbi.vae1is, 0);
		tsim_free(s);
	}
}

/* a PTE write-protected as fork does, without the flush: I2 at return */
static void i2_fn(struct sim *s, struct sim_thread *t)
{
	struct kernel *k = kernel_of(s);
	struct mm_struct *mm = task_of(t)->mm;
	uint64_t ps = hw_of(s)->geom.page_size;
	uint64_t p = sys_mmap(s, 0, ps, TLBSIM_MAP_PRIVATE);
	assert_int_equal(user_access(s, p, true), 0);
	uint64_t cookie = k->hooks->syscall_enter(k->hooks_ctx, SYS_FORK);
	pte_t *e = pte_lookup(s, mm, p);
	*e &= ~PTE_WRITE;
	if (hw_of(s)->fmt->rdonly)
		*e |= PTE_RDONLY;
	k->hooks->range_unmapped(k->hooks_ctx, mm, p, p + ps, SYS_FORK, cookie);
}

static void test_oracle_i2_at_fork(void **state)
{
	static const char *const profiles[] = {"arm64-4k", "x86-24"};
	for (int i = 0; i < 2; i++) {
		struct sim *s = tsim_new(profiles[i], 2, NESTED_FULLMM);
		tsim_spawn(s, i2_fn, NULL, 1);
		tsim_run(s);
		assert_int_equal(tsim_violation(s)->kind, INV_I2);
		assert_non_null(strstr(tsim_violation(s)->text, "I2: fork of"));
		tsim_free(s);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fork_cow_arm64),
		cmocka_unit_test(test_fork_cow_x86),
		cmocka_unit_test(test_fork_flushes_every_parent_cpu_x86),
		cmocka_unit_test(test_fork_flushes_every_parent_cpu_arm64),
		cmocka_unit_test(test_fork_skips_shared),
		cmocka_unit_test(test_exec_releases_old_mm),
		cmocka_unit_test(test_oracle_i2_at_fork),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
