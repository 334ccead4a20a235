/*
 * gpu.c - the GPU source: NVIDIA through NVML (gpu_nvml.c, on its worker
 * thread) in the first slots, AMD through sysfs (gpu_amd.c) after them.
 */
#include <errno.h>
#include <stdlib.h>

#include "collect.h"
#include "gpu.h"

/* The source's own state (the collector holds it as `self`). */
struct gpu_state {
	struct rt_nvml *nvml; /* NULL: no NVIDIA GPUs */
	unsigned ngpu_nv;     /* GPU slots [0, ngpu_nv) are NVIDIA, the rest AMD */
	struct rt_amd amd;
};

static int gpu_open(struct rt_collector *c, void **self)
{
	(void)c;
	struct gpu_state *me = calloc(1, sizeof(*me));
	if (!me)
		return -ENOMEM;
	me->nvml = rt_nvml_open();
	*self = me;
	return 0;
}

static void gpu_close(struct rt_collector *c, void *self)
{
	(void)c;
	struct gpu_state *me = self;
	if (!me)
		return;
	rt_nvml_close(me->nvml);
	free(me);
}

static void gpu_read(struct rt_collector *c, void *self, int *changed)
{
	struct gpu_state *me = self;
	if (!me->nvml)
		return;
	/* bounded: 100 ms at most; the last sample reads the energy counter */
	rt_nvml_sample(me->nvml, 100, c->wall_ns / 1000u, c->force_slow);
	if (rt_nvml_count(me->nvml) != c->inv->ngpu)
		*changed = 1; /* a GPU appeared or fell off the bus */
}

static void gpu_inventory(struct rt_collector *c, void *self, struct rt_inventory *inv)
{
	(void)c;
	struct gpu_state *me = self;
	rt_nvml_inventory(me->nvml, inv);
	me->ngpu_nv = inv->ngpu;
	rt_amd_inventory(&me->amd, inv);
}

static void gpu_fill(struct rt_collector *c, void *self, struct rt_record *rec)
{
	(void)c;
	struct gpu_state *me = self;
	for (unsigned i = 0; i < rec->h->ngpu; i++) {
		if (i < me->ngpu_nv)
			rt_nvml_fill(me->nvml, i, &rec->gpu[i]);
		else
			rt_amd_fill(&me->amd, i - me->ngpu_nv, &rec->gpu[i]);
	}
}

void rt_gpu_tree(struct rt_collector *c, struct rt_proctree *tree, uint64_t mono_ns,
                 struct rt_record *rec)
{
	struct gpu_state *me = rt_collector_own(c, &rt_source_gpu);
	if (!me)
		return;
	rt_nvml_tree(me->nvml, tree, rec);
	rt_amd_tree(&me->amd, tree, mono_ns, rec->proc);
}

const struct rt_source rt_source_gpu = {.name = "gpu",
                                        .open = gpu_open,
                                        .read = gpu_read,
                                        .inventory = gpu_inventory,
                                        .fill = gpu_fill,
                                        .close = gpu_close};
