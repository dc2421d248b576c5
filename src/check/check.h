/*
 * check.h - `tlbsim check`: explore interleavings of a workload, stop at the
 * first invariant violation, minimise the schedule, and report it with an
 * event trace and a replay token.
 *
 *   search.c  the search: explore (random / pct / dfs), replay, minimise
 *   token.c   replay tokens
 *   report.c  the human report and the JSON of a result
 * The Chrome trace writer is in out/.
 */
#ifndef TLBSIM_CHECK_H
#define TLBSIM_CHECK_H

#include <stdio.h>

#include "core/core.h"

struct check_opts {
	struct tlbsim_config cfg;
	enum explore_strategy strategy;
	uint64_t runs;			/* schedule budget */
	uint64_t time_limit_ms;		/* host time budget (0: none) */
	uint64_t max_steps;		/* cut a schedule after this many steps (0: default) */
	uint64_t host_limit;		/* host memory budget in bytes (0: none) */
	int (*interrupted)(void *ctx);	/* polled between schedules: non-zero stops */
	void *interrupted_ctx;
	int depth;			/* pct depth, or dfs preemption bound */
	const char *replay;		/* token, or NULL */
	bool minimise;
	int want_kind;			/* stop only at this invariant (-1: any) */
	/* thread stacks reused from schedule to schedule (tlbsim_check sets
	 * it up; callers leave it NULL) */
	struct sim_stack_pool *stack_pool;
};

/* How far the counterexample was minimised. */
enum check_minimise {
	MIN_COMPLETE,		/* until no preemption could be dropped */
	MIN_OFF,		/* --no-minimise, or a --replay */
	MIN_TIME_LIMIT,		/* stopped at --time-limit: the best schedule so far */
	MIN_SIGNAL,		/* stopped by SIGINT/SIGTERM: the best schedule so far */
};
const char *check_minimise_name(enum check_minimise m);

struct check_result {
	bool found;
	struct violation_rec v;
	uint64_t schedules, steps;
	uint64_t host_ns;
	uint64_t minimise_runs;
	enum check_minimise minimised;	/* how far minimisation went */
	bool exhausted;			/* dfs explored everything within the bound */
	uint64_t cut_schedules;		/* schedules cut at max_steps (not explored to the end) */
	uint64_t max_steps;		/* the cap that applied */
	int stop_signal;		/* the search was interrupted by this signal (0: not) */
	bool time_limited;		/* the host-time budget ended the search */
	uint32_t *dec;			/* the (minimised) violating schedule */
	uint32_t ndec;
	uint32_t preemptions;
	struct trace_buf trace;		/* its trace */
	char *token;			/* its replay token (heap), or NULL: see token_len */
	size_t token_len;		/* the token's length; over CHECK_TOKEN_MAX: no token */
	struct tlbsim_resolved res;
	struct tlbsim_config cfg;	/* resolved for check mode */
};

/* Apply check-mode defaults of the workload (small instance). */
void check_config_defaults(struct tlbsim_config *cfg, bool cpus_given, bool iters_given);
uint32_t config_hash(const struct tlbsim_config *cfg, const struct tlbsim_resolved *res);
/* 0 ok (result filled), TLBSIM_EINVAL (bad token/config) or another error. */
int tlbsim_check(const struct check_opts *o, struct check_result *r, char *err, size_t errlen);
void check_result_free(struct check_result *r);

void check_print_report(FILE *f, const struct check_result *r, const char *replay_cmd);
void check_print_json(FILE *f, const struct check_result *r, const char *cmdline,
		      const char *replay_cmd);

/* The longest token check reports: what one command-line argument may hold
 * on Linux (MAX_ARG_STRLEN, 32 pages, with its NUL), so that --replay TOKEN
 * can always be typed. A longer schedule is reported without a token. */
#define CHECK_TOKEN_MAX 131071u

/* schedule tokens: "t2.<config hash>.<decisions>.<checksum>" (token.c).
 * token_encode: 0, or -1 if the token (and its NUL) does not fit in outlen;
 * token_length: its length without the NUL. */
int token_encode(uint32_t cfg_hash, const uint32_t *dec, uint32_t n, char *out, size_t outlen);
size_t token_length(uint32_t cfg_hash, const uint32_t *dec, uint32_t n);
int token_decode(const char *tok, uint32_t *cfg_hash, uint32_t **dec, uint32_t *n);
/* token_decode, refusing (-2, before taking the memory) a token of more than
 * max decisions: a hand-made token of a few characters can spell 10^9 */
int token_decode_max(const char *tok, uint64_t max, uint32_t *cfg_hash, uint32_t **dec,
		     uint32_t *n);

#endif
