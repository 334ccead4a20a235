/*
 * push.c - `rt-export push RUN --to prometheus`: a run's samples into a
 * metrics engine by Prometheus remote write 1.0 (protobuf, snappy).
 *
 * What is sent is the fleet column of values.def: each value with a FLEET
 * name is one series per run, labelled with the run's resource (job, host,
 * cloud, run id) and the row's one attribute. A SUM is the cumulative sum
 * of the per-interval values since the run's first line, so the replay
 * always starts at the first line; samples are sent from the checkpoint on.
 *
 * Exactly once: the checkpoint (<store>/push/prometheus-RUN-HASH, HASH of
 * the URL: one per engine) holds the first sample not yet confirmed; it
 * moves only after a 2xx. A batch sent twice (killed between the answer
 * and the checkpoint) is the same samples with the same values, which the
 * engine stores once. Retries: no answer, 429 and 5xx, with backoff and
 * Retry-After, for at most RT_PUSH_RETRY_S seconds; never 4xx others.
 */
#define _GNU_SOURCE
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <snappy-c.h>
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
#include "remote_write.pb-c.h"
#include "rt/common.h"
#include "rt/fields.h"
#include "rt/runmeta.h"
#include "rt/sysroot.h"

#define BATCH_LINES 500         /* lines per request (TRACKER_PUSH_BATCH_LINES) */
#define BATCH_NS 10000000000ull /* a live run: a request every 10 s of samples */
#define RT_PUSH_RETRY_S 300     /* give a batch up (resumable) after this long */
#define RT_PUSH_MAX_BACKOFF 30  /* seconds */
#define MAX_LABELS 12

struct series {
	unsigned id;     /* value id */
	char name[128];  /* Prometheus name */
	double sum;      /* SUM: so far */
	int64_t last_ms; /* the timestamp of its last sample (sent or not) */
	size_t n, cap;   /* samples in the batch */
	Prometheus__Sample *s;
	Prometheus__Sample **sp;
};

struct pusher {
	const char *url;
	const char *const *headers;
	struct series ser[RT_NV];
	unsigned nser;
	char lname[MAX_LABELS][64], lvalue[MAX_LABELS][256]; /* resource labels, sorted */
	unsigned nlab;
	uint64_t next_seq;                /* first sample the engine has not confirmed */
	uint64_t batch_last, batch_wall0; /* wall ns of the batch's first line */
	size_t batch_lines, batch_max;
	uint64_t sent_lines, sent_bytes, requests;
	char ckpt[4200];
	int failed; /* said once */
	int live;   /* following a run being recorded: a request every 10 s */
	int verbose;
};

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

/* A label name from an OpenTelemetry attribute (host.name -> host_name). */
static void label_name(char *out, size_t cap, const char *attr)
{
	size_t n = 0;
	for (; *attr && n + 1 < cap; attr++)
		out[n++] = (*attr >= 'a' && *attr <= 'z') || (*attr >= 'A' && *attr <= 'Z') ||
		                   (*attr >= '0' && *attr <= '9')
		               ? *attr
		               : '_';
	out[n] = '\0';
}

static void add_label(struct pusher *p, const char *name, const char *value)
{
	if (!value || !*value || p->nlab >= MAX_LABELS)
		return; /* an empty label is no label */
	unsigned i = p->nlab++;
	snprintf(p->lname[i], sizeof(p->lname[i]), "%s", name);
	snprintf(p->lvalue[i], sizeof(p->lvalue[i]), "%s", value);
}

static int cmp_label(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static uint64_t fnv(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

/* The run's resource: job, instance, host, cloud, run id and store. */
static void resource(struct pusher *p, struct rt_store *s, const struct rt_runinfo *ri)
{
	cJSON *m = cJSON_Parse(ri->meta_json);
	const cJSON *h = cJSON_GetObjectItemCaseSensitive(m, "host");
	const cJSON *hn = cJSON_GetObjectItemCaseSensitive(h, "hostname");
	const cJSON *hid = cJSON_GetObjectItemCaseSensitive(h, "host_id");
	const char *host = cJSON_IsString(hn) ? hn->valuestring : NULL;
	char run[32];
	snprintf(run, sizeof(run), "%llu", (unsigned long long)ri->id);
	add_label(p, "job", ri->job_name && *ri->job_name ? ri->job_name : "resource-tracker");
	add_label(p, "instance", host);
	add_label(p, "host_name", host);
	add_label(p, "rt_run_id", run);
	/* run ids count from 1 in every store: the store's random id tells two
	 * stores' run 1 apart (an older store without one: its directory) */
	const char *key = rt_store_ring_key(s), *hash = strchr(key, '#');
	char sid[17];
	if (hash && strlen(hash + 1) >= 12)
		snprintf(sid, sizeof(sid), "%.12s", hash + 1);
	else
		snprintf(sid, sizeof(sid), "%012llx", (unsigned long long)(fnv(key) >> 16));
	add_label(p, "rt_store", sid);
	struct rt_cloud c;
	memset(&c, 0, sizeof(c));
	if (cJSON_IsString(hid) && rt_cloud_load(rt_store_dir(s), hid->valuestring, &c) == 0) {
		add_label(p, "cloud_provider", c.vendor);
		add_label(p, "cloud_region", c.region);
		add_label(p, "host_type", c.instance_type);
	}
	cJSON_Delete(m);
}

/* ---- the checkpoint ---------------------------------------------------- */

static uint64_t ckpt_load(const char *path)
{
	char buf[64];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 1;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 1;
	buf[n] = '\0';
	unsigned long long v;
	return sscanf(buf, "next_seq %llu", &v) == 1 && v >= 1 ? v : 1;
}

/* Written to a temporary file, synced and renamed over: never torn. */
static int ckpt_save(const char *path, uint64_t next)
{
	char tmp[4300], text[64];
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	int n = snprintf(text, sizeof(text), "next_seq %llu\n", (unsigned long long)next);
	int ok = write(fd, text, (size_t)n) == n && fsync(fd) == 0;
	close(fd);
	if (!ok || rename(tmp, path))
		return -EIO;
	return 0;
}

/* ---- one request -------------------------------------------------------- */

static int send_batch(struct pusher *p)
{
	Prometheus__TimeSeries ts[RT_NV], *tsp[RT_NV];
	Prometheus__Label lab[RT_NV][MAX_LABELS + 2], *labp[RT_NV][MAX_LABELS + 2];
	size_t nts = 0;
	for (unsigned k = 0; k < p->nser; k++) {
		struct series *s = &p->ser[k];
		if (!s->n)
			continue;
		const struct rt_value_info *v = rt_value_info(s->id);
		prometheus__time_series__init(&ts[nts]);
		size_t nl = 0;
		prometheus__label__init(&lab[nts][nl]);
		lab[nts][nl].name = "__name__";
		lab[nts][nl++].value = s->name;
		static char attr[RT_NV][64];
		if (v->fleet_attr) {
			label_name(attr[k], sizeof(attr[k]), v->fleet_attr);
			prometheus__label__init(&lab[nts][nl]);
			lab[nts][nl].name = attr[k];
			lab[nts][nl++].value = (char *)v->fleet_attr_value;
		}
		for (unsigned i = 0; i < p->nlab; i++) {
			prometheus__label__init(&lab[nts][nl]);
			lab[nts][nl].name = p->lname[i];
			lab[nts][nl++].value = p->lvalue[i];
		}
		for (size_t i = 0; i < nl; i++)
			labp[nts][i] = &lab[nts][i];
		qsort(labp[nts], nl, sizeof(labp[nts][0]), cmp_label); /* by name first */
		ts[nts].n_labels = nl;
		ts[nts].labels = labp[nts];
		for (size_t i = 0; i < s->n; i++)
			s->sp[i] = &s->s[i];
		ts[nts].n_samples = s->n;
		ts[nts].samples = s->sp;
		tsp[nts] = &ts[nts];
		nts++;
	}
	if (!nts)
		return 0;
	Prometheus__WriteRequest wr;
	prometheus__write_request__init(&wr);
	wr.n_timeseries = nts;
	wr.timeseries = tsp;
	size_t plen = prometheus__write_request__get_packed_size(&wr);
	size_t clen = snappy_max_compressed_length(plen);
	uint8_t *raw = malloc(plen ? plen : 1);
	char *comp = malloc(clen);
	if (!raw || !comp) {
		free(raw);
		free(comp);
		return -ENOMEM;
	}
	prometheus__write_request__pack(&wr, raw);
	if (snappy_compress((const char *)raw, plen, comp, &clen) != SNAPPY_OK) {
		free(raw);
		free(comp);
		return -EIO;
	}
	free(raw);
	struct rt_http_limits lim = {5000, 30000, 64 << 10, 1};
	double waited = 0, backoff = 0.5;
	int rc;
	for (;;) {
		struct rt_http_resp r;
		rc = rt_http_limited("POST", p->url, p->headers, comp, clen, &lim, &r);
		long st = rc ? 0 : r.status;
		if (st >= 200 && st < 300) {
			rt_http_resp_free(&r);
			rc = 0;
			break;
		}
		/* Prometheus before 2.45 answers 500 for samples older than it takes
		 * ("too old sample", "out of bounds"): no retry can help those */
		const char *body = r.body.p ? r.body.p : "";
		int too_old = strstr(body, "too old") || strstr(body, "out of bounds");
		int retry = (st == 0 || st == 429 || st >= 500) && !too_old;
		if (!retry || waited >= RT_PUSH_RETRY_S) {
			/* one line per run: the batch stays for the next push */
			if (!p->failed) {
				char why[201];
				size_t n = 0;
				for (const char *c = body; *c && n + 1 < sizeof(why); c++)
					why[n++] = (unsigned char)*c < 0x20 ? ' ' : *c;
				while (n && why[n - 1] == ' ')
					n--;
				why[n] = '\0';
				if (st)
					rt_say(
					    "the metrics engine refused samples %llu..%llu of this "
					    "run "
					    "(HTTP %ld: %s)%s; rt-export push resumes there%s",
					    (unsigned long long)p->next_seq,
					    (unsigned long long)p->batch_last, st, why,
					    retry ? ", and kept refusing" : "",
					    too_old
					        ? " (they are older than the engine takes: see its "
					          "out-of-order window)"
					        : "");
				else
					rt_say("no answer from %s (%s) for %.0f s; rt-export push "
					       "resumes "
					       "at sample %llu",
					       p->url, r.err, waited,
					       (unsigned long long)p->next_seq);
			}
			p->failed = 1;
			rt_http_resp_free(&r);
			rc = RT_E_NET;
			break;
		}
		double wait = backoff;
		if (r.retry_after_s >= 0)
			wait = r.retry_after_s > 60 ? 60 : (double)r.retry_after_s;
		rt_http_resp_free(&r);
		if (p->verbose)
			rt_say("push: %s; again in %.1f s", st ? "the engine is busy" : "no answer",
			       wait);
		struct timespec ts2 = {(time_t)wait, (long)((wait - (double)(time_t)wait) * 1e9)};
		nanosleep(&ts2, NULL);
		waited += wait;
		backoff = backoff * 2 > RT_PUSH_MAX_BACKOFF ? RT_PUSH_MAX_BACKOFF : backoff * 2;
	}
	free(comp);
	if (rc)
		return rc;
	p->requests++;
	p->sent_bytes += clen;
	p->sent_lines += p->batch_lines;
	p->next_seq = p->batch_last + 1;
	if (ckpt_save(p->ckpt, p->next_seq))
		rt_say("cannot write the push checkpoint %s; a later push sends these samples "
		       "again (the engine keeps them once)",
		       p->ckpt);
	for (unsigned k = 0; k < p->nser; k++)
		p->ser[k].n = 0;
	p->batch_lines = 0;
	return 0;
}

/* ---- the lines ---------------------------------------------------------- */

static int observe(void *ctx, const struct rt_derived *d)
{
	struct pusher *p = ctx;
	int send = d->seq >= p->next_seq;
	int64_t ms = (int64_t)(d->wall_ns / 1000000u);
	for (unsigned k = 0; k < p->nser; k++) {
		struct series *s = &p->ser[k];
		double v;
		if (!rt_value(d, s->id, &v))
			continue;
		const struct rt_value_info *vi = rt_value_info(s->id);
		v *= vi->fleet_scale;
		if (vi->fleet_sum)
			v = s->sum += v;
		/* an engine keeps one value per series and millisecond: a line in
		 * the same ms as the one before (the final sample right after the
		 * last periodic one) goes 1 ms later, so neither is lost (the same
		 * on every push: it is decided from the run's first line) */
		int64_t t = ms > s->last_ms ? ms : s->last_ms + 1;
		s->last_ms = t;
		if (!send || !isfinite(v))
			continue;
		if (s->n == s->cap) {
			size_t cap = s->cap ? s->cap * 2 : 64;
			Prometheus__Sample *ns = realloc(s->s, cap * sizeof(*ns));
			if (!ns)
				return -ENOMEM;
			s->s = ns;
			Prometheus__Sample **np = realloc(s->sp, cap * sizeof(*np));
			if (!np)
				return -ENOMEM;
			s->sp = np;
			s->cap = cap;
		}
		prometheus__sample__init(&s->s[s->n]);
		s->s[s->n].value = v;
		s->s[s->n].timestamp = t;
		s->n++;
	}
	if (!send)
		return 0;
	p->batch_last = d->seq;
	if (!p->batch_lines++)
		p->batch_wall0 = d->wall_ns;
	if (p->batch_lines >= p->batch_max || (p->live && d->wall_ns - p->batch_wall0 >= BATCH_NS))
		return send_batch(p);
	return 0;
}

/* "Authorization: ..." from the environment, into buf; NULL when none. */
static const char *auth_header(char *buf, size_t cap)
{
	const char *tok = getenv("TRACKER_REMOTE_WRITE_BEARER_TOKEN");
	const char *user = getenv("TRACKER_REMOTE_WRITE_USERNAME");
	const char *pass = getenv("TRACKER_REMOTE_WRITE_PASSWORD");
	if (tok && *tok) {
		snprintf(buf, cap, "Authorization: Bearer %s", tok);
		return buf;
	}
	if (user && *user) {
		char plain[600];
		static const char b64[] =
		    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
		int n = snprintf(plain, sizeof(plain), "%s:%s", user, pass ? pass : "");
		if (n < 0 || (size_t)n >= sizeof(plain))
			return NULL;
		size_t o = (size_t)snprintf(buf, cap, "Authorization: Basic ");
		for (int i = 0; i < n && o + 5 < cap; i += 3) {
			unsigned x = (unsigned char)plain[i] << 16;
			if (i + 1 < n)
				x |= (unsigned char)plain[i + 1] << 8;
			if (i + 2 < n)
				x |= (unsigned char)plain[i + 2];
			buf[o++] = b64[x >> 18 & 63];
			buf[o++] = b64[x >> 12 & 63];
			buf[o++] = i + 1 < n ? b64[x >> 6 & 63] : '=';
			buf[o++] = i + 2 < n ? b64[x & 63] : '=';
		}
		buf[o] = '\0';
		return buf;
	}
	return NULL;
}

int rt_cmd_push(struct rt_store *s, const char *spec, const char *to, const char *url, int verbose)
{
	if (!to || strcmp(to, "prometheus")) {
		rt_say("push --to must be prometheus (got '%s')", to ? to : "nothing");
		return 2;
	}
	if (!url || !*url)
		url = getenv("TRACKER_REMOTE_WRITE_URL");
	if (!url || !*url) {
		rt_say("push --to prometheus needs --url URL or TRACKER_REMOTE_WRITE_URL (e.g. "
		       "http://HOST:9090/api/v1/write)");
		return 2;
	}
	if (strncmp(url, "http://", 7) && strncmp(url, "https://", 8)) {
		rt_say("the remote write URL must start with http:// or https:// (got '%.100s')",
		       url);
		return 2;
	}
	struct rt_runinfo ri;
	if (rt_run_resolve(s, spec, &ri))
		return 1;
	static struct pusher p;
	memset(&p, 0, sizeof(p));
	p.url = url;
	p.verbose = verbose;
	p.batch_max = BATCH_LINES;
	const char *bl = getenv("TRACKER_PUSH_BATCH_LINES");
	if (bl && *bl) {
		char *end;
		long v = strtol(bl, &end, 10);
		if (*end || v < 1 || v > 100000)
			rt_say(
			    "TRACKER_PUSH_BATCH_LINES='%.40s' is not a number from 1 to 100000; %d "
			    "lines per request",
			    bl, BATCH_LINES);
		else
			p.batch_max = (size_t)v;
	}
	for (unsigned id = 0; id < RT_NV; id++) {
		const struct rt_value_info *v = rt_value_info(id);
		if (!v->fleet)
			continue;
		p.ser[p.nser].id = id;
		rt_prom_name(p.ser[p.nser].name, sizeof(p.ser[p.nser].name), v);
		p.nser++;
	}
	resource(&p, s, &ri);
	char auth[1200];
	const char *headers[] = {"Content-Type: application/x-protobuf",
	                         "Content-Encoding: snappy",
	                         "X-Prometheus-Remote-Write-Version: 0.1.0",
	                         "User-Agent: rt/" RT_VERSION,
	                         auth_header(auth, sizeof(auth)),
	                         NULL};
	p.headers = headers;
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s/push", rt_store_dir(s));
	mkdir(dir, 0700);
	snprintf(p.ckpt, sizeof(p.ckpt), "%s/prometheus-%llu-%016llx", dir,
	         (unsigned long long)ri.id, (unsigned long long)fnv(url));
	/* one pusher per run and engine */
	char lock[4300];
	snprintf(lock, sizeof(lock), "%s.lock", p.ckpt);
	int lfd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (lfd < 0 || flock(lfd, LOCK_EX | LOCK_NB)) {
		rt_say("another rt-export push of run %llu to this engine is running",
		       (unsigned long long)ri.id);
		if (lfd >= 0)
			close(lfd);
		rt_run_free(&ri);
		return 1;
	}
	p.next_seq = ckpt_load(p.ckpt);
	if (verbose && p.next_seq > 1)
		rt_say("push: run %llu resumes at sample %llu", (unsigned long long)ri.id,
		       (unsigned long long)p.next_seq);
	struct rt_emitter e;
	int rc = rt_emitter_init(&e, s, &ri, RT_FMT_CSV, NULL);
	if (rc == 0) {
		e.observe = observe;
		e.observe_ctx = &p;
		if (rt_run_status_of(ri.status) == RT_RUN_RUNNING &&
		    rt_run_recorder_alive(s, ri.id)) {
			/* a live run (the recorder started us): follow it to its end,
			 * a request every 10 s of samples */
			p.live = 1;
			rc = rt_follow(&e, 1);
		} else {
			struct rt_replay_opts o = {0, 0, 1};
			rc = rt_replay(&e, &o);
			if (rc == RT_E_RANGE)
				rc = 0; /* no lines yet */
		}
		if (rc == 0 && p.batch_lines)
			rc = send_batch(&p);
		rt_say_read_notes(&e.notes, ri.id, e.lines);
		rt_emitter_free(&e);
	}
	if (rc && !p.failed && rc != RT_E_LAYOUT)
		rt_say("push of run %llu stopped: %s", (unsigned long long)ri.id, rt_strerror(rc));
	if (verbose && !rc)
		rt_say(
		    "push: run %llu: %llu lines in %llu requests, %llu bytes (snappy); the engine "
		    "has every sample up to %llu",
		    (unsigned long long)ri.id, (unsigned long long)p.sent_lines,
		    (unsigned long long)p.requests, (unsigned long long)p.sent_bytes,
		    (unsigned long long)(p.next_seq - 1));
	for (unsigned k = 0; k < p.nser; k++) {
		free(p.ser[k].s);
		free(p.ser[k].sp);
	}
	close(lfd);
	rt_run_free(&ri);
	return rc ? 1 : 0;
}
