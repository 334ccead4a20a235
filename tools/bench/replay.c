/*
 * replay.c - rt-bench replay: the store the steps' recorder step wrote,
 * replayed to /dev/null as CSV and as JSON: samples per second.
 */
#include "bench.h"

static double bench_replay(const char *store_dir, uint64_t run, enum rt_format fmt, int reps,
                           uint64_t *lines)
{
	struct rt_store *s;
	if (rt_store_open(store_dir, RT_STORE_RDONLY, &s))
		return -1;
	struct rt_runinfo ri = {.id = run, .interval = 1};
	struct rt_sink k;
	char why[256];
	rt_sink_open(&k, "/dev/null", 1, 0, why, sizeof(why));
	*lines = 0;
	double t0 = wall_now();
	for (int i = 0; i < reps; i++) {
		struct rt_emitter e;
		rt_emitter_init(&e, s, &ri, fmt, &k);
		struct rt_replay_opts o = {0, 0, 1};
		rt_replay(&e, &o);
		*lines += e.lines;
		rt_emitter_free(&e);
	}
	rt_sink_flush(&k);
	double secs = wall_now() - t0;
	rt_sink_close(&k);
	rt_store_close(s);
	return (double)*lines / secs;
}

int bench_replay_section(const struct bench_ctx *c)
{
	const struct bench_sampled *s = bench_sampled(c);
	uint64_t lines;
	double csv = bench_replay(s->store, s->run, RT_FMT_CSV, c->quick ? 2 : 10, &lines);
	printf("Replay to /dev/null (%llu lines):\n", (unsigned long long)lines);
	printf("  CSV                                                %8.0f samples/s\n", csv);
	double js = bench_replay(s->store, s->run, RT_FMT_JSON, c->quick ? 1 : 3, &lines);
	printf("  JSON                                               %8.0f samples/s\n\n", js);
	return 0;
}
