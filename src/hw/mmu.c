/*
 * mmu.c - the MMU side of a user access: TLB lookup, hardware walk starting
 * from the deepest walk-cache hit, cache fills, A/D handling, and the oracle
 * hooks that see a stale cached reference being used (a REALIZED violation).
 *
 * Fill rules (kernel-model 3.1, 4.1): invalid descriptors are never cached;
 * on arm64 a leaf with AF=0 raises an access-flag fault and is not cached; a
 * leaf that raises a permission fault (RDONLY on write) may be cached; on x86
 * the walker sets A (and D on a write) itself, and a cached entry without D
 * forces a re-walk on the first write.
 */
#include "sim/sim.h"

/* Software walk of the live tables (what the kernel would see). */
static pte_t live_pte(struct sim *s, struct mm_struct *mm, uint64_t va)
{
	const struct pt_geom *g = &s->hw.geom;
	uint32_t table = mm->pgd;
	for (int d = 0; d < g->levels; d++) {
		pte_t e = table_of(s, table)[pt_index(g, d, va)];
		if (!pte_present(e))
			return 0;
		if (d == g->levels - 1)
			return e;
		table = pte_pfn(e);
	}
	return 0;
}

static void realized(struct sim *s, int cpu, const char *what, uint64_t va, uint32_t frame)
{
	sim_violation(s, "REALIZED %s: cpu %d va 0x%llx used frame %u after it was freed "
		      "or reused", what, cpu, (unsigned long long)va, frame);
}

static inline const pte_t *frame_table_or_null(struct sim *s, uint32_t f)
{
	struct frame *fr = &s->hw.frames[f];
	return fr->state == FRAME_PGTABLE ? fr->table : NULL;
}

/*
 * Translate va for an access on cpu. Returns 0 when the access completes,
 * -1 on a fault (then *fault_pte = the live PTE for the livelock detector).
 */
int mmu_access(struct sim *s, int cpu, struct mm_struct *mm, uint64_t va, bool write,
	       uint64_t *fault_pte)
{
	const struct pt_geom *g = &s->hw.geom;
	struct hw_cpu *hc = &s->hw.cpu[cpu];
	bool x86 = s->profile->arch == ARCH_X86_64;
	uint32_t tag = s->arch->user_tag(s, cpu);
	int leaf = g->levels - 1;
	uint64_t vpn = va >> g->page_shift;

	struct tc_entry *te = tc_lookup(&hc->tlb, vpn, leaf, tag);
	if (te) {
		if (te->gen != s->hw.frames[te->frame].gen)
			realized(s, cpu, "leaf TLB entry", va, te->frame);
		if (!write)
			return 0;
		if (x86) {
			if (!(te->perm & PTE_WRITE))
				goto fault;
			if (te->perm & PTE_DIRTY)
				return 0;
			/* not dirty in the TLB: re-walk to set D */
			tc_remove(s, &hc->tlb, te);
		} else {
			if (!(te->perm & PTE_RDONLY))
				return 0;
			goto fault;	/* permission fault from a cached RO entry */
		}
	}
	s->m.tlb_misses++;

	/* deepest walk-cache hit */
	int depth = 0;
	uint32_t table = mm->pgd;
	const pte_t *tab = NULL;
	for (int d = leaf - 1; d >= 0; d--) {
		struct tc_entry *we = tc_lookup(&hc->wc, va >> g->shift[d], d, tag);
		if (!we)
			continue;
		if (we->gen != s->hw.frames[we->frame].gen)
			realized(s, cpu, "walk-cache entry", va, we->frame);
		table = we->frame;
		depth = d + 1;
		break;
	}
	s->m.page_walks++;
	sim_charge(s, (uint64_t)(g->levels - depth) * (uint64_t)P(s, P_walk_level_ns));
	for (int d = depth; d < g->levels; d++) {
		tab = frame_table_or_null(s, table);
		uint64_t idx = pt_index(g, d, va);
		pte_t e = tab ? tab[idx] : 0;
		if (!pte_present(e))
			goto fault;
		if (d < leaf) {
			tc_fill(s, &hc->wc, va >> g->shift[d], d, tag, pte_pfn(e), 0);
			table = pte_pfn(e);
			continue;
		}
		/* leaf */
		if (x86) {
			if (write && !(e & PTE_WRITE))
				goto fault;
			/* the walker sets A (and D on a write) in the PTE */
			pte_t ne = e | PTE_YOUNG | (write ? PTE_DIRTY : 0);
			if (ne != e)
				((pte_t *)tab)[idx] = ne;
			tc_fill(s, &hc->tlb, vpn, leaf, tag, pte_pfn(e),
				(uint8_t)(ne & (PTE_WRITE | PTE_DIRTY)));
			return 0;
		}
		if (!(e & PTE_YOUNG))
			goto fault;		/* access flag fault: not cached */
		tc_fill(s, &hc->tlb, vpn, leaf, tag, pte_pfn(e),
			(uint8_t)(e & (PTE_WRITE | PTE_DIRTY | PTE_RDONLY)));
		if (write && (e & PTE_RDONLY))
			goto fault;
		return 0;
	}
fault:
	if (x86) {
		/* SDM 4.10.4.1: a page fault invalidates the TLB and
		 * paging-structure entries used for the faulting address. */
		uint64_t page = va & ~(g->page_size - 1);
		struct inv_op op = {.kind = INV_VA_ALL, .tag = tag, .start = page,
				    .end = page + g->page_size, .stride = g->page_size};
		hw_invalidate_cpu(s, cpu, &op);
	}
	*fault_pte = live_pte(s, mm, va);
	return -1;
}
