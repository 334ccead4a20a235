/*
 * runs.c - run lookup and the `runs` verb.
 *
 * A run whose metadata still says "running" but whose recorder no longer
 * holds its ring is shown as "crashed", unless its recorder ended it and
 * could not store the end (a full disk): then its final metadata waits
 * beside the ring (<ring>.meta, salvage.c), and its status is that one.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "export.h"
#include "rt/common.h"
#include "rt/ring.h"
#include "rt/runmeta.h"
#include "rt/salvage.h"

int rt_run_recorder_alive(struct rt_store *s, uint64_t run)
{
	char path[4096];
	struct rt_ring *r;
	if (rt_ring_path(path, sizeof(path), rt_store_ring_key(s), run) || rt_ring_open(path, &r))
		return 0;
	int alive = rt_ring_state(r) == RT_RING_RUNNING && rt_ring_writer_alive(r);
	rt_ring_close(r, 0);
	return alive;
}

/* The status in the final metadata a recorder that could not write its
 * store left beside the run's ring; 0, or -1 when there is none. */
static int waiting_status(struct rt_store *s, uint64_t run, char *out, size_t cap)
{
	char path[4096], fin[65536];
	struct rt_run_fields f;
	if (rt_ring_path(path, sizeof(path), rt_store_ring_key(s), run) ||
	    rt_salvage_read_side_meta(path, fin, sizeof(fin), &f) < 0 || !f.status[0])
		return -1;
	snprintf(out, cap, "%s", f.status);
	return 0;
}

int rt_runinfo_from_meta(const char *json, size_t len, struct rt_runinfo *ri)
{
	struct rt_run_fields f;
	memset(ri, 0, sizeof(*ri));
	ri->interval = 1.0;
	if (rt_runmeta_read(json, len, &f))
		return RT_E_CORRUPT;
	ri->meta_json = strndup(json, len);
	snprintf(ri->status, sizeof(ri->status), "%s", f.status[0] ? f.status : "unknown");
	if (f.has_job_name)
		ri->job_name = strdup(f.job_name);
	ri->tracked_pid = f.tracked_pid;
	ri->interval = f.interval_secs;
	ri->start_ns = f.start_ns;
	ri->end_ns = f.end_ns;
	ri->has_exit_code = f.has_exit_code;
	ri->exit_code = f.exit_code;
	return 0;
}

/* Fill ri from stored metadata of run id. */
static int parse_meta(struct rt_store *s, uint64_t id, const char *json, struct rt_runinfo *ri)
{
	int rc = rt_runinfo_from_meta(json, strlen(json), ri);
	ri->id = id;
	if (rc)
		return rc;
	if (rt_run_status_of(ri->status) == RT_RUN_RUNNING && !rt_run_recorder_alive(s, id) &&
	    waiting_status(s, id, ri->status, sizeof(ri->status)))
		snprintf(ri->status, sizeof(ri->status), "%s", rt_run_status_name(RT_RUN_CRASHED));
	return 0;
}

void rt_run_free(struct rt_runinfo *ri)
{
	free(ri->job_name);
	free(ri->meta_json);
	ri->job_name = ri->meta_json = NULL;
}

int rt_run_load(struct rt_store *s, uint64_t id, struct rt_runinfo *ri)
{
	char *meta;
	size_t len;
	int rc = rt_store_get_meta(s, id, &meta, &len);
	if (rc)
		return rc;
	rc = parse_meta(s, id, meta, ri);
	free(meta);
	return rc;
}

struct last_ctx {
	uint64_t id;
	int live_only;
	struct rt_store *s;
};

static int last_cb(void *vctx, uint64_t run, const char *meta, size_t len)
{
	struct last_ctx *c = vctx;
	struct rt_run_fields f;
	if (c->live_only &&
	    (rt_runmeta_read(meta, len, &f) || rt_run_status_of(f.status) != RT_RUN_RUNNING ||
	     !rt_run_recorder_alive(c->s, run)))
		return 0;
	c->id = run;
	return 0;
}

int rt_run_resolve(struct rt_store *s, const char *spec, struct rt_runinfo *ri)
{
	uint64_t id = 0;
	if (!strcmp(spec, "latest")) {
		struct last_ctx c = {0, 0, s};
		rt_store_list_runs(s, last_cb, &c);
		if (!c.id) {
			rt_say("the store %s has no runs yet (record one with resource-tracker)",
			       rt_store_dir(s));
			return RT_E_NOTFOUND;
		}
		id = c.id;
	} else {
		char *end;
		errno = 0;
		unsigned long long v = strtoull(spec, &end, 10);
		if (!*spec || *end || errno || v == 0) {
			rt_say(
			    "'%s' is not a run id (use a number from 'rt-export runs' or 'latest')",
			    spec);
			return RT_E_SYNTAX;
		}
		id = v;
	}
	int rc = rt_run_load(s, id, ri);
	if (rc == RT_E_NOTFOUND)
		rt_say("run %llu not found in %s (try rt-export runs)", (unsigned long long)id,
		       rt_store_dir(s));
	else if (rc)
		rt_say("run %llu in %s cannot be read: %s", (unsigned long long)id, rt_store_dir(s),
		       rt_strerror(rc));
	return rc;
}

int rt_run_newest_live(struct rt_store *s, struct rt_runinfo *ri, int quiet)
{
	struct last_ctx c = {0, 1, s};
	rt_store_list_runs(s, last_cb, &c);
	if (!c.id) {
		if (!quiet)
			rt_say(
			    "no run is being recorded in %s (start one with resource-tracker, or "
			    "name a run: rt-export tail RUN)",
			    rt_store_dir(s));
		return RT_E_NOTFOUND;
	}
	return rt_run_load(s, c.id, ri);
}

static void fmt_duration(char *buf, size_t cap, uint64_t ns)
{
	uint64_t s = ns / 1000000000ull;
	if (s >= 3600)
		snprintf(buf, cap, "%lluh%02llum%02llus", (unsigned long long)(s / 3600),
		         (unsigned long long)(s / 60 % 60), (unsigned long long)(s % 60));
	else if (s >= 60)
		snprintf(buf, cap, "%llum%02llus", (unsigned long long)(s / 60),
		         (unsigned long long)(s % 60));
	else
		snprintf(buf, cap, "%.1fs", (double)ns / 1e9);
}

/* The run's live ring, or NULL (finished, or never had one). */
static struct rt_ring *live_ring(struct rt_store *s, uint64_t run)
{
	char path[4096];
	struct rt_ring *r = NULL;
	if (rt_ring_path(path, sizeof(path), rt_store_ring_key(s), run) || rt_ring_open(path, &r))
		return NULL;
	if (rt_ring_run_id(r) != run) {
		rt_ring_close(r, 0);
		return NULL;
	}
	return r;
}

/* Wall time of a sample (stored, or still only in the live ring), 0 if
 * unreadable. */
uint64_t rt_run_sample_wall(struct rt_store *s, uint64_t run, uint64_t seq)
{
	struct rt_recbuf r;
	size_t len;
	uint64_t wall = 0;
	if (rt_recbuf_init(&r))
		return 0;
	int rc = rt_store_get_sample(s, run, seq, r.buf, rt_record_max_size(), &len);
	if (rc) {
		struct rt_ring *ring = live_ring(s, run);
		if (ring) {
			rc = rt_ring_read(ring, seq, r.buf, rt_record_max_size(), &len) == 0 && len
			         ? 0
			         : -1;
			rt_ring_close(ring, 0);
		}
	}
	if (rc == 0 && rt_recbuf_set(&r, r.buf, len) == 0 && r.rec.h->seq == seq)
		wall = r.rec.h->wall_ns;
	rt_recbuf_free(&r);
	return wall;
}

int rt_run_bounds(struct rt_store *s, uint64_t run, uint64_t *first, uint64_t *last)
{
	int rc = rt_store_seq_bounds(s, run, first, last);
	if (rc && rc != RT_E_NOTFOUND)
		return rc;
	struct rt_ring *ring = live_ring(s, run);
	uint64_t head = ring ? rt_ring_head(ring) : 0;
	if (ring)
		rt_ring_close(ring, 0);
	if (head && (rc || head - 1 > *last)) {
		if (rc)
			*first = 0; /* nothing stored yet: the ring holds it all */
		*last = head - 1;
		return 0;
	}
	return rc;
}

struct list_ctx {
	struct rt_store *s;
	int n;
	char damaged[256]; /* ids of runs whose samples are missing */
	const struct rt_answer_opts *o;
	int who; /* the store holds jobs known by their cgroups: their id, user */
};

int rt_run_who_set(const struct rt_answer_opts *o)
{
	return o && (o->job_id || o->user || o->scheduler || o->pod || o->ns);
}

int rt_run_who_matches(const struct rt_answer_opts *o, const char *meta, size_t len)
{
	struct rt_run_fields f;
	if (!rt_run_who_set(o))
		return 1;
	if (rt_runmeta_read(meta, len, &f))
		return 0;
	if (o->job_id && strcmp(f.cg_job_id, o->job_id) && strcmp(f.cg_array_job, o->job_id))
		return 0;
	if (o->user && strcmp(f.cg_user, o->user))
		return 0;
	if ((o->pod && strcmp(f.cg_pod, o->pod)) || (o->ns && strcmp(f.cg_ns, o->ns)))
		return 0;
	return !o->scheduler || !strcmp(f.cg_scheduler, o->scheduler);
}

/* Whether any run is a job known by its cgroup (the columns then shown). */
static int who_cb(void *vctx, uint64_t run, const char *meta, size_t len)
{
	struct rt_run_fields f;
	(void)run;
	if (rt_runmeta_read(meta, len, &f) == 0 && f.cg_job_id[0])
		*(int *)vctx = 1;
	return 0;
}

static int list_cb(void *vctx, uint64_t run, const char *meta, size_t len)
{
	struct list_ctx *c = vctx;
	struct rt_runinfo ri;
	if (!rt_run_who_matches(c->o, meta, len))
		return 0;
	if (parse_meta(c->s, run, meta, &ri)) {
		printf("%-6llu (unreadable metadata)\n", (unsigned long long)run);
		rt_run_free(&ri);
		return 0;
	}
	uint64_t first = 0, last = 0, samples = 0, end = ri.end_ns;
	int have = rt_run_bounds(c->s, run, &first, &last) == 0;
	/* a finished run that names its last sample but lacks it is damaged */
	struct rt_run_fields f;
	int fields = rt_runmeta_read(meta, len, &f) == 0;
	if (!fields)
		memset(&f, 0, sizeof(f));
	if (fields && f.has_last_seq && !f.samples_not_stored && (!have || last != f.last_seq)) {
		size_t n = strlen(c->damaged);
		if (n + 24 < sizeof(c->damaged))
			snprintf(c->damaged + n, sizeof(c->damaged) - n, "%s%llu", n ? ", " : "",
			         (unsigned long long)run);
	}
	if (have) {
		samples = last - first;
		if (!end)
			end = rt_run_sample_wall(c->s, run, last);
	}
	char start_s[32] = "-", end_s[32] = "-", dur[32] = "-";
	if (ri.start_ns)
		rt_fmt_iso8601(start_s, sizeof(start_s), ri.start_ns);
	if (end && rt_run_status_of(ri.status) != RT_RUN_RUNNING)
		rt_fmt_iso8601(end_s, sizeof(end_s), end);
	if (end > ri.start_ns && ri.start_ns)
		fmt_duration(dur, sizeof(dur), end - ri.start_ns);
	char job[1024], status[64], id[200] = "", user[140] = "";
	rt_fmt_printable(job, sizeof(job), ri.job_name ? ri.job_name : "-");
	rt_fmt_printable(status, sizeof(status), ri.status);
	if (c->who) {
		rt_fmt_printable(id, sizeof(id), f.cg_job_id[0] ? f.cg_job_id : "-");
		rt_fmt_printable(user, sizeof(user), f.cg_user[0] ? f.cg_user : "-");
		printf("%-6llu %-20s %-20s %10s %8llu  %-9s %-10s %-10s %s\n",
		       (unsigned long long)run, start_s, end_s, dur, (unsigned long long)samples,
		       status, id, user, job);
	} else {
		printf("%-6llu %-20s %-20s %10s %8llu  %-9s %s\n", (unsigned long long)run, start_s,
		       end_s, dur, (unsigned long long)samples, status, job);
	}
	c->n++;
	rt_run_free(&ri);
	return 0;
}

int rt_cmd_runs(struct rt_store *s, const struct rt_answer_opts *o)
{
	struct list_ctx c = {s, 0, "", o, 0};
	rt_store_list_runs(s, who_cb, &c.who);
	if (c.who) /* the node mode's store: each job's id and user too */
		printf("%-6s %-20s %-20s %10s %8s  %-9s %-10s %-10s %s\n", "ID", "START", "END",
		       "DURATION", "SAMPLES", "STATUS", "JOBID", "USER", "JOB");
	else
		printf("%-6s %-20s %-20s %10s %8s  %-9s %s\n", "ID", "START", "END", "DURATION",
		       "SAMPLES", "STATUS", "JOB");
	int rc = rt_store_list_runs(s, list_cb, &c);
	if (c.damaged[0])
		rt_say("samples are missing from run%s %s (the store is damaged): see rt-export "
		       "verify",
		       strchr(c.damaged, ',') ? "s" : "", c.damaged);
	if (rc == RT_E_CORRUPT)
		rt_say("the store is damaged: %s; the runs above are those that can be read (what "
		       "is left: rt-export verify; a copy: rt-export recover)",
		       rt_store_last_error(s));
	/* a damaged store is not the whole answer: exit 1, as verify */
	return rc < 0 ? rc : c.damaged[0] ? RT_E_CORRUPT : 0;
}
