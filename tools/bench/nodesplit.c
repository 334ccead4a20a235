/*
 * nodesplit.c - rt-bench nodesplit [SECONDS]: the node's sample split in
 * two (recorder/system/collect.c): the host's sources read once a tick,
 * each job's cgroup read over a copy of that record, against what one
 * recorder per job pays today (a full sample of every source per job),
 * with 1, 10 and 100 job groups made in this machine's real hierarchies
 * (needs root). Every sample as at 1 Hz (the once-a-second reads in
 * each). Collectors only: a job's process tree costs the same either way
 * and is left out of both. CPU is this thread's.
 */
#include "sampler.h"
#include "bench.h"

#include "cgjob.h"

static double thread_cpu(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static _Alignas(8) unsigned char host_buf[1 << 20], rec_buf[1 << 20];

/* Per job and sample, µs: one full collector per job (today's). */
static double full_us(struct rt_cgjob *g, int n, double secs)
{
	struct rt_collector *c = calloc((size_t)n, sizeof(*c));
	struct rt_record r;
	int ch, rounds = 0;
	for (int i = 0; i < n; i++) {
		rt_collector_open(&c[i], &rt_sampler_sources);
		c[i].cg_fixed = &g[i].cp;
		rt_collector_sample(&c[i], rec_buf, sizeof(rec_buf), &r, &ch);
	}
	double t0 = thread_cpu(), w0 = wall_now();
	for (; wall_now() - w0 < secs; rounds++)
		for (int i = 0; i < n; i++) {
			c[i].force_slow = 1;
			rt_collector_sample(&c[i], rec_buf, sizeof(rec_buf), &r, &ch);
		}
	double us = (thread_cpu() - t0) * 1e6 / ((double)rounds * n);
	for (int i = 0; i < n; i++)
		rt_collector_close(&c[i]);
	free(c);
	return us;
}

/* Per job and sample, µs: the host's part once a round, each job's part
 * over it; *host_us the host's part a round. */
static double split_us(struct rt_cgjob *g, int n, double secs, double *host_us)
{
	struct rt_collector host, *job = calloc((size_t)n, sizeof(*job));
	struct rt_record h, r;
	int ch, rounds = 0;
	double in_host = 0;
	rt_collector_open(&host, &rt_sampler_sources);
	host.part = RT_PART_HOST;
	for (int i = 0; i < n; i++) {
		rt_collector_open_job(&job[i], &host);
		job[i].cg_fixed = &g[i].cp;
	}
	double t0 = thread_cpu(), w0 = wall_now();
	for (; wall_now() - w0 < secs; rounds++) {
		double h0 = thread_cpu();
		host.force_slow = 1;
		rt_collector_sample(&host, host_buf, sizeof(host_buf), &h, &ch);
		rt_record_seal(&h);
		in_host += thread_cpu() - h0;
		for (int i = 0; i < n; i++)
			rt_collector_sample_job(&job[i], &h, rec_buf, sizeof(rec_buf), &r);
	}
	double us = (thread_cpu() - t0) * 1e6 / ((double)rounds * n);
	*host_us = in_host * 1e6 / rounds;
	for (int i = 0; i < n; i++)
		rt_collector_close_job(&job[i]);
	rt_collector_close(&host);
	free(job);
	return us;
}

int bench_nodesplit_mode(const struct bench_ctx *c)
{
	if (geteuid() != 0) {
		printf("nodesplit: skipped (needs root: it makes cgroups)\n");
		return 0;
	}
	static const int sizes[] = {1, 10, 100};
	printf("a node's samples, collectors only, every sample as at 1 Hz, %d s each: one full "
	       "sample per job (one recorder per job) against the host's sources once a tick and "
	       "each job's cgroup over a copy\n",
	       c->secs);
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		int n = sizes[s];
		char top[64], err[256];
		snprintf(top, sizeof(top), "/rt-bench-split-%d", (int)getpid());
		struct rt_cgjob *g = calloc((size_t)n, sizeof(*g));
		if (!g || bench_cg_make(top, n)) {
			printf("nodesplit: cannot make cgroups (%s)\n", strerror(errno));
			free(g);
			return 1;
		}
		for (int i = 0; i < n; i++) {
			char path[128];
			snprintf(path, sizeof(path), "%s/g%d", top, i);
			if (rt_cgjob_resolve(path, &g[i], err, sizeof(err)))
				printf("nodesplit: %s\n", err);
		}
		double host_us, full = full_us(g, n, c->secs / 2.0);
		double split = split_us(g, n, c->secs / 2.0, &host_us);
		printf("  %3d job%s  one recorder each %7.1f us/job/sample   split %6.1f us (the "
		       "host's "
		       "part %6.1f us a tick)   %5.2fx less\n",
		       n, n == 1 ? " " : "s", full, split, host_us, full / split);
		for (int i = 0; i < n; i++)
			rt_cgjob_close(&g[i]);
		bench_cg_remove(top, n, NULL, 0);
		free(g);
	}
	return 0;
}
