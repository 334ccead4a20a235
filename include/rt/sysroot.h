/*
 * sysroot.h - where /proc and /sys are.
 *
 * Every /proc and /sys path is resolved under a root that tests can point
 * at a fixture tree: $RT_PROC_ROOT and $RT_SYS_ROOT (testing aids; default
 * /proc and /sys). Filesystem sizes go through a hook for the same reason.
 */
#ifndef RT_SYSROOT_H
#define RT_SYSROOT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum rt_root { RT_PROC, RT_SYS };

/* Re-read the environment (tests may change it between runs). */
void rt_sysroot_init(void);
/* The root /proc or /sys paths go under ("/proc", "/sys" unless a test
 * set one). Never NULL. */
const char *rt_root(enum rt_root which);

/* Build "<root>/<rel>" into buf. Returns 0 or -ENAMETOOLONG. */
int rt_path(char *buf, size_t cap, enum rt_root which, const char *rel);

/* open(O_RDONLY|O_CLOEXEC) of a path under a root. -errno on failure. */
int rt_open(enum rt_root which, const char *rel);

/*
 * Read a whole small file (under a root) into buf, NUL-terminated, with
 * trailing whitespace trimmed. Returns the length or -errno.
 */
ssize_t rt_read_small(enum rt_root which, const char *rel, char *buf, size_t cap);

/*
 * pread from offset 0 into buf (cap-1 bytes at most), NUL-terminate.
 * Returns the length or -errno. A seq_file hands over up to a page of
 * whole records per read and single-show files come whole, so a short
 * read of less than half a page is the end of the file (no second pread
 * to be told so); longer ones are continued until end of file.
 */
ssize_t rt_pread_all(int fd, char *buf, size_t cap);

/*
 * A sysfs attribute (disks, NICs, GPUs: the one reader of them). The path
 * is printf-formatted, relative to /sys under $RT_SYS_ROOT. rt_sys_attr
 * puts the value, trailing whitespace trimmed, into out ("" when missing
 * or unreadable) and returns its length or -errno; the _u64 form parses it
 * as a decimal number (0, or -1 when missing or not a number).
 */
ssize_t rt_sys_attr(char *out, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int rt_sys_attr_u64(uint64_t *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The parsing of those two, for bytes from anywhere (fuzzed): an optional
 * sign (i64), digits, then only whitespace. 0 or -1; out of range: -1. */
int rt_parse_attr_u64(const char *buf, size_t len, uint64_t *v);
int rt_parse_attr_i64(const char *buf, size_t len, int64_t *v);

/* One pread from offset 0 (a sysfs attribute: always whole in one read),
 * NUL-terminated. Returns the length, -EINVAL (cap 0) or -errno. */
ssize_t rt_pread_once(int fd, char *buf, size_t cap);

/* pread until the file says end of file (files whose records may exceed a
 * page, such as mountinfo with long paths), at most cap-1 bytes,
 * NUL-terminated. Returns the length, -EINVAL (cap 0) or -errno. */
ssize_t rt_pread_to_eof(int fd, char *buf, size_t cap);

/* This machine's id: the DMI board asset tag (set by some clouds), else
 * /etc/machine-id; "" when neither is there. What run metadata calls
 * host.host_id, so a reader can tell whether a run was recorded here. */
void rt_host_id(char *buf, size_t cap);

struct rt_fsstat {
	uint64_t total, free, avail; /* bytes */
};
/* A mount point's sizes: 0 with out filled, or -errno (statvfs's). */
typedef int (*rt_statvfs_fn)(const char *mount_point, struct rt_fsstat *out);
int rt_statvfs(const char *mount_point, struct rt_fsstat *out);
/* Sizes from fn from now on (tests: a fixture's); NULL: statvfs again. */
void rt_statvfs_use(rt_statvfs_fn fn);

#endif
