/*
 * kernel.c - the simulated kernel on its machine: construction and teardown,
 * tasks, the lifetime of mm_structs, kernel-object ownership, and what a
 * context switch does (the scheduler's switch_mm / enter_lazy_tlb calls).
 */
#include <stdlib.h>
#include <string.h>

#include "mm/mm.h"
#include "sim/grow.h"

/* The CPU's active_mm becomes mm (after switch_mm): the CPU's reference
 * moves from the old one, which may be the last (context_switch() with
 * mmgrab_lazy_tlb / mmdrop_lazy_tlb in finish_task_switch, kernel/sched/core.c,
 * v6.10, MMU_LAZY_TLB_REFCOUNT). */
static void set_active_mm(struct sim *s, int cpu, struct mm_struct *mm)
{
	struct kernel *k = kernel_of(s);
	struct mm_struct *old = k->active_mm[cpu];
	if (old == mm)
		return;
	mm->count++;
	k->active_mm[cpu] = mm;
	if (old)
		mmdrop(s, old);
}

/* context_switch() -> switch_mm_irqs_off() / enter_lazy_tlb() (kernel/sched/
 * core.c): a user task brings its mm; an idle CPU keeps the last one (lazy) */
static __attribute__((noinline)) void kernel_switch_mm(struct sim *s, int cpu,
							struct mm_struct *mm)
{
	arch_switch_mm(s, cpu, &mm->context);
	set_active_mm(s, cpu, mm);
}
static void kernel_switch_to(struct sim *s, int cpu, struct sim_thread *next)
{
	/* idle (next NULL) or a kernel thread, which borrows the previous mm;
	 * the mm switch is out of line, so this common case saves no registers */
	struct mm_struct *mm = next ? task_of(next)->mm : NULL;
	if (!mm) {
		arch_enter_lazy_tlb(s, cpu);
		return;
	}
	kernel_switch_mm(s, cpu, mm);
}

/* activate_mm() (exec_mmap, fs/exec.c): the current CPU switches to mm */
void activate_mm(struct sim *s, struct mm_struct *mm)
{
	int cpu = cur_cpu(s);
	machine_of(s)->arch->switch_mm(s, cpu, &mm->context);
	tso_before_run(s, cpu);		/* the thread goes on at once */
	set_active_mm(s, cpu, mm);
}

static const struct sim_cpu_ops kernel_cpu_ops = {
	.switch_to = kernel_switch_to,
	.before_resume = tso_before_run,
};

int kernel_init(struct kernel *k, const struct tlbsim_profile *prof, int nr_cpus,
		const int64_t *params, const struct tlbsim_policy *pol, uint64_t seed,
		struct sim_stack_pool *pool)
{
	memset(k, 0, sizeof(*k));
	int rc = machine_init(&k->mach, prof, nr_cpus, params, pol, seed, pool);
	k->mach.sim.cpu_ops = &kernel_cpu_ops;
	k->zero_frame = NO_FRAME;
	for (int i = 0; i < GUP_PINS; i++)
		k->pins[i] = NO_FRAME;
	k->init_pgd = NO_FRAME;
	if (rc)
		return rc;
	/* the vmalloc range and the generic KASAN shadow offset: x86-64 4-level
	 * paging (Documentation/arch/x86/x86_64/mm.rst: vmalloc 32 TiB at
	 * 0xffffc90000000000; KASAN_SHADOW_OFFSET 0xdffffc0000000000); arm64
	 * 48-bit VA (vmalloc after the 128 MiB module region; the Kconfig
	 * default KASAN_SHADOW_OFFSET 0xdfff800000000000) */
	if (prof->arch == ARCH_X86_64)
		k->kva = (struct kva_layout){0xffffc90000000000ull, 0xffffe90000000000ull,
					     0xdffffc0000000000ull};
	else
		k->kva = (struct kva_layout){0xffff800010000000ull, 0xfffffbfff0000000ull,
					     0xdfff800000000000ull};
	k->bdp_ratelimits = calloc((size_t)nr_cpus, sizeof(*k->bdp_ratelimits));
	k->dirty_throttle_leaks = calloc((size_t)nr_cpus, sizeof(*k->dirty_throttle_leaks));
	k->active_mm = calloc((size_t)nr_cpus, sizeof(*k->active_mm));
	if (!k->bdp_ratelimits || !k->dirty_throttle_leaks || !k->active_mm)
		return TLBSIM_ENOMEM;
	return 0;
}

void kernel_destroy(struct kernel *k)
{
	struct sim *s = &k->mach.sim;
	for (int i = 0; i < s->nthreads; i++) {
		free(task_of(s->threads[i])->gather_pages);
		free(task_of(s->threads[i])->lazyfree);
	}
	/* pending RCU callbacks drop their batches into k's pool first */
	machine_destroy(&k->mach);
	vmalloc_destroy(k);
	for (int i = 0; i < k->nr_mms; i++) {
		struct mm_struct *mm = k->mms[i];
		free(mm->vmas);		/* the VMAs themselves are kernel objects */
		destroy_context(s, &mm->context);
	}
	free(k->mms);
	for (uint32_t i = 0; i < k->ninodes; i++) {
		free(k->all_inodes[i]->pages);
		free(k->all_inodes[i]->mmap);
	}
	free(k->all_inodes);
	free(k->bdp_ratelimits);
	free(k->dirty_throttle_leaks);
	free(k->active_mm);
	for (uint32_t i = 0; i < k->nobjs; i++)
		free(k->objs[i]);
	free(k->objs);
	memset(k, 0, sizeof(*k));
}

static void *kernel_obj_alloc_mem(struct sim *s, size_t size, bool zero)
{
	struct kernel *k = kernel_of(s);
	if (sim_host_charge(s, size) ||
	    GROW(&k->objs, &k->cap_objs, k->nobjs, (size_t)k->nobjs + 1, 64)) {
		sim_oom(s, "kernel objects");
		return NULL;
	}
	void *p = zero ? calloc(1, size) : malloc(size);
	if (!p) {
		sim_oom(s, "kernel objects");
		return NULL;
	}
	k->objs[k->nobjs++] = p;
	return p;
}

void *kernel_obj_alloc(struct sim *s, size_t size)
{
	return kernel_obj_alloc_mem(s, size, true);
}

void *kernel_obj_alloc_uninit(struct sim *s, size_t size)
{
	return kernel_obj_alloc_mem(s, size, false);
}

uint32_t alloc_frame(struct sim *s, enum frame_state st, int depth)
{
	uint32_t f = frame_alloc(hw_of(s), st, depth);
	if (f == NO_FRAME)
		sim_oom(s, "simulated frames");
	return f;
}

uint32_t alloc_zeroed_frame(struct sim *s, enum frame_state st, int depth, uint64_t extra_ns)
{
	uint32_t f = alloc_frame(s, st, depth);
	sim_charge(s, (uint64_t)P(s, P_page_alloc_ns) + zero_page_cost(s, f) + extra_ns);
	return f;
}

/* mm_alloc() -> mm_init() + mm_alloc_pgd() + init_new_context() (kernel/
 * fork.c) and arch_pick_mmap_layout() (mm/util.c, no randomisation) */
struct mm_struct *mm_alloc(struct sim *s)
{
	struct kernel *k = kernel_of(s);
	struct hw *hw = hw_of(s);
	if (GROW(&k->mms, &k->cap_mms, (size_t)k->nr_mms, (size_t)k->nr_mms + 1, 4)) {
		sim_oom(s, "mm_structs");
		return NULL;
	}
	struct mm_struct *mm = k->mm_free;
	if (mm) {		/* an mm_struct freed by __mmdrop, from its cache */
		k->mm_free = mm->next_free;
		memset(mm, 0, sizeof(*mm));
	} else if (!(mm = kernel_obj_alloc(s, sizeof(*mm)))) {
		return NULL;
	}
	mm->id = k->next_mm_id++;
	mm->users = 1;
	mm->count = 1;
	if (init_new_context(s, &mm->context, mm->id)) {
		sim_oom(s, "mm_structs");
		return NULL;
	}
	mm->slot = k->nr_mms;
	k->mms[k->nr_mms++] = mm;
	mm->pgd = alloc_frame(s, FRAME_PGTABLE, 0);
	if (mm->pgd == NO_FRAME)
		return NULL;
	/* mmap_base: TASK_SIZE - gap, gap = 128 MiB minimum (8 MiB stack
	 * rlimit), no randomisation (setarch -R) */
	mm->mmap_base = (hw->geom.task_size - (128ull << 20)) & ~(hw->geom.page_size - 1);
	return mm;
}

struct task *task_create(struct sim *s, size_t size, thread_fn fn, void *arg,
			 struct mm_struct *mm, int cpu, uint64_t start_delay)
{
	SIM_BUG_ON(s, size < sizeof(struct task));
	struct sim_thread *t = sim_thread_alloc(s, size);
	if (!t)
		return NULL;
	struct task *tk = task_of(t);
	tk->mm = mm;
	if (sim_thread_start(s, t, fn, arg, cpu, start_delay))
		return NULL;
	return tk;
}
