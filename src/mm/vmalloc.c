/*
 * vmalloc.c - the kernel address space: vmalloc areas (a first version:
 * areas are placed by a bump pointer and freed at once; the v6.10 lazy
 * purge with vmap nodes replaces it).
 */
#include "mm/mm.h"
#include "mm/points.h"

uint64_t thread_size(struct sim *s)
{
	uint64_t sz = 16384;
	if (kernel_of(s)->kasan)
		sz *= 2;
	uint64_t ps = hw_of(s)->geom.page_size;
	return sz < ps ? ps : sz;
}

uint64_t thread_align(struct sim *s)
{
	return machine_is_x86(s) ? thread_size(s) : 2 * thread_size(s);
}

void kernel_access(struct sim *s, uint64_t va, bool write)
{
	(void)s;
	(void)va;
	(void)write;
}

uint64_t vmalloc_range(struct sim *s, uint64_t size, uint64_t align)
{
	struct kernel *k = kernel_of(s);
	uint64_t ps = hw_of(s)->geom.page_size;
	if (!k->kva_next)
		k->kva_next = k->kva.vmalloc_start;
	uint64_t a = (k->kva_next + align - 1) & ~(align - 1);
	k->kva_next = a + ((size + ps - 1) & ~(ps - 1)) + ps;
	return a;
}

void vfree(struct sim *s, uint64_t addr)
{
	(void)s;
	(void)addr;
}

void vfree_atomic(struct sim *s, int cpu, uint64_t addr)
{
	(void)cpu;
	vfree(s, addr);
}
