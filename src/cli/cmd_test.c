/*
 * cmd_test.c - `tlbsim test PATH... [--time-limit S] [--junit FILE]`: run
 * every scenario file under the paths with the checker, compare each
 * outcome with the file's expect clauses, print one line per file (with -v
 * also one per clause: what was found, after how many schedules and how much
 * host time) and a summary, and optionally write JUnit XML for CI systems.
 *
 * A file's clauses are checked in order, each as `tlbsim check FILE` with
 * the clause's `with` knobs and parameters (a file with no clause is
 * expected clean). Budget per clause: --time-limit if given, else the file's
 * `time_limit`, else 2 s of host time (and at most 100000 schedules); an
 * `expect violation K` clause gets ten times that, since its search stops
 * at K (so the extra costs nothing while the model is right, and a slow
 * host - ASan, a loaded CI machine - does not turn it into a FAIL).
 *
 * With -j J, up to J files are checked at once on host threads (each check
 * owns its simulations); the lines still come out in file order, each as
 * soon as the files before it are done.
 */
#define _XOPEN_SOURCE 700
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/chart.h"
#include "cli/cli.h"
#include "cli/csv.h"
#include "oracle/oracle.h"

#define TEST_DEFAULT_MS 2000
#define TEST_VIOLATION_FACTOR 10	/* budget of an expect violation clause */

struct test_case {
	char *path;
	int status;		/* 0 ok, 1 FAIL, 2 ERROR */
	char msg[2048];
	double secs;
	FILE *detail;		/* --verbose: one line per clause, or NULL */
	char *dbuf;		/* what detail wrote */
	size_t dlen;
	bool done;		/* status, msg and dbuf are final (-j: under lock) */
};

/* The files of one `tlbsim test`, checked by jobs host threads. */
struct test_run {
	struct test_case *tc;
	size_t n;
	size_t next;		/* the next file to start (under lock) */
	bool stop;		/* a signal came: start no more (under lock) */
	uint64_t ms;
	bool ms_given, verbose;
	pthread_mutex_t lock;
	pthread_cond_t done_cv;	/* a file is done */
};

struct path_list {
	char **v;
	size_t n, cap;
	/* the directories walked, so that one reached twice (two PATHs, a
	 * bind mount) is walked once */
	struct dir_id {
		dev_t dev;
		ino_t ino;
	} *dirs;
	size_t ndirs, dircap;
};

/* 1 if the directory (dev, ino) was walked before; else remember it: 0,
 * or -1 out of memory */
static int dir_seen(struct path_list *l, const struct stat *st)
{
	for (size_t i = 0; i < l->ndirs; i++)
		if (l->dirs[i].dev == st->st_dev && l->dirs[i].ino == st->st_ino)
			return 1;
	if (l->ndirs == l->dircap) {
		size_t cap = l->dircap ? l->dircap * 2 : 16;
		struct dir_id *v = realloc(l->dirs, cap * sizeof(*v));
		if (!v)
			return -1;
		l->dirs = v;
		l->dircap = cap;
	}
	l->dirs[l->ndirs++] = (struct dir_id){st->st_dev, st->st_ino};
	return 0;
}

static int list_add(struct path_list *l, const char *p)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 32;
		char **v = realloc(l->v, cap * sizeof(*v));
		if (!v)
			return -1;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n] = strdup(p);
	if (!l->v[l->n])
		return -1;
	l->n++;
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int cmp_dirent(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

/* Directories nested deeper than this are an error (the walk recurses; a
 * silent limit of 32 skipped the files below it and the run passed). */
#define WALK_MAX_DEPTH 256

/* every *.tlbs file under dir (recursively, entries in name order), hidden
 * ones (a leading '.') too, as find(1) lists them: a CI directory such as
 * .ci/ was skipped and its files never checked. As find(1) does, a
 * symbolic link to a directory is not followed (a link back up made the
 * walk repeat itself to its depth limit, and two such links made it
 * exponential); a link to a file is a file. A directory is walked once
 * however it is reached (bind mounts). On failure -1, with the one-line
 * reason, naming the directory that failed, in why. */
static int walk(const char *dir, struct path_list *l, int depth, char *why, size_t whylen)
{
	if (depth > WALK_MAX_DEPTH) {
		snprintf(why, whylen, "%s: directories nested more than %d deep", dir,
			 WALK_MAX_DEPTH);
		return -1;
	}
	struct stat ds;
	if (stat(dir, &ds) != 0) {
		snprintf(why, whylen, "%s: %s", dir, strerror(errno));
		return -1;
	}
	int seen = dir_seen(l, &ds);
	if (seen) {
		if (seen < 0)
			snprintf(why, whylen, "out of memory");
		return seen < 0 ? -1 : 0;
	}
	struct dirent **ents;
	int ne = scandir(dir, &ents, NULL, cmp_dirent);
	if (ne < 0) {
		snprintf(why, whylen, "%s: cannot read the directory: %s", dir, strerror(errno));
		return -1;
	}
	int rc = 0;
	for (int i = 0; i < ne; i++) {
		const struct dirent *e = ents[i];
		if (rc || strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		size_t n = strlen(dir) + strlen(e->d_name) + 2;
		char *p = malloc(n);
		if (!p) {
			snprintf(why, whylen, "out of memory");
			rc = -1;
			continue;
		}
		snprintf(p, n, "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", e->d_name);
		struct stat st, lst;
		if (stat(p, &st) == 0 && lstat(p, &lst) == 0) {
			size_t pl = strlen(p);
			if (S_ISDIR(st.st_mode) && !S_ISLNK(lst.st_mode)) {
				rc = walk(p, l, depth + 1, why, whylen) < 0 ? -1 : 0;
			} else if (S_ISREG(st.st_mode) && pl > 5 && strcmp(p + pl - 5, ".tlbs") == 0) {
				rc = list_add(l, p);
				if (rc)
					snprintf(why, whylen, "out of memory");
			}
		}
		free(p);
	}
	for (int i = 0; i < ne; i++)
		free(ents[i]);
	free(ents);
	return rc;
}

/* the first line of a buffer (the first error) */
static void first_line(const char *buf, char *out, size_t n)
{
	size_t l = strcspn(buf, "\n");
	if (l >= n)
		l = n - 1;
	memcpy(out, buf, l);
	out[l] = 0;
}

static void expect_text(const struct scen_expect *e, char *out, size_t n)
{
	size_t o = (size_t)snprintf(out, n, "expect %s%s", e->kind < 0 ? "clean" : "violation ",
				    e->kind < 0 ? "" : inv_name(e->kind));
	if (e->policy[0] || e->nwparams)
		o += (size_t)snprintf(out + o, n > o ? n - o : 0, " with %s", e->policy);
	for (int i = 0; i < e->nwparams && o < n; i++)
		o += (size_t)snprintf(out + o, n - o, "%s%s=%s", i || e->policy[0] ? "," : "",
				      e->wparams[i].name, e->wparams[i].value);
}

/* run one file: 0 ok, 1 FAIL, 2 ERROR, with the message in tc->msg */
static int run_file(struct test_case *tc, uint64_t cli_ms, bool cli_ms_given)
{
	char *ebuf = NULL;
	size_t elen = 0;
	FILE *ef = open_memstream(&ebuf, &elen);
	int nerr = 0;
	struct scenario *sc = scenario_load(tc->path, ef, &nerr);
	if (ef)
		fclose(ef);
	if (!sc) {
		first_line(ebuf ? ebuf : "cannot read", tc->msg, sizeof(tc->msg));
		if (nerr > 1) {
			size_t l = strlen(tc->msg);
			snprintf(tc->msg + l, sizeof(tc->msg) - l, " (and %d more)", nerr - 1);
		}
		free(ebuf);
		return 2;
	}
	free(ebuf);
	struct scen_expect clean = {.kind = -1};
	int n = scenario_nexpect(sc);
	uint64_t ms = cli_ms_given ? cli_ms
		      : scenario_time_limit_ms(sc) ? scenario_time_limit_ms(sc) : TEST_DEFAULT_MS;
	int status = 0;
	for (int i = 0; i < (n ? n : 1) && status == 0; i++) {
		const struct scen_expect *e = n ? scenario_expect(sc, i) : &clean;
		char what[600];
		expect_text(e, what, sizeof(what));
		/* the clause's place: FILE:LINE, or FILE for the implicit
		 * `expect clean` of a file without expect clauses */
		char at[320];
		if (e->line > 0)
			snprintf(at, sizeof(at), "%.300s:%d", tc->path, e->line);
		else
			snprintf(at, sizeof(at), "%.300s", tc->path);
		struct check_opts co;
		memset(&co, 0, sizeof(co));
		tlbsim_config_init(&co.cfg);
		co.cfg.workload = tc->path;
		co.cfg.workload_def = scenario_desc(sc);
		co.cfg.memory_model = scenario_memory_model(sc);
		char err[TLBSIM_ERRLEN];
		/* the clause's knobs, then the file's own defaults */
		char pol[sizeof(e->policy)];
		snprintf(pol, sizeof(pol), "%s", e->policy);
		char *save = NULL;
		for (char *kv = strtok_r(pol, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
			char *eq = strchr(kv, '=');
			if (!eq)
				continue;
			*eq = 0;
			if (tlbsim_policy_set(&co.cfg.policy, kv, eq + 1, err, sizeof(err))) {
				snprintf(tc->msg, sizeof(tc->msg), "%s: %.600s", at, err);
				status = 2;
				break;
			}
		}
		if (status)
			break;
		tlbsim_policy_apply_desc(&co.cfg.policy, co.cfg.workload_def);
		co.cfg.nwparams = e->nwparams;
		memcpy(co.cfg.wparams, e->wparams, sizeof(e->wparams));
		check_config_defaults(&co.cfg, false, false);
		co.strategy = EX_RANDOM;
		co.runs = 100000;
		co.time_limit_ms = e->kind >= 0 ? TEST_VIOLATION_FACTOR * ms : ms;
		co.depth = 2;
		co.minimise = false;
		co.want_kind = e->kind;
		co.host_limit = cli_default_max_memory();
		co.interrupted = cli_pending_signal;
		struct check_result r;
		int rc = tlbsim_check(&co, &r, err, sizeof(err));
		tc->secs += (double)r.host_ns / 1e9;
		if (rc) {
			snprintf(tc->msg, sizeof(tc->msg), "%s: %.400s: %.600s", at, what, err);
			status = 2;
		} else if (e->kind < 0 && r.found) {
			snprintf(tc->msg, sizeof(tc->msg), "%s: %.400s: found %.600s", at, what,
				 r.v.text);
			status = 1;
		} else if (e->kind >= 0 && !r.found) {
			snprintf(tc->msg, sizeof(tc->msg), "%s: %.400s: nothing found in %llu "
				 "schedules (%.1f s)", at, what,
				 (unsigned long long)r.schedules, (double)r.host_ns / 1e9);
			status = 1;
		}
		if (!rc && tc->detail) {
			if (r.found)
				fprintf(tc->detail, "      %s: %s after %llu schedule(s), %.3f s\n", what,
					inv_name(r.v.kind), (unsigned long long)r.schedules,
					(double)r.host_ns / 1e9);
			else
				fprintf(tc->detail, "      %s: nothing in %llu schedule(s), %.3f s\n", what,
					(unsigned long long)r.schedules, (double)r.host_ns / 1e9);
		}
		if (!rc && r.stop_signal) {
			snprintf(tc->msg, sizeof(tc->msg), "%.1000s: interrupted", tc->path);
			status = 2;
		}
		check_result_free(&r);
	}
	if (status == 0)
		snprintf(tc->msg, sizeof(tc->msg), "%.1000s (%d expectation%s)", tc->path, n ? n : 1,
			 (n ? n : 1) == 1 ? "" : "s");
	scenario_free(sc);
	return status;
}

/* check file i; its lines are then in tc[i] */
static void test_one(struct test_run *r, size_t i)
{
	struct test_case *tc = &r->tc[i];
	tc->detail = r->verbose ? open_memstream(&tc->dbuf, &tc->dlen) : NULL;
	tc->status = run_file(tc, r->ms, r->ms_given);
	if (tc->detail)
		fclose(tc->detail);
	tc->detail = NULL;
}

static void *test_worker(void *arg)
{
	struct test_run *r = arg;
	pthread_mutex_lock(&r->lock);
	while (!r->stop && r->next < r->n) {
		size_t i = r->next++;
		pthread_mutex_unlock(&r->lock);
		test_one(r, i);
		pthread_mutex_lock(&r->lock);
		r->tc[i].done = true;
		if (cli_pending_signal(NULL))
			r->stop = true;
		pthread_cond_broadcast(&r->done_cv);
	}
	pthread_mutex_unlock(&r->lock);
	return NULL;
}

/* Wait until file i is done (true), or will never start: a signal stopped
 * the starts before it (false). */
static bool wait_file(struct test_run *r, size_t i)
{
	pthread_mutex_lock(&r->lock);
	while (!r->tc[i].done && !(r->stop && i >= r->next))
		pthread_cond_wait(&r->done_cv, &r->lock);
	bool done = r->tc[i].done;
	pthread_mutex_unlock(&r->lock);
	return done;
}

struct junit {
	const struct test_case *tc;
	size_t n;
	int failed, errors;
};

static void put_junit(FILE *f, const void *arg)
{
	const struct junit *j = arg;
	const struct test_case *tc = j->tc;
	size_t n = j->n;
	int failed = j->failed, errors = j->errors;
	double total = 0;
	for (size_t i = 0; i < n; i++)
		total += tc[i].secs;
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	fprintf(f, "<testsuites>\n<testsuite name=\"tlbsim test\" tests=\"%zu\" failures=\"%d\" "
		   "errors=\"%d\" time=\"%.3f\">\n", n, failed, errors, total);
	for (size_t i = 0; i < n; i++) {
		fprintf(f, "  <testcase classname=\"tlbsim.scenario\" name=\"");
		chart_xml_text(f, tc[i].path);
		fprintf(f, "\" time=\"%.3f\"", tc[i].secs);
		if (tc[i].status == 0) {
			fprintf(f, "/>\n");
			continue;
		}
		fprintf(f, ">\n    <%s message=\"", tc[i].status == 1 ? "failure" : "error");
		chart_xml_text(f, tc[i].msg);
		fprintf(f, "\"/>\n  </testcase>\n");
	}
	fprintf(f, "</testsuite>\n</testsuites>\n");
}

/* the JUnit XML, written atomically (csv.h atomic_write) */
static int write_junit(const char *path, const struct test_case *tc, size_t n, int failed,
		       int errors)
{
	struct junit j = {tc, n, failed, errors};
	return atomic_write(path, put_junit, &j);
}

static void test_help(FILE *f)
{
	fprintf(f, "usage: tlbsim test PATH... [--time-limit S] [-j J] [--junit FILE] [-v]\n\n"
		   "Check every scenario file (*.tlbs) under the paths (directories are searched\n"
		   "recursively, hidden entries too; symbolic links to directories in them are not\n"
		   "followed) against its expect clauses (docs/scenarios.md): each clause is a\n"
		   "`tlbsim check FILE` with the clause's knobs and parameters. Prints one line per\n"
		   "file - ok, FAIL (the clause and the first violation, or nothing found) or\n"
		   "ERROR (the first parse error) - and `N passed, N failed`. Exit 0 if all passed,\n"
		   "1 if any failed, 2 on bad usage.\n\noptions:\n"
		   "  --time-limit S   host-time budget per expect clause in seconds, decimals\n"
		   "                   allowed (0.001..86400; default: the file's time_limit,\n"
		   "                   else 2); an expect violation clause,\n"
		   "                   which stops when it finds the violation, gets 10 x S\n"
		   "  -j, --jobs J     check up to J files at once on host threads (1..1024,\n"
		   "                   default 1); the lines keep the files' order. Each clause\n"
		   "                   keeps its host-time budget, so use at most the host's\n"
		   "                   idle CPUs\n"
		   "  --junit FILE     also write the results as JUnit XML to FILE\n"
		   "  -v, --verbose    under each file, a line per clause: the invariant found (or\n"
		   "                   nothing), after how many schedules, in how many host seconds\n"
		   "  -h, --help       this help\n");
}

int cmd_test(int argc, char **argv)
{
	struct path_list files = {0};
	const char *junit = NULL;
	uint64_t ms = 0;
	bool ms_given = false;
	bool verbose = false;
	uint64_t jobs = 1;
	int rc = 0;
	int npaths = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			test_help(stdout);
			goto out;
		}
		if (strcmp(a, "--time-limit") == 0 || strcmp(a, "--junit") == 0 ||
		    strcmp(a, "--jobs") == 0 || strcmp(a, "-j") == 0) {
			if (i + 1 >= argc) {
				rc = cli_error("test: %s needs a value", a);
				goto out;
			}
			const char *v = argv[++i];
			if (a[1] == 'j' || strcmp(a, "--jobs") == 0) {
				if ((rc = cli_parse_uint(a, v, 1, 1024, &jobs)))
					goto out;
				continue;
			}
			if (a[2] == 'j') {
				if (!*v) {
					rc = cli_error("--junit: want a file name");
					goto out;
				}
				junit = v;
				continue;
			}
			if ((rc = cli_parse_time_limit(v, &ms)))
				goto out;
			ms_given = true;
			continue;
		}
		/* -jN and --jobs=N, as the other commands take them */
		if ((strncmp(a, "-j", 2) == 0 && a[2]) || strncmp(a, "--jobs=", 7) == 0) {
			if ((rc = cli_parse_uint("--jobs", a + (a[1] == 'j' ? 2 : 7), 1, 1024, &jobs)))
				goto out;
			continue;
		}
		if (strcmp(a, "--verbose") == 0 || strcmp(a, "-v") == 0) {
			verbose = true;
			continue;
		}
		if (a[0] == '-' && a[1]) {
			rc = cli_error("test: unknown option '%s' (see tlbsim test --help)", a);
			goto out;
		}
		npaths++;
		struct stat st;
		if (stat(a, &st) != 0) {
			rc = cli_error("test: %s: %s", a, strerror(errno));
			goto out;
		}
		if (S_ISDIR(st.st_mode)) {
			size_t before = files.n;
			char why[4096 + 160];
			if (walk(a, &files, 0, why, sizeof(why)) < 0) {
				rc = cli_error("test: %s", why);
				goto out;
			}
			if (files.n > before)
				qsort(files.v + before, files.n - before, sizeof(char *), cmp_str);
		} else if (!S_ISREG(st.st_mode)) {
			/* a FIFO without a writer blocked the open for ever, with
			 * SIGINT and SIGTERM held for the workers' polling */
			rc = cli_error("test: %s: not a regular file or a directory", a);
			goto out;
		} else if (list_add(&files, a) < 0) {
			rc = cli_error_code(EXIT_INTERNAL, "out of memory");
			goto out;
		}
	}
	if (!npaths) {
		rc = cli_error("test: missing PATH (scenario files or directories of them)");
		goto out;
	}
	if (!files.n) {
		rc = cli_error("test: no scenario files (*.tlbs) under the paths given");
		goto out;
	}
	/* the JUnit file's place, before any check runs */
	if (junit && csv_probe_dir(junit)) {
		rc = cli_error("--junit %s: cannot write: %s", junit, strerror(errno));
		goto out;
	}
	struct test_case *tc = calloc(files.n, sizeof(*tc));
	if (!tc) {
		rc = cli_error_code(EXIT_INTERNAL, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < files.n; i++)
		tc[i].path = files.v[i];
	/* SIGINT/SIGTERM blocked here, so in the workers too: each check polls */
	cli_block_signals();
	struct test_run run = {.tc = tc, .n = files.n, .ms = ms, .ms_given = ms_given,
			       .verbose = verbose};
	pthread_t th[64];
	int started = 0;
	if (jobs > 1) {
		pthread_mutex_init(&run.lock, NULL);
		pthread_cond_init(&run.done_cv, NULL);
		size_t want = jobs < files.n ? (size_t)jobs : files.n;
		if (want > 64)
			want = 64;
		for (size_t k = 0; k < want; k++) {
			if (pthread_create(&th[started], NULL, test_worker, &run))
				break;	/* fewer threads: the others do the work */
			started++;
		}
	}
	int passed = 0, failed = 0, errors = 0;
	size_t done = 0;
	for (size_t i = 0; i < files.n; i++) {
		if (started) {
			if (!wait_file(&run, i))
				break;
		} else
			test_one(&run, i);
		done = i + 1;
		static const char *const tag[] = {"ok", "FAIL", "ERROR"};
		/* the message names the file: escaped, one line whatever the name */
		printf("%-5s ", tag[tc[i].status]);
		cli_put_sanitized(stdout, tc[i].msg);
		putchar('\n');
		if (tc[i].dbuf)
			fputs(tc[i].dbuf, stdout);
		free(tc[i].dbuf);
		tc[i].dbuf = NULL;
		fflush(stdout);
		if (tc[i].status == 0)
			passed++;
		else if (tc[i].status == 1)
			failed++;
		else
			errors++;
		if (!started && cli_pending_signal(NULL))
			break;
	}
	if (jobs > 1) {
		pthread_mutex_lock(&run.lock);
		run.stop = true;	/* nothing left to start (or a signal) */
		pthread_mutex_unlock(&run.lock);
		for (int k = 0; k < started; k++)
			pthread_join(th[k], NULL);
		for (size_t i = done; i < files.n; i++)
			free(tc[i].dbuf);
		pthread_cond_destroy(&run.done_cv);
		pthread_mutex_destroy(&run.lock);
	}
	printf("%d passed, %d failed\n", passed, failed + errors);
	rc = failed + errors ? EXIT_VIOLATION : 0;
	if (junit && write_junit(junit, tc, done, failed, errors) < 0)
		rc = cli_error_code(EXIT_INTERNAL, "--junit %s: cannot write: %s", junit,
				    strerror(errno));
	int sig = cli_pending_signal(NULL);
	if (sig)
		rc = 128 + sig;
	free(tc);
out:
	for (size_t i = 0; i < files.n; i++)
		free(files.v[i]);
	free(files.v);
	free(files.dirs);
	return rc;
}
