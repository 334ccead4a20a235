/* libFuzzer target: a stored value of the samples database as every
 * reader meets it (rt/block.h): a block of a run's samples or one sample
 * alone, read record by record, each record unpacked against the one
 * before and decoded, as a scan would (shared/store/store_read.c). And the
 * builder's promise: records added to a block come back out of its value
 * the same, in order, with their seqs.
 *
 * Input: byte 0 even: the rest is a value stored at the run in bytes 1-8
 * and the seq in bytes 9-16 (little-endian), also read as an overflow
 * page found alone (rt_block_measure, as recover's carver does); odd: the
 * rest is frames [step u8][len u8][bytes] added to a block (step 0 taken
 * as 1) until one does not fit. The seed corpus
 * holds blocks the real recorder wrote (tests/fuzz/README.md). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rt/block.h"
#include "rt/pack.h"
#include "rt/record.h"

static void read_value(uint64_t run, uint64_t key, const uint8_t *v, size_t n)
{
	static struct rt_pack_state st;
	static _Alignas(64) unsigned char copy[RT_BLOCK_MAX + 64];
	static _Alignas(64) unsigned char big[1 << 16];
	if (!st.buf && rt_pack_state_init(&st))
		abort();
	rt_pack_state_reset(&st);
	struct rt_stored_it it;
	uint64_t seq, prev = 0;
	const void *rec;
	size_t len;
	int first = 1, rc;
	if (rt_stored_begin(&it, run, key, v, n))
		return;
	while ((rc = rt_stored_next(&it, &seq, &rec, &len)) == 1) {
		if ((!first && seq <= prev) || seq < key || seq > it.last)
			abort(); /* a reader's seqs rise inside the value's span */
		if ((it.block && len == 0) || (const uint8_t *)rec < v ||
		    (const uint8_t *)rec + len > v + n)
			abort(); /* every record lies inside the value (a single one may be empty) */
		first = 0;
		prev = seq;
		unsigned char *a = len <= sizeof(copy) ? copy : len <= sizeof(big) ? big : NULL;
		if (!a)
			continue;
		memcpy(a, rec, len);
		struct rt_record r;
		if (rt_unpack_stored(&st, seq, a, len) == 0 &&
		    rt_record_decode(st.rec.h, st.rec.h->size, &r))
			abort(); /* what comes out of the store is a whole record */
		rt_record_decode(a, len, &r);
	}
	(void)rc;
}

static void build_and_read_back(const uint8_t *data, size_t size)
{
	static struct rt_block b;
	static struct {
		uint64_t seq;
		size_t off, len;
	} added[RT_BLOCK_MAX];
	unsigned n = 0;
	uint64_t seq = 1000;
	rt_block_reset(&b);
	for (size_t at = 0; at + 2 <= size;) {
		uint64_t step = data[at] ? data[at] : 1;
		size_t len = data[at + 1];
		at += 2;
		if (len > size - at)
			len = size - at;
		if (rt_block_add(&b, 7, b.count ? seq + step : seq, data + at, len))
			break;
		seq = b.last;
		added[n].seq = seq;
		added[n].off = at;
		added[n++].len = len;
		at += len;
	}
	if (!n)
		return;
	size_t vlen;
	const void *v = rt_block_value(&b, &vlen);
	if (vlen > RT_BLOCK_MAX || !rt_block_is(v, vlen) ||
	    rt_stored_last(7, added[0].seq, v, vlen) != seq)
		abort();
	struct rt_stored_it it;
	uint64_t got;
	const void *rec;
	size_t len;
	uint64_t run, first;
	if (rt_stored_begin(&it, 7, added[0].seq, v, vlen) ||
	    rt_block_measure(v, vlen, &run, &first) != vlen || run != 7 || first != added[0].seq)
		abort();
	for (unsigned i = 0; i < n; i++)
		if (rt_stored_next(&it, &got, &rec, &len) != 1 || got != added[i].seq ||
		    len != added[i].len || memcmp(rec, data + added[i].off, len))
			abort();
	if (rt_stored_next(&it, &got, &rec, &len) != 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	if (data[0] & 1) {
		build_and_read_back(data + 1, size - 1);
		return 0;
	}
	if (size < 17)
		return 0;
	uint64_t run = 0, key = 0, r2, k2;
	for (int i = 8; i >= 1; i--) {
		run = run << 8 | data[i];
		key = key << 8 | data[i + 8];
	}
	read_value(run, key, data + 17, size - 17);
	size_t whole = rt_block_measure(data + 17, size - 17, &r2, &k2);
	if (whole > size - 17)
		abort();
	if (whole)
		read_value(r2, k2, data + 17, whole);
	return 0;
}
