/*
 * collect.h - the system collectors and the inventory they maintain.
 *
 * One rt_collector owns every open /proc and /sys file (kept open and
 * pread each sample), the current inventory and per-source scratch. A
 * sample never allocates; an inventory rebuild (devices changed) may.
 * A source that fails leaves its record flag clear; the others go on.
 */
#ifndef RT_COLLECT_H
#define RT_COLLECT_H

#include <stddef.h>
#include <stdint.h>

#include "gpu_amd.h"
#include "gpu_nvml.h"
#include "procfs.h"
#include "rt/inventory.h"
#include "rt/record.h"

#define RT_MAX_DISKSTATS 1024
#define RT_MAX_NETDEVS 256

struct rt_collector {
	/* open files (-1 when absent) */
	int fd_stat, fd_meminfo, fd_diskstats, fd_netdev, fd_mountinfo, fd_proc;
	int fd_cg_usage, cg_v2;
	int fd_oper[RT_MAX_NICS]; /* operstate per NIC slot */
	int64_t cg_quota;
	uint64_t cg_period;
	int has_cg_quota;

	char *buf; /* read buffer, grows when a file fills it */
	size_t bufcap;

	struct rt_stat_parse stat;
	struct rt_diskstat ds[RT_MAX_DISKSTATS];
	size_t nds;
	struct rt_netdev nd[RT_MAX_NETDEVS];
	size_t nnd;
	int disk_line[RT_MAX_DISKS]; /* diskstats line of each disk slot */
	int nic_line[RT_MAX_NICS];

	uint64_t disk_names_hash, nic_names_hash;
	int mounts_dirty;

	struct rt_nvml *nvml; /* NULL: no NVIDIA GPUs */
	unsigned ngpu_nv;     /* GPU slots [0, ngpu_nv) are NVIDIA, the rest AMD */
	struct rt_amd amd;

	struct rt_inventory *inv;     /* current */
	struct rt_inventory *scratch; /* rebuild target */
};

/* Open the sources under the configured roots. Never fails for a missing
 * source (that metric is then absent); -ENOMEM only. */
int rt_collector_open(struct rt_collector *c);
void rt_collector_close(struct rt_collector *c);

/*
 * Take one sample into buf (8-byte aligned, cap bytes): reads every source,
 * rebuilds the inventory when the device set changed (*inv_changed = 1,
 * c->inv->gen incremented), lays out and fills the record. The caller sets
 * seq and times, then seals it. Returns 0 or -ENOSPC.
 */
int rt_collector_sample(struct rt_collector *c, void *buf, size_t cap, struct rt_record *rec,
                        int *inv_changed);

/* Per-source pieces (cpu.c, memory.c, disk.c, net.c). */
int rt_read_fd(struct rt_collector *c, int fd, size_t *len);
void rt_cpu_open(struct rt_collector *c);
void rt_cpu_read(struct rt_collector *c, int *changed);
void rt_cpu_inventory(struct rt_collector *c, struct rt_inventory *inv);
void rt_cpu_fill(struct rt_collector *c, struct rt_record *rec);
void rt_memory_fill(struct rt_collector *c, struct rt_record *rec);
void rt_disk_read(struct rt_collector *c, int *changed);
void rt_disk_inventory(struct rt_collector *c, struct rt_inventory *inv);
void rt_disk_fill(struct rt_collector *c, struct rt_record *rec);
void rt_net_read(struct rt_collector *c, int *changed);
void rt_net_inventory(struct rt_collector *c, struct rt_inventory *inv);
void rt_net_fill(struct rt_collector *c, struct rt_record *rec);

/* Host facts for the run metadata (not per sample). */
struct rt_host_info {
	char hostname[256];
	char cpu_model[256];
	unsigned vcpus;
	uint64_t memory_mib;
	char host_id[128]; /* DMI board asset tag, else /etc/machine-id */
	char ip[64];       /* first non-loopback IPv4 */
	double storage_gb; /* Σ whole-disk sizes, 1e9 bytes */
};
void rt_host_info(struct rt_host_info *h);

#endif
