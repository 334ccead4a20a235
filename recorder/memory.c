/* memory.c - /proc/meminfo into the record (kB, raw). */
#include "collect.h"

void rt_memory_fill(struct rt_collector *c, struct rt_record *rec)
{
	size_t len;
	if (rt_read_fd(c, c->fd_meminfo, &len))
		return;
	unsigned found = rt_parse_meminfo(c->buf, len, rec->sys->mem_kb);
	if (!(found & (1u << RT_MEM_TOTAL)))
		return;
	/* kernels before 3.14 have no MemAvailable: estimate it */
	if (!(found & (1u << RT_MEM_AVAILABLE)))
		rec->sys->mem_kb[RT_MEM_AVAILABLE] = rec->sys->mem_kb[RT_MEM_FREE] +
		                                     rec->sys->mem_kb[RT_MEM_BUFFERS] +
		                                     rec->sys->mem_kb[RT_MEM_CACHED];
	rec->h->flags |= RT_REC_HAS_MEM;
}
