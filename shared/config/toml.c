/*
 * toml.c - a bounded TOML 1.0 reader (see toml.h).
 *
 * Users share config files with other tools, so every valid TOML 1.0
 * document is accepted and every invalid one refused with its line. The
 * parser keeps a small tree of the keys it has seen, because most of
 * TOML's rules are about definitions: no key twice, no table defined twice
 * by headers, no header for a table that dotted keys made (or the
 * reverse), nothing added to an inline table or a static array, arrays of
 * tables only where no other value is. Scalars reached through tables
 * (headers, dotted keys, inline tables) are passed to the callback with
 * the path of their table as they are parsed; values inside arrays are
 * checked but not passed on.
 *
 * Everything is bounded: the input length (never NUL-terminated), nesting
 * (MAX_DEPTH), key and string sizes (by the input), the tree (one node per
 * key, freed at the end).
 */
#define _GNU_SOURCE
#include "rt/toml.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rt/common.h"
#include "rt/fmt.h"

#define MAX_DEPTH 64
#define MAX_PATH 1024

enum kind { K_TABLE, K_ARRAY, K_VALUE };

/* How a table came to be: what may still be done to it. */
enum origin {
	O_IMPLICIT, /* named on the way to a header or a dotted key: may get a header */
	O_HEADER,   /* [its header] was given: no second one, no dotted keys into it */
	O_DOTTED,   /* made by a dotted key: no header for it */
	O_INLINE,   /* an inline table: frozen once its closing brace is read */
	O_AOT,      /* an element of an array of tables */
};

struct node {
	enum kind kind;
	enum origin origin;
	int frozen; /* inline table or static array: nothing more may be added */
	int aot;    /* K_ARRAY made by [[header]] */
	char *key;
	size_t klen;
	struct node *first, *last; /* children (tables) or elements (arrays) */
	struct node *next;
	struct node *parent;
};

struct ps {
	const char *s, *end, *p;
	int line;
	char *err;
	size_t errcap;
	int failed;
	rt_toml_cb cb;
	void *ctx;
	struct node *root, *cur; /* the table key/values go into */
	char path[MAX_PATH];     /* dotted path of cur, for the callback */
	int emit;                /* cur is a table, not an element of an array of tables */
	char *buf;               /* decoded strings, as big as the input */
	size_t bufcap;
	/* every table's children by (table, key): a lookup is O(1), so a file
	 * of 100k headers parses in linear time (a list walk was quadratic) */
	struct node **tab;
	size_t tabcap, tabn;
};

/* ---- errors and the tree ---- */

static int fail(struct ps *p, const char *why)
{
	if (!p->failed) {
		snprintf(p->err, p->errcap, "%s", why);
		p->failed = 1;
	}
	return -1;
}

static void free_tree(struct node *n)
{
	while (n) {
		struct node *next = n->next;
		free_tree(n->first);
		free(n->key);
		free(n);
		n = next;
	}
}

static size_t slot_of(const struct node *t, const char *k, size_t klen, size_t cap)
{
	uint64_t h = 1469598103934665603ull ^ (uint64_t)(uintptr_t)t;
	for (size_t i = 0; i < klen; i++)
		h = (h ^ (unsigned char)k[i]) * 1099511628211ull;
	h ^= h >> 29;
	return (size_t)h & (cap - 1);
}

static struct node *find(const struct ps *p, struct node *t, const char *k, size_t klen)
{
	if (!p->tabcap)
		return NULL;
	for (size_t i = slot_of(t, k, klen, p->tabcap);; i = (i + 1) & (p->tabcap - 1)) {
		struct node *c = p->tab[i];
		if (!c)
			return NULL;
		if (c->parent == t && c->klen == klen && !memcmp(c->key, k, klen))
			return c;
	}
}

/* Index n (a child of a table) by its parent and key; the table doubles
 * at half full. 0, or -1 out of memory. */
static int index_node(struct ps *p, struct node *n)
{
	if (2 * (p->tabn + 1) > p->tabcap) {
		size_t cap = p->tabcap ? 2 * p->tabcap : 64;
		struct node **tab = calloc(cap, sizeof(*tab));
		if (!tab)
			return -1;
		for (size_t i = 0; i < p->tabcap; i++) {
			struct node *c = p->tab[i];
			if (!c)
				continue;
			size_t j = slot_of(c->parent, c->key, c->klen, cap);
			while (tab[j])
				j = (j + 1) & (cap - 1);
			tab[j] = c;
		}
		free(p->tab);
		p->tab = tab;
		p->tabcap = cap;
	}
	size_t j = slot_of(n->parent, n->key, n->klen, p->tabcap);
	while (p->tab[j])
		j = (j + 1) & (p->tabcap - 1);
	p->tab[j] = n;
	p->tabn++;
	return 0;
}

static struct node *add(struct ps *p, struct node *t, const char *k, size_t klen, enum kind kind)
{
	struct node *n = calloc(1, sizeof(*n));
	if (!n || !(n->key = malloc(klen + 1))) {
		free(n);
		fail(p, "out of memory");
		return NULL;
	}
	memcpy(n->key, k, klen);
	n->key[klen] = '\0';
	n->klen = klen;
	n->kind = kind;
	n->parent = t;
	if (t->last)
		t->last->next = n;
	else
		t->first = n;
	t->last = n;
	/* (an array's elements are found by walking it, never by key) */
	if (t->kind != K_ARRAY && index_node(p, n) < 0) {
		fail(p, "out of memory");
		return NULL;
	}
	return n;
}

/* ---- characters ---- */

static int at_end(const struct ps *p)
{
	return p->p >= p->end;
}

static int peek(const struct ps *p)
{
	return p->p < p->end ? (unsigned char)*p->p : -1;
}

static int peek_at(const struct ps *p, size_t k)
{
	return (size_t)(p->end - p->p) > k ? (unsigned char)p->p[k] : -1;
}

static int starts(const struct ps *p, const char *lit)
{
	size_t n = strlen(lit);
	return (size_t)(p->end - p->p) >= n && !memcmp(p->p, lit, n);
}

static void skip_ws(struct ps *p)
{
	while (!at_end(p) && (*p->p == ' ' || *p->p == '\t'))
		p->p++;
}

/* A newline (LF or CRLF) at p->p: its length, else 0. */
static int newline(const struct ps *p)
{
	if (peek(p) == '\n')
		return 1;
	if (peek(p) == '\r' && peek_at(p, 1) == '\n')
		return 2;
	return 0;
}

/* Control characters other than tab are not allowed in comments or strings. */
static int is_control(int c)
{
	return (c >= 0 && c < 0x20 && c != '\t') || c == 0x7f;
}

static int skip_comment(struct ps *p)
{
	if (peek(p) != '#')
		return 0;
	while (!at_end(p) && !newline(p)) {
		if (is_control(peek(p)))
			return fail(p, "control character in a comment");
		p->p++;
	}
	return 0;
}

/* Whitespace, newlines and comments (between array elements, lines). */
static int skip_ws_nl(struct ps *p)
{
	for (;;) {
		skip_ws(p);
		if (skip_comment(p))
			return -1;
		int n = newline(p);
		if (!n) {
			if (peek(p) == '\r')
				return fail(p, "a carriage return not followed by a newline");
			return 0;
		}
		p->p += n;
		p->line++;
	}
}

/* After a key/value pair or a header: only a comment, then the line ends. */
static int end_of_line(struct ps *p)
{
	skip_ws(p);
	if (skip_comment(p))
		return -1;
	if (at_end(p))
		return 0;
	int n = newline(p);
	if (!n)
		return fail(p, "unexpected text after the value (one key = value per line)");
	p->p += n;
	p->line++;
	return 0;
}

/* The whole input must be UTF-8 (no overlong forms, no surrogates). */
static int check_utf8(struct ps *p)
{
	const unsigned char *s = (const unsigned char *)p->s, *e = (const unsigned char *)p->end;
	while (s < e) {
		unsigned c = *s;
		if (c == '\n')
			p->line++;
		if (c < 0x80) {
			s++;
			continue;
		}
		int n = c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : c >= 0xc2 ? 1 : -1;
		if (n < 0 || c > 0xf4 || e - s <= n)
			return fail(p, "invalid UTF-8");
		unsigned cp = c & (0x3fu >> n);
		for (int i = 1; i <= n; i++) {
			if ((s[i] & 0xc0) != 0x80)
				return fail(p, "invalid UTF-8");
			cp = cp << 6 | (s[i] & 0x3fu);
		}
		if ((n == 2 && cp < 0x800) || (n == 3 && (cp < 0x10000 || cp > 0x10ffff)) ||
		    (cp >= 0xd800 && cp <= 0xdfff))
			return fail(p, "invalid UTF-8");
		s += n + 1;
	}
	p->line = 1;
	return 0;
}

/* ---- strings ---- */

static void put_utf8(char *out, size_t *o, unsigned long c)
{
	*o += rt_utf8_encode(c, (unsigned char *)out + *o);
}

/* One escape after the backslash (basic strings). */
static int escape(struct ps *p, char *out, size_t *o)
{
	int c = peek(p);
	p->p++;
	switch (c) {
	case 'b': out[(*o)++] = '\b'; return 0;
	case 't': out[(*o)++] = '\t'; return 0;
	case 'n': out[(*o)++] = '\n'; return 0;
	case 'f': out[(*o)++] = '\f'; return 0;
	case 'r': out[(*o)++] = '\r'; return 0;
	case '"': out[(*o)++] = '"'; return 0;
	case '\\': out[(*o)++] = '\\'; return 0;
	case 'u':
	case 'U': {
		int n = c == 'u' ? 4 : 8;
		unsigned long v = 0;
		for (int i = 0; i < n; i++) {
			int h = rt_hexval(peek(p));
			if (h < 0)
				return fail(p, "\\u and \\U need 4 and 8 hex digits");
			v = v << 4 | (unsigned long)h;
			p->p++;
		}
		if (v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
			return fail(p, "an escape that is not a Unicode scalar value");
		put_utf8(out, o, v);
		return 0;
	}
	default: return fail(p, "invalid escape in a string");
	}
}

/* A multi-line string's closing quotes (at p): up to two more quotes
 * before them end the content (""""  and """""). */
static void closing_quotes(struct ps *p, int q, char *out, size_t *o)
{
	int extra = 0;
	while (extra < 2 && peek_at(p, 3 + (size_t)extra) == q)
		extra++;
	for (int i = 0; i < extra; i++)
		out[(*o)++] = (char)q;
	p->p += 3 + extra;
}

/* After a backslash in a multi-line basic string: when only whitespace
 * follows it to the line's end, it and every whitespace and newline after
 * it are trimmed (1); else nothing is consumed (0: an escape). */
static int line_ending_backslash(struct ps *p)
{
	const char *save = p->p;
	int save_line = p->line;
	skip_ws(p);
	if (!newline(p)) {
		p->p = save;
		p->line = save_line;
		return 0;
	}
	while (!at_end(p)) {
		int n = newline(p);
		if (n) {
			p->p += n;
			p->line++;
		} else if (peek(p) == ' ' || peek(p) == '\t') {
			p->p++;
		} else {
			break;
		}
	}
	return 1;
}

/*
 * A string of any of the four kinds at p->p, decoded into out (room for
 * the input's length + 1). *multi says whether newlines were allowed.
 */
static int parse_string(struct ps *p, char *out, size_t *olen, int allow_multi)
{
	int q = peek(p);
	int literal = q == '\'';
	int multi = literal ? starts(p, "'''") : starts(p, "\"\"\"");
	size_t o = 0;
	if (multi && !allow_multi)
		return fail(p, "a multi-line string cannot be a key");
	p->p += multi ? 3 : 1;
	if (multi) { /* a newline right after the opening quotes is trimmed */
		int n = newline(p);
		if (n) {
			p->p += n;
			p->line++;
		}
	}
	for (;;) {
		if (at_end(p))
			return fail(p, "unterminated string");
		int c = peek(p);
		if (c == q) {
			if (!multi) {
				p->p++;
				break;
			}
			if (starts(p, literal ? "'''" : "\"\"\"")) {
				closing_quotes(p, q, out, &o);
				break;
			}
			out[o++] = (char)c;
			p->p++;
			continue;
		}
		int nl = newline(p);
		if (nl) {
			if (!multi)
				return fail(
				    p, "unterminated string (newline in a single-line string)");
			memcpy(out + o, p->p, (size_t)nl);
			o += (size_t)nl;
			p->p += nl;
			p->line++;
			continue;
		}
		if (is_control(c))
			return fail(p, "control character in a string (escape it)");
		if (c == '\\' && !literal) {
			p->p++;
			if (multi && line_ending_backslash(p))
				continue;
			if (escape(p, out, &o))
				return -1;
			continue;
		}
		out[o++] = (char)c;
		p->p++;
	}
	out[o] = '\0';
	*olen = o;
	return 0;
}

/* ---- keys ---- */

static int is_bare(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '-';
}

struct key {
	int n;
	const char *part[MAX_DEPTH];
	size_t len[MAX_DEPTH];
};

/* A (dotted) key; parts are decoded into p->buf from *bufpos on. */
static int parse_key(struct ps *p, struct key *k, size_t *bufpos)
{
	k->n = 0;
	for (;;) {
		skip_ws(p);
		if (k->n >= MAX_DEPTH)
			return fail(p, "key nested too deeply");
		char *out = p->buf + *bufpos;
		size_t len = 0;
		int c = peek(p);
		if (c == '"' || c == '\'') {
			if (parse_string(p, out, &len, 0))
				return -1;
		} else if (is_bare(c)) {
			while (is_bare(peek(p)))
				out[len++] = *p->p++;
			out[len] = '\0';
		} else {
			return fail(p, c == '=' ? "a key is missing" : "invalid key");
		}
		k->part[k->n] = out;
		k->len[k->n++] = len;
		*bufpos += len + 1;
		skip_ws(p);
		if (peek(p) != '.')
			return 0;
		p->p++;
	}
}

/* ---- scalars ---- */

static int digits(const char *s, size_t n, int (*ok)(int))
{
	/* digits with single underscores between them */
	if (n == 0 || !ok((unsigned char)s[0]) || !ok((unsigned char)s[n - 1]))
		return 0;
	for (size_t i = 0; i < n; i++)
		if (s[i] == '_' ? !ok((unsigned char)s[i + 1]) : !ok((unsigned char)s[i]))
			return 0;
	return 1;
}

static int is_dec(int c)
{
	return c >= '0' && c <= '9';
}
static int is_hex(int c)
{
	return rt_hexval(c) >= 0;
}
static int is_oct(int c)
{
	return c >= '0' && c <= '7';
}
static int is_bin(int c)
{
	return c == '0' || c == '1';
}

/* Copy s[0..n) without underscores into out (NUL-terminated). */
static void strip(const char *s, size_t n, char *out)
{
	size_t o = 0;
	for (size_t i = 0; i < n; i++)
		if (s[i] != '_')
			out[o++] = s[i];
	out[o] = '\0';
}

static int parse_int(struct ps *p, const char *s, size_t n, struct rt_toml_value *v)
{
	char tmp[128];
	int base = 10, sign = 0;
	const char *d = s;
	size_t dn = n;
	if (n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'o' || s[1] == 'b')) {
		base = s[1] == 'x' ? 16 : s[1] == 'o' ? 8 : 2;
		d += 2, dn -= 2;
		if (!digits(d, dn, base == 16 ? is_hex : base == 8 ? is_oct : is_bin))
			return fail(p, "invalid integer");
	} else {
		if (*d == '+' || *d == '-')
			sign = *d, d++, dn--;
		if (!digits(d, dn, is_dec) || (d[0] == '0' && dn > 1))
			return fail(p,
			            "invalid integer (no leading zeros, single _ between digits)");
	}
	if (dn >= sizeof(tmp) - 2)
		return fail(p, "integer out of range");
	tmp[0] = sign == '-' ? '-' : '+';
	strip(d, dn, tmp + 1);
	char *end;
	errno = 0;
	long long x = strtoll(tmp, &end, base);
	if (errno || *end)
		return fail(p, "integer out of range (64 bits)");
	v->type = RT_TOML_INT;
	v->i = x;
	return 0;
}

static int parse_float(struct ps *p, const char *s, size_t n, struct rt_toml_value *v)
{
	char tmp[256];
	const char *d = s;
	size_t dn = n;
	int neg = 0;
	if (*d == '+' || *d == '-')
		neg = *d == '-', d++, dn--;
	v->type = RT_TOML_FLOAT;
	if (dn == 3 && (!memcmp(d, "inf", 3) || !memcmp(d, "nan", 3))) {
		v->f = d[0] == 'i' ? (neg ? -INFINITY : INFINITY) : NAN;
		return 0;
	}
	/* int part */
	size_t i = 0;
	while (i < dn && (is_dec(d[i]) || d[i] == '_'))
		i++;
	if (!digits(d, i, is_dec) || (d[0] == '0' && i > 1))
		return fail(p, "invalid float");
	size_t j = i;
	if (j < dn && d[j] == '.') {
		size_t f0 = ++j;
		while (j < dn && (is_dec(d[j]) || d[j] == '_'))
			j++;
		if (!digits(d + f0, j - f0, is_dec))
			return fail(p, "invalid float (digits must follow the point)");
	}
	if (j < dn && (d[j] == 'e' || d[j] == 'E')) {
		j++;
		if (j < dn && (d[j] == '+' || d[j] == '-'))
			j++;
		size_t e0 = j;
		while (j < dn && (is_dec(d[j]) || d[j] == '_'))
			j++;
		if (!digits(d + e0, j - e0, is_dec))
			return fail(p, "invalid float exponent");
	}
	if (j != dn || j == i || n >= sizeof(tmp))
		return fail(p, "invalid float");
	strip(s, n, tmp);
	char *end;
	v->f = strtod(tmp, &end);
	if (*end)
		return fail(p, "invalid float");
	return 0;
}

static int num2(const char *s)
{
	return is_dec(s[0]) && is_dec(s[1]) ? (s[0] - '0') * 10 + (s[1] - '0') : -1;
}

/* HH:MM:SS(.frac)? at s: its length, or -1. */
static int time_part(const char *s, size_t n)
{
	if (n < 8 || s[2] != ':' || s[5] != ':')
		return -1;
	int h = num2(s), m = num2(s + 3), sec = num2(s + 6);
	if (h < 0 || h > 23 || m < 0 || m > 59 || sec < 0 || sec > 60)
		return -1;
	size_t k = 8;
	if (k < n && s[k] == '.') {
		size_t f0 = ++k;
		while (k < n && is_dec(s[k]))
			k++;
		if (k == f0)
			return -1;
	}
	return (int)k;
}

static int leap(int y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

/* Offset date-time, local date-time, local date or local time. */
static int parse_datetime(struct ps *p, const char *s, size_t n, struct rt_toml_value *v)
{
	static const int mdays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	size_t k = 0;
	if (n >= 10 && s[4] == '-' && s[7] == '-') {
		int y = num2(s) * 100 + num2(s + 2), mo = num2(s + 5), d = num2(s + 8);
		if (num2(s) < 0 || num2(s + 2) < 0 || mo < 1 || mo > 12 || d < 1 ||
		    d > mdays[mo - 1] + (mo == 2 && leap(y)))
			return fail(p, "invalid date");
		k = 10;
		if (k < n) {
			if (s[k] != 'T' && s[k] != 't' && s[k] != ' ')
				return fail(p, "invalid date-time");
			int t = time_part(s + k + 1, n - k - 1);
			if (t < 0)
				return fail(p, "invalid time in a date-time");
			k += 1 + (size_t)t;
			if (k < n && (s[k] == 'Z' || s[k] == 'z')) {
				k++;
			} else if (k < n && (s[k] == '+' || s[k] == '-')) {
				int oh = n - k >= 6 ? num2(s + k + 1) : -1;
				int om = n - k >= 6 && s[k + 3] == ':' ? num2(s + k + 4) : -1;
				if (oh < 0 || oh > 23 || om < 0 || om > 59)
					return fail(p, "invalid time offset");
				k += 6;
			}
		}
	} else {
		int t = time_part(s, n);
		if (t < 0)
			return fail(p, "invalid time");
		k = (size_t)t;
	}
	if (k != n)
		return fail(p, "invalid date or time");
	v->type = RT_TOML_OTHER;
	return 0;
}

/* true/false, numbers, dates: the token runs to a delimiter. */
static int parse_scalar(struct ps *p, struct rt_toml_value *v)
{
	const char *s = p->p;
	while (!at_end(p) && !strchr(" \t\r\n,]}#", *p->p))
		p->p++;
	/* a date and a time separated by one space are one value */
	if (p->p - s == 10 && s[4] == '-' && peek(p) == ' ' && is_dec(peek_at(p, 1)) &&
	    peek_at(p, 3) == ':') {
		p->p++;
		while (!at_end(p) && !strchr(" \t\r\n,]}#", *p->p))
			p->p++;
	}
	size_t n = (size_t)(p->p - s);
	if (n == 0)
		return fail(p, "a value is missing");
	if (n == 4 && !memcmp(s, "true", 4)) {
		v->type = RT_TOML_BOOL;
		v->b = 1;
		return 0;
	}
	if (n == 5 && !memcmp(s, "false", 5)) {
		v->type = RT_TOML_BOOL;
		v->b = 0;
		return 0;
	}
	if ((n >= 5 && (s[4] == '-' || s[2] == ':')) || (n >= 8 && s[2] == ':'))
		return parse_datetime(p, s, n, v);
	const char *q = s + (*s == '+' || *s == '-');
	size_t qn = n - (size_t)(q - s);
	int is_float = (qn == 3 && (!memcmp(q, "inf", 3) || !memcmp(q, "nan", 3)));
	int hex = n > 2 && s[0] == '0' && s[1] == 'x';
	for (size_t i = 0; i < n && !hex; i++)
		if (s[i] == '.' || s[i] == 'e' || s[i] == 'E')
			is_float = 1;
	return is_float ? parse_float(p, s, n, v) : parse_int(p, s, n, v);
}

/* ---- values, tables ---- */

static int parse_value(struct ps *p, struct node *holder, struct rt_toml_value *v, int depth,
                       const char *path, int emit);

/* The callback gets scalars reached through tables (not inside arrays). */
static void emit(struct ps *p, const char *table, const char *key, const struct rt_toml_value *v)
{
	if (p->cb)
		p->cb(p->ctx, table, key, v);
}

static int join(char *out, size_t cap, const char *a, const char *b, size_t blen)
{
	int n = snprintf(out, cap, "%s%s%.*s", a, a[0] ? "." : "", (int)blen, b);
	return n < 0 || (size_t)n >= cap ? -1 : 0;
}

/*
 * key = value into table t (path: t's dotted name). Dotted keys make
 * tables on the way; they may not pass through a table a header defined,
 * an inline table, or a non-table value.
 */
static int keyval(struct ps *p, struct node *t, const char *path, int depth, int do_emit)
{
	struct key k;
	size_t bufpos = (size_t)(p->p - p->s) + 1; /* decoded keys never outgrow their text */
	char tpath[MAX_PATH];
	snprintf(tpath, sizeof(tpath), "%s", path);
	if (parse_key(p, &k, &bufpos))
		return -1;
	if (peek(p) != '=')
		return fail(p, "expected '=' after the key");
	p->p++;
	for (int i = 0; i < k.n - 1; i++) {
		struct node *c = find(p, t, k.part[i], k.len[i]);
		if (!c) {
			if (!(c = add(p, t, k.part[i], k.len[i], K_TABLE)))
				return -1;
			c->origin = O_DOTTED;
		} else if (c->kind != K_TABLE || c->frozen || c->origin == O_HEADER ||
		           c->origin == O_AOT) {
			return fail(
			    p, "a dotted key cannot extend a value, an inline table or a table "
			       "defined elsewhere");
		}
		char np[MAX_PATH];
		if (join(np, sizeof(np), tpath, k.part[i], k.len[i]))
			return fail(p, "key path too long");
		memcpy(tpath, np, sizeof(tpath));
		t = c;
	}
	const char *last = k.part[k.n - 1];
	size_t lastlen = k.len[k.n - 1];
	if (find(p, t, last, lastlen))
		return fail(p, "duplicate key");
	char lastkey[MAX_PATH];
	rt_strlcpy_n(lastkey, sizeof(lastkey), last, lastlen);
	struct node *n = add(p, t, last, lastlen, K_VALUE);
	if (!n)
		return -1;
	skip_ws(p);
	struct rt_toml_value v = {0};
	char vpath[MAX_PATH];
	if (join(vpath, sizeof(vpath), tpath, last, lastlen))
		return fail(p, "key path too long");
	if (parse_value(p, n, &v, depth, vpath, do_emit))
		return -1;
	if (do_emit && n->kind == K_VALUE && v.type != RT_TOML_OTHER) /* dates: not used */
		emit(p, tpath, lastkey, &v);
	return 0;
}

static int parse_inline_table(struct ps *p, struct node *t, int depth, const char *path,
                              int do_emit)
{
	t->kind = K_TABLE;
	t->origin = O_INLINE;
	p->p++; /* { */
	skip_ws(p);
	if (peek(p) == '}') {
		p->p++;
		t->frozen = 1;
		return 0;
	}
	for (;;) {
		skip_ws(p);
		if (keyval(p, t, path, depth + 1, do_emit))
			return -1;
		skip_ws(p);
		int c = peek(p);
		p->p++;
		if (c == '}')
			break;
		if (c != ',')
			return fail(
			    p,
			    "expected ',' or '}' in an inline table (one line, no trailing comma)");
	}
	/* dotted keys inside made sub-tables: all of it is frozen */
	struct node *stack[MAX_DEPTH * 2];
	int sp = 0;
	stack[sp++] = t;
	while (sp) {
		struct node *x = stack[--sp];
		x->frozen = 1;
		for (struct node *c = x->first; c; c = c->next)
			if (c->kind == K_TABLE && c->origin == O_DOTTED &&
			    sp < (int)RT_ARRAY_LEN(stack))
				stack[sp++] = c;
	}
	return 0;
}

static int parse_array(struct ps *p, struct node *a, int depth)
{
	a->kind = K_ARRAY;
	a->frozen = 1; /* a static array: no [[header]] may extend it */
	p->p++;        /* [ */
	for (;;) {
		if (skip_ws_nl(p))
			return -1;
		if (peek(p) == ']') {
			p->p++;
			return 0;
		}
		struct node *el = add(p, a, "", 0, K_VALUE);
		struct rt_toml_value v;
		if (!el || parse_value(p, el, &v, depth + 1, "", 0))
			return -1;
		if (skip_ws_nl(p))
			return -1;
		int c = peek(p);
		if (c == ',') {
			p->p++;
			continue;
		}
		if (c == ']') {
			p->p++;
			return 0;
		}
		return fail(p,
		            at_end(p) ? "unterminated array" : "expected ',' or ']' in an array");
	}
}

static int parse_value(struct ps *p, struct node *holder, struct rt_toml_value *v, int depth,
                       const char *path, int do_emit)
{
	if (depth > MAX_DEPTH)
		return fail(p, "values nested too deeply");
	memset(v, 0, sizeof(*v));
	int c = peek(p);
	if (c == '"' || c == '\'') {
		size_t len;
		char *out = p->buf + (size_t)(p->p - p->s) + 1;
		if (parse_string(p, out, &len, 1))
			return -1;
		v->type = RT_TOML_STRING;
		v->str = out;
		return 0;
	}
	if (c == '[')
		return parse_array(p, holder, depth);
	if (c == '{')
		return parse_inline_table(p, holder, depth, path, do_emit);
	return parse_scalar(p, v);
}

/* [a.b] or [[a.b]]: find or make the table key/values go into. */
static int header(struct ps *p)
{
	int aot = starts(p, "[[");
	p->p += aot ? 2 : 1;
	struct key k;
	size_t bufpos = (size_t)(p->p - p->s) + 1;
	if (parse_key(p, &k, &bufpos))
		return -1;
	if (aot ? !starts(p, "]]") : peek(p) != ']')
		return fail(p, aot ? "expected ']]' to close the header"
		                   : "expected ']' to close the header");
	p->p += aot ? 2 : 1;
	struct node *t = p->root;
	char path[MAX_PATH] = "";
	p->emit = !aot;
	for (int i = 0; i < k.n; i++) {
		char np[MAX_PATH];
		if (join(np, sizeof(np), path, k.part[i], k.len[i]))
			return fail(p, "key path too long");
		memcpy(path, np, sizeof(path));
		struct node *c = find(p, t, k.part[i], k.len[i]);
		int final = i == k.n - 1;
		if (final && aot) {
			if (!c) {
				if (!(c = add(p, t, k.part[i], k.len[i], K_ARRAY)))
					return -1;
				c->aot = 1;
			} else if (c->kind != K_ARRAY || !c->aot) {
				return fail(p,
				            "[[array of tables]] where another value is defined");
			}
			struct node *el = add(p, c, "", 0, K_TABLE);
			if (!el)
				return -1;
			el->origin = O_AOT;
			t = el;
			break;
		}
		if (!c) {
			if (!(c = add(p, t, k.part[i], k.len[i], K_TABLE)))
				return -1;
			c->origin = final ? O_HEADER : O_IMPLICIT;
		} else if (c->kind == K_ARRAY && c->aot && !final) {
			c = c->last; /* [a.b] under [[a]]: the latest element */
			p->emit = 0;
		} else if (c->kind != K_TABLE || c->frozen) {
			return fail(p, "a header names a key that already holds a value");
		} else if (final) {
			if (c->origin != O_IMPLICIT)
				return fail(p, "table defined twice");
			c->origin = O_HEADER;
		}
		t = c;
	}
	p->cur = t;
	snprintf(p->path, sizeof(p->path), "%s", path);
	return end_of_line(p);
}

int rt_toml_parse(const char *buf, size_t len, rt_toml_cb cb, void *ctx, int *err_line, char *err,
                  size_t errcap)
{
	struct ps p = {.s = buf,
	               .end = buf + len,
	               .p = buf,
	               .line = 1,
	               .err = err,
	               .errcap = errcap,
	               .cb = cb,
	               .ctx = ctx};
	if (errcap)
		err[0] = '\0';
	*err_line = 0;
	/* a UTF-8 byte order mark may open the file (toml-test's utf8-bom) */
	if (len >= 3 && !memcmp(buf, "\xEF\xBB\xBF", 3))
		p.p = buf + 3;
	struct node root = {.kind = K_TABLE, .origin = O_HEADER};
	p.root = p.cur = &root;
	p.emit = 1;
	/* decoded strings and keys are written at the offset of their own text
	 * + 1 in a buffer as big as the input: each is shorter than its source */
	p.bufcap = len + 2;
	p.buf = malloc(p.bufcap);
	int rc = 0;
	if (!p.buf) {
		fail(&p, "out of memory");
		rc = -1;
	}
	if (!rc)
		rc = check_utf8(&p);
	while (!rc) {
		if ((rc = skip_ws_nl(&p)) || at_end(&p))
			break;
		if (peek(&p) == '[')
			rc = header(&p);
		else if ((rc = keyval(&p, p.cur, p.path, 0, p.emit)) == 0)
			rc = end_of_line(&p);
	}
	free_tree(root.first);
	free(p.tab);
	free(p.buf);
	if (rc) {
		*err_line = p.line;
		return RT_E_SYNTAX;
	}
	return 0;
}
