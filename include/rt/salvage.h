/*
 * salvage.h - finishing the runs of recorders that died.
 *
 * A recorder killed mid-run leaves its run "running" in the store, the
 * samples of its last group uncommitted, and its ring in the shm directory.
 * Whoever opens the store next (a recorder, or rt-export) finds such runs,
 * copies the ring's uncommitted samples into the store exactly once
 * (rt_store_salvage), marks the run crashed and removes the ring.
 */
#ifndef RT_SALVAGE_H
#define RT_SALVAGE_H

#include <sys/types.h>

#include "rt/store.h"

/* Finish every run whose recorder is gone. *runs counts the runs finished,
 * *samples the samples salvaged from their rings (either may be NULL).
 * Returns 0, or the first error (the other runs are still tried). */
int rt_salvage_dead_runs(struct rt_store *s, unsigned *runs, unsigned *samples);

/* The final metadata a recorder that could not write its store left beside
 * its ring (<ring_path>.meta, a file of this user's): its length in buf, f
 * (may be NULL) read from it, or -1 when there is none whole. */
struct rt_run_fields;
ssize_t rt_salvage_read_side_meta(const char *ring_path, char *buf, size_t cap,
                                  struct rt_run_fields *f);

#endif
