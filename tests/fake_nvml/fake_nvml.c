/*
 * fake_nvml.c - a stand-in libnvidia-ml.so for tests (no GPU here).
 *
 * Implements the NVML entry points rt uses. Scripted by the environment:
 *   FAKE_NVML_GPUS   number of devices (default 0)
 *   FAKE_NVML_FAIL   "init" (nvmlInit fails) or "temp" (temperature fails)
 *   FAKE_NVML_HANG   N: from the Nth query on, a call hangs for 3 s
 * Values are deterministic: device i reports util (20 i + 5 s) % 101,
 * (i+1) GiB + s MiB of 80 GiB used, 40+i C, 100+i W, 1400+10 i MHz, where
 * s counts the samples (calls for device 0's utilization).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
	unsigned int gpu, memory;
} util_t;
typedef struct {
	unsigned long long total, free, used;
} mem_t;
typedef struct {
	char busIdLegacy[16];
	unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
	char busId[32];
} pci_t;

static unsigned step;
static long dev_index(void *d)
{
	return (long)(d)-1;
}
static const char *fail(void)
{
	const char *f = getenv("FAKE_NVML_FAIL");
	return f ? f : "";
}
static unsigned ngpu(void)
{
	const char *g = getenv("FAKE_NVML_GPUS");
	return g ? (unsigned)atoi(g) : 0;
}

int nvmlInit_v2(void)
{
	return strcmp(fail(), "init") ? 0 : 999;
}
int nvmlShutdown(void)
{
	return 0;
}
int nvmlDeviceGetCount_v2(unsigned int *c)
{
	*c = ngpu();
	return 0;
}
int nvmlDeviceGetHandleByIndex_v2(unsigned int i, void **d)
{
	if (i >= ngpu())
		return 2; /* NVML_ERROR_INVALID_ARGUMENT */
	*d = (void *)(long)(i + 1);
	return 0;
}
int nvmlDeviceGetName(void *d, char *name, unsigned int len)
{
	snprintf(name, len, "Fake GPU H%ld", dev_index(d));
	return 0;
}
int nvmlDeviceGetUUID(void *d, char *uuid, unsigned int len)
{
	snprintf(uuid, len, "GPU-fa4e0000-0000-0000-0000-00000000000%ld", dev_index(d));
	return 0;
}
int nvmlDeviceGetUtilizationRates(void *d, util_t *u)
{
	long i = dev_index(d);
	if (i == 0)
		step++;
	/* FAKE_NVML_HANG=N: from the Nth query on, the driver hangs for 3 s */
	const char *h = getenv("FAKE_NVML_HANG");
	if (h && step >= (unsigned)atoi(h)) {
		struct timespec ts = {3, 0};
		nanosleep(&ts, NULL);
	}
	u->gpu = (unsigned)((20 * i + 5 * step) % 101);
	u->memory = 0;
	return 0;
}
int nvmlDeviceGetMemoryInfo(void *d, mem_t *m)
{
	long i = dev_index(d);
	m->total = 80ull << 30;
	m->used = ((unsigned long long)(i + 1) << 30) + ((unsigned long long)step << 20);
	m->free = m->total - m->used;
	return 0;
}
int nvmlDeviceGetTemperature(void *d, int sensor, unsigned int *t)
{
	(void)sensor;
	if (!strcmp(fail(), "temp"))
		return 3; /* NVML_ERROR_NOT_SUPPORTED */
	*t = (unsigned)(40 + dev_index(d));
	return 0;
}
int nvmlDeviceGetPowerUsage(void *d, unsigned int *mw)
{
	*mw = (unsigned)(100000 + 1000 * dev_index(d));
	return 0;
}
int nvmlDeviceGetClockInfo(void *d, int type, unsigned int *mhz)
{
	/* graphics 0, memory 2 */
	*mhz = (unsigned)((type == 2 ? 5000 : 1400) + 10 * dev_index(d));
	return 0;
}
/* PCIe KB/s: rx (counter 1) 2000 + 100 per GPU, tx (0) half of it */
int nvmlDeviceGetPcieThroughput(void *d, int counter, unsigned int *kbps)
{
	unsigned rx = (unsigned)(2000 + 100 * dev_index(d));
	*kbps = counter == 1 ? rx : rx / 2;
	return 0;
}
/* energy in mJ grows 150 J per call (about one per sample) */
int nvmlDeviceGetTotalEnergyConsumption(void *d, unsigned long long *mj)
{
	static unsigned long long e[64];
	long i = dev_index(d) & 63;
	e[i] += 150000;
	*mj = 1000000ull + e[i];
	return 0;
}
int nvmlDeviceGetFanSpeed(void *d, unsigned int *pct)
{
	*pct = (unsigned)(30 + dev_index(d));
	return 0;
}
/* GPU 0: software power cap; others: hardware slowdown and thermal */
int nvmlDeviceGetCurrentClocksThrottleReasons(void *d, unsigned long long *r)
{
	*r = dev_index(d) == 0 ? 0x4ull : 0x48ull;
	return 0;
}
int nvmlDeviceGetPciInfo_v3(void *d, pci_t *p)
{
	memset(p, 0, sizeof(*p));
	snprintf(p->busId, sizeof(p->busId), "00000000:%02lX:00.0", 0x10 + dev_index(d));
	return 0;
}
int nvmlSystemGetDriverVersion(char *v, unsigned int len)
{
	snprintf(v, len, "550.54.15");
	return 0;
}
int nvmlDeviceGetNumGpuCores(void *d, unsigned int *c)
{
	(void)d;
	*c = 16896;
	return 0;
}

/* Processes: FAKE_NVML_PIDS="pid:device:vram_mib:sm_pct,..." are running
 * on those devices; every one is in the compute list and the first one of
 * each device also in the graphics list (a duplicate rt must count once). */
typedef struct {
	unsigned int pid;
	unsigned long long usedGpuMemory;
	unsigned int gpuInstanceId, computeInstanceId;
} proc_t;
typedef struct {
	unsigned int pid;
	unsigned long long timeStamp;
	unsigned int smUtil, memUtil, encUtil, decUtil;
} putil_t;

struct fp {
	unsigned pid, dev, mib, sm;
};

static int fake_procs(struct fp *out, int cap)
{
	const char *e = getenv("FAKE_NVML_PIDS");
	int n = 0;
	while (e && *e && n < cap) {
		struct fp p;
		if (sscanf(e, "%u:%u:%u:%u", &p.pid, &p.dev, &p.mib, &p.sm) == 4)
			out[n++] = p;
		e = strchr(e, ',');
		if (e)
			e++;
	}
	return n;
}

static int list(void *d, unsigned int *count, proc_t *infos, int graphics)
{
	struct fp p[64];
	int n = fake_procs(p, 64), k = 0;
	for (int i = 0; i < n; i++) {
		if ((long)p[i].dev != dev_index(d))
			continue;
		if (graphics && k > 0)
			break;
		if ((unsigned)k >= *count)
			return 7; /* NVML_ERROR_INSUFFICIENT_SIZE */
		infos[k].pid = p[i].pid;
		infos[k].usedGpuMemory = (unsigned long long)p[i].mib << 20;
		infos[k].gpuInstanceId = infos[k].computeInstanceId = 0;
		k++;
	}
	*count = (unsigned)k;
	return 0;
}

int nvmlDeviceGetComputeRunningProcesses_v3(void *d, unsigned int *c, proc_t *p)
{
	return list(d, c, p, 0);
}

int nvmlDeviceGetGraphicsRunningProcesses_v3(void *d, unsigned int *c, proc_t *p)
{
	return list(d, c, p, 1);
}

int nvmlDeviceGetProcessUtilization(void *d, putil_t *u, unsigned int *count,
                                    unsigned long long last_seen)
{
	struct fp p[64];
	int n = fake_procs(p, 64);
	unsigned k = 0;
	for (int i = 0; i < n; i++) {
		if ((long)p[i].dev != dev_index(d))
			continue;
		/* one sample per process per step; older ones are stale */
		unsigned long long ts = (unsigned long long)step * 1000000ull + p[i].pid;
		if (ts <= last_seen || k >= *count)
			continue;
		u[k].pid = p[i].pid;
		u[k].timeStamp = ts;
		u[k].smUtil = p[i].sm;
		u[k].memUtil = u[k].encUtil = u[k].decUtil = 0;
		k++;
	}
	*count = k;
	return 0;
}
