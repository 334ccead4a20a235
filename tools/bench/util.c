/*
 * util.c - rt-bench's clocks, and running a command for its CPU, wall
 * time and peak RSS.
 */
#include "bench.h"

double cpu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

double wall_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Run a command with its output discarded: its CPU seconds (user+sys),
 * wall seconds and, when maxrss is not NULL, its peak RSS (KiB). */
int run_cmd_rss(char *const argv[], double *cpu, double *wall, long *maxrss)
{
	double t0 = wall_now();
	pid_t pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);
		dup2(null, 1);
		dup2(null, 2);
		execv(argv[0], argv);
		_exit(127);
	}
	int st;
	struct rusage ru;
	if (wait4(pid, &st, 0, &ru) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
		return -1;
	*wall = wall_now() - t0;
	*cpu = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
	       ru.ru_stime.tv_usec / 1e6;
	if (maxrss)
		*maxrss = ru.ru_maxrss;
	return 0;
}

int run_cmd(char *const argv[], double *cpu, double *wall)
{
	return run_cmd_rss(argv, cpu, wall, NULL);
}

/* rt-recorder --quiet on the fake clock from epoch second clock, tracking
 * this process: count samples every interval into store, job "bench";
 * its wall seconds into *wall (when not NULL). run_cmd's answer. */
int record_fake_clock(const char *rec_bin, const char *store, const char *interval,
                      const char *count, const char *clock, double *wall)
{
	char pid[32];
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	setenv("RT_TEST_CLOCK", clock, 1);
	setenv("RT_TEST_HOOKS", "1", 1);
	char *rec[] = {(char *)rec_bin, "--quiet", "-i", (char *)interval, "--count",
	               (char *)count,   "--pid",   pid,  "--store",        (char *)store,
	               "--job-name",    "bench",   NULL};
	double cpu, w;
	int rc = run_cmd(rec, &cpu, &w);
	unsetenv("RT_TEST_CLOCK");
	if (wall)
		*wall = w;
	return rc;
}
