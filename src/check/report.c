/*
 * report.c - the human report and the JSON of a `tlbsim check` result.
 *
 * The trace lines use the kernel's tracepoint names and layouts where they
 * exist (sys_enter, page_fault_user, ipi_send_cpumask, tlb_flush) and
 * tlbsim_* for simulator events (sim/trace.h: each point formats itself).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "check/check.h"
#include "out/out.h"

/* Events worth a line in the human report (PTE installs, lock-free sub-steps
 * of tlb_finish_mmu and thread creation are left out unless they are where
 * the thread switched). */
static bool interesting(const struct trace_rec *t)
{
	return !(t->pt->flags & SP_QUIET);
}

static void print_trace_line(FILE *f, const struct trace_rec *t)
{
	char ev[200];
	trace_format(t, ev, sizeof(ev));
	char who[16];
	if (t->tid >= 0)
		snprintf(who, sizeof(who), "T%-2d", t->tid);
	else
		snprintf(who, sizeof(who), "-- ");	/* a callback or completion entity */
	fprintf(f, "  %6" PRIu64 "  %12" PRIu64 ".%03" PRIu64 "  %s [%03d]  %s\n", t->step,
		t->time / 1000u, t->time % 1000u, who, t->cpu, ev);
}

void check_print_report(FILE *f, const struct check_result *r, const char *replay_cmd)
{
	const struct tlbsim_resolved *res = &r->res;
	fprintf(f, "workload %s (", res->workload->name);
	for (int i = 0; i < res->nwparams; i++)
		fprintf(f, "%s%s=%s", i ? " " : "", res->wparams[i].name, res->wparams[i].value);
	fprintf(f, "), profile %s, %d CPUs, iters %" PRId64 ", policy", res->profile->name,
		res->cpus, res->iters);
	for (int k = 0; k < tlbsim_knob_count(); k++)
		fprintf(f, " %s=%s", tlbsim_knob_get(k)->name,
			tlbsim_policy_value_name(&r->cfg.policy, k));
	fprintf(f, "\n");
	double secs = (double)r->host_ns / 1e9;
	if (!r->found) {
		fprintf(f, "no violation: %" PRIu64 " schedules, %" PRIu64 " steps explored%s in "
			"%.2f s (%.0f schedules/s, %.0f steps/s)\n", r->schedules, r->steps,
			r->exhausted ? " (search space exhausted within the bound)" : "", secs,
			secs > 0 ? (double)r->schedules / secs : 0.0,
			secs > 0 ? (double)r->steps / secs : 0.0);
		if (r->cut_schedules)
			fprintf(f, "note: %" PRIu64 " schedule(s) were cut at %" PRIu64 " steps and not "
				"explored to their end (raise --max-steps)\n", r->cut_schedules,
				r->max_steps);
		if (r->stop_signal)
			fprintf(f, "note: the search was interrupted by a signal\n");
		else if (r->time_limited)
			fprintf(f, "note: the host-time budget (--time-limit) ended the search\n");
		return;
	}
	const struct violation_rec *v = &r->v;
	fprintf(f, "VIOLATION %s: %s\n", inv_name(v->kind), inv_desc(v->kind));
	fprintf(f, "  %s\n", v->text);
	fprintf(f, "  cpu:    %d\n", v->cpu);
	if (v->kind == INV_LITMUS) {
		/* an outcome of loads and stores: no address, frame or flush */
	} else {
		if (v->has_va)
			fprintf(f, "  va:     0x%" PRIx64 "\n", v->va);
		else
			fprintf(f, "  va:     none (the invariant is about a table, not an address)\n");
		fprintf(f, "  frame:  %u\n", v->frame);
		fprintf(f, "  entry:  %s\n", v->entry);
		fprintf(f, "  flush:  %s\n", v->flush);
	}
	fprintf(f, "  found after %" PRIu64 " schedule(s), %" PRIu64 " steps in %.3f s; ",
		r->schedules, r->steps, secs);
	switch (r->minimised) {
	case MIN_COMPLETE:
		fprintf(f, "schedule minimised to %u preemption(s) in %" PRIu64 " replays\n",
			r->preemptions, r->minimise_runs);
		break;
	case MIN_OFF:
		fprintf(f, "schedule not minimised: %u preemption(s)\n", r->preemptions);
		break;
	case MIN_TIME_LIMIT:
	case MIN_SIGNAL:
		fprintf(f, "schedule NOT fully minimised: %s stopped minimisation after %" PRIu64
			" replays at %u preemption(s)\n",
			r->minimised == MIN_SIGNAL ? "a signal" : "the time limit (--time-limit)",
			r->minimise_runs, r->preemptions);
		break;
	}
	fprintf(f, "\ntrace (step, simulated time us, thread, [cpu], event):\n");
	int last_tid = -2;
	for (uint32_t i = 0; i < r->trace.n; i++) {
		const struct trace_rec *t = &r->trace.r[i];
		bool sw = t->tid != last_tid;
		if (sw || interesting(t) || i + 1 == r->trace.n) {
			if (sw && last_tid != -2 && t->tid >= 0)
				fprintf(f, "  ------  switch to T%d\n", t->tid);
			else if (sw && last_tid != -2)
				fprintf(f, "  ------  a callback or completion (no thread)\n");
			print_trace_line(f, t);
		}
		last_tid = t->tid;
	}
	if (r->token) {
		fprintf(f, "\nreplay: %s\n", replay_cmd);
		fprintf(f, "token: %s\n", r->token);
		return;
	}
	fprintf(f, "\nreplay: none: the schedule has %u decisions and its token would take %zu "
		"bytes, more than one command-line argument may hold (%u); %s\n", r->ndec,
		r->token_len, CHECK_TOKEN_MAX, r->minimised == MIN_OFF
		? "drop --no-minimise, or check a smaller instance (-w, --iters, --threads)"
		: "check a smaller instance (-w, --iters, --threads)");
	fprintf(f, "token: none\n");
}

void check_print_json(FILE *f, const struct check_result *r, const char *cmdline,
		      const char *replay_cmd)
{
	fprintf(f, "{\"tool\":\"tlbsim\",\"version\":\"%s\",\"command\":", TLBSIM_VERSION);
	json_string(f, cmdline);
	fprintf(f, ",\"workload\":");
	json_string(f, r->res.workload->name);
	fprintf(f, ",\"profile\":");
	json_string(f, r->res.profile->name);
	fprintf(f, ",\"cpus\":%d,\"iters\":%" PRId64 ",\"seed\":%" PRIu64 ",\"policy\":{",
		r->res.cpus, r->res.iters, r->cfg.seed);
	for (int k = 0; k < tlbsim_knob_count(); k++) {
		fprintf(f, "%s\"%s\":", k ? "," : "", tlbsim_knob_get(k)->name);
		json_string(f, tlbsim_policy_value_name(&r->cfg.policy, k));
	}
	fprintf(f, "},\"schedules\":%" PRIu64 ",\"steps\":%" PRIu64 ",\"exhausted\":%s,"
		   "\"cut_schedules\":%" PRIu64 ",\"max_steps\":%" PRIu64 ",\"stopped\":%s,"
		   "\"violation\":", r->schedules, r->steps, r->exhausted ? "true" : "false",
		r->cut_schedules, r->max_steps,
		r->stop_signal ? "\"signal\"" : r->time_limited ? "\"time limit\"" : "null");
	if (!r->found) {
		fprintf(f, "null}\n");
		return;
	}
	const struct violation_rec *v = &r->v;
	fprintf(f, "{\"invariant\":");
	json_string(f, inv_name(v->kind));
	fprintf(f, ",\"cpu\":%d,\"va\":", v->cpu);
	if (v->has_va)
		fprintf(f, "\"0x%" PRIx64 "\"", v->va);
	else
		fprintf(f, "null");
	fprintf(f, ",\"frame\":%u,\"text\":", v->frame);
	json_string(f, v->text);
	fprintf(f, ",\"entry\":");
	json_string(f, v->entry);
	fprintf(f, ",\"flush\":");
	json_string(f, v->flush);
	fprintf(f, ",\"preemptions\":%u,\"decisions\":%u,\"minimised\":", r->preemptions,
		r->ndec);
	json_string(f, check_minimise_name(r->minimised));
	fprintf(f, ",\"token\":");
	if (r->token)
		json_string(f, r->token);
	else
		fprintf(f, "null");
	fprintf(f, ",\"replay\":");
	if (r->token && replay_cmd)
		json_string(f, replay_cmd);
	else
		fprintf(f, "null");
	fprintf(f, ",\"trace\":[");
	for (uint32_t i = 0; i < r->trace.n; i++) {
		const struct trace_rec *t = &r->trace.r[i];
		char ev[200];
		trace_format(t, ev, sizeof(ev));
		fprintf(f, "%s{\"step\":%" PRIu64 ",\"time_ns\":%" PRIu64 ",\"cpu\":%d,\"thread\":%d,"
			   "\"event\":", i ? "," : "", t->step, t->time, t->cpu, t->tid);
		json_string(f, ev);
		fputc('}', f);
	}
	fprintf(f, "]}}\n");
}
