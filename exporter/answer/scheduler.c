/*
 * scheduler.c - the recommendation in the terms of what ran the job: a
 * Metaflow step's `@resources(...)` line, read off the run's metadata
 * (orchestrator "metaflow", which the @track_resources decorator records).
 * The numbers are rt_recommend's; this only says them the scheduler's way.
 */
#include <stdio.h>
#include <string.h>

#include "answer/answer.h"

size_t rt_scheduler_line(const cJSON *meta, const struct rt_recommendation *r, char *buf,
                         size_t cap)
{
	const char *orch = rt_meta_str(meta, "metadata", "orchestrator");
	buf[0] = '\0';
	if (!orch || strcmp(orch, "metaflow") || !cap)
		return 0;
	/* Metaflow's @resources: cpu in cores, memory in MiB (MB in its
	 * docs: what AWS Batch and Kubernetes are asked for), gpu a count */
	int n = snprintf(buf, cap, "@resources(cpu=%ld, memory=%ld%s", r->cpu, r->memory_mib,
	                 r->gpu ? ", gpu=" : "");
	if (r->gpu && n > 0 && (size_t)n < cap)
		n += snprintf(buf + n, cap - (size_t)n, "%ld", r->gpu);
	if (n > 0 && (size_t)n < cap)
		n += snprintf(buf + n, cap - (size_t)n, ")");
	return n > 0 && (size_t)n < cap ? (size_t)n : 0;
}
