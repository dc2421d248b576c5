/*
 * fuzz_scenario.c - libFuzzer target for the scenario compiler
 * (src/scenario/parse.c): any bytes must compile or be refused with errors,
 * never crash, hang, leak or read outside the input. Built only with a
 * compiler that has -fsanitize=fuzzer (tests/fuzz/fuzz.cmake).
 */
#include <stddef.h>
#include <stdint.h>

#include "scenario/scenario.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int nerr = 0;
	struct scenario *sc = scenario_compile("fuzz.tlbs", (const char *)data, size, NULL, &nerr);
	if (sc) {
		/* what a caller reads from a compiled file */
		const struct tlbsim_workload_desc *d = scenario_desc(sc);
		for (int i = 0; i < d->nparams; i++)
			if (!d->params[i].name[0])
				__builtin_trap();
		for (int i = 0; i < scenario_nexpect(sc); i++)
			(void)scenario_expect(sc, i)->kind;
		if (scenario_nops(sc) <= 0)
			__builtin_trap();
	} else if (nerr <= 0 || nerr > SCEN_MAX_ERRORS) {
		__builtin_trap();	/* refused without an error, or over the cap */
	}
	scenario_free(sc);
	return 0;
}
