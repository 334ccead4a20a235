/* libFuzzer target: a ring file with hostile bytes in the user's shm
 * directory. A reader must refuse it cleanly or read only inside the
 * mapping: open, look at its header, read slots around its head, wait with
 * no time, close. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "rt/ring.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char path[128];
	if (!path[0])
		snprintf(path, sizeof(path), "/tmp/rt-fuzz-ring-%d", (int)getpid());
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return 0;
	if (size && write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	/* every other input as if its writer were alive: the writer holds an
	 * exclusive lock on the file for its whole life */
	if (!size || !(data[size - 1] & 1) || flock(fd, LOCK_EX | LOCK_NB) < 0) {
		close(fd);
		fd = -1;
	}
	struct rt_ring *r;
	if (rt_ring_open(path, &r) == 0) {
		static unsigned char buf[1 << 16] __attribute__((aligned(8)));
		uint64_t head = rt_ring_head(r);
		(void)rt_ring_state(r);
		(void)rt_ring_run_id(r);
		(void)rt_ring_slot_count(r);
		/* five slots around the head; a count, not `s <= head + 1`, which
		 * never ends for a head of UINT64_MAX - 1 (regress/ring/timeout-*) */
		uint64_t s = head > 3 ? head - 3 : 0;
		for (int k = 0; k < 5; k++, s++) {
			size_t len;
			rt_ring_read(r, s, buf, sizeof(buf), &len);
		}
		rt_ring_read(r, UINT64_MAX, buf, sizeof(buf), &(size_t){0});
		/* a caller whose buffer is smaller than the record */
		rt_ring_read(r, head ? head - 1 : 0, buf, 8, &(size_t){0});
		rt_ring_wait(r, head, 0);
		rt_ring_wait_end(r, 0);
		(void)rt_ring_writer_alive(r);
		rt_ring_close(r, 1);
	}
	if (fd >= 0)
		close(fd);
	return 0;
}
