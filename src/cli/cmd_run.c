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
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/csv.h"
#include "cli/pool.h"
#include "out/out.h"

static const char *stop_name(enum sim_stop st, int sig)
{
	if (st == SIM_STOP_TIME_LIMIT)
		return "time limit";
	if (st == SIM_STOP_SIGNAL)
		return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "signal";
	return NULL;
}

/* --csv: the columns of sweep's rows (csv.h), one row per column; policy is
 * the --policy text of the column (run: every --policy, joined by commas) */
static int print_csv(const struct cli_opts *o, const struct run_result *runs, int n, bool compare)
{
	struct csv_table t = {0};
	struct csv_extra extra = {0};
	bool stats = runs[0].nseeds > 1;
	char label[1024];
	int rc = csv_result_header(&t, &extra, stats);
	for (int r = 0; r < n && !rc; r++) {
		size_t l = 0;
		label[0] = 0;
		if (compare && o->npolicies)
			snprintf(label, sizeof(label), "%s", o->policy_args[r]);
		else
			for (int i = 0; i < o->npolicy_args; i++)
				l += (size_t)snprintf(label + l, l < sizeof(label) ? sizeof(label) - l : 0,
						      "%s%s", i ? "," : "", o->policy_args[i]);
		if (!label[0])
			snprintf(label, sizeof(label), "%s%s", o->cfg.kernel ? "kernel=" : "default",
				 o->cfg.kernel ? o->cfg.kernel : "");
		char **row = csv_result_row(&t, &runs[r], &extra, label, stats);
		if (!row || csv_add_row(&t, row))
			rc = -1;
	}
	if (!rc)
		csv_write(stdout, &t);
	csv_free(&t);
	return rc;
}

int cmd_run(int argc, char **argv, bool compare)
{
	struct cli_opts o;
	int rc = cli_parse(argc, argv, compare ? C_COMPARE : C_RUN, &o);
	if (rc) {
		cli_opts_free(&o);
		return rc < 0 ? 0 : rc;
	}
	char err[TLBSIM_ERRLEN];
	struct tlbsim_resolved res;
	if (tlbsim_resolve(&o.cfg, &res, err, sizeof(err))) {
		cli_opts_free(&o);
		return cli_error("%s", err);
	}
	if (o.native && o.csv) {
		cli_opts_free(&o);
		return cli_error("compare: --csv does not apply with --native");
	}
	if (o.native && (rc = native_check(&o))) {
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
	rc = pool_run_opts(&pool, &o, err, sizeof(err));
	if (rc) {
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
		for (int k = 0; k < nseeds; k++) {
			struct seed_task *t = &t0[k];
			if (!t->ran)
				break;
			seed_m[r * nseeds + ran++] = t->m;
			if (t->stopped) {
				partial = stop_name(t->stopped, t->stop_signal);
				if (t->stopped == SIM_STOP_SIGNAL)
					sig = t->stop_signal;
				break;
			}
		}
		if (!ran)
			break;
		if (ran < nseeds && !partial)
			partial = sig ? stop_name(SIM_STOP_SIGNAL, sig) : "time limit";
		runs[r].cfg = t0->cfg;
		runs[r].res = t0->res;
		runs[r].partial = partial;
		runs[r].nseeds = nseeds > 1 ? ran : 1;
		if (nseeds > 1) {
			runs[r].seed_m = &seed_m[r * nseeds];
			mean_metrics(runs[r].seed_m, ran, &runs[r].m);
		} else {
			runs[r].m = seed_m[r * nseeds];
		}
		done = r + 1;
		if (partial)
			break;
	}
	if (!done) {
		/* stopped before any simulation started */
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
		free(runs);
		free(pool.t);
		free(seed_m);
		cli_opts_free(&o);
		return rc;
	}
	if (o.csv && print_csv(&o, runs, done, compare)) {
		free(runs);
		free(pool.t);
		free(seed_m);
		cli_opts_free(&o);
		return cli_error_code(EXIT_INTERNAL, "out of memory");
	}
	if (o.json)
		out_json(stdout, cli_cmdline(&o), runs, done, compare);
	else if (!o.csv)
		out_table(stdout, runs, done, compare);
	fflush(stdout);
	bool violated = false;
	for (int r = 0; r < done; r++) {
		if (!runs[r].m.violations)
			continue;
		violated = true;
		fprintf(stderr, "tlbsim: note: %s %d saw %" PRIu64 " invariant violation(s), the first: ",
			compare ? "column" : "run", r + 1, runs[r].m.violations);
		cli_put_sanitized(stderr, runs[r].m.first_violation);
		fprintf(stderr, "; use 'tlbsim check' for a counterexample\n");
	}
	if (done < nruns || (done && runs[done - 1].partial))
		fprintf(stderr, "tlbsim: note: stopped early (%s): %d of %d run(s) complete; the "
			"numbers printed are partial\n",
			sig ? stop_name(SIM_STOP_SIGNAL, sig) : "time limit",
			done - (runs[done - 1].partial ? 1 : 0), nruns);
	free(runs);
	free(pool.t);
	free(seed_m);
	cli_opts_free(&o);
	if (sig)
		return 128 + sig;
	return o.fail_on_violation && violated ? EXIT_VIOLATION : 0;
}
