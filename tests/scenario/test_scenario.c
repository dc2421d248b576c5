/*
 * test_scenario.c - the scenario language (src/scenario/, docs/scenarios.md).
 *
 * Rules:
 *  - a file compiles once into a flat op array whose size grows with the
 *    text, not with the loop counts it runs (no syntax tree is walked);
 *  - repeat N runs its body N times; for i in A..B runs B-A times with i
 *    from A; if/else take one branch; arithmetic, units (`pages`, K/M/G
 *    suffixes) and built-ins (iters, threads, page_size) have their values;
 *    a result outside int64 stops the run with its place;
 *  - parameters take their defaults, and -w values override them; a word
 *    parameter only accepts the words it is used as;
 *  - `wait E` does not return before a `signal E` (the schedule is
 *    constrained whatever the seed);
 *  - spawn/join: every spawned thread has run to its end after `join all`;
 *    `spawn T(x)` gives the thread `arg` = x;
 *  - errors are reported as FILE:LINE:COL, several per file, and no program
 *    is returned;
 *  - the kernel calls: vmalloc(len) returns a kernel address; kload(a) is 0
 *    on a mapped kernel page and -1 elsewhere; vfree(a) is 0 on a live area
 *    and -1 otherwise (twice, or not an area); vpurge() is 0 and releases
 *    the lazy VAs, so the next vmalloc of the size gets the freed VA back;
 *    a vmalloc over 1 GiB stops the run with an error.
 */
#define _XOPEN_SOURCE 700
#include "test_util.h"
#include "scenario/scenario.h"

static struct scenario *compile_ok(const char *text)
{
	int nerr = -1;
	struct scenario *sc = scenario_compile("t.tlbs", text, strlen(text), stderr, &nerr);
	if (!sc)
		fail_msg("did not compile (%d errors)", nerr);
	assert_int_equal(nerr, 0);
	return sc;
}

/* run sc with -w pairs (NULL-terminated) on seed; the metrics */
static int run_sc(struct scenario *sc, uint64_t seed, const char *const *w,
		  struct tlbsim_metrics *m, char *err, size_t errlen)
{
	struct tlbsim_config cfg;
	tlbsim_config_init(&cfg);
	cfg.workload = "t.tlbs";
	cfg.workload_def = scenario_desc(sc);
	cfg.seed = seed;
	for (int i = 0; w && w[i]; i += 2) {
		int k = cfg.nwparams++;
		snprintf(cfg.wparams[k].name, sizeof(cfg.wparams[k].name), "%s", w[i]);
		snprintf(cfg.wparams[k].value, sizeof(cfg.wparams[k].value), "%s", w[i + 1]);
	}
	tlbsim_policy_apply_desc(&cfg.policy, cfg.workload_def);
	struct tlbsim_resolved res;
	return tlbsim_run(&cfg, &res, m, err, errlen);
}

static uint64_t ops_of(const char *text, const char *const *w)
{
	struct scenario *sc = compile_ok(text);
	struct tlbsim_metrics m;
	char err[TLBSIM_ERRLEN];
	if (run_sc(sc, 1, w, &m, err, sizeof(err)))
		fail_msg("run: %s", err);
	scenario_free(sc);
	return m.ops;
}

static void test_loops_are_not_unrolled(void **state)
{
	(void)state;
	struct scenario *a = compile_ok("main {\n repeat 3 { op }\n}\n");
	struct scenario *b = compile_ok("main {\n repeat 3000000 { op }\n}\n");
	assert_int_equal(scenario_nops(a), scenario_nops(b));
	assert_true(scenario_nops(a) < 16);
	scenario_free(a);
	scenario_free(b);
}

static void test_loops_and_arithmetic(void **state)
{
	(void)state;
	assert_int_equal(ops_of("main { repeat 7 { op } }\n", NULL), 7);
	assert_int_equal(ops_of("main { repeat 0 { op } }\n", NULL), 0);
	/* for: B-A iterations, i from A */
	assert_int_equal(ops_of("main {\n for i in 2..6 { repeat i { op } }\n}\n", NULL),
			 2 + 3 + 4 + 5);
	assert_int_equal(ops_of("main {\n x = (3 + 4) * 2 - 10 / 5 % 3\n repeat x { op }\n}\n",
				NULL), 12);
	assert_int_equal(ops_of("main {\n if 2 > 1 && !(1 == 2) { op } else { op; op }\n}\n",
				NULL), 1);
	assert_int_equal(ops_of("main {\n if 0 { op } else if 1 { op; op } else { op }\n}\n",
				NULL), 2);
	/* units: 2 pages on the 64 KiB granule of falkor-46; 1M is 2^20 */
	assert_int_equal(ops_of("profile falkor-46\nmain { repeat 2 pages / 65536 { op } }\n",
				NULL), 2);
	assert_int_equal(ops_of("main { repeat 1M / 1K { op } }\n", NULL), 1024);
	assert_int_equal(ops_of("iters 5\nmain { repeat iters { op } }\n", NULL), 5);
	assert_int_equal(ops_of("profile x86-24\nmain { repeat page_size / 4096 { op } }\n",
				NULL), 1);
	/* values are int64: a result out of range stops the run with its place,
	 * for + - * and unary minus as for / and % (they wrapped around) */
	static const char *const ovf[] = {
		"main {\n x = 9223372036854775807 + 1\n}\n",
		"main {\n x = 0 - 9223372036854775807 - 2\n}\n",
		"main {\n x = 16T * 1T\n}\n",
		"main {\n x = 0 - 9223372036854775807 - 1\n y = -x\n}\n",
		"main {\n x = 9223372036854775807 / 0\n}\n",
	};
	for (size_t i = 0; i < sizeof(ovf) / sizeof(ovf[0]); i++) {
		struct scenario *sc = compile_ok(ovf[i]);
		struct tlbsim_metrics m;
		char err[TLBSIM_ERRLEN];
		assert_int_equal(run_sc(sc, 1, NULL, &m, err, sizeof(err)), TLBSIM_EINVAL);
		if (!strstr(err, i == 4 ? "division by zero" : "arithmetic overflow") ||
		    strncmp(err, "t.tlbs:", 7) != 0)
			fail_msg("%s: error '%s'", ovf[i], err);
		scenario_free(sc);
	}
	/* time_limit takes decimals as --time-limit does (ms, rounded up) */
	struct scenario *tl = compile_ok("time_limit 0.25\nmain { op }\n");
	assert_int_equal(scenario_time_limit_ms(tl), 250);
	scenario_free(tl);
	tl = compile_ok("time_limit 2\nmain { op }\n");
	assert_int_equal(scenario_time_limit_ms(tl), 2000);
	scenario_free(tl);
	/* the largest and smallest values themselves are fine */
	assert_int_equal(ops_of("main {\n x = 9223372036854775806 + 1\n y = 0 - x - 1\n"
				" if x > 0 && y < 0 { op }\n}\n", NULL), 1);
}

static void test_kernel_calls(void **state)
{
	(void)state;
	const char *f = "profile x86-24\nvar k\nvar j\nmain {\n"
			" k = vmalloc(2 pages)\n"
			" if k < 0 { op }\n"			/* bit 63: a kernel address */
			" if kload(k) == 0 && kload(k + 1 page) == 0 { op }\n"
			" if kload(k + 2 pages) == -1 { op }\n"	/* the guard page */
			" if kload(4096) == -1 { op }\n"
			" if vfree(k + 1 page) == -1 { op }\n"	/* not an area's start */
			" if vfree(k) == 0 { op }\n"
			" if vfree(k) == -1 && kload(k) == -1 { op }\n"
			" if vpurge() == 0 { op }\n"
			" j = vmalloc(2 pages)\n"
			" if j == k { op }\n"
			"}\n";
	assert_int_equal(ops_of(f, NULL), 9);
	/* without the purge the lazy VA is not handed out again */
	const char *g = "profile x86-24\nvar k\nmain {\n k = vmalloc(1 page)\n vfree(k)\n"
			" if vmalloc(1 page) != k { op }\n}\n";
	assert_int_equal(ops_of(g, NULL), 1);
	/* vmalloc allocates its pages at once: more than 1 GiB is refused */
	struct scenario *sc = compile_ok("var k\nmain {\n k = vmalloc(2G)\n op\n}\n");
	struct tlbsim_metrics m;
	char err[TLBSIM_ERRLEN];
	assert_int_not_equal(run_sc(sc, 1, NULL, &m, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "vmalloc length"));
	scenario_free(sc);
}

static void test_params_and_words(void **state)
{
	(void)state;
	const char *f = "param n = 3\nparam how = dontneed\n"
			"main {\n p = mmap(0, 4 pages, private)\n touch(p, 4 pages)\n"
			" madvise(p, 4 pages, how)\n if how == free { op }\n repeat n { op }\n}\n";
	assert_int_equal(ops_of(f, NULL), 3);
	const char *const w[] = {"n", "5", "how", "free", NULL};
	assert_int_equal(ops_of(f, w), 6);
	/* a word the parameter is never used as is refused at setup */
	struct scenario *sc = compile_ok(f);
	struct tlbsim_metrics m;
	char err[TLBSIM_ERRLEN];
	const char *const bad[] = {"how", "shared", NULL};
	assert_int_equal(run_sc(sc, 1, bad, &m, err, sizeof(err)), TLBSIM_EINVAL);
	assert_non_null(strstr(err, "how=shared"));
	assert_non_null(strstr(err, "dontneed or free"));
	const char *const badn[] = {"n", "lots", NULL};
	assert_int_equal(run_sc(sc, 1, badn, &m, err, sizeof(err)), TLBSIM_EINVAL);
	scenario_free(sc);
}

/* the thread counts its op only if it sees flag set: without the wait it
 * would run before main sets it on some seeds */
static void test_signal_wait_orders(void **state)
{
	(void)state;
	const char *with = "var flag\nmain {\n spawn t\n compute 1 ms\n flag = 1\n signal go\n"
			   " join all\n}\nthread t {\n wait go\n if flag == 1 { op }\n}\n";
	const char *without = "var flag\nmain {\n spawn t\n compute 1 ms\n flag = 1\n"
			      " join all\n}\nthread t {\n if flag == 1 { op }\n}\n";
	struct scenario *a = compile_ok(with), *b = compile_ok(without);
	int unordered = 0;
	for (uint64_t seed = 1; seed <= 20; seed++) {
		struct tlbsim_metrics m;
		char err[TLBSIM_ERRLEN];
		assert_int_equal(run_sc(a, seed, NULL, &m, err, sizeof(err)), 0);
		assert_int_equal(m.ops, 1);
		assert_int_equal(run_sc(b, seed, NULL, &m, err, sizeof(err)), 0);
		unordered += m.ops == 0;
	}
	assert_true(unordered > 0);	/* the test can fail: the wait matters */
	scenario_free(a);
	scenario_free(b);
}

static void test_spawn_join_arg(void **state)
{
	(void)state;
	/* each thread does `arg` ops: 1+2+3+4 after join all */
	assert_int_equal(ops_of("main {\n for i in 1..5 { spawn t(i) }\n join all\n}\n"
				"thread t { repeat arg { op } }\n", NULL), 10);
	assert_int_equal(ops_of("main {\n spawn t(3) on 1 as h\n join h\n op\n}\n"
				"thread t { repeat arg { op } }\n", NULL), 4);
	/* a process: its own mm, the same ops counter */
	assert_int_equal(ops_of("main {\n fork p\n join all\n}\n"
				"process p { a = mmap(0, 1 page, private); store(a); op }\n", NULL), 1);
}

/* Tasks of the file that wait or join forever are the file's deadlock: a bad
 * input (TLBSIM_EINVAL, exit 2) naming each sleeper's task, place and wait;
 * a run whose tasks all end is no deadlock. Run-time errors name the
 * statement's place. */
static void test_deadlock_names_the_waits(void **state)
{
	(void)state;
	struct scenario *sc = compile_ok("main {\n spawn t\n spawn u(1)\n join all\n}\n"
					 "thread t {\n wait go\n}\n"
					 "thread u {\n wait done\n signal go\n}\n");
	struct tlbsim_metrics m;
	char err[TLBSIM_ERRLEN];
	assert_int_equal(run_sc(sc, 1, NULL, &m, err, sizeof(err)), TLBSIM_EINVAL);
	assert_non_null(strstr(err, "deadlock: 3 simulated threads asleep forever: "));
	assert_non_null(strstr(err, "t at t.tlbs:7:2 (wait go)"));
	assert_non_null(strstr(err, "u at t.tlbs:10:2 (wait done)"));
	assert_non_null(strstr(err, "main at t.tlbs:4:2 (join all)"));
	scenario_free(sc);
	/* run-time errors of statements whose op follows their argument point
	 * at the statement, not past it */
	static const char *const place_cases[][2] = {
		{"main {\n    compute 2000000000\n}\n", "t.tlbs:2:5: compute: want"},
		{"main {\n    repeat 2000000000 {\n        op\n    }\n}\n",
		 "t.tlbs:2:5: repeat count over"},
		{"main {\n    for i in 0..2000000000 {\n        op\n    }\n}\n",
		 "t.tlbs:2:5: for range over"},
	};
	for (size_t i = 0; i < sizeof(place_cases) / sizeof(place_cases[0]); i++) {
		struct scenario *p = compile_ok(place_cases[i][0]);
		assert_int_equal(run_sc(p, 1, NULL, &m, err, sizeof(err)), TLBSIM_EINVAL);
		if (!strstr(err, place_cases[i][1]))
			fail_msg("error '%s', want '%s'", err, place_cases[i][1]);
		scenario_free(p);
	}
	/* the same tasks with the missing signal: they all end */
	sc = compile_ok("main {\n spawn t\n spawn u(1)\n signal done\n join all\n}\n"
			"thread t {\n wait go\n}\nthread u {\n wait done\n signal go\n}\n");
	assert_int_equal(run_sc(sc, 1, NULL, &m, err, sizeof(err)), 0);
	scenario_free(sc);
}

static void test_errors(void **state)
{
	(void)state;
	const char *bad = "profile nosuch\nparam x = 1\nmain {\n y = x +\n bogus 3\n z = nope\n"
			  " spawn ghost\n}\n";
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int nerr = 0;
	struct scenario *sc = scenario_compile("bad.tlbs", bad, strlen(bad), f, &nerr);
	fclose(f);
	assert_null(sc);
	assert_true(nerr >= 4);
	assert_non_null(strstr(buf, "bad.tlbs:1:9: unknown profile 'nosuch'"));
	assert_non_null(strstr(buf, "bad.tlbs:4:9: expected a value, found end of line"));
	assert_non_null(strstr(buf, "bad.tlbs:5:2: unknown statement 'bogus'"));
	assert_non_null(strstr(buf, "bad.tlbs:6:6: unknown name 'nope'"));
	assert_non_null(strstr(buf, "bad.tlbs:7:8: no thread or process named 'ghost'"));
	free(buf);
	/* the cap */
	char many[4096] = "main {\n";
	for (int i = 0; i < 30; i++)
		strcat(many, " nosuch\n");
	strcat(many, "}\n");
	sc = scenario_compile("m.tlbs", many, strlen(many), NULL, &nerr);
	assert_null(sc);
	assert_int_equal(nerr, SCEN_MAX_ERRORS);
	/* names: the 4000 variables import strace may declare (a real
	 * program's trace holds about a thousand mappings at once) compile
	 * beside the built-in names; SCEN_MAX_NAMES + 1 do not */
	for (int extra = 0; extra <= 1; extra++) {
		int nv = extra ? SCEN_MAX_NAMES + 1 : 4000;
		size_t cap = (size_t)(SCEN_MAX_NAMES + 1) * 16 + 64, o = 0;
		char *names = malloc(cap);
		assert_non_null(names);
		for (int i = 0; i < nv; i++)
			o += (size_t)snprintf(names + o, cap - o, "var v%d\n", i);
		snprintf(names + o, cap - o, "main {\n v%d = 1\n op\n}\n", extra ? 0 : nv - 1);
		char *eb = NULL;
		size_t el = 0;
		FILE *ef = open_memstream(&eb, &el);
		sc = scenario_compile("n.tlbs", names, strlen(names), ef, &nerr);
		fclose(ef);
		if (extra) {
			assert_null(sc);
			assert_non_null(strstr(eb, "too many names (at most 4096"));
		} else {
			if (!sc)
				fail_msg("4000 names: %s", eb);
			scenario_free(sc);
		}
		free(eb);
		free(names);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_loops_are_not_unrolled),
		cmocka_unit_test(test_loops_and_arithmetic),
		cmocka_unit_test(test_params_and_words),
		cmocka_unit_test(test_signal_wait_orders),
		cmocka_unit_test(test_spawn_join_arg),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_deadlock_names_the_waits),
		cmocka_unit_test(test_kernel_calls),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
