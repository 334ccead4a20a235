/*
 * guardian.h - wrapper mode's two processes.
 *
 * The guardian is the process the caller started: it starts the job, waits
 * for it, passes signals on and returns its exit status. It holds no store,
 * no ring, no network and nothing it reads from disk, so nothing that goes
 * wrong in tracking can cost the job. The recorder is its first child: it
 * samples the job's tree (the guardian's other descendants), stores and
 * publishes the samples and starts the exporters. The guardian reaps the
 * job and every orphan (it is the subreaper) and tells the recorder each
 * reaped process's exact rusage over a socket, so the tree's CPU stays
 * exact; when the recorder dies, the job goes on untracked with one line
 * saying why.
 *
 * Messages are fixed-size records on a SOCK_SEQPACKET socket pair. The
 * guardian never blocks on it: what the socket cannot take now is summed
 * into one REAPED record sent as soon as there is room.
 */
#ifndef RT_GUARDIAN_H
#define RT_GUARDIAN_H

#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "rt/config.h"

enum rt_guard_type {
	RT_G_READY = 1, /* recorder -> guardian: the first sample is taken */
	RT_G_STARTED,   /* the job runs as pid */
	RT_G_NOSTART,   /* the job could not start: status is the exit code */
	RT_G_REAPED,    /* pid (0: several, count of them) was reaped with this rusage */
	RT_G_EXITED,    /* the job (pid) ended with wait status status and this rusage */
	RT_G_SYNC,      /* recorder -> guardian: reap what ended and report it, then
	                 * send SYNC back with the same count (after those reports) */
	RT_G_SIGNAL,    /* recorder -> guardian: a process (pid) sent it signal status
	                 * (sigpass.h: the witness of signals sent to the group) */
};

struct rt_guard_msg {
	uint32_t type;
	int32_t pid;
	int32_t status;
	uint32_t count;
	uint64_t ut_us, st_us, inblock, oublock, majflt, maxrss_kb;
};

/* The recorder's side: the guardian's pid and the socket. */
struct rt_guard_link {
	pid_t guardian;
	int fd;
};

/*
 * The recorder, run in the guardian's first child with the link; returns
 * its exit status (which the guardian only reports).
 */
typedef int (*rt_record_fn)(struct rt_config *cfg, int out_fd, struct rt_guard_link *g,
                            const char *prog);

/*
 * Run cfg->command under a guardian: fork the recorder (record), wait until
 * it took its first sample (at most a few seconds), start the job, and
 * serve until the job ends. Returns the job's exit code (or 128+signal).
 * prog names this program in messages.
 */
int rt_guardian_run(struct rt_config *cfg, int out_fd, rt_record_fn record, const char *prog);

/* A reaped process's rusage as a message (type and pid set by the caller). */
void rt_guard_msg_rusage(struct rt_guard_msg *m, const struct rusage *ru);
/* ... and back. */
void rt_guard_msg_to_rusage(const struct rt_guard_msg *m, struct rusage *ru);

#endif
