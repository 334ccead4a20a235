/* wrapper.c - start the wrapped command (see wrapper.h). */
#define _GNU_SOURCE
#include "wrapper.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
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

pid_t rt_spawn_command(char *const argv[], const sigset_t *mask, int *exit_code, char *err,
                       size_t errcap)
{
	int pipefd[2];
	if (pipe2(pipefd, O_CLOEXEC) < 0) {
		*exit_code = 126;
		snprintf(err, errcap, "cannot start %s: %s", argv[0], strerror(errno));
		return -1;
	}
	/* a pids limit or a memory squeeze may be momentary: about 70 ms,
	 * then the caller makes room by giving up tracking */
	pid_t pid = rt_fork_retry(3);
	if (pid < 0) {
		*exit_code = RT_SPAWN_NO_PROCESS;
		snprintf(err, errcap, "cannot start a process for %s (fork: %s)", argv[0],
		         strerror(errno));
		close(pipefd[0]);
		close(pipefd[1]);
		return -1;
	}
	if (pid == 0) {
		sigprocmask(SIG_SETMASK, mask, NULL);
		execvp(argv[0], argv);
		int e = errno; /* tell the parent why, through the close-on-exec pipe */
		if (write(pipefd[1], &e, sizeof(e)) < 0) {
		}
		_exit(127);
	}
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

int rt_exit_code(int wstatus)
{
	if (WIFEXITED(wstatus))
		return WEXITSTATUS(wstatus);
	if (WIFSIGNALED(wstatus))
		return 128 + WTERMSIG(wstatus);
	return 1;
}
