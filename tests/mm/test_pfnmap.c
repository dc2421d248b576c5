/*
 * test_pfnmap.c - a driver's VM_PFNMAP / VM_MIXEDMAP mappings and their
 * revocation (src/mm/pfnmap.c; tlb_end_vma's knob pfnmap_flush,
 * b67fbebd4cf9).
 *
 * Rules checked:
 *  - pfnmap maps every page at mmap time to a frame the driver owns (one
 *    reference: the driver's; not anonymous), writable, with VM_PFNMAP or
 *    VM_MIXEDMAP and on the device file's i_mmap;
 *  - a zap of a PFN VMA drops the PTEs and frees no frame (vm_normal_page
 *    is NULL); a fault there afterwards is a SIGBUS (-1);
 *  - driver_unmap zaps every VMA still on the file's i_mmap, flushes, then
 *    frees the frames: no CPU caches them at the free; a second call, or an
 *    address no pfnmap returned, is -1;
 *  - what munmap of a PFN VMA emits: x86 with pfnmap_flush=end_vma one
 *    more flush (one IPI to the other CPU running the mm) than with none,
 *    made at tlb_end_vma; with stable_any one more, made in unmap_region;
 *    with stable_first one more only when the PFN VMA is the region's
 *    first; arm64 the same TLBIs under end_vma and none (its tlb_end_vma
 *    flushes every VMA);
 *  - the ordering rule: when the VMA leaves the file's i_mmap
 *    (unlink_file_vma), with end_vma or stable_any no CPU caches the PFNs
 *    any more; with none on x86 the other CPU still does, and with
 *    stable_first too when an anonymous VMA came first in the munmap.
 */
#include "test_util.h"

static const int64_t no_kpti[] = {P_kpti, 0, -1};

struct pfn {
	bool mixed;
	bool lead;			/* an anonymous page just below, unmapped with it */
	uint64_t a;
	uint32_t f[2];
	uint32_t vm_flags;
	int nr_mmap;
	struct inode *file;
	pte_t pte[2];
	uint32_t refs0, flags0;
	volatile bool cached, done;
	struct tlbsim_metrics m0, m1;
	uint32_t state_after_munmap, state_after_unmap;
	int load_after, ret_unmap, ret_again, ret_bogus;
	/* the observer of unlink_file_vma */
	bool unlinked_seen, cached_at_unlink;
};

static void pfn_main(struct sim *s, struct sim_thread *t)
{
	struct pfn *x = t->arg;
	struct mm_struct *mm = task_of(t)->mm;
	uint64_t ps = hw_of(s)->geom.page_size;
	uint64_t lead = 0x10000000;
	if (x->lead) {
		assert_int_equal(sys_mmap(s, lead, ps, TLBSIM_MAP_PRIVATE), lead);
		assert_int_equal(user_access(s, lead, true), 0);
	}
	uint64_t a = sys_pfnmap(s, x->lead ? lead + ps : 0, 2 * ps, x->mixed);
	assert_int_not_equal(a, TLBSIM_EINVAL_VA);
	if (x->lead)
		assert_int_equal(a, lead + ps);
	struct vm_area_struct *v = find_vma(mm, a);
	x->vm_flags = v->vm_flags;
	x->file = v->file;
	x->nr_mmap = v->file->nr_mmap;
	for (int i = 0; i < 2; i++) {
		x->pte[i] = *pte_lookup(s, mm, a + (uint64_t)i * ps);
		x->f[i] = pte_pfn(x->pte[i]);
	}
	x->refs0 = frame_of(hw_of(s), x->f[0])->refcount;
	x->flags0 = frame_of(hw_of(s), x->f[0])->pgflags;
	x->a = a;
	TSIM_WAIT_UNTIL(s, x->cached);
	x->m0 = s->m;
	if (x->lead)
		assert_int_equal(sys_munmap(s, lead, 3 * ps), 0);
	else
		assert_int_equal(sys_munmap(s, a, 2 * ps), 0);
	x->m1 = s->m;
	x->state_after_munmap = frame_of(hw_of(s), x->f[0])->state;
	x->load_after = user_access(s, a, false);
	x->ret_unmap = driver_unmap(s, a);
	x->state_after_unmap = frame_of(hw_of(s), x->f[0])->state;
	x->ret_again = driver_unmap(s, a);
	x->ret_bogus = driver_unmap(s, a + ps);
	x->done = true;
}

static void pfn_reader(struct sim *s, struct sim_thread *t)
{
	struct pfn *x = t->arg;
	TSIM_WAIT_UNTIL(s, x->a);
	uint64_t ps = hw_of(s)->geom.page_size;
	assert_int_equal(user_access(s, x->a, false), 0);
	assert_int_equal(user_access(s, x->a + ps, true), 0);
	x->cached = true;
	TSIM_WAIT_UNTIL(s, x->done);		/* stay on the CPU: not lazy */
}

/* on CPU 2 (another mm: it takes no flush of this one): watch the moment
 * the VMA leaves the file's i_mmap */
static void pfn_observer(struct sim *s, struct sim_thread *t)
{
	struct pfn *x = t->arg;
	(void)t;
	TSIM_WAIT_UNTIL(s, x->cached);
	while (!x->done) {
		if (!x->unlinked_seen && x->file->nr_mmap == 0) {
			x->unlinked_seen = true;
			x->cached_at_unlink = tsim_leaf_of(s, 1, x->a) != NULL;
		}
		sim_step(s, YP_USER, 5);
	}
}

static struct sim *run_pfn(const char *profile, struct pfn *x, enum pfnmap_flush_policy p)
{
	struct sim *s = tsim_new_p(profile, 3, NESTED_FULLMM, no_kpti);
	machine_of(s)->policy.pfnmap_flush = p;
	tsim_spawn(s, pfn_main, x, 0);
	tsim_spawn(s, pfn_reader, x, 1);
	tsim_spawn_mm(s, pfn_observer, x, mm_alloc(s), 2);
	tsim_run(s);
	return s;
}

static void assert_pfnmap(struct sim *s, const struct pfn *x)
{
	assert_true(x->vm_flags & (x->mixed ? VM_MIXEDMAP : VM_PFNMAP));
	assert_true(x->vm_flags & VM_SHARED);
	assert_int_equal(x->nr_mmap, 1);
	for (int i = 0; i < 2; i++) {
		assert_true(pte_present(x->pte[i]));
		assert_true(x->pte[i] & PTE_WRITE);
	}
	assert_int_not_equal(x->f[0], x->f[1]);
	assert_int_equal(x->refs0, 1);			/* the driver's only */
	assert_false(x->flags0 & PG_ANON);
	assert_int_equal(x->state_after_munmap, FRAME_DATA);	/* the zap freed nothing */
	assert_int_equal(x->load_after, -1);
	assert_int_equal(x->ret_unmap, 0);
	assert_int_equal(x->state_after_unmap, FRAME_FREE);
	assert_int_equal(x->ret_again, -1);
	assert_int_equal(x->ret_bogus, -1);
	assert_int_equal(s->m.violations, 0);		/* driver_unmap after munmap's flush */
}

static void test_munmap_x86(void **state)
{
	(void)state;
	for (int lead = 0; lead < 2; lead++)
		for (int m = 0; m < 2; m++) {
			uint64_t ipis[PFNMAP_FLUSH_COUNT];
			bool cached[PFNMAP_FLUSH_COUNT];
			for (int p = 0; p < PFNMAP_FLUSH_COUNT; p++) {
				struct pfn x = {.mixed = m, .lead = lead};
				struct sim *s = run_pfn("x86-24", &x, (enum pfnmap_flush_policy)p);
				assert_pfnmap(s, &x);
				assert_true(x.unlinked_seen);
				ipis[p] = x.m1.ipi_sent - x.m0.ipi_sent;
				cached[p] = x.cached_at_unlink;
				tsim_free(s);
			}
			/* end_vma (b67fbebd4cf9) and the fixed stable rewrite: nothing
			 * cached once the VMA is off i_mmap, one flush more than none;
			 * the first stable rewrite only when the PFN VMA is first */
			bool first_misses = lead;
			assert_true(cached[PFNMAP_FLUSH_NONE]);
			assert_false(cached[PFNMAP_FLUSH_END_VMA]);
			assert_false(cached[PFNMAP_FLUSH_STABLE_ANY]);
			assert_int_equal(cached[PFNMAP_FLUSH_STABLE_FIRST], first_misses);
			assert_int_equal(ipis[PFNMAP_FLUSH_END_VMA], ipis[PFNMAP_FLUSH_NONE] + 1);
			assert_int_equal(ipis[PFNMAP_FLUSH_STABLE_ANY], ipis[PFNMAP_FLUSH_NONE] + 1);
			assert_int_equal(ipis[PFNMAP_FLUSH_STABLE_FIRST],
					 ipis[PFNMAP_FLUSH_NONE] + (first_misses ? 0 : 1));
		}
}

static void test_munmap_arm64(void **state)
{
	(void)state;
	uint64_t tlbis[PFNMAP_FLUSH_COUNT];
	for (int p = 0; p <= PFNMAP_FLUSH_NONE; p++) {
		struct pfn x = {0};
		struct sim *s = run_pfn("arm64-4k", &x, (enum pfnmap_flush_policy)p);
		assert_pfnmap(s, &x);
		assert_false(x.cached_at_unlink);
		tlbis[p] = x.m1.tlbi.vale1is + x.m1.tlbi.vae1is + x.m1.tlbi.aside1is -
			   x.m0.tlbi.vale1is - x.m0.tlbi.vae1is - x.m0.tlbi.aside1is;
		assert_int_equal(x.m1.ipi_sent - x.m0.ipi_sent, 0);
		tsim_free(s);
	}
	assert_int_equal(tlbis[PFNMAP_FLUSH_END_VMA], tlbis[PFNMAP_FLUSH_NONE]);
}

/* driver_unmap while the VMA is mapped and a CPU caches the PFNs */
struct revoke {
	uint64_t a;
	volatile bool cached, done;
	uint32_t f;
	int ret, load_after;
	pte_t pte_after;
	uint32_t state;
};

static void revoke_main(struct sim *s, struct sim_thread *t)
{
	struct revoke *x = t->arg;
	uint64_t ps = hw_of(s)->geom.page_size;
	uint64_t a = sys_pfnmap(s, 0, ps, false);
	x->f = tsim_pte_frame(s, task_of(t)->mm, a);
	x->a = a;
	TSIM_WAIT_UNTIL(s, x->cached);
	x->ret = driver_unmap(s, a);
	pte_t *p = pte_lookup(s, task_of(t)->mm, a);
	x->pte_after = p ? *p : 0;
	x->state = frame_of(hw_of(s), x->f)->state;
	x->load_after = user_access(s, a, false);	/* SIGBUS */
	x->done = true;
}

static void revoke_reader(struct sim *s, struct sim_thread *t)
{
	struct revoke *x = t->arg;
	TSIM_WAIT_UNTIL(s, x->a);
	assert_int_equal(user_access(s, x->a, false), 0);
	x->cached = true;
	TSIM_WAIT_UNTIL(s, x->done);
}

static void test_driver_unmap(void **state)
{
	(void)state;
	const char *profiles[] = {"x86-24", "arm64-4k"};
	for (int p = 0; p < 2; p++) {
		struct revoke x = {0};
		struct sim *s = tsim_new_p(profiles[p], 2, NESTED_FULLMM, no_kpti);
		tsim_spawn(s, revoke_main, &x, 0);
		tsim_spawn(s, revoke_reader, &x, 1);
		tsim_run(s);
		assert_int_equal(x.ret, 0);
		assert_true(pte_none(x.pte_after));
		assert_int_equal(x.state, FRAME_FREE);
		assert_int_equal(x.load_after, -1);
		assert_int_equal(s->m.violations, 0);	/* flushed before the free */
		tsim_free(s);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_munmap_x86),
		cmocka_unit_test(test_munmap_arm64),
		cmocka_unit_test(test_driver_unmap),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
