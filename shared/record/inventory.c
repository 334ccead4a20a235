/*
 * inventory.c - serialization of the run inventory.
 *
 * Format: "RTI1", u32 layout, u32 gen, hz, ncpu, ndisk, nmount, nnic, ngpu,
 * then the entries; integers little-endian, strings as u16 length + bytes.
 * The decoder checks every length against the remaining bytes and the field
 * capacity, so hostile bytes produce RT_E_CORRUPT and nothing else.
 */
#include "rt/inventory.h"

#include <errno.h>
#include <string.h>

#include "rt/common.h"

#define INV_MAGIC 0x31495452u /* "RTI1" */
#define INV_LAYOUT 1u

struct wr {
	unsigned char *p;
	size_t len, cap;
	int err;
};

static void w_bytes(struct wr *w, const void *src, size_t n)
{
	if (w->err || w->cap - w->len < n) {
		w->err = 1;
		return;
	}
	memcpy(w->p + w->len, src, n);
	w->len += n;
}
static void w_u8(struct wr *w, uint8_t v)
{
	w_bytes(w, &v, 1);
}
static void w_u16(struct wr *w, uint16_t v)
{
	w_bytes(w, &v, 2);
}
static void w_u32(struct wr *w, uint32_t v)
{
	w_bytes(w, &v, 4);
}
static void w_u64(struct wr *w, uint64_t v)
{
	w_bytes(w, &v, 8);
}
static void w_str(struct wr *w, const char *s)
{
	size_t n = strnlen(s, 65535);
	w_u16(w, (uint16_t)n);
	w_bytes(w, s, n);
}

struct rd {
	const unsigned char *p;
	size_t len, off;
	int err;
};

static void r_bytes(struct rd *r, void *dst, size_t n)
{
	if (r->err || r->len - r->off < n) {
		r->err = 1;
		memset(dst, 0, n);
		return;
	}
	memcpy(dst, r->p + r->off, n);
	r->off += n;
}
static uint8_t r_u8(struct rd *r)
{
	uint8_t v;
	r_bytes(r, &v, 1);
	return v;
}
static uint16_t r_u16(struct rd *r)
{
	uint16_t v;
	r_bytes(r, &v, 2);
	return v;
}
static uint32_t r_u32(struct rd *r)
{
	uint32_t v;
	r_bytes(r, &v, 4);
	return v;
}
static uint64_t r_u64(struct rd *r)
{
	uint64_t v;
	r_bytes(r, &v, 8);
	return v;
}
/* A string that does not fit its field (or contains NUL) is corrupt. */
static void r_str(struct rd *r, char *dst, size_t cap)
{
	uint16_t n = r_u16(r);
	dst[0] = '\0';
	if (r->err)
		return;
	if (n >= cap || r->len - r->off < n || memchr(r->p + r->off, 0, n)) {
		r->err = 1;
		return;
	}
	memcpy(dst, r->p + r->off, n);
	dst[n] = '\0';
	r->off += n;
}

size_t rt_inventory_encoded_max(void)
{
	return 64 + RT_MAX_CPUS * 2 + RT_MAX_DISKS * (sizeof(struct rt_inv_disk) + 16) +
	       RT_MAX_MOUNTS * (sizeof(struct rt_inv_mount) + 16) +
	       RT_MAX_NICS * (sizeof(struct rt_inv_nic) + 16) +
	       RT_MAX_GPUS * (sizeof(struct rt_inv_gpu) + 16);
}

long rt_inventory_encode(const struct rt_inventory *inv, void *buf, size_t cap)
{
	struct wr w = {buf, 0, cap, 0};
	if (inv->ncpu > RT_MAX_CPUS || inv->ndisk > RT_MAX_DISKS || inv->nmount > RT_MAX_MOUNTS ||
	    inv->nnic > RT_MAX_NICS || inv->ngpu > RT_MAX_GPUS)
		return -EINVAL;
	w_u32(&w, INV_MAGIC);
	w_u32(&w, INV_LAYOUT);
	w_u32(&w, inv->gen);
	w_u32(&w, inv->hz);
	w_u32(&w, inv->ncpu);
	w_u32(&w, inv->ndisk);
	w_u32(&w, inv->nmount);
	w_u32(&w, inv->nnic);
	w_u32(&w, inv->ngpu);
	for (unsigned i = 0; i < inv->ncpu; i++)
		w_u16(&w, inv->cpu_id[i]);
	for (unsigned i = 0; i < inv->ndisk; i++) {
		const struct rt_inv_disk *d = &inv->disk[i];
		w_str(&w, d->name);
		w_str(&w, d->model);
		w_str(&w, d->vendor);
		w_str(&w, d->serial);
		w_u8(&w, d->type);
		w_u8(&w, d->stacked);
		w_u8(&w, d->has_capacity);
		w_u64(&w, d->capacity_bytes);
		w_u32(&w, d->logical_block_size);
	}
	for (unsigned i = 0; i < inv->nmount; i++) {
		const struct rt_inv_mount *m = &inv->mount[i];
		w_str(&w, m->mount_point);
		w_str(&w, m->fstype);
		w_u16(&w, m->disk);
		w_u32(&w, m->dev);
	}
	for (unsigned i = 0; i < inv->nnic; i++) {
		const struct rt_inv_nic *n = &inv->nic[i];
		w_str(&w, n->name);
		w_str(&w, n->mac);
		w_str(&w, n->driver);
		w_str(&w, n->operstate);
		w_u8(&w, n->has_speed);
		w_u8(&w, n->has_mtu);
		w_u8(&w, n->physical);
		w_u64(&w, (uint64_t)n->speed_mbps);
		w_u32(&w, n->mtu);
	}
	for (unsigned i = 0; i < inv->ngpu; i++) {
		const struct rt_inv_gpu *g = &inv->gpu[i];
		w_str(&w, g->uuid);
		w_str(&w, g->name);
		w_str(&w, g->host_id);
		w_str(&w, g->pci_bus_id);
		w_str(&w, g->driver_version);
		w_u32(&w, g->core_count);
	}
	return w.err ? -ENOSPC : (long)w.len;
}

int rt_inventory_decode(const void *buf, size_t len, struct rt_inventory *inv)
{
	struct rd r = {buf, len, 0, 0};
	if (r_u32(&r) != INV_MAGIC)
		return RT_E_CORRUPT;
	if (r_u32(&r) != INV_LAYOUT)
		return r.err ? RT_E_CORRUPT : RT_E_LAYOUT;
	inv->gen = r_u32(&r);
	inv->hz = r_u32(&r);
	inv->ncpu = r_u32(&r);
	inv->ndisk = r_u32(&r);
	inv->nmount = r_u32(&r);
	inv->nnic = r_u32(&r);
	inv->ngpu = r_u32(&r);
	if (r.err || inv->ncpu > RT_MAX_CPUS || inv->ndisk > RT_MAX_DISKS ||
	    inv->nmount > RT_MAX_MOUNTS || inv->nnic > RT_MAX_NICS || inv->ngpu > RT_MAX_GPUS ||
	    inv->hz == 0)
		goto corrupt;
	for (unsigned i = 0; i < inv->ncpu; i++)
		inv->cpu_id[i] = r_u16(&r);
	for (unsigned i = 0; i < inv->ndisk; i++) {
		struct rt_inv_disk *d = &inv->disk[i];
		r_str(&r, d->name, sizeof(d->name));
		r_str(&r, d->model, sizeof(d->model));
		r_str(&r, d->vendor, sizeof(d->vendor));
		r_str(&r, d->serial, sizeof(d->serial));
		d->type = r_u8(&r);
		d->stacked = r_u8(&r);
		d->has_capacity = r_u8(&r);
		d->capacity_bytes = r_u64(&r);
		d->logical_block_size = r_u32(&r);
		if (d->type > RT_DISK_HDD)
			goto corrupt;
	}
	for (unsigned i = 0; i < inv->nmount; i++) {
		struct rt_inv_mount *m = &inv->mount[i];
		r_str(&r, m->mount_point, sizeof(m->mount_point));
		r_str(&r, m->fstype, sizeof(m->fstype));
		m->disk = r_u16(&r);
		m->dev = r_u32(&r);
		if (m->disk >= inv->ndisk)
			goto corrupt;
	}
	for (unsigned i = 0; i < inv->nnic; i++) {
		struct rt_inv_nic *n = &inv->nic[i];
		r_str(&r, n->name, sizeof(n->name));
		r_str(&r, n->mac, sizeof(n->mac));
		r_str(&r, n->driver, sizeof(n->driver));
		r_str(&r, n->operstate, sizeof(n->operstate));
		n->has_speed = r_u8(&r);
		n->has_mtu = r_u8(&r);
		n->physical = r_u8(&r);
		n->speed_mbps = (int64_t)r_u64(&r);
		n->mtu = r_u32(&r);
	}
	for (unsigned i = 0; i < inv->ngpu; i++) {
		struct rt_inv_gpu *g = &inv->gpu[i];
		r_str(&r, g->uuid, sizeof(g->uuid));
		r_str(&r, g->name, sizeof(g->name));
		r_str(&r, g->host_id, sizeof(g->host_id));
		r_str(&r, g->pci_bus_id, sizeof(g->pci_bus_id));
		r_str(&r, g->driver_version, sizeof(g->driver_version));
		g->core_count = r_u32(&r);
	}
	if (r.err || r.off != len)
		goto corrupt;
	return 0;
corrupt:
	inv->ncpu = inv->ndisk = inv->nmount = inv->nnic = inv->ngpu = 0;
	return RT_E_CORRUPT;
}

int rt_inventory_find_disk(const struct rt_inventory *inv, const char *name)
{
	for (unsigned i = 0; i < inv->ndisk; i++)
		if (strcmp(inv->disk[i].name, name) == 0)
			return (int)i;
	return -1;
}

int rt_inventory_find_nic(const struct rt_inventory *inv, const char *name)
{
	for (unsigned i = 0; i < inv->nnic; i++)
		if (strcmp(inv->nic[i].name, name) == 0)
			return (int)i;
	return -1;
}

int rt_inventory_find_mount(const struct rt_inventory *inv, const char *mount_point)
{
	for (unsigned i = 0; i < inv->nmount; i++)
		if (strcmp(inv->mount[i].mount_point, mount_point) == 0)
			return (int)i;
	return -1;
}

int rt_inventory_find_gpu(const struct rt_inventory *inv, const char *uuid)
{
	for (unsigned i = 0; i < inv->ngpu; i++)
		if (strcmp(inv->gpu[i].uuid, uuid) == 0)
			return (int)i;
	return -1;
}

int rt_inventory_equal(const struct rt_inventory *a, const struct rt_inventory *b)
{
	if (a->hz != b->hz || a->ncpu != b->ncpu || a->ndisk != b->ndisk ||
	    a->nmount != b->nmount || a->nnic != b->nnic || a->ngpu != b->ngpu)
		return 0;
	return memcmp(a->cpu_id, b->cpu_id, a->ncpu * sizeof(a->cpu_id[0])) == 0 &&
	       memcmp(a->disk, b->disk, a->ndisk * sizeof(a->disk[0])) == 0 &&
	       memcmp(a->mount, b->mount, a->nmount * sizeof(a->mount[0])) == 0 &&
	       memcmp(a->nic, b->nic, a->nnic * sizeof(a->nic[0])) == 0 &&
	       memcmp(a->gpu, b->gpu, a->ngpu * sizeof(a->gpu[0])) == 0;
}
