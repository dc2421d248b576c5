/*
 * shmem.c - the shmem object behind a MAP_SHARED|MAP_ANONYMOUS mapping.
 *
 * Mirrors mm/shmem.c (v5.1) as far as the TLB story needs it:
 * shmem_zero_setup() -> shmem_kernel_file_setup() gives every such mapping its
 * own object; shmem_getpage() finds or allocates (and zeroes) a page of its
 * page cache; the last file reference (fput -> shmem_evict_inode) truncates
 * and frees the pages.
 */
#include "mm/mm.h"
#include "sim/grow.h"

/* shmem_zero_setup() -> shmem_kernel_file_setup() (mm/shmem.c, v5.1) */
struct shmem_obj *shmem_zero_setup(struct sim *s)
{
	struct kernel *k = kernel_of(s);
	struct shmem_obj *o = k->pool.shm_free;
	if (o) {
		k->pool.shm_free = o->next_free;
	} else {
		o = kernel_obj_alloc(s, sizeof(*o));
		if (!o)
			return NULL;
		if (GROW(&k->all_shm, &k->cap_shm, k->nshm, (size_t)k->nshm + 1, 16)) {
			sim_oom(s, "shmem objects");
			return NULL;
		}
		k->all_shm[k->nshm++] = o;
	}
	o->refs = 1;
	o->nr = 0;
	o->next_free = NULL;
	return o;
}

/* shmem_getpage() (mm/shmem.c, v5.1): find or allocate (and zero) the page
 * at index */
uint32_t shmem_getpage(struct sim *s, struct shmem_obj *o, uint64_t index)
{
	uint32_t lo = 0, hi = o->nr;
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		if (o->pages[mid].index < index)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < o->nr && o->pages[lo].index == index)
		return o->pages[lo].frame;
	sim_charge(s, (uint64_t)P(s, P_page_alloc_ns) + zero_page_cost(s));
	uint32_t f = alloc_frame(s, FRAME_DATA, 0);
	if (GROW(&o->pages, &o->cap, o->nr, (size_t)o->nr + 1, 8))
		sim_oom(s, "a shmem page cache");
	for (uint32_t i = o->nr; i > lo; i--)
		o->pages[i] = o->pages[i - 1];
	o->pages[lo].index = index;
	o->pages[lo].frame = f;
	o->nr++;
	return f;
}

/* fput() of the last reference -> shmem_evict_inode(): truncate and free
 * the pages the page cache holds. */
void shmem_put(struct sim *s, struct shmem_obj *o)
{
	struct kernel *k = kernel_of(s);
	struct hw *hw = hw_of(s);
	if (--o->refs)
		return;
	if (o->nr)
		sim_charge(s, o->nr * (uint64_t)P(s, P_page_free_ns));
	for (uint32_t i = 0; i < o->nr; i++) {
		struct frame *fr = frame_of(hw, o->pages[i].frame);
		if (--fr->refcount == 0)
			frame_free(hw, o->pages[i].frame);
	}
	o->nr = 0;
	o->next_free = k->pool.shm_free;
	k->pool.shm_free = o;
}
