/*
 * arch.h - the per-architecture back ends and the machine they drive.
 *
 * struct machine is the simulated computer: the engine (struct sim, first
 * member), the hardware (struct hw), the profile and cost parameters, and the
 * per-CPU state each back end keeps (x86 cpu_tlbstate, arm64 TTBR0). The mm
 * model reaches the back end through struct arch_ops at the few points where
 * x86-64 and arm64 differ (the Redis dictType habit). Arch-owned parts of an
 * mm live in mm_context_t, as in the kernel (arch/<arch>/include/asm/mmu.h).
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

#include "hw/hw.h"
#include "sim/sim.h"

#define TLB_NR_DYN_ASIDS 6
#define TLB_FLUSH_ALL (~0ull)
/* x86 should_trim_cpumask(): at most one trimming flush per mm per HZ
 * jiffies, one second (6db2526c1d69, v6.14); a kernel constant, not a cost */
#define X86_TRIM_PERIOD_NS 1000000000ull
/* one jiffy at HZ=1000 (consider_global_asid's pid/jiffies test) */
#define X86_JIFFY_NS 1000000ull

/* mm->context: the arch-owned part of an address space */
typedef struct mm_context {
	/* arm64 mm->context.id, split: the ASID number tagged in TLB entries
	 * and the allocator generation it belongs to (0, 0: none allocated
	 * yet; the first switch_mm allocates) */
	uint32_t asid;
	uint64_t asid_gen;
	uint64_t ctx_id;	/* x86: mm->context.ctx_id, never reused */
	uint64_t tlb_gen;	/* x86: mm->context.tlb_gen */
	uint64_t *cpumask;	/* mm_cpumask(mm) */
	int32_t active_cpu;	/* arm64_local: 0 = never run, 1 + the only CPU it
				 * ran on, -1 = several (switch_mm) */
	/* x86: mm->context.next_trim_cpumask (6db2526c1d69, v6.14), as
	 * simulated ns: jiffies + HZ at init, then one second after each trim */
	uint64_t next_trim_ns;
	/* x86 with INVLPGB (d504d1247e36, v6.15): mm->context.global_asid (0:
	 * none; else an ASID >= TLB_NR_DYN_ASIDS, the same on every CPU) and
	 * asid_transition (some CPU may still run the mm on a per-CPU ASID) */
	uint16_t global_asid;
	bool asid_transition;
	bool live;		/* between init_new_context and destroy_context */
} mm_context_t;

/* arm64 TLBI operations counted in metrics.tlbi */
enum tlbi_kind { TLBI_VALE1IS, TLBI_VAE1IS, TLBI_ASIDE1IS, TLBI_VAALE1IS, TLBI_VMALLE1IS,
		 TLBI_LOCAL, TLBI_RVALE1IS, TLBI_RVAE1IS, TLBI_KIND_COUNT };
const char *tlbi_name(enum tlbi_kind k);

/* Per-CPU arch state, laid out in 128 bytes (indexed on hot paths). */
struct arch_cpu {
	/* x86 cpu_tlbstate */
	mm_context_t *loaded_mm;	/* NULL = init_mm */
	int loaded_mm_asid;
	int next_asid;
	bool is_lazy;
	/* arm64: this CPU's bit of the ASID allocator's tlb_flush_pending (a
	 * full local flush before its next switch into another mm) */
	bool flush_pending;
	/* arm64: the ASID TTBR0 runs with (0 = none) and the mm whose tables it
	 * holds (active_mm; NULL: none yet) */
	uint32_t ttbr0_asid;
	struct {
		uint64_t ctx_id;
		uint64_t tlb_gen;
	} ctxs[TLB_NR_DYN_ASIDS];
	mm_context_t *ttbr0_mm;
	/* arm64 with tlbi_recv_ns: this CPU handles the broadcast TLBI ops it
	 * receives one after another, busy with them until this time */
	uint64_t dvm_recv_until;
	/* x86 under --memory-model tso: the memory words other CPUs read
	 * (cpu_tlbstate.loaded_mm, cpu_tlbstate_shared.is_lazy) as globally
	 * visible; the fields above are this CPU's own view (its newest
	 * stores, which it reads by forwarding). Unused under SC. */
	uintptr_t loaded_mm_mem, is_lazy_mem;
};

/* What a flush did, as observers (the checker's reports, traces) see it. */
enum flush_what { FLUSH_NONE, FLUSH_ARM64_TLBI, FLUSH_X86_MM_RANGE, FLUSH_X86_KERNEL };
struct flush_note {
	enum flush_what what;
	enum tlbi_kind op;	/* arm64 */
	bool local;		/* arm64: op's local form (no IS, DSB NSH; arm64_local) */
	bool full;		/* x86: TLB_FLUSH_ALL */
	bool freed_tables;	/* x86: freed_tables argument */
	uint64_t nops, start, end, stride;
	int cpu;		/* issuing CPU */
	int ntargets;		/* x86: IPIs sent (filled in by ipi_sent) */
	int ttl;		/* arm64: TTL hint, 1 + leaf depth (0: none) */
	uint64_t nrange;	/* arm64: range TLBIs (FEAT_TLBIRANGE) among nops */
};

/* Arch events an observer may subscribe to (all optional). */
struct arch_hooks {
	/* a flush was issued on the current CPU (before its IPIs, if any) */
	void (*tlb_flush)(void *ctx, const struct flush_note *n);
	/* x86: the IPIs of that flush went to n CPUs */
	void (*ipi_sent)(void *ctx, int n, bool freed_tables);
	/* x86: cpu's paging-structure caches were flushed (CR3 / INVLPG) */
	void (*psc_flush)(void *ctx, int cpu);
	/* flush_tlb_kernel_range(start, end) completed on every CPU (all: the
	 * whole TLB was flushed) */
	void (*kernel_flush_done)(void *ctx, uint64_t start, uint64_t end, bool all);
	/* --memory-model tso: a flush left cpu out because it read a value cpu
	 * had stored but not yet made globally visible (cpu's own view would
	 * have had it flushed) */
	void (*reorder_skip)(void *ctx, int cpu);
	/* a litmus test observed an outcome sequential consistency forbids */
	void (*litmus_outcome)(void *ctx, int cpu, const char *text);
};

struct mmu_gather;

struct arch_ops {
	const char *name;
	const struct pt_format *fmt;	/* page-table format of the architecture */
	bool rcu_table_free;	/* page tables freed through the RCU table batch */
	/* tlb_flush(): the arch's mmu_gather flush */
	void (*tlb_flush)(struct sim *s, struct mmu_gather *tlb);
	/* tlb_end_vma(): arm64 generic flush per VMA; x86 v5.1 no-op */
	bool flush_at_end_vma;
	/* context switch of CPU cpu to mm (NULL: kernel thread / idle) */
	void (*switch_mm)(struct sim *s, int cpu, mm_context_t *next);
	void (*enter_lazy_tlb)(struct sim *s, int cpu);
	/* flush_tlb_fix_spurious_fault(vma, address): returns the TLB
	 * invalidations it issued (0 when it is a no-op) */
	unsigned (*flush_tlb_fix_spurious_fault)(struct sim *s, mm_context_t *mm, uint64_t addr);
	/* flush_tlb_page(vma, address): one user page on every CPU that may
	 * cache it (arm64 broadcast VALE1IS; x86 flush_tlb_mm_range of a page) */
	void (*flush_tlb_page)(struct sim *s, mm_context_t *mm, uint64_t addr);
	/* ptep_set_access_flags(vma, address, ptep, entry, dirty): returns changed */
	bool (*ptep_set_access_flags)(struct sim *s, mm_context_t *mm, uint64_t addr,
				      pte_t *ptep, pte_t entry, bool dirty);
	/* tag used by the CPU's MMU for user translations of its loaded mm */
	uint32_t (*user_tag)(struct sim *s, int cpu);
	/* flush_tlb_kernel_range(start, end) */
	void (*flush_tlb_kernel_range)(struct sim *s, uint64_t start, uint64_t end);
	/* flush_tlb_range(vma, start, end) of a non-huge VMA (v5.1): arm64
	 * __flush_tlb_range(stride PAGE_SIZE, last_level = false: VAE1IS);
	 * x86 flush_tlb_mm_range(stride PAGE_SHIFT, freed_tables = false) */
	void (*flush_tlb_range)(struct sim *s, mm_context_t *mm, uint64_t start, uint64_t end);
	/* flush_tlb_mm(mm): every user entry of mm on every CPU that may hold
	 * them (arm64 ASIDE1IS; x86 flush_tlb_mm_range(TLB_FLUSH_ALL, freed
	 * tables)), as dup_mmap issues it for the parent */
	void (*flush_tlb_mm)(struct sim *s, mm_context_t *mm);
	/* x86 arch_tlbbatch_flush(): one full flush of the union of the
	 * cpumasks of the n mms (NULL on arm64, whose batch is TLBIs) */
	void (*tlbbatch_flush)(struct sim *s, mm_context_t *const *mms, uint32_t n);
};

extern const struct arch_ops arch_x86_64_ops;
extern const struct arch_ops arch_arm64_ops;

/*
 * IPIs and IRQs-off windows (kernel/smp.c smp_call_function_many_cond,
 * v6.10). A CPU with IRQs disabled takes an IPI only when it enables them
 * again; the sender spins until every target has run the handler.
 *
 * An IPI to a CPU with IRQs on is analytic: its handler runs (its effect is
 * applied) when the round is issued and its work is charged to that CPU. One
 * to a CPU with IRQs off waits in that CPU's queue (the call_single_queue)
 * and runs at local_irq_enable(); the round completes with the last one.
 */
typedef uint64_t (*ipi_fn)(struct sim *s, int cpu, const void *data);	/* returns work ns */

struct ipi_round {
	int outstanding;		/* handlers waiting on IRQs-off CPUs */
	struct sim_thread *waiter;	/* the sender, spinning (csd_lock_wait) */
	uint64_t finish;		/* when the last handler has finished */
};

struct ipi_call {
	struct ipi_call *next;
	struct ipi_round *round;
	uint64_t arrive;
	ipi_fn fn;
	uint64_t data[8];
	/* check mode (async_completion): the IPI's next scheduling point
	 * (enum ipi_phase) and the CPU it was sent to */
	int phase;
	int cpu;
};

/* Check mode (async_completion): a broadcast TLBI not yet complete on one
 * CPU. Its entity (sim_call_entity) applies inv to cpu when the explorer
 * picks it; the issuing thread's next DSB ISH applies every one it still has
 * pending. seq 0: done. */
struct tlbi_pending {
	struct inv_op inv;
	uint64_t seq;
	int issuer;		/* the issuing thread's id */
	int cpu;
};

struct irq_cpu {
	bool off;			/* local_irq_disable() in effect */
	struct ipi_call *head, *tail;	/* IPIs waiting for local_irq_enable() */
};

struct machine {
	struct sim sim;			/* the engine; first member */
	struct hw hw;
	const struct tlbsim_profile *profile;
	const struct arch_ops *arch;
	struct tlbsim_policy policy;	/* every knob; the arch reads the x86_* ones */
	struct arch_cpu *cpu;		/* per CPU */
	uint64_t dvm_free_at;		/* arm64 DVM resource busy until */
	/* arm64 ASID allocator (arch/arm64/mm/context.c, v5.8): asid_generation
	 * (counting from 1), asid_map (one bit per ASID index, sized from
	 * asid_bits at init), NUM_USER_ASIDS, the index the next search
	 * starts from (the kernel's cur_idx) and the per-CPU ASIDs. With KPTI,
	 * ASIDs come in pairs: index i is ASID i << 1. */
	struct {
		uint64_t generation;
		uint64_t *map;
		uint32_t nr;
		uint32_t pair_shift;
		uint32_t cur_idx;
		/* per CPU: active_asids and reserved_asids, as asid_ctxid()
		 * values (0 = none) */
		uint64_t *active, *reserved;
	} asid;
	/* x86 global ASID space (arch/x86/mm/tlb.c, d504d1247e36, v6.15):
	 * global_asid_used / global_asid_freed (max bits), last_global_asid,
	 * global_asid_available; max = MAX_ASID_AVAILABLE */
	struct {
		uint64_t *used, *freed;
		uint32_t max;
		uint32_t last;
		int64_t available;
	} gasid;
	uint64_t next_ctx_id;
	uint32_t cpumask_words;
	struct irq_cpu *irq;		/* per CPU */
	struct ipi_call *call_free;	/* ipi_call objects, recycled */
	struct ipi_call **call_all;	/* every one allocated (freed at destroy) */
	uint32_t ncalls;
	size_t cap_calls;
	const struct arch_hooks *hooks;
	void *hooks_ctx;
	/* --memory-model tso (check mode): per CPU store buffer; NULL = SC */
	struct tso_cpu *tso;
	/* check mode: broadcast TLBIs in flight (arm64.c); nlive of the npend
	 * records are pending, the array is reset when none is */
	struct tlbi_pending *pend;
	uint32_t npend, nlive;
	size_t cap_pend;
};

static inline struct machine *machine_of(struct sim *s)
{
	return container_of(s, struct machine, sim);
}
static inline struct hw *hw_of(struct sim *s)
{
	return &machine_of(s)->hw;
}
static inline struct arch_cpu *arch_cpu(struct sim *s, int cpu)
{
	return &machine_of(s)->cpu[cpu];
}

/* Build the machine: engine, hardware, back end, per-CPU state. pool: the
 * checker's store of what one schedule's simulation leaves to the next
 * (thread stacks, the frame range, page tables, translation caches; NULL:
 * none), set before the hardware is built so that it can take from it. */
int machine_init(struct machine *mc, const struct tlbsim_profile *prof, int nr_cpus,
		 const int64_t *params, const struct tlbsim_policy *pol, uint64_t seed,
		 struct sim_stack_pool *pool);
void machine_destroy(struct machine *mc);

/* init_new_context() / destroy_context() (arch mmu_context.h): x86 gets its
 * ctx_id here; an arm64 ASID is allocated at the first switch_mm, and
 * destroy_context does not free it (the next rollover reclaims it). id: the
 * mm's number (not used by either allocator). */
int init_new_context(struct sim *s, mm_context_t *ctx, int id);
void destroy_context(struct sim *s, mm_context_t *ctx);

/* arm64: ASIDs usable by user mms with asid_bits and kpti (ASID 0 is
 * reserved; with KPTI ASIDs come in pairs). */
static inline uint32_t arm64_user_asids(int64_t asid_bits, int64_t kpti)
{
	return (1u << (asid_bits - (kpti ? 1 : 0))) - 1;
}
/* arm64: the kernel's context id of (generation, asid), as active_asids and
 * reserved_asids hold it; asid_bits is at most 16 */
static inline uint64_t asid_ctxid(uint64_t gen, uint32_t asid)
{
	return gen << 16 | asid;
}

/* arm64 flush entry points (arch/arm64/include/asm/tlbflush.h) */
void flush_tlb_mm(struct sim *s, mm_context_t *mm);
void __flush_tlb_range(struct sim *s, mm_context_t *mm, uint64_t start, uint64_t end,
		       uint64_t stride, bool last_level);
void flush_tlb_page(struct sim *s, mm_context_t *mm, uint64_t addr);
/* flush_pmd_tlb_range(): PMD stride with a level hint from v5.9 */
void arm64_flush_pmd_tlb_range(struct sim *s, mm_context_t *mm, uint64_t start, uint64_t end);
/* __flush_tlb_pgtable(): TLBI VAE1IS of one table's address (v4.1..v4.19) */
void __flush_tlb_pgtable(struct sim *s, mm_context_t *mm, uint64_t uaddr);
/* local_flush_tlb_page(): TLBI VALE1 (this CPU only) + DSB NSH, v6.19 */
void local_flush_tlb_page(struct sim *s, mm_context_t *mm, uint64_t addr);
/* x86 (arch/x86/mm/tlb.c) */
/* mm_free_global_asid() (v6.15, from destroy_context): the mm's global ASID
 * goes to the freed set, reusable after the next wrap-around flush */
void mm_free_global_asid(struct sim *s, mm_context_t *mm);
/* use_global_asid() (v6.15): give mm a global ASID if one is left (what
 * consider_global_asid does for an mm active on more than 3 CPUs) */
void use_global_asid(struct sim *s, mm_context_t *mm);
void flush_tlb_mm_range(struct sim *s, mm_context_t *mm, uint64_t start, uint64_t end,
			unsigned int stride_shift, bool freed_tables);

/* irq.c: local_irq_disable() / local_irq_enable() on the current CPU (the
 * enable runs the IPIs that waited); whether cpu has IRQs off */
void local_irq_disable(struct sim *s);
void local_irq_enable(struct sim *s);
static inline bool cpu_irqs_off(struct sim *s, int cpu)
{
	return machine_of(s)->irq[cpu].off;
}
/* Send an IPI of round r to cpu, arriving at `arrive`: fn(data) runs there at
 * once (IRQs on: returns true and *done = arrive + work) or when the CPU
 * enables IRQs (returns false; the round waits for it). */
bool ipi_deliver(struct sim *s, struct ipi_round *r, int cpu, uint64_t arrive, ipi_fn fn,
		 const void *data, size_t len, uint64_t *done);
/* The sender's wait: until every handler of r has run and r->finish passed. */
void ipi_round_wait(struct sim *s, struct ipi_round *r);

/* Check mode with the parameter async_completion: completions are
 * scheduling points the explorer chooses (arm64 broadcast TLBIs before the
 * issuer's DSB ISH; x86 IPIs delivered, handled, acknowledged). False in run
 * mode: one predictable test. */
static inline bool async_completion(const struct sim *s)
{
	return __builtin_expect(s->ex != NULL, 0) && P(s, P_async_completion) && s->curr;
}
/* Issue a broadcast invalidation (arm64 TLBI ...IS, x86 INVLPGB) and do not
 * wait. Run mode, or async_completion off: it takes effect everywhere now.
 * Otherwise it takes effect on this CPU now and on each other CPU that holds
 * an entry it removes at a point the explorer chooses, at the latest at this
 * thread's next bcast_sync(). trace_hits: a tlbi_hit record per CPU that
 * lost entries at issue. Returns the CPUs it is pending on. (machine.c) */
uint32_t bcast_nosync_async(struct sim *s, const struct inv_op *inv, bool trace_hits);
void bcast_hit(void *ctx, int cpu, uint32_t removed);
static inline uint32_t bcast_nosync(struct sim *s, const struct inv_op *inv, bool trace_hits)
{
	if (async_completion(s))
		return bcast_nosync_async(s, inv, trace_hits);
	/* bcast_hit only traces: without a trace it would do nothing */
	hw_invalidate_bcast(&machine_of(s)->hw, inv, trace_hits && s->trace ? bcast_hit : NULL, s);
	return 0;
}
/* The issuing thread waits for its broadcasts (arm64 DSB ISH, x86
 * TLBSYNC): every one it issued is complete; a wait executed by another
 * thread or CPU completes none of them. */
void bcast_sync(struct sim *s);
/* arm64 names: TLBI ...IS without its DSB, and dsb(ish)
 * (arch/arm64/include/asm/barrier.h) */
static inline uint32_t arm64_tlbi_nosync(struct sim *s, const struct inv_op *inv)
{
	return bcast_nosync(s, inv, true);
}
static inline void arm64_dsb_ish(struct sim *s)
{
	bcast_sync(s);
}

/* flush_tlb_kernel_range(start, end) (x86: arch/x86/mm/tlb.c; arm64:
 * tlbflush.h), v6.10: kernel (global) translations of [start, end) on every
 * CPU. x86: IPIs to every other online CPU, INVLPG per page up to the
 * ceiling, else a global flush; arm64: broadcast VAALE1IS per page, above
 * MAX_DVM_OPS pages VMALLE1IS. */
static inline void flush_tlb_kernel_range(struct sim *s, uint64_t start, uint64_t end)
{
	machine_of(s)->arch->flush_tlb_kernel_range(s, start, end);
}

/* arch_ops.user_tag of cpu: arm64's (TTBR0's ASID) read inline, as it is
 * what every user access asks; the same value arm64_user_tag returns */
static inline uint32_t arch_user_tag(struct sim *s, int cpu)
{
	const struct machine *mc = machine_of(s);
	if (mc->arch == &arch_arm64_ops)
		return mc->cpu[cpu].ttbr0_asid;
	return mc->arch->user_tag(s, cpu);
}

/* arch_ops.switch_mm / enter_lazy_tlb as the scheduler calls them at every
 * context switch: arm64's (its "already runs next" test, and its empty
 * enter_lazy_tlb) inline, the same as calling them */
void arm64_check_and_switch_context(struct sim *s, int cpu, mm_context_t *mm);
static inline void arch_switch_mm(struct sim *s, int cpu, mm_context_t *next)
{
	struct machine *mc = machine_of(s);
	if (mc->arch != &arch_arm64_ops)
		mc->arch->switch_mm(s, cpu, next);
	else if (next && mc->cpu[cpu].ttbr0_mm != next)
		arm64_check_and_switch_context(s, cpu, next);
}
static inline void arch_enter_lazy_tlb(struct sim *s, int cpu)
{
	struct machine *mc = machine_of(s);
	if (mc->arch != &arch_arm64_ops)
		mc->arch->enter_lazy_tlb(s, cpu);
}

/* Are page-table pages freed through the RCU table batch (tlb_remove_table)?
 * arm64 always; x86 with x86_table_free=rcu (a37259732a7d, v6.15). */
static inline bool arch_rcu_table_free(struct sim *s)
{
	const struct machine *mc = machine_of(s);
	return mc->arch->rcu_table_free ||
	       (mc->arch == &arch_x86_64_ops && mc->policy.x86_table_free == X86_TABLE_FREE_RCU);
}

/* Which of the two back ends is this machine (for reports only). */
static inline bool machine_is_x86(struct sim *s)
{
	return machine_of(s)->arch == &arch_x86_64_ops;
}

/*
 * tso.c: x86-TSO store buffers (check mode, --memory-model tso). Each CPU's
 * plain stores enter its FIFO store buffer; one becomes globally visible at
 * a drain, a callback the explorer schedules like any other candidate. A
 * load reads its own CPU's newest buffered store to that word (forwarding),
 * else memory: so it may pass the CPU's older stores to other words. A
 * fence (MFENCE / smp_mb()), a locked instruction and a serialising one
 * (MOV to CR3, INVLPG: Intel SDM vol. 3A 9.3 "Serializing instructions")
 * drain the buffer first. Under SC (mc->tso NULL) a store writes memory.
 */
#define TSO_SB_ENTRIES 8
#define TSO_SWITCHING ((uintptr_t)1)	/* LOADED_MM_SWITCHING */
/* the words stored through a buffer (names for traces) */
enum tso_word { TSO_W_LOADED_MM, TSO_W_IS_LAZY, TSO_W_X, TSO_W_Y, TSO_W_COUNT };
enum tso_why { TSO_MFENCE, TSO_LOCKED, TSO_SERIALISING, TSO_WHY_COUNT };
struct tso_entry {
	uintptr_t *mem;
	uintptr_t val;
	enum tso_word what;
};
struct tso_cpu {
	struct tso_entry e[TSO_SB_ENTRIES];
	uint32_t head, n;
	bool queued;			/* a drain callback is pending */
	/* x86 switch_mm_irqs_off between its tlb_gen read and its CR3 write
	 * (TSO only: under SC it is one step) */
	struct {
		bool pending;
		mm_context_t *next;
		int new_asid;
		bool need_flush;
	} sw;
};
int tso_enable(struct machine *mc);
static inline bool tso_on(struct sim *s)
{
	return machine_of(s)->tso != NULL;
}
void tso_buffer(struct sim *s, int cpu, uintptr_t *mem, uintptr_t val, enum tso_word what);
static inline void tso_store(struct sim *s, int cpu, uintptr_t *mem, uintptr_t val,
			     enum tso_word what)
{
	if (__builtin_expect(machine_of(s)->tso != NULL, 0))
		tso_buffer(s, cpu, mem, val, what);
	else
		*mem = val;
}
uintptr_t tso_load(struct sim *s, int cpu, const uintptr_t *mem);
/* entries in cpu's store buffer (0 under SC) */
uint32_t tso_pending(struct sim *s, int cpu);
/* drain cpu's whole buffer (a no-op under SC) */
void tso_drain_all(struct sim *s, int cpu, enum tso_why why);
static inline void tso_fence(struct sim *s, int cpu, enum tso_why why)
{
	if (__builtin_expect(machine_of(s)->tso != NULL, 0))
		tso_drain_all(s, cpu, why);
}
/* check mode, before a thread resumes on cpu: the rest of a switch_mm
 * that cpu is in the middle of */
void tso_before_run(struct sim *s, int cpu);
/* a litmus test's forbidden-under-SC outcome was seen (arch_hooks) */
void tso_observed(struct sim *s, int cpu, const char *text);
/* x86.c: the rest of switch_mm_irqs_off (CR3 write, loaded_mm = next) */
void x86_switch_finish(struct sim *s, int cpu);

#endif
