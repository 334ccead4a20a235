/*
 * collect.c - one sample from every source, and inventory upkeep.
 *
 * Each source reads its file first and says whether its device set
 * changed; only then is the record laid out, because the inventory decides
 * the record's counts.
 */
#define _GNU_SOURCE
#include "collect.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rt/sysroot.h"

int rt_read_fd(struct rt_collector *c, int fd, size_t *len)
{
	if (fd < 0)
		return -EBADF;
	for (;;) {
		ssize_t n = rt_pread_all(fd, c->buf, c->bufcap);
		if (n < 0)
			return (int)n;
		if ((size_t)n + 1 < c->bufcap || c->bufcap >= (8u << 20)) {
			*len = (size_t)n;
			return 0;
		}
		/* the file filled the buffer: grow (rare: many CPUs or disks) */
		char *p = realloc(c->buf, c->bufcap * 2);
		if (!p) {
			*len = (size_t)n;
			return 0;
		}
		c->buf = p;
		c->bufcap *= 2;
	}
}

int rt_collector_open(struct rt_collector *c)
{
	memset(c, 0, sizeof(*c));
	c->bufcap = 64 * 1024;
	c->buf = malloc(c->bufcap);
	c->inv = calloc(1, sizeof(*c->inv));
	c->scratch = calloc(1, sizeof(*c->scratch));
	if (!c->buf || !c->inv || !c->scratch) {
		rt_collector_close(c);
		return -ENOMEM;
	}
	c->fd_stat = rt_open(RT_PROC, "stat");
	c->fd_meminfo = rt_open(RT_PROC, "meminfo");
	c->fd_diskstats = rt_open(RT_PROC, "diskstats");
	c->fd_netdev = rt_open(RT_PROC, "net/dev");
	c->fd_mountinfo = rt_open(RT_PROC, "self/mountinfo");
	c->fd_proc = rt_open(RT_PROC, "");
	for (int i = 0; i < RT_MAX_NICS; i++)
		c->fd_oper[i] = -1;
	c->fd_cg_usage = -1;
	rt_cpu_open(c);
	c->nvml = rt_nvml_open();
	c->mounts_dirty = 1;
	c->inv->gen = 0;                            /* first sample builds generation 1 */
	c->disk_names_hash = c->nic_names_hash = 1; /* never a real hash: forces a build */
	return 0;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

void rt_collector_close(struct rt_collector *c)
{
	close_fd(&c->fd_stat);
	close_fd(&c->fd_meminfo);
	close_fd(&c->fd_diskstats);
	close_fd(&c->fd_netdev);
	close_fd(&c->fd_mountinfo);
	close_fd(&c->fd_proc);
	close_fd(&c->fd_cg_usage);
	for (int i = 0; i < RT_MAX_NICS; i++)
		close_fd(&c->fd_oper[i]);
	rt_nvml_close(c->nvml);
	c->nvml = NULL;
	free(c->buf);
	free(c->inv);
	free(c->scratch);
	c->buf = NULL;
	c->inv = c->scratch = NULL;
}

int rt_collector_sample(struct rt_collector *c, void *buf, size_t cap, struct rt_record *rec,
                        int *inv_changed)
{
	int changed = c->inv->gen == 0;
	rt_cpu_read(c, &changed);
	rt_disk_read(c, &changed);
	rt_net_read(c, &changed);
	/* GPU data comes from a worker thread, bounded: 100 ms at most */
	if (c->nvml)
		rt_nvml_sample(c->nvml, 100);
	if (c->nvml && rt_nvml_count(c->nvml) != c->inv->ngpu)
		changed = 1; /* a GPU appeared or fell off the bus */
	*inv_changed = 0;
	if (changed) {
		struct rt_inventory *n = c->scratch;
		memset(n, 0, sizeof(*n));
		rt_cpu_inventory(c, n);
		rt_disk_inventory(c, n);
		rt_net_inventory(c, n);
		rt_nvml_inventory(c->nvml, n);
		c->ngpu_nv = n->ngpu;
		rt_amd_inventory(&c->amd, n);
		if (c->inv->gen == 0 || !rt_inventory_equal(n, c->inv)) {
			n->gen = c->inv->gen + 1;
			c->scratch = c->inv;
			c->inv = n;
			*inv_changed = 1;
		}
	}
	const struct rt_inventory *inv = c->inv;
	int rc =
	    rt_record_init(buf, cap, inv->ncpu, inv->ndisk, inv->nmount, inv->nnic, inv->ngpu, rec);
	if (rc)
		return rc;
	rec->h->inv_gen = inv->gen;
	rt_cpu_fill(c, rec);
	rt_memory_fill(c, rec);
	rt_disk_fill(c, rec);
	rt_net_fill(c, rec);
	for (unsigned i = 0; i < rec->h->ngpu; i++) {
		if (i < c->ngpu_nv)
			rt_nvml_fill(c->nvml, i, &rec->gpu[i]);
		else
			rt_amd_fill(&c->amd, i - c->ngpu_nv, &rec->gpu[i]);
	}
	return 0;
}
