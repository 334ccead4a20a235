/*
 * recording.h - what the recording's files share (recorder/main.c runs a
 * recording with them): the one voice the recorder speaks with, where the
 * run is stored (store_choice.c), the exporters it starts
 * (exporters.c), and its link to the guardian in wrapper mode
 * (guard_link.c).
 */
#ifndef RT_RECORDING_H
#define RT_RECORDING_H

#include <signal.h>
#include <stdint.h>
#include <sys/signalfd.h>
#include <sys/types.h>

#include "guardian.h"
#include "proctree.h"
#include "rt/common.h"
#include "rt/config.h"
#include "rt/store.h"
#include "rt/stream.h"
#include "sampler.h"

#define DEFAULT_STORE_MAX_MB 1024

/* run.c: one recording, as its steps (struct run) go: 1 when the run
 * could not start, RT_EXIT_OVER_BUDGET when the job went over its
 * budget, else 0; g: the guardian's link in wrapper mode, else NULL;
 * prog: the recorder's name in what it says. */
int rec_record(struct rt_config *cfg, int out_fd, struct rt_guard_link *g, const char *prog);
/* ... and what every run's metadata starts from (the node's runs too) */
struct rt_host_info;
struct rt_run_meta;
void rec_base_meta(const struct rt_config *cfg, const struct rt_host_info *h,
                   struct rt_run_meta *m);
#define EXPORTER_WAIT_NS (10ull * 1000000000ull)
/* ... of which the pushers wait, by default, after the job */
#define PUSH_EXIT_WAIT_S 3

/* What speaks takes prog, the recorder's name in what it says
 * (resource-tracker or rt-recorder, as it was started): rt_message(prog,
 * ...), one line on stderr. */

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

/* store_choice.c: the store for this run (0), or nonzero when there is
 * none worth recording without (said). mb NULL: the store only, no run
 * made (the node mode's, which makes its jobs' runs). */
int rec_choose_store(const char *prog, const struct rt_config *cfg, int wrapper,
                     const struct rt_buf *mb, struct store_choice *c);

/* exporters.c: rt-export started with args, the live printer, the
 * uploader, a pusher; waited for when the run ends; reaped on SIGCHLD. */
pid_t rec_spawn_export(const char *prog, const char *const *args, const char *runid, int out_fd,
                       int in_fd);
pid_t rec_spawn_printer(const char *prog, const struct rt_config *cfg, struct rt_sampler *s,
                        const struct store_choice *sc, int out_fd, struct rt_stream_out *pipe_out,
                        const struct rt_buf *meta);
pid_t rec_spawn_uploader(const char *prog, const struct store_choice *sc, int verbose,
                         int csv_extended);
pid_t rec_spawn_pusher(const char *prog, const struct store_choice *sc, const char *sink);
void rec_wait_exporters(const char *prog, pid_t exporter, pid_t uploader, const pid_t *pusher,
                        uint64_t run, int stored, uint64_t deadline);
void rec_reap(const char *prog, pid_t *exporter, pid_t *uploader, pid_t *pusher, uint64_t run);

/*
 * What the recorder knows of the guardian (guardian.h) and the job: the
 * job's start and end, the SYNCs asked for and answered.
 */
struct guard_state {
	struct rt_guard_link *g;
	struct rt_proctree *tree;
	pid_t job;
	int job_status, job_done, nostart, gone;
	uint32_t sync_sent, sync_back; /* SYNCs asked for, and the last answered */
};

/* guard_link.c: the signals the recorder reads; a signal witnessed for
 * the guardian; the guardian's messages read (1: the job ended or the
 * guardian is gone); the process tree's wait for reports. */
void rec_signals(sigset_t *sigs, int wrapper);
void rec_witness(struct guard_state *gs, const struct signalfd_siginfo *si);
int rec_guard_read(struct guard_state *gs, int wait_ms);
int rec_await_reports(void *arg, int ms);

#endif
