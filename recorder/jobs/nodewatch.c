/*
 * nodewatch.c - the node's watcher (see nodewatch.h).
 */
#define _GNU_SOURCE
#include "nodewatch.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* a sampler that dies this often, this quickly, is not started again */
#define RESTARTS 10
#define RESTARTS_WITHIN_S 60

/* Until the sampler ends: the stop signals passed on to it. Whether one
 * was; its wait status in *status. */
static int wait_sampler(int sfd, pid_t child, int *status)
{
	int passed = 0;
	for (;;) {
		struct signalfd_siginfo si;
		ssize_t n = read(sfd, &si, sizeof(si));
		if (n < 0 && errno == EINTR)
			continue;
		if (n != (ssize_t)sizeof(si)) { /* (cannot read: wait for it plainly) */
			while (waitpid(child, status, 0) < 0 && errno == EINTR)
				;
			return passed;
		}
		if (si.ssi_signo != SIGCHLD) {
			kill(child, (int)si.ssi_signo);
			passed = 1;
		}
		pid_t got;
		while ((got = waitpid(-1, status, WNOHANG)) > 0)
			if (got == child)
				return passed;
	}
}

/* Whether the sampler may be started again: at most RESTARTS within
 * RESTARTS_WITHIN_S seconds. */
static int may_restart(time_t *at, int *n)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	int k = 0;
	for (int i = 0; i < *n; i++)
		if (now.tv_sec - at[i] < RESTARTS_WITHIN_S)
			at[k++] = at[i];
	*n = k;
	if (k >= RESTARTS)
		return 0;
	at[(*n)++] = now.tv_sec;
	return 1;
}

/* In the sampler, just forked: the signals as they were, its death with
 * its watcher's (a TERM: its runs handed over). */
static void become_sampler(int sfd, const sigset_t *old, pid_t watcher)
{
	close(sfd);
	sigprocmask(SIG_SETMASK, old, NULL);
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != watcher) /* (it died before the line above) */
		kill(getpid(), SIGTERM);
}

int rt_nodewatch(const char *prog, int *code)
{
	sigset_t sigs, old;
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGCHLD);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGHUP);
	sigprocmask(SIG_BLOCK, &sigs, &old);
	int sfd = signalfd(-1, &sigs, SFD_CLOEXEC);
	time_t at[RESTARTS];
	int nat = 0;
	pid_t me = getpid();
	for (;;) {
		pid_t child = sfd < 0 ? -1 : fork();
		if (child == 0) {
			become_sampler(sfd, &old, me);
			return 1;
		}
		if (child < 0) { /* one process then, unwatched */
			fprintf(stderr,
			        "%s: warning: --jobs: no watcher (%s): a crash of the node ends "
			        "its runs until it is started again\n",
			        prog, strerror(errno));
			if (sfd >= 0)
				close(sfd);
			sigprocmask(SIG_SETMASK, &old, NULL);
			return 1;
		}
		int status = 0;
		int passed = wait_sampler(sfd, child, &status);
		if (passed || !WIFSIGNALED(status) || !may_restart(at, &nat)) {
			if (!passed && WIFSIGNALED(status))
				fprintf(stderr,
				        "%s: --jobs: the node's sampler died %d times within %d s "
				        "(the last by SIG%s): not started again\n",
				        prog, RESTARTS, RESTARTS_WITHIN_S,
				        sigabbrev_np(WTERMSIG(status)));
			*code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
			close(sfd);
			return 0;
		}
		fprintf(stderr,
		        "%s: warning: --jobs: the node's sampler (pid %d) was killed by SIG%s; "
		        "started again, its jobs' runs go on\n",
		        prog, (int)child, sigabbrev_np(WTERMSIG(status)));
		struct timespec ts = {0, 200000000};
		nanosleep(&ts, NULL);
	}
}
