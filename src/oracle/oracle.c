/*
 * oracle.c - the invariant checker (see oracle.h), evaluated as the
 * simulation runs, in every mode.
 *
 * Reachability of a cached entry (kernel-model 7):
 *  - arm64: an entry tagged X on CPU c is reachable if a live mm holds ASID X
 *    in the current generation, except that a CPU that owes a rollover flush
 *    (flush_pending) can only use entries of the ASID in its TTBR0 (it
 *    invalidates everything before it switches to anything else); so an
 *    entry of an ASID number that was reused after a rollover is reachable
 *    only if it was filled in the new generation. Dead mms (users == 0)
 *    reach nothing (W3);
 *  - x86: an entry of PCID slot k on CPU c is reachable if slot k belongs to a
 *    live mm and either c has that slot loaded and is not lazy, or the slot's
 *    tlb_gen still equals the mm's (no flush was skipped that switch_mm would
 *    catch up on). Walk entries on a lazy CPU with the slot loaded are
 *    reachable too: the CPU's CR3 still points at the tables and the hardware
 *    may walk speculatively (b956575bed91). A leaf entry on a lazy CPU is not
 *    used before switch_mm_irqs_off() compares tlb_gen.
 *
 * Checks:
 *  - I1 at free (data pages) and at the hand-off to RCU (page tables);
 *  - I1 realized and stale-walk realized: hardware hooks of the MMU;
 *  - I1 of a software walker: a GUP-fast walk reads a freed page table;
 *  - I2 at the return of munmap / madvise(DONTNEED) / mprotect;
 *  - I3 at a write through a cached dirty entry (into a page MADV_FREE or
 *    writeback judged clean, that soft-dirty tracking reports clean, that
 *    KSM compared after write-protecting it, or that migration or a COW
 *    fault copied to the page that replaces it);
 *  - livelock at every user fault.
 * Deliberate windows (not reported): W3 dead-ASID leaves (arm64 fullmm);
 * entries used between unlink and the flush that covers them; x86 lazy-CPU
 * leaves whose tlb_gen is behind.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oracle/oracle.h"
#include "sim/grow.h"

#define OF_CHUNK_SHIFT 10
#define OF_CHUNK (1u << OF_CHUNK_SHIFT)

static const char *const inv_names[INV_COUNT] = {
#define X(e, n, d) n,
	TLBSIM_INVARIANTS(X)
#undef X
};
static const char *const inv_descs[INV_COUNT] = {
#define X(e, n, d) d,
	TLBSIM_INVARIANTS(X)
#undef X
};

const char *inv_name(int kind)
{
	return kind >= 0 && kind < INV_COUNT ? inv_names[kind] : "?";
}

const char *inv_desc(int kind)
{
	return kind >= 0 && kind < INV_COUNT ? inv_descs[kind] : "?";
}

int inv_lookup(const char *name)
{
	for (int k = 0; k < INV_COUNT; k++)
		if (strcmp(name, inv_names[k]) == 0)
			return k;
	return -1;
}

void inv_names_list(char *buf, size_t len)
{
	size_t o = 0;
	buf[0] = 0;
	for (int k = 0; k < INV_COUNT && o < len; k++)
		o += (size_t)snprintf(buf + o, len - o, "%s%s",
				      k == 0 ? "" : k == INV_COUNT - 1 ? " or " : ", ", inv_names[k]);
}

/* the event's a: the invariant (bits 0-15), cpu + 1 (16-31; 0: none), the
 * frame (32-63): two reports at one step (two CPUs, two entries) told apart */
static uint64_t violation_arg(enum inv_id kind, int cpu, uint32_t frame)
{
	return (uint64_t)kind | (uint64_t)((uint32_t)(cpu + 1) & 0xffffu) << 16 |
	       (uint64_t)frame << 32;
}

static void fmt_violation(char *buf, size_t len, uint64_t a, uint64_t b)
{
	const int kind = (int)(a & 0xffffu), cpu = (int)((a >> 16) & 0xffffu) - 1;
	const unsigned frame = (unsigned)(a >> 32);
	char who[48] = "";
	if (cpu >= 0)
		snprintf(who, sizeof(who), " (cpu %d, frame %u)", cpu, frame);
	if (kind == INV_LITMUS)
		snprintf(buf, len, "tlbsim_VIOLATION: %s (an outcome, no address)", inv_name(kind));
	else if (b == UINT64_MAX)
		snprintf(buf, len, "tlbsim_VIOLATION: %s (a table, no address)%s", inv_name(kind), who);
	else
		snprintf(buf, len, "tlbsim_VIOLATION: %s at 0x%llx%s", inv_name(kind),
			 (unsigned long long)b, who);
}

static const struct sim_point tp_violation = {"tlbsim_VIOLATION", fmt_violation, SP_INSTANT};

/* ---- observer state ---- */
/*
 * The per-frame state, OF_CHUNK frames per chunk, zeroed on demand: entries
 * [0, ready) are initialised, and asking for one beyond zeroes up to it. A
 * check schedule touches a few dozen low frame numbers, and zeroing a whole
 * 80 KiB chunk for each one (calloc) was 7 % of a small check's host time.
 */
struct oracle_fchunk {
	uint32_t ready;
	struct oracle_frame f[OF_CHUNK];
};

struct oracle_frame *oracle_frame(struct oracle *o, uint32_t f)
{
	const size_t c = f >> OF_CHUNK_SHIFT;
	const uint32_t i = f & (OF_CHUNK - 1);
	while (c >= o->nfchunks) {
		struct oracle_fchunk *n = malloc(sizeof(*n));
		if (!n || GROW(&o->fchunks, &o->cap_fchunks, o->nfchunks, o->nfchunks + 1, 16)) {
			free(n);
			sim_oom(o->s, "the checker");
			return NULL;
		}
		n->ready = 0;
		o->fchunks[o->nfchunks++] = n;
	}
	struct oracle_fchunk *ch = o->fchunks[c];
	if (__builtin_expect(i >= ch->ready, 0)) {
		memset(&ch->f[ch->ready], 0, (size_t)(i + 1 - ch->ready) * sizeof(ch->f[0]));
		ch->ready = i + 1;
	}
	return &ch->f[i];
}

/* oth()'s rare path, out of line: the hooks that call oth stay small */
static __attribute__((noinline)) struct oracle_thread *oth_grow(struct oracle *o, int tid)
{
	size_t old = o->cap_th;
	if (GROW(&o->th, &o->cap_th, old, (size_t)tid + 1, 16)) {
		sim_oom(o->s, "the checker");
		return NULL;
	}
	memset(&o->th[old], 0, (o->cap_th - old) * sizeof(*o->th));
	return &o->th[tid];
}

static struct oracle_thread *oth(struct oracle *o, int tid)
{
	if ((size_t)tid >= o->cap_th)
		return oth_grow(o, tid);
	return &o->th[tid];
}

static struct oracle_thread *cur_th(struct oracle *o)
{
	return o->s->curr ? oth(o, o->s->curr->id) : NULL;
}

/* ---- reports ---- */
void describe_flush(const struct flush_report *r, char *buf, size_t len)
{
	const struct flush_note *f = &r->n;
	switch (f->what) {
	case FLUSH_ARM64_TLBI:
		snprintf(buf, len, "%s%llu x TLBI %s%s over [0x%llx, 0x%llx) stride 0x%llx by cpu %d "
			 "at step %llu", r->nested ? "nested tlb_finish_mmu: " : "",
			 (unsigned long long)f->nops, tlbi_name(f->op),
			 f->local ? " in its local form (no IS: this CPU only)" : "",
			 (unsigned long long)f->start,
			 (unsigned long long)f->end, (unsigned long long)f->stride, f->cpu,
			 (unsigned long long)r->step);
		if (f->nrange) {
			size_t n = strlen(buf);
			snprintf(buf + n, len - n, ", %llu of them range TLBIs (FEAT_TLBIRANGE)",
				 (unsigned long long)f->nrange);
		}
		if (f->ttl) {
			size_t n = strlen(buf);
			snprintf(buf + n, len - n, ", TTL hint: leaf at depth %d", f->ttl - 1);
		}
		break;
	case FLUSH_X86_MM_RANGE:
		snprintf(buf, len, "%sflush_tlb_mm_range(%s, freed_tables=%d) by cpu %d: IPIs to %d "
			 "CPUs, at step %llu", r->nested ? "nested tlb_finish_mmu: " : "",
			 f->full ? "TLB_FLUSH_ALL" : "range", f->freed_tables, f->cpu, f->ntargets,
			 (unsigned long long)r->step);
		if (!f->full && f->end != ~0ull) {
			size_t n = strlen(buf);
			snprintf(buf + n, len - n, " [0x%llx, 0x%llx)", (unsigned long long)f->start,
				 (unsigned long long)f->end);
		}
		break;
	case FLUSH_X86_KERNEL:
		snprintf(buf, len, "flush_tlb_kernel_range(0x%llx, 0x%llx) by cpu %d (%s) at step %llu",
			 (unsigned long long)f->start, (unsigned long long)f->end, f->cpu,
			 f->full ? "global flush" : "INVLPG", (unsigned long long)r->step);
		break;
	case FLUSH_NONE:
		snprintf(buf, len, "none: the freeing thread issued no flush");
	}
}

void oracle_violation(struct oracle *o, enum inv_id kind, int cpu, uint64_t va, bool has_va,
		      uint32_t frame, const char *entry, const char *fmt, ...)
{
	struct sim *s = o->s;
	s->m.violations++;
	/* I4a: the stale translation a CPU kept because a flush read values
	 * it had not yet made visible (the I1/I2 symptom is in the text) */
	enum inv_id symptom = kind;
	if ((kind == INV_I1 || kind == INV_I1_REALIZED || kind == INV_I2) && cpu >= 0 &&
	    cpu < s->nr_cpus && o->reordered && o->reordered[cpu])
		kind = INV_I4A;
	bool wanted = o->want_kind < 0 || o->want_kind == (int)kind ||
		      o->want_kind == (int)symptom;
	if (o->first.kind < 0 && wanted) {
		struct violation_rec *v = &o->first;
		v->kind = kind;
		v->cpu = cpu;
		v->tid = s->curr ? s->curr->id : -1;
		v->va = va;
		v->has_va = has_va;
		v->frame = frame;
		v->time = s->now;
		v->step = s->ex ? s->steps : 0;
		snprintf(v->entry, sizeof(v->entry), "%s", entry ? entry : "");
		struct oracle_thread *th = cur_th(o);
		if (th)
			describe_flush(&th->last_flush, v->flush, sizeof(v->flush));
		else
			snprintf(v->flush, sizeof(v->flush), "(freed outside a thread)");
		va_list ap;
		va_start(ap, fmt);
		int off = 0;
		if (kind != symptom)
			off = snprintf(v->text, sizeof(v->text), "I4a: cpu %d kept it because a "
				       "flush read its loaded_mm/is_lazy before its newer stores "
				       "were visible (store buffer); symptom %s: ", cpu,
				       inv_name(symptom));
		vsnprintf(v->text + off, sizeof(v->text) - (size_t)off, fmt, ap);
		va_end(ap);
	}
	sim_trace(s, &tp_violation, violation_arg(kind, cpu, frame), has_va ? va : UINT64_MAX);
	if (wanted)
		sim_stop_schedule(s);
}

/* ---- reachability ---- */

/* arm64: the live mm holding ASID asid in the current generation (several
 * mms may carry the same number from older generations; at most one holds
 * it now). */
static struct mm_struct *mm_by_asid(struct oracle *o, uint32_t asid)
{
	struct kernel *k = kernel_of(o->s);
	uint64_t gen = k->mach.asid.generation;
	for (int i = 0; i < k->nr_mms; i++) {
		struct mm_struct *mm = k->mms[i];
		if (mm->context.asid == asid && mm->context.asid_gen == gen && mm->users)
			return mm;
	}
	return NULL;
}

/* x86: the live mm with this ctx_id (never reused, so at most one). */
static struct mm_struct *mm_by_ctx(struct oracle *o, uint64_t ctx_id)
{
	struct kernel *k = kernel_of(o->s);
	for (int i = 0; i < k->nr_mms; i++)
		if (k->mms[i]->context.ctx_id == ctx_id && k->mms[i]->users)
			return k->mms[i];
	return NULL;
}

/* x86: the live mm that owns this global ASID (at most one). */
static struct mm_struct *mm_by_global_asid(struct oracle *o, int asid)
{
	struct kernel *k = kernel_of(o->s);
	for (int i = 0; i < k->nr_mms; i++)
		if (k->mms[i]->context.global_asid == asid && k->mms[i]->users)
			return k->mms[i];
	return NULL;
}

/* Is the entry e on cpu a reachable translation of the live mm? O(1): the I2
 * scan asks it for every cached entry in the range. */
static bool entry_of_mm(struct sim *s, int cpu, const struct tc_entry *e, bool walk,
			const struct mm_struct *mm)
{
	const struct arch_cpu *ac = arch_cpu(s, cpu);
	if (!mm->users)
		return false;
	if (!machine_is_x86(s)) {
		/* a CPU that owes a rollover flush invalidates everything before
		 * it next switches; until then it can only use its TTBR0 ASID */
		if (ac->flush_pending)
			return e->tag == ac->ttbr0_asid && ac->ttbr0_mm == &mm->context;
		return e->tag == mm->context.asid &&
		       mm->context.asid_gen == machine_of(s)->asid.generation;
	}
	int slot = P(s, P_pcid) ? (int)e->tag - 1 : 0;
	/* a global ASID (x86_flush=invlpgb, v6.15): the same on every CPU and
	 * never flushed at switch_mm, so its entries are reachable wherever
	 * they are while the mm owns it */
	if (slot >= TLB_NR_DYN_ASIDS)
		return mm->context.global_asid == slot;
	if (slot < 0 || ac->ctxs[slot].ctx_id != mm->context.ctx_id)
		return false;
	bool loaded = ac->loaded_mm == &mm->context && ac->loaded_mm_asid == slot;
	if (loaded && (!ac->is_lazy || walk))
		return true;
	return ac->ctxs[slot].tlb_gen == mm->context.tlb_gen;
}

/* The live mm an entry on cpu belongs to if it is reachable, else NULL. */
static struct mm_struct *entry_reachable(struct oracle *o, int cpu, const struct tc_entry *e,
					 bool walk)
{
	struct sim *s = o->s;
	const struct arch_cpu *ac = arch_cpu(s, cpu);
	struct mm_struct *mm;
	if (!machine_is_x86(s)) {
		if (ac->flush_pending)
			mm = ac->ttbr0_mm ? container_of(ac->ttbr0_mm, struct mm_struct, context)
					  : NULL;
		else
			mm = mm_by_asid(o, e->tag);
	} else {
		int slot = P(s, P_pcid) ? (int)e->tag - 1 : 0;
		if (slot < 0)
			return NULL;
		mm = slot >= TLB_NR_DYN_ASIDS ? mm_by_global_asid(o, slot)
					       : mm_by_ctx(o, ac->ctxs[slot].ctx_id);
	}
	return mm && entry_of_mm(s, cpu, e, walk, mm) ? mm : NULL;
}

static uint64_t entry_va(const struct hw *hw, const struct tc_entry *e, bool walk)
{
	return e->key << (walk ? hw->geom.shift[e->depth] : hw->geom.page_shift);
}

static void describe_entry(const struct hw *hw, int cpu, const struct tc_entry *e, bool walk,
			   char *buf, size_t len)
{
	if (walk)
		snprintf(buf, len, "cpu %d walk-cache entry: level %d span 0x%llx.. tag %u -> "
			 "table frame %u (gen %u)", cpu, e->depth,
			 (unsigned long long)entry_va(hw, e, true), e->tag, e->frame, e->gen);
	else
		snprintf(buf, len, "cpu %d TLB leaf: va 0x%llx tag %u -> frame %u (gen %u)%s%s",
			 cpu, (unsigned long long)entry_va(hw, e, false), e->tag, e->frame, e->gen,
			 (e->perm & PTE_WRITE) ? " W" : "", (e->perm & PTE_DIRTY) ? " D" : "");
}

static bool cpu_may_reach_ctx(struct oracle *o, int cpu, const mm_context_t *ctx);

/* I1: a reachable entry holds frame f, which is being freed (or handed to RCU). */
static bool check_frame(struct oracle *o, uint32_t f, const char *when)
{
	struct sim *s = o->s;
	struct hw *hw = hw_of(s);
	const struct frame *fr = frame_of(hw, f);
	bool table = fr->state == FRAME_PGTABLE;
	/* a private anonymous page, or a page table, belongs to one mm: only
	 * CPUs that may hold that mm's entries need a scan; a dead mm's entries
	 * reach nothing. A shared hugetlb PMD table (and the PTE tables under
	 * it) belongs to every mm that mapped it: all CPUs are scanned. */
	const mm_context_t *ctx = NULL;
	if ((table && !(fr->pgflags & PG_PT_SHARED)) || (fr->pgflags & PG_ANON)) {
		const struct oracle_frame *of = oracle_frame(o, f);
		ctx = of->map_ctx;
		if (ctx && (ctx->ctx_id != of->map_ctx_id || !ctx->live))
			return false;
	}
	/* the entries holding f not seen yet (tlb_refs counts every one, of
	 * every cache): at 0 the rest of the machine holds none */
	uint32_t left = fr->tlb_refs;
	for (int c = 0; c < s->nr_cpus && left; c++) {
		struct hw_cpu *hc = &hw->cpu[c];
		if (ctx && !cpu_may_reach_ctx(o, c, ctx))
			continue;
		for (int which = 0; which < 2; which++) {
			struct tcache *tc = which ? &hc->wc : &hc->tlb;
			for (uint32_t i = 0; i < tc->ndense; i++) {
				const struct tc_entry *e = &tc->e[tc->dense[i]];
				if (e->frame != f)
					continue;
				left--;
				if (e->gen != fr->gen || !entry_reachable(o, c, e, which == 1))
					continue;
				char ent[160];
				describe_entry(hw, c, e, which == 1, ent, sizeof(ent));
				oracle_violation(o, INV_I1, c, entry_va(hw, e, which == 1), true, f, ent,
						 "I1 LATENT: %s frame %u %s while cpu %d can still reach "
						 "it through a cached %s entry",
						 !table ? "data"
						 : (fr->pgflags & PG_PT_SHARED) ? "shared (hugetlb) page-table"
										: "page-table", f, when, c,
						 which ? "walk-cache" : "TLB");
				return true;
			}
		}
	}
	return false;
}

/* spec_walks=1 (kernel-model 8.6): an x86 CPU whose CR3 still points at the
 * mm may have filled paging-structure-cache entries speculatively from any
 * table the mm had; unless its PSC was flushed after the table was unlinked,
 * freeing the table leaves it reachable. Only CPUs that load the table's mm:
 * another PCID's entries are not used before a switch back, which flushes
 * (the unmap bumped the mm's tlb_gen). */
static bool check_spec_walk(struct oracle *o, uint32_t f, const char *when)
{
	struct sim *s = o->s;
	const struct frame *fr = frame_of(hw_of(s), f);
	if (!machine_is_x86(s) || !P(s, P_spec_walks) || fr->state != FRAME_PGTABLE)
		return false;
	struct oracle_frame *of = oracle_frame(o, f);
	for (int c = 0; c < s->nr_cpus; c++) {
		const struct arch_cpu *ac = arch_cpu(s, c);
		if (!ac->loaded_mm || o->psc_epoch[c] >= of->unlink_epoch ||
		    (of->unlink_mm && ac->loaded_mm != of->unlink_mm))
			continue;
		char ent[160];
		snprintf(ent, sizeof(ent), "cpu %d%s: CR3 still loads the mm; its paging-structure "
			 "cache may hold a speculative entry to table frame %u", c,
			 ac->is_lazy ? " (lazy TLB)" : "", f);
		oracle_violation(o, INV_I1, c, 0, false, f, ent,
				 "I1 LATENT (speculative walk): page-table frame %u %s while cpu %d%s "
				 "had no paging-structure flush since the table was unlinked", f, when,
				 c, ac->is_lazy ? " (lazy TLB)" : "");
		return true;
	}
	return false;
}

/* ---- hardware hooks ---- */
static void on_frame_free(void *ctx, uint32_t f)
{
	struct oracle *o = ctx;
	const struct frame *fr = frame_of(hw_of(o->s), f);
	if (!fr->tlb_refs && !(fr->state == FRAME_PGTABLE && P(o->s, P_spec_walks)))
		return;		/* O(1): nothing can reach it */
	if (fr->state == FRAME_DATA && oracle_frame(o, f)->kernel_gen == fr->gen + 1)
		return;		/* a kernel page: global entries are W1/W2, counted */
	if (check_spec_walk(o, f, "freed"))
		return;
	if ((fr->watch & WATCH_RCU) || !fr->tlb_refs)
		return;		/* checked when handed to RCU / nothing cached */
	check_frame(o, f, "freed");
}

/* a kernel (vmalloc or KASAN shadow) address: init_mm's upper half */
static inline bool kernel_va(uint64_t va)
{
	return va >> 63;
}

static void on_stale_use(void *ctx, int cpu, const char *what, uint64_t va, uint32_t frame)
{
	char ent[160];
	snprintf(ent, sizeof(ent), "cpu %d %s -> frame %u", cpu, what, frame);
	if (kernel_va(va)) {
		oracle_violation(ctx, INV_I5, cpu, va, true, frame, ent,
				 "I5 REALIZED: cpu %d used a stale %s for kernel va 0x%llx: its "
				 "frame %u was freed or reused (a KASAN false positive or a read of "
				 "another area's data)", cpu, what, (unsigned long long)va, frame);
		return;
	}
	oracle_violation(ctx, INV_I1_REALIZED, cpu, va, true, frame, ent,
			 "I1 REALIZED: cpu %d used a %s for va 0x%llx whose frame %u was freed or "
			 "reused", cpu, what, (unsigned long long)va, frame);
}

static void on_watched_walk(void *ctx, int cpu, int depth, uint64_t va, uint32_t frame)
{
	struct oracle *o = ctx;
	if (!(frame_of(hw_of(o->s), frame)->watch & WATCH_RCU))
		return;
	char ent[160];
	snprintf(ent, sizeof(ent), "cpu %d walk-cache entry: level %d -> table frame %u "
		 "(unlinked, waiting for RCU)", cpu, depth, frame);
	oracle_violation(o, INV_STALE_WALK, cpu, va, true, frame, ent,
			 "stale walk: cpu %d walked va 0x%llx through table frame %u after the "
			 "table was unlinked and its flush completed", cpu, (unsigned long long)va,
			 frame);
}

/* I3 of KSM: a write through a stale writable entry into a page KSM
 * compared, and merged */
static void ksm_lost_write(struct oracle *o, int cpu, uint64_t va, uint32_t f)
{
	char ent[160];
	snprintf(ent, sizeof(ent), "cpu %d TLB leaf: va 0x%llx -> frame %u, cached writable+dirty",
		 cpu, (unsigned long long)va, f);
	oracle_violation(o, INV_I3, cpu, va, true, f, ent,
			 "I3: cpu %d wrote va 0x%llx (frame %u) through a stale writable TLB entry "
			 "after KSM write-protected the page and compared it (pages_identical), "
			 "and KSM merged it: the write is not in the merged page - lost with the "
			 "replaced page, or seen through the other mapping of the KSM page", cpu,
			 (unsigned long long)va, f);
}

/* I3: a write through a cached writable+dirty entry does not reach the PTE;
 * if the kernel has meanwhile made the PTE clean (MADV_FREE, or writeback's
 * page_mkclean) the data is lost: reclaim discards the "clean" page, or
 * writeback has already written the old contents. */
/* I3 for cpu's write to va through a stale cached writable+dirty leaf of
 * frame: the entry description gets note appended, the violation text is
 * "I3: cpu C wrote va V through a stale " + why */
static void stale_write(struct oracle *o, int cpu, uint64_t va, uint32_t frame, const char *note,
			const char *why)
{
	char ent[160];
	snprintf(ent, sizeof(ent), "cpu %d TLB leaf: va 0x%llx -> frame %u, cached writable+dirty%s",
		 cpu, (unsigned long long)va, frame, note);
	oracle_violation(o, INV_I3, cpu, va, true, frame, ent,
			 "I3: cpu %d wrote va 0x%llx through a stale %s", cpu,
			 (unsigned long long)va, why);
}

static void on_watched_write(void *ctx, int cpu, uint64_t va, const struct tc_entry *te)
{
	struct oracle *o = ctx;
	struct sim *s = o->s;
	struct hw *hw = hw_of(s);
	uint8_t watch = frame_of(hw, te->frame)->watch;
	if (!(watch & (WATCH_CLEAN | WATCH_SOFTDIRTY | WATCH_KSM | WATCH_COPIED)))
		return;
	struct sim_thread *t = s->cpus[cpu].curr;
	if (!t)
		return;
	pte_t *ptep = pte_lookup(s, task_of(t)->mm, va);
	pte_t pte = ptep ? *ptep : 0;
	if ((watch & WATCH_COPIED) &&
	    !(pte_present(pte) && pte_pfn(pte) == te->frame && (pte & PTE_WRITE))) {
		/* the I3 point of migration and COW: the page was copied and
		 * the copy replaces it here (the PTE is a migration entry, the
		 * read-only old PTE, or already the copy's); this write comes
		 * through an entry that kept a write permission no PTE grants
		 * and is not in the copy */
		char why[240];
		static const char *const by[] = {
			[COPY_BY_MIGRATION] = "migration (migrate_page_copy)",
			[COPY_BY_COW] = "a COW fault (wp_page_copy)",
			[COPY_BY_DEVICE] = "a device migration (the driver's copy, migrate_vma)",
		};
		snprintf(why, sizeof(why), "writable TLB entry into frame %u after %s copied the "
			 "page to frame %u: the write is not in the copy that replaces it and is "
			 "lost", te->frame, by[oracle_frame(o, te->frame)->copy_by],
			 oracle_frame(o, te->frame)->copy_to);
		stale_write(o, cpu, va, te->frame, ", page copied", why);
		return;
	}
	if ((watch & WATCH_KSM) &&
	    !(pte_present(pte) && pte_pfn(pte) == te->frame && (pte & PTE_WRITE))) {
		/* the I3 point of KSM: the page was compared after
		 * write_protect_page(); this write comes through an entry that
		 * kept write permission the PTE no longer grants. It is lost
		 * once the merge is done (now, or when replace_page commits) */
		struct oracle_frame *of = oracle_frame(o, te->frame);
		if (of->ksm_merged) {
			ksm_lost_write(o, cpu, va, te->frame);
			return;
		}
		of->ksm_stale = true;
		o->ksm_stale_cpu = cpu;
		o->ksm_stale_va = va;
		o->ksm_stale_frame = te->frame;
		return;
	}
	if ((watch & WATCH_SOFTDIRTY) && pte_present(pte) && pte_pfn(pte) == te->frame &&
	    !(pte & PTE_SOFT_DIRTY)) {
		/* the I3 point of soft-dirty tracking: the write completed
		 * without the fault that would set the bit, so every pagemap
		 * read from now on reports the page clean */
		stale_write(o, cpu, va, te->frame, "",
			    "writable TLB entry after clear_refs cleared its soft-dirty bit and "
			    "write-protected the PTE: the write sets no soft-dirty bit and is lost "
			    "to soft-dirty tracking");
		return;
	}
	if (!(watch & WATCH_CLEAN))
		return;
	bool same = pte_present(pte) && pte_pfn(pte) == te->frame;
	if (!same && oracle_frame(o, te->frame)->discard_gen == frame_of(hw, te->frame)->gen + 1) {
		/* the lazyfree page a completed MADV_FREE judged clean was
		 * discarded by reclaim (PTE cleared, flush pending): the write
		 * lands in a page about to be freed */
		char why[200];
		snprintf(why, sizeof(why), "dirty TLB entry into frame %u, a lazyfree page reclaim "
			 "discarded as clean: the write is lost", te->frame);
		stale_write(o, cpu, va, te->frame, "", why);
		return;
	}
	const struct frame *fr = frame_of(hw, te->frame);
	if (!same && fr->state == FRAME_DATA && !(fr->pgflags & PG_ANON) && fr->refcount) {
		/* a page-cache page written back clean while a zap had taken
		 * its PTE and not yet flushed: the write lands in a page the
		 * kernel holds clean (5df397dec7c4's race) */
		stale_write(o, cpu, va, te->frame, ", PTE zapped or moved",
			    "dirty TLB entry after its PTE was zapped (or moved by mremap) and "
			    "writeback cleaned the page: the write is lost (the page is clean in "
			    "the page cache)");
		return;
	}
	if (!same || !fmt_pte_clean(hw->fmt, pte))
		return;
	stale_write(o, cpu, va, te->frame, "",
		    "dirty TLB entry after the kernel made the PTE clean (MADV_FREE or "
		    "writeback): the write is invisible to reclaim and writeback");
}

/* a PTE became dirty: the page is no longer a clean lazyfree page */
static void page_dirtied(struct oracle *o, uint32_t f)
{
	/* and, made writable again by a fault, no longer what KSM compared */
	frame_of(hw_of(o->s), f)->watch &= (uint8_t)~(WATCH_CLEAN | WATCH_KSM);
	struct oracle_frame *of = oracle_frame(o, f);
	of->dirty_epoch = ++o->map_epoch;
}

static void on_pte_dirtied(void *ctx, uint32_t f)
{
	page_dirtied(ctx, f);
}

static const struct hw_hooks oracle_hw_hooks = {
	.frame_free = on_frame_free,
	.stale_use = on_stale_use,
	.watched_walk = on_watched_walk,
	.watched_write = on_watched_write,
	.pte_dirtied = on_pte_dirtied,
};

/* ---- arch hooks ---- */
static void on_tlb_flush(void *ctx, const struct flush_note *n)
{
	struct oracle *o = ctx;
	struct oracle_thread *th = cur_th(o);
	if (!th)
		return;
	th->last_flush.n = *n;
	th->last_flush.nested = current_task(o->s)->in_nested_finish;	/* th: s->curr is set */
	th->last_flush.step = o->s->ex ? o->s->steps : 0;
}

static void on_ipi_sent(void *ctx, int n, bool freed_tables)
{
	(void)freed_tables;
	struct oracle_thread *th = cur_th(ctx);
	if (th)
		th->last_flush.n.ntargets = n;
}

static void on_psc_flush(void *ctx, int cpu)
{
	struct oracle *o = ctx;
	o->psc_epoch[cpu] = o->unlink_epoch;
	o->reordered[cpu] = false;
}

static void on_reorder_skip(void *ctx, int cpu)
{
	struct oracle *o = ctx;
	o->reordered[cpu] = true;
}

static void on_litmus_outcome(void *ctx, int cpu, const char *text)
{
	oracle_violation(ctx, INV_LITMUS, cpu, 0, false, 0, NULL, "%s", text);
}

static void on_kernel_flush_done(void *ctx, uint64_t start, uint64_t end, bool all);

static const struct arch_hooks oracle_arch_hooks = {
	.tlb_flush = on_tlb_flush,
	.ipi_sent = on_ipi_sent,
	.psc_flush = on_psc_flush,
	.kernel_flush_done = on_kernel_flush_done,
	.reorder_skip = on_reorder_skip,
	.litmus_outcome = on_litmus_outcome,
};

/* ---- mm hooks ---- */
static uint64_t on_syscall_enter(void *ctx, enum mm_syscall call)
{
	(void)call;
	struct oracle *o = ctx;
	return ++o->map_epoch;
}

/* Would the MMU complete a write through the cached leaf e without a walk?
 * x86: RW set (an entry without D re-walks, but the kernel may not rely on
 * that); arm64: AP[2] clear, or DBM with hardware dirty-state updates. */
static bool entry_writable(const struct hw *hw, const struct tc_entry *e)
{
	if (!hw->fmt->rdonly)
		return e->perm & PTE_WRITE;
	return !(e->perm & PTE_RDONLY) || (hw->afdbm && (e->perm & PTE_WRITE));
}

/* I2: when munmap/madvise(DONTNEED) of [start,end) returns, no CPU may still
 * reach an old translation for the range: one to a frame that was mapped
 * when the call began (map_epoch <= call_epoch) and that the live page tables
 * no longer map there. When mprotect returns, no CPU may hold a writable
 * entry for a page whose PTE is now read-only. */
static __attribute__((noinline)) void range_unmapped_scan(struct oracle *o, struct mm_struct *mm,
							   uint64_t start, uint64_t end,
							   enum mm_syscall call,
							   uint64_t call_epoch);
static void on_range_unmapped(void *ctx, struct mm_struct *mm, uint64_t start, uint64_t end,
			      enum mm_syscall call, uint64_t call_epoch)
{
	struct oracle *o = ctx;
	struct sim *s = o->s;
	const struct hw *hw = hw_of(s);
	int shift = hw->geom.page_shift;
	if (start >= end)
		return;
	/* the scan visits only the CPUs whose TLB may hold a page of the
	 * range: with none there is nothing to check (the common case) */
	const uint64_t kfirst = start >> shift, klast = (end - 1) >> shift;
	const int nwords = (s->nr_cpus + 63) / 64;
	for (int wi = 0; wi < nwords; wi++)
		if (hw_tlb_range_cpus_word(hw, kfirst, klast, (uint32_t)wi)) {
			range_unmapped_scan(o, mm, start, end, call, call_epoch);
			return;
		}
}
static void range_unmapped_scan(struct oracle *o, struct mm_struct *mm, uint64_t start,
				uint64_t end, enum mm_syscall call, uint64_t call_epoch)
{
	struct sim *s = o->s;
	struct hw *hw = hw_of(s);
	int shift = hw->geom.page_shift;
	const uint64_t kfirst = start >> shift, kspan = ((end - 1) >> shift) - kfirst;
	const struct hw_cpu *hc = hw->cpu;
	const int nwords = (s->nr_cpus + 63) / 64;
	for (int wi = 0; wi < nwords; wi++)
	for (uint64_t busy = hw_tlb_range_cpus_word(hw, kfirst, kfirst + kspan, (uint32_t)wi); busy;
	     busy &= busy - 1) {
		/* only CPUs whose TLB may hold a page of the range (nothing
		 * changes them here) */
		int c = wi * 64 + __builtin_ctzll(busy);
		const struct tcache *tc = &hc[c].tlb;
		for (uint32_t i = 0; (i = tc_find_key_range(tc, i, kfirst, kspan)) < tc->ndense; i++) {
			const struct tc_entry *e = &tc->e[tc->dense[i]];
			uint64_t va = e->key << shift;
			if (!entry_of_mm(s, c, e, false, mm))
				continue;
			/* only translations that existed when the call began are
			 * its business; a page mapped later belongs to a later zap */
			if (oracle_frame(o, e->frame)->map_epoch > call_epoch)
				continue;
			pte_t *ptep = pte_lookup(s, mm, va);
			if (!ptep && hw->nblock) {
				/* a huge PMD entry (THP) is the live leaf of
				 * its whole block */
				pte_t *pmdp = hw_pmd_lookup(hw, mm->pgd, va);
				if (pmdp && pmd_trans_huge_entry(*pmdp))
					ptep = pmdp;
			}
			pte_t pte = ptep ? *ptep : 0;
			if (call == SYS_MPROTECT || call == SYS_CLEAR_REFS || call == SYS_FORK ||
			    call == SYS_NUMA_SCAN || call == SYS_UFFD_WP) {
				/* mprotect, a soft-dirty clear_refs, fork's COW
				 * write-protection: the entry still grants a write the
				 * PTE of the same page no longer allows - or, where the
				 * PTE is gone (reclaim cleared it, its flush still
				 * pending), a write the VMA no longer allows */
				/* a PROT_NONE PTE (the NUMA scan) maps the page
				 * and grants nothing, whatever write bit it saved */
				bool same = (pte_present(pte) || (pte & PTE_PROTNONE)) &&
					    pte_pfn(pte) == e->frame;
				struct vm_area_struct *vma = same ? NULL : find_vma(mm, va);
				bool ro_vma = vma && vma->vm_start <= va && !(vma->vm_flags & VM_WRITE);
				if (!entry_writable(hw, e) ||
				    (same && pte_present(pte) && (pte & PTE_WRITE)) ||
				    (!same && !ro_vma) || oracle_frame(o, e->frame)->ksm_clearing)
					continue;
				char desc[160];
				describe_entry(hw, c, e, false, desc, sizeof(desc));
				oracle_violation(o, INV_I2, c, va, true, e->frame, desc,
						 "I2: %s of [0x%llx, 0x%llx) returned while cpu %d "
						 "can still write 0x%llx through a cached writable entry; "
						 "%s", mm_syscall_name(call), (unsigned long long)start,
						 (unsigned long long)end, c, (unsigned long long)va,
						 same ? "the PTE is read-only"
						      : "the PTE is gone (its flush still pending) and "
							"the VMA is read-only");
				return;
			}
			if (pte_present(pte) && pte_pfn(pte) == e->frame)
				continue;
			char desc[160];
			describe_entry(hw, c, e, false, desc, sizeof(desc));
			oracle_violation(o, INV_I2, c, va, true, e->frame, desc,
					 "I2: %s of [0x%llx, 0x%llx) returned while cpu %d still "
					 "translates 0x%llx to its old frame %u", mm_syscall_name(call),
					 (unsigned long long)start, (unsigned long long)end, c,
					 (unsigned long long)va, e->frame);
			return;
		}
	}
}

static void on_page_mapped(void *ctx, uint32_t f, bool dirty)
{
	struct oracle *o = ctx;
	struct oracle_frame *of = oracle_frame(o, f);
	of->map_epoch = ++o->map_epoch;
	if (dirty)
		of->dirty_epoch = of->map_epoch;
	struct task *t = current_task(o->s);
	of->map_ctx = t && t->mm ? &t->mm->context : NULL;
	of->map_ctx_id = of->map_ctx ? of->map_ctx->ctx_id : 0;
}

/* For a private anonymous page: whether cpu can hold a reachable entry of
 * the mm that mapped it at all (a filter for check_frame; false only when
 * the rules of entry_reachable could not find one) */
static bool cpu_may_reach_ctx(struct oracle *o, int cpu, const mm_context_t *ctx)
{
	struct sim *s = o->s;
	const struct arch_cpu *ac = arch_cpu(s, cpu);
	if (machine_is_x86(s)) {
		if (ctx->global_asid)
			return true;	/* its global ASID may be cached anywhere */
		for (int k = 0; k < TLB_NR_DYN_ASIDS; k++)
			if (ac->ctxs[k].ctx_id == ctx->ctx_id)
				return true;
		return false;
	}
	if (machine_of(s)->asid.generation > 1)
		return true;		/* after a rollover: no shortcut */
	const struct hw_cpu *hc = &hw_of(s)->cpu[cpu];
	uint32_t b = ctx->asid & (TC_TAGCNT - 1);
	return ctx->asid && (hc->tlb.tagcnt[b] || hc->wc.tagcnt[b]);
}

/* fork shared an anonymous page between two mms: it no longer belongs to
 * the one that mapped it, so a free of it scans every CPU (check_frame) */
static void on_page_dup(void *ctx, uint32_t f)
{
	struct oracle *o = ctx;
	struct oracle_frame *of = oracle_frame(o, f);
	of->map_ctx = NULL;
	of->map_ctx_id = 0;
}

static void on_page_dirtied(void *ctx, uint32_t f)
{
	page_dirtied(ctx, f);
}

static void on_table_unlinked(void *ctx, uint32_t table)
{
	struct oracle *o = ctx;
	struct oracle_frame *of = oracle_frame(o, table);
	struct task *tk = current_task(o->s);	/* free_pgtables runs in the mm's task */
	of->unlink_epoch = ++o->unlink_epoch;
	of->unlink_mm = tk && tk->mm ? &tk->mm->context : NULL;
	of->map_ctx = of->unlink_mm;
	of->map_ctx_id = of->unlink_mm ? of->unlink_mm->ctx_id : 0;
}

static void on_tables_to_rcu(void *ctx, const uint32_t *tables, uint32_t n)
{
	struct oracle *o = ctx;
	struct hw *hw = hw_of(o->s);
	for (uint32_t i = 0; i < n; i++) {
		struct frame *fr = frame_of(hw, tables[i]);
		fr->watch |= WATCH_RCU;
		if (fr->tlb_refs && check_frame(o, tables[i], "handed to RCU"))
			return;
	}
}

static uint64_t on_lazyfree_seen(void *ctx, uint32_t f)
{
	(void)f;
	struct oracle *o = ctx;
	return ++o->map_epoch;
}

/* MADV_FREE returned: a page it saw that is still mapped clean and was not
 * re-dirtied since it looked is judged clean (watched for I3) */
static void on_lazyfree_done(void *ctx, struct mm_struct *mm, const struct lazyfree_rec *r,
			     uint32_t n)
{
	struct oracle *o = ctx;
	struct sim *s = o->s;
	for (uint32_t i = 0; i < n; i++) {
		pte_t *ptep = pte_lookup(s, mm, r[i].va);
		struct frame *fr = frame_of(hw_of(s), r[i].frame);
		if (ptep && pte_present(*ptep) && pte_pfn(*ptep) == r[i].frame &&
		    !(*ptep & PTE_DIRTY) && oracle_frame(o, r[i].frame)->dirty_epoch < r[i].cookie)
			fr->watch |= WATCH_CLEAN;
	}
}

/* a soft-dirty clear_refs returned and the page at va is clean of
 * soft-dirty: a write through a cached writable entry from now on is lost
 * to the tracker (I3) */
static void on_soft_dirty_clean(void *ctx, uint64_t va, uint32_t f)
{
	(void)va;
	struct oracle *o = ctx;
	frame_of(hw_of(o->s), f)->watch |= WATCH_SOFTDIRTY;
}

/* KSM compared the page of frame f after write-protecting it: a write
 * through a stale writable entry from now on is lost to the merge (I3) */
static void on_ksm_compared(void *ctx, uint32_t f)
{
	struct oracle *o = ctx;
	struct oracle_frame *of = oracle_frame(o, f);
	of->ksm_stale = false;
	of->ksm_merged = false;
	frame_of(hw_of(o->s), f)->watch |= WATCH_KSM;
}

/* replace_page() merged the compared pages: a write that went into either
 * through a stale entry since the comparison is lost (I3) */
static void on_ksm_replaced(void *ctx, uint32_t page, uint32_t kpage)
{
	struct oracle *o = ctx;
	struct oracle_frame *op = oracle_frame(o, page), *ok = oracle_frame(o, kpage);
	op->ksm_merged = ok->ksm_merged = true;
	if ((op->ksm_stale || ok->ksm_stale) &&
	    (o->ksm_stale_frame == page || o->ksm_stale_frame == kpage))
		ksm_lost_write(o, o->ksm_stale_cpu, o->ksm_stale_va, o->ksm_stale_frame);
}

/* migration or a COW copied frame old to nf, which replaces it: a write into
 * old through a stale writable entry from now on is lost (I3) */
static void on_page_copied(void *ctx, uint32_t old, uint32_t nf, bool migration)
{
	struct oracle *o = ctx;
	struct sim *s = o->s;
	struct oracle_frame *of = oracle_frame(o, old);
	of->copy_to = nf;
	of->copy_by = migration ? COPY_BY_MIGRATION : COPY_BY_COW;
	frame_of(hw_of(s), old)->watch |= WATCH_COPIED;
}

static void on_ksm_clearing(void *ctx, uint32_t f, bool in)
{
	oracle_frame(ctx, f)->ksm_clearing = in;
}

/* writeback cleaned the page of frame f and write-protected its PTEs: a
 * write through a cached dirty entry from now on is lost (I3) */
static void on_page_cleaned(void *ctx, uint32_t f)
{
	struct oracle *o = ctx;
	frame_of(hw_of(o->s), f)->watch |= WATCH_CLEAN;
}

/* ---- I5: the set of cleared, not yet flushed kernel VAs ---- */
#define KCLR_DEL 1ull

static uint32_t kclr_slot(uint64_t va, uint32_t cap)
{
	return (uint32_t)(((va >> 12) * 0x9e3779b97f4a7c15ull) >> 32) & (cap - 1);
}

static bool kclr_find(const struct oracle *o, uint64_t va, uint32_t *at)
{
	if (!o->kclr_cap)
		return false;
	uint32_t j = kclr_slot(va, o->kclr_cap);
	for (uint32_t n = 0; n < o->kclr_cap && o->kclr[j]; n++, j = (j + 1) & (o->kclr_cap - 1))
		if (o->kclr[j] == va) {
			*at = j;
			return true;
		}
	return false;
}

static void kclr_del(struct oracle *o, uint64_t va)
{
	uint32_t j;
	if (kclr_find(o, va, &j)) {
		o->kclr[j] = KCLR_DEL;
		o->kclr_n--;
	}
}

static void kclr_add(struct oracle *o, uint64_t va)
{
	uint32_t j;
	if (kclr_find(o, va, &j))
		return;
	if ((o->kclr_used + 1) * 2 > o->kclr_cap) {	/* rehash (drops deletions) */
		uint32_t ncap = o->kclr_cap ? o->kclr_cap : 1024;
		while ((o->kclr_n + 1) * 2 > ncap / 2)
			ncap *= 2;
		uint64_t *nt = calloc(ncap, sizeof(*nt));
		if (!nt) {
			sim_oom(o->s, "the checker");
			return;
		}
		for (uint32_t i = 0; i < o->kclr_cap; i++) {
			uint64_t v = o->kclr[i];
			if (v <= KCLR_DEL)
				continue;
			uint32_t k = kclr_slot(v, ncap);
			while (nt[k])
				k = (k + 1) & (ncap - 1);
			nt[k] = v;
		}
		free(o->kclr);
		o->kclr = nt;
		o->kclr_cap = ncap;
		o->kclr_used = o->kclr_n;
	}
	j = kclr_slot(va, o->kclr_cap);
	while (o->kclr[j] > KCLR_DEL)
		j = (j + 1) & (o->kclr_cap - 1);
	if (!o->kclr[j])
		o->kclr_used++;
	o->kclr[j] = va;
	o->kclr_n++;
}

static void on_kernel_unmapped(void *ctx, uint64_t va)
{
	kclr_add(ctx, va);
}

static void on_kernel_flush_done(void *ctx, uint64_t start, uint64_t end, bool all)
{
	struct oracle *o = ctx;
	if (!o->kclr_n)
		return;
	uint64_t ps = hw_of(o->s)->geom.page_size;
	if (all) {
		memset(o->kclr, 0, o->kclr_cap * sizeof(*o->kclr));
		o->kclr_n = o->kclr_used = 0;
	} else if ((end - start) / ps < o->kclr_n) {
		for (uint64_t a = start; a < end; a += ps)
			kclr_del(o, a);
	} else {
		for (uint32_t i = 0; i < o->kclr_cap; i++)
			if (o->kclr[i] > KCLR_DEL && o->kclr[i] >= start && o->kclr[i] < end) {
				o->kclr[i] = KCLR_DEL;
				o->kclr_n--;
			}
	}
}

/* The first bit >= from set in both a and b (words words each), or -1. */
static inline int cpumask_next_and(const uint64_t *a, const uint64_t *b, uint32_t words, int from)
{
	for (uint32_t w = (uint32_t)from / 64; w < words; w++) {
		uint64_t bits = a[w] & b[w];
		if (w == (uint32_t)from / 64)
			bits &= ~0ull << (from % 64);
		if (bits)
			return (int)(w * 64 + (uint32_t)__builtin_ctzll(bits));
	}
	return -1;
}

/* I5: a kernel PTE for va is about to map frame f. The VA may be mapped
 * again only after a completed flush that covers its old translation (the
 * flush must precede the reuse); a CPU that still caches the old
 * translation is the evidence. Kernel translations are global, reachable
 * from every address space. */
static void on_kernel_mapped(void *ctx, uint64_t va, uint32_t f)
{
	struct oracle *o = ctx;
	struct sim *s = o->s;
	struct hw *hw = hw_of(s);
	uint64_t vpn = va >> hw->geom.page_shift;
	const struct frame *nf = frame_of(hw, f);
	oracle_frame(o, f)->kernel_gen = nf->gen + 1;
	uint32_t slot;
	bool unflushed = kclr_find(o, va, &slot);
	if (unflushed)
		kclr_del(o, va);
	/* the CPUs whose leaf TLB is not empty and whose filter may hold
	 * (vpn, global), ascending: the rows of hw.tlb_busy and hw.tlb_slotcpus
	 * (every CPU's filter has the same slots), not each CPU's cache */
	const uint32_t W = hw->cpu_words;
	const uint64_t *row = hw->tlb_slotcpus +
			      (size_t)tc_filt_slot(&hw->cpu[0].tlb, vpn, TC_TAG_GLOBAL) * W;
	for (int c = cpumask_next_and(hw->tlb_busy, row, W, 0); c >= 0;
	     c = cpumask_next_and(hw->tlb_busy, row, W, c + 1)) {
		const struct tcache *tc = &hw->cpu[c].tlb;
		const struct tc_entry *e = tc_peek(tc, vpn, hw->geom.levels - 1, TC_TAG_GLOBAL);
		if (!e || (e->frame == f && e->gen == nf->gen))
			continue;
		char ent[160];
		describe_entry(hw, c, e, false, ent, sizeof(ent));
		oracle_violation(o, INV_I5, c, va, true, e->frame, ent,
				 "I5 LATENT: kernel va 0x%llx mapped again (frame %u) while cpu %d still "
				 "caches its old translation to frame %u: %s", (unsigned long long)va,
				 f, c, e->frame,
				 unflushed ? "the flush covering the old mapping had not completed "
					     "when the VA was reused"
					   : "a completed flush covered the VA but did not remove "
					     "this CPU's entry (e.g. INVLPG leaving a Global entry)");
		return;
	}
	if (unflushed)
		oracle_violation(o, INV_I5, s->curr ? s->curr->cpu : 0, va, true, f, "no CPU holds it now; any CPU may have "
				 "cached it (speculatively) since the PTE was cleared",
				 "I5 LATENT: kernel va 0x%llx mapped again (frame %u) before a completed "
				 "flush covered its old translation", (unsigned long long)va, f);
}

/* W1/W2: count a kernel page freed while some CPU still caches it */
static void on_kernel_page_freed(void *ctx, uint32_t f, bool shadow)
{
	struct oracle *o = ctx;
	if (!frame_of(hw_of(o->s), f)->tlb_refs)
		return;
	if (shadow)
		o->w2_windows++;
	else
		o->w1_windows++;
}

/* The livelock detector (kernel-model 9.3, I6): the same CPU faulting on the
 * same VA with an unchanged PTE livelock_faults times in a row. */
static void on_user_fault(void *ctx, int cpu, uint64_t va, pte_t pte)
{
	struct oracle *o = ctx;
	struct sim *s = o->s;
	struct oracle_thread *t = cur_th(o);
	if (!t)
		return;
	uint64_t page = va & ~(hw_of(s)->geom.page_size - 1);
	if (t->last_fault_va == page && t->last_fault_pte == pte && pte != 0) {
		if (++t->same_faults < (uint32_t)P(s, P_livelock_faults))
			return;
		t->same_faults = 0;
	} else {
		t->last_fault_va = page;
		t->last_fault_pte = pte;
		t->same_faults = 1;
		return;
	}
	char ent[160];
	snprintf(ent, sizeof(ent), "cpu %d: a cached entry the fault handler cannot repair "
		 "(spurious-fault flush is leaf-only)", cpu);
	oracle_violation(o, INV_LIVELOCK, cpu, va, true, pte_pfn(pte), ent,
			 "livelock: cpu %d faulted on va 0x%llx %u times with the PTE (0x%llx) "
			 "unchanged", cpu, (unsigned long long)va, (unsigned)P(s, P_livelock_faults),
			 (unsigned long long)pte);
	/* Recovery as on real hardware, eventually: something (migration, an
	 * ASID flush) invalidates this CPU. */
	struct inv_op all = {.kind = INV_ALL};
	hw_invalidate_cpu(hw_of(s), cpu, &all);
}

/* reclaim cleared the clean PTE of lazyfree frame f to discard it (the I3
 * point of the lazyfree discard, docs/checker.md) */
static void on_lazyfree_discard(void *ctx, struct mm_struct *mm, uint64_t va, uint32_t f)
{
	(void)mm, (void)va;
	struct oracle *o = ctx;
	oracle_frame(o, f)->discard_gen = frame_of(hw_of(o->s), f)->gen + 1;
}

/* device migration (migrate_device.c): the PTE migrate_vma_collect_pmd
 * replaced with a migration entry was dirty or not */
static void on_migrate_unmapped(void *ctx, uint32_t f, pte_t old)
{
	struct oracle *o = ctx;
	oracle_frame(o, f)->mig_pte_dirty = !fmt_pte_clean(hw_of(o->s)->fmt, old);
}

/* The I3 point of device migration: the driver copies src to dst. From now
 * on a write into src through an entry no PTE grants is lost (WATCH_COPIED,
 * as for the copies of NUMA migration and COW: on_watched_write). And the copy carries src's
 * dirty state: a lazyfree page (MADV_FREE, reclaim discards it when clean)
 * whose PTE was dirty when the collect cleared it, and that is not marked
 * dirty now, is migrated as clean - the data written since MADV_FREE is
 * left to be discarded. */
static void on_migrate_copied(void *ctx, uint64_t va, uint32_t src, uint32_t dst)
{
	struct oracle *o = ctx;
	struct sim *s = o->s;
	struct frame *fr = frame_of(hw_of(s), src);
	struct oracle_frame *of = oracle_frame(o, src);
	bool lost = of->mig_pte_dirty && (fr->pgflags & PG_LAZYFREE) && !(fr->pgflags & PG_DIRTY);
	of->mig_pte_dirty = false;
	of->copy_to = dst;
	of->copy_by = COPY_BY_DEVICE;
	fr->watch |= WATCH_COPIED;
	if (!lost)
		return;
	char ent[160];
	snprintf(ent, sizeof(ent), "frame %u: lazyfree page, PTE dirty when migration cleared it, "
		 "page not dirty", src);
	oracle_violation(o, INV_I3, s->curr ? s->curr->cpu : -1, va, true, src, ent,
			 "I3: a device migration copied frame %u (va 0x%llx) to frame %u as clean: "
			 "the dirty bit of the PTE it replaced with a migration entry was not "
			 "carried to the page, so the new page is a clean lazyfree page and reclaim "
			 "discards the data written since MADV_FREE", src, (unsigned long long)va,
			 dst);
}

/* I1 of a software walker: a GUP-fast walk (IRQs off, no lock) read a
 * page-table frame after it was freed - nothing held the free back for it
 * (an IPI it would have delayed, an RCU grace period) */
static void on_gup_fast_freed(void *ctx, int cpu, uint64_t va, uint32_t table, int depth)
{
	struct oracle *o = ctx;
	bool first = o->first.kind < 0;
	char ent[160];
	snprintf(ent, sizeof(ent), "cpu %d GUP-fast walk (IRQs off): level %d table frame %u", cpu,
		 depth, table);
	oracle_violation(ctx, INV_I1, cpu, va, true, table, ent,
			 "I1 (software walker): cpu %d's GUP-fast walk of va 0x%llx read level-%d "
			 "page-table frame %u after it was freed: the table was freed with no IPI "
			 "or RCU grace period that the walk's IRQs-off section holds back", cpu,
			 (unsigned long long)va, depth, table);
	/* the flush of the walking thread says nothing: name what was missing */
	if (first && o->first.kind == INV_I1 && o->first.frame == table)
		snprintf(o->first.flush, sizeof(o->first.flush), "no IPI reached cpu %d between the "
			 "table's unlink and its free (tlb_remove_table_sync_one, an x86 flush "
			 "IPI), and no RCU grace period was waited for", cpu);
}

static const struct mm_hooks oracle_mm_hooks = {
	.syscall_enter = on_syscall_enter,
	.range_unmapped = on_range_unmapped,
	.page_mapped = on_page_mapped,
	.page_dirtied = on_page_dirtied,
	.table_unlinked = on_table_unlinked,
	.tables_to_rcu = on_tables_to_rcu,
	.lazyfree_seen = on_lazyfree_seen,
	.lazyfree_done = on_lazyfree_done,
	.user_fault = on_user_fault,
	.page_cleaned = on_page_cleaned,
	.soft_dirty_clean = on_soft_dirty_clean,
	.ksm_compared = on_ksm_compared,
	.ksm_replaced = on_ksm_replaced,
	.ksm_clearing = on_ksm_clearing,
	.kernel_mapped = on_kernel_mapped,
	.kernel_unmapped = on_kernel_unmapped,
	.kernel_page_freed = on_kernel_page_freed,
	.page_dup = on_page_dup,
	.lazyfree_discard = on_lazyfree_discard,
	.page_copied = on_page_copied,
	.migrate_unmapped = on_migrate_unmapped,
	.migrate_copied = on_migrate_copied,
	.gup_fast_freed = on_gup_fast_freed,
};

int oracle_attach(struct oracle *o, struct kernel *k, int want_kind)
{
	memset(o, 0, sizeof(*o));
	o->s = &k->mach.sim;
	o->want_kind = want_kind;
	o->first.kind = -1;
	o->psc_epoch = calloc((size_t)o->s->nr_cpus, sizeof(*o->psc_epoch));
	o->reordered = calloc((size_t)o->s->nr_cpus, sizeof(*o->reordered));
	if (!o->psc_epoch || !o->reordered)
		return TLBSIM_ENOMEM;
	k->mach.hw.hooks = &oracle_hw_hooks;
	k->mach.hw.hooks_ctx = o;
	k->mach.hooks = &oracle_arch_hooks;
	k->mach.hooks_ctx = o;
	k->hooks = &oracle_mm_hooks;
	k->hooks_ctx = o;
	return 0;
}

void oracle_free(struct oracle *o)
{
	for (size_t i = 0; i < o->nfchunks; i++)
		free(o->fchunks[i]);
	free(o->fchunks);
	free(o->psc_epoch);
	free(o->reordered);
	free(o->th);
	free(o->kclr);
	memset(o, 0, sizeof(*o));
}
