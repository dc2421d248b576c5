/*
 * out.c - output writers. JSON is streamed with a fixed key order and
 * integer-only numbers so output is byte-stable; 64-bit addresses would be
 * hex strings (none are printed yet). The table uses thousands separators.
 */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "cost/params.h"
#include "out/out.h"

int out_utf8_len(const unsigned char *p)
{
	if (p[0] < 0x80)
		return 1;
	int n = p[0] >= 0xf0 && p[0] <= 0xf4 ? 4 : p[0] >= 0xe0 ? 3 : p[0] >= 0xc2 && p[0] < 0xe0 ? 2 : 0;
	if (!n)
		return 0;
	for (int i = 1; i < n; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	if (n == 3 && ((p[0] == 0xe0 && p[1] < 0xa0) || (p[0] == 0xed && p[1] >= 0xa0)))
		return 0;	/* overlong or a surrogate */
	if (n == 4 && ((p[0] == 0xf0 && p[1] < 0x90) || (p[0] == 0xf4 && p[1] >= 0x90)))
		return 0;
	return n;
}

void json_string(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	fputc('"', f);
	while (*s) {
		int n = out_utf8_len(s);
		if (n == 0) {
			fputs("\\ufffd", f);	/* not UTF-8: the replacement character */
			s++;
		} else if (n > 1) {
			fwrite(s, 1, (size_t)n, f);
			s += n;
		} else {
			unsigned char c = *s++;
			if (c == '"' || c == '\\')
				fprintf(f, "\\%c", c);
			else if (c < 0x20 || c == 0x7f)
				fprintf(f, "\\u%04x", c);
			else
				fputc(c, f);
		}
	}
	fputc('"', f);
}

static int run_seeds(const struct run_result *r);
static void metric_ci(const struct run_result *r, uint64_t (*get)(const struct tlbsim_metrics *m),
		      double *mean, double *ci);

/* --seeds N: "seeds": N, "stats": {metric: {"mean", "ci95", "values": [per seed]}}
 * ("metrics" holds the rounded means) */
#define GETTER(n) static uint64_t jget_##n(const struct tlbsim_metrics *m) { return m->n; }
TLBSIM_METRICS(GETTER)
#undef GETTER
#define GETTER(n) static uint64_t jget_tlbi_##n(const struct tlbsim_metrics *m) { return m->tlbi.n; }
TLBSIM_TLBI_KINDS(GETTER)
#undef GETTER

static void json_stat(FILE *f, const struct run_result *r, const char *name,
		      uint64_t (*get)(const struct tlbsim_metrics *m), const char *sep)
{
	double mean, ci;
	metric_ci(r, get, &mean, &ci);
	fprintf(f, "%s\"%s\":{\"mean\":%.3f,\"ci95\":%.3f,\"values\":[", sep, name, mean, ci);
	for (int k = 0; k < r->nseeds; k++)
		fprintf(f, "%s%" PRIu64, k ? "," : "", get(&r->seed_m[k]));
	fprintf(f, "]}");
}

static void json_stats(FILE *f, const struct run_result *r)
{
	fprintf(f, ",\"seeds\":%d,\"stats\":{", r->nseeds);
	const char *sep = "";
#define X(n)                                                                     \
	json_stat(f, r, #n, jget_##n, sep);                                      \
	sep = ",";
	TLBSIM_METRICS(X)
#undef X
	fprintf(f, ",\"tlbi\":{");
	sep = "";
#define X(n)                                                                     \
	json_stat(f, r, #n, jget_tlbi_##n, sep);                                 \
	sep = ",";
	TLBSIM_TLBI_KINDS(X)
#undef X
	fprintf(f, "}}");
}

void out_json_head(FILE *f, const char *cmdline, const char *mode,
		   const struct tlbsim_resolved *res)
{
	fprintf(f, "{\"tool\":\"tlbsim\",\"version\":\"%s\",\"command\":", TLBSIM_VERSION);
	json_string(f, cmdline);
	if (mode)
		fprintf(f, ",\"mode\":\"%s\"", mode);
	fprintf(f, ",\"workload\":");
	json_string(f, res->workload->name);
	fprintf(f, ",\"params\":{");
	for (int i = 0; i < res->nwparams; i++) {
		fprintf(f, "%s", i ? "," : "");
		json_string(f, res->wparams[i].name);
		fputc(':', f);
		json_string(f, res->wparams[i].value);
	}
	fputc('}', f);
}

static void json_run(FILE *f, const char *cmdline, const struct run_result *r)
{
	const struct tlbsim_resolved *res = &r->res;
	out_json_head(f, cmdline, NULL, res);
	fprintf(f, ",\"profile\":");
	json_string(f, res->profile->name);
	fprintf(f, ",\"kernel\":");
	if (r->cfg.kernel)
		json_string(f, r->cfg.kernel);
	else
		fprintf(f, "null");
	fprintf(f, ",\"arch\":\"%s\",\"page_size\":%llu,\"cpus\":%d,\"threads\":%d,"
		   "\"iters\":%" PRId64 ",\"duration_ns\":%" PRIu64 ",\"seed\":%" PRIu64
		   ",\"policy\":{",
		res->profile->arch == ARCH_X86_64 ? "x86_64" : "arm64",
		1ull << res->profile->page_shift, res->cpus, res->threads, res->iters,
		res->duration_ns, r->cfg.seed);
	for (int k = 0; k < tlbsim_knob_count(); k++) {
		fprintf(f, "%s\"%s\":", k ? "," : "", tlbsim_knob_get(k)->name);
		json_string(f, tlbsim_policy_value_name(&r->cfg.policy, k));
	}
	fprintf(f, "},\"overrides\":{");
	for (int i = 0; i < r->cfg.noverrides; i++)
		fprintf(f, "%s\"%s\":%" PRId64, i ? "," : "",
			tlbsim_param_desc[r->cfg.overrides[i].param].name, r->cfg.overrides[i].value);
	fprintf(f, "},\"first_violation\":");
	if (r->m.first_violation[0])
		json_string(f, r->m.first_violation);
	else
		fprintf(f, "null");
	if (r->m.notes[0]) {
		fprintf(f, ",\"notes\":");
		json_string(f, r->m.notes);
	}
	fprintf(f, ",\"partial\":");
	if (r->partial)
		json_string(f, r->partial);
	else
		fprintf(f, "null");
	if (r->partial)
		fprintf(f, ",\"partial_seeds\":{\"whole\":%d,\"planned\":%d}",
			r->partial_cut ? 0 : run_seeds(r),
			r->seeds_planned > 1 ? r->seeds_planned : 1);
	fprintf(f, ",\"metrics\":{");
	const struct tlbsim_metrics *m = &r->m;
	const char *sep = "";
#define X(n)                                                                     \
	fprintf(f, "%s\"" #n "\":%" PRIu64, sep, m->n);                          \
	sep = ",";
	TLBSIM_METRICS(X)
#undef X
	fprintf(f, ",\"tlbi\":{");
	sep = "";
#define X(n)                                                                     \
	fprintf(f, "%s\"" #n "\":%" PRIu64, sep, m->tlbi.n);                     \
	sep = ",";
	TLBSIM_TLBI_KINDS(X)
#undef X
	fprintf(f, "}}");
	if (run_seeds(r) > 1)
		json_stats(f, r);
	fprintf(f, "}");
}

void out_json(FILE *f, const char *cmdline, const struct run_result *runs, int n, bool compare)
{
	if (!compare) {
		json_run(f, cmdline, &runs[0]);
		fputc('\n', f);
		return;
	}
	fprintf(f, "{\"runs\":[");
	for (int i = 0; i < n; i++) {
		fprintf(f, "%s\n", i ? "," : "");
		json_run(f, cmdline, &runs[i]);
	}
	fprintf(f, "\n]}\n");
}

/* 1234567 -> "1,234,567" */
static const char *thousands(uint64_t v, char *buf, size_t len)
{
	char tmp[32];
	int n = snprintf(tmp, sizeof(tmp), "%" PRIu64, v);
	size_t o = 0;
	for (int i = 0; i < n && o + 2 < len; i++) {
		if (i && (n - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = tmp[i];
	}
	buf[o] = 0;
	return buf;
}

/* a value with four significant digits (up to 9999 with none after the point) */
static void four(double v, const char *unit, char *buf, size_t len)
{
	double a = fabs(v);
	snprintf(buf, len, a < 9.9995 ? "%.3f %s" : a < 99.995 ? "%.2f %s" : a < 999.95 ? "%.1f %s"
								       : "%.0f %s", v, unit);
}

/* A simulated time in the unit that fits: 950 ns, 46.00 \u00b5s, 15.25 ms, 1.234 s.
 * The unit is chosen after four()'s rounding: 999 950 ns is 1.000 ms, not
 * 1000 \u00b5s. */
const char *out_human_time(double ns, char *buf, size_t len)
{
	double a = fabs(ns);
	if (a >= 999.95e6)
		four(ns / 1e9, "s", buf, len);
	else if (a >= 999.95e3)
		four(ns / 1e6, "ms", buf, len);
	else if (a >= 999.5)
		four(ns / 1e3, "\u00b5s", buf, len);
	else
		snprintf(buf, len, "%.0f ns", ns);
	return buf;
}

/* a count: exact below 10 000 (7,761), else K/M/G with four digits (180.7 K;
 * 999 950 is 1.000 M, not 1000 K) */
const char *out_human_count(double v, char *buf, size_t len)
{
	double a = fabs(v);
	if (a >= 999.95e6)
		four(v / 1e9, "G", buf, len);
	else if (a >= 999.95e3)
		four(v / 1e6, "M", buf, len);
	else if (a >= 1e4)
		four(v / 1e3, "K", buf, len);
	else
		thousands((uint64_t)(a + 0.5), buf, len);
	return buf;
}

/* when a row is left out of the table */
enum row_hide {
	ROW_SHOWN = 0,		/* always */
	ROW_HIDE_ZERO = 1,	/* when zero in every column */
	ROW_HIDE_NO_KERNEL = 2,	/* when zero and no column used the kernel address
				 * space: a kbuild table says "softlockups 0" */
};

struct row {
	const char *name;
	bool time;
	uint64_t (*get)(const struct tlbsim_metrics *m);
	unsigned char hide;	/* enum row_hide (false/true read as the first two) */
};

/* a run with seed-003 activity: purges, kernel flushes, tasklist_lock */
static bool kernel_activity(const struct tlbsim_metrics *m)
{
	return (m->purges | m->kernel_flushes | m->tasklist_lock_waits) != 0;
}

#define GETTER(n) static uint64_t get_##n(const struct tlbsim_metrics *m) { return m->n; }
TLBSIM_METRICS(GETTER)
#undef GETTER
#define GETTER(n) static uint64_t get_tlbi_##n(const struct tlbsim_metrics *m) { return m->tlbi.n; }
TLBSIM_TLBI_KINDS(GETTER)
#undef GETTER

/* derived rows: means of the totals */
static uint64_t get_purge_vmap_node_mean(const struct tlbsim_metrics *m)
{
	return m->purge_vmap_node_calls ? m->purge_vmap_node_ns / m->purge_vmap_node_calls : 0;
}
static uint64_t get_sys_per_op(const struct tlbsim_metrics *m)
{
	return m->ops ? m->sys_ns / m->ops : 0;
}
static uint64_t get_tasklist_wait_mean(const struct tlbsim_metrics *m)
{
	return m->tasklist_lock_waits ? m->tasklist_lock_wait_ns / m->tasklist_lock_waits : 0;
}

static const struct row rows[] = {
	{"wall", true, get_wall_ns, false}, {"user", true, get_user_ns, false}, {"sys", true, get_sys_ns, false},
	{"idle", false, get_idle_ns, false}, {"ops", false, get_ops, false},
	{"ops_per_sec", false, get_ops_per_sec, false}, {"ops_per_sec_task", false, get_ops_per_sec_task, false},
	{"sys_per_op", true, get_sys_per_op, ROW_HIDE_ZERO},
	{"window", true, get_window_ns, false},
	{"page_faults", false, get_page_faults, false}, {"fault_retries", false, get_fault_retries, false},
	{"spurious_faults", false, get_spurious_faults, false},
	{"spurious_flushes", false, get_spurious_flushes, false}, {"af_faults", false, get_af_faults, false},
	{"page_mkwrite", false, get_page_mkwrite, false}, {"dirty_throttle", true, get_dirty_throttle_ns, false},
	{"tlb_misses", false, get_tlb_misses, false},
	{"page_walks", false, get_page_walks, false}, {"gathers", false, get_gathers, false},
	{"nested_finishes", false, get_nested_finishes, false}, {"ipi_sent", false, get_ipi_sent, false},
	{"ipi_received", false, get_ipi_received, false},
	{"flush_local_pages", false, get_flush_local_pages, false}, {"flush_full", false, get_flush_full, false},
	{"tlbi vale1is", false, get_tlbi_vale1is, false}, {"tlbi vae1is", false, get_tlbi_vae1is, false},
	{"tlbi aside1is", false, get_tlbi_aside1is, false}, {"tlbi vaale1is", false, get_tlbi_vaale1is, false},
	{"tlbi vmalle1is", false, get_tlbi_vmalle1is, false}, {"tlbi local", false, get_tlbi_local, false},
	{"tlbi local_for_is", false, get_tlbi_local_skipped_broadcast, true},
	{"tlbi rvale1is", false, get_tlbi_rvale1is, true}, {"tlbi rvae1is", false, get_tlbi_rvae1is, true},
	{"asid_rollovers", false, get_asid_rollovers, false},
	{"context_switches", false, get_context_switches, false},
	{"dvm_wait", true, get_dvm_wait_ns, false}, {"lock_wait", true, get_lock_wait_ns, false},
	{"tables_freed", false, get_tables_freed, false}, {"pages_freed", false, get_pages_freed, false},
	{"kernel_flushes", false, get_kernel_flushes, true},
	{"kflush_ipis", false, get_kernel_flush_ipis, true},
	{"irqs_off_wait", true, get_ipi_wait_irqs_off_ns, true},
	{"vfree_lazy", false, get_vfree_lazy, true}, {"purges", false, get_purges, true},
	{"purge_node_calls", false, get_purge_vmap_node_calls, true},
	{"purge_vmap_node", true, get_purge_vmap_node_ns, true},
	{"purge_node_mean", true, get_purge_vmap_node_mean, true},
	{"purge_node_max", true, get_purge_vmap_node_max_ns, true},
	{"shadow_freed", false, get_shadow_pages_freed, true},
	{"tasklist_waits", false, get_tasklist_lock_waits, true},
	{"tasklist_wait", true, get_tasklist_lock_wait_ns, true},
	{"tasklist_wait_mean", true, get_tasklist_wait_mean, true},
	{"tasklist_wait_max", true, get_tasklist_lock_wait_max_ns, true},
	{"softlockups", false, get_softlockups, ROW_HIDE_NO_KERNEL},
	{"records_per_sec", false, get_records_per_sec, true},
	{"invlpgb", false, get_invlpgb, true}, {"tlbsync", false, get_tlbsync, true},
	{"tlb_shootdowns", false, get_tlb_shootdowns, true},
	{"bogo_ops_per_sec", false, get_bogo_ops_per_sec, true},
	{"tlb_shootdowns_per_sec", false, get_tlb_shootdowns_per_sec, true},
	{"ipis_per_sec", false, get_ipis_per_sec, true},
	{"cow_faults", false, get_cow_faults, true},
	{"violations", false, get_violations, false}, {"events", false, get_events, false},
};

static uint64_t get_bcast_tlbi(const struct tlbsim_metrics *m)
{
	return m->tlbi.vale1is + m->tlbi.vae1is + m->tlbi.aside1is + m->tlbi.vaale1is +
	       m->tlbi.vmalle1is + m->tlbi.rvale1is + m->tlbi.rvae1is;
}

/* "summary: B vs A: wall 9.94x lower, ops/s 9.94x higher; 434.8 M fewer broadcast
 * TLBIs" - the last column against the first, from the means */
static void summary_line(FILE *f, const struct run_result *runs, int n, const char *lb,
			 const char *la)
{
	double a, b, ci;
	/* parts joined by ", " within a group and "; " between the ratios and
	 * the counts ("summary: B vs A:; 2,931 fewer ..." when wall and ops/s
	 * said nothing, a bare colon when nothing differed) */
	int parts = 0;
	fprintf(f, "summary: %s vs %s:", lb, la);
	metric_ci(&runs[0], get_wall_ns, &a, &ci);
	metric_ci(&runs[n - 1], get_wall_ns, &b, &ci);
	if (a > 0 && b > 0) {
		fprintf(f, " wall %.2fx %s", b < a ? a / b : b / a, b < a ? "lower" : b > a ? "higher" : "(equal)");
		parts++;
	}
	metric_ci(&runs[0], get_ops_per_sec, &a, &ci);
	metric_ci(&runs[n - 1], get_ops_per_sec, &b, &ci);
	if (a > 0 && b > 0 && a != b) {
		fprintf(f, "%sops/s %.2fx %s", parts ? ", " : " ", b > a ? b / a : a / b,
			b > a ? "higher" : "lower");
		parts++;
	}
	static const struct {
		const char *what;
		uint64_t (*get)(const struct tlbsim_metrics *m);
	} counts[] = {{"broadcast TLBIs", get_bcast_tlbi}, {"IPIs", get_ipi_sent},
		      {"page faults", get_page_faults}};
	const char *sep = parts ? ";" : "";
	for (size_t k = 0; k < sizeof(counts) / sizeof(counts[0]); k++) {
		metric_ci(&runs[0], counts[k].get, &a, &ci);
		metric_ci(&runs[n - 1], counts[k].get, &b, &ci);
		if (a == b)
			continue;
		char hb[32];
		out_human_count(b < a ? a - b : b - a, hb, sizeof(hb));
		fprintf(f, "%s %s %s %s", sep, hb, b < a ? "fewer" : "more", counts[k].what);
		sep = ",";
		parts++;
	}
	if (!parts)
		fprintf(f, " no difference in wall, ops/s, broadcast TLBIs, IPIs or page faults");
	fputc('\n', f);
}

/* columns a UTF-8 string takes (continuation bytes take none) */
static int display_width(const char *p)
{
	int w = 0;
	for (; *p; p++)
		w += ((unsigned char)*p & 0xc0) != 0x80;
	return w;
}

/* " " then s right-aligned in width columns */
static void put_padded(FILE *f, const char *s, int width)
{
	fputc(' ', f);
	for (int w = display_width(s); w < width; w++)
		fputc(' ', f);
	fputs(s, f);
}

/* ---- several seeds: mean and 95 % confidence interval ---- */

/* Student's t, two-sided 95 %, by degrees of freedom (1..30; 1.96 past) */
static double t95(int df)
{
	static const double t[] = {0,      12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365,
				   2.306,  2.262,  2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
				   2.120,  2.110,  2.101, 2.093, 2.086, 2.080, 2.074, 2.069,
				   2.064,  2.060,  2.056, 2.052, 2.048, 2.045, 2.042};
	if (df < 1)
		return 0;
	return df <= 30 ? t[df] : 1.960;
}

void out_mean_ci(const double *x, int n, double *mean, double *ci)
{
	double sum = 0, ss = 0;
	for (int k = 0; k < n; k++)
		sum += x[k];
	*mean = n ? sum / n : 0;
	for (int k = 0; k < n; k++)
		ss += (x[k] - *mean) * (x[k] - *mean);
	*ci = n > 1 ? t95(n - 1) * sqrt(ss / (n - 1)) / sqrt((double)n) : 0;
}

static int run_seeds(const struct run_result *r)
{
	return r->nseeds > 1 && r->seed_m ? r->nseeds : 1;
}

static double seed_value(const struct run_result *r, uint64_t (*get)(const struct tlbsim_metrics *m),
			 int k)
{
	return (double)get(run_seeds(r) > 1 ? &r->seed_m[k] : &r->m);
}

static void metric_ci(const struct run_result *r, uint64_t (*get)(const struct tlbsim_metrics *m),
		      double *mean, double *ci)
{
	double x[1000];
	int n = run_seeds(r);
	for (int k = 0; k < n; k++)
		x[k] = seed_value(r, get, k);
	out_mean_ci(x, n, mean, ci);
}

/* idle is shown as a percentage of the CPU time (wall x CPUs), not as the
 * seconds summed over CPUs */
static bool row_cpu_pct(const struct row *rw)
{
	return rw->get == get_idle_ns;
}

/* a row's value in run r, seed k (a single run: its metrics): the metric, or
 * for a cpu_pct row its percentage of the CPU time of that run */
static double row_value(const struct row *rw, const struct run_result *r, int k)
{
	const struct tlbsim_metrics *m = run_seeds(r) > 1 ? &r->seed_m[k] : &r->m;
	double v = (double)rw->get(m);
	if (row_cpu_pct(rw)) {
		double cpu_ns = (double)m->wall_ns * r->res.cpus;
		v = cpu_ns > 0 ? v * 100 / cpu_ns : 0;
	}
	return v;
}

static void row_ci(const struct row *rw, const struct run_result *r, double *mean, double *ci)
{
	double x[1000];
	int n = run_seeds(r);
	for (int k = 0; k < n; k++)
		x[k] = row_value(rw, r, k);
	out_mean_ci(x, n, mean, ci);
}

/* compare: the ratio last/first per seed (seed k of both columns: paired),
 * its mean and interval; false when some seed has a zero first value */
static bool row_ratio_ci(const struct row *rw, const struct run_result *a,
			 const struct run_result *b, double *mean, double *ci)
{
	double x[1000];
	int n = run_seeds(a) < run_seeds(b) ? run_seeds(a) : run_seeds(b);
	for (int k = 0; k < n; k++) {
		double va = row_value(rw, a, k), vb = row_value(rw, b, k);
		if (va == 0)
			return false;
		x[k] = vb / va;
	}
	out_mean_ci(x, n, mean, ci);
	return true;
}

/* a cell in human units: "15.25 ms", "180.7 K", "97.8 %"; with ci (several
 * seeds) "15.25 ms \u00b1 18.00 \u00b5s" (len >= 96) */
static const char *cell(const struct row *rw, double mean, double ci, bool with_ci, char *buf,
			size_t len)
{
	char a[40], b[40];
	if (row_cpu_pct(rw)) {
		snprintf(a, sizeof(a), "%.1f %%", mean);
		snprintf(b, sizeof(b), "%.1f", ci);
	} else if (rw->time) {
		out_human_time(mean, a, sizeof(a));
		out_human_time(ci, b, sizeof(b));
	} else {
		out_human_count(mean, a, sizeof(a));
		out_human_count(ci, b, sizeof(b));
	}
	if (with_ci)
		snprintf(buf, len, "%s \u00b1 %s", a, b);
	else
		snprintf(buf, len, "%s", a);
	return buf;
}

/* Column labels: the first column shows its value of every knob that some
 * column changes; every other column the knobs it sets differently from the
 * first (or "(same)"). Every knob's longest name=value, comma-separated,
 * takes about 950 bytes today; a label that would not fit ends after its last
 * whole knob=value with ",..." (a value cut short could read as another of
 * the knob's values: "hugetlb_unshare_flush=before" for before_unlock). */
#define COLUMN_LABEL_LEN 2048
static void column_label(const struct run_result *runs, int n, int col, char *buf, size_t len)
{
	static const char more[] = ",...";
	size_t o = 0;
	buf[0] = 0;
	for (int k = 0; k < tlbsim_knob_count(); k++) {
		const char *v0 = tlbsim_policy_value_name(&runs[0].cfg.policy, k);
		bool show;
		if (col == 0) {
			show = false;
			for (int i = 1; i < n; i++)
				show |= strcmp(tlbsim_policy_value_name(&runs[i].cfg.policy, k), v0) != 0;
		} else {
			show = strcmp(tlbsim_policy_value_name(&runs[col].cfg.policy, k), v0) != 0;
		}
		if (!show)
			continue;
		const size_t w = (size_t)snprintf(buf + o, len - o, "%s%s=%s", o ? "," : "",
						  tlbsim_knob_get(k)->name,
						  tlbsim_policy_value_name(&runs[col].cfg.policy, k));
		if (o + w + sizeof(more) > len) {
			/* keep room for ",..." after the last whole knob */
			snprintf(buf + o, len - o, "%s", more);
			return;
		}
		o += w;
	}
	if (!buf[0] && col == 0)	/* nothing varies: name the first knob */
		snprintf(buf, len, "%s=%s", tlbsim_knob_get(0)->name,
			 tlbsim_policy_value_name(&runs[0].cfg.policy, 0));
	else if (!buf[0])
		snprintf(buf, len, "(same)");
}

void out_table_note(FILE *f, const struct run_result *runs, double host_s)
{
	fprintf(f, "# simulated times (profile %s", runs[0].res.profile->name);
	if (runs[0].cfg.kernel)
		fprintf(f, ", kernel %s", runs[0].cfg.kernel);
	fprintf(f, "); host %.2f s\n", host_s);
}

void out_table(FILE *f, const struct run_result *runs, int n, bool compare)
{
	bool columns = compare || n > 1;
	compare &= n > 1;	/* one column (a compare stopped early): no ratio to itself */
	const struct tlbsim_resolved *r0 = &runs[0].res;
	char seedtxt[64];
	if (run_seeds(&runs[0]) > 1)
		snprintf(seedtxt, sizeof(seedtxt), "seeds %" PRIu64 "..%" PRIu64, runs[0].cfg.seed,
			 runs[0].cfg.seed + (uint64_t)run_seeds(&runs[0]) - 1);
	else
		snprintf(seedtxt, sizeof(seedtxt), "seed %" PRIu64, runs[0].cfg.seed);
	fprintf(f, "workload %s (", r0->workload->name);
	for (int i = 0; i < r0->nwparams; i++)
		fprintf(f, "%s%s=%s", i ? " " : "", r0->wparams[i].name, r0->wparams[i].value);
	if (!r0->workload->timed) {
		fprintf(f, "), profile %s, %d CPUs, %d threads x %" PRId64 " iters, %s\n",
			r0->profile->name, r0->cpus, r0->threads, r0->iters, seedtxt);
	} else if (r0->duration_ns) {
		char d[48];
		fprintf(f, "), profile %s, %d CPUs, %d tasks, warm-up round then %s measured, %s\n",
			r0->profile->name, r0->cpus, r0->threads, out_human_time((double)r0->duration_ns, d, sizeof(d)),
			seedtxt);
	} else {
		fprintf(f, "), profile %s, %d CPUs, %d tasks, warm-up round then %" PRId64
			" measured round%s per task, %s\n", r0->profile->name, r0->cpus, r0->threads,
			r0->iters, r0->iters == 1 ? "" : "s", seedtxt);
	}
	for (int i = 0; i < n; i++) {
		if (!runs[i].partial)
			continue;
		if (columns)
			fprintf(f, "PARTIAL: column %d", i + 1);
		else
			fprintf(f, "PARTIAL: the run");
		int planned = runs[i].seeds_planned > 1 ? runs[i].seeds_planned : 1;
		if (runs[i].partial_cut && planned > 1)
			fprintf(f, " stopped early (%s) before any of its %d seeds ran to the end; "
				"its numbers are the first seed's, over its simulated time until "
				"then\n", runs[i].partial, planned);
		else if (runs[i].partial_cut)
			fprintf(f, " stopped early (%s); its numbers cover the simulated time until "
				"then\n", runs[i].partial);
		else
			fprintf(f, " stopped early (%s): %d of %d seeds ran to the end; its numbers "
				"are over those, the rest left out\n", runs[i].partial,
				run_seeds(&runs[i]), planned);
	}
	if (runs[0].m.notes[0])
		fprintf(f, "note: %s\n", runs[0].m.notes);
	char labels[MAX_TABLE_COLUMNS][COLUMN_LABEL_LEN];
	int width = 20;
	for (int i = 0; i < n && i < MAX_TABLE_COLUMNS; i++) {
		column_label(runs, n, i, labels[i], sizeof(labels[i]));
		int l = (int)strlen(labels[i]);
		if (l > width)
			width = l;
	}
	bool multi = false;
	for (int i = 0; i < n; i++)
		multi |= run_seeds(&runs[i]) > 1;
	if (multi)
		for (size_t k = 0; k < sizeof(rows) / sizeof(rows[0]); k++)
			for (int i = 0; i < n; i++) {
				char cb[96];
				double mean, ci;
				row_ci(&rows[k], &runs[i], &mean, &ci);
				int l = display_width(cell(&rows[k], mean, ci, true, cb, sizeof(cb)));
				if (l > width)
					width = l;
			}
	int rwidth = multi ? 15 : 9;
	/* knobs no column changes: one line */
	fprintf(f, "policy:");
	if (runs[0].cfg.kernel)
		fprintf(f, " kernel %s:", runs[0].cfg.kernel);
	int shown = 0;
	bool any_varies = false;
	for (int k = 0; k < tlbsim_knob_count(); k++)
		for (int i = 1; i < n; i++)
			any_varies |= strcmp(tlbsim_policy_value_name(&runs[i].cfg.policy, k),
					     tlbsim_policy_value_name(&runs[0].cfg.policy, k)) != 0;
	for (int k = 0; k < tlbsim_knob_count(); k++) {
		bool varies = false;
		const char *v0 = tlbsim_policy_value_name(&runs[0].cfg.policy, k);
		for (int i = 1; i < n; i++)
			varies |= strcmp(tlbsim_policy_value_name(&runs[i].cfg.policy, k), v0) != 0;
		if (varies || (!any_varies && k == 0))
			continue;
		fprintf(f, " %s=%s", tlbsim_knob_get(k)->name, v0);
		shown++;
	}
	if (!shown)
		fprintf(f, " (every knob is set per column)");
	char buf[96];
	fprintf(f, "\n%-18s", "metric");
	for (int i = 0; i < n; i++)
		fprintf(f, " %*s", width, labels[i]);
	if (compare)
		fprintf(f, " %*s", rwidth, "ratio");
	fputc('\n', f);
	for (size_t k = 0; k < sizeof(rows) / sizeof(rows[0]); k++) {
		if (rows[k].hide != ROW_SHOWN) {
			bool any = false;
			for (int i = 0; i < n; i++)
				any |= rows[k].get(&runs[i].m) != 0 ||
				       (rows[k].hide == ROW_HIDE_NO_KERNEL &&
					kernel_activity(&runs[i].m));
			if (!any)
				continue;
		}
		fprintf(f, "%-18s", rows[k].name);
		if (multi) {
			for (int i = 0; i < n; i++) {
				char cb[96];
				double mean, ci;
				row_ci(&rows[k], &runs[i], &mean, &ci);
				put_padded(f, cell(&rows[k], mean, ci, true, cb, sizeof(cb)), width);
			}
			if (compare) {
				char rb[64];
				double mean, ci;
				if (row_ratio_ci(&rows[k], &runs[0], &runs[n - 1], &mean, &ci))
					snprintf(rb, sizeof(rb), "%.2f \u00b1 %.2f", mean, ci);
				else
					snprintf(rb, sizeof(rb), "%s",
						 rows[k].get(&runs[n - 1].m) ? "inf" : "-");
				put_padded(f, rb, rwidth);
			}
			fputc('\n', f);
			continue;
		}
		for (int i = 0; i < n; i++)
			put_padded(f, cell(&rows[k], row_value(&rows[k], &runs[i], 0), 0, false, buf,
					   sizeof(buf)), width);
		if (compare) {
			uint64_t a = rows[k].get(&runs[0].m), b = rows[k].get(&runs[n - 1].m);
			double pa = row_value(&rows[k], &runs[0], 0), pb = row_value(&rows[k], &runs[n - 1], 0);
			if (a == 0)
				fprintf(f, " %9s", b ? "inf" : "-");
			else if (row_cpu_pct(&rows[k]))
				fprintf(f, " %9.2f", pa > 0 ? pb / pa : 0.0);
			else {
				/* ratio last/first with 2 decimals, integer arithmetic */
				unsigned __int128 q = ((unsigned __int128)b * 100 + a / 2) / a;
				fprintf(f, " %6" PRIu64 ".%02" PRIu64, (uint64_t)(q / 100),
					(uint64_t)(q % 100));
			}
		}
		fputc('\n', f);
	}
	if (compare && n > 1) {
		fprintf(f, "ratio = %s / %s%s\n", labels[n - 1], labels[0],
			multi ? " (per seed, paired; mean \u00b1 95 % interval)" : "");
		summary_line(f, runs, n, labels[n - 1], labels[0]);
	}
	if (multi)
		fprintf(f, "\u00b1: half-width of the 95 %% confidence interval of the mean over "
			"%d seeds (Student's t)\n", run_seeds(&runs[0]));
}
