/* wrapper.c - start the wrapped command (see wrapper.h). */
#define _GNU_SOURCE
#include "wrapper.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

pid_t rt_fork_retry(int retries)
{
	struct timespec nap = {0, 10 * 1000 * 1000};
	for (int i = 0;; i++) {
		pid_t pid = fork();
		if (pid >= 0 || (errno != EAGAIN && errno != ENOMEM) || i >= retries)
			return pid;
		nanosleep(&nap, NULL);
		nap.tv_nsec = nap.tv_nsec * 2 > 500000000L ? 500000000L : nap.tv_nsec * 2;
	}
}

/* The child: run argv; if it cannot, tell the parent why through the
 * close-on-exec pipe, or with no pipe say it on stderr, as a shell would. */
static void exec_command(char *const argv[], const sigset_t *mask, int pipe_w)
{
	sigprocmask(SIG_SETMASK, mask, NULL);
	execvp(argv[0], argv);
	int e = errno;
	int code = (e == ENOENT || e == ENOTDIR) ? 127 : 126;
	if (pipe_w >= 0) {
		if (write(pipe_w, &e, sizeof(e)) < 0) {
		}
	} else {
		dprintf(2, "%s: %s\n", argv[0], code == 127 ? "command not found" : strerror(e));
	}
	_exit(code);
}

pid_t rt_spawn_command(char *const argv[], const sigset_t *mask, int *exit_code, char *err,
                       size_t errcap)
{
	int pipefd[2];
	if (pipe2(pipefd, O_CLOEXEC) < 0) {
		/* no descriptor to spare (a tight RLIMIT_NOFILE): the command
		 * starts all the same, and says itself why it could not */
		pipefd[0] = pipefd[1] = -1;
	}
	/* a pids limit or a memory squeeze may be momentary: about 70 ms,
	 * then the caller makes room by giving up tracking */
	pid_t pid = rt_fork_retry(3);
	if (pid < 0) {
		*exit_code = RT_SPAWN_NO_PROCESS;
		snprintf(err, errcap, "cannot start a process for %s (fork: %s)", argv[0],
		         strerror(errno));
		if (pipefd[0] >= 0) {
			close(pipefd[0]);
			close(pipefd[1]);
		}
		return -1;
	}
	if (pid == 0)
		exec_command(argv, mask, pipefd[1]);
	if (pipefd[0] < 0)
		return pid;
	close(pipefd[1]);
	int e = 0;
	ssize_t n;
	do
		n = read(pipefd[0], &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	close(pipefd[0]);
	if (n == (ssize_t)sizeof(e)) {
		waitpid(pid, NULL, 0);
		*exit_code = (e == ENOENT || e == ENOTDIR) ? 127 : 126;
		snprintf(err, errcap, "%s: %s", argv[0],
		         *exit_code == 127 ? "command not found" : strerror(e));
		return -1;
	}
	return pid;
}

/* A process's state letter and parent from /proc/PID/stat: 0, or -1 when
 * it is gone. */
static int proc_state(pid_t pid, char *state, pid_t *ppid)
{
	char path[64], buf[512];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	/* raw: /proc, read-only */
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	const char *p = strrchr(buf, ')'); /* the name may hold anything */
	int pp;
	if (!p || sscanf(p + 1, " %c %d", state, &pp) != 2)
		return -1;
	*ppid = (pid_t)pp;
	return 0;
}

int rt_proc_stopped(pid_t pid)
{
	char st;
	pid_t pp;
	/* 'T' only: a job-control stop. 't' is a tracer's, which a debugger
	 * holds, and LeakSanitizer too while it checks a process that ends */
	return proc_state(pid, &st, &pp) == 0 && st == 'T';
}

int rt_proc_descends(pid_t pid, pid_t top, pid_t via, pid_t except)
{
	char st;
	for (int hops = 0; pid > 1 && hops < 256; hops++) {
		pid_t pp;
		if (pid == top)
			return 1;
		if (proc_state(pid, &st, &pp) < 0)
			return 0;
		if (pp == via)
			return pid != except;
		pid = pp;
	}
	return 0;
}

void rt_kill_family(pid_t pid)
{
	char path[64], buf[4096];
	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid, (int)pid);
	/* raw: /proc, read-only */
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (fd >= 0)
		close(fd);
	kill(pid, SIGKILL);
	buf[n > 0 ? n : 0] = '\0';
	for (char *p = buf, *end; *p; p = end) {
		long c = strtol(p, &end, 10);
		if (end == p)
			break;
		if (c > 0)
			kill((pid_t)c, SIGKILL);
	}
}

int rt_exit_code(int wstatus)
{
	if (WIFEXITED(wstatus))
		return WEXITSTATUS(wstatus);
	if (WIFSIGNALED(wstatus))
		return 128 + WTERMSIG(wstatus);
	return 1;
}
