/* hash.h - FNV-1a (32-bit), the one hash of the replay tokens: a token's
 * checksum (check/token.c), the configuration it was made under
 * (check/search.c config_hash) and a scenario file's text
 * (scenario/parse.c). Changing it changes every token. */
#ifndef TLBSIM_SIM_HASH_H
#define TLBSIM_SIM_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define FNV1A_INIT 2166136261u

/* h extended by the n bytes at p */
static inline uint32_t fnv1a_add(uint32_t h, const void *p, size_t n)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= 16777619u;
	}
	return h;
}

/* h extended by the string s (NULL: nothing) */
static inline uint32_t fnv1a_str(uint32_t h, const char *s)
{
	return s ? fnv1a_add(h, s, strlen(s)) : h;
}

#endif
