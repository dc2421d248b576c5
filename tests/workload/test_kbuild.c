/*
 * test_kbuild.c - the kbuild workload (make -j N, src/workload/kbuild.c).
 *
 * Rules:
 *  - every job is forked, execs, exits and is reaped exactly once: ops =
 *    forks = execs = exits = reaped = jobs (-w jobs, else --iters per slot);
 *  - every forked stack came from a CPU's cache or from vmalloc, and every
 *    dead one went to a cache or to RCU; after the run no task keeps one;
 *  - each job faults its ws_pages in once and exit_mmap frees them;
 *  - at most `slots` jobs run at once;
 *  - a run is a function of its configuration and seed: the same seed gives
 *    identical metrics, another seed other job times (another wall time);
 *  - kasan=on: 32 KiB stacks and the KASAN-scaled kernel costs (more sys
 *    time than kasan=off for the same jobs);
 *  - job_sigma=0: every job runs exactly job_ms of user time.
 */
#include "test_util.h"

struct kb {
	struct tlbsim_metrics m;
	uint64_t forks, execs, exits, reaped;
	uint64_t from_cache, vmalloced, to_cache, to_rcu, rcu_vfree;
	uint64_t thread_size;
	int max_running;
	int live_stacks;
};

static void set_w(struct tlbsim_config *cfg, const char *name, const char *value)
{
	int i = cfg->nwparams++;
	snprintf(cfg->wparams[i].name, sizeof(cfg->wparams[i].name), "%s", name);
	snprintf(cfg->wparams[i].value, sizeof(cfg->wparams[i].value), "%s", value);
}

/* run kbuild with "name=value" pairs (NULL-terminated) */
static void run_kbuild(int cpus, int slots, int64_t iters, uint64_t seed, const char *const *w,
		       struct kb *out)
{
	struct tlbsim_config cfg;
	tlbsim_config_init(&cfg);
	cfg.workload = "kbuild";
	cfg.profile = "x86-24";
	cfg.cpus = cpus;
	cfg.threads = slots;
	cfg.iters = iters;
	cfg.seed = seed;
	cfg.overrides[cfg.noverrides].param = P_jitter;	/* exact job times */
	cfg.overrides[cfg.noverrides++].value = 0;
	for (int i = 0; w && w[i]; i += 2)
		set_w(&cfg, w[i], w[i + 1]);
	struct tlbsim_resolved res;
	char err[TLBSIM_ERRLEN];
	if (tlbsim_resolve(&cfg, &res, err, sizeof(err)))
		fail_msg("resolve: %s", err);
	struct tlbsim_sim *ts = malloc(sizeof(*ts));
	assert_non_null(ts);
	struct core_opts o = {.want_kind = -1};
	if (core_build(ts, &cfg, &res, &o, err, sizeof(err)))
		fail_msg("core_build: %s", err);
	struct sim *s = core_sim(ts);
	s->on_bug = tsim_on_bug;
	if (sim_run(s))
		fail_msg("sim_run: %s", s->errmsg);
	struct kernel *k = kernel_of(s);
	memset(out, 0, sizeof(*out));
	out->m = s->m;
	/* what the front end's report adds up from the CPUs */
	out->m.wall_ns = s->now;
	for (int c = 0; c < s->nr_cpus; c++) {
		out->m.user_ns += s->cpus[c].user_ns;
		out->m.sys_ns += s->cpus[c].sys_ns;
	}
	out->forks = k->proc.forks;
	out->execs = k->proc.execs;
	out->exits = k->proc.exits;
	out->reaped = k->proc.reaped;
	out->from_cache = k->proc.from_cache;
	out->vmalloced = k->proc.vmalloced;
	out->to_cache = k->proc.to_cache;
	out->to_rcu = k->proc.to_rcu;
	out->rcu_vfree = k->proc.rcu_vfree;
	out->thread_size = thread_size(s);
	for (int i = 0; i < s->nthreads; i++)
		out->live_stacks += task_of(s->threads[i])->stack != 0;
	core_destroy(ts);
	free(ts);
}

static void test_small_run_counts(void **state)
{
	const char *w[] = {"jobs", "20", "job_ms", "2", "ws_pages", "8", "procs", "1", NULL};
	struct kb r;
	run_kbuild(4, 4, 1, 1, w, &r);
	assert_int_equal(r.m.ops, 20);
	assert_int_equal(r.forks, 20);
	assert_int_equal(r.execs, 20);
	assert_int_equal(r.exits, 20);
	assert_int_equal(r.reaped, 20);
	assert_int_equal(r.from_cache + r.vmalloced, 20);
	assert_int_equal(r.to_cache + r.to_rcu, 20);
	assert_true(r.from_cache > 0);		/* make's CPU reuses stacks */
	assert_int_equal(r.live_stacks, 0);
	assert_int_equal(r.m.page_faults, 20 * 8);
	/* the working sets at exit, and the pages of every stack that went
	 * through RCU to vfree (vfree frees an area's pages at once) */
	assert_int_equal(r.m.pages_freed, 20 * 8 + r.rcu_vfree * (r.thread_size / 4096));
	assert_int_equal(r.thread_size, 32768);	/* kasan=on by default */
	assert_int_equal(r.m.violations, 0);
	assert_int_equal(r.m.softlockups, 0);
}

/* --iters jobs per slot when -w jobs is 0 */
static void test_jobs_from_iters(void **state)
{
	const char *w[] = {"job_ms", "1", "ws_pages", "0", NULL};
	struct kb r;
	run_kbuild(8, 3, 5, 1, w, &r);
	assert_int_equal(r.m.ops, 15);
	assert_int_equal(r.m.page_faults, 0);
}

/* at most `slots` jobs at once: with job_sigma=0 and N slots, jobs run in
 * waves, so the user time is jobs x job_ms and the wall about
 * jobs / slots x job_ms */
static void test_slots_bound_concurrency(void **state)
{
	const char *w[] = {"jobs", "12", "job_ms", "10", "job_sigma", "0", "ws_pages", "0",
			   "kasan", "off", NULL};
	struct kb r;
	run_kbuild(16, 3, 1, 1, w, &r);
	assert_int_equal(r.m.ops, 12);
	assert_true(r.m.user_ns >= 12 * 10000000ull);
	assert_true(r.m.user_ns < 12 * 10000000ull + 1000000);
	/* 4 waves of 10 ms; less than 5 would mean more than 3 at once */
	assert_true(r.m.wall_ns >= 40000000);
	assert_true(r.m.wall_ns < 50000000);
}

static void test_deterministic(void **state)
{
	const char *w[] = {"jobs", "30", "job_ms", "3", "ws_pages", "4", NULL};
	struct kb a, b, c;
	run_kbuild(6, 6, 1, 7, w, &a);
	run_kbuild(6, 6, 1, 7, w, &b);
	run_kbuild(6, 6, 1, 8, w, &c);
	assert_memory_equal(&a.m, &b.m, sizeof(a.m));
	assert_true(a.m.user_ns != c.m.user_ns);	/* other job times */
	assert_int_equal(c.m.ops, 30);
}

static void test_kasan_off(void **state)
{
	const char *on[] = {"jobs", "16", "job_ms", "1", "job_sigma", "0", "ws_pages", "4",
			    "kasan", "on", NULL};
	const char *off[] = {"jobs", "16", "job_ms", "1", "job_sigma", "0", "ws_pages", "4",
			     "kasan", "off", NULL};
	struct kb a, b;
	run_kbuild(4, 4, 1, 1, on, &a);
	run_kbuild(4, 4, 1, 1, off, &b);
	assert_int_equal(a.thread_size, 32768);
	assert_int_equal(b.thread_size, 16384);
	assert_int_equal(a.m.ops, b.m.ops);
	assert_true(a.m.sys_ns > b.m.sys_ns);
}

/* 64 CPUs, one slot each: the tasklist_lock sees writers queue */
static void test_many_cpus_contend(void **state)
{
	const char *w[] = {"jobs", "256", "job_ms", "0.5", "ws_pages", "2", NULL};
	struct kb r;
	run_kbuild(64, 0, 1, 1, w, &r);
	assert_int_equal(r.m.ops, 256);
	assert_true(r.m.tasklist_lock_waits > 0);
	assert_true(r.m.tasklist_lock_wait_max_ns > 0);
	assert_true(r.m.tasklist_lock_wait_ns >= r.m.tasklist_lock_wait_max_ns);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_small_run_counts),
		cmocka_unit_test(test_jobs_from_iters),
		cmocka_unit_test(test_slots_bound_concurrency),
		cmocka_unit_test(test_deterministic),
		cmocka_unit_test(test_kasan_off),
		cmocka_unit_test(test_many_cpus_contend),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
