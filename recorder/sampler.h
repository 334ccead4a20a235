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

struct rt_sampler {
	struct rt_collector col;
	struct rt_store *store;
	struct rt_ring *ring; /* created after the first sample (sizes) */
	uint64_t run;
	uint64_t seq; /* seq of the next sample */
	void *rec;    /* aligned record buffer */
	size_t rec_cap;
	size_t last_len;
	void *inv_buf;
	size_t inv_cap;
	uint64_t last_sync_ns;
	unsigned since_trim, since_cap;
	int store_failed; /* reported once */
	char ring_path[4096];
	uint32_t ring_slots;
	struct rt_time last;      /* time of the last sample */
	struct rt_proctree *tree; /* NULL: no process tree is tracked */
	int32_t tracked_pid;
};

/* Open the collectors. ring_slots: 0 for the default. */
int rt_sampler_init(struct rt_sampler *s, struct rt_store *store, uint64_t run,
                    uint32_t ring_slots);

/*
 * Take sample s->seq now. Commits it to the store (a failure is reported
 * once through *warn and sampling goes on) and publishes it in the ring,
 * creating the ring on the first call. Returns 0, or a negative error that
 * stops the run (no memory, ring cannot be created).
 */
int rt_sampler_take(struct rt_sampler *s, unsigned flags, char *warn, size_t warncap);

/* Sync the store and mark the ring finished (readers drain and stop). */
void rt_sampler_finish(struct rt_sampler *s);
/* Release everything; unlink_ring removes the ring file. */
void rt_sampler_close(struct rt_sampler *s, int unlink_ring);

#endif
