/*
 * mmu_gather.c - the TLB-shootdown batching of a page-table teardown.
 *
 * Mirrors mm/mmu_gather.c and include/asm-generic/tlb.h as in v5.1 (with
 * errata E2 of kernel-model.md: the nested handling lives in what was
 * arch_tlb_finish_mmu(tlb, start, end, force); tlb_flush_mmu_tlbonly returns
 * early when tlb->end == 0; tables are invalidated before their RCU free).
 *
 * Ordering rule: unhook -> invalidate on every CPU that may cache it -> free.
 * tlb_flush_mmu() therefore runs tlb_flush_mmu_tlbonly() before
 * tlb_flush_mmu_free(), and page-table pages on arm64 are additionally held
 * back for an RCU grace period.
 *
 * The `nested` policy knob selects what tlb_finish_mmu does when
 * mm_tlb_flush_nested() is true (kernel-model 9.6).
 */
#include <stdlib.h>

#include "mm/mm.h"
#include "mm/points.h"

static uint32_t *thread_page_batch(struct sim *s, uint32_t max)
{
	struct task *t = current_task(s);
	if (!t->gather_pages) {
		size_t bytes = (size_t)max * sizeof(uint32_t);
		if (sim_host_charge(s, bytes) || !(t->gather_pages = malloc(bytes)))
			sim_oom(s, "a gather batch");
	}
	return t->gather_pages;
}

/* tlb_gather_mmu() (mm/mmu_gather.c, v5.1; arch_tlb_gather_mmu) */
void tlb_gather_mmu(struct sim *s, struct mmu_gather *tlb, struct mm_struct *mm,
		    uint64_t start, uint64_t end)
{
	uint64_t ps = hw_of(s)->geom.page_size;
	tlb->mm = mm;
	tlb->ctx = &mm->context;
	tlb->fullmm = !(start | (end + 1));
	tlb->need_flush_all = 0;
	tlb->batch = NULL;
	tlb->batch_count = 0;
	tlb->nr_pages = 0;
	tlb->max_pages = MMU_GATHER_BUNDLE + max_gather_batch(ps) * max_gather_batch_count(ps);
	tlb->pages = thread_page_batch(s, tlb->max_pages);
	tlb->start_arg = start;
	tlb->end_arg = end;
	__tlb_reset_range(tlb);
	/* inc_tlb_flush_pending(): an atomic on a line the other gathering
	 * CPUs write too */
	mm->tlb_flush_pending++;
	s->m.gathers++;
	sim_step_arg(s, YP_GATHER_INIT,
		     (uint64_t)P(s, P_lock_op_ns) + line_rmw(s, &mm->flush_pending_line),
		     (uint64_t)mm->tlb_flush_pending, 0);
}

/* tlb_flush_mmu_tlbonly() (include/asm-generic/tlb.h): v4.20..v5.5 return
 * early when end == 0 (a fullmm gather has end = ~0, so its finish always
 * flushes); from 0758cd830494 (v5.6, knob tlb_flush_cond=bits) when neither
 * freed_tables nor a cleared_* bit is set, so a gather that cleared nothing
 * flushes nothing */
void tlb_flush_mmu_tlbonly(struct sim *s, struct mmu_gather *tlb)
{
	if (machine_of(s)->policy.tlb_flush_cond == TLB_FLUSH_COND_BITS) {
		if (!(tlb->freed_tables || tlb->cleared_ptes || tlb->cleared_pmds ||
		      tlb->cleared_puds || tlb->cleared_p4ds))
			return;
	} else if (!tlb->end) {
		return;
	}
	machine_of(s)->arch->tlb_flush(s, tlb);
	/* mmu_notifier_invalidate_range(): no secondary TLBs modelled */
	__tlb_reset_range(tlb);
}

static void tlb_remove_table_drop(struct sim *s, void *arg, uint64_t data);

static void tlb_remove_table_rcu(struct sim *s, void *arg, uint64_t data)
{
	(void)data;
	struct mmu_table_batch *b = arg;
	struct kernel *k = kernel_of(s);
	/* a CPU with IRQs off in a GUP-fast walk holds the grace period off
	 * (an IRQs-off section is an RCU read-side critical section) */
	if (k->gup_fast_walkers) {
		sim_call_at(s, s->now + (uint64_t)P(s, P_rcu_grace_ns), tlb_remove_table_rcu,
			    tlb_remove_table_drop, b, 0);
		return;
	}
	/* the callback in the timeline: the run's last event is often this
	 * one (the grace period after the last munmap), and the trace showed
	 * nothing there */
	sim_trace_cpu(s, b->cpu, TR_RCU_FREED, b->nr ? b->tables[0] : 0, b->nr);
	for (uint32_t i = 0; i < b->nr; i++)
		frame_free(hw_of(s), b->tables[i]);
	b->nr = 0;
	b->next_free = k->tbatch_free;
	k->tbatch_free = b;
}

/* the sim ends before the grace period: return the batch to the pool */
static void tlb_remove_table_drop(struct sim *s, void *arg, uint64_t data)
{
	(void)data;
	struct mmu_table_batch *b = arg;
	struct kernel *k = kernel_of(s);
	b->nr = 0;
	b->next_free = k->tbatch_free;
	k->tbatch_free = b;
}

/* tlb_table_flush(): invalidate (unless the arch opted out), then hand the
 * table batch to RCU (call_rcu_sched). */
static void tlb_table_flush(struct sim *s, struct mmu_gather *tlb)
{
	if (!tlb->batch)
		return;
	sim_step(s, YP_TABLE_FLUSH, 0);
	/* tlb_table_invalidate(): !CONFIG_HAVE_RCU_TABLE_NO_INVALIDATE */
	tlb_flush_mmu_tlbonly(s, tlb);
	struct mmu_table_batch *b = tlb->batch;
	tlb->batch = NULL;
	sim_trace(s, TR_RCU_FREE, b->nr ? b->tables[0] : 0, b->nr);
	b->cpu = sim_current(s)->cpu;
	struct kernel *k = kernel_of(s);
	if (k->hooks && k->hooks->tables_to_rcu)
		k->hooks->tables_to_rcu(k->hooks_ctx, b->tables, b->nr);
	sim_call_at(s, s->now + sim_current(s)->pending_ns + (uint64_t)P(s, P_rcu_grace_ns),
		    tlb_remove_table_rcu, tlb_remove_table_drop, b, 0);
}

/* Does this __get_free_page(GFP_NOWAIT | __GFP_NOWARN) of a batch page fail?
 * (failure injection: -D table_batch_fail=1, or fail_table_batch(N)) */
static bool tlb_table_batch_fails(struct sim *s)
{
	struct kernel *k = kernel_of(s);
	if (P(s, P_table_batch_fail))
		return true;
	if (k->table_batch_fail <= 0)
		return false;
	k->table_batch_fail--;
	return true;
}

void mmu_gather_fail_batches(struct sim *s, int64_t n)
{
	kernel_of(s)->table_batch_fail = n > 0 ? n : 0;
}

/* tlb_remove_table_one() (mm/mmu_gather.c, v4.20..v5.4):
 * tlb_remove_table_sync_one() - an IPI to every other CPU, waited for, which
 * holds off lockless (GUP-fast) walkers but invalidates no TLB - then
 * __tlb_remove_table(): the table is freed at once. With table_free_one=
 * invalidate the caller ran tlb_table_invalidate() first. */
static void tlb_remove_table_one(struct sim *s, uint32_t table)
{
	if (kernel_of(s)->gup_fast_walkers) {
		/* a GUP-fast walk has IRQs off: the sync's IPI waits for it
		 * (khugepaged.c models the IPIs; no walk: the cost below) */
		tlb_remove_table_sync_one(s);
		sim_step_arg(s, YP_TABLE_FREE_ONE, 0, table, TABLE_ONE_NOBATCH);
		frame_free(hw_of(s), table);
		return;
	}
	/* smp_call_function(tlb_remove_table_smp_sync, NULL, 1): every other
	 * online CPU gets the IPI */
	s->m.ipi_sent += (uint64_t)(s->nr_cpus - 1);
	s->m.ipi_received += (uint64_t)(s->nr_cpus - 1);
	sim_step_arg(s, YP_TABLE_FREE_ONE, (uint64_t)P(s, P_table_sync_ns), table,
		     TABLE_ONE_NOBATCH);
	frame_free(hw_of(s), table);
}

/* tlb_remove_table() (mm/mmu_gather.c, v5.1): queue a page-table page for
 * RCU freeing. Two paths free it at once instead:
 *  - before "mm/tlb: Remove tlb_remove_table() non-concurrent condition"
 *    (v4.19; knob table_free_users=shortcut) a table of an mm with
 *    mm_users < 2 was freed here, before the gather's flush;
 *  - when the batch page cannot be allocated (-D table_batch_fail=1):
 *    tlb_remove_table_one, after tlb_table_invalidate() since d86564a2f085
 *    (v4.19; arm64 selected HAVE_RCU_TABLE_INVALIDATE with its RCU table
 *    freeing in v4.20; knob table_free_one). */
static void tlb_remove_table(struct sim *s, struct mmu_gather *tlb, uint32_t table)
{
	uint32_t cap = max_table_batch(hw_of(s)->geom.page_size);
	struct kernel *k = kernel_of(s);
	const struct tlbsim_policy *pol = &machine_of(s)->policy;
	if (pol->table_free_users == TABLE_FREE_USERS_SHORTCUT &&
	    tlb->mm->users + tlb->mm->thread_users < 2) {
		sim_step_arg(s, YP_TABLE_FREE_ONE, 0, table, TABLE_ONE_USERS);
		frame_free(hw_of(s), table);
		return;
	}
	if (!tlb->batch && tlb_table_batch_fails(s)) {
		/* tlb_table_invalidate(): !CONFIG_HAVE_RCU_TABLE_NO_INVALIDATE */
		if (pol->table_free_one == TABLE_FREE_ONE_INVALIDATE)
			tlb_flush_mmu_tlbonly(s, tlb);
		tlb_remove_table_one(s, table);
		return;
	}
	if (!tlb->batch) {
		struct mmu_table_batch *b = k->tbatch_free;
		if (b) {
			k->tbatch_free = b->next_free;
		} else {
			/* not zeroed: tables[] is read only below nr, and
			 * every header field is set here */
			b = kernel_obj_alloc_uninit(s, sizeof(*b) + cap * sizeof(uint32_t));
			b->tables = (uint32_t *)(b + 1);
			b->next_free = NULL;
			b->cap = cap;
		}
		b->nr = 0;
		tlb->batch = b;
	}
	tlb->batch->tables[tlb->batch->nr++] = table;
	if (tlb->batch->nr == tlb->batch->cap)
		tlb_table_flush(s, tlb);
}

/* put_page() of a frame released by the gather */
static void gather_put_page(struct sim *s, uint32_t f)
{
	struct frame *fr = frame_of(hw_of(s), f);
	SIM_BUG_ON(s, fr->refcount == 0);
	if (--fr->refcount == 0)
		frame_free(hw_of(s), f);
}

/* tlb_flush_rmaps() (mm/mmu_gather.c, v6.1, 5df397dec7c4): after the TLB
 * flush, under the PTE lock, remove the rmaps zap_pte_range delayed */
void tlb_flush_rmaps(struct sim *s, struct mmu_gather *tlb)
{
	struct hw *hw = hw_of(s);
	for (uint32_t i = 0; i < tlb->nr_pages; i++)
		frame_of(hw, tlb->pages[i])->pgflags &= (uint8_t)~PG_DELAY_RMAP;
}

/* tlb_flush_mmu_free() (v5.1): table flush, then free the page batches */
void tlb_flush_mmu_free(struct sim *s, struct mmu_gather *tlb)
{
	if (arch_rcu_table_free(s))
		tlb_table_flush(s, tlb);
	if (tlb->nr_pages) {
		sim_step_arg(s, YP_FREE_PAGES, tlb->nr_pages * (uint64_t)P(s, P_page_free_ns),
			     tlb->nr_pages, 0);
		for (uint32_t i = 0; i < tlb->nr_pages; i++)
			gather_put_page(s, tlb->pages[i]);
		tlb->nr_pages = 0;
	}
}

/* tlb_flush_mmu() */
void tlb_flush_mmu(struct sim *s, struct mmu_gather *tlb)
{
	tlb_flush_mmu_tlbonly(s, tlb);
	tlb_flush_mmu_free(s, tlb);
}

/* __tlb_remove_page(): queue a page; true when the batch is full and the
 * caller must flush (zap_pte_range's force_flush). */
bool __tlb_remove_page(struct sim *s, struct mmu_gather *tlb, uint32_t frame)
{
	(void)s;
	tlb->pages[tlb->nr_pages++] = frame;
	return tlb->nr_pages >= tlb->max_pages;
}

/* __pte_free_tlb: arm64 -> tlb_remove_table (RCU); x86 native ->
 * tlb_remove_page (freed with the data pages after the flush). arm64 with
 * arm64_pgtable_flush=hook (285994a62c80, v4.1..v4.19) first invalidates the
 * table's walk-cache entries: __flush_tlb_pgtable(tlb->mm, addr). */
static void arch_free_table(struct sim *s, struct mmu_gather *tlb, uint32_t table,
			    uint64_t address)
{
	if (!machine_is_x86(s) &&
	    machine_of(s)->policy.arm64_pgtable_flush == ARM64_PGTABLE_FLUSH_HOOK)
		__flush_tlb_pgtable(s, tlb->ctx, address);
	if (arch_rcu_table_free(s)) {
		tlb_remove_table(s, tlb, table);
	} else if (__tlb_remove_page(s, tlb, table)) {
		tlb_flush_mmu(s, tlb);
	}
}

/* pte_free_tlb() (include/asm-generic/tlb.h, v4.20+) */
void pte_free_tlb(struct sim *s, struct mmu_gather *tlb, uint32_t table, uint64_t address)
{
	__tlb_adjust_range(tlb, address, hw_of(s)->geom.page_size);
	tlb->freed_tables = 1;
	tlb->cleared_pmds = 1;
	arch_free_table(s, tlb, table, address);
}

/* pmd_free_tlb() */
void pmd_free_tlb(struct sim *s, struct mmu_gather *tlb, uint32_t table, uint64_t address)
{
	__tlb_adjust_range(tlb, address, hw_of(s)->geom.page_size);
	tlb->freed_tables = 1;
	tlb->cleared_puds = 1;
	arch_free_table(s, tlb, table, address);
}

/* pud_free_tlb() */
void pud_free_tlb(struct sim *s, struct mmu_gather *tlb, uint32_t table, uint64_t address)
{
	__tlb_adjust_range(tlb, address, hw_of(s)->geom.page_size);
	tlb->freed_tables = 1;
	tlb->cleared_p4ds = 1;
	arch_free_table(s, tlb, table, address);
}

/* tlb_start_vma(): empty in the generic v5.1 code and on x86 */
void tlb_start_vma(struct sim *s, struct mmu_gather *tlb, struct vm_area_struct *vma)
{
	(void)s;
	(void)tlb;
	(void)vma;
}

/* tlb_end_vma(): generic (arm64) flushes the range unless fullmm; x86 no-op
 * (v5.1) - but for a VM_PFNMAP or VM_MIXEDMAP VMA, from b67fbebd4cf9
 * "mmu_gather: Force tlb-flush VM_PFNMAP vmas" (include/asm-generic/tlb.h,
 * v5.19; knob pfnmap_flush=end_vma), x86 flushes too */
void tlb_end_vma(struct sim *s, struct mmu_gather *tlb, struct vm_area_struct *vma)
{
	bool pfn = vma && (vma->vm_flags & (VM_PFNMAP | VM_MIXEDMAP)) &&
		   machine_of(s)->policy.pfnmap_flush == PFNMAP_FLUSH_END_VMA;
	if ((!machine_of(s)->arch->flush_at_end_vma && !pfn) || tlb->fullmm)
		return;
	sim_step(s, YP_END_VMA, 0);
	tlb_flush_mmu_tlbonly(s, tlb);
}

/*
 * The nested-flush policy (kernel-model 1.9, 9.6): what tlb_finish_mmu does to
 * the gather when another gather on the same mm is in flight. A policy hook,
 * not a kernel function: each case is the body one kernel version (or one
 * proposed patch) had at this point.
 */
void tlbsim_nested_policy(struct sim *s, struct mmu_gather *tlb, uint64_t start, uint64_t end)
{
	switch (machine_of(s)->policy.nested) {
	case NESTED_PREFIX:	/* v4.20..v5.2-rc5 (a6d60245d6d9) */
		__tlb_reset_range(tlb);
		__tlb_adjust_range(tlb, start, end - start);
		break;
	case NESTED_V1:		/* keep level bits, widen the range */
		__tlb_adjust_range(tlb, start, end - start);
		break;
	case NESTED_V2:		/* the v2 patch, 2019-05-10 */
		if (!tlb->fullmm) {
			__tlb_reset_range(tlb);
			__tlb_adjust_range(tlb, start, end - start);
			tlb->freed_tables = 1;
			tlb->cleared_ptes = 1;
			tlb->cleared_pmds = 1;
			tlb->cleared_puds = 1;
			tlb->cleared_p4ds = 1;
		}
		break;
	case NESTED_FULLMM:	/* 7a30df49f63a, upstream */
		tlb->fullmm = 1;
		__tlb_reset_range(tlb);
		tlb->freed_tables = 1;
		break;
	case NESTED_NEED_FLUSH_ALL:	/* tested on v5.1: need_flush_all, reset */
		__tlb_reset_range(tlb);
		tlb->need_flush_all = 1;
		tlb->freed_tables = 1;
		break;
	case NESTED_KEEP_BITS:	/* reset only start/end, keep the level bits */
		tlb->start = TLBSIM_EINVAL_VA;
		tlb->end = 0;
		__tlb_adjust_range(tlb, start, end - start);
		break;
	case NESTED_COUNT:
		SIM_BUG_ON(s, 1);
	}
}

/* tlb_finish_mmu(tlb, start, end) with arch_tlb_finish_mmu(tlb, start, end,
 * force) inlined (mm/mmu_gather.c, v4.20..v5.1) */
void tlb_finish_mmu(struct sim *s, struct mmu_gather *tlb, uint64_t start, uint64_t end)
{
	sim_step(s, YP_FINISH_CHECK_NESTED, 0);
	/* policy knob nested_check=off: the pre-4.14 code had no nested check
	 * (99baac21e458 added it) */
	struct machine *mc = machine_of(s);
	bool force = mc->policy.nested_check && mm_tlb_flush_nested(tlb->mm);
	sim_trace(s, TR_NESTED, (uint64_t)tlb->mm->tlb_flush_pending, force);
	struct task *tk = current_task(s);
	if (force) {
		s->m.nested_finishes++;
		sim_step_arg(s, YP_FINISH_POLICY, 0, (uint64_t)mc->policy.nested, 0);
		tlbsim_nested_policy(s, tlb, start, end);
		tk->in_nested_finish = true;
	}
	tlb_flush_mmu(s, tlb);
	tk->in_nested_finish = false;
	/* check_pgt_cache(); tlb_batch_list_free(): nothing to model */
	/* dec_tlb_flush_pending(): the same line's atomic */
	sim_step(s, YP_PENDING_DEC,
		 (uint64_t)P(s, P_lock_op_ns) + line_rmw(s, &tlb->mm->flush_pending_line));
	tlb->mm->tlb_flush_pending--;
}
