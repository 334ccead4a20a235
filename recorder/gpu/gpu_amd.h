/*
 * gpu_amd.h - AMD GPUs through sysfs/DRM (amdgpu), system and per process.
 *
 * Devices: /sys/class/drm/card<N>/device bound to amdgpu (skipped entirely
 * without /sys/module/amdgpu): busy %, VRAM used/total, hwmon temperature,
 * power and clock. Processes: /proc/<pid>/fdinfo of the tracked tree
 * (drm-memory-vram, drm-engine-gfx), each DRM client counted once by
 * drm-client-id however many descriptors point at it.
 */
#ifndef RT_GPU_AMD_H
#define RT_GPU_AMD_H

#include <stdint.h>
#include <sys/types.h>

#include "rt/inventory.h"
#include "rt/record.h"

#define RT_AMD_MAX_CLIENTS 256

struct rt_amd {
	unsigned n;
	char dev[RT_MAX_GPUS][64];    /* "card0" */
	char hwmon[RT_MAX_GPUS][128]; /* "class/drm/card0/device/hwmon/hwmon3" or "" */
	/* per-process engine time, by DRM client id */
	uint64_t client[RT_AMD_MAX_CLIENTS], engine_ns[RT_AMD_MAX_CLIENTS];
	unsigned nclients;
	uint64_t last_mono_ns;
};

/* Find the amdgpu cards and append their identity to inv (after index
 * inv->ngpu); returns how many were added. */
unsigned rt_amd_inventory(struct rt_amd *a, struct rt_inventory *inv);

/* Gauges of AMD card k (its slot in the record is given by the caller). */
void rt_amd_fill(struct rt_amd *a, unsigned k, struct rt_rec_gpu *out);

/* Parse one fdinfo file (hostile text): whether it is an amdgpu client,
 * its client id, VRAM bytes and gfx engine ns. */
int rt_amd_parse_fdinfo(const char *buf, size_t len, uint64_t *client, uint64_t *vram_bytes,
                        uint64_t *engine_ns);

struct rt_proctree;

/* Add the tracked tree's AMD GPU use to out->gpu_*: VRAM and gfx engine
 * time of its DRM clients (each client once), engine time over the time
 * since the previous call as a share of one GPU. */
void rt_amd_tree(struct rt_amd *a, struct rt_proctree *tree, uint64_t mono_ns,
                 struct rt_rec_process *out);

#endif
