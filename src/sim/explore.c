/*
 * explore.c - the exploration side of the engine (see explore.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/explore.h"
#include "sim/grow.h"

/* splitmix64 finaliser */
static uint64_t mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

void explore_init(struct explore *ex, enum explore_strategy st, uint64_t seed, int depth,
		  uint64_t pct_k, const uint32_t *prefix, uint32_t nprefix)
{
	memset(ex, 0, sizeof(*ex));
	ex->strategy = st;
	rng_seed(&ex->rng, seed);
	ex->salt = mix64(seed);
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
	free(ex->cand);
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

int explore_entity_prio(const struct explore *ex, uint64_t seq)
{
	return ex->depth + 1 + (int)(mix64(seq ^ ex->salt) & ((1u << 20) - 1));
}

/* A pending entry's place in the canonical order (explore.h): completion
 * entities by seq (the natural next step of a CPU waiting for a TLBI or an
 * IPI: with nothing current, 0 lets it progress), threads by id, then timed
 * callbacks by seq. Keys are unique. */
static inline uint64_t cand_key(const struct event *e)
{
	if (e->kind == EV_RESUME)
		return ENTITY_KEY_END + (uint64_t)((const struct sim_thread *)e->ptr)->id;
	return e->entity ? e->seq : (1ull << 63) + e->seq;
}

/* random: a candidate's weight (explore.h) */
static inline uint32_t cand_weight(const struct event *e)
{
	return e->entity == ENTITY_LATE	    ? 1u
	       : e->entity == ENTITY_PROMPT ? EXPLORE_RANDOM_WEIGHT * ENTITY_PROMPT_WEIGHT
					    : EXPLORE_RANDOM_WEIGHT;
}

/* pct: a pending entry's priority. Timed callbacks run when nothing else
 * can; an entity (a TLBI or IPI completing on another CPU) is ranked like a
 * thread, by a priority fixed by its seq and the seed, so its completion is
 * neither always early nor always late. */
static inline int cand_prio(const struct explore *ex, const struct event *e)
{
	if (e->kind == EV_RESUME)
		return ex->prio[((const struct sim_thread *)e->ptr)->id];
	return e->entity ? e->prio : -1;
}

/* The ready entries as candidates, in s->q.ready's order (unsorted): key,
 * index in the ready list, and weight (random's, or 1 when !weights).
 * Returns false when out of host memory. */
static bool gather(struct sim *s, bool weights)
{
	struct explore *ex = s->ex;
	const uint32_t m = s->q.nready;
	if (GROW(&ex->cand, &ex->cap_cand, 0, m, 64)) {
		sim_oom(s, "exploration state");
		return false;
	}
	for (uint32_t i = 0; i < m; i++) {
		const struct event *e = &s->q.ready[i];
		ex->cand[i] = (struct explore_cand){
			.key = cand_key(e), .pos = i, .w = weights ? cand_weight(e) : 1u};
	}
	ex->poll_work += m;
	return true;
}

static inline void cand_swap(struct explore_cand *a, uint32_t i, uint32_t j)
{
	struct explore_cand t = a[i];
	a[i] = a[j];
	a[j] = t;
}

static int cand_cmp(const void *a, const void *b)
{
	uint64_t x = ((const struct explore_cand *)a)->key, y = ((const struct explore_cand *)b)->key;
	return (x > y) - (x < y);
}

/* Of a[0..m) taken in key order, the entry at weighted position r (r below
 * the sum of the weights): the first whose running sum of weights passes r.
 * Returns its rank (its index in key order) and leaves it at a[rank]. A
 * quickselect: O(m) expected instead of a sort, which with 18 000 entities
 * pending after IPI rounds to 1024 CPUs took milliseconds per decision. The
 * keys are unique, so the answer does not depend on the pivots; a run of
 * bad pivots falls back to sorting what is left. Reorders a. */
static uint32_t cand_select(struct explore *ex, struct explore_cand *a, uint32_t m, uint64_t r)
{
	uint32_t lo = 0, hi = m;
	for (int round = 0; hi - lo > 1; round++) {
		if (round == 64) {
			qsort(a + lo, hi - lo, sizeof(*a), cand_cmp);
			ex->poll_work += (uint64_t)(hi - lo) * (uint64_t)(64 - __builtin_clzll(hi - lo));
			for (; lo + 1 < hi && r >= a[lo].w; lo++)
				r -= a[lo].w;
			return lo;
		}
		/* the median of the first, middle and last keys, as the pivot
		 * at hi - 1 */
		const uint32_t mid = lo + (hi - lo) / 2, last = hi - 1;
		const uint64_t k0 = a[lo].key, k1 = a[mid].key, k2 = a[last].key;
		const uint32_t med = (k0 < k1) == (k1 < k2) ? mid : (k1 < k0) == (k0 < k2) ? lo : last;
		cand_swap(a, med, last);
		const uint64_t pk = a[last].key;
		/* the keys below the pivot's to [lo, p), their weight lw */
		uint32_t p = lo;
		uint64_t lw = 0;
		for (uint32_t i = lo; i < last; i++)
			if (a[i].key < pk) {
				lw += a[i].w;
				cand_swap(a, i, p++);
			}
		cand_swap(a, p, last);
		ex->poll_work += hi - lo;
		if (r < lw) {
			hi = p;
		} else if (r - lw < a[p].w) {
			return p;
		} else {
			r -= lw + a[p].w;
			lo = p + 1;
		}
	}
	return lo;
}

/* The decision at a yield point of cur, or between entities (cur NULL). The
 * candidates, in canonical order, are cur (index 0 when there is one) and
 * the ready entries by key; the decision is the chosen one's index in that
 * order, recorded when there are two or more. Returns it, and in *pos the
 * chosen ready entry's index in s->q.ready (when it is not cur). No list
 * is sorted: each strategy needs one candidate and its rank, found in
 * O(n). 0 with s->error set when out of host memory. */
static uint32_t decide(struct sim *s, struct sim_thread *cur, uint32_t *pos)
{
	struct explore *ex = s->ex;
	const uint32_t m = s->q.nready, c = cur ? 1u : 0u, n = m + c;
	*pos = 0;
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
		if (idx == c) {
			/* the first ready entry (with no thread current: let
			 * the oldest pending TLBI or IPI progress, dfs's most
			 * frequent decision): one scan for the lowest key */
			uint64_t bk = UINT64_MAX;
			for (uint32_t i = 0; i < m; i++) {
				const uint64_t k = cand_key(&s->q.ready[i]);
				if (k < bk) {
					bk = k;
					*pos = i;
				}
			}
			ex->poll_work += m;
		} else if (idx > c) {
			if (!gather(s, false))
				return 0;
			idx = c + cand_select(ex, ex->cand, m, idx - c);
			*pos = ex->cand[idx - c].pos;
		}
		break;
	case EX_RANDOM: {
		/* a completion entity weighs 1, any other candidate
		 * EXPLORE_RANDOM_WEIGHT: a pending TLBI or IPI completes soon,
		 * but seldom at the first chance (a stale-entry race needs it
		 * late); with no entity among them, uniform as always */
		if (!gather(s, true))
			return 0;
		uint64_t total = (uint64_t)c * EXPLORE_RANDOM_WEIGHT;
		bool any = false;
		for (uint32_t i = 0; i < m; i++) {
			total += ex->cand[i].w;
			any |= ex->cand[i].w != EXPLORE_RANDOM_WEIGHT;
		}
		uint64_t r;
		if (!any) {
			/* every weight is EXPLORE_RANDOM_WEIGHT: rank k covers
			 * [k W, (k + 1) W) */
			idx = (uint32_t)rng_below(&ex->rng, (uint64_t)n);
			if (idx < c)
				break;
			r = (uint64_t)(idx - c) * EXPLORE_RANDOM_WEIGHT;
		} else {
			r = rng_below(&ex->rng, total);
			if (c && r < EXPLORE_RANDOM_WEIGHT) {
				idx = 0;
				break;
			}
			r -= (uint64_t)c * EXPLORE_RANDOM_WEIGHT;
		}
		idx = c + cand_select(ex, ex->cand, m, r);
		*pos = ex->cand[idx - c].pos;
		break;
	}
	case EX_PCT: {
		for (int i = 0; i < ex->nchange; i++)
			if (cur && ex->change_at[i] == s->steps)
				ex->prio[cur->id] = i + 1;
		/* the highest priority, the earliest in canonical order among
		 * equals: cur first, then the lowest key */
		bool have = cur != NULL, best_cur = have;
		int bp = cur ? ex->prio[cur->id] : 0;
		uint64_t bk = 0;
		uint32_t bi = 0;
		for (uint32_t i = 0; i < m; i++) {
			const struct event *e = &s->q.ready[i];
			const int p = cand_prio(ex, e);
			const uint64_t k = cand_key(e);
			if (!have || p > bp || (p == bp && !best_cur && k < bk)) {
				have = true;
				best_cur = false;
				bp = p;
				bk = k;
				bi = i;
			}
		}
		if (best_cur)
			break;
		/* its rank: the ready entries before it */
		uint32_t before = 0;
		for (uint32_t i = 0; i < m; i++)
			before += cand_key(&s->q.ready[i]) < bk;
		ex->poll_work += 2 * (uint64_t)m;
		idx = c + before;
		*pos = bi;
		break;
	}
	}
	record(s, idx, n);
	return idx;
}

/* About 10-50 ms of candidate-list work on this machine class */
#define EXPLORE_POLL_WORK (1ull << 24)

/* The host-time budget of the search and SIGINT/SIGTERM: true (and
 * ex->stop set) when either says stop. Looked at every 4096 steps and after
 * EXPLORE_POLL_WORK of candidate-list work, so that neither one long
 * schedule nor steps made slow by many pending entities outlast them (a
 * check of tlb_flush2 on 1024 CPUs ran past --time-limit and SIGTERM: its
 * IPI rounds left ~18 000 entities pending, run between threads' steps,
 * and each choice then sorted them; it still reads them all). */
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
	uint32_t pos;
	if (decide(s, t, &pos) == 0)
		return false;
	ex->forced_seq = s->q.ready[pos].seq;
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
			decide(s, NULL, &pick);
			if (s->error)
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
		sim_fail_deadlock(s);
		return s->error;
	}
	return 0;
}
