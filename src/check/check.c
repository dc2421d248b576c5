/*
 * check.c - the invariant oracle's frame-free check (I1, kernel-model 7 and
 * 9.3), evaluated in every mode.
 *
 * When a frame is freed while some translation-cache entry still holds it,
 * decide whether that entry is reachable:
 *  - arm64: every entry tagged with the ASID of a live mm is reachable (the
 *    allocator never reuses an ASID without a full flush; W3 covers dead mms);
 *  - x86: an entry of PCID slot k on CPU c is reachable if slot k belongs to a
 *    live mm and either c has that slot loaded and is not lazy, or the slot's
 *    tlb_gen still equals the mm's (no flush was skipped that switch_mm would
 *    catch up on). Walk entries on a lazy CPU with the slot loaded are
 *    reachable too (speculative walks through the paging-structure cache;
 *    b956575bed91).
 * A reachable entry to a freed frame is a LATENT I1 violation.
 */
#include <stdio.h>

#include "sim/sim.h"

static struct mm_struct *mm_by_asid(struct sim *s, uint32_t asid)
{
	for (int i = 0; i < s->nr_mms; i++)
		if (s->mms[i].asid == asid && s->mms[i].users)
			return &s->mms[i];
	return NULL;
}

static struct mm_struct *mm_by_ctx(struct sim *s, uint64_t ctx_id)
{
	for (int i = 0; i < s->nr_mms; i++)
		if (s->mms[i].ctx_id == ctx_id && s->mms[i].users)
			return &s->mms[i];
	return NULL;
}

static bool reachable(struct sim *s, int cpu, const struct tc_entry *e, bool walk)
{
	if (s->profile->arch == ARCH_ARM64)
		return mm_by_asid(s, e->tag) != NULL;
	const struct arch_cpu *ac = &s->cpus[cpu].arch;
	int slot = P(s, P_pcid) ? (int)e->tag - 1 : 0;
	if (slot < 0 || slot >= TLB_NR_DYN_ASIDS)
		return false;
	struct mm_struct *mm = mm_by_ctx(s, ac->ctxs[slot].ctx_id);
	if (!mm)
		return false;
	bool loaded = ac->loaded_mm == mm && ac->loaded_mm_asid == slot;
	if (loaded && !ac->is_lazy)
		return true;
	if (loaded && walk)
		return true;
	/* not loaded, or a leaf on a lazy CPU: stale only if no flush was
	 * skipped that switch_mm_irqs_off() would catch up on */
	return ac->ctxs[slot].tlb_gen == mm->tlb_gen;
}

void check_frame_free(struct sim *s, uint32_t f)
{
	const struct frame *fr = &s->hw.frames[f];
	bool table = fr->state == FRAME_PGTABLE;
	for (int c = 0; c < s->nr_cpus; c++) {
		struct hw_cpu *hc = &s->hw.cpu[c];
		for (int which = 0; which < 2; which++) {
			struct tcache *tc = which ? &hc->wc : &hc->tlb;
			for (uint32_t i = 0; i < tc->ndense; i++) {
				const struct tc_entry *e = &tc->e[tc->dense[i]];
				if (e->frame != f || e->gen != fr->gen)
					continue;
				if (!reachable(s, c, e, which == 1))
					continue;
				sim_violation(s, "I1 LATENT: %s frame %u freed while cpu %d still "
					      "caches a %s entry to it (va 0x%llx, tag %u)",
					      table ? "page-table" : "data", f, c,
					      which ? "walk-cache" : "leaf TLB",
					      (unsigned long long)(e->key << (which ?
						s->hw.geom.shift[e->depth] : s->hw.geom.page_shift)),
					      e->tag);
				return;
			}
		}
	}
}
