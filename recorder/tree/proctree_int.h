/*
 * proctree_int.h - the process tree's own: its table of members and the
 * functions its files share (proctree.c: the table, the walk and the
 * sample; proctree_read.c: reading a member; proctree_reap.c: members
 * that leave). Nothing outside recorder/tree/ includes it.
 */
#ifndef RT_PROCTREE_INT_H
#define RT_PROCTREE_INT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "procfs.h"
#include "proctree.h"

/* How long a sample waits for the reaper's reports of what it reaped. */
#define SYNC_WAIT_MS 50

struct pt_proc {
	int32_t pid; /* 0: empty slot */
	int32_t ppid;
	uint64_t start;
	uint64_t ut, st;         /* utime+cutime, stime+cstime (µs, see set_cpu) */
	uint64_t own_us;         /* its own user + system, µs: never lower */
	uint64_t mf;             /* majflt+cmajflt */
	uint64_t vcs, ivcs;      /* context switches at the last status read */
	uint32_t nfds;           /* at the last count */
	uint8_t have_status;     /* vcs/ivcs read at least once */
	uint8_t born_late;       /* first seen after the first walk: count from zero */
	uint8_t have_hwm;        /* hwm_base set (at its first status read) */
	uint64_t hwm_base;       /* VmHWM when first read, of a member there before
	                          * tracking (0 for one born while tracked): only a
	                          * mark above it is a peak of the job's */
	uint64_t rd, wr;         /* read_bytes, write_bytes */
	uint64_t seen;           /* generation of the last sighting */
	uint64_t pss_kb, rss_kb; /* at the last smaps_rollup read */
	uint64_t rss_pages, flt; /* at the last sighting: a move re-reads PSS */
	uint64_t first_gen;      /* generation of the first sighting */
	uint8_t parents_vm;      /* runs in its parent's address space (vfork) */
	uint64_t io_for;         /* ut+st when io was last read */
	int fd_stat, fd_io, fd_smaps, fd_children, fd_sched; /* kept open, -1: none */
	uint64_t delay; /* ns its threads waited for a CPU (schedstat), never lower */
	/* a one-thread member's schedstat as last read (all three fields):
	 * the same again means it has not run since, nor waited to */
	uint64_t sched_run, sched_wait, sched_slices;
	uint32_t threads;
	uint8_t gone;     /* departed, kept until the departure is settled */
	uint8_t left_in;  /* departed in this refresh round (refresh_reapers) */
	uint8_t reported; /* its reaper's report arrived (rt_proctree_reaped) */
	uint8_t exiting;  /* a zombie or on its way out when last read */
	/* found gone before a sync the reaper answered: reaped by a member
	 * when no report of it came with the answer */
	uint8_t synced;
};

/* A departed member whose report the reaper has not sent yet: its last
 * figures stand in for it until the report comes, so the tree's CPU does
 * not dip (a dip under a busy host is lost to the bound). */
struct pt_pending {
	int32_t pid;
	uint64_t ut, st, rd, wr, mf;
};

struct rt_proctree {
	pid_t root; /* 0: descendants of self */
	pid_t self; /* this process, or the reaper (rt_proctree_open_under) */
	int (*await_reports)(void *arg, int ms);
	void *await_arg;
	pid_t exclude[8];
	int nexclude;
	struct pt_proc *tab;
	size_t cap, used;
	uint64_t gen;
	uint64_t dep_ut, dep_st, dep_rd, dep_wr, dep_mf; /* departed, last seen */
	uint64_t dep_delay; /* every departed member's wait: no reaper folds it in */
	int have_delay;     /* schedstat read (CONFIG_SCHED_INFO) */
	int no_delay;       /* rt-bench: leave schedstat unread */
	int lean;           /* no member's file kept open (rt_proctree_lean) */
	/* a one-thread member's schedstat the quick walk read before its stat
	 * (read_delay takes it instead of reading again) */
	int pre_sched;
	uint64_t pre_run, pre_wait, pre_slices;
	uint64_t reaped_ut_us, reaped_st_us, reaped_rd, reaped_wr, reaped_mf;
	/* departed members the reaper will report (a FIFO: reports come in
	 * the order it reaps them), and their figures' sum */
	struct pt_pending *pend;
	size_t pend_head, pend_n, pend_cap;
	uint64_t pend_ut, pend_st, pend_rd, pend_wr, pend_mf;
	/* status and fd values: read when asked (rt_proctree_cadence) */
	int want_status, want_fds, have_status, have_fds;
	uint64_t vcs, ivcs, peak_hwm_kb;
	/* the largest VmHWM above its RSS of a member there before tracking:
	 * a peak of before, left out (0: none) */
	uint64_t hwm_before_kb;
	/* this sample: a newcomer or a member whose pages moved; a departure;
	 * a member that was exiting while the PSS were read (read them again) */
	int moved, departed, recheck;
	uint64_t pss_reads; /* smaps_rollup reads so far (rt-bench) */
	uint32_t hz;
	uint64_t page_kb;
	/* the host's fork counter now, and at the last full walk */
	uint64_t forks, walked_forks;
	int forks_known, walked_known;
	pid_t *queue; /* the last full walk's pids, parents before children */
	size_t qcap, qlen;
	/* the CPU bound: the host's CPUs, the last sample's time and the
	 * cumulative CPU it gave (µs; see rt_proctree_bound) */
	unsigned ncpu;
	uint64_t now_ns, last_ns, shown_ut_us, shown_st_us;
	int shown;
	/* kernels without CONFIG_PROC_CHILDREN: children come from one scan
	 * of every /proc/<pid>/stat per sample (pid, ppid pairs) */
	int scan_mode;
	pid_t (*pairs)[2];
	size_t npairs, pcap;
	/* members listed (rt_proctree_open_members): fn's answer, its room */
	rt_member_fn list;
	void *list_arg;
	pid_t *listed;
	size_t lcap;
	ssize_t nlisted;
	/* the reads' buffer, PT_BUF bytes or more (a children file of
	 * thousands of pids fits): the caller's for a sample (a node's
	 * worker's), else the tree's own, made when first needed */
	char *buf;
	size_t bufcap;
	char *own_buf;
};

#define PT_BUF 65536

struct walk_sum {
	uint64_t ut, st, rd, wr, rss_kb, pss_kb, mf, threads, fds, delay;
	uint32_t members;
};

struct pt_proc *pt_find(struct rt_proctree *t, pid_t pid);
int pt_excluded(const struct rt_proctree *t, pid_t pid);
size_t pt_unreported(const struct rt_proctree *t);
ssize_t pt_read_proc(struct rt_proctree *t, const char *rel);
ssize_t pt_read_kept(struct rt_proctree *t, int *fd, pid_t pid, const char *file);
void pt_push(struct rt_proctree *t, size_t *n, pid_t pid);
void pt_scan_all(struct rt_proctree *t);
void pt_children(struct rt_proctree *t, pid_t pid, uint32_t threads, size_t *n, int *keep);
void pt_depart(struct rt_proctree *t, const struct pt_proc *e);
void pt_count_hwm(struct rt_proctree *t, struct pt_proc *e, uint64_t hwm);
void pt_read_status(struct rt_proctree *t, struct pt_proc *e);
void pt_count_fds(struct rt_proctree *t, struct pt_proc *e);
int pt_parse_sched3(const char *buf, ssize_t len, uint64_t *run, uint64_t *wait, uint64_t *slices);
void pt_read_delay(struct rt_proctree *t, struct pt_proc *e, int first, uint64_t *run);
void pt_set_cpu(struct rt_proctree *t, struct pt_proc *e, const struct rt_pid_stat *ps,
                uint64_t run_ns);
void pt_account(struct rt_proctree *t, struct pt_proc *e, const struct rt_pid_stat *ps,
                struct walk_sum *w);
void pt_push_listed(struct rt_proctree *t, size_t *n);
void pt_read_pss(struct rt_proctree *t, struct pt_proc *e);
void pt_drop_member(struct rt_proctree *t, struct pt_proc *e, struct walk_sum *w);
int pt_refresh_reapers(struct rt_proctree *t, struct walk_sum *w);
void pt_sync_reports(struct rt_proctree *t);
void pt_rescue_missed(struct rt_proctree *t, struct walk_sum *w);
int pt_exiting_now(struct rt_proctree *t, struct pt_proc *e);

#endif
