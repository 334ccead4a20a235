/*
 * proctree_read.c - what the process tree reads of a member: its stat,
 * status, fds, schedstat and smaps_rollup (by path in its first sample,
 * through kept descriptors after), and who its children are (children
 * files, one scan of /proc without them, or the list a cgroup gives).
 * See proctree.c for the model.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "procfs.h"
#include "proctree_int.h"
#include "rt/sysroot.h"

ssize_t pt_read_proc(struct rt_proctree *t, const char *rel)
{
	int fd = rt_open(RT_PROC, rel);
	if (fd < 0)
		return fd;
	ssize_t n = rt_pread_all(fd, t->buf, t->bufcap);
	close(fd);
	return n;
}

/* Read <pid>/<file> through a descriptor kept in *fd (opened on first use;
 * by path when fd is NULL or no descriptor can be kept). */
ssize_t pt_read_kept(struct rt_proctree *t, int *fd, pid_t pid, const char *file)
{
	char rel[96];
	snprintf(rel, sizeof(rel), "%d/%s", pid, file);
	if (fd && t->lean && *fd >= 0) { /* (kept before it went lean) */
		close(*fd);
		*fd = -1;
	}
	if (!fd || t->lean)
		return pt_read_proc(t, rel);
	if (*fd < 0) {
		int f = rt_open(RT_PROC, rel);
		if (f == -EMFILE || f == -ENFILE)
			return pt_read_proc(t, rel);
		if (f < 0)
			return f;
		*fd = f;
	}
	return rt_pread_all(*fd, t->buf, t->bufcap);
}

void pt_push(struct rt_proctree *t, size_t *n, pid_t pid)
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
void pt_scan_all(struct rt_proctree *t)
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
		ssize_t len = pt_read_proc(t, rel);
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
		if (c > 0 && c < (1u << 22) && !pt_excluded(t, (pid_t)c))
			pt_push(t, n, (pid_t)c);
}

/* Append the children of pid (all its threads') to the queue. */
void pt_children(struct rt_proctree *t, pid_t pid, uint32_t threads, size_t *n, int *keep)
{
	if (t->scan_mode) {
		for (size_t i = 0; i < t->npairs; i++)
			if (t->pairs[i][1] == pid && !pt_excluded(t, t->pairs[i][0]))
				pt_push(t, n, t->pairs[i][0]);
		return;
	}
	if (threads <= 1 && keep) {
		char file[64];
		snprintf(file, sizeof(file), "task/%d/children", pid);
		ssize_t len = pt_read_kept(t, keep, pid, file);
		if (len == -ENOENT && !t->scan_mode) {
			/* the process exists (its stat was read) but has no children
			 * file: this kernel lacks CONFIG_PROC_CHILDREN */
			t->scan_mode = 1;
			pt_scan_all(t);
			pt_children(t, pid, threads, n, keep);
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
		ssize_t len = pt_read_proc(t, rel);
		if (len == -ENOENT && tid == pid && !d) {
			t->scan_mode = 1; /* no CONFIG_PROC_CHILDREN, see above */
			pt_scan_all(t);
			pt_children(t, pid, threads, n, keep);
			return;
		}
		push_children(t, len, n);
	}
	if (d)
		closedir(d);
}

/* A member's VmHWM: the job's peak only when it was reached while
 * tracked. A member there before tracking may have peaked before (a
 * notebook's kernel that once held 1 GiB): its mark at the first read is
 * its base, said (hwm_before_kb) when above what it holds now, and only
 * a mark above the base counts. */
void pt_count_hwm(struct rt_proctree *t, struct pt_proc *e, uint64_t hwm)
{
	if (!e->have_hwm) {
		e->have_hwm = 1;
		e->hwm_base = e->born_late || t->list ? 0 : hwm; /* a group's: all its own */
		uint64_t rss = e->rss_pages * t->page_kb;
		if (e->hwm_base > rss + rss / 20 && e->hwm_base > t->hwm_before_kb)
			t->hwm_before_kb = e->hwm_base;
	}
	if (hwm > e->hwm_base && hwm > t->peak_hwm_kb)
		t->peak_hwm_kb = hwm;
}

/* /proc/<pid>/status: the tree's context switches (each member's change
 * since its last read; a member born while tracked from zero) and its
 * largest VmHWM. By path, every 5 s: no descriptor kept. */
void pt_read_status(struct rt_proctree *t, struct pt_proc *e)
{
	char rel[64];
	snprintf(rel, sizeof(rel), "%d/status", e->pid);
	ssize_t len = pt_read_proc(t, rel);
	if (len <= 0)
		return;
	uint64_t v = 0, iv = 0, hwm = 0;
	size_t n = (size_t)len;
	if (rt_parse_field_u64(t->buf, n, "VmHWM:", &hwm) == 0)
		pt_count_hwm(t, e, hwm);
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
void pt_count_fds(struct rt_proctree *t, struct pt_proc *e)
{
	char rel[64], path[4200];
	snprintf(rel, sizeof(rel), "%d/fd", e->pid);
	if (rt_path(path, sizeof(path), RT_PROC, rel) != 0)
		return;
	/* raw: /proc, read-only */
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return;
	uint32_t n = 0;
	for (;;) {
		long got = syscall(SYS_getdents64, fd, t->buf, t->bufcap);
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

int pt_parse_sched3(const char *buf, ssize_t len, uint64_t *run, uint64_t *wait, uint64_t *slices)
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
void pt_read_delay(struct rt_proctree *t, struct pt_proc *e, int first, uint64_t *run)
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
		ssize_t len = pt_read_kept(t, first ? NULL : &e->fd_sched, e->pid, "schedstat");
		ok = pt_parse_sched3(t->buf, len, &e->sched_run, &e->sched_wait,
		                     &e->sched_slices) == 0;
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
			/* raw: /proc, read-only */
			int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC);
			if (fd < 0)
				continue;
			ssize_t len = rt_pread_all(fd, t->buf, t->bufcap);
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

/* The members fn lists now, onto the queue (room grows to a million). */
void pt_push_listed(struct rt_proctree *t, size_t *n)
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
		if (!pt_excluded(t, t->listed[i]))
			pt_push(t, n, t->listed[i]);
}

/* Whether member e shares its parent member's address space (KCMP_VM). */
static int parents_vm(struct rt_proctree *t, const struct pt_proc *e)
{
#ifdef SYS_kcmp
	const struct pt_proc *p = pt_find(t, e->ppid);
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
void pt_read_pss(struct rt_proctree *t, struct pt_proc *e)
{
	if ((e->parents_vm = (uint8_t)parents_vm(t, e))) {
		e->pss_kb = e->rss_kb = 0;
		return;
	}
	int *fd = e->first_gen == t->gen ? NULL : &e->fd_smaps;
	ssize_t len = pt_read_kept(t, fd, e->pid, "smaps_rollup");
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
