/*
 * rng.h - the simulation's one PRNG: xoshiro256** seeded through splitmix64.
 *
 * Deterministic by construction: the state is four words in the owner's
 * struct; nothing reads host time or addresses.
 */
#ifndef TLBSIM_RNG_H
#define TLBSIM_RNG_H

#include <stdint.h>

struct rng {
	uint64_t s[4];
};

void rng_seed(struct rng *r, uint64_t seed);
uint64_t rng_next(struct rng *r);
/* uniform in [0, n); 0 when n == 0 */
uint64_t rng_below(struct rng *r, uint64_t n);

#endif
