/*
 * nodepool.c - the node's readers (see nodepool.h).
 *
 * One lock guards the queue and every task's state; workers sleep on
 * `work`, the caller on `done`, both on the monotonic clock. A round's
 * tasks are counted in `pending` until done; a round that ends with tasks
 * still running counts them no more (they finish into a later round).
 */
#define _GNU_SOURCE
#include "nodepool.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct worker {
	struct rt_nodepool *p;
	struct rt_nodepool_worker w;
	pthread_t tid;
	int exited; /* its thread is past its loop: joinable */
};

struct rt_nodepool {
	pthread_mutex_t mu;
	pthread_cond_t work, done;
	void (*fn)(void *item, struct rt_nodepool_worker *w);
	struct rt_nodetask **q; /* this round's, taken from next on */
	size_t nq, next, qcap;
	uint64_t round;
	size_t pending;   /* this round's tasks not done */
	unsigned running; /* tasks being read now, any round's */
	unsigned nworker, live;
	int quit;
	struct worker worker[RT_NODEPOOL_MAX];
	struct rt_nodepool_worker inline_w; /* no thread: the caller's own */
};

static void *worker_main(void *arg)
{
	struct worker *me = arg;
	struct rt_nodepool *p = me->p;
	pthread_mutex_lock(&p->mu);
	for (;;) {
		while (!p->quit && p->next >= p->nq)
			pthread_cond_wait(&p->work, &p->mu);
		if (p->quit)
			break;
		struct rt_nodetask *t = p->q[p->next++];
		t->state = RT_TASK_RUNNING;
		p->running++;
		pthread_mutex_unlock(&p->mu);
		p->fn(t->item, &me->w);
		pthread_mutex_lock(&p->mu);
		t->state = RT_TASK_DONE;
		p->running--;
		if (t->round == p->round && p->pending)
			p->pending--;
		pthread_cond_broadcast(&p->done);
	}
	p->live--;
	me->exited = 1;
	pthread_cond_broadcast(&p->done);
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

/* One more worker (under the lock, or before any runs), its signals all
 * blocked: the sampler's thread takes them. 0 or -errno. */
static int start_worker(struct rt_nodepool *p)
{
	if (p->nworker >= RT_NODEPOOL_MAX)
		return -EAGAIN;
	struct worker *w = &p->worker[p->nworker];
	memset(w, 0, sizeof(*w));
	w->p = p;
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int rc = pthread_create(&w->tid, NULL, worker_main, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc)
		return -rc;
	p->nworker++;
	p->live++;
	return 0;
}

struct rt_nodepool *rt_nodepool_open(void (*work)(void *item, struct rt_nodepool_worker *w))
{
	struct rt_nodepool *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->fn = work;
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->work, &ca);
	pthread_cond_init(&p->done, &ca);
	pthread_condattr_destroy(&ca);
	for (int i = 0; i < 2; i++)
		start_worker(p); /* (none: each task read on the caller's thread) */
	return p;
}

void rt_nodepool_submit(struct rt_nodepool *p, struct rt_nodetask *t, void *item)
{
	t->item = item;
	pthread_mutex_lock(&p->mu);
	t->round = p->round;
	if (p->nq == p->qcap) {
		size_t cap = p->qcap ? p->qcap * 2 : 64;
		struct rt_nodetask **q = realloc(p->q, cap * sizeof(*q));
		if (q)
			p->q = q, p->qcap = cap;
	}
	if (!p->live || p->nq == p->qcap) { /* no worker, no room: read now */
		pthread_mutex_unlock(&p->mu);
		p->fn(item, &p->inline_w);
		t->state = RT_TASK_DONE;
		return;
	}
	t->state = RT_TASK_QUEUED;
	p->q[p->nq++] = t;
	p->pending++;
	pthread_cond_signal(&p->work);
	pthread_mutex_unlock(&p->mu);
}

static struct timespec abs_time(uint64_t ns)
{
	return (struct timespec){.tv_sec = (time_t)(ns / 1000000000u),
	                         .tv_nsec = (long)(ns % 1000000000u)};
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void rt_nodepool_wait(struct rt_nodepool *p, uint64_t deadline_ns)
{
	struct timespec until = abs_time(deadline_ns);
	pthread_mutex_lock(&p->mu);
	while (p->pending && now_ns() < deadline_ns)
		if (pthread_cond_timedwait(&p->done, &p->mu, &until) == ETIMEDOUT)
			break;
	for (size_t i = p->next; i < p->nq; i++)
		p->q[i]->state = RT_TASK_IDLE; /* never taken: handed back */
	p->nq = p->next = 0;
	p->pending = 0;
	p->round++;
	/* all but one worker held past the deadline: one more, so that the
	 * next round's reads never wait behind the stuck ones */
	if (p->live && p->running + 1 >= p->live)
		start_worker(p);
	pthread_mutex_unlock(&p->mu);
}

int rt_nodepool_drain(struct rt_nodepool *p, uint64_t deadline_ns)
{
	struct timespec until = abs_time(deadline_ns);
	pthread_mutex_lock(&p->mu);
	while (p->running && now_ns() < deadline_ns)
		if (pthread_cond_timedwait(&p->done, &p->mu, &until) == ETIMEDOUT)
			break;
	int idle = p->running == 0;
	pthread_mutex_unlock(&p->mu);
	return idle;
}

enum rt_nodetask_state rt_nodepool_state(struct rt_nodepool *p, const struct rt_nodetask *t)
{
	pthread_mutex_lock(&p->mu);
	enum rt_nodetask_state s = t->state;
	pthread_mutex_unlock(&p->mu);
	return s;
}

void rt_nodepool_collect(struct rt_nodepool *p, struct rt_nodetask *t)
{
	pthread_mutex_lock(&p->mu);
	if (t->state == RT_TASK_DONE)
		t->state = RT_TASK_IDLE;
	pthread_mutex_unlock(&p->mu);
}

unsigned rt_nodepool_workers(struct rt_nodepool *p)
{
	pthread_mutex_lock(&p->mu);
	unsigned n = p->live;
	pthread_mutex_unlock(&p->mu);
	return n;
}

void rt_nodepool_close(struct rt_nodepool *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	p->quit = 1;
	pthread_cond_broadcast(&p->work);
	uint64_t until_ns = now_ns() + 1000000000u; /* the idle ones leave at once */
	struct timespec until = abs_time(until_ns);
	while (p->live > p->running && now_ns() < until_ns)
		if (pthread_cond_timedwait(&p->done, &p->mu, &until) == ETIMEDOUT)
			break;
	int stuck = p->live > 0, gone[RT_NODEPOOL_MAX];
	for (unsigned i = 0; i < p->nworker; i++)
		gone[i] = p->worker[i].exited;
	pthread_mutex_unlock(&p->mu);
	for (unsigned i = 0; i < p->nworker; i++)
		if (gone[i])
			pthread_join(p->worker[i].tid, NULL);
		else
			pthread_detach(p->worker[i].tid);
	if (stuck)
		return; /* (a worker still reads: the pool stays for it) */
	for (unsigned i = 0; i < p->nworker; i++)
		free(p->worker[i].w.buf);
	free(p->inline_w.buf);
	free(p->q);
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->work);
	pthread_cond_destroy(&p->done);
	free(p);
}
