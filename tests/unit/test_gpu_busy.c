/* A tree's GPU busy over one interval, from NVML's utilization samples. */
#include <criterion/criterion.h>

#include "gpu_busy.h"

static int odd(uint32_t pid, void *ctx)
{
	(void)ctx;
	return pid % 2 == 1;
}

Test(gpu_busy, device_samples_are_the_tree_busy_when_it_is_alone)
{
	struct rt_busy_acc a;
	rt_busy_reset(&a);
	uint32_t v[] = {100, 100, 0, 0, 0}; /* busy 400 ms of a 1 s interval */
	for (int i = 0; i < 5; i++)
		rt_busy_add(&a, 0, v[i]);
	cr_assert_eq(rt_busy_tree_x100(&a, odd, NULL, 1), 4000);
	cr_assert_eq(rt_busy_tree_x100(&a, odd, NULL, 0), 0,
	             "not alone: the device is not the tree");
}

Test(gpu_busy, shared_gpu_counts_only_the_tree_processes)
{
	struct rt_busy_acc a;
	rt_busy_reset(&a);
	for (int i = 0; i < 5; i++) {
		rt_busy_add(&a, 3, 60); /* the tree's */
		rt_busy_add(&a, 4, 30); /* someone else's */
	}
	cr_assert_eq(rt_busy_tree_x100(&a, odd, NULL, 0), 6000);
}

Test(gpu_busy, a_process_there_part_of_the_interval_weighs_by_its_periods)
{
	struct rt_busy_acc a;
	rt_busy_reset(&a);
	for (int i = 0; i < 5; i++)
		rt_busy_add(&a, 2, 10); /* outside, every period */
	rt_busy_add(&a, 5, 100);        /* the tree's, started late: 1 period of 5 */
	cr_assert_eq(rt_busy_tree_x100(&a, odd, NULL, 0), 2000);
	/* two of the tree's processes add up, at most one whole GPU */
	for (int i = 0; i < 4; i++)
		rt_busy_add(&a, 5, 100);
	for (int i = 0; i < 5; i++)
		rt_busy_add(&a, 7, 90);
	cr_assert_eq(rt_busy_tree_x100(&a, odd, NULL, 0), 10000);
}

Test(gpu_busy, no_sample_is_unknown_not_zero)
{
	struct rt_busy_acc a;
	rt_busy_reset(&a);
	cr_assert_eq(rt_busy_tree_x100(&a, odd, NULL, 1), -1);
	cr_assert_not(rt_busy_any(&a));
	rt_busy_add(&a, 1, 250); /* not a percentage: ignored */
	cr_assert_eq(rt_busy_tree_x100(&a, odd, NULL, 1), -1);
}

Test(gpu_busy, a_full_table_drops_and_counts)
{
	struct rt_busy_acc a;
	rt_busy_reset(&a);
	for (uint32_t p = 1; p <= RT_BUSY_MAX_PIDS + 3; p++)
		rt_busy_add(&a, p, 1);
	cr_assert_eq(a.npid, RT_BUSY_MAX_PIDS);
	cr_assert_eq(a.dropped, 3);
}

Test(gpu_busy, merge_adds_samples_of_the_same_process)
{
	struct rt_busy_acc a, b;
	rt_busy_reset(&a);
	rt_busy_reset(&b);
	rt_busy_add(&a, 1, 100);
	rt_busy_add(&b, 1, 0);
	rt_busy_add(&b, 2, 50);
	rt_busy_merge(&a, &b);
	cr_assert_eq(a.npid, 2);
	cr_assert_eq(rt_busy_tree_x100(&a, odd, NULL, 0), 5000, "(100 + 0) / 2 periods");
}
