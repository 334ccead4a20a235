/*
 * stream_verb.c - the verbs that print samples: replay, tail and live
 * (the recorder's printer), with --summary after the last line and the
 * job's step summary.
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
#include "rt/safefile.h"
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

#ifdef RT_EXPORT_FULL
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
	char why[512] = "";
	int fd = rt_open_append_out(gh, 0644, why, sizeof(why));
	int rc = fd < 0 ? fd : rt_write_all(fd, text, len, 1000);
	if (fd >= 0 && close(fd) < 0 && rc == 0 && errno != EINTR)
		rc = -errno;
	if (rc)
		rt_say("cannot write the step summary %s: %s", gh,
		       fd < 0 && why[0] ? why
		       : rc == -ENXIO   ? "a FIFO with no reader"
		       : rc == -EAGAIN  ? "nothing read it within 1 s"
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
	cli_say_waiting(rt_store_dir(s));
	*waited = 1;
	while (rt_run_newest_live(s, ri, 1))
		cli_wait_a_moment();
	return 0;
}

/* replay, tail and live: records become lines through one emitter. */
int verb_stream(const struct args *a, struct rt_store *s)
{
	int live = a->id == V_LIVE, replay = a->id == V_REPLAY;
	uint64_t from_ns = 0, to_ns = 0;
	if (cli_parse_time_opt("--from", a->from, &from_ns) ||
	    cli_parse_time_opt("--to", a->to, &to_ns))
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
	int rc = cli_finish(&k, r);
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
