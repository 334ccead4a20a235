/*
 * summary_md.c - the summary in Markdown (summary --format markdown, a
 * run's or a job's runs'; summary_step.c adds the charts for
 * $GITHUB_STEP_SUMMARY); every text rt did not write escaped (md_cell).
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
