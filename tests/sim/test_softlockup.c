/*
 * test_softlockup.c - the soft-lockup watchdog (kernel/watchdog.c, v6.10;
 * src/sim/sim.c softlockup_check).
 *
 * Rule: a CPU that has not scheduled (no context switch, no idle) for more
 * than 2 x watchdog_thresh_s while one thread stays in kernel mode counts one
 * soft lockup per episode (metrics.softlockups). User mode, sleeping, or any
 * switch of the CPU (even back to the same thread) ends an episode; the engine never preempts kernel mode,
 * so a kworker busy for longer than that in one work item is a soft lockup;
 * watchdog_thresh_s = 0 turns the watchdog off.
 */
#include "test_util.h"

#define SEC 1000000000ull

struct body {
	uint64_t kernel_ns;		/* first stretch in kernel mode */
	uint64_t sleep_every_ns;	/* 0: never sleeps */
	uint64_t user_between_ns;	/* > 0: back to user mode, then again kernel */
	bool user_only;
	uint64_t seen_mid;		/* softlockups read after 21 s (if long enough) */
};

static void kernel_stretch(struct sim *s, struct body *b, uint64_t ns)
{
	uint64_t since_sleep = 0;
	for (uint64_t done = 0; done < ns; done += SEC / 2) {
		sim_step(s, YP_USER, SEC / 2);
		since_sleep += SEC / 2;
		if (done + SEC / 2 == 21 * SEC)
			b->seen_mid = s->m.softlockups;
		if (b->sleep_every_ns && since_sleep >= b->sleep_every_ns) {
			sim_sleep_for(s, 1000);
			since_sleep = 0;
		}
	}
}

static void body_fn(struct sim *s, struct sim_thread *t)
{
	struct body *b = t->arg;
	if (b->user_only) {
		sim_step(s, YP_USER, b->kernel_ns);
		return;
	}
	sim_set_mode(s, MODE_SYS);
	kernel_stretch(s, b, b->kernel_ns);
	if (b->user_between_ns) {
		sim_set_mode(s, MODE_USER);
		sim_step(s, YP_USER, b->user_between_ns);
		sim_set_mode(s, MODE_SYS);
		kernel_stretch(s, b, b->kernel_ns);
	}
	sim_set_mode(s, MODE_USER);
}

static uint64_t lockups(struct body *b, int64_t thresh_s)
{
	int64_t ov[] = {P_watchdog_thresh_s, thresh_s, -1};
	struct sim *s = tsim_new_p("x86-24", 2, NESTED_FULLMM, thresh_s >= 0 ? ov : NULL);
	tsim_spawn(s, body_fn, b, 1);
	tsim_run(s);
	uint64_t n = s->m.softlockups;
	tsim_free(s);
	return n;
}

static void test_kernel_stretch_over_threshold_counts_once(void **state)
{
	struct body b = {.kernel_ns = 25 * SEC};
	assert_int_equal(lockups(&b, -1), 1);
}

static void test_kernel_stretch_under_threshold(void **state)
{
	struct body b = {.kernel_ns = 19 * SEC};
	assert_int_equal(lockups(&b, -1), 0);
}

static void test_sleeping_thread_schedules(void **state)
{
	struct body b = {.kernel_ns = 40 * SEC, .sleep_every_ns = 5 * SEC};
	assert_int_equal(lockups(&b, -1), 0);
}

static void test_user_mode_is_not_a_lockup(void **state)
{
	struct body b = {.kernel_ns = 40 * SEC, .user_only = true};
	assert_int_equal(lockups(&b, -1), 0);
}

static void test_two_episodes(void **state)
{
	struct body b = {.kernel_ns = 25 * SEC, .user_between_ns = 1000000};
	assert_int_equal(lockups(&b, -1), 2);
}

static void test_threshold_parameter(void **state)
{
	struct body b = {.kernel_ns = 3 * SEC};
	assert_int_equal(lockups(&b, 1), 1);		/* 2 s */
	struct body c = {.kernel_ns = 25 * SEC};
	assert_int_equal(lockups(&c, 0), 0);		/* off */
}

/* seen while the episode lasts, when a thread waits for the CPU (the slow
 * path runs every step then) */
static void waiter_fn(struct sim *s, struct sim_thread *t)
{
	(void)s;
	(void)t;
}

static void test_counted_during_the_episode(void **state)
{
	struct body b = {.kernel_ns = 25 * SEC};
	struct sim *s = tsim_new("x86-24", 2, NESTED_FULLMM);
	tsim_spawn(s, body_fn, &b, 1);
	tsim_spawn(s, waiter_fn, NULL, 1);	/* queued behind it: never preempts it */
	tsim_run(s);
	assert_int_equal(b.seen_mid, 1);
	assert_int_equal(s->m.softlockups, 1);
	tsim_free(s);
}

/* a context switch on the CPU ends the episode, though the thread that
 * resumes is the one that entered the kernel long ago */
static void switcher_fn(struct sim *s, struct sim_thread *t)
{
	sim_set_mode(s, MODE_SYS);
	sim_step(s, YP_USER, 10 * SEC);
	sim_sleep_for(s, 100000);		/* the queued thread gets the CPU */
	sim_step(s, YP_USER, 15 * SEC);	/* 27 s in the kernel, 15 s since the switch */
	sim_set_mode(s, MODE_USER);
}

static void user2_fn(struct sim *s, struct sim_thread *t)
{
	sim_step(s, YP_USER, 2 * SEC);
}

static void test_context_switch_ends_episode(void **state)
{
	struct sim *s = tsim_new("x86-24", 2, NESTED_FULLMM);
	tsim_spawn(s, switcher_fn, NULL, 1);
	tsim_spawn(s, user2_fn, NULL, 1);
	tsim_run(s);
	assert_int_equal(s->m.context_switches, 2);
	assert_int_equal(s->m.softlockups, 0);
	tsim_free(s);
}

/* a thread spinning in kernel mode (its CPU never schedules) */
struct spin {
	struct sim_thread *spinner;
};

static void spinner_fn(struct sim *s, struct sim_thread *t)
{
	sim_set_mode(s, MODE_SYS);
	sim_spin_wait(s);
	sim_set_mode(s, MODE_USER);
}

static void waker_fn(struct sim *s, struct sim_thread *t)
{
	struct spin *sp = t->arg;
	sim_step(s, YP_USER, 30 * SEC);
	sim_wake(s, sp->spinner, 0);
}

static void test_spinning_counts(void **state)
{
	struct spin sp;
	struct sim *s = tsim_new("x86-24", 3, NESTED_FULLMM);
	sp.spinner = tsim_spawn(s, spinner_fn, NULL, 1);
	tsim_spawn(s, waker_fn, &sp, 2);
	tsim_run(s);
	assert_int_equal(s->m.softlockups, 1);
	tsim_free(s);
}

/* a kworker busy in one work item */
struct busy_work {
	struct work_struct w;
	uint64_t ns;
};

static void busy_fn(struct sim *s, struct work_struct *w)
{
	struct busy_work *b = container_of(w, struct busy_work, w);
	for (uint64_t d = 0; d < b->ns; d += SEC)
		sim_step(s, YP_USER, SEC);
}

static void queue_fn(struct sim *s, struct sim_thread *t)
{
	struct busy_work *b = t->arg;
	schedule_work_on(s, 1, &b[0].w);
	flush_work(s, &b[0].w);
	schedule_work_on(s, 1, &b[1].w);
	flush_work(s, &b[1].w);
}

static void test_kworker_busy_is_a_lockup(void **state)
{
	struct busy_work b[2] = {{.w = {.fn = busy_fn}, .ns = 22 * SEC},
				 {.w = {.fn = busy_fn}, .ns = 5 * SEC}};
	struct sim *s = tsim_new("x86-24", 2, NESTED_FULLMM);
	tsim_spawn(s, queue_fn, b, 0);
	tsim_run(s);
	assert_int_equal(s->m.softlockups, 1);	/* the second item came after a sleep */
	tsim_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kernel_stretch_over_threshold_counts_once),
		cmocka_unit_test(test_kernel_stretch_under_threshold),
		cmocka_unit_test(test_sleeping_thread_schedules),
		cmocka_unit_test(test_user_mode_is_not_a_lockup),
		cmocka_unit_test(test_two_episodes),
		cmocka_unit_test(test_threshold_parameter),
		cmocka_unit_test(test_counted_during_the_episode),
		cmocka_unit_test(test_context_switch_ends_episode),
		cmocka_unit_test(test_spinning_counts),
		cmocka_unit_test(test_kworker_busy_is_a_lockup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
