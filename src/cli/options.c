/*
 * options.c - the option table and parser shared by run, compare and check,
 * the help text generated from the table, the replay command rebuilt from
 * the parsed configuration, and the output helpers of the command line.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "out/out.h"
#include "workload/workload.h"

enum opt_id {
	O_PROFILE = 256, O_CPUS, O_THREADS, O_ITERS, O_POLICY, O_SEED, O_JSON, O_TIME_LIMIT,
	O_MAX_MEMORY, O_FAIL_ON_VIOLATION, O_STRATEGY, O_RUNS, O_DEPTH, O_REPLAY, O_TRACE,
	O_NO_MINIMISE, O_INVARIANT, O_MAX_STEPS, O_DURATION, O_SEEDS, O_KERNEL, O_METRIC,
	O_PERTURB, O_SVG, O_NATIVE,
	O_GRID, O_SHARD, O_CSV,
	O_TRACE_WINDOW, O_TRACE_FORMAT,
	O_MEMORY_MODEL,
	O_OUTPUT = 'o',
	O_W = 'w', O_D = 'D', O_HELP = 'h', O_JOBS = 'j',
};

struct opt_def {
	const char *name;	/* long name, or NULL for a short-only option */
	char shortname;
	int has_arg;
	int id;
	unsigned cmds;
	const char *arg;	/* help: the argument's name */
	const char *help;
};

static const struct opt_def opts[] = {
	{"profile", 0, 1, O_PROFILE, C_ALL, "P",
	 "machine profile (default: the workload's; tlbsim list profiles)"},
	{"cpus", 0, 1, O_CPUS, C_ALL, "N", "override the profile's CPU count (1..1024)"},
	{"cpus", 0, 1, O_CPUS, C_NATIVE, "N", "run on the first N CPUs the host allows (default: all)"},
	{"threads", 0, 1, O_THREADS, C_ALL | C_NATIVE, "N",
	 "worker threads or tasks (1..4096; workloads with their own thread structure refuse it)"},
	{"tasks", 0, 1, O_THREADS, C_ALL | C_NATIVE, "N",
	 "the same as --threads (will-it-scale: processes or threads, by -w mode)"},
	{"iters", 0, 1, O_ITERS, C_ALL | C_NATIVE, "N",
	 "iterations per thread (mmap5: rounds; will-it-scale: measured rounds per task)"},
	{"native", 0, 0, O_NATIVE, C_COMPARE, NULL,
	 "add a column: the workload run on this host's kernel (tlbsim native); --policy is then "
	 "optional (intended with --profile FILE from tlbsim calibrate)"},
	{"duration", 0, 1, O_DURATION, C_RUN | C_COMPARE | C_SENS, "S",
	 "timed workloads (will-it-scale, ebizzy, mprotect_storm, stress-ng-tlb, fork_exec): "
	 "measure S simulated seconds after the warm-up round instead of --iters rounds "
	 "(0.000001..3600)"},
	{NULL, 'w', 1, O_W, C_ALL | C_NATIVE, "NAME=VALUE",
	 "set a workload parameter (tlbsim list workloads)"},
	{"policy", 0, 1, O_POLICY, C_RUN | C_CHECK, "K=V[,K=V]",
	 "set policy knobs (tlbsim list policies)"},
	{"policy", 0, 1, O_POLICY, C_COMPARE, "K=V[,K=V]",
	 "one column per --policy, each starting from the defaults (tlbsim list policies)"},
	{"policy", 0, 1, O_POLICY, C_SENS, "K=V[,K=V]",
	 "one policy (the metric) or two (the metric's ratio, second over first); each starts "
	 "from the defaults"},
	{"metric", 0, 1, O_METRIC, C_SENS, "NAME",
	 "the metric (a JSON metrics key; default ops_per_sec for will-it-scale, else wall_ns)"},
	{"perturb", 0, 1, O_PERTURB, C_SENS, "PCT",
	 "move each cost parameter down and up by PCT percent (1..90, default 20)"},
	{"svg", 0, 1, O_SVG, C_SENS, "FILE", "write the tornado chart there (default sensitivity.svg)"},
	{"kernel", 0, 1, O_KERNEL, C_ALL, "VERSION",
	 "set every knob to what that kernel release did (tlbsim list kernels; 5.1 or v5.1); "
	 "an explicit --policy wins"},
	{"seed", 0, 1, O_SEED, C_ALL, "S", "PRNG seed (default 1); same inputs + seed = same output"},
	{"seeds", 0, 1, O_SEEDS, C_RUN | C_COMPARE | C_SENS, "N",
	 "run seeds S..S+N-1 (1..1000; default 1 for run and sensitivity, 5 for compare) and "
	 "print each metric's mean with its 95 % confidence interval; compare pairs the seeds "
	 "of its columns for the ratio"},
	{"jobs", 'j', 1, O_JOBS, C_RUN | C_COMPARE | C_SENS, "J",
	 "simulate at most J runs at once on host threads (1..1024, default: the host's CPUs)"},
	{NULL, 'D', 1, O_D, C_ALL, "NAME=VALUE",
	 "override a cost/hardware parameter (tlbsim list params)"},
	{"json", 0, 0, O_JSON, C_ALL | C_NATIVE, NULL, "print JSON (schema: docs/output.md) instead of text"},
	{"time-limit", 0, 1, O_TIME_LIMIT, C_RUN | C_COMPARE | C_SENS, "S",
	 "stop after S host seconds (0.001..86400, decimals allowed) and print what was measured, "
	 "marked partial"},
	{"time-limit", 0, 1, O_TIME_LIMIT, C_CHECK, "S",
	 "host-time budget in seconds (0.001..86400, decimals allowed; default 10)"},
	{"max-memory", 0, 1, O_MAX_MEMORY, C_ALL, "SIZE",
	 "host memory the simulation may use (default: half the machine's)"},
	{"fail-on-violation", 0, 0, O_FAIL_ON_VIOLATION, C_RUN | C_COMPARE, NULL,
	 "exit 1 if any run saw an invariant violation"},
	{"strategy", 0, 1, O_STRATEGY, C_CHECK, "S", "random (default), pct or dfs"},
	{"runs", 0, 1, O_RUNS, C_CHECK, "N", "schedule budget (default 100000)"},
	{"depth", 0, 1, O_DEPTH, C_CHECK, "D",
	 "pct: bug depth (default 3); dfs: preemption bound (default 2)"},
	{"max-steps", 0, 1, O_MAX_STEPS, C_CHECK, "N",
	 "cut a schedule after N steps (default 200000); cut schedules are reported"},
	{"replay", 0, 1, O_REPLAY, C_CHECK, "TOKEN",
	 "re-run exactly the schedule of a token (same options)"},
	{"trace", 0, 1, O_TRACE, C_CHECK, "FILE",
	 "write the counterexample as Chrome trace-event JSON (ui.perfetto.dev); - is stdout"},
	{"no-minimise", 0, 0, O_NO_MINIMISE, C_CHECK, NULL, "report the schedule as found"},
	{"invariant", 0, 1, O_INVARIANT, C_CHECK, "NAME",
	 "stop only at this invariant (I1, I1-realized, I2, I3, I5, stale-walk, livelock, I4a, "
	 "litmus)"},
	{"memory-model", 0, 1, O_MEMORY_MODEL, C_CHECK, "M",
	 "sc (default: every store visible at once) or tso (x86-TSO: per-CPU FIFO store "
	 "buffers whose drains the strategy schedules; fences, locked and serialising "
	 "instructions drain them)"},
	/* sweep (cmd_sweep.c) and the CSV/SVG outputs */
	{"grid", 0, 1, O_GRID, C_SWEEP, "KEY=V1,V2,...",
	 "a dimension of the grid (the cross product of every --grid is run): threads, cpus, "
	 "iters, profile (built-in names), w:NAME (a workload parameter), D:NAME (a cost "
	 "parameter)"},
	{"policy", 0, 1, O_POLICY, C_SWEEP, "K=V[,K=V]",
	 "one row per --policy at each grid point, each starting from the defaults"},
	{"duration", 0, 1, O_DURATION, C_SWEEP, "S", "timed workloads: measured simulated seconds"},
	{"seeds", 0, 1, O_SEEDS, C_SWEEP, "N",
	 "run seeds S..S+N-1 per row (1..1000, default 1); columns METRIC_mean and METRIC_ci95"},
	{"jobs", 'j', 1, O_JOBS, C_SWEEP, "J",
	 "simulate at most J runs at once on host threads (default: the host's CPUs); the "
	 "output does not depend on J"},
	{"time-limit", 0, 1, O_TIME_LIMIT, C_SWEEP, "S",
	 "stop after S host seconds (0.001..86400); the rows complete so far are written (run "
	 "again to resume)"},
	{"output", 'o', 1, O_OUTPUT, C_SWEEP, "FILE",
	 "write the CSV there (atomically: a temporary file renamed at the end); rows already in "
	 "FILE are kept and their configurations not run again (resume; -w, -D and --kernel are "
	 "in its columns, a --profile FILE that is not a built-in's values cannot resume)"},
	{"shard", 0, 1, O_SHARD, C_SWEEP, "K/N",
	 "run only the rows K, K+N, K+2N, ... (1 <= K <= N) of the grid; tlbsim merge joins the "
	 "shards' files"},
	{"csv", 0, 0, O_CSV, C_RUN | C_COMPARE, NULL,
	 "print CSV: one header line, one row per column (docs/output.md)"},
	{"csv", 0, 0, O_CSV, C_CHECK, NULL,
	 "print CSV: one header line, one row for the search (docs/output.md)"},
	{"svg", 0, 1, O_SVG, C_COMPARE, "FILE",
	 "also write a grouped bar chart of the main metrics, each relative to the first column"},
	/* run --trace (cmd_run.c) */
	{"trace", 0, 1, O_TRACE, C_RUN, "FILE",
	 "write a timeline of the run there (atomically): CPU and thread tracks, IPI and "
	 "broadcast-TLBI arrows (--trace-format); with --seeds, of the first seed"},
	{"trace-window", 0, 1, O_TRACE_WINDOW, C_RUN, "START:END",
	 "record only simulated times in [START, END), e.g. 10ms:12ms, 0:500us, 2ms: (to the "
	 "end); units ns, us, ms, s (default 0:10ms: the first 10 ms, so the file stays bounded)"},
	{"trace-format", 0, 1, O_TRACE_FORMAT, C_RUN, "F",
	 "chrome (default: Chrome trace-event JSON for ui.perfetto.dev) or ftrace (text in the "
	 "form of the kernel's trace file, one line per event)"},
	{"trace", 0, 1, O_TRACE, C_COMPARE | C_SWEEP, "FILE",
	 "not available: a timeline is of one run (tlbsim run ... --policy K=V --trace FILE)"},
	{"help", 'h', 0, O_HELP, C_ALL | C_NATIVE, NULL, "this help"},
};
#define NOPTS (sizeof(opts) / sizeof(opts[0]))

/* ---- output helpers ---- */

void cli_put_sanitized(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	while (*p) {
		int n = out_utf8_len(p);
		if (n == 1 && (*p < 0x20 || *p == 0x7f)) {
			fprintf(f, "\\x%02x", *p);
			p++;
		} else if (n == 0) {
			fprintf(f, "\\x%02x", *p);
			p++;
		} else {
			fwrite(p, 1, (size_t)n, f);
			p += n;
		}
	}
}

/* The one-line error "tlbsim: MSG". A message longer than ERR_KEEP * 2
 * bytes (an argument of thousands of characters quoted in it) keeps its
 * head and its tail, where the reason is, around "[... N bytes ...]": cut
 * at 2 KiB, the reason was lost. */
#define ERR_KEEP 240
static int verror(int code, const char *fmt, va_list ap)
{
	char small[2048], *msg = small;
	va_list ap2;
	va_copy(ap2, ap);
	int n = vsnprintf(small, sizeof(small), fmt, ap);
	if (n >= (int)sizeof(small)) {
		char *big = malloc((size_t)n + 1);
		if (big) {
			vsnprintf(big, (size_t)n + 1, fmt, ap2);
			msg = big;
		}
	}
	va_end(ap2);
	size_t len = strlen(msg);
	fputs("tlbsim: ", stderr);
	if (len > 2 * ERR_KEEP + 64) {
		/* cut at character boundaries: no UTF-8 sequence split */
		size_t h = ERR_KEEP, t = len - ERR_KEEP;
		while (h > 0 && ((unsigned char)msg[h] & 0xc0) == 0x80)
			h--;
		while (t < len && ((unsigned char)msg[t] & 0xc0) == 0x80)
			t++;
		char c = msg[h];
		msg[h] = 0;
		cli_put_sanitized(stderr, msg);
		msg[h] = c;
		fprintf(stderr, "[... %zu bytes ...]", t - h);
		cli_put_sanitized(stderr, msg + t);
	} else {
		cli_put_sanitized(stderr, msg);
	}
	fputc('\n', stderr);
	if (msg != small)
		free(msg);
	return code;
}

int cli_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = verror(EXIT_USAGE, fmt, ap);
	va_end(ap);
	return rc;
}

int cli_error_code(int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = verror(code, fmt, ap);
	va_end(ap);
	return rc;
}

void cli_block_signals(void)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, NULL);
}

int cli_pending_signal(void *unused)
{
	(void)unused;
	sigset_t set;
	if (sigpending(&set))
		return 0;
	if (sigismember(&set, SIGINT))
		return SIGINT;
	if (sigismember(&set, SIGTERM))
		return SIGTERM;
	return 0;
}

const char *cli_signal_name(int sig)
{
	return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : sig ? "signal" : "time limit";
}

uint64_t cli_default_max_memory(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
	if (pages <= 0 || psize <= 0)
		return 4ull << 30;
	return (uint64_t)pages * (uint64_t)psize / 2;
}

/* ---- parsing ---- */

/* A non-negative decimal integer: digits only (no sign, no spaces). */
int cli_parse_uint(const char *name, const char *v, uint64_t lo, uint64_t hi, uint64_t *out)
{
	uint64_t x = 0;
	const char *p = v;
	if (!*p)
		goto bad;
	for (; *p; p++) {
		if (*p < '0' || *p > '9' || x > (UINT64_MAX - 9) / 10)
			goto bad;
		x = x * 10 + (uint64_t)(*p - '0');
	}
	if (x < lo || x > hi)
		goto bad;
	*out = x;
	return 0;
bad:
	cli_error("%s %s: want an integer %llu..%llu", name, v, (unsigned long long)lo,
		  (unsigned long long)hi);
	return EXIT_USAGE;
}

static int split_kv(const char *opt, const char *arg, char *k, size_t kl, char *v, size_t vl)
{
	const char *eq = strchr(arg, '=');
	if (!eq || eq == arg || !eq[1])
		return cli_error("%s %s: want NAME=VALUE", opt, arg);
	if ((size_t)(eq - arg) >= kl)
		return cli_error("%s %s: the name is longer than %zu characters", opt, arg, kl - 1);
	if (strlen(eq + 1) >= vl)
		return cli_error("%s %s: the value is longer than %zu characters", opt, arg, vl - 1);
	memcpy(k, arg, (size_t)(eq - arg));
	k[eq - arg] = 0;
	memcpy(v, eq + 1, strlen(eq + 1) + 1);
	return 0;
}

/* -w NAME=VALUE: a later -w of the same name replaces the earlier one */
static int add_wparam(struct tlbsim_config *cfg, const char *arg, int reserve)
{
	struct tlbsim_kv kv = {0};
	if (split_kv("-w", arg, kv.name, sizeof(kv.name), kv.value, sizeof(kv.value)))
		return EXIT_USAGE;
	for (int i = 0; i < cfg->nwparams; i++)
		if (strcmp(cfg->wparams[i].name, kv.name) == 0) {
			cfg->wparams[i] = kv;
			return 0;
		}
	if (cfg->nwparams >= TLBSIM_MAX_WPARAMS - reserve)
		return cli_error("too many -w options (at most %d)", TLBSIM_MAX_WPARAMS - reserve);
	cfg->wparams[cfg->nwparams++] = kv;
	return 0;
}

static int add_override(struct tlbsim_config *cfg, const char *arg, int reserve)
{
	char k[64], val[96], name[80];
	uint64_t v;
	if (split_kv("-D", arg, k, sizeof(k), val, sizeof(val)))
		return EXIT_USAGE;
	int id = param_lookup(k);
	if (id < 0)
		return cli_error("-D: unknown parameter '%s' (see tlbsim list params)", k);
	snprintf(name, sizeof(name), "-D %s", k);
	if (cli_parse_uint(name, val, 0, INT64_MAX, &v))
		return EXIT_USAGE;
	/* a later -D of the same parameter replaces the earlier one */
	for (int i = 0; i < cfg->noverrides; i++)
		if (cfg->overrides[i].param == id) {
			cfg->overrides[i].value = (int64_t)v;
			return 0;
		}
	if (cfg->noverrides >= TLBSIM_MAX_OVERRIDES - reserve)
		return cli_error("too many -D options (at most %d)", TLBSIM_MAX_OVERRIDES - reserve);
	cfg->overrides[cfg->noverrides].param = id;
	cfg->overrides[cfg->noverrides].value = (int64_t)v;
	cfg->noverrides++;
	return 0;
}

/* "5", "0.25", "1.000001": seconds to nanoseconds (at most 9 decimals) */
static int parse_seconds_ns(const char *txt, uint64_t *ns)
{
	uint64_t whole = 0, frac = 0;
	int digits = 0, fdigits = 0;
	const char *p = txt;
	for (; *p >= '0' && *p <= '9'; p++, digits++) {
		if (whole > 1000000)
			return -1;
		whole = whole * 10 + (uint64_t)(*p - '0');
	}
	if (*p == '.') {
		for (p++; *p >= '0' && *p <= '9'; p++, fdigits++) {
			if (fdigits == 9)
				return -1;
			frac = frac * 10 + (uint64_t)(*p - '0');
		}
		if (!fdigits)
			return -1;
	}
	if (*p || !digits)
		return -1;
	while (fdigits++ < 9)
		frac *= 10;
	*ns = whole * 1000000000ull + frac;
	return 0;
}

/* --time-limit S: host seconds, decimals allowed ("0.5", "90", "1.25"),
 * from 1 ms to one day; milliseconds, rounded up (a limit of 0.0004 s is
 * refused, not turned into "none"). 0, or an error printed (exit 2). */
int cli_parse_time_limit(const char *v, uint64_t *ms)
{
	uint64_t ns;
	if (parse_seconds_ns(v, &ns) || ns < 1000000u || ns > 86400ull * 1000000000u)
		return cli_error("--time-limit %s: want host seconds from 0.001 to 86400", v);
	*ms = (ns + 999999u) / 1000000u;
	return 0;
}

/* A simulated time with a unit: "10ms", "0.5us", "2s", "750ns"; "0" alone
 * may go without. Nanoseconds (at most 1e6 s); -1 if malformed. */
static int parse_sim_time(const char *txt, uint64_t *ns)
{
	static const struct {
		const char *unit;
		uint64_t mul;
	} units[] = {{"ns", 1}, {"us", 1000}, {"ms", 1000000}, {"s", 1000000000}};
	size_t l = strlen(txt), k = l;
	while (k > 0 && ((txt[k - 1] >= 'a' && txt[k - 1] <= 'z')))
		k--;
	if (k == 0 || k >= 40)
		return -1;
	char num[40];
	memcpy(num, txt, k);
	num[k] = 0;
	uint64_t mul = 0;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (strcmp(txt + k, units[i].unit) == 0)
			mul = units[i].mul;
	if (k == l && strcmp(num, "0") == 0)
		mul = 1;
	if (!mul)
		return -1;
	/* whole and fraction as in parse_seconds_ns, scaled by the unit */
	uint64_t whole = 0, frac = 0, fscale = 1;
	const char *p = num;
	int digits = 0;
	for (; *p >= '0' && *p <= '9'; p++, digits++) {
		if (whole > 1000000000000ull)
			return -1;
		whole = whole * 10 + (uint64_t)(*p - '0');
	}
	if (*p == '.') {
		int fd = 0;
		for (p++; *p >= '0' && *p <= '9'; p++, fd++) {
			if (fd == 9)
				return -3;	/* finer than a nanosecond in any unit */
			frac = frac * 10 + (uint64_t)(*p - '0');
			fscale *= 10;
		}
		if (!fd)
			return -1;
	}
	if (*p || !digits)
		return -1;
	if (whole > 1000000000000000ull / mul)
		return -2;	/* past 10^15 ns (about 11.6 days) */
	uint64_t f = frac * mul;
	if (f % fscale)
		return -3;	/* finer than a nanosecond */
	*ns = whole * mul + f / fscale;
	return 0;
}

/* "START:END" or "START:" (to the end) into [from, to) (to 0: no end) */
static int parse_trace_window(const char *arg, uint64_t *from, uint64_t *to)
{
	const char *colon = strchr(arg, ':');
	char a[64];
	if (!colon || (size_t)(colon - arg) >= sizeof(a) || strchr(colon + 1, ':'))
		return cli_error("--trace-window %s: want START:END with units, e.g. 10ms:12ms or "
				 "0:500us (END may be left out: to the end)", arg);
	memcpy(a, arg, (size_t)(colon - arg));
	a[colon - arg] = 0;
	static const char *const why[] = {
		"want a number with a unit (ns, us, ms, s), e.g. 10ms",
		"more than 1000000 s (10^15 ns) of simulated time",
		"finer than a nanosecond",
	};
	int e = parse_sim_time(a, from);
	if (e)
		return cli_error("--trace-window %s: bad START '%s': %s", arg, a, why[-e - 1]);
	*to = 0;
	if (colon[1] && (e = parse_sim_time(colon + 1, to)))
		return cli_error("--trace-window %s: bad END '%s': %s", arg, colon + 1, why[-e - 1]);
	if (colon[1] && *to <= *from)
		return cli_error("--trace-window %s: END must be later than START", arg);
	return 0;
}

/* "K=V[,K=V...]" into pol */
static int set_policies(struct tlbsim_policy *pol, const char *arg)
{
	char buf[256];
	if (strlen(arg) >= sizeof(buf))
		return cli_error("--policy %s: too long", arg);
	memcpy(buf, arg, strlen(arg) + 1);
	/* every item a KNOB=VALUE, each knob once: an empty item (a trailing
	 * comma) or a knob given twice in one option (the last one won) is a
	 * slip to point out, and the CSV's policy column repeats the text */
	if (!*buf || buf[0] == ',' || buf[strlen(buf) - 1] == ',' || strstr(buf, ",,"))
		return cli_error("--policy %s: an empty item (want KNOB=VALUE[,KNOB=VALUE...])", arg);
	char *save = NULL;
	char seen[64][64];	/* (a 256-byte option holds fewer items) */
	int n = 0;
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char k[64], v[96], err[TLBSIM_ERRLEN];
		if (split_kv("--policy", tok, k, sizeof(k), v, sizeof(v)))
			return EXIT_USAGE;
		for (int i = 0; i < n && i < 64; i++)
			if (strcmp(seen[i], k) == 0)
				return cli_error("--policy %s: %s given twice", arg, k);
		if (tlbsim_policy_set(pol, k, v, err, sizeof(err)))
			return cli_error("%s", err);
		if (n < 64)
			snprintf(seen[n], sizeof(seen[n]), "%s", k);
		n++;
	}
	return 0;
}

static const struct opt_def *find_opt(int id, unsigned cmd_bit)
{
	for (size_t i = 0; i < NOPTS; i++)
		if (opts[i].id == id && (opts[i].cmds & cmd_bit))
			return &opts[i];
	return NULL;
}

static void print_help(FILE *f, unsigned cmd_bit, const char *cmd)
{
	if (cmd_bit == C_CHECK)
		fprintf(f, "usage: tlbsim check WORKLOAD [options]\n\n"
			   "Explore interleavings of WORKLOAD (a small instance: see the check defaults in\n"
			   "tlbsim list workloads) and stop at the first invariant violation (I1 freed frame\n"
			   "reachable, I2 translation survives munmap/madvise/mprotect/clear_refs/mremap/\n"
			   "migrate_vma_setup, I3 write into a page judged clean, lost to soft-dirty\n"
			   "tracking, to a KSM merge or to a device migration's copy, I5\n"
			   "kernel VA reused before its flush, stale walk, livelock). Exit 1 with a minimised\n"
			   "counterexample and a replay token, 0 if nothing is found within the budget, 2 on\n"
			   "bad input.\n");
	else if (cmd_bit == C_SENS)
		fprintf(f, "usage: tlbsim sensitivity WORKLOAD [--policy A [--policy B]] [--metric M] "
			   "[options]\n\n"
			   "Move each cost parameter (unit ns, non-zero on this machine) down and up by\n"
			   "--perturb percent, one at a time, and rank the parameters by how much they move\n"
			   "the metric - or, with two policies, the ratio of the metric (second over first).\n"
			   "Prints the ranked table and writes a tornado chart (SVG).\n");
	else if (cmd_bit == C_COMPARE)
		fprintf(f, "usage: tlbsim compare WORKLOAD --policy K=V --policy K=V [options]\n"
			   "       tlbsim compare --native WORKLOAD [--policy K=V] [options]\n\n"
			   "Simulate WORKLOAD once per --policy and print the metrics side by side\n"
			   "(simulated time; each column starts from the default knobs). With --native,\n"
			   "the last column is WORKLOAD run on this host (host time; mmap8, page_fault3).\n");
	else if (cmd_bit == C_SWEEP)
		fprintf(f, "usage: tlbsim sweep WORKLOAD --grid KEY=V1,V2,... [--grid ...] [--policy K=V]... "
			   "[-o FILE.csv] [options]\n\n"
			   "Simulate WORKLOAD at every point of the cross product of the --grid options,\n"
			   "once per --policy, and write one CSV row per point and policy: the\n"
			   "configuration, then every metric (simulated time). Rows are sorted by the\n"
			   "configuration columns, so the file is the same whatever -j, --shard or resume\n"
			   "produced it (docs/output.md).\n");
	else if (cmd_bit == C_NATIVE)
		fprintf(f, "usage: tlbsim native WORKLOAD [options]\n\n"
			   "Run WORKLOAD's shape as real threads (or processes, -w mode=processes) on this\n"
			   "host's kernel and print real/user/sys time, ops/s and flush IPIs per op (host\n"
			   "time, not simulated; not deterministic). Workloads: mmap8, page_fault3.\n"
			   "See docs/native.md.\n");
	else
		fprintf(f, "usage: tlbsim %s WORKLOAD [options]\n\n"
			   "Simulate WORKLOAD and print its metrics (simulated time, in human units;\n"
			   "the first line gives the host seconds the command took). On a terminal a\n"
			   "progress bar runs on stderr.\n", cmd);
	if (cmd_bit != C_NATIVE)
		fprintf(f, "\nWORKLOAD is a built-in name (tlbsim list workloads) or a scenario file: a\n"
			   "path ending in .tlbs or containing '/' (docs/scenarios.md).\n");
	fprintf(f, "\noptions:\n");
	for (size_t i = 0; i < NOPTS; i++) {
		const struct opt_def *d = &opts[i];
		if (!(d->cmds & cmd_bit))
			continue;
		char head[64];
		if (d->name && d->shortname)
			snprintf(head, sizeof(head), "-%c, --%s%s%s", d->shortname, d->name,
				 d->arg ? " " : "", d->arg ? d->arg : "");
		else if (d->name)
			snprintf(head, sizeof(head), "--%s%s%s", d->name, d->arg ? " " : "",
				 d->arg ? d->arg : "");
		else
			snprintf(head, sizeof(head), "-%c %s", d->shortname, d->arg ? d->arg : "");
		fprintf(f, "  %-22s %s\n", head, d->help);
	}
	if (cmd_bit == C_SWEEP) {
		fprintf(f, "\nexit status: 0 ok (also when --time-limit stopped it: the rows complete so far "
			   "are written), 2 bad\ninput, 3 internal error or host memory exhausted, 130/143 "
			   "stopped by SIGINT/SIGTERM\n(the rows complete so far are written)\n");
		return;
	}
	if (cmd_bit == C_SENS) {
		fprintf(f, "\nexit status: 0 ok (also when --time-limit stopped it: the parameters "
			   "measured are ranked),\n2 bad input (also a metric 0 under the first "
			   "--policy: no ratio), 3 internal error or host\nmemory exhausted, 130/143 "
			   "stopped by SIGINT/SIGTERM (what was measured is ranked)\n");
		return;
	}
	if (cmd_bit == C_NATIVE) {
		fprintf(f, "\nexit status: 0 ok, 2 bad input or a workload without a native shape, 3 a "
			   "host failure\n");
		return;
	}
	fprintf(f, "\nexit status: 0 ok, 1 violation found%s, 2 bad input, 3 internal error or host\n"
		   "memory exhausted, 130/143 stopped by SIGINT/SIGTERM (what was measured is printed)\n",
		cmd_bit == C_CHECK ? "" : " (with --fail-on-violation)");
}

static void build_cmdline(struct cli_opts *o, int argc, char **argv)
{
	size_t need = strlen("tlbsim") + 1;
	for (int i = 0; i < argc; i++)
		need += strlen(argv[i]) + 1;
	char *buf = o->cmdline;
	if (need > sizeof(o->cmdline)) {
		o->cmdline_heap = malloc(need);
		buf = o->cmdline_heap;
		if (!buf) {
			snprintf(o->cmdline, sizeof(o->cmdline), "tlbsim %s ...", argv[0]);
			return;
		}
	}
	size_t n = 0;
	memcpy(buf, "tlbsim", 6);
	n = 6;
	for (int i = 0; i < argc; i++) {
		buf[n++] = ' ';
		size_t l = strlen(argv[i]);
		memcpy(buf + n, argv[i], l);
		n += l;
	}
	buf[n] = 0;
}

const char *cli_cmdline(const struct cli_opts *o)
{
	return o->cmdline_heap ? o->cmdline_heap : o->cmdline;
}

void cli_opts_free(struct cli_opts *o)
{
	free(o->cmdline_heap);
	o->cmdline_heap = NULL;
	free(o->profile_file);
	o->profile_file = NULL;
	scenario_free(o->scenario);
	o->scenario = NULL;
	free(o->policy_args);
	o->policy_args = NULL;
	o->npolicy_args = o->policy_args_cap = 0;
}

char *cli_policy_label(const struct cli_opts *o)
{
	size_t len = 1;
	for (int i = 0; i < o->npolicy_args; i++)
		len += strlen(o->policy_args[i]) + 1;
	if (!o->npolicy_args)
		len += strlen("kernel=") + (o->cfg.kernel ? strlen(o->cfg.kernel) : strlen("default"));
	char *label = malloc(len), *p = label;
	if (!label)
		return NULL;
	*p = 0;
	for (int i = 0; i < o->npolicy_args; i++)
		p += sprintf(p, "%s%s", i ? "," : "", o->policy_args[i]);
	if (!o->npolicy_args)
		sprintf(p, "%s%s", o->cfg.kernel ? "kernel=" : "default",
			o->cfg.kernel ? o->cfg.kernel : "");
	return label;
}

int cli_parse_resolve(int argc, char **argv, unsigned cmd_bit, struct cli_opts *o,
		      struct tlbsim_resolved *res)
{
	int rc = cli_parse(argc, argv, cmd_bit, o);
	if (rc) {
		cli_opts_free(o);
		return rc;
	}
	char err[TLBSIM_ERRLEN];
	if (tlbsim_resolve(&o->cfg, res, err, sizeof(err))) {
		cli_opts_free(o);
		return cli_error("%s", err);
	}
	return 0;
}

int cli_parse(int argc, char **argv, unsigned cmd_bit, struct cli_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->cmd = argv[0];
	o->cmd_bit = cmd_bit;
	tlbsim_config_init(&o->cfg);
	o->strategy = EX_RANDOM;
	o->runs = 100000;
	o->depth = -1;
	o->minimise = true;
	o->want_kind = -1;
	o->max_memory = cli_default_max_memory();
	o->seeds = 0;	/* not given: see the end of cli_parse */
	o->perturb_pct = 20;
	o->svg_file = cmd_bit == C_SENS ? "sensitivity.svg" : NULL;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	o->jobs = ncpu < 1 ? 1 : ncpu > 1024 ? 1024 : (int)ncpu;
	build_cmdline(o, argc, argv);	/* before getopt permutes argv */
	bool memory_model_given = false;

	struct option longopts[NOPTS + 1];
	size_t nl = 0;
	char shortopts[16] = "+";
	/* only this command's options: an abbreviation is then ambiguous only
	 * among them (run's --see: --seed or --seeds; check's --see: --seed) */
	for (size_t i = 0; i < NOPTS; i++) {
		if (!(opts[i].cmds & cmd_bit))
			continue;
		if (opts[i].name) {
			bool dup = false;
			for (size_t j = 0; j < nl; j++)
				dup |= strcmp(longopts[j].name, opts[i].name) == 0;
			if (!dup)
				longopts[nl++] = (struct option){opts[i].name, opts[i].has_arg ? 1 : 0, NULL,
								 opts[i].id};
		}
		if (opts[i].shortname && !strchr(shortopts, opts[i].shortname)) {
			size_t l = strlen(shortopts);
			shortopts[l] = opts[i].shortname;
			shortopts[l + 1] = 0;
			if (opts[i].has_arg)
				strcat(shortopts, ":");
		}
	}
	longopts[nl] = (struct option){NULL, 0, NULL, 0};
	/* getopt's "+" stops at the first operand; options may follow the
	 * workload, so parse in rounds around operands */
	const char *workload = NULL;
	int reserve_w = cmd_bit == C_CHECK ? 4 : 0, reserve_d = cmd_bit == C_CHECK ? 1 : 0;
	optind = 1;
	opterr = 0;
	for (;;) {
		if (optind < argc && strcmp(argv[optind], "--") == 0) {
			/* "--" ends the options: what follows is the workload. (Left
			 * to getopt, it makes getopt back up over the workload at the
			 * end of the scan and hand it over a second time.) */
			for (optind++; optind < argc; optind++) {
				if (workload)
					return cli_error("unexpected argument '%s'", argv[optind]);
				workload = argv[optind];
			}
			break;
		}
		int longindex = -1;
		int c = getopt_long(argc, argv, shortopts, longopts, &longindex);
		if (c == -1) {
			if (optind >= argc)
				break;
			if (workload)
				return cli_error("unexpected argument '%s'", argv[optind]);
			workload = argv[optind++];
			continue;
		}
		if (c == '?' || c == ':') {
			const char *what = argv[optind - 1];
			if (strncmp(what, "--", 2) == 0) {
				/* another command's option: say so */
				size_t l = strcspn(what + 2, "=");
				for (size_t i = 0; i < NOPTS; i++)
					if (opts[i].name && strlen(opts[i].name) == l &&
					    strncmp(opts[i].name, what + 2, l) == 0 &&
					    !find_opt(opts[i].id, cmd_bit))
						return cli_error("%s: option --%s does not apply here",
								 o->cmd, opts[i].name);
				/* this command's option spelled in full: its value is
				 * missing (it was called ambiguous: --trace is also a
				 * prefix of --trace-window) */
				for (size_t i = 0; i < NOPTS; i++)
					if (opts[i].name && (opts[i].cmds & cmd_bit) &&
					    strlen(opts[i].name) == l &&
					    strncmp(opts[i].name, what + 2, l) == 0 && opts[i].has_arg)
						return cli_error("%s: option --%s needs a value (%s)", o->cmd,
								 opts[i].name,
								 opts[i].arg ? opts[i].arg : "VALUE");
				/* an abbreviation of several of this command's options */
				const char *m1 = NULL, *m2 = NULL;
				for (size_t i = 0; i < NOPTS; i++)
					if (opts[i].name && (opts[i].cmds & cmd_bit) && l &&
					    strncmp(opts[i].name, what + 2, l) == 0 &&
					    (!m1 || strcmp(m1, opts[i].name))) {
						if (!m1)
							m1 = opts[i].name;
						else if (!m2)
							m2 = opts[i].name;
					}
				if (m2)
					return cli_error("%s: option '%.*s' is ambiguous (--%s, --%s, ...)",
							 o->cmd, (int)(l + 2), what, m1, m2);
			}
			if (optopt && optopt < 256)
				return cli_error("%s: option '-%c' is unknown or needs a value", o->cmd,
						 optopt);
			return cli_error("%s: option '%s' is unknown or needs a value", o->cmd, what);
		}
		const struct opt_def *d = find_opt(c, cmd_bit);
		if (!d) {
			const struct opt_def *any = find_opt(c, C_ALL);
			return cli_error("%s: option --%s does not apply here", o->cmd,
					 any && any->name ? any->name : "?");
		}
		uint64_t v;
		switch (c) {
		case O_HELP:
			print_help(stdout, cmd_bit, o->cmd);
			return -1;
		case O_PROFILE:
			o->cfg.profile = optarg;
			break;
		case O_CPUS:
			if (cli_parse_uint("--cpus", optarg, 1, 1024, &v))
				return EXIT_USAGE;
			o->cfg.cpus = (int)v;
			o->cpus_given = true;
			break;
		case O_THREADS:
			if (cli_parse_uint(longindex >= 0 && strcmp(longopts[longindex].name, "tasks") == 0
						   ? "--tasks" : "--threads", optarg, 1, 4096, &v))
				return EXIT_USAGE;
			o->cfg.threads = (int)v;
			o->threads_given = true;
			break;
		case O_ITERS:
			if (cli_parse_uint("--iters", optarg, 1, 1000000000, &v))
				return EXIT_USAGE;
			o->cfg.iters = (int64_t)v;
			o->iters_given = true;
			break;
		case O_DURATION:
			if (parse_seconds_ns(optarg, &v) || v < 1000 || v > 3600ull * 1000000000ull)
				return cli_error("--duration %s: want simulated seconds from 0.000001 to "
						 "3600 (e.g. 5 or 0.25)", optarg);
			o->cfg.duration_ns = v;
			break;
		case O_METRIC:
			o->metric = optarg;
			break;
		case O_PERTURB:
			if (cli_parse_uint("--perturb", optarg, 1, 90, &v))
				return EXIT_USAGE;
			o->perturb_pct = (int)v;
			break;
		case O_SVG:
			if (!*optarg)
				return cli_error("--svg: want a file name");
			o->svg_file = optarg;
			o->svg_given = true;
			break;
		case O_CSV:
			o->csv = true;
			break;
		case O_OUTPUT:
			if (!*optarg)
				return cli_error("-o: want a file name");
			o->output = optarg;
			break;
		case O_GRID:
			if (o->ngrid >= MAX_GRID)
				return cli_error("too many --grid options (at most %d)", MAX_GRID);
			o->grid[o->ngrid++] = optarg;
			break;
		case O_SHARD: {
			unsigned long k, n;
			int used = 0;
			if (sscanf(optarg, "%lu/%lu%n", &k, &n, &used) != 2 || optarg[used] ||
			    optarg[0] < '0' || optarg[0] > '9' || !strchr(optarg, '/') ||
			    strchr(optarg, '/')[1] < '0' || strchr(optarg, '/')[1] > '9' || n < 1 ||
			    n > 1000000 || k < 1 || k > n)
				return cli_error("--shard %s: want K/N with 1 <= K <= N (e.g. 2/8)",
						 optarg);
			o->shard_k = (int)k;
			o->shard_n = (int)n;
			break;
		}
		case O_KERNEL: {
			const struct tlbsim_kernel_preset *kp = tlbsim_kernel_find(optarg);
			if (!kp)
				return cli_error("--kernel %s: no such preset (tlbsim list kernels)",
						 optarg);
			/* the preset's own spelling: v5.1 and 5.1 print alike */
			o->cfg.kernel = kp->version;
			break;
		}
		case O_SEEDS:
			if (cli_parse_uint("--seeds", optarg, 1, 1000, &v))
				return EXIT_USAGE;
			o->seeds = (int)v;
			break;
		case O_JOBS:
			if (cli_parse_uint("--jobs", optarg, 1, 1024, &v))
				return EXIT_USAGE;
			o->jobs = (int)v;
			break;
		case O_SEED:
			if (cli_parse_uint("--seed", optarg, 0, INT64_MAX, &v))
				return EXIT_USAGE;
			o->cfg.seed = v;
			o->seed_given = true;
			break;
		case O_JSON:
			o->json = true;
			break;
		case O_W:
			if (add_wparam(&o->cfg, optarg, reserve_w))
				return EXIT_USAGE;
			break;
		case O_D:
			if (add_override(&o->cfg, optarg, reserve_d))
				return EXIT_USAGE;
			break;
		case O_POLICY:
			if (o->npolicy_args == o->policy_args_cap) {
				int cap = o->policy_args_cap ? 2 * o->policy_args_cap : MAX_COLUMNS;
				const char **a = realloc(o->policy_args, (size_t)cap * sizeof(*a));
				if (!a)
					return cli_error_code(EXIT_INTERNAL, "out of memory");
				o->policy_args = a;
				o->policy_args_cap = cap;
			}
			o->policy_args[o->npolicy_args++] = optarg;
			if (cmd_bit == C_COMPARE || cmd_bit == C_SENS || cmd_bit == C_SWEEP) {
				if (o->npolicies >= MAX_COLUMNS)
					return cli_error("too many --policy options (at most %d)",
							 MAX_COLUMNS);
				struct tlbsim_policy *pol = &o->policies[o->npolicies];
				tlbsim_policy_default(pol);
				if (set_policies(pol, optarg))
					return EXIT_USAGE;
				o->npolicies++;
			} else if (set_policies(&o->cfg.policy, optarg)) {
				return EXIT_USAGE;
			}
			break;
		case O_TIME_LIMIT:
			if (cli_parse_time_limit(optarg, &o->time_limit_ms))
				return EXIT_USAGE;
			o->time_limit_given = true;
			break;
		case O_MAX_MEMORY:
			if (parse_size(optarg, &v) || v < (64ull << 20) || v > (1ull << 50))
				return cli_error("--max-memory %s: want a size from 64M to 1024T (suffixes K, "
						 "M, G, T)", optarg);
			o->max_memory = v;
			break;
		case O_NATIVE:
			o->native = true;
			break;
		case O_FAIL_ON_VIOLATION:
			o->fail_on_violation = true;
			break;
		case O_STRATEGY:
			if (strcmp(optarg, "random") == 0)
				o->strategy = EX_RANDOM;
			else if (strcmp(optarg, "pct") == 0)
				o->strategy = EX_PCT;
			else if (strcmp(optarg, "dfs") == 0)
				o->strategy = EX_DFS;
			else
				return cli_error("--strategy %s: want random, pct or dfs", optarg);
			break;
		case O_RUNS:
			if (cli_parse_uint("--runs", optarg, 1, 1000000000, &v))
				return EXIT_USAGE;
			o->runs = v;
			break;
		case O_DEPTH:
			if (cli_parse_uint("--depth", optarg, 1, 16, &v))
				return EXIT_USAGE;
			o->depth = (int)v;
			break;
		case O_MAX_STEPS:
			if (cli_parse_uint("--max-steps", optarg, 100, 1000000000, &v))
				return EXIT_USAGE;
			o->max_steps = v;
			break;
		case O_REPLAY:
			o->replay = optarg;
			break;
		case O_TRACE:
			if (!*optarg)
				return cli_error(cmd_bit == C_CHECK  ? "--trace: want a file name (or - "
									       "for stdout)"
						 : cmd_bit == C_RUN ? "--trace: want a file name "
								      "(/dev/stdout works)"
								    : "--trace: want a file name");
			o->trace_file = optarg;
			break;
		case O_TRACE_WINDOW:
			if (parse_trace_window(optarg, &o->trace_from, &o->trace_to))
				return EXIT_USAGE;
			o->trace_window_given = true;
			break;
		case O_TRACE_FORMAT:
			if (strcmp(optarg, "chrome") == 0)
				o->trace_ftrace = false;
			else if (strcmp(optarg, "ftrace") == 0)
				o->trace_ftrace = true;
			else
				return cli_error("--trace-format %s: want chrome or ftrace", optarg);
			o->trace_format_given = true;
			break;
		case O_NO_MINIMISE:
			o->minimise = false;
			break;
		case O_INVARIANT:
			o->want_kind = inv_lookup(optarg);
			if (o->want_kind < 0) {
				char names[256];
				inv_names_list(names, sizeof(names));
				return cli_error("--invariant %s: want %s", optarg, names);
			}
			break;
		case O_MEMORY_MODEL:
			if (strcmp(optarg, "sc") == 0)
				o->cfg.memory_model = TLBSIM_MM_SC;
			else if (strcmp(optarg, "tso") == 0)
				o->cfg.memory_model = TLBSIM_MM_TSO;
			else
				return cli_error("--memory-model %s: want sc or tso", optarg);
			memory_model_given = true;
			break;
		}
	}
	if (!workload)
		return cli_error("%s: missing WORKLOAD (see tlbsim list workloads)", o->cmd);
	o->cfg.workload = workload;
	/* a scenario file (docs/scenarios.md): compiled once, here; each error
	 * was printed as FILE:LINE:COL */
	if (scenario_is_path(workload) && !tlbsim_workload_find(workload)) {
		int nerr;
		o->scenario = scenario_load(workload, stderr, &nerr);
		if (!o->scenario)
			return EXIT_USAGE;
		o->cfg.workload_def = scenario_desc(o->scenario);
		/* the file's memory_model: check's default */
		if (cmd_bit == C_CHECK && !memory_model_given)
			o->cfg.memory_model = scenario_memory_model(o->scenario);
	}
	/* --profile: a built-in name, or else a profile file */
	if (o->cfg.profile && !tlbsim_profile_find(o->cfg.profile)) {
		char err[TLBSIM_ERRLEN];
		o->profile_file = malloc(sizeof(*o->profile_file));
		if (!o->profile_file)
			return cli_error_code(EXIT_INTERNAL, "out of memory");
		if (access(o->cfg.profile, F_OK) != 0)
			return cli_error("unknown profile '%s' (see tlbsim list profiles), and no such "
					 "profile file", o->cfg.profile);
		if (tlbsim_profile_load(o->cfg.profile, o->profile_file, err, sizeof(err)))
			return cli_error("--profile %s: %s", o->cfg.profile, err);
		o->cfg.profile_def = &o->profile_file->prof;
	}
	o->policy_given = o->cfg.policy.given;
	/* a kernel preset fills the knobs no --policy set */
	if (o->cfg.kernel) {
		const struct tlbsim_kernel_preset *kp = tlbsim_kernel_find(o->cfg.kernel);
		tlbsim_policy_apply_kernel(&o->cfg.policy, kp);
		for (int i = 0; i < o->npolicies; i++)
			tlbsim_policy_apply_kernel(&o->policies[i], kp);
	}
	/* what will run: the workload's own kernel defaults under the user's knobs */
	tlbsim_policy_apply_workload(&o->cfg.policy, workload);
	for (int i = 0; i < o->npolicies; i++)
		tlbsim_policy_apply_workload(&o->policies[i], workload);
	if (o->cfg.workload_def) {
		tlbsim_policy_apply_desc(&o->cfg.policy, o->cfg.workload_def);
		for (int i = 0; i < o->npolicies; i++)
			tlbsim_policy_apply_desc(&o->policies[i], o->cfg.workload_def);
	}
	if (cmd_bit == C_COMPARE && o->npolicies < 2 && !o->native)
		return cli_error("compare: give at least two --policy KNOB=VALUE options");
	if (o->csv && o->json)
		return cli_error("%s: --csv and --json exclude each other", o->cmd);
	if (o->trace_file && (cmd_bit == C_COMPARE || cmd_bit == C_SWEEP))
		return cli_error("%s: --trace is not available: a timeline is of one run; trace a "
				 "column with tlbsim run %s --policy K=V --trace FILE", o->cmd, workload);
	if (cmd_bit == C_RUN && !o->trace_file && (o->trace_window_given || o->trace_format_given))
		return cli_error("run: --trace-window and --trace-format need --trace FILE");
	if (cmd_bit == C_RUN && o->trace_file && !o->trace_window_given)
		o->trace_to = CLI_TRACE_WINDOW_NS;
	if (o->svg_given && cmd_bit == C_COMPARE && o->native)
		return cli_error("compare: --svg does not apply with --native");
	/* compare's default is five seeds, so its ratio comes with an interval
	 * (the model's jitter makes single runs move; docs/output.md) */
	bool seeds_default = !o->seeds;
	if (!o->seeds)
		o->seeds = cmd_bit == C_COMPARE ? CLI_COMPARE_SEEDS : 1;
	if (o->seeds > 1 && o->cfg.seed > (uint64_t)INT64_MAX - (uint64_t)(o->seeds - 1) &&
	    seeds_default)
		return cli_error("--seed %" PRIu64 ": compare's default %d seeds run past %lld "
				 "(give --seeds 1, or a smaller --seed)",
				 o->cfg.seed, o->seeds, (long long)INT64_MAX);
	if (o->seeds > 1 && o->cfg.seed > (uint64_t)INT64_MAX - (uint64_t)(o->seeds - 1))
		return cli_error("--seed %" PRIu64 " --seeds %d: the last seed is past %lld",
				 o->cfg.seed, o->seeds, (long long)INT64_MAX);
	if (cmd_bit == C_SENS && o->npolicies > 2)
		return cli_error("sensitivity: at most two --policy options (the metric, or its "
				 "ratio)");
	if (cmd_bit == C_SENS && o->npolicies == 2) {
		bool same = true;	/* every knob, after the kernel and workload defaults */
		for (int k = 0; same && k < tlbsim_knob_count(); k++)
			same = strcmp(tlbsim_policy_value_name(&o->policies[0], k),
				      tlbsim_policy_value_name(&o->policies[1], k)) == 0;
		if (same)
			return cli_error("sensitivity: the two --policy options give the same "
					 "policy (its ratio is 1 whatever the parameters)");
	}
	return 0;
}

int cli_config_set(struct tlbsim_config *cfg, const char *key, const char *value)
{
	char name[160];
	uint64_t v;
	snprintf(name, sizeof(name), "--grid %s", key);
	if (strcmp(key, "threads") == 0 || strcmp(key, "tasks") == 0) {
		if (cli_parse_uint(name, value, 1, 4096, &v))
			return EXIT_USAGE;
		cfg->threads = (int)v;
	} else if (strcmp(key, "cpus") == 0) {
		if (cli_parse_uint(name, value, 1, 1024, &v))
			return EXIT_USAGE;
		cfg->cpus = (int)v;
	} else if (strcmp(key, "iters") == 0) {
		if (cli_parse_uint(name, value, 1, 1000000000, &v))
			return EXIT_USAGE;
		cfg->iters = (int64_t)v;
	} else if (strcmp(key, "profile") == 0) {
		if (!tlbsim_profile_find(value))
			return cli_error("--grid profile=%s: unknown profile (a grid takes built-in "
					 "profiles: tlbsim list profiles)", value);
		cfg->profile = value;
		cfg->profile_def = NULL;
	} else if (strncmp(key, "w:", 2) == 0 && key[2]) {
		char kv[256];
		snprintf(kv, sizeof(kv), "%s=%s", key + 2, value);
		if (add_wparam(cfg, kv, 0))
			return EXIT_USAGE;
	} else if (strncmp(key, "D:", 2) == 0 && key[2]) {
		char kv[256];
		if (param_lookup(key + 2) < 0)
			return cli_error("--grid %s: unknown cost parameter '%s' (tlbsim list params)",
					 key, key + 2);
		if (cli_parse_uint(name, value, 0, INT64_MAX, &v))
			return EXIT_USAGE;
		snprintf(kv, sizeof(kv), "%s=%s", key + 2, value);
		if (add_override(cfg, kv, 0))
			return EXIT_USAGE;
	} else {
		return cli_error("--grid %s: unknown key (want threads, cpus, iters, profile, "
				 "w:NAME or D:NAME)", key);
	}
	return 0;
}

/* ---- the replay command ---- */

struct sbuf {
	char *p;
	size_t n, cap;
	bool oom;
};

static void sb_add(struct sbuf *b, const char *s, size_t l)
{
	if (b->oom)
		return;
	if (b->n + l + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap < b->n + l + 1)
			cap *= 2;
		char *np = realloc(b->p, cap);
		if (!np) {
			b->oom = true;
			return;
		}
		b->p = np;
		b->cap = cap;
	}
	memcpy(b->p + b->n, s, l);
	b->n += l;
	b->p[b->n] = 0;
}

/* one shell word: as is if it is made of safe characters, else single-quoted */
static void sb_word(struct sbuf *b, const char *w)
{
	sb_add(b, " ", 1);
	bool safe = *w != 0;
	for (const char *p = w; *p; p++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
			    "-_=.,:/+@%", *p))
			safe = false;
	if (safe) {
		sb_add(b, w, strlen(w));
		return;
	}
	sb_add(b, "'", 1);
	for (const char *p = w; *p; p++) {
		if (*p == '\'')
			sb_add(b, "'\\''", 4);
		else
			sb_add(b, p, 1);
	}
	sb_add(b, "'", 1);
}

static void sb_opt(struct sbuf *b, const char *opt, const char *val)
{
	sb_word(b, opt);
	sb_word(b, val);
}

char *cli_replay_command(const struct cli_opts *o, const char *token)
{
	struct sbuf b = {0};
	char num[32];
	sb_add(&b, "tlbsim check", 12);
	sb_word(&b, o->cfg.workload);
	if (o->cfg.profile)
		sb_opt(&b, "--profile", o->cfg.profile);
	if (o->cpus_given) {
		snprintf(num, sizeof(num), "%d", o->cfg.cpus);
		sb_opt(&b, "--cpus", num);
	}
	if (o->threads_given) {
		snprintf(num, sizeof(num), "%d", o->cfg.threads);
		sb_opt(&b, "--threads", num);
	}
	if (o->iters_given) {
		snprintf(num, sizeof(num), "%" PRId64, o->cfg.iters);
		sb_opt(&b, "--iters", num);
	}
	/* the knobs --policy set that differ from what the replay would have
	 * without them: the defaults, then --kernel's, the workload's and the
	 * scenario file's, in cli_parse's order (a knob set back to the
	 * workload's default under --kernel is one the preset would change; the
	 * knobs the preset sets are not repeated) */
	struct tlbsim_policy def;
	tlbsim_policy_default(&def);
	if (o->cfg.kernel)
		tlbsim_policy_apply_kernel(&def, tlbsim_kernel_find(o->cfg.kernel));
	tlbsim_policy_apply_workload(&def, o->cfg.workload);
	if (o->cfg.workload_def)
		tlbsim_policy_apply_desc(&def, o->cfg.workload_def);
	for (int k = 0; k < tlbsim_knob_count(); k++) {
		const char *v = tlbsim_policy_value_name(&o->cfg.policy, k);
		if (!(o->policy_given & (1ull << k)) ||
		    strcmp(v, tlbsim_policy_value_name(&def, k)) == 0)
			continue;
		char kv[128];
		snprintf(kv, sizeof(kv), "%s=%s", tlbsim_knob_get(k)->name, v);
		sb_opt(&b, "--policy", kv);
	}
	for (int i = 0; i < o->cfg.nwparams; i++) {
		char kv[160];
		snprintf(kv, sizeof(kv), "%s=%s", o->cfg.wparams[i].name, o->cfg.wparams[i].value);
		sb_opt(&b, "-w", kv);
	}
	for (int i = 0; i < o->cfg.noverrides; i++) {
		char kv[128];
		snprintf(kv, sizeof(kv), "%s=%" PRId64, tlbsim_param_desc[o->cfg.overrides[i].param].name,
			 o->cfg.overrides[i].value);
		sb_opt(&b, "-D", kv);
	}
	if (o->seed_given) {
		snprintf(num, sizeof(num), "%" PRIu64, o->cfg.seed);
		sb_opt(&b, "--seed", num);
	}
	if (o->cfg.kernel)
		sb_opt(&b, "--kernel", o->cfg.kernel);
	if (o->want_kind >= 0)
		sb_opt(&b, "--invariant", inv_name(o->want_kind));
	/* tso always (as it always was); sc when it overrides a file's tso */
	if (o->cfg.memory_model == TLBSIM_MM_TSO)
		sb_opt(&b, "--memory-model", "tso");
	else if (o->scenario && scenario_memory_model(o->scenario) == TLBSIM_MM_TSO)
		sb_opt(&b, "--memory-model", "sc");
	if (o->max_steps) {
		snprintf(num, sizeof(num), "%" PRIu64, o->max_steps);
		sb_opt(&b, "--max-steps", num);
	}
	if (token)
		sb_opt(&b, "--replay", token);
	if (b.oom) {
		free(b.p);
		return NULL;
	}
	return b.p;
}
