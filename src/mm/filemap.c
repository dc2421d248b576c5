/*
 * filemap.c - files: inodes and their page cache, dirty-page accounting and
 * throttling, the reverse map of a file page (i_mmap) and writeback.
 *
 * Mirrors, as far as TLB flushing needs them: mm/filemap.c (find_get_page,
 * add_to_page_cache, the page-cache side of filemap_fault and shmem_fault),
 * mm/page-writeback.c (set_page_dirty -> account_page_dirtied,
 * balance_dirty_pages_ratelimited exactly as in v5.8, balance_dirty_pages as
 * a named model), mm/rmap.c (page_mkclean: write-protect and clean every PTE
 * of a page, flushing each) and write_cache_pages (writeback of one file).
 *
 * Filesystems are data (struct fs_type): tmpfs has no page_mkwrite and no
 * dirty accounting (shmem's set_page_dirty only marks the page); ext4 has
 * both. A read-around of a missing page is not modelled: a miss allocates
 * and zeroes the one page (sparse files need no I/O).
 */
#include <string.h>

#include "mm/mm.h"
#include "mm/points.h"
#include "sim/grow.h"

const struct fs_type fs_tmpfs = {"tmpfs", false, false};
const struct fs_type fs_ext4 = {"ext4", true, true};
/* hugetlbfs: no page_mkwrite, no dirty accounting, noop fsync; its
 * MAP_SHARED mappings may share PMD tables (hugetlb.c) */
const struct fs_type fs_hugetlbfs = {"hugetlbfs", false, false};

const struct fs_type *fs_type_find(const char *name)
{
	if (strcmp(name, "tmpfs") == 0)
		return &fs_tmpfs;
	if (strcmp(name, "ext4") == 0)
		return &fs_ext4;
	if (strcmp(name, "hugetlbfs") == 0)
		return &fs_hugetlbfs;
	return NULL;
}

/* new_inode() (fs/inode.c) with one reference (the opener's file) */
struct inode *inode_new(struct sim *s, const struct fs_type *fs, uint64_t size)
{
	struct kernel *k = kernel_of(s);
	struct inode *ino = k->pool.inode_free;
	if (ino) {
		k->pool.inode_free = ino->next_free;
	} else {
		ino = kernel_obj_alloc(s, sizeof(*ino));
		if (!ino)
			return NULL;
		if (GROW(&k->all_inodes, &k->cap_inodes, k->ninodes, (size_t)k->ninodes + 1, 16)) {
			sim_oom(s, "inodes");
			return NULL;
		}
		k->all_inodes[k->ninodes++] = ino;
	}
	ino->fs = fs;
	ino->refs = 1;
	ino->size = size;
	ino->nr = 0;
	ino->nr_mmap = 0;
	ino->nr_dirty = 0;
	memset(&ino->i_mmap_rwsem, 0, sizeof(ino->i_mmap_rwsem));
	ino->i_mmap_rwsem.kind = RWSEM_I_MMAP;
	ino->next_free = NULL;
	return ino;
}

/* iput() of the last reference of an unlinked file -> evict: truncate the
 * page cache (truncate_inode_pages) and free the inode */
void iput(struct sim *s, struct inode *ino)
{
	struct kernel *k = kernel_of(s);
	struct hw *hw = hw_of(s);
	SIM_BUG_ON(s, ino->refs == 0);
	if (--ino->refs)
		return;
	/* tmpfs: shmem_evict_inode's own work and __fput's (mm/shmem.c) */
	if (ino->fs == &fs_tmpfs)
		sim_charge(s, (uint64_t)P(s, P_shmem_evict_ns));
	if (ino->nr)
		sim_charge(s, ino->nr * (uint64_t)P(s, P_page_free_ns));
	for (uint32_t i = 0; i < ino->nr; i++) {
		struct frame *fr = frame_of(hw, ino->pages[i].frame);
		fr->pgflags &= (uint8_t)~PG_DIRTY;
		if (--fr->refcount == 0)
			frame_free(hw, ino->pages[i].frame);
	}
	if (ino->fs->account_dirty)
		k->nr_file_dirty -= ino->nr_dirty;
	ino->nr = 0;
	ino->nr_dirty = 0;
	ino->next_free = k->pool.inode_free;
	k->pool.inode_free = ino;
}

void fput(struct sim *s, struct inode *ino)
{
	SIM_BUG_ON(s, ino->refs == 0);
	if (ino->refs > 1 || !s->curr) {
		iput(s, ino);
		return;
	}
	/* task_work_add(): run in the order added */
	struct inode **pp = &current_task(s)->fput_work;
	while (*pp)
		pp = &(*pp)->fput_next;
	ino->fput_next = NULL;
	*pp = ino;
}

void task_work_run(struct sim *s)
{
	if (!s->curr)
		return;
	struct task *tk = current_task(s);
	while (tk->fput_work) {
		struct inode *ino = tk->fput_work;
		tk->fput_work = ino->fput_next;
		ino->fput_next = NULL;
		iput(s, ino);
	}
}

static uint32_t pc_search(const struct inode *ino, uint64_t index)
{
	uint32_t lo = 0, hi = ino->nr;
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		if (ino->pages[mid].index < index)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* find_get_page() (mm/filemap.c): the cached page at index, or NO_FRAME */
uint32_t find_get_page(struct sim *s, struct inode *ino, uint64_t index)
{
	(void)s;
	uint32_t i = pc_search(ino, index);
	return i < ino->nr && ino->pages[i].index == index ? ino->pages[i].frame : NO_FRAME;
}

/* The page-cache side of filemap_fault() / shmem_getpage(): a hit costs the
 * lookup; a miss allocates and zeroes a page (clean) and inserts it
 * (add_to_page_cache_lru). */
uint32_t filemap_getpage(struct sim *s, struct inode *ino, uint64_t index)
{
	uint32_t i = pc_search(ino, index);
	if (i < ino->nr && ino->pages[i].index == index) {
		sim_charge(s, (uint64_t)P(s, P_pagecache_lookup_ns));
		return ino->pages[i].frame;
	}
	uint32_t f = alloc_zeroed_frame(s, FRAME_DATA, 0, 0);
	if (GROW(&ino->pages, &ino->cap, ino->nr, (size_t)ino->nr + 1, 8))
		sim_oom(s, "a page cache");
	if (i < ino->nr)	/* most misses append: no call for nothing to move */
		memmove(&ino->pages[i + 1], &ino->pages[i],
			(size_t)(ino->nr - i) * sizeof(*ino->pages));
	ino->pages[i].index = index;
	ino->pages[i].frame = f;
	ino->nr++;
	return f;
}

/*
 * set_page_dirty() -> __set_page_dirty_nobuffers / __set_page_dirty_no_writeback
 * (mm/page-writeback.c, v5.8): true when the page went clean -> dirty; for a
 * filesystem that accounts dirty pages, account_page_dirtied(): NR_FILE_DIRTY,
 * the task's nr_dirtied and this CPU's bdp_ratelimits.
 */
bool set_page_dirty(struct sim *s, struct inode *ino, uint32_t frame)
{
	struct frame *fr = frame_of(hw_of(s), frame);
	if (fr->pgflags & PG_DIRTY)
		return false;
	fr->pgflags |= PG_DIRTY;
	ino->nr_dirty++;
	if (ino->fs->account_dirty) {
		struct kernel *k = kernel_of(s);
		struct task *t = current_task(s);
		k->nr_file_dirty++;
		if (t) {
			t->nr_dirtied++;
			k->bdp_ratelimits[t->thread.cpu]++;
		}
		sim_charge(s, (uint64_t)P(s, P_dirty_account_ns));
	}
	return true;
}

/* the dirty limits of the model, in pages (global_dirty_limits, simplified:
 * all of the profile's memory is dirtyable) */
static void dirty_limits(struct sim *s, uint64_t *thresh, uint64_t *bg)
{
	uint64_t pages = ((uint64_t)P(s, P_ram_mb) << 20) >> hw_of(s)->geom.page_shift;
	*thresh = pages * (uint64_t)P(s, P_dirty_ratio) / 100;
	*bg = pages * (uint64_t)P(s, P_dirty_background_ratio) / 100;
}

/* dirty_poll_interval(): about the square root of the gap to the limit */
static uint32_t dirty_poll_interval(uint64_t dirty, uint64_t thresh)
{
	if (thresh > dirty) {
		uint64_t gap = thresh - dirty;
		int lg = 63 - __builtin_clzll(gap);
		return 1u << (lg >> 1);
	}
	return 1;
}

/* The initial nr_dirtied_pause of a task (copy_process): 128 >> (PAGE_SHIFT - 10) */
static uint32_t initial_pause(struct sim *s)
{
	uint32_t p = 128u >> (hw_of(s)->geom.page_shift - 10);
	return p ? p : 1;
}

/*
 * balance_dirty_pages() (mm/page-writeback.c), a named model: below the
 * freerun point ((thresh + bg) / 2) the task goes on and polls again after
 * dirty_poll_interval() pages; above it, it sleeps for the time the writeback
 * bandwidth (writeback_bw_mbs) needs for the pages it dirtied, at most
 * MAX_PAUSE (200 ms). Background writeback is not modelled, so a workload
 * over the limit stays over it.
 */
static void balance_dirty_pages(struct sim *s, struct task *t)
{
	struct kernel *k = kernel_of(s);
	uint64_t thresh, bg;
	dirty_limits(s, &thresh, &bg);
	uint64_t dirty = k->nr_file_dirty, freerun = (thresh + bg) / 2;
	uint32_t dirtied = t->nr_dirtied;
	t->nr_dirtied = 0;
	t->nr_dirtied_pause = dirty_poll_interval(dirty, thresh);
	k->dirty_exceeded = dirty > thresh;
	if (dirty <= freerun)
		return;
	uint64_t bytes = (uint64_t)dirtied << hw_of(s)->geom.page_shift;
	uint64_t pause = bytes * 1000u / (uint64_t)P(s, P_writeback_bw_mbs);	/* ns */
	if (pause > 200000000u)
		pause = 200000000u;
	if (!pause)
		return;
	s->m.dirty_throttle_ns += pause;
	sim_trace(s, TR_THROTTLE, pause, 0);
	sim_sleep_for(s, pause);
}

/*
 * balance_dirty_pages_ratelimited(mapping) (mm/page-writeback.c, v5.8):
 * call balance_dirty_pages() only after the task dirtied nr_dirtied_pause
 * pages, or this CPU ratelimit_pages pages; leaks of exited tasks are
 * charged to the next caller. A mapping without dirty accounting (tmpfs)
 * returns at once.
 */
void balance_dirty_pages_ratelimited(struct sim *s, struct inode *ino)
{
	if (!ino->fs->account_dirty)
		return;
	struct kernel *k = kernel_of(s);
	struct task *t = current_task(s);
	int cpu = t->thread.cpu;
	if (!t->nr_dirtied_pause)
		t->nr_dirtied_pause = initial_pause(s);
	uint32_t ratelimit = t->nr_dirtied_pause;
	if (k->dirty_exceeded) {
		uint32_t r = 32u >> (hw_of(s)->geom.page_shift - 10);
		if (r < ratelimit)
			ratelimit = r;
	}
	uint64_t thresh, bg;
	dirty_limits(s, &thresh, &bg);
	uint64_t ratelimit_pages = thresh / ((uint64_t)s->nr_cpus * 32u);
	if (ratelimit_pages < 16)
		ratelimit_pages = 16;
	if (t->nr_dirtied >= ratelimit)
		k->bdp_ratelimits[cpu] = 0;
	else if (k->bdp_ratelimits[cpu] >= ratelimit_pages) {
		k->bdp_ratelimits[cpu] = 0;
		ratelimit = 0;
	}
	if (k->dirty_throttle_leaks[cpu] && t->nr_dirtied < ratelimit) {
		uint32_t n = ratelimit - t->nr_dirtied;
		if (n > k->dirty_throttle_leaks[cpu])
			n = k->dirty_throttle_leaks[cpu];
		k->dirty_throttle_leaks[cpu] -= n;
		t->nr_dirtied += n;
	}
	sim_charge(s, (uint64_t)P(s, P_lock_op_ns));
	if (t->nr_dirtied >= ratelimit)
		balance_dirty_pages(s, t);
}

/* vma_address(): where vma maps page index of its file, or ~0 */
static uint64_t vma_address(struct sim *s, const struct vm_area_struct *vma, uint64_t index)
{
	if (index < vma->vm_pgoff)
		return ~0ull;
	uint64_t addr = vma->vm_start + ((index - vma->vm_pgoff) << hw_of(s)->geom.page_shift);
	return addr < vma->vm_end ? addr : ~0ull;
}

/* page_mapped() of a page-cache page (include/linux/mm.h, v5.1): some PTE of a
 * VMA mapping the file maps it, or a zap delayed the removal of its rmap
 * (PG_DELAY_RMAP) */
static bool page_mapped(struct sim *s, struct inode *ino, uint64_t index, uint32_t frame)
{
	if (frame_of(hw_of(s), frame)->pgflags & PG_DELAY_RMAP)
		return true;
	for (int i = 0; i < ino->nr_mmap; i++) {
		struct vm_area_struct *vma = ino->mmap[i];
		uint64_t addr = vma_address(s, vma, index);
		if (addr == ~0ull)
			continue;
		pte_t *ptep = pte_lookup(s, vma->vm_mm, addr);
		if (ptep && pte_present(*ptep) && pte_pfn(*ptep) == frame)
			return true;
	}
	return false;
}

/*
 * page_mkclean() -> rmap_walk_file() -> page_mkclean_one() (mm/rmap.c, v5.8):
 * nothing for a page no PTE maps (the early return on !page_mapped);
 * otherwise under i_mmap_rwsem (read), for every VMA mapping the page, under
 * the PTE lock (page_vma_mapped_walk: it waits for a zap that holds it), a
 * PTE that is dirty or writable is write-protected and cleaned and its
 * translation flushed (ptep_clear_flush: arm64 broadcast VALE1IS, x86 a
 * one-page flush_tlb_mm_range). The PTE is stored write-protected before the
 * flush (the kernel clears it, flushes, then stores it): either way every
 * access after the store faults.
 */
void page_mkclean(struct sim *s, struct inode *ino, uint64_t index, uint32_t frame)
{
	struct hw *hw = hw_of(s);
	const struct arch_ops *arch = machine_of(s)->arch;
	if (!page_mapped(s, ino, index, frame))
		return;
	down_read(s, &ino->i_mmap_rwsem);
	for (int i = 0; i < ino->nr_mmap; i++) {	/* by index: the array may grow */
		struct vm_area_struct *vma = ino->mmap[i];
		uint64_t addr = vma_address(s, vma, index);
		if (addr == ~0ull)
			continue;
		sim_step_arg(s, YP_PTE, (uint64_t)P(s, P_lock_op_ns), addr, 0);	/* PTL */
		uint32_t table = pte_table_of(s, vma->vm_mm, addr);
		if (!table)
			continue;
		rmap_ptl_lock(s, table);
		pte_t *ptep = pte_lookup(s, vma->vm_mm, addr);
		if (!ptep || !pte_present(*ptep) || pte_pfn(*ptep) != frame) {
			rmap_ptl_unlock(s);
			continue;
		}
		pte_t e = *ptep;
		bool dirty = (e & PTE_DIRTY) || ((e & PTE_WRITE) && hw->fmt->rdonly && !(e & PTE_RDONLY));
		if (dirty || (e & PTE_WRITE)) {
			*ptep = fmt_pte_mkclean(hw->fmt, e & ~PTE_WRITE);	/* pte_wrprotect(pte_mkclean()) */
			arch->flush_tlb_page(s, &vma->vm_mm->context, addr);
		}
		rmap_ptl_unlock(s);
	}
	up_read(s, &ino->i_mmap_rwsem);
}

/*
 * lock_page() / unlock_page() (mm/filemap.c, v5.8: __lock_page sleeps on the
 * page's wait queue until PG_locked is clear; unlock_page wakes the waiters,
 * which try again). The shared-write fault holds it from page_mkwrite (or
 * filemap_fault) until the page is dirty and its PTE writable; writeback
 * holds it across clear_page_dirty_for_io - so a write fault cannot dirty
 * the page between page_mkclean and the clearing of its dirty flag.
 */
void lock_page(struct sim *s, uint32_t f)
{
	struct kernel *k = kernel_of(s);
	struct frame *fr = frame_of(hw_of(s), f);
	sim_step_arg(s, YP_LOCK_PAGE, (uint64_t)P(s, P_lock_op_ns), f,
		     (fr->pgflags & PG_LOCKED) != 0);
	while (fr->pgflags & PG_LOCKED) {
		struct task *t = current_task(s);
		t->pgwait_frame = f;
		t->pgwait_next = k->page_waiters;
		k->page_waiters = t;
		sim_sleep(s);
	}
	fr->pgflags |= PG_LOCKED;
}

void unlock_page(struct sim *s, uint32_t f)
{
	struct kernel *k = kernel_of(s);
	struct frame *fr = frame_of(hw_of(s), f);
	SIM_BUG_ON(s, !(fr->pgflags & PG_LOCKED));
	fr->pgflags &= (uint8_t)~PG_LOCKED;
	for (struct task **pp = &k->page_waiters; *pp;) {
		struct task *t = *pp;
		if (t->pgwait_frame != f) {
			pp = &t->pgwait_next;
			continue;
		}
		*pp = t->pgwait_next;
		t->pgwait_next = NULL;
		sim_wake(s, &t->thread, (uint64_t)P(s, P_wakeup_ns));
	}
}

/*
 * write_cache_pages() for one file (mm/page-writeback.c): every dirty page
 * of the range (page indexes first..last, the wbc's range_start/range_end)
 * is locked and cleaned for I/O (clear_page_dirty_for_io: page_mkclean, then
 * the dirty flag), written (writeback_page_ns), and is clean afterwards.
 */
void writeback_range(struct sim *s, struct inode *ino, uint64_t first, uint64_t last)
{
	struct kernel *k = kernel_of(s);
	struct hw *hw = hw_of(s);
	for (uint32_t i = pc_search(ino, first); i < ino->nr; i++) {	/* by index: the cache may grow */
		uint32_t f = ino->pages[i].frame;
		uint64_t index = ino->pages[i].index;
		if (index > last)
			break;
		if (!(frame_of(hw, f)->pgflags & PG_DIRTY))
			continue;
		lock_page(s, f);
		/* the flusher re-finds the page by index: the cache may have changed */
		uint32_t j = pc_search(ino, index);
		if (j >= ino->nr || ino->pages[j].frame != f ||
		    !(frame_of(hw, f)->pgflags & PG_DIRTY)) {
			unlock_page(s, f);
			if (j < ino->nr && ino->pages[j].frame == f)
				i = j;
			continue;
		}
		i = j;
		page_mkclean(s, ino, index, f);
		struct frame *fr = frame_of(hw, f);
		if (fr->pgflags & PG_DIRTY) {
			fr->pgflags &= (uint8_t)~PG_DIRTY;
			ino->nr_dirty--;
			if (ino->fs->account_dirty)
				k->nr_file_dirty--;
		}
		if (k->hooks && k->hooks->page_cleaned)
			k->hooks->page_cleaned(k->hooks_ctx, f);
		sim_step_arg(s, YP_WRITEBACK, (uint64_t)P(s, P_writeback_page_ns), index, f);
		unlock_page(s, f);	/* writepage submitted the I/O */
	}
}

/* the whole file */
void writeback_inode(struct sim *s, struct inode *ino)
{
	writeback_range(s, ino, 0, ~0ull);
}

/* vma_link()'s __vma_link_file() (mm/mmap.c): add vma to the file's i_mmap
 * under i_mmap_rwsem (write) */
void i_mmap_insert(struct sim *s, struct inode *ino, struct vm_area_struct *vma)
{
	down_write(s, &ino->i_mmap_rwsem);
	if (GROW(&ino->mmap, &ino->cap_mmap, (size_t)ino->nr_mmap, (size_t)ino->nr_mmap + 1, 4))
		sim_oom(s, "a file's i_mmap");
	ino->mmap[ino->nr_mmap++] = vma;
	up_write(s, &ino->i_mmap_rwsem);
}

/* __remove_shared_vm_struct() (mm/mmap.c): the caller holds i_mmap_rwsem
 * for write; order is kept (rmap walks go by index) */
void i_mmap_remove(struct inode *ino, struct vm_area_struct *vma)
{
	for (int i = 0; i < ino->nr_mmap; i++)
		if (ino->mmap[i] == vma) {
			if (i + 1 < ino->nr_mmap)	/* not the last: close the hole */
				memmove(&ino->mmap[i], &ino->mmap[i + 1],
					(size_t)(ino->nr_mmap - i - 1) * sizeof(*ino->mmap));
			ino->nr_mmap--;
			return;
		}
}

/*
 * unmap_mapping_range(mapping, holebegin, 0, 1) (mm/memory.c, v5.1) for the
 * pages from index `first` on: under i_mmap_rwsem (read), for every VMA of
 * the file mapping some of them, zap_page_range_single() of that part -
 * its own mmu_gather on the VMA's mm (tlb_gather_mmu, unmap_single_vma,
 * tlb_finish_mmu), which flushes the zapped addresses of that VMA only.
 */
void unmap_mapping_range(struct sim *s, struct inode *ino, uint64_t first)
{
	const struct pt_geom *g = &hw_of(s)->geom;
	down_read(s, &ino->i_mmap_rwsem);
	for (int i = 0; i < ino->nr_mmap; i++) {	/* by index: the array may change */
		struct vm_area_struct *vma = ino->mmap[i];
		uint64_t pages = (vma->vm_end - vma->vm_start) >> g->page_shift;
		if (vma->vm_pgoff + pages <= first)
			continue;
		uint64_t from = first > vma->vm_pgoff ? first : vma->vm_pgoff;
		uint64_t start = vma->vm_start + ((from - vma->vm_pgoff) << g->page_shift);
		struct mmu_gather tlb;
		tlb_gather_mmu(s, &tlb, vma->vm_mm, start, vma->vm_end);
		unmap_single_vma(s, &tlb, vma, start, vma->vm_end);
		tlb_finish_mmu(s, &tlb, start, vma->vm_end);
	}
	up_read(s, &ino->i_mmap_rwsem);
}

/*
 * truncate_inode_pages_range() (mm/truncate.c, v5.1) from index `first`:
 * each cached page is locked, deleted from the page cache (its dirty state
 * and accounting go with it: delete_from_page_cache) and the cache's
 * reference dropped; the page is freed when no mapping holds it any more.
 */
void truncate_inode_pages(struct sim *s, struct inode *ino, uint64_t first)
{
	struct kernel *k = kernel_of(s);
	struct hw *hw = hw_of(s);
	for (uint32_t i = pc_search(ino, first); i < ino->nr;) {
		uint32_t f = ino->pages[i].frame;
		uint64_t index = ino->pages[i].index;
		lock_page(s, f);
		uint32_t j = pc_search(ino, index);	/* the cache may have changed */
		if (j >= ino->nr || ino->pages[j].frame != f) {
			unlock_page(s, f);
			i = pc_search(ino, index);
			continue;
		}
		struct frame *fr = frame_of(hw, f);
		if (fr->pgflags & PG_DIRTY) {
			fr->pgflags &= (uint8_t)~PG_DIRTY;
			ino->nr_dirty--;
			if (ino->fs->account_dirty)
				k->nr_file_dirty--;
		}
		memmove(&ino->pages[j], &ino->pages[j + 1],
			(size_t)(ino->nr - j - 1) * sizeof(*ino->pages));
		ino->nr--;
		sim_charge(s, (uint64_t)P(s, P_page_free_ns));
		unlock_page(s, f);
		if (--fr->refcount == 0)		/* put_page of the cache's reference */
			frame_free(hw, f);
		i = j;
	}
}
