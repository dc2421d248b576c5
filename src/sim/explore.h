/*
 * explore.h - interleaving exploration (check mode).
 *
 * In check mode the engine does not order threads by simulated time: at every
 * yield point the running thread asks the strategy which runnable entity goes
 * next (itself = "continue", another thread, a pending RCU callback or timer,
 * or a completion entity: a TLBI or IPI step on another CPU). Each
 * choice among more than one candidate is a decision; the list of decisions
 * is the schedule. Candidates are ordered canonically: the current thread
 * first, then completion entities (sim_call_entity) by queueing order, other
 * threads by id, then timed callbacks by queueing order; a decision is the
 * index in that order, so 0 always means "no preemption" (and, with no
 * current thread, "let the pending TLBI or IPI progress").
 *
 * Strategies: replay (follow a recorded schedule, then continue with 0s),
 * random (uniform; weighted when completion entities are candidates: a TLBI
 * completion 1, a thread or timer EXPLORE_RANDOM_WEIGHT, an IPI step
 * ENTITY_PROMPT_WEIGHT times that), pct (probabilistic concurrency testing,
 * depth d; an entity gets a seeded priority like a thread's) and dfs
 * (bounded exhaustive with a preemption bound, driven by the checker through
 * replayed prefixes). Every schedule runs on a fresh struct sim.
 */
#ifndef TLBSIM_EXPLORE_H
#define TLBSIM_EXPLORE_H

#include <stdbool.h>
#include <stdint.h>

#include "sim/sim.h"

enum explore_strategy { EX_REPLAY, EX_RANDOM, EX_PCT, EX_DFS };

#define EXPLORE_MAX_STEPS_DEFAULT 200000u
/* random: the weight of a thread or timed callback against a completion
 * entity's 1 */
#ifndef EXPLORE_RANDOM_WEIGHT
#define EXPLORE_RANDOM_WEIGHT 4u
#endif
#ifndef ENTITY_PROMPT_WEIGHT
#define ENTITY_PROMPT_WEIGHT 4u
#endif

/* a ready entry as a candidate of a decision (explore.c) */
struct explore_cand {
	uint64_t key;		/* its place in the canonical order */
	uint32_t pos;		/* its index in the ready list */
	uint32_t w;		/* random: its weight (else 1) */
};

struct explore {
	enum explore_strategy strategy;
	struct rng rng;
	/* decisions of this schedule */
	uint32_t *dec;
	uint32_t *nopt;		/* number of options at each decision */
	uint32_t ndec;
	size_t cap, cap_nopt;
	/* forced prefix (replay / dfs) */
	const uint32_t *prefix;
	uint32_t nprefix;
	bool diverged;		/* a prefix decision named an option that did not exist */
	/* pct */
	int depth;
	uint64_t pct_k;			/* expected number of steps */
	uint64_t change_at[16];
	int nchange;
	int *prio;			/* by thread id; grown as threads appear */
	uint64_t salt;			/* the seed's mix: entity priorities (pct) */
	size_t cap_prio;
	/* the ready entries of the current decision (grown, never capped) */
	struct explore_cand *cand;
	size_t cap_cand;
	/* limits and state */
	uint64_t max_steps;
	uint64_t deadline_host_ns;	/* stop the schedule at this sim_host_ns() (0: never) */
	int (*interrupted)(void *ctx);	/* polled with the deadline: non-zero stops */
	void *interrupted_ctx;
	bool stop;			/* stop the schedule (violation or limit) */
	bool cut;			/* stopped because max_steps was reached */
	bool timed_out;			/* stopped at deadline_host_ns */
	int stop_signal;		/* stopped because interrupted() returned this */
	/* candidate-list work (entries placed and moved) since the last look at
	 * the deadline and interrupted(): with many pending entities (an IPI
	 * round to 1024 CPUs) one step costs that much more, so the look comes
	 * after EXPLORE_POLL_WORK of it as well as every 4096 steps */
	uint64_t poll_work;
	uint64_t forced_seq;		/* entity the scheduler must run next */
};

void explore_init(struct explore *ex, enum explore_strategy st, uint64_t seed, int depth,
		  uint64_t pct_k, const uint32_t *prefix, uint32_t nprefix);
void explore_free(struct explore *ex);
void explore_add_thread(struct sim *s, struct sim_thread *t);
/* pct: the priority of the completion entity queued with seq (fixed by seq
 * and the seed, above the change levels like a thread's) */
int explore_entity_prio(const struct explore *ex, uint64_t seq);

/* Engine hooks (sim.c) */
bool explore_yield(struct sim *s, struct sim_thread *t, const struct sim_point *yp);
int explore_run(struct sim *s);

#endif
