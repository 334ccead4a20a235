/*
 * store_cap.c - the store's size: deleting runs, the cap that
 * deletes the oldest, the recorder's resident memory of its map, and
 * compaction.
 *
 * A delete runs in batches (DELETE_TXN_BATCH) and is marked in the info
 * database first, so one cut short is finished by the next writer.
 * Compaction copies without free pages and renames over data.mdb, only
 * while nothing else has the store open.
 */
#define _GNU_SOURCE
#include "store_int.h"

void rt_store_set_cap(struct rt_store *s, uint64_t cap_bytes)
{
	s->cap = cap_bytes;
}

struct del_ctx {
	uint64_t run;
	int done;
	int batch; /* samples per transaction (0: DELETE_TXN_BATCH) */
};

/* Delete up to DELETE_TXN_BATCH samples (then inventories, then the run). */
static int do_delete(struct rt_store *s, MDB_txn *txn, void *vctx)
{
	struct del_ctx *c = vctx;
	MDB_cursor *cur;
	unsigned char key[16] = {0};
	put_be64(key, c->run);
	MDB_dbi dbis[2] = {s->samples, s->inv};
	size_t klen[2] = {16, 12};
	int budget = c->batch ? c->batch : DELETE_TXN_BATCH;
	for (int d = 0; d < 2; d++) {
		int rc = mdb_cursor_open(txn, dbis[d], &cur);
		if (rc)
			return rc;
		MDB_val k = {klen[d], key}, v;
		rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
		while (rc == 0 && k.mv_size >= 8 && get_be64(k.mv_data) == c->run) {
			if (budget-- <= 0) {
				mdb_cursor_close(cur);
				return 0;
			}
			if ((rc = mdb_cursor_del(cur, 0)))
				break;
			rc = mdb_cursor_get(cur, &k, &v, MDB_GET_CURRENT);
			if (rc == MDB_NOTFOUND || rc == EINVAL)
				rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT);
		}
		mdb_cursor_close(cur);
		if (rc && rc != MDB_NOTFOUND)
			return rc;
	}
	MDB_val k = {8, key};
	int rc = mdb_del(txn, s->runs, &k, NULL);
	if (rc && rc != MDB_NOTFOUND)
		return rc;
	c->done = 1;
	return 0;
}

static __attribute__((noinline)) int store_delete_run_impl(struct rt_store *s, uint64_t run)
{
	struct del_ctx c = {run, 0, 0};
	while (!c.done) {
		int rc = store_with_write(s, do_delete, &c);
		if (rc)
			return rc;
	}
	return 0;
}

static __attribute__((noinline)) int store_used_bytes_impl(struct rt_store *s, uint64_t *bytes)
{
	MDB_txn *txn;
	int rc = store_txn_begin(s, MDB_RDONLY, &txn);
	if (rc)
		return rc;
	MDB_stat st;
	uint64_t pages = 0, psize = 4096;
	MDB_dbi dbis[4] = {0 /* main */, s->runs, s->samples, s->inv};
	for (int i = 0; i < (s->have_dbis ? 4 : 1); i++) {
		if (mdb_stat(txn, dbis[i], &st) == 0) {
			pages += st.ms_branch_pages + st.ms_leaf_pages + st.ms_overflow_pages;
			psize = st.ms_psize;
		}
	}
	mdb_txn_abort(txn);
	*bytes = (pages + 2) * psize;
	return 0;
}

struct oldest_ctx {
	uint64_t keep, victim;
};

static int oldest_cb(void *vctx, uint64_t run, const char *meta, size_t len)
{
	struct oldest_ctx *c = vctx;
	struct rt_run_fields f;
	if (run == c->keep ||
	    (rt_runmeta_read(meta, len, &f) == 0 && rt_run_status_of(f.status) == RT_RUN_RUNNING))
		return 0;
	c->victim = run;
	return 1;
}

/*
 * The run whose samples are being deleted for the cap, in `info`: its
 * metadata goes first (it leaves every listing at once), then its samples
 * a batch at a time, resumed by whoever enforces the cap next.
 */
static const char deleting_key[] = "deleting";

static int do_mark_deleting(struct rt_store *s, MDB_txn *txn, void *vctx)
{
	uint64_t run = *(uint64_t *)vctx;
	unsigned char key[8];
	MDB_dbi info;
	int rc = mdb_dbi_open(txn, "info", MDB_CREATE, &info);
	if (rc)
		return rc;
	put_be64(key, run);
	MDB_val k = {sizeof(deleting_key) - 1, (void *)deleting_key};
	MDB_val v = {8, key};
	if (run) {
		MDB_val rk = {8, key};
		if ((rc = mdb_del(txn, s->runs, &rk, NULL)) && rc != MDB_NOTFOUND)
			return rc;
		return mdb_put(txn, info, &k, &v, 0);
	}
	rc = mdb_del(txn, info, &k, NULL);
	return rc == MDB_NOTFOUND ? 0 : rc;
}

static int get_deleting(struct rt_store *s, uint64_t *run)
{
	MDB_txn *txn;
	MDB_dbi info;
	MDB_val k = {sizeof(deleting_key) - 1, (void *)deleting_key}, v;
	int rc = store_txn_begin(s, MDB_RDONLY, &txn);
	if (rc)
		return rc;
	rc = mdb_dbi_open(txn, "info", 0, &info);
	if (rc == 0)
		rc = mdb_get(txn, info, &k, &v);
	int ok = rc == 0 && v.mv_size == 8 && store_value_check(s, &v) == 0;
	if (ok)
		*run = get_be64(v.mv_data);
	mdb_txn_abort(txn);
	return ok ? 0 : RT_E_NOTFOUND;
}

static __attribute__((noinline)) int store_enforce_cap_impl(struct rt_store *s, uint64_t keep,
                                                            unsigned *deleted)
{
	*deleted = 0;
	s->cap_more = 0;
	if (!s->cap)
		return 0;
	uint64_t t0 = rt_clock_mono_real();
	for (;;) {
		int rc;
		if (s->cap_budget_ns && rt_clock_mono_real() - t0 >= s->cap_budget_ns) {
			s->cap_more = 1; /* go on at the next call */
			return 0;
		}
		uint64_t run = 0;
		if (get_deleting(s, &run) == 0) {
			struct del_ctx d = {run, 0, s->cap_budget_ns ? 2000 : 0};
			if ((rc = store_with_write(s, do_delete, &d)))
				return rc;
			if (d.done) {
				uint64_t none = 0;
				if ((rc = store_with_write(s, do_mark_deleting, &none)))
					return rc;
				(*deleted)++;
			}
			continue;
		}
		uint64_t used;
		if ((rc = rt_store_used_bytes(s, &used)))
			return rc;
		if (used <= s->cap)
			return 0;
		struct oldest_ctx c = {keep, 0};
		rt_store_list_runs(s, oldest_cb, &c);
		if (!c.victim)
			return 0; /* nothing we may delete */
		if ((rc = store_with_write(s, do_mark_deleting, &c.victim)))
			return rc;
	}
}

void rt_store_set_cap_budget(struct rt_store *s, uint64_t ns)
{
	s->cap_budget_ns = ns;
}

int rt_store_cap_more(const struct rt_store *s)
{
	return s->cap_more;
}

void rt_store_trim_rss(struct rt_store *s)
{
	MDB_envinfo info;
	if (mdb_env_info(s->env, &info))
		return;
	if (info.me_mapsize != s->map_for && store_find_map(s))
		return;
	if (s->map_addr)
		madvise(s->map_addr, s->map_len, MADV_DONTNEED);
}

/*
 * Compaction: LMDB keeps its file size when runs are deleted (freed pages
 * are reused, never returned). mdb_env_copy2 with MDB_CP_COMPACT writes a
 * copy without the free pages; it replaces data.mdb by rename, which is
 * atomic. Only while nothing else has the store open: a recorder or reader
 * keeps its mapping of the old file, and what it wrote there would be lost.
 */
static pid_t lmdb_user(const char *at)
{
	char p[4200];
	snprintf(p, sizeof(p), "%s/lock.mdb", at);
	/* raw: the store's held directory (/proc/self/fd/N), never through a link */
	int fd = open(p, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return 0;
	/* every process with the environment open holds a read lock on the lock
	 * file's first byte (LMDB); ask who would block a write lock */
	struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1};
	pid_t pid = fcntl(fd, F_GETLK, &fl) == 0 && fl.l_type != F_UNLCK ? fl.l_pid : 0;
	close(fd);
	return pid;
}

/* Remove what an earlier compact left in the held directory dfd. */
static void remove_leftover(int dfd)
{
	/* raw: in the store's held directory, never through a link */
	int tfd = openat(dfd, ".compact", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (tfd >= 0) {
		/* raw: in the store's held directory (compact: only a store of ours) */
		unlinkat(tfd, "data.mdb", 0);
		close(tfd);
	}
	/* raw: in the store's held directory (compact: only a store of ours) */
	unlinkat(dfd, ".compact", AT_REMOVEDIR);
}

/* The compacted copy of s, written to .compact/data.mdb in the store's
 * directory (held as dfd, reached as at), private and synced. */
static int copy_compacted(struct rt_store *s, int dfd, const char *at)
{
	char tmp[4200];
	remove_leftover(dfd);
	/* raw: in the store's held directory (compact: only a store of ours) */
	if (mkdirat(dfd, ".compact", 0700) < 0)
		return -errno;
	snprintf(tmp, sizeof(tmp), "%s/.compact", at);
	int rc = mdb_env_copy2(s->env, tmp, MDB_CP_COMPACT);
	if (rc)
		return store_lmdb_fail(s, "compact", rc);
	/* raw: in the store's held directory, never through a link */
	int fd = openat(dfd, ".compact/data.mdb", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fchmod(fd, 0600) < 0 || fsync(fd) < 0) /* private, as made */
		rc = -errno;
	if (fd >= 0)
		close(fd);
	return rc;
}

/* Put the copy in place of data.mdb (atomic), and make the rename itself
 * survive a power cut. */
static int replace_data(int dfd, uint64_t *after)
{
	struct stat st;
	/* raw: in the store's held directory (compact: only a store of ours) */
	if (renameat(dfd, ".compact/data.mdb", dfd, "data.mdb") < 0)
		return -errno;
	/* raw: the store's held directory itself */
	int sfd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (sfd >= 0) {
		fsync(sfd);
		close(sfd);
	}
	if (fstatat(dfd, "data.mdb", &st, AT_SYMLINK_NOFOLLOW) == 0)
		*after = (uint64_t)st.st_size;
	return 0;
}

/* Compact the store in the directory held as dfd (checked: this user's,
 * no one else's to write), working only relative to it: a name swapped on
 * the way to dir meanwhile leads nowhere. */
static int compact_held(const char *dir, int dfd, uint64_t *before, uint64_t *after, long *user)
{
	char at[64];
	struct stat st;
	snprintf(at, sizeof(at), "/proc/self/fd/%d", dfd);
	if (access(at, F_OK) < 0)
		return -ENOSYS; /* no /proc: LMDB could only be handed the name */
	if (fstatat(dfd, "data.mdb", &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	*before = (uint64_t)st.st_size;
	int lk = store_writers_lock(at, LOCK_EX);
	if (lk < 0)
		return lk == -EBUSY ? RT_E_BUSY : lk;
	struct rt_store *s = NULL;
	int rc =
	    (*user = lmdb_user(at)) ? RT_E_BUSY : store_open_held(dir, dfd, RT_STORE_RDONLY, &s);
	/* the copy follows every page: a damaged one would be copied wrong
	 * over the original */
	if (rc == 0 && (rc = rt_store_check_pages(s)) == 0)
		rc = copy_compacted(s, dfd, at);
	rt_store_close(s);
	if (rc == 0)
		rc = replace_data(dfd, after);
	remove_leftover(dfd);
	close(lk);
	return rc;
}

int rt_store_compact(const char *dir, uint64_t *before, uint64_t *after, long *user)
{
	*user = 0;
	/* only a store of this user's, reached through no one else's link */
	size_t cap;
	char *why = store_refusal_buf(&cap);
	int dfd = rt_safe_dir_open(dir, 0, why, cap);
	if (dfd < 0)
		return dfd;
	int rc = rt_safe_check(dfd, dir, S_IFDIR, why, cap);
	if (rc == 0)
		rc = compact_held(dir, dfd, before, after, user);
	close(dfd);
	return rc;
}

int rt_store_delete_run(struct rt_store *s, uint64_t run)
{
	return GUARDED(s, store_delete_run_impl(s, run));
}

int rt_store_used_bytes(struct rt_store *s, uint64_t *bytes)
{
	return GUARDED_RD(s, store_used_bytes_impl(s, bytes));
}

int rt_store_enforce_cap(struct rt_store *s, uint64_t keep, unsigned *deleted)
{
	*deleted = 0;
	if (s->pages_bad)
		return RT_E_CORRUPT;
	if (s->cap && !s->pages_checked) {
		/* the first deletion of this handle looks at every page first:
		 * it changes pages this process did not write */
		uint64_t used = 0, run = 0;
		int busy = GUARDED_RD(s, get_deleting(s, &run)) == 0;
		if (busy || (rt_store_used_bytes(s, &used) == 0 && used > s->cap)) {
			int rc = rt_store_check_pages(s);
			if (rc) {
				s->pages_bad = 1;
				return rc;
			}
			s->pages_checked = 1;
		}
	}
	return GUARDED(s, store_enforce_cap_impl(s, keep, deleted));
}
