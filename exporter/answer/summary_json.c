/*
 * summary_json.c - the summary's and the recommendation's parts as JSON: the run,
 * the stats, the recommendation, the findings, the allocation.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "answer/answer.h"
#include "answer/summary_int.h"
#include "rt/common.h"
#include "rt/runmeta.h"
#include "rt/sysroot.h"

/* ---- JSON --------------------------------------------------------------- */
void ans_add_num_or_null(cJSON *o, const char *k, double v)
{
	if (isfinite(v))
		cJSON_AddNumberToObject(o, k, v);
	else
		cJSON_AddNullToObject(o, k);
}

void ans_add_str_or_null(cJSON *o, const char *k, const char *v)
{
	if (v && *v)
		cJSON_AddStringToObject(o, k, v);
	else
		cJSON_AddNullToObject(o, k);
}

cJSON *rt_json_run(const struct rt_answer *a)
{
	cJSON *o = cJSON_CreateObject();
	char t[32];
	cJSON_AddNumberToObject(o, "id", (double)a->ri.id);
	ans_add_str_or_null(o, "job_name", a->ri.job_name);
	cJSON_AddStringToObject(o, "status", a->ri.status);
	if (a->has_exit_code)
		cJSON_AddNumberToObject(o, "exit_code", a->exit_code);
	else
		cJSON_AddNullToObject(o, "exit_code");
	cJSON_AddNumberToObject(o, "duration_secs", a->st.duration);
	cJSON_AddNumberToObject(o, "job_duration_secs",
	                        a->st.has_proc ? a->st.job_duration : a->st.duration);
	cJSON_AddNumberToObject(o, "samples", (double)a->st.lines);
	const cJSON *sk =
	    a->meta ? cJSON_GetObjectItemCaseSensitive(a->meta, "samples_skipped") : NULL;
	cJSON_AddNumberToObject(o, "samples_skipped", cJSON_IsNumber(sk) ? sk->valuedouble : 0);
	cJSON_AddNumberToObject(o, "interval_secs", a->ri.interval);
	cJSON_AddBoolToObject(o, "partial", a->partial);
	rt_fmt_iso8601(t, sizeof(t), a->ri.start_ns);
	ans_add_str_or_null(o, "start", a->ri.start_ns ? t : NULL);
	rt_fmt_iso8601(t, sizeof(t), a->ri.end_ns);
	ans_add_str_or_null(o, "end", a->ri.end_ns ? t : NULL);
	return o;
}

cJSON *rt_json_stats(const struct rt_runstats *st)
{
	cJSON *o = cJSON_CreateObject();
	for (unsigned c = 0; c < RT_CSV_COLUMNS; c++) {
		const struct rt_colstat *cs = &st->col[c];
		cJSON *x = cJSON_AddObjectToObject(o, rt_csv_column_name(c));
		double nan = NAN;
		ans_add_num_or_null(x, "mean", cs->present ? cs->mean : nan);
		ans_add_num_or_null(x, "max", cs->present ? cs->max : nan);
		ans_add_num_or_null(x, "p95", cs->present ? cs->p95 : nan);
		ans_add_num_or_null(x, "sum", cs->present ? cs->sum : nan);
	}
	return o;
}

cJSON *rt_json_recommendation(const struct rt_recommendation *r)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "cpu", (double)r->cpu);
	cJSON_AddNumberToObject(o, "cpu_at_p95", (double)r->cpu_p95);
	cJSON_AddNumberToObject(o, "memory_mib", (double)r->memory_mib);
	cJSON_AddBoolToObject(o, "memory_at_least", r->memory_at_least);
	cJSON_AddNumberToObject(o, "gpu", (double)r->gpu);
	cJSON_AddNumberToObject(o, "vram_mib", (double)r->vram_mib);
	cJSON_AddStringToObject(o, "based_on", r->from_system ? "system" : "process");
	if (r->why[0])
		cJSON_AddStringToObject(o, "raised_because", r->why);
	else
		cJSON_AddNullToObject(o, "raised_because");
	if (r->mem_note[0]) /* only when there is one: other answers unchanged */
		cJSON_AddStringToObject(o, "memory_note", r->mem_note);
	return o;
}

/* "findings": what held the job back (null where unknown). */
cJSON *rt_json_findings(const struct rt_runstats *st)
{
	struct rt_findings x;
	rt_findings(st, &x);
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "oom_kills", x.oom_kills);
	cJSON_AddBoolToObject(o, "oom_in_job_cgroup", x.oom_in_cgroup);
	cJSON_AddNumberToObject(o, "host_oom_kills", x.host_oom_kills);
	if (x.oom_at >= 0)
		cJSON_AddNumberToObject(o, "oom_at_secs", x.oom_at);
	else
		cJSON_AddNullToObject(o, "oom_at_secs");
#define NUM_OR_NULL(k, v, ok)                                                                      \
	do {                                                                                       \
		if (ok)                                                                            \
			cJSON_AddNumberToObject(o, k, v);                                          \
		else                                                                               \
			cJSON_AddNullToObject(o, k);                                               \
	} while (0)
	NUM_OR_NULL("cgroup_memory_limit_mib", x.mem_limit_mib, x.mem_limit_mib > 0);
	NUM_OR_NULL("cgroup_memory_peak_mib", x.mem_used_max_mib, x.mem_used_max_mib > 0);
	NUM_OR_NULL("cgroup_memory_limit_hits", x.limit_hits, x.limit_hits >= 0);
	NUM_OR_NULL("cpu_throttled_pct", x.throttled_pct, x.throttled_pct >= 0);
	NUM_OR_NULL("cgroup_cpu_limit_cores", x.cpu_limit, x.cpu_limit > 0);
	NUM_OR_NULL("cpu_pressure_pct", x.psi_cpu, x.psi_cpu >= 0);
	NUM_OR_NULL("memory_pressure_pct", x.psi_mem, x.psi_mem >= 0);
	NUM_OR_NULL("io_pressure_pct", x.psi_io, x.psi_io >= 0);
	NUM_OR_NULL("disk_read_latency_ms", x.disk_rlat, x.disk_rlat >= 0);
	NUM_OR_NULL("disk_write_latency_ms", x.disk_wlat, x.disk_wlat >= 0);
	NUM_OR_NULL("gpus_throttled", x.gpus_throttled, x.gpus_throttled >= 0);
#undef NUM_OR_NULL
	return o;
}

void ans_add_allocation(cJSON *o, const struct rt_runstats *st)
{
	char why[200];
	ans_add_str_or_null(o, "allocation",
	                    rt_allocation_name(rt_stats_allocation_why(st, why, sizeof(why))));
	ans_add_str_or_null(o, "allocation_because", why[0] ? why : NULL);
}
