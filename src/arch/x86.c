/*
 * x86.c - x86-64 TLB maintenance back end, v5.1 era.
 *
 * Mirrors arch/x86/include/asm/tlb.h (tlb_flush), arch/x86/mm/tlb.c
 * (flush_tlb_mm_range, native_flush_tlb_others, flush_tlb_func_common,
 * switch_mm_irqs_off, choose_new_asid, enter_lazy_tlb) and
 * arch/x86/mm/pgtable.c (ptep_set_access_flags) as of v4.20..v5.1, with the
 * later behaviours as policy knobs (each defaults to v5.1):
 *   x86_flush_local=concurrent  v5.13 native_flush_tlb_multi: the IPIs go out,
 *                               then the local flush runs (4ce94eabac16);
 *   x86_tlb_gen=new_gen         v6.0 flush_tlb_func: nothing to do when the
 *                               CPU's gen reached the flush's new_tlb_gen
 *                               (aa44284960d5);
 *   x86_cpumask=lazy            v6.14 switch_mm_irqs_off keeps the CPU in
 *                               prev's mm_cpumask; flush_tlb_func clears it
 *                               when the mm is not loaded (209954cbc7d0,
 *                               953753db887f);
 *   x86_should_flush=loaded_mm  v6.14 should_flush_tlb: skip CPUs running
 *                               another mm unless trimming (6db2526c1d69);
 *   x86_table_free=rcu          v6.15: tables freed after a grace period
 *                               (a37259732a7d; mm/mmu_gather.c);
 *   x86_flush=invlpgb           v6.15 with INVLPGB (profile parameter
 *                               invlpgb): global ASIDs for mms active on
 *                               more than 3 CPUs, flushed by INVLPGB +
 *                               TLBSYNC; kernel flushes by INVLPGB
 *                               (d504d1247e36, be88a1dd6112, c9826613a9cb,
 *                               4afeb0ed1753, 82378c6c2f43).
 *
 * Remote invalidation needs IPIs. An IPI round is one analytic event for the
 * initiator: targets are sent to one after another (ipi_send_ns each), each
 * handles the IPI after ipi_latency_ns (later if idle: idle_exit_ns), runs
 * the handler (ipi_handler_ns + its flush work, charged to that CPU), and the
 * initiator spins until the slowest has acknowledged.
 * Effects are applied when the round is issued.
 */
#include "arch/points.h"
#include "arch/tlb.h"

static inline uint32_t kern_pcid(struct sim *s, int asid)
{
	return P(s, P_pcid) ? (uint32_t)asid + 1 : 1;
}

static inline void cpumask_set(mm_context_t *mm, int cpu)
{
	mm->cpumask[cpu / 64] |= 1ull << (cpu % 64);
}
static inline void cpumask_clear(mm_context_t *mm, int cpu)
{
	mm->cpumask[cpu / 64] &= ~(1ull << (cpu % 64));
}
static inline bool cpumask_test(const mm_context_t *mm, int cpu)
{
	return (mm->cpumask[cpu / 64] >> (cpu % 64)) & 1;
}
/* the first CPU >= from in mm's cpumask, or -1: cpumask_next(from - 1,
 * mm_cpumask(mm)) (include/linux/cpumask.h), the step of for_each_cpu */
static inline int cpumask_next(const struct machine *mc, const mm_context_t *mm, int from)
{
	for (uint32_t w = (uint32_t)from / 64; w < mc->cpumask_words; w++) {
		uint64_t bits = mm->cpumask[w];
		if (w == (uint32_t)from / 64)
			bits &= ~0ull << (from % 64);
		if (bits)
			return (int)(w * 64 + (uint32_t)__builtin_ctzll(bits));
	}
	return -1;
}

static void psc_flushed(struct sim *s, int cpu)
{
	struct machine *mc = machine_of(s);
	if (mc->hooks && mc->hooks->psc_flush)
		mc->hooks->psc_flush(mc->hooks_ctx, cpu);
}

/* cpu_feature_enabled(X86_FEATURE_INVLPGB) with x86_flush=invlpgb: the CPU
 * has it (parameter invlpgb), PCID is on (the feature depends on PCID) and
 * PTI is off (the kernel disables INVLPGB with PTI) */
static inline bool invlpgb_on(struct sim *s)
{
	return machine_of(s)->policy.x86_flush == X86_FLUSH_INVLPGB && P(s, P_invlpgb) &&
	       P(s, P_pcid) && !P(s, P_kpti);
}

/* is_global_asid() (arch/x86/include/asm/tlbflush.h, v6.15) */
static inline bool is_global_asid(int asid)
{
	return asid >= TLB_NR_DYN_ASIDS;
}

/* mm_global_asid(mm): 0 without INVLPGB */
static inline int mm_global_asid(struct sim *s, const mm_context_t *mm)
{
	return mm && invlpgb_on(s) ? mm->global_asid : 0;
}

/* mm_in_asid_transition(mm) */
static inline bool mm_in_asid_transition(struct sim *s, const mm_context_t *mm)
{
	return mm && invlpgb_on(s) && mm->asid_transition;
}

/* mm_needs_global_asid(mm, asid) (arch/x86/mm/tlb.c, be88a1dd6112): the mm
 * has a global ASID and this CPU still runs it on another */
static inline bool mm_needs_global_asid(struct sim *s, const mm_context_t *mm, int asid)
{
	int g = mm_global_asid(s, mm);
	return g && asid != g;
}

/* One INVLPGB's effect on every CPU (the broadcast reaches all of them; the
 * invalidation also drops the paging-structure caches of what it names).
 * Check mode (async_completion): a CPU that holds an entry it removes loses
 * it at an explored point, at the latest at this thread's TLBSYNC
 * (bcast_nosync; its psc_flush then); the others at issue. */
static void invlpgb_all(struct sim *s, const struct inv_op *inv)
{
	if (async_completion(s)) {
		int self = cur_cpu(s);
		for (int c = 0; c < s->nr_cpus; c++)
			if (c == self || !hw_invalidate_hits(hw_of(s), c, inv))
				psc_flushed(s, c);
		bcast_nosync(s, inv, false);
		return;
	}
	hw_invalidate_bcast(hw_of(s), inv, NULL, NULL);
	for (int c = 0; c < s->nr_cpus; c++)
		psc_flushed(s, c);
}

/* the issuing CPU's cost of n INVLPGBs (the _nosync forms) */
static void invlpgb_issue(struct sim *s, uint64_t n, int asid)
{
	s->m.invlpgb += n;
	sim_charge_sys(s, n * (uint64_t)P(s, P_invlpgb_ns));
	sim_step_arg(s, YP_INVLPGB, 0, n, (uint64_t)asid);
}

/* __tlbsync() (arch/x86/include/asm/tlb.h, v6.15): wait until every
 * INVLPGB this CPU issued has completed everywhere */
static void __tlbsync(struct sim *s)
{
	bcast_sync(s);
	s->m.tlbsync++;
	sim_charge_sys(s, (uint64_t)P(s, P_tlbsync_ns));
	sim_step(s, YP_TLBSYNC, 0);
}

static inline bool bit_test(const uint64_t *map, uint32_t i)
{
	return (map[i / 64] >> (i % 64)) & 1;
}

/* reset_global_asid_space() (arch/x86/mm/tlb.c, d504d1247e36, v6.15): at
 * the edge of the space, one INVLPGB of every non-global translation on
 * every CPU (invlpgb_flush_all_nonglobals, with its TLBSYNC) makes the
 * freed global ASIDs reusable; the search restarts at TLB_NR_DYN_ASIDS.
 * The model's invalidation drops global (kernel) entries too: it has no
 * every-PCID non-global form; that only costs misses. */
static void reset_global_asid_space(struct sim *s)
{
	struct machine *mc = machine_of(s);
	struct inv_op inv = {.kind = INV_ALL};
	invlpgb_all(s, &inv);
	bcast_sync(s);		/* its TLBSYNC */
	s->m.invlpgb++;
	s->m.tlbsync++;
	sim_charge_sys(s, (uint64_t)(P(s, P_invlpgb_ns) + P(s, P_tlbsync_ns)));
	for (uint32_t w = 0; w < (mc->gasid.max + 63) / 64; w++) {
		mc->gasid.used[w] &= ~mc->gasid.freed[w];
		mc->gasid.freed[w] = 0;
	}
	mc->gasid.last = TLB_NR_DYN_ASIDS;
}

/* allocate_global_asid() (d504d1247e36): the next free ASID from
 * last_global_asid up; 0 when none is left above it (the merged version
 * tested global_asid_available the wrong way round there and would index
 * past the bitmap; the model fails the allocation, as the fix intends) */
static int allocate_global_asid(struct sim *s)
{
	struct machine *mc = machine_of(s);
	if (mc->gasid.last >= mc->gasid.max - 1)
		reset_global_asid_space(s);
	uint32_t asid = mc->gasid.last;
	while (asid < mc->gasid.max && bit_test(mc->gasid.used, asid))
		asid++;
	if (asid >= mc->gasid.max)
		return 0;
	mc->gasid.used[asid / 64] |= 1ull << (asid % 64);
	mc->gasid.last = asid;
	mc->gasid.available--;
	return (int)asid;
}

/* mm_active_cpus_exceeds(mm, threshold) (d504d1247e36): more than
 * threshold CPUs run the mm right now (in mm_cpumask, the mm loaded, not
 * lazy); the weight of mm_cpumask first, as the quick test */
static bool mm_active_cpus_exceeds(struct sim *s, const mm_context_t *mm, int threshold)
{
	struct machine *mc = machine_of(s);
	int w = 0;
	for (uint32_t i = 0; i < mc->cpumask_words; i++)
		w += __builtin_popcountll(mm->cpumask[i]);
	if (w <= threshold)
		return false;
	int count = 0;
	for (int c = 0; c < s->nr_cpus; c++) {
		if (!cpumask_test(mm, c) || mc->cpu[c].loaded_mm != mm || mc->cpu[c].is_lazy)
			continue;
		if (++count > threshold)
			return true;
	}
	return false;
}

/* use_global_asid(mm) (d504d1247e36): keep the mm's global ASID if it has
 * one; with none left (global_asid_available == 0) the mm stays on per-CPU
 * ASIDs and IPIs; else assign one and mark the mm in transition */
void use_global_asid(struct sim *s, mm_context_t *mm)
{
	struct machine *mc = machine_of(s);
	if (mm->global_asid)
		return;
	if (mc->gasid.available <= 0)
		return;
	int asid = allocate_global_asid(s);
	if (!asid)
		return;
	mm->asid_transition = true;
	mm->global_asid = (uint16_t)asid;
}

/* consider_global_asid(mm) (4afeb0ed1753, v6.15): after an IPI flush, at
 * most one jiffy in 32 per task ((pid & 0x1f) == (jiffies & 0x1f); the task
 * id is the pid, HZ=1000), give the mm a global ASID if it is active on
 * more than 3 CPUs */
static void consider_global_asid(struct sim *s, mm_context_t *mm)
{
	if (!invlpgb_on(s) || !s->curr)
		return;
	if (((uint64_t)s->curr->id & 0x1f) != ((s->now / X86_JIFFY_NS) & 0x1f))
		return;
	if (mm_active_cpus_exceeds(s, mm, 3))
		use_global_asid(s, mm);
}

/* mm_free_global_asid(mm) (d504d1247e36, called from destroy_context by
 * c9826613a9cb) */
void mm_free_global_asid(struct sim *s, mm_context_t *mm)
{
	struct machine *mc = machine_of(s);
	if (!mm->global_asid || !mc->gasid.freed)
		return;
	mc->gasid.freed[mm->global_asid / 64] |= 1ull << (mm->global_asid % 64);
	mm->global_asid = 0;
	mm->asid_transition = false;
	mc->gasid.available++;
}

/* Full flush of the non-global entries of one PCID on cpu (CR3 write without
 * NOFLUSH / INVPCID single-context). Returns its cost. */
static uint64_t x86_flush_pcid(struct sim *s, int cpu, int asid)
{
	struct inv_op inv = {.kind = INV_TAG_NONGLOBAL, .tag = kern_pcid(s, asid)};
	tso_fence(s, cpu, TSO_SERIALISING);	/* MOV to CR3 / INVPCID */
	hw_invalidate_cpu(hw_of(s), cpu, &inv);
	psc_flushed(s, cpu);
	s->m.flush_full++;
	return (uint64_t)P(s, P_cr3_flush_ns);
}

/* choose_new_asid() (arch/x86/mm/tlb.c, v4.20..v5.1; v6.15: the mm's
 * global ASID first, with no flush) */
static void choose_new_asid(struct sim *s, int cpu, mm_context_t *next, uint64_t next_tlb_gen,
			    int *new_asid, bool *need_flush)
{
	struct arch_cpu *ac = arch_cpu(s, cpu);
	if (!P(s, P_pcid)) {
		*new_asid = 0;
		*need_flush = true;
		return;
	}
	/* be88a1dd6112 (v6.15): a global ASID is always up to date */
	int g = mm_global_asid(s, next);
	if (g) {
		*new_asid = g;
		*need_flush = false;
		return;
	}
	for (int asid = 0; asid < TLB_NR_DYN_ASIDS; asid++) {
		if (ac->ctxs[asid].ctx_id != next->ctx_id)
			continue;
		*new_asid = asid;
		*need_flush = ac->ctxs[asid].tlb_gen < next_tlb_gen;
		return;
	}
	*new_asid = ac->next_asid++;
	if (*new_asid >= TLB_NR_DYN_ASIDS) {
		*new_asid = 0;
		ac->next_asid = 1;
	}
	*need_flush = true;
}

/* this_cpu_write(cpu_tlbstate.loaded_mm / cpu_tlbstate_shared.is_lazy):
 * plain stores; under --memory-model tso they go through the CPU's store
 * buffer to the words other CPUs read (the fields are the CPU's own view) */
static void set_loaded_mm(struct sim *s, int cpu, mm_context_t *mm)
{
	struct arch_cpu *ac = arch_cpu(s, cpu);
	ac->loaded_mm = mm;
	if (__builtin_expect(machine_of(s)->tso != NULL, 0))
		tso_buffer(s, cpu, &ac->loaded_mm_mem, (uintptr_t)mm, TSO_W_LOADED_MM);
}
static void set_is_lazy(struct sim *s, int cpu, bool lazy)
{
	struct arch_cpu *ac = arch_cpu(s, cpu);
	ac->is_lazy = lazy;
	if (__builtin_expect(machine_of(s)->tso != NULL, 0))
		tso_buffer(s, cpu, &ac->is_lazy_mem, lazy, TSO_W_IS_LAZY);
}

/* The end of switch_mm_irqs_off: load_new_mm_cr3 (with or without the
 * flush), then this_cpu_write(cpu_tlbstate.loaded_mm, next). Returns the
 * cost. */
static inline __attribute__((always_inline)) uint64_t
switch_cr3(struct sim *s, int cpu, mm_context_t *next, int new_asid, bool need_flush)
{
	struct arch_cpu *ac = arch_cpu(s, cpu);
	uint64_t cost;
	/* MOV to CR3 is serialising (Intel SDM vol. 3A 9.3): the store buffer
	 * drains before it */
	tso_fence(s, cpu, TSO_SERIALISING);
	if (need_flush) {
		ac->ctxs[new_asid].ctx_id = next->ctx_id;
		ac->ctxs[new_asid].tlb_gen = next->tlb_gen;
		cost = x86_flush_pcid(s, cpu, new_asid);
	} else {
		cost = (uint64_t)P(s, P_cr3_flush_ns) / 2;	/* CR3 write with NOFLUSH */
	}
	set_loaded_mm(s, cpu, next);
	ac->loaded_mm_asid = new_asid;
	return cost;
}

/* --memory-model tso: the rest of a switch_mm_irqs_off that stopped after
 * choosing the ASID (a drain callback, the CPU's next thread resuming, an
 * IPI handler or another switch on the CPU runs it) */
static void switch_finish_cb(struct sim *s, void *arg, uint64_t data)
{
	(void)arg;
	x86_switch_finish(s, (int)data);
}

void x86_switch_finish(struct sim *s, int cpu)
{
	struct tso_cpu *t = &machine_of(s)->tso[cpu];
	if (!t->sw.pending)
		return;
	t->sw.pending = false;
	sim_cancel_call(s, switch_finish_cb, (uint64_t)cpu);
	sim_trace(s, YP_SWITCH_CR3, (uint64_t)cpu, t->sw.need_flush);
	s->cpus[cpu].sys_ns += switch_cr3(s, cpu, t->sw.next, t->sw.new_asid, t->sw.need_flush);
}

/* --memory-model tso, check mode: stop switch_mm_irqs_off before its CR3
 * write; a callback (or the CPU's next use) finishes it */
static __attribute__((noinline)) void switch_defer(struct sim *s, int cpu, mm_context_t *next,
						   int new_asid, bool need_flush)
{
	struct tso_cpu *t = &machine_of(s)->tso[cpu];
	t->sw.pending = true;
	t->sw.next = next;
	t->sw.new_asid = new_asid;
	t->sw.need_flush = need_flush;
	/* until the CR3 write the CPU runs neither mm's user code (IRQs
	 * off): its own view of loaded_mm is LOADED_MM_SWITCHING
	 * (own_loaded_mm), and prev's entries are reachable only through
	 * their tlb_gen, as after the switch */
	arch_cpu(s, cpu)->loaded_mm = NULL;
	sim_call_at(s, s->now, switch_finish_cb, NULL, NULL, (uint64_t)cpu);
}

/* this CPU's own view of cpu_tlbstate.loaded_mm: LOADED_MM_SWITCHING in the
 * middle of a TSO switch */
static uintptr_t own_loaded_mm(struct sim *s, int cpu)
{
	struct machine *mc = machine_of(s);
	if (mc->tso && mc->tso[cpu].sw.pending)
		return TSO_SWITCHING;
	return (uintptr_t)mc->cpu[cpu].loaded_mm;
}

/*
 * switch_mm_irqs_off(prev, next) (arch/x86/mm/tlb.c, v4.20..v5.1).
 * next == NULL means init_mm (kernel page tables; in this model init_mm
 * occupies no PCID slot). Returns the cost.
 *
 * Under --memory-model tso a switch to another mm follows v6.15+ at the
 * level of its loads and stores: is_lazy = false; loaded_mm =
 * LOADED_MM_SWITCHING; prev's mm_cpumask bit cleared (x86_cpumask=eager:
 * cpumask_clear_cpu, locked); next's bit set if clear (cpumask_set_cpu,
 * locked), else, with x86_switch_mb=smp_mb, smp_mb() (83b0177a6c48); the
 * read of next's tlb_gen (it may pass the buffered stores); choose_new_asid.
 * Then the switch stops: the CR3 write and loaded_mm = next come later
 * (x86_switch_finish), so that a flusher can run in between.
 */
static uint64_t switch_mm_irqs_off(struct sim *s, int cpu, mm_context_t *next)
{
	struct machine *mc = machine_of(s);
	struct arch_cpu *ac = arch_cpu(s, cpu);
	if (__builtin_expect(mc->tso != NULL, 0))
		x86_switch_finish(s, cpu);
	mm_context_t *prev = ac->loaded_mm;
	bool was_lazy = ac->is_lazy;
	int new_asid;
	bool need_flush;

	set_is_lazy(s, cpu, false);
	if (prev == next) {
		if (!next)
			return 0;
		if (mm_needs_global_asid(s, next, ac->loaded_mm_asid)) {
			/* be88a1dd6112: move onto the mm's global ASID */
			choose_new_asid(s, cpu, next, next->tlb_gen, &new_asid, &need_flush);
		} else {
			/* a global ASID is kept up to date by INVLPGB */
			if (is_global_asid(ac->loaded_mm_asid) || !was_lazy)
				return 0;
			/* back from lazy mode: catch up if flushes were skipped;
			 * the smp_mb() before the tlb_gen read (v4.19+: "The
			 * barrier synchronizes with the tlb_gen increment") */
			tso_fence(s, cpu, TSO_MFENCE);
			uint64_t next_tlb_gen = next->tlb_gen;
			if (ac->ctxs[ac->loaded_mm_asid].tlb_gen == next_tlb_gen)
				return 0;
			new_asid = ac->loaded_mm_asid;
			need_flush = true;
		}
	} else {
		/* x86_cpumask=lazy (209954cbc7d0, v6.14): the CPU stays in prev's
		 * mask until a flush finds prev not loaded; the bit of next is
		 * set only if it is clear */
		bool lazy_mask = mc->policy.x86_cpumask == X86_CPUMASK_LAZY;
		if (__builtin_expect(mc->tso != NULL, 0) && next)
			tso_buffer(s, cpu, &ac->loaded_mm_mem, TSO_SWITCHING, TSO_W_LOADED_MM);
		if (prev && !lazy_mask) {
			cpumask_clear(prev, cpu);
			tso_fence(s, cpu, TSO_LOCKED);
		}
		if (!next) {
			set_loaded_mm(s, cpu, NULL);
			return (uint64_t)P(s, P_cr3_flush_ns);
		}
		if (!cpumask_test(next, cpu)) {
			cpumask_set(next, cpu);
			tso_fence(s, cpu, TSO_LOCKED);
		} else if (mc->policy.x86_switch_mb == X86_SWITCH_MB_SMP_MB) {
			tso_fence(s, cpu, TSO_MFENCE);
		}
		if (__builtin_expect(mc->tso != NULL, 0) && tso_pending(s, cpu))
			sim_trace(s, TR_TSO_LOAD_PASSES, (uint64_t)cpu, tso_pending(s, cpu));
		choose_new_asid(s, cpu, next, next->tlb_gen, &new_asid, &need_flush);
		if (__builtin_expect(mc->tso != NULL, 0) && s->ex) {
			switch_defer(s, cpu, next, new_asid, need_flush);
			return 0;
		}
	}
	return switch_cr3(s, cpu, next, new_asid, need_flush);
}

static void x86_switch_mm(struct sim *s, int cpu, mm_context_t *next)
{
	uint64_t cost = switch_mm_irqs_off(s, cpu, next);
	/* The CR3 write runs on cpu before the incoming thread (already its
	 * current thread) continues: it elapses there, so the thread resumes
	 * that much later. Only adding it to sys_ns made busy time exceed the
	 * CPU's wall time with a large cr3_flush_ns. */
	struct sim_thread *t = s->cpus[cpu].curr;
	s->cpus[cpu].sys_ns += cost;
	if (t)
		t->pending_ns += cost;
}

/* enter_lazy_tlb() (arch/x86/mm/tlb.c, v4.20+; x86_lazy=defer: v4.14..v4.19,
 * where tlb_defer_switch_to_init_mm() - true without PCID - chose between
 * lazy mode and switch_mm(NULL, &init_mm), which leaves the mm's cpumask) */
static void x86_enter_lazy_tlb(struct sim *s, int cpu)
{
	struct arch_cpu *ac = arch_cpu(s, cpu);
	if (__builtin_expect(machine_of(s)->tso != NULL, 0))
		x86_switch_finish(s, cpu);
	if (!ac->loaded_mm)
		return;
	if (machine_of(s)->policy.x86_lazy == X86_LAZY_DEFER && P(s, P_pcid)) {
		x86_switch_mm(s, cpu, NULL);
		return;
	}
	set_is_lazy(s, cpu, true);
}

struct flush_tlb_info {
	mm_context_t *mm;
	uint64_t start, end;
	uint64_t new_tlb_gen;
	unsigned int stride_shift;
	bool freed_tables;
	bool trim_cpumask;	/* 6db2526c1d69: this flush also IPIs stale CPUs */
};

/*
 * flush_tlb_func_common(f, local, reason) (arch/x86/mm/tlb.c, v4.20..v5.1),
 * including the remote wrapper's "mm switched away" check; with the knobs,
 * flush_tlb_func() of v6.0 (x86_tlb_gen=new_gen: the new_tlb_gen check) and
 * v6.14 (x86_cpumask=lazy: a CPU that finds f->mm not loaded, remote or the
 * initiator, clears itself from its mm_cpumask). Runs on cpu. Returns the
 * flush work's cost.
 */
static uint64_t flush_tlb_func_common(struct sim *s, int cpu, const struct flush_tlb_info *f,
				      bool local)
{
	struct machine *mc = machine_of(s);
	struct arch_cpu *ac = arch_cpu(s, cpu);
	/* IRQs are off in switch_mm_irqs_off: the handler runs after it */
	if (__builtin_expect(mc->tso != NULL, 0))
		x86_switch_finish(s, cpu);
	mm_context_t *loaded = ac->loaded_mm;

	if (f->mm && f->mm != loaded) {
		/* v5.1: only a remote CPU can get here (the local call needs the
		 * mm loaded); v6.14: the CPU was left in the mask: clear it */
		if (mc->policy.x86_cpumask == X86_CPUMASK_LAZY)
			cpumask_clear(f->mm, cpu);
		return 0;
	}
	(void)local;
	if (!loaded)
		return 0;			/* init_mm */
	if (ac->is_lazy) {
		/* Leave lazy mode instead of flushing: switch to init_mm. */
		return switch_mm_irqs_off(s, cpu, NULL);
	}
	/* be88a1dd6112 (v6.15): a CPU still on a per-CPU ASID of an mm that
	 * got a global one reloads CR3 with it; a global ASID needs no flush
	 * here (INVLPGB keeps it up to date). v6.15 tested this before the
	 * lazy test; "x86/mm: fix race between flush_tlb_func and idle task
	 * leave_mm" (Message-ID 20250520102036.5d61f565@fangorn, Fixes:
	 * 4afeb0ed1753) moves the lazy test first, as here. */
	uint64_t reload = 0;
	if (mm_needs_global_asid(s, loaded, ac->loaded_mm_asid))
		reload = switch_mm_irqs_off(s, cpu, loaded);
	if (is_global_asid(ac->loaded_mm_asid))
		return reload;
	int asid = ac->loaded_mm_asid;
	uint64_t local_tlb_gen = ac->ctxs[asid].tlb_gen;
	/* aa44284960d5 (v6.0): up to date with what this flush asks for; the
	 * mm's tlb_gen (a cache line every flusher writes) is not even read */
	if (mc->policy.x86_tlb_gen == X86_TLB_GEN_NEW && f->new_tlb_gen <= local_tlb_gen)
		return 0;
	uint64_t mm_tlb_gen = loaded->tlb_gen;
	if (local_tlb_gen == mm_tlb_gen)
		return 0;			/* already caught up */

	uint64_t cost;
	if (f->end != TLB_FLUSH_ALL && f->new_tlb_gen == local_tlb_gen + 1 &&
	    f->new_tlb_gen == mm_tlb_gen) {
		uint64_t stride = 1ull << f->stride_shift;
		uint64_t n = (f->end - f->start + stride - 1) / stride;
		struct inv_op inv = {.kind = INV_X86_INVLPG, .tag = kern_pcid(s, asid),
				     .start = f->start, .end = f->end, .stride = stride};
		if (n)
			tso_fence(s, cpu, TSO_SERIALISING);	/* INVLPG */
		hw_invalidate_cpu(hw_of(s), cpu, &inv);
		if (n)
			psc_flushed(s, cpu);	/* INVLPG drops all PSCs */
		s->m.flush_local_pages += n;
		cost = n * (uint64_t)P(s, P_invlpg_ns);
	} else {
		cost = x86_flush_pcid(s, cpu, asid);
	}
	ac->ctxs[asid].tlb_gen = mm_tlb_gen;
	return cost;
}

/* the IPI handler of a user flush: flush_tlb_func_remote() (arch/x86/mm/tlb.c,
 * v4.20..v5.12; flush_tlb_func's !local branch from v5.13, 4c1ba3923e6c):
 * every call counts in irq_tlb_count, the TLB line of /proc/interrupts -
 * each received flush IPI, and before v5.13 the sender's own call of a
 * flush that freed no tables (native_flush_tlb_multi) */
static uint64_t flush_tlb_func_remote(struct sim *s, int cpu, const void *data)
{
	s->m.tlb_shootdowns++;
	return flush_tlb_func_common(s, cpu, data, false);
}

/*
 * Does cpu (in mm_cpumask, not the initiator) get the flush IPI? v4.20..v6.13
 * (native_flush_tlb_others; v5.13 tlb_is_not_lazy): with freed_tables every
 * CPU of the mask, otherwise only CPUs not in lazy TLB mode (x86_lazy=never:
 * lazy CPUs never, the pre-b956575bed91 rule; x86_lazy=defer, v4.14..v4.19:
 * every CPU of the mask, smp_call_function_many with no lazy test). v6.14 should_flush_tlb()
 * (x86_should_flush=loaded_mm, 6db2526c1d69): a flush that freed no tables
 * also skips a CPU whose loaded_mm is not the target mm, unless this flush
 * trims the mask (once a second per mm).
 */
static inline __attribute__((always_inline)) bool
should_flush(struct sim *s, uintptr_t loaded_mm, bool is_lazy, const struct flush_tlb_info *f)
{
	struct machine *mc = machine_of(s);
	/* be88a1dd6112 (v6.15): an mm in ASID transition IPIs the whole mask */
	if (mm_in_asid_transition(s, f->mm))
		return true;
	if (is_lazy && mc->policy.x86_lazy != X86_LAZY_DEFER &&
	    (!f->freed_tables || mc->policy.x86_lazy == X86_LAZY_NEVER))
		return false;
	/* a flush of no mm (the reclaim batch) reaches every CPU left */
	if (!f->mm)
		return true;
	if (!f->freed_tables && mc->policy.x86_should_flush == X86_SHOULD_FLUSH_LOADED_MM &&
	    !f->trim_cpumask) {
		/* fea4e317f9e7 (v6.15): a CPU in the middle of switch_mm may
		 * hold state of either mm: flush it (x86_switching=flush) */
		if (loaded_mm == TSO_SWITCHING)
			return mc->policy.x86_switching == X86_SWITCHING_FLUSH;
		if (loaded_mm != (uintptr_t)f->mm)
			return false;
	}
	return true;
}

/* Under --memory-model tso the flusher reads cpu c's loaded_mm and is_lazy
 * as globally visible (is_lazy after loaded_mm: fea4e317f9e7's smp_rmb() is
 * a compiler barrier on x86, where loads are not reordered with loads).
 * The flush missed c only through a reordering (the oracle hears of it:
 * I4a) when the visible values skip c but every value an SC execution could
 * have shown would flush it: the flusher's read follows its tlb_gen
 * increment, which follows c's tlb_gen read, which follows c's store of
 * LOADED_MM_SWITCHING; so SC shows SWITCHING or a later value (c's own
 * view now). */
static __attribute__((noinline)) bool tso_should_ipi(struct sim *s, int c,
						    const struct flush_tlb_info *f)
{
	struct machine *mc = machine_of(s);
	const struct arch_cpu *ac = &mc->cpu[c];
	int self = cur_cpu(s);
	uintptr_t vis_mm = tso_load(s, self, &ac->loaded_mm_mem);
	bool vis_lazy = tso_load(s, self, &ac->is_lazy_mem) != 0;
	bool vis = should_flush(s, vis_mm, vis_lazy, f);
	if (!vis && c != self && should_flush(s, own_loaded_mm(s, c), ac->is_lazy, f) &&
	    should_flush(s, TSO_SWITCHING, ac->is_lazy, f)) {
		sim_trace(s, TR_TSO_REORDER_SKIP, (uint64_t)c, 0);
		if (mc->hooks && mc->hooks->reorder_skip)
			mc->hooks->reorder_skip(mc->hooks_ctx, c);
	}
	return vis;
}

static inline bool x86_should_ipi(struct sim *s, int c, const struct flush_tlb_info *f)
{
	struct machine *mc = machine_of(s);
	const struct arch_cpu *ac = &mc->cpu[c];
	if (__builtin_expect(mc->tso != NULL, 0))
		return tso_should_ipi(s, c, f);
	return should_flush(s, (uintptr_t)ac->loaded_mm, ac->is_lazy, f);
}

/*
 * native_flush_tlb_others(cpumask, info) (arch/x86/mm/tlb.c, v4.20..v5.1) and,
 * with run_local, native_flush_tlb_multi() of v5.13+ (4ce94eabac16,
 * the cpumask that of mm - f->mm's, or a batch's union (tlbbatch_flush)),
 * smp_call_function_many_cond with SCF_RUN_LOCAL): the IPIs go out first,
 * then the initiator runs its own flush while they are in flight, then it
 * waits for every handler. The targets: x86_should_ipi(). The sender waits
 * for all handlers (a CPU with IRQs off runs its handler when it enables
 * them: irq.c).
 */
static void native_flush_tlb_multi(struct sim *s, int self, const struct flush_tlb_info *f,
				   const mm_context_t *mm, bool run_local)
{
	struct machine *mc = machine_of(s);
	uint64_t t0 = s->now;
	uint64_t finish = t0;
	uint64_t k = 0;
	struct ipi_round r = {0};
	/* for_each_cpu(c, mask): its bits in ascending order, each found from
	 * the live word (as testing every CPU's bit in turn would see them),
	 * with no branch per CPU outside the mask */
	for (int c = cpumask_next(mc, mm, 0); c >= 0; c = cpumask_next(mc, mm, c + 1)) {
		if (c == self || !x86_should_ipi(s, c, f))
			continue;
		k++;
		s->m.ipi_sent++;
		sim_trace(s, TR_IPI_TARGET, (uint64_t)c, 0);
		uint64_t at = t0 + k * (uint64_t)P(s, P_ipi_send_ns) + (uint64_t)P(s, P_ipi_latency_ns);
		if (sim_cpu_idle(s, c))
			at += (uint64_t)P(s, P_idle_exit_ns);
		uint64_t done;
		ipi_deliver(s, &r, c, at, flush_tlb_func_remote, f, sizeof(*f), &done);
		if (done > finish)
			finish = done;
	}
	if (mc->hooks && mc->hooks->ipi_sent)
		mc->hooks->ipi_sent(mc->hooks_ctx, (int)k, f->freed_tables);
	sim_trace(s, TR_IPI, k, f->freed_tables);
	uint64_t sent = t0 + k * (uint64_t)P(s, P_ipi_send_ns);
	/* the initiator's own flush_tlb_func, after the sends: the local CPU
	 * runs it if it is in the mask and the condition holds for it */
	if (run_local && cpumask_test(mm, self) && x86_should_ipi(s, self, f))
		sent += flush_tlb_func_common(s, self, f, true);
	if (sent > finish)
		finish = sent;
	if (finish > t0) {
		sim_charge_sys(s, finish - t0);
		sim_step(s, YP_IPI, 0);
	}
	if (r.outstanding) {
		r.finish = finish > r.finish ? finish : r.finish;
		ipi_round_wait(s, &r);
	}
	/* v4.20..v5.12: a flush that freed no tables called
	 * on_each_cpu_cond_mask(tlb_is_not_lazy, flush_tlb_func_remote, ...,
	 * mm_cpumask), which after the remote calls have finished runs the
	 * handler on the sender too when it is in the mask and not lazy
	 * (on_each_cpu_mask); it counts in irq_tlb_count like a received IPI
	 * and finds the local TLB up to date, flush_tlb_mm_range having
	 * flushed it first. smp_call_function_many (freed tables) skips the
	 * sender; v5.13's flush_tlb_func does not count the initiator's call. */
	if (!run_local && !f->freed_tables && mc->policy.x86_lazy == X86_LAZY_FREED_TABLES &&
	    cpumask_test(mm, self) && x86_should_ipi(s, self, f))
		sim_charge_sys(s, flush_tlb_func_remote(s, self, f));
}

/* finish_asid_transition(info) (4afeb0ed1753): while some CPU running the
 * mm is still on a per-CPU ASID, send the flush IPIs to the mask (every CPU
 * of it: the mm is in transition) so that the stragglers move onto the
 * global ASID; once every CPU running it uses the global ASID, the
 * transition is over. */
static void finish_asid_transition(struct sim *s, const struct flush_tlb_info *f)
{
	struct machine *mc = machine_of(s);
	mm_context_t *mm = f->mm;
	int g = mm_global_asid(s, mm);
	if (!mm_in_asid_transition(s, mm))
		return;
	for (int c = 0; c < s->nr_cpus; c++) {
		if (!cpumask_test(mm, c) || mc->cpu[c].loaded_mm != mm)
			continue;
		if (mc->cpu[c].loaded_mm_asid != g) {
			sim_step(s, YP_IPI, 0);
			native_flush_tlb_multi(s, cur_cpu(s), f, mm, true);
			return;
		}
	}
	mm->asid_transition = false;
}

/*
 * broadcast_tlb_flush(info) (arch/x86/mm/tlb.c, 4afeb0ed1753, v6.15): a
 * full flush is one INVLPGB of the mm's PCID; a range is INVLPGBs of up to
 * invlpgb_count_max strides each (one per stride above PMD size); every CPU
 * loses the entries, no IPI; then finish_asid_transition, then one TLBSYNC.
 */
static void broadcast_tlb_flush(struct sim *s, const struct flush_tlb_info *f)
{
	int asid = mm_global_asid(s, f->mm);
	uint32_t tag = kern_pcid(s, asid);
	uint64_t n = 0;
	if (f->end == TLB_FLUSH_ALL) {
		struct inv_op inv = {.kind = INV_TAG_NONGLOBAL, .tag = tag};
		invlpgb_all(s, &inv);
		n = 1;
	} else {
		unsigned int pmd_shift = (unsigned int)hw_of(s)->geom.pmd_shift;
		uint64_t maxnr = (uint64_t)P(s, P_invlpgb_count_max);
		uint64_t addr = f->start;
		do {
			uint64_t nr = 1;
			if (f->stride_shift <= pmd_shift) {
				nr = (f->end - addr) >> f->stride_shift;
				nr = nr < 1 ? 1 : nr > maxnr ? maxnr : nr;
			}
			struct inv_op inv = {.kind = INV_X86_INVLPG, .tag = tag, .start = addr,
					     .end = addr + (nr << f->stride_shift),
					     .stride = 1ull << f->stride_shift};
			invlpgb_all(s, &inv);
			n++;
			addr += nr << f->stride_shift;
		} while (addr < f->end);
	}
	invlpgb_issue(s, n, asid);
	finish_asid_transition(s, f);
	__tlbsync(s);
}

/* should_trim_cpumask(mm) (arch/x86/mm/tlb.c, 6db2526c1d69, v6.14): true at
 * most once per second per mm; it moves the next trim a second ahead */
static bool should_trim_cpumask(struct sim *s, mm_context_t *mm)
{
	if (s->now > mm->next_trim_ns) {
		mm->next_trim_ns = s->now + X86_TRIM_PERIOD_NS;
		return true;
	}
	return false;
}

/* cpumask_any_but(mask, cpu) < nr_cpu_ids (include/linux/cpumask.h): a CPU
 * other than cpu in the mask */
static inline bool mask_has_other(const uint64_t *mask, uint32_t words, int cpu)
{
	for (uint32_t w = 0; w < words; w++) {
		uint64_t bits = mask[w];
		if (w == (uint32_t)cpu / 64)
			bits &= ~(1ull << (cpu % 64));
		if (bits)
			return true;
	}
	return false;
}

/* flush_tlb_mm_range(mm, start, end, stride_shift, freed_tables)
 * (arch/x86/mm/tlb.c, v4.20..v5.1: local flush, then the IPIs;
 * x86_flush_local=concurrent, v5.13+: flush_tlb_multi when another CPU is in
 * the mask - local flush included - else the local flush alone;
 * x86_flush=invlpgb, v6.15: broadcast_tlb_flush for an mm with a global
 * ASID, and consider_global_asid after an IPI flush) */
void flush_tlb_mm_range(struct sim *s, mm_context_t *mm, uint64_t start, uint64_t end,
			unsigned int stride_shift, bool freed_tables)
{
	struct machine *mc = machine_of(s);
	int cpu = cur_cpu(s);
	if (end == TLB_FLUSH_ALL ||
	    ((end - start) >> stride_shift) > (uint64_t)P(s, P_flush_ceiling)) {
		start = 0;
		end = TLB_FLUSH_ALL;
	}
	/* inc_mm_tlb_gen(): atomic64_inc_return, a locked instruction */
	tso_fence(s, cpu, TSO_LOCKED);
	if (__builtin_expect(mc->tso != NULL, 0))
		x86_switch_finish(s, cpu);
	struct flush_tlb_info info = {.mm = mm, .start = start, .end = end,
				      .new_tlb_gen = ++mm->tlb_gen,
				      .stride_shift = stride_shift, .freed_tables = freed_tables};
	sim_step_arg(s, YP_ARCH_FLUSH, 0, start, end);
	if (mc->hooks && mc->hooks->tlb_flush) {
		struct flush_note n = {.what = FLUSH_X86_MM_RANGE, .full = end == TLB_FLUSH_ALL,
				       .freed_tables = freed_tables, .start = start, .end = end,
				       .cpu = cpu};
		mc->hooks->tlb_flush(mc->hooks_ctx, &n);
	}
	/* 4afeb0ed1753 (v6.15): an mm with a global ASID is flushed by INVLPGB
	 * on every CPU, this one included */
	if (mm_global_asid(s, mm)) {
		broadcast_tlb_flush(s, &info);
		return;
	}
	bool concurrent = mc->policy.x86_flush_local == X86_FLUSH_LOCAL_CONCURRENT;
	if (!concurrent && mc->cpu[cpu].loaded_mm == mm)
		sim_charge_sys(s, flush_tlb_func_common(s, cpu, &info, true));
	if (mask_has_other(mm->cpumask, mc->cpumask_words, cpu)) {
		if (mc->policy.x86_should_flush == X86_SHOULD_FLUSH_LOADED_MM)
			info.trim_cpumask = should_trim_cpumask(s, mm);
		sim_step(s, YP_IPI, 0);
		native_flush_tlb_multi(s, cpu, &info, mm, concurrent);
		consider_global_asid(s, mm);
	} else if (concurrent && mc->cpu[cpu].loaded_mm == mm) {
		sim_charge_sys(s, flush_tlb_func_common(s, cpu, &info, true));
	}
}

/* what one CPU does for flush_tlb_kernel_range(): do_kernel_range_flush()
 * (INVLPG of each page: flush_tlb_one_kernel) or do_flush_tlb_all()
 * (__flush_tlb_all: every entry, global ones too) */
struct kflush {
	uint64_t start, end;
	bool all;
};

static uint64_t do_kernel_flush(struct sim *s, int cpu, const void *data)
{
	const struct kflush *k = data;
	if (__builtin_expect(machine_of(s)->tso != NULL, 0))
		x86_switch_finish(s, cpu);
	/* __flush_tlb_all (CR4 writes) and INVLPG are serialising */
	tso_fence(s, cpu, TSO_SERIALISING);
	if (k->all) {
		struct inv_op inv = {.kind = INV_ALL};
		hw_invalidate_cpu(hw_of(s), cpu, &inv);
		psc_flushed(s, cpu);
		s->m.flush_full++;
		return (uint64_t)P(s, P_flush_all_ns);
	}
	uint64_t ps = hw_of(s)->geom.page_size;
	uint64_t n = (k->end - k->start) / ps;
	struct inv_op inv = {.kind = INV_X86_INVLPG, .tag = TC_TAG_GLOBAL, .start = k->start,
			     .end = k->end, .stride = ps};
	hw_invalidate_cpu(hw_of(s), cpu, &inv);
	if (n)
		psc_flushed(s, cpu);
	s->m.flush_local_pages += n;
	return n * (uint64_t)P(s, P_invlpg_ns);
}

/*
 * kernel_tlb_flush_all() / kernel_tlb_flush_range() with INVLPGB
 * (82378c6c2f43 "x86/mm: Use INVLPGB for kernel TLB flushes", v6.15): the
 * whole TLB is one invlpgb_flush_all(); a range is invlpgb_kernel_range_flush,
 * INVLPGBs of up to invlpgb_count_max pages each; then one TLBSYNC. No IPI:
 * every CPU loses the entries, this one included.
 */
static void invlpgb_kernel_flush(struct sim *s, const struct kflush *k)
{
	uint64_t n = 0;
	if (k->all) {
		struct inv_op inv = {.kind = INV_ALL};
		invlpgb_all(s, &inv);
		n = 1;
	} else {
		uint64_t ps = hw_of(s)->geom.page_size;
		uint64_t maxnr = (uint64_t)P(s, P_invlpgb_count_max);
		for (uint64_t addr = k->start, nr; addr < k->end; addr += nr * ps) {
			nr = (k->end - addr) / ps;
			nr = nr < 1 ? 1 : nr > maxnr ? maxnr : nr;
			struct inv_op inv = {.kind = INV_X86_INVLPG, .tag = TC_TAG_GLOBAL,
					     .start = addr, .end = addr + nr * ps, .stride = ps};
			invlpgb_all(s, &inv);
			n++;
		}
	}
	if (n)
		invlpgb_issue(s, n, 0);
	__tlbsync(s);
}

/*
 * flush_tlb_kernel_range(start, end) (arch/x86/mm/tlb.c, v6.10): more than
 * tlb_single_page_flush_ceiling pages: on_each_cpu(do_flush_tlb_all), else
 * on_each_cpu(do_kernel_range_flush) - every online CPU, lazy or idle or
 * not, the local one included; the caller waits for every handler. With
 * x86_flush=invlpgb and INVLPGB (v6.15): invlpgb_kernel_flush().
 */
static void x86_flush_tlb_kernel_range(struct sim *s, uint64_t start, uint64_t end)
{
	struct machine *mc = machine_of(s);
	int self = cur_cpu(s);
	uint64_t ps = hw_of(s)->geom.page_size;
	start &= ~(ps - 1);
	end = (end + ps - 1) & ~(ps - 1);
	struct kflush k = {.start = start, .end = end,
			   .all = (end - start) / ps > (uint64_t)P(s, P_flush_ceiling)};
	s->m.kernel_flushes++;
	sim_step_arg(s, YP_KFLUSH, 0, start, end);
	if (mc->hooks && mc->hooks->tlb_flush) {
		struct flush_note n = {.what = FLUSH_X86_KERNEL, .full = k.all, .start = start,
				       .end = end, .cpu = self};
		mc->hooks->tlb_flush(mc->hooks_ctx, &n);
	}
	if (invlpgb_on(s)) {
		invlpgb_kernel_flush(s, &k);
		if (mc->hooks && mc->hooks->kernel_flush_done)
			mc->hooks->kernel_flush_done(mc->hooks_ctx, start, end, k.all);
		return;
	}
	struct ipi_round r = {0};
	uint64_t t0 = s->now + s->curr->pending_ns, finish = t0, nt = 0;
	for (int c = 0; c < s->nr_cpus; c++) {
		if (c == self)
			continue;
		nt++;
		sim_trace(s, TR_IPI_TARGET, (uint64_t)c, 0);
		uint64_t at = t0 + nt * (uint64_t)P(s, P_ipi_send_ns) +
			      (uint64_t)P(s, P_ipi_latency_ns);
		if (sim_cpu_idle(s, c))
			at += (uint64_t)P(s, P_idle_exit_ns);
		uint64_t done;
		ipi_deliver(s, &r, c, at, do_kernel_flush, &k, sizeof(k), &done);
		if (done > finish)
			finish = done;
	}
	s->m.ipi_sent += nt;
	s->m.kernel_flush_ipis += nt;
	sim_trace(s, TR_KIPI, nt, 0);
	/* the local flush overlaps the remote delivery */
	uint64_t local = do_kernel_flush(s, self, &k);
	uint64_t sent = t0 + nt * (uint64_t)P(s, P_ipi_send_ns) + local;
	if (sent > finish)
		finish = sent;
	r.finish = finish;
	sim_charge_sys(s, finish - t0);
	sim_step(s, YP_IPI, 0);
	ipi_round_wait(s, &r);
	if (mc->hooks && mc->hooks->kernel_flush_done)
		mc->hooks->kernel_flush_done(mc->hooks_ctx, start, end, k.all);
}

/* tlb_flush(tlb) (arch/x86/include/asm/tlb.h, v4.20+) */
static void x86_tlb_flush(struct sim *s, struct mmu_gather *tlb)
{
	uint64_t start = 0, end = TLB_FLUSH_ALL;
	unsigned int stride_shift = tlb_get_unmap_shift(&hw_of(s)->geom, tlb);
	if (!tlb->fullmm && !tlb->need_flush_all) {
		start = tlb->start;
		end = tlb->end;
	}
	flush_tlb_mm_range(s, tlb->ctx, start, end, stride_shift, tlb->freed_tables);
}

/* flush_tlb_fix_spurious_fault(): a no-op on x86 (asm/pgtable.h), whatever
 * the knob: a fault already dropped the faulting VA's entries */
static unsigned x86_flush_tlb_fix_spurious_fault(struct sim *s, mm_context_t *mm, uint64_t addr)
{
	(void)s;
	(void)mm;
	(void)addr;
	return 0;
}

/* flush_tlb_page(vma, a) (arch/x86/include/asm/tlbflush.h):
 * flush_tlb_mm_range(vma->vm_mm, a, a + PAGE_SIZE, PAGE_SHIFT, false) */
static void x86_flush_tlb_page(struct sim *s, mm_context_t *mm, uint64_t addr)
{
	const struct pt_geom *g = &hw_of(s)->geom;
	addr &= ~(g->page_size - 1);
	flush_tlb_mm_range(s, mm, addr, addr + g->page_size, (unsigned int)g->page_shift, false);
}

/* flush_tlb_range(vma, start, end) (arch/x86/include/asm/tlbflush.h, v5.0+):
 * flush_tlb_mm_range(vma->vm_mm, start, end, PAGE_SHIFT for a non-hugetlb
 * VMA, freed_tables): false from 016c4d92cd16 (v4.20), true from
 * 3ef938c35035 (v6.14), knob x86_range_freed */
static void x86_flush_tlb_range(struct sim *s, mm_context_t *mm, uint64_t start, uint64_t end)
{
	bool freed = machine_of(s)->policy.x86_range_freed == X86_RANGE_FREED_TRUE;
	flush_tlb_mm_range(s, mm, start, end, (unsigned int)hw_of(s)->geom.page_shift, freed);
}

/*
 * arch_tlbbatch_flush(batch) (arch/x86/mm/tlb.c, v4.20..v6.x) for the mms a
 * reclaim batch unmapped from (arch_tlbbatch_add_mm bumped each one's
 * tlb_gen): one full flush of no mm (full_flush_tlb_info: mm NULL, no
 * freed tables) to the union of their cpumasks - a CPU runs it on whatever
 * mm it has loaded, which is behind if it is one of them; lazy CPUs are
 * left out, and from v6.14 should_flush_tlb() lets a CPU running another
 * mm in ("no mm means kernel memory flush"). Up to v5.12 the local flush
 * first, then flush_tlb_others() of the whole mask (the sender's own call
 * counted, as in flush_tlb_mm_range); from v5.13 flush_tlb_multi() with
 * the local one concurrent. One IPI round however many mms: the model
 * flushed each mm with a range flush of its own.
 */
static void x86_tlbbatch_flush(struct sim *s, mm_context_t *const *mms, uint32_t n)
{
	struct machine *mc = machine_of(s);
	int cpu = cur_cpu(s);
	uint64_t um[64] = {0};
	mm_context_t u = {.cpumask = um};
	uint32_t words = mc->cpumask_words < 64 ? mc->cpumask_words : 64;
	for (uint32_t i = 0; i < n; i++)
		for (uint32_t w = 0; w < words; w++)
			um[w] |= mms[i]->cpumask[w];
	struct flush_tlb_info info = {.mm = NULL, .start = 0, .end = TLB_FLUSH_ALL,
				      .stride_shift = (unsigned int)hw_of(s)->geom.page_shift};
	sim_step_arg(s, YP_ARCH_FLUSH, 0, 0, TLB_FLUSH_ALL);
	if (mc->hooks && mc->hooks->tlb_flush) {
		struct flush_note note = {.what = FLUSH_X86_MM_RANGE, .full = true, .start = 0,
					  .end = TLB_FLUSH_ALL, .cpu = cpu};
		mc->hooks->tlb_flush(mc->hooks_ctx, &note);
	}
	bool concurrent = mc->policy.x86_flush_local == X86_FLUSH_LOCAL_CONCURRENT;
	if (!concurrent && cpumask_test(&u, cpu))
		sim_charge_sys(s, flush_tlb_func_common(s, cpu, &info, true));
	if (mask_has_other(um, words, cpu)) {
		sim_step(s, YP_IPI, 0);
		native_flush_tlb_multi(s, cpu, &info, &u, concurrent);
	} else if (concurrent && cpumask_test(&u, cpu)) {
		sim_charge_sys(s, flush_tlb_func_common(s, cpu, &info, true));
	}
}

/* flush_tlb_mm(mm) (arch/x86/include/asm/tlbflush.h, v4.20+):
 * flush_tlb_mm_range(mm, 0UL, TLB_FLUSH_ALL, 0UL, true) - freed_tables true,
 * so lazy CPUs are flushed too */
static void x86_flush_tlb_mm(struct sim *s, mm_context_t *mm)
{
	flush_tlb_mm_range(s, mm, 0, TLB_FLUSH_ALL, 0, true);
}

/* ptep_set_access_flags() (arch/x86/mm/pgtable.c): store only if changed and
 * dirty; never flush (a fault already dropped the faulting VA's entries). */
static bool x86_ptep_set_access_flags(struct sim *s, mm_context_t *mm, uint64_t addr,
				      pte_t *ptep, pte_t entry, bool dirty)
{
	(void)s;
	(void)mm;
	(void)addr;
	bool changed = *ptep != entry;
	if (changed && dirty)
		*ptep = entry;
	return changed;
}

static uint32_t x86_user_tag(struct sim *s, int cpu)
{
	return kern_pcid(s, arch_cpu(s, cpu)->loaded_mm_asid);
}

const struct arch_ops arch_x86_64_ops = {
	.name = "x86_64",
	.fmt = &pt_format_x86_64,
	.rcu_table_free = false,	/* native: tables go through tlb_remove_page */
	.tlb_flush = x86_tlb_flush,
	.flush_at_end_vma = false,	/* tlb_end_vma is a no-op on x86 in v5.1 */
	.switch_mm = x86_switch_mm,
	.enter_lazy_tlb = x86_enter_lazy_tlb,
	.tlbbatch_flush = x86_tlbbatch_flush,
	.flush_tlb_fix_spurious_fault = x86_flush_tlb_fix_spurious_fault,
	.flush_tlb_page = x86_flush_tlb_page,
	.ptep_set_access_flags = x86_ptep_set_access_flags,
	.user_tag = x86_user_tag,
	.flush_tlb_kernel_range = x86_flush_tlb_kernel_range,
	.flush_tlb_range = x86_flush_tlb_range,
	.flush_tlb_mm = x86_flush_tlb_mm,
};
