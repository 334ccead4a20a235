/* batch.c - deterministic gzip'ed CSV batches (see batch.h). */
#define _GNU_SOURCE
#include "sink/batch.h"

#include <errno.h>
#include <string.h>
#include <zlib.h>

#include "rt/common.h"

int rt_gzip(const void *data, size_t len, struct rt_buf *out)
{
	z_stream z;
	memset(&z, 0, sizeof(z));
	/* windowBits 15 + 16: gzip wrapper; level and strategy fixed */
	if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	gz_header h;
	memset(&h, 0, sizeof(h));
	h.os = 255; /* unknown: the same bytes on every host */
	deflateSetHeader(&z, &h);
	size_t cap = deflateBound(&z, (uLong)len) + 32;
	out->len = 0;
	rt_buf_put(out, "", 0);
	if (out->oom) {
		deflateEnd(&z);
		return -ENOMEM;
	}
	/* grow to the bound, then deflate in one call */
	while (out->cap < cap) {
		size_t before = out->len;
		rt_buf_put(out, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 16);
		if (out->oom || out->len == before) {
			deflateEnd(&z);
			return -ENOMEM;
		}
	}
	z.next_in = (Bytef *)(uintptr_t)data;
	z.avail_in = (uInt)len;
	z.next_out = (Bytef *)out->p;
	z.avail_out = (uInt)out->cap;
	int rc = deflate(&z, Z_FINISH);
	out->len = z.total_out;
	deflateEnd(&z);
	return rc == Z_STREAM_END ? 0 : -EIO;
}

int rt_batch_build(struct rt_store *s, struct rt_ring *ring, const struct rt_runinfo *ri,
                   uint64_t first, uint64_t last, struct rt_buf *out, uint64_t *lines)
{
	struct rt_sink k;
	memset(&k, 0, sizeof(k));
	k.fd = -1;
	k.memory = 1;
	struct rt_emitter e;
	int rc = rt_emitter_init(&e, s, ri, RT_FMT_CSV, &k);
	if (rc)
		return rc;
	rc = ring ? rt_emit_lines(&e, ring, first, last) : rt_replay_range(&e, first, last);
	*lines = e.lines;
	rt_emitter_free(&e);
	if (!rc)
		rc = rt_gzip(k.buf.p ? k.buf.p : "", k.buf.len, out);
	rt_buf_free(&k.buf);
	return rc;
}

void rt_batch_key(struct rt_buf *out, const char *prefix, const char *run_id, uint64_t first)
{
	size_t n = strlen(prefix);
	while (n && prefix[n - 1] == '/')
		n--;
	if (n) {
		rt_buf_put(out, prefix, n);
		rt_buf_putc(out, '/');
	}
	rt_buf_printf(out, "%s/%06llu.csv.gz", run_id, (unsigned long long)first);
}
