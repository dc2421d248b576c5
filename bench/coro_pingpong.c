/*
 * coro_pingpong.c - cost of one coro_switch: main and one coroutine bounce
 * control back and forth; prints nanoseconds per one-way switch.
 * Usage: coro_pingpong [switches]   (default 10,000,000)
 */
#if !defined(_POSIX_C_SOURCE) && !defined(_GNU_SOURCE)
#define _POSIX_C_SOURCE 200809L
#endif

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "sim/coro.h"

struct pong { struct coro *main, self; long n; };

static void pong_fn(void *arg)
{
    struct pong *p = arg;
    for (;;) {
        p->n++;
        coro_switch(&p->self, p->main);
    }
}

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    long switches = argc > 1 ? atol(argv[1]) : 10000000L;
    long rounds = switches / 2;     /* one round = main->coro->main */
    struct coro m;
    struct pong p = { &m, { 0 }, 0 };

    coro_init_main(&m);
    if (coro_create(&p.self, 64 * 1024, pong_fn, &p) != 0) {
        perror("coro_create");
        return 1;
    }
    p.self.return_to = &m;

    coro_switch(&m, &p.self);       /* warm up: start the coroutine */
    double t0 = now_ns();
    for (long i = 0; i < rounds; i++)
        coro_switch(&m, &p.self);
    double t1 = now_ns();

    if (p.n != rounds + 1) {
        fprintf(stderr, "coro_pingpong: lost switches (%ld != %ld)\n", p.n, rounds + 1);
        return 1;
    }
    printf("coro_pingpong: %ld switches, %.2f ns per one-way switch\n",
           2 * rounds, (t1 - t0) / (double)(2 * rounds));
    coro_destroy(&p.self);          /* suspended coroutine: just drop it */
    return 0;
}
