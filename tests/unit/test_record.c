#include <criterion/criterion.h>
#include <errno.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>

#include "rt/common.h"
#include "rt/record.h"

static _Alignas(64) unsigned char buf[1 << 16];

static size_t make(unsigned ncpu, unsigned ndisk)
{
	struct rt_record r;
	cr_assert_eq(rt_record_init(buf, sizeof(buf), ncpu, ndisk, 1, 2, 0, &r), 0);
	r.h->seq = 42;
	r.h->wall_ns = 1767225600000000000ull;
	r.sys->cpu[RT_CPU_USER] = 1234;
	for (unsigned i = 0; i < ncpu; i++)
		r.cpu[i].total = 100 + i;
	if (ndisk)
		r.disk[ndisk - 1].wr_sectors = 77;
	r.nic[1].tx_bytes = 99;
	rt_record_seal(&r);
	return r.h->size;
}

Test(record, round_trip_keeps_every_section)
{
	size_t len = make(3, 2);
	struct rt_record d;
	cr_assert_eq(rt_record_decode(buf, len, &d), 0);
	cr_expect_eq(d.h->seq, 42);
	cr_expect_eq(d.sys->cpu[RT_CPU_USER], 1234);
	cr_expect_eq(d.cpu[2].total, 102);
	cr_expect_eq(d.disk[1].wr_sectors, 77);
	cr_expect_eq(d.nic[1].tx_bytes, 99);
	cr_expect_eq(d.h->nmount, 1);
}

Test(record, two_cpu_host_record_is_small)
{
	/* the in-memory form (a ring slot) of a 2-CPU host with the saturation
	 * values of rt 0.2; the store keeps the packed form, about a tenth of
	 * it (test_pack.c, rt-bench) */
	cr_expect_leq(rt_record_size(2, 2, 2, 3, 0), 1024, "%zu B", rt_record_size(2, 2, 2, 3, 0));
}

Test(record, any_flipped_bit_is_detected)
{
	size_t len = make(2, 1);
	for (size_t i = 0; i < len * 8; i += 7) {
		buf[i / 8] ^= (unsigned char)(1u << (i % 8));
		struct rt_record d;
		cr_expect_neq(rt_record_decode(buf, len, &d), 0, "bit %zu", i);
		buf[i / 8] ^= (unsigned char)(1u << (i % 8));
	}
}

Test(record, truncated_or_padded_bytes_are_rejected)
{
	size_t len = make(2, 1);
	struct rt_record d;
	for (size_t l = 0; l < len; l += 5)
		cr_expect_eq(rt_record_decode(buf, l, &d), RT_E_CORRUPT);
	cr_expect_eq(rt_record_decode(buf, len + 8, &d), RT_E_CORRUPT);
}

Test(record, counts_above_capacity_are_rejected)
{
	struct rt_record r;
	cr_expect_eq(rt_record_init(buf, sizeof(buf), RT_MAX_CPUS + 1, 0, 0, 0, 0, &r), -EINVAL);
	cr_expect_eq(rt_record_init(buf, 100, 2, 0, 0, 0, 0, &r), -ENOSPC);
	size_t len = make(2, 1);
	struct rt_rec_header *h = (void *)buf;
	h->ndisk = RT_MAX_DISKS + 1;
	cr_expect_eq(rt_record_decode(buf, len, &r), RT_E_CORRUPT);
}

Test(record, unknown_layout_is_reported_as_such)
{
	size_t len = make(1, 0);
	((struct rt_rec_header *)buf)->layout = 99;
	struct rt_record d;
	cr_expect_eq(rt_record_decode(buf, len, &d), RT_E_LAYOUT);
}

Test(record, crc32c_matches_the_standard_check_value)
{
	cr_expect_eq(rt_crc32c(0, "123456789", 9), 0xE3069283u);
	/* chaining equals one pass */
	cr_expect_eq(rt_crc32c(rt_crc32c(0, "1234", 4), "56789", 5), 0xE3069283u);
}
