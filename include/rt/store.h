/*
 * store.h - the LMDB time-series store.
 *
 * One environment per user (a directory). Named databases:
 *   runs       u64be run id             -> run metadata (JSON text)
 *   samples    u64be run id + u64be seq -> a block of the run's samples
 *                                          from seq on (block.h), or one
 *                                          sample's bytes (record.h)
 *   inventory  u64be run id + u32be gen -> inventory bytes (inventory.h)
 *
 *   info       "store_id"               -> 16 random bytes (names rings)
 *
 * Samples are stored packed (pack.h), a page of a run's consecutive ones
 * per value (block.h: each run's open block rewritten at each commit),
 * and committed in groups
 * (rt_store_set_group): the recorder commits and syncs at most every 30 s,
 * and before its ring could overwrite a sample not yet committed. What a
 * killed recorder had not committed is in its ring, and rt_store_salvage
 * copies it in (the recorder's successor or any reader that finds the
 * writer dead). Metadata and inventories are committed at once. The map
 * grows on MDB_MAP_FULL; readers follow with MDB_MAP_RESIZED. Long reads
 * use short read transactions. A size cap deletes the oldest runs first.
 * Only the recorder writes samples; readers write only to salvage.
 *
 * Errors. Each call that returns int returns 0 on success, or one of
 * these, besides those its own comment lists:
 *   RT_E_CORRUPT  the store is damaged: LMDB refused it or faulted in it
 *                 (SIGSEGV, SIGBUS, its abort, a read past 3 s of CPU).
 *                 The handle is poisoned (rt_store_is_damaged): every
 *                 later call on it returns RT_E_CORRUPT; only closing it
 *                 releases it. rt_store_last_error says where.
 *   RT_E_STORE    any other LMDB failure (rt_store_last_error has its text)
 *   -EROFS        a write on a handle opened RT_STORE_RDONLY
 *   -ENOMEM       out of memory
 *   -errno        from the OS: -ENOSPC, -EIO, -EDQUOT (a write or sync)
 */
#ifndef RT_STORE_H
#define RT_STORE_H

#include <stddef.h>
#include <stdint.h>

struct rt_store;

enum rt_store_flags { RT_STORE_RDONLY = 0, RT_STORE_RDWR = 1 };

/* The longest store directory: its files and ring names must fit a path. */
#define RT_STORE_DIR_MAX 3800

/*
 * Resolve the store directory: flag (may be NULL) > $RT_STORE >
 * $XDG_DATA_HOME/resource-tracker > $HOME/.local/share/resource-tracker.
 * Returns 0 or -ENOENT when none can be determined.
 */
int rt_store_resolve_dir(const char *flag, char *buf, size_t cap);

/* Why the last rt_store_open() refused a store with RT_E_UNSAFE: one line
 * naming the file and the fix ("" otherwise). */
const char *rt_store_refusal(void);

/* Open (RDWR: create the directory, 0700) the store in dir.
 * Runs mdb_reader_check. Returns 0 with *out set, or: RT_E_UNSAFE (dir,
 * or a file in it, is another user's or writable by one, or reached
 * through a link: rt_store_refusal says which and what to do), -ENOENT
 * (RDONLY and no store there), RT_E_BUSY (being compacted), -EACCES,
 * -EROFS, RT_E_CORRUPT (its files are not a sound LMDB store),
 * RT_E_STORE, -ENOMEM, or another -errno from the OS. */
int rt_store_open(const char *dir, int flags, struct rt_store **out);
void rt_store_close(struct rt_store *s);

/*
 * A quick look for damage, before writing into a store: every run's
 * metadata, the ends of its samples, each database's root. 0, or
 * RT_E_CORRUPT when the store is damaged (LMDB refused it or faulted in
 * it; the handle is then poisoned). A fault inside LMDB in any entry point
 * returns RT_E_CORRUPT the same way, never a crash.
 */
int rt_store_check(struct rt_store *s);
/*
 * The check before rt writes into a store it did not just write itself
 * (delete, compact, salvage, the size cap): rt_store_check, then every page
 * the current snapshot reaches (shared/store/lmdbcheck.c). It reads the whole
 * data file. 0, or RT_E_CORRUPT with rt_store_last_error() saying where.
 */
int rt_store_check_pages(struct rt_store *s);
/*
 * The recorder's check at start: every page (rt_store_check_pages) while
 * the data file is at most RT_STORE_FULL_CHECK_BYTES (about 0.6 ms a MiB
 * from the page cache), else rt_store_check, and every page before the
 * size cap first deletes.
 */
#define RT_STORE_FULL_CHECK_BYTES (64ull << 20)
int rt_store_check_for_writer(struct rt_store *s);
/* 1 when a fault in LMDB poisoned this handle (nothing more is read),
 * else 0. */
int rt_store_is_damaged(const struct rt_store *s);
/* The store's directory as opened. Never NULL. */
const char *rt_store_dir(const struct rt_store *s);
/*
 * The store's side directory sub ("push", "upload": exporters' checkpoints
 * and locks), opened from the store's held directory, never through a
 * link, made 0700 when mkdirs: an O_PATH descriptor the caller closes.
 * Only a store of this user's that no one else can write has one: root
 * never writes into a store another user owns. RT_E_UNSAFE (a store not
 * ours, or sub a link, file or another user's) with the reason in why;
 * -ENOENT (not there and !mkdirs); -errno.
 */
int rt_store_side_dir(const struct rt_store *s, const char *sub, int mkdirs, char *why, size_t cap);
/* What names this store's ring files (rt_ring_path): its directory and its
 * random id, so a store re-created in the same place never meets a stale
 * ring of its predecessor. */
const char *rt_store_ring_key(const struct rt_store *s);
/* Text of the last LMDB error on this handle ("" when none). Never NULL. */
const char *rt_store_last_error(const struct rt_store *s);

/* Cap on used bytes (0: none). Enforced by rt_store_enforce_cap. */
void rt_store_set_cap(struct rt_store *s, uint64_t cap_bytes);

/* Allocate the next run id (*run_id) and store its metadata (len bytes of
 * JSON) in one transaction, committed at once. 0, or the common errors. */
int rt_store_new_run(struct rt_store *s, const char *meta, size_t len, uint64_t *run_id);
/* Store run's metadata in place of what it had (committed at once). 0,
 * or the common errors. */
int rt_store_put_meta(struct rt_store *s, uint64_t run, const char *meta, size_t len);
/* Run's metadata: *meta is malloc'd (the caller frees it) and
 * NUL-terminated, *len its length. 0, RT_E_NOTFOUND (no such run), or the
 * common errors. */
int rt_store_get_meta(struct rt_store *s, uint64_t run, char **meta, size_t *len);

/* Store generation gen of run's inventory (committed at once). 0, or the
 * common errors. */
int rt_store_put_inventory(struct rt_store *s, uint64_t run, uint32_t gen, const void *buf,
                           size_t len);
/* Generation gen of run's inventory: *buf is malloc'd (the caller frees
 * it), *len its length. 0, RT_E_NOTFOUND, or the common errors. */
int rt_store_get_inventory(struct rt_store *s, uint64_t run, uint32_t gen, void **buf, size_t *len);

/*
 * Append sample seq of run (a record of this rt's layout, rec/len). It is
 * packed against the run's previous sample and committed with its group:
 * at once by default, or as set by rt_store_set_group. Returns 0 or the
 * error of the group commit that failed (that group is dropped and
 * counted by rt_store_dropped).
 */
int rt_store_append(struct rt_store *s, uint64_t run, uint64_t seq, const void *rec, size_t len);
/* Run's samples are over (its last committed): what packs them is freed
 * for another run's. A writer may append several runs' samples, each
 * packed against its own last one, to one group. */
void rt_store_end_run(struct rt_store *s, uint64_t run);
/* Commit when max_samples wait, or when the oldest waited max_age_ns of the
 * samples' own clock (0: no age limit); sync after each commit if asked. */
void rt_store_set_group(struct rt_store *s, unsigned max_samples, uint64_t max_age_ns,
                        int sync_on_commit);
/* Commit what waits now (and sync, if the group asks for it). 0 (also
 * when nothing waits), or the common errors: the group is then dropped
 * and counted (rt_store_dropped). */
int rt_store_flush(struct rt_store *s);
/* Commit what waits now, without a sync: the caller syncs after what it
 * writes next (the run's final metadata), one sync for both. 0, or as
 * rt_store_flush. */
int rt_store_commit(struct rt_store *s);
/* Samples waiting; samples lost with a group that could not be committed
 * (counts: these cannot fail). */
unsigned rt_store_pending(const struct rt_store *s);
uint64_t rt_store_dropped(const struct rt_store *s);
/* Store a value exactly as given at (run, seq): one sample's bytes, or a
 * block (tests stand in for other rt versions with it). A reader gives
 * each seq once: where two values hold one seq, the one with the lower
 * key. 0, or the common errors. */
int rt_store_put_sample_bytes(struct rt_store *s, uint64_t run, uint64_t seq, const void *val,
                              size_t len);

/*
 * Copy into the store the samples of a ring whose writer is dead that the
 * store lacks (those after the run's last stored one), in one transaction:
 * exactly once, whoever else salvages the same ring at the same time.
 * *added counts them. 0 (also when there was nothing to add), or the
 * common errors (nothing is added then).
 */
struct rt_ring;
int rt_store_salvage(struct rt_store *s, struct rt_ring *ring, unsigned *added);

/*
 * Visit samples of run with seq in [from, to] in order. cb gets an 8-byte
 * aligned record of this rt's layout (unpacked or upgraded), or the stored
 * bytes as they are when they cannot be read (a newer rt's or damaged:
 * rt_record_decode tells); returning non-zero stops the walk (and is
 * returned).
 * Read transactions are renewed every few thousand samples; a block
 * rewritten meanwhile (the writer's open one) is read on from the seq
 * after the last given. 0 when the walk ended (a run without samples
 * there too), cb's non-zero, RT_E_CORRUPT (a value or block that cannot
 * be read: the samples before it were given), or the common errors.
 */
typedef int (*rt_store_sample_cb)(void *ctx, uint64_t seq, const void *rec, size_t len);
int rt_store_scan(struct rt_store *s, uint64_t run, uint64_t from, uint64_t to,
                  rt_store_sample_cb cb, void *ctx);

/* Whether (run, seq) is stored: 1, 0, or an error. */
int rt_store_has_sample(struct rt_store *s, uint64_t run, uint64_t seq);
/* Fetch one sample into buf (aligned, cap bytes: rt_record_max_size()
 * holds any), *len its length. 0, RT_E_NOTFOUND (not stored), -EMSGSIZE
 * (it does not fit cap), RT_E_CORRUPT (its value cannot be read), or the
 * common errors. */
int rt_store_get_sample(struct rt_store *s, uint64_t run, uint64_t seq, void *buf, size_t cap,
                        size_t *len);

/* First/last seq of run; RT_E_NOTFOUND when it has no samples. */
int rt_store_seq_bounds(struct rt_store *s, uint64_t run, uint64_t *first, uint64_t *last);

/* First seq whose wall clock is >= wall_ns (binary search). 0 with *seq,
 * RT_E_NOTFOUND (no sample that late, or none at all), or the common
 * errors. */
int rt_store_seq_at_time(struct rt_store *s, uint64_t run, uint64_t wall_ns, uint64_t *seq);

/* Visit every run id (ascending) with its metadata (len bytes, not
 * NUL-terminated). 0 when every run was visited, cb's non-zero (the walk
 * stops), or the common errors. */
typedef int (*rt_store_run_cb)(void *ctx, uint64_t run, const char *meta, size_t len);
int rt_store_list_runs(struct rt_store *s, rt_store_run_cb cb, void *ctx);

/* The node mode's lock (STORE/node.lock, exclusive, held while the
 * descriptor returned is open): one node writes a store's job runs at a
 * time, and one started while another still hands its runs over waits up
 * to wait_ms for it. The descriptor, -EBUSY (still held then) or -errno. */
int rt_store_node_lock(struct rt_store *s, unsigned wait_ms);

/* Delete a run: samples, inventories and metadata, in one transaction.
 * 0 (also when there was no such run), or the common errors (nothing is
 * deleted then). */
int rt_store_delete_run(struct rt_store *s, uint64_t run);

/* Bytes in use by the data (pages of all databases) into *bytes. 0, or
 * the common errors. */
int rt_store_used_bytes(struct rt_store *s, uint64_t *bytes);

/* While used bytes exceed the cap, delete the oldest run other than keep
 * (it leaves every listing at once; its samples go in batches). *deleted
 * counts the runs removed. With a time budget, a call stops after about
 * that long, with rt_store_cap_more() set, and the next one goes on. 0
 * (also with no cap, or under it), RT_E_CORRUPT (the pages check before
 * the first deletion found damage: nothing is deleted), or the common
 * errors. */
int rt_store_enforce_cap(struct rt_store *s, uint64_t keep, unsigned *deleted);
void rt_store_set_cap_budget(struct rt_store *s, uint64_t ns);
/* 1 when the last rt_store_enforce_cap stopped at its budget with runs
 * still to delete, else 0. */
int rt_store_cap_more(const struct rt_store *s);

/*
 * Rewrite the store in dir without its free pages (runs deleted by the
 * size cap leave the file as big as it was) and put it in place atomically.
 * Refused with RT_E_BUSY while anything else has the store open: a
 * recorder (or a reader; *user gets a pid when one is known). *before and
 * *after: data.mdb sizes in bytes. 0, or RT_E_BUSY, RT_E_UNSAFE (as
 * rt_store_open: rt_store_refusal says why), RT_E_CORRUPT (the store is
 * damaged: it is left as it is), -ENOSPC (no room for the copy: the store
 * is left as it is), or the common errors.
 */
int rt_store_compact(const char *dir, uint64_t *before, uint64_t *after, long *user);

/* fsync the environment (nothing to do when no commit was left unsynced).
 * 0, or -errno (-EIO, -ENOSPC) or RT_E_STORE. */
int rt_store_sync(struct rt_store *s);

/* Drop the process's mapping of store pages it no longer needs so the
 * resident set does not grow with the size of the store. */
void rt_store_trim_rss(struct rt_store *s);

#endif
