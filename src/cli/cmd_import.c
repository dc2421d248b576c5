/*
 * cmd_import.c - `tlbsim import strace FILE... [-o OUT.tlbs] [--name NAME]`:
 * a scenario file from the output of `strace -f -tt`, or of the per-process
 * files of `strace -ff -tt` merged by time (src/scenario/strace.c says what
 * becomes what). Errors name FILE:LINE, exit 2, and write nothing;
 * -o is written atomically.
 */
#define _XOPEN_SOURCE 700
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/csv.h"
#include "scenario/scenario.h"

#define IMPORT_MAX_BYTES (64u << 20)

static void import_usage(FILE *f)
{
	fprintf(f, "usage: tlbsim import strace FILE... [-o OUT.tlbs] [--name NAME] [--touch]\n\n"
		   "Turn the output of `strace -f -tt` (or -ttt; -T durations are used) into a\n"
		   "scenario file: one task per pid (the first is main; a clone with CLONE_VM a\n"
		   "thread, fork/vfork/clone without it a process), mmap/munmap/madvise as\n"
		   "statements with their addresses kept (as variable + offset), the time between\n"
		   "a task's syscalls as compute, every syscall the model lacks as a comment.\n"
		   "Several FILEs are the per-process files of `strace -ff -tt -o PREFIX`\n"
		   "(PREFIX.PID), merged by timestamp into one trace.\n\n"
		   "options:\n"
		   "  -o, --output FILE   write the scenario there (atomically); default stdout\n"
		   "      --name NAME     the scenario's name (default: FILE's base name)\n"
		   "      --touch         write every page of each mapping right after its mmap\n"
		   "                      (strace cannot see memory accesses; without it the file\n"
		   "                      has none)\n\n"
		   "The gaps between a task's syscalls include strace's own slowdown; the order of\n"
		   "syscalls across tasks is the model's schedule's, not the trace's.\n");
}

struct out_text {
	const char *p;
	size_t n;
};

static void put_text(FILE *f, const void *arg)
{
	const struct out_text *t = arg;
	fwrite(t->p, 1, t->n, f);
}

/* Read file into buf[0..cap) after *used bytes, adding what it holds to
 * *used; more than cap in all is an error. 0, or an exit status after the
 * message (what is "larger than" names the limit). */
static int read_input(const char *file, char *buf, size_t cap, size_t *used, const char *what)
{
	FILE *f = fopen(file, "rb");
	if (!f)
		return cli_error("import strace: %s: %s", file, strerror(errno));
	errno = 0;
	size_t n = fread(buf + *used, 1, cap + 1 - *used, f);
	bool bad = ferror(f);
	int e = errno;	/* a directory: EISDIR */
	fclose(f);
	if (bad || *used + n > cap)
		return cli_error("import strace: %s: %s", file,
				 bad ? (e ? strerror(e) : "read error") : what);
	*used += n;
	return 0;
}

/* ---- strace -ff: one file per process, merged by time ---- */

#define IMPORT_MAX_FILES 4096

struct ff_line {
	uint64_t t;		/* the line's -tt/-ttt timestamp in ns (the previous one's if none) */
	long pid;
	int line;		/* in its file, from 1 */
	int file;
	size_t off, len;	/* in the concatenated text */
};

static int ff_cmp(const void *a, const void *b)
{
	const struct ff_line *x = a, *y = b;
	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

/* the timestamp at p ("HH:MM:SS.ffffff" or "SECONDS.ffffff"), in ns; false
 * when the line has none. *tod: a time of day (-tt), which wraps at midnight */
static bool ff_time(const char *p, const char *end, uint64_t *t, bool *tod)
{
	uint64_t v = 0;
	const char *q = p;
	if (end - p >= 8 && isdigit((unsigned char)p[0]) && isdigit((unsigned char)p[1]) &&
	    p[2] == ':') {
		uint64_t h = (uint64_t)(p[0] - '0') * 10 + (uint64_t)(p[1] - '0'), m = 0, sec = 0;
		if (!isdigit((unsigned char)p[3]) || !isdigit((unsigned char)p[4]) || p[5] != ':' ||
		    !isdigit((unsigned char)p[6]) || !isdigit((unsigned char)p[7]))
			return false;
		m = (uint64_t)(p[3] - '0') * 10 + (uint64_t)(p[4] - '0');
		sec = (uint64_t)(p[6] - '0') * 10 + (uint64_t)(p[7] - '0');
		v = h * 3600 + m * 60 + sec;
		q = p + 8;
		*tod = true;
	} else {
		int k = 0;
		for (; q < end && isdigit((unsigned char)*q) && k < 12; q++, k++)
			v = v * 10 + (uint64_t)(*q - '0');
		if (!k)
			return false;
	}
	uint64_t ns = 0;
	if (q < end && *q == '.') {
		int k = 0;
		for (q++; q < end && isdigit((unsigned char)*q); q++, k++)
			if (k < 9)
				ns = ns * 10 + (uint64_t)(*q - '0');
		for (; k < 9; k++)
			ns *= 10;
	}
	*t = v * 1000000000ull + ns;
	return true;
}

#define DAY_NS (86400ull * 1000000000ull)

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/*
 * Times of day (-tt) as times since a day boundary, across midnight: the
 * trace starts at the first-line time that follows the largest gap between
 * the files' first-line times (on the 24 h circle), a file whose first line
 * is before that start begins the next day, and within a file a time more
 * than 12 h below the line before it is a day later. Sorted as times of day,
 * a child's lines after midnight came before its parent's, and the child
 * became main. ln holds each file's lines in a run, in file order.
 */
static void ff_unwrap_days(struct ff_line *ln, size_t nln, int nfiles)
{
	uint64_t *first = malloc((size_t)nfiles * sizeof(*first));
	uint64_t *sorted = malloc((size_t)nfiles * sizeof(*sorted));
	if (!first || !sorted) {
		free(first);
		free(sorted);
		return;		/* the trace stays as times of day */
	}
	int nf = 0;
	for (size_t k = 0; k < nln; k++)
		if (k == 0 || ln[k].file != ln[k - 1].file)
			first[ln[k].file] = sorted[nf++] = ln[k].t;
	uint64_t start = 0;
	if (nf) {
		qsort(sorted, (size_t)nf, sizeof(*sorted), cmp_u64);
		/* the gap before sorted[0] wraps around from the last */
		uint64_t best = sorted[0] + DAY_NS - sorted[nf - 1];
		start = sorted[0];
		for (int i = 1; i < nf; i++)
			if (sorted[i] - sorted[i - 1] > best) {
				best = sorted[i] - sorted[i - 1];
				start = sorted[i];
			}
	}
	uint64_t day = 0, prev = 0;
	for (size_t k = 0; k < nln; k++) {
		if (k == 0 || ln[k].file != ln[k - 1].file) {
			day = first[ln[k].file] < start ? DAY_NS : 0;
		} else if (ln[k].t + day + DAY_NS / 2 < prev) {
			day += DAY_NS;
		}
		ln[k].t += day;
		prev = ln[k].t;
	}
	free(first);
	free(sorted);
}

/* the pid of a strace -ff file name PREFIX.PID, or -1 */
static long ff_pid(const char *file)
{
	const char *d = strrchr(file, '.');
	if (!d || !d[1] || strlen(d + 1) > 9 || strspn(d + 1, "0123456789") != strlen(d + 1))
		return -1;
	return strtol(d + 1, NULL, 10);
}

/*
 * Several FILEs: the per-process files of `strace -ff -o PREFIX` (PREFIX.PID,
 * lines without a pid). Their lines are merged in time order (ties: by pid,
 * then line) with "PID " in front - the text of `strace -f` - and where[k]
 * names each merged line's file and line for the messages. 0, or an exit
 * status after the message.
 */
static int ff_merge(char **files, int nfiles, char **text_out, size_t *len_out, char ***where_out,
		    size_t *nwhere_out)
{
	char *raw = malloc(IMPORT_MAX_BYTES + 1);
	size_t used = 0;
	if (!raw)
		return cli_error_code(EXIT_INTERNAL, "import strace: out of memory");
	struct ff_line *ln = NULL;
	bool any_tod = false;	/* some line has a time of day (-tt) */
	size_t nln = 0, cap = 0;
	int rc = 0;
	for (int f = 0; f < nfiles && !rc; f++) {
		long pid = ff_pid(files[f]);
		if (pid < 0) {
			rc = cli_error("import strace: several FILEs must be the files of strace -ff "
				       "-o PREFIX (PREFIX.PID): '%s' has no .PID suffix", files[f]);
			break;
		}
		/* one file per pid: the same file twice (or a.1 and a.01) doubled
		 * every call of that pid */
		for (int g = 0; g < f && !rc; g++)
			if (ff_pid(files[g]) == pid)
				rc = cli_error("import strace: '%s' and '%s' are both pid %ld's file",
					       files[g], files[f], pid);
		if (rc)
			break;
		size_t start = used;
		if ((rc = read_input(files[f], raw, IMPORT_MAX_BYTES, &used,
				     "the files together are larger than 64 MiB")))
			break;
		uint64_t t = 0;
		int line = 0;
		for (size_t i = start; i < used;) {
			size_t j = i;
			while (j < used && raw[j] != '\n')
				j++;
			line++;
			if (j > i) {
				if (nln == cap) {
					size_t nc = cap ? cap * 2 : 4096;
					struct ff_line *g = realloc(ln, nc * sizeof(*ln));
					if (!g) {
						rc = cli_error_code(EXIT_INTERNAL, "import strace: out of "
								    "memory");
						break;
					}
					ln = g;
					cap = nc;
				}
				ff_time(raw + i, raw + j, &t, &any_tod);	/* none: the previous line's */
				ln[nln++] = (struct ff_line){t, pid, line, f, i, j - i};
			}
			i = j + 1;
		}
	}
	/* where: the nln pointers, then the names they point to, one block */
	char *text = NULL, **where = NULL, *wbuf = NULL;
	size_t tlen = 0, wlen = 0;
	if (!rc) {
		if (any_tod)
			ff_unwrap_days(ln, nln, nfiles);
		if (nln)	/* qsort of no lines: NULL is undefined */
			qsort(ln, nln, sizeof(*ln), ff_cmp);
		for (size_t k = 0; k < nln; k++) {
			tlen += ln[k].len + 13;	/* "PID " (at most 10 digits) and \n */
			wlen += strlen(files[ln[k].file]) + 13;
		}
		text = malloc(tlen + 1);
		where = malloc((nln + 1) * sizeof(*where) + wlen + 1);
		if (!text || !where)
			rc = cli_error_code(EXIT_INTERNAL, "import strace: out of memory");
		else
			wbuf = (char *)(where + nln + 1);
	}
	if (!rc) {
		size_t o = 0, w = 0;
		for (size_t k = 0; k < nln; k++) {
			o += (size_t)snprintf(text + o, tlen + 1 - o, "%ld ", ln[k].pid);
			memcpy(text + o, raw + ln[k].off, ln[k].len);
			o += ln[k].len;
			text[o++] = '\n';
			where[k] = wbuf + w;
			w += (size_t)snprintf(wbuf + w, wlen + 1 - w, "%s:%d", files[ln[k].file],
					      ln[k].line) + 1;
		}
		*text_out = text;
		*len_out = o;
		*where_out = where;
		*nwhere_out = nln;
		text = NULL;
		where = NULL;
	}
	free(text);
	free(where);
	free(ln);
	free(raw);
	return rc;
}

int cmd_import(int argc, char **argv)
{
	const char *kind = NULL, *file = NULL, *out = NULL, *name = NULL;
	char *files[IMPORT_MAX_FILES];
	int nfiles = 0;
	bool touch = false;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			import_usage(stdout);
			return 0;
		} else if (!strcmp(a, "-o") || !strcmp(a, "--output") || !strcmp(a, "--name")) {
			if (i + 1 >= argc)
				return cli_error("%s: give a value", a);
			if (a[2] == 'n')
				name = argv[++i];
			else if (!*(out = argv[++i]))
				return cli_error("import strace: %s: want a file name", a);
		} else if (!strcmp(a, "--touch")) {
			touch = true;
		} else if (a[0] == '-' && a[1]) {
			return cli_error("import: unknown option '%s' (see tlbsim import --help)", a);
		} else if (!kind) {
			kind = a;
		} else if (nfiles < IMPORT_MAX_FILES) {
			files[nfiles++] = argv[i];
		} else {
			return cli_error("import: at most %d FILEs ('%s' is one more)",
					 IMPORT_MAX_FILES, a);
		}
	}
	file = nfiles ? files[0] : NULL;
	if (!kind || strcmp(kind, "strace"))
		return cli_error("import: want `tlbsim import strace FILE` (%s%s)",
				 kind ? "unknown format " : "no format", kind ? kind : "");
	if (!file)
		return cli_error("import strace: give the strace output FILE");
	/* the name: given, else FILE's base name as an identifier */
	char nb[48];	/* a scenario's name: at most 47 characters */
	if (!name) {
		const char *b = strrchr(file, '/');
		b = b ? b + 1 : file;
		size_t k = 0;
		for (; *b && *b != '.' && k + 1 < sizeof(nb); b++)
			nb[k++] = isalnum((unsigned char)*b) ? *b : '_';
		nb[k] = 0;
		if (!k || isdigit((unsigned char)nb[0]))
			snprintf(nb, sizeof(nb), "imported");
		name = nb;
	} else {
		for (const char *p = name; *p; p++)
			if (!isalnum((unsigned char)*p) && *p != '_')
				return cli_error("--name %s: want letters, digits and _", name);
		if (!*name || isdigit((unsigned char)name[0]) || strlen(name) >= sizeof(nb))
			return cli_error("--name '%s': want an identifier of at most %zu characters",
					 name, sizeof(nb) - 1);
	}
	if (out && csv_probe_dir(out))	/* a directory, or no place for a file */
		return cli_error("import strace: -o %s: %s", out, strerror(errno));
	char *text = NULL, **where = NULL;
	size_t n = 0, nwhere = 0;
	char label[256];	/* the input as the scenario's header names it */
	snprintf(label, sizeof(label), "%s", file);
	if (nfiles > 1) {
		int rc = ff_merge(files, nfiles, &text, &n, &where, &nwhere);
		if (rc)
			return rc;
		snprintf(label, sizeof(label), "%.200s and %d more file%s of strace -ff", file,
			 nfiles - 1, nfiles > 2 ? "s" : "");
	} else {
		text = malloc(IMPORT_MAX_BYTES + 1);
		if (!text)
			return cli_error_code(EXIT_INTERNAL, "import strace: out of memory");
		int rc = read_input(file, text, IMPORT_MAX_BYTES, &n, "larger than 64 MiB");
		if (rc) {
			free(text);
			return rc;
		}
	}
	char *buf = NULL;
	size_t blen = 0;
	FILE *mem = open_memstream(&buf, &blen);
	if (!mem) {
		free(text);
		free(where);
		return cli_error_code(EXIT_INTERNAL, "import strace: out of memory");
	}
	int rc = strace_import_where(text, n, label, (const char *const *)where, nwhere, name,
				     touch, mem, stderr);
	fclose(mem);
	free(text);
	free(where);
	if (rc) {
		free(buf);
		return EXIT_USAGE;
	}
	if (blen > SCEN_MAX_FILE_BYTES) {
		free(buf);
		return cli_error("import strace: %s: the scenario would be %zu bytes, more than a "
				 "scenario file may have (%u MiB): import a shorter trace", file, blen,
				 SCEN_MAX_FILE_BYTES >> 20);
	}
	struct out_text ot = {buf, blen};
	if (out) {
		if (atomic_write(out, put_text, &ot)) {
			int e = errno;
			free(buf);
			return cli_error_code(EXIT_INTERNAL, "import strace: -o %s: %s", out,
					      strerror(e));
		}
	} else {
		fwrite(buf, 1, blen, stdout);
	}
	free(buf);
	return 0;
}
