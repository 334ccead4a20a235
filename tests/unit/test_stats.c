/* Statistics, allocation and recommendation (exporter/stats.c). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "answer/answer.h"
#include "answer/stats.h"

/* A series of n lines, every column NAN, each line covering dt seconds. */
static void make(struct rt_series *s, size_t n, double dt)
{
	memset(s, 0, sizeof(*s));
	cr_assert_eq(rt_series_reserve(s, n), 0);
	s->n = n;
	s->rss_max_mib = -1;
	for (size_t i = 0; i < n; i++) {
		s->dt[i] = dt;
		s->elapsed[i] = dt * (double)(i + 1);
		for (unsigned c = 0; c < RT_STATS_COLS; c++)
			s->col[c][i] = NAN;
	}
}

static void set(struct rt_series *s, const char *col, size_t i, double v)
{
	int c = rt_stats_col((unsigned)rt_value_by_column(col));
	cr_assert_geq(c, 0, "%s", col);
	s->col[c][i] = v;
}

static const struct rt_colstat *get(const struct rt_runstats *st, const char *col)
{
	return &st->col[rt_stats_col((unsigned)rt_value_by_column(col))];
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

Test(stats, p95_interpolates_like_numpy_on_any_data)
{
	srand(7);
	for (int round = 0; round < 200; round++) {
		size_t n = 1 + (size_t)(rand() % 300);
		struct rt_series s;
		make(&s, n, 1.0);
		double *v = malloc(n * sizeof(double));
		for (size_t i = 0; i < n; i++) {
			/* few distinct values in some rounds: duplicates everywhere */
			v[i] = round % 3 ? (double)(rand() % 1000) / 7.0 : (double)(rand() % 4);
			set(&s, "process_cpu_usage", i, v[i]);
		}
		struct rt_runstats st;
		rt_stats_compute(&s, &st);
		qsort(v, n, sizeof(double), cmp);
		double h = 0.95 * (double)(n - 1);
		size_t k = (size_t)floor(h);
		double want = k + 1 < n ? v[k] + (h - (double)k) * (v[k + 1] - v[k]) : v[k];
		cr_assert_float_eq(get(&st, "process_cpu_usage")->p95, want, 1e-9, "n %zu", n);
		cr_assert_float_eq(get(&st, "process_cpu_usage")->max, v[n - 1], 0);
		free(v);
		rt_series_free(&s);
	}
}

Test(stats, mean_is_weighted_by_time_so_a_short_last_interval_weighs_less)
{
	struct rt_series s;
	make(&s, 3, 1.0);
	s.dt[2] = 0.1; /* the final, partial interval */
	set(&s, "process_cpu_usage", 0, 1.0);
	set(&s, "process_cpu_usage", 1, 1.0);
	set(&s, "process_cpu_usage", 2, 4.0);
	set(&s, "system_net_recv_bytes", 0, 100);
	set(&s, "system_net_recv_bytes", 1, 200);
	set(&s, "system_net_recv_bytes", 2, 5);
	struct rt_runstats st;
	rt_stats_compute(&s, &st);
	cr_assert_float_eq(get(&st, "process_cpu_usage")->mean, (1.0 + 1.0 + 0.4) / 2.1, 1e-12);
	cr_assert_float_eq(get(&st, "system_net_recv_bytes")->sum, 305, 0);
	cr_assert_float_eq(st.duration, 2.1, 1e-12);
	cr_assert(st.has_proc);
	cr_assert_not(get(&st, "process_gpu_usage")->present); /* never set: empty */
	rt_series_free(&s);
}

Test(stats, a_short_last_interval_is_folded_into_the_one_before_for_max_and_p95)
{
	struct rt_series s;
	make(&s, 3, 1.0);
	s.dt[2] = 0.06; /* the job ended 60 ms after a sample */
	set(&s, "process_cpu_usage", 0, 0.5);
	set(&s, "process_cpu_usage", 1, 0.5);
	set(&s, "process_cpu_usage", 2, 0.95); /* a few ticks over a few ms */
	set(&s, "process_memory_mib", 0, 100);
	set(&s, "process_memory_mib", 1, 100);
	set(&s, "process_memory_mib", 2, 300); /* a level: a real reading, kept */
	struct rt_runstats st;
	rt_stats_compute(&s, &st);
	double folded = (0.5 * 1.0 + 0.95 * 0.06) / 1.06;
	cr_assert_float_eq(get(&st, "process_cpu_usage")->max, folded, 1e-12);
	cr_assert_float_eq(get(&st, "process_cpu_usage")->mean, (0.5 + 0.5 + 0.95 * 0.06) / 2.06,
	                   1e-12, "the mean (and CPU seconds) unchanged");
	cr_assert_float_eq(get(&st, "process_memory_mib")->max, 300, 0);
	rt_series_free(&s);
	/* half an interval or more: left as it is */
	make(&s, 2, 1.0);
	s.dt[1] = 0.5;
	set(&s, "process_cpu_usage", 0, 0.5);
	set(&s, "process_cpu_usage", 1, 0.95);
	rt_stats_compute(&s, &st);
	cr_assert_float_eq(get(&st, "process_cpu_usage")->max, 0.95, 0);
	rt_series_free(&s);
}

Test(stats, round_memory_steps_then_whole_gib)
{
	cr_assert_eq(rt_round_memory(0), 128);
	cr_assert_eq(rt_round_memory(128), 128);
	cr_assert_eq(rt_round_memory(128.01), 256);
	cr_assert_eq(rt_round_memory(512), 512);
	cr_assert_eq(rt_round_memory(1500), 2048);
	cr_assert_eq(rt_round_memory(2048), 2048);
	cr_assert_eq(rt_round_memory(2049), 3072);
	cr_assert_eq(rt_round_memory(10240), 10240);
	cr_assert_eq(rt_round_memory(10240.5), 11264);
}

static void reco_of(double cpu_mean, double mem_max, double gpu, double vram,
                    struct rt_recommendation *r)
{
	struct rt_series s;
	make(&s, 2, 1.0);
	for (size_t i = 0; i < 2; i++) {
		set(&s, "process_cpu_usage", i, cpu_mean);
		set(&s, "process_memory_mib", i, i ? mem_max : mem_max / 2);
		set(&s, "process_gpu_usage", i, i ? gpu : 0);
		set(&s, "process_gpu_vram_mib", i, vram);
	}
	struct rt_runstats st;
	rt_stats_compute(&s, &st);
	rt_recommend(&st, r);
	rt_series_free(&s);
}

Test(stats, recommendation_follows_the_reference_rules_in_mib)
{
	struct rt_recommendation r;
	reco_of(0.2, 100, 0, 0, &r);
	cr_assert_eq(r.cpu, 1); /* at least one */
	cr_assert_eq(r.memory_mib, 128);
	cr_assert_eq(r.gpu, 0);
	cr_assert_eq(r.vram_mib, 0);
	cr_assert_not(r.from_system);
	reco_of(2.5, 1000, 0, 0, &r);
	cr_assert_eq(r.cpu, 2);           /* halves to even, as Python's round */
	cr_assert_eq(r.memory_mib, 2048); /* 1200 MiB, not 1200/1024 */
	reco_of(3.5, 4000, 1.4, 5000, &r);
	cr_assert_eq(r.cpu, 4);
	cr_assert_eq(r.memory_mib, 5120); /* 4800 -> 5 GiB */
	cr_assert_eq(r.gpu, 1);
	cr_assert_eq(r.vram_mib, 6144);
	reco_of(1, 100, 0.3, 10, &r);
	cr_assert_eq(r.gpu, 1); /* used a GPU: at least one */
}

Test(stats, standalone_runs_recommend_from_the_system)
{
	struct rt_series s;
	make(&s, 2, 1.0);
	for (size_t i = 0; i < 2; i++) {
		set(&s, "system_cpu_usage", i, 3.4);
		set(&s, "system_memory_used_mib", i, 3000);
		set(&s, "system_gpu_usage", i, 0);
		set(&s, "system_gpu_vram_mib", i, 0);
	}
	struct rt_runstats st;
	struct rt_recommendation r;
	rt_stats_compute(&s, &st);
	rt_recommend(&st, &r);
	cr_assert(r.from_system);
	cr_assert_eq(r.cpu, 3);
	cr_assert_eq(r.memory_mib, 4096);
	cr_assert_eq(rt_stats_allocation(&st), RT_ALLOC_UNKNOWN);
	rt_series_free(&s);
}

static enum rt_allocation alloc_of(double pc, double sc, double pm, double sm)
{
	struct rt_series s;
	make(&s, 1, 1.0);
	set(&s, "process_cpu_usage", 0, pc);
	set(&s, "system_cpu_usage", 0, sc);
	set(&s, "process_memory_mib", 0, pm);
	set(&s, "system_memory_used_mib", 0, sm);
	struct rt_runstats st;
	rt_stats_compute(&s, &st);
	rt_series_free(&s);
	return rt_stats_allocation(&st);
}

Test(stats, allocation_is_shared_when_the_host_is_busier_by_either_margin)
{
	cr_assert_eq(alloc_of(2.0, 2.2, 1000, 1400), RT_ALLOC_DEDICATED);
	cr_assert_eq(alloc_of(2.0, 2.6, 1000, 1400), RT_ALLOC_SHARED); /* > x1.25 and > +0.25 */
	cr_assert_eq(alloc_of(0.1, 0.2, 1000, 1400), RT_ALLOC_SHARED); /* > x1.25 */
	cr_assert_eq(alloc_of(2.0, 2.2, 100, 700), RT_ALLOC_SHARED);   /* memory > +512 MiB */
	cr_assert_str_eq(rt_allocation_name(RT_ALLOC_SHARED), "shared");
	cr_assert_null(rt_allocation_name(RT_ALLOC_UNKNOWN));
}

Test(stats, history_averages_means_and_keeps_the_largest_peaks)
{
	struct rt_runstats runs[2];
	struct rt_series s;
	make(&s, 2, 1.0);
	set(&s, "process_cpu_usage", 0, 1);
	set(&s, "process_cpu_usage", 1, 1);
	set(&s, "process_memory_mib", 0, 100);
	set(&s, "process_memory_mib", 1, 900);
	rt_stats_compute(&s, &runs[0]);
	rt_series_free(&s);
	make(&s, 4, 1.0);
	for (size_t i = 0; i < 4; i++) {
		set(&s, "process_cpu_usage", i, 3);
		set(&s, "process_memory_mib", i, 500);
	}
	rt_stats_compute(&s, &runs[1]);
	rt_series_free(&s);
	struct rt_runstats agg;
	rt_stats_aggregate(runs, 2, &agg);
	cr_assert_float_eq(get(&agg, "process_cpu_usage")->mean, 2.0, 1e-12);
	cr_assert_float_eq(get(&agg, "process_cpu_usage")->max, 3.0, 0);
	cr_assert_float_eq(get(&agg, "process_memory_mib")->max, 900, 0);
	cr_assert_float_eq(get(&agg, "process_memory_mib")->sum, 2000, 0);
	cr_assert_float_eq(agg.duration, 3.0, 1e-12);
	cr_assert_eq(agg.lines, 6);
}

/* What held a job back raises the recommendation above its use, and says
 * why: throttled by a 1.5-core quota 20 % of the run, OOM-killed at a
 * 1 GiB limit in its own cgroup. */
Test(stats, throttling_and_oom_kills_raise_the_recommendation)
{
	struct rt_series s = {0};
	make(&s, 10, 1.0);
	for (size_t i = 0; i < 10; i++) {
		set(&s, "process_cpu_usage", i, 1.2);
		set(&s, "process_memory_mib", i, 800);
		set(&s, "system_cgroup_cpu_throttled_secs", i, 0.2);
		set(&s, "system_cgroup_cpu_limit_cores", i, 1.5);
		set(&s, "system_cgroup_memory_limit_mib", i, 1024);
		set(&s, "system_cgroup_memory_used_mib", i, 900 + 10.0 * (double)i);
		set(&s, "system_cgroup_oom_kills", i, i < 7 ? 0 : 1);
		set(&s, "system_pressure_memory_some_pct", i, 2);
	}
	struct rt_runstats st;
	rt_stats_compute(&s, &st);
	struct rt_findings f;
	rt_findings(&st, &f);
	cr_expect_eq(f.oom_kills, 1);
	cr_expect(f.oom_in_cgroup);
	cr_expect_float_eq(f.oom_at, 8.0, 1e-9, "the first line with a kill ends at 8 s");
	cr_expect_float_eq(f.throttled_pct, 20.0, 1e-9);
	struct rt_recommendation r;
	rt_recommend(&st, &r);
	cr_expect_eq(r.cpu, 3, "one vCPU above the 1.5-core quota");
	cr_expect_eq(r.memory_mib, 2048, "twice the limit it was killed at");
	cr_expect(strstr(r.why, "throttled") && strstr(r.why, "OOM"), "%s", r.why);
	/* the same run, not held back: the plain rules, no reason */
	for (size_t i = 0; i < 10; i++) {
		set(&s, "system_cgroup_cpu_throttled_secs", i, 0);
		set(&s, "system_cgroup_oom_kills", i, 0);
	}
	rt_stats_compute(&s, &st);
	rt_recommend(&st, &r);
	cr_expect_eq(r.cpu, 1);
	cr_expect_eq(r.memory_mib, 1024, "800 MiB + 20 %% rounded up");
	cr_expect_str_eq(r.why, "");
	rt_series_free(&s);
}

Test(stats, allocation_says_why_in_one_clause)
{
	struct rt_series s;
	make(&s, 1, 1.0);
	set(&s, "process_cpu_usage", 0, 0.01);
	set(&s, "system_cpu_usage", 0, 0.011);
	set(&s, "process_memory_mib", 0, 3);
	set(&s, "system_memory_used_mib", 0, 410);
	struct rt_runstats st;
	rt_stats_compute(&s, &st);
	rt_series_free(&s);
	char why[200];
	cr_assert_eq(rt_stats_allocation_why(&st, why, sizeof(why)), RT_ALLOC_SHARED);
	cr_expect(strstr(why, "memory in use (mean 410 MiB) is above 1.5x the job's (3)"), "%s",
	          why);
}

/* disk write latency of n intervals (ms), the rest without I/O */
static size_t slow_disk(size_t n, double ms, char out[][RT_FINDING_LEN])
{
	struct rt_series s;
	make(&s, 20, 1.0);
	for (size_t i = 0; i < 20; i++)
		set(&s, "process_cpu_usage", i, 0.5);
	for (size_t i = 0; i < n; i++)
		set(&s, "system_disk_write_latency_ms", i, ms);
	struct rt_runstats st;
	rt_stats_compute(&s, &st);
	rt_series_free(&s);
	return rt_findings_text(&st, 0, out, 8);
}

Test(stats, a_slow_disk_verdict_needs_several_intervals_with_io)
{
	char out[8][RT_FINDING_LEN];
	size_t n = slow_disk(1, 400, out); /* one fsync'd write: p95 = that interval */
	for (size_t i = 0; i < n; i++)
		cr_expect_null(strstr(out[i], "disk was slow"), "%s", out[i]);
	n = slow_disk(6, 400, out);
	int said = 0;
	for (size_t i = 0; i < n; i++)
		said |= strstr(out[i], "the disk was slow: writes took 400.0 ms on average "
		                       "(p95 400.0) over 6 intervals with I/O") != NULL;
	cr_expect(said, "n=%zu", n);
}

Test(stats, the_vcpu_rule_rounds_the_mean_and_shows_what_p95_asks)
{
	struct rt_series s;
	make(&s, 20, 1.0);
	for (size_t i = 0; i < 20; i++) /* mean 1.20, p95 1.85 */
		set(&s, "process_cpu_usage", i, i < 15 ? 1.0 : i < 16 ? 1.65 : 1.85);
	set(&s, "process_memory_mib", 0, 100);
	struct rt_runstats st;
	rt_stats_compute(&s, &st);
	rt_series_free(&s);
	struct rt_recommendation r;
	rt_recommend(&st, &r);
	cr_expect_eq(r.cpu, 1, "the reference rule: round(mean %.2f)",
	             get(&st, "process_cpu_usage")->mean);
	cr_expect_eq(r.cpu_p95, 2, "p95 %.2f", get(&st, "process_cpu_usage")->p95);
}

Test(stats, a_job_that_wrote_more_than_the_disks_is_told_why)
{
	struct rt_series s;
	make(&s, 4, 1.0);
	for (size_t i = 0; i < 4; i++) {
		set(&s, "process_cpu_usage", i, 0.5);
		set(&s, "process_disk_write_bytes", i, 50e6); /* 200 MB dirtied */
		set(&s, "system_disk_write_bytes", i, 1e6);   /* 4 MB reached a disk */
	}
	struct rt_runstats st;
	rt_stats_compute(&s, &st);
	rt_series_free(&s);
	char out[8][RT_FINDING_LEN];
	size_t n = rt_findings_text(&st, 0, out, 8);
	int said = 0;
	for (size_t i = 0; i < n; i++)
		said |= strstr(out[i], "the job wrote 200 MB but the disks only 4 MB") != NULL;
	cr_expect(said);
}
