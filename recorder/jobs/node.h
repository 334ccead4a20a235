/*
 * node.h - the node mode (--jobs WHICH): every job cgroup on the node,
 * each its own run.
 *
 * One watcher finds the job groups (a preset's layouts, or a glob of
 * cgroup paths) once an interval and starts one recorder per job
 * (`rt-recorder --cgroup PATH --quiet`, the user's other options passed
 * on), which ends when its group empties or is removed. The watcher only
 * reads directories; the recorders only read the groups.
 */
#ifndef RT_NODE_H
#define RT_NODE_H

#include <sys/types.h>

#include "rt/config.h"

/* Watch until INT or TERM (passed on to the job recorders, which finish
 * their runs). argv: the node's own command line. Returns the exit code. */
int rt_node_run(const struct rt_config *cfg, int argc, char **argv, const char *prog);

/* Expand the presets' globs, or the user's: calls fn(arg, mount, path,
 * ino) for each group that matches, in each hierarchy it is in (path
 * relative to the hierarchies, ino its directory's there, 0 when
 * unknown). The number of matches. */
struct rt_node_globs {
	const char *pat[8];
	int n;
};
int rt_node_globs(const char *which, struct rt_node_globs *g, char *err, size_t cap);
size_t rt_node_expand(const struct rt_node_globs *g,
                      void (*fn)(void *arg, const char *mount, const char *path, ino_t ino),
                      void *arg);

#endif
