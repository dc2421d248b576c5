/*
 * glibc.c - the parts of glibc's NPTL that touch the address space.
 *
 * pthread_create: take a cached stack or mmap a new 8 MiB one (RLIMIT_STACK
 * default) and clone (nptl/allocatestack.c). The new thread runs on the next
 * CPU in round-robin order (docs/design.md: placement).
 * Thread exit (nptl/pthread_create.c start_thread -> advise_stack_range):
 * madvise(MADV_DONTNEED) of the unused part of the stack below the current
 * stack pointer, keeping PTHREAD_STACK_MIN (16 KiB), then the stack goes back
 * to the cache. That madvise is the concurrent gather in the 000 race.
 */
#include <stdlib.h>

#include "workload/workload.h"

#define GLIBC_STACK_SIZE (8ull << 20)
#define PTHREAD_STACK_MIN_BYTES (16ull << 10)
#define STACK_CACHE_MAX 64

struct glibc_state {
	uint64_t lo[STACK_CACHE_MAX], hi[STACK_CACHE_MAX];
	int n;
	int next_cpu;
};

static struct glibc_state *gstate(struct sim *s)
{
	/* kept in the workload area's tail: see glibc_state_get */
	return (struct glibc_state *)s->glibc;
}

static void start_thread(struct sim *s, struct sim_thread *t)
{
	uint64_t ps = s->hw.geom.page_size;
	thread_fn fn = t->user_fn;
	/* the thread's first frames live at the top of its stack */
	user_access(s, t->stack_hi - 64, true);
	fn(s, t);
	/* advise_stack_range(): sp is one page below the top */
	uint64_t sp = t->stack_hi - ps;
	uint64_t freesize = (sp - t->stack_lo) & ~(ps - 1);
	if (freesize > PTHREAD_STACK_MIN_BYTES)
		sys_madvise_dontneed(s, t->stack_lo, freesize - PTHREAD_STACK_MIN_BYTES);
	struct glibc_state *g = gstate(s);
	if (g->n < STACK_CACHE_MAX) {
		g->lo[g->n] = t->stack_lo;
		g->hi[g->n] = t->stack_hi;
		g->n++;
	} else {
		sys_munmap(s, t->stack_lo, t->stack_hi - t->stack_lo);
	}
}

struct sim_thread *glibc_pthread_create(struct sim *s, thread_fn fn, void *arg, uint64_t arg2)
{
	struct sim_thread *self = sim_current(s);
	if (!s->glibc) {
		s->glibc = calloc(1, sizeof(struct glibc_state));
		if (!s->glibc) {
			sim_fail(s, TLBSIM_ENOMEM, "out of memory");
			return NULL;
		}
	}
	struct glibc_state *g = gstate(s);
	uint64_t lo, hi;
	if (g->n > 0) {
		g->n--;
		lo = g->lo[g->n];
		hi = g->hi[g->n];
	} else {
		lo = sys_mmap(s, 0, GLIBC_STACK_SIZE, TLBSIM_MAP_PRIVATE);
		if (lo == TLBSIM_EINVAL_VA) {
			sim_fail(s, TLBSIM_EINVAL, "cannot map a thread stack");
			return NULL;
		}
		hi = lo + GLIBC_STACK_SIZE;
	}
	sim_set_mode(s, MODE_SYS);
	sim_step(s, YP_THREAD, (uint64_t)P(s, P_thread_create_ns));
	sim_set_mode(s, MODE_USER);
	g->next_cpu = (g->next_cpu + 1) % s->nr_cpus;
	struct sim_thread *t = sim_thread_create(s, start_thread, arg, arg2, self->mm,
						 g->next_cpu, 0);
	if (t) {
		t->user_fn = fn;
		t->stack_lo = lo;
		t->stack_hi = hi;
	}
	return t;
}

void glibc_pthread_join(struct sim *s, struct sim_thread *t)
{
	sim_join(s, t);
}

void glibc_stack_cache_free(struct sim *s)
{
	free(s->glibc);
	s->glibc = NULL;
}
