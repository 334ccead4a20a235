/*
 * toml.c - a bounded TOML reader (see toml.h for what it accepts).
 *
 * Recursive only for arrays and inline tables, with a depth limit, so a
 * hostile file cannot exhaust the stack. Decoded strings go to one scratch
 * buffer the size of the input.
 */
#include "rt/toml.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt/common.h"

#define MAX_DEPTH 32
#define MAX_KEY 256

struct ps {
	const char *s;
	size_t len, pos;
	int line;
	char *scratch; /* len + 1 bytes */
	char table[MAX_KEY];
	char err[128];
	rt_toml_cb cb;
	void *ctx;
};

static int fail(struct ps *p, const char *why)
{
	if (!p->err[0])
		snprintf(p->err, sizeof(p->err), "%s", why);
	return RT_E_SYNTAX;
}

static int peek(const struct ps *p)
{
	return p->pos < p->len ? (unsigned char)p->s[p->pos] : -1;
}
static int peek_at(const struct ps *p, size_t k)
{
	return p->pos + k < p->len ? (unsigned char)p->s[p->pos + k] : -1;
}

static void skip_ws(struct ps *p)
{
	while (peek(p) == ' ' || peek(p) == '\t')
		p->pos++;
}

static void skip_comment(struct ps *p)
{
	if (peek(p) != '#')
		return;
	while (p->pos < p->len && p->s[p->pos] != '\n')
		p->pos++;
}

/* Whitespace, newlines and comments (inside arrays). */
static void skip_ws_nl(struct ps *p)
{
	for (;;) {
		skip_ws(p);
		skip_comment(p);
		if (peek(p) == '\n') {
			p->pos++;
			p->line++;
		} else if (peek(p) == '\r' && peek_at(p, 1) == '\n') {
			p->pos += 2;
			p->line++;
		} else {
			return;
		}
	}
}

/* After a key/value or header: only a comment may follow on the line. */
static int end_of_line(struct ps *p)
{
	skip_ws(p);
	skip_comment(p);
	if (peek(p) == '\r' && peek_at(p, 1) == '\n')
		p->pos++;
	if (peek(p) == '\n') {
		p->pos++;
		p->line++;
		return 0;
	}
	return peek(p) == -1 ? 0 : fail(p, "unexpected text after value");
}

static void put_utf8(char *out, size_t *o, unsigned long c)
{
	if (c < 0x80) {
		out[(*o)++] = (char)c;
	} else if (c < 0x800) {
		out[(*o)++] = (char)(0xc0 | (c >> 6));
		out[(*o)++] = (char)(0x80 | (c & 0x3f));
	} else if (c < 0x10000) {
		out[(*o)++] = (char)(0xe0 | (c >> 12));
		out[(*o)++] = (char)(0x80 | ((c >> 6) & 0x3f));
		out[(*o)++] = (char)(0x80 | (c & 0x3f));
	} else {
		out[(*o)++] = (char)(0xf0 | (c >> 18));
		out[(*o)++] = (char)(0x80 | ((c >> 12) & 0x3f));
		out[(*o)++] = (char)(0x80 | ((c >> 6) & 0x3f));
		out[(*o)++] = (char)(0x80 | (c & 0x3f));
	}
}

/* Parse a string at p->pos into out (cap >= remaining input + 1). */
static int parse_string(struct ps *p, char *out, size_t *olen)
{
	char q = (char)peek(p);
	int multi = peek_at(p, 1) == q && peek_at(p, 2) == q;
	int literal = q == '\'';
	size_t o = 0;
	p->pos += multi ? 3 : 1;
	if (multi && peek(p) == '\n') { /* a newline right after the opening is trimmed */
		p->pos++;
		p->line++;
	} else if (multi && peek(p) == '\r' && peek_at(p, 1) == '\n') {
		p->pos += 2;
		p->line++;
	}
	for (;;) {
		int c = peek(p);
		if (c == -1)
			return fail(p, "unterminated string");
		if (c == q) {
			if (!multi) {
				p->pos++;
				break;
			}
			if (peek_at(p, 1) == q && peek_at(p, 2) == q) {
				p->pos += 3;
				/* up to two extra quotes belong to the content */
				while (peek(p) == q && o < 2) {
					out[o++] = q;
					p->pos++;
				}
				break;
			}
		}
		if (c == '\n') {
			if (!multi)
				return fail(p, "newline in string");
			p->line++;
		}
		if (c < 0x20 && c != '\t' && c != '\n' && c != '\r')
			return fail(p, "control character in string");
		if (c == '\\' && !literal) {
			int e = peek_at(p, 1);
			p->pos += 2;
			switch (e) {
			case 'b': out[o++] = '\b'; break;
			case 't': out[o++] = '\t'; break;
			case 'n': out[o++] = '\n'; break;
			case 'f': out[o++] = '\f'; break;
			case 'r': out[o++] = '\r'; break;
			case 'e': out[o++] = 27; break;
			case '"': out[o++] = '"'; break;
			case '\\': out[o++] = '\\'; break;
			case 'u':
			case 'U': {
				int n = e == 'u' ? 4 : 8;
				unsigned long v = 0;
				for (int i = 0; i < n; i++) {
					int h = peek(p);
					int d = h >= '0' && h <= '9'   ? h - '0'
					        : h >= 'a' && h <= 'f' ? h - 'a' + 10
					        : h >= 'A' && h <= 'F' ? h - 'A' + 10
					                               : -1;
					if (d < 0)
						return fail(p, "bad \\u escape");
					v = v * 16 + (unsigned long)d;
					p->pos++;
				}
				if (v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
					return fail(p, "bad unicode escape");
				if (n == 8 && o + 4 > p->len) /* cannot happen: 10 input bytes */
					return fail(p, "escape overflow");
				put_utf8(out, &o, v);
				break;
			}
			case '\n':
			case ' ':
			case '\t':
			case '\r':
				if (!multi)
					return fail(p, "bad escape");
				/* line-ending backslash: trim whitespace and newlines */
				p->pos--;
				while (peek(p) == ' ' || peek(p) == '\t' || peek(p) == '\n' ||
				       peek(p) == '\r') {
					if (peek(p) == '\n')
						p->line++;
					p->pos++;
				}
				break;
			default: return fail(p, "bad escape in string");
			}
			continue;
		}
		out[o++] = (char)c;
		p->pos++;
	}
	out[o] = '\0';
	*olen = o;
	return 0;
}

static int is_bare(int c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '-';
}

/* Dotted key into parts joined by '.'; the last part is returned in last. */
static int parse_key(struct ps *p, char *path, size_t cap, char *last, size_t lastcap)
{
	size_t n = 0;
	path[0] = last[0] = '\0';
	for (;;) {
		skip_ws(p);
		char part[MAX_KEY];
		size_t plen = 0;
		int c = peek(p);
		if (c == '"' || c == '\'') {
			if (peek_at(p, 1) == c && peek_at(p, 2) == c)
				return fail(p, "multi-line key");
			size_t ol;
			int rc = parse_string(p, p->scratch, &ol);
			if (rc)
				return rc;
			if (ol >= sizeof(part))
				return fail(p, "key too long");
			memcpy(part, p->scratch, ol + 1);
			plen = ol;
		} else {
			while (is_bare(peek(p))) {
				if (plen + 1 >= sizeof(part))
					return fail(p, "key too long");
				part[plen++] = (char)peek(p);
				p->pos++;
			}
			part[plen] = '\0';
			if (!plen)
				return fail(p, "expected a key");
		}
		if (n + plen + 2 >= cap)
			return fail(p, "key too long");
		if (n)
			path[n++] = '.';
		memcpy(path + n, part, plen + 1);
		n += plen;
		rt_strlcpy_n(last, lastcap, part, plen);
		skip_ws(p);
		if (peek(p) != '.')
			return 0;
		p->pos++;
	}
}

static int parse_value(struct ps *p, struct rt_toml_value *v, int depth);

static int parse_inline_table(struct ps *p, int depth)
{
	p->pos++; /* { */
	skip_ws(p);
	if (peek(p) == '}') {
		p->pos++;
		return 0;
	}
	for (;;) {
		char path[MAX_KEY], last[MAX_KEY];
		int rc = parse_key(p, path, sizeof(path), last, sizeof(last));
		if (rc)
			return rc;
		if (peek(p) != '=')
			return fail(p, "expected '=' in inline table");
		p->pos++;
		skip_ws(p);
		struct rt_toml_value v;
		if ((rc = parse_value(p, &v, depth + 1)))
			return rc;
		skip_ws(p);
		if (peek(p) == ',') {
			p->pos++;
			continue;
		}
		if (peek(p) == '}') {
			p->pos++;
			return 0;
		}
		return fail(p, "expected ',' or '}' in inline table");
	}
}

static int parse_array(struct ps *p, int depth)
{
	p->pos++; /* [ */
	for (;;) {
		skip_ws_nl(p);
		if (peek(p) == ']') {
			p->pos++;
			return 0;
		}
		struct rt_toml_value v;
		int rc = parse_value(p, &v, depth + 1);
		if (rc)
			return rc;
		skip_ws_nl(p);
		if (peek(p) == ',') {
			p->pos++;
			continue;
		}
		if (peek(p) == ']') {
			p->pos++;
			return 0;
		}
		return fail(p, "expected ',' or ']' in array");
	}
}

static int parse_scalar(struct ps *p, struct rt_toml_value *v)
{
	char tok[128];
	size_t n = 0;
	for (;;) {
		int c = peek(p);
		/* a date-time may have one space between date and time */
		if (c == ' ' && n == 10 && tok[4] == '-' && peek_at(p, 1) >= '0' &&
		    peek_at(p, 1) <= '9')
			c = 'T';
		else if (!(is_bare(c) || c == '+' || c == '.' || c == ':'))
			break;
		if (n + 1 >= sizeof(tok))
			return fail(p, "value too long");
		tok[n++] = (char)c;
		p->pos++;
	}
	tok[n] = '\0';
	if (!n)
		return fail(p, "expected a value");
	if (!strcmp(tok, "true") || !strcmp(tok, "false")) {
		v->type = RT_TOML_BOOL;
		v->b = tok[0] == 't';
		return 0;
	}
	const char *t = tok;
	int sign = 1;
	if (*t == '+' || *t == '-')
		sign = *t++ == '-' ? -1 : 1;
	if (!strcmp(t, "inf") || !strcmp(t, "nan")) {
		v->type = RT_TOML_FLOAT;
		v->f = t[0] == 'i' ? sign * HUGE_VAL : NAN;
		return 0;
	}
	if (n >= 8 && tok[4] == '-' && tok[0] >= '0' && tok[0] <= '9') {
		v->type = RT_TOML_OTHER; /* date/time: accepted, not interpreted */
		return 0;
	}
	if (n >= 5 && tok[2] == ':') {
		v->type = RT_TOML_OTHER;
		return 0;
	}
	/* strip underscores (each must sit between digits) */
	char clean[128];
	size_t m = 0;
	for (size_t i = 0; tok[i]; i++) {
		if (tok[i] == '_') {
			if (i == 0 || !tok[i + 1] || !is_bare(tok[i - 1]) || tok[i - 1] == '_' ||
			    tok[i + 1] == '_')
				return fail(p, "misplaced '_' in number");
			continue;
		}
		clean[m++] = tok[i];
	}
	clean[m] = '\0';
	t = clean;
	if (*t == '+' || *t == '-')
		t++;
	errno = 0;
	char *end;
	if (t[0] == '0' && (t[1] == 'x' || t[1] == 'o' || t[1] == 'b')) {
		if (t != clean)
			return fail(p, "sign on a non-decimal integer");
		int base = t[1] == 'x' ? 16 : t[1] == 'o' ? 8 : 2;
		if (!t[2] || t[2] == '-' || t[2] == '+')
			return fail(p, "bad integer");
		unsigned long long u = strtoull(t + 2, &end, base);
		if (*end || errno || u > INT64_MAX)
			return fail(p, "bad integer");
		v->type = RT_TOML_INT;
		v->i = (int64_t)u;
		return 0;
	}
	if (!(t[0] >= '0' && t[0] <= '9'))
		return fail(p, "expected a value");
	if (strpbrk(t, ".eE")) {
		double d = strtod(clean, &end);
		if (*end || errno == ERANGE)
			return fail(p, "bad float");
		v->type = RT_TOML_FLOAT;
		v->f = d;
		return 0;
	}
	if (t[0] == '0' && t[1])
		return fail(p, "leading zero in integer");
	long long ll = strtoll(clean, &end, 10);
	if (*end || errno)
		return fail(p, "bad integer");
	v->type = RT_TOML_INT;
	v->i = ll;
	return 0;
}

static int parse_value(struct ps *p, struct rt_toml_value *v, int depth)
{
	memset(v, 0, sizeof(*v));
	if (depth > MAX_DEPTH)
		return fail(p, "nested too deeply");
	int c = peek(p);
	if (c == '"' || c == '\'') {
		size_t ol;
		int rc = parse_string(p, p->scratch, &ol);
		v->type = RT_TOML_STRING;
		v->str = p->scratch;
		return rc;
	}
	if (c == '[') {
		v->type = RT_TOML_OTHER;
		return parse_array(p, depth);
	}
	if (c == '{') {
		v->type = RT_TOML_OTHER;
		return parse_inline_table(p, depth);
	}
	return parse_scalar(p, v);
}

static int parse_header(struct ps *p)
{
	int arr = peek_at(p, 1) == '[';
	p->pos += arr ? 2 : 1;
	char last[MAX_KEY];
	int rc = parse_key(p, p->table, sizeof(p->table), last, sizeof(last));
	if (rc)
		return rc;
	if (peek(p) != ']' || (arr && peek_at(p, 1) != ']'))
		return fail(p, "expected ']' after table name");
	p->pos += arr ? 2 : 1;
	return end_of_line(p);
}

static int parse_keyval(struct ps *p)
{
	char path[MAX_KEY], last[MAX_KEY];
	int rc = parse_key(p, path, sizeof(path), last, sizeof(last));
	if (rc)
		return rc;
	if (peek(p) != '=')
		return fail(p, "expected '=' after key");
	p->pos++;
	skip_ws(p);
	struct rt_toml_value v;
	if ((rc = parse_value(p, &v, 0)))
		return rc;
	/* table of this key: current table + the key's dotted prefix */
	char table[2 * MAX_KEY + 2];
	size_t plen = strlen(path) - strlen(last);
	if (plen)
		plen--; /* drop the dot */
	if (p->table[0] && plen)
		snprintf(table, sizeof(table), "%s.%.*s", p->table, (int)plen, path);
	else if (plen)
		snprintf(table, sizeof(table), "%.*s", (int)plen, path);
	else
		snprintf(table, sizeof(table), "%s", p->table);
	if (v.type != RT_TOML_OTHER && p->cb)
		p->cb(p->ctx, table, last, &v);
	return end_of_line(p);
}

int rt_toml_parse(const char *buf, size_t len, rt_toml_cb cb, void *ctx, int *err_line, char *err,
                  size_t errcap)
{
	struct ps p = {.s = buf, .len = len, .line = 1, .cb = cb, .ctx = ctx};
	p.scratch = malloc(len + 16);
	if (!p.scratch)
		return -ENOMEM;
	int rc = 0;
	/* a UTF-8 byte order mark is allowed */
	if (len >= 3 && !memcmp(buf, "\xef\xbb\xbf", 3))
		p.pos = 3;
	while (p.pos < p.len && !rc) {
		skip_ws_nl(&p);
		int c = peek(&p);
		if (c == -1)
			break;
		rc = c == '[' ? parse_header(&p) : parse_keyval(&p);
	}
	free(p.scratch);
	if (rc) {
		if (err_line)
			*err_line = p.line;
		if (err && errcap)
			snprintf(err, errcap, "%s", p.err);
	}
	return rc;
}
