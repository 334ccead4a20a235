/*
 * store_check.c - the store checked: every run's metadata and the
 * ends of its samples (rt_store_check), every page the newest snapshot
 * reaches (rt_lmdb_check, rt_store_check_pages), and the check a writer
 * makes before it appends to a store it did not create.
 */
#define _GNU_SOURCE
#include "store_int.h"

/* rt_store_check: every run's metadata and the ends of its samples */
struct check_ctx {
	struct rt_store *s;
	int rc;
};

static int check_run(void *vctx, uint64_t run, const char *meta, size_t len)
{
	struct check_ctx *c = vctx;
	uint64_t first = 0, last = 0;
	int rc = rt_store_seq_bounds(c->s, run, &first, &last);
	if (rc == RT_E_CORRUPT || rc == RT_E_STORE)
		c->rc = rc;
	/* a finished run that names its last sample must still have it */
	struct rt_run_fields f;
	if (!c->rc && rt_runmeta_read(meta, len, &f) == 0 && f.has_last_seq &&
	    !f.samples_not_stored && (rc || last != f.last_seq))
		c->rc = RT_E_CORRUPT;
	return c->rc;
}

int rt_store_check(struct rt_store *s)
{
	struct check_ctx c = {s, 0};
	int rc = rt_store_list_runs(s, check_run, &c);
	if (rc == 0)
		rc = c.rc;
	MDB_stat st;
	for (int i = 0; rc == 0 && s->have_dbis && i < 3; i++) {
		volatile MDB_dbi d = i == 0 ? s->runs : i == 1 ? s->samples : s->inv;
		MDB_txn *txn;
		if ((rc = store_txn_begin(s, MDB_RDONLY, &txn)))
			break;
		int r = GUARDED_RD(s, mdb_stat(txn, d, &st));
		if (!s->poisoned)
			mdb_txn_abort(txn);
		if (r)
			rc = r == RT_E_CORRUPT ? r : store_lmdb_fail(s, "check", r);
	}
	if ((rc == RT_E_STORE || rc == RT_E_CORRUPT) && !s->err[0])
		snprintf(s->err, sizeof(s->err),
		         "a run's metadata or the ends of its samples cannot be read");
	return rc == RT_E_STORE ? RT_E_CORRUPT : rc;
}

int rt_store_check_pages(struct rt_store *s)
{
	int rc = rt_store_check(s);
	if (rc)
		return rc;
	return store_check_lmdb_pages(s);
}

/* Every page the newest snapshot reaches (rt_lmdb_check). */
int store_check_lmdb_pages(struct rt_store *s)
{
	int rc, fd;
	if (mdb_env_get_fd(s->env, &fd))
		return store_lmdb_fail(s, "check", EINVAL);
	/* the snapshot's meta page is rewritten two commits later: a writer
	 * that commits twice meanwhile costs a try */
	for (int tries = 0; tries < 8; tries++) {
		MDB_txn *txn;
		if ((rc = store_txn_begin(s, MDB_RDONLY, &txn)))
			return rc;
		char why[200];
		rc = rt_lmdb_check(fd, (uint64_t)mdb_txn_id(txn), why, sizeof(why));
		mdb_txn_abort(txn);
		if (rc == 0)
			return 0;
		if (strncmp(why, "no meta page holds", 18) != 0) {
			snprintf(s->err, sizeof(s->err), "%s", why);
			return RT_E_CORRUPT;
		}
	}
	snprintf(s->err, sizeof(s->err), "its meta pages name no snapshot a reader can hold");
	return RT_E_CORRUPT;
}

int rt_store_check_for_writer(struct rt_store *s)
{
	char p[4200];
	struct stat st;
	snprintf(p, sizeof(p), "%s/data.mdb", s->at);
	if (stat(p, &st) == 0 && (uint64_t)st.st_size <= RT_STORE_FULL_CHECK_BYTES) {
		int rc = rt_store_check_pages(s);
		s->pages_checked = rc == 0;
		s->pages_bad = rc != 0;
		return rc;
	}
	return rt_store_check(s);
}

int rt_store_is_damaged(const struct rt_store *s)
{
	return s->poisoned;
}
