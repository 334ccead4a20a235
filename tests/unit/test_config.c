#include <criterion/criterion.h>
#include <errno.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rt/common.h"
#include "rt/alloc.h"
#include "rt/config.h"

static char toml_path[256];

static void write_toml(const char *text)
{
	snprintf(toml_path, sizeof(toml_path), "/tmp/rt-test-cfg-%d.toml", getpid());
	FILE *f = fopen(toml_path, "w");
	fputs(text, f);
	fclose(f);
}

static int parse(struct rt_config *c, char **argv, char *err)
{
	int argc = 0;
	while (argv[argc])
		argc++;
	rt_config_defaults(c);
	return rt_config_parse_args(c, argc, argv, err, 256);
}

Test(config, cli_beats_env_beats_toml)
{
	char err[256], warn[512];
	write_toml("[job]\nname = \"from-toml\"\n[tracker]\ninterval_secs = 5\n");
	char *argv[] = {"rt", "--config", toml_path, "-i", "2", NULL};
	struct rt_config c;
	cr_assert_eq(parse(&c, argv, err), 0);
	setenv("TRACKER_JOB_NAME", "from-env", 1);
	rt_config_apply_env(&c, warn, sizeof(warn));
	cr_assert_eq(rt_config_apply_toml(&c, warn, sizeof(warn)), 0);
	cr_expect_eq(c.interval, 2.0, "CLI interval beats TOML");
	cr_expect_str_eq(c.meta[RT_META_JOB_NAME], "from-env", "env beats TOML");
	unsetenv("TRACKER_JOB_NAME");
	char *argv2[] = {"rt", "-c", toml_path, NULL};
	cr_assert_eq(parse(&c, argv2, err), 0);
	rt_config_apply_env(&c, warn, sizeof(warn));
	rt_config_apply_toml(&c, warn, sizeof(warn));
	cr_expect_eq(c.interval, 5.0, "TOML beats default");
	cr_expect_str_eq(c.meta[RT_META_JOB_NAME], "from-toml");
	rt_config_free(&c);
	unlink(toml_path);
}

Test(config, interval_must_be_at_least_10ms)
{
	char err[256];
	struct rt_config c;
	char *a1[] = {"rt", "--interval", "0", NULL};
	cr_expect_eq(parse(&c, a1, err), RT_E_RANGE);
	cr_expect(strstr(err, "--interval"));
	char *a2[] = {"rt", "--interval=-1", NULL};
	cr_expect_eq(parse(&c, a2, err), RT_E_RANGE);
	char *a3[] = {"rt", "-i0.01", NULL};
	cr_expect_eq(parse(&c, a3, err), 0);
	cr_expect_eq(c.interval, 0.01);
	char *a4[] = {"rt", "-i", "abc", NULL};
	cr_expect_eq(parse(&c, a4, err), RT_E_RANGE);
}

Test(config, command_starts_at_first_positional_or_double_dash)
{
	char err[256];
	struct rt_config c;
	char *a1[] = {"rt", "-n", "j", "python", "-i", "3", NULL};
	cr_assert_eq(parse(&c, a1, err), 0);
	cr_expect_eq(c.ncommand, 3);
	cr_expect_str_eq(c.command[0], "python");
	char *a2[] = {"rt", "--", "-x", NULL};
	cr_assert_eq(parse(&c, a2, err), 0);
	cr_expect_eq(c.ncommand, 1);
	cr_expect_str_eq(c.command[0], "-x");
}

Test(config, bad_options_say_what_was_wrong)
{
	char err[256];
	struct rt_config c;
	char *a1[] = {"rt", "--bogus", NULL};
	cr_expect_eq(parse(&c, a1, err), RT_E_SYNTAX);
	cr_expect(strstr(err, "--bogus"));
	char *a2[] = {"rt", "--format", "xml", NULL};
	cr_expect_eq(parse(&c, a2, err), RT_E_RANGE);
	char *a3[] = {"rt", "--tag", "novalue", NULL};
	cr_expect_eq(parse(&c, a3, err), RT_E_RANGE);
	char *a4[] = {"rt", "--pid", NULL};
	cr_expect_eq(parse(&c, a4, err), RT_E_SYNTAX);
}

Test(config, unparsable_or_missing_files_warn_and_keep_defaults)
{
	char err[256], warn[512];
	struct rt_config c;
	write_toml("[tracker]\ninterval_secs = 3\nbroken = \n");
	char *a1[] = {"rt", "--config", toml_path, NULL};
	cr_assert_eq(parse(&c, a1, err), 0);
	rt_config_apply_toml(&c, warn, sizeof(warn));
	cr_expect(strstr(warn, toml_path) && strstr(warn, "line 3"), "%s", warn);
	cr_expect_eq(c.interval, 1.0, "nothing applied from a broken file");
	char *a2[] = {"rt", "--config", "/nonexistent/x.toml", NULL};
	cr_assert_eq(parse(&c, a2, err), 0);
	rt_config_apply_toml(&c, warn, sizeof(warn));
	cr_expect(strstr(warn, "/nonexistent/x.toml"), "%s", warn);
	char *a3[] = {"rt", NULL}; /* default file absent: silent */
	char cwd[512];
	cr_assert(getcwd(cwd, sizeof(cwd)));
	cr_assert_eq(chdir("/"), 0);
	cr_assert_eq(parse(&c, a3, err), 0);
	rt_config_apply_toml(&c, warn, sizeof(warn));
	cr_expect_str_eq(warn, "");
	cr_assert_eq(chdir(cwd), 0);
	write_toml("[tracker]\ninterval_secs = 0\n");
	char *a4[] = {"rt", "-c", toml_path, NULL};
	cr_assert_eq(parse(&c, a4, err), 0);
	rt_config_apply_toml(&c, warn, sizeof(warn));
	cr_expect(strstr(warn, "interval_secs"), "%s", warn);
	cr_expect_eq(c.interval, 1.0);
	unlink(toml_path);
}

Test(config, sentinel_token_or_key_the_token_winning)
{
	unsetenv("SENTINEL_API_TOKEN");
	unsetenv("SENTINEL_API_KEY");
	cr_expect_null(rt_sentinel_token());
	setenv("SENTINEL_API_KEY", "k", 1);
	cr_expect_str_eq(rt_sentinel_token(), "k");
	setenv("SENTINEL_API_TOKEN", "", 1);
	cr_expect_str_eq(rt_sentinel_token(), "k", "an empty token is not set");
	setenv("SENTINEL_API_TOKEN", "t", 1);
	cr_expect_str_eq(rt_sentinel_token(), "t");
	unsetenv("SENTINEL_API_TOKEN");
	unsetenv("SENTINEL_API_KEY");
}

Test(config, a_request_is_cpu_memory_and_gpu_in_any_order)
{
	struct rt_request r;
	char why[200];
	cr_assert_eq(rt_request_parse("gpu=1,cpu=4,memory=16GiB", &r, why, sizeof(why)), 0, "%s",
	             why);
	cr_expect(r.has_cpu && r.cpu == 4 && r.has_gpu && r.gpu == 1);
	cr_expect(r.has_mem && r.mem == 16ull << 30);
	cr_assert_eq(rt_request_parse("memory=512MB", &r, why, sizeof(why)), 0);
	cr_expect_eq(r.mem, 512000000ull, "MB are 1000s");
	cr_assert_eq(rt_request_parse("memory=2G,cpu=0.5", &r, why, sizeof(why)), 0);
	cr_expect(r.mem == 2ull << 30 && r.cpu == 0.5 && !r.has_gpu, "G is GiB, as Slurm reads it");
	static const char *const bad[][2] = {
	    {"", "empty"},
	    {"cpu", "not KEY=VALUE"},
	    {"cpu=0", "cpu='0'"},
	    {"cpu=-1", "cpu='-1'"},
	    {"memory=lots", "memory='lots'"},
	    {"memory=0GiB", "memory='0GiB'"},
	    {"gpu=1.5", "gpu='1.5'"},
	    {"disk=1", "'disk'"},
	    {"cpu=4,,gpu=1", "not KEY=VALUE"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_expect_eq(rt_request_parse(bad[i][0], &r, why, sizeof(why)), -1, "%s",
		             bad[i][0]);
		cr_expect(strstr(why, bad[i][1]) != NULL, "'%s': %s", bad[i][0], why);
	}
}
