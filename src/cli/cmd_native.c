/*
 * cmd_native.c - the host side of the command line: `tlbsim calibrate`
 * (microbenchmarks of this host written as a profile file), `tlbsim native`
 * (a workload's shape run on the host kernel) and `tlbsim compare --native`
 * (the model beside the machine). The measurements live in src/native;
 * methods and limits: docs/native.md.
 *
 * native's JSON has the keys of `run --json` (docs/output.md) where they
 * mean the same thing, "mode": "native", and a "native" object with what
 * only a host run has.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/csv.h"
#include "native/native.h"
#include "out/out.h"
#include "workload/workload.h"

/* ---- native: options to a host run ---- */

struct native_job {
	struct native_run_cfg cfg;
	struct tlbsim_resolved res;	/* workload name and parameters, defaults filled in */
	struct native_host host;
};

static int native_prepare(const struct cli_opts *o, struct native_job *j)
{
	memset(j, 0, sizeof(*j));
	char err[TLBSIM_ERRLEN];
	if (o->cfg.workload_def)
		return cli_error("%s: a scenario file runs only in the model; the host runs the "
				 "built-in mmap8 and page_fault3", o->cfg.workload);
	/* the model's resolution fills the workload's parameter defaults (and
	 * rejects unknown names); the profile plays no part in a host run */
	struct tlbsim_config cfg = o->cfg;
	if (o->cmd_bit == C_NATIVE)
		cfg.cpus = 0;	/* the host's CPUs, checked by native_run */
	if (tlbsim_resolve(&cfg, &j->res, err, sizeof(err)))
		return cli_error("%s", err);
	native_host_probe(&j->host);
	const char *wl = j->res.workload->name;
	struct native_run_cfg *c = &j->cfg;
	c->interrupted = cli_pending_signal;	/* SIGINT, SIGTERM stop the tasks */
	if (strcmp(wl, "mmap8") == 0)
		c->wl = NATIVE_MMAP8;
	else if (strcmp(wl, "page_fault3") == 0)
		c->wl = NATIVE_PAGE_FAULT3;
	else
		return cli_error("%s: workload %s has no native shape (native runs mmap8 and "
				 "page_fault3)", o->cmd, wl);
#if !defined(__x86_64__) && !defined(__aarch64__)
	return cli_error("%s: native runs on x86-64 and arm64 Linux hosts only", o->cmd);
#endif
	/* compare: --cpus is the model's, and the host run uses as many when given */
	c->cpus = o->cmd_bit == C_NATIVE || o->cpus_given ? o->cfg.cpus : 0;
	c->threads = j->res.threads;
	if (!o->threads_given && !j->res.workload->default_threads)
		c->threads = c->cpus ? c->cpus : j->host.ncpus;	/* one task per CPU */
	c->iters = j->res.iters;
	uint64_t ps = (uint64_t)j->host.page_size;
	const char *v = wparam(&j->res, "size");
	if (parse_size(v, &c->size) || c->size == 0 || c->size > (64ull << 30))
		return cli_error("workload parameter size=%s: want a size from 1 byte to 64G on the "
				 "host", v);
	if (c->wl == NATIVE_MMAP8) {
		v = wparam(&j->res, "map");
		if (strcmp(v, "shared") && strcmp(v, "private"))
			return cli_error("workload parameter map=%s: want shared or private", v);
		c->shared = strcmp(v, "shared") == 0;
		for (int i = 0; i < o->cfg.nwparams; i++)
			if (strcmp(o->cfg.wparams[i].name, "uws") == 0 && o->cmd_bit == C_NATIVE)
				return cli_error("workload parameter uws: a native run's working set "
						 "is the host program's own; leave uws out");
		v = wparam(&j->res, "touch");
		if (parse_u64(v, &c->touch) || c->touch > (c->size + ps - 1) / ps)
			return cli_error("workload parameter touch=%s: want 0..%llu (pages of the "
					 "mapping on this host)", v,
					 (unsigned long long)((c->size + ps - 1) / ps));
	} else {
		c->size = (c->size + ps - 1) & ~(ps - 1);
		v = wparam(&j->res, "mode");
		if (strcmp(v, "processes") && strcmp(v, "threads"))
			return cli_error("workload parameter mode=%s: want processes or threads", v);
		c->processes = strcmp(v, "processes") == 0;
		v = wparam(&j->res, "fs");
		if (strcmp(v, "ext4") && strcmp(v, "tmpfs"))
			return cli_error("workload parameter fs=%s: want ext4 or tmpfs", v);
		c->tmpfs = strcmp(v, "tmpfs") == 0;
	}
	return 0;
}

/* a host run stopped by a signal: say so on stderr; its exit status */
static int native_stopped_note(const struct native_run_result *r)
{
	fprintf(stderr, "tlbsim: note: native run stopped early (%s): its numbers cover the run "
		"until then\n", cli_signal_name(r->stopped));
	return 128 + r->stopped;
}

static int native_exec(const struct native_job *j, struct native_run_result *r)
{
	char err[TLBSIM_ERRLEN];
	bool usage;
	cli_block_signals();	/* SIGINT, SIGTERM: polled (cfg.interrupted) */
	if (native_run(&j->cfg, r, &usage, err, sizeof(err)))
		return cli_error_code(usage ? EXIT_USAGE : EXIT_INTERNAL, "native: %s", err);
	return 0;
}

/* the metrics a host run has, under the names of docs/output.md */
struct native_metrics {
	uint64_t wall_ns, user_ns, sys_ns, idle_ns, ops, ops_per_sec, ops_per_sec_task, window_ns,
		page_faults;
};

static void native_metrics_of(const struct native_job *j, const struct native_run_result *r,
			      struct native_metrics *m)
{
	m->wall_ns = r->real_ns;
	m->user_ns = r->user_ns;
	m->sys_ns = r->sys_ns;
	uint64_t all = r->real_ns * (uint64_t)r->cpus;
	m->idle_ns = all > r->user_ns + r->sys_ns ? all - r->user_ns - r->sys_ns : 0;
	m->ops = r->ops;
	m->window_ns = r->window_ns;
	m->ops_per_sec = r->window_ns ? (uint64_t)((unsigned __int128)r->window_ops * 1000000000u /
						   r->window_ns) : 0;
	m->ops_per_sec_task = m->ops_per_sec / (uint64_t)j->cfg.threads;
	m->page_faults = r->minflt + r->majflt;
}

static void json_num_or_null(FILE *f, bool have, double v)
{
	if (have)
		fprintf(f, "%.3f", v);
	else
		fprintf(f, "null");
}

static void native_json(FILE *f, const char *cmdline, const struct native_job *j,
			const struct native_run_result *r)
{
	struct native_metrics m;
	native_metrics_of(j, r, &m);
	const struct tlbsim_resolved *res = &j->res;
	out_json_head(f, cmdline, "native", res);
	fprintf(f, ",\"profile\":null,\"kernel\":null,\"arch\":\"%s\",\"page_size\":%d,"
		   "\"cpus\":%d,\"threads\":%d,\"iters\":%" PRId64 ",\"duration_ns\":0,\"seed\":null,"
		   "\"policy\":null,\"overrides\":{},\"first_violation\":null,\"partial\":%s%s%s,"
		   "\"metrics\":{",
		j->host.x86 ? "x86_64" : "arm64", j->host.page_size, r->cpus, j->cfg.threads,
		j->cfg.iters, r->stopped ? "\"" : "", r->stopped ? cli_signal_name(r->stopped) : "null",
		r->stopped ? "\"" : "");
	fprintf(f, "\"wall_ns\":%" PRIu64 ",\"user_ns\":%" PRIu64 ",\"sys_ns\":%" PRIu64
		   ",\"idle_ns\":%" PRIu64 ",\"ops\":%" PRIu64 ",\"ops_per_sec\":%" PRIu64
		   ",\"ops_per_sec_task\":%" PRIu64 ",\"window_ns\":%" PRIu64 ",\"page_faults\":%"
		   PRIu64 ",\"ipi_received\":", m.wall_ns, m.user_ns, m.sys_ns, m.idle_ns, m.ops,
		m.ops_per_sec, m.ops_per_sec_task, m.window_ns, m.page_faults);
	if (r->have_ipis)
		fprintf(f, "%" PRIu64, r->tlb_ipis);
	else
		fprintf(f, "null");
	fprintf(f, "},\"native\":{\"host_kernel\":");
	json_string(f, j->host.release);
	fprintf(f, ",\"host_model\":");
	json_string(f, j->host.model);
	fprintf(f, ",\"virtual\":%s,\"real_s\":%.6f,\"user_s\":%.6f,\"sys_s\":%.6f,"
		   "\"ipi_per_op\":", j->host.hypervisor ? "true" : "false", (double)r->real_ns / 1e9,
		(double)r->user_ns / 1e9, (double)r->sys_ns / 1e9);
	json_num_or_null(f, r->have_ipis && r->ops, r->ops ? (double)r->tlb_ipis / (double)r->ops
							   : 0);
	fprintf(f, ",\"ipi_source\":");
	json_string(f, r->have_ipis ? "TLB shootdowns line of /proc/interrupts, summed over CPUs, "
				      "system-wide" : r->ipi_note);
	fprintf(f, ",\"ipi_note\":");
	if (r->have_ipis && !r->tlb_ipis && r->ops)
		json_string(f, "0 can also mean this kernel flushes remote TLBs without IPIs (a "
			       "paravirtual hypercall, AMD INVLPGB): tlbsim calibrate says which");
	else
		fprintf(f, "null");
	fprintf(f, ",\"minor_faults\":%" PRIu64 ",\"major_faults\":%" PRIu64
		   ",\"voluntary_switches\":%" PRIu64 ",\"involuntary_switches\":%" PRIu64
		   ",\"window_ops\":%" PRIu64 ",\"fs\":", r->minflt, r->majflt, r->nvcsw, r->nivcsw,
		r->window_ops);
	if (j->cfg.wl == NATIVE_PAGE_FAULT3)
		json_string(f, r->fs_note);
	else
		fprintf(f, "null");
	fprintf(f, "}}");
}

/* ---- tables ---- */

/* one cell: a time, a count (the units of the run and compare tables), a
 * ratio with 3 decimals, a percentage, or "-" */
enum cell_kind { CK_TIME, CK_COUNT, CK_RATIO, CK_PCT };

struct cell {
	bool have;
	double v;
};

static const char *cell_text(struct cell c, enum cell_kind k, char *buf, size_t len)
{
	if (!c.have)
		snprintf(buf, len, "-");
	else if (k == CK_TIME)
		out_human_time(c.v, buf, len);
	else if (k == CK_RATIO)
		snprintf(buf, len, "%.3f", c.v);
	else if (k == CK_PCT)
		snprintf(buf, len, "%.1f %%", c.v);
	else
		out_human_count(c.v, buf, len);
	return buf;
}

/* idle as a percentage of the CPU time (wall x CPUs), as the run table shows it */
static double idle_pct(double idle_ns, double wall_ns, int cpus)
{
	return wall_ns > 0 && cpus > 0 ? 100.0 * idle_ns / (wall_ns * cpus) : 0;
}

struct trow {
	const char *name;
	enum cell_kind kind;
};

static const struct trow trows[] = {
	{"wall (real)", CK_TIME}, {"user", CK_TIME}, {"sys", CK_TIME}, {"idle", CK_PCT},
	{"ops", CK_COUNT}, {"ops_per_sec", CK_COUNT}, {"ops_per_sec_task", CK_COUNT},
	{"window", CK_TIME}, {"page_faults", CK_COUNT}, {"ipi_received", CK_COUNT},
	{"ipi_per_op", CK_RATIO}, {"context_switches", CK_COUNT},
};
#define NTROWS (sizeof(trows) / sizeof(trows[0]))

static void native_cells(const struct native_job *j, const struct native_run_result *r,
			 struct cell *c)
{
	struct native_metrics m;
	native_metrics_of(j, r, &m);
	double v[NTROWS] = {(double)m.wall_ns, (double)m.user_ns, (double)m.sys_ns,
			    idle_pct((double)m.idle_ns, (double)m.wall_ns, r->cpus), (double)m.ops, (double)m.ops_per_sec,
			    (double)m.ops_per_sec_task, (double)m.window_ns, (double)m.page_faults,
			    (double)r->tlb_ipis, r->ops ? (double)r->tlb_ipis / (double)r->ops : 0,
			    (double)(r->nvcsw + r->nivcsw)};
	for (size_t k = 0; k < NTROWS; k++)
		c[k] = (struct cell){true, v[k]};
	c[9].have = c[10].have = r->have_ipis;
	c[10].have = c[10].have && r->ops;
}

static void model_cells(const struct run_result *run, struct cell *c)
{
	const struct tlbsim_metrics *m = &run->m;
	bool x86 = run->res.profile->arch == ARCH_X86_64;
	double v[NTROWS] = {(double)m->wall_ns, (double)m->user_ns, (double)m->sys_ns,
			    idle_pct((double)m->idle_ns, (double)m->wall_ns, run->res.cpus),
			    (double)m->ops, (double)m->ops_per_sec,
			    (double)m->ops_per_sec_task, (double)m->window_ns,
			    (double)m->page_faults, (double)m->ipi_received,
			    m->ops ? (double)m->ipi_received / (double)m->ops : 0,
			    (double)m->context_switches};
	for (size_t k = 0; k < NTROWS; k++)
		c[k] = (struct cell){true, v[k]};
	c[9].have = c[10].have = x86;	/* arm64 flushes by broadcast TLBI, no IPIs */
	c[10].have = c[10].have && m->ops;
}

static void native_header(FILE *f, const struct native_job *j, const struct native_run_result *r)
{
	const struct tlbsim_resolved *res = &j->res;
	fprintf(f, "native %s (", res->workload->name);
	for (int i = 0; i < res->nwparams; i++)
		fprintf(f, "%s%s=%s", i ? " " : "", res->wparams[i].name, res->wparams[i].value);
	fprintf(f, ") on this host: %s, %d CPUs%s, Linux %s; %d %s x %" PRId64 " %s\n",
		j->host.model, r->cpus, j->host.hypervisor ? " (virtual machine)" : "",
		j->host.release, j->cfg.threads,
		j->cfg.wl == NATIVE_PAGE_FAULT3 ? (j->cfg.processes ? "processes" : "threads")
						: "threads",
		j->cfg.iters, j->cfg.wl == NATIVE_PAGE_FAULT3 ? "measured rounds" : "iters");
	if (r->stopped)
		fprintf(f, "PARTIAL: the native run stopped early (%s); its numbers cover the run "
			"until then\n", cli_signal_name(r->stopped));
}

static void native_footer(FILE *f, const struct native_job *j, const struct native_run_result *r)
{
	if (r->have_ipis)
		fprintf(f, "ipi_received: the TLB shootdowns line of /proc/interrupts over the run, "
			   "every CPU and process (system-wide)%s\n", r->tlb_ipis || !r->ops ? "" :
			"; 0 can also mean this kernel flushes remote TLBs without IPIs (a "
			"paravirtual hypercall, AMD INVLPGB): tlbsim calibrate says which");
	else
		fprintf(f, "ipi_received: not available (%s)\n", r->ipi_note);
	fprintf(f, "native context_switches: getrusage voluntary + involuntary (%" PRIu64 " + %"
		PRIu64 ")\n", r->nvcsw, r->nivcsw);
	if (j->cfg.wl == NATIVE_PAGE_FAULT3)
		fprintf(f, "files on %s\n", r->fs_note);
}

static void print_table(FILE *f, const char *const *labels, struct cell (*cols)[NTROWS], int n,
			bool ratio)
{
	int width = 14;
	char buf[64];
	for (int i = 0; i < n; i++) {
		int l = (int)strlen(labels[i]);
		if (l > width)
			width = l;
		for (size_t k = 0; k < NTROWS; k++) {
			l = (int)strlen(cell_text(cols[i][k], trows[k].kind, buf, sizeof(buf)));
			if (l > width)
				width = l;
		}
	}
	fprintf(f, "%-18s", "metric");
	for (int i = 0; i < n; i++)
		fprintf(f, " %*s", width, labels[i]);
	if (ratio)
		fprintf(f, " %9s", "ratio");
	fputc('\n', f);
	for (size_t k = 0; k < NTROWS; k++) {
		fprintf(f, "%-18s", trows[k].name);
		for (int i = 0; i < n; i++)
			fprintf(f, " %*s", width, cell_text(cols[i][k], trows[k].kind, buf, sizeof(buf)));
		if (ratio) {
			struct cell a = cols[0][k], b = cols[n - 1][k];
			if (!a.have || !b.have)
				fprintf(f, " %9s", "-");
			else if (a.v == 0)
				fprintf(f, " %9s", b.v ? "inf" : "-");
			else
				fprintf(f, " %9.2f", b.v / a.v);
		}
		fputc('\n', f);
	}
}

int cmd_native(int argc, char **argv)
{
	struct cli_opts o;
	int rc = cli_parse(argc, argv, C_NATIVE, &o);
	if (rc) {
		cli_opts_free(&o);
		return rc < 0 ? 0 : rc;
	}
	struct native_job j;
	struct native_run_result r;
	rc = native_prepare(&o, &j);
	if (!rc)
		rc = native_exec(&j, &r);
	if (rc) {
		cli_opts_free(&o);
		return rc;
	}
	if (o.json) {
		native_json(stdout, cli_cmdline(&o), &j, &r);
		fputc('\n', stdout);
	} else {
		native_header(stdout, &j, &r);
		struct cell cols[1][NTROWS];
		native_cells(&j, &r, cols[0]);
		const char *labels[1] = {"native"};
		print_table(stdout, labels, cols, 1, false);
		native_footer(stdout, &j, &r);
	}
	fflush(stdout);
	cli_opts_free(&o);
	return r.stopped ? native_stopped_note(&r) : 0;
}

int native_check(const struct cli_opts *o)
{
	struct native_job j;
	return native_prepare(o, &j);
}

/* compare --native: the model columns already ran */
int native_compare(const struct cli_opts *o, const struct run_result *runs, int n)
{
	struct native_job j;
	struct native_run_result r;
	int rc = native_prepare(o, &j);
	if (!rc)
		rc = native_exec(&j, &r);
	if (rc)
		return rc;
	if (o->json) {
		printf("{\"runs\":[");
		for (int i = 0; i < n; i++) {
			printf("%s\n", i ? "," : "");
			out_json(stdout, cli_cmdline(o), &runs[i], 1, false);
		}
		printf(",\n");
		native_json(stdout, cli_cmdline(o), &j, &r);
		printf("\n]}\n");
		fflush(stdout);
		return r.stopped ? native_stopped_note(&r) : 0;
	}
	if (n + 1 > MAX_COLUMNS)
		n = MAX_COLUMNS - 1;
	struct cell cols[MAX_COLUMNS][NTROWS];
	char lab[MAX_COLUMNS][96];
	const char *labels[MAX_COLUMNS];
	for (int i = 0; i < n; i++) {
		model_cells(&runs[i], cols[i]);
		if (o->npolicies > 1)
			snprintf(lab[i], sizeof(lab[i]), "model %d", i + 1);
		else
			snprintf(lab[i], sizeof(lab[i]), "model");
		labels[i] = lab[i];
	}
	native_cells(&j, &r, cols[n]);
	labels[n] = "native";
	const struct run_result *r0 = &runs[0];
	native_header(stdout, &j, &r);
	printf("model: profile %s (%s), %d CPUs, ", r0->res.profile->name,
	       r0->res.profile->arch == ARCH_X86_64 ? "x86-64" : "arm64", r0->res.cpus);
	if (r0->nseeds > 1)
		printf("mean over seeds %" PRIu64 "..%" PRIu64 "\n", r0->cfg.seed,
		       r0->cfg.seed + (uint64_t)r0->nseeds - 1);
	else
		printf("seed %" PRIu64 "\n", r0->cfg.seed);
	for (int i = 0; i < n; i++) {
		printf("model policy:");
		if (o->npolicies > 1)
			printf(" (%d)", i + 1);
		for (int k = 0; k < tlbsim_knob_count(); k++)
			printf(" %s=%s", tlbsim_knob_get(k)->name,
			       tlbsim_policy_value_name(&runs[i].cfg.policy, k));
		printf("\n");
	}
	print_table(stdout, labels, cols, n + 1, true);
	printf("ratio = native / %s; model times are simulated, native times are the host's\n",
	       labels[0]);
	native_footer(stdout, &j, &r);
	fflush(stdout);
	return r.stopped ? native_stopped_note(&r) : 0;
}

/* ---- calibrate ---- */

static void calibrate_help(FILE *f)
{
	fprintf(f, "usage: tlbsim calibrate [-o FILE] [--name NAME] [--json] [--budget MS]\n\n"
		   "Measure this host (x86-64 or arm64 Linux) with microbenchmarks - fault round\n"
		   "trip, page zeroing, syscall entry, futex wake-to-run latency, local one-page\n"
		   "flush, shootdown with 1 and N targets, mmap and munmap of shared and private\n"
		   "anonymous memory - and write a profile file for --profile FILE: the measured\n"
		   "figures as cost parameters, every other value from the built-in profile of the\n"
		   "host's architecture, each value with its method as a comment. See docs/native.md.\n\n"
		   "options:\n"
		   "  -o FILE                write the profile there (default: stdout)\n"
		   "  --name NAME            the profile's name (default host)\n"
		   "  --json                 print the figures and their methods as JSON on stdout\n"
		   "                         (with -o the profile still goes to FILE)\n"
		   "  --budget MS            host time for all measurements (100..60000, default 6000)\n"
		   "  -h, --help             this help\n\n"
		   "exit status: 0 ok, 2 bad input, 3 a host failure\n");
}

struct profile_out {
	const struct native_calib *c;
	const char *name;
};

static void put_profile(FILE *f, const void *arg)
{
	const struct profile_out *p = arg;
	native_write_profile(f, p->c, p->name);
}

int cmd_calibrate(int argc, char **argv)
{
	const char *out = NULL, *name = "host";
	bool json = false;
	unsigned budget = 6000;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			calibrate_help(stdout);
			return 0;
		} else if (strcmp(a, "--json") == 0) {
			json = true;
		} else if (strcmp(a, "-o") == 0 || strcmp(a, "--name") == 0 ||
			   strcmp(a, "--budget") == 0) {
			if (i + 1 >= argc)
				return cli_error("calibrate: %s needs a value", a);
			const char *v = argv[++i];
			if (a[1] == 'o') {
				if (!*v)
					return cli_error("calibrate: -o: want a file name");
				out = v;
			} else if (a[2] == 'n') {
				if (!*v || strlen(v) > 63 ||
				    strspn(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
					   "0123456789-_.") != strlen(v))
					return cli_error("calibrate: --name %s: want 1..63 characters of "
							 "[A-Za-z0-9-_.]", v);
				if (tlbsim_profile_find(v))
					return cli_error("calibrate: --name %s: a built-in profile has "
							 "that name", v);
				name = v;
			} else {
				char *e;
				errno = 0;
				unsigned long b = strtoul(v, &e, 10);
				if (!*v || *e || errno || b < 100 || b > 60000 || *v < '0' || *v > '9')
					return cli_error("calibrate: --budget %s: want milliseconds "
							 "100..60000", v);
				budget = (unsigned)b;
			}
		} else {
			return cli_error("calibrate: unexpected argument '%s' (see tlbsim calibrate "
					 "--help)", a);
		}
	}
	/* the output file's place first: a bad path fails before a second is
	 * spent; the file is written atomically at the end (csv.h), so a failed
	 * or stopped run leaves none */
	if (out && csv_probe_dir(out))	/* a directory, or no place for a file */
		return cli_error("calibrate: -o %s: %s", out, strerror(errno));
	struct native_calib *c = malloc(sizeof(*c));
	char err[TLBSIM_ERRLEN];
	cli_block_signals();	/* SIGINT, SIGTERM: polled between batches */
	if (!c || native_calibrate(c, budget, cli_pending_signal, stderr, err, sizeof(err)) ||
	    c->stopped) {
		if (c && c->stopped) {
			int sig = c->stopped;
			free(c);
			fprintf(stderr, "tlbsim: calibrate: stopped (%s) before the measurements "
				"ended; nothing written\n", cli_signal_name(sig));
			return 128 + sig;
		}
		int code = c ? EXIT_USAGE : EXIT_INTERNAL;
		free(c);
		return cli_error_code(code, "calibrate: %s", c ? err : "out of memory");
	}
	if (out) {
		struct profile_out po = {c, name};
		if (atomic_write(out, put_profile, &po)) {
			int e = errno;
			free(c);
			return cli_error_code(EXIT_INTERNAL, "calibrate: writing %s: %s", out,
					      strerror(e));
		}
		fputs("tlbsim: profile: ", stderr);	/* a name escaped: the note stays one line */
		cli_put_sanitized(stderr, out);
		fputs(" (use with --profile ", stderr);
		cli_put_sanitized(stderr, out);
		fputs(")\n", stderr);
	}
	if (json)
		native_write_calib_json(stdout, c);
	else if (!out)
		native_write_profile(stdout, c, name);
	free(c);
	return 0;
}
