/*
 * nodesampler.h - the node's one sampler: one process reads the host's
 * files once a tick and each job's cgroup counters and members into that
 * job's own run, all runs in one store, their samples committed together.
 *
 * Jobs are added by their group's path, each its own run (its own ring,
 * run id, metadata, samples packed against its own last one), its first
 * sample taken at once. A tick samples the host once (collect.c's
 * RT_PART_HOST) and every job over a copy (rt_sampler_init_job). A job
 * ends as a --cgroup recorder's run does: its group emptied (woken by its
 * own wait descriptor, all of them in one epoll: a final sample then) or
 * went or was found empty in a tick (that sample its last), or the node
 * stopped (a final sample); its metadata is then the same as a --cgroup
 * run's (status, the kernel's word on its memory, its allocation).
 */
#ifndef RT_NODESAMPLER_H
#define RT_NODESAMPLER_H

#include <stddef.h>
#include <stdint.h>

#include "cgrun.h"
#include "nodeadopt.h"
#include "nodepool.h"
#include "rt/common.h"
#include "rt/config.h"
#include "rt/runmeta.h"
#include "sampler.h"

/* Descriptors the node keeps free for its own use (the readers' files
 * opened for one read each, the exporter's pipe, a learn's, the store's):
 * a job is not started within this many of the soft limit. Below half the
 * limit a job keeps its files open (about 20: its counters, its members');
 * past it, only its ring and its wait (rt_cgrun_lean: about 3) */
#define RT_NODE_FD_FLOOR 64

struct rt_node_job {
	char group[512]; /* as it was added */
	struct rt_cgrun cg;
	struct rt_sampler s;
	struct rt_proctree *tree;
	struct rt_run_meta meta;
	struct rt_alloc alloc;
	uint64_t run;
	int over; /* its run is ended */
	/* what a node started later needs to go on with its run (nodeadopt.h) */
	struct rt_run_resume resume;
	int gone_on;         /* its run is one a node before this one had */
	long resume_at;      /* monotonic seconds of its resume object's last write */
	uint64_t not_stored; /* a run gone on with: the samples a node before lost */
	/* its tick's read, by one of the node's readers (nodepool.h): while
	 * it is not idle, a worker owns its sampler's collector and tree */
	struct rt_nodetask task;
	int read_failed; /* the read had no buffer: the sample is not kept */
	int in_tick;     /* handed to the readers in this tick */
	unsigned missed; /* ticks missed since its last sample kept */
};

/* What every job's run starts from, the node's. */
struct rt_node_base {
	const struct rt_run_meta *meta;   /* the host, interval, tags, the user's meta */
	const struct rt_request *request; /* --request, NULL */
	uint32_t ring_slots;              /* 0: 16 */
	/* a job's run ended (its metadata stored): called before it is freed */
	void (*ended)(void *arg, const struct rt_node_job *j);
	void *arg;
};

struct rt_nodesampler {
	struct rt_collector host;
	struct rt_store *store;
	struct rt_node_base base;
	void *host_buf;
	size_t host_cap;
	struct rt_record host_rec;
	int host_ok; /* host_rec holds a sample */
	struct rt_node_job **job;
	size_t njob, cap;
	int epfd; /* every job's wait descriptor, and ino */
	int ino;  /* inotify: every job's parts watch (a group made below its), -1 */
	struct rt_buf mb;
	struct rt_nodeadopt adopt;            /* the runs a node before this one left */
	int stopping;                         /* the node stops: its live jobs' runs handed over */
	struct rt_nodepool *pool;             /* the jobs' readers (NULL: read on this thread) */
	struct rt_nodepool_worker own_reader; /* without them: this thread's buffer */
};

/* Over store (the node's, open for writing). 0 or -errno. */
int rt_nodesampler_open(struct rt_nodesampler *n, struct rt_store *store,
                        const struct rt_node_base *base);
/* A job by its group (any form --cgroup takes): its run made in the store
 * (or, where a node before this one left a run of this very group, that
 * run gone on with: nodeadopt.h) and its first sample taken. Its index, or
 * -1 with one line in err. */
long rt_nodesampler_add(struct rt_nodesampler *n, const char *group, char *err, size_t cap);
/* One tick: the host once, then every live job, read by the node's
 * readers until three quarters of the interval have passed: a job whose
 * read is not done by then misses this tick (its sample, when it comes,
 * is kept at the next), and one still being read when a tick comes skips
 * it, counted in its own samples_skipped. Jobs whose group emptied or went
 * are ended (their last sample this one). The number of jobs sampled;
 * warnings into warn, a line each. */
size_t rt_nodesampler_tick(struct rt_nodesampler *n, char *warn, size_t cap);
/* What wakes the node's wait when a job's group empties (-1: none). */
int rt_nodesampler_wait_fd(const struct rt_nodesampler *n);
/* The wait woke: jobs whose group emptied now get a final sample and end. */
void rt_nodesampler_woke(struct rt_nodesampler *n, char *warn, size_t cap);
/* The node ran past missed deadlines: each live job's run counts them. */
void rt_nodesampler_skipped(struct rt_nodesampler *n, uint64_t missed);
/* Every live job: a final sample, its run ended and handed over (the node
 * stops: a node started later goes on with it while its group lives). */
void rt_nodesampler_stop(struct rt_nodesampler *n, char *warn, size_t cap);
/* The node has looked for its jobs once: the runs a node before it left
 * whose jobs ended meanwhile are ended for good (nodeadopt.h), ended told
 * each. */
void rt_nodesampler_settle(struct rt_nodesampler *n, void (*ended)(void *arg, uint64_t run),
                           void *arg);
/* End every job's run still live (no final sample), close. */
void rt_nodesampler_close(struct rt_nodesampler *n);

#endif
