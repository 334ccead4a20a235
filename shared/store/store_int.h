/*
 * store_int.h - what the store's own files share, and nothing else
 * includes: the handle (struct rt_store), LMDB's layout constants, the guard
 * every entry point runs under, and the helpers one file owns and the
 * others call. include/rt/store.h is the contract; this is the inside.
 *
 * The files, by responsibility (docs/architecture.md):
 *   store_guard.c  the fault guard around LMDB, LMDB's error codes
 *   store_open.c   where the store is, opening it, trusting it, closing
 *   store_write.c  appends, group commits, sync, salvage of a ring
 *   store_read.c   metadata, inventories, scans, lookups, the run list
 *   store_cap.c    deleting runs, the size cap, the map's RSS, compaction
 *   store_check.c  verify: metadata, the ends of samples, LMDB's pages
 *
 * Keys are big-endian so LMDB's byte order is (run, seq) order and appends
 * of a live run hit the right edge of the B-tree (MDB_APPEND). The
 * environment is opened MDB_NOSYNC|MDB_NOTLS: commits reach the page cache
 * at once (a killed process loses nothing it committed) and the recorder
 * calls rt_store_sync() every few seconds to bound the loss on power
 * failure. MDB_NOTLS lets one thread hold nested short read transactions.
 */
#ifndef RT_STORE_INT_H
#define RT_STORE_INT_H

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
#include "rt/block.h"
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
	/* each run's last packed record (its samples are packed against it):
	 * one writer may append several runs' samples to one group (the
	 * node's sampler); the first entry is made at open */
	struct run_pack {
		uint64_t run; /* 0: free */
		struct rt_pack_state st;
		/* the run's open block (rt/block.h) as the store last holds it, or
		 * NULL (without memory: its samples go alone); dirty: changed by a
		 * try of the group commit not yet committed; touched: by this one */
		struct rt_block *blk;
		int blk_dirty, blk_touched;
	} * packs;
	unsigned npacks;
	struct pending {
		uint64_t run, seq;
		uint32_t off, len;
		unsigned pack; /* its run's in packs */
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
	uintptr_t vbase;        /* the data file's mapped bytes, as last looked up */
	size_t vlen;            /* (store_value_check) */
};

/* A cycle in a damaged B-tree sends LMDB round it for ever: a read that
 * burns this much CPU time in one call is given up the same way. */
#define WATCHDOG_CPU_SECS 3

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
		sigjmp_buf g_jb_, *volatile g_prev_ = store_fault_jb;                              \
		volatile int g_base_ = store_nowned;                                               \
		int g_sig_;                                                                        \
		if ((s)->poisoned) {                                                               \
			g_rc_ = RT_E_CORRUPT;                                                      \
		} else if ((g_sig_ = sigsetjmp(g_jb_, 0)) != 0) {                                  \
			store_fault_jb = g_prev_;                                                  \
			if ((rd) && !g_prev_)                                                      \
				store_watchdog(0);                                                 \
			store_free_owned(g_base_);                                                 \
			g_rc_ = store_poison((s), g_sig_);                                         \
		} else {                                                                           \
			store_guard_install();                                                     \
			if ((rd) && !g_prev_)                                                      \
				store_watchdog(WATCHDOG_CPU_SECS);                                 \
			store_fault_jb = &g_jb_;                                                   \
			g_rc_ = (call);                                                            \
			store_fault_jb = g_prev_;                                                  \
			if ((rd) && !g_prev_)                                                      \
				store_watchdog(0);                                                 \
		}                                                                                  \
		g_rc_;                                                                             \
	})
/* Run a caller's callback outside the guard: its faults are its own, and
 * the time it takes is not the read's (the watchdog starts again now and
 * then: a long scan is many short reads). */
#define UNGUARDED(expr)                                                                            \
	({                                                                                         \
		sigjmp_buf *g_save_ = store_fault_jb;                                              \
		if ((++store_callbacks & 255) == 0)                                                \
			store_watchdog(WATCHDOG_CPU_SECS);                                         \
		store_fault_jb = NULL;                                                             \
		int g_r_ = (expr);                                                                 \
		store_fault_jb = g_save_;                                                          \
		g_r_;                                                                              \
	})

static inline void put_be64(unsigned char *p, uint64_t v)
{
	for (int i = 7; i >= 0; i--, v >>= 8)
		p[i] = (unsigned char)v;
}

static inline uint64_t get_be64(const unsigned char *p)
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v = (v << 8) | p[i];
	return v;
}

typedef int (*write_fn)(struct rt_store *s, MDB_txn *txn, void *ctx);

/* store_guard.c */
extern __thread sigjmp_buf *store_fault_jb;
void store_on_assert(MDB_env *env, const char *msg);
void store_watchdog(int secs);
void store_guard_install(void);
extern __thread int store_nowned;
void store_own(void *p);
void store_disown(void *p);
void store_free_owned(int base);
int store_poison(struct rt_store *s, int sig);
extern __thread unsigned store_callbacks;
int store_damaged_code(int rc);
int store_lmdb_fail(struct rt_store *s, const char *what, int rc);
int store_txn_begin(struct rt_store *s, unsigned flags, MDB_txn **txn);
/* A value read in a read-only transaction, checked before it is copied or
 * unpacked: it must lie inside the data file as mapped (a damaged overflow
 * page's count gives sizes up to 4 GiB that run past it). 0, or
 * RT_E_CORRUPT with the reason in s->err. */
int store_value_check(struct rt_store *s, const MDB_val *v);
/* store_open.c */
/* the buffer rt_store_refusal() reads (its size in *cap) */
char *store_refusal_buf(size_t *cap);
/* rt_store_open in the directory held open as held (a descriptor the
 * caller walked and checked; dup'ed), or walked from dir when held < 0:
 * dir then only names the store in messages and ring names. */
int store_open_held(const char *dir, int held, int flags, struct rt_store **out);
/* store_write.c */
int store_writers_lock(const char *dir, int how);
int store_with_write(struct rt_store *s, write_fn fn, void *ctx);
/* store_guard.c: where LMDB mapped data.mdb here (s->map_addr, s->map_len),
 * from /proc/self/maps (LMDB reports only a fixed map's address). 0 or -1. */
int store_find_map(struct rt_store *s);
/* store_check.c */
int store_check_lmdb_pages(struct rt_store *s);

#endif
