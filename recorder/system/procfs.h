/*
 * procfs.h - bounded, allocation-free parsers of /proc text.
 *
 * Each parser takes a buffer and its length (no NUL needed, none trusted),
 * fills fixed-capacity outputs, ignores lines it does not understand and
 * never reads outside [buf, buf+len). They are fuzzed (tests/fuzz).
 */
#ifndef RT_PROCFS_H
#define RT_PROCFS_H

#include <stddef.h>
#include <stdint.h>

#include "rt/record.h"

struct rt_stat_cpu {
	uint16_t id;
	uint64_t total, idle;
};

struct rt_stat_parse {
	int have_agg;
	uint64_t agg[RT_CPU_NFIELDS];
	unsigned ncpu;
	struct rt_stat_cpu cpu[RT_MAX_CPUS];
	uint32_t procs_running;
	uint64_t forks; /* "processes": forks since boot */
	int have_forks;
	uint64_t ctxt; /* context switches since boot */
	int have_ctxt;
	uint32_t procs_blocked;
	int have_blocked;
	uint64_t intr; /* interrupts serviced since boot (the intr line's total) */
	int have_intr;
};

/* /proc/stat: the "cpu" line, "cpuN" lines, ctxt, intr, processes,
 * procs_running, procs_blocked. */
void rt_parse_proc_stat(const char *buf, size_t len, struct rt_stat_parse *out);

/* /proc/meminfo into kB values; returns a bit mask of the fields found. */
#define RT_MEMINFO_DIRTY RT_MEM_NFIELDS /* parsed too, kept apart from mem_kb */
#define RT_MEMINFO_N (RT_MEM_NFIELDS + 1)
unsigned rt_parse_meminfo(const char *buf, size_t len, uint64_t kb[RT_MEMINFO_N]);

/* /proc/loadavg: the 1, 5 and 15 minute averages in hundredths (the kernel
 * prints two decimals). 0, or -1 when the three are not there. */
int rt_parse_loadavg(const char *buf, size_t len, uint32_t x100[3]);

struct rt_diskstat {
	char name[32];
	uint32_t major, minor;
	uint64_t rd_sectors, wr_sectors;
	/* completed reads and writes, ms spent on each, ms with I/O in flight
	 * (io_ticks), weighted ms (time_in_queue); 0 on short old lines */
	uint64_t rd_ios, wr_ios, rd_ms, wr_ms, io_ms, weighted_ms;
};

/* /proc/diskstats; returns the number of entries (at most cap). */
size_t rt_parse_diskstats(const char *buf, size_t len, struct rt_diskstat *out, size_t cap);

struct rt_netdev {
	char name[32];
	uint64_t rx_bytes, tx_bytes;
	uint64_t rx_packets, tx_packets, rx_errs, tx_errs, rx_drop, tx_drop;
};

/* /proc/pressure/{cpu,memory,io}: the "some" and "full" lines' total=
 * (µs stalled since boot). Returns a mask: 1 some found, 2 full found. */
unsigned rt_parse_pressure(const char *buf, size_t len, uint64_t *some_us, uint64_t *full_us);

/* /proc/vmstat: pgmajfault, pswpin, pswpout (pages), oom_kill. Returns a
 * mask of the keys found (bit i for out[i]). */
enum { RT_VMSTAT_PGMAJFAULT, RT_VMSTAT_PSWPIN, RT_VMSTAT_PSWPOUT, RT_VMSTAT_OOM_KILL, RT_VMSTAT_N };
unsigned rt_parse_vmstat(const char *buf, size_t len, uint64_t out[RT_VMSTAT_N]);

/* /proc/net/dev; returns the number of interfaces (at most cap). */
size_t rt_parse_netdev(const char *buf, size_t len, struct rt_netdev *out, size_t cap);

struct rt_mountinfo {
	uint32_t major, minor;
	char root[256];
	char mount_point[256];
	char fstype[32];
};

/* /proc/self/mountinfo: calls cb for each well-formed line (octal escapes
 * such as \040 decoded). Returns the number of lines passed to cb. */
size_t rt_parse_mountinfo(const char *buf, size_t len,
                          void (*cb)(void *ctx, const struct rt_mountinfo *m), void *ctx);

/* cgroup v2 cpu.stat "usage_usec N" or v1 cpuacct.usage (ns). */
int rt_parse_cg_usage_v2(const char *buf, size_t len, uint64_t *usec);
int rt_parse_cg_usage_v1(const char *buf, size_t len, uint64_t *usec);
/* cgroup v2 cpu.max "max 100000" / "200000 100000"; quota -1 = none. */
int rt_parse_cg_max(const char *buf, size_t len, int64_t *quota, uint64_t *period);

/* "Key: value" and "key value" lines bounded by len (/proc/<pid>/io,
 * status, smaps_rollup, cgroup cpu.stat, memory.events, oom_control): the
 * number after the first line starting with key, which includes its
 * separator (":" or " ", so "oom_kill " is not "oom_kill_disable"). 0 or -1. */
int rt_parse_field_u64(const char *buf, size_t len, const char *key, uint64_t *out);

/* /proc/<pid>/stat: the fields after the last ')' (a process may name
 * itself anything, parentheses and newlines included). 0 or -1. */
struct rt_pid_stat {
	int32_t ppid;
	uint32_t threads;
	uint64_t ut, st, start, rss_pages, mf; /* ut/st/mf include the reaped children's */
	uint64_t own_ut, own_st;               /* its own utime and stime alone (ticks) */
	uint64_t flt; /* its own page faults, minor + major (not its children's) */
	int exiting;  /* a zombie, or on its way out (PF_EXITING) */
};
int rt_parse_pid_stat(const char *buf, size_t len, struct rt_pid_stat *ps);

/* A number or "max" (cgroup v2 limits); v1's huge "no limit" numbers
 * (>= 2^62) count as max too. *out = -1 for max. 0 or -1. */
int rt_parse_max_or_u64(const char *buf, size_t len, int64_t *out);

/* /proc/<pid>/cgroup: the v2 path ("0::/x") and the v1 paths of the
 * memory, cpu, cpuacct and pids controllers ("" when absent). */
struct rt_cgroup_paths {
	char v2[512], memory[512], cpu[512], cpuacct[512], pids[512];
};
void rt_parse_proc_cgroup(const char *buf, size_t len, struct rt_cgroup_paths *out);

/* Parse an unsigned decimal at *p (< end); advances *p. Returns 0 or -1. */
int rt_scan_u64(const char **p, const char *end, uint64_t *out);

/* Same, accepting a leading '-' (the value then reads as 0). */
int rt_scan_u64_signed(const char **p, const char *end, uint64_t *out);

/* FNV-1a step over a NUL-terminated name, for device-set change checks.
 * Start from RT_NAME_HASH_INIT. */
#define RT_NAME_HASH_INIT 14695981039346656037ull
uint64_t rt_name_hash(uint64_t h, const char *s);

#endif
