/*
 * test_partial.c - a run stopped early (--time-limit, SIGINT/SIGTERM) still
 * accounts consistently (docs/output.md: always user_ns + sys_ns + idle_ns =
 * wall_ns x cpus).
 *
 * The stop is made deterministic: interrupted() answers "SIGINT" at its k-th
 * poll (the engine polls every 4096 steps and every 4096 events), for a range
 * of k, on workloads whose threads are queued with time already charged to
 * their CPUs when the run stops (several CPUs busy at once). The partial
 * run's wall time must cover that charged time; it used to end at the
 * stopping thread's clock, so a CPU could be busy longer than the run.
 */
#include <signal.h>

#include "test_util.h"

struct stop_at {
	int polls, at;
};

static int stop_at_poll(void *ctx)
{
	struct stop_at *st = ctx;
	return ++st->polls >= st->at ? SIGINT : 0;
}

struct cfg_case {
	const char *workload, *profile;
	int threads, cpus;
	const char *w[2];	/* NAME=VALUE, or NULL */
	uint64_t duration_ns;
	int64_t iters;
};

static void run_stopped(const struct cfg_case *c, int at)
{
	struct tlbsim_config cfg;
	tlbsim_config_init(&cfg);
	cfg.workload = c->workload;
	cfg.profile = c->profile;
	cfg.threads = c->threads;
	cfg.cpus = c->cpus;
	cfg.duration_ns = c->duration_ns;
	cfg.iters = c->iters;
	for (int i = 0; i < 2 && c->w[i]; i++) {
		const char *eq = strchr(c->w[i], '=');
		assert_non_null(eq);
		snprintf(cfg.wparams[i].name, sizeof(cfg.wparams[i].name), "%.*s",
			 (int)(eq - c->w[i]), c->w[i]);
		snprintf(cfg.wparams[i].value, sizeof(cfg.wparams[i].value), "%s", eq + 1);
		cfg.nwparams++;
	}
	tlbsim_policy_apply_workload(&cfg.policy, c->workload);
	char err[TLBSIM_ERRLEN];
	struct tlbsim_resolved res;
	if (tlbsim_resolve(&cfg, &res, err, sizeof(err)))
		fail_msg("%s: %s", c->workload, err);
	struct stop_at st = {0, at};
	struct core_opts o = {.want_kind = -1, .interrupted = stop_at_poll, .interrupted_ctx = &st};
	struct run_outcome out;
	if (tlbsim_run_one(&cfg, &res, &o, &out, err, sizeof(err)))
		fail_msg("%s: %s", c->workload, err);
	if (out.stopped != SIM_STOP_SIGNAL)
		fail_msg("%s: not stopped at poll %d (%d polls)", c->workload, at, st.polls);
	const struct tlbsim_metrics *m = &out.m;
	uint64_t lhs = m->user_ns + m->sys_ns + m->idle_ns;
	uint64_t rhs = m->wall_ns * (uint64_t)res.cpus;
	if (lhs != rhs)
		fail_msg("%s on %s stopped at poll %d: user %llu + sys %llu + idle %llu = %llu, "
			 "wall %llu x %d cpus = %llu", c->workload, res.profile->name, at,
			 (unsigned long long)m->user_ns, (unsigned long long)m->sys_ns,
			 (unsigned long long)m->idle_ns, (unsigned long long)lhs,
			 (unsigned long long)m->wall_ns, res.cpus, (unsigned long long)rhs);
}

static void test_partial_identity(void **state)
{
	(void)state;
	static const struct cfg_case cases[] = {
		{"page_fault1", "arm64-4k", 2, 2, {"size=64K", NULL}, 3600000000000ull, 0},
		{"tlb_flush2", "arm64-4k", 3, 3, {"size=64K", NULL}, 3600000000000ull, 0},
		{"page_fault3", "x86-24", 2, 2, {"size=64K", "fs=tmpfs"}, 3600000000000ull, 0},
		{"mmap8", "falkor-46", 4, 0, {NULL, NULL}, 0, 1000000000},
		{"mmap8", "x86-24", 8, 4, {NULL, NULL}, 0, 1000000000},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		for (int at = 1; at <= 24; at++)
			run_stopped(&cases[i], at);
}

static int count_polls(void *ctx)
{
	++*(int *)ctx;
	return 0;
}

/* The rule of core_opts.interrupted_period_ns: interrupted() is asked at
 * every poll of the engine when it is 0, and at most once per that much host
 * time otherwise (the CLI's callback is a system call) - here a period longer
 * than the run: asked at the first poll only. */
static void test_interrupted_period(void **state)
{
	(void)state;
	struct tlbsim_config cfg;
	struct tlbsim_resolved res;
	tsim_workload_cfg(&cfg, &res, "mmap8", "falkor-46", 4, 3000);
	char err[TLBSIM_ERRLEN];
	int polls[2] = {0, 0};
	for (int i = 0; i < 2; i++) {
		struct core_opts o = {.want_kind = -1, .interrupted = count_polls,
				      .interrupted_ctx = &polls[i],
				      .interrupted_period_ns = i ? 3600000000000ull : 0};
		struct run_outcome out;
		if (tlbsim_run_one(&cfg, &res, &o, &out, err, sizeof(err)))
			fail_msg("%s", err);
		assert_int_equal(out.stopped, SIM_STOP_NONE);
	}
	if (polls[0] < 3)
		fail_msg("period 0: interrupted() asked %d times, want one per poll (>= 3)",
			 polls[0]);
	assert_int_equal(polls[1], 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_partial_identity),
		cmocka_unit_test(test_interrupted_period),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
