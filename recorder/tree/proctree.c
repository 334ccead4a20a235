/*
 * proctree.c - process-tree accounting (see proctree.h for the model).
 *
 * The table is an open-addressing hash keyed by pid; an entry remembers the
 * process's identity (starttime), its parent at the last sighting and its
 * last totals, which is all a departure needs.
 *
 * Memory. The tree's PSS is the sum of its members' smaps_rollup "Pss:",
 * read in the same sample for every member, newcomers included: a forked
 * child's RSS is all of its parent's shared pages, so anything cheaper
 * (RSS for a newcomer) counts a copy-on-write pool's memory once per
 * worker. A member's PSS moves when its own pages do (its RSS or its
 * page-fault count moved: a copy-on-write break is a fault that leaves the
 * RSS alone) and when a process it shares pages with maps or unmaps them
 * (a member born, gone, faulting or freeing; a process outside the tree).
 * So every member's smaps_rollup is read again whenever anything in the
 * tree moved (a newcomer, a departure, any member's RSS or faults) and at
 * every status cadence (what outside processes did); a tree where nothing
 * moved carries its sum. Reading smaps_rollup walks the page tables, the
 * dearest read of all (rt-bench tree measures it beside a bare pread).
 * A member that runs in its parent's address space (a vfork child before
 * its exec: posix_spawn, a shell's fast path) has the same smaps_rollup
 * as its parent: kcmp tells, and it counts once, in the parent.
 *
 * Cost. A process seen for the first time is read by path (stat, io,
 * smaps_rollup, status, its fds and children); from its second sample on
 * it is read through descriptors kept from then on, so a process that
 * lives one sample never holds any. When the host's fork counter (/proc/stat "processes",
 * read just before by the CPU source) has not moved since the last full
 * walk, no process anywhere was born: the members are the last walk's,
 * and a quick walk reads each one's stat alone. A member found dead (or
 * its pid reused) sends that sample to the full walk, since its children
 * may have moved to a subreaper.
 */
#define _GNU_SOURCE
#include "proctree.h"
#include "proctree_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "procfs.h"
#include "rt/sysroot.h"

struct pt_proc *pt_find(struct rt_proctree *t, pid_t pid)
{
	size_t i = ((size_t)pid * 2654435761u) & (t->cap - 1);
	while (t->tab[i].pid) {
		if (t->tab[i].pid == pid)
			return &t->tab[i];
		i = (i + 1) & (t->cap - 1);
	}
	return NULL;
}

static int grow(struct rt_proctree *t);
static void close_fds(struct pt_proc *e);

static struct pt_proc *insert(struct rt_proctree *t, pid_t pid)
{
	if ((t->used + 1) * 2 > t->cap && grow(t))
		return NULL;
	size_t i = ((size_t)pid * 2654435761u) & (t->cap - 1);
	while (t->tab[i].pid)
		i = (i + 1) & (t->cap - 1);
	memset(&t->tab[i], 0, sizeof(t->tab[i]));
	t->tab[i].pid = pid;
	t->tab[i].fd_stat = t->tab[i].fd_io = t->tab[i].fd_smaps = t->tab[i].fd_children =
	    t->tab[i].fd_sched = -1;
	t->used++;
	return &t->tab[i];
}

static int grow(struct rt_proctree *t)
{
	size_t ocap = t->cap;
	struct pt_proc *old = t->tab;
	struct pt_proc *n = calloc(ocap * 2, sizeof(*n));
	if (!n)
		return -1;
	t->tab = n;
	t->cap = ocap * 2;
	t->used = 0;
	for (size_t i = 0; i < ocap; i++)
		if (old[i].pid) {
			struct pt_proc *p = insert(t, old[i].pid);
			*p = old[i];
		}
	free(old);
	return 0;
}

static void close_fds(struct pt_proc *e)
{
	int *fds[5] = {&e->fd_stat, &e->fd_io, &e->fd_smaps, &e->fd_children, &e->fd_sched};
	for (int k = 0; k < 5; k++) {
		if (*fds[k] >= 0)
			close(*fds[k]);
		*fds[k] = -1;
	}
}

/* Remove an entry, re-inserting the rest of its probe cluster. */
static void erase(struct rt_proctree *t, struct pt_proc *e)
{
	close_fds(e);
	size_t i = (size_t)(e - t->tab);
	t->tab[i].pid = 0;
	t->used--;
	for (size_t j = (i + 1) & (t->cap - 1); t->tab[j].pid; j = (j + 1) & (t->cap - 1)) {
		struct pt_proc tmp = t->tab[j];
		t->tab[j].pid = 0;
		t->used--;
		struct pt_proc *p = insert(t, tmp.pid);
		*p = tmp;
	}
}

/* A tree of room for cap/2 members before it grows (cap a power of 2). */
static int tree_new(struct rt_proctree **out, pid_t root_pid, size_t cap)
{
	struct rt_proctree *t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->root = root_pid;
	t->self = getpid();
	t->cap = cap;
	t->tab = calloc(t->cap, sizeof(*t->tab));
	t->qcap = 256;
	t->queue = malloc(t->qcap * sizeof(*t->queue));
	long hz = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE);
	t->hz = hz > 0 ? (uint32_t)hz : 100;
	t->page_kb = page >= 1024 ? (uint64_t)page / 1024 : 4;
	/* each tracked process keeps a few /proc files open: allow many */
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max > 65536 ? 65536 : rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	if (!t->tab || !t->queue) {
		rt_proctree_close(t);
		return -ENOMEM;
	}
	*out = t;
	return 0;
}

int rt_proctree_open(struct rt_proctree **out, pid_t root_pid)
{
	return tree_new(out, root_pid, 64);
}

int rt_proctree_open_under(struct rt_proctree **out, pid_t reaper)
{
	int rc = rt_proctree_open(out, 0);
	if (rc == 0) {
		(*out)->self = reaper;
		rt_proctree_exclude(*out, getpid());
	}
	return rc;
}

int rt_proctree_open_members(struct rt_proctree **out, rt_member_fn fn, void *arg)
{
	/* a node's job: most hold a few processes (its table grows with it) */
	int rc = tree_new(out, 0, 8);
	if (rc == 0) {
		(*out)->list = fn;
		(*out)->list_arg = arg;
		rt_proctree_exclude(*out, getpid());
	}
	return rc;
}

ssize_t rt_proctree_listed(const struct rt_proctree *t)
{
	return t ? t->nlisted : 0;
}

void rt_proctree_on_unreported(struct rt_proctree *t, int (*fn)(void *arg, int ms), void *arg)
{
	t->await_reports = fn;
	t->await_arg = arg;
}

void rt_proctree_close(struct rt_proctree *t)
{
	if (!t)
		return;
	for (size_t i = 0; t->tab && i < t->cap; i++)
		if (t->tab[i].pid)
			close_fds(&t->tab[i]);
	free(t->tab);
	free(t->queue);
	free(t->pairs);
	free(t->pend);
	free(t->listed);
	free(t->own_buf);
	free(t);
}

void rt_proctree_exclude(struct rt_proctree *t, pid_t pid)
{
	if (t->nexclude < 8)
		t->exclude[t->nexclude++] = pid;
}

int pt_excluded(const struct rt_proctree *t, pid_t pid)
{
	for (int i = 0; i < t->nexclude; i++)
		if (t->exclude[i] == pid)
			return 1;
	return 0;
}

void rt_proctree_cadence(struct rt_proctree *t, int status, int fds)
{
	t->want_status = status;
	t->want_fds = fds;
}

void rt_proctree_lean(struct rt_proctree *t)
{
	t->lean = 1;
	for (size_t i = 0; i < t->cap; i++)
		if (t->tab[i].pid)
			close_fds(&t->tab[i]);
}

void rt_proctree_host_forks(struct rt_proctree *t, uint64_t forks)
{
	t->forks = forks;
	t->forks_known = 1;
}

/*
 * Member e's CPU (µs) from its stat ps. The kernel shows a process's own
 * utime and stime in whole ticks (10 ms), each cut down: a thousand members
 * that ran 9 ms each read as nothing, 9 s short. Its threads' time on a CPU
 * (schedstat, ns; run_ns, 0 when unread) is exact for the live threads, so
 * its own time is the larger of the two, never lower than the last figure,
 * split as the ticks split it (all user when both read 0, as the kernel
 * does). The children it reaped (cutime, cstime) are added as
 * ticks: one cut per reaper, not per child.
 */
void pt_set_cpu(struct rt_proctree *t, struct pt_proc *e, const struct rt_pid_stat *ps,
                uint64_t run_ns)
{
	uint64_t ou = ps->own_ut * 1000000u / t->hz, os = ps->own_st * 1000000u / t->hz;
	uint64_t own = ou + os;
	if (run_ns / 1000u > own)
		own = run_ns / 1000u;
	if (e->own_us > own)
		own = e->own_us;
	e->own_us = own;
	uint64_t u = ou + os ? (uint64_t)((double)own * (double)ou / (double)(ou + os)) : own;
	if (u > own)
		u = own;
	e->ut = u + (ps->ut - ps->own_ut) * 1000000u / t->hz;
	e->st = own - u + (ps->st - ps->own_st) * 1000000u / t->hz;
}

/* Member e's figures into this sample's sums. */
static void add_member(struct walk_sum *w, const struct pt_proc *e)
{
	w->delay += e->delay;
	w->ut += e->ut;
	w->st += e->st;
	w->mf += e->mf;
	w->threads += e->threads;
	w->fds += e->nfds;
	w->rd += e->rd;
	w->wr += e->wr;
	w->members++;
}

/* Count live member e, whose stat was just read into ps. */
void pt_account(struct rt_proctree *t, struct pt_proc *e, const struct rt_pid_stat *ps,
                struct walk_sum *w)
{
	int first = e->seen == 0;
	e->start = ps->start;
	e->ppid = ps->ppid;
	e->exiting = (uint8_t)ps->exiting;
	e->mf = ps->mf;
	e->seen = t->gen;
	e->threads = ps->threads;
	uint64_t run_ns;
	pt_read_delay(t, e, first, &run_ns);
	pt_set_cpu(t, e, ps, run_ns);
	if (first) {
		e->born_late = t->gen > 1;
		e->first_gen = t->gen;
	}
	if (first || ps->rss_pages != e->rss_pages || ps->flt != e->flt)
		t->moved = 1;
	e->rss_pages = ps->rss_pages;
	e->flt = ps->flt;
	/* a newcomer's status and fds at once: a member that lives less than
	 * the cadence (or a job shorter than it) is still seen */
	if (t->want_status || first)
		pt_read_status(t, e);
	if (t->want_fds || first)
		pt_count_fds(t, e);
	/* VmHWM >= RSS: what a member holds now is a floor of the peak */
	if (ps->rss_pages * t->page_kb > t->peak_hwm_kb)
		t->peak_hwm_kb = ps->rss_pages * t->page_kb;
	/* I/O needs CPU: re-read it when the process ran (what it did
	 * meanwhile is cumulative, so nothing is lost, only seen later) */
	if (first || e->ut + e->st != e->io_for) {
		ssize_t len = pt_read_kept(t, first ? NULL : &e->fd_io, e->pid, "io");
		if (len > 0) { /* other users' processes: not readable, 0 */
			uint64_t v;
			if (rt_parse_field_u64(t->buf, (size_t)len, "read_bytes:", &v) == 0)
				e->rd = v;
			if (rt_parse_field_u64(t->buf, (size_t)len, "write_bytes:", &v) == 0)
				e->wr = v;
		}
		e->io_for = e->ut + e->st;
	}
	add_member(w, e);
}

/*
 * Count live member e as it was: it has one thread and its schedstat (time
 * on a CPU, time waiting for one, timeslices) has not moved since its last
 * sample, so it has not run: its stat (CPU, faults, I/O, parent, state)
 * cannot have changed either, and is not read. What another process can
 * change without it running is read as before: its status and fds at
 * their cadence, every PSS when another member moved, RSS lost to reclaim
 * at the status cadence's PSS re-read. A process killed since reads as
 * gone (a kept /proc descriptor of a dead process reads nothing).
 */
static void account_still(struct rt_proctree *t, struct pt_proc *e, struct walk_sum *w)
{
	e->seen = t->gen;
	t->have_delay = 1;
	if (t->want_status)
		pt_read_status(t, e);
	if (t->want_fds)
		pt_count_fds(t, e);
	add_member(w, e);
}

/* A one-thread member that has not run since its last sample: 1 (counted
 * as it was); else 0, with its schedstat left for read_delay. */
static int quick_still(struct rt_proctree *t, struct pt_proc *e, struct walk_sum *w)
{
	uint64_t run, wait, slices;
	t->pre_sched = 0;
	if (e->threads > 1 || t->no_delay || e->fd_sched < 0)
		return 0;
	ssize_t len = rt_pread_all(e->fd_sched, t->buf, t->bufcap);
	if (pt_parse_sched3(t->buf, len, &run, &wait, &slices))
		return 0;
	if (e->sched_slices && run == e->sched_run && wait == e->sched_wait &&
	    slices == e->sched_slices) {
		account_still(t, e, w);
		return 1;
	}
	t->pre_sched = 1;
	t->pre_run = run;
	t->pre_wait = wait;
	t->pre_slices = slices;
	return 0;
}

/* The last walk's members, each one's stat alone (no process was born
 * since). -1 when one is gone or its pid was reused: walk in full. */
static int quick_walk(struct rt_proctree *t, struct walk_sum *w)
{
	uint64_t prev = t->gen - 1;
	/* parents before children, as the full walk went: a member read
	 * before its parent could die and be reaped in between, and count
	 * twice (live, and in the parent's cutime) */
	for (size_t i = 0; i < t->qlen; i++) {
		struct pt_proc *e = pt_find(t, t->queue[i]);
		if (!e || e->seen != prev || e->gone)
			continue;
		if (quick_still(t, e, w))
			continue;
		char rel[64];
		if (e->fd_stat < 0) /* (a path only for a file opened now) */
			snprintf(rel, sizeof(rel), "%d/stat", e->pid);
		if (e->fd_stat < 0 && !t->lean) { /* its second sample: keep a descriptor */
			int f = rt_open(RT_PROC, rel);
			if (f < 0)
				return -1;
			e->fd_stat = f;
		}
		struct rt_pid_stat ps;
		ssize_t len = e->fd_stat >= 0 ? rt_pread_all(e->fd_stat, t->buf, t->bufcap)
		                              : pt_read_proc(t, rel);
		if (len <= 0 || rt_parse_pid_stat(t->buf, (size_t)len, &ps) ||
		    ps.start != e->start) {
			t->pre_sched = 0;
			return -1;
		}
		pt_account(t, e, &ps, w);
		t->pre_sched = 0;
	}
	return 0;
}

/* Walk from the root through every member's children files (or the
 * members listed: their children are members when they are listed). */
static void full_walk(struct rt_proctree *t, struct walk_sum *w)
{
	size_t n = 0;
	if (t->scan_mode && !t->list)
		pt_scan_all(t);
	if (t->list)
		pt_push_listed(t, &n);
	else if (t->root)
		pt_push(t, &n, t->root);
	else
		pt_children(t, t->self, 1, &n, NULL);
	for (size_t qi = 0; qi < n; qi++) {
		pid_t pid = t->queue[qi];
		char rel[64];
		struct rt_pid_stat ps;
		struct pt_proc *e = pt_find(t, pid);
		if (e && e->seen == t->gen)
			continue; /* already visited (a loop in hostile data) */
		/* through the kept descriptor; a dead process's one reads nothing */
		ssize_t len = -1;
		if (e && e->fd_stat >= 0 &&
		    (len = rt_pread_all(e->fd_stat, t->buf, t->bufcap)) <= 0)
			close_fds(e);
		if (len <= 0) {
			snprintf(rel, sizeof(rel), "%d/stat", pid);
			len = pt_read_proc(t, rel);
		}
		if (len <= 0 || rt_parse_pid_stat(t->buf, (size_t)len, &ps))
			continue; /* gone meanwhile */
		if (e && e->start != ps.start) {
			/* pid reused: the old process departed */
			e->gone = 1;
			t->departed = 1;
			t->dep_delay += e->delay;
			pt_depart(t, e);
			erase(t, e);
			e = NULL;
		}
		if (!e && !(e = insert(t, pid)))
			continue;
		/* seen before: keep descriptors from now on */
		int again = e->seen != 0;
		if (again && e->fd_stat < 0 && !t->lean) {
			snprintf(rel, sizeof(rel), "%d/stat", pid);
			int f = rt_open(RT_PROC, rel);
			e->fd_stat = f >= 0 ? f : -1;
		}
		pt_account(t, e, &ps, w);
		if (!t->list)
			pt_children(t, pid, ps.threads, &n, again ? &e->fd_children : NULL);
	}
	t->qlen = n;
	t->walked_forks = t->forks;
	t->walked_known = t->forks_known;
}

void rt_proctree_bound(struct rt_proctree *t, unsigned ncpu, uint64_t now_ns)
{
	if (ncpu > t->ncpu)
		t->ncpu = ncpu; /* the most ever online: a CPU taken offline ran */
	t->now_ns = now_ns;
}

/*
 * The cumulative CPU a sample shows. The walk reads its members one after
 * another, for as long as that takes (seconds when a thousand busy members
 * starve the recorder), so what it sums was read after the sample's time:
 * at or above the tree's CPU at that time. The kernel caps what the tree
 * can have gained since the last sample: the host's CPUs times the time
 * between them. The figure shown is the lower of the two, and never below
 * the last one shown; so it is still at or above the truth, closer to it,
 * and what the cap held back shows in the next samples. The tree's last
 * sample (its members all reaped, their rusage exact) is met exactly.
 */
static void bound(struct rt_proctree *t, uint64_t ut, uint64_t st, struct rt_rec_process *out)
{
	uint64_t shown = t->shown_ut_us + t->shown_st_us;
	uint64_t inc = ut + st > shown ? ut + st - shown : 0;
	if (t->shown && t->ncpu && t->now_ns > t->last_ns) {
		uint64_t room = (t->now_ns - t->last_ns) / 1000u * t->ncpu;
		if (inc > room)
			inc = room;
	}
	/* the increase goes to user and system as the walk's sum is ahead of
	 * what was shown in each; the total, never each part, is what the
	 * walk gives (a member's split is the ticks' estimate) */
	uint64_t au = ut > t->shown_ut_us ? ut - t->shown_ut_us : 0;
	uint64_t as = st > t->shown_st_us ? st - t->shown_st_us : 0;
	uint64_t du = au + as ? (uint64_t)((double)inc * (double)au / (double)(au + as)) : inc;
	if (du > inc)
		du = inc;
	t->shown_ut_us += du;
	t->shown_st_us += inc - du;
	t->shown = 1;
	t->last_ns = t->now_ns;
	out->utime_us = t->shown_ut_us;
	out->stime_us = t->shown_st_us;
}

/* The walk of the tree: the quick one (the members known, when nobody
 * forked since) or, when a member died or anyone forked, the full one.
 * Whoever was not seen and is not alive in the tree after all has
 * departed. */
static void walk_tree(struct rt_proctree *t, struct walk_sum *w)
{
	int quick = t->gen > 1 && t->forks_known && t->walked_known &&
	            t->forks == t->walked_forks && !t->scan_mode && !t->list;
	if (!quick || quick_walk(t, w) != 0) {
		if (quick) { /* a member died: start over, in full */
			memset(w, 0, sizeof(*w));
			t->gen++;
		}
		full_walk(t, w);
	}
	/* the sync after this tells who reaped the departed */
	pt_rescue_missed(t, w);
	for (size_t i = 0; i < t->cap; i++) {
		struct pt_proc *e = &t->tab[i];
		if (!e->pid || e->seen == t->gen)
			continue;
		e->gone = 1;
		t->departed = 1;
	}
}

/* What the reaper reaped so far (members gone before the walk read them,
 * newcomers included, which no entry waits for): reported now, and waited
 * for a moment when it reaped a member just now (the tree's CPU must not
 * dip while its report is on the way). A member read alive in this walk
 * whose report arrived since: its exact rusage counts it, its live
 * figures must not as well. */
static void take_reports(struct rt_proctree *t, struct walk_sum *w)
{
	pt_sync_reports(t);
	if (t->departed && pt_refresh_reapers(t, w))
		pt_sync_reports(t); /* members found gone since */
	for (int i = 0; i < 5 && t->await_reports && pt_unreported(t); i++)
		t->await_reports(t->await_arg, 10);
	for (size_t i = 0; i < t->cap; i++) {
		struct pt_proc *e = &t->tab[i];
		if (!e->pid || e->seen != t->gen || e->gone || !e->reported)
			continue;
		pt_drop_member(t, e, w);
	}
}

/* The tree's PSS and RSS: every member's PSS read again when the pages
 * shared within the tree changed hands (a member came, went, or a read is
 * due), and in the next sample after a departure: a departed member's
 * pages leave with its address space, whose last reference can be dropped
 * after its reap (a reader of its smaps holding it), while the members
 * left behind sleep and move nothing. */
static void sum_memory(struct rt_proctree *t, struct walk_sum *w)
{
	int fresh = t->moved || t->departed || t->want_status || t->recheck;
	t->recheck = t->departed;
	for (size_t i = 0; fresh && i < t->cap; i++) {
		struct pt_proc *e = &t->tab[i];
		if (e->pid && e->seen == t->gen && !e->gone)
			pt_read_pss(t, e);
	}
	for (size_t i = 0; i < t->cap; i++) {
		struct pt_proc *e = &t->tab[i];
		if (!e->pid || e->seen != t->gen || e->gone)
			continue;
		/* a member that exited or began to during the reads: its pages
		 * are passing to the others, whose reads may already count them */
		if (fresh && pt_exiting_now(t, e)) {
			t->recheck = 1;
			continue;
		}
		w->pss_kb += e->pss_kb;
		w->rss_kb += e->rss_kb;
	}
}

/* The departed: their last figures kept in the tree's totals, their
 * entries erased. */
static void retire_departed(struct rt_proctree *t)
{
	for (size_t i = 0; i < t->cap; i++) {
		struct pt_proc *e = &t->tab[i];
		if (!e->pid || !e->gone || e->seen == t->gen)
			continue;
		t->dep_delay += e->delay; /* no reaper's figure holds it */
		pt_depart(t, e);
	}
	for (size_t i = 0; i < t->cap;) {
		struct pt_proc *e = &t->tab[i];
		if (e->pid && e->gone && e->seen != t->gen) {
			erase(t, e); /* the slot may now hold another entry: look again */
			continue;
		}
		i++;
	}
}

/* The sample's process section: the live members' sums and what the
 * departed and reaped left. */
static void fill_process(struct rt_proctree *t, const struct walk_sum *w,
                         struct rt_rec_process *out)
{
	memset(out, 0, sizeof(*out));
	out->pid = t->root;
	out->nprocs = w->members;
	/* µs, so the exact rusage of reaped members keeps its precision */
	bound(t, w->ut + t->dep_ut + t->reaped_ut_us + t->pend_ut,
	      w->st + t->dep_st + t->reaped_st_us + t->pend_st, out);
	out->read_bytes = w->rd + t->dep_rd + t->reaped_rd + t->pend_rd;
	out->write_bytes = w->wr + t->dep_wr + t->reaped_wr + t->pend_wr;
	out->rss_kb = w->rss_kb;
	out->pss_kb = w->pss_kb;
	out->threads = w->threads;
	/* an empty tree's counts are known: zero (a job not started yet) */
	if (w->members == 0)
		t->have_status = t->have_fds = 1;
	out->ext_valid =
	    (t->have_status ? RT_PROC_X_STATUS : 0) | (t->have_fds ? RT_PROC_X_FDS : 0);
	out->vol_ctxt = t->vcs;
	out->invol_ctxt = t->ivcs;
	out->peak_rss_kb = t->peak_hwm_kb;
	out->open_fds = w->fds;
	out->majflt = w->mf + t->dep_mf + t->reaped_mf + t->pend_mf;
	out->run_delay_ns = w->delay + t->dep_delay;
	if (t->have_delay || w->members == 0)
		out->ext_valid |= RT_PROC_X_DELAY;
}

void rt_proctree_sample(struct rt_proctree *t, struct rt_rec_process *out)
{
	/* (made at the first: a recorder's and a node's trees are lent one) */
	if (!t->own_buf && !(t->own_buf = malloc(PT_BUF))) {
		memset(out, 0, sizeof(*out));
		return;
	}
	rt_proctree_sample_in(t, out, t->own_buf, PT_BUF);
}

void rt_proctree_sample_in(struct rt_proctree *t, struct rt_rec_process *out, char *buf, size_t cap)
{
	struct walk_sum w = {0};
	t->buf = buf;
	t->bufcap = cap;
	t->gen++;
	t->moved = t->departed = 0;
	walk_tree(t, &w);
	take_reports(t, &w);
	sum_memory(t, &w);
	retire_departed(t);
	fill_process(t, &w, out);
	t->buf = NULL; /* (the caller's again) */
	t->bufcap = 0;
}

void rt_proctree_read_delay(struct rt_proctree *t, int on)
{
	t->no_delay = !on;
}

uint64_t rt_proctree_hwm_before_kb(const struct rt_proctree *t)
{
	return t ? t->hwm_before_kb : 0;
}

uint64_t rt_proctree_pss_reads(const struct rt_proctree *t)
{
	return t ? t->pss_reads : 0;
}

int rt_proctree_has(struct rt_proctree *t, pid_t pid)
{
	if (!t || pid <= 0)
		return 0;
	const struct pt_proc *e = pt_find(t, pid);
	return e && e->seen == t->gen && !e->gone;
}

size_t rt_proctree_members(struct rt_proctree *t, pid_t *out, size_t cap)
{
	size_t n = 0;
	for (size_t i = 0; t && i < t->cap && n < cap; i++)
		if (t->tab[i].pid && t->tab[i].seen == t->gen && !t->tab[i].gone)
			out[n++] = t->tab[i].pid;
	return n;
}
