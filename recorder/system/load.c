/*
 * load.c - the load average (/proc/loadavg) into the system section, in
 * hundredths as the kernel prints it. The example of a source that keeps
 * its state to itself: its descriptor lives in `self`, not in the
 * collector.
 */
#include <errno.h>
#include <stdlib.h>

#include "collect.h"
#include "rt/sysroot.h"

struct load_state {
	int fd;
};

static int load_open(struct rt_collector *c, void **self)
{
	(void)c;
	struct load_state *st = malloc(sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->fd = rt_open(RT_PROC, "loadavg");
	*self = st;
	return 0;
}

static void load_close(struct rt_collector *c, void *self)
{
	(void)c;
	struct load_state *st = self;
	if (!st)
		return;
	rt_close_fd(&st->fd);
	free(st);
}

static void load_fill(struct rt_collector *c, void *self, struct rt_record *rec)
{
	struct load_state *st = self;
	size_t len;
	if (rt_read_fd(c, st->fd, &len) == 0 &&
	    rt_parse_loadavg(c->buf, len, rec->sys->load_x100) == 0)
		rec->h->flags |= RT_REC_HAS_LOAD;
}

const struct rt_source rt_source_load = {
    .name = "load", .open = load_open, .fill = load_fill, .close = load_close};
