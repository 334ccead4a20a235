/*
 * nodecore.c - the test's driver of the node's one sampler's core
 * (recorder/jobs/nodesampler.c): nodecore STORE INTERVAL SECONDS GROUP...
 * samples the groups every INTERVAL seconds (on the real clock) for at
 * most SECONDS, each into its own run of STORE, until every job's group
 * has emptied or gone. Prints each group's run id ("run N GROUP").
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nodesampler.h"
#include "rt/sysroot.h"

int main(int argc, char **argv)
{
	static char warn[65536];
	char err[512];
	struct rt_store *st;
	struct rt_nodesampler n;
	if (argc < 5)
		return 2;
	rt_sysroot_init();
	double every = atof(argv[2]), secs = atof(argv[3]);
	const struct rt_run_meta meta = {.interval_secs = every};
	const struct rt_node_base base = {.meta = &meta};
	if (rt_store_open(argv[1], RT_STORE_RDWR, &st) || rt_nodesampler_open(&n, st, &base))
		return 1;
	for (int i = 4; i < argc; i++) {
		long k = rt_nodesampler_add(&n, argv[i], err, sizeof(err));
		if (k < 0) {
			fprintf(stderr, "nodecore: %s\n", err);
			return 1;
		}
		printf("run %llu %s\n", (unsigned long long)n.job[k]->run, argv[i]);
	}
	fflush(stdout);
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	for (double left = secs; left > 0 && rt_nodesampler_tick(&n, warn, sizeof(warn));
	     left -= every) {
		if (warn[0])
			fputs(warn, stderr);
		long ns = t.tv_nsec + (long)(every * 1e9);
		t.tv_sec += ns / 1000000000;
		t.tv_nsec = ns % 1000000000;
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL);
	}
	rt_nodesampler_close(&n);
	rt_store_close(st);
	return 0;
}
