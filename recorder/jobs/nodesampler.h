/*
 * nodesampler.h - the node's one sampler (issue 55): one process reads the
 * host's files once a tick and each job's cgroup counters and members
 * into that job's own run, all runs in one store, their samples committed
 * together.
 *
 * What is here is its core: jobs added by their group's path, each its
 * own run (its own ring, run id, metadata, samples packed against its own
 * last one); a tick samples the host once (collect.c's RT_PART_HOST) and
 * every job over a copy (rt_sampler_init_job); a job whose group emptied
 * or went is ended in its tick. Not yet the node mode's: the watcher
 * (node.c) still starts one recorder per job; rt-bench node1 measures
 * this core against that.
 */
#ifndef RT_NODESAMPLER_H
#define RT_NODESAMPLER_H

#include <stddef.h>
#include <stdint.h>

#include "cgrun.h"
#include "sampler.h"

struct rt_node_job {
	struct rt_cgrun cg;
	struct rt_sampler s;
	struct rt_proctree *tree;
	uint64_t run;
	int over; /* its group emptied or went: its run is ended */
};

struct rt_nodesampler {
	struct rt_collector host;
	struct rt_store *store;
	void *host_buf;
	size_t host_cap;
	struct rt_record host_rec;
	struct rt_node_job **job;
	size_t njob, cap;
	uint32_t ring_slots;
};

/* Over store (the node's, open for writing). 0 or -ENOMEM. */
int rt_nodesampler_open(struct rt_nodesampler *n, struct rt_store *store, uint32_t ring_slots);
/* A job by its group (any form --cgroup takes): its run made in the store
 * with meta (JSON), its first sample taken at the next tick. Its index,
 * or -1 with one line in err. */
long rt_nodesampler_add(struct rt_nodesampler *n, const char *group, const char *meta, size_t len,
                        char *err, size_t cap);
/* One tick: the host once, then every live job. Jobs whose group emptied
 * or went are ended (their last sample this one). The number of jobs
 * sampled; warnings into warn, a line each. */
size_t rt_nodesampler_tick(struct rt_nodesampler *n, char *warn, size_t cap);
/* Commit what waits, end every job's run, close. */
void rt_nodesampler_close(struct rt_nodesampler *n);

#endif
