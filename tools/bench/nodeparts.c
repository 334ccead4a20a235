/*
 * nodeparts.c - rt-bench nodeparts [SECONDS]: what the kernel's word on a
 * job's memory costs a job's recorder (recorder/jobs/cgparts.c): the OOM
 * kills over its subtree, its group's peak and limit, and each part's CPU
 * and peak, read every 5 s, on a member's exit and at the end.
 *
 * The job is shaped as Slurm makes one on cgroup v1 (job_1 with
 * step_extern, step_batch, step_0 and step_1, a task_0 below each, made in
 * this machine's real hierarchies: needs root). Beside it, in the same
 * run, the floor: the same files read raw (open, read, close), parsing
 * nothing and keeping nothing. Both in this thread's CPU time.
 */
#include "bench.h"

#include "cgjob.h"
#include "cgparts.h"

static const char *const parts[] = {"step_extern", "step_batch", "step_0", "step_1", NULL};
static const char *const mounts[] = {"/memory", "/cpuacct", NULL};

static double thread_cpu(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* mkdir (or rmdir) the job's groups, in both hierarchies. */
static int shape(const char *job, int make)
{
	char p[700];
	for (int m = 0; mounts[m]; m++) {
		snprintf(p, sizeof(p), "/sys/fs/cgroup%s%s", mounts[m], job);
		if (make && mkdir(p, 0755) && errno != EEXIST)
			return -1;
		for (int i = 0; parts[i]; i++) {
			char q[800], t[820];
			snprintf(q, sizeof(q), "%s/%s", p, parts[i]);
			snprintf(t, sizeof(t), "%s/task_0", q);
			if (make && ((mkdir(q, 0755) && errno != EEXIST) ||
			             (mkdir(t, 0755) && errno != EEXIST)))
				return -1;
			if (!make) {
				rmdir(t);
				rmdir(q);
			}
		}
		if (!make)
			rmdir(p);
	}
	return 0;
}

/* One raw read of a file, as the floor does it. */
static void raw(const char *path)
{
	char buf[1024];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (read(fd, buf, sizeof(buf)) < 0)
			buf[0] = 0;
		close(fd);
	}
}

/* The floor: every file cgparts reads, read once. */
static void floor_read(const char *job)
{
	static const char *const mem[] = {"memory.limit_in_bytes", "memory.oom_control",
	                                  "memory.failcnt", "memory.max_usage_in_bytes", NULL};
	char p[900];
	for (int f = 0; mem[f]; f++) {
		snprintf(p, sizeof(p), "/sys/fs/cgroup/memory%s/%s", job, mem[f]);
		raw(p);
	}
	for (int i = 0; parts[i]; i++) {
		for (int f = 0; mem[f]; f++) {
			snprintf(p, sizeof(p), "/sys/fs/cgroup/memory%s/%s/%s", job, parts[i],
			         mem[f]);
			raw(p);
		}
		snprintf(p, sizeof(p), "/sys/fs/cgroup/memory%s/%s/task_0/memory.oom_control", job,
		         parts[i]);
		raw(p);
		snprintf(p, sizeof(p), "/sys/fs/cgroup/cpuacct%s/%s/cpuacct.usage", job, parts[i]);
		raw(p);
	}
}

int bench_nodeparts_mode(const struct bench_ctx *c)
{
	char job[96], err[256];
	if (geteuid() != 0 || !rt_cgroup_exists("/memory", "/")) {
		printf("nodeparts: skipped (needs root and cgroup v1's memory hierarchy)\n");
		return 0;
	}
	snprintf(job, sizeof(job), "/rt-bench-parts-%d/uid_0/job_1", (int)getpid());
	char top[96];
	snprintf(top, sizeof(top), "/rt-bench-parts-%d", (int)getpid());
	for (int m = 0; mounts[m]; m++) { /* its parents first */
		char p[300];
		snprintf(p, sizeof(p), "/sys/fs/cgroup%s%s", mounts[m], top);
		mkdir(p, 0755);
		snprintf(p, sizeof(p), "/sys/fs/cgroup%s%s/uid_0", mounts[m], top);
		mkdir(p, 0755);
	}
	struct rt_cgjob j;
	if (shape(job, 1) || rt_cgjob_resolve(job, &j, err, sizeof(err))) {
		printf("nodeparts: cannot make a Slurm-shaped job here (%s)\n", err);
		shape(job, 0);
		return 1;
	}
	struct rt_cgparts p;
	memset(&p, 0, sizeof(p));
	int n = 0;
	double t0 = thread_cpu(), w0 = wall_now();
	for (; wall_now() - w0 < c->secs / 2.0; n++)
		rt_cgparts_read(&p, &j);
	double rt_us = (thread_cpu() - t0) * 1e6 / n;
	int m = 0;
	t0 = thread_cpu();
	w0 = wall_now();
	for (; wall_now() - w0 < c->secs / 2.0; m++)
		floor_read(job);
	double floor_us = (thread_cpu() - t0) * 1e6 / m;
	printf("a Slurm job of 4 steps (9 groups): its OOM walk and parts, %d reads in %.1f s\n", n,
	       c->secs / 2.0);
	printf("  rt %7.1f us a read (%5.1f us a sample at 1 Hz: read every 5 s)   floor %7.1f us "
	       "(the same 26 files read raw)   %.2fx\n",
	       rt_us, rt_us / 5, floor_us, rt_us / floor_us);
	printf("  parts found %u, groups counted %u\n", p.npart, p.nseen);
	rt_cgjob_free(&j);
	shape(job, 0);
	for (int k = 0; mounts[k]; k++) {
		char q[300];
		snprintf(q, sizeof(q), "/sys/fs/cgroup%s%s/uid_0", mounts[k], top);
		rmdir(q);
		snprintf(q, sizeof(q), "/sys/fs/cgroup%s%s", mounts[k], top);
		rmdir(q);
	}
	return 0;
}
