/*
 * learn.c - the `learn` verb: how a job ended, as its scheduler saw it,
 * added to its stored run.
 *
 * The recorder of a Slurm job's group starts `rt-export learn RUN` when
 * the run ends and does not wait for it: sampling never waits on a
 * scheduler. It asks `scontrol show job ID` (while slurmctld still knows
 * the job), else `sacct` (slurmdbd's record), each bounded by 5 s, every
 * second for up to --wait seconds (default 120) while the job is still
 * completing, and writes "scheduler" into the run's metadata: the end
 * state (COMPLETED, CANCELLED, TIMEOUT, OUT_OF_MEMORY, FAILED, NODE_FAIL,
 * PREEMPTED...), the exit code, the time limit, the elapsed time and what
 * Slurm allocated. Where neither command is there, or neither knows the
 * job, one line says what was not learned.
 *
 * The output read is the scheduler's, but some of its fields are the job
 * owner's (its name, comment, command, paths): only fields Slurm itself
 * writes are taken, from the lines after the one naming the job's user
 * (the name is before it), each its first occurrence.
 */
#define _GNU_SOURCE
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "rt/common.h"

/* How a job ended, as the scheduler said it. */
struct sched_end {
	char state[32], exit_code[16], from[16];
	double time_limit, elapsed; /* seconds; -1: unknown or none */
	double cpus, mem_bytes;     /* what it allocated; -1: unknown */
};

/* Run argv (its stdout and stderr into out), at most timeout_ms. Its exit
 * status, or -1 when it could not run or ran over. */
static int run_capture(char *const argv[], char *out, size_t cap, int timeout_ms)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		/* raw: the null device, read-only, for the command's stdin */
		int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (null < 0 || dup2(null, 0) < 0 || dup2(p[1], 1) < 0 || dup2(p[1], 2) < 0)
			_exit(127);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(p[1]);
	size_t n = 0;
	struct timespec t0, now;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int left = timeout_ms; pid > 0 && left > 0;) {
		struct pollfd pf = {.fd = p[0], .events = POLLIN};
		if (poll(&pf, 1, left) <= 0)
			break;
		ssize_t r = read(p[0], out + n, cap - 1 - n);
		if (r <= 0)
			break;
		n += (size_t)r;
		clock_gettime(CLOCK_MONOTONIC, &now);
		left = timeout_ms - (int)((now.tv_sec - t0.tv_sec) * 1000 +
		                          (now.tv_nsec - t0.tv_nsec) / 1000000);
		if (n + 1 >= cap)
			break;
	}
	out[n] = '\0';
	close(p[0]);
	int st = 0;
	if (pid > 0 && waitpid(pid, &st, WNOHANG) == 0) {
		kill(pid, SIGKILL); /* over its time, or more output than wanted */
		waitpid(pid, &st, 0);
		return -1;
	}
	return pid > 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* "[D-]HH:MM:SS", "MM:SS" (scontrol's times): seconds, -1 otherwise. */
static double slurm_secs(const char *v)
{
	int d = 0, a = 0, b = 0, c = 0;
	if (sscanf(v, "%d-%d:%d:%d", &d, &a, &b, &c) == 4)
		return ((d * 24.0 + a) * 60 + b) * 60 + c;
	if (sscanf(v, "%d:%d:%d", &a, &b, &c) == 3)
		return (a * 60.0 + b) * 60 + c;
	if (sscanf(v, "%d:%d", &b, &c) == 2)
		return b * 60.0 + c;
	return -1;
}

/* "300M", "2G", "512K", "1T" (Slurm's memory, 1024s): bytes, -1 otherwise. */
static double slurm_bytes(const char *v)
{
	char *end;
	double x = strtod(v, &end);
	if (end == v || x < 0)
		return -1;
	const char *units = "KMGT";
	const char *u = *end ? strchr(units, *end) : NULL;
	return u ? x * (double)(1ull << (10 * (u - units + 1))) : *end ? -1 : x * 1048576;
}

/* The value of "key=" among the line's space-separated tokens (copied to
 * out), when it is there and out has not been set yet. */
static void take_token(const char *line, const char *key, char *out, size_t cap)
{
	size_t k = strlen(key);
	if (out[0])
		return; /* the first occurrence counts */
	for (const char *t = line; *t;) {
		while (*t == ' ')
			t++;
		size_t n = strcspn(t, " \n");
		if (n > k && !strncmp(t, key, k) && t[k] == '=') {
			snprintf(out, cap, "%.*s", (int)(n - k - 1), t + k + 1);
			return;
		}
		t += n;
	}
}

/* scontrol show job's lines, those after "UserId=" (see above). */
static int parse_scontrol(char *text, struct sched_end *e)
{
	char runtime[32] = "", limit[32] = "", cpus[16] = "", mem[32] = "", tres[160] = "";
	int after_user = 0;
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		const char *first = line + strspn(line, " ");
		if (!after_user) {
			after_user = !strncmp(first, "UserId=", 7);
			continue;
		}
		take_token(first, "JobState", e->state, sizeof(e->state));
		take_token(first, "ExitCode", e->exit_code, sizeof(e->exit_code));
		take_token(first, "RunTime", runtime, sizeof(runtime));
		take_token(first, "TimeLimit", limit, sizeof(limit));
		take_token(first, "NumCPUs", cpus, sizeof(cpus));
		take_token(first, "TRES", tres, sizeof(tres));
		take_token(first, "MinMemoryNode", mem, sizeof(mem));
	}
	if (!e->state[0])
		return -1;
	e->elapsed = slurm_secs(runtime);
	e->time_limit = slurm_secs(limit); /* (UNLIMITED: none) */
	e->cpus = cpus[0] ? strtod(cpus, NULL) : -1;
	const char *m = strstr(tres, "mem=");
	e->mem_bytes = m ? slurm_bytes(m + 4) : mem[0] ? slurm_bytes(mem) : -1;
	snprintf(e->from, sizeof(e->from), "scontrol");
	return 0;
}

/* sacct -P's one line of the job's allocation (no field of the owner's). */
static int parse_sacct(char *text, struct sched_end *e)
{
	char *f[6] = {0};
	char *line = strtok(text, "\n");
	for (int i = 0; line && i < 6; i++)
		f[i] = strsep(&line, "|");
	if (!f[5] || !f[0][0])
		return -1;
	snprintf(e->state, sizeof(e->state), "%.*s", (int)strcspn(f[0], " "), f[0]);
	snprintf(e->exit_code, sizeof(e->exit_code), "%s", f[1]);
	e->time_limit = f[2][0] && strcmp(f[2], "UNLIMITED") ? strtod(f[2], NULL) * 60 : -1;
	e->cpus = f[3][0] ? strtod(f[3], NULL) : -1;
	e->mem_bytes = slurm_bytes(f[4]);
	e->elapsed = f[5][0] ? strtod(f[5], NULL) : -1;
	snprintf(e->from, sizeof(e->from), "sacct");
	return 0;
}

/* Whether a state is still on its way to its end. */
static int not_ended(const char *state)
{
	static const char *const moving[] = {"PENDING",   "RUNNING",  "COMPLETING", "CONFIGURING",
	                                     "SUSPENDED", "RESIZING", "REQUEUED",   "STAGE_OUT",
	                                     "SIGNALING", NULL};
	for (int i = 0; moving[i]; i++)
		if (!strcmp(state, moving[i]))
			return 1;
	return 0;
}

/* Ask once: scontrol, else sacct. 0 with e filled, 1 when the commands
 * answered nothing about the job, -1 when neither could run. */
static int ask_slurm(const char *job, struct sched_end *e, char *why, size_t cap)
{
	static char out[65536];
	char *sc[] = {"scontrol", "show", "job", (char *)job, NULL};
	char sel[160];
	snprintf(sel, sizeof(sel), "%s", job);
	char *sa[] = {
	    "sacct", "-j", sel,  "-X",
	    "-n",    "-P", "-o", "State,ExitCode,TimelimitRaw,AllocCPUS,ReqMem,ElapsedRaw",
	    NULL};
	memset(e, 0, sizeof(*e));
	int rc = run_capture(sc, out, sizeof(out), 5000);
	if (rc == 0 && parse_scontrol(out, e) == 0)
		return 0;
	if (rc < 0)
		snprintf(why, cap, "scontrol did not answer within 5 s");
	else
		snprintf(why, cap, "scontrol: %.*s", (int)strcspn(out, "\n"), out);
	int rc2 = run_capture(sa, out, sizeof(out), 5000);
	if (rc2 == 0 && parse_sacct(out, e) == 0)
		return 0;
	return rc == 127 && rc2 == 127 ? -1 : 1; /* (127: the command is not there) */
}

/* The end as the "scheduler" object, unformatted; NULL: no memory. */
static char *end_json(const struct sched_end *e)
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
static int store_end(struct rt_store *s, uint64_t run, const struct sched_end *e)
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

/* Ask until the job has ended, or the deadline: 0 with e, else 1 (said). */
static int learn_end(const char *job, unsigned wait_s, struct sched_end *e)
{
	char why[300] = "";
	time_t until = time(NULL) + wait_s;
	for (int unreachable = 0;; sleep(1)) {
		int rc = ask_slurm(job, e, why, sizeof(why));
		if (rc == 0 && !not_ended(e->state))
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
	struct sched_end e;
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
	return rc ? 1 : 0;
}
