/* profiles.c - machine profiles (architecture, granule, CPU count). Cost
 * parameters come from the params table (params.h) by architecture. */
#include <string.h>

#include "tlbsim/tlbsim.h"

static const struct tlbsim_profile profiles[] = {
	{"x86-24", "24-CPU x86-64, 4K pages, PCID (the 24-core x86 VM of the 2019 nested-flush "
	 "report)",
	 ARCH_X86_64, 12, 24, NULL},
	{"falkor-46", "46-CPU arm64 Qualcomm Falkor, 64K pages, 3 levels (the host of the 2019 "
	 "nested-flush report)",
	 ARCH_ARM64, 16, 46, NULL},
	{"arm64-4k", "46-CPU arm64, 4K pages, 4 levels (falkor-46 costs)", ARCH_ARM64, 12, 46,
	 NULL},
	{"arm64-16k", "46-CPU arm64, 16K pages, 4 levels (falkor-46 costs)", ARCH_ARM64, 14, 46,
	 NULL},
	{"x86-256", "256-CPU x86-64, 2 sockets, 4K pages, PCID, no PTI (the AMD Zen machine of "
	 "the 2024 vmalloc purge soft lockups; x86-24 costs)", ARCH_X86_64, 12, 256, NULL},
	{"arm64-128", "128-CPU arm64, 4K pages, 4 levels (falkor-46 costs)", ARCH_ARM64, 12, 128,
	 NULL},
};

int tlbsim_profile_count(void)
{
	return (int)(sizeof(profiles) / sizeof(profiles[0]));
}

const struct tlbsim_profile *tlbsim_profile_get(int i)
{
	return i >= 0 && i < tlbsim_profile_count() ? &profiles[i] : NULL;
}

const struct tlbsim_profile *tlbsim_profile_find(const char *name)
{
	for (int i = 0; i < tlbsim_profile_count(); i++)
		if (strcmp(profiles[i].name, name) == 0)
			return &profiles[i];
	return NULL;
}
