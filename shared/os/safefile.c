/* safefile.c - opening and writing files by name safely (safefile.h). */
#define _GNU_SOURCE
#include "rt/safefile.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "rt/common.h"

static const char *type_name(mode_t m)
{
	return S_ISDIR(m)    ? "a directory"
	       : S_ISFIFO(m) ? "a FIFO"
	       : S_ISCHR(m)  ? "a device"
	       : S_ISBLK(m)  ? "a device"
	       : S_ISSOCK(m) ? "a socket"
	       : S_ISLNK(m)  ? "a symbolic link"
	                     : "a file";
}

static int check_stat(const struct stat *st, const char *path, mode_t want, char *why, size_t cap)
{
	if ((st->st_mode & S_IFMT) != want) {
		snprintf(why, cap, "'%s' is %s, not %s; remove it or choose another path", path,
		         type_name(st->st_mode),
		         want == S_IFDIR ? "a directory" : "a regular file");
		return RT_E_UNSAFE;
	}
	if (st->st_uid != geteuid()) {
		snprintf(why, cap,
		         "'%s' belongs to another user (uid %u), not to you (uid %u); remove it, "
		         "or choose a path of your own",
		         path, (unsigned)st->st_uid, (unsigned)geteuid());
		return RT_E_UNSAFE;
	}
	if ((st->st_mode & S_IWOTH) || ((st->st_mode & S_IWGRP) && st->st_gid != getegid())) {
		snprintf(why, cap,
		         "'%s' can be written by other users (mode %03o); run: chmod go-w '%s'",
		         path, (unsigned)(st->st_mode & 0777), path);
		return RT_E_UNSAFE;
	}
	return 0;
}

int rt_safe_check(int fd, const char *path, mode_t want, char *why, size_t cap)
{
	struct stat st;
	if (fstat(fd, &st) < 0) {
		snprintf(why, cap, "'%s': %s", path, strerror(errno));
		return -errno;
	}
	return check_stat(&st, path, want, why, cap);
}

static void set_blocking(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0 && (fl & O_NONBLOCK))
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
}

int rt_open_own(const char *path, int flags, mode_t mode, char *why, size_t cap)
{
	return rt_open_own_at(AT_FDCWD, path, path, flags, mode, why, cap);
}

int rt_open_own_at(int dirfd, const char *name, const char *path, int flags, mode_t mode, char *why,
                   size_t cap)
{
	int fd = openat(dirfd, name, flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY, mode);
	if (fd < 0) {
		int e = errno;
		if (e == ELOOP)
			snprintf(
			    why, cap,
			    "'%s' is a symbolic link; rt does not follow links here: remove it, "
			    "or give the path it points to",
			    path);
		else
			snprintf(why, cap, "'%s': %s", path, strerror(e));
		return e == ELOOP ? RT_E_UNSAFE : -e;
	}
	int rc = rt_safe_check(fd, path, S_IFREG, why, cap);
	if (rc) {
		close(fd);
		return rc;
	}
	set_blocking(fd);
	return fd;
}

int rt_own_subdir_at(int dirfd, const char *sub, const char *path, int mkdirs, char *why,
                     size_t cap)
{
	int fd = openat(dirfd, sub, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT && mkdirs) {
		if (mkdirat(dirfd, sub, 0700) < 0 && errno != EEXIST)
			return snprintf(why, cap, "'%s': %s", path, strerror(errno)), -errno;
		fd = openat(dirfd, sub, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (fd < 0) {
		int e = errno;
		if (e == ELOOP || e == ENOTDIR)
			snprintf(why, cap,
			         "'%s' is not a directory (a link or a file put there); remove it",
			         path);
		else
			snprintf(why, cap, "'%s': %s", path, strerror(e));
		return e == ELOOP || e == ENOTDIR ? RT_E_UNSAFE : -e;
	}
	int rc = rt_safe_check(fd, path, S_IFDIR, why, cap);
	if (rc) {
		close(fd);
		return rc;
	}
	return fd;
}

/* Where path is: its directory, walked and held open, and its last name
 * looked at without following it. */
struct place {
	int dirfd;
	int shared; /* the directory can be written by another user */
	int there;  /* st is the last name's own (a link's, for a link) */
	int append; /* O_APPEND: written at its end, never truncated */
	struct stat st;
	char dir[PATH_MAX], base[NAME_MAX + 1];
};

static int place_open(struct place *pl, const char *path, char *why, size_t cap)
{
	char d[PATH_MAX], b[PATH_MAX];
	struct stat dst;
	pl->dirfd = -1;
	pl->append = 0; /* (stream_open sets it after) */
	if (snprintf(d, sizeof(d), "%s", path) >= (int)sizeof(d) || !*path)
		return snprintf(why, cap, "the path is too long or empty"), -ENAMETOOLONG;
	snprintf(b, sizeof(b), "%s", path);
	snprintf(pl->dir, sizeof(pl->dir), "%s", dirname(d));
	const char *base = basename(b);
	if (strlen(base) > NAME_MAX || !strcmp(base, "/") || !strcmp(base, ".") ||
	    !strcmp(base, "..") || path[strlen(path) - 1] == '/')
		return snprintf(why, cap, "a directory; give a file name"), -EISDIR;
	snprintf(pl->base, sizeof(pl->base), "%s", base);
	int fd = rt_safe_dir_open(pl->dir, 0, why, cap);
	if (fd < 0)
		return fd;
	if (fstat(fd, &dst) < 0) {
		int e = errno;
		close(fd);
		return snprintf(why, cap, "%s", strerror(e)), -e;
	}
	pl->dirfd = fd;
	pl->shared = rt_dir_shared(&dst);
	pl->there = fstatat(fd, pl->base, &pl->st, AT_SYMLINK_NOFOLLOW) == 0;
	return 0;
}

static void place_close(struct place *pl)
{
	if (pl->dirfd >= 0)
		close(pl->dirfd);
	pl->dirfd = -1;
}

/*
 * What rt may write in place, opened as fd (st): in a directory another
 * user can write, only a file or FIFO of this user's, a regular one with no
 * other name (a hard link to someone's file is not ours to truncate); a
 * regular file anywhere only when it is this user's. 0 or RT_E_UNSAFE.
 */
static int check_in_place(const struct place *pl, const struct stat *st, char *why, size_t cap)
{
	int regular = S_ISREG(st->st_mode);
	if (S_ISDIR(st->st_mode))
		return snprintf(why, cap, "a directory; give a file name"), -EISDIR;
	if ((regular || pl->shared) && st->st_uid != geteuid())
		return snprintf(why, cap,
		                "it belongs to another user (uid %u); remove it or choose "
		                "another path",
		                (unsigned)st->st_uid),
		       RT_E_UNSAFE;
	if (pl->shared && !(regular || S_ISFIFO(st->st_mode)))
		return snprintf(why, cap,
		                "%s in a directory other users can write; rt writes only "
		                "files of its own there",
		                type_name(st->st_mode)),
		       RT_E_UNSAFE;
	if (pl->shared && regular && st->st_nlink > 1)
		return snprintf(why, cap,
		                "it has other names (hard links) in a directory other users "
		                "can write; remove it or choose another path"),
		       RT_E_UNSAFE;
	return 0;
}

/*
 * The path a trusted link at pl leads to, in out: a link is followed only
 * when it is this user's or root's. A link in /proc (/proc/self/fd/1) is
 * opened by the kernel instead: *fd gets it. 0, or RT_E_UNSAFE / -errno.
 */
static int link_next(const struct place *pl, int flags, char *out, size_t ocap, int *fd, char *why,
                     size_t cap)
{
	char target[PATH_MAX];
	*fd = -1;
	if (!rt_link_trusted(&pl->st))
		return snprintf(why, cap,
		                "a symbolic link of another user's (uid %u); rt does not "
		                "write through it: remove it, or give the path it points to",
		                (unsigned)pl->st.st_uid),
		       RT_E_UNSAFE;
	if (rt_on_procfs(pl->dirfd)) {
		*fd = openat(pl->dirfd, pl->base, flags & ~(O_NOFOLLOW | O_CREAT | O_EXCL));
		return *fd < 0 ? snprintf(why, cap, "%s", strerror(errno)), -errno : 0;
	}
	ssize_t n = readlinkat(pl->dirfd, pl->base, target, sizeof(target) - 1);
	if (n <= 0)
		return snprintf(why, cap, "%s", strerror(n < 0 ? errno : ENOENT)), -ENOENT;
	target[n] = '\0';
	int w = target[0] == '/' ? snprintf(out, ocap, "%s", target)
	                         : snprintf(out, ocap, "%s/%s", pl->dir, target);
	return w < 0 || (size_t)w >= ocap ? -ENAMETOOLONG : 0;
}

/* Open what is at pl for writing in place (made O_EXCL when nothing is
 * there yet), and check what was opened. The descriptor or -errno. */
static int open_in_place(struct place *pl, mode_t mode, int create, char *why, size_t cap)
{
	int flags = O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY | pl->append;
	int fd = openat(pl->dirfd, pl->base, flags | (create ? O_CREAT | O_EXCL : 0), mode);
	if (fd < 0) {
		int e = errno;
		snprintf(why, cap, "%s",
		         e == ENXIO ? "a FIFO with no reader"
		         : e == ELOOP || e == EEXIST
		             ? "it changed while rt opened it; remove it or choose another path"
		             : strerror(e));
		return -e;
	}
	struct stat st;
	int rc = fstat(fd, &st) < 0 ? -errno : check_in_place(pl, &st, why, cap);
	if (!rc && S_ISREG(st.st_mode) && !create && !pl->append && ftruncate(fd, 0) < 0)
		rc = -errno, snprintf(why, cap, "%s", strerror(errno));
	if (rc) {
		close(fd);
		return rc;
	}
	if (!pl->append) /* an appender never waits long: rt_write_all's deadline */
		set_blocking(fd);
	return fd;
}

static int stream_open(const char *path, mode_t mode, int append, int hops, char *why, size_t cap)
{
	struct place pl;
	int rc = place_open(&pl, path, why, cap);
	pl.append = append ? O_APPEND : 0;
	if (rc) {
		place_close(&pl);
		return rc;
	}
	if (pl.there && S_ISLNK(pl.st.st_mode)) {
		char next[PATH_MAX];
		int fd = -1;
		rc = hops >= 8 ? (snprintf(why, cap, "%s", strerror(ELOOP)), -ELOOP)
		               : link_next(&pl, O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY, next,
		                           sizeof(next), &fd, why, cap);
		place_close(&pl);
		if (rc || fd >= 0)
			return rc ? rc : append ? fd : (set_blocking(fd), fd);
		return stream_open(next, mode, append, hops + 1, why, cap);
	}
	rc = open_in_place(&pl, mode, !pl.there, why, cap);
	place_close(&pl);
	return rc;
}

int rt_open_stream_out(const char *path, mode_t mode, char *why, size_t cap)
{
	return stream_open(path, mode, 0, 0, why, cap);
}

int rt_open_append_out(const char *path, mode_t mode, char *why, size_t cap)
{
	return stream_open(path, mode, 1, 0, why, cap);
}

/* A temporary file beside the target, named unpredictably, made O_EXCL. */
static int make_temp(struct rt_outfile *o, const struct place *pl, mode_t mode, char *why,
                     size_t cap)
{
	for (int tries = 0; tries < 8; tries++) {
		unsigned char r[6];
		if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
			return snprintf(why, cap, "%s", strerror(errno)), -errno;
		int n = snprintf(o->tmp, sizeof(o->tmp), ".%s.rt-%02x%02x%02x%02x%02x%02x",
		                 pl->base, r[0], r[1], r[2], r[3], r[4], r[5]);
		if (n < 0 || (size_t)n >= sizeof(o->tmp) || n > NAME_MAX)
			return snprintf(why, cap, "the path is too long"), -ENAMETOOLONG;
		o->fd = openat(pl->dirfd, o->tmp,
		               O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (o->fd >= 0) {
			mode_t um = umask(0);
			umask(um);
			fchmod(o->fd, mode & ~um);
			return 0;
		}
		if (errno != EEXIST)
			break;
	}
	int e = errno;
	o->tmp[0] = '\0';
	return snprintf(why, cap, "%s", strerror(e)), -e;
}

/* A link at pl that is followed rather than replaced: a trusted one into
 * /dev or /proc (/dev/stdout, /proc/self/fd/N). */
static int follows_link(const struct place *pl)
{
	char t[16];
	if (!S_ISLNK(pl->st.st_mode) || !rt_link_trusted(&pl->st) || pl->shared)
		return 0;
	if (rt_on_procfs(pl->dirfd))
		return 1;
	ssize_t n = readlinkat(pl->dirfd, pl->base, t, sizeof(t) - 1);
	t[n > 0 ? n : 0] = '\0';
	return !strncmp(t, "/dev/", 5) || !strncmp(t, "/proc/", 6);
}

static int outfile_at(struct rt_outfile *o, struct place *pl, mode_t mode, int hops, char *why,
                      size_t cap);

static int outfile_open(struct rt_outfile *o, const char *path, mode_t mode, int hops, char *why,
                        size_t cap)
{
	struct place pl;
	int rc = place_open(&pl, path, why, cap);
	if (!rc)
		rc = outfile_at(o, &pl, mode, hops, why, cap);
	place_close(&pl);
	return rc;
}

static int outfile_at(struct rt_outfile *o, struct place *pl, mode_t mode, int hops, char *why,
                      size_t cap)
{
	if (pl->there && follows_link(pl)) {
		char next[PATH_MAX];
		int fd = -1;
		int rc = hops >= 8 ? (snprintf(why, cap, "%s", strerror(ELOOP)), -ELOOP)
		                   : link_next(pl, O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY,
		                               next, sizeof(next), &fd, why, cap);
		if (rc || fd >= 0) {
			o->in_place = 1;
			o->fd = fd;
			return rc ? rc : (set_blocking(fd), 0);
		}
		return outfile_open(o, next, mode, hops + 1, why, cap);
	}
	if (pl->there && !S_ISREG(pl->st.st_mode) && !S_ISLNK(pl->st.st_mode)) {
		/* a device, FIFO or socket: written where it is, never replaced */
		o->in_place = 1;
		o->fd = open_in_place(pl, 0, 0, why, cap);
		return o->fd < 0 ? o->fd : 0;
	}
	if (pl->there && S_ISREG(pl->st.st_mode) && pl->st.st_uid != geteuid())
		return snprintf(why, cap,
		                "it belongs to another user (uid %u); remove it or choose "
		                "another path",
		                (unsigned)pl->st.st_uid),
		       RT_E_UNSAFE;
	/* a regular file, a link (replaced, never followed) or nothing yet:
	 * a temporary file beside it, renamed over it at the end */
	snprintf(o->base, sizeof(o->base), "%s", pl->base);
	int rc = make_temp(o, pl, mode, why, cap);
	if (!rc) {
		o->dirfd = pl->dirfd; /* renamed in the directory that was checked */
		pl->dirfd = -1;
	}
	return rc;
}

int rt_outfile_open(struct rt_outfile *o, const char *path, mode_t mode, char *why, size_t cap)
{
	memset(o, 0, sizeof(*o));
	o->fd = o->dirfd = -1;
	if (snprintf(o->path, sizeof(o->path), "%s", path) >= (int)sizeof(o->path)) {
		snprintf(why, cap, "the path is too long");
		return -ENAMETOOLONG;
	}
	int rc = outfile_open(o, path, mode, 0, why, cap);
	if (rc)
		rt_outfile_abort(o);
	return rc;
}

int rt_outfile_open_at(struct rt_outfile *o, int dirfd, const char *name, const char *path,
                       mode_t mode, char *why, size_t cap)
{
	struct place pl;
	memset(o, 0, sizeof(*o));
	memset(&pl, 0, sizeof(pl));
	o->fd = o->dirfd = -1;
	if (snprintf(o->path, sizeof(o->path), "%s", path) >= (int)sizeof(o->path) ||
	    snprintf(pl.base, sizeof(pl.base), "%s", name) >= (int)sizeof(pl.base) || !*name ||
	    strchr(name, '/'))
		return snprintf(why, cap, "the name is too long or not a name"), -ENAMETOOLONG;
	pl.dirfd = fcntl(dirfd, F_DUPFD_CLOEXEC, 3);
	if (pl.dirfd < 0)
		return snprintf(why, cap, "%s", strerror(errno)), -errno;
	/* a file of rt's own in a directory of rt's own: whatever is at name
	 * (a link, a FIFO) is replaced, never followed or written through */
	snprintf(o->base, sizeof(o->base), "%s", pl.base);
	int rc = make_temp(o, &pl, mode, why, cap);
	if (!rc) {
		o->dirfd = pl.dirfd;
		pl.dirfd = -1;
	}
	place_close(&pl);
	if (rc)
		rt_outfile_abort(o);
	return rc;
}

int rt_outfile_commit(struct rt_outfile *o)
{
	int rc = 0;
	if (o->fd < 0)
		return -EBADF;
	if (!o->in_place && fsync(o->fd) < 0)
		rc = -errno;
	if (close(o->fd) < 0 && rc == 0 && errno != EINTR)
		rc = -errno;
	o->fd = -1;
	if (!o->in_place) {
		if (rc == 0 && renameat(o->dirfd, o->tmp, o->dirfd, o->base) < 0)
			rc = -errno;
		if (rc)
			unlinkat(o->dirfd, o->tmp, 0);
	}
	if (o->dirfd >= 0)
		close(o->dirfd);
	o->dirfd = -1;
	return rc;
}

void rt_outfile_abort(struct rt_outfile *o)
{
	if (o->fd >= 0)
		close(o->fd);
	o->fd = -1;
	if (!o->in_place && o->tmp[0] && o->dirfd >= 0)
		unlinkat(o->dirfd, o->tmp, 0);
	if (o->dirfd >= 0)
		close(o->dirfd);
	o->dirfd = -1;
	o->tmp[0] = '\0';
}

int rt_write_all(int fd, const void *buf, size_t len, int timeout_ms)
{
	const char *p = buf;
	struct timespec t0, now;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (len > 0) {
		ssize_t n = write(fd, p, len);
		if (n > 0) {
			p += n;
			len -= (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno != EAGAIN)
			return -errno;
		clock_gettime(CLOCK_MONOTONIC, &now);
		long spent =
		    (long)(now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000;
		if (spent >= timeout_ms)
			return -EAGAIN;
		struct pollfd pf = {.fd = fd, .events = POLLOUT};
		poll(&pf, 1, (int)(timeout_ms - spent));
	}
	return 0;
}
