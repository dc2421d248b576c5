/* chart.c - hand-written SVG line and bar charts (chart.h). */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "cli/chart.h"

/* Okabe-Ito: distinguishable with the common colour-vision deficiencies */
static const char *const palette[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
				      "#E69F00", "#56B4E9", "#000000", "#F0E442"};
#define NPAL (int)(sizeof(palette) / sizeof(palette[0]))

/* the length of the well-formed UTF-8 sequence at s that XML 1.0 allows as a
 * character (not a surrogate, U+FFFE or U+FFFF), or 0 */
static int utf8_len(const unsigned char *s)
{
	unsigned c = s[0];
	int n = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 0;
	if (!n || c > 0xf4)
		return 0;
	uint32_t cp = c & (0x7f >> n);
	for (int i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;	/* also the terminating NUL */
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp == 0xfffe || cp == 0xffff)
		return 0;
	return n;
}

void chart_xml_text(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		switch (c) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		default:
			if (c >= 0x80) {
				int n = utf8_len((const unsigned char *)s);
				if (n) {
					fwrite(s, 1, (size_t)n, f);
					s += n - 1;
				} else {
					fputs("\xEF\xBF\xBD", f);
				}
			} else {
				/* a control character (XML 1.0 has none but tab, which an
				 * attribute turns into a space) as a space: dropped, a name
				 * "a<TAB>b" read as "ab" */
				fputc(c >= 0x20 && c != 0x7f ? c : ' ', f);
			}
		}
	}
}

/*
 * The width in px a text takes at the charts' sans-serif size px: its
 * characters (UTF-8 lead bytes) times 0.62 em, a little over the average
 * advance of DejaVu Sans and Liberation Sans for names like
 * "nested=fullmm,tlb_flush_cond=end" (so a width sized with it holds the
 * text; tests/cli/chromium_svg.sh measures the rendered text).
 */
int chart_text_px(const char *s, double px)
{
	size_t n = 0;
	for (; s && *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	double w = (double)n * 0.62 * px;
	return w > 100000 ? 100000 : (int)ceil(w);
}

static int imax(int a, int b)
{
	return a > b ? a : b;
}

static const char *three(double v, const char *unit, char *buf, size_t len)
{
	double a = fabs(v);
	int dec = a >= 100 ? 0 : a >= 10 ? 1 : 2;
	snprintf(buf, len, "%.*f%s%s", dec, v, *unit ? " " : "", unit);
	return buf;
}

/* the unit chosen after three()'s rounding (999 500 ns is 1.00 ms, not
 * 1000 \u00b5s); whole ns as the table prints them */
const char *chart_time(double ns, char *buf, size_t len)
{
	double a = fabs(ns);
	if (a >= 999.5e6)
		return three(ns / 1e9, "s", buf, len);
	if (a >= 999.5e3)
		return three(ns / 1e6, "ms", buf, len);
	if (a >= 999.5)
		return three(ns / 1e3, "\u00b5s", buf, len);
	snprintf(buf, len, "%.0f ns", ns);
	return buf;
}

const char *chart_count(double v, char *buf, size_t len)
{
	double a = fabs(v);
	if (a >= 999.5e6)
		return three(v / 1e9, "G", buf, len);
	if (a >= 999.5e3)
		return three(v / 1e6, "M", buf, len);
	if (a >= 1e4)
		return three(v / 1e3, "K", buf, len);
	snprintf(buf, len, "%.0f", v);
	return buf;
}

static double nice_step(double range, int target)
{
	if (!(range > 0))
		return 1;
	double raw = range / target, mag = pow(10, floor(log10(raw))), r = raw / mag;
	double s = r <= 1 ? 1 : r <= 2 ? 2 : r <= 2.5 ? 2.5 : r <= 5 ? 5 : 10;
	return s * mag;
}

struct axis {
	double lo, hi, step;
};

/*
 * An axis from lo to hi (the data's range) with about 5 round steps. It stays
 * steppable in doubles, so the tick loops end: the range is kept within
 * +-AXIS_MAX (hi - lo and the step stay finite), and a range too narrow for
 * its magnitude (one value, 1e20 + 1 == 1e20; or values a few ulps apart) is
 * widened around its middle to AXIS_MIN_REL of that magnitude.
 */
#define AXIS_MAX (100 * CHART_VALUE_MAX)
#define AXIS_MIN_REL 1e-9
static void nice_axis(double lo, double hi, bool from_zero, struct axis *a)
{
	lo = fmin(fmax(lo, -AXIS_MAX), AXIS_MAX);
	hi = fmin(fmax(hi, -AXIS_MAX), AXIS_MAX);
	if (from_zero && lo > 0)
		lo = 0;
	if (!(hi > lo))
		hi = lo + 1;
	double mag = fmax(fabs(lo), fabs(hi));
	if (hi - lo < mag * AXIS_MIN_REL) {
		double mid = lo / 2 + hi / 2;
		lo = mid - mag * AXIS_MIN_REL / 2;
		hi = mid + mag * AXIS_MIN_REL / 2;
	}
	a->step = nice_step(hi - lo, 5);
	a->lo = floor(lo / a->step + 1e-9) * a->step;
	a->hi = ceil(hi / a->step - 1e-9) * a->step;
	if (a->hi <= a->lo)
		a->hi = a->lo + a->step;
}

/* the number of ticks lo, lo + step, ..., hi of an axis (a few: nice_step's
 * target is 5 steps) */
static int axis_ticks(const struct axis *a)
{
	double n = floor((a->hi - a->lo) / a->step + 1e-6) + 1;
	return n < 1 ? 1 : n > 100 ? 100 : (int)n;
}

/* a tick's label: 6 significant digits, more when the step needs them to
 * tell neighbouring ticks apart (an axis widened by nice_axis around 1e20) */
static void tick_text(double v, double step, char *buf, size_t len)
{
	if (fabs(v) < step * 1e-6)
		v = 0;
	int prec = 6;
	if (step > 0 && fabs(v) > step * 1e4)
		prec = (int)fmin(17, ceil(log10(fabs(v) / step)) + 2);
	snprintf(buf, len, "%.*g", prec, v);
}

/* ---- line chart ---- */

#define LW 760		/* width */
#define LLEFT 90
#define LRIGHT 200	/* the legend */
#define LTOP 64		/* title and subtitle */
#define PH 380		/* one panel */
#define PTOP 34		/* panel title */
#define PBOT 56		/* x ticks and label */

static double xmap(const struct line_chart *c, double x)
{
	return c->logx ? log2(x) : x;
}

void chart_line_svg(FILE *f, const struct line_chart *c)
{
	/* a panel as tall as its legend needs (beyond about 17 series the
	 * entries ran off the canvas, or into the next panel's legend) */
	int maxs = 0;
	for (int p = 0; p < c->npanels; p++)
		maxs = imax(maxs, c->p[p].nseries);
	const int ph = imax(PH, PTOP + 8 + (c->legend_title ? 20 : 0) + maxs * 20 + 8);
	int h = LTOP + c->npanels * ph + 8;
	/* the plot as wide as its category labels need, the legend as wide as
	 * its names, the whole as wide as the title */
	int pw = LW - LLEFT - LRIGHT, lw = LRIGHT;
	int catw = 0;
	for (int i = 0; i < c->ncat; i++)
		catw = imax(catw, chart_text_px(c->cat[i], 12) + 10);
	if (c->ncat && catw * c->ncat > pw)
		pw = catw * c->ncat;
	lw = imax(lw, 18 + chart_text_px(c->legend_title, 12) * 11 / 10 + 12);
	for (int p = 0; p < c->npanels; p++)
		for (int i = 0; i < c->p[p].nseries; i++)
			lw = imax(lw, 18 + 28 + chart_text_px(c->p[p].s[i].name, 12) + 12);
	int W = LLEFT + pw + lw;
	W = imax(W, LLEFT + chart_text_px(c->title, 16) * 11 / 10 + 12);
	W = imax(W, LLEFT + chart_text_px(c->subtitle, 12) + 12);
	for (int p = 0; p < c->npanels; p++)
		W = imax(W, LLEFT + chart_text_px(c->p[p].title, 12) * 11 / 10 + 12);
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		   "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		   "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">\n"
		   "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"white\"/>\n",
		W, h, W, h, W, h);
	fprintf(f, "<text class=\"title\" x=\"%d\" y=\"24\" font-size=\"16\" font-weight=\"bold\">", LLEFT);
	chart_xml_text(f, c->title);
	fprintf(f, "</text>\n");
	if (c->subtitle) {
		fprintf(f, "<text class=\"subtitle\" x=\"%d\" y=\"44\" fill=\"#444\">", LLEFT);
		chart_xml_text(f, c->subtitle);
		fprintf(f, "</text>\n");
	}
	for (int p = 0; p < c->npanels; p++) {
		const struct chart_panel *pn = &c->p[p];
		int top = LTOP + p * ph + PTOP, bot = LTOP + (p + 1) * ph - PBOT;
		int left = LLEFT, right = LLEFT + pw;
		/* ranges */
		double xlo = INFINITY, xhi = -INFINITY, ylo = INFINITY, yhi = -INFINITY;
		bool neg = false;
		for (int s = 0; s < pn->nseries; s++)
			for (int i = 0; i < pn->s[s].n; i++) {
				double x = xmap(c, pn->s[s].x[i]), y = pn->s[s].y[i];
				double e = pn->s[s].ci ? pn->s[s].ci[i] : 0;
				xlo = fmin(xlo, x);
				xhi = fmax(xhi, x);
				ylo = fmin(ylo, y - e);
				yhi = fmax(yhi, y + e);
				neg |= y < 0;
			}
		if (xlo > xhi) {
			xlo = 0;
			xhi = 1;
			ylo = 0;
			yhi = 1;
		}
		struct axis ya, xa;
		nice_axis(neg ? ylo : fmax(0, ylo), yhi, !neg, &ya);
		if (c->ncat) {
			xa.lo = -0.5;
			xa.hi = c->ncat - 0.5;
			xa.step = 1;
		} else if (c->logx) {
			xa.lo = xlo - 0.3;
			xa.hi = xhi + 0.3;
			xa.step = 1;
		} else {
			nice_axis(xlo, xhi, false, &xa);
		}
#define PX(x) (left + ((x) - xa.lo) / (xa.hi - xa.lo) * (right - left))
#define PY(y) (bot - ((y) - ya.lo) / (ya.hi - ya.lo) * (bot - top))
		if (pn->title) {
			fprintf(f, "<text class=\"panel-title\" x=\"%d\" y=\"%d\" font-weight=\"bold\">", left,
				top - 12);
			chart_xml_text(f, pn->title);
			fprintf(f, "</text>\n");
		}
		/* grid and y ticks */
		char tb[64];
		for (int i = 0, n = axis_ticks(&ya); i < n; i++) {
			double v = ya.lo + i * ya.step, y = PY(v);
			fprintf(f, "<line class=\"grid\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" "
				   "stroke=\"#e4e4e4\"/>\n", left, y, right, y);
			tick_text(v, ya.step, tb, sizeof(tb));
			fprintf(f, "<text class=\"tick\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
				left - 6, y + 4, tb);
		}
		/* x ticks */
		if (c->ncat) {
			for (int i = 0; i < c->ncat; i++) {
				fprintf(f, "<text class=\"tick\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">",
					PX(i), bot + 18);
				chart_xml_text(f, c->cat[i]);
				fprintf(f, "</text>\n");
			}
		} else if (c->logx) {
			for (int e = (int)ceil(xa.lo); e <= (int)floor(xa.hi); e++) {
				tick_text(exp2(e), 1, tb, sizeof(tb));
				fprintf(f, "<line class=\"grid\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" "
					   "stroke=\"#f0f0f0\"/>\n<text class=\"tick\" x=\"%.1f\" y=\"%d\" "
					   "text-anchor=\"middle\">%s</text>\n", PX(e), top, PX(e), bot, PX(e),
					bot + 18, tb);
			}
		} else {
			for (int i = 0, n = axis_ticks(&xa); i < n; i++) {
				double v = xa.lo + i * xa.step;
				tick_text(v, xa.step, tb, sizeof(tb));
				fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#333\"/>\n"
					   "<text class=\"tick\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s"
					   "</text>\n", PX(v), bot, PX(v), bot + 5, PX(v), bot + 18, tb);
			}
		}
		/* axes */
		fprintf(f, "<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#333\"/>\n",
			left, bot, right, bot);
		fprintf(f, "<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#333\"/>\n",
			left, top, left, bot);
		fprintf(f, "<text class=\"xlabel\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">",
			(left + right) / 2, bot + 40);
		chart_xml_text(f, c->xlabel);
		fprintf(f, "</text>\n<text class=\"ylabel\" transform=\"translate(%d,%d) rotate(-90)\" "
			   "text-anchor=\"middle\">", left - 62, (top + bot) / 2);
		chart_xml_text(f, c->ylabel);
		fprintf(f, "</text>\n");
		/* series */
		for (int s = 0; s < pn->nseries; s++) {
			const struct chart_series *se = &pn->s[s];
			const char *col = palette[s % NPAL];
			fprintf(f, "<g class=\"series-group\">\n<polyline class=\"series\" fill=\"none\" "
				   "stroke=\"%s\" stroke-width=\"2\"%s points=\"", col,
				s >= NPAL ? " stroke-dasharray=\"6 3\"" : "");
			for (int i = 0; i < se->n; i++)
				fprintf(f, "%s%.1f,%.1f", i ? " " : "", PX(xmap(c, se->x[i])), PY(se->y[i]));
			fprintf(f, "\"><title>");
			chart_xml_text(f, se->name);
			fprintf(f, "</title></polyline>\n");
			for (int i = 0; i < se->n; i++) {
				double x = PX(xmap(c, se->x[i]));
				if (se->ci && se->ci[i] > 0) {
					double y1 = PY(se->y[i] - se->ci[i]), y2 = PY(se->y[i] + se->ci[i]);
					fprintf(f, "<line class=\"err\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
						   "y2=\"%.1f\" stroke=\"%s\"/>\n<line class=\"err\" x1=\"%.1f\" "
						   "y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>\n<line "
						   "class=\"err\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
						   "stroke=\"%s\"/>\n", x, y1, x, y2, col, x - 4, y1, x + 4, y1, col,
						x - 4, y2, x + 4, y2, col);
				}
				fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\"/>\n", x,
					PY(se->y[i]), col);
			}
			fprintf(f, "</g>\n");
		}
		/* legend */
		int lx = right + 18, ly = top + 8;
		if (c->legend_title) {
			fprintf(f, "<text class=\"legend-title\" x=\"%d\" y=\"%d\" font-weight=\"bold\">",
				lx, ly);
			chart_xml_text(f, c->legend_title);
			fprintf(f, "</text>\n");
			ly += 20;
		}
		for (int s = 0; s < pn->nseries; s++, ly += 20) {
			const char *col = palette[s % NPAL];
			fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" "
				   "stroke-width=\"2\"%s/>\n<circle cx=\"%d\" cy=\"%d\" r=\"3.5\" fill=\"%s\"/>\n",
				lx, ly - 4, lx + 22, ly - 4, col, s >= NPAL ? " stroke-dasharray=\"6 3\"" : "",
				lx + 11, ly - 4, col);
			fprintf(f, "<text class=\"legend\" x=\"%d\" y=\"%d\">", lx + 28, ly);
			chart_xml_text(f, pn->s[s].name);
			fprintf(f, "</text>\n");
		}
#undef PX
#undef PY
	}
	fprintf(f, "</svg>\n");
}

/* ---- grouped bar chart ---- */

void chart_bar_svg(FILE *f, const struct bar_chart *c)
{
	int bw = 24, gap = 34, left = 90, legend = 220;
	/* a group as wide as its bars and its name; the legend as wide as its
	 * names; the whole as wide as the title */
	int gw = c->nbars * bw + gap;
	for (int g = 0; g < c->ngroups; g++)
		gw = imax(gw, chart_text_px(c->group[g], 12) + 12);
	for (int b = 0; b < c->nbars; b++)
		legend = imax(legend, 20 + 20 + chart_text_px(c->bar[b], 12) + 12);
	int w = left + c->ngroups * gw + legend;
	w = imax(w, 640);
	w = imax(w, left + chart_text_px(c->title, 16) * 11 / 10 + 12);
	w = imax(w, left + chart_text_px(c->subtitle, 12) + 12);
	int top = 96, bot = 396, h = 450;
	int right = left + c->ngroups * gw;
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		   "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		   "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">\n"
		   "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"white\"/>\n",
		w, h, w, h, w, h);
	fprintf(f, "<text class=\"title\" x=\"%d\" y=\"24\" font-size=\"16\" font-weight=\"bold\">", left);
	chart_xml_text(f, c->title);
	fprintf(f, "</text>\n");
	if (c->subtitle) {
		fprintf(f, "<text class=\"subtitle\" x=\"%d\" y=\"44\" fill=\"#444\">", left);
		chart_xml_text(f, c->subtitle);
		fprintf(f, "</text>\n");
	}
	double hi = c->ref;
	for (int g = 0; g < c->ngroups; g++)
		for (int b = 0; b < c->nbars; b++) {
			double v = c->v[g * c->nbars + b] + (c->ci ? c->ci[g * c->nbars + b] : 0);
			if (isfinite(v))
				hi = fmax(hi, v);
		}
	struct axis ya;
	nice_axis(0, hi * 1.02, true, &ya);
#define PY(y) (bot - ((y) - ya.lo) / (ya.hi - ya.lo) * (bot - top))
	char tb[64];
	for (int i = 0, n = axis_ticks(&ya); i < n; i++) {
		double v = ya.lo + i * ya.step, y = PY(v);
		tick_text(v, ya.step, tb, sizeof(tb));
		fprintf(f, "<line class=\"grid\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" "
			   "stroke=\"#e4e4e4\"/>\n<text class=\"tick\" x=\"%d\" y=\"%.1f\" "
			   "text-anchor=\"end\">%s</text>\n", left, y, right, y, left - 6, y + 4, tb);
	}
	fprintf(f, "<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#333\"/>\n",
		left, bot, right, bot);
	fprintf(f, "<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#333\"/>\n",
		left, top, left, bot);
	fprintf(f, "<text class=\"ylabel\" transform=\"translate(%d,%d) rotate(-90)\" "
		   "text-anchor=\"middle\">", left - 52, (top + bot) / 2);
	chart_xml_text(f, c->ylabel);
	fprintf(f, "</text>\n");
	for (int g = 0; g < c->ngroups; g++) {
		int gx = left + g * gw + (gw - c->nbars * bw) / 2;
		fprintf(f, "<text class=\"group\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">",
			gx + c->nbars * bw / 2, bot + 18);
		chart_xml_text(f, c->group[g]);
		fprintf(f, "</text>\n");
		for (int b = 0; b < c->nbars; b++) {
			double v = c->v[g * c->nbars + b];
			if (!isfinite(v))
				continue;
			double x = gx + b * bw, y = PY(v);
			fprintf(f, "<rect class=\"bar\" x=\"%.1f\" y=\"%.1f\" width=\"%d\" height=\"%.1f\" "
				   "fill=\"%s\"><title>", x, y, bw - 3, bot - y, palette[b % NPAL]);
			chart_xml_text(f, c->bar[b]);
			fprintf(f, ": ");
			chart_xml_text(f, c->group[g]);
			if (c->label) {
				fprintf(f, " ");
				chart_xml_text(f, c->label[g * c->nbars + b]);
			}
			fprintf(f, "</title></rect>\n");
			double e = c->ci ? c->ci[g * c->nbars + b] : 0;
			double cx = x + (bw - 3) / 2.0;
			if (e > 0) {
				double y1 = PY(v - e < 0 ? 0 : v - e), y2 = PY(v + e);
				fprintf(f, "<line class=\"err\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
					   "stroke=\"#222\"/>\n<line class=\"err\" x1=\"%.1f\" y1=\"%.1f\" "
					   "x2=\"%.1f\" y2=\"%.1f\" stroke=\"#222\"/>\n", cx, y1, cx, y2, cx - 4, y2,
					cx + 4, y2);
				y = fmin(y, y2);
			}
			if (c->label) {
				fprintf(f, "<text class=\"value\" font-size=\"10\" transform=\"translate(%.1f,"
					   "%.1f) rotate(-90)\">", cx + 3.5, y - 4);
				chart_xml_text(f, c->label[g * c->nbars + b]);
				fprintf(f, "</text>\n");
			}
		}
	}
	if (c->ref > 0)
		fprintf(f, "<line class=\"ref\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#888\" "
			   "stroke-dasharray=\"5 4\"/>\n", left, PY(c->ref), right, PY(c->ref));
	int lx = right + 20, ly = top + 8;
	for (int b = 0; b < c->nbars; b++, ly += 20) {
		fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"14\" height=\"12\" fill=\"%s\"/>\n", lx, ly - 10,
			palette[b % NPAL]);
		fprintf(f, "<text class=\"legend\" x=\"%d\" y=\"%d\">", lx + 20, ly);
		chart_xml_text(f, c->bar[b]);
		fprintf(f, "</text>\n");
	}
#undef PY
	fprintf(f, "</svg>\n");
}
