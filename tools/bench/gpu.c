/*
 * gpu.c - rt-bench gpu: NVML's cost per sample on the fake H100 beside its
 * floor (gpu_nvml.c), then the Python tracker's way (spawning nvidia-smi
 * each sample), whose floor is one fork+exec of a trivial program.
 */
#include "bench.h"
#include "gpu_nvml.h"

/* rt-bench gpu [SECONDS, default 20] */
int bench_gpu_mode(const struct bench_ctx *c)
{
	return rt_bench_gpu(c->rec_bin, c->fake_nvml, c->secs);
}

int bench_gpu_section(const struct bench_ctx *c)
{
	if (access(c->fake_nvml, R_OK) != 0)
		return 0;
	rt_bench_gpu(c->rec_bin, c->fake_nvml, c->quick ? 5 : 20);
	unsetenv("RT_NVML_LIBRARY");
	unsetenv("FAKE_NVML_GPUS");
	unsetenv("FAKE_NVML_COST");
	unsetenv("FAKE_NVML_PIDS");
	char truebin[] = "/bin/true";
	char *targs[] = {truebin, NULL};
	double total = 0;
	int reps = c->quick ? 20 : 100;
	for (int i = 0; i < reps; i++) {
		double ccpu, cwall;
		if (run_cmd(targs, &ccpu, &cwall) == 0)
			total += ccpu;
	}
	printf("  fork+exec of /bin/true (floor of spawning nvidia-smi) %6.1f us CPU in "
	       "the child\n\n",
	       total / reps * 1e6);
	return 0;
}
