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
/* The stored (packed) form of pack.h starts with this tag byte and its
 * layout, and is at least RT_PACK_MIN bytes long: a record's decoder tells
 * the two forms apart without knowing how one is packed (pack.h builds on
 * this header, never the other way). */
#define RT_PACK_TAG 'P'
#define RT_PACK_MIN 8 /* tag, layout, kind, flags, inv_gen, CRC at least */

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

/* The stored values of each section, in order: values.def. Their indexes
 * (RT_SYS_V_member, RT_PROC_V_member, ...) and counts (RT_NVALS_*) come
 * from there; an array's elements follow its first index. */
#include "rt/values.def"

#define RT_IDX_NONE(...)
#define RT_IDX_SYS(t, m, s) RT_SYS_V_##m,
#define RT_IDX_SYS_A(t, m, n, s) RT_SYS_V_##m, RT_SYS_V_##m##_last_ = RT_SYS_V_##m + (n)-1,
#define RT_IDX_PROC(t, m, s) RT_PROC_V_##m,
#define RT_IDX_CPU(t, m, s) RT_CPU_V_##m,
#define RT_IDX_DISK(t, m, s) RT_DISK_V_##m,
#define RT_IDX_MOUNT(t, m, s) RT_MOUNT_V_##m,
#define RT_IDX_NIC(t, m, s) RT_NIC_V_##m,
#define RT_IDX_GPU(t, m, s) RT_GPU_V_##m,
enum { RT_REC_SYSTEM(RT_IDX_SYS, RT_IDX_SYS_A, RT_IDX_NONE) RT_NVALS_SYSTEM };
enum { RT_REC_PROCESS(RT_IDX_PROC, RT_IDX_NONE, RT_IDX_NONE) RT_NVALS_PROCESS };
enum { RT_REC_CPU(RT_IDX_CPU, RT_IDX_NONE, RT_IDX_NONE) RT_NVALS_CPU };
enum { RT_REC_DISK(RT_IDX_DISK, RT_IDX_NONE, RT_IDX_NONE) RT_NVALS_DISK };
enum { RT_REC_MOUNT(RT_IDX_MOUNT, RT_IDX_NONE, RT_IDX_NONE) RT_NVALS_MOUNT };
enum { RT_REC_NIC(RT_IDX_NIC, RT_IDX_NONE, RT_IDX_NONE) RT_NVALS_NIC };
enum { RT_REC_GPU(RT_IDX_GPU, RT_IDX_NONE, RT_IDX_NONE) RT_NVALS_GPU };

/* What rt 0.1 (layout 1) stored: the values before these. */
#define RT_NVALS_SYSTEM_V1 RT_SYS_V_load_x100
#define RT_NVALS_PROCESS_V1 RT_PROC_V_threads
#define RT_NVALS_DISK_V1 RT_DISK_V_rd_ios
#define RT_NVALS_NIC_V1 RT_NIC_V_rx_packets
#define RT_NVALS_GPU_V1 RT_GPU_V_pcie_rx_kbps
_Static_assert(RT_NVALS_SYSTEM_V1 == 23 && RT_NVALS_PROCESS_V1 == 11 && RT_NVALS_DISK_V1 == 2 &&
                   RT_NVALS_NIC_V1 == 2 && RT_NVALS_GPU_V1 == 7,
               "rt 0.1's stores hold these counts: values are only ever appended");

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
	RT_SYS_X_INTR = 1u << 16,        /* /proc/stat intr */
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

/* The sections' structs, from values.def (no padding the list does not
 * name: static asserts in record.c). */
#define RT_MEMBER(t, m, s) t m;
#define RT_MEMBER_A(t, m, n, s) t m[n];
#define RT_MEMBER_P(t, m) t m;

struct rt_rec_system {
	RT_REC_SYSTEM(RT_MEMBER, RT_MEMBER_A, RT_MEMBER_P)
};

struct rt_rec_process {
	RT_REC_PROCESS(RT_MEMBER, RT_MEMBER_A, RT_MEMBER_P)
};
enum { RT_PROC_X_STATUS = 1u << 0, RT_PROC_X_FDS = 1u << 1, RT_PROC_X_DELAY = 1u << 2 };

struct rt_rec_cpu {
	RT_REC_CPU(RT_MEMBER, RT_MEMBER_A, RT_MEMBER_P)
};

struct rt_rec_disk {
	RT_REC_DISK(RT_MEMBER, RT_MEMBER_A, RT_MEMBER_P)
};

struct rt_rec_mount {
	RT_REC_MOUNT(RT_MEMBER, RT_MEMBER_A, RT_MEMBER_P)
};

struct rt_rec_nic {
	RT_REC_NIC(RT_MEMBER, RT_MEMBER_A, RT_MEMBER_P)
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
	RT_GPU_V_JOB = 1u << 10,       /* job_*: the tracked tree's figures on this GPU */
	RT_GPU_V_MAX_CLOCK = 1u << 11, /* max_clock_mhz */
};

struct rt_rec_gpu {
	RT_REC_GPU(RT_MEMBER, RT_MEMBER_A, RT_MEMBER_P)
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

/* Largest possible record (all capacities full), bytes: a buffer this big
 * holds any record of this rt's layout. */
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

/* Where value idx of section sec lives in an element (values.def), NULL
 * past the list. */
struct rt_value_loc {
	uint16_t off;
	uint8_t size; /* 4 or 8 */
	uint8_t sgn;  /* sign-extended when 4 bytes */
};
const struct rt_value_loc *rt_record_loc(unsigned sec, unsigned idx);

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
