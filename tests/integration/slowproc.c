/*
 * slowproc.c - an LD_PRELOAD fixture: one process's /proc/PID/stat hangs
 * when opened, as a /proc read may when the process's memory is held (a
 * page fault on a hung network or FUSE mount, a long mmap lock), without
 * touching the process. RT_TEST_SLOW="PID AFTER_S HANG_S": AFTER_S seconds
 * after the tracker starts, each open of /proc/PID/stat, from any thread,
 * takes HANG_S seconds before it opens the file. Every other open is the
 * real one, at once.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef int (*open_fn)(const char *, int, ...);
typedef ssize_t (*pread_fn)(int, void *, size_t, off_t);
typedef ssize_t (*read_fn)(int, void *, size_t);
typedef int (*close_fn)(int);

/* descriptors open on the slow file (set and cleared by any thread) */
static int slow_fd[64];

static double since_start(void)
{
	static struct timespec start;
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (!start.tv_sec)
		start = now;
	return (double)(now.tv_sec - start.tv_sec) + (now.tv_nsec - start.tv_nsec) / 1e9;
}

static char want[64];
static double after = -1, hang_s;

static void setup(void)
{
	if (after >= 0)
		return;
	const char *e = getenv("RT_TEST_SLOW");
	long pid = 0;
	if (!e || sscanf(e, "%ld %lf %lf", &pid, &after, &hang_s) != 3)
		after = 1e9;
	snprintf(want, sizeof(want), "/proc/%ld/stat", pid);
	since_start();
}

/* The slow file's path. */
static const char *want_path(void)
{
	setup();
	return want;
}

/* How long a call on the slow file hangs now. */
static double hang_for(void)
{
	setup();
	return since_start() >= after ? hang_s : 0;
}

static void hang(double h)
{
	struct timespec ts = {(time_t)h, (long)((h - (double)(time_t)h) * 1e9)};
	if (h > 0)
		nanosleep(&ts, NULL);
}

static int is_slow(int fd)
{
	for (int i = 0; i < 64; i++)
		if (__atomic_load_n(&slow_fd[i], __ATOMIC_RELAXED) == fd + 1)
			return 1;
	return 0;
}

static int real_open(const char *name, const char *path, int flags, va_list ap)
{
	open_fn real = (open_fn)dlsym(RTLD_NEXT, name);
	int slow = path && strcmp(path, want_path()) == 0;
	if (slow)
		hang(hang_for());
	int fd = ((flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE)
	             ? real(path, flags, va_arg(ap, int))
	             : real(path, flags);
	for (int i = 0; fd >= 0 && slow && i < 64; i++) {
		int none = 0;
		if (__atomic_compare_exchange_n(&slow_fd[i], &none, fd + 1, 0, __ATOMIC_RELAXED,
		                                __ATOMIC_RELAXED))
			break;
	}
	return fd;
}

ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
	static pread_fn real;
	if (!real)
		real = (pread_fn)dlsym(RTLD_NEXT, "pread");
	if (is_slow(fd))
		hang(hang_for());
	return real(fd, buf, n, off);
}

ssize_t pread64(int fd, void *buf, size_t n, off_t off)
{
	return pread(fd, buf, n, off);
}

ssize_t read(int fd, void *buf, size_t n)
{
	static read_fn real;
	if (!real)
		real = (read_fn)dlsym(RTLD_NEXT, "read");
	if (is_slow(fd))
		hang(hang_for());
	return real(fd, buf, n);
}

int close(int fd)
{
	static close_fn real;
	if (!real)
		real = (close_fn)dlsym(RTLD_NEXT, "close");
	for (int i = 0; i < 64; i++) {
		int was = fd + 1;
		__atomic_compare_exchange_n(&slow_fd[i], &was, 0, 0, __ATOMIC_RELAXED,
		                            __ATOMIC_RELAXED);
	}
	return real(fd);
}

int open(const char *path, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	int fd = real_open("open", path, flags, ap);
	va_end(ap);
	return fd;
}

int open64(const char *path, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	int fd = real_open("open64", path, flags, ap);
	va_end(ap);
	return fd;
}
