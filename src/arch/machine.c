/*
 * machine.c - building the simulated machine (struct machine, arch.h) and the
 * arch context of an address space.
 */
#include <stdlib.h>
#include <string.h>

#include "arch/arch.h"
#include "arch/points.h"
#include "sim/grow.h"

int machine_init(struct machine *mc, const struct tlbsim_profile *prof, int nr_cpus,
		 const int64_t *params, const struct tlbsim_policy *pol, uint64_t seed,
		 struct sim_stack_pool *pool)
{
	memset(mc, 0, sizeof(*mc));
	int rc = sim_init(&mc->sim, nr_cpus, params, seed);
	if (rc)
		return rc;
	struct sim *s = &mc->sim;
	s->stack_pool = pool;
	mc->profile = prof;
	mc->arch = prof->arch == ARCH_X86_64 ? &arch_x86_64_ops : &arch_arm64_ops;
	mc->policy = *pol;
	mc->next_ctx_id = 1;
	mc->cpumask_words = (uint32_t)((nr_cpus + 63) / 64);
	mc->cpu = calloc((size_t)nr_cpus, sizeof(*mc->cpu));
	mc->irq = calloc((size_t)nr_cpus, sizeof(*mc->irq));
	if (!mc->cpu || !mc->irq)
		return TLBSIM_ENOMEM;
	if (mc->arch == &arch_arm64_ops) {
		/* asids_init() (arch/arm64/mm/context.c, v5.8): generation 1, an
		 * empty map of NUM_USER_ASIDS bits (index 0 is never handed out) */
		int64_t bits = P(s, P_asid_bits);
		SIM_BUG_ON(s, bits < 2 || bits > 16);
		mc->asid.pair_shift = P(s, P_kpti) ? 1 : 0;
		mc->asid.nr = 1u << (bits - mc->asid.pair_shift);
		mc->asid.generation = 1;
		mc->asid.cur_idx = 1;
		mc->asid.map = calloc((mc->asid.nr + 63) / 64, sizeof(uint64_t));
		mc->asid.active = calloc((size_t)nr_cpus, sizeof(uint64_t));
		mc->asid.reserved = calloc((size_t)nr_cpus, sizeof(uint64_t));
		if (!mc->asid.map || !mc->asid.active || !mc->asid.reserved)
			return TLBSIM_ENOMEM;
	}
	if (mc->arch == &arch_x86_64_ops) {
		/* the global ASID space of v6.15: MAX_ASID_AVAILABLE is
		 * global_asid_available + TLB_NR_DYN_ASIDS + 1; the first
		 * allocation finds last_global_asid at the edge and resets */
		int64_t n = P(s, P_global_asids);
		SIM_BUG_ON(s, n < 0 || n > 65000);
		mc->gasid.max = (uint32_t)n + TLB_NR_DYN_ASIDS + 1;
		mc->gasid.last = mc->gasid.max;
		mc->gasid.available = n;
		mc->gasid.used = calloc((mc->gasid.max + 63) / 64, sizeof(uint64_t));
		mc->gasid.freed = calloc((mc->gasid.max + 63) / 64, sizeof(uint64_t));
		if (!mc->gasid.used || !mc->gasid.freed)
			return TLBSIM_ENOMEM;
	}
	struct hw_cache_geom cg = {
		.tlb_sets = (uint32_t)P(s, P_tlb_sets), .tlb_ways = (uint32_t)P(s, P_tlb_ways),
		.wc_sets = (uint32_t)P(s, P_wc_sets), .wc_ways = (uint32_t)P(s, P_wc_ways),
	};
	rc = hw_init(&mc->hw, s, nr_cpus, prof->page_shift, mc->arch->fmt, &cg, &s->m);
	mc->hw.afdbm = mc->arch->fmt->af_fault && P(s, P_hw_afdbm);
	mc->hw.ttl = mc->arch == &arch_arm64_ops && P(s, P_ttl) && !P(s, P_ttl_ignored);
	/* ce0b15d11ad8 (v6.4, knob x86_invlpg_miss=nopcid): setup_pcid() never
	 * enables PCIDs on a part with the erratum */
	if (mc->arch == &arch_x86_64_ops && P(s, P_invlpg_global_miss) &&
	    pol->x86_invlpg_miss == X86_INVLPG_MISS_NOPCID)
		s->p[P_pcid] = 0;
	mc->hw.invlpg_global_miss = mc->arch == &arch_x86_64_ops && P(s, P_invlpg_global_miss) &&
				    P(s, P_pcid);
	return rc;
}

void machine_destroy(struct machine *mc)
{
	sim_destroy(&mc->sim);
	hw_destroy(&mc->hw);
	free(mc->cpu);
	free(mc->irq);
	free(mc->tso);
	mc->tso = NULL;
	for (uint32_t i = 0; i < mc->ncalls; i++)
		free(mc->call_all[i]);
	free(mc->call_all);
	free(mc->pend);
	mc->pend = NULL;
	mc->npend = mc->nlive = 0;
	mc->irq = NULL;
	mc->call_all = NULL;
	mc->ncalls = 0;
	free(mc->asid.map);
	free(mc->asid.active);
	free(mc->asid.reserved);
	free(mc->gasid.used);
	free(mc->gasid.freed);
	mc->gasid.used = mc->gasid.freed = NULL;
	mc->cpu = NULL;
	mc->asid.map = NULL;
	mc->asid.active = mc->asid.reserved = NULL;
}

/* init_new_context() (arch/x86/include/asm/mmu_context.h: ctx_id from
 * last_mm_ctx_id, tlb_gen 1; arch/arm64/include/asm/mmu_context.h: context.id
 * 0), v5.1..v5.8 */
int init_new_context(struct sim *s, mm_context_t *ctx, int id)
{
	struct machine *mc = machine_of(s);
	(void)id;
	memset(ctx, 0, sizeof(*ctx));	/* arm64: context.id = 0, no ASID yet */
	ctx->ctx_id = mc->next_ctx_id++;
	ctx->tlb_gen = 1;
	ctx->next_trim_ns = s->now + X86_TRIM_PERIOD_NS;	/* jiffies + HZ (6db2526c1d69) */
	ctx->cpumask = calloc(mc->cpumask_words, sizeof(uint64_t));
	if (!ctx->cpumask)
		return TLBSIM_ENOMEM;
	ctx->live = true;
	return 0;
}

/* destroy_context(): the arm64 ASID stays marked until a rollover rebuilds
 * the map; an x86 global ASID is freed (mm_free_global_asid, v6.15) */
void destroy_context(struct sim *s, mm_context_t *ctx)
{
	if (machine_of(s)->arch == &arch_x86_64_ops)
		mm_free_global_asid(s, ctx);
	free(ctx->cpumask);
	ctx->cpumask = NULL;
	ctx->live = false;
}

/*
 * Completion of a broadcast invalidation (check mode, async_completion): an
 * arm64 TLBI ...IS is architecturally complete on the other PEs only once the
 * issuing PE has executed a DSB (Arm ARM DDI 0487, "Ordering and completion
 * of TLB maintenance instructions"), an x86 INVLPGB once the issuing CPU's
 * TLBSYNC returned (AMD APM vol. 3, INVLPGB / TLBSYNC): until then another
 * CPU may still translate through the entries it removes. Each CPU that holds such an entry at issue
 * gets an entity (a callback candidate of the explorer) that applies the
 * invalidation there; the issuer's DSB ISH applies those still pending. A CPU
 * that holds nothing at issue cannot acquire a stale entry later (the page
 * tables were changed before the TLBI), so it gets none, and a schedule in
 * which no CPU owes anything is the same as with completion at issue. The
 * issuing CPU's own caches are invalidated at issue (nothing else runs there
 * before its DSB: an arm64 context switch executes one, __switch_to's
 * dsb(ish)).
 * Pending TLBIs belong to the issuing thread; the model has no context switch
 * between a TLBI and its DSB except the PTE-lock waits of rmap.c, which are
 * spins in the kernel.
 */
static void tlbi_done(struct sim *s, uint32_t i, bool at_dsb)
{
	struct machine *mc = machine_of(s);
	struct tlbi_pending *p = &mc->pend[i];
	p->seq = 0;
	uint32_t removed = hw_invalidate_cpu(&mc->hw, p->cpu, &p->inv);
	sim_trace_cpu(s, at_dsb ? cur_cpu(s) : p->cpu, TR_TLBI_DONE, (uint64_t)p->cpu,
		      (uint64_t)removed | (uint64_t)at_dsb << 32 | (uint64_t)(uint32_t)p->issuer << 33);
	/* x86: INVLPGB also drops the paging-structure caches it names */
	if (machine_is_x86(s) && mc->hooks && mc->hooks->psc_flush)
		mc->hooks->psc_flush(mc->hooks_ctx, p->cpu);
	if (--mc->nlive == 0)
		mc->npend = 0;
}

/* the entity: the TLBI reaches p->cpu now */
static void tlbi_complete(struct sim *s, void *arg, uint64_t i)
{
	(void)arg;
	tlbi_done(s, (uint32_t)i, false);
}

void bcast_hit(void *ctx, int cpu, uint32_t removed)
{
	sim_trace(ctx, TR_TLBI_HIT, (uint64_t)cpu, removed);
}

/* bcast_nosync() with async_completion (its run-mode path is inline) */
uint32_t bcast_nosync_async(struct sim *s, const struct inv_op *inv, bool trace_hits)
{
	struct machine *mc = machine_of(s);
	int self = cur_cpu(s);
	uint32_t removed = hw_invalidate_cpu(&mc->hw, self, inv);
	if (removed && trace_hits)
		bcast_hit(s, self, removed);
	uint32_t n = 0;
	for (int c = 0; c < s->nr_cpus; c++) {
		if (c == self || !hw_invalidate_hits(&mc->hw, c, inv))
			continue;
		if (GROW(&mc->pend, &mc->cap_pend, mc->npend, (size_t)mc->npend + 1, 16)) {
			sim_oom(s, "pending TLBIs");
			return n;
		}
		uint32_t i = mc->npend++;
		mc->pend[i] = (struct tlbi_pending){.inv = *inv, .issuer = s->curr->id, .cpu = c};
		mc->nlive++;
		mc->pend[i].seq = sim_call_entity(s, tlbi_complete, NULL, i, ENTITY_LATE);
		n++;
	}
	return n;
}

void bcast_sync(struct sim *s)
{
	struct machine *mc = machine_of(s);
	if (__builtin_expect(!mc->nlive, 1))
		return;
	int me = s->curr ? s->curr->id : -1;
	for (uint32_t i = 0; i < mc->npend; i++) {
		struct tlbi_pending *p = &mc->pend[i];
		if (!p->seq || p->issuer != me)
			continue;
		sim_call_cancel(s, p->seq);
		tlbi_done(s, i, true);
	}
}
