/*
 * cmd_sweep.c - `tlbsim sweep`: a workload over the cross product of --grid
 * dimensions and --policy columns, one CSV row per point and policy; and
 * `tlbsim merge`, which joins the files of a sweep's shards.
 *
 * The rows are sorted by their configuration columns (numbers as numbers,
 * before text; csv_row_cmp),
 * so the file does not depend on -j (the host-thread pool of pool.c runs
 * every simulation independently), on --shard + merge, or on how many times
 * an interrupted sweep was resumed: rows already in the -o file are kept
 * and their configurations not run again. Files are written to a temporary
 * name and renamed (csv.h atomic_write).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/csv.h"
#include "cli/pool.h"
#include "cost/params.h"

#define MAX_GRID_VALUES 1024
#define MAX_POINTS 100000

struct gdim {
	char key[64];
	char *buf;			/* the values, split in place */
	const char *vals[MAX_GRID_VALUES];
	int nvals;
};

struct point {
	struct tlbsim_config cfg;
	struct tlbsim_resolved res;
	const char *policy;		/* the label */
	const char *gv[MAX_GRID];	/* its value of each --grid */
	char **key;			/* configuration columns */
	bool have;			/* already in the -o file */
	long gi;			/* its grid point (where_text) */
};

/* "KEY=V KEY=V ..." of grid point gi (the first --grid varies slowest) */
static void where_text(const struct gdim *dims, int ngrid, long gi, char *where, size_t len)
{
	int idx[MAX_GRID] = {0};	/* cppcheck: every g below ngrid is set */
	for (int g = ngrid - 1; g >= 0; g--) {
		idx[g] = (int)(gi % dims[g].nvals);
		gi /= dims[g].nvals;
	}
	size_t w = 0;
	where[0] = 0;
	for (int g = 0; g < ngrid; g++)
		w += (size_t)snprintf(where + w, w < len ? len - w : 0, "%s%s=%s", g ? " " : "",
				      dims[g].key, dims[g].vals[idx[g]]);
}

struct wkey {
	char *text;			/* profile and workload parameters */
	int pt;
};

static int wkey_cmp(const void *a, const void *b)
{
	const struct wkey *x = a, *y = b;
	int c = strcmp(x->text, y->text);
	return c ? c : (x->pt > y->pt) - (x->pt < y->pt);
}

/*
 * The workload parameters of every point, checked before anything runs: a
 * workload's setup reads them (mmap8's size=abc, map=bogus), and a run was
 * the first to do so - after the rows before it had run and been written
 * (a header-only or partial -o file, rows on stdout, exit 2). One build
 * (core_check_build: setup without a run) per profile and set of workload
 * parameters, of its first point in grid order; the first point that fails
 * is named. 0, EXIT_USAGE or EXIT_INTERNAL.
 */
static int check_workload_params(const struct point *pts, int npts, const struct gdim *dims,
				 int ngrid, uint64_t host_limit)
{
	struct wkey *k = calloc((size_t)(npts ? npts : 1), sizeof(*k));
	if (!k)
		return cli_error_code(EXIT_INTERNAL, "out of memory");
	int rc = 0;
	for (int i = 0; i < npts && !rc; i++) {
		const struct tlbsim_resolved *r = &pts[i].res;
		size_t len = strlen(r->profile->name) + 32;
		for (int j = 0; j < r->nwparams; j++)
			len += strlen(r->wparams[j].name) + strlen(r->wparams[j].value) + 2;
		k[i].pt = i;
		k[i].text = malloc(len);
		if (!k[i].text) {
			rc = cli_error_code(EXIT_INTERNAL, "out of memory");
			break;
		}
		size_t o = (size_t)snprintf(k[i].text, len, "%s/%d/%d", r->profile->name,
					    (int)r->profile->arch, r->profile->page_shift);
		for (int j = 0; j < r->nwparams; j++)
			o += (size_t)snprintf(k[i].text + o, len - o, "\x1f%s=%s", r->wparams[j].name,
					      r->wparams[j].value);
	}
	int bad = -1;
	char err[TLBSIM_ERRLEN], first[TLBSIM_ERRLEN] = "";
	if (!rc) {
		qsort(k, (size_t)npts, sizeof(*k), wkey_cmp);
		for (int i = 0; i < npts; i++) {
			if (i && strcmp(k[i].text, k[i - 1].text) == 0)
				continue;
			const struct point *pt = &pts[k[i].pt];
			int brc = core_check_build(&pt->cfg, &pt->res, host_limit, err, sizeof(err));
			if (brc && brc != TLBSIM_EINVAL) {	/* a host failure, as in a run */
				rc = cli_error_code(EXIT_INTERNAL, "%s", err);
				break;
			}
			if (brc && (bad < 0 || k[i].pt < bad)) {
				bad = k[i].pt;
				snprintf(first, sizeof(first), "%s", err);
			}
		}
	}
	for (int i = 0; i < npts; i++)
		free(k[i].text);
	free(k);
	if (!rc && bad >= 0) {
		char where[512];
		where_text(dims, ngrid, pts[bad].gi, where, sizeof(where));
		rc = cli_error("sweep at %s: %s", where, first);
	}
	return rc;
}

/* "KEY=V1,V2,..." into d; 0 or EXIT_USAGE */
static int parse_grid(const char *arg, struct gdim *d)
{
	const char *eq = strchr(arg, '=');
	if (!eq || eq == arg)
		return cli_error("--grid %s: want KEY=V1,V2,... (keys: threads, cpus, iters, "
				 "profile, w:NAME, D:NAME)", arg);
	if ((size_t)(eq - arg) >= sizeof(d->key))
		return cli_error("--grid %s: key too long", arg);
	memcpy(d->key, arg, (size_t)(eq - arg));
	d->key[eq - arg] = 0;
	if (strcmp(d->key, "tasks") == 0)
		strcpy(d->key, "threads");
	if (!eq[1])
		return cli_error("--grid %s: empty list of values", d->key);
	d->buf = strdup(eq + 1);
	if (!d->buf)
		return cli_error_code(EXIT_INTERNAL, "out of memory");
	char *p = d->buf;
	for (;;) {
		char *c = strchr(p, ',');
		if (c)
			*c = 0;
		if (!*p)
			return cli_error("--grid %s=%s: an empty value", d->key, eq + 1);
		for (int i = 0; i < d->nvals; i++)
			if (strcmp(d->vals[i], p) == 0)
				return cli_error("--grid %s: value '%s' given twice", d->key, p);
		if (d->nvals >= MAX_GRID_VALUES)
			return cli_error("--grid %s: more than %d values", d->key, MAX_GRID_VALUES);
		d->vals[d->nvals++] = p;
		if (!c)
			break;
		p = c + 1;
	}
	return 0;
}

static bool extra_key(const char *key)
{
	return strncmp(key, "w:", 2) == 0 || strncmp(key, "D:", 2) == 0;
}

/*
 * What makes results differ beyond the grid, as constant columns (their
 * names are the grid's): every -w NAME=V as w:NAME (its text), every -D
 * NAME=V as D:NAME (the number), each unless a --grid sets that key, w:
 * then D:, each by name (the order of the options does not matter). A
 * resume or merge compares the columns, so a file made with other -w or -D
 * values (or none: no column) is not taken for this sweep's.
 */
struct consts {
	struct csv_extra x;
	char names[CSV_MAX_EXTRA][80];
	char values[CSV_MAX_EXTRA][40];
};

static bool grid_has(const struct gdim *dims, int ngrid, const char *key)
{
	for (int g = 0; g < ngrid; g++)
		if (strcmp(dims[g].key, key) == 0)
			return true;
	return false;
}

static void const_add(struct consts *c, const char *name, const char *value)
{
	int i = c->x.n++;
	while (i > 0 && strcmp(c->x.names[i - 1], name) > 0 &&
	       strncmp(c->x.names[i - 1], name, 2) == 0) {
		c->x.names[i] = c->x.names[i - 1];
		c->x.values[i] = c->x.values[i - 1];
		i--;
	}
	c->x.names[i] = name;
	c->x.values[i] = value;
}

static void consts_init(struct consts *c, const struct tlbsim_config *cfg, const struct gdim *dims,
			int ngrid)
{
	memset(c, 0, sizeof(*c));
	int k = 0;
	for (int i = 0; i < cfg->nwparams; i++, k++) {
		snprintf(c->names[k], sizeof(c->names[k]), "w:%s", cfg->wparams[i].name);
		if (!grid_has(dims, ngrid, c->names[k]))
			const_add(c, c->names[k], cfg->wparams[i].value);
	}
	for (int i = 0; i < cfg->noverrides; i++, k++) {
		snprintf(c->names[k], sizeof(c->names[k]), "D:%s",
			 tlbsim_param_desc[cfg->overrides[i].param].name);
		snprintf(c->values[k], sizeof(c->values[k]), "%" PRId64, cfg->overrides[i].value);
		if (!grid_has(dims, ngrid, c->names[k]))
			const_add(c, c->names[k], c->values[k]);
	}
}

/* the extra columns of a row: its w: and D: grid values, then the constants */
static void row_extra(const struct gdim *dims, int ngrid, const char *const *gv,
		      const struct consts *c, struct csv_extra *x)
{
	x->n = 0;
	for (int g = 0; g < ngrid; g++)
		if (extra_key(dims[g].key)) {
			x->names[x->n] = dims[g].key;
			x->values[x->n++] = gv[g];
		}
	for (int i = 0; i < c->x.n; i++) {
		x->names[x->n] = c->x.names[i];
		x->values[x->n++] = c->x.values[i];
	}
}

/* A --profile FILE whose values are the built-in profile of its name: its
 * rows are that profile's, which the profile column names. */
static bool profile_is_builtin(const struct tlbsim_profile *f)
{
	const struct tlbsim_profile *b = tlbsim_profile_find(f->name);
	if (!b || b->arch != f->arch || b->page_shift != f->page_shift || b->nr_cpus != f->nr_cpus)
		return false;
	struct tlbsim_config c0;
	tlbsim_config_init(&c0);
	int64_t pf[P_COUNT], pb[P_COUNT];
	tlbsim_params_for(f, &c0, pf);
	tlbsim_params_for(b, &c0, pb);
	return memcmp(pf, pb, sizeof(pf)) == 0;
}

struct rows_out {
	const struct csv_table *t;
	bool json;
	const char *cmdline;
	int nconf;
};

static bool numeric_col(const char *name, int i, int nconf)
{
	if (i >= nconf)
		return true;
	return !(strcmp(name, "workload") == 0 || strcmp(name, "profile") == 0 ||
		 strcmp(name, "policy") == 0 || strncmp(name, "w:", 2) == 0);
}

/* s has the grammar of a JSON number (RFC 8259 section 6) */
static bool is_json_number(const char *s)
{
	const char *p = s;
	if (*p == '-')
		p++;
	if (*p == '0')
		p++;
	else if (*p >= '1' && *p <= '9')
		while (*p >= '0' && *p <= '9')
			p++;
	else
		return false;
	if (*p == '.') {
		if (!(*++p >= '0' && *p <= '9'))
			return false;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		if (!(*p >= '0' && *p <= '9'))
			return false;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	return *p == 0;
}

/* A numeric column's text as a JSON number: as it is when it has the JSON
 * grammar, a decimal integer given with leading zeros (--grid
 * D:syscall_ns=0150, "the value as given" in the CSV) without them - 0150
 * is no JSON number, and the file did not parse - and anything else as a
 * string. */
static void json_number_text(FILE *f, const char *s)
{
	if (is_json_number(s)) {
		fputs(s, f);
		return;
	}
	const char *p = s + (s[0] == '-');
	if (*p && strspn(p, "0123456789") == strlen(p)) {
		while (p[0] == '0' && p[1])
			p++;
		if (s[0] == '-' && strcmp(p, "0") != 0)
			fputc('-', f);
		fputs(p, f);
		return;
	}
	json_string(f, s);
}

static void write_rows(FILE *f, const void *arg)
{
	const struct rows_out *ro = arg;
	const struct csv_table *t = ro->t;
	if (!ro->json) {
		csv_write(f, t);
		return;
	}
	fprintf(f, "{\"tool\":\"tlbsim\",\"version\":\"%s\",\"command\":", TLBSIM_VERSION);
	json_string(f, ro->cmdline);
	fprintf(f, ",\"rows\":[");
	for (int r = 0; r < t->nrows; r++) {
		fprintf(f, "%s\n{", r ? "," : "");
		for (int c = 0; c < t->ncols; c++) {
			fprintf(f, "%s", c ? "," : "");
			json_string(f, t->cols[c]);
			fputc(':', f);
			if (numeric_col(t->cols[c], c, ro->nconf) && t->rows[r][c][0])
				json_number_text(f, t->rows[r][c]);
			else
				json_string(f, t->rows[r][c]);
		}
		fputc('}', f);
	}
	fprintf(f, "\n]}\n");
}

/* the one error of two --grid values that give one configuration */
static int same_config_error(const struct gdim *d, int j, int i)
{
	return cli_error("--grid %s: the values %s and %s give the same configuration (%s=%s); "
			 "give one of them", d->key, d->vals[j], d->vals[i], d->key, d->vals[j]);
}

/*
 * Two values of one --grid key that give one configuration (threads=01,1;
 * threads=3,4 of a workload whose thread count is fixed) would run it twice
 * and write its row twice, a file that shards and merge could not reproduce:
 * refuse them. Each value is tried with every other key at its first value,
 * the same for every shard. 0 or EXIT_USAGE (EXIT_INTERNAL: out of memory).
 */
static int grid_same_values(const struct cli_opts *o, const struct gdim *dims,
			    const struct consts *consts, const struct csv_table *out, int nconf,
			    const char *label)
{
	for (int g = 0; g < o->ngrid; g++) {
		if (dims[g].nvals < 2)
			continue;
		/* D: values are integers (checked when the grid was read): two
		 * that are the same number (01 and 1) are one configuration */
		if (strncmp(dims[g].key, "D:", 2) == 0) {
			for (int i = 1; i < dims[g].nvals; i++)
				for (int j = 0; j < i; j++)
					if (strtoull(dims[g].vals[i], NULL, 10) ==
					    strtoull(dims[g].vals[j], NULL, 10))
						return same_config_error(&dims[g], j, i);
			continue;
		}
		if (extra_key(dims[g].key))
			continue;	/* w: rows hold the value's text */
		char ***rows = calloc((size_t)dims[g].nvals, sizeof(*rows));
		if (!rows)
			return cli_error_code(EXIT_INTERNAL, "out of memory");
		int rc = 0;
		for (int i = 0; i < dims[g].nvals && !rc; i++) {
			struct tlbsim_config cfg = o->cfg;
			struct csv_extra extra;
			const char *gv[MAX_GRID];
			for (int h = 0; h < o->ngrid; h++) {
				gv[h] = dims[h].vals[h == g ? i : 0];
				if ((rc = cli_config_set(&cfg, dims[h].key, gv[h])))
					break;	/* the value's own error, said */
			}
			row_extra(dims, o->ngrid, gv, consts, &extra);
			struct tlbsim_resolved res;
			char rerr[TLBSIM_ERRLEN];
			if (rc)
				break;
			if (tlbsim_resolve(&cfg, &res, rerr, sizeof(rerr)))
				continue;	/* the point's own error comes when it is built */
			rows[i] = csv_config_row(out, &res, o->cfg.seed, o->seeds, &extra, label);
			if (!rows[i]) {
				rc = cli_error_code(EXIT_INTERNAL, "out of memory");
				break;
			}
			for (int j = 0; j < i; j++)
				if (rows[j] && csv_row_cmp(rows[j], rows[i], nconf) == 0) {
					rc = same_config_error(&dims[g], j, i);
					break;
				}
		}
		for (int i = 0; i < dims[g].nvals; i++)
			csv_free_row(rows[i], out->ncols);
		free(rows);
		if (rc)
			return rc;
	}
	return 0;
}

/* t (csv_result_layout) sorted by its nconf configuration columns: one row
 * per configuration (neighbours), the same row twice kept once, two
 * different rows for one configuration an error "WHO: ..." (EXIT_USAGE); 0 */
static int unique_rows(struct csv_table *t, int nconf, const char *who)
{
	int w = 0;
	for (int r = 0; r < t->nrows; r++) {
		if (w && csv_row_cmp(t->rows[w - 1], t->rows[r], nconf) == 0) {
			if (csv_row_cmp(t->rows[w - 1], t->rows[r], t->ncols) != 0)
				return cli_error("%s: two different results for the configuration "
						 "%s %s threads=%s policy=%s (files from different "
						 "versions or options?)", who, t->rows[r][0],
						 t->rows[r][1], t->rows[r][3], t->rows[r][nconf - 3]);
			csv_free_row(t->rows[r], t->ncols);
			t->rows[r] = NULL;
			continue;
		}
		t->rows[w++] = t->rows[r];
		if (w - 1 != r)
			t->rows[r] = NULL;
	}
	t->nrows = w;
	return 0;
}

static void free_points(struct point *pts, int n, int ncols)
{
	for (int i = 0; i < n; i++)
		csv_free_row(pts[i].key, ncols);
	free(pts);
}

int cmd_sweep(int argc, char **argv)
{
	struct cli_opts o;
	int rc = cli_parse(argc, argv, C_SWEEP, &o);
	if (rc) {
		cli_opts_free(&o);
		return rc < 0 ? 0 : rc;
	}
	struct gdim *dims = calloc(MAX_GRID, sizeof(*dims));
	struct csv_table out = {0}, old = {0};
	struct point *pts = NULL;
	struct seed_pool pool = {0};
	struct tlbsim_metrics *seed_m = NULL;
	struct consts *consts = NULL;
	char *labels[MAX_COLUMNS] = {0};
	int npts = 0, ncols = 0;
	char err[TLBSIM_ERRLEN + 256];
	rc = 0;
	if (!dims) {
		rc = cli_error_code(EXIT_INTERNAL, "out of memory");
		goto done;
	}
	if (!o.ngrid) {
		rc = cli_error("sweep: give at least one --grid KEY=V1,V2,...");
		goto done;
	}
	long total = 1;
	for (int g = 0; g < o.ngrid; g++) {
		if ((rc = parse_grid(o.grid[g], &dims[g])))
			goto done;
		for (int h = 0; h < g; h++)
			if (strcmp(dims[h].key, dims[g].key) == 0) {
				rc = cli_error("--grid %s given twice", dims[g].key);
				goto done;
			}
		/* the key is checked on its first value (cli_config_set names it) */
		struct tlbsim_config probe = o.cfg;
		if ((rc = cli_config_set(&probe, dims[g].key, dims[g].vals[0])))
			goto done;
		total *= dims[g].nvals;
		if (total > MAX_POINTS) {
			rc = cli_error("sweep: the grid has more than %d points", MAX_POINTS);
			goto done;
		}
	}
	int npol = o.npolicies ? o.npolicies : 1;
	if (total * npol > MAX_POINTS) {
		rc = cli_error("sweep: the grid has more than %d rows", MAX_POINTS);
		goto done;
	}
	bool stats = o.seeds > 1;
	consts = malloc(sizeof(*consts));
	if (!consts) {
		rc = cli_error_code(EXIT_INTERNAL, "out of memory");
		goto done;
	}
	consts_init(consts, &o.cfg, dims, o.ngrid);
	struct csv_extra extra;
	const char *gv0[MAX_GRID];
	for (int g = 0; g < o.ngrid; g++)
		gv0[g] = dims[g].vals[0];
	row_extra(dims, o.ngrid, gv0, consts, &extra);
	if (csv_result_header(&out, &extra, stats)) {
		rc = cli_error_code(EXIT_INTERNAL, "out of memory");
		goto done;
	}
	ncols = out.ncols;
	int nconf = csv_config_cols(&out);
	for (int p = 0; p < o.npolicies; p++)
		for (int q = 0; q < p; q++)
			if (strcmp(o.policy_args[p], o.policy_args[q]) == 0) {
				rc = cli_error("sweep: --policy %s given twice", o.policy_args[p]);
				goto done;
			}
	/* the points: the first --grid varies slowest, the policies fastest */
	pts = calloc((size_t)(total * npol), sizeof(*pts));
	if (!pts) {
		rc = cli_error_code(EXIT_INTERNAL, "out of memory");
		goto done;
	}
	/* the policy labels: the --policy text, after kernel=VERSION with
	 * --kernel (its preset is under every column: 4.14's nested=v2 is not
	 * today's, and the two rows had one label) */
	char label_default[64];
	if (o.cfg.kernel)
		snprintf(label_default, sizeof(label_default), "kernel=%s", o.cfg.kernel);
	else
		snprintf(label_default, sizeof(label_default), "default");
	for (int p = 0; p < o.npolicies; p++) {
		size_t len = strlen(label_default) + strlen(o.policy_args[p]) + 2;
		if (!(labels[p] = malloc(len))) {
			rc = cli_error_code(EXIT_INTERNAL, "out of memory");
			goto done;
		}
		if (o.cfg.kernel)
			snprintf(labels[p], len, "%s,%s", label_default, o.policy_args[p]);
		else
			snprintf(labels[p], len, "%s", o.policy_args[p]);
	}
	if ((rc = grid_same_values(&o, dims, consts, &out, nconf,
				   o.npolicies ? labels[0] : label_default)))
		goto done;
	for (long i = 0; i < total; i++) {
		long rest = i;
		int idx[MAX_GRID];
		for (int g = o.ngrid - 1; g >= 0; g--) {
			idx[g] = (int)(rest % dims[g].nvals);
			rest /= dims[g].nvals;
		}
		for (int p = 0; p < npol; p++) {
			long n = i * npol + p;
			if (o.shard_n && n % o.shard_n != o.shard_k - 1)
				continue;
			struct point *pt = &pts[npts];
			pt->cfg = o.cfg;
			if (o.npolicies)
				pt->cfg.policy = o.policies[p];
			pt->policy = o.npolicies ? labels[p] : label_default;
			for (int g = 0; g < o.ngrid; g++) {
				pt->gv[g] = dims[g].vals[idx[g]];
				if ((rc = cli_config_set(&pt->cfg, dims[g].key, pt->gv[g])))
					goto done;
			}
			pt->gi = i;
			char rerr[TLBSIM_ERRLEN];
			if (tlbsim_resolve(&pt->cfg, &pt->res, rerr, sizeof(rerr))) {
				char where[512];
				where_text(dims, o.ngrid, i, where, sizeof(where));
				rc = cli_error("sweep at %s: %s", where, rerr);
				goto done;
			}
			row_extra(dims, o.ngrid, pt->gv, consts, &extra);
			pt->key = csv_config_row(&out, &pt->res, o.cfg.seed, o.seeds, &extra,
						 pt->policy);
			if (!pt->key) {
				rc = cli_error_code(EXIT_INTERNAL, "out of memory");
				goto done;
			}
			npts++;
		}
	}
	if ((rc = check_workload_params(pts, npts, dims, o.ngrid, o.max_memory)))
		goto done;
	/* resume: the rows already in a regular output file (a stream, e.g.
	 * /dev/stdout, is only written: reading it waited for input forever); an
	 * empty file (touch, a shell redirection) holds no rows yet */
	struct stat st;
	if (o.output && !o.json && !out_is_stream(o.output) && stat(o.output, &st) == 0 &&
	    !(S_ISREG(st.st_mode) && st.st_size == 0)) {
		if (csv_read(o.output, &old, err, sizeof(err))) {
			rc = cli_error("-o %s: cannot resume from it: %s", o.output, err);
			goto done;
		}
		bool same = old.ncols == out.ncols;
		for (int c = 0; same && c < out.ncols; c++)
			same = strcmp(old.cols[c], out.cols[c]) == 0;
		if (!same) {
			rc = cli_error("-o %s: its columns are not this sweep's (another grid, "
				       "-w, -D, --seeds or tlbsim version?); give another -o", o.output);
			goto done;
		}
		/* the profile column is a name: a profile file's values are not in
		 * the file, so its rows cannot be shown to be this file's */
		bool file_profile = false;
		for (int i = 0; i < npts; i++)
			file_profile |= pts[i].cfg.profile_def && !profile_is_builtin(pts[i].res.profile);
		if (file_profile && old.nrows) {
			rc = cli_error("-o %s: cannot resume into it with --profile %s: the file records "
				       "the profile's name (%s), not its values; give another -o",
				       o.output, o.cfg.profile ? o.cfg.profile : "FILE",
				       o.cfg.profile_def->name);
			goto done;
		}
		/* sorted, each point is a binary search (a scan of every row for
		 * every point took minutes for large grids) */
		csv_sort(&old, nconf);
		char who[600];
		snprintf(who, sizeof(who), "-o %s: cannot resume from it", o.output);
		if ((rc = unique_rows(&old, nconf, who)))
			goto done;
		for (int i = 0; i < npts; i++)
			pts[i].have = csv_find(&old, pts[i].key, nconf) >= 0;
	}
	if (o.output && csv_probe_dir(o.output)) {
		rc = cli_error("-o %s: cannot write there: %s", o.output, strerror(errno));
		goto done;
	}
	/* the runs: every seed of every point not in the file */
	int torun = 0;
	for (int i = 0; i < npts; i++)
		torun += !pts[i].have;
	pool.n = torun * o.seeds;
	pool.t = calloc((size_t)(pool.n ? pool.n : 1), sizeof(*pool.t));
	seed_m = calloc((size_t)(o.seeds), sizeof(*seed_m));
	if (!pool.t || !seed_m) {
		rc = cli_error_code(EXIT_INTERNAL, "out of memory");
		goto done;
	}
	for (int i = 0, k = 0; i < npts; i++) {
		if (pts[i].have)
			continue;
		for (int s = 0; s < o.seeds; s++, k++) {
			pool.t[k].cfg = pts[i].cfg;
			pool.t[k].cfg.seed = o.cfg.seed + (uint64_t)s;
		}
	}
	int run_rc = 0;
	struct pool_progress pg;
	pool_progress_tty(&pool, &pg);
	if (pool.n)
		run_rc = pool_run_opts(&pool, &o, err, sizeof(err));
	pool_progress_end(&pool);
	/* the rows: the file's, then every point whose seeds all completed */
	for (int r = 0; r < old.nrows; r++) {
		if (csv_add_row(&out, old.rows[r])) {
			rc = cli_error_code(EXIT_INTERNAL, "out of memory");
			goto done;
		}
		old.rows[r] = NULL;
	}
	old.nrows = 0;
	int ran = 0, stopped_sig = 0;
	bool stopped = false;
	for (int i = 0, k = 0; i < npts; i++) {
		if (pts[i].have)
			continue;
		struct seed_task *t0 = &pool.t[k];
		k += o.seeds;
		bool complete = true;
		for (int s = 0; s < o.seeds; s++) {
			if (!t0[s].ran || t0[s].rc || t0[s].stopped)
				complete = false;
			if (t0[s].ran && t0[s].stopped) {
				stopped = true;
				if (t0[s].stopped == SIM_STOP_SIGNAL)
					stopped_sig = t0[s].stop_signal;
			}
			seed_m[s] = t0[s].m;
		}
		if (!complete) {
			stopped |= !t0[0].ran;
			continue;
		}
		struct run_result r = {.cfg = t0[0].cfg, .res = pts[i].res, .nseeds = o.seeds};
		if (o.seeds > 1) {
			r.seed_m = seed_m;
			mean_metrics(seed_m, o.seeds, pts[i].res.cpus, &r.m);
		} else {
			r.m = seed_m[0];
		}
		row_extra(dims, o.ngrid, pts[i].gv, consts, &extra);
		char **row = csv_result_row(&out, &r, &extra, pts[i].policy, stats);
		if (!row || csv_add_row(&out, row)) {
			rc = cli_error_code(EXIT_INTERNAL, "out of memory");
			goto done;
		}
		ran++;
	}
	csv_sort(&out, nconf);
	struct rows_out ro = {.t = &out, .json = o.json, .cmdline = cli_cmdline(&o), .nconf = nconf};
	if (o.output) {
		if (atomic_write(o.output, write_rows, &ro)) {
			rc = cli_error_code(EXIT_INTERNAL, "-o %s: cannot write: %s", o.output,
					    strerror(errno));
			goto done;
		}
	} else {
		write_rows(stdout, &ro);
		fflush(stdout);
	}
	if (run_rc) {
		rc = cli_error_code(run_rc == TLBSIM_EINVAL ? EXIT_USAGE : EXIT_INTERNAL, "%s%s", err,
				    o.output ? " (the rows complete so far are written)" : "");
		goto done;
	}
	if (!stopped_sig)
		stopped_sig = cli_pending_signal(NULL);
	if (stopped || stopped_sig) {
		fprintf(stderr, "tlbsim: note: sweep stopped early (%s): %d of %d row(s) run%s\n",
			cli_signal_name(stopped_sig), ran, torun,
			o.output ? "; run the same command again to resume" : "");
		rc = stopped_sig ? 128 + stopped_sig : 0;
		goto done;
	}
	if (o.output) {
		fputs("tlbsim: sweep: ", stderr);
		cli_put_sanitized(stderr, o.output);
		fprintf(stderr, ": %d row(s), %d run now, %d already there\n", out.nrows, ran,
			npts - torun);
	}
done:
	if (dims)
		for (int g = 0; g < MAX_GRID; g++)
			free(dims[g].buf);
	free(dims);
	free_points(pts, npts, ncols);
	free(pool.t);
	free(seed_m);
	free(consts);
	for (int p = 0; p < MAX_COLUMNS; p++)
		free(labels[p]);
	csv_free(&out);
	csv_free(&old);
	cli_opts_free(&o);
	return rc;
}

/* ---- merge ---- */

int cmd_merge(int argc, char **argv)
{
	const char *output = NULL;
	const char *files[1024];
	int nfiles = 0;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			printf("usage: tlbsim merge A.csv B.csv ... [-o OUT.csv]\n\n"
			       "Join the CSV files of a sweep's shards (tlbsim sweep --shard K/N): they\n"
			       "must have the same columns; the rows are sorted as sweep sorts them, a\n"
			       "row found in several files is written once (the files must agree on\n"
			       "it), and OUT is written atomically (stdout without -o).\n");
			return 0;
		}
		if (strcmp(argv[i], "-o") == 0 || strcmp(argv[i], "--output") == 0) {
			if (i + 1 >= argc || !argv[i + 1][0])
				return cli_error("merge: %s needs a file name", argv[i]);
			output = argv[++i];
			continue;
		}
		if (argv[i][0] == '-' && argv[i][1])
			return cli_error("merge: unknown option '%s'", argv[i]);
		if (nfiles >= 1024)
			return cli_error("merge: at most 1024 files");
		files[nfiles++] = argv[i];
	}
	if (!nfiles)
		return cli_error("merge: give the CSV files to join");
	struct csv_table all = {0}, t;
	char err[TLBSIM_ERRLEN + 256];
	int nconf = -1, rc = 0;
	for (int i = 0; i < nfiles; i++) {
		if (csv_read(files[i], &t, err, sizeof(err))) {
			rc = cli_error("merge: %s", err);
			goto done;
		}
		if (i == 0) {
			nconf = csv_config_cols(&t);
			if (nconf < 0) {
				csv_free(&t);
				rc = cli_error("merge: %s: not a tlbsim result file (no wall_ns column)",
					       files[i]);
				goto done;
			}
			/* unique_rows names a configuration by these columns */
			if (!csv_result_layout(&t)) {
				csv_free(&t);
				rc = cli_error("merge: %s: not a tlbsim result file (the columns before "
					       "wall_ns are not workload, profile, cpus, threads, iters, "
					       "w:/D: columns, policy, seed, seeds)", files[i]);
				goto done;
			}
			all.ncols = t.ncols;
			all.cols = t.cols;
			t.cols = NULL;
			t.ncols = 0;
		} else {
			bool same = t.ncols == all.ncols;
			for (int c = 0; same && c < t.ncols; c++)
				same = strcmp(t.cols[c], all.cols[c]) == 0;
			if (!same) {
				csv_free(&t);
				rc = cli_error("merge: %s: its columns differ from %s's", files[i],
					       files[0]);
				goto done;
			}
			csv_free_row(t.cols, t.ncols);
			t.cols = NULL;
		}
		for (int r = 0; r < t.nrows; r++) {
			if (csv_add_row(&all, t.rows[r])) {
				csv_free(&t);
				rc = cli_error_code(EXIT_INTERNAL, "out of memory");
				goto done;
			}
			t.rows[r] = NULL;
		}
		free(t.rows);
	}
	csv_sort(&all, nconf);
	if ((rc = unique_rows(&all, nconf, "merge")))
		goto done;
	struct rows_out ro = {.t = &all, .nconf = nconf};
	if (output) {
		/* a place that takes no file is the user's (exit 2); a write
		 * that fails there is the host's (exit 3) */
		if (csv_probe_dir(output)) {
			rc = cli_error("merge: -o %s: cannot write there: %s", output, strerror(errno));
			goto done;
		}
		if (atomic_write(output, write_rows, &ro)) {
			rc = cli_error_code(EXIT_INTERNAL, "merge: -o %s: cannot write: %s", output,
					    strerror(errno));
			goto done;
		}
	} else {
		write_rows(stdout, &ro);
	}
done:
	csv_free(&all);
	return rc;
}
