/*
 * keeper.c - the cheapest cloud servers that fit, from the Spare Cores
 * Keeper API (reference.md §9).
 *
 *   GET {TRACKER_KEEPER_URL}/servers?vcpus_min=C&memory_min=G
 *       &order_by=min_price_ondemand&order_dir=asc&limit=N
 *       [&gpu_min=G&gpu_memory_total=V]
 *   GET {TRACKER_KEEPER_URL}/server/{vendor}/{instance}/prices
 *
 * Network only when asked (--servers), TLS verified, 2 s to connect and
 * 10 s for everything, no retries: a slow or absent Keeper costs the user
 * seconds, never minutes. Unlike the Python package, memory_min is the
 * recommended memory in GiB with decimals (the API takes a float), so a
 * server never falls short by rounding 1.4 GiB down to 1.
 */
#define _GNU_SOURCE
#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "net/net.h"
#include "rt/common.h"

#define KEEPER_DEFAULT "https://keeper.sparecores.net"
#define KEEPER_MAX_BODY (4u << 20)

long rt_keeper_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static const char *base_url(void)
{
	const char *u = getenv("TRACKER_KEEPER_URL");
	return u && *u ? u : KEEPER_DEFAULT;
}

/* GET base+path within the deadline; 2xx JSON body in resp. */
static int get(const char *path, long deadline_ms, struct rt_http_resp *resp, char *why, size_t cap)
{
	char url[1024];
	memset(resp, 0, sizeof(*resp));
	const char *b = base_url();
	size_t bl = strlen(b);
	while (bl && b[bl - 1] == '/')
		bl--;
	for (size_t i = 0; i < bl; i++)
		if ((unsigned char)b[i] <= 0x20 || b[i] == 0x7f) {
			snprintf(why, cap, "TRACKER_KEEPER_URL holds a space or control character");
			return RT_E_CONFIG;
		}
	if (bl > 900) { /* sent whole or not at all */
		snprintf(why, cap, "TRACKER_KEEPER_URL is longer than 900 bytes");
		return RT_E_CONFIG;
	}
	if (snprintf(url, sizeof(url), "%.*s%s", (int)bl, b, path) >= (int)sizeof(url) ||
	    (strncmp(url, "https://", 8) && strncmp(url, "http://", 7))) {
		snprintf(why, cap, "TRACKER_KEEPER_URL is not an http(s) URL");
		return RT_E_CONFIG;
	}
	long left = deadline_ms - rt_keeper_now_ms();
	if (left <= 0) {
		snprintf(why, cap, "the Keeper API did not answer within 10 s");
		return RT_E_NET;
	}
	struct rt_http_limits lim = {left < 2000 ? left : 2000, left, KEEPER_MAX_BODY, 0};
	const char *hdr[] = {"X-Application-ID: resource-tracker", "Accept: application/json",
	                     NULL};
	int rc = rt_http_limited("GET", url, hdr, NULL, 0, &lim, resp);
	if (rc) {
		snprintf(why, cap, "the Keeper API at %.*s cannot be reached: %s", (int)bl, b,
		         resp->err);
		return RT_E_NET;
	}
	if (resp->status < 200 || resp->status > 299) {
		snprintf(why, cap, "the Keeper API answered HTTP %ld", resp->status);
		return RT_E_HTTP;
	}
	return 0;
}

static void copy_str(char *dst, size_t cap, const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	dst[0] = '\0';
	if (cJSON_IsString(v))
		snprintf(dst, cap, "%s", v->valuestring);
}

static double num(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	return cJSON_IsNumber(v) && isfinite(v->valuedouble) ? v->valuedouble : NAN;
}

int rt_keeper_parse_servers(const char *body, size_t len, unsigned max, struct rt_server **out,
                            size_t *count)
{
	*out = NULL;
	*count = 0;
	cJSON *a = cJSON_ParseWithLength(body, len);
	if (!cJSON_IsArray(a)) {
		cJSON_Delete(a);
		return RT_E_PROTOCOL;
	}
	int n = cJSON_GetArraySize(a);
	struct rt_server *v = calloc(n > 0 ? (size_t)n : 1, sizeof(*v));
	if (!v) {
		cJSON_Delete(a);
		return -ENOMEM;
	}
	size_t k = 0;
	const cJSON *o;
	cJSON_ArrayForEach(o, a)
	{
		if (k >= max)
			break;
		if (!cJSON_IsObject(o))
			continue;
		struct rt_server *s = &v[k];
		copy_str(s->vendor_id, sizeof(s->vendor_id), o, "vendor_id");
		copy_str(s->api_reference, sizeof(s->api_reference), o, "api_reference");
		copy_str(s->display_name, sizeof(s->display_name), o, "display_name");
		s->vcpus = num(o, "vcpus");
		s->memory_amount = num(o, "memory_amount");
		s->gpu_count = num(o, "gpu_count");
		s->min_price_ondemand = num(o, "min_price_ondemand");
		if (!cJSON_PrintPreallocated((cJSON *)o, s->raw, (int)sizeof(s->raw), 0))
			s->raw[0] = '\0';
		if (!s->vendor_id[0] || !s->api_reference[0])
			continue; /* not a server we could name */
		k++;
	}
	cJSON_Delete(a);
	if (n > 0 && k == 0) {
		free(v);
		return RT_E_PROTOCOL;
	}
	*out = v;
	*count = k;
	return 0;
}

int rt_keeper_servers(long cpu, long memory_mib, long gpu, long vram_mib, unsigned n,
                      long deadline_ms, struct rt_server **out, size_t *count, char *why,
                      size_t cap)
{
	char path[512];
	int m = snprintf(path, sizeof(path),
	                 "/servers?vcpus_min=%ld&memory_min=%.3f&order_by=min_price_ondemand"
	                 "&order_dir=asc&limit=%u",
	                 cpu, (double)memory_mib / 1024.0, n);
	if (gpu > 0)
		snprintf(path + m, sizeof(path) - (size_t)m, "&gpu_min=%ld&gpu_memory_total=%.3f",
		         gpu, (double)vram_mib / 1024.0);
	struct rt_http_resp resp;
	int rc = get(path, deadline_ms, &resp, why, cap);
	if (rc == 0) {
		rc = rt_keeper_parse_servers(resp.body.p, resp.body.len, n, out, count);
		if (rc == RT_E_PROTOCOL)
			snprintf(why, cap, "the Keeper API's answer is not a list of servers");
		else if (rc)
			snprintf(why, cap, "out of memory");
	}
	rt_http_resp_free(&resp);
	return rc;
}

int rt_keeper_parse_prices(const char *body, size_t len, const char *region, double *price)
{
	cJSON *a = cJSON_ParseWithLength(body, len);
	if (!cJSON_IsArray(a)) {
		cJSON_Delete(a);
		return RT_E_PROTOCOL;
	}
	double any = NAN, here = NAN;
	const cJSON *o;
	cJSON_ArrayForEach(o, a)
	{
		const cJSON *al = cJSON_GetObjectItemCaseSensitive(o, "allocation");
		const cJSON *os = cJSON_GetObjectItemCaseSensitive(o, "operating_system");
		const cJSON *rg = cJSON_GetObjectItemCaseSensitive(o, "region_id");
		double p = num(o, "price");
		if (!cJSON_IsString(al) || strcmp(al->valuestring, "ondemand") ||
		    !cJSON_IsString(os) || strcmp(os->valuestring, "Linux") || isnan(p) || p < 0)
			continue;
		if (isnan(any))
			any = p;
		if (isnan(here) && region && cJSON_IsString(rg) && !strcmp(rg->valuestring, region))
			here = p;
	}
	cJSON_Delete(a);
	*price = isnan(here) ? any : here;
	return isnan(*price) ? RT_E_NOTFOUND : 0;
}

int rt_keeper_price(const char *vendor, const char *instance, const char *region, long deadline_ms,
                    double *price, char *why, size_t cap)
{
	CURL *c = curl_easy_init();
	char *ev = c ? curl_easy_escape(c, vendor, 0) : NULL;
	char *ei = c ? curl_easy_escape(c, instance, 0) : NULL;
	char path[512];
	int rc = -ENOMEM;
	if (ev && ei) {
		snprintf(path, sizeof(path), "/server/%s/%s/prices", ev, ei);
		struct rt_http_resp resp;
		rc = get(path, deadline_ms, &resp, why, cap);
		if (rc == 0) {
			rc = rt_keeper_parse_prices(resp.body.p, resp.body.len, region, price);
			if (rc)
				snprintf(why, cap,
				         "the Keeper API has no Linux on-demand price for %s %s",
				         vendor, instance);
		}
		rt_http_resp_free(&resp);
	}
	curl_free(ev);
	curl_free(ei);
	if (c)
		curl_easy_cleanup(c);
	return rc;
}
