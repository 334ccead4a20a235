/*
 * h100_costs.h - what each NVML call costs on an NVIDIA H100 80GB HBM3,
 * driver 580.159.04 (µs of CPU, and of wall time where it blocks), as
 * measured on that machine with 30 calls each beside a busy process.
 *
 * One table for the fake NVML (which spends this CPU per call when
 * FAKE_NVML_COST=h100) and for rt-bench gpu (whose floor is the cost of
 * the calls the values need). GetSamples was measured at 2.7-3.0 ms: the
 * middle is used. GetFanSpeed answers NOT_SUPPORTED on that board.
 * GetMaxClockInfo was not measured: like the other clock calls, 2 µs.
 */
#ifndef RT_H100_COSTS_H
#define RT_H100_COSTS_H

#define H100_COSTS(X)                                                                              \
	X(count, "nvmlDeviceGetCount_v2", 2, 2)                                                    \
	X(handle, "nvmlDeviceGetHandleByIndex_v2", 2, 2)                                           \
	X(driver, "nvmlSystemGetDriverVersion", 2, 2)                                              \
	X(uuid, "nvmlDeviceGetUUID", 2, 2)                                                         \
	X(name, "nvmlDeviceGetName", 2, 2)                                                         \
	X(pci, "nvmlDeviceGetPciInfo_v3", 2, 2)                                                    \
	X(cores, "nvmlDeviceGetNumGpuCores", 124, 124)                                             \
	X(max_clock, "nvmlDeviceGetMaxClockInfo", 2, 2)                                            \
	X(util, "nvmlDeviceGetUtilizationRates", 2, 2)                                             \
	X(memory, "nvmlDeviceGetMemoryInfo", 8, 8)                                                 \
	X(temperature, "nvmlDeviceGetTemperature", 2, 2)                                           \
	X(power, "nvmlDeviceGetPowerUsage", 2, 2)                                                  \
	X(clock, "nvmlDeviceGetClockInfo", 2, 2)                                                   \
	X(throttle, "nvmlDeviceGetCurrentClocksEventReasons", 2, 2)                                \
	X(pcie, "nvmlDeviceGetPcieThroughput", 710, 20786)                                         \
	X(energy, "nvmlDeviceGetTotalEnergyConsumption", 3819, 3819)                               \
	X(fan, "nvmlDeviceGetFanSpeed", 124, 124)                                                  \
	X(compute, "nvmlDeviceGetComputeRunningProcesses_v3", 23, 23)                              \
	X(graphics, "nvmlDeviceGetGraphicsRunningProcesses_v3", 18, 18)                            \
	X(putil, "nvmlDeviceGetProcessUtilization", 1969, 1969)                                    \
	X(samples, "nvmlDeviceGetSamples", 2850, 2850)

/* The calls, by name: H100_CALL_count, ... */
enum h100_call {
#define H100_ENUM(id, fn, cpu, wall) H100_CALL_##id,
	H100_COSTS(H100_ENUM)
#undef H100_ENUM
	    H100_NCALLS
};

#endif
