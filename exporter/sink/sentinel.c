/*
 * sentinel.c - the Sentinel API client: start, refresh-credentials, finish.
 *
 * Everything the server returns is hostile: the run id and the upload
 * prefix become object keys and file names, so they are validated first.
 */
#define _GNU_SOURCE
#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "net/net.h"
#include "rt/common.h"
#include "rt/fmt.h"

static int valid_run_id(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > 100 || !strcmp(s, ".") || !strcmp(s, ".."))
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '-' || *s == '_' || *s == '.'))
			return 0;
	return 1;
}

/* "s3://bucket/some/prefix" into bucket and prefix (no slashes at ends). */
static int parse_prefix(const char *uri, struct rt_checkpoint *cp)
{
	if (strncmp(uri, "s3://", 5))
		return -1;
	const char *b = uri + 5, *slash = strchr(b, '/');
	size_t blen = slash ? (size_t)(slash - b) : strlen(b);
	if (blen < 3 || blen > 63)
		return -1;
	for (size_t i = 0; i < blen; i++)
		if (!((b[i] >= 'a' && b[i] <= 'z') || (b[i] >= '0' && b[i] <= '9') || b[i] == '.' ||
		      b[i] == '-'))
			return -1;
	const char *p = slash ? slash + 1 : "";
	while (*p == '/')
		p++;
	size_t plen = strlen(p);
	while (plen && p[plen - 1] == '/')
		plen--;
	if (plen >= sizeof(cp->prefix))
		return -1;
	for (size_t i = 0; i < plen; i++) {
		unsigned char c = (unsigned char)p[i];
		if (c < 0x20 || c == 0x7f || c == '\\')
			return -1;
		if (c == '.' && p[i + 1] == '.' && (i == 0 || p[i - 1] == '/'))
			return -1; /* no ".." path segments */
	}
	memcpy(cp->bucket, b, blen);
	cp->bucket[blen] = '\0';
	memcpy(cp->prefix, p, plen);
	cp->prefix[plen] = '\0';
	return 0;
}

static int parse_creds(const cJSON *c, struct rt_creds *out)
{
	const char *keys[3] = {"access_key", "secret_key", "session_token"};
	char *dst[3] = {out->access_key, out->secret_key, out->session_token};
	size_t cap[3] = {sizeof(out->access_key), sizeof(out->secret_key),
	                 sizeof(out->session_token)};
	for (int i = 0; i < 3; i++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(c, keys[i]);
		if (!cJSON_IsString(v) || !v->valuestring[0] || strlen(v->valuestring) >= cap[i] ||
		    strpbrk(v->valuestring, "\r\n"))
			return -1;
		snprintf(dst[i], cap[i], "%s", v->valuestring);
	}
	const cJSON *e = cJSON_GetObjectItemCaseSensitive(c, "expiration");
	if (!cJSON_IsString(e))
		e = cJSON_GetObjectItemCaseSensitive(c, "expires_at");
	out->expires_ns = 0; /* unknown: refreshed when S3 says it expired */
	if (cJSON_IsString(e))
		rt_parse_time(e->valuestring, &out->expires_ns);
	return 0;
}

static int post(const struct rt_sentinel *s, const char *path, const void *body, size_t len,
                int gzip, struct rt_http_resp *r, struct rt_net_result *res)
{
	char url[2048], auth[4200];
	snprintf(url, sizeof(url), "%s%s", s->base, path);
	snprintf(auth, sizeof(auth), "Authorization: Bearer %s", s->token);
	const char *h[] = {auth, "Content-Type: application/json",
	                   gzip ? "Content-Encoding: gzip" : NULL, NULL};
	res->status = 0;
	res->detail[0] = '\0';
	if (rt_http("POST", url, h, body, len, 30, r)) {
		snprintf(res->detail, sizeof(res->detail), "%.250s: %.250s", s->base, r->err);
		return RT_E_NET;
	}
	res->status = r->status;
	if (r->status < 200 || r->status > 299) {
		snprintf(res->detail, sizeof(res->detail), "%s%s answered %ld", s->base, path,
		         r->status);
		return RT_E_HTTP;
	}
	return 0;
}

int rt_sentinel_parse_start(const char *body, struct rt_checkpoint *cp)
{
	cJSON *o = cJSON_Parse(body);
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(o, "run_id");
	const cJSON *pre = cJSON_GetObjectItemCaseSensitive(o, "upload_uri_prefix");
	struct rt_checkpoint tmp = *cp;
	int ok =
	    cJSON_IsString(id) && valid_run_id(id->valuestring) && cJSON_IsString(pre) &&
	    parse_prefix(pre->valuestring, &tmp) == 0 &&
	    parse_creds(cJSON_GetObjectItemCaseSensitive(o, "upload_credentials"), &tmp.creds) == 0;
	if (ok) {
		snprintf(tmp.sentinel_run, sizeof(tmp.sentinel_run), "%s", id->valuestring);
		*cp = tmp;
	}
	cJSON_Delete(o);
	return ok ? 0 : -1;
}

int rt_sentinel_start(const struct rt_sentinel *s, const char *body, struct rt_checkpoint *cp,
                      struct rt_net_result *res)
{
	struct rt_http_resp r;
	int rc = post(s, "/runs", body, strlen(body), 0, &r, res);
	if (rc == 0 && rt_sentinel_parse_start(r.body.p, cp)) {
		snprintf(res->detail, sizeof(res->detail),
		         "%s/runs answered %ld without a usable run (run_id, upload_uri_prefix or "
		         "upload_credentials missing or unsafe)",
		         s->base, res->status);
		rc = RT_E_PROTOCOL;
	}
	rt_http_resp_free(&r);
	return rc;
}

int rt_sentinel_refresh(const struct rt_sentinel *s, struct rt_checkpoint *cp,
                        struct rt_net_result *res)
{
	char path[256];
	snprintf(path, sizeof(path), "/runs/%s/refresh-credentials", cp->sentinel_run);
	struct rt_http_resp r;
	int rc = post(s, path, "", 0, 0, &r, res);
	if (rc == 0) {
		cJSON *o = cJSON_Parse(r.body.p);
		struct rt_creds c;
		if (parse_creds(cJSON_GetObjectItemCaseSensitive(o, "upload_credentials"), &c)) {
			snprintf(res->detail, sizeof(res->detail),
			         "%s answered refresh-credentials without valid credentials",
			         s->base);
			rc = RT_E_PROTOCOL;
		} else {
			cp->creds = c;
		}
		cJSON_Delete(o);
	}
	rt_http_resp_free(&r);
	return rc;
}

int rt_sentinel_finish(const struct rt_sentinel *s, const struct rt_checkpoint *cp,
                       const struct rt_buf *body, int gzip, struct rt_net_result *res)
{
	char path[256];
	snprintf(path, sizeof(path), "/runs/%s/finish", cp->sentinel_run);
	struct rt_http_resp r;
	int rc = post(s, path, body->p, body->len, gzip, &r, res);
	rt_http_resp_free(&r);
	return rc;
}
