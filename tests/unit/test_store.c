#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <errno.h>
#include <signal.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rt/common.h"
#include "rt/pack.h"
#include "rt/record.h"
#include "rt/ring.h"
#include "rt/salvage.h"
#include "rt/store.h"

static char dir[256];

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/rt-test-store-%d-%ld", getpid(), random());
}

static void teardown(void)
{
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd)) {
	}
}

TestSuite(store, .init = setup, .fini = teardown);

static _Alignas(64) unsigned char rec[4096];

static size_t make_rec(uint64_t seq, uint64_t wall_s, unsigned ncpu)
{
	struct rt_record r;
	rt_record_init(rec, sizeof(rec), ncpu, 0, 0, 0, 0, &r);
	r.h->seq = seq;
	r.h->wall_ns = wall_s * 1000000000ull;
	r.h->mono_ns = seq * 1000000000ull;
	rt_record_seal(&r);
	return r.h->size;
}

static int count_cb(void *ctx, uint64_t seq, const void *bytes, size_t len)
{
	uint64_t *n = ctx;
	struct rt_record r;
	cr_assert_eq(((uintptr_t)bytes) % 8, 0, "scan must hand out aligned copies");
	cr_assert_eq(rt_record_decode(bytes, len, &r), 0);
	cr_assert_eq(r.h->seq, seq);
	(*n)++;
	return 0;
}

Test(store, default_dir_follows_flag_env_xdg_home)
{
	char b[512];
	setenv("RT_STORE", "/e", 1);
	setenv("XDG_DATA_HOME", "/x", 1);
	setenv("HOME", "/h", 1);
	rt_store_resolve_dir("/f", b, sizeof(b));
	cr_expect_str_eq(b, "/f");
	rt_store_resolve_dir(NULL, b, sizeof(b));
	cr_expect_str_eq(b, "/e");
	unsetenv("RT_STORE");
	rt_store_resolve_dir(NULL, b, sizeof(b));
	cr_expect_str_eq(b, "/x/resource-tracker");
	unsetenv("XDG_DATA_HOME");
	rt_store_resolve_dir(NULL, b, sizeof(b));
	cr_expect_str_eq(b, "/h/.local/share/resource-tracker");
}

Test(store, runs_get_increasing_ids_and_samples_stay_per_run)
{
	struct rt_store *s;
	cr_assert_eq(rt_store_open(dir, RT_STORE_RDWR, &s), 0);
	uint64_t a, b;
	cr_assert_eq(rt_store_new_run(s, "{\"a\":1}", 7, &a), 0);
	cr_assert_eq(rt_store_new_run(s, "{\"b\":2}", 7, &b), 0);
	cr_expect_eq(b, a + 1);
	/* interleaved appends of two live runs (MDB_APPEND falls back) */
	for (uint64_t i = 0; i < 50; i++) {
		cr_assert_eq(rt_store_append(s, a, i, rec, make_rec(i, 1000 + i, 2)), 0);
		cr_assert_eq(rt_store_append(s, b, i, rec, make_rec(i, 2000 + i, 2)), 0);
	}
	uint64_t first, last, n = 0;
	cr_assert_eq(rt_store_seq_bounds(s, a, &first, &last), 0);
	cr_expect_eq(first, 0);
	cr_expect_eq(last, 49);
	cr_assert_eq(rt_store_scan(s, b, 10, 19, count_cb, &n), 0);
	cr_expect_eq(n, 10);
	uint64_t seq;
	cr_assert_eq(rt_store_seq_at_time(s, b, 2020ull * 1000000000ull, &seq), 0);
	cr_expect_eq(seq, 20);
	cr_expect_eq(rt_store_seq_at_time(s, b, 9999ull * 1000000000ull, &seq), RT_E_NOTFOUND);
	char *meta;
	size_t len;
	cr_assert_eq(rt_store_get_meta(s, b, &meta, &len), 0);
	cr_expect_str_eq(meta, "{\"b\":2}");
	free(meta);
	cr_expect_eq(rt_store_get_meta(s, 99, &meta, &len), RT_E_NOTFOUND);
	rt_store_close(s);
}

Test(store, reader_follows_a_map_grown_by_the_writer)
{
	struct rt_store *w, *r;
	cr_assert_eq(rt_store_open(dir, RT_STORE_RDWR, &w), 0);
	uint64_t run;
	cr_assert_eq(rt_store_new_run(w, "{}", 2, &run), 0);
	rt_store_close(w);
	cr_assert_eq(rt_store_open(dir, RT_STORE_RDONLY, &r), 0);
	pid_t pid = fork();
	if (pid == 0) { /* writer: > 64 MiB initial map, so it must grow */
		struct rt_store *cw;
		if (rt_store_open(dir, RT_STORE_RDWR, &cw))
			_exit(1);
		for (uint64_t i = 0; i < 90000; i++)
			if (rt_store_append(cw, run, i, rec, make_rec(i, 1000 + i, 48)))
				_exit(2);
		rt_store_close(cw);
		_exit(0);
	}
	int st;
	waitpid(pid, &st, 0);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "writer failed: %d", st);
	uint64_t n = 0;
	cr_assert_eq(rt_store_scan(r, run, 0, UINT64_MAX, count_cb, &n), 0);
	cr_expect_eq(n, 90000);
	rt_store_close(r);
}

Test(store, size_cap_deletes_oldest_finished_runs_first)
{
	struct rt_store *s;
	cr_assert_eq(rt_store_open(dir, RT_STORE_RDWR, &s), 0);
	uint64_t ids[4];
	for (int k = 0; k < 4; k++) {
		const char *m = k == 1 ? "{\"status\":\"running\"}" : "{\"status\":\"finished\"}";
		cr_assert_eq(rt_store_new_run(s, m, strlen(m), &ids[k]), 0);
		for (uint64_t i = 0; i < 3000; i++)
			rt_store_append(s, ids[k], i, rec, make_rec(i, i, 8));
	}
	uint64_t used;
	cr_assert_eq(rt_store_used_bytes(s, &used), 0);
	rt_store_set_cap(s, used / 2);
	unsigned deleted;
	cr_assert_eq(rt_store_enforce_cap(s, ids[3], &deleted), 0);
	cr_expect_geq(deleted, 1);
	char *meta;
	size_t len;
	cr_expect_eq(rt_store_get_meta(s, ids[0], &meta, &len), RT_E_NOTFOUND, "oldest goes first");
	cr_expect_eq(rt_store_get_meta(s, ids[1], &meta, &len), 0, "running run kept");
	free(meta);
	cr_expect_eq(rt_store_get_meta(s, ids[3], &meta, &len), 0, "current run kept");
	free(meta);
	uint64_t first, last;
	cr_expect_eq(rt_store_seq_bounds(s, ids[0], &first, &last), RT_E_NOTFOUND);
	rt_store_close(s);
}

Test(store, reader_of_a_missing_store_gets_enoent)
{
	struct rt_store *s;
	cr_expect_eq(rt_store_open(dir, RT_STORE_RDONLY, &s), -ENOENT);
}

static int seq_last(struct rt_store *s, uint64_t run)
{
	uint64_t first, last;
	return rt_store_seq_bounds(s, run, &first, &last) ? -1 : (int)last;
}

Test(store, a_group_is_committed_when_full_or_old_and_on_close)
{
	struct rt_store *s;
	cr_assert_eq(rt_store_open(dir, RT_STORE_RDWR, &s), 0);
	rt_store_set_group(s, 4, 10000000000ull, 1); /* 4 samples or 10 s */
	uint64_t run;
	cr_assert_eq(rt_store_new_run(s, "{}", 2, &run), 0);
	for (uint64_t i = 0; i < 3; i++)
		cr_assert_eq(rt_store_append(s, run, i, rec, make_rec(i, 100 + i, 2)), 0);
	cr_expect_eq(seq_last(s, run), -1, "nothing committed before the group is full");
	cr_expect_eq(rt_store_pending(s), 3);
	cr_assert_eq(rt_store_append(s, run, 3, rec, make_rec(3, 103, 2)), 0);
	cr_expect_eq(seq_last(s, run), 3);
	cr_assert_eq(rt_store_append(s, run, 4, rec, make_rec(4, 104, 2)), 0);
	cr_expect_eq(seq_last(s, run), 3);
	/* 11 s of the samples' clock after sample 4 */
	size_t n = make_rec(5, 115, 2);
	((struct rt_rec_header *)(void *)rec)->mono_ns = 15000000000ull;
	struct rt_record r;
	rt_record_point(rec, &r);
	rt_record_seal(&r);
	cr_assert_eq(rt_store_append(s, run, 5, rec, n), 0);
	cr_expect_eq(seq_last(s, run), 5, "the age limit commits");
	cr_assert_eq(rt_store_append(s, run, 6, rec, make_rec(6, 116, 2)), 0);
	rt_store_close(s);
	cr_assert_eq(rt_store_open(dir, RT_STORE_RDONLY, &s), 0);
	cr_expect_eq(seq_last(s, run), 6, "close commits what waits");
	uint64_t count = 0;
	cr_assert_eq(rt_store_scan(s, run, 0, 100, count_cb, &count), 0);
	cr_expect_eq(count, 7);
	rt_store_close(s);
}

Test(store, a_dead_writers_ring_is_salvaged_exactly_once_and_the_run_marked_crashed)
{
	char shm[300];
	snprintf(shm, sizeof(shm), "%s-shm", dir);
	mkdir(shm, 0700);
	setenv("RT_SHM_DIR", shm, 1);
	int p[2];
	cr_assert_eq(pipe(p), 0);
	pid_t pid = fork();
	if (pid == 0) { /* the recorder: 10 samples in the ring, 5 committed, killed */
		struct rt_store *s;
		struct rt_ring *ring;
		char path[4096];
		uint64_t run;
		char meta[64];
		int n = snprintf(meta, sizeof(meta), "{\"status\":\"running\",\"recorder_pid\":%d}",
		                 (int)getpid());
		if (rt_store_open(dir, RT_STORE_RDWR, &s) ||
		    rt_store_new_run(s, meta, (size_t)n, &run))
			_exit(1);
		rt_store_set_group(s, 100, 0, 0);
		rt_ring_path(path, sizeof(path), rt_store_ring_key(s), run);
		if (rt_ring_create(path, run, 1024, 16, &ring))
			_exit(2);
		for (uint64_t i = 0; i < 10; i++) {
			size_t len = make_rec(i, 100 + i, 2);
			rt_ring_publish(ring, i, rec, len);
			rt_store_append(s, run, i, rec, len);
			if (i == 4)
				rt_store_flush(s);
		}
		if (write(p[1], "x", 1) != 1)
			_exit(3);
		pause(); /* SIGKILL: nothing else is committed */
	}
	close(p[1]);
	char c;
	cr_assert_eq(read(p[0], &c, 1), 1);
	kill(pid, SIGKILL);
	int status;
	waitpid(pid, &status, 0);
	struct rt_store *s;
	cr_assert_eq(rt_store_open(dir, RT_STORE_RDONLY, &s), 0);
	cr_expect_eq(seq_last(s, 1), 4, "the killed writer had committed 0..4");
	unsigned runs = 9, samples = 9;
	int rc = rt_salvage_dead_runs(s, &runs, &samples);
	cr_assert_eq(rc, 0, "%s (%s)", rt_strerror(rc), rt_store_last_error(s));
	cr_expect_eq(runs, 1);
	cr_expect_eq(samples, 5);
	cr_expect_eq(seq_last(s, 1), 9);
	uint64_t count = 0;
	cr_assert_eq(rt_store_scan(s, 1, 0, 100, count_cb, &count), 0);
	cr_expect_eq(count, 10, "every sample once");
	char *meta;
	size_t len;
	cr_assert_eq(rt_store_get_meta(s, 1, &meta, &len), 0);
	cr_expect(strstr(meta, "\"crashed\"") != NULL, "%s", meta);
	free(meta);
	char path[4096];
	rt_ring_path(path, sizeof(path), rt_store_ring_key(s), 1);
	cr_expect_eq(access(path, F_OK), -1, "the ring is removed");
	cr_assert_eq(rt_salvage_dead_runs(s, &runs, &samples), 0);
	cr_expect_eq(runs, 0, "nothing left to finish");
	rt_store_close(s);
	char cmd[400];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", shm);
	cr_expect_eq(system(cmd), 0);
	unsetenv("RT_SHM_DIR");
}

/* The size cap never stalls the recorder: with a time budget, a big run is
 * deleted a slice per call, and leaves every listing at once. */
static int count_runs(void *ctx, uint64_t run, const char *meta, size_t len)
{
	(void)run, (void)meta, (void)len;
	++*(int *)ctx;
	return 0;
}

/* n samples stored one value each, as rt before store blocks wrote them
 * (60,000 of them are 60,000 entries to delete; blocks would hold them in
 * a few hundred) */
static void old_form_run(struct rt_store *s, uint64_t run, uint64_t n)
{
	struct rt_pack_state st;
	static unsigned char packed[1 << 16];
	cr_assert_eq(rt_pack_state_init(&st), 0);
	for (uint64_t i = 0; i < n; i++) {
		struct rt_record r;
		cr_assert_eq(rt_record_decode(rec, make_rec(i, i, 8), &r), 0);
		size_t len = rt_pack(&st, i, &r, packed);
		cr_assert_eq(rt_store_put_sample_bytes(s, run, i, packed, len), 0);
	}
	rt_pack_state_free(&st);
}

Test(store, size_cap_deletes_a_big_run_in_slices)
{
	struct rt_store *s;
	cr_assert_eq(rt_store_open(dir, RT_STORE_RDWR, &s), 0);
	rt_store_set_group(s, 4096, UINT64_MAX, 0);
	uint64_t ids[2];
	for (int k = 0; k < 2; k++) {
		const char *m = "{\"status\":\"finished\"}";
		cr_assert_eq(rt_store_new_run(s, m, strlen(m), &ids[k]), 0);
		if (k) {
			for (uint64_t i = 0; i < 100; i++)
				rt_store_append(s, ids[k], i, rec, make_rec(i, i, 8));
		} else {
			old_form_run(s, ids[k], 60000);
		}
		rt_store_flush(s);
	}
	uint64_t used;
	cr_assert_eq(rt_store_used_bytes(s, &used), 0);
	rt_store_set_cap(s, used / 4);
	rt_store_set_cap_budget(s, 1000000); /* 1 ms */
	unsigned deleted = 0, total = 0;
	int calls = 0, runs = 0;
	cr_assert_eq(rt_store_enforce_cap(s, ids[1], &deleted), 0);
	calls++;
	total += deleted;
	cr_expect(rt_store_cap_more(s), "60000 samples are not deleted within 1 ms");
	rt_store_list_runs(s, count_runs, &runs);
	cr_expect_eq(runs, 1, "the run being deleted is listed no more");
	while (rt_store_cap_more(s) && calls < 10000) {
		cr_assert_eq(rt_store_enforce_cap(s, ids[1], &deleted), 0);
		total += deleted;
		calls++;
	}
	cr_expect_eq(total, 1);
	cr_expect_gt(calls, 2, "done in slices (%d calls)", calls);
	uint64_t first, last;
	cr_expect_eq(rt_store_seq_bounds(s, ids[0], &first, &last), RT_E_NOTFOUND);
	cr_expect_eq(rt_store_seq_bounds(s, ids[1], &first, &last), 0, "the current run kept");
	rt_store_close(s);
}

/* Set the size of every value kept on overflow pages (a leaf node flagged
 * F_BIGDATA) in dir's data.mdb to 4 GiB - 1, as a damaged or crafted page
 * says it (LMDB 0.9's layout: a 16-byte page header, then the node
 * offsets; a node is size lo, size hi, flags, key size). How many. */
static unsigned damage_big_value_sizes(void)
{
	char p[300];
	snprintf(p, sizeof(p), "%s/data.mdb", dir);
	FILE *f = fopen(p, "r+b");
	cr_assert(f);
	static unsigned char data[1 << 20];
	size_t n = fread(data, 1, sizeof(data), f);
	uint32_t ps;
	memcpy(&ps, data + 16 + 24, 4); /* the free DB's md_pad: the page size */
	unsigned hits = 0;
	for (size_t pg = 2; ps && (pg + 1) * ps <= n; pg++) {
		unsigned char *page = data + pg * ps;
		uint16_t flags, lower, off, nflags;
		memcpy(&flags, page + 10, 2);
		memcpy(&lower, page + 12, 2);
		if ((flags & 0x3e) != 0x02 || lower < 16 || lower > ps)
			continue; /* a plain leaf page only */
		for (unsigned i = 0; i < (lower - 16u) / 2; i++) {
			memcpy(&off, page + 16 + 2 * i, 2);
			if (off + 8u > ps)
				continue;
			memcpy(&nflags, page + off + 4, 2);
			if (nflags & 1) {
				memset(page + off, 0xff, 4);
				hits++;
			}
		}
	}
	rewind(f);
	cr_assert_eq(fwrite(data, 1, n, f), n);
	fclose(f);
	return hits;
}

Test(store, a_damaged_value_size_is_refused_before_it_is_used)
{
	/* issue 45 item 6: a crafted overflow size made get_copy allocate up
	 * to 4 GiB and copy past the map (ASan aborted) */
	struct rt_store *s;
	static char meta[6000];
	memset(meta, ' ', sizeof(meta));
	memcpy(meta, "{\"a\":1", 6);
	meta[sizeof(meta) - 1] = '}';
	uint64_t run;
	cr_assert_eq(rt_store_open(dir, RT_STORE_RDWR, &s), 0);
	cr_assert_eq(rt_store_new_run(s, meta, sizeof(meta), &run), 0);
	for (uint64_t i = 0; i < 5; i++)
		cr_assert_eq(rt_store_append(s, run, i, rec, make_rec(i, 1000 + i, 2)), 0);
	rt_store_close(s);
	cr_assert_geq(damage_big_value_sizes(), 1, "the metadata was not kept on overflow pages");
	cr_assert_eq(rt_store_open(dir, RT_STORE_RDONLY, &s), 0);
	char *m;
	size_t mlen;
	cr_expect_eq(rt_store_get_meta(s, run, &m, &mlen), RT_E_CORRUPT);
	cr_expect(strstr(rt_store_last_error(s), "runs past the data file"), "%s",
	          rt_store_last_error(s));
	uint64_t n = 0;
	cr_expect_eq(rt_store_scan(s, run, 0, 4, count_cb, &n), 0, "the samples are intact");
	cr_expect_eq(n, 5);
	rt_store_close(s);
}
