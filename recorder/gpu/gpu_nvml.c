/*
 * gpu_nvml.c - NVML through dlopen (see gpu_nvml.h): the library, the
 * worker thread that alone calls into the driver, and the tree's figures.
 *
 * Only the entry points rt uses are resolved; a missing optional one just
 * leaves its field null. The worker answers a sample's query
 * (gpu_nvml_query.c) and, while the tree shares a GPU, polls that GPU's
 * process samples between samples; a hung driver call holds up no sample.
 */
#define _GNU_SOURCE
#include "gpu_nvml_int.h"

#include "proctree.h"
#include "rt/common.h"
#include "rt/sysroot.h"

#include <dlfcn.h>
#include <stddef.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void *sym(void *lib, const char *a, const char *b)
{
	void *p = dlsym(lib, a);
	return p || !b ? p : dlsym(lib, b);
}

/* Wait for a request, or until the next poll of a shared GPU. Returns 1
 * for a request, 0 for a poll, -1 to stop. Called with mu held. */
static int worker_wait(struct rt_nvml *n)
{
	while (!n->want && !n->stop) {
		uint64_t due = rt_nvml_poll_due(n);
		if (!due) {
			pthread_cond_wait(&n->cv, &n->mu);
			continue;
		}
		if (rt_nvml_now_us() >= due)
			return 0;
		struct timespec at = {(time_t)(due / 1000000u), (long)(due % 1000000u) * 1000L};
		pthread_cond_timedwait(&n->cv, &n->mu, &at); /* CLOCK_REALTIME, as NVML's */
	}
	return n->stop ? -1 : 1;
}

/* The sampling side's classes of the listed processes, for one query
 * (only what is filled: a sample copies no more than it must). */
static void copy_classes(struct rt_nvml *n)
{
	for (unsigned k = 0; k < n->work.ndev; k++) {
		struct dev_class *to = &n->cls_now[k];
		const struct dev_class *from = &n->cls[k];
		to->n = from->n;
		memcpy(to->pid, from->pid, from->n * sizeof(from->pid[0]));
		memcpy(to->tree, from->tree, from->n * sizeof(from->tree[0]));
	}
}

/* The query's snapshot for the sampling side: each device up to its
 * listed processes and sampled ones. */
static void publish(struct rt_nvml *n)
{
	n->snap.ndev = n->work.ndev;
	for (unsigned k = 0; k < n->work.ndev; k++) {
		struct dev_snap *to = &n->snap.dev[k];
		const struct dev_snap *from = &n->work.dev[k];
		memcpy(to, from, offsetof(struct dev_snap, proc));
		memcpy(to->proc, from->proc, from->nproc * sizeof(from->proc[0]));
		to->acc.npid = from->acc.npid;
		to->acc.dropped = from->acc.dropped;
		memcpy(to->acc.pid, from->acc.pid, from->acc.npid * sizeof(from->acc.pid[0]));
	}
}

/* A query the sample stopped waiting for: no record takes its samples,
 * so the next query's interval does (it covers the time since the last
 * record with GPU figures). */
static void keep_unused(struct rt_nvml *n)
{
	for (unsigned k = 0; k < n->work.ndev; k++) {
		struct nvml_dev *d = &n->dev[k];
		if (!d->has_carry)
			rt_busy_reset(&d->carry);
		rt_busy_merge(&d->carry, &n->work.dev[k].acc);
		d->has_carry = 1;
	}
}

static void *worker(void *arg)
{
	struct rt_nvml *n = arg;
	pthread_mutex_lock(&n->mu);
	for (;;) {
		int why = worker_wait(n);
		if (why < 0)
			break;
		uint64_t cut = n->cut_us;
		int final = n->final;
		if (why)
			copy_classes(n);
		n->want = 0;
		n->busy = 1;
		pthread_mutex_unlock(&n->mu);
		if (why) /* may block in the driver: nobody waits for long */
			rt_nvml_query(n, cut, final);
		else
			rt_nvml_poll(n);
		pthread_mutex_lock(&n->mu);
		n->busy = 0;
		if (why && n->stuck) /* nobody waits for it: its samples are the next one's */
			keep_unused(n);
		if (why) {
			publish(n);
			n->have = 1;
			n->stuck = 0;
			n->done++;
		}
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

static void resolve(struct rt_nvml *n, void *lib)
{
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
	*(void **)&n->max_clock = sym(lib, "nvmlDeviceGetMaxClockInfo", NULL);
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
	*(void **)&n->samples = sym(lib, "nvmlDeviceGetSamples", NULL);
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
	resolve(n, lib);
	/* samples before the tracker started are no interval's */
	n->floor_us = rt_nvml_now_us();
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
	pthread_setname_np(n->th, "rt-nvml"); /* top -H, and rt-bench gpu, tell it apart */
	return n;
}

/* Stop the worker; a poll or query in flight gets 100 ms to come back,
 * one stuck in the driver is left there (the process is exiting). */
void rt_nvml_close(struct rt_nvml *n)
{
	if (!n)
		return;
	pthread_mutex_lock(&n->mu);
	n->stop = 1;
	pthread_cond_broadcast(&n->cv);
	struct timespec dl;
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_nsec += 100000000L;
	dl.tv_sec += dl.tv_nsec / 1000000000L;
	dl.tv_nsec %= 1000000000L;
	while (n->busy && !n->stuck)
		if (pthread_cond_timedwait(&n->cv, &n->mu, &dl) != 0)
			break;
	int busy = n->busy;
	pthread_mutex_unlock(&n->mu);
	if (busy)
		return;
	pthread_join(n->th, NULL);
	if (n->shutdown)
		n->shutdown();
	dlclose(n->lib);
	for (unsigned k = 0; k < RT_MAX_GPUS; k++) {
		free(n->dev[k].ubuf);
		free(n->dev[k].sbuf);
		free(n->dev[k].lbuf);
	}
	free(n);
}

int rt_nvml_sample(struct rt_nvml *n, long timeout_ms, uint64_t cut_us, int final)
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
	if (n->stuck) { /* still stuck in the driver: do not wait again */
		n->fresh = 0;
		n->stalls++;
		pthread_mutex_unlock(&n->mu);
		return 0;
	}
	n->want = 1;
	n->cut_us = cut_us;
	n->final = final;
	pthread_cond_broadcast(&n->cv);
	while (n->done == before)
		if (pthread_cond_timedwait(&n->cv, &n->mu, &dl) != 0)
			break;
	n->fresh = n->done != before;
	if (!n->fresh) {
		n->stalls++;
		n->stuck = 1;
	}
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
		for (unsigned k = 0; k < n->snap.ndev; k++)
			inv->gpu[k] = n->snap.dev[k].ident;
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
		*out = n->snap.dev[i].gauge;
	pthread_mutex_unlock(&n->mu);
}

/* The tree's processes: members now, or listed as the tree's at the
 * last sample (a member that left keeps its last samples). */
struct tree_ctx {
	struct rt_proctree *tree;
	const struct dev_class *was;
};
static int in_tree(uint32_t pid, void *arg)
{
	const struct tree_ctx *t = arg;
	if (rt_proctree_has(t->tree, (pid_t)pid))
		return 1;
	for (unsigned k = 0; k < t->was->n; k++)
		if (t->was->pid[k] == pid)
			return t->was->tree[k];
	return 0;
}

/* The tree on one GPU: its VRAM, whether it is there and alone there (a
 * member that just ended, still listed, is still the tree's). */
static int tree_on_gpu(const struct dev_snap *s, struct tree_ctx *ctx, uint64_t *vram, int *alone)
{
	int on = 0, others = 0;
	*vram = 0;
	for (unsigned k = 0; k < s->nproc; k++) {
		if (!in_tree(s->proc[k].pid, ctx)) {
			others = 1;
			continue;
		}
		on = 1;
		if (s->proc[k].vram != ~0ull) /* NVML_VALUE_NOT_AVAILABLE */
			*vram += s->proc[k].vram;
	}
	*alone = on && !others;
	return on;
}

/* Which listed processes are the tree's, for the worker's next choice. */
static void classify(const struct dev_snap *s, struct rt_proctree *tree, struct dev_class *c)
{
	c->n = 0;
	for (unsigned k = 0; k < s->nproc; k++) {
		c->pid[c->n] = s->proc[k].pid;
		c->tree[c->n++] = (uint8_t)rt_proctree_has(tree, (pid_t)s->proc[k].pid);
	}
}

/* The tree's busy on one GPU over the interval (1/100 %): the samples
 * that fell in it, else (an interval shorter than NVML's period) the last
 * figure while it is still there. */
static long tree_busy(struct rt_nvml *n, unsigned i, const struct dev_snap *s, struct tree_ctx *ctx,
                      int on, int alone)
{
	if (s->left)
		alone = n->last_alone[i];
	long b = s->mode == BUSY_NONE ? 0 : rt_busy_tree_x100(&s->acc, in_tree, ctx, alone);
	if (b < 0)
		b = on ? n->last_busy[i] : 0;
	n->last_busy[i] = on ? b : 0;
	n->last_alone[i] = alone;
	return b;
}

void rt_nvml_tree(struct rt_nvml *n, struct rt_proctree *tree, struct rt_record *rec)
{
	if (!n || !tree || !n->fresh)
		return;
	struct rt_rec_process *out = rec->proc;
	pthread_mutex_lock(&n->mu);
	uint64_t vram_all = 0;
	uint32_t util_x100 = 0, used = 0;
	for (unsigned i = 0; i < n->snap.ndev && i < rec->h->ngpu; i++) {
		const struct dev_snap *s = &n->snap.dev[i];
		uint64_t vram;
		int alone;
		struct tree_ctx ctx = {tree, &n->cls[i]};
		int on = tree_on_gpu(s, &ctx, &vram, &alone);
		long busy = tree_busy(n, i, s, &ctx, on, alone);
		classify(s, tree, &n->cls[i]);
		struct rt_rec_gpu *g = &rec->gpu[i];
		g->job_vram_bytes = vram;
		g->job_busy_x100 = (uint32_t)busy;
		g->job_on = on || busy > 0;
		g->valid |= RT_GPU_V_JOB;
		vram_all += vram;
		util_x100 += (uint32_t)busy;
		used += g->job_on;
	}
	pthread_mutex_unlock(&n->mu);
	out->gpu_vram_bytes = vram_all;
	out->gpu_util_pct_x100 = util_x100;
	out->gpu_count = used;
}
