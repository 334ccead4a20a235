/*
 * safefile.h - files rt opens by name, safe from what other local users
 * planted.
 *
 * Whatever rt reads or writes by name in a place others can reach (a shared
 * working directory, /tmp, /dev/shm) is opened without following a symbolic
 * link and without blocking (a FIFO never hangs an open), and checked with
 * fstat before use: the right type, owned by this user, not writable by
 * other users (group-writable only for this user's own group: Debian's
 * user-private groups). Refusals come with one line saying what is wrong and
 * how to fix it, as ssh's StrictModes does.
 *
 * Files rt writes by name are replaced atomically when they are regular
 * (a temporary file with an unpredictable name, made O_EXCL|O_NOFOLLOW in
 * the same directory, then renamed over the target), and written in place,
 * never replaced, when they are a device, a FIFO or a socket (/dev/null,
 * /dev/stdout).
 */
#ifndef RT_SAFEFILE_H
#define RT_SAFEFILE_H

#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

/*
 * Check an open file: of type want (S_IFREG, S_IFDIR), this user's, not
 * writable by others. 0, or RT_E_UNSAFE with the reason in why (which
 * names path).
 */
int rt_safe_check(int fd, const char *path, mode_t want, char *why, size_t cap);

/*
 * Open path (a file of this user's: config, checkpoint, cache) with flags
 * (O_RDONLY, O_RDWR, O_CREAT...) plus O_NOFOLLOW|O_NONBLOCK|O_CLOEXEC|
 * O_NOCTTY, check it, and return the descriptor in blocking mode; -errno
 * (ENOENT: not there) or RT_E_UNSAFE, with why filled.
 */
int rt_open_own(const char *path, int flags, mode_t mode, char *why, size_t cap);
/* The same for name in the directory held open as dirfd (path names it
 * in why): the descriptor, -errno or RT_E_UNSAFE as rt_open_own. */
int rt_open_own_at(int dirfd, const char *name, const char *path, int flags, mode_t mode, char *why,
                   size_t cap);

/*
 * Open sub in the directory held as dirfd (made 0700 when mkdirs and
 * missing), never through a link, and check it is a directory of this
 * user's that no one else can write (path names it in why). The O_PATH
 * descriptor; -errno (ENOENT: not there, mkdirs 0); RT_E_UNSAFE when it is
 * a link, a file, another user's or writable by others.
 */
int rt_own_subdir_at(int dirfd, const char *sub, const char *path, int mkdirs, char *why,
                     size_t cap);
/*
 * Open the directory dir as an O_PATH descriptor, walking it one component
 * at a time without following a symbolic link another user made (this
 * user's and root's are followed; /proc's magic links by the kernel);
 * missing directories are made 0700 when mkdirs. The descriptor, or -errno
 * / RT_E_UNSAFE with why (which names dir).
 */
int rt_safe_dir_open(const char *dir, int mkdirs, char *why, size_t cap);
/* 1 when a directory (its stat) can be written by a user other than this
 * one (and root): another's, world-writable, or group-writable for a group
 * not ours; else 0. */
int rt_dir_shared(const struct stat *st);
/* 1 when a link (its lstat) is one rt follows: this user's or root's;
 * else 0. */
int rt_link_trusted(const struct stat *st);
/* 1 when fd is on /proc, 0 when not or when fstatfs fails. */
int rt_on_procfs(int fd);

/* A file being written by name (see above). */
struct rt_outfile {
	int fd;
	int in_place; /* a device, FIFO or socket: written where it is */
	int dirfd;    /* the directory checked, where tmp is renamed to base */
	char path[4096];
	char base[256];
	char tmp[300]; /* the temporary file's name, renamed over base on commit */
};

/*
 * Start writing path with mode (0600 private, 0644 public, before umask).
 * A FIFO with no reader, or one that is full, never blocks: writes to it
 * fail with EAGAIN (rt_write_all's deadline). 0 or -errno with why (the
 * reason alone: the caller names the path).
 */
int rt_outfile_open(struct rt_outfile *o, const char *path, mode_t mode, char *why, size_t cap);
/*
 * The same for a private file of rt's own, name, in a directory held open
 * as dirfd (a checkpoint in rt_own_subdir_at's directory): whatever is at
 * name (a link, a FIFO, a file) is replaced by the temporary file on
 * commit, never followed, opened or written. 0 or -errno / RT_E_UNSAFE
 * with why; -ENAMETOOLONG for a name with '/' in it.
 */
int rt_outfile_open_at(struct rt_outfile *o, int dirfd, const char *name, const char *path,
                       mode_t mode, char *why, size_t cap);
/* Finish: sync and rename a regular target into place (its old contents
 * stay until then). 0 or -errno. Closes the descriptor either way. */
int rt_outfile_commit(struct rt_outfile *o);
/* Give up: the target is left as it was. */
void rt_outfile_abort(struct rt_outfile *o);

/*
 * Open path for output written as it comes (a live run's lines): a device,
 * FIFO or socket in place (a FIFO with no reader fails, never blocks); a
 * regular file of this user's, truncated, never through a symbolic link
 * (but /dev/stdout and the like). Returns the descriptor or -errno /
 * RT_E_UNSAFE with why.
 */
int rt_open_stream_out(const char *path, mode_t mode, char *why, size_t cap);
/* The same, appended to (O_APPEND) rather than truncated: a step summary
 * ($GITHUB_STEP_SUMMARY) that others wrote before. The descriptor, or as
 * rt_open_stream_out. */
int rt_open_append_out(const char *path, mode_t mode, char *why, size_t cap);

/*
 * Write all of buf to fd, waiting at most timeout_ms in all for a
 * non-blocking descriptor that is full (a FIFO nobody reads). 0 or -errno
 * (-EAGAIN when the time ran out).
 */
int rt_write_all(int fd, const void *buf, size_t len, int timeout_ms);

#endif
