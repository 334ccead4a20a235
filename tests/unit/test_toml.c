#include <criterion/criterion.h>
#include <errno.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt/common.h"
#include "rt/toml.h"

struct seen {
	char log[2048];
};

static void cb(void *ctx, const char *table, const char *key, const struct rt_toml_value *v)
{
	struct seen *s = ctx;
	char one[256];
	if (v->type == RT_TOML_STRING)
		snprintf(one, sizeof(one), "%s.%s=s:%s;", table, key, v->str);
	else if (v->type == RT_TOML_INT)
		snprintf(one, sizeof(one), "%s.%s=i:%lld;", table, key, (long long)v->i);
	else if (v->type == RT_TOML_FLOAT)
		snprintf(one, sizeof(one), "%s.%s=f:%g;", table, key, v->f);
	else
		snprintf(one, sizeof(one), "%s.%s=b:%d;", table, key, v->b);
	strncat(s->log, one, sizeof(s->log) - strlen(s->log) - 1);
}

static int parse(const char *text, struct seen *s, int *line)
{
	char err[128];
	memset(s, 0, sizeof(*s));
	return rt_toml_parse(text, strlen(text), cb, s, line, err, sizeof(err));
}

Test(toml, reads_the_reference_config_keys)
{
	struct seen s;
	int line;
	const char *t = "# comment\n[job]\nname    = \"my job\" # trailing\npid = 12_345\n\n"
	                "[tracker]\ninterval_secs = 0.5\nflag = true\n";
	cr_assert_eq(parse(t, &s, &line), 0);
	cr_expect_str_eq(s.log, "job.name=s:my job;job.pid=i:12345;tracker.interval_secs=f:0.5;"
	                        "tracker.flag=b:1;");
}

Test(toml, passes_inline_table_values_on_and_skips_arrays_and_dates)
{
	struct seen s;
	int line;
	const char *t = "tags = [\"a\", [1, 2], { x = 1 },\n  # c\n  'b',]\n"
	                "when = 1979-05-27T07:32:00Z\nt = { a.b = \"c\" }\n"
	                "s = '''\nraw \\ text'''\nu = \"\\u00e9\\n\"\nh = 0xff\n";
	cr_assert_eq(parse(t, &s, &line), 0);
	cr_expect_str_eq(s.log, "t.a.b=s:c;.s=s:raw \\ text;.u=s:\xc3\xa9\n;.h=i:255;");
}

Test(toml, dotted_keys_name_their_table)
{
	struct seen s;
	int line;
	cr_assert_eq(parse("job.name = \"x\"\n[a.\"b c\"]\nk = 1\n", &s, &line), 0);
	cr_expect_str_eq(s.log, "job.name=s:x;a.b c.k=i:1;");
}

Test(toml, errors_give_the_line)
{
	struct seen s;
	int line = 0;
	cr_expect_eq(parse("[job]\nname = \"unterminated\n", &s, &line), RT_E_SYNTAX);
	cr_expect_eq(line, 2);
	cr_expect_eq(parse("a = 1\nb = 2\nc = = 3\n", &s, &line), RT_E_SYNTAX);
	cr_expect_eq(line, 3);
	cr_expect_eq(parse("[job\n", &s, &line), RT_E_SYNTAX);
	cr_expect_eq(parse("x = 1 2\n", &s, &line), RT_E_SYNTAX);
	cr_expect_eq(parse("x = 01\n", &s, &line), RT_E_SYNTAX);
	cr_expect_eq(parse("x = 1__0\n", &s, &line), RT_E_SYNTAX);
}

Test(toml, hostile_nesting_does_not_exhaust_the_stack)
{
	static char t[200000];
	strcpy(t, "x = ");
	memset(t + 4, '[', 100000);
	struct seen s;
	int line;
	cr_expect_eq(parse(t, &s, &line), RT_E_SYNTAX);
}
