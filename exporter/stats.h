/*
 * stats.h - what a run needed: its lines as numbers, statistics per CSV
 * column, the server allocation guess and the recommended resources.
 *
 * The rules are the Python package's (reference.md §9) without its MiB/KiB
 * slip: memory is the peak PSS (MiB) plus 20 %, rounded up to a size
 * servers come in. Means are weighted by the time each line covers, so a
 * short final interval weighs less; sums of the per-interval columns
 * (bytes, CPU seconds) telescope to the counters' exact totals.
 */
#ifndef RT_STATS_H
#define RT_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "rt/fields.h"

/* The lines of one run (or its stream), column by column. */
struct rt_series {
	size_t n, cap;
	double *elapsed;             /* seconds from the run's base record to each line's record */
	double *dt;                  /* seconds each line covers (its weight) */
	double *col[RT_CSV_COLUMNS]; /* NAN where the column is empty */
	uint64_t wall0_ns;           /* wall clock of the base record */
	uint64_t mono0_ns;
	double rss_max_mib; /* largest process RSS (JSON only), -1: none */
	int oom;            /* an allocation failed; the series is incomplete */
	void *block;        /* the arrays' one mapping */
	size_t block_bytes;
};

/* Room for cap lines (a replay knows its count). Returns 0 or -ENOMEM. */
int rt_series_reserve(struct rt_series *s, size_t cap);

/* Append the line d (from rt_derive). Returns 0 or -ENOMEM. */
int rt_series_add(struct rt_series *s, const struct rt_derived *d);
void rt_series_free(struct rt_series *s);
/* rt_series_add as an emitter observer (ctx: the series). */
int rt_series_observe(void *ctx, const struct rt_derived *d);

struct rt_colstat {
	int present; /* 0: the column was empty on every line */
	double mean, max, p95, sum;
};

struct rt_runstats {
	uint64_t lines;
	double duration;    /* seconds covered by the lines */
	double rss_max_mib; /* -1: unknown */
	int has_proc;       /* process columns present (wrapper or --pid) */
	struct rt_colstat col[RT_CSV_COLUMNS];
};

/* Statistics of a series. p95 interpolates linearly between the two
 * nearest ranks of the values (numpy's default), unweighted. */
void rt_stats_compute(const struct rt_series *s, struct rt_runstats *st);

/* Several runs of one job, the way the Python package aggregates history:
 * means and durations averaged, maxima, p95 and sums the largest. */
void rt_stats_aggregate(const struct rt_runstats *runs, size_t n, struct rt_runstats *out);

/* Index of a CSV column by name, -1 when unknown. */
int rt_stats_col(const char *name);

enum rt_allocation { RT_ALLOC_UNKNOWN, RT_ALLOC_DEDICATED, RT_ALLOC_SHARED };
/* "shared" when the host was busier than the job by the §9 margins. */
enum rt_allocation rt_stats_allocation(const struct rt_runstats *st);
const char *rt_allocation_name(enum rt_allocation a); /* NULL for unknown */

struct rt_recommendation {
	int from_system; /* no process columns: from the whole system's use */
	long cpu;        /* vCPUs */
	long memory_mib;
	long gpu;
	long vram_mib;
};
void rt_recommend(const struct rt_runstats *st, struct rt_recommendation *r);
/* 128, 256, 512, 1024, 2048, then whole GiB, in MiB. */
long rt_round_memory(double mib);

#endif
