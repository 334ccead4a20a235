/*
 * bench.h - what rt-bench's benchmarks share: the run's context, the
 * table of benchmarks (benches.def), the floor (floor.c) and the helpers
 * that time and inspect processes (util.c, procs.c).
 *
 * One file per benchmark: it defines the function its row in benches.def
 * names, and keeps everything else static. Adding a benchmark is one file
 * and one row (and the file in CMakeLists.txt's rt-bench sources).
 */
#ifndef RT_BENCH_H
#define RT_BENCH_H

#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "export.h"
#include "rt/fields.h"
#include "rt/runmeta.h"
#include "rt/store.h"
#include "rt/sysroot.h"
#include "collect.h"
#include "proctree.h"
#include "sampler.h"

/* What every benchmark is given. */
struct bench_ctx {
	int quick;             /* --quick: fewer samples, shorter runs */
	int n;                 /* samples per in-process measurement */
	int secs;              /* a mode's SECONDS argument, else its default */
	const char *dir;       /* where rt-bench is, with its siblings */
	const char *rec_bin;   /* dir/rt-recorder */
	const char *exp_bin;   /* dir/rt-export */
	const char *fake_nvml; /* dir/libfake-nvml.so */
	const char *tmp;       /* the run's scratch directory (sections only) */
};

/* The table: SECTION rows run in `rt-bench` (all, in this order) and
 * `rt-bench NAME...`; MODE rows run alone, as `rt-bench WORD [SECONDS]`. */
#define SECTION(name, fn, what) int fn(const struct bench_ctx *c);
#define MODE(word, fn, secs, least, what) int fn(const struct bench_ctx *c);
#include "benches.def"
#undef SECTION
#undef MODE

/* util.c: clocks and running a command */
double cpu_now(void);  /* this process's CPU seconds */
double wall_now(void); /* monotonic seconds */
/* Run a command with its output discarded: its CPU seconds (user+sys),
 * wall seconds and, when maxrss is not NULL, its peak RSS (KiB). */
int run_cmd_rss(char *const argv[], double *cpu, double *wall, long *maxrss);
int run_cmd(char *const argv[], double *cpu, double *wall);
/* rt-recorder --quiet --pid (this process) on the fake clock into store */
int record_fake_clock(const char *rec_bin, const char *store, const char *interval,
                      const char *count, const char *clock, double *wall);

/* procs.c: another process, from /proc */
long status_kb(pid_t pid, const char *key); /* a /proc/PID/status field, KiB */
long long sched_ns(pid_t pid);              /* CPU ns it has run, -1 if gone */
long smaps_kb(pid_t pid, const char *key);  /* a smaps_rollup field, KiB */
pid_t spawn_quiet(char *const argv[]);      /* argv with stdio on /dev/null */
pid_t spawn_quiet_limited(char *const argv[], unsigned long nofile); /* under RLIMIT_NOFILE */
/* /proc/PID/FILE into buf, NUL-terminated: its length, <= 0 when gone. */
ssize_t proc_text(pid_t pid, const char *file, char *buf, size_t cap);
pid_t first_child(pid_t pid); /* its first child, or -1 */
/* A child in a group of its own, asleep after setup(arg): its pid, -1. */
pid_t fork_ready(void (*setup)(void *arg), void *arg);

/* cgroups.c: job groups in the machine's real hierarchies (root) */
/* fs/cgroup<mount><top> and its groups g0..g<n-1> in every hierarchy but
 * cpuset: 0 or -1 (errno) */
int bench_cg_make(const char *top, int n);
/* this process into top/g<i> (i < 0: top) everywhere it was made */
void bench_cg_join(const char *top, int i);
/* the members killed and reaped, then the groups removed */
void bench_cg_remove(const char *top, int n, pid_t *members, int nmembers);
/* floor.c: the floor every per-sample figure is printed beside */
extern double pace;           /* 0: back to back; else seconds between samples */
extern double floor_calls;    /* the floor's syscalls per sample */
extern pid_t floor_of;        /* whose open files it reads (0: the collector's,
                            * -1: the 5 the reference's system metrics read) */
extern int floor_nfiles;      /* how many it read */
extern char floor_list[4096]; /* and which */
void pace_wait(double *deadline);
double bench_pread(int n);   /* the floor, n samples: CPU us each */
double bench_collect(int n); /* rt's collectors, n samples: CPU us each */
/* the recorder's step into a store at store_dir, n samples: CPU us each */
double bench_sampler(const char *store_dir, int n, uint64_t *run, size_t *rec_size);
/* The in-process measurements the steps, storage and replay sections
 * share, made once: the floor, the collectors and the recorder step
 * (CPU us per sample), and the store the step wrote. */
struct bench_sampled {
	double floor_us, collect_us, step_us;
	char store[4200];
	uint64_t run;
	size_t rec_size;
	int nstore;
};
const struct bench_sampled *bench_sampled(const struct bench_ctx *c);

/* tree.c, disk.c: what delay.c and peers.c borrow */
void kill_tree(pid_t root);
void host_forks(struct rt_proctree *t);
/* CPU seconds of reps samples of tree t, the last into *r. */
double sample_cpu(struct rt_proctree *t, struct rt_rec_process *r, int reps);
long long dev_write_sectors(const char *dev);
int make_loop(const char *tmp, const char *name, char *mnt, size_t mntcap, char dev[64]);
void drop_loop(const char *tmp, const char *name);

#endif
