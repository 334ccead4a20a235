/*
 * node.c - the node mode: one watcher, one recorder per job (node.h).
 *
 * Why a recorder per job: a job's run is then like any other (its own
 * ring, group commits, salvage, uploads and pushes, exactly once), one
 * job's trouble (a huge tree, a stuck /proc read) never delays another's
 * samples, and a job that ends ends its own process. What it costs is
 * measured by rt-bench node (docs/architecture.md).
 *
 * A job is a group that matches, identified by its path and the inode of
 * its directory in the first hierarchy it is found in: a group removed and
 * made again at the same path (a restarted unit) is a new job. A job whose recorder ended (its group
 * emptied) is not started again while its group stays.
 */
#define _GNU_SOURCE
#include "node.h"

#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cgjob.h"
#include "rt/clock.h"
#include "rt/sysroot.h"

#define MAX_JOBS 4096  /* recorders at once; more is said once */
#define MAX_DEPTH 16   /* components of a glob */
#define STOP_WAIT_S 10 /* for the recorders to finish their runs */

static const char *const slurm[] = {"slurm/uid_*/job_*", "slurm_*/uid_*/job_*",
                                    "system.slice/slurmstepd.scope/job_*",
                                    "system.slice/*_slurmstepd.scope/job_*", NULL};
static const char *const kubernetes[] = {"kubepods.slice/kubepods-*.slice/kubepods-*-pod*.slice",
                                         "kubepods.slice/kubepods-pod*.slice",
                                         "kubepods/besteffort/pod*",
                                         "kubepods/burstable/pod*",
                                         "kubepods/pod*",
                                         NULL};
static const char *const systemd[] = {"system.slice/*.service", "system.slice/*.scope", NULL};

/* A glob the user gave: relative to the hierarchies (a /sys/fs/cgroup
 * prefix and, on v1, its mount are taken off). */
static int user_glob(const char *which, struct rt_node_globs *g, char *err, size_t cap)
{
	static char own[512];
	const char *p = which;
	if (!strncmp(p, "/sys/fs/cgroup/", 15)) {
		p += 15;
		char top[4200];
		struct stat st;
		if (rt_path(top, sizeof(top), RT_SYS, "fs/cgroup/cgroup.procs") || stat(top, &st))
			p += strcspn(p, "/"); /* v1: the first component is the mount */
	}
	while (*p == '/')
		p++;
	if (!*p || strlen(p) >= sizeof(own) || strstr(p, "..")) {
		snprintf(err, cap,
		         "--jobs %.200s: not slurm, kubernetes, systemd or a glob of cgroup paths "
		         "(for example 'batch/*')",
		         which);
		return -1;
	}
	snprintf(own, sizeof(own), "%s", p);
	g->pat[0] = own;
	g->n = 1;
	return 0;
}

int rt_node_globs(const char *which, struct rt_node_globs *g, char *err, size_t cap)
{
	const char *const *pre = !strcmp(which, "slurm")        ? slurm
	                         : !strcmp(which, "kubernetes") ? kubernetes
	                         : !strcmp(which, "systemd")    ? systemd
	                                                        : NULL;
	memset(g, 0, sizeof(*g));
	if (!pre)
		return user_glob(which, g, err, cap);
	for (int i = 0; pre[i] && g->n < 8; i++)
		g->pat[g->n++] = pre[i];
	return 0;
}

struct expand {
	const char *mount;
	void (*fn)(void *arg, const char *mount, const char *path, ino_t ino);
	void *arg;
	size_t found;
};

/* The groups under path (a group of mount) that match comps[i..n); ino:
 * path's directory's, as its listing said (0: not listed, looked at). */
static void expand_at(struct expand *x, char *path, size_t plen, char **comps, int i, int n,
                      ino_t ino)
{
	if (i == n) { /* a directory of a hierarchy is a group */
		if (ino || rt_cgroup_exists(x->mount, path)) {
			x->fn(x->arg, x->mount, path, ino);
			x->found++;
		}
		return;
	}
	char rel[700], p[4800];
	if (!strpbrk(comps[i], "*?[")) { /* a plain name: no listing */
		if (plen + strlen(comps[i]) + 2 >= 512)
			return;
		sprintf(path + plen, "/%s", comps[i]);
		expand_at(x, path, plen + strlen(comps[i]) + 1, comps, i + 1, n, 0);
		path[plen] = '\0';
		return;
	}
	snprintf(rel, sizeof(rel), "fs/cgroup%s%s", x->mount, path);
	DIR *d = rt_path(p, sizeof(p), RT_SYS, rel) == 0 ? opendir(p) : NULL;
	struct dirent *e;
	while (d && (e = readdir(d)) && x->found < MAX_JOBS) {
		if (e->d_type != DT_DIR || e->d_name[0] == '.' ||
		    fnmatch(comps[i], e->d_name, FNM_PERIOD) != 0 ||
		    plen + strlen(e->d_name) + 2 >= 512)
			continue;
		sprintf(path + plen, "/%s", e->d_name);
		expand_at(x, path, plen + strlen(e->d_name) + 1, comps, i + 1, n, e->d_ino);
		path[plen] = '\0';
	}
	if (d)
		closedir(d);
}

size_t rt_node_expand(const struct rt_node_globs *g,
                      void (*fn)(void *arg, const char *mount, const char *path, ino_t ino),
                      void *arg)
{
	struct expand x = {.fn = fn, .arg = arg};
	for (int k = 0; k < g->n; k++) {
		char buf[512], *comps[MAX_DEPTH], path[512];
		snprintf(buf, sizeof(buf), "%s", g->pat[k]);
		int n = 0;
		for (char *s = strtok(buf, "/"); s && n < MAX_DEPTH; s = strtok(NULL, "/"))
			comps[n++] = s;
		/* every hierarchy: one scheduler's jobs may be in v1's and
		 * another's in v2's (a group seen twice is one job, found) */
		for (int m = 0; rt_cgroup_mounts[m]; m++) {
			if (!rt_cgroup_exists(rt_cgroup_mounts[m], "/"))
				continue; /* not a hierarchy here */
			x.mount = rt_cgroup_mounts[m];
			path[0] = '\0';
			expand_at(&x, path, 0, comps, 0, n, 0);
		}
	}
	return x.found;
}

struct job {
	char path[512];
	const char *mount; /* the hierarchy it was found in, and its inode there */
	ino_t ino;
	pid_t pid;    /* its recorder, 0: ended */
	uint64_t gen; /* the last scan that found it */
};

struct node {
	struct job *jobs;
	size_t n, cap;
	uint64_t gen;
	char self[4096];
	char **args; /* the recorders' command line; the path goes in args[at] */
	int at;
	int full_said, spawn_said;
	const char *prog;
	/* the jobs by path: an index into jobs + 1 per slot, 0 empty */
	uint32_t *slot;
	size_t nslot;
	/* the watcher's own groups (/proc/self/cgroup, one a hierarchy): a
	 * group holding the watcher is never a job */
	char own[16][512];
	int nown, own_said;
};

/* The groups this process is in, from /proc/self/cgroup ("N:ctl:/path"). */
static void own_groups(struct node *nd)
{
	char buf[8192];
	ssize_t n = rt_read_small(RT_PROC, "self/cgroup", buf, sizeof(buf));
	for (char *line = n > 0 ? buf : NULL, *end; line && *line && nd->nown < 16; line = end) {
		end = strchr(line, '\n');
		if (end)
			*end++ = '\0';
		const char *c = strchr(line, ':');
		c = c ? strchr(c + 1, ':') : NULL;
		if (c && c[1] == '/' && c[2] && strlen(c + 1) < sizeof(nd->own[0]))
			snprintf(nd->own[nd->nown++], sizeof(nd->own[0]), "%s", c + 1);
	}
}

/* Whether the group at path holds the watcher (it, or a group below it). */
static int holds_self(const struct node *nd, const char *path)
{
	size_t n = strlen(path);
	for (int i = 0; i < nd->nown; i++)
		if (!strncmp(nd->own[i], path, n) && (!nd->own[i][n] || nd->own[i][n] == '/'))
			return 1;
	return 0;
}

static ino_t group_ino(const char *mount, const char *path)
{
	char rel[700], p[4800];
	struct stat st;
	snprintf(rel, sizeof(rel), "fs/cgroup%s%s", mount, path);
	return rt_path(p, sizeof(p), RT_SYS, rel) == 0 && stat(p, &st) == 0 ? st.st_ino : 0;
}

static size_t path_hash(const char *s, size_t nslot)
{
	uint64_t h = 14695981039346656037ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return (size_t)(h & (nslot - 1));
}

/* The index of the jobs by path, made again (at least twice the jobs'
 * slots): a scan looks up each group it finds in every hierarchy. */
static void index_jobs(struct node *nd)
{
	size_t want = 64;
	while (want < nd->n * 2 + 2)
		want *= 2;
	if (want != nd->nslot) {
		uint32_t *s = realloc(nd->slot, want * sizeof(*s));
		if (!s)
			return;
		nd->slot = s;
		nd->nslot = want;
	}
	memset(nd->slot, 0, nd->nslot * sizeof(*nd->slot));
	for (size_t i = 0; i < nd->n; i++) {
		size_t k = path_hash(nd->jobs[i].path, nd->nslot);
		while (nd->slot[k])
			k = (k + 1) & (nd->nslot - 1);
		nd->slot[k] = (uint32_t)i + 1;
	}
}

static struct job *find_job(struct node *nd, const char *path)
{
	if (!nd->nslot)
		return NULL;
	for (size_t k = path_hash(path, nd->nslot); nd->slot[k]; k = (k + 1) & (nd->nslot - 1))
		if (!strcmp(nd->jobs[nd->slot[k] - 1].path, path))
			return &nd->jobs[nd->slot[k] - 1];
	return NULL;
}

/* A recorder for the group at path; 0 or -1. It ends its run when the
 * watcher dies, however (SIGTERM at its parent's death, even a SIGKILL'd
 * one): a watcher started again finds the job's group free and starts
 * the job's one running run, never a second beside an orphan. */
static pid_t start_recorder(struct node *nd, const char *path)
{
	nd->args[nd->at] = (char *)path;
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid == 0) {
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		if (prctl(PR_SET_PDEATHSIG, SIGTERM) < 0 || getppid() != parent)
			_exit(0); /* the watcher died already: the next one starts it */
		execv(nd->self, nd->args);
		_exit(127);
	}
	if (pid < 0 && !nd->spawn_said) {
		nd->spawn_said = 1;
		fprintf(stderr, "%s: warning: cannot start a recorder for %s (%s); trying again\n",
		        nd->prog, path, strerror(errno));
	}
	return pid < 0 ? 0 : pid;
}

/* A group the scan found: a new job gets its recorder. */
static void found(void *arg, const char *mount, const char *path, ino_t listed)
{
	struct node *nd = arg;
	if (holds_self(nd, path)) {
		if (!nd->own_said)
			fprintf(stderr,
			        "%s: warning: %s holds this watcher itself: not tracked as a job\n",
			        nd->prog, path);
		nd->own_said = 1;
		return;
	}
	ino_t ino = listed ? listed : group_ino(mount, path);
	struct job *j = find_job(nd, path);
	/* the same group: seen already, running, or its directory the same
	 * (one seen in another hierarchy, while its scheduler removes it from
	 * one after another, is the same too) */
	if (j && (j->gen == nd->gen || j->pid || j->ino == ino || strcmp(j->mount, mount))) {
		j->gen = nd->gen;
		return;
	}
	if (!j) {
		if (nd->n >= MAX_JOBS) {
			if (!nd->full_said)
				fprintf(stderr,
				        "%s: warning: %d jobs tracked at once; %s and later ones "
				        "are not\n",
				        nd->prog, MAX_JOBS, path);
			nd->full_said = 1;
			return;
		}
		if (nd->n == nd->cap) {
			size_t cap = nd->cap ? nd->cap * 2 : 64;
			struct job *p = realloc(nd->jobs, cap * sizeof(*p));
			if (!p)
				return;
			nd->jobs = p;
			nd->cap = cap;
		}
		j = &nd->jobs[nd->n++];
		snprintf(j->path, sizeof(j->path), "%s", path);
		index_jobs(nd); /* (the array may have moved too) */
	}
	j->mount = mount;
	j->ino = ino;
	j->gen = nd->gen;
	j->pid = start_recorder(nd, path);
}

/* One look at the node: new groups started, vanished ones forgotten. */
static size_t scan(struct node *nd, const struct rt_node_globs *g)
{
	nd->gen++;
	index_jobs(nd); /* (the last scan forgot some) */
	size_t n = rt_node_expand(g, found, nd);
	for (size_t i = 0; i < nd->n;) {
		if (nd->jobs[i].gen != nd->gen && !nd->jobs[i].pid) {
			nd->jobs[i] = nd->jobs[--nd->n]; /* gone and its run over */
			continue;
		}
		i++;
	}
	return n;
}

static void reap(struct node *nd)
{
	pid_t pid;
	while ((pid = waitpid(-1, NULL, WNOHANG)) > 0)
		for (size_t i = 0; i < nd->n; i++)
			if (nd->jobs[i].pid == pid)
				nd->jobs[i].pid = 0;
}

/* INT or TERM: each recorder finishes its run; a stuck one is killed. */
static void stop_all(struct node *nd)
{
	for (size_t i = 0; i < nd->n; i++)
		if (nd->jobs[i].pid)
			kill(nd->jobs[i].pid, SIGTERM);
	for (int t = 0; t < STOP_WAIT_S * 20; t++) {
		reap(nd);
		size_t live = 0;
		for (size_t i = 0; i < nd->n; i++)
			live += nd->jobs[i].pid != 0;
		if (!live)
			return;
		struct timespec ts = {0, 50000000};
		nanosleep(&ts, NULL);
	}
	for (size_t i = 0; i < nd->n; i++)
		if (nd->jobs[i].pid)
			kill(nd->jobs[i].pid, SIGKILL);
	reap(nd);
}

/* The recorders' command line: the node's, less --jobs and the output
 * (each run is stored; replay or export it), plus --cgroup PATH --quiet. */
static char **recorder_args(int argc, char **argv, int *at)
{
	char **a = calloc((size_t)argc + 5, sizeof(*a));
	if (!a)
		return NULL;
	int n = 0;
	a[n++] = argv[0];
	for (int i = 1; i < argc; i++) {
		const char *s = argv[i];
		int drop = !strcmp(s, "--jobs") || !strncmp(s, "--jobs=", 7) || !strcmp(s, "-o") ||
		           !strcmp(s, "--output") || !strncmp(s, "--output=", 9) ||
		           (!strncmp(s, "-o", 2) && s[2]);
		if (rt_config_takes_next(s) && i + 1 < argc) {
			if (!drop) {
				a[n++] = argv[i];
				a[n++] = argv[i + 1];
			}
			i++;
			continue;
		}
		if (!drop)
			a[n++] = argv[i];
	}
	a[n++] = "--quiet";
	a[n++] = "--cgroup";
	*at = n;
	a[n++] = NULL; /* the path, set per job */
	a[n] = NULL;
	return a;
}

/* Wait for the next scan, reaping recorders; nonzero on INT or TERM. */
static int wait_scan(struct node *nd, int sfd, uint64_t deadline)
{
	while (rt_clock_wait(deadline, sfd) == 1) {
		struct signalfd_siginfo si;
		while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
			if (si.ssi_signo == SIGCHLD)
				reap(nd);
			else if (si.ssi_signo == SIGINT || si.ssi_signo == SIGTERM ||
			         si.ssi_signo == SIGHUP)
				return 1;
		}
	}
	return 0;
}

int rt_node_run(const struct rt_config *cfg, int argc, char **argv, const char *prog)
{
	struct rt_node_globs g;
	char err[512];
	if (rt_node_globs(cfg->jobs, &g, err, sizeof(err))) {
		fprintf(stderr, "%s: %s\n", prog, err);
		return 2;
	}
	static struct node nd;
	memset(&nd, 0, sizeof(nd));
	nd.prog = prog;
	own_groups(&nd);
	ssize_t sl = readlink("/proc/self/exe", nd.self, sizeof(nd.self) - 1);
	nd.args = recorder_args(argc, argv, &nd.at);
	if (sl <= 0 || !nd.args) {
		fprintf(stderr, "%s: --jobs: cannot find this program to start recorders\n", prog);
		return 1;
	}
	sigset_t sigs;
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGCHLD);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGHUP);
	sigprocmask(SIG_BLOCK, &sigs, NULL);
	int sfd = signalfd(-1, &sigs, SFD_CLOEXEC | SFD_NONBLOCK);
	/* a new group is found within a quarter second (or the interval,
	 * when shorter): its job's time before its first sample is that */
	double every = cfg->interval < 0.25 ? cfg->interval : 0.25;
	uint64_t step = (uint64_t)(every * 1e9 + 0.5);
	struct rt_time now;
	rt_clock_now(&now);
	uint64_t deadline = now.mono_ns;
	if (scan(&nd, &g) == 0)
		fprintf(stderr,
		        "%s: no job cgroups match --jobs %s on this node yet (looked for %s%s%s in "
		        "every hierarchy under /sys/fs/cgroup); watching. If this node's layout "
		        "differs, name its job groups with --jobs GLOB\n",
		        prog, cfg->jobs, g.pat[0], g.n > 1 ? ", " : "", g.n > 1 ? g.pat[1] : "");
	do {
		deadline += step;
		rt_clock_now(&now);
		if (deadline <= now.mono_ns)
			deadline = now.mono_ns + step;
		if (wait_scan(&nd, sfd, deadline))
			break;
		scan(&nd, &g);
	} while (1);
	stop_all(&nd);
	free(nd.args);
	free(nd.jobs);
	free(nd.slot);
	return 0;
}
