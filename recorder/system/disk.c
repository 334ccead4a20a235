/*
 * disk.c - whole disks from /proc/diskstats and /sys/block, their mounts
 * from /proc/self/mountinfo, sizes from statvfs.
 *
 * /proc/diskstats counts 512-byte sectors whatever the device's sector
 * size. dm-* and md* devices (anything with slaves) are kept in disk[] with
 * their mounts but marked stacked, so their I/O is not added on top of their
 * members'. Mounts are matched to disks by device number, never by name
 * prefix, and a filesystem mounted twice (bind mounts) is counted once.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "collect.h"
#include "rt/common.h"
#include "rt/fmt.h"
#include "rt/sysroot.h"

/* The source's own state (the collector holds it as `self`). */
struct disk_state {
	int fd_diskstats, fd_mountinfo;
	struct rt_diskstat ds[RT_MAX_DISKSTATS];
	size_t nds;
	int disk_line[RT_MAX_DISKS]; /* diskstats line of each disk slot */
	uint64_t disk_names_hash;
	int mounts_dirty;
};

static int disk_open(struct rt_collector *c, void **self)
{
	(void)c;
	struct disk_state *me = calloc(1, sizeof(*me));
	if (!me)
		return -ENOMEM;
	*self = me;
	me->fd_diskstats = rt_open(RT_PROC, "diskstats");
	me->fd_mountinfo = rt_open(RT_PROC, "self/mountinfo");
	me->mounts_dirty = 1;
	me->disk_names_hash = 1; /* never a real hash: the first read builds */
	return 0;
}

static void disk_close(struct rt_collector *c, void *self)
{
	(void)c;
	struct disk_state *me = self;
	if (!me)
		return;
	rt_close_fd(&me->fd_diskstats);
	rt_close_fd(&me->fd_mountinfo);
	free(me);
}

static void disk_read(struct rt_collector *c, void *self, int *changed)
{
	struct disk_state *me = self;
	size_t len;
	me->nds = 0;
	if (rt_read_fd(c, me->fd_diskstats, &len) == 0)
		me->nds = rt_parse_diskstats(c->buf, len, me->ds, RT_MAX_DISKSTATS);
	uint64_t h = RT_NAME_HASH_INIT;
	for (size_t i = 0; i < me->nds; i++)
		h = rt_name_hash(h, me->ds[i].name);
	if (h != me->disk_names_hash) {
		me->disk_names_hash = h;
		*changed = 1;
	}
	/* mountinfo signals a change of the mount table with POLLPRI (which
	 * stays raised until the table is read: looked at once a second) */
	if (me->fd_mountinfo >= 0 && c->slow) {
		struct pollfd p = {.fd = me->fd_mountinfo, .events = POLLPRI};
		if (poll(&p, 1, 0) > 0 && (p.revents & (POLLPRI | POLLERR)))
			me->mounts_dirty = 1;
	}
	if (me->mounts_dirty)
		*changed = 1;
}

static int sys_exists(const char *name, const char *attr)
{
	char rel[512], p[4096];
	snprintf(rel, sizeof(rel), "block/%s%s", name, attr);
	return rt_path(p, sizeof(p), RT_SYS, rel) == 0 && access(p, F_OK) == 0;
}

static int dir_nonempty(const char *name, const char *attr)
{
	char rel[512], p[4096];
	snprintf(rel, sizeof(rel), "block/%s/%s", name, attr);
	if (rt_path(p, sizeof(p), RT_SYS, rel))
		return 0;
	DIR *d = opendir(p);
	if (!d)
		return 0;
	struct dirent *e;
	int any = 0;
	while (!any && (e = readdir(d)))
		any = e->d_name[0] != '.';
	closedir(d);
	return any;
}

static int excluded(const char *name)
{
	return !strncmp(name, "loop", 4) || !strncmp(name, "ram", 3) || !strncmp(name, "zram", 4);
}

static void disk_identity(struct rt_inv_disk *d)
{
	char v[256];
	rt_sys_attr(d->model, sizeof(d->model), "block/%s/%s", d->name, "device/model");
	rt_sys_attr(d->vendor, sizeof(d->vendor), "block/%s/%s", d->name, "device/vendor");
	rt_sys_attr(d->serial, sizeof(d->serial), "block/%s/%s", d->name, "device/serial");
	if (!d->serial[0])
		rt_sys_attr(d->serial, sizeof(d->serial), "block/%s/%s", d->name, "serial");
	if (!d->serial[0])
		rt_sys_attr(d->serial, sizeof(d->serial), "block/%s/%s", d->name, "device/wwid");
	if (!d->serial[0])
		rt_sys_attr(d->serial, sizeof(d->serial), "block/%s/%s", d->name, "wwid");
	/* sysfs pads SCSI strings with spaces: trim both ends */
	char *fields[3] = {d->model, d->vendor, d->serial};
	for (int i = 0; i < 3; i++) {
		char *s = fields[i];
		size_t lead = strspn(s, " \t");
		memmove(s, s + lead, strlen(s + lead) + 1);
	}
	rt_sys_attr(v, sizeof(v), "block/%s/%s", d->name, "queue/rotational");
	if (!strncmp(d->name, "nvme", 4))
		d->type = RT_DISK_NVME;
	else if (!strcmp(v, "0"))
		d->type = RT_DISK_SSD;
	else if (!strcmp(v, "1"))
		d->type = RT_DISK_HDD;
	rt_sys_attr(v, sizeof(v), "block/%s/%s", d->name, "size");
	char *end;
	unsigned long long sectors = strtoull(v, &end, 10);
	if (v[0] && !*end && sectors > 0 && sectors < (1ull << 54)) {
		d->capacity_bytes = sectors * 512; /* always 512-byte units */
		d->has_capacity = 1;
	}
	rt_sys_attr(v, sizeof(v), "block/%s/%s", d->name, "queue/logical_block_size");
	d->logical_block_size = (uint32_t)strtoul(v, NULL, 10);
	d->stacked = !strncmp(d->name, "dm-", 3) || !strncmp(d->name, "md", 2) ||
	             dir_nonempty(d->name, "slaves");
}

struct mount_ctx {
	struct rt_collector *c;
	struct rt_inventory *inv;
	int pass; /* 1: filesystem roots only, 2: everything else */
};

/* Disk slot holding device major:minor (a disk or one of its partitions). */
static int disk_of_dev(struct rt_inventory *inv, uint32_t maj, uint32_t min)
{
	char rel[64], p[4096], link[4096];
	snprintf(rel, sizeof(rel), "dev/block/%u:%u", maj, min);
	if (rt_path(p, sizeof(p), RT_SYS, rel))
		return -1;
	ssize_t n = readlink(p, link, sizeof(link) - 1);
	if (n <= 0)
		return -1;
	link[n] = '\0';
	char *last = strrchr(link, '/');
	if (!last)
		return rt_inventory_find_disk(inv, link);
	int slot = rt_inventory_find_disk(inv, last + 1);
	if (slot >= 0)
		return slot;
	*last = '\0'; /* a partition: its parent directory is the disk */
	char *parent = strrchr(link, '/');
	return rt_inventory_find_disk(inv, parent ? parent + 1 : link);
}

static void mount_cb(void *vctx, const struct rt_mountinfo *m)
{
	struct mount_ctx *x = vctx;
	struct rt_inventory *inv = x->inv;
	if (m->major == 0)
		return; /* virtual filesystems */
	if (x->pass == 1 && strcmp(m->root, "/") != 0)
		return;
	uint32_t dev = (uint32_t)makedev(m->major, m->minor);
	for (unsigned i = 0; i < inv->nmount; i++)
		if (inv->mount[i].dev == dev)
			return; /* one filesystem is counted once */
	if (inv->nmount >= RT_MAX_MOUNTS)
		return;
	int slot = disk_of_dev(inv, m->major, m->minor);
	if (slot < 0)
		return;
	struct rt_inv_mount *im = &inv->mount[inv->nmount++];
	rt_copy_text(im->mount_point, sizeof(im->mount_point), m->mount_point);
	rt_copy_text(im->fstype, sizeof(im->fstype), m->fstype);
	im->disk = (uint16_t)slot;
	im->dev = dev;
}

static int by_name(const void *a, const void *b, void *arg)
{
	const struct rt_diskstat *ds = arg;
	return strcmp(ds[*(const int *)a].name, ds[*(const int *)b].name);
}

static void disk_inventory(struct rt_collector *c, void *self, struct rt_inventory *inv)
{
	struct disk_state *me = self;
	/* disk[] is sorted by device name */
	static int idx[RT_MAX_DISKSTATS];
	for (size_t i = 0; i < me->nds; i++)
		idx[i] = (int)i;
	qsort_r(idx, me->nds, sizeof(int), by_name, me->ds);
	for (size_t k = 0; k < me->nds && inv->ndisk < RT_MAX_DISKS; k++) {
		size_t i = (size_t)idx[k];
		const char *name = me->ds[i].name;
		if (excluded(name) || !sys_exists(name, ""))
			continue;
		struct rt_inv_disk *d = &inv->disk[inv->ndisk];
		rt_copy_text(d->name, sizeof(d->name), name);
		disk_identity(d);
		me->disk_line[inv->ndisk++] = (int)i;
	}
	/* mounts: the mount table is large and changes rarely; re-read on change.
	 * Pass 1 takes root mounts ("/" of the filesystem), pass 2 bind mounts of
	 * filesystems not mounted at their root anywhere. */
	size_t len;
	me->mounts_dirty = 0;
	if (rt_read_fd_to_eof(c, me->fd_mountinfo, &len) != 0)
		return;
	struct mount_ctx x = {c, inv, 1};
	rt_parse_mountinfo(c->buf, len, mount_cb, &x);
	x.pass = 2;
	rt_parse_mountinfo(c->buf, len, mount_cb, &x);
}

static void disk_fill(struct rt_collector *c, void *self, struct rt_record *rec)
{
	struct disk_state *me = self;
	const struct rt_inventory *inv = c->inv;
	if (me->nds)
		rec->h->flags |= RT_REC_HAS_DISKSTATS;
	for (unsigned i = 0; i < rec->h->ndisk; i++) {
		int line = me->disk_line[i];
		if (line < 0 || (size_t)line >= me->nds ||
		    strcmp(me->ds[line].name, inv->disk[i].name))
			continue; /* vanished this very sample: zeros */
		const struct rt_diskstat *s = &me->ds[line];
		struct rt_rec_disk *d = &rec->disk[i];
		d->rd_sectors = s->rd_sectors;
		d->wr_sectors = s->wr_sectors;
		d->rd_ios = s->rd_ios;
		d->wr_ios = s->wr_ios;
		d->rd_ms = s->rd_ms;
		d->wr_ms = s->wr_ms;
		d->io_ms = s->io_ms;
		d->weighted_ms = s->weighted_ms;
	}
	for (unsigned i = 0; i < rec->h->nmount; i++) {
		struct rt_fsstat st;
		if (rt_statvfs(inv->mount[i].mount_point, &st) == 0) {
			rec->mount[i].total_bytes = st.total;
			rec->mount[i].free_bytes = st.free;
			rec->mount[i].avail_bytes = st.avail;
		}
	}
}

const struct rt_source rt_source_disk = {.name = "disk",
                                         .open = disk_open,
                                         .read = disk_read,
                                         .inventory = disk_inventory,
                                         .fill = disk_fill,
                                         .close = disk_close};
