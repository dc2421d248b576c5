/*
 * chrome.c - an event trace as Chrome trace-event JSON (ui.perfetto.dev and
 * chrome://tracing open it): one pid per simulation, one tid per simulated
 * CPU, X slices for events, i instants for violations and for a thread
 * leaving its CPU, flow arrows for the IPIs actually sent and to the CPUs a
 * broadcast TLBI removed entries from. Times are simulated ns printed as
 * fixed-point us.
 *
 * The caller chooses the stream (the CLI writes a temporary file next to the
 * target and renames it, so a failure never leaves a half-written file).
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "out/out.h"

static void ts_us(FILE *f, uint64_t ns)
{
	fprintf(f, "%" PRIu64 ".%03" PRIu64, ns / 1000u, ns % 1000u);
}

int out_chrome_trace(FILE *f, const struct trace_buf *tb, int ncpus, const char *title,
		     const char *token)
{
	fprintf(f, "{\"traceEvents\":[\n");
	fprintf(f, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"tid\":0,\"args\":{\"name\":");
	json_string(f, title);
	fprintf(f, "}}");
	for (int c = 0; c < ncpus; c++)
		fprintf(f, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":%d,\"args\":"
			   "{\"name\":\"CPU %d\"}}", c, c);
	/* A slice lasts until the next record on its CPU's track (records of
	 * one track are in time order), so slices of a track never overlap:
	 * they nest trivially, which Perfetto requires. A thread leaving its
	 * CPU is a record too (an instant), so no slice runs over idle time. */
	uint64_t flow = 1;
	for (uint32_t i = 0; tb && i < tb->n; i++) {
		const struct trace_rec *t = &tb->r[i];
		if (t->cpu < 0 || t->cpu >= ncpus)
			continue;
		char ev[200];
		trace_format(t, ev, sizeof(ev));
		if (t->pt->flags & (SP_INSTANT | SP_LEAVE)) {
			fprintf(f, ",\n{\"name\":");
			json_string(f, (t->pt->flags & SP_INSTANT) ? ev : t->pt->name);
			fprintf(f, ",\"ph\":\"i\",\"s\":\"%s\",\"pid\":1,\"tid\":%d,\"ts\":",
				(t->pt->flags & SP_INSTANT) ? "g" : "t", t->cpu);
			ts_us(f, t->time);
			fprintf(f, ",\"args\":{\"thread\":%d,\"step\":%" PRIu64 "}}", t->tid, t->step);
			continue;
		}
		uint64_t end = t->time;
		for (uint32_t j = i + 1; j < tb->n; j++)
			if (tb->r[j].cpu == t->cpu) {
				end = tb->r[j].time;
				break;
			}
		fprintf(f, ",\n{\"name\":");
		json_string(f, t->pt->name);
		fprintf(f, ",\"ph\":\"X\",\"pid\":1,\"tid\":%d,\"ts\":", t->cpu);
		ts_us(f, t->time);
		fprintf(f, ",\"dur\":");
		ts_us(f, end - t->time);
		fprintf(f, ",\"args\":{\"thread\":%d,\"step\":%" PRIu64 ",\"event\":", t->tid, t->step);
		json_string(f, ev);
		fprintf(f, "}}");
		/* an IPI sent to CPU a, or a broadcast TLBI that removed entries on
		 * CPU a: an arrow from this slice to CPU a, and an instant there */
		if ((t->pt->flags & (SP_FLOW_TLBI | SP_FLOW_IPI)) && t->a < (uint64_t)ncpus &&
		    t->a != (uint64_t)t->cpu) {
			const char *what = (t->pt->flags & SP_FLOW_IPI) ? "ipi" : "tlbi";
			fprintf(f, ",\n{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"s\",\"id\":%" PRIu64
				   ",\"pid\":1,\"tid\":%d,\"ts\":", what, what, flow, t->cpu);
			ts_us(f, t->time);
			fprintf(f, "}");
			fprintf(f, ",\n{\"name\":\"%s received\",\"ph\":\"i\",\"s\":\"t\",\"pid\":1,"
				   "\"tid\":%" PRIu64 ",\"ts\":", what, t->a);
			ts_us(f, t->time);
			fprintf(f, ",\"args\":{\"from_cpu\":%d}}", t->cpu);
			fprintf(f, ",\n{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"f\",\"bp\":\"e\","
				   "\"id\":%" PRIu64 ",\"pid\":1,\"tid\":%" PRIu64 ",\"ts\":", what, what, flow,
				t->a);
			ts_us(f, t->time);
			fprintf(f, "}");
			flow++;
		}
	}
	fprintf(f, "\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"tool\":\"tlbsim\",\"version\":"
		   "\"%s\",\"token\":", TLBSIM_VERSION);
	if (token)
		json_string(f, token);
	else
		fprintf(f, "null");
	fprintf(f, "}}\n");
	return ferror(f) ? -1 : 0;
}

/* ---- the timeline of a run (tlbsim run --trace) ---- */

/* Does a record start a phase of its thread (user code, a syscall, a page
 * fault, process lifecycle)? Matched by point name: the points belong to the
 * layers below. */
static bool phase_start(const struct trace_rec *t)
{
	static const char *const names[] = {"user", "syscall", "fault", "exit", "wait4", "fork",
					    "execve"};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(t->pt->name, names[i]) == 0)
			return true;
	return false;
}

static bool lock_point(const struct trace_rec *t)
{
	return strcmp(t->pt->name, "lock") == 0 || strcmp(t->pt->name, "kernel_lock") == 0 ||
	       strcmp(t->pt->name, "tasklist_lock") == 0;
}

/* the CPU track of a record (-1: none) */
static int cpu_track(const struct trace_rec *t, int ncpus)
{
	if (t->pt->flags & SP_COUNTER)
		return -1;
	int c = (t->pt->flags & SP_IDLE) ? (int)t->a : t->cpu;
	return c >= 0 && c < ncpus ? c : -1;
}

/* the thread of a record (-1: none) */
static int thread_track(const struct trace_rec *t)
{
	return (t->pt->flags & (SP_COUNTER | SP_IDLE)) ? -1 : t->tid;
}

#define THREAD_TID0 10000	/* thread tracks' tids: apart from the CPUs' */

static void x_slice(FILE *f, const char *name, int pid, int tid, uint64_t from, uint64_t to)
{
	fprintf(f, ",\n{\"name\":");
	json_string(f, name);
	fprintf(f, ",\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":", pid, tid);
	ts_us(f, from);
	fprintf(f, ",\"dur\":");
	ts_us(f, to - from);
}

int out_chrome_timeline(FILE *f, const struct trace_buf *tb, int ncpus, uint64_t end,
			const char *title, const char *cmdline)
{
	uint32_t n = tb ? tb->n : 0;
	int maxtid = -1;
	for (uint32_t i = 0; i < n; i++) {
		int th = thread_track(&tb->r[i]);
		if (th > maxtid)
			maxtid = th;
		if (tb->r[i].time > end)
			end = tb->r[i].time;
	}
	/* next record on the same CPU track / of the same thread / next phase
	 * start of the same thread (UINT32_MAX: none) */
	uint32_t *nc = malloc(((size_t)n + 1) * sizeof(*nc));
	uint32_t *nt = malloc(((size_t)n + 1) * sizeof(*nt));
	uint32_t *np = malloc(((size_t)n + 1) * sizeof(*np));
	uint32_t *lc = malloc((size_t)(ncpus > 0 ? ncpus : 1) * sizeof(*lc));
	uint32_t *lt = malloc((size_t)(maxtid + 2) * sizeof(*lt));
	uint32_t *lp = malloc((size_t)(maxtid + 2) * sizeof(*lp));
	uint32_t *prev = malloc((size_t)(maxtid + 2) * sizeof(*prev));
	int rc = 0;
	if (!nc || !nt || !np || !lc || !lt || !lp || !prev) {
		rc = -1;
		goto out;
	}
	for (int c = 0; c < ncpus; c++)
		lc[c] = UINT32_MAX;
	for (int k = 0; k <= maxtid; k++)
		lt[k] = lp[k] = prev[k] = UINT32_MAX;
	for (uint32_t i = n; i-- > 0;) {
		const struct trace_rec *t = &tb->r[i];
		int c = cpu_track(t, ncpus), th = thread_track(t);
		nc[i] = c >= 0 ? lc[c] : UINT32_MAX;
		if (c >= 0)
			lc[c] = i;
		nt[i] = th >= 0 ? lt[th] : UINT32_MAX;
		np[i] = th >= 0 ? lp[th] : UINT32_MAX;
		if (th >= 0) {
			lt[th] = i;
			if (phase_start(t))
				lp[th] = i;
		}
	}
	fprintf(f, "{\"traceEvents\":[\n");
	fprintf(f, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"tid\":0,\"args\":{\"name\":");
	json_string(f, title);
	fprintf(f, "}}");
	fprintf(f, ",\n{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":2,\"tid\":0,\"args\":"
		   "{\"name\":\"threads\"}}");
	for (int c = 0; c < ncpus; c++)
		fprintf(f, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":%d,\"args\":"
			   "{\"name\":\"CPU %d\"}}", c, c);
	for (int k = 0; k <= maxtid; k++)
		if (lt[k] != UINT32_MAX)
			fprintf(f, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":2,\"tid\":%d,"
				   "\"args\":{\"name\":\"thread %d\"}}", THREAD_TID0 + k, k);
	uint64_t flow = 1;
	for (uint32_t i = 0; i < n; i++) {
		const struct trace_rec *t = &tb->r[i];
		char ev[200];
		trace_format(t, ev, sizeof(ev));
		if (t->pt->flags & SP_COUNTER) {
			bool rq = t->pt == &tp_nr_queued;
			fprintf(f, ",\n{\"name\":\"%s\",\"ph\":\"C\",\"pid\":1,\"ts\":",
				rq ? "runnable threads waiting" : t->b ? "i_mmap_rwsem waiters"
								  : "mmap_lock waiters");
			ts_us(f, t->time);
			fprintf(f, ",\"args\":{\"%s\":%" PRIu64 "}}", rq ? "queued" : "waiters", t->a);
			continue;
		}
		/* the CPU track: a slice until the next record on the CPU */
		int c = cpu_track(t, ncpus);
		if (c >= 0 && (t->pt->flags & (SP_INSTANT | SP_LEAVE))) {
			fprintf(f, ",\n{\"name\":");
			json_string(f, (t->pt->flags & SP_INSTANT) ? ev : t->pt->name);
			fprintf(f, ",\"ph\":\"i\",\"s\":\"%s\",\"pid\":1,\"tid\":%d,\"ts\":",
				(t->pt->flags & SP_INSTANT) ? "g" : "t", c);
			ts_us(f, t->time);
			fprintf(f, ",\"args\":{\"thread\":%d,\"step\":%" PRIu64 "}}", t->tid, t->step);
		} else if (c >= 0) {
			x_slice(f, (t->pt->flags & SP_IDLE) ? "idle" : t->pt->name, 1, c, t->time,
				nc[i] != UINT32_MAX ? tb->r[nc[i]].time : end);
			fprintf(f, ",\"args\":{\"thread\":%d,\"event\":", t->tid);
			json_string(f, ev);
			fprintf(f, "}}");
			if ((t->pt->flags & (SP_FLOW_TLBI | SP_FLOW_IPI)) && t->a < (uint64_t)ncpus &&
			    t->a != (uint64_t)c) {
				const char *what = (t->pt->flags & SP_FLOW_IPI) ? "ipi" : "tlbi";
				fprintf(f, ",\n{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"s\",\"id\":%" PRIu64
					   ",\"pid\":1,\"tid\":%d,\"ts\":", what, what, flow, c);
				ts_us(f, t->time);
				fprintf(f, "}");
				fprintf(f, ",\n{\"name\":\"%s received\",\"ph\":\"i\",\"s\":\"t\",\"pid\":1,"
					   "\"tid\":%" PRIu64 ",\"ts\":", what, t->a);
				ts_us(f, t->time);
				fprintf(f, ",\"args\":{\"from_cpu\":%d}}", c);
				fprintf(f, ",\n{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"f\",\"bp\":\"e\","
					   "\"id\":%" PRIu64 ",\"pid\":1,\"tid\":%" PRIu64 ",\"ts\":", what,
					what, flow, t->a);
				ts_us(f, t->time);
				fprintf(f, "}");
				flow++;
			}
		}
		/* the thread's track: a phase (user, a syscall, a fault) until its
		 * next phase, and inside it each record until the thread's next */
		int th = thread_track(t);
		if (th < 0)
			continue;
		bool exits = (t->pt->flags & SP_LEAVE) && strcmp(t->pt->name, "sched_process_exit") == 0;
		uint64_t cend = nt[i] != UINT32_MAX ? tb->r[nt[i]].time : exits ? t->time : end;
		if (phase_start(t)) {
			/* the phase ends at the next one, or where the thread's last
			 * record ends */
			uint64_t pend = end;
			if (np[i] != UINT32_MAX) {
				pend = tb->r[np[i]].time;
			} else {
				uint32_t j = i;
				while (nt[j] != UINT32_MAX)
					j = nt[j];
				const struct trace_rec *last = &tb->r[j];
				if ((last->pt->flags & SP_LEAVE) &&
				    strcmp(last->pt->name, "sched_process_exit") == 0)
					pend = last->time;
			}
			char name[200];
			if (strcmp(t->pt->name, "syscall") == 0 && strncmp(ev, "sys_enter: ", 11) == 0) {
				snprintf(name, sizeof(name), "%s", ev + 11);
				char *paren = strrchr(name, '(');
				if (paren && paren != name)
					*paren = 0;
			} else {
				snprintf(name, sizeof(name), "%s",
					 strcmp(t->pt->name, "fault") == 0 ? "page fault" : t->pt->name);
			}
			x_slice(f, name, 2, THREAD_TID0 + th, t->time, pend);
			fprintf(f, ",\"args\":{\"event\":");
			json_string(f, ev);
			fprintf(f, "}}");
		}
		const char *name = t->pt->name;
		if (t->pt->flags & SP_LEAVE) {
			if (t->pt == &tp_sched_sleep)
				name = prev[th] != UINT32_MAX && lock_point(&tb->r[prev[th]]) ? "lock wait"
											  : "sleep";
			else if (t->pt == &tp_sched_preempt)
				name = "runnable (preempted)";
			else if (t->pt == &tp_sched_migrate)
				name = "migrating";
		}
		x_slice(f, name, 2, THREAD_TID0 + th, t->time, cend);
		fprintf(f, ",\"args\":{\"cpu\":%d,\"event\":", t->cpu);
		if (t->pt == &tp_sched_sleep && prev[th] != UINT32_MAX && lock_point(&tb->r[prev[th]])) {
			char lk[200];
			trace_format(&tb->r[prev[th]], lk, sizeof(lk));
			json_string(f, lk);
		} else {
			json_string(f, ev);
		}
		fprintf(f, "}}");
		prev[th] = i;
	}
	fprintf(f, "\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"tool\":\"tlbsim\",\"version\":"
		   "\"%s\",\"cmdline\":", TLBSIM_VERSION);
	json_string(f, cmdline ? cmdline : "");
	fprintf(f, ",\"window_from_ns\":%" PRIu64 ",\"window_to_ns\":", tb ? tb->from : 0);
	if (tb && tb->to)
		fprintf(f, "%" PRIu64, tb->to);
	else
		fprintf(f, "null");
	fprintf(f, ",\"records\":%" PRIu32 ",\"dropped\":%" PRIu64 "}}\n", n, tb ? tb->dropped : 0);
	rc = ferror(f) ? -1 : 0;
out:
	free(nc);
	free(nt);
	free(np);
	free(lc);
	free(lt);
	free(lp);
	free(prev);
	return rc;
}

/* The event name of a record's text "name: fields" (the kernel's tracepoint
 * where the point has one), else the point's name. */
static void split_event(const struct trace_rec *t, const char *text, char *evname, size_t len,
			const char **fields)
{
	size_t k = 0;
	while ((text[k] >= 'a' && text[k] <= 'z') || (text[k] >= 'A' && text[k] <= 'Z') ||
	       (text[k] >= '0' && text[k] <= '9') || text[k] == '_')
		k++;
	if (k && text[k] == ':' && (text[k + 1] == ' ' || !text[k + 1])) {
		snprintf(evname, len, "%.*s", (int)k, text);
		*fields = text[k + 1] ? text + k + 2 : "";
	} else if (k && !text[k]) {
		snprintf(evname, len, "%s", text);	/* "tlbsim_<name>": no fields */
		*fields = "";
	} else {
		snprintf(evname, len, "%s", t->pt->name);
		*fields = text;
	}
}

int out_ftrace(FILE *f, const struct trace_buf *tb, int ncpus, const char *task)
{
	uint32_t n = tb ? tb->n : 0;
	char comm[16];
	snprintf(comm, sizeof(comm), "%s", task && *task ? task : "tlbsim");
	for (char *p = comm; *p; p++)
		if (*p == ' ' || *p == '-')
			*p = '_';
	fprintf(f, "# tracer: nop\n#\n# entries-in-buffer/entries-written: %" PRIu32 "/%" PRIu64
		   "   #P:%d\n#\n", n, (uint64_t)n + (tb ? tb->dropped : 0), ncpus);
	fprintf(f, "#           TASK-PID     CPU#  ||||    TIMESTAMP  FUNCTION\n"
		   "#              | |         |   ||||       |         |\n");
	/* the next record on each record's CPU: what a sched_switch switches to */
	uint32_t *nc = malloc(((size_t)n + 1) * sizeof(*nc));
	uint32_t *lc = malloc((size_t)(ncpus > 0 ? ncpus : 1) * sizeof(*lc));
	if (!nc || !lc) {
		free(nc);
		free(lc);
		return -1;
	}
	for (int c = 0; c < ncpus; c++)
		lc[c] = UINT32_MAX;
	for (uint32_t i = n; i-- > 0;) {
		int c = cpu_track(&tb->r[i], ncpus);
		nc[i] = c >= 0 ? lc[c] : UINT32_MAX;
		if (c >= 0)
			lc[c] = i;
	}
	for (uint32_t i = 0; i < n; i++) {
		const struct trace_rec *t = &tb->r[i];
		char text[200], evname[200];
		const char *fields;
		trace_format(t, text, sizeof(text));
		split_event(t, text, evname, sizeof(evname), &fields);
		/* sched_switch with the kernel's fields (include/trace/events/
		 * sched.h; prio 120: every simulated task runs at nice 0), the next
		 * task being the next one seen on the CPU, or swapper/N (idle) */
		if ((t->pt == &tp_sched_sleep || t->pt == &tp_sched_preempt) && nc[i] != UINT32_MAX &&
		    t->tid >= 0) {
			const struct trace_rec *nx = &tb->r[nc[i]];
			char next[48];
			if (nx->pt->flags & SP_IDLE)
				snprintf(next, sizeof(next), "swapper/%d next_pid=0", (int)nx->a);
			else
				snprintf(next, sizeof(next), "%s next_pid=%d", nx->tid >= 0 ? comm : "?",
					 nx->tid >= 0 ? nx->tid : 0);
			snprintf(text, sizeof(text), "prev_comm=%s prev_pid=%d prev_prio=120 prev_state=%s "
				 "==> next_comm=%s next_prio=120", comm, t->tid,
				 t->pt == &tp_sched_preempt ? "R+" : "S", next);
			fields = text;
		}
		int cpu = (t->pt->flags & SP_IDLE) ? (int)t->a : t->cpu;
		if (cpu < 0)
			cpu = 0;
		if (t->tid >= 0)
			fprintf(f, "%16s-%-7d", comm, t->tid);
		else
			fprintf(f, "%16s-%-7d", "<idle>", 0);
		fprintf(f, " [%03d] .... %5" PRIu64 ".%09" PRIu64 ": %s:%s%s\n", cpu,
			t->time / 1000000000u, t->time % 1000000000u, evname, *fields ? " " : "",
			fields);
	}
	free(nc);
	free(lc);
	return ferror(f) ? -1 : 0;
}
