/*
 * test_fault.c - the v5.8 fault path, one kernel rule per test:
 *  - fault_dirty_shared_page drops mmap_lock and asks for a retry only on
 *    the first attempt (ALLOW_RETRY && !TRIED: maybe_unlock_mmap_for_io);
 *    `completed` reports the fault done instead; `none` keeps the lock;
 *  - the retry carries FAULT_FLAG_TRIED, and what the retried (spurious)
 *    write fault emits, per spurious_flush value and arch;
 *  - a handled write fault leaves the PTE young and dirty, except that the
 *    NACKed RFC (skip_af_update) leaves a TRIED fault's PTE alone;
 *  - a PTE changed between the unlocked read and the PTE lock (!pte_same)
 *    ends the fault with nothing done;
 *  - page_mkwrite runs for a write to a clean page of a filesystem that has
 *    it, and dirties the page; writeback cleans the page and write-protects
 *    its PTEs, so the next write calls it again;
 *  - an anonymous read fault maps the shared zero page read-only; a write
 *    to it copies into a new page with one flush;
 *  - user_access_many() of n pages makes the same faults, walks and TLB
 *    fills as n user_access() calls and charges the same time, as one
 *    yield point for each stretch between faults instead of one per page.
 */
#include "test_util.h"

#define PAGES 8

struct fctx {
	int profile_x86;
	enum fault_retry_policy retry;
	enum spurious_flush_policy spurious;
	const struct fs_type *fs;
	/* results */
	vm_fault_t ret_first, ret_tried;
	int readers_first, readers_tried;
	struct tlbsim_metrics d;	/* metric deltas around the writes */
	pte_t pte[PAGES];
	int ran;
};

static struct tlbsim_metrics mdiff(const struct tlbsim_metrics *a, const struct tlbsim_metrics *b)
{
	struct tlbsim_metrics d;
	memset(&d, 0, sizeof(d));
#define X(n) d.n = b->n - a->n;
	TLBSIM_METRICS(X)
#undef X
#define X(n) d.tlbi.n = b->tlbi.n - a->tlbi.n;
	TLBSIM_TLBI_KINDS(X)
#undef X
	return d;
}

static struct sim *new_sim(const struct fctx *c)
{
	struct sim *s = tsim_new(c->profile_x86 ? "x86-24" : "arm64-4k", 4, NESTED_FULLMM);
	machine_of(s)->policy.fault_retry = c->retry;
	machine_of(s)->policy.spurious_flush = c->spurious;
	return s;
}

/* ---- the retry rule, handle_mm_fault called directly ---- */

static void retry_main(struct sim *s, struct sim_thread *t)
{
	struct fctx *c = t->arg;
	struct mm_struct *mm = task_of(t)->mm;
	uint64_t ps = hw_of(s)->geom.page_size;
	struct inode *f = sys_tmpfile(s, c->fs, 2 * ps);
	uint64_t a = sys_mmap_file(s, 0, 2 * ps, TLBSIM_MAP_SHARED, f, 0);
	assert_true(a != TLBSIM_EINVAL_VA);
	unsigned flags = FAULT_FLAG_DEFAULT | FAULT_FLAG_USER | FAULT_FLAG_WRITE;

	down_read(s, &mm->mmap_sem);
	c->ret_first = handle_mm_fault(s, find_vma(mm, a), a, flags);
	c->readers_first = mm->mmap_sem.readers;
	if (c->readers_first)
		up_read(s, &mm->mmap_sem);

	down_read(s, &mm->mmap_sem);
	c->ret_tried = handle_mm_fault(s, find_vma(mm, a + ps), a + ps, flags | FAULT_FLAG_TRIED);
	c->readers_tried = mm->mmap_sem.readers;
	if (c->readers_tried)
		up_read(s, &mm->mmap_sem);
	c->ran = 1;
}

static void run(struct fctx *c, thread_fn fn)
{
	struct sim *s = new_sim(c);
	tsim_spawn(s, fn, c, 0);
	tsim_run(s);
	assert_int_equal(c->ran, 1);
	assert_int_equal(s->m.violations, 0);
	tsim_free(s);
}

/* ---- user_access_many: one step per stretch ---- */

struct many {
	int many;			/* 1: user_access_many, 0: user_access each page */
	int ret[3];
	uint64_t steps[3], ns[3], misses[3], walks[3], faults[3];
	int ran;
};

static void many_main(struct sim *s, struct sim_thread *t)
{
	struct many *x = t->arg;
	uint64_t ps = hw_of(s)->geom.page_size;
	uint64_t a = sys_mmap(s, 0, PAGES * ps, TLBSIM_MAP_PRIVATE);
	assert_true(a != TLBSIM_EINVAL_VA);
	uint64_t va[PAGES];
	for (int i = 0; i < PAGES; i++)
		va[i] = a + (uint64_t)i * ps;
	/* round 0: pages 0-3 written before, so the stretch faults at page 4;
	 * round 1: every page present, not in the TLB after a full flush;
	 * round 2: every page in the TLB */
	for (int i = 0; i < 4; i++)
		user_access(s, va[i], true);
	for (int r = 0; r < 3; r++) {
		if (r == 1)
			machine_of(s)->arch->flush_tlb_mm(s, &task_of(t)->mm->context);
		/* yield points: run mode counts them down to its next slow step
		 * (s->steps is exact only while tracing); the test asserts that
		 * no slow step came between */
		uint32_t st = s->slow_countdown;
		uint64_t t0 = s->now + t->pending_ns;
		uint64_t mi = s->m.tlb_misses, wa = s->m.page_walks, fa = s->m.page_faults;
		x->ret[r] = 0;
		if (x->many) {
			x->ret[r] = user_access_many(s, va, PAGES, true);
		} else {
			for (int i = 0; i < PAGES; i++)
				x->ret[r] |= user_access(s, va[i], true);
		}
		assert_true(s->slow_countdown <= st);
		x->steps[r] = st - s->slow_countdown;
		x->ns[r] = s->now + t->pending_ns - t0;
		x->misses[r] = s->m.tlb_misses - mi;
		x->walks[r] = s->m.page_walks - wa;
		x->faults[r] = s->m.page_faults - fa;
	}
	x->ran = 1;
}

/* Rule (the model's, src/mm/fault.c user_access_many): a stretch of user
 * accesses is the same translations as the accesses one by one - the same
 * faults, TLB misses, walks and time (exact mode) - with one yield point per
 * stretch instead of one per page; a fault ends the stretch before it. */
static void test_user_access_many(void **state)
{
	(void)state;
	for (int x86 = 0; x86 <= 1; x86++) {
		struct many one = {.many = 0}, many = {.many = 1};
		struct fctx c = {.profile_x86 = x86};
		struct sim *s = new_sim(&c);
		tsim_spawn(s, many_main, &one, 0);
		tsim_run(s);
		tsim_free(s);
		s = new_sim(&c);
		tsim_spawn(s, many_main, &many, 0);
		tsim_run(s);
		tsim_free(s);
		assert_int_equal(one.ran, 1);
		assert_int_equal(many.ran, 1);
		for (int r = 0; r < 3; r++) {
			assert_int_equal(many.ret[r], 0);
			assert_int_equal(one.ret[r], 0);
			assert_int_equal(many.faults[r], one.faults[r]);
			assert_int_equal(many.misses[r], one.misses[r]);
			assert_int_equal(many.walks[r], one.walks[r]);
			if (many.ns[r] != one.ns[r])
				fail_msg("x86 %d round %d: %llu ns vs %llu", x86, r, (unsigned long long)many.ns[r], (unsigned long long)one.ns[r]);
		}
		/* round 0: 4 faults; rounds 1 and 2: no fault, all miss / all hit */
		assert_int_equal(many.faults[0], 4);
		assert_int_equal(many.faults[1], 0);
		assert_int_equal(many.misses[1], PAGES);
		assert_int_equal(many.misses[2], 0);
		/* one step per page one by one; one per stretch together */
		assert_int_equal(one.steps[1], PAGES);
		assert_int_equal(one.steps[2], PAGES);
		assert_int_equal(many.steps[1], 1);
		assert_int_equal(many.steps[2], 1);
	}
}

/* Rule (89b15332af7c; maybe_unlock_mmap_for_io, mm/internal.h): a write fault
 * that dirties a shared file page drops mmap_lock and returns VM_FAULT_RETRY
 * on the first attempt only; a TRIED attempt keeps the lock and completes.
 * With VM_FAULT_COMPLETED (d92725256b4f) the first attempt drops the lock
 * and reports the fault done. Before 89b15332af7c nothing is dropped. Both
 * filesystems: tmpfs retries because the page is newly dirtied, ext4
 * because it has page_mkwrite. */
static void test_retry_first_attempt_only(void **state)
{
	const struct fs_type *fss[] = {&fs_ext4, &fs_tmpfs};
	for (int x86 = 0; x86 <= 1; x86++)
		for (int i = 0; i < 2; i++) {
			struct fctx c = {.profile_x86 = x86, .retry = FAULT_RETRY_DIRTY_THROTTLE,
					 .fs = fss[i]};
			run(&c, retry_main);
			assert_true(c.ret_first & VM_FAULT_RETRY);
			assert_int_equal(c.readers_first, 0);	/* dropped */
			assert_false(c.ret_tried & (VM_FAULT_RETRY | VM_FAULT_COMPLETED));
			assert_int_equal(c.readers_tried, 1);	/* still held */

			c = (struct fctx){.profile_x86 = x86, .retry = FAULT_RETRY_COMPLETED,
					  .fs = fss[i]};
			run(&c, retry_main);
			assert_true(c.ret_first & VM_FAULT_COMPLETED);
			assert_false(c.ret_first & VM_FAULT_RETRY);
			assert_int_equal(c.readers_first, 0);

			c = (struct fctx){.profile_x86 = x86, .retry = FAULT_RETRY_NONE, .fs = fss[i]};
			run(&c, retry_main);
			assert_false(c.ret_first & (VM_FAULT_RETRY | VM_FAULT_COMPLETED));
			assert_int_equal(c.readers_first, 1);
		}
}

/* ---- what the retried write fault emits ---- */

static void writes_main(struct sim *s, struct sim_thread *t)
{
	struct fctx *c = t->arg;
	struct mm_struct *mm = task_of(t)->mm;
	uint64_t ps = hw_of(s)->geom.page_size;
	struct inode *f = sys_tmpfile(s, c->fs, PAGES * ps);
	uint64_t a = sys_mmap_file(s, 0, PAGES * ps, TLBSIM_MAP_SHARED, f, 0);
	assert_true(a != TLBSIM_EINVAL_VA);
	struct tlbsim_metrics m0 = s->m;
	for (int i = 0; i < PAGES; i++)
		assert_int_equal(user_access(s, a + (uint64_t)i * ps, true), 0);
	c->d = mdiff(&m0, &s->m);
	for (int i = 0; i < PAGES; i++)
		c->pte[i] = *pte_lookup(s, mm, a + (uint64_t)i * ps);
	c->ran = 1;
}

/* Rule (kernel-model 5.2; b7333b58f358, arm64 v5.10, cb1fa2e99955): each
 * write to a page of an ext4 shared mapping takes one exception, is retried
 * once with FAULT_FLAG_TRIED, and the retry finds its PTE already young,
 * dirty and writable (the spurious branch). arm64 then issues exactly one
 * broadcast VALE1IS per page with `broadcast`; none with skip_tried,
 * skip_af_update (TRIED is seen: the flag is set on the retry) or noop; one
 * local VALE1 with `local` (defined as v5.8 with the hook made local). x86
 * never flushes for it, whatever the knob. */
static void test_tried_spurious_emission(void **state)
{
	for (int x86 = 0; x86 <= 1; x86++)
		for (int k = 0; k < SPURIOUS_COUNT; k++) {
			struct fctx c = {.profile_x86 = x86, .retry = FAULT_RETRY_DIRTY_THROTTLE,
					 .spurious = (enum spurious_flush_policy)k, .fs = &fs_ext4};
			run(&c, writes_main);
			const struct tlbsim_metrics *d = &c.d;
			assert_int_equal(d->page_faults, PAGES);
			assert_int_equal(d->fault_retries, PAGES);
			assert_int_equal(d->page_mkwrite, PAGES);
			bool skip_update = k == SPURIOUS_SKIP_AF_UPDATE;
			assert_int_equal(d->spurious_faults, skip_update ? 0 : PAGES);
			uint64_t want_vale = !x86 && k == SPURIOUS_BROADCAST ? PAGES : 0;
			uint64_t want_local = !x86 && k == SPURIOUS_LOCAL ? PAGES : 0;
			assert_int_equal(d->tlbi.vale1is, want_vale);
			assert_int_equal(d->tlbi.local, want_local);
			assert_int_equal(d->tlbi.vae1is + d->tlbi.aside1is + d->tlbi.vaale1is +
						 d->tlbi.vmalle1is, 0);
			assert_int_equal(d->spurious_flushes, want_vale + want_local);
			assert_int_equal(d->ipi_sent + d->flush_local_pages + d->flush_full, 0);
			for (int i = 0; i < PAGES; i++) {
				assert_true(c.pte[i] & PTE_YOUNG);
				assert_true(c.pte[i] & PTE_WRITE);
				assert_false(fmt_pte_clean(x86 ? &pt_format_x86_64 : &pt_format_arm64,
							   c.pte[i]));
			}
		}
}

/* Rule (fault_retry=none, before 89b15332af7c): no retry, no spurious
 * branch, no flush for the same writes. */
static void test_no_retry_no_spurious(void **state)
{
	struct fctx c = {.retry = FAULT_RETRY_NONE, .spurious = SPURIOUS_BROADCAST, .fs = &fs_ext4};
	run(&c, writes_main);
	assert_int_equal(c.d.page_faults, PAGES);
	assert_int_equal(c.d.fault_retries + c.d.spurious_faults + c.d.tlbi.vale1is, 0);
}

/* ---- young + dirty after a handled write fault ---- */

struct afctx {
	enum spurious_flush_policy spurious;
	int x86;
	pte_t before, after;
	int ran;
};

static void af_main(struct sim *s, struct sim_thread *t)
{
	struct afctx *c = t->arg;
	struct mm_struct *mm = task_of(t)->mm;
	uint64_t ps = hw_of(s)->geom.page_size;
	/* tmpfs shared: a read fault maps the page writable and clean */
	struct inode *f = sys_tmpfile(s, &fs_tmpfs, ps);
	uint64_t a = sys_mmap_file(s, 0, ps, TLBSIM_MAP_SHARED, f, 0);
	assert_int_equal(user_access(s, a, false), 0);
	pte_t *ptep = pte_lookup(s, mm, a);
	*ptep &= ~(pte_t)PTE_YOUNG;	/* as if the access flag had been aged */
	c->before = *ptep;
	down_read(s, &mm->mmap_sem);
	vm_fault_t r = handle_mm_fault(s, find_vma(mm, a), a,
				       FAULT_FLAG_DEFAULT | FAULT_FLAG_USER | FAULT_FLAG_WRITE |
					       FAULT_FLAG_TRIED);
	assert_false(r & (VM_FAULT_RETRY | VM_FAULT_COMPLETED));
	up_read(s, &mm->mmap_sem);
	c->after = *pte_lookup(s, mm, a);
	c->ran = 1;
}

/* Rule (handle_pte_fault, v5.8): a write fault on a present writable PTE
 * makes it young and dirty (ptep_set_access_flags), TRIED or not - except
 * under the NACKed RFC, which returned for a TRIED fault before touching
 * the PTE. */
static void test_young_dirty_after_write_fault(void **state)
{
	for (int x86 = 0; x86 <= 1; x86++)
		for (int k = 0; k < SPURIOUS_COUNT; k++) {
			struct afctx c = {.spurious = (enum spurious_flush_policy)k, .x86 = x86};
			struct sim *s = tsim_new(x86 ? "x86-24" : "arm64-4k", 2, NESTED_FULLMM);
			machine_of(s)->policy.spurious_flush = c.spurious;
			tsim_spawn(s, af_main, &c, 0);
			tsim_run(s);
			assert_int_equal(c.ran, 1);
			const struct pt_format *fmt = hw_of(s)->fmt;
			assert_true(fmt_pte_clean(fmt, c.before));
			assert_false(c.before & PTE_YOUNG);
			if (k == SPURIOUS_SKIP_AF_UPDATE) {
				assert_int_equal(c.after, c.before);
			} else {
				assert_true(c.after & PTE_YOUNG);
				assert_false(fmt_pte_clean(fmt, c.after));
			}
			tsim_free(s);
		}
}

/* ---- !pte_same: the PTE changed between the unlocked read and the lock ---- */

enum samewhen { SAME_UNCHANGED, SAME_DIRTY_BEFORE_READ, SAME_DIRTY_AFTER_READ };

struct samectx {
	int x86;
	enum samewhen when;
	pte_t *ptep;
	pte_t written, after;
	struct tlbsim_metrics d;
	int ran, fired;
};

/* what another CPU's write fault leaves: the entry young and dirty */
static pte_t young_dirty(struct sim *s, pte_t e)
{
	return fmt_pte_mkdirty(hw_of(s)->fmt, e) | PTE_YOUNG;
}

static void dirty_it(struct sim *s, void *arg, uint64_t data)
{
	(void)data;
	struct samectx *c = arg;
	c->written = young_dirty(s, *c->ptep);
	*c->ptep = c->written;
	c->fired = 1;
}

static void same_main(struct sim *s, struct sim_thread *t)
{
	struct samectx *c = t->arg;
	struct mm_struct *mm = task_of(t)->mm;
	uint64_t ps = hw_of(s)->geom.page_size;
	/* tmpfs shared: a read fault maps the page writable and clean */
	struct inode *f = sys_tmpfile(s, &fs_tmpfs, ps);
	uint64_t a = sys_mmap_file(s, 0, ps, TLBSIM_MAP_SHARED, f, 0);
	assert_int_equal(user_access(s, a, false), 0);
	c->ptep = pte_lookup(s, mm, a);
	assert_true(fmt_pte_clean(hw_of(s)->fmt, *c->ptep));
	down_read(s, &mm->mmap_sem);
	if (c->when == SAME_DIRTY_BEFORE_READ)
		dirty_it(s, c, 0);
	if (c->when == SAME_DIRTY_AFTER_READ)
		/* 1 ns after now: after the unlocked read, which charges
		 * nothing, and before the PTE lock is taken (lock_op_ns) */
		sim_call_at(s, s->now + t->pending_ns + 1, dirty_it, NULL, c, 0);
	struct tlbsim_metrics m0 = s->m;
	vm_fault_t r = handle_mm_fault(s, find_vma(mm, a), a,
				       FAULT_FLAG_DEFAULT | FAULT_FLAG_USER | FAULT_FLAG_WRITE);
	c->d = mdiff(&m0, &s->m);
	assert_int_equal(r, 0);
	up_read(s, &mm->mmap_sem);
	c->after = *c->ptep;
	c->ran = 1;
}

/* Rule (handle_pte_fault, mm/memory.c, every version modelled): the present
 * PTE is read without the lock, and after taking it a PTE that is no longer
 * that value (!pte_same) ends the fault with nothing done - no access-flag
 * update, no spurious-fault flush; the access retries. A write fault on a
 * clean writable PTE that stays the same under the lock dirties it
 * (ptep_set_access_flags changed it: no spurious flush); one on a PTE
 * already young and dirty at the unlocked read is the spurious branch, where
 * arm64 with `broadcast` issues one VALE1IS and x86 nothing. */
static void test_pte_changed_before_lock(void **state)
{
	for (int x86 = 0; x86 <= 1; x86++)
		for (int w = SAME_UNCHANGED; w <= SAME_DIRTY_AFTER_READ; w++) {
			struct samectx c = {.x86 = x86, .when = (enum samewhen)w};
			struct sim *s = tsim_new(x86 ? "x86-24" : "arm64-4k", 2, NESTED_FULLMM);
			machine_of(s)->policy.spurious_flush = SPURIOUS_BROADCAST;
			assert_true(P(s, P_lock_op_ns) >= 2);
			tsim_spawn(s, same_main, &c, 0);
			tsim_run(s);
			assert_int_equal(c.ran, 1);
			assert_int_equal(c.fired, w != SAME_UNCHANGED);
			const struct tlbsim_metrics *d = &c.d;
			switch (c.when) {
			case SAME_UNCHANGED:
				assert_int_equal(d->af_faults, 1);
				assert_int_equal(d->spurious_faults, 0);
				assert_false(fmt_pte_clean(hw_of(s)->fmt, c.after));
				break;
			case SAME_DIRTY_BEFORE_READ:
				assert_int_equal(d->af_faults, 0);
				assert_int_equal(d->spurious_faults, 1);
				assert_int_equal(d->spurious_flushes, x86 ? 0 : 1);
				assert_int_equal(d->tlbi.vale1is, x86 ? 0 : 1);
				assert_int_equal(c.after, c.written);
				break;
			case SAME_DIRTY_AFTER_READ:
				assert_int_equal(d->af_faults, 0);
				assert_int_equal(d->spurious_faults, 0);
				assert_int_equal(d->spurious_flushes, 0);
				assert_int_equal(d->tlbi.vale1is, 0);
				assert_int_equal(c.after, c.written);
				break;
			}
			tsim_free(s);
		}
	(void)state;
}

/* ---- page_mkwrite and writeback ---- */

struct mkctx {
	uint64_t mkwrite[4];
	uint64_t vale_fsync;
	bool dirty_after_write, dirty_after_fsync, pte_clean_after_fsync;
	int ran;
};

static void mkwrite_main(struct sim *s, struct sim_thread *t)
{
	struct mkctx *c = t->arg;
	struct mm_struct *mm = task_of(t)->mm;
	struct hw *hw = hw_of(s);
	uint64_t ps = hw->geom.page_size;
	struct inode *f = sys_tmpfile(s, &fs_ext4, ps);
	uint64_t a = sys_mmap_file(s, 0, ps, TLBSIM_MAP_SHARED, f, 0);
	uint64_t m0 = s->m.page_mkwrite;
	assert_int_equal(user_access(s, a, true), 0);		/* clean page: page_mkwrite */
	c->mkwrite[0] = s->m.page_mkwrite - m0;
	uint32_t frame = find_get_page(s, f, 0);
	c->dirty_after_write = frame_of(hw, frame)->pgflags & PG_DIRTY;
	assert_int_equal(user_access(s, a, true), 0);		/* TLB hit: no fault */
	c->mkwrite[1] = s->m.page_mkwrite - m0;
	uint64_t v0 = s->m.tlbi.vale1is;
	sys_fsync(s, f);					/* page_mkclean */
	c->vale_fsync = s->m.tlbi.vale1is - v0;
	c->dirty_after_fsync = frame_of(hw, frame)->pgflags & PG_DIRTY;
	pte_t pte = *pte_lookup(s, mm, a);
	c->pte_clean_after_fsync = fmt_pte_clean(hw->fmt, pte) && !(pte & PTE_WRITE);
	assert_int_equal(user_access(s, a, true), 0);		/* clean again: page_mkwrite */
	c->mkwrite[2] = s->m.page_mkwrite - m0;
	assert_int_equal(user_access(s, a, false), 0);
	c->mkwrite[3] = s->m.page_mkwrite - m0;
	c->ran = 1;
}

/* Rule (do_shared_fault / wp_page_shared -> do_page_mkwrite, ext4 via
 * block_page_mkwrite; clear_page_dirty_for_io -> page_mkclean): the first
 * write to a clean page calls page_mkwrite, which dirties the page; writes
 * through the now writable entry do not fault; writeback cleans the page
 * and write-protects and flushes its PTE (arm64: one broadcast VALE1IS), so
 * the next write faults and calls page_mkwrite again. Reads never do. */
static void test_page_mkwrite_per_clean_page(void **state)
{
	struct mkctx c = {0};
	struct sim *s = tsim_new("arm64-4k", 2, NESTED_FULLMM);
	machine_of(s)->policy.fault_retry = FAULT_RETRY_NONE;
	tsim_spawn(s, mkwrite_main, &c, 0);
	tsim_run(s);
	assert_int_equal(c.ran, 1);
	assert_int_equal(c.mkwrite[0], 1);
	assert_true(c.dirty_after_write);
	assert_int_equal(c.mkwrite[1], 1);
	assert_int_equal(c.vale_fsync, 1);
	assert_false(c.dirty_after_fsync);
	assert_true(c.pte_clean_after_fsync);
	assert_int_equal(c.mkwrite[2], 2);
	assert_int_equal(c.mkwrite[3], 2);
	assert_int_equal(s->m.violations, 0);
	tsim_free(s);
}

/* ---- the zero page ---- */

struct zctx {
	int x86;
	uint32_t zero, after_write;
	bool ro;
	uint64_t flushes, frees;
	int ran;
};

static void zero_main(struct sim *s, struct sim_thread *t)
{
	struct zctx *c = t->arg;
	struct mm_struct *mm = task_of(t)->mm;
	struct hw *hw = hw_of(s);
	uint64_t ps = hw->geom.page_size;
	uint64_t a = sys_mmap(s, 0, 2 * ps, TLBSIM_MAP_PRIVATE);
	assert_int_equal(user_access(s, a, false), 0);
	assert_int_equal(user_access(s, a + ps, false), 0);
	pte_t pte = *pte_lookup(s, mm, a);
	c->zero = pte_pfn(pte);
	c->ro = !(pte & PTE_WRITE);
	assert_int_equal(pte_pfn(*pte_lookup(s, mm, a + ps)), c->zero);	/* shared */
	uint32_t refs = frame_of(hw, c->zero)->refcount;
	struct tlbsim_metrics m0 = s->m;
	assert_int_equal(user_access(s, a, true), 0);
	c->flushes = c->x86 ? s->m.flush_local_pages - m0.flush_local_pages
			    : s->m.tlbi.vale1is - m0.tlbi.vale1is;
	c->after_write = pte_pfn(*pte_lookup(s, mm, a));
	assert_int_equal(frame_of(hw, c->zero)->refcount, refs);
	m0 = s->m;
	assert_int_equal(sys_munmap(s, a, 2 * ps), 0);
	c->frees = s->m.pages_freed - m0.pages_freed;
	assert_int_equal(frame_of(hw, c->zero)->state, FRAME_DATA);
	c->ran = 1;
}

/* Rule (do_anonymous_page, do_wp_page -> wp_page_copy, v5.8): a read fault
 * on private anonymous memory maps the one shared zero page, read-only; a
 * write to it allocates a new zeroed page and replaces the PTE with
 * ptep_clear_flush (one flush of that page); munmap frees only the new page,
 * never the zero page. */
static void test_zero_page(void **state)
{
	for (int x86 = 0; x86 <= 1; x86++) {
		struct zctx c = {.x86 = x86};
		struct sim *s = tsim_new(x86 ? "x86-24" : "arm64-4k", 2, NESTED_FULLMM);
		tsim_spawn(s, zero_main, &c, 0);
		tsim_run(s);
		assert_int_equal(c.ran, 1);
		assert_int_equal(c.zero, kernel_of(s)->zero_frame);
		assert_true(c.ro);
		assert_int_not_equal(c.after_write, c.zero);
		assert_int_equal(c.flushes, 1);
		assert_int_equal(c.frees, 1);
		assert_int_equal(s->m.violations, 0);
		tsim_free(s);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_retry_first_attempt_only),
		cmocka_unit_test(test_tried_spurious_emission),
		cmocka_unit_test(test_no_retry_no_spurious),
		cmocka_unit_test(test_pte_changed_before_lock),
		cmocka_unit_test(test_young_dirty_after_write_fault),
		cmocka_unit_test(test_page_mkwrite_per_clean_page),
		cmocka_unit_test(test_zero_page),
		cmocka_unit_test(test_user_access_many),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
