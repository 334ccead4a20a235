/*
 * fields.c - from two records to the values of a sample, and their JSON
 * Lines and CSV.
 *
 * The values are the rows of values.def. A row of kind GAUGE, DELTA, TICKS
 * or STALL is derived here from its record value alone, by the row (the
 * list expands into one inlined call per row, all of its arguments
 * constants): adding
 * such a value is one line in the record list (values.def part 1), its
 * source's parse and fill, and one row. A row of kind FN is computed by
 * one of the functions below (sums over devices, CPU utilization). JSON key
 * order is computed from the rows (keys sorted at every level, as the
 * reference tool prints them); CSV column order is the row order.
 */
#include "rt/fields.h"
#include "fields_int.h"

#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "rt/common.h"

/* ---- derivation ------------------------------------------------------- */

static uint64_t delta(uint64_t cur, uint64_t prev)
{
	return cur >= prev ? cur - prev : 0;
}

static int64_t add_held(int64_t a, int64_t b) /* a, b >= 0 */
{
	return b > INT64_MAX - a ? INT64_MAX : a + b;
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

/* ---- the rows ---------------------------------------------------------- */

enum pres {
	P_ALWAYS,
	P_FLAG,
	P_FLAGS2,
	P_SYSX,
	P_SYSX2,
	P_LIMIT,
	P_PROC,
	P_PROCX,
	P_PROCX2,
	P_BYFN
};

#define CSV(name) name
#define NOCSV NULL
#define NOJSON NULL
#define KIND_GAUGE(div) RT_VK_GAUGE, (div)
#define KIND_DELTA(div) RT_VK_DELTA, (div)
#define KIND_TICKS RT_VK_TICKS, 1
#define KIND_STALL RT_VK_STALL, 1
#define KIND_FN RT_VK_FN, 1
#define SRCSEC_SYS RT_SEC_SYSTEM
#define SRCSEC_PROC RT_SEC_PROCESS
#define SRC_SRC(S, member) SRCSEC_##S, RT_##S##_V_##member
#define SRC_SRCA(S, member, k) SRCSEC_##S, RT_##S##_V_##member + (k)
#define SRC_NOSRC RT_NSECTIONS, 0
#define PRES_ALWAYS P_ALWAYS, 0
#define PRES_FLAG(f) P_FLAG, (f)
#define PRES_FLAGS2(f) P_FLAGS2, (f)
#define PRES_SYSX(b) P_SYSX, (b)
#define PRES_SYSX2(b) P_SYSX2, (b)
#define PRES_LIMIT(b) P_LIMIT, (b)
#define PRES_PROC P_PROC, 0
#define PRES_PROCX(b) P_PROCX, (b)
#define PRES_PROCX2(b) P_PROCX2, (b)
#define PRES_BYFN P_BYFN, 0
#define FLEET_SUM 1
#define FLEET_GAUGE 0
#define FL_FLEET(name, sum, unit, scale, attr, value) name, FLEET_##sum, unit, scale, attr, value
#define FL_NOFLEET NULL, 0, NULL, 0, NULL, NULL
#define ROW(ID, type, sec, json, csv, xcsv, prec, unit, kind, src, pres, fleet)                    \
	[RT_V_##ID] = {json,                                                                       \
	               csv,                                                                        \
	               xcsv,                                                                       \
	               unit,                                                                       \
	               RT_VT_##type,                                                               \
	               RT_JS_##sec,                                                                \
	               (uint8_t)(prec),                                                            \
	               KIND_##kind,                                                                \
	               SRC_##src,                                                                  \
	               PRES_##pres,                                                                \
	               FL_##fleet},
static const struct rt_value_info rows[RT_NV] = {RT_VALUES(ROW)};

const struct rt_value_info *rt_value_info(unsigned id)
{
	return id < RT_NV ? &rows[id] : NULL;
}

/* ---- derivation ------------------------------------------------------- */
static void put_i(struct rt_derived *d, unsigned id, int64_t v)
{
	d->v[id].i = v;
	d->present[id / 64] |= 1ull << (id % 64);
}

static void put_f(struct rt_derived *d, unsigned id, double v)
{
	d->v[id].f = v;
	d->present[id / 64] |= 1ull << (id % 64);
}

/* The rows' derivation, generated: one inlined call per row with every
 * argument a constant (the source's offset, size and sign, the kind, the
 * presence rule), so each row compiles to what a hand-written line would
 * be. */
#define T_SYS struct rt_rec_system
#define T_PROC struct rt_rec_process
#define SIGNED(e) _Generic((e), int32_t : 1, int64_t : 1, default : 0)
#define G_SRC(S, m)                                                                                \
	SRCSEC_##S, RT_##S##_V_##m, offsetof(T_##S, m), sizeof(((T_##S *)0)->m),                   \
	    SIGNED(((T_##S *)0)->m)
#define G_SRCA(S, m, k)                                                                            \
	SRCSEC_##S, RT_##S##_V_##m + (k), offsetof(T_##S, m[k]), sizeof(((T_##S *)0)->m[0]),       \
	    SIGNED(((T_##S *)0)->m[0])
#define G_NOSRC RT_NSECTIONS, 0, 0, 8, 0
struct pair {
	const struct rt_record *c, *p;
	uint32_t both, hz;
	int proc_ok, has_proc;
};

static inline __attribute__((always_inline)) uint64_t load(const struct rt_record *rec, int sec,
                                                           size_t off, size_t size, int sgn)
{
	const unsigned char *b = sec == RT_SEC_SYSTEM ? (const unsigned char *)rec->sys
	                                              : (const unsigned char *)rec->proc;
	if (size == 8) {
		uint64_t x;
		memcpy(&x, b + off, 8);
		return x;
	}
	uint32_t x;
	memcpy(&x, b + off, 4);
	return sgn ? (uint64_t)(int64_t)(int32_t)x : x;
}

static inline __attribute__((always_inline)) void one(struct rt_derived *d, const struct pair *x,
                                                      unsigned id, int type, int kind, double div,
                                                      int sec, unsigned idx, size_t off,
                                                      size_t size, int sgn, int pres, uint64_t b)
{
	const struct rt_record *c = x->c, *p = x->p;
	int two = kind == RT_VK_DELTA || kind == RT_VK_TICKS || kind == RT_VK_STALL;
	int on;
	switch (pres) {
	case P_ALWAYS: on = 1; break;
	case P_FLAG: on = (c->h->flags & b) != 0; break;
	case P_FLAGS2: on = (x->both & b) != 0; break;
	case P_SYSX: on = (c->sys->ext_valid & b) != 0; break;
	case P_SYSX2: on = (c->sys->ext_valid & p->sys->ext_valid & b) != 0; break;
	case P_LIMIT:
		on = (c->sys->ext_valid & b) && (int64_t)load(c, sec, off, size, sgn) >= 0;
		break;
	case P_PROC: on = x->has_proc; break;
	case P_PROCX:
		on = x->has_proc && rt_record_has(c, RT_SEC_PROCESS, idx) &&
		     (!b || (c->proc->ext_valid & b));
		break;
	case P_PROCX2:
		on = x->has_proc && x->proc_ok && rt_record_has(c, RT_SEC_PROCESS, idx) &&
		     rt_record_has(p, RT_SEC_PROCESS, idx) &&
		     (!b || (c->proc->ext_valid & p->proc->ext_valid & b));
		break;
	default: on = 0; break;
	}
	if (on && sec != RT_NSECTIONS && pres != P_ALWAYS)
		on = rt_record_has(c, (unsigned)sec, idx) &&
		     (!two || rt_record_has(p, (unsigned)sec, idx));
	if (kind == RT_VK_STALL)
		on = on && d->dt > 0;
	if (!on)
		return;
	d->present[id / 64] |= 1ull << (id % 64);
	if (kind == RT_VK_FN)
		return;
	uint64_t v = load(c, sec, off, size, sgn), dv = 0;
	if (two && !(sec == RT_SEC_PROCESS && !x->proc_ok))
		dv = delta(v, load(p, sec, off, size, sgn));
	switch (kind) {
	case RT_VK_GAUGE:
		if (type == RT_VT_I64)
			d->v[id].i = (int64_t)(v / (uint64_t)div);
		else
			d->v[id].f = (double)v / div;
		break;
	case RT_VK_DELTA:
		if (type == RT_VT_I64)
			d->v[id].i = (int64_t)(dv / (uint64_t)div);
		else
			d->v[id].f = (double)dv / div;
		break;
	case RT_VK_TICKS: d->v[id].f = (x->both & RT_REC_HAS_CPU) ? (double)dv / x->hz : 0.0; break;
	case RT_VK_STALL: {
		double pct = (double)dv / (d->dt * 1e6) * 100.0;
		d->v[id].f = pct > 100.0 ? 100.0 : pct;
		break;
	}
	}
}

#define GEN(ID, type, sec, json, csv, xcsv, prec, unit, kind, src, pres, fleet)                    \
	one(d, &x, RT_V_##ID, RT_VT_##type, KIND_##kind, G_##src, PRES_##pres);
/* Every row that is not FN, from its source; presence of every row that
 * does not say BYFN. proc_ok: the previous record's tree is this one's. */
static void derive_rows(struct rt_derived *d, int proc_ok, uint32_t hz)
{
	struct pair x = {d->cur.rec, d->prev.rec, d->cur.rec->h->flags & d->prev.rec->h->flags,
	                 hz,         proc_ok,     (d->cur.rec->h->flags & RT_REC_HAS_PROCESS) != 0};
	RT_VALUES(GEN)
}

/* ---- the FN rows -------------------------------------------------------- */
static void derive_cpu(struct rt_derived *d, uint32_t hz)
{
	const struct rt_record *c = d->cur.rec, *p = d->prev.rec;
	if (c->h->flags & p->h->flags & RT_REC_HAS_CPU) {
		uint64_t tot = 0;
		for (int f = 0; f < RT_CPU_NFIELDS; f++)
			tot += delta(c->sys->cpu[f], p->sys->cpu[f]);
		uint64_t idle = delta(c->sys->cpu[RT_CPU_IDLE], p->sys->cpu[RT_CPU_IDLE]) +
		                delta(c->sys->cpu[RT_CPU_IOWAIT], p->sys->cpu[RT_CPU_IOWAIT]);
		unsigned n = c->h->ncpu ? c->h->ncpu : 1;
		d->v[RT_V_CPU_UTIL].f =
		    tot ? (double)(tot - (idle > tot ? tot : idle)) / (double)tot * n : 0.0;
		d->v[RT_V_UTIME].f =
		    (double)(delta(c->sys->cpu[RT_CPU_USER], p->sys->cpu[RT_CPU_USER]) +
		             delta(c->sys->cpu[RT_CPU_NICE], p->sys->cpu[RT_CPU_NICE])) /
		    hz;
		d->v[RT_V_IRQ].f =
		    (double)(delta(c->sys->cpu[RT_CPU_IRQ], p->sys->cpu[RT_CPU_IRQ]) +
		             delta(c->sys->cpu[RT_CPU_SOFTIRQ], p->sys->cpu[RT_CPU_SOFTIRQ])) /
		    hz;
		put_i(d, RT_V_CPU_COUNT, n);
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
	if (rt_has(d, RT_V_CG_UTIL)) { /* the job's cgroup, against its quota */
		double limit = c->h->ncpu ? c->h->ncpu : 1;
		if ((c->h->flags & RT_REC_HAS_CG_QUOTA) && c->sys->cg_quota_usec > 0 &&
		    c->sys->cg_period_usec > 0)
			limit = (double)c->sys->cg_quota_usec / (double)c->sys->cg_period_usec;
		double secs = d->v[RT_V_CG_USAGE].f;
		d->v[RT_V_CG_UTIL].f = d->dt > 0 ? secs / d->dt / limit * 100.0 : 0.0;
	}
	if ((c->sys->ext_valid & RT_SYS_X_CG_CPU) && c->sys->cg_cpu_quota_usec > 0 &&
	    c->sys->cg_cpu_period_usec > 0)
		put_f(d, RT_V_CG_CPU_LIMIT,
		      (double)c->sys->cg_cpu_quota_usec / (double)c->sys->cg_cpu_period_usec);
}

static void derive_mem(struct rt_derived *d)
{
	const struct rt_record *c = d->cur.rec;
	if (!(c->h->flags & RT_REC_HAS_MEM))
		return;
	const uint64_t *m = c->sys->mem_kb;
	uint64_t avail = m[RT_MEM_AVAILABLE];
	uint64_t used = m[RT_MEM_TOTAL] > avail ? m[RT_MEM_TOTAL] - avail : 0;
	uint64_t swap_used = m[RT_MEM_SWAP_TOTAL] > m[RT_MEM_SWAP_FREE]
	                         ? m[RT_MEM_SWAP_TOTAL] - m[RT_MEM_SWAP_FREE]
	                         : 0;
	d->v[RT_V_MEM_USED].i = (int64_t)(used / 1024);
	d->v[RT_V_MEM_CACHED].i = (int64_t)((m[RT_MEM_CACHED] + m[RT_MEM_SRECLAIMABLE]) / 1024);
	d->v[RT_V_SWAP_USED].i = (int64_t)(swap_used / 1024);
	d->v[RT_V_MEM_USED_PCT].f =
	    m[RT_MEM_TOTAL] ? (double)used / (double)m[RT_MEM_TOTAL] * 100.0 : 0.0;
	d->v[RT_V_SWAP_USED_PCT].f =
	    m[RT_MEM_SWAP_TOTAL] ? (double)swap_used / (double)m[RT_MEM_SWAP_TOTAL] * 100.0 : 0.0;
}

static void derive_gpus(struct rt_derived *d);

static void derive_devices(struct rt_derived *d)
{
	const struct rt_record *c = d->cur.rec, *p = d->prev.rec;
	int both_disk = (c->h->flags & p->h->flags & RT_REC_HAS_DISKSTATS) != 0;
	int64_t rd = 0, wr = 0;
	uint64_t rio = 0, rms = 0, wio = 0, wms = 0;
	for (unsigned i = 0; i < c->h->ndisk; i++) {
		int j = both_disk ? fld_prev_slot_disk(d, i) : -1;
		/* a device first seen in this interval has no rate yet */
		d->disk_rd_delta[i] =
		    j < 0 ? 0 : fld_delta_i64(c->disk[i].rd_sectors, p->disk[j].rd_sectors, 512);
		d->disk_wr_delta[i] =
		    j < 0 ? 0 : fld_delta_i64(c->disk[i].wr_sectors, p->disk[j].wr_sectors, 512);
		if (!d->cur.inv->disk[i].stacked) {
			rd = add_held(rd, d->disk_rd_delta[i]);
			wr = add_held(wr, d->disk_wr_delta[i]);
			if (j >= 0 && rt_record_has(c, RT_SEC_DISK, RT_NVALS_DISK - 1) &&
			    rt_record_has(p, RT_SEC_DISK, RT_NVALS_DISK - 1)) {
				rio += fld_delta_reset(c->disk[i].rd_ios, p->disk[j].rd_ios);
				rms += fld_delta_reset(c->disk[i].rd_ms, p->disk[j].rd_ms);
				wio += fld_delta_reset(c->disk[i].wr_ios, p->disk[j].wr_ios);
				wms += fld_delta_reset(c->disk[i].wr_ms, p->disk[j].wr_ms);
			}
		}
	}
	d->v[RT_V_DISK_READ].i = rd;
	d->v[RT_V_DISK_WRITE].i = wr;
	/* latency over every disk's completed operations: time spent / ops */
	if (rio > 0)
		put_f(d, RT_V_DISK_RLAT, (double)rms / (double)rio);
	if (wio > 0)
		put_f(d, RT_V_DISK_WLAT, (double)wms / (double)wio);
	uint64_t total = 0, avail = 0, free = 0;
	for (unsigned i = 0; i < c->h->nmount; i++) {
		total += c->mount[i].total_bytes;
		avail += c->mount[i].avail_bytes;
		free += c->mount[i].free_bytes > c->mount[i].avail_bytes ? c->mount[i].free_bytes
		                                                         : c->mount[i].avail_bytes;
	}
	d->v[RT_V_SPACE_TOTAL].f = (double)total / 1e9;
	d->v[RT_V_SPACE_FREE].f = (double)avail / 1e9;
	d->v[RT_V_SPACE_USED].f = d->v[RT_V_SPACE_TOTAL].f - d->v[RT_V_SPACE_FREE].f;
	d->v[RT_V_SPACE_DF_USED].f = (double)(total > free ? total - free : 0) / 1e9;
	d->v[RT_V_SPACE_RESERVED].f = (double)(free - avail) / 1e9;
	int both_net = (c->h->flags & p->h->flags & RT_REC_HAS_NETDEV) != 0;
	int64_t rx = 0, tx = 0;
	for (unsigned i = 0; i < c->h->nnic; i++) {
		int j = both_net ? fld_prev_slot_nic(d, i) : -1;
		d->nic_rx_delta[i] =
		    j < 0 ? 0 : fld_delta_i64(c->nic[i].rx_bytes, p->nic[j].rx_bytes, 1);
		d->nic_tx_delta[i] =
		    j < 0 ? 0 : fld_delta_i64(c->nic[i].tx_bytes, p->nic[j].tx_bytes, 1);
		if (rt_net_counted(d->cur.inv, i)) {
			rx = add_held(rx, d->nic_rx_delta[i]);
			tx = add_held(tx, d->nic_tx_delta[i]);
		}
	}
	d->v[RT_V_NET_RX].i = rx;
	d->v[RT_V_NET_TX].i = tx;
	derive_gpus(d);
}

/* The GPUs' sums: busy, VRAM, GPUs in use, GPUs held back. */
static void derive_gpus(struct rt_derived *d)
{
	const struct rt_record *c = d->cur.rec;
	double usage = 0, vram = 0;
	int64_t utilized = 0, throttled = 0;
	int has_throttle = 0;
	for (unsigned i = 0; i < c->h->ngpu; i++) {
		const struct rt_rec_gpu *g = &c->gpu[i];
		if (g->valid & RT_GPU_V_UTIL) {
			usage += g->util_pct / 100.0;
			utilized += g->util_pct > 0;
		}
		if (g->valid & RT_GPU_V_MEM)
			vram += (double)g->vram_used / 1048576.0;
		/* a power cap, a thermal limit or a hardware slowdown held it back
		 * (idle, application clocks, sync boost and display are not that) */
		if (rt_record_has(c, RT_SEC_GPU, RT_GPU_V_throttle_reasons) &&
		    (g->valid & RT_GPU_V_THROTTLE)) {
			has_throttle = 1;
			throttled += (g->throttle_reasons & 0xECull) != 0;
		}
	}
	d->v[RT_V_GPU_USAGE].f = usage;
	d->v[RT_V_GPU_VRAM].f = vram;
	d->v[RT_V_GPU_UTILIZED].i = utilized;
	if (has_throttle)
		put_i(d, RT_V_GPUS_THROTTLED, throttled);
}

/* The tree's CPU (rows PROC_UTIME, PROC_STIME, PROC_CORES) and size. */
static void derive_proc(struct rt_derived *d, int prev_ok, uint32_t hz)
{
	const struct rt_record *c = d->cur.rec, *p = d->prev.rec;
	if (!(c->h->flags & RT_REC_HAS_PROCESS))
		return;
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
		d->v[RT_V_PROC_UTIME].f = (double)du / 1e6;
		d->v[RT_V_PROC_STIME].f = (double)ds / 1e6;
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
		d->v[RT_V_PROC_UTIME].f = (double)du / 1e6;
		d->v[RT_V_PROC_STIME].f = (double)ds / 1e6;
	}
	d->v[RT_V_PROC_CHILDREN].i = c->proc->nprocs ? (int64_t)c->proc->nprocs - 1 : 0;
	/* cores in the same tick domain as the system figure: tree ticks over
	 * the ticks that elapsed per CPU (wall time when /proc/stat is missing) */
	uint64_t tot = 0;
	if (c->h->flags & p->h->flags & RT_REC_HAS_CPU)
		for (int f = 0; f < RT_CPU_NFIELDS; f++)
			tot += delta(c->sys->cpu[f], p->sys->cpu[f]);
	if (tot && c->h->ncpu)
		d->v[RT_V_PROC_CORES].f = (double)(du + ds) / 1e6 / ((double)tot / c->h->ncpu / hz);
	else
		d->v[RT_V_PROC_CORES].f = d->dt > 0 ? (double)(du + ds) / 1e6 / d->dt : 0.0;
}

void rt_derive(const struct rt_view *prev, const struct rt_view *cur, struct rt_derived *d)
{
	/* the values and their presence; the per-device arrays are written
	 * before use */
	memset(d, 0, offsetof(struct rt_derived, core_pct));
	d->prev = *prev;
	d->cur = *cur;
	const struct rt_rec_header *c = cur->rec->h, *p = prev->rec->h;
	uint32_t hz = cur->inv->hz ? cur->inv->hz : 100;
	d->seq = c->seq;
	d->wall_ns = c->wall_ns;
	d->dt = c->mono_ns > p->mono_ns ? (double)(c->mono_ns - p->mono_ns) / 1e9 : 0.0;
	d->has_interval = p->seq != 0;
	if (d->has_interval)
		put_i(d, RT_V_INTERVAL_MS,
		      c->mono_ns > p->mono_ns
		          ? (int64_t)((c->mono_ns - p->mono_ns + 500000) / 1000000)
		          : 0);
	d->v[RT_V_TIMESTAMP].i = (int64_t)(c->wall_ns / 1000000000ull);
	/* pid 0: a wrapped command not started yet, its tree totals are 0 */
	const struct rt_record *cr = cur->rec, *pr = prev->rec;
	int proc_ok = (p->flags & RT_REC_HAS_PROCESS) &&
	              (pr->proc->pid == cr->proc->pid || pr->proc->pid == 0);
	derive_rows(d, proc_ok, hz);
	derive_cpu(d, hz);
	derive_mem(d);
	derive_devices(d);
	derive_proc(d, proc_ok, hz);
}

int rt_value(const struct rt_derived *d, unsigned id, double *v)
{
	if (id >= RT_NV || !rt_has(d, id))
		return 0;
	*v = rows[id].type == RT_VT_I64 ? (double)d->v[id].i : d->v[id].f;
	return 1;
}

/* ---- JSON Lines and CSV ------------------------------------------------ */
typedef void (*json_fn)(struct rt_buf *, const struct rt_derived *, const struct rt_run_info *);

/* JSON keys that are not scalar values: run facts, the device arrays and
 * the section objects (sub >= 0). */
static const struct {
	const char *key;
	uint8_t sec;
	json_fn fn;
	int sub;
} extras[] = {
    {"job_name", RT_JS_TOP, fj_job, -1},
    {"tracked_pid", RT_JS_TOP, fj_pid, -1},
    {"resource-tracker-version", RT_JS_TOP, fj_version, -1},
    {"seq", RT_JS_TOP, fj_seq, -1},
    {"timestamp", RT_JS_TOP, fj_timestamp, -1},
    {"network", RT_JS_TOP, fj_nics, -1},
    {"disk", RT_JS_TOP, fj_disks, -1},
    {"gpu", RT_JS_TOP, fj_gpus, -1},
    {"per_core_pct", RT_JS_CPU, fj_per_core, -1},
    {"cpu", RT_JS_TOP, NULL, RT_JS_CPU},
    {"memory", RT_JS_TOP, NULL, RT_JS_MEM},
    {"pressure", RT_JS_TOP, NULL, RT_JS_PRESSURE},
    {"cgroup", RT_JS_TOP, NULL, RT_JS_CGROUP},
};
#define NEXTRAS RT_ARRAY_LEN(extras)

/* Per JSON object, its keys in order: a value id, or RT_NV + an extra. */
static int order[RT_JS_N][RT_NV + NEXTRAS];
static int norder[RT_JS_N];
/* each key as written: ,"name": (the comma dropped for a section's first) */
static char *keytext[RT_NV + NEXTRAS];
static size_t keylen[RT_NV + NEXTRAS];
static int csv_ids[RT_CSV_COLUMNS_X];
static pthread_once_t once = PTHREAD_ONCE_INIT;
static const char *key_of(int k)
{
	return k < RT_NV ? rows[k].json : extras[k - RT_NV].key;
}

static int cmp_key(const void *a, const void *b)
{
	return strcmp(key_of(*(const int *)a), key_of(*(const int *)b));
}

static void build_order(void)
{
	for (int k = 0; k < (int)(RT_NV + NEXTRAS); k++) {
		unsigned sec = k < RT_NV ? rows[k].sec : extras[k - RT_NV].sec;
		if (key_of(k))
			order[sec][norder[sec]++] = k;
	}
	for (int s = 0; s < RT_JS_N; s++)
		qsort(order[s], (size_t)norder[s], sizeof(int), cmp_key);
	static char keys[16384]; /* the keys are plain ASCII names: no escapes */
	size_t used = 0;
	for (int k = 0; k < (int)(RT_NV + NEXTRAS); k++) {
		const char *name = key_of(k);
		size_t n = name ? strlen(name) : 0;
		if (!name || used + n + 5 > sizeof(keys))
			continue;
		char *t = keytext[k] = keys + used;
		t[0] = ',';
		t[1] = '"';
		memcpy(t + 2, name, n);
		memcpy(t + 2 + n, "\":", 3); /* and the NUL */
		keylen[k] = n + 4;
		used += n + 5;
	}
	unsigned n = 0;
	for (int pass = 0; pass < 2; pass++) /* the 32, then the extended ones */
		for (unsigned id = 0; id < RT_NV; id++)
			if (pass ? rows[id].xcsv != NULL : rows[id].csv != NULL)
				csv_ids[n++] = (int)id;
}

/* key k of the table, prepared once */
static void key_id(struct rt_buf *b, int k, int *first)
{
	if (keytext[k]) {
		rt_buf_put(b, keytext[k] + *first, keylen[k] - (size_t)*first);
		*first = 0;
	} else { /* not prepared (no room): the same bytes */
		fld_key(b, key_of(k), first);
	}
}

static void write_section(struct rt_buf *b, int sec, const struct rt_derived *d,
                          const struct rt_run_info *ri)
{
	int first = 1;
	rt_buf_putc(b, '{');
	for (int n = 0; n < norder[sec]; n++) {
		int k = order[sec][n];
		/* actual_interval_ms is absent (not null) on the run's first sample */
		if (k == RT_V_INTERVAL_MS && !rt_has(d, k))
			continue;
		key_id(b, k, &first);
		if (k >= RT_NV) {
			if (extras[k - RT_NV].fn)
				extras[k - RT_NV].fn(b, d, ri);
			else
				write_section(b, extras[k - RT_NV].sub, d, ri);
		} else if (!rt_has(d, k)) {
			rt_buf_puts(b, "null");
		} else if (rows[k].type == RT_VT_I64) {
			rt_buf_i64(b, d->v[k].i);
		} else {
			rt_buf_f64_json(b, d->v[k].f);
		}
	}
	rt_buf_putc(b, '}');
}

void rt_format_json(struct rt_buf *out, const struct rt_derived *d, const struct rt_run_info *ri)
{
	pthread_once(&once, build_order);
	write_section(out, RT_JS_TOP, d, ri);
	rt_buf_putc(out, '\n');
}

int rt_csv_column_id(unsigned i)
{
	pthread_once(&once, build_order);
	return i < RT_CSV_COLUMNS_X ? csv_ids[i] : -1;
}

int rt_value_by_column(const char *name)
{
	for (unsigned id = 0; id < RT_NV; id++)
		if ((rows[id].csv && !strcmp(rows[id].csv, name)) ||
		    (rows[id].xcsv && !strcmp(rows[id].xcsv, name)))
			return (int)id;
	return -1;
}

const char *rt_csv_column_name(unsigned i)
{
	int id = rt_csv_column_id(i);
	return id < 0 ? NULL : i < RT_CSV_COLUMNS ? rows[id].csv : rows[id].xcsv;
}

void rt_format_csv_header_x(struct rt_buf *out, int extended)
{
	unsigned n = (extended & 1) ? RT_CSV_COLUMNS_X : RT_CSV_COLUMNS;
	for (unsigned i = 0; i < n; i++) {
		if (i)
			rt_buf_putc(out, ',');
		rt_buf_puts(out, rt_csv_column_name(i));
	}
	rt_buf_putc(out, '\n');
}

void rt_format_csv_x(struct rt_buf *out, const struct rt_derived *d, const struct rt_run_info *ri,
                     int extended)
{
	(void)ri;
	pthread_once(&once, build_order);
	unsigned n = (extended & 1) ? RT_CSV_COLUMNS_X : RT_CSV_COLUMNS;
	for (unsigned i = 0; i < n; i++) {
		int id = csv_ids[i];
		if (i)
			rt_buf_putc(out, ',');
		if (!rt_has(d, (unsigned)id))
			continue; /* empty column */
		if (id == RT_V_TIMESTAMP && (extended & RT_CSV_MS))
			rt_buf_f64_fixed(out,
			                 (double)(d->cur.rec->h->wall_ns / 1000000ull) / 1000.0, 3);
		else if (rows[id].type == RT_VT_I64)
			rt_buf_i64(out, d->v[id].i);
		else
			rt_buf_f64_fixed(out, d->v[id].f, rows[id].prec);
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
