/*
 * collect.c - one sample from every source, and inventory upkeep.
 *
 * Each source reads its file first and says whether its device set
 * changed; only then is the record laid out, because the inventory decides
 * the record's counts.
 */
#define _GNU_SOURCE
#include "collect.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rt/clock.h"
#include "rt/sysroot.h"

static int read_fd(struct rt_collector *c, int fd, size_t *len, int to_eof)
{
	if (fd < 0)
		return -EBADF;
	for (;;) {
		ssize_t n = to_eof ? rt_pread_to_eof(fd, c->buf, c->bufcap)
		                   : rt_pread_all(fd, c->buf, c->bufcap);
		if (n < 0)
			return (int)n;
		if ((size_t)n + 1 < c->bufcap || c->bufcap >= (8u << 20)) {
			*len = (size_t)n;
			return 0;
		}
		/* the file filled the buffer: grow (rare: many CPUs or disks) */
		char *p = realloc(c->buf, c->bufcap * 2);
		if (!p) {
			*len = (size_t)n;
			return 0;
		}
		c->buf = p;
		c->bufcap *= 2;
	}
}

int rt_read_fd(struct rt_collector *c, int fd, size_t *len)
{
	return read_fd(c, fd, len, 0);
}

int rt_read_fd_to_eof(struct rt_collector *c, int fd, size_t *len)
{
	return read_fd(c, fd, len, 1);
}

void *rt_collector_own(struct rt_collector *c, const struct rt_source *src)
{
	for (size_t i = 0; i < c->nsrc; i++)
		if (c->src[i] == src) /* (a job's part: the host's sources are the node's) */
			return c->own[i] || !c->host ? c->own[i] : c->host->own[i];
	return NULL;
}

void rt_close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

int rt_collector_open(struct rt_collector *c, const struct rt_source_table *t)
{
	memset(c, 0, sizeof(*c));
	if (t->n > RT_MAX_SOURCES)
		return -EINVAL;
	c->src = t->src;
	c->nsrc = t->n;
	c->bufcap = 64 * 1024;
	c->buf = malloc(c->bufcap);
	c->inv = calloc(1, sizeof(*c->inv));
	c->scratch = calloc(1, sizeof(*c->scratch));
	if (!c->buf || !c->inv || !c->scratch) {
		rt_collector_close(c);
		return -ENOMEM;
	}
	c->inv->gen = 0; /* the first sample builds generation 1 */
	for (size_t i = 0; i < c->nsrc; i++) {
		int rc = c->src[i]->open ? c->src[i]->open(c, &c->own[i]) : 0;
		if (rc) {
			rt_collector_close(c);
			return rc;
		}
	}
	return 0;
}

void rt_collector_close(struct rt_collector *c)
{
	if (c->inv) /* opened (a failed open closes what it opened) */
		for (size_t i = 0; i < c->nsrc; i++)
			if (c->src[i]->close)
				c->src[i]->close(c, c->own[i]);
	memset(c->own, 0, sizeof(c->own));
	free(c->buf);
	free(c->inv);
	free(c->scratch);
	c->buf = NULL;
	c->inv = c->scratch = NULL;
}

/* Whether source i is read in this collector's samples: a host's part
 * leaves the job's cgroup out, a job's part is its cgroup alone. */
static int takes(const struct rt_collector *c, size_t i)
{
	int cg = c->src[i]->job_part;
	return c->part == RT_PART_HOST ? !cg : c->part == RT_PART_JOB ? cg : 1;
}

int rt_collector_sample(struct rt_collector *c, void *buf, size_t cap, struct rt_record *rec,
                        int *inv_changed)
{
	int changed = c->inv->gen == 0;
	/* what rarely changes is looked at once a second (every sample at 1 Hz
	 * and slower; the slack keeps a 1 s pace's jitter from skipping one) */
	struct rt_time now;
	rt_clock_now(&now);
	c->slow = changed || c->force_slow || now.mono_ns + RT_SLOW_SLACK_NS >= c->slow_next_ns;
	if (c->slow)
		c->slow_next_ns = now.mono_ns + RT_SLOW_PERIOD_NS;
	for (size_t i = 0; i < c->nsrc; i++)
		if (c->src[i]->read && takes(c, i))
			c->src[i]->read(c, c->own[i], &changed);
	*inv_changed = 0;
	if (changed) {
		struct rt_inventory *n = c->scratch;
		memset(n, 0, sizeof(*n));
		for (size_t i = 0; i < c->nsrc; i++)
			if (c->src[i]->inventory)
				c->src[i]->inventory(c, c->own[i], n);
		if (c->inv->gen == 0 || !rt_inventory_equal(n, c->inv)) {
			n->gen = (c->inv->gen ? c->inv->gen : c->gen_floor) + 1;
			c->scratch = c->inv;
			c->inv = n;
			*inv_changed = 1;
		}
	}
	const struct rt_inventory *inv = c->inv;
	int rc =
	    rt_record_init(buf, cap, inv->ncpu, inv->ndisk, inv->nmount, inv->nnic, inv->ngpu, rec);
	if (rc)
		return rc;
	rec->h->inv_gen = inv->gen;
	for (size_t i = 0; i < c->nsrc; i++)
		if (c->src[i]->fill && takes(c, i))
			c->src[i]->fill(c, c->own[i], rec);
	return 0;
}

int rt_collector_open_job(struct rt_collector *job, struct rt_collector *host)
{
	memset(job, 0, sizeof(*job));
	job->part = RT_PART_JOB;
	job->host = host;
	job->buf = host->buf; /* (read by one thread at a time: the host's) */
	job->bufcap = host->bufcap;
	job->inv = host->inv;
	job->src = host->src; /* (the node's table) */
	job->nsrc = host->nsrc;
	for (size_t i = 0; i < job->nsrc; i++)
		if (job->src[i]->job_part && job->src[i]->open) {
			int rc = job->src[i]->open(job, &job->own[i]);
			if (rc)
				return rc;
		}
	return 0;
}

void rt_collector_close_job(struct rt_collector *job)
{
	for (size_t i = 0; i < job->nsrc; i++)
		if (job->src[i]->job_part && job->src[i]->close)
			job->src[i]->close(job, job->own[i]);
	memset(job, 0, sizeof(*job));
}

int rt_collector_job_copy(struct rt_collector *job, const struct rt_record *hostrec, void *buf,
                          size_t cap, struct rt_record *rec)
{
	struct rt_collector *host = job->host;
	size_t size = hostrec->h->size;
	if (size > cap)
		return -ENOSPC;
	memcpy(buf, hostrec->h, size); /* (sealed: its checksum binds the copy) */
	int rc = rt_record_decode(buf, size, rec);
	if (rc)
		return rc;
	if (!job->own_buf) {
		job->buf = host->buf; /* (the host's may have grown) */
		job->bufcap = host->bufcap;
	}
	job->inv = host->inv; /* (the host's devices are every job's) */
	job->slow = host->slow;
	job->wall_ns = host->wall_ns;
	return 0;
}

void rt_collector_job_read(struct rt_collector *job, struct rt_record *rec)
{
	for (size_t i = 0; i < job->nsrc; i++)
		if (takes(job, i)) {
			int changed = 0;
			if (job->src[i]->read)
				job->src[i]->read(job, job->own[i], &changed);
			if (job->src[i]->fill)
				job->src[i]->fill(job, job->own[i], rec);
		}
	if (!job->own_buf) {
		job->host->buf = job->buf; /* (a job's file may have grown it) */
		job->host->bufcap = job->bufcap;
	}
}

int rt_collector_sample_job(struct rt_collector *job, const struct rt_record *hostrec, void *buf,
                            size_t cap, struct rt_record *rec)
{
	int rc = rt_collector_job_copy(job, hostrec, buf, cap, rec);
	if (!rc)
		rt_collector_job_read(job, rec);
	return rc;
}
