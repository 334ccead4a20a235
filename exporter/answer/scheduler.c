/*
 * scheduler.c - the recommendation in the terms of what ran the job, read
 * off the run's metadata: a Metaflow step's `@resources(...)` line
 * (orchestrator "metaflow", which @track_resources records), a Slurm job's
 * sbatch options (the allocation's slurm_job_id), a Kubernetes pod's
 * container resources (a run of a pod's cgroup: cgroup.scheduler
 * "kubernetes"). The numbers are rt_recommend's; this only says them the
 * scheduler's way.
 */
#include <stdio.h>
#include <string.h>

#include "answer/answer.h"

/* Metaflow's @resources: cpu in cores, memory in MiB (MB in its docs:
 * what AWS Batch and Kubernetes are asked for), gpu a count. */
static int metaflow_line(const struct rt_recommendation *r, char *buf, size_t cap)
{
	int n = snprintf(buf, cap, "@resources(cpu=%ld, memory=%ld%s", r->cpu, r->memory_mib,
	                 r->gpu ? ", gpu=" : "");
	if (r->gpu && n > 0 && (size_t)n < cap)
		n += snprintf(buf + n, cap - (size_t)n, "%ld", r->gpu);
	if (n > 0 && (size_t)n < cap)
		n += snprintf(buf + n, cap - (size_t)n, ")");
	return n;
}

/* Slurm's sbatch options: --cpus-per-task, --mem (whole GiB as G, else M:
 * Slurm reads both in 1024s), --gres=gpu:N when GPUs were used, and
 * --time when Slurm said how the job ended (rt-export learn): its elapsed
 * x 1.2 in whole minutes, HH:MM:SS (Slurm takes hours past 24 there); a
 * job stopped by its limit, at least the limit x 1.5. */
static int slurm_line(const cJSON *meta, const struct rt_recommendation *r, char *buf, size_t cap)
{
	long m = r->memory_mib;
	int n = m % 1024 ? snprintf(buf, cap, "--cpus-per-task=%ld --mem=%ldM", r->cpu, m)
	                 : snprintf(buf, cap, "--cpus-per-task=%ld --mem=%ldG", r->cpu, m / 1024);
	if (r->gpu && n > 0 && (size_t)n < cap)
		n += snprintf(buf + n, cap - (size_t)n, " --gres=gpu:%ld", r->gpu);
	struct rt_slurm_end e;
	int at_least = 0;
	long t = rt_slurm_end(meta, &e) ? rt_slurm_time_minutes(&e, 0, &at_least) : 0;
	if (t > 0 && n > 0 && (size_t)n < cap) /* */
		n += snprintf(buf + n, cap - (size_t)n, " --time=%ld:%02ld:00", t / 60, t % 60);
	return n;
}

/* A container's resources as YAML's flow form, to paste into its spec:
 * the CPU requested, no CPU limit (a limit throttles a job's bursts; the
 * request is what the scheduler places by), memory requested and limited
 * alike (Mi, 1024s: the recommendation has its headroom), GPUs as
 * nvidia.com/gpu limits. */
static int kubernetes_line(const struct rt_recommendation *r, char *buf, size_t cap)
{
	int n = snprintf(
	    buf, cap, "resources: {requests: {cpu: \"%ld\", memory: %ldMi}, limits: {memory: %ldMi",
	    r->cpu, r->memory_mib, r->memory_mib);
	if (r->gpu && n > 0 && (size_t)n < cap)
		n += snprintf(buf + n, cap - (size_t)n, ", nvidia.com/gpu: %ld", r->gpu);
	if (n > 0 && (size_t)n < cap)
		n += snprintf(buf + n, cap - (size_t)n, "}}");
	return n;
}

size_t rt_scheduler_line(const cJSON *meta, const struct rt_recommendation *r, char *buf,
                         size_t cap, const char **name)
{
	const char *orch = rt_meta_str(meta, "metadata", "orchestrator");
	const char *slurm = rt_meta_str(meta, "allocation", "slurm_job_id");
	const char *sched = rt_meta_str(meta, "cgroup", "scheduler");
	int n = 0;
	*name = NULL;
	if (!cap)
		return 0;
	buf[0] = '\0';
	if (orch && !strcmp(orch, "metaflow")) {
		*name = "metaflow";
		n = metaflow_line(r, buf, cap);
	} else if (slurm && *slurm) {
		*name = "slurm";
		n = slurm_line(meta, r, buf, cap);
	} else if (sched && !strcmp(sched, "kubernetes")) {
		*name = "kubernetes";
		n = kubernetes_line(r, buf, cap);
	}
	if (n <= 0 || (size_t)n >= cap) {
		*name = NULL;
		buf[0] = '\0';
		return 0;
	}
	return (size_t)n;
}

const char *rt_scheduler_label(const char *name)
{
	return !strcmp(name, "slurm")        ? "as sbatch options"
	       : !strcmp(name, "kubernetes") ? "as pod resources"
	                                     : "as @resources";
}

size_t rt_idle_text(const cJSON *meta, char *buf, size_t cap)
{
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(meta, "cgroup");
	const char *path = rt_meta_str(meta, "cgroup", "path");
	if (!cap || !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "idle")) || !path)
		return 0;
	int n = snprintf(buf, cap,
	                 "no process ran in its cgroup while it was recorded: what it was given "
	                 "went unused");
	return n > 0 && (size_t)n < cap ? (size_t)n : 0;
}
