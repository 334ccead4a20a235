/*
 * peers.c - rt-bench peers: rt beside the Python trackers, each in a
 * cgroup of its own, over the same window at 1 Hz.
 */
#include "bench.h"

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

/* The Python each Python peer runs: the reference's two trackers (from
 * refpath, its src/), rt_tracker (from pydir) and an idle interpreter. */
static void peers_code(char code[4][4800], const char *refpath, const char *pydir)
{
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
}

/* Each peer that can run on its own loop device and cgroup, started. */
static void peers_start(struct peer *peers, int np, const char *tmp, const char *bindir,
                        const char *pydir, const char *refpath, int have_sadc)
{
	for (int i = 0; i < np; i++) {
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
}

/* Each running peer's CPU and sectors over secs after a 5 s start, and
 * its PSS at the end: the window's wall seconds. */
static double peers_measure(struct peer *peers, int np, int secs)
{
	sleep(5); /* imports, first samples */
	for (int i = 0; i < np; i++)
		if (peers[i].ok) {
			peers[i].cpu0 = cg_cpu_ns(&peers[i]);
			peers[i].sec0 = peer_sectors(&peers[i]);
		}
	double w0 = wall_now();
	sleep((unsigned)secs);
	double w = wall_now() - w0;
	for (int i = 0; i < np; i++)
		if (peers[i].ok) {
			peers[i].cpu1 = cg_cpu_ns(&peers[i]);
			peers[i].sec1 = peer_sectors(&peers[i]);
			peers[i].pss_kb = cg_pss_kb(&peers[i]);
		}
	return w;
}

/* The table: each peer's CPU, PSS, processes and device bytes per second,
 * beside rt's (the first row). */
static void peers_print(const struct peer *peers, int np, double w)
{
	printf("Peers at 1 Hz, all started together, measured over the same %.0f s (per sample = "
	       "per second):\n",
	       w);
	printf("  %-42s %10s %7s %9s %6s %5s %12s %7s\n", "", "CPU us", "x rt", "PSS KiB", "x rt",
	       "procs", "dev bytes", "x rt");
	const struct peer *rt = &peers[0];
	double rt_cpu = rt->ok ? (double)(rt->cpu1 - rt->cpu0) / w / 1e3 : 0;
	double rt_b = rt->ok ? (double)(rt->sec1 - rt->sec0) * 512 / w : 0;
	for (int i = 0; i < np; i++) {
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
}

static void peers_remove(struct peer *peers, int np, const char *tmp)
{
	for (int i = 0; i < np; i++) {
		char name[32];
		snprintf(name, sizeof(name), "peer%d", i);
		if (peers[i].ok)
			peer_stop(&peers[i]);
		if (peers[i].dev[0])
			drop_loop(tmp, name);
	}
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
	peers_code(code, refpath, pydir);
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
	peers_start(peers, NP, tmp, bindir, pydir, refpath, have_sadc);
	double w = peers_measure(peers, NP, secs);
	peers_print(peers, NP, w);
	peers_remove(peers, NP, tmp);
	char cmd[4200];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	return system(cmd) != 0;
}

/* rt-bench peers [SECONDS, default 60] */
int bench_peers_mode(const struct bench_ctx *c)
{
	return bench_peers(c->rec_bin, c->secs);
}
