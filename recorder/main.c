/*
 * main.c - rt-recorder, also installed as resource-tracker.
 *
 * Standalone mode: record the whole system into the store until stopped
 * (SIGINT/SIGTERM/SIGHUP) or --count samples, while a child rt-export
 * formats the live run to stderr or --output: this process never formats
 * sample text and never touches the network.
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
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rt/clock.h"
#include "rt/common.h"
#include "rt/config.h"
#include "rt/ring.h"
#include "rt/runmeta.h"
#include "rt/safefile.h"
#include "rt/salvage.h"
#include "rt/store.h"
#include "rt/sysroot.h"
#include "alloc_detect.h"
#include "cgrun.h"
#include "node.h"
#include "proctree.h"
#include "sampler.h"
#include "guardian.h"
#include "sigpass.h"
#include "wrapper.h"

#define DEFAULT_STORE_MAX_MB 1024
#define EXPORTER_WAIT_NS (10ull * 1000000000ull)
/* ... of which the pushers wait, by default, after the job */
#define PUSH_EXIT_WAIT_S 3

static const char *prog = "resource-tracker";

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	rt_vmessage(prog, fmt, ap);
	va_end(ap);
}

/* Warnings of the sampler: zero or more lines. */
static void say_lines(const char *lines)
{
	while (*lines) {
		size_t n = strcspn(lines, "\n");
		say("warning: %.*s", (int)n, lines);
		lines += n + (lines[n] == '\n');
	}
}

/*
 * Where this run is stored. The store asked for (--store, RT_STORE) or the
 * default; when it cannot be used, a private one of this user's (in
 * $XDG_RUNTIME_DIR, then the temp directory); when nothing is writable, no
 * store at all: the run is printed, not kept. Only an explicit store in
 * standalone mode is worth stopping for (the user asked for that place and
 * nothing else runs); a wrapped job always runs.
 */
struct store_choice {
	struct rt_store *store; /* NULL: memory only */
	char dir[4096];
	uint64_t run;
	char note[640]; /* why not the store asked for ("": it is that one) */
};

/* Open dir and create the run there. */
static int try_store(const char *dir, const struct rt_config *cfg, const struct rt_buf *mb,
                     struct store_choice *c, char *why, size_t whycap)
{
	struct rt_store *st;
	int rc = rt_store_open(dir, RT_STORE_RDWR, &st);
	if (rc) {
		snprintf(why, whycap, "%s",
		         rc == RT_E_UNSAFE    ? rt_store_refusal()
		         : rc == RT_E_CORRUPT ? "it is damaged"
		                              : rt_strerror(rc));
		return rc;
	}
	/* a damaged store is left as it is (the caller records beside it) */
	if ((rc = rt_store_check_for_writer(st))) {
		snprintf(why, whycap, "%s",
		         rc == RT_E_CORRUPT ? "it is damaged" : rt_store_last_error(st));
		rt_store_close(st);
		return rc;
	}
	rt_store_set_cap(st, (cfg->store_max_mb ? cfg->store_max_mb : DEFAULT_STORE_MAX_MB) << 20);
	rt_salvage_dead_runs(st, NULL, NULL);
	if ((rc = rt_store_new_run(st, mb->p, mb->len, &c->run))) {
		snprintf(why, whycap, "%s",
		         rc == RT_E_STORE ? rt_store_last_error(st) : rt_strerror(rc));
		rt_store_close(st);
		return rc;
	}
	/* the run (and the store's id, which names its ring) on disk now: a
	 * disk that fails later leaves a run its ring can be salvaged into */
	rt_store_sync(st);
	c->store = st;
	snprintf(c->dir, sizeof(c->dir), "%s", dir);
	return 0;
}

/* A private directory of ours under base: made 0700, refused if someone
 * else owns it or can get in (the temp directory is shared). */
static int private_dir(const char *base, const char *name, char *out, size_t cap)
{
	struct stat st;
	if (!base || base[0] != '/' || snprintf(out, cap, "%s/%s", base, name) >= (int)cap)
		return -1;
	if (mkdir(out, 0700) < 0 && errno != EEXIST)
		return -1;
	if (lstat(out, &st) || !S_ISDIR(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 077))
		return -1;
	return 0;
}

static int choose_store(const struct rt_config *cfg, int wrapper, const struct rt_buf *mb,
                        struct store_choice *c)
{
	char dir[4096], why[512] = "no directory: HOME is not set";
	const char *env = getenv("RT_STORE");
	int explicit = (cfg->store && *cfg->store) || (env && *env);
	memset(c, 0, sizeof(*c));
	int rrc = rt_store_resolve_dir(cfg->store, dir, sizeof(dir));
	int have = rrc == 0;
	if (rrc == -ENAMETOOLONG) {
		snprintf(why, sizeof(why), "the path is too long (at most %d bytes)",
		         RT_STORE_DIR_MAX);
		snprintf(dir, sizeof(dir), "%.60s...",
		         cfg->store && *cfg->store ? cfg->store : env);
		have = 1;
	} else if (have && (rrc = try_store(dir, cfg, mb, c, why, sizeof(why))) == 0) {
		return 0;
	} else if (have && rrc == RT_E_CORRUPT) {
		/* left untouched for verify and recover; runs go on beside it */
		char fresh[4200], why2[512];
		snprintf(fresh, sizeof(fresh), "%s.fresh", dir);
		if (try_store(fresh, cfg, mb, c, why2, sizeof(why2)) == 0) {
			say("warning: the store %s is damaged; it is left as it is and this run is "
			    "stored in %s (what is intact: rt-export verify --store %s; a copy of "
			    "it: "
			    "rt-export recover %s)",
			    dir, fresh, dir, dir);
			return 0;
		}
	}
	const char *what =
	    explicit ? (cfg->store && *cfg->store ? "--store" : "RT_STORE") : "the default store";
	if (explicit && !wrapper) {
		say("cannot use %s %s: %s (choose a writable directory with --store DIR)", what,
		    dir, why);
		return -1;
	}
	char alt[4096], name[64];
	snprintf(name, sizeof(name), "resource-tracker-%u", (unsigned)getuid());
	const char *tmp = getenv("TMPDIR");
	const char *bases[2][2] = {{getenv("XDG_RUNTIME_DIR"), "resource-tracker"},
	                           {tmp && *tmp == '/' ? tmp : "/tmp", name}};
	int short_of = 0; /* what stopped the private stores: descriptors, memory */
	for (int i = 0; i < 2; i++) {
		char why2[512];
		errno = 0;
		if (private_dir(bases[i][0], bases[i][1], alt, sizeof(alt)) == 0 &&
		    try_store(alt, cfg, mb, c, why2, sizeof(why2)) == 0) {
			say("warning: cannot use %s%s%s (%s); this run is stored in %s instead",
			    what, have ? " " : "", have ? dir : "", why, alt);
			snprintf(c->note, sizeof(c->note),
			         "stored here: %s%s%.200s could not be used (%.300s)", what,
			         have ? " " : "", have ? dir : "", why);
			return 0;
		}
		if (errno == EMFILE || errno == ENFILE || errno == ENOMEM)
			short_of = errno;
	}
	if (short_of)
		say("warning: cannot use %s%s%s (%s), nor a private store (%s); this run is "
		    "printed but not stored",
		    what, have ? " " : "", have ? dir : "", why, strerror(short_of));
	else
		say("warning: cannot use %s%s%s (%s) and no private directory is writable; this "
		    "run is printed but not stored",
		    what, have ? " " : "", have ? dir : "", why);
	return 0;
}

/*
 * Deadlines were missed: say why, once a run. A sample that took longer
 * than the interval means sampling cannot keep up; one that did not means
 * the recorder was not running: stopped, when a SIGCONT came since the
 * last sample (SIGSTOP or Ctrl-Z, then fg), else a busy host that gave it
 * no CPU (or a suspended machine). Either way the samples missed are
 * counted.
 */
static void say_skipped(const struct rt_config *cfg, const struct rt_run_meta *meta,
                        uint64_t took_ns, uint64_t interval_ns, uint64_t missed, int continued)
{
	if (meta->samples_skipped)
		return;
	uint64_t gap_ns = missed * interval_ns;
	if (took_ns >= interval_ns)
		say("warning: sampling cannot keep up with -i %g here (a sample took %.1f ms); "
		    "samples it skips are counted in the run and its summary",
		    cfg->interval, (double)took_ns / 1e6);
	else if (continued)
		say("warning: the recorder was stopped for about %.1f s (SIGSTOP or Ctrl-Z, then "
		    "SIGCONT); the %llu samples of that pause are missing, counted in the run and "
		    "its summary",
		    (double)gap_ns / 1e9, (unsigned long long)missed);
	else
		say("warning: sampling cannot keep up with -i %g here (the recorder waited "
		    "%.0f ms to run: a busy host, or a suspended machine); samples it skips are "
		    "counted in the run and its summary",
		    cfg->interval, (double)gap_ns / 1e6);
}

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
static pid_t spawn_export(const char *const *args, const char *runid, int out_fd, int in_fd)
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
		/* move both out of the way first: either may be 1 or 3 */
		int o = out_fd >= 0 ? fcntl(out_fd, F_DUPFD, 10) : -1;
		int in = in_fd >= 0 ? fcntl(in_fd, F_DUPFD, 10) : -1;
		if ((o >= 0 && dup2(o, 1) < 0) || (in >= 0 && dup2(in, 3) < 0))
			_exit(127);
		if (strchr(exe, '/'))
			execv(exe, (char **)argv);
		else
			execvp(exe, (char **)argv);
		if (runid)
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
static pid_t spawn_printer(const struct rt_config *cfg, struct rt_sampler *s,
                           const struct store_choice *sc, int out_fd,
                           struct rt_stream_out *pipe_out, const struct rt_buf *meta)
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
		pid = spawn_export(args, runid, out_fd, -1);
	} else {
		int p[2];
		if (pipe2(p, O_CLOEXEC) < 0) {
			say("warning: cannot start the live output (pipe: %s)%s", strerror(errno),
			    sc->store ? "; samples are recorded in the store" : "");
			return -1;
		}
		const char *args[] = {"live", "--fd", "3",  "-f", fmt,  out ? "-o" : NULL,
		                      out,    NULL,   NULL, NULL, NULL, NULL};
		append_args(args, sum, quiet);
		append_args(args, csv_x, csv_x ? "extended" : NULL);
		pid = spawn_export(args, sc->store ? runid : NULL, out_fd, p[0]);
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
			say("warning: cannot start the live output (%s); samples are recorded: "
			    "rt-export replay %s",
			    strerror(errno), runid);
		else
			say("warning: cannot start the live output (%s); this run is neither "
			    "printed "
			    "nor stored",
			    strerror(errno));
	}
	return pid;
}

/* With SENTINEL_API_TOKEN (or _KEY) set, stream the run to S3 through Sentinel. The
 * token stays in the environment, never in argv. */
static pid_t spawn_uploader(const struct store_choice *sc, int verbose, int csv_extended)
{
	if (!rt_sentinel_token())
		return -1; /* streaming off: no network connection at all */
	if (!sc->store) {
		say("warning: SENTINEL_API_TOKEN is set but this run has no store to upload from; "
		    "it is not streamed");
		return -1;
	}
	char runid[32];
	snprintf(runid, sizeof(runid), "%llu", (unsigned long long)sc->run);
	const char *args[] = {"upload", runid, "--store", sc->dir, NULL, NULL, NULL, NULL};
	append_args(args, verbose ? "-v" : NULL, NULL);
	append_args(args, csv_extended ? "--csv-columns" : NULL, csv_extended ? "extended" : NULL);
	pid_t pid = spawn_export(args, runid, -1, -1);
	if (pid < 0)
		say("warning: cannot start the upload (%s); the run is in the store, upload it "
		    "later with: rt-export upload %s",
		    strerror(errno), runid);
	return pid;
}

/* With a metrics engine configured (TRACKER_REMOTE_WRITE_URL for
 * Prometheus remote write; OTEL_EXPORTER_OTLP_ENDPOINT or its _METRICS_
 * form for OTLP), push the run there as it is recorded: rt-export push
 * follows the live run. Each sink is its own process: one that is down
 * stops nothing else. */
static pid_t spawn_pusher(const struct store_choice *sc, const char *sink)
{
	int prom = !strcmp(sink, "prometheus");
	const char *var = prom ? "TRACKER_REMOTE_WRITE_URL" : "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT";
	const char *url = getenv(var);
	if (!prom && (!url || !*url))
		url = getenv(var = "OTEL_EXPORTER_OTLP_ENDPOINT");
	if (!url || !*url)
		return -1;
	if (!sc->store) {
		say("warning: %s is set but this run has no store to push from; it is not sent",
		    var);
		return -1;
	}
	char runid[32];
	snprintf(runid, sizeof(runid), "%llu", (unsigned long long)sc->run);
	const char *args[] = {"push", runid, "--to", sink, "--store", sc->dir, NULL};
	pid_t pid = spawn_export(args, runid, -1, -1);
	if (pid < 0)
		say("warning: cannot start the push (%s); the run is in the store, push it later "
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
static int push_exit_wait(void)
{
	const char *v = getenv("TRACKER_PUSH_EXIT_WAIT_SECS");
	if (!v || !*v)
		return PUSH_EXIT_WAIT_S;
	char *end;
	errno = 0;
	long x = strtol(v, &end, 10);
	if (*end || errno || x < 0 || x > 10 || v[0] < '0' || v[0] > '9') {
		say("warning: TRACKER_PUSH_EXIT_WAIT_SECS='%.40s' is not a whole number of seconds "
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
static void wait_exporters(pid_t exporter, pid_t uploader, const pid_t *pusher, uint64_t run,
                           int stored, uint64_t deadline)
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
			say("the live output %s; stopped it. The run is complete in the store: "
			    "rt-export replay %llu",
			    why, (unsigned long long)run);
		else
			say("the live output %s; stopped it", why);
	}
	if (uploader > 0 && wait_until(uploader, deadline) <= 0) {
		kill(uploader, SIGTERM);
		waitpid(uploader, NULL, 0);
		say("the upload of run %llu did not finish within 10 s (network down?); the run is "
		    "safe in the store, finish it later with: rt-export upload %llu",
		    (unsigned long long)run, (unsigned long long)run);
	}
	/* a metrics engine that is down must not hold every job of a CI
	 * pipeline: the pushers get their own, shorter wait */
	int secs = push_exit_wait();
	uint64_t push_deadline = done_at + (uint64_t)secs * 1000000000u;
	if (push_deadline > deadline)
		push_deadline = deadline;
	for (int i = 0; i < 2; i++)
		if (pusher[i] > 0 && wait_until(pusher[i], push_deadline) <= 0) {
			kill(pusher[i], SIGTERM);
			waitpid(pusher[i], NULL, 0);
			say("the push of run %llu to the metrics engine did not finish within %d s "
			    "(TRACKER_PUSH_EXIT_WAIT_SECS); the run is safe in the store, finish "
			    "it "
			    "later with: rt-export push %llu --to %s",
			    (unsigned long long)run, secs, (unsigned long long)run,
			    i ? "otlp" : "prometheus");
		}
}

/* Reap every child that exited: the exporters, and in standalone mode
 * nothing else (the guardian reaps the job and its orphans). */
static void reap(pid_t *exporter, pid_t *uploader, pid_t *pusher, uint64_t run)
{
	int st;
	pid_t p;
	while ((p = waitpid(-1, &st, WNOHANG)) > 0) {
		if (p == *exporter && WIFSIGNALED(st) && run)
			say("warning: the live output stopped: its printer was killed by signal %d "
			    "(%s); every sample is still recorded: rt-export replay %llu",
			    WTERMSIG(st), strsignal(WTERMSIG(st)), (unsigned long long)run);
		else if (p == *exporter && WIFSIGNALED(st))
			say("warning: the live output stopped: its printer was killed by signal %d "
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

/*
 * The guardian's messages (guardian.h): reaped processes go to the tree;
 * the job's start and end. Returns 1 when the job ended or the guardian is
 * gone (*gone set), 0 otherwise.
 */
struct guard_state {
	struct rt_guard_link *g;
	struct rt_proctree *tree;
	pid_t job;
	int job_status, job_done, nostart, gone;
	uint32_t sync_sent, sync_back; /* SYNCs asked for, and the last answered */
};

/*
 * The signals the recorder reads from its descriptor. Standalone: those
 * that stop it (SIGINT, SIGTERM, SIGHUP, SIGQUIT; SIGUSR1/2 are read and
 * ignored). In wrapper mode it is the witness of the signals sent to the
 * whole process group (sigpass.h): every one the guardian passes on but
 * those its store guard owns, blocked, so none kills or stops it; SIGPIPE
 * is then blocked rather than ignored (a write to a closed pipe still
 * fails with EPIPE; the signal it queues is our own, never reported).
 */
static void recorder_signals(sigset_t *sigs, int wrapper)
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
static void witness(struct guard_state *gs, const struct signalfd_siginfo *si)
{
	int sig = (int)si->ssi_signo;
	if (gs->gone || !rt_sigpass_sent(si->ssi_code, (pid_t)si->ssi_pid))
		return;
	struct rt_guard_msg m = {.type = RT_G_SIGNAL, .pid = (int32_t)si->ssi_pid, .status = sig};
	send(gs->g->fd, &m, sizeof(m), MSG_DONTWAIT | MSG_NOSIGNAL);
}

static int guard_read(struct guard_state *gs, int wait_ms)
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
static int await_reports(void *arg, int ms)
{
	struct guard_state *gs = arg;
	if (ms >= 0) {
		guard_read(gs, ms);
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
		guard_read(gs, (int)((end - now) / 1000000u) + 1);
	}
	return gs->sync_back == gs->sync_sent;
}

/* Store the run's final metadata, let readers drain, close everything. */
static void finish_run(struct store_choice *sc, struct rt_sampler *s, struct rt_run_meta *meta,
                       struct rt_buf *mb, struct rt_stream_out *pipe_out, pid_t exporter,
                       pid_t uploader, const pid_t *pusher)
{
	struct rt_time end;
	rt_sampler_commit(s); /* every sample stored before the run says finished */
	rt_clock_now_steady(&end);
	meta->end_ns = end.wall_ns;
	meta->has_last_seq = s->seq > 0;
	meta->last_seq = s->seq ? s->seq - 1 : 0;
	meta->samples_not_stored = s->unstored;
	meta->samples_waited = s->waited;
	rt_buf_reset(mb);
	rt_runmeta_write(mb, meta);
	if (pipe_out && pipe_out->fd >= 0) /* the printer's --summary wants the exit code */
		rt_stream_put(pipe_out, RT_FRAME_META, mb->p, mb->len, NULL, 0);
	if (sc->store && s->nwait) {
		/* samples still wait for the store: they stay in the run's ring,
		 * with this metadata beside it, and the run stays "running" in the
		 * store until the next recorder or reader stores them */
		int rc = rt_sampler_park_meta(s, mb->p, mb->len);
		say("warning: %llu samples of run %llu wait for the store %s (it cannot be "
		    "written); they are kept in %s%s and stored by the next rt-export or "
		    "recorder on that store once it can be written",
		    (unsigned long long)s->nwait, (unsigned long long)meta->run_id, sc->dir,
		    s->ring_path[0] ? s->ring_path : "memory",
		    rc ? " (the run's final metadata could not be kept)" : "");
	} else if (sc->store) {
		int rc = rt_store_put_meta(sc->store, meta->run_id, mb->p, mb->len);
		if (rc)
			say("warning: cannot mark run %llu finished in the store: %s",
			    (unsigned long long)meta->run_id,
			    rc == RT_E_STORE ? rt_store_last_error(sc->store) : rt_strerror(rc));
		if (s->unstored)
			say("warning: %llu of %llu samples of run %llu could not be stored",
			    (unsigned long long)s->unstored, (unsigned long long)s->seq,
			    (unsigned long long)meta->run_id);
	}
	rt_sampler_finish(s);
	uint64_t deadline = rt_clock_mono_real() + EXPORTER_WAIT_NS;
	rt_stream_out_close(pipe_out, deadline);
	wait_exporters(exporter, uploader, pusher, meta->run_id, sc->store != NULL, deadline);
	rt_sampler_close(s, 1);
	rt_store_close(sc->store);
	sc->store = NULL;
	rt_buf_free(mb);
}

/* The process tree of --pid, or NULL (with one line) when it is gone. */
static struct rt_proctree *open_pid_tree(const struct rt_config *cfg)
{
	struct rt_proctree *tree = NULL;
	if (kill((pid_t)cfg->pid, 0) < 0 && errno == ESRCH) {
		say("warning: %s: no such process; recording the system only (process fields are "
		    "null)",
		    cfg->pid_from[0] ? cfg->pid_from : "--pid");
		return NULL;
	}
	if (rt_proctree_open(&tree, (pid_t)cfg->pid)) {
		say("warning: %s: cannot track that process (%s); recording the system only",
		    cfg->pid_from[0] ? cfg->pid_from : "--pid", strerror(errno));
		return NULL;
	}
	/* started by the process it tracks (`resource-tracker --pid $$ &`, a
	 * Python program's tracker): the recorder and what it starts are not
	 * the job's */
	rt_proctree_exclude(tree, getpid());
	return tree;
}

/* -o FILE is opened here, before anything runs, so a bad path stops us at
 * once in our own name (a wrapped command runs all the same, without live
 * output); the printer writes to the descriptor. */
static int open_output(const struct rt_config *cfg, int *fd, int wrapper)
{
	*fd = -1;
	if (!cfg->output || cfg->quiet)
		return 0;
	if (!strcmp(cfg->output, "-")) {
		*fd = 1;
		return 0;
	}
	char why[512];
	*fd = rt_open_stream_out(cfg->output, 0644, why, sizeof(why));
	if (*fd < 0) {
		if (wrapper)
			say("warning: cannot open the output file %s: %s; the command runs without "
			    "live output, its samples are stored (rt-export replay latest)",
			    cfg->output, why);
		else
			say("cannot open the output file %s: %s (choose another with -o FILE, or "
			    "-o - "
			    "for stdout)",
			    cfg->output, why);
		return -1;
	}
	return 0;
}

/*
 * The process tree to track, then the warm-up sample. It comes before the
 * command starts: its tree is empty, so every tick of the command lands in
 * some interval.
 */
static int take_first(struct rt_sampler *s, struct rt_proctree **tree, const struct rt_config *cfg,
                      const struct rt_guard_link *g, struct rt_cgrun *cg, char *warn, size_t cap)
{
	*tree = NULL;
	if (g && rt_proctree_open_under(tree, g->guardian))
		*tree = NULL;
	else if (cg && rt_cgrun_tree(cg, tree))
		*tree = NULL;
	else if (cfg->pid)
		*tree = open_pid_tree(cfg);
	if (cg) /* the group's counters, whoever is in it */
		s->col.cg_fixed = &cg->job.cp;
	s->tree = *tree;
	s->tracked_pid = (int32_t)cfg->pid;
	int rc = rt_sampler_take(s, 0, warn, cap);
	if (rc == 0 && cfg->pid && *tree && kill((pid_t)cfg->pid, 0) < 0 && errno == ESRCH) {
		say("warning: %s exited before the first sample; recording the system only "
		    "(process fields are null)",
		    cfg->pid_from[0] ? cfg->pid_from : "--pid");
		rt_proctree_close(*tree);
		*tree = s->tree = NULL;
	}
	return rc;
}

/*
 * Record a run: standalone (g NULL) until stopped, or in wrapper mode as the
 * guardian's first child, for as long as the job the guardian starts runs.
 */
/*
 * The command line of the process tracked with --pid, read when tracking
 * starts (the report's Job card and the summary show it; it was "the whole
 * system" for --pid and Python runs). Up to 255 arguments of its first
 * 16 KiB, kept in buf; *n is 0 when it cannot be read (gone, a kernel
 * thread).
 */
static char **tracked_command(pid_t pid, char *buf, size_t cap, char **argv, int *n)
{
	char rel[32];
	*n = 0;
	if (pid <= 0)
		return NULL;
	snprintf(rel, sizeof(rel), "%d/cmdline", (int)pid);
	int fd = rt_open(RT_PROC, rel);
	ssize_t len = fd >= 0 ? rt_pread_all(fd, buf, cap) : -1;
	if (fd >= 0)
		close(fd);
	if (len <= 0)
		return NULL;
	buf[len < (ssize_t)cap ? len : (ssize_t)cap - 1] = '\0';
	for (char *p = buf; p < buf + len && *n < 255; p += strlen(p) + 1)
		argv[(*n)++] = p;
	argv[*n] = NULL;
	return *n ? argv : NULL;
}

/* One recording, from its metadata to its last sample: what record()'s
 * steps share. */
struct run {
	struct rt_config cfg;
	int wrapper;
	struct rt_guard_link *g;
	struct rt_host_info host;
	struct rt_run_meta meta;
	struct rt_buf mb; /* meta as JSON: the store's copy and the stream's */
	struct store_choice sc;
	struct rt_sampler s;
	struct rt_proctree *tree;
	struct guard_state gs;
	struct rt_alloc alloc;
	struct rt_cgrun *cg; /* --cgroup: the job's group, NULL: none */
	char warn[2048];
	int sfd, wfd; /* signals; what the sampling wait polls */
	uint64_t interval_ns;
	struct rt_stream_out pipe_out;
	pid_t exporter, uploader, pusher[2];
	int stopped, cmd_done; /* a signal that ends the run; the job's end */
};

/* The run's metadata (host, command, tags) and the store it goes to:
 * nonzero when there is none and the run cannot start. */
static int run_begin(struct run *r)
{
	rt_host_info(&r->host);
	struct rt_time t0;
	rt_clock_now_steady(&t0); /* the run's timeline: never steps */
	static char pid_cmd[16384];
	static char *pid_argv[256];
	int pid_argc = 0;
	char **pid_command =
	    r->wrapper ? NULL
	               : tracked_command(r->cfg.pid, pid_cmd, sizeof(pid_cmd), pid_argv, &pid_argc);
	const struct rt_host_info *h = &r->host;
	r->meta = (struct rt_run_meta){
	    .status = rt_run_status_name(RT_RUN_RUNNING),
	    .start_ns = t0.wall_ns,
	    .interval_secs = r->cfg.interval,
	    .recorder_pid = getpid(),
	    .tracked_pid = r->cfg.pid,
	    .command = r->wrapper ? r->cfg.command : pid_command,
	    .ncommand = r->wrapper ? r->cfg.ncommand : pid_argc,
	    .tags = r->cfg.tags,
	    .ntags = r->cfg.ntags,
	    .hostname = h->hostname[0] ? h->hostname : NULL,
	    .cpu_model = h->cpu_model[0] ? h->cpu_model : NULL,
	    .vcpus = h->vcpus,
	    .memory_mib = h->memory_mib,
	    .host_id = h->host_id[0] ? h->host_id : NULL,
	    .ip = h->ip[0] ? h->ip : NULL,
	    .storage_gb = h->storage_gb,
	};
	if (r->cg)
		rt_cgrun_describe(r->cg, &r->meta, r->cfg.meta);
	memcpy(r->meta.meta, r->cfg.meta, sizeof(r->meta.meta));
	rt_runmeta_write(&r->mb, &r->meta);
	if (choose_store(&r->cfg, r->wrapper, &r->mb, &r->sc))
		return 1;
	r->meta.run_id = r->sc.run;
	r->meta.store_note = r->sc.note[0] ? r->sc.note : NULL;
	rt_buf_reset(&r->mb);
	rt_runmeta_write(&r->mb, &r->meta); /* now with its id, for the stream */
	return 0;
}

/* Signals arrive on a descriptor the sampling wait polls; in wrapper mode
 * the guardian passes them on to the job, and the recorder only reaps its
 * exporters and hears from the guardian (the same wait). */
static void run_signals(struct run *r)
{
	sigset_t sigs;
	recorder_signals(&sigs, r->wrapper);
	sigprocmask(SIG_BLOCK, &sigs, NULL);
	r->sfd = signalfd(-1, &sigs, SFD_CLOEXEC | SFD_NONBLOCK);
	r->wfd = r->sfd;
	if (r->wrapper && (r->wfd = epoll_create1(EPOLL_CLOEXEC)) >= 0) {
		struct epoll_event ev = {.events = EPOLLIN};
		if (r->sfd >= 0)
			epoll_ctl(r->wfd, EPOLL_CTL_ADD, r->sfd, &ev);
		epoll_ctl(r->wfd, EPOLL_CTL_ADD, r->g->fd, &ev);
	} else if (r->wrapper) {
		r->wfd = r->g->fd;
	} else if (r->cg && rt_cgrun_wait_fd(r->cg) >= 0 &&
	           (r->wfd = epoll_create1(EPOLL_CLOEXEC)) >= 0) {
		/* the group's emptying wakes the wait at once */
		struct epoll_event in = {.events = EPOLLIN};
		if (r->sfd >= 0)
			epoll_ctl(r->wfd, EPOLL_CTL_ADD, r->sfd, &in);
		epoll_ctl(r->wfd, EPOLL_CTL_ADD, rt_cgrun_wait_fd(r->cg), &in);
	} else {
		r->wfd = r->sfd;
	}
}

/* The ring: about a minute of samples, 64..1024 slots. Half of it is what
 * may wait for a group commit (sampler.c); a reader further behind catches
 * up from the store. */
static uint32_t ring_slots(uint64_t interval_ns)
{
	uint64_t slots = 64000000000ull / interval_ns;
	slots = slots < 64 ? 64 : slots > 1024 ? 1024 : slots;
	const char *rs = getenv("RT_RING_SLOTS"); /* testing aid: force lapped readers */
	if (rs && strtoul(rs, NULL, 10) >= 2 && strtoul(rs, NULL, 10) <= 65536)
		slots = strtoul(rs, NULL, 10);
	return (uint32_t)slots;
}

/* What the job was given: the request, its cgroup, Slurm, the host. */
static void detect_alloc(struct run *r)
{
	rt_alloc_detect_job(r->cfg.has_request ? &r->cfg.request : NULL, r->meta.vcpus,
	                    r->meta.memory_mib * 1048576ull, r->meta.gpu_count,
	                    r->cg ? &r->cg->alloc : NULL, &r->alloc);
	r->meta.alloc = &r->alloc;
}

/* The sampler and the first sample (the base of every rate), then what it
 * tells of the run: its GPUs and what the job was given. Nonzero when
 * sampling cannot start. */
static int run_first_sample(struct run *r)
{
	r->interval_ns = (uint64_t)(r->cfg.interval * 1e9 + 0.5);
	/* the size cap is enforced a slice at a time: a quarter interval at most */
	if (r->sc.store)
		rt_store_set_cap_budget(r->sc.store, r->interval_ns / 4);
	int rc;
	if ((rc = rt_sampler_init(&r->s, r->sc.store, r->sc.run, ring_slots(r->interval_ns))) ||
	    (rc = take_first(&r->s, &r->tree, &r->cfg, r->g, r->cg, r->warn, sizeof(r->warn)))) {
		if (r->wrapper)
			say("warning: cannot start sampling (%s); the job runs untracked",
			    rt_strerror(rc));
		else
			say("cannot start sampling (%s)", rt_strerror(rc));
		rt_sampler_close(&r->s, 1);
		rt_store_close(r->sc.store);
		return 1;
	}
	say_lines(r->warn);
	if (r->cg)
		rt_cgrun_watch(r->cg, r->tree);
	/* the first inventory on disk too: samples salvaged later refer to it */
	if (r->sc.store)
		rt_store_sync(r->sc.store);
	/* GPUs are known after the first sample: host_gpu_* for the run */
	const struct rt_inventory *inv = r->s.col.inv;
	struct rt_record first;
	if (inv->ngpu && rt_record_decode(r->s.rec, r->s.last_len, &first) == 0) {
		r->meta.gpu_model = inv->gpu[0].name[0] ? inv->gpu[0].name : NULL;
		r->meta.gpu_count = inv->ngpu;
		for (unsigned i = 0; i < first.h->ngpu; i++)
			r->meta.gpu_memory_mib += first.gpu[i].vram_total >> 20;
	}
	detect_alloc(r);
	r->meta.has_budget_cpu = r->cfg.budget.has_cpu;
	r->meta.budget_cpu = r->cfg.budget.cpu;
	r->meta.has_budget_mem = r->cfg.budget.has_mem;
	r->meta.budget_mem = r->cfg.budget.mem;
	return 0;
}

/* Wrapper mode: the first sample is taken, so the guardian starts the job
 * now; wait for it to start. Nonzero when it never did (the run is then
 * finished, as failed, untracked or unknown). */
static int run_start_job(struct run *r)
{
	struct guard_state *gs = &r->gs;
	struct rt_guard_msg ready = {.type = RT_G_READY};
	send(r->g->fd, &ready, sizeof(ready), MSG_NOSIGNAL);
	gs->tree = r->tree;
	while (gs->job < 0 && !gs->nostart && !gs->gone)
		guard_read(gs, 1000);
	if (gs->nostart || gs->gone) {
		int untracked = gs->nostart && gs->job_status == RT_SPAWN_NO_PROCESS;
		r->meta.status = rt_run_status_name(untracked  ? RT_RUN_UNTRACKED
		                                    : gs->gone ? RT_RUN_UNKNOWN
		                                               : RT_RUN_FAILED);
		r->meta.has_exit_code = gs->nostart && !untracked;
		r->meta.exit_code = gs->job_status;
		finish_run(&r->sc, &r->s, &r->meta, &r->mb, NULL, -1, -1, (pid_t[2]){-1, -1});
		return 1;
	}
	r->s.tracked_pid = (int32_t)gs->job;
	r->meta.tracked_pid = gs->job;
	if (r->tree)
		rt_proctree_on_unreported(r->tree, await_reports, gs);
	return 0;
}

/* The metadata as it now stands into the store, and the exporters
 * started: the live printer, the uploader, the pushers. They are this
 * process's children, outside the job's tree. */
static void run_spawn_exporters(struct run *r, int out_fd)
{
	rt_buf_reset(&r->mb);
	rt_runmeta_write(&r->mb, &r->meta);
	if (r->sc.store && (r->wrapper || r->meta.gpu_count))
		rt_store_put_meta(r->sc.store, r->meta.run_id, r->mb.p, r->mb.len);
	r->pipe_out = (struct rt_stream_out){.fd = -1};
	r->exporter = r->cfg.quiet && !r->cfg.summary
	                  ? -1
	                  : spawn_printer(&r->cfg, &r->s, &r->sc, out_fd, &r->pipe_out, &r->mb);
	if (out_fd > 2)
		close(out_fd);
	r->uploader = spawn_uploader(&r->sc, r->cfg.verbose, r->cfg.csv_extended);
	r->pusher[0] = spawn_pusher(&r->sc, "prometheus");
	r->pusher[1] = spawn_pusher(&r->sc, "otlp");
}

/* Wait for deadline, handling what arrives meanwhile: exporters that
 * ended, signals (witnessed for the guardian in wrapper mode, or ending a
 * run of --pid and standalone), the guardian's reports. Sets
 * r->stopped or r->cmd_done; *continued when a SIGCONT came. */
static void run_wait(struct run *r, uint64_t deadline, int *continued)
{
	while (!r->cmd_done && !r->stopped && rt_clock_wait(deadline, r->wfd) == 1) {
		struct signalfd_siginfo si;
		while (r->sfd >= 0 && read(r->sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
			int sig = (int)si.ssi_signo;
			*continued |= sig == SIGCONT; /* it was stopped: said if late */
			if (sig == SIGCHLD)
				reap(&r->exporter, &r->uploader, r->pusher,
				     r->sc.store ? r->sc.run : 0);
			else if (r->wrapper)
				witness(&r->gs, &si);
			else if (sig == SIGCONT)
				continue;
			else if (sig != SIGUSR1 && sig != SIGUSR2)
				r->stopped = sig;
		}
		if (r->wrapper)
			r->cmd_done = guard_read(&r->gs, 0);
		else if (r->cg)
			r->cmd_done = rt_cgrun_emptied(r->cg, &r->s.col);
	}
	if (r->wrapper && !r->cmd_done) /* reports that came with the deadline */
		r->cmd_done = guard_read(&r->gs, 0);
}

/* The sampling loop: a sample at each deadline until the count, a signal
 * or the job's end. Absolute deadlines: the schedule never drifts, an
 * overrun skips ahead (and is said and counted). */
static void run_sample_loop(struct run *r)
{
	uint64_t deadline = r->s.last.mono_ns;
	/* a job that ended before now (its EXITED came with STARTED) ends the
	 * run at once, not at the next deadline */
	r->cmd_done = r->wrapper && r->gs.job_done;
	uint64_t took_ns = 0; /* what the last sample took */
	int continued = 0;    /* a SIGCONT came: the recorder had been stopped */
	while (r->wrapper || !r->cfg.count || r->s.seq <= r->cfg.count) {
		deadline += r->interval_ns;
		struct rt_time now;
		rt_clock_now(&now);
		if (deadline <= now.mono_ns) {
			/* a sample took longer than the interval (a busy host, a huge
			 * tree): the deadlines it ran past are skipped, and counted */
			uint64_t missed = (now.mono_ns - deadline) / r->interval_ns + 1;
			deadline += missed * r->interval_ns;
			say_skipped(&r->cfg, &r->meta, took_ns, r->interval_ns, missed, continued);
			r->meta.samples_skipped += missed;
		}
		continued = 0;
		run_wait(r, deadline, &continued);
		if (r->stopped || r->cmd_done)
			break;
		uint64_t took_from = rt_clock_mono_real();
		int rc = rt_sampler_take(&r->s, 0, r->warn, sizeof(r->warn));
		took_ns = rt_clock_mono_real() - took_from;
		say_lines(r->warn);
		if (rc && !r->wrapper) {
			say("sampling stopped: %s", rt_strerror(rc));
			break;
		}
		if (r->cg && rt_cgrun_over(r->cg, r->tree))
			break;                        /* its last sample was this one */
		if (r->cg && rt_cgrun_refresh(r->cg)) /* the job's own environment now */
			detect_alloc(r);
		if (r->cg)
			rt_cgrun_watch(r->cg, r->tree);
	}
}

/* A final sample covers the partial last interval and is the one that
 * reads again what is otherwise read every 5 s (the cgroup's peak and OOM
 * kills, VmHWM): always taken when the run was stopped or the job ended,
 * even within a millisecond of the last sample (an OOM-killed job then
 * showed no kill), but at least 1 ms after it so that its rates have an
 * interval. */
static void run_final_sample(struct run *r)
{
	if (!r->stopped && !r->cmd_done)
		return;
	struct rt_time now;
	rt_clock_now(&now);
	uint64_t since = now.mono_ns - r->s.last.mono_ns;
	if (since < 1000000ull) {
		struct timespec ts = {0, (long)(1000000ull - since)};
		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
	}
	if (rt_sampler_take(&r->s, RT_REC_FINAL, r->warn, sizeof(r->warn)) == 0)
		say_lines(r->warn);
}

/* How the run ended: finished, or in wrapper mode the job's exit (failed,
 * killed), or unknown when the guardian was killed. */
static void run_status(struct run *r)
{
	struct rt_run_meta *m = &r->meta;
	m->status = rt_run_status_name(RT_RUN_FINISHED);
	if (r->wrapper && r->gs.gone && !r->gs.job_done) {
		m->status = rt_run_status_name(RT_RUN_UNKNOWN); /* the guardian was killed */
	} else if (r->wrapper) {
		int code = rt_exit_code(r->gs.job_status);
		m->has_exit_code = 1;
		m->exit_code = code;
		m->status = rt_run_status_name(WIFSIGNALED(r->gs.job_status) ? RT_RUN_KILLED
		                               : code                        ? RT_RUN_FAILED
		                                                             : RT_RUN_FINISHED);
	}
}

/*
 * The job against its budget (--max-memory, --max-cpu), once the run is
 * stored: rt-export budget says it in one line when the job went over,
 * and exits 3 (the recorder formats no text). RT_EXIT_OVER_BUDGET then,
 * else 0. Bounded: the caller's exit is not held up for more than 10 s.
 */
static int check_budget(struct run *r)
{
	if (!r->cfg.budget.has_cpu && !r->cfg.budget.has_mem)
		return 0;
	if (!r->sc.dir[0] || !r->sc.run) { /* (finish_run closed the store) */
		say("warning: the budget was not checked: this run is not stored");
		return 0;
	}
	char runid[32];
	snprintf(runid, sizeof(runid), "%llu", (unsigned long long)r->sc.run);
	const char *args[] = {"budget", runid, "--store", r->sc.dir, NULL};
	pid_t pid = spawn_export(args, NULL, -1, -1);
	if (pid < 0)
		return 0;
	int st = 0;
	for (int i = 0; i < 1000; i++) {
		pid_t w = waitpid(pid, &st, WNOHANG);
		if (w == pid)
			return WIFEXITED(st) && WEXITSTATUS(st) == RT_EXIT_OVER_BUDGET
			           ? RT_EXIT_OVER_BUDGET
			           : 0;
		if (w < 0 && errno != EINTR)
			return 0;
		struct timespec ts = {0, 10000000};
		nanosleep(&ts, NULL);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	say("warning: the budget was not checked within 10 s");
	return 0;
}

/* Record one run: its metadata and store, the first sample, the job
 * started (wrapper mode), the exporters, the sampling loop, a final
 * sample and how it ended. Returns 1 when the run could not start,
 * RT_EXIT_OVER_BUDGET when the job went over its budget. */
static int record(struct rt_config *cfgp, int out_fd, struct rt_guard_link *g)
{
	static struct run run;
	struct run *r = &run;
	*r = (struct run){.cfg = *cfgp, .wrapper = g != NULL, .g = g, .gs = {.g = g, .job = -1}};
	static struct rt_cgrun cgrun;
	if (r->cfg.cgroup) {
		char err[512];
		if (rt_cgrun_open(&cgrun, r->cfg.cgroup, err, sizeof(err))) {
			say("%s", err);
			return 1;
		}
		r->cg = &cgrun;
	}
	int fail = run_begin(r);
	if (!fail) {
		run_signals(r);
		fail = run_first_sample(r);
	}
	if (fail) {
		rt_buf_free(&r->mb);
		return 1;
	}
	if (r->wrapper && run_start_job(r)) {
		rt_proctree_close(r->tree);
		return 0;
	}
	run_spawn_exporters(r, out_fd);
	run_sample_loop(r);
	run_final_sample(r);
	run_status(r);
	if (r->cg) /* the group's CPU that no interval holds */
		r->cg->meta.cpu_before = r->s.cg_before;
	finish_run(&r->sc, &r->s, &r->meta, &r->mb, &r->pipe_out, r->exporter, r->uploader,
	           r->pusher);
	rt_proctree_close(r->tree);
	if (r->wfd >= 0 && r->wfd != r->sfd && (!g || r->wfd != g->fd))
		close(r->wfd);
	if (r->cg)
		rt_cgrun_close(r->cg);
	return check_budget(r);
}

/*
 * The tests' fake clock (RT_TEST_CLOCK=EPOCH_SECONDS: every sample a
 * whole interval after the last, no waiting). A test hook, never set by
 * accident: honoured only with RT_TEST_HOOKS=1 beside it (a stray
 * RT_TEST_CLOCK=1 stored a 1970 run of 5,535 samples for `sleep 2`).
 */
static void use_test_clock(void)
{
	const char *tc = getenv("RT_TEST_CLOCK"), *on = getenv("RT_TEST_HOOKS");
	if (tc && *tc && on && !strcmp(on, "1"))
		rt_clock_set_fake((uint64_t)strtoull(tc, NULL, 10) * 1000000000ull);
}

int main(int argc, char **argv)
{
	rt_std_fds();
	const char *base = strrchr(argv[0], '/');
	base = base ? base + 1 : argv[0];
	if (!strcmp(base, "rt-recorder"))
		prog = "rt-recorder";
	rt_sysroot_init();
	use_test_clock();

	struct rt_config cfg;
	char err[512];
	rt_config_defaults(&cfg);
	int rc = rt_config_parse_args(&cfg, argc, argv, err, sizeof(err));
	if (rc) {
		say("%s", err);
		return rc == RT_E_SYNTAX || rc == RT_E_RANGE ? 2 : 1; /* usage errors: 2 */
	}
	if (cfg.help) {
		fputs(rt_config_usage(), stdout);
		return 0;
	}
	if (cfg.version) {
		printf("resource-tracker %s\n", RT_VERSION);
		return 0;
	}
	rt_config_apply_env(&cfg, err, sizeof(err));
	if (err[0])
		say("warning: %s", err);
	rt_config_apply_toml(&cfg, err, sizeof(err));
	if (err[0])
		say("warning: %s", err);
	int wrapper = cfg.ncommand > 0;
	if (wrapper && (cfg.set & RT_SET_PID)) {
		say("--pid and a command cannot be combined: the command's own tree is tracked");
		return 2;
	}
	if (cfg.cgroup && (wrapper || (cfg.set & RT_SET_PID) || cfg.jobs)) {
		say("--cgroup tracks one group's processes: it cannot be combined with a command, "
		    "--pid or --jobs");
		return 2;
	}
	if (cfg.jobs && (wrapper || (cfg.set & RT_SET_PID))) {
		say("--jobs watches the node's job cgroups: it cannot be combined with a command "
		    "or "
		    "--pid");
		return 2;
	}
	if (wrapper || cfg.cgroup || cfg.jobs)
		cfg.pid = 0; /* a [job] pid of the config file does not apply */
	int out_fd;
	if (open_output(&cfg, &out_fd, wrapper)) {
		if (!wrapper)
			return 1;
		cfg.quiet = 1; /* the job runs; --summary still ends it */
	}
	if (wrapper)
		return rt_guardian_run(&cfg, out_fd, record, prog);
	if (cfg.jobs)
		return rt_node_run(&cfg, argc, argv, prog);
	int code = record(&cfg, out_fd, NULL);
	rt_config_free(&cfg);
	return code;
}
