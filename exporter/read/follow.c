/*
 * follow.c - follow a live run (the `live` and `tail` verbs).
 *
 * Samples come from the ring while the reader keeps up; a lapped reader, a
 * sample too big for its slot, or a reader that started late takes them
 * from the store, which holds every sample the ring has shown. The loop
 * ends when the ring says the run finished (after draining the store) or
 * when the recorder is gone without finishing (it says so in one line).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "export.h"
#include "rt/clock.h"
#include "rt/common.h"
#include "rt/ring.h"
#include "rt/runmeta.h"
#include "rt/stream.h"

#define RING_MISSING_GRACE_NS (3ull * 1000000000ull)

static void nap(uint64_t ns)
{
	struct timespec ts = {(time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull)};
	nanosleep(&ts, NULL);
}

struct follower {
	struct rt_emitter *e;
	struct rt_recbuf prev, cur;
	int have_prev;
	uint64_t next; /* seq of the next sample to take */
	uint64_t start;
};

/* Take sample r (seq == f->next): emit against the previous one. */
static int take(struct follower *f, struct rt_recbuf *r)
{
	int rc = 0;
	if (f->have_prev && r->rec.h->seq >= f->start) {
		rc = rt_emit(f->e, &f->prev.rec, &r->rec);
		if (rc == RT_E_CORRUPT) {
			if (!f->e->notes.no_inv++)
				f->e->notes.no_inv_first = r->rec.h->seq;
			rc = 0;
		}
	}
	struct rt_recbuf t = f->prev;
	f->prev = *r;
	*r = t;
	f->have_prev = 1;
	f->next++;
	return rc;
}

/* Sample f->next from the store into f->cur. */
static int from_store(struct follower *f)
{
	size_t len;
	int rc = rt_store_get_sample(f->e->store, f->e->run, f->next, f->cur.buf,
	                             rt_record_max_size(), &len);
	if (rc)
		return rc;
	rc = rt_recbuf_set(&f->cur, f->cur.buf, len);
	if (rc == 0 && f->cur.rec.h->seq != f->next)
		rc = RT_E_CORRUPT;
	return rc;
}

/* Everything in the store from f->next on. */
static int drain_store(struct follower *f)
{
	uint64_t first, last;
	if (rt_store_seq_bounds(f->e->store, f->e->run, &first, &last))
		return 0;
	while (f->next <= last) {
		int rc = from_store(f);
		if (rc == RT_E_NOTFOUND || rc == RT_E_CORRUPT) {
			f->next++; /* a hole: the next line averages across it */
			continue;
		}
		if (rc || (rc = take(f, &f->cur)))
			return rc;
	}
	return 0;
}

/* Sample f->next from the ring (checked: a lapped or torn slot says so),
 * else from the store. */
static int from_ring_or_store(struct follower *f, struct rt_ring *ring)
{
	size_t len = 0;
	if (ring && rt_ring_read(ring, f->next, f->cur.buf, rt_record_max_size(), &len) == 0 &&
	    len > 0 && rt_recbuf_set(&f->cur, f->cur.buf, len) == 0 && f->cur.rec.h->seq == f->next)
		return 0;
	return from_store(f);
}

int rt_emit_lines(struct rt_emitter *e, struct rt_ring *ring, uint64_t first_line,
                  uint64_t last_line)
{
	struct follower f = {.e = e, .start = first_line ? first_line : 1};
	f.next = f.start - 1;
	if (rt_recbuf_init(&f.prev) || rt_recbuf_init(&f.cur)) {
		rt_recbuf_free(&f.prev);
		rt_recbuf_free(&f.cur);
		return -ENOMEM;
	}
	rt_emit_header(e);
	int rc = 0;
	while (!rc && f.next <= last_line) {
		int r = from_ring_or_store(&f, ring);
		if (r == RT_E_NOTFOUND || r == RT_E_CORRUPT)
			f.next++; /* a hole: the next line spans it */
		else if (r)
			rc = r;
		else
			rc = take(&f, &f.cur);
	}
	rt_recbuf_free(&f.prev);
	rt_recbuf_free(&f.cur);
	int frc = rt_sink_flush(e->sink);
	return rc ? rc : frc;
}

/* No ring: the run finished (its ring removed) or never had one. What
 * the store has is emitted; 1 when the follow ends (the run is over, or
 * its ring stayed missing past the grace), 0 to look again after a nap,
 * or an error. */
static int follow_store_only(struct follower *f, uint64_t missing_since, uint64_t pollns)
{
	struct rt_emitter *e = f->e;
	int rc = drain_store(f);
	if (rc)
		return rc;
	char *meta;
	size_t len;
	int running = 0;
	if (rt_store_get_meta(e->store, e->run, &meta, &len) == 0) {
		struct rt_run_fields rf;
		running = rt_runmeta_read(meta, len, &rf) == 0 &&
		          rt_run_status_of(rf.status) == RT_RUN_RUNNING;
		free(meta);
	}
	if (!running)
		return 1;
	if (rt_clock_mono_real() - missing_since > RING_MISSING_GRACE_NS) {
		e->notes.gone = 1;
		e->notes.last_seq = f->next ? f->next - 1 : 0;
		return 1;
	}
	nap(pollns);
	return 0;
}

/* The ring's next sample emitted (from the store when the ring lost it:
 * lapped, oversized, torn). 0 or an error. */
static int follow_ring_sample(struct follower *f, struct rt_ring *ring)
{
	int r = from_ring_or_store(f, ring);
	if (r == 0)
		return take(f, &f->cur);
	if (r == RT_E_NOTFOUND || r == RT_E_CORRUPT) {
		f->next++;
		return 0;
	}
	return r;
}

/* x clamped to [lo, hi] */
static uint64_t clamp_ns(uint64_t x, uint64_t lo, uint64_t hi)
{
	return x < lo ? lo : x > hi ? hi : x;
}

int rt_follow(struct rt_emitter *e, uint64_t start)
{
	struct follower f = {.e = e, .start = start ? start : 1};
	f.next = f.start - 1; /* the base sample of the first line */
	if (rt_recbuf_init(&f.prev) || rt_recbuf_init(&f.cur)) {
		rt_recbuf_free(&f.prev);
		rt_recbuf_free(&f.cur);
		return -ENOMEM;
	}
	rt_emit_header(e);
	rt_sink_flush(e->sink);
	char path[4096];
	rt_ring_path(path, sizeof(path), rt_store_ring_key(e->store), e->run);
	struct rt_ring *ring = NULL;
	uint64_t missing_since = rt_clock_mono_real();
	/* without a ring, look a few times per interval; with one, sleep
	 * until the recorder publishes, making sure it is alive when no
	 * sample came for two intervals (1 s to 10 s) */
	uint64_t pollns = clamp_ns((uint64_t)(e->interval * 1e9 / 4), 5000000ull, 50000000ull);
	uint64_t alivens = clamp_ns((uint64_t)(e->interval * 2e9), 1000000000ull, 10000000000ull);
	int rc = 0, check_writer = 1;
	while (!rc) {
		if (!ring && rt_ring_open(path, &ring) != 0)
			ring = NULL;
		if (!ring) {
			rc = follow_store_only(&f, missing_since, pollns);
			if (rc == 1)
				rc = 0;
			else if (rc == 0)
				continue;
			break;
		}
		uint64_t head = rt_ring_head(ring);
		if (f.next < head) {
			rc = follow_ring_sample(&f, ring);
			continue;
		}
		if (rt_ring_state(ring) == RT_RING_FINISHED) {
			rc = drain_store(&f); /* a final sample may follow the last head */
			break;
		}
		if (check_writer && !rt_ring_writer_alive(ring)) {
			rc = drain_store(&f);
			e->notes.stopped = 1;
			e->notes.last_seq = f.next ? f.next - 1 : 0;
			break;
		}
		check_writer = rt_ring_wait(ring, head, alivens) == RT_E_AGAIN;
	}
	if (ring)
		rt_ring_close(ring, 0);
	rt_recbuf_free(&f.prev);
	rt_recbuf_free(&f.cur);
	int frc = rt_sink_flush(e->sink);
	return rc ? rc : frc;
}

/*
 * Follow the recorder's stream on fd (stream.h): the live output of a run
 * that has no ring or no store. The run's metadata frame comes first and
 * sets what the lines carry (job name, pid); records then print against
 * the one before them, a gap (records dropped while we were slow) giving
 * one line averaged over it. EOF without END means the recorder died.
 */
int rt_follow_stream(struct rt_emitter *e, int fd)
{
	struct rt_stream_in in;
	struct rt_recbuf prev, cur;
	int have_prev = 0, rc = rt_stream_in_init(&in, fd);
	if (rc)
		return rc;
	if (rt_recbuf_init(&prev) || rt_recbuf_init(&cur)) {
		rt_recbuf_free(&prev);
		rt_recbuf_free(&cur);
		rt_stream_in_free(&in);
		return -ENOMEM;
	}
	struct rt_runinfo ri = {0};
	rt_emit_header(e);
	for (;;) {
		enum rt_frame_type type;
		const void *p;
		size_t len;
		rc = rt_stream_next(&in, &type, &p, &len);
		if (rc == RT_E_NOTFOUND) {
			e->notes.stream_cut = 1;
			rc = 0;
			break;
		}
		if (rc)
			break;
		if (type == RT_FRAME_END)
			break;
		if (type == RT_FRAME_META) {
			if (e->last_meta) {
				rt_buf_reset(e->last_meta);
				rt_buf_put(e->last_meta, p, len);
			}
			rt_run_free(&ri);
			if (rt_runinfo_from_meta(p, len, &ri) == 0) {
				e->run = ri.id;
				e->info.job_name = ri.job_name;
				e->info.tracked_pid = ri.tracked_pid;
				e->interval = ri.interval;
			}
		} else if (type == RT_FRAME_INVENTORY && len >= 4) {
			uint32_t gen;
			memcpy(&gen, p, 4);
			if ((rc = rt_emitter_put_inventory(e, gen, (const char *)p + 4, len - 4)) <
			        0 &&
			    rc != RT_E_CORRUPT)
				break;
			rc = 0;
		} else if (type == RT_FRAME_RECORD) {
			if (rt_recbuf_set(&cur, p, len))
				continue; /* a record that fails validation: skip it */
			if (have_prev && cur.rec.h->seq <= prev.rec.h->seq)
				continue;
			if (have_prev && (rc = rt_emit(e, &prev.rec, &cur.rec)) == RT_E_CORRUPT) {
				if (!e->notes.no_inv++)
					e->notes.no_inv_first = cur.rec.h->seq;
				rc = 0;
			}
			if (rc)
				break;
			struct rt_recbuf t = prev;
			prev = cur;
			cur = t;
			have_prev = 1;
		}
	}
	/* the metadata's strings are in use by e->info until here */
	int frc = rt_sink_flush(e->sink);
	e->info.job_name = NULL;
	rt_run_free(&ri);
	rt_recbuf_free(&prev);
	rt_recbuf_free(&cur);
	rt_stream_in_free(&in);
	return rc ? rc : frc;
}
