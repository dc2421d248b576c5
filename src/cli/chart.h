/*
 * chart.h - hand-written SVG charts (no dependencies): line charts for
 * `tlbsim plot` and grouped bar charts for `compare --svg`. The SVG is plain
 * SVG 1.1 (lines, polylines, circles, rects, text) that browsers and
 * terminal image viewers (through librsvg or resvg) render alike.
 *
 * Structure (tests rely on it): the axes are <line class="axis">, each
 * series a <polyline class="series"> (line chart) or its bars <rect
 * class="bar">, error bars <line class="err">, each legend entry a <text
 * class="legend">.
 */
#ifndef TLBSIM_CLI_CHART_H
#define TLBSIM_CLI_CHART_H

#include <stdbool.h>
#include <stdio.h>

/* The largest magnitude a chart takes as data (an x, a y, an error bar);
 * the axes reach a little beyond it (chart.c AXIS_MAX), so y plus its error
 * bar stays on the chart and every distance between ticks is finite. */
#define CHART_VALUE_MAX 1e300

/* Text for an XML document (an SVG's text, a JUnit attribute): XML's five
 * specials escaped, control characters as spaces, and a byte that does not
 * start a well-formed UTF-8 character XML allows (a label or path cut inside
 * one, a file name in another encoding) written as U+FFFD, so the document
 * stays well-formed whatever the bytes. */
void chart_xml_text(FILE *f, const char *s);

struct chart_series {
	const char *name;
	int n;
	double *x, *y, *ci;	/* ci: half-width of the error bar; NULL: none */
};

struct chart_panel {
	const char *title;	/* facet: "profile=x86-24"; NULL: none */
	int nseries;
	struct chart_series *s;
};

struct line_chart {
	const char *title, *subtitle;
	const char *xlabel, *ylabel;	/* with their units */
	const char *legend_title;	/* the --by column; NULL: none */
	bool logx;			/* log2 x axis (x > 0) */
	/* categorical x: x values are 0..ncat-1 and these their labels */
	int ncat;
	const char *const *cat;
	int npanels;
	const struct chart_panel *p;
};

/* y values in the unit the label names: the caller divides by scale */
void chart_line_svg(FILE *f, const struct line_chart *c);

struct bar_chart {
	const char *title, *subtitle, *ylabel;
	int ngroups, nbars;		/* groups (metrics) x bars (columns) */
	const char *const *group;	/* ngroups names */
	const char *const *bar;		/* nbars legend names */
	const double *v;		/* ngroups x nbars heights */
	const double *ci;		/* the same, error half-widths; NULL: none */
	const char *const *label;	/* ngroups x nbars texts over the bars; NULL: none */
	double ref;			/* a dashed reference line at this height (0: none) */
};

void chart_bar_svg(FILE *f, const struct bar_chart *c);

/* The width in px, a little generous, that text s takes in the charts'
 * sans-serif at size px (0 for NULL). */
int chart_text_px(const char *s, double px);

/* Human units: value in ns as "19.8 s", "46 µs"; a count as "1.6 M", "392 K".
 * Three significant digits. */
const char *chart_time(double ns, char *buf, size_t len);
const char *chart_count(double v, char *buf, size_t len);

#endif
