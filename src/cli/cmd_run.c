/*
 * cmd_run.c - `tlbsim run` and `tlbsim compare`: simulate a workload once, or
 * once per --policy, and print the metrics.
 *
 * A run can be stopped early by --time-limit (host seconds, for the whole
 * command) or by SIGINT/SIGTERM: it stops at the next event boundary, the
 * numbers measured so far are printed marked partial, and the exit status is
 * 0 (time limit) or 128 + the signal.
 */
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "out/out.h"

static const char *stop_name(enum sim_stop st, int sig)
{
	if (st == SIM_STOP_TIME_LIMIT)
		return "time limit";
	if (st == SIM_STOP_SIGNAL)
		return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "signal";
	return NULL;
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
	/* one result per column, on the heap (no static state; a few KiB each) */
	struct run_result *runs = calloc(MAX_COLUMNS, sizeof(*runs));
	if (!runs) {
		cli_opts_free(&o);
		return cli_error_code(EXIT_INTERNAL, "out of memory");
	}
	cli_block_signals();
	uint64_t deadline = o.time_limit_ms ? sim_host_ns() + o.time_limit_ms * 1000000u : 0;
	int nruns = compare ? o.npolicies : 1, done = 0, sig = 0;
	for (int r = 0; r < nruns; r++) {
		struct tlbsim_config cfg = o.cfg;
		if (compare)
			cfg.policy = o.policies[r];
		runs[r].cfg = cfg;
		runs[r].partial = NULL;
		rc = tlbsim_resolve(&cfg, &runs[r].res, err, sizeof(err));
		struct core_opts co = {
			.want_kind = -1,
			.host_limit = o.max_memory,
			.deadline_host_ns = deadline,
			.interrupted = cli_pending_signal,
		};
		struct run_outcome out;
		if (!rc)
			rc = tlbsim_run_one(&cfg, &runs[r].res, &co, &out, err, sizeof(err));
		if (rc) {
			free(runs);
			cli_opts_free(&o);
			return cli_error_code(rc == TLBSIM_EINVAL ? EXIT_USAGE : EXIT_INTERNAL, "%s",
					      err);
		}
		runs[r].m = out.m;
		done = r + 1;
		if (out.stopped) {
			runs[r].partial = stop_name(out.stopped, out.stop_signal);
			if (out.stopped == SIM_STOP_SIGNAL)
				sig = out.stop_signal;
			break;
		}
	}
	if (!sig)
		sig = cli_pending_signal(NULL);
	if (o.json)
		out_json(stdout, cli_cmdline(&o), runs, done, compare);
	else
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
	cli_opts_free(&o);
	if (sig)
		return 128 + sig;
	return o.fail_on_violation && violated ? EXIT_VIOLATION : 0;
}
