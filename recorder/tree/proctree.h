/*
 * proctree.h - exact CPU, memory and I/O accounting of a process tree.
 *
 * The tree's cumulative CPU is
 *   T = Σ over live members (utime + stime + cutime + cstime)
 *       + what departed members had when last seen (only when they left
 *         the tree: reaped by a process outside it)
 *       + the exact rusage of members the tracker reaped itself (wait4).
 * Σ(utime+stime+cutime+cstime) does not jump when a member reaps another
 * (the child's ticks move into the parent's cutime), a process first seen
 * now was born in this interval so all its ticks belong to it, and a
 * process is identified by (pid, starttime) so pid reuse is harmless.
 * I/O (read_bytes/write_bytes) folds into the reaper the same way and is
 * summed the same way. The walk follows /proc/<pid>/task/<tid>/children,
 * so its cost grows with the tree, not with the host.
 */
#ifndef RT_PROCTREE_H
#define RT_PROCTREE_H

#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "rt/record.h"

struct rt_proctree;

/*
 * Track the tree under root_pid (--pid), or, with root_pid = 0, every
 * descendant of this process (wrapper mode, with PR_SET_CHILD_SUBREAPER)
 * except the pids later passed to rt_proctree_exclude().
 */
int rt_proctree_open(struct rt_proctree **out, pid_t root_pid);
/*
 * Track every descendant of reaper (wrapper mode's guardian, a subreaper
 * that reaps the job and its orphans and reports each one's rusage through
 * rt_proctree_reaped) except this process and what it starts.
 */
int rt_proctree_open_under(struct rt_proctree **out, pid_t reaper);
/*
 * Track the processes fn lists (a cgroup's: --cgroup, the node mode),
 * whatever their parentage: fn(arg, out, cap) puts the members now into
 * out and returns their count (cap: there may be more, it is asked again
 * with more room) or a negative error (the group is gone). Every sample
 * asks: a process may join a group without a fork.
 */
typedef ssize_t (*rt_member_fn)(void *arg, pid_t *out, size_t cap);
int rt_proctree_open_members(struct rt_proctree **out, rt_member_fn fn, void *arg);
/* What fn said at the last sample: the member count, or its error. */
ssize_t rt_proctree_listed(const struct rt_proctree *t);
/*
 * A member the reaper reaped leaves /proc a moment before its report
 * arrives. After each walk, a sample calls fn(arg, -50): the reaper reaps
 * and reports what ended so far (members it reaped before the walk read
 * them, newcomers included) and fn waits up to 50 ms for all of it,
 * returning 1 when the reaper answered (every report sent before the
 * answer arrived). A member found gone before that call and not reported
 * by then was reaped by a member: its figures are in that one's. When a
 * sample still finds a member gone without its report, it calls fn(arg,
 * ms), which waits up to ms for reports, a few times at most (about 50
 * ms), so the tree's CPU never dips for one sample.
 */
void rt_proctree_on_unreported(struct rt_proctree *t, int (*fn)(void *arg, int ms), void *arg);
void rt_proctree_close(struct rt_proctree *t);
void rt_proctree_exclude(struct rt_proctree *t, pid_t pid);

/* The tracker (or the reaper) reaped pid (a member) with this rusage:
 * count it exactly. pid 0: several processes, summed. */
void rt_proctree_reaped(struct rt_proctree *t, pid_t pid, const struct rusage *ru);
/* The same for a report of count members (pid 0: several the reaper summed
 * when its socket was full). */
void rt_proctree_reaped_n(struct rt_proctree *t, pid_t pid, uint32_t count,
                          const struct rusage *ru);

/* The host's fork counter (/proc/stat "processes") read just before the
 * next rt_proctree_sample(): while it stands still, no process was born
 * and the walk reads each member's stat alone. Without it, every walk is
 * a full one. */
void rt_proctree_host_forks(struct rt_proctree *t, uint64_t forks);

/* What the next sample reads besides the basics: each member's status
 * (context switches, VmHWM) and its fd count (the sampler asks every 5 s).
 * Values not read are carried. */
void rt_proctree_cadence(struct rt_proctree *t, int status, int fds);
/* No member's file kept open from now on: each opened when read (the
 * node past its descriptor budget); those kept are closed. The figures
 * are the same; a read costs an open and a close more. */
void rt_proctree_lean(struct rt_proctree *t);

/*
 * The sample about to be taken is at now_ns (a steady clock) and the host
 * has ncpu CPUs: no sample shows more CPU than ncpu times the time since
 * the last (rt_proctree_sample says how). Not called: no bound.
 */
void rt_proctree_bound(struct rt_proctree *t, unsigned ncpu, uint64_t now_ns);

/* Walk the tree now and fill the process section of a record (with a
 * read buffer of the tree's own, made at its first sample). */
void rt_proctree_sample(struct rt_proctree *t, struct rt_rec_process *out);
/* The same with the caller's buffer of cap bytes, at least 64 KiB, for the
 * reads of this sample alone (a node's worker lends its one to each job). */
void rt_proctree_sample_in(struct rt_proctree *t, struct rt_rec_process *out, char *buf,
                           size_t cap);

/* Whether samples read each member's schedstat (the wait for a CPU): on,
 * unless rt-bench turns it off to tell its cost apart. */
void rt_proctree_read_delay(struct rt_proctree *t, int on);

/* smaps_rollup reads so far (what rt-bench tells apart). */
/* The largest high-water mark (KiB) a member there before tracking had
 * reached before it, above what it held then: left out of the tree's
 * peak (peak_rss_kb counts only marks reached while tracked); 0: none. */
uint64_t rt_proctree_hwm_before_kb(const struct rt_proctree *t);
uint64_t rt_proctree_pss_reads(const struct rt_proctree *t);

/* Live members at the last rt_proctree_sample(), at most cap. */
size_t rt_proctree_members(struct rt_proctree *t, pid_t *out, size_t cap);

/* Whether pid was a live member at the last rt_proctree_sample(). */
int rt_proctree_has(struct rt_proctree *t, pid_t pid);

#endif
