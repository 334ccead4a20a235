/* libFuzzer target: the store's records as replay meets them, a run's
 * worth in order: packed (rt_unpack), rt 0.1's raw layout 1 (upgraded) or
 * raw (decoded), each one that reads derived against the one before and
 * formatted both ways, as replay would on a damaged or hostile store.
 *
 * Input: frames of [flags u8][length u16 LE][bytes]; flags bit 0: fix the
 * CRC up (so the fuzzer gets past it), bit 1: skip a seq before this one
 * (a gap: a delta then has no predecessor). The seed corpus was packed by
 * the real rt_pack from records of this host (tests/fuzz/corpus/README). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rt/fields.h"
#include "rt/pack.h"
#include "rt/record.h"

static void inventory_for(const struct rt_record *r, struct rt_inventory *inv)
{
	memset(inv, 0, sizeof(*inv));
	inv->hz = 100;
	inv->ncpu = r->h->ncpu;
	inv->ndisk = r->h->ndisk;
	inv->nmount = r->h->nmount;
	inv->nnic = r->h->nnic;
	inv->ngpu = r->h->ngpu;
	inv->gen = r->h->inv_gen;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct rt_pack_state st;
	static void *prev;
	static struct rt_inventory inv_prev, inv_cur;
	static struct rt_derived d;
	static _Alignas(64) unsigned char frame[1 << 16];
	if (!prev && (rt_pack_state_init(&st) || posix_memalign(&prev, 64, rt_record_max_size())))
		abort();
	rt_pack_state_reset(&st);
	int have_prev = 0;
	uint64_t seq = 0;
	for (size_t at = 0; at + 3 <= size;) {
		unsigned flags = data[at];
		size_t len = (size_t)data[at + 1] | (size_t)data[at + 2] << 8;
		at += 3;
		if (len > size - at)
			len = size - at;
		memcpy(frame, data + at, len);
		at += len;
		if ((flags & 1) && len >= 4) {
			uint32_t crc = rt_crc32c(0, frame, len - 4);
			memcpy(frame + len - 4, &crc, 4);
		}
		seq += (flags & 2) ? 2 : 1;
		struct rt_record cur;
		if (rt_unpack_stored(&st, seq, frame, len) == 0) {
			if (rt_record_decode(st.rec.h, st.rec.h->size, &cur))
				abort(); /* what comes out of the store is a whole record */
		} else if (rt_record_decode(frame, len, &cur)) {
			continue;
		}
		inventory_for(&cur, &inv_cur);
		if (have_prev) {
			struct rt_record p;
			if (rt_record_decode(prev, ((struct rt_rec_header *)prev)->size, &p))
				abort();
			struct rt_view vp = {&p, &inv_prev}, vc = {&cur, &inv_cur};
			rt_derive(&vp, &vc, &d);
			struct rt_buf b = {0};
			rt_format_json(&b, &d, NULL);
			rt_format_csv(&b, &d, NULL);
			rt_buf_free(&b);
		}
		memcpy(prev, cur.h, cur.h->size);
		inv_prev = inv_cur;
		have_prev = 1;
	}
	return 0;
}
