/*
 * checker.c - the `tlbsim check` driver (see checker.h).
 *
 * Every schedule is a fresh struct sim running the same mm code as `run`,
 * with the exploration strategy choosing at each yield point. The first
 * violation stops the search; its decision list is then minimised (each
 * preemption is replaced by "continue the current thread" while the same
 * invariant still fires) and replayed once more with tracing on.
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check/checker.h"
#include "out/out.h"
#include "workload/workload.h"

static uint64_t host_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void check_config_defaults(struct tlbsim_config *cfg, bool cpus_given, bool iters_given)
{
	const struct tlbsim_workload_desc *d = tlbsim_workload_find(cfg->workload);
	if (!d)
		return;
	if (!iters_given && d->check_iters)
		cfg->iters = d->check_iters;
	if (!cpus_given && d->check_cpus)
		cfg->cpus = d->check_cpus;
	/* check-mode wparams go first; the user's -w come after and win */
	if (d->check_wparams && *d->check_wparams) {
		struct tlbsim_kv extra[TLBSIM_MAX_WPARAMS];
		memset(extra, 0, sizeof(extra));
		int n = 0;
		char buf[256];
		snprintf(buf, sizeof(buf), "%s", d->check_wparams);
		for (char *tok = strtok(buf, ","); tok && n < TLBSIM_MAX_WPARAMS;
		     tok = strtok(NULL, ",")) {
			char *eq = strchr(tok, '=');
			if (!eq)
				continue;
			*eq = 0;
			snprintf(extra[n].name, sizeof(extra[n].name), "%s", tok);
			snprintf(extra[n].value, sizeof(extra[n].value), "%s", eq + 1);
			n++;
		}
		int keep = cfg->nwparams;
		if (keep + n > TLBSIM_MAX_WPARAMS)
			keep = TLBSIM_MAX_WPARAMS - n;
		memmove(&cfg->wparams[n], &cfg->wparams[0], (size_t)keep * sizeof(cfg->wparams[0]));
		memcpy(&cfg->wparams[0], extra, (size_t)n * sizeof(extra[0]));
		cfg->nwparams = keep + n;
	}
	/* livelocks are detected sooner in check mode unless -D says otherwise */
	bool have = false;
	for (int i = 0; i < cfg->noverrides; i++)
		if (cfg->overrides[i].param == P_livelock_faults)
			have = true;
	if (!have && cfg->noverrides < TLBSIM_MAX_OVERRIDES) {
		cfg->overrides[cfg->noverrides].param = P_livelock_faults;
		cfg->overrides[cfg->noverrides].value = 64;
		cfg->noverrides++;
	}
}

/* FNV-1a over everything that determines a schedule's behaviour. */
uint32_t config_hash(const struct tlbsim_config *cfg, const struct tlbsim_resolved *res)
{
	char buf[4096];
	size_t n = (size_t)snprintf(buf, sizeof(buf), "%s|%s|%d|%d|%" PRId64 "|%" PRIu64,
				    res->workload->name, res->profile->name, res->cpus, res->threads,
				    res->iters, cfg->seed);
	for (int i = 0; i < res->nwparams && n < sizeof(buf); i++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "|%s=%s", res->wparams[i].name,
				      res->wparams[i].value);
	for (int k = 0; k < tlbsim_knob_count() && n < sizeof(buf); k++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "|%s",
				      tlbsim_policy_value_name(&cfg->policy, k));
	int64_t p[P_COUNT];
	tlbsim_params_for(res->profile, cfg, p);
	for (int i = 0; i < P_COUNT && n < sizeof(buf); i++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "|%" PRId64, p[i]);
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < n && i < sizeof(buf); i++) {
		h ^= (uint8_t)buf[i];
		h *= 16777619u;
	}
	return h;
}

struct one_run {
	bool violated;
	struct violation_rec v;
	uint64_t steps;
	uint8_t *dec;
	uint8_t *nopt;
	uint32_t ndec;
	struct trace_rec *tr;
	uint32_t ntr;
};

static void one_run_free(struct one_run *o)
{
	free(o->dec);
	free(o->nopt);
	free(o->tr);
	memset(o, 0, sizeof(*o));
}

/* Run one schedule; takes ownership of the explore buffers into *o. */
static int run_schedule(const struct tlbsim_config *cfg, const struct tlbsim_resolved *res,
			int want_kind, enum explore_strategy st, uint64_t seed, int depth,
			uint64_t pct_k, const uint8_t *prefix, uint32_t nprefix, bool record,
			struct one_run *o, char *err, size_t errlen)
{
	struct explore ex;
	explore_init(&ex, st, seed, depth, pct_k, prefix, nprefix);
	ex.record = record;
	ex.want_kind = want_kind;
	struct violation_rec v;
	memset(o, 0, sizeof(*o));
	int rc = tlbsim_run_one(cfg, res, &ex, NULL, &v, err, errlen);
	if (rc) {
		explore_free(&ex);
		return rc;
	}
	o->violated = v.kind >= 0;
	o->v = v;
	o->steps = ex.steps;
	o->dec = ex.dec;
	o->nopt = ex.nopt;
	o->ndec = ex.ndec;
	o->tr = ex.tr;
	o->ntr = ex.ntr;
	ex.dec = NULL;
	ex.nopt = NULL;
	ex.tr = NULL;
	explore_free(&ex);
	return 0;
}

static uint32_t count_preemptions(const uint8_t *d, uint32_t n)
{
	uint32_t c = 0;
	for (uint32_t i = 0; i < n; i++)
		c += d[i] != 0;
	return c;
}

/* Strip trailing zero decisions (replay continues with 0s anyway). */
static uint32_t trim(const uint8_t *d, uint32_t n)
{
	while (n > 0 && d[n - 1] == 0)
		n--;
	return n;
}

/* DFS: the next prefix after a run with decisions d/nopt, within a
 * preemption bound; returns false when the tree is exhausted. */
static bool dfs_next(uint8_t *prefix, uint32_t *nprefix, const uint8_t *d, const uint8_t *nopt,
		     uint32_t n, int bound)
{
	for (uint32_t i = n; i-- > 0;) {
		if (d[i] + 1 >= nopt[i])
			continue;
		uint32_t pre = count_preemptions(d, i) + 1;
		if (pre > (uint32_t)bound)
			continue;
		if (i)
			memcpy(prefix, d, i);
		prefix[i] = (uint8_t)(d[i] + 1);
		*nprefix = i + 1;
		return true;
	}
	return false;
}

/* Replace preemptions by "continue" one at a time while the same invariant
 * still fires; d/n is updated in place (n only shrinks). */
static int minimise_schedule(const struct check_opts *o, struct check_result *r, int kind,
			     uint8_t *d, uint32_t *n, char *err, size_t errlen)
{
	bool changed = true;
	while (changed && r->minimise_runs < 3000) {
		changed = false;
		for (uint32_t i = 0; i < *n && r->minimise_runs < 3000; i++) {
			if (d[i] == 0)
				continue;
			uint8_t save = d[i];
			d[i] = 0;
			struct one_run t;
			int rc = run_schedule(&r->cfg, &r->res, o->want_kind, EX_REPLAY, 0, 1, 0, d, *n,
					      false, &t, err, errlen);
			r->minimise_runs++;
			if (rc)
				return rc;
			uint32_t tn = trim(t.dec, t.ndec);
			if (t.violated && t.v.kind == kind && tn <= *n) {
				if (tn)
					memcpy(d, t.dec, tn);
				*n = tn;
				changed = true;
			} else {
				d[i] = save;
			}
			one_run_free(&t);
		}
	}
	return 0;
}

int tlbsim_check(const struct check_opts *o, struct check_result *r, char *err, size_t errlen)
{
	memset(r, 0, sizeof(*r));
	r->cfg = o->cfg;
	int rc = tlbsim_resolve(&r->cfg, &r->res, err, errlen);
	if (rc)
		return rc;
	uint32_t h = config_hash(&r->cfg, &r->res);
	uint64_t t0 = host_ns();
	struct one_run run;
	memset(&run, 0, sizeof(run));

	if (o->replay) {
		uint32_t th, n;
		uint8_t *d;
		if (token_decode(o->replay, &th, &d, &n)) {
			snprintf(err, errlen, "--replay %s: not a valid replay token", o->replay);
			return TLBSIM_EINVAL;
		}
		if (th != h) {
			free(d);
			snprintf(err, errlen, "--replay: the token was made for a different "
				 "configuration (workload, profile, policy, -w, -D, --cpus, --iters or "
				 "--seed differ)");
			return TLBSIM_EINVAL;
		}
		rc = run_schedule(&r->cfg, &r->res, o->want_kind, EX_REPLAY, 0, 1, 0, d, n, true, &run, err,
				  errlen);
		free(d);
		if (rc)
			return rc;
		r->schedules = 1;
		r->steps = run.steps;
	} else {
		uint8_t *prefix = NULL;
		uint32_t nprefix = 0;
		uint64_t pct_k = 0;
		for (uint64_t i = 0; i < o->runs; i++) {
			if (i > 0 && (host_ns() - t0) / 1000000u >= o->time_limit_ms)
				break;
			one_run_free(&run);
			rc = run_schedule(&r->cfg, &r->res, o->want_kind, o->strategy, o->cfg.seed * 1000003u + i,
					  o->depth, pct_k, prefix, nprefix, false, &run, err, errlen);
			if (rc) {
				free(prefix);
				return rc;
			}
			r->schedules++;
			r->steps += run.steps;
			if (run.steps > pct_k)
				pct_k = run.steps;
			if (run.violated)
				break;
			if (o->strategy == EX_DFS) {
				uint8_t *np = realloc(prefix, run.ndec ? run.ndec : 1);
				if (!np) {
					free(prefix);
					return TLBSIM_ENOMEM;
				}
				prefix = np;
				if (!dfs_next(prefix, &nprefix, run.dec, run.nopt, run.ndec, o->depth)) {
					r->exhausted = true;
					break;
				}
			}
		}
		free(prefix);
	}
	r->host_ns = host_ns() - t0;
	if (!run.violated) {
		one_run_free(&run);
		return 0;
	}

	/* minimise: drop preemptions while the same invariant still fires */
	int kind = run.v.kind;
	uint8_t *best = malloc(run.ndec ? run.ndec : 1);
	if (!best) {
		one_run_free(&run);
		return TLBSIM_ENOMEM;
	}
	if (run.ndec)
		memcpy(best, run.dec, run.ndec);
	uint32_t nbest = trim(best, run.ndec);
	if (o->minimise && !o->replay) {
		rc = minimise_schedule(o, r, kind, best, &nbest, err, errlen);
		/* a short PCT search for the same invariant often finds a schedule
		 * with fewer preemptions than a random one minimises to */
		uint64_t k = run.steps;
		for (int d = 1; d <= 3 && !rc && count_preemptions(best, nbest) > 1; d++) {
			for (uint64_t i = 0; i < 300; i++) {
				struct one_run t;
				rc = run_schedule(&r->cfg, &r->res, o->want_kind, EX_PCT,
						  o->cfg.seed * 7919u + (uint64_t)d * 100000u + i, d, k,
						  NULL, 0, false, &t, err, errlen);
				r->minimise_runs++;
				if (rc)
					break;
				if (!t.violated || t.v.kind != kind) {
					one_run_free(&t);
					continue;
				}
				uint32_t nc = trim(t.dec, t.ndec);
				rc = minimise_schedule(o, r, kind, t.dec, &nc, err, errlen);
				uint32_t pc = count_preemptions(t.dec, nc);
				uint32_t pb = count_preemptions(best, nbest);
				if (!rc && (pc < pb || (pc == pb && nc < nbest))) {
					uint8_t *nb = realloc(best, nc ? nc : 1);
					if (nb) {
						best = nb;
						if (nc)
							memcpy(best, t.dec, nc);
						nbest = nc;
					}
				}
				one_run_free(&t);
				break;
			}
		}
		if (rc) {
			free(best);
			one_run_free(&run);
			return rc;
		}
	}
	/* final replay with the trace recorded */
	one_run_free(&run);
	rc = run_schedule(&r->cfg, &r->res, o->want_kind, EX_REPLAY, 0, 1, 0, best, nbest, true,
			  &run, err, errlen);
	if (rc) {
		free(best);
		return rc;
	}
	if (!run.violated) {
		free(best);
		one_run_free(&run);
		snprintf(err, errlen, "internal: the minimised schedule did not replay its violation");
		return TLBSIM_EINTERNAL;
	}
	r->found = true;
	r->v = run.v;
	r->dec = best;
	r->ndec = nbest;
	r->preemptions = count_preemptions(best, nbest);
	r->tr = run.tr;
	r->ntr = run.ntr;
	run.tr = NULL;
	one_run_free(&run);
	if (token_encode(h, best, nbest, r->token, sizeof(r->token))) {
		snprintf(err, errlen, "internal: schedule too long for a replay token");
		return TLBSIM_EINTERNAL;
	}
	return 0;
}

void check_result_free(struct check_result *r)
{
	free(r->dec);
	free(r->tr);
	r->dec = NULL;
	r->tr = NULL;
}

/* ---- trace formatting ---- */
static const char *const syscall_names[] = {"mmap", "munmap", "madvise(MADV_DONTNEED)",
					    "madvise(MADV_FREE)"};
static const char *const lock_names[] = {"?", "down_read", "up_read", "down_write", "up_write",
					 "downgrade_write"};
static const char *const tlbi_names[] = {"VALE1IS", "VAE1IS", "ASIDE1IS", "VAALE1IS",
					 "VMALLE1IS", "local VALE1"};

const char *trace_kind_name(unsigned kind)
{
	switch (kind) {
	case TR_TLBI: return "tlbi";
	case TR_IPI: return "ipi_send_cpumask";
	case TR_RCU_FREE: return "tlbsim_call_rcu_tables";
	case TR_VIOLATION: return "tlbsim_VIOLATION";
	case TR_EXIT: return "sched_process_exit";
	case TR_SWITCH: return "sched_switch";
	case TR_NESTED: return "tlb_finish_mmu";
	}
	return kind < YP_COUNT ? yield_point_name((enum yield_point)kind) : "?";
}

static void format_event(const struct check_result *r, const struct trace_rec *t, char *buf,
			 size_t len)
{
	const struct tlbsim_knob *kn = tlbsim_knob_get(0);
	switch (t->kind) {
	case YP_SYSCALL:
		snprintf(buf, len, "sys_enter: %s(0x%" PRIx64 ")",
			 t->a < 4 ? syscall_names[t->a] : "?", t->b);
		break;
	case YP_LOCK:
		snprintf(buf, len, "mmap_sem: %s", t->a < 6 ? lock_names[t->a] : "lock op");
		break;
	case YP_FAULT:
		snprintf(buf, len, "page_fault_user: address=0x%" PRIx64, t->a);
		break;
	case YP_USER:
		snprintf(buf, len, "tlbsim_user_access: address=0x%" PRIx64, t->a);
		break;
	case YP_GATHER_INIT:
		snprintf(buf, len, "tlbsim_tlb_gather_mmu: tlb_flush_pending=%" PRIu64, t->a);
		break;
	case YP_ZAP_PTE:
		snprintf(buf, len, "tlbsim_zap_pte: address=0x%" PRIx64 "%s", t->a,
			 t->b ? " (MADV_FREE: make old+clean)" : "");
		break;
	case YP_FREE_TABLE:
		snprintf(buf, len, "tlbsim_free_table: level %" PRIu64 " table for 0x%" PRIx64
			 " unlinked (freed_tables=1)", t->b, t->a);
		break;
	case YP_FINISH_CHECK_NESTED:
		snprintf(buf, len, "tlbsim_tlb_finish_mmu: enter");
		break;
	case TR_NESTED:
		snprintf(buf, len, "tlbsim_tlb_finish_mmu: tlb_flush_pending=%" PRIu64 " -> %s",
			 t->a, t->b ? "mm_tlb_flush_nested() true"
			       : t->a > 1 ? "no nested check (nested_check=off)" : "not nested");
		break;
	case YP_FINISH_POLICY:
		snprintf(buf, len, "tlbsim_nested_policy: %s=%s", kn->name,
			 t->a < (uint64_t)kn->nvalues ? kn->values[t->a].name : "?");
		break;
	case YP_TLBI_ISSUE:
		snprintf(buf, len, "tlbsim_tlbi: %" PRIu64 " x TLBI %s (broadcast)", t->b,
			 t->a < 6 ? tlbi_names[t->a] : "?");
		break;
	case YP_DSB:
		snprintf(buf, len, "tlbsim_dsb_ish: TLBIs complete");
		break;
	case YP_ARCH_FLUSH:
		if (t->b == ~0ull)
			snprintf(buf, len, "tlb_flush: flush_tlb_mm_range(TLB_FLUSH_ALL)");
		else
			snprintf(buf, len, "tlb_flush: flush_tlb_mm_range(0x%" PRIx64 ", 0x%" PRIx64
				 ")", t->a, t->b);
		break;
	case TR_IPI:
		snprintf(buf, len, "ipi_send_cpumask: %" PRIu64 " CPUs (flush_tlb_func%s)", t->a,
			 t->b ? ", lazy CPUs included" : ", lazy CPUs skipped");
		break;
	case TR_RCU_FREE:
		snprintf(buf, len, "tlbsim_call_rcu: %" PRIu64 " page table(s) from frame %" PRIu64,
			 t->b, t->a);
		break;
	case TR_VIOLATION:
		snprintf(buf, len, "tlbsim_VIOLATION: %s at 0x%" PRIx64, inv_name((int)t->a), t->b);
		break;
	default:
		snprintf(buf, len, "tlbsim_%s", trace_kind_name(t->kind));
	}
	(void)r;
}

/* Events worth a line in the human report (user accesses and lock releases
 * are left out unless they are where the thread switched). */
static bool interesting(const struct trace_rec *t)
{
	switch (t->kind) {
	case YP_PTE:
	case YP_END_VMA:
	case YP_PENDING_DEC:
	case YP_FREE_PAGES:
	case YP_TABLE_FLUSH:
	case YP_THREAD:
		return false;
	default:
		return true;
	}
}

static void print_trace_line(FILE *f, const struct check_result *r, const struct trace_rec *t)
{
	char ev[200];
	format_event(r, t, ev, sizeof(ev));
	fprintf(f, "  %6" PRIu64 "  %12" PRIu64 ".%03" PRIu64 "  T%-2d [%03d]  %s\n", t->step,
		t->time / 1000u, t->time % 1000u, t->tid, t->cpu, ev);
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
		return;
	}
	const struct violation_rec *v = &r->v;
	fprintf(f, "VIOLATION %s: %s\n", inv_name(v->kind), inv_desc(v->kind));
	fprintf(f, "  %s\n", v->text);
	fprintf(f, "  cpu:    %d\n", v->cpu);
	fprintf(f, "  va:     0x%" PRIx64 "\n", v->va);
	fprintf(f, "  frame:  %u\n", v->frame);
	fprintf(f, "  entry:  %s\n", v->entry);
	fprintf(f, "  flush:  %s\n", v->flush);
	fprintf(f, "  found after %" PRIu64 " schedule(s), %" PRIu64 " steps in %.3f s; schedule "
		"minimised to %u preemption(s) in %" PRIu64 " replays\n", r->schedules, r->steps,
		secs, r->preemptions, r->minimise_runs);
	fprintf(f, "\ntrace (step, simulated time us, thread, [cpu], event):\n");
	int last_tid = -2;
	uint32_t shown = 0;
	for (uint32_t i = 0; i < r->ntr; i++) {
		const struct trace_rec *t = &r->tr[i];
		bool sw = t->tid != last_tid;
		if (sw || interesting(t) || i + 1 == r->ntr) {
			if (sw && last_tid != -2)
				fprintf(f, "  ------  switch to T%d\n", t->tid);
			print_trace_line(f, r, t);
			shown++;
		}
		last_tid = t->tid;
	}
	fprintf(f, "\nreplay: %s\n", replay_cmd);
	fprintf(f, "token: %s\n", r->token);
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
		   "\"violation\":", r->schedules, r->steps, r->exhausted ? "true" : "false");
	if (!r->found) {
		fprintf(f, "null}\n");
		return;
	}
	const struct violation_rec *v = &r->v;
	fprintf(f, "{\"invariant\":");
	json_string(f, inv_name(v->kind));
	fprintf(f, ",\"cpu\":%d,\"va\":\"0x%" PRIx64 "\",\"frame\":%u,\"text\":", v->cpu, v->va,
		v->frame);
	json_string(f, v->text);
	fprintf(f, ",\"entry\":");
	json_string(f, v->entry);
	fprintf(f, ",\"flush\":");
	json_string(f, v->flush);
	fprintf(f, ",\"preemptions\":%u,\"token\":", r->preemptions);
	json_string(f, r->token);
	fprintf(f, ",\"replay\":");
	json_string(f, replay_cmd);
	fprintf(f, ",\"trace\":[");
	for (uint32_t i = 0; i < r->ntr; i++) {
		char ev[200];
		format_event(r, &r->tr[i], ev, sizeof(ev));
		fprintf(f, "%s{\"step\":%" PRIu64 ",\"time_ns\":%" PRIu64 ",\"cpu\":%d,\"thread\":%d,"
			   "\"event\":", i ? "," : "", r->tr[i].step, r->tr[i].time, r->tr[i].cpu,
			r->tr[i].tid);
		json_string(f, ev);
		fputc('}', f);
	}
	fprintf(f, "]}}\n");
}

/* ---- Chrome trace-event JSON ---- */
static void ts_us(FILE *f, uint64_t ns)
{
	fprintf(f, "%" PRIu64 ".%03" PRIu64, ns / 1000u, ns % 1000u);
}

int check_write_chrome_trace(const struct check_result *r, const char *path, char *err,
			     size_t errlen)
{
	char tmp[4096];
	snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid());
	FILE *f = fopen(tmp, "w");
	if (!f) {
		snprintf(err, errlen, "--trace %s: cannot create the file", path);
		return TLBSIM_EINVAL;
	}
	fprintf(f, "{\"traceEvents\":[\n");
	fprintf(f, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"tid\":0,\"args\":{\"name\":"
		   "\"tlbsim %s on %s\"}}", r->res.workload->name, r->res.profile->name);
	for (int c = 0; c < r->res.cpus; c++)
		fprintf(f, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":%d,\"args\":"
			   "{\"name\":\"CPU %d\"}}", c, c);
	uint64_t flow = 1;
	for (uint32_t i = 0; i < r->ntr; i++) {
		const struct trace_rec *t = &r->tr[i];
		if (t->cpu < 0)
			continue;
		/* slice until the next event of the same thread (at least 1 ns) */
		uint64_t end = t->time + 1;
		for (uint32_t j = i + 1; j < r->ntr; j++)
			if (r->tr[j].tid == t->tid) {
				if (r->tr[j].time > t->time)
					end = r->tr[j].time;
				break;
			}
		char ev[200];
		format_event(r, t, ev, sizeof(ev));
		if (t->kind == TR_VIOLATION) {
			fprintf(f, ",\n{\"name\":");
			json_string(f, ev);
			fprintf(f, ",\"ph\":\"i\",\"s\":\"g\",\"pid\":1,\"tid\":%d,\"ts\":", t->cpu);
			ts_us(f, t->time);
			fprintf(f, "}");
			continue;
		}
		fprintf(f, ",\n{\"name\":");
		json_string(f, trace_kind_name(t->kind));
		fprintf(f, ",\"ph\":\"X\",\"pid\":1,\"tid\":%d,\"ts\":", t->cpu);
		ts_us(f, t->time);
		fprintf(f, ",\"dur\":");
		ts_us(f, end - t->time);
		fprintf(f, ",\"args\":{\"thread\":%d,\"step\":%" PRIu64 ",\"event\":", t->tid, t->step);
		json_string(f, ev);
		fprintf(f, "}}");
		/* broadcast TLBIs and IPIs: flow arrows to every other CPU */
		if (t->kind == YP_TLBI_ISSUE || t->kind == TR_IPI) {
			for (int c = 0; c < r->res.cpus; c++) {
				if (c == t->cpu)
					continue;
				fprintf(f, ",\n{\"name\":\"%s\",\"ph\":\"s\",\"id\":%" PRIu64 ",\"pid\":1,"
					   "\"tid\":%d,\"ts\":", t->kind == TR_IPI ? "ipi" : "tlbi", flow,
					t->cpu);
				ts_us(f, t->time);
				fprintf(f, "}");
				fprintf(f, ",\n{\"name\":\"%s received\",\"ph\":\"X\",\"pid\":1,\"tid\":%d,"
					   "\"ts\":", t->kind == TR_IPI ? "ipi" : "tlbi", c);
				ts_us(f, t->time);
				fprintf(f, ",\"dur\":0.001}");
				fprintf(f, ",\n{\"name\":\"%s\",\"ph\":\"f\",\"bp\":\"e\",\"id\":%" PRIu64
					   ",\"pid\":1,\"tid\":%d,\"ts\":", t->kind == TR_IPI ? "ipi" : "tlbi",
					flow, c);
				ts_us(f, t->time);
				fprintf(f, "}");
				flow++;
			}
		}
	}
	fprintf(f, "\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"tool\":\"tlbsim\",\"version\":"
		   "\"%s\",\"token\":", TLBSIM_VERSION);
	json_string(f, r->token);
	fprintf(f, "}}\n");
	if (fclose(f) != 0 || rename(tmp, path) != 0) {
		unlink(tmp);
		snprintf(err, errlen, "--trace %s: cannot write the file", path);
		return TLBSIM_EINVAL;
	}
	return 0;
}
