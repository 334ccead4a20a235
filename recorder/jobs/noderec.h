/*
 * noderec.h - the node mode's other way: a recorder of its own for each
 * job (`rt-recorder --cgroup PATH --quiet`, the node's other options
 * passed on), each with its own descriptor table. Taken where the
 * descriptors are too few for one process to hold more than a few jobs
 * (a hard RLIMIT_NOFILE under RT_NODEREC_BELOW): one process holds about
 * 45 for the host, its store and its readers, 64 kept free, and 20 a job
 * below half its limit (its group's counters, its members' files), 3
 * past it (nodesampler.h); a recorder about 40 of its own.
 */
#ifndef RT_NODEREC_H
#define RT_NODEREC_H

#include <sys/types.h>

#define RT_NODEREC_BELOW 256

struct rt_noderec {
	char self[4096];
	char **args; /* the recorders' command line; the path goes in args[at] */
	int at;
	int spawn_said;
	const char *prog;
};

/* Whether the jobs get recorders of their own here: the hard limit on
 * descriptors (*limit) is under RT_NODEREC_BELOW. */
int rt_noderec_needed(unsigned long *limit);
/* The recorders' command line from the node's (argc, argv). 0, or -1 with
 * one line said. */
int rt_noderec_open(struct rt_noderec *r, int argc, char **argv, const char *prog);
/* A recorder for the group at path: its pid, 0 when none could start
 * (said once). It ends its run when the node dies, however (SIGTERM at
 * its parent's death, even a SIGKILL'd one): a node started again finds
 * the job's group free and starts the job's one running run, never a
 * second beside an orphan. */
pid_t rt_noderec_start(struct rt_noderec *r, const char *path);
void rt_noderec_free(struct rt_noderec *r);

#endif
