/*
 * explore.h - interleaving exploration (check mode).
 *
 * In check mode the engine does not order threads by simulated time: at every
 * yield point the running thread asks the strategy which runnable entity goes
 * next (itself = "continue", another thread, or a pending RCU callback). Each
 * choice among more than one candidate is a decision; the list of decisions
 * is the schedule. Candidates are ordered canonically: the current thread
 * first, then other threads by id, then callbacks by queueing order; a
 * decision is the index in that order, so 0 always means "no preemption".
 *
 * Strategies: replay (follow a recorded schedule, then continue with 0s),
 * random (uniform), pct (probabilistic concurrency testing, depth d) and dfs
 * (bounded exhaustive with a preemption bound, driven by the checker through
 * replayed prefixes). Every schedule runs on a fresh struct sim.
 */
#ifndef TLBSIM_EXPLORE_H
#define TLBSIM_EXPLORE_H

#include <stdbool.h>
#include <stdint.h>

#include "sim/sim.h"

enum explore_strategy { EX_REPLAY, EX_RANDOM, EX_PCT, EX_DFS };

struct trace_rec {
	uint64_t step;
	uint64_t time;
	int16_t cpu;
	int16_t tid;
	uint16_t kind;		/* enum yield_point or enum trace_extra */
	uint16_t pad;
	uint64_t a, b;
};

enum trace_extra {
	TR_TLBI = YP_COUNT,	/* a = enum tlbi_kind, b = count */
	TR_IPI,			/* a = targets, b = freed_tables */
	TR_RCU_FREE,		/* a = first table frame, b = number of tables */
	TR_VIOLATION,
	TR_EXIT,
	TR_SWITCH,		/* scheduler picked thread a */
	TR_NESTED,		/* a = tlb_flush_pending read by tlb_finish_mmu, b = nested */
	TR_COUNT
};

struct explore {
	enum explore_strategy strategy;
	struct rng rng;
	/* decisions of this schedule */
	uint8_t *dec;
	uint8_t *nopt;		/* number of options at each decision */
	uint32_t ndec;
	size_t cap, cap_nopt;
	/* forced prefix (replay / dfs) */
	const uint8_t *prefix;
	uint32_t nprefix;
	/* pct */
	int depth;
	uint64_t pct_k;			/* expected number of steps */
	uint64_t change_at[16];
	int nchange;
	int prio[256];			/* by thread id; callbacks use prio_cb */
	int next_prio;
	/* limits and state */
	uint64_t steps, max_steps;
	bool stop;			/* stop the schedule (violation or limit) */
	int want_kind;			/* stop only at this invariant (-1: any) */
	uint64_t forced_seq;		/* entity the scheduler must run next */
	/* trace */
	bool record;
	struct trace_rec *tr;
	uint32_t ntr;
	size_t cap_tr;
};


void explore_init(struct explore *ex, enum explore_strategy st, uint64_t seed, int depth,
		  uint64_t pct_k, const uint8_t *prefix, uint32_t nprefix);
void explore_free(struct explore *ex);
void explore_trace(struct sim *s, unsigned kind, uint64_t a, uint64_t b);
void explore_add_thread(struct sim *s, struct sim_thread *t);

/* Engine hooks (sim.c) */
bool explore_yield(struct sim *s, struct sim_thread *t, enum yield_point yp);
int explore_run(struct sim *s);

/* schedule tokens: "<config hash>-<decisions>" */
int token_encode(uint32_t cfg_hash, const uint8_t *dec, uint32_t n, char *out, size_t outlen);
int token_decode(const char *tok, uint32_t *cfg_hash, uint8_t **dec, uint32_t *n);

#endif
