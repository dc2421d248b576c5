/*
 * prog.h - the compiled form of a scenario file, shared by the compiler
 * (parse.c) and the interpreter (vm.c). Not for other layers.
 *
 * A program is one flat array of ops for a stack machine; each task's code
 * starts at its entry and ends with OP_END. Values are 64-bit integers.
 * Words (shared, private, dontneed, free, read, write, ext4, tmpfs) are small
 * integer codes.
 */
#ifndef TLBSIM_SCENARIO_PROG_H
#define TLBSIM_SCENARIO_PROG_H

#include "scenario.h"

enum scen_opcode {
	OP_END,		/* the task ends */
	OP_CONST,	/* push a */
	OP_GET_G,	/* push global slot a (variables, parameters, built-ins) */
	OP_GET_L,	/* push local slot a */
	OP_SET_G,	/* pop into global slot a */
	OP_SET_L,	/* pop into local slot a */
	OP_COST,	/* push cost parameter a (enum param_id) */
	OP_POP,
	OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_MOD, OP_NEG, OP_NOT,
	OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE, OP_AND, OP_OR,
	OP_JMP,		/* to a (a forward jump) */
	OP_LOOP,	/* to a (a back edge: the task stops if the run failed) */
	OP_JZ,		/* pop; to a when zero */
	OP_REP_INIT,	/* pop a repeat count into local b (at most SCEN_MAX_LOOP) */
	OP_RANGE_CHK,	/* a for range: local b+1 - local b at most SCEN_MAX_LOOP */
	OP_REP_NEXT,	/* local slot b: 0 -> to a; else decrement it */
	OP_FOR_NEXT,	/* local b (index) >= local b+1 (end) -> to a */
	OP_INC_L,	/* local slot a += 1 */
	OP_MMAP,	/* pop flags, len, hint; push the address */
	OP_MMAP_FILE,	/* pop off, file, flags, len, hint; push the address */
	OP_MUNMAP,	/* pop len, addr; push 0 */
	OP_MADVISE,	/* pop advice, len, addr; push 0 */
	OP_LOAD,	/* pop addr; push 0 or -1 (SIGSEGV) */
	OP_STORE,	/* pop addr; push 0 or -1 */
	OP_TOUCH,	/* pop rw, len, addr; push 0 or -1 */
	OP_TMPFILE,	/* pop size, fs; push a file handle */
	OP_FSYNC,	/* pop file; push 0 */
	OP_CLOSE,	/* pop file; push 0 */
	OP_SPAWN,	/* task a; b bit 0: pop cpu; bit 1: pop arg; push a handle */
	OP_FORK,	/* the same, as a new process */
	OP_JOIN,	/* pop a handle: wait for that task */
	OP_JOIN_ALL,	/* wait for every task this one started and did not join */
	OP_SIGNAL,	/* event a */
	OP_WAIT,	/* event a */
	OP_OPCOUNT,	/* one operation done (the ops metric) */
	OP_OVERHEAD,	/* the benchmark loop's own user time (user_loop_ns, jittered) */
	OP_COMPUTE,	/* pop ns: user time at a yield point */
	OP_EXIT,	/* the task ends here */
	OP_IMAGE,	/* pop pages: map the process image (glibc_image_map) */
	OP_USER_WORK,	/* pop pages: the loop's user working set (glibc_user_work) */
	OP_MPROTECT,	/* pop prot (read|write), len, addr; push 0 or -1 */
	OP_CLEAR_REFS,	/* pop type; push 0 or -1 (write to /proc/self/clear_refs) */
	OP_MREMAP,	/* pop new_len, old_len, addr; push the new address or -1 (MAYMOVE) */
	OP_MREMAP_FIXED,	/* pop new_addr, new_len, old_len, addr; same (MAYMOVE|FIXED) */
	OP_FTRUNCATE,	/* pop size, file; push 0 or -1 */
	OP_RECLAIM,	/* pop len, addr; push the pages reclaim freed, or -1 */
	OP_KSM_MERGE,	/* pop addr2, addr1; push 0 or -1 (ksmd merges the two pages) */
	OP_NUMA_SCAN,	/* pop misplaced, len, addr; push the PTEs made PROT_NONE, or -1 */
	OP_UFFD_WP,	/* pop mode, len, addr; push 0 or -1 (UFFDIO_WRITEPROTECT) */
	OP_PIN,		/* pop addr; push a pin handle or -1 (get_user_pages) */
	OP_UNPIN,	/* pop handle; push 0 or -1 (put_page of the pin) */
	OP_MIGRATE,	/* pop len, addr; push the pages a driver migrated, or -1 */
	OP_PFNMAP,	/* pop mixed, len, addr; push the address of a driver's PFN mapping */
	OP_DRIVER_UNMAP,	/* pop addr; push 0 or -1 (the driver revokes it, frees the PFNs) */
	OP_FAIL_TABLE_BATCH,	/* pop n; push 0 (the next n table batch pages fail) */
	OP_VMALLOC,	/* pop len; push the kernel address of a new vmalloc area */
	OP_VFREE,	/* pop addr; push 0 or -1 (not a live vmalloc area) */
	OP_VPURGE,	/* push 0 (the synchronous purge: flush and release the lazy areas) */
	OP_KLOAD,	/* pop addr; push 0, or -1 when no kernel page is mapped there */
	OP_COLLAPSE,	/* pop addr; push 1 (PTE table retracted), 0, or -1 */
	OP_GUP_FAST,	/* pop addr; push the pages GUP-fast got (0 or 1), or -1 */
	OP_SPLIT_HUGE_PMD,	/* pop addr; push 1 (a huge PMD split), 0, or -1 */
};

enum scen_word {
	W_NONE, W_SHARED, W_PRIVATE, W_DONTNEED, W_FREE, W_READ, W_WRITE, W_EXT4, W_TMPFS,
	W_HUGETLBFS, W_HUGEPAGE,
	W_COUNT
};

struct scen_op {
	uint16_t code;
	uint16_t col;
	uint32_t line;
	int64_t a;
	int32_t b;
	int32_t pad;
};

struct scen_task {
	char name[48];
	bool is_main;
	uint32_t entry;		/* index of its first op */
	int nlocals;		/* local 0 is `arg` */
	int line;
};

/* a global slot filled when a run starts */
enum scen_gkind { G_VAR, G_NUM_PARAM, G_WORD_PARAM, G_ITERS, G_THREADS, G_CPUS, G_PAGE };

struct scen_global {
	char name[48];
	enum scen_gkind kind;
	int param;		/* parameter index (params) */
	uint32_t words;		/* word parameters: the words allowed (bit per scen_word) */
};

#define SCEN_MAX_PARAMS TLBSIM_MAX_WPARAMS
#define SCEN_MAX_STACK 64
#define SCEN_MAX_TASK_DEFS 64
#define SCEN_MAX_EVENTS 64
#define SCEN_MAX_TASKS 4096	/* tasks started in one run, as --threads */
#define SCEN_MAX_LOOP 1000000000ll	/* iterations of one loop, as --iters */

#define SCEN_POLICY_LINE 2048	/* a `policy` line's knob list, bytes with its NUL */

/* a numeric parameter's text (decimal with a size suffix, or 0x hex) into
 * *out: 0, or -1 if it is none (vm.c; parse.c checks defaults with it) */
int scen_num_value(const char *txt, uint64_t *out);

struct scenario {
	struct workload_def def;	/* def.desc.name is name */
	char name[48];
	char description[256];
	char profile[64];
	char policy[8192];		/* kernel preset (< 4096 bytes), then the policy line */
	char check_wparams[256];
	struct tlbsim_wparam_desc params[SCEN_MAX_PARAMS];
	char pname[SCEN_MAX_PARAMS][48];
	char pdef[SCEN_MAX_PARAMS][80];
	char pmeaning[SCEN_MAX_PARAMS][128];
	int nparams;
	struct scen_global *globals;
	int nglobals;
	struct scen_task tasks[SCEN_MAX_TASK_DEFS];
	int ntasks;
	char events[SCEN_MAX_EVENTS][48];
	int nevents;
	struct scen_op *ops;
	uint32_t nops;
	struct scen_expect expect[SCEN_MAX_EXPECT];
	int nexpect;
	uint64_t time_limit_ms;
	enum tlbsim_memory_model memory_model;	/* `memory_model` (check's default) */
	char fname[256];		/* for run-time messages */
};

extern const char *const scen_word_names[W_COUNT];

/* vm.c: the workload_ops functions of a compiled scenario */
int scen_setup(struct sim *s, const struct tlbsim_resolved *r, void **state, char *err,
	       size_t errlen);
void scen_main(struct sim *s, struct sim_thread *t);

#endif
