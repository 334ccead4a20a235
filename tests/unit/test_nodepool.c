/* The node's readers (recorder/jobs/nodepool.c): a round's reads done by
 * its deadline, one that hangs left running and collected later, the pool
 * grown so that the next round's reads never wait behind it. */
#include <criterion/criterion.h>
#include <stdatomic.h>
#include <time.h>

#include "nodepool.h"

struct item {
	int slow_ms; /* how long its read takes */
	atomic_int reads;
};

static void work(void *arg, struct rt_nodepool_worker *w)
{
	(void)w;
	struct item *it = arg;
	struct timespec ts = {it->slow_ms / 1000, (it->slow_ms % 1000) * 1000000L};
	if (it->slow_ms)
		nanosleep(&ts, NULL);
	atomic_fetch_add(&it->reads, 1);
}

static uint64_t in_ms(unsigned ms)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec + ms * 1000000ull;
}

Test(nodepool, a_hanging_read_misses_its_round_and_no_other)
{
	struct rt_nodepool *p = rt_nodepool_open(work);
	cr_assert(p);
	cr_assert_eq(rt_nodepool_workers(p), 2);
	struct item it[20] = {{0}};
	struct rt_nodetask t[20] = {{0}};
	it[0].slow_ms = 1500;
	for (int i = 0; i < 20; i++)
		rt_nodepool_submit(p, &t[i], &it[i]);
	rt_nodepool_wait(p, in_ms(500));
	cr_expect_eq(rt_nodepool_state(p, &t[0]), RT_TASK_RUNNING);
	for (int i = 1; i < 20; i++) {
		cr_expect_eq(rt_nodepool_state(p, &t[i]), RT_TASK_DONE, "task %d", i);
		cr_expect_eq(atomic_load(&it[i].reads), 1);
		rt_nodepool_collect(p, &t[i]);
		cr_expect_eq(rt_nodepool_state(p, &t[i]), RT_TASK_IDLE);
	}
	/* all but one held: one more worker, so a second hang leaves one free */
	cr_expect_eq(rt_nodepool_workers(p), 3);
	it[1].slow_ms = 1500;
	for (int i = 1; i < 20; i++)
		rt_nodepool_submit(p, &t[i], &it[i]);
	rt_nodepool_wait(p, in_ms(500));
	for (int i = 2; i < 20; i++)
		cr_expect_eq(rt_nodepool_state(p, &t[i]), RT_TASK_DONE, "round 2, task %d", i);
	cr_expect_eq(rt_nodepool_state(p, &t[1]), RT_TASK_RUNNING);
	cr_expect(rt_nodepool_drain(p, in_ms(5000)));
	cr_expect_eq(rt_nodepool_state(p, &t[0]), RT_TASK_DONE);
	cr_expect_eq(atomic_load(&it[0].reads), 1);
	rt_nodepool_close(p);
}

Test(nodepool, reads_not_taken_by_the_deadline_are_handed_back)
{
	struct rt_nodepool *p = rt_nodepool_open(work);
	struct item it[6] = {{0}};
	struct rt_nodetask t[6] = {{0}};
	for (int i = 0; i < 6; i++) {
		it[i].slow_ms = 1000; /* two workers: two taken, the rest waiting */
		rt_nodepool_submit(p, &t[i], &it[i]);
	}
	rt_nodepool_wait(p, in_ms(300));
	int running = 0, idle = 0;
	for (int i = 0; i < 6; i++) {
		enum rt_nodetask_state s = rt_nodepool_state(p, &t[i]);
		running += s == RT_TASK_RUNNING;
		idle += s == RT_TASK_IDLE;
	}
	cr_expect_eq(running, 2);
	cr_expect_eq(idle, 4);
	cr_expect(rt_nodepool_drain(p, in_ms(5000)));
	for (int i = 0; i < 6; i++) /* (those handed back were never read) */
		cr_expect_eq(atomic_load(&it[i].reads),
		             rt_nodepool_state(p, &t[i]) == RT_TASK_DONE);
	rt_nodepool_close(p);
}
