/* pool.c - simulations on host threads (pool.h). */
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/pool.h"

static void run_task(struct seed_pool *p, struct seed_task *t)
{
	struct core_opts co = {
		.want_kind = -1,
		.host_limit = p->max_memory,
		.deadline_host_ns = p->deadline,
		.interrupted = cli_pending_signal,
		.interrupted_period_ns = CLI_SIGNAL_POLL_NS,
		.trace = t->trace,
		.progress = p->on_progress,
		.progress_ctx = p->on_done_arg,
	};
	struct run_outcome out = {0};
	t->ran = true;
	t->rc = tlbsim_resolve(&t->cfg, &t->res, t->err, sizeof(t->err));
	if (!t->rc)
		t->rc = tlbsim_run_one(&t->cfg, &t->res, &co, &out, t->err, sizeof(t->err));
	if (!t->rc) {
		t->m = out.m;
		t->stopped = out.stopped;
		t->stop_signal = out.stop_signal;
	}
}

/* Host threads take tasks in index order; each simulation is independent
 * (all state in its struct sim), so the results do not depend on --jobs. */
static void *pool_worker(void *arg)
{
	struct seed_pool *p = arg;
	for (;;) {
		pthread_mutex_lock(&p->lock);
		int i = p->stop ? p->n : p->next++;
		pthread_mutex_unlock(&p->lock);
		if (i >= p->n)
			return NULL;
		struct seed_task *t = &p->t[i];
		run_task(p, t);
		pthread_mutex_lock(&p->lock);
		if (t->rc || t->stopped)
			p->stop = true;
		p->ndone++;
		if (p->on_done)
			p->on_done(p->on_done_arg, p->ndone, p->n);
		pthread_mutex_unlock(&p->lock);
	}
}

void pool_run(struct seed_pool *p, int jobs)
{
	if (jobs > p->n)
		jobs = p->n;
	pthread_t th[64];
	int started = 0;
	if (jobs > 64)
		jobs = 64;
	for (int i = 1; i < jobs; i++) {
		if (pthread_create(&th[started], NULL, pool_worker, p))
			break;	/* fewer host threads: the others do the work */
		started++;
	}
	pool_worker(p);
	for (int i = 0; i < started; i++)
		pthread_join(th[i], NULL);
}

int pool_run_opts(struct seed_pool *p, const struct cli_opts *o, char *err, size_t errlen)
{
	cli_block_signals();
	p->deadline = o->time_limit_ms ? sim_host_ns() + o->time_limit_ms * 1000000u : 0;
	p->max_memory = o->max_memory;
	pthread_mutex_init(&p->lock, NULL);
	pool_run(p, o->jobs);
	pthread_mutex_destroy(&p->lock);
	for (int i = 0; i < p->n; i++)
		if (p->t[i].ran && p->t[i].rc) {
			snprintf(err, errlen, "%s", p->t[i].err);
			return p->t[i].rc;
		}
	return 0;
}

/* each metric's mean over the seeds that ran, rounded (integer metrics);
 * violations their total */
void mean_metrics(const struct tlbsim_metrics *v, int n, int cpus, struct tlbsim_metrics *m)
{
	memset(m, 0, sizeof(*m));
	if (!n)
		return;
#define X(f)                                                                     \
	{                                                                        \
		unsigned __int128 sum = 0;                                       \
		for (int k = 0; k < n; k++)                                      \
			sum += v[k].f;                                           \
		m->f = (uint64_t)((sum + (unsigned)n / 2) / (unsigned)n);        \
	}
	TLBSIM_METRICS(X)
#undef X
#define X(f)                                                                     \
	{                                                                        \
		unsigned __int128 sum = 0;                                       \
		for (int k = 0; k < n; k++)                                      \
			sum += v[k].tlbi.f;                                      \
		m->tlbi.f = (uint64_t)((sum + (unsigned)n / 2) / (unsigned)n);   \
	}
	TLBSIM_TLBI_KINDS(X)
#undef X
	/* violations: the total over the seeds, not the mean - one violation
	 * in one seed of five would round to 0, and the note, the exit status
	 * of --fail-on-violation and first_violation all rest on this count */
	m->violations = 0;
	for (int k = 0; k < n; k++)
		m->violations += v[k].violations;
	/* idle from the rounded others, so user + sys + idle = wall x cpus
	 * holds for the means as it does for each seed (four means rounded
	 * apart missed it by a few ns) */
	const unsigned __int128 all = (unsigned __int128)m->wall_ns * (unsigned)cpus;
	if (cpus > 0 && all >= (unsigned __int128)m->user_ns + m->sys_ns)
		m->idle_ns = (uint64_t)(all - m->user_ns - m->sys_ns);
	memcpy(m->notes, v[0].notes, sizeof(m->notes));
	for (int k = 0; k < n; k++)
		if (v[k].first_violation[0]) {
			memcpy(m->first_violation, v[k].first_violation, sizeof(m->first_violation));
			break;
		}
}


/* The progress line (pool.h): a bar, what is done, and the host time left
 * at the rate so far; redrawn when the percentage changes. */
static void progress_draw(struct pool_progress *pg, double frac, const char *what)
{
	int pct = (int)(frac * 100);
	if (pct == pg->last_pct)
		return;
	pg->last_pct = pct;
	double el = (double)(sim_host_ns() - pg->start_ns) / 1e9;
	double left = frac > 0 ? el * (1 - frac) / frac : 0;
	char bar[31];
	int fill = pct * 30 / 100;
	for (int i = 0; i < 30; i++)
		bar[i] = i < fill ? '#' : '.';
	bar[30] = 0;
	fprintf(stderr, "\r[%s] %3d%% %s, %d:%02d left ", bar, pct, what, (int)left / 60,
		(int)left % 60);
	fflush(stderr);
	pg->drawn = true;
}

static void progress_erase(struct pool_progress *pg)
{
	if (pg->drawn)
		fprintf(stderr, "\r%*s\r", 79, "");
	fflush(stderr);
	pg->drawn = false;
}

/* several runs: the runs done; erased when the last ends */
static void progress_cb(void *arg, int done, int n)
{
	struct pool_progress *pg = arg;
	char what[64];
	snprintf(what, sizeof(what), "%d/%d runs", done, n);
	progress_draw(pg, n ? (double)done / n : 1, what);
	if (done == n)
		progress_erase(pg);
}

/* one run: its simulated progress */
static void progress_one(void *arg, double frac)
{
	progress_draw(arg, frac, "of the simulated run");
}

void pool_progress_tty(struct seed_pool *p, struct pool_progress *pg)
{
	pg->start_ns = sim_host_ns();
	pg->last_pct = -1;
	pg->drawn = false;
	if (!isatty(STDERR_FILENO))
		return;
	p->on_done_arg = pg;
	if (p->n > 1)
		p->on_done = progress_cb;
	else
		p->on_progress = progress_one;
}

void pool_progress_end(struct seed_pool *p)
{
	struct pool_progress *pg = p->on_done_arg;
	if (!pg || !pg->drawn)
		return;
	if (p->on_done && p->ndone < p->n)
		fprintf(stderr, "\n");	/* stopped early: keep the last line */
	else
		progress_erase(pg);
}
