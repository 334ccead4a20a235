/*
 * store_open.c - opening a store, and trusting it.
 *
 * Where the store is (RT_STORE, XDG_DATA_HOME, HOME), its random id (which
 * names its rings), the directory walked without following another user's
 * link and held open, the files checked before LMDB maps them (a store of
 * another user or one others can write is opened read-only without its
 * lock file), the three databases, and closing.
 */
#define _GNU_SOURCE
#include "rt/safefile.h"
#include "store_int.h"

const char *rt_store_last_error(const struct rt_store *s)
{
	return s->err;
}
const char *rt_store_dir(const struct rt_store *s)
{
	return s->dir;
}

int rt_store_resolve_dir(const char *flag, char *buf, size_t cap)
{
	const char *v;
	int n;
	if (flag && *flag)
		n = snprintf(buf, cap, "%s", flag);
	else if ((v = getenv("RT_STORE")) && *v)
		n = snprintf(buf, cap, "%s", v);
	else if ((v = getenv("XDG_DATA_HOME")) && *v == '/')
		n = snprintf(buf, cap, "%s/resource-tracker", v);
	else if ((v = getenv("HOME")) && *v)
		n = snprintf(buf, cap, "%s/.local/share/resource-tracker", v);
	else
		return -ENOENT;
	return (n < 0 || (size_t)n >= cap || n > RT_STORE_DIR_MAX) ? -ENAMETOOLONG : 0;
}

/*
 * Every store has a random id, made when a recorder first opens it, in the
 * `info` database. Ring file names include it, so a store deleted and made
 * anew (run ids start again at 1) never meets a stale ring of the old one.
 * Stores made before the id existed get one on the next recorder open;
 * until then their rings are named by the directory alone.
 */

static int load_store_id(struct rt_store *s)
{
	static const char key[] = "store_id";
	MDB_txn *txn;
	MDB_dbi info;
	MDB_val k = {sizeof(key) - 1, (void *)key}, v;
	unsigned char id[16];
	char hex[33] = "";
	/* looked up read-only: only a store without an id is written, and
	 * only once its pages check out (as open_dbis) */
	int rc = store_txn_begin(s, MDB_RDONLY, &txn);
	if (rc)
		return rc;
	rc = mdb_dbi_open(txn, "info", 0, &info);
	if (rc == 0)
		rc = mdb_get(txn, info, &k, &v);
	int found = rc == 0 && v.mv_size == sizeof(id) && store_value_check(s, &v) == 0;
	if (found)
		memcpy(id, v.mv_data, sizeof(id));
	mdb_txn_abort(txn);
	if (!found && rc == MDB_NOTFOUND && s->rdwr) {
		if ((rc = store_check_lmdb_pages(s)) || (rc = store_txn_begin(s, 0, &txn)))
			return rc;
		if ((rc = mdb_dbi_open(txn, "info", MDB_CREATE, &info))) {
			mdb_txn_abort(txn);
			return store_lmdb_fail(s, "write the store id", rc);
		}
		if (getrandom(id, sizeof(id), GRND_NONBLOCK) != (ssize_t)sizeof(id)) {
			struct timespec ts; /* no entropy yet (early boot): time and pid */
			clock_gettime(CLOCK_REALTIME, &ts);
			uint64_t a = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20);
			uint64_t b = (uint64_t)getpid() * 0x9e3779b97f4a7c15ull ^ a;
			memcpy(id, &a, 8);
			memcpy(id + 8, &b, 8);
		}
		v.mv_size = sizeof(id);
		v.mv_data = id;
		if ((rc = mdb_put(txn, info, &k, &v, 0))) {
			mdb_txn_abort(txn);
			return store_lmdb_fail(s, "write the store id", rc);
		}
		if ((rc = mdb_txn_commit(txn))) /* (a failed commit frees txn) */
			return store_lmdb_fail(s, "write the store id", rc);
	} else if (!found) {
		snprintf(s->ring_key, sizeof(s->ring_key), "%s", s->dir);
		return 0; /* an older store, read-only */
	}
	for (int i = 0; i < 16; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	/* the directory as the kernel names it: `--store s` and
	 * `--store /abs/s` are one store, with one set of ring names */
	char real[4096];
	const char *d = realpath(s->dir, real) ? real : s->dir;
	snprintf(s->ring_key, sizeof(s->ring_key), "%s#%s", d, hex);
	return 0;
}

const char *rt_store_ring_key(const struct rt_store *s)
{
	return s->ring_key[0] ? s->ring_key : s->dir;
}

/*
 * LMDB maps its lock file and writes reader slots through the mapping. A
 * sparse page of a shared mapping that cannot be allocated (disk full)
 * raises SIGBUS when first touched, so the file is allocated here, where a
 * full disk is an error code. LMDB keeps a lock file that is big enough.
 */
static int preallocate_lock(const char *dir)
{
	char p[4200];
	struct stat st;
	snprintf(p, sizeof(p), "%s/lock.mdb", dir);
	/* raw: the store's held directory (/proc/self/fd/N, checked ours), never through a link */
	int fd = open(p, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, 0600);
	if (fd < 0)
		return errno == EACCES || errno == EROFS ? 0 : -errno; /* LMDB says */
	int rc = fstat(fd, &st) ? errno : 0;
	off_t want = st.st_size > LOCK_FILE_BYTES ? st.st_size : LOCK_FILE_BYTES;
	if (!rc)
		rc = posix_fallocate(fd, 0, want);
	close(fd);
	return rc == EOPNOTSUPP || rc == EINVAL ? 0 : -rc;
}

/* Open the three databases in a transaction of flags (MDB_CREATE in f). */
static int open_three(struct rt_store *s, unsigned flags, unsigned f)
{
	MDB_txn *txn;
	int rc = store_txn_begin(s, flags, &txn);
	if (rc)
		return rc;
	if ((rc = mdb_dbi_open(txn, "runs", f, &s->runs)) ||
	    (rc = mdb_dbi_open(txn, "samples", f, &s->samples)) ||
	    (rc = mdb_dbi_open(txn, "inventory", f, &s->inv))) {
		MDB_stat st;
		/* whether the store holds anything at all (its main database) */
		if (rc == MDB_NOTFOUND && mdb_stat(txn, 1, &st) == 0 && st.ms_entries == 0)
			rc = -ENOENT;
		mdb_txn_abort(txn);
		return rc;
	}
	return mdb_txn_commit(txn);
}

/*
 * The databases are looked up read-only first, even by a writer: a store
 * that has them is not written by opening it. A writer creates them only
 * in a new store (an empty main database). In one that holds anything, a
 * missing name is damage (a damaged page can hide it): creating it anew
 * wrote into the damaged store, whose writers then said "damaged, left as
 * it is" (delete, the recorder).
 */
static int open_dbis(struct rt_store *s)
{
	int rc = open_three(s, MDB_RDONLY, 0);
	if (rc == MDB_NOTFOUND) {
		/* every store rt made holds all three from its first commit */
		snprintf(s->err, sizeof(s->err),
		         "its main database lacks runs, samples or inventory");
		return RT_E_CORRUPT;
	}
	if (rc == -ENOENT && s->rdwr) /* a new store */
		rc = open_three(s, 0, MDB_CREATE);
	if (rc == -ENOENT)
		return 0; /* read-only view of an empty store */
	if (rc) {
		/* LMDB's own codes are negative too (MDB_INCOMPATIBLE: a zeroed root
		 * page read as a database of another kind): damage, said as such */
		if (rc >= MDB_KEYEXIST && rc <= MDB_LAST_ERRCODE) {
			store_lmdb_fail(s, "open databases", rc);
			return RT_E_CORRUPT;
		}
		return rc < 0 ? rc : store_lmdb_fail(s, "open databases", rc);
	}
	s->have_dbis = 1;
	return load_store_id(s);
}

/*
 * LMDB opens data.mdb and lock.mdb without O_CLOEXEC and hands out only the
 * first: every descriptor of an LMDB file this process holds becomes
 * close-on-exec, so no program rt starts can write into a store.
 */
static void cloexec_lmdb_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	while (d && (e = readdir(d))) {
		char link[300], to[4200];
		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(link, sizeof(link), "/proc/self/fd/%s", e->d_name);
		ssize_t n = readlink(link, to, sizeof(to) - 1);
		if (n < 9)
			continue;
		to[n] = '\0';
		if (strcmp(to + n - 9, "/lock.mdb") && strcmp(to + n - 9, "/data.mdb"))
			continue;
		int fd = atoi(e->d_name), fl = fcntl(fd, F_GETFD);
		if (fl >= 0 && !(fl & FD_CLOEXEC))
			fcntl(fd, F_SETFD, fl | FD_CLOEXEC);
	}
	if (d)
		closedir(d);
}

/* why the last open or compaction refused its directory (as errno is:
 * the last call's, this process's) */
static char store_refusal[4400];

const char *rt_store_refusal(void)
{
	return store_refusal;
}

char *store_refusal_buf(size_t *cap)
{
	*cap = sizeof(store_refusal);
	return store_refusal;
}

/*
 * Before LMDB opens anything: a store written to is a directory of this
 * user's that others cannot write (so nothing in it is anyone else's), and
 * in any store the LMDB files are regular files, never a FIFO that blocks
 * the open or a link to elsewhere.
 */
static int check_files(const struct rt_store *s, const char *dir, int rdwr)
{
	static const char *const names[] = {"data.mdb", "lock.mdb", "writers.lock"};
	for (size_t i = 0; i < RT_ARRAY_LEN(names); i++) {
		char p[4200];
		struct stat st;
		snprintf(p, sizeof(p), "%s/%s", dir, names[i]);
		if (fstatat(s->dirfd, names[i], &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (!S_ISREG(st.st_mode)) {
			snprintf(store_refusal, sizeof(store_refusal),
			         "'%s' is not a regular file; this is not a store rt made", p);
			return RT_E_UNSAFE;
		}
		if (rdwr && st.st_uid != geteuid()) {
			snprintf(
			    store_refusal, sizeof(store_refusal),
			    "'%s' belongs to another user (uid %u); choose a store of your own", p,
			    (unsigned)st.st_uid);
			return RT_E_UNSAFE;
		}
	}
	return 0;
}

/*
 * How a reader opens a store it cannot or must not write. Readers open
 * read-write when they can: LMDB's reader table in lock.mdb keeps a writer
 * from reusing the pages a reader is reading, and a reader finishes a dead
 * recorder's run (salvage). A store of another user is opened read-only
 * without its lock file (MDB_RDONLY|MDB_NOLOCK): its lock file is theirs,
 * mapped and trusted by LMDB, and must not be. A store of our own that
 * cannot be written (an archive: 555/444, a read-only mount) is opened
 * MDB_RDONLY, and without the lock file too when that cannot be opened for
 * writing. Without the lock file nothing keeps a writer off the pages
 * being read: such a copy must not be written while it is read (an
 * archived or shared copy is not); a page changed under the reader is a
 * damaged record (its checksum) or a fault the guard catches, never a
 * wrong figure taken for a right one.
 */
static unsigned read_only_flags(const struct rt_store *s)
{
	char data[4200], lock[4200];
	const char *dir = s->at;
	struct stat st;
	snprintf(data, sizeof(data), "%s/data.mdb", dir);
	snprintf(lock, sizeof(lock), "%s/lock.mdb", dir);
	if (fstatat(s->dirfd, "data.mdb", &st, AT_SYMLINK_NOFOLLOW) < 0)
		return 0; /* the open says why */
	if (st.st_uid != geteuid() || !s->dir_ours)
		return MDB_RDONLY | MDB_NOLOCK;
	if (access(data, W_OK) == 0 && access(dir, W_OK) == 0)
		return 0;
	/* raw: the store's held directory, never through a link, never blocking */
	int fd = open(lock, O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return MDB_RDONLY | MDB_NOLOCK;
	close(fd);
	return MDB_RDONLY;
}

/*
 * The store's directory, walked without following a link another user
 * made (made 0700 by a writer) and held open: every file in it is opened
 * through /proc/self/fd/<dirfd>, in the directory that was checked,
 * whatever is renamed on the way to it meanwhile. A writer's must be this
 * user's, and no one else's to write.
 */
static int open_dir(struct rt_store *s, const char *dir, int held)
{
	struct stat st;
	store_refusal[0] = '\0';
	s->dirfd = held >= 0 ? fcntl(held, F_DUPFD_CLOEXEC, 3)
	                     : rt_safe_dir_open(dir, s->rdwr, store_refusal, sizeof(store_refusal));
	if (held >= 0 && s->dirfd < 0)
		s->dirfd = -errno;
	if (s->dirfd < 0) {
		int rc = s->dirfd;
		s->dirfd = -1;
		return rc;
	}
	if (s->rdwr) {
		int rc =
		    rt_safe_check(s->dirfd, dir, S_IFDIR, store_refusal, sizeof(store_refusal));
		if (rc)
			return rc;
	}
	s->dir_ours = fstat(s->dirfd, &st) == 0 && st.st_uid == geteuid() && !rt_dir_shared(&st);
	snprintf(s->at, sizeof(s->at), "/proc/self/fd/%d", s->dirfd);
	if (access(s->at, F_OK) < 0) /* no /proc: by name */
		snprintf(s->at, sizeof(s->at), "%s", dir);
	return 0;
}

/*
 * LMDB opens its files by name. In a directory someone else can write,
 * the name can be swapped between a check and that open (a FIFO that
 * blocks it): there a reader opens data.mdb itself, checks what it opened,
 * and hands LMDB that file (/proc/self/fd/<fd>, MDB_NOSUBDIR; read-only
 * without the lock file, so nothing else is opened by name).
 */
static int env_open(struct rt_store *s)
{
	unsigned base = MDB_NOSYNC | MDB_NOTLS | MDB_NORDAHEAD;
	if (s->dir_ours || !(s->ro_flags & MDB_NOLOCK))
		return GUARDED_RD(s, mdb_env_open(s->env, s->at, base | s->ro_flags, 0600));
	/* raw: in the store's held directory, never through a link, never blocking */
	int fd = openat(s->dirfd, "data.mdb", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	if (fd < 0)
		return errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return EINVAL;
	}
	char p[64];
	snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
	int rc = GUARDED_RD(s, mdb_env_open(s->env, p, base | s->ro_flags | MDB_NOSUBDIR, 0600));
	close(fd);
	return rc;
}

int rt_store_side_dir(const struct rt_store *s, const char *sub, int mkdirs, char *why, size_t cap)
{
	char path[4200];
	struct stat st;
	snprintf(path, sizeof(path), "%s/%s", s->dir, sub);
	if (!s->dir_ours) {
		unsigned uid = fstat(s->dirfd, &st) == 0 ? (unsigned)st.st_uid : 0;
		snprintf(
		    why, cap,
		    uid != (unsigned)geteuid()
		        ? "the store '%s' belongs to another user (uid %u), and rt keeps its %s "
		          "state beside the store: it writes only into a store of its own (run "
		          "this as that user, or copy the store)"
		        : "the store '%s' can be written by other users (uid %u's directory), "
		          "and rt keeps its %s state beside the store: chmod go-w it first",
		    s->dir, uid, sub);
		return RT_E_UNSAFE;
	}
	return rt_own_subdir_at(s->dirfd, sub, path, mkdirs, why, cap);
}

int rt_store_open(const char *dir, int flags, struct rt_store **out)
{
	return store_open_held(dir, -1, flags, out);
}

int store_open_held(const char *dir, int held, int flags, struct rt_store **out)
{
	struct rt_store *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->rdwr = flags & RT_STORE_RDWR;
	s->wlock = -1;
	s->dirfd = -1;
	s->group_max = 1;
	snprintf(s->dir, sizeof(s->dir), "%s", dir);
	s->packs = calloc(1, sizeof(*s->packs));
	int rc = s->packs ? rt_pack_state_init(&s->packs[0].st) : -ENOMEM;
	if (rc) {
		free(s->packs);
		free(s);
		return rc;
	}
	s->npacks = 1;
	if ((rc = open_dir(s, dir, held)) || (rc = check_files(s, dir, s->rdwr))) {
		rt_store_close(s);
		return rc;
	}
	if (s->rdwr && (s->wlock = store_writers_lock(s->at, LOCK_SH)) < 0) {
		rc = s->wlock;
		s->wlock = -1;
		if (rc == -EBUSY || rc == -ENOENT || rc == -EACCES || rc == -EROFS) {
			rt_store_close(s);
			return rc == -EBUSY ? RT_E_BUSY : rc; /* being compacted, or not ours */
		}
	}
	if (!s->rdwr && faccessat(s->dirfd, "data.mdb", F_OK, AT_SYMLINK_NOFOLLOW) < 0) {
		rt_store_close(s);
		return -ENOENT;
	}
	if (!s->rdwr)
		s->ro_flags = read_only_flags(s);
	if ((rc = mdb_env_create(&s->env))) {
		s->env = NULL;
		rt_store_close(s);
		return RT_E_STORE;
	}
	if (!s->ro_flags && (rc = preallocate_lock(s->at))) {
		rt_store_close(s);
		return rc;
	}
	mdb_env_set_assert(s->env, store_on_assert);
	mdb_env_set_maxdbs(s->env, 8);
	mdb_env_set_maxreaders(s->env, MAX_READERS);
	mdb_env_set_mapsize(s->env, INITIAL_MAP);
	/* Readers open read-write too: LMDB needs the lock file's reader table. */
	rc = env_open(s);
	cloexec_lmdb_fds();
	if (rc) {
		int e = (rc > 0 && rc < 4096)                          ? -rc
		        : rc == RT_E_CORRUPT || store_damaged_code(rc) ? RT_E_CORRUPT
		                                                       : RT_E_STORE;
		rt_store_close(s);
		return e;
	}
	int dead = 0;
	if (!(s->ro_flags & MDB_NOLOCK))
		mdb_reader_check(s->env, &dead); /* clear slots of killed readers */
	if ((rc = GUARDED_RD(s, open_dbis(s)))) {
		rt_store_close(s);
		return rc;
	}
	*out = s;
	return 0;
}

void rt_store_close(struct rt_store *s)
{
	if (!s)
		return;
	if (s->npend && !s->poisoned)
		rt_store_flush(s);
	/* a poisoned one too: closing an environment walks no page, and the
	 * transaction the fault cut short (a few hundred bytes) is left */
	if (s->env)
		mdb_env_close(s->env);
	for (unsigned i = 0; i < s->npacks; i++) {
		rt_pack_state_free(&s->packs[i].st);
		free(s->packs[i].blk);
	}
	free(s->packs);
	if (s->wlock >= 0)
		close(s->wlock);
	if (s->dirfd >= 0)
		close(s->dirfd);
	free(s->pend);
	free(s->pbytes);
	free(s->scratch);
	free(s);
}
