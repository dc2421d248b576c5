/*
 * mmap.c - address-space layout and the mapping system calls.
 *
 * Mirrors mm/mmap.c (v5.1): get_unmapped_area with a hint and top-down
 * placement (unmapped_area_topdown), do_mmap for private and shared anonymous
 * mappings (shmem_zero_setup), __vm_munmap/__do_munmap with the v4.20
 * downgrade_write (dd2283f2605e) and unmap_region; mm/madvise.c (v5.1)
 * madvise(MADV_DONTNEED) under the read lock via zap_page_range.
 *
 * VMAs are kept in an array sorted by vm_start (the rbtree/list of the
 * kernel; the layouts modelled here have tens of VMAs). Anonymous VMAs are
 * not merged (vma_merge is not modelled; see docs/design.md).
 */
#include <stdlib.h>
#include <string.h>

#include "sim/grow.h"
#include "sim/sim.h"

#define FIRST_USER_ADDRESS 0ull
#define USER_PGTABLES_CEILING 0ull

/* mm_init() + mm_alloc_pgd() (kernel/fork.c) and arch_pick_mmap_layout()
 * (mm/util.c, no randomisation); asid and ctx_id as the arch allocators give */
int mm_init(struct sim *s, struct mm_struct *mm, int id)
{
	memset(mm, 0, sizeof(*mm));
	mm->id = id;
	mm->users = 1;
	mm->asid = (uint32_t)id + 1;
	mm->ctx_id = s->next_ctx_id++;
	mm->tlb_gen = 1;
	mm->cpumask = calloc(s->cpumask_words, sizeof(uint64_t));
	if (!mm->cpumask)
		return TLBSIM_ENOMEM;
	mm->pgd = frame_alloc(s, FRAME_PGTABLE, 0);
	/* mmap_base: TASK_SIZE - gap, gap = 128 MiB minimum (8 MiB stack
	 * rlimit), no randomisation (setarch -R) */
	mm->mmap_base = (s->hw.geom.task_size - (128ull << 20)) & ~(s->hw.geom.page_size - 1);
	return 0;
}

void mm_destroy(struct sim *s, struct mm_struct *mm)
{
	free(mm->vmas);		/* the VMAs themselves are sim objects */
	free(mm->cpumask);
	memset(mm, 0, sizeof(*mm));
}

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

/* find_vma(): first VMA with vm_end > addr, or NULL */
struct vm_area_struct *find_vma(struct mm_struct *mm, uint64_t addr)
{
	int i = vma_index(mm, addr);
	return i < mm->nr_vmas ? mm->vmas[i] : NULL;
}

/* vm_area_alloc() / vm_area_free() (kernel/fork.c, v4.18+) */
static struct vm_area_struct *vm_area_alloc(struct sim *s)
{
	struct vm_area_struct *v = s->pool.free;
	if (v)
		s->pool.free = v->next_free;
	else
		v = sim_obj_alloc(s, sizeof(*v));
	memset(v, 0, sizeof(*v));
	return v;
}

static void vm_area_free(struct sim *s, struct vm_area_struct *v)
{
	v->next_free = s->pool.free;
	s->pool.free = v;
}

static void vma_insert_at(struct sim *s, struct mm_struct *mm, int i, struct vm_area_struct *v)
{
	if (GROW(&mm->vmas, &mm->cap_vmas, (size_t)mm->nr_vmas, (size_t)mm->nr_vmas + 1, 16))
		sim_bug(s, __FILE__, __LINE__, "out of host memory for VMAs");
	memmove(&mm->vmas[i + 1], &mm->vmas[i], (size_t)(mm->nr_vmas - i) * sizeof(*mm->vmas));
	mm->vmas[i] = v;
	mm->nr_vmas++;
}

/* vma_link() -> __vma_link_list()/__vma_link_rb() (mm/mmap.c, v5.1) */
static void vma_link(struct sim *s, struct mm_struct *mm, struct vm_area_struct *v)
{
	vma_insert_at(s, mm, vma_index(mm, v->vm_start), v);
}

/* ---- shmem ---- */
/* shmem_zero_setup() -> shmem_kernel_file_setup() (mm/shmem.c): a new shmem
 * object per MAP_SHARED|MAP_ANONYMOUS mapping */
static struct shmem_obj *shmem_alloc(struct sim *s)
{
	struct shmem_obj *o = s->pool.shm_free;
	if (o) {
		s->pool.shm_free = o->next_free;
	} else {
		o = sim_obj_alloc(s, sizeof(*o));
		if (GROW(&s->all_shm, &s->cap_shm, s->nshm, (size_t)s->nshm + 1, 16))
			sim_bug(s, __FILE__, __LINE__, "out of host memory for shmem");
		s->all_shm[s->nshm++] = o;
	}
	o->refs = 1;
	o->nr = 0;
	o->next_free = NULL;
	return o;
}

/* fput() of the last reference -> shmem_evict_inode(): truncate and free
 * the pages the page cache holds. */
void shmem_put(struct sim *s, struct shmem_obj *o)
{
	if (--o->refs)
		return;
	if (o->nr)
		sim_charge(s, o->nr * (uint64_t)P(s, P_page_free_ns));
	for (uint32_t i = 0; i < o->nr; i++) {
		struct frame *fr = frame_of(&s->hw, o->pages[i].frame);
		if (--fr->refcount == 0)
			frame_free(s, o->pages[i].frame);
	}
	o->nr = 0;
	o->next_free = s->pool.shm_free;
	s->pool.shm_free = o;
}

/* ---- get_unmapped_area ---- */

static bool range_free(struct mm_struct *mm, uint64_t addr, uint64_t len)
{
	struct vm_area_struct *v = find_vma(mm, addr);
	return !v || addr + len <= v->vm_start;
}

/* unmapped_area_topdown(): the highest gap below mmap_base that fits len */
static uint64_t unmapped_area_topdown(struct sim *s, struct mm_struct *mm, uint64_t len)
{
	uint64_t high = mm->mmap_base;
	int i = vma_index(mm, high);	/* first VMA ending above mmap_base */
	if (i < mm->nr_vmas && mm->vmas[i]->vm_start < high)
		high = mm->vmas[i]->vm_start;
	for (int j = i - 1; j >= -1; j--) {
		uint64_t low = j >= 0 ? mm->vmas[j]->vm_end : s->hw.geom.page_size;
		if (high >= low && high - low >= len)
			return high - len;
		if (j >= 0)
			high = mm->vmas[j]->vm_start;
	}
	return TLBSIM_EINVAL_VA;
}

/* get_unmapped_area() -> arch_get_unmapped_area_topdown() (v5.1): use the
 * hint if the range is free, otherwise search top-down. */
static uint64_t get_unmapped_area(struct sim *s, struct mm_struct *mm, uint64_t hint,
				  uint64_t len)
{
	sim_charge(s, (uint64_t)P(s, P_unmapped_area_ns));
	uint64_t ps = s->hw.geom.page_size;
	if (hint) {
		hint = (hint + ps - 1) & ~(ps - 1);
		if (hint + len <= s->hw.geom.task_size && hint + len > hint &&
		    range_free(mm, hint, len))
			return hint;
	}
	return unmapped_area_topdown(s, mm, len);
}

/* mmap(hint, len, PROT_READ|PROT_WRITE, MAP_ANONYMOUS|flags) -> do_mmap()
 * (v5.1). Returns the address or TLBSIM_EINVAL_VA. */
uint64_t sys_mmap(struct sim *s, uint64_t hint, uint64_t len, int flags)
{
	struct mm_struct *mm = sim_current(s)->mm;
	uint64_t ps = s->hw.geom.page_size;
	sim_set_mode(s, MODE_SYS);
	sim_step_arg(s, YP_SYSCALL, (uint64_t)P(s, P_syscall_ns), 0, hint);
	len = (len + ps - 1) & ~(ps - 1);
	uint64_t addr = TLBSIM_EINVAL_VA;
	if (len == 0)
		goto out;
	down_write(s, &mm->mmap_sem);
	addr = get_unmapped_area(s, mm, hint, len);
	if (addr != TLBSIM_EINVAL_VA) {
		struct vm_area_struct *v = vm_area_alloc(s);
		v->vm_start = addr;
		v->vm_end = addr + len;
		v->vm_flags = VM_READ | VM_WRITE;
		if (flags & TLBSIM_MAP_SHARED) {
			v->vm_flags |= VM_SHARED;
			v->shm = shmem_alloc(s);	/* shmem_zero_setup() */
		}
		sim_charge(s, (uint64_t)P(s, P_vma_op_ns));
		vma_link(s, mm, v);
	}
	up_write(s, &mm->mmap_sem);
out:
	sim_set_mode(s, MODE_USER);
	return addr;
}

/* __split_vma(): split vmas[i] at addr; the new VMA is the upper part. */
static void split_vma(struct sim *s, struct mm_struct *mm, int i, uint64_t addr)
{
	struct vm_area_struct *v = mm->vmas[i];
	struct vm_area_struct *n = vm_area_alloc(s);
	*n = *v;
	n->vm_start = addr;
	v->vm_end = addr;
	if (n->shm) {
		n->shm->refs++;
		n->vm_pgoff = v->vm_pgoff + ((addr - v->vm_start) >> s->hw.geom.page_shift);
	}
	sim_charge(s, (uint64_t)P(s, P_vma_op_ns));
	vma_insert_at(s, mm, i + 1, n);
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
	/* free_pgtables(tlb, vma, floor, ceiling) (mm/memory.c, v5.1): runs of
	 * VMAs closer than PMD_SIZE share one free_pgd_range */
	uint64_t floor = prev ? prev->vm_end : FIRST_USER_ADDRESS;
	uint64_t ceiling = next ? next->vm_start : USER_PGTABLES_CEILING;
	uint64_t pmd_size = 1ull << s->hw.geom.pmd_shift;
	for (int i = 0; i < n;) {
		uint64_t addr = vmas[i]->vm_start;
		int j = i;
		while (j + 1 < n && vmas[j + 1]->vm_start <= vmas[j]->vm_end + pmd_size)
			j++;
		free_pgd_range(s, &tlb, addr, vmas[j]->vm_end, floor,
			       j + 1 < n ? vmas[j + 1]->vm_start : ceiling);
		i = j + 1;
	}
	tlb_finish_mmu(s, &tlb, start, end);
}

/*
 * munmap(addr, len) -> __vm_munmap(addr, len, downgrade = true) ->
 * __do_munmap() (mm/mmap.c, v4.20..v5.1).
 */
int sys_munmap(struct sim *s, uint64_t addr, uint64_t len)
{
	struct mm_struct *mm = sim_current(s)->mm;
	uint64_t ps = s->hw.geom.page_size;
	int ret = 0;
	sim_set_mode(s, MODE_SYS);
	sim_step_arg(s, YP_SYSCALL, (uint64_t)P(s, P_syscall_ns), 1, addr);
	uint64_t call_epoch = ++s->map_epoch;
	len = (len + ps - 1) & ~(ps - 1);
	if ((addr & (ps - 1)) || len == 0 || addr + len > s->hw.geom.task_size) {
		ret = -1;
		goto out;
	}
	uint64_t start = addr, end = addr + len;
	down_write(s, &mm->mmap_sem);
	int i = vma_index(mm, start);
	if (i >= mm->nr_vmas || mm->vmas[i]->vm_start >= end) {
		up_write(s, &mm->mmap_sem);
		goto out;
	}
	sim_charge(s, (uint64_t)P(s, P_vma_op_ns));
	if (mm->vmas[i]->vm_start < start) {
		split_vma(s, mm, i, start);
		i++;
	}
	int last = vma_index(mm, end - 1);
	if (last < mm->nr_vmas && mm->vmas[last]->vm_start < end && mm->vmas[last]->vm_end > end)
		split_vma(s, mm, last, end);
	int j = vma_index(mm, end);	/* first VMA at or above end */
	while (j < mm->nr_vmas && mm->vmas[j]->vm_start < end)
		j++;
	int n = j - i;

	/* detach_vmas_to_be_unmapped() */
	struct vm_area_struct *detached[16];
	struct vm_area_struct **dv = n <= 16 ? detached
						: sim_obj_alloc(s, (size_t)n * sizeof(*dv));
	memcpy(dv, &mm->vmas[i], (size_t)n * sizeof(*dv));
	struct vm_area_struct *prev = i > 0 ? mm->vmas[i - 1] : NULL;
	struct vm_area_struct *next = j < mm->nr_vmas ? mm->vmas[j] : NULL;
	memmove(&mm->vmas[i], &mm->vmas[j], (size_t)(mm->nr_vmas - j) * sizeof(*mm->vmas));
	mm->nr_vmas -= n;

	downgrade_write(s, &mm->mmap_sem);
	unmap_region(s, mm, dv, n, prev, next, start, end);

	/* remove_vma_list(): drop file references, free the VMAs */
	for (int k = 0; k < n; k++) {
		if (dv[k]->shm)
			shmem_put(s, dv[k]->shm);
		sim_charge(s, (uint64_t)P(s, P_vma_op_ns) / 2);
		vm_area_free(s, dv[k]);
	}
	up_read(s, &mm->mmap_sem);
	check_range_unmapped(s, mm, start, end, call_epoch, "munmap");
out:
	sim_set_mode(s, MODE_USER);
	return ret;
}

/* zap_page_range(vma, start, size) (mm/memory.c, v5.1) */
static void zap_page_range(struct sim *s, struct vm_area_struct *vma, uint64_t start,
			   uint64_t size)
{
	struct mmu_gather tlb;
	uint64_t end = start + size;
	tlb_gather_mmu(s, &tlb, sim_current(s)->mm, start, end);
	unmap_single_vma(s, &tlb, vma, start, end);
	tlb_finish_mmu(s, &tlb, start, end);
}

typedef void (*madvise_vma_fn)(struct sim *s, struct vm_area_struct *v, uint64_t start,
			       uint64_t end, void *arg);

/* madvise_walk_vmas() (mm/madvise.c; the loop of do_madvise() in v5.1): call
 * fn for each VMA piece of [start, end); -1 (ENOMEM) on a hole. */
static int madvise_walk_vmas(struct sim *s, struct mm_struct *mm, uint64_t start, uint64_t end,
			     madvise_vma_fn fn, void *arg)
{
	for (uint64_t a = start; a < end;) {
		struct vm_area_struct *v = find_vma(mm, a);
		if (!v || v->vm_start >= end)
			return -1;
		uint64_t st = a > v->vm_start ? a : v->vm_start;
		uint64_t en = end < v->vm_end ? end : v->vm_end;
		fn(s, v, st, en, arg);
		a = en;
	}
	return 0;
}

static void madvise_dontneed_single_vma(struct sim *s, struct vm_area_struct *v, uint64_t st,
					uint64_t en, void *arg)
{
	(void)arg;
	zap_page_range(s, v, st, en - st);
}

/* madvise(addr, len, MADV_DONTNEED) (mm/madvise.c, v5.1): mmap_sem held for
 * read; madvise_dontneed_single_vma() per VMA. */
int sys_madvise_dontneed(struct sim *s, uint64_t addr, uint64_t len)
{
	struct mm_struct *mm = sim_current(s)->mm;
	uint64_t ps = s->hw.geom.page_size;
	int ret = 0;
	sim_set_mode(s, MODE_SYS);
	sim_step_arg(s, YP_SYSCALL, (uint64_t)P(s, P_syscall_ns), 2, addr);
	uint64_t call_epoch = ++s->map_epoch;
	if (addr & (ps - 1)) {
		ret = -1;
		goto out;
	}
	len = (len + ps - 1) & ~(ps - 1);
	uint64_t end = addr + len;
	down_read(s, &mm->mmap_sem);
	ret = madvise_walk_vmas(s, mm, addr, end, madvise_dontneed_single_vma, NULL);
	up_read(s, &mm->mmap_sem);
	check_range_unmapped(s, mm, addr, end, call_epoch, "madvise(MADV_DONTNEED)");
out:
	sim_set_mode(s, MODE_USER);
	return ret;
}

/*
 * madvise(addr, len, MADV_FREE) -> madvise_free_single_vma() ->
 * madvise_free_pte_range() (mm/madvise.c, v4.5..v5.1): under the read lock,
 * every present PTE of an exclusively owned private anonymous page that is
 * young or dirty is cleared, rebuilt old and clean, and recorded in the
 * gather; the page becomes lazily freeable. When the call returns the kernel
 * has judged those pages clean (I3 is checked against that judgement).
 */
struct madv_free_seen {
	uint32_t frame[64];
	uint64_t va[64], epoch[64];
	int n;
};

/* madvise_free_single_vma() -> madvise_free_pte_range() */
static void madvise_free_single_vma(struct sim *s, struct vm_area_struct *v, uint64_t st,
				    uint64_t en, void *arg)
{
	struct madv_free_seen *seen = arg;
	struct mm_struct *mm = sim_current(s)->mm;
	uint64_t ps = s->hw.geom.page_size;
	if (v->shm)
		return;		/* MADV_FREE applies to private anonymous memory */
	struct mmu_gather tlb;
	tlb_gather_mmu(s, &tlb, mm, st, en);
	tlb_start_vma(s, &tlb, v);
	for (uint64_t p = st; p < en; p += ps) {
		pte_t *ptep = pte_lookup(s, mm, p);
		if (!ptep || !pte_present(*ptep))
			continue;
		uint32_t f = pte_pfn(*ptep);
		if (frame_of(&s->hw, f)->refcount != 1)
			continue;	/* not exclusively mapped */
		sim_step_arg(s, YP_ZAP_PTE, (uint64_t)P(s, P_pte_zap_ns), p, 1);
		ptep = pte_lookup(s, mm, p);
		if (!ptep || !pte_present(*ptep) || pte_pfn(*ptep) != f)
			continue;
		if (seen->n < 64) {
			seen->va[seen->n] = p;
			seen->epoch[seen->n] = ++s->map_epoch;
			seen->frame[seen->n++] = f;
		}
		pte_t e = *ptep;
		if (!(e & (PTE_YOUNG | PTE_DIRTY)))
			continue;	/* already old and clean: nothing recorded */
		e &= ~(PTE_YOUNG | PTE_DIRTY);		/* pte_mkold(pte_mkclean()) */
		if (s->profile->arch == ARCH_ARM64)
			e |= PTE_RDONLY;
		*ptep = e;
		tlb_remove_tlb_entry(&tlb, p, ps);
	}
	tlb_end_vma(s, &tlb, v);
	tlb_finish_mmu(s, &tlb, st, en);
}

int sys_madvise_free(struct sim *s, uint64_t addr, uint64_t len)
{
	struct mm_struct *mm = sim_current(s)->mm;
	uint64_t ps = s->hw.geom.page_size;
	struct madv_free_seen seen = {.n = 0};
	int ret = 0;
	sim_set_mode(s, MODE_SYS);
	sim_step_arg(s, YP_SYSCALL, (uint64_t)P(s, P_syscall_ns), 3, addr);
	if (addr & (ps - 1)) {
		ret = -1;
		goto out;
	}
	len = (len + ps - 1) & ~(ps - 1);
	down_read(s, &mm->mmap_sem);
	ret = madvise_walk_vmas(s, mm, addr, addr + len, madvise_free_single_vma, &seen);
	up_read(s, &mm->mmap_sem);
	/* the call has completed: the pages it saw clean are lazily freeable */
	for (int i = 0; i < seen.n; i++) {
		pte_t *ptep = pte_lookup(s, mm, seen.va[i]);
		struct frame *fr = frame_of(&s->hw, seen.frame[i]);
		if (ptep && pte_present(*ptep) && pte_pfn(*ptep) == seen.frame[i] &&
		    !(*ptep & PTE_DIRTY) && fr->dirty_epoch < seen.epoch[i])
			fr->lazyfree = 1;	/* judged clean: not re-dirtied since we looked */
	}
out:
	sim_set_mode(s, MODE_USER);
	return ret;
}
