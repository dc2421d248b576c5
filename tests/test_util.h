/*
 * test_util.h - build a struct sim for unit tests without a workload.
 *
 *   struct sim *s = tsim_new("falkor-46", 4, NESTED_PREFIX);
 *   tsim_spawn(s, my_thread_fn, arg, cpu);   // runs on mm 0 (s->mms[0])
 *   tsim_run(s);                             // asserts the run succeeded
 *   tsim_free(s);
 *
 * Thread functions run as simulated threads, so they may call any kernel-model
 * function (sys_mmap, user_access, tlb_gather_mmu, down_read, ...).
 * tsim_new_p() additionally applies parameter overrides (pairs of id, value,
 * terminated by -1).
 */
#ifndef TLBSIM_TEST_UTIL_H
#define TLBSIM_TEST_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sim/sim.h"

static inline struct sim *tsim_new_p(const char *profile, int nr_cpus, enum nested_policy nested,
				     const int64_t *ov)
{
	const struct tlbsim_profile *prof = tlbsim_profile_find(profile);
	assert_non_null(prof);
	int64_t p[P_COUNT];
	tlbsim_params_for(prof, NULL, p);
	for (int i = 0; ov && ov[i] >= 0; i += 2)
		p[ov[i]] = ov[i + 1];
	struct tlbsim_policy pol;
	tlbsim_policy_default(&pol);
	pol.nested = nested;
	struct sim *s = calloc(1, sizeof(*s));
	assert_non_null(s);
	assert_int_equal(sim_init(s, prof, nr_cpus ? nr_cpus : prof->nr_cpus, p, &pol, 1), 0);
	s->nr_mms = 1;
	s->mms = calloc(1, sizeof(*s->mms));
	assert_non_null(s->mms);
	assert_int_equal(mm_init(s, &s->mms[0], 0), 0);
	return s;
}

static inline struct sim *tsim_new(const char *profile, int nr_cpus, enum nested_policy nested)
{
	return tsim_new_p(profile, nr_cpus, nested, NULL);
}

static inline struct sim_thread *tsim_spawn(struct sim *s, thread_fn fn, void *arg, int cpu)
{
	struct sim_thread *t = sim_thread_create(s, fn, arg, 0, &s->mms[0], cpu, 0);
	assert_non_null(t);
	return t;
}

static inline void tsim_run(struct sim *s)
{
	int rc = sim_run(s);
	if (rc)
		fail_msg("sim_run failed: %s", s->errmsg);
}

static inline void tsim_free(struct sim *s)
{
	sim_destroy(s);
	free(s);
}

#endif
