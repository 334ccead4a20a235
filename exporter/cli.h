/*
 * cli.h - what rt-export's command line shares with the files of its
 * verbs (main.c parses it and runs a verb; maintain.c: verify, recover,
 * compact, delete; stream_verb.c: replay, tail, live). Internal to
 * exporter/.
 */
#ifndef RT_CLI_H
#define RT_CLI_H

#include <stdint.h>

#include "export.h"
#include "rt/fmt.h"
#include "rt/store.h"
#ifdef RT_EXPORT_FULL
#include "answer/answer.h"
#endif

enum verb_id {
	V_RUNS,
	V_VERIFY,
	V_RECOVER,
	V_SHOW,
	V_REPLAY,
	V_TAIL,
	V_LIVE,
	V_UPLOAD,
	V_PUSH,
	V_SUMMARY,
	V_RECOMMEND,
	V_REPORT,
	V_DISCOVER,
	V_COMPACT,
	V_DELETE,
	V_BUDGET,
	V_LEARN,
	V_SINKS,
	V_N
};

/* The command line, parsed. */
struct args {
	const char *store, *verb, *run, *output, *from, *to;
	enum verb_id id; /* of verb, once it is known */
	uint64_t seen;   /* options given, by opt_id (at most 64) */
	enum rt_format fmt;
	uint64_t every, last_n;
	double every_secs; /* --every with a unit: a time, made samples per run */
	int all;
	int no_wait; /* tail: no live run is no wait for one */
	int fd;      /* live --fd N: the recorder's stream (-1: none) */
	int verbose;
	int summary, quiet; /* live: the summary after the last line; no lines */
	int csv_extended, csv_set;
	int csv_ms; /* replay --csv-ms: CSV timestamps to the millisecond */
	struct rt_answer_opts ans;
	const char *before;    /* delete --before T */
	const char *url;       /* push --url URL (its --to is the sink) */
	const char *format;    /* -f: json|csv (streams), text|markdown|json (summary) */
	int compact;           /* delete --compact */
	unsigned wait_s;       /* learn --wait S */
	const char *slurm_job; /* summary, recommend --slurm-job ID */
};

/* main.c: the end of a verb (its store closed, its exit code); a short
 * wait; --from/--to as a time; "waiting for ..." said once */
int cli_finish(struct rt_sink *k, int rc);
void cli_wait_a_moment(void);
int cli_parse_time_opt(const char *opt, const char *v, uint64_t *ns);
void cli_say_waiting(const char *dir);

/* maintain.c, stream_verb.c: the verbs main.c's table runs */
int verb_verify(const struct args *a, struct rt_store *s);
int verb_recover(const struct args *a, struct rt_store *s);
int verb_compact(const struct args *a, struct rt_store *s);
int verb_delete(const struct args *a, struct rt_store *none);
int verb_stream(const struct args *a, struct rt_store *s);
/* learn.c: how a Slurm job ended, into its stored run */
int verb_learn(const struct args *a, struct rt_store *s);
/* slurmrecord.c: the run's answer into Slurm job's record (0; 1 said);
 * summary/recommend --slurm-job ID: the answer from it */
int rt_slurm_note(struct rt_store *s, uint64_t run, const char *job);
int verb_slurm_job(const struct args *a);

#endif
