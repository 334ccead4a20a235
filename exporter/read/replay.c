/*
 * replay.c - print a stored run, a time range of it, or every Nth sample.
 *
 * Line k is derived from the sample before it in the chosen resolution, so
 * --every 10 gives 10-interval averages, never a spike. The store is read
 * with short transactions (rt_store_scan), so a replay of a huge run never
 * pins pages the recorder needs.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "rt/common.h"
#include "rt/ring.h"

struct replay_ctx {
	struct rt_emitter *e;
	struct rt_recbuf prev, cur;
	int have_prev;
	uint64_t prev_seq, next_line, every;
	uint64_t end;  /* the range's last sample: a short last window ends there */
	uint64_t fold; /* a window end whose line the end's takes over (0: none) */
	int err;
};

static int replay_cb(void *vctx, uint64_t seq, const void *bytes, size_t len)
{
	struct replay_ctx *x = vctx;
	if (seq < x->next_line && seq != x->prev_seq && seq != x->end)
		return 0;
	if (seq == x->fold && x->have_prev) {
		x->next_line = x->end; /* its window runs on to the end */
		return 0;
	}
	struct rt_recbuf *dst = x->have_prev ? &x->cur : &x->prev;
	int rc = rt_recbuf_set(dst, bytes, len);
	unsigned layout = rc == RT_E_LAYOUT ? rt_record_claimed_layout(bytes, len) : 0;
	if (layout > RT_RECORD_LAYOUT) { /* never misread what a newer rt wrote */
		x->e->notes.newer_layout = layout;
		x->err = RT_E_LAYOUT;
		return 1;
	}
	if (rc || dst->rec.h->seq != seq) {
		if (!x->e->notes.corrupt++)
			x->e->notes.corrupt_first = seq;
		return 0;
	}
	if (!x->have_prev) {
		x->have_prev = 1;
		if (seq < x->next_line)
			return 0;
		/* no earlier sample in range: the first one only serves as a base */
		x->next_line = seq + x->every;
		return 0;
	}
	rc = rt_emit(x->e, &x->prev.rec, &x->cur.rec);
	if (rc == RT_E_CORRUPT) {
		if (!x->e->notes.no_inv++)
			x->e->notes.no_inv_first = seq;
	} else if (rc) {
		x->err = rc;
		return 1;
	}
	struct rt_recbuf t = x->prev;
	x->prev = x->cur;
	x->cur = t;
	x->next_line = seq + x->every;
	return 0;
}

/*
 * A live run's samples that only its ring holds yet: the store has them
 * within 30 s (group commits), the ring at once. The run's ring (NULL when
 * it has none: finished, or its recorder gone and salvaged) and the seqs
 * [lo, head) it has beyond the store.
 */
struct live {
	struct rt_ring *ring;
	uint64_t lo, head;
	void *buf; /* one record, 8-byte aligned */
};

static void live_open(struct rt_emitter *e, int have_store, uint64_t store_last, struct live *l)
{
	memset(l, 0, sizeof(*l));
	char path[4096];
	if (rt_ring_path(path, sizeof(path), rt_store_ring_key(e->store), e->run) ||
	    rt_ring_open(path, &l->ring))
		return;
	l->head = rt_ring_head(l->ring);
	l->lo = have_store ? store_last + 1 : 0;
	if (rt_ring_run_id(l->ring) != e->run || l->head <= l->lo ||
	    posix_memalign(&l->buf, 64, rt_record_max_size())) {
		rt_ring_close(l->ring, 0);
		free(l->buf);
		memset(l, 0, sizeof(*l));
	}
}

static void live_close(struct live *l)
{
	if (l->ring)
		rt_ring_close(l->ring, 0);
	free(l->buf);
}

/* Sample seq of the live tail into l->buf: from the ring, or from the store
 * when the recorder has committed (and the ring overwritten) it since. */
static int live_get(struct rt_emitter *e, struct live *l, uint64_t seq, size_t *len)
{
	if (rt_ring_read(l->ring, seq, l->buf, rt_record_max_size(), len) == 0 && *len > 0)
		return 0;
	return rt_store_get_sample(e->store, e->run, seq, l->buf, rt_record_max_size(), len);
}

/* The first seq of the live tail taken at or after wall_ns; l->head if none. */
static uint64_t live_seq_at(struct rt_emitter *e, struct live *l, uint64_t wall_ns)
{
	for (uint64_t q = l->lo; q < l->head; q++) {
		size_t len;
		if (live_get(e, l, q, &len) == 0 && len >= sizeof(struct rt_rec_header) &&
		    ((const struct rt_rec_header *)l->buf)->wall_ns >= wall_ns)
			return q;
	}
	return l->head;
}

/* The wall time of sample seq: the live tail's, or the store's. */
static int wall_of(struct rt_emitter *e, struct live *l, uint64_t seq, uint64_t *ns)
{
	size_t cap = rt_record_max_size(), len = 0;
	void *buf;
	if (posix_memalign(&buf, 64, cap))
		return -ENOMEM;
	int rc = l->ring && seq >= l->lo && seq < l->head &&
	                 rt_ring_read(l->ring, seq, buf, cap, &len) == 0 && len > 0
	             ? 0
	             : rt_store_get_sample(e->store, e->run, seq, buf, cap, &len);
	if (rc == 0 && len >= sizeof(struct rt_rec_header))
		*ns = ((const struct rt_rec_header *)buf)->wall_ns;
	else if (rc == 0)
		rc = RT_E_CORRUPT;
	free(buf);
	return rc;
}

/*
 * With --every, the window that would end at the last full window's end w
 * when the samples after it (to end) span less than one interval: the
 * wrapper's last sample, taken when the command ended, a moment after the
 * one before. Its line would repeat the line before's time (to the second,
 * in the reference's CSV), so that window runs on to the end instead: 0
 * when none.
 */
static uint64_t fold_short_end(struct rt_emitter *e, struct live *l, uint64_t base, uint64_t start,
                               uint64_t end, uint64_t every)
{
	if (every < 2 || end < start)
		return 0;
	uint64_t w = start + (end - start) / every * every;
	uint64_t tw, te, tp;
	if (w >= end || w <= base || wall_of(e, l, w, &tw) || wall_of(e, l, end, &te) ||
	    wall_of(e, l, w - 1, &tp))
		return 0;
	return te > tw && tw > tp && te - tw < tw - tp ? w : 0;
}

/* Lines for seq start, start+every, ... <= end, and one at end; the first
 * line's base is base: the store's samples, then the live tail's (taken at
 * or before to_ns). */
static int replay_lines(struct rt_emitter *e, uint64_t base, uint64_t start, uint64_t end,
                        uint64_t every, int have_store, struct live *l, uint64_t to_ns)
{
	if (end <= base)
		return 0;
	struct replay_ctx x = {.e = e, .every = every, .next_line = start, .end = end};
	x.fold = fold_short_end(e, l, base, start, end, every);
	x.prev_seq = base;
	if (rt_recbuf_init(&x.prev) || rt_recbuf_init(&x.cur)) {
		rt_recbuf_free(&x.prev);
		rt_recbuf_free(&x.cur);
		return -ENOMEM;
	}
	int rc = have_store ? rt_store_scan(e->store, e->run, x.prev_seq, end, replay_cb, &x) : 0;
	for (uint64_t q = l->lo > x.prev_seq ? l->lo : x.prev_seq;
	     rc >= 0 && !x.err && l->ring && q < l->head && q <= end; q++) {
		size_t len;
		if (live_get(e, l, q, &len))
			continue; /* a hole: the next line spans it */
		if (to_ns && len >= sizeof(struct rt_rec_header) &&
		    ((const struct rt_rec_header *)l->buf)->wall_ns > to_ns)
			break;
		if (replay_cb(&x, q, l->buf, len))
			break;
	}
	rt_recbuf_free(&x.prev);
	rt_recbuf_free(&x.cur);
	if (x.err)
		return x.err;
	return rc < 0 ? rc : 0;
}

int rt_replay_range(struct rt_emitter *e, uint64_t first_line, uint64_t last_line)
{
	uint64_t first = 0, last = 0;
	rt_emit_header(e);
	int rc = rt_store_seq_bounds(e->store, e->run, &first, &last);
	if (rc && rc != RT_E_NOTFOUND)
		return rc;
	int have = rc == 0;
	struct live l;
	live_open(e, have, last, &l);
	if (l.ring && !have)
		first = l.lo;
	if (l.ring)
		last = l.head - 1;
	if (!have && !l.ring)
		return 0;
	if (first_line <= first)
		first_line = first + 1;
	rc = replay_lines(e, first_line - 1, first_line, last_line < last ? last_line : last, 1,
	                  have, &l, 0);
	live_close(&l);
	return rc;
}

int rt_replay(struct rt_emitter *e, const struct rt_replay_opts *o)
{
	uint64_t first = 0, last = 0;
	rt_emit_header(e);
	int rc = rt_store_seq_bounds(e->store, e->run, &first, &last);
	if (rc && rc != RT_E_NOTFOUND)
		return rc;
	int have = rc == 0;
	/* a live run: the samples its ring holds beyond the store too */
	struct live l;
	live_open(e, have, last, &l);
	if (!have && !l.ring)
		return 0; /* a run with no samples prints nothing (but the header) */
	if (!have)
		first = l.lo;
	uint64_t stored_last = last;
	if (l.ring)
		last = l.head - 1;
	uint64_t every = o->every ? o->every : 1;
	/* windows of every samples start at the range's first sample: their
	 * base is the sample before it (the run's first sample serves only as
	 * a base); each sample of the range is in one line, and a short last
	 * window ends at the range's end */
	uint64_t base = first;
	if (o->from_ns) {
		uint64_t sq = 0;
		rc = have ? rt_store_seq_at_time(e->store, e->run, o->from_ns, &sq) : RT_E_NOTFOUND;
		if (rc == RT_E_NOTFOUND && l.ring) {
			sq = live_seq_at(e, &l, o->from_ns);
			rc = sq < l.head ? 0 : RT_E_NOTFOUND;
		}
		if (rc == RT_E_NOTFOUND) {
			live_close(&l);
			return RT_E_RANGE;
		}
		if (rc) {
			live_close(&l);
			return rc;
		}
		if (sq > first)
			base = sq - 1;
	}
	uint64_t end = last;
	if (o->to_ns) {
		uint64_t sq;
		if (have && rt_store_seq_at_time(e->store, e->run, o->to_ns + 1, &sq) == 0 &&
		    sq <= stored_last)
			end = sq ? sq - 1 : 0;
		if (end <= base) {
			live_close(&l);
			return RT_E_RANGE;
		}
	}
	rc = replay_lines(e, base, base + every, end, every, have, &l, o->to_ns);
	live_close(&l);
	return rc;
}
