/*
 * gpu_busy.h - a tree's GPU busy over one sample interval, from NVML's
 * utilization samples.
 *
 * NVML samples a GPU every ~200 ms (the device, and each process on it).
 * The busy of an interval is the mean of the samples that fall in it; a
 * sample is never counted in two intervals nor in none. Two sources feed
 * an interval's accumulator (gpu_nvml.c chooses, per GPU):
 *   - the device's own samples (nvmlDeviceGetSamples, every sample since
 *     the last one taken), when the tree is alone on the GPU: its busy is
 *     the device's (pid 0 here);
 *   - each process's samples (nvmlDeviceGetProcessUtilization, the newest
 *     per process per call, polled once a period), when the GPU is shared
 *     with processes outside the tree: the tree's busy is the sum of its
 *     processes' samples over the number of periods sampled (the most
 *     samples any one process had), so a process that started mid-interval
 *     weighs by the periods it was there.
 * Pure bookkeeping: no NVML, no locks (unit tested on its own).
 */
#ifndef RT_GPU_BUSY_H
#define RT_GPU_BUSY_H

#include <stdint.h>

#define RT_BUSY_MAX_PIDS 256

struct rt_busy_pid {
	uint32_t pid; /* 0: the device's own samples */
	uint32_t n;   /* samples */
	uint64_t sum; /* of their SM %, each 0..100 */
};

/* The samples of one GPU in one interval. */
struct rt_busy_acc {
	uint32_t npid, dropped; /* dropped: processes past the table */
	struct rt_busy_pid pid[RT_BUSY_MAX_PIDS];
};

void rt_busy_reset(struct rt_busy_acc *a);
/* One sample of pid (0: the device) with SM % value (above 100: ignored). */
void rt_busy_add(struct rt_busy_acc *a, uint32_t pid, uint32_t value);
/* Add src's samples to dst (an interval no sample used folds into the next). */
void rt_busy_merge(struct rt_busy_acc *dst, const struct rt_busy_acc *src);
/* Whether the interval got any sample. */
int rt_busy_any(const struct rt_busy_acc *a);

/*
 * The tree's busy in hundredths of a percent of one GPU (0..10000), or -1
 * when the interval got no sample (shorter than NVML's period: the caller
 * carries the last figure). in_tree(pid, ctx) says whether a process is
 * the tree's; device samples count when tree_on says the tree is the only
 * one on the GPU.
 */
long rt_busy_tree_x100(const struct rt_busy_acc *a, int (*in_tree)(uint32_t pid, void *ctx),
                       void *ctx, int tree_alone);

#endif
