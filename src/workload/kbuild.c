/*
 * kbuild.c - `make -j N` of a kernel tree: the seed-003 workload (a 256-CPU
 * KASAN x86 machine soft-locked during a kernel build, v6.10).
 *
 * make (the workload's main process, on CPU 0) keeps N job slots busy: it
 * forks a job per free slot and then loops in wait4(), reaping one finished
 * job and forking the next, until every job has run. Each job is a compiler
 * process: fork (copy_process: task, vmalloc'ed kernel stack, new mm,
 * tasklist_lock write section), execve (a new mm; the forked one torn down),
 * mmap and write its working set (ws_pages anonymous pages: one fault each),
 * compute in user mode for its run time, exit (exit_mmap, exit_notify's
 * write section, the stack released on its CPU: per-CPU cache, else RCU and
 * vfree_atomic - the lazily freed vmalloc areas of seed 003), and make's
 * wait4 reaps it (read section, then release_task's write section).
 *
 * Job run time (-w job_ms, -w job_sigma): a job's user CPU time besides its
 * page faults, lognormal with mean job_ms and shape job_sigma (0: every job
 * exactly job_ms). First principles: a kernel translation unit compiles in
 * roughly 0.05-2 s; the spread is multiplicative (header-heavy and generated
 * files take many times the typical one) and right-skewed, which a lognormal
 * with sigma 1 (a factor e^2 ~ 7 either side at 2 sigma) captures; the mean
 * 200 ms keeps a run of thousands of jobs short. Samples above 50 x the mean
 * (probability ~5e-6 at sigma 1) are cut there. Drawn by make at each fork,
 * from the simulation's PRNG, so a seed fixes them.
 *
 * The working set is scaled down (cc1's resident set is tens of MiB; the
 * default 256 pages is 1 MiB on 4K pages): it exists here for the page faults
 * and syscalls that enter the kernel (each touches the kernel stack) and for
 * exit_mmap's teardown, not for the compiler's own TLB behaviour.
 *
 * A job is a chain of -w procs processes (default 3: make runs the recipe
 * with `sh -c`, the shell runs the gcc driver, the driver runs cc1; the
 * assembler is left out): each forks the next from the CPU it runs on and
 * waits for it, so kernel stacks are allocated and freed on every CPU, not
 * only make's. The last one is the compiler proper described above.
 *
 * Job slots: --threads/--tasks (default one per CPU). Jobs: -w jobs, or
 * when 0 (default) --iters per slot (default 80: 20480 jobs on x86-256, enough
 * exits past the stack caches for a few lazy purges; with 4, the earlier
 * default, the build ended before vmap_lazy_nr reached lazy_max_pages() and
 * showed no purge at all). ops = jobs completed;
 * ops_per_sec = jobs per simulated second of the whole build.
 * -w kasan=on|off sets the kernel's CONFIG_KASAN (KASAN_VMALLOC): the kernel
 * stack is 32 KiB instead of 16 KiB and shadowed, and kernel costs scale
 * (kasan_slowdown).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "workload/workload.h"

struct kbuild {
	int slots;
	uint64_t jobs;			/* to run in all */
	uint64_t job_ns;		/* mean user CPU time of a job */
	uint64_t sigma_milli;		/* lognormal shape x 1000 */
	uint64_t ws_pages;
	uint64_t procs;			/* processes per job (the exec chain) */
	bool kasan;
	uint64_t started;
};

/* a compiler process */
struct kjob {
	struct task task;		/* first member (sys_fork embeds it) */
	struct kbuild *st;
	uint64_t run_ns;
	uint64_t depth;			/* 1: forked by make; procs: the compiler proper */
};

#define JOB_STEP_NS 1000000u		/* user time per yield point while computing */
#define JOB_CUT 50			/* longest job: 50 x the mean */

static const struct sim_point tp_compile = {"cc1", NULL, SP_QUIET};

/* A job's run time: lognormal with mean st->job_ns, shape sigma. */
static uint64_t job_time(struct sim *s, const struct kbuild *st)
{
	if (!st->sigma_milli)
		return st->job_ns;
	double sigma = (double)st->sigma_milli / 1000.0;
	double u1 = (double)((rng_next(&s->rng) >> 11) + 1) * 0x1p-53;	/* (0, 1] */
	double u2 = (double)(rng_next(&s->rng) >> 11) * 0x1p-53;	/* [0, 1) */
	double z = sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
	double x = (double)st->job_ns * exp(sigma * z - sigma * sigma / 2.0);
	double cut = (double)st->job_ns * JOB_CUT;
	return (uint64_t)(x < cut ? x : cut);
}

/* one process of a job: exec; a shell or driver (depth < procs) forks the
 * next process of the chain from its own CPU and waits for it; the compiler
 * proper maps and writes the working set and computes; then exit */
static void kbuild_job(struct sim *s, struct sim_thread *t)
{
	struct kjob *j = container_of(task_of(t), struct kjob, task);
	const struct kbuild *st = j->st;
	uint64_t ps = hw_of(s)->geom.page_size;
	sys_execve(s);
	if (j->depth < st->procs) {
		struct task *c = sys_fork(s, sizeof(struct kjob), kbuild_job, NULL, -1);
		if (!c)
			return;
		struct kjob *n = container_of(c, struct kjob, task);
		n->st = j->st;
		n->run_ns = j->run_ns;
		n->depth = j->depth + 1;
		sys_wait4(s);
		return;
	}
	if (st->ws_pages) {
		uint64_t len = st->ws_pages * ps;
		uint64_t p = sys_mmap(s, 0, len, TLBSIM_MAP_PRIVATE);
		if (p == TLBSIM_EINVAL_VA) {
			sim_fail(s, TLBSIM_EINVAL, "kbuild: mmap of the working set failed");
			return;
		}
		for (uint64_t a = p; a < p + len && !s->error; a += ps)
			user_access(s, a, true);
	}
	for (uint64_t left = j->run_ns; left && !s->error;) {
		uint64_t d = left < JOB_STEP_NS ? left : JOB_STEP_NS;
		sim_step(s, &tp_compile, d);
		left -= d;
	}
	/* returning is exit(): do_exit() follows (sys_fork) */
}

static void fork_job(struct sim *s, struct kbuild *st)
{
	uint64_t run = job_time(s, st);
	struct task *c = sys_fork(s, sizeof(struct kjob), kbuild_job, NULL, -1);
	if (!c)
		return;
	/* filled before the child can run: nothing yields in between */
	struct kjob *j = container_of(c, struct kjob, task);
	j->st = st;
	j->run_ns = run;
	j->depth = 1;
	st->started++;
}

/* make -j slots */
static void kbuild_main(struct sim *s, struct sim_thread *t)
{
	struct kbuild *st = t->arg;
	int running = 0;
	while (running < st->slots && st->started < st->jobs && !s->error) {
		fork_job(s, st);
		running++;
	}
	while (running > 0 && !s->error) {
		if (!sys_wait4(s))
			break;
		running--;
		s->m.ops++;
		if (st->started < st->jobs) {
			fork_job(s, st);
			running++;
		}
	}
}

/* digits[.digits] (at most 3 decimals) in thousandths; -1 if malformed */
static int parse_milli(const char *txt, uint64_t *out)
{
	uint64_t v = 0;
	int frac = -1;
	if (!*txt)
		return -1;
	for (const char *p = txt; *p; p++) {
		if (*p == '.' && frac < 0 && p != txt && p[1]) {
			frac = 0;
			continue;
		}
		if (*p < '0' || *p > '9' || frac >= 3 || v > 1000000000000ull)
			return -1;
		v = v * 10 + (uint64_t)(*p - '0');
		if (frac >= 0)
			frac++;
	}
	for (int f = frac < 0 ? 0 : frac; f < 3; f++)
		v *= 10;
	*out = v;
	return 0;
}

static int kbuild_setup(struct sim *s, const struct tlbsim_resolved *r, void **state, char *err,
			size_t errlen)
{
	struct kbuild *st = kernel_obj_alloc(s, sizeof(*st));
	if (!st) {
		snprintf(err, errlen, "out of memory");
		return TLBSIM_ENOMEM;
	}
	*state = st;
	st->slots = r->threads;
	const char *v = wparam(r, "kasan");
	if (strcmp(v, "on") == 0)
		st->kasan = true;
	else if (strcmp(v, "off") != 0) {
		snprintf(err, errlen, "workload parameter kasan=%s: want on or off", v);
		return TLBSIM_EINVAL;
	}
	v = wparam(r, "jobs");
	if (parse_u64(v, &st->jobs) || st->jobs > 1000000) {
		snprintf(err, errlen, "workload parameter jobs=%s: want 0..1000000 (0: --iters per "
			 "job slot)", v);
		return TLBSIM_EINVAL;
	}
	if (!st->jobs) {
		if ((uint64_t)r->iters * (uint64_t)r->threads > 1000000) {
			snprintf(err, errlen, "--iters %lld x %d job slots: more than 1000000 jobs",
				 (long long)r->iters, r->threads);
			return TLBSIM_EINVAL;
		}
		st->jobs = (uint64_t)r->iters * (uint64_t)r->threads;
	}
	uint64_t ms;
	v = wparam(r, "job_ms");
	if (parse_milli(v, &ms) || ms < 1 || ms > 600000000) {
		snprintf(err, errlen, "workload parameter job_ms=%s: want a number of milliseconds "
			 "0.001..600000 (at most 3 decimals)", v);
		return TLBSIM_EINVAL;
	}
	st->job_ns = ms * 1000;
	v = wparam(r, "job_sigma");
	if (parse_milli(v, &st->sigma_milli) || st->sigma_milli > 3000) {
		snprintf(err, errlen, "workload parameter job_sigma=%s: want 0..3 (at most 3 "
			 "decimals)", v);
		return TLBSIM_EINVAL;
	}
	v = wparam(r, "ws_pages");
	if (parse_u64(v, &st->ws_pages) || st->ws_pages > (1u << 20)) {
		snprintf(err, errlen, "workload parameter ws_pages=%s: want 0..1048576", v);
		return TLBSIM_EINVAL;
	}
	v = wparam(r, "procs");
	if (parse_u64(v, &st->procs) || st->procs < 1 || st->procs > 8) {
		snprintf(err, errlen, "workload parameter procs=%s: want 1..8", v);
		return TLBSIM_EINVAL;
	}
	/* the kernel this build runs on (thread_size depends on it) */
	kernel_of(s)->kasan = st->kasan;
	return 0;
}

/* ops = jobs: -w jobs, else --iters per slot */
static uint64_t kbuild_expected_ops(const struct tlbsim_resolved *r, int page_shift)
{
	uint64_t jobs;
	if (parse_u64(wparam(r, "jobs"), &jobs))
		return 0;
	return jobs ? jobs : (uint64_t)r->iters * (uint64_t)r->threads;
}

/* every slot's working set at once, plus each job's task object (kept until
 * the end of the run) */
static uint64_t kbuild_estimate(const struct tlbsim_resolved *r, int page_shift)
{
	uint64_t ws, jobs;
	if (parse_u64(wparam(r, "ws_pages"), &ws) || parse_u64(wparam(r, "jobs"), &jobs) ||
	    ws > (1u << 20))
		return 0;	/* malformed or out of range: setup says which */
	if (!jobs)
		jobs = (uint64_t)r->iters * (uint64_t)r->threads;
	if (jobs > 1000000)
		return 0;	/* setup says so */
	return (uint64_t)r->threads * (estimate_mapped_bytes(ws + 1, page_shift) + (16u << 10)) +
	       jobs * 512;
}

static const struct tlbsim_wparam_desc kbuild_params[] = {
	{"kasan", "on", "the kernel's CONFIG_KASAN (+KASAN_VMALLOC): on or off"},
	{"jobs", "0", "jobs (compiler runs) in all; 0: --iters per job slot"},
	{"job_ms", "200", "mean user CPU time of a job in ms (lognormal)"},
	{"job_sigma", "1", "lognormal shape of the job times; 0: every job job_ms"},
	{"ws_pages", "256", "anonymous pages each job maps and writes"},
	{"procs", "3", "processes per job, each forked by the previous from its own CPU: "
		       "sh -c, the gcc driver, cc1 (1: make forks the compiler itself)"},
};

static const struct tlbsim_workload_desc kbuild_desc = {
	.name = "kbuild",
	.description = "make -j N (seed 003): make forks compiler jobs into N slots and reaps "
		       "them with wait4; each execs, writes ws_pages, computes, exits (vmalloc'ed "
		       "kernel stacks, tasklist_lock); ops = jobs",
	.default_profile = "x86-256",
	.default_threads = 0,
	.default_iters = 80,
	.nparams = (int)(sizeof(kbuild_params) / sizeof(kbuild_params[0])),
	.params = kbuild_params,
	.check_iters = 1,
	.check_cpus = 2,
	.check_wparams = "jobs=3,job_ms=0.1,ws_pages=2,procs=1",
};

const struct workload_ops kbuild_ops = {
	.desc = &kbuild_desc,
	.setup = kbuild_setup,
	.main = kbuild_main,
	.estimate = kbuild_estimate,
	.expected_ops = kbuild_expected_ops,
};
