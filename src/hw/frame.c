/*
 * frame.c - physical frames and page-table buffers; hw_init/hw_destroy.
 * See hw.h for the invariants.
 */
#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE 1	/* MAP_ANONYMOUS, MAP_NORESERVE */
#endif
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "hw/hw.h"

/*
 * The frame table is one array that never moves (hw.h), so frame_of() is a
 * single index instead of a chunk lookup. The first frame_alloc reserves
 * address space for every frame number below NO_FRAME (160 GiB of it,
 * inaccessible, so neither memory nor commit charge) and makes FRAME_CHUNK
 * frames at a time accessible, charged to the host budget as the chunks were.
 * Under an address-space limit the reservation takes at most a quarter of it,
 * and where it is refused a halved one is tried. With a stack pool (the
 * checker's thousands of short simulations) the range is taken from the pool
 * and given back to it, its written part cleared, since unmapping touched
 * pages costs the host a TLB shootdown (sim.h, struct sim_stack_pool).
 */
static int frames_reserve(struct hw *hw)
{
	uint64_t cap = (uint64_t)NO_FRAME + 1;
	struct rlimit rl;
	/* under an address-space limit (ulimit -v) take at most a quarter of
	 * it, so the rest of the run keeps room for its other allocations */
	if (!getrlimit(RLIMIT_AS, &rl) && rl.rlim_cur != RLIM_INFINITY)
		while (cap >= 2 * FRAME_CHUNK && cap * sizeof(struct frame) > rl.rlim_cur / 4)
			cap /= 2;
	for (; cap >= FRAME_CHUNK; cap /= 2) {
		void *p = mmap(NULL, cap * sizeof(struct frame), PROT_NONE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (p != MAP_FAILED) {
			hw->frames = p;
			hw->frames_cap = cap;
			hw->frames_mapped = 0;
			return 0;
		}
	}
	return -1;
}

/* The frame range: the pool's, else a new reservation. */
static int frames_acquire(struct hw *hw)
{
	struct sim_stack_pool *pool = hw->sim ? hw->sim->stack_pool : NULL;
	if (!pool || !pool->frames.base)
		return frames_reserve(hw);
	hw->frames = pool->frames.base;
	hw->frames_cap = pool->frames.cap;
	hw->frames_mapped = pool->frames.mapped;
	/* zeroed descriptors, as a fresh reservation's */
	memset(hw->frames, 0, pool->frames.dirty * sizeof(struct frame));
	pool->frames.base = NULL;
	return 0;
}

/* Make frames [frames_ready, frames_ready + FRAME_CHUNK) usable (zeroed
 * pages, as the kernel hands them out) */
static int frames_extend(struct hw *hw)
{
	if (!hw->frames && frames_acquire(hw))
		return -1;
	if (hw->frames_ready + FRAME_CHUNK > hw->frames_cap)
		return -1;
	if (hw->frames_ready + FRAME_CHUNK > hw->frames_mapped) {
		uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
		uintptr_t lo = (uintptr_t)(hw->frames + hw->frames_ready);
		uintptr_t hi = (uintptr_t)(hw->frames + hw->frames_ready + FRAME_CHUNK);
		lo &= ~(pg - 1);
		hi = (hi + pg - 1) & ~(pg - 1);
		if (mprotect((void *)lo, hi - lo, PROT_READ | PROT_WRITE))
			return -1;
		hw->frames_mapped = hw->frames_ready + FRAME_CHUNK;
	}
	hw->frames_ready += FRAME_CHUNK;
	return 0;
}

#ifdef HW_ASAN
/* n bytes at p all zero: one memcmp of the range against itself shifted by
 * a byte (ASan checks a libc call's range once, not each load of a loop) */
static bool all_zero(const void *p, size_t n)
{
	const unsigned char *b = p;
	return n == 0 || (b[0] == 0 && memcmp(b, b + 1, n - 1) == 0);
}
#endif

/* The translation caches' arrays one simulation leaves to the next of the
 * same machine (struct sim_stack_pool.caches): the per-CPU caches with every
 * entry removed, so their counters, filters and the machine-wide bitmaps are
 * zero again. Entries once valid keep their other fields (valid 0), as
 * after any invalidation; nothing reads those. A schedule of a 4-CPU check
 * cleared ~300 KiB of them on falkor-46. */
struct hw_cache_save {
	int nr_cpus;
	struct hw_cache_geom cg;
	struct hw_cpu *cpu;
	uint64_t *tlb_busy, *tlb_tagcpus, *wc_tagcpus, *tlb_regcpus, *tlb_slotcpus;
	size_t slotcpus_bytes;
};

/* hw's cache arrays as a set (cg not filled in), and the reverse */
static struct hw_cache_save caches_get(const struct hw *hw)
{
	return (struct hw_cache_save){
		.nr_cpus = hw->nr_cpus, .cpu = hw->cpu, .tlb_busy = hw->tlb_busy,
		.tlb_tagcpus = hw->tlb_tagcpus, .wc_tagcpus = hw->wc_tagcpus,
		.tlb_regcpus = hw->tlb_regcpus, .tlb_slotcpus = hw->tlb_slotcpus,
		.slotcpus_bytes = hw->slotcpus_bytes};
}

static void caches_set(struct hw *hw, const struct hw_cache_save *sv)
{
	hw->cpu = sv->cpu;
	hw->tlb_busy = sv->tlb_busy;
	hw->tlb_tagcpus = sv->tlb_tagcpus;
	hw->wc_tagcpus = sv->wc_tagcpus;
	hw->tlb_regcpus = sv->tlb_regcpus;
	hw->tlb_slotcpus = sv->tlb_slotcpus;
	hw->slotcpus_bytes = sv->slotcpus_bytes;
}

/* free the arrays of a machine's caches (hw_destroy's, or a kept set) */
static void cache_arrays_free(const struct hw_cache_save *sv)
{
	for (int i = 0; sv->cpu && i < sv->nr_cpus; i++) {
		tcache_destroy(&sv->cpu[i].tlb);
		tcache_destroy(&sv->cpu[i].wc);
	}
	free(sv->cpu);
	free(sv->tlb_busy);
	free(sv->tlb_tagcpus);
	free(sv->wc_tagcpus);
	free(sv->tlb_regcpus);
	hw_zfree(sv->tlb_slotcpus, sv->slotcpus_bytes);
}

static void hw_cache_save_free(void *p)
{
	cache_arrays_free(p);
	free(p);
}

/* A kept cache as tcache_init (and tcache_enable_filter) leave a new one */
static void tcache_reuse(struct tcache *tc)
{
	/* field by field: the counts (tagcnt, regcnt) are already 0
	 * (cache_keep removed every entry; checked under ASan), and a
	 * whole-struct store cleared their 512 bytes again for every CPU */
	tc->ndense = 0;
	tc->clock = 0;
	tc->busy_word = tc->tag_word = tc->slot_word = tc->reg_word = NULL;
	tc->busy_bit = 0;
	tc->tag_stride = 0;
	tc->nblock = 0;
	tc->filt_sat = 0;
}

/* The pool's caches if they fit this machine (taken from the pool), or NULL */
static struct hw_cache_save *cache_take(struct sim *sim, int nr_cpus,
					const struct hw_cache_geom *cg)
{
	struct sim_stack_pool *pool = sim ? sim->stack_pool : NULL;
	struct hw_cache_save *sv = pool ? pool->caches : NULL;
	if (!sv || sv->nr_cpus != nr_cpus || sv->cg.tlb_sets != cg->tlb_sets ||
	    sv->cg.tlb_ways != cg->tlb_ways || sv->cg.wc_sets != cg->wc_sets ||
	    sv->cg.wc_ways != cg->wc_ways)
		return NULL;
	pool->caches = NULL;
	return sv;
}

/* Remove every entry of every CPU's caches and give their arrays to the pool
 * (when it has none). Not after an error: a thread abandoned in the middle
 * of a fill may have left a cache inconsistent. */
static void cache_keep(struct hw *hw)
{
	struct sim_stack_pool *pool = hw->sim ? hw->sim->stack_pool : NULL;
	if (!pool || pool->caches || !hw->cpu || !hw->tlb_slotcpus || hw->sim->error)
		return;
	struct hw_cache_save *sv = malloc(sizeof(*sv));
	if (!sv)
		return;
	bool sat = false;
	for (int i = 0; i < hw->nr_cpus; i++) {
		struct tcache *c[2] = {&hw->cpu[i].tlb, &hw->cpu[i].wc};
		for (int k = 0; k < 2; k++) {
			while (c[k]->ndense)
				tc_remove(hw, c[k], &c[k]->e[c[k]->dense[c[k]->ndense - 1]]);
			if (c[k]->filt_sat) {
				memset(c[k]->filt, 0, (size_t)c[k]->filt_mask + 1);
				sat = true;
			}
		}
	}
	if (sat)
		memset(hw->tlb_slotcpus, 0, hw->slotcpus_bytes);
#ifdef HW_ASAN
	/* every count went back to 0 with the removals (the dense list being
	 * empty, no entry is valid) */
	const size_t w = hw->cpu_words * sizeof(uint64_t);
	SIM_BUG_ON(hw->sim, !all_zero(hw->tlb_busy, w) || !all_zero(hw->tlb_tagcpus, TC_TAGCNT * w) ||
				    !all_zero(hw->wc_tagcpus, TC_TAGCNT * w) ||
				    !all_zero(hw->tlb_regcpus, TC_NREGIONS * w) ||
				    !all_zero(hw->tlb_slotcpus, hw->slotcpus_bytes));
	for (int i = 0; i < hw->nr_cpus; i++) {
		const struct tcache *t = &hw->cpu[i].tlb;
		SIM_BUG_ON(hw->sim, !all_zero(t->filt, (size_t)t->filt_mask + 1) ||
					    !all_zero(t->tagcnt, sizeof(t->tagcnt)) ||
					    !all_zero(t->regcnt, sizeof(t->regcnt)) ||
					    !all_zero(hw->cpu[i].wc.tagcnt, sizeof(t->tagcnt)));
	}
#endif
	*sv = caches_get(hw);
	sv->cg = (struct hw_cache_geom){hw->cpu[0].tlb.sets, hw->cpu[0].tlb.ways,
					hw->cpu[0].wc.sets, hw->cpu[0].wc.ways};
	pool->caches = sv;
	pool->caches_free = hw_cache_save_free;
	caches_set(hw, &(struct hw_cache_save){0});	/* hw_destroy frees none */
}

int hw_init(struct hw *hw, struct sim *sim, int nr_cpus, int page_shift,
	    const struct pt_format *fmt, const struct hw_cache_geom *cg,
	    struct tlbsim_metrics *m)
{
	memset(hw, 0, sizeof(*hw));
	hw->sim = sim;
	hw->fmt = fmt;
	hw->m = m;
	pt_geom_init(&hw->geom, page_shift, fmt->task_size);
	hw->free_head = NO_FRAME;
	hw->nr_cpus = nr_cpus;
	hw->cpu_words = ((uint32_t)nr_cpus + 63) / 64;
	struct hw_cache_save *sv = cache_take(sim, nr_cpus, cg);
	if (sv) {
		caches_set(hw, sv);
		free(sv);
		for (int i = 0; i < nr_cpus; i++) {
			tcache_reuse(&hw->cpu[i].tlb);
			tcache_reuse(&hw->cpu[i].wc);
			hw->cpu[i].zeroed_kb = 0;
		}
	} else {
		hw->cpu = calloc((size_t)nr_cpus, sizeof(*hw->cpu));
		hw->tlb_busy = calloc(hw->cpu_words, sizeof(uint64_t));
		hw->tlb_tagcpus = calloc((size_t)TC_TAGCNT * hw->cpu_words, sizeof(uint64_t));
		hw->wc_tagcpus = calloc((size_t)TC_TAGCNT * hw->cpu_words, sizeof(uint64_t));
		hw->tlb_regcpus = calloc((size_t)TC_NREGIONS * hw->cpu_words, sizeof(uint64_t));
	}
	if (!hw->cpu || !hw->tlb_busy || !hw->tlb_tagcpus || !hw->wc_tagcpus || !hw->tlb_regcpus)
		return TLBSIM_ENOMEM;
	for (int i = 0; i < nr_cpus; i++) {
		if (!sv && (tcache_init(&hw->cpu[i].tlb, cg->tlb_sets, cg->tlb_ways) ||
			    tcache_enable_filter(&hw->cpu[i].tlb) ||
			    tcache_init(&hw->cpu[i].wc, cg->wc_sets, cg->wc_ways)))
			return TLBSIM_ENOMEM;
		hw->cpu[i].tlb.busy_word = &hw->tlb_busy[i / 64];
		hw->cpu[i].tlb.busy_bit = 1ull << (i % 64);
		hw->cpu[i].tlb.tag_word = &hw->tlb_tagcpus[i / 64];
		hw->cpu[i].wc.tag_word = &hw->wc_tagcpus[i / 64];
		hw->cpu[i].tlb.reg_word = &hw->tlb_regcpus[i / 64];
		hw->cpu[i].tlb.tag_stride = hw->cpu[i].wc.tag_stride = hw->cpu_words;
		hw->cpu[i].wc.busy_bit = hw->cpu[i].tlb.busy_bit;
		if (!hw->tlb_slotcpus) {
			hw->slotcpus_bytes = ((size_t)hw->cpu[i].tlb.filt_mask + 1) *
					     hw->cpu_words * sizeof(uint64_t);
			hw->tlb_slotcpus = hw_zalloc(hw->slotcpus_bytes);
			if (!hw->tlb_slotcpus)
				return TLBSIM_ENOMEM;
		}
		hw->cpu[i].tlb.slot_word = &hw->tlb_slotcpus[i / 64];
	}
	return 0;
}

static size_t table_buf_bytes(const struct hw *hw)
{
	/* descriptors, then the occupancy bitmap (table_used_map) */
	return (hw->geom.ptrs_per_pte + hw->geom.ptrs_per_pte / 64) * sizeof(pte_t);
}

static void table_buf_put(struct hw *hw, pte_t *t);

/* Clear a table still in use by its occupancy bitmap, for reuse: every
 * non-none descriptor has its bit (set_entry; the stores that bypass it
 * change present descriptors, which stay non-none). Checked under ASan. */
static void table_clear(struct hw *hw, pte_t *t)
{
	const struct pt_geom *g = &hw->geom;
	uint64_t *map = table_used_map(g, t);
	const uint64_t words = g->ptrs_per_pte / 64;
	for (uint64_t w = 0; w < words; w++)
		for (uint64_t b = map[w]; b; b &= b - 1)
			t[w * 64 + (uint64_t)__builtin_ctzll(b)] = 0;
	memset(map, 0, words * sizeof(*map));
#ifdef HW_ASAN
	SIM_BUG_ON(hw->sim, !all_zero(t, (g->ptrs_per_pte + words) * sizeof(*t)));
#endif
}

void hw_destroy(struct hw *hw)
{
	cache_keep(hw);	/* first: the removals need the frame table */
	struct sim_stack_pool *pool = hw->sim ? hw->sim->stack_pool : NULL;
	/* tables still in use: with a pool, cleared and kept like the freed
	 * ones (below), else freed; not after an error, as cache_keep */
	const bool keep = pool && !hw->sim->error;
	for (uint32_t f = 0; f < hw->nframes; f++) {
		pte_t *t = frame_of(hw, f)->table;
		if (!t)
			continue;
		if (keep) {
			table_clear(hw, t);
			table_buf_put(hw, t);
		} else {
			free(t);
		}
	}
	if (hw->frames && pool && !pool->frames.base) {
		pool->frames.base = hw->frames;
		pool->frames.bytes = hw->frames_cap * sizeof(struct frame);
		pool->frames.cap = hw->frames_cap;
		pool->frames.mapped = hw->frames_mapped;
		pool->frames.dirty = hw->nframes;
	} else if (hw->frames)
		munmap(hw->frames, hw->frames_cap * sizeof(struct frame));
	/* the empty tables to the pool for the next simulation (struct
	 * sim_stack_pool), at most SIM_TABLE_POOL_MAX of one size */
	const size_t tbytes = table_buf_bytes(hw);
	while (hw->table_pool) {
		pte_t *t = hw->table_pool;
		hw->table_pool = (pte_t *)(uintptr_t)t[0];
		if (pool && pool->tables.n < SIM_TABLE_POOL_MAX &&
		    (!pool->tables.head || pool->tables.bytes == tbytes)) {
			memcpy(t, &pool->tables.head, sizeof(pool->tables.head));
			pool->tables.head = t;
			pool->tables.bytes = tbytes;
			pool->tables.n++;
			continue;
		}
		free(t);
	}
	const struct hw_cache_save own = caches_get(hw);
	cache_arrays_free(&own);
	memset(hw, 0, sizeof(*hw));
}

static pte_t *table_buf_get(struct hw *hw)
{
	pte_t *t = hw->table_pool;
	if (t) {
		hw->table_pool = (pte_t *)(uintptr_t)t[0];
		t[0] = 0;
		return t;
	}
	size_t bytes = table_buf_bytes(hw);
	if (sim_host_charge(hw->sim, bytes))
		return NULL;
	/* an empty one an earlier simulation left (charged like a new one) */
	struct sim_stack_pool *pool = hw->sim ? hw->sim->stack_pool : NULL;
	if (pool && pool->tables.head && pool->tables.bytes == bytes) {
		t = pool->tables.head;
		memcpy(&pool->tables.head, t, sizeof(pool->tables.head));
		pool->tables.n--;
		t[0] = 0;
		return t;
	}
	t = calloc(1, bytes);
	if (!t)
		sim_host_release(hw->sim, bytes);
	return t;
}

static void table_buf_put(struct hw *hw, pte_t *t)
{
	/* Tables are empty when freed (free_pgd_range frees only empty ones). */
	t[0] = (pte_t)(uintptr_t)hw->table_pool;
	hw->table_pool = t;
}

uint32_t frame_alloc(struct hw *hw, enum frame_state st, int depth)
{
	uint32_t f = hw->free_head;
	pte_t *table = NULL;
	if (st == FRAME_PGTABLE && !(table = table_buf_get(hw)))
		return NO_FRAME;
	if (f != NO_FRAME) {
		hw->free_head = frame_of(hw, f)->next_free;
	} else {
		if (hw->nframes == NO_FRAME)
			goto fail;
		if (hw->nframes == hw->frames_ready) {
			/* the next chunk of the reserved table */
			size_t bytes = FRAME_CHUNK * sizeof(struct frame);
			if (sim_host_charge(hw->sim, bytes))
				goto fail;
			if (frames_extend(hw)) {
				sim_host_release(hw->sim, bytes);
				goto fail;
			}
		}
		f = hw->nframes++;
	}
	struct frame *fr = frame_of(hw, f);
	SIM_BUG_ON(hw->sim, fr->state != FRAME_FREE);
	fr->state = (uint8_t)st;
	fr->depth = (uint8_t)depth;
	fr->gen++;
	fr->refcount = 1;
	fr->nr_used = 0;
	fr->watch = 0;
	fr->pgflags = 0;
	fr->next_free = NO_FRAME;
	fr->table = table;
	hw->frames_in_use++;
	return f;
fail:
	if (table)
		table_buf_put(hw, table);
	return NO_FRAME;
}

/*
 * Cache warmth of a page being cleared (clear_page, arch/x86/lib/clear_page_64.S
 * and arch/arm64/lib/clear_page.S, v5.1): the lines of a page this CPU
 * cleared recently are still in its cache, and clearing them is a run of
 * cache hits; otherwise every line is allocated from memory. The recency
 * measure is the KiB the CPU has cleared since (the bulk of its store
 * traffic in the fault paths); a frame's zero_cpu and zero_stamp survive
 * free and reallocation, as the cache lines do.
 */
bool frame_clear(struct hw *hw, uint32_t f, int cpu, uint32_t cache_kb)
{
	struct frame *fr = frame_of(hw, f);
	struct hw_cpu *hc = &hw->cpu[cpu];
	uint32_t kb = (uint32_t)(hw->geom.page_size >> 10);
	bool warm = fr->zero_cpu == (uint32_t)cpu + 1 &&
		    (uint64_t)(hc->zeroed_kb - fr->zero_stamp) + kb <= cache_kb;
	hc->zeroed_kb += kb;
	fr->zero_cpu = (uint16_t)(cpu + 1);
	fr->zero_stamp = hc->zeroed_kb;
	return warm;
}

void frame_free(struct hw *hw, uint32_t f)
{
	struct frame *fr = frame_of(hw, f);
	SIM_BUG_ON(hw->sim, fr->state == FRAME_FREE);
	if (hw->hooks && hw->hooks->frame_free)
		hw->hooks->frame_free(hw->hooks_ctx, f);
	if (fr->state == FRAME_PGTABLE) {
		SIM_BUG_ON(hw->sim, fr->nr_used != 0);
		table_buf_put(hw, fr->table);
		fr->table = NULL;
		hw->m->tables_freed++;
	} else {
		hw->m->pages_freed++;
	}
	fr->state = FRAME_FREE;
	fr->gen++;
	fr->refcount = 0;
	fr->next_free = hw->free_head;
	hw->free_head = f;
	hw->frames_in_use--;
}
