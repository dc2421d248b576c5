/*
 * fork.c - processes: tasklist_lock, kernel stacks, fork, exec, and the
 * lifetime of an mm_struct (v6.10).
 *
 * tasklist_lock is a queued rwlock (kernel/locking/qrwlock.c, v6.10):
 *  - read_lock: a reader gets in at once unless a writer holds the lock or
 *    waits for it (_QW_LOCKED | _QW_WAITING); otherwise it joins wait_lock
 *    (a FIFO qspinlock), adds its bias when it reaches the head and spins
 *    until no writer holds the lock, then passes wait_lock on - so the
 *    readers queued behind a writer get in together when it unlocks;
 *  - write_lock: at once only if nobody holds it (cnts == 0); otherwise the
 *    writer joins wait_lock and, at the head, sets _QW_WAITING (from then on
 *    new readers queue behind it) and spins until the readers are gone;
 *  - every waiter busy-waits on its CPU (sim_spin_wait: the time is sys);
 *  - write_lock_irq / write_unlock_irq (include/linux/rwlock_api_smp.h):
 *    local_irq_disable() before the writer spins, local_irq_enable() after
 *    the unlock, so an IPI to a CPU spinning for or holding the write lock
 *    waits until the unlock (arch/irq.c). Readers (__do_wait) keep IRQs on.
 * A granted spinner sees the change lock_op_ns later. Hold times are
 * parameters: tasklist_write_hold_ns (a KASAN lock_stat figure, divided by
 * kasan_slowdown without KASAN) for every write section, wait_child_ns per
 * child looked at under the read lock.
 *
 * Kernel stacks (CONFIG_VMAP_STACK, kernel/fork.c v6.10): alloc_thread_stack_node
 * takes one of the forking CPU's NR_CACHED_STACKS (2) cached stacks (clears
 * it and, with KASAN, unpoisons its shadow) or vmallocs THREAD_SIZE aligned to
 * THREAD_ALIGN. The stack of a dead task is released by finish_task_switch()
 * on the CPU that switched away from it (put_task_stack): into that CPU's
 * cache if a slot is free, else call_rcu(thread_stack_free_rcu), whose
 * callback tries the cache of the CPU it runs on (here: the CPU that called
 * call_rcu) and otherwise vfree()s - from softirq context, i.e. vfree_atomic().
 *
 * fork: copy_process() charges thread_create_ns (x kasan_slowdown), takes a
 * stack, gives the child a new mm with a copy of the parent's address space
 * (dup_mmap: every VMA, and the PTEs of the private ones with COW
 * write-protection; the parent's whole mm is flushed before fork returns),
 * links it under the write lock, and wake_up_new_task() places it: on the
 * CPU asked for, else on the least loaded CPU (find_idlest_cpu: an idle CPU
 * first; ties go to the first CPU after the previous choice). The engine never
 * migrates a task afterwards.
 *
 * exec: exec_mmap() (fs/exec.c): a new mm (mm_alloc), activate_mm() on this
 * CPU, mmput() of the old one; the rest of execve is exec_ns.
 *
 * mm lifetime (kernel/fork.c): mm_users (users) and mm_count (count): the
 * last mmput() runs exit_mmap() and drops the users' reference; every CPU
 * whose active_mm it is holds one more (lazy TLB, kernel.c). The last
 * mmdrop() frees the page-table root, destroy_context()s it and returns the
 * mm_struct to a cache (__mmdrop).
 */
#include <stdio.h>
#include <stdlib.h>

#include "mm/mm.h"
#include "mm/points.h"

#define NR_CACHED_STACKS 2

/* ---- trace points of this file ---- */
enum qrw_op { QRW_READ_LOCK, QRW_READ_UNLOCK, QRW_WRITE_LOCK, QRW_WRITE_UNLOCK, QRW_OP_END };

static void fmt_tasklist(char *buf, size_t len, uint64_t a, uint64_t b)
{
	static const char *const names[QRW_OP_END] = {"read_lock", "read_unlock",
						      "write_lock_irq", "write_unlock_irq"};
	(void)b;
	snprintf(buf, len, "tasklist_lock: %s", a < QRW_OP_END ? names[a] : "?");
}

static void fmt_fork(char *buf, size_t len, uint64_t a, uint64_t b)
{
	snprintf(buf, len, "sched_process_fork: child thread %llu on cpu %llu",
		 (unsigned long long)a, (unsigned long long)b);
}

static void fmt_stack(char *buf, size_t len, uint64_t a, uint64_t b)
{
	static const char *const how[] = {"from this CPU's cache", "vmalloc",
					  "to this CPU's cache", "call_rcu", "RCU: to the cache",
					  "RCU: vfree_atomic"};
	snprintf(buf, len, "tlbsim_thread_stack: 0x%llx %s", (unsigned long long)a,
		 b < sizeof(how) / sizeof(how[0]) ? how[b] : "?");
}

static const struct sim_point tp_tasklist = {"tasklist_lock", fmt_tasklist, 0};
static const struct sim_point tp_tasklist_hold = {"tasklist_lock_held", NULL, SP_QUIET};
static const struct sim_point tp_fork_enter = {"fork", NULL, 0};
static const struct sim_point tp_fork = {"sched_process_fork", fmt_fork, 0};
static const struct sim_point tp_exec = {"execve", NULL, 0};
static const struct sim_point tp_stack = {"thread_stack", fmt_stack, SP_QUIET};

/* ---- tasklist_lock ---- */

static void qrw_append(struct qrwlock *l, struct task *t)
{
	q_append(&l->wait_head, &l->wait_tail, t);
}

static struct task *qrw_pop(struct qrwlock *l)
{
	return q_pop(&l->wait_head, &l->wait_tail);
}

/* t got the lock: it stops spinning (unless it is the caller itself, which
 * has not started to spin yet) */
static void qrw_grant(struct sim *s, struct task *t)
{
	t->wait_granted = true;
	if (s->curr != &t->thread)
		sim_wake(s, &t->thread, (uint64_t)P(s, P_lock_op_ns));
}

/*
 * What the waiters do when the lock word changes: the head of wait_lock
 * proceeds if it can, and passes wait_lock on (queued_read_lock_slowpath /
 * queued_write_lock_slowpath, v6.10).
 */
static void qrw_advance(struct sim *s, struct qrwlock *l)
{
	struct task *h;
	while ((h = l->wait_head)) {
		if (!h->wait_write) {
			if (!h->qr_counted) {		/* atomic_add(_QR_BIAS) at the head */
				h->qr_counted = true;
				l->readers++;
			}
			if (l->wlocked)
				return;			/* spins on !_QW_LOCKED */
			qrw_pop(l);			/* arch_spin_unlock(&wait_lock) */
			qrw_grant(s, h);
			continue;
		}
		if (!l->wlocked && l->readers == 0) {
			qrw_pop(l);
			l->waiting = false;
			l->wlocked = true;		/* cmpxchg _QW_WAITING -> _QW_LOCKED */
			qrw_grant(s, h);
			continue;
		}
		l->waiting = true;			/* atomic_or(_QW_WAITING) */
		return;
	}
}

static void qrw_contended(struct sim *s, struct qrwlock *l, struct task *t, bool write)
{
	uint64_t t0 = s->now + t->thread.pending_ns;
	t->wait_write = write;
	t->wait_granted = false;
	t->qr_counted = false;
	qrw_append(l, t);
	qrw_advance(s, l);
	if (!t->wait_granted)
		sim_spin_wait(s);
	SIM_BUG_ON(s, !t->wait_granted);
	uint64_t waited = s->now + t->thread.pending_ns - t0;
	if (waited) {
		s->m.tasklist_lock_waits++;
		s->m.tasklist_lock_wait_ns += waited;
		if (waited > s->m.tasklist_lock_wait_max_ns)
			s->m.tasklist_lock_wait_max_ns = waited;
	}
}

/* read_lock() -> queued_read_lock() (include/asm-generic/qrwlock.h, v6.10) */
void read_lock(struct sim *s, struct qrwlock *l)
{
	sim_step_arg(s, &tp_tasklist, (uint64_t)P(s, P_lock_op_ns), QRW_READ_LOCK, 0);
	if (!l->wlocked && !l->waiting) {
		l->readers++;
		return;
	}
	qrw_contended(s, l, current_task(s), false);
}

/* read_unlock() -> queued_read_unlock() */
void read_unlock(struct sim *s, struct qrwlock *l)
{
	SIM_BUG_ON(s, l->readers <= 0);
	sim_step_arg(s, &tp_tasklist, (uint64_t)P(s, P_lock_op_ns), QRW_READ_UNLOCK, 0);
	l->readers--;
	qrw_advance(s, l);
}

/* write_lock_irq() -> local_irq_disable() + queued_write_lock() */
void write_lock_irq(struct sim *s, struct qrwlock *l)
{
	local_irq_disable(s);
	sim_step_arg(s, &tp_tasklist, (uint64_t)P(s, P_lock_op_ns), QRW_WRITE_LOCK, 0);
	if (!l->wlocked && !l->waiting && l->readers == 0 && !l->wait_head) {
		l->wlocked = true;
		return;
	}
	qrw_contended(s, l, current_task(s), true);
}

/* write_unlock_irq() -> queued_write_unlock() + local_irq_enable() (the
 * IPIs that arrived meanwhile run now) */
void write_unlock_irq(struct sim *s, struct qrwlock *l)
{
	SIM_BUG_ON(s, !l->wlocked);
	sim_step_arg(s, &tp_tasklist, (uint64_t)P(s, P_lock_op_ns), QRW_WRITE_UNLOCK, 0);
	l->wlocked = false;
	qrw_advance(s, l);
	local_irq_enable(s);
}

/* A write section's hold time (tasklist_write_hold_ns is a KASAN figure). */
static uint64_t tasklist_write_hold(struct sim *s)
{
	uint64_t h = (uint64_t)P(s, P_tasklist_write_hold_ns);
	return kernel_of(s)->kasan ? h : h / (uint64_t)P(s, P_kasan_slowdown);
}

/* The body of a write section: hold the lock (IRQs off) for its time. */
void tasklist_write_section(struct sim *s)
{
	sim_step(s, &tp_tasklist_hold, tasklist_write_hold(s));
}

/* ---- kernel stacks ---- */

static uint64_t *cached_stacks(struct sim *s, int cpu)
{
	struct kernel *k = kernel_of(s);
	if (!k->cached_stacks) {
		k->cached_stacks = kernel_obj_alloc(s, (size_t)s->nr_cpus * NR_CACHED_STACKS *
						       sizeof(*k->cached_stacks));
		if (!k->cached_stacks)
			return NULL;
	}
	return &k->cached_stacks[(size_t)cpu * NR_CACHED_STACKS];
}

/* try_release_thread_stack_to_cache() on cpu: this_cpu_cmpxchg into a free
 * slot */
static bool try_release_thread_stack_to_cache(struct sim *s, int cpu, uint64_t va)
{
	uint64_t *c = cached_stacks(s, cpu);
	for (int i = 0; c && i < NR_CACHED_STACKS; i++) {
		if (!c[i]) {
			c[i] = va;
			return true;
		}
	}
	return false;
}

/* thread_stack_free_rcu(): the RCU callback, run (softirq) on the CPU that
 * queued it; data = stack VA | that CPU (the VA is THREAD_ALIGN-aligned). */
static void thread_stack_free_rcu(struct sim *s, void *arg, uint64_t data)
{
	(void)arg;
	struct kernel *k = kernel_of(s);
	uint64_t va = data & ~(uint64_t)1023;
	int cpu = (int)(data & 1023);
	if (try_release_thread_stack_to_cache(s, cpu, va)) {
		k->proc.rcu_to_cache++;
		sim_trace(s, &tp_stack, va, 4);
		return;
	}
	/* vfree() in interrupt context defers to vfree_atomic() */
	k->proc.rcu_vfree++;
	sim_trace(s, &tp_stack, va, 5);
	vfree_atomic(s, cpu, va);
}

/* free_thread_stack() from put_task_stack() in finish_task_switch() on cpu
 * (kernel/fork.c, v6.10, CONFIG_VMAP_STACK) */
static void free_thread_stack(struct sim *s, struct task *tk, int cpu)
{
	struct kernel *k = kernel_of(s);
	uint64_t va = tk->stack;
	tk->stack = 0;
	if (try_release_thread_stack_to_cache(s, cpu, va)) {
		k->proc.to_cache++;
		sim_trace(s, &tp_stack, va, 2);
		return;
	}
	/* thread_stack_delayed_free(): call_rcu(thread_stack_free_rcu) */
	k->proc.to_rcu++;
	sim_trace(s, &tp_stack, va, 3);
	uint64_t now = s->now + (s->curr ? s->curr->pending_ns : 0);
	sim_call_at(s, now + (uint64_t)P(s, P_rcu_grace_ns), thread_stack_free_rcu, NULL, NULL,
		    va | (uint64_t)cpu);
}

/* put_task_stack(): the last reference of a dead task's stack, dropped by
 * finish_task_switch() on the CPU it died on */
void put_task_stack(struct sim *s, struct task *tk)
{
	if (tk->stack)
		free_thread_stack(s, tk, tk->thread.cpu);
}

/* alloc_thread_stack_node() on the forking CPU (kernel/fork.c, v6.10):
 * the stack's VA, or 0 when the vmalloc space is exhausted */
static uint64_t alloc_thread_stack_node(struct sim *s, int cpu)
{
	struct kernel *k = kernel_of(s);
	uint64_t size = thread_size(s), ps = hw_of(s)->geom.page_size;
	uint64_t *c = cached_stacks(s, cpu);
	for (int i = 0; c && i < NR_CACHED_STACKS; i++) {
		uint64_t va = c[i];		/* this_cpu_xchg(cached_stacks[i], NULL) */
		if (!va)
			continue;
		c[i] = 0;
		k->proc.from_cache++;
		sim_trace(s, &tp_stack, va, 0);
		/* kasan_unpoison_range(THREAD_SIZE): its shadow, size / 8 bytes */
		if (k->kasan)
			sim_charge(s, (size / 8) * (uint64_t)P(s, P_zero_4k_ns) / 4096);
		/* memset(stack, 0, THREAD_SIZE) through the stack's mapping */
		for (uint64_t off = 0; off < size; off += ps)
			kernel_access(s, va + off, true);
		sim_charge(s, size * (uint64_t)P(s, P_zero_4k_ns) / 4096);
		return va;
	}
	uint64_t va = vmalloc_range(s, size, thread_align(s));
	if (va) {
		SIM_BUG_ON(s, va & (thread_align(s) - 1));
		k->proc.vmalloced++;
		sim_trace(s, &tp_stack, va, 1);
	}
	return va;
}

/* ---- mm lifetime ---- */

/* __mmdrop() (kernel/fork.c): mm_free_pgd, destroy_context, free_mm. No CPU
 * has it loaded any more (count). */
static void __mmdrop(struct sim *s, struct mm_struct *mm)
{
	struct kernel *k = kernel_of(s);
	struct hw *hw = hw_of(s);
	SIM_BUG_ON(s, mm->users || mm->nr_vmas);
	/* every user table is gone (free_pgtables with no floor or ceiling) */
	if (frame_of(hw, mm->pgd)->nr_used == 0)
		frame_free(hw, mm->pgd);
	destroy_context(s, &mm->context);
	free(mm->vmas);
	mm->vmas = NULL;
	mm->cap_vmas = 0;
	/* off the list of mms (the last one takes its slot) */
	SIM_BUG_ON(s, k->mms[mm->slot] != mm);
	struct mm_struct *last = k->mms[--k->nr_mms];
	k->mms[mm->slot] = last;
	last->slot = mm->slot;
	mm->next_free = k->mm_free;
	k->mm_free = mm;
}

/* mmdrop() */
void mmdrop(struct sim *s, struct mm_struct *mm)
{
	SIM_BUG_ON(s, mm->count <= 0);
	if (--mm->count == 0)
		__mmdrop(s, mm);
}

/* mmput() (kernel/fork.c, v6.10): the last user tears the address space
 * down (__mmput -> exit_mmap) and drops the users' reference */
void mmput(struct sim *s, struct mm_struct *mm)
{
	SIM_BUG_ON(s, mm->users <= 0);
	if (--mm->users)
		return;
	exit_mmap(s, mm);
	mmdrop(s, mm);
}

/* ---- fork ---- */

/*
 * dup_mmap(mm, oldmm) (kernel/fork.c, v5.1; the same order through v6.18,
 * where it moved to mm/mmap.c): with oldmm's mmap_sem and then the new mm's
 * held for write, each VMA of the parent is duplicated and linked into the
 * child (vm_area_dup, get_file + i_mmap for a file), and copy_page_range()
 * copies its PTEs - write-protecting the parent's writable private ones.
 * Then the new mm is unlocked and flush_tlb_mm(oldmm) runs while oldmm is
 * still write-locked: no CPU may keep writing through a writable TLB entry
 * of a page that is now shared copy-on-write, so the parent is flushed
 * before fork returns (arm64 one ASIDE1IS broadcast; x86 a full flush of
 * the mm, IPIs to the other CPUs in its mm_cpumask). The flush is
 * unconditional: it is issued even when nothing was write-protected.
 * Not modelled: VM_DONTCOPY / VM_WIPEONFORK, the mmu notifiers, uprobes,
 * userfaultfd, accounting.
 */
void dup_mmap(struct sim *s, struct mm_struct *mm, struct mm_struct *oldmm)
{
	struct kernel *k = kernel_of(s);
	uint64_t cookie = k->hooks && k->hooks->syscall_enter
				  ? k->hooks->syscall_enter(k->hooks_ctx, SYS_FORK) : 0;
	down_write(s, &oldmm->mmap_sem);
	down_write(s, &mm->mmap_sem);
	for (int i = 0; i < oldmm->nr_vmas && !s->error; i++) {
		struct vm_area_struct *mpnt = oldmm->vmas[i];
		struct vm_area_struct *tmp = vm_area_dup_link(s, mm, mpnt);
		copy_page_range(s, tmp, mpnt);
	}
	mm->mmap_base = oldmm->mmap_base;
	up_write(s, &mm->mmap_sem);
	machine_of(s)->arch->flush_tlb_mm(s, &oldmm->context);
	/* the oracle: no CPU may still write through a cached entry of a page
	 * fork write-protected (I2, as at mprotect's return) */
	for (int i = 0; i < oldmm->nr_vmas && k->hooks && k->hooks->range_unmapped; i++) {
		const struct vm_area_struct *v = oldmm->vmas[i];
		if (!(v->vm_flags & VM_SHARED))
			k->hooks->range_unmapped(k->hooks_ctx, oldmm, v->vm_start, v->vm_end, SYS_FORK,
						 cookie);
	}
	up_write(s, &oldmm->mmap_sem);
}

/* select_task_rq_fair(SD_BALANCE_FORK) -> find_idlest_cpu(), as far as a
 * machine without NUMA or SMT goes: the CPU running the fewest threads
 * (an idle one if any), scanning from the CPU after the previous choice. */
static int select_task_rq_fork(struct sim *s)
{
	struct kernel *k = kernel_of(s);
	int best = -1, best_n = 0;
	for (int i = 0; i < s->nr_cpus; i++) {
		int c = (k->fork_next_cpu + i) % s->nr_cpus;
		int n = sim_cpu_nr_running(s, c);
		if (best < 0 || n < best_n) {
			best = c;
			best_n = n;
			if (n == 0)
				break;
		}
	}
	k->fork_next_cpu = (best + 1) % s->nr_cpus;
	return best;
}

/* ret_from_fork: the child runs its body, then exits */
static void fork_child_start(struct sim *s, struct sim_thread *t)
{
	task_of(t)->fork_fn(s, t);
	do_exit(s);
}

/*
 * fork() -> kernel_clone() -> copy_process() + wake_up_new_task()
 * (kernel/fork.c, v6.10).
 */
struct task *sys_fork(struct sim *s, size_t size, thread_fn fn, void *arg, int cpu)
{
	struct kernel *k = kernel_of(s);
	struct task *parent = current_task(s);
	SIM_BUG_ON(s, size < sizeof(struct task));
	sim_set_mode(s, MODE_SYS);
	sim_step(s, &tp_fork_enter, syscall_cost(s));
	kernel_entry(s);
	/* dup_task_struct() and the copy_* of copy_process() */
	sim_charge(s, kasan_cost(s, P(s, P_thread_create_ns)));
	uint64_t stack = alloc_thread_stack_node(s, cur_cpu(s));
	if (!stack) {
		sim_fatal(s, TLBSIM_ENOMEM, "fork: the vmalloc space has no room for a kernel "
			  "stack");
		return NULL;
	}
	/* copy_mm() -> dup_mm(): a new mm and dup_mmap() */
	struct mm_struct *mm = mm_alloc(s);
	if (mm && parent->mm)
		dup_mmap(s, mm, parent->mm);
	struct sim_thread *ct = mm ? sim_thread_alloc(s, size) : NULL;
	if (!ct) {
		sim_fatal(s, s->error ? s->error : TLBSIM_ENOMEM, "fork: out of host memory");
		return NULL;
	}
	struct task *child = task_of(ct);
	child->mm = mm;
	child->stack = stack;
	child->fork_fn = fn;
	child->parent = parent;
	/* the tasklist section: attach_pid, list_add_tail(sibling, children) */
	write_lock_irq(s, &k->tasklist_lock);
	tasklist_write_section(s);
	if (parent->children_tail)
		parent->children_tail->sibling = child;
	else
		parent->children = child;
	parent->children_tail = child;
	write_unlock_irq(s, &k->tasklist_lock);
	/* wake_up_new_task() */
	if (cpu < 0)
		cpu = select_task_rq_fork(s);
	cpu %= s->nr_cpus;
	k->proc.forks++;
	sim_trace(s, &tp_fork, (uint64_t)ct->id, (uint64_t)cpu);
	if (sim_thread_start(s, ct, fork_child_start, arg, cpu, 0)) {
		sim_fatal(s, s->error ? s->error : TLBSIM_ENOMEM, "fork: out of host memory");
		return NULL;
	}
	sim_set_mode(s, MODE_USER);
	return child;
}

/* ---- exec ---- */

/* execve() -> ... begin_new_exec() -> exec_mmap() (fs/exec.c, v6.10) */
void sys_execve(struct sim *s)
{
	struct task *tk = current_task(s);
	struct kernel *k = kernel_of(s);
	sim_set_mode(s, MODE_SYS);
	sim_step(s, &tp_exec, syscall_cost(s));
	kernel_entry(s);
	sim_charge(s, kasan_cost(s, P(s, P_exec_ns)));
	struct mm_struct *mm = mm_alloc(s);	/* bprm_mm_init() */
	if (!mm) {
		sim_fatal(s, s->error ? s->error : TLBSIM_ENOMEM, "execve: out of host memory");
		return;
	}
	struct mm_struct *old = tk->mm;
	tk->mm = mm;
	activate_mm(s, mm);
	k->proc.execs++;
	if (old)
		mmput(s, old);
	task_work_run(s);	/* the old mm's deferred final fputs */
	sim_set_mode(s, MODE_USER);
}
