/*
 * cmd_plot.c - `tlbsim plot FILE.csv --x COL --y COL [--by COL] [--facet COL]`:
 * a line chart (SVG, chart.c) of a result CSV (sweep, run/compare --csv):
 * one line per value of --by, one panel per value of --facet, error bars
 * from the METRIC_ci95 column when the file has one (--seeds > 1).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/chart.h"
#include "cli/cli.h"
#include "cli/csv.h"

#define MAX_WHERE 8

struct plot_opts {
	const char *file, *x, *y, *by, *facet, *title, *output;
	const char *where[MAX_WHERE];
	int nwhere;
	bool logx;
};

static void plot_help(void)
{
	printf("usage: tlbsim plot FILE.csv --x COL --y COL [--by COL] [--facet COL] [options]\n\n"
	       "Draw a line chart (SVG) of a result CSV (tlbsim sweep, run/compare --csv): y against\n"
	       "x, one line per value of --by, one panel per value of --facet, error bars from the\n"
	       "column Y_ci95 when there is one (sweep --seeds N). Times are simulated.\n\n"
	       "options:\n"
	       "  --x COL                the x axis: a column (numbers; other values are categories)\n"
	       "  --y COL                the y axis: a metric; 'wall' finds wall_ns or wall_ns_mean\n"
	       "  --by COL               one line per value of COL (e.g. policy)\n"
	       "  --facet COL            one panel per value of COL (e.g. profile)\n"
	       "  --where COL=VALUE      only the rows with that value (repeatable, at most %d)\n"
	       "  --logx                 a log2 x axis (x > 0: threads, CPUs)\n"
	       "  --title TEXT           the title (default: workload, y and x)\n"
	       "  -o, --output FILE      write the SVG there (atomically); default stdout\n"
	       "  -h, --help             this help\n\n"
	       "Rows that share the x, --by and --facet values must not differ in another\n"
	       "configuration column (give --by, --facet or --where for it).\n"
	       "exit status: 0 ok, 2 bad input (one line on stderr)\n", MAX_WHERE);
}

static int parse_plot_args(int argc, char **argv, struct plot_opts *po)
{
	memset(po, 0, sizeof(*po));
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char **dst = NULL;
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			plot_help();
			return -1;
		}
		if (strcmp(a, "--logx") == 0) {
			po->logx = true;
			continue;
		}
		if (strcmp(a, "--x") == 0)
			dst = &po->x;
		else if (strcmp(a, "--y") == 0)
			dst = &po->y;
		else if (strcmp(a, "--by") == 0)
			dst = &po->by;
		else if (strcmp(a, "--facet") == 0)
			dst = &po->facet;
		else if (strcmp(a, "--title") == 0)
			dst = &po->title;
		else if (strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0)
			dst = &po->output;
		else if (strcmp(a, "--where") == 0) {
			if (po->nwhere >= MAX_WHERE)
				return cli_error("plot: at most %d --where options", MAX_WHERE);
			dst = &po->where[po->nwhere++];
		} else if (a[0] == '-' && a[1]) {
			return cli_error("plot: unknown option '%s' (see tlbsim plot --help)", a);
		} else {
			if (po->file)
				return cli_error("plot: unexpected argument '%s'", a);
			po->file = a;
			continue;
		}
		if (i + 1 >= argc || !argv[i + 1][0])
			return cli_error("plot: %s needs a value", a);
		*dst = argv[++i];
	}
	if (!po->file)
		return cli_error("plot: missing FILE.csv (a tlbsim sweep or --csv output)");
	if (!po->x || !po->y)
		return cli_error("plot: give --x COL and --y COL");
	return 0;
}

/* a number a chart can draw: finite and at most CHART_VALUE_MAX in
 * magnitude; one too small for a normal double (1e-320, strtod's ERANGE on
 * underflow) is a number too, one too large (1e400) is not */
static bool number(const char *s, double *x)
{
	char *end;
	*x = 0;
	if (!*s)
		return false;
	*x = strtod(s, &end);
	return !*end && isfinite(*x) && fabs(*x) <= CHART_VALUE_MAX;
}

/* s is all a number (strtod) but not one a chart draws: beyond
 * CHART_VALUE_MAX (1.7e308: the axis from -x to x has no finite length), or
 * not finite (1e400, inf; they made the x axis one of categories) */
/* one x: the same text, or numbers of one value (1 and 1.0 land on one
 * point of a numeric axis: drawn as a vertical jump) */
static bool same_x(const char *a, const char *b)
{
	double x, y;
	return strcmp(a, b) == 0 || (number(a, &x) && number(b, &y) && x == y);
}

static bool too_large(const char *s)
{
	char *end;
	double x = strtod(s, &end);
	return *s && !*end && (!isfinite(x) || fabs(x) > CHART_VALUE_MAX);
}

static int col_or_error(const struct csv_table *t, const char *file, const char *what,
			const char *name)
{
	int c = csv_col(t, name);
	if (c < 0)
		cli_error("plot: %s %s: no such column in %s", what, name, file);
	return c;
}

/* index of s in v[0..n), appending it when absent; -1 if full */
static int intern(const char **v, int *n, int cap, const char *s)
{
	for (int i = 0; i < *n; i++)
		if (strcmp(v[i], s) == 0)
			return i;
	if (*n >= cap)
		return -1;
	v[*n] = s;
	return (*n)++;
}

struct plot_data {
	struct chart_panel *panels;
	struct chart_series *series;	/* npanels x nser */
	int npanels, nser;
};

static void write_chart(FILE *f, const void *arg)
{
	chart_line_svg(f, arg);
}

/* a point of a series while its rows are gathered */
struct xy {
	double x, y, ci;
};

static int xy_cmp(const void *a, const void *b)
{
	const struct xy *p = a, *q = b;
	return (p->x > q->x) - (p->x < q->x);
}

#define MAX_SERIES 64
#define MAX_PANELS 32
#define MAX_CATS 256

int cmd_plot(int argc, char **argv)
{
	struct plot_opts po;
	int rc = parse_plot_args(argc, argv, &po);
	if (rc)
		return rc < 0 ? 0 : rc;
	struct csv_table t;
	char err[TLBSIM_ERRLEN + 256];
	if (csv_read(po.file, &t, err, sizeof(err)))
		return cli_error("plot: %s", err);
	struct chart_series *ser = NULL;
	struct chart_panel *pan = NULL;
	double *xs = NULL;
	char ***keep = NULL, ***dup = NULL;
	struct xy *pt = NULL;
	rc = 0;
	int xc = col_or_error(&t, po.file, "--x", po.x);
	if (xc < 0) {
		rc = EXIT_USAGE;
		goto done;
	}
	/* y: the name, or NAME_ns, NAME_mean, NAME_ns_mean */
	int yc = -1;
	char yname[160], ciname[200];
	static const char *const suffix[] = {"", "_ns", "_mean", "_ns_mean"};
	for (int i = 0; i < 4 && yc < 0; i++) {
		snprintf(yname, sizeof(yname), "%s%s", po.y, suffix[i]);
		yc = csv_col(&t, yname);
	}
	if (yc < 0) {
		rc = cli_error("plot: --y %s: no such column in %s (nor %s_ns, %s_mean)", po.y, po.file,
			       po.y, po.y);
		goto done;
	}
	snprintf(ciname, sizeof(ciname), "%.*s_ci95",
		 (int)(strlen(yname) >= 5 && strcmp(yname + strlen(yname) - 5, "_mean") == 0
			       ? strlen(yname) - 5 : strlen(yname)), yname);
	int cic = csv_col(&t, ciname);
	int bc = -1, fc = -1;
	if (po.by && (bc = col_or_error(&t, po.file, "--by", po.by)) < 0) {
		rc = EXIT_USAGE;
		goto done;
	}
	if (po.facet && (fc = col_or_error(&t, po.file, "--facet", po.facet)) < 0) {
		rc = EXIT_USAGE;
		goto done;
	}
	int wc[MAX_WHERE];
	const char *wv[MAX_WHERE];
	for (int i = 0; i < po.nwhere; i++) {
		const char *eq = strchr(po.where[i], '=');
		if (!eq || eq == po.where[i]) {
			rc = cli_error("plot: --where %s: want COL=VALUE", po.where[i]);
			goto done;
		}
		char name[128];
		snprintf(name, sizeof(name), "%.*s", (int)(eq - po.where[i]), po.where[i]);
		if ((wc[i] = col_or_error(&t, po.file, "--where", name)) < 0) {
			rc = EXIT_USAGE;
			goto done;
		}
		wv[i] = eq + 1;
	}
	/* the rows kept */
	keep = calloc((size_t)(t.nrows ? t.nrows : 1), sizeof(*keep));
	xs = calloc((size_t)(t.nrows ? t.nrows : 1) * 3, sizeof(*xs));
	if (!keep || !xs) {
		rc = cli_error_code(EXIT_INTERNAL, "out of memory");
		goto done;
	}
	int nk = 0;
	bool numeric_x = true;
	for (int r = 0; r < t.nrows; r++) {
		bool ok = true;
		for (int i = 0; i < po.nwhere; i++)
			ok &= strcmp(t.rows[r][wc[i]], wv[i]) == 0;
		if (!ok)
			continue;
		double v;
		const char *bad = NULL, *what = "is not a finite number";
		if (!number(t.rows[r][yc], &v))
			bad = yname;
		else if (too_large(t.rows[r][xc]))
			bad = po.x;
		else if (cic >= 0 && (!number(t.rows[r][cic], &v) || v < 0))
			bad = ciname, what = "is not a finite number >= 0";
		if (bad) {
			int c = bad == yname ? yc : bad == po.x ? xc : cic;
			if (too_large(t.rows[r][c]))
				what = "is not a finite number of at most 1e300";
			rc = cli_error("plot: %s: row %d: %s '%s' %s", po.file, r + 2, bad,
				       t.rows[r][c], what);
			goto done;
		}
		numeric_x &= number(t.rows[r][xc], &v);
		keep[nk++] = t.rows[r];
	}
	if (!nk) {
		rc = cli_error("plot: %s: no rows%s", po.file, po.nwhere ? " match --where" : "");
		goto done;
	}
	if (po.logx && !numeric_x) {
		rc = cli_error("plot: --logx: column %s has values that are not numbers", po.x);
		goto done;
	}
	/* facets, series, categories in order of first appearance */
	const char *facets[MAX_PANELS], *names[MAX_SERIES], *cats[MAX_CATS];
	int nf = 0, ns = 0, ncat = 0;
	for (int i = 0; i < nk; i++) {
		char **row = keep[i];
		if (intern(facets, &nf, MAX_PANELS, fc >= 0 ? row[fc] : "") < 0) {
			rc = cli_error("plot: --facet %s: more than %d values", po.facet, MAX_PANELS);
			goto done;
		}
		if (intern(names, &ns, MAX_SERIES, bc >= 0 ? row[bc] : yname) < 0) {
			rc = cli_error("plot: --by %s: more than %d values", po.by, MAX_SERIES);
			goto done;
		}
		if (!numeric_x && intern(cats, &ncat, MAX_CATS, row[xc]) < 0) {
			rc = cli_error("plot: --x %s: more than %d categories", po.x, MAX_CATS);
			goto done;
		}
		double x;
		if (po.logx && number(row[xc], &x) && x <= 0) {
			rc = cli_error("plot: --logx: %s has the value %s (want > 0)", po.x, row[xc]);
			goto done;
		}
	}
	/* the same x, series and panel twice: which column tells them apart
	 * (neighbours once sorted by those columns; pairs of rows took minutes
	 * for large files) */
	int nconf = csv_config_cols(&t);
	if (nconf < 0)
		nconf = t.ncols;
	dup = malloc((size_t)nk * sizeof(*dup));
	if (!dup) {
		rc = cli_error_code(EXIT_INTERNAL, "out of memory");
		goto done;
	}
	memcpy(dup, keep, (size_t)nk * sizeof(*dup));
	int sc[3], nsc = 0;
	sc[nsc++] = xc;
	if (bc >= 0)
		sc[nsc++] = bc;
	if (fc >= 0)
		sc[nsc++] = fc;
	csv_sort_rows(dup, nk, sc, nsc);
	for (int i = 0; i + 1 < nk; i++) {
		char **a = dup[i], **b = dup[i + 1];
		if (!same_x(a[xc], b[xc]) || (bc >= 0 && strcmp(a[bc], b[bc])) ||
		    (fc >= 0 && strcmp(a[fc], b[fc])))
			continue;
		int d = -1;
		for (int c = 0; c < nconf && d < 0; c++)
			if (c != xc && strcmp(a[c], b[c]))
				d = c;
		if (d < 0 && strcmp(a[xc], b[xc])) {
			rc = cli_error("plot: %s: rows %s=%s and %s=%s are one x", po.file, po.x,
				       a[xc], po.x, b[xc]);
		} else if (d < 0) {
			rc = cli_error("plot: %s: rows %s=%s appear twice", po.file, po.x, a[xc]);
		} else {
			rc = cli_error("plot: rows with %s=%s differ in %s (%s, %s): give --by %s, "
				       "--facet %s or --where %s=VALUE", po.x, a[xc], t.cols[d], a[d],
				       b[d], t.cols[d], t.cols[d], t.cols[d]);
		}
		goto done;
	}
	/* units: times in ns scale to the largest value; counts to K or M */
	double ymax = 0;
	for (int i = 0; i < nk; i++) {
		double v;
		number((keep[i])[yc], &v);
		ymax = fmax(ymax, fabs(v));
	}
	double scale = 1;
	const char *unit = "";
	bool is_time = strstr(yname, "_ns") != NULL;
	if (is_time) {
		scale = ymax >= 1e9 ? 1e9 : ymax >= 1e6 ? 1e6 : ymax >= 1e3 ? 1e3 : 1;
		unit = scale == 1e9 ? "s" : scale == 1e6 ? "ms" : scale == 1e3 ? "\u00b5s" : "ns";
	} else if (ymax >= 1e7) {
		scale = 1e6;
		unit = "millions";
	} else if (ymax >= 1e4) {
		scale = 1e3;
		unit = "thousands";
	}
	/* the base name: wall_ns_mean -> wall */
	char base[160];
	snprintf(base, sizeof(base), "%s", yname);
	size_t bl = strlen(base);
	if (bl > 5 && strcmp(base + bl - 5, "_mean") == 0)
		base[bl -= 5] = 0;
	if (is_time && bl > 3 && strcmp(base + bl - 3, "_ns") == 0)
		base[bl - 3] = 0;
	char ylabel[256], xlabel[160], title[512], subtitle[768], legend[160];
	if (is_time)
		snprintf(ylabel, sizeof(ylabel), "%s (%s, simulated)", base, unit);
	else if (strncmp(base, "ops_per_sec", 11) == 0)
		snprintf(ylabel, sizeof(ylabel), "%s (%sops per simulated second)", base,
			 *unit ? (scale == 1e6 ? "millions of " : "thousands of ") : "");
	else if (*unit)
		snprintf(ylabel, sizeof(ylabel), "%s (%s)", base, unit);
	else
		snprintf(ylabel, sizeof(ylabel), "%s", base);
	snprintf(xlabel, sizeof(xlabel), "%s%s", po.x, po.logx ? " (log scale)" : "");
	int wlc = csv_col(&t, "workload");
	if (po.title)
		snprintf(title, sizeof(title), "%s", po.title);
	else
		snprintf(title, sizeof(title), "%s%s%s vs %s", wlc >= 0 ? (keep[0])[wlc] : "",
			 wlc >= 0 ? ": " : "", base, po.x);
	/* the subtitle: configuration columns with one value in every row */
	size_t sl = 0;
	subtitle[0] = 0;
	for (int c = 0; c < nconf; c++) {
		if (c == xc || c == bc || c == fc || c == wlc)
			continue;
		bool same = true;
		for (int i = 1; i < nk && same; i++)
			same = strcmp((keep[i])[c], (keep[0])[c]) == 0;
		if (!same || !(keep[0])[c][0])
			continue;
		sl += (size_t)snprintf(subtitle + sl, sl < sizeof(subtitle) ? sizeof(subtitle) - sl : 0,
				       "%s%s %s", sl ? ", " : "", t.cols[c], (keep[0])[c]);
	}
	if (cic >= 0 && sl < sizeof(subtitle))
		snprintf(subtitle + sl, sizeof(subtitle) - sl, "%serror bars: 95 %% confidence interval",
			 sl ? "; " : "");
	snprintf(legend, sizeof(legend), "%s", po.by ? po.by : "");
	/* the series of every panel */
	ser = calloc((size_t)nf * (size_t)ns, sizeof(*ser));
	pan = calloc((size_t)nf, sizeof(*pan));
	double *buf = calloc((size_t)nk * 3, sizeof(double));
	pt = malloc((size_t)nk * sizeof(*pt));
	if (!ser || !pan || !buf || !pt) {
		free(buf);
		rc = cli_error_code(EXIT_INTERNAL, "out of memory");
		goto done;
	}
	free(xs);
	xs = buf;
	char ptitle[MAX_PANELS][192];
	int used = 0;
	for (int p = 0; p < nf; p++) {
		pan[p].s = &ser[p * ns];
		if (fc >= 0) {
			snprintf(ptitle[p], sizeof(ptitle[p]), "%s %s", po.facet, facets[p]);
			pan[p].title = ptitle[p];
		}
		for (int s = 0; s < ns; s++) {
			struct chart_series *se = &pan[p].s[pan[p].nseries];
			se->name = names[s];
			se->x = &xs[used];
			se->y = &xs[nk + used];
			se->ci = cic >= 0 ? &xs[2 * nk + used] : NULL;
			for (int i = 0; i < nk; i++) {
				char **row = keep[i];
				if ((fc >= 0 && strcmp(row[fc], facets[p])) ||
				    strcmp(bc >= 0 ? row[bc] : yname, names[s]))
					continue;
				double x = 0, y, e = 0;
				if (numeric_x)
					number(row[xc], &x);
				else
					x = intern(cats, &ncat, MAX_CATS, row[xc]);
				number(row[yc], &y);
				if (cic >= 0 && !number(row[cic], &e))
					e = 0;
				pt[se->n++] = (struct xy){x, y / scale, e / scale};
			}
			/* in x order (one point per x: the rows were checked above) */
			qsort(pt, (size_t)se->n, sizeof(*pt), xy_cmp);
			for (int k = 0; k < se->n; k++) {
				se->x[k] = pt[k].x;
				se->y[k] = pt[k].y;
				if (se->ci)
					se->ci[k] = pt[k].ci;
			}
			used += se->n;
			if (se->n)
				pan[p].nseries++;
		}
	}
	struct line_chart ch = {
		.title = title,
		.subtitle = subtitle[0] ? subtitle : NULL,
		.xlabel = xlabel,
		.ylabel = ylabel,
		.legend_title = po.by ? legend : NULL,
		.logx = po.logx,
		.ncat = numeric_x ? 0 : ncat,
		.cat = cats,
		.npanels = nf,
		.p = pan,
	};
	if (po.output) {
		/* a place that takes no file is the user's (exit 2); a write
		 * that fails there is the host's (exit 3) */
		if (csv_probe_dir(po.output))
			rc = cli_error("plot: -o %s: cannot write there: %s", po.output,
				       strerror(errno));
		else if (atomic_write(po.output, write_chart, &ch))
			rc = cli_error_code(EXIT_INTERNAL, "plot: -o %s: cannot write: %s", po.output,
					    strerror(errno));
	} else {
		chart_line_svg(stdout, &ch);
	}
done:
	free(ser);
	free(pan);
	free(xs);
	free(keep);
	free(dup);
	free(pt);
	csv_free(&t);
	return rc;
}
