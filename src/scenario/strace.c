/*
 * strace.c - `tlbsim import strace`: a scenario file (.tlbs) from the output
 * of `strace -f -tt` (or -ttt; -T durations are used when present).
 *
 * Each pid becomes a task: the first one `main`, a clone with CLONE_VM a
 * `thread`, a fork, vfork or clone without CLONE_VM a `process`; the parent
 * starts it where the trace shows the clone. The memory syscalls the model
 * has become statements - mmap (anonymous; a file mapping is mapped
 * anonymous, said in a comment), munmap, madvise(MADV_DONTNEED|MADV_FREE) -
 * and every other line becomes a comment, so nothing of the trace is lost.
 * Addresses are kept: each mmap asks for the address the trace got (a hint)
 * and its result goes to a variable; a later address inside that mapping is
 * written as variable + offset, so the file stays right where the model
 * places a mapping elsewhere. The time between two syscalls of a task
 * (minus the first one's -T duration) becomes `compute`. Lines of different
 * pids interleave, and a call split into `<unfinished ...>` and
 * `<... NAME resumed>` is joined before it is read.
 *
 * Limits follow the scenario compiler's: 63 tasks besides main, 4000 live
 * mappings per trace (their variables are reused once unmapped; a short
 * Python 3 program with three threads made 959 mmap calls) and an output
 * that fits a scenario file (SCEN_MAX_FILE_BYTES, checked by the caller).
 */
#define _XOPEN_SOURCE 700
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenario/scenario.h"

#define ST_MAX_TASKS 64
#define ST_MAX_MAPS 4000
#define ST_MAX_LINE 8192
#define ST_MAX_GAP_NS 1000000000ull	/* `compute` takes at most 1 s at a time */

struct st_map {
	int proc;			/* index of the owning process's task */
	uint64_t start, len;
	int var;			/* m<var> */
	bool live;
};

struct st_task {
	long pid;
	int proc;			/* the task whose address space it uses */
	bool thread;			/* CLONE_VM: a thread of proc */
	bool started;			/* a clone/fork of it was seen (main: always) */
	char *body;			/* statements, one per line */
	size_t len, cap;
	uint64_t last_ns;		/* end of its previous syscall; 0: none yet */
	char *pending;			/* an <unfinished ...> call */
	uint64_t pending_ns;
};

struct st {
	struct st_task task[ST_MAX_TASKS];
	int ntasks;
	struct st_map map[ST_MAX_MAPS];
	bool var_used[ST_MAX_MAPS];
	int var_task[ST_MAX_MAPS];	/* 1 + the one task that used it; 0: none yet;
					 * -1: several (never reused) */
	int nvars;			/* variables declared (max index + 1) */
	int nmaps;			/* map slots ever used (max index + 1) */
	const char *fname;
	int line;
	const char *const *where;	/* NULL, or a name for each line (strace -ff) */
	size_t nwhere;
	FILE *errf;
	int errors;
	int nsys;			/* syscall lines read */
	uint64_t day_ns, last_line_ns;	/* -tt times: days passed, the last line's */
	bool touch;			/* write every page of each mmap after it */
};

static void st_err(struct st *s, const char *fmt, const char *arg)
{
	if (s->errors++ >= SCEN_MAX_ERRORS)
		return;
	if (s->where && s->line >= 1 && (size_t)s->line <= s->nwhere) {
		scenario_put_name(s->errf, s->where[s->line - 1]);
		fputs(": ", s->errf);
	} else if (s->line == 0) {	/* the whole file: no line to name */
		scenario_put_name(s->errf, s->fname);
		fputs(": ", s->errf);
	} else {
		scenario_put_name(s->errf, s->fname);
		fprintf(s->errf, ":%d: ", s->line);
	}
	fprintf(s->errf, fmt, arg);
	fputc('\n', s->errf);
	/* as the scenario compiler says it (parse.c): the last message */
	if (s->errors == SCEN_MAX_ERRORS) {
		scenario_put_name(s->errf, s->fname);
		fputs(": too many errors, giving up\n", s->errf);
	}
}

static void emit(struct st_task *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void emit(struct st_task *t, const char *fmt, ...)
{
	char buf[ST_MAX_LINE + 256];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(buf))
		n = (int)sizeof(buf) - 1;
	if (t->len + (size_t)n + 6 > t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 4096;
		while (cap < t->len + (size_t)n + 6)
			cap *= 2;
		char *p = realloc(t->body, cap);
		if (!p)
			return;
		t->body = p;
		t->cap = cap;
	}
	memcpy(t->body + t->len, "    ", 4);
	memcpy(t->body + t->len + 4, buf, (size_t)n);
	t->len += 4 + (size_t)n;
	t->body[t->len++] = '\n';
	t->body[t->len] = 0;
}

/* a comment line: the text with newlines and control bytes made harmless */
static void emit_comment(struct st_task *t, const char *what, const char *text)
{
	char buf[ST_MAX_LINE];
	size_t n = 0;
	for (const char *p = text; *p && n + 2 < sizeof(buf); p++)
		buf[n++] = (unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f ? ' ' : *p;
	if (n && buf[n - 1] == '\\')
		buf[n++] = ' ';		/* a final backslash would continue the line */
	buf[n] = 0;
	emit(t, "# %s%s", what, buf);
}

static struct st_task *task_of_pid(struct st *s, long pid, bool create)
{
	for (int i = 0; i < s->ntasks; i++)
		if (s->task[i].pid == pid)
			return &s->task[i];
	if (!create)
		return NULL;
	if (s->ntasks == ST_MAX_TASKS) {
		char b[32];
		snprintf(b, sizeof(b), "%ld", pid);
		st_err(s, "pid %s: more than 64 tasks (the scenario language's limit)", b);
		return NULL;
	}
	struct st_task *t = &s->task[s->ntasks];
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->proc = s->ntasks;	/* until a clone says it is a thread */
	/* a pid first seen while a task's CLONE_VM clone has not returned yet
	 * (strace -f prints in time order: the child may run first) is that
	 * clone's thread: it maps into, and finds mappings in, that process
	 * from its first line (do_clone confirms it when the clone returns) */
	for (int k = 0; k < s->ntasks; k++) {
		const char *pc = s->task[k].pending;
		if (pc && (strncmp(pc, "clone(", 6) == 0 || strncmp(pc, "clone3(", 7) == 0) &&
		    strstr(pc, "CLONE_VM") && !strstr(pc, "CLONE_VFORK")) {
			t->proc = s->task[k].proc;
			break;
		}
	}
	s->ntasks++;
	return t;
}

/* "12:34:56.123456" or "1712345678.123456" -> ns; false if neither. *tod
 * (if not NULL): the first form, a time of day */
static bool parse_time(const char **pp, uint64_t *ns, bool *tod)
{
	const char *p = *pp;
	uint64_t sec = 0, frac = 0;
	int fd = 0;
	if (isdigit((unsigned char)p[0]) && isdigit((unsigned char)p[1]) && p[2] == ':') {
		unsigned h, m, sc;
		int used = 0;
		if (sscanf(p, "%2u:%2u:%2u%n", &h, &m, &sc, &used) != 3 || used != 8)
			return false;
		sec = (uint64_t)h * 3600 + m * 60 + sc;
		p += 8;
		if (tod)
			*tod = true;
	} else {
		if (!isdigit((unsigned char)*p))
			return false;
		while (isdigit((unsigned char)*p) && sec < 1000000000000ull)
			sec = sec * 10 + (uint64_t)(*p++ - '0');
	}
	if (*p != '.')
		return false;
	p++;
	while (isdigit((unsigned char)*p)) {
		if (fd < 9) {
			frac = frac * 10 + (uint64_t)(*p - '0');
			fd++;
		}
		p++;
	}
	if (fd == 0)
		return false;
	while (fd < 9) {
		frac *= 10;
		fd++;
	}
	*ns = sec * 1000000000ull + frac;
	*pp = p;
	return true;
}

/* Split "name(a, b, c) = ret <dur>" into its parts (in place). */
struct st_call {
	char *name;
	char *arg[8];
	int nargs;
	char *ret;
	uint64_t dur_ns;
};

static bool split_call(char *p, struct st_call *c)
{
	memset(c, 0, sizeof(*c));
	c->name = p;
	while (*p && *p != '(')
		p++;
	if (*p != '(' || p == c->name)
		return false;
	*p++ = 0;
	for (char *q = c->name; *q; q++)
		if (!isalnum((unsigned char)*q) && *q != '_')
			return false;
	int depth = 0;
	bool quote = false;
	char *a = p;
	for (;; p++) {
		if (!*p)
			return false;
		if (quote) {
			if (*p == '\\' && p[1])
				p++;
			else if (*p == '"')
				quote = false;
			continue;
		}
		if (*p == '<' && p > a && isdigit((unsigned char)p[-1])) {
			/* strace -y: fd<path>, the path unescaped but for '>' (\76):
			 * a ')' or ',' in it ended the argument list */
			char *e = strchr(p, '>');
			if (!e)
				return false;
			p = e;
		} else if (*p == '"')
			quote = true;
		else if (*p == '(' || *p == '{' || *p == '[')
			depth++;
		else if ((*p == '}' || *p == ']') && depth > 0)
			depth--;
		else if (*p == ')' && depth > 0)
			depth--;
		else if ((*p == ',' || *p == ')') && depth == 0) {
			bool end = *p == ')';
			*p = 0;
			while (*a == ' ')
				a++;
			if (*a && c->nargs < 8)
				c->arg[c->nargs++] = a;
			a = p + 1;
			if (end) {
				p++;
				break;
			}
		}
	}
	while (*p == ' ')
		p++;
	if (*p != '=')
		return false;
	p++;
	while (*p == ' ')
		p++;
	c->ret = p;
	char *lt = strrchr(p, '<');
	if (lt && lt > p) {
		uint64_t d;
		const char *q = lt + 1;
		if (parse_time(&q, &d, NULL) && *q == '>')
			c->dur_ns = d;
	}
	char *sp = strchr(p, ' ');
	if (sp)
		*sp = 0;
	return true;
}

static bool parse_u64_any(const char *t, uint64_t *v)
{
	if (!t || !*t)
		return false;
	if (strcmp(t, "NULL") == 0) {
		*v = 0;
		return true;
	}
	char *end;
	errno = 0;
	unsigned long long x = strtoull(t, &end, 0);
	if (end == t || *end || errno || x > (unsigned long long)INT64_MAX)
		return false;		/* the language's numbers are 63-bit */
	*v = x;
	return true;
}

/* addr as "m<var> + off" if inside a live mapping of task t's process, else
 * NULL. A variable another task names is never reused: t's statement runs in
 * the model's order, which may put it after the owner's next mmap into the
 * variable (a thread's munmap of main's old mapping hit its new one) */
static const char *addr_expr(struct st *s, const struct st_task *t, uint64_t addr, char *buf,
			     size_t n)
{
	const int proc = t->proc;
	/* the smallest live mapping holding addr: a MAP_FIXED one placed over
	 * part of an earlier one (the loader's segments) is the more precise */
	const struct st_map *best = NULL;
	for (int i = 0; i < s->nmaps; i++) {
		const struct st_map *m = &s->map[i];
		if (m->live && m->proc == proc && addr >= m->start && addr - m->start < m->len &&
		    (!best || m->len < best->len))
			best = m;
	}
	if (!best)
		return NULL;
	if (s->var_task[best->var] != (int)(t - s->task) + 1)
		s->var_task[best->var] = -1;
	if (addr == best->start)
		snprintf(buf, n, "m%d", best->var);
	else
		snprintf(buf, n, "m%d + 0x%" PRIx64, best->var, addr - best->start);
	return buf;
}

static void do_mmap(struct st *s, struct st_task *t, const struct st_call *c, const char *line)
{
	uint64_t addr, len, ret;
	if (c->nargs < 6 || !parse_u64_any(c->arg[1], &len) || !parse_u64_any(c->ret, &ret) ||
	    len == 0) {
		emit_comment(t, "failed or unread: ", line);
		return;
	}
	if (!parse_u64_any(c->arg[0], &addr))
		addr = 0;
	/* flags by name, or as the number strace -X raw prints (the Linux
	 * values of x86-64 and arm64: MAP_SHARED 0x01, MAP_ANONYMOUS 0x20,
	 * MAP_NORESERVE 0x4000; PROT_NONE 0) */
	uint64_t fl = 0, prot = 1;
	bool raw = parse_u64_any(c->arg[3], &fl);
	bool raw_prot = parse_u64_any(c->arg[2], &prot);
	bool shared = raw ? (fl & 0x01) != 0 : strstr(c->arg[3], "MAP_SHARED") != NULL;
	bool anon = raw ? (fl & 0x20) != 0 : strstr(c->arg[3], "MAP_ANON") != NULL;
	bool reserve = (raw_prot ? prot == 0 : strstr(c->arg[2], "PROT_NONE") != NULL) ||
		       (raw ? (fl & 0x4000) != 0 : strstr(c->arg[3], "MAP_NORESERVE") != NULL);
	int slot = -1, var = -1;
	for (int i = 0; i < ST_MAX_MAPS; i++)	/* the first free: stops early */
		if (!s->map[i].live) {
			slot = i;
			break;
		}
	/* a variable is reused only by the one task that used it before:
	 * other tasks run in the model's order, not the trace's, and might
	 * still read it (addr_expr marks a variable two tasks named) */
	int self = (int)(t - s->task) + 1;
	for (int v = 0; v < s->nvars && slot >= 0 && var < 0; v++)
		if (!s->var_used[v] && s->var_task[v] == self)
			var = v;
	for (int v = 0; v < ST_MAX_MAPS && slot >= 0 && var < 0; v++)
		if (!s->var_task[v])
			var = v;
	if (slot < 0 || var < 0) {
		st_err(s, "more than %s mappings in use (the scenario language's 4096 names)",
		       "4000");
		_Static_assert(ST_MAX_MAPS == 4000 && SCEN_MAX_NAMES == 4096, "the message's numbers");
		return;
	}
	s->var_used[var] = true;
	s->var_task[var] = self;
	if (var + 1 > s->nvars)
		s->nvars = var + 1;
	if (slot + 1 > s->nmaps)
		s->nmaps = slot + 1;
	s->map[slot] = (struct st_map){.proc = t->proc, .start = ret, .len = len, .var = var,
				       .live = true};
	if (!anon) {
		char fdtxt[96];
		snprintf(fdtxt, sizeof(fdtxt), "%.40s in the trace: mapped anonymous here", c->arg[4]);
		emit_comment(t, "a mapping of fd ", fdtxt);
	}
	emit(t, "m%d = mmap(0x%" PRIx64 ", 0x%" PRIx64 ", %s)    # 0x%" PRIx64, var, ret, len,
	     shared ? "shared" : "private", ret);
	/* a reservation (PROT_NONE, MAP_NORESERVE: an allocator's or ASan's
	 * terabytes) is not memory the program writes */
	if (s->touch && reserve)
		emit_comment(t, "not touched: ", "a PROT_NONE or MAP_NORESERVE reservation");
	else if (s->touch)
		emit(t, "touch(m%d, 0x%" PRIx64 ")", var, len);
}

static void do_munmap_madvise(struct st *s, struct st_task *t, const struct st_call *c,
			      const char *line, bool madv)
{
	uint64_t addr, len;
	char ab[64];
	if (c->nargs < (madv ? 3 : 2) || !parse_u64_any(c->arg[0], &addr) ||
	    !parse_u64_any(c->arg[1], &len) || c->ret[0] == '-') {
		emit_comment(t, "failed or unread: ", line);
		return;
	}
	const char *a = addr_expr(s, t, addr, ab, sizeof(ab));
	if (!a) {
		emit_comment(t, "not mapped by a traced mmap: ", line);
		return;
	}
	if (madv) {
		/* by name, or the number of strace -X raw (4 and 8 on Linux) */
		uint64_t an = 0;
		bool araw = parse_u64_any(c->arg[2], &an);
		const char *adv = (araw ? an == 4 : strcmp(c->arg[2], "MADV_DONTNEED") == 0) ? "dontneed"
				  : (araw ? an == 8 : strcmp(c->arg[2], "MADV_FREE") == 0)   ? "free"
									  : NULL;
		if (!adv) {
			emit_comment(t, "not modelled: ", line);
			return;
		}
		emit(t, "madvise(%s, 0x%" PRIx64 ", %s)", a, len, adv);
		return;
	}
	emit(t, "munmap(%s, 0x%" PRIx64 ")", a, len);
	/* mappings wholly inside the range are gone; their variables free */
	for (int i = 0; i < s->nmaps; i++) {
		struct st_map *m = &s->map[i];
		if (m->live && m->proc == t->proc && m->start >= addr &&
		    m->start + m->len <= addr + len) {
			m->live = false;
			s->var_used[m->var] = false;
		}
	}
}

static void do_clone(struct st *s, struct st_task *t, const struct st_call *c, const char *line,
		     bool fork_like)
{
	uint64_t child;
	if (!parse_u64_any(c->ret, &child) || child == 0 || child > 0x7fffffff) {
		emit_comment(t, "failed or unread: ", line);
		return;
	}
	/* CLONE_VM makes a thread, except with CLONE_VFORK (posix_spawn,
	 * system(): the child execs at once, and what the exec'd program maps
	 * is its own) - a process, as vfork() is */
	bool vm = false, vfork = false;
	for (int i = 0; i < c->nargs && !fork_like; i++) {
		if (strstr(c->arg[i], "CLONE_VM"))
			vm = true;
		if (strstr(c->arg[i], "CLONE_VFORK"))
			vfork = true;
	}
	if (vfork)
		vm = false;
	struct st_task *ct = task_of_pid(s, (long)child, true);
	if (!ct)
		return;
	if (ct == t || ct == &s->task[0] || ct->started) {
		emit_comment(t, "a task started twice in the trace: ", line);
		return;
	}
	ct->started = true;
	ct->thread = vm;
	/* a thread whose own lines came before its parent's clone returned
	 * (strace -f prints them in time order) mapped into its own space
	 * until now: those mappings are the parent's (its later munmap and
	 * madvise, and the parent's, found nothing) */
	const int own = (int)(ct - s->task);
	if (vm && ct->proc == own && t->proc != own) {
		for (int i = 0; i < s->nmaps; i++)
			if (s->map[i].live && s->map[i].proc == own)
				s->map[i].proc = t->proc;
		for (int k = 0; k < s->ntasks; k++)	/* and the threads it made */
			if (s->task[k].proc == own)
				s->task[k].proc = t->proc;
	}
	ct->proc = vm ? t->proc : own;
	if (!ct->last_ns)
		ct->last_ns = t->last_ns;
	emit(t, "%s %c%ld", vm ? "spawn" : "fork", vm ? 't' : 'p', ct->pid);
}

/* one complete call of task t at time ns */
static void do_call(struct st *s, struct st_task *t, uint64_t ns, char *text)
{
	char line[ST_MAX_LINE];
	snprintf(line, sizeof(line), "%s", text);
	struct st_call c;
	if (!split_call(text, &c)) {
		emit_comment(t, "unread: ", line);
		return;
	}
	s->nsys++;
	if (t->last_ns && ns > t->last_ns) {
		uint64_t gap = ns - t->last_ns;
		if (gap > ST_MAX_GAP_NS)
			gap = ST_MAX_GAP_NS;
		if (gap >= 1000)
			emit(t, "compute %" PRIu64 " ns", gap);
	}
	t->last_ns = ns + c.dur_ns;
	if (strcmp(c.name, "mmap") == 0)
		do_mmap(s, t, &c, line);
	else if (strcmp(c.name, "munmap") == 0)
		do_munmap_madvise(s, t, &c, line, false);
	else if (strcmp(c.name, "madvise") == 0)
		do_munmap_madvise(s, t, &c, line, true);
	else if (strcmp(c.name, "clone") == 0 || strcmp(c.name, "clone3") == 0)
		do_clone(s, t, &c, line, false);
	else if (strcmp(c.name, "fork") == 0 || strcmp(c.name, "vfork") == 0)
		do_clone(s, t, &c, line, true);
	else if (strcmp(c.name, "exit") == 0 || strcmp(c.name, "exit_group") == 0)
		emit_comment(t, "", line);
	else
		emit_comment(t, strcmp(c.name, "mprotect") == 0 || strcmp(c.name, "mremap") == 0 ||
					strcmp(c.name, "brk") == 0
				    ? "not modelled: "
				    : "",
			     line);
}

static void read_line(struct st *s, char *p)
{
	long pid = s->ntasks ? s->task[0].pid : 0;
	bool have_pid = false;
	if (strncmp(p, "[pid ", 5) == 0) {
		p += 5;
		while (*p == ' ')
			p++;
		char *end;
		pid = strtol(p, &end, 10);
		if (end == p || *end != ']' || pid <= 0 || pid > INT32_MAX) {
			st_err(s, "malformed pid prefix: %.60s", p);
			return;
		}
		p = end + 1;
		have_pid = true;
	} else if (isdigit((unsigned char)*p)) {
		/* "PID  time ..." (strace -f -o) or a bare time */
		char *end;
		long v = strtol(p, &end, 10);
		if (*end == ' ' && (v <= 0 || v > INT32_MAX)) {
			st_err(s, "malformed pid: %.60s", p);
			return;
		}
		if (*end == ' ') {
			pid = v;
			p = end;
			have_pid = true;
		}
	}
	(void)have_pid;
	while (*p == ' ')
		p++;
	uint64_t ns;
	bool tod = false;
	if (!parse_time((const char **)&p, &ns, &tod)) {
		st_err(s, "no -tt timestamp (strace -f -tt): %.60s", p);
		return;
	}
	if (tod) {
		/* -tt wraps at midnight: a time more than 12 h below the line
		 * before is the next day (the gap across midnight was lost) */
		const uint64_t day = 86400ull * 1000000000ull;
		ns += s->day_ns;
		if (ns + day / 2 < s->last_line_ns) {
			s->day_ns += day;
			ns += day;
		}
		s->last_line_ns = ns;
	}
	while (*p == ' ')
		p++;
	/* the columns strace -n ("[  9]", the syscall number), -i ("[0000...]",
	 * the instruction pointer) and -r ("(+ 0.000211)", the time since the
	 * previous line) put before the call: every line was "unread" and the
	 * trace had "no syscall lines" */
	while (*p == '[' || (p[0] == '(' && p[1] == '+')) {
		char *e = strchr(p, *p == '[' ? ']' : ')');
		if (!e)
			break;
		p = e + 1;
		while (*p == ' ')
			p++;
	}
	struct st_task *t = task_of_pid(s, pid, true);
	if (!t)
		return;
	if (strncmp(p, "+++", 3) == 0 || strncmp(p, "---", 3) == 0) {
		emit_comment(t, "", p);
		return;
	}
	if (strncmp(p, "<... ", 5) == 0) {
		char *r = strstr(p, " resumed>");
		/* the call resumed is the one pending (after a lost line it may not
		 * be: "<... getpid resumed>" joined to a pending munmap made one
		 * call of two) */
		size_t nl = r ? (size_t)(r - (p + 5)) : 0;
		if (!r || !t->pending || strncmp(t->pending, p + 5, nl) != 0 ||
		    t->pending[nl] != '(') {
			emit_comment(t, "resumed without its start: ", p);
			return;
		}
		size_t a = strlen(t->pending), b = strlen(r + 9);
		char *full = malloc(a + b + 1);
		if (!full)
			return;
		memcpy(full, t->pending, a);
		memcpy(full + a, r + 9, b + 1);
		free(t->pending);
		t->pending = NULL;
		do_call(s, t, t->pending_ns, full);
		free(full);
		return;
	}
	char *u = strstr(p, " <unfinished ...>");
	if (u) {
		*u = 0;
		/* a second start before the first resumed (a lost line): the first
		 * stays in the scenario as a comment, as every line does */
		if (t->pending)
			emit_comment(t, "unfinished, never resumed: ", t->pending);
		free(t->pending);
		t->pending = strdup(p);
		t->pending_ns = ns;
		return;
	}
	do_call(s, t, ns, p);
}

int strace_import(const char *text, size_t len, const char *fname, const char *name, bool touch,
		  FILE *out, FILE *errf)
{
	return strace_import_where(text, len, fname, NULL, 0, name, touch, out, errf);
}

int strace_import_where(const char *text, size_t len, const char *fname,
			const char *const *where, size_t nwhere, const char *name, bool touch,
			FILE *out, FILE *errf)
{
	struct st *s = calloc(1, sizeof(*s));
	if (!s) {
		scenario_put_name(errf, fname);
		fputs(": out of memory\n", errf);
		return 1;
	}
	s->touch = touch;
	s->fname = fname;
	s->where = where;
	s->nwhere = nwhere;
	s->errf = errf;
	char buf[ST_MAX_LINE];
	size_t i = 0;
	while (i < len && s->errors < SCEN_MAX_ERRORS) {
		size_t j = i;
		while (j < len && text[j] != '\n')
			j++;
		s->line++;
		size_t n = j - i;
		if (n > 0 && text[j - 1] == '\r')
			n--;	/* CRLF (a trace copied through Windows): the \r stuck to
				 * the return value and every mmap read as failed */
		if (n >= sizeof(buf)) {
			st_err(s, "line longer than %s bytes", "8191");
		} else if (n > 0) {
			memcpy(buf, text + i, n);
			buf[n] = 0;
			if (memchr(buf, 0, n))
				st_err(s, "a NUL byte: %s", "not strace output");
			else
				read_line(s, buf);
		}
		i = j + 1;
	}
	if (!s->errors && s->nsys == 0) {
		s->line = 0;
		st_err(s, "no syscall lines (want the output of strace -f -tt)%s", "");
	}
	int rc = s->errors ? 1 : 0;
	/* a pid no traced clone or fork starts: its task never runs in the
	 * scenario, which says so, and so does stderr (the file is valid) */
	int unstarted = 0;
	long first_unstarted = 0;
	for (int k = 1; k < s->ntasks && !rc; k++)
		if (!s->task[k].started && !unstarted++)
			first_unstarted = s->task[k].pid;
	if (unstarted && errf) {
		fputs("tlbsim: note: ", errf);
		scenario_put_name(errf, fname);
		fprintf(errf, ": %d pid(s) (the first %ld) have no clone or fork in the trace: "
			"their tasks never start (trace with strace -f from the start, with the "
			"process calls)\n", unstarted, first_unstarted);
	}
	for (int k = 0; k < s->ntasks; k++)
		if (s->task[k].pending) {
			emit_comment(&s->task[k], "unfinished at the end: ", s->task[k].pending);
			free(s->task[k].pending);
			s->task[k].pending = NULL;
		}
	if (!rc) {
		/* the file's name as text of a comment and of a string: a quote or a
		 * line break in it ended them (the scenario did not parse) */
		char label[256];
		snprintf(label, sizeof(label), "%s", fname);
		for (char *q = label; *q; q++)
			if (*q == '"')
				*q = '\'';
			else if ((unsigned char)*q < 0x20 || *q == 0x7f)
				*q = '?';
		fprintf(out, "# imported from %s by tlbsim import strace: one task per pid, the\n"
			     "# memory syscalls the model has as statements, every other line as a\n"
			     "# comment, the time between a task's syscalls as compute\n", label);
		fprintf(out, "scenario %s \"strace of %s\"\nthreads 1 fixed\n", name, label);
		for (int v = 0; v < s->nvars; v++)
			fprintf(out, "var m%d\n", v);
		for (int k = 0; k < s->ntasks; k++) {
			const struct st_task *t = &s->task[k];
			if (k == 0)
				fprintf(out, "\nmain {    # pid %ld\n", t->pid);
			else if (!t->started)
				fprintf(out, "\n# no clone or fork of pid %ld in the trace (strace -p, or "
					"-e trace= without the process calls): nothing starts this task\n"
					"%s %c%ld {\n", t->pid, t->thread ? "thread" : "process",
					t->thread ? 't' : 'p', t->pid);
			else
				fprintf(out, "\n%s %c%ld {\n", t->thread ? "thread" : "process",
					t->thread ? 't' : 'p', t->pid);
			if (t->body)
				fputs(t->body, out);
			fprintf(out, "}\n");
		}
	}
	for (int k = 0; k < s->ntasks; k++) {
		free(s->task[k].body);
		free(s->task[k].pending);
	}
	free(s);
	return rc;
}
