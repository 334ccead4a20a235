/*
 * run.c - one recording (rec_record, recording.h): its metadata and
 * store, the first sample, the job started in wrapper mode, the
 * exporters, the sampling loop, a final sample and how it ended, each a
 * step of struct run. The recorder's program (main.c) chooses the mode
 * and calls it; so does the guardian, in wrapper mode.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
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
#include "proctree.h"
#include "recording.h"
#include "sampler.h"
#include "guardian.h"
#include "sigpass.h"
#include "wrapper.h"

/* the recorder's name in what it says (rec_record's caller's) */
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
	meta->peak_before_kb = rt_proctree_hwm_before_kb(s->tree);
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
	rec_wait_exporters(prog, exporter, uploader, pusher, meta->run_id, sc->store != NULL,
	                   deadline);
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

/* What every run's metadata starts from: running, the host, the
 * interval, the tags. */
void rec_base_meta(const struct rt_config *cfg, const struct rt_host_info *h, struct rt_run_meta *m)
{
	*m = (struct rt_run_meta){
	    .status = rt_run_status_name(RT_RUN_RUNNING),
	    .interval_secs = cfg->interval,
	    .recorder_pid = getpid(),
	    .tags = cfg->tags,
	    .ntags = cfg->ntags,
	    .hostname = h->hostname[0] ? h->hostname : NULL,
	    .cpu_model = h->cpu_model[0] ? h->cpu_model : NULL,
	    .vcpus = h->vcpus,
	    .memory_mib = h->memory_mib,
	    .host_id = h->host_id[0] ? h->host_id : NULL,
	    .ip = h->ip[0] ? h->ip : NULL,
	    .storage_gb = h->storage_gb,
	};
}

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
	rec_base_meta(&r->cfg, &r->host, &r->meta);
	r->meta.start_ns = t0.wall_ns;
	r->meta.tracked_pid = r->cfg.pid;
	r->meta.command = r->wrapper ? r->cfg.command : pid_command;
	r->meta.ncommand = r->wrapper ? r->cfg.ncommand : pid_argc;
	if (r->cg)
		rt_cgrun_describe(r->cg, &r->meta, r->cfg.meta);
	memcpy(r->meta.meta, r->cfg.meta, sizeof(r->meta.meta));
	rt_runmeta_write(&r->mb, &r->meta);
	if (rec_choose_store(prog, &r->cfg, r->wrapper, &r->mb, &r->sc))
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
static void run_signals(struct run *r, const sigset_t *sigs)
{
	r->sfd = signalfd(-1, sigs, SFD_CLOEXEC | SFD_NONBLOCK);
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
		rec_guard_read(gs, 1000);
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
		rt_proctree_on_unreported(r->tree, rec_await_reports, gs);
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
	r->exporter =
	    r->cfg.quiet && !r->cfg.summary
	        ? -1
	        : rec_spawn_printer(prog, &r->cfg, &r->s, &r->sc, out_fd, &r->pipe_out, &r->mb);
	if (out_fd > 2)
		close(out_fd);
	r->uploader = rec_spawn_uploader(prog, &r->sc, r->cfg.verbose, r->cfg.csv_extended);
	r->pusher[0] = rec_spawn_pusher(prog, &r->sc, "prometheus");
	r->pusher[1] = rec_spawn_pusher(prog, &r->sc, "otlp");
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
				rec_reap(prog, &r->exporter, &r->uploader, r->pusher,
				         r->sc.store ? r->sc.run : 0);
			else if (r->wrapper)
				rec_witness(&r->gs, &si);
			else if (sig == SIGCONT)
				continue;
			else if (sig != SIGUSR1 && sig != SIGUSR2)
				r->stopped = sig;
		}
		if (r->wrapper)
			r->cmd_done = rec_guard_read(&r->gs, 0);
		else if (r->cg)
			r->cmd_done = rt_cgrun_emptied(r->cg, &r->s.col);
	}
	if (r->wrapper && !r->cmd_done) /* reports that came with the deadline */
		r->cmd_done = rec_guard_read(&r->gs, 0);
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
		if (r->cg) /* its OOM kills and parts, every 5 s */
			rt_cgrun_read_parts(r->cg, &r->s.col, 5);
		int rc = rt_sampler_take(&r->s, 0, r->warn, sizeof(r->warn));
		took_ns = rt_clock_mono_real() - took_from;
		say_lines(r->warn);
		if (rc && !r->wrapper) {
			say("sampling stopped: %s", rt_strerror(rc));
			break;
		}
		char said[1024] = "";
		int over = r->cg && rt_cgrun_over(r->cg, r->tree, said, sizeof(said));
		say_lines(said);
		if (over)
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
	rt_sampler_space_final(&r->s);
	if (r->cg)
		rt_cgrun_read_parts(r->cg, &r->s.col, 0);
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
	pid_t pid = rec_spawn_export(prog, args, NULL, -1, -1);
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

/* A Slurm job's run: how Slurm saw its end (state, exit code, time limit)
 * is asked by `rt-export learn`, started here and not waited for (it asks
 * for up to two minutes while slurmctld still says COMPLETING, and adds
 * what it learns to the stored run). */
static void learn_end(struct run *r)
{
	if (!r->sc.dir[0] || !r->sc.run || !r->cg->alloc.slurm_job_id ||
	    !r->cg->alloc.slurm_job_id[0] || getenv("RT_NO_LEARN"))
		return;
	char runid[32];
	snprintf(runid, sizeof(runid), "%llu", (unsigned long long)r->sc.run);
	const char *args[] = {"learn", runid, "--store", r->sc.dir, NULL};
	rec_spawn_export(prog, args, NULL, -1, -1); /* (reaped by whoever inherits it) */
}

/* Record one run: its metadata and store, the first sample, the job
 * started (wrapper mode), the exporters, the sampling loop, a final
 * sample and how it ended. Returns 1 when the run could not start,
 * RT_EXIT_OVER_BUDGET when the job went over its budget. */
int rec_record(struct rt_config *cfgp, int out_fd, struct rt_guard_link *g, const char *name)
{
	prog = name;
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
	/* blocked before the run is stored as running: a stop that comes
	 * while it starts (a tracker stopped at once, a short step) waits on
	 * the descriptor and ends the run as any stop does, never killing a
	 * recorder whose run then reads "crashed" */
	sigset_t sigs;
	rec_signals(&sigs, r->wrapper);
	sigprocmask(SIG_BLOCK, &sigs, NULL);
	int fail = run_begin(r);
	if (!fail) {
		run_signals(r, &sigs);
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
	if (r->cg) { /* the group's CPU that no interval holds; its memory's end */
		r->cg->meta.cpu_before = r->s.cg_before;
		rt_cgrun_read_parts(r->cg, &r->s.col, 1); /* (unless the final sample just did) */
		if (rt_cgrun_end(r->cg))                  /* the kernel killed some of it: OOM */
			r->meta.status = rt_run_status_name(RT_RUN_KILLED);
	}
	finish_run(&r->sc, &r->s, &r->meta, &r->mb, &r->pipe_out, r->exporter, r->uploader,
	           r->pusher);
	rt_proctree_close(r->tree);
	if (r->wfd >= 0 && r->wfd != r->sfd && (!g || r->wfd != g->fd))
		close(r->wfd);
	if (r->cg)
		learn_end(r);
	if (r->cg)
		rt_cgrun_close(r->cg);
	return check_budget(r);
}
