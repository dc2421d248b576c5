/*
 * token.c - replay tokens.
 *
 *   t2.<config hash>.<decisions>.<checksum>
 *
 * config hash and checksum are 8 lowercase hex digits; the checksum is FNV-1a
 * (32 bit) of everything before its dot, so a token that was mistyped, cut or
 * edited is rejected instead of replaying some other schedule. Decisions, in
 * order: one character 0-9a-y for a value 0..34; "-<hex>-" for a run of at
 * least four zeros (no preemption); "z<hex>z" for a value of 35 or more
 * (many runnable threads). Hex is lowercase without leading zeros. Every
 * schedule has exactly one token: the decoder accepts only the encoder's own
 * (canonical) spelling.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/check.h"
#include "sim/grow.h"
#include "sim/hash.h"

static const char digits[] = "0123456789abcdefghijklmnopqrstuvwxy";
#define TOKEN_DIGITS 35u
#define TOKEN_MAX_RUN 100000000u	/* zeros in one run group */
#define TOKEN_MAX_DECISIONS 1000000000u

static uint32_t fnv1a(const char *p, size_t n)
{
	return fnv1a_add(FNV1A_INIT, p, n);
}

/* append to out (always counting, writing only what fits) */
struct tbuf {
	char *out;
	size_t len, o;
};

static void put(struct tbuf *b, const char *fmt, unsigned long long v)
{
	char tmp[40];
	int n = snprintf(tmp, sizeof(tmp), fmt, v);
	for (int i = 0; i < n; i++) {
		if (b->o + 1 < b->len)
			b->out[b->o] = tmp[i];
		b->o++;
	}
}

/* The token into out (when it fits in outlen bytes with its NUL); returns its
 * length either way. */
static size_t encode(uint32_t cfg_hash, const uint32_t *dec, uint32_t n, char *out, size_t outlen)
{
	struct tbuf b = {out, outlen, 0};
	put(&b, "t2.%08llx.", cfg_hash);
	for (uint32_t i = 0; i < n;) {
		uint32_t j = i;
		while (j < n && dec[j] == 0 && j - i < TOKEN_MAX_RUN)
			j++;
		if (j - i >= 4) {
			put(&b, "-%llx-", j - i);
			i = j;
			continue;
		}
		if (dec[i] < TOKEN_DIGITS)
			put(&b, "%c", (unsigned char)digits[dec[i]]);
		else
			put(&b, "z%llxz", dec[i]);
		i++;
	}
	if (b.o >= outlen)
		return b.o + 9;		/* ".%08x" */
	out[b.o] = 0;
	uint32_t sum = fnv1a(out, b.o);
	put(&b, ".%08llx", sum);
	if (b.o < outlen)
		out[b.o] = 0;
	return b.o;
}

int token_encode(uint32_t cfg_hash, const uint32_t *dec, uint32_t n, char *out, size_t outlen)
{
	return encode(cfg_hash, dec, n, out, outlen) < outlen ? 0 : -1;
}

size_t token_length(uint32_t cfg_hash, const uint32_t *dec, uint32_t n)
{
	return encode(cfg_hash, dec, n, NULL, 0);
}

/* lowercase hex without leading zeros, up to `end`; -1 on anything else */
static int parse_hex(const char **pp, char end, uint64_t max, uint64_t *v)
{
	const char *p = *pp;
	uint64_t x = 0;
	if (*p == '0' || *p == end)
		return -1;
	for (; *p != end; p++) {
		int d;
		if (*p >= '0' && *p <= '9')
			d = *p - '0';
		else if (*p >= 'a' && *p <= 'f')
			d = *p - 'a' + 10;
		else
			return -1;
		x = x * 16 + (uint64_t)d;
		if (x > max)
			return -1;
	}
	*v = x;
	*pp = p + 1;
	return 0;
}

int token_decode(const char *tok, uint32_t *cfg_hash, uint32_t **dec, uint32_t *n)
{
	return token_decode_max(tok, TOKEN_MAX_DECISIONS, cfg_hash, dec, n);
}

int token_decode_max(const char *tok, uint64_t max, uint32_t *cfg_hash, uint32_t **dec,
		     uint32_t *n)
{
	if (max > TOKEN_MAX_DECISIONS)
		max = TOKEN_MAX_DECISIONS;
	int over = -1;
	size_t len = strlen(tok);
	/* "t2." + 8 + "." + body + "." + 8 */
	if (len < 21 || strncmp(tok, "t2.", 3) != 0 || tok[11] != '.' || tok[len - 9] != '.')
		return -1;
	for (size_t i = 3; i < 11; i++)
		if (!strchr("0123456789abcdef", tok[i]) || !tok[i])
			return -1;
	for (size_t i = len - 8; i < len; i++)
		if (!strchr("0123456789abcdef", tok[i]) || !tok[i])
			return -1;
	unsigned h, sum;
	if (sscanf(tok + 3, "%8x", &h) != 1 || sscanf(tok + len - 8, "%8x", &sum) != 1)
		return -1;
	if (fnv1a(tok, len - 9) != sum)
		return -1;
	char *body = malloc(len);
	if (!body)
		return -1;
	memcpy(body, tok + 12, len - 21);
	body[len - 21] = 0;
	size_t cap = 0, cnt = 0;
	uint32_t *d = NULL;
	const char *p = body;
	while (*p) {
		uint64_t run = 1, v;
		if (*p == '-') {
			p++;
			if (parse_hex(&p, '-', TOKEN_MAX_RUN, &run) || run < 4)
				goto bad;
			v = 0;
		} else if (*p == 'z') {
			p++;
			if (parse_hex(&p, 'z', UINT32_MAX, &v) || v < TOKEN_DIGITS)
				goto bad;
		} else {
			const char *c = strchr(digits, *p);
			if (!c)
				goto bad;
			v = (uint64_t)(c - digits);
			p++;
		}
		if (cnt + run > max) {
			over = -2;	/* checked before the memory is taken */
			goto bad;
		}
		if (GROW(&d, &cap, cnt, cnt + run, 64))
			goto bad;
		while (run--)
			d[cnt++] = (uint32_t)v;
	}
	/* canonical spelling only: encode again and compare */
	char *again = malloc(len + 1);
	if (!again || token_encode(h, d, (uint32_t)cnt, again, len + 1) || strcmp(again, tok)) {
		free(again);
		goto bad;
	}
	free(again);
	free(body);
	*cfg_hash = h;
	*dec = d ? d : malloc(sizeof(*d));
	if (!*dec)
		return -1;
	*n = (uint32_t)cnt;
	return 0;
bad:
	free(body);
	free(d);
	return over;
}
