/*
 * gpustats.c - per-GPU statistics of a run: the job's busy and VRAM on each
 * GPU, the time a GPU spent at its power cap or slowed by heat, and its SM
 * clock then (stats.h, struct rt_gpustat).
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "stats.h"
#include "rt/fmt.h"

/* NVML's clocks event reasons: the power cap (software cap, hardware power
 * brake) and heat or a hardware slowdown (thermal, hw_slowdown). Idle,
 * application clocks, sync boost and display are not a limit. */
#define REASON_POWER 0x84ull
#define REASON_HEAT 0x68ull

static void add_job(struct rt_gpustat *s, const struct rt_rec_gpu *g, double dt)
{
	double busy = g->job_busy_x100 / 10000.0, vram = (double)g->job_vram_bytes / 1048576.0;
	s->job_w += dt;
	s->job_busy_wsum += busy * dt;
	if (busy > s->job_busy_max)
		s->job_busy_max = busy;
	if (vram > s->job_vram_max)
		s->job_vram_max = vram;
	s->job_on |= g->job_on != 0;
}

static void add_held(struct rt_gpustat *s, const struct rt_rec_gpu *g, double dt)
{
	uint64_t r = g->throttle_reasons;
	if (r & REASON_POWER)
		s->capped_w += dt;
	else if (r & REASON_HEAT)
		s->thermal_w += dt;
	if (!(r & (REASON_POWER | REASON_HEAT)) || !(g->valid & RT_GPU_V_CLOCK))
		return;
	double c = g->clock_mhz;
	if (!s->held_clock_min || c < s->held_clock_min)
		s->held_clock_min = c;
	if (c > s->held_clock_max)
		s->held_clock_max = c;
}

/* The energy counter's first and last readings (a record of the same
 * inventory: the warm-up record's for the first line). */
static void add_energy(struct rt_gpustat *s, const struct rt_record *rec, unsigned i)
{
	const struct rt_rec_gpu *g = &rec->gpu[i];
	if (!(g->valid & RT_GPU_V_ENERGY) || (s->energy_n && g->energy_mj < s->energy_last_mj))
		return; /* the driver reloaded: the total so far stands */
	if (!s->energy_n++)
		s->energy_first_mj = g->energy_mj;
	s->energy_last_mj = g->energy_mj;
}

void rt_gpustat_add(struct rt_gpustat *gs, unsigned *n, const struct rt_derived *d)
{
	const struct rt_record *rec = d->cur.rec;
	double dt = d->dt > 0 ? d->dt : 0;
	int has_job = rt_record_has(rec, RT_SEC_GPU, RT_GPU_V_job_on);
	int has_held = rt_record_has(rec, RT_SEC_GPU, RT_GPU_V_throttle_reasons);
	int has_max = rt_record_has(rec, RT_SEC_GPU, RT_GPU_V_max_clock_mhz);
	for (unsigned i = 0; i < rec->h->ngpu && i < RT_MAX_GPUS; i++) {
		const struct rt_rec_gpu *g = &rec->gpu[i];
		struct rt_gpustat *s = &gs[i];
		if (i >= *n) {
			memset(s, 0, sizeof(*s));
			*n = i + 1;
			const struct rt_record *p = d->prev.rec;
			if (p->h->inv_gen == rec->h->inv_gen && i < p->h->ngpu)
				add_energy(s, p, i);
		}
		rt_copy_text(s->name, sizeof(s->name), d->cur.inv->gpu[i].name);
		add_energy(s, rec, i);
		s->w += dt;
		if (has_job && (g->valid & RT_GPU_V_JOB))
			add_job(s, g, dt);
		if (has_held && (g->valid & RT_GPU_V_THROTTLE))
			add_held(s, g, dt);
		if (has_max && (g->valid & RT_GPU_V_MAX_CLOCK))
			s->max_clock = g->max_clock_mhz;
	}
}

static double lesser(double a, double b)
{
	return !a ? b : !b ? a : fmin(a, b);
}

void rt_gpustat_merge(struct rt_gpustat *g, unsigned *n, const struct rt_gpustat *add,
                      unsigned nadd)
{
	for (unsigned i = 0; i < nadd && i < RT_MAX_GPUS; i++) {
		struct rt_gpustat *o = &g[i];
		const struct rt_gpustat *x = &add[i];
		if (i >= *n) {
			memset(o, 0, sizeof(*o));
			*n = i + 1;
		}
		if (!o->name[0])
			memcpy(o->name, x->name, sizeof(o->name));
		o->w += x->w;
		o->job_w += x->job_w;
		o->job_busy_wsum += x->job_busy_wsum;
		o->job_busy_max = fmax(o->job_busy_max, x->job_busy_max);
		o->job_vram_max = fmax(o->job_vram_max, x->job_vram_max);
		o->job_on |= x->job_on;
		o->capped_w += x->capped_w;
		o->thermal_w += x->thermal_w;
		o->held_clock_min = lesser(o->held_clock_min, x->held_clock_min);
		o->held_clock_max = fmax(o->held_clock_max, x->held_clock_max);
		o->max_clock = fmax(o->max_clock, x->max_clock);
		if (x->energy_n > 1) { /* runs' totals add up */
			o->energy_last_mj += x->energy_last_mj - x->energy_first_mj;
			o->energy_n = 2;
		}
	}
}

double rt_gpu_vram_one(const struct rt_runstats *st)
{
	double v = -1;
	for (unsigned i = 0; i < st->ngpu; i++)
		if (st->gpu[i].job_w > 0 && st->gpu[i].job_vram_max > v)
			v = st->gpu[i].job_vram_max;
	return v;
}

void rt_gpu_reco_text(char *buf, size_t cap, const struct rt_recommendation *r)
{
	if (!r->gpu)
		snprintf(buf, cap, ", no GPU");
	else
		snprintf(buf, cap, ", %ld GPU%s with %ld MiB VRAM%s", r->gpu,
		         r->gpu == 1 ? "" : "s", r->vram_mib, r->gpu == 1 ? "" : " each");
}

void rt_gpu_note_text(char *buf, size_t cap, const struct rt_runstats *st, unsigned i)
{
	const struct rt_gpustat *g = &st->gpu[i];
	const char *name = g->name[0] ? g->name : "a GPU";
	if (!st->has_proc || g->job_w <= 0)
		snprintf(buf, cap, "%s", name);
	else if (!g->job_on)
		snprintf(buf, cap, "%s: the job did not use it", name);
	else
		snprintf(buf, cap,
		         "%s: the job kept it %.2f busy on average (peak %.2f), its VRAM peaked "
		         "at %.0f MiB",
		         name, g->job_busy_wsum / g->job_w, g->job_busy_max, g->job_vram_max);
	size_t n = strlen(buf);
	double j = rt_gpu_energy_joules(g);
	if (j >= 0 && n < cap && j < 10000)
		snprintf(buf + n, cap - n, "; it drew %.0f J (%.2f Wh) over the run", j, j / 3600);
	else if (j >= 0 && n < cap)
		snprintf(buf + n, cap - n, "; it drew %.1f kJ (%.1f Wh) over the run", j / 1000,
		         j / 3600);
}

double rt_gpu_energy_joules(const struct rt_gpustat *g)
{
	return g->energy_n > 1 ? (double)(g->energy_last_mj - g->energy_first_mj) / 1000.0 : -1;
}

/* ", SM clock 1665-1680 MHz of 1980" while it was held back. */
static void held_clock(char *buf, size_t cap, const struct rt_gpustat *g)
{
	buf[0] = '\0';
	if (!g->held_clock_max)
		return;
	int n = g->held_clock_min < g->held_clock_max
	            ? snprintf(buf, cap, ", SM clock %.0f-%.0f MHz", g->held_clock_min,
	                       g->held_clock_max)
	            : snprintf(buf, cap, ", SM clock %.0f MHz", g->held_clock_max);
	if (g->max_clock > 0 && n > 0 && (size_t)n < cap)
		snprintf(buf + n, cap - (size_t)n, " of %.0f", g->max_clock);
}

size_t rt_gpu_held_text(const struct rt_runstats *st, char (*out)[200], size_t n, size_t max)
{
	for (unsigned i = 0; i < st->ngpu && n < max; i++) {
		const struct rt_gpustat *g = &st->gpu[i];
		if (g->w <= 0)
			continue;
		double capped = g->capped_w / g->w * 100, heat = g->thermal_w / g->w * 100;
		char clk[64];
		held_clock(clk, sizeof(clk), g);
		const char *name = g->name[0] ? g->name : "GPU";
		/* (percentages of the run: 0-100, printed as whole numbers) */
		if (capped >= RT_GPU_HELD_PCT)
			snprintf(out[n++], 200,
			         "GPU %u (%.64s) ran at its power cap %d %% of the run%.48s", i,
			         name, (int)(capped + 0.5), clk);
		if (heat >= RT_GPU_HELD_PCT && n < max)
			snprintf(
			    out[n++], 200,
			    "GPU %u (%.64s) was slowed by heat or a hardware limit %d %% of the "
			    "run%.48s",
			    i, name, (int)(heat + 0.5), clk);
	}
	return n;
}

static void add_or_null(cJSON *o, const char *k, int have, double v)
{
	if (have && isfinite(v))
		cJSON_AddNumberToObject(o, k, v);
	else
		cJSON_AddNullToObject(o, k);
}

cJSON *rt_json_gpus(const struct rt_runstats *st)
{
	cJSON *arr = cJSON_CreateArray();
	for (unsigned i = 0; arr && i < st->ngpu; i++) {
		const struct rt_gpustat *g = &st->gpu[i];
		if (g->w <= 0)
			continue;
		cJSON *o = cJSON_CreateObject();
		int job = st->has_proc && g->job_w > 0;
		cJSON_AddNumberToObject(o, "index", i);
		cJSON_AddStringToObject(o, "name", g->name);
		if (job)
			cJSON_AddBoolToObject(o, "job_used", g->job_on);
		else
			cJSON_AddNullToObject(o, "job_used");
		add_or_null(o, "job_busy_mean", job, job ? g->job_busy_wsum / g->job_w : 0);
		add_or_null(o, "job_busy_max", job, g->job_busy_max);
		add_or_null(o, "job_vram_peak_mib", job, g->job_vram_max);
		cJSON_AddNumberToObject(o, "power_capped_pct", g->capped_w / g->w * 100);
		cJSON_AddNumberToObject(o, "slowed_pct", g->thermal_w / g->w * 100);
		add_or_null(o, "sm_clock_held_min_mhz", g->held_clock_max > 0, g->held_clock_min);
		add_or_null(o, "sm_clock_held_max_mhz", g->held_clock_max > 0, g->held_clock_max);
		add_or_null(o, "sm_clock_max_mhz", g->max_clock > 0, g->max_clock);
		add_or_null(o, "energy_joules", g->energy_n > 1, rt_gpu_energy_joules(g));
		cJSON_AddItemToArray(arr, o);
	}
	return arr;
}
