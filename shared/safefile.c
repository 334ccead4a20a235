/* safefile.c - opening and writing files by name safely (safefile.h). */
#define _GNU_SOURCE
#include "rt/safefile.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
	int fd = open(path, flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY, mode);
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

int rt_check_own_dir(const char *dir, char *why, size_t cap)
{
	struct stat st;
	if (stat(dir, &st) < 0) {
		snprintf(why, cap, "'%s': %s", dir, strerror(errno));
		return -errno;
	}
	return check_stat(&st, dir, S_IFDIR, why, cap);
}

/* /dev/stdout, /dev/fd/N, /proc/self/fd/N: links that are meant */
static int system_link(const char *path)
{
	return !strncmp(path, "/dev/", 5) || !strncmp(path, "/proc/", 6);
}

int rt_outfile_open(struct rt_outfile *o, const char *path, mode_t mode, char *why, size_t cap)
{
	struct stat st, lst;
	memset(o, 0, sizeof(*o));
	o->fd = -1;
	if (snprintf(o->path, sizeof(o->path), "%s", path) >= (int)sizeof(o->path)) {
		snprintf(why, cap, "the path is too long");
		return -ENAMETOOLONG;
	}
	int there = stat(path, &st) == 0;
	int link = lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode);
	if (there && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
		/* a device, FIFO or socket: written where it is, never replaced;
		 * a FIFO nobody reads fails here instead of blocking */
		o->in_place = 1;
		o->fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
		if (o->fd < 0) {
			int e = errno;
			snprintf(why, cap, "%s",
			         e == ENXIO ? "a FIFO with no reader" : strerror(e));
			return -e;
		}
		set_blocking(o->fd);
		return 0;
	}
	if (there && S_ISDIR(st.st_mode)) {
		snprintf(why, cap, "a directory; give a file name");
		return -EISDIR;
	}
	if (link && there && system_link(path)) {
		/* /dev/stdout onto a regular file: write through it, in place */
		o->in_place = 1;
		o->fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
		if (o->fd < 0) {
			snprintf(why, cap, "%s", strerror(errno));
			return -errno;
		}
		return 0;
	}
	/* a regular file, a link (which is replaced, never followed) or
	 * nothing yet: a temporary file beside it, renamed over it at the end */
	char dir[4096], base[4096];
	snprintf(dir, sizeof(dir), "%s", path);
	snprintf(base, sizeof(base), "%s", path);
	const char *d = dirname(dir), *b = basename(base);
	if (snprintf(o->tmp, sizeof(o->tmp), "%s/.%s.rt-XXXXXX", d, b) >= (int)sizeof(o->tmp)) {
		snprintf(why, cap, "the path is too long");
		return -ENAMETOOLONG;
	}
	o->fd = mkostemp(o->tmp, O_CLOEXEC);
	if (o->fd < 0) {
		int e = errno;
		snprintf(why, cap, "%s", strerror(e));
		o->tmp[0] = '\0';
		return -e;
	}
	mode_t um = umask(0);
	umask(um);
	fchmod(o->fd, mode & ~um);
	return 0;
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
		if (rc == 0 && rename(o->tmp, o->path) < 0)
			rc = -errno;
		if (rc)
			unlink(o->tmp);
	}
	return rc;
}

void rt_outfile_abort(struct rt_outfile *o)
{
	if (o->fd >= 0)
		close(o->fd);
	o->fd = -1;
	if (!o->in_place && o->tmp[0])
		unlink(o->tmp);
}

int rt_open_stream_out(const char *path, mode_t mode, char *why, size_t cap)
{
	struct stat st;
	int special = stat(path, &st) == 0 && !S_ISREG(st.st_mode);
	int flags = O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK;
	if (!special) {
		flags |= O_CREAT;
		if (!system_link(path))
			flags |= O_NOFOLLOW;
	}
	int fd = open(path, flags, mode);
	if (fd < 0) {
		int e = errno;
		if (e == ELOOP)
			snprintf(why, cap,
			         "a symbolic link; rt does not write through links: remove "
			         "it, or give the path it points to");
		else
			snprintf(why, cap, "%s",
			         e == ENXIO ? "a FIFO with no reader" : strerror(e));
		return e == ELOOP ? RT_E_UNSAFE : -e;
	}
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
		if (st.st_uid != geteuid()) {
			snprintf(why, cap,
			         "it belongs to another user (uid %u); remove it or choose "
			         "another path",
			         (unsigned)st.st_uid);
			close(fd);
			return RT_E_UNSAFE;
		}
		if (ftruncate(fd, 0) < 0) {
			int e = errno;
			snprintf(why, cap, "%s", strerror(e));
			close(fd);
			return -e;
		}
	}
	set_blocking(fd);
	return fd;
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
