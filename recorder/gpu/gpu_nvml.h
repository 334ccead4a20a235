/*
 * gpu_nvml.h - NVIDIA GPUs through NVML, loaded with dlopen at run time.
 *
 * libnvidia-ml.so.1 is never a build or link dependency: without it (or
 * with no device, or any failing call) there are simply no GPUs. The
 * testing aid RT_NVML_LIBRARY names another file to load instead (the test
 * suite builds a fake one that keeps the real driver's contract).
 *
 * What a sample costs (an H100's figures: docs/cli.md "GPUs"): identity
 * (name, UUID, PCI, cores, driver) is read once and again when the device
 * count changes; a call a board does not support is asked once; the
 * energy counter (3.8 ms) at the first sample, every 10 minutes and at
 * the last; PCIe throughput (20 ms of blocking per direction) never. The
 * tree's busy costs nothing while it holds no GPU, one device-samples call
 * a period while it is alone on its GPUs, and one process-samples call a
 * period (~200 ms, polled between samples) on a GPU it shares.
 */
#ifndef RT_GPU_NVML_H
#define RT_GPU_NVML_H

#include <stdint.h>

#include "rt/inventory.h"
#include "rt/record.h"

struct rt_nvml;

/* Load and initialise NVML; NULL when there is no usable NVML. */
struct rt_nvml *rt_nvml_open(void);
void rt_nvml_close(struct rt_nvml *n);

/*
 * Ask the worker thread for a fresh query of the driver and wait at most
 * timeout_ms. cut_us is the sample's time (CLOCK_REALTIME µs): NVML's
 * utilization samples up to it belong to this sample, later ones to the
 * next. final: the run's last sample (the energy counter is read). Returns
 * 1 when the data is from now; 0 when the driver did not answer in time (a
 * hung call never stops sampling: this sample's GPU fields are null and
 * the stuck query is not repeated until it returns).
 */
int rt_nvml_sample(struct rt_nvml *n, long timeout_ms, uint64_t cut_us, int final);

/* Number of devices at the last query (for device-set changes). */
unsigned rt_nvml_count(struct rt_nvml *n);

/* Static identity of the devices into inv->gpu / inv->ngpu. */
void rt_nvml_inventory(struct rt_nvml *n, struct rt_inventory *inv);

/* Per-sample gauges of GPU slot i; rec->gpu[i].valid says which are set. */
void rt_nvml_fill(struct rt_nvml *n, unsigned i, struct rt_rec_gpu *out);

struct rt_proctree;

/*
 * GPU use of the tracked tree, per GPU into rec->gpu[i].job_* (valid bit
 * RT_GPU_V_JOB) and summed into rec->proc->gpu_*: VRAM of its processes
 * in the running process lists (compute and graphics; a pid in both
 * counted once per device), its SM busy over the interval (gpu_busy.h)
 * and the number of GPUs it used. Also tells the worker which listed
 * processes are the tree's, for the next query's choice of source.
 */
void rt_nvml_tree(struct rt_nvml *n, struct rt_proctree *tree, struct rt_record *rec);

#endif
