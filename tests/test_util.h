/*
 * test_util.h - build a simulation for unit tests without a workload, through
 * the one constructor (src/core/core.h: core_build with no_workload).
 *
 *   struct sim *s = tsim_new("falkor-46", 4, NESTED_PREFIX);
 *   tsim_spawn(s, my_thread_fn, arg, cpu);   // a task in mm 0
 *   tsim_run(s);                             // asserts the run succeeded
 *   tsim_free(s);
 *
 * Thread functions run as simulated tasks, so they may call any kernel-model
 * function (sys_mmap, user_access, tlb_gather_mmu, down_read, ...).
 * tsim_new_p() additionally applies parameter overrides (pairs of id, value,
 * terminated by -1). Unit tests state rules with exact times: jitter is 0
 * unless a test overrides P_jitter itself. The oracle is attached, as in
 * every run. More processes:
 * mm_alloc(s) makes a new address space, tsim_spawn_mm() starts a task in it,
 * tsim_mm(s, i) finds mm number i; tsim_translate() says which frame a CPU
 * would read at a VA.
 */
#ifndef TLBSIM_TEST_UTIL_H
#define TLBSIM_TEST_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "arch/points.h"
#include "core/core.h"
#include "mm/points.h"

/* SIM_BUG_ON in tests goes to cmocka's mock_assert: a death test wraps the
 * call in expect_assert_failure(), anywhere else it fails the test. */
static inline void tsim_on_bug(const char *file, int line, const char *what)
{
	mock_assert(0, what, file, line);
}

/* tsim_new_pol(): the same with every knob from *pol (the machine reads
 * some of them while it is built, e.g. x86_invlpg_miss) */
static inline struct sim *tsim_new_pol(const char *profile, int nr_cpus,
				       const struct tlbsim_policy *pol, const int64_t *ov);

static inline struct sim *tsim_new_p(const char *profile, int nr_cpus, enum nested_policy nested,
				     const int64_t *ov)
{
	struct tlbsim_config c0;
	tlbsim_config_init(&c0);
	c0.policy.nested = nested;
	return tsim_new_pol(profile, nr_cpus, &c0.policy, ov);
}

static inline struct sim *tsim_new_pool(const char *profile, int nr_cpus,
					const struct tlbsim_policy *pol, const int64_t *ov,
					struct sim_stack_pool *pool);
static inline struct sim *tsim_new_pol(const char *profile, int nr_cpus,
				       const struct tlbsim_policy *pol, const int64_t *ov)
{
	return tsim_new_pool(profile, nr_cpus, pol, ov, NULL);
}

/* tsim_new_pool(): with the checker's pool of what one simulation leaves the
 * next (struct sim_stack_pool; NULL: none) */
static inline struct sim *tsim_new_pool(const char *profile, int nr_cpus,
					const struct tlbsim_policy *pol, const int64_t *ov,
					struct sim_stack_pool *pool)
{
	const struct tlbsim_profile *prof = tlbsim_profile_find(profile);
	assert_non_null(prof);
	struct tlbsim_config cfg;
	tlbsim_config_init(&cfg);
	cfg.profile = profile;
	cfg.policy = *pol;
	cfg.overrides[cfg.noverrides].param = P_jitter;	/* exact mode (a later one wins) */
	cfg.overrides[cfg.noverrides].value = 0;
	cfg.noverrides++;
	for (int i = 0; ov && ov[i] >= 0; i += 2) {
		assert_true(cfg.noverrides < TLBSIM_MAX_OVERRIDES);
		cfg.overrides[cfg.noverrides].param = (int)ov[i];
		cfg.overrides[cfg.noverrides].value = ov[i + 1];
		cfg.noverrides++;
	}
	struct tlbsim_resolved res;
	memset(&res, 0, sizeof(res));
	res.profile = prof;
	res.cpus = nr_cpus ? nr_cpus : prof->nr_cpus;
	struct core_opts o = {.want_kind = -1, .no_workload = true, .stack_pool = pool};
	struct tlbsim_sim *ts = malloc(sizeof(*ts));
	assert_non_null(ts);
	char err[TLBSIM_ERRLEN];
	int rc = core_build(ts, &cfg, &res, &o, err, sizeof(err));
	if (rc)
		fail_msg("core_build: %s", err);
	struct sim *s = core_sim(ts);
	s->on_bug = tsim_on_bug;
	assert_non_null(mm_alloc(s));
	return s;
}

/* A run of a built-in workload as the CLI would set it up: cfg for workload
 * on profile with threads (0: the default) and iters, its policy defaults
 * applied, resolved into res (a failure fails the test) */
static inline void tsim_workload_cfg(struct tlbsim_config *cfg, struct tlbsim_resolved *res,
				     const char *workload, const char *profile, int threads,
				     int64_t iters)
{
	tlbsim_config_init(cfg);
	cfg->workload = workload;
	cfg->profile = profile;
	cfg->threads = threads;
	cfg->iters = iters;
	tlbsim_policy_apply_workload(&cfg->policy, workload);
	char err[TLBSIM_ERRLEN];
	if (tlbsim_resolve(cfg, res, err, sizeof(err)))
		fail_msg("%s on %s: %s", workload, profile, err);
}

static inline struct sim *tsim_new(const char *profile, int nr_cpus, enum nested_policy nested)
{
	return tsim_new_p(profile, nr_cpus, nested, NULL);
}

/* mm number i (0: the one tsim_new made) */
static inline struct mm_struct *tsim_mm(struct sim *s, int i)
{
	assert_true(i < kernel_of(s)->nr_mms);
	return kernel_of(s)->mms[i];
}

static inline struct oracle *tsim_oracle(struct sim *s)
{
	return &core_of(s)->oracle;
}

static inline struct violation_rec *tsim_violation(struct sim *s)
{
	return &core_of(s)->oracle.first;
}

static inline struct sim_thread *tsim_spawn_mm(struct sim *s, thread_fn fn, void *arg,
					       struct mm_struct *mm, int cpu)
{
	struct task *tk = task_create(s, sizeof(struct task), fn, arg, mm, cpu, 0);
	assert_non_null(tk);
	return &tk->thread;
}

static inline struct sim_thread *tsim_spawn(struct sim *s, thread_fn fn, void *arg, int cpu)
{
	return tsim_spawn_mm(s, fn, arg, tsim_mm(s, 0), cpu);
}

static inline void tsim_run(struct sim *s)
{
	int rc = sim_run(s);
	if (rc)
		fail_msg("sim_run failed: %s", s->errmsg);
}

/* A test thread's handshake with another: step in user mode, 10 ns at a
 * time, until cond holds. */
#define TSIM_WAIT_UNTIL(s, cond)					\
	do {								\
		while (!(cond))						\
			sim_step((s), YP_USER, 10);			\
	} while (0)

/* A private anonymous mapping of `pages` pages in the running task's mm,
 * each written once: present, writable and cached in this CPU's TLB. */
static inline uint64_t tsim_map_written(struct sim *s, int pages)
{
	uint64_t ps = hw_of(s)->geom.page_size;
	uint64_t a = sys_mmap(s, 0, (uint64_t)pages * ps, TLBSIM_MAP_PRIVATE);
	for (int i = 0; i < pages; i++)
		assert_int_equal(user_access(s, a + (uint64_t)i * ps, true), 0);
	return a;
}

static inline void tsim_free(struct sim *s)
{
	struct tlbsim_sim *ts = core_of(s);
	core_destroy(ts);
	free(ts);
}

/* A user access through the MMU on cpu for mm, as the fault path sees it:
 * 0, or -1 on a fault (then *fault_pte = the live PTE). Charges the walk. */
static inline int tsim_mmu_access(struct sim *s, int cpu, struct mm_struct *mm, uint64_t va,
				  bool write, uint64_t *fault_pte)
{
	struct hw_access acc;
	hw_access(hw_of(s), cpu, mm->pgd, machine_of(s)->arch->user_tag(s, cpu), va, write, &acc);
	if (acc.levels_read)
		sim_charge(s, (uint64_t)acc.levels_read * (uint64_t)P(s, P_walk_level_ns));
	if (!acc.fault)
		return 0;
	*fault_pte = acc.live_pte;
	return -1;
}

/* What cpu reads at va for mm, as its MMU translates it now (the TLB, else a
 * walk that fills it, with the CPU's current user tag): the data frame, or
 * NO_FRAME on a fault. No time is charged. A stale TLB entry of another mm
 * with the same tag shows here as a foreign frame. */
static inline uint32_t tsim_translate(struct sim *s, int cpu, struct mm_struct *mm, uint64_t va)
{
	struct hw *hw = hw_of(s);
	uint32_t tag = machine_of(s)->arch->user_tag(s, cpu);
	struct hw_access acc;
	hw_access(hw, cpu, mm->pgd, tag, va, false, &acc);
	if (acc.fault)
		return NO_FRAME;
	struct tc_entry *e = tc_lookup(&hw->cpu[cpu].tlb, va >> hw->geom.page_shift,
				       hw->geom.levels - 1, tag);
	if (!e)		/* a block entry (PMD-mapped THP) */
		e = tc_lookup(&hw->cpu[cpu].tlb, hw_block_key(&hw->geom, va >> hw->geom.page_shift),
			      hw->geom.depth_pmd, tag);
	return e ? e->frame : NO_FRAME;
}

/* The frame mm's live page tables map at va, or NO_FRAME. */
static inline uint32_t tsim_pte_frame(struct sim *s, struct mm_struct *mm, uint64_t va)
{
	pte_t *ptep = pte_lookup(s, mm, va);
	return ptep && pte_present(*ptep) ? pte_pfn(*ptep) : NO_FRAME;
}

/* cpu's cached leaf TLB entry for va in the mm it runs (no LRU update), or
 * NULL */
static inline const struct tc_entry *tsim_leaf_of(struct sim *s, int cpu, uint64_t va)
{
	struct hw *hw = hw_of(s);
	uint32_t tag = machine_of(s)->arch->user_tag(s, cpu);
	return tc_peek(&hw->cpu[cpu].tlb, va >> hw->geom.page_shift, hw->geom.levels - 1, tag);
}

/* cpu caches a leaf for va that grants a write (x86 RW; arm64 AP[2] clear) */
static inline bool tsim_leaf_writable(struct sim *s, int cpu, uint64_t va)
{
	const struct tc_entry *e = tsim_leaf_of(s, cpu, va);
	if (!e)
		return false;
	return machine_is_x86(s) ? (e->perm & PTE_WRITE) != 0 : !(e->perm & PTE_RDONLY);
}

/* mm's PMD entry for va (a huge block, a table pointer, or 0) */
static inline pte_t tsim_pmd(struct sim *s, struct mm_struct *mm, uint64_t va)
{
	pte_t *p = hw_pmd_lookup(hw_of(s), mm->pgd, va);
	return p ? *p : 0;
}

/* a huge PMD entry grants a write (x86 RW; arm64 write and AP[2] clear) */
static inline bool tsim_pmd_writable(struct sim *s, pte_t pmd)
{
	return machine_is_x86(s) ? (pmd & PTE_WRITE) != 0
				 : (pmd & PTE_WRITE) && !(pmd & PTE_RDONLY);
}

/* some CPU caches a block (TC_BLOCK) entry of va's block for the tag of
 * the mm it runs; with `writable`, one that grants a write */
static inline bool tsim_block_cached(struct sim *s, uint64_t va, bool writable)
{
	struct hw *hw = hw_of(s);
	const struct pt_geom *g = &hw->geom;
	for (int c = 0; c < s->nr_cpus; c++) {
		const struct tc_entry *e =
			tc_peek(&hw->cpu[c].tlb, hw_block_key(g, va >> g->page_shift), g->depth_pmd,
				machine_of(s)->arch->user_tag(s, c));
		if (!e)
			continue;
		bool w = machine_is_x86(s) ? (e->perm & PTE_WRITE) != 0 : !(e->perm & PTE_RDONLY);
		if (!writable || w)
			return true;
	}
	return false;
}

#endif
