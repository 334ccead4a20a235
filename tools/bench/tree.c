/*
 * tree.c - rt-bench tree: the process tree's walk, CPU per process per
 * sample and per new process, beside the floor of pread'ing each stat;
 * and forked children sharing a big parent's pages (exact PSS).
 */
#include "bench.h"

/* the root's touched pages, kept where the compiler cannot drop them */
char *volatile bench_tree_pages;

struct tree_shape {
	int n, exec_sleep, mb;
};

/* In the root: touch mb MiB (the children share it), then fork the n - 1
 * children, asleep or exec'ing sleep(1). */
static void start_tree(void *arg)
{
	const struct tree_shape *sh = arg;
	int null = open("/dev/null", O_RDWR);
	dup2(null, 1);
	dup2(null, 2);
	size_t len = (size_t)sh->mb << 20;
	char *mem = len ? malloc(len) : NULL;
	if (mem)
		memset(mem, 1, len);
	bench_tree_pages = mem;
	for (int i = 1; i < sh->n; i++)
		if (fork() == 0) {
			if (sh->exec_sleep)
				execlp("sleep", "sleep", "1000", (char *)NULL);
			pause();
			_exit(0);
		}
}

/*
 * A tree of n sleeping processes under one root: forked copies of this
 * program (exec_sleep 0) or processes that exec'd sleep(1), which is what a
 * job's new processes usually are. Returns the root (its own group).
 */
static pid_t make_tree(int n, int exec_sleep, int mb)
{
	struct tree_shape sh = {n, exec_sleep, mb};
	pid_t root = fork_ready(start_tree, &sh);
	usleep(200000 + (useconds_t)n * 1000); /* let the children exec */
	return root;
}

void kill_tree(pid_t root)
{
	kill(-root, SIGKILL);
	waitpid(root, NULL, 0);
}

/* The host's fork counter, as the recorder's CPU source hands it over. */
void host_forks(struct rt_proctree *t)
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

/* CPU seconds of reps samples of tree t (the host's forks read first, as
 * the sampler does), the last into *r. */
double sample_cpu(struct rt_proctree *t, struct rt_rec_process *r, int reps)
{
	double cpu = 0;
	for (int i = 0; i < reps; i++) {
		host_forks(t);
		double t0 = cpu_now();
		rt_proctree_sample(t, r);
		cpu += cpu_now() - t0;
	}
	return cpu;
}

/* CPU seconds of reps first samples of the tree under root, each by a
 * tracker opened anew (every member new to it); the last one is kept
 * open in *t, its sample in *r. */
static double first_samples(pid_t root, int reps, struct rt_proctree **t, struct rt_rec_process *r)
{
	double cpu = 0;
	for (int i = 0; i < reps; i++) {
		rt_proctree_open(t, root);
		host_forks(*t);
		double t0 = cpu_now();
		rt_proctree_sample(*t, r);
		cpu += cpu_now() - t0;
		if (i < reps - 1)
			rt_proctree_close(*t);
	}
	return cpu;
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
	double first = first_samples(root, reps, &t, &r);
	host_forks(t);
	rt_proctree_sample(t, &r); /* the second sample keeps descriptors */
	double steady_cpu = sample_cpu(t, &r, reps);
	*steady = steady_cpu / reps / n * 1e6;
	*fresh = first / reps / n * 1e6;
	/* each member's status read in the sample too (the recorder does it
	 * every 5 s; per sample at 1 Hz that is a fifth of this extra) */
	rt_proctree_cadence(t, 1, 0);
	double slow_cpu = sample_cpu(t, &r, reps);
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

/* The floors of the tree's PSS: each member's smaps_rollup opened, read and
 * closed, and read through a kept descriptor, reps times: CPU seconds of
 * each. Returns the number of members. */
static size_t smaps_floors(struct rt_proctree *t, int reps, double *ffresh, double *fkept)
{
	pid_t pids[64];
	size_t np = rt_proctree_members(t, pids, 64);
	static char buf[65536];
	char path[96];
	int fds[64];
	double t0 = cpu_now();
	for (int k = 0; k < reps; k++)
		for (size_t i = 0; i < np; i++) {
			snprintf(path, sizeof(path), "/proc/%d/smaps_rollup", pids[i]);
			int fd = open(path, O_RDONLY | O_CLOEXEC);
			if (fd >= 0 && pread(fd, buf, sizeof(buf), 0) >= 0)
				close(fd);
		}
	*ffresh = cpu_now() - t0;
	for (size_t i = 0; i < np; i++) {
		snprintf(path, sizeof(path), "/proc/%d/smaps_rollup", pids[i]);
		fds[i] = open(path, O_RDONLY | O_CLOEXEC);
	}
	t0 = cpu_now();
	for (int k = 0; k < reps; k++)
		for (size_t i = 0; i < np; i++)
			if (pread(fds[i], buf, sizeof(buf), 0) < 0)
				break;
	*fkept = cpu_now() - t0;
	for (size_t i = 0; i < np; i++)
		close(fds[i]);
	return np;
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
	double first = first_samples(root, reps, &t, &r);
	uint64_t pss_kb = r.pss_kb, rss_kb = r.rss_kb;
	host_forks(t);
	rt_proctree_sample(t, &r);
	uint64_t reads0 = rt_proctree_pss_reads(t);
	double steady = sample_cpu(t, &r, reps);
	uint64_t steady_reads = rt_proctree_pss_reads(t) - reads0;
	rt_proctree_cadence(t, 1, 0);
	double again = sample_cpu(t, &r, reps);
	rt_proctree_cadence(t, 0, 0);
	/* the floors: each member's smaps_rollup, opened fresh and kept */
	double ffresh, fkept;
	size_t np = smaps_floors(t, reps, &ffresh, &fkept);
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

int bench_tree_section(const struct bench_ctx *c)
{
	printf("Process tree, CPU per process, back to back (floor: pread of each stat; "
	       "new: open,\npread, close of stat, io, smaps_rollup and children):\n");
	printf("  %-40s %-20s %-20s %s\n", "", "per sample (floor)", "new process (floor)",
	       "+ status read");
	int sizes[4] = {1, 100, 1000, 5000};
	for (int k = 0; k < 2; k++)
		for (int i = 0; i < 4; i++) {
			double per, fr, fper, ffr;
			bench_tree(sizes[i], c->quick ? 10 : 50, k, &per, &fr, &fper, &ffr);
			char what[80];
			snprintf(what, sizeof(what), "%4d %s", sizes[i],
			         k ? "processes that exec'd sleep" : "forked copies of rt-bench");
			printf("  %-40s %6.2f us (%5.2f)    %6.2f us (%5.2f)    %6.2f us\n", what,
			       per, fper, fr, ffr, tree_slow);
		}
	printf("Forked children sharing a big parent's pages (exact PSS: every member's\n"
	       "smaps_rollup in the sample where one appears or anything moved):\n");
	bench_fork_tree(1, 600, c->quick ? 3 : 10);
	bench_fork_tree(4, 600, c->quick ? 3 : 10);
	printf("\n");
	return 0;
}
