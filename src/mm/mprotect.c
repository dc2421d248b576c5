/*
 * mprotect.c - mprotect(2), v5.1.
 *
 * Mirrors mm/mprotect.c (v5.1): do_mprotect_pkey() takes mmap_sem for write
 * and walks the VMAs of the range; mprotect_fixup() splits a VMA the range
 * covers only in part (split_vma, mm/mmap.c), sets the new vm_flags and
 * calls change_protection() -> change_protection_range(), which raises
 * mm->tlb_flush_pending (inc_tlb_flush_pending, a counter on every
 * configuration since 0a2dd266dd6b, v4.13, so that a concurrent
 * mm_tlb_flush_pending()/mm_tlb_flush_nested() reader knows a flush of this
 * mm is outstanding), rewrites every present PTE of the
 * range under its PTE table's lock (change_pte_range:
 * ptep_modify_prot_start / pte_modify / ptep_modify_prot_commit, counting
 * each present PTE), and - only if it counted any - flushes the whole range
 * with flush_tlb_range(vma, start, end) before dec_tlb_flush_pending(). No
 * mmu_gather: that came with 4a18419f71cd (v5.19).
 *
 * vma_merge: a file-backed VMA (a shared anonymous mapping is a shmem file)
 * merges back with its neighbours when mprotect gives them the same flags
 * again (vma_merge_file_neighbours, mmap.c; the kernel merges before it
 * changes the PTEs, here it is done after: the PTEs and the flushed range
 * are the same). A private anonymous VMA split by one mprotect stays split
 * when a later one gives both parts the same flags again (the model has no
 * anon_vma to say which may merge): a later mprotect of the whole range then
 * flushes once per piece where the kernel flushes once.
 *
 * Not modelled: PROT_NONE and PROT_EXEC (and write-only), pkeys, VM_MAYWRITE
 * (every VMA may be made writable), VM_ACCOUNT charging, swap entries. A
 * huge PMD entry (THP) goes through change_huge_pmd (huge_memory.c).
 *
 * change_protection() also serves NUMA balancing's scan (change_prot_numa,
 * mm/mempolicy.c: PTEs made PROT_NONE so that the next access takes a
 * hinting fault, do_numa_page in fault.c) and userfaultfd's write-protect
 * (mwriteprotect_range, mm/userfaultfd.c v5.11), both under mmap_lock for
 * read; see numa_scan() and sys_uffd_writeprotect() below.
 *
 * Permissions, in the neutral PTE encoding (hw/hw.h): vma->vm_page_prot of a
 * private mapping never carries write permission (PAGE_COPY / PAGE_READONLY:
 * a write to a private page goes through the fault path, do_wp_page), nor
 * does a shared one whose filesystem wants write notification; a shared
 * writable tmpfs mapping's does (PAGE_SHARED). pte_modify() replaces the
 * write permission with the new protection's and keeps pfn, young and dirty;
 * on arm64 it first turns hardware dirtiness (writable, RDONLY clear) into
 * the software dirty bit, and every user protection sets PTE_RDONLY.
 * With dirty_accountable (vma_wants_writenotify) a dirty PTE is made
 * writable again (pte_mkwrite), as the filesystem already knows of it.
 */
#include "mm/mm.h"
#include "mm/points.h"

/* calc_vm_prot_bits() for the protections modelled */
static uint32_t calc_vm_prot_bits(int prot)
{
	return ((prot & TLBSIM_PROT_READ) ? VM_READ : 0u) |
	       ((prot & TLBSIM_PROT_WRITE) ? VM_WRITE : 0u);
}

/* Does vma->vm_page_prot (vma_set_page_prot, mm/mmap.c v5.1) carry write
 * permission? Only PAGE_SHARED of a shared writable mapping that wants no
 * write notification. */
static bool page_prot_writable(const struct vm_area_struct *vma)
{
	return (vma->vm_flags & (VM_SHARED | VM_WRITE)) == (VM_SHARED | VM_WRITE) &&
	       !vma_wants_writenotify(vma);
}

/* pte_modify(pte, newprot) (arch/{x86,arm64}/include/asm/pgtable.h, v5.1)
 * for the write permission, then the dirty_accountable pte_mkwrite() of
 * change_pte_range() */
pte_t pte_modify_prot(const struct pt_format *fmt, pte_t pte, bool writable,
		      bool dirty_accountable)
{
	if (fmt->rdonly && (pte & PTE_WRITE) && !(pte & PTE_RDONLY))
		pte |= PTE_DIRTY;		/* pte_hw_dirty -> pte_mkdirty */
	pte &= ~PTE_WRITE;
	if (writable)
		pte |= PTE_WRITE;
	if (fmt->rdonly)
		pte |= PTE_RDONLY;		/* every arm64 user protection */
	if (dirty_accountable && (pte & PTE_DIRTY)) {
		pte |= PTE_WRITE;		/* pte_mkwrite() */
		if (fmt->rdonly)
			pte &= ~PTE_RDONLY;
	}
	return pte;
}

/* change_protection()'s cp_flags (include/linux/mm.h, v5.11) */
#define MM_CP_DIRTY_ACCT 0x1u		/* dirty_accountable: a dirty PTE stays writable */
#define MM_CP_PROT_NUMA 0x2u		/* change_prot_numa: PROT_NONE for NUMA hinting */
#define MM_CP_UFFD_WP 0x4u		/* UFFDIO_WRITEPROTECT: read-only + uffd-wp bit */
#define MM_CP_UFFD_WP_RESOLVE 0x8u	/* UFFDIO_WRITEPROTECT mode 0: clear the uffd-wp bit */

/*
 * The MM_CP_PROT_NUMA PTE of change_pte_range() (mm/mprotect.c, v5.11):
 * pte_modify(oldpte, PAGE_NONE), which keeps the pfn, young, dirty and
 * soft-dirty (arm64: hardware dirtiness first folded into the software dirty
 * bit), and with preserve_write the write bit (pte_mk_savedwrite, x86
 * pte_mkwrite: do_numa_page restores it). VALID cleared: the MMU faults on
 * it and caches nothing; the kernel's pte_present() still sees it.
 */
pte_t pte_mkprotnone(const struct pt_format *fmt, pte_t pte)
{
	if (fmt->rdonly && (pte & PTE_WRITE) && !(pte & PTE_RDONLY))
		pte |= PTE_DIRTY;
	if (fmt->rdonly)
		pte |= PTE_RDONLY;
	return (pte & ~PTE_VALID) | PTE_PROTNONE;
}

/* change_pte_range()'s prot_numa skips (v5.1..v5.11): a PTE already
 * PROT_NONE; the zero page and KSM pages (nothing to migrate); in a COW
 * mapping (is_cow_mapping: a private one) a page mapped more than once
 * (859d4adc3 "do not trap faults on shared data section pages", v4.16:
 * page_mapcount != 1 - refcount for an anonymous page in the model, less the
 * page cache's reference for a file page); a dirty page-cache page that is
 * not swap-backed (ext4, not tmpfs), which MIGRATE_ASYNC cannot always move
 * (09a913a7a, v4.17) */
static bool prot_numa_skip(struct sim *s, const struct vm_area_struct *vma, pte_t pte)
{
	if (pte & PTE_PROTNONE)
		return true;
	uint32_t f = pte_pfn(pte);
	if (is_zero_frame(s, f))
		return true;
	const struct frame *fr = frame_of(hw_of(s), f);
	if (fr->pgflags & PG_KSM)
		return true;
	bool anon = fr->pgflags & PG_ANON;
	uint32_t mapcount = anon || !fr->refcount ? fr->refcount : fr->refcount - 1;
	if (!(vma->vm_flags & VM_SHARED) && mapcount != 1)
		return true;
	/* page_is_file_cache(): a page-cache page that is not swap-backed - an
	 * ext4 page, not a tmpfs one (fs->account_dirty tells them apart) */
	bool file_lru = !anon && vma->file && vma->file->fs->account_dirty;
	return file_lru && (fr->pgflags & PG_DIRTY);
}

/*
 * change_pte_range() (mm/mprotect.c, v5.1; cp_flags of v5.11) for the PTEs
 * of [addr, end), all in one PTE table: take the PTE lock
 * (pte_offset_map_lock), rewrite each present PTE (ptep_modify_prot_start
 * is an atomic exchange that clears it, ptep_modify_prot_commit stores the
 * new value), drop the lock. A PROT_NONE PTE counts as present (the
 * kernel's pte_present): mprotect and userfaultfd give it the new
 * protection, the NUMA scan skips it. MM_CP_PROT_NUMA makes the PTE
 * PROT_NONE; MM_CP_UFFD_WP write-protects it and sets the uffd-wp bit;
 * MM_CP_UFFD_WP_RESOLVE applies newprot (which for a private mapping is
 * read-only: the write bit is left to the fault, and a writable PTE loses
 * it) and clears the bit. Returns the PTEs it rewrote (the kernel's
 * `pages`).
 */
static uint64_t change_pte_range(struct sim *s, struct vm_area_struct *vma, uint64_t addr,
				 uint64_t end, bool writable, unsigned cp_flags)
{
	struct hw *hw = hw_of(s);
	const struct pt_geom *g = &hw->geom;
	struct mm_struct *mm = vma->vm_mm;
	pte_t *first = pte_lookup(s, mm, addr);
	if (!first)
		return 0;		/* pmd_none: no PTE table here */
	sim_step_arg(s, YP_PTE, (uint64_t)P(s, P_lock_op_ns), addr, 0);	/* the PTE lock */
	ptl_lock(s, pte_table_of(s, mm, addr));
	first = pte_lookup(s, mm, addr);
	if (!first) {
		ptl_unlock(s);
		return 0;
	}
	/* flush_tlb_batched_pending(vma->vm_mm) under the PTL (3ea277194daa,
	 * v4.13): a PTE reclaim cleared without a flush would be skipped below
	 * as not present while a CPU still caches it */
	if (machine_of(s)->policy.ubc_check_mprotect)
		flush_tlb_batched_pending(s, mm);
	pte_t *table = first - pt_index(g, g->levels - 1, addr);
	uint64_t i0 = pt_index(g, g->levels - 1, addr);
	uint64_t n = (end - addr) >> g->page_shift;
	uint64_t pages = 0;
	bool prot_numa = cp_flags & MM_CP_PROT_NUMA;
	sim_charge(s, n * (uint64_t)P(s, P_pte_scan_ns));
	for (uint64_t i = table_next_used(g, table, i0, i0 + n); i < i0 + n;
	     i = table_next_used(g, table, i + 1, i0 + n)) {
		pte_t old = table[i];
		if (!pte_present(old) && !(old & PTE_PROTNONE))
			continue;
		if (prot_numa) {
			if (prot_numa_skip(s, vma, old))
				continue;
			table[i] = pte_mkprotnone(hw->fmt, old);
		} else {
			if (old & PTE_PROTNONE)
				old = (old & ~PTE_PROTNONE) | PTE_VALID;
			pte_t pte = pte_modify_prot(hw->fmt, old, writable,
						    cp_flags & MM_CP_DIRTY_ACCT);
			if (cp_flags & MM_CP_UFFD_WP)
				pte = (pte & ~PTE_WRITE) | PTE_UFFD_WP;	/* pte_wrprotect, pte_mkuffd_wp */
			else if (cp_flags & MM_CP_UFFD_WP_RESOLVE)
				pte &= ~PTE_UFFD_WP;			/* pte_clear_uffd_wp */
			table[i] = pte;
		}
		sim_charge(s, (uint64_t)P(s, P_lock_op_ns));	/* the exchange */
		pages++;
	}
	ptl_unlock(s);
	return pages;
}

/*
 * hugetlb_change_protection() (mm/hugetlb.c, v5.1 with dff11abe280b): under
 * i_mmap_rwsem (write) a shared PMD table is unshared (huge_pmd_unshare),
 * the other PTEs changed; then, before the unlock, flush_hugetlb_tlb_range()
 * - x86's flush_tlb_range, whose freed_tables argument is the knob
 * x86_range_freed - over the PUD range when a table was unshared.
 */
static uint64_t hugetlb_change_protection(struct sim *s, struct vm_area_struct *vma,
					  uint64_t start, uint64_t end, bool writable,
					  unsigned cp_flags)
{
	struct mm_struct *mm = vma->vm_mm;
	struct hw *hw = hw_of(s);
	const struct pt_geom *g = &hw->geom;
	uint64_t pud_size = 1ull << g->pud_shift, span = g->ptrs_per_pte << g->page_shift;
	uint64_t f_start = start, f_end = end, pages = 0;
	bool shared_pmd = false;
	down_write(s, &vma->file->i_mmap_rwsem);
	for (uint64_t a = start, next; a < end; a = next) {
		next = (a & ~(span - 1)) + span;
		if (next > end || next < a)
			next = end;
		if (g->depth_pud >= 0) {
			uint32_t t = mm->pgd;
			for (int d = 0; d < g->depth_pud && t != NO_FRAME; d++) {
				pte_t e = table_of(hw, t)[pt_index(g, d, a)];
				t = pte_present(e) ? pte_pfn(e) : NO_FRAME;
			}
			if (t != NO_FRAME && huge_pmd_unshare(s, t, pt_index(g, g->depth_pud, a))) {
				shared_pmd = true;
				pages++;
				uint64_t base = a & ~(pud_size - 1);
				if (base < f_start)
					f_start = base;
				if (base + pud_size > f_end)
					f_end = base + pud_size;
				next = base + pud_size;
				continue;
			}
		}
		pages += change_pte_range(s, vma, a, next, writable, cp_flags);
	}
	/* flush before releasing i_mmap_rwsem: the unshared table's last user
	 * may free it right after */
	if (shared_pmd)
		machine_of(s)->arch->flush_tlb_range(s, &mm->context, f_start, f_end);
	else
		machine_of(s)->arch->flush_tlb_range(s, &mm->context, start, end);
	up_write(s, &vma->file->i_mmap_rwsem);
	return pages;
}

/*
 * change_protection() -> change_protection_range() (mm/mprotect.c, v5.1;
 * cp_flags as in v5.11): inc_tlb_flush_pending() (knob numa_pending: none
 * before 20841405940e); change_pte_range() per PTE table of the range; if
 * any PTE was rewritten, flush_tlb_range(vma, start, end) - the whole
 * range, whatever was present - after the last PTE lock was dropped;
 * dec_tlb_flush_pending(). Returns `pages`. The callers that hold mmap_lock
 * only for read (the NUMA scan, UFFDIO_WRITEPROTECT) let faults run between
 * a PTE change and the flush: what they may rely on meanwhile is
 * mm_tlb_flush_pending() (pte_accessible, do_wp_page). A hugetlbfs mapping goes
 * to hugetlb_change_protection().
 */
static uint64_t change_protection(struct sim *s, struct vm_area_struct *vma, uint64_t start,
				  uint64_t end, bool writable, unsigned cp_flags)
{
	struct mm_struct *mm = vma->vm_mm;
	const struct pt_geom *g = &hw_of(s)->geom;
	if ((vma->vm_flags & VM_HUGETLB) && vma->file)
		return hugetlb_change_protection(s, vma, start, end, writable, cp_flags);
	bool pending = machine_of(s)->policy.numa_pending == NUMA_PENDING_RAISED;
	uint64_t span = g->ptrs_per_pte << g->page_shift;	/* one PTE table's reach */
	/* inc_tlb_flush_pending(): an atomic on the line tlb_gather_mmu uses */
	if (pending) {
		mm->tlb_flush_pending++;
		sim_step(s, YP_PENDING_INC,
			 (uint64_t)P(s, P_lock_op_ns) + line_rmw(s, &mm->flush_pending_line));
	}
	uint64_t pages = 0;
	for (uint64_t a = start, next; a < end; a = next) {
		next = (a & ~(span - 1)) + span;	/* pmd_addr_end() */
		if (next > end || next < a)
			next = end;
		/* change_pmd_range() (v5.1): a huge PMD entry whose whole
		 * range is changed goes to change_huge_pmd(), one partly in
		 * the range is split first (__split_huge_pmd) and its PTEs
		 * changed. UFFDIO_WRITEPROTECT splits it too: the model has no
		 * uffd-wp huge entry (v5.11's change_huge_pmd would
		 * write-protect the block and mark it uffd-wp, and
		 * wp_huge_pmd hand its write fault to handle_userfault); the
		 * split leaves every subpage write-protected and uffd-wp by
		 * the PTE path, the same protection page by page. The NUMA
		 * scan makes a whole huge entry PROT_NONE (change_huge_pmd
		 * with prot_numa); one it splits gets the PTE path's rules,
		 * which skip the split page, mapped 512 times. */
		uint32_t pmd_table = huge_pmd_table(s, vma, a);
		if (pmd_table != NO_FRAME) {
			if (next - a == span &&
			    !(cp_flags & (MM_CP_UFFD_WP | MM_CP_UFFD_WP_RESOLVE))) {
				pages += change_huge_pmd(s, vma, pmd_table, a, writable,
							 cp_flags & MM_CP_PROT_NUMA);
				continue;
			}
			__split_huge_pmd(s, vma, pmd_table, a);
		}
		pages += change_pte_range(s, vma, a, next, writable, cp_flags);
	}
	/* Only flush the TLB if we actually modified any entries */
	if (pages)
		machine_of(s)->arch->flush_tlb_range(s, &mm->context, start, end);
	/* dec_tlb_flush_pending() */
	if (pending) {
		sim_step(s, YP_PENDING_DEC,
			 (uint64_t)P(s, P_lock_op_ns) + line_rmw(s, &mm->flush_pending_line));
		mm->tlb_flush_pending--;
	}
	return pages;
}

/*
 * mprotect_fixup() (mm/mprotect.c, v5.1) for mm->vmas[i] and the part
 * [start, end) of it: nothing when the flags do not change; else split off
 * what lies outside the range, set vm_flags, change_protection() with
 * dirty_accountable = vma_wants_writenotify(), and merge a file-backed VMA
 * back with neighbours of the same flags (vma_merge).
 */
static void mprotect_fixup(struct sim *s, struct mm_struct *mm, int i, uint64_t start,
			   uint64_t end, uint32_t newflags)
{
	struct vm_area_struct *vma = mm->vmas[i];
	if (newflags == vma->vm_flags)
		return;
	if (start != vma->vm_start) {
		split_vma(s, mm, i, start);
		i++;
	}
	vma = mm->vmas[i];
	if (end != vma->vm_end)
		split_vma(s, mm, i, end);
	vma = mm->vmas[i];
	vma->vm_flags = newflags;		/* and vma_set_page_prot() */
	change_protection(s, vma, start, end, page_prot_writable(vma),
			  vma_wants_writenotify(vma) ? MM_CP_DIRTY_ACCT : 0);
	if (vma->file)
		vma_merge_file_neighbours(s, mm, i);
}

/*
 * mprotect(addr, len, prot) -> do_mprotect_pkey() (mm/mprotect.c, v5.1):
 * EINVAL for an unaligned start or a range past TASK_SIZE; mmap_sem held for
 * write (down_write_killable); ENOMEM when the range starts or continues in
 * a hole (the VMAs before the hole keep their new protection, as in the
 * kernel); mprotect_fixup() per VMA piece.
 */
int sys_mprotect(struct sim *s, uint64_t addr, uint64_t len, int prot)
{
	struct mm_struct *mm = current_task(s)->mm;
	struct kernel *k = kernel_of(s);
	uint64_t ps = hw_of(s)->geom.page_size;
	int ret = 0;
	sim_set_mode(s, MODE_SYS);
	sim_step_arg(s, YP_SYSCALL, syscall_cost(s), SYS_MPROTECT, addr);
	kernel_entry(s);
	uint64_t cookie = k->hooks && k->hooks->syscall_enter
				  ? k->hooks->syscall_enter(k->hooks_ctx, SYS_MPROTECT) : 0;
	len = (len + ps - 1) & ~(ps - 1);
	uint64_t end = addr + len;
	if ((addr & (ps - 1)) || end < addr || end > hw_of(s)->geom.task_size ||
	    (prot & ~(TLBSIM_PROT_READ | TLBSIM_PROT_WRITE)) || !(prot & TLBSIM_PROT_READ)) {
		ret = -1;
		goto out;
	}
	if (len == 0)
		goto out;
	uint32_t bits = calc_vm_prot_bits(prot);
	down_write(s, &mm->mmap_sem);
	sim_charge(s, (uint64_t)P(s, P_vma_op_ns));	/* find_vma, the walk's setup */
	for (uint64_t nstart = addr; nstart < end;) {
		int i = vma_index(mm, nstart);
		if (i >= mm->nr_vmas || mm->vmas[i]->vm_start > nstart) {
			ret = -1;			/* ENOMEM: a hole */
			break;
		}
		struct vm_area_struct *vma = mm->vmas[i];
		uint64_t tmp = vma->vm_end < end ? vma->vm_end : end;
		uint32_t newflags = (vma->vm_flags & ~(VM_READ | VM_WRITE)) | bits;
		mprotect_fixup(s, mm, i, nstart, tmp, newflags);
		nstart = tmp;
	}
	up_write(s, &mm->mmap_sem);
	if (k->hooks && k->hooks->range_unmapped)
		k->hooks->range_unmapped(k->hooks_ctx, mm, addr, end, SYS_MPROTECT, cookie);
out:
	sim_set_mode(s, MODE_USER);
	return ret;
}

/*
 * task_numa_work() (kernel/sched/fair.c, v5.11) over [addr, addr + len):
 * mmap_lock for read (the kernel's down_read_trylock: the scan is skipped
 * when it fails; here it waits), then change_prot_numa() (mm/mempolicy.c,
 * v5.11: change_protection(vma, start, end, PAGE_NONE, MM_CP_PROT_NUMA)) on
 * each VMA piece of the range that NUMA balancing scans: not a read-only
 * file mapping (shared library pages are not migrated). There is no scan
 * period, no scan window and no node placement: the statement is one
 * scan step over the named range, and `misplaced` says whether the hinting
 * faults that follow find the pages on a remote node and migrate them
 * (numa_migrate_prep -> should_numa_migrate_memory). The I2 point at the
 * return is mprotect's: the scan flushed the range before it returns
 * (flush_tlb_range in change_protection_range), in every kernel version.
 */
int64_t numa_scan(struct sim *s, uint64_t addr, uint64_t len, bool misplaced)
{
	struct mm_struct *mm = current_task(s)->mm;
	struct kernel *k = kernel_of(s);
	uint64_t ps = hw_of(s)->geom.page_size;
	addr &= ~(ps - 1);
	len = (len + ps - 1) & ~(ps - 1);
	uint64_t end = addr + len;
	if (end < addr || end > hw_of(s)->geom.task_size)
		return -1;
	sim_set_mode(s, MODE_SYS);
	sim_step_arg(s, YP_PROT, (uint64_t)P(s, P_lock_op_ns), addr,
		     (uint64_t)PROT_STEP_NUMA_SCAN | (uint64_t)mm->tlb_flush_pending << 8);
	uint64_t cookie = k->hooks && k->hooks->syscall_enter
				  ? k->hooks->syscall_enter(k->hooks_ctx, SYS_NUMA_SCAN) : 0;
	down_read(s, &mm->mmap_sem);
	mm->numa_misplaced = misplaced;
	int64_t pages = 0;
	for (uint64_t a = addr; a < end;) {
		int i = vma_index(mm, a);
		if (i >= mm->nr_vmas || mm->vmas[i]->vm_start >= end)
			break;
		struct vm_area_struct *vma = mm->vmas[i];
		uint64_t from = vma->vm_start > a ? vma->vm_start : a;
		uint64_t to = vma->vm_end < end ? vma->vm_end : end;
		/* task_numa_work's VMA skips: not migratable (VM_PFNMAP; VM_IO
		 * is not modelled), hugetlbfs, VM_MIXEDMAP, a read-only file
		 * mapping, an inaccessible one */
		if (!(vma->vm_flags & (VM_PFNMAP | VM_MIXEDMAP | VM_HUGETLB)) &&
		    !(vma->file && !(vma->vm_flags & VM_WRITE)) && (vma->vm_flags & VM_READ))
			pages += (int64_t)change_protection(s, vma, from, to, false,
							    MM_CP_PROT_NUMA);
		a = to;
	}
	up_read(s, &mm->mmap_sem);
	if (k->hooks && k->hooks->range_unmapped)
		k->hooks->range_unmapped(k->hooks_ctx, mm, addr, end, SYS_NUMA_SCAN, cookie);
	sim_set_mode(s, MODE_USER);
	return pages;
}

/*
 * ioctl(UFFDIO_WRITEPROTECT) -> userfaultfd_writeprotect() ->
 * mwriteprotect_range() (fs/userfaultfd.c, mm/userfaultfd.c, v5.11):
 * mmap_lock for READ; the range must lie in one VMA (find_dst_vma), an
 * anonymous one in v5.11 (shmem came in v5.19), registered for
 * write-protect: here registration (UFFDIO_REGISTER with
 * UFFDIO_REGISTER_MODE_WP, which sets VM_UFFD_WP) is implied by the first
 * call on the VMA; then change_protection() with MM_CP_UFFD_WP (wp) or
 * MM_CP_UFFD_WP_RESOLVE, newprot vm_get_page_prot() of the VMA's flags
 * (without VM_WRITE for wp): read-only either way for a private mapping.
 * The range flush follows the last PTE lock, tlb_flush_pending raised
 * meanwhile, and faults run concurrently (mmap_lock is shared): a write
 * fault may copy a page (do_wp_page) whose old PTE a CPU still caches
 * writable, unless do_wp_page flushes first (knob uffd_wp_flush,
 * 6ce64428d621). The I2 point at the return is mprotect's.
 */
int sys_uffd_writeprotect(struct sim *s, uint64_t addr, uint64_t len, bool wp)
{
	struct mm_struct *mm = current_task(s)->mm;
	struct kernel *k = kernel_of(s);
	uint64_t ps = hw_of(s)->geom.page_size;
	uint64_t end = addr + len;
	if ((addr & (ps - 1)) || (len & (ps - 1)) || !len || end < addr ||
	    end > hw_of(s)->geom.task_size)
		return -1;				/* validate_range: EINVAL */
	int ret = -1;
	sim_set_mode(s, MODE_SYS);
	sim_step_arg(s, YP_SYSCALL, syscall_cost(s), SYS_UFFD_WP, addr);
	kernel_entry(s);
	uint64_t cookie = k->hooks && k->hooks->syscall_enter
				  ? k->hooks->syscall_enter(k->hooks_ctx, SYS_UFFD_WP) : 0;
	down_read(s, &mm->mmap_sem);
	sim_trace(s, YP_PROT, addr,
		  (uint64_t)PROT_STEP_UFFD_WP | (uint64_t)mm->tlb_flush_pending << 8);
	struct vm_area_struct *vma = find_vma(mm, addr);
	if (vma && vma->vm_start <= addr && end <= vma->vm_end && !vma->file &&
	    !(vma->vm_flags & VM_SHARED)) {
		vma->vm_flags |= VM_UFFD_WP;		/* UFFDIO_REGISTER_MODE_WP */
		change_protection(s, vma, addr, end, false,
				  wp ? MM_CP_UFFD_WP : MM_CP_UFFD_WP_RESOLVE);
		ret = 0;
	}
	up_read(s, &mm->mmap_sem);
	if (k->hooks && k->hooks->range_unmapped)
		k->hooks->range_unmapped(k->hooks_ctx, mm, addr, end, SYS_UFFD_WP, cookie);
	sim_set_mode(s, MODE_USER);
	return ret;
}
