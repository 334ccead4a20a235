/*
 * record.h - the fixed-layout sample record.
 *
 * One record is one sample of raw counters and gauges. The same bytes live
 * in a ring slot and as an LMDB value; this module is the only encoder and
 * decoder. Rates, percentages and output fields are never stored: readers
 * derive them from two records (see fields.h), so a replay can choose any
 * resolution and a gap averages instead of spiking.
 *
 * Layout 2 (little-endian host order, every section 8-byte aligned):
 *
 *   rt_rec_header     72 bytes: magic, layout, sizes, seq, times, CRC, counts,
 *                     and how many values each section's elements carry
 *   rt_rec_system     CPU totals, process count, cgroup, memory
 *   rt_rec_process    tracked process tree (valid when RT_REC_HAS_PROCESS)
 *   rt_rec_cpu[ncpu]  per-CPU busy/idle ticks, by inventory CPU slot
 *   rt_rec_disk[ndisk]    sectors read/written, by inventory disk slot
 *   rt_rec_mount[nmount]  statvfs sizes, by inventory mount slot
 *   rt_rec_nic[nnic]      bytes received/sent, by inventory NIC slot
 *   rt_rec_gpu[ngpu]      GPU gauges, by inventory GPU slot
 *
 * Slots refer to the run inventory of generation `inv_gen` (inventory.h).
 * The CRC (CRC-32C) covers the whole record with the crc field as zero.
 *
 * Growing: a section's values are only ever appended (pack.c lists them in
 * order). `nvals[section]` says how many of them the sample carries; a value
 * at an index past it is absent (null in JSON, empty in CSV), which is what
 * a record stored by an older rt gives. Layout 1 (rt 0.1: 64-byte header,
 * no load average) is read by rt_record_upgrade. The ring and the live
 * stream carry this in-memory form; the store keeps the packed form
 * (pack.h).
 */
#ifndef RT_RECORD_H
#define RT_RECORD_H

#include <stddef.h>
#include <stdint.h>

#define RT_RECORD_MAGIC 0x31435452u /* "RTC1" */
#define RT_RECORD_LAYOUT 2

/* Capacities; a record or inventory claiming more is corrupt. */
#define RT_MAX_CPUS 1024
#define RT_MAX_DISKS 64
#define RT_MAX_MOUNTS 128
#define RT_MAX_NICS 64
#define RT_MAX_GPUS 16

enum rt_cpu_field {
	RT_CPU_USER,
	RT_CPU_NICE,
	RT_CPU_SYSTEM,
	RT_CPU_IDLE,
	RT_CPU_IOWAIT,
	RT_CPU_IRQ,
	RT_CPU_SOFTIRQ,
	RT_CPU_STEAL,
	RT_CPU_NFIELDS
};

enum rt_mem_field { /* kB, as in /proc/meminfo */
	            RT_MEM_TOTAL,
	            RT_MEM_FREE,
	            RT_MEM_AVAILABLE,
	            RT_MEM_BUFFERS,
	            RT_MEM_CACHED,
	            RT_MEM_SRECLAIMABLE,
	            RT_MEM_ACTIVE,
	            RT_MEM_INACTIVE,
	            RT_MEM_SWAP_TOTAL,
	            RT_MEM_SWAP_FREE,
	            RT_MEM_NFIELDS
};

/* Sections, in record order. */
enum rt_rec_section {
	RT_SEC_SYSTEM,
	RT_SEC_PROCESS,
	RT_SEC_CPU,
	RT_SEC_DISK,
	RT_SEC_MOUNT,
	RT_SEC_NIC,
	RT_SEC_GPU,
	RT_NSECTIONS
};

/* Values per element of each section today (pack.c has them by name), and
 * the indexes of values added after layout 1. */
#define RT_NVALS_SYSTEM_V1 23 /* rt 0.1: up to mem_kb */
enum {
	RT_SYS_V_LOAD_1M = RT_NVALS_SYSTEM_V1,
	RT_SYS_V_LOAD_5M,
	RT_SYS_V_LOAD_15M,
	RT_SYS_V_EXT_VALID, /* rt 0.2: saturation and pressure, see ext_valid */
	RT_SYS_V_CTXT,
	RT_SYS_V_FORKS,
	RT_SYS_V_PROCS_BLOCKED,
	RT_SYS_V_PSI, /* 5 values */
	RT_SYS_V_MAJFLT = RT_SYS_V_PSI + 5,
	RT_SYS_V_SWAP_IN,
	RT_SYS_V_SWAP_OUT,
	RT_SYS_V_OOM_KILLS,
	RT_SYS_V_DIRTY,
	RT_SYS_V_CG_MEM_LIMIT, /* the job's cgroup: 9 values */
	RT_NVALS_SYSTEM = RT_SYS_V_CG_MEM_LIMIT + 9
};
#define RT_NVALS_PROCESS_V1 11
#define RT_NVALS_PROCESS 18 /* + threads, major faults, status and fd values */
#define RT_NVALS_CPU 2
#define RT_NVALS_DISK_V1 2
#define RT_NVALS_DISK 8 /* + ops, ms per direction, busy and weighted ms */
#define RT_NVALS_MOUNT 3
#define RT_NVALS_NIC_V1 2
#define RT_NVALS_NIC 8 /* + packets, errors, drops per direction */
#define RT_NVALS_GPU_V1 7
#define RT_NVALS_GPU 13 /* + PCIe rx/tx, energy, fan, memory clock, throttling */

/* rt_rec_system.ext_valid: which of the values after it were read */
enum rt_sys_ext {
	RT_SYS_X_CTXT = 1u << 0,
	RT_SYS_X_FORKS = 1u << 1,
	RT_SYS_X_BLOCKED = 1u << 2,
	RT_SYS_X_PSI_CPU = 1u << 3,      /* psi_us[CPU_SOME] */
	RT_SYS_X_PSI_MEM = 1u << 4,      /* psi_us[MEM_SOME], [MEM_FULL] */
	RT_SYS_X_PSI_IO = 1u << 5,       /* psi_us[IO_SOME], [IO_FULL] */
	RT_SYS_X_MAJFLT = 1u << 6,       /* /proc/vmstat pgmajfault */
	RT_SYS_X_SWAP = 1u << 7,         /* pswpin, pswpout */
	RT_SYS_X_OOM = 1u << 8,          /* oom_kill (Linux 4.13) */
	RT_SYS_X_DIRTY = 1u << 9,        /* meminfo Dirty */
	RT_SYS_X_CG_MEM = 1u << 10,      /* the job's cgroup: memory in use, its limit */
	RT_SYS_X_CG_PEAK = 1u << 11,     /* its peak (v2 memory.peak, v1 max_usage) */
	RT_SYS_X_CG_OOM = 1u << 12,      /* OOM kills in it (memory.events, oom_control) */
	RT_SYS_X_CG_THROTTLE = 1u << 13, /* time its CPU quota throttled it */
	RT_SYS_X_CG_PIDS = 1u << 14,     /* tasks in it and their limit */
	RT_SYS_X_CG_CPU = 1u << 15,      /* its CPU quota */
};
enum rt_psi {
	RT_PSI_CPU_SOME,
	RT_PSI_MEM_SOME,
	RT_PSI_MEM_FULL,
	RT_PSI_IO_SOME,
	RT_PSI_IO_FULL,
	RT_PSI_N
};

enum rt_rec_flags {
	RT_REC_HAS_CPU = 1u << 0,       /* /proc/stat was read */
	RT_REC_HAS_MEM = 1u << 1,       /* /proc/meminfo was read */
	RT_REC_HAS_CGROUP = 1u << 2,    /* cgroup usage valid */
	RT_REC_HAS_CG_QUOTA = 1u << 3,  /* cgroup quota/period valid */
	RT_REC_HAS_PROCESS = 1u << 4,   /* process section valid */
	RT_REC_HAS_NPROCS = 1u << 5,    /* process count valid */
	RT_REC_HAS_DISKSTATS = 1u << 6, /* /proc/diskstats was read */
	RT_REC_HAS_NETDEV = 1u << 7,    /* /proc/net/dev was read */
	RT_REC_FINAL = 1u << 8,         /* last sample of the run */
	RT_REC_HAS_LOAD = 1u << 9,      /* /proc/loadavg was read (layout 2) */
	/* the final interval's process CPU seconds are the exact remainder
	 * (only its cores are capped); records without it were made when the
	 * seconds were capped too, and replay so */
	RT_REC_EXACT_CPU_SECS = 1u << 10,
};

struct rt_rec_header {
	uint32_t magic;
	uint16_t layout;
	uint16_t header_size;
	uint32_t size; /* whole record in bytes */
	uint32_t crc;
	uint64_t seq;
	uint64_t mono_ns; /* CLOCK_MONOTONIC */
	uint64_t wall_ns; /* CLOCK_REALTIME, ns since the epoch */
	uint32_t inv_gen; /* inventory generation the slots refer to */
	uint32_t flags;   /* rt_rec_flags */
	uint16_t ncpu, ndisk, nmount, nnic, ngpu;
	uint8_t nvals[RT_NSECTIONS]; /* values each element carries, see above */
	uint8_t reserved[7];
};

struct rt_rec_system {
	uint64_t cpu[RT_CPU_NFIELDS]; /* ticks, aggregate "cpu" line */
	uint32_t nprocs;              /* numeric entries in /proc */
	uint32_t procs_running;
	uint64_t cg_usage_usec; /* cgroup CPU usage, cumulative */
	int64_t cg_quota_usec;  /* -1: no limit */
	uint64_t cg_period_usec;
	uint64_t mem_kb[RT_MEM_NFIELDS];
	uint32_t load_x100[3]; /* /proc/loadavg 1, 5, 15 min, hundredths */
	uint32_t reserved;
	/* rt 0.2; cumulative counters unless said */
	uint64_t ext_valid;     /* rt_sys_ext */
	uint64_t ctxt;          /* /proc/stat ctxt */
	uint64_t forks;         /* /proc/stat processes */
	uint32_t procs_blocked; /* gauge */
	uint32_t reserved2;
	uint64_t psi_us[RT_PSI_N]; /* /proc/pressure total= (µs stalled) */
	uint64_t majflt;           /* /proc/vmstat pgmajfault */
	uint64_t swap_in_bytes;    /* pswpin, pswpout times the page size */
	uint64_t swap_out_bytes;
	uint64_t oom_kills;
	uint64_t dirty_kb; /* gauge, meminfo Dirty */
	/* the cgroup the job runs in (rt 0.2); -1: no limit */
	int64_t cg_mem_limit; /* bytes */
	uint64_t cg_mem_used, cg_mem_peak;
	uint64_t cg_oom_kills;      /* cumulative */
	uint64_t cg_throttled_usec; /* cumulative */
	uint64_t cg_pids;
	int64_t cg_pids_max;
	int64_t cg_cpu_quota_usec;
	uint64_t cg_cpu_period_usec;
};

struct rt_rec_process {
	int32_t pid;       /* root of the tracked tree, 0 when none */
	uint32_t nprocs;   /* live processes in the tree, root included */
	uint64_t utime_us; /* cumulative tree CPU in µs, see proctree.h */
	uint64_t stime_us;
	uint64_t pss_kb;
	uint64_t rss_kb;
	uint64_t read_bytes; /* cumulative tree I/O */
	uint64_t write_bytes;
	uint64_t gpu_vram_bytes;
	uint32_t gpu_util_pct_x100;
	uint32_t gpu_count;
	/* rt 0.2 */
	uint64_t threads;              /* of the live members */
	uint64_t majflt;               /* cumulative tree major faults, folded like the CPU */
	uint64_t ext_valid;            /* RT_PROC_X_*: which of the values below were read */
	uint64_t vol_ctxt, invol_ctxt; /* cumulative context switches (status) */
	uint64_t peak_rss_kb;          /* the largest VmHWM of the tree so far */
	uint64_t open_fds;             /* of the live members */
};
enum { RT_PROC_X_STATUS = 1u << 0, RT_PROC_X_FDS = 1u << 1 };

struct rt_rec_cpu {
	uint64_t total; /* all 8 fields */
	uint64_t idle;  /* idle + iowait */
};

struct rt_rec_disk {
	uint64_t rd_sectors; /* 512-byte units, whatever the device */
	uint64_t wr_sectors;
	/* rt 0.2, /proc/diskstats: completed reads and writes, ms spent on
	 * each, ms with I/O in flight, weighted ms (queue depth x time) */
	uint64_t rd_ios, wr_ios, rd_ms, wr_ms, io_ms, weighted_ms;
};

struct rt_rec_mount {
	uint64_t total_bytes;
	uint64_t free_bytes;  /* f_bfree */
	uint64_t avail_bytes; /* f_bavail */
};

struct rt_rec_nic {
	uint64_t rx_bytes;
	uint64_t tx_bytes;
	/* rt 0.2, /proc/net/dev */
	uint64_t rx_packets, tx_packets, rx_errs, tx_errs, rx_drop, tx_drop;
};

enum rt_gpu_valid {
	RT_GPU_V_UTIL = 1u << 0,
	RT_GPU_V_MEM = 1u << 1,
	RT_GPU_V_TEMP = 1u << 2,
	RT_GPU_V_POWER = 1u << 3,
	RT_GPU_V_CLOCK = 1u << 4,
	RT_GPU_V_PCIE = 1u << 5, /* rt 0.2 */
	RT_GPU_V_ENERGY = 1u << 6,
	RT_GPU_V_FAN = 1u << 7,
	RT_GPU_V_MEM_CLOCK = 1u << 8,
	RT_GPU_V_THROTTLE = 1u << 9,
};

struct rt_rec_gpu {
	uint64_t vram_used;
	uint64_t vram_total;
	uint32_t util_pct;
	int32_t temp_c;
	uint32_t power_mw;
	uint32_t clock_mhz;
	uint32_t valid; /* rt_gpu_valid */
	uint32_t reserved;
	/* rt 0.2 */
	uint32_t pcie_rx_kbps, pcie_tx_kbps; /* NVML's PCIe throughput, KB/s */
	uint64_t energy_mj;                  /* total energy since the driver loaded */
	uint32_t fan_pct;
	uint32_t mem_clock_mhz;
	uint64_t throttle_reasons; /* NVML clocks throttle (event) reason bits */
};

/* A decoded (or being-encoded) record: pointers into one aligned buffer. */
struct rt_record {
	struct rt_rec_header *h;
	struct rt_rec_system *sys;
	struct rt_rec_process *proc;
	struct rt_rec_cpu *cpu;
	struct rt_rec_disk *disk;
	struct rt_rec_mount *mount;
	struct rt_rec_nic *nic;
	struct rt_rec_gpu *gpu;
};

/* nvals of a record this rt writes. */
extern const uint8_t rt_record_nvals_now[RT_NSECTIONS];

/* Size in bytes of a record with these counts. */
size_t rt_record_size(unsigned ncpu, unsigned ndisk, unsigned nmount, unsigned nnic, unsigned ngpu);

/* Largest possible record (all capacities full). */
size_t rt_record_max_size(void);

/*
 * Lay out an empty record with the given counts in buf (8-byte aligned,
 * cap bytes). Zeroes it, fills the header and points rec's sections into
 * buf. Returns 0, -EINVAL for a count above capacity, -ENOSPC if cap is
 * too small.
 */
int rt_record_init(void *buf, size_t cap, unsigned ncpu, unsigned ndisk, unsigned nmount,
                   unsigned nnic, unsigned ngpu, struct rt_record *rec);

/* 1 when the record carries value idx of section sec (see nvals). */
static inline int rt_record_has(const struct rt_record *rec, unsigned sec, unsigned idx)
{
	return rec->h->nvals[sec] > idx;
}

/* Point rec into buf, which holds a record already validated. */
void rt_record_point(void *buf, struct rt_record *rec);

/* Compute and store the CRC; call once every field is written. */
void rt_record_seal(struct rt_record *rec);

/*
 * Validate len bytes at buf (8-byte aligned; copy unaligned bytes first)
 * and point rec into it. Every count and size is checked against len and
 * the capacities. Returns 0, RT_E_CORRUPT or RT_E_LAYOUT.
 */
int rt_record_decode(const void *buf, size_t len, struct rt_record *rec);

/* CRC-32C of len bytes, continuing from crc (start with 0). */
uint32_t rt_crc32c(uint32_t crc, const void *buf, size_t len);

/* The layout number a record's bytes claim, 0 when they are not a record.
 * rt_record_decode returns RT_E_LAYOUT for one it does not know: a reader
 * that finds a layout above RT_RECORD_LAYOUT says the run needs a newer rt
 * instead of misreading it. */
unsigned rt_record_claimed_layout(const void *buf, size_t len);

/* Read a layout-1 record (rt 0.1, as its stores hold it) into buf (aligned,
 * cap bytes) as today's layout, values it did not have marked absent, and
 * point rec into it. Returns 0, RT_E_CORRUPT or -ENOSPC. */
int rt_record_upgrade(const void *in, size_t len, void *buf, size_t cap, struct rt_record *rec);

#endif
