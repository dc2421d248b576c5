/*
 * coro_x86_64.S - context switch for x86-64 System V (ELF, LP64).
 * Assembles to nothing (apart from the GNU-stack note) on other targets.
 *
 * Saved frame, built by coro_ctx_swap on the suspended stack (sp -> +0):
 *     +0   MXCSR (32 bit, control bits)  +4  x87 control word (16 bit)
 *     +8   r15   +16 r14   +24 r13   +32 r12   +40 rbx   +48 rbp
 *     +56  return address
 * Only callee-saved state is kept (SysV ABI 3.2.1): everything else is
 * already dead at the call site of coro_ctx_swap.
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
        subq    $8, %rsp
        stmxcsr (%rsp)
        fnstcw  4(%rsp)

        movq    %rsp, (%rdi)            /* from->sp = rsp */
        movq    %rsi, %rsp              /* rsp = to->sp   */

        ldmxcsr (%rsp)
        fldcw   4(%rsp)
        addq    $8, %rsp
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
 * the initial saved stack pointer.  MXCSR control bits and the x87 control
 * word are inherited from the creator.  Layout (80 bytes below top):
 *     +0..+55 as above (r12 = arg, r13 = fn, rest 0),
 *     +56 &coro_ctx_entry, +64..+79 zero padding.
 * After the `ret` rsp = top - 16, so the `call` in coro_ctx_entry is made
 * with a 16-byte aligned rsp as the ABI requires. */
        .globl  coro_ctx_init
        .hidden coro_ctx_init
        .type   coro_ctx_init, @function
        .p2align 4
coro_ctx_init:
        leaq    -80(%rdi), %rax
        movq    $0, (%rax)
        stmxcsr (%rax)
        andl    $0xffc0, (%rax)         /* drop sticky exception flags */
        fnstcw  4(%rax)
        movq    $0, 8(%rax)             /* r15 */
        movq    $0, 16(%rax)            /* r14 */
        movq    %rdx, 24(%rax)          /* r13 = fn  */
        movq    %rsi, 32(%rax)          /* r12 = arg */
        movq    $0, 40(%rax)            /* rbx */
        movq    $0, 48(%rax)            /* rbp */
        leaq    coro_ctx_entry(%rip), %rcx
        movq    %rcx, 56(%rax)          /* return address */
        movq    $0, 64(%rax)
        movq    $0, 72(%rax)
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
