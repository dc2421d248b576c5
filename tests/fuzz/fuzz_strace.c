/*
 * fuzz_strace.c - libFuzzer target for `tlbsim import strace`
 * (src/scenario/strace.c): any bytes are imported or refused with errors,
 * never crash, hang, leak or read outside the input - and what is imported
 * must compile as a scenario file (the importer writes only the language);
 * an import that succeeds writes nothing on stderr but "tlbsim: note:" lines.
 * Built only with a compiler that has -fsanitize=fuzzer (tests/fuzz/fuzz.cmake).
 */
#define _XOPEN_SOURCE 700
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenario/scenario.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *out = NULL, *err = NULL;
	size_t olen = 0, elen = 0;
	FILE *o = open_memstream(&out, &olen), *e = open_memstream(&err, &elen);
	if (!o || !e)
		return 0;
	int rc = strace_import((const char *)data, size, "fuzz.txt", "fuzz", size & 1, o, e);
	fclose(o);
	fclose(e);
	if (rc == 0) {
		/* success says nothing on stderr but notes (a pid no clone
		 * starts), each a line "tlbsim: note: ..." */
		for (size_t i = 0; i < elen;) {
			if (elen - i < 14 || memcmp(err + i, "tlbsim: note: ", 14) != 0)
				__builtin_trap();
			const char *nl = memchr(err + i, '\n', elen - i);
			if (!nl)
				__builtin_trap();
			i = (size_t)(nl - err) + 1;
		}
		int nerr = 0;
		struct scenario *sc = scenario_compile("fuzz.tlbs", out, olen, NULL, &nerr);
		if (!sc)
			__builtin_trap();	/* the importer wrote something not in the language */
		scenario_free(sc);
	} else if (!elen) {
		__builtin_trap();		/* refused without a message */
	}
	free(out);
	free(err);
	return 0;
}
