/*
 * stats.c - statistics of a run's lines, allocation and recommendation
 * (stats.h; rules from reference.md §9).
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "answer/stats.h"

/* All the arrays of a series live in one mapping, populated in one call:
 * a day of 1 Hz lines is ~23 MB, and faulting that in page by page costs
 * more than reading the store. */
#define SERIES_ARRAYS (RT_STATS_COLS + 2)

const unsigned rt_stats_xids[RT_STATS_XCOLS] = {
    RT_V_OOM_KILLS,     RT_V_CG_OOM_KILLS,   RT_V_CG_THROTTLED,  RT_V_CG_CPU_LIMIT,
    RT_V_CG_MEM_LIMIT,  RT_V_CG_MEM_USED,    RT_V_PSI_CPU_SOME,  RT_V_PSI_MEM_SOME,
    RT_V_PSI_IO_SOME,   RT_V_DISK_RLAT,      RT_V_DISK_WLAT,     RT_V_GPUS_THROTTLED,
    RT_V_SPACE_DF_USED, RT_V_SPACE_RESERVED, RT_V_PROC_CPU_WAIT, RT_V_PROC_THREADS,
    RT_V_CG_MEM_PEAK,
};

/* The value id behind kept column c, and the column of each value id. */
static unsigned col_id[RT_STATS_COLS];
static int id_col[RT_NV];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void build_cols(void)
{
	for (unsigned id = 0; id < RT_NV; id++)
		id_col[id] = -1;
	for (unsigned c = 0; c < RT_STATS_COLS; c++) {
		col_id[c] = c < RT_CSV_COLUMNS ? (unsigned)rt_csv_column_id(c)
		                               : rt_stats_xids[c - RT_CSV_COLUMNS];
		id_col[col_id[c]] = (int)c;
	}
}

int rt_series_reserve(struct rt_series *s, size_t cap)
{
	if (cap <= s->cap)
		return 0;
	size_t bytes = cap * SERIES_ARRAYS * sizeof(double);
	double *blk = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (blk == MAP_FAILED) {
		s->oom = 1;
		return -ENOMEM;
	}
	/* huge pages where the kernel lends them (fewer faults and TLB misses:
	 * a third of a day-long summary's time went to storing into 4 KiB
	 * pages), then populated in one call */
	madvise(blk, bytes, MADV_HUGEPAGE);
#ifdef MADV_POPULATE_WRITE
	madvise(blk, bytes, MADV_POPULATE_WRITE);
#endif
	double *old[SERIES_ARRAYS] = {s->elapsed, s->dt};
	for (unsigned c = 0; c < RT_STATS_COLS; c++)
		old[c + 2] = s->col[c];
	s->elapsed = blk;
	s->dt = blk + cap;
	for (unsigned c = 0; c < RT_STATS_COLS; c++)
		s->col[c] = blk + (c + 2) * cap;
	if (s->n)
		for (unsigned i = 0; i < SERIES_ARRAYS; i++)
			memcpy(blk + i * cap, old[i], s->n * sizeof(double));
	if (s->block)
		munmap(s->block, s->block_bytes);
	s->block = blk;
	s->block_bytes = bytes;
	s->cap = cap;
	return 0;
}

int rt_series_flush(struct rt_series *s)
{
	if (!s->staged)
		return 0;
	size_t need = s->n + s->staged, cap = s->cap < 512 ? 1024 : s->cap * 2;
	if (need > s->cap && rt_series_reserve(s, cap > need ? cap : need)) {
		s->staged = 0;
		return -ENOMEM;
	}
	double *dst[SERIES_ARRAYS] = {s->elapsed, s->dt};
	for (unsigned c = 0; c < RT_STATS_COLS; c++)
		dst[c + 2] = s->col[c];
	for (unsigned a = 0; a < SERIES_ARRAYS; a++)
		for (unsigned k = 0; k < s->staged; k++)
			dst[a][s->n + k] = s->stage[k][a];
	s->n += s->staged;
	s->staged = 0;
	return 0;
}

int rt_series_add(struct rt_series *s, const struct rt_derived *d)
{
	if (s->n + s->staged == 0) {
		s->wall0_ns = d->prev.rec->h->wall_ns;
		s->mono0_ns = d->prev.rec->h->mono_ns;
		s->rss_max_mib = -1;
		s->hwm_max_mib = -1;
		s->shared_min_mib = -1;
		s->ngpu = 0;
	}
	if (s->staged == RT_SERIES_STAGE && rt_series_flush(s))
		return -ENOMEM;
	rt_gpustat_add(s->gpu, &s->ngpu, d);
	double *row = s->stage[s->staged++];
	uint64_t mono = d->cur.rec->h->mono_ns;
	row[0] = mono > s->mono0_ns ? (double)(mono - s->mono0_ns) / 1e9 : 0.0;
	row[1] = d->dt > 0 ? d->dt : 0.0;
	pthread_once(&once, build_cols);
	for (unsigned c = 0; c < RT_STATS_COLS; c++) {
		double v;
		row[c + 2] = rt_value(d, col_id[c], &v) ? v : NAN;
	}
	/* the tree's RSS peak: no lower than the tree's RSS in any sample, nor
	 * than the largest VmHWM any member (or reaped descendant) reached */
	double v;
	if (rt_value(d, RT_V_PROC_RSS, &v) && v > s->rss_max_mib)
		s->rss_max_mib = v;
	if (rt_value(d, RT_V_PROC_PEAK_RSS, &v) && v > s->rss_max_mib)
		s->rss_max_mib = v;
	if (rt_value(d, RT_V_PROC_PEAK_RSS, &v) && v > s->hwm_max_mib)
		s->hwm_max_mib = v;
	/* what a high-water mark counts that PSS does not: pages shared with
	 * others (libraries, a pool's parent), at least this much all run */
	double rss, pss, threads;
	if (rt_value(d, RT_V_PROC_RSS, &rss) && rt_value(d, RT_V_PROC_PSS, &pss) &&
	    rt_value(d, RT_V_PROC_THREADS, &threads) && threads > 0 &&
	    (s->shared_min_mib < 0 || rss - pss < s->shared_min_mib))
		s->shared_min_mib = rss > pss ? rss - pss : 0;
	return 0;
}

int rt_series_observe(void *ctx, const struct rt_derived *d)
{
	return rt_series_add(ctx, d);
}

void rt_series_free(struct rt_series *s)
{
	if (s->block)
		munmap(s->block, s->block_bytes);
	memset(s, 0, sizeof(*s));
}

/* k-th smallest of v[0..n) (reorders v: every later value is >= it). */
static double select_kth(double *v, size_t n, size_t k)
{
	ptrdiff_t lo = 0, hi = (ptrdiff_t)n - 1, kk = (ptrdiff_t)k;
	while (lo < hi) {
		double pivot = v[lo + (hi - lo) / 2];
		ptrdiff_t i = lo, j = hi;
		while (i <= j) {
			while (v[i] < pivot)
				i++;
			while (v[j] > pivot)
				j--;
			if (i <= j) {
				double t = v[i];
				v[i++] = v[j];
				v[j--] = t;
			}
		}
		if (kk <= j)
			hi = j;
		else if (kk >= i)
			lo = i;
		else
			break;
	}
	return v[k];
}

/* numpy's linear percentile of v[0..n) (reorders v). */
static double percentile(double *v, size_t n, double q)
{
	double h = q * (double)(n - 1);
	size_t k = (size_t)floor(h);
	double a = select_kth(v, n, k);
	if (k + 1 >= n)
		return a;
	/* the next rank is the smallest value above position k */
	double b = v[k + 1];
	for (size_t i = k + 2; i < n; i++)
		if (v[i] < b)
			b = v[i];
	return a + (h - (double)k) * (b - a);
}

/* Columns that are a rate over their line's interval (cores, shares of
 * time): a short line's few ticks over a few ms swing them. */
static int rate_column(unsigned id)
{
	const struct rt_value_info *v = rt_value_info(id);
	return id == RT_V_CPU_UTIL || id == RT_V_PROC_CORES || id == RT_V_CG_UTIL ||
	       (v && v->kind == RT_VK_STALL);
}

/*
 * A last line much shorter than the one before it (under half: the job
 * ended just after a sample) holds a rate of a few ticks over a few ms:
 * 0.95 cores in the last 60 ms of a job limited to 0.5. For every max, p95
 * and chart, the two lines share their rate over both (weighted by time,
 * so the mean and the CPU seconds are unchanged); sums, levels and the
 * stored samples stay as they are.
 */
static void fold_short_tail(struct rt_series *s)
{
	if (s->folded == 1 + (int)s->n)
		return; /* done for these lines */
	double(*orig)[2] = s->tail_orig;
	if (s->folded >= 3) /* lines came since the last fold: undo it */
		for (unsigned c = 0; c < RT_STATS_COLS; c++)
			for (int k = 0; k < 2 && !isnan(orig[c][0]); k++)
				s->col[c][(size_t)s->folded - 3 + (size_t)k] = orig[c][k];
	s->folded = 1 + (int)s->n;
	for (unsigned c = 0; c < RT_STATS_COLS; c++)
		orig[c][0] = orig[c][1] = NAN;
	if (s->n < 2)
		return;
	size_t a = s->n - 2, b = s->n - 1;
	double da = s->dt[a], db = s->dt[b];
	if (!(da > 0) || !(db >= 0) || db >= 0.5 * da)
		return;
	pthread_once(&once, build_cols);
	for (unsigned c = 0; c < RT_STATS_COLS; c++) {
		double va = s->col[c][a], vb = s->col[c][b];
		if (!rate_column(col_id[c]) || isnan(va) || isnan(vb))
			continue;
		orig[c][0] = va;
		orig[c][1] = vb;
		s->col[c][a] = s->col[c][b] = (va * da + vb * db) / (da + db);
	}
}

/*
 * The lines the tracked tree lived in: up to the line after the last one
 * whose sample saw a member (its threads), which holds the last member's
 * end. All of them when no line says (records without the count, or a
 * tree never seen).
 */
static size_t tree_lines(const struct rt_series *s)
{
	int c = rt_stats_col(RT_V_PROC_THREADS);
	size_t last = 0;
	int seen = 0;
	for (size_t i = 0; c >= 0 && i < s->n; i++)
		if (s->col[c][i] > 0) {
			last = i;
			seen = 1;
		}
	return seen && last + 2 < s->n ? last + 2 : s->n;
}

/* A value of the tracked tree's (process_...), not the host's. */
static int job_value(unsigned id)
{
	const struct rt_value_info *v = rt_value_info(id);
	const char *names[3] = {v ? v->csv : NULL, v ? v->xcsv : NULL, v ? v->json : NULL};
	for (int i = 0; i < 3; i++)
		if (names[i] && !strncmp(names[i], "process_", 8))
			return 1;
	return 0;
}

static int job_column(unsigned c)
{
	return job_value(col_id[c]);
}

double rt_stats_secs(const struct rt_runstats *st, unsigned id)
{
	pthread_once(&once, build_cols);
	return job_value(id) && st->job_duration > 0 ? st->job_duration : st->duration;
}

void rt_stats_compute(struct rt_series *s, struct rt_runstats *st)
{
	memset(st, 0, sizeof(*st));
	st->job_oom_kills = st->job_mem_peak_mib = st->job_mem_limit_mib = st->job_limit_hits = -1;
	rt_series_flush(s);
	fold_short_tail(s);
	double(*orig)[2] = s->tail_orig;
	st->lines = s->n;
	st->rss_max_mib = s->n ? s->rss_max_mib : -1;
	double total_w = 0;
	for (size_t i = 0; i < s->n; i++)
		total_w += s->dt[i];
	st->duration = total_w;
	pthread_once(&once, build_cols);
	size_t job_n = tree_lines(s);
	st->job_duration = 0;
	for (size_t i = 0; i < job_n; i++)
		st->job_duration += s->dt[i];
	st->tail_after = job_n < s->n ? total_w - st->job_duration : 0;
	double *scratch = s->n ? malloc(s->n * sizeof(double)) : NULL;
	for (unsigned c = 0; c < RT_STATS_COLS; c++) {
		struct rt_colstat *cs = &st->col[c];
		double sum = 0, wsum = 0, w = 0, max = -INFINITY;
		size_t m = 0, upto = job_column(c) ? job_n : s->n;
		cs->first_nonzero = -1;
		for (size_t i = 0; i < upto; i++) {
			double v = s->col[c][i];
			if (isnan(v))
				continue;
			/* sum, first and last of the values as they were */
			double raw =
			    i + 2 >= s->n && !isnan(orig[c][0]) ? orig[c][i + 2 - s->n] : v;
			if (!m)
				cs->first = raw;
			cs->last = raw;
			if (v > 0 && cs->first_nonzero < 0)
				cs->first_nonzero = s->elapsed[i];
			sum += raw;
			wsum += v * s->dt[i];
			w += s->dt[i];
			if (v > max)
				max = v;
			if (scratch)
				scratch[m] = v;
			m++;
		}
		if (!m)
			continue;
		cs->present = 1;
		cs->n = m;
		cs->sum = sum;
		cs->max = max;
		cs->mean = w > 0 ? wsum / w : sum / (double)m;
		cs->p95 = scratch ? percentile(scratch, m, 0.95) : NAN;
	}
	free(scratch);
	st->has_proc = st->col[rt_stats_col(RT_V_PROC_CORES)].present;
	st->ngpu = s->ngpu;
	memcpy(st->gpu, s->gpu, s->ngpu * sizeof(s->gpu[0]));
	st->hwm_max_mib = s->n ? s->hwm_max_mib : -1;
	st->shared_min_mib = s->n ? s->shared_min_mib : -1;
	const struct rt_colstat *m =
	    &st->col[rt_stats_col(st->has_proc ? RT_V_PROC_PSS : RT_V_MEM_USED)];
	st->mem_peak_mib = m->present ? m->max : -1;
	/* a peak between two samples (a spike, a job shorter than one
	 * interval) is in its process's high-water mark: never a sum of them,
	 * which would count a copy-on-write pool's shared pages once a worker;
	 * less the pages the samples saw shared (RSS - PSS), which a
	 * high-water mark counts whole and PSS in part */
	double hwm = st->hwm_max_mib - (st->shared_min_mib > 0 ? st->shared_min_mib : 0);
	if (st->has_proc && hwm > st->mem_peak_mib)
		st->mem_peak_mib = hwm;
}

void rt_stats_aggregate(const struct rt_runstats *runs, size_t n, struct rt_runstats *out)
{
	memset(out, 0, sizeof(*out));
	out->rss_max_mib = out->mem_peak_mib = out->hwm_max_mib = -1;
	out->job_oom_kills = out->job_mem_peak_mib = out->job_mem_limit_mib = -1;
	out->job_limit_hits = -1;
	size_t measured = 0; /* a run that ended before its first sample has no say */
	for (size_t r = 0; r < n; r++)
		measured += runs[r].lines > 0;
	if (!measured)
		return;
	for (size_t r = 0; r < n; r++) {
		out->lines += runs[r].lines;
		out->duration += runs[r].duration / (double)measured;
		if (runs[r].rss_max_mib > out->rss_max_mib)
			out->rss_max_mib = runs[r].rss_max_mib;
		if (runs[r].mem_peak_mib > out->mem_peak_mib)
			out->mem_peak_mib = runs[r].mem_peak_mib;
		if (runs[r].hwm_max_mib > out->hwm_max_mib)
			out->hwm_max_mib = runs[r].hwm_max_mib;
		if (runs[r].hwm_before_mib > out->hwm_before_mib)
			out->hwm_before_mib = runs[r].hwm_before_mib;
		/* the job's group: the run that was killed, or peaked the most */
		if (runs[r].job_oom_kills > out->job_oom_kills)
			out->job_oom_kills = runs[r].job_oom_kills;
		if (runs[r].job_limit_hits > out->job_limit_hits)
			out->job_limit_hits = runs[r].job_limit_hits;
		if (runs[r].job_mem_peak_mib > out->job_mem_peak_mib)
			out->job_mem_peak_mib = runs[r].job_mem_peak_mib;
		if (runs[r].job_mem_limit_mib > out->job_mem_limit_mib)
			out->job_mem_limit_mib = runs[r].job_mem_limit_mib;
		out->has_proc |= runs[r].has_proc;
		rt_gpustat_merge(out->gpu, &out->ngpu, runs[r].gpu, runs[r].ngpu);
	}
	for (unsigned c = 0; c < RT_STATS_COLS; c++) {
		struct rt_colstat *o = &out->col[c];
		size_t m = 0;
		for (size_t r = 0; r < n; r++) {
			const struct rt_colstat *x = &runs[r].col[c];
			if (!x->present)
				continue;
			if (!m++ || x->max > o->max)
				o->max = x->max;
			if (m == 1 || x->p95 > o->p95)
				o->p95 = x->p95;
			if (m == 1 || x->sum > o->sum)
				o->sum = x->sum;
			if (m == 1 || x->last - x->first > o->last - o->first) {
				o->first = x->first;
				o->last = x->last;
			}
			o->first_nonzero = -1; /* times of different runs do not add up */
			o->mean += x->mean;
		}
		if (m) {
			o->present = 1;
			o->mean /= (double)m;
		}
	}
}

int rt_stats_col(unsigned id)
{
	pthread_once(&once, build_cols);
	return id < RT_NV ? id_col[id] : -1;
}

static double mean_of(const struct rt_runstats *st, unsigned col)
{
	int c = rt_stats_col(col);
	return c >= 0 && st->col[c].present ? st->col[c].mean : 0.0;
}

static double max_of(const struct rt_runstats *st, unsigned col)
{
	int c = rt_stats_col(col);
	return c >= 0 && st->col[c].present ? st->col[c].max : 0.0;
}

enum rt_allocation rt_stats_allocation_why(const struct rt_runstats *st, char *why, size_t cap)
{
	static const struct {
		unsigned process, system;
		const char *what, *unit;
		double factor, margin;
		int prec;
	} pairs[] = {
	    {RT_V_PROC_CORES, RT_V_CPU_UTIL, "CPU", "cores", 1.25, 0.25, 2},
	    {RT_V_PROC_PSS, RT_V_MEM_USED, "memory", "MiB", 1.5, 512, 0},
	    {RT_V_PROC_GPU_USAGE, RT_V_GPU_USAGE, "GPU use", "GPUs", 1.25, 0.2, 2},
	    {RT_V_PROC_GPU_VRAM, RT_V_GPU_VRAM, "VRAM", "MiB", 1.25, 512, 0},
	};
	if (why && cap)
		why[0] = '\0';
	if (!st->has_proc || !st->lines)
		return RT_ALLOC_UNKNOWN;
	for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
		double p = mean_of(st, pairs[i].process), s = mean_of(st, pairs[i].system);
		int over_factor = s > p * pairs[i].factor, over_margin = s > p + pairs[i].margin;
		if (!over_factor && !over_margin)
			continue;
		if (why && cap) /* the reference's rule, said in one clause */
			snprintf(why, cap,
			         "the host's %s in use (mean %.*f %s) is above %s the job's (%.*f)",
			         pairs[i].what, pairs[i].prec, s, pairs[i].unit,
			         over_factor ? (i == 1 ? "1.5x" : "1.25x") : "a margin over",
			         pairs[i].prec, p);
		return RT_ALLOC_SHARED;
	}
	if (why && cap)
		snprintf(why, cap, "the host used little beyond the job's CPU, memory and GPUs");
	return RT_ALLOC_DEDICATED;
}

enum rt_allocation rt_stats_allocation(const struct rt_runstats *st)
{
	return rt_stats_allocation_why(st, NULL, 0);
}

const char *rt_allocation_name(enum rt_allocation a)
{
	return a == RT_ALLOC_SHARED ? "shared" : a == RT_ALLOC_DEDICATED ? "dedicated" : NULL;
}

long rt_round_memory(double mib)
{
	static const long steps[] = {128, 256, 512, 1024, 2048};
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++)
		if (mib <= (double)steps[i])
			return steps[i];
	return (long)ceil(mib / 1024.0) * 1024;
}

static const struct rt_colstat *xcol(const struct rt_runstats *st, unsigned name)
{
	int c = rt_stats_col(name);
	return c >= 0 && st->col[c].present ? &st->col[c] : NULL;
}

/* OOM kills: a job known by its cgroup counts its whole subtree's (its
 * metadata's, from the group's making: kills before the first sample
 * too); else its cgroup's counter moved during the run. The host's
 * per-interval count beyond those is the host's, kept apart. */
static void find_oom(const struct rt_runstats *st, struct rt_findings *f)
{
	const struct rt_colstat *c = xcol(st, RT_V_CG_OOM_KILLS);
	const struct rt_colstat *h = xcol(st, RT_V_OOM_KILLS);
	if (st->job_oom_kills > 0) {
		f->oom_kills = st->job_oom_kills;
		f->oom_in_cgroup = 1;
		f->oom_at = c && c->first_nonzero >= 0 ? c->first_nonzero
		            : h                        ? h->first_nonzero
		                                       : -1;
	} else if (st->job_oom_kills < 0 && c && c->last > c->first) {
		f->oom_kills = c->last - c->first;
		f->oom_in_cgroup = 1;
		f->oom_at = c->first_nonzero >= 0 && c->first == 0 ? c->first_nonzero : -1;
	}
	double host = h && h->sum > 0 ? h->sum : 0;
	if (host > f->oom_kills && !f->oom_in_cgroup) {
		f->host_oom_kills = host;
		f->oom_at = h->first_nonzero;
	} else if (host > f->oom_kills) {
		f->host_oom_kills = host - f->oom_kills;
	}
}

void rt_findings(const struct rt_runstats *st, struct rt_findings *f)
{
	memset(f, 0, sizeof(*f));
	f->oom_at = -1;
	f->throttled_pct = f->psi_cpu = f->psi_mem = f->psi_io = -1;
	f->disk_rlat = f->disk_rlat_p95 = f->disk_wlat = f->disk_wlat_p95 = f->gpus_throttled = -1;
	const struct rt_colstat *c;
	find_oom(st, f);
	/* the cgroup the job ended in (it may have moved into it mid-run) */
	if ((c = xcol(st, RT_V_CG_MEM_LIMIT)))
		f->mem_limit_mib = c->last;
	if ((c = xcol(st, RT_V_CG_MEM_USED)))
		f->mem_used_max_mib = c->max;
	/* the cgroup's own peak counter (memory.peak, max_usage_in_bytes) sees
	 * what samples miss (a growth killed between two): taken when it rose
	 * during the run, so a peak from before the job is not the job's */
	if ((c = xcol(st, RT_V_CG_MEM_PEAK)) && c->last > c->first && c->max > f->mem_used_max_mib)
		f->mem_used_max_mib = c->max;
	/* a job's own group: its high-water mark since it was made is the job's */
	if (st->job_mem_peak_mib > f->mem_used_max_mib)
		f->mem_used_max_mib = st->job_mem_peak_mib;
	if (st->job_mem_limit_mib > 0)
		f->mem_limit_mib = st->job_mem_limit_mib;
	f->limit_hits = st->job_limit_hits;
	if (f->mem_limit_mib > 0 && f->mem_used_max_mib > f->mem_limit_mib)
		f->mem_used_max_mib = f->mem_limit_mib;
	/* killed in its cgroup: it was at its limit then, whatever a sample
	 * taken before the growth saw */
	if (f->oom_in_cgroup && f->mem_limit_mib > 0)
		f->mem_used_max_mib = f->mem_limit_mib;
	if ((c = xcol(st, RT_V_CG_THROTTLED)) && st->duration > 0)
		f->throttled_pct = c->sum / st->duration * 100.0;
	if ((c = xcol(st, RT_V_CG_CPU_LIMIT)))
		f->cpu_limit = c->max;
	if ((c = xcol(st, RT_V_PSI_CPU_SOME)))
		f->psi_cpu = c->mean;
	if ((c = xcol(st, RT_V_PSI_MEM_SOME)))
		f->psi_mem = c->mean;
	if ((c = xcol(st, RT_V_PSI_IO_SOME)))
		f->psi_io = c->mean;
	if ((c = xcol(st, RT_V_DISK_RLAT))) {
		f->disk_rlat = c->mean;
		f->disk_rlat_p95 = c->p95;
		f->disk_rlat_n = c->n;
	}
	if ((c = xcol(st, RT_V_DISK_WLAT))) {
		f->disk_wlat = c->mean;
		f->disk_wlat_p95 = c->p95;
		f->disk_wlat_n = c->n;
	}
	if ((c = xcol(st, RT_V_GPUS_THROTTLED)))
		f->gpus_throttled = c->mean;
}

static void why(struct rt_recommendation *r, const char *s)
{
	size_t n = strlen(r->why);
	snprintf(r->why + n, sizeof(r->why) - n, "%s%s", n ? "; " : "", s);
	/* and by resource, for the lines that show each one */
	char *to = !strncmp(s, "CPU: ", 5)      ? r->why_cpu
	           : !strncmp(s, "memory: ", 8) ? r->why_mem
	                                        : NULL;
	if (to) {
		size_t m = strlen(to);
		snprintf(to + m, sizeof(r->why_cpu) - m, "%s%s", m ? "; " : "", strchr(s, ':') + 2);
	}
}

/* The memory peak the answer is built from (rt_runstats.mem_peak_mib). */
static double mem_peak(const struct rt_runstats *st);

double rt_stats_mem_peak(const struct rt_runstats *st)
{
	return mem_peak(st);
}

static double mem_peak(const struct rt_runstats *st)
{
	if (st->mem_peak_mib >= 0)
		return st->mem_peak_mib;
	return max_of(st, st->has_proc ? RT_V_PROC_PSS : RT_V_MEM_USED);
}

int rt_cpu_demand(const struct rt_runstats *st, double *used, double *waited)
{
	const struct rt_colstat *w = xcol(st, RT_V_PROC_CPU_WAIT);
	const struct rt_colstat *u = xcol(st, RT_V_PROC_UTIME), *s = xcol(st, RT_V_PROC_STIME);
	if (!st->has_proc || !w || !u || !(st->duration > 0))
		return -1;
	double secs = rt_stats_secs(st, RT_V_PROC_UTIME);
	*used = (u->sum + (s ? s->sum : 0)) / secs;
	*waited = w->sum / secs;
	return 0;
}

/* GPUs: a job that held VRAM or kept a GPU busy gets as many as it held
 * at once (at least one), each with its peak VRAM on one GPU plus 20 %
 * (the total over its GPUs in runs recorded before rt 0.4, which do not
 * say per GPU). Without a tree, the reference's rule on the host's use. */
static void recommend_gpu(const struct rt_runstats *st, struct rt_recommendation *r)
{
	if (!st->has_proc) {
		double gpu = nearbyint(max_of(st, RT_V_GPU_USAGE));
		r->gpu = mean_of(st, RT_V_GPU_USAGE) > 0 ? (gpu < 1 ? 1 : (long)gpu) : 0;
		double vram = max_of(st, RT_V_GPU_VRAM);
		r->vram_mib = vram > 0 ? rt_round_memory(vram * 1.2) : 0;
		return;
	}
	double held = max_of(st, RT_V_PROC_GPU_UTILIZED), vram = max_of(st, RT_V_PROC_GPU_VRAM);
	double one = rt_gpu_vram_one(st);
	int used = held > 0 || vram > 0 || max_of(st, RT_V_PROC_GPU_USAGE) > 0;
	r->gpu = !used ? 0 : held > 1 ? (long)held : 1;
	double per_gpu = one >= 0 ? one : vram;
	r->vram_mib = per_gpu > 0 ? rt_round_memory(per_gpu * 1.2) : 0;
}

/* The most threads the tracked tree had at once: what it could run at
 * once, at most. 0: unknown (records without the count). */
static long tree_threads_max(const struct rt_runstats *st)
{
	const struct rt_colstat *t = xcol(st, RT_V_PROC_THREADS);
	return t && t->max >= 1 ? (long)t->max : 0;
}

/* Throttled by a CPU quota: one vCPU above it, but never more than the
 * tree could run at once (a single thread under half a core needs one). */
static void raise_for_quota(struct rt_recommendation *r, double limit, long most)
{
	long c = (long)ceil(limit) + 1;
	if (most > 0 && c > most) {
		if (most > r->cpu) {
			char b[160];
			snprintf(b, sizeof(b),
			         "CPU: throttled by its quota; it ran %ld threads at most, so %ld "
			         "vCPU%s",
			         most, most, most == 1 ? "" : "s");
			r->cpu = most;
			why(r, b);
		}
		return;
	}
	if (c >= r->cpu) {
		r->cpu = c;
		why(r, "CPU: throttled by its quota, so one vCPU above it");
	}
}

/* Killed in its cgroup: it wanted more than it could have, and how much
 * more was not seen. At least its limit x 1.2 on the usual steps (its
 * peak's where no limit is known). */
static void raise_for_oom(struct rt_recommendation *r, const struct rt_findings *f)
{
	double base = f->mem_limit_mib > 0 ? f->mem_limit_mib : f->mem_used_max_mib;
	long m = rt_round_memory(base * 1.2);
	char b[200];
	if (m <= (long)ceil(base))
		m = rt_round_memory(base + 1); /* never the limit that killed it */
	if (m < r->memory_mib)
		return;
	r->memory_mib = m;
	r->memory_at_least = 1;
	snprintf(b, sizeof(b),
	         "memory: OOM-killed in its cgroup at %s %.0f MiB, so its need was not seen: at "
	         "least that x 1.2",
	         f->mem_limit_mib > 0 ? "its limit of" : "the peak of its group,", base);
	why(r, b);
}

void rt_recommend(const struct rt_runstats *st, struct rt_recommendation *r)
{
	memset(r, 0, sizeof(*r)); /* every field set below or left 0 (memory_at_least) */
	int sys = !st->has_proc;
	r->from_system = sys;
	/* Python's round() rounds halves to even; so does nearbyint */
	double cpu = nearbyint(mean_of(st, sys ? RT_V_CPU_UTIL : RT_V_PROC_CORES));
	r->cpu = cpu < 1 ? 1 : (long)cpu;
	/* the reference rounds the mean; beside it, what the busy moments ask */
	const struct rt_colstat *cc = xcol(st, sys ? RT_V_CPU_UTIL : RT_V_PROC_CORES);
	double p95 = cc ? ceil(cc->p95 - 0.05) : 1; /* 2.03 cores is 2 vCPUs' worth, not 3 */
	r->cpu_p95 = p95 < 1 || isnan(p95) ? 1 : (long)p95;
	double peak = mem_peak(st);
	r->memory_mib = rt_round_memory(peak * 1.2);
	const struct rt_colstat *pss = xcol(st, RT_V_PROC_PSS);
	if (!sys && pss && peak > pss->max * 1.05 && peak >= 1) {
		char b[160];
		if (st->job_mem_peak_mib >= peak) /* (killed: its group's, summary.c) */
			snprintf(b, sizeof(b),
			         "memory: from the %.0f MiB its cgroup reached (the group's "
			         "high-water mark), above the %.0f MiB the samples saw",
			         peak, pss->max);
		else
			snprintf(
			    b, sizeof(b),
			    "memory: from the %.0f MiB one process reached between samples (its "
			    "high-water mark), above the %.0f MiB the samples saw",
			    peak, pss->max);
		why(r, b);
	}
	if (!sys && st->hwm_before_mib > 0 && !r->why_mem[0])
		snprintf(r->mem_note, sizeof(r->mem_note),
		         "peak between samples unknown: the high-water mark predates tracking (a "
		         "process had reached %.0f MiB before rt started; left out)",
		         st->hwm_before_mib);
	recommend_gpu(st, r);
	/* a job that waited for a CPU on a busy host wanted more than it got:
	 * its threads were runnable for used + waited cores on average */
	double used, waited;
	long most = sys ? 0 : tree_threads_max(st);
	if (!sys && rt_cpu_demand(st, &used, &waited) == 0 && waited >= RT_WAIT_CORES &&
	    waited >= RT_WAIT_SHARE * used) {
		double want = nearbyint(used + waited);
		if (most > 0 && want > (double)most)
			want = (double)most; /* never more than it could run at once */
		if (want > r->cpu) {
			char b[160];
			snprintf(
			    b, sizeof(b),
			    "CPU: it waited for a CPU %.1f cores' worth on average (the host was "
			    "busy), so from what it wanted: %.1f used + %.1f waited",
			    waited, used, waited);
			r->cpu = (long)want;
			why(r, b);
		}
	}
	/* what it used is not what it needed when something held it back */
	struct rt_findings f;
	rt_findings(st, &f);
	if (f.oom_kills > 0 && f.oom_in_cgroup)
		raise_for_oom(r, &f);
	if (f.throttled_pct >= RT_THROTTLED_PCT && f.cpu_limit > 0)
		raise_for_quota(r, f.cpu_limit, most);
	if (f.psi_mem >= RT_MEM_STALL_PCT && !(f.oom_kills > 0 && f.oom_in_cgroup)) {
		long m = rt_round_memory(peak * 1.5);
		if (m > r->memory_mib) {
			r->memory_mib = m;
			why(r, "memory: stalled waiting for memory, so 50 % above its peak");
		}
	}
}

void rt_disk_space_note(const struct rt_runstats *st, char *buf, size_t cap)
{
	buf[0] = '\0';
	const struct rt_colstat *t = xcol(st, RT_V_SPACE_TOTAL);
	const struct rt_colstat *r = xcol(st, RT_V_SPACE_RESERVED);
	const struct rt_colstat *u = xcol(st, RT_V_SPACE_USED);
	if (!t)
		return;
	/* what df shows: the root reserve is neither used nor available. The
	 * reference's figure (its CSV column, rt_tracker's stats()) counts the
	 * reserve as used: named beside it when they differ, so every view of
	 * one host says the same two figures, each for what it is */
	if (r && r->max >= 1.0 && r->max >= t->max / 100)
		snprintf(buf, cap,
		         "of %.1f GB (filesystems), %.1f GB more reserved for root; with it, "
		         "%.1f GB not available (system_disk_space_used_gb: total - available)",
		         t->max, r->max, u ? u->max : t->max);
	else
		snprintf(buf, cap, "of %.1f GB (filesystems)", t->max);
}
