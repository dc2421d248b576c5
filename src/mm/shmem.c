/*
 * shmem.c - the shmem file behind a MAP_SHARED|MAP_ANONYMOUS mapping.
 *
 * Mirrors mm/shmem.c (v5.1..v5.8) as far as the TLB story needs it:
 * shmem_zero_setup() -> shmem_kernel_file_setup() gives every such mapping
 * its own tmpfs file of the mapping's size; its pages live in that file's page
 * cache (filemap.c) and are freed when the last file reference goes (fput ->
 * shmem_evict_inode). tmpfs has no page_mkwrite and no dirty accounting.
 *
 * Costs: creating the file (shmem_setup_ns, in mmap_region under the write
 * lock) and, in iput, tearing it down (shmem_evict_ns, plus page_free_ns per
 * page). The final fput is deferred (fput, task_work_run in filemap.c): after
 * munmap it runs at the syscall's exit, after up_read.
 */
#include "mm/mm.h"

/* shmem_zero_setup() -> shmem_kernel_file_setup() -> __shmem_file_setup()
 * (mm/shmem.c, v5.1): memory accounting, a new inode, a pseudo dentry and
 * file, the LSM hooks */
struct inode *shmem_zero_setup(struct sim *s, uint64_t size)
{
	sim_charge(s, (uint64_t)P(s, P_shmem_setup_ns));
	return inode_new(s, &fs_tmpfs, size);
}
