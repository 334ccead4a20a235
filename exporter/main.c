/*
 * main.c - rt-export: read runs from the store and the live ring.
 *
 * Built twice. rt-export itself links the store, the ring and the formats
 * alone (libc and liblmdb): it is what the recorder starts to print a run
 * live, so it must be as light as the recorder. The verbs that need cJSON,
 * libcurl, OpenSSL or zlib (show, upload, summary, recommend, report,
 * discover, live --summary) are carried out by rt-export-full, the same
 * program built with RT_EXPORT_FULL, which rt-export executes in its place
 * with the same arguments.
 *
 *   rt-export runs                      list runs
 *   rt-export show RUN                  one run's metadata as JSON
 *   rt-export replay RUN [options]      print a stored run
 *   rt-export tail [RUN] [options]      follow a live run
 *   rt-export live RUN [options]        the recorder's own live stream
 *   rt-export upload RUN                stream a run to S3 through Sentinel
 *   rt-export discover                  cloud metadata of this machine
 *
 * The verb table below drives both dispatch and --help.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "export.h"
#include "rt/common.h"
#include "rt/ring.h"
#include "rt/runmeta.h"
#include "rt/salvage.h"
#include "rt/store.h"
#include "rt/sysroot.h"
#ifdef RT_EXPORT_FULL
#include "answer/answer.h"
#include "net/cloud.h"
#define FULL(fn) fn
#else
/* not in this executable: main() hands the verb to rt-export-full */
#define FULL(fn) NULL
#endif

/* The verbs, by id (their names, help and handlers: the verb table below). */
#define ON(v) (1u << V_##v)
#define ON_ID(id) (1u << (id))
#define ALL_VERBS ((1u << V_N) - 1)
#define STREAMS (ON(REPLAY) | ON(TAIL) | ON(LIVE))
#define ANSWERS (ON(SUMMARY) | ON(RECOMMEND) | ON(REPORT))

/* The options: each once, with the verbs that take it. */
enum opt_id {
	O_HELP,
	O_VERSION,
	O_STORE,
	O_FORMAT,
	O_OUTPUT,
	O_FROM,
	O_TO,
	O_EVERY,
	O_LAST_N,
	O_FD,
	O_VERBOSE,
	O_JSON,
	O_SUMMARY,
	O_COMPACT,
	O_BEFORE,
	O_QUIET,
	O_JOB,
	O_LAST,
	O_SERVERS,
	O_CSV_COLUMNS,
	O_ALL,
	O_URL,
	O_FAILED,
	O_CSV_MS,
	O_NO_WAIT,
	O_INTEGRATION,
	O_STAGE,
	O_EXT_RUN,
	O_BRANCHES,
	O_JOB_ID,
	O_USER,
	O_SCHEDULER,
	O_POD,
	O_NAMESPACE,
	O_WAIT,
	O_SLURM_JOB,
	O_N
};
_Static_assert(O_N <= 64, "the options given are a 64-bit set");
static const struct opt {
	const char *name, *alias;
	int value; /* takes a value */
	unsigned verbs;
} opts[O_N] = {
    [O_HELP] = {"--help", "-h", 0, ALL_VERBS},
    [O_VERSION] = {"--version", "-V", 0, ALL_VERBS},
    [O_STORE] = {"--store", NULL, 1, ALL_VERBS},
    [O_FORMAT] = {"--format", "-f", 1, STREAMS | ON(SUMMARY)},
    [O_OUTPUT] = {"--output", "-o", 1, STREAMS | ON(REPORT) | ON(RECOVER)},
    [O_FROM] = {"--from", NULL, 1, ON(REPLAY)},
    [O_TO] = {"--to", NULL, 1, ON(REPLAY) | ON(PUSH)}, /* push: the sink */
    [O_EVERY] = {"--every", NULL, 1, ON(REPLAY)},
    [O_LAST_N] = {"-n", NULL, 1, ON(TAIL)},
    [O_FD] = {"--fd", NULL, 1, ON(LIVE)},
    [O_VERBOSE] = {"--verbose", "-v", 0, ON(UPLOAD) | ON(PUSH) | ON(BUDGET)},
    [O_JSON] = {"--json", NULL, 0, ON(SUMMARY) | ON(RECOMMEND)},
    [O_SUMMARY] = {"--summary", NULL, 0, ON(LIVE)},
    [O_COMPACT] = {"--compact", NULL, 0, ON(DELETE)},
    [O_BEFORE] = {"--before", NULL, 1, ON(DELETE)},
    [O_QUIET] = {"--quiet", NULL, 0, ON(LIVE)},
    [O_JOB] = {"--job", NULL, 1, ANSWERS | ON(DELETE)},
    [O_LAST] = {"--last", NULL, 1, ANSWERS},
    [O_SERVERS] = {"--servers", NULL, 1, ON(RECOMMEND) | ON(REPORT)},
    [O_CSV_COLUMNS] = {"--csv-columns", NULL, 1, STREAMS | ON(UPLOAD) | ON(SINKS)},
    [O_ALL] = {"--all", NULL, 0, ON(TAIL)},
    [O_FAILED] = {"--failed", NULL, 0, ON(REPORT)},
    [O_CSV_MS] = {"--csv-ms", NULL, 0, ON(REPLAY)},
    [O_NO_WAIT] = {"--no-wait", NULL, 0, ON(TAIL)},
    [O_INTEGRATION] = {"--integration", NULL, 1, ON(REPORT)},
    [O_URL] = {"--url", NULL, 1, ON(PUSH)},
    [O_STAGE] = {"--stage", NULL, 1, ANSWERS},
    [O_EXT_RUN] = {"--external-run-id", NULL, 1, ANSWERS},
    [O_BRANCHES] = {"--branches", NULL, 1, ON(REPORT)},
    [O_JOB_ID] = {"--job-id", NULL, 1, ANSWERS | ON(RUNS)},
    [O_USER] = {"--user", NULL, 1, ANSWERS | ON(RUNS)},
    [O_SCHEDULER] = {"--scheduler", NULL, 1, ANSWERS | ON(RUNS)},
    [O_POD] = {"--pod", NULL, 1, ANSWERS | ON(RUNS)},
    [O_NAMESPACE] = {"--namespace", NULL, 1, ANSWERS | ON(RUNS)},
    [O_WAIT] = {"--wait", NULL, 1, ON(LEARN)},
    [O_SLURM_JOB] = {"--slurm-job", NULL, 1, ON(SUMMARY) | ON(RECOMMEND)},
};

static int need(int i, int argc, const char *opt)
{
	if (i + 1 >= argc) {
		rt_say("option %s needs a value (see rt-export --help)", opt);
		return -1;
	}
	return 0;
}

static int parse_u64(const char *s, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (!*s || *end || errno || s[0] == '-')
		return -1;
	*out = v;
	return 0;
}

/* --every: a bare number of samples, or a decimal time with s, m or h
 * (every_secs; 0 when a count). */
static int parse_every(const char *v, uint64_t *every, double *secs)
{
	*secs = 0;
	size_t n = strlen(v);
	char unit = n ? v[n - 1] : 0;
	if (unit != 's' && unit != 'm' && unit != 'h')
		return parse_u64(v, every) || *every == 0 ? -1 : 0;
	char num[32];
	if (n < 2 || n - 1 >= sizeof(num))
		return -1;
	memcpy(num, v, n - 1);
	num[n - 1] = '\0';
	int dot = 0;
	for (const char *c = num; *c; c++)
		if (*c == '.' ? dot++ : (*c < '0' || *c > '9'))
			return -1;
	double x = strtod(num, NULL);
	x *= unit == 'h' ? 3600 : unit == 'm' ? 60 : 1;
	if (!(x > 0) || x > 1e9)
		return -1;
	*secs = x;
	*every = 1;
	return 0;
}

/* A count option (--last, --branches, --servers, --wait) into a: 0, or
 * -1 with one line said. */
static int set_count(struct args *a, int id, const char *o, const char *v)
{
	uint64_t n;
	uint64_t most = id == O_BRANCHES ? 1000000 : id == O_WAIT ? 3600 : 1000;
	if (parse_u64(v, &n) || n == 0 || n > most) {
		rt_say("%s must be a number from 1 to %llu (got '%s')", o, (unsigned long long)most,
		       v);
		return -1;
	}
	if (id == O_LAST)
		a->ans.last = (unsigned long)n;
	else if (id == O_BRANCHES)
		a->ans.branches = (unsigned)n;
	else if (id == O_WAIT)
		a->wait_s = (unsigned)n;
	else
		a->ans.servers = (unsigned)n;
	return 0;
}

/* Take option id (o as given, v its value or NULL) into a: 0, 1 for
 * --help, -1 with one line said. */
static int set_option(struct args *a, int id, const char *o, const char *v)
{
	uint64_t n;
	switch ((enum opt_id)id) {
	case O_HELP: return 1;
	case O_VERSION: printf("rt-export %s\n", RT_VERSION); exit(0);
	case O_STORE: a->store = v; break;
	case O_FORMAT: a->format = v; break; /* checked once the verb is known */
	case O_OUTPUT: a->output = v; break;
	case O_FROM: a->from = v; break;
	case O_TO: a->to = v; break;
	case O_EVERY:
		if (parse_every(v, &a->every, &a->every_secs)) {
			rt_say("--every must be a number of samples (10) or a time (30s, "
			       "5m, 1h, "
			       "decimal) above 0 (got '%s')",
			       v);
			return -1;
		}
		break;
	case O_LAST_N:
		if (parse_u64(v, &a->last_n)) {
			rt_say("-n must be a number of samples (got '%s')", v);
			return -1;
		}
		break;
	case O_FD:
		if (parse_u64(v, &n) || n < 3 || n > 1024) {
			rt_say("--fd must be a descriptor number >= 3 (got '%s')", v);
			return -1;
		}
		a->fd = (int)n;
		break;
	case O_VERBOSE: a->verbose = 1; break;
	case O_JSON: a->ans.json = 1; break;
	case O_SUMMARY: a->summary = 1; break;
	case O_COMPACT: a->compact = 1; break;
	case O_BEFORE: a->before = v; break;
	case O_QUIET: a->quiet = 1; break;
	case O_FAILED: a->ans.failed = 1; break;
	case O_INTEGRATION: a->ans.integration = v; break;
	case O_CSV_MS: a->csv_ms = 1; break;
	case O_JOB: a->ans.job = v; break;
	case O_STAGE: a->ans.stage = v; break;
	case O_EXT_RUN: a->ans.ext_run = v; break;
	case O_JOB_ID: a->ans.job_id = v; break;
	case O_USER: a->ans.user = v; break;
	case O_SCHEDULER: a->ans.scheduler = v; break;
	case O_POD: a->ans.pod = v; break;
	case O_NAMESPACE: a->ans.ns = v; break;
	case O_SLURM_JOB: a->slurm_job = v; break;

	case O_LAST:
	case O_BRANCHES:
	case O_SERVERS:
	case O_WAIT: return set_count(a, id, o, v);
	case O_CSV_COLUMNS:
		if (rt_parse_csv_columns(v, &a->csv_extended)) {
			rt_say("--csv-columns must be reference or extended (got '%s')", v);
			return -1;
		}
		a->csv_set = 1;
		break;
	case O_ALL: a->all = 1; break;
	case O_NO_WAIT: a->no_wait = 1; break;
	case O_URL: a->url = v; break;
	case O_N: break;
	}
	return 0;
}

static int parse_args(int argc, char **argv, struct args *a)
{
	memset(a, 0, sizeof(*a));
	a->every = 1;
	a->last_n = 1;
	a->fd = -1;
	for (int i = 1; i < argc; i++) {
		const char *o = argv[i];
		int id = -1;
		for (int k = 0; k < O_N && id < 0 && o[0] == '-' && o[1]; k++)
			if (!strcmp(o, opts[k].name) ||
			    (opts[k].alias && !strcmp(o, opts[k].alias)))
				id = k;
		if (id < 0 && o[0] == '-' && o[1]) {
			rt_say("unknown option '%s' (see rt-export --help)", o);
			return -1;
		}
		if (id < 0) {
			if (!a->verb) {
				a->verb = o;
			} else if (!a->run) {
				a->run = o;
			} else {
				rt_say("unexpected argument '%s' (see rt-export --help)", o);
				return -1;
			}
			continue;
		}
		a->seen |= 1ull << id;
		if (opts[id].value && need(i, argc, o))
			return -1;
		const char *v = opts[id].value ? argv[++i] : NULL;
		int rc = set_option(a, id, o, v);
		if (rc)
			return rc;
	}
	if (!a->verb)
		return -2;
	return 0;
}

static int open_store(const struct args *a, struct rt_store **s)
{
	char dir[4096];
	if (rt_store_resolve_dir(a->store, dir, sizeof(dir))) {
		rt_say("no store directory: use --store DIR or set RT_STORE");
		return -1;
	}
	int rc = rt_store_open(dir, RT_STORE_RDONLY, s);
	if (rc == -ENOENT) {
		rt_say(
		    "no store at %s (record a run with resource-tracker first, or use --store DIR)",
		    dir);
		return -1;
	}
	if (rc == RT_E_CORRUPT) {
		rt_say(
		    "cannot open the store %s: it is damaged (its meta pages or the names of its "
		    "databases); nothing in it was changed. rt-export verify --store %s says "
		    "what is left",
		    dir, dir);
		return -1;
	}
	if (rc) {
		rt_say("cannot open the store %s: %s", dir,
		       rc == RT_E_UNSAFE ? rt_store_refusal() : rt_strerror(rc));
		return -1;
	}
	return 0;
}

/* The wait between looks for a store or a run that is not there yet. */
void cli_wait_a_moment(void)
{
	struct timespec t = {0, 100000000};
	nanosleep(&t, NULL);
}

void cli_say_waiting(const char *dir)
{
	static int said; /* once: for the store, then for its first run */
	if (!said++)
		rt_say("waiting for a run to be recorded in %s (Ctrl-C to stop; --no-wait: do not "
		       "wait)",
		       dir);
}

/* tail without a RUN, before any run was recorded: wait for the store to
 * be made (said once); then open_store opens it. */
static void wait_for_store(const struct args *a)
{
	char dir[4096], p[4200];
	struct stat st;
	if (rt_store_resolve_dir(a->store, dir, sizeof(dir)))
		return;
	snprintf(p, sizeof(p), "%s/data.mdb", dir);
	if (stat(p, &st) == 0 || errno != ENOENT)
		return;
	cli_say_waiting(dir);
	while (stat(p, &st) < 0 && errno == ENOENT)
		cli_wait_a_moment();
}

/* --to is inclusive at the precision written: "--to 10:00:05" keeps
 * samples taken during that second. */
int cli_parse_time_opt(const char *opt, const char *v, uint64_t *ns)
{
	uint64_t unit;
	if (!v)
		return 0;
	if (rt_parse_time_prec(v, ns, &unit)) {
		rt_say("%s: '%s' is not a time (use ISO 8601 like 2026-11-21T10:00:00Z, or epoch "
		       "seconds)",
		       opt, v);
		return -1;
	}
	if (!strcmp(opt, "--to"))
		*ns += unit - 1;
	return 0;
}

/* Report the end of a stream: output errors are said once, EPIPE is quiet. */
int cli_finish(struct rt_sink *k, int rc)
{
	int frc = rt_sink_flush(k);
	if (!rc)
		rc = frc;
	if (k->failed == EPIPE) {
		/* replay | head is normal; a live stream losing its reader is worth a line */
		if (k->line_flush && k->fd != 1)
			rt_say("output closed (broken pipe); the run is still being recorded, "
			       "replay it "
			       "with: rt-export replay latest");
		return 0;
	}
	if (k->failed == ETIMEDOUT) {
		rt_say("%s took nothing for 1 s (a FIFO or pipe nobody reads?); live output stops "
		       "here, the run is recorded: rt-export replay latest",
		       k->name);
		return 1;
	}
	if (k->failed) {
		rt_say("cannot write to %s: %s", k->name, strerror(k->failed));
		return 1;
	}
	if (rc) {
		if (rc != RT_E_LAYOUT) /* a newer layout has been said */
			rt_say("stopped: %s", rt_strerror(rc));
		return 1;
	}
	return 0;
}

static int verb_runs(const struct args *a, struct rt_store *s)
{
	return rt_cmd_runs(s, &a->ans) ? 1 : 0;
}

#ifdef RT_EXPORT_FULL
static int verb_show(const struct args *a, struct rt_store *s)
{
	return rt_cmd_show(s, a->run) ? 1 : 0;
}

static int verb_push(const struct args *a, struct rt_store *s)
{
	return rt_cmd_push(s, a->run, a->to, a->url, a->verbose);
}

static int verb_upload(const struct args *a, struct rt_store *s)
{
	return rt_cmd_upload(s, a->run, a->verbose, rt_run_allocation);
}

static int verb_sinks(const struct args *a, struct rt_store *s)
{
	(void)a;
	return rt_cmd_sinks(s, rt_run_allocation);
}
#endif

#ifdef RT_EXPORT_FULL
static int verb_discover(const struct args *a, struct rt_store *s)
{
	(void)s; /* only when asked: probes cloud metadata services */
	struct rt_cloud c;
	rt_cloud_discover(&c, 2000);
	char dir[4096], host_id[128];
	struct stat st;
	rt_host_id(host_id, sizeof(host_id)); /* remembered for summary, recommend, report */
	if (c.vendor[0] && !rt_store_resolve_dir(a->store, dir, sizeof(dir)) && !stat(dir, &st))
		rt_cloud_save(dir, host_id, &c);
	printf("{\"cloud_vendor_id\":%s%s%s,\"cloud_account_id\":%s%s%s,"
	       "\"cloud_region_id\":%s%s%s,\"cloud_zone_id\":%s%s%s,"
	       "\"cloud_instance_type\":%s%s%s}\n",
#define Q(x) x[0] ? "\"" : "", x[0] ? x : "null", x[0] ? "\"" : ""
	       Q(c.vendor), Q(c.account), Q(c.region), Q(c.zone), Q(c.instance_type));
#undef Q
	return 0;
}

#endif

#ifdef RT_EXPORT_FULL
/* summary, recommend, report: RUN or --job NAME */
static int verb_answer(const struct args *a, struct rt_store *s)
{
	struct rt_answer_opts o = a->ans;
	o.run = a->run;
	o.output = a->output;
	const char *v = a->verb;
	int report = a->id == V_REPORT;
	if (!o.job && !o.run && rt_run_who_set(&o)) { /* the runs of who ran them */
		o.job = o.job_id ? o.job_id
		        : o.user ? o.user
		        : o.pod  ? o.pod
		        : o.ns   ? o.ns
		                 : o.scheduler;
		o.any_name = 1;
	}
	if (!o.job == !o.run) {
		rt_say("%s needs a RUN, or --job NAME, --job-id ID, --user NAME, --pod NAME, "
		       "--namespace NS or --scheduler S (see rt-export runs)",
		       v);
		return 2;
	}
	if (report && o.job && o.servers) {
		rt_say("--servers is for the report of a run");
		return 2;
	}
	if ((o.last || o.stage || o.ext_run) && !o.job) {
		rt_say("%s goes with --job NAME", o.last    ? "--last N"
		                                  : o.stage ? "--stage NAME"
		                                            : "--external-run-id ID");
		return 2;
	}
	if (report)
		return rt_cmd_report(s, &o);
	return a->id == V_SUMMARY ? rt_cmd_summary(s, &o) : rt_cmd_recommend(s, &o);
}

/* rt-export budget RUN: the job against its budget, one line when it went
 * over; exit 3 then (the recorder's after a job with a budget). */
static int verb_budget(const struct args *a, struct rt_store *s)
{
	struct rt_answer ans;
	if (rt_answer_run(s, a->run, 0, &ans))
		return 1;
	char text[400];
	int over = 0;
	int has = rt_budget_text(&ans, text, sizeof(text), &over);
	rt_answer_free(&ans);
	if (!has) {
		if (a->verbose)
			rt_say("run %s set no budget, or has no samples", a->run);
		return 0;
	}
	if (over)
		rt_say("over budget: %s", text);
	else if (a->verbose)
		rt_say("within budget: %s", text);
	return over ? 3 : 0;
}
#endif

enum { NEEDS_RUN = 1, NO_STORE = 2 };

/* The verbs: dispatch and --help both read this table. */
static const struct verb {
	const char *name, *args, *help;
	unsigned flags;
	int (*run)(const struct args *a, struct rt_store *s);
} verbs[] = {
    [V_RUNS] = {"runs", "[--job-id ID] [--user NAME] [--pod NAME] [--namespace NS] [--scheduler S]",
                "list runs (id, start, end, duration, samples, status, job; a node's jobs also "
                "their job id and user), or those of a job id (an array's: all its tasks), a "
                "user, a pod, a namespace or a scheduler (slurm, kubernetes, systemd, podman, "
                "docker)",
                0, verb_runs},
    [V_VERIFY] = {"verify", "",
                  "read every run of the store (each in a process of its own) and say whether it "
                  "is intact, damaged from sample N, or unreadable; exit 1 when one is damaged",
                  NO_STORE, verb_verify},
    [V_RECOVER] = {"recover", "DIR [-o NEWDIR]",
                   "copy every intact run and sample of the store DIR (damaged or not) into a new "
                   "store (default DIR.recovered); DIR is only read",
                   NO_STORE, verb_recover},
    [V_SHOW] = {"show", "RUN", "print one run's metadata as JSON", NEEDS_RUN, FULL(verb_show)},
    [V_REPLAY] = {"replay",
                  "RUN [-f json|csv] [--from T] [--to T] [--every N|TIME] [--csv-ms] [-o FILE]",
                  "print a recorded run or a time range of it; --every N prints every Nth sample "
                  "(rates over N intervals; a bare number counts samples), --every 5m one line "
                  "per 5 minutes (s, m, h; rounded to whole intervals); --csv-ms: CSV "
                  "timestamps to the millisecond",
                  NEEDS_RUN, verb_stream},
    [V_TAIL] = {"tail", "[RUN] [-f json|csv] [-n N | --all] [--no-wait] [-o FILE]",
                "follow a live run (default: the newest one being recorded, or the next to start: "
                "--no-wait does not wait), starting with its last N samples (default 1)",
                0, verb_stream},
    [V_LIVE] =
        {"live", "RUN [-f json|csv] [-o FILE]",
         "stream a run from its first sample (used by the recorder; with --fd N it reads the "
         "recorder's pipe instead of the store)",
         NEEDS_RUN, verb_stream},
    [V_UPLOAD] =
        {"upload", "RUN [-v]",
         "stream a run to S3 through the Sentinel API (SENTINEL_API_TOKEN); resumes where a "
         "previous upload stopped; -v says when the run is finished on Sentinel",
         NEEDS_RUN, FULL(verb_upload)},
    [V_PUSH] = {"push", "RUN --to prometheus|otlp [--url URL] [-v]",
                "send a run's samples to a metrics engine by Prometheus remote write "
                "(TRACKER_REMOTE_WRITE_URL) or OTLP/HTTP JSON (OTEL_EXPORTER_OTLP_ENDPOINT); "
                "resumes where a previous push stopped; every sample reaches the engine once",
                NEEDS_RUN, FULL(verb_push)},
    [V_SUMMARY] =
        {"summary",
         "(RUN | --job NAME [SELECT] | --slurm-job ID) [--json | --format text|markdown|json]",
         "what the run needed: duration, exit status, CPU, memory, GPU, disk and network of the "
         "process tree and the host, the server allocation and the recommended resources; with "
         "--job, one row per stored run of that job and their aggregate; --format markdown "
         "for a ticket, a pull request or GITHUB_STEP_SUMMARY; --slurm-job ID: the answer the "
         "node's rt wrote into that Slurm job's own record, each node's (any user; no store)",
         0, FULL(verb_answer)},
    [V_BUDGET] = {"budget", "RUN [-v]",
                  "the job against its budget (resource-tracker --max-memory, --max-cpu): one "
                  "line and exit 3 when its peak memory or mean CPU went over; -v says it "
                  "when within too",
                  NEEDS_RUN, FULL(verb_budget)},
    [V_LEARN] = {"learn", "RUN [--wait S]",
                 "ask Slurm how the run's job ended (scontrol show job, else sacct; for up "
                 "to S seconds, default 120, while it is still ending) and add its state, exit "
                 "code, time limit, elapsed time and allocation to the run (\"scheduler\"), "
                 "then the run's answer into the job's own record (slurmdbd's AdminComment: "
                 "summary --slurm-job reads it); the node mode starts it at each Slurm job's end",
                 NEEDS_RUN, FULL(verb_learn)},
    [V_SINKS] = {"sinks", "",
                 "send every run the node mode names on descriptor 3 to the sinks the "
                 "environment sets (remote write, OTLP, Sentinel), in one process, each "
                 "exactly once (the node mode starts it; rt-export push and upload finish what "
                 "it leaves)",
                 0, FULL(verb_sinks)},
    [V_RECOMMEND] =
        {"recommend", "(RUN | --job NAME [SELECT] | --slurm-job ID) [--json] [--servers N]",
         "vCPUs, memory, GPUs and VRAM for the next run, from one run or from the job's history; "
         "with --external-run-id, the largest any one of the selected runs needs (the branches "
         "of one step: a Metaflow foreach's tasks); --servers N adds the N cheapest cloud "
         "servers that fit (Spare Cores Keeper API, TRACKER_KEEPER_URL) and what the run cost",
         0, FULL(verb_answer)},
    [V_REPORT] =
        {"report",
         "(RUN [--servers N] [--failed] [--integration NAME] [--branches N] | --job NAME "
         "[SELECT]) [-o FILE]",
         "write one self-contained HTML page (default rt-report-RUN.html) with the job, host, "
         "summary, recommendation and charts over time; it opens offline; --failed shows the "
         "run as failed (the caller's word: rt_tracker's report(status_failed=True)); "
         "--integration NAME says in its footer it was made from NAME (R, Metaflow); a run that "
         "is one branch of a step (the same job, --stage-name and --external-run-id as others) "
         "also gets the step's line, the largest any branch needs, and --branches N says how "
         "many the step has; with --job, "
         "the job's history (a row per run, trends of CPU, peak memory and duration, the "
         "recommendation from history; default rt-report-job-NAME.html)",
         0, FULL(verb_answer)},
    [V_DISCOVER] = {"discover", "",
                    "print the cloud vendor, account, region, zone and instance type (probes "
                    "metadata services for up to 2 s)",
                    NO_STORE, FULL(verb_discover)},
    [V_COMPACT] =
        {"compact", "",
         "rewrite the store without the space of deleted runs (LMDB keeps its file size); "
         "refused while a recorder or another rt-export has the store open",
         NO_STORE, verb_compact},
    [V_DELETE] =
        {"delete", "(RUN | --job NAME --before DATE) [--compact]",
         "delete a run, or a job's runs that started before DATE (a running run is refused); "
         "--compact then gives their space back",
         NO_STORE, verb_delete},
};
_Static_assert(RT_ARRAY_LEN(verbs) == V_N, "a verb for every verb_id");

/* Usage text from the verb table, wrapped at 80 columns. */
static void usage(FILE *f)
{
	fputs("Usage: rt-export [--store DIR] VERB [ARGS]\n"
	      "Reads runs recorded by resource-tracker (rt-recorder).\n\nVerbs:\n",
	      f);
	for (size_t i = 0; i < RT_ARRAY_LEN(verbs); i++) {
		const struct verb *v = &verbs[i];
		fprintf(f, "  %s%s%s\n", v->name, v->args[0] ? " " : "", v->args);
		const char *h = v->help;
		while (*h) { /* words onto lines of at most 72 columns, indented 6 */
			size_t n = strlen(h), cut = n;
			if (n > 72)
				for (cut = 72; cut > 0 && h[cut] != ' '; cut--)
					;
			if (cut == 0)
				cut = n > 72 ? 72 : n;
			fprintf(f, "      %.*s\n", (int)cut, h);
			h += cut;
			while (*h == ' ')
				h++;
		}
	}
	fputs(
	    "\nRUN is a run id or 'latest'. T is ISO 8601 (2026-11-21T10:00:00Z) or epoch "
	    "seconds.\n"
	    "SELECT picks the job's runs: [--stage NAME] (their --stage-name, a Metaflow step),\n"
	    "[--external-run-id ID] (of one run of the orchestrator), [--last N] (the newest N);\n"
	    "--job-id ID, --user NAME, --pod NAME, --namespace NS, --scheduler S pick runs by\n"
	    "who ran them, with --job or in its place.\n"
	    "--csv-columns extended (or TRACKER_CSV_COLUMNS=extended) appends the saturation,\n"
	    "pressure and cgroup columns to the 32 of CSV output (replay, tail, live, upload).\n"
	    "The store is --store DIR, else $RT_STORE, else $XDG_DATA_HOME/resource-tracker,\n"
	    "else ~/.local/share/resource-tracker. -o - writes to stdout.\n",
	    f);
}

#ifndef RT_EXPORT_FULL
/*
 * Become rt-export-full with the same arguments: the one next to this
 * executable (a build tree), else the installed one at RT_LIBEXEC_REL
 * relative to it. Returns only when there is none.
 */
static int exec_full(char **argv, const char *verb)
{
	char self[4096], path[4400];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0) {
		rt_say("cannot find rt-export-full, which carries out '%s' (/proc/self/exe: %s)",
		       verb, strerror(errno));
		return 1;
	}
	self[n] = '\0';
	const char *dir = dirname(self);
	const char *where[] = {"", "/" RT_LIBEXEC_REL};
	for (size_t i = 0; i < RT_ARRAY_LEN(where); i++) {
		snprintf(path, sizeof(path), "%s%s/rt-export-full", dir, where[i]);
		if (access(path, X_OK) == 0) {
			execv(path, argv);
			rt_say("cannot run %s, which carries out '%s': %s", path, verb,
			       strerror(errno));
			return 1;
		}
	}
	rt_say("'%s' is carried out by rt-export-full, which is not installed (looked in %s and "
	       "%s/%s); reinstall rt",
	       verb, dir, dir, RT_LIBEXEC_REL);
	return 1;
}
#endif

/*
 * What a verb printed must have reached stdout: a full disk or a closed
 * descriptor is an error (exit 1, one line); a reader that went away
 * (| head) ends quietly.
 */
static int stdout_done(int rc)
{
	errno = 0;
	if (fflush(stdout) == 0 && !ferror(stdout))
		return rc;
	int e = errno;
	if (e == EPIPE || rc)
		return rc; /* a reader gone; or the verb failed and said why */
	rt_say("cannot write the output: %s", e ? strerror(e) : "write error");
	return 1;
}

/* --format: summary's text, markdown or json; a stream's json or csv.
 * 0, or -1 with one line said. */
static int set_format(struct args *a)
{
	if (a->format && a->id == V_SUMMARY) {
		if (!strcmp(a->format, "json"))
			a->ans.json = 1;
		else if (!strcmp(a->format, "markdown"))
			a->ans.markdown = 1;
		else if (strcmp(a->format, "text")) {
			rt_say("summary --format must be text, markdown or json (got '%s')",
			       a->format);
			return -1;
		}
	} else if (a->format) {
		if (!strcmp(a->format, "json")) {
			a->fmt = RT_FMT_JSON;
		} else if (!strcmp(a->format, "csv")) {
			a->fmt = RT_FMT_CSV;
		} else {
			rt_say("--format must be json or csv (got '%s')", a->format);
			return -1;
		}
	}
	return 0;
}

/* Started by the recorder (live output, budget): lines carry the name of
 * the program the user ran (RT_SAY_AS, one of the recorder's two names). */
static void say_as_recorder(void)
{
	const char *as = getenv("RT_SAY_AS");
	if (as && (!strcmp(as, "resource-tracker") || !strcmp(as, "rt-recorder")))
		rt_say_as(as);
}

int main(int argc, char **argv)
{
	rt_std_fds();
	say_as_recorder();
	struct args a;
	int pr = parse_args(argc, argv, &a);
	if (pr == 1) {
		usage(stdout);
		return 0;
	}
	if (pr) {
		if (pr == -2)
			usage(stderr);
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	const char *cc = getenv("TRACKER_CSV_COLUMNS");
	if (!a.csv_set && cc && *cc && rt_parse_csv_columns(cc, &a.csv_extended))
		rt_say(
		    "TRACKER_CSV_COLUMNS='%s' is not reference or extended; the reference columns "
		    "are used",
		    cc);
	rt_emit_csv_columns(a.csv_extended | (a.csv_ms ? RT_CSV_MS : 0));
	const struct verb *v = NULL;
	for (size_t i = 0; i < RT_ARRAY_LEN(verbs); i++)
		if (!strcmp(verbs[i].name, a.verb))
			v = &verbs[i];
	if (!v) {
		char names[256] = "";
		for (size_t i = 0; i < RT_ARRAY_LEN(verbs); i++)
			snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s",
			         i ? ", " : "", verbs[i].name);
		rt_say("unknown verb '%s' (verbs: %s; see rt-export --help)", a.verb, names);
		return 2;
	}
	a.id = (enum verb_id)(v - verbs);
	for (int k = 0; k < O_N; k++)
		if ((a.seen >> k & 1) && !(opts[k].verbs & ON_ID(a.id))) {
			rt_say("%s does not take %s (see rt-export --help)", v->name, opts[k].name);
			return 2;
		}
	if (set_format(&a))
		return 2;
	int piped = a.fd >= 0;
#ifndef RT_EXPORT_FULL
	if (!v->run || a.summary)
		return exec_full(argv, v->name);
#endif
	if ((v->flags & NEEDS_RUN) && !a.run && !piped) {
		rt_say("%s needs a RUN (an id from 'rt-export runs', or 'latest')", v->name);
		return 2;
	}
#ifdef RT_EXPORT_FULL
	if (a.slurm_job) /* (from Slurm's record: no store) */
		return stdout_done(a.run ? (rt_say("--slurm-job takes no RUN"), 2)
		                         : verb_slurm_job(&a));
#endif
	struct rt_store *s = NULL;
	if (a.id == V_TAIL && !a.run && !a.no_wait && !piped)
		wait_for_store(&a);
	if (!(v->flags & NO_STORE) && !piped && open_store(&a, &s))
		return 1;
	/* runs whose recorder died: their last samples into the store, marked
	 * crashed, rings removed (the live printer's recorder is alive) */
	if (s && a.id != V_LIVE && a.id != V_SINKS) /* (a node's: its node salvages) */
		rt_salvage_dead_runs(s, NULL, NULL);
	int rc = v->run(&a, s);
	rt_store_close(s);
	return stdout_done(rc);
}
