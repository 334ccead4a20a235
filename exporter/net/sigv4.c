/* sigv4.c - AWS Signature Version 4 (see sigv4.h). */
#include "net/sigv4.h"

#include <errno.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdlib.h>
#include <string.h>

static void hex(const unsigned char *b, size_t n, char *out)
{
	static const char h[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = h[b[i] >> 4];
		out[2 * i + 1] = h[b[i] & 15];
	}
	out[2 * n] = '\0';
}

void rt_sha256_hex(const void *data, size_t len, char out[65])
{
	unsigned char md[32];
	unsigned int n = 0;
	EVP_Digest(data, len, md, &n, EVP_sha256(), NULL);
	hex(md, 32, out);
}

static void hmac(const void *key, size_t klen, const char *msg, unsigned char out[32])
{
	unsigned int n = 32;
	HMAC(EVP_sha256(), key, (int)klen, (const unsigned char *)msg, strlen(msg), out, &n);
}

void rt_sigv4_signing_key(const char *secret, const char *date8, const char *region,
                          const char *service, unsigned char key[32])
{
	struct rt_buf k = {0};
	rt_buf_puts(&k, "AWS4");
	rt_buf_puts(&k, secret);
	unsigned char a[32], b[32];
	hmac(k.p, k.len, date8, a);
	hmac(a, 32, region, b);
	hmac(b, 32, service, a);
	hmac(a, 32, "aws4_request", key);
	rt_buf_free(&k);
}

void rt_uri_encode(struct rt_buf *out, const char *s, int encode_slash)
{
	static const char h[] = "0123456789ABCDEF";
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		unsigned c = *p;
		if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		    c == '-' || c == '.' || c == '_' || c == '~' || (c == '/' && !encode_slash)) {
			rt_buf_putc(out, (char)c);
		} else {
			char e[3] = {'%', h[c >> 4], h[c & 15]};
			rt_buf_put(out, e, 3);
		}
	}
}

struct hdr {
	char *name;
	const char *value;
};

static int cmp_hdr(const void *a, const void *b)
{
	return strcmp(((const struct hdr *)a)->name, ((const struct hdr *)b)->name);
}

/* Header value trimmed, inner runs of spaces collapsed. */
static void put_trimmed(struct rt_buf *b, const char *v)
{
	while (*v == ' ' || *v == '\t')
		v++;
	size_t n = strlen(v);
	while (n && (v[n - 1] == ' ' || v[n - 1] == '\t'))
		n--;
	int space = 0;
	for (size_t i = 0; i < n; i++) {
		if (v[i] == ' ' || v[i] == '\t') {
			space = 1;
			continue;
		}
		if (space)
			rt_buf_putc(b, ' ');
		space = 0;
		rt_buf_putc(b, v[i]);
	}
}

int rt_sigv4_authorization(const struct rt_sigv4_req *r, struct rt_buf *out)
{
	if (!r->amz_date || strlen(r->amz_date) != 16 || r->nheaders <= 0 || r->nheaders > 64)
		return -EINVAL;
	struct hdr h[64];
	for (int i = 0; i < r->nheaders; i++) {
		h[i].name = strdup(r->headers[i].name);
		if (!h[i].name) {
			while (i--)
				free(h[i].name);
			return -ENOMEM;
		}
		for (char *p = h[i].name; *p; p++)
			if (*p >= 'A' && *p <= 'Z')
				*p = (char)(*p - 'A' + 'a');
		h[i].value = r->headers[i].value;
	}
	qsort(h, (size_t)r->nheaders, sizeof(h[0]), cmp_hdr);
	struct rt_buf creq = {0}, signed_hdrs = {0}, sts = {0};
	rt_buf_puts(&creq, r->method);
	rt_buf_putc(&creq, '\n');
	rt_uri_encode(&creq, r->path[0] ? r->path : "/", 0);
	rt_buf_putc(&creq, '\n');
	rt_buf_puts(&creq, r->query ? r->query : "");
	rt_buf_putc(&creq, '\n');
	for (int i = 0; i < r->nheaders; i++) {
		rt_buf_puts(&creq, h[i].name);
		rt_buf_putc(&creq, ':');
		put_trimmed(&creq, h[i].value);
		rt_buf_putc(&creq, '\n');
		if (i)
			rt_buf_putc(&signed_hdrs, ';');
		rt_buf_puts(&signed_hdrs, h[i].name);
	}
	rt_buf_putc(&creq, '\n');
	rt_buf_puts(&creq, signed_hdrs.p);
	rt_buf_putc(&creq, '\n');
	rt_buf_puts(&creq, r->payload_sha256);
	char creq_hash[65], date8[9];
	rt_sha256_hex(creq.p, creq.len, creq_hash);
	memcpy(date8, r->amz_date, 8);
	date8[8] = '\0';
	rt_buf_printf(&sts, "AWS4-HMAC-SHA256\n%s\n%s/%s/%s/aws4_request\n%s", r->amz_date, date8,
	              r->region, r->service, creq_hash);
	unsigned char key[32], sig[32];
	rt_sigv4_signing_key(r->secret_key, date8, r->region, r->service, key);
	hmac(key, 32, sts.p, sig);
	char sighex[65];
	hex(sig, 32, sighex);
	rt_buf_printf(out,
	              "AWS4-HMAC-SHA256 Credential=%s/%s/%s/%s/aws4_request,SignedHeaders=%s,"
	              "Signature=%s",
	              r->access_key, date8, r->region, r->service, signed_hdrs.p, sighex);
	for (int i = 0; i < r->nheaders; i++)
		free(h[i].name);
	int oom = creq.oom || sts.oom || signed_hdrs.oom || out->oom;
	rt_buf_free(&creq);
	rt_buf_free(&sts);
	rt_buf_free(&signed_hdrs);
	return oom ? -ENOMEM : 0;
}
