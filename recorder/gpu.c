/*
 * gpu.c - the GPU source: NVIDIA through NVML (gpu_nvml.c, on its worker
 * thread) in the first slots, AMD through sysfs (gpu_amd.c) after them.
 */
#include "collect.h"

static int gpu_open(struct rt_collector *c, void **self)
{
	(void)self;
	c->nvml = rt_nvml_open();
	return 0;
}

static void gpu_close(struct rt_collector *c, void *self)
{
	(void)self;
	rt_nvml_close(c->nvml);
	c->nvml = NULL;
}

static void gpu_read(struct rt_collector *c, void *self, int *changed)
{
	(void)self;
	if (!c->nvml)
		return;
	rt_nvml_sample(c->nvml, 100); /* bounded: 100 ms at most */
	if (rt_nvml_count(c->nvml) != c->inv->ngpu)
		*changed = 1; /* a GPU appeared or fell off the bus */
}

static void gpu_inventory(struct rt_collector *c, void *self, struct rt_inventory *inv)
{
	(void)self;
	rt_nvml_inventory(c->nvml, inv);
	c->ngpu_nv = inv->ngpu;
	rt_amd_inventory(&c->amd, inv);
}

static void gpu_fill(struct rt_collector *c, void *self, struct rt_record *rec)
{
	(void)self;
	for (unsigned i = 0; i < rec->h->ngpu; i++) {
		if (i < c->ngpu_nv)
			rt_nvml_fill(c->nvml, i, &rec->gpu[i]);
		else
			rt_amd_fill(&c->amd, i - c->ngpu_nv, &rec->gpu[i]);
	}
}

const struct rt_source rt_source_gpu = {"gpu",         gpu_open, gpu_read,
                                        gpu_inventory, gpu_fill, gpu_close};
