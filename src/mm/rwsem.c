/*
 * rwsem.c - mmap_sem as a reader/writer semaphore with sleeping waiters.
 *
 * Mirrors the observable semantics of kernel/locking/rwsem-xadd.c (v5.1):
 *  - down_read succeeds at once only if no writer holds the lock and nobody
 *    is queued (a queued writer blocks new readers: no reader barging);
 *  - down_write succeeds at once only if the lock is free and nobody is queued;
 *  - waiters sleep in one FIFO queue and give up their CPU;
 *  - on release the front of the queue is woken: one writer, or every reader
 *    from the front up to the first writer (__rwsem_mark_wake);
 *  - downgrade_write turns the write hold into a read hold and wakes the
 *    readers at the front (rwsem_downgrade_wake).
 * Simplifications (docs/design.md): the lock is handed to the woken waiters
 * at wake time (no stealing by optimistic spinners; v5.1 writers spin on the
 * owner before sleeping, which this model does not), and a woken waiter
 * resumes wakeup_ns later.
 */
#include "sim/sim.h"

static void rwsem_enqueue(struct rw_semaphore *sem, struct sim_thread *t, bool write)
{
	t->wait_next = NULL;
	t->wait_write = write;
	t->wait_granted = false;
	if (sem->wait_tail)
		sem->wait_tail->wait_next = t;
	else
		sem->wait_head = t;
	sem->wait_tail = t;
}

static struct sim_thread *rwsem_dequeue(struct rw_semaphore *sem)
{
	struct sim_thread *t = sem->wait_head;
	sem->wait_head = t->wait_next;
	if (!sem->wait_head)
		sem->wait_tail = NULL;
	t->wait_next = NULL;
	return t;
}

static void rwsem_grant(struct sim *s, struct sim_thread *t)
{
	t->wait_granted = true;
	sim_wake(s, t, (uint64_t)P(s, P_wakeup_ns));
}

/* __rwsem_mark_wake(): wake the front writer, or the front run of readers. */
static void rwsem_wake(struct sim *s, struct rw_semaphore *sem)
{
	struct sim_thread *t = sem->wait_head;
	if (!t || sem->writer)
		return;
	if (t->wait_write) {
		if (sem->readers)
			return;
		sem->writer = true;
		rwsem_grant(s, rwsem_dequeue(sem));
		return;
	}
	while (sem->wait_head && !sem->wait_head->wait_write) {
		sem->readers++;
		rwsem_grant(s, rwsem_dequeue(sem));
	}
}

static void rwsem_wait(struct sim *s, struct rw_semaphore *sem, bool write)
{
	struct sim_thread *t = sim_current(s);
	rwsem_enqueue(sem, t, write);
	uint64_t t0 = s->now + t->pending_ns;
	sim_sleep(s);
	SIM_BUG_ON(s, !t->wait_granted);
	s->m.lock_wait_ns += s->now - t0;
}

/* down_read() (kernel/locking/rwsem.c, v5.1) */
void down_read(struct sim *s, struct rw_semaphore *sem)
{
	sim_step(s, YP_LOCK, (uint64_t)P(s, P_lock_op_ns));
	if (!sem->writer && !sem->wait_head) {
		sem->readers++;
		return;
	}
	rwsem_wait(s, sem, false);
}

/* up_read() */
void up_read(struct sim *s, struct rw_semaphore *sem)
{
	SIM_BUG_ON(s, sem->readers <= 0 || sem->writer);
	sim_step(s, YP_LOCK, (uint64_t)P(s, P_lock_op_ns));
	if (--sem->readers == 0)
		rwsem_wake(s, sem);
}

/* down_write() / down_write_killable() */
void down_write(struct sim *s, struct rw_semaphore *sem)
{
	sim_step(s, YP_LOCK, (uint64_t)P(s, P_lock_op_ns));
	if (!sem->writer && sem->readers == 0 && !sem->wait_head) {
		sem->writer = true;
		return;
	}
	rwsem_wait(s, sem, true);
}

/* up_write() */
void up_write(struct sim *s, struct rw_semaphore *sem)
{
	SIM_BUG_ON(s, !sem->writer);
	sim_step(s, YP_LOCK, (uint64_t)P(s, P_lock_op_ns));
	sem->writer = false;
	rwsem_wake(s, sem);
}

/* downgrade_write(): write hold becomes a read hold; queued readers at the
 * front are admitted. */
void downgrade_write(struct sim *s, struct rw_semaphore *sem)
{
	SIM_BUG_ON(s, !sem->writer);
	sim_step(s, YP_LOCK, (uint64_t)P(s, P_lock_op_ns));
	sem->writer = false;
	sem->readers = 1;
	while (sem->wait_head && !sem->wait_head->wait_write) {
		sem->readers++;
		rwsem_grant(s, rwsem_dequeue(sem));
	}
}
