/*
 * fields.h - from two records to the fields users see.
 *
 * rt_derive() turns a pair of records (and their inventories) into the
 * values of one output sample: rates over the exact time between the two
 * records, so a gap or a coarser replay gives averages, never spikes. One
 * table of fields (fields.c) then drives JSON Lines and CSV output: each row
 * names its JSON section and key, its CSV column and number format.
 */
#ifndef RT_FIELDS_H
#define RT_FIELDS_H

#include <stdint.h>

#include "rt/fmt.h"
#include "rt/inventory.h"
#include "rt/record.h"

/* A record with the inventory its slots refer to. */
struct rt_view {
	const struct rt_record *rec;
	const struct rt_inventory *inv;
};

/* Per-run context printed into every sample. */
struct rt_run_info {
	const char *job_name; /* NULL: null */
	int64_t tracked_pid;  /* 0: null */
};

struct rt_derived {
	struct rt_view prev, cur;
	uint64_t seq;
	double dt;        /* seconds between the records (monotonic) */
	int has_interval; /* prev is not the run's warm-up record */
	int64_t timestamp_secs;
	int64_t interval_ms;
	uint64_t wall_ns;

	int has_cpu;
	double cpu_util, utime, stime;
	int has_nprocs;
	int64_t nprocs;
	int has_load; /* a layout-1 record has no load average: null */
	double load_1m, load_5m, load_15m;
	int has_cgroup;
	double cg_usage_secs, cg_util_pct;

	int has_mem;
	int64_t mem_total, mem_free, mem_avail, mem_used, mem_buffers, mem_cached, mem_active,
	    mem_inactive, swap_total, swap_used;
	double mem_used_pct, swap_used_pct;

	int64_t disk_read, disk_write; /* bytes this interval, stacked excluded */
	double space_total_gb, space_used_gb, space_free_gb;
	/* what df says is used (blocks - free) and the root-reserved space
	 * (free - available); space_used_gb counts the reserve as used (the
	 * reference's CSV definition) */
	double space_df_used_gb, space_reserved_gb;
	int64_t net_rx, net_tx; /* bytes this interval, see net_counted */

	double gpu_usage, gpu_vram_mib;
	int64_t gpu_utilized;

	/* saturation (rt 0.2): each present when both records carry it */
	double iowait, steal, irq; /* seconds this interval */
	int has_ctxt, has_forks, has_blocked, has_running;
	int64_t ctxt, forks, procs_blocked, procs_running;
	int has_psi[RT_PSI_N];
	double psi_pct[RT_PSI_N]; /* % of the interval stalled */
	int has_majflt, has_swap, has_oom, has_dirty;
	int64_t majflt, swap_in, swap_out, oom_kills, dirty_mib;
	/* the job's cgroup */
	int has_cg_mem, has_cg_limit, has_cg_peak, has_cg_oom, has_cg_throttle, has_cg_pids,
	    has_cg_pids_max, has_cg_cpu_limit;
	int64_t cg_mem_used_mib, cg_mem_limit_mib, cg_mem_peak_mib, cg_oom_kills, cg_pids,
	    cg_pids_max;
	double cg_cpu_limit_cores, cg_throttled_secs;

	/* per device, by slot of cur's inventory */
	double core_pct[RT_MAX_CPUS];
	int64_t disk_rd_delta[RT_MAX_DISKS], disk_wr_delta[RT_MAX_DISKS];
	int64_t nic_rx_delta[RT_MAX_NICS], nic_tx_delta[RT_MAX_NICS];

	int has_proc;
	int64_t proc_pid, proc_children;
	double proc_utime, proc_stime, proc_cores, proc_gpu_usage, proc_gpu_vram_mib;
	int64_t proc_pss_mib, proc_rss_mib, proc_read, proc_write, proc_gpu_utilized;
	int has_proc_ext, has_proc_majflt; /* rt 0.2 values */
	int64_t proc_threads, proc_majflt;
	int has_proc_ctxt, has_proc_peak, has_proc_fds;
	int64_t proc_vcs, proc_ivcs, proc_peak_rss_mib, proc_fds;
	/* host-wide: latency over the disks' completed I/O (stacked devices
	 * excluded), GPUs held back by a power or thermal limit */
	int has_disk_rlat, has_disk_wlat, has_gpu_throttle;
	double disk_rlat_ms, disk_wlat_ms;
	int64_t gpus_throttled;
};

/* Derive cur against prev. Both must be decoded records of the same run
 * with prev.seq < cur.seq. */
void rt_derive(const struct rt_view *prev, const struct rt_view *cur, struct rt_derived *d);

/* Whether NIC slot i of inv counts in the CSV network totals: physical NICs
 * when the host has any, otherwise every NIC but lo (containers). */
int rt_net_counted(const struct rt_inventory *inv, unsigned i);

/* One JSON object (sorted keys) plus '\n'. */
void rt_format_json(struct rt_buf *out, const struct rt_derived *d, const struct rt_run_info *ri);
/* The CSV columns, in order, as numbers (summary, report): their count,
 * the name of column i, and its value in d (0: empty, as printed). */
#define RT_CSV_COLUMNS 32
/* with the extended ones (--csv-columns extended), which come after */
#define RT_CSV_COLUMNS_X 71
const char *rt_csv_column_name(unsigned i);
int rt_csv_column_value(const struct rt_derived *d, unsigned i, double *v);

/* The 32-column header line, and one data line. */
void rt_format_csv_header(struct rt_buf *out);
void rt_format_csv(struct rt_buf *out, const struct rt_derived *d, const struct rt_run_info *ri);
/* The same with extended != 0: the 32, then the extended columns
 * (--csv-columns extended: saturation, pressure, the job's cgroup). */
void rt_format_csv_header_x(struct rt_buf *out, int extended);
void rt_format_csv_x(struct rt_buf *out, const struct rt_derived *d, const struct rt_run_info *ri,
                     int extended);

#endif
