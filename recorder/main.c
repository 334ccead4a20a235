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
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rt/clock.h"
#include "rt/common.h"
#include "rt/config.h"
#include "rt/ring.h"
#include "rt/runmeta.h"
#include "rt/store.h"
#include "rt/sysroot.h"
#include "proctree.h"
#include "sampler.h"
#include "wrapper.h"

#define DEFAULT_STORE_MAX_MB 1024
#define EXPORTER_WAIT_NS (10ull * 1000000000ull)

static const char *prog = "resource-tracker";

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	rt_vmessage(prog, fmt, ap);
	va_end(ap);
}

/* Mark runs whose recorder died without finishing them as "crashed". */
struct fixup_ctx {
	struct rt_store *store;
	uint64_t ids[64];
	int n;
};

static int fixup_cb(void *vctx, uint64_t run, const char *meta, size_t len)
{
	struct fixup_ctx *x = vctx;
	(void)len;
	if (!strstr(meta, "\"status\":\"running\"") || x->n >= 64)
		return 0;
	const char *p = strstr(meta, "\"recorder_pid\":");
	long pid = p ? strtol(p + 15, NULL, 10) : 0;
	char path[4096];
	struct rt_ring *ring;
	int alive = 0;
	if (rt_ring_path(path, sizeof(path), rt_store_dir(x->store), run) == 0 &&
	    rt_ring_open(path, &ring) == 0) {
		alive = rt_ring_writer_alive(ring);
		rt_ring_close(ring, 0);
	}
	if (!alive && pid > 0 && kill((pid_t)pid, 0) == 0 && pid != getpid())
		alive = 1; /* maybe still starting up; leave it */
	if (!alive)
		x->ids[x->n++] = run;
	return 0;
}

static void fixup_crashed(struct rt_store *store)
{
	struct fixup_ctx x = {store, {0}, 0};
	rt_store_list_runs(store, fixup_cb, &x);
	for (int i = 0; i < x.n; i++) {
		char *meta;
		size_t len;
		if (rt_store_get_meta(store, x.ids[i], &meta, &len))
			continue;
		char *st = strstr(meta, "\"status\":\"running\"");
		if (st) {
			memcpy(st, "\"status\":\"crashed\"", 18);
			rt_store_put_meta(store, x.ids[i], meta, len);
		}
		free(meta);
		char path[4096];
		if (rt_ring_path(path, sizeof(path), rt_store_dir(store), x.ids[i]) == 0)
			unlink(path);
	}
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

/* Start rt-export with args (after its name). Terminal signals are
 * ignored in the child (dispositions survive exec): Ctrl-C reaches the whole
 * process group, and the recorder decides when its exporters stop. */
static pid_t spawn_export(const char *const *args, const char *runid)
{
	char exe[4200];
	exporter_path(exe, sizeof(exe));
	const char *argv[16];
	int a = 0;
	argv[a++] = "rt-export";
	for (int i = 0; args[i] && a < 15; i++)
		argv[a++] = args[i];
	argv[a] = NULL;
	pid_t pid = fork();
	if (pid == 0) {
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGPIPE, SIG_DFL);
		signal(SIGINT, SIG_IGN);
		signal(SIGQUIT, SIG_IGN);
		signal(SIGHUP, SIG_IGN);
		if (strchr(exe, '/'))
			execv(exe, (char **)argv);
		else
			execvp(exe, (char **)argv);
		fprintf(stderr,
		        "%s: cannot start %s (%s); samples are still recorded, "
		        "replay them with: rt-export replay %s\n",
		        prog, exe, strerror(errno), runid);
		_exit(127);
	}
	return pid;
}

static pid_t spawn_exporter(const struct rt_config *cfg, const char *store_dir, uint64_t run)
{
	char runid[32];
	snprintf(runid, sizeof(runid), "%llu", (unsigned long long)run);
	const char *args[] = {"live",
	                      runid,
	                      "--store",
	                      store_dir,
	                      "-f",
	                      cfg->format == RT_FMT_CSV ? "csv" : "json",
	                      cfg->output ? "--output" : NULL,
	                      cfg->output,
	                      NULL};
	return spawn_export(args, runid);
}

/* With SENTINEL_API_TOKEN set, stream the run to S3 through Sentinel. The
 * token stays in the environment, never in argv. */
static pid_t spawn_uploader(const char *store_dir, uint64_t run)
{
	const char *tok = getenv("SENTINEL_API_TOKEN");
	if (!tok || !*tok)
		return -1; /* streaming off: no network connection at all */
	char runid[32];
	snprintf(runid, sizeof(runid), "%llu", (unsigned long long)run);
	const char *args[] = {"upload", runid, "--store", store_dir, NULL};
	return spawn_export(args, runid);
}

/* Wait for a child until the monotonic deadline; 1 when it exited. */
static int wait_until(pid_t pid, uint64_t deadline_ns)
{
	struct timespec step = {0, 10 * 1000 * 1000}, now;
	for (;;) {
		if (waitpid(pid, NULL, WNOHANG) == pid)
			return 1;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if ((uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec >= deadline_ns)
			return 0;
		nanosleep(&step, NULL);
	}
}

/* The exporters get one shared, bounded wait: the output drains, the
 * uploader sends its last batch and finishes the run. Past it, the output
 * is left to finish on its own and the upload is stopped, each with one
 * line saying how to get the rest. */
static void wait_exporters(pid_t exporter, pid_t uploader, uint64_t run)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	uint64_t deadline =
	    (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec + EXPORTER_WAIT_NS;
	if (exporter > 0 && !wait_until(exporter, deadline))
		say("output is still being written after 10 s; leaving it. The run is complete in "
		    "the store: rt-export replay %llu",
		    (unsigned long long)run);
	if (uploader > 0 && !wait_until(uploader, deadline)) {
		kill(uploader, SIGTERM);
		waitpid(uploader, NULL, 0);
		say("the upload of run %llu did not finish within 10 s (network down?); the run is "
		    "safe in the store, finish it later with: rt-export upload %llu",
		    (unsigned long long)run, (unsigned long long)run);
	}
}

/* Reap every child that exited: the command, the exporter, orphans that
 * were reparented to us (their rusage is the tree's, exactly). */
static void reap(struct rt_proctree *tree, pid_t cmd, pid_t *exporter, pid_t *uploader,
                 int *cmd_status, int *cmd_done)
{
	int st;
	struct rusage ru;
	pid_t p;
	while ((p = wait4(-1, &st, WNOHANG, &ru)) > 0) {
		if (p == *exporter) {
			*exporter = -1;
			continue;
		}
		if (p == *uploader) {
			*uploader = -1;
			continue;
		}
		if (tree)
			rt_proctree_reaped(tree, p, &ru);
		if (p == cmd) {
			*cmd_status = st;
			*cmd_done = 1;
		}
	}
}

/* Pass a signal on to the command. One typed at the terminal already
 * reached it (same process group): passing it again would deliver it
 * twice. Ctrl-C three times kills the command. */
static void forward(pid_t cmd, const struct signalfd_siginfo *si, int *stops)
{
	int sig = (int)si->ssi_signo;
	int from_tty = si->ssi_code == SI_KERNEL;
	if (sig == SIGINT || sig == SIGTERM) {
		if (++*stops >= 3) {
			say("killing the command (signal received %d times)", *stops);
			kill(cmd, SIGKILL);
			return;
		}
	}
	if (!from_tty)
		kill(cmd, sig);
}

/* Store the run's final metadata, let readers drain, close everything. */
static void finish_run(struct rt_store *store, struct rt_sampler *s, struct rt_run_meta *meta,
                       struct rt_buf *mb, pid_t exporter, pid_t uploader)
{
	struct rt_time end;
	rt_clock_now(&end);
	meta->end_ns = end.wall_ns;
	meta->has_last_seq = 1;
	meta->last_seq = s->seq - 1;
	rt_buf_reset(mb);
	rt_runmeta_write(mb, meta);
	int rc = rt_store_put_meta(store, meta->run_id, mb->p, mb->len);
	if (rc)
		say("warning: cannot mark run %llu finished in the store: %s",
		    (unsigned long long)meta->run_id, rt_strerror(rc));
	rt_sampler_finish(s);
	wait_exporters(exporter, uploader, meta->run_id);
	rt_sampler_close(s, 1);
	rt_store_close(store);
	rt_buf_free(mb);
}

int main(int argc, char **argv)
{
	const char *base = strrchr(argv[0], '/');
	base = base ? base + 1 : argv[0];
	if (!strcmp(base, "rt-recorder"))
		prog = "rt-recorder";
	rt_sysroot_init();
	const char *tc = getenv("RT_TEST_CLOCK");
	if (tc && *tc)
		rt_clock_set_fake((uint64_t)strtoull(tc, NULL, 10) * 1000000000ull);

	struct rt_config cfg;
	char err[512];
	rt_config_defaults(&cfg);
	int rc = rt_config_parse_args(&cfg, argc, argv, err, sizeof(err));
	if (rc) {
		say("%s", err);
		return rc == RT_E_SYNTAX ? 2 : 1;
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
	if (wrapper && cfg.pid) {
		say("--pid and a command cannot be combined: the command's own tree is tracked");
		return 2;
	}
	if (cfg.pid && kill((pid_t)cfg.pid, 0) < 0 && errno == ESRCH) {
		say("--pid %lld: no such process", (long long)cfg.pid);
		return 1;
	}

	char store_dir[4096];
	if ((rc = rt_store_resolve_dir(cfg.store, store_dir, sizeof(store_dir)))) {
		say("no store directory: set --store DIR or RT_STORE, or HOME");
		return 1;
	}
	struct rt_store *store;
	if ((rc = rt_store_open(store_dir, RT_STORE_RDWR, &store))) {
		say("cannot open the store %s: %s (choose another with --store DIR)", store_dir,
		    rt_strerror(rc));
		return 1;
	}
	rt_store_set_cap(store, (cfg.store_max_mb ? cfg.store_max_mb : DEFAULT_STORE_MAX_MB) << 20);
	fixup_crashed(store);

	struct rt_host_info host;
	rt_host_info(&host);
	struct rt_time t0;
	rt_clock_now(&t0);
	struct rt_run_meta meta = {
	    .status = "running",
	    .start_ns = t0.wall_ns,
	    .interval_secs = cfg.interval,
	    .recorder_pid = getpid(),
	    .tracked_pid = cfg.pid,
	    .command = wrapper ? cfg.command : NULL,
	    .ncommand = wrapper ? cfg.ncommand : 0,
	    .tags = cfg.tags,
	    .ntags = cfg.ntags,
	    .hostname = host.hostname[0] ? host.hostname : NULL,
	    .cpu_model = host.cpu_model[0] ? host.cpu_model : NULL,
	    .vcpus = host.vcpus,
	    .memory_mib = host.memory_mib,
	    .host_id = host.host_id[0] ? host.host_id : NULL,
	    .ip = host.ip[0] ? host.ip : NULL,
	    .storage_gb = host.storage_gb,
	};
	memcpy(meta.meta, cfg.meta, sizeof(meta.meta));
	struct rt_buf mb = {0};
	rt_runmeta_write(&mb, &meta);
	if (mb.oom || (rc = rt_store_new_run(store, mb.p, mb.len, &meta.run_id))) {
		say("cannot create a run in the store %s: %s", store_dir,
		    rc == RT_E_STORE ? rt_store_last_error(store) : rt_strerror(rc ? rc : -ENOMEM));
		return 1;
	}

	/* signals arrive on a descriptor the sampling wait polls */
	sigset_t sigs;
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGHUP);
	sigaddset(&sigs, SIGQUIT);
	sigaddset(&sigs, SIGUSR1);
	sigaddset(&sigs, SIGUSR2);
	sigaddset(&sigs, SIGCHLD);
	sigprocmask(SIG_BLOCK, &sigs, NULL);
	/* daemonized grandchildren are reparented to us and stay in the tree */
	if (wrapper)
		prctl(PR_SET_CHILD_SUBREAPER, 1);
	int sfd = signalfd(-1, &sigs, SFD_CLOEXEC | SFD_NONBLOCK);
	signal(SIGPIPE, SIG_IGN);

	uint64_t interval_ns = (uint64_t)(cfg.interval * 1e9 + 0.5);
	/* ring: about 5 s of samples, 16..256 slots (a reader further behind
	 * catches up from the store) */
	uint64_t slots = 5000000000ull / interval_ns;
	slots = slots < 16 ? 16 : slots > 256 ? 256 : slots;
	const char *rs = getenv("RT_RING_SLOTS"); /* testing aid: force lapped readers */
	if (rs && strtoul(rs, NULL, 10) >= 2 && strtoul(rs, NULL, 10) <= 65536)
		slots = strtoul(rs, NULL, 10);
	struct rt_sampler s;
	if ((rc = rt_sampler_init(&s, store, meta.run_id, (uint32_t)slots))) {
		say("cannot start sampling: %s", rt_strerror(rc));
		return 1;
	}
	struct rt_proctree *tree = NULL;
	if ((wrapper || cfg.pid) && rt_proctree_open(&tree, wrapper ? 0 : (pid_t)cfg.pid) == 0)
		s.tree = tree;
	s.tracked_pid = (int32_t)cfg.pid;
	char warn[1024];
	/* the warm-up sample comes before the command starts: its tree is empty,
	 * so every tick of the command lands in some interval */
	if ((rc = rt_sampler_take(&s, 0, warn, sizeof(warn)))) {
		say("cannot take the first sample: %s", rt_strerror(rc));
		return 1;
	}
	if (warn[0])
		say("warning: %s", warn);
	/* GPUs are known after the first sample: host_gpu_* for the run */
	struct rt_record first;
	if (s.col.inv->ngpu && rt_record_decode(s.rec, s.last_len, &first) == 0) {
		meta.gpu_model = s.col.inv->gpu[0].name[0] ? s.col.inv->gpu[0].name : NULL;
		meta.gpu_count = s.col.inv->ngpu;
		for (unsigned i = 0; i < first.h->ngpu; i++)
			meta.gpu_memory_mib += first.gpu[i].vram_total >> 20;
		rt_buf_reset(&mb);
		rt_runmeta_write(&mb, &meta);
		rt_store_put_meta(store, meta.run_id, mb.p, mb.len);
	}
	pid_t cmd = -1;
	if (wrapper) {
		int code;
		cmd = rt_spawn_command(cfg.command, &code, err, sizeof(err));
		if (cmd < 0) {
			say("%s", err);
			meta.status = "failed";
			meta.has_exit_code = 1;
			meta.exit_code = code;
			finish_run(store, &s, &meta, &mb, -1, -1);
			rt_proctree_close(tree);
			rt_config_free(&cfg);
			return code;
		}
		s.tracked_pid = (int32_t)cmd;
		meta.tracked_pid = cmd;
		rt_buf_reset(&mb);
		rt_runmeta_write(&mb, &meta);
		rt_store_put_meta(store, meta.run_id, mb.p, mb.len);
	}
	pid_t exporter = cfg.quiet ? -1 : spawn_exporter(&cfg, store_dir, meta.run_id);
	if (tree && exporter > 0)
		rt_proctree_exclude(tree, exporter);
	pid_t uploader = spawn_uploader(store_dir, meta.run_id);
	if (tree && uploader > 0)
		rt_proctree_exclude(tree, uploader);

	/* absolute deadlines: the schedule never drifts, an overrun skips ahead */
	uint64_t deadline = s.last.mono_ns;
	int stopped = 0, cmd_status = 0, cmd_done = 0, stops = 0;
	while (wrapper || !cfg.count || s.seq <= cfg.count) {
		deadline += interval_ns;
		struct rt_time now;
		rt_clock_now(&now);
		if (deadline <= now.mono_ns)
			deadline += ((now.mono_ns - deadline) / interval_ns + 1) * interval_ns;
		int sig_ready = 0;
		while (!cmd_done && !stopped && rt_clock_wait(deadline, sfd) == 1) {
			struct signalfd_siginfo si;
			sig_ready = 1;
			while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
				int sig = (int)si.ssi_signo;
				if (sig == SIGCHLD) {
					reap(tree, cmd, &exporter, &uploader, &cmd_status,
					     &cmd_done);
				} else if (!wrapper) {
					if (sig != SIGUSR1 && sig != SIGUSR2)
						stopped = sig;
				} else if (!cmd_done) {
					forward(cmd, &si, &stops);
				}
			}
		}
		(void)sig_ready;
		if (stopped || cmd_done)
			break;
		rc = rt_sampler_take(&s, 0, warn, sizeof(warn));
		if (warn[0])
			say("warning: %s", warn);
		if (rc) {
			say("sampling stopped: %s", rt_strerror(rc));
			break;
		}
	}
	/* a final sample covers the partial last interval */
	if (stopped || cmd_done) {
		struct rt_time now;
		rt_clock_now(&now);
		if (now.mono_ns - s.last.mono_ns >= 1000000ull &&
		    rt_sampler_take(&s, RT_REC_FINAL, warn, sizeof(warn)) == 0 && warn[0])
			say("warning: %s", warn);
	}
	int exit_code = 0;
	meta.status = "finished";
	if (wrapper) {
		exit_code = rt_exit_code(cmd_status);
		meta.has_exit_code = 1;
		meta.exit_code = exit_code;
		meta.status = WIFSIGNALED(cmd_status) ? "killed"
		              : exit_code             ? "failed"
		                                      : "finished";
	}
	finish_run(store, &s, &meta, &mb, exporter, uploader);
	rt_proctree_close(tree);
	rt_config_free(&cfg);
	return exit_code;
}
