/* registry.c - the table of built-in workloads and parameter parsing. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "workload/workload.h"

extern const struct workload_ops mmap8_ops, mmap5_ops, madv_race_ops, lazy_tables_ops;
extern const struct workload_ops PAGE_FAULT1_ops, PAGE_FAULT2_ops, PAGE_FAULT3_ops,
	PAGE_FAULT4_ops, TLB_FLUSH1_ops, TLB_FLUSH2_ops, TLB_FLUSH3_ops;
extern const struct workload_ops retry_race_ops, writeback_race_ops, spurious_race_ops;
extern const struct workload_ops test_vmalloc_ops, vmalloc_reuse_ops;
extern const struct workload_ops kbuild_ops;
extern const struct workload_ops local_migrate_ops, ebizzy_ops;
extern const struct workload_ops mprotect_storm_ops;
extern const struct workload_ops stress_ng_tlb_ops;
extern const struct workload_ops fork_exec_ops;
extern const struct workload_ops litmus_sb_ops;

static const struct workload_ops *const workloads[] = {
	&mmap8_ops, &mmap5_ops, &madv_race_ops, &lazy_tables_ops,
	&PAGE_FAULT1_ops, &PAGE_FAULT2_ops, &PAGE_FAULT3_ops, &PAGE_FAULT4_ops,
	&TLB_FLUSH1_ops, &TLB_FLUSH2_ops, &TLB_FLUSH3_ops,
	&retry_race_ops, &writeback_race_ops, &spurious_race_ops,
	&test_vmalloc_ops, &vmalloc_reuse_ops,
	&kbuild_ops,
	&local_migrate_ops,
	&ebizzy_ops,
	&mprotect_storm_ops,
	&stress_ng_tlb_ops,
	&fork_exec_ops,
	&litmus_sb_ops,
};

int workload_count(void)
{
	return (int)(sizeof(workloads) / sizeof(workloads[0]));
}

const struct workload_ops *workload_get(int i)
{
	return i >= 0 && i < workload_count() ? workloads[i] : NULL;
}

const struct workload_ops *workload_find(const char *name)
{
	for (int i = 0; i < workload_count(); i++)
		if (strcmp(workloads[i]->desc->name, name) == 0)
			return workloads[i];
	return NULL;
}

const struct workload_ops *workload_for(const struct tlbsim_config *cfg)
{
	if (cfg->workload_def)
		return &container_of(cfg->workload_def, struct workload_def, desc)->ops;
	return cfg->workload ? workload_find(cfg->workload) : NULL;
}

int tlbsim_workload_count(void)
{
	return workload_count();
}

const struct tlbsim_workload_desc *tlbsim_workload_get(int i)
{
	const struct workload_ops *w = workload_get(i);
	return w ? w->desc : NULL;
}

const struct tlbsim_workload_desc *tlbsim_workload_find(const char *name)
{
	const struct workload_ops *w = workload_find(name);
	return w ? w->desc : NULL;
}

const char *wparam(const struct tlbsim_resolved *r, const char *name)
{
	for (int i = 0; i < r->nwparams; i++)
		if (strcmp(r->wparams[i].name, name) == 0)
			return r->wparams[i].value;
	return "";
}

int parse_u64(const char *txt, uint64_t *out)
{
	if (!txt || !*txt || !isdigit((unsigned char)txt[0]))
		return -1;
	errno = 0;
	char *end;
	unsigned long long v = strtoull(txt, &end, 10);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

int parse_size(const char *txt, uint64_t *out)
{
	if (!txt || !*txt || !isdigit((unsigned char)txt[0]))
		return -1;
	errno = 0;
	char *end;
	unsigned long long v = strtoull(txt, &end, 10);
	if (errno)
		return -1;
	int shift = 0;
	switch (toupper((unsigned char)*end)) {
	case 0: break;
	case 'K': shift = 10; end++; break;
	case 'M': shift = 20; end++; break;
	case 'G': shift = 30; end++; break;
	case 'T': shift = 40; end++; break;
	default: return -1;
	}
	if (shift && (strcmp(end, "") == 0 || strcmp(end, "iB") == 0 || strcmp(end, "B") == 0))
		end += strlen(end);
	if (*end)
		return -1;
	if (shift && v > (~0ull >> shift))
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}

uint64_t estimate_mapped_bytes(uint64_t pages, int page_shift)
{
	uint64_t per_table = 1ull << (page_shift - 3);	/* descriptors per table */
	uint64_t table_bytes = (per_table + per_table / 64) * 8;
	/* a struct frame, a page-cache slot, and the PTE tables (plus one per
	 * upper level, rounded up) */
	uint64_t tables = pages / per_table + 4;
	return pages * (64 + 16) + tables * (table_bytes + 64);
}
