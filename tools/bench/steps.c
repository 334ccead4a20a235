/*
 * steps.c - rt-bench steps: CPU per system-wide sample of rt's collectors
 * and of the recorder's whole step (+ CRC, pack, store, ring), beside the
 * floor of pread'ing the same files; back to back, then paced at 100 Hz.
 */
#include "bench.h"

int bench_steps(const struct bench_ctx *c)
{
	const struct bench_sampled *s = bench_sampled(c);
	double a = s->floor_us, b = s->collect_us, st = s->step_us;
	printf("CPU per system-wide sample (process CPU time, back to back; the floor "
	       "walks /proc and\nreads operstate every sample, rt once a second):\n");
	printf("  floor: pread of the same files, statvfs, getdents  %8.1f us\n", a);
	printf("  rt collectors (read + parse + fill record)          %8.1f us  (%.2fx floor)\n", b,
	       b / a);
	printf("  rt recorder step (+ CRC, pack, store, ring)         %8.1f us  (%.2fx floor)\n",
	       st, st / a);
	/* the same three, paced at 100 Hz */
	int np = c->quick ? 200 : 1000;
	char store_p[4300];
	snprintf(store_p, sizeof(store_p), "%s/store-paced", c->tmp);
	pace = 0.01;
	double ap = bench_pread(np), bp = bench_collect(np);
	uint64_t run_p;
	size_t rs_p;
	double cp = bench_sampler(store_p, np, &run_p, &rs_p);
	pace = 0;
	printf("CPU per sample paced at 100 Hz (%d samples, wakeups included):\n", np);
	printf("  floor                                               %8.1f us\n", ap);
	printf("  rt collectors                                       %8.1f us  (%.2fx floor)\n",
	       bp, bp / ap);
	printf("  rt recorder step                                    %8.1f us  (%.2fx "
	       "floor)\n\n",
	       cp, cp / ap);
	return 0;
}
