/*
 * cgroup.c - the cgroup the job runs in (v2, or v1's memory, cpu, cpuacct
 * and pids hierarchies): its CPU usage (the record's cg_usage_usec, JSON
 * cgroup_usage_secs), memory in use, its limit and peak, OOM kills, the CPU
 * quota and the time it throttled the job, tasks and their limit. The one
 * module that locates a cgroup and reads its files.
 *
 * Which cgroup: the tracked job's (c->job_pid), else the recorder's own;
 * looked up again every 5 s, so a job that moves itself into another
 * cgroup (a container runtime, systemd-run, a test) is followed. Memory in
 * use and the throttled time are read every sample; the limits, the peak,
 * the OOM count and the task count every 5 s and at the last sample,
 * carried in between (they rarely move, and at 1 Hz reading them every
 * sample cost as much as the rest of the cgroup). The CPU usage is read
 * every sample, the CPU quota once a second (a quota changed mid-run is
 * seen within a second). A file that is missing leaves its bit clear. When
 * the job moved to another cgroup, the sample after the move carries no
 * usage and no throttled time: the counters of two cgroups are not one
 * counter, and the interval across the move has no value instead of a
 * jump.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collect.h"
#include "rt/sysroot.h"

enum {
	F_MEM_CUR,
	F_MEM_MAX,
	F_MEM_PEAK,
	F_MEM_OOM,
	F_CPU_STAT,
	F_CPU_MAX,
	F_CFS_PERIOD,
	F_PIDS_CUR,
	F_PIDS_MAX,
	F_CPUACCT,   /* v1 cpuacct.usage (v2: the usage is in cpu.stat) */
	F_ACCT_USER, /* v1 cpuacct.usage_user, _sys: a job's group (v2: cpu.stat) */
	F_ACCT_SYS,
	NF
};

/* the limits, peak, OOM and task counts, and where the job is: every
 * RARE-th once-a-second look (and at the last sample) */
#define RARE 5

struct cg_state {
	int v2;
	int moved; /* the CPU files are another cgroup's: this sample starts anew */
	unsigned slow_ticks;
	char key[2600];    /* the paths in use, to notice a move */
	char cpukey[2600]; /* those of the CPU files */
	int fd[NF];
	char *path[NF]; /* each file found, under /sys: opened when read while not kept */
	int lean;       /* no file kept open (rt_cgroup_lean) */
	/* what is read once a second, carried in between */
	uint64_t valid;
	int64_t mem_limit, pids_max, quota;
	uint64_t peak, oom, pids, period;
	/* a job's group (c->cg_fixed): its CPU split, µs, as last read */
	int split_ok;
	uint64_t user_us, sys_us;
};

static void close_all(struct cg_state *st)
{
	for (int i = 0; i < NF; i++) {
		rt_close_fd(&st->fd[i]);
		free(st->path[i]);
		st->path[i] = NULL;
	}
}

/* File i under the first of roots (cgroup mounts) that has it, at path (a
 * cgroup path): kept open, its path kept beside (a lean group's, or one
 * the descriptor limit left unopened, is opened when read). 0, or -1
 * when no root has it. */
static int open_file(struct cg_state *st, int i, const char *const roots[], const char *path,
                     const char *file)
{
	char rel[1400], abs[4200];
	for (int r = 0; roots[r]; r++) {
		snprintf(rel, sizeof(rel), "fs/cgroup%s%s/%s", roots[r],
		         strcmp(path, "/") ? path : "", file);
		int fd = rt_open(RT_SYS, rel);
		int there = fd >= 0 ||
		            ((fd == -EMFILE || fd == -ENFILE) &&
		             rt_path(abs, sizeof(abs), RT_SYS, rel) == 0 && access(abs, R_OK) == 0);
		if (!there)
			continue;
		st->path[i] = strdup(rel);
		if (fd >= 0 && st->lean && st->path[i]) { /* (kept when its path could not be) */
			close(fd);
			fd = -1;
		}
		st->fd[i] = fd;
		return 0;
	}
	return -1;
}

/* Find the job's cgroup; (re)open its files when it changed. */
static void locate(struct rt_collector *c, struct cg_state *st)
{
	char rel[64], buf[4096];
	if (c->job_pid > 0)
		snprintf(rel, sizeof(rel), "%d/cgroup", (int)c->job_pid);
	else
		snprintf(rel, sizeof(rel), "self/cgroup");
	struct rt_cgroup_paths cp;
	if (c->cg_fixed) { /* a job's group, named: it never moves */
		cp = *c->cg_fixed;
	} else {
		ssize_t n = rt_read_small(RT_PROC, rel, buf, sizeof(buf));
		if (n < 0)
			return; /* the job is gone: keep what we had */
		rt_parse_proc_cgroup(buf, (size_t)n, &cp);
	}
	char key[2600];
	snprintf(key, sizeof(key), "%s|%s|%s|%s|%s", cp.v2, cp.memory, cp.cpu, cp.pids, cp.cpuacct);
	if (!strcmp(key, st->key))
		return;
	snprintf(st->key, sizeof(st->key), "%s", key);
	snprintf(key, sizeof(key), "%s|%s|%s", cp.v2, cp.cpu, cp.cpuacct);
	/* the CPU counters are another cgroup's (not on the first look) */
	st->moved = st->cpukey[0] != '\x01' && strcmp(key, st->cpukey) != 0;
	snprintf(st->cpukey, sizeof(st->cpukey), "%s", key);
	close_all(st);
	st->valid = 0;
	static const char *const v2roots[] = {"", "/unified", NULL};
	static const char *const mem1[] = {"/memory", NULL};
	static const char *const cpu1[] = {"/cpu", "/cpu,cpuacct", "/cpuacct,cpu", NULL};
	static const char *const acct1[] = {"/cpuacct", "/cpu,cpuacct", "/cpuacct,cpu", NULL};
	static const char *const pids1[] = {"/pids", NULL};
	st->v2 = cp.v2[0] && !cp.memory[0] && !cp.cpu[0] && !cp.cpuacct[0];
	if (st->v2) {
		static const char *const files[NF] = {
		    "memory.current", "memory.max", "memory.peak", "memory.events",
		    "cpu.stat",       "cpu.max",    NULL,          "pids.current",
		    "pids.max",       NULL,         NULL,          NULL};
		for (int r = 0; v2roots[r]; r++) {
			const char *const root[] = {v2roots[r], NULL};
			for (int i = 0; i < NF; i++)
				if (files[i])
					open_file(st, i, root, cp.v2, files[i]);
			if (st->path[F_MEM_CUR] || st->path[F_CPU_STAT])
				break;
			close_all(st);
		}
		return;
	}
	if (cp.memory[0]) {
		open_file(st, F_MEM_CUR, mem1, cp.memory, "memory.usage_in_bytes");
		open_file(st, F_MEM_MAX, mem1, cp.memory, "memory.limit_in_bytes");
		open_file(st, F_MEM_PEAK, mem1, cp.memory, "memory.max_usage_in_bytes");
		open_file(st, F_MEM_OOM, mem1, cp.memory, "memory.oom_control");
	}
	if (cp.cpu[0]) {
		open_file(st, F_CPU_STAT, cpu1, cp.cpu, "cpu.stat");
		open_file(st, F_CPU_MAX, cpu1, cp.cpu, "cpu.cfs_quota_us");
		open_file(st, F_CFS_PERIOD, cpu1, cp.cpu, "cpu.cfs_period_us");
	}
	if (cp.cpuacct[0])
		open_file(st, F_CPUACCT, acct1, cp.cpuacct, "cpuacct.usage");
	if (cp.cpuacct[0] && c->cg_fixed) {
		open_file(st, F_ACCT_USER, acct1, cp.cpuacct, "cpuacct.usage_user");
		open_file(st, F_ACCT_SYS, acct1, cp.cpuacct, "cpuacct.usage_sys");
	}
	if (cp.pids[0]) {
		open_file(st, F_PIDS_CUR, pids1, cp.pids, "pids.current");
		open_file(st, F_PIDS_MAX, pids1, cp.pids, "pids.max");
	}
}

static int cg_open(struct rt_collector *c, void **self)
{
	(void)c;
	struct cg_state *st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	for (int i = 0; i < NF; i++)
		st->fd[i] = -1;
	st->key[0] = st->cpukey[0] = '\x01'; /* never a real key: the first sample looks */
	*self = st;
	return 0;
}

static void cg_close(struct rt_collector *c, void *self)
{
	(void)c;
	struct cg_state *st = self;
	if (!st)
		return;
	close_all(st);
	free(st);
}

/* Read file i into c->buf (kept open, else opened for this read); its
 * length, or -1. */
static ssize_t rd(struct rt_collector *c, struct cg_state *st, int i)
{
	size_t len;
	if (st->fd[i] >= 0)
		return rt_read_fd(c, st->fd[i], &len) == 0 ? (ssize_t)len : -1;
	int fd = st->path[i] ? rt_open(RT_SYS, st->path[i]) : -1;
	int rc = fd >= 0 ? rt_read_fd(c, fd, &len) : -1;
	if (fd >= 0)
		close(fd);
	return rc == 0 ? (ssize_t)len : -1;
}

void rt_cgroup_lean(struct rt_collector *c)
{
	struct cg_state *st = rt_collector_own(c, &rt_source_cgroup);
	if (!st)
		return;
	st->lean = 1;
	for (int i = 0; i < NF; i++)
		if (st->path[i])
			rt_close_fd(&st->fd[i]);
}

/* The every-5-s values: memory limit, peak, OOM kills, tasks. */
static void read_slow(struct rt_collector *c, struct cg_state *st)
{
	ssize_t n;
	int64_t v;
	st->valid &= ~(uint64_t)(RT_SYS_X_CG_PEAK | RT_SYS_X_CG_OOM | RT_SYS_X_CG_PIDS);
	st->mem_limit = -1;
	if ((n = rd(c, st, F_MEM_MAX)) >= 0 && rt_parse_max_or_u64(c->buf, (size_t)n, &v) == 0)
		st->mem_limit = v;
	if ((n = rd(c, st, F_MEM_PEAK)) >= 0) {
		const char *p = c->buf;
		if (rt_scan_u64(&p, c->buf + n, &st->peak) == 0)
			st->valid |= RT_SYS_X_CG_PEAK;
	}
	/* v2 memory.events "oom_kill N"; v1 memory.oom_control "oom_kill N" (4.13) */
	if ((n = rd(c, st, F_MEM_OOM)) >= 0 &&
	    rt_parse_field_u64(c->buf, (size_t)n, "oom_kill ", &st->oom) == 0)
		st->valid |= RT_SYS_X_CG_OOM;
	if ((n = rd(c, st, F_PIDS_CUR)) >= 0) {
		const char *p = c->buf;
		if (rt_scan_u64(&p, c->buf + n, &st->pids) == 0) {
			st->pids_max = -1;
			if ((n = rd(c, st, F_PIDS_MAX)) >= 0)
				rt_parse_max_or_u64(c->buf, (size_t)n, &st->pids_max);
			st->valid |= RT_SYS_X_CG_PIDS;
		}
	}
}

/* The CPU quota (v2 cpu.max, v1 the CFS files), once a second. */
static void read_quota(struct rt_collector *c, struct cg_state *st)
{
	ssize_t n;
	uint64_t u;
	st->valid &= ~(uint64_t)RT_SYS_X_CG_CPU;
	if (st->v2 && (n = rd(c, st, F_CPU_MAX)) >= 0 &&
	    rt_parse_cg_max(c->buf, (size_t)n, &st->quota, &st->period) == 0)
		st->valid |= RT_SYS_X_CG_CPU;
	if (!st->v2 && (n = rd(c, st, F_CPU_MAX)) >= 0) {
		long long q = strtoll(c->buf, NULL, 10); /* -1: no quota */
		const char *p = c->buf;
		if ((n = rd(c, st, F_CFS_PERIOD)) >= 0 && rt_scan_u64(&p, c->buf + n, &u) == 0 &&
		    u) {
			st->quota = q > 0 ? q : -1;
			st->period = u;
			st->valid |= RT_SYS_X_CG_CPU;
		}
	}
}

/* A job group's user and system time on v1: cpuacct.usage (ns, charged
 * exactly as the scheduler runs it) split as cpuacct.usage_user and _sys
 * say (those two are tick-sampled: their sum is not the usage). A group
 * gone keeps the last (its time no longer grows). */
static void read_split_v1(struct rt_collector *c, struct cg_state *st)
{
	ssize_t n;
	uint64_t u, s, all;
	if ((n = rd(c, st, F_CPUACCT)) < 0 || rt_parse_cg_usage_v1(c->buf, (size_t)n, &all))
		return;
	if ((n = rd(c, st, F_ACCT_USER)) < 0 || rt_parse_cg_usage_v1(c->buf, (size_t)n, &u))
		return;
	if ((n = rd(c, st, F_ACCT_SYS)) < 0 || rt_parse_cg_usage_v1(c->buf, (size_t)n, &s))
		return;
	uint64_t user = u + s ? (uint64_t)((double)all * (double)u / (double)(u + s)) : all;
	/* neither part lower than before (the ticks' share moves): the user
	 * part kept between the last user time and the total less the last
	 * system time */
	uint64_t lo = st->split_ok ? st->user_us : 0;
	uint64_t hi = st->split_ok && all >= st->sys_us ? all - st->sys_us : all;
	user = user < lo ? lo : user > hi ? hi : user;
	st->user_us = user < all ? user : all;
	st->sys_us = all - st->user_us;
	st->split_ok = 1;
}

void rt_cgroup_job_cpu_now(struct rt_collector *c)
{
	struct cg_state *st = rt_collector_own(c, &rt_source_cgroup);
	ssize_t n;
	if (!st || !c->cg_fixed)
		return;
	if (!st->v2) {
		read_split_v1(c, st);
		return;
	}
	uint64_t u, s;
	if ((n = rd(c, st, F_CPU_STAT)) >= 0 &&
	    rt_parse_field_u64(c->buf, (size_t)n, "user_usec ", &u) == 0 &&
	    rt_parse_field_u64(c->buf, (size_t)n, "system_usec ", &s) == 0) {
		st->user_us = u;
		st->sys_us = s;
		st->split_ok = 1;
	}
}

int rt_cgroup_job_cpu(struct rt_collector *c, uint64_t *user_us, uint64_t *sys_us)
{
	const struct cg_state *st = rt_collector_own(c, &rt_source_cgroup);
	if (!st || !st->split_ok)
		return -1;
	*user_us = st->user_us;
	*sys_us = st->sys_us;
	return 0;
}

static void cg_fill(struct rt_collector *c, void *self, struct rt_record *rec)
{
	struct cg_state *st = self;
	st->moved = 0;
	if (c->cg_fixed) /* a named group: where it is may grow (cgrun.c); a compare */
		locate(c, st);
	if (c->slow && (st->slow_ticks++ % RARE == 0 || c->force_slow)) {
		locate(c, st);
		read_slow(c, st);
	}
	if (c->slow)
		read_quota(c, st);
	struct rt_rec_system *s = rec->sys;
	ssize_t n;
	uint64_t valid = st->valid & ~(uint64_t)(RT_SYS_X_CG_MEM | RT_SYS_X_CG_THROTTLE);
	uint64_t usec;
	if ((n = rd(c, st, F_MEM_CUR)) >= 0) {
		const char *p = c->buf;
		if (rt_scan_u64(&p, c->buf + n, &s->cg_mem_used) == 0) {
			s->cg_mem_limit = st->mem_limit;
			valid |= RT_SYS_X_CG_MEM;
		}
	}
	/* v2 cpu.stat usage_usec and throttled_usec; v1 cpuacct.usage (ns) and
	 * cpu.stat throttled_time (ns) */
	if (!st->v2 && !st->moved && (n = rd(c, st, F_CPUACCT)) >= 0 &&
	    rt_parse_cg_usage_v1(c->buf, (size_t)n, &usec) == 0) {
		s->cg_usage_usec = usec;
		rec->h->flags |= RT_REC_HAS_CGROUP;
	}
	if (!st->moved && (n = rd(c, st, F_CPU_STAT)) >= 0) {
		uint64_t t;
		if (st->v2 && rt_parse_cg_usage_v2(c->buf, (size_t)n, &usec) == 0) {
			s->cg_usage_usec = usec;
			rec->h->flags |= RT_REC_HAS_CGROUP;
		}
		if (st->v2 && c->cg_fixed)
			st->split_ok =
			    rt_parse_field_u64(c->buf, (size_t)n, "user_usec ", &st->user_us) ==
			        0 &&
			    rt_parse_field_u64(c->buf, (size_t)n, "system_usec ", &st->sys_us) == 0;
		if (st->v2 && rt_parse_field_u64(c->buf, (size_t)n, "throttled_usec ", &t) == 0) {
			s->cg_throttled_usec = t;
			valid |= RT_SYS_X_CG_THROTTLE;
		} else if (!st->v2 &&
		           rt_parse_field_u64(c->buf, (size_t)n, "throttled_time ", &t) == 0) {
			s->cg_throttled_usec = t / 1000;
			valid |= RT_SYS_X_CG_THROTTLE;
		}
	}
	if (!st->v2 && c->cg_fixed)
		read_split_v1(c, st);
	/* the peak read every 5 s is no lower than what is in use now */
	if ((valid & RT_SYS_X_CG_MEM) && (valid & RT_SYS_X_CG_PEAK) && s->cg_mem_used > st->peak)
		st->peak = s->cg_mem_used;
	s->cg_mem_peak = st->peak;
	s->cg_oom_kills = st->oom + (st->v2 ? 0 : c->cg_oom_below);
	s->cg_pids = st->pids;
	s->cg_pids_max = st->pids_max;
	s->cg_cpu_quota_usec = st->quota;
	s->cg_cpu_period_usec = st->period;
	/* the quota's first home in the record (rt 0.1), beside the usage */
	if ((valid & RT_SYS_X_CG_CPU) && (rec->h->flags & RT_REC_HAS_CGROUP)) {
		s->cg_quota_usec = st->quota;
		s->cg_period_usec = st->period;
		rec->h->flags |= RT_REC_HAS_CG_QUOTA;
	}
	s->ext_valid |= valid;
}

const struct rt_source rt_source_cgroup = {
    .name = "cgroup", .open = cg_open, .fill = cg_fill, .close = cg_close, .job_part = 1};
