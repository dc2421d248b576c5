/*
 * msync.c - msync(2), v5.1.
 *
 * Mirrors the msync system call of mm/msync.c (v5.1; unchanged in substance
 * through v6.18): with mmap_sem held for read it walks the VMAs of
 * [start, start + len); for a shared file mapping and MS_SYNC it takes a file
 * reference, drops mmap_sem and calls vfs_fsync_range(file, fstart, fend,
 * datasync = 1) on the file range the VMA piece maps, then looks the next
 * VMA up again. Everything else does nothing: MS_ASYNC has started no I/O
 * since v2.6.19 (the dirty state is already in the page and its PTEs, and
 * the flusher writes it back in its own time), and neither flag does anything
 * to a private or anonymous mapping. A hole in the range is skipped and
 * reported (-ENOMEM) at the end.
 *
 * vfs_fsync_range (fs/sync.c) calls the file's f_op->fsync:
 *  - tmpfs (shmem_file_operations): noop_fsync - nothing to write;
 *  - ext4: ext4_sync_file (fs/ext4/fsync.c) -> file_write_and_wait_range ->
 *    __filemap_fdatawrite_range(WB_SYNC_ALL) -> write_cache_pages over the
 *    range (writeback_range, filemap.c: clear_page_dirty_for_io, i.e.
 *    page_mkclean of every mapping of each dirty page, flushing each) and the
 *    wait for that I/O (filemap_fdatawait_range). The device's time is not
 *    modelled (writeback_page_ns is the CPU's share), nor are the jbd2 commit
 *    and the device cache flush that may follow (no journal, no block
 *    device): an MS_SYNC costs its CPU work only.
 * MS_INVALIDATE (EBUSY on a VM_LOCKED VMA, otherwise nothing) is not
 * modelled: no caller uses it.
 */
#include "mm/mm.h"
#include "mm/points.h"

/* vfs_fsync_range(file, start, end, datasync) (fs/sync.c, v5.1) -> f_op->fsync:
 * noop_fsync for tmpfs, ext4_sync_file's file_write_and_wait_range for ext4 */
static void vfs_fsync_range(struct sim *s, struct inode *file, uint64_t fstart, uint64_t fend)
{
	if (file->fs == &fs_tmpfs || file->fs == &fs_hugetlbfs)
		return;				/* noop_fsync */
	int shift = hw_of(s)->geom.page_shift;
	writeback_range(s, file, fstart >> shift, fend >> shift);
}

int sys_msync(struct sim *s, uint64_t start, uint64_t len, int flags)
{
	struct mm_struct *mm = current_task(s)->mm;
	uint64_t ps = hw_of(s)->geom.page_size;
	int error = -1, unmapped_error = 0;
	sim_set_mode(s, MODE_SYS);
	sim_step_arg(s, YP_SYSCALL, syscall_cost(s), SYS_MSYNC, start);
	kernel_entry(s);
	if (flags & ~(TLBSIM_MS_ASYNC | TLBSIM_MS_SYNC))
		goto out;
	if (start & (ps - 1))
		goto out;
	if ((flags & TLBSIM_MS_ASYNC) && (flags & TLBSIM_MS_SYNC))
		goto out;
	len = (len + ps - 1) & ~(ps - 1);
	uint64_t end = start + len;
	if (end < start)
		goto out;
	error = 0;
	if (end == start)
		goto out;
	down_read(s, &mm->mmap_sem);
	struct vm_area_struct *vma = find_vma(mm, start);
	for (;;) {
		error = -1;			/* -ENOMEM */
		if (!vma)
			break;
		if (start < vma->vm_start) {
			start = vma->vm_start;
			if (start >= end)
				break;
			unmapped_error = -1;
		}
		struct inode *file = vma->file;
		uint64_t fstart = (start - vma->vm_start) + (vma->vm_pgoff << hw_of(s)->geom.page_shift);
		uint64_t fend = fstart + ((end < vma->vm_end ? end : vma->vm_end) - start) - 1;
		bool shared = vma->vm_flags & VM_SHARED;
		start = vma->vm_end;
		if ((flags & TLBSIM_MS_SYNC) && file && shared) {
			file->refs++;		/* get_file() */
			up_read(s, &mm->mmap_sem);
			vfs_fsync_range(s, file, fstart, fend);
			fput(s, file);
			if (start >= end) {
				error = 0;
				goto out;
			}
			down_read(s, &mm->mmap_sem);
			vma = find_vma(mm, start);
		} else {
			if (start >= end) {
				error = 0;
				break;
			}
			int i = vma_index(mm, vma->vm_start);	/* vma->vm_next */
			vma = i + 1 < mm->nr_vmas ? mm->vmas[i + 1] : NULL;
		}
	}
	up_read(s, &mm->mmap_sem);
out:
	task_work_run(s);
	sim_set_mode(s, MODE_USER);
	return error ? error : unmapped_error;
}
