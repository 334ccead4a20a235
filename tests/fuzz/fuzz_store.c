/* libFuzzer target: a store directory whose data.mdb holds hostile bytes
 * (flipped bits, zeroed or cut pages, another machine's file, noise).
 * Readers' paths must refuse it or read what they can, never crash or
 * hang: open, the quick check, the run list, each run's bounds, metadata,
 * inventory and samples (decoded), as replay, runs and verify read them.
 * Then the writers' paths: a store that passes the page check (what
 * delete, compact, salvage and the size cap look at first) is written as
 * they write it (a run deleted, a run added, samples appended, the cap
 * enforced), where LMDB follows the page bytes: under ASan, an invalid
 * write there is a page the check let through. The same bytes go through
 * recover's page scan (rt_lmdb_carve), every key and value it hands out
 * read to its last byte. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rt/lmdbcarve.h"
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

static int carve_cb(void *ctx, const uint8_t *key, size_t klen, const uint8_t *val, size_t vlen,
                    uint64_t pgno)
{
	unsigned *sum = ctx;
	(void)pgno;
	for (size_t i = 0; i < klen; i++)
		*sum += key[i];
	for (size_t i = 0; i < vlen; i++)
		*sum += val[i];
	return 0;
}

/* RT_FUZZ_STATS set: how many inputs reached the writers' paths, at exit */
static unsigned long inputs, written;
static void stats(void)
{
	fprintf(stderr, "fuzz_store: %lu inputs, %lu written through the writers' paths\n", inputs,
	        written);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!inputs++ && getenv("RT_FUZZ_STATS"))
		atexit(stats);
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
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0) {
		static unsigned sum;
		rt_lmdb_carve(fd, carve_cb, &sum);
		close(fd);
	}
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
	int sound = rt_store_check_pages(s) == 0;
	rt_store_close(s);
	if (!sound || rt_store_open(dir, RT_STORE_RDWR, &s) != 0)
		return 0;
	written++;
	if (seen.n)
		rt_store_delete_run(s, seen.ids[0]);
	uint64_t run;
	if (rt_store_new_run(s, "{}", 2, &run) == 0) {
		static _Alignas(8) unsigned char rec[512];
		struct rt_record r;
		if (rt_record_init(rec, sizeof(rec), 1, 0, 0, 0, 0, &r) == 0) {
			rt_record_seal(&r);
			for (uint64_t q = 0; q < 64; q++)
				rt_store_append(s, run, q, rec, r.h->size);
			rt_store_commit(s);
		}
	}
	unsigned deleted;
	rt_store_set_cap(s, 1);
	rt_store_enforce_cap(s, run, &deleted);
	rt_store_close(s);
	return 0;
}
