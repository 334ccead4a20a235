/*
 * workload.c - test workloads with the kernel's own CPU total.
 *
 *   rt-workload REPORT MODE [ARG]
 *
 * Runs MODE in a child and writes to REPORT the CPU seconds the kernel
 * accounted to this process and everything it reaped (getrusage SELF +
 * CHILDREN, in microseconds). Modes: busy SECS | loop N (a shell loop of N short
 * processes) | parent SECS (waits for a busy child) | pool N SECS (N busy
 * workers) | daemon SECS (a double-forked busy daemon, which adds its own
 * CPU to REPORT.daemon before exiting; the command waits for it).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double cpu_self(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static volatile unsigned long sink; /* keeps the busy loop from being optimized away */

static void busy(double secs)
{
	double t0 = cpu_self();
	while (cpu_self() - t0 < secs)
		for (int i = 0; i < 10000; i++)
			sink += (unsigned long)i;
}

static double tv(struct timeval t)
{
	return (double)t.tv_sec + (double)t.tv_usec / 1e6;
}

static void run(const char *report, char **argv)
{
	const char *mode = argv[0];
	double secs = argv[1] ? atof(argv[1]) : 1;
	if (!strcmp(mode, "busy")) {
		busy(secs);
	} else if (!strcmp(mode, "loop")) {
		char cmd[256];
		snprintf(cmd, sizeof(cmd),
		         "i=0; while [ $i -lt %d ]; do /bin/true; i=$((i+1)); done", atoi(argv[1]));
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
	} else if (!strcmp(mode, "parent")) {
		pid_t p = fork();
		if (p == 0) {
			busy(secs);
			_exit(0);
		}
		waitpid(p, NULL, 0);
	} else if (!strcmp(mode, "pool")) {
		int n = atoi(argv[1]);
		double s = argv[2] ? atof(argv[2]) : 1;
		for (int i = 0; i < n; i++)
			if (fork() == 0) {
				busy(s);
				_exit(0);
			}
		while (wait(NULL) > 0) {
		}
	} else if (!strcmp(mode, "daemon")) {
		char done[4200];
		snprintf(done, sizeof(done), "%s.daemon", report);
		if (fork() == 0) {
			setsid();
			if (fork() == 0) { /* the daemon: reparented away from us */
				busy(secs);
				struct rusage ru;
				getrusage(RUSAGE_SELF, &ru);
				FILE *f = fopen(done, "w");
				fprintf(f, "%.6f\n", tv(ru.ru_utime) + tv(ru.ru_stime));
				fclose(f);
				_exit(0);
			}
			_exit(0);
		}
		wait(NULL);
		while (access(done, F_OK) != 0) /* the job ends after its daemon */
			usleep(20000);
		usleep(100000);
	} else {
		fprintf(stderr, "rt-workload: unknown mode %s\n", mode);
		_exit(2);
	}
	_exit(0);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: rt-workload REPORT MODE [ARGS]\n");
		return 2;
	}
	pid_t p = fork();
	if (p == 0)
		run(argv[1], argv + 2);
	int st;
	waitpid(p, &st, 0);
	/* the whole tree as the kernel accounts it: this process and all it reaped */
	struct rusage ru, self;
	getrusage(RUSAGE_CHILDREN, &ru);
	getrusage(RUSAGE_SELF, &self);
	FILE *f = fopen(argv[1], "w");
	fprintf(f, "%.6f\n",
	        tv(ru.ru_utime) + tv(ru.ru_stime) + tv(self.ru_utime) + tv(self.ru_stime));
	fclose(f);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}
