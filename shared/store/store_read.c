/*
 * store_read.c - the read path: metadata, inventories, scans and
 * the lookups replay, tail and the answers are built on.
 *
 * Long scans read SCAN_TXN_BATCH samples per short read transaction, so a
 * reader never pins old pages for long, and call the caller's callback
 * outside the guard (UNGUARDED).
 */
#define _GNU_SOURCE
#include "store_int.h"

/* Read one value of dbi at key into a malloc'd copy. */
static int get_copy(struct rt_store *s, MDB_dbi dbi, void *key, size_t klen, void **out,
                    size_t *len, int nul)
{
	if (!s->have_dbis)
		return RT_E_NOTFOUND;
	MDB_txn *txn;
	int rc = store_txn_begin(s, MDB_RDONLY, &txn);
	if (rc)
		return rc;
	MDB_val k = {klen, key}, v;
	rc = mdb_get(txn, dbi, &k, &v);
	if (rc) {
		mdb_txn_abort(txn);
		return rc == MDB_NOTFOUND ? RT_E_NOTFOUND : store_lmdb_fail(s, "get", rc);
	}
	if ((rc = store_value_check(s, &v))) {
		mdb_txn_abort(txn);
		return rc;
	}
	char *p = malloc(v.mv_size + 1);
	if (!p) {
		mdb_txn_abort(txn);
		return -ENOMEM;
	}
	store_own(p);
	memcpy(p, v.mv_data, v.mv_size);
	store_disown(p);
	if (nul)
		p[v.mv_size] = '\0';
	*out = p;
	*len = v.mv_size;
	mdb_txn_abort(txn);
	return 0;
}

static __attribute__((noinline)) int store_get_meta_impl(struct rt_store *s, uint64_t run,
                                                         char **meta, size_t *len)
{
	unsigned char key[8];
	put_be64(key, run);
	return get_copy(s, s->runs, key, 8, (void **)meta, len, 1);
}

static __attribute__((noinline)) int store_get_inventory_impl(struct rt_store *s, uint64_t run,
                                                              uint32_t gen, void **buf, size_t *len)
{
	unsigned char key[12];
	put_be64(key, run);
	key[8] = (unsigned char)(gen >> 24);
	key[9] = (unsigned char)(gen >> 16);
	key[10] = (unsigned char)(gen >> 8);
	key[11] = (unsigned char)gen;
	return get_copy(s, s->inv, key, 12, buf, len, 0);
}

static void *aligned_copy(struct rt_store *s, const void *p, size_t len)
{
	if (len > s->scratch_cap) {
		size_t cap = (len + 4095) & ~(size_t)4095;
		void *q = NULL;
		if (posix_memalign(&q, 64, cap))
			return NULL;
		free(s->scratch);
		s->scratch = q;
		s->scratch_cap = cap;
	}
	memcpy(s->scratch, p, len);
	return s->scratch;
}

static int of_run(const MDB_val *k, uint64_t run)
{
	return k->mv_size == 16 && get_be64(k->mv_data) == run;
}

static uint64_t key_seq(const MDB_val *k)
{
	return get_be64((unsigned char *)k->mv_data + 8);
}

/* The last seq an entry holds: a block's by its span, else its key's. */
static uint64_t entry_last(struct rt_store *s, const MDB_val *k, const MDB_val *v)
{
	if (store_value_check(s, v))
		return key_seq(k);
	return rt_stored_last(get_be64(k->mv_data), key_seq(k), v->mv_data, v->mv_size);
}

/*
 * Position cur at run's entry that holds seq (a single one at seq, or a
 * block whose span covers it) or else the first after it, in k and v.
 * 0, or RT_E_NOTFOUND when the run has none there.
 */
static int seek_covering(struct rt_store *s, MDB_cursor *cur, uint64_t run, uint64_t seq,
                         MDB_val *k, MDB_val *v)
{
	unsigned char key[16];
	put_be64(key, run);
	put_be64(key + 8, seq);
	*k = (MDB_val){16, key};
	int rc = mdb_cursor_get(cur, k, v, MDB_SET_RANGE);
	int here = rc == 0 && of_run(k, run);
	if (here && key_seq(k) == seq)
		return 0;
	MDB_val pk, pv; /* the entry before: a block that holds seq? */
	rc = rc == 0 ? mdb_cursor_get(cur, &pk, &pv, MDB_PREV)
	             : mdb_cursor_get(cur, &pk, &pv, MDB_LAST);
	if (rc == 0 && of_run(&pk, run) && entry_last(s, &pk, &pv) >= seq) {
		*k = pk;
		*v = pv;
		return 0;
	}
	if (!here)
		return RT_E_NOTFOUND;
	*k = (MDB_val){16, key};
	return mdb_cursor_get(cur, k, v, MDB_SET_RANGE) ? RT_E_NOTFOUND : 0;
}

/* Whether a replay of seqs from `from` may start unpacking at this entry:
 * it has a record that needs no predecessor at or before from (or its
 * first, when the whole entry comes after), or it is damaged (the caller
 * then hears of what cannot be read). */
static int starts_replay(struct rt_store *s, const MDB_val *k, const MDB_val *v, uint64_t from)
{
	struct rt_stored_it it;
	if (store_value_check(s, v) ||
	    rt_stored_begin(&it, get_be64(k->mv_data), key_seq(k), v->mv_data, v->mv_size))
		return 1;
	uint64_t limit = from > key_seq(k) ? from : key_seq(k), seq;
	const void *rec;
	size_t len;
	int rc;
	while ((rc = rt_stored_next(&it, &seq, &rec, &len)) == 1 && seq <= limit)
		if (!rt_pack_is_packed(rec, len) || rt_pack_is_full(rec, len))
			return 1;
	return rc < 0;
}

/* Position cur (k, v) at the entry a replay of seq `from` must start
 * unpacking at: one with a full record at or before it. */
static int find_start(struct rt_store *s, MDB_cursor *cur, uint64_t run, uint64_t from, MDB_val *k,
                      MDB_val *v)
{
	if (seek_covering(s, cur, run, from, k, v))
		return RT_E_NOTFOUND;
	uint64_t found = key_seq(k);
	/* a delta needs its predecessors back to a full record (a few dozen) */
	for (int back = 0; back < 4 * RT_PACK_FULL_EVERY; back++) {
		if (starts_replay(s, k, v, from))
			return 0;
		MDB_val pk, pv;
		if (mdb_cursor_get(cur, &pk, &pv, MDB_PREV) || !of_run(&pk, run) ||
		    entry_last(s, &pk, &pv) + 1 != key_seq(k))
			break;
		*k = pk;
		*v = pv;
	}
	/* no full record before it (damage): start where asked, the caller
	 * hears about the records that cannot be unpacked */
	return seek_covering(s, cur, run, found, k, v);
}

/*
 * A scan's state: the run's previous record as unpacked, and the lowest
 * seq not yet visited (samples come out once each, in seq order, however
 * the entries hold them).
 */
struct scan_state {
	struct rt_pack_state st;
	uint64_t run, from, to, next;
	int done;   /* past `to` */
	unsigned n; /* samples visited in this read transaction */
	rt_store_sample_cb cb;
	void *ctx;
};

/* Note seq as visited; 1 when it is past the range or already visited. */
static int take_seq(struct scan_state *x, uint64_t seq)
{
	if (seq < x->next)
		return 1;
	if (seq > x->to) {
		x->done = 1;
		return 1;
	}
	x->next = seq + 1;
	x->done |= seq == UINT64_MAX;
	x->n++;
	return 0;
}

/* A sample the caller hears of but cannot read (no bytes). */
static int unreadable(struct scan_state *x, uint64_t seq)
{
	static const uint64_t none;
	x->st.valid = 0;
	return seq < x->from ? 0 : UNGUARDED(x->cb(x->ctx, seq, &none, 0));
}

/*
 * What a stored sample is to a reader: a packed record (unpacked against
 * the one before it), a record of rt 0.1 (layout 1, upgraded), or bytes
 * given to the caller as they are (a record of a newer rt, or damage: the
 * caller's rt_record_decode says which). Samples before `from` only
 * rebuild the state.
 */
static int visit(struct rt_store *s, struct scan_state *x, uint64_t seq, const void *rec,
                 size_t len)
{
	const void *in = rec, *out = NULL;
	size_t olen = 0;
	if (!rt_pack_is_packed(rec, len) && ((uintptr_t)rec & 7) &&
	    !(in = aligned_copy(s, rec, len)))
		return -ENOMEM; /* (a raw record is read in place: aligned) */
	if (rt_unpack_stored(&x->st, seq, in, len) == 0) {
		out = x->st.buf;
		olen = x->st.rec.h->size;
	}
	if (seq < x->from)
		return 0;
	if (!out) {
		x->st.valid = 0;
		if (in == rec && !(in = aligned_copy(s, rec, len)))
			return -ENOMEM;
		out = in;
		olen = len;
	}
	return UNGUARDED(x->cb(x->ctx, seq, out, olen));
}

/* Visit the samples one entry holds (its key's seq, its value). */
static int scan_entry(struct rt_store *s, struct scan_state *x, uint64_t key, const MDB_val *v)
{
	if (store_value_check(s, v)) /* a damaged size: no bytes, the scan goes on */
		return take_seq(x, key) ? 0 : unreadable(x, key);
	struct rt_stored_it it;
	uint64_t seq = key;
	const void *rec;
	size_t len;
	int rc = rt_stored_begin(&it, x->run, key, v->mv_data, v->mv_size);
	while (rc == 0 && (rc = rt_stored_next(&it, &seq, &rec, &len)) == 1) {
		rc = 0;
		if (take_seq(x, seq))
			continue;
		if ((rc = visit(s, x, seq, rec, len)))
			return rc;
	}
	if (rc == RT_E_CORRUPT && !take_seq(x, seq)) /* the rest of a block */
		return unreadable(x, seq);
	return 0;
}

/* Visit run's entries from where cur stands (k, v) until the range is
 * done or this transaction has given its share. */
static int scan_entries(struct rt_store *s, struct scan_state *x, MDB_cursor *cur, MDB_val *k,
                        MDB_val *v)
{
	x->n = 0;
	for (;;) {
		int rc = scan_entry(s, x, key_seq(k), v);
		if (rc || x->done || x->n >= SCAN_TXN_BATCH)
			return rc;
		if (mdb_cursor_get(cur, k, v, MDB_NEXT) || !of_run(k, x->run)) {
			x->done = 1;
			return 0;
		}
	}
}

static __attribute__((noinline)) int store_scan_impl(struct rt_store *s, uint64_t run,
                                                     uint64_t from, uint64_t to,
                                                     rt_store_sample_cb cb, void *ctx)
{
	if (!s->have_dbis)
		return RT_E_NOTFOUND;
	struct scan_state x = {.run = run, .from = from, .to = to, .cb = cb, .ctx = ctx};
	int ret = rt_pack_state_init(&x.st);
	if (ret)
		return ret;
	store_own(x.st.buf);
	for (int first = 1; !ret && !x.done && (first ? from <= to : x.next <= to); first = 0) {
		MDB_txn *txn;
		MDB_cursor *cur;
		if ((ret = store_txn_begin(s, MDB_RDONLY, &txn)))
			break;
		if ((ret = mdb_cursor_open(txn, s->samples, &cur))) {
			mdb_txn_abort(txn);
			ret = store_lmdb_fail(s, "cursor", ret);
			break;
		}
		MDB_val k, v;
		if ((first ? find_start(s, cur, run, from, &k, &v)
		           : seek_covering(s, cur, run, x.next, &k, &v)) == 0)
			ret = scan_entries(s, &x, cur, &k, &v);
		else
			x.done = 1;
		mdb_cursor_close(cur);
		mdb_txn_abort(txn); /* short transactions: let the writer reuse pages */
	}
	store_disown(x.st.buf);
	rt_pack_state_free(&x.st);
	return ret;
}

struct one_ctx {
	void *buf;
	size_t cap, len;
	int found;
};

static int one_cb(void *vctx, uint64_t seq, const void *rec, size_t len)
{
	(void)seq;
	struct one_ctx *c = vctx;
	if (len > c->cap)
		return -EMSGSIZE;
	memcpy(c->buf, rec, len);
	c->len = len;
	c->found = 1;
	return 1;
}

/* Whether the entry at k, v holds seq, its bytes unread. */
static int entry_holds(struct rt_store *s, const MDB_val *k, const MDB_val *v, uint64_t seq)
{
	struct rt_stored_it it;
	if (key_seq(k) == seq)
		return 1;
	if (store_value_check(s, v) ||
	    rt_stored_begin(&it, get_be64(k->mv_data), key_seq(k), v->mv_data, v->mv_size))
		return 0;
	uint64_t at;
	const void *rec;
	size_t len;
	while (rt_stored_next(&it, &at, &rec, &len) == 1 && at <= seq)
		if (at == seq)
			return 1;
	return 0;
}

/* Whether (run, seq) is in the samples database, its bytes unread. */
static __attribute__((noinline)) int store_has_sample_impl(struct rt_store *s, uint64_t run,
                                                           uint64_t seq)
{
	if (!s->have_dbis)
		return 0;
	MDB_txn *txn;
	MDB_cursor *cur;
	int rc = store_txn_begin(s, MDB_RDONLY, &txn);
	if (rc)
		return rc;
	if ((rc = mdb_cursor_open(txn, s->samples, &cur))) {
		mdb_txn_abort(txn);
		return store_lmdb_fail(s, "cursor", rc);
	}
	MDB_val k, v;
	int has = seek_covering(s, cur, run, seq, &k, &v) == 0 && entry_holds(s, &k, &v, seq);
	mdb_cursor_close(cur);
	mdb_txn_abort(txn);
	return has;
}

static __attribute__((noinline)) int store_get_sample_impl(struct rt_store *s, uint64_t run,
                                                           uint64_t seq, void *buf, size_t cap,
                                                           size_t *len)
{
	struct one_ctx c = {buf, cap, 0, 0};
	int rc = rt_store_scan(s, run, seq, seq, one_cb, &c);
	if (rc < 0)
		return rc;
	if (!c.found)
		return RT_E_NOTFOUND;
	*len = c.len;
	return 0;
}

static __attribute__((noinline)) int store_seq_bounds_impl(struct rt_store *s, uint64_t run,
                                                           uint64_t *first, uint64_t *last)
{
	if (!s->have_dbis)
		return RT_E_NOTFOUND;
	MDB_txn *txn;
	MDB_cursor *cur;
	int rc = store_txn_begin(s, MDB_RDONLY, &txn);
	if (rc)
		return rc;
	if ((rc = mdb_cursor_open(txn, s->samples, &cur))) {
		mdb_txn_abort(txn);
		return store_lmdb_fail(s, "cursor", rc);
	}
	unsigned char key[16];
	put_be64(key, run);
	put_be64(key + 8, 0);
	MDB_val k = {16, key}, v;
	int ret = RT_E_NOTFOUND;
	rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
	if (rc == 0 && of_run(&k, run)) {
		*first = key_seq(&k); /* (a block's first record is at its key) */
		/* last: position after the run, step back */
		put_be64(key, run + 1);
		k = (MDB_val){16, key};
		rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
		rc = rc == 0 ? mdb_cursor_get(cur, &k, &v, MDB_PREV)
		             : mdb_cursor_get(cur, &k, &v, MDB_LAST);
		if (rc == 0 && of_run(&k, run)) {
			*last = entry_last(s, &k, &v);
			ret = 0;
		}
	}
	mdb_cursor_close(cur);
	mdb_txn_abort(txn);
	return ret;
}

static __attribute__((noinline)) int store_seq_at_time_impl(struct rt_store *s, uint64_t run,
                                                            uint64_t wall_ns, uint64_t *seq)
{
	uint64_t lo, hi;
	int rc = rt_store_seq_bounds(s, run, &lo, &hi);
	if (rc)
		return rc;
	uint64_t first = lo, last = hi;
	hi = last + 1;
	size_t cap = rt_record_max_size();
	void *buf = NULL;
	if (posix_memalign(&buf, 64, cap))
		return -ENOMEM;
	/* find the first seq in [first, last] with wall >= wall_ns */
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		size_t len;
		struct rt_record r;
		rc = rt_store_get_sample(s, run, mid, buf, cap, &len);
		if (rc == RT_E_NOTFOUND) { /* hole: treat as later */
			hi = mid;
			continue;
		}
		if (rc || rt_record_decode(buf, len, &r)) {
			free(buf);
			return rc ? rc : RT_E_CORRUPT;
		}
		if (r.h->wall_ns < wall_ns)
			lo = mid + 1;
		else
			hi = mid;
	}
	free(buf);
	if (lo > last)
		return RT_E_NOTFOUND;
	*seq = lo < first ? first : lo;
	return 0;
}

static __attribute__((noinline)) int store_list_runs_impl(struct rt_store *s, rt_store_run_cb cb,
                                                          void *ctx)
{
	if (!s->have_dbis)
		return 0;
	/* Copy ids first so callbacks may open their own transactions freely. */
	uint64_t *ids = NULL;
	size_t n = 0, cap = 0;
	MDB_txn *txn;
	MDB_cursor *cur;
	int rc = store_txn_begin(s, MDB_RDONLY, &txn);
	if (rc)
		return rc;
	if ((rc = mdb_cursor_open(txn, s->runs, &cur))) {
		mdb_txn_abort(txn);
		return store_lmdb_fail(s, "cursor", rc);
	}
	MDB_val k, v;
	MDB_stat st;
	size_t entries = mdb_stat(txn, s->runs, &st) == 0 ? st.ms_entries : 0, seen = 0;
	for (rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); rc == 0;
	     rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
		seen++;
		if (k.mv_size != 8)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			store_disown(ids);
			uint64_t *p = realloc(ids, cap * sizeof(*ids));
			store_own(p);
			if (!p) {
				free(ids);
				mdb_cursor_close(cur);
				mdb_txn_abort(txn);
				return -ENOMEM;
			}
			ids = p;
		}
		ids[n++] = get_be64(k.mv_data);
	}
	mdb_cursor_close(cur);
	mdb_txn_abort(txn);
	/* a damaged page (zeroed: read as an empty leaf) hides the runs under
	 * it; the database's own count of entries says so */
	int whole = (rc == MDB_NOTFOUND || rc == 0) && seen >= entries;
	int ret = 0;
	size_t unread = 0;
	for (size_t i = 0; i < n && !ret; i++) {
		char *meta;
		size_t len;
		int grc = rt_store_get_meta(s, ids[i], &meta, &len);
		unread += grc == RT_E_CORRUPT;
		if (grc)
			continue;
		ret = UNGUARDED(cb(ctx, ids[i], meta, len));
		free(meta);
	}
	store_disown(ids);
	free(ids);
	if (!ret && (!whole || unread)) {
		/* a run whose metadata is damaged is not left out unsaid */
		size_t all = entries > seen ? entries : seen;
		snprintf(s->err, sizeof(s->err),
		         "its list of runs is damaged: %zu of %zu runs can be read",
		         seen - (unread < seen ? unread : seen), all);
		return RT_E_CORRUPT;
	}
	return ret;
}

int rt_store_get_meta(struct rt_store *s, uint64_t run, char **meta, size_t *len)
{
	return GUARDED_RD(s, store_get_meta_impl(s, run, meta, len));
}

int rt_store_get_inventory(struct rt_store *s, uint64_t run, uint32_t gen, void **buf, size_t *len)
{
	return GUARDED_RD(s, store_get_inventory_impl(s, run, gen, buf, len));
}

int rt_store_scan(struct rt_store *s, uint64_t run, uint64_t from, uint64_t to,
                  rt_store_sample_cb cb, void *ctx)
{
	return GUARDED_RD(s, store_scan_impl(s, run, from, to, cb, ctx));
}

int rt_store_has_sample(struct rt_store *s, uint64_t run, uint64_t seq)
{
	return GUARDED_RD(s, store_has_sample_impl(s, run, seq));
}

int rt_store_get_sample(struct rt_store *s, uint64_t run, uint64_t seq, void *buf, size_t cap,
                        size_t *len)
{
	return GUARDED_RD(s, store_get_sample_impl(s, run, seq, buf, cap, len));
}

int rt_store_seq_bounds(struct rt_store *s, uint64_t run, uint64_t *first, uint64_t *last)
{
	return GUARDED_RD(s, store_seq_bounds_impl(s, run, first, last));
}

int rt_store_seq_at_time(struct rt_store *s, uint64_t run, uint64_t wall_ns, uint64_t *seq)
{
	return GUARDED_RD(s, store_seq_at_time_impl(s, run, wall_ns, seq));
}

int rt_store_list_runs(struct rt_store *s, rt_store_run_cb cb, void *ctx)
{
	return GUARDED_RD(s, store_list_runs_impl(s, cb, ctx));
}
