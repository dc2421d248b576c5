/* cmd_list.c - `tlbsim list {workloads|policies|profiles|params|kernels}`. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "out/out.h"

/* tlbsim list WHAT --json: one JSON object {"WHAT": [...]} (docs/output.md) */
static int list_json(const char *what)
{
	FILE *f = stdout;
	if (strcmp(what, "workloads") == 0) {
		fprintf(f, "{\"workloads\":[");
		for (int i = 0; i < tlbsim_workload_count(); i++) {
			const struct tlbsim_workload_desc *d = tlbsim_workload_get(i);
			fprintf(f, "%s\n{\"name\":", i ? "," : "");
			json_string(f, d->name);
			fprintf(f, ",\"description\":");
			json_string(f, d->description);
			fprintf(f, ",\"default_profile\":");
			json_string(f, d->default_profile);
			fprintf(f, ",\"default_threads\":%d,\"fixed_threads\":%s,\"default_iters\":%" PRId64
				   ",\"timed\":%s,\"kernel_policy\":", d->default_threads,
				d->fixed_threads ? "true" : "false", d->default_iters,
				d->timed ? "true" : "false");
			json_string(f, d->default_policy ? d->default_policy : "");
			fprintf(f, ",\"check\":{\"iters\":%" PRId64 ",\"cpus\":%d,\"params\":",
				d->check_iters, d->check_cpus);
			json_string(f, d->check_wparams ? d->check_wparams : "");
			fprintf(f, "},\"params\":[");
			for (int j = 0; j < d->nparams; j++) {
				fprintf(f, "%s{\"name\":", j ? "," : "");
				json_string(f, d->params[j].name);
				fprintf(f, ",\"default\":");
				json_string(f, d->params[j].defval);
				fprintf(f, ",\"meaning\":");
				json_string(f, d->params[j].meaning);
				fputc('}', f);
			}
			fprintf(f, "]}");
		}
		fprintf(f, "\n]}\n");
	} else if (strcmp(what, "policies") == 0) {
		fprintf(f, "{\"policies\":[");
		for (int k = 0; k < tlbsim_knob_count(); k++) {
			const struct tlbsim_knob *kn = tlbsim_knob_get(k);
			fprintf(f, "%s\n{\"name\":", k ? "," : "");
			json_string(f, kn->name);
			fprintf(f, ",\"meaning\":");
			json_string(f, kn->meaning);
			fprintf(f, ",\"default\":");
			json_string(f, kn->values[kn->default_value].name);
			fprintf(f, ",\"values\":[");
			for (int v = 0; v < kn->nvalues; v++) {
				fprintf(f, "%s{\"name\":", v ? "," : "");
				json_string(f, kn->values[v].name);
				fprintf(f, ",\"meaning\":");
				json_string(f, kn->values[v].meaning);
				fputc('}', f);
			}
			fprintf(f, "]}");
		}
		fprintf(f, "\n]}\n");
	} else if (strcmp(what, "profiles") == 0) {
		fprintf(f, "{\"profiles\":[");
		for (int i = 0; i < tlbsim_profile_count(); i++) {
			const struct tlbsim_profile *p = tlbsim_profile_get(i);
			fprintf(f, "%s\n{\"name\":", i ? "," : "");
			json_string(f, p->name);
			fprintf(f, ",\"description\":");
			json_string(f, p->description);
			fprintf(f, ",\"arch\":\"%s\",\"page_size\":%llu,\"cpus\":%d}",
				p->arch == ARCH_X86_64 ? "x86_64" : "arm64", 1ull << p->page_shift,
				p->nr_cpus);
		}
		fprintf(f, "\n]}\n");
	} else if (strcmp(what, "params") == 0) {
		fprintf(f, "{\"params\":[");
		for (int i = 0; i < P_COUNT; i++) {
			const struct param_desc *d = &tlbsim_param_desc[i];
			fprintf(f, "%s\n{\"name\":", i ? "," : "");
			json_string(f, d->name);
			fprintf(f, ",\"unit\":");
			json_string(f, d->unit);
			fprintf(f, ",\"x86_64\":%" PRId64 ",\"arm64\":%" PRId64 ",\"source\":",
				d->x86_default, d->arm64_default);
			json_string(f, d->source);
			fputc('}', f);
		}
		fprintf(f, "\n]}\n");
	} else if (strcmp(what, "kernels") == 0) {
		fprintf(f, "{\"kernels\":[");
		for (int i = 0; i < tlbsim_kernel_count(); i++) {
			const struct tlbsim_kernel_preset *k = tlbsim_kernel_get(i);
			fprintf(f, "%s\n{\"version\":", i ? "," : "");
			json_string(f, k->version);
			fprintf(f, ",\"policy\":");
			json_string(f, k->policy);
			fprintf(f, ",\"why\":");
			json_string(f, k->why);
			fprintf(f, ",\"unmodelled\":");
			if (k->unmodelled)
				json_string(f, k->unmodelled);
			else
				fprintf(f, "null");
			fputc('}', f);
		}
		fprintf(f, "\n]}\n");
	} else {
		return cli_error("list: unknown list '%s' (want workloads, policies, profiles, params "
				 "or kernels)", what);
	}
	return 0;
}

int cmd_list(int argc, char **argv)
{
	if (argc < 2)
		return cli_error("list: missing what to list (workloads, policies, profiles, params "
				 "or kernels)");
	/* --help anywhere (list params --help exited 2) */
	bool help = false;
	for (int i = 1; i < argc; i++)
		help |= strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0;
	if (help) {
		printf("usage: tlbsim list {workloads|policies|profiles|params|kernels} [--json]\n"
		       "       tlbsim list profiles --dump NAME   (a profile as a file for --profile FILE)\n");
		return 0;
	}
	/* --json before WHAT is the same request (list --json workloads named
	 * "workloads" as the unexpected argument) */
	if (argc == 3 && strcmp(argv[1], "--json") == 0 && strcmp(argv[2], "--json") != 0)
		return list_json(argv[2]);
	const char *what = argv[1];
	if (strcmp(what, "profiles") == 0 && argc >= 3 && strcmp(argv[2], "--dump") == 0) {
		if (argc < 4)
			return cli_error("list profiles --dump: missing NAME (a profile or a file)");
		if (argc > 4)
			return cli_error("list: unexpected argument '%s'", argv[4]);
		const struct tlbsim_profile *p = tlbsim_profile_find(argv[3]);
		struct tlbsim_profile_file *pf = NULL;
		if (!p) {
			char err[TLBSIM_ERRLEN];
			pf = malloc(sizeof(*pf));
			if (!pf)
				return cli_error_code(EXIT_INTERNAL, "out of memory");
			if (tlbsim_profile_load(argv[3], pf, err, sizeof(err))) {
				free(pf);
				return cli_error("list profiles --dump %s: not a built-in profile (tlbsim "
						 "list profiles), and as a file: %s", argv[3], err);
			}
			p = &pf->prof;
		}
		tlbsim_profile_dump(stdout, p);
		free(pf);
		return 0;
	}
	if (argc >= 3 && strcmp(argv[2], "--json") == 0) {
		if (argc > 3)
			return cli_error("list: unexpected argument '%s'", argv[3]);
		return list_json(what);
	}
	if (argc > 2)
		return cli_error("list: unexpected argument '%s'", argv[2]);
	if (strcmp(what, "kernels") == 0) {
		for (int i = 0; i < tlbsim_kernel_count(); i++) {
			const struct tlbsim_kernel_preset *k = tlbsim_kernel_get(i);
			printf("%-6s %s\n", k->version, k->policy);
			printf("       %s\n", k->why);
			if (k->unmodelled)
				printf("       not modelled: %s\n", k->unmodelled);
		}
		return 0;
	}
	if (strcmp(what, "workloads") == 0) {
		for (int i = 0; i < tlbsim_workload_count(); i++) {
			const struct tlbsim_workload_desc *d = tlbsim_workload_get(i);
			printf("%-11s %s\n", d->name, d->description);
			char tasks[32];
			if (d->default_threads > 0)
				snprintf(tasks, sizeof(tasks), "%d", d->default_threads);
			else if (d->default_threads < 0)
				snprintf(tasks, sizeof(tasks), "%d per CPU", -d->default_threads);
			else
				snprintf(tasks, sizeof(tasks), "one per CPU");
			printf("            default profile %s, %s %s, %s %" PRId64 "; check instance: "
			       "iters %" PRId64 ", cpus %d%s%s\n", d->default_profile,
			       d->fixed_threads ? "fixed threads" : "tasks", tasks,
			       d->default_iters ? "iters" : "rounds (--iters)", d->default_iters,
			       d->check_iters, d->check_cpus,
			       d->check_wparams && *d->check_wparams ? ", " : "",
			       d->check_wparams ? d->check_wparams : "");
			if (d->default_policy && *d->default_policy)
				printf("            kernel: %s (under any --policy)\n", d->default_policy);
			for (int j = 0; j < d->nparams; j++)
				printf("            -w %s=%s\t%s\n", d->params[j].name,
				       d->params[j].defval, d->params[j].meaning);
		}
	} else if (strcmp(what, "policies") == 0) {
		for (int k = 0; k < tlbsim_knob_count(); k++) {
			const struct tlbsim_knob *kn = tlbsim_knob_get(k);
			printf("%s: %s\n", kn->name, kn->meaning);
			for (int v = 0; v < kn->nvalues; v++)
				printf("  %s=%-16s %s%s\n", kn->name, kn->values[v].name,
				       kn->values[v].meaning, v == kn->default_value ? " [default]" : "");
		}
	} else if (strcmp(what, "profiles") == 0) {
		for (int i = 0; i < tlbsim_profile_count(); i++) {
			const struct tlbsim_profile *p = tlbsim_profile_get(i);
			printf("%-10s %s\n", p->name, p->description);
		}
	} else if (strcmp(what, "params") == 0) {
		printf("%-18s %-7s %12s %12s  %s\n", "name", "unit", "x86-64", "arm64", "source");
		for (int i = 0; i < P_COUNT; i++) {
			const struct param_desc *d = &tlbsim_param_desc[i];
			printf("%-18s %-7s %12" PRId64 " %12" PRId64 "  %s\n", d->name, d->unit,
			       d->x86_default, d->arm64_default, d->source);
		}
	} else {
		return cli_error("list: unknown list '%s' (want workloads, policies, profiles, params "
				 "or kernels)", what);
	}
	return 0;
}
