/*
 * floor.c - the floor every per-sample figure is printed beside: pread of
 * the files the recorder keeps open, statvfs of its mounts and one walk of
 * /proc, parsing nothing; and the in-process measurements of rt's
 * collectors and recorder step that the steps, storage and replay
 * sections share.
 */
#include "sampler.h"
#include "bench.h"

/* 0: back to back; else sleep to the next deadline between samples, as the
 * recorder does (cold caches and the wakeup are then part of the cost) */
double pace;

void pace_wait(double *deadline)
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
double floor_calls;
pid_t floor_of;        /* whose open files the floor reads; 0: the collector's,
                        * -1: the 5 the reference's system metrics read */
int floor_nfiles;      /* how many it read */
char floor_list[4096]; /* and which, for the family's line */

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
double bench_pread(int n)
{
	struct rt_collector c;
	if (rt_collector_open(&c, &rt_sampler_sources))
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
double bench_collect(int n)
{
	struct rt_collector c;
	if (rt_collector_open(&c, &rt_sampler_sources))
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
double bench_sampler(const char *store_dir, int n, uint64_t *run, size_t *rec_size)
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

const struct bench_sampled *bench_sampled(const struct bench_ctx *c)
{
	static struct bench_sampled s;
	static int done;
	if (done++)
		return &s;
	s.nstore = c->quick ? 2000 : 20000;
	snprintf(s.store, sizeof(s.store), "%s/store", c->tmp);
	s.floor_us = bench_pread(c->n);
	s.collect_us = bench_collect(c->n);
	s.step_us = bench_sampler(s.store, s.nstore, &s.run, &s.rec_size);
	return &s;
}
