/*
 * sigv4.h - AWS Signature Version 4 for S3 requests, and its hashes.
 *
 * Follows AWS's rules: canonical request (method, URI-encoded path, sorted
 * query, lower-case sorted headers with trimmed values, signed header list,
 * payload hash), string to sign, the HMAC chain "AWS4"+secret -> date ->
 * region -> service -> "aws4_request". Checked against AWS's documented
 * examples and against botocore (tests/unit/test_sigv4.c, it_sigv4.sh).
 */
#ifndef RT_SIGV4_H
#define RT_SIGV4_H

#include <stddef.h>
#include <stdint.h>

#include "rt/fmt.h"

/* Lower-case hex SHA-256 of len bytes into out[65]. */
void rt_sha256_hex(const void *data, size_t len, char out[65]);

/* URI-encode per AWS: unreserved A-Z a-z 0-9 - . _ ~ stay, everything else
 * %XX (upper-case hex); '/' stays unless encode_slash. */
void rt_uri_encode(struct rt_buf *out, const char *s, int encode_slash);

struct rt_sigv4_header {
	const char *name; /* any case; signed in lower case */
	const char *value;
};

struct rt_sigv4_req {
	const char *method;                    /* "PUT" */
	const char *path;                      /* raw path, e.g. "/bucket/run 1/000001.csv.gz" */
	const char *query;                     /* canonical query string, "" for none */
	const struct rt_sigv4_header *headers; /* must include host and x-amz-date */
	int nheaders;
	const char *payload_sha256; /* hex */
	const char *amz_date;       /* YYYYMMDDTHHMMSSZ */
	const char *region;
	const char *service; /* "s3" */
	const char *access_key;
	const char *secret_key;
};

/* The Authorization header value into out. Returns 0 or -EINVAL. */
int rt_sigv4_authorization(const struct rt_sigv4_req *r, struct rt_buf *out);

/* The derived signing key (32 bytes), exposed for tests. */
void rt_sigv4_signing_key(const char *secret, const char *date8, const char *region,
                          const char *service, unsigned char key[32]);

#endif
