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
#include <stdio.h>

#include "sim/sim.h"

/* The live PTE for va in mm (what the kernel sees), or 0. */
static pte_t live_pte(struct sim *s, struct mm_struct *mm, uint64_t va)
{
	pte_t *ptep = pte_lookup(s, mm, va);
	return ptep ? *ptep : 0;
}

static void realized(struct sim *s, int cpu, const char *what, uint64_t va, uint32_t frame)
{
	char ent[160];
	snprintf(ent, sizeof(ent), "cpu %d %s -> frame %u", cpu, what, frame);
	sim_violation(s, INV_I1_REALIZED, cpu, va, frame, ent,
		      "I1 REALIZED: cpu %d used a %s for va 0x%llx whose frame %u was freed or "
		      "reused", cpu, what, (unsigned long long)va, frame);
}

/* I3: a write through a cached writable+dirty entry does not reach the PTE;
 * if the kernel has meanwhile made the PTE clean (MADV_FREE) the data is
 * lost when reclaim discards the "clean" page. */
static void check_i3(struct sim *s, int cpu, struct mm_struct *mm, uint64_t va,
		     const struct tc_entry *te)
{
	struct frame *fr = frame_of(&s->hw, te->frame);
	if (!fr->lazyfree)
		return;
	pte_t pte = live_pte(s, mm, va);
	bool clean = !(pte & PTE_DIRTY) &&
		     (s->profile->arch == ARCH_X86_64 || (pte & PTE_RDONLY));
	if (!pte_present(pte) || pte_pfn(pte) != te->frame || !clean)
		return;
	char ent[160];
	snprintf(ent, sizeof(ent), "cpu %d TLB leaf: va 0x%llx -> frame %u, cached writable+dirty",
		 cpu, (unsigned long long)va, te->frame);
	sim_violation(s, INV_I3, cpu, va, te->frame, ent,
		      "I3: cpu %d wrote va 0x%llx through a stale dirty TLB entry after "
		      "MADV_FREE made the PTE clean: the write is invisible to reclaim",
		      cpu, (unsigned long long)va);
}

static inline const pte_t *frame_table_or_null(struct sim *s, uint32_t f)
{
	struct frame *fr = frame_of(&s->hw, f);
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
		if (te->gen != frame_of(&s->hw, te->frame)->gen)
			realized(s, cpu, "leaf TLB entry", va, te->frame);
		if (!write)
			return 0;
		if (x86) {
			if (!(te->perm & PTE_WRITE))
				goto fault;
			if (te->perm & PTE_DIRTY) {
				check_i3(s, cpu, mm, va, te);
				return 0;
			}
			/* not dirty in the TLB: re-walk to set D */
			tc_remove(s, &hc->tlb, te);
		} else {
			if (!(te->perm & PTE_RDONLY)) {
				check_i3(s, cpu, mm, va, te);
				return 0;
			}
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
		if (we->gen != frame_of(&s->hw, we->frame)->gen) {
			realized(s, cpu, "walk-cache entry", va, we->frame);
		} else if (frame_of(&s->hw, we->frame)->rcu_checked) {
			char ent[160];
			snprintf(ent, sizeof(ent), "cpu %d walk-cache entry: level %d -> table frame %u "
				 "(unlinked, waiting for RCU)", cpu, d, we->frame);
			sim_violation(s, INV_STALE_WALK, cpu, va, we->frame, ent,
				      "stale walk: cpu %d walked va 0x%llx through table frame %u "
				      "after the table was unlinked and its flush completed", cpu,
				      (unsigned long long)va, we->frame);
		}
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
			if (write && !(e & PTE_DIRTY)) {
				/* dirty again: no longer a clean lazyfree page */
				frame_of(&s->hw, pte_pfn(e))->lazyfree = 0;
				frame_of(&s->hw, pte_pfn(e))->dirty_epoch = ++s->map_epoch;
			}
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
