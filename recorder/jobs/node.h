/*
 * node.h - the node mode (--jobs WHICH): every job cgroup on the node,
 * each its own run.
 *
 * One process finds the job groups (a preset's layouts, or a glob of
 * cgroup paths: looked for again when inotify says a group was made where
 * they are looked for, and every 5 s) and samples them all each interval
 * (nodesampler.h), each job into its own run of the node's store, which
 * ends when its group empties or is removed. It only reads the groups,
 * their members and the host.
 */
#ifndef RT_NODE_H
#define RT_NODE_H

#include <stdint.h>
#include <sys/types.h>

#include "rt/config.h"
#include "rt/runmeta.h"
#include "rt/store.h"

/* What the node's caller gives it: the store (open for writing; NULL:
 * each job a recorder of its own, noderec.h, given the node's command
 * line argc, argv), the metadata every run starts from (the host,
 * interval, tags, the user's meta), and what to do at a run's end
 * (slurm_job: the Slurm job's id, NULL: none).
 *
 * The sinks: one exporter for every run (rt-export sinks). tell names a
 * run to it, at the run's start and at its end, starting it first when
 * none runs: its pid when it was started now, 0 when it was running, -1
 * when there is none (no sink set, or it could not start: the next tell
 * tries again). lost: it ended (reaped; the node names every live run to
 * the next). close: the node stops (it sends the runs' ends, then exits). */
struct rt_node_env {
	struct rt_store *store;
	int argc;
	char **argv;
	const struct rt_run_meta *meta;
	void (*ended)(void *arg, uint64_t run, const char *slurm_job);
	pid_t (*tell)(void *arg, uint64_t run);
	void (*lost)(void *arg);
	void (*close)(void *arg);
	void *arg;
};

/* Watch until INT, TERM or HUP (every run then ends, as a stopped
 * recorder's). Returns the exit code. */
int rt_node_run(const struct rt_config *cfg, const struct rt_node_env *env, const char *prog);

/* Expand the presets' globs, or the user's: calls fn(arg, mount, path,
 * ino) for each group that matches, in each hierarchy it is in (path
 * relative to the hierarchies, ino its directory's there, 0 when
 * unknown). Each directory looked in is watched by ino_fd (inotify; -1:
 * none) for groups made in it (*watched: how many took; may be NULL).
 * The number of matches. */
struct rt_node_globs {
	const char *pat[8];
	int n;
};
int rt_node_globs(const char *which, struct rt_node_globs *g, char *err, size_t cap);
size_t rt_node_expand(const struct rt_node_globs *g,
                      void (*fn)(void *arg, const char *mount, const char *path, ino_t ino),
                      void *arg, int ino_fd, size_t *watched);

#endif
