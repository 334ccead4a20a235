/*
 * ring.h - the live sample ring in /dev/shm.
 *
 * One file per run, created 0600 with O_EXCL|O_NOFOLLOW. A header (magic,
 * layout, slot size and count, writer pid and start time, run id, state,
 * heartbeat, head) is followed by slot_count fixed-size slots; sample seq
 * lives in slot seq % slot_count.
 *
 * Each slot has a seqlock version word: the k-th write of a slot moves it to
 * 2k-1 (odd: being written) then 2k (complete), so the seq a slot holds
 * follows from its version and a reader can tell "not yet written" from
 * "overwritten" (lapped). The writer never waits for readers. A reader that
 * was lapped catches up from the store (every sample in the ring has been
 * committed to the store before it is published).
 *
 * The writer holds an exclusive flock on the file for its whole life, so a
 * reader can tell a live writer from a dead one even if the pid was reused.
 *
 * Readers sleep on futex words in the header until a sample is published
 * (rt_ring_wait): an idle reader costs nothing between samples, and the
 * writer makes the wake call only while some reader sleeps.
 */
#ifndef RT_RING_H
#define RT_RING_H

#include <stddef.h>
#include <stdint.h>

#define RT_RING_MAGIC 0x474e4952u /* "RING" */
#define RT_RING_LAYOUT 1

enum rt_ring_state { RT_RING_RUNNING = 1, RT_RING_FINISHED = 2 };

struct rt_ring;

/*
 * Create the ring file at path (must not exist). slot_size is the largest
 * record it must hold. Returns 0 or -errno (-EEXIST if path exists).
 */
int rt_ring_create(const char *path, uint64_t run_id, uint32_t slot_size, uint32_t slot_count,
                   struct rt_ring **out);

/* Publish record seq (len bytes). seq must be the previous seq + 1.
 * Returns 0 or -EMSGSIZE when len exceeds the slot size. */
int rt_ring_publish(struct rt_ring *r, uint64_t seq, const void *rec, size_t len);

/* Writer: update the heartbeat (monotonic ns) / mark the run finished. */
void rt_ring_heartbeat(struct rt_ring *r, uint64_t mono_ns);
void rt_ring_set_state(struct rt_ring *r, enum rt_ring_state st);

/* Open an existing ring read-only, validating its header against the file
 * size. Returns 0, -errno, RT_E_CORRUPT or RT_E_LAYOUT. */
int rt_ring_open(const char *path, struct rt_ring **out);

/* What the ring's header says now (these cannot fail: rt_ring_open
 * checked the header): the seq the next published sample will have (=
 * count of published ones), its slots, its run, the run's state. */
uint64_t rt_ring_head(const struct rt_ring *r);
uint32_t rt_ring_slot_count(const struct rt_ring *r);
uint64_t rt_ring_run_id(const struct rt_ring *r);
enum rt_ring_state rt_ring_state(const struct rt_ring *r);

/*
 * Copy sample seq into buf (cap bytes, 8-byte aligned) and set *len.
 * Returns 0, RT_E_AGAIN (not published yet), RT_E_LAPPED (overwritten:
 * read it from the store) or -EMSGSIZE. Never blocks the writer.
 */
int rt_ring_read(const struct rt_ring *r, uint64_t seq, void *buf, size_t cap, size_t *len);

/* 1 when the writer process still holds the ring, 0 when it is gone. */
int rt_ring_writer_alive(const struct rt_ring *r);

/*
 * Sleep until the head moves past head, the run's state changes, or
 * timeout_ns passes: a futex on the ring header that the writer wakes after
 * each publish (only when someone waits). A ring whose writer does not wake
 * (older rt) or that could not be opened for writing gets a nap of at most
 * RT_RING_NAP_NS instead. 0 when woken, RT_E_AGAIN on timeout or after a
 * nap (time to check that the writer is still alive).
 */
#define RT_RING_NAP_NS 50000000ull
int rt_ring_wait(struct rt_ring *r, uint64_t head, uint64_t timeout_ns);

/* Sleep until the run's state leaves RUNNING or timeout_ns passes (no wake
 * per sample: for readers that only care about the end). 0 when it left
 * RUNNING, RT_E_AGAIN otherwise. */
int rt_ring_wait_end(struct rt_ring *r, uint64_t timeout_ns);

/* Unmap and close; the writer may also unlink the file. */
void rt_ring_close(struct rt_ring *r, int unlink_file);

/* Ring file path for a run: <dir>/rt-<uid>-<hash of store_key>-<run>.ring,
 * where dir is $RT_SHM_DIR or /dev/shm and store_key is
 * rt_store_ring_key() of the run's store. 0, or -ENAMETOOLONG when it does
 * not fit cap. */
int rt_ring_path(char *buf, size_t cap, const char *store_key, uint64_t run_id);

#endif
