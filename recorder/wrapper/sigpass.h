/*
 * sigpass.h - which signals the guardian passes on to the job, and which
 * it must not pass on because the job already got them.
 *
 * The guardian watches every catchable signal but SIGCHLD, so none of them
 * kills it and orphans the job (SIGKILL and SIGSTOP cannot be caught). A
 * signal the terminal sent (si_code SI_KERNEL) reached the job with the
 * whole foreground process group and is not sent again. One a process
 * sent is passed on, unless it was sent to the process group (kill -- -PGID,
 * timeout(1), a CI runner's cancel) or to every process of the cgroup
 * (systemd): then the job, in the same group, got it from the same sender.
 *
 * The recorder is the witness: it is in the guardian's process group and
 * cgroup, blocks the same signals, and reports each one a process sent it
 * (signal and sender) over the guardian's socket. The guardian holds a
 * signal it got for a moment: a report of the same signal from the same
 * sender means it went to the group, and one report cancels one signal.
 * Without a report it is passed on: after HOLD_MS, or at once when the
 * recorder is gone or the job left the process group. The signals the
 * recorder's store guard owns (SEGV, BUS, FPE, ILL, TRAP, ABRT, SYS,
 * VTALRM) are not witnessed and are passed on at once: sent to the group,
 * they reach the job twice. Stop signals (TSTP, TTIN, TTOU) are witnessed
 * like the rest; the guardian itself stops when, and as, the job stops
 * (guardian.c), so the caller sees what it would see without rt.
 */
#ifndef RT_SIGPASS_H
#define RT_SIGPASS_H

#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

#define RT_SIGPASS_SLOTS 64

struct rt_sigpass {
	struct rt_sigpass_sig {
		int sig;
		pid_t from;
		uint64_t at, until; /* monotonic ns: when it came, when it is passed on */
	} held[RT_SIGPASS_SLOTS], seen[RT_SIGPASS_SLOTS];
	unsigned nheld, nseen;
};

/* The guardian's watched signals: every catchable one but SIGCHLD. */
void rt_sigpass_guardian_set(sigset_t *set);
/* The recorder's witnessed signals: those, less the store guard's. */
void rt_sigpass_witness_set(sigset_t *set);
/* Whether a signal with this si_code and sender was sent by a process
 * other than self (not the kernel, not a fault). */
int rt_sigpass_sent(int code, pid_t from);

/*
 * The guardian got sig from a process: 1 when it is to be passed on now
 * (no witness for it), 0 when one report already cancelled it or it is
 * held for one (witnessed: whether the recorder can witness it).
 */
int rt_sigpass_got(struct rt_sigpass *p, int sig, pid_t from, int witnessed, uint64_t now);
/* The recorder reported sig from a process: cancel one held, or keep it
 * for the guardian's own that has not been read yet. */
void rt_sigpass_reported(struct rt_sigpass *p, int sig, pid_t from, uint64_t now);
/*
 * The next held signal whose time is up, removed (0: none), and its
 * sender in *from. pending says whether the recorder has that signal
 * pending, not yet reported (then it is held up to a second more).
 */
int rt_sigpass_due(struct rt_sigpass *p, uint64_t now, int (*pending)(int sig, void *), void *ctx,
                   pid_t *from);
/* Milliseconds until the next held signal is due; -1 when none. */
int rt_sigpass_wait_ms(const struct rt_sigpass *p, uint64_t now);

#endif
