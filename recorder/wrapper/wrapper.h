/*
 * wrapper.h - run the wrapped command.
 *
 * The command inherits stdin/stdout/stderr, the process group and the
 * terminal, its caller's signal mask and dispositions, and no descriptor of
 * the tracker's (all are close-on-exec), exactly as if it had been started
 * without the tracker.
 */
#ifndef RT_WRAPPER_H
#define RT_WRAPPER_H

#include <signal.h>
#include <sys/types.h>

/* *exit_code when no process could be made (fork kept failing with
 * EAGAIN/ENOMEM for about 70 ms): the caller runs the command itself. */
#define RT_SPAWN_NO_PROCESS (-1)

/*
 * Start argv[0] (searched in PATH) with the signal mask mask. Returns the pid, or -1 with *exit_code
 * set as a shell would (127 not found, 126 not executable), or to
 * RT_SPAWN_NO_PROCESS, and a one-line reason in err.
 */
pid_t rt_spawn_command(char *const argv[], const sigset_t *mask, int *exit_code, char *err,
                       size_t errcap);

/*
 * fork(), retried while the system is out of processes or memory for a
 * moment (EAGAIN/ENOMEM, e.g. under a pids limit): 1 + retries tries,
 * sleeping 10 ms doubling up to 500 ms between them. -1 with errno.
 */
pid_t rt_fork_retry(int retries);

/* Whether pid is stopped by a signal (SIGSTOP, SIGTSTP): waiting for it
 * is waiting for someone's SIGCONT. (Not a tracer's stop: a debugger's.) */
int rt_proc_stopped(pid_t pid);
/* Whether pid is top or one of its descendants, or a child of via (the
 * subreaper that adopts top's orphans) other than except: the job's own. */
int rt_proc_descends(pid_t pid, pid_t top, pid_t via, pid_t except);
/* SIGKILL pid and its children (the recorder and its exporters: they hold
 * the caller's stdout and stderr, so a pipe the caller reads stays open
 * until they are gone). */
void rt_kill_family(pid_t pid);

/* The recorder's exit status when the job went over its budget (its
 * --max-memory, --max-cpu), and the tracker's after a job that succeeded. */
#define RT_EXIT_OVER_BUDGET 3

/* Exit status of the tracker for a wait status: the code, or 128+signal. */
int rt_exit_code(int wstatus);

#endif
