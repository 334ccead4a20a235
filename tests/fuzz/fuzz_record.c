/* libFuzzer target: the record decoder, then derivation and both output
 * formats on whatever decodes (as rt-export would on a hostile store). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rt/fields.h"
#include "rt/record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static _Alignas(64) unsigned char buf[1 << 17];
	static struct rt_inventory inv;
	static struct rt_derived d;
	if (size > sizeof(buf))
		return 0;
	memcpy(buf, data, size);
	struct rt_record r;
	/* let the fuzzer reach past the CRC: fix it up half of the time */
	if (size >= sizeof(struct rt_rec_header) && (data[0] & 1)) {
		struct rt_rec_header *h = (void *)buf;
		if (h->size == size) {
			h->crc = 0;
			h->crc = rt_crc32c(0, buf, size);
		}
	}
	if (rt_record_decode(buf, size, &r))
		return 0;
	memset(&inv, 0, sizeof(inv));
	inv.hz = 100;
	inv.ncpu = r.h->ncpu;
	inv.ndisk = r.h->ndisk;
	inv.nmount = r.h->nmount;
	inv.nnic = r.h->nnic;
	inv.ngpu = r.h->ngpu;
	inv.gen = r.h->inv_gen;
	struct rt_view v = {&r, &inv};
	rt_derive(&v, &v, &d);
	struct rt_buf b = {0};
	rt_format_json(&b, &d, NULL);
	rt_format_csv(&b, &d, NULL);
	rt_buf_free(&b);
	return 0;
}
