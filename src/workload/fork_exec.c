/*
 * fork_exec.c - a usemem-like churn of fork, touch, exec and exit.
 *
 * usemem (usemem.c of the vm-scalability suite,
 * https://git.kernel.org/pub/scm/linux/kernel/git/wfg/vm-scalability.git)
 * allocates anonymous memory and touches it page by page; this workload puts
 * that touching into the children of a fork/exit loop, so that every round
 * goes through fork's copy of the address space and its flush, copy-on-write
 * faults, an optional exec, and the teardowns:
 *
 *   parent i (one per CPU by default, pinned to CPU i % ncpus):
 *     p = mmap(pages, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS);
 *     write each page of p;                     (its own fill, once)
 *     loop: pid = fork();
 *           child: touch each page of p - write_pct percent of them are
 *                  writes (COW faults: a copy, a flush of the child's mm
 *                  only), the rest reads; with exec=1 then execve (the
 *                  inherited mm is released: exit_mmap, fullmm) and, like
 *                  usemem after it starts, mmap a fresh private region of
 *                  `pages` pages and write each page; exit (exit_mmap);
 *           parent: wait4(); write each page of p again - fork
 *                  write-protected its PTEs, so each write takes a
 *                  write-protect fault, which reuses the page (the child's
 *                  reference is gone) in place;
 *           ops++ (one per fork)
 *
 * With -w parent_threads=T each parent process also runs T - 1 threads that
 * compute on CPUs of their own (parent i's j-th on CPU i + j x nparents) until
 * the window closes: a multi-threaded process forking, whose fork flush
 * reaches every CPU running it (x86: IPIs to mm_cpumask; with INVLPGB, an mm
 * active on more than 3 CPUs gets a global ASID and broadcasts instead).
 *
 * The kernel paths are those of src/mm: sys_fork (dup_mmap,
 * copy_page_range, flush_tlb_mm of the parent), do_wp_page (wp_page_copy /
 * wp_page_reuse), sys_execve (exec_mmap: new mm, activate_mm, mmput of the
 * old one), do_exit and sys_wait4. Children are placed by the kernel's fork
 * balancing (the least loaded CPU).
 *
 * Harness as will-it-scale's (window.c): each parent's first round is
 * warm-up; the window opens when the last parent finishes it and closes when
 * every parent has done --iters more rounds, or --duration simulated seconds
 * later. ops_per_sec = forks per second in the window, summed over parents.
 * Per-fork flush figures are the run's totals divided by `ops` (every round,
 * warm-up included; the totals also hold the launcher's forks of the
 * parents and each parent's first fill).
 */
#include <stdio.h>
#include <string.h>

#include "workload/workload.h"

struct fe_state {
	int nparents;
	int parent_threads;		/* threads per parent process (1: the parent alone) */
	uint64_t pages;
	uint64_t write_pct;
	bool exec;
	struct measure_window win;	/* fork rounds are its rounds */
	struct fe_parent *parent;
};

struct fe_parent {
	struct fe_state *st;
	uint64_t region;		/* the parent's private region */
	struct sim_thread **helper;	/* its other threads (parent_threads - 1) */
};

/* is page i of n one of the write_pct percent written (spread evenly)? */
static bool fe_write_page(uint64_t i, uint64_t pct)
{
	return (i + 1) * pct / 100 > i * pct / 100;
}

/* touch each page of [p, p + pages): page i written per fe_write_page */
static bool fe_touch(struct sim *s, uint64_t p, uint64_t pages, uint64_t pct)
{
	uint64_t ps = hw_of(s)->geom.page_size;
	for (uint64_t i = 0; i < pages && !s->error; i++) {
		if (user_access(s, p + i * ps, fe_write_page(i, pct))) {
			sim_fail(s, TLBSIM_EINVAL, "fork_exec: access to 0x%llx refused (SIGSEGV)",
				 (unsigned long long)(p + i * ps));
			return false;
		}
	}
	return !s->error;
}

/* the child: touch the inherited region, maybe exec and touch a fresh one;
 * returning is exit() (sys_fork runs do_exit) */
static void fe_child(struct sim *s, struct sim_thread *t)
{
	struct fe_parent *par = t->arg;
	const struct fe_state *st = par->st;
	if (!fe_touch(s, par->region, st->pages, st->write_pct) || !st->exec)
		return;
	sys_execve(s);
	uint64_t len = st->pages * hw_of(s)->geom.page_size;
	uint64_t p = sys_mmap(s, 0, len, TLBSIM_MAP_PRIVATE);
	if (p == TLBSIM_EINVAL_VA) {
		sim_fail(s, TLBSIM_EINVAL, "fork_exec: the exec'ed child's mmap of %llu bytes failed",
			 (unsigned long long)len);
		return;
	}
	fe_touch(s, p, st->pages, 100);
}

/* the parent's loop: fork, wait4, rewrite its region; one op per fork */
static void fe_parent_loop(struct sim *s, struct fe_parent *par)
{
	struct fe_state *st = par->st;
	for (int64_t round = 1; !st->win.stop && !s->error; round++) {
		if (!sys_fork(s, sizeof(struct task), fe_child, par, -1))
			return;
		sys_wait4(s);
		if (!fe_touch(s, par->region, st->pages, 100))
			return;
		s->m.ops++;
		window_round_done(s, &st->win, round);
		window_check_time(s, &st->win);
	}
}

/* a parent's other thread: computes in user mode (10 us steps) on its own
 * CPU until the window closes - it keeps that CPU in the parent's
 * mm_cpumask, so fork's flush of the parent reaches it */
#define FE_HELPER_STEP_NS 10000u
static const struct sim_point tp_helper = {"fork_exec_thread", NULL, SP_QUIET};

static void fe_helper(struct sim *s, struct sim_thread *t)
{
	const struct fe_parent *par = t->arg;
	while (!par->st->win.stop && !s->error)
		sim_step(s, &tp_helper, FE_HELPER_STEP_NS);
}

static void fe_parent_fn(struct sim *s, struct sim_thread *t)
{
	struct fe_parent *par = t->arg;
	struct fe_state *st = par->st;
	uint64_t len = st->pages * hw_of(s)->geom.page_size;
	par->region = sys_mmap(s, 0, len, TLBSIM_MAP_PRIVATE);
	if (par->region == TLBSIM_EINVAL_VA) {
		sim_fail(s, TLBSIM_EINVAL, "fork_exec: mmap of %llu bytes failed",
			 (unsigned long long)len);
		return;
	}
	if (!fe_touch(s, par->region, st->pages, 100))
		return;
	/* the other threads, on CPUs parent + j x nparents (distinct while
	 * nparents x parent_threads <= CPUs) */
	for (int j = 1; j < st->parent_threads && !s->error; j++)
		par->helper[j - 1] = glibc_pthread_create_on(s, fe_helper, par,
							     (t->cpu + j * st->nparents) % s->nr_cpus);
	fe_parent_loop(s, par);
	for (int j = 1; j < st->parent_threads; j++)
		if (par->helper[j - 1])
			glibc_pthread_join(s, par->helper[j - 1]);
}

/* the launcher: fork the parents, one per CPU in turn, and reap them */
static void fe_main(struct sim *s, struct sim_thread *t)
{
	struct fe_state *st = t->arg;
	int started = 0;
	for (int i = 0; i < st->nparents && !s->error; i++) {
		struct task *c = sys_fork(s, sizeof(struct uthread), fe_parent_fn, &st->parent[i],
					  i % s->nr_cpus);
		if (!c)
			break;
		/* the parent's glibc state (its threads' stack cache), set
		 * before it runs: nothing yields in between */
		container_of(c, struct uthread, task)->proc = glibc_proc_alloc(s);
		started++;
	}
	while (started-- > 0 && !s->error)
		if (!sys_wait4(s))
			break;
}

static int fe_setup(struct sim *s, const struct tlbsim_resolved *r, void **state, char *err,
		    size_t errlen)
{
	struct fe_state *st = kernel_obj_alloc(s, sizeof(*st));
	if (!st) {
		snprintf(err, errlen, "out of memory");
		return TLBSIM_ENOMEM;
	}
	*state = st;
	const char *v = wparam(r, "pages");
	if (parse_u64(v, &st->pages) || st->pages < 1 || st->pages > (1u << 20)) {
		snprintf(err, errlen, "workload parameter pages=%s: want 1 to 1048576", v);
		return TLBSIM_EINVAL;
	}
	v = wparam(r, "write_pct");
	if (parse_u64(v, &st->write_pct) || st->write_pct > 100) {
		snprintf(err, errlen, "workload parameter write_pct=%s: want 0 to 100", v);
		return TLBSIM_EINVAL;
	}
	v = wparam(r, "exec");
	if (strcmp(v, "0") != 0 && strcmp(v, "1") != 0) {
		snprintf(err, errlen, "workload parameter exec=%s: want 0 or 1", v);
		return TLBSIM_EINVAL;
	}
	st->exec = v[0] == '1';
	v = wparam(r, "parent_threads");
	uint64_t pt;
	if (parse_u64(v, &pt) || pt < 1 || pt > 64) {
		snprintf(err, errlen, "workload parameter parent_threads=%s: want 1 to 64", v);
		return TLBSIM_EINVAL;
	}
	st->parent_threads = (int)pt;
	st->nparents = r->threads;
	st->parent = kernel_obj_alloc(s, (size_t)st->nparents * sizeof(*st->parent));
	if (!st->parent) {
		snprintf(err, errlen, "out of memory");
		return TLBSIM_ENOMEM;
	}
	for (int i = 0; i < st->nparents; i++) {
		st->parent[i].st = st;
		st->parent[i].helper = kernel_obj_alloc(s, (size_t)st->parent_threads *
							       sizeof(*st->parent[i].helper));
		if (!st->parent[i].helper) {
			snprintf(err, errlen, "out of memory");
			return TLBSIM_ENOMEM;
		}
	}
	window_init(&st->win, r->threads, r->iters, r->duration_ns);
	return 0;
}

/* per parent: its region, a child's copy of it (COW copies, tables) and
 * with exec a child's fresh region; kernel stacks and mm_structs */
static uint64_t fe_estimate(const struct tlbsim_resolved *r, int page_shift)
{
	uint64_t pages, pt;
	if (parse_u64(wparam(r, "pages"), &pages) || parse_u64(wparam(r, "parent_threads"), &pt))
		return 0;
	/* + per thread of a parent: its stack's touched pages and tables */
	return (uint64_t)r->threads * (3 * estimate_mapped_bytes(pages + 1, page_shift) +
				       (128u << 10) + pt * (64u << 10));
}

static const struct tlbsim_wparam_desc fe_params[] = {
	{"pages", "64", "pages of each parent's private anonymous region, all touched by each "
			"child (and, with exec=1, of the child's fresh region after exec)"},
	{"write_pct", "100", "percent of the inherited pages a child writes (COW faults); the "
			     "rest it reads"},
	{"exec", "0", "1: the child execs after touching the inherited region, then maps and "
		      "writes a fresh region; 0: it exits at once"},
	{"parent_threads", "1", "threads per parent process: the others compute on CPUs of their "
				"own, so fork's flush of the parent reaches them (x86: IPIs)"},
};

static const struct tlbsim_workload_desc fe_desc = {
	.name = "fork_exec",
	.description = "usemem-like fork churn (usemem.c of vm-scalability, "
		       "https://git.kernel.org/pub/scm/linux/kernel/git/wfg/vm-scalability.git): "
		       "N parents (one per CPU, pinned; -w parent_threads adds computing threads) "
		       "loop fork; the child writes its inherited "
		       "pages (COW faults), optionally execs and writes a fresh region, exits; the "
		       "parent waits and rewrites its write-protected pages; ops = forks "
		       "(ops_per_sec = forks/s), timed with will-it-scale's harness; "
		       "kernel/fork.c dup_mmap, mm/memory.c copy_page_range and wp_page_copy v5.1, "
		       "fs/exec.c exec_mmap",
	.default_profile = "x86-24",
	.default_threads = 0,
	.default_iters = 20,
	.timed = 1,
	.nparams = (int)(sizeof(fe_params) / sizeof(fe_params[0])),
	.params = fe_params,
	.check_iters = 1,
	.check_cpus = 2,
	.check_wparams = "pages=2",
};

const struct workload_ops fork_exec_ops = {
	.desc = &fe_desc, .setup = fe_setup, .main = fe_main, .estimate = fe_estimate,
};
