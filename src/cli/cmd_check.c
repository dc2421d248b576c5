/*
 * cmd_check.c - `tlbsim check`: explore interleavings, report the first
 * violation with a minimised schedule, a replay command and a token, and
 * optionally write the counterexample as a Chrome trace.
 *
 * --trace FILE: the report is printed first, then the trace is written.
 * "-" writes the trace to stdout (the human report then goes to stderr);
 * a file that is not a regular file (/dev/stdout, a FIFO) is written
 * directly; otherwise the trace goes to a temporary file in the target's
 * directory that is renamed over the target, following a symlink to the
 * file it names. When nothing is found the file is truncated to a trace
 * with no events (so a stale counterexample never survives).
 */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <inttypes.h>

#include "cli/cli.h"
#include "cli/csv.h"
#include "out/out.h"

/* Where the trace really goes: "-" (stdout), a non-regular file written in
 * place, or a regular file replaced through a temporary in `dir`. */
struct trace_dest {
	bool to_stdout;
	const char *path;
};

/* Check the destination before the search runs, as every other output
 * file is checked (csv_probe_dir: a directory, a missing or read-only
 * directory, /proc, a symlink loop, a name longer than the directory
 * allows). 0, or an error message in err. */
static int trace_dest_prepare(const char *path, struct trace_dest *d, char *err, size_t errlen)
{
	memset(d, 0, sizeof(*d));
	d->path = path;
	if (strcmp(path, "-") == 0) {
		d->to_stdout = true;
		return 0;
	}
	if (csv_probe_dir(path)) {
		snprintf(err, errlen, "--trace %.1000s: cannot create a file there: %s", path,
			 strerror(errno));
		return -1;
	}
	return 0;
}

struct trace_args {
	const struct trace_buf *tb;
	int cpus;
	const char *title, *token;
};

static void put_trace(FILE *f, const void *arg)
{
	const struct trace_args *a = arg;
	/* a write error leaves f in error: atomic_write reports it */
	(void)out_chrome_trace(f, a->tb, a->cpus, a->title, a->token);
}

static int trace_write(const struct trace_dest *d, const struct check_result *r, char *err,
		       size_t errlen)
{
	char title[256];
	snprintf(title, sizeof(title), "tlbsim %s on %s", r->res.workload->name, r->res.profile->name);
	struct trace_args a = {.tb = r->found ? &r->trace : NULL, .cpus = r->res.cpus,
			       .title = title, .token = r->found ? r->token : NULL};
	if (d->to_stdout) {
		if (out_chrome_trace(stdout, a.tb, a.cpus, title, a.token) || fflush(stdout)) {
			snprintf(err, errlen, "--trace -: cannot write to stdout");
			return -1;
		}
		return 0;
	}
	/* written to a temporary file and renamed (a symlink is written
	 * through; a FIFO or device in place): atomic_write, as every output */
	if (atomic_write(d->path, put_trace, &a)) {
		snprintf(err, errlen, "--trace %.150s: cannot write: %s", d->path, strerror(errno));
		return -1;
	}
	return 0;
}

/* --csv: one header line and one row (docs/output.md "check --csv");
 * label: cli_policy_label */
static void print_check_csv(FILE *f, const struct cli_opts *o, const struct check_result *r,
			    const char *label)
{
	static const char *const strat[] = {[EX_RANDOM] = "random", [EX_PCT] = "pct", [EX_DFS] = "dfs"};
	char num[64];
	fprintf(f, "workload,profile,cpus,iters,policy,seed,strategy,schedules,steps,exhausted,"
		   "cut_schedules,max_steps,stopped,invariant,cpu,va,preemptions,decisions,minimised,"
		   "token,text\n");
	csv_field(f, r->res.workload->name);
	fputc(',', f);
	csv_field(f, r->res.profile->name);
	fprintf(f, ",%d,%" PRId64 ",", r->res.cpus, r->res.iters);
	csv_field(f, label);
	fprintf(f, ",%" PRIu64 ",%s,%" PRIu64 ",%" PRIu64 ",%d,%" PRIu64 ",%" PRIu64 ",%s,",
		r->cfg.seed, (unsigned)o->strategy < 3 ? strat[o->strategy] : "?", r->schedules,
		r->steps, r->exhausted ? 1 : 0, r->cut_schedules, r->max_steps,
		r->stop_signal ? "signal" : r->time_limited ? "time limit" : "");
	if (!r->found) {
		fprintf(f, ",,,,,,,\n");
		return;
	}
	const struct violation_rec *v = &r->v;
	csv_field(f, inv_name(v->kind));
	fprintf(f, ",%d,", v->cpu);
	if (v->has_va) {
		snprintf(num, sizeof(num), "0x%" PRIx64, v->va);
		fputs(num, f);
	}
	fprintf(f, ",%u,%u,%s,", r->preemptions, r->ndec, check_minimise_name(r->minimised));
	csv_field(f, r->token ? r->token : "");
	fputc(',', f);
	csv_field(f, v->text);
	fputc('\n', f);
}

int cmd_check(int argc, char **argv)
{
	struct cli_opts o;
	int rc = cli_parse(argc, argv, C_CHECK, &o);
	if (rc) {
		cli_opts_free(&o);
		return rc < 0 ? 0 : rc;
	}
	if (!o.cfg.workload_def && !tlbsim_workload_find(o.cfg.workload)) {
		rc = cli_error("unknown workload '%s' (see tlbsim list workloads)", o.cfg.workload);
		cli_opts_free(&o);
		return rc;
	}
	char err[TLBSIM_ERRLEN];
	struct trace_dest dest;
	if (o.trace_file) {
		if ((o.json || o.csv) && strcmp(o.trace_file, "-") == 0) {
			/* (--csv went to stderr, without a word) */
			const char *what = o.json ? "--json" : "--csv";
			cli_opts_free(&o);
			return cli_error("--trace - and %s both want stdout; give --trace a file", what);
		}
		char terr[PATH_MAX + 256];	/* room to name a long path */
		if (trace_dest_prepare(o.trace_file, &dest, terr, sizeof(terr))) {
			cli_opts_free(&o);
			return cli_error("%s", terr);
		}
	}
	struct check_opts co = {
		.cfg = o.cfg,
		.strategy = o.strategy,
		.runs = o.runs,
		.time_limit_ms = o.time_limit_given ? o.time_limit_ms : 10000,
		.depth = o.depth > 0 ? o.depth : (o.strategy == EX_PCT ? 3 : 2),
		.replay = o.replay,
		.minimise = o.minimise,
		.want_kind = o.want_kind,
		.max_steps = o.max_steps,
		.host_limit = o.max_memory,
		.interrupted = cli_pending_signal,
	};
	check_config_defaults(&co.cfg, o.cpus_given, o.iters_given);
	cli_block_signals();
	struct check_result r;
	rc = tlbsim_check(&co, &r, err, sizeof(err));
	if (rc) {
		check_result_free(&r);
		cli_opts_free(&o);
		if (rc == TLBSIM_EINVAL)
			return cli_error("%s", err);
		return cli_error_code(EXIT_INTERNAL, "%s", err);
	}
	/* without a token (a schedule too long for one) there is no replay
	 * command; the report says why */
	char *replay = cli_replay_command(&o, r.token);
	char *label = o.csv ? cli_policy_label(&o) : NULL;
	if (!replay || (o.csv && !label)) {
		free(replay);
		free(label);
		check_result_free(&r);
		cli_opts_free(&o);
		return cli_error_code(EXIT_INTERNAL, "out of memory");
	}
	FILE *report = o.trace_file && dest.to_stdout ? stderr : stdout;
	if (o.json)
		check_print_json(report, &r, cli_cmdline(&o), replay);
	else if (o.csv)
		print_check_csv(report, &o, &r, label);
	else
		check_print_report(report, &r, replay);
	fflush(report);
	int code = r.found ? EXIT_VIOLATION : 0;
	if (o.trace_file && trace_write(&dest, &r, err, sizeof(err)))
		code = cli_error_code(EXIT_INTERNAL, "%s", err);
	int sig = r.stop_signal ? r.stop_signal : cli_pending_signal(NULL);
	free(replay);
	free(label);
	check_result_free(&r);
	cli_opts_free(&o);
	if (sig && code != EXIT_INTERNAL)
		return 128 + sig;
	return code;
}
