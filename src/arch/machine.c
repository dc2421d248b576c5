/*
 * machine.c - building the simulated machine (struct machine, arch.h) and the
 * arch context of an address space.
 */
#include <stdlib.h>
#include <string.h>

#include "arch/arch.h"

int machine_init(struct machine *mc, const struct tlbsim_profile *prof, int nr_cpus,
		 const int64_t *params, const struct tlbsim_policy *pol, uint64_t seed)
{
	memset(mc, 0, sizeof(*mc));
	int rc = sim_init(&mc->sim, nr_cpus, params, seed);
	if (rc)
		return rc;
	struct sim *s = &mc->sim;
	mc->profile = prof;
	mc->arch = prof->arch == ARCH_X86_64 ? &arch_x86_64_ops : &arch_arm64_ops;
	mc->policy = *pol;
	mc->next_ctx_id = 1;
	mc->cpumask_words = (uint32_t)((nr_cpus + 63) / 64);
	mc->cpu = calloc((size_t)nr_cpus, sizeof(*mc->cpu));
	if (!mc->cpu)
		return TLBSIM_ENOMEM;
	struct hw_cache_geom cg = {
		.tlb_sets = (uint32_t)P(s, P_tlb_sets), .tlb_ways = (uint32_t)P(s, P_tlb_ways),
		.wc_sets = (uint32_t)P(s, P_wc_sets), .wc_ways = (uint32_t)P(s, P_wc_ways),
	};
	rc = hw_init(&mc->hw, s, nr_cpus, prof->page_shift, mc->arch->fmt, &cg, &s->m);
	mc->hw.afdbm = mc->arch->fmt->af_fault && P(s, P_hw_afdbm);
	return rc;
}

void machine_destroy(struct machine *mc)
{
	sim_destroy(&mc->sim);
	hw_destroy(&mc->hw);
	free(mc->cpu);
	mc->cpu = NULL;
}

int init_new_context(struct sim *s, mm_context_t *ctx, int id)
{
	struct machine *mc = machine_of(s);
	memset(ctx, 0, sizeof(*ctx));
	ctx->asid = (uint32_t)id + 1;
	ctx->ctx_id = mc->next_ctx_id++;
	ctx->tlb_gen = 1;
	ctx->cpumask = calloc(mc->cpumask_words, sizeof(uint64_t));
	if (!ctx->cpumask)
		return TLBSIM_ENOMEM;
	ctx->live = true;
	return 0;
}

void destroy_context(struct sim *s, mm_context_t *ctx)
{
	(void)s;
	free(ctx->cpumask);
	ctx->cpumask = NULL;
	ctx->live = false;
}
