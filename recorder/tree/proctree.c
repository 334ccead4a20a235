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
	char buf[65536]; /* a children file of thousands of pids fits */
};

static struct pt_proc *find(struct rt_proctree *t, pid_t pid)
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

int rt_proctree_open(struct rt_proctree **out, pid_t root_pid)
{
	struct rt_proctree *t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->root = root_pid;
	t->self = getpid();
	t->cap = 64;
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
	int rc = rt_proctree_open(out, 0);
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
	free(t);
}

void rt_proctree_exclude(struct rt_proctree *t, pid_t pid)
{
	if (t->nexclude < 8)
		t->exclude[t->nexclude++] = pid;
}

static int excluded(const struct rt_proctree *t, pid_t pid)
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

void rt_proctree_host_forks(struct rt_proctree *t, uint64_t forks)
{
	t->forks = forks;
	t->forks_known = 1;
}

static void pend_take(struct rt_proctree *t, size_t at)
{
	struct pt_pending *q = &t->pend[(t->pend_head + at) % t->pend_cap];
	t->pend_ut -= q->ut;
	t->pend_st -= q->st;
	t->pend_rd -= q->rd;
	t->pend_wr -= q->wr;
	t->pend_mf -= q->mf;
	/* the oldest moves into its place: the order is only a guess anyway */
	*q = t->pend[t->pend_head];
	t->pend_head = (t->pend_head + 1) % t->pend_cap;
	t->pend_n--;
}

/* A report of count members (pid 0: several the reaper summed): the
 * members it covers leave the pending ones (that pid, else the oldest). */
static void pend_reported(struct rt_proctree *t, pid_t pid, uint32_t count)
{
	if (pid > 0) {
		for (size_t i = 0; i < t->pend_n; i++)
			if (t->pend[(t->pend_head + i) % t->pend_cap].pid == pid) {
				pend_take(t, i);
				return;
			}
		return; /* not pending: read alive, or never seen */
	}
	while (count-- && t->pend_n)
		pend_take(t, 0);
}

static void pend_add(struct rt_proctree *t, const struct pt_proc *e)
{
	if (t->pend_n == t->pend_cap) {
		size_t cap = t->pend_cap ? t->pend_cap * 2 : 256;
		struct pt_pending *np = cap <= 65536 ? malloc(cap * sizeof(*np)) : NULL;
		if (!np)
			return; /* not held: a dip until its report */
		for (size_t i = 0; i < t->pend_n; i++)
			np[i] = t->pend[(t->pend_head + i) % t->pend_cap];
		free(t->pend);
		t->pend = np;
		t->pend_cap = cap;
		t->pend_head = 0;
	}
	struct pt_pending *q = &t->pend[(t->pend_head + t->pend_n++) % t->pend_cap];
	*q = (struct pt_pending){e->pid, e->ut, e->st, e->rd, e->wr, e->mf};
	t->pend_ut += q->ut;
	t->pend_st += q->st;
	t->pend_rd += q->rd;
	t->pend_wr += q->wr;
	t->pend_mf += q->mf;
}

void rt_proctree_reaped(struct rt_proctree *t, pid_t pid, const struct rusage *ru)
{
	rt_proctree_reaped_n(t, pid, 1, ru);
}

void rt_proctree_reaped_n(struct rt_proctree *t, pid_t pid, uint32_t count, const struct rusage *ru)
{
	if (excluded(t, pid))
		return;
	if (t->pend_n)
		pend_reported(t, pid, count ? count : 1);
	t->reaped_ut_us +=
	    (uint64_t)ru->ru_utime.tv_sec * 1000000u + (uint64_t)ru->ru_utime.tv_usec;
	t->reaped_st_us +=
	    (uint64_t)ru->ru_stime.tv_sec * 1000000u + (uint64_t)ru->ru_stime.tv_usec;
	t->reaped_rd += (uint64_t)ru->ru_inblock * 512u;
	t->reaped_mf += (uint64_t)ru->ru_majflt;
	t->reaped_wr += (uint64_t)ru->ru_oublock * 512u;
	/* the largest RSS of it and of every descendant it reaped: a member
	 * that peaked between two reads of its status still counts */
	if (ru->ru_maxrss > 0 && (uint64_t)ru->ru_maxrss > t->peak_hwm_kb)
		t->peak_hwm_kb = (uint64_t)ru->ru_maxrss;
	/* its entry must not also count as departed */
	struct pt_proc *e = pid > 0 ? find(t, pid) : NULL;
	if (e) {
		e->ppid = t->self;
		e->reported = 1;
	}
}

/* Members reaped by the reaper whose report has not arrived yet (none
 * once it answered a sync since they were found gone). */
static size_t unreported(const struct rt_proctree *t)
{
	size_t n = 0;
	for (size_t i = 0; i < t->cap; i++) {
		const struct pt_proc *e = &t->tab[i];
		n +=
		    e->pid && e->seen != t->gen && e->ppid == t->self && !e->reported && !e->synced;
	}
	return n;
}

static ssize_t read_proc(struct rt_proctree *t, const char *rel)
{
	int fd = rt_open(RT_PROC, rel);
	if (fd < 0)
		return fd;
	ssize_t n = rt_pread_all(fd, t->buf, sizeof(t->buf));
	close(fd);
	return n;
}

/* Read <pid>/<file> through a descriptor kept in *fd (opened on first use;
 * by path when fd is NULL or no descriptor can be kept). */
static ssize_t read_kept(struct rt_proctree *t, int *fd, pid_t pid, const char *file)
{
	char rel[96];
	snprintf(rel, sizeof(rel), "%d/%s", pid, file);
	if (!fd)
		return read_proc(t, rel);
	if (*fd < 0) {
		int f = rt_open(RT_PROC, rel);
		if (f == -EMFILE || f == -ENFILE)
			return read_proc(t, rel);
		if (f < 0)
			return f;
		*fd = f;
	}
	return rt_pread_all(*fd, t->buf, sizeof(t->buf));
}

static void push(struct rt_proctree *t, size_t *n, pid_t pid)
{
	if (*n == t->qcap) {
		pid_t *q = realloc(t->queue, t->qcap * 2 * sizeof(*q));
		if (!q)
			return;
		t->queue = q;
		t->qcap *= 2;
	}
	t->queue[(*n)++] = pid;
}

/* Fill t->pairs with (pid, ppid) of every process: the fallback when the
 * kernel has no children files. */
static void scan_all(struct rt_proctree *t)
{
	char path[4200];
	t->npairs = 0;
	if (rt_path(path, sizeof(path), RT_PROC, "") != 0)
		return;
	DIR *d = opendir(path);
	struct dirent *e;
	while (d && (e = readdir(d))) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		char rel[300];
		snprintf(rel, sizeof(rel), "%s/stat", e->d_name);
		ssize_t len = read_proc(t, rel);
		struct rt_pid_stat ps;
		if (len <= 0 || rt_parse_pid_stat(t->buf, (size_t)len, &ps))
			continue;
		if (t->npairs == t->pcap) {
			size_t cap = t->pcap ? t->pcap * 2 : 1024;
			void *p = realloc(t->pairs, cap * sizeof(*t->pairs));
			if (!p)
				break;
			t->pairs = p;
			t->pcap = cap;
		}
		t->pairs[t->npairs][0] = (pid_t)atoi(e->d_name);
		t->pairs[t->npairs][1] = ps.ppid;
		t->npairs++;
	}
	if (d)
		closedir(d);
}

static void push_children(struct rt_proctree *t, ssize_t len, size_t *n)
{
	const char *p = t->buf, *end = t->buf + (len > 0 ? len : 0);
	uint64_t c;
	while (len > 0 && rt_scan_u64(&p, end, &c) == 0)
		if (c > 0 && c < (1u << 22) && !excluded(t, (pid_t)c))
			push(t, n, (pid_t)c);
}

/* Append the children of pid (all its threads') to the queue. */
static void children(struct rt_proctree *t, pid_t pid, uint32_t threads, size_t *n, int *keep)
{
	if (t->scan_mode) {
		for (size_t i = 0; i < t->npairs; i++)
			if (t->pairs[i][1] == pid && !excluded(t, t->pairs[i][0]))
				push(t, n, t->pairs[i][0]);
		return;
	}
	if (threads <= 1 && keep) {
		char file[64];
		snprintf(file, sizeof(file), "task/%d/children", pid);
		ssize_t len = read_kept(t, keep, pid, file);
		if (len == -ENOENT && !t->scan_mode) {
			/* the process exists (its stat was read) but has no children
			 * file: this kernel lacks CONFIG_PROC_CHILDREN */
			t->scan_mode = 1;
			scan_all(t);
			children(t, pid, threads, n, keep);
			return;
		}
		push_children(t, len, n);
		return;
	}
	char rel[96];
	pid_t tids[1] = {pid};
	DIR *d = NULL;
	if (threads > 1) {
		char path[4200];
		snprintf(rel, sizeof(rel), "%d/task", pid);
		if (rt_path(path, sizeof(path), RT_PROC, rel) == 0)
			d = opendir(path);
	}
	struct dirent *e;
	for (int k = 0;; k++) {
		pid_t tid;
		if (d) {
			if (!(e = readdir(d)))
				break;
			if (e->d_name[0] < '0' || e->d_name[0] > '9')
				continue;
			tid = (pid_t)atoi(e->d_name);
		} else {
			if (k > 0)
				break;
			tid = tids[0];
		}
		snprintf(rel, sizeof(rel), "%d/task/%d/children", pid, tid);
		ssize_t len = read_proc(t, rel);
		if (len == -ENOENT && tid == pid && !d) {
			t->scan_mode = 1; /* no CONFIG_PROC_CHILDREN, see above */
			scan_all(t);
			children(t, pid, threads, n, keep);
			return;
		}
		push_children(t, len, n);
	}
	if (d)
		closedir(d);
}

/* Whether a departed entry's ticks now live in a live member's cutime (or
 * in the tracker's exact rusage): follow last-known parents. Under a
 * reaper that reports (wrapper mode), nothing is reaped outside the tree:
 * a member whose parents are gone was reparented to the reaper, and its
 * report counts it (keeping its last figure too would count it twice);
 * one found gone before a sync the reaper answered without its report was
 * reaped by a member (the reaper reports before it answers), even by a
 * parent on its way out that reaped it first. */
static int absorbed(struct rt_proctree *t, const struct pt_proc *e)
{
	if (e->reported || e->synced)
		return 1;
	for (int depth = 0; depth < 64; depth++) {
		if (t->root == 0 && e->ppid == t->self)
			return 1; /* reaped by us: counted exactly by rt_proctree_reaped */
		const struct pt_proc *p = find(t, e->ppid);
		if (!p)
			return 0; /* reaped outside the tree, or orphaned to the reaper */
		if (p->seen == t->gen && !p->gone)
			/* a live parent reaped it; one on its way out did not: its
			 * children went to the reaper */
			return !(p->exiting && t->root == 0 && t->await_reports);
		e = p;
	}
	return 0;
}

/* Whether departed e will be reported by the reaper (wrapper mode): its
 * last figures then wait in the pending ones. */
static int to_be_reported(const struct rt_proctree *t, const struct pt_proc *e)
{
	return t->root == 0 && t->await_reports && !e->reported;
}

/* Departed e's figures: in a live member's cutime (nothing to do), in the
 * reaper's report to come (pending till then), or kept as they were last
 * read (reaped outside the tree). */
static void depart(struct rt_proctree *t, const struct pt_proc *e)
{
	if (absorbed(t, e))
		return;
	if (to_be_reported(t, e)) {
		pend_add(t, e);
		return;
	}
	if (e->reported)
		return;
	t->dep_ut += e->ut;
	t->dep_st += e->st;
	t->dep_rd += e->rd;
	t->dep_wr += e->wr;
	t->dep_mf += e->mf;
}

struct walk_sum {
	uint64_t ut, st, rd, wr, rss_kb, pss_kb, mf, threads, fds, delay;
	uint32_t members;
};

/* /proc/<pid>/status: the tree's context switches (each member's change
 * since its last read; a member born while tracked from zero) and its
 * largest VmHWM. By path, every 5 s: no descriptor kept. */
static void read_status(struct rt_proctree *t, struct pt_proc *e)
{
	char rel[64];
	snprintf(rel, sizeof(rel), "%d/status", e->pid);
	ssize_t len = read_proc(t, rel);
	if (len <= 0)
		return;
	uint64_t v = 0, iv = 0, hwm = 0;
	size_t n = (size_t)len;
	if (rt_parse_field_u64(t->buf, n, "VmHWM:", &hwm) == 0 && hwm > t->peak_hwm_kb)
		t->peak_hwm_kb = hwm;
	if (rt_parse_field_u64(t->buf, n, "voluntary_ctxt_switches:", &v) ||
	    rt_parse_field_u64(t->buf, n, "nonvoluntary_ctxt_switches:", &iv))
		return;
	uint64_t v0 = e->have_status ? e->vcs : e->born_late ? 0 : v;
	uint64_t iv0 = e->have_status ? e->ivcs : e->born_late ? 0 : iv;
	t->vcs += v >= v0 ? v - v0 : 0;
	t->ivcs += iv >= iv0 ? iv - iv0 : 0;
	e->vcs = v;
	e->ivcs = iv;
	e->have_status = 1;
	t->have_status = 1;
}

/* Entries of /proc/<pid>/fd (other users' processes: not readable, kept). */
static void count_fds(struct rt_proctree *t, struct pt_proc *e)
{
	char rel[64], path[4200];
	snprintf(rel, sizeof(rel), "%d/fd", e->pid);
	if (rt_path(path, sizeof(path), RT_PROC, rel) != 0)
		return;
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return;
	uint32_t n = 0;
	for (;;) {
		long got = syscall(SYS_getdents64, fd, t->buf, sizeof(t->buf));
		if (got <= 0)
			break;
		for (long off = 0; off < got;) {
			unsigned short reclen;
			memcpy(&reclen, t->buf + off + 16, sizeof(reclen));
			const char *name = t->buf + off + 19;
			if (reclen == 0)
				break;
			n += name[0] != '.';
			off += reclen;
		}
	}
	close(fd);
	e->nfds = n;
	t->have_fds = 1;
}

/* schedstat: "<ns on a CPU> <ns waiting runnable> <timeslices>". */
static int parse_delay(const char *buf, ssize_t len, uint64_t *run, uint64_t *delay)
{
	const char *p = buf, *end = buf + (len > 0 ? len : 0);
	return len > 0 && rt_scan_u64(&p, end, run) == 0 && rt_scan_u64(&p, end, delay) == 0 ? 0
	                                                                                     : -1;
}

static int parse_sched3(const char *buf, ssize_t len, uint64_t *run, uint64_t *wait,
                        uint64_t *slices)
{
	const char *p = buf, *end = buf + (len > 0 ? len : 0);
	return len > 0 && rt_scan_u64(&p, end, run) == 0 && rt_scan_u64(&p, end, wait) == 0 &&
	               rt_scan_u64(&p, end, slices) == 0
	           ? 0
	           : -1;
}

/*
 * The time member e's threads waited, runnable, for a CPU (schedstat, ns):
 * its own file when it has one thread (through a kept descriptor), else
 * every thread's by path. A thread that ended took its wait with it, so a
 * member's figure never goes down: a member with short-lived threads is
 * counted short, never double. *run: the same threads' time on a CPU, ns
 * (0: not read).
 */
static void read_delay(struct rt_proctree *t, struct pt_proc *e, int first, uint64_t *run)
{
	uint64_t sum = 0, d, r, rsum = 0;
	int ok = 0;
	*run = 0;
	if (t->no_delay)
		return;
	if (e->threads <= 1 && t->pre_sched) { /* read just before, by quick_walk */
		rsum = e->sched_run = t->pre_run;
		sum = e->sched_wait = t->pre_wait;
		e->sched_slices = t->pre_slices;
		ok = 1;
	} else if (e->threads <= 1) {
		ssize_t len = read_kept(t, first ? NULL : &e->fd_sched, e->pid, "schedstat");
		ok =
		    parse_sched3(t->buf, len, &e->sched_run, &e->sched_wait, &e->sched_slices) == 0;
		rsum = e->sched_run;
		sum = e->sched_wait;
		if (!ok)
			e->sched_slices = 0; /* never taken for "has not run" */
	} else {
		/* each thread's file opened relative to the task directory: no
		 * path walk from /proc for each */
		char rel[96], path[4200], name[40];
		e->sched_slices = 0; /* several threads: never taken for "has not run" */
		snprintf(rel, sizeof(rel), "%d/task", e->pid);
		DIR *dir = rt_path(path, sizeof(path), RT_PROC, rel) == 0 ? opendir(path) : NULL;
		int dfd = dir ? dirfd(dir) : -1;
		struct dirent *de;
		while (dir && (de = readdir(dir))) {
			if (de->d_name[0] < '0' || de->d_name[0] > '9')
				continue;
			snprintf(name, sizeof(name), "%.16s/schedstat", de->d_name);
			int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC);
			if (fd < 0)
				continue;
			ssize_t len = rt_pread_all(fd, t->buf, sizeof(t->buf));
			close(fd);
			if (parse_delay(t->buf, len, &r, &d) == 0) {
				sum += d;
				rsum += r;
				ok = 1;
			}
		}
		if (dir)
			closedir(dir);
	}
	if (!ok)
		return;
	t->have_delay = 1;
	*run = rsum;
	if (sum > e->delay)
		e->delay = sum;
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
static void set_cpu(struct rt_proctree *t, struct pt_proc *e, const struct rt_pid_stat *ps,
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
static void account(struct rt_proctree *t, struct pt_proc *e, const struct rt_pid_stat *ps,
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
	read_delay(t, e, first, &run_ns);
	set_cpu(t, e, ps, run_ns);
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
		read_status(t, e);
	if (t->want_fds || first)
		count_fds(t, e);
	/* VmHWM >= RSS: what a member holds now is a floor of the peak */
	if (ps->rss_pages * t->page_kb > t->peak_hwm_kb)
		t->peak_hwm_kb = ps->rss_pages * t->page_kb;
	/* I/O needs CPU: re-read it when the process ran (what it did
	 * meanwhile is cumulative, so nothing is lost, only seen later) */
	if (first || e->ut + e->st != e->io_for) {
		ssize_t len = read_kept(t, first ? NULL : &e->fd_io, e->pid, "io");
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
		read_status(t, e);
	if (t->want_fds)
		count_fds(t, e);
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
	ssize_t len = rt_pread_all(e->fd_sched, t->buf, sizeof(t->buf));
	if (parse_sched3(t->buf, len, &run, &wait, &slices))
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
		struct pt_proc *e = find(t, t->queue[i]);
		if (!e || e->seen != prev || e->gone)
			continue;
		if (quick_still(t, e, w))
			continue;
		if (e->fd_stat < 0) { /* its second sample: keep a descriptor */
			char rel[64];
			snprintf(rel, sizeof(rel), "%d/stat", e->pid);
			int f = rt_open(RT_PROC, rel);
			if (f < 0)
				return -1;
			e->fd_stat = f;
		}
		struct rt_pid_stat ps;
		ssize_t len = rt_pread_all(e->fd_stat, t->buf, sizeof(t->buf));
		if (len <= 0 || rt_parse_pid_stat(t->buf, (size_t)len, &ps) ||
		    ps.start != e->start) {
			t->pre_sched = 0;
			return -1;
		}
		account(t, e, &ps, w);
		t->pre_sched = 0;
	}
	return 0;
}

/* The members fn lists now, onto the queue (room grows to a million). */
static void push_listed(struct rt_proctree *t, size_t *n)
{
	for (;;) {
		if (!t->lcap || (t->nlisted == (ssize_t)t->lcap && t->lcap < (1u << 20))) {
			size_t cap = t->lcap ? t->lcap * 2 : 1024;
			pid_t *p = realloc(t->listed, cap * sizeof(*p));
			if (!p)
				break;
			t->listed = p;
			t->lcap = cap;
		}
		t->nlisted = t->list(t->list_arg, t->listed, t->lcap);
		if (t->nlisted < (ssize_t)t->lcap || t->lcap >= (1u << 20))
			break;
	}
	for (ssize_t i = 0; i < t->nlisted; i++)
		if (!excluded(t, t->listed[i]))
			push(t, n, t->listed[i]);
}

/* Walk from the root through every member's children files (or the
 * members listed: their children are members when they are listed). */
static void full_walk(struct rt_proctree *t, struct walk_sum *w)
{
	size_t n = 0;
	if (t->scan_mode && !t->list)
		scan_all(t);
	if (t->list)
		push_listed(t, &n);
	else if (t->root)
		push(t, &n, t->root);
	else
		children(t, t->self, 1, &n, NULL);
	for (size_t qi = 0; qi < n; qi++) {
		pid_t pid = t->queue[qi];
		char rel[64];
		struct rt_pid_stat ps;
		struct pt_proc *e = find(t, pid);
		if (e && e->seen == t->gen)
			continue; /* already visited (a loop in hostile data) */
		/* through the kept descriptor; a dead process's one reads nothing */
		ssize_t len = -1;
		if (e && e->fd_stat >= 0 &&
		    (len = rt_pread_all(e->fd_stat, t->buf, sizeof(t->buf))) <= 0)
			close_fds(e);
		if (len <= 0) {
			snprintf(rel, sizeof(rel), "%d/stat", pid);
			len = read_proc(t, rel);
		}
		if (len <= 0 || rt_parse_pid_stat(t->buf, (size_t)len, &ps))
			continue; /* gone meanwhile */
		if (e && e->start != ps.start) {
			/* pid reused: the old process departed */
			e->gone = 1;
			t->departed = 1;
			t->dep_delay += e->delay;
			depart(t, e);
			erase(t, e);
			e = NULL;
		}
		if (!e && !(e = insert(t, pid)))
			continue;
		/* seen before: keep descriptors from now on */
		int again = e->seen != 0;
		if (again && e->fd_stat < 0) {
			snprintf(rel, sizeof(rel), "%d/stat", pid);
			int f = rt_open(RT_PROC, rel);
			e->fd_stat = f >= 0 ? f : -1;
		}
		account(t, e, &ps, w);
		if (!t->list)
			children(t, pid, ps.threads, &n, again ? &e->fd_children : NULL);
	}
	t->qlen = n;
	t->walked_forks = t->forks;
	t->walked_known = t->forks_known;
}

/* Whether member e shares its parent member's address space (KCMP_VM). */
static int parents_vm(struct rt_proctree *t, const struct pt_proc *e)
{
#ifdef SYS_kcmp
	const struct pt_proc *p = find(t, e->ppid);
	if (!p || p->seen != t->gen || p->gone)
		return 0; /* the tracker's own children are never counted twice */
	return syscall(SYS_kcmp, (pid_t)e->pid, (pid_t)e->ppid, 1 /* KCMP_VM */, 0ul, 0ul) == 0;
#else
	(void)t;
	(void)e;
	return 0;
#endif
}

/* Every live member's PSS from its smaps_rollup (by path in its first
 * sample, then through a kept descriptor); not readable (another user's
 * process): its RSS. */
static void read_pss(struct rt_proctree *t, struct pt_proc *e)
{
	if ((e->parents_vm = (uint8_t)parents_vm(t, e))) {
		e->pss_kb = e->rss_kb = 0;
		return;
	}
	int *fd = e->first_gen == t->gen ? NULL : &e->fd_smaps;
	ssize_t len = read_kept(t, fd, e->pid, "smaps_rollup");
	uint64_t pss = 0, rss = 0;
	/* RSS of the same moment too: a vfork child that exec'd since its
	 * stat was read no longer has its parent's RSS */
	if (len <= 0 || rt_parse_field_u64(t->buf, (size_t)len, "Pss:", &pss) != 0 ||
	    rt_parse_field_u64(t->buf, (size_t)len, "Rss:", &rss) != 0)
		pss = rss = e->rss_pages * t->page_kb;
	e->pss_kb = pss;
	e->rss_kb = rss;
	t->pss_reads++;
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

/* Member e leaves this sample's figures: it is gone since it was read. */
static void drop_member(struct rt_proctree *t, struct pt_proc *e, struct walk_sum *w)
{
	w->ut -= e->ut;
	w->st -= e->st;
	w->mf -= e->mf;
	w->rd -= e->rd;
	w->wr -= e->wr;
	w->threads -= e->threads;
	w->fds -= e->nfds;
	w->delay -= e->delay;
	w->members--;
	e->gone = 1;
	e->seen = t->gen - 1; /* departed before this sample's figures */
	t->departed = 1;
}

/* Read live member e's stat again: 0 and ps, or -1 when it is gone. */
static int reread(struct rt_proctree *t, struct pt_proc *e, struct rt_pid_stat *ps)
{
	ssize_t len = read_kept(t, e->first_gen == t->gen ? NULL : &e->fd_stat, e->pid, "stat");
	return len > 0 && rt_parse_pid_stat(t->buf, (size_t)len, ps) == 0 && ps->start == e->start
	           ? 0
	           : -1;
}

/*
 * A member its parent reaped after the walk read the parent and before it
 * came to the member is in neither figure: the parent's cutime was read
 * before. So the live parent of every member that left is read again (its
 * cutime now holds what it reaped), and then its live children: one that
 * left meanwhile may be in the new figure too, so it leaves the sample and
 * the parent is read once more, until a round finds no child gone (a few
 * at most; a storm of exits ends). A parent gone by then leaves too, and
 * its own parent is read.
 */
static int refresh_reapers(struct rt_proctree *t, struct walk_sum *w)
{
	int dropped = 0;
	for (size_t i = 0; i < t->cap; i++)
		t->tab[i].left_in = t->tab[i].pid && t->tab[i].gone && t->tab[i].seen != t->gen;
	for (int round = 0; round < 8; round++) {
		int more = 0;
		for (size_t i = 0; i < t->cap; i++) {
			struct pt_proc *c = &t->tab[i];
			if (!c->pid || !c->left_in)
				continue;
			c->left_in = 0;
			struct pt_proc *p = find(t, c->ppid);
			if (!p || p->seen != t->gen || p->gone)
				continue; /* reaped outside the tree, or by the reaper */
			struct rt_pid_stat ps;
			if (reread(t, p, &ps)) {
				drop_member(t, p, w);
				p->left_in = 1;
				more = dropped = 1;
				continue;
			}
			uint64_t ut0 = p->ut, st0 = p->st;
			set_cpu(t, p, &ps, 0); /* its own time: the last exact figure */
			w->ut += p->ut - ut0;
			w->st += p->st - st0;
			w->mf += ps.mf - p->mf;
			p->mf = ps.mf;
			ssize_t len =
			    read_kept(t, p->first_gen == t->gen ? NULL : &p->fd_io, p->pid, "io");
			uint64_t v;
			if (len > 0 &&
			    rt_parse_field_u64(t->buf, (size_t)len, "read_bytes:", &v) == 0 &&
			    v >= p->rd) {
				w->rd += v - p->rd;
				p->rd = v;
			}
			if (len > 0 &&
			    rt_parse_field_u64(t->buf, (size_t)len, "write_bytes:", &v) == 0 &&
			    v >= p->wr) {
				w->wr += v - p->wr;
				p->wr = v;
			}
			/* its children counted live must still be there */
			for (size_t k = 0; k < t->cap; k++) {
				struct pt_proc *q = &t->tab[k];
				if (q->pid && q->ppid == p->pid && q->seen == t->gen && !q->gone &&
				    reread(t, q, &ps)) {
					drop_member(t, q, w);
					q->left_in = 1;
					more = dropped = 1;
				}
			}
		}
		if (!more)
			break;
	}
	return dropped;
}

/* Ask the reaper to reap and report what ended so far: once it answered,
 * every member found gone by now was either reported or reaped by a
 * member. */
static void sync_reports(struct rt_proctree *t)
{
	if (!t->await_reports || !t->await_reports(t->await_arg, -SYNC_WAIT_MS))
		return;
	for (size_t i = 0; t->departed && i < t->cap; i++)
		if (t->tab[i].pid && t->tab[i].gone)
			t->tab[i].synced = 1;
}

/*
 * Members the walk did not come to, though they are alive in the tree. A
 * children file can miss a live child: the kernel builds it from a list
 * that changes under its reader ("may miss children" when they exit
 * meanwhile), and a member that dies between the reads of its reaper's
 * children file and of its own hands its children to the reaper: they are
 * in neither. Taken for departed, such a member's last figures are held
 * (or wait for its reaper's report), and it is counted again when the next
 * walk finds it: in CI, 1000 processes killed at once showed 0.8 s of CPU
 * twice, kept by a figure that never drops. So each member not seen is
 * read: one alive whose parent is a member seen now (or the reaper) is
 * counted live; in rounds, since one found may be the parent of others.
 * A member alive outside the tree (orphaned to init) has left it.
 */
static void rescue_missed(struct rt_proctree *t, struct walk_sum *w)
{
	for (int round = 0, more = 1; more && round < 16; round++) {
		more = 0;
		for (size_t i = 0; i < t->cap; i++) {
			struct pt_proc *e = &t->tab[i];
			struct rt_pid_stat ps;
			if (!e->pid || e->seen == t->gen || e->gone)
				continue;
			if (reread(t, e, &ps)) {
				e->gone = 1; /* departed: settled below */
				continue;
			}
			const struct pt_proc *p = find(t, ps.ppid);
			if (!(t->root == 0 && ps.ppid == t->self) &&
			    !(p && p->seen == t->gen && !p->gone))
				continue;
			t->pre_sched = 0;
			account(t, e, &ps, w);
			more = 1;
		}
	}
}

/* Whether member e is gone or exiting now (after the PSS reads). */
static int exiting_now(struct rt_proctree *t, struct pt_proc *e)
{
	ssize_t len = read_kept(t, e->first_gen == t->gen ? NULL : &e->fd_stat, e->pid, "stat");
	struct rt_pid_stat ps;
	return len <= 0 || rt_parse_pid_stat(t->buf, (size_t)len, &ps) || ps.start != e->start ||
	       ps.exiting;
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
	rescue_missed(t, w);
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
	sync_reports(t);
	if (t->departed && refresh_reapers(t, w))
		sync_reports(t); /* members found gone since */
	for (int i = 0; i < 5 && t->await_reports && unreported(t); i++)
		t->await_reports(t->await_arg, 10);
	for (size_t i = 0; i < t->cap; i++) {
		struct pt_proc *e = &t->tab[i];
		if (!e->pid || e->seen != t->gen || e->gone || !e->reported)
			continue;
		drop_member(t, e, w);
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
			read_pss(t, e);
	}
	for (size_t i = 0; i < t->cap; i++) {
		struct pt_proc *e = &t->tab[i];
		if (!e->pid || e->seen != t->gen || e->gone)
			continue;
		/* a member that exited or began to during the reads: its pages
		 * are passing to the others, whose reads may already count them */
		if (fresh && exiting_now(t, e)) {
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
		depart(t, e);
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
	struct walk_sum w = {0};
	t->gen++;
	t->moved = t->departed = 0;
	walk_tree(t, &w);
	take_reports(t, &w);
	sum_memory(t, &w);
	retire_departed(t);
	fill_process(t, &w, out);
}

void rt_proctree_read_delay(struct rt_proctree *t, int on)
{
	t->no_delay = !on;
}

uint64_t rt_proctree_pss_reads(const struct rt_proctree *t)
{
	return t ? t->pss_reads : 0;
}

int rt_proctree_has(struct rt_proctree *t, pid_t pid)
{
	if (!t || pid <= 0)
		return 0;
	const struct pt_proc *e = find(t, pid);
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
