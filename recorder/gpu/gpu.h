/*
 * gpu.h - the GPUs' source (gpu.c: NVML by dlopen, amdgpu's sysfs and
 * fdinfo), and what the sampler asks of it besides the table's phases.
 */
#ifndef RT_GPU_H
#define RT_GPU_H

#include <stdint.h>

#include "collect.h"
#include "proctree.h"

/* The GPUs' source, for a collector's table (rt_sampler_sources). */
extern const struct rt_source rt_source_gpu;

/* The GPU memory and use of the tree's processes (NVML and amdgpu
 * fdinfo) into rec, up to mono_ns. Cannot fail: what cannot be read is
 * left absent. */
void rt_gpu_tree(struct rt_collector *c, struct rt_proctree *tree, uint64_t mono_ns,
                 struct rt_record *rec);

#endif
