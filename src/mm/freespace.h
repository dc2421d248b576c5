/*
 * freespace.h - the vmalloc allocator's free space: address-sorted, disjoint,
 * non-adjacent intervals [s, e) with the lowest aligned fit.
 *
 * The kernel keeps it in an rb-tree augmented with each subtree's largest
 * free block (free_vmap_area_root, find_vmap_lowest_match(), mm/vmalloc.c
 * since v5.2, 68ad4a330433). Here it is a sorted sequence of chunks of at
 * most FS_CHUNK intervals, each chunk knowing its largest interval: an
 * insertion moves at most one chunk's entries, and the lowest-fit search
 * skips whole chunks that cannot hold the size. A flat array costs a memmove
 * of the whole space per insertion, quadratic once test_vmalloc's
 * full_fit_alloc_test has fragmented it into millions of holes.
 *
 * Chunks are host heap blocks that never move while in use; the chunk
 * pointer array does, so no pointer into it is kept across a call here.
 */
#ifndef TLBSIM_MM_FREESPACE_H
#define TLBSIM_MM_FREESPACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FS_CHUNK 128

struct ivl {
	uint64_t s, e;
};

struct fs_chunk {
	uint32_t n;
	uint64_t maxlen;		/* the largest e - s in v[0..n) */
	struct ivl v[FS_CHUNK];
};

struct freespace {
	struct fs_chunk **c;
	uint32_t nc;
	size_t cap;
	uint64_t count;			/* intervals in all */
};

/* The whole range [s, e) free. 0, or -1 when the host is out of memory. */
int fs_init(struct freespace *f, uint64_t s, uint64_t e);
void fs_destroy(struct freespace *f);
/* Take size bytes at the lowest address aligned to align (a power of two)
 * that fits; 0 when nothing fits (or the host is out of memory: *oom set). */
uint64_t fs_alloc(struct freespace *f, uint64_t size, uint64_t align, bool *oom);
/* Give [s, e) back (not overlapping free space), merged with the intervals
 * it touches. 0, or -1 when the host is out of memory. */
int fs_add(struct freespace *f, uint64_t s, uint64_t e);
/* The free interval holding [s, e): true and *fs, *fe set, or false. */
bool fs_find(const struct freespace *f, uint64_t s, uint64_t e, uint64_t *fs, uint64_t *fe);

#endif
