/*
 * cgrun.h - a run of a job known by its cgroup (--cgroup PATH; each job
 * of the node mode is one): the group found and named, its members as
 * the process tree, its allocation, and when it ends (the group emptied
 * after it had members, or removed).
 */
#ifndef RT_CGRUN_H
#define RT_CGRUN_H

#include "alloc_detect.h"
#include "cgjob.h"
#include "cgparts.h"
#include "collect.h"
#include "proctree.h"
#include "rt/runmeta.h"

struct rt_cgrun {
	struct rt_cgjob job;
	struct rt_cgjob_who who;
	struct rt_run_cgroup meta;
	struct rt_alloc_job alloc;
	char job_name[256]; /* the run's job name when the user gave none */
	/* a Slurm array's task: "J_T" as Slurm names it, and its two parts */
	char array_id[48], array_job[24], array_task[16];
	char ext_id[96]; /* the run's external run id when the user gave none */
	int had_members;
	long opened;   /* monotonic seconds at the start: young for 10 s */
	int events_fd; /* v2 cgroup.events (its "populated" wakes the wait), -1 */
	/* what the wait polls (rt_cgrun_wait_fd): the events file, or on v1
	 * a pidfd per member (at most 64): the last one's exit is
	 * the group's emptying, seen before its scheduler removes it */
	int epfd;
	struct {
		pid_t pid;
		int fd;
	} watch[64];
	int nwatch;
	int made_fd;             /* an inotify watch: a group made below the job's, -1 */
	int made_wd;             /* or its watch in the caller's instance (rt_cgrun_open_in), -1 */
	struct rt_cgparts parts; /* the kernel's word on its memory, its parts */
	long parts_at;           /* monotonic seconds of the parts' last read, 0 */
	/* a pod's containers' names (their runtime's bundles), by part;
	 * labels_tried: the parts looked up; renamed: the pod named by them
	 * since the last refresh */
	char part_label[RT_CGPARTS_MAX][64];
	unsigned labels_tried;
	int renamed;
	int said_err;  /* the listing's error last said (-errno), 0 */
	int env_tries; /* samples whose environments were read to name it */
	int lean;      /* no member's pidfd watched (rt_cgrun_lean) */
};

/* Find the group spec names and who runs in it. 0, or -1 with one line. */
int rt_cgrun_open(struct rt_cgrun *g, const char *spec, char *err, size_t cap);
/* The same, its parts watched in the caller's inotify instance parts_ino
 * (g->made_wd; the caller reads the parts when it fires) rather than an
 * instance of its own. */
int rt_cgrun_open_in(struct rt_cgrun *g, const char *spec, int parts_ino, char *err, size_t cap);
/* The run's metadata: the "cgroup" object, and the job's name, external
 * run id and orchestrator where the user gave none (meta: cfg->meta). */
void rt_cgrun_describe(struct rt_cgrun *g, struct rt_run_meta *m, const char **meta);
/* Who runs in the group, looked at again while no member's environment
 * named the job (a task forked but not yet exec'd carries its parent's),
 * and where it is, while its scheduler was still making it: 1 when
 * either is known better now, or the group is under 10 s old (its limits
 * may be set after it was made: the allocation is then detected again),
 * else 0. */
int rt_cgrun_refresh(struct rt_cgrun *g);
/* The process tree of the group's members. 0 or -errno. */
int rt_cgrun_tree(struct rt_cgrun *g, struct rt_proctree **tree);
/* What the run keeps open cut to its wait (v2's cgroup.events) and its
 * ring: the group's directory, its counter files and its members' files
 * opened when read, no member's pidfd watched (on v1 alone its emptying
 * is then found by the next sample, not at once); col and tree its
 * collector and tree. For a node past its descriptor budget. */
void rt_cgrun_lean(struct rt_cgrun *g, struct rt_collector *col, struct rt_proctree *tree);
/* Whether the run is over after the sample the tree just took: the group
 * was removed, or it emptied after it had members (a group that never
 * had any is an allocation not used yet: it is recorded, idle). A listing
 * that failed (EMFILE...) or that its bounds cut short is no ending: v2's
 * cgroup.events decides then, and on v1 the run goes on. What the bounds
 * left unread and a new error are appended to warn, a line each, once. */
int rt_cgrun_over(struct rt_cgrun *g, const struct rt_proctree *tree, char *warn, size_t cap);
/* What the sampling wait polls beside its signals (-1: none). */
int rt_cgrun_wait_fd(const struct rt_cgrun *g);
/* After a sample (v1): a pidfd for each member (the tree's, or when it
 * is NULL the group's now), to wake on its exit. */
void rt_cgrun_watch(struct rt_cgrun *g, struct rt_proctree *tree);
/* The wait woke: whether the group emptied now (v2: its cgroup.events
 * says so; v1: a member exited and none is left; its CPU counter is read
 * then, the members watched again). A group made below the job's (a
 * step, a container) has the parts read at once. */
int rt_cgrun_emptied(struct rt_cgrun *g, struct rt_collector *c);
/* The job's OOM kills over its subtree, its group's peak and its parts
 * (cgparts.h) read again when the last read is every_s seconds old (0:
 * now), the kills below its group handed to the collector for the next
 * record. Every 5 s a sample, on each member's exit (a killed task's
 * group goes with its step), and at the end unless it was just read. */
void rt_cgrun_read_parts(struct rt_cgrun *g, struct rt_collector *c, long every_s);
/* At the run's end: the figures into the run's metadata ("cgroup"), and
 * whether the kernel OOM-killed any of its processes. */
int rt_cgrun_end(struct rt_cgrun *g);
void rt_cgrun_close(struct rt_cgrun *g);

#endif
