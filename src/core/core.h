/*
 * core.h - building and running one simulation from a configuration.
 *
 * This is the one constructor: the CLI, the checker, the benchmarks and the
 * tests all build a simulation through it. A struct tlbsim_sim is the kernel
 * (which embeds the machine, which embeds the engine), the invariant oracle
 * subscribed to it, and the workload's state.
 */
#ifndef TLBSIM_CORE_H
#define TLBSIM_CORE_H

#include "oracle/oracle.h"
#include "sim/explore.h"
#include "workload/workload.h"

struct tlbsim_sim {
	struct kernel k;		/* first member: &ts->k.mach.sim is the engine */
	struct oracle oracle;
	const struct workload_ops *w;	/* NULL: no workload (tests) */
	void *wl;			/* the workload's state */
	/* core_opts.progress: polled through the engine's interrupted hook */
	int (*interrupted)(void *ctx);
	void *interrupted_ctx;
	void (*progress)(void *ctx, double frac);
	void *progress_ctx;
	uint64_t progress_ops;		/* ops a whole run counts (0: unknown) */
	uint64_t progress_ns;		/* or: simulated time it lasts (--duration) */
};

static inline struct sim *core_sim(struct tlbsim_sim *ts)
{
	return &ts->k.mach.sim;
}
static inline struct tlbsim_sim *core_of(struct sim *s)
{
	return container_of(kernel_of(s), struct tlbsim_sim, k);
}

/* Default parameters of a profile with cfg's -D overrides applied. */
void tlbsim_params_for(const struct tlbsim_profile *prof, const struct tlbsim_config *cfg,
		       int64_t *p);

/* How to build: everything beyond the configuration. */
struct core_opts {
	struct explore *ex;		/* check mode: the exploration strategy */
	int want_kind;			/* oracle: stop only at this invariant (-1: any) */
	struct trace_buf *trace;	/* record the event trace into this */
	bool no_workload;		/* build the machine and kernel only (tests) */
	uint64_t host_limit;		/* host memory budget in bytes (0: none) */
	uint64_t deadline_host_ns;	/* sim_host_ns() at which to stop (0: none) */
	int (*interrupted)(void *ctx);	/* polled: non-zero stops the run */
	void *interrupted_ctx;
	/* ask interrupted at most once per this much host time (0: at every
	 * poll of the engine, every few thousand steps) */
	uint64_t interrupted_period_ns;
	struct sim_stack_pool *stack_pool;	/* reuse thread stacks (NULL: none) */
	/* called with the run's simulated progress (0..1: ops done of those
	 * expected, or simulated time of --duration) each time the engine
	 * polls interrupted (NULL: none) */
	void (*progress)(void *ctx, double frac);
	void *progress_ctx;
};

/* An estimate of the host memory (bytes) a run of res needs, known before it
 * starts: per-CPU caches, thread stacks, and what the workload maps at once.
 * Memory that depends on timing (tables waiting for RCU) is not included; the
 * running simulation enforces its budget itself. */
uint64_t tlbsim_estimate_host_bytes(const struct tlbsim_config *cfg,
				    const struct tlbsim_resolved *res);

/* Build a simulation of cfg (resolved as res). 0, or an enum tlbsim_err with
 * err filled; on failure *ts is already destroyed. */
int core_build(struct tlbsim_sim *ts, const struct tlbsim_config *cfg,
	       const struct tlbsim_resolved *res, const struct core_opts *o, char *err,
	       size_t errlen);
void core_destroy(struct tlbsim_sim *ts);
/* Build a simulation of cfg (resolved as res) and tear it down without
 * running it: the workload's setup has checked its parameters (-w size=abc
 * is refused here, as by a run), and the host-memory estimate is within
 * host_limit (0: none). 0, or an enum tlbsim_err with err filled. */
int core_check_build(const struct tlbsim_config *cfg, const struct tlbsim_resolved *res,
		     uint64_t host_limit, char *err, size_t errlen);

/* Outcome of one run. */
struct run_outcome {
	struct tlbsim_metrics m;
	struct violation_rec v;		/* kind -1: none */
	enum sim_stop stopped;		/* the run ended early (partial) */
	int stop_signal;
	uint64_t steps;
	/* host side, not results: threads started, and coroutine stacks
	 * mapped for them (the others came from the pool) */
	uint64_t threads, stacks_mapped;
};

/*
 * Build, run to completion (or until stopped) and tear down one simulation.
 * 0 with *out filled, or an enum tlbsim_err with err filled.
 */
int tlbsim_run_one(const struct tlbsim_config *cfg, const struct tlbsim_resolved *res,
		   const struct core_opts *o, struct run_outcome *out, char *err, size_t errlen);

#endif
