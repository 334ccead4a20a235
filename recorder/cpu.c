/*
 * cpu.c - /proc/stat (total and per CPU), the process count and the
 * recorder's cgroup CPU usage and quota (v2 cpu.stat/cpu.max, v1 cpuacct).
 * The process count (a walk of /proc) and the quota are refreshed once a
 * second (c->slow); the record carries the last ones in between.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "collect.h"
#include "rt/sysroot.h"

/* The CPU quota from the kept limit files (a quota may change mid-run). */
static void read_cg_limits(struct rt_collector *c)
{
	char q[64], per[64];
	c->has_cg_quota = 0;
	if (c->fd_cg_max >= 0) {
		ssize_t n = rt_pread_once(c->fd_cg_max, q, sizeof(q));
		if (n > 0 && rt_parse_cg_max(q, (size_t)n, &c->cg_quota, &c->cg_period) == 0)
			c->has_cg_quota = 1;
		return;
	}
	if (c->fd_cg_quota < 0 || c->fd_cg_period < 0 ||
	    rt_pread_once(c->fd_cg_quota, q, sizeof(q)) <= 0 ||
	    rt_pread_once(c->fd_cg_period, per, sizeof(per)) <= 0)
		return;
	long long qv = strtoll(q, NULL, 10);
	unsigned long long pv = strtoull(per, NULL, 10);
	if (pv) {
		c->cg_quota = qv > 0 ? qv : -1;
		c->cg_period = pv;
		c->has_cg_quota = 1;
	}
}

/* Find our cgroup and open its CPU usage and limit files. */
static void open_cgroup(struct rt_collector *c)
{
	char cg[4096], rel[4400];
	c->has_cg_quota = 0;
	ssize_t len = rt_read_small(RT_PROC, "self/cgroup", cg, sizeof(cg));
	if (len < 0)
		return;
	struct rt_cgroup_paths cp;
	rt_parse_proc_cgroup(cg, (size_t)len, &cp);
	const char *v2path = cp.v2, *v1acct = cp.cpuacct, *v1cpu = cp.cpu;
	/* cgroup v2, at the unified mount of a pure or hybrid host */
	static const char *v2roots[] = {"fs/cgroup", "fs/cgroup/unified"};
	if (v2path[0] && !v1acct[0]) {
		for (size_t i = 0; i < 2 && c->fd_cg_usage < 0; i++) {
			snprintf(rel, sizeof(rel), "%s%s/cpu.stat", v2roots[i],
			         strcmp(v2path, "/") ? v2path : "");
			c->fd_cg_usage = rt_open(RT_SYS, rel);
			if (c->fd_cg_usage >= 0) {
				c->cg_v2 = 1;
				snprintf(rel, sizeof(rel), "%s%s/cpu.max", v2roots[i],
				         strcmp(v2path, "/") ? v2path : "");
				c->fd_cg_max = rt_open(RT_SYS, rel);
			}
		}
		return;
	}
	if (!v1acct[0])
		return;
	static const char *v1acct_dirs[] = {"fs/cgroup/cpuacct", "fs/cgroup/cpu,cpuacct"};
	for (size_t i = 0; i < 2 && c->fd_cg_usage < 0; i++) {
		snprintf(rel, sizeof(rel), "%s%s/cpuacct.usage", v1acct_dirs[i],
		         strcmp(v1acct, "/") ? v1acct : "");
		c->fd_cg_usage = rt_open(RT_SYS, rel);
	}
	c->cg_v2 = 0;
	static const char *v1cpu_dirs[] = {"fs/cgroup/cpu", "fs/cgroup/cpu,cpuacct"};
	for (size_t i = 0; i < 2 && v1cpu[0] && c->fd_cg_period < 0; i++) {
		const char *sub = strcmp(v1cpu, "/") ? v1cpu : "";
		snprintf(rel, sizeof(rel), "%s%s/cpu.cfs_quota_us", v1cpu_dirs[i], sub);
		c->fd_cg_quota = rt_open(RT_SYS, rel);
		if (c->fd_cg_quota < 0)
			continue;
		snprintf(rel, sizeof(rel), "%s%s/cpu.cfs_period_us", v1cpu_dirs[i], sub);
		c->fd_cg_period = rt_open(RT_SYS, rel);
		if (c->fd_cg_period < 0)
			rt_close_fd(&c->fd_cg_quota);
	}
}

static int cpu_open(struct rt_collector *c, void **self)
{
	(void)self;
	c->fd_stat = rt_open(RT_PROC, "stat");
	c->fd_proc = rt_open(RT_PROC, "");
	c->fd_cg_usage = c->fd_cg_max = c->fd_cg_quota = c->fd_cg_period = -1;
	open_cgroup(c);
	return 0;
}

static void cpu_close(struct rt_collector *c, void *self)
{
	(void)self;
	rt_close_fd(&c->fd_stat);
	rt_close_fd(&c->fd_proc);
	rt_close_fd(&c->fd_cg_usage);
	rt_close_fd(&c->fd_cg_max);
	rt_close_fd(&c->fd_cg_quota);
	rt_close_fd(&c->fd_cg_period);
}

static void cpu_read(struct rt_collector *c, void *self, int *changed)
{
	(void)self;
	size_t len;
	unsigned before = c->stat.ncpu;
	c->stat.have_agg = 0;
	if (rt_read_fd(c, c->fd_stat, &len) == 0)
		rt_parse_proc_stat(c->buf, len, &c->stat);
	else
		c->stat.ncpu = 0;
	/* CPU hotplug changes the set of cpuN lines */
	if (c->stat.ncpu != c->inv->ncpu || c->stat.ncpu != before)
		*changed = 1;
	else
		for (unsigned i = 0; i < c->stat.ncpu; i++)
			if (c->stat.cpu[i].id != c->inv->cpu_id[i]) {
				*changed = 1;
				break;
			}
}

static void cpu_inventory(struct rt_collector *c, void *self, struct rt_inventory *inv)
{
	(void)self;
	long hz = sysconf(_SC_CLK_TCK);
	inv->hz = hz > 0 ? (uint32_t)hz : 100;
	inv->ncpu = c->stat.ncpu;
	for (unsigned i = 0; i < c->stat.ncpu; i++)
		inv->cpu_id[i] = c->stat.cpu[i].id;
}

/* Count numeric entries of /proc with getdents64 on the open directory:
 * no allocation, no per-entry syscalls. */
static int count_procs(int fd, uint32_t *out)
{
	if (fd < 0 || lseek(fd, 0, SEEK_SET) < 0)
		return -1;
	char buf[32768] __attribute__((aligned(8)));
	uint32_t n = 0;
	for (;;) {
		long got = syscall(SYS_getdents64, fd, buf, sizeof(buf));
		if (got < 0)
			return -1;
		if (got == 0)
			break;
		for (long off = 0; off < got;) {
			struct {
				uint64_t ino;
				int64_t off;
				unsigned short reclen;
				unsigned char type;
				char name[];
			} *d = (void *)(buf + off);
			if (d->reclen == 0)
				return -1;
			const char *s = d->name;
			if (*s >= '1' && *s <= '9') {
				while (*s >= '0' && *s <= '9')
					s++;
				n += *s == '\0';
			}
			off += d->reclen;
		}
	}
	*out = n;
	return 0;
}

static void cpu_fill(struct rt_collector *c, void *self, struct rt_record *rec)
{
	(void)self;
	if (c->stat.have_agg) {
		memcpy(rec->sys->cpu, c->stat.agg, sizeof(rec->sys->cpu));
		rec->h->flags |= RT_REC_HAS_CPU;
	}
	rec->sys->procs_running = c->stat.procs_running;
	if (c->stat.have_ctxt) {
		rec->sys->ctxt = c->stat.ctxt;
		rec->sys->ext_valid |= RT_SYS_X_CTXT;
	}
	if (c->stat.have_forks) {
		rec->sys->forks = c->stat.forks;
		rec->sys->ext_valid |= RT_SYS_X_FORKS;
	}
	if (c->stat.have_intr) {
		rec->sys->intr = c->stat.intr;
		rec->sys->ext_valid |= RT_SYS_X_INTR;
	}
	if (c->stat.have_blocked) {
		rec->sys->procs_blocked = c->stat.procs_blocked;
		rec->sys->ext_valid |= RT_SYS_X_BLOCKED;
	}
	for (unsigned i = 0; i < rec->h->ncpu && i < c->stat.ncpu; i++) {
		rec->cpu[i].total = c->stat.cpu[i].total;
		rec->cpu[i].idle = c->stat.cpu[i].idle;
	}
	if (c->slow) {
		c->have_nprocs = count_procs(c->fd_proc, &c->nprocs) == 0;
		read_cg_limits(c);
	}
	if (c->have_nprocs) {
		rec->sys->nprocs = c->nprocs;
		rec->h->flags |= RT_REC_HAS_NPROCS;
	}
	size_t len;
	uint64_t usec;
	if (c->fd_cg_usage >= 0 && rt_read_fd(c, c->fd_cg_usage, &len) == 0 &&
	    (c->cg_v2 ? rt_parse_cg_usage_v2(c->buf, len, &usec)
	              : rt_parse_cg_usage_v1(c->buf, len, &usec)) == 0) {
		rec->sys->cg_usage_usec = usec;
		rec->h->flags |= RT_REC_HAS_CGROUP;
		if (c->has_cg_quota) {
			rec->sys->cg_quota_usec = c->cg_quota;
			rec->sys->cg_period_usec = c->cg_period;
			rec->h->flags |= RT_REC_HAS_CG_QUOTA;
		}
	}
}

const struct rt_source rt_source_cpu = {"cpu",         cpu_open, cpu_read,
                                        cpu_inventory, cpu_fill, cpu_close};
