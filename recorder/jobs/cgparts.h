/*
 * cgparts.h - the kernel's word on a job's memory and its parts: the OOM
 * kills in the job's whole subtree of groups, its group's high-water mark
 * and limit, and each part's own figures (the groups right below the
 * job's: a Slurm job's steps, a pod's containers).
 *
 * Why a walk: on cgroup v1 the kernel counts an OOM kill only in the
 * killed task's own group (memory.oom_control's oom_kill is not
 * hierarchical), and Slurm's tasks live two levels below the job. On v2
 * memory.events is hierarchical, so the job's own counter is the
 * subtree's; the parts are read the same way on both.
 *
 * Read at the slow cadence (every 5 s), when a part's group is made (an
 * inotify watch on the job's group: a step that lives a second is listed
 * too), on a member's exit and at the run's last sample; a group removed
 * keeps what was last read of it, so a kill counted in a step's group
 * still counts after Slurm removes it. A part whose last process exits
 * as its group is removed (a step's one task) may go before the read its
 * exit wakes: its figures are then those of the read before.
 * Read-only; bounded (64 levels, 512 groups, 16 parts).
 */
#ifndef RT_CGPARTS_H
#define RT_CGPARTS_H

#include <stdint.h>

#include "cgjob.h"

#define RT_CGPARTS_MAX 16
#define RT_CGPARTS_GROUPS 512

struct rt_cgpart {
	char name[96];     /* the group's directory name (cri-containerd-<id>.scope: 85) */
	double cpu_secs;   /* CPU charged to it, -1: unknown */
	uint64_t mem_peak; /* its high-water mark, bytes; 0: unknown */
	int64_t mem_limit; /* bytes, -1: none */
	uint64_t oom_kills;
};

/* a group read below the job's (v1): its inode, last oom_kill, part */
struct rt_cgparts_seen {
	uint64_t ino, oom;
	int part;
};

struct rt_cgparts {
	struct rt_cgparts_seen *seen; /* grown as groups come, to RT_CGPARTS_GROUPS */
	unsigned nseen, seencap;
	struct rt_cgpart part[RT_CGPARTS_MAX];
	unsigned npart;
	int known;           /* the job's memory group was read at least once */
	uint64_t own_oom;    /* the job's own group's counter (v2: its subtree's) */
	uint64_t below_oom;  /* v1: the kills its own counter does not hold */
	uint64_t carried;    /* of those, the ones groups gone before this process saw */
	uint64_t mem_peak;   /* the job's group's high-water mark since it was made */
	int64_t mem_limit;   /* -1: none */
	uint64_t limit_hits; /* v1 memory.failcnt, v2 memory.events "max" */
};

/* Read the job's group and the groups below it now (see above). */
void rt_cgparts_read(struct rt_cgparts *p, const struct rt_cgjob *j);
/* What p holds, freed (the groups seen forgotten). */
void rt_cgparts_free(struct rt_cgparts *p);

/* An inotify descriptor (non-blocking) that becomes readable when a
 * group is made right below the job's (memory hierarchy on v1), or -1. */
int rt_cgparts_watch(const struct rt_cgjob *j);
/* The same watch in the inotify instance ino (one for many jobs: a
 * user's instances are few, 128 by default): its watch descriptor, -1. */
int rt_cgparts_watch_in(int ino, const struct rt_cgjob *j);
/* Drain it: 1 when a group was made since the last call, else 0. */
int rt_cgparts_made(int fd);

/* A run gone on with: below was its below_oom when last said; what the
 * groups still there do not hold now is carried (read first). */
void rt_cgparts_carry(struct rt_cgparts *p, uint64_t below);

/* Every OOM kill counted in the job's subtree so far. */
uint64_t rt_cgparts_oom(const struct rt_cgparts *p);

#endif
