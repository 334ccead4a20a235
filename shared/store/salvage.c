/*
 * salvage.c - finishing the runs of recorders that died (see salvage.h).
 *
 * A recorder holds an exclusive flock on its ring for its whole life, so a
 * ring without a holder is a dead writer's, whatever its pid became. A run
 * without a ring (no shm directory, or one not made yet) is judged by its
 * recorder's pid.
 */
#define _GNU_SOURCE
#include "rt/salvage.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/file.h>
#include <unistd.h>

#include "rt/common.h"
#include "rt/ring.h"
#include "rt/runmeta.h"
#include "rt/safefile.h"

#define MAX_PER_PASS 64

struct dead_ctx {
	struct rt_store *store;
	uint64_t ids[MAX_PER_PASS];
	int n;
};

/* The ring of a run, under today's name or (rt before store ids) the
 * directory's. */
static int open_ring(struct rt_store *s, uint64_t run, struct rt_ring **ring, char *path,
                     size_t cap)
{
	if (rt_ring_path(path, cap, rt_store_ring_key(s), run) == 0 &&
	    rt_ring_open(path, ring) == 0)
		return 0;
	if (rt_ring_path(path, cap, rt_store_dir(s), run) == 0 && rt_ring_open(path, ring) == 0)
		return 0;
	return -ENOENT;
}

static int dead_cb(void *vctx, uint64_t run, const char *meta, size_t len)
{
	struct dead_ctx *x = vctx;
	struct rt_run_fields f;
	if (rt_runmeta_read(meta, len, &f) || rt_run_status_of(f.status) != RT_RUN_RUNNING ||
	    x->n >= MAX_PER_PASS)
		return 0;
	char path[4096];
	struct rt_ring *ring;
	int alive;
	if (open_ring(x->store, run, &ring, path, sizeof(path)) == 0) {
		alive = rt_ring_writer_alive(ring);
		rt_ring_close(ring, 0);
	} else { /* maybe still starting up, or running without a ring */
		pid_t pid = (pid_t)f.recorder_pid;
		alive = pid > 0 && pid != getpid() && (kill(pid, 0) == 0 || errno == EPERM);
	}
	if (!alive)
		x->ids[x->n++] = run;
	return 0;
}

/*
 * A crashed run's ring that cannot be opened (its recorder died while it
 * made it: no header yet) holds nothing to salvage and would stay in the
 * shm directory for ever: removed when it is a regular file of ours that
 * no writer holds (its flock), and still the file that was checked.
 */
static void remove_unreadable_ring(const char *path)
{
	/* raw: never through a link, never blocking; checked as ours before the unlink */
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	struct stat st, now;
	if (fd < 0)
		return;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
	    flock(fd, LOCK_EX | LOCK_NB) == 0 && lstat(path, &now) == 0 &&
	    now.st_ino == st.st_ino && now.st_dev == st.st_dev)
		/* raw: checked above: our own file, the same inode, in the sticky shm directory (no one else can rename it) */
		unlink(path);
	close(fd);
}

ssize_t rt_salvage_read_side_meta(const char *ring_path, char *buf, size_t cap,
                                  struct rt_run_fields *f)
{
	char side[4200], why[256];
	struct rt_run_fields ff;
	if (snprintf(side, sizeof(side), "%s.meta", ring_path) >= (int)sizeof(side))
		return -1;
	int fd = rt_open_own(side, O_RDONLY, 0, why, sizeof(why));
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, cap);
	close(fd);
	if (n <= 0 || (size_t)n >= cap || rt_runmeta_read(buf, (size_t)n, f ? f : &ff))
		return -1;
	return n;
}

static int finish_run(struct rt_store *s, uint64_t run, unsigned *samples)
{
	char path[4096];
	struct rt_ring *ring;
	int rc = 0;
	if (open_ring(s, run, &ring, path, sizeof(path)) == 0) {
		unsigned added = 0;
		if (rt_ring_writer_alive(ring)) { /* a recorder took it over since */
			rt_ring_close(ring, 0);
			return 0;
		}
		rc = rt_store_salvage(s, ring, &added);
		*samples += added;
		rt_ring_close(ring, 0);
		if (rc)
			return rc; /* keep the ring: someone who can write may salvage it */
	}
	/* a recorder that could not write its store left the run's final
	 * metadata beside its ring: the run is complete now */
	char side[4200];
	if (open_ring(s, run, &ring, path, sizeof(path)) == 0) {
		rt_ring_close(ring, 0);
		snprintf(side, sizeof(side), "%s.meta", path);
		char fin[65536];
		ssize_t n = rt_salvage_read_side_meta(path, fin, sizeof(fin), NULL);
		if (n > 0 && (rc = rt_store_put_meta(s, run, fin, (size_t)n)) == 0) {
			/* raw: our ring's side file in the sticky shm directory (only its owner or root can remove or rename it) */
			unlink(side);
			if (open_ring(s, run, &ring, path, sizeof(path)) == 0) {
				rt_ring_close(ring, 0);
				/* raw: our ring, just opened and checked, in the sticky shm directory */
				unlink(path);
			}
			return 0;
		}
	}
	char *meta;
	size_t len;
	struct rt_buf b = {0};
	if ((rc = rt_store_get_meta(s, run, &meta, &len)))
		return rc;
	/* only a run still "running": another salvager may have finished it */
	struct rt_run_fields f;
	if (rt_runmeta_read(meta, len, &f) == 0 && rt_run_status_of(f.status) == RT_RUN_RUNNING &&
	    (rc = rt_runmeta_set_status(meta, len, rt_run_status_name(RT_RUN_CRASHED), &b)) == 0)
		rc = rt_store_put_meta(s, run, b.p, b.len);
	free(meta);
	rt_buf_free(&b);
	if (rc == 0 && open_ring(s, run, &ring, path, sizeof(path)) == 0) {
		rt_ring_close(ring, 0);
		/* raw: our ring, just opened and checked, in the sticky shm directory */
		unlink(path);
	} else if (rc == 0 && rt_ring_path(path, sizeof(path), rt_store_ring_key(s), run) == 0) {
		remove_unreadable_ring(path);
	}
	return rc;
}

int rt_salvage_dead_runs(struct rt_store *s, unsigned *runs, unsigned *samples)
{
	struct dead_ctx x = {.store = s};
	unsigned nr = 0, ns = 0;
	int ret = 0;
	rt_store_list_runs(s, dead_cb, &x);
	/* salvage writes into pages a dead recorder left: looked at first */
	if (x.n && rt_store_check_pages(s)) {
		if (runs)
			*runs = 0;
		if (samples)
			*samples = 0;
		return RT_E_CORRUPT;
	}
	for (int i = 0; i < x.n; i++) {
		int rc = finish_run(s, x.ids[i], &ns);
		if (rc == 0)
			nr++;
		else if (!ret)
			ret = rc;
	}
	if (runs)
		*runs = nr;
	if (samples)
		*samples = ns;
	return ret;
}
