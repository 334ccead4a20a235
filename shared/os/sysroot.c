/* sysroot.c - /proc and /sys roots, small-file reads, statvfs hook. */
#define _GNU_SOURCE
#include "rt/sysroot.h"

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

static char proc_root[1024] = "/proc";
static char sys_root[1024] = "/sys";

static void set_root(char *dst, size_t cap, const char *env, const char *dflt)
{
	const char *v = getenv(env);
	if (!v || !*v)
		v = dflt;
	snprintf(dst, cap, "%s", v);
	size_t n = strlen(dst);
	while (n > 1 && dst[n - 1] == '/')
		dst[--n] = '\0';
}

void rt_sysroot_init(void)
{
	set_root(proc_root, sizeof(proc_root), "RT_PROC_ROOT", "/proc");
	set_root(sys_root, sizeof(sys_root), "RT_SYS_ROOT", "/sys");
}

const char *rt_root(enum rt_root which)
{
	return which == RT_PROC ? proc_root : sys_root;
}

int rt_path(char *buf, size_t cap, enum rt_root which, const char *rel)
{
	while (*rel == '/')
		rel++;
	int n = snprintf(buf, cap, "%s/%s", rt_root(which), rel);
	return (n < 0 || (size_t)n >= cap) ? -ENAMETOOLONG : 0;
}

int rt_open(enum rt_root which, const char *rel)
{
	char p[4096];
	int rc = rt_path(p, sizeof(p), which, rel);
	if (rc)
		return rc;
	/* raw: /proc and /sys (or a test's fixture tree), read-only */
	int fd = open(p, O_RDONLY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* A seq_file hands over records up to its page-sized buffer per read, so
 * a short read of fewer bytes than half a page (records are shorter than
 * that) is its end; single-show files (stat, meminfo) come whole at once. */
#define EOF_BELOW 2048

static ssize_t pread_loop(int fd, char *buf, size_t cap, int to_eof)
{
	size_t len = 0;
	if (cap == 0)
		return -EINVAL;
	while (len < cap - 1) {
		size_t want = cap - 1 - len;
		ssize_t n = pread(fd, buf + len, want, (off_t)len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		len += (size_t)n;
		if (!to_eof && (size_t)n < want && (size_t)n < EOF_BELOW)
			break; /* no second read to be told so */
	}
	buf[len] = '\0';
	return (ssize_t)len;
}

ssize_t rt_pread_all(int fd, char *buf, size_t cap)
{
	return pread_loop(fd, buf, cap, 0);
}

ssize_t rt_pread_to_eof(int fd, char *buf, size_t cap)
{
	return pread_loop(fd, buf, cap, 1);
}

ssize_t rt_pread_once(int fd, char *buf, size_t cap)
{
	if (cap == 0)
		return -EINVAL;
	ssize_t n;
	do
		n = pread(fd, buf, cap - 1, 0);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return n;
}

ssize_t rt_read_small(enum rt_root which, const char *rel, char *buf, size_t cap)
{
	int fd = rt_open(which, rel);
	if (fd < 0) {
		if (cap)
			buf[0] = '\0';
		return fd;
	}
	ssize_t n = rt_pread_all(fd, buf, cap);
	close(fd);
	if (n < 0) {
		buf[0] = '\0';
		return n;
	}
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' ' || buf[n - 1] == '\t' ||
	                 buf[n - 1] == '\r'))
		buf[--n] = '\0';
	return n;
}

static int real_statvfs(const char *mp, struct rt_fsstat *out)
{
	struct statvfs sv;
	if (statvfs(mp, &sv) < 0)
		return -errno;
	uint64_t f = sv.f_frsize ? sv.f_frsize : sv.f_bsize;
	out->total = (uint64_t)sv.f_blocks * f;
	out->free = (uint64_t)sv.f_bfree * f;
	out->avail = (uint64_t)sv.f_bavail * f;
	return 0;
}

static rt_statvfs_fn statvfs_fn = real_statvfs;

int rt_statvfs(const char *mount_point, struct rt_fsstat *out)
{
	return statvfs_fn(mount_point, out);
}

void rt_statvfs_use(rt_statvfs_fn fn)
{
	statvfs_fn = fn ? fn : real_statvfs;
}

void rt_host_id(char *buf, size_t cap)
{
	char tag[128];
	buf[0] = '\0';
	if (rt_read_small(RT_SYS, "class/dmi/id/board_asset_tag", tag, sizeof(tag)) > 0 &&
	    strcmp(tag, "Not Specified") && strcmp(tag, "None")) {
		snprintf(buf, cap, "%s", tag);
		return;
	}
	/* raw: the system's machine id, read-only */
	FILE *m = fopen("/etc/machine-id", "r");
	if (m && fgets(tag, sizeof(tag), m)) {
		tag[strcspn(tag, "\n")] = '\0';
		snprintf(buf, cap, "%s", tag);
	}
	if (m)
		fclose(m);
}

/* Digits at *p (after blanks), then only whitespace to end: their value.
 * 0, or -1 for no digits, anything after them, or more than 2^64 - 1. */
static int attr_digits(const char *p, const char *end, uint64_t *out)
{
	uint64_t x = 0;
	const char *digits = p;
	for (; p < end && *p >= '0' && *p <= '9'; p++) {
		if (x > (UINT64_MAX - (uint64_t)(*p - '0')) / 10)
			return -1;
		x = x * 10 + (uint64_t)(*p - '0');
	}
	if (p == digits)
		return -1;
	for (; p < end; p++)
		if (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\r')
			return -1;
	*out = x;
	return 0;
}

static const char *skip_blanks(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	return p;
}

int rt_parse_attr_i64(const char *buf, size_t len, int64_t *v)
{
	const char *end = buf + len, *p = skip_blanks(buf, end);
	int neg = p < end && *p == '-';
	p += neg || (p < end && *p == '+');
	uint64_t x;
	if (attr_digits(p, end, &x) || x > (uint64_t)INT64_MAX + (uint64_t)neg)
		return -1;
	*v = neg ? (int64_t)(0 - x) : (int64_t)x;
	return 0;
}

int rt_parse_attr_u64(const char *buf, size_t len, uint64_t *v)
{
	const char *end = buf + len;
	return attr_digits(skip_blanks(buf, end), end, v);
}

__attribute__((format(printf, 3, 0))) static ssize_t vattr(char *out, size_t cap, const char *fmt,
                                                           va_list ap)
{
	char rel[1024];
	int n = vsnprintf(rel, sizeof(rel), fmt, ap);
	if (n < 0 || (size_t)n >= sizeof(rel)) {
		if (cap)
			out[0] = '\0';
		return -ENAMETOOLONG;
	}
	return rt_read_small(RT_SYS, rel, out, cap);
}

ssize_t rt_sys_attr(char *out, size_t cap, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	ssize_t n = vattr(out, cap, fmt, ap);
	va_end(ap);
	if (n < 0 && cap)
		out[0] = '\0';
	return n;
}

int rt_sys_attr_u64(uint64_t *v, const char *fmt, ...)
{
	char b[64];
	va_list ap;
	va_start(ap, fmt);
	ssize_t n = vattr(b, sizeof(b), fmt, ap);
	va_end(ap);
	return n > 0 ? rt_parse_attr_u64(b, (size_t)n, v) : -1;
}
