/*
 * procs.c - another process as rt-bench reads it from /proc: a status
 * field, its CPU ns (every thread's schedstat), a smaps_rollup field, its first child;
 * and starting one with its stdio on /dev/null.
 */
#include "bench.h"

#include <sys/resource.h>

long status_kb(pid_t pid, const char *key)
{
	char p[64], line[256];
	snprintf(p, sizeof(p), "/proc/%d/status", pid);
	FILE *f = fopen(p, "r");
	long v = -1;
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key)))
			v = strtol(line + strlen(key) + 1, NULL, 10);
	if (f)
		fclose(f);
	return v;
}

/* One schedstat file's run time, ns (-1: none). */
static long long schedstat_ns(const char *path)
{
	char b[256];
	FILE *f = fopen(path, "r");
	long long ns = -1;
	if (f && fgets(b, sizeof(b), f))
		ns = strtoll(b, NULL, 10);
	if (f)
		fclose(f);
	return ns;
}

/* Its threads' run time: each task's schedstat (the process's own file
 * is its main thread's alone), -1 without any. */
static long long tasks_ns(pid_t pid)
{
	char dir[64], path[128];
	snprintf(dir, sizeof(dir), "/proc/%d/task", pid);
	DIR *d = opendir(dir);
	long long sum = -1;
	for (struct dirent *e; d && (e = readdir(d));) {
		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "%s/%.20s/schedstat", dir, e->d_name);
		long long ns = schedstat_ns(path);
		if (ns >= 0)
			sum = (sum < 0 ? 0 : sum) + ns;
	}
	if (d)
		closedir(d);
	return sum;
}

/* CPU ns a process has run, all its threads (schedstat; else stat's
 * ticks, which count every thread), -1 if gone */
long long sched_ns(pid_t pid)
{
	long long ns = tasks_ns(pid);
	if (ns >= 0)
		return ns;
	char p[64];
	snprintf(p, sizeof(p), "/proc/%d/stat", pid);
	FILE *f = fopen(p, "r");
	char line[1024];
	if (f && fgets(line, sizeof(line), f)) {
		char *q = strrchr(line, ')');
		unsigned long long ut, st;
		if (q && sscanf(q + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut,
		                &st) == 2)
			ns = (long long)((ut + st) * (1000000000ull /
			                              (unsigned long long)sysconf(_SC_CLK_TCK)));
	}
	if (f)
		fclose(f);
	return ns;
}

long smaps_kb(pid_t pid, const char *key)
{
	char p[64], line[256];
	snprintf(p, sizeof(p), "/proc/%d/smaps_rollup", pid);
	FILE *f = fopen(p, "r");
	long v = -1;
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key)))
			v = strtol(line + strlen(key), NULL, 10);
	if (f)
		fclose(f);
	return v;
}

/* Start argv with stdin, stdout and stderr on /dev/null; nofile > 0:
 * under that hard (and soft) limit on descriptors. */
pid_t spawn_quiet_limited(char *const argv[], unsigned long nofile)
{
	pid_t pid = fork();
	if (pid == 0) {
		struct rlimit rl = {nofile, nofile};
		if (nofile && setrlimit(RLIMIT_NOFILE, &rl))
			_exit(127);
		int null = open("/dev/null", O_RDWR);
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
		execv(argv[0], argv);
		_exit(127);
	}
	return pid;
}

pid_t spawn_quiet(char *const argv[])
{
	return spawn_quiet_limited(argv, 0);
}

/* /proc/PID/FILE into buf, NUL-terminated: its length, <= 0 when gone. */
ssize_t proc_text(pid_t pid, const char *file, char *buf, size_t cap)
{
	char path[128];
	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, cap - 1) : -1;
	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return n;
}

/* The first child of pid (its children file), or -1. */
pid_t first_child(pid_t pid)
{
	char file[64], buf[256];
	snprintf(file, sizeof(file), "task/%d/children", (int)pid);
	return proc_text(pid, file, buf, sizeof(buf)) > 0 ? (pid_t)atoi(buf) : -1;
}

/* A child in a process group of its own that runs setup(arg), then says
 * it is ready and sleeps until killed: its pid once ready, or -1. */
pid_t fork_ready(void (*setup)(void *arg), void *arg)
{
	int ready[2];
	if (pipe(ready))
		return -1;
	pid_t p = fork();
	if (p == 0) {
		setpgid(0, 0); /* one group: killed as one */
		setup(arg);
		if (write(ready[1], "x", 1) < 0) {
		}
		pause();
		_exit(0);
	}
	char c;
	close(ready[1]);
	if (p > 0 && read(ready[0], &c, 1) != 1)
		p = -1;
	close(ready[0]);
	return p;
}
