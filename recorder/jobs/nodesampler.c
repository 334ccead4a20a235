/*
 * nodesampler.c - the node's one sampler (see nodesampler.h).
 *
 * A tick: the host collector (every source but a job's cgroup) takes one
 * sample and seals it; each job's sampler copies it and reads its own
 * group's counters into the copy (collect.c), then its members as a
 * process tree, then hands the record to its own ring and to the shared
 * store, which packs it against the run's own last one (store_write.c)
 * and commits every run's waiting samples in one transaction when the
 * group is due. The group is each run's half ring times the jobs, so no
 * run's waiting samples outgrow what its ring keeps for salvage. A job's
 * first and final samples come between ticks: the host is read again for
 * them (a record's counters are raw, so no interval loses anything).
 */
#define _GNU_SOURCE
#include "sampler.h"
#include "nodesampler.h"

#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/inotify.h>
#include <time.h>
#include <unistd.h>

#include "rt/clock.h"
#include "rt/record.h"
#include "rt/store.h"

/* how long a run's skipped samples may wait to be kept in its resume
 * object (what a crash then loses of that count) */
#define RESUME_SKIPPED_S 10

/* the power-loss window, as a recorder's own (sampler.c) */
#define GROUP_AGE_NS (30ull * 1000000000ull)

static void read_job(void *item, struct rt_nodepool_worker *w);

int rt_nodesampler_open(struct rt_nodesampler *n, struct rt_store *store,
                        const struct rt_node_base *base)
{
	memset(n, 0, sizeof(*n));
	/* each job's big buffers (its record, inventory, tree, identity) are
	 * mapped, not carved from the heap: their untouched pages cost no
	 * memory (at 100 jobs 5 MiB less PSS); the node's process is this */
	mallopt(M_MMAP_THRESHOLD, 16384);
	n->store = store;
	n->base = *base;
	/* a job's ring keeps 16 samples (a recorder's a minute): the node's
	 * group commit comes every 8 ticks for all runs at once, one sync, and
	 * each ring's shared memory is most of a job's PSS */
	if (!n->base.ring_slots)
		n->base.ring_slots = 16;
	n->epfd = epoll_create1(EPOLL_CLOEXEC);
	/* one inotify instance for every job's parts (a user has 128) */
	n->ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = n};
	if (n->ino >= 0 && (n->epfd < 0 || epoll_ctl(n->epfd, EPOLL_CTL_ADD, n->ino, &ev) < 0)) {
		close(n->ino);
		n->ino = -1;
	}
	n->host_cap = rt_record_max_size();
	if (posix_memalign(&n->host_buf, 64, n->host_cap)) {
		n->host_buf = NULL;
		return -ENOMEM;
	}
	int rc = rt_collector_open(&n->host, &rt_sampler_sources);
	n->host.part = RT_PART_HOST;
	struct rt_time t;
	rt_clock_now_steady(&t); /* (its base set before any reader reads it) */
	n->pool = rt_nodepool_open(read_job);
	/* the runs a node before this one left; the host's inventories
	 * numbered past theirs (a run gone on with keeps its own) */
	if (!rc && rt_nodeadopt_find(store, &n->adopt))
		rt_nodeadopt_free(&n->adopt); /* (none gone on with: new runs) */
	n->host.gen_floor = n->adopt.max_gen;
	return rc;
}

/* The job's metadata as it stands, stored. */
static void put_meta(struct rt_nodesampler *n, struct rt_node_job *j)
{
	rt_buf_reset(&n->mb);
	rt_runmeta_write(&n->mb, &j->meta);
	if (!n->mb.oom)
		rt_store_put_meta(n->store, j->run, n->mb.p, n->mb.len);
}

/* The resume object from the job's state now (nodeadopt.h). */
static void fill_resume(struct rt_node_job *j)
{
	struct rt_run_resume *r = &j->resume;
	r->cg_cpu = j->s.cg_cpu;
	r->off_user_us = j->s.cg_off_user;
	r->off_sys_us = j->s.cg_off_sys;
	r->before_us = j->s.cg_before > 0 ? (uint64_t)(j->s.cg_before * 1e6 + 0.5) : 0;
	r->oom_below = j->cg.parts.below_oom;
	r->skipped = j->meta.samples_skipped;
}

/* What a node started later needs to go on with the job's run, kept in
 * its metadata when it changes: its CPU's offsets once read and a kill in
 * a group below at once, samples skipped within RESUME_SKIPPED_S (a tick
 * that overruns skips in every run: not a metadata write for each). */
static void keep_resume(struct rt_nodesampler *n, struct rt_node_job *j, int force)
{
	const struct rt_run_resume *r = &j->resume;
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	int same = r->cg_cpu == j->s.cg_cpu && r->oom_below == j->cg.parts.below_oom;
	if (same && r->skipped != j->meta.samples_skipped)
		same = now.tv_sec - j->resume_at < RESUME_SKIPPED_S;
	if (same && !force)
		return;
	j->resume_at = now.tv_sec;
	fill_resume(j);
	put_meta(n, j);
}

/* The host's sample, sealed for the jobs to copy. 0 or -errno. */
static int sample_host(struct rt_nodesampler *n)
{
	int changed;
	n->host.force_slow = 0;
	int rc = rt_collector_sample(&n->host, n->host_buf, n->host_cap, &n->host_rec, &changed);
	n->host_ok = rc == 0;
	if (!rc)
		rt_record_seal(&n->host_rec);
	return rc;
}

/* The group commit for every job: each run's half ring, times the jobs. */
static void set_group(struct rt_nodesampler *n)
{
	size_t live = 0;
	for (size_t i = 0; i < n->njob; i++)
		live += !n->job[i]->over;
	unsigned per = n->base.ring_slots / 2 ? n->base.ring_slots / 2 : 1;
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

/* What the job was given: the request, its cgroup, Slurm, the host. */
static void detect_alloc(struct rt_node_job *j, const struct rt_request *req)
{
	rt_alloc_detect_job(req, j->meta.vcpus, j->meta.memory_mib * 1048576ull, j->meta.gpu_count,
	                    &j->cg.alloc, &j->alloc);
	j->meta.alloc = &j->alloc;
}

/* The job's run in the store: the node's metadata, the group's words on
 * it (its name, scheduler, id), its start now. 0 or an RT_E_ error. */
static int begin_run(struct rt_nodesampler *n, struct rt_node_job *j)
{
	struct rt_time t0;
	rt_clock_now_steady(&t0);
	j->meta = *n->base.meta;
	j->meta.status = rt_run_status_name(RT_RUN_RUNNING);
	j->meta.start_ns = t0.wall_ns;
	j->meta.recorder_pid = getpid();
	rt_cgrun_describe(&j->cg, &j->meta, j->meta.meta);
	j->meta.resume = &j->resume;
	rt_buf_reset(&n->mb);
	rt_runmeta_write(&n->mb, &j->meta);
	int rc = n->mb.oom ? -ENOMEM : rt_store_new_run(n->store, n->mb.p, n->mb.len, &j->run);
	j->meta.run_id = j->run;
	return rc;
}

/* The run of this very group a node before this one left, gone on with:
 * its ring salvaged, its metadata the node's again with its own start,
 * the gap's samples skipped; *next the seq its next sample takes. 0, 1
 * when there is none, or an error. */
static int go_on_run(struct rt_nodesampler *n, struct rt_node_job *j, uint64_t ino, uint64_t *next)
{
	const struct rt_nodeadopt_run *r = rt_nodeadopt_take(&n->adopt, j->cg.job.path, ino);
	if (!r)
		return 1;
	uint64_t last_mono;
	int rc = rt_nodeadopt_prepare(n->store, r, next, &last_mono);
	if (rc)
		return rc;
	j->meta = *n->base.meta;
	j->meta.status = rt_run_status_name(RT_RUN_RUNNING);
	j->meta.start_ns = r->start_ns;
	j->meta.recorder_pid = getpid();
	j->run = j->meta.run_id = r->run;
	j->resume = r->resume;
	j->resume.handover = 0;
	j->not_stored = r->not_stored;
	struct rt_time now;
	rt_clock_now_steady(&now);
	uint64_t every = (uint64_t)(n->base.meta->interval_secs * 1e9 + 0.5);
	/* the deadlines between its last sample and the one it takes now */
	uint64_t gone = last_mono && every && now.mono_ns > last_mono
	                    ? (now.mono_ns - last_mono + every - 1) / every
	                    : 0;
	j->meta.samples_skipped = j->resume.skipped + (gone > 1 ? gone - 1 : 0);
	j->resume.skipped = j->meta.samples_skipped;
	rt_cgrun_describe(&j->cg, &j->meta, j->meta.meta);
	j->meta.resume = &j->resume;
	j->gone_on = 1;
	/* running again before its next sample is stored (a reader never
	 * finds samples past a finished run's last) */
	put_meta(n, j);
	return 0;
}

/* A run that could not be gone on with: crashed, as a dead node leaves
 * one (the next try goes on with it). */
static void give_back(struct rt_nodesampler *n, struct rt_node_job *j)
{
	rt_store_end_run(n->store, j->run);
	j->meta.status = rt_run_status_name(RT_RUN_CRASHED);
	put_meta(n, j);
	rt_nodeadopt_put_back(&n->adopt, j->run);
}

/* A run gone on with: its sampler's CPU against the offsets it was shown
 * with, its kills in groups gone since carried. */
static void restore_job(struct rt_node_job *j)
{
	const struct rt_run_resume *r = &j->resume;
	j->s.cg_cpu = r->cg_cpu;
	j->s.cg_off_user = r->off_user_us;
	j->s.cg_off_sys = r->off_sys_us;
	j->s.cg_before = r->cg_cpu ? (double)r->before_us / 1e6 : -1;
	j->s.unstored = j->not_stored; /* (what a node before could not store stays said) */
	rt_cgrun_read_parts(&j->cg, &j->s.col, 0);
	rt_cgparts_carry(&j->cg.parts, r->oom_below);
}

/* Its first sample (the base of every rate) and what it tells: its GPUs
 * and what the job was given; its group's emptying watched. */
static int first_sample(struct rt_nodesampler *n, struct rt_node_job *j, char *warn, size_t cap)
{
	if (sample_host(n)) /* (the host now, as the job's counters) */
		return -EIO;
	j->s.host_rec = &n->host_rec;
	int rc = rt_sampler_take(&j->s, 0, warn, cap);
	if (rc)
		return rc;
	rt_cgrun_watch(&j->cg, j->tree);
	const struct rt_inventory *inv = j->s.col.inv;
	struct rt_record first;
	if (inv && inv->ngpu && rt_record_decode(j->s.rec, j->s.last_len, &first) == 0) {
		j->meta.gpu_model = inv->gpu[0].name[0] ? inv->gpu[0].name : NULL;
		j->meta.gpu_count = inv->ngpu;
		for (unsigned i = 0; i < first.h->ngpu; i++)
			j->meta.gpu_memory_mib += first.gpu[i].vram_total >> 20;
	}
	detect_alloc(j, n->base.request);
	int fd = rt_cgrun_wait_fd(&j->cg);
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = j};
	if (fd >= 0 && n->epfd >= 0)
		epoll_ctl(n->epfd, EPOLL_CTL_ADD, fd, &ev);
	return 0;
}

/* What a new job may keep open, from the descriptors in use (the lowest
 * free one: a process's are handed out lowest first) against the soft
 * limit: FD_KEEP its files while under half of it (the other half is for
 * jobs that keep only their ring and wait), FD_LEAN past it, FD_NONE
 * within RT_NODE_FD_FLOOR of it. */
enum { FD_KEEP, FD_LEAN, FD_NONE };
static int fd_room(const struct rt_nodesampler *n, char *err, size_t cap)
{
	struct rlimit rl;
	if (n->epfd < 0 || getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY)
		return FD_KEEP;
	int lowest = fcntl(n->epfd, F_DUPFD_CLOEXEC, 0);
	if (lowest >= 0)
		close(lowest);
	if (lowest < 0 || (rlim_t)lowest + RT_NODE_FD_FLOOR >= rl.rlim_cur) {
		snprintf(err, cap,
		         "%d of the %llu descriptors this process may open are in use (ulimit -n): "
		         "raise the node's limit (LimitNOFILE=)",
		         lowest < 0 ? (int)rl.rlim_cur : lowest, (unsigned long long)rl.rlim_cur);
		return FD_NONE;
	}
	return (rlim_t)lowest * 2 >= rl.rlim_cur ? FD_LEAN : FD_KEEP;
}

/* A job that could not start: what it holds, let go. */
static void drop_job(struct rt_node_job *j)
{
	rt_proctree_close(j->tree);
	rt_sampler_close(&j->s, 1);
	rt_cgrun_close(&j->cg);
	free(j);
}

long rt_nodesampler_add(struct rt_nodesampler *n, const char *group, char *err, size_t cap)
{
	char warn[2048] = "", why[256];
	int room = fd_room(n, why, sizeof(why)), lean = room == FD_LEAN;
	if (room == FD_NONE) {
		snprintf(err, cap, "cannot start the run of %s: %s", group, why);
		return -1;
	}
	struct rt_node_job *j = calloc(1, sizeof(*j));
	if (!j || grow(n)) {
		free(j);
		snprintf(err, cap, "cannot start the run of %s: %s", group, strerror(ENOMEM));
		return -1;
	}
	snprintf(j->group, sizeof(j->group), "%s", group);
	if (rt_cgrun_open_in(&j->cg, group, n->ino, err, cap)) {
		free(j);
		return -1;
	}
	uint64_t next = 0, ino = rt_cgjob_ino(&j->cg.job);
	int rc = ino ? go_on_run(n, j, ino, &next) : 1;
	j->resume.group_ino = ino;
	if (rc == 1)
		rc = begin_run(n, j);
	if (!rc)
		rc = rt_sampler_init_job(&j->s, n->store, j->run, n->base.ring_slots, &n->host);
	if (!rc && j->gone_on) { /* numbered on, its CPU against the same offsets */
		j->s.seq = next;
		restore_job(j);
	}
	if (!rc && rt_cgrun_tree(&j->cg, &j->tree))
		j->tree = NULL; /* (its counters still read) */
	j->s.col.cg_fixed = &j->cg.job.cp;
	j->s.tree = j->tree;
	if (!rc)
		rc = first_sample(n, j, warn, sizeof(warn));
	if (rc) {
		snprintf(err, cap, "cannot start the run of %s: %s", group, rt_strerror(rc));
		if (j->run && !j->gone_on) { /* a run made but never sampled: gone (tried again) */
			rt_store_end_run(n->store, j->run);
			rt_store_delete_run(n->store, j->run);
		}
		if (j->gone_on) /* left for the next try, as a dead node's */
			give_back(n, j);
		drop_job(j);
		return -1;
	}
	keep_resume(n, j, 0); /* (its CPU's offsets, when its first sample read them) */
	if (lean)             /* (its files opened when read from now on) */
		rt_cgrun_lean(&j->cg, &j->s.col, j->tree);
	snprintf(err, cap, "%s", warn);
	n->job[n->njob] = j;
	set_group(n);
	return (long)n->njob++;
}

/* Its metadata at the end, as a --cgroup recorder's: how it ended, the
 * kernel's word on its memory, the samples' tally; stored (or parked
 * beside its ring when samples still wait for the store). */
static void end_meta(struct rt_nodesampler *n, struct rt_node_job *j)
{
	struct rt_run_meta *m = &j->meta;
	struct rt_time end;
	m->status = rt_run_status_name(RT_RUN_FINISHED);
	j->cg.meta.cpu_before = j->s.cg_before;
	rt_cgrun_read_parts(&j->cg, &j->s.col, 1); /* (unless the final sample just did) */
	if (rt_cgrun_end(&j->cg))                  /* the kernel killed some of it: OOM */
		m->status = rt_run_status_name(RT_RUN_KILLED);
	rt_sampler_commit(&j->s);
	rt_clock_now_steady(&end);
	m->end_ns = end.wall_ns;
	m->has_last_seq = j->s.seq > 0;
	m->last_seq = j->s.seq ? j->s.seq - 1 : 0;
	m->samples_not_stored = j->s.unstored;
	m->samples_waited = j->s.waited;
	m->peak_before_kb = rt_proctree_hwm_before_kb(j->s.tree);
	fill_resume(j);
	j->resume.handover = n->stopping; /* (its group lives: gone on with later) */
	rt_buf_reset(&n->mb);
	rt_runmeta_write(&n->mb, m);
	if (j->s.nwait)
		rt_sampler_park_meta(&j->s, n->mb.p, n->mb.len);
	else
		rt_store_put_meta(n->store, j->run, n->mb.p, n->mb.len);
}

/* A job's run is over: its metadata, what waits committed and synced, its
 * ring finished (a reader stops there), its pack state freed; the caller
 * told. */
static void end_job(struct rt_nodesampler *n, struct rt_node_job *j)
{
	int fd = rt_cgrun_wait_fd(&j->cg);
	if (fd >= 0 && n->epfd >= 0)
		epoll_ctl(n->epfd, EPOLL_CTL_DEL, fd, NULL);
	if (j->cg.made_wd >= 0 && n->ino >= 0)
		inotify_rm_watch(n->ino, j->cg.made_wd); /* (gone with its group, maybe) */
	end_meta(n, j);
	rt_sampler_finish(&j->s);
	rt_store_end_run(n->store, j->run);
	j->over = 1;
	if (n->base.ended)
		n->base.ended(n->base.arg, j);
	rt_proctree_close(j->tree);
	j->tree = j->s.tree = NULL;
	rt_cgrun_close(&j->cg);
}

/* The ended jobs out of the table, freed. */
static void sweep(struct rt_nodesampler *n)
{
	size_t k = 0;
	for (size_t i = 0; i < n->njob; i++) {
		struct rt_node_job *j = n->job[i];
		if (!j->over) {
			n->job[k++] = j;
			continue;
		}
		rt_sampler_close(&j->s, 1);
		free(j);
	}
	if (k != n->njob) {
		n->njob = k;
		set_group(n);
	}
}

/* A reader's work: the job's group and tree read into its sample, with
 * the worker's own read buffer (the host's is the sampler thread's). */
static void read_job(void *item, struct rt_nodepool_worker *w)
{
	struct rt_node_job *j = item;
	enum { BUF = 64 * 1024 };
	if (!w->buf && (w->buf = malloc(BUF)))
		w->cap = BUF;
	j->read_failed = !w->buf;
	if (j->read_failed)
		return;
	j->s.col.own_buf = 1;
	j->s.col.buf = w->buf;
	j->s.col.bufcap = w->cap;
	rt_sampler_read(&j->s, 1);
	w->buf = j->s.col.buf; /* (a file may have grown it) */
	w->cap = j->s.col.bufcap;
}

/* A job's sample of this tick begun: its parts (every 5 s), the host's
 * record copied. 0, or the sample cannot be taken now. */
static int begin_job(struct rt_nodesampler *n, struct rt_node_job *j)
{
	rt_cgrun_read_parts(&j->cg, &j->s.col, 5);
	j->s.host_rec = &n->host_rec;
	return rt_sampler_begin(&j->s, 0);
}

/* A job's read sample kept (its ring, the store), then what it tells:
 * whether its run is over now. */
static int keep_job(struct rt_nodesampler *n, struct rt_node_job *j, char *warn, size_t cap)
{
	size_t at = strlen(warn);
	j->s.col.own_buf = 0; /* (the host's buffer again, for this thread) */
	j->s.col.buf = n->host.buf;
	j->s.col.bufcap = n->host.bufcap;
	if (j->read_failed) {
		j->meta.samples_skipped++;
		return 0;
	}
	j->missed = 0;
	rt_sampler_keep(&j->s, warn + at, cap - at);
	keep_resume(n, j, 0);
	at = strlen(warn);
	if (rt_cgrun_over(&j->cg, j->tree, warn + at, cap - at))
		return 1;
	if (rt_cgrun_refresh(&j->cg)) { /* the job's own environment now */
		detect_alloc(j, n->base.request);
		/* (a young group listed from another hierarchy now: its
		 * directory there is what a node started later finds) */
		uint64_t ino = rt_cgjob_ino(&j->cg.job);
		if (ino && ino != j->resume.group_ino) {
			j->resume.group_ino = ino;
			keep_resume(n, j, 1);
		}
	}
	rt_cgrun_watch(&j->cg, j->tree);
	return 0;
}

static void final_sample(struct rt_nodesampler *n, struct rt_node_job *j, char *warn, size_t cap);

/* A run its sample found over, ended: a group that emptied gets a final
 * sample first, as one woken by its emptying does (the host read again
 * and what is read every 5 s read again: a kill between the tick's host
 * sample and the job's read, its OOM count, is in it); a group removed
 * has none to give. */
static void end_found(struct rt_nodesampler *n, struct rt_node_job *j, char *warn, size_t cap)
{
	if (rt_proctree_listed(j->tree) == 0 && sample_host(n) == 0) {
		size_t at = strlen(warn);
		final_sample(n, j, warn + at, cap - at);
	}
	end_job(n, j);
}

/* Whether the job is this thread's now: no reader holds it (one that has
 * finished a late read gets it kept first, maybe ending the run). */
static int job_free(struct rt_nodesampler *n, struct rt_node_job *j, char *warn, size_t cap)
{
	if (!n->pool)
		return 1;
	enum rt_nodetask_state st = rt_nodepool_state(n->pool, &j->task);
	if (st == RT_TASK_DONE) {
		rt_nodepool_collect(n->pool, &j->task);
		if (keep_job(n, j, warn, cap))
			end_found(n, j, warn, cap);
		return 1;
	}
	return st == RT_TASK_IDLE;
}

/* When this tick's reads must be done: three quarters of the interval on. */
static uint64_t read_deadline(const struct rt_nodesampler *n)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	double every = n->base.meta->interval_secs > 0 ? n->base.meta->interval_secs : 1;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec +
	       (uint64_t)(every * 0.75e9);
}

/* This tick's reads, each job's handed to the readers (or read here
 * without them) once no reader holds it still: one that does misses the
 * tick. The number handed over. */
static size_t read_jobs(struct rt_nodesampler *n, char *warn, size_t cap)
{
	size_t sampled = 0;
	for (size_t i = 0; i < n->njob; i++) {
		struct rt_node_job *j = n->job[i];
		j->in_tick = 0;
		if (j->over)
			continue;
		if (!job_free(n, j, warn, cap)) { /* still read since a tick before */
			j->meta.samples_skipped++;
			j->missed++;
			continue;
		}
		if (j->over || begin_job(n, j))
			continue;
		sampled++;
		if (!n->pool) {
			read_job(j, &n->own_reader);
			if (keep_job(n, j, warn, cap))
				end_found(n, j, warn, cap);
			continue;
		}
		j->in_tick = 1;
		rt_nodepool_submit(n->pool, &j->task, j);
	}
	return sampled;
}

/* This tick's reads done by the deadline kept; one never taken by a
 * reader misses the tick; one still being read is kept when done. */
static void keep_jobs(struct rt_nodesampler *n, char *warn, size_t cap)
{
	for (size_t i = 0; i < n->njob && n->pool; i++) {
		struct rt_node_job *j = n->job[i];
		if (!j->in_tick)
			continue;
		j->in_tick = 0;
		enum rt_nodetask_state st = rt_nodepool_state(n->pool, &j->task);
		if (st == RT_TASK_IDLE)
			j->meta.samples_skipped++;
		if (st != RT_TASK_DONE) {
			j->missed++;
			continue;
		}
		rt_nodepool_collect(n->pool, &j->task);
		if (keep_job(n, j, warn, cap))
			end_found(n, j, warn, cap);
	}
}

size_t rt_nodesampler_tick(struct rt_nodesampler *n, char *warn, size_t cap)
{
	warn[0] = '\0';
	for (size_t i = 0; i < n->njob; i++) /* (late reads kept, in order) */
		if (!n->job[i]->over)
			job_free(n, n->job[i], warn, cap);
	if (sample_host(n))
		return 0;
	uint64_t deadline = read_deadline(n);
	size_t sampled = read_jobs(n, warn, cap);
	if (n->pool)
		rt_nodepool_wait(n->pool, deadline);
	keep_jobs(n, warn, cap);
	sweep(n);
	return sampled;
}

int rt_nodesampler_wait_fd(const struct rt_nodesampler *n)
{
	return n->epfd;
}

/* A final sample (the partial last interval; what is read every 5 s read
 * again), at least 1 ms after its last so that its rates have one. */
static void final_sample(struct rt_nodesampler *n, struct rt_node_job *j, char *warn, size_t cap)
{
	rt_sampler_space_final(&j->s);
	rt_cgrun_read_parts(&j->cg, &j->s.col, 0);
	if (!n->host_ok)
		return;
	size_t at = strlen(warn);
	j->s.host_rec = &n->host_rec;
	rt_sampler_take(&j->s, RT_REC_FINAL, warn + at, cap - at);
}

/* Groups made below jobs' (their parts' watches): each such job's parts
 * read at once (a step that lives a second is listed). */
static void parts_made(struct rt_nodesampler *n)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t got;
	while ((got = read(n->ino, buf, sizeof(buf))) > 0)
		for (ssize_t at = 0; at + (ssize_t)sizeof(struct inotify_event) <= got;) {
			const struct inotify_event *e = (const void *)(buf + at);
			for (size_t i = 0; i < n->njob; i++)
				if (!n->job[i]->over && n->job[i]->cg.made_wd == e->wd)
					rt_cgrun_read_parts(&n->job[i]->cg, &n->job[i]->s.col, 0);
			at += (ssize_t)sizeof(*e) + e->len;
		}
}

void rt_nodesampler_woke(struct rt_nodesampler *n, char *warn, size_t cap)
{
	struct epoll_event ev[64];
	warn[0] = '\0';
	int got = n->epfd >= 0 ? epoll_wait(n->epfd, ev, 64, 0) : 0, sampled = 0;
	for (int i = 0; i < got; i++) {
		if (ev[i].data.ptr == n) {
			parts_made(n);
			continue;
		}
		struct rt_node_job *j = ev[i].data.ptr;
		/* (one a reader holds: the tick that finds it empty ends it) */
		if (j->over || !job_free(n, j, warn, cap) || j->over ||
		    !rt_cgrun_emptied(&j->cg, &j->s.col))
			continue;
		if (!sampled++)
			sample_host(n);
		final_sample(n, j, warn, cap);
		end_job(n, j);
	}
	sweep(n);
}

void rt_nodesampler_skipped(struct rt_nodesampler *n, uint64_t missed)
{
	for (size_t i = 0; i < n->njob; i++)
		if (!n->job[i]->over) /* (kept in its resume object by its next sample) */
			n->job[i]->meta.samples_skipped += missed;
}

void rt_nodesampler_stop(struct rt_nodesampler *n, char *warn, size_t cap)
{
	warn[0] = '\0';
	n->stopping = 1;
	if (n->pool) /* (a read that hangs past this: its run left as a crash leaves it) */
		rt_nodepool_drain(n->pool, read_deadline(n) + 2000000000u);
	sample_host(n);
	/* the jobs whose reads came on time first: one whose reads hang
	 * makes its own final sample late, not theirs */
	for (int late = 0; late < 2; late++)
		for (size_t i = 0; i < n->njob; i++) {
			struct rt_node_job *j = n->job[i];
			if (j->over || (j->missed > 0) != late || !job_free(n, j, warn, cap) ||
			    j->over)
				continue;
			final_sample(n, j, warn, cap);
			end_job(n, j);
		}
	sweep(n);
}

void rt_nodesampler_settle(struct rt_nodesampler *n, void (*ended)(void *arg, uint64_t run),
                           void *arg)
{
	rt_nodeadopt_settle(n->store, &n->adopt, ended, arg);
}

void rt_nodesampler_close(struct rt_nodesampler *n)
{
	char warn[512];
	for (size_t i = 0; i < n->njob; i++) {
		struct rt_node_job *j = n->job[i];
		if (j->over || !job_free(n, j, warn, sizeof(warn)))
			continue; /* (a reader holds it: left, as a crash leaves it) */
		if (!j->over)
			end_job(n, j);
	}
	sweep(n);
	rt_nodepool_close(n->pool);
	free(n->own_reader.buf);
	free(n->job);
	rt_nodeadopt_free(&n->adopt);
	rt_collector_close(&n->host);
	free(n->host_buf);
	rt_buf_free(&n->mb);
	if (n->ino >= 0)
		close(n->ino);
	if (n->epfd >= 0)
		close(n->epfd);
	memset(n, 0, sizeof(*n));
}
