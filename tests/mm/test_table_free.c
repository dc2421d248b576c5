/*
 * test_table_free.c - the page-table freeing paths of mm/mmu_gather.c and
 * their knobs (issue 14 item 5).
 *
 * Rules:
 *  - tlb_remove_table() queues a table for freeing after the gather's flush
 *    and a grace period; two paths free it at once instead:
 *    - mm_users < 2 (table_free_users=shortcut, up to v4.18): no TLBI, no
 *      IPI, before the gather's flush;
 *    - the batch page cannot be allocated (fail_table_batch / -D
 *      table_batch_fail=1): tlb_remove_table_one IPIs every other CPU and
 *      frees the table; with table_free_one=invalidate (d86564a2f085, v4.19)
 *      the gather's flush (tlb_table_invalidate) comes first, with sync
 *      (before) it does not.
 *  - arm64_pgtable_flush=hook (285994a62c80, v4.1..v4.19): each freed table
 *    costs one TLBI VAE1IS at once in __p?d_free_tlb and the gather's range
 *    flush is VALE1IS (last level); gather (v4.20): no TLBI in the hook, the
 *    gather flushes with VAE1IS because freed_tables is set.
 *  - x86 flush_tlb_range() passes freed_tables=false (016c4d92cd16) or true
 *    (3ef938c35035, knob x86_range_freed): only with true does a lazy-TLB
 *    CPU of the mm get the flush IPI.
 * A table freed while another CPU can still reach it through its walk
 * cache is I1 (the oracle is attached in every test sim).
 */
#include "test_util.h"

#define A 0x100000000000ull	/* 16 TiB: alone, every table of its path is freed */

struct ctx {
	int ran;
	bool cached;			/* cpu 1 has walked A */
	bool fail;			/* the munmap's batch pages fail */
	int users;			/* thread_users to set before the munmap */
	uint64_t freed_at_once;		/* tables freed before the grace period */
	uint64_t freed_late;		/* tables freed after it */
	uint64_t vae1is, vale1is, ipis;
};

static void toucher(struct sim *s, struct sim_thread *t)
{
	struct ctx *c = t->arg;
	assert_int_equal(user_access(s, A, false), 0);
	c->cached = true;
}

static void unmapper(struct sim *s, struct sim_thread *t)
{
	struct ctx *c = t->arg;
	while (!c->cached)
		sim_step(s, YP_USER, 1000);
	struct mm_struct *mm = tsim_mm(s, 0);
	mm->thread_users = c->users;
	uint64_t f0 = s->m.tables_freed, e0 = s->m.tlbi.vae1is, l0 = s->m.tlbi.vale1is;
	uint64_t i0 = s->m.ipi_sent;
	if (c->fail)
		mmu_gather_fail_batches(s, 16);
	assert_int_equal(sys_munmap(s, A, hw_of(s)->geom.page_size), 0);
	mmu_gather_fail_batches(s, 0);
	c->freed_at_once = s->m.tables_freed - f0;
	c->vae1is = s->m.tlbi.vae1is - e0;
	c->vale1is = s->m.tlbi.vale1is - l0;
	c->ipis = s->m.ipi_sent - i0;
	sim_step(s, YP_USER, (uint64_t)P(s, P_rcu_grace_ns) + 1000000u);
	c->freed_late = s->m.tables_freed - f0 - c->freed_at_once;
	mm->thread_users = 0;
	c->ran = 1;
}

static void mapper_then(struct sim *s, struct sim_thread *t)
{
	struct ctx *c = t->arg;
	uint64_t a = sys_mmap(s, A, hw_of(s)->geom.page_size, TLBSIM_MAP_PRIVATE);
	assert_true(a == A);
	assert_int_equal(user_access(s, A, true), 0);
	tsim_spawn(s, toucher, c, 1);
	unmapper(s, t);
}

static struct sim *go(const char *profile, enum table_free_one_policy one,
		      enum table_free_users_policy users, enum arm64_pgtable_flush_policy hook,
		      struct ctx *c)
{
	struct sim *s = tsim_new(profile, 2, NESTED_FULLMM);
	struct tlbsim_policy *p = &machine_of(s)->policy;
	p->table_free_one = one;
	p->table_free_users = users;
	p->arm64_pgtable_flush = hook;
	tsim_spawn(s, mapper_then, c, 0);
	tsim_run(s);
	assert_int_equal(c->ran, 1);
	return s;
}

static uint64_t ntables(struct sim *s)
{
	return (uint64_t)hw_of(s)->geom.levels - 1;
}

/* The batch: nothing is freed before the grace period, every table after
 * it; one VALE1IS for the zapped page (tlb_end_vma, before any table was
 * freed), then the gather flushes non-leaf (freed_tables); no IPI. */
static void test_batch_frees_after_grace_period(void **state)
{
	(void)state;
	struct ctx c = {.users = 1};
	struct sim *s = go("arm64-4k", TABLE_FREE_ONE_INVALIDATE, TABLE_FREE_USERS_BATCH,
			   ARM64_PGTABLE_FLUSH_GATHER, &c);
	assert_int_equal(c.freed_at_once, 0);
	assert_int_equal(c.freed_late, ntables(s));
	assert_int_equal(c.vale1is, 1);
	assert_true(c.vae1is > 0);
	assert_int_equal(c.ipis, 0);
	assert_int_equal(tsim_violation(s)->kind, -1);
	tsim_free(s);
}

/* batch failure, sync: each table is freed at once after an IPI to the
 * other CPU and before any TLBI: cpu 1 still caches it (I1). The TLBIs are
 * those of the batch path (the finish's flush only). */
static void test_batch_fail_sync_frees_before_flush(void **state)
{
	(void)state;
	struct ctx base = {.users = 1}, c = {.users = 1, .fail = true};
	struct sim *b = go("arm64-4k", TABLE_FREE_ONE_SYNC, TABLE_FREE_USERS_BATCH,
			   ARM64_PGTABLE_FLUSH_GATHER, &base);
	struct sim *s = go("arm64-4k", TABLE_FREE_ONE_SYNC, TABLE_FREE_USERS_BATCH,
			   ARM64_PGTABLE_FLUSH_GATHER, &c);
	assert_int_equal(c.freed_at_once, ntables(s));
	assert_int_equal(c.freed_late, 0);
	assert_int_equal(c.ipis, ntables(s) * (uint64_t)(s->nr_cpus - 1));
	assert_int_equal(c.vae1is, base.vae1is);
	assert_int_equal(c.vale1is, base.vale1is);
	assert_int_equal(tsim_violation(s)->kind, INV_I1);
	assert_non_null(strstr(tsim_violation(s)->text, "page-table frame"));
	tsim_free(b);
	tsim_free(s);
}

/* batch failure, invalidate: the gather's flush runs before each one-off
 * free (more TLBIs than the batch path), the same IPIs, and no table is
 * freed while cached. */
static void test_batch_fail_invalidate_flushes_first(void **state)
{
	(void)state;
	struct ctx base = {.users = 1}, c = {.users = 1, .fail = true};
	struct sim *b = go("arm64-4k", TABLE_FREE_ONE_INVALIDATE, TABLE_FREE_USERS_BATCH,
			   ARM64_PGTABLE_FLUSH_GATHER, &base);
	struct sim *s = go("arm64-4k", TABLE_FREE_ONE_INVALIDATE, TABLE_FREE_USERS_BATCH,
			   ARM64_PGTABLE_FLUSH_GATHER, &c);
	assert_int_equal(c.freed_at_once, ntables(s));
	assert_int_equal(c.ipis, ntables(s) * (uint64_t)(s->nr_cpus - 1));
	assert_true(c.vae1is > base.vae1is);
	assert_int_equal(tsim_violation(s)->kind, -1);
	tsim_free(b);
	tsim_free(s);
}

/* mm_users < 2 shortcut: freed at once, no IPI, no TLBI of its own; with
 * the gather's flush as the only invalidation cpu 1 still caches it (I1). */
static void test_users_shortcut_frees_at_once(void **state)
{
	(void)state;
	struct ctx base = {.users = 1}, c = {.users = 0};
	struct sim *b = go("arm64-4k", TABLE_FREE_ONE_INVALIDATE, TABLE_FREE_USERS_BATCH,
			   ARM64_PGTABLE_FLUSH_GATHER, &base);
	struct sim *s = go("arm64-4k", TABLE_FREE_ONE_INVALIDATE, TABLE_FREE_USERS_SHORTCUT,
			   ARM64_PGTABLE_FLUSH_GATHER, &c);
	assert_int_equal(c.freed_at_once, ntables(s));
	assert_int_equal(c.ipis, 0);
	assert_int_equal(c.vae1is, base.vae1is);
	assert_int_equal(tsim_violation(s)->kind, INV_I1);
	assert_non_null(strstr(tsim_violation(s)->text, "page-table frame"));
	tsim_free(b);
	tsim_free(s);
}

/* The shortcut needs mm_users < 2: a second user (a running thread) keeps
 * the batch. */
static void test_users_shortcut_needs_one_user(void **state)
{
	(void)state;
	struct ctx c = {.users = 1};
	struct sim *s = go("arm64-4k", TABLE_FREE_ONE_INVALIDATE, TABLE_FREE_USERS_SHORTCUT,
			   ARM64_PGTABLE_FLUSH_GATHER, &c);
	assert_int_equal(c.freed_at_once, 0);
	assert_int_equal(c.freed_late, ntables(s));
	assert_int_equal(tsim_violation(s)->kind, -1);
	tsim_free(s);
}

/* hook: one VAE1IS per freed table from __flush_tlb_pgtable, the gather's
 * flush last-level (VALE1IS); the shortcut and the sync one-off free are
 * then safe (v4.14). */
static void test_pgtable_hook_emits_one_vae1is_per_table(void **state)
{
	(void)state;
	struct ctx c = {.users = 0}, f = {.users = 1, .fail = true};
	struct sim *s = go("arm64-4k", TABLE_FREE_ONE_SYNC, TABLE_FREE_USERS_SHORTCUT,
			   ARM64_PGTABLE_FLUSH_HOOK, &c);
	assert_int_equal(c.freed_at_once, ntables(s));
	assert_int_equal(c.vae1is, ntables(s));
	assert_true(c.vale1is > 0);
	assert_int_equal(tsim_violation(s)->kind, -1);
	struct sim *s2 = go("arm64-4k", TABLE_FREE_ONE_SYNC, TABLE_FREE_USERS_BATCH,
			    ARM64_PGTABLE_FLUSH_HOOK, &f);
	assert_int_equal(f.vae1is, ntables(s2));
	assert_int_equal(tsim_violation(s2)->kind, -1);
	tsim_free(s);
	tsim_free(s2);
}

/* ---- x86 flush_tlb_range's freed_tables ---- */
struct lctx {
	int ran;
	bool lazy;
	uint64_t ipis;
};

static void x86_runner(struct sim *s, struct sim_thread *t)
{
	struct lctx *c = t->arg;
	assert_int_equal(user_access(s, A, false), 0);
	c->lazy = true;		/* exits: cpu 1 idles lazily with the mm loaded */
}

static void x86_flusher(struct sim *s, struct sim_thread *t)
{
	struct lctx *c = t->arg;
	uint64_t a = sys_mmap(s, A, hw_of(s)->geom.page_size, TLBSIM_MAP_PRIVATE);
	assert_true(a == A);
	tsim_spawn(s, x86_runner, c, 1);
	while (!c->lazy)
		sim_step(s, YP_USER, 1000);
	sim_step(s, YP_USER, 100000);
	assert_true(arch_cpu(s, 1)->is_lazy);
	uint64_t i0 = s->m.ipi_sent;
	machine_of(s)->arch->flush_tlb_range(s, &tsim_mm(s, 0)->context, A,
					     A + hw_of(s)->geom.page_size);
	c->ipis = s->m.ipi_sent - i0;
	c->ran = 1;
}

static uint64_t x86_range_ipis(enum x86_range_freed_policy v)
{
	struct lctx c = {0};
	struct sim *s = tsim_new("x86-24", 2, NESTED_FULLMM);
	machine_of(s)->policy.x86_range_freed = v;
	tsim_spawn(s, x86_flusher, &c, 0);
	tsim_run(s);
	assert_int_equal(c.ran, 1);
	tsim_free(s);
	return c.ipis;
}

static void test_x86_range_freed_reaches_lazy_cpus(void **state)
{
	(void)state;
	assert_int_equal(x86_range_ipis(X86_RANGE_FREED_FALSE), 0);
	assert_int_equal(x86_range_ipis(X86_RANGE_FREED_TRUE), 1);
}

/* the presets: the shortcut, the hook and the sync one-off free up to
 * v4.18/v4.19 (4.20 and 5.1 invalidate first: arm64 selected
 * HAVE_RCU_TABLE_INVALIDATE with its RCU table freeing), freed_tables=false
 * up to v6.13 */
static void test_presets(void **state)
{
	(void)state;
	struct {
		const char *v;
		int one, users, hook, range;
	} want[] = {
		{"4.14", TABLE_FREE_ONE_SYNC, TABLE_FREE_USERS_SHORTCUT, ARM64_PGTABLE_FLUSH_HOOK,
		 X86_RANGE_FREED_FALSE},
		{"5.1", TABLE_FREE_ONE_INVALIDATE, TABLE_FREE_USERS_BATCH,
		 ARM64_PGTABLE_FLUSH_GATHER, X86_RANGE_FREED_FALSE},
		{"5.8", TABLE_FREE_ONE_INVALIDATE, TABLE_FREE_USERS_BATCH,
		 ARM64_PGTABLE_FLUSH_GATHER, X86_RANGE_FREED_FALSE},
		{"6.18", TABLE_FREE_ONE_INVALIDATE, TABLE_FREE_USERS_BATCH,
		 ARM64_PGTABLE_FLUSH_GATHER, X86_RANGE_FREED_TRUE},
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		struct tlbsim_policy p;
		tlbsim_policy_default(&p);
		p.given = 0;
		tlbsim_policy_apply_kernel(&p, tlbsim_kernel_find(want[i].v));
		assert_int_equal(p.table_free_one, want[i].one);
		assert_int_equal(p.table_free_users, want[i].users);
		assert_int_equal(p.arm64_pgtable_flush, want[i].hook);
		assert_int_equal(p.x86_range_freed, want[i].range);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_batch_frees_after_grace_period),
		cmocka_unit_test(test_batch_fail_sync_frees_before_flush),
		cmocka_unit_test(test_batch_fail_invalidate_flushes_first),
		cmocka_unit_test(test_users_shortcut_frees_at_once),
		cmocka_unit_test(test_users_shortcut_needs_one_user),
		cmocka_unit_test(test_pgtable_hook_emits_one_vae1is_per_table),
		cmocka_unit_test(test_x86_range_freed_reaches_lazy_cpus),
		cmocka_unit_test(test_presets),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
