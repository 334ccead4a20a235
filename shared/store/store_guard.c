/*
 * store_guard.c - the guard around LMDB, and LMDB's answers.
 *
 * A damaged data.mdb can send LMDB through a wild pointer, into one of its
 * assertions or round a cycle for ever. Every public entry point of the
 * store runs its work under GUARDED or GUARDED_RD (store_int.h): a fault the
 * kernel raises inside, LMDB's abort, or a read that burns
 * WATCHDOG_CPU_SECS of CPU returns to the entry point as RT_E_CORRUPT and
 * poisons the handle. This file owns the handlers, the allocations a cut
 * short call leaves (store_own), and how LMDB's codes become rt's
 * (store_lmdb_fail) and transactions begin (store_txn_begin).
 */
#define _GNU_SOURCE
#include "store_int.h"

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
/* house: signal-handler state (the fault's way back, store_int.h's GUARDED) */
__thread sigjmp_buf *store_fault_jb;

static void on_fault(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	/* a fault the kernel raised, or LMDB's own assertion (abort) */
	if (store_fault_jb && si && (si->si_code > 0 || (sig == SIGABRT && si->si_pid == getpid())))
		siglongjmp(*store_fault_jb, sig);
	signal(sig, SIG_DFL);
	raise(sig);
}

/* LMDB's assertion, inside a guarded call: back to the entry point before
 * it prints and aborts */
void store_on_assert(MDB_env *env, const char *msg)
{
	(void)env;
	(void)msg;
	if (store_fault_jb)
		siglongjmp(*store_fault_jb, SIGABRT);
}

static void on_watchdog(int sig, siginfo_t *si, void *uc)
{
	(void)si;
	(void)uc;
	if (store_fault_jb)
		siglongjmp(*store_fault_jb, sig);
}

/* Arm (secs > 0) or disarm the watchdog of the outermost read. */
void store_watchdog(int secs)
{
	struct itimerval it = {{0, 0}, {secs, 0}};
	setitimer(ITIMER_VIRTUAL, &it, NULL);
}

void store_guard_install(void)
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
static __thread void *store_owned[8];
/* house: signal-handler state (what a fault cut short frees, GUARDED's) */
__thread int store_nowned;

void store_own(void *p)
{
	if (p && store_nowned < (int)RT_ARRAY_LEN(store_owned))
		store_owned[store_nowned++] = p;
}

void store_disown(void *p)
{
	for (int i = store_nowned - 1; p && i >= 0; i--)
		if (store_owned[i] == p) {
			store_owned[i] = store_owned[--store_nowned];
			return;
		}
}

void store_free_owned(int base)
{
	while (store_nowned > base)
		free(store_owned[--store_nowned]);
}

int store_poison(struct rt_store *s, int sig)
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

/* Callbacks run outside the guard so far (UNGUARDED, store_int.h): the
 * watchdog starts again every 256th. */
/* house: signal-handler state (the watchdog's count, UNGUARDED's) */
__thread unsigned store_callbacks;

/* LMDB's answers for a file that is not (or no longer) a sound store */
int store_damaged_code(int rc)
{
	return rc == MDB_INVALID || rc == MDB_CORRUPTED || rc == MDB_PAGE_NOTFOUND ||
	       rc == MDB_VERSION_MISMATCH || rc == MDB_BAD_TXN || rc == MDB_BAD_VALSIZE;
}

int store_lmdb_fail(struct rt_store *s, const char *what, int rc)
{
	snprintf(s->err, sizeof(s->err), "%s: %s", what, mdb_strerror(rc));
	if (rc > 0 && rc < 4096)
		return -rc; /* errno from the OS */
	if (store_damaged_code(rc))
		return RT_E_CORRUPT;
	return RT_E_STORE;
}

/* Begin a transaction, following a map grown by another process. */
int store_txn_begin(struct rt_store *s, unsigned flags, MDB_txn **txn)
{
	for (int tries = 0; tries < 4; tries++) {
		int rc = mdb_txn_begin(s->env, NULL, flags, txn);
		if (rc != MDB_MAP_RESIZED)
			return rc ? store_lmdb_fail(s, "begin transaction", rc) : 0;
		mdb_env_set_mapsize(s->env, 0);
	}
	return store_lmdb_fail(s, "begin transaction", MDB_MAP_RESIZED);
}

/* Where LMDB mapped data.mdb in this process: LMDB only reports the
 * address of a fixed map, so find the mapping of the file's inode in
 * /proc/self/maps (our own process: never under a fixture root). */
int store_find_map(struct rt_store *s)
{
	int fd;
	struct stat st;
	MDB_envinfo info;
	if (mdb_env_get_fd(s->env, &fd) || fstat(fd, &st) || mdb_env_info(s->env, &info))
		return -1;
	/* raw: /proc, read-only */
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

/* Where the data file's bytes are mapped now: the map's address, and the
 * smaller of the map and the file (past the file's end a read faults). */
static int value_bounds(struct rt_store *s)
{
	struct stat st;
	int fd;
	if (store_find_map(s) || mdb_env_get_fd(s->env, &fd) || fstat(fd, &st) < 0)
		return -1;
	s->vbase = (uintptr_t)s->map_addr;
	s->vlen = (size_t)st.st_size < s->map_len ? (size_t)st.st_size : s->map_len;
	return 0;
}

static int value_inside(const struct rt_store *s, const MDB_val *v)
{
	uintptr_t p = (uintptr_t)v->mv_data;
	return p >= s->vbase && v->mv_size <= s->vlen && p - s->vbase <= s->vlen - v->mv_size;
}

/* Without /proc the map cannot be found: the size alone is checked. */
static int size_fits_file(struct rt_store *s, const MDB_val *v)
{
	struct stat st;
	int fd;
	return mdb_env_get_fd(s->env, &fd) == 0 && fstat(fd, &st) == 0 &&
	       v->mv_size <= (size_t)st.st_size;
}

int store_value_check(struct rt_store *s, const MDB_val *v)
{
	if (value_inside(s, v))
		return 0;
	int known = value_bounds(s) == 0;
	if (known ? value_inside(s, v) : size_fits_file(s, v))
		return 0;
	snprintf(s->err, sizeof(s->err),
	         "a value of %zu bytes runs past the data file (a damaged page)", v->mv_size);
	return RT_E_CORRUPT;
}
