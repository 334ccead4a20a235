/*
 * vmstat.c - /proc/vmstat: major page faults, pages swapped in and out
 * (stored in bytes) and OOM kills (Linux 4.13), cumulative, read once a
 * second: above 1 Hz the counts arrive in the sample after the second
 * (totals exact). Keys the kernel does not have leave their ext_valid bit
 * clear: null in JSON.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collect.h"
#include "rt/sysroot.h"

struct vmstat_state {
	int fd;
	uint64_t page;
	uint64_t v[RT_VMSTAT_N]; /* the last read */
	unsigned found;
};

static int vmstat_open(struct rt_collector *c, void **self)
{
	(void)c;
	struct vmstat_state *st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->fd = rt_open(RT_PROC, "vmstat");
	long pg = sysconf(_SC_PAGESIZE);
	st->page = pg > 0 ? (uint64_t)pg : 4096;
	*self = st;
	return 0;
}

static void vmstat_close(struct rt_collector *c, void *self)
{
	(void)c;
	struct vmstat_state *st = self;
	if (!st)
		return;
	rt_close_fd(&st->fd);
	free(st);
}

static void vmstat_fill(struct rt_collector *c, void *self, struct rt_record *rec)
{
	struct vmstat_state *st = self;
	size_t len;
	/* a page-sized file the kernel sums over every CPU: read once a
	 * second (every sample at 1 Hz), the counts carried in between */
	if (c->slow && st->fd >= 0 && rt_read_fd(c, st->fd, &len) == 0) {
		memset(st->v, 0, sizeof(st->v));
		st->found = rt_parse_vmstat(c->buf, len, st->v);
	}
	const uint64_t *v = st->v;
	unsigned found = st->found;
	struct rt_rec_system *s = rec->sys;
	if (found & (1u << RT_VMSTAT_PGMAJFAULT)) {
		s->majflt = v[RT_VMSTAT_PGMAJFAULT];
		s->ext_valid |= RT_SYS_X_MAJFLT;
	}
	if ((found & (1u << RT_VMSTAT_PSWPIN)) && (found & (1u << RT_VMSTAT_PSWPOUT))) {
		s->swap_in_bytes = v[RT_VMSTAT_PSWPIN] * st->page;
		s->swap_out_bytes = v[RT_VMSTAT_PSWPOUT] * st->page;
		s->ext_valid |= RT_SYS_X_SWAP;
	}
	if (found & (1u << RT_VMSTAT_OOM_KILL)) {
		s->oom_kills = v[RT_VMSTAT_OOM_KILL];
		s->ext_valid |= RT_SYS_X_OOM;
	}
}

const struct rt_source rt_source_vmstat = {
    .name = "vmstat", .open = vmstat_open, .fill = vmstat_fill, .close = vmstat_close};
