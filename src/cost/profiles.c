/* profiles.c - machine profiles (architecture, granule, CPU count). Cost
 * parameters come from the params table (params.h) by architecture, then
 * from the profile's own list (a profile file's), then from -D. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cost/params.h"
#include "tlbsim/tlbsim.h"

/* A 16-vCPU KVM guest (Intel Xeon host; PCID, INVPCID, x2APIC; Linux 6.18
 * in the guest), measured by this project's probe on 2026-11-29: touching
 * one page and MADV_DONTNEED of it takes 3.40 us per op alone and 4.78 us
 * with a sibling thread of the mm running on another vCPU, exactly one flush
 * IPI per op. The 1.38 us difference is the initiator's cost of a one-target
 * shootdown: ipi_send_ns + ipi_latency_ns + ipi_handler_ns + invlpg_ns, so
 * ipi_latency_ns = 1380 - 68 - 300 - 100 = 912 ns (virtual IPI delivery and
 * the EOI exit); every other cost is the bare-metal x86 figure. */
static const struct tlbsim_override kvm16_params[] = {
	{P_ipi_latency_ns, 912},
};

/* An AMD EPYC Milan (Zen 3) server with 72 CPUs in 2 sockets: INVLPGB and
 * TLBSYNC available (params.h invlpgb_ns and tlbsync_ns: first principles
 * from the EPYC 7R13 core-to-core latencies). Every other cost is the
 * bare-metal x86 figure, cache-line transfers included (51 ns, between
 * Milan's 23 ns within a core complex and 107 ns across complexes; the model
 * has one figure). Checked against the two per-operation points of a 72-CPU
 * Milan that compare IPI and INVLPGB kernels (will-it-scale tlb_flush2
 * threads, 1 and 2 threads: 315k and 423k loops/s with IPIs, 304k and 424k
 * with INVLPGB, where an mm on 1 or 2 CPUs keeps per-CPU ASIDs): the model
 * gives 316k and 408k for both knob values (with 107 ns transfers, 374k at
 * 2 threads). */
static const struct tlbsim_override milan72_params[] = {
	{P_invlpgb, 1},
};

/* arm64-4k with the ARMv8.4 TLB maintenance features: FEAT_TTL (level
 * hints honoured) and FEAT_TLBIRANGE (range TLBIs), as on Neoverse V1 / N2
 * class parts (Arm ARM: both are mandatory from ARMv8.4); costs remain the
 * falkor-46 figures, range TLBIs per calibration C2's flat shape */
static const struct tlbsim_override arm64_v84_params[] = {
	{P_ttl, 1},
	{P_tlbi_range, 1},
};

/* An Intel Alder Lake / Raptor Lake client (the INVLPG erratum of
 * ce0b15d11ad8: INVLPG with PCIDs may leave Global entries); x86-24 costs */
static const struct tlbsim_override adl16_params[] = {
	{P_invlpg_global_miss, 1},
};

static const struct tlbsim_profile profiles[] = {
	{"x86-24", "24-CPU x86-64, 4K pages, PCID (the 24-core x86 VM of the 2019 nested-flush "
	 "report)",
	 ARCH_X86_64, 12, 24, NULL, 0},
	{"falkor-46", "46-CPU arm64 Qualcomm Falkor, 64K pages, 3 levels (the host of the 2019 "
	 "nested-flush report)",
	 ARCH_ARM64, 16, 46, NULL, 0},
	{"arm64-4k", "46-CPU arm64, 4K pages, 4 levels (falkor-46 costs)", ARCH_ARM64, 12, 46,
	 NULL, 0},
	{"arm64-16k", "46-CPU arm64, 16K pages, 4 levels (falkor-46 costs)", ARCH_ARM64, 14, 46,
	 NULL, 0},
	{"x86-256", "256-CPU x86-64, 2 sockets, 4K pages, PCID, no PTI (the AMD Zen machine of "
	 "the 2024 vmalloc purge soft lockups; x86-24 costs)", ARCH_X86_64, 12, 256, NULL, 0},
	{"arm64-128", "128-CPU arm64, 4K pages, 4 levels (falkor-46 costs)", ARCH_ARM64, 12, 128,
	 NULL, 0},
	{"kvm16", "16-CPU x86-64 KVM guest (16 vCPUs, Intel Xeon host), 4K pages, PCID; a flush "
	 "IPI costs 1.38 us per target as measured in the guest, other costs as x86-24",
	 ARCH_X86_64, 12,
	 16, kvm16_params, (int)(sizeof(kvm16_params) / sizeof(kvm16_params[0]))},
	{"milan-72", "72-CPU x86-64 AMD EPYC Milan (Zen 3), 2 sockets, 4K pages, PCID, INVLPGB "
	 "and TLBSYNC (as in the v6.15 INVLPGB series, 4afeb0ed1753); x86-24 costs",
	 ARCH_X86_64, 12, 72, milan72_params,
	 (int)(sizeof(milan72_params) / sizeof(milan72_params[0]))},
	{"arm64-v84", "46-CPU arm64, 4K pages, 4 levels, with FEAT_TTL and FEAT_TLBIRANGE "
	 "(ARMv8.4 TLB maintenance; falkor-46 costs)", ARCH_ARM64, 12, 46, arm64_v84_params,
	 (int)(sizeof(arm64_v84_params) / sizeof(arm64_v84_params[0]))},
	{"adl-16", "16-CPU x86-64 Intel Alder Lake class, 4K pages, PCID, with the INVLPG "
	 "erratum: Global entries may survive INVLPG (ce0b15d11ad8); x86-24 costs",
	 ARCH_X86_64, 12, 16, adl16_params, (int)(sizeof(adl16_params) / sizeof(adl16_params[0]))},
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

/* ---- profile files ---- */

static char *trim(char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	char *e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r' || e[-1] == '\n'))
		*--e = 0;
	return s;
}

/* digits only, at most INT64_MAX */
static int parse_int(const char *v, int64_t *out)
{
	if (!*v)
		return -1;
	for (const char *p = v; *p; p++)
		if (*p < '0' || *p > '9')
			return -1;
	errno = 0;
	char *end;
	unsigned long long x = strtoull(v, &end, 10);
	if (errno || *end || x > (unsigned long long)INT64_MAX)
		return -1;
	*out = (int64_t)x;
	return 0;
}

int tlbsim_profile_load(const char *path, struct tlbsim_profile_file *pf, char *err,
			size_t errlen)
{
	memset(pf, 0, sizeof(*pf));
	FILE *f = fopen(path, "r");
	if (!f) {
		snprintf(err, errlen, "profile %s: %s", path, strerror(errno));
		return TLBSIM_EINVAL;
	}
	char line[1024];
	int lineno = 0, rc = 0;
	errno = 0;
	bool have_arch = false, have_page = false, have_cpus = false, have_name = false,
	     have_desc = false;
	bool seen[P_COUNT] = {false};
	int64_t page = 0;
	long at = ftell(f);
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		/* a NUL byte cuts the string fgets read: the bytes read say so
		 * (ftell: -1 on a pipe, then only the cases below) */
		const long next = ftell(f);
		const bool nul = at >= 0 && next >= 0 && (size_t)(next - at) != strlen(line);
		at = next;
		if (nul) {
			snprintf(err, errlen, "%s:%d: a NUL byte in the line: not a profile file", path,
				 lineno);
			rc = TLBSIM_EINVAL;
			break;
		}
		if (!strchr(line, '\n') && !feof(f)) {
			/* fgets stops at the buffer's end; a shorter string held a NUL */
			if (strlen(line) < sizeof(line) - 1)
				snprintf(err, errlen, "%s:%d: a NUL byte in the line: not a profile "
					 "file", path, lineno);
			else
				snprintf(err, errlen, "%s:%d: line longer than %zu bytes", path,
					 lineno, sizeof(line) - 2);
			rc = TLBSIM_EINVAL;
			break;
		}
		/* an editor's UTF-8 byte order mark is not part of the first key */
		if (lineno == 1 && strncmp(line, "\xEF\xBB\xBF", 3) == 0)
			memmove(line, line + 3, strlen(line + 3) + 1);
		char *hash = strchr(line, '#');
		if (hash && !(strncmp(trim(line), "description", 11) == 0))
			*hash = 0;
		char *l = trim(line);
		if (!*l)
			continue;
		char *eq = strchr(l, '=');
		if (!eq) {
			snprintf(err, errlen, "%s:%d: want KEY = VALUE", path, lineno);
			rc = TLBSIM_EINVAL;
			break;
		}
		*eq = 0;
		char *k = trim(l), *v = trim(eq + 1);
		int64_t x;
		/* a key given twice is an error, header keys as parameters (the
		 * last one used to win) */
		bool *once = strcmp(k, "name") == 0 ? &have_name : strcmp(k, "description") == 0
			? &have_desc : strcmp(k, "arch") == 0 ? &have_arch : strcmp(k, "page_size") == 0
			? &have_page : strcmp(k, "cpus") == 0 ? &have_cpus : NULL;
		if (once && *once) {
			snprintf(err, errlen, "%s:%d: %s given twice", path, lineno, k);
			rc = TLBSIM_EINVAL;
			break;
		}
		if (strcmp(k, "name") == 0) {
			if (!*v || strlen(v) >= sizeof(pf->name) || strspn(v, "abcdefghijklmnopqrstuvwxyz"
			    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.") != strlen(v)) {
				snprintf(err, errlen, "%s:%d: name: want 1..63 characters of "
					 "[A-Za-z0-9-_.]", path, lineno);
				rc = TLBSIM_EINVAL;
				break;
			}
			snprintf(pf->name, sizeof(pf->name), "%s", v);
			have_name = true;
		} else if (strcmp(k, "description") == 0) {
			if (strlen(v) >= sizeof(pf->description)) {
				snprintf(err, errlen, "%s:%d: description: at most %zu bytes", path,
					 lineno, sizeof(pf->description) - 1);
				rc = TLBSIM_EINVAL;
				break;
			}
			snprintf(pf->description, sizeof(pf->description), "%s", v);
			have_desc = true;
		} else if (strcmp(k, "arch") == 0) {
			if (strcmp(v, "x86-64") == 0 || strcmp(v, "x86_64") == 0)
				pf->prof.arch = ARCH_X86_64;
			else if (strcmp(v, "arm64") == 0)
				pf->prof.arch = ARCH_ARM64;
			else {
				snprintf(err, errlen, "%s:%d: arch %s: want x86-64 or arm64", path,
					 lineno, v);
				rc = TLBSIM_EINVAL;
				break;
			}
			have_arch = true;
		} else if (strcmp(k, "page_size") == 0) {
			if (parse_int(v, &page) || (page != 4096 && page != 16384 && page != 65536)) {
				snprintf(err, errlen, "%s:%d: page_size %s: want 4096, 16384 or 65536",
					 path, lineno, v);
				rc = TLBSIM_EINVAL;
				break;
			}
			have_page = true;
		} else if (strcmp(k, "cpus") == 0) {
			if (parse_int(v, &x) || x < 1 || x > 1024) {
				snprintf(err, errlen, "%s:%d: cpus %s: want 1..1024", path, lineno, v);
				rc = TLBSIM_EINVAL;
				break;
			}
			pf->prof.nr_cpus = (int)x;
			have_cpus = true;
		} else {
			int id = param_lookup(k);
			if (id < 0) {
				snprintf(err, errlen, "%s:%d: unknown key '%s' (name, description, arch, "
					 "page_size, cpus, or a parameter of tlbsim list params)", path,
					 lineno, k);
				rc = TLBSIM_EINVAL;
				break;
			}
			if (seen[id]) {
				snprintf(err, errlen, "%s:%d: %s given twice", path, lineno, k);
				rc = TLBSIM_EINVAL;
				break;
			}
			if (parse_int(v, &x)) {
				snprintf(err, errlen, "%s:%d: %s = %s: want a non-negative integer",
					 path, lineno, k, v);
				rc = TLBSIM_EINVAL;
				break;
			}
			seen[id] = true;
			pf->params[pf->prof.nparams++] = (struct tlbsim_override){id, x};
		}
	}
	if (!rc && ferror(f)) {
		/* a directory: EISDIR */
		snprintf(err, errlen, "profile %s: %s", path, errno ? strerror(errno) : "read error");
		rc = TLBSIM_EINVAL;
	}
	fclose(f);
	if (rc)
		return rc;
	if (!pf->name[0] || !have_arch || !have_page || !have_cpus) {
		snprintf(err, errlen, "profile %s: missing %s", path,
			 !pf->name[0] ? "name" : !have_arch ? "arch" : !have_page ? "page_size"
										  : "cpus");
		return TLBSIM_EINVAL;
	}
	if (pf->prof.arch == ARCH_X86_64 && page != 4096) {
		snprintf(err, errlen, "profile %s: x86-64 has 4096-byte pages only", path);
		return TLBSIM_EINVAL;
	}
	pf->prof.page_shift = page == 4096 ? 12 : page == 16384 ? 14 : 16;
	pf->prof.name = pf->name;
	pf->prof.description = pf->description[0] ? pf->description : pf->name;
	pf->prof.params = pf->params;
	return 0;
}

void tlbsim_profile_dump(FILE *f, const struct tlbsim_profile *prof)
{
	fprintf(f, "# tlbsim machine profile (load with --profile FILE)\n");
	fprintf(f, "name = %s\n", prof->name);
	fprintf(f, "description = %s\n", prof->description);
	fprintf(f, "arch = %s\n", prof->arch == ARCH_X86_64 ? "x86-64" : "arm64");
	fprintf(f, "page_size = %d\n", 1 << prof->page_shift);
	fprintf(f, "cpus = %d\n", prof->nr_cpus);
	fprintf(f, "# cost parameters: value, then unit and source\n");
	for (int i = 0; i < P_COUNT; i++) {
		int64_t def = prof->arch == ARCH_X86_64 ? tlbsim_param_desc[i].x86_default
						       : tlbsim_param_desc[i].arm64_default, v = def;
		for (int j = 0; j < prof->nparams; j++)
			if (prof->params[j].param == i)
				v = prof->params[j].value;
		if (v != def)
			fprintf(f, "%s = %" PRId64 "  # %s; set by profile %s (the arch default is %"
				PRId64 ")\n", tlbsim_param_desc[i].name, v, tlbsim_param_desc[i].unit,
				prof->name, def);
		else
			fprintf(f, "%s = %" PRId64 "  # %s; %s\n", tlbsim_param_desc[i].name, v,
				tlbsim_param_desc[i].unit, tlbsim_param_desc[i].source);
	}
}
