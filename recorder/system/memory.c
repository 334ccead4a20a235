/* memory.c - /proc/meminfo into the record (kB, raw). */
#include <errno.h>
#include <stdlib.h>

#include "collect.h"

#include <string.h>

#include "rt/sysroot.h"

struct mem_state {
	int fd_meminfo;
};

static int memory_open(struct rt_collector *c, void **self)
{
	(void)c;
	struct mem_state *me = calloc(1, sizeof(*me));
	if (!me)
		return -ENOMEM;
	*self = me;
	me->fd_meminfo = rt_open(RT_PROC, "meminfo");
	return 0;
}

static void memory_close(struct rt_collector *c, void *self)
{
	(void)c;
	struct mem_state *me = self;
	if (!me)
		return;
	rt_close_fd(&me->fd_meminfo);
	free(me);
}

static void memory_fill(struct rt_collector *c, void *self, struct rt_record *rec)
{
	struct mem_state *me = self;
	size_t len;
	if (rt_read_fd(c, me->fd_meminfo, &len))
		return;
	uint64_t kb[RT_MEMINFO_N];
	unsigned found = rt_parse_meminfo(c->buf, len, kb);
	if (!(found & (1u << RT_MEM_TOTAL)))
		return;
	memcpy(rec->sys->mem_kb, kb, sizeof(rec->sys->mem_kb));
	if (found & (1u << RT_MEMINFO_DIRTY)) {
		rec->sys->dirty_kb = kb[RT_MEMINFO_DIRTY];
		rec->sys->ext_valid |= RT_SYS_X_DIRTY;
	}
	/* kernels before 3.14 have no MemAvailable: estimate it */
	if (!(found & (1u << RT_MEM_AVAILABLE)))
		rec->sys->mem_kb[RT_MEM_AVAILABLE] = rec->sys->mem_kb[RT_MEM_FREE] +
		                                     rec->sys->mem_kb[RT_MEM_BUFFERS] +
		                                     rec->sys->mem_kb[RT_MEM_CACHED];
	rec->h->flags |= RT_REC_HAS_MEM;
}

const struct rt_source rt_source_memory = {
    .name = "memory", .open = memory_open, .fill = memory_fill, .close = memory_close};
