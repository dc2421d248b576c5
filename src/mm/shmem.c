/*
 * shmem.c - the shmem file behind a MAP_SHARED|MAP_ANONYMOUS mapping.
 *
 * Mirrors mm/shmem.c (v5.1..v5.8) as far as the TLB story needs it:
 * shmem_zero_setup() -> shmem_kernel_file_setup() gives every such mapping
 * its own tmpfs file of the mapping's size; its pages live in that file's page
 * cache (filemap.c) and are freed when the last file reference goes (fput ->
 * shmem_evict_inode). tmpfs has no page_mkwrite and no dirty accounting.
 */
#include "mm/mm.h"

/* shmem_zero_setup() -> shmem_kernel_file_setup() (mm/shmem.c) */
struct inode *shmem_zero_setup(struct sim *s, uint64_t size)
{
	return inode_new(s, &fs_tmpfs, size);
}
