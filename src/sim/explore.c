/*
 * explore.c - the exploration side of the engine (see explore.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/explore.h"
#include "sim/grow.h"

void explore_init(struct explore *ex, enum explore_strategy st, uint64_t seed, int depth,
		  uint64_t pct_k, const uint8_t *prefix, uint32_t nprefix)
{
	memset(ex, 0, sizeof(*ex));
	ex->strategy = st;
	rng_seed(&ex->rng, seed);
	ex->prefix = prefix;
	ex->nprefix = nprefix;
	ex->depth = depth < 1 ? 1 : depth > 16 ? 16 : depth;
	ex->pct_k = pct_k ? pct_k : 1000;
	ex->max_steps = 200000;
	ex->want_kind = -1;
	ex->next_prio = ex->depth + 1000;
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
	free(ex->tr);
	memset(ex, 0, sizeof(*ex));
}

void explore_trace(struct sim *s, unsigned kind, uint64_t a, uint64_t b)
{
	struct explore *ex = s->ex;
	if (!ex || !ex->record)
		return;
	if (GROW(&ex->tr, &ex->cap_tr, ex->ntr, (size_t)ex->ntr + 1, 1024))
		return;
	struct sim_thread *t = s->curr;
	struct trace_rec *r = &ex->tr[ex->ntr++];
	r->step = ex->steps;
	r->time = s->now;
	r->cpu = (int16_t)(t ? t->cpu : -1);
	r->tid = (int16_t)(t ? t->id : -1);
	r->kind = (uint16_t)kind;
	r->a = a;
	r->b = b;
}

void explore_add_thread(struct sim *s, struct sim_thread *t)
{
	struct explore *ex = s->ex;
	if (t->id < 256) {
		/* PCT: distinct random initial priorities above the change levels */
		ex->prio[t->id] = ex->depth + 1 + (int)rng_below(&ex->rng, 1u << 20);
	}
}

static void record(struct explore *ex, int idx, int nopt)
{
	/* two arrays, each grown on its own: a failure leaves both valid */
	if (GROW(&ex->dec, &ex->cap, ex->ndec, (size_t)ex->ndec + 1, 1024) ||
	    GROW(&ex->nopt, &ex->cap_nopt, ex->ndec, (size_t)ex->ndec + 1, 1024)) {
		ex->stop = true;
		return;
	}
	ex->dec[ex->ndec] = (uint8_t)idx;
	ex->nopt[ex->ndec] = (uint8_t)(nopt | (0));
	ex->ndec++;
}

/* Candidate list in canonical order. cands[i] = seq of the ready entry, or 0
 * for the current thread (always first when present). */
#define MAX_CANDS 64
static int build_cands(struct sim *s, struct sim_thread *cur, uint64_t *cands, int *prio)
{
	struct explore *ex = s->ex;
	uint64_t key[MAX_CANDS];
	int n = 0;
	if (cur) {
		prio[n] = cur->id < 256 ? ex->prio[cur->id] : 0;
		key[n] = 0;
		cands[n++] = 0;
	}
	/* threads by id, then callbacks by seq (insertion sort on key) */
	int first = n;
	for (uint32_t i = 0; i < s->ready.n && n < MAX_CANDS; i++) {
		const struct event *e = &s->ready.e[i];
		bool thread = e->kind == EV_RESUME;
		const struct sim_thread *t = thread ? e->ptr : NULL;
		uint64_t k = thread ? (uint64_t)t->id : (1ull << 40) + e->seq;
		int p = thread ? (t->id < 256 ? ex->prio[t->id] : 0)
			       : -1;	/* callbacks run when nothing else can (pct) */
		int j = n++;
		while (j > first && key[j - 1] > k) {
			key[j] = key[j - 1];
			cands[j] = cands[j - 1];
			prio[j] = prio[j - 1];
			j--;
		}
		key[j] = k;
		cands[j] = e->seq;
		prio[j] = p;
	}
	return n;
}

static int decide(struct sim *s, struct sim_thread *cur, int n, int *prio)
{
	struct explore *ex = s->ex;
	if (n <= 1)
		return 0;
	int idx = 0;
	switch (ex->strategy) {
	case EX_REPLAY:
	case EX_DFS:
		if (ex->ndec < ex->nprefix) {
			idx = ex->prefix[ex->ndec];
			if (idx >= n)
				idx = n - 1;	/* diverged (should not happen on replay) */
		}
		break;
	case EX_RANDOM:
		idx = (int)rng_below(&ex->rng, (uint64_t)n);
		break;
	case EX_PCT:
		for (int i = 0; i < ex->nchange; i++)
			if (cur && ex->change_at[i] == ex->steps && cur->id < 256)
				ex->prio[cur->id] = i + 1;
		if (cur && cur->id < 256)
			prio[0] = ex->prio[cur->id];
		for (int i = 1; i < n; i++)
			if (prio[i] > prio[idx])
				idx = i;
		break;
	}
	record(ex, idx, n);
	return idx;
}

/* A yield point of the running thread t. Returns true if t must switch away
 * (then ex->forced_seq names the entity to run, or the run stops). */
bool explore_yield(struct sim *s, struct sim_thread *t, enum yield_point yp)
{
	struct explore *ex = s->ex;
	ex->steps++;
	if (ex->steps > ex->max_steps)
		ex->stop = true;
	if (ex->stop)
		return true;
	uint64_t cands[MAX_CANDS];
	int prio[MAX_CANDS];
	int n = build_cands(s, t, cands, prio);
	int idx = decide(s, t, n, prio);
	if (idx == 0)
		return false;
	ex->forced_seq = cands[idx];
	return true;
}

static void ready_remove(struct sim *s, uint32_t i)
{
	s->ready.e[i] = s->ready.e[--s->ready.n];
}

int explore_run(struct sim *s)
{
	struct explore *ex = s->ex;
	while (s->ready.n > 0 && !s->error && !ex->stop) {
		uint32_t pick = 0;
		if (ex->forced_seq) {
			for (pick = 0; pick < s->ready.n; pick++)
				if (s->ready.e[pick].seq == ex->forced_seq)
					break;
			SIM_BUG_ON(s, pick == s->ready.n);
			ex->forced_seq = 0;
		} else {
			uint64_t cands[MAX_CANDS];
			int prio[MAX_CANDS];
			int n = build_cands(s, NULL, cands, prio);
			int idx = decide(s, NULL, n, prio);
			for (pick = 0; pick < s->ready.n; pick++)
				if (s->ready.e[pick].seq == cands[idx])
					break;
		}
		struct event ev = s->ready.e[pick];
		ready_remove(s, pick);
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

/* ---- tokens ---- */
static const char digits[] = "0123456789abcdefghijklmnopqrstuvwxy";

int token_encode(uint32_t cfg_hash, const uint8_t *dec, uint32_t n, char *out, size_t outlen)
{
	size_t o = (size_t)snprintf(out, outlen, "t1.%08x.", cfg_hash);
	for (uint32_t i = 0; i < n;) {
		uint32_t j = i;
		while (j < n && dec[j] == 0)
			j++;
		if (j - i >= 4) {
			o += (size_t)snprintf(out + o, o < outlen ? outlen - o : 0, "-%x-", j - i);
			i = j;
			continue;
		}
		if (dec[i] >= sizeof(digits) - 1)
			return -1;
		if (o + 1 < outlen)
			out[o] = digits[dec[i]];
		o++;
		i++;
	}
	if (o >= outlen)
		return -1;
	out[o] = 0;
	return 0;
}

int token_decode(const char *tok, uint32_t *cfg_hash, uint8_t **dec, uint32_t *n)
{
	unsigned h;
	int pos = 0;
	if (sscanf(tok, "t1.%8x.%n", &h, &pos) != 1 || pos != 12)
		return -1;
	*cfg_hash = h;
	const char *p = tok + pos;
	size_t cap = 64, cnt = 0;
	uint8_t *d = malloc(cap);
	if (!d)
		return -1;
	while (*p) {
		uint64_t run = 1;
		uint8_t v;
		if (*p == '-') {
			char *end;
			run = strtoull(p + 1, &end, 16);
			if (end == p + 1 || *end != '-' || run == 0 || run > 100000000)
				goto bad;
			p = end + 1;
			v = 0;
		} else {
			const char *c = strchr(digits, *p);
			if (!c || !*p)
				goto bad;
			v = (uint8_t)(c - digits);
			p++;
		}
		while (run--) {
			if (cnt == cap) {
				cap *= 2;
				uint8_t *nd = realloc(d, cap);
				if (!nd)
					goto bad;
				d = nd;
			}
			d[cnt++] = v;
		}
	}
	*dec = d;
	*n = (uint32_t)cnt;
	return 0;
bad:
	free(d);
	return -1;
}
