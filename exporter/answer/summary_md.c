/*
 * summary_md.c - the summary in Markdown (summary --format markdown, and the job's
 * step summary for $GITHUB_STEP_SUMMARY with its Mermaid charts); every
 * text rt did not write escaped (md_cell).
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

/* Markdown: a table a person pastes into a ticket or a pull request.
 * Text written into it is text, whoever wrote it: a job name from a branch
 * name must not become HTML, an image or a link on a job's page, so every
 * character that makes Markdown or HTML of it is escaped (CommonMark's
 * backslash escape: the page shows the character itself). */
static void md_cell(FILE *f, const char *s)
{
	for (const char *p = s; p && *p; p++) {
		/* ':' and the '.' of "www." too: GitHub makes links of bare
		 * "https://" and "www." addresses */
		int www = *p == '.' && p - s >= 3 && !strncasecmp(p - 3, "www", 3);
		if ((*p && strchr("\\`*_[]()<>!|~&#:", *p)) || www)
			fputc('\\', f);
		fputc((unsigned char)*p < 0x20 ? ' ' : *p, f);
	}
}

void rt_print_summary_markdown(FILE *f, const struct rt_answer *a)
{
	const struct rt_runstats *st = &a->st;
	struct rt_recommendation r;
	struct rt_efficiency e;
	rt_recommend(st, &r);
	rt_efficiency(st, a->meta, &e);
	char job[256], dur[32], line[300];
	ans_clean(job, sizeof(job), a->ri.job_name);
	rt_fmt_duration(dur, sizeof(dur), st->duration);
	fprintf(f, "### rt: run %llu", (unsigned long long)a->ri.id);
	if (job[0]) {
		fputs(" (", f);
		md_cell(f, job);
		fputc(')', f);
	}
	fputs(", ", f);
	md_cell(f, a->ri.status);
	if (a->has_exit_code)
		fprintf(f, ", exit code %d", a->exit_code);
	fprintf(f, ", %s\n\n", dur);
	if (!st->lines) {
		fputs("No samples: nothing to summarize.\n", f);
		return;
	}
	rt_answer_line(line, sizeof(line), st, &e, &r);
	fputs("**", f);
	md_cell(f, line);
	fputs("**\n\n", f);
	struct rt_summary_row rows[RT_SUMMARY_ROWS];
	size_t n = rt_summary_rows(st, a->meta, rows, RT_SUMMARY_ROWS);
	fputs("| | mean | p95 | max | |\n|---|---:|---:|---:|---|\n", f);
	for (size_t i = 0; i < n; i++) {
		fputs("| ", f);
		md_cell(f, rows[i].label);
		if (rows[i].c)
			fprintf(f, " | %.*f | %.*f | %.*f | ", rows[i].prec, rows[i].c->mean,
			        rows[i].prec, rows[i].c->p95, rows[i].prec, rows[i].c->max);
		else
			fputs(" | | | | ", f);
		md_cell(f, rows[i].note);
		fputs(" |\n", f);
	}
	/* the same lines as the text summary's, each with its label */
	struct rt_note notes[RT_NOTES_MAX];
	size_t nn = rt_summary_notes(a, notes, RT_NOTES_MAX);
	fputc('\n', f);
	const char *label = "";
	for (size_t i = 0; i < nn; i++) {
		if (notes[i].label[0])
			label = notes[i].label;
		fputs(!strcmp(label, "!") ? "- :warning: " : "- **", f);
		if (strcmp(label, "!")) {
			md_cell(f, label);
			fputs("**: ", f);
		}
		md_cell(f, notes[i].text);
		fputc('\n', f);
	}
}

void rt_print_job_summary(FILE *f, const char *job, const struct rt_answer *runs, size_t n)
{
	char name[128];
	ans_clean(name, sizeof(name), job);
	fprintf(f, "job %s: %zu run%s\n", name, n, n == 1 ? "" : "s");
	fprintf(f, "  %-6s %-20s %12s %5s %8s %8s %9s %8s %9s\n", "RUN", "START", "DURATION",
	        "EXIT", "CPU MEAN", "CPU MAX", "PSS MiB", "GPU MAX", "VRAM MiB");
	struct rt_runstats *all = calloc(n ? n : 1, sizeof(*all));
	for (size_t i = 0; i < n; i++) {
		const struct rt_answer *a = &runs[i];
		const struct rt_runstats *st = &a->st;
		int p = st->has_proc;
		const struct rt_colstat *cpu = ans_col(st, p ? RT_V_PROC_CORES : RT_V_CPU_UTIL);
		const struct rt_colstat *mem = ans_col(st, p ? RT_V_PROC_PSS : RT_V_MEM_USED);
		const struct rt_colstat *gpu =
		    ans_col(st, p ? RT_V_PROC_GPU_USAGE : RT_V_GPU_USAGE);
		const struct rt_colstat *vram = ans_col(st, p ? RT_V_PROC_GPU_VRAM : RT_V_GPU_VRAM);
		char start[32] = "?", dur[32], ex[16] = "-";
		if (a->ri.start_ns)
			rt_fmt_iso8601(start, sizeof(start), a->ri.start_ns);
		rt_fmt_duration(dur, sizeof(dur), st->duration);
		if (a->has_exit_code)
			snprintf(ex, sizeof(ex), "%d", a->exit_code);
		else if (a->partial)
			snprintf(ex, sizeof(ex), "%s", a->ri.status);
		fprintf(f, "  %-6llu %-20s %12s %5s %8.2f %8.2f %9.0f %8.2f %9.0f\n",
		        (unsigned long long)a->ri.id, start, dur, ex, cpu ? cpu->mean : 0,
		        cpu ? cpu->max : 0, mem ? mem->max : 0, gpu ? gpu->max : 0,
		        vram ? vram->max : 0);
		if (all)
			all[i] = *st;
	}
	if (!all)
		return;
	struct rt_runstats agg;
	rt_stats_aggregate(all, n, &agg);
	free(all);
	fprintf(f, "all runs (means and durations averaged, maxima and totals the largest):\n");
	ans_print_table(f, &agg, runs[n - 1].meta);
	struct rt_recommendation r;
	rt_recommend(&agg, &r);
	/* the aggregate against what the newest run was given */
	struct rt_efficiency e;
	char eff[6][RT_EFF_LEN];
	rt_efficiency(&agg, runs[n - 1].meta, &e);
	size_t ne = rt_efficiency_text(&e, &r, eff, 6);
	for (size_t i = 0; i < ne; i++)
		fprintf(f, "  %-24s %s\n", i ? "" : "given (newest run)", eff[i]);
	char reco[RT_NOTE_LEN];
	ans_reco_text(reco, sizeof(reco), &r);
	fprintf(f, "  %-24s %s\n", "recommended", reco);
	if (r.why[0])
		fprintf(f, "  %-24s %s\n", "raised because", r.why);
}

/* The ticks Mermaid draws on a numeric axis from lo to hi: d3's linear
 * ticks for a count of 10 (a step of 1, 2 or 5 x 10^k; from 10 to 16 of
 * them, labels running into each other past 12). */
static int d3_ticks(double lo, double hi)
{
	double step = (hi - lo) / 10;
	if (!(step > 0))
		return 1;
	double power = floor(log10(step)), error = step / pow(10, power);
	double factor = error >= sqrt(50) ? 10 : error >= sqrt(10) ? 5 : error >= sqrt(2) ? 2 : 1;
	double inc = pow(10, power) * factor;
	double i1 = round(lo / inc), i2 = round(hi / inc);
	if (i1 * inc < lo)
		i1++;
	if (i2 * inc > hi)
		i2--;
	return (int)(i2 - i1 + 1);
}

/* One Mermaid xychart-beta of column id over the run (GitHub renders it),
 * at most 100 points: a bucket's mean (agg 0) or max (agg 1), each at its
 * last line's time. */
static void mermaid(FILE *f, const struct rt_answer *a, unsigned id, const char *title,
                    const char *unit, int agg)
{
	const struct rt_series *s = &a->series;
	int c = rt_stats_col(id);
	if (c < 0 || !s->n || !a->st.col[c].present)
		return;
	size_t per = (s->n + 99) / 100, nb = (s->n + per - 1) / per;
	double top = 0;
	for (size_t i = 0; i < s->n; i++)
		if (!isnan(s->col[c][i]) && s->col[c][i] > top)
			top = s->col[c][i];
	/* a numeric x axis (a label per point ran together: "0.51.01.52.0..."):
	 * Mermaid spreads the points evenly from its start to its end, so it
	 * runs from the first point's time to the last's (or from 0 when that
	 * is the same to a point), in seconds, minutes past 5 minutes, hours
	 * past 5 hours, or the next unit when that gives at most 12 labels */
	double first = s->elapsed[per - 1 < s->n ? per - 1 : s->n - 1], end = s->elapsed[s->n - 1];
	static const char *const uname[] = {"seconds", "minutes", "hours"};
	static const double usec[] = {1, 60, 3600};
	int pref = end > 5 * 3600 ? 2 : end > 300 ? 1 : 0, u = pref, xp = 0;
	double lo = 0, hi = end;
	for (int k = 0; k < 6; k++) {
		int cand = (pref + k / 2) % 3;
		double l = (k % 2 ? first : 0) / usec[cand], h = end / usec[cand], span = h - l;
		int p = span < 0.1 ? 3 : span < 1 ? 2 : span < 10 ? 1 : 0;
		l = round(l * pow(10, p)) / pow(10, p); /* as printed */
		h = round(h * pow(10, p)) / pow(10, p);
		if (k == 0 || d3_ticks(l, h) <= 12) {
			u = cand, xp = p, lo = l, hi = h;
			if (d3_ticks(l, h) <= 12)
				break;
		}
	}
	/* an explicit theme: the line in a blue and the text in a grey that
	 * read on GitHub's light and dark backgrounds (the default theme drew
	 * the line in #ECECFF, nearly white); y from 0 */
	fprintf(f,
	        "\n```mermaid\n%%%%{init: {\"theme\": \"base\", \"themeVariables\": {\"xyChart\": "
	        "{\"backgroundColor\": \"transparent\", \"plotColorPalette\": \"#2f81f7\", "
	        "\"titleColor\": \"#8b949e\", \"xAxisLabelColor\": \"#8b949e\", "
	        "\"xAxisTitleColor\": \"#8b949e\", \"xAxisTickColor\": \"#8b949e\", "
	        "\"xAxisLineColor\": \"#8b949e\", \"yAxisLabelColor\": \"#8b949e\", "
	        "\"yAxisTitleColor\": \"#8b949e\", \"yAxisTickColor\": \"#8b949e\", "
	        "\"yAxisLineColor\": \"#8b949e\"}}}}%%%%\nxychart-beta\n  title \"%s\"\n"
	        "  x-axis \"%s\" %.*f --> %.*f\n  y-axis \"%s\" 0 --> %.*f\n  line [",
	        title, uname[u], xp, lo, xp, hi, unit, top < 10 ? 2 : 0, top > 0 ? top * 1.1 : 1);
	for (size_t b = 0; b < nb; b++) {
		double v = 0, w = 0, mx = 0;
		for (size_t i = b * per; i < s->n && i < (b + 1) * per; i++) {
			double x = s->col[c][i];
			if (isnan(x))
				continue;
			v += x;
			w += 1;
			if (x > mx || w == 1)
				mx = x;
		}
		fprintf(f, "%s%.2f", b ? ", " : "", agg ? mx : w > 0 ? v / w : 0);
	}
	fputs("]\n```\n", f);
}

void rt_print_step_summary(FILE *f, const struct rt_answer *a)
{
	rt_print_summary_markdown(f, a);
	int p = a->st.has_proc;
	mermaid(f, a, p ? RT_V_PROC_CORES : RT_V_CPU_UTIL, p ? "CPU cores, job" : "CPU cores, host",
	        "cores", 0);
	mermaid(f, a, p ? RT_V_PROC_PSS : RT_V_MEM_USED,
	        p ? "memory MiB, job (PSS)" : "memory MiB, host used", "MiB", 1);
	fputc('\n', f);
}
