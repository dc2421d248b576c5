/*
 * chrome.c - an event trace as Chrome trace-event JSON (ui.perfetto.dev and
 * chrome://tracing open it): one pid per simulation, one tid per simulated
 * CPU, X slices for events, i instants for violations, flow arrows for IPIs
 * and broadcast TLBIs. Times are simulated ns printed as fixed-point us.
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
	uint64_t flow = 1;
	for (uint32_t i = 0; tb && i < tb->n; i++) {
		const struct trace_rec *t = &tb->r[i];
		if (t->cpu < 0)
			continue;
		/* slice until the next event of the same thread (at least 1 ns) */
		uint64_t end = t->time + 1;
		for (uint32_t j = i + 1; j < tb->n; j++)
			if (tb->r[j].tid == t->tid) {
				if (tb->r[j].time > t->time)
					end = tb->r[j].time;
				break;
			}
		char ev[200];
		trace_format(t, ev, sizeof(ev));
		if (t->pt->flags & SP_INSTANT) {
			fprintf(f, ",\n{\"name\":");
			json_string(f, ev);
			fprintf(f, ",\"ph\":\"i\",\"s\":\"g\",\"pid\":1,\"tid\":%d,\"ts\":", t->cpu);
			ts_us(f, t->time);
			fprintf(f, "}");
			continue;
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
		/* broadcast TLBIs and IPIs: flow arrows to every other CPU */
		if (t->pt->flags & (SP_FLOW_TLBI | SP_FLOW_IPI)) {
			const char *what = (t->pt->flags & SP_FLOW_IPI) ? "ipi" : "tlbi";
			for (int c = 0; c < ncpus; c++) {
				if (c == t->cpu)
					continue;
				fprintf(f, ",\n{\"name\":\"%s\",\"ph\":\"s\",\"id\":%" PRIu64 ",\"pid\":1,"
					   "\"tid\":%d,\"ts\":", what, flow, t->cpu);
				ts_us(f, t->time);
				fprintf(f, "}");
				fprintf(f, ",\n{\"name\":\"%s received\",\"ph\":\"X\",\"pid\":1,\"tid\":%d,"
					   "\"ts\":", what, c);
				ts_us(f, t->time);
				fprintf(f, ",\"dur\":0.001}");
				fprintf(f, ",\n{\"name\":\"%s\",\"ph\":\"f\",\"bp\":\"e\",\"id\":%" PRIu64
					   ",\"pid\":1,\"tid\":%d,\"ts\":", what, flow, c);
				ts_us(f, t->time);
				fprintf(f, "}");
				flow++;
			}
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
