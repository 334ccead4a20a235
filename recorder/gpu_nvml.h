/*
 * gpu_nvml.h - NVIDIA GPUs through NVML, loaded with dlopen at run time.
 *
 * libnvidia-ml.so.1 is never a build or link dependency: without it (or
 * with no device, or any failing call) there are simply no GPUs. The
 * testing aid RT_NVML_LIBRARY names another file to load instead (the test
 * suite builds a fake one).
 */
#ifndef RT_GPU_NVML_H
#define RT_GPU_NVML_H

#include "rt/inventory.h"
#include "rt/record.h"

struct rt_nvml;

/* Load and initialise NVML; NULL when there is no usable NVML. */
struct rt_nvml *rt_nvml_open(void);
void rt_nvml_close(struct rt_nvml *n);

/*
 * Ask the worker thread for a fresh query of the driver and wait at most
 * timeout_ms. Returns 1 when the data is from now; 0 when the driver did
 * not answer in time (a hung call never stops sampling: this sample's GPU
 * fields are null and the stuck query is not repeated until it returns).
 */
int rt_nvml_sample(struct rt_nvml *n, long timeout_ms);

/* Number of devices at the last query (for device-set changes). */
unsigned rt_nvml_count(struct rt_nvml *n);

/* Static identity of the devices into inv->gpu / inv->ngpu. */
void rt_nvml_inventory(struct rt_nvml *n, struct rt_inventory *inv);

/* Per-sample gauges of GPU slot i; rec->gpu[i].valid says which are set. */
void rt_nvml_fill(struct rt_nvml *n, unsigned i, struct rt_rec_gpu *out);

struct rt_proctree;

/*
 * GPU use of the tracked tree: VRAM of its processes in the running process
 * lists (compute and graphics; a pid in both counted once per device), SM
 * utilization from the process utilization samples newer than the last
 * call, and the number of GPUs the tree used. Fills out->gpu_*.
 */
void rt_nvml_tree(struct rt_nvml *n, struct rt_proctree *tree, struct rt_rec_process *out);

#endif
