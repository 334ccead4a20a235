/* alloc_detect.h - what the job was given, at the start of a run (alloc.c). */
#ifndef RT_ALLOC_DETECT_H
#define RT_ALLOC_DETECT_H

#include <stddef.h>
#include <sys/types.h>

#include "procfs.h"
#include "rt/alloc.h"

/* req may be NULL; host_mem in bytes. This process's cgroup, affinity
 * and environment are the job's (a wrapped job starts with them). */
void rt_alloc_detect(const struct rt_request *req, unsigned host_cpus, uint64_t host_mem,
                     unsigned host_gpus, struct rt_alloc *a);

/* A job known by its cgroup: its group's limits, a member's affinity and
 * environment, the job id its group's name gives. */
struct rt_alloc_job {
	struct rt_cgroup_paths cp;
	pid_t member;    /* one of its processes, 0: none (no affinity) */
	unsigned cpuset; /* CPUs its cpuset gives it, 0: none */
	const char *env; /* a member's environment, NUL-separated; NULL: none */
	size_t envlen;
	const char *slurm_job_id; /* NULL: not a Slurm job's group */
	const char *path;         /* the group, relative to the hierarchies; NULL */
};
void rt_alloc_detect_job(const struct rt_request *req, unsigned host_cpus, uint64_t host_mem,
                         unsigned host_gpus, const struct rt_alloc_job *job, struct rt_alloc *a);

#endif
