/* out.h - output formats: human table, JSON (schema: docs/output.md) and the
 * Chrome trace-event timeline. */
#ifndef TLBSIM_OUT_H
#define TLBSIM_OUT_H

#include <stdbool.h>
#include <stdio.h>

#include "sim/trace.h"
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
/* An event trace as Chrome trace-event JSON in path (chrome.c). 0 or
 * TLBSIM_EINVAL with err filled. */
int out_chrome_trace(const char *path, const struct trace_buf *tb, int ncpus, const char *title,
		     const char *token, char *err, size_t errlen);

#endif
