/*
 * gpu_nvml.c - NVML through dlopen (see gpu_nvml.h).
 *
 * Only the entry points rt uses are resolved; a missing optional one just
 * leaves its field null. Structures are declared here with NVML's layouts
 * (there is no nvml.h at build time).
 */
#define _GNU_SOURCE
#include "gpu_nvml.h"

#include "proctree.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int nvmlReturn_t; /* 0: NVML_SUCCESS */
typedef void *nvmlDevice_t;
typedef struct {
	unsigned int gpu, memory;
} nvml_util_t;
typedef struct {
	unsigned long long total, free, used;
} nvml_memory_t;
typedef struct {
	char busIdLegacy[16];
	unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
	char busId[32];
} nvml_pci_t;

typedef struct {
	unsigned int pid;
	unsigned long long usedGpuMemory;
	unsigned int gpuInstanceId, computeInstanceId;
} nvml_proc_t; /* nvmlProcessInfo_v2/v3 */
typedef struct {
	unsigned int pid;
	unsigned long long timeStamp; /* µs */
	unsigned int smUtil, memUtil, encUtil, decUtil;
} nvml_putil_t;

#define NVML_TEMPERATURE_GPU 0
#define NVML_ERROR_INSUFFICIENT_SIZE 7
#define MAX_GPU_PROCS 256
#define NVML_CLOCK_GRAPHICS 0

struct rt_nvml {
	void *lib;
	nvmlReturn_t (*init)(void);
	nvmlReturn_t (*shutdown)(void);
	nvmlReturn_t (*count)(unsigned int *);
	nvmlReturn_t (*handle)(unsigned int, nvmlDevice_t *);
	nvmlReturn_t (*name)(nvmlDevice_t, char *, unsigned int);
	nvmlReturn_t (*uuid)(nvmlDevice_t, char *, unsigned int);
	nvmlReturn_t (*util)(nvmlDevice_t, nvml_util_t *);
	nvmlReturn_t (*memory)(nvmlDevice_t, nvml_memory_t *);
	nvmlReturn_t (*temperature)(nvmlDevice_t, int, unsigned int *);
	nvmlReturn_t (*power)(nvmlDevice_t, unsigned int *);
	nvmlReturn_t (*clock)(nvmlDevice_t, int, unsigned int *);
	nvmlReturn_t (*pci)(nvmlDevice_t, nvml_pci_t *);
	nvmlReturn_t (*driver)(char *, unsigned int);
	nvmlReturn_t (*cores)(nvmlDevice_t, unsigned int *);
	nvmlReturn_t (*compute)(nvmlDevice_t, unsigned int *, nvml_proc_t *);
	nvmlReturn_t (*graphics)(nvmlDevice_t, unsigned int *, nvml_proc_t *);
	nvmlReturn_t (*putil)(nvmlDevice_t, nvml_putil_t *, unsigned int *, unsigned long long);
	unsigned long long last_ts[RT_MAX_GPUS]; /* newest utilization sample seen */
	nvmlDevice_t dev[RT_MAX_GPUS];
	unsigned ndev;
};

static void *sym(void *lib, const char *a, const char *b)
{
	void *p = dlsym(lib, a);
	return p || !b ? p : dlsym(lib, b);
}

struct rt_nvml *rt_nvml_open(void)
{
	const char *path = getenv("RT_NVML_LIBRARY");
	void *lib = dlopen(path && *path ? path : "libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!lib)
		return NULL; /* no driver: no GPUs, not an error */
	struct rt_nvml *n = calloc(1, sizeof(*n));
	if (!n) {
		dlclose(lib);
		return NULL;
	}
	n->lib = lib;
	*(void **)&n->init = sym(lib, "nvmlInit_v2", "nvmlInit");
	*(void **)&n->shutdown = sym(lib, "nvmlShutdown", NULL);
	*(void **)&n->count = sym(lib, "nvmlDeviceGetCount_v2", "nvmlDeviceGetCount");
	*(void **)&n->handle =
	    sym(lib, "nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex");
	*(void **)&n->name = sym(lib, "nvmlDeviceGetName", NULL);
	*(void **)&n->uuid = sym(lib, "nvmlDeviceGetUUID", NULL);
	*(void **)&n->util = sym(lib, "nvmlDeviceGetUtilizationRates", NULL);
	*(void **)&n->memory = sym(lib, "nvmlDeviceGetMemoryInfo", NULL);
	*(void **)&n->temperature = sym(lib, "nvmlDeviceGetTemperature", NULL);
	*(void **)&n->power = sym(lib, "nvmlDeviceGetPowerUsage", NULL);
	*(void **)&n->clock = sym(lib, "nvmlDeviceGetClockInfo", NULL);
	*(void **)&n->pci = sym(lib, "nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetPciInfo");
	*(void **)&n->driver = sym(lib, "nvmlSystemGetDriverVersion", NULL);
	*(void **)&n->cores = sym(lib, "nvmlDeviceGetNumGpuCores", NULL);
	*(void **)&n->compute = sym(lib, "nvmlDeviceGetComputeRunningProcesses_v3",
	                            "nvmlDeviceGetComputeRunningProcesses_v2");
	*(void **)&n->graphics = sym(lib, "nvmlDeviceGetGraphicsRunningProcesses_v3",
	                             "nvmlDeviceGetGraphicsRunningProcesses_v2");
	*(void **)&n->putil = sym(lib, "nvmlDeviceGetProcessUtilization", NULL);
	if (!n->init || !n->count || !n->handle || n->init() != 0) {
		dlclose(lib);
		free(n);
		return NULL;
	}
	return n;
}

void rt_nvml_close(struct rt_nvml *n)
{
	if (!n)
		return;
	if (n->shutdown)
		n->shutdown();
	dlclose(n->lib);
	free(n);
}

unsigned rt_nvml_count(struct rt_nvml *n)
{
	unsigned int c = 0;
	if (!n || n->count(&c) != 0)
		return 0;
	return c > RT_MAX_GPUS ? RT_MAX_GPUS : c;
}

/* NVML strings are NUL-terminated within the buffer it was given; make
 * sure, whatever a (fake or broken) library wrote. */
static void terminate(char *s, size_t cap)
{
	s[cap - 1] = '\0';
}

void rt_nvml_inventory(struct rt_nvml *n, struct rt_inventory *inv)
{
	inv->ngpu = 0;
	if (!n)
		return;
	unsigned c = rt_nvml_count(n);
	char driver[48] = "";
	if (n->driver && n->driver(driver, sizeof(driver)) == 0)
		terminate(driver, sizeof(driver));
	else
		driver[0] = '\0';
	for (unsigned i = 0; i < c; i++) {
		nvmlDevice_t d;
		if (n->handle(i, &d) != 0)
			continue;
		struct rt_inv_gpu *g = &inv->gpu[inv->ngpu];
		memset(g, 0, sizeof(*g));
		if (n->uuid && n->uuid(d, g->uuid, sizeof(g->uuid)) == 0)
			terminate(g->uuid, sizeof(g->uuid));
		else
			g->uuid[0] = '\0';
		if (n->name && n->name(d, g->name, sizeof(g->name)) == 0)
			terminate(g->name, sizeof(g->name));
		else
			g->name[0] = '\0';
		nvml_pci_t pci;
		memset(&pci, 0, sizeof(pci));
		if (n->pci && n->pci(d, &pci) == 0) {
			terminate(pci.busId, sizeof(pci.busId));
			snprintf(g->pci_bus_id, sizeof(g->pci_bus_id), "%s", pci.busId);
		}
		snprintf(g->host_id, sizeof(g->host_id), "%s",
		         g->pci_bus_id[0] ? g->pci_bus_id : "");
		if (!g->host_id[0])
			snprintf(g->host_id, sizeof(g->host_id), "%u", i);
		snprintf(g->driver_version, sizeof(g->driver_version), "%s", driver);
		unsigned int cores;
		if (n->cores && n->cores(d, &cores) == 0)
			g->core_count = cores;
		n->dev[inv->ngpu] = d;
		inv->ngpu++;
	}
	n->ndev = inv->ngpu;
}

void rt_nvml_fill(struct rt_nvml *n, unsigned i, struct rt_rec_gpu *out)
{
	memset(out, 0, sizeof(*out));
	if (!n || i >= n->ndev)
		return;
	nvmlDevice_t d = n->dev[i];
	nvml_util_t u;
	nvml_memory_t m;
	unsigned int v;
	if (n->util && n->util(d, &u) == 0 && u.gpu <= 100) {
		out->util_pct = u.gpu;
		out->valid |= RT_GPU_V_UTIL;
	}
	if (n->memory && n->memory(d, &m) == 0 && m.used <= m.total) {
		out->vram_used = m.used;
		out->vram_total = m.total;
		out->valid |= RT_GPU_V_MEM;
	}
	if (n->temperature && n->temperature(d, NVML_TEMPERATURE_GPU, &v) == 0 && v < 1000) {
		out->temp_c = (int32_t)v;
		out->valid |= RT_GPU_V_TEMP;
	}
	if (n->power && n->power(d, &v) == 0) {
		out->power_mw = v;
		out->valid |= RT_GPU_V_POWER;
	}
	if (n->clock && n->clock(d, NVML_CLOCK_GRAPHICS, &v) == 0) {
		out->clock_mhz = v;
		out->valid |= RT_GPU_V_CLOCK;
	}
}

/* Running processes of one list; count 0 on any failure. */
static unsigned procs(nvmlReturn_t (*fn)(nvmlDevice_t, unsigned int *, nvml_proc_t *),
                      nvmlDevice_t d, nvml_proc_t *out)
{
	unsigned int cnt = MAX_GPU_PROCS;
	if (!fn || fn(d, &cnt, out) != 0)
		return 0;
	return cnt > MAX_GPU_PROCS ? MAX_GPU_PROCS : cnt;
}

void rt_nvml_tree(struct rt_nvml *n, struct rt_proctree *tree, struct rt_rec_process *out)
{
	if (!n || !tree)
		return;
	static nvml_proc_t list[2 * MAX_GPU_PROCS];
	static nvml_putil_t samples[MAX_GPU_PROCS];
	uint64_t vram = 0;
	uint32_t util_x100 = 0, used = 0;
	for (unsigned i = 0; i < n->ndev; i++) {
		nvmlDevice_t d = n->dev[i];
		unsigned nc = procs(n->compute, d, list);
		unsigned ng = procs(n->graphics, d, list + nc);
		int on_gpu = 0;
		for (unsigned k = 0; k < nc + ng; k++) {
			int dup = 0; /* a pid in both lists (or twice) counts once */
			for (unsigned j = 0; j < k && !dup; j++)
				dup = list[j].pid == list[k].pid;
			if (dup || !rt_proctree_has(tree, (pid_t)list[k].pid))
				continue;
			on_gpu = 1;
			if (list[k].usedGpuMemory != ~0ull) /* NVML_VALUE_NOT_AVAILABLE */
				vram += list[k].usedGpuMemory;
		}
		/* only samples taken since the previous call: never stale ones */
		unsigned int cnt = MAX_GPU_PROCS;
		unsigned long long newest = n->last_ts[i];
		unsigned util = 0;
		if (n->putil && n->putil(d, samples, &cnt, n->last_ts[i]) == 0) {
			if (cnt > MAX_GPU_PROCS)
				cnt = MAX_GPU_PROCS;
			for (unsigned k = 0; k < cnt; k++) {
				if (samples[k].timeStamp <= n->last_ts[i])
					continue;
				if (samples[k].timeStamp > newest)
					newest = samples[k].timeStamp;
				if (rt_proctree_has(tree, (pid_t)samples[k].pid) &&
				    samples[k].smUtil <= 100)
					util += samples[k].smUtil;
			}
		}
		n->last_ts[i] = newest;
		if (util > 100)
			util = 100;
		util_x100 += util * 100;
		used += on_gpu || util > 0;
	}
	out->gpu_vram_bytes = vram;
	out->gpu_util_pct_x100 = util_x100;
	out->gpu_count = used;
}
