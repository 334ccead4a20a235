/* http.c - a small libcurl wrapper with connection reuse (see net.h). */
#include <curl/curl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "export.h"
#include "net/net.h"
#include "rt/common.h"

static CURL *handle; /* reused: keeps connections alive between requests */

int rt_url_allowed(const char *url)
{
	if (!strncmp(url, "https://", 8))
		return 1;
	if (strncmp(url, "http://", 7))
		return 0;
	const char *h = url + 7;
	return !strncmp(h, "127.0.0.1", 9) || !strncmp(h, "localhost", 9) ||
	       !strncmp(h, "[::1]", 5);
}

int rt_env_value_ok(const char *name, size_t max)
{
	const char *v = getenv(name);
	for (const char *c = v; c && *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f) {
			rt_say("%s holds a control character (a line break?): it cannot go into a "
			       "request; set it without one",
			       name);
			return 0;
		}
	if (v && strlen(v) > max) {
		rt_say("%s is longer than %zu bytes: it is not sent cut; set the whole value "
		       "within that",
		       name, max);
		return 0;
	}
	return 1;
}

static size_t body_cap; /* 0: any size (the request in flight) */

static size_t on_body(char *p, size_t sz, size_t n, void *ud)
{
	struct rt_buf *b = ud;
	if (body_cap && b->len + sz * n > body_cap)
		return 0; /* aborts the transfer: a hostile or wrong answer */
	rt_buf_put(b, p, sz * n);
	return b->oom ? 0 : sz * n;
}

static size_t on_header(char *p, size_t sz, size_t n, void *ud)
{
	struct rt_http_resp *r = ud;
	size_t len = sz * n;
	const char *k = "x-amz-bucket-region:";
	if (len > strlen(k) && !strncasecmp(p, k, strlen(k))) {
		const char *v = p + strlen(k);
		while (*v == ' ')
			v++;
		size_t m = strcspn(v, "\r\n");
		if (m < sizeof(r->amz_region)) {
			memcpy(r->amz_region, v, m);
			r->amz_region[m] = '\0';
		}
	}
	const char *ra = "retry-after:";
	if (len > strlen(ra) && !strncasecmp(p, ra, strlen(ra))) {
		const char *v = p + strlen(ra);
		while (*v == ' ')
			v++;
		long s = 0;
		int digits = 0;
		for (; *v >= '0' && *v <= '9' && digits < 9; v++, digits++)
			s = s * 10 + (*v - '0');
		r->retry_after_s = digits && (*v == '\r' || *v == '\n' || !*v) ? s : -1;
	}
	return len;
}

int rt_http(const char *method, const char *url, const char *const *headers, const void *body,
            size_t len, long timeout_s, struct rt_http_resp *resp)
{
	struct rt_http_limits lim = {(timeout_s < 10 ? timeout_s : 10) * 1000, timeout_s * 1000, 0,
	                             0};
	return rt_http_limited(method, url, headers, body, len, &lim, resp);
}

int rt_http_limited(const char *method, const char *url, const char *const *headers,
                    const void *body, size_t len, const struct rt_http_limits *lim,
                    struct rt_http_resp *resp)
{
	memset(resp, 0, sizeof(*resp));
	resp->retry_after_s = -1;
	if (!rt_url_allowed(url) && !(lim->allow_http && !strncmp(url, "http://", 7))) {
		snprintf(resp->err, sizeof(resp->err),
		         "refusing plain http to a non-loopback address (use https)");
		return RT_E_NET;
	}
	if (!handle) {
		curl_global_init(CURL_GLOBAL_DEFAULT);
		handle = curl_easy_init();
		if (!handle) {
			snprintf(resp->err, sizeof(resp->err), "cannot initialise libcurl");
			return RT_E_NET;
		}
	}
	CURL *c = handle;
	curl_easy_reset(c);
	struct curl_slist *hl = NULL;
	for (int i = 0; headers && headers[i]; i++)
		hl = curl_slist_append(hl, headers[i]);
	hl = curl_slist_append(hl, "Expect:"); /* no 100-continue round trip */
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hl);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, lim->total_ms > 0 ? lim->total_ms : 1L);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS,
	                 lim->connect_ms > 0 && lim->connect_ms < lim->total_ms ? lim->connect_ms
	                                                                        : lim->total_ms);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &resp->body);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, resp);
	if (!strcmp(method, "HEAD")) {
		curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
	} else if (!strcmp(method, "PUT") || !strcmp(method, "POST")) {
		curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body ? body : "");
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	}
	body_cap = lim->max_body;
	CURLcode rc = curl_easy_perform(c);
	body_cap = 0;
	curl_slist_free_all(hl);
	if (rc != CURLE_OK) {
		snprintf(resp->err, sizeof(resp->err), "%s", curl_easy_strerror(rc));
		return RT_E_NET;
	}
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &resp->status);
	rt_buf_put(&resp->body, "", 0); /* NUL-terminated even when empty */
	return 0;
}

void rt_http_resp_free(struct rt_http_resp *r)
{
	rt_buf_free(&r->body);
}
