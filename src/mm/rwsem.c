/*
 * rwsem.c - mmap_sem as a reader/writer semaphore with sleeping waiters and
 * writer optimistic spinning.
 *
 * Mirrors the observable semantics of kernel/locking/rwsem-xadd.c (v5.1,
 * CONFIG_RWSEM_SPIN_ON_OWNER):
 *  - down_read succeeds at once only if no writer holds the lock and nobody
 *    is queued; otherwise the reader queues (no barging past waiters);
 *  - down_write takes a lock that nobody holds even when waiters are queued
 *    (rwsem_try_write_lock_unqueued: count == 0 or RWSEM_WAITING_BIAS);
 *  - a writer that finds the lock held by a running writer spins on the owner
 *    (rwsem_optimistic_spin, FIFO through the OSQ) and takes the lock as soon
 *    as it is released, ahead of the sleeping waiters; a reader-owned lock is
 *    not spinnable (RWSEM_READER_OWNED), so such a writer queues and sleeps;
 *  - waiters sleep in one FIFO queue and give up their CPU;
 *  - on release the front of the queue is woken (__rwsem_mark_wake): readers
 *    at the front up to the first writer are granted the lock by the waker;
 *    a front writer is only woken and must retry (it may find the lock taken
 *    by a spinner or a newcomer and sleep again, still at the front);
 *  - downgrade_write makes the lock reader-owned: spinners stop spinning and
 *    queue, and the readers at the front are admitted (rwsem_downgrade_wake).
 * Sleeping and waking cost time on both sides (v5.1 rwsem_down_*_failed ->
 * schedule(); __rwsem_mark_wake -> wake_up_q -> try_to_wake_up):
 *  - a sleeper pays schedule() out and its CPU, with nothing else to run,
 *    idle entry (sim_sleep);
 *  - the waker pays wake_per_task_ns (sys) for each task it wakes, one after
 *    another: the k-th woken task's wake-up starts k x wake_per_task_ns into
 *    the waker's release;
 *  - readers own the lock from the moment they are chosen (the waker adds
 *    their count before waking them), so a newcomer cannot take the lock
 *    between the wake and the woken reader running;
 *  - a woken task resumes wakeup_ns after its wake (the reschedule IPI), plus
 *    idle exit and schedule() in if its CPU was idle (sim_wake).
 * A spinner resumes after lock_op_ns and is not woken (it never slept).
 * Every atomic on the count (each lock operation, a woken writer's retry, a
 * spinner's take-over) pays line_transfer_ns more when another CPU wrote the
 * count last (struct cacheline, mm.h).
 * Spinning time is charged as sys.
 */
#include "mm/mm.h"
#include "mm/points.h"

/* One atomic on sem->count by the current CPU: lock_op_ns, plus the line's
 * transfer if another CPU wrote it last. */
/* The sleeping waiters of sem changed by d: the count of their kind, and in
 * a run's timeline a counter track */
static void waiters_changed(struct sim *s, struct rw_semaphore *sem, int d)
{
	struct kernel *k = kernel_of(s);
	k->rwsem_waiters[sem->kind] += (uint32_t)d;
	if (s->trace && !s->ex)
		sim_trace(s, &tp_rwsem_waiters, k->rwsem_waiters[sem->kind], sem->kind);
}

static void wq_append(struct sim *s, struct rw_semaphore *sem, struct task *t)
{
	q_append(&sem->wait_head, &sem->wait_tail, t);
	waiters_changed(s, sem, 1);
}

static struct task *wq_pop(struct sim *s, struct rw_semaphore *sem)
{
	struct task *t = q_pop(&sem->wait_head, &sem->wait_tail);
	waiters_changed(s, sem, -1);
	return t;
}

static uint64_t lock_op(struct sim *s, struct rw_semaphore *sem)
{
	return (uint64_t)P(s, P_lock_op_ns) + line_rmw(s, &sem->count);
}

/* wake_q_add + try_to_wake_up of one sleeper by the current task (the waker
 * pays wake_per_task_ns first; the wake-up leaves when that is done) */
static void rwsem_wake_one(struct sim *s, struct task *t)
{
	sim_charge_sys(s, (uint64_t)P(s, P_wake_per_task_ns));
	sim_wake(s, &t->thread, (uint64_t)P(s, P_wakeup_ns));
}

/* __rwsem_mark_wake(RWSEM_WAKE_ANY) for the v5.1 queue */
static __attribute__((noinline)) void rwsem_wake_queue(struct sim *s, struct rw_semaphore *sem)
{
	struct task *t = sem->wait_head;
	if (t->wait_write) {
		if (sem->readers == 0 && !t->wait_woken) {
			t->wait_woken = true;
			rwsem_wake_one(s, t);
		}
		return;
	}
	while (sem->wait_head && !sem->wait_head->wait_write) {
		struct task *r = wq_pop(s, sem);
		sem->readers++;
		r->wait_granted = true;
		rwsem_wake_one(s, r);
	}
}

/* rwsem_wake_queue() when there is something to wake: its empty-queue and
 * writer-owned tests inline (the common case, nothing to do) */
static inline void rwsem_wake(struct sim *s, struct rw_semaphore *sem)
{
	if (sem->wait_head && !sem->writer)
		rwsem_wake_queue(s, sem);
}

/* down_read() (kernel/locking/rwsem.c, rwsem_down_read_failed, v5.1) */
void down_read(struct sim *s, struct rw_semaphore *sem)
{
	struct task *t = current_task(s);
	rwsem_step(s, sem, LOCK_DOWN_READ);
	if (!sem->writer && !sem->wait_head) {
		sem->readers++;
		return;
	}
	uint64_t t0 = s->now + t->thread.pending_ns;
	t->wait_write = false;
	t->wait_granted = false;
	wq_append(s, sem, t);
	/* no active lockers at all: wake the front (ourselves, possibly) */
	if (!sem->writer && sem->readers == 0)
		rwsem_wake(s, sem);
	if (!t->wait_granted)
		sim_sleep(s);
	SIM_BUG_ON(s, !t->wait_granted);
	s->m.lock_wait_ns += s->now - t0;
}

/* up_read() */
void up_read(struct sim *s, struct rw_semaphore *sem)
{
	SIM_BUG_ON(s, sem->readers <= 0 || sem->writer);
	rwsem_step(s, sem, LOCK_UP_READ);
	if (--sem->readers == 0)
		rwsem_wake(s, sem);
}

/* down_write() after its step found the lock taken or a spinner:
 * rwsem_down_write_failed() (v5.1) */
void down_write_wait(struct sim *s, struct rw_semaphore *sem)
{
	struct task *t = current_task(s);
	uint64_t t0 = s->now + t->thread.pending_ns;
	t->wait_write = true;
	t->wait_granted = false;
	if (sem->writer) {
		/* rwsem_optimistic_spin(): the owner is a running writer */
		q_append(&sem->spin_head, &sem->spin_tail, t);
		sim_spin_wait(s);
		if (t->wait_granted) {
			s->m.lock_wait_ns += s->now - t0;
			return;
		}
		/* the lock became reader-owned: we were queued and slept */
	} else {
		t->wait_woken = false;
		wq_append(s, sem, t);
		sim_sleep(s);
	}
	/* woken at the front of the queue: retry until the lock is ours
	 * (rwsem_try_write_lock: a cmpxchg on the count each time) */
	for (;;) {
		SIM_BUG_ON(s, sem->wait_head != t);
		sim_charge(s, line_rmw(s, &sem->count));
		if (!sem->writer && sem->readers == 0) {
			wq_pop(s, sem);
			sem->writer = true;
			t->wait_woken = false;
			break;
		}
		t->wait_woken = false;
		sim_sleep(s);
	}
	s->m.lock_wait_ns += s->now - t0;
}

/* down_write_trylock() (kernel/locking/rwsem-xadd.c, v5.1: __down_write_trylock's
 * cmpxchg from unlocked): the lock if it is free and no one waits for it,
 * else nothing (no wait) */
bool down_write_trylock(struct sim *s, struct rw_semaphore *sem)
{
	sim_step_arg(s, YP_LOCK, lock_op(s, sem), LOCK_DOWN_WRITE, sem->kind);
	if (sem->writer || sem->readers || sem->spin_head || sem->wait_head)
		return false;
	sem->writer = true;
	return true;
}

/* up_write() (mm.h) after its step, with a spinner or a waiter: a spinning
 * writer takes the lock first; otherwise wake the queue front */
void up_write_wake(struct sim *s, struct rw_semaphore *sem)
{
	if (sem->spin_head) {
		struct task *w = q_pop(&sem->spin_head, &sem->spin_tail);
		sem->writer = true;
		w->wait_granted = true;
		/* the spinner's cmpxchg fetches the line we just wrote */
		sim_wake(s, &w->thread,
			 (uint64_t)P(s, P_lock_op_ns) + line_rmw_on(s, &sem->count, w->thread.cpu));
		return;
	}
	rwsem_wake(s, sem);
}

/* downgrade_write(): the lock becomes reader-owned; spinners give up and
 * queue; queued readers at the front are admitted. */
void downgrade_write(struct sim *s, struct rw_semaphore *sem)
{
	SIM_BUG_ON(s, !sem->writer);
	sim_step_arg(s, YP_LOCK, lock_op(s, sem), LOCK_DOWNGRADE_WRITE, sem->kind);
	sem->writer = false;
	sem->readers = 1;
	while (sem->spin_head) {
		struct task *w = q_pop(&sem->spin_head, &sem->spin_tail);
		w->wait_woken = false;
		wq_append(s, sem, w);
		sim_spin_to_sleep(s, &w->thread);
	}
	while (sem->wait_head && !sem->wait_head->wait_write) {
		struct task *r = wq_pop(s, sem);
		sem->readers++;
		r->wait_granted = true;
		rwsem_wake_one(s, r);
	}
}
