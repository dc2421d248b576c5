/*
 * coro_x86_64.S - context switch for x86-64 System V (ELF, LP64).
 * Assembles to nothing (apart from the GNU-stack note) on other targets.
 *
 * Saved frame, built by coro_ctx_swap on the suspended stack (sp -> +0):
 *     +0   r15   +8  r14   +16 r13   +24 r12   +32 rbx   +40 rbp
 *     +48  return address
 * Only callee-saved registers are kept (SysV ABI 3.2.1): everything else is
 * already dead at the call site of coro_ctx_swap. The floating-point
 * control state (MXCSR, x87 control word) is not switched: all contexts
 * share the host thread's, and none changes it (tlbsim sets no rounding
 * mode or exception mask), so saving and reloading it at every switch
 * (ldmxcsr and fldcw are slow, microcoded) only ever restored the value
 * that was there.
 */
#if defined(__x86_64__) && !defined(__ILP32__) && defined(__ELF__) && \
    !defined(CORO_FORCE_UCONTEXT)

        .text

/* void coro_ctx_swap(void **save_sp [rdi], void *new_sp [rsi]);
 * Push callee-saved state, store rsp to *save_sp, switch to new_sp, pop the
 * state saved there and return into the resumed context. */
        .globl  coro_ctx_swap
        .hidden coro_ctx_swap
        .type   coro_ctx_swap, @function
        .p2align 4
coro_ctx_swap:
        pushq   %rbp
        pushq   %rbx
        pushq   %r12
        pushq   %r13
        pushq   %r14
        pushq   %r15

        movq    %rsp, (%rdi)            /* from->sp = rsp */
        movq    %rsi, %rsp              /* rsp = to->sp   */

        popq    %r15
        popq    %r14
        popq    %r13
        popq    %r12
        popq    %rbx
        popq    %rbp
        ret
        .size   coro_ctx_swap, .-coro_ctx_swap

/* void *coro_ctx_init(void *stack_top [rdi], void *arg [rsi],
 *                     void (*fn)(void *) [rdx]);
 * stack_top must be 16-byte aligned.  Writes a frame that coro_ctx_swap will
 * "return" through into coro_ctx_entry with r12 = arg, r13 = fn, and returns
 * the initial saved stack pointer.  Layout (72 bytes below top):
 *     +0..+47 as above (r12 = arg, r13 = fn, rest 0),
 *     +48 &coro_ctx_entry, +56..+71 zero padding.
 * After the `ret` rsp = top - 16, so the `call` in coro_ctx_entry is made
 * with a 16-byte aligned rsp as the ABI requires. */
        .globl  coro_ctx_init
        .hidden coro_ctx_init
        .type   coro_ctx_init, @function
        .p2align 4
coro_ctx_init:
        leaq    -72(%rdi), %rax
        movq    $0, (%rax)              /* r15 */
        movq    $0, 8(%rax)             /* r14 */
        movq    %rdx, 16(%rax)          /* r13 = fn  */
        movq    %rsi, 24(%rax)          /* r12 = arg */
        movq    $0, 32(%rax)            /* rbx */
        movq    $0, 40(%rax)            /* rbp */
        leaq    coro_ctx_entry(%rip), %rcx
        movq    %rcx, 48(%rax)          /* return address */
        movq    $0, 56(%rax)
        movq    $0, 64(%rax)
        ret
        .size   coro_ctx_init, .-coro_ctx_init

/* First code run on a new stack: fn(arg).  fn (the C trampoline) never
 * returns; trap if it does.  rbp = 0 and the undefined return address end
 * frame-pointer and CFI based backtraces here. */
        .type   coro_ctx_entry, @function
        .p2align 4
coro_ctx_entry:
        .cfi_startproc
        .cfi_undefined rip
        xorl    %ebp, %ebp
        movq    %r12, %rdi
        call    *%r13
        ud2
        .cfi_endproc
        .size   coro_ctx_entry, .-coro_ctx_entry

#endif

#if defined(__ELF__)
        .section .note.GNU-stack, "", %progbits
#endif
