/*
 * proctree_reap.c - members that leave: a departed member's last figures
 * kept until the reaper's report of it arrives (wrapper mode), whether a
 * member's reaper was in the tree (its ticks are then in the reaper's
 * cutime), the reports taken and the members found gone since the walk.
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
	if (pt_excluded(t, pid))
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
	 * that peaked between two reads of its status still counts (one
	 * there before tracking: only above its base) */
	struct pt_proc *e = pid > 0 ? pt_find(t, pid) : NULL;
	if (ru->ru_maxrss > 0 && (uint64_t)ru->ru_maxrss > t->peak_hwm_kb &&
	    (!e || (uint64_t)ru->ru_maxrss > e->hwm_base))
		t->peak_hwm_kb = (uint64_t)ru->ru_maxrss;
	/* its entry must not also count as departed */
	if (e) {
		e->ppid = t->self;
		e->reported = 1;
	}
}

/* Members reaped by the reaper whose report has not arrived yet (none
 * once it answered a sync since they were found gone). */
size_t pt_unreported(const struct rt_proctree *t)
{
	size_t n = 0;
	for (size_t i = 0; i < t->cap; i++) {
		const struct pt_proc *e = &t->tab[i];
		n +=
		    e->pid && e->seen != t->gen && e->ppid == t->self && !e->reported && !e->synced;
	}
	return n;
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
		const struct pt_proc *p = pt_find(t, e->ppid);
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
void pt_depart(struct rt_proctree *t, const struct pt_proc *e)
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

/* Member e leaves this sample's figures: it is gone since it was read. */
void pt_drop_member(struct rt_proctree *t, struct pt_proc *e, struct walk_sum *w)
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
	ssize_t len = pt_read_kept(t, e->first_gen == t->gen ? NULL : &e->fd_stat, e->pid, "stat");
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
int pt_refresh_reapers(struct rt_proctree *t, struct walk_sum *w)
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
			struct pt_proc *p = pt_find(t, c->ppid);
			if (!p || p->seen != t->gen || p->gone)
				continue; /* reaped outside the tree, or by the reaper */
			struct rt_pid_stat ps;
			if (reread(t, p, &ps)) {
				pt_drop_member(t, p, w);
				p->left_in = 1;
				more = dropped = 1;
				continue;
			}
			uint64_t ut0 = p->ut, st0 = p->st;
			pt_set_cpu(t, p, &ps, 0); /* its own time: the last exact figure */
			w->ut += p->ut - ut0;
			w->st += p->st - st0;
			w->mf += ps.mf - p->mf;
			p->mf = ps.mf;
			ssize_t len = pt_read_kept(t, p->first_gen == t->gen ? NULL : &p->fd_io,
			                           p->pid, "io");
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
					pt_drop_member(t, q, w);
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
void pt_sync_reports(struct rt_proctree *t)
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
void pt_rescue_missed(struct rt_proctree *t, struct walk_sum *w)
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
			const struct pt_proc *p = pt_find(t, ps.ppid);
			if (!(t->root == 0 && ps.ppid == t->self) &&
			    !(p && p->seen == t->gen && !p->gone))
				continue;
			t->pre_sched = 0;
			pt_account(t, e, &ps, w);
			more = 1;
		}
	}
}

/* Whether member e is gone or exiting now (after the PSS reads). */
int pt_exiting_now(struct rt_proctree *t, struct pt_proc *e)
{
	ssize_t len = pt_read_kept(t, e->first_gen == t->gen ? NULL : &e->fd_stat, e->pid, "stat");
	struct rt_pid_stat ps;
	return len <= 0 || rt_parse_pid_stat(t->buf, (size_t)len, &ps) || ps.start != e->start ||
	       ps.exiting;
}
