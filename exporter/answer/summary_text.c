/*
 * summary_text.c - the summary and the recommendation as text: the table, what the
 * figures cover, the notes, the recommendation's lines.
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

void ans_print_table(FILE *f, const struct rt_runstats *st, const cJSON *meta)
{
	struct rt_summary_row rows[RT_SUMMARY_ROWS];
	size_t n = rt_summary_rows(st, meta, rows, RT_SUMMARY_ROWS);
	fprintf(f, "  %-24s %10s %10s %10s\n", "", "mean", "p95", "max");
	for (size_t i = 0; i < n; i++) {
		const struct rt_summary_row *r = &rows[i];
		if (!r->c) {
			fprintf(f, "  %-24s %s\n", r->label, r->note);
			continue;
		}
		fprintf(f, "  %-24s %10.*f %10.*f %10.*f%s%s\n", r->label, r->prec, r->c->mean,
		        r->prec, r->c->p95, r->prec, r->c->max, r->note[0] ? "  " : "", r->note);
	}
}

/* What the figures cover: samples skipped, a run not finished, a tracked
 * process that ended before the tracker did. */
static void print_coverage(FILE *f, const struct rt_answer *a)
{
	const struct rt_runstats *st = &a->st;
	const cJSON *sk =
	    a->meta ? cJSON_GetObjectItemCaseSensitive(a->meta, "samples_skipped") : NULL;
	if (cJSON_IsNumber(sk) && sk->valuedouble > 0)
		fprintf(f,
		        "  skipped: %.0f samples (%.1f %%): the host was too busy to sample every "
		        "%g s; the figures cover the samples taken\n",
		        sk->valuedouble,
		        100.0 * sk->valuedouble / (sk->valuedouble + (double)st->lines),
		        a->ri.interval);
	if (a->partial)
		fprintf(f, "  partial: the run %s; these figures cover the samples so far\n",
		        rt_run_status_of(a->ri.status) == RT_RUN_RUNNING
		            ? "is still being recorded"
		            : "ended without its recorder finishing it");
	if (st->has_proc && st->tail_after > 0) {
		char life[32], tail[32];
		rt_fmt_duration(life, sizeof(life), st->job_duration);
		rt_fmt_duration(tail, sizeof(tail), st->tail_after);
		fprintf(
		    f,
		    "  tracked: its processes ended after %s, and the tracker ran on %s without "
		    "them; the job's figures cover their life\n",
		    life, tail);
	}
}

void rt_print_summary(FILE *f, const struct rt_answer *a)
{
	const struct rt_runstats *st = &a->st;
	char start[32] = "?", dur[32], cmd[160];
	if (a->ri.start_ns)
		rt_fmt_iso8601(start, sizeof(start), a->ri.start_ns);
	rt_fmt_duration(dur, sizeof(dur), st->duration);
	char job[256];
	ans_clean(job, sizeof(job), a->ri.job_name);
	struct rt_recommendation r;
	struct rt_efficiency e;
	rt_recommend(st, &r);
	rt_efficiency(st, a->meta, &e);
	if (st->lines) { /* the answer first: a log reader sees it first */
		char line[300];
		rt_answer_line(line, sizeof(line), st, &e, &r);
		fprintf(f, "%s\n", line);
	}
	fprintf(f, "run %llu", (unsigned long long)a->ri.id);
	if (job[0])
		fprintf(f, " (%s)", job);
	fprintf(f, ": %s", a->ri.status);
	if (a->has_exit_code)
		fprintf(f, ", exit code %d", a->exit_code);
	fprintf(f, ", started %s, %s, %llu sample%s every %g s\n", start, dur,
	        (unsigned long long)st->lines, st->lines == 1 ? "" : "s", a->ri.interval);
	print_coverage(f, a);
	ans_command_line(a->meta, cmd, sizeof(cmd));
	if (cmd[0])
		fprintf(f, "  command: %s\n", cmd);
	if (!st->lines) {
		fputs("  no samples: nothing to summarize\n", f);
		return;
	}
	ans_print_table(f, st, a->meta);
	struct rt_note notes[RT_NOTES_MAX];
	size_t nn = rt_summary_notes(a, notes, RT_NOTES_MAX);
	for (size_t i = 0; i < nn; i++)
		if (!strcmp(notes[i].label, "!"))
			fprintf(f, "  ! %s\n", notes[i].text);
		else
			fprintf(f, "  %-24s %s\n", notes[i].label, notes[i].text);
}

void rt_print_recommendation(FILE *f, const char *what, const struct rt_runstats *st,
                             const struct rt_recommendation *r)
{
	int sys = r->from_system;
	const struct rt_colstat *cpu = ans_col(st, sys ? RT_V_CPU_UTIL : RT_V_PROC_CORES);
	const struct rt_colstat *mem = ans_col(st, sys ? RT_V_MEM_USED : RT_V_PROC_PSS);
	const struct rt_colstat *gpu = ans_col(st, sys ? RT_V_GPU_USAGE : RT_V_PROC_GPU_USAGE);
	const struct rt_colstat *vram = ans_col(st, sys ? RT_V_GPU_VRAM : RT_V_PROC_GPU_VRAM);
	fprintf(f, "recommended for %s, from %s:\n", what,
	        sys ? "the whole system's use (a standalone run tracks no process)"
	            : "the process tree's use");
	char v[32];
	snprintf(v, sizeof(v), "%ld", r->cpu);
	/* a value raised above the use says why, as the summary does */
	if (r->why_cpu[0])
		fprintf(f, "  %-8s %-10s raised: %s (mean use %.2f cores)", "vCPUs", v, r->why_cpu,
		        cpu ? cpu->mean : 0);
	else
		fprintf(f, "  %-8s %-10s mean use %.2f cores, rounded (at least 1)", "vCPUs", v,
		        cpu ? cpu->mean : 0);
	if (r->cpu_p95 > r->cpu) /* the reference's rule, and what p95 would ask */
		fprintf(f, "; its p95 (%.2f cores) would ask for %ld", cpu ? cpu->p95 : 0,
		        r->cpu_p95);
	fputc('\n', f);
	snprintf(v, sizeof(v), "%ld MiB", r->memory_mib);
	if (r->why_mem[0])
		fprintf(f, "  %-8s %-10s raised: %s\n", "memory", v, r->why_mem);
	else
		fprintf(f, "  %-8s %-10s peak %s %.0f MiB + 20 %%, rounded up to a server size\n",
		        "memory", v, sys ? "used" : "PSS", mem ? mem->max : 0);
	if (r->mem_note[0])
		fprintf(f, "  %-8s %-10s %s\n", "", "", r->mem_note);
	snprintf(v, sizeof(v), "%ld", r->gpu);
	if (r->gpu && !sys)
		fprintf(
		    f, "  %-8s %-10s as many as it held at once; busy peak %.2f GPUs (mean %.2f)\n",
		    "GPUs", v, gpu ? gpu->max : 0, gpu ? gpu->mean : 0);
	else if (r->gpu)
		fprintf(f, "  %-8s %-10s peak %.2f GPUs busy (mean %.2f)\n", "GPUs", v,
		        gpu ? gpu->max : 0, gpu ? gpu->mean : 0);
	else
		fprintf(f, "  %-8s %-10s no GPU was used\n", "GPUs", v);
	snprintf(v, sizeof(v), "%ld MiB", r->vram_mib);
	double one = rt_gpu_vram_one(st);
	if (r->vram_mib && !sys && one >= 0)
		fprintf(f, "  %-8s %-10s peak %.0f MiB on one GPU + 20 %%, rounded up%s\n", "VRAM",
		        v, one, r->gpu > 1 ? " (each GPU)" : "");
	else if (r->vram_mib)
		fprintf(f, "  %-8s %-10s peak %.0f MiB + 20 %%, rounded up\n", "VRAM", v,
		        vram ? vram->max : 0);
}
