/*
 * pfnmap.c - a device driver's PFN mappings (VM_PFNMAP / VM_MIXEDMAP) and
 * their revocation, with the knob pfnmap_flush (b67fbebd4cf9).
 *
 * sys_pfnmap() is mmap() of a device file whose mmap handler maps frames the
 * driver owns with remap_pfn_range() (mm/memory.c, v5.1): the VMA gets
 * VM_PFNMAP (or VM_MIXEDMAP for a driver that uses vm_insert_mixed), every
 * PTE is installed at mmap time, and no struct page reference is taken for
 * the mapping - vm_normal_page() is NULL there, so a zap drops the PTE and
 * frees nothing (memory.c), and a fault on a zapped PTE is a SIGBUS (the
 * handler has no fault method; fault.c).
 *
 * driver_unmap() is the driver revoking the mapping and taking the frames
 * back (a GPU driver evicting a buffer object, a device being unbound):
 * unmap_mapping_range() of the device file zaps every VMA still in its
 * i_mmap and flushes, and as soon as it returns the driver frees or reuses
 * the frames. That relies on every VMA through which a CPU may still
 * translate them being in i_mmap. An munmap of the mapping racing with it
 * zaps the PTEs (unmap_vmas), takes the VMA off i_mmap (free_pgtables ->
 * unlink_file_vma) and flushes at tlb_finish_mmu: on x86, whose
 * tlb_end_vma defers the flush to the end of the gather, the driver's
 * unmap_mapping_range can find no VMA, return with nothing flushed, and the
 * frame is freed while a CPU still caches it (I1 at the free). From
 * b67fbebd4cf9 "mmu_gather: Force tlb-flush VM_PFNMAP vmas" (v5.19,
 * Message-ID 20220708071834.149930530@infradead.org) tlb_end_vma flushes a
 * PFN VMA before free_pgtables unlinks it (knob pfnmap_flush=end_vma); a
 * driver zap that meets the munmap's zapped-not-flushed PTEs while the VMA
 * is still linked is covered by the nested-gather check of its
 * tlb_finish_mmu (mm_tlb_flush_nested). arm64's tlb_end_vma flushes every
 * VMA either way.
 *
 * Not modelled: the PAT/memtype tracking of remap_pfn_range, pte_special,
 * VM_IO, a driver fault handler (vmf_insert_pfn), the 2025 patch moving
 * the forced flush into free_pgtables (Message-ID
 * 20250522012838.163876-1-roman.gushchin@linux.dev; it flushes before
 * unlink_file_vma too). The stable trees' rewrite of b67fbebd4cf9 (a
 * tlb_flush_mmu in unmap_region, first only when the region's first VMA
 * was a PFN VMA, then when any was) is the knob's stable_first and
 * stable_any (mmap.c).
 */
#include "mm/mm.h"
#include "mm/points.h"

/* a character device's file: no page cache, no write notification */
static const struct fs_type fs_devfile = {"devfile", false, false};

struct pfnmap_args {
	struct pfn_dev *dev;
};

/* remap_pfn_range(vma, vma->vm_start, pfn, size, vm_page_prot) (mm/memory.c,
 * v5.1) as the driver's mmap handler calls it: every PTE of the VMA, to the
 * device's frames, writable for a writable shared VMA */
static void remap_pfn_range(struct sim *s, struct vm_area_struct *vma, void *arg)
{
	struct pfnmap_args *a = arg;
	struct kernel *k = kernel_of(s);
	struct hw *hw = hw_of(s);
	const struct pt_geom *g = &hw->geom;
	struct mm_struct *mm = vma->vm_mm;
	uint64_t addr = vma->vm_start;
	for (uint32_t i = 0; i < a->dev->n && !s->error; i++, addr += g->page_size) {
		uint32_t table = mm->pgd;
		for (int d = 0; d < g->levels - 1; d++)
			table = __pte_alloc(s, table, d, addr);
		if (s->error)
			return;
		sim_step_arg(s, YP_PTE, (uint64_t)P(s, P_lock_op_ns), addr, 0);
		pte_t pte = pfn_pte(a->dev->frames[i], PTE_VALID | PTE_USER | PTE_YOUNG);
		if ((vma->vm_flags & (VM_SHARED | VM_WRITE)) == (VM_SHARED | VM_WRITE))
			pte |= PTE_WRITE;
		set_entry(s, table, pt_index(g, g->levels - 1, addr), fmt_pte_mkclean(hw->fmt, pte));
		if (k->hooks && k->hooks->page_mapped)
			k->hooks->page_mapped(k->hooks_ctx, a->dev->frames[i], false);
	}
}

uint64_t sys_pfnmap(struct sim *s, uint64_t hint, uint64_t len, bool mixed)
{
	struct kernel *k = kernel_of(s);
	uint64_t ps = hw_of(s)->geom.page_size;
	uint64_t n = (len + ps - 1) / ps;
	if (!n || n > 4096)
		return TLBSIM_EINVAL_VA;
	sim_set_mode(s, MODE_SYS);
	sim_step_arg(s, YP_SYSCALL, syscall_cost(s), SYS_MMAP, hint);
	kernel_entry(s);
	/* the driver's frames (its device memory, or pages it allocated and
	 * manages itself) and its open device file */
	struct pfn_dev *dev = kernel_obj_alloc(s, sizeof(*dev) + n * sizeof(dev->frames[0]));
	struct inode *file = dev ? inode_new(s, &fs_devfile, n * ps) : NULL;
	if (!dev || !file) {
		sim_set_mode(s, MODE_USER);
		return TLBSIM_EINVAL_VA;
	}
	dev->file = file;
	dev->n = (uint32_t)n;
	for (uint32_t i = 0; i < n; i++) {
		dev->frames[i] = alloc_zeroed_frame(s, FRAME_DATA, 0, 0);
		frame_of(hw_of(s), dev->frames[i])->refcount = 1;	/* the driver's */
	}
	struct pfnmap_args a = {.dev = dev};
	uint64_t addr = do_mmap_dev(s, hint, n * ps, TLBSIM_MAP_SHARED, file,
				    mixed ? VM_MIXEDMAP : VM_PFNMAP, remap_pfn_range, &a);
	dev->addr = addr;
	dev->next = k->pfn_devs;
	k->pfn_devs = dev;
	if (addr == TLBSIM_EINVAL_VA) {
		for (uint32_t i = 0; i < n; i++)
			frame_free(hw_of(s), dev->frames[i]);
		dev->released = true;
	}
	sim_set_mode(s, MODE_USER);
	return addr;
}

int driver_unmap(struct sim *s, uint64_t addr)
{
	struct kernel *k = kernel_of(s);
	struct hw *hw = hw_of(s);
	struct pfn_dev *dev = k->pfn_devs;
	while (dev && (dev->addr != addr || dev->released))
		dev = dev->next;
	if (!dev)
		return -1;
	dev->released = true;
	sim_set_mode(s, MODE_SYS);
	sim_step_arg(s, YP_SYSCALL, syscall_cost(s), SYS_DRIVER_UNMAP, addr);
	kernel_entry(s);
	/* unmap_mapping_range(mapping, 0, 0, 1): every VMA still in i_mmap */
	unmap_mapping_range(s, dev->file, 0);
	/* then the frames go back (or to another user of the device) */
	for (uint32_t i = 0; i < dev->n; i++) {
		struct frame *fr = frame_of(hw, dev->frames[i]);
		if (--fr->refcount == 0)
			frame_free(hw, dev->frames[i]);
	}
	sim_set_mode(s, MODE_USER);
	return 0;
}
