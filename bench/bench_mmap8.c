/*
 * bench_mmap8 - host speed of the seed-000 main job and of the bare engine.
 *
 * Runs the seed-size mmap8 pair (falkor-46, 16 threads x 100 000 iterations,
 * nested=v2 then nested=fullmm), reporting host seconds, simulated events and
 * events/s, then measures a bare-engine floor in the same process: 16
 * coroutines doing nothing but sim_step() through the same event queue.
 *
 * usage: tlbsim_bench [--iters N] [--profile P] [--floor-steps N]
 * Target (issue 2): the pair in <= 10 s on one core of the 2-vCPU CI machine.
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

int main(int argc, char **argv)
{
	int64_t iters = 100000;
	const char *profile = "falkor-46";
	floor_steps = 1000000;
	for (int i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--iters") == 0)
			iters = atoll(argv[i + 1]);
		else if (strcmp(argv[i], "--profile") == 0)
			profile = argv[i + 1];
		else if (strcmp(argv[i], "--floor-steps") == 0)
			floor_steps = strtoull(argv[i + 1], NULL, 10);
	}
	const char *pols[2] = {"v2", "fullmm"};
	double total = 0;
	uint64_t total_ev = 0;
	char err[TLBSIM_ERRLEN];
	for (int k = 0; k < 2; k++) {
		struct tlbsim_config cfg;
		tlbsim_config_init(&cfg);
		cfg.workload = "mmap8";
		cfg.profile = profile;
		cfg.iters = iters;
		if (tlbsim_policy_set(&cfg.policy, "nested", pols[k], err, sizeof(err)))
			return 2;
		struct tlbsim_resolved res;
		struct tlbsim_metrics m;
		double t0 = now_s();
		if (tlbsim_run(&cfg, &res, &m, err, sizeof(err))) {
			fprintf(stderr, "bench: %s\n", err);
			return 1;
		}
		double dt = now_s() - t0;
		total += dt;
		total_ev += m.events;
		printf("mmap8 %s nested=%s 16x%lld: host %.2f s, %llu events, %.2f M events/s, "
		       "simulated wall %.3f s, nested %llu\n",
		       profile, pols[k], (long long)iters, dt, (unsigned long long)m.events,
		       (double)m.events / dt / 1e6, (double)m.wall_ns / 1e9,
		       (unsigned long long)m.nested_finishes);
	}
	printf("pair: host %.2f s, %llu events, %.2f M events/s (target <= 10 s)\n", total,
	       (unsigned long long)total_ev, (double)total_ev / total / 1e6);
	double fs;
	uint64_t fe;
	if (bare_floor(profile, &fs, &fe))
		return 1;
	printf("bare engine floor: 16 coroutines, %llu events in %.2f s = %.2f M events/s "
	       "(%.0f ns/event)\n", (unsigned long long)fe, fs, (double)fe / fs / 1e6, fs * 1e9 / (double)fe);
	return 0;
}
