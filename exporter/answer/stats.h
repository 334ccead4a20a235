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

/* The columns kept: the 32 CSV columns, then these values (what the
 * findings and the report need), stats index RT_CSV_COLUMNS + k. */
#define RT_STATS_XCOLS 17
#define RT_STATS_COLS (RT_CSV_COLUMNS + RT_STATS_XCOLS)
extern const unsigned rt_stats_xids[RT_STATS_XCOLS];

/* Per GPU slot, over the lines that carry it: what the job did there
 * (records since rt 0.4 of a tree) and what held the GPU back. */
struct rt_gpustat {
	char name[96];
	double w;                                  /* seconds of lines with this GPU */
	double job_w, job_busy_wsum, job_busy_max; /* GPUs (0..1), over job_w seconds */
	double job_vram_max;                       /* MiB */
	int job_on;                                /* the job used it */
	double capped_w, thermal_w; /* seconds at its power cap; slowed by heat or hardware */
	double held_clock_min, held_clock_max; /* its SM clock while held back, MHz (0: never) */
	double max_clock;                      /* the board's highest SM clock, 0: unknown */
	int energy_n;                          /* readings of its energy counter */
	uint64_t energy_first_mj, energy_last_mj;
};

/* Add line d's GPUs to g[0..*n) (the per-GPU statistics). */
void rt_gpustat_add(struct rt_gpustat *g, unsigned *n, const struct rt_derived *d);
/* Several runs' statistics of the same GPU slots into g[0..*n). */
void rt_gpustat_merge(struct rt_gpustat *g, unsigned *n, const struct rt_gpustat *add,
                      unsigned nadd);

/* The lines of one run (or its stream), column by column. */
/* Lines are staged by rows and written to the columns RT_SERIES_STAGE at a
 * time: one line touches 46 arrays, and a store to each per line misses the
 * cache every time (a third of a day-long summary's time). */
#define RT_SERIES_STAGE 32

struct rt_series {
	size_t n, cap;              /* lines in the columns (rt_series_flush) */
	double *elapsed;            /* seconds from the run's base record to each line's record */
	double *dt;                 /* seconds each line covers (its weight) */
	double *col[RT_STATS_COLS]; /* NAN where the column is empty */
	/* a short last line folded into the one before (rt_stats_compute):
	 * the two lines' values as they were, NAN where nothing was folded */
	int folded;
	double tail_orig[RT_STATS_COLS][2];
	uint64_t wall0_ns; /* wall clock of the base record */
	uint64_t mono0_ns;
	double rss_max_mib;    /* the tree's RSS peak: largest RSS sum or VmHWM, -1: none */
	double hwm_max_mib;    /* the largest VmHWM of a member or reaped descendant, -1: none */
	double shared_min_mib; /* the least RSS - PSS of a live tree (shared pages), -1: none */
	int oom;               /* an allocation failed; the series is incomplete */
	unsigned ngpu;
	struct rt_gpustat gpu[RT_MAX_GPUS];
	void *block; /* the arrays' one mapping */
	size_t block_bytes;
	unsigned staged;                                  /* lines in stage, after n */
	double stage[RT_SERIES_STAGE][RT_STATS_COLS + 2]; /* elapsed, dt, columns */
};

/* Room for cap lines (a replay knows its count). Returns 0 or -ENOMEM. */
int rt_series_reserve(struct rt_series *s, size_t cap);

/* Append the line d (from rt_derive). Returns 0 or -ENOMEM. */
int rt_series_add(struct rt_series *s, const struct rt_derived *d);
/* Move the staged lines into the columns (rt_stats_compute does it). */
int rt_series_flush(struct rt_series *s);
void rt_series_free(struct rt_series *s);
/* rt_series_add as an emitter observer (ctx: the series). */
int rt_series_observe(void *ctx, const struct rt_derived *d);

struct rt_colstat {
	int present; /* 0: the column was empty on every line */
	double mean, max, p95, sum;
	double first, last;   /* values of the first and last lines that have it */
	double first_nonzero; /* seconds into the run of the first line > 0, -1: none */
	size_t n;             /* lines that have it */
};

struct rt_runstats {
	uint64_t lines;
	double duration;    /* seconds covered by the lines */
	double rss_max_mib; /* -1: unknown */
	/* The job's memory peak the answer is built from: the tree's largest
	 * PSS in any sample, or the largest peak one of its processes reached
	 * between samples (VmHWM, ru_maxrss of a reaped one), whichever is
	 * more; the host's memory in use without a tree. -1: unknown. */
	double mem_peak_mib;
	double hwm_max_mib; /* the largest member's own peak, -1: unknown */
	/* a high-water mark reached before tracking began (the run's metadata
	 * peak_before_tracking_mib), left out of every peak; 0: none */
	double hwm_before_mib;
	double shared_min_mib; /* the least RSS - PSS of a live tree, -1: unknown */
	int has_proc;          /* process columns present (wrapper or --pid) */
	/* a job known by its cgroup, as its metadata said at the end (rt 0.5;
	 * -1: not recorded): the OOM kills in its whole subtree of groups, its
	 * group's high-water mark since it was made and its limit (MiB, 0:
	 * none), the times it reached that limit */
	double job_oom_kills, job_mem_peak_mib, job_mem_limit_mib, job_limit_hits;
	/* the part (a step, a container) killed under a limit of its own
	 * below the job's: its name, kind and limit ("": none) */
	char oom_part[64];
	const char *oom_part_kind;
	double oom_part_limit_mib;
	/* The tracked tree's life: the job's columns cover its lines only (a
	 * --pid process that ended before the tracker did). job_duration is
	 * the seconds they cover; tail_after the seconds the tracker ran on
	 * without it (0: it lived to the end). */
	double job_duration, tail_after;
	struct rt_colstat col[RT_STATS_COLS];
	unsigned ngpu;
	struct rt_gpustat gpu[RT_MAX_GPUS];
};

/* The seconds a value's statistics cover: the tracked tree's life for the
 * job's values, the run's for the host's. */
double rt_stats_secs(const struct rt_runstats *st, unsigned id);

struct rt_recommendation;
/* The recommendation's GPU words: ", 1 GPU with N MiB VRAM", ", 2 GPUs with
 * N MiB VRAM each" or ", no GPU". */
void rt_gpu_reco_text(char *buf, size_t cap, const struct rt_recommendation *r);
/* The energy the GPU drew over the run (J, from its counter's first and
 * last readings), -1: unknown. */
double rt_gpu_energy_joules(const struct rt_gpustat *g);
/* GPU slot i's line: its model, and what the job did there (has_proc). */
void rt_gpu_note_text(char *buf, size_t cap, const struct rt_runstats *st, unsigned i);
/* A plain sentence per GPU held back a tenth of the run or more: at its
 * power cap, or slowed by heat, with its SM clock then. Returns how many
 * went into out[n..max). */
size_t rt_gpu_held_text(const struct rt_runstats *st, char (*out)[200], size_t n, size_t max);

/* The GPUs as summary --json gives them: model, the job's busy and VRAM
 * on each, the time at the power cap or slowed and the SM clock then. */
struct cJSON;
struct cJSON *rt_json_gpus(const struct rt_runstats *st);

/* The job's VRAM on the one GPU where it held the most (MiB), -1 when the
 * run's records do not say per GPU (recorded before rt 0.4). */
double rt_gpu_vram_one(const struct rt_runstats *st);

/* Statistics of a series. p95 interpolates linearly between the two
 * nearest ranks of the values (numpy's default), unweighted. */
void rt_stats_compute(struct rt_series *s, struct rt_runstats *st);

/* Several runs of one job, the way the Python package aggregates history:
 * means and durations averaged, maxima, p95 and sums the largest. */
void rt_stats_aggregate(const struct rt_runstats *runs, size_t n, struct rt_runstats *out);

/* Index of the kept column of value id (RT_V_*), -1 when not kept. */
int rt_stats_col(unsigned id);

enum rt_allocation { RT_ALLOC_UNKNOWN, RT_ALLOC_DEDICATED, RT_ALLOC_SHARED };
/* "shared" when the host was busier than the job by the §9 margins. */
enum rt_allocation rt_stats_allocation(const struct rt_runstats *st);
const char *rt_allocation_name(enum rt_allocation a); /* NULL for unknown */

/*
 * The tree's CPU demand on average (cores): what it used and what its
 * threads waited, runnable, for a CPU (schedstat run_delay). -1 when the
 * run has no such column (a run of an older rt, no process tree).
 * Recommendations go by demand when the job waited at least RT_WAIT_CORES
 * and RT_WAIT_SHARE of what it used.
 */
#define RT_WAIT_CORES 0.2
#define RT_WAIT_SHARE 0.1
int rt_cpu_demand(const struct rt_runstats *st, double *used, double *waited);

/* What held the job back, from the saturation columns (rt 0.2). */
struct rt_findings {
	double oom_kills;        /* during the run: its cgroup's, else the host's */
	double oom_at;           /* seconds into the run of the first, -1: none or unknown */
	int oom_in_cgroup;       /* counted in the job's cgroup (not just somewhere) */
	double host_oom_kills;   /* kills elsewhere on the host during the run */
	double limit_hits;       /* times the job's group reached its limit, -1: unknown */
	double mem_limit_mib;    /* the job's cgroup, 0: none or unknown */
	double mem_used_max_mib; /* its peak use seen, 0: unknown */
	double throttled_pct;    /* % of the run its CPU quota held it back, -1: unknown */
	double cpu_limit;        /* cores, 0: none */
	double psi_cpu, psi_mem, psi_io; /* mean % of the time stalled, -1: unknown */
	double disk_rlat, disk_rlat_p95, disk_wlat, disk_wlat_p95; /* ms, -1: unknown */
	size_t disk_rlat_n, disk_wlat_n; /* intervals in which reads / writes completed */
	double gpus_throttled;           /* mean GPUs held back by power or heat, -1: unknown */
};
void rt_findings(const struct rt_runstats *st, struct rt_findings *f);

/* Thresholds above which a finding is said and changes the recommendation. */
#define RT_THROTTLED_PCT 5.0
#define RT_MEM_STALL_PCT 10.0
#define RT_IO_STALL_PCT 20.0
#define RT_DISK_SLOW_MS 50.0         /* p95 latency of reads or writes */
#define RT_DISK_SLOW_MIN_INTERVALS 5 /* ... over at least this many intervals with I/O */
#define RT_GPU_THROTTLED 0.1         /* mean GPUs held back */
#define RT_GPU_HELD_PCT 10.0         /* of the run a GPU spent at its power cap, or slowed */

struct rt_recommendation {
	int from_system; /* no process columns: from the whole system's use */
	long cpu;        /* vCPUs */
	long cpu_p95;    /* what the p95 of cores would ask for (rounded up, >= 1) */
	long memory_mib;
	int memory_at_least; /* killed while growing: its true need was not seen */
	long gpu;
	long vram_mib;
	char why[640]; /* what raised it above the use measured ("" when nothing did) */
	char why_cpu[400], why_mem[400]; /* the same for the vCPUs, the memory */
	/* what the memory could not know ("" when nothing): a peak between
	 * samples before tracking began */
	char mem_note[200];
};
/* The §9 rules, then raised for what held the job back: OOM-killed ->
 * memory above its limit; throttled -> CPU above its quota; stalled on
 * memory -> more memory. */
void rt_recommend(const struct rt_runstats *st, struct rt_recommendation *r);
/* The job's peak memory in MiB, as the recommendation takes it: its
 * high-water mark between samples when known, else the largest PSS the
 * samples saw (the host's used memory for a run with no process). */
double rt_stats_mem_peak(const struct rt_runstats *st);
/* 128, 256, 512, 1024, 2048, then whole GiB, in MiB. */
long rt_round_memory(double mib);
/* rt_stats_allocation, and why in one clause ("" when unknown) */
enum rt_allocation rt_stats_allocation_why(const struct rt_runstats *st, char *why, size_t cap);
/* "of T GB" beside the disk space used (what df shows, blocks - free), and
 * the root reserve when it is large (neither used nor available) */
void rt_disk_space_note(const struct rt_runstats *st, char *buf, size_t cap);

#endif
