/*
 * store.h - the LMDB time-series store.
 *
 * One environment per user (a directory). Named databases:
 *   runs       u64be run id             -> run metadata (JSON text)
 *   samples    u64be run id + u64be seq -> record bytes (record.h)
 *   inventory  u64be run id + u32be gen -> inventory bytes (inventory.h)
 *
 *   info       "store_id"               -> 16 random bytes (names rings)
 *
 * Only the recorder writes. Each sample is committed on its own (MDB_NOSYNC,
 * with an fsync at most every few seconds), so a killed recorder loses at
 * most the sample being written and a power cut a few seconds. The map grows
 * on MDB_MAP_FULL; readers follow with MDB_MAP_RESIZED. Long reads use short
 * read transactions. A size cap deletes the oldest runs first.
 */
#ifndef RT_STORE_H
#define RT_STORE_H

#include <stddef.h>
#include <stdint.h>

struct rt_store;

enum rt_store_flags { RT_STORE_RDONLY = 0, RT_STORE_RDWR = 1 };

/*
 * Resolve the store directory: flag (may be NULL) > $RT_STORE >
 * $XDG_DATA_HOME/resource-tracker > $HOME/.local/share/resource-tracker.
 * Returns 0 or -ENOENT when none can be determined.
 */
int rt_store_resolve_dir(const char *flag, char *buf, size_t cap);

/* Open (RDWR: create the directory, 0700) the store in dir.
 * Runs mdb_reader_check. Returns 0, -errno or RT_E_STORE. */
int rt_store_open(const char *dir, int flags, struct rt_store **out);
void rt_store_close(struct rt_store *s);
const char *rt_store_dir(const struct rt_store *s);
/* What names this store's ring files (rt_ring_path): its directory and its
 * random id, so a store re-created in the same place never meets a stale
 * ring of its predecessor. */
const char *rt_store_ring_key(const struct rt_store *s);
/* Text of the last LMDB error on this handle. */
const char *rt_store_last_error(const struct rt_store *s);

/* Cap on used bytes (0: none). Enforced by rt_store_enforce_cap. */
void rt_store_set_cap(struct rt_store *s, uint64_t cap_bytes);

/* Allocate the next run id and store its metadata in one transaction. */
int rt_store_new_run(struct rt_store *s, const char *meta, size_t len, uint64_t *run_id);
int rt_store_put_meta(struct rt_store *s, uint64_t run, const char *meta, size_t len);
/* *meta is malloc'd and NUL-terminated. RT_E_NOTFOUND if absent. */
int rt_store_get_meta(struct rt_store *s, uint64_t run, char **meta, size_t *len);

int rt_store_put_inventory(struct rt_store *s, uint64_t run, uint32_t gen, const void *buf,
                           size_t len);
/* *buf is malloc'd. */
int rt_store_get_inventory(struct rt_store *s, uint64_t run, uint32_t gen, void **buf, size_t *len);

/* Append sample seq of run and commit. */
int rt_store_append(struct rt_store *s, uint64_t run, uint64_t seq, const void *rec, size_t len);

/*
 * Visit samples of run with seq in [from, to] in order. cb gets an 8-byte
 * aligned copy; returning non-zero stops the walk (and is returned).
 * Read transactions are renewed every few thousand samples.
 */
typedef int (*rt_store_sample_cb)(void *ctx, uint64_t seq, const void *rec, size_t len);
int rt_store_scan(struct rt_store *s, uint64_t run, uint64_t from, uint64_t to,
                  rt_store_sample_cb cb, void *ctx);

/* Fetch one sample into buf (aligned, cap bytes). */
int rt_store_get_sample(struct rt_store *s, uint64_t run, uint64_t seq, void *buf, size_t cap,
                        size_t *len);

/* First/last seq of run; RT_E_NOTFOUND when it has no samples. */
int rt_store_seq_bounds(struct rt_store *s, uint64_t run, uint64_t *first, uint64_t *last);

/* First seq whose wall clock is >= wall_ns (binary search). */
int rt_store_seq_at_time(struct rt_store *s, uint64_t run, uint64_t wall_ns, uint64_t *seq);

/* Visit every run id (ascending) with its metadata. */
typedef int (*rt_store_run_cb)(void *ctx, uint64_t run, const char *meta, size_t len);
int rt_store_list_runs(struct rt_store *s, rt_store_run_cb cb, void *ctx);

/* Delete a run: samples, inventories and metadata. */
int rt_store_delete_run(struct rt_store *s, uint64_t run);

/* Bytes in use by the data (pages of all databases). */
int rt_store_used_bytes(struct rt_store *s, uint64_t *bytes);

/* While used bytes exceed the cap, delete the oldest run other than keep.
 * *deleted counts the runs removed. */
int rt_store_enforce_cap(struct rt_store *s, uint64_t keep, unsigned *deleted);

/* fsync the environment. */
int rt_store_sync(struct rt_store *s);

/* Drop the process's mapping of store pages it no longer needs so the
 * resident set does not grow with the size of the store. */
void rt_store_trim_rss(struct rt_store *s);

#endif
