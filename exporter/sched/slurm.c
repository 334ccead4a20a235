/*
 * slurm.c - Slurm's word on a job's end, from its commands (slurm.h).
 */
#define _GNU_SOURCE
#include "sched/slurm.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Milliseconds since t0. */
static int ms_since(const struct timespec *t0)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (int)((now.tv_sec - t0->tv_sec) * 1000 + (now.tv_nsec - t0->tv_nsec) / 1000000);
}

/* What fd gives until its end, into out (NUL-terminated), for at most
 * timeout_ms from t0. */
static void read_until(int fd, char *out, size_t cap, int timeout_ms, const struct timespec *t0)
{
	size_t n = 0;
	for (int left = timeout_ms; left > 0 && n + 1 < cap; left = timeout_ms - ms_since(t0)) {
		struct pollfd pf = {.fd = fd, .events = POLLIN};
		if (poll(&pf, 1, left) <= 0)
			break;
		ssize_t r = read(fd, out + n, cap - 1 - n);
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	out[n] = '\0';
}

/* pid's exit status, waited for until timeout_ms from t0 (its output's end
 * comes before its exit: a loaded host can take a while between them),
 * else it is killed: -1. */
static int exit_within(pid_t pid, int timeout_ms, const struct timespec *t0)
{
	int st = 0;
	pid_t w;
	while ((w = waitpid(pid, &st, WNOHANG)) == 0 && ms_since(t0) < timeout_ms)
		usleep(5000);
	if (w == 0) {
		kill(pid, SIGKILL); /* over its time, or more output than wanted */
		waitpid(pid, &st, 0);
		return -1;
	}
	return w == pid && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Run argv (its stdout and stderr into out), at most timeout_ms. Its exit
 * status, or -1 when it could not run or ran over. */
static int run_capture(char *const argv[], char *out, size_t cap, int timeout_ms)
{
	int p[2];
	out[0] = '\0';
	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
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
	if (pid > 0)
		read_until(p[0], out, cap, timeout_ms, &t0);
	close(p[0]);
	return pid > 0 ? exit_within(pid, timeout_ms, &t0) : -1;
}

/* A figure as kept: -1 for anything not a finite number >= 0. */
static double figure(double v)
{
	return v >= 0 && v < 1e18 ? v : -1;
}

/* "[D-]HH:MM:SS", "MM:SS" (scontrol's times): seconds, -1 otherwise. */
static double slurm_secs(const char *v)
{
	unsigned d = 0, a = 0, b = 0, c = 0;
	if (*v == '-')
		return -1;
	if (sscanf(v, "%u-%u:%u:%u", &d, &a, &b, &c) == 4)
		return figure(((d * 24.0 + a) * 60 + b) * 60 + c);
	if (sscanf(v, "%u:%u:%u", &a, &b, &c) == 3)
		return figure((a * 60.0 + b) * 60 + c);
	if (sscanf(v, "%u:%u", &b, &c) == 2)
		return figure(b * 60.0 + c);
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

/* How many tokens of the text begin with "key=" (a field Slurm writes
 * once: twice means the owner's bytes imitate it). */
static int count_token(const char *text, const char *key)
{
	size_t k = strlen(key);
	int n = 0;
	for (const char *t = text; (t = strstr(t, key)); t += k)
		n += (t == text || t[-1] == ' ' || t[-1] == '\n') && t[k] == '=';
	return n;
}

/* Whether the state and exit code look as Slurm writes them. */
static int plausible(const struct rt_slurm_said *e)
{
	unsigned a, b;
	char tail;
	return e->state[0] && strspn(e->state, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_") == strlen(e->state) &&
	       sscanf(e->exit_code, "%u:%u%c", &a, &b, &tail) == 2;
}

/* scontrol show job's lines, those after "UserId=" (the job's name is on
 * the line before it), each field its first occurrence (the owner's
 * comment, command and paths come after Slurm's own fields). Refused
 * when a field Slurm writes once is there twice: the owner's bytes
 * (a name with a newline) imitate it. */
static int parse_scontrol(char *text, struct rt_slurm_said *e)
{
	char runtime[32] = "", limit[32] = "", cpus[16] = "", mem[32] = "", tres[160] = "";
	static const char *const once[] = {"JobState",  "ExitCode", "RunTime",
	                                   "TimeLimit", "UserId",   NULL};
	for (int i = 0; once[i]; i++)
		if (count_token(text, once[i]) != 1)
			return -1;
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
	if (!e->state[0] || !plausible(e))
		return -1;
	e->elapsed = slurm_secs(runtime);
	e->time_limit = slurm_secs(limit); /* (UNLIMITED: none) */
	e->cpus = cpus[0] ? figure(strtod(cpus, NULL)) : -1;
	const char *m = strstr(tres, "mem=");
	e->mem_bytes = figure(m ? slurm_bytes(m + 4) : mem[0] ? slurm_bytes(mem) : -1);
	snprintf(e->from, sizeof(e->from), "scontrol");
	return 0;
}

/* sacct -P's one line of the job's allocation (no field of the owner's). */
static int parse_sacct(char *text, struct rt_slurm_said *e)
{
	char *f[6] = {0};
	char *line = strtok(text, "\n");
	for (int i = 0; line && i < 6; i++)
		f[i] = strsep(&line, "|");
	if (!f[5] || !f[0][0])
		return -1;
	snprintf(e->state, sizeof(e->state), "%.*s", (int)strcspn(f[0], " "), f[0]);
	snprintf(e->exit_code, sizeof(e->exit_code), "%s", f[1]);
	e->time_limit = f[2][0] && strcmp(f[2], "UNLIMITED") ? figure(strtod(f[2], NULL) * 60) : -1;
	e->cpus = f[3][0] ? figure(strtod(f[3], NULL)) : -1;
	e->mem_bytes = figure(slurm_bytes(f[4]));
	e->elapsed = f[5][0] ? figure(strtod(f[5], NULL)) : -1;
	snprintf(e->from, sizeof(e->from), "sacct");
	return plausible(e) ? 0 : -1;
}

/* Whether a state is still on its way to its end. */
int rt_slurm_ending(const char *state)
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
 * answered nothing about the job, 2 when scontrol did not answer in time
 * (a busy controller: ask again), -1 when neither could run. */
int rt_slurm_ask(const char *job, struct rt_slurm_said *e, char *why, size_t cap)
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
	int rc = run_capture(sc, out, sizeof(out), RT_SLURM_ASK_MS);
	if (rc == 0 && rt_slurm_parse_scontrol(out, strlen(out), e) == 0)
		return 0;
	if (rc < 0)
		snprintf(why, cap, "scontrol did not answer within %d s", RT_SLURM_ASK_MS / 1000);
	else
		snprintf(why, cap, "scontrol: %.*s", (int)strcspn(out, "\n"), out);
	int rc2 = run_capture(sa, out, sizeof(out), RT_SLURM_ASK_MS);
	if (rc2 == 0 && rt_slurm_parse_sacct(out, strlen(out), e) == 0)
		return 0;
	if (rc == 127 && rc2 == 127) /* (127: the command is not there) */
		return -1;
	return rc < 0 ? 2 : 1;
}

/* A NUL-terminated copy of at most 64 KiB of text (the parsers cut it). */
static char *copy_text(const char *text, size_t len)
{
	static char buf[65536];
	len = len < sizeof(buf) - 1 ? len : sizeof(buf) - 1;
	memcpy(buf, text, len);
	buf[len] = '\0';
	return buf;
}

int rt_slurm_parse_scontrol(const char *text, size_t len, struct rt_slurm_said *e)
{
	memset(e, 0, sizeof(*e));
	return parse_scontrol(copy_text(text, len), e);
}

int rt_slurm_parse_sacct(const char *text, size_t len, struct rt_slurm_said *e)
{
	memset(e, 0, sizeof(*e));
	return parse_sacct(copy_text(text, len), e);
}

/* Why a command said no, into why: not there, no answer in time, or its
 * output's first line. */
static void command_failed(char *why, size_t cap, const char *cmd, int rc, const char *out,
                           int wait_ms)
{
	if (rc == 127)
		snprintf(why, cap, "%s is not installed here", cmd);
	else if (rc < 0)
		snprintf(why, cap, "%s did not answer within %d s", cmd, wait_ms / 1000);
	else
		snprintf(why, cap, "%s: %.*s", cmd, (int)strcspn(out, "\n"), out);
}

/* Job's line of `sacct -X -n -P -o JobIDRaw,NNodes,AdminComment` output:
 * its node count into *nodes (0: unknown) and its AdminComment into out
 * (the field last: the rest of the line). 0, or 1 when no line is the
 * job's. */
static int record_line(const char *text, const char *job, int *nodes, char *out, size_t cap)
{
	size_t jl = strlen(job);
	for (const char *l = text; *l; l += strcspn(l, "\n"), l += *l == '\n') {
		if (strncmp(l, job, jl) || l[jl] != '|')
			continue;
		char *after;
		long n = strtol(l + jl + 1, &after, 10);
		if (*after != '|')
			return 1;
		*nodes = n > 0 && n < 1000000 ? (int)n : 0;
		snprintf(out, cap, "%.*s", (int)strcspn(after + 1, "\n"), after + 1);
		return 0;
	}
	return 1;
}

int rt_slurm_record_read(const char *job, int wait_ms, char *out, size_t cap, int *nodes, char *why,
                         size_t wcap)
{
	static char text[65536 + 128];
	char *sa[] = {"sacct", "-j", (char *)job, "-X",
	              "-n",    "-P", "-o",        "JobIDRaw,NNodes,AdminComment",
	              NULL};
	out[0] = '\0';
	*nodes = 0;
	int rc = run_capture(sa, text, sizeof(text), wait_ms);
	if (rc != 0) {
		command_failed(why, wcap, "sacct", rc, text, wait_ms);
		return rc < 0 ? 2 : strstr(text, "accounting storage is disabled") ? -2 : -1;
	}
	if (record_line(text, job, nodes, out, cap)) {
		snprintf(why, wcap, "slurmdbd has no record of job %s (yet)", job);
		return 1;
	}
	return 0;
}

int rt_slurm_record_write(const char *job, const char *text, char *why, size_t wcap)
{
	static char out[4096];
	char where[64], set[RT_SLURM_RECORD_MAX + 32];
	snprintf(where, sizeof(where), "jobid=%s", job);
	snprintf(set, sizeof(set), "AdminComment=%s", text);
	char *sm[] = {"sacctmgr", "-i", "update", "job", "where", where, "set", set, NULL};
	int rc = run_capture(sm, out, sizeof(out), RT_SLURM_ASK_MS);
	if (rc == 0 && !strstr(out, "Nothing modified"))
		return 0;
	command_failed(why, wcap, "sacctmgr", rc, out, RT_SLURM_ASK_MS);
	return rc == 0 ? 1 : rc < 0 ? 2 : -1;
}
