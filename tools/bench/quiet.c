/*
 * quiet.c - rt-bench quiet: rt-recorder --quiet at 100 Hz beside the
 * floor paced at 100 Hz.
 */
#include "bench.h"

/* rt-recorder --quiet at 100 Hz beside the floor paced at 100 Hz. */
static void bench_quiet(const char *rec_bin, const char *tmp, int secs)
{
	char store[4300], count[32];
	snprintf(store, sizeof(store), "%s/store-quiet", tmp);
	snprintf(count, sizeof(count), "%d", (secs + 3) * 100);
	char *rargv[] = {(char *)rec_bin, "--quiet", "-i",  "0.01", "--count",
	                 count,           "--store", store, NULL};
	pid_t rec = spawn_quiet(rargv);
	usleep(1000000);
	long long r0 = sched_ns(rec);
	double w0 = wall_now();
	pace = 0.01;
	double fl = bench_pread(secs * 100);
	pace = 0;
	double w1 = wall_now();
	long long r1 = sched_ns(rec);
	long rss = status_kb(rec, "VmRSS:"), pss = smaps_kb(rec, "Pss:");
	kill(rec, SIGTERM);
	int st;
	waitpid(rec, &st, 0);
	double samples = (w1 - w0) / 0.01, us = (double)(r1 - r0) / samples / 1e3;
	printf("rt-recorder --quiet -i 0.01 (100 Hz), %d s, side by side:\n", secs);
	printf("  floor, paced at 100 Hz in rt-bench                  %8.1f us  (%.1f syscalls)\n",
	       fl, floor_calls);
	printf("  rt-recorder                                         %8.1f us  (%.2fx floor)\n",
	       us, us / fl);
	printf("  rt-recorder CPU                                     %8.2f %% of one core\n",
	       (double)(r1 - r0) / 1e9 / (w1 - w0) * 100);
	printf("  rt-recorder VmRSS / PSS                             %5ld / %ld KiB\n\n", rss,
	       pss);
}

int bench_quiet_section(const struct bench_ctx *c)
{
	bench_quiet(c->rec_bin, c->tmp, c->quick ? 3 : 10);
	return 0;
}
