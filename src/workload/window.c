/*
 * window.c - the measured window of the timed workloads (will-it-scale's
 * harness, main.c of github.com/antonblanchard/will-it-scale: a warm-up,
 * then ops counted over a measured time), shared by wis.c, ebizzy.c and
 * mprotect_storm.c.
 */
#include <stdio.h>

#include "workload/workload.h"

void window_init(struct measure_window *w, int ntasks, int64_t rounds, uint64_t duration_ns)
{
	*w = (struct measure_window){.ntasks = ntasks, .rounds = rounds,
				     .duration_ns = duration_ns};
}

int window_need_slices(struct sim *s, int ntasks, char *err, size_t errlen)
{
	if (ntasks <= s->nr_cpus)
		return 0;
	if (s->ex) {
		/* check mode runs no time slices (sim_step_slow): every
		 * schedule was cut at --max-steps, its window never open */
		snprintf(err, errlen, "check explores schedules without time slices, and with %d "
			 "tasks on %d CPUs this workload's tasks loop until every task has run its "
			 "rounds, so one queued behind another never starts; give at most %d tasks "
			 "or --cpus %d", ntasks, s->nr_cpus, s->nr_cpus, ntasks);
		return TLBSIM_EINVAL;
	}
	if (P(s, P_sched_slice_ns))
		return 0;
	snprintf(err, errlen, "sched_slice_ns=0 (no time slices) with %d tasks on %d CPUs: this "
		 "workload's tasks loop until every task has run its rounds, so one queued behind "
		 "another never starts; give sched_slice_ns > 0 or at most %d tasks",
		 ntasks, s->nr_cpus, s->nr_cpus);
	return TLBSIM_EINVAL;
}

void window_close(struct sim *s, struct measure_window *w)
{
	if (w->stop)
		return;
	w->stop = true;
	uint64_t len = s->now - w->t0;
	if (!len)
		len = 1;
	uint64_t ops = s->m.ops - w->ops0;
	s->m.window_ns = len;
	s->m.ops_per_sec = (uint64_t)((unsigned __int128)ops * 1000000000u / len);
	s->m.ops_per_sec_task = s->m.ops_per_sec / (uint64_t)w->ntasks;
}

void window_round_done(struct sim *s, struct measure_window *w, int64_t round)
{
	if (round == 1 && ++w->warm == w->ntasks) {
		w->t0 = s->now;		/* every task is past its warm-up round */
		w->ops0 = s->m.ops;
		s->window_open = true;
		s->window_t0 = w->t0;
		s->window_ops0 = w->ops0;
		if (w->duration_ns)
			w->t_end = w->t0 + w->duration_ns;
	}
	if (!w->duration_ns && round == 1 + w->rounds && ++w->measured == w->ntasks)
		window_close(s, w);
}

void window_check_time(struct sim *s, struct measure_window *w)
{
	if (w->t_end && s->now >= w->t_end)
		window_close(s, w);
}
