/*
 * mprotect_storm.c - N single-threaded processes, each flipping the
 * protection of its own small mapping as fast as it can:
 *
 *   p = mmap(pages, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS);
 *   loop: mprotect(p, PROT_READ); mprotect(p, PROT_READ|PROT_WRITE);
 *         write one word to each page;            ops++ (one per loop)
 *
 * It stands for mprotect-heavy user programs (a JIT or a garbage collector
 * flipping W^X or write barriers on its own pages), reduced to the loop that
 * matters for the flush machinery. It is
 * not stress-ng's mprotect stressor (stress-mprotect.c), which applies
 * random protections to random spans of a shared mapping from several
 * processes: that needs PROT_NONE/PROT_EXEC, which the model lacks. In v5.1 every
 * mprotect of present pages ends in flush_tlb_range() over the whole range,
 * and the write after mprotect(RW) takes a write fault (private PTEs stay
 * read-only: PAGE_COPY) whose ptep_set_access_flags flushes again on arm64.
 * With one process per CPU this is the multi-initiator arm64 case: every
 * process broadcasts TLBIs that every CPU's DVM path must carry, although
 * each mm only ever ran on its own CPU - what arm64_local=single_cpu_mm (the
 * 2020 proposal) turns into local TLBIs. On x86 each process's mm_cpumask
 * holds only its CPU: local INVLPGs, no IPIs.
 *
 * Harness as will-it-scale's (wis.c): task i is forked pinned to CPU
 * i % ncpus; its first loop (which also faults the pages in) is warm-up;
 * the window opens when the last task finishes it and closes when every
 * task has done --iters more loops, or --duration simulated seconds later.
 * ops_per_sec = loops in the window / its length, summed over tasks.
 */
#include <stdio.h>
#include <string.h>

#include "workload/workload.h"

struct storm_state {
	int ntasks;
	uint64_t pages;
	struct measure_window win;	/* loops are its rounds */
	struct sim_thread **th;
};

static void storm_task(struct sim *s, struct sim_thread *t)
{
	struct storm_state *st = t->arg;
	uint64_t ps = hw_of(s)->geom.page_size;
	uint64_t len = st->pages * ps;
	uint64_t p = sys_mmap(s, 0, len, TLBSIM_MAP_PRIVATE);
	if (p == TLBSIM_EINVAL_VA) {
		sim_fail(s, TLBSIM_EINVAL, "mprotect_storm: mmap of %llu bytes failed",
			 (unsigned long long)len);
		return;
	}
	for (int64_t round = 1; !st->win.stop && !s->error; round++) {
		if (sys_mprotect(s, p, len, TLBSIM_PROT_READ) ||
		    sys_mprotect(s, p, len, TLBSIM_PROT_READ | TLBSIM_PROT_WRITE)) {
			sim_fail(s, TLBSIM_EINVAL, "mprotect_storm: mprotect failed");
			return;
		}
		for (uint64_t a = p; a < p + len; a += ps) {
			if (user_access(s, a, true)) {
				sim_fail(s, TLBSIM_EINVAL, "mprotect_storm: write to 0x%llx refused "
					 "(SIGSEGV)", (unsigned long long)a);
				return;
			}
		}
		s->m.ops++;
		window_round_done(s, &st->win, round);
		window_check_time(s, &st->win);
	}
}

static void storm_main(struct sim *s, struct sim_thread *t)
{
	struct storm_state *st = t->arg;
	st->th = kernel_obj_alloc(s, (size_t)st->ntasks * sizeof(*st->th));
	for (int i = 0; i < st->ntasks && !s->error; i++)
		st->th[i] = glibc_fork_on(s, storm_task, st, i % s->nr_cpus);
	for (int i = 0; i < st->ntasks; i++)
		if (st->th[i])
			sim_join(s, st->th[i]);
}

static int storm_setup(struct sim *s, const struct tlbsim_resolved *r, void **state, char *err,
		       size_t errlen)
{
	struct storm_state *st = kernel_obj_alloc(s, sizeof(*st));
	if (!st) {
		snprintf(err, errlen, "out of memory");
		return TLBSIM_ENOMEM;
	}
	*state = st;
	const char *v = wparam(r, "pages");
	if (parse_u64(v, &st->pages) || st->pages < 1 || st->pages > (1u << 20)) {
		snprintf(err, errlen, "workload parameter pages=%s: want 1 to 1048576", v);
		return TLBSIM_EINVAL;
	}
	st->ntasks = r->threads;
	window_init(&st->win, r->threads, r->iters, r->duration_ns);
	return window_need_slices(s, r->threads, err, errlen);
}

static uint64_t storm_estimate(const struct tlbsim_resolved *r, int page_shift)
{
	uint64_t pages;
	if (parse_u64(wparam(r, "pages"), &pages))
		return 0;
	return (uint64_t)r->threads * (estimate_mapped_bytes(pages + 1, page_shift) + (64u << 10));
}

static const struct tlbsim_wparam_desc storm_params[] = {
	{"pages", "16", "pages of each process's mapping, all flipped by each mprotect"},
};

static const struct tlbsim_workload_desc storm_desc = {
	.name = "mprotect_storm",
	.description = "N single-threaded processes (one per CPU, pinned), each looping "
		       "mprotect(RO), mprotect(RW), write each of its pages of a private mapping "
		       "(a JIT/GC-style W^X flip; not stress-ng's random-span mprotect stressor); "
		       "ops = loops, timed with will-it-scale's harness (warm-up loop, measured "
		       "window); mm/mprotect.c v5.1",
	.default_profile = "arm64-4k",
	.default_threads = 0,
	.default_iters = 100,
	.timed = 1,
	.nparams = (int)(sizeof(storm_params) / sizeof(storm_params[0])),
	.params = storm_params,
	.check_iters = 1,
	.check_cpus = 2,
	.check_wparams = "pages=2",
};

const struct workload_ops mprotect_storm_ops = {
	.desc = &storm_desc, .setup = storm_setup, .main = storm_main, .estimate = storm_estimate,
};
