/*
 * nodesinks.c - `rt-export sinks`: every run of a node sent to the sinks
 * the environment sets, in one process (the node mode starts it once,
 * beside its sampler, and names each run on its descriptor 3).
 *
 * The sinks are the ones a recorder starts for its own run: Prometheus
 * remote write (TRACKER_REMOTE_WRITE_URL), OTLP
 * (OTEL_EXPORTER_OTLP_[METRICS_]ENDPOINT) and the upload to S3 through
 * Sentinel (SENTINEL_API_TOKEN). Each run and sink is followed step by
 * step (push.h, upload.h) with the same checkpoints as `rt-export push`
 * and `upload`, so a run reaches each sink exactly once across this
 * process's restarts, and either command finishes what this one left.
 *
 * A run is named when it starts and again when it ends (or when the node
 * that records it starts this process anew: every live run again). Each
 * live run is looked at every STEP_S seconds, a named one at once. A sink
 * that fails waits out its backoff for every run at once (one line when
 * an outage starts, one when it ends): one that is down stops no other.
 * When the node closes the descriptor (it stops) every run is looked at
 * until each is done here (ended, or handed over to the node started
 * next), for at most DRAIN_S seconds; SIGTERM ends this process at once
 * (the checkpoints hold what was confirmed).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "export.h"
#include "rt/common.h"
#include "rt/runmeta.h"
#include "net/cloud.h"
#include "sink/push.h"
#include "sink/upload.h"

#define STEP_S 5    /* a live run's look: its lines are batched by 10 s */
#define REOPEN_S 30 /* a run whose sink could not open it: tried again, 1 s doubling to this */
#define DRAIN_S 10  /* after the node closed: the runs' ends sent */
#define MAX_BACKOFF 30
#define NSINKS 3

enum { S_PROM, S_OTLP, S_UPLOAD };

struct sink_state {
	const char *name;
	const char *what; /* its lines' subject */
	int on;
	uint64_t paused_until; /* an outage: no step before (monotonic ns) */
	double backoff;
	int outage; /* said: 1, or (the upload) 1 Sentinel's, 2 S3's */
};

struct nrun {
	uint64_t id;
	void *h[NSINKS];         /* its push or upload, NULL: not open (yet) */
	int done[NSINKS];        /* finished here (or given up) */
	uint64_t reopen[NSINKS]; /* a failed open: tried again then */
	unsigned tries[NSINKS];  /* its failed opens */
	uint64_t due;
};

struct nodesinks {
	struct rt_store *s;
	rt_allocation_fn allocation; /* the upload's finish names it */
	struct rt_cloud cloud;       /* asked once, at the first upload */
	int cloud_asked;
	struct sink_state sink[NSINKS];
	struct nrun *run;
	size_t n, cap;
	char line[64];
	size_t linelen;
	pid_t node; /* the node's sampler, this process's parent */
};

static volatile sig_atomic_t stop_now;

static void on_term(int sig)
{
	(void)sig;
	stop_now = 1;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int env_set(const char *name)
{
	const char *v = getenv(name);
	return v && *v;
}

/* The run named id, added when new; due at once. */
static void name_run(struct nodesinks *ns, uint64_t id)
{
	for (size_t i = 0; i < ns->n; i++)
		if (ns->run[i].id == id) {
			ns->run[i].due = 0;
			return;
		}
	if (ns->n == ns->cap) {
		size_t cap = ns->cap ? ns->cap * 2 : 64;
		struct nrun *p = realloc(ns->run, cap * sizeof(*p));
		if (!p) {
			rt_say("out of memory: run %llu is not sent (later: rt-export push or "
			       "upload %llu)",
			       (unsigned long long)id, (unsigned long long)id);
			return;
		}
		ns->run = p;
		ns->cap = cap;
	}
	ns->run[ns->n++] = (struct nrun){.id = id};
}

/* The run ids the node wrote ("ID\n" each); 0 at its end (closed). */
static int read_names(struct nodesinks *ns, int fd)
{
	char buf[4096];
	ssize_t got = read(fd, buf, sizeof(buf));
	if (got == 0 || (got < 0 && errno != EINTR && errno != EAGAIN))
		return 0;
	for (ssize_t i = 0; i < got; i++) {
		if (buf[i] != '\n') {
			if (ns->linelen + 1 < sizeof(ns->line))
				ns->line[ns->linelen++] = buf[i];
			continue;
		}
		ns->line[ns->linelen] = '\0';
		char *end;
		unsigned long long id = strtoull(ns->line, &end, 10);
		if (ns->linelen && !*end && id)
			name_run(ns, id);
		ns->linelen = 0;
	}
	return 1;
}

/* How far the run is, for its sinks, from its stored status (never a
 * reader's guess: the moment the node's sampler dies its rings' writer
 * is gone, and its runs would read as crashed until the next sampler
 * goes on with them): a node's run ends finished or killed, or crashed
 * (the node names a crashed run only once no node goes on with it:
 * nodeadopt.h); one its node handed over is gone on with by the node
 * started next (never finished here). Once the node is gone (this
 * process's parent: it dies with it), nothing is finished. */
static enum rt_sink_end run_end(struct nodesinks *ns, uint64_t id)
{
	char *meta;
	size_t len;
	struct rt_run_fields f;
	if (getppid() != ns->node) {
		stop_now = 1;
		return RT_SINK_HANDED;
	}
	if (rt_store_get_meta(ns->s, id, &meta, &len))
		return RT_SINK_HANDED; /* (deleted: nothing more to send) */
	int ok = rt_runmeta_read(meta, len, &f) == 0;
	free(meta);
	enum rt_run_status st = ok ? rt_run_status_of(f.status) : RT_RUN_UNKNOWN;
	if (st == RT_RUN_RUNNING || st == RT_RUN_UNKNOWN)
		return RT_SINK_LIVE;
	return f.has_resume && f.resume.handover ? RT_SINK_HANDED : RT_SINK_ENDED;
}

static void *open_sink(struct nodesinks *ns, int k, uint64_t id, int *rc)
{
	if (k == S_UPLOAD && !ns->cloud_asked++)
		rt_upload_cloud(ns->s, &ns->cloud);
	if (k == S_UPLOAD)
		return rt_upload_run_open(ns->s, id, ns->allocation, &ns->cloud, rc);
	return rt_push_run_open(ns->s, id, k == S_PROM ? "prometheus" : "otlp", rc);
}

static void close_sink(int k, void *h)
{
	if (k == S_UPLOAD)
		rt_upload_run_close(h);
	else
		rt_push_run_close(h);
}

/* The requests that went through, of the service an outage is of (the
 * upload's are Sentinel's and S3's: one back is not the other). */
static uint64_t sink_oks(const struct sink_state *k, int i, const void *h)
{
	return i == S_UPLOAD ? rt_upload_run_oks(h, k->outage) : rt_push_run_oks(h);
}

/* A push that failed: its sink waits (backoff, doubling to 30 s), one
 * line when an outage starts. */
static void sink_failed(struct sink_state *k, const char *why, int outage)
{
	k->backoff = k->backoff ? k->backoff * 2 : 0.5;
	if (k->backoff > MAX_BACKOFF)
		k->backoff = MAX_BACKOFF;
	k->paused_until = mono_ns() + (uint64_t)(k->backoff * 1e9);
	if (!k->outage)
		rt_say("%s failed (%s); every run waits and is sent once it answers", k->what, why);
	if (!k->outage)
		k->outage = outage;
}

static void sink_ok(struct sink_state *k)
{
	if (k->outage)
		rt_say("%s succeeded again", k->what);
	k->outage = 0;
	k->backoff = 0;
}

/* One sink's step of one run: opened first (again after REOPEN_S when it
 * could not be), done when it says so or gives up. */
static void step_sink(struct nodesinks *ns, struct nrun *r, int k, enum rt_sink_end end)
{
	struct sink_state *sk = &ns->sink[k];
	uint64_t now = mono_ns();
	if (r->done[k] || sk->paused_until > now)
		return;
	if (!r->h[k]) {
		int rc = 0;
		if (r->reopen[k] > now)
			return;
		if (!(r->h[k] = open_sink(ns, k, r->id, &rc))) {
			/* (a lock the dead sampler's exporter held a moment ago) */
			unsigned s = r->tries[k] < 5 ? 1u << r->tries[k]++ : REOPEN_S;
			r->reopen[k] = now + (s < REOPEN_S ? s : REOPEN_S) * 1000000000ull;
			r->done[k] = rc == 2; /* (a setting: never better later) */
			return;
		}
	}
	uint64_t oks = sink_oks(sk, k, r->h[k]);
	int rc = k == S_UPLOAD ? rt_upload_run_step(r->h[k], end) : rt_push_run_step(r->h[k], end);
	if (sink_oks(sk, k, r->h[k]) > oks) /* (a request went through) */
		sink_ok(sk);
	if (rc == RT_E_NET && k == S_UPLOAD) {
		sink_failed(sk, rt_upload_run_answer(r->h[k]),
		            rt_upload_run_failed_s3(r->h[k]) ? 2 : 1);
		return;
	}
	if (rc == RT_E_NET || (rc == RT_E_HTTP && k != S_UPLOAD)) {
		long st;
		const char *why = rt_push_run_answer(r->h[k], &st);
		if (rc == RT_E_NET) {
			char code[256];
			if (st)
				snprintf(code, sizeof(code), "HTTP %ld: %s", st, why);
			else
				snprintf(code, sizeof(code), "no answer: %s", why);
			sink_failed(sk, code, 1);
			return;
		}
		rt_say("%s refused samples of run %llu (HTTP %ld: %s); later: rt-export push %llu "
		       "--to %s",
		       sk->name, (unsigned long long)r->id, st, why, (unsigned long long)r->id,
		       sk->name);
	}
	if (rc < 0 && rc != RT_E_HTTP && rc != -EPROTO) /* (the others are said) */
		rt_say("%s of run %llu stopped: %s; later: rt-export %s %llu", sk->what,
		       (unsigned long long)r->id, rt_strerror(rc),
		       k == S_UPLOAD ? "upload" : "push", (unsigned long long)r->id);
	if (rc != 0) { /* done, or given up (said) */
		close_sink(k, r->h[k]);
		r->h[k] = NULL;
		r->done[k] = 1;
	}
}

/* Every run that is due looked at by every sink; the ones done
 * everywhere forgotten. */
static void step_runs(struct nodesinks *ns, int all)
{
	uint64_t now = mono_ns();
	size_t keep = 0;
	for (size_t i = 0; i < ns->n; i++) {
		struct nrun *r = &ns->run[i];
		if (!stop_now && (all || r->due <= now)) {
			enum rt_sink_end end = run_end(ns, r->id);
			for (int k = 0; k < NSINKS; k++)
				if (ns->sink[k].on)
					step_sink(ns, r, k, end);
			r->due = now + STEP_S * 1000000000ull;
		}
		int left = 0;
		for (int k = 0; k < NSINKS; k++)
			left |= ns->sink[k].on && !r->done[k];
		if (left)
			ns->run[keep++] = *r;
	}
	ns->n = keep;
}

/* Until the node closes its end: names read, runs stepped when due. */
static void follow(struct nodesinks *ns, int fd)
{
	int open = 1;
	while (open && !stop_now) {
		uint64_t now = mono_ns(), next = now + 1000000000ull;
		for (size_t i = 0; i < ns->n; i++)
			if (ns->run[i].due < next)
				next = ns->run[i].due;
		int ms = next > now ? (int)((next - now) / 1000000u) + 1 : 0;
		struct pollfd p = {.fd = fd, .events = POLLIN};
		if (poll(&p, 1, ms) > 0)
			open = read_names(ns, fd);
		step_runs(ns, 0);
	}
}

/* The node closed (it stopped): every run to its end here, bounded. */
static void drain(struct nodesinks *ns)
{
	uint64_t until = mono_ns() + DRAIN_S * 1000000000ull;
	while (ns->n && !stop_now && mono_ns() < until) {
		step_runs(ns, 1);
		if (ns->n) {
			struct timespec ts = {0, 200000000};
			nanosleep(&ts, NULL);
		}
	}
	for (size_t i = 0; i < ns->n; i++)
		rt_say("run %llu was not sent to the end before the node stopped; the node "
		       "started next goes on with it (or: rt-export push/upload %llu)",
		       (unsigned long long)ns->run[i].id, (unsigned long long)ns->run[i].id);
}

int rt_cmd_sinks(struct rt_store *s, rt_allocation_fn allocation)
{
	int fd = 3;
	if (fcntl(fd, F_GETFD) < 0) {
		rt_say("rt-export sinks follows the runs the node mode names on its descriptor 3: "
		       "it is started by resource-tracker --jobs");
		return 2;
	}
	static struct nodesinks ns;
	memset(&ns, 0, sizeof(ns));
	ns.s = s;
	ns.allocation = allocation;
	ns.node = getppid();
	ns.sink[S_PROM] = (struct sink_state){.name = "prometheus",
	                                      .what = "the push to prometheus",
	                                      .on = env_set("TRACKER_REMOTE_WRITE_URL")};
	ns.sink[S_OTLP] =
	    (struct sink_state){.name = "otlp",
	                        .what = "the push to otlp",
	                        .on = env_set("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT") ||
	                              env_set("OTEL_EXPORTER_OTLP_ENDPOINT")};
	ns.sink[S_UPLOAD] = (struct sink_state){.name = "Sentinel",
	                                        .what = "the upload (Sentinel, S3)",
	                                        .on = rt_sentinel_token() != NULL};
	struct sigaction sa = {.sa_handler = on_term};
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	follow(&ns, fd);
	drain(&ns);
	for (size_t i = 0; i < ns.n; i++)
		for (int k = 0; k < NSINKS; k++)
			if (ns.run[i].h[k])
				close_sink(k, ns.run[i].h[k]);
	free(ns.run);
	return 0;
}
