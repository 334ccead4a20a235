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

static void *aligned_copy(struct rt_store *s, const MDB_val *v)
{
	if (v->mv_size > s->scratch_cap) {
		size_t cap = (v->mv_size + 4095) & ~(size_t)4095;
		void *p = NULL;
		if (posix_memalign(&p, 64, cap))
			return NULL;
		free(s->scratch);
		s->scratch = p;
		s->scratch_cap = cap;
	}
	memcpy(s->scratch, v->mv_data, v->mv_size);
	return s->scratch;
}

/*
 * What a stored value is to a reader: a packed record (unpacked against the
 * one before it), a record of rt 0.1 (layout 1, upgraded), or bytes given
 * to the caller as they are (a record of a newer rt, or damage: the
 * caller's rt_record_decode says which).
 */
struct scan_state {
	struct rt_pack_state st;
	uint64_t run;
};

static int visit(struct rt_store *s, struct scan_state *x, uint64_t seq, const MDB_val *v,
                 rt_store_sample_cb cb, void *ctx, int quiet)
{
	const void *out = NULL;
	size_t len = 0;
	if (store_value_check(s, v)) {
		/* a damaged size: the caller hears of a record it cannot read
		 * (no bytes), and the scan goes on */
		static const uint64_t none;
		x->st.valid = 0;
		return quiet ? 0 : UNGUARDED(cb(ctx, seq, &none, 0));
	}
	if (rt_unpack_stored(&x->st, seq, v->mv_data, v->mv_size) == 0) {
		out = x->st.buf;
		len = x->st.rec.h->size;
	}
	if (quiet)
		return 0;
	if (!out) {
		x->st.valid = 0;
		if (!(out = aligned_copy(s, v)))
			return -ENOMEM;
		len = v->mv_size;
	}
	return UNGUARDED(cb(ctx, seq, out, len));
}

/* Position cur at the record a replay of seq `from` must start unpacking
 * at: a full one at or before it. */
static int find_start(struct rt_store *s, MDB_cursor *cur, uint64_t run, uint64_t from)
{
	uint64_t at;
	unsigned char key[16];
	put_be64(key, run);
	put_be64(key + 8, from);
	MDB_val k = {16, key}, v;
	int rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
	if (rc || k.mv_size != 16 || get_be64(k.mv_data) != run)
		return RT_E_NOTFOUND;
	at = get_be64((unsigned char *)k.mv_data + 8);
	/* a delta needs its predecessors back to a full record (a few dozen) */
	for (int back = 0; back < 4 * RT_PACK_FULL_EVERY; back++) {
		if (store_value_check(s, &v) || !rt_pack_is_packed(v.mv_data, v.mv_size) ||
		    rt_pack_is_full(v.mv_data, v.mv_size))
			return 0;
		MDB_val pk, pv;
		if (mdb_cursor_get(cur, &pk, &pv, MDB_PREV) || pk.mv_size != 16 ||
		    get_be64(pk.mv_data) != run ||
		    get_be64((unsigned char *)pk.mv_data + 8) != at - 1)
			break;
		v = pv;
		at--;
	}
	/* no full record before it (damage): start where asked, the caller
	 * hears about the records that cannot be unpacked */
	put_be64(key + 8, from);
	k.mv_data = key;
	k.mv_size = 16;
	mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
	return 0;
}

static __attribute__((noinline)) int store_scan_impl(struct rt_store *s, uint64_t run,
                                                     uint64_t from, uint64_t to,
                                                     rt_store_sample_cb cb, void *ctx)
{
	if (!s->have_dbis)
		return RT_E_NOTFOUND;
	struct scan_state x = {.run = run};
	int ret = rt_pack_state_init(&x.st);
	if (ret)
		return ret;
	store_own(x.st.buf);
	uint64_t next = from;
	int first = 1;
	while (next <= to) {
		MDB_txn *txn;
		MDB_cursor *cur;
		int rc = store_txn_begin(s, MDB_RDONLY, &txn);
		if (rc) {
			ret = rc;
			break;
		}
		if ((rc = mdb_cursor_open(txn, s->samples, &cur))) {
			mdb_txn_abort(txn);
			ret = store_lmdb_fail(s, "cursor", rc);
			break;
		}
		unsigned char key[16];
		MDB_val k = {16, key}, v;
		MDB_cursor_op op = MDB_GET_CURRENT;
		if (first) {
			first = 0;
			if (find_start(s, cur, run, from)) {
				mdb_cursor_close(cur);
				mdb_txn_abort(txn);
				break;
			}
		} else {
			put_be64(key, run);
			put_be64(key + 8, next);
			op = MDB_SET_RANGE;
		}
		int done = 0, n = 0;
		while (n < SCAN_TXN_BATCH) {
			rc = mdb_cursor_get(cur, &k, &v, op);
			op = MDB_NEXT;
			if (rc || k.mv_size != 16 || get_be64(k.mv_data) != run) {
				done = 1;
				break;
			}
			uint64_t seq = get_be64((unsigned char *)k.mv_data + 8);
			if (seq > to) {
				done = 1;
				break;
			}
			next = seq + 1;
			n++;
			/* the records before `from` only rebuild the state */
			if ((ret = visit(s, &x, seq, &v, cb, ctx, seq < from)))
				break;
			if (seq == UINT64_MAX) {
				done = 1;
				break;
			}
		}
		mdb_cursor_close(cur);
		mdb_txn_abort(txn); /* short transactions: let the writer reuse pages */
		if (ret || done)
			break;
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

/* Whether (run, seq) is in the samples database, its bytes unread. */
static __attribute__((noinline)) int store_has_sample_impl(struct rt_store *s, uint64_t run,
                                                           uint64_t seq)
{
	if (!s->have_dbis)
		return 0;
	unsigned char key[16];
	put_be64(key, run);
	put_be64(key + 8, seq);
	MDB_txn *txn;
	MDB_val k = {16, key}, v;
	int rc = store_txn_begin(s, MDB_RDONLY, &txn);
	if (rc)
		return rc;
	rc = mdb_get(txn, s->samples, &k, &v);
	mdb_txn_abort(txn);
	return rc == 0 ? 1 : rc == MDB_NOTFOUND ? 0 : store_lmdb_fail(s, "get", rc);
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
	if (rc == 0 && k.mv_size == 16 && get_be64(k.mv_data) == run) {
		*first = get_be64((unsigned char *)k.mv_data + 8);
		/* last: position after the run, step back */
		put_be64(key, run + 1);
		put_be64(key + 8, 0);
		k.mv_data = key;
		k.mv_size = 16;
		rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
		rc = rc == 0 ? mdb_cursor_get(cur, &k, &v, MDB_PREV)
		             : mdb_cursor_get(cur, &k, &v, MDB_LAST);
		if (rc == 0 && k.mv_size == 16 && get_be64(k.mv_data) == run) {
			*last = get_be64((unsigned char *)k.mv_data + 8);
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
