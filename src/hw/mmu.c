/*
 * mmu.c - the MMU side of a user access: TLB lookup, hardware walk starting
 * from the deepest walk-cache hit, cache fills and A/D handling, under the
 * rules of the page-table format.
 *
 * Fill rules (kernel-model 3.1, 4.1): invalid descriptors are never cached;
 * with af_fault (arm64) a leaf with AF=0 raises an access-flag fault and is not
 * cached; a leaf that raises a permission fault (RDONLY on write) may be
 * cached; with hw_sets_ad (x86) the walker sets A (and D on a write) itself,
 * and a cached entry without D forces a re-walk on the first write.
 *
 * A present PMD-level descriptor with PTE_HUGE is a block: the walk stops
 * there and fills one leaf TLB entry (TC_BLOCK, keyed by the block's first
 * page) that later lookups of any page of the block hit (access_block).
 *
 * Observers learn of a cached entry used after its frame was freed or reused
 * (stale_use), of walks through watched tables and of writes into watched
 * pages (struct hw_hooks).
 */
#include "hw/hw.h"

/* the descriptors of table frame f, or NULL when f is no page table (a
 * PGTABLE frame always has its buffer: frame_alloc) */
static inline const pte_t *frame_table_or_null(const struct hw *hw, uint32_t f)
{
	const struct frame *fr = frame_of(hw, f);
	return fr->state == FRAME_PGTABLE ? fr->table : NULL;
}

static inline void stale_use(struct hw *hw, int cpu, const char *what, uint64_t va, uint32_t f)
{
	if (hw->hooks && hw->hooks->stale_use)
		hw->hooks->stale_use(hw->hooks_ctx, cpu, what, va, f);
}

/* a write completes through a cached writable+dirty leaf */
static inline void write_hit(struct hw *hw, int cpu, uint64_t va, const struct tc_entry *te)
{
	if (frame_of(hw, te->frame)->watch && hw->hooks && hw->hooks->watched_write)
		hw->hooks->watched_write(hw->hooks_ctx, cpu, va, te);
}

/*
 * The walk reached a block descriptor e (PTE_HUGE) at the PMD level, slot
 * idx of table tab: the leaf rules below for it, filling one leaf TLB entry
 * (TC_BLOCK, depth_pmd, keyed by the block's first page). True: the access
 * faults. Kept out of hw_access's 4K path.
 */
static __attribute__((noinline)) bool access_block(struct hw *hw, int cpu, pte_t *tab,
						   uint64_t idx, pte_t e, uint64_t va, uint32_t tag,
						   bool write)
{
	const struct pt_geom *g = &hw->geom;
	const struct pt_format *fmt = hw->fmt;
	struct tcache *tlb = &hw->cpu[cpu].tlb;
	uint64_t key = hw_block_key(g, va >> g->page_shift);
	if (!tlb->nblock) {
		tlb->nblock = 1;	/* sticky: see struct tcache */
		hw->nblock = 1;
	}
	pte_t ne = e;
	uint8_t keep;
	if (fmt->hw_sets_ad) {
		if (write && !(e & PTE_WRITE))
			return true;
		ne = e | PTE_YOUNG | (write ? PTE_DIRTY : 0);
		keep = PTE_WRITE | PTE_DIRTY;
	} else {
		if (fmt->af_fault && !(e & PTE_YOUNG)) {
			if (!hw->afdbm)
				return true;
			ne |= PTE_YOUNG;
		}
		if (write && (ne & PTE_RDONLY) && hw->afdbm && (ne & PTE_WRITE))
			ne &= ~PTE_RDONLY;
		keep = PTE_WRITE | PTE_DIRTY | PTE_RDONLY;
	}
	if (ne != e)
		tab[idx] = ne;
	bool dirtied = fmt->hw_sets_ad ? write && !(e & PTE_DIRTY)
				       : (e & PTE_RDONLY) && !(ne & PTE_RDONLY);
	if (dirtied && hw->hooks && hw->hooks->pte_dirtied)
		hw->hooks->pte_dirtied(hw->hooks_ctx, pte_pfn(e));
	tc_fill(hw, tlb, key, g->depth_pmd, tag, pte_pfn(e), (uint8_t)((ne & keep) | TC_BLOCK));
	return write && !fmt->hw_sets_ad && (ne & PTE_RDONLY);
}

void hw_access(struct hw *hw, int cpu, uint32_t root, uint32_t tag, uint64_t va, bool write,
	       struct hw_access *out)
{
	const struct pt_geom *g = &hw->geom;
	const struct pt_format *fmt = hw->fmt;
	struct hw_cpu *hc = &hw->cpu[cpu];
	int leaf = g->levels - 1;
	uint64_t vpn = va >> g->page_shift;

	out->fault = false;
	out->levels_read = 0;
	out->live_pte = 0;
	/* hc->tlb and hc->wc are hw_init's TC_LEAF and TC_WALK caches */
	/* the leaf filter slot of (vpn, tag), for the lookup and the fill */
	const uint32_t fslot = tc_filt_slot(&hc->tlb, vpn, tag);
	struct tc_entry *te = tc_lookup_slot_k(&hc->tlb, vpn, leaf, tag, fslot, TC_LEAF);
	/* no leaf entry (vpn, tag) is held: the leaf fill below needs no
	 * search for one to replace (tc_fill_miss) */
	const bool leaf_miss = !te;
	if (__builtin_expect(!te && hc->tlb.nblock, 0))
		te = tc_lookup_k(&hc->tlb, hw_block_key(g, vpn), g->depth_pmd, tag, TC_LEAF);
	if (te) {
		if (te->gen != frame_of(hw, te->frame)->gen)
			stale_use(hw, cpu, "leaf TLB entry", va, te->frame);
		if (!write)
			return;
		if (fmt->hw_sets_ad) {
			if (!(te->perm & PTE_WRITE))
				goto fault;
			if (te->perm & PTE_DIRTY) {
				write_hit(hw, cpu, va, te);
				return;
			}
			/* not dirty in the TLB: re-walk to set D */
			tc_remove(hw, &hc->tlb, te);
		} else {
			if (!(te->perm & PTE_RDONLY)) {
				write_hit(hw, cpu, va, te);
				return;
			}
			if (!(hw->afdbm && (te->perm & PTE_WRITE)))
				goto fault;	/* permission fault from a cached RO entry */
			/* DBM: the walker updates the descriptor; re-walk */
			tc_remove(hw, &hc->tlb, te);
		}
	}
	hw->m->tlb_misses++;

	/* deepest walk-cache hit; none when the walk cache holds no entry of
	 * the tag's hash nor a global one (tc_lookup_k's first test, once) */
	int depth = 0;
	uint32_t table = root;
	const pte_t *tab = NULL;
	const bool wc_may_hit = hc->wc.tagcnt[tag & (TC_TAGCNT - 1)] ||
				hc->wc.tagcnt[TC_TAG_GLOBAL & (TC_TAGCNT - 1)];
	for (int d = wc_may_hit ? leaf - 1 : -1; d >= 0; d--) {
		struct tc_entry *we = tc_lookup_k(&hc->wc, va >> g->shift[d], d, tag, TC_WALK);
		if (!we)
			continue;
		struct frame *wf = frame_of(hw, we->frame);
		if (we->gen != wf->gen)
			stale_use(hw, cpu, "walk-cache entry", va, we->frame);
		else if (wf->watch && hw->hooks && hw->hooks->watched_walk)
			hw->hooks->watched_walk(hw->hooks_ctx, cpu, d, va, we->frame);
		table = we->frame;
		depth = d + 1;
		break;
	}
	hw->m->page_walks++;
	out->levels_read = g->levels - depth;
	/* the table levels above the leaf, then the leaf level */
	for (int d = depth; d < leaf; d++) {
		tab = frame_table_or_null(hw, table);
		if (!tab)
			goto fault;
		uint64_t idx = pt_index(g, d, va);
		pte_t e = tab[idx];
		if (!pte_present(e))
			goto fault;
		/* present here: pmd_trans_huge_entry(e) is e & PTE_HUGE; a
		 * PROT_NONE block faulted above */
		if (__builtin_expect((e & PTE_HUGE) != 0, 0)) {
			out->levels_read--;	/* no PTE table read */
			if (access_block(hw, cpu, (pte_t *)tab, idx, e, va, tag, write))
				goto fault;
			return;
		}
		/* every depth below the deepest walk-cache hit missed its
		 * lookup above */
		tc_fill_miss_k(hw, &hc->wc, va >> g->shift[d], d, tag, pte_pfn(e), 0, 0, TC_WALK);
		table = pte_pfn(e);
	}
	{
		const struct frame *tf = frame_of(hw, table);
		if (tf->state != FRAME_PGTABLE)
			goto fault;	/* reads as a none descriptor */
		tab = tf->table;	/* a PGTABLE frame has its buffer: frame_alloc */
		uint64_t idx = pt_index(g, leaf, va);
		pte_t e = tab[idx];
		if (!pte_present(e))
			goto fault;
		if (fmt->hw_sets_ad) {
			if (write && !(e & PTE_WRITE))
				goto fault;
			/* the walker sets A (and D on a write) in the PTE */
			pte_t ne = e | PTE_YOUNG | (write ? PTE_DIRTY : 0);
			if (ne != e)
				((pte_t *)tab)[idx] = ne;
			if (write && !(e & PTE_DIRTY) && hw->hooks && hw->hooks->pte_dirtied)
				hw->hooks->pte_dirtied(hw->hooks_ctx, pte_pfn(e));
			if (leaf_miss)
				tc_fill_miss_k(hw, &hc->tlb, vpn, leaf, tag, pte_pfn(e),
					       (uint8_t)(ne & (PTE_WRITE | PTE_DIRTY)), fslot, TC_LEAF);
			else
				tc_fill(hw, &hc->tlb, vpn, leaf, tag, pte_pfn(e),
					(uint8_t)(ne & (PTE_WRITE | PTE_DIRTY)));
			return;
		}
		pte_t ne = e;
		if (fmt->af_fault && !(e & PTE_YOUNG)) {
			if (!hw->afdbm)
				goto fault;	/* access flag fault: not cached */
			ne |= PTE_YOUNG;	/* hardware AF update */
		}
		bool hw_dirtied = write && (ne & PTE_RDONLY) && hw->afdbm && (ne & PTE_WRITE);
		if (hw_dirtied)
			ne &= ~PTE_RDONLY;	/* hardware dirty-state update (DBM) */
		if (ne != e)
			((pte_t *)tab)[idx] = ne;
		if (hw_dirtied && hw->hooks && hw->hooks->pte_dirtied)
			hw->hooks->pte_dirtied(hw->hooks_ctx, pte_pfn(e));
		if (leaf_miss)
			tc_fill_miss_k(hw, &hc->tlb, vpn, leaf, tag, pte_pfn(e),
				       (uint8_t)(ne & (PTE_WRITE | PTE_DIRTY | PTE_RDONLY)), fslot,
				       TC_LEAF);
		else
			tc_fill(hw, &hc->tlb, vpn, leaf, tag, pte_pfn(e),
				(uint8_t)(ne & (PTE_WRITE | PTE_DIRTY | PTE_RDONLY)));
		if (write && (ne & PTE_RDONLY))
			goto fault;
		return;
	}
fault:
	if (fmt->fault_flushes_va) {
		/* SDM 4.10.4.1: a page fault invalidates the TLB and
		 * paging-structure entries used for the faulting address. */
		uint64_t page = va & ~(g->page_size - 1);
		struct inv_op op = {.kind = INV_VA_ALL, .tag = tag, .start = page,
				    .end = page + g->page_size, .stride = g->page_size};
		hw_invalidate_cpu(hw, cpu, &op);
	}
	out->fault = true;
	pte_t *ptep = hw_pte_lookup(hw, root, va);
	if (!ptep && hw->nblock) {
		pte_t *pmdp = hw_pmd_lookup(hw, root, va);
		if (pmdp && pmd_trans_huge_entry(*pmdp))
			ptep = pmdp;	/* the block descriptor */
	}
	out->live_pte = ptep ? *ptep : 0;
}
