/*
 * slurmrecord.c - rt's answer for a Slurm job in the job's own record, for
 * its owner: written by the node's `learn` at the run's end, read by any
 * user with `rt-export summary --slurm-job ID` (or `recommend`), no store
 * needed.
 *
 * Where: slurmdbd's record (`sacctmgr update job ... set AdminComment=`),
 * since slurmctld refuses an update of a job that has finished, which it
 * has by the time its group empties. How: sched/admincomment.h, one piece
 * a node, merged: each node reads the field, puts its own piece, writes
 * it and reads it back. The database offers no compare-and-swap, so a
 * node whose read came before another's write can write over that piece:
 * where the job ran on several nodes (or the field holds another node's
 * piece), each node looks again 3 s and 18 s after its write, once every
 * write that read the field before it could have landed (each command is
 * bounded by 10 s), and puts its piece again when it is gone (up to five
 * rounds, a random second or two apart). So a job on many nodes keeps
 * every node's. A field that holds another tool's value
 * (jobstats' "JS1:...") is left as it is, said in one line.
 */
#define _GNU_SOURCE
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "answer/answer.h"
#include "answer/stats.h"
#include "cli.h"
#include "rt/common.h"
#include "sched/admincomment.h"
#include "sched/slurm.h"

#define ROUNDS 5

/* This node's name in the record: RT_SLURM_NODE, else the host's name up
 * to its first dot (Slurm's NodeName where it is the host's). */
static void node_name(char *buf, size_t cap)
{
	const char *e = getenv("RT_SLURM_NODE");
	if (e && *e && strlen(e) < cap &&
	    strspn(e, "abcdefghijklmnopqrstuvwxyz"
	              "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.") == strlen(e)) {
		snprintf(buf, cap, "%s", e);
		return;
	}
	if (gethostname(buf, cap - 1))
		snprintf(buf, cap, "node");
	buf[cap - 1] = '\0';
	buf[strcspn(buf, ".")] = '\0';
}

/* The run's piece: its answer, sbatch options, seff's figures and end. */
static cJSON *run_piece(struct rt_store *s, uint64_t run, double at)
{
	char spec[24], line[400], sb[300] = "", seff[300] = "", end[300] = "";
	snprintf(spec, sizeof(spec), "%llu", (unsigned long long)run);
	struct rt_answer a;
	if (rt_answer_run(s, spec, 0, &a))
		return NULL;
	struct rt_recommendation r;
	rt_recommend(&a.st, &r);
	struct rt_efficiency eff;
	rt_efficiency(&a.st, a.meta, &eff);
	rt_answer_line(line, sizeof(line), &a.st, &eff, &r);
	const char *name = NULL;
	if (a.st.lines)
		rt_scheduler_line(a.meta, &r, sb, sizeof(sb), &name);
	struct rt_seff f;
	if (rt_seff(&a.st, a.meta, &f))
		rt_seff_text(&f, seff, sizeof(seff));
	struct rt_slurm_end e;
	if (rt_slurm_end(a.meta, &e))
		rt_slurm_end_text(&e, end, sizeof(end));
	rt_answer_free(&a);
	cJSON *p = cJSON_CreateObject();
	cJSON_AddStringToObject(p, "run", spec);
	cJSON_AddStringToObject(p, "answer", line);
	cJSON_AddStringToObject(p, "sbatch", sb);
	cJSON_AddStringToObject(p, "seff", seff);
	cJSON_AddStringToObject(p, "end", end);
	cJSON_AddNumberToObject(p, "at", at);
	return p;
}

/* The field's new text: what it held, with this node's piece put (malloc'd),
 * or NULL (said: another tool's value, or too long). A field of rt's
 * prefix that does not decode starts again from this piece alone. */
static char *merged_text(const char *job, const char *field, const char *node, const cJSON *piece)
{
	cJSON *doc = NULL;
	int d = rt_ac_decode(field, strlen(field), &doc);
	if (d > 0) {
		rt_say("rt's answer for Slurm job %s is not in its record: its AdminComment holds "
		       "another tool's value, left as it is",
		       job);
		return NULL;
	}
	if (d < 0 && rt_ac_decode("", 0, &doc))
		return NULL;
	char *text = rt_ac_put(doc, node, cJSON_Duplicate(piece, 1)) ? NULL : rt_ac_encode(doc);
	cJSON_Delete(doc);
	if (!text)
		rt_say("rt's answer for Slurm job %s is not in its record: more than %d characters",
		       job, RT_AC_MAX);
	return text;
}

/* Whether the record holds this node's piece now; *shared: the job ran on
 * more than one node, or another node's piece is there. */
static int piece_there(const char *job, const char *node, const char *run, double at, int *shared)
{
	static char field[RT_SLURM_RECORD_MAX];
	char why[300];
	int nodes = 0;
	cJSON *doc = NULL;
	int has = rt_slurm_record_read(job, RT_SLURM_ASK_MS, field, sizeof(field), &nodes, why,
	                               sizeof(why)) == 0 &&
	          rt_ac_decode(field, strlen(field), &doc) == 0 && rt_ac_has(doc, node, run, at);
	const cJSON *all = cJSON_GetObjectItemCaseSensitive(doc, "nodes");
	if (shared)
		*shared = nodes > 1 || cJSON_GetArraySize(all) > 1;
	cJSON_Delete(doc);
	return has;
}

/* One round: the field read, this node's piece put, written, read back.
 * 0: it holds the piece (*shared as piece_there says); 1: not yet
 * (again); -1: it cannot (said). */
static int note_round(const char *job, const char *node, const cJSON *piece, const char *run,
                      double at, int *shared)
{
	static char field[RT_SLURM_RECORD_MAX];
	char why[300];
	int nodes = 0;
	int rc = rt_slurm_record_read(job, RT_SLURM_ASK_MS, field, sizeof(field), &nodes, why,
	                              sizeof(why));
	char *text = rc ? NULL : merged_text(job, field, node, piece);
	if (rc > 0)
		return 1; /* (no record yet, or no answer in time: again) */
	if (rc == -2)
		return -1; /* (a cluster without slurmdbd: no record to write; not said) */
	if (rc == 0 && !text)
		return -1;
	if (rc == 0)
		rc = rt_slurm_record_write(job, text, why, sizeof(why));
	free(text);
	if (rc < 0) {
		rt_say("rt's answer for Slurm job %s is not in its record: %s", job, why);
		return -1;
	}
	return rc == 0 && piece_there(job, node, run, at, shared) ? 0 : 1; /* (2: again) */
}

/* A record other nodes write too: the piece still there once every write
 * that read the field before this one's could have landed (a read and a
 * write each bounded by RT_SLURM_ASK_MS), looked at twice. */
static int settled(const char *job, const char *node, const char *run, double at)
{
	const unsigned waits[] = {3, 2 * RT_SLURM_ASK_MS / 1000 - 2};
	for (int i = 0; i < 2; i++) {
		sleep(waits[i]);
		if (!piece_there(job, node, run, at, NULL))
			return 0;
	}
	return 1;
}

int rt_slurm_note(struct rt_store *s, uint64_t run, const char *job)
{
	if (getenv("RT_NO_SLURM_RECORD"))
		return 0;
	char node[65], runs[24];
	node_name(node, sizeof(node));
	snprintf(runs, sizeof(runs), "%llu", (unsigned long long)run);
	double at = (double)time(NULL);
	cJSON *piece = run_piece(s, run, at);
	if (!piece)
		return 1;
	srand((unsigned)getpid() ^ (unsigned)time(NULL));
	int rc = 1;
	for (int i = 0; i < ROUNDS && rc == 1; i++) {
		int shared = 0;
		if (i) /* (a random second or two: writers that met part) */
			usleep(1000000u + (unsigned)(rand() % 1000) * 1000u);
		rc = note_round(job, node, piece, runs, at, &shared);
		if (rc == 0 && shared && !settled(job, node, runs, at))
			rc = 1;
	}
	cJSON_Delete(piece);
	if (rc == 1)
		rt_say("rt's answer for Slurm job %s is not in its record: slurmdbd had no record "
		       "of the job, did not answer in time, or other nodes' writes kept replacing "
		       "it, %d times",
		       job, ROUNDS);
	return rc ? 1 : 0;
}

/* A string of a piece for a line: its control characters as '?'. */
static void put_clean(const char *label, const cJSON *p, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(p, key);
	if (!cJSON_IsString(v) || !v->valuestring[0])
		return;
	fputs(label, stdout);
	for (const char *c = v->valuestring; *c; c++)
		putchar((unsigned char)*c < 0x20 || *c == 0x7f ? '?' : *c);
	putchar('\n');
}

/* The record's pieces as text: each node's line, and what goes with it. */
static void print_pieces(const char *job, const cJSON *doc, int recommend)
{
	const cJSON *nodes = cJSON_GetObjectItemCaseSensitive(doc, "nodes");
	int n = cJSON_GetArraySize(nodes);
	printf("Slurm job %s: rt's answer from its record (%d node%s)\n", job, n,
	       n == 1 ? "" : "s");
	for (const cJSON *p = nodes->child; p; p = p->next) {
		const cJSON *run = cJSON_GetObjectItemCaseSensitive(p, "run");
		printf("%s (run %s there):\n", p->string,
		       cJSON_IsString(run) ? run->valuestring : "?");
		put_clean("  ", p, "answer");
		put_clean("  as sbatch options: ", p, "sbatch");
		if (recommend)
			continue;
		put_clean("  seff: ", p, "seff");
		put_clean("  Slurm: ", p, "end");
	}
}

/* The record's field decoded into *doc (0), else said (1). */
static int read_pieces(const char *job, cJSON **doc)
{
	static char field[RT_SLURM_RECORD_MAX];
	char why[300];
	int count;
	/* (a person waits: longer than a node's learn, which asks again) */
	int rc = rt_slurm_record_read(job, 60000, field, sizeof(field), &count, why, sizeof(why));
	if (rc == -2)
		rt_say("Slurm job %s: this cluster keeps no job database (slurmdbd), where rt puts "
		       "its answer; its run is in the node's store (docs/slurm.md)",
		       job);
	else if (rc)
		rt_say("Slurm job %s: its record cannot be read: %s", job, why);
	if (rc)
		return 1;
	int d = rt_ac_decode(field, strlen(field), doc);
	const cJSON *nodes = cJSON_GetObjectItemCaseSensitive(*doc, "nodes");
	if (d == 0 && nodes && nodes->child)
		return 0;
	cJSON_Delete(*doc);
	*doc = NULL;
	rt_say("Slurm job %s: %s", job,
	       d > 0   ? "its AdminComment holds another tool's value, not rt's answer"
	       : d < 0 ? "its AdminComment starts as rt's answer but is damaged"
	               : "its record holds no answer of rt's (the node's rt writes it when the "
	                 "job's run ends there; see docs/slurm.md)");
	return 1;
}

int verb_slurm_job(const struct args *a)
{
	const char *job = a->slurm_job;
	if (!*job || strlen(job) > 20 || strspn(job, "0123456789") != strlen(job)) {
		rt_say("--slurm-job takes a job id of digits, the raw one (sacct -o JobIDRaw; got "
		       "'%.40s')",
		       job);
		return 2;
	}
	cJSON *doc = NULL;
	if (read_pieces(job, &doc))
		return 1;
	if (a->ans.json) {
		cJSON_AddStringToObject(doc, "slurm_job_id", job);
		char *t = cJSON_Print(doc);
		if (t)
			puts(t);
		free(t);
	} else {
		print_pieces(job, doc, a->id == V_RECOMMEND);
	}
	cJSON_Delete(doc);
	return 0;
}
