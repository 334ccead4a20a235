#include <criterion/criterion.h>
#include <errno.h>
#include <sys/stat.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt/common.h"
#include "rt/fmt.h"
#include "rt/runmeta.h"

static char *json_num(double v)
{
	static char out[64];
	struct rt_buf b = {0};
	rt_buf_f64_json(&b, v);
	snprintf(out, sizeof(out), "%s", b.p);
	rt_buf_free(&b);
	return out;
}

Test(fmt, json_floats_are_shortest_round_trip_in_serde_style)
{
	cr_expect_str_eq(json_num(4.0), "4.0");
	cr_expect_str_eq(json_num(0.0), "0.0");
	cr_expect_str_eq(json_num(-0.0), "-0.0");
	cr_expect_str_eq(json_num(0.1), "0.1");
	cr_expect_str_eq(json_num(1.2), "1.2");
	cr_expect_str_eq(json_num(100.0 / 3.0), "33.333333333333336");
	cr_expect_str_eq(json_num(1048576.0), "1048576.0");
	cr_expect_str_eq(json_num(1e15), "1000000000000000.0");
	cr_expect_str_eq(json_num(1e16), "1e16");
	cr_expect_str_eq(json_num(1.5e17), "1.5e17");
	cr_expect_str_eq(json_num(0.0001), "0.0001");
	cr_expect_str_eq(json_num(0.00001), "0.00001");
	cr_expect_str_eq(json_num(1e-7), "1e-7");
	cr_expect_str_eq(json_num(NAN), "null");
	cr_expect_str_eq(json_num(INFINITY), "null");
}

Test(fmt, json_floats_read_back_exactly)
{
	srandom(7);
	for (int i = 0; i < 20000; i++) {
		double v = (double)random() / (double)random() * pow(10, (int)(random() % 30) - 15);
		cr_assert_eq(strtod(json_num(v), NULL), v, "%.17g -> %s", v, json_num(v));
	}
}

Test(fmt, json_integers_print_their_digits_and_dot_zero)
{
	srandom(13);
	char want[64];
	for (int i = 0; i < 200000; i++) {
		double v = (double)((uint64_t)random() * (uint64_t)random() % 1000000000000000ull);
		if (i % 4 == 0) /* trailing zeros */
			v = (double)(random() % 1000) * pow(10, (int)(random() % 12));
		if (i % 7 == 0)
			v = -v;
		snprintf(want, sizeof(want), "%.0f.0", v);
		cr_assert_str_eq(json_num(v), want, "%.17g", v);
	}
	cr_expect_str_eq(json_num(999999999999999.0), "999999999999999.0");
	cr_expect_str_eq(json_num(1.0), "1.0");
}

Test(fmt, fixed_decimals_match_printf_byte_for_byte)
{
	srandom(11);
	char want[64];
	struct rt_buf b = {0};
	for (int i = 0; i < 200000; i++) {
		double v = (double)(random() % 2000000) / 1000.0 + (double)random() / 1e12;
		if (i % 3 == 0)
			v = (double)(random() % 100000) / 8000.0; /* exact ties */
		if (i % 5 == 0)
			v = -v;
		int prec = (int)(random() % 7);
		snprintf(want, sizeof(want), "%.*f", prec, v);
		rt_buf_reset(&b);
		rt_buf_f64_fixed(&b, v, prec);
		cr_assert_str_eq(b.p, want, "%.17g prec %d", v, prec);
	}
	rt_buf_free(&b);
}

Test(fmt, json_strings_are_escaped_and_valid_utf8)
{
	struct rt_buf b = {0};
	rt_buf_json_str(&b, "a\"b\\c\n\x01\xc3\xa9\xff");
	cr_expect_str_eq(b.p, "\"a\\\"b\\\\c\\n\\u0001\xc3\xa9\xef\xbf\xbd\"");
	rt_buf_free(&b);
}

Test(fmt, times_parse_as_iso8601_or_epoch)
{
	uint64_t ns;
	cr_assert_eq(rt_parse_time("2026-01-01T00:00:00Z", &ns), 0);
	cr_expect_eq(ns, 1767225600ull * 1000000000ull);
	cr_assert_eq(rt_parse_time("2026-01-01T02:00:00+02:00", &ns), 0);
	cr_expect_eq(ns, 1767225600ull * 1000000000ull);
	cr_assert_eq(rt_parse_time("2026-01-01", &ns), 0);
	cr_expect_eq(ns, 1767225600ull * 1000000000ull);
	cr_assert_eq(rt_parse_time("1767225600.5", &ns), 0);
	cr_expect_eq(ns, 1767225600500000000ull);
	cr_expect_eq(rt_parse_time("yesterday", &ns), RT_E_SYNTAX);
	cr_expect_eq(rt_parse_time("2026-13-01", &ns), RT_E_SYNTAX);
	char iso[32];
	rt_fmt_iso8601(iso, sizeof(iso), 1767225600ull * 1000000000ull);
	cr_expect_str_eq(iso, "2026-01-01T00:00:00Z");
}

/* The exact (integer) shortest digits against libc's snprintf + strtod
 * bisection, value by value: random bit patterns, the ratios and
 * decimals samples hold, powers of two (where the gap below is narrower)
 * and powers of ten with their neighbours, and exact ties. */
static void same_shortest(double v)
{
	char a[24], b[24];
	int ea = 0, eb = 0;
	int na = rt_fmt_shortest(v, a, &ea, 1), nb = rt_fmt_shortest(v, b, &eb, 0);
	cr_assert(na == nb && ea == eb && !strcmp(a, b), "%.17g: exact %s e%d, libc %s e%d", v, a,
	          ea, b, eb);
}

Test(fmt, exact_shortest_digits_equal_libcs_for_every_kind_of_value, .timeout = 120)
{
	uint64_t x = 0x9e3779b97f4a7c15ull;
	for (int i = 0; i < 400000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		/* exponents from 2^-24 to 2^54: both sides of the exact range */
		uint64_t bits = (x & ((1ull << 52) - 1)) | (uint64_t)(1023 - 24 + (x >> 52) % 79)
		                                               << 52;
		double v;
		memcpy(&v, &bits, sizeof(v));
		same_shortest(v);
	}
	for (int i = 1; i < 20000; i++) {
		same_shortest(i / 100.0);
		same_shortest(i / 1000.0);
		same_shortest(i / 3.0);
		same_shortest(i * 0.1);
		same_shortest(i / 7.0 * 1e6);
		same_shortest(i + 0.5);
		same_shortest(i * 0.25 + 1e-5);
		same_shortest(100.0 * i / (i + 7));
	}
	for (int k = -30; k < 60; k++) {
		double p = ldexp(1.0, k);
		same_shortest(p);
		same_shortest(nextafter(p, 0));
		same_shortest(nextafter(p, INFINITY));
	}
	for (int k = -6; k < 16; k++) {
		double p = pow(10, k);
		for (int j = -3; j <= 3; j++) {
			double q = p;
			for (int s = 0; s < (j < 0 ? -j : j); s++)
				q = nextafter(q, j < 0 ? 0 : INFINITY);
			same_shortest(q);
			same_shortest(q * 9.999999999999999);
		}
	}
}

/* Whether s is well-formed UTF-8 (no sequence cut short, no stray byte). */
static int valid_utf8(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	while (*p) {
		size_t k = *p < 0x80 ? 1 : *p >= 0xf0 ? 4 : *p >= 0xe0 ? 3 : *p >= 0xc0 ? 2 : 0;
		if (!k)
			return 0;
		for (size_t i = 1; i < k; i++)
			if ((p[i] & 0xc0) != 0x80)
				return 0;
		p += k;
	}
	return 1;
}

Test(fmt, text_is_cut_on_a_character_boundary)
{
	/* 1-, 2-, 3- and 4-byte characters, cut at every length (issue 45 item 5) */
	static const char *const chars[] = {"a", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80"};
	for (size_t c = 0; c < 4; c++) {
		char src[400] = "", dst[64];
		while (strlen(src) + 4 < sizeof(src) - 1)
			strcat(src, chars[c]);
		size_t w = strlen(chars[c]);
		for (size_t cap = 1; cap <= sizeof(dst); cap++) {
			size_t n = rt_copy_text(dst, cap, src);
			cr_assert(valid_utf8(dst), "cap %zu, %zu-byte characters: cut inside one",
			          cap, w);
			cr_assert_eq(n, (cap - 1) / w * w,
			             "cap %zu: kept %zu bytes, not every whole one", cap, n);
			cr_assert(!strncmp(dst, src, n));
		}
	}
	char dst[8];
	cr_assert_eq(rt_copy_text(dst, sizeof(dst), "short"), 5);
	cr_assert_str_eq(dst, "short");
	/* bytes that are no character are kept as they are, not eaten */
	cr_assert_eq(rt_utf8_cut("ab\x80\x80", 4), 4);
	cr_assert_eq(rt_utf8_cut("ab\xe2\x82", 4), 2);
}

Test(fmt, stored_job_names_are_cut_on_a_character_boundary)
{
	char json[2048];
	struct rt_run_fields f;
	for (size_t pad = 0; pad < 4; pad++) {
		size_t n = (size_t)snprintf(json, sizeof(json),
		                            "{\"metadata\":{\"job_name\":\"%.*s", (int)pad, "xxx");
		for (int i = 0; i < 120; i++) /* raw bytes, and an escaped one */
			n += (size_t)snprintf(json + n, sizeof(json) - n, "%s",
			                      i % 3 ? "\xe2\x82\xac" : "\\u00e9");
		snprintf(json + n, sizeof(json) - n, "\"}}");
		cr_assert_eq(rt_runmeta_read(json, strlen(json), &f), 0);
		cr_assert(valid_utf8(f.job_name), "pad %zu: the name was cut inside a character",
		          pad);
		cr_assert_gt(strlen(f.job_name), sizeof(f.job_name) - 5);
	}
}

Test(fmt, a_node_runs_resume_object_reads_back_as_written)
{
	struct rt_run_cgroup cg = {.path = "/slurm/uid_5/job_7", .cpu_before = -1};
	struct rt_run_resume r = {.group_ino = 4026531835ull,
	                          .off_user_us = -12,
	                          .off_sys_us = 987654321012ll,
	                          .cg_cpu = 1,
	                          .before_us = 3,
	                          .skipped = 41,
	                          .oom_below = 2,
	                          .handover = 1};
	struct rt_run_meta m = {.run_id = 9, .status = "finished", .cgroup = &cg, .resume = &r};
	struct rt_buf b = {0};
	rt_runmeta_write(&b, &m);
	cr_assert(!b.oom);
	struct rt_run_fields f;
	cr_assert_eq(rt_runmeta_read(b.p, b.len, &f), 0);
	cr_assert(f.has_resume);
	cr_assert_str_eq(f.cg_path, "/slurm/uid_5/job_7");
	cr_assert_eq(f.resume.group_ino, r.group_ino);
	cr_assert_eq(f.resume.off_user_us, r.off_user_us);
	cr_assert_eq(f.resume.off_sys_us, r.off_sys_us);
	cr_assert(f.resume.cg_cpu);
	cr_assert_eq(f.resume.before_us, 3);
	cr_assert_eq(f.resume.skipped, 41);
	cr_assert_eq(f.resume.oom_below, 2);
	cr_assert(f.resume.handover);
	/* its mark cleared (its job ended while no node ran): the rest as it was */
	struct rt_buf c = {0};
	cr_assert_eq(rt_runmeta_clear_handover(b.p, b.len, &c), 0);
	cr_assert_eq(c.len, b.len);
	struct rt_run_fields g;
	cr_assert_eq(rt_runmeta_read(c.p, c.len, &g), 0);
	cr_assert(g.has_resume && !g.resume.handover);
	cr_assert_eq(g.resume.skipped, 41);
	cr_assert_str_eq(g.status, "finished");
	cr_assert_eq(rt_runmeta_clear_handover(c.p, c.len, &b), RT_E_NOTFOUND);
	rt_buf_free(&c);
	rt_buf_reset(&b);
	rt_runmeta_write(&b, &m);
	/* no offsets read yet, not handed over: said so, not zeros taken for them */
	r.cg_cpu = 0;
	r.handover = 0;
	rt_buf_reset(&b);
	rt_runmeta_write(&b, &m);
	cr_assert_eq(rt_runmeta_read(b.p, b.len, &f), 0);
	cr_assert(f.has_resume && !f.resume.cg_cpu && !f.resume.handover);
	/* a run without one (any run but a node's) has none */
	m.resume = NULL;
	rt_buf_reset(&b);
	rt_runmeta_write(&b, &m);
	cr_assert_eq(rt_runmeta_read(b.p, b.len, &f), 0);
	cr_assert(!f.has_resume);
	rt_buf_free(&b);
}
