/*
 * branches.c - the tasks of one step in one run of an orchestrator (a
 * Metaflow foreach's branches: the same job, stage and external run id).
 * Each ran on a server of its own, so the step needs what its largest
 * branch needed, resource by resource: never a mean of them, which would
 * leave the largest branch short.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "answer/answer.h"

/* Take x's figure when it is larger; *by then names x's run. */
static void take_larger(long *have, long x, uint64_t *by, uint64_t run)
{
	if (x > *have) {
		*have = x;
		*by = run;
	}
}

void rt_recommend_largest(const struct rt_answer *runs, size_t n, struct rt_recommendation *out,
                          struct rt_largest *by)
{
	memset(out, 0, sizeof(*out));
	memset(by, 0, sizeof(*by));
	out->from_system = 1;
	for (size_t i = 0; i < n; i++) {
		if (!runs[i].st.lines)
			continue; /* ended before its first sample: no say */
		struct rt_recommendation r;
		rt_recommend(&runs[i].st, &r);
		uint64_t id = runs[i].ri.id;
		by->measured++;
		by->running += runs[i].partial;
		out->from_system &= r.from_system;
		uint64_t cpu_by = by->cpu_run, mem_by = by->memory_run;
		take_larger(&out->cpu, r.cpu, &by->cpu_run, id);
		if (by->cpu_run != cpu_by)
			memcpy(out->why_cpu, r.why_cpu, sizeof(out->why_cpu));
		take_larger(&out->cpu_p95, r.cpu_p95, &cpu_by, id);
		take_larger(&out->memory_mib, r.memory_mib, &by->memory_run, id);
		if (by->memory_run != mem_by) {
			out->memory_at_least = r.memory_at_least;
			memcpy(out->why_mem, r.why_mem, sizeof(out->why_mem));
			memcpy(out->mem_note, r.mem_note, sizeof(out->mem_note));
		}
		uint64_t other = 0;
		take_larger(&out->gpu, r.gpu, &other, id);
		take_larger(&out->vram_mib, r.vram_mib, &other, id);
	}
	if (!by->measured)
		out->from_system = 0;
	snprintf(out->why, sizeof(out->why), "%s%.140s%s%s%.140s", out->why_cpu[0] ? "CPU: " : "",
	         out->why_cpu, out->why_cpu[0] && out->why_mem[0] ? "; " : "",
	         out->why_mem[0] ? "memory: " : "", out->why_mem);
}

int rt_answer_branches(struct rt_store *s, const struct rt_answer *a, struct rt_answer **out,
                       size_t *n)
{
	*out = NULL;
	*n = 0;
	struct rt_answer_opts o = {0};
	o.job = a->ri.job_name;
	o.stage = rt_meta_str(a->meta, "metadata", "stage_name");
	o.ext_run = rt_meta_str(a->meta, "metadata", "external_run_id");
	if (!o.job || !o.stage || !o.ext_run)
		return 0;
	rt_answer_job_quiet(s, &o, out, n); /* (none: *n stays 0) */
	return 0;
}
