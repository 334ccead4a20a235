/*
 * gpu_busy.c - a tree's GPU busy over one interval (see gpu_busy.h).
 */
#include "gpu_busy.h"

#include <string.h>

void rt_busy_reset(struct rt_busy_acc *a)
{
	a->npid = 0;
	a->dropped = 0;
}

void rt_busy_add(struct rt_busy_acc *a, uint32_t pid, uint32_t value)
{
	if (value > 100)
		return; /* not a percentage: a broken or hostile driver */
	uint32_t k = 0;
	while (k < a->npid && a->pid[k].pid != pid)
		k++;
	if (k == a->npid) {
		if (k == RT_BUSY_MAX_PIDS) {
			a->dropped++;
			return;
		}
		a->pid[k].pid = pid;
		a->pid[k].n = 0;
		a->pid[k].sum = 0;
		a->npid++;
	}
	a->pid[k].n++;
	a->pid[k].sum += value;
}

void rt_busy_merge(struct rt_busy_acc *dst, const struct rt_busy_acc *src)
{
	for (uint32_t k = 0; k < src->npid; k++) {
		uint32_t j = 0;
		while (j < dst->npid && dst->pid[j].pid != src->pid[k].pid)
			j++;
		if (j == dst->npid) {
			if (j == RT_BUSY_MAX_PIDS) {
				dst->dropped++;
				continue;
			}
			dst->pid[j] = src->pid[k];
			dst->npid++;
			continue;
		}
		dst->pid[j].n += src->pid[k].n;
		dst->pid[j].sum += src->pid[k].sum;
	}
	dst->dropped += src->dropped;
}

int rt_busy_any(const struct rt_busy_acc *a)
{
	return a->npid > 0;
}

/* The device's own samples: the tree's busy when it is alone there. */
static long device_x100(const struct rt_busy_acc *a)
{
	for (uint32_t k = 0; k < a->npid; k++)
		if (a->pid[k].pid == 0 && a->pid[k].n)
			return (long)((a->pid[k].sum * 100 + a->pid[k].n / 2) / a->pid[k].n);
	return -1;
}

long rt_busy_tree_x100(const struct rt_busy_acc *a, int (*in_tree)(uint32_t pid, void *ctx),
                       void *ctx, int tree_alone)
{
	long dev = device_x100(a);
	if (dev >= 0)
		return tree_alone ? dev : 0;
	uint32_t periods = 0;
	uint64_t sum = 0;
	for (uint32_t k = 0; k < a->npid; k++) {
		if (a->pid[k].n > periods)
			periods = a->pid[k].n;
		if (a->pid[k].pid && in_tree(a->pid[k].pid, ctx))
			sum += a->pid[k].sum;
	}
	if (!periods)
		return -1;
	uint64_t x100 = (sum * 100 + periods / 2) / periods;
	return x100 > 10000 ? 10000 : (long)x100;
}
