/*
 * mmap.c - address-space layout and the mapping system calls.
 *
 * Mirrors mm/mmap.c (v5.1): get_unmapped_area with a hint and top-down
 * placement (unmapped_area_topdown), do_mmap for private and shared anonymous
 * mappings (shmem_zero_setup) and for files (mmap_region: the file reference,
 * __vma_link_file into i_mmap), __vm_munmap/__do_munmap with the v4.20
 * downgrade_write (dd2283f2605e), unmap_region and free_pgtables, remove_vma
 * (fput). The file-side system calls a workload needs (an unlinked temporary
 * file, close, fsync) are here too.
 *
 * VMAs are kept in an array sorted by vm_start (the rbtree/list of the
 * kernel; the layouts modelled here have tens of VMAs). Anonymous VMAs are
 * not merged at mmap (vma_merge is modelled only for mprotect of file-backed
 * VMAs: vma_merge_file_neighbours; see docs/design.md).
 */
#include <stdlib.h>
#include <string.h>

#include "mm/mm.h"
#include "mm/points.h"
#include "sim/grow.h"

#define FIRST_USER_ADDRESS 0ull
#define USER_PGTABLES_CEILING 0ull

/* ---- VMA array ---- */

/* Index of the first VMA with vm_end > addr (find_vma semantics). */
int vma_index(struct mm_struct *mm, uint64_t addr)
{
	int lo = 0, hi = mm->nr_vmas;
	while (lo < hi) {
		int mid = (lo + hi) / 2;
		if (mm->vmas[mid]->vm_end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* find_vma(): first VMA with vm_end > addr, or NULL. A linked VMA that
 * covers addr is that VMA (they do not overlap): the cache is tried first. */
struct vm_area_struct *find_vma(struct mm_struct *mm, uint64_t addr)
{
	struct vm_area_struct **slot = &mm->vmacache[(addr >> 24) & (VMACACHE_SIZE - 1)];
	struct vm_area_struct *v = *slot;
	if (v && v->linked && v->vm_mm == mm && v->vm_start <= addr && addr < v->vm_end)
		return v;
	int i = vma_index(mm, addr);
	if (i == mm->nr_vmas)
		return NULL;
	v = mm->vmas[i];
	if (v->vm_start <= addr)
		*slot = v;
	return v;
}

/* vm_area_alloc() / vm_area_free() (kernel/fork.c, v4.18+) */
static struct vm_area_struct *vm_area_alloc(struct sim *s)
{
	struct kernel *k = kernel_of(s);
	struct vm_area_struct *v = k->pool.free;
	if (v)
		k->pool.free = v->next_free;
	else
		v = kernel_obj_alloc(s, sizeof(*v));
	memset(v, 0, sizeof(*v));
	return v;
}

static void vm_area_free(struct sim *s, struct vm_area_struct *v)
{
	struct kernel *k = kernel_of(s);
	v->next_free = k->pool.free;
	k->pool.free = v;
}

static void vma_insert_at(struct sim *s, struct mm_struct *mm, int i, struct vm_area_struct *v)
{
	if (GROW(&mm->vmas, &mm->cap_vmas, (size_t)mm->nr_vmas, (size_t)mm->nr_vmas + 1, 16))
		sim_oom(s, "VMAs");
	memmove(&mm->vmas[i + 1], &mm->vmas[i], (size_t)(mm->nr_vmas - i) * sizeof(*mm->vmas));
	mm->vmas[i] = v;
	mm->nr_vmas++;
	v->linked = true;
}

/* vma_link() -> __vma_link_list()/__vma_link_rb() (mm/mmap.c, v5.1); pos:
 * where get_unmapped_area found the room, used once checked to be
 * vma_index(v->vm_start) (only one index is) */
static void vma_link(struct sim *s, struct mm_struct *mm, struct vm_area_struct *v, int pos)
{
	if (!(pos >= 0 && pos <= mm->nr_vmas &&
	      (pos == mm->nr_vmas || mm->vmas[pos]->vm_end > v->vm_start) &&
	      (pos == 0 || mm->vmas[pos - 1]->vm_end <= v->vm_start)))
		pos = vma_index(mm, v->vm_start);
	vma_insert_at(s, mm, pos, v);
}

/* ---- get_unmapped_area ---- */

static bool range_free(struct mm_struct *mm, uint64_t addr, uint64_t len, int *pos)
{
	struct vm_area_struct *v = find_vma(mm, addr);
	if (v && v->vm_start <= addr)
		return false;		/* addr is mapped */
	*pos = v ? vma_index(mm, addr) : mm->nr_vmas;
	return *pos == mm->nr_vmas || addr + len <= mm->vmas[*pos]->vm_start;
}

/* unmapped_area_topdown(): the highest gap below mmap_base that fits len
 * (the kernel finds it through the rbtree's rb_subtree_gap; here a memo in
 * the mm, see struct mm_struct, lets the scan skip the gaps it proves too
 * short - it returns what the full scan from mmap_base would). *pos: the
 * index the new VMA takes. */
static uint64_t unmapped_area_topdown(struct sim *s, struct mm_struct *mm, uint64_t len, int *pos)
{
	const uint64_t base = mm->mmap_base, top = mm->gap_top;
	uint64_t high = base;
	int j = -2;
	if (mm->gap_len && mm->gap_len <= len && mm->gap_base == base && top < base) {
		/* m = lo - 1: the last VMA starting at or below gap_top. The
		 * gaps' tops fall as the scan goes down (the first VMA ending
		 * above mmap_base, or mmap_base; then each vm_start): when m ends
		 * at or below mmap_base every gap above the one under m tops
		 * above gap_top; with no m, every gap does */
		int lo = mm->gap_idx, hi = mm->nr_vmas;
		if (!(lo > 0 && lo <= hi && mm->vmas[lo - 1]->vm_start <= top &&
		      (lo == hi || mm->vmas[lo]->vm_start > top))) {
			for (lo = 0; lo < hi;) {
				int mid = (lo + hi) / 2;
				if (mm->vmas[mid]->vm_start <= top)
					lo = mid + 1;
				else
					hi = mid;
			}
		}
		if (lo == 0)
			return TLBSIM_EINVAL_VA;
		if (mm->vmas[lo - 1]->vm_end <= base) {
			j = lo - 2;
			high = mm->vmas[lo - 1]->vm_start;
		}
	}
	if (j == -2) {
		int i = vma_index(mm, high);	/* first VMA ending above mmap_base */
		if (i < mm->nr_vmas && mm->vmas[i]->vm_start < high)
			high = mm->vmas[i]->vm_start;
		j = i - 1;
	}
	/* the gaps below VMAs j+1, j, ..., 0, then the one below VMA 0 (its
	 * floor the first page), tested by the same rule */
	struct vm_area_struct *const *vmas = mm->vmas;
	for (;; j--) {
		uint64_t low = j >= 0 ? vmas[j]->vm_end : hw_of(s)->geom.page_size;
		if (high >= low && high - low >= len) {
			/* every gap above this one is shorter than len */
			mm->gap_len = len;
			mm->gap_top = high;
			mm->gap_base = base;
			/* VMAs 0..j+1 start at or below high (j+1 at it, unless
			 * high is mmap_base), and the caller links one at j+1 */
			mm->gap_idx = j + 3;
			*pos = j + 1;
			return high - len;
		}
		if (j < 0)
			break;
		high = vmas[j]->vm_start;
	}
	mm->gap_len = len;
	mm->gap_top = 0;
	mm->gap_base = base;
	return TLBSIM_EINVAL_VA;
}

/* get_unmapped_area() -> arch_get_unmapped_area_topdown() (v5.1): use the
 * hint if the range is free, otherwise search top-down. */
static uint64_t get_unmapped_area(struct sim *s, struct mm_struct *mm, uint64_t hint,
				  uint64_t len, int *pos)
{
	sim_charge(s, (uint64_t)P(s, P_unmapped_area_ns));
	uint64_t ps = hw_of(s)->geom.page_size;
	if (hint) {
		hint = (hint + ps - 1) & ~(ps - 1);
		if (hint + len <= hw_of(s)->geom.task_size && hint + len > hint &&
		    range_free(mm, hint, len, pos))
			return hint;
	}
	return unmapped_area_topdown(s, mm, len, pos);
}

/* do_mmap() -> mmap_region() (v5.1) under mmap_sem (write): place, build and
 * link the VMA (its flags VM_READ | VM_WRITE | vm_flags); a file mapping takes a file reference and joins i_mmap.
 * file NULL: anonymous (MAP_SHARED: a shmem file of its own). f_mmap, if
 * given, is the file's mmap handler (call_mmap), run on the linked VMA. */
static uint64_t mmap_region(struct sim *s, uint64_t hint, uint64_t len, int flags,
			    struct inode *file, uint64_t pgoff, uint32_t vm_flags,
			    void (*f_mmap)(struct sim *, struct vm_area_struct *, void *), void *arg)
{
	struct mm_struct *mm = current_task(s)->mm;
	uint64_t ps = hw_of(s)->geom.page_size;
	len = (len + ps - 1) & ~(ps - 1);
	if (len == 0)
		return TLBSIM_EINVAL_VA;
	down_write(s, &mm->mmap_sem);
	int pos = -1;
	uint64_t addr = get_unmapped_area(s, mm, hint, len, &pos);
	if (addr != TLBSIM_EINVAL_VA) {
		struct vm_area_struct *v = vm_area_alloc(s);
		v->vm_start = addr;
		v->vm_end = addr + len;
		v->vm_flags = VM_READ | VM_WRITE | vm_flags;
		v->vm_mm = mm;
		if (flags & TLBSIM_MAP_SHARED)
			v->vm_flags |= VM_SHARED;
		if (file) {
			file->refs++;		/* get_file() */
			v->file = file;
			if (file->fs == &fs_hugetlbfs)
				v->vm_flags |= VM_HUGETLB;
			v->vm_pgoff = pgoff;
		} else if (flags & TLBSIM_MAP_SHARED) {
			v->file = shmem_zero_setup(s, len);
		}
		sim_charge(s, (uint64_t)P(s, P_vma_op_ns));
		vma_link(s, mm, v, pos);
		if (v->file)
			i_mmap_insert(s, v->file, v);
		if (f_mmap)
			f_mmap(s, v, arg);	/* call_mmap(): the driver's handler */
	}
	up_write(s, &mm->mmap_sem);
	return addr;
}

/* a device file's mapping (pfnmap.c): its VM_PFNMAP / VM_MIXEDMAP flags and
 * its driver's mmap handler */
uint64_t do_mmap_dev(struct sim *s, uint64_t hint, uint64_t len, int flags, struct inode *file,
		     uint32_t vm_flags, void (*f_mmap)(struct sim *, struct vm_area_struct *, void *),
		     void *arg)
{
	return mmap_region(s, hint, len, flags, file, 0, vm_flags, f_mmap, arg);
}

static uint64_t do_mmap(struct sim *s, uint64_t hint, uint64_t len, int flags, struct inode *file,
			uint64_t pgoff)
{
	return mmap_region(s, hint, len, flags, file, pgoff, 0, NULL, NULL);
}

/* mmap(hint, len, PROT_READ|PROT_WRITE, MAP_ANONYMOUS|flags) -> do_mmap()
 * (v5.1). Returns the address or TLBSIM_EINVAL_VA. */
uint64_t sys_mmap(struct sim *s, uint64_t hint, uint64_t len, int flags)
{
	sim_set_mode(s, MODE_SYS);
	sim_step_arg(s, YP_SYSCALL, syscall_cost(s), SYS_MMAP, hint);
	kernel_entry(s);
	uint64_t addr = do_mmap(s, hint, len, flags, NULL, 0);
	sim_set_mode(s, MODE_USER);
	return addr;
}

/* mmap(hint, len, PROT_READ|PROT_WRITE, flags, fd, pgoff << PAGE_SHIFT) of an
 * open file -> do_mmap() (v5.1) */
uint64_t sys_mmap_file(struct sim *s, uint64_t hint, uint64_t len, int flags, struct inode *file,
		       uint64_t pgoff)
{
	sim_set_mode(s, MODE_SYS);
	sim_step_arg(s, YP_SYSCALL, syscall_cost(s), SYS_MMAP, hint);
	kernel_entry(s);
	uint64_t addr = do_mmap(s, hint, len, flags, file, pgoff);
	sim_set_mode(s, MODE_USER);
	return addr;
}

/* mkstemp() + unlink() + ftruncate(size): an unlinked file of `size` bytes
 * on fs (its pages are allocated on first touch); the inode carries the
 * caller's open-file reference */
struct inode *sys_tmpfile(struct sim *s, const struct fs_type *fs, uint64_t size)
{
	sim_set_mode(s, MODE_SYS);
	sim_step(s, YP_SYSCALL, 3 * syscall_cost(s));
	kernel_entry(s);
	struct inode *ino = inode_new(s, fs, size);
	sim_set_mode(s, MODE_USER);
	return ino;
}

/* close(): fput() of the caller's reference; mappings keep their own */
void sys_close(struct sim *s, struct inode *file)
{
	sim_set_mode(s, MODE_SYS);
	sim_step(s, YP_SYSCALL, syscall_cost(s));
	kernel_entry(s);
	fput(s, file);
	task_work_run(s);
	sim_set_mode(s, MODE_USER);
}

/* fsync() -> file_write_and_wait_range() -> write_cache_pages() */
void sys_fsync(struct sim *s, struct inode *file)
{
	sim_set_mode(s, MODE_SYS);
	sim_step(s, YP_SYSCALL, syscall_cost(s));
	kernel_entry(s);
	writeback_inode(s, file);
	sim_set_mode(s, MODE_USER);
}

/*
 * ftruncate(fd, size) -> do_truncate() -> the filesystem's setattr ->
 * truncate_setsize() -> truncate_pagecache() (mm/truncate.c, v5.1): set
 * i_size, unmap the pages past it from every mapping (unmap_mapping_range),
 * drop them from the page cache, and unmap again (a page a racing fault
 * mapped meanwhile). Growing only sets i_size.
 */
int sys_ftruncate(struct sim *s, struct inode *file, uint64_t size)
{
	uint64_t ps = hw_of(s)->geom.page_size;
	sim_set_mode(s, MODE_SYS);
	sim_step_arg(s, YP_SYSCALL, syscall_cost(s), SYS_FTRUNCATE, size);
	kernel_entry(s);
	uint64_t old = file->size;
	file->size = size;
	if (size < old) {
		uint64_t first = (size + ps - 1) / ps;	/* holebegin */
		unmap_mapping_range(s, file, first);
		truncate_inode_pages(s, file, first);
		unmap_mapping_range(s, file, first);
	}
	sim_set_mode(s, MODE_USER);
	return 0;
}

/*
 * sched_setaffinity() with a one-CPU mask (kernel/sched/core.c, v5.1:
 * __set_cpus_allowed_ptr): a task that is not running is placed on the CPU
 * when it next wakes; a running one is pushed off by the stopper
 * (migration_cpu_stop), which runs when the task is next preemptible - in
 * the model its return to user mode or a sim_preempt_point.
 */
void sys_sched_setaffinity(struct sim *s, struct task *t, int cpu)
{
	sim_set_mode(s, MODE_SYS);
	sim_step(s, YP_SYSCALL, syscall_cost(s));
	kernel_entry(s);
	sim_request_migrate(s, &t->thread, cpu);
	sim_set_mode(s, MODE_USER);
}

/* dup_mmap()'s per-VMA part (kernel/fork.c, v5.1): vm_area_dup() of orig
 * for the child's mm, get_file() and the i_mmap insertion next to orig for a
 * file (or shmem) mapping, __vma_link_rb() into mm. mm is new and locked for
 * write by its only user, so it is appended in orig's order. */
struct vm_area_struct *vm_area_dup_link(struct sim *s, struct mm_struct *mm,
					const struct vm_area_struct *orig)
{
	struct vm_area_struct *n = vm_area_alloc(s);
	*n = *orig;
	n->vm_mm = mm;
	n->next_free = NULL;
	sim_charge(s, (uint64_t)P(s, P_vma_op_ns));
	vma_insert_at(s, mm, mm->nr_vmas, n);
	if (n->file) {
		n->file->refs++;		/* get_file() */
		i_mmap_insert(s, n->file, n);
	}
	return n;
}

/* __split_vma(): split vmas[i] at addr; the new VMA is the upper part. */
void split_vma(struct sim *s, struct mm_struct *mm, int i, uint64_t addr)
{
	struct vm_area_struct *v = mm->vmas[i];
	struct vm_area_struct *n = vm_area_alloc(s);
	*n = *v;
	n->vm_start = addr;
	v->vm_end = addr;
	if (n->file)
		n->vm_pgoff = v->vm_pgoff + ((addr - v->vm_start) >> hw_of(s)->geom.page_shift);
	sim_charge(s, (uint64_t)P(s, P_vma_op_ns));
	vma_insert_at(s, mm, i + 1, n);
	if (n->file) {
		n->file->refs++;		/* get_file() */
		i_mmap_insert(s, n->file, n);
	}
}

/* can_vma_merge_after() of a and the VMA b that follows it (mm/mmap.c, v5.1)
 * for file-backed VMAs: adjacent, the same flags and file, and b maps the
 * file pages that continue a's */
static bool file_vmas_mergeable(struct sim *s, const struct vm_area_struct *a,
				const struct vm_area_struct *b)
{
	return a->file && a->file == b->file && a->vm_end == b->vm_start &&
	       a->vm_flags == b->vm_flags &&
	       a->vm_pgoff + ((a->vm_end - a->vm_start) >> hw_of(s)->geom.page_shift) == b->vm_pgoff;
}

/* __vma_adjust() removing next (mm/mmap.c, v5.1): vmas[i] grows over
 * vmas[i + 1], which leaves i_mmap (under i_mmap_rwsem, write) and drops its
 * file reference */
static void vma_absorb_next(struct sim *s, struct mm_struct *mm, int i)
{
	struct vm_area_struct *a = mm->vmas[i], *b = mm->vmas[i + 1];
	struct inode *file = b->file;
	down_write(s, &file->i_mmap_rwsem);
	a->vm_end = b->vm_end;
	i_mmap_remove(file, b);
	up_write(s, &file->i_mmap_rwsem);
	memmove(&mm->vmas[i + 1], &mm->vmas[i + 2],
		(size_t)(mm->nr_vmas - i - 2) * sizeof(*mm->vmas));
	mm->nr_vmas--;
	b->linked = false;
	sim_charge(s, (uint64_t)P(s, P_vma_op_ns));
	fput(s, file);
	vm_area_free(s, b);
}

void vma_merge_file_neighbours(struct sim *s, struct mm_struct *mm, int i)
{
	if (i + 1 < mm->nr_vmas && file_vmas_mergeable(s, mm->vmas[i], mm->vmas[i + 1]))
		vma_absorb_next(s, mm, i);
	if (i > 0 && file_vmas_mergeable(s, mm->vmas[i - 1], mm->vmas[i]))
		vma_absorb_next(s, mm, i - 1);
}

/*
 * unmap_region() (mm/mmap.c, v5.1): gather, zap the detached VMAs, free the
 * page tables between prev and next (floor/ceiling), finish the gather.
 */
static void unmap_region(struct sim *s, struct mm_struct *mm, struct vm_area_struct **vmas, int n,
			 struct vm_area_struct *prev, struct vm_area_struct *next, uint64_t start,
			 uint64_t end)
{
	struct mmu_gather tlb;
	tlb_gather_mmu(s, &tlb, mm, start, end);
	unmap_vmas(s, &tlb, vmas, n, start, end);
	/* the stable trees' rewrite of b67fbebd4cf9 (knob pfnmap_flush): a
	 * flush before free_pgtables() unlinks a VM_PFNMAP / VM_MIXEDMAP VMA
	 * from its file's rmap - looking at the first VMA only, then ("mm: Fix
	 * TLB flush for not-first PFNMAP mappings in unmap_region()") at all */
	enum pfnmap_flush_policy pf = machine_of(s)->policy.pfnmap_flush;
	if (pf == PFNMAP_FLUSH_STABLE_FIRST || pf == PFNMAP_FLUSH_STABLE_ANY) {
		bool pfn = false;
		for (int i = 0; i < (pf == PFNMAP_FLUSH_STABLE_FIRST ? (n > 0) : n); i++)
			pfn |= (vmas[i]->vm_flags & (VM_PFNMAP | VM_MIXEDMAP)) != 0;
		if (pfn)
			tlb_flush_mmu(s, &tlb);
	}
	free_pgtables(s, &tlb, vmas, n, prev ? prev->vm_end : FIRST_USER_ADDRESS,
		      next ? next->vm_start : USER_PGTABLES_CEILING);
	tlb_finish_mmu(s, &tlb, start, end);
}

/*
 * __do_munmap() (mm/mmap.c, v4.20..v5.1) of [start, end) with mmap_sem held
 * for write: split the VMAs at the edges, detach them, with `downgrade`
 * (munmap's __vm_munmap) downgrade mmap_sem to read, then unmap_region and
 * remove_vma_list. Returns whether it downgraded (nothing to unmap: false).
 */
bool do_munmap(struct sim *s, struct mm_struct *mm, uint64_t start, uint64_t end, bool downgrade)
{
	int i = vma_index(mm, start);
	if (i >= mm->nr_vmas || mm->vmas[i]->vm_start >= end)
		return false;
	sim_charge(s, (uint64_t)P(s, P_vma_op_ns));
	if (mm->vmas[i]->vm_start < start) {
		split_vma(s, mm, i, start);
		i++;
	}
	/* vma_index(end - 1) and vma_index(end) by stepping from i: the VMAs
	 * stepped over lie inside [start, end), detached below anyway */
	int last = i;
	while (last < mm->nr_vmas && mm->vmas[last]->vm_end <= end - 1)
		last++;
	if (last < mm->nr_vmas && mm->vmas[last]->vm_start < end && mm->vmas[last]->vm_end > end)
		split_vma(s, mm, last, end);
	int j = last;			/* first VMA at or above end */
	while (j < mm->nr_vmas && mm->vmas[j]->vm_end <= end)
		j++;
	while (j < mm->nr_vmas && mm->vmas[j]->vm_start < end)
		j++;
	int n = j - i;

	/* detach_vmas_to_be_unmapped() */
	struct vm_area_struct *detached[16];
	struct vm_area_struct **dv = n <= 16 ? detached
						: kernel_obj_alloc(s, (size_t)n * sizeof(*dv));
	for (int v = 0; v < n; v++)	/* usually one: no memcpy call */
		dv[v] = mm->vmas[i + v];
	struct vm_area_struct *prev = i > 0 ? mm->vmas[i - 1] : NULL;
	struct vm_area_struct *next = j < mm->nr_vmas ? mm->vmas[j] : NULL;
	memmove(&mm->vmas[i], &mm->vmas[j], (size_t)(mm->nr_vmas - j) * sizeof(*mm->vmas));
	mm->nr_vmas -= n;
	for (int v = 0; v < n; v++)
		dv[v]->linked = false;
	/* the only gap that changed lies between prev and next, its top at
	 * most next's start: unmapped_area_topdown's memo stays true up to
	 * there, or as it was if that gap is still too short */
	uint64_t gap_hi = next ? next->vm_start : UINT64_MAX;
	uint64_t gap_lo = prev ? prev->vm_end : hw_of(s)->geom.page_size;
	if (gap_hi > mm->gap_top && gap_hi >= gap_lo && gap_hi - gap_lo >= mm->gap_len) {
		mm->gap_top = gap_hi;
		mm->gap_idx = i + 1;	/* next is VMA i now */
	}

	if (downgrade)
		downgrade_write(s, &mm->mmap_sem);
	unmap_region(s, mm, dv, n, prev, next, start, end);

	/* remove_vma_list() -> remove_vma(): drop file references (fput: a
	 * final one is deferred to the syscall's exit), free the VMAs */
	for (int v = 0; v < n; v++) {
		if (dv[v]->file)
			fput(s, dv[v]->file);
		sim_charge(s, (uint64_t)P(s, P_vma_op_ns) / 2);
		vm_area_free(s, dv[v]);
	}
	return downgrade;
}

/*
 * munmap(addr, len) -> __vm_munmap(addr, len, downgrade = true) ->
 * __do_munmap() (mm/mmap.c, v4.20..v5.1).
 */
int sys_munmap(struct sim *s, uint64_t addr, uint64_t len)
{
	struct mm_struct *mm = current_task(s)->mm;
	struct kernel *k = kernel_of(s);
	uint64_t ps = hw_of(s)->geom.page_size;
	int ret = 0;
	sim_set_mode(s, MODE_SYS);
	sim_step_arg(s, YP_SYSCALL, syscall_cost(s), SYS_MUNMAP, addr);
	kernel_entry(s);
	uint64_t cookie = k->hooks && k->hooks->syscall_enter
				  ? k->hooks->syscall_enter(k->hooks_ctx, SYS_MUNMAP) : 0;
	len = (len + ps - 1) & ~(ps - 1);
	if ((addr & (ps - 1)) || len == 0 || addr + len > hw_of(s)->geom.task_size) {
		ret = -1;
		goto out;
	}
	uint64_t start = addr, end = addr + len;
	down_write(s, &mm->mmap_sem);
	if (!do_munmap(s, mm, start, end, true)) {
		up_write(s, &mm->mmap_sem);
		goto out;
	}
	up_read(s, &mm->mmap_sem);
	if (k->hooks && k->hooks->range_unmapped)
		k->hooks->range_unmapped(k->hooks_ctx, mm, start, end, SYS_MUNMAP, cookie);
out:
	/* exit_to_usermode_loop -> task_work_run: the deferred final fputs
	 * (a shmem mapping's file: its eviction and page frees), after
	 * up_read */
	task_work_run(s);
	sim_set_mode(s, MODE_USER);
	return ret;
}

/*
 * copy_vma() (mm/mmap.c, v5.1) for mremap's move_vma: a new VMA over
 * [addr, addr + len) with vma's flags and file at pgoff, linked into the mm
 * and its file's i_mmap. vma_merge with a neighbour is not modelled, so the
 * VMA is always new and *need_rmap_locks is false (the new VMA comes after
 * the old one in rmap order).
 */
struct vm_area_struct *copy_vma(struct sim *s, struct vm_area_struct *vma, uint64_t addr,
				uint64_t len, uint64_t pgoff, bool *need_rmap_locks)
{
	struct mm_struct *mm = vma->vm_mm;
	struct vm_area_struct *n = vm_area_alloc(s);
	n->vm_start = addr;
	n->vm_end = addr + len;
	n->vm_flags = vma->vm_flags;
	n->vm_mm = mm;
	n->file = vma->file;
	n->vm_pgoff = pgoff;
	if (n->file)
		n->file->refs++;		/* get_file() */
	sim_charge(s, (uint64_t)P(s, P_vma_op_ns));
	vma_link(s, mm, n, -1);
	if (n->file)
		i_mmap_insert(s, n->file, n);
	*need_rmap_locks = false;
	return n;
}

/* mremap's get_unmapped_area(file, 0, len, pgoff, flags) (v5.1): top-down */
uint64_t mremap_unmapped_area(struct sim *s, struct mm_struct *mm, uint64_t len)
{
	int pos;
	return get_unmapped_area(s, mm, 0, len, &pos);
}

/*
 * exit_mmap() (mm/mmap.c, v6.10), for the last mmput(): under the read lock
 * a fullmm gather (tlb_gather_mmu_fullmm) unmaps every VMA (unmap_vmas over
 * 0..ULONG_MAX); under the write lock free_pgtables() frees every table
 * (no floor, no ceiling), tlb_finish_mmu() flushes - arm64: one ASIDE1IS
 * (flush_tlb_mm) since tables were freed, no per-page TLBIs; x86: one
 * flush_tlb_mm_range(TLB_FLUSH_ALL) - and the VMAs are removed (remove_vma:
 * fput, free). No mmu notifiers, no OOM-reaper interplay.
 */
void exit_mmap(struct sim *s, struct mm_struct *mm)
{
	down_read(s, &mm->mmap_sem);
	if (!mm->nr_vmas) {
		up_read(s, &mm->mmap_sem);
		down_write(s, &mm->mmap_sem);
		up_write(s, &mm->mmap_sem);
		return;
	}
	struct mmu_gather tlb;
	tlb_gather_mmu(s, &tlb, mm, 0, ~0ull);
	unmap_vmas(s, &tlb, mm->vmas, mm->nr_vmas, 0, ~0ull);
	up_read(s, &mm->mmap_sem);
	down_write(s, &mm->mmap_sem);
	free_pgtables(s, &tlb, mm->vmas, mm->nr_vmas, FIRST_USER_ADDRESS, USER_PGTABLES_CEILING);
	tlb_finish_mmu(s, &tlb, 0, ~0ull);
	/* remove_vma() of each: fput, vm_area_free */
	for (int v = 0; v < mm->nr_vmas; v++) {
		struct vm_area_struct *vma = mm->vmas[v];
		vma->linked = false;
		if (vma->file)
			fput(s, vma->file);
		sim_charge(s, (uint64_t)P(s, P_vma_op_ns) / 2);
		vm_area_free(s, vma);
	}
	mm->nr_vmas = 0;
	mm->gap_len = 0;		/* unmapped_area_topdown's memo: no VMA, no claim */
	up_write(s, &mm->mmap_sem);
}
