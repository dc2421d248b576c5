/*
 * coro_aarch64.S - context switch for AArch64 AAPCS64 (ELF, LP64).
 * Assembles to nothing (apart from the GNU-stack note) on other targets.
 *
 * Saved frame, built by coro_ctx_swap on the suspended stack (sp -> +0),
 * 160 bytes so sp stays 16-byte aligned:
 *     +0  x19 x20   +16 x21 x22   +32 x23 x24   +48 x25 x26   +64 x27 x28
 *     +80 x29 x30(lr)
 *     +96 d8 d9     +112 d10 d11  +128 d12 d13  +144 d14 d15
 * These are exactly the callee-saved registers of AAPCS64 (only the low 64
 * bits of v8-v15 are callee-saved).  FPCR is treated as thread-global state
 * and is not switched.
 */
#if defined(__aarch64__) && !defined(__ILP32__) && defined(__ELF__) && \
    !defined(CORO_FORCE_UCONTEXT)

        .text

/* void coro_ctx_swap(void **save_sp [x0], void *new_sp [x1]); */
        .globl  coro_ctx_swap
        .hidden coro_ctx_swap
        .type   coro_ctx_swap, %function
        .p2align 4
coro_ctx_swap:
        sub     sp, sp, #160
        stp     x19, x20, [sp, #0]
        stp     x21, x22, [sp, #16]
        stp     x23, x24, [sp, #32]
        stp     x25, x26, [sp, #48]
        stp     x27, x28, [sp, #64]
        stp     x29, x30, [sp, #80]
        stp     d8,  d9,  [sp, #96]
        stp     d10, d11, [sp, #112]
        stp     d12, d13, [sp, #128]
        stp     d14, d15, [sp, #144]

        mov     x2, sp
        str     x2, [x0]                /* from->sp = sp */
        mov     sp, x1                  /* sp = to->sp   */

        ldp     x19, x20, [sp, #0]
        ldp     x21, x22, [sp, #16]
        ldp     x23, x24, [sp, #32]
        ldp     x25, x26, [sp, #48]
        ldp     x27, x28, [sp, #64]
        ldp     x29, x30, [sp, #80]
        ldp     d8,  d9,  [sp, #96]
        ldp     d10, d11, [sp, #112]
        ldp     d12, d13, [sp, #128]
        ldp     d14, d15, [sp, #144]
        add     sp, sp, #160
        ret                             /* to x30 of the resumed context */
        .size   coro_ctx_swap, .-coro_ctx_swap

/* void *coro_ctx_init(void *stack_top [x0], void *arg [x1],
 *                     void (*fn)(void *) [x2]);
 * stack_top must be 16-byte aligned.  Writes a 160-byte frame just below it
 * with x19 = arg, x20 = fn, x30 = coro_ctx_entry, everything else 0, and
 * returns its address.  After coro_ctx_swap pops it, sp = stack_top. */
        .globl  coro_ctx_init
        .hidden coro_ctx_init
        .type   coro_ctx_init, %function
        .p2align 4
coro_ctx_init:
        sub     x3, x0, #160
        stp     x1,  x2,  [x3, #0]      /* x19 = arg, x20 = fn */
        stp     xzr, xzr, [x3, #16]
        stp     xzr, xzr, [x3, #32]
        stp     xzr, xzr, [x3, #48]
        stp     xzr, xzr, [x3, #64]
        adr     x4, coro_ctx_entry
        stp     xzr, x4,  [x3, #80]     /* x29 = 0, x30 = entry */
        stp     xzr, xzr, [x3, #96]
        stp     xzr, xzr, [x3, #112]
        stp     xzr, xzr, [x3, #128]
        stp     xzr, xzr, [x3, #144]
        mov     x0, x3
        ret
        .size   coro_ctx_init, .-coro_ctx_init

/* First code run on a new stack: fn(arg).  fn (the C trampoline) never
 * returns; trap if it does.  x29 = 0 and the undefined lr end backtraces. */
        .type   coro_ctx_entry, %function
        .p2align 4
coro_ctx_entry:
        .cfi_startproc
        .cfi_undefined x30
        mov     x29, xzr
        mov     x0, x19
        blr     x20
        brk     #0x3c
        .cfi_endproc
        .size   coro_ctx_entry, .-coro_ctx_entry

#endif

#if defined(__ELF__)
        .section .note.GNU-stack, "", %progbits
#endif
