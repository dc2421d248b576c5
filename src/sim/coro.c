/*
 * coro.c - stack management, sanitizer annotations and the start trampoline
 * for the coroutines declared in coro.h.  The register switch itself lives in
 * coro_x86_64.S / coro_aarch64.S; other targets use ucontext.
 *
 * Stack mapping (one mmap per coroutine, addresses grow upwards):
 *
 *   stack_base                stack_base + guard_size     stack_base + stack_size
 *   | guard page (PROT_NONE)  | usable stack ... <- grows down        top |
 *
 * ASan fiber protocol: every switch is bracketed by
 *   __sanitizer_start_switch_fiber(&from->asan_fake_stack, to's stack bounds)
 *   ... switch ...
 *   __sanitizer_finish_switch_fiber(self->asan_fake_stack, &prev bounds)
 * where the finish call runs in the resumed context.  A main context does not
 * know its own stack bounds; ASan reports them to the first context it
 * switches to, which stores them into the main context via `asan_prev`.
 * A finishing coroutine passes NULL as save slot so ASan frees its fake stack;
 * the fake stack of a coroutine destroyed while suspended is not reclaimed
 * (only matters with ASAN_OPTIONS=detect_stack_use_after_return=1).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE 1
#endif

#include "coro.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* ---- back-end selection (must match the #if in the .S files) ---------- */
#if !defined(CORO_FORCE_UCONTEXT) && defined(__ELF__) && !defined(__ILP32__) && \
    (defined(__x86_64__) || defined(__aarch64__))
#define CORO_ASM 1
#else
#define CORO_ASM 0
#include <ucontext.h>
#endif

/* ---- sanitizer / valgrind detection ------------------------------------ */
#if defined(__SANITIZE_ADDRESS__)
#define CORO_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CORO_ASAN 1
#endif
#endif
#ifndef CORO_ASAN
#define CORO_ASAN 0
#endif

#if CORO_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

#define CORO_VALGRIND 0
#if !defined(CORO_NO_VALGRIND) && defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#undef CORO_VALGRIND
#define CORO_VALGRIND 1
#endif
#endif

#if CORO_ASM
/* Implemented in coro_<arch>.S; see the frame layout described there. */
void coro_ctx_swap(void **save_sp, void *new_sp);
void *coro_ctx_init(void *stack_top, void *arg, void (*fn)(void *));
#endif

/* ---- sanitizer hooks around the raw switch ------------------------------ */

/* Called in the outgoing context right before the raw switch.  `save` is
 * where ASan stores the outgoing fake stack; NULL means "never resumed". */
static inline void asan_before(struct coro *from, struct coro *to, void **save)
{
#if CORO_ASAN
    to->asan_prev = from;
    __sanitizer_start_switch_fiber(save, to->asan_bottom, to->asan_size);
#else
    (void)from; (void)to; (void)save;
#endif
}

/* Called in the incoming context right after the raw switch (or first thing
 * in the trampoline).  Learns a main context's stack bounds from ASan. */
static inline void asan_after(struct coro *self)
{
#if CORO_ASAN
    const void *prev_bottom = NULL;
    size_t prev_size = 0;
    __sanitizer_finish_switch_fiber(self->asan_fake_stack, &prev_bottom, &prev_size);
    struct coro *prev = self->asan_prev;
    if (prev != NULL && prev->stack_base == NULL) {
        prev->asan_bottom = prev_bottom;
        prev->asan_size = prev_size;
    }
#else
    (void)self;
#endif
}

/* Poison-free stack memory: frames abandoned on a coroutine stack leave ASan
 * redzones behind that would otherwise outlive the mapping. */
static inline void asan_unpoison(const void *p, size_t n)
{
#if CORO_ASAN
    __asan_unpoison_memory_region(p, n);
#else
    (void)p; (void)n;
#endif
}

/* ---- raw switch ---------------------------------------------------------- */

static inline void raw_switch(struct coro *from, struct coro *to)
{
#if CORO_ASM
    coro_ctx_swap(&from->sp, to->sp);
#else
    /* The outgoing context lives in this frame, which stays alive exactly as
     * long as `from` is suspended in here. */
    ucontext_t here;
    /* cppcheck-suppress autoVariables */
    from->sp = &here;
    if (swapcontext(&here, (ucontext_t *)to->sp) != 0)
        abort();
#endif
}

/* ---- trampoline ------------------------------------------------------------ */

/* First function run on a new stack (called from coro_ctx_entry or via
 * makecontext).  Runs fn(arg), then leaves for good. */
static _Noreturn void coro_trampoline(void *arg)
{
    struct coro *c = arg;
    asan_after(c);
    c->fn(c->arg);

    c->finished = 1;
    struct coro *to = c->return_to;
    if (to == NULL)
        abort();                    /* contract violation: nowhere to go */
    asan_before(c, to, NULL);       /* NULL: ASan drops our fake stack */
    raw_switch(c, to);
    abort();                        /* a finished coroutine was resumed */
}

#if !CORO_ASM
/* getcontext() only initialises the ucontext_t for makecontext(); the saved
 * context itself is never resumed.  Keeping the returns_twice call in its own
 * frame spares coro_create() from -Wclobbered trouble. */
static __attribute__((noinline)) int uc_init(ucontext_t *uc)
{
    return getcontext(uc);
}

/* makecontext only passes int arguments: split the pointer in two halves. */
static void uc_entry(unsigned hi, unsigned lo)
{
    uintptr_t p = (uintptr_t)(((uint64_t)hi << 32) | (uint64_t)lo);
    coro_trampoline((void *)p);
}
#endif

/* ---- public API -------------------------------------------------------- */

void coro_init_main(struct coro *c)
{
    memset(c, 0, sizeof *c);        /* no stack; ASan bounds learned later */
}

int coro_stack_map(struct coro_stack *st, size_t stack_size)
{
    memset(st, 0, sizeof *st);
    long pg = sysconf(_SC_PAGESIZE);
    size_t page = pg > 0 ? (size_t)pg : 4096;

    if (stack_size < CORO_MIN_STACK_SIZE)
        stack_size = CORO_MIN_STACK_SIZE;
    if (stack_size > SIZE_MAX - 2 * page) {
        errno = ENOMEM;
        return -1;
    }
    size_t usable = (stack_size + page - 1) & ~(page - 1);
    size_t total = usable + page;

    int flags = MAP_PRIVATE | MAP_ANONYMOUS;
#ifdef MAP_NORESERVE
    flags |= MAP_NORESERVE;
#endif
#ifdef MAP_STACK
    flags |= MAP_STACK;
#endif
    char *base = mmap(NULL, total, PROT_READ | PROT_WRITE, flags, -1, 0);
    if (base == MAP_FAILED)
        return -1;                  /* errno from mmap */
    if (mprotect(base, page, PROT_NONE) != 0) {
        int e = errno;
        munmap(base, total);
        errno = e;
        return -1;
    }
    st->base = base;
    st->size = total;
    st->guard = page;
    return 0;
}

size_t coro_stack_skew(unsigned i)
{
    unsigned r = 0;
    for (int b = 0; b < 6; b++)
        r |= ((i >> b) & 1u) << (5 - b);
    return (size_t)r * 64;
}

void coro_stack_unmap(struct coro_stack *st)
{
    if (st->base)
        munmap(st->base, st->size);
    memset(st, 0, sizeof *st);
}

int coro_create(struct coro *c, size_t stack_size, void (*fn)(void *), void *arg)
{
    struct coro_stack st;
    if (coro_stack_map(&st, stack_size) != 0) {
        memset(c, 0, sizeof *c);
        return -1;
    }
    if (coro_create_on(c, &st, fn, arg) != 0) {
        coro_stack_unmap(&st);
        return -1;
    }
    return 0;
}

int coro_create_on(struct coro *c, const struct coro_stack *st, void (*fn)(void *), void *arg)
{
    memset(c, 0, sizeof *c);
    char *base = st->base;
    size_t total = st->size, page = st->guard, usable = total - page;
    if (st->skew % 16 || st->skew >= usable / 2) {
        errno = EINVAL;
        return -1;
    }
    char *lo = base + page, *top = base + total - st->skew;
    asan_unpoison(lo, usable);      /* address may carry stale shadow */

    c->stack_base = base;
    c->stack_size = total;
    c->guard_size = page;
    c->fn = fn;
    c->arg = arg;

#if CORO_ASM
    c->sp = coro_ctx_init(top, c, coro_trampoline);
#else
    /* Keep the ucontext_t at the top of the mapping, the stack below it. */
    size_t ucsz = (sizeof(ucontext_t) + 63) & ~(size_t)63;
    ucontext_t *uc = (ucontext_t *)(void *)(top - ucsz);
    if (ucsz >= usable / 2 || uc_init(uc) != 0) {
        memset(c, 0, sizeof *c);
        errno = ENOMEM;
        return -1;
    }
    top -= ucsz;
    uc->uc_stack.ss_sp = lo;
    uc->uc_stack.ss_size = (size_t)(top - lo);
    uc->uc_link = NULL;
    uintptr_t p = (uintptr_t)c;
    makecontext(uc, (void (*)(void))uc_entry, 2,
                (unsigned)((uint64_t)p >> 32), (unsigned)(p & 0xffffffffu));
    c->sp = uc;
#endif

    c->asan_bottom = lo;
    c->asan_size = (size_t)(top - lo);
#if CORO_VALGRIND
    c->valgrind_id = VALGRIND_STACK_REGISTER(lo, top);
#endif
    return 0;
}

void coro_switch(struct coro *from, struct coro *to)
{
    asan_before(from, to, &from->asan_fake_stack);
    raw_switch(from, to);
    asan_after(from);
}

void coro_release(struct coro *c, struct coro_stack *st)
{
    memset(st, 0, sizeof *st);
    if (c->stack_base == NULL)
        return;                     /* main context or already destroyed */
#if CORO_VALGRIND
    VALGRIND_STACK_DEREGISTER(c->valgrind_id);
#endif
    asan_unpoison((char *)c->stack_base + c->guard_size,
                  c->stack_size - c->guard_size);
    st->base = c->stack_base;
    st->size = c->stack_size;
    st->guard = c->guard_size;
    c->stack_base = NULL;
    c->stack_size = 0;
    c->sp = NULL;
    c->valgrind_id = 0;
}

void coro_destroy(struct coro *c)
{
    struct coro_stack st;
    coro_release(c, &st);
    coro_stack_unmap(&st);
}
