/*
 * collect.h - the system collectors and the inventory they maintain.
 *
 * The recorder loops over a table of sources (collect.c): each is one file
 * (cpu.c, memory.c, load.c, disk.c, net.c, gpu.c) with up to five phases:
 * open its files, read them (saying whether its device set changed),
 * add its devices to a new inventory, fill its part of the record, close.
 * Files are kept open and pread each sample. A sample never allocates; an
 * inventory rebuild (devices changed) may. A source that fails leaves its
 * record flag clear; the others go on.
 *
 * Adding a metric: a value appended to a record section (record.h, pack.c),
 * the source that reads it, one row in the field table (fields.c).
 */
#ifndef RT_COLLECT_H
#define RT_COLLECT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "gpu_amd.h"
#include "gpu_nvml.h"
#include "procfs.h"
#include "rt/inventory.h"
#include "rt/record.h"

#define RT_MAX_DISKSTATS 1024
#define RT_MAX_NETDEVS 256

struct rt_source;
#define RT_MAX_SOURCES 12

/* Which sources a collector reads: all of them (a run's own sampler), the
 * host's alone (the node reads them once a tick), or a job's cgroup alone
 * (each job's part, over a copy of the host's record). */
enum rt_collector_part { RT_PART_ALL, RT_PART_HOST, RT_PART_JOB };

struct rt_collector {
	enum rt_collector_part part;
	/* the first inventory's generation is gen_floor + 1 (a node going on
	 * with runs another node numbered their inventories in: 0) */
	uint32_t gen_floor;
	struct rt_collector *host; /* a job's part: the node's host collector */
	/* this sample refreshes what rarely changes (operstate, mounts, the
	 * process count, cgroup limits): the first, then once a second */
	int slow, force_slow;
	uint64_t wall_ns; /* the sample's time (CLOCK_REALTIME): GPU samples up to it are its */
	uint64_t slow_next_ns;
	pid_t job_pid; /* the tracked job (0: none yet): whose cgroup to read */
	/* a job's group named (--cgroup): read it, whoever is in it */
	const struct rt_cgroup_paths *cg_fixed;
	/* v1: the OOM kills counted in the groups below that group (its own
	 * counter holds only its own tasks'), added to its own; set by the
	 * job's run (cgparts.c) */
	uint64_t cg_oom_below;
	/* the sources it reads (rt_collector_open's table), and the state each
	 * keeps to itself: its `self`, by source */
	const struct rt_source *const *src;
	unsigned nsrc;
	void *own[RT_MAX_SOURCES];

	char *buf; /* read buffer shared by the sources, grows when a file fills it */
	size_t bufcap;
	/* a job's part read by a worker thread: buf is the worker's, never the
	 * host's (set by the worker, which owns it) */
	int own_buf;
	struct rt_inventory *inv;     /* current */
	struct rt_inventory *scratch; /* rebuild target */
};

/* One source of the table. Any phase may be NULL. `self` is the source's
 * slot in c->own, for state it keeps to itself. */
struct rt_source {
	const char *name;
	int (*open)(struct rt_collector *c, void **self); /* 0 or -ENOMEM */
	void (*read)(struct rt_collector *c, void *self, int *changed);
	void (*inventory)(struct rt_collector *c, void *self, struct rt_inventory *inv);
	void (*fill)(struct rt_collector *c, void *self, struct rt_record *rec);
	void (*close)(struct rt_collector *c, void *self);
	/* the job's own group's source: a job's part reads it alone, a
	 * host's part leaves it out (cgroup.c's) */
	int job_part;
};

/* The host's sources in this room (the GPUs' is gpu/'s: gpu.h). */
extern const struct rt_source rt_source_cpu, rt_source_memory, rt_source_load, rt_source_pressure,
    rt_source_vmstat, rt_source_cgroup, rt_source_disk, rt_source_net;

/* The sources a collector reads, in the order they read and fill: the
 * table is its caller's (the recorder's: rt_sampler_sources, sampler.h),
 * so that this room names no source of a room above it. */
struct rt_source_table {
	const struct rt_source *const *src;
	unsigned n; /* at most RT_MAX_SOURCES */
};

/* Open t's sources under the configured roots. Never fails for a missing
 * source (that metric is then absent): 0, -ENOMEM, or -EINVAL (more than
 * RT_MAX_SOURCES sources). */
int rt_collector_open(struct rt_collector *c, const struct rt_source_table *t);
/* The state source src keeps (its self), NULL before open. */
void *rt_collector_own(struct rt_collector *c, const struct rt_source *src);
/* What the sampler asks of the cpu source: the host's forks so far (0,
 * or -1 when /proc/stat did not say). */
int rt_cpu_host_forks(struct rt_collector *c, uint64_t *forks);
/* The group's files kept open no more: each opened when read (the node
 * past its descriptor budget). Their values are the same. */
void rt_cgroup_lean(struct rt_collector *c);
/* A named job group's user and system CPU time so far (µs; cgroup.c):
 * 0, or -1 when it was never read. */
int rt_cgroup_job_cpu(struct rt_collector *c, uint64_t *user_us, uint64_t *sys_us);
/* Read that now, between samples (a member exited: the group may be
 * removed before the next sample can read it). */
void rt_cgroup_job_cpu_now(struct rt_collector *c);
void rt_collector_close(struct rt_collector *c);

/* A job's part of the node's samples (c->part RT_PART_JOB): its cgroup's
 * state, the host collector's read buffer borrowed. 0 or -ENOMEM. */
int rt_collector_open_job(struct rt_collector *job, struct rt_collector *host);
void rt_collector_close_job(struct rt_collector *job);
/* The job's sample: the host's sealed record (one sample of a collector
 * with part RT_PART_HOST, taken this tick) copied into buf, then the job's
 * cgroup read into it, as one full sample of a collector with the job's
 * cg_fixed would have it. The caller sets seq and times, then seals it.
 * 0, -ENOSPC, or an RT_E_* of the host's record. */
int rt_collector_sample_job(struct rt_collector *job, const struct rt_record *hostrec, void *buf,
                            size_t cap, struct rt_record *rec);
/* rt_collector_sample_job in two steps: the host's record copied (what
 * the job takes of the host's collector: its devices, its pace, its read
 * buffer unless own_buf), then the job's cgroup read into the copy, which
 * touches only the job's own state (a worker thread's, while the host
 * collector samples the next tick). Each as rt_collector_sample_job. */
int rt_collector_job_copy(struct rt_collector *job, const struct rt_record *hostrec, void *buf,
                          size_t cap, struct rt_record *rec);
void rt_collector_job_read(struct rt_collector *job, struct rt_record *rec);

/*
 * Take one sample into buf (8-byte aligned, cap bytes): reads every source,
 * rebuilds the inventory when the device set changed (*inv_changed = 1,
 * c->inv->gen incremented), lays out and fills the record. The caller sets
 * seq and times, then seals it. Returns 0 or -ENOSPC.
 */
int rt_collector_sample(struct rt_collector *c, void *buf, size_t cap, struct rt_record *rec,
                        int *inv_changed);

#define RT_SLOW_PERIOD_NS 1000000000ull
#define RT_SLOW_SLACK_NS 100000000ull

/* For the sources: read a whole file into c->buf (a short read is its
 * end, see rt_pread_all); _to_eof reads until end of file. */
int rt_read_fd(struct rt_collector *c, int fd, size_t *len);
int rt_read_fd_to_eof(struct rt_collector *c, int fd, size_t *len);
/* Close *fd if open and set it to -1. */
void rt_close_fd(int *fd);

/* Host facts for the run metadata (not per sample). */
struct rt_host_info {
	char hostname[256];
	char cpu_model[256];
	unsigned vcpus;
	uint64_t memory_mib;
	char host_id[128]; /* DMI board asset tag, else /etc/machine-id */
	char ip[64];       /* first non-loopback IPv4 */
	double storage_gb; /* Σ whole-disk sizes, 1e9 bytes */
};
void rt_host_info(struct rt_host_info *h);

#endif
