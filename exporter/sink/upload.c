/*
 * upload.c - `rt-export upload RUN`: stream a run to S3 through Sentinel.
 *
 * Start the Sentinel run (once: its id is checkpointed), then every
 * TRACKER_UPLOAD_INTERVAL from the run's start gzip the samples not yet
 * confirmed into one batch object keyed by its first seq, PUT it with
 * SigV4, and advance the checkpoint only after S3 confirmed. A live run's
 * samples come from its ring (the store commits every 30 s), the rest from
 * the store. A crash before the checkpoint moved re-sends the batch under
 * the same key, so the bucket holds every sample exactly once. When the run
 * has ended and everything is confirmed, call finish (the S3 URIs, or the
 * CSV inline for a run shorter than one interval) and exit 0. Failures are
 * retried without limit with exponential backoff and jitter, one warning
 * per outage.
 */
#define _GNU_SOURCE
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sink/batch.h"
#include "sink/upload.h"
#include "net/cloud.h"
#include "export.h"
#include "net/net.h"
#include "rt/common.h"
#include "rt/sysroot.h"
#include "rt/config.h"
#include "rt/ring.h"
#include "rt/runmeta.h"

static uint64_t now_ns(int mono)
{
	struct timespec ts;
	clock_gettime(mono ? CLOCK_MONOTONIC : CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct retry {
	int failures;
	int outage; /* a warning was printed for this outage */
	const char *what;
	uint64_t *defer; /* stepped: the monotonic time of the next try goes
	                    here instead of a sleep (NULL: sleep), and the
	                    caller says the outage (once for every run) */
	int failed;      /* stepped: a try failed since the caller looked */
	uint64_t oks;    /* tries that succeeded */
	char why[200];   /* stepped: why */
};

/* Wait before the next attempt: 0.5 s doubling to 30 s, with jitter. */
static void backoff(struct retry *r, const char *why)
{
	if (r->defer) {
		snprintf(r->why, sizeof(r->why), "%s: %s", r->what, why);
		r->failed = 1;
	} else if (!r->outage) {
		rt_say("%s failed (%s); retrying until it succeeds", r->what, why);
		r->outage = 1;
	}
	double d = 0.5;
	for (int i = 0; i < r->failures && d < 30; i++)
		d *= 2;
	if (d > 30)
		d = 30;
	d *= 0.5 + (double)random() / RAND_MAX / 2;
	r->failures++;
	if (r->defer) {
		*r->defer = now_ns(1) + (uint64_t)(d * 1e9);
		return;
	}
	struct timespec ts = {(time_t)d, (long)((d - (double)(time_t)d) * 1e9)};
	nanosleep(&ts, NULL);
}

static void recovered(struct retry *r)
{
	r->oks++;
	if (r->outage && !r->defer)
		rt_say("%s succeeded again", r->what);
	r->failures = r->outage = 0;
}

/* No answer, a server error, a timeout or "slow down": try again. A 4xx
 * refusal or an unusable 2xx is a configuration matter: retrying would
 * only register new runs or hammer the server. */
static int retryable(int rc, const struct rt_net_result *res)
{
	if (rc == RT_E_NET)
		return 1;
	return rc == RT_E_HTTP && (res->status >= 500 || res->status == 408 || res->status == 429);
}

/* TRACKER_UPLOAD_INTERVAL: seconds between batches, validated like --interval. */
static double upload_interval(void)
{
	const char *iv = getenv("TRACKER_UPLOAD_INTERVAL");
	double v;
	if (!iv || !*iv)
		return 60.0;
	if (rt_config_parse_interval(iv, &v)) {
		rt_say(
		    "warning: TRACKER_UPLOAD_INTERVAL='%s' is not a number of seconds from %g to "
		    "%g; using 60",
		    iv, RT_INTERVAL_MIN, RT_INTERVAL_MAX);
		return 60.0;
	}
	return v;
}

/* Whether the user asked not to send a field (TRACKER_SUPPRESS_FIELDS, a
 * comma-separated list such as "host_ip,host_hostname"). */
static int suppressed(const char *field)
{
	const char *v = getenv("TRACKER_SUPPRESS_FIELDS");
	size_t n = strlen(field);
	for (const char *p = v; p && *p;) {
		size_t len = strcspn(p, ", ");
		if (len == n && !strncmp(p, field, n))
			return 1;
		p += len;
		p += strspn(p, ", ");
	}
	return 0;
}

/* Add a host field from the run's host object, or null. */
static void host_field(cJSON *b, const char *field, const cJSON *h, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(h, key);
	if (suppressed(field) || !(cJSON_IsString(v) || cJSON_IsNumber(v)))
		cJSON_AddNullToObject(b, field);
	else
		cJSON_AddItemToObject(b, field, cJSON_Duplicate(v, 0));
}

static void cloud_field(cJSON *b, const char *field, const char *v)
{
	if (v[0] && !suppressed(field))
		cJSON_AddStringToObject(b, field, v);
	else
		cJSON_AddNullToObject(b, field);
}

/* The start body: metadata, tags, command, host (reference.md §4). */
static char *start_body(const struct rt_runinfo *ri, const struct rt_cloud *cloud)
{
	cJSON *m = cJSON_Parse(ri->meta_json), *b = cJSON_CreateObject();
	const cJSON *md = cJSON_GetObjectItemCaseSensitive(m, "metadata"), *it;
	cJSON_ArrayForEach(it, md)
	{
		if (cJSON_IsString(it))
			cJSON_AddStringToObject(b, it->string, it->valuestring);
	}
	cJSON *tags = cJSON_GetObjectItemCaseSensitive(m, "tags");
	cJSON_AddItemToObject(b, "tags", tags ? cJSON_Duplicate(tags, 1) : cJSON_CreateArray());
	const cJSON *cmd = cJSON_GetObjectItemCaseSensitive(m, "command");
	if (cJSON_IsArray(cmd)) {
		char *s = cJSON_PrintUnformatted(cmd);
		cJSON_AddStringToObject(b, "command", s ? s : "[]");
		free(s);
	}
	const cJSON *h = cJSON_GetObjectItemCaseSensitive(m, "host");
	host_field(b, "host_id", h, "host_id");
	host_field(b, "host_hostname", h, "hostname");
	host_field(b, "host_ip", h, "ip");
	host_field(b, "host_vcpus", h, "vcpus");
	host_field(b, "host_cpu_model", h, "cpu_model");
	host_field(b, "host_memory_mib", h, "memory_mib");
	host_field(b, "host_storage_gb", h, "storage_gb");
	cloud_field(b, "cloud_vendor_id", cloud->vendor);
	cloud_field(b, "cloud_account_id", cloud->account);
	cloud_field(b, "cloud_region_id", cloud->region);
	cloud_field(b, "cloud_zone_id", cloud->zone);
	cloud_field(b, "cloud_instance_type", cloud->instance_type);
	host_field(b, "host_gpu_model", h, "gpu_model");
	const cJSON *gc = cJSON_GetObjectItemCaseSensitive(h, "gpu_count");
	if (cJSON_IsNumber(gc) && gc->valuedouble > 0) {
		host_field(b, "host_gpu_count", h, "gpu_count");
		host_field(b, "host_gpu_memory_mib", h, "gpu_memory_mib");
	} else { /* no GPU: null, as the reference sends */
		cJSON_AddNullToObject(b, "host_gpu_count");
		cJSON_AddNullToObject(b, "host_gpu_memory_mib");
	}
	/* no reliable signal for dedicated vs shared hosts yet */
	cJSON_AddNullToObject(b, "host_server_allocation");
	char *s = cJSON_PrintUnformatted(b);
	cJSON_Delete(b);
	cJSON_Delete(m);
	return s;
}

/* The finish body; inline CSV when nothing reached S3. */
static int finish_body(struct rt_store *st, const struct rt_runinfo *ri,
                       const struct rt_checkpoint *cp, rt_allocation_fn allocation,
                       struct rt_buf *out)
{
	cJSON *b = cJSON_CreateObject();
	int code = ri->has_exit_code ? ri->exit_code : 0;
	cJSON_AddNumberToObject(b, "exit_code", code);
	int ok = rt_run_status_of(ri->status) == RT_RUN_FINISHED && code == 0;
	cJSON_AddStringToObject(b, "run_status",
	                        rt_run_status_name(ok ? RT_RUN_FINISHED : RT_RUN_FAILED));
	char when[32];
	rt_fmt_iso8601(when, sizeof(when), ri->end_ns ? ri->end_ns : now_ns(0));
	cJSON_AddStringToObject(b, "finished_at", when);
	/* known only now that the run is over: the same rule as summary */
	const char *alloc = allocation ? allocation(st, ri) : NULL;
	if (alloc)
		cJSON_AddStringToObject(b, "host_server_allocation", alloc);
	else
		cJSON_AddNullToObject(b, "host_server_allocation");
	if (cp->nuris) {
		cJSON_AddStringToObject(b, "data_source", "s3");
		cJSON *u = cJSON_AddArrayToObject(b, "data_uris");
		for (size_t i = 0; i < cp->nuris; i++)
			cJSON_AddItemToArray(u, cJSON_CreateString(cp->uris[i]));
	} else {
		struct rt_sink k = {.fd = -1, .memory = 1};
		struct rt_emitter e;
		if (rt_emitter_init(&e, st, ri, RT_FMT_CSV, &k) == 0) {
			rt_replay_range(&e, 1, UINT64_MAX);
			rt_emitter_free(&e);
		}
		cJSON_AddStringToObject(b, "data_source", "inline");
		cJSON_AddStringToObject(b, "data_csv", k.buf.p ? k.buf.p : "");
		rt_buf_free(&k.buf);
	}
	char *s = cJSON_PrintUnformatted(b);
	cJSON_Delete(b);
	if (!s)
		return -ENOMEM;
	int rc = rt_gzip(s, strlen(s), out);
	free(s);
	return rc;
}

/* Whether the recorder may still add samples to the run. */
static int still_recording(struct rt_store *s, struct rt_runinfo *ri)
{
	struct rt_runinfo fresh;
	char spec[32];
	snprintf(spec, sizeof(spec), "%llu", (unsigned long long)ri->id);
	if (rt_run_resolve(s, spec, &fresh) == 0) {
		rt_run_free(ri);
		*ri = fresh;
	}
	return rt_run_status_of(ri->status) == RT_RUN_RUNNING;
}

/* The run's live ring, when its recorder still has one (else NULL). */
static void open_ring(struct rt_store *s, const struct rt_runinfo *ri, struct rt_ring **ring)
{
	char path[4096];
	if (!*ring && (rt_ring_path(path, sizeof(path), rt_store_ring_key(s), ri->id) != 0 ||
	               rt_ring_open(path, ring) != 0 || rt_ring_run_id(*ring) != ri->id)) {
		if (*ring)
			rt_ring_close(*ring, 0);
		*ring = NULL;
	}
}

/*
 * The newest sample there is: the ring's head while the recorder publishes
 * (a live run's samples are there long before the store commits them),
 * else what the store holds (a run that ended, a killed recorder's salvage).
 * 0 when there is none yet.
 */
static int newest_sample(struct rt_store *s, const struct rt_runinfo *ri, struct rt_ring *ring,
                         uint64_t *last)
{
	uint64_t first = 0, stored = 0;
	int have = rt_store_seq_bounds(s, ri->id, &first, &stored) == 0;
	uint64_t head = ring ? rt_ring_head(ring) : 0;
	if (head > 0 && (!have || head - 1 > stored)) {
		*last = head - 1;
		return 1;
	}
	*last = stored;
	return have;
}

/*
 * Sleep until the next batch is due (due_ns on the monotonic clock; 0: due
 * now, but there is nothing new yet) or the run ends. With the run's ring,
 * the recorder wakes us when it publishes (when a batch is due) or
 * finishes; without one, look again every 200 ms. At most 5 s, then the
 * caller looks at the run again.
 */
static void wait_for_batch(struct rt_store *s, const struct rt_runinfo *ri, struct rt_ring **ring,
                           uint64_t due_ns)
{
	uint64_t now = now_ns(1);
	uint64_t ns = due_ns > now ? due_ns - now : 1000000000ull;
	if (ns > 5000000000ull)
		ns = 5000000000ull;
	open_ring(s, ri, ring);
	if (*ring && rt_ring_state(*ring) == RT_RING_RUNNING) {
		if (due_ns)
			rt_ring_wait_end(*ring, ns);
		else /* due: the next sample is what we wait for */
			rt_ring_wait(*ring, rt_ring_head(*ring), ns);
		return;
	}
	if (ns > 200000000ull)
		ns = 200000000ull;
	struct timespec ts = {(time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull)};
	nanosleep(&ts, NULL);
}

/* The token goes into a header and the URLs into every request: whole, or
 * not at all (one line; the run stays in the store to upload once fixed). */
static int upload_env_ok(void)
{
	const char *t = getenv("SENTINEL_API_TOKEN");
	return rt_env_value_ok(t && *t ? "SENTINEL_API_TOKEN" : "SENTINEL_API_KEY",
	                       RT_SENTINEL_TOKEN_MAX) &&
	       rt_env_value_ok("SENTINEL_API_URL", RT_SENTINEL_URL_MAX) &&
	       rt_env_value_ok("TRACKER_S3_ENDPOINT", RT_SENTINEL_URL_MAX);
}

/* One run's upload: what rt_cmd_upload's steps share. */
struct upload {
	struct rt_store *s;
	int verbose;
	rt_allocation_fn allocation;
	char base[RT_SENTINEL_URL_MAX + 1]; /* SENTINEL_API_URL, no trailing / */
	struct rt_sentinel api;
	const char *endpoint; /* TRACKER_S3_ENDPOINT, or NULL: AWS */
	const char *region;
	struct rt_runinfo ri;
	int lockfd;
	int udfd;                /* <store>/upload, held open: the checkpoint and its lock */
	struct rt_checkpoint cp; /* what is done: restartable, exactly once */
	struct rt_net_result res;
	struct retry r_api, r_s3;
	uint64_t ival_ns, next_due; /* batches: every interval from the run's start */
	int put_any;
	uint64_t wait_until;          /* stepped: no try before this (monotonic), 0: now */
	const struct rt_cloud *cloud; /* stepped: the cloud, asked once for every run */
	char why[200];                /* stepped: the last failure (rt_upload_run_answer) */
	int started;                  /* stepped: the run started on Sentinel, its grid set */
	struct rt_ring *ring;
	struct rt_buf gz, key, uri;
};

/* Sentinel's token and URL: 0, or the exit code with its one line said. */
static int upload_api(struct upload *u, const char *spec)
{
	const char *token = rt_sentinel_token();
	if (!token) {
		rt_say("SENTINEL_API_TOKEN (or SENTINEL_API_KEY) is not set: streaming is off and "
		       "nothing is uploaded");
		return 2;
	}
	if (!upload_env_ok())
		return 2; /* said; the run stays in the store */
	const char *b = getenv("SENTINEL_API_URL");
	snprintf(u->base, sizeof(u->base), "%s",
	         b && *b ? b : "https://api.sentinel.sparecores.net");
	for (size_t n = strlen(u->base); n && u->base[n - 1] == '/'; n--)
		u->base[n - 1] = '\0';
	if (!rt_url_allowed(u->base) || strpbrk(u->base, " \t\r\n?#")) {
		rt_say(
		    "SENTINEL_API_URL='%s' is not an https URL (or http to 127.0.0.1); streaming "
		    "is off for this run, it stays in the local store: fix the URL and run "
		    "rt-export upload %s",
		    u->base, spec);
		return 1;
	}
	u->api = (struct rt_sentinel){u->base, token};
	u->endpoint = getenv("TRACKER_S3_ENDPOINT");
	if (u->endpoint && !*u->endpoint)
		u->endpoint = NULL;
	return 0;
}

/* The run, its upload lock (one uploader per run) and its checkpoint:
 * 0, or 1 with the reason said (nothing is held then). */
static int upload_open(struct upload *u, const char *spec)
{
	char why[600];
	if (rt_run_resolve(u->s, spec, &u->ri))
		return 1;
	const char *dir = rt_store_dir(u->s);
	if ((u->udfd = rt_store_side_dir(u->s, "upload", 1, why, sizeof(why))) < 0) {
		rt_say("cannot upload run %llu: %s", (unsigned long long)u->ri.id, why);
		rt_run_free(&u->ri);
		return 1;
	}
	int rc = rt_checkpoint_lock(u->udfd, u->ri.id, &u->lockfd);
	if (!rc && (rc = rt_checkpoint_load(u->udfd, u->ri.id, &u->cp)))
		close(u->lockfd);
	if (rc == -EBUSY && u->r_api.defer)
		; /* (the node's exporter tries again soon) */
	else if (rc == -EBUSY)
		rt_say("run %llu is already being uploaded by another rt-export",
		       (unsigned long long)u->ri.id);
	else if (rc)
		rt_say(
		    "the upload state of run %llu in %s/upload cannot be used (%s); move it away "
		    "to start the upload again",
		    (unsigned long long)u->ri.id, dir, rt_strerror(rc));
	if (rc) {
		rt_run_free(&u->ri);
		close(u->udfd);
		return 1;
	}
	return 0;
}

void rt_upload_cloud(struct rt_store *s, struct rt_cloud *cloud)
{
	rt_cloud_discover(cloud, 2000); /* in parallel, at most 2 s */
	char host_id[128];
	rt_host_id(host_id, sizeof(host_id)); /* for summary and report */
	rt_cloud_save(rt_store_dir(s), host_id, cloud);
}

/* The run started on Sentinel (once: the checkpoint keeps its id), with
 * the cloud it ran on; retried while Sentinel is away. 0, or 1 when
 * Sentinel refused (said), or 2 (stepped) when it is to be tried later. */
static int upload_start_run(struct upload *u)
{
	struct rt_cloud cloud;
	memset(&cloud, 0, sizeof(cloud));
	if (!u->cp.sentinel_run[0] && u->cloud)
		cloud = *u->cloud; /* (the node's exporter asked once for all runs) */
	else if (!u->cp.sentinel_run[0])
		rt_upload_cloud(u->s, &cloud);
	while (!u->cp.sentinel_run[0]) {
		char *body = start_body(&u->ri, &cloud);
		int rc = body ? rt_sentinel_start(&u->api, body, &u->cp, &u->res) : -ENOMEM;
		free(body);
		if (rc == 0) {
			recovered(&u->r_api);
			rt_checkpoint_save(u->udfd, u->ri.id, &u->cp);
		} else if (!retryable(rc, &u->res)) {
			unsigned long long id = (unsigned long long)u->ri.id;
			rt_say(
			    "%s (%s); streaming is off for run %llu, it stays in the local store: "
			    "check SENTINEL_API_URL and SENTINEL_API_TOKEN, then run rt-export "
			    "upload %llu",
			    rc == RT_E_PROTOCOL
			        ? "Sentinel's answer to start the run cannot be used"
			    : rc == RT_E_HTTP ? "Sentinel refused the run"
			                      : "cannot start the run on Sentinel",
			    rc == -ENOMEM ? "out of memory" : u->res.detail, id, id);
			return 1;
		} else {
			backoff(&u->r_api, u->res.detail);
			if (u->r_api.defer)
				return 2; /* (a later step tries again) */
		}
	}
	return 0;
}

/* The bucket's region: the override, the endpoint's default, the
 * checkpoint's cache, else ask S3 (HEAD) and fall back to eu-central-1. */
static void upload_region(struct upload *u)
{
	u->region = getenv("TRACKER_S3_REGION");
	if (!u->region || !*u->region)
		u->region = u->endpoint ? "us-east-1" : u->cp.region[0] ? u->cp.region : NULL;
	if (u->region)
		return;
	char url[256];
	snprintf(url, sizeof(url), "https://%s.s3.amazonaws.com", u->cp.bucket);
	struct rt_http_resp hr;
	snprintf(u->cp.region, sizeof(u->cp.region), "eu-central-1");
	if (rt_http("HEAD", url, NULL, NULL, 0, 5, &hr) == 0 && hr.amz_region[0])
		snprintf(u->cp.region, sizeof(u->cp.region), "%s", hr.amz_region);
	rt_http_resp_free(&hr);
	rt_checkpoint_save(u->udfd, u->ri.id, &u->cp);
	u->region = u->cp.region;
}

/* Samples cp.next_seq..last as one object in S3, recorded in the
 * checkpoint; credentials renewed before they expire or when S3 says they
 * did, a failure waited out. -1 when the batch cannot be built (said),
 * else 0: the loop goes on. */
static int upload_batch(struct upload *u, uint64_t last)
{
	struct rt_checkpoint *cp = &u->cp;
	if (cp->creds.expires_ns && now_ns(0) + 300ull * 1000000000ull >= cp->creds.expires_ns &&
	    rt_sentinel_refresh(&u->api, cp, &u->res) != 0) {
		backoff(&u->r_api, u->res.detail);
		return 0;
	}
	uint64_t lines;
	rt_buf_reset(&u->key);
	rt_batch_key(&u->key, cp->prefix, cp->sentinel_run, cp->next_seq);
	int rc = rt_batch_build(u->s, u->ring, &u->ri, cp->next_seq, last, &u->gz, &lines);
	if (rc) {
		rt_say("cannot build the batch of samples %llu-%llu: %s",
		       (unsigned long long)cp->next_seq, (unsigned long long)last, rt_strerror(rc));
		return -1;
	}
	rc = rt_s3_put(u->endpoint, u->region, cp, u->key.p, u->gz.p, u->gz.len, &u->res);
	if (rc == 0) {
		recovered(&u->r_s3);
		rt_buf_reset(&u->uri);
		rt_buf_printf(&u->uri, "s3://%s/%s", cp->bucket, u->key.p);
		rt_checkpoint_add_uri(cp, u->uri.p);
		cp->next_seq = last + 1;
		rt_checkpoint_save(u->udfd, u->ri.id, cp);
		u->put_any = 1;
		/* on the run's grid while keeping up; after an outage, one
		 * interval from now (the backlog went in this one) */
		u->next_due += u->ival_ns;
		if (u->next_due <= now_ns(1))
			u->next_due = now_ns(1) + u->ival_ns;
		return 0;
	}
	if (rc == RT_E_CREDS && rt_sentinel_refresh(&u->api, cp, &u->res) == 0) {
		rt_checkpoint_save(u->udfd, u->ri.id, cp); /* expired: new ones */
		return 0;
	}
	backoff(&u->r_s3, u->res.detail);
	return 0;
}

/* The run finished on Sentinel (its data inline when no object was put):
 * 1 when done, -1 when refused (said), 0 to try again after a wait. */
static int upload_finish(struct upload *u)
{
	struct rt_checkpoint *cp = &u->cp;
	int rc = finish_body(u->s, &u->ri, cp, u->allocation, &u->gz);
	if (rc) {
		rt_say("cannot build the finish request: %s", rt_strerror(rc));
		return -1;
	}
	rc = rt_sentinel_finish(&u->api, cp, &u->gz, 1, &u->res);
	if (rc == 0) {
		recovered(&u->r_api);
		cp->finished = 1;
		rt_checkpoint_save(u->udfd, u->ri.id, cp);
		if (u->verbose) /* all went well: quiet on stderr, where metrics go */
			rt_say("run %llu finished on Sentinel as %s (%zu objects%s)",
			       (unsigned long long)u->ri.id, cp->sentinel_run, cp->nuris,
			       cp->nuris ? "" : ", data inline");
		return 1;
	}
	if (!retryable(rc, &u->res)) {
		rt_say("Sentinel refused to finish run %s (%s); run 'rt-export "
		       "upload %llu' "
		       "again to retry",
		       cp->sentinel_run, u->res.detail, (unsigned long long)u->ri.id);
		return -1;
	}
	backoff(&u->r_api, u->res.detail);
	return 0;
}

/* The batches' grid: every interval from the run's start. */
static void upload_grid(struct upload *u, double interval)
{
	u->ival_ns = (uint64_t)(interval * 1e9);
	uint64_t wall = now_ns(0), mono = now_ns(1);
	const struct rt_runinfo *ri = &u->ri;
	uint64_t age = ri->start_ns && wall > ri->start_ns ? wall - ri->start_ns : 0;
	u->next_due = (mono > age ? mono - age : 0) + u->ival_ns;
}

enum act { ACT_AGAIN, ACT_WAIT, ACT_DONE, ACT_FAILED };

/*
 * One thing the upload can do now: a batch when one is due (a live run's
 * samples come from its ring, whatever the store's commit cadence), the
 * finish once the run ended and everything is in, else wait (ACT_WAIT;
 * wait_due says until when, 0: the next sample). A run that ended before
 * its first batch was due finishes inline (no object at all); a longer
 * one never does, even when its uploader starts only after it ended. A
 * run handed over (to the node started next) sends what it has and does
 * not finish.
 */
static enum act upload_act(struct upload *u, int recording, int handed, uint64_t *wait_due)
{
	const struct rt_runinfo *ri = &u->ri;
	open_ring(u->s, ri, &u->ring);
	uint64_t last = 0;
	int have = newest_sample(u->s, ri, u->ring, &last) && last >= u->cp.next_seq;
	int due = !recording || now_ns(1) >= u->next_due;
	uint64_t end = ri->end_ns ? ri->end_ns : now_ns(0);
	int long_run = ri->start_ns && end >= ri->start_ns + u->ival_ns;
	int some = u->cp.nuris || u->put_any || long_run;
	*wait_due = due ? 0 : u->next_due;
	if (have && due && (recording || some || handed))
		return upload_batch(u, last) < 0 ? ACT_FAILED : ACT_AGAIN;
	if (handed)
		return ACT_DONE;
	if (!recording && (!have || !some)) {
		int done = upload_finish(u);
		return done < 0 ? ACT_FAILED : done ? ACT_DONE : ACT_AGAIN;
	}
	return ACT_WAIT;
}

static void upload_free_bufs(struct upload *u)
{
	if (u->ring)
		rt_ring_close(u->ring, 0);
	u->ring = NULL;
	rt_buf_free(&u->gz);
	rt_buf_free(&u->key);
	rt_buf_free(&u->uri);
}

/* Batches until the run ended and finished. Returns the exit code. */
static int upload_batches(struct upload *u, double interval)
{
	upload_grid(u, interval);
	enum act a;
	uint64_t due;
	while ((a = upload_act(u, still_recording(u->s, &u->ri), 0, &due)) == ACT_AGAIN ||
	       a == ACT_WAIT)
		if (a == ACT_WAIT)
			wait_for_batch(u->s, &u->ri, &u->ring, due);
	upload_free_bufs(u);
	return a == ACT_FAILED;
}

int rt_cmd_upload(struct rt_store *s, const char *spec, int verbose, rt_allocation_fn allocation)
{
	static struct upload up;
	struct upload *u = &up;
	*u = (struct upload){.s = s, .verbose = verbose, .allocation = allocation};
	u->r_api = (struct retry){.what = "Sentinel API"};
	u->r_s3 = (struct retry){.what = "S3 upload"};
	int rc = upload_api(u, spec);
	if (rc)
		return rc;
	double interval = upload_interval();
	if (upload_open(u, spec))
		return 1;
	srandom((unsigned)(now_ns(1) ^ (uint64_t)getpid()));
	int ret = 0;
	if (u->cp.finished) {
		if (verbose)
			rt_say("run %llu is already finished on Sentinel (%zu objects)",
			       (unsigned long long)u->ri.id, u->cp.nuris);
	} else if (upload_start_run(u)) {
		ret = 1;
	} else {
		upload_region(u);
		ret = upload_batches(u, interval);
	}
	rt_checkpoint_free(&u->cp);
	rt_run_free(&u->ri);
	close(u->lockfd);
	close(u->udfd);
	return ret;
}

/* ---- step by step: the node's exporter (sink/upload.h) ------------------ */
struct rt_upload_run *rt_upload_run_open(struct rt_store *s, uint64_t run,
                                         rt_allocation_fn allocation, const struct rt_cloud *cloud,
                                         int *rc)
{
	struct upload *u = calloc(1, sizeof(*u));
	if (!u) {
		*rc = -ENOMEM;
		return NULL;
	}
	*u = (struct upload){.s = s, .allocation = allocation, .cloud = cloud};
	u->r_api = (struct retry){.what = "Sentinel API", .defer = &u->wait_until};
	u->r_s3 = (struct retry){.what = "S3 upload", .defer = &u->wait_until};
	char spec[32];
	snprintf(spec, sizeof(spec), "%llu", (unsigned long long)run);
	if ((*rc = upload_api(u, spec)) || (*rc = upload_open(u, spec))) {
		free(u);
		return NULL;
	}
	u->ival_ns = (uint64_t)(upload_interval() * 1e9);
	return (struct rt_upload_run *)u;
}

int rt_upload_run_step(struct rt_upload_run *r, enum rt_sink_end end)
{
	struct upload *u = (struct upload *)r;
	if (u->cp.finished)
		return 1;
	if (u->wait_until > now_ns(1))
		return 0; /* (an outage's backoff) */
	u->wait_until = 0;
	if (!u->started) {
		int rc = upload_start_run(u);
		if (rc == 2) /* (Sentinel away: tried again) */
			u->r_api.failed = 0;
		if (rc == 2)
			return snprintf(u->why, sizeof(u->why), "%s", u->r_api.why), RT_E_NET;
		if (rc)
			return -EPROTO;
		upload_region(u);
		upload_grid(u, (double)u->ival_ns / 1e9);
		u->started = 1;
	}
	enum act a = ACT_AGAIN;
	uint64_t due;
	/* what it can do now, until it would wait (an outage's backoff too) */
	for (int i = 0; i < 64 && a == ACT_AGAIN && !u->wait_until; i++) {
		still_recording(u->s, &u->ri); /* (its end's time) */
		a = upload_act(u, end == RT_SINK_LIVE, end == RT_SINK_HANDED, &due);
	}
	if (a == ACT_FAILED)
		return -EPROTO;
	if (u->r_api.failed || u->r_s3.failed) { /* (the caller says it, once) */
		snprintf(u->why, sizeof(u->why), "%s",
		         u->r_api.failed ? u->r_api.why : u->r_s3.why);
		u->r_api.failed = u->r_s3.failed = 0;
		return RT_E_NET;
	}
	return a == ACT_DONE;
}

const char *rt_upload_run_answer(const struct rt_upload_run *r)
{
	return ((const struct upload *)r)->why;
}

uint64_t rt_upload_run_oks(const struct rt_upload_run *r, int which)
{
	const struct upload *u = (const struct upload *)r;
	return which == 1 ? u->r_api.oks : which == 2 ? u->r_s3.oks : u->r_api.oks + u->r_s3.oks;
}

int rt_upload_run_failed_s3(const struct rt_upload_run *r)
{
	return !strncmp(((const struct upload *)r)->why, "S3 upload", 9);
}

void rt_upload_run_close(struct rt_upload_run *r)
{
	struct upload *u = (struct upload *)r;
	if (!u)
		return;
	upload_free_bufs(u);
	rt_checkpoint_free(&u->cp);
	rt_run_free(&u->ri);
	close(u->lockfd);
	close(u->udfd);
	free(u);
}
