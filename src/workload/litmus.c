/*
 * litmus.c - the store-buffering litmus test SB (x86-TSO's signature
 * relaxation; Intel SDM vol. 3A 9.2.3.4 "Loads May Be Reordered with Earlier
 * Stores to Different Locations"; Sewell et al., CACM 53(7), 2010, test
 * SB):
 *
 *     CPU 0            CPU 1
 *     x = 1            y = 1
 *     [MFENCE]         [MFENCE]
 *     r1 = y           r2 = x
 *
 * Outcome r1 = 0 and r2 = 0: forbidden under sequential consistency, allowed
 * by x86-TSO (each load passes its CPU's buffered store), forbidden again
 * with the MFENCEs (-w fence=mfence). x and y are plain words stored and
 * loaded through the CPUs' store buffers (arch/tso.c); under
 * --memory-model sc (and in run mode) a store is visible at once. The
 * outcome, when seen, is reported as the invariant `litmus`.
 */
#include <stdio.h>
#include <string.h>

#include "arch/points.h"
#include "workload/workload.h"

struct litmus_state {
	bool fence;
	uintptr_t x, y;		/* memory: 0 at the start */
	uintptr_t r[2];		/* r1 (CPU 0), r2 (CPU 1) */
};

static int litmus_setup(struct sim *s, const struct tlbsim_resolved *r, void **state,
			char *err, size_t errlen)
{
	struct litmus_state *st = kernel_obj_alloc(s, sizeof(*st));
	if (!st) {
		snprintf(err, errlen, "out of memory");
		return TLBSIM_ENOMEM;
	}
	*state = st;
	const char *v = wparam(r, "fence");
	if (strcmp(v, "none") == 0) {
		st->fence = false;
	} else if (strcmp(v, "mfence") == 0) {
		st->fence = true;
	} else {
		snprintf(err, errlen, "workload parameter fence=%s: want none or mfence", v);
		return TLBSIM_EINVAL;
	}
	if (r->cpus < 2) {
		snprintf(err, errlen, "litmus_sb needs 2 CPUs (--cpus %d)", r->cpus);
		return TLBSIM_EINVAL;
	}
	return 0;
}

/* one side: store 1 to mine, [MFENCE], load theirs into r[me] */
static void sb_side(struct sim *s, struct litmus_state *st, int me)
{
	int cpu = cur_cpu(s);
	uintptr_t *mine = me ? &st->y : &st->x, *theirs = me ? &st->x : &st->y;
	tso_store(s, cpu, mine, 1, me ? TSO_W_Y : TSO_W_X);
	sim_step_arg(s, YP_LITMUS_STORE, 0, (uint64_t)cpu, me ? TSO_W_Y : TSO_W_X);
	if (st->fence) {
		tso_fence(s, cpu, TSO_MFENCE);
		sim_step_arg(s, YP_LITMUS_FENCE, 0, (uint64_t)cpu, 0);
	}
	st->r[me] = tso_load(s, cpu, theirs);
	sim_step_arg(s, YP_LITMUS_LOAD, 0, (uint64_t)cpu, st->r[me]);
}

static void sb_cpu1(struct sim *s, struct sim_thread *t)
{
	sb_side(s, t->arg, 1);
}

static void litmus_main(struct sim *s, struct sim_thread *t)
{
	struct litmus_state *st = t->arg;
	struct sim_thread *p1 = glibc_pthread_create_on(s, sb_cpu1, st, 1);
	sb_side(s, st, 0);
	if (p1)
		glibc_pthread_join(s, p1);
	s->m.ops++;
	if (st->r[0] == 0 && st->r[1] == 0)
		tso_observed(s, cur_cpu(s), st->fence
			     ? "SB with MFENCE: r1 = 0 and r2 = 0 (x = 1; MFENCE; r1 = y || "
			       "y = 1; MFENCE; r2 = x)"
			     : "SB: r1 = 0 and r2 = 0 (x = 1; r1 = y || y = 1; r2 = x): both loads "
			       "passed their CPU's buffered store");
}

static const struct tlbsim_wparam_desc litmus_params[] = {
	{"fence", "none", "between each store and load: none, or mfence"},
};

static const struct tlbsim_workload_desc litmus_sb_desc = {
	.name = "litmus_sb",
	.description = "store buffering (SB): x=1; r1=y || y=1; r2=x. r1=r2=0 is seen under "
		       "tlbsim check --memory-model tso, never under sc or with -w fence=mfence "
		       "(reported as the invariant litmus)",
	.default_profile = "x86-24",
	.default_threads = 2,
	.fixed_threads = 1,
	.default_iters = 1,
	.nparams = 1,
	.params = litmus_params,
	.check_iters = 1,
	.check_cpus = 2,
	.check_wparams = "",
};

const struct workload_ops litmus_sb_ops = {
	.desc = &litmus_sb_desc, .setup = litmus_setup, .main = litmus_main,
};
