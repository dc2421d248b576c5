/*
 * mmap8.c and mmap5 - the bug reporter's reproducers from the 2019 nested-flush
 * thread (seed 000), re-implemented from workloads.md 1.1-1.2.
 *
 * mmap8: make a hint address in the middle of a known-free 2 GiB hole, then
 * N threads each loop {p = mmap(hint, size, MAP_SHARED|MAP_ANONYMOUS);
 * write the first byte of `touch` pages; madvise(p, size, MADV_DONTNEED);
 * munmap(p, size)}. Only one thread at a time gets the hint address; the
 * others fall back to top-down placement.
 *
 * mmap5: rounds of {one worker doing `loops` x (mmap size at the hint, write
 * every page, munmap) + one dummy thread that exits at once, so its glibc
 * stack madvise(MADV_DONTNEED) runs concurrently}.
 */
#include <stdio.h>
#include <string.h>

#include "workload/workload.h"

struct mmap8_state {
	uint64_t size;
	uint64_t touch;
	int flags;
	int threads;
	int64_t iters;
	uint64_t hint;
	uint64_t loops;		/* mmap5 */
	uint64_t uws;		/* user working set, pages per iteration */
};

static int mmap_common_setup(struct sim *s, const struct tlbsim_resolved *r, void **state,
			     char *err, size_t errlen, bool is_mmap5)
{
	struct mmap8_state *st = kernel_obj_alloc(s, sizeof(*st));
	if (!st) {
		snprintf(err, errlen, "out of memory");
		return TLBSIM_ENOMEM;
	}
	*state = st;
	uint64_t ps = hw_of(s)->geom.page_size;
	const char *v = wparam(r, "size");
	if (parse_size(v, &st->size) || st->size == 0 || st->size > (1ull << 40)) {
		snprintf(err, errlen, "workload parameter size=%s: want a size from 1 byte to 1T "
			 "(suffixes K, M, G, T)", v);
		return TLBSIM_EINVAL;
	}
	uint64_t pages = (st->size + ps - 1) / ps;
	if (!is_mmap5) {
		v = wparam(r, "touch");
		if (parse_u64(v, &st->touch) || st->touch > pages) {
			snprintf(err, errlen, "workload parameter touch=%s: want 0..%llu (pages of "
				 "the mapping)", v, (unsigned long long)pages);
			return TLBSIM_EINVAL;
		}
		v = wparam(r, "uws");
		if (parse_u64(v, &st->uws) || st->uws > 1024) {
			snprintf(err, errlen, "workload parameter uws=%s: want 0..1024 (pages of "
				 "the user working set)", v);
			return TLBSIM_EINVAL;
		}
		v = wparam(r, "map");
		if (strcmp(v, "shared") == 0)
			st->flags = TLBSIM_MAP_SHARED;
		else if (strcmp(v, "private") == 0)
			st->flags = TLBSIM_MAP_PRIVATE;
		else {
			snprintf(err, errlen, "workload parameter map=%s: want shared or private", v);
			return TLBSIM_EINVAL;
		}
	} else {
		st->touch = pages;
		st->flags = TLBSIM_MAP_SHARED;
		v = wparam(r, "loops");
		if (parse_u64(v, &st->loops) || st->loops == 0 || st->loops > 100000000) {
			snprintf(err, errlen, "workload parameter loops=%s: want 1..100000000", v);
			return TLBSIM_EINVAL;
		}
	}
	st->threads = r->threads;
	st->iters = r->iters;
	return 0;
}

static int mmap8_setup(struct sim *s, const struct tlbsim_resolved *r, void **state, char *err,
		       size_t errlen)
{
	return mmap_common_setup(s, r, state, err, errlen, false);
}

static int mmap5_setup(struct sim *s, const struct tlbsim_resolved *r, void **state, char *err,
		       size_t errlen)
{
	return mmap_common_setup(s, r, state, err, errlen, true);
}

/* distant_area = mmap(NULL, 2 GiB); munmap; distant_area += 1 GiB */
static uint64_t make_hint(struct sim *s)
{
	uint64_t a = sys_mmap(s, 0, 2ull << 30, TLBSIM_MAP_PRIVATE);
	if (a == TLBSIM_EINVAL_VA) {
		sim_fail(s, TLBSIM_EINVAL, "cannot place the 2 GiB hint area");
		return 0;
	}
	sys_munmap(s, a, 2ull << 30);
	return a + (1ull << 30);
}

/* mmap8: each thread has one mapping of `size` with `touch` pages written at
 * a time; mmap5: one mapping of `size`, every page written */
static uint64_t mmap8_estimate(const struct tlbsim_resolved *r, int page_shift)
{
	uint64_t size, touch;
	if (parse_size(wparam(r, "size"), &size) || parse_u64(wparam(r, "touch"), &touch))
		return 0;
	uint64_t pages = (size >> page_shift) + 1;
	if (touch > pages)
		touch = pages;
	return (uint64_t)r->threads * estimate_mapped_bytes(touch, page_shift);
}

static uint64_t mmap5_estimate(const struct tlbsim_resolved *r, int page_shift)
{
	uint64_t size;
	if (parse_size(wparam(r, "size"), &size))
		return 0;
	return estimate_mapped_bytes((size >> page_shift) + 1, page_shift);
}

static void user_loop_overhead(struct sim *s)
{
	uint64_t l = (uint64_t)P(s, P_user_loop_ns);
	sim_charge(s, l + rng_below(&s->rng, l + 1));
}

/* One mmap8 iteration. */
static void map_touch_zap_unmap(struct sim *s, struct mmap8_state *st, bool zap)
{
	uint64_t ps = hw_of(s)->geom.page_size;
	uint64_t p = sys_mmap(s, st->hint, st->size, st->flags);
	if (p == TLBSIM_EINVAL_VA) {
		sim_fail(s, TLBSIM_EINVAL, "mmap of %llu bytes failed: address space exhausted",
			 (unsigned long long)st->size);
		return;
	}
	for (uint64_t k = 0; k < st->touch; k++)
		user_access(s, p + k * ps, true);
	if (zap)
		sys_madvise_dontneed(s, p, st->size);
	sys_munmap(s, p, st->size);
	s->m.ops++;
	glibc_user_work(s, st->uws);
	user_loop_overhead(s);
}

static void mmap8_thread(struct sim *s, struct sim_thread *t)
{
	struct mmap8_state *st = t->arg;
	for (int64_t i = 0; i < st->iters && !s->error; i++)
		map_touch_zap_unmap(s, st, true);
}

static void mmap8_main(struct sim *s, struct sim_thread *t)
{
	struct mmap8_state *st = t->arg;
	st->hint = make_hint(s);
	if (st->uws > 1 && glibc_image_map(s, st->uws - 1))
		return;
	/* a kernel object: freed with the simulation however the run ends */
	struct sim_thread **th = kernel_obj_alloc(s, (size_t)st->threads * sizeof(*th));
	for (int i = 0; i < st->threads && !s->error; i++)
		th[i] = glibc_pthread_create(s, mmap8_thread, st);
	for (int i = 0; i < st->threads; i++)
		if (th[i])
			glibc_pthread_join(s, th[i]);
}

static void mmap5_worker(struct sim *s, struct sim_thread *t)
{
	struct mmap8_state *st = t->arg;
	for (uint64_t i = 0; i < st->loops && !s->error; i++)
		map_touch_zap_unmap(s, st, false);
}

static void mmap5_dummy(struct sim *s, struct sim_thread *t)
{
	(void)s;
	(void)t;
}

static void mmap5_main(struct sim *s, struct sim_thread *t)
{
	struct mmap8_state *st = t->arg;
	st->hint = make_hint(s);
	for (int64_t r = 0; r < st->iters && !s->error; r++) {
		struct sim_thread *w = glibc_pthread_create(s, mmap5_worker, st);
		struct sim_thread *d = glibc_pthread_create(s, mmap5_dummy, st);
		if (w)
			glibc_pthread_join(s, w);
		if (d)
			glibc_pthread_join(s, d);
	}
}

static const struct tlbsim_wparam_desc mmap8_params[] = {
	{"size", "16M", "bytes per mapping (suffixes K, M, G)"},
	{"touch", "1", "pages written after each mmap (first byte of each)"},
	{"map", "shared", "shared (MAP_SHARED|MAP_ANONYMOUS, shmem) or private"},
	{"uws", "8", "user working set: pages each thread touches per iteration besides the "
		     "mapping (its stack page and uws-1 pages of program and libc text and data: "
		     "the loop, the mmap/madvise/munmap wrappers, the GOT); refilled after a "
		     "flush removes them; 0 = none"},
};

static const struct tlbsim_workload_desc mmap8_desc = {
	.name = "mmap8",
	.description = "seed 000 benchmark: threads loop mmap 16M shared, write, "
		       "MADV_DONTNEED, munmap",
	.default_profile = "falkor-46",
	.default_threads = 16,
	.default_iters = 100000,
	.nparams = 4,
	.params = mmap8_params,
	.check_iters = 1,
	.check_cpus = 4,
	.check_wparams = "uws=0",	/* the working set is a cost; checks keep the minimal schedule */
};

static const struct tlbsim_wparam_desc mmap5_params[] = {
	{"size", "4096", "bytes per mapping (4096 on every granule, as the reproducer)"},
	{"loops", "500", "map/write/unmap loops of the worker per round"},
};

static const struct tlbsim_workload_desc mmap5_desc = {
	.name = "mmap5",
	.description = "seed 000 hang reproducer: per round a worker maps/writes/unmaps "
		       "at a hint while a dummy thread exits (stack MADV_DONTNEED); "
		       "--iters = rounds",
	.default_profile = "falkor-46",
	.default_threads = 2,
	.fixed_threads = 1,
	.default_iters = 20,
	.nparams = 2,
	.params = mmap5_params,
	.check_iters = 1,
	.check_cpus = 4,
	.check_wparams = "loops=2",
};

const struct workload_ops mmap8_ops = {
	.desc = &mmap8_desc, .setup = mmap8_setup, .main = mmap8_main, .estimate = mmap8_estimate,
};
const struct workload_ops mmap5_ops = {
	.desc = &mmap5_desc, .setup = mmap5_setup, .main = mmap5_main, .estimate = mmap5_estimate,
};
