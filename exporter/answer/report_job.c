/*
 * report_job.c - the report of a job's runs (report --job): their trend and
 * their table, one page.
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

/* One trend chart of the job page: a value per run (a flat band). */
static void trend(struct rt_buf *b, int first, const char *id, const char *title, const char *unit,
                  const char *const *labels, int ns, const struct rt_answer *runs, size_t n,
                  double (*get)(const struct rt_answer *, int))
{
	rt_buf_printf(b, "%s{\"id\":\"%s\",\"title\":", first ? "" : ",", id);
	rep_js_str(b, title);
	rt_buf_printf(b, ",\"unit\":\"%s\",\"labels\":[", unit);
	for (int d = 0; d < ns; d++) {
		if (d)
			rt_buf_putc(b, ',');
		rep_js_str(b, labels[d]);
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
				rep_num(b, v);
				rt_buf_putc(b, ',');
				rep_num(b, v);
				rt_buf_putc(b, ',');
				rep_num(b, v);
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

/* Whether any of the runs names its task (an orchestrator's: a Metaflow
 * task's pathspec); "Metaflow task" when Metaflow's. */
static const char *task_header(const struct rt_answer *runs, size_t n)
{
	const char *head = NULL;
	for (size_t i = 0; i < n; i++) {
		if (!rt_meta_str(runs[i].meta, "metadata", "task_name"))
			continue;
		const char *orch = rt_meta_str(runs[i].meta, "metadata", "orchestrator");
		if (orch && !strcmp(orch, "metaflow"))
			return "Metaflow run/step/task";
		head = "task";
	}
	return head;
}

/* The run's task, its job's name left off the front (Flow/17/train/5 ->
 * 17/train/5: the run and task ids Metaflow's client takes). */
static void task_cell(struct rt_buf *b, const struct rt_answer *a)
{
	const char *t = rt_meta_str(a->meta, "metadata", "task_name");
	size_t j = a->ri.job_name ? strlen(a->ri.job_name) : 0;
	if (t && j && !strncmp(t, a->ri.job_name, j) && t[j] == '/')
		t += j + 1;
	rt_buf_puts(b, "</td><td>");
	rep_html(b, t ? t : "-");
}

/* What the run alone needs, by rt's rules: "2 vCPUs, 512 MiB". */
static void needs_cell(struct rt_buf *b, const struct rt_answer *a)
{
	char v[96] = "-";
	if (a->st.lines) {
		struct rt_recommendation r;
		rt_recommend(&a->st, &r);
		snprintf(v, sizeof(v), "%ld vCPU%s, %s%ld MiB", r.cpu, r.cpu == 1 ? "" : "s",
		         r.memory_at_least ? "at least " : "", r.memory_mib);
	}
	rt_buf_puts(b, "</td><td>");
	rep_html(b, v);
}

/* The job report's table: a row per run (its task when one is named,
 * start, duration, status, CPU mean and p95, peak PSS, RSS peak, what it
 * alone needs). */
void rep_runs_table(struct rt_buf *b, const char *title, const struct rt_answer *runs, size_t n)
{
	char t[64], v[96];
	const char *task = task_header(runs, n);
	rt_buf_puts(b, "<section class=wide><h2>");
	rep_html(b, title);
	rt_buf_puts(b, "</h2><table class=runs>\n<tr><th>run</th>");
	if (task) {
		rt_buf_puts(b, "<th>");
		rep_html(b, task);
		rt_buf_puts(b, "</th>");
	}
	rt_buf_puts(b, "<th>start</th><th>duration</th><th>status</th><th>CPU mean</th>"
	               "<th>CPU p95</th><th>peak PSS MiB</th><th>RSS peak MiB</th>"
	               "<th>needs alone</th></tr>\n");
	for (size_t i = 0; i < n; i++) {
		const struct rt_answer *a = &runs[i];
		rt_buf_printf(b, "<tr><td>%llu", (unsigned long long)a->ri.id);
		if (task)
			task_cell(b, a);
		rt_buf_puts(b, "</td><td>");
		rt_fmt_iso8601(t, sizeof(t), a->ri.start_ns);
		rep_html(b, t);
		snprintf(v, sizeof(v), "%.1f s", a->st.duration);
		rt_buf_puts(b, "</td><td>");
		rep_html(b, v);
		rt_buf_puts(b, "</td><td>");
		if (a->has_exit_code)
			snprintf(v, sizeof(v), "%s (exit %d)", a->ri.status, a->exit_code);
		else
			snprintf(v, sizeof(v), "%s", a->ri.status);
		rep_html(b, v);
		double x[4] = {t_cpu(a, 0), t_cpu(a, 1), t_mem(a, 0), t_mem(a, 1)};
		for (int k = 0; k < 4; k++) {
			snprintf(v, sizeof(v), isnan(x[k]) ? "-" : "%.*f", k < 2 ? 2 : 0, x[k]);
			rt_buf_puts(b, "</td><td>");
			rep_html(b, v);
		}
		needs_cell(b, a);
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
int rep_job_report(struct rt_store *s, const struct rt_answer_opts *o)
{
	struct rt_buf lib = {0};
	const char *dir;
	if (rep_load_dygraphs(&lib, &dir))
		return 1;
	struct rt_answer *runs;
	size_t n;
	if (rt_answer_job(s, o, &runs, &n)) {
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
	rep_page_head(&b, dir, title, sub);
	rep_runs_table(&b, "Runs", runs, n);
	struct rt_recommendation r;
	struct rt_offer off = {0};
	off.price_here = NAN;
	if (agg.lines) {
		rt_recommend(&agg, &r);
		rep_reco_section(&b, &r, &off);
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
	rep_page_tail(&b, &lib);
	char def[300], what[300];
	job_file_name(def, sizeof(def), o->job);
	snprintf(what, sizeof(what), "job %s (%zu run%s)", o->job, n, n == 1 ? "" : "s");
	int rc = rep_emit(o->output ? o->output : def, &b, what);
	rt_buf_free(&b);
	for (size_t i = 0; i < n; i++)
		rt_answer_free(&runs[i]);
	free(runs);
	return rc ? 1 : 0;
}
