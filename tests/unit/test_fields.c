#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>

#include "rt/fields.h"

static struct rt_inventory inv1, inv2;
static _Alignas(64) unsigned char b0[4096], b1[4096], b2[4096];
static struct rt_derived d;

static void setup(void)
{
	memset(&inv1, 0, sizeof(inv1));
	inv1.gen = 1;
	inv1.hz = 100;
	inv1.ncpu = 1;
	inv1.nnic = 1;
	strcpy(inv1.nic[0].name, "eth0");
	inv1.nic[0].physical = 1;
	inv2 = inv1;
	inv2.gen = 2;
	inv2.nnic = 2; /* eth1 appears before eth0 in slot order */
	strcpy(inv2.nic[0].name, "eth1");
	inv2.nic[0].physical = 1;
	strcpy(inv2.nic[1].name, "eth0");
	inv2.nic[1].physical = 1;
}

TestSuite(fields, .init = setup);

static struct rt_record rec(void *buf, const struct rt_inventory *inv, uint64_t seq,
                            uint64_t rx_eth0, uint64_t busy)
{
	struct rt_record r;
	rt_record_init(buf, 4096, 1, 0, 0, inv->nnic, 0, &r);
	r.h->seq = seq;
	r.h->inv_gen = inv->gen;
	r.h->mono_ns = seq * 1000000000ull;
	r.h->wall_ns = 1767225600000000000ull + seq * 1000000000ull;
	r.h->flags = RT_REC_HAS_CPU | RT_REC_HAS_NETDEV;
	r.sys->cpu[RT_CPU_USER] = busy;
	r.sys->cpu[RT_CPU_IDLE] = seq * 100 - busy;
	r.cpu[0].total = seq * 100;
	r.cpu[0].idle = seq * 100 - busy;
	int eth0 = rt_inventory_find_nic(inv, "eth0");
	r.nic[eth0].rx_bytes = rx_eth0;
	rt_record_seal(&r);
	return r;
}

Test(fields, coarser_resolution_averages_over_the_gap)
{
	struct rt_record r0 = rec(b0, &inv1, 1, 1000, 0);
	struct rt_record r2 = rec(b2, &inv1, 11, 11000, 500); /* 10 s later */
	struct rt_view p = {&r0, &inv1}, c = {&r2, &inv1};
	rt_derive(&p, &c, &d);
	cr_expect_eq(d.dt, 10.0);
	cr_expect_eq(d.v[RT_V_NET_RX].i, 10000, "bytes over the whole gap");
	cr_expect_eq(d.v[RT_V_CPU_UTIL].f, 0.5);
	cr_expect_eq(d.v[RT_V_UTIME].f, 5.0);
	cr_expect_eq(d.v[RT_V_INTERVAL_MS].i, 10000);
}

Test(fields, device_slots_are_matched_by_name_across_inventories)
{
	struct rt_record r0 = rec(b0, &inv1, 1, 1000, 0);
	struct rt_record r1 = rec(b1, &inv2, 2, 1600, 10);
	((struct rt_rec_nic *)r1.nic)[0].rx_bytes = 999999; /* eth1: new, no rate */
	rt_record_seal(&r1);
	struct rt_view p = {&r0, &inv1}, c = {&r1, &inv2};
	rt_derive(&p, &c, &d);
	cr_expect_eq(d.nic_rx_delta[0], 0, "eth1 first seen: no rate yet");
	cr_expect_eq(d.nic_rx_delta[1], 600, "eth0 matched by name");
	cr_expect_eq(d.v[RT_V_NET_RX].i, 600);
}

Test(fields, counter_reset_counts_from_zero_not_a_negative_spike)
{
	struct rt_record r0 = rec(b0, &inv1, 1, 5000, 0);
	struct rt_record r1 = rec(b1, &inv1, 2, 300, 0);
	struct rt_view p = {&r0, &inv1}, c = {&r1, &inv1};
	rt_derive(&p, &c, &d);
	cr_expect_eq(d.v[RT_V_NET_RX].i, 300);
}

Test(fields, first_sample_has_no_actual_interval)
{
	struct rt_record r0 = rec(b0, &inv1, 0, 0, 0);
	r0.h->mono_ns = 1;
	rt_record_seal(&r0);
	struct rt_record r1 = rec(b1, &inv1, 1, 0, 0);
	struct rt_view p = {&r0, &inv1}, c = {&r1, &inv1};
	rt_derive(&p, &c, &d);
	struct rt_buf b = {0};
	rt_format_json(&b, &d, NULL);
	cr_expect(!strstr(b.p, "actual_interval_ms"), "%s", b.p);
	rt_buf_free(&b);
}

static void assert_sorted(const cJSON *o)
{
	const cJSON *prev = NULL;
	for (const cJSON *it = o->child; it; it = it->next) {
		if (cJSON_IsObject(o) && prev)
			cr_assert_lt(strcmp(prev->string, it->string), 0, "%s before %s",
			             prev->string, it->string);
		if (cJSON_IsObject(it) || cJSON_IsArray(it))
			assert_sorted(it);
		prev = it;
	}
}

Test(fields, json_keys_are_sorted_and_csv_has_32_columns)
{
	struct rt_record r0 = rec(b0, &inv2, 3, 0, 0);
	struct rt_record r1 = rec(b1, &inv2, 4, 100, 50);
	struct rt_view p = {&r0, &inv2}, c = {&r1, &inv2};
	rt_derive(&p, &c, &d);
	struct rt_run_info ri = {"job \"x\"", 0};
	struct rt_buf b = {0};
	rt_format_json(&b, &d, &ri);
	cJSON *o = cJSON_Parse(b.p);
	cr_assert(o, "invalid JSON: %s", b.p);
	assert_sorted(o);
	const char *must[] = {"timestamp_secs",
	                      "actual_interval_ms",
	                      "job_name",
	                      "tracked_pid",
	                      "cpu",
	                      "memory",
	                      "network",
	                      "disk",
	                      "gpu",
	                      "resource-tracker-version"};
	for (size_t i = 0; i < sizeof(must) / sizeof(must[0]); i++)
		cr_expect(cJSON_GetObjectItemCaseSensitive(o, must[i]), "missing %s", must[i]);
	cr_expect_str_eq(cJSON_GetObjectItem(o, "job_name")->valuestring, "job \"x\"");
	cJSON_Delete(o);
	rt_buf_reset(&b);
	rt_format_csv_header(&b);
	cr_expect_str_eq(
	    b.p, "timestamp,system_processes,system_utime,system_stime,system_cpu_usage,"
	         "system_memory_free_mib,system_memory_used_mib,system_memory_buffers_mib,"
	         "system_memory_cached_mib,system_memory_active_mib,system_memory_inactive_mib,"
	         "system_disk_read_bytes,system_disk_write_bytes,system_disk_space_total_gb,"
	         "system_disk_space_used_gb,system_disk_space_free_gb,system_net_recv_bytes,"
	         "system_net_sent_bytes,system_gpu_usage,system_gpu_vram_mib,system_gpu_utilized,"
	         "process_pid,process_children,process_utime,process_stime,process_cpu_usage,"
	         "process_memory_mib,process_disk_read_bytes,process_disk_write_bytes,"
	         "process_gpu_usage,process_gpu_vram_mib,process_gpu_utilized\n");
	rt_buf_reset(&b);
	rt_format_csv(&b, &d, &ri);
	int commas = 0;
	for (char *q = b.p; *q; q++)
		commas += *q == ',';
	cr_expect_eq(commas, 31);
	/* extended: the same 32 first, then 30 more; the header likewise */
	struct rt_buf x = {0};
	rt_format_csv_x(&x, &d, &ri, 1);
	cr_expect_eq(strncmp(x.p, b.p, b.len - 1), 0, "the reference columns come first");
	commas = 0;
	for (char *q = x.p; *q; q++)
		commas += *q == ',';
	cr_expect_eq(commas, RT_CSV_COLUMNS_X - 1);
	rt_buf_reset(&x);
	rt_format_csv_header_x(&x, 1);
	cr_expect(strstr(x.p, ",process_gpu_utilized,process_threads,") != NULL, "%s", x.p);
	cr_expect(strstr(x.p, ",system_cgroup_pids_max,system_disk_space_df_used_gb,"
	                      "system_disk_space_reserved_gb\n") != NULL);
	rt_buf_free(&x);
	rt_buf_free(&b);
}

Test(fields, virtual_nics_do_not_double_count_host_traffic)
{
	struct rt_inventory inv = inv1;
	inv.nnic = 2;
	strcpy(inv.nic[1].name, "docker0");
	inv.nic[1].physical = 0;
	cr_expect(rt_net_counted(&inv, 0));
	cr_expect(!rt_net_counted(&inv, 1));
	inv.nic[0].physical = 0; /* a container: only virtual NICs, count them */
	cr_expect(rt_net_counted(&inv, 1));
}
