/* libFuzzer target: every /proc parser on hostile bytes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_amd.h"
#include "procfs.h"
#include "rt/sysroot.h"

static void mcb(void *ctx, const struct rt_mountinfo *m)
{
	(void)ctx;
	(void)strlen(m->mount_point);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct rt_stat_parse st;
	static struct rt_diskstat ds[64];
	static struct rt_netdev nd[64];
	uint64_t kb[RT_MEMINFO_N], u;
	int64_t q;
	/* exact-size heap copy: ASan catches any read past the end */
	char *b = malloc(size ? size : 1);
	memcpy(b, data, size);
	rt_parse_proc_stat(b, size, &st);
	rt_parse_meminfo(b, size, kb);
	rt_parse_diskstats(b, size, ds, 64);
	rt_parse_netdev(b, size, nd, 64);
	rt_parse_mountinfo(b, size, mcb, NULL);
	rt_parse_cg_usage_v2(b, size, &u);
	rt_parse_cg_usage_v1(b, size, &u);
	rt_parse_cg_max(b, size, &q, &u);
	uint32_t load[3];
	rt_parse_loadavg(b, size, load);
	uint64_t some = 0, full = 0, vm[RT_VMSTAT_N];
	rt_parse_pressure(b, size, &some, &full);
	rt_parse_vmstat(b, size, vm);
	int64_t mx;
	rt_parse_field_u64(b, size, "oom_kill ", &u);
	rt_parse_max_or_u64(b, size, &mx);
	static struct rt_cgroup_paths cp;
	rt_parse_proc_cgroup(b, size, &cp);
	/* the process tree's readers: stat (any name), io, status, smaps_rollup */
	struct rt_pid_stat ps;
	rt_parse_pid_stat(b, size, &ps);
	rt_parse_field_u64(b, size, "read_bytes:", &u);
	rt_parse_field_u64(b, size, "VmHWM:", &u);
	rt_parse_field_u64(b, size, "Pss:", &u);
	/* sysfs attributes (disks, NICs, GPUs) */
	int64_t si;
	rt_parse_attr_u64(b, size, &u);
	rt_parse_attr_i64(b, size, &si);
	/* AMD fdinfo */
	uint64_t client, vram, engine;
	rt_amd_parse_fdinfo(b, size, &client, &vram, &engine);
	free(b);
	return 0;
}
