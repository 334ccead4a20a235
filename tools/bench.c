/*
 * bench.c - rt's figures, measured side by side in one run.
 *
 *   rt-bench [--quick] [SECTION...]   steps storage replay gpu quiet family
 *                                     syscalls tree wrapper guardian printer
 *                                     binaries (all)
 *   rt-bench --answers     summary, recommend and report of long runs
 *   rt-bench --disk        bytes the store makes the disk write (root: loop device)
 *   rt-bench gpu [SECONDS] NVML per sample on the fake H100 beside its floor
 *
 * Every figure is printed beside its floor or anchor measured in the same
 * run (docs/benchmarks.md says what each section measures): the recorder
 * step and the real recorder at 100 Hz beside pread'ing the same files;
 * the whole family in the default mode at 1 Hz beside the floor and
 * sysstat's sadc at the same pace, with each process's memory; syscalls
 * per sample; the tree walk per process and per new process beside their
 * floors; the wrapper's wall time beside `time -v true`. A benchmark, not a
 * test: it asserts nothing.
 *
 * --answers records a day at 1 Hz (86,400 samples) and an hour at 100 Hz
 * (360,000 samples) with the fake clock, tracking this process, and times
 * `summary --json`, `recommend` and `report` of each against the anchor of
 * the same run's `replay -f csv`, with the report's size.
 *
 * --push records the same two runs (ending an hour ago) and pushes each into
 * a local Prometheus (Debian's, started on 127.0.0.1) by remote write: wall
 * time, CPU per sample and bytes on the wire per sample, beside the anchor
 * of the same run's replay -f csv.
 *
 * --disk makes a 512 MB ext4 loop device that holds only the store, records
 * 2,000 samples at 1 Hz with the fake clock (the recorder's group commits
 * follow its clock, so the write pattern is a real 1 Hz run's), and prints
 * the bytes the device wrote per sample, next to the anchor of appending
 * the bytes rt stored to a plain file on the same device with the same
 * fdatasync cadence.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "export.h"
#include "bench_gpu.h"
#include "rt/fields.h"
#include "rt/runmeta.h"
#include "rt/store.h"
#include "rt/sysroot.h"
#include "collect.h"
#include "proctree.h"
#include "sampler.h"

static double cpu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double wall_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* 0: back to back; else sleep to the next deadline between samples, as the
 * recorder does (cold caches and the wakeup are then part of the cost) */
static double pace;

static void pace_wait(double *deadline)
{
	if (!pace)
		return;
	*deadline += pace;
	struct timespec ts = {(time_t)*deadline,
	                      (long)((*deadline - (double)(time_t)*deadline) * 1e9)};
	clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
}

/*
 * (a) the floor: what any tracker must do per sample to know what rt knows,
 * and nothing more: pread of the very files the recorder reads every sample
 * (the /proc and /sys files it keeps open, listed from its /proc/PID/fd:
 * /proc/stat, meminfo, vmstat, pressure, diskstats, net/dev, the cgroup's
 * files, each NIC's operstate...), statvfs of its mounts, and one getdents
 * walk of /proc. No parsing, no storing. floor_calls gets its syscalls per
 * sample.
 */
static double floor_calls;
static pid_t floor_of;        /* whose open files the floor reads; 0: the collector's,
                        * -1: the 5 the reference's system metrics read */
static int floor_nfiles;      /* how many it read */
static char floor_list[4096]; /* and which, for the family's line */

/*
 * Open again the /proc and /sys files pid keeps open (the ones its sources
 * pread each sample), into fds; their names go to floor_list.
 */
static int open_kept_files(pid_t pid, int *fds, int cap)
{
	char dir[64];
	snprintf(dir, sizeof(dir), "/proc/%d/fd", pid);
	DIR *d = opendir(dir);
	int n = 0;
	size_t used = 0;
	floor_list[0] = '\0';
	struct dirent *de;
	while (d && n < cap && (de = readdir(d))) {
		char link[320], target[512];
		snprintf(link, sizeof(link), "%s/%s", dir, de->d_name);
		ssize_t k = readlink(link, target, sizeof(target) - 1);
		if (k <= 0)
			continue;
		target[k] = '\0';
		if (strncmp(target, "/proc/", 6) && strncmp(target, "/sys/", 5))
			continue;
		struct stat st;
		int fd = open(target, O_RDONLY | O_CLOEXEC);
		if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode)) {
			if (fd >= 0)
				close(fd);
			continue;
		}
		fds[n++] = fd;
		int w = snprintf(floor_list + used, sizeof(floor_list) - used, "%s%s",
		                 used ? " " : "", target);
		if (w > 0 && (size_t)w < sizeof(floor_list) - used)
			used += (size_t)w;
	}
	if (d)
		closedir(d);
	return n;
}

/*
 * The floor: pread the /proc and /sys files the recorder keeps open (those
 * of floor_of, the running recorder; else those the collector opened in
 * this process), statvfs each mount it watches and one getdents pass of
 * /proc, n times (paced when pace is set), parsing nothing. CPU µs each.
 */
static double bench_pread(int n)
{
	struct rt_collector c;
	if (rt_collector_open(&c))
		return -1;
	size_t cap = rt_record_max_size();
	void *rb;
	if (posix_memalign(&rb, 64, cap))
		return -1;
	struct rt_record r;
	int ch;
	rt_collector_sample(&c, rb, cap, &r, &ch); /* opens the NICs' operstate */
	int fds[256], nfd = 0;
	if (floor_of < 0) {
		static const char *const five[] = {"/proc/stat", "/proc/meminfo", "/proc/diskstats",
		                                   "/proc/net/dev", "/proc/mounts"};
		for (int i = 0; i < 5; i++)
			if ((fds[nfd] = open(five[i], O_RDONLY | O_CLOEXEC)) >= 0)
				nfd++;
	} else {
		nfd = open_kept_files(floor_of ? floor_of : getpid(), fds, 256);
	}
	floor_nfiles = nfd;
	int procfd = open("/proc", O_RDONLY | O_DIRECTORY);
	static char buf[65536];
	long calls = 0;
	double t0 = cpu_now(), dl = wall_now();
	for (int i = 0; i < n; i++) {
		pace_wait(&dl);
		for (int k = 0; k < nfd; k++, calls++)
			if (pread(fds[k], buf, sizeof(buf), 0) < 0)
				return -1;
		for (unsigned m = 0; m < c.inv->nmount; m++, calls++) {
			struct statvfs sv;
			statvfs(c.inv->mount[m].mount_point, &sv);
		}
		lseek(procfd, 0, SEEK_SET);
		calls += 2;
		while (syscall(SYS_getdents64, procfd, buf, sizeof(buf)) > 0)
			calls++;
	}
	double us = (cpu_now() - t0) / n * 1e6;
	floor_calls = (double)(calls + (pace ? n : 0)) / n; /* + the sleep */
	for (int k = 0; k < nfd; k++)
		close(fds[k]);
	close(procfd);
	rt_collector_close(&c);
	free(rb);
	return us;
}

/* (b) collectors only */
static double bench_collect(int n)
{
	struct rt_collector c;
	if (rt_collector_open(&c))
		return -1;
	size_t cap = rt_record_max_size();
	void *buf;
	if (posix_memalign(&buf, 64, cap))
		return -1;
	struct rt_record r;
	int ch;
	rt_collector_sample(&c, buf, cap, &r, &ch);
	double t0 = cpu_now(), dl = wall_now();
	for (int i = 0; i < n; i++) {
		pace_wait(&dl);
		rt_collector_sample(&c, buf, cap, &r, &ch);
	}
	double us = (cpu_now() - t0) / n * 1e6;
	rt_collector_close(&c);
	free(buf);
	return us;
}

/* (c) the full recorder step into a real store and ring */
static double bench_sampler(const char *store_dir, int n, uint64_t *run, size_t *rec_size)
{
	struct rt_store *s;
	if (rt_store_open(store_dir, RT_STORE_RDWR, &s))
		return -1;
	struct rt_run_meta m = {.status = "finished", .interval_secs = 1, .start_ns = 1};
	struct rt_buf b = {0};
	rt_runmeta_write(&b, &m);
	rt_store_new_run(s, b.p, b.len, run);
	struct rt_sampler sm;
	if (rt_sampler_init(&sm, s, *run, 64))
		return -1;
	char warn[512];
	rt_sampler_take(&sm, 0, warn, sizeof(warn));
	double t0 = cpu_now(), dl = wall_now();
	for (int i = 0; i < n; i++) {
		pace_wait(&dl);
		rt_sampler_take(&sm, 0, warn, sizeof(warn));
	}
	double us = (cpu_now() - t0) / n * 1e6;
	*rec_size = sm.last_len;
	rt_sampler_finish(&sm);
	rt_sampler_close(&sm, 1);
	rt_store_close(s);
	rt_buf_free(&b);
	return us;
}

static double bench_replay(const char *store_dir, uint64_t run, enum rt_format fmt, int reps,
                           uint64_t *lines)
{
	struct rt_store *s;
	if (rt_store_open(store_dir, RT_STORE_RDONLY, &s))
		return -1;
	struct rt_runinfo ri = {.id = run, .interval = 1};
	struct rt_sink k;
	char why[256];
	rt_sink_open(&k, "/dev/null", 1, 0, why, sizeof(why));
	*lines = 0;
	double t0 = wall_now();
	for (int i = 0; i < reps; i++) {
		struct rt_emitter e;
		rt_emitter_init(&e, s, &ri, fmt, &k);
		struct rt_replay_opts o = {0, 0, 1};
		rt_replay(&e, &o);
		*lines += e.lines;
		rt_emitter_free(&e);
	}
	rt_sink_flush(&k);
	double secs = wall_now() - t0;
	rt_sink_close(&k);
	rt_store_close(s);
	return (double)*lines / secs;
}

static long status_kb(pid_t pid, const char *key)
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

/* Run a command with its output discarded: its CPU seconds (user+sys),
 * wall seconds and, when maxrss is not NULL, its peak RSS (KiB). */
static int run_cmd_rss(char *const argv[], double *cpu, double *wall, long *maxrss)
{
	double t0 = wall_now();
	pid_t pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);
		dup2(null, 1);
		dup2(null, 2);
		execv(argv[0], argv);
		_exit(127);
	}
	int st;
	struct rusage ru;
	if (wait4(pid, &st, 0, &ru) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
		return -1;
	*wall = wall_now() - t0;
	*cpu = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
	       ru.ru_stime.tv_usec / 1e6;
	if (maxrss)
		*maxrss = ru.ru_maxrss;
	return 0;
}

static int run_cmd(char *const argv[], double *cpu, double *wall)
{
	return run_cmd_rss(argv, cpu, wall, NULL);
}

static long stripped_size(const char *bin)
{
	char tmp[] = "/tmp/rt-bench-strip-XXXXXX", cmd[8400];
	int fd = mkstemp(tmp);
	if (fd < 0)
		return -1;
	close(fd);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s' && strip '%s'", bin, tmp, tmp);
	struct stat st;
	long sz = (system(cmd) == 0 && stat(tmp, &st) == 0) ? (long)st.st_size : -1;
	unlink(tmp);
	return sz;
}

/*
 * A tree of n sleeping processes under one root: forked copies of this
 * program (exec_sleep 0) or processes that exec'd sleep(1), which is what a
 * job's new processes usually are. Returns the root (its own group).
 */
static pid_t make_tree(int n, int exec_sleep, int mb)
{
	int ready[2];
	if (pipe(ready))
		return -1;
	pid_t root = fork();
	if (root == 0) {
		setpgid(0, 0); /* one group: killed as one */
		int null = open("/dev/null", O_RDWR);
		dup2(null, 1);
		dup2(null, 2);
		/* mb > 0: the root touches mb MiB first; the children share it */
		size_t len = (size_t)mb << 20;
		char *mem = len ? malloc(len) : NULL;
		if (mem)
			memset(mem, 1, len);
		for (int i = 1; i < n; i++)
			if (fork() == 0) {
				if (exec_sleep)
					execlp("sleep", "sleep", "1000", (char *)NULL);
				pause();
				_exit(0);
			}
		if (write(ready[1], "x", 1) < 0) {
		}
		pause();
		_exit(0);
	}
	char c;
	close(ready[1]);
	if (read(ready[0], &c, 1) != 1)
		root = -1;
	close(ready[0]);
	usleep(200000 + (useconds_t)n * 1000); /* let the children exec */
	return root;
}

static void *sleep_thread(void *arg)
{
	(void)arg;
	pause();
	return NULL;
}

/* One process with n threads, all asleep; its pid (kill_tree ends it). */
static pid_t make_threads(int n)
{
	int ready[2];
	if (pipe(ready))
		return -1;
	pid_t p = fork();
	if (p == 0) {
		setpgid(0, 0);
		for (int i = 1; i < n; i++) {
			pthread_t th;
			if (pthread_create(&th, NULL, sleep_thread, NULL))
				break;
		}
		if (write(ready[1], "x", 1) < 0) {
		}
		pause();
		_exit(0);
	}
	char c;
	close(ready[1]);
	if (read(ready[0], &c, 1) != 1)
		p = -1;
	close(ready[0]);
	return p;
}

static void kill_tree(pid_t root)
{
	kill(-root, SIGKILL);
	waitpid(root, NULL, 0);
}

/* The host's fork counter, as the recorder's CPU source hands it over. */
static void host_forks(struct rt_proctree *t)
{
	char buf[65536];
	int fd = open("/proc/stat", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = '\0';
	const char *p = strstr(buf, "\nprocesses ");
	if (p)
		rt_proctree_host_forks(t, strtoull(p + 11, NULL, 10));
}

/* CPU per process of rt_proctree_sample on a tree of n sleeping
 * processes: *steady when every one was seen twice before, *fresh on the
 * first sample (every process new: reps fresh trackers). The host's fork
 * counter is read before each sample, outside the timing, as the
 * recorder's CPU source does. */
/*
 * The floor of a tree walk for the members: a kept descriptor's pread of
 * each one's stat (*steady), and open + pread + close of its stat, io,
 * smaps_rollup and children file (*fresh): what any tracker must read to
 * know a process's CPU, I/O, exact memory and children.
 */
static void tree_floor(const pid_t *pids, size_t n, int reps, double *steady, double *fresh)
{
	static char buf[65536];
	int *fds = malloc(n * sizeof(*fds));
	char path[96];
	for (size_t i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "/proc/%d/stat", pids[i]);
		fds[i] = open(path, O_RDONLY | O_CLOEXEC);
	}
	double t0 = cpu_now();
	for (int r = 0; r < reps; r++)
		for (size_t i = 0; i < n; i++)
			if (pread(fds[i], buf, sizeof(buf), 0) < 0)
				break;
	*steady = (cpu_now() - t0) / reps / (double)n * 1e6;
	for (size_t i = 0; i < n; i++)
		close(fds[i]);
	free(fds);
	t0 = cpu_now();
	static const char *const files[] = {"stat", "io", "smaps_rollup"};
	for (int r = 0; r < reps; r++)
		for (size_t i = 0; i < n; i++)
			for (int k = 0; k < 4; k++) {
				if (k == 3)
					snprintf(path, sizeof(path), "/proc/%d/task/%d/children",
					         pids[i], pids[i]);
				else
					snprintf(path, sizeof(path), "/proc/%d/%s", pids[i],
					         files[k]);
				int fd = open(path, O_RDONLY | O_CLOEXEC);
				if (fd >= 0 && pread(fd, buf, sizeof(buf), 0) >= 0)
					close(fd);
			}
	*fresh = (cpu_now() - t0) / reps / (double)n * 1e6;
}

static double tree_slow; /* per member per sample with the status read (1 Hz) */

static void bench_tree(int n, int reps, int exec_sleep, double *steady, double *fresh,
                       double *floor_steady, double *floor_fresh)
{
	*steady = *fresh = *floor_steady = *floor_fresh = -1;
	pid_t root = make_tree(n, exec_sleep, 0);
	if (root <= 0)
		return;
	struct rt_proctree *t;
	struct rt_rec_process r;
	double first = 0, steady_cpu = 0;
	for (int i = 0; i < reps; i++) {
		rt_proctree_open(&t, root);
		host_forks(t);
		double t0 = cpu_now();
		rt_proctree_sample(t, &r);
		first += cpu_now() - t0;
		if (i < reps - 1)
			rt_proctree_close(t);
	}
	host_forks(t);
	rt_proctree_sample(t, &r); /* the second sample keeps descriptors */
	for (int i = 0; i < reps; i++) {
		host_forks(t);
		double t0 = cpu_now();
		rt_proctree_sample(t, &r);
		steady_cpu += cpu_now() - t0;
	}
	*steady = steady_cpu / reps / n * 1e6;
	*fresh = first / reps / n * 1e6;
	/* each member's status read in the sample too (the recorder does it
	 * every 5 s; per sample at 1 Hz that is a fifth of this extra) */
	double slow_cpu = 0;
	rt_proctree_cadence(t, 1, 0);
	for (int i = 0; i < reps; i++) {
		host_forks(t);
		double t0 = cpu_now();
		rt_proctree_sample(t, &r);
		slow_cpu += cpu_now() - t0;
	}
	rt_proctree_cadence(t, 0, 0);
	tree_slow = slow_cpu / reps / n * 1e6;
	if ((int)r.nprocs != n)
		printf("  (tree of %d: saw %u processes)\n", n, r.nprocs);
	pid_t *pids = malloc((size_t)n * sizeof(*pids));
	size_t np = rt_proctree_members(t, pids, (size_t)n);
	rt_proctree_close(t); /* its descriptors out of the floor's way */
	if (np)
		tree_floor(pids, np, reps, floor_steady, floor_fresh);
	free(pids);
	kill_tree(root);
}

static double tree_sample_cpu(struct rt_proctree *t, int reps)
{
	struct rt_rec_process r;
	double cpu = 0;
	for (int i = 0; i < reps; i++) {
		host_forks(t);
		double t0 = cpu_now();
		rt_proctree_sample(t, &r);
		cpu += cpu_now() - t0;
	}
	return cpu / reps * 1e6;
}

static void bench_delay(int n, int reps)
{
	pid_t p = make_threads(n);
	if (p <= 0)
		return;
	usleep(100000);
	struct rt_proctree *t;
	if (rt_proctree_open(&t, p)) {
		kill_tree(p);
		return;
	}
	tree_sample_cpu(t, 2); /* descriptors kept from the second sample */
	rt_proctree_read_delay(t, 0);
	double off = tree_sample_cpu(t, reps);
	rt_proctree_read_delay(t, 1);
	double on = tree_sample_cpu(t, reps);
	rt_proctree_close(t);
	/* the floor: each thread's schedstat, kept open, one pread a sample */
	int *fds = malloc((size_t)n * sizeof(int));
	int nf = 0;
	char path[128], buf[256];
	snprintf(path, sizeof(path), "/proc/%d/task", (int)p);
	DIR *d = opendir(path);
	struct dirent *de;
	while (d && nf < n && (de = readdir(d)))
		if (de->d_name[0] >= '0' && de->d_name[0] <= '9') {
			snprintf(path, sizeof(path), "/proc/%d/task/%.16s/schedstat", (int)p,
			         de->d_name);
			int fd = open(path, O_RDONLY | O_CLOEXEC);
			if (fd >= 0)
				fds[nf++] = fd;
		}
	if (d)
		closedir(d);
	double fl = 0;
	for (int i = 0; i < reps; i++) {
		double t0 = cpu_now();
		for (int k = 0; k < nf; k++)
			if (pread(fds[k], buf, sizeof(buf), 0) < 0)
				break;
		fl += cpu_now() - t0;
	}
	for (int k = 0; k < nf; k++)
		close(fds[k]);
	free(fds);
	kill_tree(p);
	printf("  %-12d %11.1f us %11.1f us %11.1f us %11.1f us\n", n, off, on, on - off,
	       fl / reps * 1e6);
}

/*
 * Forked children of a big parent: the parent touches mb MiB, then forks
 * n - 1 children that share all of it copy-on-write (what a fork pool,
 * a DataLoader or gunicorn does). Their smaps_rollup each walks every
 * shared page, the dearest read a tree walk makes; rt reads it for every
 * member in the sample where one appears, and again whenever something in
 * the tree moved. CPU per member: the first sample (all new), a sample
 * where nothing moved (PSS carried), a sample that re-reads every PSS
 * (the 5 s cadence: status + smaps_rollup), each beside its floor: open +
 * pread + close, or a kept descriptor's pread, of each one's smaps_rollup.
 */
static void bench_fork_tree(int n, int mb, int reps)
{
	pid_t root = make_tree(n, 0, mb);
	if (root <= 0)
		return;
	struct rt_proctree *t = NULL;
	struct rt_rec_process r;
	double first = 0, steady = 0, again = 0;
	for (int i = 0; i < reps; i++) {
		rt_proctree_open(&t, root);
		host_forks(t);
		double t0 = cpu_now();
		rt_proctree_sample(t, &r);
		first += cpu_now() - t0;
		if (i < reps - 1)
			rt_proctree_close(t);
	}
	uint64_t pss_kb = r.pss_kb, rss_kb = r.rss_kb;
	host_forks(t);
	rt_proctree_sample(t, &r);
	uint64_t reads0 = rt_proctree_pss_reads(t);
	for (int i = 0; i < reps; i++) {
		host_forks(t);
		double t0 = cpu_now();
		rt_proctree_sample(t, &r);
		steady += cpu_now() - t0;
	}
	uint64_t steady_reads = rt_proctree_pss_reads(t) - reads0;
	rt_proctree_cadence(t, 1, 0);
	for (int i = 0; i < reps; i++) {
		host_forks(t);
		double t0 = cpu_now();
		rt_proctree_sample(t, &r);
		again += cpu_now() - t0;
	}
	rt_proctree_cadence(t, 0, 0);
	/* the floors: each member's smaps_rollup, opened fresh and kept */
	pid_t pids[64];
	size_t np = rt_proctree_members(t, pids, 64);
	static char buf[65536];
	char path[96];
	double ffresh = 0, fkept = 0;
	int fds[64];
	double t0 = cpu_now();
	for (int k = 0; k < reps; k++)
		for (size_t i = 0; i < np; i++) {
			snprintf(path, sizeof(path), "/proc/%d/smaps_rollup", pids[i]);
			int fd = open(path, O_RDONLY | O_CLOEXEC);
			if (fd >= 0 && pread(fd, buf, sizeof(buf), 0) >= 0)
				close(fd);
		}
	ffresh = cpu_now() - t0;
	for (size_t i = 0; i < np; i++) {
		snprintf(path, sizeof(path), "/proc/%d/smaps_rollup", pids[i]);
		fds[i] = open(path, O_RDONLY | O_CLOEXEC);
	}
	t0 = cpu_now();
	for (int k = 0; k < reps; k++)
		for (size_t i = 0; i < np; i++)
			if (pread(fds[i], buf, sizeof(buf), 0) < 0)
				break;
	fkept = cpu_now() - t0;
	for (size_t i = 0; i < np; i++)
		close(fds[i]);
	double per = 1e6 / reps / (np ? (double)np : 1.0);
	printf("  %d members (a %d MiB parent and %d forked children), tree PSS %llu MiB, RSS "
	       "%llu MiB:\n",
	       (int)np, mb, n - 1, (unsigned long long)(pss_kb >> 10),
	       (unsigned long long)(rss_kb >> 10));
	printf(
	    "    first sample, every member new   %9.1f us per member (floor %9.1f: open, pread, "
	    "close of smaps_rollup)\n",
	    first * per, ffresh * per);
	printf(
	    "    nothing moved: PSS carried       %9.1f us per member (%llu smaps_rollup reads in "
	    "%d samples)\n",
	    steady * per, (unsigned long long)steady_reads, reps);
	printf("    every PSS re-read (5 s cadence)  %9.1f us per member (floor %9.1f: pread of a "
	       "kept smaps_rollup)\n",
	       again * per, fkept * per);
	rt_proctree_close(t);
	kill_tree(root);
}

/* Best wall time of 5 runs of argv, and the largest RSS (KiB). */
static double best_of(char *const argv[], long *maxrss)
{
	double best = 1e9;
	*maxrss = 0;
	for (int i = 0; i < 5; i++) {
		double cpu, wall;
		long rss;
		if (run_cmd_rss(argv, &cpu, &wall, &rss))
			return -1;
		best = wall < best ? wall : best;
		*maxrss = rss > *maxrss ? rss : *maxrss;
	}
	return best;
}

static void bench_answers_run(const char *rec_bin, const char *exp_bin, const char *tmp,
                              const char *what, const char *interval, const char *count)
{
	char store[4300], pid[32], html[4400];
	snprintf(store, sizeof(store), "%s/answers-%s", tmp, interval);
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	snprintf(html, sizeof(html), "%s/report.html", store);
	setenv("RT_TEST_CLOCK", "1795000000", 1);
	setenv("RT_TEST_HOOKS", "1", 1);
	char *rec[] = {(char *)rec_bin, "--quiet", "-i", (char *)interval, "--count",
	               (char *)count,   "--pid",   pid,  "--store",        store,
	               "--job-name",    "bench",   NULL};
	double cpu, wall;
	int rc = run_cmd(rec, &cpu, &wall);
	unsetenv("RT_TEST_CLOCK");
	if (rc) {
		printf("  %s: recording failed\n", what);
		return;
	}
	char *replay[] = {(char *)exp_bin, "--store", store, "replay", "1", "-f", "csv", NULL};
	char *summary[] = {(char *)exp_bin, "--store", store, "summary", "1", "--json", NULL};
	char *reco[] = {(char *)exp_bin, "--store", store, "recommend", "1", NULL};
	char *report[] = {(char *)exp_bin, "--store", store, "report", "1", "-o", html, NULL};
	long r0, r1, r2, r3;
	double t_replay = best_of(replay, &r0), t_sum = best_of(summary, &r1),
	       t_reco = best_of(reco, &r2), t_rep = best_of(report, &r3);
	struct stat st;
	long size = stat(html, &st) == 0 ? (long)st.st_size : -1;
	printf("%s (%s samples, recorded in %.1f s with the fake clock):\n", what, count, wall);
	printf("  replay -f csv > /dev/null (anchor)                 %8.0f ms  %6ld KiB max RSS\n",
	       t_replay * 1e3, r0);
	printf("  summary --json                                     %8.0f ms  %6ld KiB  "
	       "(%.2fx replay)\n",
	       t_sum * 1e3, r1, t_sum / t_replay);
	printf("  recommend                                          %8.0f ms  %6ld KiB  "
	       "(%.2fx replay)\n",
	       t_reco * 1e3, r2, t_reco / t_replay);
	printf("  report                                             %8.0f ms  %6ld KiB  "
	       "(%.2fx replay)\n",
	       t_rep * 1e3, r3, t_rep / t_replay);
	printf("  report size                                        %8.2f MB\n\n",
	       (double)size / 1e6);
}

static int bench_answers(const char *rec_bin, const char *exp_bin)
{
	char tmp[] = "/tmp/rt-bench-XXXXXX";
	if (!mkdtemp(tmp))
		return 1;
	char shm[4200];
	snprintf(shm, sizeof(shm), "%s/shm", tmp);
	mkdir(shm, 0700);
	setenv("RT_SHM_DIR", shm, 1);
	printf("rt-bench --answers: best of 5 runs each (wall time), this process tracked\n\n");
	bench_answers_run(rec_bin, exp_bin, tmp, "24 h at 1 Hz", "1", "86400");
	bench_answers_run(rec_bin, exp_bin, tmp, "1 h at 100 Hz", "0.01", "360000");
	char cmd[4300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	return system(cmd) != 0;
}

/* A minimal OTLP/HTTP endpoint for --push: reads each request and answers
 * 200 {} (keep-alive), so the figures are rt's alone. */
static void *otlp_sink(void *arg)
{
	int ls = *(int *)arg;
	for (;;) {
		int c = accept(ls, NULL, NULL);
		if (c < 0)
			return NULL;
		static char buf[1 << 16];
		size_t have = 0;
		for (;;) {
			ssize_t n = read(c, buf + have, sizeof(buf) - 1 - have);
			if (n <= 0)
				break;
			have += (size_t)n;
			buf[have] = '\0';
			char *end = strstr(buf, "\r\n\r\n");
			if (!end)
				continue;
			const char *cl = strcasestr(buf, "content-length:");
			size_t body = cl ? strtoul(cl + 15, NULL, 10) : 0,
			       head = (size_t)(end + 4 - buf);
			while (have - head < body) { /* drain the body */
				size_t want = body - (have - head);
				char sink[1 << 16];
				n = read(c, sink, want < sizeof(sink) ? want : sizeof(sink));
				if (n <= 0)
					break;
				have += (size_t)n;
			}
			static const char ok[] =
			    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
			    "Content-Length: 2\r\n\r\n{}";
			if (write(c, ok, sizeof(ok) - 1) < 0)
				break;
			have = 0;
		}
		close(c);
	}
}

/* --push: a stored run into a local Prometheus by remote write, beside the
 * family's own cost (replay -f csv of the same run). */
static void bench_push_run(const char *rec_bin, const char *exp_bin, const char *tmp,
                           const char *url, const char *otlp_url, const char *what,
                           const char *interval, const char *count, double secs)
{
	char store[4300], pid[32], clock[32], log[4400];
	snprintf(store, sizeof(store), "%s/push-%s", tmp, interval);
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	/* ended an hour ago: inside the engine's out-of-order window */
	snprintf(clock, sizeof(clock), "%lld", (long long)time(NULL) - (long long)secs - 3600);
	setenv("RT_TEST_CLOCK", clock, 1);
	setenv("RT_TEST_HOOKS", "1", 1);
	char *rec[] = {(char *)rec_bin, "--quiet", "-i", (char *)interval, "--count",
	               (char *)count,   "--pid",   pid,  "--store",        store,
	               "--job-name",    "bench",   NULL};
	double cpu, wall;
	int rc = run_cmd(rec, &cpu, &wall);
	unsetenv("RT_TEST_CLOCK");
	if (rc) {
		printf("  %s: recording failed\n", what);
		return;
	}
	char *replay[] = {(char *)exp_bin, "--store", store, "replay", "1", "-f", "csv", NULL};
	double rcpu, rwall;
	run_cmd(replay, &rcpu, &rwall);
	double n = atof(count);
	unsigned series = 0;
	for (unsigned id = 0; id < RT_NV; id++)
		series += rt_value_info(id)->fleet != NULL;
	printf("%s (%s samples, up to %u series each):\n", what, count, series);
	printf("  replay -f csv > /dev/null (anchor)        %8.0f ms  %6.2f us CPU per sample\n",
	       rwall * 1e3, rcpu / n * 1e6);
	static const char *const sinks[] = {"prometheus", "otlp"};
	for (int k = 0; k < 2; k++) {
		snprintf(log, sizeof(log), "%s/push-%s.log", store, sinks[k]);
		char cmd[9000];
		snprintf(cmd, sizeof(cmd), "'%s' --store '%s' push 1 --to %s --url '%s' -v 2> '%s'",
		         exp_bin, store, sinks[k], k ? otlp_url : url, log);
		char *push[] = {"/bin/sh", "-c", cmd, NULL};
		double pcpu, pwall;
		rc = run_cmd(push, &pcpu, &pwall);
		char line[1000] = "";
		FILE *f = fopen(log, "r");
		unsigned long long lines = 0, reqs = 0, bytes = 0;
		while (f && fgets(line, sizeof(line), f))
			if (strstr(line, " lines in "))
				sscanf(strstr(line, "run 1: "),
				       "run 1: %llu lines in %llu requests, %llu bytes", &lines,
				       &reqs, &bytes);
		if (f)
			fclose(f);
		if (rc || !lines) {
			printf("  push --to %s: failed: %s\n", sinks[k], line);
			continue;
		}
		printf("  push --to %-10s                      %8.0f ms  %6.2f us CPU per sample "
		       "(%.1fx replay)\n",
		       sinks[k], pwall * 1e3, pcpu / n * 1e6, pcpu / rcpu);
		printf("    on the wire (%s)%*s%8.1f bytes per sample, %llu requests\n",
		       k ? "JSON + gzip" : "protobuf + snappy", k ? 17 : 11, "",
		       (double)bytes / (double)lines, reqs);
	}
	putchar('\n');
}

static int bench_push(const char *rec_bin, const char *exp_bin)
{
	char tmp[] = "/tmp/rt-bench-XXXXXX";
	if (!mkdtemp(tmp))
		return 1;
	char shm[4200], cfg[4200], cmd[13000], url[128];
	snprintf(shm, sizeof(shm), "%s/shm", tmp);
	mkdir(shm, 0700);
	setenv("RT_SHM_DIR", shm, 1);
	snprintf(cfg, sizeof(cfg), "%s/prom.yml", tmp);
	FILE *f = fopen(cfg, "w");
	if (!f)
		return 1;
	fputs("storage:\n  tsdb:\n    out_of_order_time_window: 3d\n", f);
	fclose(f);
	int port = 29000 + (int)(getpid() % 1000);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/api/v1/write", port);
	snprintf(
	    cmd, sizeof(cmd),
	    "prometheus --config.file=%s --storage.tsdb.path=%s/tsdb "
	    "--web.listen-address=127.0.0.1:%d --web.enable-remote-write-receiver "
	    "> %s/prom.log 2>&1 & echo $! > %s/prom.pid; "
	    "for i in $(seq 100); do curl -sf http://127.0.0.1:%d/-/ready >/dev/null && exit 0; "
	    "sleep 0.1; done; exit 1",
	    cfg, tmp, port, tmp, tmp, port);
	if (system(cmd)) {
		printf("rt-bench --push: no Prometheus (apt-get install prometheus)\n");
		return 1;
	}
	printf("rt-bench --push: a stored run into Debian's Prometheus on 127.0.0.1 (remote "
	       "write) and into an OTLP endpoint in this process that answers 200 (batches of "
	       "500 lines), this process tracked\n\n");
	int ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(0x7f000001)};
	socklen_t sl = sizeof(sa);
	char otlp_url[128] = "";
	pthread_t th;
	if (ls >= 0 && bind(ls, (struct sockaddr *)&sa, sizeof(sa)) == 0 && listen(ls, 8) == 0 &&
	    getsockname(ls, (struct sockaddr *)&sa, &sl) == 0 &&
	    pthread_create(&th, NULL, otlp_sink, &ls) == 0)
		snprintf(otlp_url, sizeof(otlp_url), "http://127.0.0.1:%d/v1/metrics",
		         ntohs(sa.sin_port));
	bench_push_run(rec_bin, exp_bin, tmp, url, otlp_url, "24 h at 1 Hz", "1", "86400", 86400);
	bench_push_run(rec_bin, exp_bin, tmp, url, otlp_url, "1 h at 100 Hz", "0.01", "360000",
	               3600);
	snprintf(cmd, sizeof(cmd), "kill $(cat %s/prom.pid); sleep 1; rm -rf '%s'", tmp, tmp);
	return system(cmd) != 0;
}

/* Sectors written by block device dev (e.g. "loop3"). */
static long long dev_write_sectors(const char *dev)
{
	char p[128];
	snprintf(p, sizeof(p), "/sys/block/%s/stat", dev);
	FILE *f = fopen(p, "r");
	long long v[7] = {0};
	int n = f ? fscanf(f, "%lld %lld %lld %lld %lld %lld %lld", &v[0], &v[1], &v[2], &v[3],
	                   &v[4], &v[5], &v[6])
	          : 0;
	if (f)
		fclose(f);
	return n == 7 ? v[6] : -1;
}

/* A 1 GB (sparse) ext4 loop device, mkfs's defaults (4 KiB blocks), mounted at <tmp>/<name> (default mount
 * options); its sysfs name into dev. 0 or -1. */
static int make_loop(const char *tmp, const char *name, char *mnt, size_t mntcap, char dev[64])
{
	char img[4200], cmd[32768];
	snprintf(img, sizeof(img), "%s/%s.img", tmp, name);
	snprintf(mnt, mntcap, "%s/%s", tmp, name);
	mkdir(mnt, 0700);
	/* inode tables and journal zeroed now, not by ext4lazyinit during the
	 * measurement (it writes ~100 KB/s for minutes after the mount) */
	snprintf(cmd, sizeof(cmd),
	         "truncate -s 1G '%s' && losetup -f --show '%s' > '%s.dev' && mkfs.ext4 -q "
	         "-E lazy_itable_init=0,lazy_journal_init=0 "
	         "$(cat '%s.dev') && mount $(cat '%s.dev') '%s'",
	         img, img, img, img, img, mnt);
	if (system(cmd) != 0)
		return -1;
	snprintf(cmd, sizeof(cmd), "%s.dev", img);
	FILE *f = fopen(cmd, "r");
	int ok = f && fscanf(f, "/dev/%63s", dev) == 1;
	if (f)
		fclose(f);
	return ok ? 0 : -1;
}

static void drop_loop(const char *tmp, const char *name)
{
	char cmd[16384];
	snprintf(cmd, sizeof(cmd),
	         "umount '%s/%s' 2>/dev/null; losetup -d $(cat '%s/%s.img.dev') 2>/dev/null", tmp,
	         name, tmp, name);
	if (system(cmd) != 0)
		printf("rt-bench --disk: cleanup of %s/%s failed\n", tmp, name);
}

/*
 * The same at a real 1 Hz for secs seconds (the kernel's own periodic work,
 * writeback and the journal's commits, at its real pace), three devices
 * side by side in the same seconds: the recorder --quiet, the recorder with
 * its default live printer (rt-export reading the ring and the store), and
 * the anchor appending per bytes a second to a plain file with an
 * fdatasync every 30 s.
 */
static void bench_disk_real(const char *rec_bin, const char *tmp, size_t per, int secs)
{
	enum { FRESH, QUIET, PRINTER, ANCHOR, N };
	static const char *const names[N] = {"fresh", "quiet", "printer", "anchor"};
	char mnt[N][4200], dev[N][64];
	int made = 0;
	for (; made < N; made++)
		if (make_loop(tmp, names[made], mnt[made], sizeof(mnt[made]), dev[made]))
			break;
	if (made < N) {
		printf(
		    "rt-bench --disk: cannot make the loop devices (losetup, mkfs.ext4, mount)\n");
		for (int i = 0; i < made; i++)
			drop_loop(tmp, names[i]);
		return;
	}
	char count[16], store[N][4300], plain[4300];
	snprintf(count, sizeof(count), "%d", secs);
	for (int i = 0; i < N; i++)
		snprintf(store[i], sizeof(store[i]), "%.4199s/store", mnt[i]);
	snprintf(plain, sizeof(plain), "%s/plain.dat", mnt[ANCHOR]);
	/* a store that already holds a run, as a user's store does after the
	 * first: its creation is not what a run costs */
	for (int i = QUIET; i <= PRINTER; i++) {
		char *pre[] = {(char *)rec_bin, "--quiet", "-i", "0.01", "--count", "3",
		               "--store",       store[i],  NULL};
		double c, w;
		run_cmd(pre, &c, &w);
	}
	sync();
	sleep(6); /* the journal's own commit of what the sync left */
	long long s0[N];
	for (int i = 0; i < N; i++)
		s0[i] = dev_write_sectors(dev[i]);
	pid_t pid[N];
	for (int i = 0; i < N; i++) {
		if ((pid[i] = fork()) != 0)
			continue;
		int null = open("/dev/null", O_WRONLY);
		dup2(null, 1);
		dup2(null, 2);
		if (i != ANCHOR) {
			char *q[] = {(char *)rec_bin, "--quiet", "-i",     "1", "--count",
			             count,           "--store", store[i], NULL};
			char *d[] = {(char *)rec_bin, "-i",      "1",      "--count",
			             count,           "--store", store[i], NULL};
			execv(rec_bin, i == PRINTER ? d : q);
			_exit(127);
		}
		static char buf[65536];
		memset(buf, 'x', sizeof(buf));
		int fd = open(plain, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		struct timespec next;
		clock_gettime(CLOCK_MONOTONIC, &next);
		for (int k = 0; fd >= 0 && k < secs; k++) {
			if (write(fd, buf, per) < 0)
				break;
			if (k % 30 == 29)
				fdatasync(fd);
			next.tv_sec++;
			clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
		}
		if (fd >= 0)
			fdatasync(fd);
		_exit(0);
	}
	for (int i = 0; i < N; i++)
		waitpid(pid[i], NULL, 0);
	sync();
	double b[N];
	for (int i = 0; i < N; i++)
		b[i] = (double)(dev_write_sectors(dev[i]) - s0[i]) * 512 / secs;
	printf("Disk writes at a real 1 Hz (%d s; ext4, mkfs and mount defaults, 4 KiB blocks;\n"
	       "four devices side by side, target 1024 B/sample):\n",
	       secs);
	printf("  plain file: append %zu B/s, fdatasync every 30 s     %7.0f B/sample  (anchor)\n",
	       per, b[ANCHOR]);
	printf("  rt-recorder --quiet, a store that holds a run        %7.0f B/sample  (%.2fx "
	       "anchor)\n",
	       b[QUIET], b[QUIET] / b[ANCHOR]);
	printf("  rt-recorder, default live printer, the same          %7.0f B/sample  (%.2fx "
	       "anchor)\n",
	       b[PRINTER], b[PRINTER] / b[ANCHOR]);
	printf("  rt-recorder --quiet, its first run (creates the store) %5.0f B/sample  (%.2fx "
	       "anchor)\n",
	       b[FRESH], b[FRESH] / b[ANCHOR]);
	for (int i = 0; i < N; i++)
		drop_loop(tmp, names[i]);
}

static int bench_disk(const char *rec_bin, int secs)
{
	if (geteuid() != 0) {
		printf("rt-bench --disk needs root (it makes a loop device)\n");
		return 1;
	}
	char tmp[] = "/tmp/rt-bench-XXXXXX";
	if (!mkdtemp(tmp))
		return 1;
	char img[4200], mnt[4200], store[4300], shm[4300], plain[4300], dev[64] = "";
	snprintf(img, sizeof(img), "%s/disk.img", tmp);
	snprintf(mnt, sizeof(mnt), "%s/mnt", tmp);
	snprintf(store, sizeof(store), "%s/store", mnt);
	snprintf(plain, sizeof(plain), "%s/plain.dat", mnt);
	snprintf(shm, sizeof(shm), "%s/shm", tmp);
	mkdir(mnt, 0700);
	mkdir(shm, 0700);
	setenv("RT_SHM_DIR", shm, 1);
	char cmd[32768];
	snprintf(cmd, sizeof(cmd),
	         "truncate -s 512M '%s' && losetup -f --show '%s' > '%s.dev' && mkfs.ext4 -q "
	         "-E lazy_itable_init=0,lazy_journal_init=0 "
	         "$(cat '%s.dev') && mount $(cat '%s.dev') '%s'",
	         img, img, img, img, img, mnt);
	int rc = system(cmd);
	FILE *f = NULL;
	snprintf(cmd, sizeof(cmd), "%s.dev", img);
	if (rc == 0 && (f = fopen(cmd, "r")) && fscanf(f, "/dev/%63s", dev) == 1) {
		const int n = 2000;
		char count[16];
		snprintf(count, sizeof(count), "%d", n);
		setenv("RT_TEST_CLOCK", "1795000000", 1);
	setenv("RT_TEST_HOOKS", "1", 1);
		char *rec[] = {(char *)rec_bin, "--quiet", "-i",  "1", "--count",
		               count,           "--store", store, NULL};
		sync();
		long long s0 = dev_write_sectors(dev);
		double cpu, wall;
		run_cmd(rec, &cpu, &wall);
		sync();
		long long s1 = dev_write_sectors(dev);
		unsetenv("RT_TEST_CLOCK");
		/* the anchor: the bytes rt stored, appended to a plain file with the
		 * same syncs (one per 30 samples: rt's group commit at 1 Hz) */
		struct stat st;
		char data[4400];
		snprintf(data, sizeof(data), "%s/data.mdb", store);
		long long stored = stat(data, &st) == 0 ? (long long)st.st_size : -1;
		uint64_t used = 0;
		struct rt_store *sto;
		if (rt_store_open(store, RT_STORE_RDONLY, &sto) == 0) {
			rt_store_used_bytes(sto, &used);
			rt_store_close(sto);
		}
		size_t per = used ? (size_t)(used / n) : 64;
		static char buf[65536];
		memset(buf, 'x', sizeof(buf));
		int fd = open(plain, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		sync();
		long long p0 = dev_write_sectors(dev);
		for (int i = 0; fd >= 0 && i < n; i++) {
			if (write(fd, buf, per) < 0)
				break;
			if (i % 30 == 29)
				fdatasync(fd);
		}
		if (fd >= 0)
			close(fd);
		sync();
		long long p1 = dev_write_sectors(dev);
		printf("Disk writes at 1 Hz (%d samples, ext4 on %s holding only the store):\n", n,
		       dev);
		printf("  plain file: append %zu B/sample, fdatasync every 30  %7.0f B/sample  "
		       "(anchor)\n",
		       per, (double)(p1 - p0) * 512 / n);
		printf("  rt-recorder store (LMDB, a commit + sync per 30 s)   %7.0f B/sample  "
		       "(%.1fx anchor)\n",
		       (double)(s1 - s0) * 512 / n, (double)(s1 - s0) / (double)(p1 - p0));
		printf("  stored: LMDB pages in use per sample              %8.0f B\n",
		       (double)used / n);
		printf("  stored: data.mdb size per sample (zeroed pages ahead) %4.0f B\n\n",
		       (double)stored / n);
		fflush(stdout);
		bench_disk_real(rec_bin, tmp, per, secs);
	} else {
		printf(
		    "rt-bench --disk: cannot make the loop device (losetup, mkfs.ext4, mount)\n");
	}
	if (f)
		fclose(f);
	snprintf(cmd, sizeof(cmd),
	         "umount '%s' 2>/dev/null; losetup -d $(cat '%s.dev') 2>/dev/null", mnt, img);
	if (system(cmd) != 0)
		printf("rt-bench --disk: cleanup of %s failed\n", mnt);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	return system(cmd) != 0;
}

/* CPU ns a process has run (schedstat; else stat's ticks), -1 if gone */
static long long sched_ns(pid_t pid)
{
	char p[64], b[256];
	snprintf(p, sizeof(p), "/proc/%d/schedstat", pid);
	FILE *f = fopen(p, "r");
	long long ns = -1;
	if (f && fgets(b, sizeof(b), f))
		ns = strtoll(b, NULL, 10);
	if (f)
		fclose(f);
	if (ns >= 0)
		return ns;
	snprintf(p, sizeof(p), "/proc/%d/stat", pid);
	f = fopen(p, "r");
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

/* The children of pid (its exporters, for the recorder). */
static int children_of(pid_t pid, pid_t *out, int cap)
{
	char p[96];
	snprintf(p, sizeof(p), "/proc/%d/task/%d/children", pid, pid);
	FILE *f = fopen(p, "r");
	int n = 0, v;
	while (f && n < cap && fscanf(f, "%d", &v) == 1)
		out[n++] = v;
	if (f)
		fclose(f);
	return n;
}

static long long family_ns(pid_t rec, const pid_t *kids, int nk, long long *own)
{
	long long sum = *own = sched_ns(rec);
	for (int i = 0; i < nk; i++) {
		long long k = sched_ns(kids[i]);
		sum += k > 0 ? k : 0;
	}
	return sum;
}

static long smaps_kb(pid_t pid, const char *key)
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

static void proc_name(pid_t pid, char *buf, size_t cap)
{
	char p[64];
	snprintf(p, sizeof(p), "/proc/%d/comm", pid);
	FILE *f = fopen(p, "r");
	if (!f || !fgets(buf, (int)cap, f))
		snprintf(buf, cap, "?");
	buf[strcspn(buf, "\n")] = '\0';
	if (f)
		fclose(f);
}

/* Start argv with stdin, stdout and stderr on /dev/null. */
static pid_t spawn_quiet(char *const argv[])
{
	pid_t pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
		execv(argv[0], argv);
		_exit(127);
	}
	return pid;
}

/*
 * The whole family at 1 Hz in the default mode (JSON lines to stderr: the
 * recorder and the rt-export it starts to print them), sysstat's sadc at
 * the same 1 s pace, and the floor paced at 1 Hz in this process, all three
 * over the same window after a 2 s warm-up: CPU per sample from the
 * kernel's run-time counters (schedstat), then each process's memory.
 */
static void bench_family(const char *rec_bin, const char *tmp, int n)
{
	char store[4300], sa[4300], count[32], sacount[32];
	snprintf(store, sizeof(store), "%s/store-family", tmp);
	snprintf(sa, sizeof(sa), "%s/sa.data", tmp);
	snprintf(count, sizeof(count), "%d", n + 4);
	snprintf(sacount, sizeof(sacount), "%d", n + 4);
	char *rargv[] = {(char *)rec_bin, "-i", "1", "--count", count, "--store", store, NULL};
	char sadc[] = "/usr/lib/sysstat/sadc";
	char *sargv[] = {sadc, "1", sacount, sa, NULL};
	int have_sadc = access(sadc, X_OK) == 0;
	pid_t rec = spawn_quiet(rargv), sad = have_sadc ? spawn_quiet(sargv) : -1;
	usleep(2200000);
	pid_t kids[8];
	int nk = children_of(rec, kids, 8);
	long long rec0, rec1, fam0 = family_ns(rec, kids, nk, &rec0);
	long long sad0 = sad > 0 ? sched_ns(sad) : -1;
	double w0 = wall_now();
	/* the two floors in the same window: the 5 files in a child, the
	 * recorder's own in this process */
	pace = 1.0;
	double five[2] = {-1, 0};
	int fp[2];
	pid_t fivep = pipe(fp) == 0 ? fork() : -1;
	if (fivep == 0) {
		floor_of = -1;
		five[0] = bench_pread(n);
		five[1] = floor_calls;
		if (write(fp[1], five, sizeof(five)) != (ssize_t)sizeof(five))
			_exit(1);
		_exit(0);
	}
	/* the printer's floor: a process woken once a second that writes one
	 * line of a live line's size (3 KiB) to /dev/null, and nothing else */
	double wake = -1;
	int wp[2];
	pid_t wakep = pipe(wp) == 0 ? fork() : -1;
	if (wakep == 0) {
		static char line[3072];
		memset(line, 'x', sizeof(line));
		int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
		double dl = wall_now(), t0 = 0;
		for (int i = 0; i < n + 1; i++) {
			pace_wait(&dl);
			if (i == 1)
				t0 = cpu_now(); /* after the first wake: its pages are in */
			if (write(null, line, sizeof(line)) < 0)
				_exit(1);
		}
		double us = (cpu_now() - t0) / n * 1e6;
		if (write(wp[1], &us, sizeof(us)) != (ssize_t)sizeof(us))
			_exit(1);
		_exit(0);
	}
	floor_of = rec;
	double fl = bench_pread(n);
	floor_of = 0;
	pace = 0;
	double w1 = wall_now();
	long long fam1 = family_ns(rec, kids, nk, &rec1);
	long long sad1 = sad > 0 ? sched_ns(sad) : -1;
	if (fivep > 0) {
		if (read(fp[0], five, sizeof(five)) != (ssize_t)sizeof(five))
			five[0] = -1;
		waitpid(fivep, NULL, 0);
		close(fp[0]);
		close(fp[1]);
	}
	if (wakep > 0) {
		if (read(wp[0], &wake, sizeof(wake)) != (ssize_t)sizeof(wake))
			wake = -1;
		waitpid(wakep, NULL, 0);
		close(wp[0]);
		close(wp[1]);
	}
	double samples = (w1 - w0) / 1.0;
	double fam = (double)(fam1 - fam0) / samples / 1e3,
	       own = (double)(rec1 - rec0) / samples / 1e3;
	printf("Default mode at 1 Hz (JSON lines to stderr), %d samples, side by side:\n", n);
	printf("  floor of the %2d files the recorder keeps open       %8.1f us  (%.1f syscalls)\n",
	       floor_nfiles, fl, floor_calls);
	if (five[0] > 0)
		printf("  floor of the  5 files the reference's metrics read  %8.1f us  (%.1f "
		       "syscalls)\n",
		       five[0], five[1]);
	printf("  rt family: rt-recorder + rt-export live             %8.1f us  (%.2fx floor of "
	       "its files)\n",
	       fam, fam / fl);
	printf("    of which rt-recorder / its printer                %8.1f / %.1f us\n", own,
	       fam - own);
	if (wake > 0)
		printf("  the printer's floor: woken at 1 Hz, writes 3 KiB    %8.1f us  (printer "
		       "%.2fx)\n",
		       wake, (fam - own) / wake);
	printf("  (the recorder's files: %s)\n", floor_list);
	if (sad0 >= 0 && sad1 >= 0) {
		double sd = (double)(sad1 - sad0) / samples / 1e3;
		printf(
		    "  sysstat sadc 1 (same pace, same window)             %8.1f us  (%.2fx floor, "
		    "%.2fx rt family)\n",
		    sd, sd / fl, sd / fam);
	} else {
		printf("  sysstat sadc: not installed (apt-get install sysstat to compare)\n");
	}
	printf("  (the Python packages: rt-bench peers)\n");
	printf("Memory of the family (default mode, %d s into the run):\n", n + 2);
	long pss_sum = 0;
	pid_t all[9] = {rec};
	for (int i = 0; i < nk; i++)
		all[i + 1] = kids[i];
	for (int i = 0; i <= nk; i++) {
		char name[64];
		proc_name(all[i], name, sizeof(name));
		long rss = status_kb(all[i], "VmRSS:"), pss = smaps_kb(all[i], "Pss:");
		pss_sum += pss > 0 ? pss : 0;
		printf("  %-12s (pid %7d)  VmRSS %6ld KiB  PSS %6ld KiB\n", name, all[i], rss, pss);
	}
	printf("  family PSS                                         %8ld KiB  (%.2f MiB)\n\n",
	       pss_sum, pss_sum / 1024.0);
	int st;
	waitpid(rec, &st, 0);
	if (sad > 0)
		waitpid(sad, &st, 0);
}

/* rt-recorder --quiet at 100 Hz beside the floor paced at 100 Hz. */
static void bench_quiet(const char *rec_bin, const char *tmp, int secs)
{
	char store[4300], count[32];
	snprintf(store, sizeof(store), "%s/store-quiet", tmp);
	snprintf(count, sizeof(count), "%d", (secs + 3) * 100);
	char *rargv[] = {(char *)rec_bin, "--quiet", "-i",  "0.01", "--count",
	                 count,           "--store", store, NULL};
	pid_t rec = spawn_quiet(rargv);
	usleep(1000000);
	long long r0 = sched_ns(rec);
	double w0 = wall_now();
	pace = 0.01;
	double fl = bench_pread(secs * 100);
	pace = 0;
	double w1 = wall_now();
	long long r1 = sched_ns(rec);
	long rss = status_kb(rec, "VmRSS:"), pss = smaps_kb(rec, "Pss:");
	kill(rec, SIGTERM);
	int st;
	waitpid(rec, &st, 0);
	double samples = (w1 - w0) / 0.01, us = (double)(r1 - r0) / samples / 1e3;
	printf("rt-recorder --quiet -i 0.01 (100 Hz), %d s, side by side:\n", secs);
	printf("  floor, paced at 100 Hz in rt-bench                  %8.1f us  (%.1f syscalls)\n",
	       fl, floor_calls);
	printf("  rt-recorder                                         %8.1f us  (%.2fx floor)\n",
	       us, us / fl);
	printf("  rt-recorder CPU                                     %8.2f %% of one core\n",
	       (double)(r1 - r0) / 1e9 / (w1 - w0) * 100);
	printf("  rt-recorder VmRSS / PSS                             %5ld / %ld KiB\n\n", rss,
	       pss);
}

/* Syscalls per sample: strace -c of two run lengths, the difference
 * divided by the extra samples (startup cancels out). */
static double strace_calls(char *const argv[], const char *out)
{
	pid_t pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
		char *sargv[32] = {"strace", "-f", "-c", "-o", (char *)out};
		int a = 5;
		for (int i = 0; argv[i] && a < 31; i++)
			sargv[a++] = argv[i];
		sargv[a] = NULL;
		execvp("strace", sargv);
		_exit(127);
	}
	int st;
	waitpid(pid, &st, 0);
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		return -1;
	FILE *f = fopen(out, "r");
	char line[512];
	double calls = -1;
	while (f && fgets(line, sizeof(line), f)) {
		double pct, secs, usec, c;
		if (strstr(line, " total") &&
		    sscanf(line, "%lf %lf %lf %lf", &pct, &secs, &usec, &c) == 4)
			calls = c;
	}
	if (f)
		fclose(f);
	return calls;
}

static void bench_syscalls(const char *rec_bin, const char *tmp)
{
	if (system("command -v strace > /dev/null 2>&1") != 0) {
		printf("Syscalls per sample: strace not installed\n\n");
		return;
	}
	char store[4300], out[4300];
	snprintf(store, sizeof(store), "%s/store-strace", tmp);
	snprintf(out, sizeof(out), "%s/strace.txt", tmp);
	printf("Syscalls per sample at 100 Hz (strace -c, 600 minus 100 samples, over 500):\n");
	printf("  floor (preads, statvfs, getdents, the sleep)        %8.1f\n", floor_calls);
	for (int quiet = 1; quiet >= 0; quiet--) {
		double c[2];
		for (int k = 0; k < 2; k++) {
			char count[16];
			snprintf(count, sizeof(count), "%d", k ? 600 : 100);
			char *q[] = {(char *)rec_bin, "-i",  "0.01",    "--count", count,
			             "--store",       store, "--quiet", NULL};
			if (!quiet)
				q[7] = NULL;
			c[k] = strace_calls(q, out);
		}
		printf("  %-50s %8.1f\n",
		       quiet ? "rt-recorder --quiet"
		             : "rt-recorder + rt-export live (default mode)",
		       c[0] < 0 || c[1] < 0 ? -1 : (c[1] - c[0]) / 500);
	}
	printf("\n");
}

/* Wall time of `resource-tracker -- true` (quiet, and printing to stderr)
 * beside `/usr/bin/time -v true`, interleaved, mean of 10 each. */
static void bench_wrapper(const char *rec_bin, const char *tmp)
{
	char store[4300];
	snprintf(store, sizeof(store), "%s/store-wrap", tmp);
	char tv[] = "/usr/bin/time", truebin[] = "/bin/true";
	char *targv[] = {tv, "-v", truebin, NULL};
	char *qargv[] = {(char *)rec_bin, "--quiet", "--store", store, "--", "true", NULL};
	char *dargv[] = {(char *)rec_bin, "--store", store, "--", "true", NULL};
	char *bargv[] = {truebin, NULL};
	int have_time = access(tv, X_OK) == 0;
	double sum[4] = {0}, cpu, wall;
	int reps = 10;
	for (int i = 0; i < reps; i++) {
		char *const *argvs[4] = {have_time ? targv : bargv, bargv, qargv, dargv};
		for (int k = 0; k < 4; k++) {
			if (run_cmd(argvs[k], &cpu, &wall))
				wall = -1;
			sum[k] += wall;
		}
	}
	printf("Wrapper: wall time of the whole command, mean of %d (interleaved):\n", reps);
	if (have_time)
		printf("  /usr/bin/time -v true (anchor)                      %8.2f ms\n",
		       sum[0] / reps * 1e3);
	else
		printf("  /usr/bin/time: not installed (apt-get install time)\n");
	printf("  /bin/true                                           %8.2f ms\n",
	       sum[1] / reps * 1e3);
	double anchor = have_time ? sum[0] : sum[1];
	printf("  resource-tracker --quiet -- true                    %8.2f ms  (%.2fx anchor)\n",
	       sum[2] / reps * 1e3, sum[2] / anchor);
	printf("  resource-tracker -- true (JSON lines to stderr)     %8.2f ms  (%.2fx anchor)\n\n",
	       sum[3] / reps * 1e3, sum[3] / anchor);
}

/* /proc/PID/FILE into buf, NUL-terminated: its length, <= 0 when gone. */
static ssize_t proc_text(pid_t pid, const char *file, char *buf, size_t cap)
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

/* CPU time a process has run, ns (/proc/PID/schedstat: exact, not ticks) */
static uint64_t oncpu_ns(pid_t pid)
{
	char buf[128];
	return proc_text(pid, "schedstat", buf, sizeof(buf)) > 0 ? strtoull(buf, NULL, 10) : 0;
}

/* The first child of pid (its children file), or -1. */
static pid_t first_child(pid_t pid)
{
	char file[64], buf[256];
	snprintf(file, sizeof(file), "task/%d/children", (int)pid);
	return proc_text(pid, file, buf, sizeof(buf)) > 0 ? (pid_t)atoi(buf) : -1;
}

/*
 * Wrapper mode's guardian (the process that waits for the job) beside the
 * rest of the family, at 10 Hz with JSON lines to /dev/null: each one's
 * CPU per sample (schedstat, between two readings after start-up) and PSS.
 */
static void bench_guardian(const char *rec_bin, const char *tmp, int quick)
{
	char store[4300], secs_s[16];
	int secs = quick ? 6 : 30;
	snprintf(store, sizeof(store), "%s/store-guardian", tmp);
	snprintf(secs_s, sizeof(secs_s), "%d", secs);
	pid_t g = fork();
	if (g == 0) {
		int null = open("/dev/null", O_RDWR);
		dup2(null, 1);
		dup2(null, 2);
		execl(rec_bin, rec_bin, "-i", "0.1", "--store", store, "--", "sleep", secs_s,
		      (char *)NULL);
		_exit(127);
	}
	struct timespec nap = {1, 500000000};
	nanosleep(&nap, NULL);
	pid_t r = first_child(g), p = r > 0 ? first_child(r) : -1;
	pid_t who[3] = {g, r, p};
	uint64_t c0[3], c1[3];
	double w0 = wall_now();
	for (int i = 0; i < 3; i++)
		c0[i] = oncpu_ns(who[i]);
	struct timespec rest = {secs - 3, 0};
	nanosleep(&rest, NULL);
	double w1 = wall_now();
	long pss[3];
	for (int i = 0; i < 3; i++) {
		c1[i] = oncpu_ns(who[i]);
		pss[i] = smaps_kb(who[i], "Pss:");
	}
	int st;
	waitpid(g, &st, 0);
	double samples = (w1 - w0) / 0.1;
	static const char *const names[3] = {"guardian (waits for the job)", "recorder",
	                                     "printer (rt-export live)"};
	printf("Wrapper mode's processes, -i 0.1 with JSON lines, %.0f samples:\n", samples);
	double fam = 0;
	long fpss = 0;
	for (int i = 0; i < 3; i++) {
		double us = (double)(c1[i] - c0[i]) / samples / 1e3;
		fam += us;
		fpss += pss[i];
		printf("  %-30s %8.2f us/sample  PSS %6ld KiB\n", names[i], us, pss[i]);
	}
	printf("  %-30s %8.2f us/sample  PSS %6ld KiB\n\n", "the family", fam, fpss);
}

/*
 * The live printer's memory over a long run: the recorder on the fake
 * clock (as fast as it can sample) at -i 0.01 for n samples, printing JSON
 * to /dev/null, with --summary and without it (the anchor: a printer that
 * keeps nothing); VmRSS at a quarter, half and three quarters of the run,
 * and VmHWM at its end (the summary, read from the store then, included).
 */
static void printer_rss(const char *rec_bin, const char *tmp, int n, int summary, long out[4])
{
	char store[4300], count[32];
	snprintf(store, sizeof(store), "%s/store-printer-%d", tmp, summary);
	snprintf(count, sizeof(count), "%d", n);
	pid_t r = fork();
	if (r == 0) {
		int null = open("/dev/null", O_RDWR);
		dup2(null, 1);
		dup2(null, 2);
		setenv("RT_TEST_CLOCK", "1795000000", 1);
	setenv("RT_TEST_HOOKS", "1", 1);
		execl(rec_bin, rec_bin, "--count", count, "-i", "0.01", "--store", store, "-o",
		      "/dev/null", summary ? "--summary" : NULL, (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 4; i++)
		out[i] = -1;
	pid_t p = -1;
	struct timespec nap = {0, 20000000};
	double t0 = wall_now();
	while (p < 0 && wall_now() - t0 < 10) {
		p = first_child(r);
		nanosleep(&nap, NULL);
	}
	int st;
	long hwm = -1;
	/* how far the printer is: its write() calls, about one per line */
	uint64_t last_seq = 0;
	for (int q = 1; q <= 3 && p > 0;) {
		char buf[512];
		if (proc_text(p, "io", buf, sizeof(buf)) <= 0)
			break;
		const char *w = strstr(buf, "syscw:");
		last_seq = w ? strtoull(w + 6, NULL, 10) : 0;
		if (last_seq >= (uint64_t)n * (uint64_t)q / 4) {
			out[q - 1] = status_kb(p, "VmRSS:");
			q++;
		}
		hwm = status_kb(p, "VmHWM:") > hwm ? status_kb(p, "VmHWM:") : hwm;
		nanosleep(&nap, NULL);
	}
	while (p > 0 && kill(p, 0) == 0) {
		long h = status_kb(p, "VmHWM:");
		hwm = h > hwm ? h : hwm;
		nanosleep(&nap, NULL);
	}
	waitpid(r, &st, 0);
	out[3] = hwm;
}

static void bench_printer(const char *rec_bin, const char *tmp, int quick)
{
	int n = quick ? 40000 : 400000;
	long with[4], without[4];
	printer_rss(rec_bin, tmp, n, 0, without);
	printer_rss(rec_bin, tmp, n, 1, with);
	printf("The live printer over %d samples (fake clock, -i 0.01, JSON to /dev/null):\n", n);
	printf("  %-34s %8s %8s %8s %10s\n", "VmRSS KiB at", "1/4", "1/2", "3/4", "VmHWM end");
	printf("  %-34s %8ld %8ld %8ld %10ld\n", "printer (anchor)", without[0], without[1],
	       without[2], without[3]);
	printf("  %-34s %8ld %8ld %8ld %10ld\n\n", "printer --summary", with[0], with[1], with[2],
	       with[3]);
}

/*
 * rt-bench peers: rt's family beside the trackers people would use
 * instead, all started together on this host and measured over the same
 * window at 1 Hz. Each peer runs in a cgroup of its own (its CPU, forked
 * helpers included, from the kernel's cpuacct / cpu.stat) and writes to a
 * loop device of its own (the sectors that device wrote, after a syncfs at
 * both ends of the window); PSS is the sum of smaps_rollup over the
 * cgroup's processes at the window's end. Needs root.
 */
enum { PEER_ARGS = 12 };
struct peer {
	const char *name;
	const char *argv[PEER_ARGS];
	int python;      /* a Python program: the reference or rt_tracker */
	char cg[2][640]; /* cpu (or v2 unified) and memory cgroup dirs */
	char mnt[4300], dev[64], out[4400];
	pid_t pid;
	long long cpu0, cpu1, sec0, sec1;
	long pss_kb;
	int nprocs, ok;
};

static int cg_v2;
static char cg_cpu_root[512], cg_mem_root[512];

/* The cgroup hierarchies from mountinfo: v1 cpuacct and memory, else v2. */
static int cg_find_roots(void)
{
	FILE *f = fopen("/proc/self/mountinfo", "r");
	char line[2048];
	while (f && fgets(line, sizeof(line), f)) {
		char mp[512], fstype[64], opts[512];
		const char *dash = strstr(line, " - ");
		if (!dash || sscanf(line, "%*s %*s %*s %*s %511s", mp) != 1 ||
		    sscanf(dash + 3, "%63s %*s %511s", fstype, opts) != 2)
			continue;
		if (!strcmp(fstype, "cgroup") && strstr(opts, "cpuacct") && !cg_cpu_root[0])
			snprintf(cg_cpu_root, sizeof(cg_cpu_root), "%s", mp);
		else if (!strcmp(fstype, "cgroup") && strstr(opts, "memory") && !cg_mem_root[0])
			snprintf(cg_mem_root, sizeof(cg_mem_root), "%s", mp);
		else if (!strcmp(fstype, "cgroup2") && !cg_v2) {
			cg_v2 = 1;
			if (!cg_cpu_root[0])
				snprintf(cg_cpu_root, sizeof(cg_cpu_root), "%s", mp);
		}
	}
	if (f)
		fclose(f);
	if (cg_cpu_root[0] && cg_mem_root[0])
		cg_v2 = 0; /* v1 controllers mounted: use them */
	return cg_cpu_root[0] ? 0 : -1;
}

static int write_text(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? write(fd, text, strlen(text)) : -1;
	if (fd >= 0)
		close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -1;
}

static long long cg_cpu_ns(const struct peer *p)
{
	char path[700], buf[4096];
	snprintf(path, sizeof(path), "%s/%s", p->cg[0], cg_v2 ? "cpu.stat" : "cpuacct.usage");
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	if (!cg_v2)
		return strtoll(buf, NULL, 10);
	const char *u = strstr(buf, "usage_usec ");
	return u ? strtoll(u + 11, NULL, 10) * 1000 : -1;
}

/* PSS of every process in the peer's cgroup, and how many there are. */
static long cg_pss_kb(struct peer *p)
{
	char path[700];
	snprintf(path, sizeof(path), "%s/cgroup.procs", p->cg[0]);
	FILE *f = fopen(path, "r");
	long sum = 0;
	int pid;
	p->nprocs = 0;
	while (f && fscanf(f, "%d", &pid) == 1) {
		long k = smaps_kb(pid, "Pss:");
		sum += k > 0 ? k : 0;
		p->nprocs++;
	}
	if (f)
		fclose(f);
	return sum;
}

static long long peer_sectors(struct peer *p)
{
	int fd = open(p->mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		syncfs(fd);
		close(fd);
	}
	return dev_write_sectors(p->dev);
}

static void peer_start(struct peer *p, const char *bindir)
{
	p->pid = fork();
	if (p->pid != 0)
		return;
	char me[32];
	snprintf(me, sizeof(me), "%d", getpid());
	for (int i = 0; i < 2; i++) {
		char procs[700];
		snprintf(procs, sizeof(procs), "%s/cgroup.procs", p->cg[i]);
		if (p->cg[i][0] && write_text(procs, me))
			_exit(126);
	}
	int null = open("/dev/null", O_RDWR);
	dup2(null, 0);
	dup2(null, 1);
	dup2(null, 2);
	unsetenv("RT_SHM_DIR"); /* the ring where users have it: /dev/shm */
	setenv("TMPDIR", p->mnt, 1);
	char path[8192];
	snprintf(path, sizeof(path), "%s:%s", bindir,
	         getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
	setenv("PATH", path, 1);
	if (chdir(p->mnt) != 0)
		_exit(126);
	execvp(p->argv[0], (char *const *)p->argv);
	_exit(127);
}

static void peer_stop(struct peer *p)
{
	char path[700];
	snprintf(path, sizeof(path), "%s/cgroup.procs", p->cg[0]);
	for (int round = 0; round < 40; round++) {
		FILE *f = fopen(path, "r");
		int pid, any = 0;
		while (f && fscanf(f, "%d", &pid) == 1) {
			kill(pid, round < 20 ? SIGTERM : SIGKILL);
			any = 1;
		}
		if (f)
			fclose(f);
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		if (!any)
			break;
		usleep(100000);
	}
	for (int i = 0; i < 2; i++)
		if (p->cg[i][0])
			rmdir(p->cg[i]);
}

static int bench_peers(const char *rec_bin, int secs)
{
	if (geteuid() != 0 || cg_find_roots()) {
		printf("rt-bench peers: needs root and cgroups (a cgroup and a loop device per "
		       "peer)\n");
		return 1;
	}
	const char *ref = getenv("RT_BENCH_REFERENCE");
	char bindir[4200], pydir[4300], refpath[4200] = "", tmpb[4200];
	snprintf(tmpb, sizeof(tmpb), "%s", rec_bin);
	snprintf(bindir, sizeof(bindir), "%s", dirname(tmpb));
	snprintf(pydir, sizeof(pydir), "%s/../python", bindir);
	if (ref && access(ref, R_OK) == 0)
		snprintf(refpath, sizeof(refpath), "%s", ref);
	char sadc[] = "/usr/lib/sysstat/sadc";
	static char code[4][4800];
	snprintf(code[0], sizeof(code[0]),
	         "import sys; sys.path.insert(0, %s%s%s); from resource_tracker import "
	         "SystemTracker; SystemTracker(interval=1, output_file='system.csv')",
	         "'", refpath, "'");
	snprintf(code[1], sizeof(code[1]),
	         "import sys, time; sys.path.insert(0, '%s'); from resource_tracker import "
	         "ResourceTracker; t = ResourceTracker(interval=1, discover_server=False, "
	         "discover_cloud=False); t.start(); time.sleep(1e6)",
	         refpath);
	snprintf(code[2], sizeof(code[2]),
	         "import sys, time; sys.path.insert(0, '%s'); from rt_tracker import "
	         "ResourceTracker; t = ResourceTracker(interval=1, discover_server=False, "
	         "discover_cloud=False); t.start(); time.sleep(1e6)",
	         pydir);
	snprintf(code[3], sizeof(code[3]), "import time; time.sleep(1e6)");
	struct peer peers[] = {
	    {.name = "rt family (rt-recorder -i 1, JSON lines)",
	     .argv = {rec_bin, "-i", "1", "--store", "store", NULL}},
	    {.name = "sysstat sadc 1 (its default activities)",
	     .argv = {sadc, "1", "sa.data", NULL}},
	    {.name = "resource-tracker 0.5.0 SystemTracker",
	     .argv = {"python3", "-c", code[0], NULL},
	     .python = 1},
	    {.name = "resource-tracker 0.5.0 ResourceTracker",
	     .argv = {"python3", "-c", code[1], NULL},
	     .python = 1},
	    {.name = "rt_tracker ResourceTracker (python/)",
	     .argv = {"python3", "-c", code[2], NULL},
	     .python = 1},
	    {.name = "python3 idle (the host program alone)",
	     .argv = {"python3", "-c", code[3], NULL},
	     .python = 1},
	};
	enum { NP = sizeof(peers) / sizeof(peers[0]) };
	char tmp[] = "/tmp/rt-bench-peers-XXXXXX";
	if (!mkdtemp(tmp))
		return 1;
	int have_sadc = access(sadc, X_OK) == 0;
	for (int i = 0; i < NP; i++) {
		struct peer *p = &peers[i];
		char name[32];
		snprintf(name, sizeof(name), "peer%d", i);
		int skip = (i == 1 && !have_sadc) || ((i == 2 || i == 3) && !refpath[0]) ||
		           (i == 4 && access(pydir, R_OK));
		if (skip || make_loop(tmp, name, p->mnt, sizeof(p->mnt), p->dev))
			continue;
		snprintf(p->cg[0], sizeof(p->cg[0]), "%s/rt-bench-%s-%d", cg_cpu_root, name,
		         getpid());
		if (!cg_v2)
			snprintf(p->cg[1], sizeof(p->cg[1]), "%s/rt-bench-%s-%d", cg_mem_root, name,
			         getpid());
		if (mkdir(p->cg[0], 0755) || (p->cg[1][0] && mkdir(p->cg[1], 0755)))
			continue;
		p->ok = 1;
		peer_start(p, bindir);
	}
	sleep(5); /* imports, first samples */
	for (int i = 0; i < NP; i++)
		if (peers[i].ok) {
			peers[i].cpu0 = cg_cpu_ns(&peers[i]);
			peers[i].sec0 = peer_sectors(&peers[i]);
		}
	double w0 = wall_now();
	sleep((unsigned)secs);
	double w = wall_now() - w0;
	for (int i = 0; i < NP; i++)
		if (peers[i].ok) {
			peers[i].cpu1 = cg_cpu_ns(&peers[i]);
			peers[i].sec1 = peer_sectors(&peers[i]);
			peers[i].pss_kb = cg_pss_kb(&peers[i]);
		}
	printf("Peers at 1 Hz, all started together, measured over the same %.0f s (per sample = "
	       "per second):\n",
	       w);
	printf("  %-42s %10s %7s %9s %6s %5s %12s %7s\n", "", "CPU us", "x rt", "PSS KiB", "x rt",
	       "procs", "dev bytes", "x rt");
	const struct peer *rt = &peers[0];
	double rt_cpu = rt->ok ? (double)(rt->cpu1 - rt->cpu0) / w / 1e3 : 0;
	double rt_b = rt->ok ? (double)(rt->sec1 - rt->sec0) * 512 / w : 0;
	for (int i = 0; i < NP; i++) {
		const struct peer *p = &peers[i];
		if (!p->ok) {
			printf("  %-42s not run: %s\n", p->name,
			       i == 1   ? "sysstat is not installed (apt-get install sysstat)"
			       : i == 4 ? "no python/ beside the build directory"
			       : i < 4  ? "set RT_BENCH_REFERENCE to the src/ of a SpareCores/"
			                  "resource-tracker checkout"
			                : "no loop device or cgroup");
			continue;
		}
		double cpu = (double)(p->cpu1 - p->cpu0) / w / 1e3;
		double b = (double)(p->sec1 - p->sec0) * 512 / w;
		char bx[32] = "-";
		if (rt_b > 0)
			snprintf(bx, sizeof(bx), "%.2f", b / rt_b);
		printf("  %-42s %10.1f %7.2f %9ld %6.2f %5d %12.0f %7s\n", p->name, cpu,
		       rt_cpu > 0 ? cpu / rt_cpu : 0, p->pss_kb,
		       rt->pss_kb > 0 ? (double)p->pss_kb / (double)rt->pss_kb : 0, p->nprocs, b,
		       bx);
	}
	printf("  (the Python peers include the interpreter they run in: the idle line is that "
	       "alone)\n\n");
	for (int i = 0; i < NP; i++) {
		char name[32];
		snprintf(name, sizeof(name), "peer%d", i);
		if (peers[i].ok)
			peer_stop(&peers[i]);
		if (peers[i].dev[0])
			drop_loop(tmp, name);
	}
	char cmd[4200];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	return system(cmd) != 0;
}

static int want(int argc, char **argv, const char *section)
{
	int any = 0;
	for (int i = 1; i < argc; i++) {
		if (argv[i][0] == '-')
			continue;
		any = 1;
		if (!strcmp(argv[i], section))
			return 1;
	}
	return !any;
}

static const char *const sections[] = {"steps",    "storage",  "replay",  "gpu",   "quiet",
                                       "family",   "syscalls", "tree",    "delay", "wrapper",
                                       "guardian", "printer",  "binaries"};

int main(int argc, char **argv)
{
	int quick = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--quick"))
			quick = 1;
		else if (i == 1 && !strcmp(argv[1], "peers"))
			continue; /* its own mode, not in "all" */
		else if (i == 2 && (!strcmp(argv[1], "--disk") || !strcmp(argv[1], "peers") ||
		                    !strcmp(argv[1], "gpu")))
			continue; /* its seconds */
		else if (argv[i][0] == '-' && strcmp(argv[i], "--answers") &&
		         strcmp(argv[i], "--push") && strcmp(argv[i], "--disk")) {
			fprintf(stderr, "usage: rt-bench [--quick] [SECTION...] | --answers | "
			                "--disk | --push\n");
			return 2;
		} else if (argv[i][0] != '-') {
			int known = 0;
			for (size_t k = 0; k < sizeof(sections) / sizeof(sections[0]); k++)
				known |= !strcmp(argv[i], sections[k]);
			if (!known) {
				fprintf(stderr,
				        "rt-bench: unknown section '%s' (sections: steps storage "
				        "replay gpu quiet family syscalls tree wrapper binaries)\n",
				        argv[i]);
				return 2;
			}
		}
	}
	int answers = argc > 1 && !strcmp(argv[1], "--answers");
	int disk = argc > 1 && !strcmp(argv[1], "--disk");
	int push = argc > 1 && !strcmp(argv[1], "--push");
	int n = quick ? 500 : 5000;
	rt_sysroot_init();
	char self[4096], dir[4096], rec_bin[4200], exp_bin[4200];
	ssize_t sl = readlink("/proc/self/exe", self, sizeof(self) - 1);
	self[sl > 0 ? sl : 0] = '\0';
	snprintf(dir, sizeof(dir), "%s", dirname(self));
	snprintf(rec_bin, sizeof(rec_bin), "%s/rt-recorder", dir);
	snprintf(exp_bin, sizeof(exp_bin), "%s/rt-export", dir);
	if (answers)
		return bench_answers(rec_bin, exp_bin);
	if (push)
		return bench_push(rec_bin, exp_bin);
	if (argc > 1 && !strcmp(argv[1], "gpu")) { /* rt-bench gpu [SECONDS, default 20] */
		char fake[4300];
		snprintf(fake, sizeof(fake), "%s/libfake-nvml.so", dir);
		return rt_bench_gpu(rec_bin, fake,
		                    argc > 2 && atoi(argv[2]) >= 5 ? atoi(argv[2]) : 20);
	}
	if (argc > 1 && !strcmp(argv[1], "peers")) /* rt-bench peers [SECONDS, default 60] */
		return bench_peers(rec_bin, argc > 2 && atoi(argv[2]) >= 10 ? atoi(argv[2]) : 60);
	if (disk) /* rt-bench --disk [SECONDS of the real 1 Hz part, default 150] */
		return bench_disk(rec_bin, argc > 2 && atoi(argv[2]) >= 30 ? atoi(argv[2]) : 150);
	char tmp[] = "/tmp/rt-bench-XXXXXX";
	if (!mkdtemp(tmp))
		return 1;
	char store[4200], shm[4200];
	snprintf(store, sizeof(store), "%s/store", tmp);
	snprintf(shm, sizeof(shm), "%s/shm", tmp);
	mkdir(shm, 0700);
	setenv("RT_SHM_DIR", shm, 1);
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	printf("rt-bench: %ld CPUs, %d samples per in-process measurement\n\n", ncpu, n);

	uint64_t run = 0;
	size_t rec_size = 0;
	int nstore = quick ? 2000 : 20000;
	if (want(argc, argv, "steps") || want(argc, argv, "storage") ||
	    want(argc, argv, "replay")) {
		double a = bench_pread(n);
		double b = bench_collect(n);
		double c = bench_sampler(store, nstore, &run, &rec_size);
		if (want(argc, argv, "steps")) {
			printf(
			    "CPU per system-wide sample (process CPU time, back to back; the floor "
			    "walks /proc and\nreads operstate every sample, rt once a second):\n");
			printf("  floor: pread of the same files, statvfs, getdents  %8.1f us\n",
			       a);
			printf("  rt collectors (read + parse + fill record)          %8.1f us  "
			       "(%.2fx "
			       "floor)\n",
			       b, b / a);
			printf("  rt recorder step (+ CRC, pack, store, ring)         %8.1f us  "
			       "(%.2fx "
			       "floor)\n",
			       c, c / a);
			/* the same three, paced at 100 Hz */
			int np = quick ? 200 : 1000;
			char store_p[4300];
			snprintf(store_p, sizeof(store_p), "%s/store-paced", tmp);
			pace = 0.01;
			double ap = bench_pread(np), bp = bench_collect(np);
			uint64_t run_p;
			size_t rs_p;
			double cp = bench_sampler(store_p, np, &run_p, &rs_p);
			pace = 0;
			printf("CPU per sample paced at 100 Hz (%d samples, wakeups included):\n",
			       np);
			printf("  floor                                               %8.1f us\n",
			       ap);
			printf("  rt collectors                                       %8.1f us  "
			       "(%.2fx "
			       "floor)\n",
			       bp, bp / ap);
			printf("  rt recorder step                                    %8.1f us  "
			       "(%.2fx "
			       "floor)\n\n",
			       cp, cp / ap);
		}
	}
	if (want(argc, argv, "storage")) {
		uint64_t used = 0;
		struct rt_store *s;
		if (rt_store_open(store, RT_STORE_RDONLY, &s) == 0) {
			rt_store_used_bytes(s, &used);
			rt_store_close(s);
		}
		char datafile[4300];
		snprintf(datafile, sizeof(datafile), "%s/data.mdb", store);
		struct stat st;
		stat(datafile, &st);
		printf("Storage (%d samples of this host):\n", nstore + 1);
		printf("  record size                                        %8zu B\n", rec_size);
		printf("  LMDB pages in use per sample                       %8.0f B\n",
		       (double)used / (nstore + 1));
		printf("  data.mdb file size per sample                      %8.0f B\n\n",
		       (double)st.st_size / (nstore + 1));
	}
	if (want(argc, argv, "replay")) {
		uint64_t lines;
		double csv = bench_replay(store, run, RT_FMT_CSV, quick ? 2 : 10, &lines);
		printf("Replay to /dev/null (%llu lines):\n", (unsigned long long)lines);
		printf("  CSV                                                %8.0f samples/s\n",
		       csv);
		double js = bench_replay(store, run, RT_FMT_JSON, quick ? 1 : 3, &lines);
		printf("  JSON                                               %8.0f samples/s\n\n",
		       js);
	}
	/* GPUs: NVML's cost per sample on the fake H100 beside its floor
	 * (bench_gpu.c), then the Python tracker's way (spawning nvidia-smi
	 * each sample), whose floor is one fork+exec of a trivial program */
	char fake[4300];
	snprintf(fake, sizeof(fake), "%s/libfake-nvml.so", dir);
	if (want(argc, argv, "gpu") && access(fake, R_OK) == 0) {
		rt_bench_gpu(rec_bin, fake, quick ? 5 : 20);
		unsetenv("RT_NVML_LIBRARY");
		unsetenv("FAKE_NVML_GPUS");
		unsetenv("FAKE_NVML_COST");
		unsetenv("FAKE_NVML_PIDS");
		char truebin[] = "/bin/true";
		char *targs[] = {truebin, NULL};
		double total = 0;
		int reps = quick ? 20 : 100;
		for (int i = 0; i < reps; i++) {
			double ccpu, cwall;
			if (run_cmd(targs, &ccpu, &cwall) == 0)
				total += ccpu;
		}
		printf("  fork+exec of /bin/true (floor of spawning nvidia-smi) %6.1f us CPU in "
		       "the child\n\n",
		       total / reps * 1e6);
	}
	if (want(argc, argv, "quiet"))
		bench_quiet(rec_bin, tmp, quick ? 3 : 10);
	if (want(argc, argv, "family"))
		bench_family(rec_bin, tmp, quick ? 6 : 60);
	if (want(argc, argv, "syscalls")) {
		pace = 0.01; /* the floor's calls, the sleep included */
		bench_pread(10);
		pace = 0;
		bench_syscalls(rec_bin, tmp);
	}
	if (want(argc, argv, "tree")) {
		printf("Process tree, CPU per process, back to back (floor: pread of each stat; "
		       "new: open,\npread, close of stat, io, smaps_rollup and children):\n");
		printf("  %-40s %-20s %-20s %s\n", "", "per sample (floor)", "new process (floor)",
		       "+ status read");
		int sizes[4] = {1, 100, 1000, 5000};
		for (int k = 0; k < 2; k++)
			for (int i = 0; i < 4; i++) {
				double per, fr, fper, ffr;
				bench_tree(sizes[i], quick ? 10 : 50, k, &per, &fr, &fper, &ffr);
				char what[80];
				snprintf(what, sizeof(what), "%4d %s", sizes[i],
				         k ? "processes that exec'd sleep"
				           : "forked copies of rt-bench");
				printf("  %-40s %6.2f us (%5.2f)    %6.2f us (%5.2f)    %6.2f us\n",
				       what, per, fper, fr, ffr, tree_slow);
			}
		printf("Forked children sharing a big parent's pages (exact PSS: every member's\n"
		       "smaps_rollup in the sample where one appears or anything moved):\n");
		bench_fork_tree(1, 600, quick ? 3 : 10);
		bench_fork_tree(4, 600, quick ? 3 : 10);
		printf("\n");
	}
	if (want(argc, argv, "delay")) {
		printf("The wait for a CPU (schedstat run_delay), CPU per sample of a tree of one\n"
		       "process with N threads: the tree's sample with and without it, beside the\n"
		       "floor of preading each thread's schedstat through a kept descriptor:\n");
		printf("  %-12s %14s %14s %14s %14s\n", "threads", "without", "with", "its cost",
		       "floor");
		int sizes[4] = {1, 100, 1000, 5000};
		for (int i = 0; i < 4; i++)
			bench_delay(sizes[i], quick ? 20 : 200);
		printf("\n");
	}
	if (want(argc, argv, "wrapper"))
		bench_wrapper(rec_bin, tmp);
	if (want(argc, argv, "guardian"))
		bench_guardian(rec_bin, tmp, quick);
	if (want(argc, argv, "printer"))
		bench_printer(rec_bin, tmp, quick);
	if (want(argc, argv, "binaries")) {
		printf("Stripped binaries:\n");
		printf("  rt-recorder                                        %8ld B\n",
		       stripped_size(rec_bin));
		printf("  rt-export                                          %8ld B\n",
		       stripped_size(exp_bin));
		snprintf(exp_bin, sizeof(exp_bin), "%s/rt-export-full", dir);
		if (access(exp_bin, X_OK) == 0)
			printf("  rt-export-full                                     %8ld B\n",
			       stripped_size(exp_bin));
	}
	char cmd[4300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	if (system(cmd) != 0)
		return 1;
	return 0;
}
