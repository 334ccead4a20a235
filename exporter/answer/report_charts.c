/*
 * report_charts.c - the report's charts: each series bucketed (at most
 * RT_REPORT_BUCKETS points), as the JSON the page's dygraphs draw, and what
 * a chart leaves out.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "answer/answer.h"
#include "answer/report_int.h"
#include "rt/common.h"
#include "rt/runmeta.h"
#include "rt/safefile.h"

/* ---- charts ----------------------------------------------------------- */
struct series_def {
	const char *label;
	unsigned column; /* value id */
	int rate;        /* 1: bytes per interval shown as bytes per second;
	                    2: seconds per interval as % of the interval */
};

struct chart_def {
	const char *id, *title, *unit; /* unit: "cores", "MiB", "GPUs", "B/s", "GB", "" */
	int gpu;                       /* only when the run saw a GPU */
	struct series_def s[4];
};

static const struct chart_def charts[] = {
    {"cpu",
     "CPU (job: Process CPU usage, host: System CPU usage)",
     "cores",
     0,
     {{"job", RT_V_PROC_CORES, 0}, {"host", RT_V_CPU_UTIL, 0}}},
    {"memory",
     "Memory (job PSS, host used)",
     "MiB",
     0,
     {{"job", RT_V_PROC_PSS, 0}, {"host", RT_V_MEM_USED, 0}}},
    {"gpu",
     "GPU utilization",
     "GPUs",
     1,
     {{"job", RT_V_PROC_GPU_USAGE, 0}, {"host", RT_V_GPU_USAGE, 0}}},
    {"vram",
     "GPU memory (VRAM)",
     "MiB",
     1,
     {{"job", RT_V_PROC_GPU_VRAM, 0}, {"host", RT_V_GPU_VRAM, 0}}},
    {"gpus",
     "GPUs in use",
     "GPUs",
     1,
     {{"job", RT_V_PROC_GPU_UTILIZED, 0}, {"host", RT_V_GPU_UTILIZED, 0}}},
    {"disk",
     "Disk read / write",
     "B/s",
     0,
     {{"job read", RT_V_PROC_READ, 1},
      {"job write", RT_V_PROC_WRITE, 1},
      {"host read", RT_V_DISK_READ, 1},
      {"host write", RT_V_DISK_WRITE, 1}}},
    {"space", "Disk space in use (df)", "GB", 0, {{"host", RT_V_SPACE_DF_USED, 0}}},
    {"pressure",
     "Time stalled (pressure)",
     "%",
     0,
     {{"CPU", RT_V_PSI_CPU_SOME, 0},
      {"memory", RT_V_PSI_MEM_SOME, 0},
      {"I/O", RT_V_PSI_IO_SOME, 0}}},
    {"disklat",
     "Disk latency (completed reads and writes)",
     "ms",
     0,
     {{"read", RT_V_DISK_RLAT, 0}, {"write", RT_V_DISK_WLAT, 0}}},
    {"throttled",
     "CPU throttled by the cgroup quota (share of the time)",
     "%",
     0,
     {{"job's cgroup", RT_V_CG_THROTTLED, 2}}},
    {"net", "Network in / out", "B/s", 0, {{"received", RT_V_NET_RX, 1}, {"sent", RT_V_NET_TX, 1}}},
};
/* The value of series d at line i (NAN: empty). */
static double value(const struct rt_series *s, int c, int rate, size_t i)
{
	double v = s->col[c][i];
	if (rate && !isnan(v))
		v = s->dt[i] > 0 ? v / s->dt[i] * (rate == 2 ? 100 : 1) : NAN;
	return v;
}

/* One chart's data: [[x,[lo,mean,hi],...],...] over at most B buckets. */
static void chart_data(struct rt_buf *b, const struct rt_series *s, const int *cols,
                       const int *rate, int ns, double given)
{
	size_t n = s->n;
	double t0 = n ? s->elapsed[0] - s->dt[0] : 0, t1 = n ? s->elapsed[n - 1] : 0;
	if (t0 < 0)
		t0 = 0;
	size_t buckets = n < RT_REPORT_BUCKETS ? n : RT_REPORT_BUCKETS;
	double width = buckets ? (t1 - t0) / (double)buckets : 0;
	rt_buf_putc(b, '[');
	size_t i = 0;
	for (size_t k = 0; k < buckets && i < n; k++) {
		double end = k + 1 == buckets ? INFINITY : t0 + width * (double)(k + 1);
		size_t from = i;
		while (i < n && (s->elapsed[i] <= end || i == from))
			i++;
		/* the bucket's time: its last line's */
		rt_buf_puts(b, k ? ",[" : "[");
		rep_num(b, s->elapsed[i - 1]);
		for (int d = 0; d < ns; d++) {
			double lo = INFINITY, hi = -INFINITY, sum = 0, w = 0, plain = 0;
			size_t m = 0;
			for (size_t j = from; j < i; j++) {
				double v = value(s, cols[d], rate[d], j);
				if (isnan(v))
					continue;
				lo = v < lo ? v : lo;
				hi = v > hi ? v : hi;
				sum += v * s->dt[j];
				w += s->dt[j];
				plain += v;
				m++;
			}
			rt_buf_puts(b, ",[");
			if (m) {
				rep_num(b, lo);
				rt_buf_putc(b, ',');
				rep_num(b, w > 0 ? sum / w : plain / (double)m);
				rt_buf_putc(b, ',');
				rep_num(b, hi);
			} else {
				rt_buf_puts(b, "null,null,null");
			}
			rt_buf_putc(b, ']');
		}
		if (!isnan(given)) { /* the allocation: the same in every bucket */
			rt_buf_puts(b, ",[");
			rep_num(b, given);
			rt_buf_putc(b, ',');
			rep_num(b, given);
			rt_buf_putc(b, ',');
			rep_num(b, given);
			rt_buf_putc(b, ']');
		}
		rt_buf_putc(b, ']');
	}
	rt_buf_putc(b, ']');
}

/* Each GPU: its model, what the job did on it (the summary's GPU lines). */
void rep_gpu_section(struct rt_buf *b, const struct rt_runstats *st)
{
	int any = 0;
	for (unsigned i = 0; i < st->ngpu; i++) {
		if (st->gpu[i].w <= 0)
			continue;
		char t[RT_NOTE_LEN];
		rt_gpu_note_text(t, sizeof(t), st, i);
		rt_buf_puts(b, any++ ? "<li>" : "<section class=wide><h2>GPUs</h2><ul><li>");
		rt_buf_printf(b, "GPU %u: ", i);
		rep_html(b, t);
		rt_buf_puts(b, "</li>");
	}
	if (any)
		rt_buf_puts(b, "</ul></section>\n");
}

static int saw_gpu(const struct rt_answer *a)
{
	int c = rt_stats_col(RT_V_GPU_UTILIZED);
	return rt_meta_num(a->meta, "host", "gpu_count") > 0 ||
	       (c >= 0 && a->st.col[c].present && a->st.col[c].max > 0);
}

/* Why chart c has nothing to show in this run (NULL: draw it). */
static const char *left_out(const struct rt_answer *a, const struct chart_def *c)
{
	const struct rt_runstats *st = &a->st;
	double max = 0;
	size_t n = 0;
	for (int d = 0; d < 4 && c->s[d].label; d++) {
		int col = rt_stats_col(c->s[d].column);
		if (col >= 0 && st->col[col].present) {
			max = st->col[col].max > max ? st->col[col].max : max;
			n = st->col[col].n > n ? st->col[col].n : n;
		}
	}
	if (!strcmp(c->id, "net") && max <= 0)
		return "network (0 B/s throughout)";
	if (!strcmp(c->id, "throttled")) {
		int q = rt_stats_col(RT_V_CG_CPU_LIMIT);
		if (q < 0 || !st->col[q].present || st->col[q].max <= 0)
			return "CPU throttling (the job had no CPU quota)";
		if (max <= 0)
			return "CPU throttling (never throttled)";
	}
	if (!strcmp(c->id, "pressure") && n && max <= 0)
		return "pressure (no stall at all)";
	if (!strcmp(c->id, "disklat") && n < RT_DISK_SLOW_MIN_INTERVALS)
		return "disk latency (too few intervals with I/O to draw)";
	return NULL;
}

void rep_charts_json(struct rt_buf *b, const struct rt_answer *a)
{
	if (!a->series.n) { /* nothing to draw (dygraphs refuses empty data) */
		rt_buf_puts(b, "[]");
		return;
	}
	rt_buf_puts(b, "[");
	int first = 1;
	for (size_t k = 0; k < RT_ARRAY_LEN(charts); k++) {
		const struct chart_def *c = &charts[k];
		if ((c->gpu && !saw_gpu(a)) || left_out(a, c))
			continue;
		int cols[4], rate[4], ns = 0;
		const char *labels[4];
		for (int d = 0; d < 4 && c->s[d].label; d++) {
			int col = rt_stats_col(c->s[d].column);
			if (col < 0 || !a->st.col[col].present)
				continue; /* no process columns in a standalone run */
			cols[ns] = col;
			rate[ns] = c->s[d].rate;
			labels[ns++] = c->s[d].label;
		}
		if (!ns)
			continue;
		rt_buf_puts(b, first ? "{" : ",{");
		first = 0;
		rt_buf_printf(b, "\"id\":\"%s\",\"title\":", c->id);
		rep_js_str(b, c->title);
		rt_buf_printf(b, ",\"unit\":\"%s\",\"labels\":[", c->unit);
		for (int d = 0; d < ns; d++) {
			if (d)
				rt_buf_putc(b, ',');
			rep_js_str(b, labels[d]);
		}
		/* what the job was given (a request, its cgroup's limit, Slurm,
		 * its affinity): a dashed line on the CPU and memory charts */
		double given = NAN;
		const char *from = NULL;
		if (!strcmp(c->id, "cpu") || !strcmp(c->id, "memory")) {
			int cpu = !strcmp(c->id, "cpu");
			from = rt_meta_str(a->meta, "allocation", cpu ? "cpu_from" : "memory_from");
			given = rt_meta_num(a->meta, "allocation", cpu ? "cpu" : "memory_bytes");
			if (!cpu)
				given /= 1048576.0;
			if (!from || !strcmp(from, "host") || !(given > 0))
				given = NAN;
		}
		if (!isnan(given)) {
			char l[96];
			snprintf(l, sizeof(l), "given (%s)", from);
			rt_buf_putc(b, ',');
			rep_js_str(b, l);
			rt_buf_puts(b, "],\"dashed\":[");
			rep_js_str(b, l);
		}
		rt_buf_puts(b, "],\"data\":");
		chart_data(b, &a->series, cols, rate, ns, given);
		rt_buf_putc(b, '}');
	}
	rt_buf_puts(b, "]");
}

/* One line for the charts with nothing to show. */
void rep_left_out_line(struct rt_buf *b, const struct rt_answer *a)
{
	int nleft = 0;
	for (size_t k = 0; a->series.n && k < RT_ARRAY_LEN(charts); k++) {
		const char *why = charts[k].gpu && !saw_gpu(a) ? NULL : left_out(a, &charts[k]);
		if (!why)
			continue;
		rt_buf_puts(
		    b, nleft++ ? "; " : "<p class=note id=left-out>Not charted, nothing to show: ");
		rep_html(b, why);
	}
	if (nleft)
		rt_buf_puts(b, ".</p>\n");
}
