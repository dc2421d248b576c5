/*
 * cmd_sens.c - `tlbsim sensitivity`: which cost parameters a result rests on.
 *
 * Every cost parameter with unit ns that is non-zero on the machine (after
 * the profile and -D) is moved down and up by --perturb percent, one at a
 * time, everything else held; the quantity is a metric of one policy, or the
 * ratio of the metric under two policies (second over first). Parameters are
 * ranked by the larger relative change of the quantity. With --seeds N every
 * variant runs the same N seeds and the quantity is the mean over them (so
 * the comparison is paired: common random numbers). All runs go through the
 * host-thread pool (pool.h), so the output does not depend on --jobs.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/chart.h"
#include "cli/cli.h"
#include "cli/csv.h"
#include "cli/pool.h"
#include "cost/params.h"
#include "out/out.h"

struct metric_def {
	const char *name;
	size_t off;
};

static const struct metric_def metric_defs[] = {
#define X(n) {#n, offsetof(struct tlbsim_metrics, n)},
	TLBSIM_METRICS(X)
#undef X
};

static const struct metric_def *metric_find(const char *name)
{
	for (size_t i = 0; i < sizeof(metric_defs) / sizeof(metric_defs[0]); i++)
		if (strcmp(metric_defs[i].name, name) == 0)
			return &metric_defs[i];
	return NULL;
}

static double metric_of(const struct tlbsim_metrics *m, const struct metric_def *d)
{
	uint64_t v;
	memcpy(&v, (const char *)m + d->off, sizeof(v));
	return (double)v;
}

struct sens_row {
	int param;
	int64_t value, lo, hi;
	double q_lo, q_hi, effect;	/* effect: the larger |change| in percent */
};

static int row_cmp(const void *a, const void *b)
{
	const struct sens_row *x = a, *y = b;
	if (x->effect != y->effect)
		return x->effect < y->effect ? 1 : -1;
	return strcmp(tlbsim_param_desc[x->param].name, tlbsim_param_desc[y->param].name);
}

/* The pool's task of column c, variant v (0: the baseline; 1 + 2j and 2 + 2j:
 * parameter j lowered and raised), seed k. Variant-major: the pool starts
 * tasks in index order, so a run stopped early has the baseline of every
 * column first and then whole parameters, which it can rank. */
static int task_index(int ncol, int c, int v, int nseeds, int k)
{
	return (v * ncol + c) * nseeds + k;
}

/* what quantity() found */
enum q_state {
	Q_OK,
	Q_STOPPED,	/* a run of the variant did not finish (time limit, signal) */
	Q_NO_RATIO,	/* the metric is 0 under the first policy: no ratio */
};

/* the quantity of variant v: metric (mean over seeds) or its ratio */
static double quantity(const struct seed_pool *p, int ncol, int nseeds, int v,
		       const struct metric_def *md, enum q_state *st)
{
	double q[2] = {0, 0};
	*st = Q_OK;
	for (int c = 0; c < ncol; c++) {
		double sum = 0;
		for (int k = 0; k < nseeds; k++) {
			const struct seed_task *t = &p->t[task_index(ncol, c, v, nseeds, k)];
			if (!t->ran || t->rc || t->stopped) {
				*st = Q_STOPPED;
				return 0;
			}
			sum += metric_of(&t->m, md);
		}
		q[c] = sum / nseeds;
	}
	if (ncol == 1)
		return q[0];
	if (q[0] == 0) {
		*st = Q_NO_RATIO;
		return 0;
	}
	return q[1] / q[0];
}

/* the baseline's spread over the seeds: the half-width of the 95 % interval
 * of the per-seed quantity (metric, or the per-seed paired ratio), as a
 * percentage of the quantity; 0 with one seed */
static double baseline_noise_pct(const struct seed_pool *p, int ncol, int nseeds,
				 const struct metric_def *md)
{
	if (nseeds < 2)
		return 0;
	double x[1000], mean, h;
	for (int k = 0; k < nseeds; k++) {
		double a = metric_of(&p->t[task_index(ncol, 0, 0, nseeds, k)].m, md);
		x[k] = a;
		if (ncol == 2) {
			double b = metric_of(&p->t[task_index(ncol, 1, 0, nseeds, k)].m, md);
			x[k] = a ? b / a : 0;
		}
	}
	out_mean_ci(x, nseeds, &mean, &h);
	return mean ? h / fabs(mean) * 100 : 0;
}

/* A tornado chart: one bar per parameter (at most 25, most influential on
 * top) from the baseline to the quantity at -PCT (left colour) and +PCT. */
static void write_svg(FILE *f, const char *title, const char *qname, double q0,
		      const struct sens_row *r, int n, int pct)
{
	if (n > 25)
		n = 25;
	double span = 0;
	for (int i = 0; i < n; i++) {
		span = fmax(span, fabs(r[i].q_lo - q0));
		span = fmax(span, fabs(r[i].q_hi - q0));
	}
	if (span == 0)
		span = q0 ? fabs(q0) * 0.01 : 1;
	const int left = 210, barw = 560, rowh = 22, top = 70;
	int H = top + n * rowh + 50;
	char sub[160];
	snprintf(sub, sizeof(sub), " at each parameter -%d %% (blue) and +%d %% (orange); baseline %.6g",
		 pct, pct, q0);
	/* as wide as the title and the line under it need */
	int W = 900, tw = 10 + chart_text_px(title, 15) * 11 / 10 + 12;
	int sw = 10 + chart_text_px(qname, 12) + chart_text_px(sub, 12) + 12;
	W = tw > W ? tw : W;
	W = sw > W ? sw : W;
	double cx = left + barw / 2.0, scale = (barw / 2.0 - 10) / span;
	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		   "font-family=\"sans-serif\" font-size=\"12\">\n", W, H);
	fprintf(f, "<text x=\"10\" y=\"22\" font-size=\"15\">");
	chart_xml_text(f, title);
	fprintf(f, "</text>\n<text x=\"10\" y=\"42\">");
	chart_xml_text(f, qname);
	fprintf(f, "%s</text>\n", sub);
	fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#333\"/>\n", cx,
		top - 8, cx, top + n * rowh);
	for (int i = 0; i < n; i++) {
		int y = top + i * rowh;
		fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>\n", left - 8,
			y + 14, tlbsim_param_desc[r[i].param].name);
		double xs[2] = {cx + (r[i].q_lo - q0) * scale, cx + (r[i].q_hi - q0) * scale};
		const char *col[2] = {"#4878cf", "#f28e2b"};
		for (int j = 0; j < 2; j++) {
			double x0 = fmin(cx, xs[j]), w = fabs(xs[j] - cx);
			fprintf(f, "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" "
				   "fill=\"%s\" opacity=\"0.8\"/>\n", x0, y + 3 + j * 8, w < 0.5 ? 0.5 : w,
				8, col[j]);
		}
		fprintf(f, "<text x=\"%d\" y=\"%d\">%.2f %%</text>\n", left + barw + 8, y + 14,
			r[i].effect);
	}
	fprintf(f, "</svg>\n");
}

struct svg_args {
	const char *title, *qname;
	double q0;
	const struct sens_row *r;
	int n, pct;
};

static void put_svg(FILE *f, const void *arg)
{
	const struct svg_args *a = arg;
	write_svg(f, a->title, a->qname, a->q0, a->r, a->n, a->pct);
}

/* the chart, written atomically (csv.h atomic_write: never a half file) */
static int write_svg_file(const char *path, const char *title, const char *qname, double q0,
			  const struct sens_row *r, int n, int pct)
{
	struct svg_args a = {title, qname, q0, r, n, pct};
	return atomic_write(path, put_svg, &a);
}

int cmd_sensitivity(int argc, char **argv)
{
	struct cli_opts o;
	struct tlbsim_resolved res;
	int rc = cli_parse_resolve(argc, argv, C_SENS, &o, &res);
	if (rc)
		return rc < 0 ? 0 : rc;
	char err[TLBSIM_ERRLEN];
	const char *mname = o.metric ? o.metric : res.workload->timed ? "ops_per_sec" : "wall_ns";
	const struct metric_def *md = metric_find(mname);
	if (!md) {
		cli_opts_free(&o);
		return cli_error("--metric %s: not a metric (the keys of the JSON \"metrics\" object, "
				 "docs/output.md)", mname);
	}
	int ncol = o.npolicies ? o.npolicies : 1, nseeds = o.seeds;
	struct tlbsim_policy pols[2];
	for (int c = 0; c < ncol; c++)
		pols[c] = o.npolicies ? o.policies[c] : o.cfg.policy;
	/* the parameters: unit ns, non-zero on this machine */
	int64_t p[P_COUNT];
	tlbsim_params_for(res.profile, &o.cfg, p);
	int params[P_COUNT], np = 0;
	for (int i = 0; i < P_COUNT; i++)
		if (strcmp(tlbsim_param_desc[i].unit, "ns") == 0 && p[i] > 0)
			params[np++] = i;
	int nvar = 1 + 2 * np;
	if (o.cfg.noverrides >= TLBSIM_MAX_OVERRIDES) {
		cli_opts_free(&o);
		return cli_error("sensitivity: too many -D options (at most %d)",
				 TLBSIM_MAX_OVERRIDES - 1);
	}
	struct seed_pool pool = {.n = ncol * nvar * nseeds};
	pool.t = calloc((size_t)pool.n, sizeof(*pool.t));
	struct sens_row *rows = calloc((size_t)np + 1, sizeof(*rows));
	if (!pool.t || !rows) {
		free(pool.t);
		free(rows);
		cli_opts_free(&o);
		return cli_error_code(EXIT_INTERNAL, "out of memory");
	}
	for (int j = 0; j < np; j++) {
		int64_t v = p[params[j]], d = v * o.perturb_pct / 100;
		rows[j].param = params[j];
		rows[j].value = v;
		rows[j].lo = v - (d ? d : 1);
		rows[j].hi = v + (d ? d : 1);
		/* the + run past the limit of a ns parameter would be refused
		 * after the others ran, naming a value the user never gave
		 * (exit_ns=1200000000 for -D exit_ns=1000000000): say why, and
		 * what fits. Not clamped: a smaller + step than - step would
		 * skew the ranking without the table showing it. */
		if (rows[j].hi > PARAM_NS_MAX) {
			int fit = 0;
			for (int pct = o.perturb_pct - 1; pct >= 1 && !fit; pct--) {
				int64_t dd = v * pct / 100;
				if (v + (dd ? dd : 1) <= PARAM_NS_MAX)
					fit = pct;
			}
			char hint[96];
			if (fit)
				snprintf(hint, sizeof(hint), "give --perturb %d or less", fit);
			else
				snprintf(hint, sizeof(hint), "lower %s", tlbsim_param_desc[params[j]].name);
			int erc = cli_error("sensitivity: %s=%" PRId64 " +%d %% is %" PRId64 " ns, "
					   "over the %lld ns (1 s) limit of a ns parameter; %s",
					   tlbsim_param_desc[params[j]].name, v, o.perturb_pct,
					   rows[j].hi, PARAM_NS_MAX, hint);
			free(pool.t);
			free(rows);	/* after the message, which reads rows[j] */
			cli_opts_free(&o);
			return erc;
		}
	}
	for (int c = 0; c < ncol; c++)
		for (int v = 0; v < nvar; v++)
			for (int k = 0; k < nseeds; k++) {
				struct seed_task *t = &pool.t[task_index(ncol, c, v, nseeds, k)];
				t->cfg = o.cfg;
				t->cfg.policy = pols[c];
				t->cfg.seed = o.cfg.seed + (uint64_t)k;
				if (v > 0) {
					const struct sens_row *r = &rows[(v - 1) / 2];
					int64_t val = (v - 1) % 2 ? r->hi : r->lo;
					int i;
					for (i = 0; i < t->cfg.noverrides; i++)
						if (t->cfg.overrides[i].param == r->param)
							break;
					t->cfg.overrides[i].param = r->param;
					t->cfg.overrides[i].value = val;
					if (i == t->cfg.noverrides)
						t->cfg.noverrides++;
				}
			}
	/* the chart's place must take it: find out before the runs */
	if (csv_probe_dir(o.svg_file)) {
		int e = errno;
		free(pool.t);
		free(rows);
		cli_opts_free(&o);
		return cli_error("--svg %s: cannot write there: %s", o.svg_file, strerror(e));
	}
	rc = pool_run_opts(&pool, &o, err, sizeof(err));
	if (rc) {
		free(pool.t);
		free(rows);
		cli_opts_free(&o);
		return cli_error_code(rc == TLBSIM_EINVAL ? EXIT_USAGE : EXIT_INTERNAL, "%s", err);
	}
	enum q_state st0;
	double q0 = quantity(&pool, ncol, nseeds, 0, md, &st0);
	bool ok = st0 == Q_OK;
	int nrows = 0, missing = 0, noratio = 0;
	if (ok)
		for (int j = 0; j < np; j++) {
			enum q_state lo, hi;
			struct sens_row r = rows[j];
			r.q_lo = quantity(&pool, ncol, nseeds, 1 + 2 * j, md, &lo);
			r.q_hi = quantity(&pool, ncol, nseeds, 2 + 2 * j, md, &hi);
			if (lo == Q_STOPPED || hi == Q_STOPPED) {
				missing++;
				continue;
			}
			if (lo == Q_NO_RATIO || hi == Q_NO_RATIO) {
				noratio++;
				continue;
			}
			r.effect = q0 ? fmax(fabs(r.q_lo - q0), fabs(r.q_hi - q0)) / fabs(q0) * 100 : 0;
			rows[nrows++] = r;
		}
	qsort(rows, (size_t)nrows, sizeof(*rows), row_cmp);
	double noise = ok ? baseline_noise_pct(&pool, ncol, nseeds, md) : 0;
	int sig = cli_pending_signal(NULL);
	char qname[160];
	if (ncol == 2) {
		snprintf(qname, sizeof(qname), "%s ratio (second / first --policy)", mname);
	} else {
		snprintf(qname, sizeof(qname), "%s", mname);
	}
	if (st0 == Q_NO_RATIO) {
		free(pool.t);
		free(rows);
		cli_opts_free(&o);
		return cli_error("sensitivity: %s is 0 under the first --policy: the ratio is "
				 "undefined (choose another --metric)", mname);
	}
	/* a change from 0 is no percentage: every row read +0.00 % and the
	 * parameters that move the metric ranked among the inert ones */
	if (ok && ncol == 1 && q0 == 0) {
		free(pool.t);
		free(rows);
		cli_opts_free(&o);
		return cli_error("sensitivity: %s is 0 at the baseline: a change from 0 is no "
				 "percentage (choose another --metric)", mname);
	}
	if (!ok) {
		free(pool.t);
		free(rows);
		cli_opts_free(&o);
		fprintf(stderr, "tlbsim: note: stopped early (%s) before the baseline finished; "
			"nothing to rank\n", cli_signal_name(sig));
		return sig ? 128 + sig : 0;
	}
	char title[256];
	snprintf(title, sizeof(title), "tlbsim sensitivity %s, profile %s, %d CPUs, +-%d %%%s",
		 res.workload->name, res.profile->name, res.cpus, o.perturb_pct,
		 nseeds > 1 ? ", mean over seeds" : "");
	if (o.json) {
		printf("{\"tool\":\"tlbsim\",\"version\":\"%s\",\"command\":", TLBSIM_VERSION);
		json_string(stdout, cli_cmdline(&o));
		printf(",\"workload\":");
		json_string(stdout, res.workload->name);
		printf(",\"profile\":");
		json_string(stdout, res.profile->name);
		printf(",\"metric\":\"%s\",\"ratio\":%s,\"perturb_pct\":%d,\"seeds\":%d,"
		       "\"baseline\":%.17g,\"noise_pct\":%.4f,\"partial\":%s,\"no_ratio\":%d,"
		       "\"params\":[", mname, ncol == 2 ? "true" : "false", o.perturb_pct, nseeds, q0,
		       noise, missing ? "true" : "false", noratio);
		for (int i = 0; i < nrows; i++)
			printf("%s{\"name\":\"%s\",\"value\":%" PRId64 ",\"low\":%" PRId64
			       ",\"high\":%" PRId64 ",\"at_low\":%.17g,\"at_high\":%.17g,"
			       "\"change_pct\":%.4f}", i ? "," : "", tlbsim_param_desc[rows[i].param].name,
			       rows[i].value, rows[i].lo, rows[i].hi, rows[i].q_lo, rows[i].q_hi,
			       rows[i].effect);
		printf("]}\n");
	} else {
		printf("%s\n", title);
		if (ncol == 2) {
			printf("quantity: %s under", mname);
			for (int c = 1; c >= 0; c--) {
				const char *sep = " ";
				for (int k = 0; k < tlbsim_knob_count(); k++) {
					const char *v = tlbsim_policy_value_name(&pols[c], k);
					const char *w = tlbsim_policy_value_name(&pols[1 - c], k);
					if (strcmp(v, w)) {
						printf("%s%s=%s", sep, tlbsim_knob_get(k)->name, v);
						sep = ",";
					}
				}
				if (c)
					printf(" over");
			}
			printf("\n");
		} else {
			printf("quantity: %s\n", mname);
		}
		printf("baseline: %.6g\n", q0);
		if (nseeds > 1)
			printf("noise: +-%.2f %% (95 %% interval of the per-seed baseline over %d "
			       "seeds); changes within it are not resolved (rows marked ~)\n", noise,
			       nseeds);
		else
			printf("noise: one seed, not estimated (--seeds N measures it)\n");
		printf("%-22s %12s %14s %14s %10s %10s\n", "parameter", "value", "at -", "at +",
		       "change -", "change +");
		for (int i = 0; i < nrows; i++) {
			const struct sens_row *r = &rows[i];
			printf("%-22s %12" PRId64 " %14.6g %14.6g %+9.2f%% %+9.2f%%%s\n",
			       tlbsim_param_desc[r->param].name, r->value, r->q_lo, r->q_hi,
			       q0 ? (r->q_lo - q0) / fabs(q0) * 100 : 0,
			       q0 ? (r->q_hi - q0) / fabs(q0) * 100 : 0,
			       nseeds > 1 && r->effect <= noise ? " ~" : "");
		}
		if (noratio)
			printf("not ranked: %d parameter(s) make %s 0 under the first --policy at "
			       "-%d %% or +%d %% (no ratio)\n", noratio, mname, o.perturb_pct,
			       o.perturb_pct);
		if (missing)
			printf("PARTIAL: %d parameter(s) not measured (stopped early)\n", missing);
	}
	fflush(stdout);
	rc = 0;
	char svg_title[320];	/* a chart of a stopped run says so first */
	snprintf(svg_title, sizeof(svg_title), "%s%s", missing ? "PARTIAL (stopped early) " : "",
		 title);
	if (missing)
		fprintf(stderr, "tlbsim: note: stopped early (%s): %d of %d parameter(s) measured\n",
			cli_signal_name(sig), nrows, np);
	if (write_svg_file(o.svg_file, svg_title, qname, q0, rows, nrows, o.perturb_pct)) {
		fprintf(stderr, "tlbsim: cannot write the chart %s: %s\n", o.svg_file,
			strerror(errno));
		rc = EXIT_INTERNAL;
	} else {
		fputs("tlbsim: chart: ", stderr);
		cli_put_sanitized(stderr, o.svg_file);
		fputc('\n', stderr);
	}
	free(pool.t);
	free(rows);
	cli_opts_free(&o);
	if (sig)
		return 128 + sig;
	return rc;
}
