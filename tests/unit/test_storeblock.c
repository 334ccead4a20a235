/* A run's samples in store blocks (rt/block.h, shared/store/store_write.c): a
 * page of consecutive samples per value, read back by every lookup as if
 * each sample were alone. White-box where the entries are counted: the
 * samples database is read from the store's inside. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../shared/store/store_int.h"
#include "rt/block.h"
#include "rt/pack.h"
#include "rt/record.h"
#include "rt/store.h"

static char dir[256];
static _Alignas(64) unsigned char rec[1 << 17];
static unsigned ncpu = 4;

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/rt-test-storeblock-%d-%ld", getpid(), random());
	ncpu = 4;
}

static void teardown(void)
{
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd)) {
	}
}

TestSuite(storeblock, .init = setup, .fini = teardown);

/* Sample seq: its wall clock and counters follow from seq alone. */
static size_t make_rec(uint64_t seq)
{
	struct rt_record r;
	rt_record_init(rec, sizeof(rec), ncpu, 0, 0, 0, 0, &r);
	r.h->seq = seq;
	r.h->wall_ns = (1000 + seq) * 1000000000ull;
	r.h->mono_ns = seq * 1000000000ull;
	for (unsigned c = 0; c < ncpu; c++) {
		r.cpu[c].total = seq * 10 + c;
		r.cpu[c].idle = (seq * 2654435761u + c * 40503u) % 100003; /* (varied steps) */
	}
	rt_record_seal(&r);
	return r.h->size;
}

/* Every sample given is the one made for its seq, in rising order. */
struct seen {
	uint64_t n, last;
};

static int check_cb(void *ctx, uint64_t seq, const void *bytes, size_t len)
{
	struct seen *x = ctx;
	struct rt_record r;
	cr_assert_eq(((uintptr_t)bytes) % 8, 0, "aligned");
	cr_assert_eq(rt_record_decode(bytes, len, &r), 0, "seq %llu", (unsigned long long)seq);
	cr_assert_eq(r.h->seq, seq);
	cr_assert_eq(r.h->wall_ns, (1000 + seq) * 1000000000ull);
	unsigned n = r.h->ncpu; /* (4, or 1024 for the oversized sample) */
	cr_assert(n == 4 || n == 1024);
	cr_assert_eq(r.cpu[n - 1].total, seq * 10 + n - 1);
	cr_assert_eq(r.cpu[1].idle, (seq * 2654435761u + 40503u) % 100003);
	cr_assert(x->n == 0 || seq > x->last, "seq %llu after %llu", (unsigned long long)seq,
	          (unsigned long long)x->last);
	x->n++;
	x->last = seq;
	return 0;
}

static MDB_stat samples_stat(struct rt_store *s)
{
	MDB_txn *txn;
	MDB_stat st;
	cr_assert_eq(mdb_txn_begin(s->env, NULL, MDB_RDONLY, &txn), 0);
	cr_assert_eq(mdb_stat(txn, s->samples, &st), 0);
	mdb_txn_abort(txn);
	return st;
}

/* The samples run's entries hold, counted entry by entry (a sample stored
 * twice counts twice). */
static uint64_t stored_records(struct rt_store *s, uint64_t run)
{
	MDB_txn *txn;
	MDB_cursor *cur;
	MDB_val k, v;
	uint64_t n = 0;
	cr_assert_eq(mdb_txn_begin(s->env, NULL, MDB_RDONLY, &txn), 0);
	cr_assert_eq(mdb_cursor_open(txn, s->samples, &cur), 0);
	for (int rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); rc == 0;
	     rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
		if (get_be64(k.mv_data) != run)
			continue;
		struct rt_stored_it it;
		uint64_t seq;
		const void *r;
		size_t len;
		cr_assert_eq(rt_stored_begin(&it, run, get_be64((unsigned char *)k.mv_data + 8),
		                             v.mv_data, v.mv_size),
		             0);
		while (rt_stored_next(&it, &seq, &r, &len) == 1)
			n++;
	}
	mdb_cursor_close(cur);
	mdb_txn_abort(txn);
	return n;
}

/* The store, writable, grouping commits of `group` samples, with one new
 * run in it. */
static struct rt_store *open_with_run(unsigned group, uint64_t *run)
{
	struct rt_store *s;
	cr_assert_eq(rt_store_open(dir, RT_STORE_RDWR, &s), 0);
	rt_store_set_group(s, group, 0, 0);
	cr_assert_eq(rt_store_new_run(s, "{}", 2, run), 0);
	return s;
}

/* Append seqs first, first + step, ... (n of them), committing every group. */
static uint64_t append_run(struct rt_store *s, uint64_t run, uint64_t first, uint64_t step,
                           unsigned n)
{
	uint64_t seq = first;
	for (unsigned i = 0; i < n; i++, seq += step)
		cr_assert_eq(rt_store_append(s, run, seq, rec, make_rec(seq)), 0);
	cr_assert_eq(rt_store_flush(s), 0);
	return seq - step;
}

Test(storeblock, a_run_fills_blocks_of_a_page_and_every_lookup_finds_each_sample)
{
	uint64_t run, first, last;
	struct rt_store *s = open_with_run(7, &run);
	append_run(s, run, 0, 1, 1000);
	MDB_stat st = samples_stat(s);
	size_t packed = 0; /* what the samples' packed bytes alone would fill */
	struct rt_pack_state ps;
	static unsigned char out[1 << 17];
	cr_assert_eq(rt_pack_state_init(&ps), 0);
	for (uint64_t i = 0; i < 1000; i++) {
		struct rt_record r;
		cr_assert_eq(rt_record_decode(rec, make_rec(i), &r), 0);
		packed += rt_pack(&ps, i, &r, out);
	}
	rt_pack_state_free(&ps);
	size_t pages = st.ms_leaf_pages + st.ms_branch_pages + st.ms_overflow_pages;
	cr_expect_lt(st.ms_entries, 1000 / 20, "%zu entries for 1000 samples", st.ms_entries);
	cr_expect_leq(pages * 4096, packed * 115 / 100 + 2 * 4096,
	              "%zu pages for %zu packed bytes: blocks fill their pages", pages, packed);
	struct seen x = {0};
	cr_assert_eq(rt_store_scan(s, run, 0, UINT64_MAX, check_cb, &x), 0);
	cr_expect_eq(x.n, 1000);
	cr_expect_eq(stored_records(s, run), 1000);
	cr_assert_eq(rt_store_seq_bounds(s, run, &first, &last), 0);
	cr_expect_eq(first, 0);
	cr_expect_eq(last, 999);
	for (uint64_t seq = 0; seq < 1000; seq += 37) {
		size_t len;
		static _Alignas(64) unsigned char got[1 << 17];
		cr_assert_eq(rt_store_has_sample(s, run, seq), 1);
		cr_assert_eq(rt_store_get_sample(s, run, seq, got, sizeof(got), &len), 0);
		struct seen one = {0};
		check_cb(&one, seq, got, len);
		uint64_t at;
		cr_assert_eq(rt_store_seq_at_time(s, run, (1000 + seq) * 1000000000ull, &at), 0);
		cr_expect_eq(at, seq);
	}
	cr_expect_eq(rt_store_has_sample(s, run, 1000), 0);
	rt_store_close(s);
}

Test(storeblock, a_scan_from_any_seq_gives_from_there_on_right)
{
	uint64_t run;
	struct rt_store *s = open_with_run(50, &run);
	append_run(s, run, 0, 1, 400);
	for (uint64_t from = 0; from < 400; from += 13) {
		struct seen x = {0};
		cr_assert_eq(rt_store_scan(s, run, from, from + 70, check_cb, &x), 0);
		uint64_t want = from + 70 < 400 ? 71 : 400 - from;
		cr_expect_eq(x.n, want, "from %llu: %llu", (unsigned long long)from,
		             (unsigned long long)x.n);
	}
	rt_store_close(s);
}

Test(storeblock, gaps_in_a_block_are_no_samples)
{
	uint64_t run, first, last;
	struct rt_store *s = open_with_run(10, &run);
	uint64_t end = append_run(s, run, 5, 3, 200); /* 5, 8, 11, ... */
	struct seen x = {0};
	cr_assert_eq(rt_store_scan(s, run, 0, UINT64_MAX, check_cb, &x), 0);
	cr_expect_eq(x.n, 200);
	cr_assert_eq(rt_store_seq_bounds(s, run, &first, &last), 0);
	cr_expect_eq(first, 5);
	cr_expect_eq(last, end);
	cr_expect_eq(rt_store_has_sample(s, run, 8), 1);
	cr_expect_eq(rt_store_has_sample(s, run, 9), 0);
	cr_expect_eq(rt_store_has_sample(s, run, 4), 0);
	size_t len;
	static _Alignas(64) unsigned char got[1 << 17];
	cr_expect_eq(rt_store_get_sample(s, run, 10, got, sizeof(got), &len), RT_E_NOTFOUND);
	x = (struct seen){0};
	cr_assert_eq(rt_store_scan(s, run, 9, 20, check_cb, &x), 0);
	cr_expect_eq(x.n, 4, "11, 14, 17, 20");
	rt_store_close(s);
}

/* The open block is rewritten at every commit; a reader between two sees
 * each sample once (a tail). */
Test(storeblock, a_reader_follows_the_open_block_as_it_grows)
{
	struct rt_store *s, *r;
	uint64_t run;
	cr_assert_eq(rt_store_open(dir, RT_STORE_RDWR, &s), 0);
	cr_assert_eq(rt_store_open(dir, RT_STORE_RDONLY, &r), 0);
	rt_store_set_group(s, 3, 0, 0);
	cr_assert_eq(rt_store_new_run(s, "{}", 2, &run), 0);
	struct seen x = {0};
	uint64_t next = 0;
	for (uint64_t seq = 0; seq < 300; seq++) {
		cr_assert_eq(rt_store_append(s, run, seq, rec, make_rec(seq)), 0);
		if (seq % 11 == 0) {
			cr_assert_eq(rt_store_scan(r, run, next, UINT64_MAX, check_cb, &x), 0);
			next = x.n ? x.last + 1 : 0;
		}
	}
	cr_assert_eq(rt_store_flush(s), 0);
	cr_assert_eq(rt_store_scan(r, run, next, UINT64_MAX, check_cb, &x), 0);
	cr_expect_eq(x.n, 300, "each sample once");
	cr_expect_eq(stored_records(s, run), 300);
	rt_store_close(r);
	rt_store_close(s);
}

/* Two runs written in one group each keep their own blocks. */
Test(storeblock, runs_interleaved_in_one_group_keep_their_own_blocks)
{
	struct rt_store *s;
	uint64_t a, b;
	cr_assert_eq(rt_store_open(dir, RT_STORE_RDWR, &s), 0);
	rt_store_set_group(s, 64, 0, 0);
	cr_assert_eq(rt_store_new_run(s, "{}", 2, &a), 0);
	cr_assert_eq(rt_store_new_run(s, "{}", 2, &b), 0);
	for (uint64_t seq = 0; seq < 500; seq++) {
		cr_assert_eq(rt_store_append(s, a, seq, rec, make_rec(seq)), 0);
		cr_assert_eq(rt_store_append(s, b, seq, rec, make_rec(seq)), 0);
	}
	cr_assert_eq(rt_store_flush(s), 0);
	for (int i = 0; i < 2; i++) {
		struct seen x = {0};
		cr_assert_eq(rt_store_scan(s, i ? b : a, 0, UINT64_MAX, check_cb, &x), 0);
		cr_expect_eq(x.n, 500);
	}
	cr_expect_lt(samples_stat(s).ms_entries, 2 * 500 / 20);
	rt_store_close(s);
}

/* A run written by an rt before blocks (one value per sample) goes on in
 * blocks; a sample too big for a block is stored alone between them. */
Test(storeblock, singles_blocks_and_an_oversized_sample_read_as_one_run)
{
	uint64_t run;
	struct rt_store *s = open_with_run(5, &run);
	struct rt_pack_state ps;
	static unsigned char out[1 << 17];
	cr_assert_eq(rt_pack_state_init(&ps), 0);
	for (uint64_t i = 0; i < 30; i++) {
		struct rt_record r;
		cr_assert_eq(rt_record_decode(rec, make_rec(i), &r), 0);
		size_t n = rt_pack(&ps, i, &r, out);
		cr_assert_eq(rt_store_put_sample_bytes(s, run, i, out, n), 0);
	}
	rt_pack_state_free(&ps);
	append_run(s, run, 30, 1, 100);
	ncpu = 1024; /* a machine so big one full sample is over a page packed */
	size_t big = make_rec(130);
	cr_assert_eq(rt_store_append(s, run, 130, rec, big), 0);
	cr_assert_gt(s->pbytes_len, RT_BLOCK_MAX, "%zu bytes packed", s->pbytes_len);
	ncpu = 4;
	append_run(s, run, 131, 1, 100);
	struct seen x = {0};
	cr_assert_eq(rt_store_scan(s, run, 0, UINT64_MAX, check_cb, &x), 0);
	cr_expect_eq(x.n, 231);
	for (uint64_t seq = 125; seq < 136; seq++)
		cr_expect_eq(rt_store_has_sample(s, run, seq), 1, "%llu", (unsigned long long)seq);
	x = (struct seen){0};
	cr_assert_eq(rt_store_scan(s, run, 128, 133, check_cb, &x), 0);
	cr_expect_eq(x.n, 6);
	rt_store_close(s);
}

/* A commit that fills the map is tried again after the map grows: the
 * blocks the failed try changed are begun again, nothing is doubled. */
Test(storeblock, a_commit_tried_again_after_a_full_map_stores_each_sample_once)
{
	uint64_t run;
	struct rt_store *s = open_with_run(40, &run);
	append_run(s, run, 0, 1, 30); /* an open block of 30 */
	MDB_envinfo full, after;
	cr_assert_eq(mdb_env_set_mapsize(s->env, 1), 0); /* (LMDB: to the data's own size) */
	mdb_env_info(s->env, &full);
	append_run(s, run, 30, 1, 400);
	mdb_env_info(s->env, &after);
	cr_expect_gt(after.me_mapsize, full.me_mapsize, "the map grew: a commit was tried again");
	cr_expect_eq(rt_store_dropped(s), 0);
	struct seen x = {0};
	cr_assert_eq(rt_store_scan(s, run, 0, UINT64_MAX, check_cb, &x), 0);
	cr_expect_eq(x.n, 430, "each sample once");
	cr_expect_eq(stored_records(s, run), 430, "each stored once");
	rt_store_close(s);
}
