/*
 * config.h - the recorder's settings: CLI > env (TRACKER_*) > TOML > default.
 *
 * The flags, env vars and TOML keys are those of the reference
 * resource-tracker (docs/cli.md), plus rt's own (--store, --count...).
 */
#ifndef RT_CONFIG_H
#define RT_CONFIG_H

#include "rt/alloc.h"
#include <stddef.h>
#include <stdint.h>

enum rt_meta_key {
	RT_META_JOB_NAME,
	RT_META_PROJECT_NAME,
	RT_META_STAGE_NAME,
	RT_META_TASK_NAME,
	RT_META_TEAM,
	RT_META_ENV,
	RT_META_LANGUAGE,
	RT_META_ORCHESTRATOR,
	RT_META_EXECUTOR,
	RT_META_EXTERNAL_RUN_ID,
	RT_META_CONTAINER_IMAGE,
	RT_META_COUNT
};

/* JSON / Sentinel key of a metadata field ("job_name"...; "" past
 * RT_META_COUNT). Never NULL. */
const char *rt_meta_name(enum rt_meta_key k);

enum rt_format { RT_FMT_JSON, RT_FMT_CSV };

/* "reference" (the 32 columns) or "extended": 0, or -1 for anything else. */
int rt_parse_csv_columns(const char *s, int *extended);

#define RT_MAX_TAGS 64
#define RT_INTERVAL_MIN 0.01
#define RT_INTERVAL_MAX (86400.0 * 7) /* a week */

struct rt_config {
	double interval;    /* seconds */
	int64_t pid;        /* 0: none */
	char pid_from[320]; /* where pid came from, for messages: "--pid", "[job] pid in FILE" */
	const char *cgroup; /* --cgroup PATH: the group's processes are the job */
	const char *jobs;   /* --jobs WHICH: the node mode (a preset or a glob) */
	enum rt_format format;
	const char *output; /* NULL: stderr */
	int quiet;
	int summary; /* --summary / TRACKER_SUMMARY: the printer ends with the summary */
	int csv_extended, csv_columns_set; /* --csv-columns / TRACKER_CSV_COLUMNS */
	struct rt_request request;         /* --request / TRACKER_REQUEST */
	int has_request;
	/* --max-memory, --max-cpu / TRACKER_MAX_MEMORY, TRACKER_MAX_CPU, TOML
	 * [budget] memory, cpu: the job's budget (has_mem, has_cpu) */
	struct rt_request budget;
	const char *config_path;
	int config_explicit;
	const char *meta[RT_META_COUNT];
	const char *tags[RT_MAX_TAGS];
	int ntags;
	const char *store;     /* NULL: default */
	uint64_t store_max_mb; /* 0: default cap */
	uint64_t count;        /* samples to take, 0 = until stopped */
	char **command;        /* wrapper mode: argv of the command */
	int ncommand;
	int help, version, verbose;
	/* which settings came from the CLI or env (bit per rt_config_src) */
	unsigned set;
	/* storage for strings read from the TOML file */
	char *owned[8];
	int nowned;
};

enum rt_config_src {
	RT_SET_INTERVAL = 1u << 0,
	RT_SET_PID = 1u << 1,
	RT_SET_JOB_NAME = 1u << 2,
};

void rt_config_defaults(struct rt_config *c);

/*
 * Parse argv. On a usage error returns RT_E_SYNTAX or RT_E_RANGE with a
 * one-line message in err. Stops at the first positional or "--": the
 * rest is the command.
 */
int rt_config_parse_args(struct rt_config *c, int argc, char **argv, char *err, size_t errcap);

/* 1 when argument a is an option whose value is the next argument
 * ("--store DIR", "-o FILE"; not "--store=DIR", not "-oFILE"), else 0. */
int rt_config_takes_next(const char *a);

/* Fill settings not given on the CLI from TRACKER_* env vars. Returns 0 or
 * an error with a message (e.g. a bad TRACKER_QUIET value is ignored
 * with a warning in warn). */
void rt_config_apply_env(struct rt_config *c, char *warn, size_t warncap);

/*
 * Fill settings given neither on the CLI nor in env from the TOML file.
 * A missing default file is silent. A missing --config file or a file that
 * cannot be parsed leaves the settings untouched and puts a one-line
 * warning naming the file (and line) into warn. Returns 0 in all cases
 * except an out-of-range value (RT_E_RANGE, message in warn).
 */
int rt_config_apply_toml(struct rt_config *c, char *warn, size_t warncap);

void rt_config_free(struct rt_config *c);

/* Parse "0.5", "2", "1e-2" as an interval; RT_E_SYNTAX / RT_E_RANGE. */
int rt_config_parse_interval(const char *s, double *out);

/* Usage text of the recorder (static). Never NULL. */
const char *rt_config_usage(void);

/* The Sentinel API token: SENTINEL_API_TOKEN, else SENTINEL_API_KEY (what
 * the peers' READMEs tell users to set); NULL when neither is set. */
const char *rt_sentinel_token(void);

#endif
