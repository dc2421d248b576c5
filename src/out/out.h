/* out.h - output formats: human table and JSON (schema: docs/output.md). */
#ifndef TLBSIM_OUT_H
#define TLBSIM_OUT_H

#include <stdbool.h>
#include <stdio.h>

#include "tlbsim/tlbsim.h"

struct run_result {
	struct tlbsim_config cfg;
	struct tlbsim_resolved res;
	struct tlbsim_metrics m;
};

void out_json(FILE *f, const char *cmdline, const struct run_result *runs, int n, bool compare);
void out_table(FILE *f, const struct run_result *runs, int n, bool compare);
/* JSON string escaping into f */
void json_string(FILE *f, const char *s);

#endif
