/*
 * tlbsim_bench - host speed of the main jobs and of the bare engine.
 *
 *   --suite mmap8 (default): the seed-000 main job, the mmap8 pair
 *     (falkor-46, 16 threads x 100 000 iterations, nested=v2 then
 *     nested=fullmm). Target (issue 2): the pair in <= 10 s on one core of
 *     the 2-vCPU CI machine.
 *   --suite page_fault3: the seed-001 job, page_fault3 (ext4, the default
 *     measurement: a warm-up round and one measured round of 128 MiB per
 *     task) in both modes on arm64-4k with 46 tasks and x86-24 with 24 tasks,
 *     spurious_flush=broadcast and skip_tried: 8 runs. Target (issue 8):
 *     the 8 runs in <= 60 s on one core; events/s at least half the floor.
 *   --suite kbuild: the seed-003 job, kbuild on x86-256 (KASAN on, 90 000
 *     jobs of 16 working-set pages: at least 20 purges each) with
 *     kasan_flush=per_area and per_node. Target (issue 9): the pair in
 *     <= 60 s on one core.
 *
 * Both end with a bare-engine floor measured in the same process: 16
 * coroutines doing nothing but sim_step() through the same event queue.
 *
 * usage: tlbsim_bench [--suite mmap8|page_fault3|kbuild] [--iters N] [--profile P]
 *                     [--floor-steps N]
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/core.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t floor_steps;
static const struct sim_point bench_step = {"bench_step", NULL, 0};

static void spinner(struct sim *s, struct sim_thread *t)
{
	for (uint64_t i = 0; i < floor_steps; i++)
		sim_step(s, &bench_step, 100 + rng_below(&s->rng, 64));
}

/* The engine alone (no machine, no kernel): 16 threads on the profile's CPUs. */
static int bare_floor(const char *profile, double *secs, uint64_t *events)
{
	const struct tlbsim_profile *prof = tlbsim_profile_find(profile);
	int64_t p[P_COUNT];
	tlbsim_params_for(prof, NULL, p);
	struct sim *s = calloc(1, sizeof(*s));
	if (!s || sim_init(s, prof->nr_cpus, p, 1))
		return -1;
	for (int i = 0; i < 16; i++) {
		struct sim_thread *t = sim_thread_alloc(s, sizeof(*t));
		if (!t || sim_thread_start(s, t, spinner, NULL, i, 0))
			return -1;
	}
	double t0 = now_s();
	int rc = sim_run(s);
	*secs = now_s() - t0;
	*events = s->m.events;
	sim_destroy(s);
	free(s);
	return rc;
}

/* one run; adds its host seconds and events to the totals */
static int bench_run(struct tlbsim_config *cfg, const char *label, double *total, uint64_t *ev)
{
	char err[TLBSIM_ERRLEN];
	struct tlbsim_resolved res;
	struct tlbsim_metrics m;
	double t0 = now_s();
	if (tlbsim_run(cfg, &res, &m, err, sizeof(err))) {
		fprintf(stderr, "bench: %s\n", err);
		return 1;
	}
	double dt = now_s() - t0;
	*total += dt;
	*ev += m.events;
	printf("%s: host %.2f s, %llu events, %.2f M events/s, simulated wall %.3f s, "
	       "ops/s %llu, purges %llu\n", label, dt, (unsigned long long)m.events,
	       (double)m.events / dt / 1e6, (double)m.wall_ns / 1e9,
	       (unsigned long long)m.ops_per_sec, (unsigned long long)m.purges);
	return 0;
}

static int suite_mmap8(const char *profile, int64_t iters, double *total, uint64_t *ev)
{
	const char *pols[2] = {"v2", "fullmm"};
	char err[TLBSIM_ERRLEN], label[128];
	for (int k = 0; k < 2; k++) {
		struct tlbsim_config cfg;
		tlbsim_config_init(&cfg);
		cfg.workload = "mmap8";
		cfg.profile = profile;
		cfg.iters = iters;
		if (tlbsim_policy_set(&cfg.policy, "nested", pols[k], err, sizeof(err)))
			return 2;
		snprintf(label, sizeof(label), "mmap8 %s nested=%s 16x%lld", profile, pols[k],
			 (long long)iters);
		if (bench_run(&cfg, label, total, ev))
			return 1;
	}
	printf("pair: host %.2f s, %llu events, %.2f M events/s (target <= 10 s)\n", *total,
	       (unsigned long long)*ev, (double)*ev / *total / 1e6);
	return 0;
}

static int suite_page_fault3(double *total, uint64_t *ev)
{
	static const struct {
		const char *profile;
		int tasks;
	} machines[] = {{"arm64-4k", 46}, {"x86-24", 24}};
	static const char *const modes[] = {"processes", "threads"};
	static const char *const knobs[] = {"broadcast", "skip_tried"};
	char err[TLBSIM_ERRLEN], label[160];
	for (int m = 0; m < 2; m++)
		for (int md = 0; md < 2; md++)
			for (int k = 0; k < 2; k++) {
				struct tlbsim_config cfg;
				tlbsim_config_init(&cfg);
				cfg.workload = "page_fault3";
				cfg.profile = machines[m].profile;
				cfg.threads = machines[m].tasks;
				snprintf(cfg.wparams[0].name, sizeof(cfg.wparams[0].name), "mode");
				snprintf(cfg.wparams[0].value, sizeof(cfg.wparams[0].value), "%s",
					 modes[md]);
				cfg.nwparams = 1;
				if (tlbsim_policy_set(&cfg.policy, "spurious_flush", knobs[k], err,
						      sizeof(err)))
					return 2;
				snprintf(label, sizeof(label), "page_fault3 %s %d %s spurious_flush=%s",
					 machines[m].profile, machines[m].tasks, modes[md], knobs[k]);
				if (bench_run(&cfg, label, total, ev))
					return 1;
			}
	printf("8 runs: host %.2f s, %llu events, %.2f M events/s (target <= 60 s)\n", *total,
	       (unsigned long long)*ev, (double)*ev / *total / 1e6);
	return 0;
}

static int suite_kbuild(double *total, uint64_t *ev)
{
	static const char *const knobs[] = {"per_area", "per_node"};
	char err[TLBSIM_ERRLEN], label[128];
	for (int k = 0; k < 2; k++) {
		struct tlbsim_config cfg;
		tlbsim_config_init(&cfg);
		cfg.workload = "kbuild";
		cfg.profile = "x86-256";
		snprintf(cfg.wparams[0].name, sizeof(cfg.wparams[0].name), "jobs");
		snprintf(cfg.wparams[0].value, sizeof(cfg.wparams[0].value), "90000");
		snprintf(cfg.wparams[1].name, sizeof(cfg.wparams[1].name), "ws_pages");
		snprintf(cfg.wparams[1].value, sizeof(cfg.wparams[1].value), "16");
		cfg.nwparams = 2;
		if (tlbsim_policy_set(&cfg.policy, "kasan_flush", knobs[k], err, sizeof(err)))
			return 2;
		snprintf(label, sizeof(label), "kbuild x86-256 90000 jobs kasan_flush=%s", knobs[k]);
		if (bench_run(&cfg, label, total, ev))
			return 1;
	}
	printf("pair: host %.2f s, %llu events, %.2f M events/s (target <= 60 s)\n", *total,
	       (unsigned long long)*ev, (double)*ev / *total / 1e6);
	return 0;
}

int main(int argc, char **argv)
{
	int64_t iters = 100000;
	const char *profile = "falkor-46", *suite = "mmap8";
	floor_steps = 1000000;
	for (int i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--iters") == 0)
			iters = atoll(argv[i + 1]);
		else if (strcmp(argv[i], "--profile") == 0)
			profile = argv[i + 1];
		else if (strcmp(argv[i], "--suite") == 0)
			suite = argv[i + 1];
		else if (strcmp(argv[i], "--floor-steps") == 0)
			floor_steps = strtoull(argv[i + 1], NULL, 10);
	}
	double total = 0;
	uint64_t total_ev = 0;
	int rc;
	if (strcmp(suite, "mmap8") == 0)
		rc = suite_mmap8(profile, iters, &total, &total_ev);
	else if (strcmp(suite, "page_fault3") == 0)
		rc = suite_page_fault3(&total, &total_ev);
	else if (strcmp(suite, "kbuild") == 0)
		rc = suite_kbuild(&total, &total_ev);
	else {
		fprintf(stderr, "bench: unknown suite '%s' (mmap8, page_fault3 or kbuild)\n", suite);
		return 2;
	}
	if (rc)
		return rc;
	double fs;
	uint64_t fe;
	if (bare_floor(profile, &fs, &fe))
		return 1;
	printf("bare engine floor: 16 coroutines, %llu events in %.2f s = %.2f M events/s "
	       "(%.0f ns/event); this suite at %.0f %% of it\n", (unsigned long long)fe, fs,
	       (double)fe / fs / 1e6, fs * 1e9 / (double)fe,
	       100.0 * ((double)total_ev / total) / ((double)fe / fs));
	return 0;
}
