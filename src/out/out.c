/*
 * out.c - output writers. JSON is streamed with a fixed key order and
 * integer-only numbers so output is byte-stable; 64-bit addresses would be
 * hex strings (none are printed yet). The table uses thousands separators.
 */
#include <inttypes.h>
#include <string.h>

#include "cost/params.h"
#include "out/out.h"

void json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void json_run(FILE *f, const char *cmdline, const struct run_result *r)
{
	const struct tlbsim_resolved *res = &r->res;
	fprintf(f, "{\"tool\":\"tlbsim\",\"version\":\"%s\",\"command\":", TLBSIM_VERSION);
	json_string(f, cmdline);
	fprintf(f, ",\"workload\":");
	json_string(f, res->workload->name);
	fprintf(f, ",\"params\":{");
	for (int i = 0; i < res->nwparams; i++) {
		fprintf(f, "%s", i ? "," : "");
		json_string(f, res->wparams[i].name);
		fputc(':', f);
		json_string(f, res->wparams[i].value);
	}
	fprintf(f, "},\"profile\":");
	json_string(f, res->profile->name);
	fprintf(f, ",\"arch\":\"%s\",\"page_size\":%llu,\"cpus\":%d,\"threads\":%d,"
		   "\"iters\":%" PRId64 ",\"seed\":%" PRIu64 ",\"policy\":{",
		res->profile->arch == ARCH_X86_64 ? "x86_64" : "arm64",
		1ull << res->profile->page_shift, res->cpus, res->threads, res->iters, r->cfg.seed);
	for (int k = 0; k < tlbsim_knob_count(); k++) {
		fprintf(f, "%s\"%s\":", k ? "," : "", tlbsim_knob_get(k)->name);
		json_string(f, tlbsim_policy_value_name(&r->cfg.policy, k));
	}
	fprintf(f, "},\"overrides\":{");
	for (int i = 0; i < r->cfg.noverrides; i++)
		fprintf(f, "%s\"%s\":%" PRId64, i ? "," : "",
			tlbsim_param_desc[r->cfg.overrides[i].param].name, r->cfg.overrides[i].value);
	fprintf(f, "},\"first_violation\":");
	if (r->m.first_violation[0])
		json_string(f, r->m.first_violation);
	else
		fprintf(f, "null");
	fprintf(f, ",\"metrics\":{");
	const struct tlbsim_metrics *m = &r->m;
	const char *sep = "";
#define X(n)                                                                     \
	fprintf(f, "%s\"" #n "\":%" PRIu64, sep, m->n);                          \
	sep = ",";
	TLBSIM_METRICS(X)
#undef X
	fprintf(f, ",\"tlbi\":{");
	sep = "";
#define X(n)                                                                     \
	fprintf(f, "%s\"" #n "\":%" PRIu64, sep, m->tlbi.n);                     \
	sep = ",";
	TLBSIM_TLBI_KINDS(X)
#undef X
	fprintf(f, "}}}");
}

void out_json(FILE *f, const char *cmdline, const struct run_result *runs, int n, bool compare)
{
	if (!compare) {
		json_run(f, cmdline, &runs[0]);
		fputc('\n', f);
		return;
	}
	fprintf(f, "{\"runs\":[");
	for (int i = 0; i < n; i++) {
		fprintf(f, "%s\n", i ? "," : "");
		json_run(f, cmdline, &runs[i]);
	}
	fprintf(f, "\n]}\n");
}

/* 1234567 -> "1,234,567" */
static const char *thousands(uint64_t v, char *buf, size_t len)
{
	char tmp[32];
	int n = snprintf(tmp, sizeof(tmp), "%" PRIu64, v);
	size_t o = 0;
	for (int i = 0; i < n && o + 2 < len; i++) {
		if (i && (n - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = tmp[i];
	}
	buf[o] = 0;
	return buf;
}

/* ns -> seconds with 6 decimals, integer arithmetic only */
static const char *secs(uint64_t ns, char *buf, size_t len)
{
	snprintf(buf, len, "%" PRIu64 ".%06" PRIu64 " s", ns / 1000000000u, (ns / 1000u) % 1000000u);
	return buf;
}

struct row {
	const char *name;
	bool time;
	uint64_t (*get)(const struct tlbsim_metrics *m);
};

#define GETTER(n) static uint64_t get_##n(const struct tlbsim_metrics *m) { return m->n; }
TLBSIM_METRICS(GETTER)
#undef GETTER
#define GETTER(n) static uint64_t get_tlbi_##n(const struct tlbsim_metrics *m) { return m->tlbi.n; }
TLBSIM_TLBI_KINDS(GETTER)
#undef GETTER

static const struct row rows[] = {
	{"wall", true, get_wall_ns}, {"user", true, get_user_ns}, {"sys", true, get_sys_ns},
	{"idle", true, get_idle_ns}, {"ops", false, get_ops},
	{"page_faults", false, get_page_faults}, {"tlb_misses", false, get_tlb_misses},
	{"page_walks", false, get_page_walks}, {"gathers", false, get_gathers},
	{"nested_finishes", false, get_nested_finishes}, {"ipi_sent", false, get_ipi_sent},
	{"ipi_received", false, get_ipi_received},
	{"flush_local_pages", false, get_flush_local_pages}, {"flush_full", false, get_flush_full},
	{"tlbi vale1is", false, get_tlbi_vale1is}, {"tlbi vae1is", false, get_tlbi_vae1is},
	{"tlbi aside1is", false, get_tlbi_aside1is}, {"tlbi vaale1is", false, get_tlbi_vaale1is},
	{"tlbi vmalle1is", false, get_tlbi_vmalle1is}, {"tlbi local", false, get_tlbi_local},
	{"dvm_wait", true, get_dvm_wait_ns}, {"lock_wait", true, get_lock_wait_ns},
	{"tables_freed", false, get_tables_freed}, {"pages_freed", false, get_pages_freed},
	{"violations", false, get_violations}, {"events", false, get_events},
};

void out_table(FILE *f, const struct run_result *runs, int n, bool compare)
{
	const struct tlbsim_resolved *r0 = &runs[0].res;
	fprintf(f, "workload %s (", r0->workload->name);
	for (int i = 0; i < r0->nwparams; i++)
		fprintf(f, "%s%s=%s", i ? " " : "", r0->wparams[i].name, r0->wparams[i].value);
	fprintf(f, "), profile %s, %d CPUs, %d threads x %" PRId64 " iters, seed %" PRIu64 "\n",
		r0->profile->name, r0->cpus, r0->threads, r0->iters, runs[0].cfg.seed);
	char buf[48];
	/* a column is labelled by the knob that differs between the runs (the
	 * first knob if none does) */
	int label = 0;
	for (int k = 0; k < tlbsim_knob_count(); k++)
		for (int i = 1; i < n; i++)
			if (strcmp(tlbsim_policy_value_name(&runs[i].cfg.policy, k),
				   tlbsim_policy_value_name(&runs[0].cfg.policy, k)) != 0 && !label)
				label = k + 1;
	label = label ? label - 1 : 0;
	fprintf(f, "policy:");
	for (int k = 0; k < tlbsim_knob_count(); k++)
		if (k != label)
			fprintf(f, " %s=%s", tlbsim_knob_get(k)->name,
				tlbsim_policy_value_name(&runs[0].cfg.policy, k));
	fprintf(f, "\n%-18s", "metric");
	for (int i = 0; i < n; i++) {
		char h[64];
		snprintf(h, sizeof(h), "%s=%s", tlbsim_knob_get(label)->name,
			 tlbsim_policy_value_name(&runs[i].cfg.policy, label));
		fprintf(f, " %20s", h);
	}
	if (compare)
		fprintf(f, " %9s", "ratio");
	fputc('\n', f);
	for (size_t k = 0; k < sizeof(rows) / sizeof(rows[0]); k++) {
		fprintf(f, "%-18s", rows[k].name);
		for (int i = 0; i < n; i++) {
			uint64_t v = rows[k].get(&runs[i].m);
			fprintf(f, " %20s", rows[k].time ? secs(v, buf, sizeof(buf))
							 : thousands(v, buf, sizeof(buf)));
		}
		if (compare) {
			uint64_t a = rows[k].get(&runs[0].m), b = rows[k].get(&runs[n - 1].m);
			if (a == 0)
				fprintf(f, " %9s", b ? "inf" : "-");
			else {
				/* ratio last/first with 2 decimals, integer arithmetic */
				unsigned __int128 q = ((unsigned __int128)b * 100 + a / 2) / a;
				fprintf(f, " %6" PRIu64 ".%02" PRIu64, (uint64_t)(q / 100),
					(uint64_t)(q % 100));
			}
		}
		fputc('\n', f);
	}
	if (compare && n > 1)
		fprintf(f, "ratio = %s / %s\n",
			tlbsim_policy_value_name(&runs[n - 1].cfg.policy, label),
			tlbsim_policy_value_name(&runs[0].cfg.policy, label));
}
