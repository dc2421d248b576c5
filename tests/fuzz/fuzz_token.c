/*
 * fuzz_token.c - libFuzzer target for the replay-token decoder
 * (src/check/token.c, token_decode): any string is decoded or refused,
 * never a crash, a hang or a leak; a decoded token re-encodes to itself.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check/check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *tok = malloc(size + 1);
	if (!tok)
		return 0;
	memcpy(tok, data, size);
	tok[size] = 0;
	uint32_t hash = 0, n = 0;
	uint32_t *dec = NULL;
	if (token_decode(tok, &hash, &dec, &n) == 0) {
		size_t len = token_length(hash, dec, n);
		char *again = malloc(len + 1);
		if (again && token_encode(hash, dec, n, again, len + 1) != 0)
			__builtin_trap();
		uint32_t h2 = 0, n2 = 0;
		uint32_t *dec2 = NULL;
		if (again && (token_decode(again, &h2, &dec2, &n2) != 0 || h2 != hash || n2 != n ||
			      (n && memcmp(dec, dec2, n * sizeof(*dec)) != 0)))
			__builtin_trap();
		free(dec2);
		free(again);
	}
	free(dec);
	free(tok);
	return 0;
}
