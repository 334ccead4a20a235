/*
 * push.c - `rt-export push RUN --to prometheus|otlp`: a run's samples into
 * a metrics engine, past or live (the recorder starts it when configured).
 *
 * What is sent is the fleet column of values.def: each value with a FLEET
 * name is one series per run, on the run's resource (job, host, cloud, run
 * id, store) and with the row's one attribute. A counter is the cumulative
 * sum of the per-interval values since the run's first line, so the replay
 * always starts at the first line; points are sent from the checkpoint on.
 * The encoders are push_prom.c (Prometheus remote write 1.0) and
 * push_otlp.c (OTLP/HTTP, JSON).
 *
 * Exactly once: the checkpoint (<store>/push/SINK-RUN-HASH, HASH of the
 * URL: one per engine) holds the first sample not yet confirmed; it moves
 * only after a 2xx. A batch sent twice (killed between the answer and the
 * checkpoint) is the same points with the same values and timestamps,
 * which the engine stores once. Retries: no answer, and the answers the
 * sink calls retryable (429, 5xx), with backoff and Retry-After, for at
 * most TRACKER_PUSH_RETRY_SECS (300 s); never other 4xx.
 */
#define _GNU_SOURCE
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "export.h"
#include "net/cloud.h"
#include "net/net.h"
#include "net/sigv4.h"
#include "rt/common.h"
#include "rt/fmt.h"
#include "rt/runmeta.h"
#include "rt/safefile.h"
#include "rt/sysroot.h"
#include "sink/push.h"
#include "push_int.h"

#define BATCH_LINES 500         /* lines per request (TRACKER_PUSH_BATCH_LINES) */
#define BATCH_NS 10000000000ull /* a live run: a request every 10 s of samples */
#define RETRY_S 300             /* give a batch up (resumable) after this long */
#define MAX_BACKOFF 30          /* seconds */

/* ---- names ------------------------------------------------------------- */

/* The Prometheus name of an OpenTelemetry metric: dots to underscores, the
 * unit as a suffix (bytes, seconds, percent; {annotations} dropped), and
 * _total for a cumulative counter. */
void rt_prom_name(char *out, size_t cap, const struct rt_value_info *v)
{
	size_t n = 0;
	for (const char *p = v->fleet; *p && n + 1 < cap; p++)
		out[n++] = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		                   (*p >= '0' && *p <= '9') || *p == '_' || *p == ':'
		               ? *p
		               : '_';
	out[n] = '\0';
	const char *u = v->fleet_unit;
	const char *suffix = !strcmp(u, "By")  ? "bytes"
	                     : !strcmp(u, "s") ? "seconds"
	                     : !strcmp(u, "%") ? "percent"
	                     : !strcmp(u, "1") ? "ratio"
	                                       : NULL; /* {...}: an annotation, no unit */
	if (suffix) {
		size_t sl = strlen(suffix);
		if (!(n > sl && !strcmp(out + n - sl, suffix) && out[n - sl - 1] == '_'))
			snprintf(out + n, cap - n, "_%s", suffix);
	}
	if (v->fleet_sum) {
		n = strlen(out);
		snprintf(out + n, cap - n, "_total");
	}
}

const char *rt_push_attr(const struct rt_push *p, const char *key)
{
	for (unsigned i = 0; i < p->nattr; i++)
		if (!strcmp(p->akey[i], key))
			return p->aval[i];
	return NULL;
}

/* Set resource attribute key (a later set replaces it; empty: removed). */
void push_set_attr(struct rt_push *p, const char *key, const char *value, size_t vlen)
{
	unsigned i = 0;
	while (i < p->nattr && strcmp(p->akey[i], key))
		i++;
	if (i == p->nattr) {
		if (!value || !vlen || p->nattr >= RT_PUSH_MAX_ATTRS)
			return;
		p->nattr++;
	}
	if (!value || !vlen) { /* an empty attribute is no attribute */
		p->nattr--;
		memmove(p->akey[i], p->akey[i + 1], (p->nattr - i) * sizeof(p->akey[0]));
		memmove(p->aval[i], p->aval[i + 1], (p->nattr - i) * sizeof(p->aval[0]));
		return;
	}
	snprintf(p->akey[i], sizeof(p->akey[i]), "%s", key);
	snprintf(p->aval[i], sizeof(p->aval[i]), "%.*s", (int)(vlen < 255 ? vlen : 255), value);
}

static uint64_t fnv(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

/* A job tracked by its cgroup: its scheduler and its id there (the Slurm
 * job id, the pod's uid, the unit), so a query can name one job:
 * rt_job_id="4242"; its user, and a pod's name and namespace (a pod's, or
 * a container's by its CRI annotations) as OpenTelemetry names them, so
 * that one can name a user's or a namespace's. Nothing for other runs
 * (no empty labels). */
static void job_attrs(struct rt_push *p, const cJSON *m)
{
	static const struct {
		const char *key, *attr;
	} who[] = {
	    {"scheduler", "rt.scheduler"},
	    {"job_id", "rt.job.id"},
	    {"user", "rt.job.user"},
	    {"pod", "k8s.pod.name"},
	    {"namespace", "k8s.namespace.name"},
	};
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(m, "cgroup");
	for (size_t i = 0; i < RT_ARRAY_LEN(who); i++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(c, who[i].key);
		if (cJSON_IsString(v) && v->valuestring[0])
			push_set_attr(p, who[i].attr, v->valuestring, strlen(v->valuestring));
	}
	/* (a pod's job id is its uid, which OpenTelemetry names too) */
	const cJSON *sched = cJSON_GetObjectItemCaseSensitive(c, "scheduler");
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(c, "job_id");
	if (cJSON_IsString(sched) && !strcmp(sched->valuestring, "kubernetes") &&
	    cJSON_IsString(id))
		push_set_attr(p, "k8s.pod.uid", id->valuestring, strlen(id->valuestring));
}

/* The run's resource, as OpenTelemetry names it. */
static void resource(struct rt_push *p, struct rt_store *s, const struct rt_runinfo *ri)
{
	cJSON *m = cJSON_Parse(ri->meta_json);
	const cJSON *h = cJSON_GetObjectItemCaseSensitive(m, "host");
	const cJSON *hn = cJSON_GetObjectItemCaseSensitive(h, "hostname");
	const cJSON *hid = cJSON_GetObjectItemCaseSensitive(h, "host_id");
	const char *host = cJSON_IsString(hn) ? hn->valuestring : NULL;
	const char *job = ri->job_name && *ri->job_name ? ri->job_name : "resource-tracker";
	char run[32];
	snprintf(run, sizeof(run), "%llu", (unsigned long long)ri->id);
	push_set_attr(p, "service.name", job, strlen(job));
	if (host)
		push_set_attr(p, "host.name", host, strlen(host));
	/* Prometheus's instance label: node_exporter's target is HOST:9100
	 * by default, so that is the default here too (TRACKER_PUSH_INSTANCE
	 * names another: the one the node's exporter is scraped as) */
	const char *inst = getenv("TRACKER_PUSH_INSTANCE");
	char ibuf[300];
	if (!inst || !*inst) {
		snprintf(ibuf, sizeof(ibuf), "%s:9100", host ? host : "localhost");
		inst = ibuf;
	}
	push_set_attr(p, "service.instance.id", inst, strlen(inst));
	push_set_attr(p, "rt.run.id", run, strlen(run));
	job_attrs(p, m);
	/* run ids count from 1 in every store: the store's random id tells two
	 * stores' run 1 apart (an older store without one: its directory) */
	const char *key = rt_store_ring_key(s), *hash = strchr(key, '#');
	char sid[17];
	if (hash && strlen(hash + 1) >= 12)
		snprintf(sid, sizeof(sid), "%.12s", hash + 1);
	else
		snprintf(sid, sizeof(sid), "%012llx", (unsigned long long)(fnv(key) >> 16));
	push_set_attr(p, "rt.store", sid, strlen(sid));
	struct rt_cloud c;
	memset(&c, 0, sizeof(c));
	if (cJSON_IsString(hid) && rt_cloud_load(rt_store_dir(s), hid->valuestring, &c) == 0) {
		push_set_attr(p, "cloud.provider", c.vendor, strlen(c.vendor));
		push_set_attr(p, "cloud.region", c.region, strlen(c.region));
		push_set_attr(p, "host.type", c.instance_type, strlen(c.instance_type));
	}
	cJSON_Delete(m);
}

/* What the job was given (the run's allocation: a request, Slurm, the
 * cgroup, its affinity or the host), a gauge per line of each run, the
 * source as an attribute: efficiency in PromQL is used / given. */
#define ALLOC_ID (RT_NV + 1)
static struct rt_push_series *new_series(struct rt_push *p);

static const struct rt_value_info alloc_rows[] = {
    {.fleet = "rt.allocation.cpu", .fleet_unit = "{cpu}", .fleet_scale = 1},
    {.fleet = "rt.allocation.memory", .fleet_unit = "By", .fleet_scale = 1},
    {.fleet = "rt.allocation.gpu", .fleet_unit = "{gpu}", .fleet_scale = 1},
};
static int alloc_series(struct rt_push *p, const struct rt_runinfo *ri)
{
	cJSON *m = cJSON_Parse(ri->meta_json);
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(m, "allocation");
	static const char *const val[] = {"cpu", "memory_bytes", "gpu"}, *const from[] = {
	                                                                     "cpu_from",
	                                                                     "memory_from",
	                                                                     "gpu_from"};
	int rc = 0;
	for (size_t i = 0; a && i < RT_ARRAY_LEN(alloc_rows) && !rc; i++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(a, val[i]);
		const cJSON *f = cJSON_GetObjectItemCaseSensitive(a, from[i]);
		if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < 0)
			continue;
		struct rt_push_series *sr = new_series(p);
		if (!sr) {
			rc = -ENOMEM;
			break;
		}
		sr->id = ALLOC_ID;
		sr->v = &alloc_rows[i];
		sr->constant = v->valuedouble;
		snprintf(sr->dkey, sizeof(sr->dkey), "rt.allocation.source");
		snprintf(sr->dval, sizeof(sr->dval), "%s",
		         cJSON_IsString(f) && f->valuestring[0] ? f->valuestring : "host");
		rt_prom_name(sr->name, sizeof(sr->name), sr->v);
	}
	cJSON_Delete(m);
	return rc;
}

/* ---- the checkpoint ----------------------------------------------------
 * <store>/push/<sink>-<run>-<url hash>, in the push directory held open:
 * read without following a link or blocking on a FIFO, replaced through a
 * temporary file made O_EXCL beside it (never through what is there). */
static uint64_t ckpt_load(const struct rt_push *p)
{
	char buf[64], why[512];
	int fd = rt_open_own_at(p->ckpt_dfd, p->ckpt_name, p->ckpt, O_RDONLY, 0, why, sizeof(why));
	if (fd < 0) {
		if (fd != -ENOENT)
			rt_say(
			    "the push checkpoint is not used: %s; the run is pushed from its start "
			    "(the engine keeps each sample once)",
			    why);
		return 1;
	}
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 1;
	buf[n] = '\0';
	unsigned long long v;
	return sscanf(buf, "next_seq %llu", &v) == 1 && v >= 1 ? v : 1;
}

/* Written to a temporary file, synced and renamed over: never torn. */
static int ckpt_save(const struct rt_push *p, uint64_t next)
{
	char text[64], why[512];
	struct rt_outfile of;
	int rc =
	    rt_outfile_open_at(&of, p->ckpt_dfd, p->ckpt_name, p->ckpt, 0600, why, sizeof(why));
	if (rc)
		return rc;
	int n = snprintf(text, sizeof(text), "next_seq %llu\n", (unsigned long long)next);
	if ((rc = rt_write_all(of.fd, text, (size_t)n, 10000))) {
		rt_outfile_abort(&of);
		return rc;
	}
	return rt_outfile_commit(&of);
}

/* ---- one request -------------------------------------------------------- */
static int env_seconds(const char *name, int dflt, int min, int max)
{
	const char *v = getenv(name);
	if (!v || !*v)
		return dflt;
	char *end;
	long x = strtol(v, &end, 10);
	if (*end || x < min || x > max) {
		rt_say("%s='%.40s' is not a number from %d to %d; %d is used", name, v, min, max,
		       dflt);
		return dflt;
	}
	return (int)x;
}

/* An answer's body as one short line (control characters as spaces). */
static void one_line(char *out, size_t cap, const char *body)
{
	size_t n = 0;
	for (const char *c = body; *c && n + 1 < cap; c++)
		out[n++] = (unsigned char)*c < 0x20 ? ' ' : *c;
	n = rt_utf8_cut(out, n);
	while (n && out[n - 1] == ' ')
		n--;
	out[n] = '\0';
}

/* Amazon Managed Service for Prometheus: the request signed with SigV4
 * (service "aps") when TRACKER_REMOTE_WRITE_SIGV4_REGION is set, with the
 * AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN of the
 * environment. Each attempt is signed anew (the date is part of it): the
 * headers of the attempt into h (from the base ones), their text in st. */
static void sign(const struct rt_push *p, const struct rt_buf *body, const char **h,
                 char st[4][4200])
{
	size_t n = 0;
	for (; p->headers[n] && n < 24; n++)
		h[n] = p->headers[n];
	h[n] = NULL;
	const char *region = getenv("TRACKER_REMOTE_WRITE_SIGV4_REGION");
	if (!p->sink->sigv4 || !region || !*region)
		return;
	const char *ak = getenv("AWS_ACCESS_KEY_ID"), *sk = getenv("AWS_SECRET_ACCESS_KEY");
	const char *tok = getenv("AWS_SESSION_TOKEN");
	if (!ak || !*ak || !sk || !*sk)
		return; /* said once at the start */
	const char *hs = strstr(p->url, "://") + 3;
	size_t hl = strcspn(hs, "/?#");
	char host[256], hash[65], amz[20];
	snprintf(host, sizeof(host), "%.*s", (int)(hl < 255 ? hl : 255), hs);
	struct rt_buf path = {0};
	rt_buf_printf(&path, "%.*s", (int)strcspn(hs + hl, "?#"), hs + hl);
	if (!path.len)
		rt_buf_putc(&path, '/');
	rt_sha256_hex(body->p, body->len, hash);
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	strftime(amz, sizeof(amz), "%Y%m%dT%H%M%SZ", &tm);
	struct rt_sigv4_header sh[] = {
	    {"host", host},
	    {"x-amz-content-sha256", hash},
	    {"x-amz-date", amz},
	    {"x-amz-security-token", tok},
	};
	struct rt_buf auth = {0};
	struct rt_sigv4_req r = {"POST", path.p, "", sh, tok && *tok ? 4 : 3, hash, amz,
	                         region, "aps",  ak, sk};
	rt_sigv4_authorization(&r, &auth);
	snprintf(st[0], sizeof(st[0]), "X-Amz-Date: %s", amz);
	snprintf(st[1], sizeof(st[1]), "X-Amz-Content-Sha256: %s", hash);
	snprintf(st[2], sizeof(st[2]), "Authorization: %s", auth.p ? auth.p : "");
	h[n++] = st[0];
	h[n++] = st[1];
	h[n++] = st[2];
	if (tok && *tok) {
		snprintf(st[3], sizeof(st[3]), "X-Amz-Security-Token: %s", tok);
		h[n++] = st[3];
	}
	h[n] = NULL;
	rt_buf_free(&path);
	rt_buf_free(&auth);
}

/* One line per run when a batch is given up (refused, or no answer within
 * the retry bound): the batch stays for the next push. */
static void say_given_up(struct rt_push *p, long st, const char *text, int retry, double waited,
                         const char *err)
{
	if (p->failed)
		return;
	char why[201];
	one_line(why, sizeof(why), text);
	int old = !retry && (strstr(text, "too old") || strstr(text, "out of bounds"));
	if (st)
		rt_say("the metrics engine refused samples %llu..%llu of this "
		       "run "
		       "(HTTP %ld: %s)%s; rt-export push resumes there%s",
		       (unsigned long long)p->next_seq, (unsigned long long)p->batch_last, st, why,
		       retry ? ", and kept refusing" : "",
		       old ? " (they are older than the engine takes: see its "
		             "out-of-order window)"
		           : "");
	else
		rt_say("no answer from %s (%s) for %.0f s; rt-export push "
		       "resumes "
		       "at sample %llu",
		       p->url, err, waited, (unsigned long long)p->next_seq);
}

/* The batch went in: counted, the checkpoint moved past it, the series
 * emptied for the next. */
static void batch_sent(struct rt_push *p, size_t bytes)
{
	p->requests++;
	p->sent_bytes += bytes;
	p->sent_lines += p->batch_lines;
	p->next_seq = p->batch_last + 1;
	if (ckpt_save(p, p->next_seq))
		rt_say("cannot write the push checkpoint %s; a later push sends these samples "
		       "again (the engine keeps them once)",
		       p->ckpt);
	for (unsigned k = 0; k < p->nser; k++)
		p->ser[k].n = 0;
	p->batch_lines = 0;
}

/* Encode the batch and POST it, retrying what the engine may take later
 * (no answer, 5xx, 429) with backoff and its Retry-After, up to
 * TRACKER_PUSH_RETRY_SECS. 0, or RT_E_NET when given up (said once). */
static int send_batch(struct rt_push *p)
{
	struct rt_buf body = {0};
	int rc = p->sink->encode(p, &body);
	if (rc || body.oom) {
		rt_buf_free(&body);
		return rc ? rc : -ENOMEM;
	}
	int timeout = env_seconds("TRACKER_PUSH_TIMEOUT_SECS", 30, 1, 600);
	int bound = env_seconds("TRACKER_PUSH_RETRY_SECS", RETRY_S, 0, 86400);
	struct rt_http_limits lim = {timeout * 1000 < 5000 ? timeout * 1000 : 5000, timeout * 1000,
	                             1 << 20, 1};
	double waited = 0, backoff = 0.5;
	for (;;) {
		struct rt_http_resp r;
		const char *h[32];
		static char sigh[4][4200];
		sign(p, &body, h, sigh);
		rc = rt_http_limited("POST", p->url, h, body.p, body.len, &lim, &r);
		long st = rc ? 0 : r.status;
		const char *text = r.body.p ? r.body.p : "";
		if (st >= 200 && st < 300) {
			if (p->sink->accepted)
				p->sink->accepted(p, text);
			rt_http_resp_free(&r);
			batch_sent(p, body.len);
			rt_buf_free(&body);
			return 0;
		}
		int retry = st == 0 || p->sink->retryable(st, text);
		if (p->once) { /* (the caller says it, once an outage) */
			p->last_status = st;
			one_line(p->last_why, sizeof(p->last_why), st ? text : r.err);
			rt_http_resp_free(&r);
			rt_buf_free(&body);
			return retry ? RT_E_NET : RT_E_HTTP;
		}
		if (!retry || waited >= bound) {
			say_given_up(p, st, text, retry, waited, r.err);
			p->failed = 1;
			rt_http_resp_free(&r);
			rt_buf_free(&body);
			return RT_E_NET;
		}
		double wait = backoff;
		if (r.retry_after_s >= 0)
			wait = r.retry_after_s > 60 ? 60 : (double)r.retry_after_s;
		/* the retry bound beats any Retry-After: one last try at its end */
		if (wait > bound - waited)
			wait = bound - waited > 0 ? bound - waited : 0;
		rt_http_resp_free(&r);
		if (p->verbose)
			rt_say("push: %s; again in %.1f s",
			       st ? "the engine asks to wait" : "no answer", wait);
		struct timespec ts = {(time_t)wait, (long)((wait - (double)(time_t)wait) * 1e9)};
		nanosleep(&ts, NULL);
		waited += wait;
		backoff = backoff * 2 > MAX_BACKOFF ? MAX_BACKOFF : backoff * 2;
	}
}

/* ---- the lines ---------------------------------------------------------- */
static int put_point(struct rt_push_series *s, struct rt_point pt)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		struct rt_point *np = realloc(s->pt, cap * sizeof(*np));
		if (!np)
			return -ENOMEM;
		s->pt = np;
		s->cap = cap;
	}
	s->pt[s->n++] = pt;
	return 0;
}

/* Value v (before its scale) of series s at the line d. */
static int add_point(struct rt_push *p, struct rt_push_series *s, double v,
                     const struct rt_derived *d, int64_t ms, int send)
{
	/* a counter's first point: 0 at the run's first record, so that the
	 * first interval is an increase too (sent with the run's first line) */
	if (p->zero_start && s->v->fleet_sum && p->first_line && !s->last_ms && send) {
		int64_t z = p->start_ns / 1000000;
		if (z < ms && put_point(s, (struct rt_point){0.0, p->start_ns, z, 0}))
			return -ENOMEM;
		s->last_ms = z < ms ? z : 0;
	}
	v *= s->v->fleet_scale;
	if (s->v->fleet_sum)
		v = s->sum += v;
	/* Prometheus keeps one value per series and millisecond: a line in the
	 * same ms as the one before (the final sample right after the last
	 * periodic one) goes 1 ms later there, so neither is lost (the same on
	 * every push: decided from the first line) */
	int64_t t = ms > s->last_ms ? ms : s->last_ms + 1;
	s->last_ms = t;
	s->last_ns = (int64_t)d->wall_ns;
	if (!send || !isfinite(v))
		return 0;
	return put_point(s, (struct rt_point){v, (int64_t)d->wall_ns, t, 0});
}

/* The run ended: each series it had says so, 1 ms after its last point
 * (Prometheus: the staleness marker, and the series no longer reads 5
 * minutes on; OTLP: a point flagged as no recorded value). */
static int add_stale(struct rt_push *p)
{
	for (unsigned k = 0; k < p->nser; k++) {
		struct rt_push_series *s = &p->ser[k];
		if (s->last_ms &&
		    put_point(s, (struct rt_point){NAN, s->last_ns + 1000000, s->last_ms + 1, 1}))
			return -ENOMEM;
	}
	return 0;
}

static struct rt_push_series *new_series(struct rt_push *p)
{
	if (p->nser == p->capser) {
		unsigned cap = p->capser ? p->capser * 2 : 64;
		struct rt_push_series *ns = realloc(p->ser, cap * sizeof(*ns));
		if (!ns)
			return NULL;
		p->ser = ns;
		p->capser = cap;
	}
	struct rt_push_series *s = &p->ser[p->nser++];
	memset(s, 0, sizeof(*s));
	return s;
}

/* Per-device series (TRACKER_PUSH_PER_DEVICE=1): each CPU's utilization,
 * each disk's and NIC's bytes, each GPU's use and memory, attributed by
 * the device. The host totals above have no device attribute (and leave
 * stacked disks out): sum one or the other, never both. */
enum { D_CORE, D_DISK_R, D_DISK_W, D_NIC_RX, D_NIC_TX, D_GPU_UTIL, D_GPU_MEM, D_N };
#define DEV_SLOTS RT_MAX_CPUS
static const struct rt_value_info dev_rows[D_N] = {
    [D_CORE] = {.fleet = "system.cpu.utilization", .fleet_unit = "1", .fleet_scale = 0.01},
    [D_DISK_R] = {.fleet = "system.disk.io",
                  .fleet_sum = 1,
                  .fleet_unit = "By",
                  .fleet_scale = 1,
                  .fleet_attr = "disk.io.direction",
                  .fleet_attr_value = "read"},
    [D_DISK_W] = {.fleet = "system.disk.io",
                  .fleet_sum = 1,
                  .fleet_unit = "By",
                  .fleet_scale = 1,
                  .fleet_attr = "disk.io.direction",
                  .fleet_attr_value = "write"},
    [D_NIC_RX] = {.fleet = "system.network.io",
                  .fleet_sum = 1,
                  .fleet_unit = "By",
                  .fleet_scale = 1,
                  .fleet_attr = "network.io.direction",
                  .fleet_attr_value = "receive"},
    [D_NIC_TX] = {.fleet = "system.network.io",
                  .fleet_sum = 1,
                  .fleet_unit = "By",
                  .fleet_scale = 1,
                  .fleet_attr = "network.io.direction",
                  .fleet_attr_value = "transmit"},
    [D_GPU_UTIL] = {.fleet = "hw.gpu.utilization", .fleet_unit = "1", .fleet_scale = 0.01},
    [D_GPU_MEM] = {.fleet = "hw.gpu.memory.usage", .fleet_unit = "By", .fleet_scale = 1},
};
static const char *const dev_key[D_N] = {
    "cpu.logical_number", "system.device", "system.device", "system.device",
    "system.device",      "hw.id",         "hw.id"};
/* The series of device slot i of kind k, named name (made at first sight). */
static struct rt_push_series *dev_series(struct rt_push *p, int k, unsigned i, const char *name)
{
	int *at = &p->dev_ser[k * DEV_SLOTS + i];
	if (*at < 0) {
		for (unsigned q = 0; q < p->nser && *at < 0; q++)
			if (p->ser[q].v == &dev_rows[k] && !strcmp(p->ser[q].dval, name))
				*at = (int)q;
		if (*at < 0) {
			struct rt_push_series *s = new_series(p);
			if (!s)
				return NULL;
			s->v = &dev_rows[k];
			s->id = RT_NV;
			snprintf(s->dkey, sizeof(s->dkey), "%s", dev_key[k]);
			rt_copy_text(s->dval, sizeof(s->dval), name);
			rt_prom_name(s->name, sizeof(s->name), s->v);
			*at = (int)(s - p->ser);
		}
	}
	return &p->ser[*at];
}

static int device_points(struct rt_push *p, const struct rt_derived *d, int64_t ms, int send)
{
	const struct rt_inventory *inv = d->cur.inv;
	const struct rt_record *c = d->cur.rec;
	if (!p->dev_ser) {
		p->dev_ser = malloc(sizeof(int) * D_N * DEV_SLOTS);
		if (!p->dev_ser)
			return -ENOMEM;
		p->dev_gen = inv->gen + 1;
	}
	if (p->dev_gen != inv->gen) { /* slots are the generation's */
		for (unsigned i = 0; i < D_N * DEV_SLOTS; i++)
			p->dev_ser[i] = -1;
		p->dev_gen = inv->gen;
	}
	char name[32];
	struct rt_push_series *s;
	for (unsigned i = 0; i < c->h->ncpu && i < inv->ncpu; i++) {
		snprintf(name, sizeof(name), "%u", inv->cpu_id[i]);
		if (!(s = dev_series(p, D_CORE, i, name)) ||
		    add_point(p, s, d->core_pct[i], d, ms, send))
			return -ENOMEM;
	}
	for (unsigned i = 0; i < c->h->ndisk && i < inv->ndisk; i++) {
		if (!(s = dev_series(p, D_DISK_R, i, inv->disk[i].name)) ||
		    add_point(p, s, (double)d->disk_rd_delta[i], d, ms, send) ||
		    !(s = dev_series(p, D_DISK_W, i, inv->disk[i].name)) ||
		    add_point(p, s, (double)d->disk_wr_delta[i], d, ms, send))
			return -ENOMEM;
	}
	for (unsigned i = 0; i < c->h->nnic && i < inv->nnic; i++) {
		if (!strcmp(inv->nic[i].operstate, "down"))
			continue; /* an interface that is down carries nothing */
		if (!(s = dev_series(p, D_NIC_RX, i, inv->nic[i].name)) ||
		    add_point(p, s, (double)d->nic_rx_delta[i], d, ms, send) ||
		    !(s = dev_series(p, D_NIC_TX, i, inv->nic[i].name)) ||
		    add_point(p, s, (double)d->nic_tx_delta[i], d, ms, send))
			return -ENOMEM;
	}
	for (unsigned i = 0; i < c->h->ngpu && i < inv->ngpu; i++) {
		const struct rt_rec_gpu *g = &c->gpu[i];
		const char *id = inv->gpu[i].uuid[0] ? inv->gpu[i].uuid : inv->gpu[i].pci_bus_id;
		if ((g->valid & RT_GPU_V_UTIL) &&
		    (!(s = dev_series(p, D_GPU_UTIL, i, id)) ||
		     add_point(p, s, (double)g->util_pct, d, ms, send)))
			return -ENOMEM;
		if ((g->valid & RT_GPU_V_MEM) &&
		    (!(s = dev_series(p, D_GPU_MEM, i, id)) ||
		     add_point(p, s, (double)g->vram_used, d, ms, send)))
			return -ENOMEM;
	}
	return 0;
}

static int observe(void *ctx, const struct rt_derived *d)
{
	struct rt_push *p = ctx;
	if (!p->start_ns)
		p->start_ns = (int64_t)d->prev.rec->h->wall_ns;
	p->first_line = p->lines_seen++ == 0;
	p->seen_seq = d->seq;
	int send = d->seq >= p->next_seq;
	int64_t ms = (int64_t)(d->wall_ns / 1000000u);
	int no_gpu = !d->cur.inv || d->cur.inv->ngpu == 0;
	for (unsigned k = 0; k < p->nser; k++) {
		double v;
		/* a host without a GPU gets no GPU series (all zeros, to be
		 * filtered out of every dashboard) */
		if (no_gpu && p->ser[k].v && p->ser[k].v->fleet &&
		    strstr(p->ser[k].v->fleet, "gpu"))
			continue;
		if (p->ser[k].id < RT_NV && rt_value(d, p->ser[k].id, &v) &&
		    add_point(p, &p->ser[k], v, d, ms, send))
			return -ENOMEM;
		if (p->ser[k].id == ALLOC_ID &&
		    add_point(p, &p->ser[k], p->ser[k].constant, d, ms, send))
			return -ENOMEM;
	}
	if (p->devices && device_points(p, d, ms, send))
		return -ENOMEM;
	p->first_line = 0;
	if (!send)
		return 0;
	p->batch_last = d->seq;
	if (!p->batch_lines++)
		p->batch_wall0 = d->wall_ns;
	if (p->batch_lines >= p->batch_max || (p->live && d->wall_ns - p->batch_wall0 >= BATCH_NS))
		return send_batch(p);
	return 0;
}

/* A series for every value the fleet view names (values.def). */
static int value_series(struct rt_push *p)
{
	for (unsigned id = 0; id < RT_NV; id++) {
		const struct rt_value_info *v = rt_value_info(id);
		struct rt_push_series *sr;
		if (!v->fleet)
			continue;
		if (!(sr = new_series(p)))
			return -ENOMEM;
		sr->id = id;
		sr->v = v;
		rt_prom_name(sr->name, sizeof(sr->name), v);
	}
	return 0;
}

/* What every series carries about the run: its resource attributes, the
 * job's allocation, OTEL's. 0, or the exit code (said). */
static int run_attributes(struct rt_push *p, struct rt_store *s, const struct rt_runinfo *ri)
{
	resource(p, s, ri);
	const char *inst = rt_push_attr(p, "service.instance.id");
	if (inst && (strlen(inst) > 255 || push_has_control(inst, strlen(inst)))) {
		rt_say("TRACKER_PUSH_INSTANCE is %s; it is not sent %s",
		       strlen(inst) > 255 ? "longer than 255 bytes" : "holds a control character",
		       strlen(inst) > 255 ? "cut" : "so");
		return 2;
	}
	p->zero_start = p->sink->zero_start;
	if (alloc_series(p, ri)) {
		rt_say("out of memory");
		return 1;
	}
	if (p->sink->resource && p->sink->resource(p))
		return 2;
	return 0;
}

/* The checkpoint of this run and engine, and its lock (one pusher per run
 * and engine), in the store's own push directory (a store of another
 * user's has none: root never writes into it): the lock's descriptor, or
 * -1 (said). */
static int push_checkpoint(struct rt_push *p, struct rt_store *s, uint64_t run)
{
	char why[600], lock[160];
	p->ckpt_dfd = rt_store_side_dir(s, "push", 1, why, sizeof(why));
	if (p->ckpt_dfd < 0) {
		rt_say("cannot push run %llu: %s", (unsigned long long)run, why);
		return -1;
	}
	snprintf(p->ckpt_name, sizeof(p->ckpt_name), "%s-%llu-%016llx", p->sink->name,
	         (unsigned long long)run, (unsigned long long)fnv(p->url));
	snprintf(p->ckpt, sizeof(p->ckpt), "%s/push/%s", rt_store_dir(s), p->ckpt_name);
	snprintf(lock, sizeof(lock), "%s.lock", p->ckpt_name);
	int lfd =
	    rt_open_own_at(p->ckpt_dfd, lock, p->ckpt, O_RDWR | O_CREAT, 0600, why, sizeof(why));
	if (lfd < 0 || flock(lfd, LOCK_EX | LOCK_NB)) {
		if (lfd >= 0 && p->once) /* (the node's exporter tries again soon) */
			;
		else if (lfd >= 0)
			rt_say("another rt-export push of run %llu to this engine is running",
			       (unsigned long long)run);
		else
			rt_say("cannot lock the push of run %llu: %s", (unsigned long long)run,
			       why);
		if (lfd >= 0)
			close(lfd);
		close(p->ckpt_dfd);
		p->ckpt_dfd = -1;
		return -1;
	}
	p->next_seq = ckpt_load(p);
	if (p->verbose && p->next_seq > 1)
		rt_say("push: run %llu resumes at sample %llu", (unsigned long long)run,
		       (unsigned long long)p->next_seq);
	return lfd;
}

/* The run's lines from the checkpoint on, in batches: a live run followed
 * to its end (a request every 10 s of samples), an ended one replayed; a
 * run that ended ends its series. */
static int push_lines(struct rt_push *p, struct rt_store *s, const struct rt_runinfo *ri)
{
	struct rt_emitter e;
	int rc = rt_emitter_init(&e, s, ri, RT_FMT_CSV, NULL);
	if (rc)
		return rc;
	e.observe = observe;
	e.observe_ctx = p;
	if (rt_run_status_of(ri->status) == RT_RUN_RUNNING && rt_run_recorder_alive(s, ri->id)) {
		p->live = 1; /* the recorder started us */
		rc = rt_follow(&e, 1);
	} else {
		struct rt_replay_opts o = {0, 0, 1};
		rc = rt_replay(&e, &o);
		if (rc == RT_E_RANGE)
			rc = 0; /* no lines yet */
	}
	/* a run that ended: its series end with it (with the last lines, or
	 * alone when they went in a full batch) */
	int ended = rc == 0 && (p->live || rt_run_status_of(ri->status) != RT_RUN_RUNNING);
	if (ended && (p->batch_lines || p->sent_lines) && add_stale(p))
		rc = -ENOMEM;
	if (rc == 0 && (p->batch_lines || (ended && p->sent_lines)))
		rc = send_batch(p);
	rt_say_read_notes(&e.notes, ri->id, e.lines);
	rt_emitter_free(&e);
	return rc;
}

/* How the push went: why it stopped, or (verbose) what was sent. */
static void say_pushed(const struct rt_push *p, uint64_t run, int rc)
{
	if (rc && !p->failed && rc != RT_E_LAYOUT)
		rt_say("push of run %llu stopped: %s", (unsigned long long)run, rt_strerror(rc));
	if (p->verbose && !rc)
		rt_say("push: run %llu: %llu line%s in %llu request%s, %llu bytes (%s); the engine "
		       "has every sample up to %llu",
		       (unsigned long long)run, (unsigned long long)p->sent_lines,
		       p->sent_lines == 1 ? "" : "s", (unsigned long long)p->requests,
		       p->requests == 1 ? "" : "s", (unsigned long long)p->sent_bytes,
		       p->sink->wire, (unsigned long long)(p->next_seq - 1));
}

static void push_free(struct rt_push *p)
{
	for (unsigned k = 0; k < p->nser; k++)
		free(p->ser[k].pt);
	free(p->ser);
	free(p->dev_ser);
}

/* The engine, its series and its headers (auth: where a header's text
 * lives, as long as p). 0, or the exit code (said). */
static int push_prepare(struct rt_push *p, const char *to, const char *url, char *ubuf, size_t ucap,
                        char *auth, size_t acap, int verbose)
{
	const struct rt_push_sink *sink = push_sink_named(to);
	if (!sink || !(url = push_url(sink, url, ubuf, ucap)))
		return 2;
	memset(p, 0, sizeof(*p));
	p->ckpt_dfd = -1;
	p->sink = sink;
	p->url = url;
	p->verbose = verbose;
	p->batch_max =
	    (size_t)env_seconds("TRACKER_PUSH_BATCH_LINES", BATCH_LINES, 1, 100000); /* lines */
	if (value_series(p)) {
		rt_say("out of memory");
		return 1;
	}
	p->devices = env_seconds("TRACKER_PUSH_PER_DEVICE", 0, 0, 1);
	return push_headers(p, auth, acap);
}

/* The run's attributes and its checkpoint, locked: the lock's descriptor,
 * or -1 with the exit code in *rc (said). */
static int push_attach(struct rt_push *p, struct rt_store *s, const struct rt_runinfo *ri, int *rc)
{
	int lfd = -1;
	if (!(*rc = run_attributes(p, s, ri)) && (lfd = push_checkpoint(p, s, ri->id)) < 0)
		*rc = 1;
	return lfd;
}

int rt_cmd_push(struct rt_store *s, const char *spec, const char *to, const char *url, int verbose)
{
	static struct rt_push p;
	char ubuf[2048], auth[1200];
	int rc = push_prepare(&p, to, url, ubuf, sizeof(ubuf), auth, sizeof(auth), verbose);
	if (rc)
		return rc;
	struct rt_runinfo ri;
	if (rt_run_resolve(s, spec, &ri))
		return 1;
	int lfd = push_attach(&p, s, &ri, &rc);
	if (rc) {
		rt_run_free(&ri);
		return rc;
	}
	rc = push_lines(&p, s, &ri);
	say_pushed(&p, ri.id, rc);
	push_free(&p);
	close(lfd);
	if (p.ckpt_dfd >= 0)
		close(p.ckpt_dfd);
	rt_run_free(&ri);
	return rc ? 1 : 0;
}

/* ---- step by step: the node's exporter (sink/push.h) -------------------- */
struct rt_push_run {
	struct rt_push p;
	struct rt_store *s;
	struct rt_runinfo ri;
	int lfd;
	int staled, stale_waits; /* the end's markers added; not yet sent */
	char url[2048], auth[1200];
};

struct rt_push_run *rt_push_run_open(struct rt_store *s, uint64_t run, const char *to, int *rc)
{
	struct rt_push_run *r = calloc(1, sizeof(*r));
	if (!r) {
		*rc = -ENOMEM;
		return NULL;
	}
	r->s = s;
	r->lfd = -1;
	*rc = push_prepare(&r->p, to, NULL, r->url, sizeof(r->url), r->auth, sizeof(r->auth), 0);
	r->p.once = 1;
	if (!*rc && (*rc = rt_run_load(s, run, &r->ri)) == 0) {
		r->lfd = push_attach(&r->p, s, &r->ri, rc);
		if (*rc)
			rt_run_free(&r->ri);
	}
	if (*rc) {
		push_free(&r->p);
		free(r);
		return NULL;
	}
	r->p.live = 1; /* (a request every 10 s of samples) */
	return r;
}

int rt_push_run_step(struct rt_push_run *r, enum rt_sink_end end)
{
	struct rt_push *p = &r->p;
	struct rt_emitter e;
	int rc = rt_emitter_init(&e, r->s, &r->ri, RT_FMT_CSV, NULL);
	if (rc)
		return rc;
	e.observe = observe;
	e.observe_ctx = p;
	rc = rt_replay_range(&e, p->seen_seq + 1, UINT64_MAX);
	if (rc == RT_E_RANGE)
		rc = 0; /* no lines yet */
	rt_emitter_free(&e);
	/* a run that ended: its series end with it (once, kept until sent;
	 * also when every line went before: a run handed over, then ended
	 * while no node ran, gets its end from the next node's exporter);
	 * one handed over to the node started next goes on: what waits sent */
	if (!rc && end == RT_SINK_ENDED && !r->staled && p->lines_seen) {
		if (add_stale(p))
			return -ENOMEM;
		r->staled = r->stale_waits = 1;
	}
	if (!rc && end != RT_SINK_LIVE && (p->batch_lines || r->stale_waits)) {
		rc = send_batch(p);
		r->stale_waits = rc ? r->stale_waits : 0;
	}
	if (rc)
		return rc;
	return end != RT_SINK_LIVE;
}

const char *rt_push_run_answer(const struct rt_push_run *r, long *status)
{
	*status = r->p.last_status;
	return r->p.last_why;
}

uint64_t rt_push_run_oks(const struct rt_push_run *r)
{
	return r->p.requests;
}

void rt_push_run_close(struct rt_push_run *r)
{
	if (!r)
		return;
	push_free(&r->p);
	if (r->lfd >= 0)
		close(r->lfd);
	if (r->p.ckpt_dfd >= 0)
		close(r->p.ckpt_dfd);
	rt_run_free(&r->ri);
	free(r);
}
