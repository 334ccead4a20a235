/*
 * jobcaps.c - rt-bench jobcaps [SECONDS]: what one job costs root's
 * recorder (--cgroup, as the node mode runs one per job) when the job's
 * owner makes it big: 3,000 sleeping processes in its group, and 5,000
 * empty groups below it (issue 52). Needs root: it makes cgroups.
 *
 * For each: the first sample's CPU (-i 5: the recorder's CPU 4.5 s after
 * its start, before its second sample), then the CPU per sample at 1 Hz
 * over SECONDS after a 6 s warm-up (so the every-5-s reads are in it),
 * against the goal (under 1 s, under 10 ms) and beside the floor measured
 * in the same run: listing every member (each group's cgroup.procs) and
 * reading each member's /proc stat once, parsing nothing, as any tool
 * that saw every process would.
 */
#include "bench.h"

struct big {
	char top[64];
	int members, groups;
	pid_t *pid;
};

static void join_top(void *arg)
{
	const struct big *b = arg;
	bench_cg_join(b->top, -1);
}

/* The floor: every group's cgroup.procs read, every member's stat read
 * once. Its CPU in us. */
static double floor_us(const struct big *b)
{
	char buf[65536], p[600];
	double c0 = cpu_now();
	for (int i = -1; i < b->groups; i++) {
		if (i < 0)
			snprintf(p, sizeof(p), "/sys/fs/cgroup/unified%s/cgroup.procs", b->top);
		else
			snprintf(p, sizeof(p), "/sys/fs/cgroup/unified%s/g%d/cgroup.procs", b->top,
			         i);
		int fd = open(p, O_RDONLY | O_CLOEXEC);
		if (fd < 0) { /* a v2-only or v1-only host: the first hierarchy */
			snprintf(p, sizeof(p),
			         i < 0 ? "/sys/fs/cgroup%s/cgroup.procs"
			               : "/sys/fs/cgroup%s/g%d/cgroup.procs",
			         b->top, i);
			fd = open(p, O_RDONLY | O_CLOEXEC);
		}
		while (fd >= 0 && read(fd, buf, sizeof(buf)) > 0)
			;
		if (fd >= 0)
			close(fd);
	}
	for (int i = 0; i < b->members; i++)
		proc_text(b->pid[i], "stat", buf, sizeof(buf));
	return (cpu_now() - c0) * 1e6;
}

/* rt-recorder --cgroup top at interval into store: its pid. */
static pid_t start_rec(const struct bench_ctx *c, const struct big *b, const char *interval,
                       const char *store)
{
	char *argv[] = {(char *)c->rec_bin, "--cgroup", (char *)b->top, "-i", (char *)interval,
	                "--quiet",          "--store",  (char *)store,  NULL};
	return spawn_quiet(argv);
}

static void stop_rec(pid_t pid)
{
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
}

static void measure_big(const struct bench_ctx *c, const struct big *b, const char *what)
{
	char store[4200];
	snprintf(store, sizeof(store), "%s/jobcaps-%d-%d", c->tmp ? c->tmp : "/tmp", b->members,
	         b->groups);
	pid_t r = start_rec(c, b, "5", store);
	usleep(4500000);
	double first_ms = (double)sched_ns(r) / 1e6;
	stop_rec(r);
	r = start_rec(c, b, "1", store);
	sleep(6);
	long long ns0 = sched_ns(r);
	double w0 = wall_now();
	sleep((unsigned)c->secs);
	long long ns1 = sched_ns(r);
	double per_ms = (double)(ns1 - ns0) / 1e6 / (wall_now() - w0);
	long hwm = status_kb(r, "VmHWM:");
	stop_rec(r);
	double fl = floor_us(b) / 1e3;
	printf("  %-38s first sample %7.1f ms (goal < 1000: %s)  per sample %6.2f ms (goal < "
	       "10: %s)  floor %6.2f ms  peak RSS %ld KiB\n",
	       what, first_ms, first_ms < 1000 ? "met" : "missed", per_ms,
	       per_ms < 10 ? "met" : "missed", fl, hwm);
}

int bench_jobcaps_mode(const struct bench_ctx *c)
{
	if (geteuid() != 0) {
		printf("jobcaps: skipped (needs root: it makes cgroups)\n");
		return 0;
	}
	printf("one job's recorder (--cgroup) against a big job: the first sample at -i 5, then "
	       "1 Hz over %d s after a 6 s warm-up; the floor lists every member and reads each "
	       "one's stat once\n",
	       c->secs);
	static const struct {
		int members, groups;
		const char *what;
	} shapes[] = {{3000, 0, "3,000 sleeping processes in its group"},
	              {1, 5000, "5,000 empty groups below it"}};
	for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
		struct big b = {.members = shapes[s].members, .groups = shapes[s].groups};
		snprintf(b.top, sizeof(b.top), "/rt-bench-caps-%d", (int)getpid());
		b.pid = calloc((size_t)b.members, sizeof(*b.pid));
		if (!b.pid || bench_cg_make(b.top, b.groups)) {
			printf("jobcaps: cannot make cgroups under /sys/fs/cgroup (%s)\n",
			       strerror(errno));
			free(b.pid);
			return 1;
		}
		for (int i = 0; i < b.members; i++)
			b.pid[i] = fork_ready(join_top, &b);
		measure_big(c, &b, shapes[s].what);
		bench_cg_remove(b.top, b.groups, b.pid, b.members);
		free(b.pid);
	}
	return 0;
}
