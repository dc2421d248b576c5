/*
 * core.c - tlbsim_resolve() and tlbsim_run(): validate a configuration, build
 * a simulation, run the workload's main thread to completion, and report.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"

void tlbsim_config_init(struct tlbsim_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->workload = "mmap8";
	cfg->seed = 1;
	tlbsim_policy_default(&cfg->policy);
}

/* The accepted range of every cost/hardware parameter, by unit: a value
 * outside it is bad input (exit 2), never a run that takes hours or all of
 * the host's memory. */
static int param_check(int id, int64_t v, char *err, size_t errlen)
{
	const char *name = tlbsim_param_desc[id].name;
	const char *unit = tlbsim_param_desc[id].unit;
	if (v < 0) {
		snprintf(err, errlen, "parameter %s=%lld: must not be negative", name, (long long)v);
		return TLBSIM_EINVAL;
	}
	if (strcmp(unit, "bool") == 0 && v > 1) {
		snprintf(err, errlen, "parameter %s=%lld: want 0 or 1", name, (long long)v);
		return TLBSIM_EINVAL;
	}
	/* one operation, or one RCU grace period, longer than a simulated
	 * second is not a machine anyone runs */
	if (strcmp(unit, "ns") == 0 && v > PARAM_NS_MAX) {
		snprintf(err, errlen, "parameter %s=%lld ns: absurd (more than 1 s)", name,
			 (long long)v);
		return TLBSIM_EINVAL;
	}
	if (id == P_tlb_sets || id == P_wc_sets) {
		if (v < 1 || v > 65536 || (v & (v - 1))) {
			snprintf(err, errlen, "parameter %s=%lld: want a power of two 1..65536", name,
				 (long long)v);
			return TLBSIM_EINVAL;
		}
	}
	if ((id == P_tlb_ways || id == P_wc_ways) && (v < 1 || v > 64)) {
		snprintf(err, errlen, "parameter %s=%lld: want 1..64", name, (long long)v);
		return TLBSIM_EINVAL;
	}
	if (id == P_asid_bits && (v < 2 || v > 16)) {
		snprintf(err, errlen, "parameter %s=%lld: want 2..16", name, (long long)v);
		return TLBSIM_EINVAL;
	}
	if (id == P_livelock_faults && (v < 2 || v > 100000000)) {
		snprintf(err, errlen, "parameter %s=%lld: want 2..100000000", name, (long long)v);
		return TLBSIM_EINVAL;
	}
	if ((id == P_dirty_ratio || id == P_dirty_background_ratio || id == P_dvm_occupancy_pct) &&
	    v > 100) {
		snprintf(err, errlen, "parameter %s=%lld: want a percentage 0..100", name, (long long)v);
		return TLBSIM_EINVAL;
	}
	if (id == P_ram_mb && (v < 1 || v > (1ll << 30))) {
		snprintf(err, errlen, "parameter %s=%lld: want 1..%lld MiB", name, (long long)v,
			 1ll << 30);
		return TLBSIM_EINVAL;
	}
	if (id == P_fault_around_bytes && v > (1ll << 30)) {
		snprintf(err, errlen, "parameter %s=%lld: want at most 1 GiB", name, (long long)v);
		return TLBSIM_EINVAL;
	}
	if (id == P_writeback_bw_mbs && (v < 1 || v > 1000000)) {
		snprintf(err, errlen, "parameter %s=%lld: want 1..1000000 MB/s", name, (long long)v);
		return TLBSIM_EINVAL;
	}
	if (id == P_kasan_slowdown && (v < 1 || v > 100)) {
		snprintf(err, errlen, "parameter %s=%lld: want a factor 1..100", name, (long long)v);
		return TLBSIM_EINVAL;
	}
	if (id == P_jitter && v > 50) {
		snprintf(err, errlen, "parameter %s=%lld: want a percentage 0..50 (0: exact mode)",
			 name, (long long)v);
		return TLBSIM_EINVAL;
	}
	if (id == P_watchdog_thresh_s && v > 60) {
		snprintf(err, errlen, "parameter %s=%lld s: want 0..60 (the kernel's range; 0: "
			 "off)", name, (long long)v);
		return TLBSIM_EINVAL;
	}
	if (id == P_global_asids && v > 65000) {
		/* 16-bit PCIDs at most, less the dynamic ASIDs (machine_init) */
		snprintf(err, errlen, "parameter %s=%lld: want 0..65000 ASIDs", name,
			 (long long)v);
		return TLBSIM_EINVAL;
	}
	if (id == P_flush_ceiling && v > (1ll << 36)) {
		snprintf(err, errlen, "parameter %s=%lld: want at most %lld pages", name, (long long)v,
			 1ll << 36);
		return TLBSIM_EINVAL;
	}
	return 0;
}

/* param_check, except for the profile arch's own default of the parameter:
 * a dumped profile restates every default, and -D may state one (x86
 * asid_bits=0, outside the arm64 range) */
static int param_check_on(const struct tlbsim_profile *prof, int id, int64_t v, char *err,
			  size_t errlen)
{
	const int64_t def = prof->arch == ARCH_X86_64 ? tlbsim_param_desc[id].x86_default
						      : tlbsim_param_desc[id].arm64_default;
	return v == def ? 0 : param_check(id, v, err, errlen);
}

int tlbsim_resolve(const struct tlbsim_config *cfg, struct tlbsim_resolved *res, char *err,
		   size_t errlen)
{
	memset(res, 0, sizeof(*res));
	const struct workload_ops *w = workload_for(cfg);
	if (!w) {
		snprintf(err, errlen, "unknown workload '%s' (see tlbsim list workloads)",
			 cfg->workload ? cfg->workload : "");
		return TLBSIM_EINVAL;
	}
	res->workload = w->desc;
	const char *pname = cfg->profile ? cfg->profile : w->desc->default_profile;
	res->profile = cfg->profile_def ? cfg->profile_def : tlbsim_profile_find(pname);
	if (!res->profile) {
		snprintf(err, errlen, "unknown profile '%s' (see tlbsim list profiles; or a profile "
			 "file)", pname);
		return TLBSIM_EINVAL;
	}
	for (int j = 0; j < res->profile->nparams; j++) {
		int rc = param_check_on(res->profile, res->profile->params[j].param,
					res->profile->params[j].value, err, errlen);
		if (rc) {
			char why[TLBSIM_ERRLEN];
			snprintf(why, sizeof(why), "%s", err);
			snprintf(err, errlen, "profile %s: %s", res->profile->name, why);
			return rc;
		}
	}
	res->cpus = cfg->cpus ? cfg->cpus
			      : w->desc->default_cpus ? w->desc->default_cpus : res->profile->nr_cpus;
	if (res->cpus < 1 || res->cpus > 1024) {
		snprintf(err, errlen, "--cpus %d: want 1..1024", res->cpus);
		return TLBSIM_EINVAL;
	}
	if (cfg->threads && w->desc->fixed_threads) {
		snprintf(err, errlen, "--threads %d: workload %s runs a fixed set of %d threads; "
			 "--threads does not apply", cfg->threads, w->desc->name,
			 w->desc->default_threads);
		return TLBSIM_EINVAL;
	}
	res->threads = cfg->threads ? cfg->threads
		       : w->desc->default_threads > 0 ? w->desc->default_threads
		       : w->desc->default_threads < 0 ? -w->desc->default_threads * res->cpus
						      : res->cpus;
	if (res->threads < 1 || res->threads > 4096) {
		snprintf(err, errlen, "--threads %d: want 1..4096", res->threads);
		return TLBSIM_EINVAL;
	}
	if (cfg->duration_ns && !w->desc->timed) {
		snprintf(err, errlen, "--duration: workload %s runs a fixed amount of work; "
			 "--duration applies to the timed ones (will-it-scale, ebizzy, "
			 "mprotect_storm, stress-ng-tlb, fork_exec)", w->desc->name);
		return TLBSIM_EINVAL;
	}
	if (cfg->duration_ns && cfg->iters) {
		snprintf(err, errlen, "--duration and --iters both given: a timed run is "
			 "measured either for a time or for a number of rounds");
		return TLBSIM_EINVAL;
	}
	if (cfg->duration_ns > 3600ull * 1000000000ull) {
		snprintf(err, errlen, "--duration: at most 3600 simulated seconds");
		return TLBSIM_EINVAL;
	}
	res->duration_ns = cfg->duration_ns;
	res->iters = cfg->iters ? cfg->iters : w->desc->default_iters;
	if (res->iters < 1 || res->iters > 1000000000ll) {
		snprintf(err, errlen, "--iters %lld: want 1..1000000000", (long long)res->iters);
		return TLBSIM_EINVAL;
	}
	/* workload parameters: defaults, then overrides */
	const struct tlbsim_workload_desc *d = w->desc;
	res->nwparams = d->nparams;
	for (int i = 0; i < d->nparams; i++) {
		snprintf(res->wparams[i].name, sizeof(res->wparams[i].name), "%s", d->params[i].name);
		snprintf(res->wparams[i].value, sizeof(res->wparams[i].value), "%s",
			 d->params[i].defval);
	}
	for (int j = 0; j < cfg->nwparams; j++) {
		int i;
		for (i = 0; i < d->nparams; i++)
			if (strcmp(d->params[i].name, cfg->wparams[j].name) == 0)
				break;
		if (i == d->nparams) {
			snprintf(err, errlen, "workload %s has no parameter '%s' (see tlbsim list "
				 "workloads)", d->name, cfg->wparams[j].name);
			return TLBSIM_EINVAL;
		}
		snprintf(res->wparams[i].value, sizeof(res->wparams[i].value), "%s",
			 cfg->wparams[j].value);
	}
	for (int j = 0; j < cfg->noverrides; j++) {
		if (cfg->overrides[j].param < 0 || cfg->overrides[j].param >= P_COUNT) {
			snprintf(err, errlen, "unknown cost parameter");
			return TLBSIM_EINVAL;
		}
		int rc = param_check_on(res->profile, cfg->overrides[j].param,
					cfg->overrides[j].value, err, errlen);
		if (rc)
			return rc;
	}
	/* host memory: every CPU holds a TLB and a walk cache */
	int64_t p[P_COUNT];
	tlbsim_params_for(res->profile, cfg, p);
	uint64_t entries = (uint64_t)res->cpus *
			   ((uint64_t)p[P_tlb_sets] * (uint64_t)p[P_tlb_ways] +
			    (uint64_t)p[P_wc_sets] * (uint64_t)p[P_wc_ways]);
	/* asids_init() wants more ASIDs than CPUs: after a rollover every CPU
	 * may hold a reserved one and the allocator still needs a free one */
	if (res->profile->arch == ARCH_ARM64 &&
	    arm64_user_asids(p[P_asid_bits], p[P_kpti]) <= (uint32_t)res->cpus) {
		snprintf(err, errlen, "asid_bits=%lld%s gives %u user ASIDs for %d CPUs: the arm64 "
			 "ASID allocator needs more ASIDs than CPUs", (long long)p[P_asid_bits],
			 p[P_kpti] ? " with kpti=1" : "", arm64_user_asids(p[P_asid_bits], p[P_kpti]),
			 res->cpus);
		return TLBSIM_EINVAL;
	}
	/* the leaf TLB's counting filter (hw.h): 65536 sets x 64 ways passed
	 * the limit below on one or two CPUs, then failed to initialise as
	 * "out of memory" (exit 3) */
	const uint64_t leaf = (uint64_t)p[P_tlb_sets] * (uint64_t)p[P_tlb_ways];
	if (leaf > TC_FILT_MAX_SLOTS / 8) {
		snprintf(err, errlen, "tlb_sets x tlb_ways = %llu entries per leaf TLB: at most %u "
			 "(its counting filter of 8 slots per entry)", (unsigned long long)leaf,
			 TC_FILT_MAX_SLOTS / 8);
		return TLBSIM_EINVAL;
	}
	if (entries > (1ull << 26)) {
		snprintf(err, errlen, "%d CPUs x (tlb_sets x tlb_ways + wc_sets x wc_ways) = %llu "
			 "cached entries: absurd (limit 67108864)", res->cpus,
			 (unsigned long long)entries);
		return TLBSIM_EINVAL;
	}
	for (int k = 0; k < tlbsim_knob_count(); k++)
		if (strcmp(tlbsim_policy_value_name(&cfg->policy, k), "?") == 0) {
			snprintf(err, errlen, "invalid policy value for knob %s",
				 tlbsim_knob_get(k)->name);
			return TLBSIM_EINVAL;
		}
	return 0;
}

uint64_t tlbsim_estimate_host_bytes(const struct tlbsim_config *cfg,
				    const struct tlbsim_resolved *res)
{
	int64_t p[P_COUNT];
	tlbsim_params_for(res->profile, cfg, p);
	uint64_t entries = (uint64_t)p[P_tlb_sets] * (uint64_t)p[P_tlb_ways] +
			   (uint64_t)p[P_wc_sets] * (uint64_t)p[P_wc_ways];
	/* struct tc_entry + its dense slot, per CPU; the leaf TLB's filter
	 * (at most 16 one-byte counters per entry) */
	uint64_t bytes = (uint64_t)res->cpus * entries * (sizeof(struct tc_entry) + 4);
	bytes += (uint64_t)res->cpus * (uint64_t)p[P_tlb_sets] * (uint64_t)p[P_tlb_ways] * 16;
	/* a coroutine stack, a gather batch and the task per thread, plus main */
	uint64_t gather = (8 + 10000ull) * 4;
	bytes += ((uint64_t)res->threads + 1) * (128 * 1024 + gather + 1024);
	const struct workload_ops *w = workload_for(cfg);
	if (w && w->estimate)
		bytes += w->estimate(res, res->profile->page_shift);
	return bytes;
}

void tlbsim_params_for(const struct tlbsim_profile *prof, const struct tlbsim_config *cfg,
		       int64_t *p)
{
	for (int i = 0; i < P_COUNT; i++)
		p[i] = prof->arch == ARCH_X86_64 ? tlbsim_param_desc[i].x86_default
						 : tlbsim_param_desc[i].arm64_default;
	for (int j = 0; j < prof->nparams; j++)
		p[prof->params[j].param] = prof->params[j].value;
	for (int j = 0; cfg && j < cfg->noverrides; j++)
		p[cfg->overrides[j].param] = cfg->overrides[j].value;
}

/* a measured window of len ns in which ops operations ran */
static void set_window(struct tlbsim_metrics *m, uint64_t ops, uint64_t len, int tasks)
{
	m->window_ns = len;
	m->ops_per_sec = (uint64_t)((unsigned __int128)ops * 1000000000u / len);
	m->ops_per_sec_task = tasks > 0 ? m->ops_per_sec / (uint64_t)tasks : 0;
}

/* wall/user/sys/idle from the CPUs; ops_per_sec over the whole run unless
 * the workload measured a window of its own (window_ns set) */
static int finish_metrics(struct sim *s, int tasks, char *err, size_t errlen)
{
	struct tlbsim_metrics *m = &s->m;
	/* a run stopped early (--time-limit, a signal) has threads queued to
	 * resume after time already charged to their CPUs: the partial run's
	 * wall time reaches that far, so user + sys + idle = wall x cpus holds */
	/* a thread's time charged before it exited has elapsed too: the last
	 * exit can lie past the last event; so has an interrupt handler's on an
	 * idle CPU, which can end after the last exit (a 1 ms IPI handler:
	 * -D ipi_handler_ns=1000000). user + sys + idle = wall x cpus */
	uint64_t wall = s->stopped ? sim_charged_until(s) : sim_elapsed_until(s);
	/* the CPU-time sums (user + sys + idle = wall x cpus, lock waits over
	 * the threads) are 64-bit ns: a run whose wall times its CPUs or
	 * threads passes 2^64 (with every cost at 1 s, 4096 threads on 1024
	 * CPUs) would print wrapped totals */
	const uint64_t k = (uint64_t)(s->nr_cpus > tasks ? s->nr_cpus : tasks);
	if (k && wall > UINT64_MAX / k) {
		snprintf(err, errlen, "the run lasted %.3g simulated s on %d CPUs and %d threads: "
			 "its CPU-time totals pass the 64-bit ns counters (2^64 ns, 584 years); "
			 "give smaller costs or fewer --iters, CPUs or threads",
			 (double)wall / 1e9, s->nr_cpus, tasks);
		return TLBSIM_EINVAL;
	}
	m->wall_ns = wall;
	/* stopped inside a timed workload's window: measured from its start to
	 * the stop (it was the whole run, warm-up included) */
	if (!m->window_ns && s->stopped && s->window_open && wall > s->window_t0)
		set_window(m, m->ops - s->window_ops0, wall - s->window_t0, tasks);
	if (!m->window_ns && wall)
		set_window(m, m->ops, wall, tasks);
	for (int c = 0; c < s->nr_cpus; c++) {
		struct sim_cpu *cpu = &s->cpus[c];
		m->user_ns += cpu->user_ns;
		m->sys_ns += cpu->sys_ns;
		uint64_t busy = cpu->user_ns + cpu->sys_ns;
		m->idle_ns += wall > busy ? wall - busy : 0;
	}
	return 0;
}

/* the engine's poll with core_opts.progress: report how far the run is, then
 * ask the caller's interrupted() */
static int core_poll(void *ctx)
{
	struct tlbsim_sim *ts = ctx;
	struct sim *s = core_sim(ts);
	double frac = 0;
	if (ts->progress_ns)
		frac = (double)s->now / (double)ts->progress_ns;
	else if (ts->progress_ops)
		frac = (double)s->m.ops / (double)ts->progress_ops;
	ts->progress(ts->progress_ctx, frac < 0.99 ? frac : 0.99);
	return ts->interrupted ? ts->interrupted(ts->interrupted_ctx) : 0;
}

/* what a whole run of res counts, for the progress hook */
static void progress_total(struct tlbsim_sim *ts, const struct tlbsim_resolved *res)
{
	const struct tlbsim_workload_desc *d = ts->w->desc;
	if (res->duration_ns) {
		ts->progress_ns = res->duration_ns;
		return;
	}
	if (ts->w->expected_ops)
		ts->progress_ops = ts->w->expected_ops(res, res->profile->page_shift);
	else
		ts->progress_ops = (uint64_t)res->threads * (uint64_t)(res->iters + (d->timed ? 1 : 0));
}

int core_build(struct tlbsim_sim *ts, const struct tlbsim_config *cfg,
	       const struct tlbsim_resolved *res, const struct core_opts *o, char *err,
	       size_t errlen)
{
	int64_t p[P_COUNT];
	tlbsim_params_for(res->profile, cfg, p);
	memset(ts, 0, sizeof(*ts));
	if (o && o->host_limit && !o->no_workload) {
		uint64_t need = tlbsim_estimate_host_bytes(cfg, res);
		if (need > o->host_limit) {
			snprintf(err, errlen, "this configuration needs about %llu MiB of host memory, "
				 "more than the budget of %llu MiB (--max-memory)",
				 (unsigned long long)((need + (1 << 20) - 1) >> 20),
				 (unsigned long long)(o->host_limit >> 20));
			return TLBSIM_EINVAL;
		}
	}
	struct tlbsim_policy pol = cfg->policy;
	tlbsim_policy_apply_workload(&pol, cfg->workload);
	if (cfg->workload_def)
		tlbsim_policy_apply_desc(&pol, cfg->workload_def);
	int rc = kernel_init(&ts->k, res->profile, res->cpus, p, &pol, cfg->seed,
			     o ? o->stack_pool : NULL);
	struct sim *s = core_sim(ts);
	if (rc) {
		snprintf(err, errlen, "out of memory initialising the simulator");
		goto fail;
	}
	sim_set_explore(s, o ? o->ex : NULL);
	s->trace = o ? o->trace : NULL;
	/* --memory-model tso: store buffers, in check mode only */
	if (cfg->memory_model == TLBSIM_MM_TSO && s->ex && tso_enable(&ts->k.mach)) {
		rc = TLBSIM_ENOMEM;
		snprintf(err, errlen, "out of memory initialising the simulator");
		goto fail;
	}
	if (o) {
		s->host_limit = o->host_limit;
		s->deadline_host_ns = o->deadline_host_ns;
		s->interrupted = o->interrupted;
		s->interrupted_ctx = o->interrupted_ctx;
		s->interrupted_period_ns = o->interrupted_period_ns;
		s->stack_pool = o->stack_pool;
	}
	rc = oracle_attach(&ts->oracle, &ts->k, o ? o->want_kind : -1);
	if (rc) {
		snprintf(err, errlen, "out of memory initialising the simulator");
		goto fail;
	}
	if (o && o->no_workload)
		return 0;
	ts->w = workload_for(cfg);
	if (o && o->progress) {
		ts->interrupted = o->interrupted;
		ts->interrupted_ctx = o->interrupted_ctx;
		ts->progress = o->progress;
		ts->progress_ctx = o->progress_ctx;
		progress_total(ts, res);
		s->interrupted = core_poll;
		s->interrupted_ctx = ts;
	}
	rc = ts->w->setup(s, res, &ts->wl, err, errlen);
	if (rc)
		goto fail;
	rc = workload_start(s, ts->w, ts->wl);
	if (rc) {
		snprintf(err, errlen, "%s", s->errmsg);
		goto fail;
	}
	return 0;
fail:
	core_destroy(ts);
	return rc;
}

void core_destroy(struct tlbsim_sim *ts)
{
	kernel_destroy(&ts->k);
	oracle_free(&ts->oracle);
	ts->w = NULL;
	ts->wl = NULL;
}

int core_check_build(const struct tlbsim_config *cfg, const struct tlbsim_resolved *res,
		     uint64_t host_limit, char *err, size_t errlen)
{
	struct tlbsim_sim *ts = malloc(sizeof(*ts));
	if (!ts) {
		snprintf(err, errlen, "out of memory");
		return TLBSIM_ENOMEM;
	}
	struct core_opts o = {.want_kind = -1, .host_limit = host_limit};
	int rc = core_build(ts, cfg, res, &o, err, errlen);
	if (!rc)
		core_destroy(ts);
	free(ts);
	return rc;
}

int tlbsim_run_one(const struct tlbsim_config *cfg, const struct tlbsim_resolved *res,
		   const struct core_opts *o, struct run_outcome *out, char *err, size_t errlen)
{
	struct tlbsim_sim *ts = malloc(sizeof(*ts));
	if (!ts) {
		snprintf(err, errlen, "out of memory");
		return TLBSIM_ENOMEM;
	}
	/* A run whose caller keeps no pool gets one of its own: the stacks of
	 * threads that end go to the threads started after them. A kernel
	 * build starts tens of thousands of short tasks, and mapping, guarding
	 * and unmapping a stack for each was a third of its host time, in the
	 * host kernel. Stack addresses never reach the results. */
	struct core_opts local = o ? *o : (struct core_opts){.want_kind = -1};
	struct sim_stack_pool *own = NULL;
	if (!local.stack_pool && !local.ex)
		local.stack_pool = own = calloc(1, sizeof(*own));	/* NULL: no reuse */
	int rc = core_build(ts, cfg, res, &local, err, errlen);
	if (rc) {
		free(ts);
		goto free_pool;
	}
	struct sim *s = core_sim(ts);
	rc = sim_run(s);
	if (rc) {
		snprintf(err, errlen, "%s", s->errmsg);
		goto out;
	}
	rc = finish_metrics(s, res->threads, err, errlen);
	if (rc)
		goto out;
	const struct violation_rec *v = &ts->oracle.first;
	if (v->kind >= 0)
		snprintf(s->m.first_violation, sizeof(s->m.first_violation), "%s", v->text);
	if (out) {
		out->m = s->m;
		out->v = *v;
		out->stopped = s->stopped;
		out->stop_signal = s->stop_signal;
		out->steps = s->steps;
		out->threads = (uint64_t)s->nthreads;
		out->stacks_mapped = s->stacks_mapped;
	}
out:
	core_destroy(ts);
	free(ts);
free_pool:
	if (own) {
		sim_stack_pool_free(own);
		free(own);
	}
	return rc;
}

int tlbsim_run(const struct tlbsim_config *cfg, struct tlbsim_resolved *res,
	       struct tlbsim_metrics *m, char *err, size_t errlen)
{
	int rc = tlbsim_resolve(cfg, res, err, errlen);
	if (rc)
		return rc;
	struct run_outcome out;
	rc = tlbsim_run_one(cfg, res, NULL, &out, err, errlen);
	if (!rc && m)
		*m = out.m;
	return rc;
}
