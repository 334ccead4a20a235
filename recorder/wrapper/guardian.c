/* guardian.c - the process that starts, waits for and signals the job
 * (see guardian.h). */
#define _GNU_SOURCE
#include "guardian.h"
#include "pidsroom.h"
#include "sigpass.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rt/clock.h"
#include "rt/common.h"
#include "wrapper.h"

/* How long the job waits for the recorder's first sample, and how long
 * the guardian waits for the recorder to finish after the job (its own
 * bound on the exporters is 10 s). */
#define READY_WAIT_MS 5000
#define FINISH_WAIT_MS 13000
/* Ctrl-C or SIGTERM this many times within this window kills the job */
#define STOPS_TO_KILL 3
#define STOP_WINDOW_NS (3ull * 1000000000ull)

struct guard {
	const char *prog;
	int sock;  /* to the recorder; -1 once it is gone */
	pid_t rec; /* the recorder; -1 once reaped */
	pid_t job; /* -1 before it starts */
	int job_done, job_status;
	int rec_status; /* the recorder's wait status once reaped */
	struct rusage job_ru;
	/* what the socket could not take yet: each report in order (the
	 * recorder matches them to members by pid), then summed past that */
	size_t qhead, qlen;
	struct rt_guard_msg backlog;
	int exited_pending; /* the EXITED message waits behind the backlog */
	int sync_pending;   /* the answer to a SYNC waits (behind the backlog) */
	uint32_t sync_count;
	struct rt_sigpass pass; /* signals held for the recorder's word */
	uint64_t stop_at[STOPS_TO_KILL];
	unsigned nstops;
};

static void gsay(const struct guard *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* One line on stderr. The guardian never dies of its own output: a
 * closed pipe's SIGPIPE is blocked for the write and taken back after it
 * (the job, forked with the caller's mask, never sees this). */
static void gsay(const struct guard *g, const char *fmt, ...)
{
	sigset_t pipe, old;
	sigemptyset(&pipe);
	sigaddset(&pipe, SIGPIPE);
	sigprocmask(SIG_BLOCK, &pipe, &old);
	va_list ap;
	va_start(ap, fmt);
	rt_vmessage(g->prog, fmt, ap);
	va_end(ap);
	fflush(stderr);
	struct timespec none = {0, 0};
	if (!sigismember(&old, SIGPIPE))
		while (sigtimedwait(&pipe, NULL, &none) == SIGPIPE)
			;
	sigprocmask(SIG_SETMASK, &old, NULL);
}

void rt_guard_msg_rusage(struct rt_guard_msg *m, const struct rusage *ru)
{
	m->ut_us = (uint64_t)ru->ru_utime.tv_sec * 1000000u + (uint64_t)ru->ru_utime.tv_usec;
	m->st_us = (uint64_t)ru->ru_stime.tv_sec * 1000000u + (uint64_t)ru->ru_stime.tv_usec;
	m->inblock = (uint64_t)ru->ru_inblock;
	m->oublock = (uint64_t)ru->ru_oublock;
	m->majflt = (uint64_t)ru->ru_majflt;
	m->maxrss_kb = ru->ru_maxrss > 0 ? (uint64_t)ru->ru_maxrss : 0;
}

void rt_guard_msg_to_rusage(const struct rt_guard_msg *m, struct rusage *ru)
{
	memset(ru, 0, sizeof(*ru));
	ru->ru_utime.tv_sec = (time_t)(m->ut_us / 1000000u);
	ru->ru_utime.tv_usec = (suseconds_t)(m->ut_us % 1000000u);
	ru->ru_stime.tv_sec = (time_t)(m->st_us / 1000000u);
	ru->ru_stime.tv_usec = (suseconds_t)(m->st_us % 1000000u);
	ru->ru_inblock = (long)m->inblock;
	ru->ru_oublock = (long)m->oublock;
	ru->ru_majflt = (long)m->majflt;
	ru->ru_maxrss = (long)m->maxrss_kb;
}

/* One message now, never blocking: 0 sent, -1 no room (or no recorder). */
static int send_now(struct guard *g, const struct rt_guard_msg *m)
{
	if (g->sock < 0)
		return -1;
	ssize_t n;
	do
		n = send(g->sock, m, sizeof(*m), MSG_DONTWAIT | MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n == (ssize_t)sizeof(*m))
		return 0;
	if (n < 0 && errno != EAGAIN && errno != ENOBUFS) {
		close(g->sock); /* the recorder is gone: its exit is said when reaped */
		g->sock = -1;
	}
	return -1;
}

/* Reports the socket could not take yet, one by one: a thousand members
 * killed at once fill the socket's buffer; in the guardian's own memory
 * (no allocation: pages are only touched when used). */
#define QUEUE 8192
static struct rt_guard_msg queue[QUEUE];

static int waiting(const struct guard *g)
{
	return g->qlen || g->backlog.count;
}

static void add_backlog(struct guard *g, const struct rt_guard_msg *m)
{
	if (!g->backlog.count && g->qlen < QUEUE) {
		queue[(g->qhead + g->qlen++) % QUEUE] = *m;
		return;
	}
	struct rt_guard_msg *b = &g->backlog;
	b->type = RT_G_REAPED;
	b->pid = b->count ? 0 : m->pid;
	b->count += m->count ? m->count : 1;
	b->ut_us += m->ut_us;
	b->st_us += m->st_us;
	b->inblock += m->inblock;
	b->oublock += m->oublock;
	b->majflt += m->majflt;
	if (m->maxrss_kb > b->maxrss_kb)
		b->maxrss_kb = m->maxrss_kb;
}

/* Send what waits, in order: the backlog, the answer to a SYNC, then the
 * job's end. */
static void flush(struct guard *g)
{
	while (g->qlen) {
		if (send_now(g, &queue[g->qhead]) < 0)
			return;
		g->qhead = (g->qhead + 1) % QUEUE;
		g->qlen--;
	}
	if (g->backlog.count) {
		if (send_now(g, &g->backlog) < 0)
			return;
		memset(&g->backlog, 0, sizeof(g->backlog));
	}
	if (g->sync_pending) {
		struct rt_guard_msg m = {.type = RT_G_SYNC, .count = g->sync_count};
		if (send_now(g, &m) < 0)
			return;
		g->sync_pending = 0;
	}
	if (g->exited_pending) {
		struct rt_guard_msg m = {
		    .type = RT_G_EXITED, .pid = g->job, .status = g->job_status};
		rt_guard_msg_rusage(&m, &g->job_ru);
		if (send_now(g, &m) == 0)
			g->exited_pending = 0;
	}
}

static void tell_reaped(struct guard *g, pid_t pid, const struct rusage *ru)
{
	struct rt_guard_msg m = {.type = RT_G_REAPED, .pid = pid, .count = 1};
	rt_guard_msg_rusage(&m, ru);
	if (g->sock < 0)
		return;
	if (waiting(g) || send_now(g, &m) < 0)
		add_backlog(g, &m);
}

static void say_recorder_end(struct guard *g, int st)
{
	/* one that exited said why itself */
	if (WIFSIGNALED(st))
		gsay(g, "warning: tracking stopped: the recorder was killed by signal %d (%s); %s",
		     WTERMSIG(st), strsignal(WTERMSIG(st)),
		     g->job_done ? "the job's exit code is kept"
		                 : "the job goes on untracked, what was recorded is kept");
}

/*
 * The job stopped (Ctrl-Z, a stop signal from anyone): the guardian stops
 * by the same signal, so its caller (a shell) sees the job stopped as
 * without rt (148 after Ctrl-Z: SIGTSTP), and goes on when continued
 * (fg, bg: SIGCONT to the group). The signal is taken as its default
 * action for the moment, whatever the caller left it as.
 */
static void stop_as_job(int sig)
{
	sigset_t one, mask;
	struct sigaction dfl = {.sa_handler = SIG_DFL}, old;
	sigemptyset(&one);
	sigaddset(&one, sig);
	sigemptyset(&dfl.sa_mask);
	if (sig != SIGSTOP)
		sigaction(sig, &dfl, &old);
	raise(sig); /* pending while blocked: delivered, and so stops us, below */
	sigprocmask(SIG_UNBLOCK, &one, &mask);
	sigprocmask(SIG_SETMASK, &mask, NULL);
	if (sig != SIGSTOP)
		sigaction(sig, &old, NULL);
}

/* Reap every child that ended: the job, the recorder, orphans; and stop
 * as the job stops. */
static void guard_reap(struct guard *g)
{
	int st;
	struct rusage ru;
	pid_t p;
	while ((p = wait4(-1, &st, WNOHANG | WUNTRACED, &ru)) > 0) {
		if (WIFSTOPPED(st)) {
			if (p == g->job && !g->job_done)
				stop_as_job(WSTOPSIG(st));
			continue;
		}
		if (p == g->rec) {
			g->rec = -1;
			g->rec_status = st;
			say_recorder_end(g, st);
			if (g->sock >= 0) {
				close(g->sock);
				g->sock = -1;
			}
			continue;
		}
		if (p == g->job) {
			g->job_done = 1;
			g->job_status = st;
			g->job_ru = ru;
			g->exited_pending = 1;
			continue;
		}
		if (g->rec > 0 && !g->job_done)
			tell_reaped(g, p, &ru);
	}
	flush(g);
}

static int in_window(struct guard *g, uint64_t now)
{
	g->stop_at[g->nstops++ % STOPS_TO_KILL] = now;
	if (g->nstops < STOPS_TO_KILL)
		return 0;
	uint64_t oldest = g->stop_at[g->nstops % STOPS_TO_KILL];
	return now - oldest <= STOP_WINDOW_NS;
}

/* Whether the recorder has sig pending, not yet reported (its status). */
static int recorder_pending(int sig, void *ctx)
{
	const struct guard *g = ctx;
	char path[64], line[256];
	snprintf(path, sizeof(path), "/proc/%d/status", (int)g->rec);
	/* raw: /proc, read-only */
	FILE *f = g->rec > 0 ? fopen(path, "re") : NULL;
	int yes = 0;
	while (f && !yes && fgets(line, sizeof(line), f)) {
		unsigned long long m;
		if ((sscanf(line, "SigPnd: %llx", &m) == 1 ||
		     sscanf(line, "ShdPnd: %llx", &m) == 1) &&
		    (m >> (sig - 1) & 1))
			yes = 1;
	}
	if (f)
		fclose(f);
	return yes;
}

/*
 * Pass sig on to the job for from. Only what the guardian passes on for
 * someone outside the job counts toward killing it: the third INT or TERM
 * within 3 s kills a job that does not stop. Ctrl-C the terminal already
 * delivered, or a job's `kill 0`, never reach this.
 */
static void pass_on(struct guard *g, int sig, pid_t from, uint64_t now)
{
	if ((sig == SIGINT || sig == SIGTERM) &&
	    !rt_proc_descends(from, g->job, getpid(), g->rec) && in_window(g, now)) {
		gsay(g, "killing the job (%s %d times within 3 s)", strsignal(sig), STOPS_TO_KILL);
		kill(g->job, SIGKILL);
		return;
	}
	kill(g->job, sig);
}

/*
 * A signal for the guardian, passed on as sigpass.h says. One the terminal
 * sent (SI_KERNEL) reached the whole foreground process group, the job
 * included, except a hangup: the kernel tells the session leader alone, so
 * when that is us, the job hears it from us. One a process sent the
 * guardian alone is passed on, and the guardian goes on. Stops are not
 * the guardian's to decide: it stops when the job stops (guard_reap).
 */
static void forward(struct guard *g, const struct signalfd_siginfo *si)
{
	int sig = (int)si->ssi_signo;
	pid_t from = (pid_t)si->ssi_pid;
	uint64_t now = rt_clock_mono_real();
	int pass = 0;
	if (rt_sigpass_sent(si->ssi_code, from)) {
		sigset_t w;
		rt_sigpass_witness_set(&w);
		int witnessed =
		    g->sock >= 0 && sigismember(&w, sig) && getpgid(g->job) == getpgrp();
		pass = rt_sigpass_got(&g->pass, sig, from, witnessed, now);
	} else if (si->ssi_code == SI_KERNEL) {
		pass = sig == SIGHUP && getsid(0) == getpid();
	}
	if (pass)
		pass_on(g, sig, from, now);
}

/* Pass on the held signals no report cancelled in time. */
static void pass_due(struct guard *g)
{
	int sig;
	pid_t from;
	uint64_t now;
	while ((
	    sig = rt_sigpass_due(&g->pass, now = rt_clock_mono_real(), recorder_pending, g, &from)))
		if (!g->job_done)
			pass_on(g, sig, from, now);
}

/* Read what the recorder sent: READY, SYNC, or its end (EOF). 1: READY. */
static int read_recorder(struct guard *g)
{
	int ready = 0;
	while (g->sock >= 0) {
		struct rt_guard_msg m;
		ssize_t n;
		do
			n = recv(g->sock, &m, sizeof(m), MSG_DONTWAIT);
		while (n < 0 && errno == EINTR);
		if (n < 0 && errno == EAGAIN)
			break;
		if (n != (ssize_t)sizeof(m)) {
			close(g->sock);
			g->sock = -1;
			break;
		}
		if (m.type == RT_G_READY)
			ready = 1;
		if (m.type == RT_G_SIGNAL && m.status > 0 && m.status < NSIG)
			rt_sigpass_reported(&g->pass, m.status, m.pid, rt_clock_mono_real());
		if (m.type == RT_G_SYNC) {
			/* what ended so far is reaped and told before the answer */
			g->sync_count = m.count;
			g->sync_pending = 1;
			guard_reap(g);
		}
	}
	return ready;
}

/* Wait up to ms for the recorder's first sample (or its end). */
static void wait_ready(struct guard *g, int ms)
{
	uint64_t end = rt_clock_mono_real() + (uint64_t)ms * 1000000u;
	while (g->sock >= 0) {
		uint64_t now = rt_clock_mono_real();
		if (now >= end) {
			gsay(g,
			     "warning: the recorder is not ready after %d s (a slow disk?); "
			     "starting "
			     "the job, its first moments may be missed",
			     ms / 1000);
			return;
		}
		struct pollfd p = {.fd = g->sock, .events = POLLIN};
		int left = (int)((end - now) / 1000000u) + 1;
		if (poll(&p, 1, left) > 0 && read_recorder(g))
			return;
	}
}

/* Wait up to ms for the recorder to end after the job, reaping orphans. */
static void wait_recorder(struct guard *g, int sfd, int ms)
{
	uint64_t end = rt_clock_mono_real() + (uint64_t)ms * 1000000u;
	while (g->rec > 0) {
		uint64_t now = rt_clock_mono_real();
		int stopped = rt_proc_stopped(g->rec);
		if (now >= end || stopped) {
			/* it and its printer hold the caller's stdout and stderr: a
			 * `$(...)` or `| tee` would wait for them, so they go */
			rt_kill_family(g->rec);
			char what[96];
			snprintf(what, sizeof(what),
			         "did not finish within %d s (a hung disk or network?)", ms / 1000);
			gsay(g,
			     "warning: the recorder %s; stopped it so the job's exit is not held "
			     "up. What it stored is kept: rt-export runs",
			     stopped ? "is stopped (SIGSTOP?)" : what);
			return;
		}
		struct pollfd p[2] = {{.fd = sfd, .events = POLLIN},
		                      {.fd = g->sock, .events = POLLIN}};
		if (waiting(g) || g->exited_pending || g->sync_pending)
			p[1].events |= POLLOUT;
		int left = (int)((end - now) / 1000000u) + 1;
		poll(p, 2, left > 100 ? 100 : left);
		read_recorder(g);
		struct signalfd_siginfo si;
		while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
			; /* the job is gone: nothing to pass on */
		guard_reap(g);
	}
}

/* Run the command untracked, as this process (no process to spare). */
static int exec_job(struct guard *g, struct rt_config *cfg, const sigset_t *mask)
{
	sigprocmask(SIG_SETMASK, mask, NULL);
	execvp(cfg->command[0], cfg->command);
	int code = (errno == ENOENT || errno == ENOTDIR) ? 127 : 126;
	gsay(g, "%s: %s", cfg->command[0], code == 127 ? "command not found" : strerror(errno));
	return code;
}

/* Whether so few processes may be made that rt's own would be the job's:
 * then it says so and steps aside. */
static int no_room(struct guard *g)
{
	char why[4400];
	long room = rt_pids_room(why, sizeof(why));
	if (room < 0 || room >= RT_PIDS_ROOM_MIN)
		return 0;
	gsay(g,
	     "warning: only %ld more processes may be made here (%s); running the command "
	     "untracked, so rt takes none of them",
	     room, why);
	return 1;
}

/* Block the watched signals (less those the caller ignores: they stay
 * ignored, for us and for the job) and read them from a descriptor. */
static int watch_signals(void)
{
	sigset_t sigs;
	rt_sigpass_guardian_set(&sigs);
	for (int i = 1; i < NSIG; i++) {
		struct sigaction old;
		if (sigismember(&sigs, i) && sigaction(i, NULL, &old) == 0 &&
		    old.sa_handler == SIG_IGN)
			sigdelset(&sigs, i);
	}
	sigaddset(&sigs, SIGCHLD);
	sigprocmask(SIG_BLOCK, &sigs, NULL);
	return signalfd(-1, &sigs, SFD_CLOEXEC | SFD_NONBLOCK);
}

/* Fork the recorder, linked by a socket: g->rec and g->sock, or -1. */
static void start_recorder(struct guard *g, struct rt_config *cfg, int out_fd, int sfd,
                           rt_record_fn record)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return;
	g->rec = rt_fork_retry(5);
	if (g->rec == 0) {
		/* the witness's signals stay blocked (sigpass.h); the store
		 * guard's are its own again */
		sigset_t w;
		rt_sigpass_witness_set(&w);
		sigaddset(&w, SIGCHLD);
		sigprocmask(SIG_SETMASK, &w, NULL);
		close(sv[0]);
		if (sfd >= 0)
			close(sfd);
		struct rt_guard_link link = {.guardian = getppid(), .fd = sv[1]};
		_exit(record(cfg, out_fd, &link, g->prog));
	}
	close(sv[1]);
	if (g->rec > 0)
		g->sock = sv[0];
	else
		close(sv[0]);
}

/* Serve the running job until it ends: signals, the recorder's word,
 * reaping. */
static void serve(struct guard *g, int sfd)
{
	while (!g->job_done) {
		struct pollfd p[2] = {{.fd = sfd, .events = POLLIN},
		                      {.fd = g->sock, .events = POLLIN}};
		if (waiting(g) || g->sync_pending)
			p[1].events |= POLLOUT;
		int held = rt_sigpass_wait_ms(&g->pass, rt_clock_mono_real());
		if (poll(p, 2, sfd < 0 ? 50 : held) < 0 && errno != EINTR)
			continue;
		read_recorder(g);
		struct signalfd_siginfo si;
		while (sfd >= 0 && read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
			if (si.ssi_signo != SIGCHLD && !g->job_done)
				forward(g, &si);
		}
		pass_due(g);
		guard_reap(g);
	}
}

/* The job could not start (code): the recorder is told, and waited for. */
static int no_start(struct guard *g, struct rt_config *cfg, int sfd, int code, const char *err,
                    const sigset_t *caller_mask)
{
	struct rt_guard_msg m = {.type = RT_G_NOSTART, .status = code};
	send_now(g, &m);
	if (code != RT_SPAWN_NO_PROCESS)
		gsay(g, "%s", err);
	wait_recorder(g, sfd, FINISH_WAIT_MS);
	if (code == RT_SPAWN_NO_PROCESS) {
		gsay(g, "warning: %s; running the command untracked", err);
		return exec_job(g, cfg, caller_mask);
	}
	return code;
}

/* The caller's exit status: the job's; 3 when the job succeeded but went
 * over its budget (the recorder said so in one line and exited 3). A
 * failed job keeps its own code. */
static int job_exit_code(const struct guard *g)
{
	int code = rt_exit_code(g->job_status);
	if (code == 0 && WIFEXITED(g->rec_status) &&
	    WEXITSTATUS(g->rec_status) == RT_EXIT_OVER_BUDGET)
		return RT_EXIT_OVER_BUDGET;
	return code;
}

int rt_guardian_run(struct rt_config *cfg, int out_fd, rt_record_fn record, const char *prog)
{
	struct guard g = {.prog = prog, .sock = -1, .rec = -1, .job = -1};
	sigset_t caller_mask;
	sigprocmask(SIG_SETMASK, NULL, &caller_mask);
	if (no_room(&g))
		return exec_job(&g, cfg, &caller_mask);
	int sfd = watch_signals();
	/* daemonized grandchildren are reparented to us and stay in the tree */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	start_recorder(&g, cfg, out_fd, sfd, record);
	if (out_fd > 2)
		close(out_fd);
	if (g.rec < 0) {
		gsay(&g, "warning: cannot start the recorder (%s); running the command untracked",
		     strerror(errno));
		return exec_job(&g, cfg, &caller_mask);
	}
	wait_ready(&g, READY_WAIT_MS);
	int code;
	char err[512];
	g.job = rt_spawn_command(cfg->command, &caller_mask, &code, err, sizeof(err));
	if (g.job < 0)
		return no_start(&g, cfg, sfd, code, err, &caller_mask);
	struct rt_guard_msg m = {.type = RT_G_STARTED, .pid = g.job};
	send_now(&g, &m);
	serve(&g, sfd);
	flush(&g);
	wait_recorder(&g, sfd, FINISH_WAIT_MS);
	if (sfd >= 0)
		close(sfd);
	return job_exit_code(&g);
}
