/*
 * cgparts.c - the OOM kills in a job's subtree of groups, its group's
 * high-water mark and limit, and each part's figures (see cgparts.h).
 */
#define _GNU_SOURCE
#include "cgparts.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rt/fmt.h"
#include "rt/sysroot.h"

#define WALK_DEPTH 64

/* The path of fs/cgroup<mount><path> under the system's root. 0 or -1. */
static int group_path(char *p, size_t cap, const char *mount, const char *path)
{
	char rel[700];
	int n = snprintf(rel, sizeof(rel), "fs/cgroup%s%s", mount, path);
	return n < 0 || (size_t)n >= sizeof(rel) || rt_path(p, cap, RT_SYS, rel) ? -1 : 0;
}

/* The directory fs/cgroup<mount><path> (read-only), -1 when it is not. */
static int open_dir(const char *mount, const char *path)
{
	char p[4800];
	if (group_path(p, sizeof(p), mount, path))
		return -1;
	/* raw: a job's cgroup directory (cgroupfs, the kernel's), read-only */
	return open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

/* The group rel below the one open in dfd ("." itself), read-only. */
static int open_sub(int dfd, const char *rel)
{
	/* raw: a job's cgroup directory (cgroupfs: no links), read-only */
	return openat(dfd, rel, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/* A small file of the group open in dfd, NUL-terminated; its length or -1. */
static ssize_t read_at(int dfd, const char *file, char *buf, size_t cap)
{
	/* raw: a cgroup's counter file, read-only, never through a link */
	int fd = openat(dfd, file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return -1;
	ssize_t n = rt_pread_all(fd, buf, cap - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return n;
}

/* The number of a one-number file, or of a "key N" line when key is set. */
static int read_u64(int dfd, const char *file, const char *key, uint64_t *out)
{
	char buf[1024];
	ssize_t n = read_at(dfd, file, buf, sizeof(buf));
	if (n <= 0)
		return -1;
	if (key)
		return rt_parse_field_u64(buf, (size_t)n, key, out);
	const char *p = buf;
	return rt_scan_u64(&p, buf + n, out);
}

/* A limit file ("max", a number, v1's huge "none"): bytes or -1. */
static int64_t read_limit(int dfd, const char *file)
{
	char buf[64];
	int64_t v;
	ssize_t n = read_at(dfd, file, buf, sizeof(buf));
	return n > 0 && rt_parse_max_or_u64(buf, (size_t)n, &v) == 0 ? v : -1;
}

/* The memory figures of one group (v2 or v1 names): peak, limit, own OOM
 * counter, limit hits. 0 when its peak was read. */
struct memfig {
	uint64_t peak, oom, hits;
	int64_t limit;
};
static int read_memfig(int dfd, int v2, struct memfig *m)
{
	memset(m, 0, sizeof(*m));
	m->limit = read_limit(dfd, v2 ? "memory.max" : "memory.limit_in_bytes");
	if (v2) {
		read_u64(dfd, "memory.events", "oom_kill ", &m->oom);
		read_u64(dfd, "memory.events", "max ", &m->hits);
	} else {
		read_u64(dfd, "memory.oom_control", "oom_kill ", &m->oom);
		read_u64(dfd, "memory.failcnt", NULL, &m->hits);
	}
	return read_u64(dfd, v2 ? "memory.peak" : "memory.max_usage_in_bytes", NULL, &m->peak);
}

/* The part named name (a group right below the job's), made if new. */
static struct rt_cgpart *part_of(struct rt_cgparts *p, const char *name)
{
	for (unsigned i = 0; i < p->npart; i++)
		if (!strcmp(p->part[i].name, name))
			return &p->part[i];
	if (p->npart >= RT_CGPARTS_MAX || strlen(name) >= sizeof(p->part[0].name))
		return NULL;
	struct rt_cgpart *np = &p->part[p->npart++];
	memset(np, 0, sizeof(*np));
	snprintf(np->name, sizeof(np->name), "%s", name);
	np->cpu_secs = -1;
	np->mem_limit = -1;
	return np;
}

/* One group below the job's (v1): its own OOM counter, by its inode. */
static void count_group(struct rt_cgparts *p, int dfd, int part)
{
	struct stat st;
	uint64_t oom = 0;
	if (fstat(dfd, &st) < 0 || read_u64(dfd, "memory.oom_control", "oom_kill ", &oom))
		return;
	for (unsigned i = 0; i < p->nseen; i++)
		if (p->seen[i].ino == (uint64_t)st.st_ino) {
			p->seen[i].oom = oom > p->seen[i].oom ? oom : p->seen[i].oom;
			return;
		}
	if (p->nseen == p->seencap && p->seencap < RT_CGPARTS_GROUPS) {
		unsigned cap = p->seencap ? p->seencap * 2 : 8;
		struct rt_cgparts_seen *ns = realloc(p->seen, cap * sizeof(*ns));
		if (ns)
			p->seen = ns, p->seencap = cap;
	}
	if (p->nseen < p->seencap)
		p->seen[p->nseen++] = (struct rt_cgparts_seen){(uint64_t)st.st_ino, oom, part};
}

/* The index of the part a path below the job's group belongs to. */
static int part_index(struct rt_cgparts *p, const char *rel)
{
	char first[64];
	size_t n = strcspn(rel, "/");
	if (n >= sizeof(first))
		return -1;
	memcpy(first, rel, n);
	first[n] = '\0';
	struct rt_cgpart *pt = part_of(p, first);
	return pt ? (int)(pt - p->part) : -1;
}

/* v1: every group below the job's (breadth first, bounded), its OOM
 * counter counted; a queue of paths relative to top, no descriptor held
 * but the one being read. */
static void walk_oom(struct rt_cgparts *p, int top)
{
	struct rt_buf q = {0};
	rt_buf_putc(&q, 0);
	rt_buf_putc(&q, '\0'); /* the job's own group: depth 0, "" */
	unsigned groups = 0;
	for (size_t head = 0; head < q.len && groups < RT_CGPARTS_GROUPS && !q.oom; groups++) {
		unsigned depth = (unsigned char)q.p[head];
		char rel[PATH_MAX];
		snprintf(rel, sizeof(rel), "%s", q.p + head + 1);
		head += strlen(q.p + head + 1) + 2;
		int dfd = open_sub(top, *rel ? rel : ".");
		if (dfd < 0)
			continue;
		if (*rel)
			count_group(p, dfd, part_index(p, rel));
		DIR *d = depth < WALK_DEPTH ? fdopendir(dfd) : NULL;
		if (!d) {
			close(dfd);
			continue;
		}
		for (struct dirent *e; (e = readdir(d));)
			if (e->d_type == DT_DIR && e->d_name[0] != '.' &&
			    strlen(rel) + strlen(e->d_name) + 2 < sizeof(rel)) {
				rt_buf_putc(&q, (char)(depth + 1));
				rt_buf_printf(&q, "%s%s%s", rel, *rel ? "/" : "", e->d_name);
				rt_buf_putc(&q, '\0');
			}
		closedir(d);
	}
	rt_buf_free(&q);
	p->below_oom = p->carried;
	for (unsigned i = 0; i < RT_CGPARTS_MAX; i++)
		if (i < p->npart)
			p->part[i].oom_kills = 0;
	for (unsigned i = 0; i < p->nseen; i++) {
		p->below_oom += p->seen[i].oom;
		if (p->seen[i].part >= 0)
			p->part[p->seen[i].part].oom_kills += p->seen[i].oom;
	}
}

/* The CPU a part's group was charged, seconds (-1: unread). */
static double part_cpu(int cpu_top, int v2, const char *name)
{
	uint64_t v;
	int dfd = cpu_top >= 0 ? open_sub(cpu_top, name) : -1;
	if (dfd < 0)
		return -1;
	int rc = v2 ? read_u64(dfd, "cpu.stat", "usage_usec ", &v)
	            : read_u64(dfd, "cpuacct.usage", NULL, &v);
	close(dfd);
	return rc ? -1 : v2 ? (double)v / 1e6 : (double)v / 1e9;
}

/* The groups right below the job's: each part's memory and CPU figures
 * (a part gone keeps what was read last). */
static void read_parts(struct rt_cgparts *p, int top, int cpu_top, int v2)
{
	DIR *d;
	int dfd = open_sub(top, "."); /* (again: the listing closes it) */
	if (dfd < 0 || !(d = fdopendir(dfd))) {
		if (dfd >= 0)
			close(dfd);
		return;
	}
	for (struct dirent *e; (e = readdir(d));) {
		struct rt_cgpart *pt;
		struct memfig m;
		if (e->d_type != DT_DIR || e->d_name[0] == '.' || !(pt = part_of(p, e->d_name)))
			continue;
		int pfd = open_sub(top, e->d_name);
		if (pfd >= 0 && read_memfig(pfd, v2, &m) == 0) {
			pt->mem_peak = m.peak > pt->mem_peak ? m.peak : pt->mem_peak;
			pt->mem_limit = m.limit;
			if (v2) /* (hierarchical there: the part's subtree) */
				pt->oom_kills = m.oom > pt->oom_kills ? m.oom : pt->oom_kills;
		}
		if (pfd >= 0)
			close(pfd);
		double cpu = part_cpu(cpu_top, v2, e->d_name);
		if (cpu > pt->cpu_secs)
			pt->cpu_secs = cpu;
	}
	closedir(d);
}

static const char *const v2mounts[] = {"", "/unified", NULL};

/* The job's group in the memory hierarchy and the CPU one (v1 cpuacct). */
static void open_tops(const struct rt_cgjob *j, int *mem, int *cpu, int *v2)
{
	static const char *const acct[] = {"/cpuacct", "/cpu,cpuacct", "/cpuacct,cpu", NULL};
	*mem = *cpu = -1;
	*v2 = !j->cp.memory[0] && j->cp.v2[0];
	if (!*v2) {
		*mem = j->cp.memory[0] ? open_dir("/memory", j->cp.memory) : -1;
		for (int i = 0; acct[i] && *cpu < 0 && j->cp.cpuacct[0]; i++)
			*cpu = open_dir(acct[i], j->cp.cpuacct);
		return;
	}
	for (int i = 0; v2mounts[i] && *mem < 0; i++)
		if (rt_cgroup_exists(v2mounts[i], j->cp.v2))
			*mem = open_dir(v2mounts[i], j->cp.v2);
	*cpu = *mem >= 0 ? dup(*mem) : -1;
}

void rt_cgparts_read(struct rt_cgparts *p, const struct rt_cgjob *j)
{
	int top, cpu_top, v2;
	struct memfig m;
	open_tops(j, &top, &cpu_top, &v2);
	if (top >= 0 && read_memfig(top, v2, &m) == 0) {
		p->known = 1;
		p->mem_peak = m.peak > p->mem_peak ? m.peak : p->mem_peak;
		p->mem_limit = m.limit;
		p->own_oom = m.oom > p->own_oom ? m.oom : p->own_oom;
		p->limit_hits = m.hits > p->limit_hits ? m.hits : p->limit_hits;
	}
	if (top >= 0) {
		read_parts(p, top, cpu_top, v2);
		if (!v2)
			walk_oom(p, top);
		close(top);
	}
	if (cpu_top >= 0)
		close(cpu_top);
}

/* The path of the job's group in the memory hierarchy (v2: its one). */
static int memory_path(const struct rt_cgjob *j, char *p, size_t cap)
{
	if (j->cp.memory[0])
		return group_path(p, cap, "/memory", j->cp.memory);
	for (int i = 0; j->cp.v2[0] && v2mounts[i]; i++)
		if (rt_cgroup_exists(v2mounts[i], j->cp.v2))
			return group_path(p, cap, v2mounts[i], j->cp.v2);
	return -1;
}

int rt_cgparts_watch_in(int ino, const struct rt_cgjob *j)
{
	char p[4800];
	if (ino < 0 || memory_path(j, p, sizeof(p)))
		return -1;
	return inotify_add_watch(ino, p, IN_CREATE | IN_ONLYDIR);
}

int rt_cgparts_watch(const struct rt_cgjob *j)
{
	int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (fd >= 0 && rt_cgparts_watch_in(fd, j) < 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

int rt_cgparts_made(int fd)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	int made = 0;
	for (ssize_t n; (n = read(fd, buf, sizeof(buf))) > 0;)
		made = 1; /* (drained: which group is read by the listing) */
	return made;
}

void rt_cgparts_free(struct rt_cgparts *p)
{
	free(p->seen);
	p->seen = NULL;
	p->nseen = p->seencap = 0;
}

void rt_cgparts_carry(struct rt_cgparts *p, uint64_t below)
{
	if (below > p->below_oom) {
		p->carried = below - p->below_oom;
		p->below_oom = below;
	}
}

uint64_t rt_cgparts_oom(const struct rt_cgparts *p)
{
	return p->own_oom + p->below_oom;
}
