/* trace.c - trace record text and buffers (see trace.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "sim/trace.h"

static void fmt_sleep(char *buf, size_t len, uint64_t a, uint64_t b)
{
	(void)a;
	(void)b;
	snprintf(buf, len, "sched_switch: prev_state=S (the thread sleeps; its CPU runs "
		 "something else or idles)");
}

static void fmt_exit(char *buf, size_t len, uint64_t a, uint64_t b)
{
	(void)a;
	(void)b;
	snprintf(buf, len, "sched_process_exit");
}

static void fmt_preempt(char *buf, size_t len, uint64_t a, uint64_t b)
{
	(void)a;
	(void)b;
	snprintf(buf, len, "sched_switch: prev_state=R (time slice over; the thread waits in "
		 "its CPU's run queue)");
}

static void fmt_migrate(char *buf, size_t len, uint64_t a, uint64_t b)
{
	snprintf(buf, len, "sched_migrate_task: orig_cpu=%" PRIu64 " dest_cpu=%" PRIu64, a, b);
}

static void fmt_softlockup(char *buf, size_t len, uint64_t a, uint64_t b)
{
	snprintf(buf, len, "watchdog: BUG: soft lockup - CPU#%" PRIu64 " stuck for %" PRIu64 "s!",
		 a, b / 1000000000u);
}

static void fmt_cpu_idle(char *buf, size_t len, uint64_t a, uint64_t b)
{
	(void)b;
	snprintf(buf, len, "cpu_idle: state=1 cpu_id=%" PRIu64, a);
}

static void fmt_nr_queued(char *buf, size_t len, uint64_t a, uint64_t b)
{
	(void)b;
	snprintf(buf, len, "tlbsim_nr_queued: runnable threads waiting in run queues=%" PRIu64, a);
}

const struct sim_point tp_cpu_idle = {"cpu_idle", fmt_cpu_idle, SP_QUIET | SP_IDLE};
const struct sim_point tp_nr_queued = {"nr_queued", fmt_nr_queued, SP_QUIET | SP_COUNTER};
const struct sim_point tp_sched_sleep = {"sched_switch", fmt_sleep, SP_QUIET | SP_LEAVE};
const struct sim_point tp_sched_exit = {"sched_process_exit", fmt_exit, SP_QUIET | SP_LEAVE};
const struct sim_point tp_sched_preempt = {"sched_switch", fmt_preempt, SP_QUIET | SP_LEAVE};
const struct sim_point tp_sched_migrate = {"sched_migrate_task", fmt_migrate, SP_LEAVE};
const struct sim_point tp_softlockup = {"softlockup", fmt_softlockup, SP_INSTANT};

void trace_format(const struct trace_rec *t, char *buf, size_t len)
{
	if (t->pt->format)
		t->pt->format(buf, len, t->a, t->b);
	else
		snprintf(buf, len, "tlbsim_%s", t->pt->name);
}

void trace_buf_free(struct trace_buf *b)
{
	free(b->r);
	b->r = NULL;
	b->n = 0;
	b->cap = 0;
	b->dropped = 0;
}
