/*
 * test_arm64_local.c - the arm64_local knob (src/arch/arm64.c,
 * flush_stays_local; the 2020 proposal "arm64: tlb: skip tlbi broadcast",
 * Message-ID 20200223192520.20808-4-aarcange@redhat.com, not merged).
 *
 * Rules checked (arm64-4k, one page mapped, written and unmapped):
 *  - off (upstream): the unmap's flushes are broadcast (...IS), none local;
 *  - single_cpu_mm: an mm that has only run on the flushing CPU is flushed
 *    with the local forms instead: the same number of TLBIs, all counted as
 *    local and as tlbi_local_skipped_broadcast, no broadcast, no DVM wait;
 *    the other CPUs' TLBs are not touched;
 *  - single_cpu_mm: once the mm has run on a second CPU (a thread there, or
 *    the task migrated) every flush is broadcast again (the record is sticky);
 *  - kernel flushes (flush_tlb_kernel_range) are never local.
 */
#include "mm/mm.h"
#include "test_util.h"

struct lt {
	uint64_t va;
	int move_to;		/* >= 0: migrate there after the write */
};

static void map_write_unmap(struct sim *s, struct sim_thread *t)
{
	struct lt *l = t->arg;
	uint64_t ps = hw_of(s)->geom.page_size;
	uint64_t p = sys_mmap(s, 0, ps, TLBSIM_MAP_PRIVATE);
	user_access(s, p, true);
	if (l->move_to >= 0)
		sim_migrate(s, l->move_to);
	l->va = p;
	sys_munmap(s, p, ps);
}

static uint64_t broadcasts(const struct sim *s)
{
	return s->m.tlbi.vale1is + s->m.tlbi.vae1is + s->m.tlbi.aside1is + s->m.tlbi.vaale1is +
	       s->m.tlbi.vmalle1is;
}

static struct sim *run_one(enum arm64_local_policy pol, int move_to, uint64_t *bcast,
			   uint64_t *local, uint64_t *skipped)
{
	struct sim *s = tsim_new("arm64-4k", 4, NESTED_FULLMM);
	machine_of(s)->policy.arm64_local = pol;
	struct lt l = {.move_to = move_to};
	tsim_spawn(s, map_write_unmap, &l, 1);
	tsim_run(s);
	*bcast = broadcasts(s);
	*local = s->m.tlbi.local;
	*skipped = s->m.tlbi_local_skipped_broadcast;
	assert_int_equal(s->m.violations, 0);
	return s;
}

static void test_off_broadcasts(void **state)
{
	(void)state;
	uint64_t b, l, k;
	struct sim *s = run_one(ARM64_LOCAL_OFF, -1, &b, &l, &k);
	assert_true(b > 0);
	assert_int_equal(l, 0);
	assert_int_equal(k, 0);
	tsim_free(s);
}

static void test_single_cpu_mm_is_local(void **state)
{
	(void)state;
	uint64_t b0, l0, k0, b, l, k;
	struct sim *s0 = run_one(ARM64_LOCAL_OFF, -1, &b0, &l0, &k0);
	tsim_free(s0);
	struct sim *s = run_one(ARM64_LOCAL_SINGLE_CPU_MM, -1, &b, &l, &k);
	assert_int_equal(b, 0);		/* nothing broadcast */
	assert_int_equal(l, b0);	/* each broadcast became one local TLBI */
	assert_int_equal(k, b0);
	assert_int_equal(s->m.dvm_wait_ns, 0);
	tsim_free(s);
}

static void test_migrated_mm_broadcasts(void **state)
{
	(void)state;
	uint64_t b0, l0, k0, b, l, k;
	struct sim *s0 = run_one(ARM64_LOCAL_OFF, -1, &b0, &l0, &k0);
	tsim_free(s0);
	/* the task moves to CPU 3 before munmap: the mm ran on 1 and 3 */
	struct sim *s = run_one(ARM64_LOCAL_SINGLE_CPU_MM, 3, &b, &l, &k);
	assert_int_equal(b, b0);
	assert_int_equal(l, 0);
	assert_int_equal(k, 0);
	tsim_free(s);
}

/* a second thread of the mm on another CPU */
static void idle_thread(struct sim *s, struct sim_thread *t)
{
	(void)t;
	sim_step(s, YP_THREAD, 10);
}

static void test_two_cpus_broadcast(void **state)
{
	(void)state;
	struct sim *s = tsim_new("arm64-4k", 4, NESTED_FULLMM);
	machine_of(s)->policy.arm64_local = ARM64_LOCAL_SINGLE_CPU_MM;
	struct lt l = {.move_to = -1};
	tsim_spawn(s, idle_thread, NULL, 2);
	tsim_spawn(s, map_write_unmap, &l, 1);
	tsim_run(s);
	assert_true(broadcasts(s) > 0);
	assert_int_equal(s->m.tlbi_local_skipped_broadcast, 0);
	tsim_free(s);
}

static void kflush(struct sim *s, struct sim_thread *t)
{
	(void)t;
	flush_tlb_kernel_range(s, 0xffff800010000000ull, 0xffff800010001000ull);
}

static void test_kernel_flush_never_local(void **state)
{
	(void)state;
	struct sim *s = tsim_new("arm64-4k", 4, NESTED_FULLMM);
	machine_of(s)->policy.arm64_local = ARM64_LOCAL_SINGLE_CPU_MM;
	tsim_spawn(s, kflush, NULL, 1);
	tsim_run(s);
	assert_true(s->m.tlbi.vaale1is + s->m.tlbi.vmalle1is > 0);
	assert_int_equal(s->m.tlbi_local_skipped_broadcast, 0);
	tsim_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_off_broadcasts),
		cmocka_unit_test(test_single_cpu_mm_is_local),
		cmocka_unit_test(test_migrated_mm_broadcasts),
		cmocka_unit_test(test_two_cpus_broadcast),
		cmocka_unit_test(test_kernel_flush_never_local),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
