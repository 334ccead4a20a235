/*
 * TOML 1.0 conformance: documents built from the examples of the TOML 1.0
 * specification (toml.io/en/v1.0.0), every valid one accepted, every one
 * the specification calls invalid refused with its line.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "rt/common.h"
#include "rt/toml.h"

static const char *valid[] = {
    /* comments, key/value pairs */
    "# This is a full-line comment\nkey = \"value\"  # This is a comment at the end of a line\n"
    "another = \"# This is not a comment\"\n",
    "key = \"value\"\nbare_key = \"value\"\nbare-key = \"value\"\n1234 = \"value\"\n",
    "\"127.0.0.1\" = \"value\"\n\"character encoding\" = \"value\"\n\"ʎǝʞ\" = \"value\"\n"
    "'key2' = \"value\"\n'quoted \"value\"' = \"value\"\n",
    "\"\" = \"blank\"\n",
    "name = \"Orange\"\nphysical.color = \"orange\"\nphysical.shape = \"round\"\n"
    "site.\"google.com\" = true\n",
    "fruit.name = \"banana\"\nfruit. color = \"yellow\"\nfruit . flavor = \"banana\"\n",
    "apple.type = \"fruit\"\norange.type = \"fruit\"\napple.skin = \"thin\"\n"
    "orange.skin = \"thick\"\napple.color = \"red\"\norange.color = \"orange\"\n",
    "3.14159 = \"pi\"\n",
    "fruit.apple.smooth = true\nfruit.orange = 2\n",
    /* strings */
    "str = \"I'm a string. \\\"You can quote me\\\". Name\\tJos\\u00E9\\nLocation\\tSF.\"\n",
    "str1 = \"\"\"\nRoses are red\nViolets are blue\"\"\"\n",
    "str1 = \"The quick brown fox jumps over the lazy dog.\"\n"
    "str2 = \"\"\"\nThe quick brown \\\n\n\n  fox jumps over \\\n    the lazy dog.\"\"\"\n"
    "str3 = \"\"\"\\\n       The quick brown \\\n       fox jumps over \\\n       the lazy dog.\\\n"
    "       \"\"\"\n",
    "str4 = \"\"\"Here are two quotation marks: \"\". Simple enough.\"\"\"\n"
    "str5 = \"\"\"Here are three quotation marks: \"\"\\\".\"\"\"\n"
    "str6 = \"\"\"Here are fifteen quotation marks: "
    "\"\"\\\"\"\"\\\"\"\"\\\"\"\"\\\"\"\"\\\".\"\"\"\n"
    "str7 = \"\"\"\"This,\" she said, \"is just a pointless statement.\"\"\"\"\n",
    "winpath  = 'C:\\Users\\nodejs\\templates'\nwinpath2 = '\\\\ServerX\\admin$\\system32\\'\n"
    "quoted   = 'Tom \"Dubs\" Preston-Werner'\nregex    = '<\\i\\c*\\s*>'\n",
    "regex2 = '''I [dw]on't need \\d{2} apples'''\nlines  = '''\nThe first newline is\n"
    "trimmed in raw strings.\n   All other whitespace\n   is preserved.\n'''\n",
    "quot15 = '''Here are fifteen quotation marks: \"\"\"\"\"\"\"\"\"\"\"\"\"\"\"'''\n"
    "apos15 = \"Here are fifteen apostrophes: '''''''''''''''\"\n"
    "str = ''''That,' she said, 'is still pointless.''''\n",
    "crlf = \"\"\"\r\na\r\nb\"\"\"\r\n",
    /* integers */
    "int1 = +99\nint2 = 42\nint3 = 0\nint4 = -17\n",
    "int5 = 1_000\nint6 = 5_349_221\nint7 = 53_49_221\nint8 = 1_2_3_4_5\n",
    "hex1 = 0xDEADBEEF\nhex2 = 0xdeadbeef\nhex3 = 0xdead_beef\noct1 = 0o01234567\n"
    "oct2 = 0o755\nbin1 = 0b11010110\n",
    "max = 9223372036854775807\nmin = -9223372036854775808\nz = +0\nm = -0\n",
    /* floats */
    "flt1 = +1.0\nflt2 = 3.1415\nflt3 = -0.01\nflt4 = 5e+22\nflt5 = 1e06\nflt6 = -2E-2\n"
    "flt7 = 6.626e-34\nflt8 = 224_617.445_991_228\n",
    "sf1 = inf\nsf2 = +inf\nsf3 = -inf\nsf4 = nan\nsf5 = +nan\nsf6 = -nan\nz = -0.0\nz2 = +0.0\n",
    /* booleans, dates and times */
    "bool1 = true\nbool2 = false\n",
    "odt1 = 1979-05-27T07:32:00Z\nodt2 = 1979-05-27T00:32:00-07:00\n"
    "odt3 = 1979-05-27T00:32:00.999999-07:00\nodt4 = 1979-05-27 07:32:00Z\n",
    "ldt1 = 1979-05-27T07:32:00\nldt2 = 1979-05-27T00:32:00.999999\nld1 = 1979-05-27\n"
    "lt1 = 07:32:00\nlt2 = 00:32:00.999999\nleap = 2024-02-29\nlower = 1979-05-27t07:32:00z\n",
    /* arrays */
    "integers = [ 1, 2, 3 ]\ncolors = [ \"red\", \"yellow\", \"green\" ]\n"
    "nested_arrays_of_ints = [ [ 1, 2 ], [3, 4, 5] ]\n"
    "nested_mixed_array = [ [ 1, 2 ], [\"a\", \"b\", \"c\"] ]\n"
    "string_array = [ \"all\", 'strings', \"\"\"are the same\"\"\", '''type''' ]\n",
    "numbers = [ 0.1, 0.2, 0.5, 1, 2, 5 ]\ncontributors = [\n  \"Foo Bar <foo@example.com>\",\n"
    "  { name = \"Baz Qux\", email = \"bazqux@example.com\", url = \"https://example.com/bazqux\" "
    "}\n]\n",
    "integers2 = [\n  1, 2, 3\n]\nintegers3 = [\n  1,\n  2, # this is ok\n]\nempty = []\n",
    /* tables */
    "[table-1]\nkey1 = \"some string\"\nkey2 = 123\n\n[table-2]\nkey1 = \"another string\"\nkey2 = "
    "456\n",
    "[dog.\"tater.man\"]\ntype.name = \"pug\"\n",
    "[a.b.c]\n[ d.e.f ]\n[ g .  h  . i ]\n[ j . \"ʞ\" . 'l' ]\n",
    "[x.y.z.w]\n[x]\n",
    "[fruit]\napple.color = \"red\"\napple.taste.sweet = true\n[fruit.apple.texture]\nsmooth = "
    "true\n",
    "# Top-level table begins.\nname = \"Fido\"\nbreed = \"pug\"\n[owner]\nname = \"Regina "
    "Dogman\"\n"
    "member_since = 1999-08-04\n",
    "[animal]\n[fruit.apple]\n[fruit.orange]\n",
    /* inline tables */
    "name = { first = \"Tom\", last = \"Preston-Werner\" }\npoint = { x = 1, y = 2 }\n"
    "animal = { type.name = \"pug\" }\n",
    "[product]\ntype = { name = \"Nail\" }\n",
    /* arrays of tables */
    "[[products]]\nname = \"Hammer\"\nsku = 738594937\n\n[[products]]  # empty table\n\n"
    "[[products]]\nname = \"Nail\"\nsku = 284758393\ncolor = \"gray\"\n",
    "[[fruits]]\nname = \"apple\"\n[fruits.physical]\ncolor = \"red\"\nshape = \"round\"\n"
    "[[fruits.varieties]]\nname = \"red delicious\"\n[[fruits.varieties]]\nname = \"granny "
    "smith\"\n"
    "[[fruits]]\nname = \"banana\"\n[[fruits.varieties]]\nname = \"plantain\"\n",
    "points = [ { x = 1, y = 2, z = 3 },\n           { x = 7, y = 8, z = 9 },\n"
    "           { x = 2, y = 4, z = 8 } ]\n",
    /* rt's own keys written every way TOML allows */
    "tracker = { interval_secs = 2 }\njob.name = \"x\"\n",
    "",
    "\n\n# only a comment\n",
    /* toml-test's utf8-bom cases: a byte order mark opens the file */
    "\xEF\xBB\xBF# comment\nbom = \"yes\"\n",
    "\xEF\xBB\xBFkey = 1\n",
};

static const char *invalid[] = {
    "key = # INVALID\n",
    "key = 1\n\xEF\xBB\xBFother = 2\n", /* a BOM anywhere else is not TOML */
    "first = \"Tom\" last = \"Preston-Werner\" # INVALID\n",
    "= \"no key name\"  # INVALID\n",
    "\"\"\" = \"multi\"\n",
    "name = \"Tom\"\nname = \"Pradyun\"\n",
    "spelling = \"favorite\"\n\"spelling\" = \"favourite\"\n",
    "fruit.apple = 1\nfruit.apple.smooth = true\n",
    "str = \"bad \\q escape\"\n",
    "str = \"\\uD800\"\n",
    "str = \"bad \\e escape\"\n",
    "str = \"unterminated\n",
    "str = 'line\nbreak'\n",
    "a = \"\"\"6 quotes: \"\"\"\"\"\"\n",
    "apos15 = '''Here are fifteen apostrophes: ''''''''''''''''''\n",
    "ctrl = \"a\x01b\"\n",
    "ctrl = 'a\x7f"
    "b'\n",
    "# comment with \x01 control\n",
    "cr = 1\r",
    "utf8 = \"\xc3\x28\"\n",
    "utf8 = \"\xed\xa0\x80\"\n",
    "utf8 = \"\xc0\xaf\"\n",
    "int = 0123\n",
    "int = 1__000\n",
    "int = _1000\n",
    "int = 1000_\n",
    "int = +0x10\n",
    "int = 0X10\n",
    "int = 9223372036854775808\n",
    "int = 0b102\n",
    "flt = .7\n",
    "flt = 7.\n",
    "flt = 3.e+20\n",
    "flt = 1.2_\n",
    "flt = 1e_3\n",
    "flt = infinity\n",
    "flt = 01.5\n",
    "bool = True\n",
    "date = 1979-13-27\n",
    "date = 1979-02-30\n",
    "date = 2023-02-29\n",
    "time = 24:00:00\n",
    "time = 07:60:00\n",
    "time = 07:32\n",
    "dt = 1979-05-27T07:32:00+25:00\n",
    "dt = 1979-05-27X07:32:00\n",
    "arr = [ 1, 2\n",
    "arr = [ , ]\n",
    "arr = [ 1 2 ]\n",
    "[fruit]\napple = \"red\"\n[fruit]\norange = \"orange\"\n",
    "[fruit]\napple = \"red\"\n[fruit.apple]\ntexture = \"smooth\"\n",
    "[fruit]\napple.color = \"red\"\napple.taste.sweet = true\n[fruit.apple]\n",
    "[fruit]\napple.color = \"red\"\napple.taste.sweet = true\n[fruit.apple.taste]\n",
    "[a.b.c]\nz = 9\n[a]\nb.c.t = \"no\"\n",
    "[product]\ntype.name = \"Nail\"\ntype = { edible = false }\n",
    "[product]\ntype = { name = \"Nail\" }\ntype.edible = false\n",
    "a = { b = 1, }\n",
    "a = { b = 1\n, c = 2 }\n",
    "a = { b = 1, b = 2 }\n",
    "a = { b.c = 1 }\n[a.b]\n",
    "fruits = []\n[[fruits]]\n",
    "[[fruits]]\nname = \"apple\"\n[[fruits.varieties]]\nname = \"red delicious\"\n"
    "[fruits.varieties]\nname = \"granny smith\"\n",
    "[[fruits]]\n[fruits.physical]\ncolor = \"red\"\n[[fruits.physical]]\ncolor = \"green\"\n",
    "[fruit.physical]\ncolor = \"red\"\n[[fruit]]\nname = \"apple\"\n",
    "[]\n",
    "[a\n",
    "[[a]\n",
    "[a]b = 1\n",
    "a = 1\n[a.b]\n",
    "a.b = 1\n[a]\n",
    "key\n",
    "key = \"value\" = 1\n",
};

static void nop(void *ctx, const char *t, const char *k, const struct rt_toml_value *v)
{
	(void)ctx, (void)t, (void)k, (void)v;
}

Test(toml_spec, every_valid_example_is_accepted)
{
	for (size_t i = 0; i < RT_ARRAY_LEN(valid); i++) {
		char err[160];
		int line;
		int rc =
		    rt_toml_parse(valid[i], strlen(valid[i]), nop, NULL, &line, err, sizeof(err));
		cr_expect_eq(rc, 0, "valid #%zu refused at line %d (%s):\n%s", i, line, err,
		             valid[i]);
	}
}

Test(toml_spec, every_invalid_example_is_refused_with_its_line)
{
	for (size_t i = 0; i < RT_ARRAY_LEN(invalid); i++) {
		char err[160] = "";
		int line = 0;
		int rc = rt_toml_parse(invalid[i], strlen(invalid[i]), nop, NULL, &line, err,
		                       sizeof(err));
		cr_expect_eq(rc, RT_E_SYNTAX, "invalid #%zu accepted:\n%s", i, invalid[i]);
		cr_expect(line >= 1 && err[0], "invalid #%zu: no line or reason", i);
	}
}

struct got {
	double interval;
	char name[64];
};

static void keys(void *ctx, const char *t, const char *k, const struct rt_toml_value *v)
{
	struct got *g = ctx;
	if (!strcmp(t, "tracker") && !strcmp(k, "interval_secs"))
		g->interval = v->type == RT_TOML_INT ? (double)v->i : v->f;
	if (!strcmp(t, "job") && !strcmp(k, "name") && v->type == RT_TOML_STRING)
		snprintf(g->name, sizeof(g->name), "%s", v->str);
}

Test(toml_spec, rt_keys_are_read_wherever_toml_allows_them)
{
	const char *docs[] = {
	    "tracker = { interval_secs = 2 }\njob = { name = \"n\" }\n",
	    "tracker.interval_secs = 2\njob.name = \"n\"\n",
	    "[tracker]\ninterval_secs = 2\n[job]\nname = \"n\"\n",
	    "\"tracker\".'interval_secs' = 2.0\n[\"job\"]\n\"name\" = \"\"\"\nn\"\"\"\n",
	    "[other]\nx = [1, { interval_secs = 9 }]\n[[runs]]\nname = \"no\"\n[tracker]\n"
	    "interval_secs = 2\n[job]\nname = 'n'\n",
	};
	for (size_t i = 0; i < RT_ARRAY_LEN(docs); i++) {
		struct got g = {0, ""};
		char err[160];
		int line;
		cr_assert_eq(
		    rt_toml_parse(docs[i], strlen(docs[i]), keys, &g, &line, err, sizeof(err)), 0,
		    "#%zu: line %d %s", i, line, err);
		cr_expect_eq(g.interval, 2.0, "#%zu", i);
		cr_expect_str_eq(g.name, "n", "#%zu", i);
	}
}

Test(toml_spec, the_error_line_is_where_the_error_is)
{
	char err[160];
	int line;
	const char *t = "a = 1\n[t]\nb = \"\"\"\nx\n\"\"\"\nb = 2\n";
	cr_expect_eq(rt_toml_parse(t, strlen(t), nop, NULL, &line, err, sizeof(err)), RT_E_SYNTAX);
	cr_expect_eq(line, 6);
	cr_expect(strstr(err, "duplicate") != NULL, "%s", err);
}
