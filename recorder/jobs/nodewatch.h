/*
 * nodewatch.h - the node's watcher: the one process above the node's
 * sampler, which starts the sampler again when a signal it did not pass on
 * kills it (SIGKILL, a crash), within a second; the new sampler goes on
 * with every live job's run (nodeadopt.h). INT, TERM and HUP are passed
 * on, and the watcher ends as the sampler does. The sampler dies with its
 * watcher: a parent-death TERM, so it hands its runs over to the next
 * node and ends. The watcher opens nothing of the sampler's (LMDB's handle
 * must not cross a fork): it is forked before the store is opened.
 */
#ifndef RT_NODEWATCH_H
#define RT_NODEWATCH_H

/* Fork the sampler and watch it. Returns 1 in the sampler (go on), also
 * in this process when no watcher could be set up (said once); 0 in the
 * watcher once the node is over, with the process's exit code in *code. */
int rt_nodewatch(const char *prog, int *code);

#endif
