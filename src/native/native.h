/*
 * native.h - the host side of tlbsim: microbenchmarks of the machine tlbsim
 * runs on (calibrate) and the workloads' shapes run as real threads or
 * processes on the host kernel (native). Nothing here is part of the
 * simulator: this room is used only by src/cli, and it includes only the
 * parameter table (cost/params.h) and the public API. Methods and limits:
 * docs/native.md.
 *
 * Times are host nanoseconds (CLOCK_MONOTONIC); nothing here is
 * deterministic.
 */
#ifndef TLBSIM_NATIVE_H
#define TLBSIM_NATIVE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "tlbsim/tlbsim.h"

/* ---- the host ---- */

struct native_host {
	bool x86;			/* x86-64; else arm64 */
	int page_size;			/* bytes */
	int ncpus;			/* online CPUs */
	char release[128];		/* uname -r */
	char model[128];		/* /proc/cpuinfo model name (or "unknown") */
	int pti;			/* meltdown mitigation "PTI": 1, 0, -1 unknown */
	int pcid;			/* x86: the pcid CPU flag: 1, 0, -1 unknown */
	bool hypervisor;		/* x86: the hypervisor CPU flag */
};

/* Fill h. Only reads /proc and /sys; never fails (unknowns stay -1). */
void native_host_probe(struct native_host *h);

/* The "TLB shootdowns" line of /proc/interrupts summed over CPUs into *n:
 * 0, or -1 with why (arm64 has no flush IPIs; the file is unreadable). */
int native_tlb_shootdowns(uint64_t *n, char *why, size_t whylen);

uint64_t native_now_ns(void);

/* ---- calibrate ---- */

#define NATIVE_MAX_FIGURES 32
#define NATIVE_METHOD_LEN 480

/* one measured figure: what it is, how it was measured, its samples */
struct native_figure {
	char name[40];			/* e.g. "syscall" */
	double min_ns, median_ns;	/* per operation */
	int samples;			/* batches timed */
	bool ok;			/* false: not measured (why in method) */
	char method[NATIVE_METHOD_LEN];
};

/* one parameter of the written profile */
struct native_param {
	int param;			/* enum param_id */
	int64_t value;
	bool measured;			/* false: the base profile's value */
	char why[NATIVE_METHOD_LEN];	/* measured: the method and derivation */
};

struct native_calib {
	struct native_host host;
	const char *base_profile;	/* the built-in profile whose values fill the rest */
	int nfig;
	struct native_figure fig[NATIVE_MAX_FIGURES];
	int nparam;
	struct native_param param[NATIVE_MAX_FIGURES];
	uint64_t elapsed_ns;		/* host time the measurements took */
	bool no_zero_page;		/* a read fault allocated pages */
	bool no_flush_ipis;		/* x86: a shootdown sent no TLB IPI */
	int stopped;			/* non-zero: interrupted (its value), figures incomplete */
};

/* Run every microbenchmark (at most about budget_ms host milliseconds in
 * all); notes on what the host does not allow go to diag. interrupted (may
 * be NULL) is asked between batches; when it returns non-zero the
 * measurements stop and c->stopped holds that value. 0 (see c->stopped), or
 * -1 with err (a host resource that every measurement needs failed). */
int native_calibrate(struct native_calib *c, unsigned budget_ms, int (*interrupted)(void *),
		     FILE *diag, char *err, size_t errlen);
/* The profile file (format of tlbsim_profile_load) with one comment per
 * value naming its method or saying it was not measured. */
void native_write_profile(FILE *f, const struct native_calib *c, const char *name);
/* The figures and parameters as one JSON object (numbers with 1 decimal). */
void native_write_calib_json(FILE *f, const struct native_calib *c);

/* ---- native runs ---- */

enum native_workload { NATIVE_MMAP8, NATIVE_PAGE_FAULT3 };

struct native_run_cfg {
	enum native_workload wl;
	int threads;			/* threads or tasks */
	int64_t iters;			/* mmap8: loops per thread; page_fault3: measured rounds */
	uint64_t size;			/* bytes per mapping */
	uint64_t touch;			/* mmap8: pages written per loop */
	bool shared;			/* mmap8: MAP_SHARED (else MAP_PRIVATE) */
	bool processes;			/* page_fault3: fork tasks (else threads) */
	bool tmpfs;			/* page_fault3: the file on tmpfs (else ext4) */
	int cpus;			/* 0: every allowed CPU; else the first N of them */
	/* NULL, or asked every 10 ms during the run: non-zero (a signal
	 * number) stops the tasks early (native_run_result.stopped) */
	int (*interrupted)(void *);
};

struct native_run_result {
	uint64_t real_ns;		/* the whole run, threads created to joined */
	uint64_t user_ns, sys_ns;	/* getrusage: the process (threads) or its children */
	uint64_t window_ns;		/* page_fault3: the measured rounds; mmap8: real_ns */
	uint64_t ops;			/* whole run (mmap8 loops; page_fault3 pages) */
	uint64_t window_ops;		/* ops in the window */
	uint64_t minflt, majflt, nvcsw, nivcsw;
	bool have_ipis;
	uint64_t tlb_ipis;		/* delta of the TLB shootdowns line (system-wide) */
	char ipi_note[160];		/* when !have_ipis: why */
	char fs_note[160];		/* page_fault3: where the files went */
	int cpus;			/* CPUs the run could use */
	int stopped;			/* non-zero: cfg->interrupted's value; the counts
					 * cover the run until the tasks stopped */
};

/* Run the workload's shape on the host. 0, or -1 with err (bad parameter:
 * *usage set; host failure: *usage clear). */
int native_run(const struct native_run_cfg *cfg, struct native_run_result *r, bool *usage,
	       char *err, size_t errlen);

#endif
