/*
 * arch.h - per-architecture back ends, as an ops table (the Redis dictType
 * habit): the mm model calls through struct arch_ops at the few points where
 * x86-64 and arm64 differ.
 *
 * x86-64 (arch/x86/mm/tlb.c, arch/x86/include/asm/tlb.h, v5.1): tlb_flush ->
 *   flush_tlb_mm_range with the INVLPG ceiling, IPIs to mm_cpumask (lazy CPUs
 *   skipped unless freed_tables), per-CPU PCID slots with tlb_gen, lazy TLB.
 * arm64 (arch/arm64/include/asm/tlb.h, tlbflush.h, v5.1): tlb_flush with the
 *   fullmm rule and last_level = !freed_tables; broadcast TLBIs completed by
 *   DSB ISH; a shared serialising DVM resource produces contention.
 */
#ifndef TLBSIM_ARCH_H
#define TLBSIM_ARCH_H

#include <stdbool.h>
#include <stdint.h>

struct sim;
struct mm_struct;
struct mmu_gather;
struct vm_area_struct;

#define TLB_NR_DYN_ASIDS 6
#define TLB_FLUSH_ALL (~0ull)

/* arm64 TLBI operations counted in metrics.tlbi */
enum tlbi_kind { TLBI_VALE1IS, TLBI_VAE1IS, TLBI_ASIDE1IS, TLBI_VAALE1IS, TLBI_VMALLE1IS,
		 TLBI_LOCAL };

struct arch_cpu {
	/* x86 cpu_tlbstate */
	struct mm_struct *loaded_mm;	/* NULL = init_mm */
	int loaded_mm_asid;
	int next_asid;
	bool is_lazy;
	struct {
		uint64_t ctx_id;
		uint64_t tlb_gen;
	} ctxs[TLB_NR_DYN_ASIDS];
	/* arm64: ASID currently in TTBR0 (0 = none) */
	uint32_t ttbr0_asid;
	/* both: IRQs disabled until this time (IPI targets wait) */
	uint64_t irqs_off_until;
};

struct arch_ops {
	const char *name;
	bool rcu_table_free;	/* page tables freed through the RCU table batch */
	/* tlb_flush(): the arch's mmu_gather flush */
	void (*tlb_flush)(struct sim *s, struct mmu_gather *tlb);
	/* tlb_end_vma(): arm64 generic flush per VMA; x86 v5.1 no-op */
	bool flush_at_end_vma;
	/* context switch of CPU cpu to mm (NULL: kernel thread / idle) */
	void (*switch_mm)(struct sim *s, int cpu, struct mm_struct *next);
	void (*enter_lazy_tlb)(struct sim *s, int cpu);
	/* flush_tlb_fix_spurious_fault(vma, address) */
	void (*flush_tlb_fix_spurious_fault)(struct sim *s, struct mm_struct *mm, uint64_t addr);
	/* ptep_set_access_flags(vma, address, ptep, entry, dirty): returns changed */
	bool (*ptep_set_access_flags)(struct sim *s, struct mm_struct *mm, uint64_t addr,
				      uint64_t *ptep, uint64_t entry, bool dirty);
	/* tag used by the current CPU's MMU for user translations of mm */
	uint32_t (*user_tag)(struct sim *s, int cpu);
	/* mm teardown: release arch context */
	void (*mm_release)(struct sim *s, struct mm_struct *mm);
};

extern const struct arch_ops arch_x86_64_ops;
extern const struct arch_ops arch_arm64_ops;

/* arm64 helpers (also used by tests) */
void arm64_flush_tlb_mm(struct sim *s, struct mm_struct *mm);
void arm64_flush_tlb_range(struct sim *s, struct mm_struct *mm, uint64_t start, uint64_t end,
			   uint64_t stride, bool last_level);
void arm64_flush_tlb_page(struct sim *s, struct mm_struct *mm, uint64_t addr);
/* x86 helpers */
void x86_flush_tlb_mm_range(struct sim *s, struct mm_struct *mm, uint64_t start, uint64_t end,
			    unsigned int stride_shift, bool freed_tables);

#endif
