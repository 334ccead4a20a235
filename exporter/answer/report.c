/*
 * report.c - `rt-export report RUN`: one self-contained HTML page.
 *
 * The page carries everything it needs: the dygraphs library (Debian's
 * libjs-dygraphs, read from its installed path when the report is made and
 * inlined, never a link), the run's cards and tables, and the chart data.
 * It opens offline from file:// and fetches nothing.
 *
 * Long runs stay small: each chart gets at most RT_REPORT_BUCKETS points,
 * each a time bucket with the minimum, the time-weighted mean and the
 * maximum of the lines in it (dygraphs' custom bars), so a one-second spike
 * in a day-long run still shows as a band reaching up to it.
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
#include "rt/common.h"
#include "rt/runmeta.h"
#include "rt/safefile.h"

#define RT_REPORT_BUCKETS 1200
#define DYGRAPHS_DIR "/usr/share/javascript/dygraphs"

/* ---- text helpers --------------------------------------------------------- */

static void html(struct rt_buf *b, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '<': rt_buf_puts(b, "&lt;"); break;
		case '>': rt_buf_puts(b, "&gt;"); break;
		case '&': rt_buf_puts(b, "&amp;"); break;
		case '"': rt_buf_puts(b, "&quot;"); break;
		case '\'': rt_buf_puts(b, "&#39;"); break;
		default:
			/* control bytes: shown, never passed on */
			if ((unsigned char)*s < 0x20 || *s == 0x7f)
				rt_buf_printf(b, "\\x%02x", (unsigned char)*s);
			else
				rt_buf_putc(b, *s);
		}
	}
}

/* A JSON string safe inside <script>: no "</" can close the element. */
static void js_str(struct rt_buf *b, const char *s)
{
	struct rt_buf t = {0};
	rt_buf_json_str(&t, s ? s : "");
	for (size_t i = 0; i < t.len; i++) {
		if (t.p[i] == '<')
			rt_buf_puts(b, "\\u003c");
		else
			rt_buf_putc(b, t.p[i]);
	}
	rt_buf_free(&t);
}

/* Append a file of the library, without its source-map comment (the page
 * must not ask for anything) and with "</" made harmless. */
static int inline_file(struct rt_buf *b, const char *dir, const char *name, int script)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	struct rt_buf t = {0};
	char chunk[65536];
	ssize_t n;
	while ((n = read(fd, chunk, sizeof(chunk))) > 0)
		rt_buf_put(&t, chunk, (size_t)n);
	int err = n < 0 ? -errno : 0;
	close(fd);
	if (err || t.oom) {
		rt_buf_free(&t);
		return err ? err : -ENOMEM;
	}
	rt_buf_put(&t, "", 0);
	const char *end_tag = script ? "</script" : "</style";
	for (char *line = t.p; line && *line;) {
		char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line + 1) : strlen(line);
		if (!memmem(line, len, "sourceMappingURL=", 17)) {
			for (size_t i = 0; i < len; i++) {
				if (line[i] == '<' &&
				    !strncasecmp(line + i, end_tag, strlen(end_tag)))
					rt_buf_puts(b, "<\\");
				else
					rt_buf_putc(b, line[i]);
			}
		}
		line = nl ? nl + 1 : NULL;
	}
	rt_buf_putc(b, '\n');
	rt_buf_free(&t);
	return 0;
}

/* A number for the chart data: short, and null when not finite. */
static void num(struct rt_buf *b, double v)
{
	if (!isfinite(v))
		rt_buf_puts(b, "null");
	else
		rt_buf_printf(b, "%.6g", v);
}

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
		num(b, s->elapsed[i - 1]);
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
				num(b, lo);
				rt_buf_putc(b, ',');
				num(b, w > 0 ? sum / w : plain / (double)m);
				rt_buf_putc(b, ',');
				num(b, hi);
			} else {
				rt_buf_puts(b, "null,null,null");
			}
			rt_buf_putc(b, ']');
		}
		if (!isnan(given)) { /* the allocation: the same in every bucket */
			rt_buf_puts(b, ",[");
			num(b, given);
			rt_buf_putc(b, ',');
			num(b, given);
			rt_buf_putc(b, ',');
			num(b, given);
			rt_buf_putc(b, ']');
		}
		rt_buf_putc(b, ']');
	}
	rt_buf_putc(b, ']');
}

/* Each GPU: its model, what the job did on it (the summary's GPU lines). */
static void gpu_section(struct rt_buf *b, const struct rt_runstats *st)
{
	int any = 0;
	for (unsigned i = 0; i < st->ngpu; i++) {
		if (st->gpu[i].w <= 0)
			continue;
		char t[RT_NOTE_LEN];
		rt_gpu_note_text(t, sizeof(t), st, i);
		rt_buf_puts(b, any++ ? "<li>" : "<section class=wide><h2>GPUs</h2><ul><li>");
		rt_buf_printf(b, "GPU %u: ", i);
		html(b, t);
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

static void charts_json(struct rt_buf *b, const struct rt_answer *a)
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
		js_str(b, c->title);
		rt_buf_printf(b, ",\"unit\":\"%s\",\"labels\":[", c->unit);
		for (int d = 0; d < ns; d++) {
			if (d)
				rt_buf_putc(b, ',');
			js_str(b, labels[d]);
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
			js_str(b, l);
			rt_buf_puts(b, "],\"dashed\":[");
			js_str(b, l);
		}
		rt_buf_puts(b, "],\"data\":");
		chart_data(b, &a->series, cols, rate, ns, given);
		rt_buf_putc(b, '}');
	}
	rt_buf_puts(b, "]");
}

/* ---- cards and tables ------------------------------------------------------ */

static void card_row(struct rt_buf *b, const char *k, const char *v)
{
	rt_buf_puts(b, "<tr><th>");
	html(b, k);
	rt_buf_puts(b, "</th><td>");
	html(b, v && *v ? v : "-");
	rt_buf_puts(b, "</td></tr>\n");
}

static void card_num(struct rt_buf *b, const char *k, double v, int prec, const char *unit)
{
	char t[64] = "-";
	if (isfinite(v))
		snprintf(t, sizeof(t), "%.*f%s%s", prec, v, *unit ? " " : "", unit);
	card_row(b, k, t);
}

/* The run's state in the words the reference's report uses: Pending while
 * it is recorded, Finished, Failed (or Unknown: its end was not seen). */
static const char *status_word(const char *status)
{
	switch (rt_run_status_of(status)) {
	case RT_RUN_RUNNING: return "Pending";
	case RT_RUN_FINISHED:
	case RT_RUN_UNTRACKED: return "Finished";
	case RT_RUN_UNKNOWN: return "Unknown";
	default: return "Failed";
	}
}

static void job_card(struct rt_buf *b, const struct rt_answer *a)
{
	char t[512], u[64];
	rt_buf_puts(b, "<section class=card><h2>Job</h2><table>\n");
	card_row(b, "name", a->ri.job_name);
	t[0] = '\0';
	struct rt_buf cb = {0}; /* shell-quoted: it can be pasted back */
	rt_shell_join(&cb, cJSON_GetObjectItemCaseSensitive(a->meta, "command"));
	rt_buf_put(&cb, "", 0);
	card_row(b, "command", cb.len ? cb.p : "(standalone: the whole system)");
	rt_buf_free(&cb);
	snprintf(t, sizeof(t), "%s (%s%s)", status_word(a->ri.status), a->ri.status,
	         a->partial ? ", partial" : "");
	card_row(b, "status", t);
	if (a->has_exit_code)
		snprintf(t, sizeof(t), "%d", a->exit_code);
	card_row(b, "exit code", a->has_exit_code ? t : NULL);
	rt_fmt_iso8601(t, sizeof(t), a->ri.start_ns);
	card_row(b, "start", a->ri.start_ns ? t : NULL);
	rt_fmt_iso8601(t, sizeof(t), a->ri.end_ns);
	card_row(b, "end", a->ri.end_ns ? t : NULL);
	rt_fmt_duration(u, sizeof(u), a->st.duration);
	snprintf(t, sizeof(t), "%s (%llu sample%s every %g s)", u, (unsigned long long)a->st.lines,
	         a->st.lines == 1 ? "" : "s", a->ri.interval);
	card_row(b, "duration", t);
	rt_buf_puts(b, "</table></section>\n");
}

static void host_card(struct rt_buf *b, const struct rt_answer *a)
{
	char t[256];
	const cJSON *m = a->meta;
	rt_buf_puts(b, "<section class=card><h2>Host</h2><table>\n");
	card_row(b, "hostname", rt_meta_str(m, "host", "hostname"));
	card_row(b, "OS", "Linux");
	card_num(b, "vCPUs", rt_meta_num(m, "host", "vcpus"), 0, "");
	card_row(b, "CPU", rt_meta_str(m, "host", "cpu_model"));
	card_num(b, "memory", rt_meta_num(m, "host", "memory_mib"), 0, "MiB");
	/* the devices' size: a filesystem on it has less (the summary's "of N
	 * GB" is the filesystem's, as df says) */
	card_num(b, "storage (devices)", rt_meta_num(m, "host", "storage_gb"), 1, "GB");
	double g = rt_meta_num(m, "host", "gpu_count");
	const char *gm = rt_meta_str(m, "host", "gpu_model");
	if (g > 0)
		snprintf(t, sizeof(t), "%.0f x %s", g, gm ? gm : "GPU");
	else
		snprintf(t, sizeof(t), "none");
	card_row(b, "GPUs", t);
	card_num(b, "VRAM", g > 0 ? rt_meta_num(m, "host", "gpu_memory_mib") : NAN, 0, "MiB");
	char why[200], alloc[260];
	const char *name = rt_allocation_name(rt_stats_allocation_why(&a->st, why, sizeof(why)));
	if (name)
		snprintf(alloc, sizeof(alloc), "%s: %s", name, why);
	card_row(b, "allocation", name ? alloc : NULL);
	rt_buf_puts(b, "</table></section>\n");
}

/* What the job was given against what it used (the run's allocation). */
static void given_card(struct rt_buf *b, const struct rt_answer *a)
{
	struct rt_efficiency e;
	struct rt_recommendation r;
	rt_recommend(&a->st, &r);
	rt_efficiency(&a->st, a->meta, &e);
	char line[300], eff[6][RT_EFF_LEN];
	rt_buf_puts(b, "<section class=card><h2>Given against used</h2><table>\n");
	if (a->st.lines) {
		rt_answer_line(line, sizeof(line), &a->st, &e, &r);
		card_row(b, "answer", line);
	}
	size_t n = rt_efficiency_text(&e, &r, eff, 6);
	for (size_t i = 0; i < n; i++)
		card_row(b, i ? "" : "allocation", eff[i]);
	if (!e.known)
		card_row(b, "allocation", "not recorded (a run of an rt before 0.3)");
	else if (!n)
		card_row(b, "allocation", "the whole host; nothing was asked or limited");
	rt_buf_puts(b, "</table></section>\n");
}

static void cloud_card(struct rt_buf *b, const struct rt_offer *o)
{
	rt_buf_puts(b, "<section class=card><h2>Cloud</h2><table>\n");
	if (!o->cloud.vendor[0]) { /* what discovery found, or why it could not run */
		card_row(b, "vendor",
		         o->cloud_known
		             ? "none: not a cloud instance (no metadata service answered)"
		             : "not known: the run was recorded on another host, never "
		               "discovered from there");
	} else {
		card_row(b, "vendor", o->cloud.vendor);
		card_row(b, "region", o->cloud.region);
		card_row(b, "zone", o->cloud.zone);
		card_row(b, "instance type", o->cloud.instance_type);
		card_num(b, "price", o->price_here, 4, "USD/hour");
		double cost = isfinite(o->price_here) ? o->price_here * o->duration / 3600.0 : NAN;
		/* a short run costs fractions of a cent: shown, not as 0.0000 */
		card_num(b, "run cost", cost, isfinite(cost) && cost < 0.01 ? 6 : 4, "USD");
	}
	rt_buf_puts(b, "</table></section>\n");
}

static void summary_table(struct rt_buf *b, const struct rt_answer *a)
{
	struct rt_summary_row rows[RT_SUMMARY_ROWS];
	size_t n = rt_summary_rows(&a->st, a->meta, rows, RT_SUMMARY_ROWS);
	char v[64];
	rt_buf_puts(
	    b, "<section class=wide><h2>Summary</h2><table class=stats>\n"
	       "<tr><th></th><th>mean</th><th>p95</th><th>max</th><th>total, note</th></tr>\n");
	for (size_t i = 0; i < n; i++) {
		const struct rt_summary_row *r = &rows[i];
		rt_buf_puts(b, "<tr><th>");
		html(b, r->label);
		rt_buf_puts(b, "</th>");
		if (r->c) {
			double vals[3] = {r->c->mean, r->c->p95, r->c->max};
			for (int k = 0; k < 3; k++) {
				snprintf(v, sizeof(v), "%.*f", r->prec, vals[k]);
				rt_buf_puts(b, "<td>");
				html(b, v);
				rt_buf_puts(b, "</td>");
			}
		} else {
			rt_buf_puts(b, "<td colspan=3></td>");
		}
		rt_buf_puts(b, "<td>");
		html(b, r->note);
		rt_buf_puts(b, "</td></tr>\n");
	}
	rt_buf_puts(b, "</table></section>\n");
}

static void reco_section(struct rt_buf *b, const struct rt_recommendation *r,
                         const struct rt_offer *o)
{
	char t[256];
	rt_buf_puts(b, "<section class=wide><h2>Recommended for the next run</h2><p class=reco>");
	const char *least = r->memory_at_least ? "at least " : "";
	if (r->cpu_p95 > r->cpu)
		snprintf(t, sizeof(t), "%ld vCPU%s (%ld at the p95 of its use), %s%ld MiB memory",
		         r->cpu, r->cpu == 1 ? "" : "s", r->cpu_p95, least, r->memory_mib);
	else
		snprintf(t, sizeof(t), "%ld vCPU%s, %s%ld MiB memory", r->cpu,
		         r->cpu == 1 ? "" : "s", least, r->memory_mib);
	html(b, t);
	rt_gpu_reco_text(t, sizeof(t), r);
	html(b, t);
	rt_buf_puts(b, "</p><p class=note>");
	html(b, r->from_system ? "From the whole system's use: this run tracked no process."
	        : r->gpu       ? "From the process tree: mean CPU rounded, peak PSS + 20 % "
	                         "rounded up to a server size, as many GPUs as it held at once "
	                         "with its peak VRAM on one GPU + 20 %."
	                       : "From the process tree: mean CPU rounded, peak PSS + 20 % "
	                         "rounded up to a server size.");
	rt_buf_puts(b, "</p>\n");
	if (r->why[0]) {
		rt_buf_puts(b, "<p class=note>Raised above the use measured: ");
		html(b, r->why);
		rt_buf_puts(b, ".</p>\n");
	}
	if (o->asked && !o->ok) {
		rt_buf_puts(b, "<p class=note>No server list: ");
		html(b, o->why);
		rt_buf_puts(b, "</p>\n");
	} else if (o->asked && o->nservers) {
		rt_buf_puts(b,
		            "<table class=servers><tr><th>vendor</th><th>instance</th><th>name</th>"
		            "<th>vCPUs</th><th>memory</th><th>GPUs</th><th>USD/hour</th>"
		            "<th>this run</th></tr>\n");
		for (size_t i = 0; i < o->nservers; i++) {
			const struct rt_server *v = &o->servers[i];
			char mem[32], price[32] = "-", cost[32] = "-";
			rt_fmt_bytes(mem, sizeof(mem),
			             isfinite(v->memory_amount) ? v->memory_amount * 1048576.0 : 0);
			if (isfinite(v->min_price_ondemand)) {
				snprintf(price, sizeof(price), "%.4f", v->min_price_ondemand);
				snprintf(cost, sizeof(cost), "%.4f",
				         v->min_price_ondemand * o->duration / 3600.0);
			}
			const char *cells[] = {v->vendor_id, v->api_reference, v->display_name};
			rt_buf_puts(b, "<tr>");
			for (int c = 0; c < 3; c++) {
				rt_buf_puts(b, "<td>");
				html(b, cells[c]);
				rt_buf_puts(b, "</td>");
			}
			rt_buf_printf(b, "<td>%.0f</td><td>", isfinite(v->vcpus) ? v->vcpus : 0);
			html(b, mem);
			rt_buf_printf(b, "</td><td>%.0f</td><td>%s</td><td>%s</td></tr>\n",
			              isfinite(v->gpu_count) ? v->gpu_count : 0, price, cost);
		}
		rt_buf_puts(b, "</table>\n");
		if (isfinite(o->price_here) && isfinite(o->servers[0].min_price_ondemand)) {
			double here = o->price_here * o->duration / 3600.0;
			double there = o->servers[0].min_price_ondemand * o->duration / 3600.0;
			int pr = here < 0.01 ? 6 : 4;
			snprintf(t, sizeof(t),
			         "This run cost %.*f USD on %s %s; on the cheapest fit %.*f USD "
			         "(saving %.*f USD).",
			         pr, here, o->cloud.vendor, o->cloud.instance_type, pr, there, pr,
			         here - there);
			rt_buf_puts(b, "<p class=note>");
			html(b, t);
			rt_buf_puts(b, "</p>\n");
		}
	}
	rt_buf_puts(b, "</section>\n");
}

/* ---- the page --------------------------------------------------------------- */

static const char page_css[] =
    "body{font:14px/1.4 system-ui,-apple-system,Segoe "
    "UI,sans-serif;margin:0;background:#f6f7f9;color:#1d232b}"
    "header{background:#1d3557;color:#fff;padding:14px 24px}"
    "header h1{margin:0;font-size:20px}header p{margin:2px 0 0;opacity:.85}"
    "main{display:flex;flex-wrap:wrap;gap:16px;padding:16px 24px}"
    ".card,.wide,.chartbox{background:#fff;border:1px solid #dde1e6;border-radius:6px;"
    "padding:10px 14px}"
    ".card{flex:1 1 280px}.wide{flex:1 1 100%}.chartbox{flex:1 1 560px;min-width:0}"
    "h2{font-size:15px;margin:0 0 8px}"
    "table{border-collapse:collapse}th,td{padding:2px 10px 2px 0;text-align:left;"
    "vertical-align:top}"
    ".card th{color:#58606b;font-weight:500}.stats td,.servers td{text-align:right}"
    ".stats{width:100%}.stats th{text-align:right}.stats th:first-child{text-align:left}"
    ".stats td:last-child,.stats th:last-child{text-align:left;padding-left:24px;width:50%}"
    ".runs td,.runs th{white-space:nowrap}.runs td{text-align:right}"
    ".runs td:nth-child(2),.runs td:nth-child(4){text-align:left}.runs th{font-weight:600}"
    ".stats th,.servers th{font-weight:600}.reco{font-size:18px;font-weight:600;margin:4px 0}"
    ".note{color:#58606b;margin:4px 0}.chart{height:220px}.legend{min-height:20px;"
    "font-size:12px}"
    ".legend span{margin-right:8px}footer{padding:8px 24px 20px;color:#58606b;font-size:12px}";

static const char page_js[] =
    "(function(){'use strict';\n"
    "var D=JSON.parse(document.getElementById('rt-data').textContent);\n"
    "function pad(n){return(n<10?'0':'')+n;}\n"
    "function elapsed(s){if(D.span<120)return s.toFixed(D.span<10?2:1)+' s';"
    "s=Math.max(0,Math.round(s));var h=Math.floor(s/3600),"
    "m=Math.floor(s/60)%60,x=s%60;return h?h+':'+pad(m)+':'+pad(x):m+':'+pad(x);}\n"
    "function clock(s){var d=new Date(D.wall0_ms+s*1000);return d.getFullYear()+'-'+"
    "pad(d.getMonth()+1)+'-'+pad(d.getDate())+' '+pad(d.getHours())+':'+pad(d.getMinutes())+"
    "':'+pad(d.getSeconds());}\n"
    "function day(s){var d=new Date(s*1000),m=pad(d.getMonth()+1)+'-'+pad(d.getDate());"
    "var hm=pad(d.getHours())+':'+pad(d.getMinutes());"
    "return D.span<3600?hm+':'+pad(d.getSeconds()):D.span<172800?m+' '+hm:d.getFullYear()+'-'+m;}\n"
    "function clockAt(s){var d=new Date(s*1000);return d.getFullYear()+'-'+pad(d.getMonth()+1)+"
    "'-'+pad(d.getDate())+' '+pad(d.getHours())+':'+pad(d.getMinutes())+':'+pad(d.getSeconds());}\n"
    "function human(v,u){if(v===null||v===undefined||isNaN(v))return '-';"
    "if(u==='B/s'){var k=['B/s','KiB/s','MiB/s','GiB/s','TiB/s'],i=0;"
    "while(Math.abs(v)>=1024&&i<4){v/=1024;i++;}return v.toFixed(i||Math.abs(v)<10?1:0)+' '+k[i];}"
    "var p=Math.abs(v)>=100?0:Math.abs(v)>=10?1:2;return v.toFixed(p)+(u?' '+u:'');}\n"
    /* round ticks in the unit they are labeled in: 1, 2 or 5 x 10^k of
     * KiB/s, MiB/s... for bytes, of the chart's unit otherwise */
    "function ticks(u){return function(min,max,px){var k=['B/s','KiB/s','MiB/s','GiB/s','TiB/s'],"
    "i=0,s=1;if(u==='B/s'){var m=Math.max(Math.abs(min),Math.abs(max));"
    "while(m>=1024&&i<4){m/=1024;s*=1024;i++;}}var lo=min/s,hi=max/s;if(!(hi>lo))hi=lo+1;"
    "var "
    "raw=(hi-lo)/Math.max(2,Math.floor(px/50)),p=Math.pow(10,Math.floor(Math.log(raw)/Math.LN10)),"
    "st=p*(raw<=p?1:raw<=2*p?2:raw<=5*p?5:10),t=[];"
    "for(var v=Math.ceil(lo/st-1e-9)*st;v<=hi+st*1e-9&&t.length<50;v+=st){"
    "var "
    "r=parseFloat(v.toPrecision(12)),w=u==='B/"
    "s'?k[i]:r===1&&(u==='cores'||u==='GPUs')?u.slice(0,-1):u;"
    "t.push({v:r*s,label:String(r)+' '+w});}"
    "return t;};}\n"
    "var box=document.getElementById('charts'),gs=[];\n"
    "D.charts.forEach(function(c){\n"
    " var s=document.createElement('section');s.className='chartbox';"
    " var h=document.createElement('h2');h.textContent=c.title;"
    " var el=document.createElement('div');el.className='chart';el.id='chart-'+c.id;"
    " var lg=document.createElement('div');lg.className='legend';"
    " s.appendChild(h);s.appendChild(el);s.appendChild(lg);box.appendChild(s);\n"
    /* a limit or request: a dashed line; the job page: dates on the x
     * axis (seconds since the epoch), a point per run */
    " var ser={};(c.dashed||[]).forEach(function(l){ser[l]={strokePattern:[6,4],"
    "strokeWidth:1.5};});\n"
    " var xa=D.dates?{axisLabelWidth:96,axisLabelFormatter:function(x){return day(x);},"
    "valueFormatter:function(x){return clockAt(x);}}"
    ":{axisLabelFormatter:function(x){return elapsed(x);},"
    "valueFormatter:function(x){return clock(x)+' (+'+elapsed(x)+')';}};\n"
    " var o={labels:['time'].concat(c.labels),customBars:true,includeZero:true,"
    "labelsDiv:lg,legend:'always',labelsSeparateLines:false,fillAlpha:0.2,strokeWidth:1.5,"
    "drawPoints:!!D.dates,pointSize:3,series:ser,"
    "colors:['#1d6fd8','#e4572e','#2a9d8f','#f4a261','#6e7781'].slice(0,c.labels.length),"
    "axes:{x:xa,"
    "y:{axisLabelWidth:84,ticker:ticks(c.unit),valueFormatter:function(v){return "
    "human(v,c.unit);}}},"
    "plugins:[new Dygraph.Plugins.Crosshair({direction:'vertical'})]};\n"
    /* one run: a day either side, not an axis of no width */
    " if(D.dates&&c.data.length===1)o.dateWindow=[c.data[0][0]-43200,c.data[0][0]+43200];\n"
    " var g=new Dygraph(el,c.data,o);\n"
    " gs.push(g);});\n"
    "if(gs.length>1)Dygraph.synchronize(gs,{selection:true,zoom:true,range:false});\n"
    "window.rtCharts=gs;\n"
    "})();\n";

/* A regular file is replaced atomically; /dev/null, a FIFO or
 * /dev/stdout is written where it is (safefile.h). */
static int write_page(const char *path, const struct rt_buf *b)
{
	struct rt_outfile o;
	char why[512];
	int rc = rt_outfile_open(&o, path, 0644, why, sizeof(why));
	if (rc)
		return rc;
	if ((rc = rt_write_all(o.fd, b->p, b->len, 60000))) {
		rt_outfile_abort(&o);
		return rc;
	}
	return rt_outfile_commit(&o);
}

/* The page to path ("-": stdout), and one line saying where. */
static int emit(const char *path, const struct rt_buf *b, const char *what)
{
	int rc = b->oom ? -ENOMEM : 0;
	if (!rc && !strcmp(path, "-")) {
		size_t off = 0;
		while (off < b->len) {
			ssize_t n = write(1, b->p + off, b->len - off);
			if (n <= 0) {
				rc = -errno;
				break;
			}
			off += (size_t)n;
		}
	} else if (!rc) {
		rc = write_page(path, b);
	}
	if (rc)
		rt_say("cannot write the report to %s: %s (choose another path with -o FILE)", path,
		       strerror(-rc));
	else if (strcmp(path, "-"))
		fprintf(stderr, "%s: report of %s written to %s (%zu KiB)\n", rt_prog, what, path,
		        (b->len + 1023) / 1024);
	return rc;
}

/* The page's head up to <main>: title, the inlined styles, the header. */
static void page_head(struct rt_buf *b, const char *dir, const char *title, const char *sub)
{
	rt_buf_puts(b, "<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>\n"
	               "<meta name=viewport content=\"width=device-width,initial-scale=1\">\n"
	               "<meta http-equiv=Content-Security-Policy content=\"default-src 'none'; "
	               "script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:\">\n"
	               "<title>");
	html(b, title);
	rt_buf_puts(b, "</title>\n<style>\n");
	inline_file(b, dir, "dygraph.min.css", 0);
	rt_buf_puts(b, page_css);
	rt_buf_puts(b, "\n</style></head><body>\n<header><h1>");
	html(b, title);
	rt_buf_puts(b, "</h1><p>");
	html(b, sub);
	rt_buf_puts(b, "</p></header>\n<main>\n");
}

/* After the page's data object: the charting library and the page's script
 * (lib is freed). */
static void page_tail(struct rt_buf *b, struct rt_buf *lib)
{
	rt_buf_puts(b, "}</script>\n<script>\n");
	rt_buf_put(b, lib->p, lib->len);
	rt_buf_puts(b, page_js);
	rt_buf_puts(b, "</script>\n</body></html>\n");
	rt_buf_free(lib);
}

static int load_dygraphs(struct rt_buf *lib, const char **dir)
{
	*dir = getenv("RT_DYGRAPHS_DIR");
	if (!*dir || !**dir)
		*dir = DYGRAPHS_DIR;
	if (inline_file(lib, *dir, "dygraph.min.js", 1) ||
	    inline_file(lib, *dir, "extras/synchronizer.js", 1) ||
	    inline_file(lib, *dir, "extras/crosshair.js", 1)) {
		rt_buf_free(lib);
		rt_say("the report needs the dygraphs charting library in %s (install it: apt-get "
		       "install libjs-dygraphs)",
		       *dir);
		return 1;
	}
	return 0;
}

/* One trend chart of the job page: a value per run (a flat band). */
static void trend(struct rt_buf *b, int first, const char *id, const char *title, const char *unit,
                  const char *const *labels, int ns, const struct rt_answer *runs, size_t n,
                  double (*get)(const struct rt_answer *, int))
{
	rt_buf_printf(b, "%s{\"id\":\"%s\",\"title\":", first ? "" : ",", id);
	js_str(b, title);
	rt_buf_printf(b, ",\"unit\":\"%s\",\"labels\":[", unit);
	for (int d = 0; d < ns; d++) {
		if (d)
			rt_buf_putc(b, ',');
		js_str(b, labels[d]);
	}
	rt_buf_puts(b, "],\"data\":[");
	for (size_t i = 0; i < n; i++) {
		rt_buf_puts(b, i ? ",[" : "[");
		rt_buf_printf(b, "%.3f", (double)runs[i].ri.start_ns / 1e9); /* all its digits */
		for (int d = 0; d < ns; d++) {
			double v = get(&runs[i], d);
			rt_buf_putc(b, ',');
			if (isnan(v)) {
				rt_buf_puts(b, "null");
			} else {
				rt_buf_putc(b, '[');
				num(b, v);
				rt_buf_putc(b, ',');
				num(b, v);
				rt_buf_putc(b, ',');
				num(b, v);
				rt_buf_putc(b, ']');
			}
		}
		rt_buf_putc(b, ']');
	}
	rt_buf_puts(b, "]}");
}

static double colv(const struct rt_answer *a, unsigned name, int p95)
{
	int c = rt_stats_col(name);
	if (c < 0 || !a->st.col[c].present)
		return NAN;
	return p95 ? a->st.col[c].p95 : a->st.col[c].mean;
}

static double t_cpu(const struct rt_answer *a, int d)
{
	return colv(a, a->st.has_proc ? RT_V_PROC_CORES : RT_V_CPU_UTIL, d);
}

static double t_mem(const struct rt_answer *a, int d)
{
	int c = rt_stats_col(a->st.has_proc ? RT_V_PROC_PSS : RT_V_MEM_USED);
	if (d == 1)
		return a->st.rss_max_mib >= 0 ? a->st.rss_max_mib : NAN;
	return c >= 0 && a->st.col[c].present ? a->st.col[c].max : NAN;
}

static double t_dur(const struct rt_answer *a, int d)
{
	(void)d;
	return a->st.duration;
}

/* The job report's table: a row per run (start, duration, status, CPU
 * mean and p95, peak PSS, RSS peak). */
static void runs_table(struct rt_buf *b, const char *title, const struct rt_answer *runs, size_t n)
{
	char t[64], v[96];
	rt_buf_puts(b, "<section class=wide><h2>");
	html(b, title);
	rt_buf_puts(b, "</h2><table class=runs>\n<tr><th>run</th>"
	               "<th>start</th><th>duration</th><th>status</th><th>CPU mean</th>"
	               "<th>CPU p95</th><th>peak PSS MiB</th><th>RSS peak MiB</th></tr>\n");
	for (size_t i = 0; i < n; i++) {
		const struct rt_answer *a = &runs[i];
		rt_buf_printf(b, "<tr><td>%llu</td><td>", (unsigned long long)a->ri.id);
		rt_fmt_iso8601(t, sizeof(t), a->ri.start_ns);
		html(b, t);
		snprintf(v, sizeof(v), "%.1f s", a->st.duration);
		rt_buf_puts(b, "</td><td>");
		html(b, v);
		rt_buf_puts(b, "</td><td>");
		if (a->has_exit_code)
			snprintf(v, sizeof(v), "%s (exit %d)", a->ri.status, a->exit_code);
		else
			snprintf(v, sizeof(v), "%s", a->ri.status);
		html(b, v);
		double x[4] = {t_cpu(a, 0), t_cpu(a, 1), t_mem(a, 0), t_mem(a, 1)};
		for (int k = 0; k < 4; k++) {
			snprintf(v, sizeof(v), isnan(x[k]) ? "-" : "%.*f", k < 2 ? 2 : 0, x[k]);
			rt_buf_puts(b, "</td><td>");
			html(b, v);
		}
		rt_buf_puts(b, "</td></tr>\n");
	}
	rt_buf_puts(b, "</table></section>\n");
}

/* The job report's default file name, rt-report-job-NAME.html, whatever
 * the job's name (other bytes become _). */
static void job_file_name(char *def, size_t cap, const char *job)
{
	snprintf(def, cap, "rt-report-job-%s.html", job);
	for (char *p = def + 14; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '.' || *p == '-' || *p == '_'))
			*p = '_';
}

/* rt-export report --job NAME [--last N]: the job's history on one page */
static int job_report(struct rt_store *s, const struct rt_answer_opts *o)
{
	struct rt_buf lib = {0};
	const char *dir;
	if (load_dygraphs(&lib, &dir))
		return 1;
	struct rt_answer *runs;
	size_t n;
	if (rt_answer_job(s, o->job, o->last, &runs, &n)) {
		rt_buf_free(&lib);
		return 1;
	}
	struct rt_runstats agg;
	if (rt_answer_job_stats(runs, n, &agg)) {
		rt_say("out of memory");
		rt_buf_free(&lib);
		for (size_t i = 0; i < n; i++)
			rt_answer_free(&runs[i]);
		free(runs);
		return 1;
	}
	struct rt_buf b = {0};
	char title[512], sub[160];
	snprintf(title, sizeof(title), "rt report: job %s", o->job);
	snprintf(sub, sizeof(sub), "%zu run%s", n, n == 1 ? "" : "s");
	page_head(&b, dir, title, sub);
	runs_table(&b, "Runs", runs, n);
	struct rt_recommendation r;
	struct rt_offer off = {0};
	off.price_here = NAN;
	if (agg.lines) {
		rt_recommend(&agg, &r);
		reco_section(&b, &r, &off);
	}
	rt_buf_puts(&b, "<div id=charts style=\"display:contents\"></div>\n</main>\n"
	                "<footer>Made by rt-export " RT_VERSION
	                ". One point per run, at its start; the recommendation comes from the "
	                "runs' history (means averaged, the largest peaks).</footer>\n"
	                "<script type=\"application/json\" id=rt-data>");
	rt_buf_printf(&b, "{\"dates\":true,\"wall0_ms\":%.0f,\"span\":%.3f,\"charts\":[",
	              (double)runs[0].ri.start_ns / 1e6,
	              (double)(runs[n - 1].ri.start_ns - runs[0].ri.start_ns) / 1e9);
	static const char *const cpu_l[] = {"mean", "p95"},
	                         *const mem_l[] = {"peak PSS", "RSS peak"},
	                         *const dur_l[] = {"duration"};
	trend(&b, 1, "jcpu", "CPU per run", "cores", cpu_l, 2, runs, n, t_cpu);
	trend(&b, 0, "jmem", "Peak memory per run", "MiB", mem_l, 2, runs, n, t_mem);
	trend(&b, 0, "jdur", "Duration per run", "s", dur_l, 1, runs, n, t_dur);
	rt_buf_putc(&b, ']');
	page_tail(&b, &lib);
	char def[300], what[300];
	job_file_name(def, sizeof(def), o->job);
	snprintf(what, sizeof(what), "job %s (%zu run%s)", o->job, n, n == 1 ? "" : "s");
	int rc = emit(o->output ? o->output : def, &b, what);
	rt_buf_free(&b);
	for (size_t i = 0; i < n; i++)
		rt_answer_free(&runs[i]);
	free(runs);
	return rc ? 1 : 0;
}

/* Up to this many earlier runs of the job's stage beside the run */
#define HISTORY_RUNS 5

/* The run beside the earlier runs of its job and stage (a Metaflow step's
 * runs of its flow): none when it is the first. */
static void history_section(struct rt_buf *b, struct rt_store *s, const struct rt_answer *a)
{
	struct rt_answer *h;
	size_t n;
	if (rt_answer_history(s, a, HISTORY_RUNS, &h, &n) || !n)
		return;
	struct rt_answer *all = calloc(n + 1, sizeof(*all));
	if (all) {
		memcpy(all, h, n * sizeof(*h));
		all[n] = *a; /* (shallow: this run stays the caller's) */
		const char *stage = rt_meta_str(a->meta, "metadata", "stage_name");
		char title[300];
		snprintf(title, sizeof(title), "This run and the %zu before it (job %s%s%s)", n,
		         a->ri.job_name, stage ? ", step " : "", stage ? stage : "");
		runs_table(b, title, all, n + 1);
		free(all);
	}
	for (size_t i = 0; i < n; i++)
		rt_answer_free(&h[i]);
	free(h);
}

/* The recommendation as the scheduler that ran the job takes it. */
static void scheduler_section(struct rt_buf *b, const struct rt_answer *a,
                              const struct rt_recommendation *r)
{
	char line[256];
	const char *name;
	if (!a->st.lines || !rt_scheduler_line(a->meta, r, line, sizeof(line), &name))
		return;
	int mf = !strcmp(name, "metaflow"), k8s = !strcmp(name, "kubernetes");
	rt_buf_puts(b, mf    ? "<section class=wide><h2>For the step's decorator</h2>"
	               : k8s ? "<section class=wide><h2>For the pod's container</h2>"
	                     : "<section class=wide><h2>For the next sbatch</h2>");
	rt_buf_puts(b, "<p class=reco><code id=scheduler-line>");
	html(b, line);
	rt_buf_puts(b, mf ? "</code></p><p class=note>The recommendation above, as Metaflow's "
	                    "@resources takes it (memory in MiB); the reason for any raised value "
	                    "is beside it.</p></section>\n"
	               : k8s
	                   ? "</code></p><p class=note>The recommendation above, as a container's "
	                     "resources: the CPU requested and not limited (a limit throttles "
	                     "bursts), memory requested and limited alike.</p></section>\n"
	                   : "</code></p><p class=note>The recommendation above, as Slurm's "
	                     "options (--time is left out: the job's time limit is not "
	                     "recorded).</p></section>\n");
}

/* What held the job back, a line each (none: no section). */
static void findings_section(struct rt_buf *b, const struct rt_answer *a)
{
	char found[8][RT_FINDING_LEN];
	size_t nfound = rt_findings_text(&a->st, a->ri.start_ns, found, 8);
	if (!nfound)
		return;
	rt_buf_puts(b, "<section class=wide><h2>What held the job back</h2><ul>");
	for (size_t i = 0; i < nfound; i++) {
		rt_buf_puts(b, "<li>");
		html(b, found[i]);
		rt_buf_puts(b, "</li>");
	}
	rt_buf_puts(b, "</ul></section>\n");
}

/* The recommendation, or why there is none. */
static void reco_or_none(struct rt_buf *b, const struct rt_answer *a,
                         const struct rt_recommendation *r, const struct rt_offer *off)
{
	if (a->st.lines)
		reco_section(b, r, off);
	else if (rt_run_status_of(a->ri.status) == RT_RUN_RUNNING)
		rt_buf_puts(b, "<section class=wide><h2>No samples yet</h2><p class=note>The run "
		               "is still running and has no full interval yet: nothing to chart or "
		               "recommend so far.</p></section>\n");
	else
		rt_buf_puts(
		    b, "<section class=wide><h2>No samples</h2><p class=note>The run ended "
		       "before its first sample: nothing to chart or recommend.</p></section>\n");
}

/* One line for the charts with nothing to show. */
static void left_out_line(struct rt_buf *b, const struct rt_answer *a)
{
	int nleft = 0;
	for (size_t k = 0; a->series.n && k < RT_ARRAY_LEN(charts); k++) {
		const char *why = charts[k].gpu && !saw_gpu(a) ? NULL : left_out(a, &charts[k]);
		if (!why)
			continue;
		rt_buf_puts(
		    b, nleft++ ? "; " : "<p class=note id=left-out>Not charted, nothing to show: ");
		html(b, why);
	}
	if (nleft)
		rt_buf_puts(b, ".</p>\n");
}

int rt_cmd_report(struct rt_store *s, const struct rt_answer_opts *o)
{
	if (o->job)
		return job_report(s, o);
	const char *dir;
	struct rt_buf lib = {0};
	if (load_dygraphs(&lib, &dir))
		return 1;
	struct rt_answer a;
	if (rt_answer_run(s, o->run, 1, &a)) {
		rt_buf_free(&lib);
		return 1;
	}
	if (o->failed) /* the caller's word: the job failed (a Metaflow step) */
		snprintf(a.ri.status, sizeof(a.ri.status), "%s", rt_run_status_name(RT_RUN_FAILED));
	struct rt_recommendation r;
	rt_recommend(&a.st, &r);
	struct rt_offer off = {0};
	off.price_here = NAN;
	off.duration = a.st.duration;
	if (o->servers) {
		rt_offer_fetch(s, &a, &r, o->servers, &off);
	} else {
		rt_offer_cloud(s, &a, &off);
	}

	struct rt_buf b = {0};
	char title[512], t[64];
	snprintf(title, sizeof(title), "rt report: run %llu%s%s", (unsigned long long)a.ri.id,
	         a.ri.job_name ? " " : "", a.ri.job_name ? a.ri.job_name : "");
	rt_fmt_iso8601(t, sizeof(t), a.ri.start_ns);
	char sub[160];
	snprintf(sub, sizeof(sub), "%s%s, started %s", a.ri.status,
	         a.partial ? " (partial: the figures cover the samples so far)" : "", t);
	page_head(&b, dir, title, sub);
	job_card(&b, &a);
	host_card(&b, &a);
	given_card(&b, &a);
	cloud_card(&b, &off);
	summary_table(&b, &a);
	findings_section(&b, &a);
	gpu_section(&b, &a.st);
	reco_or_none(&b, &a, &r, &off);
	scheduler_section(&b, &a, &r);
	history_section(&b, s, &a);
	rt_buf_puts(&b, "<div id=charts style=\"display:contents\"></div>\n");
	left_out_line(&b, &a);
	rt_buf_puts(&b, "</main>\n<footer>Made by rt-export " RT_VERSION);
	if (o->integration && *o->integration) { /* the binding that asked: R, Metaflow */
		rt_buf_puts(&b, " from <code>");
		html(&b, o->integration);
		rt_buf_puts(&b, "</code>");
	}
	rt_buf_puts(&b,
	            ". Charts: drag to zoom, double-click to reset; each point is a time bucket "
	            "(band: min to max, line: mean).</footer>\n"
	            "<script type=\"application/json\" id=rt-data>");
	rt_buf_printf(&b, "{\"wall0_ms\":%.0f,\"span\":%.3f,\"charts\":",
	              (double)a.series.wall0_ns / 1e6, a.st.duration);
	charts_json(&b, &a);
	page_tail(&b, &lib);

	char def[64], what[96];
	snprintf(def, sizeof(def), "rt-report-%llu.html", (unsigned long long)a.ri.id);
	snprintf(what, sizeof(what), "run %llu", (unsigned long long)a.ri.id);
	int rc = emit(o->output ? o->output : def, &b, what);
	rt_buf_free(&b);
	rt_offer_free(&off);
	rt_answer_free(&a);
	return rc ? 1 : 0;
}
