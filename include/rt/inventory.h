/*
 * inventory.h - static identity of a run's devices.
 *
 * Records carry values by slot; the inventory says what each slot is: CPU
 * numbers, disks (model, vendor, serial, type, capacity), mounts (which disk,
 * filesystem), NICs (MAC, driver, MTU, speed, operstate) and GPUs. The
 * recorder writes a new generation whenever the set of devices changes (a
 * NIC appears, a disk is mounted); each record names its generation.
 *
 * Empty strings stand for "unknown" and come out as JSON null.
 */
#ifndef RT_INVENTORY_H
#define RT_INVENTORY_H

#include <stddef.h>
#include <stdint.h>

#include "rt/record.h"

enum rt_disk_type { RT_DISK_UNKNOWN, RT_DISK_NVME, RT_DISK_SSD, RT_DISK_HDD };

struct rt_inv_disk {
	char name[32];
	char model[96];
	char vendor[48];
	char serial[96];
	uint8_t type;    /* rt_disk_type */
	uint8_t stacked; /* dm/md: I/O already counted on its members */
	uint8_t has_capacity;
	uint64_t capacity_bytes;
	uint32_t logical_block_size;
};

struct rt_inv_mount {
	char mount_point[256];
	char fstype[32];
	uint16_t disk; /* disk slot */
	uint32_t dev;  /* makedev(major, minor) */
};

struct rt_inv_nic {
	char name[32];
	char mac[32];
	char driver[48];
	char operstate[16];
	uint8_t has_speed, has_mtu;
	uint8_t physical; /* backed by a device (not veth/bridge/tun...) */
	int64_t speed_mbps;
	uint32_t mtu;
};

struct rt_inv_gpu {
	char uuid[96];
	char name[96];
	char host_id[64];
	char pci_bus_id[64];
	char driver_version[48];
	uint32_t core_count; /* 0: unknown */
};

struct rt_inventory {
	uint32_t gen;
	uint32_t hz; /* USER_HZ: ticks per second */
	uint32_t ncpu;
	uint32_t ndisk, nmount, nnic, ngpu;
	uint16_t cpu_id[RT_MAX_CPUS]; /* N of "cpuN" per CPU slot */
	struct rt_inv_disk disk[RT_MAX_DISKS];
	struct rt_inv_mount mount[RT_MAX_MOUNTS];
	struct rt_inv_nic nic[RT_MAX_NICS];
	struct rt_inv_gpu gpu[RT_MAX_GPUS];
};

/*
 * Serialize inv into buf (cap bytes). Returns the number of bytes written,
 * or -ENOSPC. rt_inventory_encoded_max() bytes are always enough.
 */
long rt_inventory_encode(const struct rt_inventory *inv, void *buf, size_t cap);
/* The most bytes any inventory encodes to (cannot fail). */
size_t rt_inventory_encoded_max(void);

/*
 * Parse len hostile bytes into inv. Every length and count is checked.
 * Returns 0, RT_E_CORRUPT or RT_E_LAYOUT.
 */
int rt_inventory_decode(const void *buf, size_t len, struct rt_inventory *inv);

/* Index of the disk/NIC/GPU slot with this name (uuid for GPUs), or -1. */
int rt_inventory_find_disk(const struct rt_inventory *inv, const char *name);
int rt_inventory_find_nic(const struct rt_inventory *inv, const char *name);
int rt_inventory_find_mount(const struct rt_inventory *inv, const char *mount_point);
int rt_inventory_find_gpu(const struct rt_inventory *inv, const char *uuid);

/* 1 when two inventories describe the same devices (gen ignored), else 0. */
int rt_inventory_equal(const struct rt_inventory *a, const struct rt_inventory *b);

#endif
