/*
 * test_syscall.c - syscall entry and exit (arch/x86/entry, arch/arm64/kernel/
 * entry.S): with page-table isolation (kpti) a syscall pays pti_syscall_ns on
 * top of syscall_ns (x86: 139 ns, the CR3 switches measured with PCID on
 * Haswell; arm64: no figure, 0), and nothing else on x86 changes.
 */
#include "test_util.h"

struct sc {
	uint64_t el;
};

/* one mmap + munmap of a never-touched page: two syscalls, no fault */
static void body(struct sim *s, struct sim_thread *t)
{
	struct sc *c = t->arg;
	uint64_t t0 = s->now + t->pending_ns;
	uint64_t a = sys_mmap(s, 0, 4096, TLBSIM_MAP_PRIVATE);
	assert_true(a != TLBSIM_EINVAL_VA);
	assert_int_equal(sys_munmap(s, a, 4096), 0);
	c->el = s->now + t->pending_ns - t0;
}

static uint64_t run(const char *profile, int64_t kpti)
{
	const int64_t ov[] = {P_kpti, kpti, -1};
	struct sc c = {0};
	struct sim *s = tsim_new_p(profile, 2, NESTED_FULLMM, ov);
	assert_int_equal(syscall_cost(s), (uint64_t)P(s, P_syscall_ns) +
						  (kpti ? (uint64_t)P(s, P_pti_syscall_ns) : 0));
	tsim_spawn(s, body, &c, 0);
	tsim_run(s);
	tsim_free(s);
	return c.el;
}

static void test_pti_syscall_cost(void **state)
{
	(void)state;
	/* x86: two syscalls, each 139 ns dearer with PTI */
	assert_int_equal(run("x86-24", 1) - run("x86-24", 0), 2 * 139);
	/* arm64: no trampoline figure; an unmapped, never-faulted range needs
	 * no TLBI either, so KPTI changes nothing here */
	assert_int_equal(run("arm64-4k", 1), run("arm64-4k", 0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_pti_syscall_cost)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
