/* libFuzzer target: the host's /proc files (stat, meminfo, diskstats,
 * net/dev, mountinfo, loadavg, pressure, vmstat) on hostile bytes.
 * libFuzzer hands each input in a heap block of exactly its size, so ASan
 * sees any read past the end. The per-process, cgroup and sysfs files are
 * fuzz_proctree's. */
#include <stdint.h>
#include <string.h>

#include "procfs.h"

static void mcb(void *ctx, const struct rt_mountinfo *m)
{
	(void)ctx;
	(void)strlen(m->mount_point);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *b = (const char *)data;
	static struct rt_stat_parse st;
	static struct rt_diskstat ds[64];
	static struct rt_netdev nd[64];
	uint64_t kb[RT_MEMINFO_N], vm[RT_VMSTAT_N], some = 0, full = 0;
	uint32_t load[3];
	rt_parse_proc_stat(b, size, &st);
	rt_parse_meminfo(b, size, kb);
	rt_parse_diskstats(b, size, ds, 64);
	rt_parse_netdev(b, size, nd, 64);
	rt_parse_mountinfo(b, size, mcb, NULL);
	rt_parse_loadavg(b, size, load);
	rt_parse_pressure(b, size, &some, &full);
	rt_parse_vmstat(b, size, vm);
	return 0;
}
