/* What the job was given (recorder/alloc.c), on fixture host-a: cgroup v2
 * with cpu.max "100000 100000" (1 core) and memory.max 512 MiB. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_detect.h"
#include "rt/sysroot.h"

static void on_host_a(void)
{
	setenv("RT_PROC_ROOT", RT_FIXTURES "/host-a/step0/proc", 1);
	setenv("RT_SYS_ROOT", RT_FIXTURES "/host-a/step0/sys", 1);
	rt_sysroot_init();
	static const char *const vars[] = {
	    "SLURM_JOB_ID",         "SLURM_CPUS_PER_TASK",  "SLURM_CPUS_ON_NODE",
	    "SLURM_MEM_PER_NODE",   "SLURM_MEM_PER_CPU",    "SLURM_JOB_GPUS",
	    "CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES"};
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		unsetenv(vars[i]);
}

TestSuite(alloc, .init = on_host_a);

Test(alloc, the_cgroup_v2_limits_are_what_the_job_was_given)
{
	struct rt_alloc a;
	rt_alloc_detect(NULL, 4, 8ull << 30, 0, &a);
	cr_expect_eq(a.cpu, 1.0);
	cr_expect_str_eq(a.cpu_from, "cgroup");
	cr_expect_eq(a.mem, 512ull << 20);
	cr_expect_str_eq(a.mem_from, "cgroup");
	cr_expect_eq(a.cgroup_cpu, 1.0);
	cr_expect_eq(a.pids_max, -1, "pids.max is max: no limit");
	cr_expect_str_eq(a.gpu_from, "host");
	cr_expect_not(rt_alloc_whole_host(&a));
}

Test(alloc, slurm_against_the_cgroup_says_the_cgroup_was_used)
{
	setenv("SLURM_JOB_ID", "77", 1);
	setenv("SLURM_CPUS_PER_TASK", "8", 1);
	setenv("SLURM_MEM_PER_CPU", "1024", 1);
	setenv("SLURM_JOB_GPUS", "0,1", 1);
	struct rt_alloc a;
	rt_alloc_detect(NULL, 16, 64ull << 30, 4, &a);
	cr_expect_str_eq(a.cpu_from, "cgroup");
	cr_expect_str_eq(a.slurm_job_id, "77");
	cr_expect(strstr(a.note, "Slurm allocated 8 CPUs, the cgroup allows 1") != NULL, "%s",
	          a.note);
	cr_expect(strstr(a.note, "Slurm allocated 8192 MiB, the cgroup allows 512 MiB") != NULL,
	          "%s", a.note);
	cr_expect_eq(a.gpu, 2);
	cr_expect_str_eq(a.gpu_from, "slurm");
}

Test(alloc, the_request_wins_and_visible_devices_count_gpus)
{
	struct rt_request r = {.has_cpu = 1, .cpu = 6, .has_mem = 1, .mem = 2ull << 30};
	setenv("CUDA_VISIBLE_DEVICES", "0,2", 1);
	struct rt_alloc a;
	rt_alloc_detect(&r, 8, 64ull << 30, 4, &a);
	cr_expect(a.cpu == 6 && !strcmp(a.cpu_from, "request"));
	cr_expect(a.mem == 2ull << 30 && !strcmp(a.mem_from, "request"));
	cr_expect(a.gpu == 2 && !strcmp(a.gpu_from, "visible"));
	setenv("CUDA_VISIBLE_DEVICES", "", 1);
	rt_alloc_detect(&r, 8, 64ull << 30, 4, &a);
	cr_expect_eq(a.gpu, 0, "an empty list hides every GPU");
}

/* A container's NVIDIA_VISIBLE_DEVICES, below CUDA_VISIBLE_DEVICES. */
Test(alloc, the_container_runtime_gpus_are_given_after_cuda_visible_devices)
{
	struct rt_alloc a;
	static const struct {
		const char *v;
		unsigned gpus;
	} cases[] = {{"all", 4},        {"none", 0}, {"void", 0},
	             {"", 0},           {"0,1", 2},  {"GPU-8a2c0e7e-1f3d", 1},
	             {"0,1,2,3,4,5", 4}};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		setenv("NVIDIA_VISIBLE_DEVICES", cases[i].v, 1);
		rt_alloc_detect(NULL, 8, 64ull << 30, 4, &a);
		cr_expect(a.gpu == cases[i].gpus && !strcmp(a.gpu_from, "container"),
		          "NVIDIA_VISIBLE_DEVICES='%s': %u GPUs from %s, want %u", cases[i].v,
		          a.gpu, a.gpu_from, cases[i].gpus);
	}
	setenv("CUDA_VISIBLE_DEVICES", "0", 1);
	rt_alloc_detect(NULL, 8, 64ull << 30, 4, &a);
	cr_expect(a.gpu == 1 && !strcmp(a.gpu_from, "visible"), "CUDA_VISIBLE_DEVICES first");
	unsetenv("CUDA_VISIBLE_DEVICES");
	unsetenv("NVIDIA_VISIBLE_DEVICES");
}

/* CUDA_VISIBLE_DEVICES as CUDA reads it: up to the first entry that names
 * no device. */
Test(alloc, visible_devices_are_read_as_cuda_reads_them)
{
	struct rt_alloc a;
	static const struct {
		const char *v;
		unsigned gpus;
	} cases[] = {
	    {"-1", 0},
	    {"", 0},
	    {"NoDevFiles", 0},
	    {"0,1", 2},
	    {"1,-1,0", 1},
	    {"0,7", 1},
	    {"GPU-8a2c0e7e-1f3d", 1},
	    {"MIG-GPU-8a2c/1/0,0", 2},
	    {"0, 1", 2},
	    {"abc,0", 0},
	    {"3", 1},
	    {"4", 0},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		setenv("CUDA_VISIBLE_DEVICES", cases[i].v, 1);
		rt_alloc_detect(NULL, 8, 64ull << 30, 4, &a);
		cr_expect_eq(a.gpu, cases[i].gpus, "CUDA_VISIBLE_DEVICES='%s': %u GPUs, want %u",
		             cases[i].v, a.gpu, cases[i].gpus);
	}
	unsetenv("CUDA_VISIBLE_DEVICES");
}

/* --request: decimal numbers with units only, each key once. */
Test(alloc, a_request_takes_decimal_numbers_and_each_key_once)
{
	struct rt_request r;
	char err[128];
	static const char *const bad[] = {"memory=0x10G", "memory=1e3M", "cpu=0x4",
	                                  "cpu=1e1",      "cpu=4,cpu=5", "memory=1G,memory=2G",
	                                  "gpu=1,gpu=1",  "gpu=+1",      "memory=.5G",
	                                  "memory=inf",   "cpu=nan"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_expect_neq(rt_request_parse(bad[i], &r, err, sizeof(err)), 0, "'%s' taken",
		              bad[i]);
	cr_expect_eq(rt_request_parse("cpu=4,cpu=5", &r, err, sizeof(err)), -1);
	cr_expect(strstr(err, "twice") != NULL, "%s", err);
	cr_assert_eq(rt_request_parse("cpu=2.5,memory=1.5GiB,gpu=1", &r, err, sizeof(err)), 0, "%s",
	             err);
	cr_expect(r.cpu == 2.5 && r.mem == 3ull << 29 && r.gpu == 1);
	cr_assert_eq(rt_request_parse("memory=512M", &r, err, sizeof(err)), 0);
	cr_expect_eq(r.mem, 512ull << 20);
}
