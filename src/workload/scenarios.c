/*
 * scenarios.c - small workloads that reproduce historical TLB-flush races
 * (kernel-model 7.1 and issue 3), for `tlbsim check` and the tests.
 *
 * madv_race (99baac21e458, 2017, "mm: fix MADV_[FREE|DONTNEED] TLB flush miss
 * problem"): the main thread writes a private page (its CPU caches a
 * writable, dirty TLB entry) and keeps writing it, while two threads both
 * madvise() the same page. Before the fix the second zapper finds the PTE
 * already gone (or clean), records nothing, flushes nothing and returns while
 * the first one's flush is still pending: DONTNEED -> I2, FREE -> I3.
 *
 * lazy_tables (b956575bed91, 2017, "x86/mm: Flush more aggressively in lazy
 * TLB mode"): a thread writes a mapping on its own CPU (caching
 * paging-structure entries), exits (the CPU goes idle in lazy TLB mode with
 * the mm still loaded), then the main thread unmaps the mapping, freeing its
 * PTE table. If lazy CPUs are not flushed, the freed table stays reachable
 * through that CPU's paging-structure cache -> I1.
 */
#include <stdio.h>
#include <string.h>

#include "mm/points.h"
#include "workload/workload.h"

struct race_state {
	int64_t iters;
	bool free_advice;
	uint64_t page;
	uint64_t writes;
	uint64_t region;
};

static int madv_race_setup(struct sim *s, const struct tlbsim_resolved *r, void **state,
			   char *err, size_t errlen)
{
	struct race_state *st = kernel_obj_alloc(s, sizeof(*st));
	if (!st) {
		snprintf(err, errlen, "out of memory");
		return TLBSIM_ENOMEM;
	}
	*state = st;
	st->iters = r->iters;
	const char *v = wparam(r, "advice");
	if (strcmp(v, "dontneed") == 0)
		st->free_advice = false;
	else if (strcmp(v, "free") == 0)
		st->free_advice = true;
	else {
		snprintf(err, errlen, "workload parameter advice=%s: want dontneed or free", v);
		return TLBSIM_EINVAL;
	}
	v = wparam(r, "writes");
	if (parse_u64(v, &st->writes) || st->writes == 0 || st->writes > 1000000) {
		snprintf(err, errlen, "workload parameter writes=%s: want 1..1000000", v);
		return TLBSIM_EINVAL;
	}
	return 0;
}

static void zapper(struct sim *s, struct sim_thread *t)
{
	struct race_state *st = t->arg;
	uint64_t ps = hw_of(s)->geom.page_size;
	if (st->free_advice)
		sys_madvise_free(s, st->page, ps);
	else
		sys_madvise_dontneed(s, st->page, ps);
}

static void madv_race_main(struct sim *s, struct sim_thread *t)
{
	struct race_state *st = t->arg;
	uint64_t ps = hw_of(s)->geom.page_size;
	for (int64_t it = 0; it < st->iters && !s->error; it++) {
		st->page = sys_mmap(s, 0, ps, TLBSIM_MAP_PRIVATE);
		user_access(s, st->page, true);
		struct sim_thread *a = glibc_pthread_create(s, zapper, st);
		struct sim_thread *b = glibc_pthread_create(s, zapper, st);
		for (uint64_t i = 0; i < st->writes; i++) {
			user_access(s, st->page, true);
			sim_step(s, YP_USER, (uint64_t)P(s, P_user_loop_ns));
		}
		if (a)
			glibc_pthread_join(s, a);
		if (b)
			glibc_pthread_join(s, b);
		sys_munmap(s, st->page, ps);
		s->m.ops++;
	}
}

static void lazy_writer(struct sim *s, struct sim_thread *t)
{
	struct race_state *st = t->arg;
	user_access(s, st->region, true);
}

static int lazy_tables_setup(struct sim *s, const struct tlbsim_resolved *r, void **state,
			     char *err, size_t errlen)
{
	struct race_state *st = kernel_obj_alloc(s, sizeof(*st));
	if (!st) {
		snprintf(err, errlen, "out of memory");
		return TLBSIM_ENOMEM;
	}
	*state = st;
	st->iters = r->iters;
	return 0;
}

static void lazy_tables_main(struct sim *s, struct sim_thread *t)
{
	struct race_state *st = t->arg;
	uint64_t ps = hw_of(s)->geom.page_size;
	/* a mapping alone in its PMD span, so munmap frees its PTE table */
	uint64_t hole = sys_mmap(s, 0, 4ull << 30, TLBSIM_MAP_PRIVATE);
	sys_munmap(s, hole, 4ull << 30);
	for (int64_t it = 0; it < st->iters && !s->error; it++) {
		st->region = sys_mmap(s, hole + (2ull << 30), ps, TLBSIM_MAP_PRIVATE);
		struct sim_thread *w = glibc_pthread_create(s, lazy_writer, st);
		if (w)
			glibc_pthread_join(s, w);
		sys_munmap(s, st->region, ps);
		s->m.ops++;
	}
}

static const struct tlbsim_wparam_desc madv_race_params[] = {
	{"advice", "dontneed", "dontneed (checks I2) or free (MADV_FREE, checks I3)"},
	{"writes", "4", "writes the main thread makes while the two zappers run"},
};

static const struct tlbsim_workload_desc madv_race_desc = {
	.name = "madv_race",
	.description = "99baac21e458 (2017): two threads madvise the same page while a third "
		       "writes it; run with --policy nested_check=off for the pre-fix kernel",
	.default_profile = "x86-24",
	.default_threads = 3,
	.fixed_threads = 1,
	.default_iters = 1,
	.nparams = 2,
	.params = madv_race_params,
	.check_iters = 1,
	.check_cpus = 4,
	.check_wparams = "",
};

static const struct tlbsim_workload_desc lazy_tables_desc = {
	.name = "lazy_tables",
	.description = "b956575bed91 (2017): a lazy-TLB CPU keeps paging-structure entries to a "
		       "page table munmap frees; run with --policy x86_lazy=never for the pre-fix "
		       "kernel",
	.default_profile = "x86-24",
	.default_threads = 2,
	.fixed_threads = 1,
	.default_iters = 1,
	.nparams = 0,
	.params = NULL,
	.check_iters = 1,
	.check_cpus = 4,
	.check_wparams = "",
};

const struct workload_ops madv_race_ops = {
	.desc = &madv_race_desc, .setup = madv_race_setup, .main = madv_race_main,
};
const struct workload_ops lazy_tables_ops = {
	.desc = &lazy_tables_desc, .setup = lazy_tables_setup, .main = lazy_tables_main,
};
