#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "sink/batch.h"
#include "export.h"
#include "rt/block.h"
#include "rt/common.h"
#include "rt/pack.h"
#include "rt/runmeta.h"

static char dir[256];

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/rt-test-batch-%d", getpid());
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	cr_assert_eq(system(cmd), 0);
}

static void teardown(void)
{
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd)) {
	}
}

TestSuite(batch, .init = setup, .fini = teardown);

static char *gunzip(const struct rt_buf *gz, size_t *len)
{
	static char out[1 << 20];
	z_stream z;
	memset(&z, 0, sizeof(z));
	inflateInit2(&z, 15 + 16);
	z.next_in = (Bytef *)gz->p;
	z.avail_in = (uInt)gz->len;
	z.next_out = (Bytef *)out;
	z.avail_out = sizeof(out);
	cr_assert_eq(inflate(&z, Z_FINISH), Z_STREAM_END);
	*len = z.total_out;
	inflateEnd(&z);
	return out;
}

Test(batch, gzip_is_deterministic_and_round_trips)
{
	struct rt_buf a = {0}, b = {0};
	const char *text = "timestamp,a\n1,2\n";
	cr_assert_eq(rt_gzip(text, strlen(text), &a), 0);
	cr_assert_eq(rt_gzip(text, strlen(text), &b), 0);
	cr_expect_eq(a.len, b.len);
	cr_expect_eq(memcmp(a.p, b.p, a.len), 0);
	cr_expect_eq((unsigned char)a.p[0], 0x1f);
	cr_expect_eq(a.p[4] | a.p[5] | a.p[6] | a.p[7], 0, "mtime 0");
	size_t n;
	char *plain = gunzip(&a, &n);
	cr_expect_eq(n, strlen(text));
	cr_expect_eq(memcmp(plain, text, n), 0);
	rt_buf_free(&a);
	rt_buf_free(&b);
}

Test(batch, keys_derive_from_run_and_range)
{
	struct rt_buf k = {0};
	rt_batch_key(&k, "runs/prefix/", "abc-123", 42);
	cr_expect_str_eq(k.p, "runs/prefix/abc-123/000042.csv.gz");
	rt_buf_reset(&k);
	rt_batch_key(&k, "", "r", 1234567);
	cr_expect_str_eq(k.p, "r/1234567.csv.gz");
	rt_buf_free(&k);
}

/* A new run in s, its metadata and inventory put, no samples yet. */
static uint64_t new_run(struct rt_store *s)
{
	struct rt_run_meta m = {.status = "finished", .interval_secs = 1, .start_ns = 1};
	struct rt_buf mb = {0};
	rt_runmeta_write(&mb, &m);
	uint64_t run;
	cr_assert_eq(rt_store_new_run(s, mb.p, mb.len, &run), 0);
	rt_buf_free(&mb);
	static struct rt_inventory inv;
	inv.gen = 1;
	inv.hz = 100;
	inv.ncpu = 1;
	static unsigned char ib[1 << 20];
	long n = rt_inventory_encode(&inv, ib, sizeof(ib));
	rt_store_put_inventory(s, run, 1, ib, (size_t)n);
	return run;
}

/* Sample i of such a run (one CPU, 1 s apart), in rb. */
static void make_sample(unsigned char *rb, size_t cap, uint64_t i, struct rt_record *r)
{
	rt_record_init(rb, cap, 1, 0, 0, 0, 0, r);
	r->h->seq = i;
	r->h->inv_gen = 1;
	r->h->mono_ns = i * 1000000000ull;
	r->h->wall_ns = 1767225600000000000ull + i * 1000000000ull;
	r->h->flags = RT_REC_HAS_CPU;
	r->sys->cpu[RT_CPU_USER] = i * 37;
	r->sys->cpu[RT_CPU_IDLE] = i * 63;
	rt_record_seal(r);
}

/* A run of records seq 0..last in s; records from seq newer_from on
 * claim the next record layout (0: none do). */
static uint64_t make_run(struct rt_store *s, uint64_t last, uint64_t newer_from)
{
	uint64_t run = new_run(s);
	static _Alignas(64) unsigned char rb[4096];
	static unsigned char packed[4096];
	struct rt_pack_state st;
	cr_assert_eq(rt_pack_state_init(&st), 0);
	for (uint64_t i = 0; i <= last; i++) {
		struct rt_record r;
		make_sample(rb, sizeof(rb), i, &r);
		if (newer_from && i >= newer_from) { /* stored as a future rt would */
			size_t plen = rt_pack(&st, i, &r, packed);
			packed[1] = RT_RECORD_LAYOUT + 1;
			cr_assert_eq(rt_record_claimed_layout(packed, plen), RT_RECORD_LAYOUT + 1);
			cr_assert_eq(rt_store_put_sample_bytes(s, run, i, packed, plen), 0);
			continue;
		}
		cr_assert_eq(rt_record_claimed_layout(rb, r.h->size), RT_RECORD_LAYOUT);
		cr_assert_eq(rt_store_append(s, run, i, rb, r.h->size), 0);
	}
	rt_pack_state_free(&st);
	return run;
}

/* The same run stored as given: one value per sample (as rt before store
 * blocks wrote them) or one block, with sample junk_at's bytes junk. */
static uint64_t stored_run(struct rt_store *s, uint64_t last, uint64_t junk_at, int as_block)
{
	static const char junk[] = "not a record, not packed either";
	uint64_t run = new_run(s);
	static _Alignas(64) unsigned char rb[4096];
	static unsigned char packed[4096];
	static struct rt_block blk;
	rt_block_reset(&blk);
	struct rt_pack_state st;
	cr_assert_eq(rt_pack_state_init(&st), 0);
	for (uint64_t i = 0; i <= last; i++) {
		struct rt_record r;
		make_sample(rb, sizeof(rb), i, &r);
		size_t plen = rt_pack(&st, i, &r, packed);
		const void *v = i == junk_at ? (const void *)junk : packed;
		size_t vlen = i == junk_at ? sizeof(junk) : plen;
		if (as_block)
			cr_assert_eq(rt_block_add(&blk, run, i, v, vlen), 0);
		else
			cr_assert_eq(rt_store_put_sample_bytes(s, run, i, v, vlen), 0);
	}
	rt_pack_state_free(&st);
	size_t blen;
	const void *bv = rt_block_value(&blk, &blen);
	if (as_block)
		cr_assert_eq(rt_store_put_sample_bytes(s, run, 0, bv, blen), 0);
	return run;
}

Test(batch, a_range_is_the_same_csv_as_a_replay_and_batches_tile_the_run)
{
	struct rt_store *s;
	cr_assert_eq(rt_store_open(dir, RT_STORE_RDWR, &s), 0);
	uint64_t run = make_run(s, 10, 0);
	struct rt_runinfo ri = {.id = run, .interval = 1};
	struct rt_buf b1 = {0}, b2 = {0}, again = {0};
	uint64_t l1, l2, l3;
	cr_assert_eq(rt_batch_build(s, NULL, &ri, 1, 6, &b1, &l1), 0);
	cr_assert_eq(rt_batch_build(s, NULL, &ri, 7, 10, &b2, &l2), 0);
	cr_assert_eq(rt_batch_build(s, NULL, &ri, 1, 6, &again, &l3), 0);
	cr_expect_eq(l1, 6);
	cr_expect_eq(l2, 4);
	cr_expect(b1.len == again.len && !memcmp(b1.p, again.p, b1.len), "same range, same bytes");
	size_t n1, n2;
	char *p1 = gunzip(&b1, &n1);
	char t1[1 << 16];
	memcpy(t1, p1, n1);
	char *p2 = gunzip(&b2, &n2);
	/* each batch has the header; without it, the two tile the whole replay */
	const char *body2 = strchr(p2, '\n') + 1;
	struct rt_sink k = {.memory = 1};
	struct rt_emitter e;
	rt_emitter_init(&e, s, &ri, RT_FMT_CSV, &k);
	struct rt_replay_opts o = {0, 0, 1};
	cr_assert_eq(rt_replay(&e, &o), 0);
	struct rt_buf joined = {0};
	rt_buf_put(&joined, t1, n1);
	rt_buf_put(&joined, body2, n2 - (size_t)(body2 - p2));
	cr_expect_eq(joined.len, k.buf.len);
	cr_expect_eq(memcmp(joined.p, k.buf.p, joined.len), 0);
	rt_emitter_free(&e);
	rt_buf_free(&k.buf);
	rt_store_close(s);
}

Test(batch, a_record_of_a_newer_layout_stops_the_replay_and_is_never_misread)
{
	struct rt_store *s;
	cr_assert_eq(rt_store_open(dir, RT_STORE_RDWR, &s), 0);
	uint64_t run = make_run(s, 4, 3); /* seq 3 and 4 from a newer rt */
	struct rt_runinfo ri = {.id = run, .interval = 1};
	struct rt_sink k = {.memory = 1};
	struct rt_emitter e;
	rt_emitter_init(&e, s, &ri, RT_FMT_CSV, &k);
	struct rt_replay_opts o = {0, 0, 1};
	cr_expect_eq(rt_replay(&e, &o), RT_E_LAYOUT);
	/* the header and the lines of seq 1 and 2, nothing past them */
	unsigned lines = 0;
	for (size_t i = 0; i < k.buf.len; i++)
		lines += k.buf.p[i] == '\n';
	cr_expect_eq(lines, 3, "%u lines", lines);
	cr_expect_eq(e.notes.newer_layout, RT_RECORD_LAYOUT + 1, "a note, for the verb to say");
	cr_expect_eq(rt_record_claimed_layout("short", 5), 0);
	rt_emitter_free(&e);
	rt_buf_free(&k.buf);
	rt_store_close(s);
}

/* A replay of run whose sample 3 is junk (in a block or alone). */
static void replay_with_junk(struct rt_store *s, uint64_t run, int as_block)
{
	struct rt_runinfo ri = {.id = run, .interval = 1};
	struct rt_sink k = {.memory = 1};
	struct rt_emitter e;
	rt_emitter_init(&e, s, &ri, RT_FMT_CSV, &k);
	struct rt_replay_opts o = {0, 0, 1};
	/* stderr to a file: the reader itself says nothing */
	fflush(stderr);
	int saved = dup(2);
	char errf[300];
	snprintf(errf, sizeof(errf), "%s.err", dir);
	FILE *ef = fopen(errf, "w+");
	cr_assert(ef);
	dup2(fileno(ef), 2);
	int rc = rt_replay(&e, &o);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	cr_expect_eq(rc, 0);
	cr_expect_eq(lseek(fileno(ef), 0, SEEK_END), 0, "the reader printed");
	fclose(ef);
	unlink(errf);
	/* a packed record is a change from the one before: a damaged one
	 * costs the rest of its group of 64 (here seq 3 to 8), counted */
	cr_expect_eq(e.notes.corrupt, 6, "%s: %llu", as_block ? "block" : "alone",
	             (unsigned long long)e.notes.corrupt);
	cr_expect_eq(e.notes.corrupt_first, 3);
	unsigned lines = 0;
	for (size_t i = 0; i < k.buf.len; i++)
		lines += k.buf.p[i] == '\n';
	cr_expect_eq(lines, 1 + 2, "%u lines", lines);
	rt_emitter_free(&e);
	rt_buf_free(&k.buf);
}

Test(batch, the_replay_notes_corrupt_samples_for_the_verb_and_prints_nothing)
{
	struct rt_store *s;
	cr_assert_eq(rt_store_open(dir, RT_STORE_RDWR, &s), 0);
	for (int as_block = 0; as_block < 2; as_block++)
		replay_with_junk(s, stored_run(s, 8, 3, as_block), as_block);
	rt_store_close(s);
}
