/*
 * token.c - replay tokens: "t1.<config hash, 8 hex>.<decisions>", each
 * decision one digit of 0-9a-y, runs of 4 or more zeros ("no preemption")
 * as "-<hex count>-".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/check.h"
#include "sim/grow.h"

static const char digits[] = "0123456789abcdefghijklmnopqrstuvwxy";

int token_encode(uint32_t cfg_hash, const uint32_t *dec, uint32_t n, char *out, size_t outlen)
{
	size_t o = (size_t)snprintf(out, outlen, "t1.%08x.", cfg_hash);
	for (uint32_t i = 0; i < n;) {
		uint32_t j = i;
		while (j < n && dec[j] == 0)
			j++;
		if (j - i >= 4) {
			o += (size_t)snprintf(out + o, o < outlen ? outlen - o : 0, "-%x-", j - i);
			i = j;
			continue;
		}
		if (dec[i] >= sizeof(digits) - 1)
			return -1;
		if (o + 1 < outlen)
			out[o] = digits[dec[i]];
		o++;
		i++;
	}
	if (o >= outlen)
		return -1;
	out[o] = 0;
	return 0;
}

int token_decode(const char *tok, uint32_t *cfg_hash, uint32_t **dec, uint32_t *n)
{
	unsigned h;
	int pos = 0;
	if (sscanf(tok, "t1.%8x.%n", &h, &pos) != 1 || pos != 12)
		return -1;
	*cfg_hash = h;
	const char *p = tok + pos;
	size_t cap = 0, cnt = 0;
	uint32_t *d = NULL;
	while (*p) {
		uint64_t run = 1;
		uint32_t v;
		if (*p == '-') {
			char *end;
			run = strtoull(p + 1, &end, 16);
			if (end == p + 1 || *end != '-' || run == 0 || run > 100000000)
				goto bad;
			p = end + 1;
			v = 0;
		} else {
			const char *c = strchr(digits, *p);
			if (!c || !*p)
				goto bad;
			v = (uint32_t)(c - digits);
			p++;
		}
		while (run--) {
			if (GROW(&d, &cap, cnt, cnt + 1, 64))
				goto bad;
			d[cnt++] = v;
		}
	}
	*dec = d ? d : malloc(sizeof(*d));
	if (!*dec)
		return -1;
	*n = (uint32_t)cnt;
	return 0;
bad:
	free(d);
	return -1;
}
