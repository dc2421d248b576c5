/*
 * main.c - the tlbsim command line: a table of commands (perf/git style).
 * Results go to stdout, diagnostics to stderr; exit codes in cli/cli.h.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "cli/cli.h"
#include "tlbsim_revision.h"	/* generated: cmake/revision.cmake */

/*
 * Keep freed memory in the process. By default glibc returns the top of the
 * heap with brk() and large blocks with munmap() as soon as they are freed;
 * each return costs a TLB shootdown on the host, and on a paravirtualised
 * guest (this project's CI machines) a hypercall of tens of microseconds.
 * The checker builds and frees a simulation per schedule, thousands a
 * second, and spent most of its host time there: check mmap5 --runs 2000
 * took 0.44-0.98 s, 0.18-0.25 s with these settings. Memory is reused, not
 * returned; the peak is what a single simulation needs. Not for calibrate
 * and native, which measure the host's own mmap paths.
 */
static void keep_freed_memory(void)
{
#ifdef __GLIBC__
	mallopt(M_MMAP_THRESHOLD, 32 << 20);	/* glibc's largest allowed value */
	mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
}

static int run_cmd(int argc, char **argv)
{
	return cmd_run(argc, argv, false);
}

static int compare_cmd(int argc, char **argv)
{
	return cmd_run(argc, argv, true);
}

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *usage;
	const char *summary;
};

static const struct command commands[] = {
	{"list", cmd_list, "list {workloads|policies|profiles|params|kernels}", "show what can be simulated"},
	{"run", run_cmd, "run WORKLOAD [options]", "simulate one configuration"},
	{"compare", compare_cmd, "compare WORKLOAD --policy K=A --policy K=B",
	 "simulate each policy, print a table"},
	{"check", cmd_check, "check WORKLOAD [options]",
	 "explore interleavings for a stale translation; exit 1 if one is found"},
	{"sensitivity", cmd_sensitivity, "sensitivity WORKLOAD [--policy A [--policy B]]",
	 "rank the cost parameters by how much +-20 % of each moves a metric or a ratio"},
	{"calibrate", cmd_calibrate, "calibrate [-o FILE]",
	 "measure this host; write a profile file for --profile FILE"},
	{"native", cmd_native, "native WORKLOAD [options]",
	 "run the workload's shape on this host's kernel (mmap8, page_fault3)"},
	{"sweep", cmd_sweep, "sweep WORKLOAD --grid K=V1,V2 [-o F.csv]",
	 "run the cross product of --grid values per --policy, write CSV rows"},
	{"plot", cmd_plot, "plot F.csv --x COL --y COL [--by COL] [-o F.svg]",
	 "draw a line chart (SVG) of a sweep's CSV"},
	{"merge", cmd_merge, "merge A.csv B.csv ... [-o OUT.csv]", "join the CSV files of sweep shards"},
	{"import", cmd_import, "import strace FILE... [-o OUT.tlbs]",
	 "turn `strace -f -tt` output into a scenario file"},
	{"test", cmd_test, "test PATH... [--time-limit S] [--junit FILE]",
	 "check scenario files against their expect clauses"},
};

static void main_help(FILE *f)
{
	fprintf(f, "usage: tlbsim <command> [options]\n\n"
		   "A deterministic simulator of the Linux kernel's TLB-flush machinery. Times are\n"
		   "simulated (the modelled machine's), never the host's - except for calibrate and\n"
		   "native, which measure the host (and compare --native's last column).\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-50s %s\n", commands[i].usage, commands[i].summary);
	fprintf(f, "\nRun 'tlbsim <command> --help' for the options of a command.\n");
}

static int dispatch(int argc, char **argv)
{
	if (argc < 2)
		return cli_error("missing command (see tlbsim --help)");
	const char *cmd = argv[1];
	if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
		main_help(stdout);
		return 0;
	}
	if (strcmp(cmd, "--version") == 0) {
		printf("tlbsim %s (revision %s)\n", TLBSIM_VERSION, TLBSIM_REVISION);
		return 0;
	}
	if (strcmp(cmd, "calibrate") != 0 && strcmp(cmd, "native") != 0)
		keep_freed_memory();
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(cmd, commands[i].name) == 0)
			return commands[i].fn(argc - 1, argv + 1);
	return cli_error("unknown command '%s' (see tlbsim --help)", cmd);
}

/*
 * Results on stdout are the command's output: one lost to a full disk
 * (> /dev/full: ENOSPC) or an I/O error is a failure, not exit 0 with
 * nothing said. What is still buffered is flushed here and the stream's
 * error flag read; a write error is exit 3 (a host failure, as an -o file's),
 * unless the command already failed or was stopped by a signal with its
 * own one line.
 */
int main(int argc, char **argv)
{
	int rc = dispatch(argc, argv);
	errno = 0;
	bool bad = fflush(stdout) != 0;
	int e = errno;
	bad |= ferror(stdout) != 0;
	/* a write that failed before (a command's own fflush) left the flag,
	 * not its errno: an empty write asks the file again (/dev/full says
	 * ENOSPC; a regular file on a full disk says nothing) */
	if (bad && !e && write(fileno(stdout), "", 0) < 0)
		e = errno;
	if (bad && (rc == 0 || rc == EXIT_VIOLATION)) {
		if (e)
			fprintf(stderr, "tlbsim: write error on standard output: %s\n", strerror(e));
		else
			fputs("tlbsim: write error on standard output\n", stderr);
		rc = EXIT_INTERNAL;
	}
	return rc;
}
