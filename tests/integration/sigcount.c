/*
 * sigcount.c - a job that counts the signals it is sent (issue 38's
 * wrapper tests): rt-sigcount LOG SECONDS runs SECONDS, catching every
 * catchable signal (so none stops or kills it), then writes "SIG COUNT"
 * for each signal it got to LOG and exits 7. A handler counts each
 * delivery: two signals sent microseconds apart are two deliveries unless
 * the second came while the first was still pending.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile sig_atomic_t got[NSIG];

static void count(int sig)
{
	got[sig]++;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: rt-sigcount LOG SECONDS\n");
		return 2;
	}
	struct sigaction sa = {.sa_handler = count};
	sigemptyset(&sa.sa_mask);
	for (int s = 1; s < NSIG; s++)
		if (s != SIGKILL && s != SIGSTOP && s != SIGCHLD && (s < 32 || s >= SIGRTMIN))
			sigaction(s, &sa, NULL);
	struct timespec end, now;
	clock_gettime(CLOCK_MONOTONIC, &end);
	double secs = atof(argv[2]);
	end.tv_sec += (time_t)secs;
	end.tv_nsec += (long)((secs - (double)(long)secs) * 1e9);
	if (end.tv_nsec >= 1000000000L) {
		end.tv_sec++;
		end.tv_nsec -= 1000000000L;
	}
	do {
		struct timespec step = {0, 10000000L};
		nanosleep(&step, NULL);
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (now.tv_sec < end.tv_sec ||
	         (now.tv_sec == end.tv_sec && now.tv_nsec < end.tv_nsec));
	FILE *f = fopen(argv[1], "w");
	if (!f)
		return 3;
	for (int s = 1; s < NSIG; s++)
		if (got[s])
			fprintf(f, "%d %d\n", s, (int)got[s]);
	fclose(f);
	return 7;
}
