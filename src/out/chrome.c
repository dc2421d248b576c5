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
#include <stdio.h>

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
