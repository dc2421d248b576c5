/* sched.c - the time-ordered scheduler strategy (run and compare mode). */
#include "sim/sim.h"

static bool time_ordered_yield(struct sim *s, struct sim_thread *t, const struct sim_point *yp)
{
	(void)yp;
	uint64_t wake = s->now + t->pending_ns;
	/* Keep running if we would be the next event anyway: an event already
	 * queued at the same time was queued first and wins the tie. */
	if (evq_empty(&s->q) || wake < evq_top_time(&s->q)) {
		s->now = wake;
		t->pending_ns = 0;
		return false;
	}
	return true;
}

const struct sched_ops sched_time_ordered = {
	.name = "time",
	.yield = time_ordered_yield,
};
