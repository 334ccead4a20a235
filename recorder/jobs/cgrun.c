/*
 * cgrun.c - a run of a job known by its cgroup (see cgrun.h).
 *
 * The end: every sample lists the group's members; the first sample that
 * finds it gone, or empty after it had members, is the run's end. Between
 * samples the wait wakes the moment the group empties, so that the final
 * sample reads the group's counters before its scheduler removes it (and
 * the last partial interval's CPU is not lost): on cgroup v2 its
 * cgroup.events says "populated 0"; on v1, which says nothing, a pidfd of
 * each member (up to 64: a bigger job's last members are those its
 * samples saw) wakes it on that member's exit, and the group is listed.
 */
#define _GNU_SOURCE
#include "cgrun.h"

#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "ocistate.h"
#include "rt/fmt.h"
#include "rt/sysroot.h"

/* Samples in which the members' environments are read again while none
 * names the job (a task forked but not yet exec'd carries its parent's). */
#define ENV_TRIES 10

static ssize_t list_group(void *arg, pid_t *out, size_t cap)
{
	return rt_cgjob_members(arg, out, cap);
}

/* cgroup.events of the group on v2 (the top or the unified mount). */
static int open_events(const struct rt_cgjob *j)
{
	static const char *const v2[] = {"", "/unified", NULL};
	for (int i = 0; j->cp.v2[0] && v2[i]; i++) {
		char rel[700];
		snprintf(rel, sizeof(rel), "fs/cgroup%s%s/cgroup.events", v2[i], j->cp.v2);
		if (rt_cgroup_exists(v2[i], j->cp.v2)) {
			int fd = rt_open(RT_SYS, rel);
			if (fd >= 0)
				return fd;
		}
	}
	return -1;
}

/* v2: whether cgroup.events says the group holds processes, in it or
 * below it at any depth (the kernel's word, bounded by nothing): 1 yes,
 * 0 no, -ENOENT gone, -1 unknown (v1, or unreadable now). */
static int events_populated(struct rt_cgrun *g)
{
	char buf[256];
	if (g->events_fd < 0)
		return -1;
	ssize_t n = rt_pread_all(g->events_fd, buf, sizeof(buf));
	if (n == -ENOENT || n == -ENODEV)
		return -ENOENT; /* the group is gone */
	const char *p = n > 0 ? strstr(buf, "populated ") : NULL;
	if (!p || (p[10] != '0' && p[10] != '1'))
		return -1; /* an error of the read (EMFILE...) is not an ending */
	if (p[10] == '1')
		g->had_members = 1; /* members came and may go before a sample sees them */
	return p[10] == '1';
}

/* v2: what cgroup.events says (1: emptied after it had members, or gone). */
static int events_say_empty(struct rt_cgrun *g)
{
	int pop = events_populated(g);
	return pop == -ENOENT || (pop == 0 && g->had_members);
}

/* A Slurm array's task, from the environment that names the job: its
 * SLURM_ARRAY_JOB_ID and SLURM_ARRAY_TASK_ID (digits only), "J_T". */
static void take_array(struct rt_cgrun *g)
{
	const char *aj = NULL, *at = NULL;
	g->array_id[0] = g->array_job[0] = g->array_task[0] = '\0';
	if (g->who.named && !strcmp(g->job.scheduler, "slurm")) {
		aj = rt_env_lookup(g->who.env, g->who.envlen, "SLURM_ARRAY_JOB_ID");
		at = rt_env_lookup(g->who.env, g->who.envlen, "SLURM_ARRAY_TASK_ID");
	}
	if (!aj || !at || !*aj || !*at || strspn(aj, "0123456789") != strlen(aj) ||
	    strspn(at, "0123456789") != strlen(at) || strlen(aj) >= sizeof(g->array_job) ||
	    strlen(at) >= sizeof(g->array_task))
		return;
	snprintf(g->array_job, sizeof(g->array_job), "%s", aj);
	snprintf(g->array_task, sizeof(g->array_task), "%s", at);
	snprintf(g->array_id, sizeof(g->array_id), "%s_%s", aj, at);
}

/* The metadata and the allocation's view of who runs in the group. */
static void take_identity(struct rt_cgrun *g)
{
	const struct rt_cgjob *j = &g->job;
	take_array(g);
	rt_copy_text(g->ext_id, sizeof(g->ext_id), g->array_id[0] ? g->array_id : j->job_id);
	const char *last = strrchr(j->path, '/');
	rt_copy_text(g->job_name, sizeof(g->job_name),
	             g->who.name[0] ? g->who.name
	             : last         ? last + 1
	                            : j->path);
	unsigned bounds = g->meta.bounds; /* (what the walks met so far stays said) */
	g->meta = (struct rt_run_cgroup){
	    .bounds = bounds,
	    .path = j->path,
	    .scheduler = j->scheduler[0] ? j->scheduler : NULL,
	    /* (a custom glob's job: its group's name) */
	    .job_id = g->array_id[0] ? g->array_id
	              : j->job_id[0] ? j->job_id
	              : last         ? last + 1
	                             : NULL,
	    .user = g->who.user[0] ? g->who.user : NULL,
	    .name = g->who.name[0] ? g->who.name : NULL,
	    .qos = j->qos[0] ? j->qos : NULL,
	    .pod = g->who.pod[0] ? g->who.pod : NULL,
	    .ns = g->who.ns[0] ? g->who.ns : NULL,
	    .idle = !g->had_members,
	    .cpu_before = -1,
	    .array_job_id = g->array_id[0] ? g->array_job : NULL,
	    .array_task_id = g->array_id[0] ? g->array_task : NULL,
	};
	g->alloc = (struct rt_alloc_job){
	    .cp = j->cp,
	    .member = g->who.member,
	    .cpuset = rt_cgjob_cpuset_count(j),
	    .env = g->who.envlen ? g->who.env : NULL,
	    .envlen = g->who.envlen,
	    .slurm_job_id = !strcmp(j->scheduler, "slurm") ? j->job_id : NULL,
	    .path = j->path,
	};
}

int rt_cgrun_open(struct rt_cgrun *g, const char *spec, char *err, size_t cap)
{
	return rt_cgrun_open_in(g, spec, -1, err, cap);
}

int rt_cgrun_open_in(struct rt_cgrun *g, const char *spec, int parts_ino, char *err, size_t cap)
{
	memset(g, 0, sizeof(*g));
	g->events_fd = g->made_fd = g->made_wd = -1;
	if (rt_cgjob_resolve(spec, &g->job, err, cap))
		return -1;
	rt_cgjob_identify(&g->job, &g->who);
	take_identity(g);
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	g->opened = ts.tv_sec;
	g->events_fd = open_events(&g->job);
	g->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (g->events_fd >= 0 && g->epfd >= 0) {
		struct epoll_event pri = {.events = EPOLLPRI, .data.fd = g->events_fd};
		epoll_ctl(g->epfd, EPOLL_CTL_ADD, g->events_fd, &pri);
		events_say_empty(g); /* read once: the next change wakes the wait */
	}
	if (parts_ino >= 0) { /* the caller's instance, which it reads */
		g->made_wd = rt_cgparts_watch_in(parts_ino, &g->job);
		return 0;
	}
	g->made_fd = g->epfd >= 0 ? rt_cgparts_watch(&g->job) : -1;
	struct epoll_event in = {.events = EPOLLIN, .data.fd = g->made_fd};
	if (g->made_fd >= 0 && epoll_ctl(g->epfd, EPOLL_CTL_ADD, g->made_fd, &in) < 0) {
		close(g->made_fd);
		g->made_fd = -1;
	}
	return 0;
}

int rt_cgrun_wait_fd(const struct rt_cgrun *g)
{
	return g->epfd;
}

static int watching(const struct rt_cgrun *g, pid_t pid)
{
	for (int i = 0; i < g->nwatch; i++)
		if (g->watch[i].pid == pid)
			return 1;
	return 0;
}

static void unwatch(struct rt_cgrun *g, int i)
{
	close(g->watch[i].fd); /* (which takes it out of the epoll set) */
	g->watch[i] = g->watch[--g->nwatch];
}

void rt_cgrun_watch(struct rt_cgrun *g, struct rt_proctree *tree)
{
#ifdef SYS_pidfd_open
	pid_t now[64];
	ssize_t got = g->events_fd >= 0 || g->epfd < 0 || g->lean ? 0
	              : tree ? (ssize_t)rt_proctree_members(tree, now, 64)
	                     : rt_cgjob_members(&g->job, now, 64);
	size_t n = got > 0 ? (size_t)got : 0;
	for (int i = 0; i < g->nwatch;) { /* those no longer members */
		int still = 0;
		for (size_t k = 0; k < n && !still; k++)
			still = now[k] == g->watch[i].pid;
		if (!still)
			unwatch(g, i);
		else
			i++;
	}
	for (size_t k = 0; k < n && g->nwatch < 64; k++) {
		if (watching(g, now[k]))
			continue;
		int fd = (int)syscall(SYS_pidfd_open, now[k], 0);
		struct epoll_event in = {.events = EPOLLIN, .data.fd = fd};
		if (fd < 0)
			continue;
		if (epoll_ctl(g->epfd, EPOLL_CTL_ADD, fd, &in) < 0) {
			close(fd);
			continue;
		}
		fcntl(fd, F_SETFD, FD_CLOEXEC);
		g->watch[g->nwatch].pid = now[k];
		g->watch[g->nwatch++].fd = fd;
	}
#else
	(void)g;
	(void)tree;
#endif
}

void rt_cgrun_lean(struct rt_cgrun *g, struct rt_collector *col, struct rt_proctree *tree)
{
	g->lean = g->job.lean = 1;
	rt_cgjob_close(&g->job);
	while (g->nwatch)
		unwatch(g, 0);
	rt_cgroup_lean(col);
	if (tree)
		rt_proctree_lean(tree);
}

int rt_cgrun_refresh(struct rt_cgrun *g)
{
	struct timespec now_ts;
	clock_gettime(CLOCK_MONOTONIC, &now_ts);
	int young = now_ts.tv_sec - g->opened < 10;
	int moved = rt_cgjob_recheck(&g->job, young); /* in more hierarchies now */
	if (moved)
		g->alloc.cp = g->job.cp; /* (its limits: the allocation again) */
	/* a young group's limits may be written after it is made (runc makes
	 * a container's groups, then sets them): its allocation read again */
	moved |= young;
	if (g->renamed) { /* (a pod named by its containers' bundles) */
		g->renamed = 0;
		take_identity(g);
		moved = 1;
	}
	/* (a custom glob's job: until its owner is known as a user of its own) */
	if (g->who.named || !strcmp(g->job.scheduler, "systemd") ||
	    (!g->job.scheduler[0] && g->who.user[0] && strcmp(g->who.user, "root") != 0))
		return moved;
	/* a few tries (up to 64 environments of 32 KiB each), then never: a
	 * job that never names itself costs no more */
	if (g->env_tries >= ENV_TRIES) {
		if (g->job.scheduler[0]) /* (a custom glob's names nothing: no bound) */
			g->meta.bounds |= RT_CGWALK_ENV;
		return moved;
	}
	g->env_tries++;
	static struct rt_cgjob_who now;
	rt_cgjob_identify(&g->job, &now);
	/* a custom glob's job names nothing: who owns it may be known better
	 * once its members have dropped to their user */
	int owner = !g->job.scheduler[0] && now.user[0] && strcmp(now.user, g->who.user);
	if (!now.named && !owner)
		return moved;
	rt_cgjob_who_copy(&g->who, &now);
	take_identity(g);
	return 1;
}

void rt_cgrun_describe(struct rt_cgrun *g, struct rt_run_meta *m, const char **meta)
{
	const struct rt_cgjob *j = &g->job;
	m->cgroup = &g->meta;
	if (!meta[RT_META_JOB_NAME])
		meta[RT_META_JOB_NAME] = g->job_name; /* kept current by rt_cgrun_refresh */
	if (!meta[RT_META_ORCHESTRATOR] && j->scheduler[0])
		meta[RT_META_ORCHESTRATOR] = j->scheduler;
	if (!meta[RT_META_EXTERNAL_RUN_ID] && j->job_id[0]) /* (kept current too) */
		meta[RT_META_EXTERNAL_RUN_ID] = g->ext_id;
}

int rt_cgrun_tree(struct rt_cgrun *g, struct rt_proctree **tree)
{
	return rt_proctree_open_members(tree, list_group, &g->job);
}

/* What the walk's bounds left unread, and an error that hid members: a
 * line each, once (a new errno is said again), and the bounds kept in
 * the run's metadata. */
static void say_walk(struct rt_cgrun *g, ssize_t n, char *warn, size_t cap)
{
	const struct rt_cgjob_walk *w = &g->job.walk;
	size_t at = strlen(warn);
	int fresh = w->cut & ~g->meta.bounds;
	g->meta.bounds |= w->cut;
	if (fresh & RT_CGWALK_DEPTH)
		at += (size_t)snprintf(warn + at, cap - at,
		                       "the job's groups nest deeper than 64 levels: its processes "
		                       "below are not read (its CPU and memory come from its "
		                       "group's counters; its PSS is partial)\n");
	if (at < cap && (fresh & RT_CGWALK_GROUPS))
		at += (size_t)snprintf(warn + at, cap - at,
		                       "the job has more than 512 groups: the rest are not read a "
		                       "sample (its CPU and memory come from its group's counters; "
		                       "its PSS is partial)\n");
	if (at < cap && (fresh & RT_CGWALK_MEMBERS))
		at += (size_t)snprintf(warn + at, cap - at,
		                       "the job has 256 processes or more: 256 are read a sample "
		                       "(its CPU and memory come from its group's counters; its "
		                       "PSS is partial)\n");
	int err = n < 0 && n != -ENOENT ? (int)n : w->err;
	if (at < cap && err && err != -ENOENT && err != g->said_err)
		snprintf(warn + at, cap - at,
		         "cannot list the job's processes now: %s (not its end: tried again each "
		         "sample)\n",
		         strerror(-err));
	g->said_err = err;
}

int rt_cgrun_over(struct rt_cgrun *g, const struct rt_proctree *tree, char *warn, size_t cap)
{
	ssize_t n = rt_proctree_listed(tree);
	const struct rt_cgjob_walk *w = &g->job.walk;
	if (n > 0)
		g->had_members = 1;
	say_walk(g, n, warn, cap);
	g->meta.idle = !g->had_members;
	if (n == -ENOENT)
		return 1; /* removed */
	if (n != 0 || !g->had_members)
		return 0; /* members, an error (retried), or not used yet */
	if (!w->cut && !w->err)
		return 1; /* emptied: every group was read and none has members */
	/* none found where the walk could look: the kernel's word decides on
	 * v2; on v1, which has none, the run goes on */
	int pop = events_populated(g);
	return pop == 0 || pop == -ENOENT;
}

/* The wait's events: a part's group made (read at once: a step that
 * lives a second is listed too), members that exited (unwatched). 1 when
 * one exited. */
static int wait_events(struct rt_cgrun *g, struct rt_collector *c)
{
	struct epoll_event ev[16];
	int n = g->epfd >= 0 ? epoll_wait(g->epfd, ev, 16, 0) : 0, exited = 0;
	for (int i = 0; i < n; i++) {
		if (ev[i].data.fd == g->made_fd) {
			if (rt_cgparts_made(g->made_fd))
				rt_cgrun_read_parts(g, c, 0);
			continue;
		}
		for (int k = 0; k < g->nwatch; k++)
			if (g->watch[k].fd == ev[i].data.fd) {
				unwatch(g, k); /* it exited */
				exited = 1;
				break;
			}
	}
	return exited;
}

int rt_cgrun_emptied(struct rt_cgrun *g, struct rt_collector *c)
{
	int exited = wait_events(g, c);
	if (g->events_fd >= 0)
		return events_say_empty(g);
	if (!exited)
		return 0;
	/* the group's CPU now, while it is there (and its OOM counters: a
	 * killed task's group goes with its step); who is left to watch */
	rt_cgroup_job_cpu_now(c);
	rt_cgrun_read_parts(g, c, 0);
	rt_cgrun_watch(g, NULL);
	pid_t one;
	ssize_t m = rt_cgjob_members(&g->job, &one, 1);
	return m == -ENOENT || (g->had_members && m == 0 && !g->job.walk.cut && !g->job.walk.err);
}

/* A pod's containers named by their runtime's bundles as its parts come
 * (once each: a container's bundle is written before its group is made),
 * and the pod by the first that names it (taken at the next refresh). */
static void name_pod_parts(struct rt_cgrun *g)
{
	if (strcmp(g->job.scheduler, "kubernetes") != 0)
		return;
	for (; g->labels_tried < g->parts.npart; g->labels_tried++) {
		char id[130];
		struct rt_oci_names oci;
		if (rt_cgjob_part_container(g->parts.part[g->labels_tried].name, id, sizeof(id)) ||
		    rt_oci_names("kubernetes", id, &oci))
			continue;
		rt_copy_text(g->part_label[g->labels_tried], sizeof(g->part_label[0]),
		             oci.container);
		if (!oci.pod[0] || g->who.pod[0])
			continue;
		rt_copy_text(g->who.pod, sizeof(g->who.pod), oci.pod);
		rt_copy_text(g->who.ns, sizeof(g->who.ns), oci.ns);
		rt_copy_text(g->who.name, sizeof(g->who.name), oci.pod);
		g->who.named = 1; /* (no environment to wait for) */
		g->renamed = 1;
	}
}

void rt_cgrun_read_parts(struct rt_cgrun *g, struct rt_collector *c, long every_s)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	if (every_s && g->parts_at && ts.tv_sec - g->parts_at < every_s)
		return;
	g->parts_at = ts.tv_sec ? ts.tv_sec : 1;
	rt_cgparts_read(&g->parts, &g->job);
	c->cg_oom_below = g->parts.below_oom;
	name_pod_parts(g);
}

int rt_cgrun_end(struct rt_cgrun *g)
{
	static struct rt_run_part part[RT_CGPARTS_MAX];
	const struct rt_cgparts *p = &g->parts;
	struct rt_run_cgroup *m = &g->meta;
	for (unsigned i = 0; i < p->npart; i++)
		part[i] = (struct rt_run_part){
		    p->part[i].name,      p->part[i].cpu_secs,
		    p->part[i].mem_peak,  p->part[i].mem_limit,
		    p->part[i].oom_kills, g->part_label[i][0] ? g->part_label[i] : NULL};
	m->ended = 1;
	m->mem_known = p->known;
	m->oom_kills = rt_cgparts_oom(p);
	m->mem_peak = p->mem_peak;
	m->mem_limit = p->known ? p->mem_limit : -1;
	m->limit_hits = p->limit_hits;
	m->parts = part;
	m->nparts = p->npart;
	return p->known && m->oom_kills > 0;
}

void rt_cgrun_close(struct rt_cgrun *g)
{
	rt_cgjob_free(&g->job);
	rt_cgjob_who_free(&g->who);
	rt_cgparts_free(&g->parts);
	g->alloc.env = NULL;
	g->alloc.envlen = 0;
	while (g->nwatch)
		unwatch(g, 0);
	if (g->events_fd >= 0)
		close(g->events_fd);
	if (g->made_fd >= 0)
		close(g->made_fd);
	if (g->epfd >= 0)
		close(g->epfd);
	g->events_fd = g->made_fd = g->epfd = -1;
}
