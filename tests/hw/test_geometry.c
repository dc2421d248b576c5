/*
 * test_geometry.c - page-table geometry (pt_geom_init, pt_index).
 *
 * Rules checked (kernel-model 3.1, 4.1; arch/x86 and arch/arm64 pgtable
 * headers): a table holds PAGE_SIZE / 8 descriptors, so each level resolves
 * PAGE_SHIFT - 3 bits of a 48-bit VA:
 *   x86-64 4K and arm64 4K: 4 levels, shifts 39/30/21/12, PMD_SHIFT 21,
 *                           PUD_SHIFT 30, PGDIR_SHIFT 39, PTRS_PER_PTE 512;
 *   arm64 16K: 4 levels, shifts 47/36/25/14, the level-0 table has
 *              48 - 47 = 1 index bit (2 entries), PTRS_PER_PTE 2048;
 *   arm64 64K: 3 levels, shifts 42/29/16, PMD_SHIFT 29, the PUD is folded
 *              (PUD_SHIFT == PGDIR_SHIFT == 42), level 0 has 6 index bits,
 *              PTRS_PER_PTE 8192.
 */
#include "test_util.h"

static void check_levels(const struct pt_geom *g, int levels, const int *shift,
			 const int *bits)
{
	assert_int_equal(g->levels, levels);
	for (int d = 0; d < levels; d++) {
		assert_int_equal(g->shift[d], shift[d]);
		assert_int_equal(g->bits[d], bits[d]);
		assert_int_equal(g->idx_mask[d], (1ull << bits[d]) - 1);
	}
	/* the deepest level resolves the page offset boundary */
	assert_int_equal(g->shift[levels - 1], g->page_shift);
	/* 48-bit VA: the top-level shift plus its index bits reach bit 48 */
	assert_int_equal(g->shift[0] + g->bits[0], 48);
}

/* x86-64 4-level paging with 4 KiB pages: PML4 39, PDPT 30, PD 21, PT 12. */
static void test_x86_4k(void **state)
{
	(void)state;
	struct pt_geom g;
	pt_geom_init(&g, 12, pt_format_x86_64.task_size);
	check_levels(&g, 4, (const int[]){39, 30, 21, 12}, (const int[]){9, 9, 9, 9});
	assert_int_equal(g.page_size, 4096);
	assert_int_equal(g.ptrs_per_pte, 512);
	assert_int_equal(g.pmd_shift, 21);
	assert_int_equal(g.pud_shift, 30);
	assert_int_equal(g.pgdir_shift, 39);
	assert_int_equal(g.depth_pmd, 2);
	assert_int_equal(g.depth_pud, 1);
	/* x86-64 TASK_SIZE_MAX = 2^47 - PAGE_SIZE */
	assert_int_equal(g.task_size, (1ull << 47) - 4096);
}

/* arm64 4K granule, 48-bit VA: same 4-level layout as x86 (PMD 2 MiB). */
static void test_arm64_4k(void **state)
{
	(void)state;
	struct pt_geom g;
	pt_geom_init(&g, 12, pt_format_arm64.task_size);
	check_levels(&g, 4, (const int[]){39, 30, 21, 12}, (const int[]){9, 9, 9, 9});
	assert_int_equal(g.ptrs_per_pte, 512);
	assert_int_equal(g.pmd_shift, 21);
	assert_int_equal(g.pud_shift, 30);
	assert_int_equal(g.depth_pmd, 2);
	assert_int_equal(g.depth_pud, 1);
	/* arm64 TASK_SIZE with 48-bit VA */
	assert_int_equal(g.task_size, 1ull << 48);
}

/* arm64 16K granule, 48-bit VA: 4 levels 47/36/25/14, level 0 has 2 entries
 * (1 index bit), PMD 32 MiB, PUD 64 GiB. */
static void test_arm64_16k(void **state)
{
	(void)state;
	struct pt_geom g;
	pt_geom_init(&g, 14, pt_format_arm64.task_size);
	check_levels(&g, 4, (const int[]){47, 36, 25, 14}, (const int[]){1, 11, 11, 11});
	assert_int_equal(g.page_size, 16384);
	assert_int_equal(g.ptrs_per_pte, 2048);
	assert_int_equal(g.pmd_shift, 25);
	assert_int_equal(g.pud_shift, 36);
	assert_int_equal(g.pgdir_shift, 47);
	assert_int_equal(g.depth_pmd, 2);
	assert_int_equal(g.depth_pud, 1);
}

/* arm64 64K granule, 48-bit VA: 3 levels 42/29/16 (PGD 4 TiB, PMD 512 MiB),
 * PUD folded into the PGD. */
static void test_arm64_64k(void **state)
{
	(void)state;
	struct pt_geom g;
	pt_geom_init(&g, 16, pt_format_arm64.task_size);
	check_levels(&g, 3, (const int[]){42, 29, 16}, (const int[]){6, 13, 13});
	assert_int_equal(g.page_size, 65536);
	assert_int_equal(g.ptrs_per_pte, 8192);
	assert_int_equal(g.pmd_shift, 29);
	assert_int_equal(g.depth_pmd, 1);
	assert_int_equal(g.depth_pud, -1);		/* folded */
	assert_int_equal(g.pud_shift, 42);		/* folded: PUD_SHIFT == PGDIR_SHIFT */
	assert_int_equal(g.pgdir_shift, 42);
}

/* pt_index(depth, va) = the va bits [shift[depth], shift[depth] + bits[depth]). */
static void test_pt_index_x86(void **state)
{
	(void)state;
	struct pt_geom g;
	pt_geom_init(&g, 12, pt_format_x86_64.task_size);
	uint64_t va = (5ull << 39) | (7ull << 30) | (9ull << 21) | (11ull << 12) | 0x123;
	assert_int_equal(pt_index(&g, 0, va), 5);
	assert_int_equal(pt_index(&g, 1, va), 7);
	assert_int_equal(pt_index(&g, 2, va), 9);
	assert_int_equal(pt_index(&g, 3, va), 11);
	/* all-ones index at every level */
	uint64_t top = 0x00007ffffffff000ull;
	for (int d = 0; d < 4; d++)
		assert_int_equal(pt_index(&g, d, top), d == 0 ? 255 : 511);
}

static void test_pt_index_arm64_16k(void **state)
{
	(void)state;
	struct pt_geom g;
	pt_geom_init(&g, 14, pt_format_arm64.task_size);
	/* level 0 has one index bit: VA bit 47 */
	assert_int_equal(pt_index(&g, 0, 1ull << 47), 1);
	assert_int_equal(pt_index(&g, 0, (1ull << 47) - 1), 0);
	uint64_t va = (1ull << 47) | (2047ull << 36) | (1000ull << 25) | (3ull << 14) | 0x3fff;
	assert_int_equal(pt_index(&g, 0, va), 1);
	assert_int_equal(pt_index(&g, 1, va), 2047);
	assert_int_equal(pt_index(&g, 2, va), 1000);
	assert_int_equal(pt_index(&g, 3, va), 3);
}

static void test_pt_index_arm64_64k(void **state)
{
	(void)state;
	struct pt_geom g;
	pt_geom_init(&g, 16, pt_format_arm64.task_size);
	uint64_t va = (3ull << 42) | (100ull << 29) | (4000ull << 16) | 0x1234;
	assert_int_equal(pt_index(&g, 0, va), 3);
	assert_int_equal(pt_index(&g, 1, va), 100);
	assert_int_equal(pt_index(&g, 2, va), 4000);
	/* level 0 spans 64 entries of 4 TiB: the top of a 48-bit VA is 63 */
	assert_int_equal(pt_index(&g, 0, (1ull << 48) - 1), 63);
	assert_int_equal(pt_index(&g, 1, (1ull << 48) - 1), 8191);
	assert_int_equal(pt_index(&g, 2, (1ull << 48) - 1), 8191);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_x86_4k),
		cmocka_unit_test(test_arm64_4k),
		cmocka_unit_test(test_arm64_16k),
		cmocka_unit_test(test_arm64_64k),
		cmocka_unit_test(test_pt_index_x86),
		cmocka_unit_test(test_pt_index_arm64_16k),
		cmocka_unit_test(test_pt_index_arm64_64k),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
