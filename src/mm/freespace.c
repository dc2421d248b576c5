/*
 * freespace.c - the vmalloc free space as chunked sorted intervals
 * (freespace.h).
 */
#include "mm/freespace.h"

#include <stdlib.h>
#include <string.h>

#include "sim/grow.h"

static void chunk_recount(struct fs_chunk *c)
{
	uint64_t m = 0;
	for (uint32_t i = 0; i < c->n; i++)
		if (c->v[i].e - c->v[i].s > m)
			m = c->v[i].e - c->v[i].s;
	c->maxlen = m;
}

static void chunk_grew(struct fs_chunk *c, uint32_t i)
{
	if (c->v[i].e - c->v[i].s > c->maxlen)
		c->maxlen = c->v[i].e - c->v[i].s;
}

/* a new empty chunk at position ci of the chunk array */
static struct fs_chunk *chunk_insert(struct freespace *f, uint32_t ci)
{
	if (GROW(&f->c, &f->cap, f->nc, (size_t)f->nc + 1, 16))
		return NULL;
	struct fs_chunk *c = malloc(sizeof(*c));
	if (!c)
		return NULL;
	c->n = 0;
	c->maxlen = 0;
	memmove(&f->c[ci + 1], &f->c[ci], (size_t)(f->nc - ci) * sizeof(*f->c));
	f->c[ci] = c;
	f->nc++;
	return c;
}

static void chunk_remove(struct freespace *f, uint32_t ci)
{
	free(f->c[ci]);
	memmove(&f->c[ci], &f->c[ci + 1], (size_t)(f->nc - ci - 1) * sizeof(*f->c));
	f->nc--;
}

/* drop interval i of chunk ci (and the chunk when it empties) */
static void ivl_remove(struct freespace *f, uint32_t ci, uint32_t i)
{
	struct fs_chunk *c = f->c[ci];
	memmove(&c->v[i], &c->v[i + 1], (size_t)(c->n - i - 1) * sizeof(c->v[0]));
	c->n--;
	f->count--;
	if (!c->n)
		chunk_remove(f, ci);
	else
		chunk_recount(c);
}

/* put x at index i of chunk ci, splitting a full chunk in halves first */
static int ivl_insert(struct freespace *f, uint32_t ci, uint32_t i, struct ivl x)
{
	struct fs_chunk *c = f->c[ci];
	if (c->n == FS_CHUNK) {
		struct fs_chunk *r = chunk_insert(f, ci + 1);
		if (!r)
			return -1;
		c = f->c[ci];
		uint32_t half = FS_CHUNK / 2;
		memcpy(r->v, &c->v[half], (size_t)(FS_CHUNK - half) * sizeof(c->v[0]));
		r->n = FS_CHUNK - half;
		c->n = half;
		chunk_recount(c);
		chunk_recount(r);
		if (i > half) {
			c = r;
			i -= half;
		}
	}
	memmove(&c->v[i + 1], &c->v[i], (size_t)(c->n - i) * sizeof(c->v[0]));
	c->v[i] = x;
	c->n++;
	chunk_grew(c, i);
	f->count++;
	return 0;
}

/* the first interval of an empty set */
static int fs_first(struct freespace *f, uint64_t s, uint64_t e)
{
	struct fs_chunk *c = chunk_insert(f, 0);
	if (!c)
		return -1;
	c->v[0] = (struct ivl){s, e};
	c->n = 1;
	c->maxlen = e - s;
	f->count = 1;
	return 0;
}

int fs_init(struct freespace *f, uint64_t s, uint64_t e)
{
	memset(f, 0, sizeof(*f));
	return fs_first(f, s, e);
}

void fs_destroy(struct freespace *f)
{
	for (uint32_t i = 0; i < f->nc; i++)
		free(f->c[i]);
	free(f->c);
	memset(f, 0, sizeof(*f));
}

uint64_t fs_alloc(struct freespace *f, uint64_t size, uint64_t align, bool *oom)
{
	*oom = false;
	for (uint32_t ci = 0; ci < f->nc; ci++) {
		struct fs_chunk *c = f->c[ci];
		if (c->maxlen < size)
			continue;
		for (uint32_t i = 0; i < c->n; i++) {
			struct ivl *x = &c->v[i];
			uint64_t a = (x->s + align - 1) & ~(align - 1);
			if (a < x->s || a + size > x->e || a + size < a)
				continue;
			/* va_clip(): the whole interval, its left or right part,
			 * or a hole in its middle */
			uint64_t ls = x->s, re = x->e;
			if (a == ls && a + size == re) {
				ivl_remove(f, ci, i);
			} else if (a == ls) {
				x->s = a + size;
				chunk_recount(c);
			} else if (a + size == re) {
				x->e = a;
				chunk_recount(c);
			} else {
				x->e = a;
				chunk_recount(c);
				if (ivl_insert(f, ci, i + 1, (struct ivl){a + size, re})) {
					x = &f->c[ci]->v[i];
					x->e = re;	/* undo */
					chunk_recount(f->c[ci]);
					*oom = true;
					return 0;
				}
			}
			return a;
		}
	}
	return 0;
}

/* the last chunk whose first interval starts below s (0 if none) */
static uint32_t chunk_below(const struct freespace *f, uint64_t s)
{
	uint32_t lo = 0, hi = f->nc;
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		if (f->c[mid]->v[0].s < s)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? lo - 1 : 0;
}

/* the first index of chunk c whose interval starts at or above s */
static uint32_t index_at(const struct fs_chunk *c, uint64_t s)
{
	uint32_t lo = 0, hi = c->n;
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		if (c->v[mid].s < s)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int fs_add(struct freespace *f, uint64_t s, uint64_t e)
{
	if (!f->nc)
		return fs_first(f, s, e);
	uint32_t ci = chunk_below(f, s);
	struct fs_chunk *c = f->c[ci];
	uint32_t lo = index_at(c, s);
	/* the neighbours: left in this chunk (ci is the last chunk starting
	 * below s), right here or first of the next chunk */
	struct ivl *left = lo > 0 && c->v[lo - 1].e == s ? &c->v[lo - 1] : NULL;
	uint32_t rci = ci, ri = lo;
	if (ri == c->n) {
		rci = ci + 1;
		ri = 0;
	}
	struct ivl *right = rci < f->nc && f->c[rci]->v[ri].s == e ? &f->c[rci]->v[ri] : NULL;
	if (left && right) {
		left->e = right->e;
		chunk_grew(c, lo - 1);
		ivl_remove(f, rci, ri);
	} else if (left) {
		left->e = e;
		chunk_grew(c, lo - 1);
	} else if (right) {
		right->s = s;
		chunk_grew(f->c[rci], ri);
	} else {
		return ivl_insert(f, ci, lo, (struct ivl){s, e});
	}
	return 0;
}

bool fs_find(const struct freespace *f, uint64_t s, uint64_t e, uint64_t *fs, uint64_t *fe)
{
	if (!f->nc)
		return false;
	/* the interval holding s starts at or below s: the last one starting
	 * below s + 1 */
	uint32_t ci = chunk_below(f, s + 1);
	const struct fs_chunk *c = f->c[ci];
	uint32_t i = index_at(c, s + 1);
	if (!i)
		return false;
	const struct ivl *x = &c->v[i - 1];
	if (x->s > s || x->e < e)
		return false;
	*fs = x->s;
	*fe = x->e;
	return true;
}
