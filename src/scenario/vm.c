/*
 * vm.c - the interpreter of compiled scenarios: every task of a file is a
 * simulated user thread (the glibc model of src/workload/glibc.c) running
 * its ops through the simulated syscalls sys_mmap, sys_munmap,
 * sys_madvise_dontneed / _free, sys_mprotect, sys_clear_refs, sys_mremap, ksm_merge,
 * numa_scan, sys_uffd_writeprotect, gup_pin / gup_unpin, sys_collapse, gup_fast,
 * sys_tmpfile, sys_ftruncate, sys_fsync, sys_close and
 * user_access, exactly as the built-in C workloads call them.
 *
 * One run's state (struct scen_run: global slots, events, files) and each
 * task's (struct scen_inst: locals, value stack, the tasks it started) are
 * kernel objects of that run, freed with it however it ends.
 */
#include <inttypes.h>
#include <string.h>

#include "mm/points.h"
#include "prog.h"

#define MAX_FILES 64
#define MAX_LEN (1ull << 48)	/* longer ranges are refused (EINVAL) */
#define MAX_VMALLOC_LEN (1ull << 30)	/* vmalloc allocates its pages at once */

struct scen_inst;

struct scen_event {
	int64_t count;			/* signals not yet consumed by a wait */
	struct scen_inst *waiters;	/* tasks asleep in wait */
};

struct scen_run {
	const struct scenario *sc;
	int64_t *g;
	struct scen_event ev[SCEN_MAX_EVENTS];
	struct inode *files[MAX_FILES];
	int nfiles;
	int started;			/* tasks started (SCEN_MAX_TASKS at most) */
	int next_fork_cpu;
	struct scen_inst *insts;	/* every task instance, newest first */
};

struct scen_inst {
	struct scen_run *run;
	int task;
	struct sim_thread *self;
	struct scen_inst *next_waiter;
	struct scen_inst *next_inst;	/* scen_run.insts */
	/* the wait or join it sleeps in (scen_deadlock_where), else NULL */
	const struct scen_op *asleep_at;
	struct sim_thread **kids;	/* started and not joined (NULL: joined) */
	int nkids, capkids;
	int64_t *l;
	int64_t stack[SCEN_MAX_STACK + 4];
};

static const struct scenario *scen_of(const struct tlbsim_workload_desc *d)
{
	const struct workload_def *def = container_of(d, struct workload_def, desc);
	return container_of(def, struct scenario, def);
}

/* a numeric parameter: decimal with a size suffix (16M, 4KiB) or 0x hex */
int scen_num_value(const char *txt, uint64_t *out)
{
	if (txt[0] == '0' && (txt[1] == 'x' || txt[1] == 'X') && txt[2]) {
		uint64_t v = 0;
		for (const char *p = txt + 2; *p; p++) {
			int d = *p >= '0' && *p <= '9' ? *p - '0'
				: *p >= 'a' && *p <= 'f' ? *p - 'a' + 10
				: *p >= 'A' && *p <= 'F' ? *p - 'A' + 10 : -1;
			if (d < 0 || (v >> 60))
				return -1;
			v = v * 16 + (uint64_t)d;
		}
		*out = v;
		return 0;
	}
	return parse_size(txt, out);
}

static int scen_deadlock_where(struct sim *s, void *arg, char *buf, size_t len);

int scen_setup(struct sim *s, const struct tlbsim_resolved *r, void **state, char *err,
	       size_t errlen)
{
	const struct scenario *sc = scen_of(r->workload);
	struct scen_run *run = kernel_obj_alloc(s, sizeof(*run));
	int64_t *g = run ? kernel_obj_alloc(s, (size_t)(sc->nglobals + 1) * sizeof(*g)) : NULL;
	if (!g) {
		snprintf(err, errlen, "out of memory");
		return TLBSIM_ENOMEM;
	}
	run->sc = sc;
	run->g = g;
	*state = run;
	s->deadlock_where = scen_deadlock_where;
	s->deadlock_arg = run;
	for (int i = 0; i < sc->nglobals; i++) {
		const struct scen_global *gl = &sc->globals[i];
		switch (gl->kind) {
		case G_VAR:
			g[i] = 0;
			break;
		case G_ITERS:
			g[i] = r->iters;
			break;
		case G_THREADS:
			g[i] = r->threads;
			break;
		case G_CPUS:
			g[i] = r->cpus;
			break;
		case G_PAGE:
			g[i] = (int64_t)hw_of(s)->geom.page_size;
			break;
		case G_NUM_PARAM:
		case G_WORD_PARAM: {
			const char *v = wparam(r, gl->name);
			if (gl->kind == G_NUM_PARAM) {
				uint64_t x;
				if (scen_num_value(v, &x) || x > (uint64_t)INT64_MAX) {
					snprintf(err, errlen, "workload parameter %s=%s: want a number "
						 "(suffixes K, M, G, T)", gl->name, v);
					return TLBSIM_EINVAL;
				}
				g[i] = (int64_t)x;
				break;
			}
			int w = -1;
			for (int k = 1; k < W_COUNT; k++)
				if ((gl->words & (1u << k)) && strcmp(scen_word_names[k], v) == 0)
					w = k;
			if (w < 0) {
				char want[128] = "";
				size_t o = 0;
				for (int k = 1; k < W_COUNT; k++)
					if (gl->words & (1u << k))
						o += (size_t)snprintf(want + o, sizeof(want) - o, "%s%s",
								      o ? " or " : "",
								      scen_word_names[k]);
				snprintf(err, errlen, "workload parameter %s=%s: want %s", gl->name, v,
					 want);
				return TLBSIM_EINVAL;
			}
			g[i] = w;
			break;
		}
		}
	}
	return 0;
}

static struct scen_inst *inst_new(struct sim *s, struct scen_run *run, int task, int64_t arg)
{
	const struct scen_task *t = &run->sc->tasks[task];
	struct scen_inst *in = kernel_obj_alloc(s, sizeof(*in));
	int64_t *l = in ? kernel_obj_alloc(s, (size_t)(t->nlocals + 1) * sizeof(*l)) : NULL;
	if (!l)
		return NULL;
	in->run = run;
	in->task = task;
	in->l = l;
	l[0] = arg;
	in->next_inst = run->insts;
	run->insts = in;
	return in;
}

/*
 * sim_fail_deadlock's account of a scenario run: the tasks asleep forever in
 * a wait or a join of the file, each with its place ("main at f.tlbs:31:5
 * (wait go)"). Those are the file's own deadlock, a bad input (exit 2). With
 * none, the sleepers are in the kernel model: a tlbsim bug.
 */
static int scen_deadlock_where(struct sim *s, void *arg, char *buf, size_t len)
{
	(void)s;
	const struct scen_run *run = arg;
	const struct scenario *sc = run->sc;
	size_t o = 0;
	int n = 0;
	for (const struct scen_inst *in = run->insts; in; in = in->next_inst) {
		const struct scen_op *op = in->asleep_at;
		if (!op)
			continue;
		if (o >= len)
			break;		/* full: buf + o would point past it */
		if (n++ == 4) {
			o += (size_t)snprintf(buf + o, o < len ? len - o : 0, ", ...");
			break;
		}
		o += (size_t)snprintf(buf + o, o < len ? len - o : 0, "%s%s at %s:%u:%u (%s%s)",
				      n == 1 ? ": " : ", ", sc->tasks[in->task].name, sc->fname,
				      op->line, op->col, op->code == OP_WAIT ? "wait " :
				      op->code == OP_JOIN_ALL ? "join all" : "join",
				      op->code == OP_WAIT ? sc->events[op->a] : "");
	}
	return n ? TLBSIM_EINVAL : TLBSIM_EINTERNAL;
}

#define SCEN_MAX_SPIN (1ull << 26)	/* loop back-edges with the clock standing still */
static void exec(struct sim *s, struct scen_inst *in);

static void scen_thread(struct sim *s, struct sim_thread *t)
{
	struct scen_inst *in = t->arg;
	in->self = t;
	exec(s, in);
}

void scen_main(struct sim *s, struct sim_thread *t)
{
	struct scen_run *run = t->arg;
	int m = 0;
	while (!run->sc->tasks[m].is_main)
		m++;
	struct scen_inst *in = inst_new(s, run, m, 0);
	if (!in)
		return;
	in->self = t;
	exec(s, in);
}

static void fail_at(struct sim *s, const struct scenario *sc, const struct scen_op *op,
		    const char *what)
{
	sim_fail(s, TLBSIM_EINVAL, "%s:%u:%u: %s", sc->fname, op->line, op->col, what);
}

/* start task op->a as a thread (or a forked process); a handle, or -1 */
static int64_t start_task(struct sim *s, struct scen_inst *in, const struct scen_op *op,
			  int64_t cpu, int64_t arg, bool fork)
{
	struct scen_run *run = in->run;
	if (run->started >= SCEN_MAX_TASKS) {
		fail_at(s, run->sc, op, "more than 4096 tasks started (the --threads limit)");
		return -1;
	}
	if (cpu < -1) {
		fail_at(s, run->sc, op, "negative CPU number");
		return -1;
	}
	struct scen_inst *child = inst_new(s, run, (int)op->a, arg);
	if (!child)
		return -1;
	if (in->nkids == in->capkids) {
		int cap = in->capkids ? in->capkids * 2 : 8;
		struct sim_thread **k = kernel_obj_alloc(s, (size_t)cap * sizeof(*k));
		if (!k)
			return -1;
		if (in->nkids)
			memcpy(k, in->kids, (size_t)in->nkids * sizeof(*k));
		in->kids = k;
		in->capkids = cap;
	}
	struct sim_thread *t;
	if (fork) {
		if (cpu < 0)
			cpu = run->next_fork_cpu++ % s->nr_cpus;
		t = glibc_fork_on(s, scen_thread, child, (int)(cpu % s->nr_cpus));
	} else if (cpu >= 0) {
		t = glibc_pthread_create_on(s, scen_thread, child, (int)(cpu % s->nr_cpus));
	} else {
		t = glibc_pthread_create(s, scen_thread, child);
	}
	if (!t)
		return -1;
	run->started++;
	in->kids[in->nkids] = t;
	return in->nkids++;
}

static struct inode *file_of(struct sim *s, struct scen_inst *in, const struct scen_op *op,
			     int64_t h)
{
	if (h < 0 || h >= in->run->nfiles || !in->run->files[h]) {
		fail_at(s, in->run->sc, op, "not an open file (a handle from tmpfile)");
		return NULL;
	}
	return in->run->files[h];
}

static bool range_ok(uint64_t addr, uint64_t len)
{
	return len <= MAX_LEN && addr <= UINT64_MAX - len;
}

/* The interpreter loop: one op at a time from the task's entry to OP_END. */
static void exec(struct sim *s, struct scen_inst *in)
{
	struct scen_run *run = in->run;
	const struct scenario *sc = run->sc;
	const struct scen_op *ops = sc->ops;
	int64_t *g = run->g, *l = in->l;
	int64_t *sp = in->stack;	/* next free slot */
	uint64_t ps = hw_of(s)->geom.page_size;
	uint32_t pc = sc->tasks[in->task].entry;
	/* loop back-edges since the task's clock last moved (OP_LOOP) */
	uint64_t spins = 0, spin_clock = UINT64_MAX;
	for (;;) {
		const struct scen_op *op = &ops[pc++];
		switch ((enum scen_opcode)op->code) {
		case OP_END:
		case OP_EXIT:
			return;
		case OP_CONST:
			*sp++ = op->a;
			break;
		case OP_GET_G:
			*sp++ = g[op->a];
			break;
		case OP_GET_L:
			*sp++ = l[op->a];
			break;
		case OP_SET_G:
			g[op->a] = *--sp;
			break;
		case OP_SET_L:
			l[op->a] = *--sp;
			break;
		case OP_COST:
			*sp++ = P(s, (enum param_id)op->a);
			break;
		case OP_POP:
			sp--;
			break;
#define BIN(code, expr)                                                          \
		case code: {                                                     \
			int64_t b = *--sp, a = sp[-1];                           \
			sp[-1] = (expr);                                         \
			break;                                                   \
		}
		/* + - * and unary minus out of int64 range stop the run, as / and
		 * % do (they wrapped: 9223372036854775807 + 1 was negative,
		 * 16T * 1T was 0) */
		case OP_ADD:
		case OP_SUB:
		case OP_MUL: {
			int64_t b = *--sp, a = sp[-1], r;
			bool ovf = op->code == OP_ADD   ? __builtin_add_overflow(a, b, &r)
				   : op->code == OP_SUB ? __builtin_sub_overflow(a, b, &r)
							: __builtin_mul_overflow(a, b, &r);
			if (ovf) {
				fail_at(s, sc, op, "arithmetic overflow");
				return;
			}
			sp[-1] = r;
			break;
		}
		BIN(OP_EQ, a == b)
		BIN(OP_NE, a != b)
		BIN(OP_LT, a < b)
		BIN(OP_LE, a <= b)
		BIN(OP_GT, a > b)
		BIN(OP_GE, a >= b)
		BIN(OP_AND, a && b)
		BIN(OP_OR, a || b)
#undef BIN
		case OP_DIV:
		case OP_MOD: {
			int64_t b = *--sp, a = sp[-1];
			if (b == 0 || (a == INT64_MIN && b == -1)) {
				fail_at(s, sc, op, b ? "arithmetic overflow" : "division by zero");
				return;
			}
			sp[-1] = op->code == OP_DIV ? a / b : a % b;
			break;
		}
		case OP_NEG:
			if (sp[-1] == INT64_MIN) {
				fail_at(s, sc, op, "arithmetic overflow");
				return;
			}
			sp[-1] = -sp[-1];
			break;
		case OP_NOT:
			sp[-1] = !sp[-1];
			break;
		case OP_JMP:
			pc = (uint32_t)op->a;
			break;
		case OP_LOOP:
			if (s->error)
				return;
			/* Loops that let no simulated time pass never reach a
			 * yield point, where the engine looks at --time-limit and
			 * SIGINT/SIGTERM: nested loops of 10^9 each spun for
			 * ever. After SCEN_MAX_SPIN back-edges at one clock
			 * reading the run stops with an error. */
			if (__builtin_expect((++spins & 0xffff) == 0, 0)) {
				uint64_t now = s->now + (s->curr ? s->curr->pending_ns : 0);
				if (now != spin_clock) {
					spin_clock = now;
					spins = 0;
				} else if (spins >= SCEN_MAX_SPIN) {
					fail_at(s, sc, op, "a loop ran 2^26 times without simulated time "
						"passing (give its body a statement that takes time)");
					return;
				}
			}
			pc = (uint32_t)op->a;
			break;
		case OP_JZ:
			if (!*--sp)
				pc = (uint32_t)op->a;
			break;
		case OP_REP_INIT: {
			int64_t n = *--sp;
			if (n > SCEN_MAX_LOOP) {
				fail_at(s, sc, op, "repeat count over 1000000000 (the --iters limit)");
				return;
			}
			l[op->b] = n;
			break;
		}
		case OP_RANGE_CHK:
			if (l[op->b + 1] > l[op->b] &&
			    (uint64_t)l[op->b + 1] - (uint64_t)l[op->b] > (uint64_t)SCEN_MAX_LOOP) {
				fail_at(s, sc, op, "for range over 1000000000 iterations (the --iters "
					"limit)");
				return;
			}
			break;
		case OP_REP_NEXT:
			if (l[op->b] <= 0)
				pc = (uint32_t)op->a;
			else
				l[op->b]--;
			break;
		case OP_FOR_NEXT:
			if (l[op->b] >= l[op->b + 1])
				pc = (uint32_t)op->a;
			break;
		case OP_INC_L:
			l[op->a]++;
			break;
		case OP_MMAP:
		case OP_MMAP_FILE: {
			int64_t off = 0, fh = 0;
			if (op->code == OP_MMAP_FILE) {
				off = *--sp;
				fh = *--sp;
			}
			int64_t flags = *--sp, len = *--sp, hint = *--sp;
			int f = flags == W_SHARED ? TLBSIM_MAP_SHARED : TLBSIM_MAP_PRIVATE;
			uint64_t a = TLBSIM_EINVAL_VA;
			if (len > 0 && (uint64_t)len <= MAX_LEN) {
				if (op->code == OP_MMAP_FILE) {
					struct inode *file = file_of(s, in, op, fh);
					if (!file)
						return;
					if (off < 0 || (uint64_t)off % ps) {
						fail_at(s, sc, op, "mmap file offset: want a multiple "
							"of the page size");
						return;
					}
					a = sys_mmap_file(s, (uint64_t)hint, (uint64_t)len, f, file,
							  (uint64_t)off / ps);
				} else {
					a = sys_mmap(s, (uint64_t)hint, (uint64_t)len, f);
				}
			}
			if (a == TLBSIM_EINVAL_VA) {
				char m[128];
				snprintf(m, sizeof(m), "mmap of %lld bytes failed", (long long)len);
				fail_at(s, sc, op, m);
				return;
			}
			*sp++ = (int64_t)a;
			break;
		}
		case OP_MPROTECT: {
			int prot = *--sp == W_WRITE ? TLBSIM_PROT_READ | TLBSIM_PROT_WRITE
						    : TLBSIM_PROT_READ;
			uint64_t len = (uint64_t)*--sp, addr = (uint64_t)*--sp;
			*sp++ = range_ok(addr, len) ? sys_mprotect(s, addr, len, prot) : -1;
			break;
		}
		case OP_CLEAR_REFS: {
			int64_t type = *--sp;
			*sp++ = type >= 1 && type <= 5 ? sys_clear_refs(s, (int)type) : -1;
			break;
		}
		case OP_MREMAP:
		case OP_MREMAP_FIXED: {
			uint64_t to = op->code == OP_MREMAP_FIXED ? (uint64_t)*--sp : 0;
			uint64_t nlen = (uint64_t)*--sp, olen = (uint64_t)*--sp, addr = (uint64_t)*--sp;
			uint64_t r = TLBSIM_EINVAL_VA;
			if (range_ok(addr, olen) && range_ok(to, nlen))
				r = sys_mremap(s, addr, olen, nlen, op->code == OP_MREMAP_FIXED, to);
			*sp++ = r == TLBSIM_EINVAL_VA ? -1 : (int64_t)r;
			break;
		}
		case OP_FTRUNCATE: {
			int64_t size = *--sp, fh = *--sp;
			struct inode *file = file_of(s, in, op, fh);
			if (!file)
				return;
			*sp++ = size >= 0 && (uint64_t)size <= MAX_LEN
					? sys_ftruncate(s, file, (uint64_t)size) : -1;
			break;
		}
		case OP_RECLAIM: {
			uint64_t len = (uint64_t)*--sp, addr = (uint64_t)*--sp;
			*sp++ = range_ok(addr, len) ? sys_reclaim(s, addr, len) : -1;
			break;
		}
		case OP_MIGRATE: {
			uint64_t len = (uint64_t)*--sp, addr = (uint64_t)*--sp;
			*sp++ = range_ok(addr, len) ? sys_migrate_vma(s, addr, len) : -1;
			break;
		}
		case OP_PFNMAP: {
			bool mixed = *--sp != 0;
			int64_t len = *--sp, hint = *--sp;
			uint64_t a = len > 0 && (uint64_t)len <= MAX_LEN
					     ? sys_pfnmap(s, (uint64_t)hint, (uint64_t)len, mixed)
					     : TLBSIM_EINVAL_VA;
			if (a == TLBSIM_EINVAL_VA) {
				char m[128];
				snprintf(m, sizeof(m), "pfnmap of %lld bytes failed", (long long)len);
				fail_at(s, sc, op, m);
				return;
			}
			*sp++ = (int64_t)a;
			break;
		}
		case OP_DRIVER_UNMAP:
			sp[-1] = driver_unmap(s, (uint64_t)sp[-1]);
			break;
		case OP_KSM_MERGE: {
			uint64_t a2 = (uint64_t)*--sp, a1 = (uint64_t)*--sp;
			*sp++ = ksm_merge(s, a1, a2);
			break;
		}
		case OP_NUMA_SCAN: {
			int64_t mis = *--sp;
			uint64_t len = (uint64_t)*--sp, addr = (uint64_t)*--sp;
			*sp++ = range_ok(addr, len) ? numa_scan(s, addr, len, mis != 0) : -1;
			break;
		}
		case OP_UFFD_WP: {
			int64_t mode = *--sp;
			uint64_t len = (uint64_t)*--sp, addr = (uint64_t)*--sp;
			*sp++ = range_ok(addr, len) && (mode == 0 || mode == 1)
					? sys_uffd_writeprotect(s, addr, len, mode == 1) : -1;
			break;
		}
		case OP_PIN: {
			uint64_t addr = (uint64_t)*--sp;
			*sp++ = range_ok(addr, 1) ? gup_pin(s, addr) : -1;
			break;
		}
		case OP_UNPIN: {
			int64_t h = *--sp;
			*sp++ = h >= 0 && h < GUP_PINS ? gup_unpin(s, (int)h) : -1;
			break;
		}
		case OP_COLLAPSE: {
			uint64_t addr = (uint64_t)*--sp;
			*sp++ = range_ok(addr, 1) ? sys_collapse(s, addr) : -1;
			break;
		}
		case OP_SPLIT_HUGE_PMD: {
			uint64_t addr = (uint64_t)*--sp;
			*sp++ = range_ok(addr, 1) ? sys_split_huge_pmd(s, addr) : -1;
			break;
		}
		case OP_GUP_FAST: {
			uint64_t addr = (uint64_t)*--sp;
			*sp++ = range_ok(addr, 1) ? gup_fast(s, addr) : -1;
			break;
		}
		case OP_FAIL_TABLE_BATCH:
			mmu_gather_fail_batches(s, *--sp);
			*sp++ = 0;
			break;
		case OP_VMALLOC: {
			/* the pages are allocated at once: at most 1 GiB */
			int64_t len = *--sp;
			if (len <= 0 || (uint64_t)len > MAX_VMALLOC_LEN) {
				fail_at(s, sc, op, "vmalloc length: want 1 byte to 1 GiB");
				return;
			}
			uint64_t a = vmalloc(s, (uint64_t)len);
			if (!a) {
				char m[128];
				snprintf(m, sizeof(m), "vmalloc of %lld bytes failed", (long long)len);
				fail_at(s, sc, op, m);
				return;
			}
			*sp++ = (int64_t)a;
			break;
		}
		case OP_VFREE: {
			uint64_t a = (uint64_t)*--sp;
			int64_t r = -1;
			if (vmalloc_busy(s, a)) {
				vfree(s, a);
				r = 0;
			}
			*sp++ = r;
			break;
		}
		case OP_VPURGE:
			vmalloc_purge_sync(s);
			*sp++ = 0;
			break;
		case OP_KLOAD: {
			uint64_t a = (uint64_t)*--sp;
			int64_t r = -1;
			if (kernel_mapped(s, a)) {
				kernel_access(s, a, false);
				r = 0;
			}
			*sp++ = r;
			break;
		}
		case OP_MUNMAP: {
			uint64_t len = (uint64_t)*--sp, addr = (uint64_t)*--sp;
			*sp++ = range_ok(addr, len) ? sys_munmap(s, addr, len) : -1;
			break;
		}
		case OP_MADVISE: {
			int64_t adv = *--sp;
			uint64_t len = (uint64_t)*--sp, addr = (uint64_t)*--sp;
			if (!range_ok(addr, len))
				*sp++ = -1;
			else if (adv == W_FREE)
				*sp++ = sys_madvise_free(s, addr, len);
			else if (adv == W_HUGEPAGE)
				*sp++ = sys_madvise_hugepage(s, addr, len);
			else
				*sp++ = sys_madvise_dontneed(s, addr, len);
			break;
		}
		case OP_LOAD:
		case OP_STORE:
			sp[-1] = user_access(s, (uint64_t)sp[-1], op->code == OP_STORE);
			break;
		case OP_TOUCH: {
			bool write = *--sp == W_WRITE;
			uint64_t len = (uint64_t)*--sp, addr = (uint64_t)*--sp;
			int64_t r = 0;
			if (!range_ok(addr, len)) {
				r = -1;
			} else {
				uint64_t pages = (len + ps - 1) / ps;
				/* more pages than the machine has RAM is no workload (an
				 * imported PROT_NONE reservation of terabytes ran for ever,
				 * the host's memory growing) */
				const uint64_t ram = ((uint64_t)P(s, P_ram_mb) << 20) / ps;
				if (pages > ram) {
					char m[128];
					snprintf(m, sizeof(m), "touch: %" PRIu64 " pages, more than the "
						 "machine's RAM (ram_mb: %" PRIu64 " pages)", pages, ram);
					fail_at(s, sc, op, m);
					return;
				}
				for (uint64_t k = 0; k < pages; k++)
					if (user_access(s, addr + k * ps, write)) {
						r = -1;
						break;
					}
			}
			*sp++ = r;
			break;
		}
		case OP_TMPFILE: {
			int64_t size = *--sp, fs = *--sp;
			if (run->nfiles >= MAX_FILES) {
				fail_at(s, sc, op, "more than 64 files");
				return;
			}
			if (size < 0 || (uint64_t)size > MAX_LEN) {
				fail_at(s, sc, op, "tmpfile size out of range");
				return;
			}
			struct inode *file = sys_tmpfile(s, fs == W_EXT4	 ? &fs_ext4
							 : fs == W_HUGETLBFS ? &fs_hugetlbfs
									     : &fs_tmpfs,
							 (uint64_t)size);
			if (!file)
				return;
			run->files[run->nfiles] = file;
			*sp++ = run->nfiles++;
			break;
		}
		case OP_FSYNC:
		case OP_CLOSE: {
			int64_t h = *--sp;
			struct inode *file = file_of(s, in, op, h);
			if (!file)
				return;
			if (op->code == OP_FSYNC) {
				sys_fsync(s, file);
			} else {
				sys_close(s, file);
				run->files[h] = NULL;
			}
			*sp++ = 0;
			break;
		}
		case OP_SPAWN:
		case OP_FORK: {
			int64_t cpu = -1, arg = 0;
			if (op->b & 1)
				cpu = *--sp;
			if (op->b & 2)
				arg = *--sp;
			int64_t h = start_task(s, in, op, cpu, arg, op->code == OP_FORK);
			if (h < 0 || s->error)
				return;
			*sp++ = h;
			break;
		}
		case OP_JOIN: {
			int64_t h = *--sp;
			if (h < 0 || h >= in->nkids) {
				fail_at(s, sc, op, "join of a handle this task did not start (or "
					"one given before its last `join all`)");
				return;
			}
			if (in->kids[h]) {
				in->asleep_at = op;
				glibc_pthread_join(s, in->kids[h]);
				in->asleep_at = NULL;
				in->kids[h] = NULL;
			}
			break;
		}
		case OP_JOIN_ALL:
			in->asleep_at = op;
			for (int i = 0; i < in->nkids; i++)
				if (in->kids[i]) {
					glibc_pthread_join(s, in->kids[i]);
					in->kids[i] = NULL;
				}
			in->asleep_at = NULL;
			in->nkids = 0;
			break;
		case OP_SIGNAL: {
			struct scen_event *e = &run->ev[op->a];
			e->count++;
			struct scen_inst *w = e->waiters;
			e->waiters = NULL;
			for (; w; w = w->next_waiter)
				sim_wake(s, w->self, 0);
			break;
		}
		case OP_WAIT: {
			struct scen_event *e = &run->ev[op->a];
			while (e->count == 0 && !s->error) {
				in->next_waiter = e->waiters;
				e->waiters = in;
				in->asleep_at = op;
				sim_sleep(s);
				in->asleep_at = NULL;
			}
			if (s->error)
				return;
			e->count--;
			break;
		}
		case OP_OPCOUNT:
			s->m.ops++;
			break;
		case OP_OVERHEAD: {
			/* mmap8.c's user_loop_overhead(): the benchmark loop's own
			 * user time, jittered */
			uint64_t lo = (uint64_t)P(s, P_user_loop_ns);
			sim_charge(s, lo + rng_below(&s->rng, lo + 1));
			break;
		}
		case OP_IMAGE:
		case OP_USER_WORK: {
			int64_t n = *--sp;
			if (n < 0 || n > 1048576) {
				fail_at(s, sc, op, "want 0..1048576 pages");
				return;
			}
			if (op->code == OP_USER_WORK)
				glibc_user_work(s, (uint64_t)n);
			else if (glibc_image_map(s, (uint64_t)n))
				return;
			break;
		}
		case OP_COMPUTE: {
			int64_t ns = *--sp;
			if (ns < 0 || ns > 1000000000ll) {
				fail_at(s, sc, op, "compute: want 0..1000000000 ns at a time");
				return;
			}
			sim_step(s, YP_USER, (uint64_t)ns);
			break;
		}
		}
	}
}
