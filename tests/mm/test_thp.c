/*
 * test_thp.c - the THP collapse of a PTE-mapped file range and the GUP-fast
 * walker (src/mm/khugepaged.c: collapse_pte_mapped_thp, mm/khugepaged.c
 * v5.4; tlb_remove_table_sync_one, mm/mmu_gather.c v6.1; gup_fast,
 * mm/gup.c v6.1) and the knobs thp_collapse_range (723a80dafed5) and
 * thp_gup_sync (2ba99c5e0881).
 *
 * Rules:
 *  - a collapse of a 2 MiB-aligned range that one shared file VMA covers
 *    whole and whose present PTEs map the file's pages at their indexes
 *    clears the PMD entry and frees the PTE table; the mappings' page
 *    references are dropped (the page cache keeps its own); the next access
 *    faults the range back in through a new table, to the same page;
 *  - a range the VMA does not cover whole (file or anonymous) is not
 *    collapsed (0) and keeps its table;
 *  - an anonymous range is collapsed by collapse_huge_page: the PMD entry
 *    is cleared and flushed, each page is copied into a new page and freed,
 *    the old PTE table is freed (the model's stand-in for the deposit's
 *    pte_free) and a new table maps the copies dirty and writable; a
 *    zero-page PTE is left none; the flush and sync are as for the file
 *    collapse (one IPI to every other CPU with ipi);
 *  - a page with a reference besides its mapping (a GUP pin) makes
 *    collapse_huge_page fail (isolate's refcount check): 0, and the PMD
 *    entry is put back to the same table;
 *  - retract_page_tables: a file collapse also clears the PMD entry and
 *    frees the PTE table of another mm that maps the range (one sync IPI
 *    per table with ipi); an mm whose mmap_lock is held is skipped
 *    (mmap_write_trylock) and keeps its table;
 *  - anonymous, none: a GUP-fast walk that read the PMD entry before the
 *    collapse cleared it reads the freed table: I1 (software walker); ipi:
 *    the free waits for the walk, which gives the page back (0), clean;
 *  - haddr: the flush covers the collapsed range (no entry of it survives);
 *    end: it covers the next 2 MiB - on a part whose range flush is exact
 *    (arm64 FEAT_TLBIRANGE) the CPU's walk entry to the freed table survives
 *    and the oracle reports I1 at the free; at x86's default ceiling (33)
 *    the 2 MiB range is a full flush and nothing survives; with the ceiling
 *    at 512 the leaf entry of the second page survives;
 *  - the retraction holds the file's i_mmap_rwsem for write (8d3c106e19e8):
 *    a table an rmap walker (i_mmap_rwsem for read) may be walking is not
 *    freed before the walker is done;
 *  - ipi: the collapse sends one IPI to every other CPU before the free,
 *    none without; the sync returns only after a CPU with IRQs off has
 *    enabled them; on x86 only with RCU table freeing (x86_table_free=rcu):
 *    without CONFIG_MMU_GATHER_RCU_TABLE_FREE (native x86 before
 *    a37259732a7d) tlb_remove_table_sync_one is an empty inline;
 *  - GUP-fast gets a mapped page (1) and leaves its refcount as it was, gets
 *    nothing where no PTE table is (0), and runs with IRQs off (on again
 *    after);
 *  - a CPU inside a GUP-fast walk holds off an RCU table free (arm64's
 *    tlb_remove_table: the grace period cannot end while it has IRQs off)
 *    and tlb_remove_table_one's sync (its IPI waits for the walk);
 *  - none: a collapse that frees the PTE table after the walk has read the
 *    PMD entry makes the walk read a freed table: I1 (software walker);
 *    ipi: the free waits for the walk, whose re-check sees the cleared PMD
 *    entry and gives the page back (0), and nothing is reported.
 */
#include "test_util.h"

#define AT 0x40000000ull
#define MB2 (2ull << 20)

struct ctx {
	const char *profile;
	int range, sync, table_free;
	uint64_t maplen;
	bool anon;
	int64_t collapsed, got, got_hole;
	uint32_t frame, frame_after, table;
	uint32_t refcount_after;
	bool pmd_none_after, table_freed, leaf_after, leaf2_after;
	uint64_t ipis;
	bool irqs_in_walk, irqs_after_walk;
	/* races */
	int64_t walk_level_ns;
	uint64_t irq_on_at, sync_done_at;
	bool walker_started;
	struct inode *file;
	bool table_live_at_up_read;
	/* collapse_huge_page */
	bool pin, hole_none_after;
	uint32_t gen_before, table_gen_before, table_gen_after;
	pte_t pmd_before, pmd_after, pte_after;
};

static pte_t pmd_entry(struct sim *s, struct mm_struct *mm, uint64_t va)
{
	struct hw *hw = hw_of(s);
	const struct pt_geom *g = &hw->geom;
	uint32_t t = mm->pgd;
	for (int d = 0; d < g->levels - 2; d++) {
		pte_t e = table_of(hw, t)[pt_index(g, d, va)];
		if (!pte_present(e))
			return 0;
		t = pte_pfn(e);
	}
	return table_of(hw, t)[pt_index(g, g->levels - 2, va)];
}

static struct sim *new_sim(struct ctx *c, int cpus)
{
	struct tlbsim_config cfg;
	tlbsim_config_init(&cfg);
	cfg.policy.thp_collapse_range = (enum thp_collapse_range_policy)c->range;
	cfg.policy.thp_gup_sync = (enum thp_gup_sync_policy)c->sync;
	cfg.policy.x86_table_free = (enum x86_table_free_policy)c->table_free;
	int64_t ov[5];
	int n = 0;
	const char *prof = c->profile;
	if (!strcmp(prof, "x86-24-512")) {	/* x86-24 with the ceiling at 512 */
		prof = "x86-24";
		ov[n++] = P_flush_ceiling;
		ov[n++] = 512;
	}
	if (c->walk_level_ns) {
		ov[n++] = P_walk_level_ns;
		ov[n++] = c->walk_level_ns;
	}
	ov[n] = -1;
	return tsim_new_pol(prof, cpus, &cfg.policy, ov);
}

static void map_and_touch(struct sim *s, struct ctx *c)
{
	uint64_t len = c->maplen ? c->maplen : MB2;
	if (c->anon) {
		assert_true(sys_mmap(s, AT, len, TLBSIM_MAP_PRIVATE) == AT);
	} else {
		struct inode *f = sys_tmpfile(s, &fs_tmpfs, MB2);
		c->file = f;
		assert_true(sys_mmap_file(s, AT, len, TLBSIM_MAP_SHARED, f, 0) == AT);
	}
	assert_int_equal(user_access(s, AT, true), 0);
	assert_int_equal(user_access(s, AT + 4096, false), 0);
	struct mm_struct *mm = current_task(s)->mm;
	c->frame = tsim_pte_frame(s, mm, AT);
	c->table = pte_pfn(pmd_entry(s, mm, AT));
}

static void collapser(struct sim *s, struct sim_thread *t)
{
	struct ctx *c = t->arg;
	struct mm_struct *mm = current_task(s)->mm;
	map_and_touch(s, c);
	c->gen_before = frame_of(hw_of(s), c->frame)->gen;
	c->table_gen_before = frame_of(hw_of(s), c->table)->gen;
	c->pmd_before = pmd_entry(s, mm, AT);
	if (c->pin)
		assert_true(gup_pin(s, AT) >= 0);
	uint64_t ipi0 = s->m.ipi_sent;
	c->collapsed = sys_collapse(s, AT);
	c->pmd_after = pmd_entry(s, mm, AT);
	c->table_gen_after = frame_of(hw_of(s), c->table)->gen;
	if (pte_present(c->pmd_after)) {
		const struct pt_geom *g = &hw_of(s)->geom;
		pte_t *pt = table_of(hw_of(s), pte_pfn(c->pmd_after));
		c->pte_after = pt[pt_index(g, g->levels - 1, AT)];
		c->hole_none_after = pte_none(pt[pt_index(g, g->levels - 1, AT + 4096)]);
	}
	c->ipis = s->m.ipi_sent - ipi0;
	c->pmd_none_after = !pte_present(pmd_entry(s, mm, AT));
	c->table_freed = frame_of(hw_of(s), c->table)->state == FRAME_FREE;
	c->refcount_after = frame_of(hw_of(s), c->frame)->refcount;
	c->leaf_after = tsim_leaf_of(s, 0, AT) != NULL;
	c->leaf2_after = tsim_leaf_of(s, 0, AT + 4096) != NULL;
	if (c->collapsed == 1 && tsim_violation(s)->kind < 0) {
		assert_int_equal(user_access(s, AT, false), 0);
		c->frame_after = tsim_pte_frame(s, mm, AT);
	}
}

static struct sim *run_collapse(struct ctx *c)
{
	struct sim *s = new_sim(c, 4);
	tsim_spawn(s, collapser, c, 0);
	tsim_run(s);
	return s;
}

static void test_collapse_retracts_table(void **state)
{
	(void)state;
	struct ctx c = {.profile = "arm64-v84", .range = THP_COLLAPSE_RANGE_HADDR};
	struct sim *s = run_collapse(&c);
	assert_int_equal(c.collapsed, 1);
	assert_true(c.pmd_none_after);
	assert_true(c.table_freed);
	assert_int_equal(c.refcount_after, 1);		/* the page cache's */
	assert_int_equal(c.frame_after, c.frame);	/* faulted back to the same page */
	assert_int_equal(tsim_violation(s)->kind, -1);
	tsim_free(s);
}

static void test_collapse_not_qualifying(void **state)
{
	(void)state;
	struct ctx c = {.profile = "arm64-v84", .range = THP_COLLAPSE_RANGE_HADDR,
			.maplen = MB2 / 2};
	struct sim *s = run_collapse(&c);
	assert_int_equal(c.collapsed, 0);
	assert_false(c.pmd_none_after);
	assert_false(c.table_freed);
	tsim_free(s);
	struct ctx a = {.profile = "arm64-v84", .range = THP_COLLAPSE_RANGE_HADDR, .anon = true,
			.maplen = MB2 / 2};
	s = run_collapse(&a);
	assert_int_equal(a.collapsed, 0);
	assert_false(a.table_freed);
	tsim_free(s);
}

static void test_collapse_range_arm64(void **state)
{
	(void)state;
	struct ctx c = {.profile = "arm64-v84", .range = THP_COLLAPSE_RANGE_HADDR};
	struct sim *s = run_collapse(&c);
	assert_false(c.leaf_after);
	assert_false(c.leaf2_after);
	assert_int_equal(tsim_violation(s)->kind, -1);
	tsim_free(s);
	struct ctx e = {.profile = "arm64-v84", .range = THP_COLLAPSE_RANGE_END};
	s = run_collapse(&e);
	assert_int_equal(e.collapsed, 1);
	assert_true(e.leaf_after);			/* [AT + 2M, AT + 4M) was flushed */
	assert_int_equal(tsim_violation(s)->kind, INV_I1);
	assert_int_equal(tsim_violation(s)->frame, e.table);
	assert_non_null(strstr(tsim_violation(s)->entry, "walk-cache"));
	tsim_free(s);
}

static void test_collapse_range_x86(void **state)
{
	(void)state;
	/* the default ceiling: 512 pages is a full flush, end is harmless */
	struct ctx d = {.profile = "x86-24", .range = THP_COLLAPSE_RANGE_END};
	struct sim *s = run_collapse(&d);
	assert_false(d.leaf_after);
	assert_false(d.leaf2_after);
	assert_int_equal(tsim_violation(s)->kind, -1);
	tsim_free(s);
	/* ceiling 512: page by page, over the wrong range */
	struct ctx e = {.profile = "x86-24-512", .range = THP_COLLAPSE_RANGE_END};
	s = run_collapse(&e);
	assert_true(e.leaf2_after);
	tsim_free(s);
	struct ctx h = {.profile = "x86-24-512", .range = THP_COLLAPSE_RANGE_HADDR};
	s = run_collapse(&h);
	assert_false(h.leaf_after);
	assert_false(h.leaf2_after);
	assert_int_equal(tsim_violation(s)->kind, -1);
	tsim_free(s);
}

static void test_sync_ipis_x86(void **state)
{
	(void)state;
	uint64_t ipis[2][2];	/* [sync none/ipi][table_free page/rcu] */
	for (int sync = 0; sync < 2; sync++)
		for (int tf = 0; tf < 2; tf++) {
			struct ctx c = {.profile = "x86-24", .range = THP_COLLAPSE_RANGE_HADDR,
					.sync = sync ? THP_GUP_SYNC_IPI : THP_GUP_SYNC_NONE,
					.table_free = tf ? X86_TABLE_FREE_RCU : X86_TABLE_FREE_PAGE};
			struct sim *s = run_collapse(&c);
			assert_int_equal(c.collapsed, 1);
			ipis[sync][tf] = c.ipis;
			tsim_free(s);
		}
	assert_int_equal(ipis[1][0], ipis[0][0]);	/* the empty inline */
	assert_int_equal(ipis[1][1], ipis[0][1] + 3);	/* every other CPU of 4 */
}

static void test_sync_ipis(void **state)
{
	(void)state;
	struct ctx c = {.profile = "arm64-4k", .range = THP_COLLAPSE_RANGE_HADDR,
			.sync = THP_GUP_SYNC_IPI};
	struct sim *s = run_collapse(&c);
	assert_int_equal(c.collapsed, 1);
	assert_int_equal(c.ipis, 3);			/* every other CPU of 4 */
	tsim_free(s);
	struct ctx n = {.profile = "arm64-4k", .range = THP_COLLAPSE_RANGE_HADDR,
			.sync = THP_GUP_SYNC_NONE};
	s = run_collapse(&n);
	assert_int_equal(n.collapsed, 1);
	assert_int_equal(n.ipis, 0);			/* arm64's flush is a TLBI */
	tsim_free(s);
}

/* cpu 1 keeps IRQs off for 50 us; cpu 0's sync must wait for it */
static void irqs_off_50us(struct sim *s, struct sim_thread *t)
{
	struct ctx *c = t->arg;
	local_irq_disable(s);
	c->walker_started = true;
	for (int i = 0; i < 50; i++)
		sim_step(s, YP_USER, 1000);
	c->irq_on_at = s->now + s->curr->pending_ns;
	local_irq_enable(s);
}

static void syncer(struct sim *s, struct sim_thread *t)
{
	struct ctx *c = t->arg;
	TSIM_WAIT_UNTIL(s, c->walker_started);
	tlb_remove_table_sync_one(s);
	c->sync_done_at = s->now + s->curr->pending_ns;
}

static void test_sync_waits_for_irqs_off(void **state)
{
	(void)state;
	struct ctx c = {.profile = "arm64-4k"};
	struct sim *s = new_sim(&c, 2);
	tsim_spawn(s, syncer, &c, 0);
	tsim_spawn(s, irqs_off_50us, &c, 1);
	tsim_run(s);
	assert_true(c.irq_on_at > 0);
	assert_true(c.sync_done_at >= c.irq_on_at);
	tsim_free(s);
}

static void gupper(struct sim *s, struct sim_thread *t)
{
	struct ctx *c = t->arg;
	map_and_touch(s, c);
	uint32_t ref = frame_of(hw_of(s), c->frame)->refcount;
	c->got = gup_fast(s, AT);
	c->irqs_after_walk = cpu_irqs_off(s, cur_cpu(s));
	c->refcount_after = frame_of(hw_of(s), c->frame)->refcount;
	assert_int_equal(c->refcount_after, ref);
	c->got_hole = gup_fast(s, AT + (1ull << 30));	/* no table there */
}

/* while the walk runs, another CPU sees its IRQs off */
static void irq_watcher(struct sim *s, struct sim_thread *t)
{
	struct ctx *c = t->arg;
	for (int i = 0; i < 40000 && !c->irqs_in_walk; i++) {
		c->irqs_in_walk = cpu_irqs_off(s, 0);
		sim_step(s, YP_USER, 10);
	}
}

static void test_gup_fast_basic(void **state)
{
	(void)state;
	struct ctx c = {.profile = "arm64-4k", .walk_level_ns = 2000};
	struct sim *s = new_sim(&c, 2);
	tsim_spawn(s, gupper, &c, 0);
	tsim_spawn(s, irq_watcher, &c, 1);
	tsim_run(s);
	assert_int_equal(c.got, 1);
	assert_int_equal(c.got_hole, 0);
	assert_false(c.irqs_after_walk);
	assert_true(c.irqs_in_walk);
	tsim_free(s);
}

/* cpu 1: a GUP-fast walk whose reads are 50 us apart */
static void walker(struct sim *s, struct sim_thread *t)
{
	struct ctx *c = t->arg;
	TSIM_WAIT_UNTIL(s, c->walker_started);
	c->got = gup_fast(s, AT);
}

/* cpu 0: map and touch, start the walk, collapse after the walk has read
 * the PMD entry (its third read, 150 us in) and before it reads the PTE
 * table (200 us) */
static void racer(struct sim *s, struct sim_thread *t)
{
	struct ctx *c = t->arg;
	map_and_touch(s, c);
	c->walker_started = true;
	sim_step(s, YP_USER, 175000);
	c->collapsed = sys_collapse(s, AT);
}

static struct sim *run_race(struct ctx *c)
{
	struct sim *s = new_sim(c, 2);
	tsim_spawn(s, racer, c, 0);
	tsim_spawn(s, walker, c, 1);
	tsim_run(s);
	return s;
}

static void test_gup_fast_freed_table(void **state)
{
	(void)state;
	struct ctx n = {.profile = "arm64-4k", .range = THP_COLLAPSE_RANGE_HADDR,
			.sync = THP_GUP_SYNC_NONE, .walk_level_ns = 50000};
	struct sim *s = run_race(&n);
	assert_int_equal(n.collapsed, 1);
	assert_int_equal(tsim_violation(s)->kind, INV_I1);
	assert_int_equal(tsim_violation(s)->frame, n.table);
	assert_int_equal(tsim_violation(s)->cpu, 1);
	assert_non_null(strstr(tsim_violation(s)->text, "GUP-fast"));
	assert_non_null(strstr(tsim_violation(s)->flush, "no IPI reached cpu 1"));
	tsim_free(s);
	struct ctx i = {.profile = "arm64-4k", .range = THP_COLLAPSE_RANGE_HADDR,
			.sync = THP_GUP_SYNC_IPI, .walk_level_ns = 50000};
	s = run_race(&i);
	assert_int_equal(i.collapsed, 1);
	assert_int_equal(i.got, 0);		/* the re-check saw the cleared PMD */
	assert_int_equal(tsim_violation(s)->kind, -1);
	tsim_free(s);
}

static void test_collapse_anon(void **state)
{
	(void)state;
	struct ctx c = {.profile = "arm64-4k", .sync = THP_GUP_SYNC_IPI, .anon = true};
	struct sim *s = run_collapse(&c);
	assert_int_equal(c.collapsed, 1);
	/* the old table was freed (its frame may be the new table again) */
	assert_int_not_equal(c.table_gen_after, c.table_gen_before);
	assert_true(pte_present(c.pmd_after));
	assert_true(pte_present(c.pte_after));
	assert_true(c.pte_after & PTE_WRITE);
	assert_true(c.hole_none_after);		/* the zero page's PTE */
	assert_int_not_equal(pte_pfn(c.pte_after), c.frame);	/* a copy */
	assert_int_equal(c.frame_after, pte_pfn(c.pte_after));
	struct frame *nf = frame_of(hw_of(s), c.frame_after);
	assert_int_equal(nf->state, FRAME_DATA);
	assert_true(nf->pgflags & PG_ANON);
	assert_int_equal(nf->refcount, 1);
	assert_int_not_equal(frame_of(hw_of(s), c.frame)->gen, c.gen_before);	/* freed */
	assert_int_equal(c.ipis, 3);
	assert_int_equal(tsim_violation(s)->kind, -1);
	tsim_free(s);
	struct ctx n = {.profile = "arm64-4k", .sync = THP_GUP_SYNC_NONE, .anon = true};
	s = run_collapse(&n);
	assert_int_equal(n.collapsed, 1);
	assert_int_equal(n.ipis, 0);		/* arm64: broadcast TLBI, no sync */
	tsim_free(s);
}

static void test_collapse_anon_pinned(void **state)
{
	(void)state;
	struct ctx c = {.profile = "arm64-4k", .sync = THP_GUP_SYNC_IPI, .anon = true,
			.pin = true};
	struct sim *s = run_collapse(&c);
	assert_int_equal(c.collapsed, 0);
	assert_int_equal(c.pmd_after, c.pmd_before);
	assert_int_equal(c.table_gen_after, c.table_gen_before);
	assert_int_equal(tsim_violation(s)->kind, -1);
	tsim_free(s);
}

static void test_gup_fast_anon_freed_table(void **state)
{
	(void)state;
	struct ctx n = {.profile = "arm64-4k", .sync = THP_GUP_SYNC_NONE, .anon = true,
			.walk_level_ns = 50000};
	struct sim *s = run_race(&n);
	assert_int_equal(n.collapsed, 1);
	assert_int_equal(tsim_violation(s)->kind, INV_I1);
	assert_int_equal(tsim_violation(s)->frame, n.table);
	assert_int_equal(tsim_violation(s)->cpu, 1);
	assert_non_null(strstr(tsim_violation(s)->text, "GUP-fast"));
	tsim_free(s);
	struct ctx i = {.profile = "arm64-4k", .sync = THP_GUP_SYNC_IPI, .anon = true,
			.walk_level_ns = 50000};
	s = run_race(&i);
	assert_int_equal(i.collapsed, 1);
	assert_int_equal(i.got, 0);
	assert_int_equal(tsim_violation(s)->kind, -1);
	tsim_free(s);
}

/* retract_page_tables: two mms map the file range; the first collapses */
struct rctx {
	bool hold;			/* the second mm's mmap_lock is held */
	int sync;
	bool mapped, other_ready, done;
	struct inode *file;
	struct mm_struct *other;
	uint32_t other_table, other_gen_before, other_gen_after;
	bool other_pmd_none_after;
	int64_t collapsed;
	uint64_t ipis;
};

static void retract_first(struct sim *s, struct sim_thread *t)
{
	struct rctx *c = t->arg;
	c->file = sys_tmpfile(s, &fs_tmpfs, MB2);
	assert_true(sys_mmap_file(s, AT, MB2, TLBSIM_MAP_SHARED, c->file, 0) == AT);
	assert_int_equal(user_access(s, AT, false), 0);
	c->mapped = true;
	TSIM_WAIT_UNTIL(s, c->other_ready);
	uint64_t ipi0 = s->m.ipi_sent;
	c->collapsed = sys_collapse(s, AT);
	c->ipis = s->m.ipi_sent - ipi0;
	c->other_pmd_none_after = !pte_present(pmd_entry(s, c->other, AT));
	c->other_gen_after = frame_of(hw_of(s), c->other_table)->gen;
	c->done = true;
}

static void retract_second(struct sim *s, struct sim_thread *t)
{
	struct rctx *c = t->arg;
	struct mm_struct *mm = current_task(s)->mm;
	TSIM_WAIT_UNTIL(s, c->mapped);
	assert_true(sys_mmap_file(s, AT, MB2, TLBSIM_MAP_SHARED, c->file, 0) == AT);
	assert_int_equal(user_access(s, AT, false), 0);
	c->other = mm;
	c->other_table = pte_pfn(pmd_entry(s, mm, AT));
	c->other_gen_before = frame_of(hw_of(s), c->other_table)->gen;
	if (c->hold)
		down_write(s, &mm->mmap_sem);
	c->other_ready = true;
	TSIM_WAIT_UNTIL(s, c->done);
	if (c->hold)
		up_write(s, &mm->mmap_sem);
}

static struct sim *run_retract(struct rctx *c)
{
	struct ctx p = {.profile = "arm64-4k", .sync = c->sync};
	struct sim *s = new_sim(&p, 2);
	tsim_spawn(s, retract_first, c, 0);
	tsim_spawn_mm(s, retract_second, c, mm_alloc(s), 1);
	tsim_run(s);
	return s;
}

static void test_retract_other_mm(void **state)
{
	(void)state;
	struct rctx c = {.sync = THP_GUP_SYNC_IPI};
	struct sim *s = run_retract(&c);
	assert_int_equal(c.collapsed, 1);
	assert_true(c.other_pmd_none_after);
	assert_int_not_equal(c.other_gen_after, c.other_gen_before);	/* freed */
	assert_int_equal(c.ipis, 2);	/* one sync per table, to the other CPU */
	assert_int_equal(tsim_violation(s)->kind, -1);
	tsim_free(s);
	struct rctx n = {.sync = THP_GUP_SYNC_NONE};
	s = run_retract(&n);
	assert_int_equal(n.collapsed, 1);
	assert_true(n.other_pmd_none_after);
	assert_int_equal(n.ipis, 0);
	tsim_free(s);
}

static void test_retract_trylock_busy(void **state)
{
	(void)state;
	struct rctx c = {.sync = THP_GUP_SYNC_IPI, .hold = true};
	struct sim *s = run_retract(&c);
	assert_int_equal(c.collapsed, 1);		/* the caller's own table */
	assert_false(c.other_pmd_none_after);	/* skipped: mmap_lock busy */
	assert_int_equal(c.other_gen_after, c.other_gen_before);
	assert_int_equal(c.ipis, 1);
	assert_int_equal(tsim_violation(s)->kind, -1);
	tsim_free(s);
}

/* cpu 1: an rmap walker holding the file's i_mmap_rwsem for read for 50 us
 * while cpu 0 collapses */
static void rmap_reader(struct sim *s, struct sim_thread *t)
{
	struct ctx *c = t->arg;
	TSIM_WAIT_UNTIL(s, c->walker_started);
	down_read(s, &c->file->i_mmap_rwsem);
	for (int i = 0; i < 50; i++)
		sim_step(s, YP_USER, 1000);
	c->table_live_at_up_read = frame_of(hw_of(s), c->table)->state == FRAME_PGTABLE;
	up_read(s, &c->file->i_mmap_rwsem);
}

static void collapse_after_reader(struct sim *s, struct sim_thread *t)
{
	struct ctx *c = t->arg;
	map_and_touch(s, c);
	c->walker_started = true;
	sim_step(s, YP_USER, 5000);		/* the reader holds the lock by now */
	c->collapsed = sys_collapse(s, AT);
	c->table_freed = frame_of(hw_of(s), c->table)->state == FRAME_FREE;
}

static void test_collapse_takes_i_mmap(void **state)
{
	(void)state;
	struct ctx c = {.profile = "arm64-4k", .range = THP_COLLAPSE_RANGE_HADDR};
	struct sim *s = new_sim(&c, 2);
	tsim_spawn(s, collapse_after_reader, &c, 0);
	tsim_spawn(s, rmap_reader, &c, 1);
	tsim_run(s);
	assert_int_equal(c.collapsed, 1);
	assert_true(c.table_freed);
	assert_true(c.table_live_at_up_read);
	tsim_free(s);
}

/* cpu 1: stands for a GUP-fast walk (IRQs off, counted as a walker) that
 * lasts 3 grace periods once the table was unlinked */
static void long_walk(struct sim *s, struct sim_thread *t)
{
	struct ctx *c = t->arg;
	TSIM_WAIT_UNTIL(s, c->walker_started);
	local_irq_disable(s);
	kernel_of(s)->gup_fast_walkers++;
	uint64_t grace = (uint64_t)P(s, P_rcu_grace_ns);
	for (int i = 0; i < 30; i++)
		sim_step(s, YP_USER, grace / 10);
	c->table_live_at_up_read = frame_of(hw_of(s), c->table)->state == FRAME_PGTABLE;
	c->irq_on_at = s->now + s->curr->pending_ns;
	kernel_of(s)->gup_fast_walkers--;
	local_irq_enable(s);
}

/* cpu 0: map, start the walk, unmap (the tables go to RCU, or are freed
 * one by one when the batch page fails), then wait past the walk */
static void unmapper(struct sim *s, struct sim_thread *t)
{
	struct ctx *c = t->arg;
	map_and_touch(s, c);
	if (c->sync)
		mmu_gather_fail_batches(s, 100);
	c->walker_started = true;
	sim_step(s, YP_USER, 1000);
	assert_int_equal(sys_munmap(s, AT, MB2), 0);
	c->sync_done_at = s->now + s->curr->pending_ns;
	sim_step(s, YP_USER, 5 * (uint64_t)P(s, P_rcu_grace_ns));
	c->table_freed = frame_of(hw_of(s), c->table)->state == FRAME_FREE;
}

static void test_table_free_waits_for_gup_fast(void **state)
{
	(void)state;
	for (int fail = 0; fail < 2; fail++) {
		struct ctx c = {.profile = "arm64-4k", .anon = true, .sync = fail};
		struct sim *s = new_sim(&c, 2);
		tsim_spawn(s, unmapper, &c, 0);
		tsim_spawn(s, long_walk, &c, 1);
		tsim_run(s);
		assert_true(c.table_live_at_up_read);	/* not freed under the walk */
		assert_true(c.table_freed);		/* freed after it */
		if (fail)	/* the sync's IPI waited for the walk */
			assert_true(c.sync_done_at >= c.irq_on_at);
		assert_int_equal(tsim_violation(s)->kind, -1);
		tsim_free(s);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_collapse_retracts_table),
		cmocka_unit_test(test_collapse_not_qualifying),
		cmocka_unit_test(test_collapse_range_arm64),
		cmocka_unit_test(test_collapse_range_x86),
		cmocka_unit_test(test_collapse_takes_i_mmap),
		cmocka_unit_test(test_sync_ipis),
		cmocka_unit_test(test_sync_ipis_x86),
		cmocka_unit_test(test_sync_waits_for_irqs_off),
		cmocka_unit_test(test_gup_fast_basic),
		cmocka_unit_test(test_gup_fast_freed_table),
		cmocka_unit_test(test_collapse_anon),
		cmocka_unit_test(test_collapse_anon_pinned),
		cmocka_unit_test(test_gup_fast_anon_freed_table),
		cmocka_unit_test(test_retract_other_mm),
		cmocka_unit_test(test_retract_trylock_busy),
		cmocka_unit_test(test_table_free_waits_for_gup_fast),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
