/*
 * test_fork.c - processes (v6.10): tasklist_lock as a queued rwlock, kernel
 * stacks, fork / exec / exit / wait4, exit_mmap and the mm's lifetime
 * (src/mm/fork.c, exit.c, mmap.c).
 *
 * Rules checked:
 *  - tasklist_lock: readers share it; a writer excludes readers and writers;
 *    a waiting writer blocks new readers (even while only readers hold it);
 *    waiters are served in FIFO order; the readers queued behind a writer
 *    get in together when it unlocks; waiters spin (their CPU stays busy);
 *    contended acquisitions are counted with their wait (metrics);
 *  - write_lock_irq: IRQs are off while the writer spins and while it holds
 *    the lock, on again after write_unlock_irq; readers keep them on; so an
 *    IPI round (flush_tlb_kernel_range on x86) waits for a writer that holds
 *    the lock and for one that spins for it;
 *  - kernel stacks: two cached stacks per CPU; a dead task's stack goes to
 *    the cache of the CPU it died on while a slot is free, the third through
 *    RCU, whose callback tries that CPU's cache again and otherwise calls
 *    vfree_atomic; a fork on a CPU with a cached stack takes it (the same
 *    VA) instead of vmalloc; THREAD_SIZE is 32 KiB with KASAN, 16 KiB without;
 *  - fork/exit/wait4: every child is reaped exactly once, wait4 sleeps until
 *    a child exits and returns NULL (ECHILD) when none is left; new tasks go
 *    to the least loaded CPU; execve replaces the mm;
 *  - exit_mmap is a fullmm teardown: arm64 issues one ASIDE1IS and no
 *    per-page TLBIs (munmap of the same range issues per-page ones); x86 one
 *    full flush, no INVLPG and no IPI; every page and table is freed;
 *  - an exited process's mm lives while a CPU keeps it as its active_mm
 *    (lazy TLB) and is freed when that CPU switches to another mm.
 */
#include "test_util.h"

/* the current thread's time, its charged cost included */
static uint64_t tnow(struct sim *s)
{
	return s->now + s->curr->pending_ns;
}

/* ---- tasklist_lock actors ---- */

#define MAXA 8

struct lklog {
	int order[MAXA];
	int n;
	int readers, writers;
	int max_readers;
	int exclusion_violations;
};

struct lactor {
	struct lklog *log;
	int id;
	bool write;
	uint64_t delay, hold;
	struct sim_thread *probe;	/* sampled mid-hold */
	/* results */
	uint64_t t_req, t_acq, t_rel;
	bool irqs_off_holding, irqs_on_after;
	bool probe_spinning, probe_irqs_off;
};

static void lactor_fn(struct sim *s, struct sim_thread *t)
{
	struct lactor *a = t->arg;
	struct lklog *L = a->log;
	struct qrwlock *l = &kernel_of(s)->tasklist_lock;
	sim_set_mode(s, MODE_SYS);
	sim_step(s, YP_USER, a->delay);
	a->t_req = tnow(s);
	if (a->write)
		write_lock_irq(s, l);
	else
		read_lock(s, l);
	a->t_acq = tnow(s);
	L->order[L->n++] = a->id;
	if (a->write) {
		if (L->readers || L->writers)
			L->exclusion_violations++;
		L->writers++;
	} else {
		if (L->writers)
			L->exclusion_violations++;
		if (++L->readers > L->max_readers)
			L->max_readers = L->readers;
	}
	a->irqs_off_holding = cpu_irqs_off(s, t->cpu);
	sim_step(s, YP_USER, a->hold / 2);
	if (a->probe) {
		a->probe_spinning = a->probe->spinning;
		a->probe_irqs_off = cpu_irqs_off(s, a->probe->cpu);
	}
	sim_step(s, YP_USER, a->hold - a->hold / 2);
	a->t_rel = tnow(s);
	if (a->write) {
		L->writers--;
		write_unlock_irq(s, l);
	} else {
		L->readers--;
		read_unlock(s, l);
	}
	a->irqs_on_after = !cpu_irqs_off(s, t->cpu);
}

/* actor i on CPU i + 1 */
static struct sim *run_lactors(const char *profile, struct lactor *a, int n, struct lklog *L)
{
	struct sim *s = tsim_new(profile, n + 2, NESTED_FULLMM);
	for (int i = 0; i < n; i++) {
		a[i].log = L;
		a[i].id = i;
		tsim_spawn(s, lactor_fn, &a[i], i + 1);
	}
	tsim_run(s);
	return s;
}

static void test_tasklist_readers_share(void **state)
{
	struct lklog L = {0};
	struct lactor a[2] = {{.delay = 0, .hold = 10000}, {.delay = 1000, .hold = 10000}};
	struct sim *s = run_lactors("x86-24", a, 2, &L);
	assert_int_equal(L.max_readers, 2);
	assert_int_equal(L.exclusion_violations, 0);
	assert_true(a[1].t_acq < a[0].t_rel);		/* no waiting */
	assert_int_equal(s->m.tasklist_lock_waits, 0);
	tsim_free(s);
}

static void test_tasklist_writer_excludes(void **state)
{
	struct lklog L = {0};
	struct lactor a[3] = {{.write = true, .delay = 0, .hold = 20000},
			      {.write = true, .delay = 1000, .hold = 20000},
			      {.write = false, .delay = 2000, .hold = 20000}};
	struct sim *s = run_lactors("x86-24", a, 3, &L);
	assert_int_equal(L.exclusion_violations, 0);
	assert_int_equal(L.order[0], 0);
	assert_int_equal(L.order[1], 1);
	assert_int_equal(L.order[2], 2);
	assert_true(a[1].t_acq >= a[0].t_rel);
	assert_true(a[2].t_acq >= a[1].t_rel);
	tsim_free(s);
}

/* R0 holds; W1 queues (sets _QW_WAITING); R2 comes after W1 and must wait
 * behind it although only a reader holds the lock */
static void test_tasklist_waiting_writer_blocks_readers(void **state)
{
	struct lklog L = {0};
	struct lactor a[3] = {{.write = false, .delay = 0, .hold = 20000},
			      {.write = true, .delay = 1000, .hold = 20000},
			      {.write = false, .delay = 2000, .hold = 5000}};
	struct sim *s = run_lactors("x86-24", a, 3, &L);
	assert_int_equal(L.order[0], 0);
	assert_int_equal(L.order[1], 1);
	assert_int_equal(L.order[2], 2);
	assert_true(a[2].t_acq >= a[1].t_rel);
	assert_int_equal(L.max_readers, 1);
	assert_int_equal(L.exclusion_violations, 0);
	tsim_free(s);
}

/* FIFO among waiters: W0 holds; R1, W2, R3 arrive in that order */
static void test_tasklist_fifo(void **state)
{
	struct lklog L = {0};
	struct lactor a[4] = {{.write = true, .delay = 0, .hold = 20000},
			      {.write = false, .delay = 1000, .hold = 10000},
			      {.write = true, .delay = 2000, .hold = 10000},
			      {.write = false, .delay = 3000, .hold = 10000}};
	struct sim *s = run_lactors("x86-24", a, 4, &L);
	for (int i = 0; i < 4; i++)
		assert_int_equal(L.order[i], i);
	assert_true(a[1].t_acq >= a[0].t_rel);
	assert_true(a[2].t_acq >= a[1].t_rel);
	assert_true(a[3].t_acq >= a[2].t_rel);
	assert_int_equal(L.exclusion_violations, 0);
	assert_int_equal(s->m.tasklist_lock_waits, 3);
	tsim_free(s);
}

/* the readers queued behind a writer get in together at its unlock */
static void test_tasklist_queued_readers_enter_together(void **state)
{
	struct lklog L = {0};
	struct lactor a[3] = {{.write = true, .delay = 0, .hold = 20000},
			      {.write = false, .delay = 1000, .hold = 10000},
			      {.write = false, .delay = 2000, .hold = 10000}};
	struct sim *s = run_lactors("x86-24", a, 3, &L);
	assert_int_equal(L.max_readers, 2);
	assert_true(a[2].t_acq < a[1].t_rel);
	assert_int_equal(L.exclusion_violations, 0);
	tsim_free(s);
}

/* waiters spin with their CPU busy; writers with IRQs off, readers with
 * IRQs on; IRQs are on again after write_unlock_irq */
static void test_tasklist_irqs_off_spinning_and_holding(void **state)
{
	struct lklog L = {0};
	struct lactor a[3] = {{.write = true, .delay = 0, .hold = 40000},
			      {.write = true, .delay = 1000, .hold = 10000},
			      {.write = false, .delay = 2000, .hold = 10000}};
	struct sim *s = tsim_new("x86-24", 5, NESTED_FULLMM);
	for (int i = 0; i < 3; i++) {
		a[i].log = &L;
		a[i].id = i;
	}
	struct sim_thread *t[3];
	for (int i = 0; i < 3; i++)
		t[i] = tsim_spawn(s, lactor_fn, &a[i], i + 1);
	a[0].probe = t[1];
	tsim_run(s);
	assert_true(a[0].irqs_off_holding);
	assert_true(a[0].probe_spinning);
	assert_true(a[0].probe_irqs_off);	/* the writer spins with IRQs off */
	assert_true(a[1].irqs_off_holding);
	assert_false(a[2].irqs_off_holding);	/* a reader keeps IRQs on */
	for (int i = 0; i < 3; i++)
		assert_true(a[i].irqs_on_after);
	tsim_free(s);

	/* a spinning reader keeps IRQs on */
	struct lklog L2 = {0};
	struct lactor b[2] = {{.write = true, .delay = 0, .hold = 40000},
			      {.write = false, .delay = 1000, .hold = 10000}};
	s = tsim_new("x86-24", 4, NESTED_FULLMM);
	for (int i = 0; i < 2; i++) {
		b[i].log = &L2;
		b[i].id = i;
		t[i] = tsim_spawn(s, lactor_fn, &b[i], i + 1);
	}
	b[0].probe = t[1];
	tsim_run(s);
	assert_true(b[0].probe_spinning);
	assert_false(b[0].probe_irqs_off);
	tsim_free(s);
}

struct flusher {
	uint64_t delay;
	uint64_t t_start, t_done;
};

static void kflush_fn(struct sim *s, struct sim_thread *t)
{
	struct flusher *f = t->arg;
	sim_set_mode(s, MODE_SYS);
	sim_step(s, YP_USER, f->delay);
	f->t_start = tnow(s);
	uint64_t va = kernel_of(s)->kva.vmalloc_start;
	flush_tlb_kernel_range(s, va, va + 4096);
	f->t_done = tnow(s);
}

/* x86: an IPI round waits for a CPU whose writer holds tasklist_lock and for
 * one whose writer spins for it (IRQs off in both); without writers it is
 * over in microseconds */
static void test_tasklist_writer_delays_ipi(void **state)
{
	struct lklog L = {0};
	/* W0 holds 0..100 us; W1 spins 5..100 us, holds 100..200 us */
	struct lactor a[2] = {{.write = true, .delay = 0, .hold = 100000},
			      {.write = true, .delay = 5000, .hold = 100000}};
	struct flusher f = {.delay = 10000};
	struct sim *s = tsim_new("x86-24", 4, NESTED_FULLMM);
	for (int i = 0; i < 2; i++) {
		a[i].log = &L;
		a[i].id = i;
		tsim_spawn(s, lactor_fn, &a[i], i + 1);
	}
	tsim_spawn(s, kflush_fn, &f, 3);
	tsim_run(s);
	assert_true(f.t_start < a[0].t_rel);
	assert_true(f.t_done >= a[1].t_rel);	/* waited for the spinner's whole stay */
	assert_true(s->m.ipi_wait_irqs_off_ns > 0);
	tsim_free(s);

	struct flusher g = {.delay = 10000};
	s = tsim_new("x86-24", 4, NESTED_FULLMM);
	tsim_spawn(s, kflush_fn, &g, 3);
	tsim_run(s);
	assert_true(g.t_done - g.t_start < 10000);
	assert_int_equal(s->m.ipi_wait_irqs_off_ns, 0);
	tsim_free(s);
}

static void test_tasklist_wait_metrics(void **state)
{
	struct lklog L = {0};
	struct lactor a[3] = {{.write = true, .delay = 0, .hold = 30000},
			      {.write = true, .delay = 10000, .hold = 30000},
			      {.write = false, .delay = 20000, .hold = 1000}};
	struct sim *s = run_lactors("x86-24", a, 3, &L);
	assert_int_equal(s->m.tasklist_lock_waits, 2);
	uint64_t w1 = a[1].t_acq - a[1].t_req, w2 = a[2].t_acq - a[2].t_req;
	/* the wait starts after the lock op's own cost */
	uint64_t op = (uint64_t)P(s, P_lock_op_ns);
	assert_int_equal(s->m.tasklist_lock_wait_ns, w1 + w2 - 2 * op);
	assert_int_equal(s->m.tasklist_lock_wait_max_ns, (w1 > w2 ? w1 : w2) - op);
	tsim_free(s);
}

/* ---- processes ---- */

struct pchild {
	uint64_t run_ns;		/* user time */
	uint64_t pages;			/* anonymous pages to write */
	bool exec;
	int ran_on;
	uint64_t t_exit;
	uint64_t stack;
	struct mm_struct *mm_before, *mm_after;
};

static void child_fn(struct sim *s, struct sim_thread *t)
{
	struct pchild *c = t->arg;
	c->ran_on = t->cpu;
	c->stack = task_of(t)->stack;
	c->mm_before = task_of(t)->mm;
	if (c->exec)
		sys_execve(s);
	c->mm_after = task_of(t)->mm;
	uint64_t ps = hw_of(s)->geom.page_size;
	if (c->pages) {
		uint64_t p = sys_mmap(s, 0, c->pages * ps, TLBSIM_MAP_PRIVATE);
		for (uint64_t i = 0; i < c->pages; i++)
			assert_int_equal(user_access(s, p + i * ps, true), 0);
	}
	sim_step(s, YP_USER, c->run_ns);
	c->t_exit = tnow(s);
}

struct parent {
	int n;
	int cpu;			/* children's CPU; -1: the kernel places them */
	bool concurrent;		/* fork all, then wait for all; else one by one */
	struct pchild c[8];
	struct task *child[8];
	struct task *reaped[8];
	uint64_t t_reaped[8];
	int nreaped;
	struct task *extra;		/* the wait4 after the last child: NULL */
	bool extra_done;
};

static void parent_fn(struct sim *s, struct sim_thread *t)
{
	struct parent *p = t->arg;
	for (int i = 0; i < p->n; i++) {
		p->child[i] = sys_fork(s, sizeof(struct task), child_fn, &p->c[i], p->cpu);
		assert_non_null(p->child[i]);
		if (!p->concurrent) {
			p->reaped[p->nreaped] = sys_wait4(s);
			p->t_reaped[p->nreaped++] = tnow(s);
		}
	}
	while (p->concurrent && p->nreaped < p->n) {
		p->reaped[p->nreaped] = sys_wait4(s);
		p->t_reaped[p->nreaped++] = tnow(s);
	}
	p->extra = sys_wait4(s);
	p->extra_done = true;
}

static void test_fork_exit_wait_counts(void **state)
{
	struct parent p = {.n = 5, .cpu = -1, .concurrent = true};
	for (int i = 0; i < 5; i++)
		p.c[i].run_ns = 1000000 + 100000 * (uint64_t)i;
	struct sim *s = tsim_new("x86-24", 8, NESTED_FULLMM);
	struct sim_thread *pt = tsim_spawn(s, parent_fn, &p, 0);
	tsim_run(s);
	struct kernel *k = kernel_of(s);
	assert_int_equal(p.nreaped, 5);
	assert_true(p.extra_done);
	assert_null(p.extra);			/* ECHILD */
	for (int i = 0; i < 5; i++) {
		int seen = 0;
		for (int j = 0; j < 5; j++)
			seen += p.reaped[j] == p.child[i];
		assert_int_equal(seen, 1);
		assert_int_equal(p.child[i]->exit_state, EXIT_DEAD);
		assert_int_equal(p.child[i]->stack, 0);	/* released at death */
		assert_true(p.c[i].stack != 0);
		assert_true(p.child[i]->thread.state == TS_DONE);
	}
	assert_null(task_of(pt)->children);
	assert_int_equal(k->proc.forks, 5);
	assert_int_equal(k->proc.exits, 5);
	assert_int_equal(k->proc.reaped, 5);
	/* a wait4 returns once the child is gone, after its exit */
	for (int j = 0; j < 5; j++) {
		int i = 0;
		while (i < 5 && p.child[i] != p.reaped[j])
			i++;
		assert_true(p.t_reaped[j] > p.c[i].t_exit);
	}
	/* the parent slept while it waited: its CPU was idle most of the run */
	assert_true(s->cpus[0].user_ns + s->cpus[0].sys_ns < s->now / 2);
	tsim_free(s);
}

/* new tasks go to the least loaded CPU: an idle one while there is one */
static void test_fork_placement(void **state)
{
	struct parent p = {.n = 6, .cpu = -1, .concurrent = true};
	for (int i = 0; i < 6; i++)
		p.c[i].run_ns = 5000000;
	struct sim *s = tsim_new("x86-24", 4, NESTED_FULLMM);
	tsim_spawn(s, parent_fn, &p, 0);
	tsim_run(s);
	int per_cpu[4] = {0};
	for (int i = 0; i < 6; i++)
		per_cpu[p.c[i].ran_on]++;
	/* the first three fill the idle CPUs 1..3 (the parent runs on 0) */
	assert_int_equal(p.c[0].ran_on, 1);
	assert_int_equal(p.c[1].ran_on, 2);
	assert_int_equal(p.c[2].ran_on, 3);
	for (int c = 0; c < 4; c++)
		assert_true(per_cpu[c] <= 2);
	tsim_free(s);
}

static void test_execve_replaces_mm(void **state)
{
	struct parent p = {.n = 2, .cpu = 1};
	p.c[0].exec = true;
	p.c[0].pages = 4;
	p.c[1].exec = true;
	struct sim *s = tsim_new("arm64-4k", 4, NESTED_FULLMM);
	tsim_spawn(s, parent_fn, &p, 0);
	tsim_run(s);
	assert_non_null(p.c[0].mm_before);
	assert_true(p.c[0].mm_before != p.c[0].mm_after);
	assert_int_equal(kernel_of(s)->proc.execs, 2);
	assert_int_equal(s->m.pages_freed, 4);
	tsim_free(s);
}

/* two stack slots per CPU; the third free goes through RCU, whose callback
 * finds the cache still full and calls vfree_atomic */
static void test_stack_cache_two_slots_then_rcu(void **state)
{
	struct parent p = {.n = 3, .cpu = 1, .concurrent = true};
	for (int i = 0; i < 3; i++)
		p.c[i].run_ns = 1000000 * (uint64_t)(i + 1);	/* exit in order */
	struct sim *s = tsim_new("x86-24", 4, NESTED_FULLMM);
	tsim_spawn(s, parent_fn, &p, 0);
	tsim_run(s);
	struct kernel *k = kernel_of(s);
	assert_int_equal(k->proc.vmalloced, 3);
	assert_int_equal(k->proc.from_cache, 0);
	assert_int_equal(k->proc.to_cache, 2);
	assert_int_equal(k->proc.to_rcu, 1);
	assert_int_equal(k->proc.rcu_vfree, 1);
	assert_int_equal(k->proc.rcu_to_cache, 0);
	assert_int_equal(k->cached_stacks[2], p.c[0].stack);
	assert_int_equal(k->cached_stacks[3], p.c[1].stack);
	/* the RCU callback ran a grace period after the third exit */
	assert_true(s->now >= p.c[2].t_exit + (uint64_t)P(s, P_rcu_grace_ns));
	assert_int_equal(thread_size(s), 16384);
	tsim_free(s);
}

struct refork {
	struct pchild c[4];
	struct task *t[4];
	uint64_t stack_after_free;
};

/* on CPU 1: three children exit (two stacks cached, one to RCU); within the
 * grace period a fork takes a cached stack (the same VA, not vmalloc), so the
 * RCU callback finds a free slot */
static void refork_fn(struct sim *s, struct sim_thread *t)
{
	struct refork *r = t->arg;
	for (int i = 0; i < 3; i++) {
		r->c[i].run_ns = 1000000;
		r->t[i] = sys_fork(s, sizeof(struct task), child_fn, &r->c[i], 1);
	}
	for (int i = 0; i < 3; i++)
		sys_wait4(s);
	r->t[3] = sys_fork(s, sizeof(struct task), child_fn, &r->c[3], 2);
	sys_wait4(s);
}

static void test_stack_cache_reuse(void **state)
{
	struct refork r = {0};
	struct sim *s = tsim_new("x86-24", 4, NESTED_FULLMM);
	kernel_of(s)->kasan = true;
	tsim_spawn(s, refork_fn, &r, 1);
	tsim_run(s);
	struct kernel *k = kernel_of(s);
	assert_int_equal(thread_size(s), 32768);
	assert_int_equal(k->proc.vmalloced, 3);
	assert_int_equal(k->proc.from_cache, 1);
	assert_true(r.c[3].stack == r.c[0].stack || r.c[3].stack == r.c[1].stack);
	assert_int_equal(k->proc.to_rcu, 1);
	assert_int_equal(k->proc.rcu_to_cache, 1);
	assert_int_equal(k->proc.rcu_vfree, 0);
	tsim_free(s);
}

/* ---- exit_mmap ---- */

struct teardown {
	uint64_t pages;
	bool use_munmap;		/* the contrast: munmap of the same range */
	struct tlbsim_metrics before, after;
};

static void teardown_fn(struct sim *s, struct sim_thread *t)
{
	struct teardown *d = t->arg;
	struct mm_struct *mm = task_of(t)->mm;
	uint64_t ps = hw_of(s)->geom.page_size;
	uint64_t p = sys_mmap(s, 0, d->pages * ps, TLBSIM_MAP_PRIVATE);
	for (uint64_t i = 0; i < d->pages; i++)
		assert_int_equal(user_access(s, p + i * ps, true), 0);
	d->before = s->m;
	if (d->use_munmap) {
		sys_munmap(s, p, d->pages * ps);
	} else {
		sim_set_mode(s, MODE_SYS);
		mmput(s, mm);
		task_of(t)->mm = NULL;
		assert_int_equal(mm->nr_vmas, 0);
		assert_int_equal(frame_of(hw_of(s), mm->pgd)->nr_used, 0);
		assert_int_equal(mm->users, 0);
		assert_int_equal(mm->count, 1);		/* this CPU's active_mm */
	}
	d->after = s->m;
}

#define DELTA(d, f) ((d).after.f - (d).before.f)

static void test_exit_mmap_fullmm_arm64(void **state)
{
	struct teardown d = {.pages = 64};
	struct sim *s = tsim_new("arm64-4k", 4, NESTED_FULLMM);
	tsim_spawn(s, teardown_fn, &d, 1);
	tsim_run(s);
	assert_int_equal(DELTA(d, tlbi.vale1is), 0);
	assert_int_equal(DELTA(d, tlbi.vae1is), 0);
	assert_int_equal(DELTA(d, tlbi.aside1is), 1);
	assert_int_equal(DELTA(d, pages_freed), 64);
	assert_int_equal(DELTA(d, gathers), 1);
	/* PTE, PMD and PUD table, freed after the RCU grace period */
	assert_int_equal(s->m.tables_freed, 3);
	tsim_free(s);

	struct teardown m = {.pages = 64, .use_munmap = true};
	s = tsim_new("arm64-4k", 4, NESTED_FULLMM);
	tsim_spawn(s, teardown_fn, &m, 1);
	tsim_run(s);
	assert_true(DELTA(m, tlbi.vale1is) + DELTA(m, tlbi.vae1is) >= 64);
	tsim_free(s);
}

static void test_exit_mmap_x86_one_full_flush(void **state)
{
	struct teardown d = {.pages = 16};
	struct sim *s = tsim_new("x86-24", 4, NESTED_FULLMM);
	tsim_spawn(s, teardown_fn, &d, 1);
	tsim_run(s);
	assert_int_equal(DELTA(d, flush_full), 1);
	assert_int_equal(DELTA(d, flush_local_pages), 0);
	assert_int_equal(DELTA(d, ipi_sent), 0);
	assert_int_equal(DELTA(d, pages_freed), 16);
	assert_int_equal(DELTA(d, tables_freed), 3);
	tsim_free(s);
}

/* ---- the mm's lifetime ---- */

struct lifetime {
	struct pchild c[2];
	int mms_after_first, mms_after_second;
	bool first_mm_cached;
	struct mm_struct *first_mm;
	int first_id;
	bool freed_after_second;
};

static void lifetime_fn(struct sim *s, struct sim_thread *t)
{
	struct lifetime *l = t->arg;
	struct kernel *k = kernel_of(s);
	l->c[0].exec = true;
	l->c[0].pages = 2;
	sys_fork(s, sizeof(struct task), child_fn, &l->c[0], 2);
	sys_wait4(s);
	/* CPU 2 idles lazily with the exited job's mm: still there */
	l->first_mm = l->c[0].mm_after;
	l->first_id = l->first_mm->id;
	l->mms_after_first = k->nr_mms;
	l->first_mm_cached = false;
	for (struct mm_struct *m = k->mm_free; m; m = m->next_free)
		l->first_mm_cached |= m == l->first_mm;
	l->c[1].exec = true;
	sys_fork(s, sizeof(struct task), child_fn, &l->c[1], 2);
	sys_wait4(s);
	l->mms_after_second = k->nr_mms;
	/* on the free list, or already reused for a later mm */
	for (struct mm_struct *m = k->mm_free; m; m = m->next_free)
		l->freed_after_second |= m == l->first_mm;
	l->freed_after_second |= l->first_mm->id != l->first_id;
}

static void test_mm_lives_while_lazily_loaded(void **state)
{
	struct lifetime l = {0};
	struct sim *s = tsim_new("x86-24", 4, NESTED_FULLMM);
	tsim_spawn(s, lifetime_fn, &l, 0);
	tsim_run(s);
	assert_false(l.first_mm_cached);
	assert_true(l.freed_after_second);
	/* mm 0 (the parent's) + the one CPU 2 keeps lazily */
	assert_int_equal(l.mms_after_first, 2);
	assert_int_equal(l.mms_after_second, 2);
	tsim_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tasklist_readers_share),
		cmocka_unit_test(test_tasklist_writer_excludes),
		cmocka_unit_test(test_tasklist_waiting_writer_blocks_readers),
		cmocka_unit_test(test_tasklist_fifo),
		cmocka_unit_test(test_tasklist_queued_readers_enter_together),
		cmocka_unit_test(test_tasklist_irqs_off_spinning_and_holding),
		cmocka_unit_test(test_tasklist_writer_delays_ipi),
		cmocka_unit_test(test_tasklist_wait_metrics),
		cmocka_unit_test(test_fork_exit_wait_counts),
		cmocka_unit_test(test_fork_placement),
		cmocka_unit_test(test_execve_replaces_mm),
		cmocka_unit_test(test_stack_cache_two_slots_then_rcu),
		cmocka_unit_test(test_stack_cache_reuse),
		cmocka_unit_test(test_exit_mmap_fullmm_arm64),
		cmocka_unit_test(test_exit_mmap_x86_one_full_flush),
		cmocka_unit_test(test_mm_lives_while_lazily_loaded),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
