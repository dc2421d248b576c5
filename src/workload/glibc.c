/*
 * glibc.c - the parts of glibc's NPTL that touch the address space.
 *
 * pthread_create: take a cached stack or mmap a new 8 MiB one (RLIMIT_STACK
 * default) and clone (nptl/allocatestack.c). The new thread runs on the next
 * CPU in round-robin order (docs/design.md: placement).
 * Thread exit (nptl/pthread_create.c start_thread -> advise_stack_range):
 * madvise(MADV_DONTNEED) of the unused part of the stack below the current
 * stack pointer, keeping PTHREAD_STACK_MIN (16 KiB), then the stack goes back
 * to the cache. That madvise is the concurrent gather in the 000 race.
 */
#include "mm/points.h"
#include "workload/workload.h"

#define GLIBC_STACK_SIZE (8ull << 20)
#define PTHREAD_STACK_MIN_BYTES (16ull << 10)
#define STACK_CACHE_MAX 64

/* per-process state: the stack cache (nptl's stack_cache) */
struct glibc_proc {
	uint64_t lo[STACK_CACHE_MAX], hi[STACK_CACHE_MAX];
	int n;
	int next_cpu;
	uint64_t image, image_pages;	/* glibc_image_map; 0: none */
	/* malloc's mp_: the dynamic mmap and trim thresholds (process-wide) */
	uint64_t mmap_threshold, trim_threshold;
};

/* glibc malloc constants (malloc/malloc.c, arena.c) */
#define GLIBC_MMAP_THRESHOLD (128u << 10)		/* DEFAULT_MMAP_THRESHOLD_MIN */
#define GLIBC_MMAP_THRESHOLD_MAX (32ull << 20)		/* DEFAULT_MMAP_THRESHOLD_MAX, 64-bit */
#define GLIBC_TRIM_THRESHOLD (128u << 10)		/* DEFAULT_TRIM_THRESHOLD */
#define GLIBC_TOP_PAD (128u << 10)			/* M_TOP_PAD's documented default */
#define GLIBC_HEAP_MAX (64ull << 20)			/* HEAP_MAX_SIZE, 64-bit */
#define GLIBC_CHUNK_HDR 16u				/* SIZE_SZ x 2 */

static void start_thread(struct sim *s, struct sim_thread *t)
{
	struct uthread *u = uthread_of(t);
	uint64_t ps = hw_of(s)->geom.page_size;
	/* the thread's first frames live at the top of its stack */
	user_access(s, u->stack_hi - 64, true);
	u->user_fn(s, t);
	/* advise_stack_range(): sp is one page below the top */
	uint64_t sp = u->stack_hi - ps;
	uint64_t freesize = (sp - u->stack_lo) & ~(ps - 1);
	if (freesize > PTHREAD_STACK_MIN_BYTES)
		sys_madvise_dontneed(s, u->stack_lo, freesize - PTHREAD_STACK_MIN_BYTES);
	struct glibc_proc *g = u->proc;
	if (g->n < STACK_CACHE_MAX) {
		g->lo[g->n] = u->stack_lo;
		g->hi[g->n] = u->stack_hi;
		g->n++;
	} else {
		sys_munmap(s, u->stack_lo, u->stack_hi - u->stack_lo);
	}
	u->task.mm->thread_users--;	/* do_exit -> exit_mm -> mmput */
}

static struct sim_thread *pthread_create_at(struct sim *s, thread_fn fn, void *arg, int cpu)
{
	struct uthread *self = uthread_of(sim_current(s));
	struct glibc_proc *g = self->proc;
	uint64_t lo, hi;
	if (g->n > 0) {
		g->n--;
		lo = g->lo[g->n];
		hi = g->hi[g->n];
	} else {
		lo = sys_mmap(s, 0, GLIBC_STACK_SIZE, TLBSIM_MAP_PRIVATE);
		if (lo == TLBSIM_EINVAL_VA) {
			sim_fail(s, TLBSIM_EINVAL, "cannot map a thread stack");
			return NULL;
		}
		hi = lo + GLIBC_STACK_SIZE;
	}
	sim_set_mode(s, MODE_SYS);
	sim_step(s, YP_THREAD, (uint64_t)P(s, P_thread_create_ns));
	sim_set_mode(s, MODE_USER);
	if (cpu < 0) {
		g->next_cpu = (g->next_cpu + 1) % s->nr_cpus;
		cpu = g->next_cpu;
	}
	struct task *tk = task_create(s, sizeof(struct uthread), start_thread, arg, self->task.mm,
				      cpu, 0);
	if (!tk)
		return NULL;
	/* filled before the new thread can run: nothing yields in between */
	struct uthread *u = container_of(tk, struct uthread, task);
	self->task.mm->thread_users++;	/* copy_mm(CLONE_VM): mmget */
	u->user_fn = fn;
	u->stack_lo = lo;
	u->stack_hi = hi;
	u->proc = g;
	return &tk->thread;
}

struct sim_thread *glibc_pthread_create(struct sim *s, thread_fn fn, void *arg)
{
	return pthread_create_at(s, fn, arg, -1);
}

struct sim_thread *glibc_pthread_create_on(struct sim *s, thread_fn fn, void *arg, int cpu)
{
	return pthread_create_at(s, fn, arg, cpu % s->nr_cpus);
}

/* a forked child: runs fn(arg) in its own address space, then exits */
static void child_start(struct sim *s, struct sim_thread *t)
{
	uthread_of(t)->user_fn(s, t);
}

/*
 * fork() with the child pinned to cpu (sched_setaffinity before fork, as the
 * will-it-scale harness does): the child is a new process with an mm of its
 * own. Unlike sys_fork (kernel/fork.c dup_mmap in src/mm/fork.c), this
 * path does not copy the parent's address space: the children here map
 * everything they touch themselves.
 */
struct sim_thread *glibc_fork_on(struct sim *s, thread_fn fn, void *arg, int cpu)
{
	struct glibc_proc *g = kernel_obj_alloc(s, sizeof(*g));
	sim_set_mode(s, MODE_SYS);
	sim_step(s, YP_THREAD, (uint64_t)P(s, P_thread_create_ns));
	struct mm_struct *mm = g ? mm_alloc(s) : NULL;
	sim_set_mode(s, MODE_USER);
	if (!mm)
		return NULL;
	struct task *tk = task_create(s, sizeof(struct uthread), child_start, arg, mm,
				      cpu % s->nr_cpus, 0);
	if (!tk)
		return NULL;
	struct uthread *u = container_of(tk, struct uthread, task);
	u->user_fn = fn;
	u->proc = g;
	return &tk->thread;
}

/*
 * The process's image: a private mapping standing for the program's and
 * libc's text and data, which every thread of the process reads as part of
 * its user working set. Mapped once, by the current thread, before the
 * threads that use it start.
 */
int glibc_image_map(struct sim *s, uint64_t pages)
{
	struct glibc_proc *g = uthread_of(sim_current(s))->proc;
	uint64_t ps = hw_of(s)->geom.page_size;
	if (!pages || g->image)
		return 0;
	uint64_t a = sys_mmap(s, 0, pages * ps, TLBSIM_MAP_PRIVATE);
	if (a == TLBSIM_EINVAL_VA) {
		sim_fail(s, TLBSIM_EINVAL, "cannot map the process image");
		return TLBSIM_EINVAL;
	}
	g->image = a;
	g->image_pages = pages;
	return 0;
}

/*
 * One iteration's user working set: the code and data a user loop touches
 * besides the memory it works on - `pages` pages in all: the thread's stack
 * top (written) and pages - 1 pages of the image (read: instruction fetches
 * and libc data; the model has no separate iTLB, so a fetch is a read
 * through the same TLB). Between flushes these hit the TLB at
 * user_access_ns each; after a flush that removed them (a whole-ASID
 * flush, an ASID rollover) each one costs a page walk again.
 */
void glibc_user_work(struct sim *s, uint64_t pages)
{
	if (!pages)
		return;
	struct uthread *u = uthread_of(sim_current(s));
	struct glibc_proc *g = u->proc;
	uint64_t ps = hw_of(s)->geom.page_size;
	/* page i % image_pages, the index kept by a wrapping counter; the
	 * reads in stretches of up to 16 pages, each one user-mode step */
	uint64_t va[16];
	int n = 0;
	for (uint64_t i = 0, pg = 0; i + 1 < pages && g->image; i++) {
		va[n++] = g->image + pg * ps;
		if (n == 16) {
			user_access_many(s, va, n, false);
			n = 0;
		}
		if (++pg == g->image_pages)
			pg = 0;
	}
	if (n)
		user_access_many(s, va, n, false);
	if (u->stack_hi)
		user_access(s, u->stack_hi - 64, true);
}

struct glibc_proc *glibc_proc_alloc(struct sim *s)
{
	return kernel_obj_alloc(s, sizeof(struct glibc_proc));
}

static struct glibc_proc *proc_of_current(struct sim *s)
{
	struct glibc_proc *g = uthread_of(sim_current(s))->proc;
	if (!g->mmap_threshold) {
		g->mmap_threshold = GLIBC_MMAP_THRESHOLD;
		g->trim_threshold = GLIBC_TRIM_THRESHOLD;
	}
	return g;
}

struct glibc_alloc glibc_malloc(struct sim *s, struct glibc_arena *a, uint64_t n)
{
	struct glibc_proc *g = proc_of_current(s);
	uint64_t ps = hw_of(s)->geom.page_size;
	struct glibc_alloc c = {.p = TLBSIM_EINVAL_VA};
	uint64_t chunk = (n + GLIBC_CHUNK_HDR + 15) & ~15ull;
	if (chunk >= g->mmap_threshold || chunk > GLIBC_HEAP_MAX / 2) {
		/* sysmalloc -> mmap of the page-rounded chunk */
		c.size = (chunk + ps - 1) & ~(ps - 1);
		uint64_t m = sys_mmap(s, 0, c.size, TLBSIM_MAP_PRIVATE);
		if (m == TLBSIM_EINVAL_VA)
			return c;
		c.p = m + GLIBC_CHUNK_HDR;
		c.mmapped = true;
		c.fresh = m;
		return c;
	}
	if (!a->heap) {
		/* new_heap: reserve HEAP_MAX_SIZE (its pages fault in as used) */
		a->heap = sys_mmap(s, 0, GLIBC_HEAP_MAX, TLBSIM_MAP_PRIVATE);
		if (a->heap == TLBSIM_EINVAL_VA) {
			a->heap = 0;
			return c;
		}
	}
	c.p = a->heap + a->top + GLIBC_CHUNK_HDR;
	c.size = chunk;
	c.fresh = a->heap + a->touched;
	a->top += chunk;
	if (a->top > a->touched)
		a->touched = (a->top + ps - 1) & ~(ps - 1);
	return c;
}

void glibc_free(struct sim *s, struct glibc_arena *a, const struct glibc_alloc *c)
{
	struct glibc_proc *g = proc_of_current(s);
	uint64_t ps = hw_of(s)->geom.page_size;
	if (c->mmapped) {
		/* munmap_chunk; the dynamic threshold (free of a larger mmapped chunk) */
		sys_munmap(s, c->p - GLIBC_CHUNK_HDR, c->size);
		if (c->size > g->mmap_threshold && c->size <= GLIBC_MMAP_THRESHOLD_MAX) {
			g->mmap_threshold = c->size;
			g->trim_threshold = 2 * c->size;
		}
		return;
	}
	/* the chunk merges into top; heap_trim */
	a->top -= c->size;
	uint64_t top_size = a->touched - a->top;
	if (top_size < g->trim_threshold || top_size <= GLIBC_TOP_PAD + 32)
		return;
	uint64_t extra = (top_size - GLIBC_TOP_PAD - 32) & ~(ps - 1);
	if (!extra)
		return;
	sys_madvise_dontneed(s, a->heap + a->touched - extra, extra);
	a->touched -= extra;
}

void glibc_pthread_join(struct sim *s, struct sim_thread *t)
{
	sim_join(s, t);
}

int workload_start(struct sim *s, const struct workload_ops *w, void *state)
{
	struct glibc_proc *g = kernel_obj_alloc(s, sizeof(*g));
	struct mm_struct *mm = g ? mm_alloc(s) : NULL;
	if (!mm)
		return s->error ? s->error : TLBSIM_ENOMEM;
	struct task *tk = task_create(s, sizeof(struct uthread), w->main, state, mm, 0, 0);
	if (!tk)
		return s->error ? s->error : TLBSIM_ENOMEM;
	container_of(tk, struct uthread, task)->proc = g;
	return 0;
}
