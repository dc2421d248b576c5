/*
 * test_arm64_flush.c - the arm64 TLB maintenance back end (src/arch/arm64.c)
 * against kernel-model.md section 3 (with erratum E1) and 9.5.
 *
 * Rules checked (kernel-model sections in brackets):
 *  - __flush_tlb_range [3.4, E1, v5.0+]: MAX_TLBI_OPS = PTRS_PER_PTE
 *    (512 / 2048 / 8192 on 4K / 16K / 64K) with a ">=" test on
 *    (end - start) against MAX_TLBI_OPS * stride: below it, one TLBI per
 *    stride (VALE1IS if last_level, else VAE1IS); at or above it,
 *    flush_tlb_mm = one ASIDE1IS.
 *  - flush_tlb_page = one VALE1IS (leaf only); flush_tlb_mm = one ASIDE1IS
 *    [3.5].
 *  - KPTI doubles every user TLBI (__tlbi_user) [3.1]; REPEAT_TLBI turns each
 *    TLBI into TLBI; DSB ISH; TLBI: twice the TLBIs and one extra DSB per
 *    issued op [3.1, 9.5].
 *  - cost [9.5 + file comment of arm64.c]: a batch of n ops occupies the
 *    shared DVM resource for n * per-op cost, then the issuer waits dsb_ns
 *    for DSB ISH; a batch issued while the resource is busy queues behind it
 *    (metrics.dvm_wait_ns counts the queueing).
 *  - invalidation is broadcast in hardware [3.1]: a TLBI issued on one CPU
 *    removes matching entries from every CPU; VALE1IS leaves walk-cache
 *    entries, VAE1IS removes the ones used for the VA [3.2].
 *
 * Expected numbers are derived from those rules and from parameter values set
 * here through overrides.
 */
#include "test_util.h"

#define H 0x100000000000ull	/* 16 TiB: aligned to every table span */
#define MiB (1ull << 20)

/* Costs used by the timing tests (arbitrary, distinct values). */
#define OP_NS 100
#define ASID_NS 300
#define DSB_NS 1000

struct tdelta {
	uint64_t vale, vae, aside, other, dvm_wait;
};

static struct tdelta tdiff(const struct tlbsim_metrics *a, const struct tlbsim_metrics *b)
{
	struct tdelta d = {
		.vale = b->tlbi.vale1is - a->tlbi.vale1is,
		.vae = b->tlbi.vae1is - a->tlbi.vae1is,
		.aside = b->tlbi.aside1is - a->tlbi.aside1is,
		.other = (b->tlbi.vaale1is + b->tlbi.vmalle1is + b->tlbi.local) -
			 (a->tlbi.vaale1is + a->tlbi.vmalle1is + a->tlbi.local),
		.dvm_wait = b->dvm_wait_ns - a->dvm_wait_ns,
	};
	return d;
}

enum op { OP_RANGE, OP_PAGE, OP_MM };

struct flush_req {
	enum op op;
	uint64_t pages;		/* OP_RANGE: length in strides */
	uint64_t stride;	/* 0: the page size */
	bool last_level;
	uint64_t delay;		/* user time before issuing */
	/* results */
	struct tdelta d;
	uint64_t t0, elapsed;
	int ran;
};

static void flush_thread(struct sim *s, struct sim_thread *t)
{
	struct flush_req *r = t->arg;
	uint64_t stride = r->stride ? r->stride : hw_of(s)->geom.page_size;
	sim_step(s, YP_USER, r->delay);	/* nothing charged is left pending */
	struct tlbsim_metrics m0 = s->m;
	r->t0 = s->now;
	switch (r->op) {
	case OP_RANGE:
		__flush_tlb_range(s, &task_of(t)->mm->context, H, H + r->pages * stride, stride, r->last_level);
		break;
	case OP_PAGE:
		flush_tlb_page(s, &task_of(t)->mm->context, H);
		break;
	case OP_MM:
		flush_tlb_mm(s, &task_of(t)->mm->context);
		break;
	}
	r->elapsed = s->now - r->t0;
	r->d = tdiff(&m0, &s->m);
	r->ran = 1;
}

static struct flush_req run1(const char *profile, const int64_t *ov, struct flush_req r)
{
	struct sim *s = tsim_new_p(profile, 4, NESTED_FULLMM, ov);
	tsim_spawn(s, flush_thread, &r, 1);
	tsim_run(s);
	assert_int_equal(r.ran, 1);
	tsim_free(s);
	return r;
}

static struct flush_req range_req(uint64_t pages, bool last_level)
{
	return (struct flush_req){.op = OP_RANGE, .pages = pages, .last_level = last_level};
}

/* ---- threshold (E1) ---- */

/* PTRS_PER_PTE - 1 pages: below MAX_TLBI_OPS * PAGE_SIZE -> one op per page
 * (VAE1IS for last_level=false, VALE1IS for true); PTRS_PER_PTE pages:
 * ">=" -> one ASIDE1IS. */
static void check_threshold(const char *profile, uint64_t ptrs_per_pte)
{
	for (int last = 0; last <= 1; last++) {
		struct flush_req below = run1(profile, NULL, range_req(ptrs_per_pte - 1, last));
		assert_int_equal(below.d.vale, last ? ptrs_per_pte - 1 : 0);
		assert_int_equal(below.d.vae, last ? 0 : ptrs_per_pte - 1);
		assert_int_equal(below.d.aside, 0);
		assert_int_equal(below.d.other, 0);

		struct flush_req at = run1(profile, NULL, range_req(ptrs_per_pte, last));
		assert_int_equal(at.d.vale, 0);
		assert_int_equal(at.d.vae, 0);
		assert_int_equal(at.d.aside, 1);
		assert_int_equal(at.d.other, 0);
	}
}

static void test_threshold_4k(void **state)
{
	(void)state;
	check_threshold("arm64-4k", 512);
}

static void test_threshold_16k(void **state)
{
	(void)state;
	check_threshold("arm64-16k", 2048);
}

static void test_threshold_64k(void **state)
{
	(void)state;
	check_threshold("falkor-46", 8192);
}

/* The threshold is in strides: with stride = PMD_SIZE (2 MiB on 4K), 16 MiB
 * is 8 ops (kernel-model 3.4 worked example, v1/keep_bits column); 511 PMD strides
 * are 511 ops; 512 PMD strides (1 GiB, the table's "MAX_TLBI_OPS x PMD_SIZE")
 * fall back to ASIDE1IS. A range that is not a multiple of the stride still
 * issues one op per started stride. */
static void test_stride_pmd_4k(void **state)
{
	(void)state;
	const uint64_t pmd = 2 * MiB;
	struct flush_req r = {.op = OP_RANGE, .pages = 8, .stride = pmd};
	r = run1("arm64-4k", NULL, r);
	assert_int_equal(r.d.vae, 16 * MiB / pmd);
	assert_int_equal(r.d.vae, 8);
	assert_int_equal(r.d.vale + r.d.aside + r.d.other, 0);

	r = (struct flush_req){.op = OP_RANGE, .pages = 511, .stride = pmd, .last_level = true};
	r = run1("arm64-4k", NULL, r);
	assert_int_equal(r.d.vale, 511);
	assert_int_equal(r.d.vae + r.d.aside, 0);

	r = (struct flush_req){.op = OP_RANGE, .pages = 512, .stride = pmd};
	r = run1("arm64-4k", NULL, r);
	assert_int_equal(r.d.aside, 1);
	assert_int_equal(r.d.vae + r.d.vale, 0);
}

/* flush_tlb_page = DSB ISHST; TLBI VALE1IS; DSB ISH; flush_tlb_mm = one
 * ASIDE1IS (kernel-model 3.5), on every granule. */
static void test_page_and_mm(void **state)
{
	(void)state;
	const char *profiles[] = {"arm64-4k", "arm64-16k", "falkor-46"};
	for (int i = 0; i < 3; i++) {
		struct flush_req r = run1(profiles[i], NULL, (struct flush_req){.op = OP_PAGE});
		assert_int_equal(r.d.vale, 1);
		assert_int_equal(r.d.vae + r.d.aside + r.d.other, 0);
		r = run1(profiles[i], NULL, (struct flush_req){.op = OP_MM});
		assert_int_equal(r.d.aside, 1);
		assert_int_equal(r.d.vale + r.d.vae + r.d.other, 0);
	}
}

/* ---- KPTI and REPEAT_TLBI ---- */

/* KPTI: every user TLBI is issued for the kernel ASID and its user twin ->
 * twice the count, and twice the DVM occupancy; one DSB ISH per batch. */
static void test_kpti_doubles(void **state)
{
	(void)state;
	const int64_t ov[] = {P_kpti,	     1,	     P_tlbi_op_ns, OP_NS, P_tlbi_asid_ns, ASID_NS,
			      P_dsb_ns,	     DSB_NS, P_lock_op_ns, 0,	  -1};
	struct flush_req r = run1("arm64-4k", ov, range_req(511, false));
	assert_int_equal(r.d.vae, 2 * 511);
	assert_int_equal(r.d.vale + r.d.aside, 0);
	assert_int_equal(r.elapsed, 2 * 511 * OP_NS + DSB_NS);

	r = run1("arm64-4k", ov, range_req(511, true));
	assert_int_equal(r.d.vale, 2 * 511);

	r = run1("arm64-4k", ov, range_req(512, false));
	assert_int_equal(r.d.aside, 2);
	assert_int_equal(r.d.vae + r.d.vale, 0);
	assert_int_equal(r.elapsed, 2 * ASID_NS + DSB_NS);

	r = run1("falkor-46", ov, (struct flush_req){.op = OP_PAGE});
	assert_int_equal(r.d.vale, 2);
	assert_int_equal(r.elapsed, 2 * OP_NS + DSB_NS);

	r = run1("falkor-46", ov, (struct flush_req){.op = OP_MM});
	assert_int_equal(r.d.aside, 2);

	/* 64K: 8191 pages -> 16382 VAE1IS, 8192 -> 2 ASIDE1IS */
	r = run1("falkor-46", ov, range_req(8191, false));
	assert_int_equal(r.d.vae, 2 * 8191);
	r = run1("falkor-46", ov, range_req(8192, false));
	assert_int_equal(r.d.aside, 2);
}

/* REPEAT_TLBI: TLBI; DSB ISH; TLBI per op -> 2 TLBIs and one extra DSB per
 * op. n ops: 2n x op cost on the DVM resource + (1 + n) x dsb_ns. With KPTI
 * as well, each of the 2n user/kernel TLBIs is repeated: 4n TLBIs and
 * 1 + 2n DSBs. */
static void test_repeat_tlbi(void **state)
{
	(void)state;
	const uint64_t n = 37;
	const int64_t ov[] = {P_repeat_tlbi,  1,	P_tlbi_op_ns, OP_NS,  P_tlbi_asid_ns,
			      ASID_NS,	      P_dsb_ns, DSB_NS,	      P_kpti, 0,
			      P_lock_op_ns,   0,	-1};
	struct flush_req r = run1("arm64-4k", ov, range_req(n, false));
	assert_int_equal(r.d.vae, 2 * n);
	assert_int_equal(r.d.vale + r.d.aside, 0);
	assert_int_equal(r.elapsed, 2 * n * OP_NS + (1 + n) * DSB_NS);

	r = run1("arm64-4k", ov, (struct flush_req){.op = OP_PAGE});
	assert_int_equal(r.d.vale, 2);
	assert_int_equal(r.elapsed, 2 * OP_NS + 2 * DSB_NS);

	r = run1("arm64-4k", ov, (struct flush_req){.op = OP_MM});
	assert_int_equal(r.d.aside, 2);
	assert_int_equal(r.elapsed, 2 * ASID_NS + 2 * DSB_NS);

	/* REPEAT_TLBI does not move the range threshold: 512 pages on 4K is
	 * still a single (repeated) ASIDE1IS */
	r = run1("arm64-4k", ov, range_req(512, true));
	assert_int_equal(r.d.aside, 2);
	assert_int_equal(r.d.vale, 0);

	const int64_t ov2[] = {P_repeat_tlbi,  1,	 P_tlbi_op_ns, OP_NS,  P_tlbi_asid_ns,
			       ASID_NS,	       P_dsb_ns, DSB_NS,       P_kpti, 1,
			       P_lock_op_ns,   0,	 -1};
	r = run1("arm64-4k", ov2, range_req(n, true));
	assert_int_equal(r.d.vale, 4 * n);
	assert_int_equal(r.elapsed, 4 * n * OP_NS + (1 + 2 * n) * DSB_NS);
}

/* ---- cost and DVM queueing ---- */

/* Uncontended: a batch of n ops costs the issuer n x tlbi_op_ns (DVM
 * occupancy) + dsb_ns; ASIDE1IS uses tlbi_asid_ns; no DVM wait. */
static void test_cost_uncontended(void **state)
{
	(void)state;
	const int64_t ov[] = {P_tlbi_op_ns, OP_NS,  P_tlbi_asid_ns, ASID_NS,
			      P_dsb_ns,	    DSB_NS, P_lock_op_ns,   0,
			      -1};
	const uint64_t ns[] = {1, 2, 10, 511};
	for (int i = 0; i < 4; i++) {
		struct flush_req r = run1("arm64-4k", ov, range_req(ns[i], i & 1));
		assert_int_equal(r.elapsed, ns[i] * OP_NS + DSB_NS);
		assert_int_equal(r.d.dvm_wait, 0);
	}
	struct flush_req r = run1("arm64-4k", ov, range_req(512, false));
	assert_int_equal(r.elapsed, ASID_NS + DSB_NS);
	r = run1("falkor-46", ov, (struct flush_req){.op = OP_PAGE});
	assert_int_equal(r.elapsed, OP_NS + DSB_NS);
	r = run1("falkor-46", ov, (struct flush_req){.op = OP_MM});
	assert_int_equal(r.elapsed, ASID_NS + DSB_NS);
	assert_int_equal(r.d.dvm_wait, 0);
}

struct pair {
	struct flush_req a, b;
	uint64_t dvm_wait;
};

static struct pair run_pair(uint64_t n_a, uint64_t n_b, uint64_t delay_b)
{
	const int64_t ov[] = {P_tlbi_op_ns, OP_NS,  P_tlbi_asid_ns, ASID_NS,
			      P_dsb_ns,	    DSB_NS, P_lock_op_ns,   0,
			      -1};
	struct pair p = {.a = range_req(n_a, false), .b = range_req(n_b, true)};
	p.b.delay = delay_b;
	struct sim *s = tsim_new_p("arm64-4k", 4, NESTED_FULLMM, ov);
	tsim_spawn(s, flush_thread, &p.a, 0);
	tsim_spawn(s, flush_thread, &p.b, 1);
	tsim_run(s);
	assert_int_equal(p.a.ran + p.b.ran, 2);
	p.dvm_wait = s->m.dvm_wait_ns;
	tsim_free(s);
	return p;
}

/* Two CPUs issue equal batches of n at the same instant: the DVM resource
 * serialises them, so one of them waits n x tlbi_op_ns for the other's
 * occupancy: elapsed n*op + dsb and 2n*op + dsb; dvm_wait_ns == n*op. */
static void test_dvm_queueing_same_instant(void **state)
{
	(void)state;
	const uint64_t n = 10;
	struct pair p = run_pair(n, n, 0);
	assert_int_equal(p.a.t0, p.b.t0);
	uint64_t lo = p.a.elapsed < p.b.elapsed ? p.a.elapsed : p.b.elapsed;
	uint64_t hi = p.a.elapsed < p.b.elapsed ? p.b.elapsed : p.a.elapsed;
	assert_int_equal(lo, n * OP_NS + DSB_NS);
	assert_int_equal(hi, 2 * n * OP_NS + DSB_NS);
	assert_int_equal(p.dvm_wait, n * OP_NS);
}

/* Partial overlap: B issues d ns after A's batch of n started, d < n*op:
 * B queues for the rest of A's occupancy, n*op - d. Issued after A's
 * occupancy ended: no wait. */
static void test_dvm_queueing_overlap(void **state)
{
	(void)state;
	const uint64_t n = 10, m = 4, d = 250;
	struct pair p = run_pair(n, m, d);
	assert_int_equal(p.b.t0, p.a.t0 + d);
	assert_int_equal(p.a.elapsed, n * OP_NS + DSB_NS);
	assert_int_equal(p.b.elapsed, (n * OP_NS - d) + m * OP_NS + DSB_NS);
	assert_int_equal(p.dvm_wait, n * OP_NS - d);

	p = run_pair(n, m, n * OP_NS);	/* A's occupancy has just ended */
	assert_int_equal(p.a.elapsed, n * OP_NS + DSB_NS);
	assert_int_equal(p.b.elapsed, m * OP_NS + DSB_NS);
	assert_int_equal(p.dvm_wait, 0);
}

static struct pair run_pair_occ(uint64_t n_a, uint64_t n_b, int64_t occ_pct)
{
	const int64_t ov[] = {P_tlbi_op_ns, OP_NS,  P_tlbi_asid_ns, ASID_NS, P_dsb_ns, DSB_NS,
			      P_lock_op_ns, 0,	    P_dvm_occupancy_pct, occ_pct, -1};
	struct pair p = {.a = range_req(n_a, false), .b = range_req(n_b, true)};
	struct sim *s = tsim_new_p("arm64-4k", 4, NESTED_FULLMM, ov);
	tsim_spawn(s, flush_thread, &p.a, 0);
	tsim_spawn(s, flush_thread, &p.b, 1);
	tsim_run(s);
	p.dvm_wait = s->m.dvm_wait_ns;
	tsim_free(s);
	return p;
}

/* dvm_occupancy_pct: the shared path is held for that share of each op's
 * issuer latency. Two equal batches at the same instant: the second waits
 * n x op x pct / 100; each issuer still takes n x op + dsb once started. */
static void test_dvm_occupancy_split(void **state)
{
	(void)state;
	const uint64_t n = 10;
	for (int64_t pct = 0; pct <= 100; pct += 50) {
		struct pair p = run_pair_occ(n, n, pct);
		uint64_t wait = n * OP_NS * (uint64_t)pct / 100;
		assert_int_equal(p.dvm_wait, wait);
		uint64_t lo = p.a.elapsed < p.b.elapsed ? p.a.elapsed : p.b.elapsed;
		uint64_t hi = p.a.elapsed < p.b.elapsed ? p.b.elapsed : p.a.elapsed;
		assert_int_equal(lo, n * OP_NS + DSB_NS);
		assert_int_equal(hi, wait + n * OP_NS + DSB_NS);
	}
}

struct recv {
	struct flush_req f;
	uint64_t busy_end, idle_sys;
};

static void recv_busy(struct sim *s, struct sim_thread *t)
{
	struct recv *r = t->arg;
	sim_step(s, YP_USER, 100000);	/* running while the other CPU flushes */
	sim_step(s, YP_USER, 1);	/* stolen time elapses at the next yield */
	r->busy_end = s->now;
}

/* tlbi_recv_ns: a running CPU loses that much per broadcast op it receives
 * (its thread ends later by n x recv); an idle CPU is not charged. */
static void test_tlbi_recv_cost(void **state)
{
	(void)state;
	const uint64_t n = 10, recv_ns = 7;
	uint64_t end[2];
	for (int with = 0; with < 2; with++) {
		const int64_t ov[] = {P_tlbi_op_ns, OP_NS, P_dsb_ns, DSB_NS, P_lock_op_ns, 0,
				      P_tlbi_recv_ns, with ? (int64_t)recv_ns : 0, -1};
		struct recv r = {.f = range_req(n, false)};
		struct sim *s = tsim_new_p("arm64-4k", 4, NESTED_FULLMM, ov);
		tsim_spawn(s, flush_thread, &r.f, 0);
		tsim_spawn(s, recv_busy, &r, 1);
		tsim_run(s);
		end[with] = r.busy_end;
		/* CPUs 2 and 3 stayed idle: no time charged */
		assert_int_equal(s->cpus[2].sys_ns + s->cpus[3].sys_ns, 0);
		tsim_free(s);
	}
	assert_int_equal(end[1], end[0] + n * recv_ns);
}

struct recv_bp {
	struct flush_req f;
	struct recv r;
};

/* tlbi_recv_ns, back-pressure: the issuer's DSB ISH completes only once
 * every running CPU has handled the ops it received, one after another from
 * the batch's start. With n x recv above the issuer's own n x op + dsb the
 * issuer takes n x recv; below it, its own latency; the receiver loses
 * n x recv either way. */
static void test_tlbi_recv_backpressure(void **state)
{
	(void)state;
	const uint64_t n = 10;
	const uint64_t recvs[] = {0, 7, 1000};
	uint64_t base_end = 0;
	for (int i = 0; i < 3; i++) {
		const int64_t ov[] = {P_tlbi_op_ns, OP_NS, P_dsb_ns, DSB_NS, P_lock_op_ns, 0,
				      P_tlbi_recv_ns, (int64_t)recvs[i], -1};
		struct recv_bp b = {.f = range_req(n, false), .r = {.f = range_req(1, false)}};
		struct sim *s = tsim_new_p("arm64-4k", 4, NESTED_FULLMM, ov);
		tsim_spawn(s, flush_thread, &b.f, 0);
		tsim_spawn(s, recv_busy, &b.r, 1);
		tsim_run(s);
		uint64_t own = n * OP_NS + DSB_NS, handled = n * recvs[i];
		assert_int_equal(b.f.elapsed, own > handled ? own : handled);
		if (i == 0)
			base_end = b.r.busy_end;
		assert_int_equal(b.r.busy_end, base_end + handled);
		tsim_free(s);
	}
}

/* ---- broadcast ---- */

struct bcast {
	uint64_t va0, va1;
	int ran;
	struct sim_thread *flusher;
	enum { B_PAGE, B_RANGE_ALL } what;
};

static bool leaf_cached(struct sim *s, int cpu, uint64_t va, uint32_t asid)
{
	const struct pt_geom *g = &hw_of(s)->geom;
	return tc_lookup(&hw_of(s)->cpu[cpu].tlb, va >> g->page_shift, g->levels - 1, asid) != NULL;
}

/* the walk-cache entry for the table that holds va's PTE */
static bool walk_cached(struct sim *s, int cpu, uint64_t va, uint32_t asid)
{
	const struct pt_geom *g = &hw_of(s)->geom;
	int d = g->levels - 2;
	return tc_lookup(&hw_of(s)->cpu[cpu].wc, va >> g->shift[d], d, asid) != NULL;
}

static void reader_thread(struct sim *s, struct sim_thread *t)
{
	struct bcast *b = t->arg;
	assert_int_equal(user_access(s, b->va0, false), 0);
	assert_int_equal(user_access(s, b->va1, false), 0);
}

static void flusher_thread(struct sim *s, struct sim_thread *t)
{
	struct bcast *b = t->arg;
	uint64_t ps = hw_of(s)->geom.page_size;
	if (b->what == B_PAGE)
		flush_tlb_page(s, &task_of(t)->mm->context, b->va0);
	else
		__flush_tlb_range(s, &task_of(t)->mm->context, b->va1, b->va1 + ps, ps, false);
}

static void bcast_main(struct sim *s, struct sim_thread *t)
{
	struct bcast *b = t->arg;
	struct mm_struct *mm = task_of(t)->mm;
	uint64_t ps = hw_of(s)->geom.page_size;
	assert_true(sys_mmap(s, H, 2 * ps, TLBSIM_MAP_PRIVATE) == H);
	b->va0 = H;
	b->va1 = H + ps;
	assert_int_equal(user_access(s, b->va0, true), 0);
	assert_int_equal(user_access(s, b->va1, true), 0);
	tsim_spawn(s, reader_thread, b, 2);
	tsim_spawn(s, reader_thread, b, 3);
	sim_step(s, YP_USER, 1000000);	/* both readers have run and exited */

	const int have[] = {0, 2, 3};
	for (int i = 0; i < 3; i++) {
		assert_true(leaf_cached(s, have[i], b->va0, mm->context.asid));
		assert_true(leaf_cached(s, have[i], b->va1, mm->context.asid));
		assert_true(walk_cached(s, have[i], b->va0, mm->context.asid));
	}
	assert_false(leaf_cached(s, 1, b->va0, mm->context.asid));

	/* VALE1IS from CPU 1: the leaf for va0 goes on every CPU; the other
	 * page's leaf and the walk-cache entries stay (leaf only) */
	struct tlbsim_metrics m0 = s->m;
	b->what = B_PAGE;
	sim_join(s, tsim_spawn(s, flusher_thread, b, 1));
	struct tdelta d = tdiff(&m0, &s->m);
	assert_int_equal(d.vale, 1);
	for (int i = 0; i < 3; i++) {
		assert_false(leaf_cached(s, have[i], b->va0, mm->context.asid));
		assert_true(leaf_cached(s, have[i], b->va1, mm->context.asid));
		assert_true(walk_cached(s, have[i], b->va1, mm->context.asid));
	}

	/* VAE1IS for va1 from CPU 1: its leaf and the walk-cache entries used
	 * to translate it go on every CPU */
	m0 = s->m;
	b->what = B_RANGE_ALL;
	sim_join(s, tsim_spawn(s, flusher_thread, b, 1));
	d = tdiff(&m0, &s->m);
	assert_int_equal(d.vae, 1);
	for (int i = 0; i < 3; i++) {
		assert_false(leaf_cached(s, have[i], b->va1, mm->context.asid));
		assert_false(walk_cached(s, have[i], b->va1, mm->context.asid));
	}
	b->ran = 1;
}

static void test_broadcast(void **state)
{
	(void)state;
	const char *profiles[] = {"arm64-4k", "falkor-46"};
	for (int i = 0; i < 2; i++) {
		struct bcast b = {0};
		struct sim *s = tsim_new(profiles[i], 4, NESTED_FULLMM);
		tsim_spawn(s, bcast_main, &b, 0);
		tsim_run(s);
		assert_int_equal(b.ran, 1);
		assert_int_equal(s->m.violations, 0);
		tsim_free(s);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_threshold_4k),
		cmocka_unit_test(test_threshold_16k),
		cmocka_unit_test(test_threshold_64k),
		cmocka_unit_test(test_stride_pmd_4k),
		cmocka_unit_test(test_page_and_mm),
		cmocka_unit_test(test_kpti_doubles),
		cmocka_unit_test(test_repeat_tlbi),
		cmocka_unit_test(test_cost_uncontended),
		cmocka_unit_test(test_dvm_queueing_same_instant),
		cmocka_unit_test(test_dvm_queueing_overlap),
		cmocka_unit_test(test_dvm_occupancy_split),
		cmocka_unit_test(test_tlbi_recv_cost),
		cmocka_unit_test(test_tlbi_recv_backpressure),
		cmocka_unit_test(test_broadcast),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
