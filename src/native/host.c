/* host.c - facts about the host (architecture, CPUs, mitigations) and its
 * flush-IPI counter. Reads /proc and /sys only. */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "native/native.h"

uint64_t native_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* the value of "key : value" in a /proc/cpuinfo line, trimmed */
static const char *cpuinfo_value(char *line, const char *key)
{
	size_t l = strlen(key);
	if (strncmp(line, key, l) != 0)
		return NULL;
	char *p = line + l;
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p != ':')
		return NULL;
	p++;
	while (*p == ' ')
		p++;
	char *e = p + strlen(p);
	while (e > p && (e[-1] == '\n' || e[-1] == ' '))
		*--e = 0;
	return p;
}

static bool has_word(const char *list, const char *w)
{
	size_t l = strlen(w);
	for (const char *p = list; (p = strstr(p, w)); p += l)
		if ((p == list || p[-1] == ' ') && (p[l] == 0 || p[l] == ' ' || p[l] == '\n'))
			return true;
	return false;
}

void native_host_probe(struct native_host *h)
{
	memset(h, 0, sizeof(*h));
#if defined(__x86_64__)
	h->x86 = true;
#endif
	long ps = sysconf(_SC_PAGESIZE);
	h->page_size = ps > 0 ? (int)ps : 4096;
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	h->ncpus = n > 0 ? (int)n : 1;
	struct utsname u;
	snprintf(h->release, sizeof(h->release), "%s", uname(&u) == 0 ? u.release : "unknown");
	snprintf(h->model, sizeof(h->model), "unknown");
	h->pti = -1;
	h->pcid = h->x86 ? -1 : 0;
	FILE *f = fopen("/proc/cpuinfo", "r");
	if (f) {
		char line[8192];
		bool model = false, flags = false;
		while (fgets(line, sizeof(line), f)) {
			const char *v;
			if (!model && ((v = cpuinfo_value(line, "model name")) ||
				       (v = cpuinfo_value(line, "CPU part")))) {
				snprintf(h->model, sizeof(h->model), "%s", v);
				model = true;
			}
			if (!flags && (v = cpuinfo_value(line, "flags"))) {
				h->pcid = has_word(v, "pcid");
				h->hypervisor = has_word(v, "hypervisor");
				flags = true;
			}
		}
		fclose(f);
	}
	f = fopen("/sys/devices/system/cpu/vulnerabilities/meltdown", "r");
	if (f) {
		char line[256];
		if (fgets(line, sizeof(line), f))
			h->pti = strstr(line, "PTI") != NULL;
		fclose(f);
	}
}

int native_tlb_shootdowns(uint64_t *n, char *why, size_t whylen)
{
#if !defined(__x86_64__)
	snprintf(why, whylen, "none on arm64: flushes are broadcast TLBI instructions, not IPIs");
	return -1;
#else
	FILE *f = fopen("/proc/interrupts", "r");
	if (!f) {
		snprintf(why, whylen, "/proc/interrupts: %s", strerror(errno));
		return -1;
	}
	char line[16384];
	int rc = -1;
	snprintf(why, whylen, "/proc/interrupts has no TLB line");
	while (fgets(line, sizeof(line), f)) {
		char *p = line;
		while (*p == ' ')
			p++;
		if (strncmp(p, "TLB:", 4) != 0)
			continue;
		p += 4;
		uint64_t sum = 0;
		for (;;) {
			while (*p == ' ' || *p == '\t')
				p++;
			if (!isdigit((unsigned char)*p))
				break;
			char *e;
			sum += strtoull(p, &e, 10);
			p = e;
		}
		*n = sum;
		rc = 0;
		break;
	}
	fclose(f);
	return rc;
#endif
}
