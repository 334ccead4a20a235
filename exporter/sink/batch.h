/*
 * batch.h - deterministic upload batches.
 *
 * A batch is a seq range of one run, rendered as CSV (the reference header,
 * through the same emitter as every other output) and gzip-compressed with
 * a fixed header (no name, mtime 0, OS 255) and fixed deflate settings, so
 * the same samples always give the same bytes: a retried upload re-creates
 * the same object under the same key. The key derives from the run and the
 * range: "<prefix>/<run_id>/<first seq, 6+ digits>.csv.gz".
 */
#ifndef RT_BATCH_H
#define RT_BATCH_H

#include <stdint.h>

#include "export.h"

/* gzip len bytes deterministically into out. Returns 0 or -ENOMEM/-EIO. */
int rt_gzip(const void *data, size_t len, struct rt_buf *out);

/*
 * CSV (header + one line per sample with seq in [first, last]; line k uses
 * sample k-1 as its base) of run, gzip'ed into out: each sample from the
 * run's live ring while it still holds it (ring may be NULL), else from the
 * store, which holds everything the ring no longer does. *lines gets the
 * number of data lines. Returns 0 or an error.
 */
struct rt_ring;
int rt_batch_build(struct rt_store *s, struct rt_ring *ring, const struct rt_runinfo *ri,
                   uint64_t first, uint64_t last, struct rt_buf *out, uint64_t *lines);

/* Object key of a batch: "<prefix>/<run>/<first:06>.csv.gz" (no leading
 * slash when prefix is empty). */
void rt_batch_key(struct rt_buf *out, const char *prefix, const char *run_id, uint64_t first);

#endif
