/*
 * guard_link.c - the recorder's side of the wrapper: the signals it reads
 * (standalone, the ones that stop it; wrapped, those it witnesses for the
 * guardian), and the guardian's messages (the job's start and end, the
 * members it reaped, for the process tree).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "recording.h"
#include "rt/clock.h"
#include "rt/runmeta.h"
#include "rt/safefile.h"
#include "rt/salvage.h"
#include "rt/sysroot.h"
#include "sigpass.h"
#include "wrapper.h"

/*
 * The signals the recorder reads from its descriptor. Standalone: those
 * that stop it (SIGINT, SIGTERM, SIGHUP, SIGQUIT; SIGUSR1/2 are read and
 * ignored). In wrapper mode it is the witness of the signals sent to the
 * whole process group (sigpass.h): every one the guardian passes on but
 * those its store guard owns, blocked, so none kills or stops it; SIGPIPE
 * is then blocked rather than ignored (a write to a closed pipe still
 * fails with EPIPE; the signal it queues is our own, never reported).
 */
void rec_signals(sigset_t *sigs, int wrapper)
{
	if (wrapper) {
		rt_sigpass_witness_set(sigs);
	} else {
		sigemptyset(sigs);
		sigaddset(sigs, SIGINT);
		sigaddset(sigs, SIGTERM);
		sigaddset(sigs, SIGHUP);
		sigaddset(sigs, SIGQUIT);
		sigaddset(sigs, SIGUSR1);
		sigaddset(sigs, SIGUSR2);
		sigaddset(sigs, SIGCONT); /* read, to tell a stop from a busy host */
		signal(SIGPIPE, SIG_IGN);
	}
	sigaddset(sigs, SIGCHLD);
}

/* Tell the guardian a process sent us a signal it may have sent us too
 * (the group's): it then does not pass its own on. Stop signals too: a
 * job that catches them would count each twice. */
void rec_witness(struct guard_state *gs, const struct signalfd_siginfo *si)
{
	int sig = (int)si->ssi_signo;
	if (gs->gone || !rt_sigpass_sent(si->ssi_code, (pid_t)si->ssi_pid))
		return;
	struct rt_guard_msg m = {.type = RT_G_SIGNAL, .pid = (int32_t)si->ssi_pid, .status = sig};
	send(gs->g->fd, &m, sizeof(m), MSG_DONTWAIT | MSG_NOSIGNAL);
}

int rec_guard_read(struct guard_state *gs, int wait_ms)
{
	if (gs->gone)
		return 1;
	for (;;) {
		struct rt_guard_msg m;
		struct rusage ru;
		if (wait_ms > 0) {
			struct pollfd p = {.fd = gs->g->fd, .events = POLLIN};
			if (poll(&p, 1, wait_ms) <= 0)
				return 0;
			wait_ms = 0;
		}
		ssize_t n = recv(gs->g->fd, &m, sizeof(m), MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return gs->job_done || gs->nostart;
		if (n != (ssize_t)sizeof(m)) {
			gs->gone = 1; /* the guardian is gone (or sent nonsense) */
			return 1;
		}
		switch (m.type) {
		case RT_G_STARTED: gs->job = m.pid; break;
		case RT_G_SYNC: gs->sync_back = m.count; break;
		case RT_G_NOSTART:
			gs->nostart = 1;
			gs->job_status = m.status;
			break;
		case RT_G_REAPED:
		case RT_G_EXITED:
			rt_guard_msg_to_rusage(&m, &ru);
			if (gs->tree)
				rt_proctree_reaped_n(gs->tree, m.pid, m.count, &ru);
			if (m.type == RT_G_EXITED) {
				gs->job_done = 1;
				gs->job_status = m.status;
			}
			break;
		}
	}
}

/* The tree waits for reports of members the guardian just reaped; ms < 0:
 * asks the guardian to reap and report what ended so far, and waits up to
 * -ms for all of it: 1 when the guardian answered (its reports come before
 * its answer). */
int rec_await_reports(void *arg, int ms)
{
	struct guard_state *gs = arg;
	if (ms >= 0) {
		rec_guard_read(gs, ms);
		return 0;
	}
	struct rt_guard_msg m = {.type = RT_G_SYNC, .count = ++gs->sync_sent};
	if (gs->gone || send(gs->g->fd, &m, sizeof(m), MSG_DONTWAIT | MSG_NOSIGNAL) != sizeof(m))
		return 0;
	uint64_t end = rt_clock_mono_real() + (uint64_t)-ms * 1000000u;
	while (gs->sync_back != gs->sync_sent && !gs->gone) {
		uint64_t now = rt_clock_mono_real();
		if (now >= end)
			break;
		rec_guard_read(gs, (int)((end - now) / 1000000u) + 1);
	}
	return gs->sync_back == gs->sync_sent;
}
