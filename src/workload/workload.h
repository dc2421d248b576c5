/*
 * workload.h - built-in workloads written as C functions against the
 * simulated-syscall API (sys_mmap, sys_munmap, sys_madvise_dontneed,
 * user_access) plus a small model of glibc's pthread_create/exit.
 */
#ifndef TLBSIM_WORKLOAD_H
#define TLBSIM_WORKLOAD_H

#include "sim/sim.h"

struct workload_ops {
	const struct tlbsim_workload_desc *desc;
	/* Parse the resolved parameters into s->wl. 0 or TLBSIM_EINVAL + err. */
	int (*setup)(struct sim *s, const struct tlbsim_resolved *r, char *err, size_t errlen);
	void (*teardown)(struct sim *s);
	thread_fn main;		/* runs as the process's main thread on CPU 0 */
};

const struct workload_ops *workload_find(const char *name);
int workload_count(void);
const struct workload_ops *workload_get(int i);

/* Value of workload parameter name in r (always present after resolve). */
const char *wparam(const struct tlbsim_resolved *r, const char *name);
/* Parse "16M", "16MiB", "4096", "64K", "2G" into bytes. */
int parse_size(const char *txt, uint64_t *out);
int parse_u64(const char *txt, uint64_t *out);

/* glibc model */
struct sim_thread *glibc_pthread_create(struct sim *s, thread_fn fn, void *arg, uint64_t arg2);
void glibc_pthread_join(struct sim *s, struct sim_thread *t);
void glibc_stack_cache_free(struct sim *s);

#endif
