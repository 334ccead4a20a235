/* s3.c - PUT one object with SigV4 (see net.h, sigv4.h). */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "net/net.h"
#include "rt/common.h"
#include "net/sigv4.h"

/* What S3 answered a PUT of key: 0 (2xx), RT_E_CREDS (a session token
 * past its time: new credentials from Sentinel, not a retry with the
 * same ones) or RT_E_HTTP, its status and code in res. */
static int s3_answer(const struct rt_http_resp *resp, const char *key, struct rt_net_result *res)
{
	static const char *const expired[] = {"ExpiredToken", "TokenRefreshRequired",
	                                      "InvalidToken"};
	res->status = resp->status;
	if (resp->status >= 200 && resp->status <= 299)
		return 0;
	const char *code = resp->body.p ? strstr(resp->body.p, "<Code>") : NULL;
	int clen = code ? (int)strcspn(code + 6, "<") : 0;
	snprintf(res->detail, sizeof(res->detail), "S3 PUT %s answered %ld%s%.*s", key,
	         resp->status, code ? ": " : "", clen, code ? code + 6 : "");
	for (size_t i = 0; code && i < sizeof(expired) / sizeof(expired[0]); i++)
		if ((size_t)clen == strlen(expired[i]) &&
		    !memcmp(code + 6, expired[i], (size_t)clen))
			return RT_E_CREDS;
	return RT_E_HTTP;
}

int rt_s3_put(const char *endpoint, const char *region, const struct rt_checkpoint *cp,
              const char *key, const void *data, size_t len, struct rt_net_result *res)
{
	struct rt_buf path = {0}, url = {0}, auth = {0};
	char host[512];
	if (endpoint) { /* path-style: http://127.0.0.1:4568/bucket/key */
		const char *h = strstr(endpoint, "://");
		h = h ? h + 3 : endpoint;
		snprintf(host, sizeof(host), "%.*s", (int)strcspn(h, "/"), h);
		rt_buf_printf(&path, "/%s/", cp->bucket);
	} else {
		snprintf(host, sizeof(host), "%s.s3.%s.amazonaws.com", cp->bucket, region);
		rt_buf_putc(&path, '/');
	}
	rt_buf_puts(&path, key);
	struct rt_buf enc = {0};
	rt_uri_encode(&enc, path.p, 0);
	if (endpoint)
		rt_buf_printf(&url, "%.*s%s", (int)strcspn(endpoint, "?#"), endpoint, enc.p);
	else
		rt_buf_printf(&url, "https://%s%s", host, enc.p);
	/* an endpoint with a trailing slash would double it */
	char hash[65], amz[20];
	rt_sha256_hex(data, len, hash);
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	strftime(amz, sizeof(amz), "%Y%m%dT%H%M%SZ", &tm);
	struct rt_sigv4_header sh[] = {
	    {"host", host},
	    {"x-amz-content-sha256", hash},
	    {"x-amz-date", amz},
	    {"x-amz-security-token", cp->creds.session_token},
	};
	struct rt_sigv4_req r = {"PUT",
	                         path.p,
	                         "",
	                         sh,
	                         4,
	                         hash,
	                         amz,
	                         region,
	                         "s3",
	                         cp->creds.access_key,
	                         cp->creds.secret_key};
	rt_sigv4_authorization(&r, &auth);
	char h_auth[8192], h_sha[128], h_date[64], h_tok[4200],
	    h_type[] = "Content-Type: application/gzip";
	snprintf(h_auth, sizeof(h_auth), "Authorization: %s", auth.p);
	snprintf(h_sha, sizeof(h_sha), "x-amz-content-sha256: %s", hash);
	snprintf(h_date, sizeof(h_date), "x-amz-date: %s", amz);
	snprintf(h_tok, sizeof(h_tok), "x-amz-security-token: %s", cp->creds.session_token);
	const char *hdrs[] = {h_auth, h_sha, h_date, h_tok, h_type, NULL};
	struct rt_http_resp resp;
	res->status = 0;
	res->detail[0] = '\0';
	int rc = rt_http("PUT", url.p, hdrs, data, len, 60, &resp);
	if (rc)
		snprintf(res->detail, sizeof(res->detail), "%.250s: %.250s", host, resp.err);
	rc = rc ? RT_E_NET : s3_answer(&resp, key, res);
	rt_http_resp_free(&resp);
	rt_buf_free(&path);
	rt_buf_free(&enc);
	rt_buf_free(&url);
	rt_buf_free(&auth);
	return rc;
}
