/*
 * nodepool.h - the node's readers: a few worker threads that read jobs'
 * groups and process trees while the sampler's own thread waits for them
 * until a deadline, so that one job whose tree is huge or whose /proc
 * read hangs misses its own samples and never the others'.
 *
 * A task is handed over (queued), taken by a worker (running), finished
 * (done), then collected by the caller (idle again). The caller waits for
 * a round's tasks until its deadline: a task not taken by then is handed
 * back (idle, never read); one still running stays running, its worker
 * held, and is collected once done, in a later round. The pool starts two
 * workers and one more whenever all but one are held past a deadline (at
 * most RT_NODEPOOL_MAX), so a few stuck reads never stop the rest. With
 * no thread to be had, each task is read at once on the caller's thread,
 * as before there was a pool.
 *
 * Workers block every signal (the sampler's thread takes them) and touch
 * only what the task's function does; the caller's thread is the only one
 * that hands over, collects and reads a task's state.
 */
#ifndef RT_NODEPOOL_H
#define RT_NODEPOOL_H

#include <stddef.h>
#include <stdint.h>

#define RT_NODEPOOL_MAX 16

enum rt_nodetask_state { RT_TASK_IDLE, RT_TASK_QUEUED, RT_TASK_RUNNING, RT_TASK_DONE };

/* A worker's own: its read buffer (grown by whoever reads into it). */
struct rt_nodepool_worker {
	char *buf;
	size_t cap;
};

struct rt_nodetask {
	enum rt_nodetask_state state; /* under the pool's lock */
	uint64_t round;               /* the round it was handed over in */
	void *item;
};

struct rt_nodepool;

/* A pool reading each task with work(item, worker). NULL without memory;
 * a pool whose threads could not start reads on the caller's thread. */
struct rt_nodepool *rt_nodepool_open(void (*work)(void *item, struct rt_nodepool_worker *w));
/* Hand t over in this round (it must be idle). */
void rt_nodepool_submit(struct rt_nodepool *p, struct rt_nodetask *t, void *item);
/* Wait until every task of this round is done or deadline_ns (monotonic)
 * passes; tasks not yet taken are handed back, idle. The round ends. */
void rt_nodepool_wait(struct rt_nodepool *p, uint64_t deadline_ns);
/* Wait until no task runs, or deadline_ns. Whether none runs. */
int rt_nodepool_drain(struct rt_nodepool *p, uint64_t deadline_ns);
/* t's state now (read under the lock). */
enum rt_nodetask_state rt_nodepool_state(struct rt_nodepool *p, const struct rt_nodetask *t);
/* A done task idle again (its result the caller's). */
void rt_nodepool_collect(struct rt_nodepool *p, struct rt_nodetask *t);
/* Workers now (for tests and the bench). */
unsigned rt_nodepool_workers(struct rt_nodepool *p);
/* Stop the workers. A worker still in a task is left to finish it and
 * exit (the pool's memory kept for it); the others are joined. */
void rt_nodepool_close(struct rt_nodepool *p);

#endif
