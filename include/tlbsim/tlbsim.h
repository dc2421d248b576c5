/*
 * tlbsim.h - public API of the tlbsim engine.
 *
 * A caller fills a struct tlbsim_config (workload, profile, policy knobs, cost
 * overrides, seed), calls tlbsim_run(), and reads struct tlbsim_metrics.
 * All state of one run lives in a struct sim created and destroyed inside
 * tlbsim_run(); two runs in one process never share state.
 *
 * Errors are values: functions return 0 on success or a negative code and put
 * a one-line message into the caller's error buffer. Nothing here prints or
 * exits.
 */
#ifndef TLBSIM_TLBSIM_H
#define TLBSIM_TLBSIM_H

#include <stddef.h>
#include <stdint.h>

#define TLBSIM_MAX_WPARAMS 16
#define TLBSIM_MAX_OVERRIDES 64
#define TLBSIM_ERRLEN 256

enum tlbsim_err {
	TLBSIM_OK = 0,
	TLBSIM_EINVAL = -1,	/* bad input: unknown name, malformed or absurd value */
	TLBSIM_ENOMEM = -2,	/* host allocation failed */
	TLBSIM_EINTERNAL = -3,	/* a model assertion failed (a tlbsim bug) */
};

/* ---- policy knobs (architecture.md principle 2: variants are data) ---- */

/* nested: what tlb_finish_mmu does when mm_tlb_flush_nested() (kernel-model 9.6) */
enum nested_policy {
	NESTED_PREFIX,		/* v4.20..v5.2-rc5: __tlb_reset_range + adjust to [start,end) */
	NESTED_V1,		/* keep level bits, widen range to include [start,end) */
	NESTED_V2,		/* Yang Shi v2: range [start,end), all bits set, freed_tables */
	NESTED_FULLMM,		/* 7a30df49f63a (upstream): fullmm=1, reset, freed_tables=1 */
	NESTED_NEED_FLUSH_ALL,	/* Nadav's idea on v5.1: need_flush_all=1, reset, freed_tables=1 */
	NESTED_JAN2,		/* Jan's 2nd experiment: reset only start/end, keep bits */
	NESTED_COUNT
};

/* x86_lazy: which lazy-TLB CPUs get flush IPIs */
enum x86_lazy_policy {
	X86_LAZY_FREED_TABLES,	/* v4.20+: only when page tables were freed */
	X86_LAZY_NEVER,		/* before b956575bed91: never */
	X86_LAZY_COUNT
};

struct tlbsim_policy {
	enum nested_policy nested;
	int nested_check;		/* 1: mm_tlb_flush_nested() check (99baac21e458, v4.14) */
	enum x86_lazy_policy x86_lazy;
};

/* One knob = one name + named values; used by the CLI and `list policies`. */
struct tlbsim_knob_value {
	const char *name;
	const char *meaning;
};
struct tlbsim_knob {
	const char *name;
	const char *meaning;
	int nvalues;
	int default_value;
	const struct tlbsim_knob_value *values;
};
int tlbsim_knob_count(void);
const struct tlbsim_knob *tlbsim_knob_get(int i);
/* Set knob=value in *pol. Returns 0 or TLBSIM_EINVAL with a message in err. */
int tlbsim_policy_set(struct tlbsim_policy *pol, const char *knob, const char *value,
		      char *err, size_t errlen);
void tlbsim_policy_default(struct tlbsim_policy *pol);
const char *tlbsim_policy_value_name(const struct tlbsim_policy *pol, int knob);

/* ---- profiles ---- */
enum tlbsim_arch { ARCH_X86_64, ARCH_ARM64 };

struct tlbsim_profile {
	const char *name;
	const char *description;
	enum tlbsim_arch arch;
	int page_shift;		/* 12, 14, 16 */
	int nr_cpus;
	int64_t (*overrides)[2];	/* unused for now */
};
int tlbsim_profile_count(void);
const struct tlbsim_profile *tlbsim_profile_get(int i);
const struct tlbsim_profile *tlbsim_profile_find(const char *name);

/* ---- workloads ---- */
struct tlbsim_wparam_desc {
	const char *name;
	const char *defval;	/* textual default */
	const char *meaning;
};
struct tlbsim_workload_desc {
	const char *name;
	const char *description;
	const char *default_profile;
	int default_threads;
	int fixed_threads;	/* 1: the workload has its own thread structure;
				 * --threads does not apply (default_threads says
				 * how many run at once) */
	int64_t default_iters;
	int nparams;
	const struct tlbsim_wparam_desc *params;
	/* defaults used by `tlbsim check` (small instances explore fast) */
	int64_t check_iters;
	int check_cpus;
	const char *check_wparams;	/* "name=value,..." applied before -w */
};
int tlbsim_workload_count(void);
const struct tlbsim_workload_desc *tlbsim_workload_get(int i);
const struct tlbsim_workload_desc *tlbsim_workload_find(const char *name);

/* ---- configuration of one run ---- */
struct tlbsim_kv {
	char name[48];
	char value[80];
};
struct tlbsim_override {
	int param;		/* enum param_id */
	int64_t value;
};

struct tlbsim_config {
	const char *workload;
	const char *profile;	/* NULL: the workload's default profile */
	int cpus;		/* 0: profile default */
	int threads;		/* 0: workload default */
	int64_t iters;		/* 0: workload default */
	uint64_t seed;
	struct tlbsim_policy policy;
	int nwparams;
	struct tlbsim_kv wparams[TLBSIM_MAX_WPARAMS];
	int noverrides;
	struct tlbsim_override overrides[TLBSIM_MAX_OVERRIDES];
};

void tlbsim_config_init(struct tlbsim_config *cfg);

/* ---- metrics ---- */
#define TLBSIM_METRICS(X)                                                         \
	X(wall_ns) X(user_ns) X(sys_ns) X(idle_ns) X(ops) X(page_faults)          \
	X(tlb_misses) X(page_walks) X(gathers) X(nested_finishes) X(ipi_sent)     \
	X(ipi_received) X(flush_local_pages) X(flush_full) X(dvm_wait_ns)         \
	X(lock_wait_ns) X(violations) X(events) X(tables_freed) X(pages_freed)   \
	X(asid_rollovers) X(context_switches)
#define TLBSIM_TLBI_KINDS(X) X(vale1is) X(vae1is) X(aside1is) X(vaale1is) X(vmalle1is) X(local)

struct tlbsim_metrics {
#define X(n) uint64_t n;
	TLBSIM_METRICS(X)
#undef X
	struct {
#define X(n) uint64_t n;
		TLBSIM_TLBI_KINDS(X)
#undef X
	} tlbi;
	char first_violation[512];	/* text of the first violation, "" if none */
};

/* The fully resolved configuration a run used (for output). */
struct tlbsim_resolved {
	const struct tlbsim_profile *profile;
	const struct tlbsim_workload_desc *workload;
	int cpus;
	int threads;
	int64_t iters;
	int nwparams;
	struct tlbsim_kv wparams[TLBSIM_MAX_WPARAMS];	/* all params, defaults filled in */
};

/* Validate cfg without running (resolves defaults). 0 or TLBSIM_EINVAL + err. */
int tlbsim_resolve(const struct tlbsim_config *cfg, struct tlbsim_resolved *res,
		   char *err, size_t errlen);

/* Run one simulation. 0 on success; negative enum tlbsim_err + err on failure. */
int tlbsim_run(const struct tlbsim_config *cfg, struct tlbsim_resolved *res,
	       struct tlbsim_metrics *m, char *err, size_t errlen);

#endif
