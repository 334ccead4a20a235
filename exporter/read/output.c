/*
 * output.c - the sink and the emitter.
 *
 * The emitter is the only place where records become text, for every verb,
 * so a live stream and a replay of the same samples print the same bytes.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "export.h"
#include "rt/clock.h"
#include "rt/common.h"

#define SINK_FLUSH_AT (64 * 1024)

static const char *say_prog = "rt-export";
static int csv_columns; /* RT_CSV_* of the emitters made from now on */

void rt_say_as(const char *prog)
{
	say_prog = prog;
}

void rt_emit_csv_columns(int flags)
{
	csv_columns = flags;
}

void rt_say(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	rt_vmessage(say_prog, fmt, ap);
	va_end(ap);
}

void rt_say_read_notes(const struct rt_read_notes *n, uint64_t run, uint64_t lines)
{
	unsigned long long r = (unsigned long long)run;
	if (n->newer_layout)
		rt_say(
		    "run %llu was recorded by a newer rt (record layout %u, this rt-export reads "
		    "up to %d): upgrade rt to replay it",
		    r, n->newer_layout, RT_RECORD_LAYOUT);
	if (n->corrupt)
		rt_say("%llu sample%s of run %llu %s corrupt (the first: sample %llu); skipped",
		       (unsigned long long)n->corrupt, n->corrupt == 1 ? "" : "s", r,
		       n->corrupt == 1 ? "is" : "are", (unsigned long long)n->corrupt_first);
	if (n->no_inv)
		rt_say("%llu line%s of run %llu had no inventory (missing or corrupt, the first at "
		       "sample %llu); skipped",
		       (unsigned long long)n->no_inv, n->no_inv == 1 ? "" : "s", r,
		       (unsigned long long)n->no_inv_first);
	if (n->gone)
		rt_say("run %llu is not being recorded any more (its recorder is gone); printed up "
		       "to sample %llu",
		       r, (unsigned long long)n->last_seq);
	if (n->stopped)
		rt_say("the recorder of run %llu stopped without finishing it (killed?); printed "
		       "up to sample %llu",
		       r, (unsigned long long)n->last_seq);
	if (n->stream_cut)
		rt_say("the recorder stopped without finishing the run (killed?)%s",
		       lines ? "; its last samples may be missing" : "");
}

int rt_sink_open(struct rt_sink *k, const char *path, int default_fd, int line_flush, char *why,
                 size_t cap)
{
	memset(k, 0, sizeof(*k));
	k->line_flush = line_flush;
	if (path && !strcmp(path, "-")) {
		k->fd = 1;
		k->name = "stdout";
	} else if (path && line_flush) {
		k->fd = rt_open_stream_out(path, 0644, why, cap);
		if (k->fd < 0)
			return k->fd;
		k->own_fd = 1;
		k->name = path;
	} else if (path) {
		int rc = rt_outfile_open(&k->of, path, 0644, why, cap);
		if (rc)
			return rc;
		k->fd = k->of.fd;
		k->atomic = 1;
		k->name = path;
	} else {
		k->fd = default_fd;
		k->name = default_fd == 2 ? "stderr" : "stdout";
	}
	return 0;
}

/* How long live output waits for its reader to take a line. */
#define LIVE_WRITE_MS 1000

int rt_sink_flush(struct rt_sink *k)
{
	if (!k || k->memory)
		return 0;
	if (k->failed) {
		k->buf.len = 0;
		return -k->failed;
	}
	/* live output never waits on its reader for more than a second: a
	 * FIFO or pipe nobody reads would hold this process (and with it the
	 * job's stderr it inherited) after the job. Written a pipe buffer's
	 * page at a time, each when poll says there is room, so no write
	 * blocks (the descriptor may be the job's own stdout: it stays
	 * blocking). */
	if (k->line_flush && !k->no_poll) {
		struct stat st;
		k->no_poll =
		    fstat(k->fd, &st) == 0 && (S_ISREG(st.st_mode) ||
		                               (S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3)))
		        ? 1
		        : -1;
	}
	size_t off = 0;
	uint64_t t0 = k->line_flush && k->no_poll < 0 ? rt_clock_mono_real() : 0;
	while (off < k->buf.len) {
		size_t want = k->buf.len - off;
		if (k->line_flush && k->no_poll < 0) {
			uint64_t spent = (rt_clock_mono_real() - t0) / 1000000u;
			struct pollfd pf = {.fd = k->fd, .events = POLLOUT};
			int r =
			    spent < LIVE_WRITE_MS ? poll(&pf, 1, (int)(LIVE_WRITE_MS - spent)) : 0;
			if (r < 0 && errno == EINTR)
				continue;
			if (r == 0) {
				k->failed = ETIMEDOUT;
				break;
			}
			if (want > 4096)
				want = 4096;
		}
		ssize_t n = write(k->fd, k->buf.p + off, want);
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			k->failed = errno;
			break;
		}
		off += (size_t)n;
	}
	k->buf.len = 0;
	return k->failed ? -k->failed : 0;
}

int rt_sink_close(struct rt_sink *k)
{
	int rc = rt_sink_flush(k);
	if (k->atomic) {
		if (rc)
			rt_outfile_abort(&k->of);
		else
			rc = rt_outfile_commit(&k->of);
		k->atomic = 0;
	} else if (k->own_fd && close(k->fd) < 0 && rc == 0 && errno != EINTR) {
		rc = -errno;
	}
	k->own_fd = 0;
	rt_buf_free(&k->buf);
	return rc;
}

void rt_sink_discard(struct rt_sink *k)
{
	if (k->atomic)
		rt_outfile_abort(&k->of);
	else if (k->own_fd)
		close(k->fd);
	k->atomic = k->own_fd = 0;
	rt_buf_free(&k->buf);
}

int rt_recbuf_init(struct rt_recbuf *r)
{
	memset(r, 0, sizeof(*r));
	return posix_memalign(&r->buf, 64, rt_record_max_size()) ? -ENOMEM : 0;
}

void rt_recbuf_free(struct rt_recbuf *r)
{
	free(r->buf);
	r->buf = NULL;
}

int rt_recbuf_set(struct rt_recbuf *r, const void *bytes, size_t len)
{
	if (len > rt_record_max_size())
		return RT_E_CORRUPT;
	if (bytes != r->buf)
		memcpy(r->buf, bytes, len);
	r->len = len;
	return rt_record_decode(r->buf, len, &r->rec);
}

int rt_emitter_init(struct rt_emitter *e, struct rt_store *s, const struct rt_runinfo *ri,
                    enum rt_format fmt, struct rt_sink *sink)
{
	memset(e, 0, sizeof(*e));
	e->store = s;
	e->run = ri->id;
	e->fmt = fmt;
	e->sink = sink;
	e->info.job_name = ri->job_name;
	e->info.tracked_pid = ri->tracked_pid;
	e->interval = ri->interval;
	e->csv_extended = csv_columns;
	e->d = malloc(sizeof(*e->d));
	return e->d ? 0 : -ENOMEM;
}

void rt_emitter_free(struct rt_emitter *e)
{
	for (int i = 0; i < 4; i++)
		free(e->inv[i]);
	free(e->d);
}

static const struct rt_inventory *cache_inventory(struct rt_emitter *e, uint32_t gen, void *bytes,
                                                  size_t len, const struct rt_inventory *keep);

/* Inventory of generation gen, cached; never evicts `keep`. */
static const struct rt_inventory *inventory(struct rt_emitter *e, uint32_t gen,
                                            const struct rt_inventory *keep)
{
	for (int i = 0; i < 4; i++)
		if (e->inv[i] && e->inv_gen[i] == gen)
			return e->inv[i];
	void *bytes;
	size_t len;
	if (!e->store || rt_store_get_inventory(e->store, e->run, gen, &bytes, &len))
		return NULL;
	return cache_inventory(e, gen, bytes, len, keep);
}

int rt_emitter_put_inventory(struct rt_emitter *e, uint32_t gen, const void *bytes, size_t len)
{
	void *copy = malloc(len ? len : 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, bytes, len);
	for (int i = 0; i < 4; i++) /* a generation is sent once; replace if resent */
		if (e->inv[i] && e->inv_gen[i] == gen) {
			free(e->inv[i]);
			e->inv[i] = NULL;
		}
	return cache_inventory(e, gen, copy, len, NULL) ? 0 : RT_E_CORRUPT;
}

/* Decode bytes (taken over) into a cache slot other than keep's. */
static const struct rt_inventory *cache_inventory(struct rt_emitter *e, uint32_t gen, void *bytes,
                                                  size_t len, const struct rt_inventory *keep)
{
	unsigned slot = e->inv_next++ % 4;
	if (e->inv[slot] && e->inv[slot] == keep)
		slot = e->inv_next++ % 4;
	if (!e->inv[slot] && !(e->inv[slot] = malloc(sizeof(struct rt_inventory)))) {
		free(bytes);
		return NULL;
	}
	int rc = rt_inventory_decode(bytes, len, e->inv[slot]);
	free(bytes);
	if (rc) {
		free(e->inv[slot]);
		e->inv[slot] = NULL;
		return NULL;
	}
	e->inv_gen[slot] = gen;
	return e->inv[slot];
}

void rt_emit_header(struct rt_emitter *e)
{
	if (e->sink && e->fmt == RT_FMT_CSV && !e->header_done) {
		rt_format_csv_header_x(&e->sink->buf, e->csv_extended);
		if (e->sink->line_flush)
			rt_sink_flush(e->sink);
	}
	e->header_done = 1;
}

/* Counts in a record must fit its inventory, or slots would be misread. */
static int fits(const struct rt_record *r, const struct rt_inventory *inv)
{
	return r->h->ncpu <= inv->ncpu && r->h->ndisk <= inv->ndisk &&
	       r->h->nmount <= inv->nmount && r->h->nnic <= inv->nnic && r->h->ngpu <= inv->ngpu;
}

int rt_emit(struct rt_emitter *e, const struct rt_record *prev, const struct rt_record *cur)
{
	rt_emit_header(e);
	const struct rt_inventory *pi = inventory(e, prev->h->inv_gen, NULL);
	if (!pi || !fits(prev, pi))
		return RT_E_CORRUPT;
	const struct rt_inventory *ci = inventory(e, cur->h->inv_gen, pi);
	if (!ci || !fits(cur, ci))
		return RT_E_CORRUPT;
	struct rt_view pv = {prev, pi}, cv = {cur, ci};
	rt_derive(&pv, &cv, e->d);
	e->lines++;
	if (e->observe) {
		int rc = e->observe(e->observe_ctx, e->d);
		if (rc)
			return rc;
	}
	if (!e->sink)
		return 0;
	if (e->fmt == RT_FMT_CSV)
		rt_format_csv_x(&e->sink->buf, e->d, &e->info, e->csv_extended);
	else
		rt_format_json(&e->sink->buf, e->d, &e->info);
	if (e->sink->line_flush || e->sink->buf.len >= SINK_FLUSH_AT)
		return rt_sink_flush(e->sink);
	return 0;
}
