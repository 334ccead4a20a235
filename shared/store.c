/*
 * store.c - the LMDB time-series store (see store.h).
 *
 * Keys are big-endian so LMDB's byte order is (run, seq) order and appends
 * of a live run hit the right edge of the B-tree (MDB_APPEND). The
 * environment is opened MDB_NOSYNC|MDB_NOTLS: commits reach the page cache
 * at once (a killed process loses nothing it committed) and the recorder
 * calls rt_store_sync() every few seconds to bound the loss on power
 * failure. MDB_NOTLS lets one thread hold nested short read transactions.
 */
#define _GNU_SOURCE
#include "rt/store.h"
#include "rt/lmdbcheck.h"

#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <dirent.h>
#include <fcntl.h>
#include <lmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <sys/random.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rt/clock.h"
#include "rt/common.h"
#include "rt/pack.h"
#include "rt/record.h"
#include "rt/ring.h"
#include "rt/safefile.h"
#include "rt/runmeta.h"

#define INITIAL_MAP (64ull << 20)
#define SCAN_TXN_BATCH 4096 /* samples per read transaction in long scans */
#define DELETE_TXN_BATCH 20000
#define MAX_READERS 254
/* LMDB's lock file: one 64-byte slot per reader after a 192-byte header */
#define LOCK_FILE_BYTES (((MAX_READERS - 1) * 64 + 192 + 4095) & ~4095)

struct rt_store {
	MDB_env *env;
	MDB_dbi runs, samples, inv;
	int have_dbis;
	char ring_key[4200]; /* dir + the store's random id: names its rings */
	int rdwr;
	unsigned ro_flags; /* a reader's MDB_RDONLY (|MDB_NOLOCK): see read_only_flags */
	int unsynced;      /* a commit since the last sync */
	int wlock;         /* writers' lock (shared) held by a writer's handle, or -1 */
	uint64_t cap;
	char dir[4096];
	int dirfd;     /* dir, walked without following another user's link, held */
	int dir_ours;  /* dir is this user's and no one else can write it */
	char at[4096]; /* the path the files are opened by: /proc/self/fd/<dirfd> */
	char err[256];
	void *map_addr; /* our mapping of data.mdb (for rt_store_trim_rss) */
	size_t map_len, map_for;
	void *scratch; /* 8-byte aligned copy of a value */
	size_t scratch_cap;
	/* samples packed and waiting for the next group commit */
	struct rt_pack_state wst; /* the run's last packed record */
	uint64_t wrun;            /* run wst belongs to */
	struct pending {
		uint64_t run, seq;
		uint32_t off, len;
	} * pend;
	unsigned npend, pend_cap;
	unsigned char *pbytes;
	size_t pbytes_len, pbytes_cap;
	unsigned group_max;    /* commit when this many wait (1: every append) */
	uint64_t group_age_ns; /* ... or when the oldest waited this long */
	uint64_t pend_since_ns;
	int sync_on_commit;
	uint64_t dropped;       /* samples whose group could not be committed */
	int poisoned;           /* LMDB faulted on damaged pages: never touched again */
	uint64_t cap_budget_ns; /* time one rt_store_enforce_cap may take (0: all) */
	int cap_more;           /* the last one stopped with work left */
	int pages_checked;      /* rt_store_check_pages passed before the cap's first delete */
	int pages_bad;          /* ... or failed: the cap deletes nothing */
};

/*
 * A damaged data.mdb (flipped bits, zeroed or truncated pages, another
 * machine's file) can send LMDB through a wild pointer or into one of its
 * assertions. Every entry point runs under a guard: a SIGSEGV or SIGBUS
 * the kernel raises inside it (not one sent with kill), or LMDB's abort(),
 * returns to the entry point, which reports
 * RT_E_CORRUPT, and the handle is poisoned: nothing reads through it
 * again, only closing it releases its mapping and descriptors. Faults
 * anywhere else take their default action.
 */
static __thread sigjmp_buf *fault_jb;

static void on_fault(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	/* a fault the kernel raised, or LMDB's own assertion (abort) */
	if (fault_jb && si && (si->si_code > 0 || (sig == SIGABRT && si->si_pid == getpid())))
		siglongjmp(*fault_jb, sig);
	signal(sig, SIG_DFL);
	raise(sig);
}

/* LMDB's assertion, inside a guarded call: back to the entry point before
 * it prints and aborts */
static void on_assert(MDB_env *env, const char *msg)
{
	(void)env;
	(void)msg;
	if (fault_jb)
		siglongjmp(*fault_jb, SIGABRT);
}

/* A cycle in a damaged B-tree sends LMDB round it for ever: a read that
 * burns this much CPU time in one call is given up the same way. */
#define WATCHDOG_CPU_SECS 3

static void on_watchdog(int sig, siginfo_t *si, void *uc)
{
	(void)si;
	(void)uc;
	if (fault_jb)
		siglongjmp(*fault_jb, sig);
}

/* Arm (secs > 0) or disarm the watchdog of the outermost read. */
static void watchdog(int secs)
{
	struct itimerval it = {{0, 0}, {secs, 0}};
	setitimer(ITIMER_VIRTUAL, &it, NULL);
}

static void guard_install(void)
{
	static int done;
	if (done)
		return;
	done = 1;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_fault;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	sigaction(SIGFPE, &sa, NULL); /* a page size of 0 divides by it */
	sigaction(SIGILL, &sa, NULL);
	sigaction(SIGABRT, &sa, NULL);
	sa.sa_sigaction = on_watchdog;
	sigaction(SIGVTALRM, &sa, NULL);
}

/* What a guarded call allocated and would free itself: freed for it when
 * a fault cuts it short. */
static __thread void *owned[8];
static __thread int nowned;

static void own(void *p)
{
	if (p && nowned < (int)RT_ARRAY_LEN(owned))
		owned[nowned++] = p;
}

static void disown(void *p)
{
	for (int i = nowned - 1; p && i >= 0; i--)
		if (owned[i] == p) {
			owned[i] = owned[--nowned];
			return;
		}
}

static void free_owned(int base)
{
	while (nowned > base)
		free(owned[--nowned]);
}

static int poison(struct rt_store *s, int sig)
{
	s->poisoned = 1;
	snprintf(s->err, sizeof(s->err), "the store is damaged (%s reading it)",
	         sig == SIGBUS      ? "bus error"
	         : sig == SIGABRT   ? "LMDB assertion"
	         : sig == SIGFPE    ? "arithmetic fault"
	         : sig == SIGVTALRM ? "endless loop"
	                            : "invalid page");
	return RT_E_CORRUPT;
}

#ifndef __has_feature
#define __has_feature(x) 0
#endif
#if defined(__SANITIZE_ADDRESS__) || __has_feature(address_sanitizer)
/* Under LeakSanitizer: the transaction a fault cut short is abandoned on
 * purpose (above), and LMDB's allocations are LMDB's. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "leak:liblmdb.so\n";
}
#endif

/* The handlers run with SA_NODEFER and an empty sa_mask, so a fault
 * leaves the signal mask as it was: sigsetjmp need not save it (a
 * syscall per entry point saved). */
/* Evaluate call (an int) under the guard for store s; a read (rd) is
 * also bounded in CPU time when it is the outermost guarded call. */
#define GUARDED(s, call) GUARD_((s), (call), 0)
#define GUARDED_RD(s, call) GUARD_((s), (call), 1)
#define GUARD_(s, call, rd)                                                                        \
	({                                                                                         \
		volatile int g_rc_;                                                                \
		sigjmp_buf g_jb_, *volatile g_prev_ = fault_jb;                                    \
		volatile int g_base_ = nowned;                                                     \
		int g_sig_;                                                                        \
		if ((s)->poisoned) {                                                               \
			g_rc_ = RT_E_CORRUPT;                                                      \
		} else if ((g_sig_ = sigsetjmp(g_jb_, 0)) != 0) {                                  \
			fault_jb = g_prev_;                                                        \
			if ((rd) && !g_prev_)                                                      \
				watchdog(0);                                                       \
			free_owned(g_base_);                                                       \
			g_rc_ = poison((s), g_sig_);                                               \
		} else {                                                                           \
			guard_install();                                                           \
			if ((rd) && !g_prev_)                                                      \
				watchdog(WATCHDOG_CPU_SECS);                                       \
			fault_jb = &g_jb_;                                                         \
			g_rc_ = (call);                                                            \
			fault_jb = g_prev_;                                                        \
			if ((rd) && !g_prev_)                                                      \
				watchdog(0);                                                       \
		}                                                                                  \
		g_rc_;                                                                             \
	})

/* Run a caller's callback outside the guard: its faults are its own, and
 * the time it takes is not the read's (the watchdog starts again now and
 * then: a long scan is many short reads). */
static __thread unsigned callbacks;
#define UNGUARDED(expr)                                                                            \
	({                                                                                         \
		sigjmp_buf *g_save_ = fault_jb;                                                    \
		if ((++callbacks & 255) == 0)                                                      \
			watchdog(WATCHDOG_CPU_SECS);                                               \
		fault_jb = NULL;                                                                   \
		int g_r_ = (expr);                                                                 \
		fault_jb = g_save_;                                                                \
		g_r_;                                                                              \
	})

static int writers_lock(const char *dir, int how);

static void put_be64(unsigned char *p, uint64_t v)
{
	for (int i = 7; i >= 0; i--, v >>= 8)
		p[i] = (unsigned char)v;
}

static uint64_t get_be64(const unsigned char *p)
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v = (v << 8) | p[i];
	return v;
}

/* LMDB's answers for a file that is not (or no longer) a sound store */
static int damaged_code(int rc)
{
	return rc == MDB_INVALID || rc == MDB_CORRUPTED || rc == MDB_PAGE_NOTFOUND ||
	       rc == MDB_VERSION_MISMATCH || rc == MDB_BAD_TXN || rc == MDB_BAD_VALSIZE;
}

static int lmdb_fail(struct rt_store *s, const char *what, int rc)
{
	snprintf(s->err, sizeof(s->err), "%s: %s", what, mdb_strerror(rc));
	if (rc > 0 && rc < 4096)
		return -rc; /* errno from the OS */
	if (damaged_code(rc))
		return RT_E_CORRUPT;
	return RT_E_STORE;
}

const char *rt_store_last_error(const struct rt_store *s)
{
	return s->err;
}
const char *rt_store_dir(const struct rt_store *s)
{
	return s->dir;
}
void rt_store_set_cap(struct rt_store *s, uint64_t cap_bytes)
{
	s->cap = cap_bytes;
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

/* Begin a transaction, following a map grown by another process. */
static int txn_begin(struct rt_store *s, unsigned flags, MDB_txn **txn)
{
	for (int tries = 0; tries < 4; tries++) {
		int rc = mdb_txn_begin(s->env, NULL, flags, txn);
		if (rc != MDB_MAP_RESIZED)
			return rc ? lmdb_fail(s, "begin transaction", rc) : 0;
		mdb_env_set_mapsize(s->env, 0);
	}
	return lmdb_fail(s, "begin transaction", MDB_MAP_RESIZED);
}

/*
 * Every store has a random id, made when a recorder first opens it, in the
 * `info` database. Ring file names include it, so a store deleted and made
 * anew (run ids start again at 1) never meets a stale ring of the old one.
 * Stores made before the id existed get one on the next recorder open;
 * until then their rings are named by the directory alone.
 */
static int check_lmdb_pages(struct rt_store *s);

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
	int rc = txn_begin(s, MDB_RDONLY, &txn);
	if (rc)
		return rc;
	rc = mdb_dbi_open(txn, "info", 0, &info);
	if (rc == 0)
		rc = mdb_get(txn, info, &k, &v);
	int found = rc == 0 && v.mv_size == sizeof(id);
	if (found)
		memcpy(id, v.mv_data, sizeof(id));
	mdb_txn_abort(txn);
	if (!found && rc == MDB_NOTFOUND && s->rdwr) {
		if ((rc = check_lmdb_pages(s)) || (rc = txn_begin(s, 0, &txn)))
			return rc;
		if ((rc = mdb_dbi_open(txn, "info", MDB_CREATE, &info))) {
			mdb_txn_abort(txn);
			return lmdb_fail(s, "write the store id", rc);
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
			return lmdb_fail(s, "write the store id", rc);
		}
		if ((rc = mdb_txn_commit(txn))) /* (a failed commit frees txn) */
			return lmdb_fail(s, "write the store id", rc);
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
	int rc = txn_begin(s, flags, &txn);
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
			lmdb_fail(s, "open databases", rc);
			return RT_E_CORRUPT;
		}
		return rc < 0 ? rc : lmdb_fail(s, "open databases", rc);
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

static char refusal[4400];

const char *rt_store_refusal(void)
{
	return refusal;
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
			snprintf(refusal, sizeof(refusal),
			         "'%s' is not a regular file; this is not a store rt made", p);
			return RT_E_UNSAFE;
		}
		if (rdwr && st.st_uid != geteuid()) {
			snprintf(
			    refusal, sizeof(refusal),
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
static int open_dir(struct rt_store *s, const char *dir)
{
	struct stat st;
	refusal[0] = '\0';
	s->dirfd = rt_safe_dir_open(dir, s->rdwr, refusal, sizeof(refusal));
	if (s->dirfd < 0) {
		int rc = s->dirfd;
		s->dirfd = -1;
		return rc;
	}
	if (s->rdwr) {
		int rc = rt_safe_check(s->dirfd, dir, S_IFDIR, refusal, sizeof(refusal));
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

int rt_store_open(const char *dir, int flags, struct rt_store **out)
{
	struct rt_store *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->rdwr = flags & RT_STORE_RDWR;
	s->wlock = -1;
	s->dirfd = -1;
	s->group_max = 1;
	snprintf(s->dir, sizeof(s->dir), "%s", dir);
	int rc = rt_pack_state_init(&s->wst);
	if (rc) {
		free(s);
		return rc;
	}
	if ((rc = open_dir(s, dir)) || (rc = check_files(s, dir, s->rdwr))) {
		rt_store_close(s);
		return rc;
	}
	if (s->rdwr && (s->wlock = writers_lock(s->at, LOCK_SH)) < 0) {
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
	mdb_env_set_assert(s->env, on_assert);
	mdb_env_set_maxdbs(s->env, 8);
	mdb_env_set_maxreaders(s->env, MAX_READERS);
	mdb_env_set_mapsize(s->env, INITIAL_MAP);
	/* Readers open read-write too: LMDB needs the lock file's reader table. */
	rc = env_open(s);
	cloexec_lmdb_fds();
	if (rc) {
		int e = (rc > 0 && rc < 4096)                    ? -rc
		        : rc == RT_E_CORRUPT || damaged_code(rc) ? RT_E_CORRUPT
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
	rt_pack_state_free(&s->wst);
	if (s->wlock >= 0)
		close(s->wlock);
	if (s->dirfd >= 0)
		close(s->dirfd);
	free(s->pend);
	free(s->pbytes);
	free(s->scratch);
	free(s);
}

/* Double the map after MDB_MAP_FULL (no transaction may be open). */
static int grow_map(struct rt_store *s)
{
	MDB_envinfo info;
	mdb_env_info(s->env, &info);
	size_t next = info.me_mapsize * 2;
	int rc = mdb_env_set_mapsize(s->env, next);
	return rc ? lmdb_fail(s, "grow map", rc) : 0;
}

typedef int (*write_fn)(struct rt_store *s, MDB_txn *txn, void *ctx);

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
static int writers_lock(const char *dir, int how)
{
	char p[4200];
	snprintf(p, sizeof(p), "%s/writers.lock", dir);
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

static int write_txn(struct rt_store *s, write_fn fn, void *ctx)
{
	if (s->wlock >= 0)
		return write_txn_locked(s, fn, ctx);
	int fd = writers_lock(s->at, LOCK_SH);
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
		int rc = txn_begin(s, 0, &txn);
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
		return rc ? lmdb_fail(s, "write", rc) : 0;
	}
	return lmdb_fail(s, "write", MDB_MAP_FULL);
}

/* The same, for the handle of a writer (the recorder). */
static int with_write(struct rt_store *s, write_fn fn, void *ctx)
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
	return with_write(s, do_put, &c);
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
	return with_write(s, do_put, &c);
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

static int do_commit(struct rt_store *s, MDB_txn *txn, void *vctx)
{
	(void)vctx;
	for (unsigned i = 0; i < s->npend; i++) {
		const struct pending *p = &s->pend[i];
		int rc = put_sample(s, txn, p->run, p->seq, s->pbytes + p->off, p->len);
		if (rc)
			return rc;
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
	int rc = with_write(s, do_commit, NULL);
	if (rc) { /* the group is lost; the next sample starts afresh, full */
		s->dropped += s->npend;
		rt_pack_state_reset(&s->wst);
	} else if (sync) {
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

static __attribute__((noinline)) int store_append_impl(struct rt_store *s, uint64_t run,
                                                       uint64_t seq, const void *rec, size_t len)
{
	if (!s->rdwr || !s->have_dbis)
		return -EROFS;
	struct rt_record r;
	int rc = rt_record_decode(rec, len, &r);
	if (rc)
		return rc;
	if (run != s->wrun) {
		rt_pack_state_reset(&s->wst);
		s->wrun = run;
	}
	size_t pc = s->pend_cap;
	if ((rc = grow((void **)&s->pend, &pc, s->npend + 1, sizeof(*s->pend))) ||
	    (rc = grow((void **)&s->pbytes, &s->pbytes_cap, s->pbytes_len + rt_pack_bound(&r), 1)))
		return rc;
	s->pend_cap = (unsigned)pc;
	size_t n = rt_pack(&s->wst, seq, &r, s->pbytes + s->pbytes_len);
	s->pend[s->npend++] = (struct pending){run, seq, (uint32_t)s->pbytes_len, (uint32_t)n};
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
	return with_write(s, do_put_raw, &c);
}

/* Read one value of dbi at key into a malloc'd copy. */
static int get_copy(struct rt_store *s, MDB_dbi dbi, void *key, size_t klen, void **out,
                    size_t *len, int nul)
{
	if (!s->have_dbis)
		return RT_E_NOTFOUND;
	MDB_txn *txn;
	int rc = txn_begin(s, MDB_RDONLY, &txn);
	if (rc)
		return rc;
	MDB_val k = {klen, key}, v;
	rc = mdb_get(txn, dbi, &k, &v);
	if (rc) {
		mdb_txn_abort(txn);
		return rc == MDB_NOTFOUND ? RT_E_NOTFOUND : lmdb_fail(s, "get", rc);
	}
	char *p = malloc(v.mv_size + 1);
	if (!p) {
		mdb_txn_abort(txn);
		return -ENOMEM;
	}
	own(p);
	memcpy(p, v.mv_data, v.mv_size);
	disown(p);
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
static int find_start(MDB_cursor *cur, uint64_t run, uint64_t from)
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
		if (!rt_pack_is_packed(v.mv_data, v.mv_size) ||
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
	own(x.st.buf);
	uint64_t next = from;
	int first = 1;
	while (next <= to) {
		MDB_txn *txn;
		MDB_cursor *cur;
		int rc = txn_begin(s, MDB_RDONLY, &txn);
		if (rc) {
			ret = rc;
			break;
		}
		if ((rc = mdb_cursor_open(txn, s->samples, &cur))) {
			mdb_txn_abort(txn);
			ret = lmdb_fail(s, "cursor", rc);
			break;
		}
		unsigned char key[16];
		MDB_val k = {16, key}, v;
		MDB_cursor_op op = MDB_GET_CURRENT;
		if (first) {
			first = 0;
			if (find_start(cur, run, from)) {
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
	disown(x.st.buf);
	rt_pack_state_free(&x.st);
	return ret;
}

struct salvage_ctx {
	struct rt_ring *ring;
	uint64_t run;
	unsigned added;
	struct rt_pack_state st;
	void *rec;
	unsigned char *packed;
};

static int do_salvage(struct rt_store *s, MDB_txn *txn, void *vctx)
{
	struct salvage_ctx *c = vctx;
	c->added = 0;
	rt_pack_state_reset(&c->st);
	MDB_cursor *cur;
	int rc = mdb_cursor_open(txn, s->samples, &cur);
	if (rc)
		return rc;
	/* the store's last sample of the run, read inside this transaction:
	 * two salvagers of one run take turns, the second finds nothing to add */
	unsigned char key[16];
	put_be64(key, c->run + 1);
	put_be64(key + 8, 0);
	MDB_val k = {16, key}, v;
	rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
	rc =
	    rc == 0 ? mdb_cursor_get(cur, &k, &v, MDB_PREV) : mdb_cursor_get(cur, &k, &v, MDB_LAST);
	uint64_t want = 0;
	if (rc == 0 && k.mv_size == 16 && get_be64(k.mv_data) == c->run)
		want = get_be64((unsigned char *)k.mv_data + 8) + 1;
	mdb_cursor_close(cur);
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
		if ((rc = put_sample(s, txn, c->run, seq, c->packed, n)))
			return rc;
		c->added++;
	}
	return 0;
}

static __attribute__((noinline)) int store_salvage_impl(struct rt_store *s, struct rt_ring *ring,
                                                        unsigned *added)
{
	struct salvage_ctx c = {.ring = ring, .run = rt_ring_run_id(ring)};
	*added = 0;
	if (s->npend && (s->wrun == c.run))
		rt_store_flush(s);
	int rc = rt_pack_state_init(&c.st);
	if (rc)
		return rc;
	if (posix_memalign(&c.rec, 64, rt_record_max_size()))
		c.rec = NULL;
	c.packed = malloc(2 * rt_record_max_size()); /* > rt_pack_bound of any record */
	own(c.st.buf);
	own(c.rec);
	own(c.packed);
	if (!c.rec || !c.packed)
		rc = -ENOMEM;
	else
		rc = write_txn(s, do_salvage, &c);
	if (rc == 0)
		*added = c.added;
	free(c.rec);
	disown(c.rec);
	disown(c.packed);
	disown(c.st.buf);
	free(c.packed);
	rt_pack_state_free(&c.st);
	return rc;
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
	int rc = txn_begin(s, MDB_RDONLY, &txn);
	if (rc)
		return rc;
	rc = mdb_get(txn, s->samples, &k, &v);
	mdb_txn_abort(txn);
	return rc == 0 ? 1 : rc == MDB_NOTFOUND ? 0 : lmdb_fail(s, "get", rc);
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
	int rc = txn_begin(s, MDB_RDONLY, &txn);
	if (rc)
		return rc;
	if ((rc = mdb_cursor_open(txn, s->samples, &cur))) {
		mdb_txn_abort(txn);
		return lmdb_fail(s, "cursor", rc);
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
	int rc = txn_begin(s, MDB_RDONLY, &txn);
	if (rc)
		return rc;
	if ((rc = mdb_cursor_open(txn, s->runs, &cur))) {
		mdb_txn_abort(txn);
		return lmdb_fail(s, "cursor", rc);
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
			disown(ids);
			uint64_t *p = realloc(ids, cap * sizeof(*ids));
			own(p);
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
	for (size_t i = 0; i < n && !ret; i++) {
		char *meta;
		size_t len;
		if (rt_store_get_meta(s, ids[i], &meta, &len))
			continue;
		ret = UNGUARDED(cb(ctx, ids[i], meta, len));
		free(meta);
	}
	disown(ids);
	free(ids);
	if (!ret && !whole) {
		snprintf(s->err, sizeof(s->err),
		         "its list of runs is damaged: %zu of %zu runs can be read", seen, entries);
		return RT_E_CORRUPT;
	}
	return ret;
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
		int rc = with_write(s, do_delete, &c);
		if (rc)
			return rc;
	}
	return 0;
}

static __attribute__((noinline)) int store_used_bytes_impl(struct rt_store *s, uint64_t *bytes)
{
	MDB_txn *txn;
	int rc = txn_begin(s, MDB_RDONLY, &txn);
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
	int rc = txn_begin(s, MDB_RDONLY, &txn);
	if (rc)
		return rc;
	rc = mdb_dbi_open(txn, "info", 0, &info);
	if (rc == 0)
		rc = mdb_get(txn, info, &k, &v);
	if (rc == 0 && v.mv_size == 8)
		*run = get_be64(v.mv_data);
	mdb_txn_abort(txn);
	return rc == 0 && v.mv_size == 8 ? 0 : RT_E_NOTFOUND;
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
			if ((rc = with_write(s, do_delete, &d)))
				return rc;
			if (d.done) {
				uint64_t none = 0;
				if ((rc = with_write(s, do_mark_deleting, &none)))
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
		if ((rc = with_write(s, do_mark_deleting, &c.victim)))
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

static __attribute__((noinline)) int store_sync_impl(struct rt_store *s)
{
	if (!s->unsynced)
		return 0;
	int rc = mdb_env_sync(s->env, 1);
	if (rc)
		return lmdb_fail(s, "sync", rc);
	s->unsynced = 0;
	return 0;
}

/* Where LMDB mapped data.mdb in this process: LMDB only reports the
 * address of a fixed map, so find the mapping of the file's inode in
 * /proc/self/maps (our own process: never under a fixture root). */
static int find_map(struct rt_store *s)
{
	int fd;
	struct stat st;
	MDB_envinfo info;
	if (mdb_env_get_fd(s->env, &fd) || fstat(fd, &st) || mdb_env_info(s->env, &info))
		return -1;
	FILE *f = fopen("/proc/self/maps", "re");
	if (!f)
		return -1;
	char line[4352];
	s->map_addr = NULL;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi, off, ino;
		unsigned maj, min;
		if (sscanf(line, "%lx-%lx %*s %lx %x:%x %lu", &lo, &hi, &off, &maj, &min, &ino) ==
		        6 &&
		    ino == (unsigned long)st.st_ino && off == 0 && hi - lo >= info.me_mapsize / 2) {
			s->map_addr = (void *)lo;
			s->map_len = hi - lo;
			break;
		}
	}
	fclose(f);
	s->map_for = info.me_mapsize;
	return s->map_addr ? 0 : -1;
}

void rt_store_trim_rss(struct rt_store *s)
{
	MDB_envinfo info;
	if (mdb_env_info(s->env, &info))
		return;
	if (info.me_mapsize != s->map_for && find_map(s))
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
static pid_t lmdb_user(const char *dir)
{
	char p[4200];
	snprintf(p, sizeof(p), "%s/lock.mdb", dir);
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

int rt_store_compact(const char *dir, uint64_t *before, uint64_t *after, long *user)
{
	char p[4200], tmp[4200], dst[4300];
	struct stat st;
	*user = 0;
	int rc = rt_check_own_dir(dir, refusal, sizeof(refusal));
	if (rc)
		return rc; /* only a store of this user's, reached through no one else's link */
	snprintf(p, sizeof(p), "%s/data.mdb", dir);
	if (lstat(p, &st) < 0)
		return -errno;
	*before = (uint64_t)st.st_size;
	int lk = writers_lock(dir, LOCK_EX);
	if (lk < 0)
		return lk == -EBUSY ? RT_E_BUSY : lk;
	pid_t other = lmdb_user(dir);
	if (other) {
		*user = other;
		close(lk);
		return RT_E_BUSY;
	}
	struct rt_store *s;
	rc = rt_store_open(dir, RT_STORE_RDONLY, &s);
	if (rc) {
		close(lk);
		return rc;
	}
	/* the copy follows every page: a damaged one would be copied wrong
	 * over the original */
	if ((rc = rt_store_check_pages(s))) {
		rt_store_close(s);
		close(lk);
		return rc;
	}
	snprintf(tmp, sizeof(tmp), "%s/.compact", dir);
	snprintf(dst, sizeof(dst), "%s/data.mdb", tmp);
	unlink(dst);
	rmdir(tmp);
	if (mkdir(tmp, 0700) < 0) {
		rc = -errno;
	} else if ((rc = mdb_env_copy2(s->env, tmp, MDB_CP_COMPACT))) {
		rc = lmdb_fail(s, "compact", rc);
	} else {
		int fd = open(dst, O_RDONLY | O_CLOEXEC);
		if (fd < 0 || fchmod(fd, 0600) < 0 || fsync(fd) < 0) /* private, as made */
			rc = -errno;
		if (fd >= 0)
			close(fd);
	}
	rt_store_close(s);
	if (rc == 0 && rename(dst, p) < 0)
		rc = -errno;
	unlink(dst);
	rmdir(tmp);
	if (rc == 0) {
		int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dfd >= 0) {
			fsync(dfd); /* the rename itself survives a power cut */
			close(dfd);
		}
		if (stat(p, &st) == 0)
			*after = (uint64_t)st.st_size;
	}
	close(lk);
	return rc;
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

int rt_store_salvage(struct rt_store *s, struct rt_ring *ring, unsigned *added)
{
	return GUARDED(s, store_salvage_impl(s, ring, added));
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

int rt_store_sync(struct rt_store *s)
{
	return GUARDED(s, store_sync_impl(s));
}

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
		if ((rc = txn_begin(s, MDB_RDONLY, &txn)))
			break;
		int r = GUARDED_RD(s, mdb_stat(txn, d, &st));
		if (!s->poisoned)
			mdb_txn_abort(txn);
		if (r)
			rc = r == RT_E_CORRUPT ? r : lmdb_fail(s, "check", r);
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
	return check_lmdb_pages(s);
}

/* Every page the newest snapshot reaches (rt_lmdb_check). */
static int check_lmdb_pages(struct rt_store *s)
{
	int rc, fd;
	if (mdb_env_get_fd(s->env, &fd))
		return lmdb_fail(s, "check", EINVAL);
	/* the snapshot's meta page is rewritten two commits later: a writer
	 * that commits twice meanwhile costs a try */
	for (int tries = 0; tries < 8; tries++) {
		MDB_txn *txn;
		if ((rc = txn_begin(s, MDB_RDONLY, &txn)))
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
