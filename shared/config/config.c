/*
 * config.c - the recorder's settings, with the reference tool's precedence:
 * CLI > env (TRACKER_*) > TOML file > default.
 *
 * Options are described once in a table; the parser, the env layer and the
 * usage text all read it.
 */
#define _GNU_SOURCE
#include "rt/config.h"

#include <unistd.h>
#include <fcntl.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt/common.h"
#include "rt/safefile.h"
#include "rt/toml.h"

enum opt_id {
	O_PID,
	O_CGROUP,
	O_JOBS,
	O_INTERVAL,
	O_CONFIG,
	O_FORMAT,
	O_OUTPUT,
	O_QUIET,
	O_META,
	O_TAG,
	O_STORE,
	O_STORE_MAX,
	O_COUNT,
	O_VERBOSE,
	O_SUMMARY,
	O_CSV_COLUMNS,
	O_REQUEST,
	O_MAX_MEMORY,
	O_MAX_CPU,
	O_HELP,
	O_VERSION
};

struct opt {
	const char *lng;
	char shrt;
	int has_arg;
	enum opt_id id;
	int meta; /* rt_meta_key for O_META */
	const char *env;
	const char *help;
};

static const struct opt opts[] = {
    {"pid", 'p', 1, O_PID, 0, NULL, "PID      root of the process tree to track"},
    {"cgroup", 0, 1, O_CGROUP, 0, NULL,
     "PATH     track every process of this cgroup (a job, a container) until it empties"},
    {"jobs", 0, 1, O_JOBS, 0, NULL,
     "WHICH    node mode: each job cgroup its own run (slurm, kubernetes, systemd, "
     "podman, docker, or a glob of cgroup paths)"},
    {"interval", 'i', 1, O_INTERVAL, 0, NULL, "SECS     sample interval, >= 0.01 (default 1)"},
    {"config", 'c', 1, O_CONFIG, 0, NULL, "FILE     TOML config (default resource-tracker.toml)"},
    {"format", 'f', 1, O_FORMAT, 0, NULL, "FMT      json or csv (default json)"},
    {"output", 'o', 1, O_OUTPUT, 0, "TRACKER_OUTPUT",
     "FILE     write metrics to FILE (default stderr)"},
    {"quiet", 0, 0, O_QUIET, 0, "TRACKER_QUIET", "         no metric output"},
    {"job-name", 'n', 1, O_META, RT_META_JOB_NAME, "TRACKER_JOB_NAME",
     "NAME     the job's name: runs of one job are summarized together (summary --job)"},
    {"project-name", 0, 1, O_META, RT_META_PROJECT_NAME, "TRACKER_PROJECT_NAME", "NAME"},
    {"stage-name", 0, 1, O_META, RT_META_STAGE_NAME, "TRACKER_STAGE_NAME", "NAME"},
    {"task-name", 0, 1, O_META, RT_META_TASK_NAME, "TRACKER_TASK_NAME", "NAME"},
    {"team", 0, 1, O_META, RT_META_TEAM, "TRACKER_TEAM", "NAME"},
    {"env", 0, 1, O_META, RT_META_ENV, "TRACKER_ENV", "NAME"},
    {"language", 0, 1, O_META, RT_META_LANGUAGE, "TRACKER_LANGUAGE", "NAME"},
    {"orchestrator", 0, 1, O_META, RT_META_ORCHESTRATOR, "TRACKER_ORCHESTRATOR", "NAME"},
    {"executor", 0, 1, O_META, RT_META_EXECUTOR, "TRACKER_EXECUTOR", "NAME"},
    {"external-run-id", 0, 1, O_META, RT_META_EXTERNAL_RUN_ID, "TRACKER_EXTERNAL_RUN_ID", "ID"},
    {"container-image", 0, 1, O_META, RT_META_CONTAINER_IMAGE, "TRACKER_CONTAINER_IMAGE", "IMAGE"},
    {"tag", 0, 1, O_TAG, 0, NULL, "KEY=VALUE free tag (repeatable)"},
    {"store", 0, 1, O_STORE, 0, NULL,
     "DIR      store directory (default $RT_STORE, then $XDG_DATA_HOME/resource-tracker, "
     "then ~/.local/share/resource-tracker)"},
    {"store-max-mb", 0, 1, O_STORE_MAX, 0, NULL,
     "MB       store size cap; oldest runs are deleted first (default 1024)"},
    {"count", 0, 1, O_COUNT, 0, NULL, "N        stop after N samples"},
    {"verbose", 'v', 0, O_VERBOSE, 0, NULL,
     "         also say what went well (the upload finished on Sentinel)"},
    {"request", 0, 1, O_REQUEST, 0, "TRACKER_REQUEST",
     "R        what the job asked for, e.g. cpu=4,memory=16GiB,gpu=1 (over the cgroup, Slurm "
     "and the host)"},
    {"max-memory", 0, 1, O_MAX_MEMORY, 0, "TRACKER_MAX_MEMORY",
     "SIZE     the job's memory budget (2GiB): its peak over it exits 3 after the job"},
    {"max-cpu", 0, 1, O_MAX_CPU, 0, "TRACKER_MAX_CPU",
     "CORES    the job's CPU budget: its mean over it exits 3 after the job"},
    {"csv-columns", 0, 1, O_CSV_COLUMNS, 0, "TRACKER_CSV_COLUMNS",
     "SET      CSV columns: reference (the 32, default) or extended (+ saturation, "
     "pressure, cgroup)"},
    {"summary", 0, 0, O_SUMMARY, 0, "TRACKER_SUMMARY",
     "         when the run ends, print what it needed (rt-export summary) on stderr"},
    {"help", 'h', 0, O_HELP, 0, NULL, "         this help"},
    {"version", 'V', 0, O_VERSION, 0, NULL, "         print the version"},
};

static const char *meta_names[RT_META_COUNT] = {
    "job_name",     "project_name", "stage_name",      "task_name",       "team", "env", "language",
    "orchestrator", "executor",     "external_run_id", "container_image",
};

const char *rt_meta_name(enum rt_meta_key k)
{
	return (unsigned)k < RT_META_COUNT ? meta_names[k] : "";
}

/* --max-cpu CORES or --max-memory SIZE into c->budget (the values
 * --request takes: cpu=4, memory=2GiB). 0, or -1 with one line in err. */
static int parse_budget(struct rt_config *c, int cpu, const char *v, char *err, size_t cap)
{
	char spec[96], why[200];
	struct rt_request r = {0};
	if (snprintf(spec, sizeof(spec), "%s=%s", cpu ? "cpu" : "memory", v) >= (int)sizeof(spec) ||
	    rt_request_parse(spec, &r, why, sizeof(why))) {
		snprintf(err, cap, "--max-%s must be %s (got '%.40s')", cpu ? "cpu" : "memory",
		         cpu ? "a number of cores > 0 (4, 1.5)" : "a size (2GiB, 512MiB, 4G)", v);
		return -1;
	}
	if (cpu) {
		c->budget.has_cpu = 1;
		c->budget.cpu = r.cpu;
	} else {
		c->budget.has_mem = 1;
		c->budget.mem = r.mem;
	}
	return 0;
}

void rt_config_defaults(struct rt_config *c)
{
	memset(c, 0, sizeof(*c));
	c->interval = 1.0;
	c->format = RT_FMT_JSON;
	c->config_path = "resource-tracker.toml";
}

void rt_config_free(struct rt_config *c)
{
	for (int i = 0; i < c->nowned; i++)
		free(c->owned[i]);
	c->nowned = 0;
}

int rt_config_parse_interval(const char *s, double *out)
{
	char *end;
	/* decimal seconds only: strtod would also take 0x10, 1e1, inf */
	size_t ok = strspn(s, "0123456789.");
	if (!*s || s[ok] || strchr(s, '.') != strrchr(s, '.'))
		return RT_E_SYNTAX;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s || *end || errno || !isfinite(v))
		return RT_E_SYNTAX;
	if (v < RT_INTERVAL_MIN)
		return RT_E_RANGE;
	if (v > RT_INTERVAL_MAX)
		return RT_E_RANGE;
	*out = v;
	return 0;
}

static int parse_i64(const char *s, int64_t min, int64_t max, int64_t *out)
{
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (end == s || *end || errno || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

/* The options that take a number: --pid, --interval, --store-max-mb,
 * --count. 0, or RT_E_RANGE with one line in err. */
static int apply_number(struct rt_config *c, int id, const char *arg, char *err, size_t errcap)
{
	int64_t v;
	switch (id) {
	case O_PID:
		if (parse_i64(arg, 1, 4194304, &v)) {
			snprintf(err, errcap, "--pid must be a process id (got '%s')", arg);
			return RT_E_RANGE;
		}
		c->pid = v;
		c->set |= RT_SET_PID;
		snprintf(c->pid_from, sizeof(c->pid_from), "--pid %lld", (long long)v);
		break;
	case O_INTERVAL:
		if (rt_config_parse_interval(arg, &c->interval)) {
			snprintf(err, errcap,
			         "--interval must be a number of seconds from %g to %g (a week) "
			         "(got '%s')",
			         RT_INTERVAL_MIN, RT_INTERVAL_MAX, arg);
			return RT_E_RANGE;
		}
		c->set |= RT_SET_INTERVAL;
		break;
	case O_STORE_MAX:
		if (parse_i64(arg, 1, INT64_MAX / (1 << 20), &v)) {
			snprintf(err, errcap,
			         "--store-max-mb must be a positive integer (got '%s')", arg);
			return RT_E_RANGE;
		}
		c->store_max_mb = (uint64_t)v;
		break;
	case O_COUNT:
		if (parse_i64(arg, 1, INT64_MAX, &v)) {
			snprintf(err, errcap, "--count must be a positive integer (got '%s')", arg);
			return RT_E_RANGE;
		}
		c->count = (uint64_t)v;
		break;
	}
	return 0;
}

static int apply_opt(struct rt_config *c, const struct opt *o, const char *arg, char *err,
                     size_t errcap)
{
	switch (o->id) {
	case O_PID:
	case O_INTERVAL:
	case O_STORE_MAX:
	case O_COUNT: return apply_number(c, o->id, arg, err, errcap);
	case O_CONFIG:
		c->config_path = arg;
		c->config_explicit = 1;
		break;
	case O_FORMAT:
		if (!strcmp(arg, "json"))
			c->format = RT_FMT_JSON;
		else if (!strcmp(arg, "csv"))
			c->format = RT_FMT_CSV;
		else {
			snprintf(err, errcap, "--format must be json or csv (got '%s')", arg);
			return RT_E_RANGE;
		}
		break;
	case O_OUTPUT: c->output = arg; break;
	case O_CGROUP: c->cgroup = arg; break;
	case O_JOBS: c->jobs = arg; break;
	case O_QUIET: c->quiet = 1; break;
	case O_META:
		c->meta[o->meta] = arg;
		if (o->meta == RT_META_JOB_NAME)
			c->set |= RT_SET_JOB_NAME;
		break;
	case O_TAG:
		if (!strchr(arg, '=') || arg[0] == '=') {
			snprintf(err, errcap, "--tag must be KEY=VALUE (got '%s')", arg);
			return RT_E_RANGE;
		}
		if (c->ntags >= RT_MAX_TAGS) {
			snprintf(err, errcap, "too many --tag options (at most %d)", RT_MAX_TAGS);
			return RT_E_RANGE;
		}
		c->tags[c->ntags++] = arg;
		break;
	case O_STORE: c->store = arg; break;
	case O_VERBOSE: c->verbose = 1; break;
	case O_SUMMARY: c->summary = 1; break;
	case O_CSV_COLUMNS:
		if (rt_parse_csv_columns(arg, &c->csv_extended)) {
			snprintf(err, errcap,
			         "--csv-columns must be reference or extended (got '%s')", arg);
			return RT_E_RANGE;
		}
		c->csv_columns_set = 1;
		break;
	case O_REQUEST: {
		char why[200];
		if (rt_request_parse(arg, &c->request, why, sizeof(why))) {
			snprintf(err, errcap, "--request %s", why);
			return RT_E_RANGE;
		}
		c->has_request = 1;
		break;
	}
	case O_MAX_MEMORY:
	case O_MAX_CPU:
		if (parse_budget(c, o->id == O_MAX_CPU, arg, err, errcap))
			return RT_E_RANGE;
		break;
	case O_HELP: c->help = 1; break;
	case O_VERSION: c->version = 1; break;
	}
	return 0;
}

int rt_config_takes_next(const char *a)
{
	const struct opt *o = NULL;
	if (a[0] != '-' || a[1] == '\0' || (a[1] == '-' && strchr(a, '=')))
		return 0;
	for (size_t k = 0; k < RT_ARRAY_LEN(opts); k++)
		if (a[1] == '-' ? !strcmp(opts[k].lng, a + 2) : (opts[k].shrt == a[1] && !a[2]))
			o = &opts[k];
	return o && o->has_arg;
}

int rt_config_parse_args(struct rt_config *c, int argc, char **argv, char *err, size_t errcap)
{
	int i = 1;
	for (; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--")) {
			i++;
			break;
		}
		if (a[0] != '-' || a[1] == '\0')
			break; /* first positional: the command starts here */
		const struct opt *o = NULL;
		const char *arg = NULL;
		if (a[1] == '-') {
			const char *name = a + 2;
			size_t nlen = strcspn(name, "=");
			for (size_t k = 0; k < RT_ARRAY_LEN(opts); k++)
				if (strlen(opts[k].lng) == nlen &&
				    !strncmp(opts[k].lng, name, nlen))
					o = &opts[k];
			if (!o) {
				snprintf(err, errcap, "unknown option '%.*s' (see --help)",
				         (int)nlen + 2, a);
				return RT_E_SYNTAX;
			}
			if (name[nlen] == '=') {
				if (!o->has_arg) {
					snprintf(err, errcap, "option '--%s' takes no value",
					         o->lng);
					return RT_E_SYNTAX;
				}
				arg = name + nlen + 1;
			}
		} else {
			for (size_t k = 0; k < RT_ARRAY_LEN(opts); k++)
				if (opts[k].shrt && opts[k].shrt == a[1])
					o = &opts[k];
			if (!o) {
				snprintf(err, errcap, "unknown option '-%c' (see --help)", a[1]);
				return RT_E_SYNTAX;
			}
			if (a[2]) {
				if (!o->has_arg) {
					snprintf(err, errcap, "option '-%c' takes no value", a[1]);
					return RT_E_SYNTAX;
				}
				arg = a + 2;
			}
		}
		if (o->has_arg && !arg) {
			if (i + 1 >= argc) {
				snprintf(err, errcap, "option '--%s' needs a value", o->lng);
				return RT_E_SYNTAX;
			}
			arg = argv[++i];
		}
		int rc = apply_opt(c, o, arg, err, errcap);
		if (rc)
			return rc;
	}
	if (i < argc) {
		c->command = argv + i;
		c->ncommand = argc - i;
	}
	return 0;
}

static int truthy(const char *v, int *out)
{
	static const char *yes[] = {"1", "true", "yes", "on", "TRUE", "True", "YES", "Yes"};
	static const char *no[] = {"0", "false", "no", "off", "", "FALSE", "False", "NO", "No"};
	for (size_t i = 0; i < RT_ARRAY_LEN(yes); i++)
		if (!strcmp(v, yes[i]))
			return *out = 1, 0;
	for (size_t i = 0; i < RT_ARRAY_LEN(no); i++)
		if (!strcmp(v, no[i]))
			return *out = 0, 0;
	return -1;
}

int rt_parse_csv_columns(const char *s, int *extended)
{
	if (!strcmp(s, "reference"))
		*extended = 0;
	else if (!strcmp(s, "extended"))
		*extended = 1;
	else
		return -1;
	return 0;
}

void rt_config_apply_env(struct rt_config *c, char *warn, size_t warncap)
{
	if (warncap)
		warn[0] = '\0';
	for (size_t k = 0; k < RT_ARRAY_LEN(opts); k++) {
		const struct opt *o = &opts[k];
		const char *v = o->env ? getenv(o->env) : NULL;
		if (!v)
			continue;
		if (o->id == O_META && !c->meta[o->meta] && *v) {
			c->meta[o->meta] = v;
			if (o->meta == RT_META_JOB_NAME)
				c->set |= RT_SET_JOB_NAME;
		} else if (o->id == O_OUTPUT && !c->output && *v) {
			c->output = v;
		} else if (o->id == O_CSV_COLUMNS && !c->csv_columns_set && *v) {
			if (rt_parse_csv_columns(v, &c->csv_extended))
				snprintf(warn, warncap,
				         "%s='%s' is not reference or extended; the reference "
				         "columns are "
				         "used",
				         o->env, v);
		} else if ((o->id == O_MAX_MEMORY && !c->budget.has_mem && *v) ||
		           (o->id == O_MAX_CPU && !c->budget.has_cpu && *v)) {
			char why[200];
			if (parse_budget(c, o->id == O_MAX_CPU, v, why, sizeof(why)))
				snprintf(warn, warncap, "%s: %s; no budget is set", o->env, why);
		} else if (o->id == O_REQUEST && !c->has_request && *v) {
			char why[200];
			if (rt_request_parse(v, &c->request, why, sizeof(why)))
				snprintf(warn, warncap, "%s %s; no request is recorded", o->env,
				         why);
			else
				c->has_request = 1;
		} else if ((o->id == O_QUIET && !c->quiet) || (o->id == O_SUMMARY && !c->summary)) {
			int q;
			if (truthy(v, &q) == 0)
				*(o->id == O_QUIET ? &c->quiet : &c->summary) = q;
			else
				snprintf(warn, warncap,
				         "%s='%s' is not a boolean (use 1/0, true/false); ignored",
				         o->env, v);
		}
	}
}

struct toml_vals {
	int has_interval, has_pid, has_name, bad;
	char budget_mem[64], budget_cpu[64]; /* [budget] memory, cpu, as written */
	double interval;
	int64_t pid;
	char *name;
	char why[160];
};

/* [budget] memory = "2GiB" (or a number of bytes), cpu = 4: kept as text
 * for parse_budget, which says what is wrong with it */
static void toml_budget(struct toml_vals *t, const char *key, const struct rt_toml_value *v)
{
	char *dst = !strcmp(key, "cpu") ? t->budget_cpu : t->budget_mem;
	size_t cap = sizeof(t->budget_cpu);
	if (v->type == RT_TOML_STRING)
		snprintf(dst, cap, "%s", v->str);
	else if (v->type == RT_TOML_INT)
		snprintf(dst, cap, "%lld", (long long)v->i);
	else if (v->type == RT_TOML_FLOAT)
		snprintf(dst, cap, "%.17g", v->f);
	else
		snprintf(dst, cap, "?");
}

static void toml_cb(void *vctx, const char *table, const char *key, const struct rt_toml_value *v)
{
	struct toml_vals *t = vctx;
	if (!strcmp(table, "tracker") && !strcmp(key, "interval_secs")) {
		double d = v->type == RT_TOML_INT ? (double)v->i : v->f;
		if ((v->type != RT_TOML_INT && v->type != RT_TOML_FLOAT) ||
		    !(d >= RT_INTERVAL_MIN) || d > RT_INTERVAL_MAX) {
			if (!t->bad)
				snprintf(t->why, sizeof(t->why),
				         "[tracker] interval_secs must be a number from %g to %g",
				         RT_INTERVAL_MIN, RT_INTERVAL_MAX);
			t->bad = 1;
			return;
		}
		t->interval = d;
		t->has_interval = 1;
	} else if (!strcmp(table, "job") && !strcmp(key, "pid")) {
		if (v->type != RT_TOML_INT || v->i < 1 || v->i > 4194304) {
			if (!t->bad)
				snprintf(t->why, sizeof(t->why), "[job] pid must be a process id");
			t->bad = 1;
			return;
		}
		t->pid = v->i;
		t->has_pid = 1;
	} else if (!strcmp(table, "budget") && (!strcmp(key, "memory") || !strcmp(key, "cpu"))) {
		toml_budget(t, key, v);
	} else if (!strcmp(table, "job") && !strcmp(key, "name")) {
		if (v->type != RT_TOML_STRING) {
			if (!t->bad)
				snprintf(t->why, sizeof(t->why), "[job] name must be a string");
			t->bad = 1;
			return;
		}
		free(t->name);
		t->name = strdup(v->str);
		t->has_name = t->name != NULL;
	}
}

/* The file's [budget], where the command line and the environment set
 * none; a bad value refuses the file, as any bad value does. */
static int apply_toml_budget(struct rt_config *c, struct toml_vals *t, char *warn, size_t cap)
{
	char why[200];
	struct rt_config tmp = *c;
	if ((t->budget_mem[0] && !c->budget.has_mem &&
	     parse_budget(&tmp, 0, t->budget_mem, why, sizeof(why))) ||
	    (t->budget_cpu[0] && !c->budget.has_cpu &&
	     parse_budget(&tmp, 1, t->budget_cpu, why, sizeof(why)))) {
		snprintf(warn, cap,
		         "config file '%s' [budget]: %s; ignoring the file, using defaults",
		         c->config_path, why + 2 /* "--" */);
		free(t->name);
		return -1;
	}
	c->budget = tmp.budget;
	return 0;
}

int rt_config_apply_toml(struct rt_config *c, char *warn, size_t warncap)
{
	warn[0] = '\0';
	/* a config file in a shared working directory may be anyone's: only
	 * a regular file of this user's that others cannot write is read, and
	 * a FIFO never blocks */
	char refused[512];
	int fd = rt_open_own(c->config_path, O_RDONLY, 0, refused, sizeof(refused));
	if (fd == -ENOENT) {
		if (c->config_explicit)
			snprintf(warn, warncap, "config file '%s' not found (%s); using defaults",
			         c->config_path, strerror(ENOENT));
		return 0;
	}
	if (fd < 0) {
		snprintf(warn, warncap, "config file refused: %s; using defaults", refused);
		return 0;
	}
	FILE *f = fdopen(fd, "rb");
	if (!f) {
		close(fd);
		return -ENOMEM;
	}
	/* bounded read: a config file is small; refuse absurd sizes */
	size_t cap = 1 << 20, len = 0;
	char *buf = malloc(cap);
	if (!buf) {
		fclose(f);
		return -ENOMEM;
	}
	len = fread(buf, 1, cap, f);
	int too_big = len == cap;
	int rerr = ferror(f);
	fclose(f);
	if (too_big || rerr) {
		snprintf(warn, warncap, "config file '%s' %s; using defaults", c->config_path,
		         too_big ? "is larger than 1 MiB" : "cannot be read");
		free(buf);
		return 0;
	}
	struct toml_vals t = {0};
	int line = 0;
	char why[128];
	int rc = rt_toml_parse(buf, len, toml_cb, &t, &line, why, sizeof(why));
	free(buf);
	if (rc) {
		snprintf(warn, warncap,
		         "config file '%s' line %d: %s; ignoring the file, using defaults",
		         c->config_path, line, why);
		free(t.name);
		return 0;
	}
	if (t.bad) {
		snprintf(warn, warncap, "config file '%s': %s; ignoring the file, using defaults",
		         c->config_path, t.why);
		free(t.name);
		return 0;
	}
	if (apply_toml_budget(c, &t, warn, warncap))
		return 0;
	if (t.has_interval && !(c->set & RT_SET_INTERVAL))
		c->interval = t.interval;
	if (t.has_pid && !(c->set & RT_SET_PID)) {
		c->pid = t.pid;
		snprintf(c->pid_from, sizeof(c->pid_from), "[job] pid %lld in %s", (long long)t.pid,
		         c->config_path);
	}
	if (t.has_name && !(c->set & RT_SET_JOB_NAME) && c->nowned < 8) {
		c->owned[c->nowned++] = t.name;
		c->meta[RT_META_JOB_NAME] = t.name;
		t.name = NULL;
	}
	free(t.name);
	return 0;
}

const char *rt_config_usage(void)
{
	static char text[4096];
	if (text[0])
		return text;
	size_t n = (size_t)snprintf(
	    text, sizeof(text),
	    "Usage: resource-tracker [OPTIONS] [--] [COMMAND [ARGS...]]\n"
	    "Samples CPU, memory, disk, network and GPU of the host (and of a process tree)\n"
	    "into a local store, and prints samples as JSON Lines or CSV.\n\nOptions:\n");
	for (size_t k = 0; k < RT_ARRAY_LEN(opts) && n < sizeof(text); k++) {
		const struct opt *o = &opts[k];
		char flag[64];
		if (o->shrt)
			snprintf(flag, sizeof(flag), "-%c, --%s", o->shrt, o->lng);
		else
			snprintf(flag, sizeof(flag), "    --%s", o->lng);
		n += (size_t)snprintf(text + n, sizeof(text) - n, "  %-22s %s%s%s%s\n", flag,
		                      o->help, o->env ? " [env: " : "", o->env ? o->env : "",
		                      o->env ? "]" : "");
	}
	if (n < sizeof(text))
		snprintf(
		    text + n, sizeof(text) - n,
		    "\nPrecedence: command line > environment > TOML file > defaults.\n"
		    "Replay and follow recorded runs with rt-export (see rt-export --help).\n");
	return text;
}

const char *rt_sentinel_token(void)
{
	const char *t = getenv("SENTINEL_API_TOKEN");
	if (t && *t)
		return t;
	t = getenv("SENTINEL_API_KEY");
	return t && *t ? t : NULL;
}
