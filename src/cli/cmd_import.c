/*
 * cmd_import.c - `tlbsim import strace FILE [-o OUT.tlbs] [--name NAME]`:
 * a scenario file from the output of `strace -f -tt` (src/scenario/strace.c
 * says what becomes what). Errors name FILE:LINE, exit 2, and write nothing;
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
	fprintf(f, "usage: tlbsim import strace FILE [-o OUT.tlbs] [--name NAME] [--touch]\n\n"
		   "Turn the output of `strace -f -tt` (or -ttt; -T durations are used) into a\n"
		   "scenario file: one task per pid (the first is main; a clone with CLONE_VM a\n"
		   "thread, fork/vfork/clone without it a process), mmap/munmap/madvise as\n"
		   "statements with their addresses kept (as variable + offset), the time between\n"
		   "a task's syscalls as compute, every syscall the model lacks as a comment.\n\n"
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

int cmd_import(int argc, char **argv)
{
	const char *kind = NULL, *file = NULL, *out = NULL, *name = NULL;
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
			else
				out = argv[++i];
		} else if (!strcmp(a, "--touch")) {
			touch = true;
		} else if (a[0] == '-' && a[1]) {
			return cli_error("import: unknown option '%s' (see tlbsim import --help)", a);
		} else if (!kind) {
			kind = a;
		} else if (!file) {
			file = a;
		} else {
			return cli_error("import: one FILE only ('%s' is extra)", a);
		}
	}
	if (!kind || strcmp(kind, "strace"))
		return cli_error("import: want `tlbsim import strace FILE` (%s%s)",
				 kind ? "unknown format " : "no format", kind ? kind : "");
	if (!file)
		return cli_error("import strace: give the strace output FILE");
	FILE *f = fopen(file, "rb");
	if (!f)
		return cli_error("import strace: %s: %s", file, strerror(errno));
	char *text = malloc(IMPORT_MAX_BYTES + 1);
	errno = 0;
	size_t n = text ? fread(text, 1, IMPORT_MAX_BYTES + 1, f) : 0;
	bool bad = ferror(f);
	int read_errno = errno;	/* a directory: EISDIR */
	fclose(f);
	if (!text)
		return cli_error_code(EXIT_INTERNAL, "import strace: out of memory");
	if (bad || n > IMPORT_MAX_BYTES) {
		free(text);
		return cli_error("import strace: %s: %s", file,
				 bad ? (read_errno ? strerror(read_errno) : "read error")
				     : "larger than 64 MiB");
	}
	/* the name: given, else FILE's base name as an identifier */
	char nb[64];
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
			if (!isalnum((unsigned char)*p) && *p != '_') {
				free(text);
				return cli_error("--name %s: want letters, digits and _", name);
			}
		if (!*name || isdigit((unsigned char)name[0]) || strlen(name) > 60) {
			free(text);
			return cli_error("--name '%s': want an identifier of at most 60 characters",
					 name);
		}
	}
	if (out && csv_probe_dir(out)) {	/* a directory, or no place for a file */
		int e = errno;
		free(text);
		return cli_error("import strace: -o %s: %s", out, strerror(e));
	}
	char *buf = NULL;
	size_t blen = 0;
	FILE *mem = open_memstream(&buf, &blen);
	if (!mem) {
		free(text);
		return cli_error_code(EXIT_INTERNAL, "import strace: out of memory");
	}
	int rc = strace_import(text, n, file, name, touch, mem, stderr);
	fclose(mem);
	free(text);
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
