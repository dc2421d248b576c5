/*
 * tso.c - x86-TSO store buffers for tlbsim check --memory-model tso (arch.h).
 *
 * The model of x86-TSO (Sewell, Sarkar, Owens, Zappa Nardelli, Myreen,
 * "x86-TSO: A Rigorous and Usable Programmer's Model for x86
 * Multiprocessors", CACM 53(7), 2010; Intel SDM vol. 3A 9.2.2 "Memory
 * Ordering in P6 and More Recent Processor Families"): every CPU has a FIFO
 * buffer of its plain stores; a load takes the newest buffered store of its
 * own CPU to that address, else memory; a store leaves the buffer for
 * memory at any time, oldest first; MFENCE, locked instructions and
 * serialising instructions wait until the buffer is empty.
 *
 * Only the words the model routes through tso_store() are buffered: x86
 * cpu_tlbstate.loaded_mm and cpu_tlbstate_shared.is_lazy, and the litmus
 * variables. mm_cpumask updates and tlb_gen increments are locked
 * instructions (cpumask_set_cpu / cpumask_clear_cpu are LOCK BTS / BTR,
 * inc_mm_tlb_gen is atomic64_inc_return); PTE clears of a zap are
 * ptep_get_and_clear, an XCHG (implicitly locked): all of them are visible
 * at once and drain the writer's buffer.
 *
 * The PTE level. Every change of a present page-table entry (set_entry in
 * mm.h) drains the writing CPU's buffer: on x86 SMP each one is a locked
 * read-modify-write - native_ptep_get_and_clear is XCHG (zap, mprotect's
 * ptep_modify_prot_start, reclaim, mremap, migration), ptep_set_wrprotect
 * and ptep_test_and_clear_young are LOCK BTR. The plain PTE stores
 * (native_set_pte: set_pte_at of a none slot, the commit after the XCHG,
 * pmd_clear) are written to memory at once: modelling them as buffered can
 * add no missed flush, because in every modelled flusher a locked
 * instruction (the XCHG itself, or inc_mm_tlb_gen's LOCK XADD) stands
 * between its page-table stores and its mm_cpumask / loaded_mm reads, and
 * on the other side the CR3 write of switch_mm is serialising (Intel SDM
 * vol. 3A 9.3, 11.10: a serialising instruction drains the store buffer)
 * before any walk of next's tables - the "PTE store; read mm_cpumask" vs
 * "set the mm_cpumask bit; walk" store-buffering outcome that 71b3c126e611
 * (v4.5, "x86/mm: Add barriers and document switch_mm()-vs-flush
 * synchronization") documents is forbidden in every version modelled. A
 * page walk reads memory: it sees no CPU's buffered store, its own
 * included (SDM vol. 3A 4.10.4.3: a walk may appear to execute before an
 * earlier store to the entry unless a serialising instruction separates
 * them); with no PTE store buffered that assumption is not exercised yet.
 *
 * A drain is an engine callback (sim_call_at: in check mode a candidate of
 * the explorer, ordered by queueing like RCU callbacks): one per CPU with a
 * non-empty buffer, re-queued while entries remain, withdrawn by a fence.
 */
#include <stdlib.h>

#include "arch/arch.h"
#include "arch/points.h"

int tso_enable(struct machine *mc)
{
	mc->tso = calloc((size_t)mc->sim.nr_cpus, sizeof(*mc->tso));
	return mc->tso ? 0 : TLBSIM_ENOMEM;
}

static void drain_one(struct sim *s, void *arg, uint64_t data);

static void queue_drain(struct sim *s, int cpu)
{
	struct tso_cpu *t = &machine_of(s)->tso[cpu];
	if (t->queued || !t->n)
		return;
	t->queued = true;
	sim_call_at(s, s->now, drain_one, NULL, NULL, (uint64_t)cpu);
}

/* the oldest store of cpu's buffer reaches memory */
static void pop_oldest(struct sim *s, int cpu)
{
	struct tso_cpu *t = &machine_of(s)->tso[cpu];
	struct tso_entry *e = &t->e[t->head];
	*e->mem = e->val;
	t->head = (t->head + 1) % TSO_SB_ENTRIES;
	t->n--;
	sim_trace(s, TR_TSO_DRAIN, (uint64_t)cpu, (uint64_t)e->what);
}

static void drain_one(struct sim *s, void *arg, uint64_t data)
{
	(void)arg;
	int cpu = (int)data;
	struct tso_cpu *t = &machine_of(s)->tso[cpu];
	t->queued = false;
	if (t->n)
		pop_oldest(s, cpu);
	queue_drain(s, cpu);
}

void tso_buffer(struct sim *s, int cpu, uintptr_t *mem, uintptr_t val, enum tso_word what)
{
	struct machine *mc = machine_of(s);
	struct tso_cpu *t = &mc->tso[cpu];
	if (t->n == TSO_SB_ENTRIES)
		pop_oldest(s, cpu);	/* a full buffer stalls until its oldest leaves */
	struct tso_entry *e = &t->e[(t->head + t->n) % TSO_SB_ENTRIES];
	e->mem = mem;
	e->val = val;
	e->what = what;
	t->n++;
	sim_trace(s, TR_TSO_STORE, (uint64_t)cpu, (uint64_t)what);
	queue_drain(s, cpu);
}

uintptr_t tso_load(struct sim *s, int cpu, const uintptr_t *mem)
{
	struct machine *mc = machine_of(s);
	if (mc->tso) {
		const struct tso_cpu *t = &mc->tso[cpu];
		for (uint32_t i = t->n; i-- > 0;) {
			const struct tso_entry *e = &t->e[(t->head + i) % TSO_SB_ENTRIES];
			if (e->mem == mem)
				return e->val;	/* store-to-load forwarding */
		}
	}
	return *mem;
}

uint32_t tso_pending(struct sim *s, int cpu)
{
	struct machine *mc = machine_of(s);
	return mc->tso ? mc->tso[cpu].n : 0;
}

void tso_drain_all(struct sim *s, int cpu, enum tso_why why)
{
	struct machine *mc = machine_of(s);
	struct tso_cpu *t = &mc->tso[cpu];
	if (!t->n)
		return;
	sim_trace(s, TR_TSO_FENCE, (uint64_t)cpu, (uint64_t)t->n << 8 | (uint64_t)why);
	while (t->n)
		pop_oldest(s, cpu);
	if (t->queued) {
		sim_cancel_call(s, drain_one, (uint64_t)cpu);
		t->queued = false;
	}
}

void tso_before_run(struct sim *s, int cpu)
{
	struct machine *mc = machine_of(s);
	if (mc->tso && mc->tso[cpu].sw.pending)
		x86_switch_finish(s, cpu);
}

void tso_observed(struct sim *s, int cpu, const char *text)
{
	struct machine *mc = machine_of(s);
	if (mc->hooks && mc->hooks->litmus_outcome)
		mc->hooks->litmus_outcome(mc->hooks_ctx, cpu, text);
}
