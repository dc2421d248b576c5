/*
 * trace.h - scheduler-visible points and the event trace.
 *
 * A point is a static descriptor owned by the layer that defines it (the mm
 * model's "zap_pte", the arm64 back end's "tlbi_issue", ...). The engine never
 * looks inside one: it passes points to the scheduler strategy at yield points
 * and stores them in trace records. The owner supplies the text: a tracepoint
 * name (the kernel's where one exists, else tlbsim_*) and a formatter for the
 * payload (a, b), as the kernel's TP_printk does.
 *
 * Recording is off unless a trace buffer is attached (sim->trace); then every
 * yield point and every sim_trace() call appends one record.
 */
#ifndef TLBSIM_TRACE_H
#define TLBSIM_TRACE_H

#include <stddef.h>
#include <stdint.h>

/* flags of a point */
#define SP_QUIET 0x1u		/* left out of the short report unless a switch happens there */
#define SP_INSTANT 0x2u		/* an instant (a violation), not a slice, in timelines */
#define SP_FLOW_TLBI 0x4u	/* a = the CPU a broadcast TLBI removed entries from:
				 * a flow arrow from the record's CPU to CPU a */
#define SP_FLOW_IPI 0x8u	/* a = the CPU an IPI was sent to: a flow arrow */
#define SP_LEAVE 0x10u		/* the thread leaves its CPU (sleeps, exits): an
				 * instant that ends the slice before it */
#define SP_COUNTER 0x20u	/* a = a counter's new value (a counter track),
				 * not an event of the record's CPU or thread */
#define SP_IDLE 0x40u		/* CPU a goes idle: an idle slice on its track */

struct sim_point {
	const char *name;	/* as printed in timelines: "zap_pte", "ipi_send_cpumask" */
	/* one line of text for (a, b); NULL: "tlbsim_<name>" */
	void (*format)(char *buf, size_t len, uint64_t a, uint64_t b);
	unsigned flags;
};

struct trace_rec {
	uint64_t step;		/* yield points completed before this record */
	uint64_t time;		/* simulated ns */
	int16_t cpu;
	int16_t tid;
	const struct sim_point *pt;
	uint64_t a, b;
};

/* A trace buffer and its window: only records with from <= time < to are
 * kept (to == 0: no end), at most max of them (0: no limit; the rest are
 * counted in dropped). Run mode takes its per-step slow path only while the
 * window is open, so a run outside the window keeps its normal speed. */
struct trace_buf {
	struct trace_rec *r;
	uint32_t n;
	size_t cap;
	uint64_t from, to;
	uint32_t max;
	uint64_t dropped;
};

/* The engine's own events: a thread leaves its CPU to sleep, exits, or is
 * preempted at the end of its time slice. */
extern const struct sim_point tp_sched_sleep, tp_sched_exit, tp_sched_preempt;
/* CPU a goes idle (nothing in its run queue). */
extern const struct sim_point tp_cpu_idle;
/* Threads waiting in run queues (runnable, not running) is now a. */
extern const struct sim_point tp_nr_queued;
/* The thread moves from CPU a to CPU b (sim_migrate). */
extern const struct sim_point tp_sched_migrate;
/* The soft-lockup watchdog fired: a = CPU, b = ns it has been stuck. */
extern const struct sim_point tp_softlockup;

/* The text of a record (the point's formatter, or "tlbsim_<name>"). */
void trace_format(const struct trace_rec *t, char *buf, size_t len);
void trace_buf_free(struct trace_buf *b);
/* Is time t inside b's window? */
static inline int trace_in_window(const struct trace_buf *b, uint64_t t)
{
	return t >= b->from && (!b->to || t < b->to);
}

#endif
