/*
 * answer.h - after the job: what a run (or every run of a job) needed, and
 * where it should run next time. The `summary`, `recommend` and `report`
 * verbs and the recorder's --summary (through `live --summary`) share it.
 *
 *   summary.c  runs -> statistics; the summary and recommendation, human
 *              and JSON; the cheapest servers and the run's cost
 *   report.c   one self-contained HTML page with charts
 */
#ifndef RT_ANSWER_H
#define RT_ANSWER_H

#define RT_EFF_LEN 200

#include <cjson/cJSON.h>
#include <stdio.h>

#include "net/cloud.h"
#include "export.h"
#include "net/net.h"
#include "answer/stats.h"

/* One run, computed. */
struct rt_answer {
	struct rt_runinfo ri;
	cJSON *meta; /* the stored metadata, parsed (NULL if unreadable) */
	struct rt_series series;
	struct rt_runstats st;
	int has_exit_code, exit_code;
	int partial; /* crashed or still running: the stats cover what is stored */
};

/* Resolve spec and compute (errors already said). keep_series keeps the
 * lines for the report. Returns 0 or 1. */
int rt_answer_run(struct rt_store *s, const char *spec, int keep_series, struct rt_answer *a);
/* Every stored run of o->job (of its stage o->stage and external run
 * o->ext_run when set; the last o->last of them when > 0), oldest first.
 * Returns 0 or 1 (no such run: said, with the hint). */
/* The aggregate of a job's runs (summary, recommend and report --job). */
int rt_answer_job_stats(const struct rt_answer *runs, size_t n, struct rt_runstats *agg);
int rt_answer_job(struct rt_store *s, const struct rt_answer_opts *o, struct rt_answer **out,
                  size_t *n);
/* The same, saying nothing when there is no such run (1, *n = 0). */
int rt_answer_job_quiet(struct rt_store *s, const struct rt_answer_opts *o, struct rt_answer **out,
                        size_t *n);
/* Which runs the largest of branches took each figure from (branches.c). */
struct rt_largest {
	size_t measured, running; /* branches with a sample; still running of them */
	uint64_t cpu_run, memory_run;
};
/* The step's need from its branches (the runs of one stage in one external
 * run): each resource the largest any one branch needs by rt_recommend, its
 * reason with it; a branch without a sample has no say. */
void rt_recommend_largest(const struct rt_answer *runs, size_t n, struct rt_recommendation *out,
                          struct rt_largest *by);
/* The branches of a's step: every stored run with a's job, stage and
 * external run id, a itself among them, oldest first; none (0, *n = 0)
 * when a has no stage or external run id, or the store cannot be listed.
 * Returns 0. */
int rt_answer_branches(struct rt_store *s, const struct rt_answer *a, struct rt_answer **out,
                       size_t *n);
/* A run whose lines came from elsewhere (live --summary): takes meta_json
 * and the series over. */
int rt_answer_from_series(const char *meta_json, size_t len, struct rt_series *ser,
                          struct rt_answer *a);
void rt_answer_free(struct rt_answer *a);
/* "shared", "dedicated" or NULL (no process tree, unreadable): what
 * Sentinel's host_server_allocation means. */
const char *rt_run_allocation(struct rt_store *s, const struct rt_runinfo *ri);

/* The cheapest servers for a recommendation, and the run's cost. */
struct rt_offer {
	unsigned asked; /* --servers N, 0: none */
	int ok;         /* the server list arrived */
	char why[320];  /* why it did not */
	struct rt_server *servers;
	size_t nservers;
	struct rt_cloud cloud; /* where the run was recorded, vendor "" when unknown */
	int cloud_known;       /* discovery ran for that host (vendor "": no cloud) */
	double price_here;     /* USD/hour of that instance, NAN when unknown */
	char price_why[320];
	double duration; /* seconds, for the costs */
};
/* Ask Keeper (bounded, one line to stderr when it fails) and look up the
 * run's cloud (the cache, or discovery when the run was recorded here). */
void rt_offer_fetch(struct rt_store *s, const struct rt_answer *a,
                    const struct rt_recommendation *r, unsigned n, struct rt_offer *o);
void rt_offer_free(struct rt_offer *o);
/* The run's cloud only: the cache, or discovery (2 s at most) when the run
 * was recorded on this machine and it was never discovered here. */
void rt_offer_cloud(struct rt_store *s, const struct rt_answer *a, struct rt_offer *o);

/* What the job was given against what it used (the run's "allocation",
 * recorded since rt 0.3). known 0: the run says nothing of it. */
struct rt_efficiency {
	int known, whole_host;               /* whole_host: nothing asked, nothing limited */
	double cpu_given, cpu_mean, cpu_pct; /* cores; pct: CPU s / (given x wall) */
	double mem_given_mib, mem_peak_mib, mem_pct;
	unsigned gpu_given;
	double gpu_mean, gpu_used, gpu_pct;             /* GPUs busy on average, the most in use */
	double vram_given_mib, vram_peak_mib, vram_pct; /* -1: unknown */
	const char *cpu_from, *mem_from, *gpu_from;
	const char *note; /* where sources disagreed */
};
void rt_efficiency(const struct rt_runstats *st, const cJSON *meta, struct rt_efficiency *e);
/* The plain sentences ("given 8 cores, used 1.1 on average (14 %)"), none
 * when the job had the whole host; how many, into out. */
size_t rt_efficiency_text(const struct rt_efficiency *e, const struct rt_recommendation *r,
                          char out[][RT_EFF_LEN], size_t max);
/* The one-sentence answer: "used 1.1 of 8 cores and 2.1 of 16 GiB: 2 vCPUs
 * and 3 GiB would do". */
void rt_answer_line(char *buf, size_t cap, const struct rt_runstats *st,
                    const struct rt_efficiency *e, const struct rt_recommendation *r);
/* "allocation_given" and "efficiency" into obj (null for an older run). */
void rt_json_add_efficiency(cJSON *obj, const struct rt_efficiency *e);

/* Text */
void rt_print_summary(FILE *f, const struct rt_answer *a);
/* The same as a Markdown table a person pastes into a ticket. */
void rt_print_summary_markdown(FILE *f, const struct rt_answer *a);
/* The Markdown summary and the run's CPU and memory over time as Mermaid
 * charts (at most 100 points each): for GITHUB_STEP_SUMMARY. */
void rt_print_step_summary(FILE *f, const struct rt_answer *a);
void rt_print_job_summary(FILE *f, const char *job, const struct rt_answer *runs, size_t n);
void rt_print_recommendation(FILE *f, const char *what, const struct rt_runstats *st,
                             const struct rt_recommendation *r);
void rt_print_offer(FILE *f, const struct rt_offer *o);

/* The summary's table, one list for text, JSON and HTML: a value's mean,
 * p95 and max (c) with a note, or (c NULL) a note alone (totals). */
struct rt_summary_row {
	const char *label;
	const struct rt_colstat *c;
	int prec;
	char note[200];
};
#define RT_SUMMARY_ROWS 12
size_t rt_summary_rows(const struct rt_runstats *st, const cJSON *meta, struct rt_summary_row *out,
                       size_t max);

/* JSON */
cJSON *rt_json_run(const struct rt_answer *a);
cJSON *rt_json_summary_rows(const struct rt_runstats *st, const cJSON *meta); /* "table" */
cJSON *rt_json_stats(const struct rt_runstats *st);
/* argv (a JSON array of strings) as one shell line a person can paste back:
 * plain words as they are, others in '...', words with control characters
 * in $'...' */
void rt_shell_join(struct rt_buf *b, const cJSON *argv);
cJSON *rt_json_recommendation(const struct rt_recommendation *r);
cJSON *rt_json_findings(const struct rt_runstats *st);
/* What held the job back, as plain sentences (only what matters): up to
 * max of them into out; how many. start_ns dates an OOM kill. */
#define RT_FINDING_LEN 200

/*
 * What the summary says below its table, the same in every form (text,
 * Markdown and the GitHub step summary, JSON "notes", the report): given
 * against used, the server allocation, each finding, the recommendation
 * and why it was raised. label is the text form's left column ("" where a
 * line goes on the one above).
 */
#define RT_NOTE_LEN 700
struct rt_note {
	const char *label;
	char text[RT_NOTE_LEN];
};
#define RT_NOTES_MAX 40
size_t rt_summary_notes(const struct rt_answer *a, struct rt_note *out, size_t max);
/* Kills elsewhere on the host during the run, said as the host's (never
 * among what held the job back): 1 with the line in out, else 0. */
int rt_host_oom_text(const struct rt_runstats *st, uint64_t start_ns, char *out, size_t cap);
size_t rt_findings_text(const struct rt_runstats *st, uint64_t start_ns, char out[][RT_FINDING_LEN],
                        size_t max);
/* "servers" and "cost" into obj */
void rt_json_offer(cJSON *obj, const struct rt_offer *o);

/* The earlier runs of a's job and stage (the same job_name and
 * stage_name), at most max, oldest first, each computed as rt_answer_run
 * does: *out (free each with rt_answer_free, then the array) and *n (0:
 * none, or a has no job name). 0 or -ENOMEM. */
int rt_answer_history(struct rt_store *s, const struct rt_answer *a, size_t max,
                      struct rt_answer **out, size_t *n);

/* The job against its budget (--max-memory, --max-cpu) in one line into
 * buf ("memory 2.00 GiB: peak 2.41 GiB, over by 0.41 GiB; CPU 4 cores:
 * mean 1.20, within"); *over says whether it went over. 1, or 0 when the
 * run set no budget (or has no samples). */
int rt_budget_text(const struct rt_answer *a, char *buf, size_t cap, int *over);

/* The recommendation as what ran the job takes it, into buf, and *name
 * ("metaflow": "@resources(cpu=2, memory=4096, gpu=1)"; "slurm":
 * "--cpus-per-task=2 --mem=4G --gres=gpu:1"); its length, 0 (and *name
 * NULL) when what ran the job has no such form. */
size_t rt_scheduler_line(const cJSON *meta, const struct rt_recommendation *r, char *buf,
                         size_t cap, const char **name);
/* A job group that held an allocation and no process (metadata
 * cgroup.idle): one sentence into buf, its length; 0 for any other run. */
size_t rt_idle_text(const cJSON *meta, char *buf, size_t cap);

/* How the recommend text introduces the line: "as sbatch options", ... */
const char *rt_scheduler_label(const char *name);

/* Meta helpers (NULL / NAN when absent). */
/* A job's parts (cgroup.parts of a run of a job's group, parts.c): a
 * Slurm job's steps, a pod's containers, each its own group's figures. */
struct rt_job_part {
	char name[64];   /* "batch", "0", a container id's first 12 characters */
	double cpu_secs; /* -1: unknown */
	double peak_mib, limit_mib, oom_kills; /* limit 0: none */
	/* a pod's container whose resources its spec sets: where the runtime
	 * named the pod's containers, only those it named (not the sandbox,
	 * CRI-O's "POD", nor conmon); else every part */
	int own_resources;
};
size_t rt_job_parts(const cJSON *meta, struct rt_job_part *out, size_t max);
/* "steps" (Slurm), "containers" (Kubernetes), else "parts". */
const char *rt_job_parts_label(const cJSON *meta);
/* "0: CPU 1.63 s, peak 7 MiB of 300 MiB" */
size_t rt_job_part_text(const struct rt_job_part *p, char *buf, size_t cap);
/* A container's own resources block from its own figures over the run's
 * duration: CPU requested in millicores (its mean, up to 100m), memory
 * requested and limited alike (its peak x 1.2; killed: its limit x 1.2). */
size_t rt_container_resources(const struct rt_job_part *p, double duration, char *buf, size_t cap);
/* "<id>: resources: {...}", said "at least" for a container OOM-killed;
 * 0 for a part without own_resources. */
size_t rt_container_line(const struct rt_job_part *p, double duration, char *buf, size_t cap);
/* The parts as JSON ("parts"), a pod's containers with their "resources". */
cJSON *rt_json_parts(const cJSON *meta, double duration);
/* How a Slurm job ended, as `rt-export learn` added it ("scheduler"). */
struct rt_slurm_end {
	int known;
	char state[32], exit_code[16];
	double time_limit, elapsed, cpus, mem_bytes; /* NAN or < 0: unknown */
};
int rt_slurm_end(const cJSON *meta, struct rt_slurm_end *e); /* 1 when known */
/* "OUT_OF_MEMORY, exit code 0:125; ran 0:00:02 of its 1:00:00 time limit" */
size_t rt_slurm_end_text(const struct rt_slurm_end *e, char *buf, size_t cap);
/* The --time to ask, minutes (0: not known): the job's elapsed x 1.2; a
 * job stopped at its limit (TIMEOUT), at least the limit x 1.5. */
long rt_slurm_time_minutes(const struct rt_slurm_end *e, double run_secs, int *at_least);
/* seff's two figures, computed seff's way (seff.c). */
struct rt_seff {
	int known;
	double total_cpu, alloc_cpus, elapsed, cpu_pct; /* pct: NAN unknown */
	const char *elapsed_from;                       /* "Slurm's", "the run's" */
	double req_mem_mib, peak_mib, mem_pct;
};
int rt_seff(const struct rt_runstats *st, const cJSON *meta, struct rt_seff *f);
size_t rt_seff_text(const struct rt_seff *f, char *buf, size_t cap);
cJSON *rt_json_seff(const struct rt_seff *f);
const char *rt_meta_str(const cJSON *meta, const char *section, const char *key);
double rt_meta_num(const cJSON *meta, const char *section, const char *key);

/* "1h 02m 03s", "4m 05s", "2.5 s" */
void rt_fmt_duration(char *buf, size_t cap, double secs);
/* "512 B", "12.0 KiB", "1.21 GiB" */
void rt_fmt_bytes(char *buf, size_t cap, double bytes);

/* ---- the verbs (exit status) ---- */
int rt_cmd_summary(struct rt_store *s, const struct rt_answer_opts *o);
int rt_cmd_recommend(struct rt_store *s, const struct rt_answer_opts *o);
int rt_cmd_report(struct rt_store *s, const struct rt_answer_opts *o);

#endif
