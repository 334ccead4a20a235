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
#include "noderec.h"
#include "nodewatch.h"
#include "proctree.h"
#include "recording.h"
#include "sampler.h"
#include "guardian.h"
#include "sigpass.h"
#include "wrapper.h"

/* the recorder's name in what it says: resource-tracker or rt-recorder */
static const char *prog = "resource-tracker";

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	rt_vmessage(prog, fmt, ap);
	va_end(ap);
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

/* A job's recorder holds a descriptor per counter and member (about 45
 * for one process): its soft RLIMIT_NOFILE is raised to the hard one
 * (at most 65536), as a service manager does. Where the hard limit is low
 * too, what cannot be opened is said and retried, never a job's end. */
static void raise_nofile(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= rl.rlim_max || rl.rlim_cur >= 65536)
		return;
	rl.rlim_cur = rl.rlim_max < 65536 ? rl.rlim_max : 65536;
	if (rl.rlim_cur > 0)
		setrlimit(RLIMIT_NOFILE, &rl);
}

/* The node mode's store, named as a run's (its fallbacks too). */
static struct store_choice node_sc;

/* The node's one exporter for every run's sinks (rt-export sinks), and
 * the pipe it reads the runs' ids from (its descriptor 3). */
static struct {
	pid_t pid;
	int fd;            /* -1: none running */
	uint64_t next_try; /* monotonic ns: none started before */
	int said;
} node_sinks = {0, -1, 0, 0};

/* Whether any sink is set (the node's exporter has work). */
static int node_sinks_wanted(void)
{
	const char *v[] = {"TRACKER_REMOTE_WRITE_URL", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
	                   "OTEL_EXPORTER_OTLP_ENDPOINT"};
	for (size_t i = 0; i < RT_ARRAY_LEN(v); i++)
		if (getenv(v[i]) && *getenv(v[i]))
			return 1;
	return rt_sentinel_token() != NULL;
}

/* The exporter started, its pipe's end ours (never blocking: a run it
 * misses is named again). Its pid, or -1. */
static pid_t start_node_sinks(const struct rt_config *cfg)
{
	int p[2];
	if (rt_clock_mono_real() < node_sinks.next_try || pipe2(p, O_CLOEXEC) < 0)
		return -1;
	const char *args[] = {"sinks", "--store", node_sc.dir, NULL, NULL, NULL};
	if (cfg->csv_extended) {
		args[3] = "--csv-columns";
		args[4] = "extended";
	}
	pid_t pid = rec_spawn_export(prog, args, NULL, -1, p[0]);
	close(p[0]);
	node_sinks.next_try = rt_clock_mono_real() + 5000000000ull;
	if (pid < 0) {
		close(p[1]);
		if (!node_sinks.said++)
			say("warning: cannot start the runs' exporter (%s); the runs are in the "
			    "store: rt-export push or upload RUN sends one",
			    strerror(errno));
		return -1;
	}
	fcntl(p[1], F_SETFL, O_NONBLOCK);
	node_sinks.fd = p[1];
	node_sinks.pid = pid;
	return pid;
}

/* A node's run named to the exporter (started first when none runs). */
static pid_t node_tell(void *arg, uint64_t run)
{
	if (!node_sinks_wanted())
		return -1;
	pid_t started = 0;
	if (node_sinks.fd < 0 && (started = start_node_sinks(arg)) < 0)
		return -1;
	char line[32];
	int n = snprintf(line, sizeof(line), "%llu\n", (unsigned long long)run);
	if (write(node_sinks.fd, line, (size_t)n) != n && !node_sinks.said++)
		say("warning: the runs' exporter is behind (%s); run %llu is named to it again "
		    "at its end",
		    strerror(errno), (unsigned long long)run);
	return started;
}

/* The exporter ended (the node reaped it). */
static void node_sinks_lost(void *arg)
{
	(void)arg;
	if (node_sinks.fd >= 0)
		close(node_sinks.fd);
	node_sinks.fd = -1;
	node_sinks.pid = 0;
}

/* A node's run ended: a Slurm job's end asked of Slurm (learn_end). */
static void node_run_ended(void *arg, uint64_t run, const char *slurm_job)
{
	(void)arg;
	if (!slurm_job || !slurm_job[0] || getenv("RT_NO_LEARN"))
		return;
	char runid[32];
	snprintf(runid, sizeof(runid), "%llu", (unsigned long long)run);
	const char *args[] = {"learn", runid, "--store", node_sc.dir, NULL};
	if (rec_spawn_export(prog, args, NULL, -1, -1) < 0) /* (reaped by the node) */
		say("warning: cannot ask Slurm how job %s ended (%s); later: rt-export learn %s "
		    "--store %s",
		    slurm_job, strerror(errno), runid, node_sc.dir);
}

/* The node mode (--jobs): its store, what every run starts from, then
 * the node's one sampler until INT or TERM. */
static int run_node(const struct rt_config *cfg, int argc, char **argv)
{
	static struct rt_host_info host;
	static struct rt_run_meta meta;
	unsigned long limit;
	int code;
	if (!rt_nodewatch(prog, &code)) /* (the watcher, its sampler over) */
		return code;
	if (rt_noderec_needed(&limit)) {
		say("warning: at most %lu descriptors here (ulimit -Hn): each job gets a recorder "
		    "of its own (one process for all jobs needs %d)",
		    limit, RT_NODEREC_BELOW);
		struct rt_node_env env = {.argc = argc, .argv = argv};
		return rt_node_run(cfg, &env, prog);
	}
	rt_host_info(&host);
	rec_base_meta(cfg, &host, &meta);
	memcpy(meta.meta, cfg->meta, sizeof(meta.meta));
	if (rec_choose_store(prog, cfg, 0, NULL, &node_sc))
		return 1;
	meta.store_note = node_sc.note[0] ? node_sc.note : NULL;
	struct rt_node_env env = {.store = node_sc.store,
	                          .meta = &meta,
	                          .ended = node_run_ended,
	                          .tell = node_tell,
	                          .lost = node_sinks_lost,
	                          .close = node_sinks_lost, /* (it drains, then exits) */
	                          .arg = (void *)cfg};
	signal(SIGPIPE, SIG_IGN); /* (an exporter that died: its pipe's write fails) */
	int rc = rt_node_run(cfg, &env, prog);
	rt_store_close(node_sc.store);
	return rc;
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
	if (cfg.cgroup || cfg.jobs)
		raise_nofile(); /* (no command of the user's inherits it) */
	int out_fd;
	if (open_output(&cfg, &out_fd, wrapper)) {
		if (!wrapper)
			return 1;
		cfg.quiet = 1; /* the job runs; --summary still ends it */
	}
	if (wrapper)
		return rt_guardian_run(&cfg, out_fd, rec_record, prog);
	if (cfg.jobs)
		return run_node(&cfg, argc, argv);
	int code = rec_record(&cfg, out_fd, NULL, prog);
	rt_config_free(&cfg);
	return code;
}
