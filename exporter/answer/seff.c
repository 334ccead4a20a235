/*
 * seff.c - a Slurm job's figures as Slurm's own tools say them: how it
 * ended (the "scheduler" object `rt-export learn` adds to the run), the
 * --time to ask next, and seff's two efficiencies computed seff's way
 * beside rt's: CPU efficiency = TotalCPU / (AllocCPUS x Elapsed), memory
 * efficiency = the peak / ReqMem.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "answer/answer.h"
#include "answer/summary_int.h"
#include "rt/fmt.h"

int rt_slurm_end(const cJSON *meta, struct rt_slurm_end *e)
{
	const cJSON *s = cJSON_GetObjectItemCaseSensitive(meta, "scheduler");
	const char *state = rt_meta_str(meta, "scheduler", "state");
	const char *code = rt_meta_str(meta, "scheduler", "exit_code");
	memset(e, 0, sizeof(*e));
	if (!cJSON_IsObject(s) || !state)
		return 0;
	rt_copy_text(e->state, sizeof(e->state), state);
	rt_copy_text(e->exit_code, sizeof(e->exit_code), code ? code : "");
	e->time_limit = rt_meta_num(meta, "scheduler", "time_limit_secs");
	e->elapsed = rt_meta_num(meta, "scheduler", "elapsed_secs");
	e->cpus = rt_meta_num(meta, "scheduler", "alloc_cpus");
	e->mem_bytes = rt_meta_num(meta, "scheduler", "alloc_memory_bytes");
	e->known = 1;
	return 1;
}

/* "1:02:03", "2-03:04:05" */
static void hms(char *buf, size_t cap, double secs)
{
	long s = (long)ceil(secs), d = s / 86400;
	if (d)
		snprintf(buf, cap, "%ld-%02ld:%02ld:%02ld", d, s / 3600 % 24, s / 60 % 60, s % 60);
	else
		snprintf(buf, cap, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
}

size_t rt_slurm_end_text(const struct rt_slurm_end *e, char *buf, size_t cap)
{
	char ran[32] = "", limit[80] = "(no time limit)";
	if (!e->known)
		return 0;
	if (isfinite(e->elapsed) && e->elapsed >= 0)
		hms(ran, sizeof(ran), e->elapsed);
	if (isfinite(e->time_limit) && e->time_limit > 0) {
		char l[32];
		hms(l, sizeof(l), e->time_limit);
		snprintf(limit, sizeof(limit), "of its %s time limit", l);
	}
	int timeout = !strcmp(e->state, "TIMEOUT");
	int n = snprintf(buf, cap, "%s, exit code %s; ran %s %s%s", e->state,
	                 e->exit_code[0] ? e->exit_code : "unknown", ran[0] ? ran : "?", limit,
	                 timeout ? ": it needed more time than it had (--time: at least 1.5x that)"
	                         : "");
	return n > 0 && (size_t)n < cap ? (size_t)n : 0;
}

long rt_slurm_time_minutes(const struct rt_slurm_end *e, double run_secs, int *at_least)
{
	*at_least = 0;
	if (!e->known)
		return 0;
	double ran = isfinite(e->elapsed) && e->elapsed > 0 ? e->elapsed : run_secs;
	if (!strcmp(e->state, "TIMEOUT") && isfinite(e->time_limit) && e->time_limit > 0) {
		*at_least = 1; /* stopped at its limit: its need was not seen */
		return (long)ceil(e->time_limit * 1.5 / 60);
	}
	long m = (long)ceil(ran * 1.2 / 60);
	return m < 1 ? 1 : m;
}

int rt_seff(const struct rt_runstats *st, const cJSON *meta, struct rt_seff *f)
{
	struct rt_slurm_end e;
	memset(f, 0, sizeof(*f));
	const char *slurm = rt_meta_str(meta, "allocation", "slurm_job_id");
	if (!slurm || !*slurm || !st->lines)
		return 0;
	rt_slurm_end(meta, &e);
	double before = rt_meta_num(meta, "cgroup", "cpu_before_secs");
	f->total_cpu = ans_sum_of(st, RT_V_PROC_UTIME) + ans_sum_of(st, RT_V_PROC_STIME) +
	               (isfinite(before) && before > 0 ? before : 0);
	f->alloc_cpus = e.known && e.cpus > 0 ? e.cpus : rt_meta_num(meta, "allocation", "cpu");
	f->elapsed = e.known && e.elapsed >= 0 ? e.elapsed : st->duration;
	f->elapsed_from = e.known && e.elapsed >= 0 ? "Slurm's" : "the run's";
	double req = e.known && e.mem_bytes > 0 ? e.mem_bytes
	                                        : rt_meta_num(meta, "allocation", "memory_bytes");
	f->req_mem_mib = isfinite(req) && req > 0 ? req / 1048576 : 0;
	f->peak_mib = st->mem_peak_mib;
	f->cpu_pct = f->alloc_cpus > 0 && f->elapsed > 0
	                 ? f->total_cpu / (f->alloc_cpus * f->elapsed) * 100
	                 : NAN;
	f->mem_pct =
	    f->req_mem_mib > 0 && f->peak_mib >= 0 ? f->peak_mib / f->req_mem_mib * 100 : NAN;
	f->known = isfinite(f->cpu_pct) || isfinite(f->mem_pct);
	return f->known;
}

size_t rt_seff_text(const struct rt_seff *f, char *buf, size_t cap)
{
	int n = 0;
	if (!f->known || !cap)
		return 0;
	buf[0] = '\0';
	if (isfinite(f->cpu_pct))
		n = snprintf(buf, cap,
		             "CPU efficiency %.2f %% (%.2f s of %g core%s x %.0f s, %s elapsed)",
		             f->cpu_pct, f->total_cpu, f->alloc_cpus, f->alloc_cpus == 1 ? "" : "s",
		             f->elapsed, f->elapsed_from);
	if (isfinite(f->mem_pct) && n >= 0 && (size_t)n < cap)
		n += snprintf(buf + n, cap - (size_t)n,
		              "%smemory efficiency %.2f %% (rt's peak %.0f MiB of %.0f MiB asked)",
		              n ? "; " : "", f->mem_pct, f->peak_mib, f->req_mem_mib);
	return n > 0 && (size_t)n < cap ? (size_t)n : 0;
}

cJSON *rt_json_seff(const struct rt_seff *f)
{
	cJSON *o = cJSON_CreateObject();
	ans_add_num_or_null(o, "cpu_efficiency_pct", f->cpu_pct);
	ans_add_num_or_null(o, "memory_efficiency_pct", f->mem_pct);
	cJSON_AddNumberToObject(o, "total_cpu_secs", f->total_cpu);
	cJSON_AddNumberToObject(o, "alloc_cpus", f->alloc_cpus);
	cJSON_AddNumberToObject(o, "elapsed_secs", f->elapsed);
	cJSON_AddStringToObject(o, "elapsed_from",
	                        !strcmp(f->elapsed_from, "Slurm's") ? "slurm" : "run");
	ans_add_num_or_null(o, "req_mem_mib", f->req_mem_mib > 0 ? f->req_mem_mib : NAN);
	ans_add_num_or_null(o, "peak_mib", f->peak_mib >= 0 ? f->peak_mib : NAN);
	return o;
}
