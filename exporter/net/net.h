/*
 * net.h - HTTP (libcurl), S3 PUT with SigV4, the Sentinel API client and
 * the upload checkpoint, for `rt-export upload`.
 *
 * Nothing here runs unless SENTINEL_API_TOKEN is set: without it rt makes
 * no network connection at all. The token is read from the environment
 * only and never printed, logged or stored.
 */
#ifndef RT_NET_H
#define RT_NET_H

#include <stdint.h>

#include "rt/fmt.h"

/* ---- http.c ---- */
struct rt_http_resp {
	long status; /* 0: no response (network error) */
	struct rt_buf body;
	char amz_region[64]; /* x-amz-bucket-region, when present */
	long retry_after_s;  /* Retry-After in seconds, -1: absent or a date */
	char err[256];       /* curl's reason when status is 0 */
};

/* One request. headers: NULL-terminated "Name: value" list. URLs must be
 * https, or http to a loopback address (test servers). Returns 0 when a
 * response arrived (any status), RT_E_NET otherwise (reason in resp->err). */
int rt_http(const char *method, const char *url, const char *const *headers, const void *body,
            size_t len, long timeout_s, struct rt_http_resp *resp);
/* The same with limits in ms and on the body's size (0: none); a bigger
 * body ends the transfer as a network error. */
struct rt_http_limits {
	long connect_ms, total_ms;
	size_t max_body;
	int allow_http; /* plain http to any host (a URL the user gave as http://) */
};
int rt_http_limited(const char *method, const char *url, const char *const *headers,
                    const void *body, size_t len, const struct rt_http_limits *lim,
                    struct rt_http_resp *resp);
void rt_http_resp_free(struct rt_http_resp *r);
/* Whether url is https, or http to 127.0.0.1 / localhost / [::1]. */
int rt_url_allowed(const char *url);
/*
 * Whether environment variable name (unset or empty: yes) can go into a
 * request whole: no control byte (a line break would split the request's
 * headers, a second header smuggled in) and at most max bytes (never sent
 * cut). No: one line saying which and how to fix it.
 */
int rt_env_value_ok(const char *name, size_t max);

/* ---- checkpoint.c ---- */
#define RT_CP_MAX_URIS 100000

struct rt_creds {
	char access_key[256], secret_key[256], session_token[4096];
	uint64_t expires_ns; /* 0: unknown */
};

struct rt_checkpoint {
	char sentinel_run[128]; /* "" until start succeeded */
	char bucket[64];
	char prefix[512]; /* key prefix inside the bucket, no slashes at ends */
	char region[64];  /* the bucket's region, once detected */
	struct rt_creds creds;
	uint64_t next_seq; /* first sample not confirmed by S3 */
	char **uris;       /* confirmed objects, s3://bucket/key */
	size_t nuris;
	int finished; /* finish confirmed by Sentinel */
};

/* <run>.json in the store's upload directory held open as udfd
 * (rt_store_side_dir): never through a link, never blocking on a FIFO.
 * A missing file is a fresh checkpoint: 0; RT_E_UNSAFE (a link, FIFO or
 * another user's file there), RT_E_CORRUPT (not JSON), -errno. */
int rt_checkpoint_load(int udfd, uint64_t run, struct rt_checkpoint *cp);
/* The same from text (hostile: every field is checked). */
int rt_checkpoint_parse(const char *text, struct rt_checkpoint *cp);
/* Written to a temporary file made O_EXCL in udfd, fsync'ed and renamed
 * over (whatever is there is replaced, never followed): never torn. 0600.
 * 0, -ENOMEM, -errno. */
int rt_checkpoint_save(int udfd, uint64_t run, const struct rt_checkpoint *cp);
int rt_checkpoint_add_uri(struct rt_checkpoint *cp, const char *uri);
void rt_checkpoint_free(struct rt_checkpoint *cp);
/* Exclusive lock for one uploader per run (<run>.lock in udfd); 0,
 * -EBUSY when another holds it, RT_E_UNSAFE or -errno. */
int rt_checkpoint_lock(int udfd, uint64_t run, int *fd);

/* ---- sentinel.c ---- */
/* the longest SENTINEL_API_TOKEN and SENTINEL_API_URL (or
 * TRACKER_S3_ENDPOINT) sent: longer ones are refused, never cut */
#define RT_SENTINEL_TOKEN_MAX 4096
#define RT_SENTINEL_URL_MAX 1000

struct rt_sentinel {
	const char *base;  /* SENTINEL_API_URL */
	const char *token; /* SENTINEL_API_TOKEN */
};

/*
 * The Sentinel calls and the S3 PUT share one convention: they return 0,
 * RT_E_NET (no answer: worth retrying), RT_E_HTTP (an error status, in
 * *status) or RT_E_PROTOCOL (a 2xx answer that cannot be used: a server or
 * configuration problem, not worth retrying). detail gets the specifics
 * (curl's reason, S3's error code) for the message the caller makes.
 */
struct rt_net_result {
	long status;      /* HTTP status, 0: none */
	char detail[512]; /* what went wrong, for people */
};

/* POST /runs with body (JSON). Fills run id, bucket, prefix, creds after
 * validating them. */
int rt_sentinel_start(const struct rt_sentinel *s, const char *body, struct rt_checkpoint *cp,
                      struct rt_net_result *res);
/* Validate and take a start response (hostile bytes): 0, or -1 and cp
 * untouched. */
int rt_sentinel_parse_start(const char *body, struct rt_checkpoint *cp);
int rt_sentinel_refresh(const struct rt_sentinel *s, struct rt_checkpoint *cp,
                        struct rt_net_result *res);
/* POST /runs/{id}/finish with body (gzip'ed when gzip). */
int rt_sentinel_finish(const struct rt_sentinel *s, const struct rt_checkpoint *cp,
                       const struct rt_buf *body, int gzip, struct rt_net_result *res);

/* ---- s3.c ---- */
/* PUT data under key. endpoint: TRACKER_S3_ENDPOINT (path-style) or NULL
 * (https://bucket.s3.region.amazonaws.com). */
int rt_s3_put(const char *endpoint, const char *region, const struct rt_checkpoint *cp,
              const char *key, const void *data, size_t len, struct rt_net_result *res);

/* ---- keeper.c: the Spare Cores Keeper API (TRACKER_KEEPER_URL) ---- */
struct rt_server {
	char vendor_id[64];
	char api_reference[128]; /* the instance type */
	char display_name[128];
	double vcpus, memory_amount /* MiB */, gpu_count;
	double min_price_ondemand; /* USD per hour, NAN when unknown */
	char raw[4096];            /* Keeper's record as it gave it (JSON; "" when longer) */
};

/* The n cheapest on-demand servers with at least cpu vCPUs, memory_mib,
 * gpu GPUs and vram_mib of GPU memory (0: no GPU asked). One request,
 * bounded by deadline_ms (CLOCK_MONOTONIC ms): 0 and *out (malloc'd), or
 * an error with why[] for people. */
int rt_keeper_servers(long cpu, long memory_mib, long gpu, long vram_mib, unsigned n,
                      long deadline_ms, struct rt_server **out, size_t *count, char *why,
                      size_t cap);
/* Linux on-demand price (USD/hour) of vendor's instance in region, else of
 * the first region that has one. */
int rt_keeper_price(const char *vendor, const char *instance, const char *region, long deadline_ms,
                    double *price, char *why, size_t cap);
/* The parsers of the answers (hostile bytes, len need not end in NUL). */
int rt_keeper_parse_servers(const char *body, size_t len, unsigned max, struct rt_server **out,
                            size_t *count);
int rt_keeper_parse_prices(const char *body, size_t len, const char *region, double *price);
long rt_keeper_now_ms(void);

#endif
