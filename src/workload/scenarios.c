/*
 * scenarios.c - small workloads that reproduce historical TLB-flush races
 * (kernel-model 7.1 and issue 3), for `tlbsim check` and the tests.
 *
 * madv_race (99baac21e458, 2017, "mm: fix MADV_[FREE|DONTNEED] TLB flush miss
 * problem"): the main thread writes a private page (its CPU caches a
 * writable, dirty TLB entry) and keeps writing it, while two threads both
 * madvise() the same page. Before the fix the second zapper finds the PTE
 * already gone (or clean), records nothing, flushes nothing and returns while
 * the first one's flush is still pending: DONTNEED -> I2, FREE -> I3.
 *
 * lazy_tables (b956575bed91, 2017, "x86/mm: Flush more aggressively in lazy
 * TLB mode"): a thread writes a mapping on its own CPU (caching
 * paging-structure entries), exits (the CPU goes idle in lazy TLB mode with
 * the mm still loaded), then the main thread unmaps the mapping, freeing its
 * PTE table. If lazy CPUs are not flushed, the freed table stays reachable
 * through that CPU's paging-structure cache -> I1.
 *
 * The seed-001 scenarios (the v5.8 fault path; every spurious_flush value
 * must be clean on them):
 *
 * local_migrate (arm64_local, the 2020 proposal "arm64: tlb: skip tlbi
 * broadcast", 20200223192520.20808-4-aarcange@redhat.com): a single-threaded
 * process on CPU 1 maps a page, writes it and unmaps it, while a task of
 * another process moves it to CPU 2 with sched_setaffinity. Its mm has only
 * run on CPU 1, so the unmap's flush may be local; if the move lands between
 * the test of the CPUs and the local TLBI, the TLBI runs on CPU 2 and CPU 1
 * keeps the translation of the freed page -> I2. single_cpu_mm (the test
 * and the TLBI under preempt_disable) must be clean;
 * single_cpu_mm_preemptible is not.
 *
 * retry_race: a thread writes the pages of a shared ext4 mapping (each
 * write fault drops mmap_lock for dirty throttling and is retried with
 * FAULT_FLAG_TRIED) while another thread munmaps the mapping, or
 * MADV_DONTNEEDs it, in the window between the attempts.
 *
 * writeback_race: a thread keeps writing a page of a shared ext4 mapping
 * while another one writes the file back (fsync: page_mkclean write-protects
 * and flushes the PTE, then the page is clean). A write that lands through a
 * stale writable entry after that is lost -> I3.
 *
 * spurious_race: threads on different CPUs read, then write, the same page of
 * a shared tmpfs mapping. Without hardware DBM the first write takes a
 * permission fault and ptep_set_access_flags makes the PTE dirty; a CPU still
 * caching the read-only entry faults too, finds nothing to change (the
 * spurious branch) and must heal its own TLB, whatever the knob -> I6.
 */
#include <stdio.h>
#include <string.h>

#include "mm/points.h"
#include "workload/workload.h"

struct race_state {
	int64_t iters;
	bool free_advice;
	uint64_t page;
	uint64_t writes;
	uint64_t region;
};

static int madv_race_setup(struct sim *s, const struct tlbsim_resolved *r, void **state,
			   char *err, size_t errlen)
{
	struct race_state *st = kernel_obj_alloc(s, sizeof(*st));
	if (!st) {
		snprintf(err, errlen, "out of memory");
		return TLBSIM_ENOMEM;
	}
	*state = st;
	st->iters = r->iters;
	const char *v = wparam(r, "advice");
	if (strcmp(v, "dontneed") == 0)
		st->free_advice = false;
	else if (strcmp(v, "free") == 0)
		st->free_advice = true;
	else {
		snprintf(err, errlen, "workload parameter advice=%s: want dontneed or free", v);
		return TLBSIM_EINVAL;
	}
	v = wparam(r, "writes");
	if (parse_u64(v, &st->writes) || st->writes == 0 || st->writes > 1000000) {
		snprintf(err, errlen, "workload parameter writes=%s: want 1..1000000", v);
		return TLBSIM_EINVAL;
	}
	return 0;
}

static void zapper(struct sim *s, struct sim_thread *t)
{
	struct race_state *st = t->arg;
	uint64_t ps = hw_of(s)->geom.page_size;
	if (st->free_advice)
		sys_madvise_free(s, st->page, ps);
	else
		sys_madvise_dontneed(s, st->page, ps);
}

static void madv_race_main(struct sim *s, struct sim_thread *t)
{
	struct race_state *st = t->arg;
	uint64_t ps = hw_of(s)->geom.page_size;
	for (int64_t it = 0; it < st->iters && !s->error; it++) {
		st->page = sys_mmap(s, 0, ps, TLBSIM_MAP_PRIVATE);
		user_access(s, st->page, true);
		struct sim_thread *a = glibc_pthread_create(s, zapper, st);
		struct sim_thread *b = glibc_pthread_create(s, zapper, st);
		for (uint64_t i = 0; i < st->writes; i++) {
			user_access(s, st->page, true);
			sim_step(s, YP_USER, (uint64_t)P(s, P_user_loop_ns));
		}
		if (a)
			glibc_pthread_join(s, a);
		if (b)
			glibc_pthread_join(s, b);
		sys_munmap(s, st->page, ps);
		s->m.ops++;
	}
}

struct lm_state {
	int64_t iters;
	uint64_t pages;
};

static int local_migrate_setup(struct sim *s, const struct tlbsim_resolved *r, void **state,
			       char *err, size_t errlen)
{
	struct lm_state *st = kernel_obj_alloc(s, sizeof(*st));
	if (!st) {
		snprintf(err, errlen, "out of memory");
		return TLBSIM_ENOMEM;
	}
	*state = st;
	st->iters = r->iters;
	const char *v = wparam(r, "pages");
	if (parse_u64(v, &st->pages) || st->pages == 0 || st->pages > 4096) {
		snprintf(err, errlen, "workload parameter pages=%s: want 1..4096", v);
		return TLBSIM_EINVAL;
	}
	if (s->nr_cpus < 3) {
		snprintf(err, errlen, "local_migrate needs 3 CPUs (the victim's, the one it moves "
			 "to, the mover's)");
		return TLBSIM_EINVAL;
	}
	return 0;
}

/* the single-threaded process: map, write every page, unmap */
static void lm_victim(struct sim *s, struct sim_thread *t)
{
	struct lm_state *st = t->arg;
	uint64_t len = st->pages * hw_of(s)->geom.page_size;
	uint64_t p = sys_mmap(s, 0, len, TLBSIM_MAP_PRIVATE);
	if (p == TLBSIM_EINVAL_VA) {
		sim_fail(s, TLBSIM_EINVAL, "local_migrate: mmap failed");
		return;
	}
	for (uint64_t i = 0; i < st->pages; i++)
		user_access(s, p + i * hw_of(s)->geom.page_size, true);
	sys_munmap(s, p, len);
}

static void local_migrate_main(struct sim *s, struct sim_thread *t)
{
	struct lm_state *st = t->arg;
	for (int64_t it = 0; it < st->iters && !s->error; it++) {
		struct sim_thread *v = glibc_fork_on(s, lm_victim, st, 1);
		if (!v)
			return;
		sys_sched_setaffinity(s, task_of(v), 2);
		sim_join(s, v);
		s->m.ops++;
	}
}

static void lazy_writer(struct sim *s, struct sim_thread *t)
{
	struct race_state *st = t->arg;
	user_access(s, st->region, true);
}

static int lazy_tables_setup(struct sim *s, const struct tlbsim_resolved *r, void **state,
			     char *err, size_t errlen)
{
	struct race_state *st = kernel_obj_alloc(s, sizeof(*st));
	if (!st) {
		snprintf(err, errlen, "out of memory");
		return TLBSIM_ENOMEM;
	}
	*state = st;
	st->iters = r->iters;
	return 0;
}

static void lazy_tables_main(struct sim *s, struct sim_thread *t)
{
	struct race_state *st = t->arg;
	uint64_t ps = hw_of(s)->geom.page_size;
	/* a mapping alone in its PMD span, so munmap frees its PTE table */
	uint64_t hole = sys_mmap(s, 0, 4ull << 30, TLBSIM_MAP_PRIVATE);
	sys_munmap(s, hole, 4ull << 30);
	for (int64_t it = 0; it < st->iters && !s->error; it++) {
		st->region = sys_mmap(s, hole + (2ull << 30), ps, TLBSIM_MAP_PRIVATE);
		struct sim_thread *w = glibc_pthread_create(s, lazy_writer, st);
		if (w)
			glibc_pthread_join(s, w);
		sys_munmap(s, st->region, ps);
		s->m.ops++;
	}
}

/* ---- seed-001 scenarios ---- */

struct s001_state {
	int64_t iters;
	bool dontneed;
	uint64_t pages, writes, flushes;
	uint64_t addr;
	struct inode *file;
};

static int s001_setup(struct sim *s, const struct tlbsim_resolved *r, void **state, char *err,
		      size_t errlen)
{
	struct s001_state *st = kernel_obj_alloc(s, sizeof(*st));
	if (!st) {
		snprintf(err, errlen, "out of memory");
		return TLBSIM_ENOMEM;
	}
	*state = st;
	st->iters = r->iters;
	for (int i = 0; i < r->nwparams; i++) {
		const char *n = r->wparams[i].name, *v = r->wparams[i].value;
		uint64_t *dst = strcmp(n, "pages") == 0 ? &st->pages
				: strcmp(n, "writes") == 0 ? &st->writes
				: strcmp(n, "flushes") == 0 ? &st->flushes : NULL;
		if (strcmp(n, "zap") == 0) {
			if (strcmp(v, "munmap") == 0)
				st->dontneed = false;
			else if (strcmp(v, "dontneed") == 0)
				st->dontneed = true;
			else {
				snprintf(err, errlen, "workload parameter zap=%s: want munmap or "
					 "dontneed", v);
				return TLBSIM_EINVAL;
			}
		} else if (dst && (parse_u64(v, dst) || *dst == 0 || *dst > 4096)) {
			snprintf(err, errlen, "workload parameter %s=%s: want 1..4096", n, v);
			return TLBSIM_EINVAL;
		}
	}
	return 0;
}

static void retry_writer(struct sim *s, struct sim_thread *t)
{
	struct s001_state *st = t->arg;
	uint64_t ps = hw_of(s)->geom.page_size;
	for (uint64_t i = 0; i < st->pages; i++)
		if (user_access(s, st->addr + i * ps, true))
			return;		/* unmapped under us: SIGSEGV ends the thread */
}

static void retry_zapper(struct sim *s, struct sim_thread *t)
{
	struct s001_state *st = t->arg;
	uint64_t len = st->pages * hw_of(s)->geom.page_size;
	if (st->dontneed)
		sys_madvise_dontneed(s, st->addr, len);
	else
		sys_munmap(s, st->addr, len);
}

static void retry_race_main(struct sim *s, struct sim_thread *t)
{
	struct s001_state *st = t->arg;
	uint64_t len = st->pages * hw_of(s)->geom.page_size;
	st->file = sys_tmpfile(s, &fs_ext4, len);
	for (int64_t it = 0; it < st->iters && !s->error; it++) {
		st->addr = sys_mmap_file(s, 0, len, TLBSIM_MAP_SHARED, st->file, 0);
		struct sim_thread *w = glibc_pthread_create(s, retry_writer, st);
		struct sim_thread *z = glibc_pthread_create(s, retry_zapper, st);
		if (w)
			glibc_pthread_join(s, w);
		if (z)
			glibc_pthread_join(s, z);
		if (st->dontneed)
			sys_munmap(s, st->addr, len);
		s->m.ops++;
	}
}

static void wb_writer(struct sim *s, struct sim_thread *t)
{
	struct s001_state *st = t->arg;
	for (uint64_t i = 0; i < st->writes; i++)
		user_access(s, st->addr, true);
}

static void wb_flusher(struct sim *s, struct sim_thread *t)
{
	struct s001_state *st = t->arg;
	for (uint64_t i = 0; i < st->flushes; i++)
		sys_fsync(s, st->file);
}

static void writeback_race_main(struct sim *s, struct sim_thread *t)
{
	struct s001_state *st = t->arg;
	uint64_t ps = hw_of(s)->geom.page_size;
	st->file = sys_tmpfile(s, &fs_ext4, ps);
	for (int64_t it = 0; it < st->iters && !s->error; it++) {
		st->addr = sys_mmap_file(s, 0, ps, TLBSIM_MAP_SHARED, st->file, 0);
		user_access(s, st->addr, true);
		struct sim_thread *w = glibc_pthread_create(s, wb_writer, st);
		struct sim_thread *f = glibc_pthread_create(s, wb_flusher, st);
		if (w)
			glibc_pthread_join(s, w);
		if (f)
			glibc_pthread_join(s, f);
		sys_munmap(s, st->addr, ps);
		s->m.ops++;
	}
}

static void sp_toucher(struct sim *s, struct sim_thread *t)
{
	struct s001_state *st = t->arg;
	user_access(s, st->addr, false);
	for (uint64_t i = 0; i < st->writes; i++)
		user_access(s, st->addr, true);
}

static void spurious_race_main(struct sim *s, struct sim_thread *t)
{
	struct s001_state *st = t->arg;
	uint64_t ps = hw_of(s)->geom.page_size;
	st->file = sys_tmpfile(s, &fs_tmpfs, ps);
	for (int64_t it = 0; it < st->iters && !s->error; it++) {
		st->addr = sys_mmap_file(s, 0, ps, TLBSIM_MAP_SHARED, st->file, 0);
		struct sim_thread *a = glibc_pthread_create(s, sp_toucher, st);
		struct sim_thread *b = glibc_pthread_create(s, sp_toucher, st);
		if (a)
			glibc_pthread_join(s, a);
		if (b)
			glibc_pthread_join(s, b);
		sys_munmap(s, st->addr, ps);
		s->m.ops++;
	}
}

static const struct tlbsim_wparam_desc madv_race_params[] = {
	{"advice", "dontneed", "dontneed (checks I2) or free (MADV_FREE, checks I3)"},
	{"writes", "4", "writes the main thread makes while the two zappers run"},
};

static const struct tlbsim_workload_desc madv_race_desc = {
	.name = "madv_race",
	.description = "99baac21e458 (2017): two threads madvise the same page while a third "
		       "writes it; run with --policy nested_check=off for the pre-fix kernel",
	.default_profile = "x86-24",
	.default_threads = 3,
	.fixed_threads = 1,
	.default_iters = 1,
	.nparams = 2,
	.params = madv_race_params,
	.check_iters = 1,
	.check_cpus = 4,
	.check_wparams = "",
};

static const struct tlbsim_workload_desc lazy_tables_desc = {
	.name = "lazy_tables",
	.description = "b956575bed91 (2017): a lazy-TLB CPU keeps paging-structure entries to a "
		       "page table munmap frees; run with --policy x86_lazy=never for the pre-fix "
		       "kernel",
	.default_profile = "x86-24",
	.default_threads = 2,
	.fixed_threads = 1,
	.default_iters = 1,
	.nparams = 0,
	.params = NULL,
	.check_iters = 1,
	.check_cpus = 4,
	.check_wparams = "",
};

static const struct tlbsim_wparam_desc retry_race_params[] = {
	{"zap", "munmap", "what the other thread does to the mapping: munmap or dontneed"},
	{"pages", "2", "pages of the shared ext4 mapping the writer writes"},
};

static const struct tlbsim_workload_desc retry_race_desc = {
	.name = "retry_race",
	.description = "seed 001: a write fault retried after dropping mmap_lock for dirty "
		       "throttling (89b15332af7c) races munmap or MADV_DONTNEED of its mapping",
	.default_profile = "arm64-4k",
	.default_threads = 3,
	.fixed_threads = 1,
	.default_iters = 1,
	.default_policy = "fault_retry=dirty_throttle",
	.nparams = 2,
	.params = retry_race_params,
	.check_iters = 1,
	.check_cpus = 4,
	.check_wparams = "",
};

static const struct tlbsim_wparam_desc writeback_race_params[] = {
	{"writes", "4", "writes of the page while the file is written back"},
	{"flushes", "2", "fsync() calls of the flusher thread"},
};

static const struct tlbsim_workload_desc writeback_race_desc = {
	.name = "writeback_race",
	.description = "seed 001: writeback (page_mkclean) of a shared ext4 page races a thread "
		       "writing it; a write through a stale entry after the clean is lost (I3)",
	.default_profile = "arm64-4k",
	.default_threads = 3,
	.fixed_threads = 1,
	.default_iters = 1,
	.default_policy = "fault_retry=dirty_throttle",
	.nparams = 2,
	.params = writeback_race_params,
	.check_iters = 1,
	.check_cpus = 4,
	.check_wparams = "",
};

static const struct tlbsim_wparam_desc spurious_race_params[] = {
	{"writes", "2", "writes of each thread after its read"},
};

static const struct tlbsim_workload_desc spurious_race_desc = {
	.name = "spurious_race",
	.description = "seed 001: two CPUs read then write one shared tmpfs page; a CPU left with "
		       "a stale read-only entry must heal it through its own spurious fault (I6)",
	.default_profile = "arm64-4k",
	.default_threads = 3,
	.fixed_threads = 1,
	.default_iters = 1,
	.default_policy = "fault_retry=dirty_throttle",
	.nparams = 1,
	.params = spurious_race_params,
	.check_iters = 1,
	.check_cpus = 4,
	.check_wparams = "",
};

const struct workload_ops retry_race_ops = {
	.desc = &retry_race_desc, .setup = s001_setup, .main = retry_race_main,
};
const struct workload_ops writeback_race_ops = {
	.desc = &writeback_race_desc, .setup = s001_setup, .main = writeback_race_main,
};
const struct workload_ops spurious_race_ops = {
	.desc = &spurious_race_desc, .setup = s001_setup, .main = spurious_race_main,
};

static const struct tlbsim_wparam_desc local_migrate_params[] = {
	{"pages", "1", "pages the single-threaded process maps, writes and unmaps"},
};

static const struct tlbsim_workload_desc local_migrate_desc = {
	.name = "local_migrate",
	.description = "arm64_local (the 2020 proposal): a single-CPU mm's local flush races "
		       "the task's migration; single_cpu_mm must be clean, "
		       "single_cpu_mm_preemptible is not",
	.default_profile = "arm64-4k",
	.default_threads = 2,
	.fixed_threads = 1,
	.default_iters = 1,
	.default_policy = "arm64_local=single_cpu_mm",
	.nparams = 1,
	.params = local_migrate_params,
	.check_iters = 1,
	.check_cpus = 4,
	.check_wparams = "",
};

const struct workload_ops local_migrate_ops = {
	.desc = &local_migrate_desc, .setup = local_migrate_setup, .main = local_migrate_main,
};

const struct workload_ops madv_race_ops = {
	.desc = &madv_race_desc, .setup = madv_race_setup, .main = madv_race_main,
};
const struct workload_ops lazy_tables_ops = {
	.desc = &lazy_tables_desc, .setup = lazy_tables_setup, .main = lazy_tables_main,
};
