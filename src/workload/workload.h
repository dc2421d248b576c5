/*
 * workload.h - built-in workloads written as C functions against the
 * simulated-syscall API (sys_mmap, sys_munmap, sys_madvise_*, user_access)
 * plus a small model of glibc's pthread_create / thread exit.
 *
 * A workload is a process: workload_start() gives it an mm and runs its main
 * function as the main thread on CPU 0. Its state is a kernel object (freed
 * with the simulation, however the run ends).
 */
#ifndef TLBSIM_WORKLOAD_H
#define TLBSIM_WORKLOAD_H

#include "mm/mm.h"

struct workload_ops {
	const struct tlbsim_workload_desc *desc;
	/* Validate the resolved parameters and build the state (with
	 * kernel_obj_alloc). 0, or TLBSIM_EINVAL / TLBSIM_ENOMEM + err. */
	int (*setup)(struct sim *s, const struct tlbsim_resolved *r, void **state, char *err,
		     size_t errlen);
	thread_fn main;		/* the main thread; its arg is the state */
	/* Host memory the workload's own mappings need at most at once
	 * (simulated frames and page tables), from the resolved parameters;
	 * 0 when a parameter is malformed (setup reports it). */
	uint64_t (*estimate)(const struct tlbsim_resolved *r, int page_shift);
	/* The ops (metrics.ops) a whole run counts, for the progress bar of a
	 * single run; NULL: threads x iters (timed workloads: x (iters + 1),
	 * the warm-up round included). 0: unknown. */
	uint64_t (*expected_ops)(const struct tlbsim_resolved *r, int page_shift);
};

/* Host bytes to hold `pages` simulated pages mapped contiguously: a frame
 * descriptor each plus their page tables (page_shift: the granule). */
uint64_t estimate_mapped_bytes(uint64_t pages, int page_shift);

const struct workload_ops *workload_find(const char *name);
/* A workload defined at run time (a scenario file, src/scenario/): what a
 * tlbsim_config's workload_def points to is the desc of one of these. */
struct workload_def {
	struct tlbsim_workload_desc desc;
	struct workload_ops ops;
};
/* cfg's workload: its workload_def's, else the built-in of that name (NULL:
 * none) */
const struct workload_ops *workload_for(const struct tlbsim_config *cfg);
int workload_count(void);
const struct workload_ops *workload_get(int i);

/* Create the workload's process and its main thread. 0 or an enum tlbsim_err
 * (message in s->errmsg). */
int workload_start(struct sim *s, const struct workload_ops *w, void *state);

/* Value of workload parameter name in r (always present after resolve). */
const char *wparam(const struct tlbsim_resolved *r, const char *name);
/* Parse "16M", "16MiB", "4096", "64K", "2G" into bytes. */
int parse_size(const char *txt, uint64_t *out);
int parse_u64(const char *txt, uint64_t *out);

/*
 * The measured window of a timed workload (window.c; will-it-scale's harness):
 * each task's first round is warm-up; the window opens when the last task
 * finishes it and closes when every task has done `rounds` more, or
 * `duration_ns` later (checked by window_check_time). Closing sets
 * window_ns, ops_per_sec and ops_per_sec_task; tasks stop once `stop` is set.
 */
struct measure_window {
	int ntasks;
	int64_t rounds;			/* measured rounds per task (duration 0) */
	uint64_t duration_ns;		/* measured time; 0: by rounds */
	int warm, measured;		/* tasks past warm-up / past the rounds */
	uint64_t t0, ops0, t_end;	/* the window's start; --duration: its end */
	bool stop;
};
void window_init(struct measure_window *w, int ntasks, int64_t rounds, uint64_t duration_ns);
/* A workload whose tasks loop without sleeping until the window closes needs
 * time slices when it has more tasks than CPUs: with sched_slice_ns 0 a
 * queued task never gets a CPU, the window never closes and the run never
 * ends. 0, or TLBSIM_EINVAL with the reason in err. */
int window_need_slices(struct sim *s, int ntasks, char *err, size_t errlen);
/* a task finished round `round` (1 = its warm-up); s->m.ops already counts it */
void window_round_done(struct sim *s, struct measure_window *w, int64_t round);
void window_check_time(struct sim *s, struct measure_window *w);
void window_close(struct sim *s, struct measure_window *w);

/* glibc model (nptl): a user thread of the process */
struct glibc_proc;
/* a new process's glibc state (a kernel object, zeroed) */
struct glibc_proc *glibc_proc_alloc(struct sim *s);
struct uthread {
	struct task task;		/* first member */
	thread_fn user_fn;		/* the pthread start routine */
	uint64_t stack_lo, stack_hi;
	struct glibc_proc *proc;
};
static inline struct uthread *uthread_of(struct sim_thread *t)
{
	return container_of(task_of(t), struct uthread, task);
}
/* pthread_create(): a new thread of the current process running fn(arg) */
struct sim_thread *glibc_pthread_create(struct sim *s, thread_fn fn, void *arg);
/* pthread_create() with pthread_attr_setaffinity_np() to one CPU */
struct sim_thread *glibc_pthread_create_on(struct sim *s, thread_fn fn, void *arg, int cpu);
/* fork() of a child pinned to cpu running fn(arg) in a new mm */
struct sim_thread *glibc_fork_on(struct sim *s, thread_fn fn, void *arg, int cpu);
void glibc_pthread_join(struct sim *s, struct sim_thread *t);
/* map the current process's image of `pages` pages (program and libc text
 * and data) for glibc_user_work; 0 or TLBSIM_EINVAL (the run failed) */
int glibc_image_map(struct sim *s, uint64_t pages);
/* one loop iteration's user working set: `pages` pages (the stack top and
 * pages - 1 of the image) */
void glibc_user_work(struct sim *s, uint64_t pages);

/*
 * glibc malloc (2.28-era ptmalloc), at the level of the syscalls it issues:
 * a chunk of at least the mmap threshold is its own mmap and its free an
 * munmap (which raises the process's threshold to the chunk's size and the
 * trim threshold to twice that, once per larger size: the dynamic threshold);
 * a smaller one comes from the top of the thread's arena heap (a 64 MiB
 * HEAP_MAX_SIZE reservation, faulted in as it is first touched), and a free
 * that leaves more than the trim threshold free at the top gives back what
 * exceeds M_TOP_PAD with MADV_DONTNEED (heap_trim -> shrink_heap). One
 * arena per thread; chunks are freed in the reverse order of their
 * allocation (ebizzy holds one at a time).
 */
struct glibc_arena {
	uint64_t heap;		/* the reservation; 0 until the first arena chunk */
	uint64_t top;		/* bytes in use from heap */
	uint64_t touched;	/* bytes from heap faulted in (and not trimmed) */
};
struct glibc_alloc {
	uint64_t p, size;	/* the user's address and the chunk's size */
	bool mmapped;
	uint64_t fresh;		/* first address of [p, p + size) never touched */
};
/* malloc(n) by the current thread from arena a; p = TLBSIM_EINVAL_VA when
 * the address space is exhausted (the run has failed) */
struct glibc_alloc glibc_malloc(struct sim *s, struct glibc_arena *a, uint64_t n);
void glibc_free(struct sim *s, struct glibc_arena *a, const struct glibc_alloc *c);

#endif
