/*
 * cli.h - the tlbsim command line: one option table and parser shared by run,
 * compare and check, the command implementations, and output helpers.
 *
 * Exit status: 0 ok; 1 a violation was found (check, or run/compare with
 * --fail-on-violation); 2 usage or input error (one line on stderr naming the
 * problem); 3 internal error or host resources exhausted; 128+N stopped by
 * signal N (130 SIGINT, 143 SIGTERM), after printing what was measured.
 */
#ifndef TLBSIM_CLI_H
#define TLBSIM_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "check/check.h"
#include "scenario/scenario.h"

#define EXIT_VIOLATION 1
#define EXIT_USAGE 2
#define EXIT_INTERNAL 3
#define MAX_COLUMNS 16
#define CLI_COMPARE_SEEDS 5	/* compare's default --seeds */

/* which commands accept an option */
#define C_RUN 0x1u
#define C_COMPARE 0x2u
#define C_CHECK 0x4u
#define C_SENS 0x8u
#define C_NATIVE 0x10u		/* tlbsim native: the workload on the host kernel */
#define C_SWEEP 0x20u		/* tlbsim sweep: a grid of configurations */
#define C_ALL (C_RUN | C_COMPARE | C_CHECK | C_SENS | C_SWEEP)
#define MAX_GRID 8		/* sweep: --grid options */

struct cli_opts {
	const char *cmd;		/* "run", "compare", "check" */
	unsigned cmd_bit;
	struct tlbsim_config cfg;
	/* what the user gave (the replay command repeats exactly these) */
	bool cpus_given, threads_given, iters_given, seed_given;
	uint64_t policy_given;		/* the knobs --policy set (before --kernel) */
	/* compare: one policy per column */
	int npolicies;
	struct tlbsim_policy policies[MAX_COLUMNS];
	bool json;
	/* run/compare: seeds cfg.seed .. cfg.seed + seeds - 1 per column, at
	 * most jobs of them at once (host threads) */
	int seeds;		/* --seeds (0 until cli_parse ends: not given) */
	int jobs;
	uint64_t time_limit_ms;		/* 0: none (check: its default) */
	bool time_limit_given;
	uint64_t max_memory;		/* bytes; 0: none */
	bool fail_on_violation;
	/* check */
	enum explore_strategy strategy;
	uint64_t runs;
	int depth;			/* -1: the strategy's default */
	const char *replay;
	const char *trace_file;
	/* run --trace: the window [trace_from, trace_to) in simulated ns
	 * (trace_to 0: to the end) and the format */
	uint64_t trace_from, trace_to;
	bool trace_ftrace;		/* --trace-format ftrace (else chrome) */
	bool trace_window_given, trace_format_given;
	bool minimise;
	int want_kind;			/* -1: any */
	uint64_t max_steps;		/* 0: default */
	struct tlbsim_profile_file *profile_file;	/* --profile FILE; NULL: built-in */
	/* sensitivity */
	const char *metric;		/* NULL: the workload's headline metric */
	int perturb_pct;
	const char *svg_file;
	/* compare --native: the model columns, then the workload on the host */
	bool native;
	/* every --policy argument as given (CSV "policy"), heap array: run and
	 * check take any number, compare, sweep and sensitivity MAX_COLUMNS */
	const char **policy_args;
	int npolicy_args, policy_args_cap;
	bool csv;			/* --csv */
	bool svg_given;			/* compare --svg */
	/* sweep */
	const char *grid[MAX_GRID];	/* "KEY=V1,V2,..." as given */
	int ngrid;
	const char *output;		/* -o FILE; NULL: stdout */
	int shard_k, shard_n;		/* --shard K/N; 0: the whole grid */
	struct scenario *scenario;	/* WORKLOAD was a scenario file: its program */
	char cmdline[8192];		/* for JSON; see cli_cmdline */
	char *cmdline_heap;		/* when the command line is longer */
};

/* run --trace without --trace-window: the first 10 ms of simulated time */
#define CLI_TRACE_WINDOW_NS 10000000ull

/* Parse argv (argv[0] = the command name) for command bit `cmd_bit`. Returns
 * 0, -1 after printing help (exit 0), or EXIT_USAGE after printing the error. */
int cli_parse(int argc, char **argv, unsigned cmd_bit, struct cli_opts *o);
void cli_opts_free(struct cli_opts *o);
/* cli_parse, then tlbsim_resolve of the configuration into *res. Returns 0,
 * -1 after printing help (exit 0), or the exit status after printing the
 * error line; o is freed unless it returns 0. */
int cli_parse_resolve(int argc, char **argv, unsigned cmd_bit, struct cli_opts *o,
		      struct tlbsim_resolved *res);
const char *cli_cmdline(const struct cli_opts *o);
/* Every --policy argument joined by commas (run's and check's CSV policy
 * column), or "default" (with --kernel V: "kernel=V") when none: a heap
 * string (free it), or NULL when out of memory. */
char *cli_policy_label(const struct cli_opts *o);

/* "tlbsim check ... --replay TOKEN" rebuilt from the parsed options,
 * shell-quoted; heap string (free it) or NULL. */
char *cli_replay_command(const struct cli_opts *o, const char *token);

/* One line on stderr: "tlbsim: <message>", control and non-UTF-8 bytes
 * escaped. Returns EXIT_USAGE. */
int cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* cli_error with another exit code. */
int cli_error_code(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* --time-limit's value (host seconds, decimals allowed) in ms: 0, or the
 * error printed and 2 returned */
int cli_parse_time_limit(const char *v, uint64_t *ms);
/* v as a decimal integer in [lo, hi] into *out: 0, or EXIT_USAGE after a
 * one-line error naming the option (name) */
int cli_parse_uint(const char *name, const char *v, uint64_t lo, uint64_t hi, uint64_t *out);
/* Print s to f with control characters and invalid UTF-8 escaped. */
void cli_put_sanitized(FILE *f, const char *s);

/* Signals: SIGINT and SIGTERM are blocked while simulating and polled;
 * cli_pending_signal() returns the first pending one (0: none). It is a
 * system call (sigpending, ~1 us on a 2-vCPU VM with page-table isolation,
 * 2026-12): a run asks it at most every CLI_SIGNAL_POLL_NS of host time
 * (core_opts.interrupted_period_ns), not at each of the engine's polls
 * (~25 000 in a seed-size mmap8 run, 1.4 % of its host time), and stops
 * within ~10 ms of a signal. */
#define CLI_SIGNAL_POLL_NS 10000000u
void cli_block_signals(void);
int cli_pending_signal(void *unused);
/* "SIGINT", "SIGTERM", else "signal"; 0 (no signal: a --time-limit stop)
 * gives "time limit" */
const char *cli_signal_name(int sig);

/* Half of the physical memory: the default --max-memory. */
uint64_t cli_default_max_memory(void);

/* Set one configuration key of cfg as sweep's --grid does: threads (tasks),
 * cpus, iters, profile (a built-in name), w:NAME, D:NAME. 0, or EXIT_USAGE
 * after printing one line naming what (e.g. "--grid cpus=0"). */
int cli_config_set(struct tlbsim_config *cfg, const char *key, const char *value);

int cmd_list(int argc, char **argv);
int cmd_run(int argc, char **argv, bool compare);
int cmd_check(int argc, char **argv);
int cmd_sensitivity(int argc, char **argv);
int cmd_calibrate(int argc, char **argv);
int cmd_native(int argc, char **argv);
int cmd_sweep(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_plot(int argc, char **argv);
int cmd_test(int argc, char **argv);
int cmd_import(int argc, char **argv);	/* cmd_import.c: strace -> scenario file */	/* cmd_test.c: scenario files vs their expect */
/* compare --native (cmd_native.c): run the workload on the host and print
 * the n model columns beside it; returns the exit status */
struct run_result;
int native_check(const struct cli_opts *o);	/* before the model runs: 0 or EXIT_USAGE */
int native_compare(const struct cli_opts *o, const struct run_result *runs, int n);

#endif
