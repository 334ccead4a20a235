/*
 * push_http.c - where a push sends its points and how: the sink named,
 * the endpoint's URL (Prometheus remote write, OTLP/HTTP and the OTEL_*
 * variables), the request headers, the credentials and their checks.
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
#include "rt/sysroot.h"
#include "sink/push.h"
#include "sink/push_int.h"

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

/* Value [s, end) of an OTEL_* list, percent-decoded, into out (cap
 * bytes, NUL-terminated); its length. */
/* Percent-decode s..end into out: its length, or SIZE_MAX when it does not
 * fit in cap (never cut). */
static size_t pct_decode(const char *s, const char *end, char *out, size_t cap)
{
	size_t o = 0;
	for (const char *c = s; c < end; c++) {
		if (o + 1 >= cap) {
			out[0] = '\0';
			return SIZE_MAX;
		}
		int hi, lo;
		if (*c == '%' && end - c >= 3 &&
		    sscanf((char[3]){c[1], c[2], 0}, "%1x%1x", &hi, &lo) == 2) {
			out[o++] = (char)(hi * 16 + lo);
			c += 2;
		} else {
			out[o++] = *c;
		}
	}
	out[o] = '\0';
	return o;
}

/* OTEL_EXPORTER_OTLP_HEADERS: "k=v,k2=v2" (values percent-encoded) into
 * p's headers from slot *n on. 0, or -1 (said) when malformed. */
static int otlp_headers(struct rt_push *p, const char *var, size_t *n)
{
	const char *v = getenv(var);
	if (!v || !*v)
		return 0;
	const char *s = v;
	while (*s) {
		const char *e = strchr(s, ','), *end = e ? e : s + strlen(s);
		const char *eq = memchr(s, '=', (size_t)(end - s));
		while (s < end && *s == ' ')
			s++;
		if (!eq || eq == s || *n + 2 >= RT_ARRAY_LEN(p->headers) || *n >= 8) {
			rt_say("%s is not key=value,...: '%.60s'; OTLP is off for this push", var,
			       v);
			return -1;
		}
		char *h = p->hdr_store[*n];
		size_t o = 0, cap = RT_PUSH_HEADER_MAX + 1;
		const char *ke = eq;
		while (ke > s && ke[-1] == ' ')
			ke--;
		if ((size_t)(ke - s) + 4 >= cap) {
			rt_say(
			    "%s has a header name longer than %d bytes: it is not sent cut; OTLP "
			    "is off for this push",
			    var, RT_PUSH_HEADER_MAX);
			return -1;
		}
		for (const char *c = s; c < ke; c++) {
			if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
			      (*c >= '0' && *c <= '9') || *c == '-' || *c == '_')) {
				rt_say("%s has a header name that is not a token: '%.60s'; OTLP is "
				       "off "
				       "for this push",
				       var, v);
				return -1;
			}
			h[o++] = *c;
		}
		h[o++] = ':';
		h[o++] = ' ';
		size_t vl = pct_decode(eq + 1, end, h + o, cap - o);
		if (vl == SIZE_MAX) {
			rt_say(
			    "%s has a header (%.40s...) longer than %d bytes: it is not sent cut; "
			    "OTLP is off for this push",
			    var, s, RT_PUSH_HEADER_MAX);
			return -1;
		}
		for (size_t i = 0; i < vl; i++)
			if ((unsigned char)h[o + i] < 0x20) {
				rt_say("%s has a control character in a value; OTLP is off for "
				       "this push",
				       var);
				return -1;
			}
		p->headers[(*n)++] = h;
		s = e ? e + 1 : end;
	}
	return 0;
}

int push_has_control(const char *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)v[i] < 0x20 || v[i] == 0x7f)
			return 1;
	return 0;
}

/* OTEL_RESOURCE_ATTRIBUTES "k=v,..." and OTEL_SERVICE_NAME over rt's own. */
int push_otlp_resource(struct rt_push *p)
{
	const char *v = getenv("OTEL_RESOURCE_ATTRIBUTES");
	for (const char *s = v; s && *s;) {
		const char *e = strchr(s, ','), *end = e ? e : s + strlen(s);
		const char *eq = memchr(s, '=', (size_t)(end - s));
		if (!eq || eq == s || eq - s >= 64) {
			rt_say(
			    "OTEL_RESOURCE_ATTRIBUTES is not key=value,...: '%.60s'; OTLP is off "
			    "for this push",
			    v);
			return -1;
		}
		char key[64];
		snprintf(key, sizeof(key), "%.*s", (int)(eq - s), s);
		char val[256];
		size_t vl = pct_decode(eq + 1, end, val, sizeof(val));
		if (vl == SIZE_MAX || push_has_control(val, vl)) {
			rt_say(
			    "OTEL_RESOURCE_ATTRIBUTES: the value of %s is %s; it is not sent %s; "
			    "OTLP is off for this push",
			    key,
			    vl == SIZE_MAX ? "longer than 255 bytes" : "holds a control character",
			    vl == SIZE_MAX ? "cut" : "so");
			return -1;
		}
		push_set_attr(p, key, val, vl);
		s = e ? e + 1 : end;
	}
	const char *svc = getenv("OTEL_SERVICE_NAME");
	if (svc && (strlen(svc) > 255 || push_has_control(svc, strlen(svc)))) {
		rt_say("OTEL_SERVICE_NAME is %s; it is not sent %s; OTLP is off for this push",
		       strlen(svc) > 255 ? "longer than 255 bytes" : "holds a control character",
		       strlen(svc) > 255 ? "cut" : "so");
		return -1;
	}
	if (svc && *svc)
		push_set_attr(p, "service.name", svc, strlen(svc));
	return 0;
}

/* The OTLP metrics endpoint: OTEL_EXPORTER_OTLP_METRICS_ENDPOINT as it is,
 * else OTEL_EXPORTER_OTLP_ENDPOINT + /v1/metrics. */
const char *push_otlp_env_url(char *buf, size_t cap)
{
	const char *m = getenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT");
	if (m && *m)
		return m;
	const char *b = getenv("OTEL_EXPORTER_OTLP_ENDPOINT");
	if (!b || !*b)
		return NULL;
	size_t n = strlen(b);
	if (n > RT_PUSH_URL_MAX)
		return b; /* too long: said by the caller, never cut */
	snprintf(buf, cap, "%.*s/v1/metrics", (int)(n && b[n - 1] == '/' ? n - 1 : n), b);
	return buf;
}

/*
 * The remote write's credentials from the environment, before anything is
 * sent: SigV4 (region set) needs both AWS keys; a value with a control byte
 * would split the request's headers (a second header smuggled in) and a
 * longer one than a header holds would go cut: refused with one line.
 */
static int remote_write_credentials_ok(const char *region)
{
	const char *ak = getenv("AWS_ACCESS_KEY_ID"), *sk = getenv("AWS_SECRET_ACCESS_KEY");
	if (region && *region && (!ak || !*ak || !sk || !*sk)) {
		rt_say("TRACKER_REMOTE_WRITE_SIGV4_REGION is set but AWS_ACCESS_KEY_ID or "
		       "AWS_SECRET_ACCESS_KEY is not: cannot sign for Amazon Managed Prometheus");
		return 0;
	}
	static const char *const cred[] = {"TRACKER_REMOTE_WRITE_BEARER_TOKEN",
	                                   "TRACKER_REMOTE_WRITE_USERNAME",
	                                   "TRACKER_REMOTE_WRITE_PASSWORD"};
	for (size_t i = 0; i < RT_ARRAY_LEN(cred); i++)
		if (!rt_env_value_ok(cred[i], 1000))
			return 0;
	/* what signs for Amazon Managed Prometheus: the region and the key id
	 * go into the Authorization header, the token into a header of its own */
	return !(region && *region) || (rt_env_value_ok("TRACKER_REMOTE_WRITE_SIGV4_REGION", 64) &&
	                                rt_env_value_ok("AWS_ACCESS_KEY_ID", 128) &&
	                                rt_env_value_ok("AWS_SECRET_ACCESS_KEY", 128) &&
	                                rt_env_value_ok("AWS_SESSION_TOKEN", 4096));
}

const char *push_prom_env_url(char *buf, size_t cap)
{
	(void)buf;
	(void)cap;
	return getenv("TRACKER_REMOTE_WRITE_URL");
}

/* The engine's URL: --url, else the sink's variables; NULL (said) when
 * none, or not one http(s) word short enough to send whole. */
const char *push_url(const struct rt_push_sink *sink, const char *url, char *buf, size_t cap)
{
	if (!url || !*url)
		url = sink->env_url(buf, cap);
	const char *what = sink->what;
	if (!url || !*url) {
		rt_say("%s", sink->needs_url);
		return NULL;
	}
	size_t n = strlen(url);
	if (n > RT_PUSH_URL_MAX || push_has_control(url, n) || strchr(url, ' ')) {
		rt_say("the %s URL is %s; it is not sent %s", what,
		       n > RT_PUSH_URL_MAX ? "longer than 2000 bytes"
		                           : "not one word (a space or control character)",
		       n > RT_PUSH_URL_MAX ? "cut" : "so");
		return NULL;
	}
	if (strncmp(url, "http://", 7) && strncmp(url, "https://", 8)) {
		rt_say("the %s URL must start with http:// or https:// (got '%.100s')", what, url);
		return NULL;
	}
	return url;
}

/* The request's headers: the sink's content type and encoding, its
 * credentials (remote write) or OTEL headers, rt's User-Agent. 0, or 2
 * (said) when the environment's are unusable. */
int push_prom_headers(struct rt_push *p, char *auth, size_t cap, size_t *nh)
{
	p->headers[(*nh)++] = "Content-Type: application/x-protobuf";
	p->headers[(*nh)++] = "Content-Encoding: snappy";
	p->headers[(*nh)++] = "X-Prometheus-Remote-Write-Version: 0.1.0";
	const char *region = getenv("TRACKER_REMOTE_WRITE_SIGV4_REGION");
	if (!remote_write_credentials_ok(region))
		return 2;
	if (!(region && *region) && auth_header(auth, cap))
		p->headers[(*nh)++] = auth;
	return 0;
}

int push_otlp_headers(struct rt_push *p, char *auth, size_t cap, size_t *nh)
{
	(void)auth;
	(void)cap;
	p->headers[(*nh)++] = "Content-Type: application/json";
	p->headers[(*nh)++] = "Content-Encoding: gzip";
	if (otlp_headers(p, "OTEL_EXPORTER_OTLP_HEADERS", nh) ||
	    otlp_headers(p, "OTEL_EXPORTER_OTLP_METRICS_HEADERS", nh))
		return 2;
	return 0;
}

int push_headers(struct rt_push *p, char *auth, size_t cap)
{
	size_t nh = 0;
	if (p->sink->headers(p, auth, cap, &nh))
		return 2;
	p->headers[nh++] = "User-Agent: rt/" RT_VERSION;
	p->headers[nh] = NULL;
	return 0;
}
