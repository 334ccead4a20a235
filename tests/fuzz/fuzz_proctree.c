/* libFuzzer target: the small files read per process, per cgroup and per
 * device: /proc/PID/stat (a process names itself anything), io, status,
 * smaps_rollup; the cgroup files; sysfs attributes (disks, NICs, GPUs);
 * AMD fdinfo; a job group's path (any bytes a group's owner may name
 * its groups) and a member's environment. libFuzzer hands each input in a heap block of exactly its
 * size, so ASan sees any read past the end. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cgjob.h"
#include "gpu_amd.h"
#include "procfs.h"
#include "rt/sysroot.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *b = (const char *)data;
	uint64_t u;
	int64_t i;
	struct rt_pid_stat ps;
	rt_parse_pid_stat(b, size, &ps);
	rt_parse_field_u64(b, size, "read_bytes:", &u);
	rt_parse_field_u64(b, size, "VmHWM:", &u);
	rt_parse_field_u64(b, size, "Pss:", &u);
	/* cgroup files: cpu.stat, cpuacct.usage, cpu.max, memory.max and
	 * pids.max, memory.events, /proc/self/cgroup */
	rt_parse_cg_usage_v2(b, size, &u);
	rt_parse_cg_usage_v1(b, size, &u);
	rt_parse_cg_max(b, size, &i, &u);
	rt_parse_max_or_u64(b, size, &i);
	rt_parse_field_u64(b, size, "oom_kill ", &u);
	static struct rt_cgroup_paths cp;
	rt_parse_proc_cgroup(b, size, &cp);
	rt_parse_attr_u64(b, size, &u);
	rt_parse_attr_i64(b, size, &i);
	uint64_t client, vram, engine;
	rt_amd_parse_fdinfo(b, size, &client, &vram, &engine);
	(void)rt_env_lookup(b, size, "SLURM_JOB_NAME");
	char *path = malloc(size + 1); /* a path: NUL-terminated */
	if (path) {
		memcpy(path, b, size);
		path[size] = '\0';
		static struct rt_cgjob j;
		rt_cgjob_classify(path, &j);
		(void)strlen(j.job_id);
		free(path);
	}
	return 0;
}
