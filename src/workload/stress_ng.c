/*
 * stress_ng.c - stress-ng's tlb-shootdown stressor (stress-tlb-shootdown.c of
 * https://github.com/ColinIanKing/stress-ng, the version of commit 291fc4341,
 * file last changed in a5f04f1db, 2026-08-03), one instance
 * (stress-ng --tlb-shootdown 1), re-implemented from its behaviour at the
 * level of the system calls and memory accesses it makes. The loops below
 * follow a description of that version; the details it shares with the
 * 2022 file (commit 00de689196d5: 512 shared anonymous pages, a 4-page
 * shared file, 64-byte lines, min(max(CPUs, 2), 8) children pinned to the
 * CPUs in order, the stride of 137 + a prime above the line count) were
 * checked against that file.
 *
 * Setup (the instance's process): an unlinked temporary file of `file_pages`
 * pages (ftruncate'd; on `fs`, ext4 by default: stress-ng's temp directory)
 * mapped MAP_SHARED, and `pages` pages (512) of MAP_SHARED|MAP_ANONYMOUS
 * (a shmem object), memset. Then tlb_procs = min(max(CPUs, 2), 8) children
 * are forked (never more than there are CPUs: stress-ng stops when it runs
 * out of CPUs to pin to), child i pinned to CPU i, each rotating to the next
 * CPU (i + 1 mod CPUs) every `rotate` (1 s as in stress-ng; a smaller period
 * lets short runs see rotations; 0: never).
 *
 * Child loop (one bogo op per iteration):
 *   1. a random buffer page: mprotect(page, READ), read each cache line;
 *      mprotect(page, WRITE), write each line;
 *   2. mprotect(buffer, READ), a strided read of every line of the buffer;
 *   3. mprotect(buffer, WRITE), a strided write of every line;
 *   4. mprotect(buffer, READ|WRITE);
 *   5. madvise(MADV_DONTNEED) a random buffer page, read it;
 *   6. madvise(MADV_DONTNEED) a random file page, write it;
 *   7. msync(file mapping, MS_ASYNC); bogo++.
 * Parent loop (one bogo op per iteration):
 *   1. a random file page: MADV_DONTNEED, write it, msync(page, MS_SYNC);
 *   2. MADV_DONTNEED, read it, msync(page, MS_SYNC);
 *   3. a random buffer page: MADV_DONTNEED, read; MADV_DONTNEED, write;
 *   4. write /sys/kernel/debug/x86/tlb_single_page_flush_ceiling with its own
 *      value - SKIPPED (no debugfs in the model; the file exists on x86 only,
 *      and stress-ng skips the step where it cannot open it);
 *   5. MADV_COLLAPSE and MADV_NOHUGEPAGE on both mappings - SKIPPED (no THP
 *      in the model: nothing to collapse, nothing to forbid), then
 *      msync(file mapping, MS_SYNC); bogo++.
 * The skipped steps are named in the run's `notes` (output). So is the
 * MADV_NOHUGEPAGE of the setup.
 *
 * bogo ops: stress-ng counts one per completed iteration of either loop in
 * the instance's one counter (the children's increments land in the same
 * shared counter), so bogo_ops = child iterations + parent iterations; here
 * that is `ops`. bogo_ops_per_sec = bogo ops in the measured window / its
 * length (stress-ng's "bogo ops/s (real time)", without setup and warm-up).
 * tlb_shootdowns_per_sec: flush handler calls in the window (the TLB line of
 * /proc/interrupts, irq_tlb_count: every flush_tlb_func run from an IPI,
 * and up to v5.12 the sender's own call of a flush that freed no tables) per
 * second; 0 on arm64, whose flushes are broadcast TLBIs (no TLB line) and on
 * x86 with INVLPGB. ipis_per_sec: every IPI received in the window (the
 * function-call IPIs of user and kernel flushes; reschedule IPIs are not
 * modelled as IPIs) per second.
 *
 * What the model does with it, and where it differs:
 *  - PROT_WRITE alone is not modelled (mprotect.c): steps 1 and 3 use
 *    PROT_READ|PROT_WRITE, which gives the same PTEs on x86 and arm64 (a
 *    writable user PTE is readable on both).
 *  - fork: the children get new address spaces with the two shared mappings
 *    at the parent's addresses (sys_mmap_file of the same inodes, one mmap
 *    each, as the first thing they do): dup_mmap copies a VM_SHARED VMA
 *    without its PTEs (copy_page_range skips a VMA without anon_vma), so the
 *    children fault the pages in as here. fork's other costs are
 *    thread_create_ns (glibc_fork_on).
 *  - The parent is not pinned in stress-ng; the engine does not balance
 *    load. At the top of each of its loops the parent moves itself (a
 *    sched_setaffinity) off a CPU a child is on, to the first CPU from its
 *    own on that has no child - the move the load balancer would make (the
 *    CPU a rotating child left goes idle and its newidle balance pulls the
 *    one task that may move, kernel/sched/fair.c). With a child on every CPU
 *    it stays where it is. Without that a child rotated onto the parent's
 *    CPU would wait a whole time slice (sched_slice_ns) behind it.
 *  - Cache-line accesses: each page's first access in a pass goes through
 *    the MMU (user_access: TLB, walk, fault); the page's other lines are user
 *    time at user_access_ns each (an L1/TLB hit). The strided passes visit
 *    the pages in the order the stride (137 + the first prime above the line
 *    count, in lines) first reaches them.
 *  - The msync of step 7 and of parent step 5 name no range or flag in the
 *    description the model follows: the file mapping, MS_ASYNC (children)
 *    and MS_SYNC (parent) are taken.
 *  - msync(MS_SYNC) costs only its CPU work (msync.c: no device time, no
 *    journal commit), so the parent's loop - two MS_SYNCs of a dirty page
 *    each - is faster than on a real disk, and its share of the bogo ops
 *    larger.
 *  - Timing follows the will-it-scale harness of the other timed workloads
 *    (window.c): every task's first iteration is warm-up, the window opens
 *    when the last task finished it and closes after --iters more
 *    iterations of every task, or --duration simulated seconds.
 */
#include <stdio.h>
#include <string.h>

#include "workload/workload.h"

#define LINE_SHIFT 6			/* stress-ng's STRESS_CACHE_LINE_SHIFT */

struct sng_state {
	int procs;
	uint64_t pages, file_pages;
	uint64_t rotate_ns;		/* 0: no rotation */
	const struct fs_type *fs;
	uint64_t stride;		/* lines */
	/* the parent's mappings and their objects (the children map them too) */
	uint64_t mem, memfd;
	struct inode *mem_obj, *file;
	struct measure_window win;	/* iterations are its rounds */
	uint64_t shoot0, ipi0;		/* tlb_shootdowns, ipi_received at the window's start */
	bool opened, rated;
	struct sim_thread **th;
	uint64_t rotations;		/* sched_setaffinity moves done by the children */
};

/* the iteration of a task is done: the window and the stress-ng rates */
static void iteration_done(struct sim *s, struct sng_state *st, int64_t round)
{
	s->m.ops++;
	window_round_done(s, &st->win, round);
	if (!st->opened && st->win.warm == st->win.ntasks) {
		st->opened = true;
		st->shoot0 = s->m.tlb_shootdowns;
		st->ipi0 = s->m.ipi_received;
	}
	window_check_time(s, &st->win);
	if (st->win.stop && !st->rated) {
		st->rated = true;
		uint64_t len = s->m.window_ns ? s->m.window_ns : 1;
		s->m.bogo_ops_per_sec = s->m.ops_per_sec;
		s->m.tlb_shootdowns_per_sec = (uint64_t)((unsigned __int128)(s->m.tlb_shootdowns -
									     st->shoot0) *
							 1000000000u / len);
		s->m.ipis_per_sec = (uint64_t)((unsigned __int128)(s->m.ipi_received - st->ipi0) *
					       1000000000u / len);
	}
}

/* the rest of a page's cache lines after its first access: user time */
static void other_lines(struct sim *s)
{
	uint64_t lines = hw_of(s)->geom.page_size >> LINE_SHIFT;
	sim_charge(s, (lines - 1) * (uint64_t)P(s, P_user_access_ns));
}

/* read or write every cache line of [p, p + n pages) in order */
static int access_lines(struct sim *s, uint64_t p, uint64_t n, bool write)
{
	uint64_t ps = hw_of(s)->geom.page_size;
	for (uint64_t i = 0; i < n; i++) {
		if (user_access(s, p + i * ps, write))
			return -1;
		other_lines(s);
	}
	return 0;
}

/* the strided pass over the buffer from line k: every line once; returns
 * the next k. seen: one byte per page (scratch) */
static int strided(struct sim *s, struct sng_state *st, uint8_t *seen, uint64_t *k, bool write)
{
	int shift = hw_of(s)->geom.page_shift;
	uint64_t nlines = (st->pages << shift) >> LINE_SHIFT;
	memset(seen, 0, st->pages);
	for (uint64_t l = 0; l < nlines; l++) {
		uint64_t page = (*k << LINE_SHIFT) >> shift;
		if (!seen[page]) {
			seen[page] = 1;
			if (user_access(s, st->mem + (page << shift), write))
				return -1;
			other_lines(s);
		}
		*k = (*k + st->stride) % nlines;
	}
	return 0;
}

static void sng_fail(struct sim *s, const char *what)
{
	sim_fail(s, TLBSIM_EINVAL, "stress-ng-tlb: %s failed", what);
}

static void sng_child(struct sim *s, struct sim_thread *t)
{
	struct sng_state *st = t->arg;
	uint64_t ps = hw_of(s)->geom.page_size;
	uint64_t len = st->pages * ps, flen = st->file_pages * ps;
	/* fork's copy of the two shared VMAs */
	if (sys_mmap_file(s, st->mem, len, TLBSIM_MAP_SHARED, st->mem_obj, 0) != st->mem ||
	    sys_mmap_file(s, st->memfd, flen, TLBSIM_MAP_SHARED, st->file, 0) != st->memfd) {
		sng_fail(s, "a child's copy of the shared mappings");
		return;
	}
	uint8_t *seen = kernel_obj_alloc(s, st->pages);
	if (!seen)
		return;
	uint64_t next_rotate = s->now + st->rotate_ns;
	uint64_t nlines = len >> LINE_SHIFT;
	uint64_t k = rng_below(&s->rng, nlines);
	const int rw = TLBSIM_PROT_READ | TLBSIM_PROT_WRITE;
	for (int64_t round = 1; !st->win.stop && !s->error; round++) {
		if (st->rotate_ns && s->now >= next_rotate) {
			int cpu = (t->cpu + 1) % s->nr_cpus;
			sys_sched_setaffinity(s, task_of(t), cpu);
			st->rotations++;
			while (next_rotate <= s->now)
				next_rotate += st->rotate_ns;
		}
		uint64_t page = st->mem + rng_below(&s->rng, st->pages) * ps;
		if (sys_mprotect(s, page, ps, TLBSIM_PROT_READ) || access_lines(s, page, 1, false) ||
		    sys_mprotect(s, page, ps, rw) || access_lines(s, page, 1, true))
			{
			sng_fail(s, "child step 1 (one page)");
			return;
		}
		if (sys_mprotect(s, st->mem, len, TLBSIM_PROT_READ) || strided(s, st, seen, &k, false))
			{
			sng_fail(s, "child step 2 (read-only pass)");
			return;
		}
		if (sys_mprotect(s, st->mem, len, rw) || strided(s, st, seen, &k, true))
			{
			sng_fail(s, "child step 3 (write pass)");
			return;
		}
		if (sys_mprotect(s, st->mem, len, rw))
			{
			sng_fail(s, "child step 4");
			return;
		}
		page = st->mem + rng_below(&s->rng, st->pages) * ps;
		if (sys_madvise_dontneed(s, page, ps) || access_lines(s, page, 1, false))
			{
			sng_fail(s, "child step 5 (buffer page)");
			return;
		}
		page = st->memfd + rng_below(&s->rng, st->file_pages) * ps;
		if (sys_madvise_dontneed(s, page, ps) || access_lines(s, page, 1, true))
			{
			sng_fail(s, "child step 6 (file page)");
			return;
		}
		if (sys_msync(s, st->memfd, flen, TLBSIM_MS_ASYNC))
			{
			sng_fail(s, "child msync");
			return;
		}
		iteration_done(s, st, round);
	}
}

/* the first CPU from cpu on (cyclically) that no child is on, or -1 */
static int cpu_without_child(struct sim *s, struct sng_state *st, int cpu)
{
	for (int k = 0; k < s->nr_cpus; k++) {
		int c = (cpu + k) % s->nr_cpus;
		bool taken = false;
		for (int i = 0; i < st->procs && !taken; i++)
			taken = st->th[i] && st->th[i]->state != TS_DONE && st->th[i]->cpu == c;
		if (!taken)
			return c;
	}
	return -1;
}

static void sng_parent_loop(struct sim *s, struct sim_thread *t, struct sng_state *st)
{
	uint64_t ps = hw_of(s)->geom.page_size;
	uint64_t flen = st->file_pages * ps;
	for (int64_t round = 1; !st->win.stop && !s->error; round++) {
		int c = cpu_without_child(s, st, t->cpu);
		if (c >= 0 && c != t->cpu)	/* the load balancer's move */
			sys_sched_setaffinity(s, task_of(t), c);
		uint64_t fp = st->memfd + rng_below(&s->rng, st->file_pages) * ps;
		if (sys_madvise_dontneed(s, fp, ps) || access_lines(s, fp, 1, true) ||
		    sys_msync(s, fp, ps, TLBSIM_MS_SYNC))
			{
			sng_fail(s, "parent step 1 (file page write)");
			return;
		}
		if (sys_madvise_dontneed(s, fp, ps) || access_lines(s, fp, 1, false) ||
		    sys_msync(s, fp, ps, TLBSIM_MS_SYNC))
			{
			sng_fail(s, "parent step 2 (file page read)");
			return;
		}
		uint64_t bp = st->mem + rng_below(&s->rng, st->pages) * ps;
		if (sys_madvise_dontneed(s, bp, ps) || access_lines(s, bp, 1, false) ||
		    sys_madvise_dontneed(s, bp, ps) || access_lines(s, bp, 1, true))
			{
			sng_fail(s, "parent step 3 (buffer page)");
			return;
		}
		/* step 4 (the debugfs ceiling) and step 5's MADV_COLLAPSE and
		 * MADV_NOHUGEPAGE: skipped, see notes */
		if (sys_msync(s, st->memfd, flen, TLBSIM_MS_SYNC))
			{
			sng_fail(s, "parent step 5 msync");
			return;
		}
		iteration_done(s, st, round);
	}
}

static void sng_main(struct sim *s, struct sim_thread *t)
{
	struct sng_state *st = t->arg;
	bool x86 = strcmp(machine_of(s)->arch->name, "x86_64") == 0;
	snprintf(s->m.notes, sizeof(s->m.notes),
		 "stress-ng-tlb skipped: MADV_NOHUGEPAGE (setup) and MADV_COLLAPSE + "
		 "MADV_NOHUGEPAGE (parent step 5): no THP in the model; %s",
		 x86 ? "writing /sys/kernel/debug/x86/tlb_single_page_flush_ceiling (parent "
		       "step 4): no debugfs in the model"
		     : "parent step 4 (the x86 debugfs tlb_single_page_flush_ceiling file): "
		       "absent on arm64, stress-ng skips it too");
	uint64_t ps = hw_of(s)->geom.page_size;
	uint64_t len = st->pages * ps, flen = st->file_pages * ps;
	st->file = sys_tmpfile(s, st->fs, flen);
	if (!st->file)
		return;
	st->memfd = sys_mmap_file(s, 0, flen, TLBSIM_MAP_SHARED, st->file, 0);
	st->mem = st->memfd == TLBSIM_EINVAL_VA ? TLBSIM_EINVAL_VA
						: sys_mmap(s, 0, len, TLBSIM_MAP_SHARED);
	if (st->mem == TLBSIM_EINVAL_VA)
		{
			sng_fail(s, "mmap");
			return;
		}
	st->mem_obj = find_vma(task_of(t)->mm, st->mem)->file;
	if (access_lines(s, st->mem, st->pages, true))	/* memset */
		{
			sng_fail(s, "memset of the buffer");
			return;
		}
	st->th = kernel_obj_alloc(s, (size_t)st->procs * sizeof(*st->th));
	if (!st->th)
		return;
	for (int i = 0; i < st->procs && !s->error; i++)
		st->th[i] = glibc_fork_on(s, sng_child, st, i);
	sng_parent_loop(s, t, st);
	for (int i = 0; i < st->procs; i++)
		if (st->th[i])
			sim_join(s, st->th[i]);
}

/* "1s", "250ms", "100us", "5000ns", "0" -> ns; -1 if malformed or too big */
static int parse_period(const char *v, uint64_t *ns)
{
	char num[32];
	size_t n = 0;
	while (v[n] >= '0' && v[n] <= '9' && n < sizeof(num) - 1) {
		num[n] = v[n];
		n++;
	}
	num[n] = 0;
	uint64_t x, mul;
	if (!n || parse_u64(num, &x))
		return -1;
	const char *u = v + n;
	if (strcmp(u, "s") == 0)
		mul = 1000000000u;
	else if (strcmp(u, "ms") == 0)
		mul = 1000000u;
	else if (strcmp(u, "us") == 0)
		mul = 1000u;
	else if (strcmp(u, "ns") == 0 || (strcmp(u, "") == 0 && x == 0))
		mul = 1;
	else
		return -1;
	if (x > 3600ull * 1000000000u / mul)
		return -1;
	*ns = x * mul;
	return 0;
}

static bool is_prime(uint64_t n)
{
	if (n < 2)
		return false;
	for (uint64_t d = 2; d * d <= n; d++)
		if (n % d == 0)
			return false;
	return true;
}

/* tlb_procs: min(max(CPUs, 2), 8), no more than the CPUs to pin to */
static int auto_procs(int cpus)
{
	int n = cpus < 2 ? 2 : cpus > 8 ? 8 : cpus;
	return n < cpus ? n : cpus;
}

static int sng_setup(struct sim *s, const struct tlbsim_resolved *r, void **state, char *err,
		     size_t errlen)
{
	struct sng_state *st = kernel_obj_alloc(s, sizeof(*st));
	if (!st) {
		snprintf(err, errlen, "out of memory");
		return TLBSIM_ENOMEM;
	}
	*state = st;
	const char *v = wparam(r, "procs");
	uint64_t x;
	if (strcmp(v, "auto") == 0) {
		st->procs = auto_procs(r->cpus);
	} else if (parse_u64(v, &x) || x < 1 || x > (uint64_t)r->cpus) {
		snprintf(err, errlen, "workload parameter procs=%s: want auto or 1 to %d (the CPUs "
			 "to pin the children to)", v, r->cpus);
		return TLBSIM_EINVAL;
	} else {
		st->procs = (int)x;
	}
	v = wparam(r, "pages");
	if (parse_u64(v, &st->pages) || st->pages < 1 || st->pages > 65536) {
		snprintf(err, errlen, "workload parameter pages=%s: want 1 to 65536", v);
		return TLBSIM_EINVAL;
	}
	v = wparam(r, "file_pages");
	if (parse_u64(v, &st->file_pages) || st->file_pages < 1 || st->file_pages > 65536) {
		snprintf(err, errlen, "workload parameter file_pages=%s: want 1 to 65536", v);
		return TLBSIM_EINVAL;
	}
	v = wparam(r, "rotate");
	if (parse_period(v, &st->rotate_ns)) {
		snprintf(err, errlen, "workload parameter rotate=%s: want a simulated period such as "
			 "1s, 10ms, 500us or 0 (no rotation), at most 3600s", v);
		return TLBSIM_EINVAL;
	}
	v = wparam(r, "fs");
	st->fs = fs_type_find(v);
	if (!st->fs) {
		snprintf(err, errlen, "workload parameter fs=%s: want ext4 or tmpfs", v);
		return TLBSIM_EINVAL;
	}
	uint64_t nlines = (st->pages << r->profile->page_shift) >> LINE_SHIFT;
	uint64_t prime = nlines + 1;
	while (!is_prime(prime))
		prime++;
	st->stride = 137 + prime;
	window_init(&st->win, st->procs + 1, r->iters, r->duration_ns);
	return 0;
}

static uint64_t sng_estimate(const struct tlbsim_resolved *r, int page_shift)
{
	uint64_t pages, fpages;
	if (parse_u64(wparam(r, "pages"), &pages) || parse_u64(wparam(r, "file_pages"), &fpages))
		return 0;
	uint64_t procs = (uint64_t)auto_procs(r->cpus);
	if (strcmp(wparam(r, "procs"), "auto") && parse_u64(wparam(r, "procs"), &procs))
		return 0;
	return (procs + 1) * (estimate_mapped_bytes(pages + fpages, page_shift) + (64u << 10));
}

static const struct tlbsim_wparam_desc sng_params[] = {
	{"procs", "auto", "children: auto = min(max(CPUs, 2), 8) as stress-ng's tlb_procs, at "
			  "most one per CPU"},
	{"pages", "512", "pages of the shared anonymous buffer (stress-ng's MMAP_PAGES)"},
	{"file_pages", "4", "pages of the shared file mapping"},
	{"rotate", "1s", "simulated period after which each child moves to the next CPU (s, ms, "
			 "us, ns; 0: never)"},
	{"fs", "ext4", "filesystem of the temporary file: ext4 or tmpfs"},
};

static const struct tlbsim_workload_desc sng_desc = {
	.name = "stress-ng-tlb",
	.description = "stress-ng's tlb-shootdown stressor (github.com/ColinIanKing/stress-ng "
		       "stress-tlb-shootdown.c, commit 291fc4341), one instance: -w procs "
		       "pinned child processes, moved to the next CPU every -w rotate, "
		       "mprotect/madvise/msync shared anonymous and shared file pages while the "
		       "parent msync(MS_SYNC)s the file; bogo_ops_per_sec, "
		       "tlb_shootdowns_per_sec, ipis_per_sec; steps the model lacks are named in "
		       "the output's notes",
	.default_profile = "x86-24",
	.default_threads = 1,
	.fixed_threads = 1,
	.default_iters = 20,
	.timed = 1,
	.nparams = (int)(sizeof(sng_params) / sizeof(sng_params[0])),
	.params = sng_params,
	/* small enough to explore; the children rotate every 20 us, a few
	 * times per schedule, and the parent has a CPU to move to (check mode
	 * has no time-slice preemption: two tasks that never sleep sharing a
	 * CPU would take every schedule to --max-steps) */
	.check_iters = 1,
	.check_cpus = 3,
	.check_wparams = "procs=2,pages=2,file_pages=1,rotate=20us",
};

const struct workload_ops stress_ng_tlb_ops = {
	.desc = &sng_desc, .setup = sng_setup, .main = sng_main, .estimate = sng_estimate,
};
