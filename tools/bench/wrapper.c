/*
 * wrapper.c - rt-bench wrapper: the wall time of `resource-tracker -- true`
 * beside `/usr/bin/time -v true`.
 */
#include "bench.h"

/* Wall time of `resource-tracker -- true` (quiet, and printing to stderr)
 * beside `/usr/bin/time -v true`, interleaved, mean of 10 each. */
static void bench_wrapper(const char *rec_bin, const char *tmp)
{
	char store[4300];
	snprintf(store, sizeof(store), "%s/store-wrap", tmp);
	char tv[] = "/usr/bin/time", truebin[] = "/bin/true";
	char *targv[] = {tv, "-v", truebin, NULL};
	char *qargv[] = {(char *)rec_bin, "--quiet", "--store", store, "--", "true", NULL};
	char *dargv[] = {(char *)rec_bin, "--store", store, "--", "true", NULL};
	char *bargv[] = {truebin, NULL};
	int have_time = access(tv, X_OK) == 0;
	double sum[4] = {0}, cpu, wall;
	int reps = 10;
	for (int i = 0; i < reps; i++) {
		char *const *argvs[4] = {have_time ? targv : bargv, bargv, qargv, dargv};
		for (int k = 0; k < 4; k++) {
			if (run_cmd(argvs[k], &cpu, &wall))
				wall = -1;
			sum[k] += wall;
		}
	}
	printf("Wrapper: wall time of the whole command, mean of %d (interleaved):\n", reps);
	if (have_time)
		printf("  /usr/bin/time -v true (anchor)                      %8.2f ms\n",
		       sum[0] / reps * 1e3);
	else
		printf("  /usr/bin/time: not installed (apt-get install time)\n");
	printf("  /bin/true                                           %8.2f ms\n",
	       sum[1] / reps * 1e3);
	double anchor = have_time ? sum[0] : sum[1];
	printf("  resource-tracker --quiet -- true                    %8.2f ms  (%.2fx anchor)\n",
	       sum[2] / reps * 1e3, sum[2] / anchor);
	printf("  resource-tracker -- true (JSON lines to stderr)     %8.2f ms  (%.2fx anchor)\n\n",
	       sum[3] / reps * 1e3, sum[3] / anchor);
}

int bench_wrapper_section(const struct bench_ctx *c)
{
	bench_wrapper(c->rec_bin, c->tmp);
	return 0;
}
