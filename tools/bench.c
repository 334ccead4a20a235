/*
 * bench.c - rt's figures, measured side by side in one run.
 *
 *   rt-bench [--quick]
 *   rt-bench --answers     summary, recommend and report of long runs
 *   rt-bench --disk        bytes the store makes the disk write (root: loop device)
 *
 * Prints: CPU µs per system-wide sample for (a) merely pread'ing the files
 * the recorder reads, (b) collecting them into a record, (c) the full
 * recorder step (collect + encode + LMDB commit + ring publish), and
 * sysstat's sadc when installed; stored bytes per sample; replay throughput
 * to CSV and JSON; the real rt-recorder's RSS and CPU at 100 Hz; stripped
 * binary sizes. A benchmark, not a test: it asserts nothing.
 *
 * --answers records a day at 1 Hz (86,400 samples) and an hour at 100 Hz
 * (360,000 samples) with the fake clock, tracking this process, and times
 * `summary --json`, `recommend` and `report` of each against the anchor of
 * the same run's `replay -f csv`, with the report's size.
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
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "export.h"
#include "rt/runmeta.h"
#include "rt/store.h"
#include "rt/sysroot.h"
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

/* (a) the floor: pread of the same files, getdents of /proc, no parsing */
static double bench_pread(int n)
{
	const char *files[] = {"/proc/stat", "/proc/meminfo", "/proc/diskstats", "/proc/net/dev"};
	int fds[16], nfd = 0;
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		fds[nfd++] = open(files[i], O_RDONLY);
	DIR *d = opendir("/sys/class/net");
	struct dirent *e;
	while (d && (e = readdir(d)) && nfd < 15) {
		char p[512];
		if (e->d_name[0] == '.' || !strcmp(e->d_name, "lo"))
			continue;
		snprintf(p, sizeof(p), "/sys/class/net/%s/operstate", e->d_name);
		fds[nfd++] = open(p, O_RDONLY);
	}
	if (d)
		closedir(d);
	int procfd = open("/proc", O_RDONLY | O_DIRECTORY);
	static char buf[65536];
	double t0 = cpu_now(), dl = wall_now();
	for (int i = 0; i < n; i++) {
		pace_wait(&dl);
		for (int k = 0; k < nfd; k++)
			if (fds[k] >= 0 && pread(fds[k], buf, sizeof(buf), 0) < 0)
				return -1;
		lseek(procfd, 0, SEEK_SET);
		while (syscall(SYS_getdents64, procfd, buf, sizeof(buf)) > 0) {
		}
	}
	double us = (cpu_now() - t0) / n * 1e6;
	for (int k = 0; k < nfd; k++)
		if (fds[k] >= 0)
			close(fds[k]);
	close(procfd);
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
	rt_sink_open(&k, "/dev/null", 1, 0);
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

/* CPU per rt_proctree_sample on a tree of n sleeping processes. */
static double bench_tree(int n, int reps)
{
	int ready[2];
	if (pipe(ready))
		return -1;
	pid_t root = fork();
	if (root == 0) {
		setpgid(0, 0); /* one group: killed as one below */
		int null = open("/dev/null", O_RDWR);
		dup2(null, 1);
		dup2(null, 2);
		for (int i = 1; i < n; i++)
			if (fork() == 0) {
				pause();
				_exit(0);
			}
		if (write(ready[1], "x", 1) < 0) {
		}
		pause();
		_exit(0);
	}
	char c;
	if (read(ready[0], &c, 1) != 1)
		return -1;
	usleep(100000);
	struct rt_proctree *t;
	struct rt_rec_process r;
	rt_proctree_open(&t, root);
	rt_proctree_sample(t, &r);
	double t0 = cpu_now();
	for (int i = 0; i < reps; i++)
		rt_proctree_sample(t, &r);
	double us = (cpu_now() - t0) / reps * 1e6;
	if ((int)r.nprocs != n)
		printf("  (tree of %d: saw %u processes)\n", n, r.nprocs);
	rt_proctree_close(t);
	kill(-root, SIGKILL);
	waitpid(root, NULL, 0);
	close(ready[0]);
	close(ready[1]);
	return us;
}

/* Wall time from a wrapped command's exit to the tracker's exit. */
static double exit_delay(const char *rec_bin, const char *store, int quiet)
{
	char *argv[12];
	int a = 0;
	argv[a++] = (char *)rec_bin;
	if (quiet)
		argv[a++] = "--quiet";
	else {
		argv[a++] = "-o";
		argv[a++] = "/dev/null";
	}
	argv[a++] = "--store";
	argv[a++] = (char *)store;
	argv[a++] = "--";
	argv[a++] = "true";
	argv[a] = NULL;
	double best = 1e9, total = 0;
	for (int i = 0; i < 10; i++) {
		double cpu, wall;
		if (run_cmd(argv, &cpu, &wall))
			return -1;
		total += wall;
		if (wall < best)
			best = wall;
	}
	return total / 10;
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

static int bench_disk(const char *rec_bin)
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
		printf("  stored: data.mdb size per sample (zeroed pages ahead) %4.0f B\n",
		       (double)stored / n);
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

int main(int argc, char **argv)
{
	int quick = argc > 1 && !strcmp(argv[1], "--quick");
	int answers = argc > 1 && !strcmp(argv[1], "--answers");
	int disk = argc > 1 && !strcmp(argv[1], "--disk");
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
	if (disk) {
		rt_sysroot_init();
		return bench_disk(rec_bin);
	}
	char tmp[] = "/tmp/rt-bench-XXXXXX";
	if (!mkdtemp(tmp))
		return 1;
	char store[4200], shm[4200];
	snprintf(store, sizeof(store), "%s/store", tmp);
	snprintf(shm, sizeof(shm), "%s/shm", tmp);
	mkdir(shm, 0700);
	setenv("RT_SHM_DIR", shm, 1);
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	printf("rt-bench: %ld CPUs, %d samples per measurement\n\n", ncpu, n);
	double a = bench_pread(n);
	double b = bench_collect(n);
	uint64_t run;
	size_t rec_size = 0;
	int nstore = quick ? 2000 : 20000;
	double c = bench_sampler(store, nstore, &run, &rec_size);
	printf("CPU per system-wide sample (process CPU time, back to back):\n");
	printf("  pread of the same /proc,/sys files + getdents /proc  %8.1f us  (floor)\n", a);
	printf("  rt collectors (read + parse + fill record)          %8.1f us  (%.2fx floor)\n", b,
	       b / a);
	printf("  rt recorder step (+ CRC, LMDB commit, ring publish) %8.1f us  (%.2fx floor)\n", c,
	       c / a);
	char sadc[] = "/usr/lib/sysstat/sadc";
	if (access(sadc, X_OK) == 0) {
		char out[4300];
		snprintf(out, sizeof(out), "%s/sa.data", tmp);
		char *args[] = {sadc, "1", "6", out, NULL};
		double cpu, wall;
		if (run_cmd(args, &cpu, &wall) == 0)
			printf("  sysstat sadc (1 s, 6 samples, incl. startup)        %8.1f us  "
			       "(%.2fx rt step)\n",
			       cpu / 6 * 1e6, cpu / 6 * 1e6 / c);
	} else {
		printf("  sysstat sadc: not installed (apt-get install sysstat to compare)\n");
	}
	printf("  Python resource-tracker: not measurable here (no PyPI access)\n\n");
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
	printf("CPU per sample paced at 100 Hz (%d samples, wakeups included):\n", np);
	printf("  pread of the same files + getdents /proc             %8.1f us  (floor)\n", ap);
	printf("  rt collectors                                       %8.1f us  (%.2fx floor)\n",
	       bp, bp / ap);
	printf("  rt recorder step                                    %8.1f us  (%.2fx floor)\n",
	       cp, cp / ap);

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

	uint64_t lines;
	double csv = bench_replay(store, run, RT_FMT_CSV, quick ? 2 : 10, &lines);
	printf("Replay to /dev/null (%llu lines):\n", (unsigned long long)lines);
	printf("  CSV                                                %8.0f samples/s\n", csv);
	double js = bench_replay(store, run, RT_FMT_JSON, quick ? 1 : 3, &lines);
	printf("  JSON                                               %8.0f samples/s\n\n", js);

	/* GPUs: the collector with 0, 1 and 4 fake NVML devices, against the
	 * Python tracker's way (spawning nvidia-smi each sample), whose floor is
	 * one fork+exec of a trivial program */
	char fake[4300];
	snprintf(fake, sizeof(fake), "%s/libfake-nvml.so", dir);
	if (access(fake, R_OK) == 0) {
		printf("GPU sampling (fake NVML, back to back; NVML on its worker thread):\n");
		int gpus[3] = {0, 1, 4};
		double base = 0;
		for (int i = 0; i < 3; i++) {
			char nbuf[8];
			snprintf(nbuf, sizeof(nbuf), "%d", gpus[i]);
			setenv("RT_NVML_LIBRARY", fake, 1);
			setenv("FAKE_NVML_GPUS", nbuf, 1);
			double us = bench_collect(quick ? 300 : 3000);
			if (i == 0)
				base = us;
			printf("  collectors with %d GPU%s                             %8.1f us  "
			       "(+%.1f us)\n",
			       gpus[i], gpus[i] == 1 ? " " : "s", us, us - base);
		}
		unsetenv("RT_NVML_LIBRARY");
		unsetenv("FAKE_NVML_GPUS");
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

	/* the real binary at 100 Hz */
	int secs = quick ? 3 : 10;
	char count[32];
	snprintf(count, sizeof(count), "%d", secs * 100);
	char store2[4300];
	snprintf(store2, sizeof(store2), "%s/store2", tmp);
	pid_t pid = fork();
	if (pid == 0) {
		execl(rec_bin, "rt-recorder", "--quiet", "-i", "0.01", "--count", count, "--store",
		      store2, (char *)NULL);
		_exit(127);
	}
	usleep((useconds_t)(secs * 1000000 / 2));
	long rss_half = status_kb(pid, "VmRSS:");
	usleep((useconds_t)(secs * 1000000 / 2 - 300000));
	long rss = status_kb(pid, "VmRSS:"), anon = status_kb(pid, "RssAnon:"),
	     file = status_kb(pid, "RssFile:"), shmem = status_kb(pid, "RssShmem:");
	char rollup[64];
	snprintf(rollup, sizeof(rollup), "/proc/%d/smaps_rollup", pid);
	long pss = -1, priv = 0;
	FILE *rf = fopen(rollup, "r");
	char line[256];
	while (rf && fgets(line, sizeof(line), rf)) {
		if (!strncmp(line, "Pss:", 4))
			pss = strtol(line + 4, NULL, 10);
		if (!strncmp(line, "Private_", 8))
			priv += strtol(strchr(line, ':') + 1, NULL, 10);
	}
	if (rf)
		fclose(rf);
	int wst;
	struct rusage ru;
	double t0 = wall_now();
	wait4(pid, &wst, 0, &ru);
	(void)t0;
	double cpu = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	             (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
	printf("rt-recorder --quiet -i 0.01 for %d s (100 Hz, real binary):\n", secs);
	printf("  CPU                                                %8.2f %% of one core\n",
	       cpu / secs * 100);
	printf("  CPU per sample (incl. startup)                     %8.1f us\n",
	       cpu / (secs * 100) * 1e6);
	printf("  VmRSS at %d s / %d s                               %5ld / %ld KiB\n", secs / 2,
	       secs, rss_half, rss);
	printf("  of which anon / file / shmem                       %ld / %ld / %ld KiB\n", anon,
	       file, shmem);
	printf("  Pss / private (unshared) pages                     %ld / %ld KiB\n\n", pss, priv);

	printf("Process tree (CPU per sample of the tree walk, back to back):\n");
	int sizes[3] = {1, 100, 1000};
	for (int i = 0; i < 3; i++) {
		double us = bench_tree(sizes[i], quick ? 20 : 200);
		printf("  %4d processes                                     %8.1f us  (%.2f us per "
		       "process)\n",
		       sizes[i], us, us / sizes[i]);
	}
	char store3[4300];
	snprintf(store3, sizeof(store3), "%s/store3", tmp);
	printf("Wrapper: resource-tracker -- true, command start to tracker exit (mean of 10):\n");
	printf("  --quiet                                            %8.1f ms\n",
	       exit_delay(rec_bin, store3, 1) * 1e3);
	printf("  with output (waits for rt-export to drain)         %8.1f ms\n\n",
	       exit_delay(rec_bin, store3, 0) * 1e3);

	printf("Stripped binaries:\n");
	printf("  rt-recorder                                        %8ld B\n",
	       stripped_size(rec_bin));
	printf("  rt-export                                          %8ld B\n",
	       stripped_size(exp_bin));
	char cmd[4300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	if (system(cmd) != 0)
		return 1;
	return 0;
}
