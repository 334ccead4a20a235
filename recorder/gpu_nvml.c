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
#include "rt/common.h"
#include "rt/sysroot.h"

#include <dlfcn.h>
#include <unistd.h>
#include <pthread.h>
#include <time.h>
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
#define MAX_GPU_PROCS 64
#define NVML_CLOCK_GRAPHICS 0
#define NVML_CLOCK_MEM 2
#define NVML_PCIE_UTIL_TX_BYTES 0
#define NVML_PCIE_UTIL_RX_BYTES 1

/* What one query of the driver saw: written by the worker thread, read by
 * the sampling thread under the mutex. */
struct snapshot {
	unsigned ndev;
	struct rt_inv_gpu ident[RT_MAX_GPUS];
	struct rt_rec_gpu gauge[RT_MAX_GPUS];
	unsigned nproc[RT_MAX_GPUS];
	nvml_proc_t proc[RT_MAX_GPUS][2 * MAX_GPU_PROCS];
	unsigned nutil[RT_MAX_GPUS];
	nvml_putil_t util[RT_MAX_GPUS][MAX_GPU_PROCS];
};

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
	nvmlReturn_t (*pcie)(nvmlDevice_t, int, unsigned int *);
	nvmlReturn_t (*energy)(nvmlDevice_t, unsigned long long *);
	nvmlReturn_t (*fan)(nvmlDevice_t, unsigned int *);
	nvmlReturn_t (*throttle)(nvmlDevice_t, unsigned long long *);
	nvmlReturn_t (*pci)(nvmlDevice_t, nvml_pci_t *);
	nvmlReturn_t (*driver)(char *, unsigned int);
	nvmlReturn_t (*cores)(nvmlDevice_t, unsigned int *);
	nvmlReturn_t (*compute)(nvmlDevice_t, unsigned int *, nvml_proc_t *);
	nvmlReturn_t (*graphics)(nvmlDevice_t, unsigned int *, nvml_proc_t *);
	nvmlReturn_t (*putil)(nvmlDevice_t, nvml_putil_t *, unsigned int *, unsigned long long);

	/* worker side */
	unsigned long long last_ts[RT_MAX_GPUS]; /* newest utilization sample seen */
	struct snapshot work;
	/* shared, under mu */
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int want, busy, stop, have;
	unsigned long long done; /* queries completed */
	struct snapshot snap;
	/* sampling side */
	int fresh; /* snap is from this sample */
	unsigned long long stalls;
};

static void *sym(void *lib, const char *a, const char *b)
{
	void *p = dlsym(lib, a);
	return p || !b ? p : dlsym(lib, b);
}

/* NVML strings are NUL-terminated within the buffer it was given; make
 * sure, whatever a (fake or broken) library wrote. */
static void terminate(char *s, size_t cap)
{
	s[cap - 1] = '\0';
}

static unsigned procs(nvmlReturn_t (*fn)(nvmlDevice_t, unsigned int *, nvml_proc_t *),
                      nvmlDevice_t d, nvml_proc_t *out)
{
	unsigned int cnt = MAX_GPU_PROCS;
	if (!fn || fn(d, &cnt, out) != 0)
		return 0;
	return cnt > MAX_GPU_PROCS ? MAX_GPU_PROCS : cnt;
}

/* One pass over the driver: identity, gauges, process lists, fresh
 * utilization samples. Runs on the worker thread only. */
static void query(struct rt_nvml *n, struct snapshot *w)
{
	unsigned int c = 0;
	if (n->count(&c) != 0)
		c = 0;
	if (c > RT_MAX_GPUS)
		c = RT_MAX_GPUS;
	char driver[48] = "";
	if (n->driver && n->driver(driver, sizeof(driver)) == 0)
		terminate(driver, sizeof(driver));
	else
		driver[0] = '\0';
	w->ndev = 0;
	for (unsigned i = 0; i < c; i++) {
		nvmlDevice_t d;
		if (n->handle(i, &d) != 0)
			continue;
		unsigned k = w->ndev++;
		struct rt_inv_gpu *g = &w->ident[k];
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
		if (g->pci_bus_id[0])
			rt_strlcpy_n(g->host_id, sizeof(g->host_id), g->pci_bus_id,
			             strlen(g->pci_bus_id));
		else
			snprintf(g->host_id, sizeof(g->host_id), "%u", i);
		snprintf(g->driver_version, sizeof(g->driver_version), "%s", driver);
		unsigned int v;
		if (n->cores && n->cores(d, &v) == 0)
			g->core_count = v;
		struct rt_rec_gpu *o = &w->gauge[k];
		memset(o, 0, sizeof(*o));
		nvml_util_t u;
		nvml_memory_t m;
		if (n->util && n->util(d, &u) == 0 && u.gpu <= 100) {
			o->util_pct = u.gpu;
			o->valid |= RT_GPU_V_UTIL;
		}
		if (n->memory && n->memory(d, &m) == 0 && m.used <= m.total) {
			o->vram_used = m.used;
			o->vram_total = m.total;
			o->valid |= RT_GPU_V_MEM;
		}
		if (n->temperature && n->temperature(d, NVML_TEMPERATURE_GPU, &v) == 0 &&
		    v < 1000) {
			o->temp_c = (int32_t)v;
			o->valid |= RT_GPU_V_TEMP;
		}
		if (n->power && n->power(d, &v) == 0) {
			o->power_mw = v;
			o->valid |= RT_GPU_V_POWER;
		}
		if (n->clock && n->clock(d, NVML_CLOCK_GRAPHICS, &v) == 0) {
			o->clock_mhz = v;
			o->valid |= RT_GPU_V_CLOCK;
		}
		unsigned int rx, tx;
		if (n->pcie && n->pcie(d, NVML_PCIE_UTIL_RX_BYTES, &rx) == 0 &&
		    n->pcie(d, NVML_PCIE_UTIL_TX_BYTES, &tx) == 0) {
			o->pcie_rx_kbps = rx;
			o->pcie_tx_kbps = tx;
			o->valid |= RT_GPU_V_PCIE;
		}
		unsigned long long e;
		if (n->energy && n->energy(d, &e) == 0) {
			o->energy_mj = e;
			o->valid |= RT_GPU_V_ENERGY;
		}
		if (n->fan && n->fan(d, &v) == 0 && v <= 200) {
			o->fan_pct = v;
			o->valid |= RT_GPU_V_FAN;
		}
		if (n->clock && n->clock(d, NVML_CLOCK_MEM, &v) == 0) {
			o->mem_clock_mhz = v;
			o->valid |= RT_GPU_V_MEM_CLOCK;
		}
		if (n->throttle && n->throttle(d, &e) == 0) {
			o->throttle_reasons = e;
			o->valid |= RT_GPU_V_THROTTLE;
		}
		unsigned nc = procs(n->compute, d, w->proc[k]);
		w->nproc[k] = nc + procs(n->graphics, d, w->proc[k] + nc);
		/* only samples taken since the previous query: never stale ones */
		unsigned int cnt = MAX_GPU_PROCS;
		w->nutil[k] = 0;
		if (n->putil && n->putil(d, w->util[k], &cnt, n->last_ts[k]) == 0) {
			unsigned long long newest = n->last_ts[k];
			for (unsigned j = 0; j < cnt && j < MAX_GPU_PROCS; j++) {
				if (w->util[k][j].timeStamp <= n->last_ts[k])
					continue;
				if (w->util[k][j].timeStamp > newest)
					newest = w->util[k][j].timeStamp;
				w->util[k][w->nutil[k]++] = w->util[k][j];
			}
			n->last_ts[k] = newest;
		}
	}
}

static void *worker(void *arg)
{
	struct rt_nvml *n = arg;
	pthread_mutex_lock(&n->mu);
	for (;;) {
		while (!n->want && !n->stop)
			pthread_cond_wait(&n->cv, &n->mu);
		if (n->stop)
			break;
		n->want = 0;
		n->busy = 1;
		pthread_mutex_unlock(&n->mu);
		query(n, &n->work); /* may block in the driver: nobody waits for long */
		pthread_mutex_lock(&n->mu);
		n->snap = n->work;
		n->busy = 0;
		n->have = 1;
		n->done++;
		pthread_cond_broadcast(&n->cv);
	}
	pthread_mutex_unlock(&n->mu);
	return NULL;
}

/* Whether an NVIDIA driver is there to talk to: its /proc directory (also
 * seen in containers), its control device, or WSL's GPU device. Without
 * one, dlopen would only search every library directory in vain (a
 * millisecond of the wrapped command's start). */
static int nvidia_driver_present(void)
{
	char p[4200];
	return (rt_path(p, sizeof(p), RT_PROC, "driver/nvidia") == 0 && access(p, F_OK) == 0) ||
	       access("/dev/nvidiactl", F_OK) == 0 || access("/dev/dxg", F_OK) == 0;
}

struct rt_nvml *rt_nvml_open(void)
{
	const char *path = getenv("RT_NVML_LIBRARY");
	if (!(path && *path) && !nvidia_driver_present())
		return NULL;
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
	*(void **)&n->pcie = sym(lib, "nvmlDeviceGetPcieThroughput", NULL);
	*(void **)&n->energy = sym(lib, "nvmlDeviceGetTotalEnergyConsumption", NULL);
	*(void **)&n->fan = sym(lib, "nvmlDeviceGetFanSpeed", NULL);
	/* renamed "clocks event reasons" in newer drivers, same bits */
	*(void **)&n->throttle = sym(lib, "nvmlDeviceGetCurrentClocksEventReasons",
	                             "nvmlDeviceGetCurrentClocksThrottleReasons");
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
	pthread_mutex_init(&n->mu, NULL);
	pthread_cond_init(&n->cv, NULL);
	if (pthread_create(&n->th, NULL, worker, n) != 0) {
		if (n->shutdown)
			n->shutdown();
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
	pthread_mutex_lock(&n->mu);
	n->stop = 1;
	int busy = n->busy;
	pthread_cond_broadcast(&n->cv);
	pthread_mutex_unlock(&n->mu);
	if (busy) /* stuck in the driver: leave it, the process is exiting */
		return;
	pthread_join(n->th, NULL);
	if (n->shutdown)
		n->shutdown();
	dlclose(n->lib);
	free(n);
}

int rt_nvml_sample(struct rt_nvml *n, long timeout_ms)
{
	if (!n)
		return 0;
	struct timespec dl;
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_nsec += (timeout_ms % 1000) * 1000000L;
	dl.tv_sec += timeout_ms / 1000 + dl.tv_nsec / 1000000000L;
	dl.tv_nsec %= 1000000000L;
	pthread_mutex_lock(&n->mu);
	unsigned long long before = n->done;
	if (n->busy) { /* still stuck in the driver: do not wait again */
		n->fresh = 0;
		n->stalls++;
		pthread_mutex_unlock(&n->mu);
		return 0;
	}
	n->want = 1;
	pthread_cond_broadcast(&n->cv);
	while (n->done == before)
		if (pthread_cond_timedwait(&n->cv, &n->mu, &dl) != 0)
			break;
	n->fresh = n->done != before;
	if (!n->fresh)
		n->stalls++;
	pthread_mutex_unlock(&n->mu);
	return n->fresh;
}

/* snap is read under the mutex: a late query may land at any time (the
 * worker holds the mutex only to publish, never while in the driver). */
unsigned rt_nvml_count(struct rt_nvml *n)
{
	if (!n)
		return 0;
	pthread_mutex_lock(&n->mu);
	unsigned c = n->have ? n->snap.ndev : 0;
	pthread_mutex_unlock(&n->mu);
	return c;
}

void rt_nvml_inventory(struct rt_nvml *n, struct rt_inventory *inv)
{
	inv->ngpu = 0;
	if (!n)
		return;
	pthread_mutex_lock(&n->mu);
	if (n->have) {
		inv->ngpu = n->snap.ndev;
		memcpy(inv->gpu, n->snap.ident, n->snap.ndev * sizeof(inv->gpu[0]));
	}
	pthread_mutex_unlock(&n->mu);
}

void rt_nvml_fill(struct rt_nvml *n, unsigned i, struct rt_rec_gpu *out)
{
	memset(out, 0, sizeof(*out));
	/* a stalled driver gives null GPU fields for this sample, not a stall */
	if (!n || !n->fresh)
		return;
	pthread_mutex_lock(&n->mu);
	if (i < n->snap.ndev)
		*out = n->snap.gauge[i];
	pthread_mutex_unlock(&n->mu);
}

void rt_nvml_tree(struct rt_nvml *n, struct rt_proctree *tree, struct rt_rec_process *out)
{
	if (!n || !tree || !n->fresh)
		return;
	pthread_mutex_lock(&n->mu);
	uint64_t vram = 0;
	uint32_t util_x100 = 0, used = 0;
	for (unsigned i = 0; i < n->snap.ndev; i++) {
		const nvml_proc_t *list = n->snap.proc[i];
		unsigned np = n->snap.nproc[i];
		int on_gpu = 0;
		for (unsigned k = 0; k < np; k++) {
			int dup = 0; /* a pid in both lists (or twice) counts once */
			for (unsigned j = 0; j < k && !dup; j++)
				dup = list[j].pid == list[k].pid;
			if (dup || !rt_proctree_has(tree, (pid_t)list[k].pid))
				continue;
			on_gpu = 1;
			if (list[k].usedGpuMemory != ~0ull) /* NVML_VALUE_NOT_AVAILABLE */
				vram += list[k].usedGpuMemory;
		}
		unsigned util = 0;
		for (unsigned k = 0; k < n->snap.nutil[i]; k++)
			if (rt_proctree_has(tree, (pid_t)n->snap.util[i][k].pid) &&
			    n->snap.util[i][k].smUtil <= 100)
				util += n->snap.util[i][k].smUtil;
		if (util > 100)
			util = 100;
		util_x100 += util * 100;
		used += on_gpu || util > 0;
	}
	pthread_mutex_unlock(&n->mu);
	out->gpu_vram_bytes = vram;
	out->gpu_util_pct_x100 = util_x100;
	out->gpu_count = used;
}
