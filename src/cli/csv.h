/*
 * csv.h - CSV files of results (docs/output.md): run/compare --csv, sweep,
 * merge and plot. RFC 4180: fields separated by commas, a field holding a
 * comma, a quote or a line break is quoted with quotes doubled; one header
 * line; lines end in "\n".
 */
#ifndef TLBSIM_CLI_CSV_H
#define TLBSIM_CLI_CSV_H

#include <stdbool.h>
#include <stdio.h>

#include "out/out.h"

/* A table of strings. */
struct csv_table {
	int ncols;
	char **cols;		/* the header */
	int nrows, caprows;
	char ***rows;		/* nrows rows of ncols fields */
};

/* Read FILE. 0, or -1 with "FILE: ..." (or "FILE:LINE: ...") in err. */
int csv_read(const char *path, struct csv_table *t, char *err, size_t errlen);
void csv_free(struct csv_table *t);
/* the column named name, or -1 */
int csv_col(const struct csv_table *t, const char *name);
/* append a row (ncols heap strings, taken over); 0 or -1 (out of memory) */
int csv_add_row(struct csv_table *t, char **row);
/* one field, quoted when needed */
void csv_field(FILE *f, const char *s);
/* the header and the rows */
void csv_write(FILE *f, const struct csv_table *t);

/* The number of configuration columns of a result header: those before the
 * first metric ("wall_ns" or "wall_ns_mean"); -1 if there is none. */
int csv_config_cols(const struct csv_table *t);
/* The configuration columns of t are a result file's: workload, profile,
 * cpus, threads, iters, any w:NAME and D:NAME, policy, seed, seeds, then a
 * metric (csv_result_header's layout). */
bool csv_result_layout(const struct csv_table *t);
/* Order of two rows by their first n fields. A field that is a number
 * (strtod reads all of it, not NaN) comes before one that is not; numbers
 * compare by value, then by text (10 before 1e1); other fields by text. A
 * total order: equal means every field has the same text. */
int csv_row_cmp(char *const *a, char *const *b, int n);
/* sort nrows rows by the fields cols[0..ncols) (the order of csv_row_cmp,
 * field by field; stable) */
void csv_sort_rows(char ***rows, int nrows, const int *cols, int ncols);
/* sort the rows of t by their first n fields (n at most 256) */
void csv_sort(struct csv_table *t, int n);
/* the index of a row of t (sorted by csv_sort(t, n)) whose first n fields
 * equal key's, or -1 */
int csv_find(const struct csv_table *t, char *const *key, int n);

/* Result rows (run, compare, sweep). The configuration columns are workload,
 * profile, cpus, threads, iters, then the extra columns (sweep: its w:NAME
 * and D:NAME grid keys, then the -w and -D given outside the grid), then
 * policy, seed, seeds; then every metric (one column each, or METRIC_mean
 * and METRIC_ci95 when seeds > 1). */
#define CSV_MAX_EXTRA 96	/* 8 grid keys, 16 -w, 64 -D */
struct csv_extra {
	int n;
	const char *names[CSV_MAX_EXTRA];
	const char *values[CSV_MAX_EXTRA];
};
/* the header into t (t empty); 0 or -1 (out of memory) */
int csv_result_header(struct csv_table *t, const struct csv_extra *extra, bool stats);
/* a heap row of t->ncols fields with only the configuration columns set
 * (the others NULL), or NULL if out of memory */
char **csv_config_row(const struct csv_table *t, const struct tlbsim_resolved *res, uint64_t seed,
		      int nseeds, const struct csv_extra *extra, const char *policy);
/* free a row of n fields (NULL fields allowed) */
void csv_free_row(char **row, int n);
/* a heap row of t->ncols fields for run r (policy: its label); NULL if out of
 * memory */
char **csv_result_row(const struct csv_table *t, const struct run_result *r,
		      const struct csv_extra *extra, const char *policy, bool stats);

/* Write path atomically: fn writes the text into a temporary file in the
 * same directory, which is then renamed over path (an interrupted write
 * never leaves a half-written path); a symbolic link's target is replaced,
 * the link stays. A path that names an existing file that is not a regular
 * one (out_is_stream: a terminal, a pipe, /dev/null, /dev/stdout) is written
 * in place. 0, or -1 with errno set. */
int atomic_write(const char *path, void (*fn)(FILE *f, const void *arg), const void *arg);
/* path names an existing file that is neither regular nor a directory */
bool out_is_stream(const char *path);
/* Check, before the work, that path can be written atomically: it is not a
 * directory (EISDIR), and its directory takes a new file (a probe created
 * and removed). 0, or -1 with errno. */
int csv_probe_dir(const char *path);

#endif
