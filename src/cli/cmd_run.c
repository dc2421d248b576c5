/*
 * cmd_run.c - `tlbsim run` and `tlbsim compare`: simulate a workload once, or
 * once per --policy, and print the metrics.
 *
 * A run can be stopped early by --time-limit (host seconds, for the whole
 * command) or by SIGINT/SIGTERM: it stops at the next event boundary, the
 * numbers measured so far are printed marked partial, and the exit status is
 * 0 (time limit) or 128 + the signal.
 *
 * --seeds N runs every column with seeds S..S+N-1 and prints means with 95 %
 * confidence intervals (out.c); --jobs J runs at most J simulations at once
 * on host threads. Each simulation owns all its state, so the output does
 * not depend on J.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "cli/chart.h"
#include "cli/cli.h"
#include "cli/csv.h"
#include "cli/pool.h"
#include "out/out.h"

static const char *stop_name(enum sim_stop st, int sig)
{
	if (st == SIM_STOP_TIME_LIMIT)
		return "time limit";
	if (st == SIM_STOP_SIGNAL)
		return sig ? cli_signal_name(sig) : "signal";
	return NULL;
}

/* --csv: the columns of sweep's rows (csv.h), one row per column; policy is
 * the --policy text of the column (run: every --policy, joined by commas) */
static int print_csv(const struct cli_opts *o, const struct run_result *runs, int n, bool compare)
{
	struct csv_table t = {0};
	struct csv_extra extra = {0};
	bool stats = runs[0].nseeds > 1;
	int rc = csv_result_header(&t, &extra, stats);
	/* a compare column's label is its own --policy; else every --policy
	 * joined (any number of them) */
	char *joined = rc ? NULL : cli_policy_label(o);
	if (!joined)
		rc = -1;
	for (int r = 0; r < n && !rc; r++) {
		/* a row is whole runs, as sweep's: a run cut short has none */
		if (runs[r].partial_cut)
			continue;
		const char *label = compare && o->npolicies ? o->policy_args[r] : joined;
		char **row = csv_result_row(&t, &runs[r], &extra, label, stats);
		if (!row || csv_add_row(&t, row))
			rc = -1;
	}
	if (!rc)
		csv_write(stdout, &t);
	csv_free(&t);
	free(joined);
	return rc;
}

/* compare --svg: a grouped bar chart of the main metrics, each column's mean
 * over the first column's (chart.c); metrics zero in every column are left
 * out, those zero only in the first are named in the subtitle */
struct bar_metric {
	const char *name;
	bool time;
	uint64_t (*get)(const struct tlbsim_metrics *m);
};
#define BGET(n) static uint64_t bget_##n(const struct tlbsim_metrics *m) { return m->n; }
BGET(wall_ns) BGET(sys_ns) BGET(user_ns) BGET(ops_per_sec) BGET(page_faults) BGET(tlb_misses)
BGET(ipi_sent) BGET(flush_local_pages) BGET(flush_full) BGET(dvm_wait_ns) BGET(lock_wait_ns)
BGET(kernel_flushes) BGET(purge_vmap_node_ns) BGET(tasklist_lock_wait_ns)
#undef BGET
static uint64_t bget_tlbi(const struct tlbsim_metrics *m)
{
	return m->tlbi.vale1is + m->tlbi.vae1is + m->tlbi.aside1is + m->tlbi.vaale1is +
	       m->tlbi.vmalle1is + m->tlbi.rvale1is + m->tlbi.rvae1is;
}
static const struct bar_metric bar_metrics[] = {
	{"wall", true, bget_wall_ns}, {"sys", true, bget_sys_ns}, {"user", true, bget_user_ns},
	{"ops_per_sec", false, bget_ops_per_sec}, {"page_faults", false, bget_page_faults},
	{"tlb_misses", false, bget_tlb_misses}, {"ipi_sent", false, bget_ipi_sent},
	{"flush_local_pages", false, bget_flush_local_pages}, {"flush_full", false, bget_flush_full},
	{"tlbi (broadcast)", false, bget_tlbi}, {"dvm_wait", true, bget_dvm_wait_ns},
	{"lock_wait", true, bget_lock_wait_ns}, {"kernel_flushes", false, bget_kernel_flushes},
	{"purge_vmap_node", true, bget_purge_vmap_node_ns},
	{"tasklist_wait", true, bget_tasklist_lock_wait_ns},
};
#define NBAR_METRICS (int)(sizeof(bar_metrics) / sizeof(bar_metrics[0]))

static void write_bars(FILE *f, const void *arg)
{
	chart_bar_svg(f, arg);
}

static int write_compare_svg(const struct cli_opts *o, const struct run_result *runs, int n)
{
	double v[NBAR_METRICS * MAX_COLUMNS], ci[NBAR_METRICS * MAX_COLUMNS];
	char lab[NBAR_METRICS * MAX_COLUMNS][32];
	const char *labp[NBAR_METRICS * MAX_COLUMNS], *groups[NBAR_METRICS], *bars[MAX_COLUMNS];
	char zero[512] = "";
	size_t zl = 0;
	int ng = 0;
	for (int k = 0; k < NBAR_METRICS; k++) {
		double mean[MAX_COLUMNS], h[MAX_COLUMNS];
		bool any = false;
		for (int c = 0; c < n; c++) {
			int ns = runs[c].nseeds > 1 && runs[c].seed_m ? runs[c].nseeds : 1;
			double x[1000];
			for (int s = 0; s < ns; s++)
				x[s] = (double)bar_metrics[k].get(ns > 1 ? &runs[c].seed_m[s] : &runs[c].m);
			out_mean_ci(x, ns, &mean[c], &h[c]);
			any |= mean[c] != 0;
		}
		if (!any)
			continue;
		if (mean[0] == 0) {
			zl += (size_t)snprintf(zero + zl, zl < sizeof(zero) ? sizeof(zero) - zl : 0, "%s%s",
					       zl ? ", " : "", bar_metrics[k].name);
			continue;
		}
		groups[ng] = bar_metrics[k].name;
		for (int c = 0; c < n; c++) {
			int i = ng * n + c;
			v[i] = mean[c] / mean[0];
			ci[i] = h[c] / mean[0];
			if (bar_metrics[k].time)
				chart_time(mean[c], lab[i], sizeof(lab[i]));
			else
				chart_count(mean[c], lab[i], sizeof(lab[i]));
			labp[i] = lab[i];
		}
		ng++;
	}
	for (int c = 0; c < n; c++)
		bars[c] = o->npolicies ? o->policy_args[c] : "default";
	const struct tlbsim_resolved *r0 = &runs[0].res;
	char title[256], sub[1024], ylabel[300];
	int ns = runs[0].nseeds > 1 ? runs[0].nseeds : 1;
	const char *partial = NULL;	/* stopped early: the chart says so first */
	for (int c = 0; c < n && !partial; c++)
		partial = runs[c].partial;
	snprintf(title, sizeof(title), "%s%s%s%s on %s: each policy relative to %s",
		 partial ? "PARTIAL (stopped early: " : "", partial ? partial : "",
		 partial ? ") " : "", r0->workload->name, r0->profile->name, bars[0]);
	snprintf(sub, sizeof(sub), "%d CPUs, %d threads x %lld iters, %d seed%s; simulated time; bar "
		 "labels: the values%s%s%s", r0->cpus, r0->threads, (long long)r0->iters, ns,
		 ns > 1 ? "s (means, error bars: 95 % confidence interval)" : "",
		 "", zl ? "; zero in the first column (not drawn): " : "", zl ? zero : "");
	snprintf(ylabel, sizeof(ylabel), "relative to %s (= 1)", bars[0]);
	struct bar_chart ch = {
		.title = title, .subtitle = sub, .ylabel = ylabel, .ngroups = ng, .nbars = n,
		.group = groups, .bar = bars, .v = v, .ci = ns > 1 ? ci : NULL, .label = labp, .ref = 1,
	};
	if (atomic_write(o->svg_file, write_bars, &ch))
		return -1;
	fputs("tlbsim: chart: ", stderr);	/* escaped: one line whatever the name */
	cli_put_sanitized(stderr, o->svg_file);
	fputc('\n', stderr);
	return 0;
}

/* run --trace: the records of the first run, written atomically */
#define TRACE_MAX_RECORDS 1000000u	/* 48 bytes each: at most ~48 MB held, a JSON
					 * file of ~300 MB */

struct trace_job {
	const struct trace_buf *tb;
	const struct run_result *run;
	uint64_t end;			/* open slices end here */
	const char *cmdline;
	bool ftrace;
	int rc;
};

static void write_trace(FILE *f, const void *arg)
{
	struct trace_job *j = (struct trace_job *)arg;
	const struct tlbsim_resolved *r = &j->run->res;
	if (j->ftrace) {
		j->rc = out_ftrace(f, j->tb, r->cpus, r->workload->name);
		if (j->rc && ferror(f))
			j->rc = 0;	/* as below */
		return;
	}
	char title[256];
	snprintf(title, sizeof(title), "tlbsim run %s on %s, %d CPUs (simulated time)",
		 r->workload->name, r->profile->name, r->cpus);
	j->rc = out_chrome_timeline(f, j->tb, r->cpus, j->end, title, j->cmdline);
	/* a write error (EPIPE, ENOSPC) leaves f in error, for atomic_write to
	 * report with its errno: rc is then no allocation failure (every write
	 * error was called "out of memory") */
	if (j->rc && ferror(f))
		j->rc = 0;
}

static int trace_finish(const struct cli_opts *o, const struct trace_buf *tb,
			const struct run_result *run, uint64_t wall_ns)
{
	struct trace_job j = {
		.tb = tb, .run = run, .cmdline = cli_cmdline(o), .ftrace = o->trace_ftrace,
		.end = tb->to && tb->to < wall_ns ? tb->to : wall_ns,
	};
	/* records left out past the cap: the slices still open end at the last
	 * record kept, not at the window's end (they were drawn through time
	 * nothing was recorded in) */
	if (tb->dropped && tb->n) {
		uint64_t last = 0;
		for (uint32_t i = 0; i < tb->n; i++)
			last = tb->r[i].time > last ? tb->r[i].time : last;
		if (last < j.end)
			j.end = last;
	}
	if (j.end < tb->from)
		j.end = tb->from;
	if (atomic_write(o->trace_file, write_trace, &j) || j.rc) {
		int e = errno;
		return cli_error_code(EXIT_INTERNAL, "--trace %s: cannot write: %s", o->trace_file,
				      j.rc ? "out of memory" : strerror(e));
	}
	fputs("tlbsim: trace: ", stderr);	/* escaped: one line whatever the name */
	cli_put_sanitized(stderr, o->trace_file);
	fprintf(stderr, " (%" PRIu32 " events", tb->n);
	if (tb->dropped)
		fprintf(stderr, "; %" PRIu64 " more in the window left out: at most %u are kept, "
			"give a shorter --trace-window", tb->dropped, TRACE_MAX_RECORDS);
	fprintf(stderr, ")\n");
	return 0;
}

int cmd_run(int argc, char **argv, bool compare)
{
	uint64_t host_t0 = sim_host_ns();
	struct cli_opts o;
	struct tlbsim_resolved res;
	int rc = cli_parse_resolve(argc, argv, compare ? C_COMPARE : C_RUN, &o, &res);
	if (rc)
		return rc < 0 ? 0 : rc;
	char err[TLBSIM_ERRLEN];
	if (o.native && o.csv) {
		cli_opts_free(&o);
		return cli_error("compare: --csv does not apply with --native");
	}
	if (o.native && (rc = native_check(&o))) {
		cli_opts_free(&o);
		return rc;
	}
	struct trace_buf tb = {.from = o.trace_from, .to = o.trace_to, .max = TRACE_MAX_RECORDS};
	if (o.trace_file) {
		if (strcmp(o.trace_file, "-") == 0 || !*o.trace_file) {
			cli_opts_free(&o);
			return cli_error("run: --trace wants a file name ('-' is check's; "
					 "/dev/stdout works)");
		}
		if (csv_probe_dir(o.trace_file)) {
			rc = cli_error("--trace %s: cannot create a file there: %s", o.trace_file,
				       strerror(errno));
			cli_opts_free(&o);
			return rc;
		}
	}
	/* compare --svg: the chart's place, before the runs */
	if (compare && o.svg_given && csv_probe_dir(o.svg_file)) {
		rc = cli_error("--svg %s: cannot write: %s", o.svg_file, strerror(errno));
		cli_opts_free(&o);
		return rc;
	}
	/* compare --native without --policy: one model column of the default knobs */
	int nruns = compare && o.npolicies ? o.npolicies : 1, nseeds = o.seeds;
	/* results on the heap (no static state) */
	struct run_result *runs = calloc(MAX_COLUMNS, sizeof(*runs));
	struct seed_pool pool = {.n = nruns * nseeds};
	pool.t = calloc((size_t)pool.n, sizeof(*pool.t));
	struct tlbsim_metrics *seed_m = calloc((size_t)pool.n, sizeof(*seed_m));
	if (!runs || !pool.t || !seed_m) {
		trace_buf_free(&tb);
		free(runs);
		free(pool.t);
		free(seed_m);
		cli_opts_free(&o);
		return cli_error_code(EXIT_INTERNAL, "out of memory");
	}
	/* column-major: a stop leaves whole columns done first */
	for (int r = 0; r < nruns; r++)
		for (int k = 0; k < nseeds; k++) {
			struct seed_task *t = &pool.t[r * nseeds + k];
			t->cfg = o.cfg;
			if (compare && o.npolicies)
				t->cfg.policy = o.policies[r];
			t->cfg.seed = o.cfg.seed + (uint64_t)k;
		}
	if (o.trace_file)
		pool.t[0].trace = &tb;
	struct pool_progress pg;
	pool_progress_tty(&pool, &pg);
	rc = pool_run_opts(&pool, &o, err, sizeof(err));
	pool_progress_end(&pool);
	if (rc) {
		trace_buf_free(&tb);
		free(runs);
		free(pool.t);
		free(seed_m);
		cli_opts_free(&o);
		return cli_error_code(rc == TLBSIM_EINVAL ? EXIT_USAGE : EXIT_INTERNAL, "%s", err);
	}
	int done = 0, sig = 0;
	for (int r = 0; r < nruns; r++) {
		struct seed_task *t0 = &pool.t[r * nseeds];
		int ran = 0;
		const char *partial = NULL;
		bool cut = false;
		for (int k = 0; k < nseeds; k++) {
			struct seed_task *t = &t0[k];
			if (!t->ran)
				break;
			if (t->stopped) {
				partial = stop_name(t->stopped, t->stop_signal);
				if (t->stopped == SIM_STOP_SIGNAL)
					sig = t->stop_signal;
				/* a seed stopped mid-way joins no mean of whole
				 * seeds; it stands alone only when it is the first */
				if (!ran) {
					seed_m[r * nseeds + ran++] = t->m;
					cut = true;
				}
				break;
			}
			seed_m[r * nseeds + ran++] = t->m;
		}
		if (!ran)
			break;
		if (ran < nseeds && !partial)
			partial = cli_signal_name(sig);
		runs[r].cfg = t0->cfg;
		runs[r].res = t0->res;
		runs[r].partial = partial;
		runs[r].partial_cut = cut;
		runs[r].seeds_planned = nseeds;
		runs[r].nseeds = nseeds > 1 ? ran : 1;
		if (nseeds > 1) {
			runs[r].seed_m = &seed_m[r * nseeds];
			mean_metrics(runs[r].seed_m, ran, runs[r].res.cpus, &runs[r].m);
		} else {
			runs[r].m = seed_m[r * nseeds];
		}
		done = r + 1;
		if (partial)
			break;
	}
	if (!done) {
		/* stopped before any simulation started */
		trace_buf_free(&tb);
		free(runs);
		free(pool.t);
		free(seed_m);
		cli_opts_free(&o);
		sig = cli_pending_signal(NULL);
		if (sig) {
			fprintf(stderr, "tlbsim: note: stopped (%s) before a run started\n",
				stop_name(SIM_STOP_SIGNAL, sig));
			return 128 + sig;
		}
		return cli_error_code(EXIT_INTERNAL, "no run completed");
	}
	if (!sig)
		sig = cli_pending_signal(NULL);
	if (o.native && !sig && done == nruns && !runs[done - 1].partial) {
		rc = native_compare(&o, runs, done);
		trace_buf_free(&tb);
		free(runs);
		free(pool.t);
		free(seed_m);
		cli_opts_free(&o);
		return rc;
	}
	if (o.csv && print_csv(&o, runs, done, compare)) {
		trace_buf_free(&tb);
		free(runs);
		free(pool.t);
		free(seed_m);
		cli_opts_free(&o);
		return cli_error_code(EXIT_INTERNAL, "out of memory");
	}
	if (o.json)
		out_json(stdout, cli_cmdline(&o), runs, done, compare);
	else if (!o.csv) {
		out_table_note(stdout, runs, (double)(sim_host_ns() - host_t0) / 1e9);
		out_table(stdout, runs, done, compare);
	}
	fflush(stdout);
	if (compare && o.svg_given && write_compare_svg(&o, runs, done)) {
		int e = errno;
		trace_buf_free(&tb);
		free(runs);
		free(pool.t);
		free(seed_m);
		rc = cli_error_code(EXIT_INTERNAL, "--svg %s: cannot write: %s", o.svg_file, strerror(e));
		cli_opts_free(&o);
		return rc;
	}
	if (o.trace_file && !compare && (rc = trace_finish(&o, &tb, &runs[0], pool.t[0].m.wall_ns))) {
		trace_buf_free(&tb);
		free(runs);
		free(pool.t);
		free(seed_m);
		cli_opts_free(&o);
		return rc;
	}
	trace_buf_free(&tb);
	bool violated = false;
	for (int r = 0; r < done; r++) {
		if (!runs[r].m.violations)
			continue;
		violated = true;
		fprintf(stderr, "tlbsim: note: %s %d", compare ? "column" : "run", r + 1);
		if (compare && o.npolicies) {
			fputs(" (", stderr);
			cli_put_sanitized(stderr, o.policy_args[r]);
			fputc(')', stderr);
		}
		fprintf(stderr, " saw %" PRIu64 " invariant violation(s), the first: ",
			runs[r].m.violations);
		cli_put_sanitized(stderr, runs[r].m.first_violation);
		fprintf(stderr, "; use 'tlbsim check' for a counterexample\n");
	}
	if (done < nruns || (done && runs[done - 1].partial)) {
		int complete = 0;	/* a run: one seed of one column */
		for (int i = 0; i < pool.n; i++)
			complete += pool.t[i].ran && !pool.t[i].stopped;
		fprintf(stderr, "tlbsim: note: stopped early (%s): %d of %d run(s) complete; the "
			"numbers printed are partial\n",
			cli_signal_name(sig), complete, pool.n);
	}
	trace_buf_free(&tb);
	free(runs);
	free(pool.t);
	free(seed_m);
	cli_opts_free(&o);
	if (sig)
		return 128 + sig;
	return o.fail_on_violation && violated ? EXIT_VIOLATION : 0;
}
