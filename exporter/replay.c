/*
 * replay.c - print a stored run, a time range of it, or every Nth sample.
 *
 * Line k is derived from the sample before it in the chosen resolution, so
 * --every 10 gives 10-interval averages, never a spike. The store is read
 * with short transactions (rt_store_scan), so a replay of a huge run never
 * pins pages the recorder needs.
 */
#include <errno.h>
#include <string.h>

#include "export.h"
#include "rt/common.h"

struct replay_ctx {
	struct rt_emitter *e;
	struct rt_recbuf prev, cur;
	int have_prev;
	uint64_t prev_seq, next_line, every;
	int err;
};

static int replay_cb(void *vctx, uint64_t seq, const void *bytes, size_t len)
{
	struct replay_ctx *x = vctx;
	if (seq < x->next_line && seq != x->prev_seq)
		return 0;
	struct rt_recbuf *dst = x->have_prev ? &x->cur : &x->prev;
	int rc = rt_recbuf_set(dst, bytes, len);
	unsigned layout = rc == RT_E_LAYOUT ? rt_record_claimed_layout(bytes, len) : 0;
	if (layout > RT_RECORD_LAYOUT) { /* never misread what a newer rt wrote */
		rt_say(
		    "run %llu was recorded by a newer rt (record layout %u, this rt-export reads "
		    "up to %d): upgrade rt to replay it",
		    (unsigned long long)x->e->run, layout, RT_RECORD_LAYOUT);
		x->err = RT_E_LAYOUT;
		return 1;
	}
	if (rc || dst->rec.h->seq != seq) {
		rt_say("sample %llu of run %llu is corrupt; skipped", (unsigned long long)seq,
		       (unsigned long long)x->e->run);
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
		rt_say("inventory of run %llu missing or corrupt at sample %llu; skipped",
		       (unsigned long long)x->e->run, (unsigned long long)seq);
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

/* Lines for seq start, start+every, ... <= end; bases from first on. */
static int replay_lines(struct rt_emitter *e, uint64_t first, uint64_t start, uint64_t end,
                        uint64_t every)
{
	if (start > end)
		return 0;
	struct replay_ctx x = {.e = e, .every = every, .next_line = start};
	x.prev_seq = (start < every || start - every < first) ? first : start - every;
	if (rt_recbuf_init(&x.prev) || rt_recbuf_init(&x.cur)) {
		rt_recbuf_free(&x.prev);
		rt_recbuf_free(&x.cur);
		return -ENOMEM;
	}
	int rc = rt_store_scan(e->store, e->run, x.prev_seq, end, replay_cb, &x);
	rt_recbuf_free(&x.prev);
	rt_recbuf_free(&x.cur);
	if (x.err)
		return x.err;
	return rc < 0 ? rc : 0;
}

int rt_replay_range(struct rt_emitter *e, uint64_t first_line, uint64_t last_line)
{
	uint64_t first, last;
	rt_emit_header(e);
	int rc = rt_store_seq_bounds(e->store, e->run, &first, &last);
	if (rc == RT_E_NOTFOUND)
		return 0;
	if (rc)
		return rc;
	if (first_line <= first)
		first_line = first + 1;
	return replay_lines(e, first, first_line, last_line < last ? last_line : last, 1);
}

int rt_replay(struct rt_emitter *e, const struct rt_replay_opts *o)
{
	uint64_t first, last;
	rt_emit_header(e);
	int rc = rt_store_seq_bounds(e->store, e->run, &first, &last);
	if (rc == RT_E_NOTFOUND)
		return 0; /* a run with no samples prints nothing (but the header) */
	if (rc)
		return rc;
	uint64_t every = o->every ? o->every : 1;
	uint64_t start = first + every; /* first line: its base is the first sample */
	if (o->from_ns) {
		uint64_t sq;
		rc = rt_store_seq_at_time(e->store, e->run, o->from_ns, &sq);
		if (rc == RT_E_NOTFOUND)
			return 0;
		if (rc)
			return rc;
		if (sq > start)
			start = sq;
	}
	uint64_t end = last;
	if (o->to_ns) {
		uint64_t sq;
		rc = rt_store_seq_at_time(e->store, e->run, o->to_ns + 1, &sq);
		if (rc == 0)
			end = sq ? sq - 1 : 0;
	}
	return replay_lines(e, first, start, end, every);
}
