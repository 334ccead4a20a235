/*
 * fields.c - derivation of output fields and the one table that drives
 * JSON Lines and CSV.
 *
 * Adding a metric: collect it into the record, derive it in rt_derive(),
 * add one row to `fields` below. JSON key order is computed from the table
 * (keys sorted at every level, as the reference tool prints them); CSV
 * column order is the table order.
 */
#include "rt/fields.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "rt/common.h"

/* ---- derivation ------------------------------------------------------- */

static uint64_t delta(uint64_t cur, uint64_t prev)
{
	return cur >= prev ? cur - prev : 0;
}

/* Counter delta across a device reset: the new counter started from 0. */
static uint64_t delta_reset(uint64_t cur, uint64_t prev)
{
	return cur >= prev ? cur - prev : cur;
}

/* A counter's change in units of `unit` bytes as a signed total, held at
 * INT64_MAX: a damaged record can hold any value, and no sum of them may
 * overflow. */
static int64_t delta_i64(uint64_t cur, uint64_t prev, uint64_t unit)
{
	uint64_t d = delta_reset(cur, prev);
	return d > (uint64_t)INT64_MAX / unit ? INT64_MAX : (int64_t)(d * unit);
}

static int64_t add_held(int64_t a, int64_t b) /* a, b >= 0 */
{
	return b > INT64_MAX - a ? INT64_MAX : a + b;
}

static int prev_slot_disk(const struct rt_derived *d, unsigned i)
{
	if (d->prev.rec->h->inv_gen == d->cur.rec->h->inv_gen && i < d->prev.rec->h->ndisk)
		return (int)i;
	int j = rt_inventory_find_disk(d->prev.inv, d->cur.inv->disk[i].name);
	return j < (int)d->prev.rec->h->ndisk ? j : -1;
}

static int prev_slot_nic(const struct rt_derived *d, unsigned i)
{
	if (d->prev.rec->h->inv_gen == d->cur.rec->h->inv_gen && i < d->prev.rec->h->nnic)
		return (int)i;
	int j = rt_inventory_find_nic(d->prev.inv, d->cur.inv->nic[i].name);
	return j < (int)d->prev.rec->h->nnic ? j : -1;
}

static int prev_slot_cpu(const struct rt_derived *d, unsigned i)
{
	if (d->prev.rec->h->inv_gen == d->cur.rec->h->inv_gen && i < d->prev.rec->h->ncpu)
		return (int)i;
	for (unsigned j = 0; j < d->prev.inv->ncpu && j < d->prev.rec->h->ncpu; j++)
		if (d->prev.inv->cpu_id[j] == d->cur.inv->cpu_id[i])
			return (int)j;
	return -1;
}

int rt_net_counted(const struct rt_inventory *inv, unsigned i)
{
	if (strcmp(inv->nic[i].name, "lo") == 0)
		return 0;
	for (unsigned k = 0; k < inv->nnic; k++)
		if (inv->nic[k].physical)
			return inv->nic[i].physical;
	return 1;
}

static void derive_cpu(struct rt_derived *d)
{
	const struct rt_record *c = d->cur.rec, *p = d->prev.rec;
	uint32_t hz = d->cur.inv->hz ? d->cur.inv->hz : 100;
	d->has_cpu = (c->h->flags & p->h->flags & RT_REC_HAS_CPU) != 0;
	if (d->has_cpu) {
		uint64_t tot = 0;
		for (int f = 0; f < RT_CPU_NFIELDS; f++)
			tot += delta(c->sys->cpu[f], p->sys->cpu[f]);
		uint64_t idle = delta(c->sys->cpu[RT_CPU_IDLE], p->sys->cpu[RT_CPU_IDLE]) +
		                delta(c->sys->cpu[RT_CPU_IOWAIT], p->sys->cpu[RT_CPU_IOWAIT]);
		unsigned n = c->h->ncpu ? c->h->ncpu : 1;
		d->cpu_util =
		    tot ? (double)(tot - (idle > tot ? tot : idle)) / (double)tot * n : 0.0;
		d->utime = (double)(delta(c->sys->cpu[RT_CPU_USER], p->sys->cpu[RT_CPU_USER]) +
		                    delta(c->sys->cpu[RT_CPU_NICE], p->sys->cpu[RT_CPU_NICE])) /
		           hz;
		d->stime =
		    (double)delta(c->sys->cpu[RT_CPU_SYSTEM], p->sys->cpu[RT_CPU_SYSTEM]) / hz;
	}
	for (unsigned i = 0; i < c->h->ncpu; i++) {
		int j = prev_slot_cpu(d, i);
		d->core_pct[i] = 0.0;
		if (j < 0)
			continue;
		uint64_t t = delta(c->cpu[i].total, p->cpu[j].total);
		uint64_t idle = delta(c->cpu[i].idle, p->cpu[j].idle);
		if (t)
			d->core_pct[i] = (double)(t - (idle > t ? t : idle)) / (double)t * 100.0;
	}
	d->has_nprocs = (c->h->flags & RT_REC_HAS_NPROCS) != 0;
	d->nprocs = c->sys->nprocs;
	d->has_load =
	    (c->h->flags & RT_REC_HAS_LOAD) && rt_record_has(c, RT_SEC_SYSTEM, RT_SYS_V_LOAD_15M);
	d->load_1m = c->sys->load_x100[0] / 100.0;
	d->load_5m = c->sys->load_x100[1] / 100.0;
	d->load_15m = c->sys->load_x100[2] / 100.0;
	if (d->has_cpu) {
		d->iowait =
		    (double)delta(c->sys->cpu[RT_CPU_IOWAIT], p->sys->cpu[RT_CPU_IOWAIT]) / hz;
		d->steal = (double)delta(c->sys->cpu[RT_CPU_STEAL], p->sys->cpu[RT_CPU_STEAL]) / hz;
		d->irq = (double)(delta(c->sys->cpu[RT_CPU_IRQ], p->sys->cpu[RT_CPU_IRQ]) +
		                  delta(c->sys->cpu[RT_CPU_SOFTIRQ], p->sys->cpu[RT_CPU_SOFTIRQ])) /
		         hz;
	}
	d->has_running = (c->h->flags & RT_REC_HAS_CPU) != 0;
	d->procs_running = c->sys->procs_running;
	d->has_cgroup = (c->h->flags & p->h->flags & RT_REC_HAS_CGROUP) != 0;
	if (d->has_cgroup) {
		d->cg_usage_secs =
		    (double)delta(c->sys->cg_usage_usec, p->sys->cg_usage_usec) / 1e6;
		double limit = c->h->ncpu ? c->h->ncpu : 1;
		if ((c->h->flags & RT_REC_HAS_CG_QUOTA) && c->sys->cg_quota_usec > 0 &&
		    c->sys->cg_period_usec > 0)
			limit = (double)c->sys->cg_quota_usec / (double)c->sys->cg_period_usec;
		d->cg_util_pct = d->dt > 0 ? d->cg_usage_secs / d->dt / limit * 100.0 : 0.0;
	}
}

static void derive_mem(struct rt_derived *d)
{
	const struct rt_record *c = d->cur.rec;
	d->has_mem = (c->h->flags & RT_REC_HAS_MEM) != 0;
	if (!d->has_mem)
		return;
	const uint64_t *m = c->sys->mem_kb;
	uint64_t avail = m[RT_MEM_AVAILABLE];
	uint64_t used = m[RT_MEM_TOTAL] > avail ? m[RT_MEM_TOTAL] - avail : 0;
	uint64_t swap_used = m[RT_MEM_SWAP_TOTAL] > m[RT_MEM_SWAP_FREE]
	                         ? m[RT_MEM_SWAP_TOTAL] - m[RT_MEM_SWAP_FREE]
	                         : 0;
	d->mem_total = (int64_t)(m[RT_MEM_TOTAL] / 1024);
	d->mem_free = (int64_t)(m[RT_MEM_FREE] / 1024);
	d->mem_avail = (int64_t)(avail / 1024);
	d->mem_used = (int64_t)(used / 1024);
	d->mem_buffers = (int64_t)(m[RT_MEM_BUFFERS] / 1024);
	d->mem_cached = (int64_t)((m[RT_MEM_CACHED] + m[RT_MEM_SRECLAIMABLE]) / 1024);
	d->mem_active = (int64_t)(m[RT_MEM_ACTIVE] / 1024);
	d->mem_inactive = (int64_t)(m[RT_MEM_INACTIVE] / 1024);
	d->swap_total = (int64_t)(m[RT_MEM_SWAP_TOTAL] / 1024);
	d->swap_used = (int64_t)(swap_used / 1024);
	d->mem_used_pct = m[RT_MEM_TOTAL] ? (double)used / (double)m[RT_MEM_TOTAL] * 100.0 : 0.0;
	d->swap_used_pct =
	    m[RT_MEM_SWAP_TOTAL] ? (double)swap_used / (double)m[RT_MEM_SWAP_TOTAL] * 100.0 : 0.0;
}

/* Saturation values of the system section (rt 0.2). A bit of ext_valid
 * is clear in records that do not carry the value (older rt, a kernel
 * without the file), so "both records have it" is one mask. */
static void derive_saturation(struct rt_derived *d)
{
	const struct rt_rec_system *c = d->cur.rec->sys, *p = d->prev.rec->sys;
	uint64_t both = c->ext_valid & p->ext_valid;
	if ((d->has_ctxt = (both & RT_SYS_X_CTXT) != 0))
		d->ctxt = (int64_t)delta(c->ctxt, p->ctxt);
	if ((d->has_forks = (both & RT_SYS_X_FORKS) != 0))
		d->forks = (int64_t)delta(c->forks, p->forks);
	if ((d->has_blocked = (c->ext_valid & RT_SYS_X_BLOCKED) != 0))
		d->procs_blocked = c->procs_blocked;
	static const uint64_t psi_bit[RT_PSI_N] = {
	    RT_SYS_X_PSI_CPU, RT_SYS_X_PSI_MEM, RT_SYS_X_PSI_MEM, RT_SYS_X_PSI_IO, RT_SYS_X_PSI_IO};
	for (int i = 0; i < RT_PSI_N; i++) {
		d->has_psi[i] = (both & psi_bit[i]) != 0 && d->dt > 0;
		if (d->has_psi[i]) {
			double pct =
			    (double)delta(c->psi_us[i], p->psi_us[i]) / (d->dt * 1e6) * 100.0;
			d->psi_pct[i] = pct > 100.0 ? 100.0 : pct;
		}
	}
	if ((d->has_majflt = (both & RT_SYS_X_MAJFLT) != 0))
		d->majflt = (int64_t)delta(c->majflt, p->majflt);
	if ((d->has_swap = (both & RT_SYS_X_SWAP) != 0)) {
		d->swap_in = (int64_t)delta(c->swap_in_bytes, p->swap_in_bytes);
		d->swap_out = (int64_t)delta(c->swap_out_bytes, p->swap_out_bytes);
	}
	if ((d->has_oom = (both & RT_SYS_X_OOM) != 0))
		d->oom_kills = (int64_t)delta(c->oom_kills, p->oom_kills);
	if ((d->has_dirty = (c->ext_valid & RT_SYS_X_DIRTY) != 0))
		d->dirty_mib = (int64_t)(c->dirty_kb / 1024);
	/* the job's cgroup: gauges from cur, the throttled time over the interval */
	if ((d->has_cg_mem = (c->ext_valid & RT_SYS_X_CG_MEM) != 0)) {
		d->cg_mem_used_mib = (int64_t)(c->cg_mem_used >> 20);
		d->has_cg_limit = c->cg_mem_limit >= 0;
		d->cg_mem_limit_mib = c->cg_mem_limit >> 20;
	}
	if ((d->has_cg_peak = (c->ext_valid & RT_SYS_X_CG_PEAK) != 0))
		d->cg_mem_peak_mib = (int64_t)(c->cg_mem_peak >> 20);
	if ((d->has_cg_oom = (c->ext_valid & RT_SYS_X_CG_OOM) != 0))
		d->cg_oom_kills = (int64_t)c->cg_oom_kills;
	if ((d->has_cg_throttle = (both & RT_SYS_X_CG_THROTTLE) != 0))
		d->cg_throttled_secs =
		    (double)delta(c->cg_throttled_usec, p->cg_throttled_usec) / 1e6;
	if ((d->has_cg_pids = (c->ext_valid & RT_SYS_X_CG_PIDS) != 0)) {
		d->cg_pids = (int64_t)c->cg_pids;
		d->has_cg_pids_max = c->cg_pids_max >= 0;
		d->cg_pids_max = c->cg_pids_max;
	}
	d->has_cg_cpu_limit = (c->ext_valid & RT_SYS_X_CG_CPU) && c->cg_cpu_quota_usec > 0 &&
	                      c->cg_cpu_period_usec > 0;
	if (d->has_cg_cpu_limit)
		d->cg_cpu_limit_cores =
		    (double)c->cg_cpu_quota_usec / (double)c->cg_cpu_period_usec;
}

static void derive_devices(struct rt_derived *d)
{
	const struct rt_record *c = d->cur.rec, *p = d->prev.rec;
	int both_disk = (c->h->flags & p->h->flags & RT_REC_HAS_DISKSTATS) != 0;
	uint64_t rio = 0, rms = 0, wio = 0, wms = 0;
	for (unsigned i = 0; i < c->h->ndisk; i++) {
		int j = both_disk ? prev_slot_disk(d, i) : -1;
		/* a device first seen in this interval has no rate yet */
		d->disk_rd_delta[i] =
		    j < 0 ? 0 : delta_i64(c->disk[i].rd_sectors, p->disk[j].rd_sectors, 512);
		d->disk_wr_delta[i] =
		    j < 0 ? 0 : delta_i64(c->disk[i].wr_sectors, p->disk[j].wr_sectors, 512);
		if (!d->cur.inv->disk[i].stacked) {
			d->disk_read = add_held(d->disk_read, d->disk_rd_delta[i]);
			d->disk_write = add_held(d->disk_write, d->disk_wr_delta[i]);
			if (j >= 0 && rt_record_has(c, RT_SEC_DISK, RT_NVALS_DISK - 1) &&
			    rt_record_has(p, RT_SEC_DISK, RT_NVALS_DISK - 1)) {
				rio += delta_reset(c->disk[i].rd_ios, p->disk[j].rd_ios);
				rms += delta_reset(c->disk[i].rd_ms, p->disk[j].rd_ms);
				wio += delta_reset(c->disk[i].wr_ios, p->disk[j].wr_ios);
				wms += delta_reset(c->disk[i].wr_ms, p->disk[j].wr_ms);
			}
		}
	}
	/* latency over every disk's completed operations: time spent / ops */
	if ((d->has_disk_rlat = rio > 0))
		d->disk_rlat_ms = (double)rms / (double)rio;
	if ((d->has_disk_wlat = wio > 0))
		d->disk_wlat_ms = (double)wms / (double)wio;
	uint64_t total = 0, avail = 0, free = 0;
	for (unsigned i = 0; i < c->h->nmount; i++) {
		total += c->mount[i].total_bytes;
		avail += c->mount[i].avail_bytes;
		free += c->mount[i].free_bytes > c->mount[i].avail_bytes ? c->mount[i].free_bytes
		                                                         : c->mount[i].avail_bytes;
	}
	d->space_total_gb = (double)total / 1e9;
	d->space_free_gb = (double)avail / 1e9;
	d->space_used_gb = d->space_total_gb - d->space_free_gb;
	d->space_df_used_gb = (double)(total > free ? total - free : 0) / 1e9;
	d->space_reserved_gb = (double)(free - avail) / 1e9;
	int both_net = (c->h->flags & p->h->flags & RT_REC_HAS_NETDEV) != 0;
	for (unsigned i = 0; i < c->h->nnic; i++) {
		int j = both_net ? prev_slot_nic(d, i) : -1;
		d->nic_rx_delta[i] =
		    j < 0 ? 0 : delta_i64(c->nic[i].rx_bytes, p->nic[j].rx_bytes, 1);
		d->nic_tx_delta[i] =
		    j < 0 ? 0 : delta_i64(c->nic[i].tx_bytes, p->nic[j].tx_bytes, 1);
		if (rt_net_counted(d->cur.inv, i)) {
			d->net_rx = add_held(d->net_rx, d->nic_rx_delta[i]);
			d->net_tx = add_held(d->net_tx, d->nic_tx_delta[i]);
		}
	}
	for (unsigned i = 0; i < c->h->ngpu; i++) {
		const struct rt_rec_gpu *g = &c->gpu[i];
		if (g->valid & RT_GPU_V_UTIL) {
			d->gpu_usage += g->util_pct / 100.0;
			d->gpu_utilized += g->util_pct > 0;
		}
		if (g->valid & RT_GPU_V_MEM)
			d->gpu_vram_mib += (double)g->vram_used / 1048576.0;
		/* a power cap, a thermal limit or a hardware slowdown held it back
		 * (idle, application clocks, sync boost and display are not that) */
		if (rt_record_has(c, RT_SEC_GPU, RT_NVALS_GPU - 1) &&
		    (g->valid & RT_GPU_V_THROTTLE)) {
			d->has_gpu_throttle = 1;
			d->gpus_throttled += (g->throttle_reasons & 0xECull) != 0;
		}
	}
}

static void derive_proc(struct rt_derived *d)
{
	const struct rt_record *c = d->cur.rec, *p = d->prev.rec;
	d->has_proc = (c->h->flags & RT_REC_HAS_PROCESS) != 0;
	if (!d->has_proc)
		return;
	uint32_t hz = d->cur.inv->hz ? d->cur.inv->hz : 100;
	/* pid 0: a wrapped command not started yet, its tree totals are 0 */
	int prev_ok = (p->h->flags & RT_REC_HAS_PROCESS) &&
	              (p->proc->pid == c->proc->pid || p->proc->pid == 0);
	uint64_t du = prev_ok ? delta(c->proc->utime_us, p->proc->utime_us) : 0;
	uint64_t ds = prev_ok ? delta(c->proc->stime_us, p->proc->stime_us) : 0;
	/* The last, partial interval ends with the exact rusage of the reaped
	 * command, while earlier samples saw /proc ticks rounded down: the
	 * rounding (a tick or two per process) would land in a few
	 * milliseconds as a spike of "cores". The tree cannot have used more
	 * CPU than the host did in that interval (+ 0.1 core for the host's
	 * own tick sampling), so its cores are capped there; its seconds are
	 * not: they are the exact remainder, so the run's CPU seconds add up
	 * to the kernel's total for the tree. */
	int exact = (c->h->flags & RT_REC_EXACT_CPU_SECS) != 0;
	if (exact) {
		d->proc_utime = (double)du / 1e6;
		d->proc_stime = (double)ds / 1e6;
	}
	if ((c->h->flags & RT_REC_FINAL) && (c->h->flags & p->h->flags & RT_REC_HAS_CPU)) {
		uint64_t busy = 0, all = 0;
		for (int f = 0; f < RT_CPU_NFIELDS; f++) {
			uint64_t x = delta(c->sys->cpu[f], p->sys->cpu[f]);
			all += x;
			if (f != RT_CPU_IDLE && f != RT_CPU_IOWAIT)
				busy += x;
		}
		/* host ticks are sampled too: allow 0.1 core of slack; in µs */
		busy += c->h->ncpu ? all / c->h->ncpu / 10 : 0;
		busy = busy * 1000000u / hz;
		if (du + ds > busy) {
			uint64_t keep_u = du + ds ? du * busy / (du + ds) : 0;
			ds = busy - keep_u;
			du = keep_u;
		}
	}
	if (!exact) {
		d->proc_utime = (double)du / 1e6;
		d->proc_stime = (double)ds / 1e6;
	}
	d->proc_pid = c->proc->pid;
	d->proc_children = c->proc->nprocs ? (int64_t)c->proc->nprocs - 1 : 0;
	/* cores in the same tick domain as the system figure: tree ticks over
	 * the ticks that elapsed per CPU (wall time when /proc/stat is missing) */
	uint64_t tot = 0;
	if (c->h->flags & p->h->flags & RT_REC_HAS_CPU)
		for (int f = 0; f < RT_CPU_NFIELDS; f++)
			tot += delta(c->sys->cpu[f], p->sys->cpu[f]);
	if (tot && c->h->ncpu)
		d->proc_cores = (double)(du + ds) / 1e6 / ((double)tot / c->h->ncpu / hz);
	else
		d->proc_cores = d->dt > 0 ? (double)(du + ds) / 1e6 / d->dt : 0.0;
	d->proc_pss_mib = (int64_t)(c->proc->pss_kb / 1024);
	d->proc_rss_mib = (int64_t)(c->proc->rss_kb / 1024);
	d->proc_read = prev_ok ? (int64_t)delta(c->proc->read_bytes, p->proc->read_bytes) : 0;
	d->proc_write = prev_ok ? (int64_t)delta(c->proc->write_bytes, p->proc->write_bytes) : 0;
	d->proc_gpu_usage = c->proc->gpu_util_pct_x100 / 10000.0;
	d->proc_gpu_vram_mib = (double)c->proc->gpu_vram_bytes / 1048576.0;
	d->proc_gpu_utilized = c->proc->gpu_count;
	d->has_proc_ext = rt_record_has(c, RT_SEC_PROCESS, RT_NVALS_PROCESS - 1);
	d->proc_threads = (int64_t)c->proc->threads;
	d->has_proc_majflt =
	    d->has_proc_ext && prev_ok && rt_record_has(p, RT_SEC_PROCESS, RT_NVALS_PROCESS - 1);
	d->proc_majflt = d->has_proc_majflt ? (int64_t)delta(c->proc->majflt, p->proc->majflt) : 0;
	uint64_t cx = d->has_proc_ext ? c->proc->ext_valid : 0;
	uint64_t px = d->has_proc_majflt ? p->proc->ext_valid : 0;
	if ((d->has_proc_ctxt = (cx & px & RT_PROC_X_STATUS) != 0)) {
		d->proc_vcs = (int64_t)delta(c->proc->vol_ctxt, p->proc->vol_ctxt);
		d->proc_ivcs = (int64_t)delta(c->proc->invol_ctxt, p->proc->invol_ctxt);
	}
	if ((d->has_proc_peak = (cx & RT_PROC_X_STATUS) != 0))
		d->proc_peak_rss_mib = (int64_t)(c->proc->peak_rss_kb / 1024);
	if ((d->has_proc_fds = (cx & RT_PROC_X_FDS) != 0))
		d->proc_fds = (int64_t)c->proc->open_fds;
}

void rt_derive(const struct rt_view *prev, const struct rt_view *cur, struct rt_derived *d)
{
	/* zero the scalars; the per-device arrays are written before use */
	memset(d, 0, offsetof(struct rt_derived, core_pct));
	memset(&d->has_proc, 0, sizeof(*d) - offsetof(struct rt_derived, has_proc));
	d->prev = *prev;
	d->cur = *cur;
	const struct rt_rec_header *c = cur->rec->h, *p = prev->rec->h;
	d->seq = c->seq;
	d->wall_ns = c->wall_ns;
	d->dt = c->mono_ns > p->mono_ns ? (double)(c->mono_ns - p->mono_ns) / 1e9 : 0.0;
	d->has_interval = p->seq != 0;
	d->interval_ms =
	    c->mono_ns > p->mono_ns ? (int64_t)((c->mono_ns - p->mono_ns + 500000) / 1000000) : 0;
	d->timestamp_secs = (int64_t)(c->wall_ns / 1000000000ull);
	derive_cpu(d);
	derive_mem(d);
	derive_saturation(d);
	derive_devices(d);
	derive_proc(d);
}

/* ---- the field table -------------------------------------------------- */

enum section { S_TOP, S_CPU, S_MEM, S_PRESSURE, S_CGROUP, NSECTIONS };
enum kind { K_I64, K_F64, K_FN };

typedef void (*json_fn)(struct rt_buf *, const struct rt_derived *, const struct rt_run_info *);

struct field {
	const char *json; /* key in its section; NULL: CSV only */
	const char *csv;  /* CSV column; NULL: JSON only */
	enum section sec;
	enum kind kind;
	int prec;         /* CSV decimals of a K_F64 */
	size_t off;       /* value in struct rt_derived */
	size_t present;   /* int flag in struct rt_derived, or ALWAYS */
	json_fn fn;       /* K_FN: writes the JSON value */
	const char *xcsv; /* column appended by --csv-columns extended */
};

#define ALWAYS ((size_t)-1)
#define D(m) offsetof(struct rt_derived, m)

static void j_per_core(struct rt_buf *, const struct rt_derived *, const struct rt_run_info *);
static void j_disks(struct rt_buf *, const struct rt_derived *, const struct rt_run_info *);
static void j_nics(struct rt_buf *, const struct rt_derived *, const struct rt_run_info *);
static void j_gpus(struct rt_buf *, const struct rt_derived *, const struct rt_run_info *);
static void j_job(struct rt_buf *, const struct rt_derived *, const struct rt_run_info *);
static void j_pid(struct rt_buf *, const struct rt_derived *, const struct rt_run_info *);
static void j_version(struct rt_buf *, const struct rt_derived *, const struct rt_run_info *);
static void j_timestamp(struct rt_buf *, const struct rt_derived *, const struct rt_run_info *);
static void j_seq(struct rt_buf *, const struct rt_derived *, const struct rt_run_info *);

/* CSV columns in order (reference.md §3), then JSON-only rows. */
static const struct field fields[] = {
    {"timestamp_secs", "timestamp", S_TOP, K_I64, 0, D(timestamp_secs), ALWAYS, NULL, NULL},
    {"process_count", "system_processes", S_CPU, K_I64, 0, D(nprocs), D(has_nprocs), NULL, NULL},
    {"utime_secs", "system_utime", S_CPU, K_F64, 3, D(utime), ALWAYS, NULL, NULL},
    {"stime_secs", "system_stime", S_CPU, K_F64, 3, D(stime), ALWAYS, NULL, NULL},
    {"utilization_pct", "system_cpu_usage", S_CPU, K_F64, 4, D(cpu_util), ALWAYS, NULL, NULL},
    {"free_mib", "system_memory_free_mib", S_MEM, K_I64, 0, D(mem_free), D(has_mem), NULL, NULL},
    {"used_mib", "system_memory_used_mib", S_MEM, K_I64, 0, D(mem_used), D(has_mem), NULL, NULL},
    {"buffers_mib", "system_memory_buffers_mib", S_MEM, K_I64, 0, D(mem_buffers), D(has_mem), NULL,
     NULL},
    {"cached_mib", "system_memory_cached_mib", S_MEM, K_I64, 0, D(mem_cached), D(has_mem), NULL,
     NULL},
    {"active_mib", "system_memory_active_mib", S_MEM, K_I64, 0, D(mem_active), D(has_mem), NULL,
     NULL},
    {"inactive_mib", "system_memory_inactive_mib", S_MEM, K_I64, 0, D(mem_inactive), D(has_mem),
     NULL, NULL},
    {NULL, "system_disk_read_bytes", S_TOP, K_I64, 0, D(disk_read), ALWAYS, NULL, NULL},
    {NULL, "system_disk_write_bytes", S_TOP, K_I64, 0, D(disk_write), ALWAYS, NULL, NULL},
    {NULL, "system_disk_space_total_gb", S_TOP, K_F64, 6, D(space_total_gb), ALWAYS, NULL, NULL},
    {NULL, "system_disk_space_used_gb", S_TOP, K_F64, 6, D(space_used_gb), ALWAYS, NULL, NULL},
    {NULL, "system_disk_space_free_gb", S_TOP, K_F64, 6, D(space_free_gb), ALWAYS, NULL, NULL},
    {NULL, "system_net_recv_bytes", S_TOP, K_I64, 0, D(net_rx), ALWAYS, NULL, NULL},
    {NULL, "system_net_sent_bytes", S_TOP, K_I64, 0, D(net_tx), ALWAYS, NULL, NULL},
    {NULL, "system_gpu_usage", S_TOP, K_F64, 4, D(gpu_usage), ALWAYS, NULL, NULL},
    {NULL, "system_gpu_vram_mib", S_TOP, K_F64, 4, D(gpu_vram_mib), ALWAYS, NULL, NULL},
    {NULL, "system_gpu_utilized", S_TOP, K_I64, 0, D(gpu_utilized), ALWAYS, NULL, NULL},
    {NULL, "process_pid", S_TOP, K_I64, 0, D(proc_pid), D(has_proc), NULL, NULL},
    {"process_child_count", "process_children", S_CPU, K_I64, 0, D(proc_children), D(has_proc),
     NULL, NULL},
    {"process_utime_secs", "process_utime", S_CPU, K_F64, 4, D(proc_utime), D(has_proc), NULL,
     NULL},
    {"process_stime_secs", "process_stime", S_CPU, K_F64, 4, D(proc_stime), D(has_proc), NULL,
     NULL},
    {"process_cores_used", "process_cpu_usage", S_CPU, K_F64, 4, D(proc_cores), D(has_proc), NULL,
     NULL},
    {"process_pss_mib", "process_memory_mib", S_CPU, K_I64, 0, D(proc_pss_mib), D(has_proc), NULL,
     NULL},
    {"process_disk_read_bytes", "process_disk_read_bytes", S_CPU, K_I64, 0, D(proc_read),
     D(has_proc), NULL, NULL},
    {"process_disk_write_bytes", "process_disk_write_bytes", S_CPU, K_I64, 0, D(proc_write),
     D(has_proc), NULL, NULL},
    {"process_gpu_usage", "process_gpu_usage", S_CPU, K_F64, 4, D(proc_gpu_usage), D(has_proc),
     NULL, NULL},
    {"process_gpu_vram_mib", "process_gpu_vram_mib", S_CPU, K_F64, 4, D(proc_gpu_vram_mib),
     D(has_proc), NULL, NULL},
    {"process_gpu_utilized", "process_gpu_utilized", S_CPU, K_I64, 0, D(proc_gpu_utilized),
     D(has_proc), NULL, NULL},
    /* JSON only */
    {"actual_interval_ms", NULL, S_TOP, K_I64, 0, D(interval_ms), D(has_interval), NULL, NULL},
    {"job_name", NULL, S_TOP, K_FN, 0, 0, ALWAYS, j_job, NULL},
    {"tracked_pid", NULL, S_TOP, K_FN, 0, 0, ALWAYS, j_pid, NULL},
    {"resource-tracker-version", NULL, S_TOP, K_FN, 0, 0, ALWAYS, j_version, NULL},
    {"seq", NULL, S_TOP, K_FN, 0, 0, ALWAYS, j_seq, NULL},
    {"timestamp", NULL, S_TOP, K_FN, 0, 0, ALWAYS, j_timestamp, NULL},
    {"network", NULL, S_TOP, K_FN, 0, 0, ALWAYS, j_nics, NULL},
    {"disk", NULL, S_TOP, K_FN, 0, 0, ALWAYS, j_disks, NULL},
    {"gpu", NULL, S_TOP, K_FN, 0, 0, ALWAYS, j_gpus, NULL},
    {"per_core_pct", NULL, S_CPU, K_FN, 0, 0, ALWAYS, j_per_core, NULL},
    {"cgroup_usage_secs", NULL, S_CPU, K_F64, 0, D(cg_usage_secs), D(has_cgroup), NULL, NULL},
    {"cgroup_utilization_pct", NULL, S_CPU, K_F64, 0, D(cg_util_pct), D(has_cgroup), NULL, NULL},
    {"process_rss_mib", NULL, S_CPU, K_I64, 0, D(proc_rss_mib), D(has_proc), NULL, NULL},
    {"process_threads", NULL, S_CPU, K_I64, 0, D(proc_threads), D(has_proc_ext), NULL,
     "process_threads"},
    {"process_major_faults", NULL, S_CPU, K_I64, 0, D(proc_majflt), D(has_proc_majflt), NULL,
     "process_major_faults"},
    {"process_voluntary_ctx_switches", NULL, S_CPU, K_I64, 0, D(proc_vcs), D(has_proc_ctxt), NULL,
     "process_voluntary_ctx_switches"},
    {"process_involuntary_ctx_switches", NULL, S_CPU, K_I64, 0, D(proc_ivcs), D(has_proc_ctxt),
     NULL, "process_involuntary_ctx_switches"},
    {"process_peak_rss_mib", NULL, S_CPU, K_I64, 0, D(proc_peak_rss_mib), D(has_proc_peak), NULL,
     "process_peak_rss_mib"},
    {"process_open_fds", NULL, S_CPU, K_I64, 0, D(proc_fds), D(has_proc_fds), NULL,
     "process_open_fds"},
    {NULL, NULL, S_TOP, K_F64, 4, D(disk_rlat_ms), D(has_disk_rlat), NULL,
     "system_disk_read_latency_ms"},
    {NULL, NULL, S_TOP, K_F64, 4, D(disk_wlat_ms), D(has_disk_wlat), NULL,
     "system_disk_write_latency_ms"},
    {NULL, NULL, S_TOP, K_I64, 0, D(gpus_throttled), D(has_gpu_throttle), NULL,
     "system_gpus_throttled"},
    {"load_avg_1m", NULL, S_CPU, K_F64, 2, D(load_1m), D(has_load), NULL, "system_load_avg_1m"},
    {"load_avg_5m", NULL, S_CPU, K_F64, 2, D(load_5m), D(has_load), NULL, "system_load_avg_5m"},
    {"load_avg_15m", NULL, S_CPU, K_F64, 2, D(load_15m), D(has_load), NULL, "system_load_avg_15m"},
    {"total_mib", NULL, S_MEM, K_I64, 0, D(mem_total), D(has_mem), NULL, NULL},
    {"available_mib", NULL, S_MEM, K_I64, 0, D(mem_avail), D(has_mem), NULL, NULL},
    {"used_pct", NULL, S_MEM, K_F64, 0, D(mem_used_pct), D(has_mem), NULL, NULL},
    {"swap_total_mib", NULL, S_MEM, K_I64, 0, D(swap_total), D(has_mem), NULL, NULL},
    {"swap_used_mib", NULL, S_MEM, K_I64, 0, D(swap_used), D(has_mem), NULL, NULL},
    {"swap_used_pct", NULL, S_MEM, K_F64, 0, D(swap_used_pct), D(has_mem), NULL, NULL},
    /* saturation and pressure (rt 0.2) */
    {"iowait_secs", NULL, S_CPU, K_F64, 3, D(iowait), D(has_cpu), NULL, "system_iowait_secs"},
    {"steal_secs", NULL, S_CPU, K_F64, 3, D(steal), D(has_cpu), NULL, "system_steal_secs"},
    {"irq_secs", NULL, S_CPU, K_F64, 3, D(irq), D(has_cpu), NULL, "system_irq_secs"},
    {"context_switches", NULL, S_CPU, K_I64, 0, D(ctxt), D(has_ctxt), NULL,
     "system_context_switches"},
    {"forks", NULL, S_CPU, K_I64, 0, D(forks), D(has_forks), NULL, "system_forks"},
    {"procs_running", NULL, S_CPU, K_I64, 0, D(procs_running), D(has_running), NULL,
     "system_procs_running"},
    {"procs_blocked", NULL, S_CPU, K_I64, 0, D(procs_blocked), D(has_blocked), NULL,
     "system_procs_blocked"},
    {"cpu_some_pct", NULL, S_PRESSURE, K_F64, 4, D(psi_pct[RT_PSI_CPU_SOME]),
     D(has_psi[RT_PSI_CPU_SOME]), NULL, "system_pressure_cpu_some_pct"},
    {"memory_some_pct", NULL, S_PRESSURE, K_F64, 4, D(psi_pct[RT_PSI_MEM_SOME]),
     D(has_psi[RT_PSI_MEM_SOME]), NULL, "system_pressure_memory_some_pct"},
    {"memory_full_pct", NULL, S_PRESSURE, K_F64, 4, D(psi_pct[RT_PSI_MEM_FULL]),
     D(has_psi[RT_PSI_MEM_FULL]), NULL, "system_pressure_memory_full_pct"},
    {"io_some_pct", NULL, S_PRESSURE, K_F64, 4, D(psi_pct[RT_PSI_IO_SOME]),
     D(has_psi[RT_PSI_IO_SOME]), NULL, "system_pressure_io_some_pct"},
    {"io_full_pct", NULL, S_PRESSURE, K_F64, 4, D(psi_pct[RT_PSI_IO_FULL]),
     D(has_psi[RT_PSI_IO_FULL]), NULL, "system_pressure_io_full_pct"},
    {"major_faults", NULL, S_MEM, K_I64, 0, D(majflt), D(has_majflt), NULL, "system_major_faults"},
    {"swap_in_bytes", NULL, S_MEM, K_I64, 0, D(swap_in), D(has_swap), NULL, "system_swap_in_bytes"},
    {"swap_out_bytes", NULL, S_MEM, K_I64, 0, D(swap_out), D(has_swap), NULL,
     "system_swap_out_bytes"},
    {"oom_kills", NULL, S_MEM, K_I64, 0, D(oom_kills), D(has_oom), NULL, "system_oom_kills"},
    {"dirty_mib", NULL, S_MEM, K_I64, 0, D(dirty_mib), D(has_dirty), NULL, "system_dirty_mib"},
    {"memory_used_mib", NULL, S_CGROUP, K_I64, 0, D(cg_mem_used_mib), D(has_cg_mem), NULL,
     "system_cgroup_memory_used_mib"},
    {"memory_limit_mib", NULL, S_CGROUP, K_I64, 0, D(cg_mem_limit_mib), D(has_cg_limit), NULL,
     "system_cgroup_memory_limit_mib"},
    {"memory_peak_mib", NULL, S_CGROUP, K_I64, 0, D(cg_mem_peak_mib), D(has_cg_peak), NULL,
     "system_cgroup_memory_peak_mib"},
    {"oom_kills", NULL, S_CGROUP, K_I64, 0, D(cg_oom_kills), D(has_cg_oom), NULL,
     "system_cgroup_oom_kills"},
    {"cpu_limit_cores", NULL, S_CGROUP, K_F64, 4, D(cg_cpu_limit_cores), D(has_cg_cpu_limit), NULL,
     "system_cgroup_cpu_limit_cores"},
    {"cpu_throttled_secs", NULL, S_CGROUP, K_F64, 4, D(cg_throttled_secs), D(has_cg_throttle), NULL,
     "system_cgroup_cpu_throttled_secs"},
    {"pids_current", NULL, S_CGROUP, K_I64, 0, D(cg_pids), D(has_cg_pids), NULL,
     "system_cgroup_pids_current"},
    {"pids_max", NULL, S_CGROUP, K_I64, 0, D(cg_pids_max), D(has_cg_pids_max), NULL,
     "system_cgroup_pids_max"},
    /* disk space as df shows it: blocks - free, and the root reserve apart */
    {NULL, NULL, S_TOP, K_F64, 6, D(space_df_used_gb), ALWAYS, NULL,
     "system_disk_space_df_used_gb"},
    {NULL, NULL, S_TOP, K_F64, 6, D(space_reserved_gb), ALWAYS, NULL,
     "system_disk_space_reserved_gb"},
    /* sections are objects at the top level */
    {"cpu", NULL, S_TOP, K_FN, 0, 0, ALWAYS, NULL, NULL},
    {"memory", NULL, S_TOP, K_FN, 0, 0, ALWAYS, NULL, NULL},
    {"pressure", NULL, S_TOP, K_FN, 0, 0, ALWAYS, NULL, NULL},
    {"cgroup", NULL, S_TOP, K_FN, 0, 0, ALWAYS, NULL, NULL},
};

#define NFIELDS RT_ARRAY_LEN(fields)

/* JSON order: per section, indices of rows sorted by key. */
static int order[NSECTIONS][NFIELDS];
static int norder[NSECTIONS];
static int order_ready;

static int cmp_key(const void *a, const void *b)
{
	return strcmp(fields[*(const int *)a].json, fields[*(const int *)b].json);
}

static void build_order(void)
{
	for (int s = 0; s < NSECTIONS; s++) {
		norder[s] = 0;
		for (size_t i = 0; i < NFIELDS; i++)
			if (fields[i].json && (int)fields[i].sec == s)
				order[s][norder[s]++] = (int)i;
		qsort(order[s], (size_t)norder[s], sizeof(int), cmp_key);
	}
	order_ready = 1;
}

static int present(const struct field *f, const struct rt_derived *d)
{
	return f->present == ALWAYS || *(const int *)((const char *)d + f->present);
}

static void key(struct rt_buf *b, const char *k, int *first)
{
	if (!*first)
		rt_buf_putc(b, ',');
	*first = 0;
	rt_buf_putc(b, '"');
	rt_buf_puts(b, k);
	rt_buf_puts(b, "\":");
}

static void str_or_null(struct rt_buf *b, const char *s)
{
	if (s && *s)
		rt_buf_json_str(b, s);
	else
		rt_buf_puts(b, "null");
}

static void write_section(struct rt_buf *b, int sec, const struct rt_derived *d,
                          const struct rt_run_info *ri);

static void write_value(struct rt_buf *b, const struct field *f, const struct rt_derived *d,
                        const struct rt_run_info *ri)
{
	const char *base = (const char *)d;
	if (f->kind == K_FN) {
		if (f->fn)
			f->fn(b, d, ri);
		else
			write_section(b,
			              !strcmp(f->json, "cpu")        ? S_CPU
			              : !strcmp(f->json, "memory")   ? S_MEM
			              : !strcmp(f->json, "pressure") ? S_PRESSURE
			                                             : S_CGROUP,
			              d, ri);
	} else if (!present(f, d)) {
		rt_buf_puts(b, "null");
	} else if (f->kind == K_I64) {
		rt_buf_i64(b, *(const int64_t *)(base + f->off));
	} else {
		rt_buf_f64_json(b, *(const double *)(base + f->off));
	}
}

static void write_section(struct rt_buf *b, int sec, const struct rt_derived *d,
                          const struct rt_run_info *ri)
{
	int first = 1;
	rt_buf_putc(b, '{');
	for (int k = 0; k < norder[sec]; k++) {
		const struct field *f = &fields[order[sec][k]];
		/* actual_interval_ms is absent (not null) on the run's first sample */
		if (f->off == D(interval_ms) && f->kind == K_I64 && !d->has_interval)
			continue;
		key(b, f->json, &first);
		write_value(b, f, d, ri);
	}
	rt_buf_putc(b, '}');
}

void rt_format_json(struct rt_buf *out, const struct rt_derived *d, const struct rt_run_info *ri)
{
	if (!order_ready)
		build_order();
	write_section(out, S_TOP, d, ri);
	rt_buf_putc(out, '\n');
}

/* Row of CSV column i: the i-th row with a CSV column, in table order (the
 * order rt_format_csv prints them). */
static const struct field *csv_row(unsigned i)
{
	static const struct field *rows[RT_CSV_COLUMNS_X];
	static unsigned nrows;
	if (!nrows)
		for (int pass = 0; pass < 2; pass++) /* the 32, then the extended ones */
			for (size_t k = 0; k < NFIELDS && nrows < RT_CSV_COLUMNS_X; k++)
				if (pass ? fields[k].xcsv != NULL : fields[k].csv != NULL)
					rows[nrows++] = &fields[k];
	return i < nrows ? rows[i] : NULL;
}

const char *rt_csv_column_name(unsigned i)
{
	const struct field *f = csv_row(i);
	return f ? (i < RT_CSV_COLUMNS ? f->csv : f->xcsv) : NULL;
}

int rt_csv_column_value(const struct rt_derived *d, unsigned i, double *v)
{
	const struct field *f = csv_row(i);
	if (!f || !present(f, d))
		return 0;
	const char *at = (const char *)d + f->off;
	*v = f->kind == K_I64 ? (double)*(const int64_t *)at : *(const double *)at;
	return 1;
}

void rt_format_csv_header_x(struct rt_buf *out, int extended)
{
	int first = 1;
	for (int pass = 0; pass < 2; pass++) /* the 32, then the extended ones */
		for (size_t i = 0; i < NFIELDS; i++) {
			const struct field *f = &fields[i];
			if (pass ? !(extended && f->xcsv) : !f->csv)
				continue;
			if (!first)
				rt_buf_putc(out, ',');
			first = 0;
			rt_buf_puts(out, pass ? f->xcsv : f->csv);
		}
	rt_buf_putc(out, '\n');
}

void rt_format_csv_x(struct rt_buf *out, const struct rt_derived *d, const struct rt_run_info *ri,
                     int extended)
{
	(void)ri;
	int first = 1;
	const char *base = (const char *)d;
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < NFIELDS; i++) {
			const struct field *f = &fields[i];
			if (pass ? !(extended && f->xcsv) : !f->csv)
				continue;
			if (!first)
				rt_buf_putc(out, ',');
			first = 0;
			if (!present(f, d))
				continue; /* empty column */
			if (f->kind == K_I64)
				rt_buf_i64(out, *(const int64_t *)(base + f->off));
			else
				rt_buf_f64_fixed(out, *(const double *)(base + f->off), f->prec);
		}
	rt_buf_putc(out, '\n');
}

void rt_format_csv_header(struct rt_buf *out)
{
	rt_format_csv_header_x(out, 0);
}

void rt_format_csv(struct rt_buf *out, const struct rt_derived *d, const struct rt_run_info *ri)
{
	rt_format_csv_x(out, d, ri, 0);
}

/* ---- JSON writers for nested values ------------------------------------ */

static void j_job(struct rt_buf *b, const struct rt_derived *d, const struct rt_run_info *ri)
{
	(void)d;
	str_or_null(b, ri ? ri->job_name : NULL);
}

static void j_pid(struct rt_buf *b, const struct rt_derived *d, const struct rt_run_info *ri)
{
	(void)d;
	if (ri && ri->tracked_pid > 0)
		rt_buf_i64(b, ri->tracked_pid);
	else
		rt_buf_puts(b, "null");
}

static void j_version(struct rt_buf *b, const struct rt_derived *d, const struct rt_run_info *ri)
{
	(void)d;
	(void)ri;
	rt_buf_puts(b, "\"" RT_VERSION "\"");
}

static void j_seq(struct rt_buf *b, const struct rt_derived *d, const struct rt_run_info *ri)
{
	(void)ri;
	rt_buf_u64(b, d->seq);
}

/* Precise sample time: seconds with microseconds, from integer ns. */
static void j_timestamp(struct rt_buf *b, const struct rt_derived *d, const struct rt_run_info *ri)
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

static void j_per_core(struct rt_buf *b, const struct rt_derived *d, const struct rt_run_info *ri)
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
	key(b, k, first);
	str_or_null(b, v);
}

static void kv_u64(struct rt_buf *b, const char *k, uint64_t v, int *first)
{
	key(b, k, first);
	rt_buf_u64(b, v);
}

static void kv_f64(struct rt_buf *b, const char *k, double v, int *first)
{
	key(b, k, first);
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
	key(b, k, first);
	if (have)
		rt_buf_f64_json(b, v);
	else
		rt_buf_puts(b, "null");
}

static void kv_i64_or_null(struct rt_buf *b, const char *k, int have, int64_t v, int *first)
{
	key(b, k, first);
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

static void j_disks(struct rt_buf *b, const struct rt_derived *d, const struct rt_run_info *ri)
{
	(void)ri;
	rt_buf_putc(b, '[');
	const struct rt_record *c = d->cur.rec, *p = d->prev.rec;
	int ext = (c->h->flags & p->h->flags & RT_REC_HAS_DISKSTATS) &&
	          both_have(d, RT_SEC_DISK, RT_NVALS_DISK - 1) && d->dt > 0;
	for (unsigned i = 0; i < c->h->ndisk; i++) {
		const struct rt_inv_disk *id = &d->cur.inv->disk[i];
		const struct rt_rec_disk *rd = &c->disk[i];
		int j = ext ? prev_slot_disk(d, i) : -1;
		const struct rt_rec_disk *pd = j >= 0 ? &p->disk[j] : NULL;
		uint64_t rio = pd ? delta_reset(rd->rd_ios, pd->rd_ios) : 0;
		uint64_t wio = pd ? delta_reset(rd->wr_ios, pd->wr_ios) : 0;
		double ms = d->dt * 1000.0;
		int first = 1;
		if (i)
			rt_buf_putc(b, ',');
		rt_buf_putc(b, '{');
		kv_f64_or_null(b, "avg_queue_depth", pd != NULL,
		               pd ? (double)delta_reset(rd->weighted_ms, pd->weighted_ms) / ms : 0,
		               &first);
		double busy = pd ? (double)delta_reset(rd->io_ms, pd->io_ms) / ms * 100.0 : 0;
		kv_f64_or_null(b, "busy_pct", pd != NULL, busy > 100.0 ? 100.0 : busy, &first);
		key(b, "capacity_bytes", &first);
		if (id->has_capacity)
			rt_buf_u64(b, id->capacity_bytes);
		else
			rt_buf_puts(b, "null");
		kv_str(b, "device", id->name, &first);
		kv_str(b, "device_type", disk_type_name(id->type), &first);
		kv_str(b, "model", id->model, &first);
		key(b, "mounts", &first);
		j_mounts(b, d, i);
		kv_f64(b, "read_bytes_per_sec",
		       d->dt > 0 ? (double)d->disk_rd_delta[i] / d->dt : 0.0, &first);
		kv_u64(b, "read_bytes_total", rd->rd_sectors * 512, &first);
		/* latency: time spent over operations done (none: no latency) */
		kv_f64_or_null(b, "read_latency_ms", pd && rio,
		               rio ? (double)delta_reset(rd->rd_ms, pd->rd_ms) / (double)rio : 0,
		               &first);
		kv_f64_or_null(b, "read_ops_per_sec", pd != NULL, (double)rio / d->dt, &first);
		kv_str(b, "serial", id->serial, &first);
		kv_str(b, "vendor", id->vendor, &first);
		kv_f64(b, "write_bytes_per_sec",
		       d->dt > 0 ? (double)d->disk_wr_delta[i] / d->dt : 0.0, &first);
		kv_u64(b, "write_bytes_total", rd->wr_sectors * 512, &first);
		kv_f64_or_null(b, "write_latency_ms", pd && wio,
		               wio ? (double)delta_reset(rd->wr_ms, pd->wr_ms) / (double)wio : 0,
		               &first);
		kv_f64_or_null(b, "write_ops_per_sec", pd != NULL, (double)wio / d->dt, &first);
		rt_buf_putc(b, '}');
	}
	rt_buf_putc(b, ']');
}

static void j_nics(struct rt_buf *b, const struct rt_derived *d, const struct rt_run_info *ri)
{
	(void)ri;
	rt_buf_putc(b, '[');
	const struct rt_record *c = d->cur.rec, *p = d->prev.rec;
	int ext = (c->h->flags & p->h->flags & RT_REC_HAS_NETDEV) &&
	          both_have(d, RT_SEC_NIC, RT_NVALS_NIC - 1) && d->dt > 0;
	for (unsigned i = 0; i < c->h->nnic; i++) {
		const struct rt_inv_nic *in = &d->cur.inv->nic[i];
		const struct rt_rec_nic *rn = &c->nic[i];
		int j = ext ? prev_slot_nic(d, i) : -1;
		const struct rt_rec_nic *pn = j >= 0 ? &p->nic[j] : NULL;
#define NIC_DELTA(f) (pn ? delta_i64(rn->f, pn->f, 1) : 0)
		int first = 1;
		if (i)
			rt_buf_putc(b, ',');
		rt_buf_putc(b, '{');
		kv_str(b, "driver", in->driver, &first);
		kv_str(b, "interface", in->name, &first);
		kv_str(b, "mac_address", in->mac, &first);
		key(b, "mtu", &first);
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
		key(b, "speed_mbps", &first);
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

static void j_gpus(struct rt_buf *b, const struct rt_derived *d, const struct rt_run_info *ri)
{
	(void)ri;
	rt_buf_putc(b, '[');
	for (unsigned i = 0; i < d->cur.rec->h->ngpu; i++) {
		const struct rt_inv_gpu *ig = &d->cur.inv->gpu[i];
		const struct rt_rec_gpu *g = &d->cur.rec->gpu[i];
		int first = 1, f2 = 1;
		if (i)
			rt_buf_putc(b, ',');
		rt_buf_putc(b, '{');
		key(b, "core_count", &first);
		if (ig->core_count)
			rt_buf_u64(b, ig->core_count);
		else
			rt_buf_puts(b, "null");
		key(b, "detail", &first);
		rt_buf_putc(b, '{');
		if (ig->driver_version[0])
			kv_str(b, "driver_version", ig->driver_version, &f2);
		if (ig->pci_bus_id[0])
			kv_str(b, "pci_bus_id", ig->pci_bus_id, &f2);
		rt_buf_putc(b, '}');
		kv_str(b, "device_type", "GPU", &first);
		/* energy over the interval: the same GPU slot in both records */
		const struct rt_record *pr = d->prev.rec;
		const struct rt_rec_gpu *pg =
		    pr->h->inv_gen == d->cur.rec->h->inv_gen && i < pr->h->ngpu &&
		            rt_record_has(pr, RT_SEC_GPU, RT_NVALS_GPU - 1)
		        ? &pr->gpu[i]
		        : NULL;
		int energy =
		    pg && (g->valid & pg->valid & RT_GPU_V_ENERGY) && g->energy_mj >= pg->energy_mj;
		kv_f64_or_null(b, "energy_joules", energy,
		               energy ? (double)(g->energy_mj - pg->energy_mj) / 1000.0 : 0,
		               &first);
		kv_i64_or_null(b, "fan_speed_pct", (g->valid & RT_GPU_V_FAN) != 0, g->fan_pct,
		               &first);
		key(b, "frequency_mhz", &first);
		if (g->valid & RT_GPU_V_CLOCK)
			rt_buf_u64(b, g->clock_mhz);
		else
			rt_buf_puts(b, "null");
		kv_str(b, "host_id", ig->host_id, &first);
		kv_i64_or_null(b, "memory_clock_mhz", (g->valid & RT_GPU_V_MEM_CLOCK) != 0,
		               g->mem_clock_mhz, &first);
		kv_str(b, "name", ig->name, &first);
		/* NVML counts PCIe throughput in KB/s (of 1024 bytes) */
		kv_f64_or_null(b, "pcie_rx_bytes_per_sec", (g->valid & RT_GPU_V_PCIE) != 0,
		               g->pcie_rx_kbps * 1024.0, &first);
		kv_f64_or_null(b, "pcie_tx_bytes_per_sec", (g->valid & RT_GPU_V_PCIE) != 0,
		               g->pcie_tx_kbps * 1024.0, &first);
		key(b, "power_watts", &first);
		if (g->valid & RT_GPU_V_POWER)
			rt_buf_f64_json(b, g->power_mw / 1000.0);
		else
			rt_buf_puts(b, "null");
		key(b, "temperature_celsius", &first);
		if (g->valid & RT_GPU_V_TEMP)
			rt_buf_i64(b, g->temp_c);
		else
			rt_buf_puts(b, "null");
		key(b, "throttle_reasons", &first);
		if (g->valid & RT_GPU_V_THROTTLE)
			j_throttle(b, g->throttle_reasons);
		else
			rt_buf_puts(b, "null");
		key(b, "utilization_pct", &first);
		if (g->valid & RT_GPU_V_UTIL)
			rt_buf_f64_json(b, (double)g->util_pct);
		else
			rt_buf_puts(b, "null");
		kv_str(b, "uuid", ig->uuid, &first);
		if (g->valid & RT_GPU_V_MEM) {
			kv_u64(b, "vram_total_bytes", g->vram_total, &first);
			kv_u64(b, "vram_used_bytes", g->vram_used, &first);
			kv_f64(b, "vram_used_pct",
			       g->vram_total ? (double)g->vram_used / (double)g->vram_total * 100.0
			                     : 0.0,
			       &first);
		} else {
			kv_str(b, "vram_total_bytes", NULL, &first);
			kv_str(b, "vram_used_bytes", NULL, &first);
			kv_str(b, "vram_used_pct", NULL, &first);
		}
		rt_buf_putc(b, '}');
	}
	rt_buf_putc(b, ']');
}
