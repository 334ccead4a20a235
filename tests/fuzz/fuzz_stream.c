/* libFuzzer target: the recorder's live stream as rt-export live --fd
 * reads it (frames, run metadata, inventories, records, then derivation
 * and formatting): bytes from a pipe whose writer may be anything. */
#define _GNU_SOURCE
#include <fcntl.h>
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
	/* both output formats, as -f json and -f csv would print it; then
	 * JSON once more into a full disk (/dev/full: every write fails with
	 * ENOSPC), as live output meets a full filesystem */
	static int full = -2;
	if (full == -2)
		full = open("/dev/full", O_WRONLY | O_CLOEXEC);
	for (int pass = 0; pass < 3; pass++) {
		enum rt_format fmt = pass == 1 ? RT_FMT_CSV : RT_FMT_JSON;
		if (pass == 2 && full < 0)
			break;
		if (lseek(fd, 0, SEEK_SET) != 0)
			abort();
		struct rt_sink k = {.fd = -1, .memory = 1, .name = "fuzz"};
		if (pass == 2)
			k = (struct rt_sink){.fd = full, .line_flush = 1, .name = "fuzz"};
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
