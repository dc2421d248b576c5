/*
 * test_rwsem.c - mmap_sem semantics (kernel/locking/rwsem.c, v5.1, as modelled
 * in src/mm/rwsem.c; kernel-model 2.1).
 *
 * Rules checked:
 *  - several readers hold the lock at the same time;
 *  - a writer excludes readers and other writers;
 *  - a queued writer blocks new readers (no reader barging past a waiting
 *    writer, even while only readers hold the lock);
 *  - sleeping waiters are served in FIFO order;
 *  - up_write wakes every reader at the front of the queue up to the first
 *    writer (they then hold the lock together), or the front writer;
 *  - costs of sleeping and waking (v5.1 __rwsem_mark_wake -> wake_up_q): the
 *    waker pays wake_per_task_ns per woken task, N x for N readers, and wakes
 *    them one after another; the readers own the lock from the wake (the
 *    count is theirs before any of them runs); a woken reader on an idle CPU
 *    runs wakeup_ns + idle_exit_ns + ctx_switch_ns / 2 (schedule() in) after
 *    its wake;
 *  - contended cache lines (struct cacheline, mm.h): an atomic RMW on a line
 *    that another CPU wrote last pays line_transfer_ns on top of lock_op_ns
 *    and the CPU owns the line; on a line it owns, or one nobody wrote yet,
 *    nothing more; every lock operation is such an atomic on the rwsem's
 *    count;
 *  - downgrade_write turns the write hold into a read hold and admits the
 *    readers at the front of the queue but not a queued writer;
 *  - a sleeping waiter gives up its CPU (it goes idle);
 *  - metrics.lock_wait_ns accumulates the time spent waiting;
 *  - v5.1 writer optimistic spinning (CONFIG_RWSEM_SPIN_ON_OWNER): a writer
 *    finding a writer-owned lock spins (CPU stays busy) and takes the lock
 *    ahead of sleeping waiters; a reader-owned lock is not spinnable, so
 *    writers arriving then queue and sleep. The FIFO/wake/downgrade tests
 *    therefore start with a reader holding the lock, so that every waiter is
 *    a sleeping, queued one.
 *
 * Each actor is a simulated thread on its own CPU. It first passes `delay` ns
 * of user time (which orders arrivals deterministically), takes the lock,
 * logs its id, holds the lock for `hold` ns and releases it. All threads
 * start together (the CPUs leave idle at the same instant), so only the
 * differences between the delays matter.
 */
#include "test_util.h"

#define MAXA 8

struct rwlog {
	int order[MAXA];
	int n;
	int readers, writers;		/* current holders, as the actors see them */
	int max_readers;
	int exclusion_violations;	/* a holder found a conflicting holder */
};

struct actor {
	struct rwlog *log;
	int id;
	bool write;
	uint64_t delay, hold;
	bool downgrade;			/* writer: downgrade after hold, then hold2 */
	uint64_t hold2;
	struct sim_thread *probe;	/* sample this thread's CPU mid-hold */
	/* results */
	uint64_t t_req, t_acq, t_down, t_rel;
	uint64_t t_rel_done;		/* up_read/up_write returned */
	int sem_readers_after;		/* sem->readers then */
	int running_readers_after;	/* readers that had run past down_read then */
	bool probe_cpu_idle, probe_sleeping, probe_spinning;
	bool ran_on_own_cpu;
	bool done;
};

static void note_reader(struct rwlog *L)
{
	if (L->writers)
		L->exclusion_violations++;
	if (++L->readers > L->max_readers)
		L->max_readers = L->readers;
}

static void actor_fn(struct sim *s, struct sim_thread *t)
{
	struct actor *a = t->arg;
	struct rwlog *L = a->log;
	struct rw_semaphore *sem = &task_of(t)->mm->mmap_sem;

	sim_step(s, YP_USER, a->delay);
	a->t_req = s->now;
	if (a->write)
		down_write(s, sem);
	else
		down_read(s, sem);
	a->t_acq = s->now;
	a->ran_on_own_cpu = s->cpus[t->cpu].curr == t;
	L->order[L->n++] = a->id;
	if (a->write) {
		if (L->readers || L->writers)
			L->exclusion_violations++;
		L->writers++;
	} else {
		note_reader(L);
	}

	if (a->probe) {
		sim_step(s, YP_USER, a->hold / 2);
		a->probe_cpu_idle = s->cpus[a->probe->cpu].curr == NULL;
		a->probe_spinning = a->probe->spinning;
		a->probe_sleeping = a->probe->state == TS_SLEEPING && !a->probe->spinning;
		sim_step(s, YP_USER, a->hold - a->hold / 2);
	} else {
		sim_step(s, YP_USER, a->hold);
	}

	bool reading = !a->write;
	if (a->downgrade) {
		L->writers--;
		note_reader(L);
		a->t_down = s->now;
		downgrade_write(s, sem);
		sim_step(s, YP_USER, a->hold2);
		reading = true;
	}
	a->t_rel = s->now;
	if (reading) {
		L->readers--;
		up_read(s, sem);
	} else {
		L->writers--;
		up_write(s, sem);
	}
	a->t_rel_done = s->now + t->pending_ns;
	a->sem_readers_after = sem->readers;
	a->running_readers_after = L->readers;
	a->done = true;
}

/* Run the actors, actor i on CPU i. */
static struct sim *run_actors(struct actor *a, int n, struct rwlog *L)
{
	struct sim *s = tsim_new("falkor-46", 8, NESTED_FULLMM);
	struct sim_thread *th[MAXA];
	memset(L, 0, sizeof(*L));
	for (int i = 0; i < n; i++) {
		a[i].log = L;
		a[i].id = i;
		th[i] = tsim_spawn(s, actor_fn, &a[i], i);
	}
	for (int i = 0; i < n; i++)
		if (a[i].probe)
			a[i].probe = th[(intptr_t)a[i].probe - 1];
	tsim_run(s);
	for (int i = 0; i < n; i++)
		assert_true(a[i].done);
	assert_int_equal(L->n, n);
	assert_int_equal(L->exclusion_violations, 0);
	return s;
}

/* probe encoding before the threads exist: actor index + 1 */
#define PROBE(i) ((struct sim_thread *)(intptr_t)((i) + 1))

static void assert_order(const struct rwlog *L, const int *want, int n)
{
	for (int i = 0; i < n; i++)
		assert_int_equal(L->order[i], want[i]);
}

static uint64_t lock_op(struct sim *s)
{
	return (uint64_t)P(s, P_lock_op_ns);
}

static uint64_t xfer(struct sim *s)
{
	return (uint64_t)P(s, P_line_transfer_ns);
}

/* Two readers hold the lock together; nobody waits. */
static void test_readers_share(void **state)
{
	(void)state;
	struct rwlog L;
	struct actor a[3] = {
		{.write = false, .delay = 0, .hold = 10000},
		{.write = false, .delay = 1000, .hold = 10000},
		{.write = false, .delay = 2000, .hold = 10000},
	};
	struct sim *s = run_actors(a, 3, &L);
	assert_order(&L, (const int[]){0, 1, 2}, 3);
	assert_int_equal(L.max_readers, 3);
	assert_true(a[1].t_acq < a[0].t_rel);
	assert_true(a[2].t_acq < a[0].t_rel);
	/* uncontended: acquisition right after the request, no waiting; R0
	 * writes the count's line first (no transfer), R1 and R2 each find it
	 * last written by another CPU */
	for (int i = 0; i < 3; i++)
		assert_int_equal(a[i].t_acq - a[i].t_req, lock_op(s) + (i ? xfer(s) : 0));
	/* each release finds the line last written by another CPU */
	for (int i = 0; i < 3; i++)
		assert_int_equal(a[i].t_rel_done - a[i].t_rel, lock_op(s) + xfer(s));
	assert_int_equal(s->m.lock_wait_ns, 0);
	tsim_free(s);
}

/* A writer excludes a later writer (which spins) and a later reader (which
 * sleeps) until it releases; the writers never overlap anyone. */
static void test_writer_excludes(void **state)
{
	(void)state;
	struct rwlog L;
	struct actor a[3] = {
		{.write = true, .delay = 0, .hold = 10000},
		{.write = true, .delay = 1000, .hold = 5000},
		{.write = false, .delay = 2000, .hold = 5000},
	};
	struct sim *s = run_actors(a, 3, &L);
	assert_order(&L, (const int[]){0, 1, 2}, 3);
	assert_true(a[1].t_acq >= a[0].t_rel);
	assert_true(a[2].t_acq >= a[1].t_rel);
	assert_int_equal(L.max_readers, 1);
	tsim_free(s);
}

/* Reader R0 holds; writer W1 queues; reader R2 arrives while only a reader
 * holds the lock, but must not barge past the queued writer. */
static void test_queued_writer_blocks_new_readers(void **state)
{
	(void)state;
	struct rwlog L;
	struct actor a[3] = {
		{.write = false, .delay = 0, .hold = 10000},
		{.write = true, .delay = 1000, .hold = 10000},
		{.write = false, .delay = 2000, .hold = 1000},
	};
	struct sim *s = run_actors(a, 3, &L);
	assert_order(&L, (const int[]){0, 1, 2}, 3);
	assert_true(a[2].t_req < a[0].t_rel);		/* R2 came while R0 held */
	assert_true(a[1].t_acq >= a[0].t_rel);
	assert_true(a[2].t_acq >= a[1].t_rel);		/* ... and waited for W1 */
	assert_int_equal(L.max_readers, 1);		/* R0 and R2 never overlapped */
	tsim_free(s);
}

/*
 * FIFO among sleeping waiters. R0 holds the lock for read, so arriving writers
 * cannot spin (a reader-owned lock is not spinnable) and queue. Arrival order
 * W3, R2, W1, R4 (not CPU order): R0's release wakes W3; W3's up_write grants
 * R2 (front reader, stops at W1); R2's release wakes W1; W1's grants R4.
 */
static void test_fifo_sleeping_waiters(void **state)
{
	(void)state;
	struct rwlog L;
	struct actor a[5] = {
		{.write = false, .delay = 0, .hold = 20000},
		{.write = true, .delay = 3000, .hold = 3000},
		{.write = false, .delay = 2000, .hold = 3000},
		{.write = true, .delay = 1000, .hold = 3000},
		{.write = false, .delay = 4000, .hold = 3000},
	};
	struct sim *s = run_actors(a, 5, &L);
	assert_order(&L, (const int[]){0, 3, 2, 1, 4}, 5);
	assert_true(a[4].t_req < a[0].t_rel);		/* all queued while R0 held */
	assert_true(a[3].t_acq >= a[0].t_rel);
	assert_true(a[2].t_acq >= a[3].t_rel);
	assert_true(a[1].t_acq >= a[2].t_rel);
	assert_true(a[4].t_acq >= a[1].t_rel);
	assert_int_equal(L.max_readers, 1);
	tsim_free(s);
}

/*
 * up_write wakes every reader at the front up to the first writer. R0 holds
 * for read while W1, R2, R3, W4, R5 queue (in that order). W1 gets the lock
 * when R0 leaves; W1's up_write grants R2 and R3 together; W4 waits for both;
 * R5, behind W4, waits for W4.
 */
static void test_up_write_wakes_front_readers(void **state)
{
	(void)state;
	struct rwlog L;
	struct actor a[6] = {
		{.write = false, .delay = 0, .hold = 20000},
		{.write = true, .delay = 1000, .hold = 10000},
		{.write = false, .delay = 2000, .hold = 5000},
		{.write = false, .delay = 3000, .hold = 5000},
		{.write = true, .delay = 4000, .hold = 3000},
		{.write = false, .delay = 5000, .hold = 1000},
	};
	struct sim *s = run_actors(a, 6, &L);
	assert_order(&L, (const int[]){0, 1, 2, 3, 4, 5}, 6);
	assert_true(a[5].t_req < a[0].t_rel);
	assert_true(a[1].t_acq >= a[0].t_rel);
	assert_true(a[2].t_acq >= a[1].t_rel);
	/* woken by the same up_write, one wake_per_task_ns after the other */
	assert_int_equal(a[3].t_acq - a[2].t_acq, (uint64_t)P(s, P_wake_per_task_ns));
	assert_int_equal(L.max_readers, 2);
	assert_true(a[4].t_acq >= a[2].t_rel && a[4].t_acq >= a[3].t_rel);
	assert_true(a[5].t_acq >= a[4].t_rel);
	/* every waiter's wait covers at least the time the lock was unavailable
	 * to it after it queued, and at most its request-to-acquire time */
	uint64_t r23 = a[2].t_rel > a[3].t_rel ? a[2].t_rel : a[3].t_rel;
	uint64_t lo = (a[0].t_rel - a[1].t_req - lock_op(s)) +
		      (a[1].t_rel - a[2].t_req - lock_op(s)) +
		      (a[1].t_rel - a[3].t_req - lock_op(s)) +
		      (r23 - a[4].t_req - lock_op(s)) +
		      (a[4].t_rel - a[5].t_req - lock_op(s));
	uint64_t hi = 0;
	for (int i = 1; i < 6; i++)
		hi += a[i].t_acq - a[i].t_req;
	assert_true(s->m.lock_wait_ns >= lo);
	assert_true(s->m.lock_wait_ns <= hi);
	tsim_free(s);
}

/*
 * downgrade_write admits the readers at the front of the queue, not a queued
 * writer nor the readers behind it. Queue behind R0: W1, R2, R3, W4, R5. W1
 * gets the lock, then downgrades: R2 and R3 join it as readers while W1 still
 * holds; W4 waits until W1, R2 and R3 all released; R5 waits for W4.
 */
static void test_downgrade_admits_front_readers_only(void **state)
{
	(void)state;
	struct rwlog L;
	struct actor a[6] = {
		{.write = false, .delay = 0, .hold = 20000},
		{.write = true, .delay = 1000, .hold = 5000, .downgrade = true, .hold2 = 10000},
		{.write = false, .delay = 2000, .hold = 5000},
		{.write = false, .delay = 3000, .hold = 5000},
		{.write = true, .delay = 4000, .hold = 3000},
		{.write = false, .delay = 5000, .hold = 1000},
	};
	struct sim *s = run_actors(a, 6, &L);
	assert_order(&L, (const int[]){0, 1, 2, 3, 4, 5}, 6);
	assert_true(a[1].t_acq >= a[0].t_rel);
	assert_true(a[2].t_acq >= a[1].t_down && a[2].t_acq < a[1].t_rel);
	assert_true(a[3].t_acq >= a[1].t_down && a[3].t_acq < a[1].t_rel);
	assert_int_equal(L.max_readers, 3);		/* W1 (downgraded), R2, R3 */
	assert_true(a[4].t_acq >= a[1].t_rel);
	assert_true(a[4].t_acq >= a[2].t_rel && a[4].t_acq >= a[3].t_rel);
	assert_true(a[5].t_acq >= a[4].t_rel);
	tsim_free(s);
}

/* downgrade_write with a writer at the front of the queue admits nobody: the
 * reader behind that writer still waits for it. */
static void test_downgrade_with_writer_at_front(void **state)
{
	(void)state;
	struct rwlog L;
	struct actor a[4] = {
		{.write = false, .delay = 0, .hold = 20000},
		{.write = true, .delay = 1000, .hold = 5000, .downgrade = true, .hold2 = 10000},
		{.write = true, .delay = 2000, .hold = 3000},
		{.write = false, .delay = 3000, .hold = 1000},
	};
	struct sim *s = run_actors(a, 4, &L);
	assert_order(&L, (const int[]){0, 1, 2, 3}, 4);
	assert_true(a[1].t_acq >= a[0].t_rel);
	assert_true(a[2].t_acq >= a[1].t_rel);
	assert_true(a[3].t_acq >= a[2].t_rel);		/* R3 queued behind W2 */
	assert_int_equal(L.max_readers, 1);
	tsim_free(s);
}

/* A waiter sleeps and its CPU goes idle (curr == NULL) while it waits; when
 * woken it runs on its CPU again. The wait is accounted in lock_wait_ns. */
static void test_waiter_cpu_idle_and_wait_time(void **state)
{
	(void)state;
	struct rwlog L;
	struct actor a[2] = {
		{.write = true, .delay = 0, .hold = 20000, .probe = PROBE(1)},
		{.write = false, .delay = 1000, .hold = 1000},
	};
	struct sim *s = run_actors(a, 2, &L);
	assert_order(&L, (const int[]){0, 1}, 2);
	assert_true(a[1].t_req < a[0].t_acq + a[0].hold / 2);	/* R1 waiting at probe time */
	assert_true(a[0].probe_sleeping);
	assert_false(a[0].probe_spinning);
	assert_true(a[0].probe_cpu_idle);
	assert_true(a[1].ran_on_own_cpu);
	assert_true(a[1].t_acq >= a[0].t_rel);
	/* R1 waited from (at most lock_op after) its request until after W0's release */
	assert_true(s->m.lock_wait_ns > 0);
	assert_true(s->m.lock_wait_ns >= a[0].t_rel - a[1].t_req - lock_op(s));
	assert_true(s->m.lock_wait_ns <= a[1].t_acq - a[1].t_req);
	tsim_free(s);
}

/*
 * v5.1 writer optimistic spinning (CONFIG_RWSEM_SPIN_ON_OWNER, as documented
 * in src/mm/rwsem.c): a writer that finds the lock held by a running writer
 * spins on its CPU (the CPU does not go idle) and takes the lock on release
 * ahead of the sleeping reader queued before it.
 */
static void test_writer_spins_on_writer_owner(void **state)
{
	(void)state;
	struct rwlog L;
	struct actor a[3] = {
		{.write = true, .delay = 0, .hold = 10000, .probe = PROBE(2)},
		{.write = false, .delay = 1000, .hold = 1000},
		{.write = true, .delay = 2000, .hold = 3000},
	};
	struct sim *s = run_actors(a, 3, &L);
	assert_true(a[2].t_req < a[0].t_acq + a[0].hold / 2);
	assert_true(a[0].probe_spinning);
	assert_false(a[0].probe_cpu_idle);
	assert_order(&L, (const int[]){0, 2, 1}, 3);
	assert_true(a[2].t_acq >= a[0].t_rel);
	assert_true(a[1].t_acq >= a[2].t_rel);
	tsim_free(s);
}

/*
 * The cost of waking readers. W0 holds for write while R1, R2, R3 queue
 * (sleeping: a reader never spins). W0's up_write takes lock_op_ns, the
 * count's line transfer (R3 wrote it last, queueing) and one
 * wake_per_task_ns per reader; the three readers own the lock when it
 * returns, before any of them has run; reader k (k = 1..3, in queue order)
 * is woken k x wake_per_task_ns after the release's atomic and runs wakeup_ns +
 * idle_exit_ns + ctx_switch_ns / 2 after that (its CPU has long been idle).
 */
static void test_waker_pays_per_woken_reader(void **state)
{
	(void)state;
	struct rwlog L;
	struct actor a[4] = {
		{.write = true, .delay = 0, .hold = 30000},
		{.write = false, .delay = 1000, .hold = 5000},
		{.write = false, .delay = 2000, .hold = 5000},
		{.write = false, .delay = 3000, .hold = 5000},
	};
	struct sim *s = run_actors(a, 4, &L);
	uint64_t wpt = (uint64_t)P(s, P_wake_per_task_ns);
	assert_true(wpt > 0);
	assert_order(&L, (const int[]){0, 1, 2, 3}, 4);
	assert_int_equal(a[0].t_rel_done - a[0].t_rel, lock_op(s) + xfer(s) + 3 * wpt);
	assert_int_equal(a[0].sem_readers_after, 3);
	assert_int_equal(a[0].running_readers_after, 0);
	uint64_t lat = (uint64_t)(P(s, P_wakeup_ns) + P(s, P_idle_exit_ns) +
				  P(s, P_ctx_switch_ns) / 2);
	for (int k = 1; k <= 3; k++)
		assert_int_equal(a[k].t_acq,
				 a[0].t_rel + lock_op(s) + xfer(s) + (uint64_t)k * wpt + lat);
	tsim_free(s);
}

/* A writer woken at the front costs its waker one wake_per_task_ns. R0 holds
 * for read and W1 queues behind it (a reader-owned lock is not spinnable):
 * R0's up_read takes lock_op_ns + line_transfer_ns (W1 wrote the count last)
 * + wake_per_task_ns. */
static void test_waker_pays_for_writer(void **state)
{
	(void)state;
	struct rwlog L;
	struct actor a[2] = {
		{.write = false, .delay = 0, .hold = 20000},
		{.write = true, .delay = 1000, .hold = 5000},
	};
	struct sim *s = run_actors(a, 2, &L);
	assert_int_equal(a[0].t_rel_done - a[0].t_rel,
			 lock_op(s) + xfer(s) + (uint64_t)P(s, P_wake_per_task_ns));
	assert_int_equal(a[0].sem_readers_after, 0);	/* a writer is only woken */
	tsim_free(s);
}

/* The cache-line rule itself, on one line: the first writer pays nothing,
 * the owner again nothing, another CPU line_transfer_ns (and owns it), the
 * first CPU then pays again. */
struct lr {
	struct cacheline l;
	uint64_t c[4];
};

static void lr_a(struct sim *s, struct sim_thread *t)
{
	struct lr *x = t->arg;
	x->c[0] = line_rmw(s, &x->l);
	x->c[1] = line_rmw(s, &x->l);
	sim_step(s, YP_USER, 10000);
	x->c[3] = line_rmw(s, &x->l);
}

static void lr_b(struct sim *s, struct sim_thread *t)
{
	struct lr *x = t->arg;
	sim_step(s, YP_USER, 5000);
	x->c[2] = line_rmw(s, &x->l);
	assert_int_equal(line_rmw(s, &x->l), 0);
}

static void test_line_transfer_rule(void **state)
{
	(void)state;
	struct lr x = {0};
	struct sim *s = tsim_new("falkor-46", 2, NESTED_FULLMM);
	tsim_spawn(s, lr_a, &x, 0);
	tsim_spawn(s, lr_b, &x, 1);
	tsim_run(s);
	assert_true(xfer(s) > 0);
	assert_int_equal(x.c[0], 0);
	assert_int_equal(x.c[1], 0);
	assert_int_equal(x.c[2], xfer(s));
	assert_int_equal(x.c[3], xfer(s));
	tsim_free(s);
}

/* Lines are per object: one rwsem's owner does not move another's. R0 on CPU
 * 0 takes and releases mm 0's mmap_sem; R1 on CPU 1 later takes the same
 * mm's lock (transfer) and then a second mm's (nobody wrote it: none). */
struct po {
	struct rw_semaphore other;
	uint64_t c_same, c_other;
};

static void po_a(struct sim *s, struct sim_thread *t)
{
	(void)t;
	struct rw_semaphore *sem = &current_task(s)->mm->mmap_sem;
	down_read(s, sem);
	up_read(s, sem);
}

static void po_b(struct sim *s, struct sim_thread *t)
{
	struct po *x = t->arg;
	struct rw_semaphore *sem = &current_task(s)->mm->mmap_sem;
	sim_step(s, YP_USER, 5000);
	uint64_t t0 = s->now + t->pending_ns;
	down_read(s, sem);
	x->c_same = s->now + t->pending_ns - t0;
	up_read(s, sem);
	t0 = s->now + t->pending_ns;
	down_read(s, &x->other);
	x->c_other = s->now + t->pending_ns - t0;
	up_read(s, &x->other);
}

static void test_line_per_object(void **state)
{
	(void)state;
	struct po x;
	memset(&x, 0, sizeof(x));
	struct sim *s = tsim_new("falkor-46", 2, NESTED_FULLMM);
	tsim_spawn(s, po_a, &x, 0);
	tsim_spawn(s, po_b, &x, 1);
	tsim_run(s);
	assert_int_equal(x.c_same, lock_op(s) + xfer(s));
	assert_int_equal(x.c_other, lock_op(s));
	tsim_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_readers_share),
		cmocka_unit_test(test_writer_excludes),
		cmocka_unit_test(test_queued_writer_blocks_new_readers),
		cmocka_unit_test(test_fifo_sleeping_waiters),
		cmocka_unit_test(test_up_write_wakes_front_readers),
		cmocka_unit_test(test_downgrade_admits_front_readers_only),
		cmocka_unit_test(test_downgrade_with_writer_at_front),
		cmocka_unit_test(test_waiter_cpu_idle_and_wait_time),
		cmocka_unit_test(test_writer_spins_on_writer_owner),
		cmocka_unit_test(test_waker_pays_per_woken_reader),
		cmocka_unit_test(test_waker_pays_for_writer),
		cmocka_unit_test(test_line_transfer_rule),
		cmocka_unit_test(test_line_per_object),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
