/* stream.c - the live stream on a pipe (see stream.h). */
#define _GNU_SOURCE
#include "rt/stream.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rt/clock.h"
#include "rt/common.h"

/* Records wait in memory up to this much while the reader is behind. */
#define PENDING_LIMIT (8u << 20)

struct frame_hdr {
	uint32_t magic, type, len;
};

void rt_stream_out_init(struct rt_stream_out *o, int fd)
{
	memset(o, 0, sizeof(*o));
	o->fd = fd;
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	fcntl(fd, F_SETPIPE_SZ, 1 << 20); /* room for a slow terminal; best effort */
}

/* Write what the pipe takes; keep the rest. */
static int drain(struct rt_stream_out *o)
{
	size_t off = 0;
	while (off < o->pending.len && !o->broken) {
		ssize_t n = write(o->fd, o->pending.p + off, o->pending.len - off);
		if (n > 0) {
			off += (size_t)n;
		} else if (n < 0 && errno == EINTR) {
			continue;
		} else if (n < 0 && errno == EAGAIN) {
			break;
		} else {
			o->broken = 1;
		}
	}
	if (o->broken) {
		o->pending.len = 0;
		return -EPIPE;
	}
	memmove(o->pending.p, o->pending.p + off, o->pending.len - off);
	o->pending.len -= off;
	return 0;
}

int rt_stream_put(struct rt_stream_out *o, enum rt_frame_type type, const void *a, size_t alen,
                  const void *b, size_t blen)
{
	if (o->fd < 0 || o->broken)
		return -EPIPE;
	if (alen + blen > RT_STREAM_MAX_FRAME)
		return -EMSGSIZE;
	int rc = 0;
	if (type == RT_FRAME_RECORD && o->pending.len >= PENDING_LIMIT) {
		o->dropped++;
		rc = RT_E_FULL;
	} else {
		struct frame_hdr h = {RT_STREAM_MAGIC, (uint32_t)type, (uint32_t)(alen + blen)};
		rt_buf_put(&o->pending, (const char *)&h, sizeof(h));
		rt_buf_put(&o->pending, a, alen);
		rt_buf_put(&o->pending, b, blen);
		if (o->pending.oom) { /* nothing partial may stay queued */
			rt_buf_free(&o->pending);
			o->dropped++;
			rc = RT_E_FULL;
		}
	}
	int d = drain(o);
	return d ? d : rc;
}

void rt_stream_out_close(struct rt_stream_out *o, uint64_t deadline_mono_ns)
{
	if (!o || o->fd < 0)
		return;
	rt_stream_put(o, RT_FRAME_END, NULL, 0, NULL, 0);
	while (o->pending.len && !o->broken) {
		uint64_t now = rt_clock_mono_real();
		if (now >= deadline_mono_ns)
			break;
		struct pollfd p = {o->fd, POLLOUT, 0};
		int ms = (int)((deadline_mono_ns - now) / 1000000u) + 1;
		if (poll(&p, 1, ms) < 0 && errno != EINTR)
			break;
		drain(o);
	}
	close(o->fd);
	o->fd = -1;
	rt_buf_free(&o->pending);
}

int rt_stream_in_init(struct rt_stream_in *in, int fd)
{
	in->fd = fd;
	in->cap = 64 * 1024;
	in->buf = malloc(in->cap);
	return in->buf ? 0 : -ENOMEM;
}

void rt_stream_in_free(struct rt_stream_in *in)
{
	free(in->buf);
	in->buf = NULL;
}

/* Read exactly n bytes; 1 at EOF before the first byte. */
static int read_full(int fd, void *p, size_t n)
{
	size_t got = 0;
	while (got < n) {
		ssize_t r = read(fd, (char *)p + got, n - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return got ? RT_E_CORRUPT : 1;
		got += (size_t)r;
	}
	return 0;
}

int rt_stream_next(struct rt_stream_in *in, enum rt_frame_type *type, const void **payload,
                   size_t *len)
{
	struct frame_hdr h;
	int rc = read_full(in->fd, &h, sizeof(h));
	if (rc == 1)
		return RT_E_NOTFOUND;
	if (rc)
		return rc;
	if (h.magic != RT_STREAM_MAGIC || h.type < RT_FRAME_META || h.type > RT_FRAME_END ||
	    h.len > RT_STREAM_MAX_FRAME)
		return RT_E_CORRUPT;
	if (h.len + 8 > in->cap) { /* +8: room to align a record copy */
		size_t cap = h.len + 8;
		unsigned char *p = malloc(cap);
		if (!p)
			return -ENOMEM;
		free(in->buf);
		in->buf = p;
		in->cap = cap;
	}
	if (h.len && (rc = read_full(in->fd, in->buf, h.len)))
		return rc == 1 ? RT_E_CORRUPT : rc;
	*type = (enum rt_frame_type)h.type;
	*payload = in->buf;
	*len = h.len;
	return 0;
}
