/*
 * learn.c - the `learn` verb: how a job ended, as its scheduler saw it,
 * added to its stored run.
 *
 * The recorder of a Slurm job's group starts `rt-export learn RUN` when
 * the run ends and does not wait for it: sampling never waits on a
 * scheduler. It asks `scontrol show job ID` (while slurmctld still knows
 * the job), else `sacct` (slurmdbd's record), each bounded by 10 s, every
 * second for up to --wait seconds (default 120) while the job is still
 * completing or the controller too busy to answer (a loaded node's
 * slurmctld can take longer than 10 s; one that answers without knowing
 * the job three times running is believed). It writes "scheduler" into
 * the run's metadata: the end state (COMPLETED, CANCELLED, TIMEOUT,
 * OUT_OF_MEMORY, FAILED, NODE_FAIL, PREEMPTED...), the exit code, the
 * time limit, the elapsed time and what Slurm allocated. Where neither
 * command is there, or neither knows the job, one line says what was not
 * learned. Then the run's answer goes into the job's own record
 * (slurmrecord.c), for its owner.
 *
 * The output read is the scheduler's, but some of its fields are the job
 * owner's (its name, comment, command, paths): only fields Slurm itself
 * writes are taken, from the lines after the one naming the job's user
 * (the name is before it), each its first occurrence.
 */
#define _GNU_SOURCE
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "rt/common.h"
#include "sched/slurm.h"

/* The end as the "scheduler" object, unformatted; NULL: no memory. */
static char *end_json(const struct rt_slurm_said *e)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "name", "slurm");
	cJSON_AddStringToObject(o, "state", e->state);
	cJSON_AddStringToObject(o, "exit_code", e->exit_code);
	const char *keys[] = {"time_limit_secs", "elapsed_secs", "alloc_cpus",
	                      "alloc_memory_bytes"};
	const double vals[] = {e->time_limit, e->elapsed, e->cpus, e->mem_bytes};
	for (int i = 0; i < 4; i++)
		if (vals[i] >= 0)
			cJSON_AddNumberToObject(o, keys[i], vals[i]);
		else
			cJSON_AddNullToObject(o, keys[i]);
	cJSON_AddStringToObject(o, "from", e->from);
	char *text = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	return text;
}

/* The end added to the run's stored metadata as its last key, the stored
 * text otherwise kept byte for byte (its nanosecond times do not survive
 * a trip through doubles). Once: a run that has it keeps it. 0 or an
 * RT_E_* / -errno. */
static int store_end(struct rt_store *s, uint64_t run, const struct rt_slurm_said *e)
{
	char *meta = NULL;
	size_t len = 0;
	int rc = rt_store_get_meta(s, run, &meta, &len);
	if (rc)
		return rc;
	cJSON *m = cJSON_ParseWithLength(meta, len);
	int ok = cJSON_IsObject(m), had = cJSON_HasObjectItem(m, "scheduler");
	cJSON_Delete(m);
	while (len && meta[len - 1] != '}')
		len--;
	char *add = ok && !had && len > 1 ? end_json(e) : NULL;
	char *text = add ? malloc(len + strlen(add) + 16) : NULL;
	if (text) {
		int n = snprintf(text, len + strlen(add) + 16, "%.*s,\"scheduler\":%s}",
		                 (int)(len - 1), meta, add);
		rc = rt_store_put_meta(s, run, text, (size_t)n);
	} else {
		rc = !ok ? RT_E_CORRUPT : had ? 0 : -ENOMEM;
	}
	free(text);
	free(add);
	free(meta);
	return rc;
}

/* Ask until the job has ended, or the deadline: 0 with e, else 1 (said).
 * A controller that does not answer in time is asked again until the
 * deadline; one that answers without knowing the job, three times. */
static int learn_end(const char *job, unsigned wait_s, struct rt_slurm_said *e)
{
	char why[300] = "";
	time_t until = time(NULL) + wait_s;
	for (int unreachable = 0;; sleep(1)) {
		int rc = rt_slurm_ask(job, e, why, sizeof(why));
		if (rc == 0 && !rt_slurm_ending(e->state))
			return 0;
		if (rc == -1 || (rc == 1 && ++unreachable >= 3) || time(NULL) >= until) {
			rt_say(
			    "how Slurm job %s ended was not learned (%s): its run keeps rt's own "
			    "view",
			    job,
			    rc == -1  ? "neither scontrol nor sacct runs here"
			    : rc == 0 ? "it was still ending"
			              : why);
			return 1;
		}
	}
}

int verb_learn(const struct args *a, struct rt_store *ro)
{
	struct rt_runinfo ri;
	if (rt_run_resolve(ro, a->run, &ri))
		return 1;
	cJSON *m = ri.meta_json ? cJSON_Parse(ri.meta_json) : NULL;
	const cJSON *al = cJSON_GetObjectItemCaseSensitive(m, "allocation");
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(al, "slurm_job_id");
	char job[96] = "";
	if (cJSON_IsString(id) && strspn(id->valuestring, "0123456789_") == strlen(id->valuestring))
		snprintf(job, sizeof(job), "%s", id->valuestring);
	cJSON_Delete(m);
	uint64_t run = ri.id;
	rt_run_free(&ri);
	if (!job[0]) {
		rt_say("run %llu is no Slurm job's: nothing to learn", (unsigned long long)run);
		return 1;
	}
	struct rt_slurm_said e;
	if (learn_end(job, a->wait_s ? a->wait_s : 120, &e))
		return 1;
	struct rt_store *s = NULL;
	int rc = rt_store_open(rt_store_dir(ro), RT_STORE_RDWR, &s);
	if (!rc)
		rc = store_end(s, run, &e);
	rt_store_close(s);
	if (rc)
		rt_say("how Slurm job %s ended (%s) was not stored: %s", job, e.state,
		       rc == RT_E_UNSAFE ? rt_store_refusal() : rt_strerror(rc));
	else /* (its failure said: the run keeps its answer all the same) */
		(void)rt_slurm_note(ro, run, job);
	return rc ? 1 : 0;
}
