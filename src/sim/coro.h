/*
 * coro.h - minimal stackful coroutines (symmetric transfer) for tlbsim.
 *
 * What it does
 *   A `struct coro` is an execution context.  coro_init_main() wraps the
 *   calling thread's current stack (the "main" or scheduler context);
 *   coro_create() makes a new context with its own mmap'ed stack.
 *   coro_switch(from, to) saves the running context into `from` and resumes
 *   `to`.  There is no scheduler and no hidden state: the caller decides who
 *   runs next.
 *
 *   Back ends (chosen at build time in coro.c):
 *     - x86-64 SysV   : coro_x86_64.S  (rbx rbp r12-r15; the FP control state is shared)
 *     - AArch64 AAPCS : coro_aarch64.S (x19-x29, lr, sp, d8-d15)
 *     - anything else : POSIX ucontext (getcontext/makecontext/swapcontext).
 *       Define CORO_FORCE_UCONTEXT to use it on x86-64/AArch64 (testing only).
 *   AddressSanitizer fiber annotations are compiled in automatically under
 *   -fsanitize=address; Valgrind stack registration whenever
 *   <valgrind/valgrind.h> exists (define CORO_NO_VALGRIND to opt out).
 *
 * Invariants
 *   - No global or thread-local mutable state: every piece of bookkeeping,
 *     including AddressSanitizer's fake-stack pointer, lives in struct coro.
 *     Any number of independent schedulers may coexist in one process.
 *   - A context is either running (exactly one per thread), suspended (its
 *     registers are saved on its own stack and `sp` points at them), or
 *     finished.  Only a suspended context may be switched to; never switch to
 *     the running context or to a finished one.
 *   - A coroutine is bound to the thread it first runs on (sanitizer state is
 *     per thread); switches happen between contexts of one thread only.
 *   - A struct coro must not be moved or copied after coro_create() (its
 *     address is baked into the new stack); a main context must not be moved
 *     while suspended.
 *   - The first switch into a new coroutine enters a trampoline that calls
 *     fn(arg) with the ABI-mandated stack alignment (16 bytes at the call).
 *     When fn returns the trampoline sets `finished = 1` and switches to
 *     `return_to`, which therefore must be set before fn can return.  A
 *     coroutine never returns off the end of its stack.
 *   - Each stack has a PROT_NONE guard page directly below it, so an overflow
 *     faults instead of silently corrupting a neighbouring mapping.
 *   - coro_destroy() may be called on a never-started, suspended or finished
 *     coroutine (never on the running one), on a main context (no-op) and more
 *     than once.  A suspended coroutine's frames are simply discarded: no
 *     destructors/cleanup run for them.
 *   - The struct layout does not depend on sanitizer or back-end settings, so
 *     translation units built with and without ASan agree on it.
 */
#ifndef TLBSIM_SIM_CORO_H
#define TLBSIM_SIM_CORO_H

#include <stddef.h>

/* Requests below this are rounded up (fn, the trampoline and libc need room). */
#define CORO_MIN_STACK_SIZE ((size_t)16 * 1024)

struct coro {           /* opaque-ish; fields are the module's business */
    void *sp;           /* saved stack pointer (ucontext back end: saved ucontext_t *) */
    void *stack_base; size_t stack_size; /* mapping incl. guard (NULL/0 for main) */
    void (*fn)(void *arg); void *arg;
    struct coro *return_to;   /* switched to when fn returns */
    int finished;

    /* --- private bookkeeping, do not touch --- */
    size_t guard_size;        /* bytes of PROT_NONE at stack_base */
    unsigned valgrind_id;     /* VALGRIND_STACK_REGISTER id (0 if none) */
    void *asan_fake_stack;    /* ASan fake stack saved while suspended */
    const void *asan_bottom;  /* lowest address of the usable stack */
    size_t asan_size;         /* usable stack size (main: learned on first switch) */
    struct coro *asan_prev;   /* context that switched to this one last */
};

/* A stack mapping: guard page (PROT_NONE) at base, then the usable stack. */
struct coro_stack {
    void *base;
    size_t size;    /* whole mapping, guard included */
    size_t guard;
    /* bytes left unused at the mapping's top: the stack starts that far
     * below it (a multiple of 16, under half the usable stack; 0 from
     * coro_stack_map and coro_release). Stacks whose tops sit at the same
     * offset in a page put their hottest frames in the same L1 sets;
     * giving each a different skew spreads them (coro_stack_skew). */
    size_t skew;
};
/* Map a stack of stack_size usable bytes (rounded up to pages) plus a guard page.
 * 0, or -1 with errno set. */
int coro_stack_map(struct coro_stack *st, size_t stack_size);
void coro_stack_unmap(struct coro_stack *st);
/* A skew for the i-th of a set of stacks: the bit-reversal of i's low 6
 * bits, in 64-byte lines, so any run of consecutive i spreads evenly over
 * a 4 KiB page (i = 0, 1, 2, 3: 0, 2048, 1024, 3072 bytes). */
size_t coro_stack_skew(unsigned i);

/* Initialise a context representing the calling thread (main/scheduler); no stack allocated. */
void coro_init_main(struct coro *c);
/* Create a coroutine with its own stack of stack_size bytes (rounded up to pages, plus one guard page).
 * Returns 0 or -1 (errno set) on allocation failure. It starts running fn(arg) on the first coro_switch to it.
 * When fn returns, c->finished = 1 and control switches to c->return_to (must be set before). */
int coro_create(struct coro *c, size_t stack_size, void (*fn)(void *), void *arg);
/* As coro_create, on a stack mapped by coro_stack_map (or taken back by coro_release);
 * the coroutine owns the mapping until coro_destroy or coro_release. */
int coro_create_on(struct coro *c, const struct coro_stack *st, void (*fn)(void *), void *arg);
/* Save the current context into `from` and resume `to`. Returns when someone switches back to `from`. */
void coro_switch(struct coro *from, struct coro *to);
/* Free the stack. Must not be called on the running coroutine. Safe on a finished coroutine or one never started. */
void coro_destroy(struct coro *c);
/* As coro_destroy, but hand the stack mapping to *st instead of unmapping it
 * (st zeroed for a context without a stack). */
void coro_release(struct coro *c, struct coro_stack *st);

#endif /* TLBSIM_SIM_CORO_H */
