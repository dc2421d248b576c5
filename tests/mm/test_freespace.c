/*
 * test_freespace.c - the vmalloc free space (src/mm/freespace.c): lowest
 * aligned fit and merging, as __alloc_vmap_area() / find_vmap_lowest_match()
 * and merge_or_add_vmap_area() (mm/vmalloc.c, v6.10), checked against a flat
 * array through chunk splits and removals.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "mm/freespace.h"

#define PG 4096ull

/* the reference: a flat sorted array */
struct ref {
	struct ivl v[1 << 14];
	uint32_t n;
};

static uint64_t ref_alloc(struct ref *r, uint64_t size, uint64_t align)
{
	for (uint32_t i = 0; i < r->n; i++) {
		uint64_t a = (r->v[i].s + align - 1) & ~(align - 1);
		if (a < r->v[i].s || a + size > r->v[i].e)
			continue;
		struct ivl x = r->v[i];
		memmove(&r->v[i], &r->v[i + 1], (r->n - i - 1) * sizeof(x));
		r->n--;
		uint32_t at = i;
		if (x.s < a) {
			memmove(&r->v[at + 1], &r->v[at], (r->n - at) * sizeof(x));
			r->v[at++] = (struct ivl){x.s, a};
			r->n++;
		}
		if (a + size < x.e) {
			memmove(&r->v[at + 1], &r->v[at], (r->n - at) * sizeof(x));
			r->v[at] = (struct ivl){a + size, x.e};
			r->n++;
		}
		return a;
	}
	return 0;
}

static void ref_add(struct ref *r, uint64_t s, uint64_t e)
{
	uint32_t i = 0;
	while (i < r->n && r->v[i].s < s)
		i++;
	memmove(&r->v[i + 1], &r->v[i], (r->n - i) * sizeof(r->v[0]));
	r->v[i] = (struct ivl){s, e};
	r->n++;
	/* coalesce touching neighbours */
	uint32_t o = 0;
	for (uint32_t k = 0; k < r->n; k++) {
		if (o && r->v[o - 1].e == r->v[k].s)
			r->v[o - 1].e = r->v[k].e;
		else
			r->v[o++] = r->v[k];
	}
	r->n = o;
}

static void same(const struct freespace *f, const struct ref *r)
{
	uint32_t k = 0;
	assert_int_equal(f->count, r->n);
	for (uint32_t ci = 0; ci < f->nc; ci++) {
		const struct fs_chunk *c = f->c[ci];
		assert_true(c->n > 0 && c->n <= FS_CHUNK);
		uint64_t m = 0;
		for (uint32_t i = 0; i < c->n; i++, k++) {
			assert_true(k < r->n);
			assert_int_equal(c->v[i].s, r->v[k].s);
			assert_int_equal(c->v[i].e, r->v[k].e);
			if (c->v[i].e - c->v[i].s > m)
				m = c->v[i].e - c->v[i].s;
		}
		/* the chunk's largest interval is what lets the search skip it */
		assert_int_equal(c->maxlen, m);
	}
	assert_int_equal(k, r->n);
}

/* The lowest address that fits at the alignment, clipped from the left,
 * the right, the middle or whole; a freed range merges with both
 * neighbours. */
static void test_lowest_fit_and_merge(void **state)
{
	(void)state;
	struct freespace f;
	bool oom;
	assert_int_equal(fs_init(&f, 0x10000, 0x10000 + 64 * PG), 0);
	assert_int_equal(fs_alloc(&f, 2 * PG, PG, &oom), 0x10000);	/* left clip */
	assert_int_equal(fs_alloc(&f, 2 * PG, 16 * PG, &oom), 0x20000);	/* middle hole */
	assert_int_equal(f.count, 2);
	/* the hole [0x12000, 0x20000) is the lowest fit for 4 pages */
	assert_int_equal(fs_alloc(&f, 4 * PG, PG, &oom), 0x12000);
	uint64_t fs, fe;
	assert_true(fs_find(&f, 0x16000, 0x17000, &fs, &fe));
	assert_int_equal(fs, 0x16000);
	assert_int_equal(fe, 0x20000);
	assert_false(fs_find(&f, 0x12000, 0x13000, &fs, &fe));
	/* give the middle back: merges with nothing on the left (busy), the
	 * hole on the right */
	assert_int_equal(fs_add(&f, 0x12000, 0x16000), 0);
	assert_true(fs_find(&f, 0x12000, 0x13000, &fs, &fe));
	assert_int_equal(fs, 0x12000);
	assert_int_equal(fe, 0x20000);
	/* both neighbours: one interval again after the last two frees */
	assert_int_equal(fs_add(&f, 0x20000, 0x22000), 0);
	assert_int_equal(fs_add(&f, 0x10000, 0x12000), 0);
	assert_int_equal(f.count, 1);
	assert_int_equal(f.c[0]->v[0].s, 0x10000);
	assert_int_equal(f.c[0]->v[0].e, 0x10000 + 64 * PG);
	/* nothing fits: 0 */
	assert_int_equal(fs_alloc(&f, 65 * PG, PG, &oom), 0);
	assert_false(oom);
	fs_destroy(&f);
}

/* Thousands of holes (many chunks, splits and emptied chunks), random
 * sizes, alignments and frees: always the flat array's answer. */
static void test_matches_flat_array(void **state)
{
	(void)state;
	static struct ref r;
	struct freespace f;
	uint64_t busy[4096][2];
	int nb = 0;
	uint64_t x = 12345;
	r.n = 1;
	r.v[0] = (struct ivl){1ull << 30, (1ull << 30) + (1ull << 26)};
	assert_int_equal(fs_init(&f, r.v[0].s, r.v[0].e), 0);
	for (int step = 0; step < 60000; step++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		uint32_t rnd = (uint32_t)(x >> 33);
		if (nb < 4096 && (rnd % 100 < 55 || nb == 0)) {
			uint64_t size = (1 + rnd % 5) * PG, align = PG << (rnd / 7 % 3);
			bool oom;
			uint64_t a = fs_alloc(&f, size, align, &oom);
			assert_false(oom);
			assert_int_equal(a, ref_alloc(&r, size, align));
			if (a) {
				busy[nb][0] = a;
				busy[nb++][1] = a + size;
			}
		} else {
			int k = (int)(rnd % (uint32_t)nb);
			assert_int_equal(fs_add(&f, busy[k][0], busy[k][1]), 0);
			ref_add(&r, busy[k][0], busy[k][1]);
			busy[k][0] = busy[nb - 1][0];
			busy[k][1] = busy[--nb][1];
		}
		if (step % 997 == 0)
			same(&f, &r);
	}
	same(&f, &r);
	assert_true(f.nc > 4);	/* the test went through many chunks */
	fs_destroy(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lowest_fit_and_merge),
		cmocka_unit_test(test_matches_flat_array),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
