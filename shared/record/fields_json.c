/*
 * fields_json.c - the JSON of a sample's keys that are not scalar values:
 * the run's facts (job name, pid, version, seq, timestamp) and the device
 * arrays (per-core, disks with their mounts, NICs, GPUs with the job's
 * share), written from the derived values as fields.c's table orders them.
 */
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "fields_int.h"
#include "rt/common.h"
#include "rt/fields.h"

/* ---- JSON writers for nested values ------------------------------------ */
void fj_job(struct rt_buf *b, const struct rt_derived *d, const struct rt_run_info *ri)
{
	(void)d;
	fld_str_or_null(b, ri ? ri->job_name : NULL);
}

void fj_pid(struct rt_buf *b, const struct rt_derived *d, const struct rt_run_info *ri)
{
	(void)d;
	if (ri && ri->tracked_pid > 0)
		rt_buf_i64(b, ri->tracked_pid);
	else
		rt_buf_puts(b, "null");
}

void fj_version(struct rt_buf *b, const struct rt_derived *d, const struct rt_run_info *ri)
{
	(void)d;
	(void)ri;
	rt_buf_puts(b, "\"" RT_VERSION "\"");
}

void fj_seq(struct rt_buf *b, const struct rt_derived *d, const struct rt_run_info *ri)
{
	(void)ri;
	rt_buf_u64(b, d->seq);
}

/* Precise sample time: seconds with microseconds, from integer ns. */
void fj_timestamp(struct rt_buf *b, const struct rt_derived *d, const struct rt_run_info *ri)
{
	(void)ri;
	uint64_t us = d->wall_ns / 1000;
	char frac[8];
	rt_buf_u64(b, us / 1000000);
	uint64_t f = us % 1000000;
	frac[0] = '.';
	for (int i = 6; i >= 1; i--, f /= 10)
		frac[i] = (char)('0' + f % 10);
	rt_buf_put(b, frac, 7);
}

void fj_per_core(struct rt_buf *b, const struct rt_derived *d, const struct rt_run_info *ri)
{
	(void)ri;
	rt_buf_putc(b, '[');
	for (unsigned i = 0; i < d->cur.rec->h->ncpu; i++) {
		if (i)
			rt_buf_putc(b, ',');
		rt_buf_f64_json(b, d->core_pct[i]);
	}
	rt_buf_putc(b, ']');
}

static void kv_str(struct rt_buf *b, const char *k, const char *v, int *first)
{
	fld_key(b, k, first);
	fld_str_or_null(b, v);
}

static void kv_u64(struct rt_buf *b, const char *k, uint64_t v, int *first)
{
	fld_key(b, k, first);
	rt_buf_u64(b, v);
}

static void kv_f64(struct rt_buf *b, const char *k, double v, int *first)
{
	fld_key(b, k, first);
	rt_buf_f64_json(b, v);
}

static const char *disk_type_name(unsigned t)
{
	return t == RT_DISK_NVME  ? "nvme"
	       : t == RT_DISK_SSD ? "ssd"
	       : t == RT_DISK_HDD ? "hdd"
	                          : NULL;
}

static void j_mounts(struct rt_buf *b, const struct rt_derived *d, unsigned disk)
{
	rt_buf_putc(b, '[');
	int any = 0;
	for (unsigned m = 0; m < d->cur.rec->h->nmount; m++) {
		const struct rt_inv_mount *im = &d->cur.inv->mount[m];
		if (im->disk != disk)
			continue;
		const struct rt_rec_mount *rm = &d->cur.rec->mount[m];
		uint64_t used =
		    rm->total_bytes > rm->free_bytes ? rm->total_bytes - rm->free_bytes : 0;
		int first = 1;
		if (any)
			rt_buf_putc(b, ',');
		any = 1;
		rt_buf_putc(b, '{');
		kv_u64(b, "available_bytes", rm->avail_bytes, &first);
		kv_str(b, "filesystem", im->fstype, &first);
		kv_str(b, "mount_point", im->mount_point, &first);
		kv_u64(b, "total_bytes", rm->total_bytes, &first);
		kv_u64(b, "used_bytes", used, &first);
		kv_f64(b, "used_pct",
		       rm->total_bytes ? (double)used / (double)rm->total_bytes * 100.0 : 0.0,
		       &first);
		rt_buf_putc(b, '}');
	}
	rt_buf_putc(b, ']');
}

static void kv_f64_or_null(struct rt_buf *b, const char *k, int have, double v, int *first)
{
	fld_key(b, k, first);
	if (have)
		rt_buf_f64_json(b, v);
	else
		rt_buf_puts(b, "null");
}

static void kv_i64_or_null(struct rt_buf *b, const char *k, int have, int64_t v, int *first)
{
	fld_key(b, k, first);
	if (have)
		rt_buf_i64(b, v);
	else
		rt_buf_puts(b, "null");
}

/* Both records carry value idx of section sec (rt 0.2 device values). */
static int both_have(const struct rt_derived *d, unsigned sec, unsigned idx)
{
	return rt_record_has(d->cur.rec, sec, idx) && rt_record_has(d->prev.rec, sec, idx);
}

void fj_disks(struct rt_buf *b, const struct rt_derived *d, const struct rt_run_info *ri)
{
	(void)ri;
	rt_buf_putc(b, '[');
	const struct rt_record *c = d->cur.rec, *p = d->prev.rec;
	int ext = (c->h->flags & p->h->flags & RT_REC_HAS_DISKSTATS) &&
	          both_have(d, RT_SEC_DISK, RT_NVALS_DISK - 1) && d->dt > 0;
	for (unsigned i = 0; i < c->h->ndisk; i++) {
		const struct rt_inv_disk *id = &d->cur.inv->disk[i];
		const struct rt_rec_disk *rd = &c->disk[i];
		int j = ext ? fld_prev_slot_disk(d, i) : -1;
		const struct rt_rec_disk *pd = j >= 0 ? &p->disk[j] : NULL;
		uint64_t rio = pd ? fld_delta_reset(rd->rd_ios, pd->rd_ios) : 0;
		uint64_t wio = pd ? fld_delta_reset(rd->wr_ios, pd->wr_ios) : 0;
		double ms = d->dt * 1000.0;
		int first = 1;
		if (i)
			rt_buf_putc(b, ',');
		rt_buf_putc(b, '{');
		kv_f64_or_null(b, "avg_queue_depth", pd != NULL,
		               pd ? (double)fld_delta_reset(rd->weighted_ms, pd->weighted_ms) / ms
		                  : 0,
		               &first);
		double busy = pd ? (double)fld_delta_reset(rd->io_ms, pd->io_ms) / ms * 100.0 : 0;
		kv_f64_or_null(b, "busy_pct", pd != NULL, busy > 100.0 ? 100.0 : busy, &first);
		fld_key(b, "capacity_bytes", &first);
		if (id->has_capacity)
			rt_buf_u64(b, id->capacity_bytes);
		else
			rt_buf_puts(b, "null");
		kv_str(b, "device", id->name, &first);
		kv_str(b, "device_type", disk_type_name(id->type), &first);
		kv_str(b, "model", id->model, &first);
		fld_key(b, "mounts", &first);
		j_mounts(b, d, i);
		kv_f64(b, "read_bytes_per_sec",
		       d->dt > 0 ? (double)d->disk_rd_delta[i] / d->dt : 0.0, &first);
		kv_u64(b, "read_bytes_total", rd->rd_sectors * 512, &first);
		/* latency: time spent over operations done (none: no latency) */
		kv_f64_or_null(
		    b, "read_latency_ms", pd && rio,
		    rio ? (double)fld_delta_reset(rd->rd_ms, pd->rd_ms) / (double)rio : 0, &first);
		kv_f64_or_null(b, "read_ops_per_sec", pd != NULL, (double)rio / d->dt, &first);
		kv_str(b, "serial", id->serial, &first);
		kv_str(b, "vendor", id->vendor, &first);
		kv_f64(b, "write_bytes_per_sec",
		       d->dt > 0 ? (double)d->disk_wr_delta[i] / d->dt : 0.0, &first);
		kv_u64(b, "write_bytes_total", rd->wr_sectors * 512, &first);
		kv_f64_or_null(
		    b, "write_latency_ms", pd && wio,
		    wio ? (double)fld_delta_reset(rd->wr_ms, pd->wr_ms) / (double)wio : 0, &first);
		kv_f64_or_null(b, "write_ops_per_sec", pd != NULL, (double)wio / d->dt, &first);
		rt_buf_putc(b, '}');
	}
	rt_buf_putc(b, ']');
}

void fj_nics(struct rt_buf *b, const struct rt_derived *d, const struct rt_run_info *ri)
{
	(void)ri;
	rt_buf_putc(b, '[');
	const struct rt_record *c = d->cur.rec, *p = d->prev.rec;
	int ext = (c->h->flags & p->h->flags & RT_REC_HAS_NETDEV) &&
	          both_have(d, RT_SEC_NIC, RT_NVALS_NIC - 1) && d->dt > 0;
	for (unsigned i = 0; i < c->h->nnic; i++) {
		const struct rt_inv_nic *in = &d->cur.inv->nic[i];
		const struct rt_rec_nic *rn = &c->nic[i];
		int j = ext ? fld_prev_slot_nic(d, i) : -1;
		const struct rt_rec_nic *pn = j >= 0 ? &p->nic[j] : NULL;
#define NIC_DELTA(f) (pn ? fld_delta_i64(rn->f, pn->f, 1) : 0)
		int first = 1;
		if (i)
			rt_buf_putc(b, ',');
		rt_buf_putc(b, '{');
		kv_str(b, "driver", in->driver, &first);
		kv_str(b, "interface", in->name, &first);
		kv_str(b, "mac_address", in->mac, &first);
		fld_key(b, "mtu", &first);
		if (in->has_mtu)
			rt_buf_u64(b, in->mtu);
		else
			rt_buf_puts(b, "null");
		kv_str(b, "operstate", in->operstate, &first);
		kv_f64(b, "rx_bytes_per_sec", d->dt > 0 ? (double)d->nic_rx_delta[i] / d->dt : 0.0,
		       &first);
		kv_u64(b, "rx_bytes_total", rn->rx_bytes, &first);
		kv_i64_or_null(b, "rx_dropped", pn != NULL, NIC_DELTA(rx_drop), &first);
		kv_i64_or_null(b, "rx_errors", pn != NULL, NIC_DELTA(rx_errs), &first);
		kv_f64_or_null(b, "rx_packets_per_sec", pn != NULL,
		               (double)NIC_DELTA(rx_packets) / d->dt, &first);
		fld_key(b, "speed_mbps", &first);
		if (in->has_speed)
			rt_buf_i64(b, in->speed_mbps);
		else
			rt_buf_puts(b, "null");
		kv_f64(b, "tx_bytes_per_sec", d->dt > 0 ? (double)d->nic_tx_delta[i] / d->dt : 0.0,
		       &first);
		kv_u64(b, "tx_bytes_total", rn->tx_bytes, &first);
		kv_i64_or_null(b, "tx_dropped", pn != NULL, NIC_DELTA(tx_drop), &first);
		kv_i64_or_null(b, "tx_errors", pn != NULL, NIC_DELTA(tx_errs), &first);
		kv_f64_or_null(b, "tx_packets_per_sec", pn != NULL,
		               (double)NIC_DELTA(tx_packets) / d->dt, &first);
#undef NIC_DELTA
		rt_buf_putc(b, '}');
	}
	rt_buf_putc(b, ']');
}

/* The tracked tree on this GPU (records since rt 0.4 of a tree): its
 * share of the GPU busy, whether it used it, its VRAM. */
static void j_gpu_job(struct rt_buf *b, const struct rt_rec_gpu *g, int *first)
{
	kv_f64(b, "process_usage", g->job_busy_x100 / 10000.0, first);
	kv_u64(b, "process_utilized", g->job_on ? 1 : 0, first);
	kv_f64(b, "process_vram_mib", (double)g->job_vram_bytes / 1048576.0, first);
}

/* NVML's clocks throttle (event) reasons as short names; unknown bits as
 * "bit_N" so nothing is hidden. */
static void j_throttle(struct rt_buf *b, uint64_t bits)
{
	static const char *const names[] = {
	    "gpu_idle",      "applications_clocks", "sw_power_cap",        "hw_slowdown",
	    "sync_boost",    "sw_thermal_slowdown", "hw_thermal_slowdown", "hw_power_brake",
	    "display_clocks"};
	rt_buf_putc(b, '[');
	int first = 1;
	for (unsigned k = 0; k < 64; k++) {
		if (!(bits & (1ull << k)))
			continue;
		if (!first)
			rt_buf_putc(b, ',');
		first = 0;
		if (k < RT_ARRAY_LEN(names)) {
			rt_buf_putc(b, '"');
			rt_buf_puts(b, names[k]);
			rt_buf_putc(b, '"');
		} else {
			rt_buf_puts(b, "\"bit_");
			rt_buf_u64(b, k);
			rt_buf_putc(b, '"');
		}
	}
	rt_buf_putc(b, ']');
}

/* A GPU's identity: cores, detail, type (the keys before energy_joules). */
static void j_gpu_identity(struct rt_buf *b, const struct rt_inv_gpu *ig, int *first)
{
	int f2 = 1;
	kv_i64_or_null(b, "core_count", ig->core_count != 0, ig->core_count, first);
	fld_key(b, "detail", first);
	rt_buf_putc(b, '{');
	if (ig->driver_version[0])
		kv_str(b, "driver_version", ig->driver_version, &f2);
	if (ig->pci_bus_id[0])
		kv_str(b, "pci_bus_id", ig->pci_bus_id, &f2);
	rt_buf_putc(b, '}');
	kv_str(b, "device_type", "GPU", first);
}

/* Energy over the interval: the same GPU slot in both records, both of
 * which read the counter. */
static void j_gpu_energy(struct rt_buf *b, const struct rt_derived *d, unsigned i, int *first)
{
	const struct rt_rec_gpu *g = &d->cur.rec->gpu[i];
	const struct rt_record *pr = d->prev.rec;
	const struct rt_rec_gpu *pg =
	    pr->h->inv_gen == d->cur.rec->h->inv_gen && i < pr->h->ngpu &&
	            rt_record_has(pr, RT_SEC_GPU, RT_GPU_V_throttle_reasons)
	        ? &pr->gpu[i]
	        : NULL;
	int energy =
	    pg && (g->valid & pg->valid & RT_GPU_V_ENERGY) && g->energy_mj >= pg->energy_mj;
	kv_f64_or_null(b, "energy_joules", energy,
	               energy ? (double)(g->energy_mj - pg->energy_mj) / 1000.0 : 0, first);
}

static void j_gpu_vram(struct rt_buf *b, const struct rt_rec_gpu *g, int *first)
{
	if (g->valid & RT_GPU_V_MEM) {
		kv_u64(b, "vram_total_bytes", g->vram_total, first);
		kv_u64(b, "vram_used_bytes", g->vram_used, first);
		kv_f64(b, "vram_used_pct",
		       g->vram_total ? (double)g->vram_used / (double)g->vram_total * 100.0 : 0.0,
		       first);
	} else {
		kv_str(b, "vram_total_bytes", NULL, first);
		kv_str(b, "vram_used_bytes", NULL, first);
		kv_str(b, "vram_used_pct", NULL, first);
	}
}

/* One GPU's object, its keys sorted. */
static void j_gpu(struct rt_buf *b, const struct rt_derived *d, unsigned i)
{
	const struct rt_inv_gpu *ig = &d->cur.inv->gpu[i];
	const struct rt_rec_gpu *g = &d->cur.rec->gpu[i];
	const struct rt_record *c = d->cur.rec;
	int first = 1;
	rt_buf_putc(b, '{');
	j_gpu_identity(b, ig, &first);
	j_gpu_energy(b, d, i, &first);
	kv_i64_or_null(b, "fan_speed_pct", (g->valid & RT_GPU_V_FAN) != 0, g->fan_pct, &first);
	kv_i64_or_null(b, "frequency_mhz", (g->valid & RT_GPU_V_CLOCK) != 0, g->clock_mhz, &first);
	kv_str(b, "host_id", ig->host_id, &first);
	if (rt_record_has(c, RT_SEC_GPU, RT_GPU_V_max_clock_mhz) && (g->valid & RT_GPU_V_MAX_CLOCK))
		kv_u64(b, "max_frequency_mhz", g->max_clock_mhz, &first);
	kv_i64_or_null(b, "memory_clock_mhz", (g->valid & RT_GPU_V_MEM_CLOCK) != 0,
	               g->mem_clock_mhz, &first);
	kv_str(b, "name", ig->name, &first);
	/* NVML counts PCIe throughput in KB/s (of 1024 bytes) */
	kv_f64_or_null(b, "pcie_rx_bytes_per_sec", (g->valid & RT_GPU_V_PCIE) != 0,
	               g->pcie_rx_kbps * 1024.0, &first);
	kv_f64_or_null(b, "pcie_tx_bytes_per_sec", (g->valid & RT_GPU_V_PCIE) != 0,
	               g->pcie_tx_kbps * 1024.0, &first);
	kv_f64_or_null(b, "power_watts", (g->valid & RT_GPU_V_POWER) != 0, g->power_mw / 1000.0,
	               &first);
	if (rt_record_has(c, RT_SEC_GPU, RT_GPU_V_job_on) && (g->valid & RT_GPU_V_JOB))
		j_gpu_job(b, g, &first);
	kv_i64_or_null(b, "temperature_celsius", (g->valid & RT_GPU_V_TEMP) != 0, g->temp_c,
	               &first);
	fld_key(b, "throttle_reasons", &first);
	if (g->valid & RT_GPU_V_THROTTLE)
		j_throttle(b, g->throttle_reasons);
	else
		rt_buf_puts(b, "null");
	kv_f64_or_null(b, "utilization_pct", (g->valid & RT_GPU_V_UTIL) != 0, (double)g->util_pct,
	               &first);
	kv_str(b, "uuid", ig->uuid, &first);
	j_gpu_vram(b, g, &first);
	rt_buf_putc(b, '}');
}

void fj_gpus(struct rt_buf *b, const struct rt_derived *d, const struct rt_run_info *ri)
{
	(void)ri;
	rt_buf_putc(b, '[');
	for (unsigned i = 0; i < d->cur.rec->h->ngpu; i++) {
		if (i)
			rt_buf_putc(b, ',');
		j_gpu(b, d, i);
	}
	rt_buf_putc(b, ']');
}
