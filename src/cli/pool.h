/* pool.h - simulations on host threads (run/compare --seeds, sensitivity). */
#ifndef TLBSIM_CLI_POOL_H
#define TLBSIM_CLI_POOL_H

#include <pthread.h>
#include <stdbool.h>

#include "cli/cli.h"
#include "core/core.h"

/* One simulation: a configuration (its seed, policy, overrides) and what it
 * gave. */
struct seed_task {
	struct tlbsim_config cfg;
	struct tlbsim_resolved res;
	struct tlbsim_metrics m;
	enum sim_stop stopped;
	int stop_signal;
	bool ran;		/* false: not started (a run before it stopped) */
	int rc;			/* 0 or an enum tlbsim_err */
	char err[TLBSIM_ERRLEN];
	struct trace_buf *trace;	/* run --trace: record into this (NULL: no) */
};

struct seed_pool {
	struct seed_task *t;
	int n;
	int next;		/* the next task to start, under lock */
	bool stop;		/* a run stopped or failed: start no more */
	pthread_mutex_t lock;
	uint64_t deadline;
	uint64_t max_memory;
	/* called after each task ends, under lock, with the number ended so
	 * far (NULL: none); sweep's progress line */
	void (*on_done)(void *arg, int done, int n);
	void *on_done_arg;
	/* a pool of one run: its simulated progress (core_opts.progress) */
	void (*on_progress)(void *arg, double frac);
	int ndone;
};

/* Run every task of p in index order, at most jobs at once (jobs 1: in this
 * thread). Each simulation owns all its state, so results do not depend on
 * jobs. A failed or stopped task stops the start of further ones. */
void pool_run(struct seed_pool *p, int jobs);
/* The command's run: SIGINT/SIGTERM blocked (polled by the runs), its
 * --time-limit and --max-memory, --jobs threads; then the first failure in
 * task order: 0, or its enum tlbsim_err with its text in err. */
int pool_run_opts(struct seed_pool *p, const struct cli_opts *o, char *err, size_t errlen);
/* Progress on stderr while the pool runs, only when stderr is a terminal:
 * with more than one run the runs done, with one the run's simulated
 * progress (ops done of those expected, or simulated time of --duration);
 * call pool_progress_tty before pool_run(_opts), pool_progress_end after
 * (pg must outlive the run). */
struct pool_progress {
	uint64_t start_ns;
	int last_pct;
	bool drawn;		/* a line is on the terminal */
};
void pool_progress_tty(struct seed_pool *p, struct pool_progress *pg);
void pool_progress_end(struct seed_pool *p);
/* each metric's mean over v[0..n), rounded, except idle_ns: wall_ns x cpus
 * - user_ns - sys_ns of those means (the identity each seed has);
 * violations their total (a violation in any seed counts); the first
 * violation text */
void mean_metrics(const struct tlbsim_metrics *v, int n, int cpus, struct tlbsim_metrics *m);

#endif
