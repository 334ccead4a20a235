/*
 * cgrun.c - a run of a job known by its cgroup (see cgrun.h).
 *
 * The end: every sample lists the group's members; the first sample that
 * finds it gone, or empty after it had members, is the run's end. On
 * cgroup v2 the group's cgroup.events also wakes the wait the moment it
 * is no longer populated, so the final sample reads the group's counters
 * before its scheduler removes it (on v1 the last sample's stand).
 */
#define _GNU_SOURCE
#include "cgrun.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "rt/fmt.h"
#include "rt/sysroot.h"

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

/* The metadata and the allocation's view of who runs in the group. */
static void take_identity(struct rt_cgrun *g)
{
	const struct rt_cgjob *j = &g->job;
	const char *last = strrchr(j->path, '/');
	rt_copy_text(g->job_name, sizeof(g->job_name),
	             g->who.name[0] ? g->who.name
	             : last         ? last + 1
	                            : j->path);
	g->meta = (struct rt_run_cgroup){
	    .path = j->path,
	    .scheduler = j->scheduler[0] ? j->scheduler : NULL,
	    .job_id = j->job_id[0] ? j->job_id : NULL,
	    .user = g->who.user[0] ? g->who.user : NULL,
	    .name = g->who.name[0] ? g->who.name : NULL,
	    .qos = j->qos[0] ? j->qos : NULL,
	    .idle = !g->had_members,
	};
	g->alloc = (struct rt_alloc_job){
	    .cp = j->cp,
	    .member = g->who.member,
	    .env = g->who.envlen ? g->who.env : NULL,
	    .envlen = g->who.envlen,
	    .slurm_job_id = !strcmp(j->scheduler, "slurm") ? j->job_id : NULL,
	};
}

int rt_cgrun_open(struct rt_cgrun *g, const char *spec, char *err, size_t cap)
{
	memset(g, 0, sizeof(*g));
	g->events_fd = -1;
	if (rt_cgjob_resolve(spec, &g->job, err, cap))
		return -1;
	rt_cgjob_identify(&g->job, &g->who);
	take_identity(g);
	g->events_fd = open_events(&g->job);
	if (g->events_fd >= 0)
		rt_cgrun_emptied(g); /* read once: the next change wakes the wait */
	return 0;
}

int rt_cgrun_refresh(struct rt_cgrun *g)
{
	if (g->who.named || !g->job.scheduler[0] || !strcmp(g->job.scheduler, "systemd"))
		return 0;
	static struct rt_cgjob_who now;
	rt_cgjob_identify(&g->job, &now);
	if (!now.named)
		return 0;
	g->who = now;
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
	if (!meta[RT_META_EXTERNAL_RUN_ID] && j->job_id[0])
		meta[RT_META_EXTERNAL_RUN_ID] = j->job_id;
}

int rt_cgrun_tree(struct rt_cgrun *g, struct rt_proctree **tree)
{
	return rt_proctree_open_members(tree, list_group, &g->job);
}

int rt_cgrun_over(struct rt_cgrun *g, const struct rt_proctree *tree)
{
	ssize_t n = rt_proctree_listed(tree);
	if (n > 0)
		g->had_members = 1;
	g->meta.idle = !g->had_members;
	return n < 0 || (n == 0 && g->had_members);
}

int rt_cgrun_emptied(struct rt_cgrun *g)
{
	char buf[256];
	ssize_t n = g->events_fd >= 0 ? rt_pread_all(g->events_fd, buf, sizeof(buf)) : -1;
	if (n < 0)
		return g->events_fd >= 0; /* the group is gone */
	const char *p = strstr(buf, "populated ");
	if (p && p[10] == '1')
		g->had_members = 1; /* members came and may go before a sample sees them */
	return p && p[10] == '0' && g->had_members;
}

void rt_cgrun_close(struct rt_cgrun *g)
{
	if (g->events_fd >= 0)
		close(g->events_fd);
	g->events_fd = -1;
}
