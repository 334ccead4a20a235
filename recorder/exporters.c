/*
 * exporters.c - the recorder's children that read its run: the live
 * printer, the uploader, the pushers, rt-export budget; started outside
 * the job's tree, reaped, and awaited (bounded) when the run ends.
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

/* Path of rt-export: next to this binary, else from PATH. */
static void exporter_path(char *buf, size_t cap)
{
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		self[n] = '\0';
		snprintf(buf, cap, "%s/rt-export", dirname(self));
		if (access(buf, X_OK) == 0)
			return;
	}
	snprintf(buf, cap, "rt-export");
}

/*
 * Start rt-export with args (after its name). out_fd becomes its stdout and
 * in_fd its fd 3 (-1: leave). Terminal signals are ignored in the child
 * (dispositions survive exec): Ctrl-C reaches the whole process group, and
 * the recorder decides when its exporters stop. -1 with errno when no
 * process could be made.
 */
pid_t rec_spawn_export(const char *prog, const char *const *args, const char *runid, int out_fd,
                       int in_fd)
{
	char exe[4200];
	exporter_path(exe, sizeof(exe));
	const char *argv[16];
	int a = 0;
	argv[a++] = "rt-export";
	for (int i = 0; args[i] && a < 15; i++)
		argv[a++] = args[i];
	argv[a] = NULL;
	pid_t pid = rt_fork_retry(5);
	if (pid == 0) {
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGPIPE, SIG_DFL);
		signal(SIGINT, SIG_IGN);
		signal(SIGQUIT, SIG_IGN);
		signal(SIGHUP, SIG_IGN);
		/* the printer ends with the run: a SIGTERM to the whole group (the
		 * job's `kill -TERM 0`, timeout) must not cut the output short */
		if (!strcmp(args[0], "live"))
			signal(SIGTERM, SIG_IGN);
		/* the node's exporter ends with its sampler, at once (the next
		 * sampler starts another, which finds the runs' locks free: its
		 * checkpoints hold what was confirmed, a batch sent again is the
		 * same points) */
		if (!strcmp(args[0], "sinks"))
			prctl(PR_SET_PDEATHSIG, SIGKILL);
		/* move both out of the way first: either may be 1 or 3 */
		int o = out_fd >= 0 ? fcntl(out_fd, F_DUPFD, 10) : -1;
		int in = in_fd >= 0 ? fcntl(in_fd, F_DUPFD, 10) : -1;
		if ((o >= 0 && dup2(o, 1) < 0) || (in >= 0 && dup2(in, 3) < 0))
			_exit(127);
		/* its lines name the program the user ran */
		setenv("RT_SAY_AS", prog, 1);
		if (strchr(exe, '/'))
			execv(exe, (char **)argv);
		else
			execvp(exe, (char **)argv);
		if (!strcmp(args[0], "sinks"))
			fprintf(stderr,
			        "%s: cannot start %s (%s); the runs are not sent: rt-export push "
			        "or upload RUN sends one later\n",
			        prog, exe, strerror(errno));
		else if (runid)
			fprintf(stderr,
			        "%s: cannot start %s (%s); samples are still recorded, "
			        "replay them with: rt-export replay %s\n",
			        prog, exe, strerror(errno), runid);
		else
			fprintf(stderr, "%s: cannot start %s (%s); this run is not printed\n", prog,
			        exe, strerror(errno));
		_exit(127);
	}
	return pid;
}

/* Put a and b (either may be NULL) at the first NULL of args, which has
 * room for both and a final NULL. */
static void append_args(const char **args, const char *a, const char *b)
{
	size_t n = 0;
	while (args[n])
		n++;
	if (a)
		args[n++] = a;
	if (b)
		args[n] = b;
}

/*
 * The live printer. It follows the ring and the store when there are both;
 * otherwise the sampler feeds it through a pipe (stream.h), so the output
 * never depends on /dev/shm or on a writable disk.
 */
pid_t rec_spawn_printer(const char *prog, const struct rt_config *cfg, struct rt_sampler *s,
                        const struct store_choice *sc, int out_fd, struct rt_stream_out *pipe_out,
                        const struct rt_buf *meta)
{
	char runid[32];
	snprintf(runid, sizeof(runid), "%llu", (unsigned long long)sc->run);
	const char *fmt = cfg->format == RT_FMT_CSV ? "csv" : "json";
	const char *out = out_fd >= 0 ? "-" : NULL;
	pid_t pid;
	/* --summary: the printer ends with it; --quiet too: nothing but it */
	const char *sum = cfg->summary ? "--summary" : NULL;
	const char *quiet = cfg->summary && cfg->quiet ? "--quiet" : NULL;
	const char *csv_x = cfg->csv_extended ? "--csv-columns" : NULL;
	if (quiet)
		out = NULL;
	if (sc->store && s->ring) {
		const char *args[] = {
		    "live", runid, "--store", sc->dir, "-f", fmt, out ? "-o" : NULL,
		    out,    NULL,  NULL,      NULL,    NULL, NULL};
		append_args(args, sum, quiet);
		append_args(args, csv_x, csv_x ? "extended" : NULL);
		pid = rec_spawn_export(prog, args, runid, out_fd, -1);
	} else {
		int p[2];
		if (pipe2(p, O_CLOEXEC) < 0) {
			rt_message(prog, "warning: cannot start the live output (pipe: %s)%s",
			           strerror(errno),
			           sc->store ? "; samples are recorded in the store" : "");
			return -1;
		}
		const char *args[] = {"live", "--fd", "3",  "-f", fmt,  out ? "-o" : NULL,
		                      out,    NULL,   NULL, NULL, NULL, NULL};
		append_args(args, sum, quiet);
		append_args(args, csv_x, csv_x ? "extended" : NULL);
		pid = rec_spawn_export(prog, args, sc->store ? runid : NULL, out_fd, p[0]);
		close(p[0]);
		if (pid > 0) {
			rt_stream_out_init(pipe_out, p[1]);
			rt_sampler_attach_stream(s, pipe_out, meta->p, meta->len);
		} else {
			close(p[1]);
		}
	}
	if (pid < 0) {
		if (sc->store)
			rt_message(
			    prog,
			    "warning: cannot start the live output (%s); samples are recorded: "
			    "rt-export replay %s",
			    strerror(errno), runid);
		else
			rt_message(
			    prog,
			    "warning: cannot start the live output (%s); this run is neither "
			    "printed "
			    "nor stored",
			    strerror(errno));
	}
	return pid;
}

/* With SENTINEL_API_TOKEN (or _KEY) set, stream the run to S3 through Sentinel. The
 * token stays in the environment, never in argv. */
pid_t rec_spawn_uploader(const char *prog, const struct store_choice *sc, int verbose,
                         int csv_extended)
{
	if (!rt_sentinel_token())
		return -1; /* streaming off: no network connection at all */
	if (!sc->store) {
		rt_message(
		    prog,
		    "warning: SENTINEL_API_TOKEN is set but this run has no store to upload from; "
		    "it is not streamed");
		return -1;
	}
	char runid[32];
	snprintf(runid, sizeof(runid), "%llu", (unsigned long long)sc->run);
	const char *args[] = {"upload", runid, "--store", sc->dir, NULL, NULL, NULL, NULL};
	append_args(args, verbose ? "-v" : NULL, NULL);
	append_args(args, csv_extended ? "--csv-columns" : NULL, csv_extended ? "extended" : NULL);
	pid_t pid = rec_spawn_export(prog, args, runid, -1, -1);
	if (pid < 0)
		rt_message(
		    prog,
		    "warning: cannot start the upload (%s); the run is in the store, upload it "
		    "later with: rt-export upload %s",
		    strerror(errno), runid);
	return pid;
}

/* With a metrics engine configured (TRACKER_REMOTE_WRITE_URL for
 * Prometheus remote write; OTEL_EXPORTER_OTLP_ENDPOINT or its _METRICS_
 * form for OTLP), push the run there as it is recorded: rt-export push
 * follows the live run. Each sink is its own process: one that is down
 * stops nothing else. */
pid_t rec_spawn_pusher(const char *prog, const struct store_choice *sc, const char *sink)
{
	int prom = !strcmp(sink, "prometheus");
	const char *var = prom ? "TRACKER_REMOTE_WRITE_URL" : "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT";
	const char *url = getenv(var);
	if (!prom && (!url || !*url))
		url = getenv(var = "OTEL_EXPORTER_OTLP_ENDPOINT");
	if (!url || !*url)
		return -1;
	if (!sc->store) {
		rt_message(
		    prog,
		    "warning: %s is set but this run has no store to push from; it is not sent",
		    var);
		return -1;
	}
	char runid[32];
	snprintf(runid, sizeof(runid), "%llu", (unsigned long long)sc->run);
	const char *args[] = {"push", runid, "--to", sink, "--store", sc->dir, NULL};
	pid_t pid = rec_spawn_export(prog, args, runid, -1, -1);
	if (pid < 0)
		rt_message(
		    prog,
		    "warning: cannot start the push (%s); the run is in the store, push it later "
		    "with: rt-export push %s --to %s",
		    strerror(errno), runid, sink);
	return pid;
}

/* Wait for a child until the monotonic deadline; 1 when it exited. */
static int wait_until(pid_t pid, uint64_t deadline_ns)
{
	/* a pidfd turns readable the moment the child exits (Linux 5.3);
	 * without one, look every millisecond */
	int pfd = -1;
#ifdef SYS_pidfd_open
	pfd = (int)syscall(SYS_pidfd_open, pid, 0);
#endif
	struct timespec step = {0, 1000 * 1000};
	int done = 0;
	for (;;) {
		if (waitpid(pid, NULL, WNOHANG) == pid) {
			done = 1;
			break;
		}
		uint64_t now = rt_clock_mono_real();
		if (now >= deadline_ns)
			break;
		if (rt_proc_stopped(pid)) {
			done = -1; /* waiting would wait for someone's SIGCONT */
			break;
		}
		if (pfd >= 0) {
			struct pollfd p = {.fd = pfd, .events = POLLIN};
			uint64_t left_ms = (deadline_ns - now) / 1000000u + 1;
			poll(&p, 1, left_ms > 100 ? 100 : (int)left_ms);
		} else {
			nanosleep(&step, NULL);
		}
	}
	if (pfd >= 0)
		close(pfd);
	return done;
}

/* How long the pushers may take after the job: TRACKER_PUSH_EXIT_WAIT_SECS,
 * whole seconds from 0 to 10 (the exporters' shared wait), default 3. */
static int push_exit_wait(const char *prog)
{
	const char *v = getenv("TRACKER_PUSH_EXIT_WAIT_SECS");
	if (!v || !*v)
		return PUSH_EXIT_WAIT_S;
	char *end;
	errno = 0;
	long x = strtol(v, &end, 10);
	if (*end || errno || x < 0 || x > 10 || v[0] < '0' || v[0] > '9') {
		rt_message(
		    prog,
		    "warning: TRACKER_PUSH_EXIT_WAIT_SECS='%.40s' is not a whole number of seconds "
		    "from 0 to 10; %d is used",
		    v, PUSH_EXIT_WAIT_S);
		return PUSH_EXIT_WAIT_S;
	}
	return (int)x;
}

/* The exporters get one shared, bounded wait: the output drains, the
 * uploader sends its last batch and finishes the run. Past it, the output
 * is left to finish on its own and the upload is stopped, each with one
 * line saying how to get the rest. */
void rec_wait_exporters(const char *prog, pid_t exporter, pid_t uploader, const pid_t *pusher,
                        uint64_t run, int stored, uint64_t deadline)
{
	uint64_t done_at = rt_clock_mono_real();
	int w = exporter > 0 ? wait_until(exporter, deadline) : 1;
	if (w <= 0) {
		/* it holds the caller's stdout or stderr: a `$(...)` or `| tee`
		 * would wait for it */
		kill(exporter, SIGKILL);
		waitpid(exporter, NULL, 0);
		const char *why = w < 0 ? "is stopped" : "is still being written after 10 s";
		if (stored)
			rt_message(
			    prog,
			    "the live output %s; stopped it. The run is complete in the store: "
			    "rt-export replay %llu",
			    why, (unsigned long long)run);
		else
			rt_message(prog, "the live output %s; stopped it", why);
	}
	if (uploader > 0 && wait_until(uploader, deadline) <= 0) {
		kill(uploader, SIGTERM);
		waitpid(uploader, NULL, 0);
		rt_message(
		    prog,
		    "the upload of run %llu did not finish within 10 s (network down?); the run is "
		    "safe in the store, finish it later with: rt-export upload %llu",
		    (unsigned long long)run, (unsigned long long)run);
	}
	/* a metrics engine that is down must not hold every job of a CI
	 * pipeline: the pushers get their own, shorter wait */
	int secs = push_exit_wait(prog);
	uint64_t push_deadline = done_at + (uint64_t)secs * 1000000000u;
	if (push_deadline > deadline)
		push_deadline = deadline;
	for (int i = 0; i < 2; i++)
		if (pusher[i] > 0 && wait_until(pusher[i], push_deadline) <= 0) {
			kill(pusher[i], SIGTERM);
			waitpid(pusher[i], NULL, 0);
			rt_message(
			    prog,
			    "the push of run %llu to the metrics engine did not finish within %d s "
			    "(TRACKER_PUSH_EXIT_WAIT_SECS); the run is safe in the store, finish "
			    "it "
			    "later with: rt-export push %llu --to %s",
			    (unsigned long long)run, secs, (unsigned long long)run,
			    i ? "otlp" : "prometheus");
		}
}

/* Reap every child that exited: the exporters, and in standalone mode
 * nothing else (the guardian reaps the job and its orphans). */
void rec_reap(const char *prog, pid_t *exporter, pid_t *uploader, pid_t *pusher, uint64_t run)
{
	int st;
	pid_t p;
	while ((p = waitpid(-1, &st, WNOHANG)) > 0) {
		if (p == *exporter && WIFSIGNALED(st) && run)
			rt_message(
			    prog,
			    "warning: the live output stopped: its printer was killed by signal %d "
			    "(%s); every sample is still recorded: rt-export replay %llu",
			    WTERMSIG(st), strsignal(WTERMSIG(st)), (unsigned long long)run);
		else if (p == *exporter && WIFSIGNALED(st))
			rt_message(
			    prog,
			    "warning: the live output stopped: its printer was killed by signal %d "
			    "(%s)",
			    WTERMSIG(st), strsignal(WTERMSIG(st)));
		if (p == *exporter)
			*exporter = -1;
		else if (p == *uploader)
			*uploader = -1;
		else if (p == pusher[0] || p == pusher[1])
			pusher[p == pusher[1]] = -1;
	}
}
