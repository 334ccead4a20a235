/*
 * gpu_nvml_query.c - the calls into the driver, on the worker thread only.
 *
 * A query asks what the sample's values need and nothing else (gpu_nvml.h
 * says what each costs). NVML's contract, as a real driver keeps it
 * (docs/cli.md "GPUs"): buffers are sized as NVML asks (a NULL call, or the
 * count that comes back with NVML_ERROR_INSUFFICIENT_SIZE);
 * NVML_ERROR_NOT_FOUND means no sample newer than the one given; the
 * process call gives one sample per process, its newest.
 */
#define _GNU_SOURCE
#include "gpu_nvml_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rt/common.h"
#include "rt/fmt.h"

#define NVML_TEMPERATURE_GPU 0
#define NVML_CLOCK_GRAPHICS 0
#define NVML_CLOCK_MEM 2
#define NVML_GPU_UTILIZATION_SAMPLES 1
#define PERIOD_US 200000ull    /* NVML's period until one is measured */
#define POLL_SLACK_US 20000ull /* a sample is there this long after its time */
#define ENERGY_EVERY_US 600000000ull
#define MAX_BUF 8192u /* entries: more than any driver asks */

uint64_t rt_nvml_now_us(void)
{
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	return (uint64_t)t.tv_sec * 1000000u + (uint64_t)t.tv_nsec / 1000u;
}

/* NVML strings are NUL-terminated within the buffer it was given; make
 * sure, whatever a (fake or broken) library wrote. */
static void terminate(char *s, size_t cap)
{
	s[cap - 1] = '\0';
}

/* A buffer of at least want entries of size sz (grown, never shrunk). */
static int fit(void **buf, unsigned *cap, unsigned want, size_t sz)
{
	if (want <= *cap)
		return 0;
	if (want > MAX_BUF)
		return -1;
	void *p = realloc(*buf, (size_t)want * sz);
	if (!p)
		return -1;
	*buf = p;
	*cap = want;
	return 0;
}

/* Whether a call may be made: supported so far. A NOT_SUPPORTED (or
 * missing) answer is remembered and never asked again. */
static int may(const struct nvml_dev *d, enum nvml_ask a, const void *fn)
{
	return fn && !(d->no & (1u << a));
}
static int answered(struct nvml_dev *d, enum nvml_ask a, nvmlReturn_t rc)
{
	if (rc == NVML_ERROR_NOT_SUPPORTED || rc == NVML_ERROR_FUNCTION_NOT_FOUND)
		d->no |= 1u << a;
	return rc == NVML_SUCCESS;
}

/* ---- identity: once, and again when the device count changes ---- */

static void identify(struct rt_nvml *n, unsigned i, struct nvml_dev *d, struct rt_inv_gpu *g,
                     const char *driver)
{
	memset(g, 0, sizeof(*g));
	if (n->uuid && n->uuid(d->h, g->uuid, sizeof(g->uuid)) == 0)
		terminate(g->uuid, sizeof(g->uuid));
	else
		g->uuid[0] = '\0';
	if (n->name && n->name(d->h, g->name, sizeof(g->name)) == 0)
		terminate(g->name, sizeof(g->name));
	else
		g->name[0] = '\0';
	nvml_pci_t pci;
	memset(&pci, 0, sizeof(pci));
	if (n->pci && n->pci(d->h, &pci) == 0) {
		terminate(pci.busId, sizeof(pci.busId));
		rt_copy_text(g->pci_bus_id, sizeof(g->pci_bus_id), pci.busId);
	}
	if (g->pci_bus_id[0])
		rt_strlcpy_n(g->host_id, sizeof(g->host_id), g->pci_bus_id, strlen(g->pci_bus_id));
	else
		snprintf(g->host_id, sizeof(g->host_id), "%u", i);
	rt_copy_text(g->driver_version, sizeof(g->driver_version), driver);
	unsigned int v;
	if (n->cores && n->cores(d->h, &v) == 0)
		g->core_count = v;
	if (n->max_clock && n->max_clock(d->h, NVML_CLOCK_GRAPHICS, &v) == 0 && v < 100000)
		d->max_clock = v;
}

/* The devices, their handles and identity when the count changed (or on
 * the first query); a device whose handle fails is left out. */
static void devices(struct rt_nvml *n, struct snapshot *w)
{
	unsigned int c = 0;
	if (n->count(&c) != 0)
		c = 0;
	if (c > RT_MAX_GPUS)
		c = RT_MAX_GPUS;
	if (n->ndev_known && c == n->ndev_known)
		return;
	char driver[48] = "";
	if (n->driver && n->driver(driver, sizeof(driver)) == 0)
		terminate(driver, sizeof(driver));
	else
		driver[0] = '\0';
	w->ndev = 0;
	for (unsigned i = 0; i < c; i++) {
		struct nvml_dev *d = &n->dev[w->ndev];
		nvmlDevice_t h;
		if (n->handle(i, &h) != 0)
			continue;
		free(d->ubuf);
		free(d->sbuf);
		free(d->lbuf);
		memset(d, 0, sizeof(*d) - sizeof(d->pending));
		d->h = h;
		d->period = PERIOD_US;
		identify(n, i, d, &w->dev[w->ndev].ident, driver);
		w->ndev++;
	}
	n->ndev_known = c;
}

/* ---- gauges ---- */

static void gauges_basic(struct rt_nvml *n, struct nvml_dev *d, struct rt_rec_gpu *o)
{
	nvml_util_t u;
	nvml_memory_t m;
	unsigned int v;
	if (may(d, ASK_UTIL, n->util) && answered(d, ASK_UTIL, n->util(d->h, &u)) && u.gpu <= 100) {
		o->util_pct = u.gpu;
		o->valid |= RT_GPU_V_UTIL;
	}
	if (may(d, ASK_MEMORY, n->memory) && answered(d, ASK_MEMORY, n->memory(d->h, &m)) &&
	    m.used <= m.total) {
		o->vram_used = m.used;
		o->vram_total = m.total;
		o->valid |= RT_GPU_V_MEM;
	}
	if (may(d, ASK_TEMP, n->temperature) &&
	    answered(d, ASK_TEMP, n->temperature(d->h, NVML_TEMPERATURE_GPU, &v)) && v < 1000) {
		o->temp_c = (int32_t)v;
		o->valid |= RT_GPU_V_TEMP;
	}
	if (may(d, ASK_POWER, n->power) && answered(d, ASK_POWER, n->power(d->h, &v))) {
		o->power_mw = v;
		o->valid |= RT_GPU_V_POWER;
	}
	if (may(d, ASK_CLOCK, n->clock) &&
	    answered(d, ASK_CLOCK, n->clock(d->h, NVML_CLOCK_GRAPHICS, &v))) {
		o->clock_mhz = v;
		o->valid |= RT_GPU_V_CLOCK;
	}
	if (d->max_clock) { /* read with the identity */
		o->max_clock_mhz = d->max_clock;
		o->valid |= RT_GPU_V_MAX_CLOCK;
	}
}

/* Energy (3.8 ms a read on an H100): the counter at the first sample,
 * every 10 minutes (a run whose recorder is killed keeps a total) and at
 * the last one; a line between carries none, and the run's total is exact
 * from the first and the last reading. PCIe throughput is not read (20 ms
 * of blocking a direction). */
static void gauges_more(struct rt_nvml *n, struct nvml_dev *d, struct rt_rec_gpu *o, uint64_t cut,
                        int final)
{
	unsigned int v;
	unsigned long long e;
	int energy_due = !d->energy_at || final || cut >= d->energy_at + ENERGY_EVERY_US;
	if (energy_due && may(d, ASK_ENERGY, n->energy) &&
	    answered(d, ASK_ENERGY, n->energy(d->h, &e))) {
		o->energy_mj = e;
		o->valid |= RT_GPU_V_ENERGY;
		d->energy_at = cut;
	}
	if (may(d, ASK_FAN, n->fan) && answered(d, ASK_FAN, n->fan(d->h, &v)) && v <= 200) {
		o->fan_pct = v;
		o->valid |= RT_GPU_V_FAN;
	}
	if (may(d, ASK_MEM_CLOCK, n->clock) &&
	    answered(d, ASK_MEM_CLOCK, n->clock(d->h, NVML_CLOCK_MEM, &v))) {
		o->mem_clock_mhz = v;
		o->valid |= RT_GPU_V_MEM_CLOCK;
	}
	if (may(d, ASK_THROTTLE, n->throttle) && answered(d, ASK_THROTTLE, n->throttle(d->h, &e))) {
		o->throttle_reasons = e;
		o->valid |= RT_GPU_V_THROTTLE;
	}
}

/* ---- the running processes ---- */

/* One list into the snapshot's (a pid already there is not added again);
 * the buffer grows to the count NVML answers with INSUFFICIENT_SIZE. */
static void list_procs(nvmlReturn_t (*fn)(nvmlDevice_t, unsigned int *, nvml_proc_t *),
                       struct nvml_dev *d, struct dev_snap *s)
{
	if (!fn)
		return;
	if (!d->lbuf && fit((void **)&d->lbuf, &d->lcap, 64, sizeof(nvml_proc_t)))
		return;
	unsigned int cnt = d->lcap;
	nvmlReturn_t rc = fn(d->h, &cnt, d->lbuf);
	for (int tries = 0; rc == NVML_ERROR_INSUFFICIENT_SIZE && tries < 2; tries++) {
		if (fit((void **)&d->lbuf, &d->lcap, cnt + 16, sizeof(nvml_proc_t)))
			return;
		cnt = d->lcap;
		rc = fn(d->h, &cnt, d->lbuf);
	}
	if (rc != NVML_SUCCESS)
		return;
	for (unsigned k = 0; k < cnt && k < d->lcap; k++) {
		unsigned j = 0;
		while (j < s->nproc && s->proc[j].pid != d->lbuf[k].pid)
			j++;
		if (j < s->nproc || s->nproc == RT_NVML_MAX_PROCS)
			continue;
		s->proc[s->nproc].pid = d->lbuf[k].pid;
		s->proc[s->nproc].vram = d->lbuf[k].usedGpuMemory;
		s->nproc++;
	}
}

/* Which source the tree's busy needs here: none while no listed process
 * is (or may be: new since the last sample) the tree's; the device's
 * samples while every listed one is; each process's when others share it. */
static int choose_mode(const struct dev_snap *s, const struct dev_class *c)
{
	int mine = 0, others = 0;
	for (unsigned k = 0; k < s->nproc; k++) {
		unsigned j = 0;
		while (j < c->n && c->pid[j] != s->proc[k].pid)
			j++;
		if (j == c->n || c->tree[j])
			mine = 1;
		else
			others = 1;
	}
	return !mine ? BUSY_NONE : others ? BUSY_PROCS : BUSY_DEVICE;
}

/* ---- utilization samples ---- */

/* A full list (a long interval of a GPU shared by many processes) folds
 * its older half into the next interval's samples: all of them were taken
 * before the next sample's time. */
static void fold_older(struct nvml_dev *d)
{
	unsigned half = d->npending / 2;
	if (!d->has_carry)
		rt_busy_reset(&d->carry);
	d->has_carry = 1;
	for (unsigned k = 0; k < half; k++)
		rt_busy_add(&d->carry, d->pending[k].pid, d->pending[k].value);
	memmove(d->pending, d->pending + half, (d->npending - half) * sizeof(d->pending[0]));
	d->npending -= half;
}

static void keep(struct rt_nvml *n, struct nvml_dev *d, uint32_t pid, uint32_t value, uint64_t ts)
{
	if (ts <= n->floor_us)
		return; /* of an interval already given */
	if (d->npending == RT_NVML_MAX_PENDING)
		fold_older(d);
	d->pending[d->npending++] = (struct busy_sample){pid, value, ts};
}

/* A device sample's value as a percentage (101: not one, ignored). */
static uint32_t sample_pct(const nvml_sample_t *s, int vt)
{
	if (vt == 0) /* NVML_VALUE_TYPE_DOUBLE */
		return s->value.d >= 0 && s->value.d <= 100 ? (uint32_t)(s->value.d + 0.5) : 101;
	uint64_t v = vt == 1 ? s->value.ui : s->value.ull;
	return v <= 100 ? (uint32_t)v : 101;
}

/* NVML's period, from the gap between two successive samples. */
static void measure_period(struct nvml_dev *d, uint64_t prev, uint64_t ts)
{
	if (prev && ts > prev && ts - prev >= 50000 && ts - prev < d->period)
		d->period = ts - prev;
}

/* Every device sample since the newest taken (the tree alone here). */
static void take_device(struct rt_nvml *n, struct nvml_dev *d)
{
	if (!may(d, ASK_SAMPLES, n->samples))
		return;
	int vt = 0;
	unsigned int cnt = 0;
	if (!d->sbuf &&
	    (!answered(
	         d, ASK_SAMPLES,
	         n->samples(d->h, NVML_GPU_UTILIZATION_SAMPLES, d->last_ts, &vt, &cnt, NULL)) ||
	     fit((void **)&d->sbuf, &d->scap, cnt > 128 ? cnt : 128, sizeof(nvml_sample_t))))
		return;
	cnt = d->scap;
	nvmlReturn_t rc =
	    n->samples(d->h, NVML_GPU_UTILIZATION_SAMPLES, d->last_ts, &vt, &cnt, d->sbuf);
	if (rc == NVML_ERROR_INSUFFICIENT_SIZE &&
	    !fit((void **)&d->sbuf, &d->scap, cnt + 16, sizeof(nvml_sample_t))) {
		cnt = d->scap;
		rc = n->samples(d->h, NVML_GPU_UTILIZATION_SAMPLES, d->last_ts, &vt, &cnt, d->sbuf);
	}
	if (!answered(d, ASK_SAMPLES, rc))
		return;
	for (unsigned k = 0; k < cnt && k < d->scap; k++) {
		const nvml_sample_t *s = &d->sbuf[k];
		if (s->timeStamp <= d->last_ts)
			continue;
		measure_period(d, d->last_ts, s->timeStamp);
		d->last_ts = s->timeStamp;
		keep(n, d, 0, sample_pct(s, vt), s->timeStamp);
	}
}

/* Each process's newest sample since the newest taken (a shared GPU). */
static int take_procs(struct rt_nvml *n, struct nvml_dev *d)
{
	if (!may(d, ASK_PUTIL, n->putil))
		return 0;
	unsigned int cnt = 0;
	if (!d->ubuf) { /* NVML says the size it wants (72 on a 580 driver) */
		n->putil(d->h, NULL, &cnt, d->last_ts);
		if (fit((void **)&d->ubuf, &d->ucap, cnt > 72 ? cnt : 72, sizeof(nvml_putil_t)))
			return 0;
	}
	cnt = d->ucap;
	nvmlReturn_t rc = n->putil(d->h, d->ubuf, &cnt, d->last_ts);
	if (rc == NVML_ERROR_INSUFFICIENT_SIZE &&
	    !fit((void **)&d->ubuf, &d->ucap, cnt + 16, sizeof(nvml_putil_t))) {
		cnt = d->ucap;
		rc = n->putil(d->h, d->ubuf, &cnt, d->last_ts);
	}
	if (!answered(d, ASK_PUTIL, rc))
		return 0;
	uint64_t newest = d->last_ts;
	for (unsigned k = 0; k < cnt && k < d->ucap; k++) {
		const nvml_putil_t *u = &d->ubuf[k];
		if (u->timeStamp <= d->last_ts)
			continue;
		if (u->timeStamp > newest)
			newest = u->timeStamp;
		keep(n, d, u->pid, u->smUtil, u->timeStamp);
	}
	measure_period(d, d->last_ts, newest);
	d->last_ts = newest;
	return newest > 0;
}

/* The next poll of a shared GPU: just after NVML's next sample is due. */
static void next_poll(struct nvml_dev *d, int got, uint64_t now)
{
	uint64_t at = d->last_ts + d->period + POLL_SLACK_US;
	d->poll_at = got && at > now ? at : now + POLL_SLACK_US;
}

/* The tree's busy source, when a sample newer than the last one taken can
 * be there (at -i 0.1 every other sample asks nothing). A tree that left
 * the GPU gets its source asked once more: the samples of its last moments
 * there. Returns the source asked (or that would have been). */
static int take_busy(struct rt_nvml *n, struct nvml_dev *d, int mode, uint64_t now)
{
	int was = d->mode;
	int src = mode == BUSY_NONE ? was : mode;
	d->mode = mode;
	if (src == BUSY_NONE || (mode == was && d->last_ts && now < d->last_ts + d->period))
		return src;
	if (src == BUSY_DEVICE)
		take_device(n, d);
	else
		next_poll(d, take_procs(n, d), now);
	return src;
}

/* The samples up to cut into this interval; later ones wait for the next. */
static void give_interval(struct nvml_dev *d, struct dev_snap *s, uint64_t cut)
{
	rt_busy_reset(&s->acc);
	if (d->has_carry) /* a query no sample took, or a full list folded */
		rt_busy_merge(&s->acc, &d->carry);
	d->has_carry = 0;
	unsigned later = 0;
	for (unsigned k = 0; k < d->npending; k++) {
		const struct busy_sample *b = &d->pending[k];
		if (b->ts <= cut)
			rt_busy_add(&s->acc, b->pid, b->value);
		else
			d->pending[later++] = *b;
	}
	d->npending = later;
}

void rt_nvml_query(struct rt_nvml *n, uint64_t cut_us, int final)
{
	struct snapshot *w = &n->work;
	devices(n, w);
	uint64_t now = rt_nvml_now_us();
	for (unsigned k = 0; k < w->ndev; k++) {
		struct nvml_dev *d = &n->dev[k];
		struct dev_snap *s = &w->dev[k];
		memset(&s->gauge, 0, sizeof(s->gauge));
		gauges_basic(n, d, &s->gauge);
		gauges_more(n, d, &s->gauge, cut_us, final);
		s->nproc = 0;
		list_procs(n->compute, d, s);
		list_procs(n->graphics, d, s);
		int mode = choose_mode(s, &n->cls_now[k]);
		s->mode = take_busy(n, d, mode, now);
		s->left = mode == BUSY_NONE && s->mode != BUSY_NONE;
		give_interval(d, s, cut_us);
	}
	n->floor_us = cut_us;
}

uint64_t rt_nvml_poll_due(const struct rt_nvml *n)
{
	uint64_t due = 0;
	for (unsigned k = 0; k < n->work.ndev; k++)
		if (n->dev[k].mode == BUSY_PROCS && (!due || n->dev[k].poll_at < due))
			due = n->dev[k].poll_at;
	return due;
}

/* Between samples: the shared GPUs' process samples, once a period (NVML
 * gives each process's newest only: one not taken in time is lost). */
void rt_nvml_poll(struct rt_nvml *n)
{
	uint64_t now = rt_nvml_now_us();
	for (unsigned k = 0; k < n->work.ndev; k++) {
		struct nvml_dev *d = &n->dev[k];
		if (d->mode != BUSY_PROCS || now < d->poll_at)
			continue;
		next_poll(d, take_procs(n, d), now);
	}
}
