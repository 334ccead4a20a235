#include <criterion/criterion.h>
#include <errno.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>

#include "rt/common.h"
#include "rt/inventory.h"

static struct rt_inventory *sample_inv(void)
{
	struct rt_inventory *inv = calloc(1, sizeof(*inv));
	inv->gen = 3;
	inv->hz = 100;
	inv->ncpu = 2;
	inv->cpu_id[1] = 7;
	inv->ndisk = 1;
	strcpy(inv->disk[0].name, "nvme0n1");
	strcpy(inv->disk[0].model, "Model \"X\"");
	inv->disk[0].type = RT_DISK_NVME;
	inv->disk[0].has_capacity = 1;
	inv->disk[0].capacity_bytes = 1000204886016ull;
	inv->nmount = 1;
	strcpy(inv->mount[0].mount_point, "/");
	strcpy(inv->mount[0].fstype, "ext4");
	inv->nnic = 1;
	strcpy(inv->nic[0].name, "eth0");
	inv->nic[0].speed_mbps = -1;
	inv->nic[0].has_speed = 1;
	return inv;
}

Test(inventory, round_trip)
{
	struct rt_inventory *a = sample_inv(), *b = calloc(1, sizeof(*b));
	static unsigned char buf[1 << 20];
	long n = rt_inventory_encode(a, buf, sizeof(buf));
	cr_assert_gt(n, 0);
	cr_assert_eq(rt_inventory_decode(buf, (size_t)n, b), 0);
	cr_expect_eq(b->gen, 3);
	cr_expect_eq(b->cpu_id[1], 7);
	cr_expect_str_eq(b->disk[0].model, "Model \"X\"");
	cr_expect_eq(b->disk[0].capacity_bytes, 1000204886016ull);
	cr_expect_eq(b->nic[0].speed_mbps, -1);
	cr_expect_eq(rt_inventory_find_nic(b, "eth0"), 0);
	cr_expect_eq(rt_inventory_find_disk(b, "sda"), -1);
	free(a);
	free(b);
}

Test(inventory, every_truncation_is_rejected)
{
	struct rt_inventory *a = sample_inv(), *b = calloc(1, sizeof(*b));
	static unsigned char buf[1 << 20];
	long n = rt_inventory_encode(a, buf, sizeof(buf));
	for (long l = 0; l < n; l++)
		cr_expect_neq(rt_inventory_decode(buf, (size_t)l, b), 0, "length %ld", l);
	free(a);
	free(b);
}

Test(inventory, mount_pointing_past_the_disks_is_corrupt)
{
	struct rt_inventory *a = sample_inv(), *b = calloc(1, sizeof(*b));
	static unsigned char buf[1 << 20];
	a->mount[0].disk = 5;
	long n = rt_inventory_encode(a, buf, sizeof(buf));
	cr_expect_eq(rt_inventory_decode(buf, (size_t)n, b), RT_E_CORRUPT);
	free(a);
	free(b);
}

Test(inventory, encode_reports_a_small_buffer)
{
	struct rt_inventory *a = sample_inv();
	unsigned char buf[16];
	cr_expect_eq(rt_inventory_encode(a, buf, sizeof(buf)), -ENOSPC);
	free(a);
}
