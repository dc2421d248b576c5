/* out.h - output formats: human table, JSON (schema: docs/output.md) and the
 * Chrome trace-event timeline. */
#ifndef TLBSIM_OUT_H
#define TLBSIM_OUT_H

#include <stdbool.h>
#include <stdio.h>

#include "sim/trace.h"
#include "tlbsim/tlbsim.h"

struct run_result {
	struct tlbsim_config cfg;
	struct tlbsim_resolved res;
	/* one seed: its metrics; several (--seeds): each metric's mean over the
	 * seeds, rounded to an integer, with the per-seed values in seed_m */
	struct tlbsim_metrics m;
	int nseeds;			/* 0 or 1: a single run */
	const struct tlbsim_metrics *seed_m;	/* nseeds entries when nseeds > 1 */
	/* the run was stopped before its threads finished: "time limit",
	 * "SIGINT", ...; NULL when it ran to completion */
	const char *partial;
	/* with partial: true when the numbers include the run that was stopped
	 * (the column's first seed: they cover its simulated time until then);
	 * false when they are whole seeds only, fewer than seeds_planned */
	bool partial_cut;
	int seeds_planned;		/* --seeds N asked; 0 or 1: one */
};

#define MAX_TABLE_COLUMNS 16

/* mean and half-width of the 95 % confidence interval (Student's t) of
 * x[0..n); summed in order, so the same inputs give the same bits */
void out_mean_ci(const double *x, int n, double *mean, double *ci);
void out_json(FILE *f, const char *cmdline, const struct run_result *runs, int n, bool compare);
void out_table(FILE *f, const struct run_result *runs, int n, bool compare);
/* The table's first line: "# simulated times (profile P[, kernel V]); host
 * S s" - the times below are the modelled machine's; S is the host seconds
 * the command took (the one part of the table that differs between runs) */
void out_table_note(FILE *f, const struct run_result *runs, double host_s);
/* Length of the valid UTF-8 sequence at p (1..4), or 0 if it is not one
 * (an overlong form, a surrogate or above U+10FFFF counts as invalid). */
int out_utf8_len(const unsigned char *p);
/* JSON string escaping into f (control characters escaped, invalid UTF-8
 * replaced by U+FFFD) */
void json_string(FILE *f, const char *s);
/* The head every JSON run object starts with (docs/output.md): tool, version,
 * command, "mode" when mode is not NULL, workload and params, leaving the
 * object open after the params' closing brace. */
void out_json_head(FILE *f, const char *cmdline, const char *mode,
		   const struct tlbsim_resolved *res);
/* An event trace (NULL: none) as Chrome trace-event JSON on f (chrome.c).
 * 0, or -1 if writing failed. */
int out_chrome_trace(FILE *f, const struct trace_buf *tb, int ncpus, const char *title,
		     const char *token);
/* A run's timeline (tlbsim run --trace) as Chrome trace-event JSON on f
 * (chrome.c): CPU tracks (pid 1) with a slice per record, idle slices, flow
 * arrows for IPIs and broadcast TLBIs and a counter of runnable threads
 * waiting; thread tracks (pid 2) with phase slices (user, each syscall, page
 * faults) and nested slices per record (lock waits, sleeps). Slices still open
 * at the last record end at end. 0, or -1 on a write or allocation failure. */
int out_chrome_timeline(FILE *f, const struct trace_buf *tb, int ncpus, uint64_t end,
			const char *title, const char *cmdline);
/* The same records as text in the form of the kernel's ftrace output
 * ("TASK-TID [CPU] .... SECONDS: event: fields", one line per record). */
int out_ftrace(FILE *f, const struct trace_buf *tb, int ncpus, const char *task);

/* Numbers as the tables print them: a time in the unit that fits (950 ns,
 * 46.00 \u00b5s, 15.25 ms, 1.234 s); a count exact below 10 000, else K/M/G
 * with four digits. Both return buf. */
const char *out_human_time(double ns, char *buf, size_t len);
const char *out_human_count(double v, char *buf, size_t len);

#endif
