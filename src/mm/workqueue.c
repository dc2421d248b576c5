/*
 * workqueue.c - per-CPU kernel workers for work items (kernel/workqueue.c,
 * the bound system_wq as far as timing goes).
 *
 * schedule_work_on(cpu, w) queues w on cpu's worker pool unless it is
 * already pending; a work item that is running may be queued again and runs
 * once more after the current run, on the worker that runs it (work items
 * are non-reentrant: the pool it last ran on takes it); the pool's kworker
 * thread, created on
 * first use and pinned to cpu, runs its items in FIFO order in kernel mode
 * and sleeps when the list is empty. flush_work(w) waits until w is neither
 * pending nor running. A kworker has no mm: the CPU keeps the previous mm
 * loaded (lazy TLB), as context_switch() does for kernel threads.
 */
#include "mm/mm.h"
#include "mm/points.h"

struct worker_pool {
	struct task *kworker;
	struct work_struct *head, *tail;
	bool idle;		/* the kworker sleeps waiting for work */
};

static void worker_thread(struct sim *s, struct sim_thread *t)
{
	struct worker_pool *pool = t->arg;
	sim_set_mode(s, MODE_SYS);
	for (;;) {
		while (pool->head) {
			struct work_struct *w = pool->head;
			pool->head = w->next;
			if (!pool->head)
				pool->tail = NULL;
			w->next = NULL;
			w->pending = false;
			w->running = true;
			w->cpu = t->cpu;
			sim_step(s, YP_WORK, (uint64_t)P(s, P_lock_op_ns));
			w->fn(s, w);
			w->running = false;
			if (w->flusher && !w->pending) {
				struct sim_thread *f = w->flusher;
				w->flusher = NULL;
				sim_wake(s, f, (uint64_t)P(s, P_wakeup_ns));
			}
		}
		pool->idle = true;
		sim_sleep(s);
		pool->idle = false;
	}
}

static struct worker_pool *pool_of(struct sim *s, int cpu)
{
	struct kernel *k = kernel_of(s);
	if (!k->wq_pools) {
		k->wq_pools = kernel_obj_alloc(s, (size_t)s->nr_cpus * sizeof(*k->wq_pools));
		if (!k->wq_pools)
			return NULL;
	}
	return &k->wq_pools[cpu];
}

bool schedule_work_on(struct sim *s, int cpu, struct work_struct *w)
{
	if (w->pending)
		return false;
	if (w->running)
		cpu = w->cpu;		/* non-reentrant: stay on its worker */
	struct worker_pool *pool = pool_of(s, cpu);
	if (!pool)
		return false;
	w->pending = true;
	w->next = NULL;
	if (pool->tail)
		pool->tail->next = w;
	else
		pool->head = w;
	pool->tail = w;
	if (!pool->kworker) {
		pool->kworker = task_create(s, sizeof(struct task), worker_thread, pool, NULL, cpu,
					    (uint64_t)P(s, P_wakeup_ns));
		if (pool->kworker) {
			sim_thread_set_daemon(s, &pool->kworker->thread);
			sim_set_need_resched(s, cpu);	/* a wake-up in the kernel */
		}
	} else if (pool->idle) {
		pool->idle = false;
		sim_wake(s, &pool->kworker->thread, (uint64_t)P(s, P_wakeup_ns));
	}
	return true;
}

bool schedule_work(struct sim *s, struct work_struct *w)
{
	return schedule_work_on(s, s->curr ? s->curr->cpu : 0, w);
}

void flush_work(struct sim *s, struct work_struct *w)
{
	while (w->pending || w->running) {
		w->flusher = s->curr;
		sim_sleep(s);
	}
}
