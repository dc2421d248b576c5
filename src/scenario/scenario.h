/*
 * scenario.h - scenario files (.tlbs): workloads and races written as data
 * (docs/scenarios.md).
 *
 *   parse.c  lexer and one-pass compiler: the text becomes a flat op array
 *            (no syntax tree is kept), a header (struct workload_def) and the
 *            file's expect clauses
 *   vm.c     the op interpreter: each task of the file runs as a simulated
 *            thread (glibc model of src/workload/) through the same simulated
 *            syscalls as the built-in workloads
 *
 * A compiled scenario is read-only while runs use it (runs on several host
 * threads may share one); each run's state (variables, events, task handles)
 * is a kernel object of that run.
 */
#ifndef TLBSIM_SCENARIO_H
#define TLBSIM_SCENARIO_H

#include <stdio.h>

#include "workload/workload.h"

#define SCEN_MAX_ERRORS 10	/* errors reported per file before giving up */
#define SCEN_MAX_FILE_BYTES (16u << 20)	/* an imported trace of a real program can pass 1 MiB */
#define SCEN_MAX_NAMES 4096	/* variables and parameters of a file */
#define SCEN_MAX_EXPECT 16

struct scenario;

/* One expect clause: the outcome `tlbsim check` must give under the header's
 * configuration plus `with` (knob=value list and param=value list). */
struct scen_expect {
	int line;
	int kind;			/* -1: clean; else enum inv_id */
	char policy[256];		/* "knob=value,..." */
	int nwparams;
	struct tlbsim_kv wparams[TLBSIM_MAX_WPARAMS];
};

/* A name that is a scenario file rather than a built-in workload: it ends
 * in .tlbs or contains a '/'. */
bool scenario_is_path(const char *name);

/* Print a file name in a message on f, a control byte as \xNN: a line
 * break in the name split the one-line error in two. */
void scenario_put_name(FILE *f, const char *name);

/* Read and compile the file at path. NULL on failure, after printing each
 * error as "FILE:LINE:COL: message" on errf (at most SCEN_MAX_ERRORS);
 * *nerrors is the number printed (a read error counts as one). */
struct scenario *scenario_load(const char *path, FILE *errf, int *nerrors);
/* The same from text in memory; `fname` names it in messages. */
struct scenario *scenario_compile(const char *fname, const char *text, size_t len, FILE *errf,
				  int *nerrors);
void scenario_free(struct scenario *sc);

/* The workload it defines (for tlbsim_config.workload_def). */
const struct tlbsim_workload_desc *scenario_desc(const struct scenario *sc);
int scenario_nexpect(const struct scenario *sc);
const struct scen_expect *scenario_expect(const struct scenario *sc, int i);
/* the file's `time_limit` in ms (0: none given) */
uint64_t scenario_time_limit_ms(const struct scenario *sc);
/* the file's `memory_model` (check and test; default sc) */
enum tlbsim_memory_model scenario_memory_model(const struct scenario *sc);
/* `tlbsim import strace` (strace.c): write a scenario named `name` built from
 * the strace -f -tt text (fname names it in messages) to out; touch: write
 * every page of each mmap right after it. 0, or 1 after
 * printing each error as "FILE:LINE: message" on errf. */
int strace_import(const char *text, size_t len, const char *fname, const char *name, bool touch,
		  FILE *out, FILE *errf);
/* The same, with where[k] (k < nwhere) naming line k + 1 of text in error
 * messages instead of "fname:LINE" (text merged from strace -ff files). */
int strace_import_where(const char *text, size_t len, const char *fname,
			const char *const *where, size_t nwhere, const char *name, bool touch,
			FILE *out, FILE *errf);
/* ops in the compiled program (for tests and docs) */
int scenario_nops(const struct scenario *sc);

#endif
