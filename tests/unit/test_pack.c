/* The stored form: every record comes back byte for byte, a replay can
 * start at any full record, a newer writer's extra values and sections are
 * skipped, an older writer's missing values are absent, damage is refused. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "rt/common.h"
#include "rt/pack.h"
#include "rt/record.h"

static _Alignas(64) unsigned char rb[1 << 16];
static unsigned char packed[300][4096];
static size_t plen[300];
static _Alignas(64) unsigned char orig[300][2048];

static uint64_t rnd(void)
{
	return ((uint64_t)random() << 33) ^ ((uint64_t)random() << 11) ^ (uint64_t)random();
}

/* Sample i of a run whose device counts change at i = 100 and 200; values
 * move by small steps, now and then by huge ones, signed ones go negative. */
static struct rt_record make(unsigned i, struct rt_record *prev)
{
	unsigned nd = i < 100 ? 2 : 3, ng = i < 200 ? 1 : 0;
	struct rt_record r;
	rt_record_init(rb, sizeof(rb), 2, nd, 3, 2, ng, &r);
	r.h->seq = i;
	r.h->mono_ns = 1000000000ull * i + (uint64_t)(random() % 100000);
	r.h->wall_ns = 1795000000000000000ull + r.h->mono_ns + (uint64_t)(random() % 50);
	r.h->inv_gen = 1 + (i >= 100) + (i >= 200);
	r.h->flags = RT_REC_HAS_CPU | RT_REC_HAS_MEM | (i % 7 ? RT_REC_HAS_PROCESS : 0);
	uint64_t *w = (uint64_t *)(void *)r.sys;
	size_t nw = (r.h->size - sizeof(*r.h)) / 8;
	const uint64_t *p =
	    prev && prev->h->size == r.h->size ? (const uint64_t *)(void *)prev->sys : NULL;
	for (size_t k = 0; k < nw; k++) {
		uint64_t base = p ? p[k] : rnd() >> (random() % 64);
		int roll = random() % 10;
		w[k] = roll < 5 ? base : roll < 9 ? base + (uint64_t)(random() % 3000) : rnd();
	}
	r.sys->cg_quota_usec = i % 2 ? -1 : 150000;
	r.proc->pid = -(int32_t)i;
	if (r.h->ngpu)
		r.gpu[0].temp_c = (int32_t)(random() % 200) - 100;
	r.sys->reserved = r.sys->reserved2 = 0; /* padding, not values */
	if (r.h->ngpu)
		r.gpu[0].reserved = r.gpu[0].reserved3 = 0;
	rt_record_seal(&r);
	return r;
}

static unsigned pack_run(unsigned n, int gap_at)
{
	struct rt_pack_state st;
	cr_assert_eq(rt_pack_state_init(&st), 0);
	struct rt_record prev = {0};
	static _Alignas(64) unsigned char pb[1 << 16];
	unsigned full = 0;
	for (unsigned i = 0; i < n; i++) {
		struct rt_record r = make(i, i ? &prev : NULL);
		memcpy(orig[i], r.h, r.h->size);
		memcpy(pb, r.h, r.h->size);
		rt_record_point(pb, &prev);
		if ((int)i == gap_at) /* a sample that was never stored */
			rt_pack_state_reset(&st);
		plen[i] = rt_pack(&st, i, &r, packed[i]);
		cr_assert_leq(plen[i], rt_pack_bound(&r));
		full += rt_pack_is_full(packed[i], plen[i]);
	}
	rt_pack_state_free(&st);
	return full;
}

Test(pack, every_record_comes_back_byte_for_byte)
{
	srandom(7);
	unsigned full = pack_run(300, 150);
	/* seq 0, 64, 128, 192, 256; the shape changes at 100 and 200; the gap at 150 */
	cr_expect_eq(full, 8, "%u full records", full);
	struct rt_pack_state st;
	cr_assert_eq(rt_pack_state_init(&st), 0);
	size_t total = 0, raw = 0;
	for (unsigned i = 0; i < 300; i++) {
		cr_assert_eq(rt_unpack(&st, i, packed[i], plen[i]), 0, "seq %u", i);
		const struct rt_rec_header *h = (const void *)orig[i];
		cr_assert_eq(st.rec.h->size, h->size);
		cr_assert_eq(memcmp(st.rec.h, orig[i], h->size), 0, "seq %u differs", i);
		total += plen[i];
		raw += h->size;
	}
	cr_expect_lt(total, raw / 2, "packed %zu of %zu bytes", total, raw);
	rt_pack_state_free(&st);
}

Test(pack, a_replay_starts_at_any_full_record_and_a_lone_delta_asks_for_one)
{
	srandom(11);
	pack_run(300, -1);
	struct rt_pack_state st;
	cr_assert_eq(rt_pack_state_init(&st), 0);
	cr_expect_eq(rt_unpack(&st, 70, packed[70], plen[70]), RT_E_NOTFOUND);
	cr_assert(rt_pack_is_full(packed[64], plen[64]));
	for (unsigned i = 64; i <= 70; i++)
		cr_assert_eq(rt_unpack(&st, i, packed[i], plen[i]), 0);
	cr_expect_eq(memcmp(st.rec.h, orig[70], st.rec.h->size), 0);
	/* out of order: the state holds 70, not 71's predecessor 72 */
	cr_expect_eq(rt_unpack(&st, 73, packed[73], plen[73]), RT_E_NOTFOUND);
	rt_pack_state_free(&st);
}

/* Bring st to hold seq i - 1 (unpacking from the full record before it). */
static void reach(struct rt_pack_state *st, unsigned i)
{
	rt_pack_state_reset(st);
	if (!i)
		return;
	unsigned from = i - 1;
	while (!rt_pack_is_full(packed[from], plen[from]))
		from--;
	for (unsigned k = from; k < i; k++)
		cr_assert_eq(rt_unpack(st, k, packed[k], plen[k]), 0);
}

Test(pack, damage_and_truncation_are_refused_never_misread)
{
	srandom(3);
	pack_run(70, -1);
	struct rt_pack_state st;
	cr_assert_eq(rt_pack_state_init(&st), 0);
	static unsigned char bad[4096];
	for (unsigned i = 0; i < 70; i++) {
		for (size_t at = 0; at < plen[i]; at++) {
			reach(&st, i);
			memcpy(bad, packed[i], plen[i]);
			bad[at] ^= (unsigned char)(1u << (at % 8));
			cr_assert_neq(rt_unpack(&st, i, bad, plen[i]), 0,
			              "seq %u: byte %zu flipped and accepted", i, at);
		}
		reach(&st, i);
		cr_expect_neq(rt_unpack(&st, i, packed[i], plen[i] - 1), 0);
		reach(&st, i);
		cr_expect_eq(rt_unpack(&st, i, packed[i], plen[i]), 0);
	}
	rt_pack_state_free(&st);
}

/* ---- a record as another rt would write it, built from the format alone */

static unsigned char *varint(unsigned char *p, uint64_t x)
{
	while (x >= 0x80) {
		*p++ = (unsigned char)(x | 0x80);
		x >>= 7;
	}
	*p++ = (unsigned char)x;
	return p;
}

static uint64_t zz(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

/* A full record of one CPU and nothing else whose system section carries
 * sys_nvals values (value k = 1000 + k) and that has `extra` more sections
 * of 2 elements of 3 values after the known ones. */
static size_t foreign(unsigned char *out, unsigned sys_nvals, unsigned extra)
{
	static const unsigned nv[RT_NSECTIONS] = {0,
	                                          RT_NVALS_PROCESS,
	                                          RT_NVALS_CPU,
	                                          RT_NVALS_DISK,
	                                          RT_NVALS_MOUNT,
	                                          RT_NVALS_NIC,
	                                          RT_NVALS_GPU};
	static const unsigned cnt[RT_NSECTIONS] = {1, 1, 1, 0, 0, 0, 0};
	unsigned char *p = out;
	*p++ = 'P';
	*p++ = RT_RECORD_LAYOUT;
	*p++ = 0;
	p = varint(p, RT_REC_HAS_CPU); /* flags */
	p = varint(p, 1);              /* inv_gen */
	p = varint(p, RT_NSECTIONS + extra);
	unsigned nbits = 0;
	for (unsigned s = 0; s < RT_NSECTIONS; s++) {
		unsigned n = s == RT_SEC_SYSTEM ? sys_nvals : nv[s];
		p = varint(p, cnt[s]);
		p = varint(p, n);
		nbits += cnt[s] * n;
	}
	for (unsigned e = 0; e < extra; e++) {
		p = varint(p, 2);
		p = varint(p, 3);
		nbits += 6;
	}
	p = varint(p, 5000000000ull);  /* mono */
	p = varint(p, zz(1000000000)); /* wall - mono */
	unsigned char *bitmap = p;
	memset(bitmap, 0, (nbits + 7) / 8);
	p += (nbits + 7) / 8;
	for (unsigned b = 0; b < sys_nvals; b++) { /* the system values, nothing else */
		bitmap[b / 8] |= (unsigned char)(1u << (b % 8));
		p = varint(p, zz(1000 + b));
	}
	for (unsigned b = nbits - 6 * extra; b < nbits; b++) { /* and the unknown sections */
		bitmap[b / 8] |= (unsigned char)(1u << (b % 8));
		p = varint(p, zz(-(int64_t)b));
	}
	uint32_t crc = rt_crc32c(0, out, (size_t)(p - out));
	memcpy(p, &crc, 4);
	return (size_t)(p - out) + 4;
}

Test(pack, a_newer_writers_extra_values_and_sections_are_skipped)
{
	static unsigned char b[4096];
	size_t n = foreign(b, RT_NVALS_SYSTEM + 4, 2);
	struct rt_pack_state st;
	cr_assert_eq(rt_pack_state_init(&st), 0);
	cr_assert_eq(rt_unpack(&st, 9, b, n), 0);
	struct rt_record *r = &st.rec;
	cr_expect_eq(r->h->nvals[RT_SEC_SYSTEM], RT_NVALS_SYSTEM);
	cr_expect_eq(r->sys->cpu[0], 1000);
	cr_expect_eq(r->sys->mem_kb[RT_MEM_NFIELDS - 1], 1000 + RT_NVALS_SYSTEM_V1 - 1);
	cr_expect_eq(r->sys->load_x100[2], 1000 + (RT_SYS_V_load_x100 + 2));
	cr_expect_eq(r->h->ncpu, 1);
	cr_expect_eq(r->h->seq, 9);
	cr_expect_eq(r->h->wall_ns, 6000000000ull);
	struct rt_record check;
	cr_expect_eq(rt_record_decode(st.buf, r->h->size, &check), 0);
	rt_pack_state_free(&st);
}

Test(pack, an_older_writers_missing_values_are_absent)
{
	static unsigned char b[4096];
	size_t n = foreign(b, RT_NVALS_SYSTEM_V1, 0);
	struct rt_pack_state st;
	cr_assert_eq(rt_pack_state_init(&st), 0);
	cr_assert_eq(rt_unpack(&st, 0, b, n), 0);
	cr_expect_eq(st.rec.h->nvals[RT_SEC_SYSTEM], RT_NVALS_SYSTEM_V1);
	cr_expect_not(rt_record_has(&st.rec, RT_SEC_SYSTEM, RT_SYS_V_load_x100));
	cr_expect(rt_record_has(&st.rec, RT_SEC_SYSTEM, RT_NVALS_SYSTEM_V1 - 1));
	cr_expect_eq(st.rec.sys->load_x100[0], 0);
	rt_pack_state_free(&st);
}

Test(pack, a_newer_form_is_named_not_misread)
{
	static unsigned char b[4096];
	size_t n = foreign(b, RT_NVALS_SYSTEM, 0);
	b[1] = RT_RECORD_LAYOUT + 1;
	struct rt_pack_state st;
	cr_assert_eq(rt_pack_state_init(&st), 0);
	cr_expect_eq(rt_unpack(&st, 0, b, n), RT_E_LAYOUT);
	cr_expect_eq(rt_record_claimed_layout(b, n), RT_RECORD_LAYOUT + 1);
	struct rt_record r;
	cr_expect_eq(rt_record_decode(b, n, &r), RT_E_LAYOUT);
	rt_pack_state_free(&st);
}
