/*
 * ebizzy.c - ebizzy 0.3 (the LTP copy, utils/benchmark/ebizzy-0.3/ebizzy.c),
 * re-implemented from its description: a benchmark of a web server's memory
 * pattern that exposed glibc malloc and kernel mmap/munmap costs.
 *
 * Setup (main thread): `chunks` chunks of `chunk_size` bytes are allocated
 * and filled (each record_t holds its index). Then `threads` worker threads
 * (default 2 x CPUs, as ebizzy's 2 x sysconf(_SC_NPROCESSORS_ONLN)) loop:
 *   pick a chunk (ebizzy's LCG: the simulation's RNG here);
 *   copy = malloc(chunk_size)  (with -w mmap=1, ebizzy -m: mmap);
 *   memcpy(copy, chunk, chunk_size);
 *   bsearch a random key in the copy;
 *   free(copy)                 (-m: munmap);
 *   records++.
 * records_per_sec = records / time, summed over threads, as ebizzy prints.
 *
 * The glibc side is glibc_malloc/glibc_free (glibc.c): the first 512 KiB
 * copy is above the 128 KiB mmap threshold (mmap + munmap), its free raises
 * the threshold, and later copies recycle the thread's arena memory with no
 * syscall at all - the small sys time of default ebizzy. With mmap=1 every
 * record maps, faults in chunk_size / page_size pages and unmaps (a flush of
 * every CPU running the process).
 *
 * Costs: the memcpy is user time, copy_4k_ns per 4 KiB (the model's copy into
 * a page not in cache); the bsearch log2(records) probes of user_loop_ns
 * each. Pages the copy writes for the first time (a fresh mmap, arena memory
 * never touched or trimmed) go through the MMU one by one (faults); pages
 * already faulted in are not walked again record after record (their TLB
 * refills are not charged: a simplification, there is no flush in between
 * in arena mode).
 *
 * Measurement: each thread's first record is warm-up (the threshold change);
 * the window opens when every thread has done it and closes after --iters
 * more records per thread, or --duration simulated seconds (ebizzy's -S).
 */
#include <stdio.h>
#include <string.h>

#include "mm/points.h"
#include "workload/workload.h"

struct ebizzy_state {
	uint64_t chunks, chunk_size;
	bool use_mmap;
	int nthreads;
	uint64_t *chunk;		/* addresses of the chunks */
	/* the window */
	struct measure_window win;	/* records are its rounds */
	struct sim_thread **th;
};

static int ebizzy_setup(struct sim *s, const struct tlbsim_resolved *r, void **state,
			char *err, size_t errlen)
{
	struct ebizzy_state *st = kernel_obj_alloc(s, sizeof(*st));
	if (!st) {
		snprintf(err, errlen, "out of memory");
		return TLBSIM_ENOMEM;
	}
	*state = st;
	const char *v = wparam(r, "chunks");
	if (parse_u64(v, &st->chunks) || st->chunks == 0 || st->chunks > 4096) {
		snprintf(err, errlen, "workload parameter chunks=%s: want 1..4096", v);
		return TLBSIM_EINVAL;
	}
	v = wparam(r, "chunk_size");
	if (parse_size(v, &st->chunk_size) || st->chunk_size < 8 || st->chunk_size > (16ull << 20)) {
		snprintf(err, errlen, "workload parameter chunk_size=%s: want 8 bytes to 16M "
			 "(suffixes K, M)", v);
		return TLBSIM_EINVAL;
	}
	st->chunk_size &= ~7ull;		/* whole record_t values */
	v = wparam(r, "mmap");
	if (strcmp(v, "0") && strcmp(v, "1")) {
		snprintf(err, errlen, "workload parameter mmap=%s: want 0 (malloc) or 1 (ebizzy "
			 "-m: mmap/munmap per record)", v);
		return TLBSIM_EINVAL;
	}
	st->use_mmap = v[0] == '1';
	st->nthreads = r->threads;
	window_init(&st->win, r->threads, r->iters, r->duration_ns);
	if (window_need_slices(s, r->threads, err, errlen))
		return TLBSIM_EINVAL;
	st->chunk = kernel_obj_alloc(s, st->chunks * sizeof(*st->chunk));
	st->th = kernel_obj_alloc(s, (size_t)st->nthreads * sizeof(*st->th));
	if (!st->chunk || !st->th) {
		snprintf(err, errlen, "out of memory");
		return TLBSIM_ENOMEM;
	}
	return 0;
}

static void record_done(struct sim *s, struct ebizzy_state *st, int64_t n)
{
	s->m.ops++;
	window_round_done(s, &st->win, n);
	window_check_time(s, &st->win);
	if (st->win.stop)
		s->m.records_per_sec = s->m.ops_per_sec;
}

/* memcpy of the chunk into the copy: first touches through the MMU (faults),
 * the copy's cost as user time */
static void copy_into(struct sim *s, uint64_t dst, uint64_t fresh, uint64_t len)
{
	uint64_t ps = hw_of(s)->geom.page_size;
	uint64_t end = dst + len;
	uint64_t a = (fresh > dst ? fresh : dst) & ~(ps - 1);
	for (; a < end; a += ps)
		user_access(s, a < dst ? dst : a, true);
	sim_charge(s, (len * (uint64_t)P(s, P_copy_4k_ns) + 4095) / 4096);
}

static void ebizzy_worker(struct sim *s, struct sim_thread *t)
{
	struct ebizzy_state *st = t->arg;
	struct glibc_arena arena = {0};
	uint64_t nrec = st->chunk_size / 8, probes = 0;
	while ((1ull << probes) < nrec)
		probes++;
	for (int64_t n = 1; !st->win.stop && !s->error; n++) {
		uint64_t src = st->chunk[rng_below(&s->rng, st->chunks)];
		(void)src;
		struct glibc_alloc c;
		if (st->use_mmap) {
			uint64_t ps = hw_of(s)->geom.page_size;
			uint64_t len = (st->chunk_size + ps - 1) & ~(ps - 1);
			uint64_t p = sys_mmap(s, 0, len, TLBSIM_MAP_PRIVATE);
			c = (struct glibc_alloc){.p = p, .size = len, .mmapped = true, .fresh = p};
		} else {
			c = glibc_malloc(s, &arena, st->chunk_size);
		}
		if (c.p == TLBSIM_EINVAL_VA) {
			sim_fail(s, TLBSIM_EINVAL, "ebizzy: allocation of %llu bytes failed",
				 (unsigned long long)st->chunk_size);
			return;
		}
		copy_into(s, c.p, c.fresh, st->chunk_size);
		/* bsearch: log2(records) probes */
		sim_step(s, YP_USER, probes * (uint64_t)P(s, P_user_loop_ns));
		if (st->use_mmap)
			sys_munmap(s, c.p, c.size);
		else
			glibc_free(s, &arena, &c);
		record_done(s, st, n);
	}
}

static void ebizzy_main(struct sim *s, struct sim_thread *t)
{
	struct ebizzy_state *st = t->arg;
	struct glibc_arena arena = {0};
	for (uint64_t i = 0; i < st->chunks && !s->error; i++) {
		struct glibc_alloc c = glibc_malloc(s, &arena, st->chunk_size);
		if (c.p == TLBSIM_EINVAL_VA) {
			sim_fail(s, TLBSIM_EINVAL, "ebizzy: allocation of the chunks failed");
			return;
		}
		st->chunk[i] = c.p;
		copy_into(s, c.p, c.fresh, st->chunk_size);	/* filled with indexes */
	}
	for (int i = 0; i < st->nthreads && !s->error; i++)
		st->th[i] = glibc_pthread_create(s, ebizzy_worker, st);
	for (int i = 0; i < st->nthreads; i++)
		if (st->th[i])
			glibc_pthread_join(s, st->th[i]);
}

/* the chunks, and each thread's copy (arena reservation pages + one copy) */
static uint64_t ebizzy_estimate(const struct tlbsim_resolved *r, int page_shift)
{
	uint64_t chunks, size;
	if (parse_u64(wparam(r, "chunks"), &chunks) || parse_size(wparam(r, "chunk_size"), &size))
		return 0;
	uint64_t pages = (size >> page_shift) + 2;
	return (chunks + (uint64_t)r->threads) * estimate_mapped_bytes(pages, page_shift);
}

static const struct tlbsim_wparam_desc ebizzy_params[] = {
	{"chunks", "10", "chunks allocated and filled at setup (ebizzy -n)"},
	{"chunk_size", "512K", "bytes per chunk and per copy (ebizzy -s; 8 x 64 Ki records)"},
	{"mmap", "0", "1: each copy is an mmap and its free an munmap (ebizzy -m); 0: glibc "
		      "malloc/free"},
};

static const struct tlbsim_workload_desc ebizzy_desc = {
	.name = "ebizzy",
	.description = "ebizzy 0.3: threads copy a random chunk into a fresh malloc (or mmap, "
		       "-w mmap=1) buffer, search it, free it; records_per_sec",
	.default_profile = "falkor-46",
	.default_threads = -2,
	.default_iters = 100,
	.timed = 1,
	.nparams = 3,
	.params = ebizzy_params,
	.check_iters = 1,
	.check_cpus = 2,
	.check_wparams = "chunks=2,chunk_size=16K",
};

const struct workload_ops ebizzy_ops = {
	.desc = &ebizzy_desc, .setup = ebizzy_setup, .main = ebizzy_main,
	.estimate = ebizzy_estimate,
};
