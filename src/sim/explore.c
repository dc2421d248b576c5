/*
 * explore.c - the exploration side of the engine (see explore.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/explore.h"
#include "sim/grow.h"

void explore_init(struct explore *ex, enum explore_strategy st, uint64_t seed, int depth,
		  uint64_t pct_k, const uint32_t *prefix, uint32_t nprefix)
{
	memset(ex, 0, sizeof(*ex));
	ex->strategy = st;
	rng_seed(&ex->rng, seed);
	ex->salt = seed;
	ex->prefix = prefix;
	ex->nprefix = nprefix;
	ex->depth = depth < 1 ? 1 : depth > 16 ? 16 : depth;
	ex->pct_k = pct_k ? pct_k : 1000;
	ex->max_steps = EXPLORE_MAX_STEPS_DEFAULT;
	if (st == EX_PCT) {
		ex->nchange = ex->depth - 1;
		for (int i = 0; i < ex->nchange; i++)
			ex->change_at[i] = 1 + rng_below(&ex->rng, ex->pct_k);
	}
}

void explore_free(struct explore *ex)
{
	free(ex->dec);
	free(ex->nopt);
	free(ex->prio);
	free(ex->cand_seq);
	free(ex->cand_key);
	free(ex->cand_prio);
	free(ex->cand_w);
	free(ex->cand_tmp);
	memset(ex, 0, sizeof(*ex));
}

void explore_add_thread(struct sim *s, struct sim_thread *t)
{
	struct explore *ex = s->ex;
	if (GROW(&ex->prio, &ex->cap_prio, (size_t)t->id, (size_t)t->id + 1, 64)) {
		sim_oom(s, "exploration state");
		return;
	}
	/* PCT: distinct random initial priorities above the change levels */
	ex->prio[t->id] = ex->depth + 1 + (int)rng_below(&ex->rng, 1u << 20);
}

static void record(struct sim *s, uint32_t idx, uint32_t nopt)
{
	struct explore *ex = s->ex;
	/* two arrays, each grown on its own: a failure leaves both valid */
	if (GROW(&ex->dec, &ex->cap, ex->ndec, (size_t)ex->ndec + 1, 1024) ||
	    GROW(&ex->nopt, &ex->cap_nopt, ex->ndec, (size_t)ex->ndec + 1, 1024)) {
		sim_oom(s, "the schedule");
		return;
	}
	ex->dec[ex->ndec] = idx;
	ex->nopt[ex->ndec] = nopt;
	ex->ndec++;
}

/* candidate keys below this are completion entities (their seq) */
#define ENTITY_KEY_END (1ull << 62)

/* splitmix64 finaliser */
static uint64_t mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* pct: an entity's priority, above the change levels like a thread's */
static int entity_prio(const struct explore *ex, uint64_t seq)
{
	return ex->depth + 1 + (int)(mix64(seq ^ mix64(ex->salt)) & ((1u << 20) - 1));
}

/* Above this many pending entries build_cands sorts with qsort instead of
 * inserting each in place (quadratic: 18 000 entities pending after IPI
 * rounds to 1024 CPUs took seconds per step). Keys are unique, so both give
 * the same order. */
#define EXPLORE_SORT_MIN 64

static int cand_cmp(const void *a, const void *b)
{
	uint64_t x = ((const struct explore_cand *)a)->key, y = ((const struct explore_cand *)b)->key;
	return (x > y) - (x < y);
}

/* Candidate list in canonical order. cand_seq[i] = seq of the ready entry, or
 * 0 for the current thread (always first when present). */
static uint32_t build_cands(struct sim *s, struct sim_thread *cur)
{
	struct explore *ex = s->ex;
	size_t need = (size_t)s->q.nready + 1;
	if (GROW(&ex->cand_seq, &ex->cap_cand, 0, need, 64) ||
	    GROW(&ex->cand_key, &ex->cap_cand_key, 0, need, 64) ||
	    GROW(&ex->cand_prio, &ex->cap_cand_prio, 0, need, 64) ||
	    GROW(&ex->cand_w, &ex->cap_cand_w, 0, need, 64)) {
		sim_oom(s, "exploration state");
		return 0;
	}
	uint64_t *cands = ex->cand_seq, *key = ex->cand_key;
	int *prio = ex->cand_prio;
	uint32_t *w = ex->cand_w;
	uint32_t n = 0;
	if (cur) {
		prio[n] = ex->prio[cur->id];
		key[n] = 0;
		w[n] = EXPLORE_RANDOM_WEIGHT;
		cands[n++] = 0;
	}
	/* completion entities by seq (the natural next step of a CPU waiting
	 * for a TLBI or an IPI: with nothing current, 0 lets it progress),
	 * threads by id, then timed callbacks by seq (sorted on key: by
	 * insertion, or by qsort above EXPLORE_SORT_MIN entries) */
	uint32_t first = n;
	const bool sort = s->q.nready > EXPLORE_SORT_MIN;
	if (sort && GROW(&ex->cand_tmp, &ex->cap_cand_tmp, 0, s->q.nready, 64)) {
		sim_oom(s, "exploration state");
		return 0;
	}
	for (uint32_t i = 0; i < s->q.nready; i++) {
		const struct event *e = &s->q.ready[i];
		bool thread = e->kind == EV_RESUME;
		const struct sim_thread *t = thread ? e->ptr : NULL;
		uint64_t k = thread ? ENTITY_KEY_END + (uint64_t)t->id
			   : e->entity ? e->seq : (1ull << 63) + e->seq;
		/* pct: timed callbacks run when nothing else can; an entity (a
		 * TLBI or IPI completing on another CPU) is ranked like a thread,
		 * by a priority fixed by its seq and the seed, so its completion
		 * is neither always early nor always late */
		int p = thread ? ex->prio[t->id] : e->entity ? entity_prio(ex, e->seq) : -1;
		uint32_t wt = e->entity == ENTITY_LATE	   ? 1u
			    : e->entity == ENTITY_PROMPT ? EXPLORE_RANDOM_WEIGHT * ENTITY_PROMPT_WEIGHT
							 : EXPLORE_RANDOM_WEIGHT;
		if (sort) {
			ex->cand_tmp[i] = (struct explore_cand){.key = k, .seq = e->seq, .prio = p,
								.w = wt};
			continue;
		}
		uint32_t j = n++;
		uint32_t j0 = j;
		while (j > first && key[j - 1] > k) {
			key[j] = key[j - 1];
			cands[j] = cands[j - 1];
			prio[j] = prio[j - 1];
			w[j] = w[j - 1];
			j--;
		}
		key[j] = k;
		cands[j] = e->seq;
		prio[j] = p;
		w[j] = wt;
		ex->poll_work += 1 + (j0 - j);
	}
	if (sort) {
		const uint32_t m = s->q.nready;
		qsort(ex->cand_tmp, m, sizeof(*ex->cand_tmp), cand_cmp);
		for (uint32_t i = 0; i < m; i++, n++) {
			const struct explore_cand *c = &ex->cand_tmp[i];
			key[n] = c->key;
			cands[n] = c->seq;
			prio[n] = c->prio;
			w[n] = c->w;
		}
		/* about m log2 m compares */
		ex->poll_work += (uint64_t)m * (uint64_t)(64 - __builtin_clzll(m));
	}
	return n;
}

/* About 10-50 ms of candidate-list work on this machine class */
#define EXPLORE_POLL_WORK (1ull << 24)

/* The host-time budget of the search and SIGINT/SIGTERM: true (and
 * ex->stop set) when either says stop. Looked at every 4096 steps and after
 * EXPLORE_POLL_WORK of candidate-list work, so that neither one long
 * schedule nor steps made slow by many pending entities outlast them (a
 * check of tlb_flush2 on 1024 CPUs ran past --time-limit and SIGTERM: its
 * IPI rounds left ~18 000 entities pending, run between threads' steps,
 * and each choice sorted them). */
static bool explore_poll(struct sim *s)
{
	struct explore *ex = s->ex;
	ex->poll_work = 0;
	if (ex->interrupted && (ex->stop_signal = ex->interrupted(ex->interrupted_ctx))) {
		ex->stop = true;
	} else if (ex->deadline_host_ns && sim_host_ns() >= ex->deadline_host_ns) {
		ex->stop = true;
		ex->timed_out = true;
	}
	return ex->stop;
}

static uint32_t decide(struct sim *s, struct sim_thread *cur, uint32_t n)
{
	struct explore *ex = s->ex;
	int *prio = ex->cand_prio;
	if (n <= 1)
		return 0;
	uint32_t idx = 0;
	switch (ex->strategy) {
	case EX_REPLAY:
	case EX_DFS:
		if (ex->ndec < ex->nprefix) {
			idx = ex->prefix[ex->ndec];
			if (idx >= n) {
				idx = n - 1;	/* the token does not fit this run */
				ex->diverged = true;
			}
		}
		break;
	case EX_RANDOM: {
		/* a completion entity weighs 1, any other candidate
		 * EXPLORE_RANDOM_WEIGHT: a pending TLBI or IPI completes soon,
		 * but seldom at the first chance (a stale-entry race needs it
		 * late); with no entity among them, uniform as always */
		uint64_t total = 0;
		bool any = false;
		for (uint32_t i = 0; i < n; i++) {
			total += ex->cand_w[i];
			any |= ex->cand_w[i] != EXPLORE_RANDOM_WEIGHT;
		}
		if (!any) {
			idx = (uint32_t)rng_below(&ex->rng, (uint64_t)n);
			break;
		}
		uint64_t r = rng_below(&ex->rng, total);
		for (idx = 0; idx + 1 < n && r >= ex->cand_w[idx]; idx++)
			r -= ex->cand_w[idx];
		break;
	}
	case EX_PCT:
		for (int i = 0; i < ex->nchange; i++)
			if (cur && ex->change_at[i] == s->steps)
				ex->prio[cur->id] = i + 1;
		if (cur)
			prio[0] = ex->prio[cur->id];
		for (uint32_t i = 1; i < n; i++)
			if (prio[i] > prio[idx])
				idx = i;
		break;
	}
	record(s, idx, n);
	return idx;
}

/* A yield point of the running thread t. Returns true if t must switch away
 * (then ex->forced_seq names the entity to run, or the run stops). */
bool explore_yield(struct sim *s, struct sim_thread *t, const struct sim_point *yp)
{
	(void)yp;
	struct explore *ex = s->ex;
	s->steps++;
	if (s->steps > ex->max_steps) {
		ex->stop = true;
		ex->cut = true;
	}
	if (!ex->stop && ((s->steps & 4095u) == 0 || ex->poll_work >= EXPLORE_POLL_WORK))
		explore_poll(s);
	if (ex->stop)
		return true;
	uint32_t n = build_cands(s, t);
	uint32_t idx = decide(s, t, n);
	if (idx == 0)
		return false;
	ex->forced_seq = ex->cand_seq[idx];
	return true;
}

int explore_run(struct sim *s)
{
	struct explore *ex = s->ex;
	while (s->q.nready > 0 && !s->error && !ex->stop) {
		/* entities run here without a thread's step: the same look */
		if (ex->poll_work >= EXPLORE_POLL_WORK && explore_poll(s))
			break;
		uint32_t pick = 0;
		if (ex->forced_seq) {
			for (pick = 0; pick < s->q.nready; pick++)
				if (s->q.ready[pick].seq == ex->forced_seq)
					break;
			SIM_BUG_ON(s, pick == s->q.nready);
			ex->forced_seq = 0;
		} else {
			uint32_t n = build_cands(s, NULL);
			uint32_t idx = decide(s, NULL, n);
			for (pick = 0; pick < s->q.nready; pick++)
				if (s->q.ready[pick].seq == ex->cand_seq[idx])
					break;
		}
		struct event ev = s->q.ready[pick];
		evq_ready_remove(&s->q, pick);
		if (ev.kind == EV_RESUME && s->cpu_ops && s->cpu_ops->before_resume)
			s->cpu_ops->before_resume(s, ((struct sim_thread *)ev.ptr)->cpu);
		sim_dispatch(s, &ev);
	}
	if (s->error)
		return s->error;
	if (!ex->stop && s->live_threads > 0) {
		sim_fail(s, TLBSIM_EINTERNAL, "deadlock: %d simulated threads asleep forever",
			 s->live_threads);
		return s->error;
	}
	return 0;
}
