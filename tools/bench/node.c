/*
 * node.c - rt-bench node [SECONDS]: the node mode (--jobs GLOB) at 1 Hz
 * with 1, 10 and 100 job cgroups, each holding one sleeping process, made
 * in this machine's real hierarchies (needs root).
 *
 * Beside it, in the same run, the floor: a thread that reads, once a
 * second, what a job's figures need and nothing more: each group's
 * counter files (the ones its recorder keeps open under /sys/fs/cgroup),
 * its cgroup.procs and its member's /proc stat, parsing nothing. Its CPU
 * is the thread's own (CLOCK_THREAD_CPUTIME_ID).
 *
 * rt's CPU is the watcher's and every job recorder's (their schedstat),
 * over the same seconds after a warm-up; its memory the PSS of them all
 * (smaps_rollup), after a 12 s warm-up, against the goals: at most 1.2x the floor per
 * job and sample, under 3 MiB plus 100 KiB a job.
 */
#include "bench.h"

#include "nodesampler.h"

/* past a job's first 10 s (its group looked for again in every hierarchy
 * while its scheduler makes it, its environment read while no member
 * names it): the steady state a long job is in */
#define WARM_S 12

struct jobs {
	char top[64];
	int n;
	pid_t *member;
};

struct join_arg {
	const char *top;
	int i;
};

/* (in the member, before it sleeps) into its group everywhere */
static void join_group(void *arg)
{
	const struct join_arg *a = arg;
	bench_cg_join(a->top, a->i);
}

/* The recorders the watcher started, and the watcher itself. */
static int family(pid_t node, pid_t *out, int cap)
{
	char file[64], buf[65536];
	int n = 0;
	out[n++] = node;
	snprintf(file, sizeof(file), "task/%d/children", (int)node);
	if (proc_text(node, file, buf, sizeof(buf)) <= 0)
		return n;
	for (char *p = buf; *p && n < cap;) {
		long v = strtol(p, &p, 10);
		if (v > 0)
			out[n++] = (pid_t)v;
		while (*p == ' ' || *p == '\n')
			p++;
	}
	return n;
}

/* The floor's files: each recorder's kept files under /sys/fs/cgroup,
 * each group's cgroup.procs, each member's stat; opened once. */
struct floor_files {
	int *fd;
	int n, cap;
	int *pss; /* each member's smaps_rollup: the second floor's */
	int npss;
};

static void floor_add(struct floor_files *f, const char *path)
{
	if (f->n == f->cap) {
		int cap = f->cap ? f->cap * 2 : 256;
		int *p = realloc(f->fd, (size_t)cap * sizeof(*p));
		if (!p)
			return;
		f->fd = p;
		f->cap = cap;
	}
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0)
		f->fd[f->n++] = fd;
}

static void floor_open(struct floor_files *f, const pid_t *fam, int nfam, const struct jobs *j)
{
	for (int k = 1; k < nfam; k++) { /* each recorder's group files */
		char dir[64];
		snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)fam[k]);
		DIR *d = opendir(dir);
		struct dirent *de;
		while (d && (de = readdir(d))) {
			char link[320], target[512];
			snprintf(link, sizeof(link), "%s/%s", dir, de->d_name);
			ssize_t len = readlink(link, target, sizeof(target) - 1);
			if (len <= 0)
				continue;
			target[len] = '\0';
			if (!strncmp(target, "/sys/fs/cgroup/", 15))
				floor_add(f, target);
		}
		if (d)
			closedir(d);
	}
	for (int i = 0; i < j->n; i++) {
		char p[600];
		snprintf(p, sizeof(p), "/sys/fs/cgroup/memory%s/g%d/cgroup.procs", j->top, i);
		if (access(p, R_OK))
			snprintf(p, sizeof(p), "/sys/fs/cgroup%s/g%d/cgroup.procs", j->top, i);
		floor_add(f, p);
		snprintf(p, sizeof(p), "/proc/%d/stat", (int)j->member[i]);
		floor_add(f, p);
	}
	f->pss = calloc((size_t)j->n, sizeof(*f->pss));
	for (int i = 0; f->pss && i < j->n; i++) {
		char p[64];
		snprintf(p, sizeof(p), "/proc/%d/smaps_rollup", (int)j->member[i]);
		int fd = open(p, O_RDONLY | O_CLOEXEC);
		if (fd >= 0)
			f->pss[f->npss++] = fd;
	}
}

struct floor_run {
	struct floor_files *f;
	int secs;
	double cpu_s, pss_s; /* pss_s: the members' PSS every 5 s (in cpu_s too) */
	int samples;
};

static double thread_cpu(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* once a second, on the real clock: pread every file, parse nothing */
static void *floor_thread(void *arg)
{
	struct floor_run *r = arg;
	char buf[8192];
	double c0 = thread_cpu(), deadline = wall_now();
	for (r->samples = 0; r->samples < r->secs; r->samples++) {
		for (int i = 0; i < r->f->n; i++)
			if (pread(r->f->fd[i], buf, sizeof(buf), 0) < 0)
				continue;
		double p0 = thread_cpu();
		for (int i = 0; r->samples % 5 == 0 && i < r->f->npss; i++)
			if (pread(r->f->pss[i], buf, sizeof(buf), 0) < 0)
				continue;
		r->pss_s += thread_cpu() - p0;
		deadline += 1.0;
		struct timespec ts = {(time_t)deadline,
		                      (long)((deadline - (double)(time_t)deadline) * 1e9)};
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
	}
	r->cpu_s = thread_cpu() - c0;
	return NULL;
}

static long long family_ns(const pid_t *fam, int n)
{
	long long sum = 0;
	for (int k = 0; k < n; k++) {
		long long v = sched_ns(fam[k]);
		sum += v > 0 ? v : 0;
	}
	return sum;
}

static long family_pss_kb(const pid_t *fam, int n)
{
	long sum = 0;
	for (int k = 0; k < n; k++) {
		long v = smaps_kb(fam[k], "Pss:");
		sum += v > 0 ? v : 0;
	}
	return sum;
}

/* (the child) the one sampler's core over the jobs' groups at 1 Hz on the
 * real clock, until killed */
static void one_sampler(const struct bench_ctx *c, const struct jobs *j)
{
	char store[4200], err[256], group[128];
	struct rt_store *st;
	struct rt_nodesampler n;
	static char warn[65536];
	snprintf(store, sizeof(store), "%s/node1-%d", c->tmp ? c->tmp : "/tmp", j->n);
	static const struct rt_run_meta meta = {.interval_secs = 1};
	const struct rt_node_base base = {.meta = &meta};
	if (rt_store_open(store, RT_STORE_RDWR, &st) || rt_nodesampler_open(&n, st, &base))
		_exit(1);
	for (int i = 0; i < j->n; i++) {
		snprintf(group, sizeof(group), "%s/g%d", j->top, i);
		if (rt_nodesampler_add(&n, group, err, sizeof(err)) < 0)
			_exit(1);
	}
	for (double deadline = wall_now();; deadline += 1.0) {
		rt_nodesampler_tick(&n, warn, sizeof(warn));
		struct timespec ts = {
		    (time_t)(deadline + 1.0),
		    (long)((deadline + 1.0 - (double)(time_t)(deadline + 1.0)) * 1e9)};
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
	}
}

/* The one sampler's core (nodesampler.c) over the same groups, in a
 * process of its own, measured over secs after the warm-up: its CPU per
 * job and sample and its PSS, beside the floor of the same run. */
static void measure_one(const struct bench_ctx *c, struct jobs *j, int secs,
                        const double floor_us[2])
{
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0)
		one_sampler(c, j);
	if (pid < 0)
		return;
	sleep(WARM_S);
	long long ns0 = sched_ns(pid);
	double w0 = wall_now();
	sleep((unsigned)secs);
	long long ns1 = sched_ns(pid);
	double wall = wall_now() - w0;
	long pss = smaps_kb(pid, "Pss:");
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	double us = (double)(ns1 - ns0) / 1e3 / (wall * j->n);
	double goal_kb = 3072 + 100.0 * j->n;
	printf("            one sampler (its core, 1 process): CPU %7.1f us/job/sample  %5.1fx the "
	       "floor (goal <= 1.2x: %s), %5.1fx with PSS; PSS %6.1f MiB (goal < %.1f MiB: %s)\n",
	       us, us / floor_us[0], us <= 1.2 * floor_us[0] ? "met" : "missed", us / floor_us[1],
	       pss / 1024.0, goal_kb / 1024.0, pss < goal_kb ? "met" : "missed");
}

/* The watcher over the jobs' groups, its recorders warm: measured over
 * secs beside the floor (into floor_us_out: without and with the members'
 * PSS). 0, or -1 (said) when it could not run. */
static int measure(const struct bench_ctx *c, struct jobs *j, int secs, double floor_us_out[2])
{
	char glob[96], store[4200];
	snprintf(glob, sizeof(glob), "%s/*", j->top);
	snprintf(store, sizeof(store), "%s/node-%d", c->tmp ? c->tmp : "/tmp", j->n);
	char *argv[] = {(char *)c->rec_bin, "--jobs", glob, "-i", "1", "--store", store, NULL};
	pid_t node = spawn_quiet(argv);
	if (node < 0)
		return -1;
	pid_t fam[1024];
	int nfam = 0;
	for (int t = 0; t < WARM_S * 10 && nfam < j->n + 1; t++) {
		usleep(100000);
		nfam = family(node, fam, 1024);
	}
	sleep(WARM_S); /* every recorder past its first samples */
	nfam = family(node, fam, 1024);
	struct floor_files ff = {0};
	floor_open(&ff, fam, nfam, j);
	struct floor_run fr = {.f = &ff, .secs = secs};
	long long ns0 = family_ns(fam, nfam);
	double w0 = wall_now();
	pthread_t th;
	pthread_create(&th, NULL, floor_thread, &fr);
	pthread_join(th, NULL);
	long long ns1 = family_ns(fam, nfam);
	double wall = wall_now() - w0;
	long pss = family_pss_kb(fam, nfam);
	kill(node, SIGTERM);
	waitpid(node, NULL, 0);
	for (int i = 0; i < ff.n; i++)
		close(ff.fd[i]);
	free(ff.fd);
	for (int i = 0; i < ff.npss; i++)
		close(ff.pss[i]);
	free(ff.pss);
	double samples = wall * j->n; /* job-samples at 1 Hz */
	double rt_us = (double)(ns1 - ns0) / 1e3 / samples;
	double floor_us = (fr.cpu_s - fr.pss_s) * 1e6 / ((double)fr.samples * j->n);
	double floor2_us = fr.cpu_s * 1e6 / ((double)fr.samples * j->n);
	floor_us_out[0] = floor_us;
	floor_us_out[1] = floor2_us;
	double goal_kb = 3072 + 100.0 * j->n;
	printf("  %3d job%s  %3d recorders  CPU %7.1f us/job/sample  floor %5.1f us (%d files)  "
	       "%5.1fx (goal <= 1.2x: %s); with the members' PSS every 5 s %5.1f us, %5.1fx\n",
	       j->n, j->n == 1 ? " " : "s", nfam - 1, rt_us, floor_us, ff.n, rt_us / floor_us,
	       rt_us <= 1.2 * floor_us ? "met" : "missed", floor2_us, rt_us / floor2_us);
	printf("            memory PSS %6.1f MiB (the watcher and its recorders; goal < %.1f MiB: "
	       "%s)\n",
	       pss / 1024.0, goal_kb / 1024.0, pss < goal_kb ? "met" : "missed");
	return nfam - 1 == j->n ? 0 : -1;
}

int bench_node_mode(const struct bench_ctx *c)
{
	if (geteuid() != 0) {
		printf("node: skipped (needs root: it makes cgroups)\n");
		return 0;
	}
	static const int sizes[] = {1, 10, 100};
	printf("node mode at 1 Hz: each job its own recorder (--jobs GLOB), %d s each after a "
	       "%d s warm-up; the floor reads each job's group files, its cgroup.procs and its "
	       "member's stat once a second in the same run\n",
	       c->secs, WARM_S);
	int rc = 0;
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		struct jobs j = {.n = sizes[s]};
		snprintf(j.top, sizeof(j.top), "/rt-bench-node-%d", (int)getpid());
		j.member = calloc((size_t)j.n, sizeof(*j.member));
		if (!j.member || bench_cg_make(j.top, j.n)) {
			printf("node: cannot make cgroups under /sys/fs/cgroup (%s)\n",
			       strerror(errno));
			free(j.member);
			return 1;
		}
		for (int i = 0; i < j.n; i++) {
			struct join_arg a = {j.top, i};
			j.member[i] = fork_ready(join_group, &a);
		}
		double floor_us[2] = {0, 0};
		if (measure(c, &j, c->secs, floor_us))
			rc = 1;
		if (floor_us[0] > 0)
			measure_one(c, &j, c->secs, floor_us);
		bench_cg_remove(j.top, j.n, j.member, j.n);
		free(j.member);
	}
	return rc;
}
