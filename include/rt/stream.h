/*
 * stream.h - the live stream on a pipe: how the recorder feeds its own
 * live printer when it has no ring (no usable shm directory) or no store
 * (nothing writable at all).
 *
 * Frames: a 12-byte header (magic, type, payload length; host order, the
 * two ends are one machine) and the payload. The run's metadata comes
 * first, then an inventory before the first record that uses it, then the
 * records; END says the run finished (EOF without it: the recorder died).
 *
 * The writer never blocks: frames wait in memory while the pipe is full,
 * and past a bound new records are dropped (counted; the reader's next line
 * averages over the gap), never the metadata or an inventory.
 */
#ifndef RT_STREAM_H
#define RT_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include "rt/fmt.h"

#define RT_STREAM_MAGIC 0x4d525452u /* "RTRM" */
#define RT_STREAM_MAX_FRAME (16u << 20)

enum rt_frame_type {
	RT_FRAME_META = 1,      /* run metadata JSON (runmeta.h) */
	RT_FRAME_INVENTORY = 2, /* u32 generation + encoded inventory */
	RT_FRAME_RECORD = 3,    /* one record (record.h) */
	RT_FRAME_END = 4,       /* the run finished; nothing follows */
};

struct rt_stream_out {
	int fd;     /* non-blocking write end, -1: closed */
	int broken; /* the reader went away (EPIPE) */
	uint64_t dropped;
	struct rt_buf pending;
};

/* Take over fd (the write end of a pipe; made non-blocking). */
void rt_stream_out_init(struct rt_stream_out *o, int fd);
/* Queue a frame and write what the pipe takes now. Returns 0, or
 * RT_E_FULL when a record was dropped, -EPIPE once the reader is gone. */
int rt_stream_put(struct rt_stream_out *o, enum rt_frame_type type, const void *a, size_t alen,
                  const void *b, size_t blen);
/* Queue END, then keep writing until everything is out or the monotonic
 * deadline passes; close the pipe. */
void rt_stream_out_close(struct rt_stream_out *o, uint64_t deadline_mono_ns);

struct rt_stream_in {
	int fd;
	unsigned char *buf;
	size_t cap;
};

/* A reader of the stream on fd (its buffer allocated): 0, or -ENOMEM.
 * Freed with rt_stream_in_free (fd is the caller's). */
int rt_stream_in_init(struct rt_stream_in *in, int fd);
void rt_stream_in_free(struct rt_stream_in *in);
/*
 * Read the next frame (blocking). Returns 0 with *type, *payload (valid
 * until the next call) and *len; RT_E_NOTFOUND at a clean EOF (no END:
 * the writer died); RT_E_CORRUPT for a frame that fails validation;
 * -errno on a read error.
 */
int rt_stream_next(struct rt_stream_in *in, enum rt_frame_type *type, const void **payload,
                   size_t *len);

#endif
