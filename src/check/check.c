/*
 * check.c - the invariant oracle (kernel-model 7 and 9.3), evaluated as the
 * simulation runs, in every mode.
 *
 * Reachability of a cached entry (kernel-model 7):
 *  - arm64: every entry tagged with the ASID of a live mm is reachable (the
 *    allocator never reuses an ASID without a full flush; W3 covers dead mms);
 *  - x86: an entry of PCID slot k on CPU c is reachable if slot k belongs to a
 *    live mm and either c has that slot loaded and is not lazy, or the slot's
 *    tlb_gen still equals the mm's (no flush was skipped that switch_mm would
 *    catch up on). Walk entries on a lazy CPU with the slot loaded are
 *    reachable too: the CPU's CR3 still points at the tables and the hardware
 *    may walk speculatively (b956575bed91). A leaf entry on a lazy CPU is not
 *    used before switch_mm_irqs_off() compares tlb_gen.
 *
 * Checks:
 *  - I1 at free (data pages) and at the hand-off to RCU (page tables):
 *    check_frame_free(), check_tables_to_rcu();
 *  - I1 realized and stale-walk realized: in the MMU (mmu.c);
 *  - I2 at the return of munmap / madvise(DONTNEED): check_range_unmapped();
 *  - I3 at a write through a cached dirty entry: mmu.c;
 *  - livelock: memory.c.
 * Deliberate windows (not reported): W3 dead-ASID leaves (arm64 fullmm);
 * entries used between unlink and the flush that covers them; x86 lazy-CPU
 * leaves whose tlb_gen is behind.
 */
#include <stdio.h>
#include <string.h>

#include "sim/explore.h"
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

/* The live mm an entry on cpu belongs to if it is reachable, else NULL. */
static struct mm_struct *entry_reachable(struct sim *s, int cpu, const struct tc_entry *e,
					 bool walk)
{
	if (s->profile->arch == ARCH_ARM64)
		return mm_by_asid(s, e->tag);
	const struct arch_cpu *ac = &s->cpus[cpu].arch;
	int slot = P(s, P_pcid) ? (int)e->tag - 1 : 0;
	if (slot < 0 || slot >= TLB_NR_DYN_ASIDS)
		return NULL;
	struct mm_struct *mm = mm_by_ctx(s, ac->ctxs[slot].ctx_id);
	if (!mm)
		return NULL;
	bool loaded = ac->loaded_mm == mm && ac->loaded_mm_asid == slot;
	if (loaded && (!ac->is_lazy || walk))
		return mm;
	return ac->ctxs[slot].tlb_gen == mm->tlb_gen ? mm : NULL;
}

static uint64_t entry_va(const struct sim *s, const struct tc_entry *e, bool walk)
{
	return e->key << (walk ? s->hw.geom.shift[e->depth] : s->hw.geom.page_shift);
}

static void describe_entry(const struct sim *s, int cpu, const struct tc_entry *e, bool walk,
			   char *buf, size_t len)
{
	if (walk)
		snprintf(buf, len, "cpu %d walk-cache entry: level %d span 0x%llx.. tag %u -> "
			 "table frame %u (gen %u)", cpu, e->depth,
			 (unsigned long long)entry_va(s, e, true), e->tag, e->frame, e->gen);
	else
		snprintf(buf, len, "cpu %d TLB leaf: va 0x%llx tag %u -> frame %u (gen %u)%s%s",
			 cpu, (unsigned long long)entry_va(s, e, false), e->tag, e->frame, e->gen,
			 (e->perm & PTE_WRITE) ? " W" : "", (e->perm & PTE_DIRTY) ? " D" : "");
}

static const char *const tlbi_names[] = {"VALE1IS", "VAE1IS", "ASIDE1IS", "VAALE1IS",
					 "VMALLE1IS", "local VALE1"};

void describe_flush(const struct sim *s, const struct flush_note *f, char *buf, size_t len);
void describe_flush(const struct sim *s, const struct flush_note *f, char *buf, size_t len)
{
	switch (f->what) {
	case 1:
		snprintf(buf, len, "%s%llu x TLBI %s over [0x%llx, 0x%llx) stride 0x%llx by cpu %d "
			 "at step %llu", f->nested ? "nested tlb_finish_mmu: " : "",
			 (unsigned long long)f->nops, tlbi_names[f->op % 6],
			 (unsigned long long)f->start, (unsigned long long)f->end,
			 (unsigned long long)f->stride, f->cpu, (unsigned long long)f->step);
		break;
	case 2:
		snprintf(buf, len, "%sflush_tlb_mm_range(%s, freed_tables=%d) by cpu %d: IPIs to %d "
			 "CPUs, at step %llu", f->nested ? "nested tlb_finish_mmu: " : "",
			 f->op ? "TLB_FLUSH_ALL" : "range", f->freed_tables, f->cpu, f->ntargets,
			 (unsigned long long)f->step);
		if (!f->op && f->end != ~0ull) {
			size_t n = strlen(buf);
			snprintf(buf + n, len - n, " [0x%llx, 0x%llx)", (unsigned long long)f->start,
				 (unsigned long long)f->end);
		}
		break;
	default:
		snprintf(buf, len, "none: the freeing thread issued no flush");
	}
}

/* I1: a reachable entry holds frame f, which is being freed (or handed to RCU). */
static bool check_frame(struct sim *s, uint32_t f, const char *when)
{
	const struct frame *fr = frame_of(&s->hw, f);
	bool table = fr->state == FRAME_PGTABLE;
	for (int c = 0; c < s->nr_cpus; c++) {
		struct hw_cpu *hc = &s->hw.cpu[c];
		for (int which = 0; which < 2; which++) {
			struct tcache *tc = which ? &hc->wc : &hc->tlb;
			for (uint32_t i = 0; i < tc->ndense; i++) {
				const struct tc_entry *e = &tc->e[tc->dense[i]];
				if (e->frame != f || e->gen != fr->gen)
					continue;
				if (!entry_reachable(s, c, e, which == 1))
					continue;
				char ent[160];
				describe_entry(s, c, e, which == 1, ent, sizeof(ent));
				sim_violation(s, INV_I1, c, entry_va(s, e, which == 1), f, ent,
					      "I1 LATENT: %s frame %u %s while cpu %d can still reach it "
					      "through a cached %s entry", table ? "page-table" : "data",
					      f, when, c, which ? "walk-cache" : "TLB");
				return true;
			}
		}
	}
	return false;
}

/* spec_walks=1 (kernel-model 8.6): an x86 CPU whose CR3 still points at the
 * mm may have filled paging-structure-cache entries speculatively from any
 * table the mm had; unless its PSC was flushed after the table was unlinked,
 * freeing the table leaves it reachable. */
static bool check_spec_walk(struct sim *s, uint32_t f, const char *when)
{
	const struct frame *fr = frame_of(&s->hw, f);
	if (s->profile->arch != ARCH_X86_64 || !P(s, P_spec_walks) || fr->state != FRAME_PGTABLE)
		return false;
	for (int c = 0; c < s->nr_cpus; c++) {
		const struct sim_cpu *cpu = &s->cpus[c];
		if (!cpu->arch.loaded_mm || cpu->psc_epoch >= fr->unlink_epoch)
			continue;
		char ent[160];
		snprintf(ent, sizeof(ent), "cpu %d%s: CR3 still loads the mm; its paging-structure "
			 "cache may hold a speculative entry to table frame %u", c,
			 cpu->arch.is_lazy ? " (lazy TLB)" : "", f);
		sim_violation(s, INV_I1, c, 0, f, ent,
			      "I1 LATENT (speculative walk): page-table frame %u %s while cpu %d%s "
			      "had no paging-structure flush since the table was unlinked", f, when,
			      c, cpu->arch.is_lazy ? " (lazy TLB)" : "");
		return true;
	}
	return false;
}

void check_frame_free(struct sim *s, uint32_t f)
{
	if (check_spec_walk(s, f, "freed"))
		return;
	if (frame_of(&s->hw, f)->rcu_checked || !frame_of(&s->hw, f)->tlb_refs)
		return;		/* checked when handed to RCU / nothing cached */
	check_frame(s, f, "freed");
}

void check_tables_to_rcu(struct sim *s, const uint32_t *tables, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		frame_of(&s->hw, tables[i])->rcu_checked = 1;
		if (frame_of(&s->hw, tables[i])->tlb_refs && check_frame(s, tables[i], "handed to RCU"))
			return;
	}
}

/* The live PTE for va in mm (what the kernel sees), or 0. */
static pte_t live_pte(struct sim *s, struct mm_struct *mm, uint64_t va)
{
	pte_t *ptep = pte_lookup(s, mm, va);
	return ptep ? *ptep : 0;
}

/* I2: when munmap/madvise(DONTNEED) of [start,end) returns, no CPU may still
 * reach an old translation for the range: one to a frame that was mapped
 * when the call began (map_epoch <= call_epoch) and that the live page tables
 * no longer map there. */
void check_range_unmapped(struct sim *s, struct mm_struct *mm, uint64_t start, uint64_t end,
			  uint64_t call_epoch, const char *call)
{
	for (int c = 0; c < s->nr_cpus; c++) {
		struct tcache *tc = &s->hw.cpu[c].tlb;
		for (uint32_t i = 0; i < tc->ndense; i++) {
			const struct tc_entry *e = &tc->e[tc->dense[i]];
			uint64_t va = entry_va(s, e, false);
			if (va < start || va >= end)
				continue;
			if (entry_reachable(s, c, e, false) != mm)
				continue;
			/* only translations that existed when the call began are
			 * its business; a page mapped later belongs to a later zap */
			if (frame_of(&s->hw, e->frame)->map_epoch > call_epoch)
				continue;
			pte_t pte = live_pte(s, mm, va);
			if (pte_present(pte) && pte_pfn(pte) == e->frame)
				continue;
			char ent[160];
			describe_entry(s, c, e, false, ent, sizeof(ent));
			sim_violation(s, INV_I2, c, va, e->frame, ent,
				      "I2: %s of [0x%llx, 0x%llx) returned while cpu %d still "
				      "translates 0x%llx to its old frame %u", call,
				      (unsigned long long)start, (unsigned long long)end, c,
				      (unsigned long long)va, e->frame);
			return;
		}
	}
}
