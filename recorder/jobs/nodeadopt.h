/*
 * nodeadopt.h - the runs a node started later goes on with.
 *
 * A node that stops (TERM, INT, HUP: a restart, an upgrade) ends each live
 * job's run as today and marks it handed over; one that dies (SIGKILL, a
 * crash) leaves it running, or crashed once a reader salvaged its ring.
 * Each such run carries its "resume" object (runmeta.h): its group's
 * inode and what its CPU is shown against. A node started later finds
 * them here, and a job whose group is the same group (its path and its
 * directory's inode) goes on as the same run: the dead node's ring
 * salvaged first, its samples numbered on from the store's last, the gap
 * counted in its samples_skipped. A group made anew at the same path is a
 * new job. Read-only but for the salvage.
 */
#ifndef RT_NODEADOPT_H
#define RT_NODEADOPT_H

#include <stdint.h>

#include "rt/runmeta.h"
#include "rt/store.h"

struct rt_nodeadopt_run {
	uint64_t run, start_ns;
	char path[512]; /* its cgroup.path */
	struct rt_run_resume resume;
	uint64_t not_stored; /* its samples_not_stored so far (a stop's metadata) */
	int taken;           /* gone on with (or an older run of a group that was) */
};

struct rt_nodeadopt {
	struct rt_nodeadopt_run *run;
	size_t n;
	uint32_t max_gen; /* the highest inventory generation among them */
};

/* The store's runs a node may go on with (a->n of them). 0 or an error. */
int rt_nodeadopt_find(struct rt_store *s, struct rt_nodeadopt *a);

/* The one of the group at path whose directory's inode is ino, taken out
 * of a (so that it is gone on with once), or NULL. */
const struct rt_nodeadopt_run *rt_nodeadopt_take(struct rt_nodeadopt *a, const char *path,
                                                 uint64_t ino);

/* A run taken that could not be gone on with, offered again. */
void rt_nodeadopt_put_back(struct rt_nodeadopt *a, uint64_t run);

/* Before going on with r: the samples of a dead node's ring that the store
 * lacks copied in; *next the seq its next sample takes, *last_mono the
 * monotonic time of its last stored one (0: none). 0, -EBUSY when a live
 * writer holds its ring, or an error. */
int rt_nodeadopt_prepare(struct rt_store *s, const struct rt_nodeadopt_run *r, uint64_t *next,
                         uint64_t *last_mono);

/* Whether r's group lives: its path, in any hierarchy, the same
 * directory (its inode). */
int rt_nodeadopt_group_lives(const struct rt_nodeadopt_run *r);

/* Once the node has looked for its jobs: the runs no job went on with
 * whose group is gone (their jobs ended while no node ran) are ended for
 * good, as far as they went: a dead node's ring salvaged and the run
 * crashed, a handed-over run's mark cleared (it ended as it was stored);
 * ended(arg, run) is told each (its sinks then finish it). */
void rt_nodeadopt_settle(struct rt_store *s, struct rt_nodeadopt *a,
                         void (*ended)(void *arg, uint64_t run), void *arg);

void rt_nodeadopt_free(struct rt_nodeadopt *a);

#endif
