/* libFuzzer target: a store directory whose data.mdb holds hostile bytes
 * (flipped bits, zeroed or cut pages, another machine's file, noise).
 * Readers' paths must refuse it or read what they can, never crash or
 * hang: open, the quick check, the run list, each run's bounds, metadata,
 * inventory and samples (decoded), as replay, runs and verify read them. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rt/record.h"
#include "rt/store.h"

struct seen {
	uint64_t ids[8];
	unsigned n;
};

static int run_cb(void *ctx, uint64_t run, const char *meta, size_t len)
{
	struct seen *s = ctx;
	(void)meta;
	(void)len;
	if (s->n < 8)
		s->ids[s->n++] = run;
	return s->n >= 8;
}

static int sample_cb(void *ctx, uint64_t seq, const void *rec, size_t len)
{
	struct rt_record r;
	unsigned *n = ctx;
	(void)seq;
	rt_record_decode(rec, len, &r);
	return ++*n > 4000;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char dir[128], path[192];
	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "/tmp/rt-fuzz-store-%d", (int)getpid());
		mkdir(dir, 0700);
		snprintf(path, sizeof(path), "%s/data.mdb", dir);
	}
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return 0;
	if (size && write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	close(fd);
	struct rt_store *s;
	if (rt_store_open(dir, RT_STORE_RDONLY, &s) != 0)
		return 0;
	rt_store_check(s);
	struct seen seen = {{0}, 0};
	rt_store_list_runs(s, run_cb, &seen);
	for (unsigned i = 0; i < seen.n; i++) {
		uint64_t first, last;
		char *meta = NULL;
		size_t len = 0;
		void *inv = NULL;
		unsigned n = 0;
		rt_store_seq_bounds(s, seen.ids[i], &first, &last);
		if (rt_store_get_meta(s, seen.ids[i], &meta, &len) == 0)
			free(meta);
		if (rt_store_get_inventory(s, seen.ids[i], 0, &inv, &len) == 0)
			free(inv);
		rt_store_scan(s, seen.ids[i], 0, UINT64_MAX, sample_cb, &n);
	}
	rt_store_close(s);
	return 0;
}
