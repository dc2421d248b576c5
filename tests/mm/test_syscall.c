/*
 * test_syscall.c - syscall entry and exit (arch/x86/entry, arch/arm64/kernel/
 * entry.S): with page-table isolation (kpti) a syscall pays pti_syscall_ns on
 * top of syscall_ns (x86: 139 ns, the CR3 switches measured with PCID on
 * Haswell; arm64: no figure, 0), and nothing else on x86 changes.
 *
 * MAP_SHARED|MAP_ANONYMOUS (mm/shmem.c, mm/mmap.c, fs/file_table.c, v5.1):
 *  - mmap_region calls shmem_zero_setup under the write lock: shmem_setup_ns
 *    lengthens the mmap and the write hold by exactly its value (a reader
 *    waiting for the lock gets it that much later), and a private mapping
 *    does not pay it;
 *  - munmap's final fput is deferred to the syscall's exit (task_work), after
 *    up_read: shmem_evict_ns lengthens the munmap by exactly its value but
 *    not the lock hold (a writer waiting for the lock gets it at the same
 *    time), and the file's pages are free when munmap returns.
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

/* ---- shmem file setup and teardown ---- */

#define SHM_PAGES 4

struct shm {
	int flags;
	bool unmap;			/* A: touch the pages and munmap */
	volatile bool munmap_started;
	uint64_t mmap_el, munmap_el, b_acq;
	uint32_t frame[SHM_PAGES];
	int freed;			/* frames FREE when munmap returned */
};

static void shm_a(struct sim *s, struct sim_thread *t)
{
	struct shm *x = t->arg;
	uint64_t t0 = s->now + t->pending_ns;
	uint64_t a = sys_mmap(s, 0, SHM_PAGES * 4096, x->flags);
	assert_true(a != TLBSIM_EINVAL_VA);
	x->mmap_el = s->now + t->pending_ns - t0;
	if (!x->unmap)
		return;
	for (int i = 0; i < SHM_PAGES; i++)
		assert_int_equal(user_access(s, a + (uint64_t)i * 4096, true), 0);
	struct inode *ino = find_vma(current_task(s)->mm, a)->file;
	assert_non_null(ino);
	for (int i = 0; i < SHM_PAGES; i++) {
		x->frame[i] = find_get_page(s, ino, (uint64_t)i);
		assert_true(x->frame[i] != NO_FRAME);
	}
	sim_step(s, YP_USER, 0);
	x->munmap_started = true;
	t0 = s->now + t->pending_ns;
	assert_int_equal(sys_munmap(s, a, SHM_PAGES * 4096), 0);
	x->munmap_el = s->now + t->pending_ns - t0;
	for (int i = 0; i < SHM_PAGES; i++)
		x->freed += frame_of(hw_of(s), x->frame[i])->state == FRAME_FREE;
}

/* B: the lock's other user. Without unmap: arrives 200 ns in (during A's
 * mmap, whose write hold starts after the 100 ns syscall entry) and reads;
 * with unmap: polls every 100 ns until A starts munmap, then writes. */
static void shm_b(struct sim *s, struct sim_thread *t)
{
	struct shm *x = t->arg;
	struct rw_semaphore *sem = &current_task(s)->mm->mmap_sem;
	if (x->unmap) {
		while (!x->munmap_started)
			sim_step(s, YP_USER, 100);
		sim_step(s, YP_USER, 100);
	} else {
		sim_step(s, YP_USER, 200);
	}
	sim_set_mode(s, MODE_SYS);
	if (x->unmap) {
		down_write(s, sem);
		x->b_acq = s->now + t->pending_ns;
		up_write(s, sem);
	} else {
		down_read(s, sem);
		x->b_acq = s->now + t->pending_ns;
		up_read(s, sem);
	}
	sim_set_mode(s, MODE_USER);
}

static struct shm shm_run(int flags, bool unmap, int64_t setup_ns, int64_t evict_ns)
{
	const int64_t ov[] = {P_shmem_setup_ns, setup_ns, P_shmem_evict_ns, evict_ns, -1};
	struct shm x = {.flags = flags, .unmap = unmap};
	struct sim *s = tsim_new_p("x86-24", 2, NESTED_FULLMM, ov);
	tsim_spawn(s, shm_a, &x, 0);
	tsim_spawn(s, shm_b, &x, 1);
	tsim_run(s);
	tsim_free(s);
	return x;
}

static void test_shmem_setup_under_write_lock(void **state)
{
	(void)state;
	int sh = TLBSIM_MAP_SHARED;
	struct shm a0 = shm_run(sh, false, 0, 0), a5 = shm_run(sh, false, 5000, 0);
	assert_int_equal(a5.mmap_el - a0.mmap_el, 5000);
	assert_int_equal(a5.b_acq - a0.b_acq, 5000);	/* the write hold grew */
	struct shm p0 = shm_run(TLBSIM_MAP_PRIVATE, false, 0, 0),
		   p5 = shm_run(TLBSIM_MAP_PRIVATE, false, 5000, 0);
	assert_int_equal(p5.mmap_el, p0.mmap_el);
	assert_int_equal(p5.b_acq, p0.b_acq);
}

static void test_shmem_final_fput_at_syscall_exit(void **state)
{
	(void)state;
	int sh = TLBSIM_MAP_SHARED;
	struct shm e0 = shm_run(sh, true, 0, 0), e5 = shm_run(sh, true, 0, 5000);
	assert_int_equal(e5.munmap_el - e0.munmap_el, 5000);
	assert_int_equal(e5.b_acq, e0.b_acq);		/* not under the lock */
	assert_true(e0.b_acq > 0);
	assert_int_equal(e0.freed, SHM_PAGES);
	assert_int_equal(e5.freed, SHM_PAGES);
}

/* ---- get_unmapped_area's top-down search ---- */

/* unmapped_area_topdown's answer by the full scan from mmap_base, without
 * the memo in the mm */
static uint64_t topdown_ref(struct sim *s, struct mm_struct *mm, uint64_t len)
{
	uint64_t high = mm->mmap_base;
	int i = 0;
	while (i < mm->nr_vmas && mm->vmas[i]->vm_end <= high)
		i++;
	if (i < mm->nr_vmas && mm->vmas[i]->vm_start < high)
		high = mm->vmas[i]->vm_start;
	for (int j = i - 1; j >= -1; j--) {
		uint64_t low = j >= 0 ? mm->vmas[j]->vm_end : hw_of(s)->geom.page_size;
		if (high >= low && high - low >= len)
			return high - len;
		if (j >= 0)
			high = mm->vmas[j]->vm_start;
	}
	return TLBSIM_EINVAL_VA;
}

/* find_vma's answer by a linear walk, without its cache */
static struct vm_area_struct *find_vma_ref(struct mm_struct *mm, uint64_t addr)
{
	for (int i = 0; i < mm->nr_vmas; i++)
		if (mm->vmas[i]->vm_end > addr)
			return mm->vmas[i];
	return NULL;
}

/* vma_index's answer by a linear walk: the first VMA ending above addr */
static int vma_index_ref(struct mm_struct *mm, uint64_t addr)
{
	int i = 0;
	while (i < mm->nr_vmas && mm->vmas[i]->vm_end <= addr)
		i++;
	return i;
}

/* vma_index at the edges of every VMA and of the address space */
static void check_vma_index(struct mm_struct *mm)
{
	assert_int_equal(vma_index(mm, 0), vma_index_ref(mm, 0));
	assert_int_equal(vma_index(mm, UINT64_MAX), mm->nr_vmas);
	for (int i = 0; i < mm->nr_vmas; i++) {
		const struct vm_area_struct *v = mm->vmas[i];
		uint64_t at[4] = {v->vm_start - 1, v->vm_start, v->vm_end - 1, v->vm_end};
		for (int w = 0; w < 4; w++)
			assert_int_equal(vma_index(mm, at[w]), vma_index_ref(mm, at[w]));
	}
}

/* random mmaps of mixed lengths, munmaps of whole, partial and multi-VMA
 * ranges: every mmap lands where the full scan says, and find_vma (its
 * cache hit or not) and vma_index's binary search answer as the walk does,
 * in and around every mapping (0 to 64 and more VMAs) */
static void topdown_body(struct sim *s, struct sim_thread *t)
{
	(void)t;
	struct mm_struct *mm = current_task(s)->mm;
	uint64_t live[64] = {0}, lens[64] = {0}, x = 12345, ps = hw_of(s)->geom.page_size;
	for (int it = 0; it < 3000; it++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		int k = (int)((x >> 33) % 64);
		uint64_t r = x >> 40;
		if (!live[k]) {
			uint64_t len = (1 + r % 24) * ps;
			if (r % 7 == 0)
				len = (64 + r % 512) * ps;
			uint64_t want = topdown_ref(s, mm, len);
			uint64_t a = sys_mmap(s, 0, len, TLBSIM_MAP_PRIVATE);
			assert_int_equal(a, want);
			live[k] = a;
			lens[k] = len;
		} else if (r % 5 == 0 && lens[k] > ps) {
			/* the upper part only: a split, the gap grows below the next VMA */
			uint64_t keep = (1 + r % (lens[k] / ps - 1)) * ps;
			assert_int_equal(sys_munmap(s, live[k] + keep, lens[k] - keep), 0);
			lens[k] = keep;
		} else if (r % 11 == 0) {
			/* a range over this mapping and whatever lies just above it
			 * (other entries may go stale: unmapping them later is
			 * one more munmap of whatever is there) */
			uint64_t extra = (r % 64) * ps;
			assert_int_equal(sys_munmap(s, live[k], lens[k] + extra), 0);
			live[k] = 0;
		} else {
			assert_int_equal(sys_munmap(s, live[k], lens[k]), 0);
			live[k] = 0;
		}
		for (int q = 0; q < 64; q++) {
			uint64_t at[3] = {live[q], live[q] + lens[q] - 1, live[q] + lens[q]};
			for (int w = 0; w < 3 && live[q]; w++)
				assert_ptr_equal(find_vma(mm, at[w]), find_vma_ref(mm, at[w]));
		}
		check_vma_index(mm);
	}
}

static void test_vma_search_memo_and_cache(void **state)
{
	(void)state;
	struct sim *s = tsim_new("falkor-46", 1, NESTED_FULLMM);
	tsim_spawn(s, topdown_body, NULL, 0);
	tsim_run(s);
	tsim_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_pti_syscall_cost),
					   cmocka_unit_test(test_shmem_setup_under_write_lock),
					   cmocka_unit_test(test_shmem_final_fput_at_syscall_exit),
					   cmocka_unit_test(test_vma_search_memo_and_cache)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
