/*
 * vmtest.c - vmalloc workloads (seed 003).
 *
 * test_vmalloc: the patterns of lib/test_vmalloc.c (the kselftest module run
 * by tools/testing/selftests/mm/test_vmalloc.sh), re-implemented from their
 * description: nr_threads kernel threads (vmalloc_test/N, one per CPU in
 * order) start together and each runs the tests of run_test_mask, in bit
 * order, test_loop_count times:
 *   1   fix_size_alloc_test           vmalloc(nr_pages), write, vfree
 *   2   full_fit_alloc_test           fls(CPUs) x 32 MiB worth of 1-page pairs,
 *                                     one of each freed; then 1-page alloc/free
 *   4   long_busy_list_alloc_test     15 000 1-page areas kept; then
 *                                     vmalloc(100 pages) + vmalloc(1 page),
 *                                     write both, free both
 *   8   random_size_alloc_test        1..100 pages
 *   16  fix_align_alloc_test          5 pages at 2 x THREAD_ALIGN
 *   32  random_size_align_alloc_test  1..10 pages at 2^(r % 23)
 *   64  align_shift_alloc_test        1 page at 2^i, i < 64 (most fail)
 * ops = areas allocated.
 *
 * vmalloc_reuse (for `tlbsim check`, kernel-model I5): on two CPUs (two vmap
 * nodes), a thread on CPU 1 allocates and touches a stack-sized area X and
 * frees it (lazily, node 1); a thread on CPU 0 frees enough to exceed
 * lazy_max_pages(), so CPU 0's kworker purges; meanwhile a thread on CPU 1
 * keeps allocating areas of X's size from node 1's pool. If X comes back out
 * of the pool before the flush of its released KASAN shadow, its shadow VA
 * is mapped again while the old translation may still be cached: I5
 * (kasan_flush=per_node_late, the withdrawn draft).
 */
#include <stdio.h>
#include <string.h>

#include "workload/workload.h"

struct vmtest_state {
	uint64_t mask, loops, nr_pages;
	int nthreads;
	bool kasan;
	uint64_t x;		/* vmalloc_reuse: the area that may come back */
	int tries;
	int go;			/* vmalloc_reuse: the filler has queued the drain */
	struct sim_thread *waiter;	/* the allocator, waiting for go */
};

static int parse_kasan(const struct tlbsim_resolved *r, bool *on, char *err, size_t errlen)
{
	const char *v = wparam(r, "kasan");
	if (strcmp(v, "on") == 0)
		*on = true;
	else if (strcmp(v, "off") == 0)
		*on = false;
	else {
		snprintf(err, errlen, "workload parameter kasan=%s: want on or off", v);
		return TLBSIM_EINVAL;
	}
	return 0;
}

static int fls64(uint64_t v)
{
	int n = 0;
	while (v) {
		n++;
		v >>= 1;
	}
	return n;
}

/* one allocation the module checks and writes; 0 when it failed */
static uint64_t alloc_write(struct sim *s, uint64_t pages, uint64_t align)
{
	uint64_t a = vmalloc_range(s, pages * hw_of(s)->geom.page_size, align);
	if (a) {
		kernel_access(s, a, true);
		s->m.ops++;
	}
	return a;
}

static void run_test(struct sim *s, struct vmtest_state *st, int bit)
{
	uint64_t ps = hw_of(s)->geom.page_size;
	struct rng *rng = &s->rng;
	switch (bit) {
	case 0:		/* fix_size_alloc_test */
		for (uint64_t i = 0; i < st->loops && !s->error; i++)
			vfree(s, alloc_write(s, st->nr_pages, ps));
		break;
	case 1: {	/* full_fit_alloc_test */
		uint64_t junk = (uint64_t)fls64((uint64_t)s->nr_cpus) * ((32ull << 20) / ps);
		uint64_t *ptr = kernel_obj_alloc(s, 2 * junk * sizeof(*ptr));
		if (!ptr)
			return;
		for (uint64_t i = 0; i < junk && !s->error; i++) {
			ptr[2 * i] = alloc_write(s, 1, ps);
			ptr[2 * i + 1] = alloc_write(s, 1, ps);
		}
		for (uint64_t i = 0; i < junk && !s->error; i++)
			vfree(s, ptr[2 * i + 1]);
		for (uint64_t i = 0; i < st->loops && !s->error; i++)
			vfree(s, alloc_write(s, 1, ps));
		for (uint64_t i = 0; i < junk && !s->error; i++)
			vfree(s, ptr[2 * i]);
		break;
	}
	case 2: {	/* long_busy_list_alloc_test */
		const uint64_t n = 15000;
		uint64_t *ptr = kernel_obj_alloc(s, n * sizeof(*ptr));
		if (!ptr)
			return;
		for (uint64_t i = 0; i < n && !s->error; i++)
			ptr[i] = alloc_write(s, 1, ps);
		for (uint64_t i = 0; i < st->loops && !s->error; i++) {
			uint64_t a = alloc_write(s, 100, ps), b = alloc_write(s, 1, ps);
			vfree(s, a);
			vfree(s, b);
		}
		for (uint64_t i = 0; i < n && !s->error; i++)
			vfree(s, ptr[i]);
		break;
	}
	case 3:		/* random_size_alloc_test */
		for (uint64_t i = 0; i < st->loops && !s->error; i++)
			vfree(s, alloc_write(s, 1 + rng_below(rng, 100), ps));
		break;
	case 4:		/* fix_align_alloc_test */
		for (uint64_t i = 0; i < st->loops && !s->error; i++)
			vfree(s, alloc_write(s, 5, 2 * thread_align(s)));
		break;
	case 5:		/* random_size_align_alloc_test */
		for (uint64_t i = 0; i < st->loops && !s->error; i++) {
			uint64_t align = 1ull << rng_below(rng, 23);
			vfree(s, alloc_write(s, 1 + rng_below(rng, 10), align < ps ? ps : align));
		}
		break;
	case 6:		/* align_shift_alloc_test: expected to fail for large aligns */
		for (int i = 0; i < 64 && !s->error; i++) {
			uint64_t align = 1ull << i;
			if (align < ps)
				continue;
			uint64_t a = alloc_write(s, 1, align);
			if (!a)
				break;
			vfree(s, a);
		}
		break;
	}
}

static void vmtest_worker(struct sim *s, struct sim_thread *t)
{
	struct vmtest_state *st = t->arg;
	sim_set_mode(s, MODE_SYS);
	for (int bit = 0; bit < 7 && !s->error; bit++)
		if (st->mask & (1u << bit))
			run_test(s, st, bit);
}

static void test_vmalloc_main(struct sim *s, struct sim_thread *t)
{
	struct vmtest_state *st = t->arg;
	kernel_of(s)->kasan = st->kasan;
	struct sim_thread **th = kernel_obj_alloc(s, (size_t)st->nthreads * sizeof(*th));
	if (!th)
		return;
	for (int i = 0; i < st->nthreads && !s->error; i++) {
		struct task *tk = task_create(s, sizeof(struct task), vmtest_worker, st, NULL,
					      i % s->nr_cpus, (uint64_t)P(s, P_thread_create_ns));
		th[i] = tk ? &tk->thread : NULL;
	}
	for (int i = 0; i < st->nthreads; i++)
		if (th[i])
			sim_join(s, th[i]);
}

static int test_vmalloc_setup(struct sim *s, const struct tlbsim_resolved *r, void **state,
			      char *err, size_t errlen)
{
	struct vmtest_state *st = kernel_obj_alloc(s, sizeof(*st));
	if (!st) {
		snprintf(err, errlen, "out of memory");
		return TLBSIM_ENOMEM;
	}
	*state = st;
	const char *v = wparam(r, "run_test_mask");
	if (parse_u64(v, &st->mask) || st->mask == 0 || st->mask > 127) {
		snprintf(err, errlen, "workload parameter run_test_mask=%s: want 1..127 (tests 1, 2, "
			 "4, 8, 16, 32, 64)", v);
		return TLBSIM_EINVAL;
	}
	v = wparam(r, "test_loop_count");
	if (parse_u64(v, &st->loops) || st->loops == 0 || st->loops > 100000000) {
		snprintf(err, errlen, "workload parameter test_loop_count=%s: want 1..100000000", v);
		return TLBSIM_EINVAL;
	}
	v = wparam(r, "nr_pages");
	if (parse_u64(v, &st->nr_pages) || st->nr_pages == 0 || st->nr_pages > 65536) {
		snprintf(err, errlen, "workload parameter nr_pages=%s: want 1..65536", v);
		return TLBSIM_EINVAL;
	}
	uint64_t n;
	v = wparam(r, "nr_threads");
	/* each worker is a coroutine stack and its guard page, two host
	 * mappings: 32 760 of them passed the default vm.max_map_count (65530)
	 * and the run failed with exit 3, "cannot allocate a coroutine stack" */
	if (parse_u64(v, &n) || n > 16384) {
		snprintf(err, errlen, "workload parameter nr_threads=%s: want 0..16384 (0: one per "
			 "CPU)", v);
		return TLBSIM_EINVAL;
	}
	st->nthreads = n ? (int)n : s->nr_cpus;
	return parse_kasan(r, &st->kasan, err, errlen);
}

/* ---- vmalloc_reuse ---- */

static void reuse_victim(struct sim *s, struct sim_thread *t)
{
	struct vmtest_state *st = t->arg;
	sim_set_mode(s, MODE_SYS);
	st->x = vmalloc_range(s, thread_size(s), thread_align(s));
	kernel_access(s, st->x, true);
	vfree(s, st->x);
}

static void reuse_filler(struct sim *s, struct sim_thread *t)
{
	(void)t;
	sim_set_mode(s, MODE_SYS);
	/* enough lazily freed pages to pass lazy_max_pages(): the drain runs */
	uint64_t ps = hw_of(s)->geom.page_size;
	int fls = 0;
	for (int n = s->nr_cpus; n; n >>= 1)
		fls++;
	uint64_t pages = (uint64_t)fls * ((32ull << 20) / ps);
	vfree(s, vmalloc_range(s, pages * ps, ps));
	struct vmtest_state *st = t->arg;
	st->go = 1;
	if (st->waiter)
		sim_wake(s, st->waiter, 0);
	st->waiter = NULL;
}

/* allocates areas of X's size until the purge is over (or tries run out),
 * keeping them, then frees them */
static void reuse_allocator(struct sim *s, struct sim_thread *t)
{
	struct vmtest_state *st = t->arg;
	sim_set_mode(s, MODE_SYS);
	if (!st->go) {			/* the harness's barrier */
		st->waiter = t;
		sim_sleep(s);
	}
	uint64_t *got = kernel_obj_alloc(s, (size_t)st->tries * sizeof(*got));
	if (!got)
		return;
	int n = 0;
	/* the purge is over when every node was purged (the harness reads the
	 * kernel's counters, as a test would read /proc) */
	uint32_t nodes = (uint32_t)(s->nr_cpus < 128 ? s->nr_cpus : 128);
	while (n < st->tries && s->m.purge_vmap_node_calls < nodes && !s->error) {
		got[n] = vmalloc_range(s, thread_size(s), thread_align(s));
		kernel_access(s, got[n], true);
		s->m.ops++;
		n++;
	}
	while (n > 0)
		vfree(s, got[--n]);
}

static void vmalloc_reuse_main(struct sim *s, struct sim_thread *t)
{
	struct vmtest_state *st = t->arg;
	kernel_of(s)->kasan = st->kasan;
	int other = s->nr_cpus > 1 ? 1 : 0;
	struct task *v = task_create(s, sizeof(struct task), reuse_victim, st, NULL, other, 0);
	if (!v)
		return;
	sim_join(s, &v->thread);
	/* the filler's vfree queues the drain on CPU 0's kworker; the
	 * allocator, waiting on CPU 1 for that, then races the purge */
	struct task *a = task_create(s, sizeof(struct task), reuse_allocator, st, NULL, other, 0);
	struct task *f = task_create(s, sizeof(struct task), reuse_filler, st, NULL, 0, 0);
	if (f)
		sim_join(s, &f->thread);
	if (a)
		sim_join(s, &a->thread);
}

static int vmalloc_reuse_setup(struct sim *s, const struct tlbsim_resolved *r, void **state,
			       char *err, size_t errlen)
{
	struct vmtest_state *st = kernel_obj_alloc(s, sizeof(*st));
	if (!st) {
		snprintf(err, errlen, "out of memory");
		return TLBSIM_ENOMEM;
	}
	*state = st;
	uint64_t n;
	const char *v = wparam(r, "tries");
	if (parse_u64(v, &n) || n == 0 || n > 100000) {
		snprintf(err, errlen, "workload parameter tries=%s: want 1..100000", v);
		return TLBSIM_EINVAL;
	}
	st->tries = (int)n;
	return parse_kasan(r, &st->kasan, err, errlen);
}

static const struct tlbsim_wparam_desc test_vmalloc_params[] = {
	{"run_test_mask", "1", "tests to run (1 fix_size, 2 full_fit, 4 long_busy_list, "
			       "8 random_size, 16 fix_align, 32 random_size_align, 64 align_shift); "
			       "full_fit makes 2 x fls(CPUs) x 32M/page areas per thread (minutes "
			       "at 256 CPUs)"},
	{"test_loop_count", "10000", "iterations of each test (the module's default is 1000000)"},
	{"nr_pages", "1", "pages of fix_size_alloc_test"},
	{"nr_threads", "0", "worker kthreads (0: one per CPU, the script's stress preset)"},
	{"kasan", "on", "CONFIG_KASAN with KASAN_VMALLOC: on or off"},
};

static const struct tlbsim_workload_desc test_vmalloc_desc = {
	.name = "test_vmalloc",
	.description = "seed 003: lib/test_vmalloc.c patterns on nr_threads kthreads; ops = areas "
		       "allocated",
	.default_profile = "x86-256",
	.default_threads = 1,
	.fixed_threads = 1,
	.default_iters = 1,
	.nparams = 5,
	.params = test_vmalloc_params,
	.check_iters = 1,
	.check_cpus = 2,
	.check_wparams = "run_test_mask=1,test_loop_count=3,nr_threads=2",
};

static const struct tlbsim_wparam_desc vmalloc_reuse_params[] = {
	{"tries", "64", "at most this many stack-sized areas allocated by the racing thread "
			"while the purge runs"},
	{"kasan", "on", "CONFIG_KASAN with KASAN_VMALLOC: on or off"},
};

static const struct tlbsim_workload_desc vmalloc_reuse_desc = {
	.name = "vmalloc_reuse",
	.description = "seed 003 (I5): a purge releases an area's KASAN shadow while another "
		       "CPU allocates the same size from the node's pool; run with --policy "
		       "kasan_flush=per_node_late for the withdrawn draft",
	.default_profile = "x86-24",
	.default_threads = 3,
	.fixed_threads = 1,
	.default_iters = 1,
	.nparams = 2,
	.params = vmalloc_reuse_params,
	.check_iters = 1,
	.check_cpus = 2,
	.check_wparams = "",
};

static uint64_t vmtest_estimate(const struct tlbsim_resolved *r, int page_shift)
{
	(void)r;
	/* the kernel's page tables and at most a few lazy_max_pages() of pages */
	return estimate_mapped_bytes(4ull << (30 - page_shift), page_shift);
}

const struct workload_ops test_vmalloc_ops = {
	.desc = &test_vmalloc_desc, .setup = test_vmalloc_setup, .main = test_vmalloc_main,
	.estimate = vmtest_estimate,
};
const struct workload_ops vmalloc_reuse_ops = {
	.desc = &vmalloc_reuse_desc, .setup = vmalloc_reuse_setup, .main = vmalloc_reuse_main,
	.estimate = vmtest_estimate,
};
