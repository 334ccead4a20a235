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

/*
 * The shortest "%.*e" that reads back as v: its digits (no dot, trailing
 * zeros dropped) and exponent. The precision is found by bisection, each
 * step asking whether printf's digits at that precision read back as v.
 *
 * printf_digits() is that question asked of libc (snprintf, then strtod);
 * exact_digits() answers it in integer arithmetic, for the values a sample
 * holds (normal, 1e-5 <= v < 1e15, not an integer): v is M * 2^-sh
 * exactly, so v * 10^s is X / 2^sh with X = M * 10^s, and printf's p
 * digits are X / 2^sh rounded half to even. They read back as v when they
 * lie within v's rounding interval (strtod rounds correctly), which is
 * again exact: |m * 2^sh - X| against half the gap, 10^s / 2 (the gap
 * below a power of two is half as wide, but those here, 2^-16 to 2^-1,
 * have exact decimals of 12 digits or fewer: d is 0). Both give
 * the same digits for every v (tests/unit/test_fmt.c checks them against
 * libc on millions of values); the exact one costs no printf.
 */
typedef unsigned __int128 u128;

struct digits_q {
	uint64_t mant; /* v = mant * 2^-sh */
	int sh, e10;   /* 10^e10 <= v < 10^(e10 + 1) */
};

static u128 pow10_u128(int k)
{
	u128 r = 1;
	while (k-- > 0)
		r *= 10;
	return r;
}

/* v >= 10^e, exactly */
static int ge_pow10(const struct digits_q *q, int e)
{
	if (e >= 0)
		return (u128)q->mant >= pow10_u128(e) << q->sh;
	return (u128)q->mant * pow10_u128(-e) >= (u128)1 << q->sh;
}

static int exact_setup(double v, struct digits_q *q)
{
	if (!(v >= 1e-5 && v < 1e15) || v == floor(v))
		return -1;
	uint64_t bits;
	memcpy(&bits, &v, sizeof(bits));
	int be = (int)(bits >> 52 & 0x7ff);
	q->mant = (bits & ((1ull << 52) - 1)) | 1ull << 52;
	q->sh = 1075 - be;
	if (q->sh < 1 || q->sh > 70)
		return -1;
	/* log10(2) ~ 0.30103 from the binary exponent: within one of e10,
	 * which the exact comparisons below then settle */
	q->e10 = (int)floor((be - 1023) * 0.30102999566398120);
	while (!ge_pow10(q, q->e10))
		q->e10--;
	while (ge_pow10(q, q->e10 + 1))
		q->e10++;
	return 0;
}

/* printf's p significant digits of v, as the integer m (10^(p-1) <= m <=
 * 10^p: 10^p when rounding carried), and whether they read back as v. */
static int exact_digits(const struct digits_q *q, int p, uint64_t *m_out)
{
	int s = p - 1 - q->e10;
	if (s < 0) {
		/* m * 10^-s is an integer; v is not, and lies a whole ulp or
		 * more from every integer: it cannot read back. Digits are
		 * only asked of a precision that reads back. */
		*m_out = 0;
		return 0;
	}
	u128 x = (u128)q->mant * pow10_u128(s);
	u128 m = x >> q->sh, r = x - (m << q->sh), half = (u128)1 << (q->sh - 1);
	if (r > half || (r == half && (m & 1)))
		m++;
	*m_out = (uint64_t)m;
	u128 ms = m << q->sh;
	u128 d = ms > x ? ms - x : x - ms, ten = pow10_u128(s);
	return 2 * d < ten || (2 * d == ten && !(q->mant & 1));
}

static int exact_shortest(double v, char *digits, int *exp10)
{
	struct digits_q q;
	if (exact_setup(v, &q))
		return -1;
	uint64_t m;
	int lo = 1, hi = 17;
	while (lo < hi) { /* the same bisection as printf_shortest's */
		int mid = (lo + hi) / 2;
		if (exact_digits(&q, mid, &m))
			hi = mid;
		else
			lo = mid + 1;
	}
	exact_digits(&q, lo, &m);
	*exp10 = q.e10;
	if (m == (uint64_t)pow10_u128(lo)) { /* 9.99.. rounded up to 10.0.. */
		m /= 10;
		++*exp10;
	}
	char r[24];
	int n = 0;
	for (; m; m /= 10)
		r[n++] = (char)('0' + m % 10);
	int k = 0;
	while (k < n - 1 && r[k] == '0') /* trailing zeros, lowest first */
		k++;
	int len = 0;
	for (int i = n - 1; i >= k; i--)
		digits[len++] = r[i];
	digits[len] = '\0';
	return len;
}

static int printf_shortest(double v, char *digits, int *exp10)
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

int rt_fmt_shortest(double v, char *digits, int *exp10, int exact)
{
	int n = exact ? exact_shortest(v, digits, exp10) : -1;
	return n > 0 ? n : printf_shortest(v, digits, exp10);
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
		n = rt_fmt_shortest(v, d, &e, 1);
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

size_t rt_utf8_cut(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = n, k = 0;
	while (i > 0 && k < 4 && (p[i - 1] & 0xc0) == 0x80) {
		i--;
		k++;
	}
	if (i == 0 || p[i - 1] < 0xc0)
		return n; /* ends on a whole character (or on bytes no cut mends) */
	unsigned char lead = p[i - 1];
	size_t need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : 2;
	return k + 1 >= need ? n : i - 1;
}

size_t rt_copy_text(char *dst, size_t cap, const char *src)
{
	if (!cap)
		return 0;
	size_t n = strnlen(src, cap);
	if (n >= cap)
		n = rt_utf8_cut(src, cap - 1);
	memcpy(dst, src, n);
	dst[n] = '\0';
	return n;
}

void rt_buf_json_str(struct rt_buf *b, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), plain = 0;
	while (plain < n && p[plain] >= 0x20 && p[plain] < 0x80 && p[plain] != '"' &&
	       p[plain] != '\\')
		plain++;
	rt_buf_putc(b, '"');
	rt_buf_put(b, s, plain); /* the common case: nothing to escape */
	p += plain;
	n -= plain;
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

/* Epoch seconds (nint digits), optionally fractional, into ns: integer
 * arithmetic, since a double cannot hold ns since the epoch exactly. */
static int parse_epoch(const char *s, size_t nint, uint64_t *wall_ns)
{
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

int rt_parse_time_prec(const char *s, uint64_t *wall_ns, uint64_t *unit_ns)
{
	if (!s || !*s)
		return RT_E_SYNTAX;
	const char *dot = strchr(s, '.');
	const char *fend = dot ? dot + 1 + strspn(dot + 1, "0123456789") : NULL;
	*unit_ns = dot ? unit_of(dot + 1, fend) : 1000000000ull;
	size_t nint = strspn(s, "0123456789");
	if (nint > 4 && (s[nint] == '\0' || s[nint] == '.'))
		return parse_epoch(s, nint, wall_ns);
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
		if (n + k >= cap) {
			n = rt_utf8_cut(dst, n);
			break;
		}
		memcpy(dst + n, esc, k);
		n += k;
	}
	dst[n] = '\0';
}
