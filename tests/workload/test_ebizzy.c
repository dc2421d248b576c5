/*
 * test_ebizzy.c - the glibc malloc model (glibc_malloc / glibc_free,
 * src/workload/glibc.c) and the ebizzy workload built on it.
 *
 * Rules checked:
 *  - a request whose chunk reaches the mmap threshold (128 KiB at start) is
 *    an mmap of its own, and its free an munmap;
 *  - that free raises the threshold to the chunk's size (and the trim
 *    threshold to twice it): the same request then comes from the arena;
 *  - an arena chunk's pages are new (to be faulted in) the first time only;
 *    freeing it and allocating again recycles them with no syscall;
 *  - a free that leaves more than the trim threshold at the arena's top
 *    gives back what exceeds M_TOP_PAD (128 KiB) with MADV_DONTNEED, and
 *    those pages are new again;
 *  - ebizzy -m (mmap=1) does an mmap and munmap per record; default ebizzy
 *    issues syscalls on its first record only.
 */
#include <stdio.h>

#include "workload/workload.h"
#include "test_util.h"

struct mt {
	struct glibc_alloc a[6];
	uint64_t vmas[6];
};

static void malloc_thread(struct sim *s, struct sim_thread *t)
{
	struct mt *m = t->arg;
	struct glibc_arena ar = {0};
	struct mm_struct *mm = task_of(t)->mm;
	/* 1: 512 KiB above the threshold: mmap; free: munmap + new threshold */
	m->a[0] = glibc_malloc(s, &ar, 512 << 10);
	m->vmas[0] = (uint64_t)mm->nr_vmas;
	glibc_free(s, &ar, &m->a[0]);
	m->vmas[1] = (uint64_t)mm->nr_vmas;
	/* 2: the same size from the arena now; 3: again, recycled */
	m->a[1] = glibc_malloc(s, &ar, 512 << 10);
	glibc_free(s, &ar, &m->a[1]);
	m->a[2] = glibc_malloc(s, &ar, 512 << 10);
	m->vmas[2] = (uint64_t)mm->nr_vmas;
	/* 4: two more chunks on top, then all three freed: a top of 3 chunks
	 * exceeds the trim threshold (2 x the 516 KiB mmapped chunk) ->
	 * trimmed down to M_TOP_PAD */
	m->a[3] = glibc_malloc(s, &ar, 512 << 10);
	m->a[5] = glibc_malloc(s, &ar, 512 << 10);
	glibc_free(s, &ar, &m->a[5]);
	glibc_free(s, &ar, &m->a[3]);
	glibc_free(s, &ar, &m->a[2]);
	m->a[4] = glibc_malloc(s, &ar, 512 << 10);
}

static void test_glibc_malloc_rules(void **state)
{
	(void)state;
	/* a glibc process: run through the workload layer's main thread */
	struct sim *s = tsim_new("x86-24", 2, NESTED_FULLMM);
	struct mt m;
	memset(&m, 0, sizeof(m));
	struct task *tk = task_create(s, sizeof(struct uthread), malloc_thread, &m, tsim_mm(s, 0), 0, 0);
	assert_non_null(tk);
	struct uthread *u = container_of(tk, struct uthread, task);
	u->proc = glibc_proc_alloc(s);
	tsim_run(s);
	uint64_t chunk = (512u << 10) + 16;
	assert_true(m.a[0].mmapped);
	assert_int_equal(m.a[0].size, (chunk + 4095) & ~4095ull);
	assert_int_equal(m.vmas[1] + 1, m.vmas[0]);		/* munmapped */
	assert_false(m.a[1].mmapped);			/* threshold raised */
	assert_int_equal(m.a[1].size, chunk);
	assert_true(m.a[1].fresh <= m.a[1].p);		/* all its pages new */
	assert_int_equal(m.a[2].p, m.a[1].p);		/* recycled */
	assert_true(m.a[2].fresh >= m.a[2].p + chunk - 16);	/* nothing new */
	assert_int_equal(m.vmas[2], m.vmas[1] + 1);	/* only the arena's reservation */
	/* after the trim the second chunk's pages beyond top pad are new again */
	uint64_t heap = m.a[1].p - 16;
	assert_int_equal(m.a[4].p, m.a[1].p);
	assert_true(m.a[4].fresh < heap + chunk);
	assert_true(m.a[4].fresh >= heap + (128u << 10));
	assert_int_equal(m.a[4].fresh & 4095, 0);
	tsim_free(s);
}

static struct tlbsim_metrics run_ebizzy(const char *mmap, int64_t iters)
{
	struct tlbsim_config cfg;
	tlbsim_config_init(&cfg);
	cfg.workload = "ebizzy";
	cfg.profile = "x86-24";
	cfg.cpus = 2;
	cfg.threads = 2;
	cfg.iters = iters;
	snprintf(cfg.wparams[0].name, sizeof(cfg.wparams[0].name), "mmap");
	snprintf(cfg.wparams[0].value, sizeof(cfg.wparams[0].value), "%s", mmap);
	snprintf(cfg.wparams[1].name, sizeof(cfg.wparams[1].name), "chunk_size");
	snprintf(cfg.wparams[1].value, sizeof(cfg.wparams[1].value), "64K");
	cfg.nwparams = 2;
	struct tlbsim_resolved res;
	struct tlbsim_metrics m;
	char err[TLBSIM_ERRLEN];
	if (tlbsim_run(&cfg, &res, &m, err, sizeof(err)))
		fail_msg("ebizzy: %s", err);
	return m;
}

static void test_ebizzy_syscalls(void **state)
{
	(void)state;
	/* mmap=1: 16 faults per record of 64 KiB on 4 KiB pages, one munmap
	 * each: pages_freed grows by 16 per record */
	struct tlbsim_metrics a = run_ebizzy("1", 10), b = run_ebizzy("1", 20);
	uint64_t drec = b.ops - a.ops, dfault = b.page_faults - a.page_faults;
	assert_true(drec > 0);
	assert_int_equal(dfault, 16 * drec);
	assert_int_equal(b.pages_freed - a.pages_freed, 16 * drec);
	/* malloc: more records, no more faults or frees (the arena recycles) */
	struct tlbsim_metrics c = run_ebizzy("0", 10), d = run_ebizzy("0", 20);
	assert_true(d.ops > c.ops);
	assert_int_equal(d.page_faults, c.page_faults);
	assert_int_equal(d.pages_freed, c.pages_freed);
	assert_true(d.records_per_sec > 0);
	assert_int_equal(d.records_per_sec, d.ops_per_sec);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_glibc_malloc_rules),
		cmocka_unit_test(test_ebizzy_syscalls),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
