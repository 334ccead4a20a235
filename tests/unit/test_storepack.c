/* One writer, several runs (the node's sampler): each run's samples are
 * packed against its own last one, whatever the order they come in, and
 * one group commit holds them all (shared/store/store_write.c). White-box: the
 * group's packed bytes are read from the store's inside. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../shared/store/store_int.h"
#include "rt/record.h"
#include "rt/store.h"

static char dir[256];
static _Alignas(64) unsigned char rec[4096];

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/rt-test-storepack-%d-%ld", getpid(), random());
}

static void teardown(void)
{
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd)) {
	}
}

TestSuite(storepack, .init = setup, .fini = teardown);

static size_t make_rec(uint64_t seq, uint64_t wall_s)
{
	struct rt_record r;
	rt_record_init(rec, sizeof(rec), 4, 0, 0, 0, 0, &r);
	r.h->seq = seq;
	r.h->wall_ns = wall_s * 1000000000ull;
	r.h->mono_ns = seq * 1000000000ull;
	for (unsigned c = 0; c < 4; c++)
		r.cpu[c].total = seq * 10 + c; /* (a counter that moves) */
	rt_record_seal(&r);
	return r.h->size;
}

static int walls(void *ctx, uint64_t seq, const void *bytes, size_t len)
{
	uint64_t *base = ctx;
	struct rt_record r;
	cr_assert_eq(rt_record_decode(bytes, len, &r), 0);
	cr_assert_eq(r.h->wall_ns, (*base + seq) * 1000000000ull);
	cr_assert_eq(r.cpu[3].total, seq * 10 + 3);
	return 0;
}

Test(storepack, interleaved_runs_pack_as_if_each_were_alone)
{
	struct rt_store *s;
	uint64_t a, c, d;
	cr_assert_eq(rt_store_open(dir, RT_STORE_RDWR, &s), 0);
	rt_store_set_group(s, 100000, 0, 0);
	cr_assert_eq(rt_store_new_run(s, "{}", 2, &a), 0);
	for (uint64_t i = 0; i < 100; i++)
		cr_assert_eq(rt_store_append(s, a, i, rec, make_rec(i, 1000 + i)), 0);
	size_t alone = s->pbytes_len;
	cr_assert_eq(rt_store_flush(s), 0);
	cr_assert_eq(rt_store_new_run(s, "{}", 2, &c), 0);
	cr_assert_eq(rt_store_new_run(s, "{}", 2, &d), 0);
	for (uint64_t i = 0; i < 100; i++) {
		cr_assert_eq(rt_store_append(s, c, i, rec, make_rec(i, 2000 + i)), 0);
		cr_assert_eq(rt_store_append(s, d, i, rec, make_rec(i, 3000 + i)), 0);
	}
	size_t both = s->pbytes_len;
	cr_expect_leq(both, 2 * alone + 16, "interleaved: %zu bytes, alone: 2 x %zu", both, alone);
	cr_assert_eq(rt_store_flush(s), 0); /* one commit for both runs */
	uint64_t base_c = 2000, base_d = 3000;
	cr_assert_eq(rt_store_scan(s, c, 0, 99, walls, &base_c), 0);
	cr_assert_eq(rt_store_scan(s, d, 0, 99, walls, &base_d), 0);
	/* a run ended frees what packs it; the next run's first sample is whole */
	rt_store_end_run(s, c);
	cr_expect_eq(s->npacks, 3);
	uint64_t e;
	cr_assert_eq(rt_store_new_run(s, "{}", 2, &e), 0);
	cr_assert_eq(rt_store_append(s, e, 0, rec, make_rec(0, 4000)), 0);
	cr_expect_eq(s->npacks, 3, "the ended run's pack state is taken again");
	cr_assert_eq(rt_store_flush(s), 0);
	uint64_t base_e = 4000;
	cr_assert_eq(rt_store_scan(s, e, 0, 0, walls, &base_e), 0);
	rt_store_close(s);
}
