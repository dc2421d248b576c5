/*
 * parse.c - the scenario-file lexer and one-pass compiler (docs/scenarios.md
 * has the grammar). Recursive descent that emits ops as it goes: no syntax
 * tree is built. Errors are collected as "FILE:LINE:COL: message" (up to
 * SCEN_MAX_ERRORS); after one the parser skips to the end of the line.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "oracle/oracle.h"
#include "prog.h"
#include "sim/hash.h"

const char *const scen_word_names[W_COUNT] = {
	"", "shared", "private", "dontneed", "free", "read", "write", "ext4", "tmpfs",
	"hugetlbfs", "hugepage",
};

#define WBIT(w) (1u << (w))
#define WORDS_MAP (WBIT(W_SHARED) | WBIT(W_PRIVATE))
#define WORDS_ADVICE (WBIT(W_DONTNEED) | WBIT(W_FREE) | WBIT(W_HUGEPAGE))
#define WORDS_RW (WBIT(W_READ) | WBIT(W_WRITE))
#define WORDS_FS (WBIT(W_EXT4) | WBIT(W_TMPFS) | WBIT(W_HUGETLBFS))
#define MAX_DEPTH 32		/* nested blocks and parenthesised expressions */
#define MAX_OPS (1u << 20)
#define MAX_LOCALS 256
#define MAX_GLOBALS SCEN_MAX_NAMES

enum tok_kind { T_EOF, T_NL, T_IDENT, T_NUM, T_STR, T_PUNCT, T_BAD };

struct token {
	enum tok_kind kind;
	int line, col;
	const char *p;		/* its text in the source */
	int len;
	uint64_t num;		/* T_NUM: the value (suffix applied) */
	char punct[3];		/* T_PUNCT */
};

struct parser {
	const char *fname;
	const char *src, *end, *cur;
	int line;
	const char *line_start;
	struct token tok, next;		/* current and lookahead */
	FILE *errf;
	int nerrors;
	int last_line, last_col;	/* where the last error was */
	bool gave_up;
	struct scenario *sc;
	/* the task being compiled */
	int task;
	char locals[MAX_LOCALS][48];
	bool loopvar[MAX_LOCALS];	/* a for variable, in its loop */
	int nlocals;
	int depth;		/* current block / expression nesting */
	int sdepth, max_sdepth;	/* value-stack depth at this point of the code */
	/* spawn/fork of a task not yet defined: patched at the end */
	struct { uint32_t op; char name[48]; int line, col; } fix[256];
	int nfix;
	bool have_main;
	uint32_t cap;		/* ops allocated */
};

/* ---- errors ---- */

static void perr_at(struct parser *ps, int line, int col, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void perr_at(struct parser *ps, int line, int col, const char *fmt, ...)
{
	if (ps->nerrors >= SCEN_MAX_ERRORS) {
		ps->gave_up = true;
		return;
	}
	/* one message per position: recovery may trip on the same token again */
	if (ps->nerrors && line == ps->last_line && col == ps->last_col)
		return;
	ps->last_line = line;
	ps->last_col = col;
	ps->nerrors++;
	if (ps->errf) {
		scenario_put_name(ps->errf, ps->fname);
		fprintf(ps->errf, ":%d:%d: ", line, col);
		va_list ap;
		va_start(ap, fmt);
		vfprintf(ps->errf, fmt, ap);
		va_end(ap);
		fputc('\n', ps->errf);
	}
	if (ps->nerrors >= SCEN_MAX_ERRORS) {
		if (ps->errf) {
			scenario_put_name(ps->errf, ps->fname);
			fputs(": too many errors, giving up\n", ps->errf);
		}
		ps->gave_up = true;
	}
}

/* the token's text for a message, printable and at most 40 bytes */
static const char *tok_text(const struct token *t, char *buf, size_t n)
{
	if (t->kind == T_EOF)
		return "end of file";
	if (t->kind == T_NL)
		return "end of line";
	size_t j = 0;
	for (int i = 0; i < t->len && j + 5 < n && i < 40; i++) {
		unsigned char c = (unsigned char)t->p[i];
		if (c >= 0x20 && c < 0x7f)
			buf[j++] = (char)c;
		else
			j += (size_t)snprintf(buf + j, n - j, "\\x%02x", c);
	}
	buf[j] = 0;
	return buf;
}

#define perr(ps, ...) perr_at((ps), (ps)->tok.line, (ps)->tok.col, __VA_ARGS__)

static void err_tok(struct parser *ps, const char *what)
{
	char b[200];
	/* after an error on this line, an "expected ..." is the recovery
	 * tripping again (a name too long, then "expected a value, found '='";
	 * a nesting too deep, then "expected ')'"): not a second problem */
	if (ps->nerrors && ps->tok.line == ps->last_line)
		return;
	if (ps->tok.kind == T_EOF || ps->tok.kind == T_NL)
		perr(ps, "expected %s, found %s", what, tok_text(&ps->tok, b, sizeof(b)));
	else
		perr(ps, "expected %s, found '%s'", what, tok_text(&ps->tok, b, sizeof(b)));
}

/* ---- lexer ---- */

static int mul_suffix(const char *p, int n, uint64_t *mul)
{
	static const struct { const char *s; int shift; } sfx[] = {
		{"K", 10}, {"M", 20}, {"G", 30}, {"T", 40}, {"KiB", 10}, {"MiB", 20},
		{"GiB", 30}, {"TiB", 40}, {"k", 10}, {"KB", 10}, {"MB", 20}, {"GB", 30},
	};
	for (size_t i = 0; i < sizeof(sfx) / sizeof(sfx[0]); i++)
		if ((int)strlen(sfx[i].s) == n && memcmp(sfx[i].s, p, (size_t)n) == 0) {
			*mul = 1ull << sfx[i].shift;
			return 0;
		}
	return -1;
}

static void lex_one(struct parser *ps, struct token *t)
{
	const char *c = ps->cur;
	for (;;) {
		while (c < ps->end && (*c == ' ' || *c == '\t' || *c == '\r'))
			c++;
		if (c < ps->end && *c == '#') {
			while (c < ps->end && *c != '\n')
				c++;
			continue;
		}
		if (c + 1 < ps->end && *c == '\\' && c[1] == '\n') {	/* continuation */
			c += 2;
			ps->line++;
			ps->line_start = c;
			continue;
		}
		if (c + 2 < ps->end && *c == '\\' && c[1] == '\r' && c[2] == '\n') {	/* CRLF */
			c += 3;
			ps->line++;
			ps->line_start = c;
			continue;
		}
		break;
	}
	memset(t, 0, sizeof(*t));
	t->line = ps->line;
	t->col = (int)(c - ps->line_start) + 1;
	t->p = c;
	if (c >= ps->end) {
		t->kind = T_EOF;
		ps->cur = c;
		return;
	}
	unsigned char ch = (unsigned char)*c;
	if (ch == '\n') {
		t->kind = T_NL;
		t->len = 1;
		ps->cur = c + 1;
		ps->line++;
		ps->line_start = ps->cur;
		return;
	}
	if (isalpha(ch) || ch == '_') {
		const char *e = c;
		while (e < ps->end && (isalnum((unsigned char)*e) || *e == '_'))
			e++;
		t->kind = T_IDENT;
		t->len = (int)(e - c);
		ps->cur = e;
		return;
	}
	if (isdigit(ch)) {
		const char *e = c;
		uint64_t v = 0;
		bool ovf = false, hex = false;
		if (e + 1 < ps->end && e[0] == '0' && (e[1] == 'x' || e[1] == 'X')) {
			hex = true;
			e += 2;
			if (e >= ps->end || !isxdigit((unsigned char)*e))
				ovf = true;
			while (e < ps->end && isxdigit((unsigned char)*e)) {
				int d = isdigit((unsigned char)*e) ? *e - '0'
								    : (tolower((unsigned char)*e) - 'a' + 10);
				if (v >> 60)
					ovf = true;
				v = v * 16 + (uint64_t)d;
				e++;
			}
		} else {
			while (e < ps->end && isdigit((unsigned char)*e)) {
				if (v > (UINT64_MAX - 9) / 10)
					ovf = true;
				v = v * 10 + (uint64_t)(*e - '0');
				e++;
			}
		}
		/* a size suffix written against the digits: 16M, 4KiB */
		const char *s = e;
		while (e < ps->end && (isalnum((unsigned char)*e) || *e == '_'))
			e++;
		t->len = (int)(e - c);
		t->p = c;
		ps->cur = e;
		if (e > s && !hex) {
			uint64_t mul;
			if (mul_suffix(s, (int)(e - s), &mul)) {
				t->kind = T_BAD;
				return;
			}
			if (v > UINT64_MAX / mul)
				ovf = true;
			v *= mul;
		} else if (e > s) {
			t->kind = T_BAD;
			return;
		}
		t->kind = ovf || v > (uint64_t)INT64_MAX ? T_BAD : T_NUM;
		t->num = v;
		return;
	}
	if (ch == '"') {
		const char *e = c + 1;
		while (e < ps->end && *e != '"' && *e != '\n')
			e++;
		if (e >= ps->end || *e != '"') {
			t->kind = T_BAD;
			t->len = (int)(e - c);
			ps->cur = e;
			return;
		}
		t->kind = T_STR;
		t->len = (int)(e + 1 - c);
		ps->cur = e + 1;
		return;
	}
	static const char *const two[] = {"==", "!=", "<=", ">=", "&&", "||", ".."};
	for (size_t i = 0; i < sizeof(two) / sizeof(two[0]); i++)
		if (c + 1 < ps->end && c[0] == two[i][0] && c[1] == two[i][1]) {
			t->kind = T_PUNCT;
			memcpy(t->punct, two[i], 2);
			t->len = 2;
			ps->cur = c + 2;
			return;
		}
	if (strchr("{}(),=<>+-*/%!;.", ch)) {
		t->kind = T_PUNCT;
		t->punct[0] = (char)ch;
		t->len = 1;
		ps->cur = c + 1;
		return;
	}
	/* one UTF-8 sequence or stray byte: report it whole */
	const char *e = c + 1;
	while (e < ps->end && ((unsigned char)*e & 0xc0) == 0x80)
		e++;
	t->kind = T_BAD;
	t->len = (int)(e - c);
	ps->cur = e;
}

static void advance(struct parser *ps)
{
	ps->tok = ps->next;
	lex_one(ps, &ps->next);
	/* ';' separates statements like a newline */
	if (ps->tok.kind == T_PUNCT && strcmp(ps->tok.punct, ";") == 0)
		ps->tok.kind = T_NL;
	if (ps->tok.kind == T_BAD) {
		char b[200];
		if (ps->tok.len && ps->tok.p[0] == '"')
			perr(ps, "unterminated string '%s'", tok_text(&ps->tok, b, sizeof(b)));
		else if (ps->tok.len && isdigit((unsigned char)ps->tok.p[0]))
			perr(ps, "bad number '%s' (a number up to 2^63-1, with an optional size "
			     "suffix K, M, G, T)", tok_text(&ps->tok, b, sizeof(b)));
		else
			perr(ps, "unexpected character '%s'", tok_text(&ps->tok, b, sizeof(b)));
	}
}

static bool is_id(const struct parser *ps, const char *w)
{
	return ps->tok.kind == T_IDENT && (int)strlen(w) == ps->tok.len &&
	       memcmp(ps->tok.p, w, (size_t)ps->tok.len) == 0;
}

static bool is_p(const struct parser *ps, const char *p)
{
	return ps->tok.kind == T_PUNCT && strcmp(ps->tok.punct, p) == 0;
}

static bool next_is_p(const struct parser *ps, const char *p)
{
	return ps->next.kind == T_PUNCT && strcmp(ps->next.punct, p) == 0;
}

static bool accept_p(struct parser *ps, const char *p)
{
	if (!is_p(ps, p))
		return false;
	advance(ps);
	return true;
}

static bool expect_p(struct parser *ps, const char *p)
{
	if (accept_p(ps, p))
		return true;
	char what[16];
	snprintf(what, sizeof(what), "'%s'", p);
	err_tok(ps, what);
	return false;
}

/* copy the current identifier into buf; false (with an error) if it is none
 * or too long */
static bool take_ident(struct parser *ps, char *buf, size_t n, const char *what)
{
	if (ps->tok.kind != T_IDENT) {
		err_tok(ps, what);
		return false;
	}
	if ((size_t)ps->tok.len >= n) {
		perr(ps, "name too long (at most %zu characters)", n - 1);
		return false;
	}
	memcpy(buf, ps->tok.p, (size_t)ps->tok.len);
	buf[ps->tok.len] = 0;
	advance(ps);
	return true;
}

/* skip to the end of the line (error recovery) */
/* Skip the rest of a line after an error - but not the '}' that closes the
 * enclosing block on it (`main { x = 9223372036854775808 }`: eaten, it
 * made a second error, "expected '}'", at the end of the file); a '}'
 * matching a '{' skipped on the line is skipped with it. */
static void sync_line(struct parser *ps)
{
	int open = 0;
	while (ps->tok.kind != T_NL && ps->tok.kind != T_EOF) {
		if (is_p(ps, "{"))
			open++;
		else if (is_p(ps, "}") && open-- == 0 && ps->depth > 0)
			return;
		advance(ps);
	}
}

static bool end_of_stmt(struct parser *ps)
{
	if (ps->tok.kind == T_NL || ps->tok.kind == T_EOF || is_p(ps, "}"))
		return true;
	err_tok(ps, "end of line");
	sync_line(ps);
	return false;
}

/* ---- code emission ---- */

static uint32_t emit(struct parser *ps, enum scen_opcode code, int64_t a, int32_t b, int dstack)
{
	struct scenario *sc = ps->sc;
	if (sc->nops >= MAX_OPS) {
		if (sc->nops == MAX_OPS)
			perr(ps, "program too large (more than %u operations)", MAX_OPS);
		sc->nops = MAX_OPS + 1;
		return 0;
	}
	if (sc->nops == ps->cap) {
		uint32_t cap = ps->cap ? ps->cap * 2 : 64;
		struct scen_op *n = realloc(sc->ops, cap * sizeof(*n));
		if (!n) {
			perr(ps, "out of memory");
			sc->nops = MAX_OPS + 1;
			return 0;
		}
		sc->ops = n;
		ps->cap = cap;
	}
	struct scen_op *op = &sc->ops[sc->nops];
	memset(op, 0, sizeof(*op));
	op->code = (uint16_t)code;
	op->line = (uint32_t)ps->tok.line;
	op->col = (uint16_t)(ps->tok.col > 65535 ? 65535 : ps->tok.col);
	op->a = a;
	op->b = b;
	ps->sdepth += dstack;
	if (ps->sdepth > ps->max_sdepth)
		ps->max_sdepth = ps->sdepth;
	return sc->nops++;
}

/* op i's place: the statement's or call's first token (a run-time error of
 * an op emitted after its arguments - a call, wait, join, compute, a repeat
 * or for over the limit - and the deadlock report point there, not past it) */
static void place(struct parser *ps, uint32_t i, int line, int col)
{
	if (i < ps->sc->nops && ps->sc->nops <= MAX_OPS) {
		ps->sc->ops[i].line = (uint32_t)line;
		ps->sc->ops[i].col = (uint16_t)(col > 65535 ? 65535 : col);
	}
}

static void patch(struct parser *ps, uint32_t at, uint32_t target)
{
	if (at < ps->sc->nops && ps->sc->nops <= MAX_OPS)
		ps->sc->ops[at].a = target;
}

static uint32_t here(const struct parser *ps)
{
	return ps->sc->nops;
}

/* ---- names ---- */

static int find_global(const struct scenario *sc, const char *n)
{
	for (int i = 0; i < sc->nglobals; i++)
		if (strcmp(sc->globals[i].name, n) == 0)
			return i;
	return -1;
}

static int add_global(struct parser *ps, const char *n, enum scen_gkind k, int param)
{
	struct scenario *sc = ps->sc;
	if (find_global(sc, n) >= 0) {
		perr(ps, "'%s' is already defined", n);
		return -1;
	}
	if (sc->nglobals >= MAX_GLOBALS) {
		perr(ps, "too many names (at most %d variables and parameters)", MAX_GLOBALS);
		return -1;
	}
	if (!sc->globals)
		sc->globals = calloc(MAX_GLOBALS, sizeof(*sc->globals));
	if (!sc->globals) {
		perr(ps, "out of memory");
		return -1;
	}
	struct scen_global *g = &sc->globals[sc->nglobals];
	snprintf(g->name, sizeof(g->name), "%s", n);
	g->kind = k;
	g->param = param;
	return sc->nglobals++;
}

/* the newest local named n: a for variable shadows a local of its name
 * inside its loop (the oldest was found: `x = 5; for x in 0..3 { repeat x
 * { op } }` counted 15 ops, not 3) */
static int find_local(const struct parser *ps, const char *n)
{
	for (int i = ps->nlocals - 1; i >= 0; i--)
		if (strcmp(ps->locals[i], n) == 0)
			return i;
	return -1;
}

static int add_local(struct parser *ps, const char *n)
{
	if (ps->nlocals >= MAX_LOCALS) {
		perr(ps, "too many local variables in one task (at most %d)", MAX_LOCALS);
		return 0;
	}
	snprintf(ps->locals[ps->nlocals], sizeof(ps->locals[0]), "%s", n);
	return ps->nlocals++;
}

static int word_of(const char *n)
{
	for (int w = 1; w < W_COUNT; w++)
		if (strcmp(scen_word_names[w], n) == 0)
			return w;
	return -1;
}

static bool reserved(const char *n)
{
	static const char *const kw[] = {
		"repeat", "for", "in", "if", "else", "spawn", "fork", "join", "all", "signal",
		"wait", "op", "loop_overhead", "compute", "exit", "map_image", "user_work", "on", "as", "var", "main",
		"thread", "process", "arg",
		"iters", "threads", "cpus", "page_size",
	};
	for (size_t i = 0; i < sizeof(kw) / sizeof(kw[0]); i++)
		if (strcmp(kw[i], n) == 0)
			return true;
	return word_of(n) >= 0;
}

/* ---- expressions ---- */

enum vtype { V_NUM, V_WORD, V_BAD };

struct eval {
	enum vtype t;
	int word_global;	/* a word parameter's global slot, or -1 */
	int word_const;		/* a literal word, or -1 */
};

static struct eval expr(struct parser *ps);

static struct eval num_v(void)
{
	return (struct eval){V_NUM, -1, -1};
}

static struct eval bad_v(void)
{
	return (struct eval){V_BAD, -1, -1};
}

/* a word is used where `allowed` words are: a literal must be one of them;
 * a parameter's value will be checked against them when a run starts */
/* the words of a WORDS_* set, for messages: "a, b, c", or with_or
 * "a, b or c" */
static const char *words_text(uint32_t allowed, bool with_or)
{
	return allowed == WORDS_MAP ? (with_or ? "shared or private" : "shared, private")
	       : allowed == WORDS_ADVICE ? (with_or ? "dontneed, free or hugepage" : "dontneed, free, hugepage")
	       : allowed == WORDS_RW ? (with_or ? "read or write" : "read, write")
	       : (with_or ? "ext4, tmpfs or hugetlbfs" : "ext4, tmpfs, hugetlbfs");
}

static void word_use(struct parser *ps, struct eval v, uint32_t allowed, const char *what,
		     int line, int col)
{
	if (v.t == V_BAD)
		return;
	if (v.t != V_WORD) {
		perr_at(ps, line, col, "%s: want a word (%s), not a number", what,
			words_text(allowed, true));
		return;
	}
	if (v.word_const >= 0 && !(allowed & WBIT(v.word_const)))
		perr_at(ps, line, col, "%s: '%s' is not one of %s", what,
			scen_word_names[v.word_const], words_text(allowed, false));
	if (v.word_global >= 0) {
		struct scen_global *gl = &ps->sc->globals[v.word_global];
		/* the parameter's default must be a word of this use (param
		 * prot = shared given to mprotect ran as read) */
		int dw = gl->kind == G_WORD_PARAM ? word_of(ps->sc->pdef[gl->param]) : -1;
		if (dw >= 0 && !(allowed & WBIT(dw)))
			perr_at(ps, line, col, "%s: parameter %s's default '%s' is not one of %s",
				what, gl->name, scen_word_names[dw], words_text(allowed, false));
		gl->words |= allowed;
	}
}

static void want_num(struct parser *ps, struct eval v, int line, int col, const char *what)
{
	if (v.t == V_WORD)
		perr_at(ps, line, col, "%s: want a number, not the word '%s'", what,
			v.word_const >= 0 ? scen_word_names[v.word_const]
					  : ps->sc->globals[v.word_global].name);
}

static struct eval word_expr(struct parser *ps, uint32_t allowed, const char *what)
{
	int line = ps->tok.line, col = ps->tok.col;
	struct eval v = expr(ps);
	word_use(ps, v, allowed, what, line, col);
	return v;
}

static void num_expr(struct parser *ps, const char *what)
{
	int line = ps->tok.line, col = ps->tok.col;
	want_num(ps, expr(ps), line, col, what);
}

static struct eval call_expr(struct parser *ps);

static bool is_call_name(const struct parser *ps)
{
	static const char *const calls[] = {"mmap", "munmap", "madvise", "load", "store",
					    "touch", "tmpfile", "fsync", "close", "mprotect", "mremap", "ftruncate",
					    "clear_refs", "reclaim", "ksm_merge", "numa_scan", "uffd_wp",
					    "pin", "unpin", "migrate", "pfnmap", "driver_unmap",
					    "fail_table_batch", "vmalloc", "vfree", "vpurge", "kload",
					    "collapse", "gup_fast", "split_huge_pmd"};
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
		if (is_id(ps, calls[i]))
			return true;
	return false;
}

static struct eval primary(struct parser *ps)
{
	char b[200];
	if (ps->tok.kind == T_NUM) {
		emit(ps, OP_CONST, (int64_t)ps->tok.num, 0, 1);
		advance(ps);
		return num_v();
	}
	if (is_p(ps, "(")) {
		if (++ps->depth > MAX_DEPTH) {
			perr(ps, "expression nested too deeply (at most %d levels)", MAX_DEPTH);
			ps->depth--;
			sync_line(ps);
			return bad_v();
		}
		advance(ps);
		struct eval v = expr(ps);
		ps->depth--;
		if (!expect_p(ps, ")"))
			return bad_v();
		return v;
	}
	if (ps->tok.kind == T_IDENT && is_call_name(ps) && next_is_p(ps, "(")) {
		/* a call's arguments nest like parentheses (load(load(...)) had
		 * no limit: the C stack overflowed at a few thousand levels) */
		if (++ps->depth > MAX_DEPTH) {
			perr(ps, "expression nested too deeply (at most %d levels)", MAX_DEPTH);
			ps->depth--;
			sync_line(ps);
			return bad_v();
		}
		struct eval v = call_expr(ps);
		ps->depth--;
		return v;
	}
	if (ps->tok.kind != T_IDENT) {
		if (ps->tok.kind != T_BAD)
			err_tok(ps, "a value");
		sync_line(ps);
		return bad_v();
	}
	char n[48];
	int nline = ps->tok.line, ncol = ps->tok.col;
	if (!take_ident(ps, n, sizeof(n), "a value"))
		return bad_v();
	int l = find_local(ps, n);
	if (l >= 0) {
		emit(ps, OP_GET_L, l, 0, 1);
		return num_v();
	}
	int g = find_global(ps->sc, n);
	if (g >= 0) {
		emit(ps, OP_GET_G, g, 0, 1);
		if (ps->sc->globals[g].kind == G_WORD_PARAM)
			return (struct eval){V_WORD, g, -1};
		return num_v();
	}
	int w = word_of(n);
	if (w >= 0) {
		emit(ps, OP_CONST, w, 0, 1);
		return (struct eval){V_WORD, -1, w};
	}
	for (int i = 0; i < P_COUNT; i++)
		if (strcmp(tlbsim_param_desc[i].name, n) == 0) {
			emit(ps, OP_COST, i, 0, 1);
			return num_v();
		}
	perr_at(ps, nline, ncol, "unknown name '%s' (not a variable, parameter, built-in "
		"value or cost parameter)", n);
	(void)b;
	return bad_v();
}

static struct eval postfix(struct parser *ps)
{
	int line = ps->tok.line, col = ps->tok.col;
	struct eval v = primary(ps);
	static const struct { const char *u; int64_t mul; } units[] = {
		{"page", 0}, {"pages", 0}, {"ns", 1}, {"us", 1000}, {"ms", 1000000},
	};
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (is_id(ps, units[i].u)) {
			want_num(ps, v, line, col, units[i].u);
			if (units[i].mul == 0)
				emit(ps, OP_GET_G, find_global(ps->sc, "page_size"), 0, 1);
			else
				emit(ps, OP_CONST, units[i].mul, 0, 1);
			emit(ps, OP_MUL, 0, 0, -1);
			advance(ps);
			return v.t == V_BAD ? v : num_v();
		}
	return v;
}

static struct eval unary(struct parser *ps)
{
	int line = ps->tok.line, col = ps->tok.col;
	if (is_p(ps, "-") || is_p(ps, "!")) {
		bool neg = is_p(ps, "-");
		advance(ps);
		if (++ps->depth > MAX_DEPTH) {
			perr(ps, "expression nested too deeply (at most %d levels)", MAX_DEPTH);
			ps->depth--;
			sync_line(ps);
			return bad_v();
		}
		struct eval v = unary(ps);
		ps->depth--;
		want_num(ps, v, line, col, neg ? "'-'" : "'!'");
		emit(ps, neg ? OP_NEG : OP_NOT, 0, 0, 0);
		return v.t == V_BAD ? v : num_v();
	}
	return postfix(ps);
}

static struct eval binary(struct parser *ps, int level);

static const struct { const char *op; int level; enum scen_opcode code; } binops[] = {
	{"||", 0, OP_OR}, {"&&", 1, OP_AND},
	{"==", 2, OP_EQ}, {"!=", 2, OP_NE}, {"<", 2, OP_LT}, {"<=", 2, OP_LE}, {">", 2, OP_GT},
	{">=", 2, OP_GE},
	{"+", 3, OP_ADD}, {"-", 3, OP_SUB},
	{"*", 4, OP_MUL}, {"/", 4, OP_DIV}, {"%", 4, OP_MOD},
};

static struct eval binary(struct parser *ps, int level)
{
	if (level > 4)
		return unary(ps);
	int line = ps->tok.line, col = ps->tok.col;
	struct eval l = binary(ps, level + 1);
	for (;;) {
		int k = -1;
		for (size_t i = 0; i < sizeof(binops) / sizeof(binops[0]); i++)
			if (binops[i].level == level && is_p(ps, binops[i].op))
				k = (int)i;
		if (k < 0)
			return l;
		int ol = ps->tok.line, oc = ps->tok.col;
		advance(ps);
		int rl = ps->tok.line, rc = ps->tok.col;
		struct eval r = binary(ps, level + 1);
		emit(ps, binops[k].code, 0, 0, -1);
		bool eq = binops[k].code == OP_EQ || binops[k].code == OP_NE;
		if (l.t == V_BAD || r.t == V_BAD) {
			l = bad_v();
			continue;
		}
		if (eq && (l.t == V_WORD || r.t == V_WORD)) {
			if (l.t != r.t) {
				perr_at(ps, ol, oc, "'%s' compares a word with a number",
					binops[k].op);
			} else {
				/* parameter == literal: the literal is an allowed value */
				if (l.word_global >= 0 && r.word_const >= 0)
					ps->sc->globals[l.word_global].words |= WBIT(r.word_const);
				if (r.word_global >= 0 && l.word_const >= 0)
					ps->sc->globals[r.word_global].words |= WBIT(l.word_const);
			}
			l = num_v();
			continue;
		}
		want_num(ps, l, line, col, binops[k].op);
		want_num(ps, r, rl, rc, binops[k].op);
		l = num_v();
	}
}

static struct eval expr(struct parser *ps)
{
	return binary(ps, 0);
}

/* mmap(hint, len, shared|private [, file [, offset]]) and the other calls;
 * each pushes its result */
static struct eval call_expr(struct parser *ps)
{
	char n[48];
	int line = ps->tok.line, col = ps->tok.col;
	take_ident(ps, n, sizeof(n), "a call");
	int base = ps->sdepth;
	if (!expect_p(ps, "(")) {
		sync_line(ps);
		return bad_v();
	}
	int nargs = 0;
	enum scen_opcode code = OP_END;
	if (strcmp(n, "mmap") == 0) {
		num_expr(ps, "mmap address");
		expect_p(ps, ",");
		num_expr(ps, "mmap length");
		expect_p(ps, ",");
		word_expr(ps, WORDS_MAP, "mmap flags");
		nargs = 3;
		code = OP_MMAP;
		if (accept_p(ps, ",")) {
			num_expr(ps, "mmap file");
			nargs++;
			if (accept_p(ps, ","))
				num_expr(ps, "mmap file offset");
			else
				emit(ps, OP_CONST, 0, 0, 1);
			nargs++;
			code = OP_MMAP_FILE;
		}
	} else if (strcmp(n, "munmap") == 0) {
		num_expr(ps, "munmap address");
		expect_p(ps, ",");
		num_expr(ps, "munmap length");
		code = OP_MUNMAP;
	} else if (strcmp(n, "madvise") == 0) {
		num_expr(ps, "madvise address");
		expect_p(ps, ",");
		num_expr(ps, "madvise length");
		expect_p(ps, ",");
		word_expr(ps, WORDS_ADVICE, "madvise advice");
		code = OP_MADVISE;
	} else if (strcmp(n, "mprotect") == 0) {
		num_expr(ps, "mprotect address");
		expect_p(ps, ",");
		num_expr(ps, "mprotect length");
		expect_p(ps, ",");
		word_expr(ps, WORDS_RW, "mprotect protection");
		code = OP_MPROTECT;
	} else if (strcmp(n, "reclaim") == 0) {
		num_expr(ps, "reclaim address");
		expect_p(ps, ",");
		num_expr(ps, "reclaim length");
		code = OP_RECLAIM;
	} else if (strcmp(n, "load") == 0 || strcmp(n, "store") == 0) {
		num_expr(ps, n);
		code = n[0] == 'l' ? OP_LOAD : OP_STORE;
	} else if (strcmp(n, "touch") == 0) {
		num_expr(ps, "touch address");
		expect_p(ps, ",");
		num_expr(ps, "touch length");
		if (accept_p(ps, ","))
			word_expr(ps, WORDS_RW, "touch access");
		else
			emit(ps, OP_CONST, W_WRITE, 0, 1);
		code = OP_TOUCH;
	} else if (strcmp(n, "tmpfile") == 0) {
		word_expr(ps, WORDS_FS, "tmpfile file system");
		expect_p(ps, ",");
		num_expr(ps, "tmpfile size");
		code = OP_TMPFILE;
	} else if (strcmp(n, "mremap") == 0) {
		num_expr(ps, "mremap address");
		expect_p(ps, ",");
		num_expr(ps, "mremap old length");
		expect_p(ps, ",");
		num_expr(ps, "mremap new length");
		code = OP_MREMAP;
		if (accept_p(ps, ",")) {
			num_expr(ps, "mremap new address");
			code = OP_MREMAP_FIXED;
		}
	} else if (strcmp(n, "ftruncate") == 0) {
		num_expr(ps, "ftruncate file");
		expect_p(ps, ",");
		num_expr(ps, "ftruncate size");
		code = OP_FTRUNCATE;
	} else if (strcmp(n, "clear_refs") == 0) {
		num_expr(ps, "clear_refs type");
		code = OP_CLEAR_REFS;
	} else if (strcmp(n, "ksm_merge") == 0) {
		num_expr(ps, "ksm_merge address");
		expect_p(ps, ",");
		num_expr(ps, "ksm_merge address");
		code = OP_KSM_MERGE;
	} else if (strcmp(n, "numa_scan") == 0) {
		num_expr(ps, "numa_scan address");
		expect_p(ps, ",");
		num_expr(ps, "numa_scan length");
		if (accept_p(ps, ","))
			num_expr(ps, "numa_scan misplaced");
		else
			emit(ps, OP_CONST, 1, 0, 1);
		code = OP_NUMA_SCAN;
	} else if (strcmp(n, "uffd_wp") == 0) {
		num_expr(ps, "uffd_wp address");
		expect_p(ps, ",");
		num_expr(ps, "uffd_wp length");
		expect_p(ps, ",");
		num_expr(ps, "uffd_wp mode");
		code = OP_UFFD_WP;
	} else if (strcmp(n, "pin") == 0 || strcmp(n, "unpin") == 0) {
		num_expr(ps, n[0] == 'p' ? "pin address" : "unpin handle");
		code = n[0] == 'p' ? OP_PIN : OP_UNPIN;
	} else if (strcmp(n, "migrate") == 0) {
		num_expr(ps, "migrate address");
		expect_p(ps, ",");
		num_expr(ps, "migrate length");
		code = OP_MIGRATE;
	} else if (strcmp(n, "pfnmap") == 0) {
		num_expr(ps, "pfnmap address");
		expect_p(ps, ",");
		num_expr(ps, "pfnmap length");
		if (accept_p(ps, ","))
			num_expr(ps, "pfnmap mixed");
		else
			emit(ps, OP_CONST, 0, 0, 1);
		code = OP_PFNMAP;
	} else if (strcmp(n, "driver_unmap") == 0) {
		num_expr(ps, "driver_unmap address");
		code = OP_DRIVER_UNMAP;
	} else if (strcmp(n, "fail_table_batch") == 0) {
		num_expr(ps, "fail_table_batch count");
		code = OP_FAIL_TABLE_BATCH;
	} else if (strcmp(n, "vmalloc") == 0) {
		num_expr(ps, "vmalloc length");
		code = OP_VMALLOC;
	} else if (strcmp(n, "vfree") == 0 || strcmp(n, "kload") == 0) {
		num_expr(ps, n[0] == 'v' ? "vfree address" : "kload address");
		code = n[0] == 'v' ? OP_VFREE : OP_KLOAD;
	} else if (strcmp(n, "vpurge") == 0) {
		code = OP_VPURGE;
	} else if (strcmp(n, "collapse") == 0 || strcmp(n, "gup_fast") == 0) {
		num_expr(ps, n[0] == 'c' ? "collapse address" : "gup_fast address");
		code = n[0] == 'c' ? OP_COLLAPSE : OP_GUP_FAST;
	} else if (strcmp(n, "split_huge_pmd") == 0) {
		num_expr(ps, "split_huge_pmd address");
		code = OP_SPLIT_HUGE_PMD;
	} else if (strcmp(n, "fsync") == 0 || strcmp(n, "close") == 0) {
		num_expr(ps, n);
		code = n[0] == 'f' ? OP_FSYNC : OP_CLOSE;
	}
	(void)nargs;
	if (!expect_p(ps, ")")) {
		sync_line(ps);
		ps->sdepth = base;
		return bad_v();
	}
	/* the call pops its arguments and pushes one result */
	int d = ps->sdepth - base;
	place(ps, emit(ps, code, 0, 0, 1 - d), line, col);
	return num_v();
}

/* ---- statements ---- */

static void block(struct parser *ps);

static void skip_nl(struct parser *ps)
{
	while (ps->tok.kind == T_NL)
		advance(ps);
}

static int hidden_local(struct parser *ps)
{
	char n[48];
	snprintf(n, sizeof(n), " %d", ps->nlocals);	/* a name no source can spell */
	return add_local(ps, n);
}

static int event_index(struct parser *ps, const char *n)
{
	struct scenario *sc = ps->sc;
	for (int i = 0; i < sc->nevents; i++)
		if (strcmp(sc->events[i], n) == 0)
			return i;
	if (sc->nevents >= SCEN_MAX_EVENTS) {
		perr(ps, "too many events (at most %d)", SCEN_MAX_EVENTS);
		return 0;
	}
	snprintf(sc->events[sc->nevents], sizeof(sc->events[0]), "%s", n);
	return sc->nevents++;
}

static int task_index(const struct scenario *sc, const char *n)
{
	for (int i = 0; i < sc->ntasks; i++)
		if (strcmp(sc->tasks[i].name, n) == 0)
			return i;
	return -1;
}

/* spawn NAME [ "(" expr ")" ] [ on expr ] [ as IDENT ] */
static void spawn_stmt(struct parser *ps, bool fork)
{
	advance(ps);
	int line = ps->tok.line, col = ps->tok.col;
	char n[48];
	if (!take_ident(ps, n, sizeof(n), fork ? "a process name" : "a thread name")) {
		sync_line(ps);
		return;
	}
	int bits = 0;
	if (accept_p(ps, "(")) {
		num_expr(ps, "argument");
		expect_p(ps, ")");
		bits |= 2;
	}
	if (is_id(ps, "on")) {
		advance(ps);
		num_expr(ps, "CPU");
		bits |= 1;
	}
	int dst = -1;
	if (is_id(ps, "as")) {
		advance(ps);
		char h[48];
		if (take_ident(ps, h, sizeof(h), "a handle name")) {
			if (reserved(h) || find_global(ps->sc, h) >= 0)
				perr(ps, "'%s' cannot name a task handle", h);
			dst = find_local(ps, h);
			if (dst < 0)
				dst = add_local(ps, h);
		}
	}
	int d = (bits & 1) + ((bits >> 1) & 1);
	uint32_t at = emit(ps, fork ? OP_FORK : OP_SPAWN, -1, bits, 1 - d);
	if (ps->nfix < (int)(sizeof(ps->fix) / sizeof(ps->fix[0]))) {
		ps->fix[ps->nfix].op = at;
		snprintf(ps->fix[ps->nfix].name, sizeof(ps->fix[0].name), "%s", n);
		ps->fix[ps->nfix].line = line;
		ps->fix[ps->nfix].col = col;
		ps->nfix++;
	} else {
		perr_at(ps, line, col, "too many spawn and fork statements (at most %zu)",
			sizeof(ps->fix) / sizeof(ps->fix[0]));
	}
	if (dst >= 0)
		emit(ps, OP_SET_L, dst, 0, -1);
	else
		emit(ps, OP_POP, 0, 0, -1);
	end_of_stmt(ps);
}

static void statement(struct parser *ps)
{
	char n[48];
	int line = ps->tok.line, col = ps->tok.col;
	if (ps->tok.kind != T_IDENT) {
		if (ps->tok.kind != T_BAD)
			err_tok(ps, "a statement");
		sync_line(ps);
		return;
	}
	/* NAME = expr */
	if (next_is_p(ps, "=")) {
		take_ident(ps, n, sizeof(n), "a name");
		advance(ps);	/* '=' */
		int g = find_global(ps->sc, n);
		int vl = ps->tok.line, vc = ps->tok.col;
		struct eval v = expr(ps);
		want_num(ps, v, vl, vc, "assignment");
		if (g >= 0 && ps->sc->globals[g].kind != G_VAR) {
			perr_at(ps, line, col, "cannot assign to '%s' (a parameter or built-in value)",
				n);
		} else if (g >= 0) {
			emit(ps, OP_SET_G, g, 0, -1);
		} else if (reserved(n) && strcmp(n, "arg") != 0) {
			perr_at(ps, line, col, "'%s' is a reserved word and cannot name a variable", n);
		} else {
			int l = find_local(ps, n);
			if (l >= 0 && ps->loopvar[l])
				/* it bounds the loop: `for i in 0..2 { i = 0 }` never ended */
				perr_at(ps, line, col, "cannot assign to the loop variable '%s'", n);
			if (l < 0)
				l = add_local(ps, n);
			emit(ps, OP_SET_L, l, 0, -1);
		}
		end_of_stmt(ps);
		return;
	}
	if (is_call_name(ps) && next_is_p(ps, "(")) {
		call_expr(ps);
		emit(ps, OP_POP, 0, 0, -1);
		end_of_stmt(ps);
		return;
	}
	if (is_id(ps, "repeat")) {
		advance(ps);
		num_expr(ps, "repeat count");
		int c = hidden_local(ps);
		place(ps, emit(ps, OP_REP_INIT, 0, c, -1), line, col);
		uint32_t top = here(ps);
		uint32_t test = emit(ps, OP_REP_NEXT, 0, c, 0);
		block(ps);
		emit(ps, OP_LOOP, top, 0, 0);
		patch(ps, test, here(ps));
		return;
	}
	if (is_id(ps, "for")) {
		advance(ps);
		if (!take_ident(ps, n, sizeof(n), "a loop variable")) {
			sync_line(ps);
			return;
		}
		if (reserved(n) || find_global(ps->sc, n) >= 0)
			perr_at(ps, line, col, "'%s' cannot name a loop variable", n);
		if (!is_id(ps, "in")) {
			err_tok(ps, "'in'");
			sync_line(ps);
			return;
		}
		advance(ps);
		/* the index and its end are two adjacent locals */
		int i = hidden_local(ps);
		hidden_local(ps);
		num_expr(ps, "range start");
		emit(ps, OP_SET_L, i, 0, -1);
		if (!expect_p(ps, "..")) {
			sync_line(ps);
			return;
		}
		num_expr(ps, "range end");
		emit(ps, OP_SET_L, i + 1, 0, -1);
		place(ps, emit(ps, OP_RANGE_CHK, 0, i, 0), line, col);
		/* the visible name reads the index */
		snprintf(ps->locals[i], sizeof(ps->locals[0]), "%s", n);
		ps->loopvar[i] = true;
		uint32_t top = here(ps);
		uint32_t test = emit(ps, OP_FOR_NEXT, 0, i, 0);
		block(ps);
		ps->loopvar[i] = false;
		emit(ps, OP_INC_L, i, 0, 0);
		emit(ps, OP_LOOP, top, 0, 0);
		patch(ps, test, here(ps));
		/* out of scope: nothing can spell it any more */
		snprintf(ps->locals[i], sizeof(ps->locals[0]), " %d", i);
		return;
	}
	if (is_id(ps, "if")) {
		/* if .. else if .. else: one loop over the chain (a recursion per
		 * `else if` overflowed the C stack at ~50 000 links); each taken
		 * branch jumps past the whole chain, its OP_JMPs linked through
		 * their targets until the end is known */
		uint32_t ends = UINT32_MAX;
		for (;;) {
			advance(ps);			/* "if" */
			num_expr(ps, "condition");
			uint32_t jz = emit(ps, OP_JZ, 0, 0, -1);
			block(ps);
			if (!is_id(ps, "else")) {
				patch(ps, jz, here(ps));
				break;
			}
			uint32_t jmp = emit(ps, OP_JMP, 0, 0, 0);
			patch(ps, jmp, ends);
			ends = jmp;
			patch(ps, jz, here(ps));
			advance(ps);			/* "else" */
			if (!is_id(ps, "if")) {
				block(ps);
				break;
			}
		}
		while (ends < here(ps) && here(ps) <= MAX_OPS) {
			uint32_t next = (uint32_t)ps->sc->ops[ends].a;
			patch(ps, ends, here(ps));
			ends = next;
		}
		return;
	}
	if (is_id(ps, "spawn") || is_id(ps, "fork")) {
		spawn_stmt(ps, is_id(ps, "fork"));
		return;
	}
	if (is_id(ps, "join")) {
		advance(ps);
		if (is_id(ps, "all")) {
			advance(ps);
			place(ps, emit(ps, OP_JOIN_ALL, 0, 0, 0), line, col);
		} else if (take_ident(ps, n, sizeof(n), "'all' or a task handle")) {
			int l = find_local(ps, n);
			if (l < 0)
				perr_at(ps, line, col + 5, "unknown task handle '%s' (name one with "
					"spawn ... as NAME)", n);
			emit(ps, OP_GET_L, l < 0 ? 0 : l, 0, 1);
			place(ps, emit(ps, OP_JOIN, 0, 0, -1), line, col);
		}
		end_of_stmt(ps);
		return;
	}
	if (is_id(ps, "signal") || is_id(ps, "wait")) {
		bool sig = is_id(ps, "signal");
		advance(ps);
		if (take_ident(ps, n, sizeof(n), "an event name"))
			place(ps, emit(ps, sig ? OP_SIGNAL : OP_WAIT, event_index(ps, n), 0, 0), line,
			      col);
		end_of_stmt(ps);
		return;
	}
	static const struct { const char *kw; enum scen_opcode code; const char *what; } unary_st[] = {
		{"compute", OP_COMPUTE, "compute time"},
		{"map_image", OP_IMAGE, "image pages"},
		{"user_work", OP_USER_WORK, "working-set pages"},
	};
	for (size_t i = 0; i < sizeof(unary_st) / sizeof(unary_st[0]); i++)
		if (is_id(ps, unary_st[i].kw)) {
			advance(ps);
			num_expr(ps, unary_st[i].what);
			place(ps, emit(ps, unary_st[i].code, 0, 0, -1), line, col);
			end_of_stmt(ps);
			return;
		}
	static const struct { const char *kw; enum scen_opcode code; } simple[] = {
		{"op", OP_OPCOUNT}, {"loop_overhead", OP_OVERHEAD}, {"exit", OP_EXIT},
	};
	for (size_t i = 0; i < sizeof(simple) / sizeof(simple[0]); i++)
		if (is_id(ps, simple[i].kw)) {
			advance(ps);
			emit(ps, simple[i].code, 0, 0, 0);
			end_of_stmt(ps);
			return;
		}
	char b[200];
	perr(ps, "unknown statement '%s'", tok_text(&ps->tok, b, sizeof(b)));
	sync_line(ps);
}

static void block(struct parser *ps)
{
	if (!expect_p(ps, "{")) {
		sync_line(ps);
		return;
	}
	if (++ps->depth > MAX_DEPTH) {
		perr(ps, "blocks nested too deeply (at most %d levels)", MAX_DEPTH);
		ps->depth--;
		/* skip the rest of the file's nesting */
		int lvl = 1;
		while (lvl && ps->tok.kind != T_EOF) {
			if (is_p(ps, "{"))
				lvl++;
			if (is_p(ps, "}"))
				lvl--;
			advance(ps);
		}
		return;
	}
	for (;;) {
		skip_nl(ps);
		if (ps->gave_up || ps->tok.kind == T_EOF) {
			if (!ps->gave_up)
				err_tok(ps, "'}'");
			break;
		}
		if (accept_p(ps, "}"))
			break;
		statement(ps);
		ps->sdepth = 0;
	}
	ps->depth--;
}

/* ---- the header ---- */

static bool header_int(struct parser *ps, const char *what, int64_t lo, int64_t hi, int64_t *out)
{
	char b[200];
	if (ps->tok.kind != T_NUM) {
		char w[64];
		snprintf(w, sizeof(w), "a number for %s", what);
		err_tok(ps, w);
		return false;
	}
	if ((int64_t)ps->tok.num < lo || (int64_t)ps->tok.num > hi) {
		perr(ps, "%s %s: want %lld..%lld", what, tok_text(&ps->tok, b, sizeof(b)),
		     (long long)lo, (long long)hi);
		advance(ps);
		return false;
	}
	*out = (int64_t)ps->tok.num;
	advance(ps);
	return true;
}

/* The text of a value in the header: a number as written, or a word, with
 * the tokens written against it (falkor-46, 5.1, per_node_late) up to a
 * space, ',' or the end of the line. */
static bool value_text(struct parser *ps, char *buf, size_t n)
{
	if (ps->tok.kind != T_NUM && ps->tok.kind != T_IDENT) {
		err_tok(ps, "a value (a number or a word)");
		return false;
	}
	const char *p = ps->tok.p;
	int line = ps->tok.line, col = ps->tok.col;
	while (ps->next.p == ps->tok.p + ps->tok.len &&
	       (ps->next.kind == T_NUM || ps->next.kind == T_IDENT ||
		(ps->next.kind == T_PUNCT && (strcmp(ps->next.punct, "-") == 0 ||
					      strcmp(ps->next.punct, ".") == 0))))
		advance(ps);
	size_t l = (size_t)(ps->tok.p + ps->tok.len - p);
	advance(ps);
	if (l >= n) {
		perr_at(ps, line, col, "value too long (at most %zu characters)", n - 1);
		return false;
	}
	memcpy(buf, p, l);
	buf[l] = 0;
	return true;
}

static int param_index(const struct scenario *sc, const char *n)
{
	for (int i = 0; i < sc->nparams; i++)
		if (strcmp(sc->pname[i], n) == 0)
			return i;
	return -1;
}

static int knob_index(const char *n)
{
	for (int k = 0; k < tlbsim_knob_count(); k++)
		if (strcmp(tlbsim_knob_get(k)->name, n) == 0)
			return k;
	return -1;
}

/* knob=value, checked against the knob's values; appended to buf */
static bool knob_pair(struct parser *ps, const char *k, const char *v, char *buf, size_t n,
		      int line, int col)
{
	struct tlbsim_policy pol;
	tlbsim_policy_default(&pol);
	char err[TLBSIM_ERRLEN];
	if (tlbsim_policy_set(&pol, k, v, err, sizeof(err))) {
		perr_at(ps, line, col, "%s", err);
		return false;
	}
	size_t l = strlen(buf), kl = strlen(k);
	/* a knob twice (in one list, or on two policy lines): the last one
	 * won without a word */
	for (const char *p = buf; *p; p += strcspn(p, ","), p += *p == ',')
		if (strncmp(p, k, kl) == 0 && p[kl] == '=') {
			perr_at(ps, line, col, "%s given twice", k);
			return false;
		}
	if (l + strlen(k) + strlen(v) + 3 >= n) {
		perr_at(ps, line, col, "policy list too long");
		return false;
	}
	snprintf(buf + l, n - l, "%s%s=%s", l ? "," : "", k, v);
	return true;
}

/* NAME=VALUE { , NAME=VALUE }: knobs (when pol) and parameters (when kv) */
static void kv_list(struct parser *ps, char *pol, size_t poln, struct tlbsim_kv *kv, int *nkv,
		    int64_t *iters, int64_t *cpus)
{
	do {
		int line = ps->tok.line, col = ps->tok.col;
		char k[48], v[80];
		if (!take_ident(ps, k, sizeof(k), "NAME=VALUE")) {
			sync_line(ps);
			return;
		}
		if (!expect_p(ps, "=")) {
			sync_line(ps);
			return;
		}
		if (iters && (strcmp(k, "iters") == 0 || strcmp(k, "cpus") == 0)) {
			bool it = k[0] == 'i';
			if (*(it ? iters : cpus))
				perr_at(ps, line, col, "check %s given twice", k);
			header_int(ps, it ? "check iters" : "check cpus", 1,
				   it ? 1000000000 : 1024, it ? iters : cpus);
			continue;
		}
		if (!value_text(ps, v, sizeof(v))) {
			sync_line(ps);
			return;
		}
		if (pol && knob_index(k) >= 0) {
			knob_pair(ps, k, v, pol, poln, line, col);
		} else if (kv && param_index(ps->sc, k) >= 0) {
			bool twice = false;
			for (int i = 0; i < *nkv && !twice; i++)
				twice = strcmp(kv[i].name, k) == 0;
			/* a value its parameter cannot take, found when the file is
			 * read (run and check took `with p=abc`; only test said so,
			 * without a column, after the clauses before it had run) */
			bool word = isalpha((unsigned char)ps->sc->pdef[param_index(ps->sc, k)][0]);
			uint64_t nv;
			if (!word && (scen_num_value(v, &nv) || nv > (uint64_t)INT64_MAX)) {
				perr_at(ps, line, col, "parameter %s: '%s' is not a number (decimal with "
					"an optional suffix K, M, G, T, or 0x hex)", k, v);
			} else if (word && word_of(v) < 0) {
				perr_at(ps, line, col, "parameter %s: '%s' is not a word the language "
					"knows (shared, private, dontneed, free, hugepage, read, write, "
					"ext4, tmpfs, hugetlbfs)", k, v);
			} else if (twice) {
				perr_at(ps, line, col, "%s given twice", k);
			} else if (*nkv >= TLBSIM_MAX_WPARAMS) {
				perr_at(ps, line, col, "too many parameter values");
			} else {
				snprintf(kv[*nkv].name, sizeof(kv[0].name), "%s", k);
				snprintf(kv[*nkv].value, sizeof(kv[0].value), "%s", v);
				(*nkv)++;
			}
		} else {
			perr_at(ps, line, col, "unknown %s '%s' (%s)",
				pol && kv ? "knob or parameter" : pol ? "policy knob" : "parameter", k,
				kv ? "see tlbsim list policies; declare parameters with `param` "
				     "before this line" : "see tlbsim list policies");
		}
	} while (accept_p(ps, ","));
}

static bool string_into(struct parser *ps, char *buf, size_t n)
{
	if (ps->tok.kind != T_STR) {
		err_tok(ps, "a string in double quotes");
		return false;
	}
	size_t l = (size_t)ps->tok.len - 2;
	if (l >= n)
		l = n - 1;
	memcpy(buf, ps->tok.p + 1, l);
	buf[l] = 0;
	for (size_t i = 0; i < l; i++)
		if ((unsigned char)buf[i] < 0x20)
			buf[i] = ' ';
	advance(ps);
	return true;
}

struct header {
	int64_t cpus, threads, iters, check_iters, check_cpus;
	unsigned seen;		/* header_item's one-value items given so far */
	bool fixed;
	char kernel_policy[4096];	/* a preset's knob list (~750 bytes in 2026) */
	struct tlbsim_kv check_kv[TLBSIM_MAX_WPARAMS];
	int ncheck_kv;
};

static void header_item(struct parser *ps, struct header *h)
{
	struct scenario *sc = ps->sc;
	char n[64];
	int line = ps->tok.line, col = ps->tok.col;
	take_ident(ps, n, sizeof(n), "a header item");
	/* the items that hold one value: a second line was taken silently
	 * and the last one won */
	static const char *const once[] = {"scenario", "description", "profile", "cpus",
					   "threads", "iters", "time_limit", "memory_model",
					   "kernel"};
	for (size_t i = 0; i < sizeof(once) / sizeof(once[0]); i++)
		if (strcmp(n, once[i]) == 0) {
			if (h->seen & (1u << i))
				perr_at(ps, line, col, "%s given twice", n);
			h->seen |= 1u << i;
		}
	if (strcmp(n, "scenario") == 0) {
		char nm[48];
		if (take_ident(ps, nm, sizeof(nm), "the scenario's name"))
			snprintf(sc->name, sizeof(sc->name), "%s", nm);
		if (ps->tok.kind == T_STR)
			string_into(ps, sc->description, sizeof(sc->description));
	} else if (strcmp(n, "description") == 0) {
		string_into(ps, sc->description, sizeof(sc->description));
	} else if (strcmp(n, "profile") == 0) {
		char p[64];
		if (value_text(ps, p, sizeof(p))) {
			if (!tlbsim_profile_find(p))
				perr_at(ps, line, col + 8, "unknown profile '%s' (see tlbsim list "
					"profiles)", p);
			snprintf(sc->profile, sizeof(sc->profile), "%s", p);
		}
	} else if (strcmp(n, "cpus") == 0) {
		header_int(ps, "cpus", 1, 1024, &h->cpus);
	} else if (strcmp(n, "threads") == 0) {
		header_int(ps, "threads", 1, 4096, &h->threads);
		if (is_id(ps, "fixed")) {
			h->fixed = true;
			advance(ps);
		}
	} else if (strcmp(n, "iters") == 0) {
		header_int(ps, "iters", 1, 1000000000, &h->iters);
	} else if (strcmp(n, "time_limit") == 0) {
		/* host seconds as --time-limit takes them: 0.001..86400, up to
		 * nine decimals (whole seconds only, before) */
		char v[32];
		int vcol = ps->tok.col;
		if (value_text(ps, v, sizeof(v))) {
			size_t d = strspn(v, "0123456789"), f = 0;
			if (v[d] == '.')
				f = strspn(v + d + 1, "0123456789");
			double x = strtod(v, NULL);
			if (!d || (v[d] && (v[d] != '.' || !f || f > 9 || v[d + 1 + f])) ||
			    x < 0.001 || x > 86400)
				perr_at(ps, line, vcol, "time_limit %s: want host seconds from 0.001 "
					"to 86400", v);
			else
				sc->time_limit_ms = (uint64_t)(x * 1000 + 0.999999);
		}
	} else if (strcmp(n, "memory_model") == 0) {
		char v[32];
		int vcol = ps->tok.col;
		if (value_text(ps, v, sizeof(v))) {
			if (strcmp(v, "sc") == 0)
				sc->memory_model = TLBSIM_MM_SC;
			else if (strcmp(v, "tso") == 0)
				sc->memory_model = TLBSIM_MM_TSO;
			else
				perr_at(ps, line, vcol, "memory_model %s: want sc or tso", v);
		}
	} else if (strcmp(n, "kernel") == 0) {
		char v[32];
		int vcol = ps->tok.col;
		if (value_text(ps, v, sizeof(v))) {
			const struct tlbsim_kernel_preset *kp = tlbsim_kernel_find(v);
			if (!kp)
				perr_at(ps, line, vcol, "unknown kernel '%s' (see tlbsim list kernels)",
					v);
			else if (strlen(kp->policy) >= sizeof(h->kernel_policy))
				perr_at(ps, line, vcol, "kernel %s: its knob list is longer than %zu "
					"bytes", v, sizeof(h->kernel_policy) - 1);
			else	/* the whole list: cut at 511 bytes, later knobs kept today's */
				memcpy(h->kernel_policy, kp->policy, strlen(kp->policy) + 1);
		}
	} else if (strcmp(n, "policy") == 0) {
		/* at most SCEN_POLICY_LINE bytes: room for a kernel preset before it */
		kv_list(ps, sc->policy, SCEN_POLICY_LINE, NULL, NULL, NULL, NULL);
	} else if (strcmp(n, "param") == 0) {
		char pn[48], v[80];
		int pl = ps->tok.line, pc = ps->tok.col;
		if (!take_ident(ps, pn, sizeof(pn), "a parameter name")) {
			sync_line(ps);
			return;
		}
		if (reserved(pn))
			perr_at(ps, pl, pc, "'%s' is a reserved word and cannot name a parameter", pn);
		if (!expect_p(ps, "=")) {
			sync_line(ps);
			return;
		}
		bool word = ps->tok.kind == T_IDENT;
		if (!value_text(ps, v, sizeof(v))) {
			sync_line(ps);
			return;
		}
		uint64_t nv;
		if (!word && (scen_num_value(v, &nv) || nv > (uint64_t)INT64_MAX))
			/* found when the file is read, with its place (1.5 and 1-2 were
			 * refused only when a run started, without file:line) */
			perr_at(ps, pl, pc, "parameter %s: '%s' is not a number (decimal with an "
				"optional suffix K, M, G, T, or 0x hex)", pn, v);
		if (word && word_of(v) < 0)
			perr_at(ps, pl, pc, "parameter %s: '%s' is neither a number nor a word "
				"the language knows (shared, private, dontneed, free, hugepage, read, "
				"write, ext4, tmpfs, hugetlbfs)", pn, v);
		if (sc->nparams >= SCEN_MAX_PARAMS) {
			perr_at(ps, pl, pc, "too many parameters (at most %d)", SCEN_MAX_PARAMS);
		} else if (add_global(ps, pn, word ? G_WORD_PARAM : G_NUM_PARAM, sc->nparams) >= 0) {
			int i = sc->nparams++;
			snprintf(sc->pname[i], sizeof(sc->pname[i]), "%s", pn);
			snprintf(sc->pdef[i], sizeof(sc->pdef[i]), "%s", v);
			if (ps->tok.kind == T_STR)
				string_into(ps, sc->pmeaning[i], sizeof(sc->pmeaning[i]));
			if (word && word_of(v) >= 0)
				sc->globals[sc->nglobals - 1].words = WBIT(word_of(v));
		}
	} else if (strcmp(n, "check") == 0) {
		kv_list(ps, NULL, 0, h->check_kv, &h->ncheck_kv, &h->check_iters, &h->check_cpus);
	} else if (strcmp(n, "expect") == 0) {
		if (sc->nexpect >= SCEN_MAX_EXPECT) {
			perr_at(ps, line, col, "too many expect clauses (at most %d)", SCEN_MAX_EXPECT);
			sync_line(ps);
			return;
		}
		struct scen_expect *e = &sc->expect[sc->nexpect];
		memset(e, 0, sizeof(*e));
		e->line = line;
		e->kind = -1;
		if (is_id(ps, "clean")) {
			advance(ps);
		} else if (is_id(ps, "violation")) {
			advance(ps);
			char inv[32];
			int il = ps->tok.line, ic = ps->tok.col;
			if (value_text(ps, inv, sizeof(inv))) {
				e->kind = inv_lookup(inv);
				if (e->kind < 0) {
					char names[256];
					inv_names_list(names, sizeof(names));
					perr_at(ps, il, ic, "unknown invariant '%s' (want %s)", inv,
						names);
				}
			}
		} else {
			err_tok(ps, "'clean' or 'violation'");
			sync_line(ps);
			return;
		}
		if (is_id(ps, "with")) {
			advance(ps);
			kv_list(ps, e->policy, sizeof(e->policy), e->wparams, &e->nwparams, NULL,
				NULL);
		}
		sc->nexpect++;
	} else if (strcmp(n, "var") == 0) {
		char vn[48];
		int vl = ps->tok.line, vc = ps->tok.col;
		if (take_ident(ps, vn, sizeof(vn), "a variable name")) {
			if (reserved(vn))
				perr_at(ps, vl, vc, "'%s' is a reserved word and cannot name a "
					"variable", vn);
			else
				add_global(ps, vn, G_VAR, -1);
		}
	} else {
		char b[200];
		perr_at(ps, line, col, "unknown header item '%s' (want scenario, description, "
			"profile, cpus, threads, iters, kernel, policy, param, check, expect, "
			"time_limit, memory_model, var, main, thread or process)", n);
		(void)b;
		sync_line(ps);
		return;
	}
	end_of_stmt(ps);
}

static void task_def(struct parser *ps)
{
	struct scenario *sc = ps->sc;
	int line = ps->tok.line, col = ps->tok.col;
	bool is_main = is_id(ps, "main");
	bool is_proc = is_id(ps, "process");
	advance(ps);
	char n[48] = "main";
	if (!is_main && !take_ident(ps, n, sizeof(n), is_proc ? "a process name"
							      : "a thread name")) {
		sync_line(ps);
		return;
	}
	if (!is_main && reserved(n))
		perr_at(ps, line, col, "'%s' is a reserved word and cannot name a task", n);
	if (task_index(sc, n) >= 0)
		perr_at(ps, line, col, "task '%s' is already defined", n);
	if (sc->ntasks >= SCEN_MAX_TASK_DEFS) {
		perr_at(ps, line, col, "too many task definitions (at most %d)", SCEN_MAX_TASK_DEFS);
		sync_line(ps);
		return;
	}
	struct scen_task *t = &sc->tasks[sc->ntasks++];
	snprintf(t->name, sizeof(t->name), "%s", n);
	t->is_main = is_main;
	t->line = line;
	t->entry = here(ps);
	if (is_main)
		ps->have_main = true;
	ps->nlocals = 0;
	memset(ps->loopvar, 0, sizeof(ps->loopvar));
	add_local(ps, "arg");
	ps->depth = 0;
	ps->sdepth = 0;
	block(ps);
	emit(ps, OP_END, 0, 0, 0);
	t->nlocals = ps->nlocals;
}

bool scenario_is_path(const char *name)
{
	size_t l = strlen(name);
	return strchr(name, '/') || (l > 5 && strcmp(name + l - 5, ".tlbs") == 0);
}

struct scenario *scenario_compile(const char *fname, const char *text, size_t len, FILE *errf,
				  int *nerrors)
{
	struct parser *ps = calloc(1, sizeof(*ps));
	struct scenario *sc = calloc(1, sizeof(*sc));
	if (!ps || !sc) {
		free(ps);
		free(sc);
		if (errf) {
			scenario_put_name(errf, fname);
			fputs(": out of memory\n", errf);
		}
		*nerrors = 1;
		return NULL;
	}
	ps->fname = fname;
	/* the text's hash, for replay tokens (tlbsim_workload_desc) */
	uint32_t src_hash = fnv1a_add(FNV1A_INIT, text, len);
	/* an editor's UTF-8 byte order mark is not text of the file (it gave
	 * three errors on the first line) */
	if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) {
		text += 3;
		len -= 3;
	}
	ps->src = ps->cur = ps->line_start = text;
	ps->end = text + len;
	ps->line = 1;
	ps->errf = errf;
	ps->sc = sc;
	snprintf(sc->fname, sizeof(sc->fname), "%s", fname);
	/* built-in values: global slots every run fills */
	add_global(ps, "iters", G_ITERS, -1);
	add_global(ps, "threads", G_THREADS, -1);
	add_global(ps, "cpus", G_CPUS, -1);
	add_global(ps, "page_size", G_PAGE, -1);
	struct header h = {0};
	if (memchr(text, 0, len)) {
		perr_at(ps, 1, 1, "the file contains a NUL byte: not a scenario file");
		ps->gave_up = true;	/* nothing else to say about such a file */
	} else {
		lex_one(ps, &ps->next);
		advance(ps);
	}
	while (!ps->gave_up) {
		skip_nl(ps);
		if (ps->tok.kind == T_EOF)
			break;
		if (is_id(ps, "main") || is_id(ps, "thread") || is_id(ps, "process")) {
			task_def(ps);
			if (!end_of_stmt(ps))
				continue;
		} else if (ps->tok.kind == T_IDENT) {
			header_item(ps, &h);
		} else {
			if (ps->tok.kind != T_BAD)
				err_tok(ps, "a header item or a task (main, thread NAME, process NAME)");
			sync_line(ps);
		}
	}
	if (!ps->gave_up && !ps->have_main)
		perr_at(ps, ps->line, 1, "no main task (a scenario runs its `main { ... }`)");
	for (int i = 0; i < ps->nfix && !ps->gave_up; i++) {
		int t = task_index(sc, ps->fix[i].name);
		if (t < 0 || sc->tasks[t].is_main) {
			perr_at(ps, ps->fix[i].line, ps->fix[i].col, "no thread or process named '%s'",
				ps->fix[i].name);
			continue;
		}
		patch(ps, ps->fix[i].op, (uint32_t)t);
	}
	if (ps->max_sdepth > SCEN_MAX_STACK && !ps->gave_up)
		perr_at(ps, 1, 1, "expressions too complex (value stack deeper than %d)",
			SCEN_MAX_STACK);
	*nerrors = ps->nerrors;
	if (ps->nerrors) {
		free(ps);
		scenario_free(sc);
		return NULL;
	}
	free(ps);
	/* the workload it defines */
	if (!sc->name[0]) {
		const char *b = strrchr(fname, '/');
		b = b ? b + 1 : fname;
		size_t l = strcspn(b, ".");
		snprintf(sc->name, sizeof(sc->name), "%.*s", (int)(l < 47 ? l : 47), b);
	}
	for (int i = 0; i < sc->nparams; i++) {
		sc->params[i].name = sc->pname[i];
		sc->params[i].defval = sc->pdef[i];
		sc->params[i].meaning = sc->pmeaning[i];
	}
	if (h.kernel_policy[0]) {
		/* the preset, then the file's own knobs (which win) */
		size_t kl = strlen(h.kernel_policy), pl = strlen(sc->policy);
		_Static_assert(sizeof(h.kernel_policy) + SCEN_POLICY_LINE <= sizeof(sc->policy),
			       "a preset and a policy line fit together");
		if (pl) {
			memmove(sc->policy + kl + 1, sc->policy, pl + 1);
			sc->policy[kl] = ',';
		}
		memcpy(sc->policy, h.kernel_policy, kl + (pl ? 0 : 1));
	}
	size_t o = 0;
	for (int i = 0; i < h.ncheck_kv; i++)
		o += (size_t)snprintf(sc->check_wparams + o, sizeof(sc->check_wparams) - o,
				      "%s%s=%s", i ? "," : "", h.check_kv[i].name,
				      h.check_kv[i].value);
	struct tlbsim_workload_desc *d = &sc->def.desc;
	d->name = sc->name;
	d->description = sc->description[0] ? sc->description : "a scenario file";
	d->default_profile = sc->profile[0] ? sc->profile : "x86-24";
	d->default_threads = (int)(h.threads ? h.threads : 1);
	d->fixed_threads = h.fixed;
	d->default_iters = h.iters ? h.iters : 1;
	d->default_policy = sc->policy;
	d->nparams = sc->nparams;
	d->params = sc->params;
	d->check_iters = h.check_iters ? h.check_iters : 1;
	d->check_cpus = (int)(h.check_cpus ? h.check_cpus : h.cpus ? h.cpus : 4);
	d->check_wparams = sc->check_wparams;
	d->default_cpus = (int)h.cpus;
	d->source_hash = src_hash ? src_hash : 1;
	sc->def.ops.desc = d;
	sc->def.ops.setup = scen_setup;
	sc->def.ops.main = scen_main;
	return sc;
}

void scenario_put_name(FILE *f, const char *name)
{
	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			fprintf(f, "\\x%02x", *p);
		else
			fputc(*p, f);
}

struct scenario *scenario_load(const char *path, FILE *errf, int *nerrors)
{
	*nerrors = 1;
	FILE *f = fopen(path, "rb");
	if (!f) {
		if (errf) {
			int e = errno;
			scenario_put_name(errf, path);
			fprintf(errf, ": cannot open: %s\n", strerror(e));
		}
		return NULL;
	}
	char *buf = malloc(SCEN_MAX_FILE_BYTES + 1);
	if (!buf) {
		fclose(f);
		if (errf) {
			scenario_put_name(errf, path);
			fputs(": out of memory\n", errf);
		}
		return NULL;
	}
	size_t n = fread(buf, 1, SCEN_MAX_FILE_BYTES + 1, f);
	int bad = ferror(f);
	fclose(f);
	if (bad) {
		free(buf);
		if (errf) {
			scenario_put_name(errf, path);
			fputs(": read error (a directory?)\n", errf);
		}
		return NULL;
	}
	if (n > SCEN_MAX_FILE_BYTES) {
		free(buf);
		if (errf) {
			scenario_put_name(errf, path);
			fprintf(errf, ": larger than %u bytes: not a scenario file\n",
				SCEN_MAX_FILE_BYTES);
		}
		return NULL;
	}
	struct scenario *sc = scenario_compile(path, buf, n, errf, nerrors);
	free(buf);
	return sc;
}

void scenario_free(struct scenario *sc)
{
	if (!sc)
		return;
	free(sc->ops);
	free(sc->globals);
	free(sc);
}

const struct tlbsim_workload_desc *scenario_desc(const struct scenario *sc)
{
	return &sc->def.desc;
}

int scenario_nexpect(const struct scenario *sc)
{
	return sc->nexpect;
}

const struct scen_expect *scenario_expect(const struct scenario *sc, int i)
{
	return i >= 0 && i < sc->nexpect ? &sc->expect[i] : NULL;
}

enum tlbsim_memory_model scenario_memory_model(const struct scenario *sc)
{
	return sc->memory_model;
}

uint64_t scenario_time_limit_ms(const struct scenario *sc)
{
	return sc->time_limit_ms;
}

int scenario_nops(const struct scenario *sc)
{
	return (int)sc->nops;
}
