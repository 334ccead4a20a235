/*
 * cpu.c - /proc/stat (total and per CPU, context switches, interrupts,
 * forks, running and blocked tasks) and the process count. The process
 * count (a walk of /proc) is refreshed once a second (c->slow); the record
 * carries the last one in between. (The cgroup's CPU usage and quota are
 * cgroup.c's.)
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

/* The source's own state (the collector holds it as `self`). */
struct cpu_state {
	int fd_stat, fd_proc; /* /proc/stat, /proc (the process count) */
	uint32_t nprocs;      /* the last count */
	int have_nprocs;
	struct rt_stat_parse stat;
};

static int cpu_open(struct rt_collector *c, void **self)
{
	(void)c;
	/* stat is ~30 kB (a CPU's worth per possible CPU): on the heap */
	struct cpu_state *me = calloc(1, sizeof(*me));
	if (!me)
		return -ENOMEM;
	me->fd_stat = rt_open(RT_PROC, "stat");
	me->fd_proc = rt_open(RT_PROC, "");
	*self = me;
	return 0;
}

static void cpu_close(struct rt_collector *c, void *self)
{
	(void)c;
	struct cpu_state *me = self;
	if (!me)
		return;
	rt_close_fd(&me->fd_stat);
	rt_close_fd(&me->fd_proc);
	free(me);
}

int rt_cpu_host_forks(struct rt_collector *c, uint64_t *forks)
{
	const struct cpu_state *me = rt_collector_own(c, &rt_source_cpu);
	if (!me || !me->stat.have_forks)
		return -1;
	*forks = me->stat.forks;
	return 0;
}

static void cpu_read(struct rt_collector *c, void *self, int *changed)
{
	struct cpu_state *me = self;
	size_t len;
	unsigned before = me->stat.ncpu;
	me->stat.have_agg = 0;
	if (rt_read_fd(c, me->fd_stat, &len) == 0)
		rt_parse_proc_stat(c->buf, len, &me->stat);
	else
		me->stat.ncpu = 0;
	/* CPU hotplug changes the set of cpuN lines */
	if (me->stat.ncpu != c->inv->ncpu || me->stat.ncpu != before)
		*changed = 1;
	else
		for (unsigned i = 0; i < me->stat.ncpu; i++)
			if (me->stat.cpu[i].id != c->inv->cpu_id[i]) {
				*changed = 1;
				break;
			}
}

static void cpu_inventory(struct rt_collector *c, void *self, struct rt_inventory *inv)
{
	(void)c;
	struct cpu_state *me = self;
	long hz = sysconf(_SC_CLK_TCK);
	inv->hz = hz > 0 ? (uint32_t)hz : 100;
	inv->ncpu = me->stat.ncpu;
	for (unsigned i = 0; i < me->stat.ncpu; i++)
		inv->cpu_id[i] = me->stat.cpu[i].id;
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
	struct cpu_state *me = self;
	if (me->stat.have_agg) {
		memcpy(rec->sys->cpu, me->stat.agg, sizeof(rec->sys->cpu));
		rec->h->flags |= RT_REC_HAS_CPU;
	}
	rec->sys->procs_running = me->stat.procs_running;
	if (me->stat.have_ctxt) {
		rec->sys->ctxt = me->stat.ctxt;
		rec->sys->ext_valid |= RT_SYS_X_CTXT;
	}
	if (me->stat.have_forks) {
		rec->sys->forks = me->stat.forks;
		rec->sys->ext_valid |= RT_SYS_X_FORKS;
	}
	if (me->stat.have_intr) {
		rec->sys->intr = me->stat.intr;
		rec->sys->ext_valid |= RT_SYS_X_INTR;
	}
	if (me->stat.have_blocked) {
		rec->sys->procs_blocked = me->stat.procs_blocked;
		rec->sys->ext_valid |= RT_SYS_X_BLOCKED;
	}
	for (unsigned i = 0; i < rec->h->ncpu && i < me->stat.ncpu; i++) {
		rec->cpu[i].total = me->stat.cpu[i].total;
		rec->cpu[i].idle = me->stat.cpu[i].idle;
	}
	if (c->slow) {
		me->have_nprocs = count_procs(me->fd_proc, &me->nprocs) == 0;
	}
	if (me->have_nprocs) {
		rec->sys->nprocs = me->nprocs;
		rec->h->flags |= RT_REC_HAS_NPROCS;
	}
}

const struct rt_source rt_source_cpu = {.name = "cpu",
                                        .open = cpu_open,
                                        .read = cpu_read,
                                        .inventory = cpu_inventory,
                                        .fill = cpu_fill,
                                        .close = cpu_close};
