/*
 * nodesampler.c - the node's one sampler's core (see nodesampler.h).
 *
 * A tick: the host collector (every source but a job's cgroup) takes one
 * sample and seals it; each job's sampler copies it and reads its own
 * group's counters into the copy (collect.c), then its members as a
 * process tree, then hands the record to its own ring and to the shared
 * store, which packs it against the run's own last sample (store_write.c)
 * and commits every run's waiting samples in one transaction when the
 * group is due. The group is each run's half ring times the jobs, so no
 * run's waiting samples outgrow what its ring keeps for salvage.
 */
#define _GNU_SOURCE
#include "nodesampler.h"

#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt/common.h"
#include "rt/record.h"

/* the power-loss window, as a recorder's own (sampler.c) */
#define GROUP_AGE_NS (30ull * 1000000000ull)

int rt_nodesampler_open(struct rt_nodesampler *n, struct rt_store *store, uint32_t ring_slots)
{
	memset(n, 0, sizeof(*n));
	/* each job's big buffers (its record, inventory, tree, identity) are
	 * mapped, not carved from the heap: their untouched pages cost no
	 * memory (at 100 jobs 5 MiB less PSS); the node's process is this */
	mallopt(M_MMAP_THRESHOLD, 16384);
	n->store = store;
	/* a job's ring keeps 16 samples (a recorder's a minute): the node's
	 * group commit comes every 8 ticks for all runs at once, one sync, and
	 * each ring's shared memory is most of a job's PSS */
	n->ring_slots = ring_slots ? ring_slots : 16;
	n->host_cap = rt_record_max_size();
	if (posix_memalign(&n->host_buf, 64, n->host_cap)) {
		n->host_buf = NULL;
		return -ENOMEM;
	}
	int rc = rt_collector_open(&n->host);
	n->host.part = RT_PART_HOST;
	return rc;
}

/* The group commit for every job: each run's half ring, times the jobs. */
static void set_group(struct rt_nodesampler *n)
{
	size_t live = 0;
	for (size_t i = 0; i < n->njob; i++)
		live += !n->job[i]->over;
	unsigned per = n->ring_slots / 2 ? n->ring_slots / 2 : 1;
	rt_store_set_group(n->store, (unsigned)(per * (live ? live : 1)), GROUP_AGE_NS, 1);
}

/* Room for one more job in the table. */
static int grow(struct rt_nodesampler *n)
{
	if (n->njob < n->cap)
		return 0;
	size_t cap = n->cap ? n->cap * 2 : 16;
	struct rt_node_job **p = realloc(n->job, cap * sizeof(*p));
	if (!p)
		return -ENOMEM;
	n->job = p;
	n->cap = cap;
	return 0;
}

long rt_nodesampler_add(struct rt_nodesampler *n, const char *group, const char *meta, size_t len,
                        char *err, size_t cap)
{
	struct rt_node_job *j = calloc(1, sizeof(*j));
	int rc = j && grow(n) == 0 ? 0 : -ENOMEM;
	if (!rc && rt_cgrun_open(&j->cg, group, err, cap)) {
		free(j);
		return -1;
	}
	if (!rc)
		rc = rt_store_new_run(n->store, meta, len, &j->run);
	if (!rc)
		rc = rt_sampler_init_job(&j->s, n->store, j->run, n->ring_slots, &n->host);
	if (!rc && rt_cgrun_tree(&j->cg, &j->tree))
		j->tree = NULL; /* (its counters still read) */
	if (rc) {
		snprintf(err, cap, "cannot start the run of %s: %s", group, rt_strerror(rc));
		if (j) {
			rt_cgrun_close(&j->cg);
			rt_sampler_close(&j->s, 1);
		}
		free(j);
		return -1;
	}
	j->s.col.cg_fixed = &j->cg.job.cp;
	j->s.tree = j->tree;
	n->job[n->njob] = j;
	set_group(n);
	return (long)n->njob++;
}

/* A job's run is over: what waits committed and synced, its ring
 * finished (a reader stops there), its pack state freed. */
static void end_job(struct rt_nodesampler *n, struct rt_node_job *j)
{
	j->over = 1;
	rt_sampler_finish(&j->s);
	rt_store_end_run(n->store, j->run);
	rt_proctree_close(j->tree);
	j->tree = j->s.tree = NULL;
	rt_cgrun_close(&j->cg);
}

/* One job's sample of this tick; whether its run is over now. */
static int sample_job(struct rt_nodesampler *n, struct rt_node_job *j, char *warn, size_t cap)
{
	size_t at = strlen(warn);
	rt_cgrun_read_parts(&j->cg, &j->s.col, 5);
	j->s.host_rec = &n->host_rec;
	if (rt_sampler_take(&j->s, 0, warn + at, cap - at))
		return 0;
	at = strlen(warn);
	if (rt_cgrun_over(&j->cg, j->tree, warn + at, cap - at))
		return 1;
	rt_cgrun_refresh(&j->cg);
	return 0;
}

size_t rt_nodesampler_tick(struct rt_nodesampler *n, char *warn, size_t cap)
{
	int changed;
	size_t sampled = 0, ended = 0;
	warn[0] = '\0';
	n->host.force_slow = 0;
	if (rt_collector_sample(&n->host, n->host_buf, n->host_cap, &n->host_rec, &changed))
		return 0;
	rt_record_seal(&n->host_rec);
	for (size_t i = 0; i < n->njob; i++) {
		struct rt_node_job *j = n->job[i];
		if (j->over)
			continue;
		sampled++;
		if (sample_job(n, j, warn, cap)) {
			end_job(n, j);
			ended++;
		}
	}
	if (ended)
		set_group(n);
	return sampled;
}

void rt_nodesampler_close(struct rt_nodesampler *n)
{
	for (size_t i = 0; i < n->njob; i++) {
		struct rt_node_job *j = n->job[i];
		if (!j->over)
			end_job(n, j);
		rt_sampler_close(&j->s, 0);
		free(j);
	}
	free(n->job);
	rt_collector_close(&n->host);
	free(n->host_buf);
	memset(n, 0, sizeof(*n));
}
