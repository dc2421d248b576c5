/*
 * main.c - the tlbsim command line: list, run, compare.
 *
 * Results go to stdout, diagnostics to stderr. Exit status: 0 ok, 2 usage or
 * input error (one line naming the problem), 3 internal error.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/check.h"
#include "cost/params.h"
#include "out/out.h"
#include "tlbsim/tlbsim.h"

#define MAX_RUNS 16

static int usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "tlbsim: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n");
	return 2;
}

static const char main_help[] =
	"usage: tlbsim <command> [options]\n"
	"\n"
	"A deterministic simulator of the Linux kernel's TLB-flush machinery.\n"
	"\n"
	"commands:\n"
	"  list {workloads|policies|profiles|params}   show what can be simulated\n"
	"  run WORKLOAD [options]                      simulate one configuration\n"
	"  compare WORKLOAD --policy K=A --policy K=B  simulate each policy, print a table\n"
	"  check WORKLOAD [options]                    explore interleavings for a stale\n"
	"                                              translation; exit 1 if one is found\n"
	"\n"
	"Run 'tlbsim <command> --help' for the options of a command.\n";

static const char run_help[] =
	"usage: tlbsim %s WORKLOAD [options]\n"
	"\n"
	"options:\n"
	"  --profile P        machine profile (default: the workload's; tlbsim list profiles)\n"
	"  --cpus N           override the profile's CPU count (1..1024)\n"
	"  --threads N        worker threads (default: the workload's)\n"
	"  --iters N          iterations per thread (mmap5: rounds)\n"
	"  -w NAME=VALUE      set a workload parameter (tlbsim list workloads)\n"
	"  --policy K=V       set a policy knob (tlbsim list policies)%s\n"
	"  --seed S           PRNG seed (default 1); same inputs + seed = same output\n"
	"  -D NAME=VALUE      override a cost/hardware parameter (tlbsim list params)\n"
	"  --json             print JSON (schema: docs/output.md) instead of a table\n"
	"  -h, --help         this help\n";

/* ---- list ---- */
static int cmd_list(int argc, char **argv)
{
	if (argc < 2)
		return usage_error("list: missing what to list (workloads, policies, profiles or "
				   "params)%s", "");
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		printf("usage: tlbsim list {workloads|policies|profiles|params}\n");
		return 0;
	}
	const char *what = argv[1];
	if (strcmp(what, "workloads") == 0) {
		for (int i = 0; i < tlbsim_workload_count(); i++) {
			const struct tlbsim_workload_desc *d = tlbsim_workload_get(i);
			printf("%-8s %s\n", d->name, d->description);
			printf("         default profile %s, threads %d, iters %" PRId64 "; check instance: "
			       "iters %" PRId64 ", cpus %d%s%s\n", d->default_profile, d->default_threads,
			       d->default_iters, d->check_iters, d->check_cpus,
			       d->check_wparams && *d->check_wparams ? ", " : "",
			       d->check_wparams ? d->check_wparams : "");
			for (int j = 0; j < d->nparams; j++)
				printf("         -w %s=%s\t%s\n", d->params[j].name, d->params[j].defval,
				       d->params[j].meaning);
		}
	} else if (strcmp(what, "policies") == 0) {
		for (int k = 0; k < tlbsim_knob_count(); k++) {
			const struct tlbsim_knob *kn = tlbsim_knob_get(k);
			printf("%s: %s\n", kn->name, kn->meaning);
			for (int v = 0; v < kn->nvalues; v++)
				printf("  %s=%-16s %s%s\n", kn->name, kn->values[v].name,
				       kn->values[v].meaning, v == kn->default_value ? " [default]" : "");
		}
	} else if (strcmp(what, "profiles") == 0) {
		for (int i = 0; i < tlbsim_profile_count(); i++) {
			const struct tlbsim_profile *p = tlbsim_profile_get(i);
			printf("%-10s %s\n", p->name, p->description);
		}
	} else if (strcmp(what, "params") == 0) {
		printf("%-18s %-7s %12s %12s  %s\n", "name", "unit", "x86-64", "arm64", "source");
		for (int i = 0; i < P_COUNT; i++) {
			const struct param_desc *d = &tlbsim_param_desc[i];
			printf("%-18s %-7s %12" PRId64 " %12" PRId64 "  %s\n", d->name, d->unit,
			       d->x86_default, d->arm64_default, d->source);
		}
	} else {
		return usage_error("list: unknown list '%s' (want workloads, policies, profiles "
				   "or params)", what);
	}
	return 0;
}

/* ---- run / compare option parsing ---- */
struct cli_opts {
	struct tlbsim_config cfg;
	int npolicies;
	struct tlbsim_policy policies[MAX_RUNS];
	bool json;
};

static int parse_int_opt(const char *name, const char *v, int64_t lo, int64_t hi, int64_t *out)
{
	char *end;
	errno = 0;
	long long x = strtoll(v, &end, 10);
	if (!*v || *end || errno || x < lo || x > hi) {
		fprintf(stderr, "tlbsim: %s %s: want an integer %lld..%lld\n", name, v,
			(long long)lo, (long long)hi);
		return 2;
	}
	*out = x;
	return 0;
}

static int split_kv(const char *opt, const char *arg, char *k, size_t kl, char *v, size_t vl)
{
	const char *eq = strchr(arg, '=');
	if (!eq || eq == arg || (size_t)(eq - arg) >= kl || strlen(eq + 1) >= vl || !eq[1]) {
		fprintf(stderr, "tlbsim: %s %s: want NAME=VALUE\n", opt, arg);
		return 2;
	}
	memcpy(k, arg, (size_t)(eq - arg));
	k[eq - arg] = 0;
	strcpy(v, eq + 1);
	return 0;
}

/* -w NAME=VALUE */
static int add_wparam(struct tlbsim_config *cfg, const char *arg, int reserve)
{
	if (cfg->nwparams >= TLBSIM_MAX_WPARAMS - reserve)
		return usage_error("too many -w options%s", "");
	if (split_kv("-w", arg, cfg->wparams[cfg->nwparams].name, sizeof(cfg->wparams[0].name),
		     cfg->wparams[cfg->nwparams].value, sizeof(cfg->wparams[0].value)))
		return 2;
	cfg->nwparams++;
	return 0;
}

/* -D NAME=VALUE */
static int add_override(struct tlbsim_config *cfg, const char *arg, int reserve)
{
	char k[64], val[96], name[80];
	int64_t v;
	if (split_kv("-D", arg, k, sizeof(k), val, sizeof(val)))
		return 2;
	int id = param_lookup(k);
	if (id < 0)
		return usage_error("-D: unknown parameter '%s' (see tlbsim list params)", k);
	snprintf(name, sizeof(name), "-D %s", k);
	if (parse_int_opt(name, val, 0, INT64_MAX, &v))
		return 2;
	if (cfg->noverrides >= TLBSIM_MAX_OVERRIDES - reserve)
		return usage_error("too many -D options%s", "");
	cfg->overrides[cfg->noverrides].param = id;
	cfg->overrides[cfg->noverrides].value = v;
	cfg->noverrides++;
	return 0;
}

static int parse_run_opts(int argc, char **argv, struct cli_opts *o, bool compare)
{
	static const struct option longopts[] = {
		{"profile", required_argument, NULL, 'p'}, {"cpus", required_argument, NULL, 'c'},
		{"threads", required_argument, NULL, 't'}, {"iters", required_argument, NULL, 'i'},
		{"policy", required_argument, NULL, 'P'},  {"seed", required_argument, NULL, 's'},
		{"json", no_argument, NULL, 'j'},	   {"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0}};
	memset(o, 0, sizeof(*o));
	tlbsim_config_init(&o->cfg);
	const char *cmd = argv[0];
	int c;
	int64_t v;
	char k[64], val[96], err[TLBSIM_ERRLEN];
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "w:D:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			o->cfg.profile = optarg;
			break;
		case 'c':
			if (parse_int_opt("--cpus", optarg, 1, 1024, &v))
				return 2;
			o->cfg.cpus = (int)v;
			break;
		case 't':
			if (parse_int_opt("--threads", optarg, 1, 4096, &v))
				return 2;
			o->cfg.threads = (int)v;
			break;
		case 'i':
			if (parse_int_opt("--iters", optarg, 1, 1000000000, &v))
				return 2;
			o->cfg.iters = v;
			break;
		case 's':
			if (parse_int_opt("--seed", optarg, 0, INT64_MAX, &v))
				return 2;
			o->cfg.seed = (uint64_t)v;
			break;
		case 'j':
			o->json = true;
			break;
		case 'w':
			if (add_wparam(&o->cfg, optarg, 0))
				return 2;
			break;
		case 'D':
			if (add_override(&o->cfg, optarg, 0))
				return 2;
			break;
		case 'P':
			if (split_kv("--policy", optarg, k, sizeof(k), val, sizeof(val)))
				return 2;
			if (compare) {
				if (o->npolicies >= MAX_RUNS)
					return usage_error("too many --policy options%s", "");
				struct tlbsim_policy *pol = &o->policies[o->npolicies];
				tlbsim_policy_default(pol);
				if (tlbsim_policy_set(pol, k, val, err, sizeof(err)))
					return usage_error("%s", err);
				o->npolicies++;
			} else if (tlbsim_policy_set(&o->cfg.policy, k, val, err, sizeof(err))) {
				return usage_error("%s", err);
			}
			break;
		case 'h':
			printf(run_help, cmd,
			       compare ? "; repeat: one column per --policy" : "");
			return -1;
		default:
			fprintf(stderr, "tlbsim %s: option '%s' is unknown or needs a value\n", cmd,
				argv[optind - 1]);
			return 2;
		}
	}
	if (optind >= argc)
		return usage_error("%s: missing WORKLOAD (see tlbsim list workloads)", cmd);
	if (optind + 1 < argc)
		return usage_error("unexpected argument '%s'", argv[optind + 1]);
	o->cfg.workload = argv[optind];
	if (compare && o->npolicies < 2)
		return usage_error("compare: give at least two --policy KNOB=VALUE options%s", "");
	return 0;
}

static void command_line(int argc, char **argv, char *buf, size_t len)
{
	size_t n = (size_t)snprintf(buf, len, "tlbsim");
	for (int i = 0; i < argc && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, " %s", argv[i]);
}

static int do_runs(int argc, char **argv, bool compare)
{
	struct cli_opts o;
	char cmdline[1024];
	command_line(argc, argv, cmdline, sizeof(cmdline));	/* before getopt permutes argv */
	int rc = parse_run_opts(argc, argv, &o, compare);
	if (rc)
		return rc < 0 ? 0 : rc;
	char err[TLBSIM_ERRLEN];
	struct tlbsim_resolved res;
	if (tlbsim_resolve(&o.cfg, &res, err, sizeof(err)))
		return usage_error("%s", err);

	int nruns = compare ? o.npolicies : 1;
	struct run_result runs[MAX_RUNS];
	for (int r = 0; r < nruns; r++) {
		struct tlbsim_config cfg = o.cfg;
		if (compare)
			cfg.policy = o.policies[r];
		runs[r].cfg = cfg;
		rc = tlbsim_run(&cfg, &runs[r].res, &runs[r].m, err, sizeof(err));
		if (rc == TLBSIM_EINVAL)
			return usage_error("%s", err);
		if (rc) {
			fprintf(stderr, "tlbsim: %s\n", err);
			return 3;
		}
	}
	if (o.json)
		out_json(stdout, cmdline, runs, nruns, compare);
	else
		out_table(stdout, runs, nruns, compare);
	for (int r = 0; r < nruns; r++)
		if (runs[r].m.violations)
			fprintf(stderr, "tlbsim: note: run %d saw %" PRIu64 " invariant violation(s), "
				"the first: %s; use 'tlbsim check' for a counterexample\n", r + 1,
				runs[r].m.violations, runs[r].m.first_violation);
	return 0;
}

static const char check_help[] =
	"usage: tlbsim check WORKLOAD [options]\n"
	"\n"
	"Explore interleavings of WORKLOAD (a small instance: see the check defaults in\n"
	"tlbsim list workloads) and stop at the first invariant violation (I1 freed frame\n"
	"reachable, I2 translation survives munmap/madvise, I3 write into a page judged\n"
	"clean, stale walk, livelock). Exit 1 with a minimised counterexample and a replay\n"
	"token, 0 if nothing is found within the budget, 2 on bad input.\n"
	"\n"
	"options:\n"
	"  --profile P        machine profile\n"
	"  --policy K=V       policy knob (repeatable for different knobs)\n"
	"  --strategy S       random (default), pct or dfs\n"
	"  --runs N           schedule budget (default 100000)\n"
	"  --time-limit S     host-time budget in seconds (default 10)\n"
	"  --seed S           seed of the exploration and the workload (default 1)\n"
	"  --depth D          pct: bug depth (default 3); dfs: preemption bound (default 2)\n"
	"  --replay TOKEN     re-run exactly the schedule of a token (same options)\n"
	"  --trace FILE       write the counterexample as Chrome trace-event JSON\n"
	"                     (ui.perfetto.dev)\n"
	"  --no-minimise      report the schedule as found\n"
	"  --invariant NAME   stop only at this invariant (I1, I1-realized, I2, I3,\n"
	"                     stale-walk, livelock); others are counted and passed\n"
	"  --cpus N, --threads N, --iters N, -w NAME=VALUE, -D NAME=VALUE as for run\n"
	"  --json             print the result as JSON\n";

static int cmd_check(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"profile", required_argument, NULL, 'p'}, {"cpus", required_argument, NULL, 'c'},
		{"threads", required_argument, NULL, 't'}, {"iters", required_argument, NULL, 'i'},
		{"policy", required_argument, NULL, 'P'},  {"seed", required_argument, NULL, 's'},
		{"json", no_argument, NULL, 'j'},	   {"help", no_argument, NULL, 'h'},
		{"strategy", required_argument, NULL, 'S'}, {"runs", required_argument, NULL, 'r'},
		{"time-limit", required_argument, NULL, 'T'}, {"depth", required_argument, NULL, 'd'},
		{"replay", required_argument, NULL, 'R'}, {"trace", required_argument, NULL, 'o'},
		{"no-minimise", no_argument, NULL, 'n'},   {"invariant", required_argument, NULL, 'I'},
		{NULL, 0, NULL, 0}};
	char cmdline[1024];
	command_line(argc, argv, cmdline, sizeof(cmdline));
	struct check_opts o;
	memset(&o, 0, sizeof(o));
	tlbsim_config_init(&o.cfg);
	o.strategy = EX_RANDOM;
	o.runs = 100000;
	o.time_limit_ms = 10000;
	o.minimise = true;
	o.want_kind = -1;
	int depth = -1;
	bool cpus_given = false, iters_given = false, json = false;
	const char *trace_file = NULL;
	int c;
	int64_t v;
	char k[64], val[96], err[TLBSIM_ERRLEN];
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "w:D:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'p': o.cfg.profile = optarg; break;
		case 'c':
			if (parse_int_opt("--cpus", optarg, 1, 1024, &v))
				return 2;
			o.cfg.cpus = (int)v;
			cpus_given = true;
			break;
		case 't':
			if (parse_int_opt("--threads", optarg, 1, 4096, &v))
				return 2;
			o.cfg.threads = (int)v;
			break;
		case 'i':
			if (parse_int_opt("--iters", optarg, 1, 1000000000, &v))
				return 2;
			o.cfg.iters = v;
			iters_given = true;
			break;
		case 's':
			if (parse_int_opt("--seed", optarg, 0, INT64_MAX, &v))
				return 2;
			o.cfg.seed = (uint64_t)v;
			break;
		case 'j': json = true; break;
		case 'n': o.minimise = false; break;
		case 'S':
			if (strcmp(optarg, "random") == 0)
				o.strategy = EX_RANDOM;
			else if (strcmp(optarg, "pct") == 0)
				o.strategy = EX_PCT;
			else if (strcmp(optarg, "dfs") == 0)
				o.strategy = EX_DFS;
			else
				return usage_error("--strategy %s: want random, pct or dfs", optarg);
			break;
		case 'r':
			if (parse_int_opt("--runs", optarg, 1, 1000000000, &v))
				return 2;
			o.runs = (uint64_t)v;
			break;
		case 'T':
			if (parse_int_opt("--time-limit", optarg, 1, 86400, &v))
				return 2;
			o.time_limit_ms = (uint64_t)v * 1000u;
			break;
		case 'd':
			if (parse_int_opt("--depth", optarg, 1, 16, &v))
				return 2;
			depth = (int)v;
			break;
		case 'R': o.replay = optarg; break;
		case 'I':
			o.want_kind = -2;
			for (int kk = 0; kk < INV_COUNT; kk++)
				if (strcmp(optarg, inv_name(kk)) == 0)
					o.want_kind = kk;
			if (o.want_kind == -2)
				return usage_error("--invariant %s: want I1, I1-realized, I2, I3, "
						   "stale-walk or livelock", optarg);
			break;
		case 'o': trace_file = optarg; break;
		case 'w':
			/* reserve room for the workload's check-mode -w defaults */
			if (add_wparam(&o.cfg, optarg, 4))
				return 2;
			break;
		case 'D':
			if (add_override(&o.cfg, optarg, 1))
				return 2;
			break;
		case 'P':
			if (split_kv("--policy", optarg, k, sizeof(k), val, sizeof(val)))
				return 2;
			if (tlbsim_policy_set(&o.cfg.policy, k, val, err, sizeof(err)))
				return usage_error("%s", err);
			break;
		case 'h':
			fputs(check_help, stdout);
			return 0;
		default:
			fprintf(stderr, "tlbsim check: option '%s' is unknown or needs a value\n",
				argv[optind - 1]);
			return 2;
		}
	}
	if (optind >= argc)
		return usage_error("check: missing WORKLOAD (see tlbsim list workloads)%s", "");
	if (optind + 1 < argc)
		return usage_error("unexpected argument '%s'", argv[optind + 1]);
	o.cfg.workload = argv[optind];
	if (!tlbsim_workload_find(o.cfg.workload))
		return usage_error("unknown workload '%s' (see tlbsim list workloads)", o.cfg.workload);
	o.depth = depth > 0 ? depth : (o.strategy == EX_PCT ? 3 : 2);
	check_config_defaults(&o.cfg, cpus_given, iters_given);

	struct check_result r;
	int rc = tlbsim_check(&o, &r, err, sizeof(err));
	if (rc == TLBSIM_EINVAL)
		return usage_error("%s", err);
	if (rc) {
		fprintf(stderr, "tlbsim: %s\n", err);
		check_result_free(&r);
		return 3;
	}
	/* replay command: the original command with --replay TOKEN instead of
	 * the exploration options */
	char replay_cmd[8192];
	size_t n = (size_t)snprintf(replay_cmd, sizeof(replay_cmd), "tlbsim check %s",
				    o.cfg.workload);
	for (int i = 1; i < argc && n < sizeof(replay_cmd); i++) {
		const char *a = argv[i];
		if (strcmp(a, o.cfg.workload) == 0 || strcmp(a, "--json") == 0 ||
		    strcmp(a, "--no-minimise") == 0)
			continue;
		if (strcmp(a, "--strategy") == 0 || strcmp(a, "--runs") == 0 ||
		    strcmp(a, "--time-limit") == 0 || strcmp(a, "--depth") == 0 ||
		    strcmp(a, "--replay") == 0 || strcmp(a, "--trace") == 0) {
			i++;
			continue;
		}
		if (strncmp(a, "--strategy=", 11) == 0 || strncmp(a, "--runs=", 7) == 0 ||
		    strncmp(a, "--time-limit=", 13) == 0 || strncmp(a, "--depth=", 8) == 0 ||
		    strncmp(a, "--replay=", 9) == 0 || strncmp(a, "--trace=", 8) == 0)
			continue;
		n += (size_t)snprintf(replay_cmd + n, sizeof(replay_cmd) - n, " %s", a);
	}
	if (r.found)
		snprintf(replay_cmd + n, n < sizeof(replay_cmd) ? sizeof(replay_cmd) - n : 0,
			 " --replay %s", r.token);
	if (r.found && trace_file) {
		char title[256];
		snprintf(title, sizeof(title), "tlbsim %s on %s", r.res.workload->name,
			 r.res.profile->name);
		if (out_chrome_trace(trace_file, &r.trace, r.res.cpus, title, r.token, err,
				     sizeof(err))) {
			check_result_free(&r);
			return usage_error("%s", err);
		}
	}
	if (json)
		check_print_json(stdout, &r, cmdline, replay_cmd);
	else
		check_print_report(stdout, &r, replay_cmd);
	rc = r.found ? 1 : 0;
	check_result_free(&r);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fputs(main_help, stderr);
		return 2;
	}
	const char *cmd = argv[1];
	if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
		fputs(main_help, stdout);
		return 0;
	}
	if (strcmp(cmd, "--version") == 0) {
		printf("tlbsim %s\n", TLBSIM_VERSION);
		return 0;
	}
	if (strcmp(cmd, "list") == 0)
		return cmd_list(argc - 1, argv + 1);
	if (strcmp(cmd, "run") == 0)
		return do_runs(argc - 1, argv + 1, false);
	if (strcmp(cmd, "compare") == 0)
		return do_runs(argc - 1, argv + 1, true);
	if (strcmp(cmd, "check") == 0)
		return cmd_check(argc - 1, argv + 1);
	return usage_error("unknown command '%s' (see tlbsim --help)", cmd);
}
