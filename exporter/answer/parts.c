/*
 * parts.c - a job's parts as its scheduler names them, read off the run's
 * metadata (cgroup.parts, written at the run's end by the node mode and
 * --cgroup): a Slurm job's steps (batch, extern, 0, 1...), a pod's
 * containers (by the name its runtime's bundle gave, else by id). Each part's figures are its own group's
 * counters: the CPU charged to it and its high-water mark (page cache
 * included, as the kernel counts it against its limit). The job's totals
 * stay the job's.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "answer/answer.h"
#include "rt/fmt.h"

/* A part's name as its scheduler says it: "step_batch" -> "batch"; a
 * container's scope "cri-containerd-<id>.scope" or "docker-<id>.scope"
 * -> its id's first 12 characters (as `crictl ps` shows them). */
static void part_name(const char *dir, const char *sched, char *out, size_t cap)
{
	static const char *const runtimes[] = {"cri-containerd-", "crio-", "docker-", "libpod-",
	                                       NULL};
	if (!strncmp(dir, "step_", 5)) {
		rt_copy_text(out, cap, dir + 5);
		return;
	}
	if (!sched || strcmp(sched, "kubernetes") != 0) {
		rt_copy_text(out, cap, dir);
		return;
	}
	for (int i = 0; runtimes[i]; i++)
		if (!strncmp(dir, runtimes[i], strlen(runtimes[i])))
			dir += strlen(runtimes[i]);
	size_t n = strcspn(dir, ".");
	snprintf(out, cap, "%.*s", (int)(n > 12 ? 12 : n), dir);
}

size_t rt_job_parts(const cJSON *meta, struct rt_job_part *out, size_t max)
{
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(meta, "cgroup");
	const cJSON *parts = cJSON_GetObjectItemCaseSensitive(c, "parts"), *p;
	const char *sched = rt_meta_str(meta, "cgroup", "scheduler");
	size_t n = 0;
	int named = 0;
	if (!cJSON_IsArray(parts))
		return 0;
	cJSON_ArrayForEach(p, parts)
	{
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(p, "name");
		if (n >= max || !cJSON_IsString(name))
			continue;
		struct rt_job_part *x = &out[n++];
		const cJSON *ctr = cJSON_GetObjectItemCaseSensitive(p, "container");
		x->own_resources = cJSON_IsString(ctr) && ctr->valuestring[0];
		named |= x->own_resources;
		if (x->own_resources) /* (its runtime's name) */
			rt_copy_text(x->name, sizeof(x->name), ctr->valuestring);
		else
			part_name(name->valuestring, sched, x->name, sizeof(x->name));
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(p, "cpu_secs");
		x->cpu_secs = cJSON_IsNumber(v) && v->valuedouble >= 0 ? v->valuedouble : -1;
		v = cJSON_GetObjectItemCaseSensitive(p, "mem_peak_bytes");
		x->peak_mib =
		    cJSON_IsNumber(v) && v->valuedouble > 0 ? v->valuedouble / 1048576 : 0;
		v = cJSON_GetObjectItemCaseSensitive(p, "mem_limit_bytes");
		x->limit_mib =
		    cJSON_IsNumber(v) && v->valuedouble > 0 ? v->valuedouble / 1048576 : 0;
		v = cJSON_GetObjectItemCaseSensitive(p, "oom_kills");
		x->oom_kills = cJSON_IsNumber(v) && v->valuedouble > 0 ? v->valuedouble : 0;
	}
	for (size_t i = 0; i < n; i++) /* (runs before the runtime's names: every part) */
		out[i].own_resources =
		    named ? out[i].own_resources && strcmp(out[i].name, "POD") : 1;
	return n;
}

const char *rt_job_parts_label(const cJSON *meta)
{
	const char *sched = rt_meta_str(meta, "cgroup", "scheduler");
	return sched && !strcmp(sched, "slurm")        ? "steps"
	       : sched && !strcmp(sched, "kubernetes") ? "containers"
	                                               : "parts";
}

size_t rt_job_part_text(const struct rt_job_part *p, char *buf, size_t cap)
{
	char cpu[48] = "CPU unknown", limit[48] = "", oom[48] = "";
	if (p->cpu_secs >= 0)
		snprintf(cpu, sizeof(cpu), "CPU %.2f s", p->cpu_secs);
	if (p->limit_mib > 0)
		snprintf(limit, sizeof(limit), " of %.0f MiB", p->limit_mib);
	if (p->oom_kills > 0)
		snprintf(oom, sizeof(oom), "; OOM-killed (%.0f kill%s)", p->oom_kills,
		         p->oom_kills == 1 ? "" : "s");
	int n =
	    snprintf(buf, cap, "%s: %s, peak %.0f MiB%s%s", p->name, cpu, p->peak_mib, limit, oom);
	return n > 0 && (size_t)n < cap ? (size_t)n : 0;
}

/* A container's CPU request: its mean over the run in millicores, up to
 * the next 100m (at least 100m: a request of 0 is none). */
static long container_millicores(const struct rt_job_part *p, double duration)
{
	double mean = p->cpu_secs > 0 && duration > 0 ? p->cpu_secs / duration : 0;
	long m = (long)ceil(mean * 10 - 1e-9) * 100;
	return m < 100 ? 100 : m;
}

/* A container's memory: its peak x 1.2 on the usual steps; killed in its
 * group, at least its limit x 1.2 (its need was not seen). */
static long container_memory(const struct rt_job_part *p)
{
	double base = p->oom_kills > 0 && p->limit_mib > 0 ? p->limit_mib : p->peak_mib;
	long m = rt_round_memory(base * 1.2);
	return p->oom_kills > 0 && m <= (long)ceil(base) ? rt_round_memory(base + 1) : m;
}

size_t rt_container_resources(const struct rt_job_part *p, double duration, char *buf, size_t cap)
{
	if (!p->own_resources)
		return 0;
	long mem = container_memory(p);
	int n =
	    snprintf(buf, cap, "{requests: {cpu: %ldm, memory: %ldMi}, limits: {memory: %ldMi}}",
	             container_millicores(p, duration), mem, mem);
	return n > 0 && (size_t)n < cap ? (size_t)n : 0;
}

size_t rt_container_line(const struct rt_job_part *p, double duration, char *buf, size_t cap)
{
	char block[200];
	if (!rt_container_resources(p, duration, block, sizeof(block)))
		return 0;
	int n = snprintf(buf, cap, "%s: resources: %s%s", p->name, block,
	                 p->oom_kills > 0 ? " (OOM-killed: at least)" : "");
	return n > 0 && (size_t)n < cap ? (size_t)n : 0;
}

cJSON *rt_json_parts(const cJSON *meta, double duration)
{
	struct rt_job_part p[16];
	size_t n = rt_job_parts(meta, p, 16);
	const char *sched = rt_meta_str(meta, "cgroup", "scheduler");
	int pod = sched && !strcmp(sched, "kubernetes");
	cJSON *a = cJSON_CreateArray();
	for (size_t i = 0; i < n && a; i++) {
		cJSON *o = cJSON_CreateObject();
		char res[256];
		cJSON_AddStringToObject(o, "name", p[i].name);
		if (p[i].cpu_secs >= 0)
			cJSON_AddNumberToObject(o, "cpu_secs", p[i].cpu_secs);
		else
			cJSON_AddNullToObject(o, "cpu_secs");
		cJSON_AddNumberToObject(o, "memory_peak_mib", p[i].peak_mib);
		if (p[i].limit_mib > 0)
			cJSON_AddNumberToObject(o, "memory_limit_mib", p[i].limit_mib);
		else
			cJSON_AddNullToObject(o, "memory_limit_mib");
		cJSON_AddNumberToObject(o, "oom_kills", p[i].oom_kills);
		if (pod && rt_container_resources(&p[i], duration, res, sizeof(res)))
			cJSON_AddStringToObject(o, "resources", res);
		cJSON_AddItemToArray(a, o);
	}
	return a;
}
