/*
 * run.c - workload shapes run on the host kernel (tlbsim native).
 *
 * mmap8: the shape of src/workload/mmap8.c - a hint in the middle of a
 * 2 GiB hole, then N threads each loop {mmap(hint, size, MAP_SHARED or
 * MAP_PRIVATE | MAP_ANONYMOUS); write the first byte of `touch` pages;
 * madvise(MADV_DONTNEED); munmap}. Timed from before the hint until every
 * thread is joined (the model's wall covers the same).
 *
 * page_fault3: will-it-scale's page_fault3 with its harness, as
 * src/workload/wis.c: N tasks (processes or threads), task i pinned to CPU
 * i % cpus, each with its own unlinked file of `size` bytes (tmpfs:
 * /dev/shm; ext4: $TMPDIR or /tmp), looping {mmap shared, write every page,
 * munmap}. The first round of each task is warm-up; the window opens when
 * the last task finishes it and closes when every task has done `iters`
 * more rounds; tasks keep going until it closes.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "native/native.h"

#define TMPFS_MAGIC_ 0x01021994
#define EXT4_MAGIC_ 0xEF53

static uint64_t tv_ns(struct timeval tv)
{
	return (uint64_t)tv.tv_sec * 1000000000ull + (uint64_t)tv.tv_usec * 1000ull;
}

/* the CPUs this process may use, the first `want` of them (0: all) */
static int allowed_cpus(int want, cpu_set_t *out, char *err, size_t errlen, bool *usage)
{
	cpu_set_t set;
	CPU_ZERO(out);
	if (sched_getaffinity(0, sizeof(set), &set)) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		for (int i = 0; i < n && i < CPU_SETSIZE; i++)
			CPU_SET(i, &set);
	}
	int have = CPU_COUNT(&set);
	if (want > have) {
		*usage = true;
		snprintf(err, errlen, "--cpus %d: this host lets the process use %d CPU(s)", want,
			 have);
		return -1;
	}
	int n = 0;
	for (int i = 0; i < CPU_SETSIZE && (!want || n < want); i++)
		if (CPU_ISSET(i, &set)) {
			CPU_SET(i, out);
			n++;
		}
	return n;
}

/* the i-th CPU of set */
static int nth_cpu(const cpu_set_t *set, int i)
{
	int n = CPU_COUNT(set);
	i %= n;
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, set) && i-- == 0)
			return c;
	return 0;
}

/* ---- stopping early ---- */

/* A thread beside the run's tasks asks cfg->interrupted every 10 ms and,
 * on a non-zero answer, raises *stop (which the tasks poll: for processes
 * it is in shared memory) and keeps the answer. The tasks are joined as
 * before, so the run's timing is the same with and without it. */
struct watch {
	int (*interrupted)(void *);
	_Atomic int *stop;		/* the tasks' flag */
	_Atomic int done;		/* the tasks have been joined */
	int got;			/* interrupted's non-zero answer */
	pthread_t th;
	bool running;
};

static void *watch_thread(void *arg)
{
	struct watch *w = arg;
	while (!atomic_load(&w->done)) {
		int sig = w->interrupted(NULL);
		if (sig) {
			w->got = sig;
			atomic_store(w->stop, 1);
			break;
		}
		struct timespec ts = {0, 10 * 1000000L};
		nanosleep(&ts, NULL);
	}
	return NULL;
}

static void watch_start(struct watch *w, const struct native_run_cfg *c, _Atomic int *stop)
{
	memset(w, 0, sizeof(*w));
	w->interrupted = c->interrupted;
	w->stop = stop;
	w->running = c->interrupted && pthread_create(&w->th, NULL, watch_thread, w) == 0;
}

/* after the tasks are joined: the watcher's answer, 0 if none */
static int watch_end(struct watch *w)
{
	if (!w->running)
		return 0;
	atomic_store(&w->done, 1);
	pthread_join(w->th, NULL);
	return w->got;
}

/* ---- mmap8 ---- */

struct m8 {
	const struct native_run_cfg *cfg;
	char *hint;
	size_t ps;
	_Atomic int failed, stop;
	int fail_errno;
	_Atomic uint64_t ops;		/* loops done, summed as threads end */
};

static void *m8_thread(void *arg)
{
	struct m8 *st = arg;
	const struct native_run_cfg *c = st->cfg;
	int flags = (c->shared ? MAP_SHARED : MAP_PRIVATE) | MAP_ANONYMOUS;
	int64_t i = 0;
	for (; i < c->iters && !atomic_load_explicit(&st->failed, memory_order_relaxed) &&
	       !atomic_load_explicit(&st->stop, memory_order_relaxed);
	     i++) {
		char *p = mmap(st->hint, c->size, PROT_READ | PROT_WRITE, flags, -1, 0);
		if (p == MAP_FAILED) {
			st->fail_errno = errno;
			atomic_store(&st->failed, 1);
			break;
		}
		for (uint64_t k = 0; k < c->touch; k++)
			((volatile char *)p)[k * st->ps] = 1;
		madvise(p, c->size, MADV_DONTNEED);
		munmap(p, c->size);
	}
	atomic_fetch_add(&st->ops, (uint64_t)i);
	return NULL;
}

static int run_mmap8(const struct native_run_cfg *c, struct native_run_result *r, char *err,
		     size_t errlen)
{
	struct m8 st = {.cfg = c, .ps = (size_t)sysconf(_SC_PAGESIZE)};
	pthread_t *th = calloc((size_t)c->threads, sizeof(*th));
	if (!th) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	uint64_t t0 = native_now_ns();
	/* distant_area = mmap(NULL, 2 GiB); munmap; distant_area += 1 GiB */
	char *a = mmap(NULL, 2ull << 30, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (a == MAP_FAILED) {
		free(th);
		snprintf(err, errlen, "mmap of the 2 GiB hint area: %s", strerror(errno));
		return -1;
	}
	munmap(a, 2ull << 30);
	st.hint = a + (1ull << 30);
	int n = 0, rc = 0;
	struct watch w;
	watch_start(&w, c, &st.stop);
	for (; n < c->threads; n++)
		if ((rc = pthread_create(&th[n], NULL, m8_thread, &st)))
			break;
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	r->real_ns = native_now_ns() - t0;
	r->stopped = watch_end(&w);
	free(th);
	if (n < c->threads) {
		snprintf(err, errlen, "pthread_create of thread %d: %s", n + 1, strerror(rc));
		return -1;
	}
	if (atomic_load(&st.failed)) {
		snprintf(err, errlen, "mmap of %llu bytes: %s", (unsigned long long)c->size,
			 strerror(st.fail_errno));
		return -1;
	}
	r->ops = atomic_load(&st.ops);	/* threads x iters unless stopped early */
	r->window_ns = r->real_ns;
	r->window_ops = r->ops;
	return 0;
}

/* ---- page_fault3 ---- */

#define PF_MAX_TASKS 4096

struct pf_shared {
	_Atomic int warm, measured, stop, failed;
	int fail_errno;
	char fail_what[160];
	_Atomic uint64_t t_open, t_close, ops_open, ops_close;
	_Atomic long fstype;
	struct {
		_Atomic uint64_t ops;
		char pad[56];
	} slot[PF_MAX_TASKS];
};

struct pf_task {
	const struct native_run_cfg *cfg;
	struct pf_shared *sh;
	const cpu_set_t *cpus;
	int id;
	bool pin;
};

static uint64_t pf_sum(const struct pf_shared *sh, int n)
{
	uint64_t s = 0;
	for (int i = 0; i < n; i++)
		s += atomic_load(&sh->slot[i].ops);
	return s;
}

static void pf_fail(struct pf_shared *sh, const char *what)
{
	if (atomic_exchange(&sh->failed, 1) == 0) {
		sh->fail_errno = errno;
		snprintf(sh->fail_what, sizeof(sh->fail_what), "%s", what);
	}
	atomic_store(&sh->stop, 1);
}

static void pf_task_body(struct pf_task *t)
{
	const struct native_run_cfg *c = t->cfg;
	struct pf_shared *sh = t->sh;
	if (t->pin) {
		cpu_set_t one;
		CPU_ZERO(&one);
		CPU_SET(nth_cpu(t->cpus, t->id), &one);
		sched_setaffinity(0, sizeof(one), &one);
	}
	const char *tmpdir = getenv("TMPDIR");
	const char *dir = c->tmpfs ? "/dev/shm" : tmpdir ? tmpdir : "/tmp";
	int fd = open(dir, O_TMPFILE | O_RDWR, 0600);
	if (fd < 0) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/tlbsim-native-XXXXXX", dir);
		fd = mkstemp(path);
		if (fd >= 0)
			unlink(path);
	}
	if (fd < 0) {
		char what[160];
		snprintf(what, sizeof(what), "temporary file in %.100s%s", dir,
			 c->tmpfs ? " (-w fs=tmpfs)" : tmpdir ? " (TMPDIR)" : "");
		pf_fail(sh, what);
		return;
	}
	struct statfs sf;
	if (fstatfs(fd, &sf) == 0)
		atomic_store(&sh->fstype, (long)sf.f_type);
	/* the blocks reserved up front: a file the filesystem cannot back (a
	 * full tmpfs, RLIMIT_FSIZE) failed at its first store, with SIGBUS or
	 * SIGXFSZ and no message; round 1 fills the page cache either way, so
	 * the window's rounds (after every task's first) are the same */
	int fe = ftruncate(fd, (off_t)c->size) ? errno : posix_fallocate(fd, 0, (off_t)c->size);
	if (fe) {
		char what[200];
		snprintf(what, sizeof(what), "file of %llu bytes in %.100s%s",
			 (unsigned long long)c->size, dir,
			 c->tmpfs ? " (-w fs=tmpfs)" : tmpdir ? " (TMPDIR)" : "");
		errno = fe;
		pf_fail(sh, what);
		close(fd);
		return;
	}
	size_t ps = (size_t)sysconf(_SC_PAGESIZE);
	uint64_t ops = 0;
	int64_t in_window = 0;	/* rounds begun after the window opened and ended */
	for (int64_t round = 1; !atomic_load_explicit(&sh->stop, memory_order_relaxed); round++) {
		/* a round counts toward --iters only if it began after the window
		 * opened: a task that warmed up early had done its rounds by then,
		 * and the window closed around a few pages (8 tasks x 1 round of
		 * 1 page measured 3) */
		const bool counts = atomic_load(&sh->t_open) != 0;
		char *p = mmap(NULL, c->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (p == MAP_FAILED) {
			pf_fail(sh, "mmap");
			break;
		}
		for (size_t o = 0; o < c->size; o += ps) {
			p[o] = 1;
			ops++;
			if ((ops & 63) == 0) {
				atomic_store_explicit(&sh->slot[t->id].ops, ops, memory_order_relaxed);
				if (atomic_load_explicit(&sh->stop, memory_order_relaxed))
					break;
			}
		}
		atomic_store(&sh->slot[t->id].ops, ops);
		munmap(p, c->size);
		if (round == 1 && atomic_fetch_add(&sh->warm, 1) + 1 == c->threads) {
			atomic_store(&sh->ops_open, pf_sum(sh, c->threads));
			atomic_store(&sh->t_open, native_now_ns());
		}
		if (counts && ++in_window == c->iters &&
		    atomic_fetch_add(&sh->measured, 1) + 1 == c->threads) {
			atomic_store(&sh->ops_close, pf_sum(sh, c->threads));
			atomic_store(&sh->t_close, native_now_ns());
			atomic_store(&sh->stop, 1);
		}
	}
	close(fd);
}

static void *pf_thread(void *arg)
{
	pf_task_body(arg);
	return NULL;
}

static int run_page_fault3(const struct native_run_cfg *c, const cpu_set_t *cpus,
			   struct native_run_result *r, char *err, size_t errlen)
{
	if (c->threads > PF_MAX_TASKS) {
		snprintf(err, errlen, "at most %d tasks", PF_MAX_TASKS);
		return -1;
	}
	struct pf_shared *sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
				    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct pf_task *tasks = calloc((size_t)c->threads, sizeof(*tasks));
	pthread_t *th = calloc((size_t)c->threads, sizeof(*th));
	pid_t *pids = calloc((size_t)c->threads, sizeof(*pids));
	if (sh == MAP_FAILED || !tasks || !th || !pids) {
		if (sh != MAP_FAILED)
			munmap(sh, sizeof(*sh));
		free(tasks);
		free(th);
		free(pids);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	/* over RLIMIT_FSIZE, ftruncate and fallocate fail with EFBIG rather
	 * than the signal killing the process (forked tasks inherit it) */
	struct sigaction ign = {.sa_handler = SIG_IGN}, old_xfsz;
	sigemptyset(&ign.sa_mask);
	sigaction(SIGXFSZ, &ign, &old_xfsz);
	uint64_t t0 = native_now_ns();
	int n = 0;
	struct watch w;
	watch_start(&w, c, &sh->stop);
	const pid_t parent = getpid();
	for (; n < c->threads; n++) {
		tasks[n] = (struct pf_task){c, sh, cpus, n, true};
		if (c->processes) {
			pid_t pid = fork();
			if (pid == 0) {
				/* a parent killed outright takes its tasks along */
				prctl(PR_SET_PDEATHSIG, SIGKILL);
				if (getppid() != parent)
					_exit(0);	/* it died before the prctl */
				pf_task_body(&tasks[n]);
				_exit(0);
			}
			if (pid < 0)
				break;
			pids[n] = pid;
		} else if (pthread_create(&th[n], NULL, pf_thread, &tasks[n])) {
			break;
		}
	}
	if (n < c->threads) {
		errno = EAGAIN;
		pf_fail(sh, c->processes ? "fork" : "pthread_create");
	}
	for (int i = 0; i < n; i++) {
		if (c->processes) {
			int st = 0;
			/* a task killed by a signal (SIGBUS: the file's page could
			 * not be backed) did not count its rounds: a run of zeros
			 * came out as a result */
			if (waitpid(pids[i], &st, 0) == pids[i] && WIFSIGNALED(st) &&
			    atomic_exchange(&sh->failed, 1) == 0) {
				sh->fail_errno = 0;	/* no errno text */
				snprintf(sh->fail_what, sizeof(sh->fail_what),
					 "process %d killed by signal %d (%s)", i, WTERMSIG(st),
					 strsignal(WTERMSIG(st)));
				atomic_store(&sh->stop, 1);
			}
		} else {
			pthread_join(th[i], NULL);
		}
	}
	sigaction(SIGXFSZ, &old_xfsz, NULL);
	uint64_t t_end = native_now_ns();
	r->real_ns = t_end - t0;
	r->stopped = watch_end(&w);
	int rc = 0;
	if (atomic_load(&sh->failed)) {
		if (sh->fail_errno)
			snprintf(err, errlen, "task %s: %s", sh->fail_what,
				 strerror(sh->fail_errno));
		else
			snprintf(err, errlen, "%s", sh->fail_what);
		rc = -1;
	} else {
		r->ops = pf_sum(sh, c->threads);
		uint64_t t_open = atomic_load(&sh->t_open), t_close = atomic_load(&sh->t_close);
		uint64_t ops_close = atomic_load(&sh->ops_close);
		if (r->stopped && !t_close) {
			/* stopped inside the window (or before it opened: none) */
			t_close = t_open ? t_end : 0;
			ops_close = t_open ? r->ops : 0;
		}
		r->window_ns = t_close - t_open;
		r->window_ops = ops_close - atomic_load(&sh->ops_open);
		long ft = atomic_load(&sh->fstype);
		const char *want = c->tmpfs ? "tmpfs" : "ext4";
		const char *got = ft == TMPFS_MAGIC_ ? "tmpfs" : ft == EXT4_MAGIC_ ? "ext4" : NULL;
		if (got && strcmp(want, got) == 0)
			snprintf(r->fs_note, sizeof(r->fs_note), "%s", got);
		else
			snprintf(r->fs_note, sizeof(r->fs_note), "%s (asked for %s)",
				 got ? got : "another filesystem", want);
	}
	munmap(sh, sizeof(*sh));
	free(tasks);
	free(th);
	free(pids);
	return rc;
}

int native_run(const struct native_run_cfg *cfg, struct native_run_result *r, bool *usage,
	       char *err, size_t errlen)
{
	memset(r, 0, sizeof(*r));
	*usage = false;
	cpu_set_t cpus, old;
	int n = allowed_cpus(cfg->cpus, &cpus, err, errlen, usage);
	if (n < 0)
		return -1;
	r->cpus = n;
	bool restore = sched_getaffinity(0, sizeof(old), &old) == 0;
	if (cfg->cpus && sched_setaffinity(0, sizeof(cpus), &cpus)) {
		snprintf(err, errlen, "--cpus %d: sched_setaffinity: %s", cfg->cpus, strerror(errno));
		return -1;
	}
	r->have_ipis = native_tlb_shootdowns(&r->tlb_ipis, r->ipi_note, sizeof(r->ipi_note)) == 0;
	uint64_t ipi0 = r->tlb_ipis;
	struct rusage u0, u1;
	int who = cfg->wl == NATIVE_PAGE_FAULT3 && cfg->processes ? RUSAGE_CHILDREN : RUSAGE_SELF;
	getrusage(who, &u0);
	int rc = cfg->wl == NATIVE_MMAP8 ? run_mmap8(cfg, r, err, errlen)
					 : run_page_fault3(cfg, &cpus, r, err, errlen);
	getrusage(who, &u1);
	if (r->have_ipis) {
		uint64_t ipi1;
		r->have_ipis = native_tlb_shootdowns(&ipi1, r->ipi_note, sizeof(r->ipi_note)) == 0;
		r->tlb_ipis = r->have_ipis && ipi1 >= ipi0 ? ipi1 - ipi0 : 0;
	}
	if (restore && cfg->cpus)
		sched_setaffinity(0, sizeof(old), &old);
	r->user_ns = tv_ns(u1.ru_utime) - tv_ns(u0.ru_utime);
	r->sys_ns = tv_ns(u1.ru_stime) - tv_ns(u0.ru_stime);
	r->minflt = (uint64_t)(u1.ru_minflt - u0.ru_minflt);
	r->majflt = (uint64_t)(u1.ru_majflt - u0.ru_majflt);
	r->nvcsw = (uint64_t)(u1.ru_nvcsw - u0.ru_nvcsw);
	r->nivcsw = (uint64_t)(u1.ru_nivcsw - u0.ru_nivcsw);
	return rc;
}
