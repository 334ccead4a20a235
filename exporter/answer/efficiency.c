/*
 * efficiency.c - given against used: the run's allocation against what the job
 * used, as sentences, the answer line and JSON.
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

/* ---- given against used (the run's allocation) --------------------------- */
static double meta_alloc(const cJSON *meta, const char *key)
{
	return rt_meta_num(meta, "allocation", key);
}

/* What Slurm allocated, once `rt-export learn` asked it: it outranks the
 * group's limits and the environment (the cgroup can be wider than the
 * allocation where Slurm does not constrain cores). */
static void slurm_given(const cJSON *meta, struct rt_efficiency *e)
{
	struct rt_slurm_end se;
	if (!rt_slurm_end(meta, &se))
		return;
	if (se.cpus > 0) {
		e->cpu_given = se.cpus;
		e->cpu_from = "slurm";
	}
	if (se.mem_bytes > 0) {
		e->mem_given_mib = se.mem_bytes / 1048576.0;
		e->mem_from = "slurm";
	}
}

void rt_efficiency(const struct rt_runstats *st, const cJSON *meta, struct rt_efficiency *e)
{
	memset(e, 0, sizeof(*e));
	e->vram_given_mib = e->vram_peak_mib = e->vram_pct = -1;
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(meta, "allocation");
	if (!cJSON_IsObject(a) || !st->lines)
		return;
	e->known = 1;
	e->cpu_from = rt_meta_str(meta, "allocation", "cpu_from");
	e->mem_from = rt_meta_str(meta, "allocation", "memory_from");
	e->gpu_from = rt_meta_str(meta, "allocation", "gpu_from");
	e->note = rt_meta_str(meta, "allocation", "note");
	e->whole_host = e->cpu_from && e->mem_from && e->gpu_from && !strcmp(e->cpu_from, "host") &&
	                !strcmp(e->mem_from, "host") && !strcmp(e->gpu_from, "host");
	int p = st->has_proc;
	double d = p ? rt_stats_secs(st, RT_V_PROC_UTIME) : st->duration;
	d = d > 0 ? d : 1;
	e->cpu_given = meta_alloc(meta, "cpu");
	slurm_given(meta, e); /* (before the shares below) */
	double secs = p ? ans_sum_of(st, RT_V_PROC_UTIME) + ans_sum_of(st, RT_V_PROC_STIME)
	                : ans_sum_of(st, RT_V_UTIME) + ans_sum_of(st, RT_V_STIME);
	e->cpu_mean = secs / d;
	e->cpu_pct = e->cpu_given > 0 ? secs / (e->cpu_given * d) * 100.0 : NAN;
	if (!e->mem_given_mib)
		e->mem_given_mib = meta_alloc(meta, "memory_bytes") / 1048576.0;
	/* the answer's peak: peaks between samples included */
	e->mem_peak_mib = st->mem_peak_mib >= 0 ? st->mem_peak_mib : NAN;
	e->mem_pct = e->mem_given_mib > 0 && isfinite(e->mem_peak_mib)
	                 ? e->mem_peak_mib / e->mem_given_mib * 100.0
	                 : NAN;
	double g = meta_alloc(meta, "gpu");
	e->gpu_given = g > 0 ? (unsigned)g : 0;
	const struct rt_colstat *gu = ans_col(st, p ? RT_V_PROC_GPU_USAGE : RT_V_GPU_USAGE);
	const struct rt_colstat *gn = ans_col(st, p ? RT_V_PROC_GPU_UTILIZED : RT_V_GPU_UTILIZED);
	e->gpu_mean = gu ? gu->mean : 0;
	e->gpu_used = gn ? gn->max : 0;
	e->gpu_pct = e->gpu_given ? e->gpu_mean / e->gpu_given * 100.0 : NAN;
	double per_gpu =
	    rt_meta_num(meta, "host", "gpu_memory_mib") / rt_meta_num(meta, "host", "gpu_count");
	const struct rt_colstat *vr = ans_col(st, p ? RT_V_PROC_GPU_VRAM : RT_V_GPU_VRAM);
	if (e->gpu_given && per_gpu > 0 && isfinite(per_gpu) && vr) {
		e->vram_given_mib = per_gpu * e->gpu_given;
		e->vram_peak_mib = vr->max;
		e->vram_pct = vr->max / e->vram_given_mib * 100.0;
	}
}

/* "16 GiB", "512 MiB", "2.1 GiB" */
static void mib_text(char *buf, size_t cap, double mib)
{
	if (mib >= 1024)
		snprintf(buf, cap, "%.*f GiB", mib >= 10240 || fmod(mib, 1024) == 0 ? 0 : 1,
		         mib / 1024);
	else
		snprintf(buf, cap, "%.0f MiB", mib);
}

static const char *from_words(const char *from)
{
	return !from                        ? ""
	       : !strcmp(from, "request")   ? " (asked)"
	       : !strcmp(from, "cgroup")    ? " (its cgroup's limit)"
	       : !strcmp(from, "slurm")     ? " (Slurm)"
	       : !strcmp(from, "visible")   ? " (visible devices)"
	       : !strcmp(from, "container") ? " (the container's GPUs)"
	                                    : " (the host)";
}

size_t rt_efficiency_text(const struct rt_efficiency *e, const struct rt_recommendation *r,
                          char out[][RT_EFF_LEN], size_t max)
{
	size_t n = 0;
	if (!e->known || e->whole_host)
		return 0;
	char a[32], b[32], c[32];
	if (n < max && e->cpu_given > 0)
		snprintf(out[n++], RT_EFF_LEN, "given %g core%s%s, used %.1f on average (%.0f %%)",
		         e->cpu_given, e->cpu_given == 1 ? "" : "s", from_words(e->cpu_from),
		         e->cpu_mean, e->cpu_pct);
	if (n < max && e->mem_given_mib > 0 && isfinite(e->mem_peak_mib)) {
		mib_text(a, sizeof(a), e->mem_given_mib);
		mib_text(b, sizeof(b), e->mem_peak_mib);
		mib_text(c, sizeof(c), (double)r->memory_mib);
		snprintf(out[n++], RT_EFF_LEN, "given %s%s, peaked at %s (%.0f %%): %s would do", a,
		         from_words(e->mem_from), b, e->mem_pct, c);
	}
	if (n < max && e->gpu_given)
		snprintf(out[n++], RT_EFF_LEN,
		         "%u GPU%s given%s, %.0f used (busy %.0f %% on average)", e->gpu_given,
		         e->gpu_given == 1 ? "" : "s", from_words(e->gpu_from), e->gpu_used,
		         e->gpu_pct);
	if (n < max && e->vram_pct >= 0) {
		mib_text(a, sizeof(a), e->vram_given_mib);
		mib_text(b, sizeof(b), e->vram_peak_mib);
		snprintf(out[n++], RT_EFF_LEN, "VRAM: %s given, peaked at %s (%.0f %%)", a, b,
		         e->vram_pct);
	}
	if (n < max && e->note && *e->note)
		snprintf(out[n++], RT_EFF_LEN, "%s", e->note);
	return n;
}

void rt_answer_line(char *buf, size_t cap, const struct rt_runstats *st,
                    const struct rt_efficiency *e, const struct rt_recommendation *r)
{
	char used[32], given[32], reco[48];
	int p = st->has_proc;
	double d = p ? rt_stats_secs(st, RT_V_PROC_UTIME) : st->duration;
	d = d > 0 ? d : 1;
	double cores = (p ? ans_sum_of(st, RT_V_PROC_UTIME) + ans_sum_of(st, RT_V_PROC_STIME)
	                  : ans_sum_of(st, RT_V_UTIME) + ans_sum_of(st, RT_V_STIME)) /
	               d;
	mib_text(used, sizeof(used), st->mem_peak_mib > 0 ? st->mem_peak_mib : 0);
	mib_text(reco + (r->memory_at_least ? 9 : 0), sizeof(reco) - 9, (double)r->memory_mib);
	if (r->memory_at_least)
		memcpy(reco, "at least ", 9);
	size_t n = 0;
	if (e->known && e->cpu_given > 0)
		n += (size_t)snprintf(buf, cap, "used %.1f of %g cores", cores, e->cpu_given);
	else
		n += (size_t)snprintf(buf, cap, "used %.1f cores", cores);
	if (n < cap && e->known && e->mem_given_mib > 0) {
		mib_text(given, sizeof(given), e->mem_given_mib);
		n += (size_t)snprintf(buf + n, cap - n, " and %s of %s", used, given);
	} else if (n < cap) {
		n += (size_t)snprintf(buf + n, cap - n, " and %s at the peak", used);
	}
	if (n < cap && r->gpu) {
		char vram[32];
		mib_text(vram, sizeof(vram), (double)r->vram_mib);
		snprintf(buf + n, cap - n, ": %ld vCPU%s, %s and %ld GPU%s with %s VRAM%s would do",
		         r->cpu, r->cpu == 1 ? "" : "s", reco, r->gpu, r->gpu == 1 ? "" : "s", vram,
		         r->gpu == 1 ? "" : " each");
	} else if (n < cap) {
		snprintf(buf + n, cap - n, ": %ld vCPU%s and %s would do", r->cpu,
		         r->cpu == 1 ? "" : "s", reco);
	}
}

void rt_json_add_efficiency(cJSON *obj, const struct rt_efficiency *e)
{
	if (!e->known) { /* a run of an rt before 0.3 */
		cJSON_AddNullToObject(obj, "allocation_given");
		cJSON_AddNullToObject(obj, "efficiency");
		return;
	}
	cJSON *g = cJSON_AddObjectToObject(obj, "allocation_given");
	cJSON_AddNumberToObject(g, "cpu", e->cpu_given);
	ans_add_str_or_null(g, "cpu_from", e->cpu_from);
	ans_add_num_or_null(g, "memory_mib", e->mem_given_mib);
	ans_add_str_or_null(g, "memory_from", e->mem_from);
	cJSON_AddNumberToObject(g, "gpu", e->gpu_given);
	ans_add_str_or_null(g, "gpu_from", e->gpu_from);
	ans_add_num_or_null(g, "vram_mib", e->vram_given_mib >= 0 ? e->vram_given_mib : NAN);
	cJSON_AddBoolToObject(g, "whole_host", e->whole_host);
	ans_add_str_or_null(g, "note", e->note);
	cJSON *o = cJSON_AddObjectToObject(obj, "efficiency");
	ans_add_num_or_null(o, "cpu_pct", e->cpu_pct);
	ans_add_num_or_null(o, "cpu_mean_cores", e->cpu_mean);
	ans_add_num_or_null(o, "memory_pct", e->mem_pct);
	ans_add_num_or_null(o, "memory_peak_mib", e->mem_peak_mib);
	ans_add_num_or_null(o, "gpu_pct", e->gpu_given ? e->gpu_pct : NAN);
	ans_add_num_or_null(o, "gpus_used", e->gpu_given ? e->gpu_used : NAN);
	ans_add_num_or_null(o, "vram_pct", e->vram_pct >= 0 ? e->vram_pct : NAN);
}
