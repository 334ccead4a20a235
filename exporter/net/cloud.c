/*
 * cloud.c - parallel, bounded IMDS probes (see cloud.h).
 *
 * Each vendor's probe runs in its own thread with its own curl handle and
 * the same absolute deadline. A vendor counts only if its answers have the
 * vendor's shape (headers asked, JSON keys present); the first vendor in
 * the table order that answered wins. Fixes over the reference: the AWS
 * account id is read from the JSON of identity-credentials/ec2/info, a
 * Hetzner instance type is not guessed (its metadata has none), and zones
 * are reported where the vendor has them.
 */
#define _GNU_SOURCE
#include "net/cloud.h"

#include <fcntl.h>
#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <time.h>
#include <unistd.h>

#include "rt/fmt.h"
#include "rt/safefile.h"

struct probe {
	const char *vendor;
	void (*fn)(struct probe *);
	long deadline_ms; /* CLOCK_MONOTONIC, ms */
	struct rt_cloud out;
	int found;
};

static long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static size_t on_body(char *p, size_t sz, size_t n, void *ud)
{
	struct rt_buf *b = ud;
	if (b->len + sz * n > 65536)
		return 0; /* metadata is small; anything bigger is hostile */
	rt_buf_put(b, p, sz * n);
	return sz * n;
}

/* One request to the vendor's address (or RT_IMDS_ADDR). 2xx body in out. */
static int get(struct probe *pr, const char *method, const char *host, const char *path,
               const char *h1, const char *h2, struct rt_buf *out)
{
	long left = pr->deadline_ms - now_ms();
	if (left <= 0)
		return -1;
	const char *addr = getenv("RT_IMDS_ADDR");
	char url[512];
	snprintf(url, sizeof(url), "http://%s%s", addr && *addr ? addr : host, path);
	CURL *c = curl_easy_init();
	if (!c)
		return -1;
	struct curl_slist *hl = NULL;
	if (h1)
		hl = curl_slist_append(hl, h1);
	if (h2)
		hl = curl_slist_append(hl, h2);
	out->len = 0;
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hl);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, left);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, left);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_NOPROXY, "*");
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, out);
	if (!strcmp(method, "PUT")) {
		curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, "PUT");
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, "");
	}
	long status = 0;
	int rc = curl_easy_perform(c) == CURLE_OK ? 0 : -1;
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	curl_slist_free_all(hl);
	curl_easy_cleanup(c);
	rt_buf_put(out, "", 0);
	return rc == 0 && status >= 200 && status < 300 && out->p ? 0 : -1;
}

/* ---- the vendors' answers ------------------------------------------------ */

/* The first line of v[0..len) into dst: up to the first control byte, at
 * most cap - 1 bytes (metadata values are identifiers; a value that goes on
 * past a control byte is cut there, never printed with it). */
static size_t take_line(char *dst, size_t cap, const char *v, size_t len)
{
	size_t n = 0;
	while (n < len && n + 1 < cap && (unsigned char)v[n] >= 0x20 && v[n] != 0x7f)
		n++;
	n = rt_utf8_cut(v, n); /* never inside a character */
	memcpy(dst, v, n);
	dst[n] = '\0';
	return n;
}

/* The part of the first line after its last '/' (GCP answers paths). */
static size_t take_last_segment(char *dst, size_t cap, const char *v, size_t len)
{
	size_t line = 0;
	while (line < len && (unsigned char)v[line] >= 0x20 && v[line] != 0x7f)
		line++;
	const char *slash = line ? memrchr(v, '/', line) : NULL;
	size_t skip = slash ? (size_t)(slash - v) + 1 : 0;
	return take_line(dst, cap, v + skip, line - skip);
}

#define TAKE(field, v, len) take_line(c->field, sizeof(c->field), v, len)

static void json_str(char *dst, size_t cap, const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	if (cJSON_IsString(v))
		take_line(dst, cap, v->valuestring, strlen(v->valuestring));
}
#define JSON_STR(field, o, k) json_str(c->field, sizeof(c->field), o, k)

/* Hetzner answers YAML-ish "key: value" lines; quotes and blanks around the
 * value are dropped. */
static void yaml_val(const char *v, size_t len, const char *key, char *dst, size_t cap)
{
	size_t kn = strlen(key);
	for (size_t at = 0; at < len;) {
		const char *line = v + at, *nl = memchr(line, '\n', len - at);
		size_t ll = nl ? (size_t)(nl - line) : len - at;
		at += ll + 1;
		if (ll <= kn || memcmp(line, key, kn) || line[kn] != ':')
			continue;
		size_t i = kn + 1;
		while (i < ll && (line[i] == ' ' || line[i] == '"'))
			i++;
		size_t n = take_line(dst, cap, line + i, ll - i);
		while (n && (dst[n - 1] == '"' || dst[n - 1] == ' '))
			dst[--n] = '\0';
		return;
	}
}

static int take_json(enum rt_cloud_answer what, const cJSON *o, struct rt_cloud *c)
{
	switch (what) {
	case RT_CLOUD_AWS_ACCOUNT: JSON_STR(account, o, "AccountId"); return c->account[0] != '\0';
	case RT_CLOUD_AZURE: {
		const cJSON *cm = cJSON_GetObjectItemCaseSensitive(o, "compute");
		if (!cJSON_IsObject(cm))
			return 0;
		JSON_STR(region, cm, "location");
		JSON_STR(zone, cm, "zone");
		JSON_STR(instance_type, cm, "vmSize");
		JSON_STR(account, cm, "subscriptionId");
		return c->region[0] != '\0';
	}
	case RT_CLOUD_UPCLOUD: {
		const cJSON *cn = cJSON_GetObjectItemCaseSensitive(o, "cloud_name");
		if (!cJSON_IsString(cn) || strcmp(cn->valuestring, "upcloud"))
			return 0;
		JSON_STR(zone, o, "region");
		JSON_STR(region, o, "region");
		return 1;
	}
	case RT_CLOUD_VULTR: {
		const cJSON *r = cJSON_GetObjectItemCaseSensitive(o, "region");
		if (!cJSON_IsObject(r) || !cJSON_GetObjectItemCaseSensitive(o, "instance-v2-id"))
			return 0;
		JSON_STR(region, r, "regioncode");
		return c->region[0] != '\0';
	}
	case RT_CLOUD_OVH:
		if (!cJSON_GetObjectItemCaseSensitive(o, "uuid"))
			return 0;
		JSON_STR(zone, o, "availability_zone");
		JSON_STR(region, o, "region");
		if (!c->region[0])
			memcpy(c->region, c->zone, sizeof(c->region));
		return 1;
	default: return 0;
	}
}

int rt_cloud_take(enum rt_cloud_answer what, const char *v, size_t len, struct rt_cloud *c)
{
	switch (what) {
	case RT_CLOUD_REGION: return TAKE(region, v, len) > 0;
	case RT_CLOUD_ZONE: return TAKE(zone, v, len) > 0;
	case RT_CLOUD_TYPE: return TAKE(instance_type, v, len) > 0;
	case RT_CLOUD_ACCOUNT: return TAKE(account, v, len) > 0;
	case RT_CLOUD_GCP_ZONE: {
		if (!memmem(v, len, "zones/", 6) ||
		    !take_last_segment(c->zone, sizeof(c->zone), v, len))
			return 0;
		memcpy(c->region, c->zone, sizeof(c->region));
		char *dash = strrchr(c->region, '-'); /* us-central1-a -> us-central1 */
		if (dash)
			*dash = '\0';
		return 1;
	}
	case RT_CLOUD_GCP_TYPE:
		return take_last_segment(c->instance_type, sizeof(c->instance_type), v, len) > 0;
	case RT_CLOUD_HCLOUD:
		if (!memmem(v, len, "instance-id:", 12))
			return 0;
		yaml_val(v, len, "region", c->region, sizeof(c->region));
		yaml_val(v, len, "availability-zone", c->zone, sizeof(c->zone));
		return 1; /* no server type in Hetzner's metadata: left unknown */
	case RT_CLOUD_AWS_ACCOUNT:
	case RT_CLOUD_AZURE:
	case RT_CLOUD_UPCLOUD:
	case RT_CLOUD_VULTR:
	case RT_CLOUD_OVH: {
		cJSON *o = cJSON_ParseWithLength(v, len);
		int found = o ? take_json(what, o, c) : 0;
		cJSON_Delete(o);
		return found;
	}
	default: return 0;
	}
}

/* ---- the probes ----------------------------------------------------------- */

/* GET path and parse the answer as what; 1 when it has the vendor's shape. */
static int ask(struct probe *pr, const char *host, const char *path, const char *h1,
               enum rt_cloud_answer what, struct rt_buf *b)
{
	return get(pr, "GET", host, path, h1, NULL, b) == 0 &&
	       rt_cloud_take(what, b->p, b->len, &pr->out);
}

/* A token service (PUT with a TTL header, then GETs carrying the token):
 * AWS IMDSv2 and Alibaba Cloud share this shape, with their own header
 * names and paths. */
struct token_imds {
	const char *ip, *ttl_header, *token_header;
	const char *region, *zone, *type, *account;
	enum rt_cloud_answer account_answer;
};

static void token_probe(struct probe *pr, const struct token_imds *m)
{
	struct rt_buf tok = {0}, b = {0};
	if (get(pr, "PUT", m->ip, "/latest/api/token", m->ttl_header, NULL, &tok) == 0 && tok.len) {
		char h[256], t[200];
		take_line(t, sizeof(t), tok.p, tok.len);
		snprintf(h, sizeof(h), "%s: %s", m->token_header, t);
		if (ask(pr, m->ip, m->region, h, RT_CLOUD_REGION, &b)) {
			pr->found = 1;
			ask(pr, m->ip, m->zone, h, RT_CLOUD_ZONE, &b);
			ask(pr, m->ip, m->type, h, RT_CLOUD_TYPE, &b);
			ask(pr, m->ip, m->account, h, m->account_answer, &b);
		}
	}
	rt_buf_free(&tok);
	rt_buf_free(&b);
}

static void aws(struct probe *pr)
{
	/* the account id comes from the JSON of identity-credentials/ec2/info */
	static const struct token_imds m = {"169.254.169.254",
	                                    "X-aws-ec2-metadata-token-ttl-seconds: 60",
	                                    "X-aws-ec2-metadata-token",
	                                    "/latest/meta-data/placement/region",
	                                    "/latest/meta-data/placement/availability-zone",
	                                    "/latest/meta-data/instance-type",
	                                    "/latest/meta-data/identity-credentials/ec2/info",
	                                    RT_CLOUD_AWS_ACCOUNT};
	token_probe(pr, &m);
}

static void alicloud(struct probe *pr)
{
	static const struct token_imds m = {"100.100.100.200",
	                                    "X-aliyun-ecs-metadata-token-ttl-seconds: 60",
	                                    "X-aliyun-ecs-metadata-token",
	                                    "/latest/meta-data/region-id",
	                                    "/latest/meta-data/zone-id",
	                                    "/latest/meta-data/instance/instance-type",
	                                    "/latest/meta-data/owner-account-id",
	                                    RT_CLOUD_ACCOUNT};
	token_probe(pr, &m);
}

static void gcp(struct probe *pr)
{
	const char *host = "metadata.google.internal", *h = "Metadata-Flavor: Google";
	struct rt_buf b = {0};
	if (ask(pr, host, "/computeMetadata/v1/instance/zone", h, RT_CLOUD_GCP_ZONE, &b)) {
		pr->found = 1;
		ask(pr, host, "/computeMetadata/v1/instance/machine-type", h, RT_CLOUD_GCP_TYPE,
		    &b);
		ask(pr, host, "/computeMetadata/v1/project/project-id", h, RT_CLOUD_ACCOUNT, &b);
	}
	rt_buf_free(&b);
}

/* Vendors whose one answer says it all. */
static void one_answer(struct probe *pr, const char *path, const char *h1,
                       enum rt_cloud_answer what)
{
	struct rt_buf b = {0};
	pr->found = ask(pr, "169.254.169.254", path, h1, what, &b);
	rt_buf_free(&b);
}

static void azure(struct probe *pr)
{
	one_answer(pr, "/metadata/instance?api-version=2021-02-01", "Metadata: true",
	           RT_CLOUD_AZURE);
}

static void hcloud(struct probe *pr)
{
	one_answer(pr, "/hetzner/v1/metadata", NULL, RT_CLOUD_HCLOUD);
}

static void upcloud(struct probe *pr)
{
	one_answer(pr, "/metadata/v1.json", NULL, RT_CLOUD_UPCLOUD);
}

static void vultr(struct probe *pr)
{
	one_answer(pr, "/v1.json", NULL, RT_CLOUD_VULTR);
}

static void ovh(struct probe *pr)
{
	struct rt_buf b = {0};
	if (ask(pr, "169.254.169.254", "/openstack/latest/meta_data.json", NULL, RT_CLOUD_OVH,
	        &b)) {
		pr->found = 1;
		ask(pr, "169.254.169.254", "/latest/meta-data/instance-type", NULL, RT_CLOUD_TYPE,
		    &b);
	}
	rt_buf_free(&b);
}

static void *run_probe(void *arg)
{
	struct probe *pr = arg;
	pr->fn(pr);
	return NULL;
}

void rt_cloud_discover(struct rt_cloud *out, long timeout_ms)
{
	memset(out, 0, sizeof(*out));
	curl_global_init(CURL_GLOBAL_DEFAULT);
	struct probe probes[] = {
	    {.vendor = "aws", .fn = aws},       {.vendor = "gcp", .fn = gcp},
	    {.vendor = "azure", .fn = azure},   {.vendor = "alicloud", .fn = alicloud},
	    {.vendor = "hcloud", .fn = hcloud}, {.vendor = "upcloud", .fn = upcloud},
	    {.vendor = "vultr", .fn = vultr},   {.vendor = "ovh", .fn = ovh},
	};
	size_t n = sizeof(probes) / sizeof(probes[0]);
	pthread_t th[8];
	int started[8] = {0};
	long deadline = now_ms() + timeout_ms;
	for (size_t i = 0; i < n; i++) {
		probes[i].deadline_ms = deadline;
		started[i] = pthread_create(&th[i], NULL, run_probe, &probes[i]) == 0;
	}
	for (size_t i = 0; i < n; i++)
		if (started[i])
			pthread_join(th[i], NULL); /* each is bounded by the deadline */
	for (size_t i = 0; i < n; i++)
		if (started[i] && probes[i].found) {
			*out = probes[i].out;
			snprintf(out->vendor, sizeof(out->vendor), "%s", probes[i].vendor);
			return;
		}
}

/* ---- the cache ----------------------------------------------------------- */

int rt_cloud_parse(const char *text, size_t len, const char *host_id, struct rt_cloud *c)
{
	memset(c, 0, sizeof(*c));
	cJSON *o = cJSON_ParseWithLength(text, len);
	const cJSON *h = cJSON_GetObjectItemCaseSensitive(o, "host_id");
	int rc = -1;
	if (cJSON_IsObject(o) && cJSON_IsString(h) && host_id && *host_id &&
	    !strcmp(h->valuestring, host_id)) {
		static const struct {
			const char *key;
			size_t off, cap;
		} keys[] = {
		    {"cloud_vendor_id", offsetof(struct rt_cloud, vendor), sizeof(c->vendor)},
		    {"cloud_account_id", offsetof(struct rt_cloud, account), sizeof(c->account)},
		    {"cloud_region_id", offsetof(struct rt_cloud, region), sizeof(c->region)},
		    {"cloud_zone_id", offsetof(struct rt_cloud, zone), sizeof(c->zone)},
		    {"cloud_instance_type", offsetof(struct rt_cloud, instance_type),
		     sizeof(c->instance_type)},
		};
		for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
			const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, keys[i].key);
			if (cJSON_IsString(v) && strlen(v->valuestring) < keys[i].cap)
				strcpy((char *)c + keys[i].off, v->valuestring);
		}
		rc = 0; /* vendor "" remembers that no cloud answered on this host */
	}
	cJSON_Delete(o);
	if (rc)
		memset(c, 0, sizeof(*c));
	return rc;
}

int rt_cloud_load(const char *store_dir, const char *host_id, struct rt_cloud *c)
{
	char path[4096], text[4096];
	memset(c, 0, sizeof(*c));
	char why[512];
	snprintf(path, sizeof(path), "%s/cloud.json", store_dir);
	int fd = rt_open_own(path, O_RDONLY, 0, why, sizeof(why));
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, text, sizeof(text));
	close(fd);
	return n >= 0 && (size_t)n < sizeof(text) ? rt_cloud_parse(text, (size_t)n, host_id, c)
	                                          : -1;
}

int rt_cloud_save(const char *store_dir, const char *host_id, const struct rt_cloud *c)
{
	if (!host_id || !*host_id)
		return -1;
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "host_id", host_id);
	cJSON_AddStringToObject(o, "cloud_vendor_id", c->vendor);
	cJSON_AddStringToObject(o, "cloud_account_id", c->account);
	cJSON_AddStringToObject(o, "cloud_region_id", c->region);
	cJSON_AddStringToObject(o, "cloud_zone_id", c->zone);
	cJSON_AddStringToObject(o, "cloud_instance_type", c->instance_type);
	char *text = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	if (!text)
		return -1;
	char path[4096], why[512];
	snprintf(path, sizeof(path), "%s/cloud.json", store_dir);
	struct rt_outfile of;
	int rc = -1;
	/* only into a store of ours: root never writes into another user's */
	int dfd = rt_safe_dir_open(store_dir, 0, why, sizeof(why));
	if (dfd >= 0 && rt_safe_check(dfd, store_dir, S_IFDIR, why, sizeof(why)) == 0 &&
	    rt_outfile_open_at(&of, dfd, "cloud.json", path, 0600, why, sizeof(why)) == 0) {
		size_t len = strlen(text);
		text[len] = '\n'; /* replaces the terminator: written by length */
		if (rt_write_all(of.fd, text, len + 1, 5000) == 0)
			rc = rt_outfile_commit(&of) ? -1 : 0;
		else
			rt_outfile_abort(&of);
	}
	if (dfd >= 0)
		close(dfd);
	free(text);
	return rc;
}
