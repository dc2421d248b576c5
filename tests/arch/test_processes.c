/*
 * test_processes.c - several processes end to end: each has its own
 * mm_struct (mm_alloc + task_create), and they share CPUs.
 *
 * Rules checked (kernel-model 3.6, 4.1, 4.2, 7):
 *  - address spaces are separate: the same VA mapped and written in two
 *    processes is two frames;
 *  - the TLB is tagged (arm64 ASID, x86 PCID; without PCID every switch to
 *    another mm flushes), so a CPU that switches between the processes -
 *    here by time slices, two threads of each process on two CPUs - always
 *    reads the running process's own frame, never the other's;
 *  - a flush of one mm (its munmap) removes only its translations: the other
 *    process keeps running on the same CPUs without a fault, and neither
 *    process's munmap is an I1/I2 because of the other's cached entries;
 *  - no invariant violation anywhere.
 */
#include "test_util.h"

#define H 0x100000000000ull
#define NPAGES 4
#define ROUNDS 12
#define SLICE 1000000
#define STEP 100000

struct ps {
	struct mm_struct *mm[2];
	volatile int mapped[2], reader_done[2], unmapped[2];
	uint64_t faults_after_unmap_a;
	int wrong, foreign, checks;
	int ran[2];
};

static int proc_of(const struct ps *p, struct sim_thread *t)
{
	return task_of(t)->mm == p->mm[0] ? 0 : 1;
}

/* What the CPU reads at va must be this process's frame, not the other's. */
static void check(struct sim *s, struct sim_thread *t, struct ps *p, uint64_t va)
{
	int me = proc_of(p, t);
	uint32_t own = tsim_pte_frame(s, p->mm[me], va);
	uint32_t got = tsim_translate(s, t->cpu, p->mm[me], va);
	if (own == NO_FRAME || got != own)
		p->wrong++;
	if (!p->unmapped[1 - me] && got == tsim_pte_frame(s, p->mm[1 - me], va))
		p->foreign++;
	p->checks++;
}

/* thread 1 of a process (CPU 0): maps and writes H, keeps writing */
static void writer(struct sim *s, struct sim_thread *t)
{
	struct ps *p = t->arg;
	int me = proc_of(p, t);
	uint64_t ps = hw_of(s)->geom.page_size;
	assert_true(sys_mmap(s, H, NPAGES * ps, TLBSIM_MAP_PRIVATE) == H);
	for (int i = 0; i < NPAGES; i++)
		assert_int_equal(user_access(s, H + (uint64_t)i * ps, true), 0);
	p->mapped[me] = 1;
	for (int r = 0; r < ROUNDS; r++)
		for (int i = 0; i < NPAGES; i++) {
			assert_int_equal(user_access(s, H + (uint64_t)i * ps, true), 0);
			check(s, t, p, H + (uint64_t)i * ps);
			sim_step(s, YP_USER, STEP);
			check(s, t, p, H + (uint64_t)i * ps);
		}
	/* process 0 unmaps first, while process 1 still runs everywhere */
	while (!p->reader_done[me] || (me == 1 && !p->unmapped[0]))
		sim_step(s, YP_USER, STEP);
	assert_int_equal(sys_munmap(s, H, NPAGES * ps), 0);
	if (me == 0)
		p->faults_after_unmap_a = s->m.page_faults;
	p->unmapped[me] = 1;
	p->ran[me] = 1;
}

/* thread 2 of a process (CPU 1): reads H once it is mapped */
static void reader(struct sim *s, struct sim_thread *t)
{
	struct ps *p = t->arg;
	int me = proc_of(p, t);
	uint64_t ps = hw_of(s)->geom.page_size;
	while (!p->mapped[me])
		sim_step(s, YP_USER, STEP);
	for (int r = 0; r < ROUNDS; r++)
		for (int i = 0; i < NPAGES; i++) {
			assert_int_equal(user_access(s, H + (uint64_t)i * ps, false), 0);
			check(s, t, p, H + (uint64_t)i * ps);
			sim_step(s, YP_USER, STEP);
		}
	/* process 1 keeps reading on CPU 1 until process 0 has unmapped */
	while (me == 1 && !p->unmapped[0]) {
		assert_int_equal(user_access(s, H, false), 0);
		check(s, t, p, H);
		sim_step(s, YP_USER, STEP);
	}
	if (me == 1) {	/* after process 0's munmap: still ours, no fault */
		for (int i = 0; i < NPAGES; i++) {
			assert_int_equal(user_access(s, H + (uint64_t)i * ps, false), 0);
			check(s, t, p, H + (uint64_t)i * ps);
		}
	}
	p->reader_done[me] = 1;
}

static void run_two(const char *profile, const int64_t *extra)
{
	int64_t ov[16] = {P_sched_slice_ns, SLICE};
	int n = 2;
	for (int i = 0; extra && extra[i] >= 0; i++)
		ov[n++] = extra[i];
	ov[n] = -1;
	struct sim *s = tsim_new_p(profile, 4, NESTED_FULLMM, ov);
	struct ps p = {0};
	p.mm[0] = tsim_mm(s, 0);
	p.mm[1] = mm_alloc(s);
	for (int i = 0; i < 2; i++) {
		tsim_spawn_mm(s, writer, &p, p.mm[i], 0);
		tsim_spawn_mm(s, reader, &p, p.mm[i], 1);
	}
	tsim_run(s);
	assert_int_equal(p.ran[0], 1);
	assert_int_equal(p.ran[1], 1);
	if (p.wrong || p.foreign)
		fail_msg("%s: %d of %d accesses not to the own frame, %d to the other process's",
			 profile, p.wrong, p.checks, p.foreign);
	assert_true(p.checks > 4 * ROUNDS * NPAGES);
	/* the processes shared CPUs 0 and 1 by time slices */
	assert_true(s->m.context_switches >= 4);
	/* process 1 took no fault after process 0's munmap (its last reads and
	 * its own munmap do not fault) */
	assert_int_equal(s->m.page_faults, p.faults_after_unmap_a);
	if (s->m.violations)
		fail_msg("%s: %s", profile, tsim_violation(s)->text);
	assert_int_equal(tsim_violation(s)->kind, -1);
	tsim_free(s);
}

static void test_two_processes_arm64(void **state)
{
	(void)state;
	run_two("falkor-46", NULL);
	run_two("arm64-4k", NULL);
	run_two("arm64-16k", NULL);
}

static void test_two_processes_x86(void **state)
{
	(void)state;
	run_two("x86-24", NULL);
	const int64_t nopcid[] = {P_pcid, 0, -1};
	run_two("x86-24", nopcid);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two_processes_arm64),
		cmocka_unit_test(test_two_processes_x86),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
