/* trace.c - trace record text and buffers (see trace.h). */
#include <stdio.h>
#include <stdlib.h>

#include "sim/trace.h"

void trace_format(const struct trace_rec *t, char *buf, size_t len)
{
	if (t->pt->format)
		t->pt->format(buf, len, t->a, t->b);
	else
		snprintf(buf, len, "tlbsim_%s", t->pt->name);
}

void trace_buf_free(struct trace_buf *b)
{
	free(b->r);
	b->r = NULL;
	b->n = 0;
	b->cap = 0;
}
