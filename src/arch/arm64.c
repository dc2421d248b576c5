/*
 * arm64.c - arm64 TLB maintenance back end, v5.1 era.
 *
 * Mirrors arch/arm64/include/asm/tlb.h (tlb_flush), arch/arm64/include/asm/
 * tlbflush.h (flush_tlb_mm, __flush_tlb_range, flush_tlb_page) and
 * arch/arm64/mm/fault.c (ptep_set_access_flags) as of v5.1, with the E1
 * threshold (MAX_TLBI_OPS = PTRS_PER_PTE, ">=" for user ranges).
 *
 * Invalidation is broadcast by hardware: the effect of each TLBI is applied to
 * every CPU's caches at issue. The cost is charged as one event per batch:
 * the batch occupies a single serialising DVM resource for n x tlbi_op_ns
 * (queueing behind other CPUs' batches), and the issuing CPU then waits
 * dsb_ns for DSB ISH completion. Contention arises from that queue alone.
 */
#include "arch/points.h"
#include "arch/tlb.h"

static uint64_t *tlbi_counter(struct sim *s, enum tlbi_kind k)
{
	switch (k) {
	case TLBI_VALE1IS: return &s->m.tlbi.vale1is;
	case TLBI_VAE1IS: return &s->m.tlbi.vae1is;
	case TLBI_ASIDE1IS: return &s->m.tlbi.aside1is;
	case TLBI_VAALE1IS: return &s->m.tlbi.vaale1is;
	case TLBI_VMALLE1IS: return &s->m.tlbi.vmalle1is;
	case TLBI_LOCAL:
	case TLBI_KIND_COUNT: break;
	}
	return &s->m.tlbi.local;
}

/*
 * Issue nops broadcast TLBIs of one kind (DSB ISHST; TLBI x n; DSB ISH) and
 * apply inv to every CPU. One analytic event; see the file comment.
 */
static void arm64_tlbi_batch(struct sim *s, enum tlbi_kind kind, uint64_t nops,
			     const struct inv_op *inv, bool user)
{
	struct machine *mc = machine_of(s);
	uint64_t mult = 1;
	if (user && P(s, P_kpti))
		mult *= 2;		/* __tlbi_user: the twin user ASID */
	uint64_t extra_dsb = 0;
	if (P(s, P_repeat_tlbi)) {
		mult *= 2;		/* TLBI; DSB ISH; TLBI */
		extra_dsb = nops * (user && P(s, P_kpti) ? 2 : 1);
	}
	uint64_t ntlbi = nops * mult;
	*tlbi_counter(s, kind) += ntlbi;

	sim_step_arg(s, YP_TLBI_ISSUE, 0, (uint64_t)kind, ntlbi);
	if (mc->hooks && mc->hooks->tlb_flush) {
		struct flush_note n = {.what = FLUSH_ARM64_TLBI, .op = kind, .nops = ntlbi,
				       .start = inv->start, .end = inv->end,
				       .stride = inv->stride, .cpu = cur_cpu(s)};
		mc->hooks->tlb_flush(mc->hooks_ctx, &n);
	}
	for (int c = 0; c < s->nr_cpus; c++) {
		uint32_t removed = hw_invalidate_cpu(&mc->hw, c, inv);
		if (removed)
			sim_trace(s, TR_TLBI_HIT, (uint64_t)c, removed);
	}

	uint64_t per = (kind == TLBI_ASIDE1IS) ? (uint64_t)P(s, P_tlbi_asid_ns)
		     : (kind == TLBI_VMALLE1IS) ? (uint64_t)P(s, P_tlbi_all_ns)
		     : (uint64_t)P(s, P_tlbi_op_ns);
	uint64_t t0 = s->now;
	uint64_t start = mc->dvm_free_at > t0 ? mc->dvm_free_at : t0;
	s->m.dvm_wait_ns += start - t0;
	mc->dvm_free_at = start + ntlbi * per;
	uint64_t done = mc->dvm_free_at + (uint64_t)P(s, P_dsb_ns) * (1 + extra_dsb);
	sim_charge_sys(s, done - t0);
	sim_step(s, YP_DSB, 0);
}

/* flush_tlb_mm(): DSB ISHST; TLBI ASIDE1IS; DSB ISH (tlbflush.h, v5.1) */
void flush_tlb_mm(struct sim *s, mm_context_t *mm)
{
	struct inv_op inv = {.kind = INV_TAG, .tag = mm->asid};
	arm64_tlbi_batch(s, TLBI_ASIDE1IS, 1, &inv, true);
}

/* __flush_tlb_range(vma, start, end, stride, last_level) (tlbflush.h, v5.1
 * with the v5.0 MAX_TLBI_OPS threshold, kernel-model E1) */
void __flush_tlb_range(struct sim *s, mm_context_t *mm, uint64_t start, uint64_t end,
		       uint64_t stride, bool last_level)
{
	uint64_t max_tlbi_ops = hw_of(s)->geom.ptrs_per_pte;
	if (end - start >= max_tlbi_ops * stride) {
		flush_tlb_mm(s, mm);
		return;
	}
	if (start >= end)
		return;
	uint64_t nops = (end - start - 1) / stride + 1;
	struct inv_op inv = {.kind = last_level ? INV_VA_LEAF : INV_VA_ALL, .tag = mm->asid,
			     .start = start, .end = end, .stride = stride};
	arm64_tlbi_batch(s, last_level ? TLBI_VALE1IS : TLBI_VAE1IS, nops, &inv, true);
}

/* flush_tlb_page(): leaf only, VALE1IS (tlbflush.h, v4.20+) */
void flush_tlb_page(struct sim *s, mm_context_t *mm, uint64_t addr)
{
	uint64_t ps = hw_of(s)->geom.page_size;
	addr &= ~(ps - 1);
	struct inv_op inv = {.kind = INV_VA_LEAF, .tag = mm->asid, .start = addr,
			     .end = addr + ps, .stride = ps};
	arm64_tlbi_batch(s, TLBI_VALE1IS, 1, &inv, true);
}

/* tlb_flush(tlb) (arch/arm64/include/asm/tlb.h, v4.20..v5.8) */
static void arm64_tlb_flush(struct sim *s, struct mmu_gather *tlb)
{
	bool last_level = !tlb->freed_tables;
	uint64_t stride = tlb_get_unmap_size(&hw_of(s)->geom, tlb);

	if (tlb->fullmm) {
		if (!last_level)
			flush_tlb_mm(s, tlb->ctx);
		return;
	}
	__flush_tlb_range(s, tlb->ctx, tlb->start, tlb->end, stride, last_level);
}

/* check_and_switch_context() (arch/arm64/mm/context.c): ASID-tagged, so a
 * context switch installs TTBR0 and flushes nothing. A CPU going idle keeps
 * TTBR0 (only the ASID matters here). */
static void arm64_switch_mm(struct sim *s, int cpu, mm_context_t *next)
{
	if (next)
		arch_cpu(s, cpu)->ttbr0_asid = next->asid;
}

static void arm64_enter_lazy_tlb(struct sim *s, int cpu)
{
	(void)s;
	(void)cpu;
}

/* local_flush_tlb_page() (arch/arm64/include/asm/tlbflush.h, cb1fa2e99955,
 * v6.19): DSB NSHST; TLBI VALE1 (and the KPTI user twin); DSB NSH. Only this
 * CPU's TLB; no DVM traffic. */
void local_flush_tlb_page(struct sim *s, mm_context_t *mm, uint64_t addr)
{
	struct machine *mc = machine_of(s);
	uint64_t ps = mc->hw.geom.page_size;
	addr &= ~(ps - 1);
	uint64_t n = P(s, P_kpti) ? 2 : 1;
	s->m.tlbi.local += n;
	sim_step_arg(s, YP_TLBI_LOCAL, 0, n, addr);
	if (mc->hooks && mc->hooks->tlb_flush) {
		struct flush_note note = {.what = FLUSH_ARM64_TLBI, .op = TLBI_LOCAL, .nops = n,
					  .start = addr, .end = addr + ps, .stride = ps,
					  .cpu = cur_cpu(s)};
		mc->hooks->tlb_flush(mc->hooks_ctx, &note);
	}
	struct inv_op inv = {.kind = INV_VA_LEAF, .tag = mm->asid, .start = addr, .end = addr + ps,
			     .stride = ps};
	hw_invalidate_cpu(&mc->hw, cur_cpu(s), &inv);
	sim_charge_sys(s, n * (uint64_t)P(s, P_tlbi_local_ns));
}

/*
 * flush_tlb_fix_spurious_fault() by the spurious_flush knob: v5.8 uses the
 * generic default, flush_tlb_page() -> one broadcast VALE1IS (kernel-model
 * 4.6, 5.3); the arm64 v5.10 change makes it a no-op; cb1fa2e99955 (v6.19)
 * makes it local (local_flush_tlb_page_nonotify). b7333b58f358 and the RFC
 * act in the generic fault path, before this hook.
 */
static unsigned arm64_flush_tlb_fix_spurious_fault(struct sim *s, mm_context_t *mm, uint64_t addr)
{
	unsigned n = P(s, P_kpti) ? 2 : 1;
	switch (machine_of(s)->policy.spurious_flush) {
	case SPURIOUS_NOOP:
		return 0;
	case SPURIOUS_LOCAL:
		local_flush_tlb_page(s, mm, addr);
		return n;
	case SPURIOUS_BROADCAST:
	case SPURIOUS_SKIP_TRIED:
	case SPURIOUS_SKIP_AF_UPDATE:
	case SPURIOUS_COUNT:
		break;
	}
	flush_tlb_page(s, mm, addr);
	return n * (P(s, P_repeat_tlbi) ? 2 : 1);
}

/*
 * ptep_set_access_flags() (arch/arm64/mm/fault.c): nothing to do if the PTE
 * already equals entry; otherwise OR in AF/WRITE/DIRTY and make RDONLY the
 * more permissive of old and new. Then the flush, by version (the
 * spurious_flush knob): v4.x..v5.9 call flush_tlb_fix_spurious_fault()
 * whenever the PTE changed (a broadcast VALE1IS even for an AF-only change);
 * v5.10 broadcasts flush_tlb_page() only when it made the PTE dirty;
 * cb1fa2e99955 makes that flush local. A read-only entry may be cached, so
 * upgrading it needs at least a local invalidation.
 */
static bool arm64_ptep_set_access_flags(struct sim *s, mm_context_t *mm, uint64_t addr,
					pte_t *ptep, pte_t entry, bool dirty)
{
	pte_t old = *ptep;
	if (old == entry)
		return false;
	const pte_t bits = PTE_YOUNG | PTE_WRITE | PTE_DIRTY;
	pte_t nw = old | (entry & bits);
	if (!(entry & PTE_RDONLY))
		nw &= ~PTE_RDONLY;
	*ptep = nw;
	switch (machine_of(s)->policy.spurious_flush) {
	case SPURIOUS_NOOP:
		if (dirty)
			flush_tlb_page(s, mm, addr);
		break;
	case SPURIOUS_LOCAL:
		if (dirty)
			local_flush_tlb_page(s, mm, addr);
		break;
	case SPURIOUS_BROADCAST:
	case SPURIOUS_SKIP_TRIED:
	case SPURIOUS_SKIP_AF_UPDATE:
	case SPURIOUS_COUNT:
		arm64_flush_tlb_fix_spurious_fault(s, mm, addr);
		break;
	}
	return true;
}

static uint32_t arm64_user_tag(struct sim *s, int cpu)
{
	return arch_cpu(s, cpu)->ttbr0_asid;
}

const struct arch_ops arch_arm64_ops = {
	.name = "arm64",
	.fmt = &pt_format_arm64,
	.rcu_table_free = true,		/* HAVE_RCU_TABLE_FREE: __pte_free_tlb -> tlb_remove_table */
	.tlb_flush = arm64_tlb_flush,
	.flush_at_end_vma = true,	/* generic tlb_end_vma: flush unless fullmm */
	.switch_mm = arm64_switch_mm,
	.enter_lazy_tlb = arm64_enter_lazy_tlb,
	.flush_tlb_fix_spurious_fault = arm64_flush_tlb_fix_spurious_fault,
	.flush_tlb_page = flush_tlb_page,
	.ptep_set_access_flags = arm64_ptep_set_access_flags,
	.user_tag = arm64_user_tag,
};
