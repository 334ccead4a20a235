/*
 * sampler.h - one sample, end to end: collect, encode, commit to the store,
 * publish in the ring. The recorder's main loop calls rt_sampler_take() on
 * absolute deadlines; tests call it directly with a fake clock.
 */
#ifndef RT_SAMPLER_H
#define RT_SAMPLER_H

#include <stdint.h>

#include "collect.h"
#include "proctree.h"
#include "rt/clock.h"
#include "rt/ring.h"
#include "rt/store.h"
#include "rt/stream.h"

/* The recorder's sources, in the order they read and fill (every
 * collector of the recorder reads these: rt_collector_open's table). */
extern const struct rt_source_table rt_sampler_sources;

struct rt_sampler {
	unsigned slow_ticks; /* once-a-second samples so far (the tree's fd count: every 5th) */
	struct rt_collector col;
	struct rt_store *store;       /* NULL: nothing writable, nothing is stored */
	struct rt_ring *ring;         /* created after the first sample (sizes) */
	int ring_error;               /* why there is no ring (0: none yet) */
	struct rt_stream_out *stream; /* the live printer's pipe, or NULL */
	uint64_t run;
	uint64_t seq; /* seq of the next sample */
	void *rec;    /* aligned record buffer */
	size_t rec_cap;
	size_t last_len;
	void *inv_buf;
	size_t inv_cap;
	unsigned since_trim, since_cap;
	int cap_refused;   /* said once: the cap found the store damaged */
	int store_failing; /* the last write failed (said once per outage) */
	uint64_t unstored; /* samples that could not be committed */
	int inv_pending;   /* the current inventory is not in the store yet */
	char ring_path[4096];
	uint32_t ring_slots;
	struct rt_time last;      /* time of the last sample */
	struct rt_proctree *tree; /* NULL: no process tree is tracked */
	/* a named group (col.cg_fixed): the process section's CPU is its
	 * counter less an offset from the sample it could first be read
	 * (cg_cpu); cg_before: the CPU in no interval, seconds (-1: unknown) */
	int cg_cpu;
	int64_t cg_off_user, cg_off_sys, cg_first_us;
	double cg_before;
	int32_t tracked_pid;
	/* samples the store could not take, in order ([u32 len][pad][record]
	 * each, 8-byte aligned): stored when it can again, else parked in a
	 * ring for the next reader or recorder (rt_sampler_finish) */
	unsigned char *wait;
	size_t wait_len, wait_cap;
	uint64_t nwait, waited; /* waiting now; waited at some point, in all */
	unsigned since_drain;
	int parked; /* what still waits is in a ring left behind: keep it */
	/* a job of the node's one sampler: its col is the job's part, its
	 * samples copies of the host's record of the tick (NULL: its own) */
	const struct rt_record *host_rec;
	uint32_t inv_gen; /* the host's inventory generation its run has */
	/* the sample being taken, between rt_sampler_begin and _keep */
	struct rt_record pend_rec;
	struct rt_time pend_t;
	unsigned pend_flags;
	int pend_inv;      /* its inventory changed */
	uint32_t pend_gen; /* a job's: the host's inventory generation it copied */
	int host_forks_ok; /* host_forks: the host's fork count at begin */
	uint64_t host_forks;
};

/* Open the collectors. ring_slots: 0 for the default. */
int rt_sampler_init(struct rt_sampler *s, struct rt_store *store, uint64_t run,
                    uint32_t ring_slots);

/* A job's sampler in the node's one sampler: its collector is the job's
 * part over host (rt_collector_open_job), its samples copies of the host's
 * record of the tick, set in s->host_rec before each take. The store is
 * the node's, shared (its group is set by the node). */
int rt_sampler_init_job(struct rt_sampler *s, struct rt_store *store, uint64_t run,
                        uint32_t ring_slots, struct rt_collector *host);

/*
 * Take sample s->seq now. Publishes it in the ring, creating the ring on
 * the first call, and hands it to the store, which commits it with its
 * group (a failure is counted and said once per outage through *warn, and
 * sampling goes on) (a ring that cannot
 * be made is said once: s->ring_error), and sends it down the stream.
 * *warn gets zero or more lines separated by '\n'. Returns 0, or a negative
 * error when no sample could be taken at all (no memory).
 */
int rt_sampler_take(struct rt_sampler *s, unsigned flags, char *warn, size_t warncap);
/* rt_sampler_take in three steps, for the node's worker threads: begin
 * (the caller's thread: the time, the host's record copied and what the
 * job takes of the host collector; 0 or as rt_sampler_take), read (any one
 * thread: the job's cgroup and process tree, touching only the job's own
 * state; own_clock: the sample's time taken now, as the read starts), keep
 * (the caller's thread again: the GPUs dealt, the record sealed, ring and
 * store, warnings as rt_sampler_take's). */
int rt_sampler_begin(struct rt_sampler *s, unsigned flags);
void rt_sampler_read(struct rt_sampler *s, int own_clock);
void rt_sampler_keep(struct rt_sampler *s, char *warn, size_t warncap);

/* Feed the live printer through out from now on: the run's metadata, and
 * the current inventory and last sample when one was taken. */
void rt_sampler_attach_stream(struct rt_sampler *s, struct rt_stream_out *out, const char *meta,
                              size_t metalen);

/* Commit what waits now (counting what could not be), without a sync:
 * rt_sampler_finish syncs it with the run's final metadata. */
void rt_sampler_commit(struct rt_sampler *s);
/* Commit what waits, sync the store and mark the ring finished (readers
 * drain and stop). Samples the store still cannot take are parked in the
 * run's ring (s->parked): the next recorder or reader on the store stores
 * them once it can, with the run's final metadata (rt_sampler_park_meta). */
void rt_sampler_finish(struct rt_sampler *s);
/* Before a final sample: wait until 1 ms after the last one, so that its
 * rates have an interval (a stop within a millisecond of a sample). */
void rt_sampler_space_final(const struct rt_sampler *s);
/* With samples parked: keep the run's final metadata beside its ring for
 * the salvage (the store keeps the run "running" until then). 0 or -errno. */
int rt_sampler_park_meta(struct rt_sampler *s, const char *meta, size_t len);
/* Release everything; unlink_ring removes the ring file. */
void rt_sampler_close(struct rt_sampler *s, int unlink_ring);

#endif
