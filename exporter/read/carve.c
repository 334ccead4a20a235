/*
 * carve.c - rt-export recover's second pass: what the damaged store's tree
 * no longer reaches, found in its pages (rt/lmdbcarve.h) and copied into
 * the new store where that lacks it.
 *
 * A zeroed page of the tree hides every record under it, though their own
 * pages are intact: with the runs' list zeroed, `recover` copied 0 runs of
 * a store that held 244 intact samples. Here every leaf page is read:
 *
 *   samples   (run, seq) keys whose stored bytes pass their checksum (a
 *             block's records each by its own, each put alone; a block on
 *             an overflow page found by itself names its run and seq), and
 *             that the new store does not hold yet (the tree pass copied
 *             what it reached; an id a deleted run's stale pages share with
 *             a newer run never overwrites the newer run's samples)
 *   inventory (run, generation) records the new store lacks
 *   metadata  of runs the new store has none for; of several versions
 *             (older copies of the page), the one that ended the run
 *
 * A run found by its samples alone gets metadata made from them (status
 * "unknown": its end was not found).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "export.h"
#include "rt/block.h"
#include "rt/common.h"
#include "rt/fmt.h"
#include "rt/lmdbcarve.h"
#include "rt/pack.h"
#include "rt/record.h"
#include "rt/runmeta.h"
#include "rt/store.h"

struct found_run {
	uint64_t run;
	char *meta; /* the best metadata found, or NULL */
	size_t len;
	int ended;          /* that metadata's status is not "running" */
	uint64_t samples;   /* samples copied from the pages */
	uint64_t first_seq; /* of those */
};

struct carving {
	struct rt_store *dst;
	struct found_run *v;
	size_t n, cap;
	void *aligned; /* an unpacked record of an older rt, for its check */
};

static uint64_t be64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

static struct found_run *run_of(struct carving *c, uint64_t run)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->v[i].run == run)
			return &c->v[i];
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 16;
		void *p = realloc(c->v, cap * sizeof(*c->v));
		if (!p)
			return NULL;
		c->v = p;
		c->cap = cap;
	}
	struct found_run *f = &c->v[c->n++];
	memset(f, 0, sizeof(*f));
	f->run = run;
	f->first_seq = UINT64_MAX;
	return f;
}

/* Whether stored sample bytes are whole: a packed record's CRC-32C, or an
 * older rt's unpacked record's own check. */
static int sample_sound(struct carving *c, const uint8_t *v, size_t n)
{
	if (rt_pack_is_packed(v, n)) {
		uint32_t want;
		memcpy(&want, v + n - 4, 4);
		return v[1] == RT_PACK_LAYOUT && rt_crc32c(0, v, n - 4) == want;
	}
	struct rt_record r;
	if (n > rt_record_max_size())
		return 0;
	memcpy(c->aligned, v, n);
	return rt_record_decode(c->aligned, n, &r) == 0;
}

static void take_one(struct carving *c, uint64_t run, uint64_t seq, const uint8_t *v, size_t n)
{
	if (!sample_sound(c, v, n) || rt_store_has_sample(c->dst, run, seq) != 0)
		return;
	struct found_run *f = run_of(c, run);
	if (f && rt_store_put_sample_bytes(c->dst, run, seq, v, n) == 0) {
		f->samples++;
		if (seq < f->first_seq)
			f->first_seq = seq;
	}
}

/* The samples of a value found at (run, key): one, or a block's each
 * (each put alone in the new store, each checked by its own CRC). */
static void take_sample(struct carving *c, uint64_t run, uint64_t key, const uint8_t *v, size_t n)
{
	struct rt_stored_it it;
	uint64_t seq;
	const void *r;
	size_t len;
	if (rt_stored_begin(&it, run, key, v, n))
		return;
	while (rt_stored_next(&it, &seq, &r, &len) == 1)
		take_one(c, run, seq, r, len);
}

static void take_inventory(struct carving *c, const uint8_t *key, const uint8_t *v, size_t n)
{
	uint64_t run = be64(key);
	uint32_t gen =
	    (uint32_t)key[8] << 24 | (uint32_t)key[9] << 16 | (uint32_t)key[10] << 8 | key[11];
	void *buf = NULL;
	size_t len = 0;
	if (rt_store_get_inventory(c->dst, run, gen, &buf, &len) == RT_E_NOTFOUND)
		rt_store_put_inventory(c->dst, run, gen, v, n);
	free(buf);
}

/* Metadata: kept when the new store has none for the run, the version that
 * ended the run before one that did not, the longer of two alike. */
static void take_meta(struct carving *c, uint64_t run, const uint8_t *v, size_t n)
{
	struct rt_run_fields f;
	if (rt_runmeta_read((const char *)v, n, &f))
		return;
	char *have = NULL;
	size_t hlen = 0;
	int rc = rt_store_get_meta(c->dst, run, &have, &hlen);
	free(have);
	if (rc != RT_E_NOTFOUND)
		return;
	struct found_run *fr = run_of(c, run);
	int ended = rt_run_status_of(f.status) != RT_RUN_RUNNING;
	if (!fr || (fr->meta && (fr->ended > ended || (fr->ended == ended && fr->len >= n))))
		return;
	char *copy = malloc(n);
	if (!copy)
		return;
	memcpy(copy, v, n);
	free(fr->meta);
	fr->meta = copy;
	fr->len = n;
	fr->ended = ended;
}

/* An overflow page found by itself: a block of samples says whose they
 * are (its leaf, which held the key, may be the page that was lost). */
static void take_loose(struct carving *c, const uint8_t *v, size_t n)
{
	uint64_t run, first;
	size_t len = rt_block_measure(v, n, &run, &first);
	if (len)
		take_sample(c, run, first, v, len);
}

static int on_record(void *ctx, const uint8_t *key, size_t klen, const uint8_t *val, size_t vlen,
                     uint64_t pgno)
{
	(void)pgno;
	struct carving *c = ctx;
	if (klen == 0)
		take_loose(c, val, vlen);
	else if (klen == 16)
		take_sample(c, be64(key), be64(key + 8), val, vlen);
	else if (klen == 12)
		take_inventory(c, key, val, vlen);
	else if (klen == 8 && vlen > 0 && val[0] == '{')
		take_meta(c, be64(key), val, vlen);
	return 0;
}

/* Metadata for a run found by its samples alone, made from them. */
struct span {
	uint64_t n, first_seq, last_seq, first_ns, last_ns;
};

static int span_cb(void *ctx, uint64_t seq, const void *rec, size_t len)
{
	struct span *sp = ctx;
	struct rt_record r;
	if (rt_record_decode(rec, len, &r))
		return 0;
	if (!sp->n++) {
		sp->first_seq = seq;
		sp->first_ns = r.h->wall_ns;
	}
	sp->last_seq = seq;
	sp->last_ns = r.h->wall_ns;
	return 0;
}

/* 0 made; -1 none of its samples can be read (each is stored as its
 * change from the one before, and those were lost): they are dropped. */
static int make_meta(struct carving *c, const struct found_run *f)
{
	struct span sp = {0};
	rt_store_flush(c->dst);
	rt_store_scan(c->dst, f->run, 0, UINT64_MAX, span_cb, &sp);
	if (!sp.n) {
		rt_store_delete_run(c->dst, f->run);
		return -1;
	}
	struct rt_run_meta m = {.run_id = f->run,
	                        .status = rt_run_status_name(RT_RUN_UNKNOWN),
	                        .start_ns = sp.first_ns,
	                        .end_ns = sp.last_ns,
	                        .interval_secs = 1.0};
	if (sp.n > 1 && sp.last_ns > sp.first_ns)
		m.interval_secs =
		    (double)(sp.last_ns - sp.first_ns) / 1e9 / (double)(sp.last_seq - sp.first_seq);
	m.meta[RT_META_JOB_NAME] = "recovered from pages";
	struct rt_buf b = {0};
	rt_runmeta_write(&b, &m);
	if (b.p)
		rt_store_put_meta(c->dst, f->run, b.p, b.len);
	rt_buf_free(&b);
	return 0;
}

static int has_meta(struct rt_store *s, uint64_t run)
{
	char *m = NULL;
	size_t len = 0;
	int rc = rt_store_get_meta(s, run, &m, &len);
	free(m);
	return rc != RT_E_NOTFOUND;
}

/* Write what was kept, and say it per run. Returns the samples found. */
static uint64_t finish(struct carving *c)
{
	uint64_t total = 0;
	for (size_t i = 0; i < c->n; i++) {
		struct found_run *f = &c->v[i];
		const char *how = "";
		if (f->meta) {
			rt_store_put_meta(c->dst, f->run, f->meta, f->len);
			how = " and its metadata";
		} else if (f->samples && !has_meta(c->dst, f->run)) {
			how = make_meta(c, f)
			          ? ""
			          : " (not its metadata: made from them, status unknown)";
			if (!*how) {
				printf("run %llu: %llu samples found in the store's pages, none "
				       "readable "
				       "(each is stored as its change from the one before, which "
				       "was lost)\n",
				       (unsigned long long)f->run, (unsigned long long)f->samples);
				free(f->meta);
				continue;
			}
		}
		if (f->samples || f->meta)
			printf("run %llu: %llu more samples%s found in the store's pages\n",
			       (unsigned long long)f->run, (unsigned long long)f->samples, how);
		total += f->samples;
		free(f->meta);
	}
	return total;
}

int rt_recover_carve(const char *src_dir, const char *dst_dir, uint64_t *samples)
{
	char path[4200];
	*samples = 0;
	snprintf(path, sizeof(path), "%s/data.mdb", src_dir);
	/* raw: read-only, never through a link, never blocking */
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		int e = fd < 0 ? errno : EINVAL;
		if (fd >= 0)
			close(fd);
		return -e;
	}
	struct carving c = {0};
	int rc = rt_store_open(dst_dir, RT_STORE_RDWR, &c.dst);
	if (!rc && !(c.aligned = aligned_alloc(8, (rt_record_max_size() + 7) & ~(size_t)7)))
		rc = -ENOMEM;
	if (!rc)
		rc = rt_lmdb_carve(fd, on_record, &c);
	close(fd);
	if (c.dst) {
		*samples = finish(&c);
		if (rt_store_flush(c.dst) == 0)
			rt_store_sync(c.dst);
		rt_store_close(c.dst);
	}
	free(c.v);
	free(c.aligned);
	return rc;
}
