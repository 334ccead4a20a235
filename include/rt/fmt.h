/*
 * fmt.h - a growable text buffer and the number formats of the outputs.
 *
 * JSON floats are printed as the shortest text that reads back as the same
 * double, in the style of serde_json (the reference tool): "4.0", "0.5",
 * "1e16", "1e-7"; NaN and infinities become null. CSV floats use fixed
 * decimals ("%.4f") and are byte-identical to printf.
 */
#ifndef RT_FMT_H
#define RT_FMT_H

#include <stddef.h>
#include <stdint.h>

struct rt_buf {
	char *p;
	size_t len, cap;
	int oom; /* set once an allocation failed; appends then do nothing */
};

void rt_buf_free(struct rt_buf *b);
void rt_buf_reset(struct rt_buf *b);
void rt_buf_put(struct rt_buf *b, const char *s, size_t n);
void rt_buf_puts(struct rt_buf *b, const char *s);
void rt_buf_putc(struct rt_buf *b, char c);
void rt_buf_printf(struct rt_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void rt_buf_u64(struct rt_buf *b, uint64_t v);
void rt_buf_i64(struct rt_buf *b, int64_t v);
/* Shortest round-trip double, serde_json style; null for NaN/inf. */
void rt_buf_f64_json(struct rt_buf *b, double v);
/* The shortest digits of v > 0 (finite) that read back as v, as printf's
 * "%.*e" gives them: digits without dot or trailing zeros, and the decimal
 * exponent of the first. exact: integer arithmetic where it applies (the
 * same digits, no printf); 0: snprintf and strtod (the tests' reference). */
int rt_fmt_shortest(double v, char *digits, int *exp10, int exact);
/* Same as printf("%.*f", prec, v) for prec 0..9. */
void rt_buf_f64_fixed(struct rt_buf *b, double v, int prec);
/* JSON string literal with escapes; bytes are copied as they are except
 * control characters, quote and backslash (invalid UTF-8 becomes U+FFFD). */
void rt_buf_json_str(struct rt_buf *b, const char *s);

/* Value of a hex digit, -1 for any other character. */
int rt_hexval(int c);
/* UTF-8 of code point cp (<= 0x10FFFF) into out[0..4); its length. */
size_t rt_utf8_encode(unsigned long cp, unsigned char out[4]);
/* The longest start of s[0..n) that does not end inside a UTF-8 character
 * (a sequence cut short by n is left out; other bytes are kept as they are). */
size_t rt_utf8_cut(const char *s, size_t n);
/* Copy the text src into dst[cap] (NUL-terminated), cut on a character
 * boundary when it does not fit: outside text (names, commands, hostnames,
 * labels) is never cut inside a character. Returns the bytes copied. */
size_t rt_copy_text(char *dst, size_t cap, const char *src);

/* Format ns since the epoch as "YYYY-MM-DDTHH:MM:SSZ" (UTC) into buf[21+]. */
void rt_fmt_iso8601(char *buf, size_t cap, uint64_t wall_ns);

/* src for a terminal or a text format: control bytes (C0, DEL) written as
 * \xNN, a backslash as \\, so a job name cannot move the cursor, recolour
 * or clear a terminal. Truncated to cap-1 bytes, never mid-escape. */
void rt_fmt_printable(char *dst, size_t cap, const char *src);

/* Parse "2026-11-21T10:00:00Z", "...T10:00:00.5+02:00", "2026-11-21" or
 * epoch seconds ("1763719200", "1763719200.25") into ns since the epoch.
 * Returns 0 or RT_E_SYNTAX. */
int rt_parse_time(const char *s, uint64_t *wall_ns);
/* Same, and *unit_ns is the precision given (1 s for "...T10:00:05Z", 1 ms
 * for "...05.123Z"), so a range end can include the whole last unit.
 * Returns 0 or RT_E_SYNTAX (also for NULL or ""). */
int rt_parse_time_prec(const char *s, uint64_t *wall_ns, uint64_t *unit_ns);

#endif
