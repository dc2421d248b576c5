/* params.c - the parameter table (see params.h). Read-only data, no state. */
#include <string.h>

#include "cost/params.h"

const struct param_desc tlbsim_param_desc[P_COUNT] = {
#define X(name, unit, x86, arm, src) {#name, unit, x86, arm, src},
    TLBSIM_PARAMS(X)
#undef X
};

int param_lookup(const char *name)
{
	for (int i = 0; i < P_COUNT; i++)
		if (strcmp(tlbsim_param_desc[i].name, name) == 0)
			return i;
	return -1;
}
