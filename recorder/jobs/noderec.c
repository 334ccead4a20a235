/*
 * noderec.c - a recorder of its own for each job (noderec.h).
 */
#define _GNU_SOURCE
#include "noderec.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "rt/config.h"

int rt_noderec_needed(unsigned long *limit)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return 0;
	*limit = (unsigned long)rl.rlim_max;
	return rl.rlim_max != RLIM_INFINITY && rl.rlim_max < RT_NODEREC_BELOW;
}

/* The recorders' command line: the node's, less --jobs and the output
 * (each run is stored; replay or export it), plus --cgroup PATH --quiet. */
static char **recorder_args(int argc, char **argv, int *at)
{
	char **a = calloc((size_t)argc + 5, sizeof(*a));
	if (!a)
		return NULL;
	int n = 0;
	a[n++] = argv[0];
	for (int i = 1; i < argc; i++) {
		const char *s = argv[i];
		int drop = !strcmp(s, "--jobs") || !strncmp(s, "--jobs=", 7) || !strcmp(s, "-o") ||
		           !strcmp(s, "--output") || !strncmp(s, "--output=", 9) ||
		           (!strncmp(s, "-o", 2) && s[2]);
		if (rt_config_takes_next(s) && i + 1 < argc) {
			if (!drop) {
				a[n++] = argv[i];
				a[n++] = argv[i + 1];
			}
			i++;
			continue;
		}
		if (!drop)
			a[n++] = argv[i];
	}
	a[n++] = "--quiet";
	a[n++] = "--cgroup";
	*at = n;
	a[n++] = NULL; /* the path, set per job */
	a[n] = NULL;
	return a;
}

int rt_noderec_open(struct rt_noderec *r, int argc, char **argv, const char *prog)
{
	memset(r, 0, sizeof(*r));
	r->prog = prog;
	ssize_t sl = readlink("/proc/self/exe", r->self, sizeof(r->self) - 1);
	r->args = recorder_args(argc, argv, &r->at);
	if (sl <= 0 || !r->args) {
		fprintf(stderr, "%s: --jobs: cannot find this program to start recorders\n", prog);
		free(r->args);
		r->args = NULL;
		return -1;
	}
	return 0;
}

pid_t rt_noderec_start(struct rt_noderec *r, const char *path)
{
	r->args[r->at] = (char *)path;
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid == 0) {
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		if (prctl(PR_SET_PDEATHSIG, SIGTERM) < 0 || getppid() != parent)
			_exit(0); /* the node died already: the next one starts it */
		execv(r->self, r->args);
		_exit(127);
	}
	if (pid < 0 && !r->spawn_said) {
		r->spawn_said = 1;
		fprintf(stderr, "%s: warning: cannot start a recorder for %s (%s); trying again\n",
		        r->prog, path, strerror(errno));
	}
	return pid < 0 ? 0 : pid;
}

void rt_noderec_free(struct rt_noderec *r)
{
	free(r->args);
	r->args = NULL;
}
