/*
 * calibrate.c - microbenchmarks of the host, and the profile file they give.
 *
 * Every figure is timed in batches (CLOCK_MONOTONIC around a batch of
 * operations, divided by the batch size); a figure is the median of the
 * batches and their minimum; a parameter takes the minimum (see val()). Each measurement has a share of the
 * time budget and stops after its share once it has three batches. The
 * methods, and what each figure becomes in the profile, are in
 * docs/native.md and in the comment of each value in the written file.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <linux/futex.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cost/params.h"
#include "native/native.h"

#define MAX_BATCHES 31

struct ctx {
	struct native_calib *c;
	FILE *diag;
	uint64_t slice_ns;		/* time share of one measurement */
	bool pinned;			/* sched_setaffinity works */
	cpu_set_t allowed;		/* the CPUs the process may use */
	int ncpu;			/* how many: cpu[0..ncpu) */
	int cpu[65];
	int (*interrupted)(void *);	/* NULL, or asked between batches */
};

/* ---- samples ---- */

struct samples {
	double v[MAX_BATCHES];
	int n;
	uint64_t deadline;
	struct ctx *x;
};

static void samples_start(struct samples *s, struct ctx *x)
{
	s->n = 0;
	s->deadline = native_now_ns() + x->slice_ns;
	s->x = x;
}

/* stopped: interrupted now or before (then no more batches anywhere) */
static bool stopped(struct ctx *x)
{
	if (!x->c->stopped && x->interrupted)
		x->c->stopped = x->interrupted(NULL);
	return x->c->stopped != 0;
}

/* another batch? at least 3, at most MAX_BATCHES, within the time share;
 * none once interrupted */
static bool samples_more(const struct samples *s)
{
	if (stopped(s->x))
		return false;
	return s->n < 3 || (s->n < MAX_BATCHES && native_now_ns() < s->deadline);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static struct native_figure *fig_add(struct ctx *x, const char *name, const struct samples *s,
				     const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static struct native_figure *fig_add(struct ctx *x, const char *name, const struct samples *s,
				     const char *fmt, ...)
{
	struct native_calib *c = x->c;
	if (c->nfig >= NATIVE_MAX_FIGURES)
		return NULL;
	struct native_figure *f = &c->fig[c->nfig++];
	memset(f, 0, sizeof(*f));
	snprintf(f->name, sizeof(f->name), "%s", name);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(f->method, sizeof(f->method), fmt, ap);
	va_end(ap);
	if (s && s->n > 0) {
		double v[MAX_BATCHES];
		memcpy(v, s->v, (size_t)s->n * sizeof(double));
		qsort(v, (size_t)s->n, sizeof(double), cmp_double);
		f->min_ns = v[0];
		f->median_ns = s->n % 2 ? v[s->n / 2] : (v[s->n / 2 - 1] + v[s->n / 2]) / 2;
		f->samples = s->n;
		f->ok = true;
	}
	return f;
}

static const struct native_figure *fig_get(const struct native_calib *c, const char *name)
{
	for (int i = 0; i < c->nfig; i++)
		if (c->fig[i].ok && strcmp(c->fig[i].name, name) == 0)
			return &c->fig[i];
	return NULL;
}

/* The figure a parameter takes: the least-disturbed batch (the minimum of
 * the batch means). Each batch averages hundreds of operations, so its mean
 * is not an outlier; on a host shared with other work the median carries
 * the time other processes took (both are in the file). */
static double val(const struct native_figure *f)
{
	return f->min_ns;
}

/* resident pages of this process (/proc/self/statm), or -1 */
static long resident_pages(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	long size, res = -1;
	if (f) {
		if (fscanf(f, "%ld %ld", &size, &res) != 2)
			res = -1;
		fclose(f);
	}
	return res;
}

static void param_set(struct native_calib *c, int id, double v, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void param_set(struct native_calib *c, int id, double v, const char *fmt, ...)
{
	struct native_param *p = NULL;
	for (int i = 0; i < c->nparam; i++)
		if (c->param[i].param == id)
			p = &c->param[i];
	if (!p) {
		if (c->nparam >= NATIVE_MAX_FIGURES)
			return;
		p = &c->param[c->nparam++];
	}
	p->param = id;
	p->value = v < 0 || !isfinite(v) ? 0 : (int64_t)llround(v);
	p->measured = true;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(p->why, sizeof(p->why), fmt, ap);
	va_end(ap);
}

static int64_t base_value(const struct native_calib *c, int id);

/* the value written so far for a parameter, else the base profile's */
static double param_value(const struct native_calib *c, int id)
{
	for (int i = 0; i < c->nparam; i++)
		if (c->param[i].param == id)
			return (double)c->param[i].value;
	return (double)base_value(c, id);
}

/* the base profile's value of a parameter (x86-24 and the arm64 profiles set
 * no parameter of their own: the arch default) */
static int64_t base_value(const struct native_calib *c, int id)
{
	return c->host.x86 ? tlbsim_param_desc[id].x86_default : tlbsim_param_desc[id].arm64_default;
}

static void note(struct ctx *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void note(struct ctx *x, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(x->diag, "tlbsim: calibrate: ");
	vfprintf(x->diag, fmt, ap);
	fputc('\n', x->diag);
	va_end(ap);
}

static int pin_to(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

static void unpin(const struct ctx *x)
{
	sched_setaffinity(0, sizeof(x->allowed), &x->allowed);
}

/* keep the compiler from dropping stores it thinks nobody reads */
static inline void clobber(void *p)
{
	__asm__ volatile("" : : "r"(p) : "memory");
}

/* ---- 1. syscall entry and exit ---- */

static void m_syscall(struct ctx *x)
{
	struct samples s;
	enum { N = 2000 };
	samples_start(&s, x);
	while (samples_more(&s)) {
		uint64_t t0 = native_now_ns();
		for (int i = 0; i < N; i++)
			syscall(SYS_getppid);
		s.v[s.n++] = (double)(native_now_ns() - t0) / N;
	}
	fig_add(x, "syscall", &s, "syscall(SYS_getppid) in batches of %d: one system call entry "
		"and exit with a trivial body", N);
}

/* ---- 2. faults: read fault (zero page), write fault (new zeroed page) ---- */

static void m_faults(struct ctx *x)
{
	const struct native_host *h = &x->c->host;
	enum { PAGES = 1024 };
	size_t len = (size_t)PAGES * (size_t)h->page_size;
	for (int write = 0; write < 2; write++) {
		struct samples s;
		samples_start(&s, x);
		while (samples_more(&s)) {
			char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
				       -1, 0);
			if (p == MAP_FAILED) {
				note(x, "fault: mmap failed (%s); fault figures not measured",
				     strerror(errno));
				return;
			}
			madvise(p, len, MADV_NOHUGEPAGE);
			long rss0 = write || s.n ? -1 : resident_pages();
			uint64_t t0 = native_now_ns();
			if (write)
				for (size_t o = 0; o < len; o += (size_t)h->page_size)
					((volatile char *)p)[o] = 1;
			else
				for (size_t o = 0; o < len; o += (size_t)h->page_size)
					(void)((volatile char *)p)[o];
			s.v[s.n++] = (double)(native_now_ns() - t0) / PAGES;
			if (rss0 >= 0) {
				long rss1 = resident_pages();
				x->c->no_zero_page = rss1 >= 0 && rss1 - rss0 >= PAGES / 2;
			}
			munmap(p, len);
		}
		if (write)
			fig_add(x, "fault_write", &s, "first write of each page of a fresh %d-page "
				"private anonymous mapping (MADV_NOHUGEPAGE): fault entry, page "
				"allocation, zeroing, PTE set, return; per page", PAGES);
		else
			fig_add(x, "fault_read", &s, "first read of each page of a fresh %d-page "
				"private anonymous mapping (MADV_NOHUGEPAGE): %s; per page", PAGES,
				x->c->no_zero_page
				? "this kernel allocates a page per read fault (resident set grew: no "
				  "shared zero page, e.g. mm_forbids_zeropage), so allocation and "
				  "zeroing are in it"
				: "the kernel maps its shared zero page (resident set did not grow), "
				  "so no allocation and no zeroing - the minimal fault round trip");
	}
}

/* ---- 3. page zeroing ---- */

static void m_zero(struct ctx *x)
{
	const struct native_host *h = &x->c->host;
	size_t ps = (size_t)h->page_size;
	long llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
	size_t len = llc > 0 ? 2 * (size_t)llc : 64u << 20;
	if (len < (16u << 20))
		len = 16u << 20;
	if (len > (64u << 20))
		len = 64u << 20;	/* faulting it in costs time on a slow-fault VM */
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		note(x, "zero: mmap of %zu bytes failed (%s); not measured", len, strerror(errno));
		return;
	}
	void *(*volatile set)(void *, int, size_t) = memset;
	set(p, 1, len);		/* fault every page in first */
	enum { N = 256 };
	size_t npages = len / ps, next = 0;
	struct samples cold, warm;
	samples_start(&cold, x);
	cold.deadline -= x->slice_ns / 2;
	while (samples_more(&cold)) {
		uint64_t t0 = native_now_ns();
		for (int i = 0; i < N; i++) {
			set(p + next * ps, 0, ps);
			next = (next + 1) % npages;
		}
		clobber(p);
		cold.v[cold.n++] = (double)(native_now_ns() - t0) / N;
	}
	samples_start(&warm, x);
	warm.deadline -= x->slice_ns / 2;
	while (samples_more(&warm)) {
		uint64_t t0 = native_now_ns();
		for (int i = 0; i < N; i++) {
			set(p, 0, ps);
			clobber(p);
		}
		warm.v[warm.n++] = (double)(native_now_ns() - t0) / N;
	}
	munmap(p, len);
	fig_add(x, "zero_page", &cold, "memset(0) of one %zu-byte page (glibc: rep stosb on x86 "
		"with ERMS, DC ZVA on arm64, as the kernel's clear_page) walking a %zu MiB "
		"buffer page by page (twice the last-level cache of %ld KiB, 16..64 MiB: the "
		"lines are not in L1 or L2, and come from memory when the LLC is smaller than "
		"the buffer); per page", ps, len >> 20, llc > 0 ? llc >> 10 : -1L);
	fig_add(x, "zero_page_warm", &warm, "memset(0) of the same %zu-byte page over and over "
		"(cache-warm); per page", ps);
}

/* ---- 4. mmap and munmap of 16 MiB, shared and private anonymous ---- */

static void m_mmap(struct ctx *x)
{
	enum { N = 64 };
	size_t len = 16u << 20;
	for (int shared = 0; shared < 2; shared++) {
		struct samples sm, su;
		void *p[N];
		samples_start(&sm, x);
		sm.deadline -= x->slice_ns / 2;
		su = sm;
		while (samples_more(&sm)) {
			uint64_t t0 = native_now_ns();
			int k;
			for (k = 0; k < N; k++) {
				p[k] = mmap(NULL, len, PROT_READ | PROT_WRITE,
					    (shared ? MAP_SHARED : MAP_PRIVATE) | MAP_ANONYMOUS, -1, 0);
				if (p[k] == MAP_FAILED)
					break;
			}
			uint64_t t1 = native_now_ns();
			for (int i = 0; i < k; i++)
				munmap(p[i], len);
			uint64_t t2 = native_now_ns();
			if (k < N) {
				note(x, "mmap: mmap failed (%s); mmap figures not measured",
				     strerror(errno));
				return;
			}
			sm.v[sm.n++] = (double)(t1 - t0) / N;
			su.v[su.n++] = (double)(t2 - t1) / N;
		}
		const char *kind = shared ? "MAP_SHARED|MAP_ANONYMOUS (a shmem file each)"
					  : "MAP_PRIVATE|MAP_ANONYMOUS";
		fig_add(x, shared ? "mmap_shared" : "mmap_private", &sm, "mmap(NULL, 16 MiB, %s), "
			"untouched, %d in a row; per call", kind, N);
		fig_add(x, shared ? "munmap_shared" : "munmap_private", &su, "munmap of those "
			"untouched 16 MiB %s mappings, %d in a row; per call", kind, N);
	}
}

/* ---- 5. one-page flush: mprotect of a present page against an absent one ---- */

/* mprotect toggles of one page (RO, RW) in batches; per call */
static void toggle_batches(struct samples *s, char *page, int n)
{
	while (samples_more(s)) {
		uint64_t t0 = native_now_ns();
		for (int i = 0; i < n; i++) {
			mprotect(page, 1, PROT_READ);
			mprotect(page, 1, PROT_READ | PROT_WRITE);
		}
		s->v[s->n++] = (double)(native_now_ns() - t0) / (2.0 * n);
	}
}

static char *flush_area(struct ctx *x, size_t ps)
{
	/* two pages in one page table: the first present, the second never touched */
	char *p = mmap(NULL, 2 * ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		note(x, "flush: mmap failed (%s); not measured", strerror(errno));
		return NULL;
	}
	madvise(p, 2 * ps, MADV_NOHUGEPAGE);
	p[0] = 1;
	return p;
}

static void m_flush_local(struct ctx *x)
{
	size_t ps = (size_t)x->c->host.page_size;
	char *p = flush_area(x, ps);
	if (!p)
		return;
	enum { N = 500 };
	struct samples present, absent;
	uint64_t i0 = 0, i1 = 0;
	char why[160];
	bool ipis = native_tlb_shootdowns(&i0, why, sizeof(why)) == 0;
	samples_start(&present, x);
	present.deadline -= x->slice_ns / 2;
	toggle_batches(&present, p, N);
	ipis = ipis && native_tlb_shootdowns(&i1, why, sizeof(why)) == 0;
	samples_start(&absent, x);
	absent.deadline -= x->slice_ns / 2;
	toggle_batches(&absent, p + ps, N);
	munmap(p, 2 * ps);
	char ipitxt[96] = "";
	if (ipis)
		snprintf(ipitxt, sizeof(ipitxt), "; %.3f flush IPIs per call (system-wide)",
			 (double)(i1 - i0) / (2.0 * N * present.n));
	fig_add(x, "mprotect_present", &present, "mprotect of one present page, RO then RW, on "
		"a single-threaded mm%s: PTE change and a one-page local flush (%s); per call%s",
		x->pinned ? " pinned to one CPU" : "", x->c->host.x86 ? "INVLPG" : "TLBI VALE1IS",
		ipitxt);
	fig_add(x, "mprotect_absent", &absent, "the same on a never-touched page of the same "
		"page table: no PTE, so no flush; per call");
}

/* ---- 6. futex wake-to-run latency (CPU 0 -> CPU 1) and same-CPU switch ---- */

struct pingpong {
	_Atomic int a, b, stop;
	int cpu;
	bool pin;
};

static void futex_wait(_Atomic int *w, int val)
{
	syscall(SYS_futex, (int *)w, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
}

static void futex_wake(_Atomic int *w)
{
	syscall(SYS_futex, (int *)w, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static void *pong(void *arg)
{
	struct pingpong *pp = arg;
	if (pp->pin)
		pin_to(pp->cpu);
	for (;;) {
		while (atomic_load(&pp->b) == 0)
			futex_wait(&pp->b, 0);
		atomic_store(&pp->b, 0);
		if (atomic_load(&pp->stop))
			break;
		atomic_store(&pp->a, 1);
		futex_wake(&pp->a);
	}
	return NULL;
}

/* half a round trip of A wakes B, B wakes A; per half */
static int pingpong_run(struct ctx *x, struct samples *s, int cpu_a, int cpu_b, int n)
{
	struct pingpong pp = {.cpu = x->cpu[cpu_b], .pin = x->pinned};
	if (x->pinned)
		pin_to(x->cpu[cpu_a]);
	pthread_t t;
	if (pthread_create(&t, NULL, pong, &pp))
		return -1;
	while (samples_more(s)) {
		uint64_t t0 = native_now_ns();
		for (int i = 0; i < n; i++) {
			atomic_store(&pp.b, 1);
			futex_wake(&pp.b);
			while (atomic_load(&pp.a) == 0)
				futex_wait(&pp.a, 0);
			atomic_store(&pp.a, 0);
		}
		s->v[s->n++] = (double)(native_now_ns() - t0) / (2.0 * n);
	}
	atomic_store(&pp.stop, 1);
	atomic_store(&pp.b, 1);
	futex_wake(&pp.b);
	pthread_join(t, NULL);
	return 0;
}

static void m_futex(struct ctx *x)
{
	enum { N = 50 };
	struct samples cross, same;
	if (x->ncpu >= 2) {
		samples_start(&cross, x);
		cross.deadline -= x->slice_ns / 2;
		if (pingpong_run(x, &cross, 0, 1, N) == 0)
			fig_add(x, "futex_cross", &cross, "futex ping-pong between two threads %s "
				"CPUs %d and %d: each wakes the other (FUTEX_WAKE) and sleeps "
				"(FUTEX_WAIT) while the other CPU idles; half a round trip = wake "
				"syscall + wake-to-run latency of an idle CPU + return to user; %d "
				"round trips a batch", x->pinned ? "pinned to" : "not pinned, on",
				x->cpu[0], x->cpu[1], N);
	} else {
		note(x, "one CPU allowed: no cross-CPU wake-up to measure");
	}
	samples_start(&same, x);
	same.deadline -= x->slice_ns / 2;
	if (x->pinned && pingpong_run(x, &same, 0, 0, N) == 0)
		fig_add(x, "futex_same", &same, "the same ping-pong with both threads pinned to "
			"CPU %d: half a round trip = wake syscall + wait syscall + one context switch",
			x->cpu[0]);
	else if (!x->pinned)
		note(x, "sched_setaffinity refused: the same-CPU context switch is not measured");
	if (x->pinned)
		unpin(x);
}

/* ---- 7. shootdown: mprotect with threads of the mm spinning on other CPUs ---- */

struct spinner {
	_Atomic int *stop, *running;
	int cpu;
	bool pin;
};

static void *spin(void *arg)
{
	struct spinner *sp = arg;
	if (sp->pin)
		pin_to(sp->cpu);
	atomic_fetch_add(sp->running, 1);
	while (!atomic_load_explicit(sp->stop, memory_order_relaxed))
		;
	return NULL;
}

static void shootdown(struct ctx *x, int targets)
{
	size_t ps = (size_t)x->c->host.page_size;
	char *p = flush_area(x, ps);
	if (!p)
		return;
	if (x->pinned)
		pin_to(x->cpu[0]);
	_Atomic int stop = 0, running = 0;
	struct spinner sp[64];
	pthread_t th[64];
	int n = 0;
	for (; n < targets && n < 64; n++) {
		sp[n] = (struct spinner){&stop, &running, x->cpu[1 + n], x->pinned};
		if (pthread_create(&th[n], NULL, spin, &sp[n]))
			break;
	}
	uint64_t t_wait = native_now_ns() + 1000000000ull;
	while (atomic_load(&running) < n && native_now_ns() < t_wait)
		sched_yield();
	enum { N = 300 };
	struct samples s;
	uint64_t i0 = 0, i1 = 0;
	char why[160];
	bool ipis = native_tlb_shootdowns(&i0, why, sizeof(why)) == 0;
	samples_start(&s, x);
	toggle_batches(&s, p, N);
	ipis = ipis && native_tlb_shootdowns(&i1, why, sizeof(why)) == 0;
	atomic_store(&stop, 1);
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	munmap(p, 2 * ps);
	if (x->pinned)
		unpin(x);
	char ipitxt[200];
	if (ipis) {
		double per = (double)(i1 - i0) / (2.0 * N * s.n);
		snprintf(ipitxt, sizeof(ipitxt), "%.3f flush IPIs per call (system-wide)", per);
		if (per < 0.5 && n == 1) {
			x->c->no_flush_ipis = true;
			note(x, "%.3f TLB-shootdown IPIs per flush with a sibling thread spinning on "
			     "another CPU: this kernel flushes remote TLBs without IPIs here "
			     "(paravirtual hypercall or INVLPGB), so native's ipi_received counts "
			     "nothing", per);
		}
	} else
		snprintf(ipitxt, sizeof(ipitxt), "flush IPIs not counted: %s", why);
	char name[40];
	snprintf(name, sizeof(name), "mprotect_shootdown_%d", n);
	fig_add(x, name, &s, "mprotect of one present page, RO then RW, with %d other thread(s) "
		"of the mm spinning in user space%s, so every flush must reach them; %s; per call",
		n, x->pinned ? " pinned to CPUs of their own" : " (not pinned)", ipitxt);
}

static void m_shootdown(struct ctx *x)
{
	int ncpus = x->ncpu;
	if (ncpus < 2) {
		note(x, "one CPU allowed: no shootdown to measure");
		return;
	}
	shootdown(x, 1);
	if (ncpus - 1 >= 2)
		shootdown(x, ncpus - 1);
	else
		note(x, "%d CPUs: the N-target shootdown is the 1-target one (N = 1)", ncpus);
}

/* ---- the profile's values ---- */

static void derive(struct native_calib *c)
{
	const struct native_host *h = &c->host;
	const struct native_figure *f, *g;
	double sys = 0;
	if ((f = fig_get(c, "syscall"))) {
		sys = val(f);
		param_set(c, P_syscall_ns, sys, "getppid() round trip (min %.0f ns, median %.0f, %d "
			  "batches)%s", f->min_ns, f->median_ns, f->samples,
			  h->pti == 1 ? "; includes this host's KPTI trampoline" : "");
		if (h->x86)
			param_set(c, P_kpti, 0, "host meltdown mitigation %s; the entry cost is all in "
				  "syscall_ns, so kpti = 0 does not count the trampoline twice",
				  h->pti == 1 ? "PTI" : h->pti == 0 ? "not PTI" : "unknown");
	}
	if (h->x86 && h->pcid >= 0)
		param_set(c, P_pcid, h->pcid, "the pcid flag of /proc/cpuinfo is %s",
			  h->pcid ? "present" : "absent");
	long pages = sysconf(_SC_PHYS_PAGES);
	if (pages > 0)
		param_set(c, P_ram_mb, (double)pages * h->page_size / 1048576.0,
			  "sysconf(_SC_PHYS_PAGES) x page size");
	double zero = -1;
	if ((f = fig_get(c, "zero_page"))) {
		zero = val(f);
		param_set(c, P_zero_4k_ns, zero * 4096.0 / h->page_size, "memset(0) of a %d-byte "
			  "page from memory (min %.0f ns, median %.0f), per 4 KiB", h->page_size,
			  f->min_ns, f->median_ns);
	}
	if ((f = fig_get(c, "zero_page_warm")))
		param_set(c, P_zero_warm_4k_ns, val(f) * 4096.0 / h->page_size, "memset(0) of "
			  "one %d-byte page over and over, in cache (min %.0f ns, median %.0f), "
			  "per 4 KiB", h->page_size, f->min_ns, f->median_ns);
	double rd = -1;
	if ((f = fig_get(c, "fault_read")) && !c->no_zero_page) {
		rd = val(f);
		double lock = (double)base_value(c, P_lock_op_ns);
		param_set(c, P_fault_ns, rd - lock, "read fault of an untouched private anonymous "
			  "page, which maps the zero page (min %.0f ns, median %.0f), minus "
			  "lock_op_ns (%.0f, the PTE lock the model charges apart)", f->min_ns,
			  f->median_ns, lock);
		if ((g = fig_get(c, "fault_write")) && zero > 0 && val(g) - rd - zero > 0)
			param_set(c, P_page_alloc_ns, val(g) - rd - zero, "write fault (min %.0f ns) "
				  "- read fault (%.0f) - zeroing (%.0f): allocation, memcg charge and "
				  "LRU add of the new page", val(g), rd, zero);
	} else if ((f = fig_get(c, "fault_write")) && zero > 0) {
		/* no zero page: every first touch allocates and zeroes */
		double lock = (double)base_value(c, P_lock_op_ns),
		       alloc = (double)base_value(c, P_page_alloc_ns);
		double fl = val(f) - zero - alloc - lock;
		if (fl > 0)
			param_set(c, P_fault_ns, fl, "write fault of an untouched private anonymous "
				  "page (min %.0f ns, median %.0f) - zeroing (%.0f) - page_alloc_ns "
				  "(%.0f, kept) - lock_op_ns (%.0f): this kernel has no shared zero page, "
				  "so no fault without an allocation can be timed", f->min_ns,
				  f->median_ns, zero, alloc, lock);
	}
	if ((f = fig_get(c, "mmap_private")) && sys > 0) {
		double lock = (double)base_value(c, P_lock_op_ns);
		double ua = (double)base_value(c, P_unmapped_area_ns), vo = (double)base_value(c,
			P_vma_op_ns);
		double rest = val(f) - sys - 2 * lock;
		if (rest > 0) {
			double k = rest / (ua + vo);
			param_set(c, P_unmapped_area_ns, ua * k, "mmap of 16 MiB private anonymous "
				  "(min %.0f ns) - syscall_ns - 2 x lock_op_ns, split between "
				  "get_unmapped_area and the VMA work in the base ratio %.0f:%.0f",
				  val(f), ua, vo);
			param_set(c, P_vma_op_ns, vo * k, "mmap of 16 MiB private anonymous (min %.0f "
				  "ns) - syscall_ns - 2 x lock_op_ns, split between get_unmapped_area "
				  "and the VMA work in the base ratio %.0f:%.0f", val(f), ua, vo);
		}
	}
	/* the shmem file of a shared anonymous mapping: what a shared mmap and
	 * munmap take beyond the private ones (untouched: no pages to free) */
	if ((f = fig_get(c, "mmap_shared")) && (g = fig_get(c, "mmap_private")) &&
	    val(f) - val(g) > 0)
		param_set(c, P_shmem_setup_ns, val(f) - val(g), "mmap of 16 MiB shared anonymous "
			  "(min %.0f ns) - private anonymous (min %.0f): shmem_zero_setup",
			  val(f), val(g));
	if ((f = fig_get(c, "munmap_shared")) && (g = fig_get(c, "munmap_private")) &&
	    val(f) - val(g) > 0)
		param_set(c, P_shmem_evict_ns, val(f) - val(g), "munmap of an untouched 16 MiB "
			  "shared anonymous mapping (min %.0f ns) - private (min %.0f): the final "
			  "fput's __fput and shmem_evict_inode", val(f), val(g));
	if ((f = fig_get(c, "futex_same")) && sys > 0 && val(f) - 2 * sys > 0)
		param_set(c, P_ctx_switch_ns, val(f) - 2 * sys, "same-CPU futex ping-pong: "
			  "half a round trip (min %.0f ns) - 2 x syscall_ns", val(f));
	if ((f = fig_get(c, "futex_cross")) && sys > 0 && val(f) - sys > 0) {
		/* the model's wake-to-run on an idle CPU: the waker's
		 * wake_per_task_ns, then wakeup_ns, idle_exit_ns and schedule()
		 * in (half of ctx_switch_ns) */
		double lat = val(f) - sys, idle = (double)base_value(c, P_idle_exit_ns);
		double kept = (double)base_value(c, P_wake_per_task_ns) + param_value(c, P_ctx_switch_ns) / 2;
		if (lat > idle + kept)
			param_set(c, P_wakeup_ns, lat - idle - kept, "cross-CPU futex ping-pong: half "
				  "a round trip (min %.0f ns) - syscall_ns = wake-to-run latency %.0f "
				  "ns, minus idle_exit_ns (%.0f, kept) which the model adds for an idle "
				  "CPU, and the waker's wake_per_task_ns and schedule() in "
				  "(ctx_switch_ns / 2) together %.0f", val(f), lat, idle, kept);
		else if (lat > kept) {
			param_set(c, P_wakeup_ns, lat - kept, "cross-CPU futex "
				  "ping-pong: half a round trip (min %.0f ns) - syscall_ns - the waker's "
				  "wake_per_task_ns and schedule() in (%.0f); shorter than the base idle "
				  "exit, so all of the rest is here and idle_exit_ns is 0", val(f), kept);
			param_set(c, P_idle_exit_ns, 0, "folded into wakeup_ns (see there)");
		} else {
			/* shorter than the model's own waker and schedule() terms: a
			 * zero would say the host wakes for free, so the measured
			 * latency stands whole (the model then overstates it by kept) */
			param_set(c, P_wakeup_ns, lat, "cross-CPU futex ping-pong: half a round "
				  "trip (min %.0f ns) - syscall_ns = %.0f ns, shorter than the model's "
				  "wake_per_task_ns + schedule() in (%.0f): taken whole, the model "
				  "overstates this host's wake-to-run by those", val(f), lat, kept);
			param_set(c, P_idle_exit_ns, 0, "folded into wakeup_ns (see there)");
		}
	}
	double local = -1;
	if ((f = fig_get(c, "mprotect_present")) && (g = fig_get(c, "mprotect_absent"))) {
		local = val(f) - val(g);
		if (local <= 0)
			local = -1;
		else if (h->x86)
			param_set(c, P_invlpg_ns, local, "mprotect of a present page (min %.0f ns) - "
				  "of an absent one (min %.0f) on a single-threaded mm: the one-page "
				  "local flush with its PTE rewrite", val(f), val(g));
		else
			param_set(c, P_tlbi_op_ns, local, "mprotect of a present page (min %.0f ns) - "
				  "of an absent one (min %.0f) on a single-threaded mm: one broadcast "
				  "TLBI VALE1IS with its DSB and PTE rewrite", val(f), val(g));
	}
	if (h->x86 && local > 0 && (f = fig_get(c, "mprotect_shootdown_1")) &&
	    (g = fig_get(c, "mprotect_present"))) {
		/* medians: the least-disturbed batch of the shootdown may be one in
		 * which the sibling was descheduled and no remote flush was needed */
		double d = f->median_ns - g->median_ns;
		double send = (double)base_value(c, P_ipi_send_ns),
		       hand = (double)base_value(c, P_ipi_handler_ns);
		double lat = d - send - hand - local;
		param_set(c, P_ipi_latency_ns, lat > 0 ? lat : 0, "mprotect with one spinning "
			  "sibling (median %.0f ns) - alone (median %.0f) = %.0f ns, the initiator's "
			  "wait for one target: ipi_send_ns (%.0f) + ipi_latency_ns + ipi_handler_ns "
			  "(%.0f) + invlpg_ns (%.0f); solved for ipi_latency_ns (medians: in the "
			  "least-disturbed batch the sibling may have been off its CPU)%s%s",
			  f->median_ns, g->median_ns,
			  d, send, hand, local, lat > 0 ? "" : " (negative: 0)",
			  c->no_flush_ipis ? "; this kernel sent no flush IPIs (the remote flush "
			  "went another way: a paravirtual hypercall or a broadcast INVLPGB), so "
			  "this is the cost of that mechanism in the model's IPI terms" : "");
	}
	for (int i = 0; i < c->nfig; i++) {
		int n;
		if (!h->x86 || sscanf(c->fig[i].name, "mprotect_shootdown_%d", &n) != 1 || n < 2)
			continue;
		if (!(f = fig_get(c, "mprotect_shootdown_1")))
			continue;
		double per = (c->fig[i].median_ns - f->median_ns) / (n - 1);
		if (per > 0)
			param_set(c, P_ipi_send_ns, per, "mprotect with %d spinning siblings (median "
				  "%.0f ns) - with one (median %.0f), per extra target", n,
				  c->fig[i].median_ns, f->median_ns);
	}
}

int native_calibrate(struct native_calib *c, unsigned budget_ms, int (*interrupted)(void *),
		     FILE *diag, char *err, size_t errlen)
{
	memset(c, 0, sizeof(*c));
	native_host_probe(&c->host);
	const struct native_host *h = &c->host;
	if (!h->x86) {
#if !defined(__aarch64__)
		snprintf(err, errlen, "calibrate runs on x86-64 and arm64 hosts only");
		return -1;
#endif
	}
	c->base_profile = h->x86 ? "x86-24"
			: h->page_size == 4096 ? "arm64-4k"
			: h->page_size == 16384 ? "arm64-16k" : "falkor-46";
	if (h->x86 && h->page_size != 4096) {
		snprintf(err, errlen, "x86-64 host with %d-byte pages: the model has 4096 only",
			 h->page_size);
		return -1;
	}
	struct ctx x = {.c = c, .diag = diag, .interrupted = interrupted};
	/* 9 measurements of about equal share (the mmap, fault, zero and
	 * futex ones have two halves) */
	x.slice_ns = (uint64_t)budget_ms * 1000000ull / 10;
	uint64_t t0 = native_now_ns();
	if (sched_getaffinity(0, sizeof(x.allowed), &x.allowed)) {
		CPU_ZERO(&x.allowed);
		for (int i = 0; i < h->ncpus && i < CPU_SETSIZE; i++)
			CPU_SET(i, &x.allowed);
	}
	for (int i = 0; i < CPU_SETSIZE && x.ncpu < 65; i++)
		if (CPU_ISSET(i, &x.allowed))
			x.cpu[x.ncpu++] = i;
	if (x.ncpu < h->ncpus)
		note(&x, "the process may use %d of the %d online CPUs%s", CPU_COUNT(&x.allowed),
		     h->ncpus, x.ncpu == 65 ? " (64 of them as shootdown targets)" : "");
	x.pinned = pin_to(x.cpu[0]) == 0;
	if (!x.pinned)
		note(&x, "sched_setaffinity: %s; measuring without pinning threads to "
		     "CPUs (cross-CPU figures may then be same-CPU ones)", strerror(errno));
	double load;
	FILE *lf = fopen("/proc/loadavg", "r");
	if (lf) {
		if (fscanf(lf, "%lf", &load) == 1 && load > 0.5 * h->ncpus)
			note(&x, "load average %.2f on %d CPUs: other work is running, and the figures "
			     "will carry some of it", load, h->ncpus);
		fclose(lf);
	}
	uint64_t dummy;
	char why[160];
	if (native_tlb_shootdowns(&dummy, why, sizeof(why)))
		note(&x, "flush IPIs not counted: %s", why);
	/* each measurement only when none was interrupted */
	void (*const step[])(struct ctx *) = {
		m_syscall, m_faults, m_zero, m_mmap,
		m_flush_local,	/* before any thread exists: a single-threaded mm */
		m_futex, m_shootdown,
	};
	for (size_t i = 0; i < sizeof(step) / sizeof(step[0]) && !stopped(&x); i++)
		step[i](&x);
	unpin(&x);
	if (c->stopped)
		return 0;
	c->elapsed_ns = native_now_ns() - t0;
	derive(c);
	return 0;
}

/* ---- output ---- */

static const char *today(char *buf, size_t len)
{
	time_t t = time(NULL);
	struct tm tm;
	if (!gmtime_r(&t, &tm) || !strftime(buf, len, "%Y-%m-%d", &tm))
		snprintf(buf, len, "unknown date");
	return buf;
}

void native_write_profile(FILE *f, const struct native_calib *c, const char *name)
{
	const struct native_host *h = &c->host;
	char date[32];
	fprintf(f, "# tlbsim machine profile of this host, written by tlbsim calibrate on %s\n"
		   "# (load with --profile FILE; methods and limits: docs/native.md).\n"
		   "# Figures are host nanoseconds per operation, timed in batches; a value takes\n"
		   "# the least-disturbed batch (min), the median is shown beside it. A virtual\n"
		   "# machine with few CPUs shared with other work gives noisy figures.\n"
		   "# Base profile (every value not measured): %s.\n#\n# measured figures:\n",
		today(date, sizeof(date)), c->base_profile);
	for (int i = 0; i < c->nfig; i++) {
		const struct native_figure *g = &c->fig[i];
		if (g->ok)
			fprintf(f, "#   %-22s median %9.1f ns  min %9.1f ns  (%d batches): %s\n",
				g->name, g->median_ns, g->min_ns, g->samples, g->method);
	}
	fprintf(f, "#   (the calibration took %.2f s)\n#\n", (double)c->elapsed_ns / 1e9);
	fprintf(f, "name = %s\n", name);
	fprintf(f, "description = this host: %s, %d CPUs, Linux %s%s, measured by tlbsim "
		   "calibrate on %s\n", h->model, h->ncpus, h->release,
		h->hypervisor ? " (virtual machine)" : "", date);
	fprintf(f, "arch = %s\n", h->x86 ? "x86-64" : "arm64");
	fprintf(f, "page_size = %d\n", h->page_size);
	fprintf(f, "cpus = %d\n", h->ncpus);
	fprintf(f, "# cost parameters: value, then unit and where it comes from\n");
	for (int i = 0; i < P_COUNT; i++) {
		const struct native_param *p = NULL;
		for (int j = 0; j < c->nparam; j++)
			if (c->param[j].param == i)
				p = &c->param[j];
		char line[900];
		if (p)
			snprintf(line, sizeof(line), "%s = %" PRId64 "  # %s; measured on this host: %s",
				 tlbsim_param_desc[i].name, p->value, tlbsim_param_desc[i].unit, p->why);
		else
			snprintf(line, sizeof(line), "%s = %" PRId64 "  # %s; not measured on the "
				 "host: the value of profile %s (%s)", tlbsim_param_desc[i].name,
				 base_value(c, i), tlbsim_param_desc[i].unit, c->base_profile,
				 tlbsim_param_desc[i].source);
		fprintf(f, "%s\n", line);
	}
}

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch < 0x20 || ch == 0x7f)
			fprintf(f, "\\u%04x", ch);
		else
			fputc(ch, f);
	}
	fputc('"', f);
}

void native_write_calib_json(FILE *f, const struct native_calib *c)
{
	const struct native_host *h = &c->host;
	fprintf(f, "{\"tool\":\"tlbsim\",\"version\":\"%s\",\"host\":{\"arch\":\"%s\","
		   "\"page_size\":%d,\"cpus\":%d,\"kernel\":", TLBSIM_VERSION,
		h->x86 ? "x86_64" : "arm64", h->page_size, h->ncpus);
	json_str(f, h->release);
	fprintf(f, ",\"model\":");
	json_str(f, h->model);
	fprintf(f, ",\"virtual\":%s},\"base_profile\":", h->hypervisor ? "true" : "false");
	json_str(f, c->base_profile);
	fprintf(f, ",\"elapsed_ns\":%" PRIu64 ",\"figures\":[", c->elapsed_ns);
	const char *sep = "";
	for (int i = 0; i < c->nfig; i++) {
		const struct native_figure *g = &c->fig[i];
		if (!g->ok)
			continue;
		fprintf(f, "%s{\"name\":", sep);
		json_str(f, g->name);
		fprintf(f, ",\"median_ns\":%.1f,\"min_ns\":%.1f,\"batches\":%d,\"method\":",
			g->median_ns, g->min_ns, g->samples);
		json_str(f, g->method);
		fputc('}', f);
		sep = ",";
	}
	fprintf(f, "],\"params\":[");
	for (int i = 0; i < c->nparam; i++) {
		const struct native_param *p = &c->param[i];
		fprintf(f, "%s{\"name\":", i ? "," : "");
		json_str(f, tlbsim_param_desc[p->param].name);
		fprintf(f, ",\"value\":%" PRId64 ",\"base\":%" PRId64 ",\"method\":", p->value,
			base_value(c, p->param));
		json_str(f, p->why);
		fputc('}', f);
	}
	fprintf(f, "]}\n");
}
