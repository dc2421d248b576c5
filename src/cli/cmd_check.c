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
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <inttypes.h>

#include "cli/cli.h"
#include "cli/csv.h"
#include "out/out.h"

/* Where the trace really goes: "-" (stdout), a non-regular file written in
 * place, or a regular file replaced through a temporary in `dir`. */
struct trace_dest {
	bool to_stdout;
	bool direct;
	char target[PATH_MAX];
	char dir[PATH_MAX];
};

/* Follow symlinks of path (even to a file that does not exist yet) into out.
 * 0, or -1 on a loop or a name too long. */
static int follow_links(const char *path, char *out, size_t outlen)
{
	char cur[PATH_MAX];
	if (strlen(path) >= sizeof(cur))
		return -1;
	memcpy(cur, path, strlen(path) + 1);
	for (int hops = 0; hops < 40; hops++) {
		struct stat st;
		if (lstat(cur, &st) || !S_ISLNK(st.st_mode)) {
			if (strlen(cur) >= outlen)
				return -1;
			memcpy(out, cur, strlen(cur) + 1);
			return 0;
		}
		char link[PATH_MAX];
		ssize_t n = readlink(cur, link, sizeof(link) - 1);
		if (n < 0)
			return -1;
		link[n] = 0;
		if (link[0] == '/') {
			memcpy(cur, link, (size_t)n + 1);
		} else {
			char dir[PATH_MAX];
			memcpy(dir, cur, strlen(cur) + 1);
			char next[PATH_MAX];
			if ((size_t)snprintf(next, sizeof(next), "%s/%s", dirname(dir), link) >= sizeof(next))
				return -1;
			memcpy(cur, next, strlen(next) + 1);
		}
	}
	return -1;
}

/* Resolve and check the destination before the search runs. 0, or an error
 * message in err. */
static int trace_dest_prepare(const char *path, struct trace_dest *d, char *err, size_t errlen)
{
	memset(d, 0, sizeof(*d));
	if (strcmp(path, "-") == 0) {
		d->to_stdout = true;
		return 0;
	}
	char real[PATH_MAX];
	if (follow_links(path, real, sizeof(real))) {
		snprintf(err, errlen, "--trace %.200s: cannot follow the symlink", path);
		return -1;
	}
	path = real;
	struct stat st;
	if (stat(path, &st) == 0) {
		/* exists (a symlink is followed): resolve to the real file */
		if (!realpath(path, d->target)) {
			snprintf(err, errlen, "--trace %.200s: %s", path, strerror(errno));
			return -1;
		}
		if (S_ISDIR(st.st_mode)) {
			snprintf(err, errlen, "--trace %.200s: is a directory", path);
			return -1;
		}
		if (!S_ISREG(st.st_mode)) {
			d->direct = true;
			if (access(d->target, W_OK)) {
				snprintf(err, errlen, "--trace %.200s: %s", path, strerror(errno));
				return -1;
			}
			return 0;
		}
	} else {
		if (strlen(path) >= sizeof(d->target)) {
			snprintf(err, errlen, "--trace: the file name is too long");
			return -1;
		}
		memcpy(d->target, path, strlen(path) + 1);
	}
	char tmp[PATH_MAX];
	memcpy(tmp, d->target, strlen(d->target) + 1);
	snprintf(d->dir, sizeof(d->dir), "%s", dirname(tmp));
	if (access(d->dir, W_OK)) {
		snprintf(err, errlen, "--trace %.100s: cannot create a file in %.80s: %s", path, d->dir,
			 strerror(errno));
		return -1;
	}
	/* a name the directory cannot hold is bad input, found before the
	 * search (it used to fail only when the trace was written: exit 3) */
	const char *base = strrchr(d->target, '/');
	base = base ? base + 1 : d->target;
	long name_max = pathconf(d->dir, _PC_NAME_MAX);
	if (name_max > 0 && strlen(base) > (size_t)name_max) {
		snprintf(err, errlen, "--trace %.1000s: the file name is %zu bytes long, more than the "
			 "%ld its directory allows", path, strlen(base), name_max);
		return -1;
	}
	return 0;
}

static int trace_write(const struct trace_dest *d, const struct check_result *r, char *err,
		       size_t errlen)
{
	char title[256];
	snprintf(title, sizeof(title), "tlbsim %s on %s", r->res.workload->name, r->res.profile->name);
	const struct trace_buf *tb = r->found ? &r->trace : NULL;
	const char *token = r->found ? r->token : NULL;
	if (d->to_stdout) {
		if (out_chrome_trace(stdout, tb, r->res.cpus, title, token) || fflush(stdout)) {
			snprintf(err, errlen, "--trace -: cannot write to stdout");
			return -1;
		}
		return 0;
	}
	if (d->direct) {
		FILE *f = fopen(d->target, "w");
		int bad = !f || out_chrome_trace(f, tb, r->res.cpus, title, token);
		if (f && fclose(f))
			bad = 1;
		if (bad) {
			snprintf(err, errlen, "--trace %.200s: cannot write: %s", d->target, strerror(errno));
			return -1;
		}
		return 0;
	}
	char tmp[PATH_MAX + 64];
	snprintf(tmp, sizeof(tmp), "%s/.tlbsim-trace.XXXXXX", d->dir);
	int fd = mkstemp(tmp);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		if (fd >= 0)
			close(fd);
		snprintf(err, errlen, "--trace %.100s: cannot create a file in %.80s: %s", d->target, d->dir,
			 strerror(errno));
		return -1;
	}
	fchmod(fd, 0644);
	int bad = out_chrome_trace(f, tb, r->res.cpus, title, token);
	if (fclose(f))
		bad = 1;
	if (bad || rename(tmp, d->target)) {
		int e = errno;
		unlink(tmp);
		snprintf(err, errlen, "--trace %.200s: cannot write: %s", d->target, strerror(e));
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
