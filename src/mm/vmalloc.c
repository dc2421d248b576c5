/*
 * vmalloc.c - the vmalloc allocator and its lazy purge, mm/vmalloc.c as of
 * v6.10 (vmap nodes and pools: 282631cb2447 and its series, v6.9), with the
 * v6.3..v6.8 purge as the vmap_purge=global knob, and the KASAN shadow
 * release order of the kasan_flush knob.
 *
 * An area [va_start, va_end) includes its guard page. Its life:
 *   BUSY (mapped) -vfree-> LAZY on a node's lazy list (PTEs cleared, pages
 *   freed, no flush: window W1) -drain-> PURGING -> POOLED in a node's pool
 *   of its size (reusable by node_alloc at once) or merged into the global
 *   free space (reusable by __alloc_vmap_area).
 * A purge (drain_vmap_area_work, when vmap_lazy_nr exceeds lazy_max_pages())
 * splices every node's lazy list, flushes the whole lazy range once
 * (flush_tlb_kernel_range), then runs purge_vmap_node per node - inline, or
 * on helper kworkers when the backlog is several times lazy_max_pages().
 * KASAN: each area's shadow is released there; kasan_flush says when it is
 * flushed: per area (v6.10), once per node before any area goes back
 * (9e9e085effe9), or once per node after the areas went back to the pools
 * (the withdrawn draft - the I5 hazard the checker finds).
 *
 * Data structures: the free space as address-sorted disjoint intervals in
 * chunks (freespace.h; lowest aligned fit, as find_vmap_lowest_match), busy
 * areas in an open-addressed table keyed by address (the busy trees),
 * lazy lists appended and sorted by address when a purge splices them (the
 * kernel inserts in order, insert_vmap_area), pools LIFO lists.
 * The short spinlocks (lazy, pool, busy, page_table_lock) are charged as
 * lock_op_ns steps without contention; free_vmap_area_lock is a spinlock
 * (contention matters in the v6.8 purge) and vmap_purge_lock a mutex.
 */
#include <stdlib.h>
#include <string.h>

#include "mm/freespace.h"
#include "mm/mm.h"
#include "mm/points.h"
#include "sim/grow.h"

#define MAX_VA_SIZE_PAGES 256

enum va_state { VA_BUSY, VA_LAZY, VA_PURGING, VA_POOLED, VA_FREE };
enum vmap_step { VS_ALLOC, VS_VFREE, VS_POOL_RETURN, VS_FREE_TREE, VS_LAZY, VS_POOL_TAKE };

struct vmap_area {
	uint64_t va_start, va_end;
	uint32_t vn_id;			/* encode_vn_id(): node + 1; 0 = none */
	uint8_t state;			/* enum va_state */
	uint32_t nr_pages;		/* backing pages (vmalloc) */
	uint32_t *pages;
	size_t cap_pages;
	struct vmap_area *next;		/* pool list / descriptor free list */
};

/* an area list (a node's lazy or purge list; the v6.8 global lazy tree) */
struct va_list_ {
	struct vmap_area **a;
	uint32_t n;
	size_t cap;
};

struct vmap_node {
	struct {
		struct vmap_area *head, *tail;
		uint32_t len;
	} pool[MAX_VA_SIZE_PAGES];
	struct va_list_ lazy, purge;
	struct va_list_ local;		/* purge_vmap_node's scratch list */
	bool skip_populate;
	struct work_struct purge_work;	/* a helper's purge_vmap_node */
};

/* vmap_purge_lock: a mutex, here a sleeping lock with FIFO hand-off (the
 * optimistic spinning of mutex_lock is not modelled) */
struct mutex {
	bool held;
	struct task *wait_head, *wait_tail;
};

/* free_vmap_area_lock: a spinlock with FIFO hand-off */
struct spinlock {
	bool held;
	struct task *wait_head, *wait_tail;
};

struct deferred_free {		/* vfree_deferred: per CPU */
	uint64_t *addr;
	uint32_t n;
	size_t cap;
	struct work_struct wq;
	int cpu;
};

struct vmap {
	uint32_t nr_nodes;
	struct vmap_node *nodes;
	struct freespace fs;		/* free_vmap_area_root */
	struct vmap_area **busy;	/* open addressing by va_start; NULL empty */
	uint32_t busy_cap, nbusy;
	struct vmap_area *desc_free;
	struct vmap_area **all;		/* every descriptor (their page arrays) */
	uint32_t nall;
	size_t cap_all;
	uint64_t lazy_nr;		/* vmap_lazy_nr, pages */
	struct va_list_ global_lazy;	/* vmap_purge=global */
	/* scratch of the purge (serialised by vmap_purge_lock): host memory
	 * owned here, so a run stopped inside a purge frees it */
	struct va_list_ scratch;
	uint32_t *todo, *queued;
	size_t cap_todo, cap_queued;
	struct work_struct drain_work;
	struct mutex purge_lock;	/* vmap_purge_lock */
	struct spinlock free_lock;	/* free_vmap_area_lock */
	struct deferred_free *deferred;	/* per CPU */
};

/* ---- small helpers ---- */

static inline uint64_t page_size(struct sim *s)
{
	return hw_of(s)->geom.page_size;
}

static inline uint64_t va_pages(struct sim *s, const struct vmap_area *va)
{
	return (va->va_end - va->va_start) >> hw_of(s)->geom.page_shift;
}

/* lazy_max_pages(): fls(num_online_cpus()) * (32 MiB / PAGE_SIZE) */
static uint64_t lazy_max_pages(struct sim *s)
{
	int n = s->nr_cpus, fls = 0;
	while (n) {
		fls++;
		n >>= 1;
	}
	return (uint64_t)fls * ((32ull << 20) >> hw_of(s)->geom.page_shift);
}

static void spin_lock(struct sim *s, struct spinlock *l)
{
	sim_step_arg(s, YP_KLOCK, (uint64_t)P(s, P_lock_op_ns), 0, 0);
	if (!l->held) {
		l->held = true;
		return;
	}
	q_append(&l->wait_head, &l->wait_tail, current_task(s));
	sim_spin_wait(s);	/* the unlocker hands the lock over */
}

static void spin_unlock(struct sim *s, struct spinlock *l)
{
	if (!l->wait_head) {
		l->held = false;
		return;
	}
	struct task *t = q_pop(&l->wait_head, &l->wait_tail);
	sim_wake(s, &t->thread, (uint64_t)P(s, P_lock_op_ns));
}

static void mutex_lock(struct sim *s, struct mutex *m)
{
	sim_step_arg(s, YP_KLOCK, (uint64_t)P(s, P_lock_op_ns), 1, 0);
	if (!m->held) {
		m->held = true;
		return;
	}
	q_append(&m->wait_head, &m->wait_tail, current_task(s));
	sim_sleep(s);		/* the unlocker hands the mutex over */
}

static void mutex_unlock(struct sim *s, struct mutex *m)
{
	if (!m->wait_head) {
		m->held = false;
		return;
	}
	struct task *t = q_pop(&m->wait_head, &m->wait_tail);
	sim_wake(s, &t->thread, (uint64_t)P(s, P_wakeup_ns));
}

/* insert_vmap_area() onto a lazy list: the kernel keeps it address-sorted
 * (an rb-tree); here the area is appended and the list sorted once when a
 * purge splices it (list_sort_by_addr), the same order at O(n log n) per
 * purge instead of a memmove per vfree */
static void list_append(struct sim *s, struct va_list_ *l, struct vmap_area *va)
{
	if (GROW(&l->a, &l->cap, l->n, (size_t)l->n + 1, 64))
		sim_oom(s, "vmap lists");
	l->a[l->n++] = va;
}

static int va_cmp_start(const void *a, const void *b)
{
	const struct vmap_area *x = *(const struct vmap_area *const *)a;
	const struct vmap_area *y = *(const struct vmap_area *const *)b;
	return x->va_start < y->va_start ? -1 : x->va_start > y->va_start;
}

/* va_start is unique among live areas: the sort is deterministic */
static void list_sort_by_addr(struct va_list_ *l)
{
	if (l->n > 1)
		qsort(l->a, l->n, sizeof(*l->a), va_cmp_start);
}

/* ---- the allocator's state ---- */

static void drain_vmap_area_work(struct sim *s, struct work_struct *w);
static void purge_vmap_node_work(struct sim *s, struct work_struct *w);
static void delayed_vfree_work(struct sim *s, struct work_struct *w);

/* vmap_init_nodes() / vmalloc_init() (v6.9+): nr_vmap_nodes = the CPU count
 * clamped to 1..128 (64-bit); the whole vmalloc range free */
static struct vmap *vmap_get(struct sim *s)
{
	struct kernel *k = kernel_of(s);
	if (k->vmap)
		return k->vmap;
	struct vmap *v = kernel_obj_alloc(s, sizeof(*v));
	if (!v)
		return NULL;
	v->nr_nodes = (uint32_t)(s->nr_cpus < 1 ? 1 : s->nr_cpus > 128 ? 128 : s->nr_cpus);
	if (machine_of(s)->policy.vmap_purge == VMAP_PURGE_GLOBAL)
		v->nr_nodes = 1;
	v->nodes = kernel_obj_alloc(s, v->nr_nodes * sizeof(*v->nodes));
	v->deferred = kernel_obj_alloc(s, (size_t)s->nr_cpus * sizeof(*v->deferred));
	if (!v->nodes || !v->deferred)
		return NULL;
	for (uint32_t i = 0; i < v->nr_nodes; i++)
		v->nodes[i].purge_work.fn = purge_vmap_node_work;
	for (int c = 0; c < s->nr_cpus; c++) {
		v->deferred[c].wq.fn = delayed_vfree_work;
		v->deferred[c].cpu = c;
	}
	v->drain_work.fn = drain_vmap_area_work;
	if (fs_init(&v->fs, k->kva.vmalloc_start, k->kva.vmalloc_end))
		sim_oom(s, "vmap free space");
	k->vmap = v;
	return v;
}

/* kernel_destroy frees what the allocator keeps on the host heap */
void vmalloc_destroy(struct kernel *k)
{
	struct vmap *v = k->vmap;
	if (!v)
		return;
	for (uint32_t i = 0; i < v->nall; i++)
		free(v->all[i]->pages);
	free(v->all);
	for (uint32_t i = 0; i < v->nr_nodes; i++) {
		free(v->nodes[i].lazy.a);
		free(v->nodes[i].purge.a);
		free(v->nodes[i].local.a);
	}
	free(v->scratch.a);
	free(v->todo);
	free(v->queued);
	for (int c = 0; c < k->mach.sim.nr_cpus; c++)
		free(v->deferred[c].addr);
	free(v->global_lazy.a);
	fs_destroy(&v->fs);
	free(v->busy);
	k->vmap = NULL;
}

static struct vmap_area *va_desc_alloc(struct sim *s, struct vmap *v)
{
	struct vmap_area *va = v->desc_free;
	if (va) {
		v->desc_free = va->next;
		uint32_t *pages = va->pages;
		size_t cap = va->cap_pages;
		memset(va, 0, sizeof(*va));
		va->pages = pages;
		va->cap_pages = cap;
		return va;
	}
	va = kernel_obj_alloc(s, sizeof(*va));
	if (va && GROW(&v->all, &v->cap_all, v->nall, (size_t)v->nall + 1, 256)) {
		sim_oom(s, "vmap areas");
		return NULL;
	}
	if (va)
		v->all[v->nall++] = va;
	return va;
}

static void va_desc_free(struct vmap *v, struct vmap_area *va)
{
	va->state = VA_FREE;
	va->next = v->desc_free;
	v->desc_free = va;
}

/* ---- busy areas: open addressing by va_start ---- */
#define BUSY_TOMB ((struct vmap_area *)1)

static uint32_t busy_slot(uint64_t addr, uint32_t mask)
{
	return (uint32_t)((addr >> 12) * 0x9e3779b97f4a7c15ull >> 32) & mask;
}

static void busy_insert(struct sim *s, struct vmap *v, struct vmap_area *va)
{
	if ((v->nbusy + 1) * 2 > v->busy_cap) {
		uint32_t ncap = v->busy_cap ? v->busy_cap * 2 : 1024;
		struct vmap_area **nb = calloc(ncap, sizeof(*nb));
		if (!nb || sim_host_charge(s, (size_t)ncap * sizeof(*nb))) {
			free(nb);
			sim_oom(s, "vmap busy areas");
			return;
		}
		for (uint32_t i = 0; i < v->busy_cap; i++) {
			struct vmap_area *a = v->busy[i];
			if (!a || a == BUSY_TOMB)
				continue;
			uint32_t j = busy_slot(a->va_start, ncap - 1);
			while (nb[j])
				j = (j + 1) & (ncap - 1);
			nb[j] = a;
		}
		free(v->busy);
		v->busy = nb;
		v->busy_cap = ncap;
	}
	uint32_t j = busy_slot(va->va_start, v->busy_cap - 1);
	while (v->busy[j] && v->busy[j] != BUSY_TOMB)
		j = (j + 1) & (v->busy_cap - 1);
	v->busy[j] = va;
	v->nbusy++;
}

/* find_unlink_vmap_area(addr) */
static struct vmap_area *busy_unlink(struct vmap *v, uint64_t addr)
{
	if (!v->busy_cap)
		return NULL;
	uint32_t j = busy_slot(addr, v->busy_cap - 1);
	for (uint32_t n = 0; n < v->busy_cap && v->busy[j]; n++, j = (j + 1) & (v->busy_cap - 1)) {
		struct vmap_area *a = v->busy[j];
		if (a != BUSY_TOMB && a->va_start == addr) {
			v->busy[j] = BUSY_TOMB;
			v->nbusy--;
			return a;
		}
	}
	return NULL;
}

/* is addr the start of a busy (allocated, not yet vfreed) area? */
bool vmalloc_busy(struct sim *s, uint64_t addr)
{
	struct vmap *v = kernel_of(s)->vmap;
	if (!v || !v->busy_cap)
		return false;
	uint32_t j = busy_slot(addr, v->busy_cap - 1);
	for (uint32_t n = 0; n < v->busy_cap && v->busy[j]; n++, j = (j + 1) & (v->busy_cap - 1))
		if (v->busy[j] != BUSY_TOMB && v->busy[j]->va_start == addr)
			return true;
	return false;
}

/* ---- the free space ---- */

/* __alloc_vmap_area(): the lowest address where size fits at align
 * (find_vmap_lowest_match, then va_clip) */
static uint64_t free_space_alloc(struct sim *s, struct vmap *v, uint64_t size, uint64_t align)
{
	bool oom;
	uint64_t a = fs_alloc(&v->fs, size, align, &oom);
	if (oom)
		sim_oom(s, "vmap free space");
	return a;
}

/* merge_or_add_vmap_area(): give [s, e) back, merging with its neighbours */
static void free_space_add(struct sim *s, struct vmap *v, uint64_t start, uint64_t end)
{
	if (fs_add(&v->fs, start, end))
		sim_oom(s, "vmap free space");
}

/* ---- node pools ---- */

static inline uint32_t encode_vn_id(uint32_t id, uint32_t nr)
{
	return id < nr ? (id + 1) << 8 : 0;
}
static inline uint32_t decode_vn_id(uint32_t val)
{
	return (val >> 8) - 1;	/* wraps to "invalid" for 0 */
}

/* node_pool_add_va() (v6.9+): an area of at most MAX_VA_SIZE_PAGES goes to
 * the head of its node's pool of that size */
static bool node_pool_add_va(struct sim *s, struct vmap_node *vn, struct vmap_area *va)
{
	uint64_t idx = (va->va_end - va->va_start - 1) >> hw_of(s)->geom.page_shift;
	if (idx >= MAX_VA_SIZE_PAGES)
		return false;
	va->state = VA_POOLED;
	va->next = vn->pool[idx].head;
	vn->pool[idx].head = va;
	if (!vn->pool[idx].tail)
		vn->pool[idx].tail = va;
	vn->pool[idx].len++;
	sim_step_arg(s, YP_VMALLOC, (uint64_t)P(s, P_lock_op_ns), va->va_start, VS_POOL_RETURN);
	return true;
}

/* node_pool_del_va(): the first area of the pool if it is aligned; an
 * unaligned one is rotated to the tail and the caller falls back */
static struct vmap_area *node_pool_del_va(struct sim *s, struct vmap_node *vn, uint64_t size,
					  uint64_t align)
{
	uint64_t idx = (size - 1) >> hw_of(s)->geom.page_shift;
	if (idx >= MAX_VA_SIZE_PAGES || !vn->pool[idx].head)
		return NULL;
	sim_step_arg(s, YP_KLOCK, (uint64_t)P(s, P_lock_op_ns), 2, 0);	/* pool_lock */
	struct vmap_area *va = vn->pool[idx].head;
	if (!va)
		return NULL;
	vn->pool[idx].head = va->next;
	if (!vn->pool[idx].head)
		vn->pool[idx].tail = NULL;
	va->next = NULL;
	if (va->va_start & (align - 1)) {
		if (vn->pool[idx].tail)
			vn->pool[idx].tail->next = va;
		else
			vn->pool[idx].head = va;
		vn->pool[idx].tail = va;
		return NULL;
	}
	vn->pool[idx].len--;
	return va;
}

/* reclaim_list_global(): merge the areas into the free space under
 * free_vmap_area_lock */
static void reclaim_list_global(struct sim *s, struct vmap *v, struct vmap_area **l, uint32_t n)
{
	if (!n)
		return;
	spin_lock(s, &v->free_lock);
	for (uint32_t i = 0; i < n; i++) {
		free_space_add(s, v, l[i]->va_start, l[i]->va_end);
		sim_charge(s, (uint64_t)P(s, P_vma_op_ns) / 4);
		va_desc_free(v, l[i]);
	}
	spin_unlock(s, &v->free_lock);
	sim_step_arg(s, YP_VMALLOC, 0, l[0]->va_start, VS_FREE_TREE);
}

/* decay_va_pool_node(vn, full) (v6.9..v6.14): each non-empty pool gives
 * back about a quarter of its areas, newest first; a count that starts at 0
 * never reaches 0 again (unsigned), so a pool of fewer than 4 areas is
 * emptied; `full` empties every pool */
static void decay_va_pool_node(struct sim *s, struct vmap *v, struct vmap_node *vn, bool full)
{
	struct va_list_ *out = &v->scratch;
	out->n = 0;
	for (int i = 0; i < MAX_VA_SIZE_PAGES; i++) {
		if (!vn->pool[i].head)
			continue;
		uint64_t len = full ? 0 : vn->pool[i].len;
		uint64_t nr = len >> 2;
		struct vmap_area *va = vn->pool[i].head;
		while (va) {
			struct vmap_area *next = va->next;
			if (GROW(&out->a, &out->cap, out->n, (size_t)out->n + 1, 64)) {
				sim_oom(s, "vmap decay");
				return;
			}
			out->a[out->n++] = va;
			va = next;
			if (!full) {
				len--;
				if (--nr == 0)
					break;
			}
		}
		vn->pool[i].head = va;
		if (!va)
			vn->pool[i].tail = NULL;
		vn->pool[i].len = full ? 0 : (uint32_t)len;
	}
	if (out->n) {
		sim_charge(s, out->n * (uint64_t)P(s, P_lock_op_ns));
		reclaim_list_global(s, v, out->a, out->n);
	}
	out->n = 0;
}

/* ---- KASAN release in a purge, by the kasan_flush knob ---- */

static bool vmalloc_addr(struct sim *s, uint64_t a)
{
	const struct kva_layout *l = &kernel_of(s)->kva;
	return a >= l->vmalloc_start && a < l->vmalloc_end;
}

/* kasan_release_vmalloc_node() (9e9e085effe9): depopulate every area's
 * shadow, then one flush over the node's span */
static void kasan_release_vmalloc_node(struct sim *s, struct vmap_node *vn, bool flush)
{
	if (!vn->purge.n)
		return;
	uint64_t start = vn->purge.a[0]->va_start, end = vn->purge.a[vn->purge.n - 1]->va_end;
	for (uint32_t i = 0; i < vn->purge.n; i++) {
		struct vmap_area *va = vn->purge.a[i];
		if (vmalloc_addr(s, va->va_start))
			kasan_release_vmalloc(s, va->va_start, va->va_end, va->va_start, va->va_end,
					      KASAN_VMALLOC_PAGE_RANGE);
	}
	if (flush)
		kasan_release_vmalloc(s, start, end, start, end, KASAN_VMALLOC_TLB_FLUSH);
}

/*
 * purge_vmap_node(vn) (mm/vmalloc.c, v6.10 and 9e9e085effe9): release the
 * shadow (by the knob), subtract each area from vmap_lazy_nr, give it to its
 * node's pool (unless skip_populate) or collect it for the free space.
 */
static void purge_vmap_node(struct sim *s, struct vmap *v, struct vmap_node *vn)
{
	struct kernel *k = kernel_of(s);
	enum kasan_flush_policy kf = machine_of(s)->policy.kasan_flush;
	uint64_t t0 = s->now + s->curr->pending_ns;
	sim_step_arg(s, YP_PURGE_NODE, 0, (uint64_t)(vn - v->nodes), vn->purge.n);
	if (k->kasan && kf == KASAN_FLUSH_PER_NODE)
		kasan_release_vmalloc_node(s, vn, true);
	if (GROW(&vn->local.a, &vn->local.cap, 0, (size_t)vn->purge.n + 1, 64)) {
		sim_oom(s, "vmap purge");
		return;
	}
	struct vmap_area **local = vn->local.a;
	uint32_t nlocal = 0;
	for (uint32_t i = 0; i < vn->purge.n; i++) {
		struct vmap_area *va = vn->purge.a[i];
		sim_charge(s, (uint64_t)P(s, P_lock_op_ns));
		if (k->kasan && vmalloc_addr(s, va->va_start)) {
			if (kf == KASAN_FLUSH_PER_AREA)
				kasan_release_vmalloc(s, va->va_start, va->va_end, va->va_start,
						      va->va_end,
						      KASAN_VMALLOC_PAGE_RANGE | KASAN_VMALLOC_TLB_FLUSH);
			else if (kf == KASAN_FLUSH_PER_NODE_LATE)
				kasan_release_vmalloc(s, va->va_start, va->va_end, va->va_start,
						      va->va_end, KASAN_VMALLOC_PAGE_RANGE);
		}
		v->lazy_nr -= va_pages(s, va);
		uint32_t id = decode_vn_id(va->vn_id);
		if (id < v->nr_nodes && !vn->skip_populate && node_pool_add_va(s, vn, va))
			continue;
		local[nlocal++] = va;
	}
	/* the draft: one flush after the pool returns, before the free space */
	if (k->kasan && kf == KASAN_FLUSH_PER_NODE_LATE && vn->purge.n) {
		uint64_t start = vn->purge.a[0]->va_start, end = vn->purge.a[vn->purge.n - 1]->va_end;
		kasan_release_vmalloc(s, start, end, start, end, KASAN_VMALLOC_TLB_FLUSH);
	}
	reclaim_list_global(s, v, local, nlocal);
	vn->purge.n = 0;
	uint64_t ns = s->now + s->curr->pending_ns - t0;
	s->m.purge_vmap_node_calls++;
	s->m.purge_vmap_node_ns += ns;
	if (ns > s->m.purge_vmap_node_max_ns)
		s->m.purge_vmap_node_max_ns = ns;
}

static void purge_vmap_node_work(struct sim *s, struct work_struct *w)
{
	struct vmap *v = kernel_of(s)->vmap;
	purge_vmap_node(s, v, container_of(w, struct vmap_node, purge_work));
}

/*
 * The v6.3..v6.8 purge (vmap_purge=global): one flush of the merged lazy
 * range, then under free_vmap_area_lock each area goes back to the free
 * space with its shadow released (a flush each) - allocators wait.
 */
static bool purge_global(struct sim *s, struct vmap *v)
{
	struct kernel *k = kernel_of(s);
	struct va_list_ *l = &v->global_lazy;
	if (!l->n)
		return false;
	list_sort_by_addr(l);
	uint32_t n = l->n;
	if (GROW(&v->scratch.a, &v->scratch.cap, 0, n, 64)) {
		sim_oom(s, "vmap purge");
		return false;
	}
	struct vmap_area **a = v->scratch.a;
	memcpy(a, l->a, (size_t)n * sizeof(*a));
	l->n = 0;
	flush_tlb_kernel_range(s, a[0]->va_start, a[n - 1]->va_end);
	uint64_t t0 = s->now + s->curr->pending_ns;
	spin_lock(s, &v->free_lock);
	for (uint32_t i = 0; i < n; i++) {
		struct vmap_area *va = a[i];
		free_space_add(s, v, va->va_start, va->va_end);
		if (k->kasan) {
			/* the merged free region around the area */
			uint64_t fs = va->va_start, fe = va->va_end;
			if (!fs_find(&v->fs, va->va_start, va->va_end, &fs, &fe)) {
				fs = va->va_start;
				fe = va->va_end;
			}
			kasan_release_vmalloc(s, va->va_start, va->va_end, fs, fe,
					      KASAN_VMALLOC_PAGE_RANGE | KASAN_VMALLOC_TLB_FLUSH);
		}
		v->lazy_nr -= va_pages(s, va);
		sim_charge(s, (uint64_t)P(s, P_lock_op_ns));
		va_desc_free(v, va);
	}
	spin_unlock(s, &v->free_lock);
	uint64_t ns = s->now + s->curr->pending_ns - t0;
	s->m.purge_vmap_node_calls++;
	s->m.purge_vmap_node_ns += ns;
	if (ns > s->m.purge_vmap_node_max_ns)
		s->m.purge_vmap_node_max_ns = ns;
	return true;
}

/*
 * __purge_vmap_area_lazy(start, end, full_pool_decay) (mm/vmalloc.c,
 * v6.9..v6.12): decay every node's pools, splice every lazy list, flush the
 * lazy range once, then purge the nodes - (vmap_lazy_nr / lazy_max_pages())
 * clamped to 1..nodes, minus one, of them on helper kworkers of the node's
 * CPU, the rest inline - and wait for the helpers.
 */
static bool __purge_vmap_area_lazy(struct sim *s, struct vmap *v, bool full_pool_decay)
{
	s->m.purges++;
	if (machine_of(s)->policy.vmap_purge == VMAP_PURGE_GLOBAL)
		return purge_global(s, v);
	uint64_t start = ~0ull, end = 0;
	if (GROW(&v->todo, &v->cap_todo, 0, v->nr_nodes, 16) ||
	    GROW(&v->queued, &v->cap_queued, 0, v->nr_nodes, 16)) {
		sim_oom(s, "vmap purge");
		return false;
	}
	uint32_t *todo = v->todo, ntodo = 0;
	for (uint32_t i = 0; i < v->nr_nodes; i++) {
		struct vmap_node *vn = &v->nodes[i];
		vn->purge.n = 0;
		vn->skip_populate = full_pool_decay;
		decay_va_pool_node(s, v, vn, full_pool_decay);
		if (!vn->lazy.n)
			continue;
		sim_step_arg(s, YP_KLOCK, (uint64_t)P(s, P_lock_op_ns), 3, 0);	/* lazy.lock: splice */
		struct va_list_ t = vn->purge;
		vn->purge = vn->lazy;
		vn->lazy = t;
		vn->lazy.n = 0;
		list_sort_by_addr(&vn->purge);
		for (uint32_t j = 0; j < vn->purge.n; j++)
			vn->purge.a[j]->state = VA_PURGING;
		if (vn->purge.a[0]->va_start < start)
			start = vn->purge.a[0]->va_start;
		if (vn->purge.a[vn->purge.n - 1]->va_end > end)
			end = vn->purge.a[vn->purge.n - 1]->va_end;
		todo[ntodo++] = i;
	}
	if (!ntodo)
		return false;
	flush_tlb_kernel_range(s, start, end);
	uint64_t helpers = v->lazy_nr / lazy_max_pages(s);
	if (helpers < 1)
		helpers = 1;
	if (helpers > ntodo)
		helpers = ntodo;
	helpers--;
	uint32_t *queued = v->queued, nq = 0;
	for (uint32_t i = 0; i < ntodo; i++) {
		struct vmap_node *vn = &v->nodes[todo[i]];
		if (helpers > 0) {
			schedule_work_on(s, (int)(todo[i] % (uint32_t)s->nr_cpus), &vn->purge_work);
			queued[nq++] = todo[i];
			helpers--;
		} else {
			purge_vmap_node(s, v, vn);
		}
	}
	for (uint32_t i = 0; i < nq; i++)
		flush_work(s, &v->nodes[queued[i]].purge_work);
	return true;
}

/* drain_vmap_area_work() (v6.9+): one purge under vmap_purge_lock */
static void drain_vmap_area_work(struct sim *s, struct work_struct *w)
{
	struct vmap *v = kernel_of(s)->vmap;
	(void)w;
	mutex_lock(s, &v->purge_lock);
	__purge_vmap_area_lazy(s, v, false);
	mutex_unlock(s, &v->purge_lock);
}

void vmalloc_purge_sync(struct sim *s)
{
	struct vmap *v = vmap_get(s);
	if (!v)
		return;
	mutex_lock(s, &v->purge_lock);
	__purge_vmap_area_lazy(s, v, true);
	mutex_unlock(s, &v->purge_lock);
}

/* ---- allocation ---- */

/* node_alloc() (v6.9+): this CPU's node's pool of the size (vn_id is
 * recorded even when the pool is empty) */
static struct vmap_area *node_alloc(struct sim *s, struct vmap *v, uint64_t size, uint64_t align,
				    uint32_t *vn_id)
{
	*vn_id = 0;
	if (v->nr_nodes == 1)
		return NULL;
	uint32_t id = (uint32_t)cur_cpu(s) % v->nr_nodes;
	*vn_id = encode_vn_id(id, v->nr_nodes);
	return node_pool_del_va(s, &v->nodes[id], size, align);
}

/*
 * alloc_vmap_area() + __vmalloc_area_node() (v6.10): an area of size bytes
 * plus the guard page at align, from this CPU's node pool or the lowest fit
 * of the free space (one synchronous purge when there is none), its shadow
 * populated, its pages allocated and mapped. Entry is a voluntary
 * preemption point (a GFP_KERNEL allocation may sleep): a kworker woken on
 * this CPU, e.g. for the drain, runs there.
 */
uint64_t vmalloc_range(struct sim *s, uint64_t size, uint64_t align)
{
	struct vmap *v = vmap_get(s);
	if (!v)
		return 0;
	sim_cond_resched(s);	/* might_sleep() of a GFP_KERNEL allocation */
	uint64_t ps = page_size(s);
	size = (size + ps - 1) & ~(ps - 1);
	if (!size)
		return 0;
	if (align < ps)
		align = ps;
	uint64_t area = size + ps;		/* the guard page */
	sim_step_arg(s, YP_VMALLOC, (uint64_t)P(s, P_vma_op_ns), size, VS_ALLOC);
	uint32_t vn_id;
	struct vmap_area *va = node_alloc(s, v, area, align, &vn_id);
	uint64_t addr = 0;
	if (va) {
		addr = va->va_start;
		sim_trace(s, YP_VMALLOC, addr, VS_POOL_TAKE);
	} else {
		for (int attempt = 0; attempt < 2 && !addr; attempt++) {
			spin_lock(s, &v->free_lock);
			addr = free_space_alloc(s, v, area, align);
			spin_unlock(s, &v->free_lock);
			if (!addr && !attempt)
				vmalloc_purge_sync(s);	/* reclaim_and_purge_vmap_areas() */
		}
		if (!addr)
			return 0;
		va = va_desc_alloc(s, v);
		if (!va)
			return 0;
	}
	va->va_start = addr;
	va->va_end = addr + area;
	va->vn_id = vn_id;
	va->state = VA_BUSY;
	busy_insert(s, v, va);
	kasan_populate_vmalloc(s, addr, area);
	/* __vmalloc_area_node(): the pages, then vmap_pages_range() */
	uint32_t n = (uint32_t)(size / ps);
	if (GROW(&va->pages, &va->cap_pages, 0, n, 4)) {
		sim_oom(s, "vmalloc pages");
		return 0;
	}
	va->nr_pages = n;
	for (uint32_t i = 0; i < n; i++) {
		sim_charge(s, (uint64_t)P(s, P_page_alloc_ns));
		va->pages[i] = alloc_frame(s, FRAME_DATA, 0);
		kernel_map_page(s, addr + (uint64_t)i * ps, va->pages[i]);
	}
	return addr;
}

/* free_vmap_area_noflush() (v6.9+): add the area to the lazy list of the
 * node that allocated it (or of its address) and kick the drain when
 * vmap_lazy_nr passes lazy_max_pages() */
static void free_vmap_area_noflush(struct sim *s, struct vmap *v, struct vmap_area *va)
{
	v->lazy_nr += va_pages(s, va);
	uint64_t nr_lazy = v->lazy_nr;
	va->state = VA_LAZY;
	s->m.vfree_lazy++;
	sim_step_arg(s, YP_VMALLOC, (uint64_t)P(s, P_lock_op_ns), va->va_start, VS_LAZY);
	if (machine_of(s)->policy.vmap_purge == VMAP_PURGE_GLOBAL) {
		list_append(s, &v->global_lazy, va);
	} else {
		uint32_t id = decode_vn_id(va->vn_id);
		if (id >= v->nr_nodes)		/* addr_to_node() */
			id = (uint32_t)((va->va_start / (16 * page_size(s))) % v->nr_nodes);
		list_append(s, &v->nodes[id].lazy, va);
	}
	if (nr_lazy > lazy_max_pages(s))
		schedule_work(s, &v->drain_work);
}

/*
 * vfree(addr) -> remove_vm_area() -> free_unmap_vmap_area() (v6.10):
 * poison the shadow, clear the PTEs without a flush, free the pages at once
 * (window W1 until the purge's flush), put the area on the lazy list.
 * Entry is a voluntary preemption point (might_sleep()).
 */
void vfree(struct sim *s, uint64_t addr)
{
	struct kernel *k = kernel_of(s);
	struct vmap *v = vmap_get(s);
	if (!v || !addr)
		return;
	sim_cond_resched(s);	/* vfree()'s might_sleep() */
	sim_step_arg(s, YP_VMALLOC, (uint64_t)P(s, P_lock_op_ns), addr, VS_VFREE);
	struct vmap_area *va = busy_unlink(v, addr);
	SIM_BUG_ON(s, !va);
	uint64_t ps = page_size(s);
	kasan_poison_vmalloc(s, va->va_start, va->va_end - va->va_start - ps);
	for (uint32_t i = 0; i < va->nr_pages; i++)
		kernel_unmap_page(s, va->va_start + (uint64_t)i * ps);	/* vunmap_range_noflush */
	for (uint32_t i = 0; i < va->nr_pages; i++) {
		if (k->hooks && k->hooks->kernel_page_freed)
			k->hooks->kernel_page_freed(k->hooks_ctx, va->pages[i], false);
		frame_free(hw_of(s), va->pages[i]);
		sim_charge(s, (uint64_t)P(s, P_page_free_ns));
	}
	va->nr_pages = 0;
	free_vmap_area_noflush(s, v, va);
}

/* delayed_vfree_work(): the vfree()s vfree_atomic() deferred on this CPU */
static void delayed_vfree_work(struct sim *s, struct work_struct *w)
{
	struct deferred_free *d = container_of(w, struct deferred_free, wq);
	while (d->n) {
		uint64_t a = d->addr[--d->n];
		vfree(s, a);
	}
}

void vfree_atomic(struct sim *s, int cpu, uint64_t addr)
{
	struct vmap *v = vmap_get(s);
	if (!v || !addr)
		return;
	struct deferred_free *d = &v->deferred[cpu];
	if (GROW(&d->addr, &d->cap, d->n, (size_t)d->n + 1, 16)) {
		sim_oom(s, "vfree_deferred");
		return;
	}
	d->addr[d->n++] = addr;
	schedule_work_on(s, cpu, &d->wq);
}

/* ---- kernel stacks' geometry ---- */

uint64_t thread_size(struct sim *s)
{
	uint64_t sz = 16384;	/* x86-64 and arm64 4K: 16 KiB; KASAN doubles it */
	if (kernel_of(s)->kasan)
		sz *= 2;
	uint64_t ps = page_size(s);
	return sz < ps ? ps : sz;
}

uint64_t thread_align(struct sim *s)
{
	/* x86: THREAD_ALIGN = THREAD_SIZE; arm64 with VMAP_STACK: 2 x THREAD_SIZE */
	return machine_is_x86(s) ? thread_size(s) : 2 * thread_size(s);
}
