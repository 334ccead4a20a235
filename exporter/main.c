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
enum verb_id {
	V_RUNS,
	V_VERIFY,
	V_RECOVER,
	V_SHOW,
	V_REPLAY,
	V_TAIL,
	V_LIVE,
	V_UPLOAD,
	V_PUSH,
	V_SUMMARY,
	V_RECOMMEND,
	V_REPORT,
	V_DISCOVER,
	V_COMPACT,
	V_DELETE,
	V_BUDGET,
	V_N
};
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
	O_N
};
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
    [O_CSV_COLUMNS] = {"--csv-columns", NULL, 1, STREAMS | ON(UPLOAD)},
    [O_ALL] = {"--all", NULL, 0, ON(TAIL)},
    [O_FAILED] = {"--failed", NULL, 0, ON(REPORT)},
    [O_CSV_MS] = {"--csv-ms", NULL, 0, ON(REPLAY)},
    [O_NO_WAIT] = {"--no-wait", NULL, 0, ON(TAIL)},
    [O_INTEGRATION] = {"--integration", NULL, 1, ON(REPORT)},
    [O_URL] = {"--url", NULL, 1, ON(PUSH)},
};

struct args {
	const char *store, *verb, *run, *output, *from, *to;
	enum verb_id id; /* of verb, once it is known */
	unsigned seen;   /* options given, by opt_id */
	enum rt_format fmt;
	uint64_t every, last_n;
	double every_secs; /* --every with a unit: a time, made samples per run */
	int all;
	int no_wait; /* tail: no live run is no wait for one */
	int fd;      /* live --fd N: the recorder's stream (-1: none) */
	int verbose;
	int summary, quiet; /* live: the summary after the last line; no lines */
	int csv_extended, csv_set;
	int csv_ms; /* replay --csv-ms: CSV timestamps to the millisecond */
	struct rt_answer_opts ans;
	const char *before; /* delete --before T */
	const char *url;    /* push --url URL (its --to is the sink) */
	const char *format; /* -f: json|csv (streams), text|markdown|json (summary) */
	int compact;        /* delete --compact */
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
	case O_LAST:
	case O_SERVERS:
		if (parse_u64(v, &n) || n == 0 || n > 1000) {
			rt_say("%s must be a number from 1 to 1000 (got '%s')", o, v);
			return -1;
		}
		if (id == O_LAST)
			a->ans.last = (unsigned long)n;
		else
			a->ans.servers = (unsigned)n;
		break;
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
		a->seen |= 1u << id;
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
static void wait_a_moment(void)
{
	struct timespec t = {0, 100000000};
	nanosleep(&t, NULL);
}

static void say_waiting(const char *dir)
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
	say_waiting(dir);
	while (stat(p, &st) < 0 && errno == ENOENT)
		wait_a_moment();
}

/* --to is inclusive at the precision written: "--to 10:00:05" keeps
 * samples taken during that second. */
static int parse_time_opt(const char *opt, const char *v, uint64_t *ns)
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
static int finish(struct rt_sink *k, int rc)
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
	(void)a;
	return rt_cmd_runs(s) ? 1 : 0;
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
#endif

/* The store without its free pages; nothing else may have it open. */
static int verb_verify(const struct args *a, struct rt_store *s)
{
	(void)s; /* each run is read by a process of its own */
	char dir[4096];
	if (rt_store_resolve_dir(a->store, dir, sizeof(dir))) {
		rt_say("no store directory: use --store DIR or set RT_STORE");
		return 1;
	}
	return rt_cmd_verify(dir);
}

static int verb_recover(const struct args *a, struct rt_store *s)
{
	(void)s;
	if (!a->run) {
		rt_say("recover needs the damaged store's directory: rt-export recover DIR [-o "
		       "NEWDIR]");
		return 2;
	}
	return rt_cmd_recover(a->run, a->output);
}

static int verb_compact(const struct args *a, struct rt_store *s)
{
	(void)s; /* opened by rt_store_compact itself, after the checks */
	char dir[4096];
	if (rt_store_resolve_dir(a->store, dir, sizeof(dir))) {
		rt_say("no store directory: use --store DIR or set RT_STORE");
		return 1;
	}
	uint64_t before = 0, after = 0;
	long user = 0;
	int rc = rt_store_compact(dir, &before, &after, &user);
	if (rc == RT_E_BUSY) {
		if (user)
			rt_say("the store %s is open in process %ld (a recorder, or rt-export); "
			       "compact it when nothing uses it",
			       dir, user);
		else
			rt_say("a recorder is writing to the store %s (or another compact runs); "
			       "compact it when the run is over",
			       dir);
		return 1;
	}
	if (rc) {
		rt_say("cannot compact the store %s: %s", dir,
		       rc == RT_E_CORRUPT
		           ? "it is damaged and is left as it is; see what can be read "
		             "with rt-export verify, and copy it with rt-export recover"
		           : rt_strerror(rc));
		return 1;
	}
	printf("compacted %s: %.1f MiB -> %.1f MiB\n", dir, (double)before / 1048576.0,
	       (double)after / 1048576.0);
	return 0;
}

struct del_ctx {
	struct rt_store *s;
	const char *job;
	uint64_t before_ns, one;
	uint64_t *ids;
	size_t n, cap;
	int refused, oom;
};

/* Runs to delete: the one asked for, or the job's runs that started before
 * the date; a running run is refused (its recorder still writes it). */
static int del_cb(void *vctx, uint64_t run, const char *meta, size_t len)
{
	struct del_ctx *c = vctx;
	struct rt_run_fields f;
	if (rt_runmeta_read(meta, len, &f))
		return 0;
	if (c->one ? run != c->one
	           : !f.has_job_name || strcmp(f.job_name, c->job) || f.start_ns >= c->before_ns)
		return 0;
	if (rt_run_status_of(f.status) == RT_RUN_RUNNING) {
		rt_say("run %llu is still running: not deleted (delete it when it has ended)",
		       (unsigned long long)run);
		c->refused++;
		return 0;
	}
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 16;
		uint64_t *p = realloc(c->ids, cap * sizeof(*p));
		if (!p) {
			c->oom = 1;
			return 1;
		}
		c->ids = p;
		c->cap = cap;
	}
	c->ids[c->n++] = run;
	return 0;
}

/* A deleted run's upload state goes with it: removed in the store's upload
 * directory as walked and checked (never through another user's link). */
static void forget_upload_state(const char *dir, uint64_t run)
{
	char why[512], name[64];
	int ufd = rt_own_subdir_open(dir, "upload", 0, why, sizeof(why));
	if (ufd < 0)
		return;
	snprintf(name, sizeof(name), "%llu.json", (unsigned long long)run);
	unlinkat(ufd, name, 0);
	close(ufd);
}

/* rt-export delete (RUN | --job NAME --before T) [--compact] */
static int verb_delete(const struct args *a, struct rt_store *none)
{
	(void)none; /* deleting needs a writer's handle: opened here */
	struct del_ctx c = {.job = a->ans.job};
	if (!a->run && !(a->ans.job && a->before)) {
		rt_say("delete needs a RUN, or --job NAME --before DATE");
		return 2;
	}
	if (a->before && parse_time_opt("--before", a->before, &c.before_ns))
		return 2;
	char dir[4096];
	if (rt_store_resolve_dir(a->store, dir, sizeof(dir)))
		return 1;
	int rc = rt_store_open(dir, RT_STORE_RDWR, &c.s);
	if (rc && rc != RT_E_CORRUPT) {
		rt_say("cannot open the store %s for writing: %s", dir,
		       rc == RT_E_UNSAFE ? rt_store_refusal() : rt_strerror(rc));
		return 1;
	}
	/* deleting changes pages of runs long written: each one is looked at
	 * first, and a damaged store is left as it is (opening it found the
	 * damage already when its databases cannot be found) */
	if (rc || (rc = rt_store_check_pages(c.s))) {
		rt_say(
		    "the store %s is damaged (%s); nothing was deleted. See what can be read with "
		    "rt-export verify, and copy it with rt-export recover %s -o NEWDIR",
		    dir,
		    !c.s                 ? "its meta pages or main database"
		    : rc == RT_E_CORRUPT ? rt_store_last_error(c.s)
		                         : rt_strerror(rc),
		    dir);
		rt_store_close(c.s);
		return 1;
	}
	rt_salvage_dead_runs(c.s, NULL, NULL); /* a killed recorder's run is not running */
	if (a->run) {
		struct rt_runinfo ri;
		if (rt_run_resolve(c.s, a->run, &ri)) {
			rt_store_close(c.s);
			return 1;
		}
		c.one = ri.id;
		rt_run_free(&ri);
	}
	rt_store_list_runs(c.s, del_cb, &c);
	int ret = c.oom || c.refused ? 1 : 0;
	for (size_t i = 0; i < c.n; i++) {
		if ((rc = rt_store_delete_run(c.s, c.ids[i]))) {
			rt_say("cannot delete run %llu: %s", (unsigned long long)c.ids[i],
			       rt_strerror(rc));
			ret = 1;
			continue;
		}
		forget_upload_state(dir, c.ids[i]);
		printf("deleted run %llu\n", (unsigned long long)c.ids[i]);
	}
	if (!c.n && !c.refused && !c.oom)
		printf("no run of job %s started before %s\n", a->ans.job ? a->ans.job : "-",
		       a->before ? a->before : "-");
	free(c.ids);
	rt_store_close(c.s);
	if (a->compact && c.n && verb_compact(a, NULL))
		ret = 1;
	return ret;
}

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

/*
 * Append the Markdown summary to GITHUB_STEP_SUMMARY without ever holding
 * up the job's exit: a FIFO nobody reads, one that stays full or a full
 * device costs at most a second and one line.
 */
static void write_step_summary(const char *gh, const struct rt_answer *ans)
{
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);
	if (!m)
		return;
	rt_print_step_summary(m, ans);
	if (fclose(m)) {
		free(text);
		return;
	}
	int fd = open(gh, O_WRONLY | O_APPEND | O_CREAT | O_NONBLOCK | O_CLOEXEC | O_NOCTTY, 0644);
	int rc = fd < 0 ? -errno : rt_write_all(fd, text, len, 1000);
	if (fd >= 0 && close(fd) < 0 && rc == 0 && errno != EINTR)
		rc = -errno;
	if (rc)
		rt_say("cannot write the step summary %s: %s", gh,
		       rc == -ENXIO    ? "a FIFO with no reader"
		       : rc == -EAGAIN ? "nothing read it within 1 s"
		                       : strerror(-rc));
	free(text);
}

/* live --summary: after the last line, the run's summary on stderr, from
 * its final metadata (the store's, or the stream's last) and the lines. */
/* The summary on stderr, and in GitHub Actions where people read it: the
 * job's page (TRACKER_STEP_SUMMARY=0 keeps it off). */
static void say_summary(const struct rt_answer *ans)
{
	fflush(stdout);
	rt_print_summary(stderr, ans);
	fflush(stderr);
	const char *gh = getenv("GITHUB_STEP_SUMMARY"), *opt = getenv("TRACKER_STEP_SUMMARY");
	if (gh && *gh && !(opt && !strcmp(opt, "0")))
		write_step_summary(gh, ans);
}

static void print_live_summary(struct rt_store *s, const struct rt_runinfo *ri,
                               const struct rt_buf *stream_meta, struct rt_series *ser)
{
	struct rt_runinfo fresh = {0};
	const char *mj = stream_meta->len ? stream_meta->p : NULL;
	size_t ml = stream_meta->len;
	if (!mj && s && rt_run_load(s, ri->id, &fresh) == 0 && fresh.meta_json) {
		mj = fresh.meta_json;
		ml = strlen(mj);
	}
	if (!mj && ri->meta_json) {
		mj = ri->meta_json;
		ml = strlen(mj);
	}
	struct rt_answer ans;
	if (mj && rt_answer_from_series(mj, ml, ser, &ans) == 0) {
		say_summary(&ans);
		rt_answer_free(&ans);
	} else {
		rt_say("no summary: the run's metadata cannot be read");
	}
	rt_run_free(&fresh);
}

/* The same, of the run as stored, read when it ends. */
static void print_stored_summary(struct rt_store *s, uint64_t run)
{
	char spec[32];
	struct rt_answer ans;
	snprintf(spec, sizeof(spec), "%llu", (unsigned long long)run);
	/* the step summary's charts need the series itself */
	const char *gh = getenv("GITHUB_STEP_SUMMARY"), *opt = getenv("TRACKER_STEP_SUMMARY");
	int charts = gh && *gh && !(opt && !strcmp(opt, "0"));
	if (rt_answer_run(s, spec, charts, &ans) == 0) {
		say_summary(&ans);
		rt_answer_free(&ans);
	}
}
#endif

/* replay --every: a number of samples, or a time (the samples it spans,
 * at least 1). */
static uint64_t replay_every(const struct args *a, const struct rt_runinfo *ri)
{
	if (!(a->every_secs > 0))
		return a->every;
	/* rounded to the nearest by hand: nearbyint() alone would link libm
	 * into the live printer (~170 KiB of PSS) */
	double n = a->every_secs / (ri->interval > 0 ? ri->interval : 1.0) + 0.5;
	return !(n >= 1) ? 1 : n > 1e12 ? 1000000000000ull : (uint64_t)n;
}

/* A whole run replayed that lacks samples its metadata names: damaged. */
static void say_missing_samples(const struct rt_runinfo *ri, uint64_t lines)
{
	struct rt_run_fields f;
	if (ri->meta_json && rt_runmeta_read(ri->meta_json, strlen(ri->meta_json), &f) == 0 &&
	    f.has_last_seq && !f.samples_not_stored && lines < f.last_seq)
		rt_say("run %llu: %llu of its %llu samples are missing from the store (it is "
		       "damaged): see rt-export verify",
		       (unsigned long long)ri->id, (unsigned long long)(f.last_seq - lines),
		       (unsigned long long)f.last_seq);
}

/* No samples in --from/--to: say when the run ran instead of nothing. */
static void say_out_of_range(const struct rt_runinfo *ri)
{
	char s0[32], s1[32];
	rt_fmt_iso8601(s0, sizeof(s0), ri->start_ns);
	if (ri->end_ns)
		rt_fmt_iso8601(s1, sizeof(s1), ri->end_ns);
	rt_say("run %llu has no samples in that range: it ran from %s to %s",
	       (unsigned long long)ri->id, s0, ri->end_ns ? s1 : "now (still running)");
}

/* replay: the run's lines within --from/--to, --every samples a line. */
static int stream_replay(const struct args *a, struct rt_emitter *e, const struct rt_runinfo *ri,
                         uint64_t from_ns, uint64_t to_ns)
{
	uint64_t every = replay_every(a, ri);
	struct rt_replay_opts o = {from_ns, to_ns, every};
	int r = rt_replay(e, &o);
	if ((r == 0 || r == RT_E_CORRUPT) && !from_ns && !to_ns && every == 1)
		say_missing_samples(ri, e->lines);
	if (r == RT_E_RANGE)
		say_out_of_range(ri);
	return r;
}

/* tail: where to start, --all from the first sample, else the last N.
 * The store takes samples in groups, a few seconds behind the ring: the
 * run's newest sample is the ring's. */
static uint64_t tail_start(const struct args *a, struct rt_store *s, const struct rt_runinfo *ri,
                           int all)
{
	uint64_t first = 0, last = 0, start = 1;
	int known = rt_store_seq_bounds(s, ri->id, &first, &last) == 0;
	char rpath[4096];
	struct rt_ring *rg;
	rt_ring_path(rpath, sizeof(rpath), rt_store_ring_key(s), ri->id);
	if (rt_ring_open(rpath, &rg) == 0) {
		uint64_t head = rt_ring_head(rg);
		if (head > 0 && head - 1 > last) {
			last = head - 1;
			known = 1;
		}
		rt_ring_close(rg, 0);
	}
	if (known) {
		start = all ? first + 1 : last + 1 > a->last_n ? last + 1 - a->last_n : 1;
		if (start <= first)
			start = first + 1;
	}
	return start;
}

/* The output closed: kept when all went well (a reader that left, EPIPE,
 * is no failure), else discarded. The exit code. */
static int close_output(struct rt_sink *k, int rc)
{
	int r;
	if (rc) {
		rt_sink_discard(k);
	} else if ((r = rt_sink_close(k)) != 0 && r != -EPIPE) {
		rt_say("cannot write to %s: %s", k->name, strerror(-r));
		rc = 1;
	}
	return rc;
}

/* tail without a RUN: the newest live run, or, as `tail -F` waits for its
 * file, the next one to start (said once on stderr; --no-wait: none is an
 * error). *waited: it started after tail did, so all of it is shown. */
static int newest_live(const struct args *a, struct rt_store *s, struct rt_runinfo *ri, int *waited)
{
	if (a->no_wait)
		return rt_run_newest_live(s, ri, 0);
	if (rt_run_newest_live(s, ri, 1) == 0)
		return 0;
	say_waiting(rt_store_dir(s));
	*waited = 1;
	while (rt_run_newest_live(s, ri, 1))
		wait_a_moment();
	return 0;
}

/* replay, tail and live: records become lines through one emitter. */
static int verb_stream(const struct args *a, struct rt_store *s)
{
	int live = a->id == V_LIVE, replay = a->id == V_REPLAY;
	uint64_t from_ns = 0, to_ns = 0;
	if (parse_time_opt("--from", a->from, &from_ns) || parse_time_opt("--to", a->to, &to_ns))
		return 2;
	if (live) /* Ctrl-C reaches the whole group: the recorder decides when we stop */
		signal(SIGINT, SIG_IGN), signal(SIGQUIT, SIG_IGN), signal(SIGHUP, SIG_IGN);
	struct rt_runinfo ri = {.interval = 1.0};
	int r = 0, waited = 0;
	if (a->fd < 0)
		r = (a->id == V_TAIL && !a->run) ? newest_live(a, s, &ri, &waited)
		                                 : rt_run_resolve(s, a->run, &ri);
	if (r)
		return 1;
	struct rt_sink k;
	char why[512];
	r = rt_sink_open(&k, a->output, live ? 2 : 1, replay ? 0 : 1, why, sizeof(why));
	if (r) {
		rt_say("cannot open the output file %s: %s (choose another with -o FILE)",
		       a->output, why);
		rt_run_free(&ri);
		return 1;
	}
	struct rt_emitter e;
	if (rt_emitter_init(&e, s, &ri, a->fmt, &k)) {
		rt_say("out of memory");
		rt_sink_discard(&k);
		rt_run_free(&ri);
		return 1;
	}
#ifdef RT_EXPORT_FULL
	struct rt_series ser = {0};
	struct rt_buf last_meta = {0};
	/* the recorder's --summary: from the store at the end when there is
	 * one (the printer's memory stays flat however long the run), else
	 * (the recorder's pipe) the lines are collected as numbers too */
	int sum_store = a->summary && a->fd < 0 && s;
	if (a->summary && !sum_store) {
		e.observe = rt_series_observe;
		e.observe_ctx = &ser;
		e.last_meta = &last_meta;
	}
#endif
	if (a->quiet)
		e.sink = NULL;
	r = a->fd >= 0 ? rt_follow_stream(&e, a->fd)
	    : replay   ? stream_replay(a, &e, &ri, from_ns, to_ns)
	    : live     ? rt_follow(&e, 1)
	               : rt_follow(&e, tail_start(a, s, &ri, a->all || waited));
	if (replay && r == RT_E_RANGE) { /* said */
#ifdef RT_EXPORT_FULL
		rt_series_free(&ser);
		rt_buf_free(&last_meta);
#endif
		rt_emitter_free(&e);
		rt_sink_discard(&k);
		rt_run_free(&ri);
		return 1;
	}
	int rc = finish(&k, r);
	rt_say_read_notes(&e.notes, e.run, e.lines);
	/* a followed run whose recorder died unfinished: said above, and not 0 */
	if (!rc && a->id == V_TAIL && (e.notes.stopped || e.notes.gone))
		rc = 1;
#ifdef RT_EXPORT_FULL
	if (sum_store)
		print_stored_summary(s, ri.id);
	else if (a->summary)
		print_live_summary(s, &ri, &last_meta, &ser);
	rt_series_free(&ser);
	rt_buf_free(&last_meta);
#endif
	rt_emitter_free(&e);
	rc = close_output(&k, rc);
	rt_run_free(&ri);
	return rc;
}

#ifdef RT_EXPORT_FULL
/* summary, recommend, report: RUN or --job NAME */
static int verb_answer(const struct args *a, struct rt_store *s)
{
	struct rt_answer_opts o = a->ans;
	o.run = a->run;
	o.output = a->output;
	const char *v = a->verb;
	int report = a->id == V_REPORT;
	if (!o.job == !o.run) {
		rt_say("%s needs a RUN or --job NAME (see rt-export runs)", v);
		return 2;
	}
	if (report && o.job && o.servers) {
		rt_say("--servers is for the report of a run");
		return 2;
	}
	if (o.last && !o.job) {
		rt_say("--last N goes with --job NAME");
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
    [V_RUNS] = {"runs", "", "list runs (id, start, end, duration, samples, status, job)", 0,
                verb_runs},
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
        {"summary", "(RUN | --job NAME [--last N]) [--json | --format text|markdown|json]",
         "what the run needed: duration, exit status, CPU, memory, GPU, disk and network of the "
         "process tree and the host, the server allocation and the recommended resources; with "
         "--job, one row per stored run of that job and their aggregate; --format markdown "
         "for a ticket, a pull request or GITHUB_STEP_SUMMARY",
         0, FULL(verb_answer)},
    [V_BUDGET] = {"budget", "RUN [-v]",
                  "the job against its budget (resource-tracker --max-memory, --max-cpu): one "
                  "line and exit 3 when its peak memory or mean CPU went over; -v says it "
                  "when within too",
                  NEEDS_RUN, FULL(verb_budget)},
    [V_RECOMMEND] =
        {"recommend", "(RUN | --job NAME [--last N]) [--json] [--servers N]",
         "vCPUs, memory, GPUs and VRAM for the next run, from one run or from the job's history; "
         "--servers N adds the N cheapest cloud servers that fit (Spare Cores Keeper API, "
         "TRACKER_KEEPER_URL) and what the run cost",
         0, FULL(verb_answer)},
    [V_REPORT] =
        {"report",
         "(RUN [--servers N] [--failed] [--integration NAME] | --job NAME [--last N]) [-o FILE]",
         "write one self-contained HTML page (default rt-report-RUN.html) with the job, host, "
         "summary, recommendation and charts over time; it opens offline; --failed shows the "
         "run as failed (the caller's word: rt_tracker's report(status_failed=True)); "
         "--integration NAME says in its footer it was made from NAME (R, Metaflow); with --job, "
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
	fputs("\nRUN is a run id or 'latest'. T is ISO 8601 (2026-11-21T10:00:00Z) or epoch "
	      "seconds.\n"
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

int main(int argc, char **argv)
{
	rt_std_fds();
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
	rt_csv_extended = a.csv_extended | (a.csv_ms ? RT_CSV_MS : 0);
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
	struct rt_store *s = NULL;
	if (a.id == V_TAIL && !a.run && !a.no_wait && !piped)
		wait_for_store(&a);
	if (!(v->flags & NO_STORE) && !piped && open_store(&a, &s))
		return 1;
	/* runs whose recorder died: their last samples into the store, marked
	 * crashed, rings removed (the live printer's recorder is alive) */
	if (s && a.id != V_LIVE)
		rt_salvage_dead_runs(s, NULL, NULL);
	int rc = v->run(&a, s);
	rt_store_close(s);
	return stdout_done(rc);
}
