/* csv.c - CSV files of results (csv.h). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/csv.h"

/* ---- reading ---- */

struct reader {
	FILE *f;
	int line;
	bool eof;
};

static int addc(char **buf, size_t *n, size_t *cap, int c)
{
	if (*n + 2 > *cap) {
		size_t nc = *cap ? *cap * 2 : 64;
		char *nb = realloc(*buf, nc);
		if (!nb)
			return -1;
		*buf = nb;
		*cap = nc;
	}
	(*buf)[(*n)++] = (char)c;
	(*buf)[*n] = 0;
	return 0;
}

void csv_free_row(char **v, int n)
{
	if (!v)
		return;
	for (int i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* One record: *out gets *nout heap fields. 1 a record, 0 end of file, -1
 * error (msg). */
static int read_record(struct reader *r, char ***out, int *nout, const char **msg)
{
	char **v = NULL;
	int n = 0, cap = 0;
	char *buf = NULL;
	size_t bn = 0, bcap = 0;
	bool quoted = false, was_quoted = false, any = false;
	r->line++;
	for (;;) {
		int c = getc(r->f);
		if (c == EOF && quoted) {
			*msg = "a quoted field is not closed";
			goto fail;
		}
		if (c == 0) {
			*msg = "a NUL byte (not a text file)";
			goto fail;
		}
		if (quoted) {
			if (c == '"') {
				int d = getc(r->f);
				if (d == '"') {
					if (addc(&buf, &bn, &bcap, '"'))
						goto oom;
					continue;
				}
				if (d != EOF)
					ungetc(d, r->f);
				quoted = false;
				continue;
			}
			if (c == '\n')
				r->line++;
			if (addc(&buf, &bn, &bcap, c))
				goto oom;
			continue;
		}
		if (c == EOF && !any) {
			free(buf);
			free(v);
			return 0;
		}
		any = true;
		if (c == '"' && bn == 0 && !was_quoted) {
			quoted = was_quoted = true;
			continue;
		}
		if (c == '"') {
			*msg = "a quote inside an unquoted field";
			goto fail;
		}
		if (c == ',' || c == '\n' || c == EOF || c == '\r') {
			if (c == '\r') {
				int d = getc(r->f);
				if (d != '\n') {
					*msg = "a carriage return outside quotes";
					goto fail;
				}
				c = '\n';
			}
			if (n == cap) {
				int nc = cap ? cap * 2 : 16;
				char **nv = realloc(v, (size_t)nc * sizeof(*nv));
				if (!nv)
					goto oom;
				v = nv;
				cap = nc;
			}
			if (!buf) {
				buf = malloc(1);
				if (!buf)
					goto oom;
				buf[0] = 0;
			}
			v[n++] = buf;
			buf = NULL;
			bn = bcap = 0;
			was_quoted = false;
			if (c != ',')
				break;
			continue;
		}
		if (was_quoted) {
			*msg = "text after a closing quote";
			goto fail;
		}
		if (addc(&buf, &bn, &bcap, c))
			goto oom;
	}
	*out = v;
	*nout = n;
	return 1;
oom:
	*msg = "out of memory";
fail:
	free(buf);
	csv_free_row(v, n);
	return -1;
}

int csv_read(const char *path, struct csv_table *t, char *err, size_t errlen)
{
	memset(t, 0, sizeof(*t));
	struct reader r = {.f = fopen(path, "r")};
	if (!r.f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	const char *msg = NULL;
	char **v;
	int n;
	errno = 0;
	/* a UTF-8 byte order mark (a spreadsheet's "CSV UTF-8") is skipped
	 * before the first field is read: after it, a quoted first name
	 * ("x",...) was a quote inside an unquoted field */
	int b0 = getc(r.f);
	if (b0 == 0xEF) {
		int b1 = getc(r.f), b2 = b1 == 0xBB ? getc(r.f) : EOF;
		/* not a BOM: read from the start */
		if ((b1 != 0xBB || b2 != 0xBF) && fseek(r.f, 0, SEEK_SET) != 0) {
			snprintf(err, errlen, "%s: a first byte 0xEF that begins no byte order mark, "
				 "in a file that cannot be read again", path);
			fclose(r.f);
			return -1;
		}
	} else if (b0 != EOF) {
		ungetc(b0, r.f);
	}
	int rc = read_record(&r, &v, &n, &msg);
	if (rc <= 0) {
		/* a directory opens but reads EISDIR */
		snprintf(err, errlen, "%s: %s", path, ferror(r.f) ? strerror(errno ? errno : EIO)
					 : rc ? msg : "empty (no header line)");
		fclose(r.f);
		return -1;
	}
	t->cols = v;
	t->ncols = n;
	for (int i = 0; i < n; i++)
		if (!v[i][0]) {
			snprintf(err, errlen, "%s:1: column %d has no name", path, i + 1);
			goto bad;
		}
	for (;;) {
		int line = r.line + 1;
		rc = read_record(&r, &v, &n, &msg);
		if (rc == 0)
			break;
		if (rc < 0) {
			snprintf(err, errlen, "%s:%d: %s", path, line, msg);
			goto bad;
		}
		/* an empty line (a final newline added by echo >> or an editor)
		 * holds no row: "N: 1 fields, the header has 69" said nothing */
		if (n == 1 && !v[0][0] && t->ncols > 1) {
			csv_free_row(v, n);
			continue;
		}
		if (n != t->ncols) {
			snprintf(err, errlen, "%s:%d: %d fields, the header has %d", path, line, n,
				 t->ncols);
			csv_free_row(v, n);
			goto bad;
		}
		if (csv_add_row(t, v)) {
			snprintf(err, errlen, "%s: out of memory", path);
			csv_free_row(v, n);
			goto bad;
		}
	}
	if (ferror(r.f)) {
		snprintf(err, errlen, "%s: read error", path);
		goto bad;
	}
	fclose(r.f);
	return 0;
bad:
	fclose(r.f);
	csv_free(t);
	return -1;
}

void csv_free(struct csv_table *t)
{
	csv_free_row(t->cols, t->ncols);
	for (int i = 0; i < t->nrows; i++)
		csv_free_row(t->rows[i], t->ncols);
	free(t->rows);
	memset(t, 0, sizeof(*t));
}

int csv_col(const struct csv_table *t, const char *name)
{
	for (int i = 0; i < t->ncols; i++)
		if (strcmp(t->cols[i], name) == 0)
			return i;
	return -1;
}

int csv_add_row(struct csv_table *t, char **row)
{
	if (t->nrows == t->caprows) {
		int nc = t->caprows ? t->caprows * 2 : 64;
		char ***nr = realloc(t->rows, (size_t)nc * sizeof(*nr));
		if (!nr)
			return -1;
		t->rows = nr;
		t->caprows = nc;
	}
	t->rows[t->nrows++] = row;
	return 0;
}

/* ---- writing ---- */

void csv_field(FILE *f, const char *s)
{
	if (!strpbrk(s, ",\"\n\r")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

static void write_line(FILE *f, char *const *v, int n)
{
	for (int i = 0; i < n; i++) {
		if (i)
			fputc(',', f);
		csv_field(f, v[i]);
	}
	fputc('\n', f);
}

void csv_write(FILE *f, const struct csv_table *t)
{
	write_line(f, t->cols, t->ncols);
	for (int i = 0; i < t->nrows; i++)
		write_line(f, t->rows[i], t->ncols);
}

static const char *const config_head[] = {"workload", "profile", "cpus", "threads", "iters"};
static const char *const config_tail[] = {"policy", "seed", "seeds"};

int csv_config_cols(const struct csv_table *t)
{
	for (int i = 0; i < t->ncols; i++)
		if (strcmp(t->cols[i], "wall_ns") == 0 || strcmp(t->cols[i], "wall_ns_mean") == 0)
			return i;
	return -1;
}

bool csv_result_layout(const struct csv_table *t)
{
	int n = csv_config_cols(t);
	if (n < 8)
		return false;
	for (int i = 0; i < 5; i++)
		if (strcmp(t->cols[i], config_head[i]) != 0)
			return false;
	for (int i = 5; i < n - 3; i++)
		if (strncmp(t->cols[i], "w:", 2) != 0 && strncmp(t->cols[i], "D:", 2) != 0)
			return false;
	for (int i = 0; i < 3; i++)
		if (strcmp(t->cols[n - 3 + i], config_tail[i]) != 0)
			return false;
	return true;
}

/* a number for the row order: all of the field, not NaN ("nan" is text) */
static bool as_number(const char *s, double *x)
{
	char *end;
	if (!*s)
		return false;
	errno = 0;
	*x = strtod(s, &end);
	return !*end && !errno && !isnan(*x);
}

/* One field: numbers before text, numbers by value, then (10 and 1e1, equal
 * as values) by their text, which also orders text. A total order: a mix of
 * numbers and text ("8192", "16K") used to compare by value or by text
 * depending on the pair, a cycle whose sorted result depended on the input
 * order, so shards merged in another order or a resumed file came out in
 * other bytes. */
static int field_cmp(const char *a, const char *b)
{
	double x, y;
	bool na = as_number(a, &x), nb = as_number(b, &y);
	if (na != nb)
		return na ? -1 : 1;
	if (na && x != y)
		return x < y ? -1 : 1;
	int c = strcmp(a, b);
	return c < 0 ? -1 : c > 0;
}

int csv_row_cmp(char *const *a, char *const *b, int n)
{
	for (int i = 0; i < n; i++) {
		int c = field_cmp(a[i], b[i]);
		if (c)
			return c;
	}
	return 0;
}

/* the order of two rows by the fields cols[0..ncols) */
static int cols_cmp(char *const *a, char *const *b, const int *cols, int ncols)
{
	for (int i = 0; i < ncols; i++) {
		int c = field_cmp(a[cols[i]], b[cols[i]]);
		if (c)
			return c;
	}
	return 0;
}

void csv_sort_rows(char ***rows, int nrows, const int *cols, int ncols)
{
	/* a merge sort (stable; no global comparison state as qsort would need) */
	char ***tmp = malloc((size_t)(nrows ? nrows : 1) * sizeof(*tmp));
	if (!tmp) {
		/* insertion sort: slow but needs nothing */
		for (int i = 1; i < nrows; i++)
			for (int j = i; j > 0 && cols_cmp(rows[j - 1], rows[j], cols, ncols) > 0; j--) {
				char **x = rows[j];
				rows[j] = rows[j - 1];
				rows[j - 1] = x;
			}
		return;
	}
	for (int w = 1; w < nrows; w *= 2) {
		for (int lo = 0; lo < nrows; lo += 2 * w) {
			int mid = lo + w < nrows ? lo + w : nrows;
			int hi = lo + 2 * w < nrows ? lo + 2 * w : nrows;
			int a = lo, b = mid, k = lo;
			while (a < mid && b < hi)
				tmp[k++] = cols_cmp(rows[b], rows[a], cols, ncols) < 0 ? rows[b++]
										: rows[a++];
			while (a < mid)
				tmp[k++] = rows[a++];
			while (b < hi)
				tmp[k++] = rows[b++];
		}
		memcpy(rows, tmp, (size_t)nrows * sizeof(*tmp));
	}
	free(tmp);
}

void csv_sort(struct csv_table *t, int n)
{
	int cols[256];
	if (n > (int)(sizeof(cols) / sizeof(cols[0])))
		n = (int)(sizeof(cols) / sizeof(cols[0]));
	for (int i = 0; i < n; i++)
		cols[i] = i;
	csv_sort_rows(t->rows, t->nrows, cols, n);
}

int csv_find(const struct csv_table *t, char *const *key, int n)
{
	int lo = 0, hi = t->nrows;
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		int c = csv_row_cmp(t->rows[mid], key, n);
		if (c == 0)
			return mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

/* ---- result rows ---- */

struct metric_col {
	const char *name;
	uint64_t (*get)(const struct tlbsim_metrics *m);
};

#define GETTER(n) static uint64_t cget_##n(const struct tlbsim_metrics *m) { return m->n; }
TLBSIM_METRICS(GETTER)
#undef GETTER
#define GETTER(n) static uint64_t cget_tlbi_##n(const struct tlbsim_metrics *m) { return m->tlbi.n; }
TLBSIM_TLBI_KINDS(GETTER)
#undef GETTER

static const struct metric_col metric_cols[] = {
#define X(n) {#n, cget_##n},
	TLBSIM_METRICS(X)
#undef X
#define X(n) {"tlbi_" #n, cget_tlbi_##n},
	TLBSIM_TLBI_KINDS(X)
#undef X
};
#define NMETRICS (int)(sizeof(metric_cols) / sizeof(metric_cols[0]))


int csv_result_header(struct csv_table *t, const struct csv_extra *extra, bool stats)
{
	int n = 5 + extra->n + 3 + NMETRICS * (stats ? 2 : 1), k = 0;
	t->cols = calloc((size_t)n, sizeof(char *));
	if (!t->cols)
		return -1;
	t->ncols = n;
	for (int i = 0; i < 5; i++)
		t->cols[k++] = strdup(config_head[i]);
	for (int i = 0; i < extra->n; i++)
		t->cols[k++] = strdup(extra->names[i]);
	for (int i = 0; i < 3; i++)
		t->cols[k++] = strdup(config_tail[i]);
	for (int i = 0; i < NMETRICS; i++) {
		if (!stats) {
			t->cols[k++] = strdup(metric_cols[i].name);
			continue;
		}
		char b[80];
		snprintf(b, sizeof(b), "%s_mean", metric_cols[i].name);
		t->cols[k++] = strdup(b);
		snprintf(b, sizeof(b), "%s_ci95", metric_cols[i].name);
		t->cols[k++] = strdup(b);
	}
	for (int i = 0; i < n; i++)
		if (!t->cols[i])
			return -1;
	return 0;
}

char **csv_config_row(const struct csv_table *t, const struct tlbsim_resolved *res, uint64_t seed,
		      int nseeds, const struct csv_extra *extra, const char *policy)
{
	char **v = calloc((size_t)t->ncols, sizeof(char *));
	if (!v)
		return NULL;
	char b[128];
	int k = 0;
	v[k++] = strdup(res->workload->name);
	v[k++] = strdup(res->profile->name);
	snprintf(b, sizeof(b), "%d", res->cpus);
	v[k++] = strdup(b);
	snprintf(b, sizeof(b), "%d", res->threads);
	v[k++] = strdup(b);
	snprintf(b, sizeof(b), "%" PRId64, res->iters);
	v[k++] = strdup(b);
	for (int i = 0; i < extra->n; i++)
		v[k++] = strdup(extra->values[i]);
	v[k++] = strdup(policy);
	snprintf(b, sizeof(b), "%" PRIu64, seed);
	v[k++] = strdup(b);
	snprintf(b, sizeof(b), "%d", nseeds);
	v[k++] = strdup(b);
	for (int i = 0; i < k; i++)
		if (!v[i]) {
			csv_free_row(v, t->ncols);
			return NULL;
		}
	return v;
}

char **csv_result_row(const struct csv_table *t, const struct run_result *r,
		      const struct csv_extra *extra, const char *policy, bool stats)
{
	int nseeds = r->nseeds > 1 && r->seed_m ? r->nseeds : 1;
	char **v = csv_config_row(t, &r->res, r->cfg.seed, nseeds, extra, policy);
	if (!v)
		return NULL;
	char b[128];
	int k = 5 + extra->n + 3;
	for (int i = 0; i < NMETRICS && k < t->ncols; i++) {
		if (!stats) {
			snprintf(b, sizeof(b), "%" PRIu64, metric_cols[i].get(&r->m));
			v[k++] = strdup(b);
			continue;
		}
		double x[1000], mean, ci;
		for (int s = 0; s < nseeds; s++)
			x[s] = (double)metric_cols[i].get(nseeds > 1 ? &r->seed_m[s] : &r->m);
		out_mean_ci(x, nseeds, &mean, &ci);
		snprintf(b, sizeof(b), "%.3f", mean);
		v[k++] = strdup(b);
		snprintf(b, sizeof(b), "%.3f", ci);
		v[k++] = strdup(b);
	}
	for (int i = 0; i < t->ncols; i++)
		if (!v[i]) {
			csv_free_row(v, t->ncols);
			return NULL;
		}
	return v;
}

/* ---- files ---- */

/* path's temporary sibling "path.WHATpid", its last component cut so that
 * it fits in NAME_MAX (a final name of 245..255 bytes is valid; its
 * temporary one was not) */
static char *temp_name(const char *path, const char *what)
{
	char sfx[48];
	int sl = snprintf(sfx, sizeof(sfx), ".%s%ld", what, (long)getpid());
	const char *slash = strrchr(path, '/');
	size_t dl = slash ? (size_t)(slash - path) + 1 : 0, bl = strlen(path) - dl;
	if (bl + (size_t)sl > NAME_MAX)
		bl = NAME_MAX - (size_t)sl;
	char *p = malloc(dl + bl + (size_t)sl + 1);
	if (p) {
		memcpy(p, path, dl + bl);
		memcpy(p + dl + bl, sfx, (size_t)sl + 1);
	}
	return p;
}

bool out_is_stream(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
}

/* The file a write of path replaces by rename: a symbolic link's final
 * target (followed link by link, so a link to a file not yet there works),
 * so that the link stays a link (a rename over the link itself turned it
 * into a file: as root, -o /dev/stdout replaced the /dev/stdout link), else
 * path. NULL with errno: out of memory (ENOMEM), or a chain of links that
 * names no file (ELOOP: a loop, or more than 40 links; the rename replaced
 * one of the links). */
static char *out_target(const char *path)
{
	char *cur = strdup(path);
	for (int hops = 0; cur; hops++) {
		struct stat lst;
		char link[4096];
		ssize_t n;
		if (lstat(cur, &lst) != 0 || !S_ISLNK(lst.st_mode) ||
		    (n = readlink(cur, link, sizeof(link) - 1)) <= 0)
			break;
		if (hops == 40) {
			free(cur);
			errno = ELOOP;
			return NULL;
		}
		link[n] = 0;
		const char *slash = strrchr(cur, '/');
		size_t dl = link[0] == '/' || !slash ? 0 : (size_t)(slash - cur) + 1;
		char *next = malloc(dl + (size_t)n + 1);
		if (next) {
			memcpy(next, cur, dl);
			memcpy(next + dl, link, (size_t)n + 1);
		}
		free(cur);
		cur = next;
	}
	if (!cur)
		errno = ENOMEM;
	return cur;
}

/* A FIFO with no reader blocks open(2), a pipe nobody drains blocks
 * write(2); the run's SIGINT and SIGTERM are blocked (cli_block_signals),
 * which made such a wait unbreakable. While a stream is opened and written
 * they end the process, as they would a shell redirection - unless one is
 * pending already (a stopped run writes what it measured). */
static bool stream_signals_on(sigset_t *old)
{
	if (cli_pending_signal(NULL))
		return false;
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	return pthread_sigmask(SIG_UNBLOCK, &set, old) == 0;
}

/* a stream (out_is_stream): written in place, there is nothing to rename */
static int stream_write(const char *path, void (*fn)(FILE *f, const void *arg), const void *arg)
{
	sigset_t old;
	bool on = stream_signals_on(&old);
	FILE *f = fopen(path, "w");
	int e = 0;
	if (!f) {
		e = errno;
	} else {
		fn(f, arg);
		if (fflush(f) || ferror(f))
			e = errno ? errno : EIO;
		if (fclose(f) && !e)
			e = errno;
	}
	if (on)
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	errno = e;
	return e ? -1 : 0;
}

int atomic_write(const char *path, void (*fn)(FILE *f, const void *arg), const void *arg)
{
	if (out_is_stream(path))
		return stream_write(path, fn, arg);
	char *target = out_target(path);
	if (!target)
		return -1;			/* errno: ELOOP or ENOMEM */
	char *tmp = temp_name(target, "tmp");
	if (!tmp) {
		free(target);
		errno = ENOMEM;
		return -1;
	}
	path = target;
	FILE *f = fopen(tmp, "w");
	if (!f) {
		int e = errno;
		free(tmp);
		free(target);
		errno = e;
		return -1;
	}
	fn(f, arg);
	int e = 0;
	if (fflush(f) || ferror(f))
		e = errno ? errno : EIO;
	if (fsync(fileno(f)) && !e)
		e = errno;
	if (fclose(f) && !e)
		e = errno;
	if (!e && rename(tmp, path))
		e = errno;
	free(target);
	if (e) {
		remove(tmp);
		free(tmp);
		errno = e;
		return -1;
	}
	free(tmp);
	return 0;
}

int csv_probe_dir(const char *path)
{
	struct stat st;
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		errno = EISDIR;		/* the rename over it would fail */
		return -1;
	}
	if (out_is_stream(path))	/* written in place */
		return access(path, W_OK) ? -1 : 0;
	char *target = out_target(path);
	if (!target)
		return -1;			/* errno: ELOOP or ENOMEM */
	/* a last component longer than the directory allows (the probe's name
	 * is cut to fit: temp_name) */
	const char *slash = strrchr(target, '/');
	if (strlen(slash ? slash + 1 : target) > NAME_MAX) {
		free(target);
		errno = ENAMETOOLONG;
		return -1;
	}
	char *tmp = temp_name(target, "probe");
	free(target);
	if (!tmp) {
		errno = ENOMEM;
		return -1;
	}
	FILE *f = fopen(tmp, "w");
	if (!f) {
		int e = errno;
		free(tmp);
		errno = e;
		return -1;
	}
	fclose(f);
	remove(tmp);
	free(tmp);
	return 0;
}
