/*
 * test_format.c - the table's numbers (src/out/out.c, docs/output.md "run
 * and compare"):
 *  - a time takes the unit its value fits after rounding to four
 *    significant digits: 999 949 ns is 999.9 us, 999 950 ns is 1.000 ms (it
 *    was "1000 us"), and the same at the ms/s and ns/us boundaries;
 *  - a count is exact below 10 000 and K/M/G with four digits above, the
 *    unit again chosen after rounding (999 950 is 1.000 M, not 1000 K).
 */
#include "test_util.h"
#include "out/out.h"

static void expect_time(double ns, const char *want)
{
	char buf[64];
	out_human_time(ns, buf, sizeof(buf));
	if (strcmp(buf, want) != 0)
		fail_msg("%.1f ns: '%s', want '%s'", ns, buf, want);
}

static void expect_count(double v, const char *want)
{
	char buf[64];
	out_human_count(v, buf, sizeof(buf));
	if (strcmp(buf, want) != 0)
		fail_msg("%.1f: '%s', want '%s'", v, buf, want);
}

static void test_time_units(void **state)
{
	(void)state;
	expect_time(0, "0 ns");
	expect_time(950, "950 ns");
	expect_time(999.4, "999 ns");
	expect_time(999.6, "1.000 \u00b5s");
	expect_time(46000, "46.00 \u00b5s");
	expect_time(999949, "999.9 \u00b5s");
	expect_time(999950, "1.000 ms");
	expect_time(15250000, "15.25 ms");
	expect_time(999949999, "999.9 ms");
	expect_time(999950000, "1.000 s");
	expect_time(1234000000, "1.234 s");
	expect_time(22250000000.0, "22.25 s");
}

static void test_count_units(void **state)
{
	(void)state;
	expect_count(7761, "7,761");
	expect_count(9999, "9,999");
	expect_count(180700, "180.7 K");
	expect_count(999949, "999.9 K");
	expect_count(999950, "1.000 M");
	expect_count(1600000, "1.600 M");
	expect_count(999950000, "1.000 G");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_time_units),
		cmocka_unit_test(test_count_units),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
