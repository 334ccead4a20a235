/*
 * gpu_nvml.h - rt-bench gpu (gpu_nvml.c): NVML's cost per sample on the
 * fake H100 beside the floor of the calls the values need.
 */
#ifndef RT_BENCH_GPU_H
#define RT_BENCH_GPU_H

/* rec_bin records; fake is libfake-nvml.so; seconds of the longer runs
 * (each shape runs 2 x 2 times). RT_BENCH_RECORDER names another
 * recorder to measure (an older build). Returns 0, or 1 when a run failed. */
int rt_bench_gpu(const char *rec_bin, const char *fake, int seconds);

#endif
