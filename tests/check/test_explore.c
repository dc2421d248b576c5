/*
 * test_explore.c - `tlbsim check` as a library: tlbsim_check() over the
 * historical scenarios (src/check/checker.h, src/sim/explore.c).
 *
 * Options are built as the CLI builds them (src/cli/main.c cmd_check):
 * tlbsim_config_init, workload/profile/policy/-w, then
 * check_config_defaults(cfg, false, false); seed 1; time limit 20 s (never
 * reached: every budget here is a schedule count, so results are
 * deterministic). "No violation" cases use runs = 3000 and assert that the
 * whole budget was explored.
 *
 * Rules (kernel-model.md 7.1, 9.4, 9.6; scenarios.c):
 *  - seed 000 (mmap5, nested finish after munmap freed a table): on arm64
 *    nested=prefix and need_flush_all leave a walk-cache entry to the freed
 *    PTE table -> I1; v1, v2, fullmm, keep_bits are correct. On x86 prefix is
 *    clean for the architectural caches; with speculative walks a lazy CPU
 *    keeps paging-structure entries -> I1 mentioning "lazy TLB".
 *  - madv_race (99baac21e458): without the nested check, DONTNEED -> I2 and
 *    FREE -> I3; with it, clean.
 *  - lazy_tables (b956575bed91): lazy CPUs never flushed -> I1; flushed when
 *    tables are freed -> clean.
 *  - every strategy finds the seed-000 bug; dfs is bounded and exhausts
 *    fullmm within preemption bound 2.
 *  - results are deterministic and tokens replay exactly, only against the
 *    configuration they were made for.
 */
#include "test_util.h"

#include <stdio.h>

#include "check/check.h"

#define RUNS_CLEAN 3000

struct spec {
	const char *workload;
	const char *profile;
	const char *policy[3][2];	/* knob, value; NULL-terminated */
	const char *wparam[2];		/* name, value (optional) */
	enum explore_strategy strategy;
	uint64_t runs;
	int want_kind;
	int spec_walks;
};

static void build_opts(const struct spec *sp, struct check_opts *o)
{
	memset(o, 0, sizeof(*o));
	tlbsim_config_init(&o->cfg);
	o->cfg.workload = sp->workload;
	o->cfg.profile = sp->profile;
	for (int i = 0; i < 3 && sp->policy[i][0]; i++) {
		char err[TLBSIM_ERRLEN];
		if (tlbsim_policy_set(&o->cfg.policy, sp->policy[i][0], sp->policy[i][1], err,
				      sizeof(err)))
			fail_msg("policy %s=%s: %s", sp->policy[i][0], sp->policy[i][1], err);
	}
	if (sp->wparam[0]) {
		struct tlbsim_kv *kv = &o->cfg.wparams[o->cfg.nwparams++];
		snprintf(kv->name, sizeof(kv->name), "%s", sp->wparam[0]);
		snprintf(kv->value, sizeof(kv->value), "%s", sp->wparam[1]);
	}
	if (sp->spec_walks) {
		o->cfg.overrides[o->cfg.noverrides].param = P_spec_walks;
		o->cfg.overrides[o->cfg.noverrides].value = 1;
		o->cfg.noverrides++;
	}
	o->cfg.seed = 1;
	o->strategy = sp->strategy;
	o->runs = sp->runs ? sp->runs : 100000;
	o->time_limit_ms = 0;	/* budgets are schedule counts, never host seconds */
	o->depth = sp->strategy == EX_PCT ? 3 : 2;
	o->minimise = true;
	o->want_kind = sp->want_kind;
	check_config_defaults(&o->cfg, false, false);
}

static void run_check(const struct spec *sp, struct check_result *r)
{
	struct check_opts o;
	build_opts(sp, &o);
	char err[TLBSIM_ERRLEN] = "";
	int rc = tlbsim_check(&o, r, err, sizeof(err));
	if (rc)
		fail_msg("tlbsim_check(%s on %s): rc %d: %s", sp->workload, sp->profile, rc, err);
}

static void expect_found(const struct spec *sp, int kind, const char *needle)
{
	struct check_result r;
	run_check(sp, &r);
	if (!r.found)
		fail_msg("%s on %s (%s=%s): no violation in %llu schedules", sp->workload,
			 sp->profile, sp->policy[0][0], sp->policy[0][1],
			 (unsigned long long)r.schedules);
	if (kind >= 0 && r.v.kind != kind)
		fail_msg("%s on %s (%s=%s): want %s, got %s: %s", sp->workload, sp->profile,
			 sp->policy[0][0], sp->policy[0][1], inv_name(kind), inv_name(r.v.kind),
			 r.v.text);
	if (needle && !strstr(r.v.text, needle) && !strstr(r.v.entry, needle))
		fail_msg("violation does not mention '%s': %s / %s", needle, r.v.text, r.v.entry);
	assert_true(strncmp(r.token, "t2.", 3) == 0);
	assert_non_null(r.trace.r);
	assert_true(r.trace.n > 0);
	check_result_free(&r);
}

static void expect_clean(const struct spec *sp)
{
	struct check_result r;
	run_check(sp, &r);
	if (r.found)
		fail_msg("%s on %s (%s=%s): unexpected %s: %s", sp->workload, sp->profile,
			 sp->policy[0][0] ? sp->policy[0][0] : "-",
			 sp->policy[0][1] ? sp->policy[0][1] : "-", inv_name(r.v.kind), r.v.text);
	/* the whole budget was explored (not cut short by the host clock) */
	assert_int_equal(r.schedules, sp->runs);
	assert_false(r.exhausted && sp->strategy != EX_DFS);
	check_result_free(&r);
}

static const char *const arm64_profiles[] = {"falkor-46", "arm64-4k"};

/* ---- seed 000: mmap5 ---- */

static void test_mmap5_prefix_arm64_finds_walk_cache_i1(void **state)
{
	for (int i = 0; i < 2; i++) {
		struct spec sp = {"mmap5", arm64_profiles[i], {{"nested", "prefix"}}, {0},
				  EX_RANDOM, 0, -1, 0};
		struct check_result r;
		run_check(&sp, &r);
		assert_true(r.found);
		assert_int_equal(r.v.kind, INV_I1);
		assert_non_null(strstr(r.v.entry, "walk-cache"));
		assert_non_null(strstr(r.v.text, "page-table frame"));
		/* the cached reference is to the freed table frame itself */
		char want[32];
		snprintf(want, sizeof(want), "table frame %u ", r.v.frame);
		assert_non_null(strstr(r.v.entry, want));
		/* the flush that should have removed it was the nested, leaf-only one */
		assert_non_null(strstr(r.v.flush, "nested tlb_finish_mmu"));
		assert_non_null(strstr(r.v.flush, "VALE1IS"));
		assert_true(r.preemptions >= 1);
		assert_true(r.ndec >= 1);
		check_result_free(&r);
	}
}

static void test_mmap5_fixed_policies_clean(void **state)
{
	static const char *const fixed[] = {"v1", "v2", "fullmm", "keep_bits"};
	for (int i = 0; i < 2; i++)
		for (int k = 0; k < 4; k++) {
			struct spec sp = {"mmap5", arm64_profiles[i], {{"nested", fixed[k]}}, {0},
					  EX_RANDOM, RUNS_CLEAN, -1, 0};
			expect_clean(&sp);
		}
}

static void test_mmap5_need_flush_all_arm64_finds_violation(void **state)
{
	for (int i = 0; i < 2; i++) {
		struct spec sp = {"mmap5", arm64_profiles[i], {{"nested", "need_flush_all"}}, {0},
				  EX_RANDOM, 0, -1, 0};
		expect_found(&sp, -1, NULL);
	}
}

static void test_mmap5_x86_prefix_clean_without_spec_walks(void **state)
{
	struct spec sp = {"mmap5", "x86-24", {{"nested", "prefix"}}, {0}, EX_RANDOM,
			  RUNS_CLEAN, -1, 0};
	expect_clean(&sp);
}

static void test_mmap5_x86_prefix_spec_walks_lazy_i1(void **state)
{
	struct spec sp = {"mmap5", "x86-24", {{"nested", "prefix"}}, {0}, EX_RANDOM, 0, -1, 1};
	expect_found(&sp, INV_I1, "lazy TLB");
}

/* ---- madv_race ---- */

static void test_madv_race_dontneed(void **state)
{
	static const char *const profiles[] = {"x86-24", "falkor-46"};
	for (int i = 0; i < 2; i++) {
		struct spec off = {"madv_race", profiles[i], {{"nested_check", "off"}},
				   {"advice", "dontneed"}, EX_RANDOM, 0, -1, 0};
		expect_found(&off, INV_I2, "MADV_DONTNEED");
		struct spec on = {"madv_race", profiles[i], {{"nested_check", "on"}},
				  {"advice", "dontneed"}, EX_RANDOM, RUNS_CLEAN, -1, 0};
		expect_clean(&on);
	}
}

static void test_madv_race_free(void **state)
{
	static const char *const profiles[] = {"x86-24", "falkor-46"};
	for (int i = 0; i < 2; i++) {
		struct spec off = {"madv_race", profiles[i], {{"nested_check", "off"}},
				   {"advice", "free"}, EX_RANDOM, 0, -1, 0};
		expect_found(&off, INV_I3, "MADV_FREE");
		struct spec on = {"madv_race", profiles[i], {{"nested_check", "on"}},
				  {"advice", "free"}, EX_RANDOM, RUNS_CLEAN, -1, 0};
		expect_clean(&on);
	}
}

/* ---- lazy_tables ---- */


static void test_lazy_tables_never_finds_i1(void **state)
{
	/* its violating schedule has no decisions at all (regression test for
	 * a NULL memcpy source in the minimisation setup) */
	struct spec never = {"lazy_tables", "x86-24", {{"x86_lazy", "never"}}, {0}, EX_RANDOM, 0,
			     -1, 0};
	expect_found(&never, INV_I1, "walk-cache");
}

static void test_lazy_tables_freed_tables_clean(void **state)
{
	struct spec fixed = {"lazy_tables", "x86-24", {{"x86_lazy", "freed_tables"}}, {0},
			     EX_RANDOM, RUNS_CLEAN, -1, 0};
	expect_clean(&fixed);
}

/* ---- --invariant ---- */

static void test_want_kind_livelock(void **state)
{
	struct spec sp = {"mmap5", "falkor-46", {{"nested", "prefix"}}, {0}, EX_RANDOM, 0,
			  INV_LIVELOCK, 0};
	struct check_result r;
	run_check(&sp, &r);
	assert_true(r.found);
	assert_int_equal(r.v.kind, INV_LIVELOCK);
	/* the other invariants fired on the way and were passed over: the trace
	 * holds earlier violation events, the last one is the livelock */
	uint32_t nviol = 0;
	int last = -1;
	for (uint32_t i = 0; i < r.trace.n; i++)
		if (r.trace.r[i].pt->flags & SP_INSTANT) {
			nviol++;
			last = (int)(r.trace.r[i].a & 0xffffu);	/* the invariant; cpu, frame above */
		}
	assert_true(nviol >= 2);
	assert_int_equal(last, INV_LIVELOCK);
	check_result_free(&r);
}

/* ---- strategies ---- */

static void test_each_strategy_finds_seed000(void **state)
{
	static const enum explore_strategy st[] = {EX_RANDOM, EX_PCT, EX_DFS};
	for (int i = 0; i < 2; i++)
		for (int k = 0; k < 3; k++) {
			struct spec sp = {"mmap5", arm64_profiles[i], {{"nested", "prefix"}}, {0},
					  st[k], 20000, -1, 0};
			struct check_result r;
			run_check(&sp, &r);
			if (!r.found)
				fail_msg("strategy %d on %s: nothing in %llu schedules", (int)st[k],
					 arm64_profiles[i], (unsigned long long)r.schedules);
			assert_int_equal(r.v.kind, INV_I1);
			assert_non_null(strstr(r.v.entry, "walk-cache"));
			if (st[k] == EX_DFS)	/* bounded: at most 2 preemptions */
				assert_true(r.preemptions <= 2);
			check_result_free(&r);
		}
}

static void test_dfs_fullmm_exhausts_within_bound(void **state)
{
	struct spec sp = {"mmap5", "falkor-46", {{"nested", "fullmm"}}, {0}, EX_DFS, 10000, -1, 0};
	struct check_result r;
	run_check(&sp, &r);
	assert_false(r.found);
	assert_true(r.exhausted || r.schedules == sp.runs);
	/* mmap5's check instance is small enough for bound 2 */
	assert_true(r.exhausted);
	assert_true(r.schedules < sp.runs);
	check_result_free(&r);
}

/* dfs never explores the same schedule twice: with bound 0 there is exactly
 * one schedule (never preempt). */
static void test_dfs_bound_zero_is_one_schedule(void **state)
{
	struct spec sp = {"mmap5", "falkor-46", {{"nested", "prefix"}}, {0}, EX_DFS, 1000, -1, 0};
	struct check_opts o;
	build_opts(&sp, &o);
	o.depth = 0;
	struct check_result r;
	char err[TLBSIM_ERRLEN];
	assert_int_equal(tlbsim_check(&o, &r, err, sizeof(err)), 0);
	assert_false(r.found);
	assert_true(r.exhausted);
	assert_int_equal(r.schedules, 1);
	check_result_free(&r);
}

/* ---- determinism and replay ---- */

static void test_same_seed_same_counterexample(void **state)
{
	struct spec sp = {"mmap5", "falkor-46", {{"nested", "prefix"}}, {0}, EX_RANDOM, 0, -1, 0};
	struct check_result a, b;
	run_check(&sp, &a);
	run_check(&sp, &b);
	assert_true(a.found && b.found);
	assert_string_equal(a.token, b.token);
	assert_string_equal(a.v.text, b.v.text);
	assert_string_equal(a.v.entry, b.v.entry);
	assert_int_equal(a.schedules, b.schedules);
	assert_int_equal(a.trace.n, b.trace.n);
	assert_memory_equal(a.trace.r, b.trace.r, a.trace.n * sizeof(*a.trace.r));
	check_result_free(&a);
	check_result_free(&b);
}

static void replay_matches(const struct spec *sp)
{
	struct check_result r, p;
	run_check(sp, &r);
	assert_true(r.found);
	struct check_opts o;
	build_opts(sp, &o);
	o.replay = r.token;
	char err[TLBSIM_ERRLEN] = "";
	int rc = tlbsim_check(&o, &p, err, sizeof(err));
	if (rc)
		fail_msg("replay of %s: rc %d: %s", r.token, rc, err);
	assert_true(p.found);
	assert_int_equal(p.schedules, 1);
	assert_int_equal(p.v.kind, r.v.kind);
	assert_int_equal(p.v.cpu, r.v.cpu);
	assert_true(p.v.va == r.v.va);
	assert_int_equal(p.v.frame, r.v.frame);
	assert_string_equal(p.v.text, r.v.text);
	assert_string_equal(p.v.entry, r.v.entry);
	assert_string_equal(p.v.flush, r.v.flush);
	assert_string_equal(p.token, r.token);
	check_result_free(&r);
	check_result_free(&p);
}

static void test_replay_reproduces(void **state)
{
	struct spec a = {"mmap5", "falkor-46", {{"nested", "prefix"}}, {0}, EX_RANDOM, 0, -1, 0};
	replay_matches(&a);
	struct spec b = {"madv_race", "x86-24", {{"nested_check", "off"}}, {"advice", "free"},
			 EX_RANDOM, 0, -1, 0};
	replay_matches(&b);
	struct spec c = {"mmap5", "arm64-4k", {{"nested", "prefix"}}, {0}, EX_PCT, 0, -1, 0};
	replay_matches(&c);
}

static void test_replay_other_config_rejected(void **state)
{
	struct spec sp = {"mmap5", "falkor-46", {{"nested", "prefix"}}, {0}, EX_RANDOM, 0, -1, 0};
	struct check_result r, p;
	run_check(&sp, &r);
	assert_true(r.found);
	static const struct spec others[] = {
		{"mmap5", "falkor-46", {{"nested", "v2"}}, {0}, EX_RANDOM, 0, -1, 0},
		{"mmap5", "falkor-46", {{"nested", "need_flush_all"}}, {0}, EX_RANDOM, 0, -1, 0},
		{"mmap5", "arm64-4k", {{"nested", "prefix"}}, {0}, EX_RANDOM, 0, -1, 0},
		{"mmap5", "falkor-46", {{"nested", "prefix"}}, {"loops", "3"}, EX_RANDOM, 0, -1, 0},
	};
	for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
		struct check_opts o;
		build_opts(&others[i], &o);
		o.replay = r.token;
		char err[TLBSIM_ERRLEN] = "";
		assert_int_equal(tlbsim_check(&o, &p, err, sizeof(err)), TLBSIM_EINVAL);
		assert_non_null(strstr(err, "different configuration"));
		assert_null(strchr(err, '\n'));
	}
	/* another seed is another configuration too */
	struct check_opts o;
	build_opts(&sp, &o);
	o.cfg.seed = 2;
	o.replay = r.token;
	char err[TLBSIM_ERRLEN] = "";
	assert_int_equal(tlbsim_check(&o, &p, err, sizeof(err)), TLBSIM_EINVAL);
	check_result_free(&r);
}

static void test_replay_malformed_token_rejected(void **state)
{
	static const char *const bad[] = {
		"garbage", "", "t1", "t1.", "t1.1234567.0", "t2.12345678.0", "t1.1234567g.0",
		"t1.12345678", "t1.12345678.z", "t1.12345678.-0-", "t1.12345678.-4",
		"t1.12345678.--", "t1.12345678.0 1", "t1.12345678.-x-",
		/* the forms the issue reported as accepted and rewritten */
		"t1.22980109.-1e-1-a-1ffffffff", "t1.22980109.-1e-1-a-ffff-5",
		/* well-formed t2 shapes with a wrong checksum */
		"t2.22980109.-1e-1.00000000", "t2.22980109..00000000",
	};
	struct spec sp = {"mmap5", "falkor-46", {{"nested", "prefix"}}, {0}, EX_RANDOM, 0, -1, 0};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct check_opts o;
		build_opts(&sp, &o);
		o.replay = bad[i];
		struct check_result p;
		char err[TLBSIM_ERRLEN] = "";
		int rc = tlbsim_check(&o, &p, err, sizeof(err));
		if (rc != TLBSIM_EINVAL)
			fail_msg("token '%s': rc %d, want TLBSIM_EINVAL", bad[i], rc);
		assert_true(err[0] != 0);
	}
}

/* token_encode / token_decode: decode(encode(d)) == d for any decision
 * array, including long runs of zeros and values of 35 and more (many
 * runnable threads); an output buffer that is too small is an error. */
static void roundtrip(const uint32_t *d, uint32_t n, uint32_t hash)
{
	static char buf[1 << 16];
	assert_int_equal(token_encode(hash, d, n, buf, sizeof(buf)), 0);
	assert_true(strncmp(buf, "t2.", 3) == 0);
	uint32_t h2 = 0, n2 = 0;
	uint32_t *d2 = NULL;
	assert_int_equal(token_decode(buf, &h2, &d2, &n2), 0);
	assert_int_equal(h2, hash);
	assert_int_equal(n2, n);
	if (n)
		assert_memory_equal(d2, d, n * sizeof(*d));
	free(d2);
}

static void test_token_roundtrip(void **state)
{
	static uint32_t d[16384];
	roundtrip(d, 0, 0);
	roundtrip(d, 0, 0xffffffffu);
	for (int v = 0; v <= 34; v++) {
		d[0] = (uint32_t)v;
		roundtrip(d, 1, (uint32_t)v * 0x01010101u);
	}
	/* every value, each followed by zero runs of length 0..20 */
	uint32_t n = 0;
	for (int v = 0; v <= 34; v++)
		for (int run = 0; run <= 20; run++) {
			d[n++] = (uint32_t)v;
			for (int k = 0; k < run; k++)
				d[n++] = 0;
		}
	assert_true(n <= sizeof(d) / sizeof(d[0]));
	roundtrip(d, n, 0x22980109u);
	/* long zero runs: leading, trailing, in the middle, the whole array */
	memset(d, 0, sizeof(d));
	roundtrip(d, 5000, 1);
	{
		/* zero runs are run-length encoded: 5000 "no preemption"
		 * decisions make a short token, not one digit each */
		char tok[128];
		assert_int_equal(token_encode(1, d, 5000, tok, sizeof(tok)), 0);
		assert_true(strlen(tok) <= 32);
	}
	d[4999] = 34;
	roundtrip(d, 5000, 2);
	d[0] = 1;
	d[2500] = 17;
	roundtrip(d, 5000, 3);
	d[4999] = 0;
	roundtrip(d, 5000, 4);
	/* pseudo-random arrays with mixed runs */
	struct rng g;
	rng_seed(&g, 42);
	for (int rep = 0; rep < 200; rep++) {
		uint32_t len = (uint32_t)rng_below(&g, sizeof(d) / sizeof(d[0]));
		for (uint32_t i = 0; i < len; i++)
			d[i] = rng_below(&g, 4) ? 0 : (uint32_t)rng_below(&g, 35);
		roundtrip(d, len, (uint32_t)rng_next(&g));
	}
	/* large values: escaped, and they round-trip */
	d[0] = 35;
	d[1] = 4095;
	d[2] = 0xffffffffu;
	roundtrip(d, 3, 7);
	/* too long for the buffer */
	char buf[64];
	for (int i = 0; i < 100; i++)
		d[i] = 1;
	assert_int_not_equal(token_encode(0, d, 100, buf, sizeof(buf)), 0);
	/* the exact fit works, one byte less does not */
	char tok[256];
	memset(d, 0, 10 * sizeof(d[0]));
	d[3] = 5;
	assert_int_equal(token_encode(0xabcdef01u, d, 10, tok, sizeof(tok)), 0);
	size_t len = strlen(tok);
	assert_int_equal(token_encode(0xabcdef01u, d, 10, tok, len + 1), 0);
	assert_int_not_equal(token_encode(0xabcdef01u, d, 10, tok, len), 0);
}

/* The t2 spelling (src/check/token.c): digits 0-9a-y, "-<hex>-" for four or
 * more zeros, "z<hex>z" for 35 and up, then a checksum over everything
 * before it. Any edit of a token is rejected: a changed digit or checksum,
 * a truncation, a non-canonical spelling (four zeros as digits, leading
 * zeros, upper-case hex, an escape for a small value). */
static void test_token_t2_forms(void **state)
{
	(void)state;
	const uint32_t d[] = {0, 1, 34, 0, 0, 0, 0, 0, 2, 35};
	char tok[128];
	assert_int_equal(token_encode(0x2a, d, 10, tok, sizeof(tok)), 0);
	assert_int_equal(strncmp(tok, "t2.0000002a.01y-5-2z23z.", 24), 0);
	assert_int_equal(strlen(tok), 24 + 8);
	uint32_t h, n, *out;
	assert_int_equal(token_decode(tok, &h, &out, &n), 0);
	assert_int_equal(h, 0x2a);
	assert_int_equal(n, 10);
	assert_memory_equal(out, d, sizeof(d));
	free(out);
	/* every single-character edit is rejected */
	for (size_t i = 0; i < strlen(tok); i++) {
		char bad[128];
		memcpy(bad, tok, sizeof(tok));
		bad[i] = bad[i] == '1' ? '2' : '1';
		if (token_decode(bad, &h, &out, &n) == 0)
			fail_msg("edited token '%s' accepted", bad);
	}
	/* truncations are rejected */
	for (size_t l = 0; l < strlen(tok); l++) {
		char bad[128];
		memcpy(bad, tok, l);
		bad[l] = 0;
		if (token_decode(bad, &h, &out, &n) == 0)
			fail_msg("truncated token '%s' accepted", bad);
	}
	/* the empty schedule */
	assert_int_equal(token_encode(0x2a, d, 0, tok, sizeof(tok)), 0);
	assert_int_equal(token_decode(tok, &h, &out, &n), 0);
	assert_int_equal(n, 0);
	free(out);
	/* a cap on the decisions: the ten of d pass at 10, fail at 9 (-2,
	 * told apart from a malformed token) */
	assert_int_equal(token_encode(0x2a, d, 10, tok, sizeof(tok)), 0);
	assert_int_equal(token_decode_max(tok, 10, &h, &out, &n), 0);
	assert_int_equal(n, 10);
	free(out);
	out = NULL;
	assert_int_equal(token_decode_max(tok, 9, &h, &out, &n), -2);
	assert_null(out);
	assert_int_equal(token_decode_max("t2.0000002a.zz.00000000", 100, &h, &out, &n), -1);
}

/* A hand-made token with a correct checksum but a non-canonical body is
 * still rejected (the decoder re-encodes and compares). */
static uint32_t fnv(const char *p)
{
	uint32_t h = 2166136261u;
	for (; *p; p++) {
		h ^= (uint8_t)*p;
		h *= 16777619u;
	}
	return h;
}

static void test_token_non_canonical(void **state)
{
	(void)state;
	static const char *const bodies[] = {"0000", "-04-", "-A-", "z22z", "z023z", "-3-", "zz"};
	for (size_t i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++) {
		char head[64], tok[96];
		snprintf(head, sizeof(head), "t2.0000002a.%s", bodies[i]);
		snprintf(tok, sizeof(tok), "%s.%08x", head, fnv(head));
		uint32_t h, n, *out;
		if (token_decode(tok, &h, &out, &n) == 0)
			fail_msg("non-canonical token '%s' accepted", tok);
	}
	/* the canonical spellings of the same schedules are accepted */
	static const char *const good[] = {"-4-", "-a-", "y", "z23z"};
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		char head[64], tok[96];
		snprintf(head, sizeof(head), "t2.0000002a.%s", good[i]);
		snprintf(tok, sizeof(tok), "%s.%08x", head, fnv(head));
		uint32_t h, n, *out;
		if (token_decode(tok, &h, &out, &n) != 0)
			fail_msg("canonical token '%s' rejected", tok);
		free(out);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mmap5_prefix_arm64_finds_walk_cache_i1),
		cmocka_unit_test(test_mmap5_fixed_policies_clean),
		cmocka_unit_test(test_mmap5_need_flush_all_arm64_finds_violation),
		cmocka_unit_test(test_mmap5_x86_prefix_clean_without_spec_walks),
		cmocka_unit_test(test_mmap5_x86_prefix_spec_walks_lazy_i1),
		cmocka_unit_test(test_madv_race_dontneed),
		cmocka_unit_test(test_madv_race_free),
		cmocka_unit_test(test_lazy_tables_never_finds_i1),
		cmocka_unit_test(test_lazy_tables_freed_tables_clean),
		cmocka_unit_test(test_want_kind_livelock),
		cmocka_unit_test(test_each_strategy_finds_seed000),
		cmocka_unit_test(test_dfs_fullmm_exhausts_within_bound),
		cmocka_unit_test(test_dfs_bound_zero_is_one_schedule),
		cmocka_unit_test(test_same_seed_same_counterexample),
		cmocka_unit_test(test_replay_reproduces),
		cmocka_unit_test(test_replay_other_config_rejected),
		cmocka_unit_test(test_replay_malformed_token_rejected),
		cmocka_unit_test(test_token_roundtrip),
		cmocka_unit_test(test_token_t2_forms),
		cmocka_unit_test(test_token_non_canonical),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
