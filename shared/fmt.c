/*
 * fmt.c - growable buffer and the exact number formats of rt's outputs.
 *
 * The CSV fixed-decimal path avoids printf for speed (replay must sustain
 * hundreds of thousands of lines a second) but falls back to snprintf near
 * a rounding tie, so the bytes always equal printf's.
 */
#define _GNU_SOURCE
#include "rt/fmt.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rt/common.h"

static int reserve(struct rt_buf *b, size_t extra)
{
	if (b->oom)
		return -1;
	if (b->cap - b->len > extra)
		return 0;
	size_t cap = b->cap ? b->cap : 256;
	while (cap - b->len <= extra)
		cap *= 2;
	char *p = realloc(b->p, cap);
	if (!p) {
		b->oom = 1;
		return -1;
	}
	b->p = p;
	b->cap = cap;
	return 0;
}

void rt_buf_free(struct rt_buf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

void rt_buf_reset(struct rt_buf *b)
{
	b->len = 0;
}

void rt_buf_put(struct rt_buf *b, const char *s, size_t n)
{
	if (reserve(b, n + 1))
		return;
	if (n) /* s may be NULL when there is nothing to copy */
		memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

void rt_buf_puts(struct rt_buf *b, const char *s)
{
	rt_buf_put(b, s, strlen(s));
}

void rt_buf_putc(struct rt_buf *b, char c)
{
	if (reserve(b, 2))
		return;
	b->p[b->len++] = c;
	b->p[b->len] = '\0';
}

void rt_buf_printf(struct rt_buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || reserve(b, (size_t)n + 1))
		return;
	va_start(ap, fmt);
	vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

void rt_buf_u64(struct rt_buf *b, uint64_t v)
{
	char tmp[24];
	int i = 24;
	do {
		tmp[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	rt_buf_put(b, tmp + i, (size_t)(24 - i));
}

void rt_buf_i64(struct rt_buf *b, int64_t v)
{
	if (v < 0) {
		rt_buf_putc(b, '-');
		rt_buf_u64(b, (uint64_t)0 - (uint64_t)v);
	} else {
		rt_buf_u64(b, (uint64_t)v);
	}
}

/* Shortest "%.*e" that reads back as v: digits (no dot) and exponent. */
static int shortest_digits(double v, char *digits, int *exp10)
{
	char tmp[40];
	int lo = 1, hi = 17;
	while (lo < hi) { /* round-trip is monotonic in precision */
		int mid = (lo + hi) / 2;
		snprintf(tmp, sizeof(tmp), "%.*e", mid - 1, v);
		if (strtod(tmp, NULL) == v)
			hi = mid;
		else
			lo = mid + 1;
	}
	snprintf(tmp, sizeof(tmp), "%.*e", lo - 1, v);
	int n = 0;
	char *p = tmp;
	for (; *p && *p != 'e'; p++)
		if (*p >= '0' && *p <= '9')
			digits[n++] = *p;
	while (n > 1 && digits[n - 1] == '0')
		n--;
	digits[n] = '\0';
	*exp10 = *p == 'e' ? atoi(p + 1) : 0;
	return n;
}

void rt_buf_f64_json(struct rt_buf *b, double v)
{
	if (!isfinite(v)) {
		rt_buf_puts(b, "null");
		return;
	}
	if (signbit(v)) {
		rt_buf_putc(b, '-');
		v = -v;
	}
	if (v == 0) {
		rt_buf_puts(b, "0.0");
		return;
	}
	char d[24];
	int e, n;
	if (v < 1e15 && v == (double)(uint64_t)v) {
		/* an integer (counts, bytes): its digits are the shortest form */
		uint64_t u = (uint64_t)v;
		char r[24];
		int m = 0;
		for (; u; u /= 10)
			r[m++] = (char)('0' + u % 10);
		for (n = 0; n < m; n++)
			d[n] = r[m - 1 - n];
		e = m - 1;
		while (n > 1 && d[n - 1] == '0')
			n--;
		d[n] = '\0';
	} else {
		n = shortest_digits(v, d, &e);
	}
	int kk = e + 1; /* position of the decimal point after the digits' start */
	int k = kk - n; /* exponent of the last digit */
	if (k >= 0 && kk <= 16) {
		rt_buf_put(b, d, (size_t)n);
		for (int i = 0; i < k; i++)
			rt_buf_putc(b, '0');
		rt_buf_puts(b, ".0");
	} else if (kk > 0 && kk <= 16) {
		rt_buf_put(b, d, (size_t)kk);
		rt_buf_putc(b, '.');
		rt_buf_put(b, d + kk, (size_t)(n - kk));
	} else if (kk > -5 && kk <= 0) {
		rt_buf_puts(b, "0.");
		for (int i = 0; i < -kk; i++)
			rt_buf_putc(b, '0');
		rt_buf_put(b, d, (size_t)n);
	} else {
		rt_buf_putc(b, d[0]);
		if (n > 1) {
			rt_buf_putc(b, '.');
			rt_buf_put(b, d + 1, (size_t)(n - 1));
		}
		rt_buf_putc(b, 'e');
		rt_buf_i64(b, kk - 1);
	}
}

static const double pow10_tab[] = {1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9};

void rt_buf_f64_fixed(struct rt_buf *b, double v, int prec)
{
	if (prec < 0 || prec > 9 || !isfinite(v) || fabs(v) >= 1e15) {
		rt_buf_printf(b, "%.*f", prec, v);
		return;
	}
	int neg = signbit(v) != 0;
	double a = neg ? -v : v;
	double scaled = a * pow10_tab[prec];
	double fl = floor(scaled);
	double frac = scaled - fl;
	if (fabs(frac - 0.5) < 1e-6 || scaled >= 9e15) { /* near a tie: let printf decide */
		rt_buf_printf(b, "%.*f", prec, v);
		return;
	}
	uint64_t r = (uint64_t)fl + (frac > 0.5);
	uint64_t ip = r / (uint64_t)pow10_tab[prec];
	uint64_t fp = r % (uint64_t)pow10_tab[prec];
	if (neg)
		rt_buf_putc(b, '-');
	rt_buf_u64(b, ip);
	if (prec > 0) {
		char tmp[12];
		tmp[0] = '.';
		for (int i = prec; i >= 1; i--) {
			tmp[i] = (char)('0' + fp % 10);
			fp /= 10;
		}
		rt_buf_put(b, tmp, (size_t)prec + 1);
	}
}

/* Length of a valid UTF-8 sequence at s (n bytes left), or 0. */
static int utf8_len(const unsigned char *s, size_t n)
{
	unsigned c = s[0];
	int len;
	unsigned min;
	if (c < 0x80)
		return 1;
	if ((c & 0xe0) == 0xc0) {
		len = 2;
		min = 0x80;
		c &= 0x1f;
	} else if ((c & 0xf0) == 0xe0) {
		len = 3;
		min = 0x800;
		c &= 0x0f;
	} else if ((c & 0xf8) == 0xf0) {
		len = 4;
		min = 0x10000;
		c &= 0x07;
	} else {
		return 0;
	}
	if ((size_t)len > n)
		return 0;
	for (int i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = (c << 6) | (s[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	return len;
}

int rt_hexval(int c)
{
	return c >= '0' && c <= '9'   ? c - '0'
	       : c >= 'a' && c <= 'f' ? c - 'a' + 10
	       : c >= 'A' && c <= 'F' ? c - 'A' + 10
	                              : -1;
}

size_t rt_utf8_encode(unsigned long cp, unsigned char u[4])
{
	if (cp < 0x80) {
		u[0] = (unsigned char)cp;
		return 1;
	}
	if (cp < 0x800) {
		u[0] = (unsigned char)(0xc0 | cp >> 6);
		u[1] = (unsigned char)(0x80 | (cp & 63));
		return 2;
	}
	if (cp < 0x10000) {
		u[0] = (unsigned char)(0xe0 | cp >> 12);
		u[1] = (unsigned char)(0x80 | (cp >> 6 & 63));
		u[2] = (unsigned char)(0x80 | (cp & 63));
		return 3;
	}
	u[0] = (unsigned char)(0xf0 | cp >> 18);
	u[1] = (unsigned char)(0x80 | (cp >> 12 & 63));
	u[2] = (unsigned char)(0x80 | (cp >> 6 & 63));
	u[3] = (unsigned char)(0x80 | (cp & 63));
	return 4;
}

void rt_buf_json_str(struct rt_buf *b, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s);
	rt_buf_putc(b, '"');
	while (n) {
		unsigned c = *p;
		if (c == '"' || c == '\\') {
			char e[2] = {'\\', (char)c};
			rt_buf_put(b, e, 2);
		} else if (c < 0x20) {
			const char *esc = c == '\n'   ? "\\n"
			                  : c == '\t' ? "\\t"
			                  : c == '\r' ? "\\r"
			                  : c == '\b' ? "\\b"
			                  : c == '\f' ? "\\f"
			                              : NULL;
			if (esc) {
				rt_buf_puts(b, esc);
			} else {
				char e[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
				rt_buf_put(b, e, 6);
			}
		} else if (c < 0x80) {
			rt_buf_putc(b, (char)c);
		} else {
			int l = utf8_len(p, n);
			if (l == 0) {
				rt_buf_puts(b, "\xef\xbf\xbd");
				l = 1;
			} else {
				rt_buf_put(b, (const char *)p, (size_t)l);
			}
			p += l;
			n -= (size_t)l;
			continue;
		}
		p++;
		n--;
	}
	rt_buf_putc(b, '"');
}

void rt_fmt_iso8601(char *buf, size_t cap, uint64_t wall_ns)
{
	time_t t = (time_t)(wall_ns / 1000000000ull);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(buf, cap, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static int digits_n(const char **p, int n, int *out)
{
	int v = 0;
	for (int i = 0; i < n; i++) {
		if ((*p)[i] < '0' || (*p)[i] > '9')
			return -1;
		v = v * 10 + ((*p)[i] - '0');
	}
	*p += n;
	*out = v;
	return 0;
}

int rt_parse_time(const char *s, uint64_t *wall_ns)
{
	uint64_t unit;
	return rt_parse_time_prec(s, wall_ns, &unit);
}

/* Units of the last digit given: "10:00:05" -> 1 s, "1767225600.25" -> 10 ms. */
static uint64_t unit_of(const char *frac_start, const char *frac_end)
{
	uint64_t u = 1000000000ull;
	for (const char *p = frac_start; p < frac_end && u > 1; p++)
		if (*p >= '0' && *p <= '9')
			u /= 10;
	return u;
}

int rt_parse_time_prec(const char *s, uint64_t *wall_ns, uint64_t *unit_ns)
{
	if (!s || !*s)
		return RT_E_SYNTAX;
	const char *dot = strchr(s, '.');
	const char *fend = dot ? dot + 1 + strspn(dot + 1, "0123456789") : NULL;
	*unit_ns = dot ? unit_of(dot + 1, fend) : 1000000000ull;
	/* epoch seconds, optionally fractional: integer arithmetic, since a
	 * double cannot hold ns since the epoch exactly */
	size_t nint = strspn(s, "0123456789");
	if (nint > 4 && (s[nint] == '\0' || s[nint] == '.')) {
		if (nint > 11)
			return RT_E_SYNTAX;
		uint64_t secs = 0, frac = 0, scale = 1000000000ull;
		for (size_t i = 0; i < nint; i++)
			secs = secs * 10 + (uint64_t)(s[i] - '0');
		const char *f = s + nint;
		if (*f == '.') {
			f++;
			if (!*f)
				return RT_E_SYNTAX;
			for (; *f >= '0' && *f <= '9'; f++) {
				if (scale > 1) {
					scale /= 10;
					frac += (uint64_t)(*f - '0') * scale;
				}
			}
			if (*f)
				return RT_E_SYNTAX;
		}
		*wall_ns = secs * 1000000000ull + frac;
		return 0;
	}
	const char *p = s;
	struct tm tm = {0};
	int Y, M, D, h = 0, m = 0, sec = 0;
	if (digits_n(&p, 4, &Y) || *p++ != '-' || digits_n(&p, 2, &M) || *p++ != '-' ||
	    digits_n(&p, 2, &D))
		return RT_E_SYNTAX;
	double frac = 0;
	long off = 0;
	if (*p == 'T' || *p == ' ') {
		p++;
		if (digits_n(&p, 2, &h) || *p++ != ':' || digits_n(&p, 2, &m))
			return RT_E_SYNTAX;
		if (*p == ':') {
			p++;
			if (digits_n(&p, 2, &sec))
				return RT_E_SYNTAX;
			if (*p == '.') {
				char *end;
				frac = strtod(p, &end);
				p = end;
			}
		}
		if (*p == 'Z') {
			p++;
		} else if (*p == '+' || *p == '-') {
			int sign = *p++ == '-' ? -1 : 1, oh, om = 0;
			if (digits_n(&p, 2, &oh))
				return RT_E_SYNTAX;
			if (*p == ':')
				p++;
			if (*p && digits_n(&p, 2, &om))
				return RT_E_SYNTAX;
			off = sign * (oh * 3600L + om * 60L);
		}
	}
	/* a day the month does not have (2026-02-30) is a mistake, not the
	 * 2nd of March */
	static const int mdays[12] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	int leap = (Y % 4 == 0 && Y % 100 != 0) || Y % 400 == 0;
	if (*p || M < 1 || M > 12 || D < 1 || D > mdays[M - 1] || (M == 2 && D == 29 && !leap) ||
	    h > 23 || m > 59 || sec > 60)
		return RT_E_SYNTAX;
	tm.tm_year = Y - 1900;
	tm.tm_mon = M - 1;
	tm.tm_mday = D;
	tm.tm_hour = h;
	tm.tm_min = m;
	tm.tm_sec = sec;
	time_t t = timegm(&tm);
	if (t < 0)
		return RT_E_SYNTAX;
	*wall_ns = (uint64_t)(t - off) * 1000000000ull + (uint64_t)(frac * 1e9 + 0.5);
	return 0;
}

void rt_fmt_printable(char *dst, size_t cap, const char *src)
{
	size_t n = 0;
	if (cap == 0)
		return;
	for (; src && *src; src++) {
		unsigned char c = (unsigned char)*src;
		char esc[8];
		size_t k;
		if (c < 0x20 || c == 0x7f)
			k = (size_t)snprintf(esc, sizeof(esc), "\\x%02x", c);
		else if (c == '\\')
			k = (size_t)snprintf(esc, sizeof(esc), "\\\\");
		else
			esc[0] = (char)c, k = 1;
		if (n + k >= cap)
			break;
		memcpy(dst + n, esc, k);
		n += k;
	}
	dst[n] = '\0';
}
