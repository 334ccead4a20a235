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
#include "cloud.h"

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

static void set(char *dst, size_t cap, const char *v)
{
	size_t n = strcspn(v, "\r\n");
	if (n >= cap)
		n = cap - 1;
	memcpy(dst, v, n);
	dst[n] = '\0';
}

static const char *last_segment(const char *s)
{
	const char *p = strrchr(s, '/');
	return p ? p + 1 : s;
}

static void json_str(char *dst, size_t cap, const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	if (cJSON_IsString(v))
		set(dst, cap, v->valuestring);
}

/* A token service (PUT with a TTL header, then GETs carrying the token):
 * AWS IMDSv2 and Alibaba Cloud share this shape, with their own header
 * names and paths. */
struct token_imds {
	const char *ip, *ttl_header, *token_header;
	const char *region, *zone, *type, *account;
	const char *account_json_key; /* NULL: the account path answers plain text */
};

static void token_probe(struct probe *pr, const struct token_imds *m)
{
	struct rt_buf tok = {0}, b = {0};
	if (get(pr, "PUT", m->ip, "/latest/api/token", m->ttl_header, NULL, &tok) == 0 && tok.len) {
		char h[256];
		snprintf(h, sizeof(h), "%s: %s", m->token_header, tok.p);
		if (get(pr, "GET", m->ip, m->region, h, NULL, &b) == 0) {
			set(pr->out.region, sizeof(pr->out.region), b.p);
			pr->found = 1;
		}
		if (get(pr, "GET", m->ip, m->zone, h, NULL, &b) == 0)
			set(pr->out.zone, sizeof(pr->out.zone), b.p);
		if (get(pr, "GET", m->ip, m->type, h, NULL, &b) == 0)
			set(pr->out.instance_type, sizeof(pr->out.instance_type), b.p);
		if (get(pr, "GET", m->ip, m->account, h, NULL, &b) == 0) {
			if (m->account_json_key) {
				cJSON *o = cJSON_Parse(b.p);
				json_str(pr->out.account, sizeof(pr->out.account), o,
				         m->account_json_key);
				cJSON_Delete(o);
			} else {
				set(pr->out.account, sizeof(pr->out.account), b.p);
			}
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
	                                    "AccountId"};
	token_probe(pr, &m);
}

static void gcp(struct probe *pr)
{
	const char *host = "metadata.google.internal", *h = "Metadata-Flavor: Google";
	struct rt_buf b = {0};
	if (get(pr, "GET", host, "/computeMetadata/v1/instance/zone", h, NULL, &b) == 0 &&
	    strstr(b.p, "zones/")) {
		set(pr->out.zone, sizeof(pr->out.zone), last_segment(b.p));
		snprintf(pr->out.region, sizeof(pr->out.region), "%s", pr->out.zone);
		char *dash = strrchr(pr->out.region, '-'); /* us-central1-a -> us-central1 */
		if (dash)
			*dash = '\0';
		pr->found = 1;
		if (get(pr, "GET", host, "/computeMetadata/v1/instance/machine-type", h, NULL,
		        &b) == 0)
			set(pr->out.instance_type, sizeof(pr->out.instance_type),
			    last_segment(b.p));
		if (get(pr, "GET", host, "/computeMetadata/v1/project/project-id", h, NULL, &b) ==
		    0)
			set(pr->out.account, sizeof(pr->out.account), b.p);
	}
	rt_buf_free(&b);
}

static void azure(struct probe *pr)
{
	struct rt_buf b = {0};
	if (get(pr, "GET", "169.254.169.254", "/metadata/instance?api-version=2021-02-01",
	        "Metadata: true", NULL, &b) == 0) {
		cJSON *o = cJSON_Parse(b.p);
		const cJSON *c = cJSON_GetObjectItemCaseSensitive(o, "compute");
		if (cJSON_IsObject(c)) {
			json_str(pr->out.region, sizeof(pr->out.region), c, "location");
			json_str(pr->out.zone, sizeof(pr->out.zone), c, "zone");
			json_str(pr->out.instance_type, sizeof(pr->out.instance_type), c, "vmSize");
			json_str(pr->out.account, sizeof(pr->out.account), c, "subscriptionId");
			pr->found = pr->out.region[0] != '\0';
		}
		cJSON_Delete(o);
	}
	rt_buf_free(&b);
}

/* Hetzner answers YAML-ish "key: value" lines. */
static void yaml_val(const char *text, const char *key, char *dst, size_t cap)
{
	size_t n = strlen(key);
	for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (!strncmp(p, key, n) && p[n] == ':') {
			const char *v = p + n + 1;
			while (*v == ' ' || *v == '"')
				v++;
			set(dst, cap, v);
			size_t l = strlen(dst);
			while (l && (dst[l - 1] == '"' || dst[l - 1] == ' '))
				dst[--l] = '\0';
			return;
		}
}

static void hcloud(struct probe *pr)
{
	struct rt_buf b = {0};
	if (get(pr, "GET", "169.254.169.254", "/hetzner/v1/metadata", NULL, NULL, &b) == 0 &&
	    strstr(b.p, "instance-id:")) {
		yaml_val(b.p, "region", pr->out.region, sizeof(pr->out.region));
		yaml_val(b.p, "availability-zone", pr->out.zone, sizeof(pr->out.zone));
		pr->found = 1; /* no server type in Hetzner's metadata: left unknown */
	}
	rt_buf_free(&b);
}

static void upcloud(struct probe *pr)
{
	struct rt_buf b = {0};
	if (get(pr, "GET", "169.254.169.254", "/metadata/v1.json", NULL, NULL, &b) == 0) {
		cJSON *o = cJSON_Parse(b.p);
		const cJSON *cn = cJSON_GetObjectItemCaseSensitive(o, "cloud_name");
		if (cJSON_IsString(cn) && !strcmp(cn->valuestring, "upcloud")) {
			json_str(pr->out.zone, sizeof(pr->out.zone), o, "region");
			json_str(pr->out.region, sizeof(pr->out.region), o, "region");
			pr->found = 1;
		}
		cJSON_Delete(o);
	}
	rt_buf_free(&b);
}

static void vultr(struct probe *pr)
{
	struct rt_buf b = {0};
	if (get(pr, "GET", "169.254.169.254", "/v1.json", NULL, NULL, &b) == 0) {
		cJSON *o = cJSON_Parse(b.p);
		const cJSON *r = cJSON_GetObjectItemCaseSensitive(o, "region");
		if (cJSON_IsObject(r) && cJSON_GetObjectItemCaseSensitive(o, "instance-v2-id")) {
			json_str(pr->out.region, sizeof(pr->out.region), r, "regioncode");
			pr->found = pr->out.region[0] != '\0';
		}
		cJSON_Delete(o);
	}
	rt_buf_free(&b);
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
	                                    NULL};
	token_probe(pr, &m);
}

static void ovh(struct probe *pr)
{
	struct rt_buf b = {0};
	if (get(pr, "GET", "169.254.169.254", "/openstack/latest/meta_data.json", NULL, NULL, &b) ==
	    0) {
		cJSON *o = cJSON_Parse(b.p);
		if (cJSON_GetObjectItemCaseSensitive(o, "uuid")) {
			json_str(pr->out.zone, sizeof(pr->out.zone), o, "availability_zone");
			json_str(pr->out.region, sizeof(pr->out.region), o, "region");
			if (!pr->out.region[0])
				snprintf(pr->out.region, sizeof(pr->out.region), "%s",
				         pr->out.zone);
			pr->found = 1;
		}
		cJSON_Delete(o);
		if (pr->found && get(pr, "GET", "169.254.169.254",
		                     "/latest/meta-data/instance-type", NULL, NULL, &b) == 0)
			set(pr->out.instance_type, sizeof(pr->out.instance_type), b.p);
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
	snprintf(path, sizeof(path), "%s/cloud.json", store_dir);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	size_t n = fread(text, 1, sizeof(text), f);
	fclose(f);
	return n < sizeof(text) ? rt_cloud_parse(text, n, host_id, c) : -1;
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
	char path[4096], tmp[4200];
	snprintf(path, sizeof(path), "%s/cloud.json", store_dir);
	snprintf(tmp, sizeof(tmp), "%s.%d.tmp", path, (int)getpid());
	FILE *f = fopen(tmp, "w");
	int rc = -1;
	if (f) {
		int ok = fputs(text, f) >= 0 && fputc('\n', f) != EOF;
		ok = (fclose(f) == 0) && ok;
		rc = ok && rename(tmp, path) == 0 ? 0 : -1;
		if (rc)
			unlink(tmp);
	}
	free(text);
	return rc;
}
