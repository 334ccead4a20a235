/*
 * store_write.c - the write path: the recorder's appends and the
 * exporter's salvage.
 *
 * Samples are packed against the run's previous one and wait for a group
 * commit (rt_store_set_group): one write transaction per group, at the right
 * edge of the B-tree (MDB_APPEND, big-endian keys). A commit goes to the
 * page cache at once (MDB_NOSYNC); rt_store_sync bounds the loss on power
 * failure. Writers hold the writers' lock shared (compaction takes it
 * exclusive); a full map is doubled and the transaction tried again.
 */
#define _GNU_SOURCE
#include "store_int.h"

/* Double the map after MDB_MAP_FULL (no transaction may be open). */
static int grow_map(struct rt_store *s)
{
	MDB_envinfo info;
	mdb_env_info(s->env, &info);
	size_t next = info.me_mapsize * 2;
	int rc = mdb_env_set_mapsize(s->env, next);
	return rc ? store_lmdb_fail(s, "grow map", rc) : 0;
}

/* Run fn in a write transaction; retry after growing the map if full.
 * Readers' handles may write too (salvage): the environment is open
 * read-write for every handle. */
static int write_txn_locked(struct rt_store *s, write_fn fn, void *ctx);

/*
 * The writers' lock: every handle that writes holds STORE/writers.lock
 * shared while it may write (a recorder for its whole run, a reader for a
 * salvage); `compact` holds it exclusive, so nothing writes into the file
 * it is about to replace. Returns the descriptor or -errno (-EBUSY: being
 * compacted).
 */
int store_writers_lock(const char *dir, int how)
{
	char p[4200];
	snprintf(p, sizeof(p), "%s/writers.lock", dir);
	/* raw: the store's held directory (/proc/self/fd/N), never through a link, never blocking */
	int fd = open(p, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, 0600);
	if (fd < 0)
		return -errno;
	if (flock(fd, how | LOCK_NB) < 0) {
		int e = errno;
		close(fd);
		return e == EWOULDBLOCK ? -EBUSY : -e;
	}
	return fd;
}

int rt_store_node_lock(struct rt_store *s, unsigned wait_ms)
{
	for (unsigned waited = 0;; waited += 50) {
		char p[4200];
		snprintf(p, sizeof(p), "%s/node.lock", s->at);
		/* raw: the store's held directory (/proc/self/fd/N), never through a link, never blocking */
		int fd = open(p, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY,
		              0600);
		if (fd < 0)
			return -errno;
		if (flock(fd, LOCK_EX | LOCK_NB) == 0)
			return fd;
		int e = errno;
		close(fd);
		if (e != EWOULDBLOCK)
			return -e;
		if (waited >= wait_ms)
			return -EBUSY;
		struct timespec ts = {0, 50000000};
		nanosleep(&ts, NULL);
	}
}

static int write_txn(struct rt_store *s, write_fn fn, void *ctx)
{
	if (s->wlock >= 0)
		return write_txn_locked(s, fn, ctx);
	int fd = store_writers_lock(s->at, LOCK_SH);
	if (fd < 0)
		return fd;
	int rc = write_txn_locked(s, fn, ctx);
	close(fd);
	return rc;
}

static int write_txn_locked(struct rt_store *s, write_fn fn, void *ctx)
{
	if (!s->have_dbis || s->ro_flags)
		return -EROFS;
	for (int tries = 0; tries < 16; tries++) {
		MDB_txn *txn;
		int rc = store_txn_begin(s, 0, &txn);
		if (rc)
			return rc;
		rc = fn(s, txn, ctx);
		if (rc == 0) {
			rc = mdb_txn_commit(txn); /* frees txn either way */
			s->unsynced |= rc == 0;
		} else {
			mdb_txn_abort(txn);
		}
		if (rc == MDB_MAP_FULL) {
			if ((rc = grow_map(s)))
				return rc;
			continue;
		}
		if (rc < 0)
			return rc; /* already an rt error from fn */
		return rc ? store_lmdb_fail(s, "write", rc) : 0;
	}
	return store_lmdb_fail(s, "write", MDB_MAP_FULL);
}

/* The same, for the handle of a writer (the recorder). */
int store_with_write(struct rt_store *s, write_fn fn, void *ctx)
{
	return s->rdwr ? write_txn(s, fn, ctx) : -EROFS;
}

struct put_ctx {
	MDB_dbi dbi;
	MDB_val k, v;
	unsigned flags;
	uint64_t *run_id; /* new_run: allocate */
};

static int do_put(struct rt_store *s, MDB_txn *txn, void *vctx)
{
	struct put_ctx *c = vctx;
	unsigned char key[8];
	if (c->run_id) { /* next run id = last id + 1 */
		MDB_cursor *cur;
		MDB_val k, v;
		uint64_t next = 1;
		int rc = mdb_cursor_open(txn, s->runs, &cur);
		if (rc)
			return rc;
		if (mdb_cursor_get(cur, &k, &v, MDB_LAST) == 0 && k.mv_size == 8)
			next = get_be64(k.mv_data) + 1;
		mdb_cursor_close(cur);
		put_be64(key, next);
		*c->run_id = next;
		c->k.mv_data = key;
		c->k.mv_size = 8;
	}
	int rc = mdb_put(txn, c->dbi, &c->k, &c->v, c->flags);
	if (rc == MDB_KEYEXIST && (c->flags & MDB_APPEND)) /* another run is newer */
		rc = mdb_put(txn, c->dbi, &c->k, &c->v, 0);
	return rc;
}

static __attribute__((noinline)) int store_new_run_impl(struct rt_store *s, const char *meta,
                                                        size_t len, uint64_t *run_id)
{
	struct put_ctx c = {.dbi = s->runs, .v = {len, (void *)meta}, .run_id = run_id};
	return store_with_write(s, do_put, &c);
}

static __attribute__((noinline)) int store_put_meta_impl(struct rt_store *s, uint64_t run,
                                                         const char *meta, size_t len)
{
	unsigned char key[8];
	put_be64(key, run);
	struct put_ctx c = {.dbi = s->runs, .k = {8, key}, .v = {len, (void *)meta}};
	return write_txn(s, do_put, &c); /* readers too: salvage marks runs crashed */
}

static __attribute__((noinline)) int store_put_inventory_impl(struct rt_store *s, uint64_t run,
                                                              uint32_t gen, const void *buf,
                                                              size_t len)
{
	unsigned char key[12];
	put_be64(key, run);
	key[8] = (unsigned char)(gen >> 24);
	key[9] = (unsigned char)(gen >> 16);
	key[10] = (unsigned char)(gen >> 8);
	key[11] = (unsigned char)gen;
	struct put_ctx c = {.dbi = s->inv, .k = {12, key}, .v = {len, (void *)buf}};
	return store_with_write(s, do_put, &c);
}

void rt_store_set_group(struct rt_store *s, unsigned max_samples, uint64_t max_age_ns,
                        int sync_on_commit)
{
	s->group_max = max_samples ? max_samples : 1;
	s->group_age_ns = max_age_ns;
	s->sync_on_commit = sync_on_commit;
}

uint64_t rt_store_dropped(const struct rt_store *s)
{
	return s->dropped;
}

unsigned rt_store_pending(const struct rt_store *s)
{
	return s->npend;
}

/* Put one sample's stored bytes at (run, seq); the right edge when it is the
 * newest key (MDB_APPEND), anywhere otherwise. */
static int put_sample(struct rt_store *s, MDB_txn *txn, uint64_t run, uint64_t seq, const void *val,
                      size_t len)
{
	unsigned char key[16];
	put_be64(key, run);
	put_be64(key + 8, seq);
	struct put_ctx c = {
	    .dbi = s->samples, .k = {16, key}, .v = {len, (void *)val}, .flags = MDB_APPEND};
	return do_put(s, txn, &c);
}

/* A block as it now is, at (run, its first seq): a rewrite of the open one. */
static int put_block(struct rt_store *s, MDB_txn *txn, uint64_t run, struct rt_block *b)
{
	size_t len;
	const void *v = rt_block_value(b, &len);
	return put_sample(s, txn, run, b->first, v, len);
}

/* A waiting sample into its run's open block. A block it does not fit is
 * put as it is, closed, and a new one begun with the sample; a sample too
 * big for any block, or of a run without one, is put alone. */
static int block_sample(struct rt_store *s, MDB_txn *txn, const struct pending *p)
{
	/* (its run ended since the sample waits: the run's pack taken again) */
	struct run_pack *rp =
	    p->pack < s->npacks && s->packs[p->pack].run == p->run ? &s->packs[p->pack] : NULL;
	const void *bytes = s->pbytes + p->off;
	if (!rp || !rp->blk)
		return put_sample(s, txn, p->run, p->seq, bytes, p->len);
	struct rt_block *b = rp->blk;
	if (!b->count || rt_block_add(b, p->run, p->seq, bytes, p->len)) {
		if (b->count && rp->blk_touched) {
			int rc = put_block(s, txn, p->run, b);
			if (rc)
				return rc;
		}
		rt_block_reset(b);
		rp->blk_dirty = 1;
		rp->blk_touched = 0;
		if (rt_block_add(b, p->run, p->seq, bytes, p->len))
			return put_sample(s, txn, p->run, p->seq, bytes, p->len);
	}
	rp->blk_dirty = rp->blk_touched = 1;
	return 0;
}

/* Forget every run's open block (its samples stay in the store as they
 * were put): the next sample of each begins a new one. */
static void drop_open_blocks(struct rt_store *s, int only_dirty)
{
	for (unsigned i = 0; i < s->npacks; i++) {
		struct run_pack *rp = &s->packs[i];
		if (rp->blk && (!only_dirty || rp->blk_dirty))
			rt_block_reset(rp->blk);
		rp->blk_dirty = rp->blk_touched = 0;
	}
}

/* The group: each waiting sample into its run's open block, then every
 * block it changed put. A try after a full map begins again from the
 * blocks as they were committed: those the failed try changed are
 * forgotten, their samples begin new ones. */
static int do_commit(struct rt_store *s, MDB_txn *txn, void *vctx)
{
	(void)vctx;
	drop_open_blocks(s, 1);
	for (unsigned i = 0; i < s->npend; i++) {
		int rc = block_sample(s, txn, &s->pend[i]);
		if (rc)
			return rc;
	}
	for (unsigned i = 0; i < s->npacks; i++) {
		struct run_pack *rp = &s->packs[i];
		if (rp->blk && rp->blk_touched && rp->blk->count) {
			int rc = put_block(s, txn, rp->run, rp->blk);
			if (rc)
				return rc;
		}
		rp->blk_touched = 0;
	}
	return 0;
}

/*
 * Keep pages ahead of LMDB's last page in data.mdb. A commit that writes
 * past the end of the file changes its size, and on ext4 and most
 * journaling filesystems the sync after it then writes the journal too
 * (about as much again as the data at 1 Hz); writing pages the file
 * already has does not. Zeros are written once per chunk, a few percent of
 * the file, so every page is allocated and written before LMDB uses it:
 * fallocate's unwritten extents would be converted, and split, by nearly
 * every commit (LMDB reuses free pages all over the file), which at a real
 * 1 Hz journaled twice the blocks and wrote the bitmaps back every minute.
 * The first chunk is small (a fresh store's first sync wrote 256 KiB of
 * zeros, 1.7 KB per sample of a 150 s run at 1 Hz); later ones grow with
 * the file.
 */
#define AHEAD_MIN (64u << 10)
#define AHEAD_MAX (16u << 20)
static void zero_ahead(struct rt_store *s)
{
	MDB_envinfo info;
	MDB_stat st;
	int fd;
	struct stat fs;
	if (mdb_env_info(s->env, &info) || mdb_env_stat(s->env, &st) ||
	    mdb_env_get_fd(s->env, &fd) || fstat(fd, &fs))
		return;
	/* testing aid: RT_STORE_AHEAD_KB=0 lets a test fill the disk at once */
	const char *env = getenv("RT_STORE_AHEAD_KB");
	off_t min = env ? (off_t)strtoul(env, NULL, 10) << 10 : AHEAD_MIN;
	if (min <= 0)
		return;
	off_t used = (off_t)(info.me_last_pgno + 1) * st.ms_psize;
	off_t want = used + min / 2;
	if (fs.st_size >= want)
		return;
	off_t chunk = used / 8;
	chunk = chunk < min ? min : chunk > AHEAD_MAX ? AHEAD_MAX : chunk;
	off_t end = (used + chunk) & ~(off_t)(st.ms_psize - 1);
	if (end > (off_t)info.me_mapsize)
		end = (off_t)info.me_mapsize; /* LMDB grows the map first */
	static const char zeros[65536];
	for (off_t at = fs.st_size > used ? fs.st_size : used; at < end;) {
		size_t n = (size_t)(end - at) < sizeof(zeros) ? (size_t)(end - at) : sizeof(zeros);
		ssize_t w = pwrite(fd, zeros, n, at);
		if (w <= 0)
			return; /* a full disk: LMDB says so at the next commit */
		at += w;
	}
}

static int commit_group(struct rt_store *s, int sync)
{
	if (!s->npend)
		return 0;
	int rc = store_with_write(s, do_commit, NULL);
	if (rc) { /* the group is lost; each run's next sample starts afresh,
		   * full, in a new block */
		s->dropped += s->npend;
		for (unsigned i = 0; i < s->npacks; i++)
			rt_pack_state_reset(&s->packs[i].st);
		drop_open_blocks(s, 0);
	} else {
		for (unsigned i = 0; i < s->npacks; i++)
			s->packs[i].blk_dirty = 0; /* as the store now holds them */
	}
	if (!rc && sync) {
		zero_ahead(s);
		rc = rt_store_sync(s);
	}
	s->npend = 0;
	s->pbytes_len = 0;
	return rc;
}

static __attribute__((noinline)) int store_flush_impl(struct rt_store *s)
{
	return commit_group(s, s->sync_on_commit);
}

static __attribute__((noinline)) int store_commit_impl(struct rt_store *s)
{
	return commit_group(s, 0);
}

static int grow(void **p, size_t *cap, size_t need, size_t unit)
{
	if (need <= *cap)
		return 0;
	size_t n = *cap ? *cap : 16;
	while (n < need)
		n *= 2;
	void *q = realloc(*p, n * unit);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = n;
	return 0;
}

/* What packs run's samples: its own, made on its first append (a free
 * one taken first); NULL without memory. */
static struct run_pack *run_pack(struct rt_store *s, uint64_t run)
{
	struct run_pack *free_one = NULL;
	for (unsigned i = 0; i < s->npacks; i++) {
		if (s->packs[i].run == run)
			return &s->packs[i];
		if (!s->packs[i].run && !free_one)
			free_one = &s->packs[i];
	}
	if (!free_one) {
		struct run_pack *p = realloc(s->packs, (s->npacks + 1) * sizeof(*p));
		if (!p)
			return NULL;
		s->packs = p;
		free_one = &p[s->npacks];
		memset(free_one, 0, sizeof(*free_one));
		if (rt_pack_state_init(&free_one->st))
			return NULL;
		s->npacks++;
	}
	rt_pack_state_reset(&free_one->st); /* (a run ended before: afresh) */
	if (!free_one->blk)
		free_one->blk = malloc(sizeof(*free_one->blk)); /* NULL: alone */
	if (free_one->blk)
		rt_block_reset(free_one->blk);
	free_one->blk_dirty = free_one->blk_touched = 0;
	free_one->run = run;
	return free_one;
}

void rt_store_end_run(struct rt_store *s, uint64_t run)
{
	for (unsigned i = 0; i < s->npacks; i++)
		if (s->packs[i].run == run) {
			s->packs[i].run = 0;
			rt_pack_state_reset(&s->packs[i].st);
			if (s->packs[i].blk) /* (what it holds is in the store) */
				rt_block_reset(s->packs[i].blk);
		}
}

/* Whether samples of run wait for the group commit. */
static int run_pending(const struct rt_store *s, uint64_t run)
{
	for (unsigned i = 0; i < s->npend; i++)
		if (s->pend[i].run == run)
			return 1;
	return 0;
}

static __attribute__((noinline)) int store_append_impl(struct rt_store *s, uint64_t run,
                                                       uint64_t seq, const void *rec, size_t len)
{
	if (!s->rdwr || !s->have_dbis)
		return -EROFS;
	struct rt_record r;
	int rc = rt_record_decode(rec, len, &r);
	if (rc)
		return rc;
	struct run_pack *rp = run_pack(s, run);
	if (!rp)
		return -ENOMEM;
	size_t pc = s->pend_cap;
	if ((rc = grow((void **)&s->pend, &pc, s->npend + 1, sizeof(*s->pend))) ||
	    (rc = grow((void **)&s->pbytes, &s->pbytes_cap, s->pbytes_len + rt_pack_bound(&r), 1)))
		return rc;
	s->pend_cap = (unsigned)pc;
	size_t n = rt_pack(&rp->st, seq, &r, s->pbytes + s->pbytes_len);
	s->pend[s->npend++] = (struct pending){run, seq, (uint32_t)s->pbytes_len, (uint32_t)n,
	                                       (unsigned)(rp - s->packs)};
	s->pbytes_len += n;
	uint64_t now = r.h->mono_ns; /* the samples' clock: a fake one in tests */
	if (s->npend == 1)
		s->pend_since_ns = now;
	if (s->npend >= s->group_max ||
	    (s->group_age_ns && now - s->pend_since_ns >= s->group_age_ns))
		return rt_store_flush(s);
	return 0;
}

struct raw_ctx {
	uint64_t run, seq;
	const void *val;
	size_t len;
};

static int do_put_raw(struct rt_store *s, MDB_txn *txn, void *vctx)
{
	struct raw_ctx *c = vctx;
	return put_sample(s, txn, c->run, c->seq, c->val, c->len);
}

static __attribute__((noinline)) int store_put_sample_bytes_impl(struct rt_store *s, uint64_t run,
                                                                 uint64_t seq, const void *val,
                                                                 size_t len)
{
	struct raw_ctx c = {run, seq, val, len};
	return store_with_write(s, do_put_raw, &c);
}

struct salvage_ctx {
	struct rt_ring *ring;
	uint64_t run;
	unsigned added;
	struct rt_pack_state st;
	void *rec;
	unsigned char *packed;
	struct rt_block *blk;
};

/* The seq after the store's last sample of run (0: none), read inside
 * the transaction: two salvagers of one run take turns, the second finds
 * nothing to add. */
static int run_next_seq(struct rt_store *s, MDB_txn *txn, uint64_t run, uint64_t *next)
{
	MDB_cursor *cur;
	int rc = mdb_cursor_open(txn, s->samples, &cur);
	if (rc)
		return rc;
	unsigned char key[16];
	put_be64(key, run + 1);
	put_be64(key + 8, 0);
	MDB_val k = {16, key}, v;
	rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
	rc =
	    rc == 0 ? mdb_cursor_get(cur, &k, &v, MDB_PREV) : mdb_cursor_get(cur, &k, &v, MDB_LAST);
	*next = 0;
	if (rc == 0 && k.mv_size == 16 && get_be64(k.mv_data) == run) {
		if (store_value_check(s, &v))
			v.mv_size = 0; /* (damaged: as if a single sample) */
		uint64_t last = rt_stored_last(run, get_be64((unsigned char *)k.mv_data + 8),
		                               v.mv_data, v.mv_size);
		*next = last == UINT64_MAX ? last : last + 1;
	}
	mdb_cursor_close(cur);
	return 0;
}

/* One salvaged sample into the block being made; a full one is put. */
static int salvage_put(struct rt_store *s, MDB_txn *txn, struct salvage_ctx *c, uint64_t seq,
                       size_t n)
{
	if (rt_block_add(c->blk, c->run, seq, c->packed, n) == 0)
		return 0;
	if (c->blk->count) {
		int rc = put_block(s, txn, c->run, c->blk);
		if (rc)
			return rc;
		rt_block_reset(c->blk);
		if (rt_block_add(c->blk, c->run, seq, c->packed, n) == 0)
			return 0;
	}
	return put_sample(s, txn, c->run, seq, c->packed, n); /* too big for a block */
}

static int do_salvage(struct rt_store *s, MDB_txn *txn, void *vctx)
{
	struct salvage_ctx *c = vctx;
	c->added = 0;
	rt_pack_state_reset(&c->st);
	rt_block_reset(c->blk);
	uint64_t want;
	int rc = run_next_seq(s, txn, c->run, &want);
	if (rc)
		return rc;
	uint64_t head = rt_ring_head(c->ring), slots = rt_ring_slot_count(c->ring);
	uint64_t seq = head > slots ? head - slots : 0;
	for (seq = seq < want ? want : seq; seq < head; seq++) {
		size_t len = 0;
		struct rt_record r;
		if (rt_ring_read(c->ring, seq, c->rec, rt_record_max_size(), &len) || !len ||
		    rt_record_decode(c->rec, len, &r) || r.h->seq != seq) {
			rt_pack_state_reset(&c->st); /* torn or oversized: skip it */
			continue;
		}
		size_t n = rt_pack(&c->st, seq, &r, c->packed);
		if ((rc = salvage_put(s, txn, c, seq, n)))
			return rc;
		c->added++;
	}
	return c->blk->count ? put_block(s, txn, c->run, c->blk) : 0;
}

static __attribute__((noinline)) int store_salvage_impl(struct rt_store *s, struct rt_ring *ring,
                                                        unsigned *added)
{
	struct salvage_ctx c = {.ring = ring, .run = rt_ring_run_id(ring)};
	*added = 0;
	if (run_pending(s, c.run))
		rt_store_flush(s);
	int rc = rt_pack_state_init(&c.st);
	if (rc)
		return rc;
	if (posix_memalign(&c.rec, 64, rt_record_max_size()))
		c.rec = NULL;
	c.packed = malloc(2 * rt_record_max_size()); /* > rt_pack_bound of any record */
	c.blk = malloc(sizeof(*c.blk));
	store_own(c.st.buf);
	store_own(c.rec);
	store_own(c.packed);
	store_own(c.blk);
	if (!c.rec || !c.packed || !c.blk)
		rc = -ENOMEM;
	else
		rc = write_txn(s, do_salvage, &c);
	if (rc == 0)
		*added = c.added;
	free(c.rec);
	store_disown(c.rec);
	store_disown(c.packed);
	store_disown(c.st.buf);
	store_disown(c.blk);
	free(c.blk);
	free(c.packed);
	rt_pack_state_free(&c.st);
	return rc;
}

static __attribute__((noinline)) int store_sync_impl(struct rt_store *s)
{
	if (!s->unsynced)
		return 0;
	int rc = mdb_env_sync(s->env, 1);
	if (rc)
		return store_lmdb_fail(s, "sync", rc);
	s->unsynced = 0;
	return 0;
}

/* The public entry points, each guarded against faults in LMDB. */
int rt_store_new_run(struct rt_store *s, const char *meta, size_t len, uint64_t *run_id)
{
	return GUARDED(s, store_new_run_impl(s, meta, len, run_id));
}

int rt_store_put_meta(struct rt_store *s, uint64_t run, const char *meta, size_t len)
{
	return GUARDED(s, store_put_meta_impl(s, run, meta, len));
}

int rt_store_put_inventory(struct rt_store *s, uint64_t run, uint32_t gen, const void *buf,
                           size_t len)
{
	return GUARDED(s, store_put_inventory_impl(s, run, gen, buf, len));
}

int rt_store_flush(struct rt_store *s)
{
	return GUARDED(s, store_flush_impl(s));
}

int rt_store_commit(struct rt_store *s)
{
	return GUARDED(s, store_commit_impl(s));
}

int rt_store_append(struct rt_store *s, uint64_t run, uint64_t seq, const void *rec, size_t len)
{
	return GUARDED(s, store_append_impl(s, run, seq, rec, len));
}

int rt_store_put_sample_bytes(struct rt_store *s, uint64_t run, uint64_t seq, const void *val,
                              size_t len)
{
	return GUARDED(s, store_put_sample_bytes_impl(s, run, seq, val, len));
}

int rt_store_salvage(struct rt_store *s, struct rt_ring *ring, unsigned *added)
{
	return GUARDED(s, store_salvage_impl(s, ring, added));
}

int rt_store_sync(struct rt_store *s)
{
	return GUARDED(s, store_sync_impl(s));
}
