/*
 * nodeadopt.c - the runs a node started later goes on with (see
 * nodeadopt.h).
 */
#define _GNU_SOURCE
#include "nodeadopt.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "rt/common.h"
#include "rt/record.h"
#include "rt/ring.h"
#include "rt/sysroot.h"

/* the inventory generations looked for in a run (a host's devices change
 * a few times in a run's life) */
#define MAX_GENS 4096

struct find_ctx {
	struct rt_nodeadopt *a;
	size_t cap;
	int rc;
};

/* Whether a run in this state may be gone on with: a dead node's (still
 * running, or crashed once a reader salvaged it), or one a stopping node
 * handed over. */
static int may_go_on(const struct rt_run_fields *f)
{
	enum rt_run_status st = rt_run_status_of(f->status);
	if (!f->has_resume || !f->cg_path[0])
		return 0;
	return st == RT_RUN_RUNNING || st == RT_RUN_CRASHED ||
	       (f->resume.handover && (st == RT_RUN_FINISHED || st == RT_RUN_KILLED));
}

static int found_run(void *vctx, uint64_t run, const char *meta, size_t len)
{
	struct find_ctx *x = vctx;
	struct rt_run_fields f;
	if (rt_runmeta_read(meta, len, &f) || !may_go_on(&f))
		return 0;
	if (x->a->n == x->cap) {
		size_t cap = x->cap ? x->cap * 2 : 16;
		struct rt_nodeadopt_run *p = realloc(x->a->run, cap * sizeof(*p));
		if (!p) {
			x->rc = -ENOMEM;
			return 1;
		}
		x->a->run = p;
		x->cap = cap;
	}
	struct rt_nodeadopt_run *r = &x->a->run[x->a->n++];
	memset(r, 0, sizeof(*r)); /* (realloc's bytes are no state) */
	r->run = run;
	r->start_ns = f.start_ns;
	snprintf(r->path, sizeof(r->path), "%s", f.cg_path);
	r->resume = f.resume;
	r->not_stored = f.samples_not_stored;
	return 0;
}

/* The highest inventory generation stored for run. */
static uint32_t max_gen_of(struct rt_store *s, uint64_t run)
{
	uint32_t g = 0;
	for (uint32_t k = 1; k <= MAX_GENS; k++) {
		void *buf;
		size_t len;
		if (rt_store_get_inventory(s, run, k, &buf, &len))
			break;
		free(buf);
		g = k;
	}
	return g;
}

int rt_nodeadopt_find(struct rt_store *s, struct rt_nodeadopt *a)
{
	memset(a, 0, sizeof(*a));
	struct find_ctx x = {.a = a};
	int rc = rt_store_list_runs(s, found_run, &x);
	if (x.rc)
		rc = x.rc;
	for (size_t i = 0; i < a->n; i++) {
		uint32_t g = max_gen_of(s, a->run[i].run);
		a->max_gen = g > a->max_gen ? g : a->max_gen;
	}
	return rc;
}

/* Whether entry r is a run of the group at path with inode ino. */
static int of_group(const struct rt_nodeadopt_run *r, const char *path, uint64_t ino)
{
	return r->resume.group_ino == ino && !strcmp(r->path, path);
}

const struct rt_nodeadopt_run *rt_nodeadopt_take(struct rt_nodeadopt *a, const char *path,
                                                 uint64_t ino)
{
	struct rt_nodeadopt_run *best = NULL;
	for (size_t i = 0; i < a->n; i++) /* (the newest, should there be two) */
		if (!a->run[i].taken && of_group(&a->run[i], path, ino) &&
		    (!best || a->run[i].run > best->run))
			best = &a->run[i];
	if (!best)
		return NULL;
	for (size_t i = 0; i < a->n; i++) /* older runs of the group: left as they are */
		if (of_group(&a->run[i], path, ino))
			a->run[i].taken = 1;
	return best;
}

void rt_nodeadopt_put_back(struct rt_nodeadopt *a, uint64_t run)
{
	for (size_t i = 0; i < a->n; i++)
		if (a->run[i].run == run) {
			a->run[i].taken = 0;
			for (size_t k = 0; k < a->n; k++) /* (and the older ones of its group) */
				if (k != i && of_group(&a->run[k], a->run[i].path,
				                       a->run[i].resume.group_ino))
					a->run[k].taken = 0;
		}
}

/* A dead node's ring of the run: what the store lacks copied in. 0, or
 * -EBUSY when its writer lives. */
static int salvage_ring(struct rt_store *s, uint64_t run)
{
	char path[4096];
	struct rt_ring *ring;
	if (rt_ring_path(path, sizeof(path), rt_store_ring_key(s), run) ||
	    rt_ring_open(path, &ring))
		return 0; /* none (a reader salvaged it, or it was finished) */
	int rc = 0;
	unsigned added;
	if (rt_ring_writer_alive(ring))
		rc = -EBUSY;
	else
		rc = rt_store_salvage(s, ring, &added);
	/* salvaged: gone, so that until the run's new ring is made a reader
	 * judges the run by its recorder's pid (this process), not by a dead
	 * ring (which it would take for a crash) */
	rt_ring_close(ring, rc == 0);
	return rc;
}

int rt_nodeadopt_prepare(struct rt_store *s, const struct rt_nodeadopt_run *r, uint64_t *next,
                         uint64_t *last_mono)
{
	*next = 0;
	*last_mono = 0;
	int rc = salvage_ring(s, r->run);
	if (rc)
		return rc;
	uint64_t first, last;
	rc = rt_store_seq_bounds(s, r->run, &first, &last);
	if (rc == RT_E_NOTFOUND)
		return 0;
	if (rc)
		return rc;
	*next = last + 1;
	void *buf = NULL;
	size_t cap = rt_record_max_size(), len;
	struct rt_record rec;
	if (posix_memalign(&buf, 64, cap))
		return -ENOMEM;
	if (rt_store_get_sample(s, r->run, last, buf, cap, &len) == 0 &&
	    rt_record_decode(buf, len, &rec) == 0)
		*last_mono = rec.h->mono_ns;
	free(buf);
	return 0;
}

/* Whether the directory below the hierarchy at rel is the group r was. */
static int same_dir(const char *rel, const struct rt_nodeadopt_run *r)
{
	char sub[1200], p[4800];
	struct stat st;
	snprintf(sub, sizeof(sub), "%s%s", rel, r->path);
	return rt_path(p, sizeof(p), RT_SYS, sub) == 0 && stat(p, &st) == 0 &&
	       S_ISDIR(st.st_mode) && (uint64_t)st.st_ino == r->resume.group_ino;
}

int rt_nodeadopt_group_lives(const struct rt_nodeadopt_run *r)
{
	char p[4800], rel[600];
	if (same_dir("fs/cgroup", r))
		return 1; /* (v2 alone, or the unified root) */
	if (rt_path(p, sizeof(p), RT_SYS, "fs/cgroup"))
		return 0;
	DIR *d = opendir(p);
	int lives = 0;
	for (struct dirent *e; d && !lives && (e = readdir(d));) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(rel, sizeof(rel), "fs/cgroup/%s", e->d_name);
		lives = same_dir(rel, r);
	}
	if (d)
		closedir(d);
	return lives;
}

/* A run no node goes on with, ended: a dead node's ring salvaged and the
 * run crashed; one handed over, its mark cleared (it ended as stored). */
static int settle_run(struct rt_store *s, uint64_t run)
{
	char *meta;
	size_t len;
	struct rt_run_fields f;
	struct rt_buf b = {0};
	int rc = salvage_ring(s, run);
	if (!rc)
		rc = rt_store_get_meta(s, run, &meta, &len);
	if (rc)
		return rc;
	rc = rt_runmeta_read(meta, len, &f);
	if (!rc && rt_run_status_of(f.status) == RT_RUN_RUNNING)
		rc = rt_runmeta_set_status(meta, len, rt_run_status_name(RT_RUN_CRASHED), &b);
	else if (!rc && f.handover_at) /* (crashed already: as it is) */
		rc = rt_runmeta_clear_handover(meta, len, &b);
	if (!rc && b.len)
		rc = rt_store_put_meta(s, run, b.p, b.len);
	free(meta);
	rt_buf_free(&b);
	return rc;
}

void rt_nodeadopt_settle(struct rt_store *s, struct rt_nodeadopt *a,
                         void (*ended)(void *arg, uint64_t run), void *arg)
{
	for (size_t i = 0; i < a->n; i++) {
		struct rt_nodeadopt_run *r = &a->run[i];
		if (r->taken || rt_nodeadopt_group_lives(r))
			continue;
		r->taken = 1;
		if (settle_run(s, r->run) == 0 && ended)
			ended(arg, r->run);
	}
}

void rt_nodeadopt_free(struct rt_nodeadopt *a)
{
	free(a->run);
	memset(a, 0, sizeof(*a));
}
