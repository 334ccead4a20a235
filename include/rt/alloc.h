/*
 * alloc.h - what a job was given: an explicit request (--request,
 * TRACKER_REQUEST), else its cgroup's limits, else Slurm's allocation,
 * else the GPUs it may see, else the host. The recorder detects it at the
 * start of a run and stores it in the run metadata ("allocation");
 * summary and report set the job's use against it.
 */
#ifndef RT_ALLOC_H
#define RT_ALLOC_H

#include <stddef.h>
#include <stdint.h>

/* --request cpu=4,memory=16GiB,gpu=1: any of the three, in any order. */
struct rt_request {
	int has_cpu, has_mem, has_gpu;
	double cpu;   /* cores, > 0 */
	uint64_t mem; /* bytes, > 0 */
	unsigned gpu;
};

/* Parse s; 0, or -1 with one line into err naming the part that is wrong.
 * Memory: a number with B, KiB/Ki/K, MiB/Mi/M, GiB/Gi/G, TiB/Ti/T (1024s,
 * as Slurm and Kubernetes read K, M, G, T), KB, MB, GB, TB (1000s). */
int rt_request_parse(const char *s, struct rt_request *r, char *err, size_t cap);

/* A memory size as above, into *bytes. 0 or -1. */
int rt_parse_size(const char *s, size_t len, uint64_t *bytes);

struct rt_alloc {
	double cpu;        /* cores given */
	uint64_t mem;      /* bytes given */
	unsigned gpu;      /* GPUs given */
	char cpu_from[16]; /* "request", "cgroup", "slurm", "host" */
	char mem_from[16];
	char gpu_from[16]; /* ..., "visible" (CUDA_/ROCR_VISIBLE_DEVICES) */
	/* what was seen beside it (0 / -1: none) */
	unsigned cpus_allowed;   /* CPUs the job may run on (affinity, cpuset) */
	double cgroup_cpu;       /* cpu.max / CFS quota in cores, 0: none */
	int64_t cgroup_mem;      /* memory.max / limit_in_bytes, -1: none */
	int64_t cgroup_mem_high; /* memory.high, -1: none */
	int64_t pids_max;        /* -1: none */
	char slurm_job_id[32];   /* "" when not in Slurm */
	char note[240];          /* where sources disagreed, which was used */
	/* a job known by its cgroup (root's node mode): what only its own
	 * environment says (Slurm's variables, *_VISIBLE_DEVICES) is its
	 * claim, never what it was given: kept as "claims" (0 / -1: none) */
	double claim_cpu;
	uint64_t claim_mem;
	int claim_gpu;
};

/* Whether every resource is the host's (nothing asked, nothing limited). */
static inline int rt_alloc_whole_host(const struct rt_alloc *a)
{
	return a->cpu_from[0] == 'h' && a->mem_from[0] == 'h' && a->gpu_from[0] == 'h';
}

#endif
