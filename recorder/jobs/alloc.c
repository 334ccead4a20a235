/*
 * alloc.c - what the job was given (alloc.h), looked at when a run starts:
 * the recorder's own cgroup (a wrapped job starts in it), its CPU
 * affinity, Slurm's variables, the GPUs the job may see, and the request.
 * Per resource: the request wins; else the cgroup's limit (what the kernel
 * enforces; where Slurm says otherwise, the note says which was used);
 * else Slurm's allocation; else (GPUs) CUDA_/ROCR_VISIBLE_DEVICES; else
 * the host.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc_detect.h"
#include "cgjob.h"
#include "procfs.h"
#include "rt/sysroot.h"
#include "rt/fmt.h"

/* A variable of the job's environment: a member's (a job known by its
 * cgroup), else this process's own (a wrapped job inherits it). */
static const char *job_env(const struct rt_alloc_job *job, const char *name)
{
	return job ? rt_env_lookup(job->env, job->envlen, name) : getenv(name);
}

/* File `file` of the cgroup at `path` under the mount `root`, read whole. */
static ssize_t cg_read(const char *root, const char *path, const char *file, char *buf, size_t cap)
{
	char rel[1400];
	snprintf(rel, sizeof(rel), "fs/cgroup%s%s/%s", root, strcmp(path, "/") ? path : "", file);
	return rt_read_small(RT_SYS, rel, buf, cap);
}

static int64_t cg_limit(const char *const roots[], const char *path, const char *file)
{
	char buf[64];
	for (int i = 0; roots[i]; i++) {
		ssize_t n = cg_read(roots[i], path, file, buf, sizeof(buf));
		int64_t v;
		if (n > 0 && rt_parse_max_or_u64(buf, (size_t)n, &v) == 0)
			return v;
	}
	return -1;
}

/*
 * GPUs the NVIDIA container runtime gave (NVIDIA_VISIBLE_DEVICES: "all",
 * "none" or "void", or a comma list of indexes and UUIDs; in the
 * container NVML sees those alone). 0 when it is not set.
 */
static int container_gpus(const struct rt_alloc_job *job, unsigned host_gpus, unsigned *gpus)
{
	const char *s = job_env(job, "NVIDIA_VISIBLE_DEVICES");
	if (!s)
		return 0;
	if (!strcmp(s, "all")) {
		*gpus = host_gpus;
		return 1;
	}
	unsigned n = 0;
	if (*s && strcmp(s, "none") && strcmp(s, "void"))
		for (n = 1; *s; s++)
			n += *s == ',';
	*gpus = host_gpus && n > host_gpus ? host_gpus : n;
	return 1;
}

/*
 * GPUs a CUDA_VISIBLE_DEVICES (or ROCR_VISIBLE_DEVICES) value leaves
 * visible, as CUDA reads it: a comma list of indexes, GPU-<uuid> or
 * MIG-<id>, read up to the first entry that is none of those or names no
 * device (-1, an index past the host's GPUs, NoDevFiles): that one and
 * every one after it hide. An empty value hides every GPU.
 */
static unsigned visible_count(const char *s, unsigned host_gpus)
{
	unsigned n = 0;
	while (s && *s) {
		while (*s == ' ')
			s++;
		size_t len = strcspn(s, ",");
		size_t digits = strspn(s, "0123456789");
		size_t t = len;
		while (t && s[t - 1] == ' ')
			t--;
		int index = digits && digits == t;
		if (index) {
			char *e;
			unsigned long v = strtoul(s, &e, 10);
			if (host_gpus && v >= host_gpus)
				break;
		} else if (!((t > 4 && !strncmp(s, "GPU-", 4)) ||
		             (t > 4 && !strncmp(s, "MIG-", 4)))) {
			break;
		}
		n++;
		s += len;
		if (*s == ',')
			s++;
	}
	return n;
}

/* Items of a comma list ("0,1,3"); "" (none) is 0, "NoDevFiles" too. */
static unsigned list_count(const char *s)
{
	if (!s || !*s || !strcmp(s, "NoDevFiles") || !strcmp(s, "none"))
		return 0;
	unsigned n = 1;
	for (; *s; s++)
		n += *s == ',';
	return n;
}

/*
 * GPUs a job's group may open, by the kernel's word: v1's devices.list
 * ("a *:* rwm" all; else each "c 195:N" an NVIDIA GPU, /dev/nvidiaN, and
 * each "c 226:N" with N >= 128 a render node, /dev/dri/renderD*), at most
 * the host's. v2's device rules are BPF programs, not readable: the host's.
 */
static unsigned group_gpus(const char *path, unsigned host_gpus)
{
	char buf[8192];
	ssize_t n = path ? cg_read("/devices", path, "devices.list", buf, sizeof(buf)) : -1;
	if (n <= 0 || strstr(buf, "a *:*"))
		return host_gpus;
	unsigned g = 0;
	for (char *l = buf; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		unsigned maj, min;
		if (sscanf(l, "c %u:%u", &maj, &min) != 2)
			continue;
		g += (maj == 195 && min < 255) || (maj == 226 && min >= 128);
	}
	return g < host_gpus ? g : host_gpus;
}

/* cgroup v2's limits: cpu.max, memory.max and .high, pids.max. */
static void cgroup_v2_limits(struct rt_alloc *a, const struct rt_cgroup_paths *cp)
{
	static const char *const v2[] = {"", "/unified", NULL};
	char q[128];
	for (int i = 0; v2[i]; i++) {
		ssize_t n = cg_read(v2[i], cp->v2, "cpu.max", q, sizeof(q));
		int64_t quota;
		uint64_t period;
		if (n > 0 && rt_parse_cg_max(q, (size_t)n, &quota, &period) == 0) {
			if (quota > 0 && period)
				a->cgroup_cpu = (double)quota / (double)period;
			break;
		}
	}
	const char *one[] = {"", NULL}, *un[] = {"/unified", NULL};
	for (int r = 0; r < 2 && a->cgroup_mem < 0; r++) {
		a->cgroup_mem = cg_limit(r ? un : one, cp->v2, "memory.max");
		a->cgroup_mem_high = cg_limit(r ? un : one, cp->v2, "memory.high");
		a->pids_max = cg_limit(r ? un : one, cp->v2, "pids.max");
	}
}

/* cgroup v1's: the cpu hierarchy's quota, memory's and pids' limits. */
static void cgroup_v1_limits(struct rt_alloc *a, const struct rt_cgroup_paths *cp)
{
	static const char *const cpu1[] = {"/cpu", "/cpu,cpuacct", "/cpuacct,cpu", NULL};
	static const char *const mem1[] = {"/memory", NULL};
	static const char *const pids1[] = {"/pids", NULL};
	char q[128], per[64];
	for (int i = 0; cp->cpu[0] && cpu1[i]; i++) {
		ssize_t n = cg_read(cpu1[i], cp->cpu, "cpu.cfs_quota_us", q, sizeof(q));
		ssize_t m = cg_read(cpu1[i], cp->cpu, "cpu.cfs_period_us", per, sizeof(per));
		if (n > 0 && m > 0) {
			long long qv = strtoll(q, NULL, 10);
			unsigned long long pv = strtoull(per, NULL, 10);
			if (qv > 0 && pv)
				a->cgroup_cpu = (double)qv / (double)pv;
			break;
		}
	}
	if (cp->memory[0]) {
		a->cgroup_mem = cg_limit(mem1, cp->memory, "memory.limit_in_bytes");
		/* v1's "no limit" is a page-rounded INT64_MAX */
		if (a->cgroup_mem >= (int64_t)1 << 60)
			a->cgroup_mem = -1;
	}
	if (cp->pids[0])
		a->pids_max = cg_limit(pids1, cp->pids, "pids.max");
}

/* The cgroup's limits: v2, else v1's cpu and memory hierarchies; a memory
 * limit not below the host's is none. */
static void cgroup_limits(struct rt_alloc *a, uint64_t host_mem, const struct rt_alloc_job *job)
{
	char buf[4096];
	struct rt_cgroup_paths cp;
	if (job) {
		cp = job->cp;
	} else {
		ssize_t len = rt_read_small(RT_PROC, "self/cgroup", buf, sizeof(buf));
		if (len <= 0)
			return;
		rt_parse_proc_cgroup(buf, (size_t)len, &cp);
	}
	if (cp.v2[0] && !cp.memory[0] && !cp.cpu[0])
		cgroup_v2_limits(a, &cp);
	else
		cgroup_v1_limits(a, &cp);
	if (a->cgroup_mem >= 0 && host_mem && (uint64_t)a->cgroup_mem >= host_mem)
		a->cgroup_mem = -1; /* not below the host: no limit that matters */
	if (a->cgroup_mem_high >= 0 && host_mem && (uint64_t)a->cgroup_mem_high >= host_mem)
		a->cgroup_mem_high = -1;
}

/* What Slurm allocated (0, or -1 GPUs, where it says nothing). */
struct slurm {
	double cpu;
	uint64_t mem;
	int gpu;
};

static void slurm_alloc(struct rt_alloc *a, struct slurm *sl, const struct rt_alloc_job *job)
{
	const char *sj = job_env(job, "SLURM_JOB_ID");
	sl->cpu = 0;
	sl->mem = 0;
	sl->gpu = -1;
	if (job && job->slurm_job_id && *job->slurm_job_id)
		sj = job->slurm_job_id; /* the group's own name says it */
	if (!sj || !*sj)
		return;
	if (job && !(job->slurm_job_id && *job->slurm_job_id))
		return; /* a job known by its group: only the group's name says Slurm */
	rt_copy_text(a->slurm_job_id, sizeof(a->slurm_job_id), sj);
	const char *c = job_env(job, "SLURM_CPUS_PER_TASK");
	if (!c || !*c)
		c = job_env(job, "SLURM_CPUS_ON_NODE");
	if (c && atof(c) > 0)
		sl->cpu = atof(c);
	const char *mn = job_env(job, "SLURM_MEM_PER_NODE"),
	           *mc = job_env(job, "SLURM_MEM_PER_CPU");
	if (mn && atof(mn) > 0) /* MB as Slurm counts them: MiB */
		sl->mem = (uint64_t)(atof(mn) * 1048576.0);
	else if (mc && atof(mc) > 0 && sl->cpu > 0)
		sl->mem = (uint64_t)(atof(mc) * 1048576.0 * sl->cpu);
	const char *g = job_env(job, "SLURM_JOB_GPUS");
	if (g)
		sl->gpu = (int)list_count(g);
}

static void given_cpu(const struct rt_request *req, unsigned host_cpus, const struct slurm *sl,
                      struct rt_alloc *a)
{
	double cg_cpu = a->cgroup_cpu;
	if (a->cpus_allowed && a->cpus_allowed < host_cpus &&
	    (cg_cpu <= 0 || a->cpus_allowed < cg_cpu))
		cg_cpu = a->cpus_allowed; /* a cpuset narrower than the quota */
	if (req && req->has_cpu) {
		a->cpu = req->cpu;
		snprintf(a->cpu_from, sizeof(a->cpu_from), "request");
	} else if (cg_cpu > 0) {
		a->cpu = cg_cpu;
		snprintf(a->cpu_from, sizeof(a->cpu_from), "cgroup");
	} else if (sl->cpu > 0) {
		a->cpu = sl->cpu;
		snprintf(a->cpu_from, sizeof(a->cpu_from), "slurm");
	} else {
		a->cpu = host_cpus;
		snprintf(a->cpu_from, sizeof(a->cpu_from), "host");
	}
}

static void given_mem(const struct rt_request *req, uint64_t host_mem, const struct slurm *sl,
                      struct rt_alloc *a)
{
	if (req && req->has_mem) {
		a->mem = req->mem;
		snprintf(a->mem_from, sizeof(a->mem_from), "request");
	} else if (a->cgroup_mem >= 0 || a->cgroup_mem_high >= 0) {
		/* memory.max, or memory.high (where reclaim and throttling start)
		 * when it is lower or the only one */
		int64_t m = a->cgroup_mem;
		if (a->cgroup_mem_high >= 0 && (m < 0 || a->cgroup_mem_high < m))
			m = a->cgroup_mem_high;
		a->mem = (uint64_t)m;
		snprintf(a->mem_from, sizeof(a->mem_from), "cgroup");
	} else if (sl->mem) {
		a->mem = sl->mem;
		snprintf(a->mem_from, sizeof(a->mem_from), "slurm");
	} else {
		a->mem = host_mem;
		snprintf(a->mem_from, sizeof(a->mem_from), "host");
	}
}

static void given_gpu(const struct rt_request *req, unsigned host_gpus, const struct slurm *sl,
                      const struct rt_alloc_job *job, struct rt_alloc *a)
{
	const char *vis = job_env(job, "CUDA_VISIBLE_DEVICES");
	if (!vis)
		vis = job_env(job, "ROCR_VISIBLE_DEVICES");
	if (req && req->has_gpu) {
		a->gpu = req->gpu;
		snprintf(a->gpu_from, sizeof(a->gpu_from), "request");
	} else if (vis) {
		unsigned n = visible_count(vis, host_gpus);
		a->gpu = n < host_gpus || !host_gpus ? n : host_gpus;
		snprintf(a->gpu_from, sizeof(a->gpu_from), "visible");
	} else if (container_gpus(job, host_gpus, &a->gpu)) {
		snprintf(a->gpu_from, sizeof(a->gpu_from), "container");
	} else if (sl->gpu >= 0) {
		a->gpu = (unsigned)sl->gpu;
		snprintf(a->gpu_from, sizeof(a->gpu_from), "slurm");
	} else {
		a->gpu = host_gpus;
		snprintf(a->gpu_from, sizeof(a->gpu_from), "host");
	}
}

/* Slurm and the cgroup disagree: the cgroup is what the kernel enforced. */
static void note_disagreement(const struct slurm *sl, struct rt_alloc *a)
{
	size_t o = 0;
	if (sl->cpu > 0 && !strcmp(a->cpu_from, "cgroup") && sl->cpu != a->cpu)
		o += (size_t)snprintf(a->note + o, sizeof(a->note) - o,
		                      "Slurm allocated %g CPUs, the cgroup allows %g: the cgroup's "
		                      "limit is used",
		                      sl->cpu, a->cpu);
	if (sl->mem && !strcmp(a->mem_from, "cgroup") && sl->mem != a->mem && o < sizeof(a->note))
		snprintf(
		    a->note + o, sizeof(a->note) - o,
		    "%sSlurm allocated %.0f MiB, the cgroup allows %.0f MiB: the cgroup's limit "
		    "is used",
		    o ? "; " : "", (double)sl->mem / 1048576.0, (double)a->mem / 1048576.0);
}

/* A job known by its group: what its environment alone says is its claim
 * (kept, and said in the note), and what it was given is the kernel's
 * word (the group's limits, its cpuset, the GPUs it may open). */
static void job_claims(const struct rt_alloc_job *job, unsigned host_gpus, struct slurm *sl,
                       struct rt_alloc *a)
{
	const char *vis = job_env(job, "CUDA_VISIBLE_DEVICES");
	if (!vis)
		vis = job_env(job, "ROCR_VISIBLE_DEVICES");
	a->claim_cpu = sl->cpu;
	a->claim_mem = sl->mem;
	a->claim_gpu = vis ? (int)visible_count(vis, 0) : sl->gpu;
	*sl = (struct slurm){0, 0, -1}; /* never what it was given */
	a->gpu = group_gpus(job->path, host_gpus);
	snprintf(a->gpu_from, sizeof(a->gpu_from), a->gpu < host_gpus ? "cgroup" : "host");
}

/* The claims that differ from what the kernel gave, said in the note. */
static void note_claims(struct rt_alloc *a)
{
	char c[3][48] = {"", "", ""};
	if (a->claim_cpu > 0 && a->claim_cpu != a->cpu)
		snprintf(c[0], sizeof(c[0]), "%g CPUs", a->claim_cpu);
	if (a->claim_mem && a->claim_mem != a->mem)
		snprintf(c[1], sizeof(c[1]), "%s%.0f MiB", c[0][0] ? ", " : "",
		         (double)a->claim_mem / 1048576.0);
	if (a->claim_gpu >= 0 && (unsigned)a->claim_gpu != a->gpu)
		snprintf(c[2], sizeof(c[2]), "%s%d GPUs", c[0][0] || c[1][0] ? ", " : "",
		         a->claim_gpu);
	if (c[0][0] || c[1][0] || c[2][0])
		snprintf(a->note, sizeof(a->note),
		         "its environment claims %s%s%s: a claim, not what the kernel gave it "
		         "(not used)",
		         c[0], c[1], c[2]);
}

void rt_alloc_detect_job(const struct rt_request *req, unsigned host_cpus, uint64_t host_mem,
                         unsigned host_gpus, const struct rt_alloc_job *job, struct rt_alloc *a)
{
	memset(a, 0, sizeof(*a));
	a->cgroup_mem = a->cgroup_mem_high = a->pids_max = -1;
	cgroup_limits(a, host_mem, job);
	cpu_set_t set;
	pid_t who = job ? job->member : 0;
	if ((!job || who > 0) && sched_getaffinity(who, sizeof(set), &set) == 0)
		a->cpus_allowed = (unsigned)CPU_COUNT(&set);
	if (job && job->cpuset && (!a->cpus_allowed || job->cpuset < a->cpus_allowed))
		a->cpus_allowed = job->cpuset; /* the group's, whichever member was read */
	struct slurm sl;
	a->claim_gpu = -1;
	slurm_alloc(a, &sl, job);
	if (job)
		job_claims(job, host_gpus, &sl, a);
	given_cpu(req, host_cpus, &sl, a);
	given_mem(req, host_mem, &sl, a);
	if (!job || (req && req->has_gpu))
		given_gpu(req, host_gpus, &sl, job, a);
	note_disagreement(&sl, a);
	if (job)
		note_claims(a);
}

void rt_alloc_detect(const struct rt_request *req, unsigned host_cpus, uint64_t host_mem,
                     unsigned host_gpus, struct rt_alloc *a)
{
	rt_alloc_detect_job(req, host_cpus, host_mem, host_gpus, NULL, a);
}
