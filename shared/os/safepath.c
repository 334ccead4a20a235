/*
 * safepath.c - walking a path without following another user's links
 * (safefile.h: rt_safe_dir_open, rt_dir_shared).
 *
 * The kernel follows every symbolic link on a path, whoever made it (its
 * protected_symlinks rule only covers sticky world-writable directories).
 * Run as root, rt was led by a link another user planted in their own
 * directory to write into /etc or onto a device. So a path rt writes
 * through is walked here one component at a time, each opened with
 * O_PATH|O_NOFOLLOW and checked on the descriptor (no check-then-open
 * race): a link is followed only when it is this user's or root's, and the
 * directory reached is held open, so what is created in it later is created
 * in the directory that was checked, whatever is renamed meanwhile.
 */
#define _GNU_SOURCE
#include "rt/safefile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "rt/common.h"

#define MAX_HOPS 40
#define PROC_MAGIC 0x9fa0

int rt_link_trusted(const struct stat *st)
{
	return st->st_uid == geteuid() || st->st_uid == 0;
}

int rt_dir_shared(const struct stat *st)
{
	return (st->st_uid != geteuid() && st->st_uid != 0) || (st->st_mode & S_IWOTH) ||
	       ((st->st_mode & S_IWGRP) && st->st_gid != getegid());
}

int rt_on_procfs(int fd)
{
	struct statfs fs;
	return fstatfs(fd, &fs) == 0 && fs.f_type == PROC_MAGIC;
}

static int refuse_link(const char *path, const struct stat *st, char *why, size_t cap)
{
	snprintf(why, cap,
	         "'%s' leads through a symbolic link of another user's (uid %u); rt does not "
	         "follow it: give the real path",
	         path, (unsigned)st->st_uid);
	return RT_E_UNSAFE;
}

/* Replace the walk's remaining path with target + "/" + rest. */
static int splice_target(char *rest, size_t cap, const char *target, const char *after)
{
	char tmp[2 * PATH_MAX];
	int n = snprintf(tmp, sizeof(tmp), "%s%s%s", target, *after ? "/" : "", after);
	if (n < 0 || (size_t)n >= cap || (size_t)n >= sizeof(tmp))
		return -ENAMETOOLONG;
	memcpy(rest, tmp, (size_t)n + 1);
	return 0;
}

/* The next component of *p, copied to comp; *p moves past it. */
static int next_component(const char **p, char *comp, size_t cap)
{
	while (**p == '/')
		(*p)++;
	size_t n = strcspn(*p, "/");
	if (n >= cap)
		return -ENAMETOOLONG;
	memcpy(comp, *p, n);
	comp[n] = '\0';
	*p += n;
	while (**p == '/')
		(*p)++;
	return (int)n;
}

/* Open comp in cur as a path descriptor without following it; made as a
 * directory (0700) first when mkdirs and it is not there. */
static int open_component(int cur, const char *comp, int mkdirs)
{
	int fd = openat(cur, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT && mkdirs) {
		if (mkdirat(cur, comp, 0700) < 0 && errno != EEXIST)
			return -errno;
		fd = openat(cur, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	}
	return fd < 0 ? -errno : fd;
}

static int start_at(const char *path)
{
	int fd = open(path[0] == '/' ? "/" : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/*
 * Follow the link open as fd (in directory cur, which this takes): a link
 * in /proc (a magic link such as /proc/self/cwd) is opened by the kernel;
 * any other is read and its target spliced into rest before after.
 * Returns the directory to go on from, or -errno (cur closed either way).
 */
static int follow(int cur, int fd, const char *comp, char *rest, size_t cap, const char *after)
{
	char target[PATH_MAX];
	int next = cur;
	if (rt_on_procfs(cur)) {
		next = openat(cur, comp, O_PATH | O_DIRECTORY | O_CLOEXEC);
		next = next < 0 ? -errno : next;
		target[0] = '\0';
	} else {
		ssize_t n = readlinkat(fd, "", target, sizeof(target) - 1);
		if (n <= 0)
			next = n < 0 ? -errno : -ENOENT;
		else
			target[n] = '\0';
		if (next >= 0 && target[0] == '/')
			next = start_at("/");
	}
	if (next >= 0 && splice_target(rest, cap, target, after) < 0) {
		if (next != cur)
			close(next);
		next = -ENAMETOOLONG;
	}
	if (next != cur)
		close(cur);
	return next;
}

/* One component opened as fd with st, walking from *cur: a directory
 * becomes the current one; a trusted link is followed (rest rewritten,
 * *p reset). 0 or -errno / RT_E_UNSAFE with why. */
static int step(int *cur, int fd, const struct stat *st, const char *comp, char *rest, size_t cap,
                const char **p, int *hops, const char *dir, char *why, size_t wcap)
{
	if (S_ISDIR(st->st_mode)) {
		close(*cur);
		*cur = fd;
		return 0;
	}
	int rc = !S_ISLNK(st->st_mode)  ? -ENOTDIR
	         : !rt_link_trusted(st) ? refuse_link(dir, st, why, wcap)
	         : ++*hops > MAX_HOPS   ? -ELOOP
	                                : 0;
	if (!rc) {
		char after[2 * PATH_MAX];
		snprintf(after, sizeof(after), "%s", *p);
		rc = follow(*cur, fd, comp, rest, cap, after);
		*cur = rc;
		*p = rest;
		rc = rc < 0 ? rc : 0;
	}
	close(fd);
	if (rc < 0 && rc != RT_E_UNSAFE)
		snprintf(why, wcap, "'%s': %s", dir, strerror(-rc));
	return rc;
}

int rt_safe_dir_open(const char *dir, int mkdirs, char *why, size_t cap)
{
	char rest[2 * PATH_MAX], comp[NAME_MAX + 1];
	int hops = 0, rc = 0;
	if (snprintf(rest, sizeof(rest), "%s", dir) >= (int)sizeof(rest))
		rc = -ENAMETOOLONG;
	int cur = rc ? rc : start_at(rest);
	const char *p = rest;
	while (cur >= 0 && *p) {
		int n = next_component(&p, comp, sizeof(comp));
		if (n == 0 || (n == 1 && comp[0] == '.'))
			continue;
		int fd = n < 0 ? n : open_component(cur, comp, mkdirs);
		struct stat st;
		if (fd >= 0 && fstat(fd, &st) < 0) {
			close(fd);
			fd = -errno;
		}
		if (fd < 0) {
			close(cur);
			cur = fd;
			break;
		}
		if ((rc =
		         step(&cur, fd, &st, comp, rest, sizeof(rest), &p, &hops, dir, why, cap))) {
			if (cur >= 0)
				close(cur);
			return rc;
		}
	}
	if (cur < 0)
		snprintf(why, cap, "'%s': %s", dir, strerror(-cur));
	return cur;
}
