/*
 * fake_nvml.c - a stand-in libnvidia-ml.so for tests (no GPU here).
 *
 * Implements the NVML entry points rt uses, keeping the contract a real
 * driver showed (580.159.04 on an H100, docs/cli.md "GPUs"):
 *   - nvmlDeviceGetProcessUtilization wants a buffer of at least 72 entries
 *     (a NULL or smaller one: NVML_ERROR_INSUFFICIENT_SIZE, count 72); it
 *     gives one sample per process, the newest after lastSeen, or
 *     NVML_ERROR_NOT_FOUND (count untouched) when nothing is newer;
 *   - processes and the device are sampled every 200 ms, on a grid of
 *     CLOCK_REALTIME µs (FAKE_NVML_PHASE_MS past each 200 ms, default 37);
 *   - nvmlDeviceGetSamples(NVML_GPU_UTILIZATION_SAMPLES) gives every device
 *     sample since lastSeen (the last 71 are kept), NULL buffer: the count;
 *   - the running process lists answer INSUFFICIENT_SIZE with the count.
 *
 * Scripted by the environment:
 *   FAKE_NVML_GPUS   number of devices (default 0)
 *   FAKE_NVML_FAIL   "init" (nvmlInit fails) or "temp" (temperature fails)
 *   FAKE_NVML_HANG   N: from the Nth query on, a call hangs for 3 s
 *   FAKE_NVML_PIDS   "pid:dev:vram_mib:sm[:on_ms:period_ms],...": processes
 *                    on devices while they live; SM % sm, or sm during the
 *                    first on_ms of every period_ms (of epoch ms) and 0 else
 *   FAKE_NVML_PIDS_FILE  the same list, one or more per line, re-read each
 *                    call (a job adds itself)
 *   FAKE_NVML_COST   "h100": each call spends the CPU (and wall) time it
 *                    took on an H100 (h100_costs.h), GetFanSpeed is not
 *                    supported there
 *   FAKE_NVML_STATS  a file: at nvmlShutdown, "name calls" per entry point
 * Gauges are deterministic: device i reports util (20 i + 5 s) % 101,
 * (i+1) GiB + s MiB of 80 GiB used, 40+i C, 100+i W, 1400+10 i MHz, where
 * s counts the samples (calls for device 0's utilization). A device
 * sample is the sum of its processes' SM % (at most 100).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "h100_costs.h"

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
typedef struct {
	unsigned long long timeStamp;
	unsigned long long value; /* nvmlValue_t: a union of 8 bytes */
} sample_t;

#define OK 0
#define E_NOT_SUPPORTED 3
#define E_NOT_FOUND 6
#define E_INSUFFICIENT_SIZE 7
#define PUTIL_MIN 72
#define GRID_US 200000ull
#define KEPT 71

static unsigned step;
static unsigned long calls[H100_NCALLS];
static const char *const call_name[] = {
#define H100_NAME(id, fn, cpu, wall) fn,
    H100_COSTS(H100_NAME)
#undef H100_NAME
};
static const unsigned call_cpu[] = {
#define H100_CPU(id, fn, cpu, wall) cpu,
    H100_COSTS(H100_CPU)
#undef H100_CPU
};
static const unsigned call_wall[] = {
#define H100_WALL(id, fn, cpu, wall) wall,
    H100_COSTS(H100_WALL)
#undef H100_WALL
};

static const char *env(const char *k)
{
	const char *v = getenv(k);
	return v ? v : "";
}
static int h100(void)
{
	return !strcmp(env("FAKE_NVML_COST"), "h100");
}

static double cpu_us(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

/* Count the call; with FAKE_NVML_COST=h100 spend its CPU, then wait out
 * the rest of its wall time (PCIe throughput samples 20 ms). */
static void cost(enum h100_call c)
{
	calls[c]++;
	if (!h100())
		return;
	double end = cpu_us() + call_cpu[c];
	while (cpu_us() < end)
		;
	if (call_wall[c] > call_cpu[c] + 1000) {
		long ns = (long)(call_wall[c] - call_cpu[c]) * 1000L;
		struct timespec ts = {ns / 1000000000L, ns % 1000000000L};
		nanosleep(&ts, NULL);
	}
}

static unsigned long long now_us(void)
{
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	return (unsigned long long)t.tv_sec * 1000000ull + (unsigned long long)t.tv_nsec / 1000ull;
}

/* The newest sample time at or before t on the 200 ms grid. */
static unsigned long long grid_at(unsigned long long t)
{
	unsigned long long phase = (unsigned long long)atoi(env("FAKE_NVML_PHASE_MS")) * 1000ull;
	if (!*env("FAKE_NVML_PHASE_MS"))
		phase = 37000ull;
	phase %= GRID_US;
	return t < phase ? 0 : t - ((t - phase) % GRID_US);
}

static long dev_index(void *d)
{
	return (long)(d)-1;
}
static unsigned ngpu(void)
{
	return (unsigned)atoi(env("FAKE_NVML_GPUS"));
}

/* ---- the processes ---- */

/* A process as the fake knows it: listed while it lives; its samples are
 * kept from when the fake first saw it to when it last saw it alive (the
 * driver's history outlives the process). */
struct fp {
	unsigned pid, dev, mib, sm, on_ms, period_ms;
	int alive;
	unsigned long long first_us, last_us;
};

/* When a process started (µs since the epoch), from /proc; 0: unknown. */
static unsigned long long started_us(unsigned pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
	if (f)
		fclose(f);
	buf[n] = '\0';
	const char *e = strrchr(buf, ')');
	unsigned long long ticks = 0, btime = 0;
	/* after the command: state (field 3) ... starttime (field 22) */
	if (!e || sscanf(e + 2,
	                 "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d "
	                 "%*d %*d %*d %llu",
	                 &ticks) != 1)
		return 0;
	f = fopen("/proc/stat", "r");
	char line[256];
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "btime %llu", &btime) == 1)
			break;
	if (f)
		fclose(f);
	return btime ? btime * 1000000ull + ticks * 1000000ull / 100ull : 0;
}

static struct fp known[256];
static int nknown;

static void note_proc(const struct fp *p, unsigned long long now)
{
	int k = 0;
	while (k < nknown && !(known[k].pid == p->pid && known[k].dev == p->dev))
		k++;
	if (k == nknown) {
		if (nknown == 256)
			return;
		known[nknown++] = *p;
		unsigned long long st = started_us(p->pid);
		known[k].first_us = st && st < now ? st : now;
	}
	unsigned long long first = known[k].first_us, last = known[k].last_us;
	int was_alive = known[k].alive;
	known[k] = *p;
	known[k].first_us = first;
	/* NVML lists processes that hold a context: alive ones */
	known[k].alive = kill((pid_t)p->pid, 0) == 0 || errno == EPERM;
	/* gone: its samples until the call that found it gone (it died in
	 * between, when exactly only the driver would know) */
	known[k].last_us = known[k].alive || !last || was_alive ? now : last;
}

static void parse_procs(const char *e, unsigned long long now)
{
	while (e && *e) {
		struct fp p;
		memset(&p, 0, sizeof(p));
		int k = sscanf(e, "%u:%u:%u:%u:%u:%u", &p.pid, &p.dev, &p.mib, &p.sm, &p.on_ms,
		               &p.period_ms);
		if (k >= 4)
			note_proc(&p, now);
		e += strcspn(e, ",\n");
		if (*e)
			e++;
	}
}

/* Every process the fake has known, alive or not (out[i].alive). */
static int fake_procs(struct fp *out, int cap)
{
	unsigned long long now = now_us();
	parse_procs(getenv("FAKE_NVML_PIDS"), now);
	const char *path = getenv("FAKE_NVML_PIDS_FILE");
	FILE *f = path ? fopen(path, "r") : NULL;
	if (f) {
		char buf[8192];
		size_t len = fread(buf, 1, sizeof(buf) - 1, f);
		buf[len] = '\0';
		fclose(f);
		parse_procs(buf, now);
	}
	int n = nknown < cap ? nknown : cap;
	memcpy(out, known, (size_t)n * sizeof(*out));
	return n;
}

/* Whether the process was there at t (µs): its samples then exist. */
static int there_at(const struct fp *p, unsigned long long t)
{
	return t >= p->first_us && (p->alive || t <= p->last_us);
}

/* A process's SM % in the sample taken at t (µs). */
static unsigned sm_at(const struct fp *p, unsigned long long t)
{
	if (!p->period_ms)
		return p->sm;
	return (t / 1000ull) % p->period_ms < p->on_ms ? p->sm : 0;
}

static int on_dev(const struct fp *p, void *d)
{
	return (long)p->dev == dev_index(d);
}

/* ---- identity and gauges ---- */

int nvmlInit_v2(void)
{
	return strcmp(env("FAKE_NVML_FAIL"), "init") ? OK : 999;
}
int nvmlShutdown(void)
{
	FILE *f = *env("FAKE_NVML_STATS") ? fopen(env("FAKE_NVML_STATS"), "w") : NULL;
	for (int i = 0; f && i < H100_NCALLS; i++)
		fprintf(f, "%s %lu\n", call_name[i], calls[i]);
	if (f)
		fclose(f);
	return OK;
}
int nvmlDeviceGetCount_v2(unsigned int *c)
{
	cost(H100_CALL_count);
	*c = ngpu();
	return OK;
}
int nvmlDeviceGetHandleByIndex_v2(unsigned int i, void **d)
{
	cost(H100_CALL_handle);
	if (i >= ngpu())
		return 2; /* NVML_ERROR_INVALID_ARGUMENT */
	*d = (void *)(long)(i + 1);
	return OK;
}
int nvmlDeviceGetName(void *d, char *name, unsigned int len)
{
	cost(H100_CALL_name);
	snprintf(name, len, "Fake GPU H%ld", dev_index(d));
	return OK;
}
int nvmlDeviceGetUUID(void *d, char *uuid, unsigned int len)
{
	cost(H100_CALL_uuid);
	snprintf(uuid, len, "GPU-fa4e0000-0000-0000-0000-00000000000%ld", dev_index(d));
	return OK;
}
int nvmlDeviceGetUtilizationRates(void *d, util_t *u)
{
	cost(H100_CALL_util);
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
	return OK;
}
int nvmlDeviceGetMemoryInfo(void *d, mem_t *m)
{
	cost(H100_CALL_memory);
	long i = dev_index(d);
	m->total = 80ull << 30;
	m->used = ((unsigned long long)(i + 1) << 30) + ((unsigned long long)step << 20);
	m->free = m->total - m->used;
	return OK;
}
int nvmlDeviceGetTemperature(void *d, int sensor, unsigned int *t)
{
	(void)sensor;
	cost(H100_CALL_temperature);
	if (!strcmp(env("FAKE_NVML_FAIL"), "temp"))
		return E_NOT_SUPPORTED;
	*t = (unsigned)(40 + dev_index(d));
	return OK;
}
int nvmlDeviceGetPowerUsage(void *d, unsigned int *mw)
{
	cost(H100_CALL_power);
	*mw = (unsigned)(100000 + 1000 * dev_index(d));
	return OK;
}
int nvmlDeviceGetClockInfo(void *d, int type, unsigned int *mhz)
{
	cost(H100_CALL_clock);
	/* graphics 0, memory 2 */
	*mhz = (unsigned)((type == 2 ? 5000 : 1400) + 10 * dev_index(d));
	return OK;
}
/* the highest SM clock: 1980 MHz (an H100's) */
int nvmlDeviceGetMaxClockInfo(void *d, int type, unsigned int *mhz)
{
	(void)d;
	cost(H100_CALL_max_clock);
	*mhz = type == 0 ? 1980 : 2619;
	return OK;
}
/* PCIe KB/s: rx (counter 1) 2000 + 100 per GPU, tx (0) half of it */
int nvmlDeviceGetPcieThroughput(void *d, int counter, unsigned int *kbps)
{
	cost(H100_CALL_pcie);
	unsigned rx = (unsigned)(2000 + 100 * dev_index(d));
	*kbps = counter == 1 ? rx : rx / 2;
	return OK;
}
/* energy in mJ grows 150 J per call */
int nvmlDeviceGetTotalEnergyConsumption(void *d, unsigned long long *mj)
{
	cost(H100_CALL_energy);
	static unsigned long long e[64];
	long i = dev_index(d) & 63;
	e[i] += 150000;
	*mj = 1000000ull + e[i];
	return OK;
}
int nvmlDeviceGetFanSpeed(void *d, unsigned int *pct)
{
	cost(H100_CALL_fan);
	if (h100())
		return E_NOT_SUPPORTED;
	*pct = (unsigned)(30 + dev_index(d));
	return OK;
}
/* GPU 0: software power cap; others: hardware slowdown and thermal */
int nvmlDeviceGetCurrentClocksThrottleReasons(void *d, unsigned long long *r)
{
	cost(H100_CALL_throttle);
	*r = dev_index(d) == 0 ? 0x4ull : 0x48ull;
	return OK;
}
int nvmlDeviceGetPciInfo_v3(void *d, pci_t *p)
{
	cost(H100_CALL_pci);
	memset(p, 0, sizeof(*p));
	snprintf(p->busId, sizeof(p->busId), "00000000:%02lX:00.0", 0x10 + dev_index(d));
	return OK;
}
int nvmlSystemGetDriverVersion(char *v, unsigned int len)
{
	cost(H100_CALL_driver);
	snprintf(v, len, "550.54.15");
	return OK;
}
int nvmlDeviceGetNumGpuCores(void *d, unsigned int *c)
{
	(void)d;
	cost(H100_CALL_cores);
	*c = 16896;
	return OK;
}

/* ---- processes: lists, per-process samples, device samples ---- */

/* Every process is in the compute list; the first one of each device also
 * in the graphics list (a duplicate rt must count once). */
static int list(void *d, unsigned int *count, proc_t *infos, int graphics)
{
	struct fp p[256];
	int n = fake_procs(p, 256);
	unsigned k = 0;
	for (int i = 0; i < n; i++)
		k += on_dev(&p[i], d) && p[i].alive;
	if (graphics && k > 1)
		k = 1;
	if (!infos || *count < k) {
		*count = k;
		return E_INSUFFICIENT_SIZE;
	}
	k = 0;
	for (int i = 0; i < n && !(graphics && k); i++) {
		if (!on_dev(&p[i], d) || !p[i].alive)
			continue;
		infos[k].pid = p[i].pid;
		infos[k].usedGpuMemory = (unsigned long long)p[i].mib << 20;
		infos[k].gpuInstanceId = infos[k].computeInstanceId = 0;
		k++;
	}
	*count = k;
	return OK;
}

int nvmlDeviceGetComputeRunningProcesses_v3(void *d, unsigned int *c, proc_t *p)
{
	cost(H100_CALL_compute);
	return list(d, c, p, 0);
}

int nvmlDeviceGetGraphicsRunningProcesses_v3(void *d, unsigned int *c, proc_t *p)
{
	cost(H100_CALL_graphics);
	return list(d, c, p, 1);
}

/* One sample per process: its newest after last_seen. */
int nvmlDeviceGetProcessUtilization(void *d, putil_t *u, unsigned int *count,
                                    unsigned long long last_seen)
{
	cost(H100_CALL_putil);
	struct fp p[256];
	int n = fake_procs(p, 256);
	unsigned need = (unsigned)n > PUTIL_MIN ? (unsigned)n : PUTIL_MIN;
	if (!u || *count < need) {
		*count = need;
		return E_INSUFFICIENT_SIZE;
	}
	unsigned long long ts = grid_at(now_us());
	if (ts <= last_seen)
		return E_NOT_FOUND;
	unsigned k = 0;
	for (int i = 0; i < n; i++) {
		if (!on_dev(&p[i], d) || !there_at(&p[i], ts))
			continue;
		u[k].pid = p[i].pid;
		u[k].timeStamp = ts;
		u[k].smUtil = sm_at(&p[i], ts);
		u[k].memUtil = u[k].encUtil = u[k].decUtil = 0;
		k++;
	}
	if (!k)
		return E_NOT_FOUND;
	*count = k;
	return OK;
}

/* The device's busy in the sample at t: its processes' SM %, at most 100. */
static unsigned device_at(void *d, const struct fp *p, int n, unsigned long long t)
{
	unsigned sum = 0;
	for (int i = 0; i < n; i++)
		if (on_dev(&p[i], d) && there_at(&p[i], t))
			sum += sm_at(&p[i], t);
	return sum > 100 ? 100 : sum;
}

/* NVML_GPU_UTILIZATION_SAMPLES (1): every sample after last_seen, oldest
 * first, of the last KEPT; value type NVML_VALUE_TYPE_UNSIGNED_INT (1). */
int nvmlDeviceGetSamples(void *d, int type, unsigned long long last_seen, int *vtype,
                         unsigned int *count, sample_t *s)
{
	cost(H100_CALL_samples);
	if (type != 1)
		return E_NOT_SUPPORTED;
	unsigned long long newest = grid_at(now_us());
	unsigned long long oldest = newest - (KEPT - 1) * GRID_US;
	unsigned long long first = last_seen < oldest ? oldest : grid_at(last_seen) + GRID_US;
	unsigned k = first > newest ? 0 : (unsigned)((newest - first) / GRID_US + 1);
	if (!s) {
		*count = KEPT;
		return OK;
	}
	if (!k)
		return E_NOT_FOUND;
	if (*count < k) {
		*count = k;
		return E_INSUFFICIENT_SIZE;
	}
	struct fp p[256];
	int n = fake_procs(p, 256);
	for (unsigned i = 0; i < k; i++) {
		unsigned long long t = first + i * GRID_US;
		s[i].timeStamp = t;
		s[i].value = device_at(d, p, n, t);
	}
	*vtype = 1;
	*count = k;
	return OK;
}
