/*
 * search.c - the `tlbsim check` search (see check.h).
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

#include "check/check.h"
#include "sim/grow.h"
#include "sim/hash.h"

/* between schedules: how often a pending signal is looked for */
#define SIGNAL_POLL_NS 1000000u

static uint64_t host_ns(void)
{
	return sim_host_ns();
}

void check_config_defaults(struct tlbsim_config *cfg, bool cpus_given, bool iters_given)
{
	const struct tlbsim_workload_desc *d =
		cfg->workload_def ? cfg->workload_def : tlbsim_workload_find(cfg->workload);
	if (!d)
		return;
	if (!iters_given && d->check_iters)
		cfg->iters = d->check_iters;
	if (!cpus_given && d->check_cpus)
		cfg->cpus = d->check_cpus;
	/* a timed workload's tasks loop until every one has run its rounds,
	 * and check has no time slices: one task per CPU, not ebizzy's two
	 * (a task queued behind another never started: every schedule cut) */
	if (d->timed && d->default_threads < -1 && !cfg->threads && cfg->cpus)
		cfg->threads = cfg->cpus;
	/* check-mode wparams go first; the user's -w come after and win */
	if (d->check_wparams && *d->check_wparams) {
		struct tlbsim_kv extra[TLBSIM_MAX_WPARAMS];
		memset(extra, 0, sizeof(extra));
		int n = 0;
		char buf[256];
		snprintf(buf, sizeof(buf), "%s", d->check_wparams);
		char *save = NULL;
		for (char *tok = strtok_r(buf, ",", &save); tok && n < TLBSIM_MAX_WPARAMS;
		     tok = strtok_r(NULL, ",", &save)) {
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

/* FNV-1a over everything that determines a schedule's behaviour, as the
 * text "workload|profile|cpus|threads|iters|seed|name=value...|knob
 * values...[|src=XXXXXXXX][|tso]|param values...", hashed piece by piece
 * (a 4 KiB buffer once cut it short: with long scenario parameter values
 * the knobs and -D values after the cut changed nothing in the hash, so a
 * token replayed silently under another configuration). */
uint32_t config_hash(const struct tlbsim_config *cfg, const struct tlbsim_resolved *res)
{
	char num[96];
	uint32_t h = fnv1a_str(FNV1A_INIT, res->workload->name);
	h = fnv1a_str(fnv1a_str(h, "|"), res->profile->name);
	snprintf(num, sizeof(num), "|%d|%d|%" PRId64 "|%" PRIu64, res->cpus, res->threads, res->iters,
		 cfg->seed);
	h = fnv1a_str(h, num);
	for (int i = 0; i < res->nwparams; i++) {
		h = fnv1a_str(fnv1a_str(h, "|"), res->wparams[i].name);
		h = fnv1a_str(fnv1a_str(h, "="), res->wparams[i].value);
	}
	for (int k = 0; k < tlbsim_knob_count(); k++)
		h = fnv1a_str(fnv1a_str(h, "|"), tlbsim_policy_value_name(&cfg->policy, k));
	/* a scenario file's text: a token made on another version of the file
	 * replayed there silently, to another outcome (built-ins: 0, their
	 * tokens stay as they were) */
	if (res->workload->source_hash) {
		snprintf(num, sizeof(num), "|src=%08x", (unsigned)res->workload->source_hash);
		h = fnv1a_str(h, num);
	}
	/* only a non-default memory model is named: SC tokens stay as they were */
	if (cfg->memory_model == TLBSIM_MM_TSO)
		h = fnv1a_str(h, "|tso");
	int64_t p[P_COUNT];
	tlbsim_params_for(res->profile, cfg, p);
	for (int i = 0; i < P_COUNT; i++) {
		snprintf(num, sizeof(num), "|%" PRId64, p[i]);
		h = fnv1a_str(h, num);
	}
	return h;
}

struct one_run {
	bool violated;
	bool cut;			/* stopped at the step cap */
	bool timed_out;			/* stopped at the host-time deadline */
	int stop_signal;		/* stopped by SIGINT/SIGTERM */
	bool diverged;			/* a forced decision did not exist */
	struct violation_rec v;
	uint64_t steps;
	uint32_t *dec;
	uint32_t *nopt;
	uint32_t ndec;
	struct trace_buf trace;
};

static void one_run_free(struct one_run *o)
{
	free(o->dec);
	free(o->nopt);
	trace_buf_free(&o->trace);
	memset(o, 0, sizeof(*o));
}

/* Run one schedule; takes ownership of the explore buffers into *o. Unless
 * it is recorded (the final traced replay, or --replay: those run to their
 * end), a non-zero deadline (sim_host_ns()) stops a schedule that outlasts
 * it, as does a signal (opts->interrupted). */
static int run_schedule(const struct check_opts *opts, const struct tlbsim_config *cfg,
			const struct tlbsim_resolved *res, enum explore_strategy st, uint64_t seed,
			int depth, uint64_t pct_k, const uint32_t *prefix, uint32_t nprefix,
			bool record, uint64_t deadline, struct one_run *o, char *err, size_t errlen)
{
	struct explore ex;
	explore_init(&ex, st, seed, depth, pct_k, prefix, nprefix);
	if (opts->max_steps)
		ex.max_steps = opts->max_steps;
	if (!record) {
		ex.deadline_host_ns = deadline;
		ex.interrupted = opts->interrupted;
		ex.interrupted_ctx = opts->interrupted_ctx;
	}
	memset(o, 0, sizeof(*o));
	struct core_opts co = {.ex = &ex, .want_kind = opts->want_kind,
			       .trace = record ? &o->trace : NULL,
			       .host_limit = opts->host_limit,
			       .stack_pool = opts->stack_pool};
	struct run_outcome out;
	int rc = tlbsim_run_one(cfg, res, &co, &out, err, errlen);
	if (rc) {
		explore_free(&ex);
		trace_buf_free(&o->trace);
		return rc;
	}
	o->violated = out.v.kind >= 0;
	o->cut = ex.cut;
	o->timed_out = ex.timed_out;
	o->stop_signal = ex.stop_signal;
	o->diverged = ex.diverged;
	o->v = out.v;
	o->steps = out.steps;
	o->dec = ex.dec;
	o->nopt = ex.nopt;
	o->ndec = ex.ndec;
	ex.dec = NULL;
	ex.nopt = NULL;
	explore_free(&ex);
	return 0;
}

static uint32_t count_preemptions(const uint32_t *d, uint32_t n)
{
	uint32_t c = 0;
	for (uint32_t i = 0; i < n; i++)
		c += d[i] != 0;
	return c;
}

/* Strip trailing zero decisions (replay continues with 0s anyway). */
static uint32_t trim(const uint32_t *d, uint32_t n)
{
	while (n > 0 && d[n - 1] == 0)
		n--;
	return n;
}

/* DFS: the next prefix after a run with decisions d/nopt, within a
 * preemption bound; returns false when the tree is exhausted. */
static bool dfs_next(uint32_t *prefix, uint32_t *nprefix, const uint32_t *d,
		     const uint32_t *nopt, uint32_t n, int bound)
{
	for (uint32_t i = n; i-- > 0;) {
		if (d[i] + 1 >= nopt[i])
			continue;
		uint32_t pre = count_preemptions(d, i) + 1;
		if (pre > (uint32_t)bound)
			continue;
		if (i)
			memcpy(prefix, d, (size_t)i * sizeof(*d));
		prefix[i] = d[i] + 1;
		*nprefix = i + 1;
		return true;
	}
	return false;
}

const char *check_minimise_name(enum check_minimise m)
{
	switch (m) {
	case MIN_COMPLETE:
		return "complete";
	case MIN_OFF:
		return "off";
	case MIN_TIME_LIMIT:
		return "time limit";
	case MIN_SIGNAL:
		return "signal";
	}
	return "?";
}

/* Minimisation shares the host-time budget of the search and stops at a
 * signal: true (and r->minimised says why) when it must stop now. */
static bool minimise_must_stop(const struct check_opts *o, struct check_result *r,
			       uint64_t deadline)
{
	if (r->minimised != MIN_COMPLETE)
		return true;
	if (o->interrupted && (r->stop_signal = o->interrupted(o->interrupted_ctx)))
		r->minimised = MIN_SIGNAL;
	else if (deadline && host_ns() >= deadline)
		r->minimised = MIN_TIME_LIMIT;
	return r->minimised != MIN_COMPLETE;
}

/* Replay candidate c/cn; when the same invariant fires and the result passes
 * the test (no longer than n decisions; with fewer_preemptions, also fewer
 * preemptions than d/n has), copy the replayed decisions into d/n and set
 * *taken. */
static int minimise_try(const struct check_opts *o, struct check_result *r, int kind,
			uint32_t *d, uint32_t *n, const uint32_t *c, uint32_t cn,
			bool fewer_preemptions, uint64_t deadline, bool *taken, char *err,
			size_t errlen)
{
	struct one_run t;
	*taken = false;
	int rc = run_schedule(o, &r->cfg, &r->res, EX_REPLAY, 0, 1, 0, c, cn, false, deadline,
			      &t, err, errlen);
	r->minimise_runs++;
	if (rc)
		return rc;
	uint32_t tn = trim(t.dec, t.ndec);
	if (t.violated && t.v.kind == kind && tn <= *n &&
	    (!fewer_preemptions || count_preemptions(t.dec, tn) < count_preemptions(d, *n))) {
		if (tn)
			memcpy(d, t.dec, (size_t)tn * sizeof(*d));
		*n = tn;
		*taken = true;
	}
	one_run_free(&t);
	return 0;
}

/* The next preemption after decision i, or n. */
static uint32_t next_preemption(const uint32_t *d, uint32_t n, uint32_t i)
{
	while (++i < n && d[i] == 0)
		;
	return i;
}

/* Shrink d/n in place (n only shrinks) while the same invariant still fires:
 * (1) replace preemptions by "continue" one at a time; (2) when no single one
 * goes, replace a pair by "continue", a preemption and one of the next few
 * after it. A decision picks among the candidates with the current thread
 * first, so dropping only the switch to another thread changes what every
 * later decision means, while dropping a switch together with the switch back
 * removes the other thread's stretch and leaves the rest of the schedule as
 * it was: random and PCT schedules are full of such pairs. */
#define MINIMISE_PAIR_REACH 4
#define MINIMISE_RUNS 6000	/* replays for the whole minimisation */
#define MINIMISE_PCT_HITS 3	/* violating PCT schedules tried per depth */
static int minimise_schedule(const struct check_opts *o, struct check_result *r, int kind,
			     uint32_t *d, uint32_t *n, uint64_t deadline, char *err,
			     size_t errlen)
{
	uint32_t *c = malloc(((size_t)*n + 1) * sizeof(*c));
	if (!c)
		return TLBSIM_ENOMEM;
	int rc = 0;
	bool changed = true;
	while (changed && r->minimise_runs < MINIMISE_RUNS) {
		changed = false;
		for (uint32_t i = 0; i < *n && r->minimise_runs < MINIMISE_RUNS; i++) {
			if (d[i] == 0)
				continue;
			if (minimise_must_stop(o, r, deadline))
				goto out;
			bool taken;
			memcpy(c, d, (size_t)*n * sizeof(*c));
			c[i] = 0;
			rc = minimise_try(o, r, kind, d, n, c, *n, false, deadline, &taken, err,
					  errlen);
			if (rc)
				goto out;
			changed |= taken;
		}
		for (uint32_t i = 0; !changed && i < *n && r->minimise_runs < MINIMISE_RUNS; i++) {
			if (d[i] == 0)
				continue;
			uint32_t j = i;
			for (int k = 0; k < MINIMISE_PAIR_REACH && !changed; k++) {
				j = next_preemption(d, *n, j);
				if (j >= *n)
					break;
				if (minimise_must_stop(o, r, deadline))
					goto out;
				memcpy(c, d, (size_t)*n * sizeof(*c));
				c[i] = 0;
				c[j] = 0;
				rc = minimise_try(o, r, kind, d, n, c, *n, true, deadline, &changed,
						  err, errlen);
				if (rc)
					goto out;
			}
		}
	}
out:
	free(c);
	return rc;
}

static int check_run(const struct check_opts *o, struct check_result *r, char *err,
		     size_t errlen);

int tlbsim_check(const struct check_opts *o, struct check_result *r, char *err, size_t errlen)
{
	struct check_opts oc = *o;
	oc.stack_pool = calloc(1, sizeof(*oc.stack_pool));	/* NULL: no reuse */
	int rc = check_run(&oc, r, err, errlen);
	if (oc.stack_pool) {
		sim_stack_pool_free(oc.stack_pool);
		free(oc.stack_pool);
	}
	return rc;
}

static int check_run(const struct check_opts *o, struct check_result *r, char *err,
		     size_t errlen)
{
	memset(r, 0, sizeof(*r));
	r->cfg = o->cfg;
	r->max_steps = o->max_steps ? o->max_steps : EXPLORE_MAX_STEPS_DEFAULT;
	int rc = tlbsim_resolve(&r->cfg, &r->res, err, errlen);
	if (rc)
		return rc;
	uint32_t h = config_hash(&r->cfg, &r->res);
	uint64_t t0 = host_ns();
	/* the host-time budget: the search, every schedule in it and the
	 * minimisation share it; only the final traced replay runs after it */
	uint64_t deadline = o->time_limit_ms ? t0 + o->time_limit_ms * 1000000u : 0;
	struct one_run run;
	memset(&run, 0, sizeof(run));

	if (o->replay) {
		uint32_t th, n;
		uint32_t *d;
		/* a decision is made at a step with two or more candidates, or
		 * between pending completions (each one queued by a step): a run
		 * of max_steps steps makes fewer than 16 per step (the largest
		 * seen: 0.6 per step, mmap8 on 46 CPUs unminimised); the limit
		 * keeps a hand-made token of 60 characters from spelling 10^9
		 * decisions and taking gigabytes */
		const uint64_t maxdec = 16 * r->max_steps + 4096;
		int drc = token_decode_max(o->replay, maxdec, &th, &d, &n);
		if (drc == -2) {
			snprintf(err, errlen, "--replay: the token holds more than %" PRIu64
				 " decisions, more than a schedule of at most %" PRIu64 " steps "
				 "makes (--max-steps)", maxdec, r->max_steps);
			return TLBSIM_EINVAL;
		}
		if (drc) {
			snprintf(err, errlen, "--replay %s: not a valid replay token", o->replay);
			return TLBSIM_EINVAL;
		}
		if (th != h) {
			free(d);
			snprintf(err, errlen, "--replay: the token was made for a different "
				 "configuration (workload, profile, policy, -w, -D, --cpus, --iters or "
				 "--seed differ, or the scenario file's text)");
			return TLBSIM_EINVAL;
		}
		rc = run_schedule(o, &r->cfg, &r->res, EX_REPLAY, 0, 1, 0, d, n, true, 0, &run,
				  err, errlen);
		free(d);
		if (rc)
			return rc;
		if (run.diverged) {
			one_run_free(&run);
			snprintf(err, errlen, "--replay: the token's schedule does not fit this "
				 "configuration (a decision names a thread that is not runnable)");
			return TLBSIM_EINVAL;
		}
		r->schedules = 1;
		r->steps = run.steps;
		r->cut_schedules = run.cut;
	} else {
		uint32_t *prefix = NULL;
		size_t cap_prefix = 0;
		uint32_t nprefix = 0;
		uint64_t pct_k = 0;
		/* signals are looked at between schedules at most every
		 * SIGNAL_POLL_NS of host time (a system call per schedule was
		 * 1.5 % of a small check's host time); a long schedule looks
		 * itself (explore_poll) */
		uint64_t signal_at = 0;
		for (uint64_t i = 0; i < o->runs; i++) {
			const uint64_t now = host_ns();
			if (i > 0 && o->time_limit_ms && (now - t0) / 1000000u >= o->time_limit_ms) {
				r->time_limited = true;
				break;
			}
			if (o->interrupted && now >= signal_at) {
				signal_at = now + SIGNAL_POLL_NS;
				if ((r->stop_signal = o->interrupted(o->interrupted_ctx)))
					break;
			}
			one_run_free(&run);
			rc = run_schedule(o, &r->cfg, &r->res, o->strategy, o->cfg.seed * 1000003u + i,
					  o->depth, pct_k, prefix, nprefix, false, deadline, &run, err,
					  errlen);
			if (rc) {
				free(prefix);
				return rc;
			}
			r->schedules++;
			r->steps += run.steps;
			r->cut_schedules += run.cut;
			if (run.stop_signal) {
				r->stop_signal = run.stop_signal;
				break;
			}
			if (run.timed_out) {
				/* the budget ended inside this schedule */
				r->time_limited = true;
				break;
			}
			if (run.steps > pct_k)
				pct_k = run.steps;
			if (run.violated)
				break;
			if (o->strategy == EX_DFS) {
				if (GROW(&prefix, &cap_prefix, 0, (size_t)run.ndec + 1, 64)) {
					free(prefix);
					one_run_free(&run);
					return TLBSIM_ENOMEM;
				}
				if (!dfs_next(prefix, &nprefix, run.dec, run.nopt, run.ndec, o->depth)) {
					/* every schedule within the bound ran; a cut one
					 * was not explored to its end */
					r->exhausted = r->cut_schedules == 0;
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
	uint32_t *best = malloc(((size_t)run.ndec + 1) * sizeof(*best));
	if (!best) {
		one_run_free(&run);
		return TLBSIM_ENOMEM;
	}
	if (run.ndec)
		memcpy(best, run.dec, (size_t)run.ndec * sizeof(*best));
	uint32_t nbest = trim(best, run.ndec);
	r->minimised = o->minimise && !o->replay ? MIN_COMPLETE : MIN_OFF;
	if (r->minimised == MIN_COMPLETE) {
		rc = minimise_schedule(o, r, kind, best, &nbest, deadline, err, errlen);
		/* a short PCT search for the same invariant often finds a schedule
		 * with fewer preemptions than a random one minimises to: a few hits
		 * per depth, each minimised, the best kept */
		uint64_t k = run.steps;
		for (int d = 1; d <= 4 && !rc && count_preemptions(best, nbest) > 1; d++) {
			int hits = 0;
			for (uint64_t i = 0; i < 300 && hits < MINIMISE_PCT_HITS; i++) {
				struct one_run t;
				if (minimise_must_stop(o, r, deadline) ||
				    r->minimise_runs >= MINIMISE_RUNS)
					break;
				rc = run_schedule(o, &r->cfg, &r->res, EX_PCT,
						  o->cfg.seed * 7919u + (uint64_t)d * 100000u + i, d, k,
						  NULL, 0, false, deadline, &t, err, errlen);
				r->minimise_runs++;
				if (rc)
					break;
				if (!t.violated || t.v.kind != kind) {
					one_run_free(&t);
					continue;
				}
				uint32_t nc = trim(t.dec, t.ndec);
				rc = minimise_schedule(o, r, kind, t.dec, &nc, deadline, err, errlen);
				uint32_t pc = count_preemptions(t.dec, nc);
				uint32_t pb = count_preemptions(best, nbest);
				if (!rc && (pc < pb || (pc == pb && nc < nbest))) {
					/* nc <= t.ndec; best holds at least nbest + 1 */
					uint32_t *nb = malloc(((size_t)nc + 1) * sizeof(*nb));
					if (nb) {
						if (nc)
							memcpy(nb, t.dec, (size_t)nc * sizeof(*nb));
						free(best);
						best = nb;
						nbest = nc;
					}
				}
				one_run_free(&t);
				if (rc)
					break;
				hits++;
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
	rc = run_schedule(o, &r->cfg, &r->res, EX_REPLAY, 0, 1, 0, best, nbest, true, 0,
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
	r->trace = run.trace;
	memset(&run.trace, 0, sizeof(run.trace));
	one_run_free(&run);
	/* a schedule too long for a token that could be typed as one argument
	 * is still a counterexample: it is reported without a token */
	r->token_len = token_length(h, best, nbest);
	if (r->token_len > CHECK_TOKEN_MAX)
		return 0;
	r->token = malloc(r->token_len + 1);
	if (!r->token || token_encode(h, best, nbest, r->token, r->token_len + 1)) {
		snprintf(err, errlen, "out of memory for the replay token");
		return TLBSIM_ENOMEM;
	}
	return 0;
}

void check_result_free(struct check_result *r)
{
	free(r->dec);
	free(r->token);
	trace_buf_free(&r->trace);
	r->dec = NULL;
	r->token = NULL;
}
