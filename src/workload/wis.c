/*
 * wis.c - the will-it-scale page_fault and tlb_flush testcases
 * (github.com/antonblanchard/will-it-scale, tests/page_fault1..4.c,
 * tests/tlb_flush1..3.c), re-implemented from their description with the
 * harness around them (main.c): N tasks, each pinned to CPU i % ncpus, as
 * processes (fork: one mm each) or threads (pthread_create: one shared mm),
 * each counting one iteration per page.
 *
 *   page_fault1  128 MiB anonymous private: write each page, munmap
 *   page_fault2  128 MiB private mapping of the task's own file: write each page
 *   page_fault3  128 MiB shared mapping of the task's own file: write each page
 *   page_fault4  128 MiB private mapping of the file: read each page
 *   tlb_flush1   file, private: write a page, MADV_DONTNEED it, read it back
 *   tlb_flush2   1 MiB anonymous private: the same (munmap every 1 MiB)
 *   tlb_flush3   file, shared: the same
 *
 * Every file is the task's own unlinked temporary file of the mapping's size
 * on -w fs (ext4: page_mkwrite and dirty accounting; tmpfs: neither).
 *
 * Measurement (the harness discards its warm-up): the first round of every
 * task (its first mmap .. munmap, when the file's page cache fills) is
 * warm-up. The window opens when the last task finishes its first round and
 * closes when every task has finished --iters more rounds, or --duration
 * simulated seconds later; tasks keep going until it closes, so every task
 * is busy throughout. ops_per_sec = iterations in the window / its length,
 * summed over tasks, as the harness prints.
 */
#include <stdio.h>
#include <string.h>

#include "workload/workload.h"

enum wis_kind { PAGE_FAULT1, PAGE_FAULT2, PAGE_FAULT3, PAGE_FAULT4, TLB_FLUSH1, TLB_FLUSH2,
		TLB_FLUSH3 };

struct wis_test {
	enum wis_kind kind;
	bool file;		/* maps the task's own file */
	bool shared;		/* MAP_SHARED */
	bool write;		/* the per-page access (page_fault4 reads) */
	bool zap;		/* tlb_flush: MADV_DONTNEED the page, read it back */
};

static const struct wis_test tests[] = {
	[PAGE_FAULT1] = {PAGE_FAULT1, false, false, true, false},
	[PAGE_FAULT2] = {PAGE_FAULT2, true, false, true, false},
	[PAGE_FAULT3] = {PAGE_FAULT3, true, true, true, false},
	[PAGE_FAULT4] = {PAGE_FAULT4, true, false, false, false},
	[TLB_FLUSH1] = {TLB_FLUSH1, true, false, true, true},
	[TLB_FLUSH2] = {TLB_FLUSH2, false, false, true, true},
	[TLB_FLUSH3] = {TLB_FLUSH3, true, true, true, true},
};

struct wis_state {
	const struct wis_test *t;
	bool processes;
	const struct fs_type *fs;
	int ntasks;
	uint64_t size;			/* bytes per mapping (and file) */
	struct measure_window win;
	struct sim_thread **th;
};

/* one testcase() of the harness, as process or thread */
static void wis_task(struct sim *s, struct sim_thread *t)
{
	struct wis_state *st = t->arg;
	const struct wis_test *w = st->t;
	uint64_t ps = hw_of(s)->geom.page_size;
	struct inode *file = NULL;
	if (w->file) {
		file = sys_tmpfile(s, st->fs, st->size);
		if (!file)
			return;
	}
	int flags = w->shared ? TLBSIM_MAP_SHARED : TLBSIM_MAP_PRIVATE;
	for (int64_t round = 1; !st->win.stop && !s->error; round++) {
		uint64_t p = file ? sys_mmap_file(s, 0, st->size, flags, file, 0)
				  : sys_mmap(s, 0, st->size, flags);
		if (p == TLBSIM_EINVAL_VA) {
			sim_fail(s, TLBSIM_EINVAL, "mmap of %llu bytes failed",
				 (unsigned long long)st->size);
			return;
		}
		for (uint64_t a = p; a < p + st->size && !st->win.stop; a += ps) {
			user_access(s, a, w->write);
			if (w->zap) {
				sys_madvise_dontneed(s, a, ps);
				user_access(s, a, false);	/* the harness asserts the value */
			}
			s->m.ops++;
			window_check_time(s, &st->win);
		}
		if (st->win.stop)
			break;
		sys_munmap(s, p, st->size);
		window_round_done(s, &st->win, round);
	}
}

static void wis_main(struct sim *s, struct sim_thread *t)
{
	struct wis_state *st = t->arg;
	st->th = kernel_obj_alloc(s, (size_t)st->ntasks * sizeof(*st->th));
	for (int i = 0; i < st->ntasks && !s->error; i++) {
		int cpu = i % s->nr_cpus;	/* the harness pins task i to CPU i % ncpus */
		st->th[i] = st->processes ? glibc_fork_on(s, wis_task, st, cpu)
					  : glibc_pthread_create_on(s, wis_task, st, cpu);
	}
	for (int i = 0; i < st->ntasks; i++)
		if (st->th[i])
			sim_join(s, st->th[i]);
}

static int wis_setup(struct sim *s, const struct tlbsim_resolved *r, void **state, char *err,
		     size_t errlen, enum wis_kind kind)
{
	struct wis_state *st = kernel_obj_alloc(s, sizeof(*st));
	if (!st) {
		snprintf(err, errlen, "out of memory");
		return TLBSIM_ENOMEM;
	}
	*state = st;
	st->t = &tests[kind];
	const char *v = wparam(r, "mode");
	if (strcmp(v, "processes") == 0)
		st->processes = true;
	else if (strcmp(v, "threads") != 0) {
		snprintf(err, errlen, "workload parameter mode=%s: want processes or threads", v);
		return TLBSIM_EINVAL;
	}
	if (st->t->file) {
		v = wparam(r, "fs");
		st->fs = fs_type_find(v);
		if (!st->fs) {
			snprintf(err, errlen, "workload parameter fs=%s: want ext4 or tmpfs", v);
			return TLBSIM_EINVAL;
		}
	}
	uint64_t ps = hw_of(s)->geom.page_size;
	v = wparam(r, "size");
	if (parse_size(v, &st->size) || st->size < ps || st->size > (64ull << 30)) {
		snprintf(err, errlen, "workload parameter size=%s: want a size from one page (%llu) "
			 "to 64G (suffixes K, M, G)", v, (unsigned long long)ps);
		return TLBSIM_EINVAL;
	}
	st->size = (st->size + ps - 1) & ~(ps - 1);
	st->ntasks = r->threads;
	window_init(&st->win, r->threads, r->iters, r->duration_ns);
	return window_need_slices(s, r->threads, err, errlen);
}

/* each task at most: its mapping and its file's page cache */
static uint64_t wis_estimate(const struct tlbsim_resolved *r, int page_shift)
{
	uint64_t size;
	if (parse_size(wparam(r, "size"), &size))
		return 0;
	uint64_t pages = (size >> page_shift) + 1;
	/* a task's stack or mm plus two copies of the mapping (page cache and
	 * COW pages of a private file mapping) */
	return (uint64_t)r->threads * (2 * estimate_mapped_bytes(pages, page_shift) + (64u << 10));
}

/* ops = pages: every task's warm-up round and --iters measured rounds */
static uint64_t wis_expected_ops(const struct tlbsim_resolved *r, int page_shift)
{
	uint64_t size;
	if (parse_size(wparam(r, "size"), &size))
		return 0;
	return (uint64_t)r->threads * (uint64_t)(r->iters + 1) * (size >> page_shift);
}

#define MODE_PARAM {"mode", "processes", "processes (fork: an mm each) or threads (one mm)"}
#define FS_PARAM {"fs", "ext4", "filesystem of the task's file: ext4 (page_mkwrite, dirty " \
			    "accounting) or tmpfs"}
#define SIZE_PARAM(def) {"size", def, "bytes per mapping (and file); the testcase uses " def}

static const struct tlbsim_wparam_desc anon_params[] = {MODE_PARAM, SIZE_PARAM("128M")};
static const struct tlbsim_wparam_desc file_params[] = {MODE_PARAM, FS_PARAM, SIZE_PARAM("128M")};
static const struct tlbsim_wparam_desc tf2_params[] = {MODE_PARAM, SIZE_PARAM("1M")};

/* the kernel these testcases are run against: v5.8's fault path */
#define WIS_POLICY "fault_retry=dirty_throttle"

#define WIS_DESC(id, nm, text, prof, plist, chk)                                         \
	static const struct tlbsim_workload_desc id##_desc = {                             \
		.name = nm,                                                                 \
		.description = text,                                                        \
		.default_profile = prof,                                                    \
		.default_threads = 0,                                                       \
		.default_iters = 1,                                                         \
		.timed = 1,                                                                 \
		.default_policy = WIS_POLICY,                                               \
		.nparams = (int)(sizeof(plist) / sizeof(plist[0])),                       \
		.params = plist,                                                            \
		.check_iters = 1,                                                           \
		.check_cpus = 2,                                                            \
		.check_wparams = chk,                                                       \
	};                                                                                  \
	static int id##_setup(struct sim *s, const struct tlbsim_resolved *r, void **state, \
			      char *err, size_t errlen)                                     \
	{                                                                                   \
		return wis_setup(s, r, state, err, errlen, id);                              \
	}                                                                                   \
	const struct workload_ops id##_ops = {                                              \
		.desc = &id##_desc, .setup = id##_setup, .main = wis_main,                  \
		.estimate = wis_estimate, .expected_ops = wis_expected_ops,                 \
	}

WIS_DESC(PAGE_FAULT1, "page_fault1",
	 "will-it-scale: write every page of a 128M private anonymous mapping, munmap; "
	 "ops = pages", "arm64-4k", anon_params, "size=16K");
WIS_DESC(PAGE_FAULT2, "page_fault2",
	 "will-it-scale: write every page of a 128M private mapping of the task's file (COW), "
	 "munmap; ops = pages", "arm64-4k", file_params, "size=16K");
WIS_DESC(PAGE_FAULT3, "page_fault3",
	 "will-it-scale: write every page of a 128M shared mapping of the task's file, munmap; "
	 "ops = pages (seed 001)", "arm64-4k", file_params, "size=16K");
WIS_DESC(PAGE_FAULT4, "page_fault4",
	 "will-it-scale: read every page of a 128M private mapping of the task's file "
	 "(fault-around), munmap; ops = pages", "arm64-4k", file_params, "size=16K");
WIS_DESC(TLB_FLUSH1, "tlb_flush1",
	 "will-it-scale: per page of a 128M private file mapping write, MADV_DONTNEED, read; "
	 "ops = pages", "arm64-4k", file_params, "size=16K");
WIS_DESC(TLB_FLUSH2, "tlb_flush2",
	 "will-it-scale: per page of a 1M private anonymous mapping write, MADV_DONTNEED, read; "
	 "munmap every 1M; ops = pages", "arm64-4k", tf2_params, "size=16K");
WIS_DESC(TLB_FLUSH3, "tlb_flush3",
	 "will-it-scale: per page of a 128M shared file mapping write, MADV_DONTNEED, read; "
	 "ops = pages", "arm64-4k", file_params, "size=16K");
