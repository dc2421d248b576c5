/*
 * test_coro.c - unit tests for src/sim/coro.{h,c} and the assembly switches.
 *
 * Covered: register/local preservation across ping-pong switches, ABI stack
 * alignment inside coroutines, return_to handling and `finished`, chained
 * returns, many coroutines created/destroyed (started, suspended and never
 * started), deep recursion with a suspension at maximum depth, longjmp
 * within a coroutine stack, two independent schedulers interleaved (flat and
 * nested), the guard page, and a stack handed from one coroutine to the
 * next (coro_release / coro_create_on), the first abandoned mid-run, and
 * the stack skew (coro_stack_skew, coro_stack.skew).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE 1
#endif

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/coro.h"

#define STACK (64 * 1024)

/* ---- ping-pong: registers and locals survive switches ------------------ */

#define NPP 4
#define ROUNDS 200

struct pp {
    struct coro *main, self;
    int id;
    long counter;
    int aligned_ok;
};

/* Values are re-read from volatile memory when checked, so the compiler must
 * keep every one of them live across coro_switch: more of them than there are
 * callee-saved registers, so all of those get used.  Main and each coroutine
 * hold different values, so a register the switch fails to restore shows up
 * as a mismatch on one side or the other. */
static volatile long seeds[8] = { 11, 22, 33, 44, 55, 66, 77, 88 };
#define LIVE_DECL(k)  long v0 = seeds[0] + (k), v1 = seeds[1] + (k), \
    v2 = seeds[2] + (k), v3 = seeds[3] + (k), v4 = seeds[4] + (k), \
    v5 = seeds[5] + (k), v6 = seeds[6] + (k), v7 = seeds[7] + (k); \
    double f0 = (double)seeds[0] * 0.5 + (k), f1 = (double)seeds[1] * 0.5 + (k), \
    f2 = (double)seeds[2] * 0.5 + (k), f3 = (double)seeds[3] * 0.5 + (k), \
    f4 = (double)seeds[4] * 0.5 + (k), f5 = (double)seeds[5] * 0.5 + (k), \
    f6 = (double)seeds[6] * 0.5 + (k), f7 = (double)seeds[7] * 0.5 + (k)
#define LIVE_OK(k)  (v0 == seeds[0] + (k) && v1 == seeds[1] + (k) && \
    v2 == seeds[2] + (k) && v3 == seeds[3] + (k) && v4 == seeds[4] + (k) && \
    v5 == seeds[5] + (k) && v6 == seeds[6] + (k) && v7 == seeds[7] + (k) && \
    f0 == (double)seeds[0] * 0.5 + (k) && \
    f1 == (double)seeds[1] * 0.5 + (k) && \
    f2 == (double)seeds[2] * 0.5 + (k) && \
    f3 == (double)seeds[3] * 0.5 + (k) && \
    f4 == (double)seeds[4] * 0.5 + (k) && \
    f5 == (double)seeds[5] * 0.5 + (k) && \
    f6 == (double)seeds[6] * 0.5 + (k) && \
    f7 == (double)seeds[7] * 0.5 + (k))

static void pp_fn(void *arg)
{
    struct pp *p = arg;
    LIVE_DECL(p->id * 1000);
    char buf[64];

    /* Correct 16-byte alignment at call: libc's printf uses aligned SSE
     * stores for doubles and would crash otherwise. */
    snprintf(buf, sizeof buf, "%.2f", 1.5);
    p->aligned_ok = strcmp(buf, "1.50") == 0;

    for (int r = 0; r < ROUNDS; r++) {
        p->counter++;
        coro_switch(&p->self, p->main);
        if (!LIVE_OK(p->id * 1000))     /* no cmocka asserts off the main stack */
            p->counter = -1000000;
    }
}

static void test_pingpong(void **state)
{
    (void)state;
    struct coro m;
    struct pp p[NPP];
    coro_init_main(&m);
    for (int i = 0; i < NPP; i++) {
        p[i].main = &m;
        p[i].id = i;
        p[i].counter = 0;
        p[i].aligned_ok = 0;
        assert_int_equal(coro_create(&p[i].self, STACK, pp_fn, &p[i]), 0);
        p[i].self.return_to = &m;
    }

    LIVE_DECL(-1);
    for (int r = 0; r <= ROUNDS; r++) {
        for (int i = 0; i < NPP; i++) {
            coro_switch(&m, &p[i].self);
            assert_true(LIVE_OK(-1));
        }
    }
    for (int i = 0; i < NPP; i++) {
        assert_int_equal(p[i].counter, ROUNDS);
        assert_true(p[i].aligned_ok);
        assert_true(p[i].self.finished);
        coro_destroy(&p[i].self);
    }
}

/* ---- return_to -------------------------------------------------------- */

static void set_flag(void *arg) { *(int *)arg += 1; }

static void test_return_to(void **state)
{
    (void)state;
    struct coro m, c;
    int flag = 0;
    coro_init_main(&m);
    assert_int_equal(coro_create(&c, STACK, set_flag, &flag), 0);
    c.return_to = &m;
    assert_false(c.finished);
    coro_switch(&m, &c);
    assert_int_equal(flag, 1);
    assert_true(c.finished);
    coro_destroy(&c);
    coro_destroy(&c);               /* idempotent */
    coro_destroy(&m);               /* no-op on main */
}

/* A returns into B (never started), B returns into main. */
static void test_return_chain(void **state)
{
    (void)state;
    struct coro m, a, b;
    int flag = 0;
    coro_init_main(&m);
    assert_int_equal(coro_create(&a, STACK, set_flag, &flag), 0);
    assert_int_equal(coro_create(&b, STACK, set_flag, &flag), 0);
    a.return_to = &b;
    b.return_to = &m;
    coro_switch(&m, &a);
    assert_int_equal(flag, 2);
    assert_true(a.finished && b.finished);
    coro_destroy(&a);
    coro_destroy(&b);
}

/* ---- many coroutines ------------------------------------------------------ */

#define NMANY 1000

struct many { struct coro *main, self; int hits; };

static void many_fn(void *arg)
{
    struct many *w = arg;
    w->hits++;
    coro_switch(&w->self, w->main);
    w->hits++;
}

static void test_thousand(void **state)
{
    (void)state;
    struct coro m;
    struct many *w = calloc(NMANY, sizeof *w);
    assert_non_null(w);
    coro_init_main(&m);
    for (int i = 0; i < NMANY; i++) {
        w[i].main = &m;
        assert_int_equal(coro_create(&w[i].self, 16 * 1024, many_fn, &w[i]), 0);
        w[i].self.return_to = &m;
    }
    /* Thirds: run to completion, suspend once, never start. */
    for (int i = 0; i < NMANY; i++) {
        if (i % 3 == 2)
            continue;
        coro_switch(&m, &w[i].self);
        if (i % 3 == 0)
            coro_switch(&m, &w[i].self);
    }
    for (int i = 0; i < NMANY; i++) {
        assert_int_equal(w[i].hits, (i % 3 == 0) ? 2 : (i % 3 == 1) ? 1 : 0);
        assert_int_equal(w[i].self.finished, i % 3 == 0);
        coro_destroy(&w[i].self);
    }
    free(w);
}

/* ---- deep recursion ------------------------------------------------------ */

struct deep { struct coro *main, self; long result; };

static long recurse(struct deep *dp, int n)
{
    volatile char pad[128];         /* make each frame take real stack */
    pad[0] = (char)n;
    pad[127] = (char)(n >> 1);
    if (n == 0) {
        coro_switch(&dp->self, dp->main);   /* suspend at maximum depth */
        return 0;
    }
    long r = recurse(dp, n - 1);
    return r + pad[0] + pad[127] + 1;
}

#define DEPTH 1500

static void deep_fn(void *arg)
{
    struct deep *dp = arg;
    dp->result = recurse(dp, DEPTH);
}

static void test_deep_recursion(void **state)
{
    (void)state;
    struct coro m;
    struct deep dp = { &m, { 0 }, -1 };
    long expect = 0;
    for (int n = 1; n <= DEPTH; n++)
        expect += (char)n + (char)(n >> 1) + 1;

    coro_init_main(&m);
    assert_int_equal(coro_create(&dp.self, 1024 * 1024, deep_fn, &dp), 0);
    dp.self.return_to = &m;
    coro_switch(&m, &dp.self);
    assert_false(dp.self.finished);
    coro_switch(&m, &dp.self);
    assert_true(dp.self.finished);
    assert_int_equal(dp.result, expect);
    coro_destroy(&dp.self);
}

/* ---- longjmp inside a coroutine ------------------------------------------ */

/* longjmp is noreturn: under ASan it unpoisons the current stack, which is
 * only quiet when ASan knows the coroutine's stack bounds. */
struct jmp { struct coro *main, self; jmp_buf env; int stage; };

static int jump_from_depth(struct jmp *j, int n)
{
    volatile char pad[64];
    pad[0] = (char)n;
    if (n == 0) {
        if (j->stage == 0)          /* always true; keeps a returning path */
            longjmp(j->env, 1);
        return 0;
    }
    return jump_from_depth(j, n - 1) + pad[0];
}

static void jmp_fn(void *arg)
{
    struct jmp *j = arg;
    if (setjmp(j->env) == 0)
        (void)jump_from_depth(j, 50);
    j->stage = 1;
    coro_switch(&j->self, j->main);
    j->stage = 2;
}

static void test_longjmp_inside(void **state)
{
    (void)state;
    struct coro m;
    struct jmp *j = calloc(1, sizeof *j);
    assert_non_null(j);
    coro_init_main(&m);
    j->main = &m;
    assert_int_equal(coro_create(&j->self, STACK, jmp_fn, j), 0);
    j->self.return_to = &m;
    coro_switch(&m, &j->self);
    assert_int_equal(j->stage, 1);
    coro_switch(&m, &j->self);
    assert_int_equal(j->stage, 2);
    assert_true(j->self.finished);
    coro_destroy(&j->self);
    free(j);
}

/* ---- two independent schedulers ------------------------------------------ */

#define NW 3
#define STEPS 5

struct sched {
    struct coro main;
    struct worker { struct sched *s; struct coro self; int id; } w[NW];
    int log[NW * STEPS];
    int nlog;
    int tag;
};

static void worker_fn(void *arg)
{
    struct worker *w = arg;
    for (int k = 0; k < STEPS; k++) {
        w->s->log[w->s->nlog++] = w->s->tag * 100 + w->id * 10 + k;
        coro_switch(&w->self, &w->s->main);
    }
}

static void sched_init(struct sched *s, int tag)
{
    memset(s, 0, sizeof *s);
    s->tag = tag;
    coro_init_main(&s->main);
    for (int i = 0; i < NW; i++) {
        s->w[i].s = s;
        s->w[i].id = i;
        assert_int_equal(coro_create(&s->w[i].self, STACK, worker_fn, &s->w[i]), 0);
        s->w[i].self.return_to = &s->main;
    }
}

/* One round: resume every unfinished worker once. Returns workers resumed. */
static int sched_round(struct sched *s)
{
    int ran = 0;
    for (int i = 0; i < NW; i++) {
        if (!s->w[i].self.finished) {
            coro_switch(&s->main, &s->w[i].self);
            ran++;
        }
    }
    return ran;
}

static void sched_check_fini(struct sched *s)
{
    assert_int_equal(s->nlog, NW * STEPS);
    for (int k = 0; k < STEPS; k++)
        for (int i = 0; i < NW; i++)
            assert_int_equal(s->log[k * NW + i], s->tag * 100 + i * 10 + k);
    for (int i = 0; i < NW; i++) {
        assert_true(s->w[i].self.finished);
        coro_destroy(&s->w[i].self);
    }
}

static void test_two_schedulers(void **state)
{
    (void)state;
    struct sched *a = malloc(sizeof *a), *b = malloc(sizeof *b);
    assert_non_null(a);
    assert_non_null(b);
    sched_init(a, 1);
    sched_init(b, 2);
    int ra, rb;
    do {                            /* interleave rounds of A and B */
        ra = sched_round(a);
        rb = sched_round(b);
    } while (ra + rb > 0);
    sched_check_fini(a);
    sched_check_fini(b);
    free(a);
    free(b);
}

/* Scheduler B runs inside a coroutine of scheduler A (its main context is on
 * a coroutine stack) and yields back to A between its rounds. */
struct nest { struct coro *outer_main, self; struct sched *b; int rounds; };

static void nest_fn(void *arg)
{
    struct nest *n = arg;
    while (sched_round(n->b) > 0) {
        n->rounds++;
        coro_switch(&n->self, n->outer_main);
    }
}

static void test_nested_schedulers(void **state)
{
    (void)state;
    struct sched *b = malloc(sizeof *b);
    assert_non_null(b);
    struct coro m;
    struct nest n = { &m, { 0 }, b, 0 };
    coro_init_main(&m);
    sched_init(b, 3);
    assert_int_equal(coro_create(&n.self, STACK, nest_fn, &n), 0);
    n.self.return_to = &m;
    while (!n.self.finished)
        coro_switch(&m, &n.self);
    assert_int_equal(n.rounds, STEPS + 1);  /* last round only finishes */
    sched_check_fini(b);
    coro_destroy(&n.self);
    free(b);
}

/* ---- guard page ----------------------------------------------------------- */

static void noop(void *arg) { (void)arg; }

static void test_guard_page(void **state)
{
    (void)state;
    struct coro c;
    assert_int_equal(coro_create(&c, 100000, noop, NULL), 0);
    long pg = sysconf(_SC_PAGESIZE);
    assert_int_equal(c.guard_size, (size_t)pg);
    assert_int_equal(c.stack_size % (size_t)pg, 0);
    assert_true(c.stack_size >= 100000 + (size_t)pg);

    FILE *f = fopen("/proc/self/maps", "r");
    if (f == NULL) {
        coro_destroy(&c);
        skip();
    }
    char line[512];
    int found = 0;
    uintptr_t base = (uintptr_t)c.stack_base;
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        char perms[5];
        if (sscanf(line, "%lx-%lx %4s", &lo, &hi, perms) != 3)
            continue;
        if (lo == base) {
            found = 1;
            assert_true(hi >= base + (uintptr_t)pg);
            assert_string_equal(perms, "---p");
        }
    }
    fclose(f);
    assert_true(found);
    coro_destroy(&c);
}

/* ---- one stack, several coroutines --------------------------------------- */

struct reuse {
    struct coro *main;
    struct coro self;
    int depth, reached;
};

/* Recurse with padded frames, then suspend at the bottom for good. */
static void reuse_deep(struct reuse *r, int d)
{
    volatile char pad[256];
    pad[0] = (char)d;
    if (d < r->depth)
        reuse_deep(r, d + 1);
    else {
        r->reached = d;
        coro_switch(&r->self, r->main);    /* never resumed */
    }
    pad[1] = pad[0];
}

static void reuse_fn(void *arg)
{
    struct reuse *r = arg;
    reuse_deep(r, 0);
}

/* The pool in sim.c gives a finished or abandoned coroutine's stack to the
 * next thread: the mapping must survive coro_release and run a new coroutine
 * from its top, whatever the old one left on it. */
static void test_stack_reuse(void **state)
{
    (void)state;
    struct coro m;
    coro_init_main(&m);
    struct coro_stack st;
    assert_int_equal(coro_stack_map(&st, STACK), 0);
    void *base = st.base;
    for (int round = 0; round < 3; round++) {
        struct reuse r = {.main = &m, .depth = 20 + 10 * round};
        assert_int_equal(coro_create_on(&r.self, &st, reuse_fn, &r), 0);
        r.self.return_to = &m;
        coro_switch(&m, &r.self);
        assert_int_equal(r.reached, r.depth);
        assert_false(r.self.finished);     /* abandoned mid-run */
        coro_release(&r.self, &st);
        assert_ptr_equal(st.base, base);   /* the same mapping back */
        assert_null(r.self.stack_base);
    }
    /* and a coroutine that runs to its end on it */
    struct coro c;
    int flag = 0;
    assert_int_equal(coro_create_on(&c, &st, set_flag, &flag), 0);
    c.return_to = &m;
    coro_switch(&m, &c);
    assert_int_equal(flag, 1);
    assert_true(c.finished);
    coro_release(&c, &st);
    assert_ptr_equal(st.base, base);
    coro_stack_unmap(&st);
    assert_null(st.base);
    coro_release(&c, &st);              /* released twice: nothing to hand */
    assert_null(st.base);
}

/* ---- stack skew: where a stack starts below its mapping's top ---------- */

struct where {
    struct coro *main, self;
    uintptr_t local;
};

static void where_fn(void *arg)
{
    struct where *w = arg;
    volatile char here = 0;
    w->local = (uintptr_t)&here;
}

/* coro_stack_skew spreads any run of consecutive indices evenly over a
 * page (bit-reversed 64-byte lines); a coroutine's frames start that far
 * below the top; a skew off 16-byte alignment, or as large as half the
 * usable stack, is refused. */
static void test_stack_skew(void **state)
{
    (void)state;
    assert_int_equal(coro_stack_skew(0), 0);
    assert_int_equal(coro_stack_skew(1), 2048);
    assert_int_equal(coro_stack_skew(2), 1024);
    assert_int_equal(coro_stack_skew(3), 3072);
    assert_int_equal(coro_stack_skew(64), 0);
    uint64_t seen = 0;
    for (unsigned i = 0; i < 64; i++) {
        size_t k = coro_stack_skew(i);
        assert_int_equal(k % 64, 0);
        assert_true(k < 4096);
        assert_false((seen >> (k / 64)) & 1);  /* 64 distinct lines */
        seen |= 1ull << (k / 64);
    }
    /* the first 16 fall 256 bytes apart, in some order */
    uint64_t lines16 = 0;
    for (unsigned i = 0; i < 16; i++)
        lines16 |= 1ull << (coro_stack_skew(i) / 64);
    assert_int_equal(lines16, 0x1111111111111111ull);

    struct coro m;
    coro_init_main(&m);
    struct coro_stack st;
    assert_int_equal(coro_stack_map(&st, STACK), 0);
    assert_int_equal(st.skew, 0);
    const uintptr_t top = (uintptr_t)st.base + st.size;
    const size_t skews[3] = {0, 1024, 3072};
    for (int i = 0; i < 3; i++) {
        struct where w = {.main = &m};
        st.skew = skews[i];
        assert_int_equal(coro_create_on(&w.self, &st, where_fn, &w), 0);
        w.self.return_to = &m;
        coro_switch(&m, &w.self);
        assert_true(w.self.finished);
        assert_true(w.local < top - skews[i]);
        assert_true(w.local > top - skews[i] - 8192);  /* the first frames */
        coro_release(&w.self, &st);
        assert_int_equal(st.skew, 0);       /* released: no skew */
    }
    struct coro c;
    st.skew = 1000;                         /* not a multiple of 16 */
    assert_int_equal(coro_create_on(&c, &st, where_fn, NULL), -1);
    st.skew = (st.size - st.guard) / 2;     /* half the usable stack */
    assert_int_equal(coro_create_on(&c, &st, where_fn, NULL), -1);
    st.skew = 0;
    coro_stack_unmap(&st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pingpong),
        cmocka_unit_test(test_return_to),
        cmocka_unit_test(test_return_chain),
        cmocka_unit_test(test_thousand),
        cmocka_unit_test(test_deep_recursion),
        cmocka_unit_test(test_longjmp_inside),
        cmocka_unit_test(test_two_schedulers),
        cmocka_unit_test(test_nested_schedulers),
        cmocka_unit_test(test_guard_page),
        cmocka_unit_test(test_stack_reuse),
        cmocka_unit_test(test_stack_skew),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
