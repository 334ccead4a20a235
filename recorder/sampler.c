/*
 * sampler.c - collect -> encode -> store -> ring, for one sample.
 *
 * A sample is published in the ring at once and committed to the store
 * with its group (at most every GROUP_AGE_NS, one sync per commit), and
 * always before the ring could overwrite it: a group never holds more than
 * half the ring, so everything that has left the ring is in the store and a
 * lapped reader catches up from there. What a killed recorder had not
 * committed is still in its ring, and rt_store_salvage puts it in the store.
 *
 * Nothing here stops sampling: without a store (nothing writable), without
 * a ring (no shm directory) or with a full disk, samples are still taken and
 * reach the live printer through the stream pipe; what could not be stored
 * is counted (samples_not_stored) and storing resumes when it can.
 */
#define _GNU_SOURCE
#include "sampler.h"

#include <errno.h>
#include <time.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "gpu/gpu.h"
#include "rt/safefile.h"
#include "rt/common.h"
#include "rt/inventory.h"

/* The recorder's sources, in the order they read and fill: the host's,
 * its job's cgroup, the disks and NICs, the GPUs. */
static const struct rt_source *const sources[] = {
    &rt_source_cpu,    &rt_source_memory, &rt_source_load, &rt_source_pressure, &rt_source_vmstat,
    &rt_source_cgroup, &rt_source_disk,   &rt_source_net,  &rt_source_gpu,
};
_Static_assert(sizeof(sources) / sizeof(sources[0]) <= RT_MAX_SOURCES, "c->own is too small");
const struct rt_source_table rt_sampler_sources = {sources, sizeof(sources) / sizeof(sources[0])};

/* the power-loss window: a commit and its sync at least this often */
#define GROUP_AGE_NS (30ull * 1000000000ull)
#define TRIM_EVERY 16 /* samples between RSS trims (each commit maps ~3 new pages) */
#define CAP_EVERY 256 /* samples between size-cap checks */

/* The sampler's own state and buffers, before its collector opens. */
static int sampler_setup(struct rt_sampler *s, struct rt_store *store, uint64_t run,
                         uint32_t ring_slots)
{
	memset(s, 0, sizeof(*s));
	s->store = store;
	s->run = run;
	s->cg_before = -1;
	s->ring_slots = ring_slots ? ring_slots : 64;
	s->rec_cap = rt_record_max_size();
	s->inv_cap = rt_inventory_encoded_max();
	if (posix_memalign(&s->rec, 64, s->rec_cap)) {
		s->rec = NULL;
		return -ENOMEM;
	}
	s->inv_buf = malloc(s->inv_cap);
	return s->inv_buf ? 0 : -ENOMEM;
}

int rt_sampler_init(struct rt_sampler *s, struct rt_store *store, uint64_t run, uint32_t ring_slots)
{
	int rc = sampler_setup(s, store, run, ring_slots);
	if (rc)
		return rc;
	if (store) /* a group waits in the ring too: never more than half of it */
		rt_store_set_group(store, s->ring_slots / 2 ? s->ring_slots / 2 : 1, GROUP_AGE_NS,
		                   1);
	return rt_collector_open(&s->col, &rt_sampler_sources);
}

int rt_sampler_init_job(struct rt_sampler *s, struct rt_store *store, uint64_t run,
                        uint32_t ring_slots, struct rt_collector *host)
{
	int rc = sampler_setup(s, store, run, ring_slots);
	return rc ? rc : rt_collector_open_job(&s->col, host);
}

/* Add one line to the caller's warnings of this sample. */
static void note(char *warn, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void note(char *warn, size_t cap, const char *fmt, ...)
{
	size_t n = strlen(warn);
	if (n && n + 1 < cap)
		warn[n++] = '\n';
	if (n + 1 >= cap)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(warn + n, cap - n, fmt, ap);
	va_end(ap);
}

static const char *store_error(struct rt_sampler *s, int rc)
{
	/* LMDB reports a short write on a full disk as EIO: say what it is */
	struct statvfs v;
	if ((rc == -EIO || rc == RT_E_STORE) && statvfs(rt_store_dir(s->store), &v) == 0 &&
	    v.f_bavail == 0)
		return strerror(ENOSPC);
	return rc == RT_E_STORE ? rt_store_last_error(s->store) : rt_strerror(rc);
}

/* A sample could not be committed: count it, say so when it starts. */
static void store_failed(struct rt_sampler *s, const char *what, int rc, char *warn, size_t cap)
{
	if (s->store_failing)
		return;
	s->store_failing = 1;
	note(warn, cap,
	     "cannot %s in the store %s (%s); sampling and live output go on, samples wait "
	     "in memory and are stored when it can (or by the next reader of the store)",
	     what, rt_store_dir(s->store), store_error(s, rc));
}

static void store_ok(struct rt_sampler *s, char *warn, size_t cap)
{
	if (!s->store_failing)
		return;
	s->store_failing = 0;
	note(warn, cap, "storing samples again in %s (%llu waited, %llu lost)",
	     rt_store_dir(s->store), (unsigned long long)s->waited,
	     (unsigned long long)s->unstored);
}

/* ---- samples waiting for the store (a read-only, full or failing disk) */

#define WAIT_MAX_BYTES (64u << 20) /* beyond this, samples are lost (counted) */
#define DRAIN_EVERY 16             /* samples between tries to store the wait */

static int stash(struct rt_sampler *s, const void *rec, size_t len)
{
	size_t need = s->wait_len + 8 + ((len + 7) & ~(size_t)7);
	if (need > WAIT_MAX_BYTES)
		return -ENOSPC;
	if (need > s->wait_cap) {
		size_t cap = s->wait_cap ? s->wait_cap * 2 : 65536;
		while (cap < need)
			cap *= 2;
		unsigned char *p = realloc(s->wait, cap);
		if (!p)
			return -ENOMEM;
		s->wait = p;
		s->wait_cap = cap;
	}
	uint32_t l = (uint32_t)len;
	memcpy(s->wait + s->wait_len, &l, 4);
	memcpy(s->wait + s->wait_len + 8, rec, len);
	s->wait_len = need;
	s->nwait++;
	s->waited++;
	return 0;
}

/* The k-th waiting record from offset *off (advanced). */
static const struct rt_rec_header *next_waiting(const struct rt_sampler *s, size_t *off,
                                                uint32_t *len)
{
	memcpy(len, s->wait + *off, 4);
	const struct rt_rec_header *h = (const void *)(s->wait + *off + 8);
	*off += 8 + ((*len + 7) & ~(size_t)7);
	return h;
}

/* Samples seq-pend .. seq-1 of a group whose commit failed wait, in order,
 * taken back from the ring (lost, and counted, without one). */
static void keep_from_ring(struct rt_sampler *s, unsigned pend)
{
	void *buf = pend && s->ring ? malloc(s->rec_cap) : NULL;
	for (uint64_t q = s->seq - pend; q < s->seq; q++) {
		size_t len = 0;
		if (!buf || rt_ring_read(s->ring, q, buf, s->rec_cap, &len) != 0 ||
		    stash(s, buf, len) != 0)
			s->unstored++;
	}
	free(buf);
}

/* A group commit failed: its samples (pend of them before this one) and
 * this one wait, in order, instead of being lost. */
static void keep_group(struct rt_sampler *s, unsigned pend, const struct rt_record *rec)
{
	keep_from_ring(s, pend);
	if (stash(s, rec->h, rec->h->size))
		s->unstored++;
}

/* Store what waits, in order: all of it, or nothing (the store says why). */
static int drain(struct rt_sampler *s)
{
	size_t off = 0, kept = 0;
	uint64_t done = 0;
	int rc = 0;
	s->since_drain = 0;
	for (uint64_t i = 0; i < s->nwait && rc == 0; i++) {
		uint32_t len;
		const struct rt_rec_header *h = next_waiting(s, &off, &len);
		rc = rt_store_append(s->store, s->run, h->seq, h, len);
		if (rc == 0 && !rt_store_pending(s->store)) {
			done = i + 1; /* committed with its group */
			kept = off;
		}
	}
	if (rc == 0 && (rc = rt_store_flush(s->store)) == 0) {
		done = s->nwait;
		kept = off;
	}
	/* what was committed leaves the wait; a failed group stays in it */
	memmove(s->wait, s->wait + kept, s->wait_len - kept);
	s->wait_len -= kept;
	s->nwait -= done;
	return rc;
}

/* Encode the current inventory into s->inv_buf; its length or -error. */
static long encode_inventory(struct rt_sampler *s)
{
	return rt_inventory_encode(s->col.inv, s->inv_buf, s->inv_cap);
}

static void stream_inventory(struct rt_sampler *s, long n)
{
	uint32_t gen = s->col.inv->gen;
	if (n > 0)
		rt_stream_put(s->stream, RT_FRAME_INVENTORY, &gen, sizeof(gen), s->inv_buf,
		              (size_t)n);
}

void rt_sampler_attach_stream(struct rt_sampler *s, struct rt_stream_out *out, const char *meta,
                              size_t metalen)
{
	s->stream = out;
	rt_stream_put(out, RT_FRAME_META, meta, metalen, NULL, 0);
	if (s->seq == 0)
		return;
	stream_inventory(s, encode_inventory(s));
	rt_stream_put(out, RT_FRAME_RECORD, s->rec, s->last_len, NULL, 0);
}

/* Create the ring file; a stale one of a dead writer in the way is removed. */
static int create_ring(struct rt_sampler *s, const struct rt_record *rec)
{
	/* room for devices that may appear later; bigger records go via the store */
	size_t slot = rt_record_size(rec->h->ncpu, rec->h->ndisk + 4u, rec->h->nmount + 8u,
	                             rec->h->nnic + 8u, rec->h->ngpu + 2u);
	slot = (slot + 63) & ~(size_t)63;
	int rc =
	    rt_ring_path(s->ring_path, sizeof(s->ring_path), rt_store_ring_key(s->store), s->run);
	if (rc)
		return rc;
	rc = rt_ring_create(s->ring_path, s->run, (uint32_t)slot, s->ring_slots, &s->ring);
	if (rc == -EEXIST) {
		struct rt_ring *old;
		int alive = 1;
		if (rt_ring_open(s->ring_path, &old) == 0) {
			alive = rt_ring_writer_alive(old);
			rt_ring_close(old, 0);
		} else {
			alive = 0; /* not even a ring: nobody's live file */
		}
		if (alive)
			return -EEXIST;
		/* raw: our ring's name in the shm directory (sticky): a dead run's ring of ours */
		unlink(s->ring_path);
		rc = rt_ring_create(s->ring_path, s->run, (uint32_t)slot, s->ring_slots, &s->ring);
	}
	return rc;
}

/*
 * A job's group: its CPU from the kernel's own counter (every member that
 * ever ran in it, whoever reaped it), not the members' sum, from the
 * first sample where the counter can be read (a scheduler may make the
 * group's cpuacct a moment after the rest). From there on the section
 * shows the counter less a fixed offset, so it goes on from what was
 * shown and every later interval is the counter's; what the offset holds
 * (the group's CPU before the first sample, and what the members' sum
 * missed before the switch) is in no interval: s->cg_before says it.
 */
static void group_cpu(struct rt_sampler *s, struct rt_rec_process *p)
{
	uint64_t user_us, sys_us;
	if (s->seq == 0)
		s->cg_first_us = (int64_t)(p->utime_us + p->stime_us);
	if (rt_cgroup_job_cpu(&s->col, &user_us, &sys_us))
		return;
	if (!s->cg_cpu) {
		s->cg_cpu = 1;
		s->cg_off_user = (int64_t)user_us - (int64_t)p->utime_us;
		s->cg_off_sys = (int64_t)sys_us - (int64_t)p->stime_us;
		int64_t before = s->cg_off_user + s->cg_off_sys + s->cg_first_us;
		s->cg_before = before > 0 ? (double)before / 1e6 : 0;
	}
	int64_t u = (int64_t)user_us - s->cg_off_user, st = (int64_t)sys_us - s->cg_off_sys;
	p->utime_us = u > 0 ? (uint64_t)u : 0;
	p->stime_us = st > 0 ? (uint64_t)st : 0;
}

/* The process tree's part of the sample: forks the host made (a walk only
 * when someone forked), the members' counters, the group's CPU. Reads only
 * the job's own state (a node's worker thread's, for a job's part). */
static void sample_tree(struct rt_sampler *s, struct rt_record *rec, unsigned flags,
                        const struct rt_time *t)
{
	if (s->host_forks_ok)
		rt_proctree_host_forks(s->tree, s->host_forks);
	/* status (context switches, VmHWM: ~9 us a member) and the fd count
	 * every fifth once-a-second sample and at the last one */
	int rare = s->col.slow && (s->slow_ticks++ % 5 == 0 || (flags & RT_REC_FINAL));
	rt_proctree_cadence(s->tree, rare, rare);
	rt_proctree_bound(s->tree, rec->h->ncpu, t->mono_ns);
	rt_proctree_sample_in(s->tree, rec->proc, s->col.buf, s->col.bufcap); /* (one buffer) */
	if (s->col.cg_fixed)
		group_cpu(s, rec->proc);
	rec->proc->pid = s->tracked_pid;
	rec->h->flags |= RT_REC_HAS_PROCESS | RT_REC_EXACT_CPU_SECS;
}

/* A new inventory (devices came or went) to the store and the stream. One
 * the store could not take is tried again with the next sample: the
 * samples of its generation need it to be replayed. */
static void put_inventory(struct rt_sampler *s, int inv_changed, char *warn, size_t warncap)
{
	if (!((inv_changed && s->stream) || ((inv_changed || s->inv_pending) && s->store)))
		return;
	long n = encode_inventory(s);
	int rc = n < 0 ? (int)n : 0;
	if (s->store && n > 0 && (inv_changed || s->inv_pending))
		rc = rt_store_put_inventory(s->store, s->run, s->col.inv->gen, s->inv_buf,
		                            (size_t)n);
	s->inv_pending = s->store && rc != 0;
	if (rc)
		store_failed(s, "write the inventory", rc, warn, warncap);
	if (s->stream && inv_changed)
		stream_inventory(s, n);
}

/* The record to its live readers: the printer's stream, and the ring
 * (made with the first record) that other terminals follow. Whether it
 * went into the ring. */
static int publish(struct rt_sampler *s, const struct rt_record *rec, uint64_t mono_ns, char *warn,
                   size_t warncap)
{
	if (s->stream)
		rt_stream_put(s->stream, RT_FRAME_RECORD, rec->h, rec->h->size, NULL, 0);
	/* the ring serves readers that find runs in the store: none without one */
	int rc;
	if (s->store && !s->ring && !s->ring_error && (rc = create_ring(s, rec))) {
		s->ring_error = rc;
		note(warn, warncap,
		     "no live ring (%s: %s); other terminals cannot follow this run "
		     "live, replay it from the store instead",
		     s->ring_path, rt_strerror(rc));
	}
	if (!s->ring)
		return 0;
	int in_ring = rt_ring_publish(s->ring, s->seq, rec->h, rec->h->size) == 0;
	if (!in_ring) /* too big for a slot (many new devices): readers take it
	               * from the store, committed at once */
		rt_ring_publish(s->ring, s->seq, rec->h, 0);
	rt_ring_heartbeat(s->ring, mono_ns);
	return in_ring;
}

/* The record to the store: appended to the group that waits for its
 * commit (at once when it is not in the ring), or, while the store fails,
 * kept in order with those waiting and offered again now and then. */
static void store_sample(struct rt_sampler *s, struct rt_record *rec, int in_ring, char *warn,
                         size_t warncap)
{
	if (s->nwait) {
		if (stash(s, rec->h, rec->h->size))
			s->unstored++;
		if (++s->since_drain >= DRAIN_EVERY && drain(s) == 0)
			store_ok(s, warn, warncap);
		return;
	}
	unsigned pend = rt_store_pending(s->store);
	int rc = rt_store_append(s->store, s->run, s->seq, rec->h, rec->h->size);
	/* nowhere to wait for salvage: commit now */
	if (rc == 0 && !in_ring)
		rc = rt_store_flush(s->store);
	if (rc) {
		keep_group(s, pend, rec);
		store_failed(s, "write samples", rc, warn, warncap);
	} else if (!rt_store_pending(s->store)) {
		store_ok(s, warn, warncap);
	}
}

/* Now and then: the map's resident pages given back, and the size cap,
 * a bounded slice per sample (the budget the recorder set), never a stall
 * of the schedule. */
static void store_upkeep(struct rt_sampler *s, char *warn, size_t warncap)
{
	if (++s->since_trim >= TRIM_EVERY) {
		rt_store_trim_rss(s->store);
		s->since_trim = 0;
	}
	if (++s->since_cap < CAP_EVERY)
		return;
	unsigned deleted;
	if (rt_store_enforce_cap(s->store, s->run, &deleted) == RT_E_CORRUPT && !s->cap_refused) {
		s->cap_refused = 1;
		note(warn, warncap,
		     "the store's size cap deletes nothing: the store is damaged (%s); "
		     "see rt-export verify",
		     rt_store_last_error(s->store));
	}
	s->since_cap = rt_store_cap_more(s->store) ? CAP_EVERY - 1 : 0;
}

int rt_sampler_begin(struct rt_sampler *s, unsigned flags)
{
	int inv_changed = 0;
	s->pend_flags = flags;
	rt_clock_now_steady(&s->pend_t); /* a stepped clock moves no sample out of order */
	s->col.job_pid = s->tracked_pid > 0 ? s->tracked_pid : 0; /* whose cgroup */
	s->col.force_slow = (flags & RT_REC_FINAL) != 0; /* the last sample sees everything */
	s->col.wall_ns = s->pend_t.wall_ns;
	int rc = s->host_rec
	             ? rt_collector_job_copy(&s->col, s->host_rec, s->rec, s->rec_cap, &s->pend_rec)
	             : rt_collector_sample(&s->col, s->rec, s->rec_cap, &s->pend_rec, &inv_changed);
	if (rc)
		return rc;
	s->pend_inv = inv_changed;
	if (s->host_rec) { /* the host's devices changed since its run's last kept */
		s->pend_gen = s->col.inv->gen;
		s->pend_inv = s->inv_gen != s->pend_gen;
	}
	uint64_t forks;
	s->host_forks_ok = s->tree && rt_cpu_host_forks(&s->col, &forks) == 0;
	s->host_forks = s->host_forks_ok ? forks : 0;
	return 0;
}

void rt_sampler_read(struct rt_sampler *s, int own_clock)
{
	if (own_clock) /* (read now, not when it was handed over) */
		rt_clock_now_steady(&s->pend_t);
	if (s->host_rec)
		rt_collector_job_read(&s->col, &s->pend_rec);
	if (s->tree)
		sample_tree(s, &s->pend_rec, s->pend_flags, &s->pend_t);
}

void rt_sampler_keep(struct rt_sampler *s, char *warn, size_t warncap)
{
	struct rt_record *rec = &s->pend_rec;
	const struct rt_time *t = &s->pend_t;
	warn[0] = '\0';
	if (s->tree) /* (the GPUs' state is the node's: one thread deals it) */
		rt_gpu_tree(&s->col, s->tree, t->mono_ns, rec);
	rec->h->seq = s->seq;
	rec->h->mono_ns = t->mono_ns;
	rec->h->wall_ns = t->wall_ns;
	rec->h->flags |= s->pend_flags;
	rt_record_seal(rec);
	s->last_len = rec->h->size;
	s->last = *t;
	if (s->host_rec)
		s->inv_gen = s->pend_gen;
	put_inventory(s, s->pend_inv, warn, warncap);
	int in_ring = publish(s, rec, t->mono_ns, warn, warncap);
	if (s->store)
		store_sample(s, rec, in_ring, warn, warncap);
	s->seq++;
	if (s->store)
		store_upkeep(s, warn, warncap);
}

int rt_sampler_take(struct rt_sampler *s, unsigned flags, char *warn, size_t warncap)
{
	warn[0] = '\0';
	int rc = rt_sampler_begin(s, flags);
	if (rc)
		return rc;
	rt_sampler_read(s, 0);
	rt_sampler_keep(s, warn, warncap);
	return 0;
}

void rt_sampler_commit(struct rt_sampler *s)
{
	if (!s->store)
		return;
	if (s->nwait) {
		drain(s);
		return;
	}
	unsigned pend = rt_store_pending(s->store);
	if (rt_store_commit(s->store) == 0) /* rt_sampler_finish syncs */
		return;
	/* the last group failed: it waits (it is the ring's newest) */
	keep_from_ring(s, pend);
}

/*
 * What still waits at the end goes into a ring left behind under the run's
 * ring name: the live ring itself when it still holds all of it, else a
 * new one as big as the wait. Its writer (this process) is then gone, so
 * the next recorder or reader of the store salvages it.
 */
static void park(struct rt_sampler *s)
{
	size_t off = 0;
	uint32_t len;
	const struct rt_rec_header *first = next_waiting(s, &off, &len);
	uint64_t head = s->ring ? rt_ring_head(s->ring) : 0;
	if (s->ring && head - first->seq <= rt_ring_slot_count(s->ring)) {
		s->parked = 1;
		return;
	}
	if (!s->ring_path[0])
		return; /* no shm at all: they are lost (counted) */
	uint32_t slot = 0;
	off = 0;
	for (uint64_t i = 0; i < s->nwait; i++) {
		next_waiting(s, &off, &len);
		slot = len > slot ? len : slot;
	}
	if (s->ring)
		rt_ring_close(s->ring, 1);
	s->ring = NULL;
	/* raw: our own ring, by the name we made it under */
	unlink(s->ring_path);
	if (rt_ring_create(s->ring_path, s->run, (slot + 63) & ~63u, (uint32_t)s->nwait, &s->ring))
		return;
	off = 0;
	for (uint64_t i = 0; i < s->nwait; i++) {
		const struct rt_rec_header *h = next_waiting(s, &off, &len);
		rt_ring_publish(s->ring, h->seq, h, len);
	}
	s->parked = 1;
}

void rt_sampler_space_final(const struct rt_sampler *s)
{
	struct rt_time now;
	rt_clock_now(&now);
	uint64_t since = now.mono_ns - s->last.mono_ns;
	if (since >= 1000000ull)
		return;
	struct timespec ts = {0, (long)(1000000ull - since)};
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

void rt_sampler_finish(struct rt_sampler *s)
{
	rt_sampler_commit(s);
	if (s->store && s->nwait)
		park(s);
	if (s->store && s->nwait && !s->parked)
		s->unstored += s->nwait;
	if (s->store)
		rt_store_sync(s->store);
	if (s->ring)
		rt_ring_set_state(s->ring, RT_RING_FINISHED);
}

int rt_sampler_park_meta(struct rt_sampler *s, const char *meta, size_t len)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s.meta", s->ring_path);
	/* raw: a name in the shm directory (sticky: no one else's file can be removed but root's own), made again O_EXCL|O_NOFOLLOW below */
	unlink(path);
	/* raw: made O_EXCL|O_NOFOLLOW: never opens what another user planted */
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	int rc = rt_write_all(fd, meta, len, 1000);
	if (close(fd) < 0 && rc == 0)
		rc = -errno;
	return rc;
}

void rt_sampler_close(struct rt_sampler *s, int unlink_ring)
{
	if (s->ring) {
		rt_ring_close(s->ring, unlink_ring && !s->parked);
		s->ring = NULL;
	}
	free(s->wait);
	s->wait = NULL;
	s->wait_len = s->wait_cap = 0;
	if (s->col.part == RT_PART_JOB)
		rt_collector_close_job(&s->col);
	else
		rt_collector_close(&s->col);
	free(s->rec);
	free(s->inv_buf);
	s->rec = s->inv_buf = NULL;
}
