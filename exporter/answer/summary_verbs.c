/*
 * summary_verbs.c - the verbs: rt-export summary and recommend, for one run or a
 * job's runs, in each form.
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

/* ---- the verbs ------------------------------------------------------------ */
static int print_json(cJSON *o)
{
	char *t = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	if (!t) {
		rt_say("out of memory");
		return 1;
	}
	int ok = puts(t) >= 0 && fflush(stdout) == 0;
	free(t);
	if (!ok) {
		rt_say("cannot write to stdout: %s", strerror(errno));
		return 1;
	}
	return 0;
}

int rt_answer_job_stats(const struct rt_answer *runs, size_t n, struct rt_runstats *agg)
{
	struct rt_runstats *all = calloc(n, sizeof(*all));
	if (!all)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		all[i] = runs[i].st;
	rt_stats_aggregate(all, n, agg);
	free(all);
	return 0;
}

static void free_runs(struct rt_answer *runs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		rt_answer_free(&runs[i]);
	free(runs);
}

/* summary --job --json: each run, then the aggregate and its answer. */
static cJSON *json_job_summary(const char *job, const struct rt_answer *runs, size_t n,
                               const struct rt_runstats *agg)
{
	cJSON *j = cJSON_CreateObject();
	cJSON_AddStringToObject(j, "job", job);
	cJSON *arr = cJSON_AddArrayToObject(j, "runs");
	for (size_t i = 0; i < n; i++) {
		cJSON *x = cJSON_CreateObject();
		cJSON_AddItemToObject(x, "run", rt_json_run(&runs[i]));
		cJSON_AddItemToObject(x, "stats", rt_json_stats(&runs[i].st));
		ans_add_allocation(x, &runs[i].st);
		struct rt_efficiency eff;
		rt_efficiency(&runs[i].st, runs[i].meta, &eff);
		rt_json_add_efficiency(x, &eff);
		cJSON_AddItemToArray(arr, x);
	}
	struct rt_recommendation r;
	rt_recommend(agg, &r);
	cJSON_AddItemToObject(j, "stats", rt_json_stats(agg));
	cJSON_AddItemToObject(j, "table", rt_json_summary_rows(agg, runs[n - 1].meta));
	/* the aggregate against what the newest run was given */
	struct rt_efficiency eff;
	rt_efficiency(agg, runs[n - 1].meta, &eff);
	rt_json_add_efficiency(j, &eff);
	ans_add_allocation(j, agg);
	cJSON_AddItemToObject(j, "findings", rt_json_findings(agg));
	cJSON_AddItemToObject(j, "gpus", rt_json_gpus(agg));
	cJSON_AddItemToObject(j, "recommendation", rt_json_recommendation(&r));
	return j;
}

static int cmd_job_summary(struct rt_store *s, const struct rt_answer_opts *o)
{
	struct rt_answer *runs;
	size_t n;
	struct rt_runstats agg;
	if (rt_answer_job(s, o, &runs, &n))
		return 1;
	if (rt_answer_job_stats(runs, n, &agg)) {
		free_runs(runs, n);
		rt_say("out of memory");
		return 1;
	}
	int rc = 0;
	if (o->json)
		rc = print_json(json_job_summary(o->job, runs, n, &agg));
	else
		rt_print_job_summary(stdout, o->job, runs, n);
	free_runs(runs, n);
	return rc;
}

/* The lines below the table, as the text and Markdown say them. */
static void add_notes(cJSON *j, const struct rt_answer *a)
{
	struct rt_note notes[RT_NOTES_MAX];
	size_t nn = rt_summary_notes(a, notes, RT_NOTES_MAX);
	cJSON *na = cJSON_AddArrayToObject(j, "notes");
	for (size_t i = 0; na && i < nn; i++) {
		cJSON *no = cJSON_CreateObject();
		cJSON_AddStringToObject(no, "label", notes[i].label);
		cJSON_AddStringToObject(no, "text", notes[i].text);
		cJSON_AddItemToArray(na, no);
	}
}

/* summary --json of one run. */
static cJSON *json_run_summary(const struct rt_answer *a)
{
	cJSON *j = cJSON_CreateObject();
	struct rt_recommendation r;
	rt_recommend(&a->st, &r);
	cJSON_AddItemToObject(j, "run", rt_json_run(a));
	cJSON_AddItemToObject(j, "stats", rt_json_stats(&a->st));
	cJSON_AddItemToObject(j, "table", rt_json_summary_rows(&a->st, a->meta));
	struct rt_efficiency eff;
	rt_efficiency(&a->st, a->meta, &eff);
	rt_json_add_efficiency(j, &eff);
	char line[300];
	rt_answer_line(line, sizeof(line), &a->st, &eff, &r);
	cJSON_AddStringToObject(j, "answer", line);
	ans_add_num_or_null(j, "process_rss_peak_mib",
	                    a->st.rss_max_mib >= 0 ? a->st.rss_max_mib : NAN);
	ans_add_num_or_null(j, "process_memory_peak_mib",
	                    a->st.mem_peak_mib >= 0 ? a->st.mem_peak_mib : NAN);
	add_notes(j, a);
	ans_add_allocation(j, &a->st);
	cJSON_AddItemToObject(j, "findings", rt_json_findings(&a->st));
	cJSON_AddItemToObject(j, "gpus", rt_json_gpus(&a->st));
	struct rt_seff seff;
	if (rt_seff(&a->st, a->meta, &seff)) /* (a Slurm job's, as seff says it) */
		cJSON_AddItemToObject(j, "seff", rt_json_seff(&seff));
	if (cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(a->meta, "cgroup"),
	                                     "parts")) /* (a job's group: its steps, containers) */
		cJSON_AddItemToObject(j, "parts", rt_json_parts(a->meta, a->st.duration));
	if (a->st.lines)
		cJSON_AddItemToObject(j, "recommendation", rt_json_recommendation(&r));
	else /* nothing was measured: nothing to recommend */
		cJSON_AddNullToObject(j, "recommendation");
	return j;
}

int rt_cmd_summary(struct rt_store *s, const struct rt_answer_opts *o)
{
	if (o->job)
		return cmd_job_summary(s, o);
	struct rt_answer a;
	if (rt_answer_run(s, o->run, 0, &a))
		return 1;
	int rc = 0;
	if (o->json)
		rc = print_json(json_run_summary(&a));
	else if (o->markdown)
		rt_print_summary_markdown(stdout, &a);
	else
		rt_print_summary(stdout, &a);
	rt_answer_free(&a);
	return rc;
}

/* recommend --json: the run (or the job's runs), its allocation,
 * findings, recommendation and offers. */
/* --external-run-id: the branches the answer is the largest of. */
static void branches_json(cJSON *j, size_t n, const struct rt_largest *by)
{
	cJSON *x = cJSON_AddObjectToObject(j, "branches");
	cJSON_AddNumberToObject(x, "count", (double)n);
	cJSON_AddNumberToObject(x, "measured", (double)by->measured);
	cJSON_AddNumberToObject(x, "running", (double)by->running);
	cJSON_AddNumberToObject(x, "cpu_from_run", (double)by->cpu_run);
	cJSON_AddNumberToObject(x, "memory_from_run", (double)by->memory_run);
	cJSON_AddStringToObject(x, "rule",
	                        "the largest any one branch needs, resource by resource");
}

static int recommend_json(const struct rt_answer_opts *o, const struct rt_answer *runs, size_t n,
                          const struct rt_runstats *st, const struct rt_recommendation *r,
                          const struct rt_offer *off, const struct rt_largest *by)
{
	cJSON *j = cJSON_CreateObject();
	if (o->job) {
		cJSON *x = cJSON_AddObjectToObject(j, "job");
		cJSON_AddStringToObject(x, "name", o->job);
		if (o->stage)
			cJSON_AddStringToObject(x, "stage", o->stage);
		if (o->ext_run)
			cJSON_AddStringToObject(x, "external_run_id", o->ext_run);
		cJSON *ids = cJSON_AddArrayToObject(x, "runs");
		for (size_t i = 0; i < n; i++)
			cJSON_AddItemToArray(ids, cJSON_CreateNumber((double)runs[i].ri.id));
		cJSON_AddNumberToObject(x, "duration_secs", st->duration);
		if (o->ext_run)
			branches_json(j, n, by);
	} else {
		cJSON_AddItemToObject(j, "run", rt_json_run(&runs[0]));
	}
	ans_add_allocation(j, st);
	cJSON_AddItemToObject(j, "findings", rt_json_findings(st));
	cJSON_AddItemToObject(j, "recommendation", rt_json_recommendation(r));
	char line[256];
	const char *name;
	if (rt_scheduler_line(runs[0].meta, r, line, sizeof(line), &name)) {
		cJSON *x = cJSON_AddObjectToObject(j, "scheduler"); /* the same, as it takes it */
		cJSON_AddStringToObject(x, "name", name);
		cJSON_AddStringToObject(x, "line", line);
		if (!strcmp(name, "kubernetes") && n == 1) /* each container its own */
			cJSON_AddItemToObject(x, "containers",
			                      rt_json_parts(runs[0].meta, runs[0].st.duration));
	}
	rt_json_offer(j, off);
	return print_json(j);
}

/* A pod's containers, each its own resources block (Kubernetes asks per
 * container; the pod's line above is their sum). */
static void print_containers(const struct rt_answer *a)
{
	struct rt_job_part p[16];
	size_t n = rt_job_parts(a->meta, p, 16);
	char line[256];
	int shown = 0;
	for (size_t i = 0; i < n; i++)
		if (rt_container_line(&p[i], a->st.duration, line, sizeof(line)))
			printf("  %-19s %s\n", shown++ ? "" : "per container", line);
}

/* recommend: the recommendation's lines; for one run, what it was given
 * against what it used; the offers. */
static void recommend_text(const struct rt_answer_opts *o, const struct rt_answer *runs, size_t n,
                           const struct rt_runstats *st, const struct rt_recommendation *r,
                           const struct rt_offer *off, const struct rt_largest *by)
{
	const struct rt_answer *one = &runs[0];
	char what[320], name[128];
	ans_clean(name, sizeof(name), o->job ? o->job : one->ri.job_name);
	if (o->job)
		snprintf(what, sizeof(what), "job %s (%zu run%s)", name, n, n == 1 ? "" : "s");
	else if (name[0])
		snprintf(what, sizeof(what), "run %llu (%s)", (unsigned long long)one->ri.id, name);
	else
		snprintf(what, sizeof(what), "run %llu", (unsigned long long)one->ri.id);
	rt_print_recommendation(stdout, what, st, r);
	char line[256];
	const char *sched;
	/* (for --job: as its latest run's scheduler takes it) */
	if (rt_scheduler_line(one->meta, r, line, sizeof(line), &sched))
		printf("  %-19s %s\n", rt_scheduler_label(sched), line);
	if (sched && !strcmp(sched, "kubernetes") && !o->job)
		print_containers(one);
	if (o->ext_run)
		printf("  %-19s the largest any one of %zu branches needs (%zu still running): CPU "
		       "from run %llu, memory from run %llu\n",
		       "branches", n, by->running, (unsigned long long)by->cpu_run,
		       (unsigned long long)by->memory_run);
	if (!o->job) { /* the reasons: what it was given against what it used */
		struct rt_efficiency e;
		char eff[6][RT_EFF_LEN];
		rt_efficiency(st, one->meta, &e);
		size_t ne = rt_efficiency_text(&e, r, eff, 6);
		for (size_t i = 0; i < ne; i++)
			printf("  %-19s %s\n", i ? "" : "given against used", eff[i]);
	}
	rt_print_offer(stdout, off);
	fflush(stdout);
}

int rt_cmd_recommend(struct rt_store *s, const struct rt_answer_opts *o)
{
	struct rt_answer *runs = NULL, one;
	size_t n = 1;
	struct rt_runstats st;
	if (o->job) {
		if (rt_answer_job(s, o, &runs, &n))
			return 1;
		if (rt_answer_job_stats(runs, n, &st)) {
			free_runs(runs, n);
			rt_say("out of memory");
			return 1;
		}
	} else {
		if (rt_answer_run(s, o->run, 0, &one))
			return 1;
		runs = &one;
		st = one.st;
	}
	if (!st.lines) {
		char id[32];
		snprintf(id, sizeof(id), "%llu", (unsigned long long)runs[n - 1].ri.id);
		rt_say("%s %s has no samples (%s): nothing to recommend", o->job ? "job" : "run",
		       o->job ? o->job : id,
		       !o->job && rt_run_status_of(runs[n - 1].ri.status) == RT_RUN_RUNNING
		           ? "it is still running and has no full interval yet"
		           : "it ended before its first one");
		if (o->job)
			free_runs(runs, n);
		else
			rt_answer_free(&one);
		return 1;
	}
	struct rt_recommendation r;
	struct rt_largest by = {0};
	if (o->ext_run) /* branches, each on a server of its own */
		rt_recommend_largest(runs, n, &r, &by);
	else
		rt_recommend(&st, &r);
	struct rt_offer off = {0};
	if (o->servers) {
		/* the run's cost: the newest run of a job says where it ran */
		struct rt_answer base = runs[n - 1];
		base.st.duration = st.duration;
		rt_offer_fetch(s, &base, &r, o->servers, &off);
	}
	int rc = 0;
	if (o->json) {
		rc = recommend_json(o, runs, n, &st, &r, &off, &by);
	} else {
		recommend_text(o, runs, n, &st, &r, &off, &by);
	}
	rt_offer_free(&off);
	if (o->job)
		free_runs(runs, n);
	else
		rt_answer_free(&one);
	return rc;
}
