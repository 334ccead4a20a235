/*
 * node.c - rt-bench node [SECONDS]: the node mode (--jobs GLOB) at 1 Hz
 * with 1, 10 and 100 job cgroups, each holding one sleeping process, made
 * in this machine's real hierarchies (needs root).
 *
 * Beside it, in the same run, the floor: a thread that reads, once a
 * second, what a job's figures need and nothing more: each group's
 * counter files (the ones its recorder keeps open under /sys/fs/cgroup,
 * but for those rt reads every 5 s: its limits, peak, OOM and task
 * counts, which the floor reads every 5th second whether rt holds them
 * or opens them when read), its cgroup.procs and its member's /proc
 * stat, parsing nothing. Its CPU is the thread's own
 * (CLOCK_THREAD_CPUTIME_ID).
 *
 * rt's CPU is the node process's (and, under a hard limit of 1,000
 * descriptors, every job recorder's: the design before, the anchor),
 * their schedstat over the same seconds after a 12 s warm-up; its memory
 * the PSS of them all (smaps_rollup), against the goals: at most
 * 1.2x the floor per job and sample, under 3 MiB plus 100 KiB a job.
 */
#include "bench.h"

#include <sys/resource.h>

#include "rt/record.h"
#include "rt/runmeta.h"
#include "rt/store.h"

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

/* The node's processes: its watcher, the sampler below it and the
 * recorders the sampler started (none in one process), breadth first. */
static int family(pid_t node, pid_t *out, int cap)
{
	char file[64], buf[65536];
	int n = 0;
	out[n++] = node;
	for (int at = 0; at < n && at < 2; at++) { /* (the watcher's child, the sampler's) */
		snprintf(file, sizeof(file), "task/%d/children", (int)out[at]);
		if (proc_text(out[at], file, buf, sizeof(buf)) <= 0)
			continue;
		for (char *p = buf; *p && n < cap;) {
			long v = strtol(p, &p, 10);
			if (v > 0)
				out[n++] = (pid_t)v;
			while (*p == ' ' || *p == '\n')
				p++;
		}
	}
	return n;
}

/* The floor's files: each recorder's kept files under /sys/fs/cgroup,
 * each group's cgroup.procs, each member's stat; opened once. */
struct floor_files {
	int *fd;
	int n, cap;
	struct floor_files *rare; /* each group's files read every 5 s */
	int *pss;                 /* each member's smaps_rollup: the second floor's */
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

/* Whether a group's file is one rt reads every 5 s only. */
static int rare_file(const char *path)
{
	static const char *const names[] = {"/memory.limit_in_bytes",
	                                    "/memory.max_usage_in_bytes",
	                                    "/memory.oom_control",
	                                    "/pids.current",
	                                    "/pids.max",
	                                    "/memory.max",
	                                    "/memory.peak",
	                                    "/memory.events"};
	size_t n = strlen(path);
	for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
		size_t m = strlen(names[k]);
		if (n > m && !strcmp(path + n - m, names[k]))
			return 1;
	}
	return 0;
}

static void floor_open(struct floor_files *f, const pid_t *fam, int nfam, const struct jobs *j)
{
	for (int k = 0; k < nfam; k++) { /* the group files it keeps open */
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
			if (!strncmp(target, "/sys/fs/cgroup/", 15) && !rare_file(target))
				floor_add(f, target); /* (the rare ones: below) */
		}
		if (d)
			closedir(d);
	}
	/* what rt reads every 5 s (its limits, peak, OOM and task counts),
	 * whether it keeps them open or not, so that the floor is the same
	 * whatever rt holds */
	static const char *const rare[][2] = {{"/memory", "memory.limit_in_bytes"},
	                                      {"/memory", "memory.max_usage_in_bytes"},
	                                      {"/memory", "memory.oom_control"},
	                                      {"/pids", "pids.current"},
	                                      {"/pids", "pids.max"},
	                                      {"", "memory.max"},
	                                      {"", "memory.peak"},
	                                      {"", "memory.events"},
	                                      {"", "pids.current"},
	                                      {"", "pids.max"}};
	for (int i = 0; f->rare && i < j->n; i++)
		for (size_t k = 0; k < sizeof(rare) / sizeof(rare[0]); k++) {
			char p[700];
			snprintf(p, sizeof(p), "/sys/fs/cgroup%s%s/g%d/%s", rare[k][0], j->top, i,
			         rare[k][1]);
			if (!access(p, R_OK))
				floor_add(f->rare, p);
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
		for (int i = 0; r->f->rare && r->samples % 5 == 0 && i < r->f->rare->n; i++)
			if (pread(r->f->rare->fd[i], buf, sizeof(buf), 0) < 0)
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

/* The floor of what it reads and its measure, in one run. */
struct measured {
	double rt_us, floor_us, floor2_us;
	long pss_kb;
	int procs, files;
	double store_bytes; /* the store's bytes in use per job and sample stored */
	uint64_t skipped;   /* samples skipped, every run's */
};

struct tally {
	uint64_t samples, skipped;
};

static int count_samples(void *ctx, uint64_t run, const char *meta, size_t len)
{
	struct rt_run_fields f;
	struct tally *t = ctx;
	(void)run;
	if (rt_runmeta_read(meta, len, &f) == 0 && f.has_last_seq)
		t->samples += f.last_seq + 1;
	const char *k = memmem(meta, len, "\"samples_skipped\":", 18);
	if (k && (size_t)(k - meta) + 18 < len)
		t->skipped += strtoull(k + 18, NULL, 10);
	return 0;
}

/* The store's bytes in use (every page of every database) per sample it
 * holds (what a job's sample costs on disk, its metadata included), and
 * the samples its runs skipped. */
static void store_figures(const char *dir, struct measured *m)
{
	struct rt_store *st;
	uint64_t used = 0;
	struct tally t = {0, 0};
	m->store_bytes = -1;
	if (rt_store_open(dir, RT_STORE_RDONLY, &st))
		return;
	rt_store_used_bytes(st, &used);
	rt_store_list_runs(st, count_samples, &t);
	rt_store_close(st);
	m->store_bytes = t.samples ? (double)used / (double)t.samples : -1;
	m->skipped = t.skipped;
}

/* The longest a run went without a sample, seconds (a scan's state). */
struct gap_scan {
	uint64_t last, worst;
	void *rec;
};

static int gap_cb(void *ctx, uint64_t seq, const void *rec, size_t len)
{
	struct gap_scan *g = ctx;
	struct rt_record r;
	(void)seq;
	if (rt_record_decode(rec, len, &r))
		return 0;
	if (g->last && r.h->mono_ns > g->last && r.h->mono_ns - g->last > g->worst)
		g->worst = r.h->mono_ns - g->last;
	g->last = r.h->mono_ns;
	return 0;
}

struct gap_tally {
	struct rt_store *st;
	double worst[4096];
	int n;
};

static int run_gap(void *ctx, uint64_t run, const char *meta, size_t len)
{
	struct gap_tally *t = ctx;
	struct gap_scan g = {0, 0, NULL};
	(void)meta;
	(void)len;
	rt_store_scan(t->st, run, 0, UINT64_MAX, gap_cb, &g);
	if (t->n < 4096)
		t->worst[t->n++] = (double)g.worst / 1e9;
	return 0;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* A restart and a crash of the node with every job live: a new node on
 * the store the measure's node left with TERM (it goes on with every
 * run), its sampler killed after 3 s (SIGKILL: the watcher starts
 * another), stopped 3 s later. Said: the runs (one per job when every
 * job's run went on), the longest each went without a sample (across the
 * TERM and across the crash), the median and worst of those. */
static void restart_and_crash(char *const argv[], const char *store, const struct jobs *j)
{
	pid_t node = spawn_quiet_limited(argv, 0), fam[4];
	if (node < 0)
		return;
	sleep(3);
	if (family(node, fam, 4) >= 2)
		kill(fam[1], SIGKILL);
	sleep(3);
	kill(node, SIGTERM);
	waitpid(node, NULL, 0);
	static struct gap_tally t;
	t.n = 0;
	if (rt_store_open(store, RT_STORE_RDONLY, &t.st))
		return;
	rt_store_list_runs(t.st, run_gap, &t);
	rt_store_close(t.st);
	qsort(t.worst, (size_t)t.n, sizeof(t.worst[0]), by_value);
	printf("  %4d job%s  a restart (TERM, a new node) and a crash (its sampler's SIGKILL): "
	       "%d runs for %d jobs (%s); the longest a run went without a sample: median %.2f "
	       "s, worst %.2f s (sampled every 1 s)\n",
	       j->n, j->n == 1 ? " " : "s", t.n, j->n, t.n == j->n ? "each job one run" : "MISSED",
	       t.n ? t.worst[t.n / 2] : 0, t.n ? t.worst[t.n - 1] : 0);
}

/* The node mode over the jobs' groups, warm: its CPU per job and sample
 * and its PSS (its process and any recorders of its own) over secs,
 * beside the floor read in the same seconds. 0, or -1 when it did not
 * run as it should. */
static int measure(const struct bench_ctx *c, struct jobs *j, int secs, int recorders,
                   struct measured *m)
{
	char glob[96], store[4200];
	snprintf(glob, sizeof(glob), "%s/*", j->top);
	snprintf(store, sizeof(store), "%s/node-%d-%d", c->tmp ? c->tmp : "/tmp", j->n, recorders);
	char *argv[] = {(char *)c->rec_bin, "--jobs", glob, "-i", "1", "--store", store, NULL};
	char rm[4300]; /* (a store of an earlier run of the bench's is no part of this one) */
	snprintf(rm, sizeof(rm), "rm -rf '%s'", store);
	if (system(rm) != 0)
		return -1;
	/* recorders: under a hard limit of 200 descriptors, each job gets a
	 * recorder of its own (noderec.h: the design before, the anchor) */
	pid_t node = spawn_quiet_limited(argv, recorders ? 200 : 0);
	if (node < 0)
		return -1;
	pid_t fam[1024];
	sleep(WARM_S); /* every job past its first samples */
	int nfam = family(node, fam, 1024);
	struct floor_files ff = {0}, rare = {0};
	ff.rare = &rare;
	floor_open(&ff, fam, nfam, j);
	struct floor_run fr = {.f = &ff, .secs = secs};
	long long ns0 = family_ns(fam, nfam);
	double w0 = wall_now();
	pthread_t th;
	pthread_create(&th, NULL, floor_thread, &fr);
	pthread_join(th, NULL);
	long long ns1 = family_ns(fam, nfam);
	double wall = wall_now() - w0;
	m->pss_kb = family_pss_kb(fam, nfam);
	kill(node, SIGTERM);
	waitpid(node, NULL, 0);
	for (int i = 0; i < ff.n; i++)
		close(ff.fd[i]);
	free(ff.fd);
	for (int i = 0; i < rare.n; i++)
		close(rare.fd[i]);
	free(rare.fd);
	for (int i = 0; i < ff.npss; i++)
		close(ff.pss[i]);
	free(ff.pss);
	m->rt_us = (double)(ns1 - ns0) / 1e3 / (wall * j->n); /* job-samples at 1 Hz */
	m->floor_us = (fr.cpu_s - fr.pss_s) * 1e6 / ((double)fr.samples * j->n);
	m->floor2_us = fr.cpu_s * 1e6 / ((double)fr.samples * j->n);
	m->procs = nfam;
	m->files = ff.n + rare.n;
	store_figures(store, m);
	if (!recorders) /* (after the store's figures, which it would change) */
		restart_and_crash(argv, store, j);
	/* (the watcher and its sampler; and the recorders below it) */
	return recorders ? (nfam - 2 == j->n ? 0 : -1) : (nfam == 2 ? 0 : -1);
}

/* One line of the table: the mode's figures beside its floor. */
static void say_measured(const struct jobs *j, const char *what, const struct measured *m)
{
	double goal_kb = 3072 + 100.0 * j->n;
	printf("  %4d job%s  %-22s %4d proc  CPU %7.1f us/job/sample  floor %5.1f us (%d "
	       "files)  %5.1fx (goal <= 1.2x: %s); with PSS %5.1f us, %5.1fx; PSS %6.1f MiB "
	       "(goal < %.1f MiB: %s); store %.0f bytes a job and sample in this window (each "
	       "run's metadata and open block most of it; what a day adds: "
	       "tools/bench_storeday.sh); %llu samples skipped\n",
	       j->n, j->n == 1 ? " " : "s", what, m->procs, m->rt_us, m->floor_us, m->files,
	       m->rt_us / m->floor_us, m->rt_us <= 1.2 * m->floor_us ? "met" : "missed",
	       m->floor2_us, m->rt_us / m->floor2_us, m->pss_kb / 1024.0, goal_kb / 1024.0,
	       m->pss_kb < goal_kb ? "met" : "missed", m->store_bytes,
	       (unsigned long long)m->skipped);
}

int bench_node_mode(const struct bench_ctx *c)
{
	if (geteuid() != 0) {
		printf("node: skipped (needs root: it makes cgroups)\n");
		return 0;
	}
	static const int sizes[] = {1, 10, 100, 1000};
	printf("node mode at 1 Hz (--jobs GLOB): one process for all jobs, and under a hard "
	       "limit of 200 descriptors a recorder per job; %d s each after a %d s warm-up; "
	       "the floor reads each job's group files, its cgroup.procs and its member's stat "
	       "once a second in the same run\n",
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
		struct measured one = {0}, rec = {0};
		if (measure(c, &j, c->secs, 0, &one))
			rc = 1;
		say_measured(&j, "one process", &one);
		if (j.n <= 100 && measure(c, &j, c->secs, 1, &rec))
			rc = 1;
		if (j.n <= 100)
			say_measured(&j, "a recorder per job", &rec);
		bench_cg_remove(j.top, j.n, j.member, j.n);
		free(j.member);
	}
	return rc;
}
