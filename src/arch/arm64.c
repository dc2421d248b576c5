/*
 * arm64.c - arm64 TLB maintenance back end, v5.1 era.
 *
 * Mirrors arch/arm64/include/asm/tlb.h (tlb_flush), arch/arm64/include/asm/
 * tlbflush.h (flush_tlb_mm, __flush_tlb_range, flush_tlb_page) and
 * arch/arm64/mm/fault.c (ptep_set_access_flags) as of v5.1, with the E1
 * threshold (MAX_TLBI_OPS = PTRS_PER_PTE, ">=" for user ranges).
 *
 * Invalidation is broadcast by hardware: the effect of each TLBI is applied to
 * every CPU's caches at issue (check mode: on each other CPU at an explored
 * point up to the issuer's DSB ISH; bcast_nosync in machine.c). The cost is charged as one event per batch:
 * the batch occupies a single serialising DVM resource for
 * n x tlbi_op_ns x dvm_occupancy_pct / 100 (100 by default: fully serial)
 * (queueing behind other CPUs' batches), and the issuing CPU then waits
 * dsb_ns for DSB ISH completion. Contention arises from that queue alone.
 *
 * Context switches go through the v5.8 ASID allocator of arch/arm64/mm/
 * context.c (check_and_switch_context, new_context, flush_context): ASIDs of
 * asid_bits bits with a generation, reserved across a rollover for the mms
 * the CPUs are running, and a local full TLB flush on every CPU before it
 * switches into the new generation.
 */
#include <stddef.h>
#include <string.h>

#include "arch/points.h"
#include "arch/tlb.h"

/* The metrics' tlbi counters are laid out in enum tlbi_kind's order
 * (TLBSIM_TLBI_KINDS): the counter of kind k is the k-th, an index instead of
 * a compare chain on every batch */
#define TLBI_COUNTER_AT(k, f)                                                          \
	_Static_assert(offsetof(struct tlbsim_metrics, tlbi.f) ==                     \
			       offsetof(struct tlbsim_metrics, tlbi) + (k) * sizeof(uint64_t), \
		       "tlbi counter " #f " out of enum tlbi_kind order");
TLBI_COUNTER_AT(TLBI_VALE1IS, vale1is)
TLBI_COUNTER_AT(TLBI_VAE1IS, vae1is)
TLBI_COUNTER_AT(TLBI_ASIDE1IS, aside1is)
TLBI_COUNTER_AT(TLBI_VAALE1IS, vaale1is)
TLBI_COUNTER_AT(TLBI_VMALLE1IS, vmalle1is)
TLBI_COUNTER_AT(TLBI_LOCAL, local)
TLBI_COUNTER_AT(TLBI_RVALE1IS, rvale1is)
TLBI_COUNTER_AT(TLBI_RVAE1IS, rvae1is)
#undef TLBI_COUNTER_AT

static uint64_t *tlbi_counter(struct sim *s, enum tlbi_kind k)
{
	if ((unsigned)k >= TLBI_KIND_COUNT)
		return &s->m.tlbi.local;
	return (uint64_t *)((char *)&s->m.tlbi + (size_t)k * sizeof(uint64_t));
}

/*
 * arm64_local: the 2020 proposal ("arm64: tlb: skip tlbi broadcast",
 * Message-ID 20200223192520.20808-4-aarcange@redhat.com, not merged) keeps
 * track of the CPUs an mm has run on and flushes an mm that only ever ran on
 * the current CPU with the local TLBI form and DSB NSH. Correct only if the
 * task cannot move between the test and the TLBI (preempt_disable); the
 * preemptible variant has a preemption point there, where a pending
 * migration moves the task and the TLBI then runs on the new CPU.
 */
static bool flush_stays_local(struct sim *s, const mm_context_t *mm)
{
	enum arm64_local_policy p = machine_of(s)->policy.arm64_local;
	if (p == ARM64_LOCAL_OFF || !mm)
		return false;
	int self = cur_cpu(s);
	if (mm->active_cpu != self + 1)
		return false;
	if (p == ARM64_LOCAL_PREEMPTIBLE) {
		sim_step_arg(s, YP_LOCAL_TEST, 0, (uint64_t)self, 0);
		sim_preempt_point(s);
	}
	return true;
}

/* The local form of a batch, as the proposal's __flush_tlb_range /
 * flush_tlb_mm (arch/arm64/include/asm/tlbflush.h, v5.6-era posting) issue it:
 * TLBI ...E1 without IS, DSB NSH - this CPU's caches only, no DVM traffic;
 * tlbi_local_ns per TLBI. */
static void arm64_tlbi_local_batch(struct sim *s, enum tlbi_kind kind, uint64_t nops,
				   const struct inv_op *inv, bool user)
{
	struct machine *mc = machine_of(s);
	uint64_t n = nops * (user && P(s, P_kpti) ? 2 : 1);
	s->m.tlbi.local += n;
	s->m.tlbi_local_skipped_broadcast += n;
	sim_step_arg(s, YP_TLBI_LOCAL_FORM, 0, (uint64_t)kind, n);
	if (mc->hooks && mc->hooks->tlb_flush) {
		struct flush_note note = {.what = FLUSH_ARM64_TLBI, .op = kind, .local = true,
					  .nops = n,
					  .start = inv->start, .end = inv->end,
					  .stride = inv->stride, .cpu = cur_cpu(s)};
		mc->hooks->tlb_flush(mc->hooks_ctx, &note);
	}
	hw_invalidate_cpu(&mc->hw, cur_cpu(s), inv);
	sim_charge_sys(s, n * (uint64_t)P(s, P_tlbi_local_ns));
}

/* One batch of nops broadcast TLBIs of kind plus nrange range TLBIs of
 * rkind (FEAT_TLBIRANGE: RVALE1IS / RVAE1IS, each tlbi_range_op_ns whatever
 * it covers, calibration C2's flat shape), one DSB ISH for all. */
static void arm64_tlbi_issue(struct sim *s, const mm_context_t *mm, enum tlbi_kind kind,
			     uint64_t nops, enum tlbi_kind rkind, uint64_t nrange,
			     const struct inv_op *inv, bool user);

static void arm64_tlbi_batch(struct sim *s, const mm_context_t *mm, enum tlbi_kind kind,
			     uint64_t nops, const struct inv_op *inv, bool user)
{
	arm64_tlbi_issue(s, mm, kind, nops, kind, 0, inv, user);
}

/*
 * The batch: DSB ISHST; the TLBIs; DSB ISH. inv is applied to every CPU (check
 * mode: bcast_nosync, each other CPU's part completed at the explorer's
 * choice, at the latest by the DSB). One analytic event; see the file
 * comment.
 */
static void arm64_tlbi_issue(struct sim *s, const mm_context_t *mm, enum tlbi_kind kind,
			     uint64_t nops, enum tlbi_kind rkind, uint64_t nrange,
			     const struct inv_op *inv, bool user)
{
	struct machine *mc = machine_of(s);
	if (flush_stays_local(s, mm)) {
		arm64_tlbi_local_batch(s, kind, nops + nrange, inv, user);
		return;
	}
	uint64_t mult = 1;
	if (user && P(s, P_kpti))
		mult *= 2;		/* __tlbi_user: the twin user ASID */
	uint64_t extra_dsb = 0;
	if (P(s, P_repeat_tlbi)) {
		mult *= 2;		/* TLBI; DSB ISH; TLBI */
		extra_dsb = (nops + nrange) * (user && P(s, P_kpti) ? 2 : 1);
	}
	uint64_t ntlbi = nops * mult, nrtlbi = nrange * mult;
	*tlbi_counter(s, kind) += ntlbi;
	if (nrtlbi)
		*tlbi_counter(s, rkind) += nrtlbi;

	if (ntlbi)
		sim_step_arg(s, YP_TLBI_ISSUE, 0, (uint64_t)kind, ntlbi);
	if (nrtlbi)
		sim_step_arg(s, YP_TLBI_ISSUE, 0, (uint64_t)rkind, nrtlbi);
	if (mc->hooks && mc->hooks->tlb_flush) {
		struct flush_note n = {.what = FLUSH_ARM64_TLBI, .op = nrtlbi ? rkind : kind,
				       .nops = ntlbi + nrtlbi, .start = inv->start,
				       .end = inv->end, .stride = inv->stride, .cpu = cur_cpu(s),
				       .ttl = inv->ttl, .nrange = nrtlbi};
		mc->hooks->tlb_flush(mc->hooks_ctx, &n);
	}
	uint32_t inflight = bcast_nosync(s, inv, true);

	uint64_t per = (kind == TLBI_ASIDE1IS) ? (uint64_t)P(s, P_tlbi_asid_ns)
		     : (kind == TLBI_VMALLE1IS) ? (uint64_t)P(s, P_tlbi_all_ns)
		     : (uint64_t)P(s, P_tlbi_op_ns);
	uint64_t t0 = s->now;
	uint64_t start = mc->dvm_free_at > t0 ? mc->dvm_free_at : t0;
	s->m.dvm_wait_ns += start - t0;
	/* the issuer's latency is ntlbi x per (+ the range ops'); the shared
	 * DVM path is held for dvm_occupancy_pct of it (100: fully serial) */
	uint64_t busy = ntlbi * per + nrtlbi * (uint64_t)P(s, P_tlbi_range_op_ns);
	uint64_t pct = (uint64_t)P(s, P_dvm_occupancy_pct);
	/* pct 100 (the default) skips the divide: the same value, as busy x
	 * 100 cannot wrap (2^64 / 100 ns is 5.8 years of TLBIs) */
	mc->dvm_free_at = start + (pct == 100 ? busy : busy * pct / 100);
	uint64_t done = start + busy + (uint64_t)P(s, P_dsb_ns) * (1 + extra_dsb);
	uint64_t recv = (uint64_t)P(s, P_tlbi_recv_ns);
	if (recv) {
		/* every other running CPU handles each broadcast op, one after
		 * another from when they reach it, and the issuer's DSB ISH
		 * completes only once every CPU has finished them: the
		 * back-pressure that keeps the issuers from taking more than the
		 * receivers' whole time (without it, two CPUs flushing in turn
		 * starved a third with tlbi_recv_ns above their flush interval;
		 * robust harness, seed 1, config 87815) */
		int self = cur_cpu(s);
		uint64_t n = ntlbi + nrtlbi;
		for (int c = 0; c < s->nr_cpus; c++) {
			if (c == self || sim_cpu_idle(s, c))
				continue;
			struct arch_cpu *ac = &mc->cpu[c];
			uint64_t from = ac->dvm_recv_until > start ? ac->dvm_recv_until : start;
			ac->dvm_recv_until = from + n * recv;
			if (ac->dvm_recv_until > done)
				done = ac->dvm_recv_until;
			sim_steal(s, c, n * recv);
		}
	}
	sim_charge_sys(s, done - t0);
	if (inflight) {
		/* check mode: other CPUs run while the TLBIs are in flight */
		sim_step_arg(s, YP_TLBI_INFLIGHT, 0, inflight, 0);
		bcast_sync(s);
	}
	sim_step(s, YP_DSB, 0);
}

/* flush_tlb_mm(): DSB ISHST; TLBI ASIDE1IS; DSB ISH (tlbflush.h, v5.1) */
void flush_tlb_mm(struct sim *s, mm_context_t *mm)
{
	struct inv_op inv = {.kind = INV_TAG, .tag = mm->asid};
	arm64_tlbi_batch(s, mm, TLBI_ASIDE1IS, 1, &inv, true);
}

/* __flush_tlb_range(vma, start, end, stride, last_level, tlb_level)
 * (tlbflush.h, v5.1 with the v5.0 MAX_TLBI_OPS threshold, kernel-model E1;
 * the level hint of c4ab2cbc1d87, v5.9: tlb_level is the architectural
 * level of the leaf, 0 none - it reaches the TLB only on FEAT_TTL parts,
 * profile parameter ttl). As every version since v4.20 (67a902a) the
 * range is first widened to whole strides: start rounded down, end up -
 * the page count the range-op loop below splits is that of the widened
 * range, so a 4 KiB-ended gather with a 2 MiB stride is 512 pages (even,
 * range ops), not an odd count taken one stride at a time. */
static void __flush_tlb_range_level(struct sim *s, mm_context_t *mm, uint64_t start,
				    uint64_t end, uint64_t stride, bool last_level, int tlb_level)
{
	uint64_t max_tlbi_ops = hw_of(s)->geom.ptrs_per_pte;
	int page_shift = hw_of(s)->geom.page_shift;
	/* range ops need the part (tlbi_range) and a kernel that issues them:
	 * d1d3aa98b1d4 came in v5.9 with the TTL hints (arm64_ttl not none) */
	bool range = P(s, P_tlbi_range) && machine_of(s)->policy.arm64_ttl != ARM64_TTL_NONE;
	if (stride && start < end) {
		/* the model's callers pass end = TLB_FLUSH_ALL for a whole-mm
		 * flush (flush_tlb_mm in the kernel): no rounding wraps it */
		if (end > ~0ull - (stride - 1)) {
			flush_tlb_mm(s, mm);
			return;
		}
		start &= ~(stride - 1);
		end = (end + stride - 1) & ~(stride - 1);
	}
	/* d1d3aa98b1d4 (v5.9): with FEAT_TLBIRANGE only a range of
	 * MAX_TLBI_RANGE_PAGES (32 << 16 pages) or more flushes the ASID */
	if ((!range && end - start >= max_tlbi_ops * stride) ||
	    (range && ((end - start) >> page_shift) >= (32ull << 16))) {
		flush_tlb_mm(s, mm);
		return;
	}
	if (start >= end)
		return;
	uint64_t nops = (end - start - 1) / stride + 1, nrange = 0;
	struct inv_op inv = {.kind = last_level ? INV_VA_LEAF : INV_VA_ALL, .tag = mm->asid,
			     .start = start, .end = end, .stride = stride};
	if (range) {
		/* __flush_tlb_range_op (d1d3aa98b1d4, v5.9): an odd page count
		 * takes one classic TLBI of stride; otherwise one range op of
		 * (num + 1) << (5 * scale + 1) pages per scale 0..3 whose num
		 * field, ((pages >> (5 * scale + 1)) & 0x1f) - 1, is >= 0.
		 * v6.9 walks the scales downwards and takes the odd page last
		 * (e2768b798a19) and allows exactly MAX_TLBI_RANGE_PAGES as one
		 * op (73301e464a72): the same kinds and counts below that size */
		int64_t pages = (int64_t)((end - start) >> page_shift);
		int64_t stride_pages = (int64_t)(stride >> page_shift);
		int scale = 0;
		nops = 0;
		while (pages > 0) {
			if (pages % 2 == 1) {
				nops++;
				pages -= stride_pages;
				continue;
			}
			int64_t num = (int64_t)((pages >> (5 * scale + 1)) & 0x1f) - 1;
			if (num >= 0) {
				nrange++;
				pages -= (num + 1) << (5 * scale + 1);
			}
			scale++;
		}
		/* a range op invalidates every page of its range */
		if (nrange)
			inv.stride = 1ull << page_shift;
	}
	if (tlb_level && P(s, P_ttl)) {
		/* __tlbi_level(): the TTL field holds the level, as a depth of
		 * this geometry (levels 4 - levels .. 3) */
		int depth = tlb_level - (4 - hw_of(s)->geom.levels);
		if (depth >= 0)
			inv.ttl = (uint8_t)(depth + 1);
	}
	arm64_tlbi_issue(s, mm, last_level ? TLBI_VALE1IS : TLBI_VAE1IS, nops,
			 last_level ? TLBI_RVALE1IS : TLBI_RVAE1IS, nrange, &inv, true);
}

void __flush_tlb_range(struct sim *s, mm_context_t *mm, uint64_t start, uint64_t end,
		       uint64_t stride, bool last_level)
{
	__flush_tlb_range_level(s, mm, start, end, stride, last_level, 0);
}

/* tlb_get_level(tlb) (arch/arm64/include/asm/tlb.h, c4ab2cbc1d87 v5.9;
 * knob arm64_ttl): the level of the leaf entries the gather cleared when
 * it cleared one level only, else 0; with 52218fcd61cb (v5.14) 0 whenever
 * page tables were freed */
static int tlb_get_level(struct sim *s, const struct mmu_gather *tlb)
{
	enum arm64_ttl_policy p = machine_of(s)->policy.arm64_ttl;
	if (p == ARM64_TTL_NONE || (p == ARM64_TTL_LEAF_ONLY && tlb->freed_tables))
		return 0;
	int n = tlb->cleared_ptes + tlb->cleared_pmds + tlb->cleared_puds + tlb->cleared_p4ds;
	if (n != 1)
		return 0;
	return tlb->cleared_ptes ? 3 : tlb->cleared_pmds ? 2 : tlb->cleared_puds ? 1 : 0;
}

/* flush_pmd_tlb_range(vma, addr, end) (arch/arm64/include/asm/tlbflush.h):
 * from c4ab2cbc1d87 (v5.9, the TTL series; knob arm64_ttl not none) arm64
 * defines it as __flush_tlb_range with stride PMD_SIZE, not leaf only,
 * level 2 - one VAE1IS per 2 MiB block; before, the generic
 * flush_tlb_range: page stride, so 512 pages flush the ASID */
void arm64_flush_pmd_tlb_range(struct sim *s, mm_context_t *mm, uint64_t start, uint64_t end)
{
	if (machine_of(s)->policy.arm64_ttl == ARM64_TTL_NONE) {
		__flush_tlb_range(s, mm, start, end, hw_of(s)->geom.page_size, false);
		return;
	}
	const struct pt_geom *g = &hw_of(s)->geom;
	__flush_tlb_range_level(s, mm, start, end, 1ull << g->shift[g->depth_pmd], false, 2);
}

/* flush_tlb_page(): leaf only, VALE1IS (tlbflush.h, v4.20+) */
void flush_tlb_page(struct sim *s, mm_context_t *mm, uint64_t addr)
{
	uint64_t ps = hw_of(s)->geom.page_size;
	addr &= ~(ps - 1);
	struct inv_op inv = {.kind = INV_VA_LEAF, .tag = mm->asid, .start = addr,
			     .end = addr + ps, .stride = ps};
	arm64_tlbi_batch(s, mm, TLBI_VALE1IS, 1, &inv, true);
}

/* flush_tlb_range(vma, start, end) (arch/arm64/include/asm/tlbflush.h,
 * v4.20..v5.9): not leaf-only, since a caller may be changing table entries
 * (__flush_tlb_range with PAGE_SIZE and last_level = false: VAE1IS per page,
 * ASIDE1IS from MAX_TLBI_OPS pages) */
static void arm64_flush_tlb_range(struct sim *s, mm_context_t *mm, uint64_t start, uint64_t end)
{
	__flush_tlb_range(s, mm, start, end, hw_of(s)->geom.page_size, false);
}

/* __flush_tlb_pgtable(mm, uaddr) (arch/arm64/include/asm/tlbflush.h,
 * 285994a62c80 v4.1 .. v4.19; knob arm64_pgtable_flush=hook): DSB ISHST;
 * TLBI VAE1IS of the table's address, all levels; DSB ISH - at once, from
 * __p?d_free_tlb, before the table is queued or freed. */
void __flush_tlb_pgtable(struct sim *s, mm_context_t *mm, uint64_t uaddr)
{
	uint64_t ps = hw_of(s)->geom.page_size;
	uaddr &= ~(ps - 1);
	struct inv_op inv = {.kind = INV_VA_ALL, .tag = mm->asid, .start = uaddr,
			     .end = uaddr + ps, .stride = ps};
	arm64_tlbi_batch(s, mm, TLBI_VAE1IS, 1, &inv, true);
}

/* tlb_flush(tlb) (arch/arm64/include/asm/tlb.h, v4.20..v5.8); with
 * arm64_pgtable_flush=hook the v4.1..v4.19 one (4150e50bf5f2): the free
 * hooks invalidated the tables, so the range flush is last-level only */
static void arm64_tlb_flush(struct sim *s, struct mmu_gather *tlb)
{
	bool last_level = !tlb->freed_tables ||
			  machine_of(s)->policy.arm64_pgtable_flush == ARM64_PGTABLE_FLUSH_HOOK;
	uint64_t stride = tlb_get_unmap_size(&hw_of(s)->geom, tlb);

	if (tlb->fullmm) {
		if (!last_level)
			flush_tlb_mm(s, tlb->ctx);
		return;
	}
	__flush_tlb_range_level(s, tlb->ctx, tlb->start, tlb->end, stride, last_level,
				tlb_get_level(s, tlb));
}

/*
 * The ASID allocator (arch/arm64/mm/context.c, v5.8). An mm's ASID is valid
 * while its generation is the current one. When the map has no free ASID
 * the generation moves on, every CPU's running ASID is carried over
 * (reserved) and every CPU must invalidate its whole TLB before it next
 * switches context, so a number is never reused while a stale entry tagged
 * with it may be used. Differences from the kernel: no locking (the model is
 * sequential), and KPTI pairs follow the kpti parameter at run time (v5.8
 * halved the map whenever CONFIG_UNMAP_KERNEL_AT_EL0 was built in; with
 * kpti=0 this is the kernel built without it).
 */
/* idx2asid() */
static uint32_t asid_of_idx(const struct machine *mc, uint32_t idx)
{
	return idx << mc->asid.pair_shift;
}

/* __test_and_set_bit(idx, asid_map) */
static bool asid_map_test_and_set(struct machine *mc, uint32_t idx)
{
	uint64_t bit = 1ull << (idx % 64), *w = &mc->asid.map[idx / 64];
	bool was = *w & bit;
	*w |= bit;
	return was;
}

/* find_next_zero_bit(asid_map, NUM_USER_ASIDS, from) (lib/find_bit.c) */
static uint32_t asid_map_next_zero(const struct machine *mc, uint32_t from)
{
	for (uint32_t i = from; i < mc->asid.nr;) {
		uint64_t free = ~mc->asid.map[i / 64] >> (i % 64);
		if (free) {
			uint32_t idx = i + (uint32_t)__builtin_ctzll(free);
			return idx < mc->asid.nr ? idx : mc->asid.nr;
		}
		i = (i / 64 + 1) * 64;
	}
	return mc->asid.nr;
}

/* flush_context() (arch/arm64/mm/context.c, v5.8): a new generation. The map
 * is rebuilt from what each CPU runs (its active ASID, or, if it has not
 * switched since the last rollover, the ASID it reserved then), and every CPU
 * is marked to flush its TLB before its next context switch. */
static void flush_context(struct sim *s)
{
	struct machine *mc = machine_of(s);
	memset(mc->asid.map, 0, (mc->asid.nr + 63) / 64 * sizeof(uint64_t));
	for (int c = 0; c < s->nr_cpus; c++) {
		uint64_t id = mc->asid.active[c];
		mc->asid.active[c] = 0;
		if (id == 0)
			id = mc->asid.reserved[c];
		asid_map_test_and_set(mc, (uint32_t)(id & 0xffff) >> mc->asid.pair_shift);
		mc->asid.reserved[c] = id;
		mc->cpu[c].flush_pending = true;	/* cpumask_setall(&tlb_flush_pending) */
	}
	s->m.asid_rollovers++;
}

/* check_update_reserved_asid() (arch/arm64/mm/context.c, v5.8): if some CPU
 * reserved old_id, the mm may keep its number; every CPU holding old_id now
 * holds new_id (all of them, so a later rollover still sees the mm). */
static bool check_update_reserved_asid(struct sim *s, uint64_t old_id, uint64_t new_id)
{
	uint64_t *reserved = machine_of(s)->asid.reserved;
	bool hit = false;
	for (int c = 0; c < s->nr_cpus; c++) {
		if (reserved[c] == old_id) {
			hit = true;
			reserved[c] = new_id;
		}
	}
	return hit;
}

/* new_context() (arch/arm64/mm/context.c, v5.8): an ASID of the current
 * generation for mm: its old number if that was reserved at the rollover or
 * is still free, else the next free one after cur_idx, else roll over and
 * take the first free one. */
static void new_context(struct sim *s, mm_context_t *mm)
{
	struct machine *mc = machine_of(s);
	uint64_t gen = mc->asid.generation;
	if (mm->asid_gen) {
		uint64_t old_id = asid_ctxid(mm->asid_gen, mm->asid);
		if (check_update_reserved_asid(s, old_id, asid_ctxid(gen, mm->asid)) ||
		    !asid_map_test_and_set(mc, mm->asid >> mc->asid.pair_shift)) {
			mm->asid_gen = gen;
			return;
		}
	}
	uint32_t idx = asid_map_next_zero(mc, mc->asid.cur_idx);
	if (idx == mc->asid.nr) {
		gen = ++mc->asid.generation;
		flush_context(s);
		/* tlbsim_resolve asks for more ASIDs than CPUs, so at most
		 * nr_cpus are reserved and one is free */
		idx = asid_map_next_zero(mc, 1);
		SIM_BUG_ON(s, idx == mc->asid.nr);
	}
	asid_map_test_and_set(mc, idx);
	mc->asid.cur_idx = idx;
	mm->asid = asid_of_idx(mc, idx);
	mm->asid_gen = gen;
}

/* local_flush_tlb_all() (arch/arm64/include/asm/tlbflush.h, v5.8): TLBI
 * VMALLE1 (not broadcast) + DSB NSH on cpu, the flush a CPU owes after a
 * rollover; counted as a local TLBI, costs tlbi_local_ns of the CPU's time. */
static void local_flush_tlb_all(struct sim *s, int cpu)
{
	struct inv_op all = {.kind = INV_ALL};
	hw_invalidate_cpu(hw_of(s), cpu, &all);
	(*tlbi_counter(s, TLBI_LOCAL))++;
	s->cpus[cpu].sys_ns += (uint64_t)P(s, P_tlbi_local_ns);
}

/*
 * check_and_switch_context(mm, cpu) (arch/arm64/mm/context.c, v5.8). Fast
 * path: the mm's ASID is of the current generation and this CPU has switched
 * since the last rollover (its active ASID is not 0). Otherwise allocate if
 * the generation is old, and do the flush this CPU owes a rollover before it
 * runs the new context. ASID-tagged: nothing else is flushed.
 */
__attribute__((noinline))	/* keep arch_switch_mm's common "same mm" test small */
void arm64_check_and_switch_context(struct sim *s, int cpu, mm_context_t *mm)
{
	struct machine *mc = machine_of(s);
	struct arch_cpu *ac = arch_cpu(s, cpu);
	if (!(mm->asid_gen == mc->asid.generation && mc->asid.active[cpu] != 0)) {
		if (mm->asid_gen != mc->asid.generation)
			new_context(s, mm);
		if (ac->flush_pending) {
			ac->flush_pending = false;
			local_flush_tlb_all(s, cpu);
		}
	}
	mc->asid.active[cpu] = asid_ctxid(mm->asid_gen, mm->asid);
	ac->ttbr0_mm = mm;		/* cpu_switch_mm(mm->pgd, mm) */
	ac->ttbr0_asid = mm->asid;
	/* arm64_local's record of the CPUs the mm ran on (sticky) */
	if (mm->active_cpu == 0)
		mm->active_cpu = cpu + 1;
	else if (mm->active_cpu != cpu + 1)
		mm->active_cpu = -1;
}

/* switch_mm() / __switch_mm() (arch/arm64/include/asm/mmu_context.h, v5.8):
 * nothing to do when the CPU already runs next (prev == next, also after
 * idling with it as active_mm). A kernel thread (next == NULL) keeps the
 * previous mm, as context_switch() does with enter_lazy_tlb(). */
static void arm64_switch_mm(struct sim *s, int cpu, mm_context_t *next)
{
	if (next && arch_cpu(s, cpu)->ttbr0_mm != next)
		arm64_check_and_switch_context(s, cpu, next);
}

/* nothing to do (arch_enter_lazy_tlb skips the call) */
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

/*
 * flush_tlb_kernel_range(start, end) (arch/arm64/include/asm/tlbflush.h,
 * v6.7..v6.11): more than MAX_DVM_OPS (PTRS_PER_PTE) pages: flush_tlb_all()
 * = DSB ISHST; TLBI VMALLE1IS; DSB ISH; ISB; else DSB ISHST; TLBI VAALE1IS
 * per page; DSB ISH; ISB. Broadcast: no IPIs, IRQs-off CPUs do not delay it.
 */
static void arm64_flush_tlb_kernel_range(struct sim *s, uint64_t start, uint64_t end)
{
	const struct pt_geom *g = &hw_of(s)->geom;
	uint64_t ps = g->page_size;
	start &= ~(ps - 1);
	end = (end + ps - 1) & ~(ps - 1);
	s->m.kernel_flushes++;
	struct machine *mc = machine_of(s);
	uint64_t pages = (end - start) / ps;
	bool all = pages > g->ptrs_per_pte;
	if (all) {
		struct inv_op inv = {.kind = INV_ALL};
		arm64_tlbi_batch(s, NULL, TLBI_VMALLE1IS, 1, &inv, false);
	} else if (pages) {
		struct inv_op inv = {.kind = INV_VA_LEAF_ANYTAG, .start = start, .end = end,
				     .stride = ps};
		arm64_tlbi_batch(s, NULL, TLBI_VAALE1IS, pages, &inv, false);
	}
	if (mc->hooks && mc->hooks->kernel_flush_done)
		mc->hooks->kernel_flush_done(mc->hooks_ctx, start, end, all);
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
	.flush_tlb_kernel_range = arm64_flush_tlb_kernel_range,
	.flush_tlb_range = arm64_flush_tlb_range,
	.flush_tlb_mm = flush_tlb_mm,
};
