/*
 * grow.h - the one helper that grows a heap array.
 *
 * Rule (docs/design.md, "storage that moves"): a coroutine can be suspended at
 * any yield point while another simulated thread grows an array, so no pointer
 * into an array grown here may be kept across sim_step() or any call that can
 * yield. Hold an index instead, or use storage that never moves (the frame
 * table in hw/frame.c is one reserved address range for that reason).
 *
 * With TLBSIM_POISON_GROWTH defined (the asan preset turns it on) every growth
 * moves the array: the new block is a fresh allocation, the old one is filled
 * with 0xdb and freed. A pointer that survives a growth then reads garbage, and
 * under AddressSanitizer faults at once as a heap-use-after-free, instead of
 * working by luck whenever realloc happens to extend in place.
 */
#ifndef TLBSIM_GROW_H
#define TLBSIM_GROW_H

#include <stddef.h>
#include <stdint.h>

/*
 * Make room for at least `need` elements of `elem` bytes in *arr (capacity in
 * *cap, elements in use `used`, which are preserved). Capacity doubles from
 * `first`. Returns 0, or -1 when the host allocation fails or the size would
 * overflow (then *arr and *cap are unchanged).
 */
int grow_array(void **arr, size_t *cap, size_t used, size_t need, size_t elem, size_t first);

/* Typed wrapper: GROW(&s->heap, &s->cap_heap, s->nheap, s->nheap + 1, 256);
 * the common case (room already there) costs one compare. */
#define GROW(arrp, capp, used, need, first)                                      \
	((size_t)(need) <= *(capp)                                               \
		 ? 0                                                             \
		 : grow_array((void **)(arrp), (capp), (used), (need), sizeof(**(arrp)), (first)))

#endif
