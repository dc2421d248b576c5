/*
 * exit.c - a task's death and its reaping (kernel/exit.c, v6.10).
 *
 * do_exit(): exit_mm() (mmput: the last user runs exit_mmap), the rest of
 * do_exit's work (exit_ns), exit_notify() - a tasklist_lock write section
 * (IRQs off) that makes the task a zombie, hands its children to init and
 * wakes the parent waiting in wait4 (do_notify_parent -> __wake_up_parent) -
 * then do_task_dead(): the CPU switches away and finish_task_switch() drops
 * the kernel stack there (put_task_stack, fork.c). A task whose parent is
 * gone reaps itself (autoreap: release_task at the end of exit_notify).
 *
 * wait4(-1) -> do_wait() -> __do_wait(): on the parent's wait_chldexit
 * queue, under read_lock(&tasklist_lock) look at the children in fork order
 * (wait_child_ns each) until a zombie; wait_task_zombie() drops the read
 * lock and release_task() takes the write lock to unhash it. With no zombie
 * the parent sleeps until a child's exit_notify wakes it, then looks again.
 *
 * Simplification: exit_mm() does not enter lazy TLB mode before mmput (v6.10
 * calls enter_lazy_tlb there, after which an x86 CPU leaves to init_mm at
 * exit_mmap's flush instead of flushing the dying PCID): here the exiting CPU
 * flushes the mm as a running one; the dead mm's entries are gone either way
 * for every later user of the PCID.
 */
#include <stdio.h>
#include <stdlib.h>

#include "mm/mm.h"
#include "mm/points.h"

static void fmt_exit(char *buf, size_t len, uint64_t a, uint64_t b)
{
	(void)b;
	snprintf(buf, len, "sched_process_exit: thread %llu", (unsigned long long)a);
}

static void fmt_wait(char *buf, size_t len, uint64_t a, uint64_t b)
{
	snprintf(buf, len, "tlbsim_wait4: looked at %llu child(ren)%s", (unsigned long long)a,
		 b ? ", reaping one" : ", none exited");
}

static const struct sim_point tp_exit_enter = {"exit", fmt_exit, 0};
static const struct sim_point tp_wait_enter = {"wait4", NULL, 0};
static const struct sim_point tp_wait_scan = {"wait4_scan", fmt_wait, 0};

static void unlink_child(struct task *parent, struct task *child)
{
	struct task *prev = NULL;
	for (struct task *c = parent->children; c; prev = c, c = c->sibling) {
		if (c != child)
			continue;
		if (prev)
			prev->sibling = c->sibling;
		else
			parent->children = c->sibling;
		if (parent->children_tail == c)
			parent->children_tail = prev;
		c->sibling = NULL;
		return;
	}
}

/* release_task() (kernel/exit.c, v6.10): the write section that unhashes the
 * dead task (__exit_signal, __unhash_process: off its parent's children) */
static void release_task(struct sim *s, struct task *p)
{
	struct kernel *k = kernel_of(s);
	write_lock_irq(s, &k->tasklist_lock);
	tasklist_write_section(s);
	if (p->parent)
		unlink_child(p->parent, p);
	p->exit_state = EXIT_DEAD;
	write_unlock_irq(s, &k->tasklist_lock);
	k->proc.reaped++;
}

/* exit_notify() (kernel/exit.c, v6.10) */
static void exit_notify(struct sim *s, struct task *tk)
{
	struct kernel *k = kernel_of(s);
	write_lock_irq(s, &k->tasklist_lock);
	tasklist_write_section(s);
	/* forget_original_parent(): the children go to the child reaper; a
	 * zombie among them is reaped by it at once */
	for (struct task *c = tk->children, *n; c; c = n) {
		n = c->sibling;
		c->sibling = NULL;
		c->parent = NULL;
		if (c->exit_state == EXIT_ZOMBIE)
			c->exit_state = EXIT_DEAD;
	}
	tk->children = tk->children_tail = NULL;
	bool autoreap = !tk->parent;
	tk->exit_state = autoreap ? EXIT_DEAD : EXIT_ZOMBIE;
	/* do_notify_parent() -> __wake_up_parent() */
	struct task *p = tk->parent;
	if (p && p->wait_chld) {
		p->chld_woken = true;
		if (p->chld_sleeping) {
			p->chld_sleeping = false;
			sim_wake(s, &p->thread, (uint64_t)P(s, P_wakeup_ns));
		}
	}
	write_unlock_irq(s, &k->tasklist_lock);
	if (autoreap)
		release_task(s, tk);
}

/* exit_mm() (kernel/exit.c, v6.10): current->mm = NULL, mmput(); the CPU
 * keeps the mm as its active_mm until it switches to another one */
static void exit_mm(struct sim *s, struct task *tk)
{
	struct mm_struct *mm = tk->mm;
	if (!mm)
		return;
	mmput(s, mm);
	tk->mm = NULL;
}

/* do_exit() (kernel/exit.c, v6.10) of the current task */
void do_exit(struct sim *s)
{
	struct task *tk = current_task(s);
	struct kernel *k = kernel_of(s);
	sim_set_mode(s, MODE_SYS);
	sim_step_arg(s, &tp_exit_enter, syscall_cost(s), (uint64_t)tk->thread.id, 0);
	kernel_entry(s);
	exit_mm(s, tk);
	sim_charge(s, kasan_cost(s, P(s, P_exit_ns)));
	task_work_run(s);	/* exit_task_work: the mm's deferred final fputs */
	exit_notify(s, tk);
	k->proc.exits++;
	/* do_task_dead() -> __schedule() -> finish_task_switch() on this CPU */
	put_task_stack(s, tk);
	/* the task's own buffers: a dead task never gathers again */
	if (tk->gather_pages) {
		struct hw *hw = hw_of(s);
		uint64_t ps = hw->geom.page_size;
		free(tk->gather_pages);
		tk->gather_pages = NULL;
		sim_host_release(s, (MMU_GATHER_BUNDLE + (uint64_t)max_gather_batch(ps) *
				     max_gather_batch_count(ps)) * sizeof(uint32_t));
	}
}

/* wait4(-1, NULL, 0, NULL) -> kernel_wait4() -> do_wait() -> __do_wait()
 * (kernel/exit.c, v6.10) */
struct task *sys_wait4(struct sim *s)
{
	struct task *tk = current_task(s);
	struct kernel *k = kernel_of(s);
	struct task *reaped = NULL;
	sim_set_mode(s, MODE_SYS);
	sim_step(s, &tp_wait_enter, syscall_cost(s));
	kernel_entry(s);
	/* add_wait_queue(&current->signal->wait_chldexit) */
	tk->wait_chld = true;
	for (;;) {
		tk->chld_woken = false;
		read_lock(s, &k->tasklist_lock);
		/* do_wait_thread(): wait_consider_task() per child, in order */
		uint64_t n = 0;
		struct task *z = NULL;
		for (struct task *c = tk->children; c && !z; c = c->sibling) {
			n++;
			if (c->exit_state == EXIT_ZOMBIE)
				z = c;
		}
		sim_step_arg(s, &tp_wait_scan, n * kasan_cost(s, P(s, P_wait_child_ns)), n, z != NULL);
		if (z) {
			/* wait_task_zombie(): EXIT_ZOMBIE -> EXIT_DEAD (only we
			 * reap it now), read_unlock, release_task() */
			z->exit_state = EXIT_DEAD;
			read_unlock(s, &k->tasklist_lock);
			release_task(s, z);
			reaped = z;
			break;
		}
		read_unlock(s, &k->tasklist_lock);
		if (!tk->children)
			break;			/* -ECHILD */
		if (!tk->chld_woken) {
			tk->chld_sleeping = true;
			sim_sleep(s);
		}
	}
	tk->wait_chld = false;
	tk->chld_sleeping = false;
	sim_set_mode(s, MODE_USER);
	return reaped;
}
