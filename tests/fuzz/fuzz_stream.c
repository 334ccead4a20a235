/* libFuzzer target: the recorder's live stream as rt-export live --fd
 * reads it (frames, run metadata, inventories, records, then derivation
 * and formatting): bytes from a pipe whose writer may be anything. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "export.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	if (fd < 0 && (fd = memfd_create("fuzz-stream", 0)) < 0)
		abort();
	if (ftruncate(fd, 0) || (size && pwrite(fd, data, size, 0) != (ssize_t)size))
		abort();
	/* both output formats, as -f json and -f csv would print it */
	for (enum rt_format fmt = RT_FMT_JSON; fmt <= RT_FMT_CSV; fmt++) {
		if (lseek(fd, 0, SEEK_SET) != 0)
			abort();
		struct rt_sink k = {.fd = -1, .memory = 1, .name = "fuzz"};
		struct rt_runinfo ri = {.interval = 1.0};
		struct rt_emitter e;
		if (rt_emitter_init(&e, NULL, &ri, fmt, &k))
			abort();
		struct rt_buf meta = {0}; /* kept for --summary */
		e.last_meta = &meta;
		rt_follow_stream(&e, fd);
		rt_emitter_free(&e);
		rt_buf_free(&k.buf);
		rt_buf_free(&meta);
	}
	return 0;
}
