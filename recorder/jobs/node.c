/*
 * node.c - the node mode: one process finds the job groups and samples
 * them all, each into its own run (node.h, nodesampler.h).
 *
 * Why one process: every job's recorder re-read the host's files and
 * carried its own copy of everything (rt-bench node: 459 us a job and
 * sample and 0.7 MiB a job at 100 jobs, against 80 us and 0.15 MiB); a
 * job's run stays like any other (its own ring, metadata, salvage,
 * uploads and pushes), in the node's one store.
 *
 * A job is a group that matches, identified by its path and the inode of
 * its directory in the first hierarchy it is found in: a group removed and
 * made again at the same path (a restarted unit) is a new job. A job whose
 * run ended (its group emptied) is not started again while its group
 * stays; one that could not start (no descriptor, no memory) is tried
 * again at the next scan.
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
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cgjob.h"
#include "noderec.h"
#include "nodesampler.h"
#include "rt/clock.h"
#include "rt/sysroot.h"

#define MAX_JOBS 4096           /* jobs at once; more is said once */
#define MAX_DEPTH 16            /* components of a glob */
#define STOP_WAIT_S 10          /* for the sinks to send the runs' ends */
#define NODE_LOCK_WAIT_MS 15000 /* for a node that still hands its runs over */

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
		snprintf(
		    err, cap,
		    "--jobs %.200s: not slurm, kubernetes, systemd, podman, docker or a glob of "
		    "cgroup paths (for example 'batch/*')",
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
	const char *const *pre = rt_cgjob_preset(which);
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
	int ino_fd;     /* an inotify instance the directories looked in join, -1 */
	size_t watched; /* directories it watches */
};

/* The directory path of the hierarchy watched for groups made in it
 * (before it is listed: one made meanwhile is an event, not missed). */
static void watch_dir(struct expand *x, const char *path)
{
	char rel[700], p[4800];
	snprintf(rel, sizeof(rel), "fs/cgroup%s%s", x->mount, path);
	if (x->ino_fd >= 0 && rt_path(p, sizeof(p), RT_SYS, rel) == 0 &&
	    inotify_add_watch(x->ino_fd, p, IN_CREATE | IN_MOVED_TO | IN_ONLYDIR) >= 0)
		x->watched++;
}

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
	watch_dir(x, path);
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
                      void *arg, int ino_fd, size_t *watched)
{
	struct expand x = {.fn = fn, .arg = arg, .ino_fd = ino_fd};
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
	if (watched)
		*watched = x.watched;
	return x.found;
}

struct job {
	char path[512];
	const char *mount; /* the hierarchy it was found in, and its inode there */
	ino_t ino;
	int live;     /* its run is being recorded */
	pid_t pid;    /* its recorder (noderec.h), 0: none */
	uint64_t gen; /* the last scan that found it */
};

struct node {
	struct job *jobs;
	size_t n, cap;
	uint64_t gen;
	int full_said, add_said;
	const char *prog;
	const struct rt_node_env *env;
	struct rt_nodesampler ns;
	struct rt_noderec *rec; /* each job a recorder of its own; NULL: none */
	/* the jobs by path: an index into jobs + 1 per slot, 0 empty */
	uint32_t *slot;
	size_t nslot;
	/* the node's own groups (/proc/self/cgroup, one a hierarchy): a
	 * group holding the node's process is never a job */
	char own[16][512];
	int nown, own_said;
	int ino;        /* inotify: a group made where jobs are looked for, -1 */
	size_t watched; /* the directories it watched at the last look */
	pid_t *sink;    /* the children to await at the end (the runs' exporter) */
	size_t nsink, sinkcap;
	pid_t exporter;     /* the runs' exporter (env->tell), 0: none */
	uint64_t retell_at; /* it ended: every live run named to the next then */
	uint64_t ended[64]; /* the runs ended last (named again to the next too) */
	unsigned nended;
	char warn[16384];
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

/* Warnings of the sampler, a line each, in the node's name. */
static void say_warn(const struct node *nd, const char *warn)
{
	for (const char *p = warn, *e; *p; p = *e ? e + 1 : e) {
		e = strchr(p, '\n');
		if (!e)
			e = p + strlen(p);
		if (e > p)
			fprintf(stderr, "%s: warning: %.*s\n", nd->prog, (int)(e - p), p);
	}
}

/* A run named to the runs' exporter (started first when none runs: it is
 * then awaited at the end). */
static void tell(struct node *nd, uint64_t run)
{
	pid_t pid = nd->env->tell ? nd->env->tell(nd->env->arg, run) : -1;
	if (pid <= 0)
		return;
	nd->exporter = pid;
	if (nd->nsink == nd->sinkcap) {
		size_t cap = nd->sinkcap ? nd->sinkcap * 2 : 4;
		pid_t *p = realloc(nd->sink, cap * sizeof(*p));
		if (!p)
			return;
		nd->sink = p;
		nd->sinkcap = cap;
	}
	nd->sink[nd->nsink++] = pid;
}

/* The runs' exporter ended: the next one is told every live run and
 * those ended last (a second on: one that keeps ending is not started
 * in a loop). */
static void retell(struct node *nd, uint64_t now_ns)
{
	if (!nd->retell_at || now_ns < nd->retell_at)
		return;
	nd->retell_at = 0;
	for (size_t i = 0; i < nd->ns.njob; i++)
		if (!nd->ns.job[i]->over)
			tell(nd, nd->ns.job[i]->run);
	for (unsigned i = 0; i < nd->nended && i < RT_ARRAY_LEN(nd->ended); i++)
		tell(nd, nd->ended[i]);
}

/* A run a node before this one left, ended now: its sinks told. */
static void told_ended(void *arg, uint64_t run)
{
	struct node *nd = arg;
	nd->ended[nd->nended++ % RT_ARRAY_LEN(nd->ended)] = run;
	tell(nd, run);
}

/* A new job's run started; 0, or -1 when it could not start (said once:
 * tried again at the next scan). */
static int start_job(struct node *nd, const char *path)
{
	char err[2048];
	long k = rt_nodesampler_add(&nd->ns, path, err, sizeof(err));
	if (k < 0) {
		if (!nd->add_said)
			fprintf(stderr, "%s: warning: %s; trying again\n", nd->prog, err);
		nd->add_said = 1;
		return -1;
	}
	say_warn(nd, err);
	tell(nd, nd->ns.job[k]->run);
	return 0;
}

/* A group the scan found: a new job gets its run. */
static void found(void *arg, const char *mount, const char *path, ino_t listed)
{
	struct node *nd = arg;
	if (holds_self(nd, path)) {
		if (!nd->own_said)
			fprintf(stderr,
			        "%s: warning: %s holds this process itself: not tracked as a job\n",
			        nd->prog, path);
		nd->own_said = 1;
		return;
	}
	ino_t ino = listed ? listed : group_ino(mount, path);
	struct job *j = find_job(nd, path);
	/* the same group: seen already, running, or its directory the same
	 * (one seen in another hierarchy, while its scheduler removes it from
	 * one after another, is the same too) */
	if (j && (j->gen == nd->gen || j->live || j->ino == ino || strcmp(j->mount, mount))) {
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
	j->gen = nd->gen;
	j->pid = nd->rec ? rt_noderec_start(nd->rec, path) : 0;
	j->live = nd->rec ? j->pid != 0 : start_job(nd, path) == 0;
	j->ino = j->live ? ino : 0; /* (one that did not start is tried again) */
}

/* A job's run ended: its group's entry let go when it goes; a Slurm
 * job's end asked of Slurm (env->ended). */
static void job_ended(void *arg, const struct rt_node_job *nj)
{
	struct node *nd = arg;
	struct job *j = find_job(nd, nj->group);
	if (j)
		j->live = 0;
	nd->ended[nd->nended++ % RT_ARRAY_LEN(nd->ended)] = nj->run;
	tell(nd, nj->run); /* (its end: its sinks finish it, or send what waits) */
	/* (a run the node's stop hands over has a job still running: Slurm is
	 * asked when it ends, by the node that goes on with it) */
	if (nd->env->ended && !nd->ns.stopping)
		nd->env->ended(nd->env->arg, nj->run, nj->cg.alloc.slurm_job_id);
}

/* One look at the node: new groups started, vanished ones forgotten. */
static size_t scan(struct node *nd, const struct rt_node_globs *g)
{
	nd->gen++;
	index_jobs(nd); /* (the last scan forgot some) */
	size_t n = rt_node_expand(g, found, nd, nd->ino, &nd->watched);
	for (size_t i = 0; i < nd->n;) {
		if (nd->jobs[i].gen != nd->gen && !nd->jobs[i].live) {
			nd->jobs[i] = nd->jobs[--nd->n]; /* gone and its run over */
			continue;
		}
		i++;
	}
	return n;
}

/* The children that ended (recorders, sinks, learn): their jobs' runs
 * over, the sinks among them let go. */
static void reap_children(struct node *nd)
{
	pid_t pid;
	while ((pid = waitpid(-1, NULL, WNOHANG)) > 0) {
		for (size_t i = 0; i < nd->n; i++)
			if (nd->jobs[i].pid == pid)
				nd->jobs[i].pid = nd->jobs[i].live = 0;
		for (size_t i = 0; i < nd->nsink; i++)
			if (nd->sink[i] == pid) {
				nd->sink[i] = nd->sink[--nd->nsink];
				break;
			}
		if (pid == nd->exporter && nd->env->lost) {
			struct rt_time now;
			rt_clock_now(&now);
			nd->exporter = 0;
			nd->env->lost(nd->env->arg);
			nd->retell_at = now.mono_ns + 1000000000ull;
		}
	}
}

/* The recorders still running (noderec.h). */
static size_t recorders(const struct node *nd)
{
	size_t live = 0;
	for (size_t i = 0; i < nd->n; i++)
		live += nd->jobs[i].pid != 0;
	return live;
}

/* Each of the children still running signalled. */
static void signal_children(struct node *nd, int sig)
{
	for (size_t i = 0; i < nd->n; i++)
		if (nd->jobs[i].pid)
			kill(nd->jobs[i].pid, sig);
	for (size_t i = 0; i < nd->nsink; i++)
		kill(nd->sink[i], sig);
}

/* The node stops: every run ended (a final sample each; the recorders
 * told to end theirs); the recorders and sinks given up to 10 s to end
 * theirs and send the runs they follow to their ends, then stopped.
 * (`learn`, asking Slurm, is left to finish.) */
static void stop_all(struct node *nd)
{
	if (!nd->rec) {
		rt_nodesampler_stop(&nd->ns, nd->warn, sizeof(nd->warn));
		say_warn(nd, nd->warn);
	}
	nd->retell_at = 0; /* (none started now) */
	if (nd->env->close)
		nd->env->close(nd->env->arg);
	for (size_t i = 0; i < nd->n; i++)
		if (nd->jobs[i].pid)
			kill(nd->jobs[i].pid, SIGTERM);
	for (int t = 0; t < STOP_WAIT_S * 20 && (nd->nsink || recorders(nd)); t++) {
		struct timespec ts = {0, 50000000};
		nanosleep(&ts, NULL);
		reap_children(nd);
	}
	signal_children(nd, SIGTERM);
	for (int t = 0; t < 20 && (nd->nsink || recorders(nd)); t++) {
		struct timespec ts = {0, 50000000};
		nanosleep(&ts, NULL);
		reap_children(nd);
	}
	signal_children(nd, SIGKILL);
	reap_children(nd);
}

/* Signals: nonzero on INT, TERM or HUP; children reaped. */
static int read_signals(struct node *nd, int sfd)
{
	struct signalfd_siginfo si;
	int stop = 0;
	while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGCHLD)
			reap_children(nd);
		else if (si.ssi_signo == SIGINT || si.ssi_signo == SIGTERM ||
		         si.ssi_signo == SIGHUP)
			stop = 1;
	}
	return stop;
}

/* Whether a group was made where jobs are looked for (drained). */
static int made(const struct node *nd)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	int any = 0;
	while (nd->ino >= 0 && read(nd->ino, buf, sizeof(buf)) > 0)
		any = 1;
	return any;
}

/* Wait until deadline, ending the runs of groups that empty meanwhile:
 * 0 at the deadline, 1 on INT, TERM or HUP, 2 when a group was made
 * where jobs are looked for (a scan is due now). */
static int wait_until(struct node *nd, int wfd, int sfd, uint64_t deadline)
{
	while (rt_clock_wait(deadline, wfd) == 1) {
		if (read_signals(nd, sfd))
			return 1;
		if (made(nd))
			return 2;
		if (nd->rec)
			continue;
		rt_nodesampler_woke(&nd->ns, nd->warn, sizeof(nd->warn));
		say_warn(nd, nd->warn);
	}
	return 0;
}

/* A tick of every job's sample; deadlines it ran past are skipped and
 * counted in each run, said once. */
static void tick(struct node *nd, uint64_t *next, uint64_t every)
{
	rt_nodesampler_tick(&nd->ns, nd->warn, sizeof(nd->warn));
	say_warn(nd, nd->warn);
	struct rt_time now;
	rt_clock_now(&now);
	*next += every;
	if (*next > now.mono_ns)
		return;
	uint64_t missed = (now.mono_ns - *next) / every + 1;
	*next += missed * every;
	rt_nodesampler_skipped(&nd->ns, missed);
	static int said;
	if (!said++)
		fprintf(
		    stderr,
		    "%s: warning: a tick of %zu jobs took longer than the interval: %llu samples "
		    "skipped, counted in each run\n",
		    nd->prog, nd->ns.njob, (unsigned long long)missed);
}

/* The wait: signals and the jobs' groups emptying, one descriptor. */
static int wait_fd(struct node *nd, int sfd)
{
	int w = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event in = {.events = EPOLLIN};
	if (w < 0)
		return sfd;
	in.data.fd = sfd;
	epoll_ctl(w, EPOLL_CTL_ADD, sfd, &in);
	in.data.fd = nd->rec ? -1 : rt_nodesampler_wait_fd(&nd->ns);
	if (in.data.fd >= 0)
		epoll_ctl(w, EPOLL_CTL_ADD, in.data.fd, &in);
	in.data.fd = nd->ino;
	if (in.data.fd >= 0)
		epoll_ctl(w, EPOLL_CTL_ADD, in.data.fd, &in);
	return w;
}

/* Scan when a group is made where jobs are looked for (and every 5 s,
 * in case; every quarter second, or the interval when shorter, where
 * inotify is not to be had), sample every interval, until INT, TERM or
 * HUP. */
static void watch(struct node *nd, const struct rt_node_globs *g, const struct rt_config *cfg,
                  int sfd)
{
	uint64_t every = (uint64_t)(cfg->interval * 1e9 + 0.5);
	uint64_t poll = every < 250000000ull ? every : 250000000ull;
	uint64_t step = nd->watched ? 5000000000ull : poll;
	struct rt_time now;
	rt_clock_now(&now);
	uint64_t next_scan = now.mono_ns + step, next_tick = now.mono_ns + every;
	int wfd = wait_fd(nd, sfd);
	for (;;) {
		uint64_t deadline = next_scan < next_tick ? next_scan : next_tick;
		int why = wait_until(nd, wfd, sfd, deadline);
		if (why == 1)
			break;
		rt_clock_now(&now);
		retell(nd, now.mono_ns);
		if (now.mono_ns >= next_tick && !nd->rec)
			tick(nd, &next_tick, every);
		else if (now.mono_ns >= next_tick)
			next_tick = now.mono_ns + every;
		if (why == 2 && next_scan > now.mono_ns + 20000000ull)
			next_scan = now.mono_ns + 20000000ull; /* (a scheduler makes a job's
			                                         * groups in a burst) */
		else if (now.mono_ns >= next_scan) {
			scan(nd, g);
			step = nd->watched ? 5000000000ull : poll; /* (no watch took: polled) */
			next_scan = now.mono_ns + step;
		}
	}
	if (wfd != sfd)
		close(wfd);
}

int rt_node_run(const struct rt_config *cfg, const struct rt_node_env *env, const char *prog)
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
	nd.env = env;
	/* (first: one instance of the user's 128 for the node itself) */
	nd.ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	own_groups(&nd);
	static struct rt_noderec rec;
	if (!env->store && rt_noderec_open(&rec, env->argc, env->argv, prog))
		return 1;
	nd.rec = env->store ? NULL : &rec;
	struct rt_node_base base = {.meta = env->meta,
	                            .request = cfg->has_request ? &cfg->request : NULL,
	                            .ended = job_ended,
	                            .arg = &nd};
	/* one node at a time writes the store's job runs; a new one waits for
	 * one that still hands its runs over (a restart) */
	int lock = nd.rec ? -1 : rt_store_node_lock(env->store, NODE_LOCK_WAIT_MS);
	if (!nd.rec && lock < 0) {
		fprintf(stderr,
		        "%s: --jobs: %s: another node mode holds this store (%s); stop it, or "
		        "give this one a store of its own with --store\n",
		        prog, rt_store_dir(env->store), rt_strerror(lock));
		return 1;
	}
	if (!nd.rec && rt_nodesampler_open(&nd.ns, env->store, &base)) {
		fprintf(stderr, "%s: --jobs: cannot start sampling: %s\n", prog, strerror(ENOMEM));
		rt_nodesampler_close(&nd.ns);
		return 1;
	}
	if (!nd.rec)
		rt_store_set_cap_budget(env->store, (uint64_t)(cfg->interval * 1e9 / 4));
	sigset_t sigs;
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGCHLD);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGHUP);
	sigprocmask(SIG_BLOCK, &sigs, NULL);
	int sfd = signalfd(-1, &sigs, SFD_CLOEXEC | SFD_NONBLOCK);
	if (scan(&nd, &g) == 0)
		fprintf(stderr,
		        "%s: no job cgroups match --jobs %s on this node yet (looked for %s%s%s in "
		        "every hierarchy under /sys/fs/cgroup); watching. If this node's layout "
		        "differs, name its job groups with --jobs GLOB\n",
		        prog, cfg->jobs, g.pat[0], g.n > 1 ? ", " : "", g.n > 1 ? g.pat[1] : "");
	if (!nd.rec) /* (the jobs that ended while no node ran: their runs' ends) */
		rt_nodesampler_settle(&nd.ns, told_ended, &nd);
	watch(&nd, &g, cfg, sfd);
	stop_all(&nd);
	if (!nd.rec)
		rt_nodesampler_close(&nd.ns);
	rt_noderec_free(&rec);
	free(nd.jobs);
	free(nd.slot);
	free(nd.sink);
	if (nd.ino >= 0)
		close(nd.ino);
	if (sfd >= 0)
		close(sfd);
	if (lock >= 0)
		close(lock);
	return 0;
}
