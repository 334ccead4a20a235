/*
 * cgjob.c - a job known by its cgroup: where the group is, who it is,
 * who is in it (see cgjob.h).
 *
 * The hierarchies: cgroup v2 at fs/cgroup (pure) or fs/cgroup/unified
 * (hybrid), and v1's controller mounts. A scheduler makes a job's group
 * at the same path in every hierarchy it uses (Slurm's v1 plugin in
 * memory, cpuacct, cpuset, freezer, devices; systemd's units in all), so
 * one path names the group everywhere.
 */
#define _GNU_SOURCE
#include "cgjob.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ocistate.h"
#include "rt/fmt.h"
#include "rt/sysroot.h"

/* The bounds of a walk of a job's members, a sample: deeper and wider
 * than any scheduler nests (Slurm: job, step, task; a pod: its
 * containers), so only a job's owner hiding in nested or countless groups
 * meets them; what they leave unread is said (rt_cgjob_walk.cut) and the
 * run goes on. 512 groups cost about 4 ms a sample here. */
#define MEMBER_DEPTH 64
#define MEMBER_GROUPS 512
/* The processes the process tree reads a sample: each costs about 10 us
 * (its stat and schedstat) and its PSS 70 us every 5 s (smaps_rollup),
 * so 256 keep a sample under 10 ms; more than a 128-rank MPI job has. A
 * bigger job's CPU and memory come from its group's counters. */
#define MEMBER_CAP 256

/* One walk: the members found so far, the groups still to read. */
struct member_walk {
	int top; /* the job's group, held */
	pid_t *out;
	size_t at, cap;
	struct rt_buf q; /* queued groups: a depth byte, a relative path, NUL */
	unsigned queued;
	int capped; /* cap is MEMBER_CAP: members past it go unread */
	int cut, err;
	struct rt_cgjob_walk *st;
	struct rt_buf *rec; /* the groups walked, for the next walk (NULL: not kept) */
};

const char *const rt_cgroup_mounts[] = {
    "",         "/unified", "/memory",  "/cpu,cpuacct", "/cpuacct", "/cpu", "/pids",
    "/freezer", "/cpuset",  "/devices", "/blkio",       "/systemd", NULL};

/* fs/cgroup<mount><path>[/file] relative to /sys. */
static int rel_path(char *rel, size_t cap, const char *mount, const char *path, const char *file)
{
	int n = snprintf(rel, cap, "fs/cgroup%s%s%s%s", mount, strcmp(path, "/") ? path : "",
	                 file ? "/" : "", file ? file : "");
	return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

/* The top of fs/cgroup is a hierarchy only when it is a v2 mount (a v1
 * machine has a tmpfs there, its directories the controllers' mounts). */
static int top_is_v2(void)
{
	char p[4200];
	struct stat st;
	return rt_path(p, sizeof(p), RT_SYS, "fs/cgroup/cgroup.procs") == 0 && stat(p, &st) == 0;
}

int rt_cgroup_exists(const char *mount, const char *path)
{
	char rel[700], p[4800];
	struct stat st;
	if (!*mount && !top_is_v2())
		return 0;
	/* a v1 group: its cgroup.procs (a directory of the tmpfs is none) */
	if (rel_path(rel, sizeof(rel), mount, path, "cgroup.procs") ||
	    rt_path(p, sizeof(p), RT_SYS, rel))
		return 0;
	return stat(p, &st) == 0;
}

/* A hierarchy-relative path: "/" then components, none "." or "..", no
 * empty ones, no control characters; the root itself is refused. */
static int clean_path(const char *in, char *out, size_t cap, char *err, size_t errcap)
{
	size_t o = 0;
	const char *p = in;
	while (*p) {
		while (*p == '/')
			p++;
		if (!*p)
			break;
		size_t n = strcspn(p, "/");
		if ((n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.')) {
			snprintf(err, errcap,
			         "--cgroup: '.' and '..' are not allowed in a cgroup path");
			return -1;
		}
		if (o + n + 2 > cap) {
			snprintf(err, errcap, "--cgroup: the path is too long (at most %zu bytes)",
			         cap - 2);
			return -1;
		}
		out[o++] = '/';
		for (size_t i = 0; i < n; i++) {
			if ((unsigned char)p[i] < 0x20 || p[i] == 0x7f) {
				snprintf(err, errcap, "--cgroup: the path has a control character");
				return -1;
			}
			out[o++] = p[i];
		}
		p += n;
	}
	out[o] = '\0';
	if (!o) {
		snprintf(
		    err, errcap,
		    "--cgroup: the root cgroup is the whole machine (track it without --cgroup)");
		return -1;
	}
	return 0;
}

/* The spec's path relative to the hierarchies, and the mount it named
 * ("" when it named none). */
static int spec_path(const char *spec, char *path, size_t cap, char *mount, size_t mcap, char *err,
                     size_t errcap)
{
	char fsroot[4200];
	mount[0] = '\0';
	snprintf(fsroot, sizeof(fsroot), "%s/fs/cgroup", rt_root(RT_SYS));
	const char *rest = NULL;
	size_t fl = strlen(fsroot);
	if (!strncmp(spec, fsroot, fl) && (spec[fl] == '/' || !spec[fl]))
		rest = spec + fl;
	else if (!strncmp(spec, "/sys/fs/cgroup", 14) && (spec[14] == '/' || !spec[14]))
		rest = spec + 14;
	if (rest && !top_is_v2()) { /* the first component is the mount */
		while (*rest == '/')
			rest++;
		size_t n = strcspn(rest, "/");
		if (n + 2 > mcap || !n) {
			snprintf(err, errcap, "--cgroup %.200s: no hierarchy named in the path",
			         spec);
			return -1;
		}
		snprintf(mount, mcap, "/%.*s", (int)n, rest);
		rest += n;
	}
	if (!rest) {
		const char *c1 = strchr(spec, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		int digits = c1 && c1 > spec && strspn(spec, "0123456789") == (size_t)(c1 - spec);
		if (digits && c2) /* a line of /proc/PID/cgroup */
			rest = c2 + 1;
		else if (spec[0] == '/')
			rest = spec;
	}
	if (!rest) {
		snprintf(err, errcap,
		         "--cgroup %.200s: not a cgroup path (give /sys/fs/cgroup/..., the group's "
		         "path as /proc/PID/cgroup prints it, or a line of that file)",
		         spec);
		return -1;
	}
	return clean_path(rest, path, cap, err, errcap);
}

/* The group in each hierarchy it exists in; the first one found (the
 * named mount first) lists its members. */
static int find_group(struct rt_cgjob *j, const char *named)
{
	struct rt_cgroup_paths *cp = &j->cp;
	memset(cp, 0, sizeof(*cp));
	j->members_mount[0] = '\x01';
	if (*named && rt_cgroup_exists(named, j->path))
		snprintf(j->members_mount, sizeof(j->members_mount), "%s", named);
	for (int i = 0; rt_cgroup_mounts[i]; i++) {
		const char *m = rt_cgroup_mounts[i];
		if (!rt_cgroup_exists(m, j->path))
			continue;
		if (j->members_mount[0] == '\x01')
			snprintf(j->members_mount, sizeof(j->members_mount), "%s", m);
		char *slot = !*m || !strcmp(m, "/unified") ? cp->v2
		             : !strcmp(m, "/memory")       ? cp->memory
		             : !strcmp(m, "/pids")         ? cp->pids
		                                           : NULL;
		if (slot && !*slot)
			snprintf(slot, sizeof(cp->v2), "%s", j->path);
		if (strstr(m, "cpuacct") && !cp->cpuacct[0])
			snprintf(cp->cpuacct, sizeof(cp->cpuacct), "%s", j->path);
		if ((!strcmp(m, "/cpu") || !strcmp(m, "/cpu,cpuacct")) && !cp->cpu[0])
			snprintf(cp->cpu, sizeof(cp->cpu), "%s", j->path);
	}
	return j->members_mount[0] == '\x01' ? -1 : 0;
}

/* Whether a hierarchy has the group's parent but not the group: its
 * scheduler may still be making it there (Slurm makes a job's group in
 * one controller after another). */
static int still_making(const struct rt_cgjob *j)
{
	char parent[512];
	snprintf(parent, sizeof(parent), "%s", j->path);
	char *slash = strrchr(parent, '/');
	if (!slash || slash == parent)
		return 0;
	*slash = '\0';
	for (int i = 0; rt_cgroup_mounts[i]; i++)
		if (rt_cgroup_exists(rt_cgroup_mounts[i], parent) &&
		    !rt_cgroup_exists(rt_cgroup_mounts[i], j->path))
			return 1;
	return 0;
}

int rt_cgjob_resolve(const char *spec, struct rt_cgjob *j, char *err, size_t cap)
{
	char named[32];
	memset(j, 0, sizeof(*j));
	j->dfd = -1;
	err[0] = '\0';
	if (spec_path(spec, j->path, sizeof(j->path), named, sizeof(named), err, cap))
		return -1;
	if (find_group(j, named)) {
		snprintf(
		    err, cap,
		    "--cgroup %.200s: no such cgroup (looked for %.200s in every hierarchy under "
		    "/sys/fs/cgroup); see the path in /proc/PID/cgroup of one of its processes",
		    spec, j->path);
		return -1;
	}
	/* a group just made (the node mode finds it within a quarter second):
	 * up to 200 ms for it to be in every hierarchy its parent is in */
	for (int t = 0; t < 10 && still_making(j); t++) {
		struct timespec ts = {0, 20000000};
		nanosleep(&ts, NULL);
		find_group(j, named);
	}
	rt_cgjob_classify(j->path, j);
	return 0;
}

int rt_cgjob_recheck(struct rt_cgjob *j, int young)
{
	if (!young)
		return 0; /* a group older than that grows no hierarchy */
	struct rt_cgroup_paths before = j->cp;
	char mount[32];
	snprintf(mount, sizeof(mount), "%s", j->members_mount);
	find_group(j, mount);
	if (strcmp(mount, j->members_mount)) {
		rt_cgjob_close(j); /* its members are listed from another hierarchy */
		j->groups_ok = 0;
	}
	return memcmp(&before, &j->cp, sizeof(before)) != 0;
}

/* CPUs of a list as cpuset writes it ("0-3,8,10-11"). */
static unsigned cpu_list_count(const char *s)
{
	unsigned n = 0;
	while (*s) {
		char *e;
		unsigned long a = strtoul(s, &e, 10), b = a;
		if (e == s)
			break;
		if (*e == '-')
			b = strtoul(e + 1, &e, 10);
		n += b >= a && b - a < 65536 ? (unsigned)(b - a + 1) : 0;
		s = *e == ',' ? e + 1 : e;
		if (*e != ',')
			break;
	}
	return n;
}

unsigned rt_cgjob_cpuset_count(const struct rt_cgjob *j)
{
	static const char *const at[][2] = {{"/cpuset", "cpuset.effective_cpus"},
	                                    {"", "cpuset.cpus.effective"},
	                                    {"/unified", "cpuset.cpus.effective"}};
	for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
		char rel[700], buf[1024];
		if (!rt_cgroup_exists(at[i][0], j->path) ||
		    rel_path(rel, sizeof(rel), at[i][0], j->path, at[i][1]))
			continue;
		if (rt_read_small(RT_SYS, rel, buf, sizeof(buf)) > 0 && cpu_list_count(buf))
			return cpu_list_count(buf);
	}
	return 0;
}

/* The path's components, in place in buf (at most max). */
static int split(const char *path, char *buf, size_t cap, char **comp, int max)
{
	snprintf(buf, cap, "%s", path);
	int n = 0;
	for (char *p = buf; *p && n < max;) {
		while (*p == '/')
			*p++ = '\0';
		if (!*p)
			break;
		comp[n++] = p;
		p += strcspn(p, "/");
	}
	return n;
}

static int ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), t = strlen(tail);
	return n >= t && !strcmp(s + n - t, tail);
}

/* Slurm: job_<id or SLUID> below slurm/, slurm_<node>/ (v1), or
 * [<node>_]slurmstepd.scope (v2); the owner's uid_<n> on v1. */
static int classify_slurm(char **c, int n, struct rt_cgjob *j)
{
	int under = 0;
	for (int i = 0; i < n; i++) {
		if (!strcmp(c[i], "slurm") || !strncmp(c[i], "slurm_", 6) ||
		    ends_with(c[i], "slurmstepd.scope"))
			under = 1;
		else if (under && !strncmp(c[i], "uid_", 4))
			rt_copy_text(j->uid, sizeof(j->uid), c[i] + 4);
		else if (under && !strncmp(c[i], "job_", 4) && c[i][4]) {
			snprintf(j->scheduler, sizeof(j->scheduler), "slurm");
			rt_copy_text(j->job_id, sizeof(j->job_id), c[i] + 4);
			return 1;
		}
	}
	j->uid[0] = '\0';
	return 0;
}

/* The pod's uid in a kubepods level: pod<uid> (cgroupfs), or
 * kubepods[-<qos>]-pod<uid with '_' for '-'>.slice (systemd). */
static int pod_level(const char *s, struct rt_cgjob *j)
{
	const char *p = !strncmp(s, "pod", 3) ? s : strstr(s, "-pod");
	if (!p)
		return 0;
	p += *p == '-' ? 4 : 3;
	size_t n = strlen(p);
	if (ends_with(p, ".slice"))
		n -= 6;
	if (n < 8 || n >= sizeof(j->job_id))
		return 0;
	for (size_t i = 0; i < n; i++)
		j->job_id[i] = p[i] == '_' ? '-' : p[i];
	j->job_id[n] = '\0';
	rt_copy_text(j->job_id, sizeof(j->job_id), j->job_id); /* whole characters */
	return 1;
}

static int classify_kubernetes(char **c, int n, struct rt_cgjob *j)
{
	int under = 0;
	snprintf(j->qos, sizeof(j->qos), "guaranteed");
	for (int i = 0; i < n; i++) {
		if (!strcmp(c[i], "kubepods") || !strcmp(c[i], "kubepods.slice")) {
			under = 1;
		} else if (under && (strstr(c[i], "besteffort") || strstr(c[i], "burstable")) &&
		           !strstr(c[i], "-pod") && strncmp(c[i], "pod", 3)) {
			snprintf(j->qos, sizeof(j->qos), "%s",
			         strstr(c[i], "besteffort") ? "besteffort" : "burstable");
		} else if (under && pod_level(c[i], j)) {
			snprintf(j->scheduler, sizeof(j->scheduler), "kubernetes");
			return 1;
		}
	}
	j->qos[0] = '\0';
	return 0;
}

/* A container's id in a level: all hex, at least 12 of it. */
static int container_id(const char *s, size_t n, struct rt_cgjob *j)
{
	if (n < 12 || n >= sizeof(j->job_id) || strspn(s, "0123456789abcdef") < n)
		return 0;
	snprintf(j->job_id, sizeof(j->job_id), "%.*s", (int)n, s);
	return 1;
}

/* The runtime a level names a container of: podman's libpod-<id>[.scope]
 * (cgroupfs, systemd), docker's docker-<id>.scope (systemd) or <id> below
 * docker/ (cgroupfs); its id into j. NULL: none. */
static const char *container_level(const char *s, const char *parent, struct rt_cgjob *j)
{
	int scope = ends_with(s, ".scope");
	size_t len = strlen(s) - (scope ? 6 : 0);
	if (!strncmp(s, "libpod-", 7) && container_id(s + 7, len - 7, j))
		return "podman";
	if (!strncmp(s, "docker-", 7) && scope && container_id(s + 7, len - 7, j))
		return "docker";
	if (parent && !strcmp(parent, "docker") && container_id(s, len, j))
		return "docker";
	return NULL;
}

int rt_cgjob_part_container(const char *dir, char *id, size_t cap)
{
	static const char *const runtimes[] = {"cri-containerd-", "crio-", "docker-", "libpod-"};
	for (size_t i = 0; i < sizeof(runtimes) / sizeof(runtimes[0]); i++)
		if (!strncmp(dir, runtimes[i], strlen(runtimes[i]))) {
			dir += strlen(runtimes[i]);
			break;
		}
	size_t n = strlen(dir) - (ends_with(dir, ".scope") ? 6 : 0);
	if (n < 12 || n >= cap || strspn(dir, "0123456789abcdef") < n)
		return -1;
	snprintf(id, cap, "%.*s", (int)n, dir);
	return 0;
}

static int classify_container(char **c, int n, struct rt_cgjob *j)
{
	for (int i = 0; i < n; i++) {
		const char *rt = container_level(c[i], i ? c[i - 1] : NULL, j);
		if (rt) {
			snprintf(j->scheduler, sizeof(j->scheduler), "%s", rt);
			return 1;
		}
	}
	j->job_id[0] = '\0';
	return 0;
}

/* systemd: the first unit on the path (a service, a scope). */
static int classify_systemd(char **c, int n, struct rt_cgjob *j)
{
	for (int i = 0; i < n; i++)
		if (ends_with(c[i], ".service") || ends_with(c[i], ".scope")) {
			snprintf(j->scheduler, sizeof(j->scheduler), "systemd");
			rt_copy_text(j->job_id, sizeof(j->job_id), c[i]);
			return 1;
		}
	return 0;
}

/* The presets' layouts: each one the classifiers above know. */
static const struct {
	const char *name;
	const char *const globs[6];
} presets[] = {
    {"slurm",
     {"slurm/uid_*/job_*", "slurm_*/uid_*/job_*", "system.slice/slurmstepd.scope/job_*",
      "system.slice/*_slurmstepd.scope/job_*", NULL}},
    {"kubernetes",
     {"kubepods.slice/kubepods-*.slice/kubepods-*-pod*.slice", "kubepods.slice/kubepods-pod*.slice",
      "kubepods/besteffort/pod*", "kubepods/burstable/pod*", "kubepods/pod*", NULL}},
    {"systemd", {"system.slice/*.service", "system.slice/*.scope", NULL}},
    {"podman", {"libpod_parent/libpod-*", "machine.slice/libpod-*.scope", NULL}},
    {"docker", {"docker/*", "system.slice/docker-*.scope", NULL}},
};

const char *const *rt_cgjob_preset(const char *name)
{
	for (size_t i = 0; i < sizeof(presets) / sizeof(presets[0]); i++)
		if (!strcmp(name, presets[i].name))
			return presets[i].globs;
	return NULL;
}

void rt_cgjob_classify(const char *path, struct rt_cgjob *j)
{
	char buf[512], *c[32];
	j->scheduler[0] = j->job_id[0] = j->uid[0] = j->qos[0] = '\0';
	int n = split(path, buf, sizeof(buf), c, 32);
	if (!classify_slurm(c, n, j) && !classify_kubernetes(c, n, j) &&
	    !classify_container(c, n, j))
		classify_systemd(c, n, j);
}

/* The pids of one cgroup.procs (opened in dfd) appended to w: one per
 * line, a line cut between two reads kept for the next. 0, or -errno
 * (-ENOENT/-ENODEV: the group was removed). */
static int read_procs(int dfd, struct member_walk *w)
{
	/* raw: the kernel's cgroup files, read-only, never through a link */
	int fd = openat(dfd, "cgroup.procs", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	char buf[16384];
	size_t have = 0;
	ssize_t r;
	int rc = 0;
	while (w->at < w->cap && (r = read(fd, buf + have, sizeof(buf) - have)) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			rc = -errno;
			break;
		}
		size_t len = have + (size_t)r, start = 0;
		for (size_t i = 0; i < len && w->at < w->cap; i++) {
			if (buf[i] != '\n')
				continue;
			long v = strtol(buf + start, NULL, 10);
			if (v > 0 && v < (1L << 22))
				w->out[w->at++] = (pid_t)v;
			start = i + 1;
		}
		have = len - start;
		if (have >= 32)
			have = 0; /* no pid is that long: not this file's lines */
		memmove(buf, buf + start, have);
	}
	if (w->at >= w->cap && w->capped)
		w->cut |= RT_CGWALK_MEMBERS;
	close(fd);
	return rc;
}

static int removed(int rc);

/* The groups below, queued as paths relative to the job's group (no
 * descriptor is held for a group not being read: a job nesting 80 levels
 * costs two descriptors, not 160). */
static void queue_below(struct member_walk *w, int dfd, const char *rel, unsigned depth,
                        unsigned nlink)
{
	/* a cgroup directory's links are its subdirectories and 2 (kernfs
	 * counts them exactly): a group with none below is not listed, which
	 * a job's leaf groups are (a listing is most of a walk's cost; a
	 * file system that does not count, 1, is listed) */
	if (nlink == 2) {
		close(dfd);
		return;
	}
	DIR *d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return;
	}
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_type != DT_DIR || e->d_name[0] == '.')
			continue;
		if (depth >= MEMBER_DEPTH || w->queued >= MEMBER_GROUPS) {
			w->cut |= depth >= MEMBER_DEPTH ? RT_CGWALK_DEPTH : RT_CGWALK_GROUPS;
			break;
		}
		size_t at = w->q.len;
		int n = snprintf(NULL, 0, "%s%s%s", rel, *rel ? "/" : "", e->d_name);
		if (n >= PATH_MAX) {
			w->cut |= RT_CGWALK_DEPTH; /* deeper than a path can name */
			continue;
		}
		rt_buf_putc(&w->q, (char)(depth + 1));
		rt_buf_printf(&w->q, "%s%s%s", rel, *rel ? "/" : "", e->d_name);
		rt_buf_putc(&w->q, '\0');
		if (w->q.oom)
			w->q.len = at, w->err = w->err ? w->err : -ENOMEM;
		else
			w->queued++;
	}
	closedir(d);
}

/* One group of the walk (rel "" the job's own): its members, then the
 * groups below it queued. 0, or -errno of the group itself. */
static int walk_group(struct member_walk *w, const char *rel, unsigned depth)
{
	/* raw: the job's cgroup directories (cgroupfs: no links), read-only */
	int dfd = openat(w->top, *rel ? rel : ".", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	struct stat sb;
	unsigned nlink = fstat(dfd, &sb) == 0 ? (unsigned)sb.st_nlink : 0;
	int rc = read_procs(dfd, w);
	w->st->groups++;
	if (rc || w->at >= w->cap) {
		close(dfd);
		return rc;
	}
	if (w->rec) { /* [depth][its link count][rel NUL] */
		rt_buf_putc(w->rec, (char)depth);
		rt_buf_put(w->rec, (const char *)&nlink, sizeof(nlink));
		rt_buf_put(w->rec, rel, strlen(rel) + 1);
	}
	queue_below(w, dfd, rel, depth, nlink);
	return 0;
}

/* The walk over the groups the last one found, each read again while
 * its link count says the same groups are below it (kernfs counts a
 * directory's subdirectories: one made or removed below changes it; one
 * removed and made again under the same name is read all the same). 0
 * when done, 1 when the groups changed (walk again, listing), or -errno
 * of the job's own group. */
static int walk_kept(struct rt_cgjob *j, struct member_walk *w)
{
	for (size_t at = 0; at < j->groups.len && w->at < w->cap;) {
		const char *e = j->groups.p + at, *rel = e + 1 + sizeof(unsigned);
		unsigned nlink;
		memcpy(&nlink, e + 1, sizeof(nlink));
		at += 1 + sizeof(nlink) + strlen(rel) + 1;
		/* raw: the job's cgroup directories (cgroupfs: no links), read-only */
		int dfd = openat(w->top, *rel ? rel : ".",
		                 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		struct stat sb;
		if (dfd < 0 && !*rel)
			return -errno;
		if (dfd < 0 || fstat(dfd, &sb) || (unsigned)sb.st_nlink != nlink) {
			if (dfd >= 0)
				close(dfd);
			return 1;
		}
		int rc = read_procs(dfd, w);
		w->st->groups++;
		close(dfd);
		if (rc && !*rel)
			return rc;
		if (rc && removed(rc))
			return 1;
		if (rc && !w->err)
			w->err = rc; /* a subgroup unread: members may be hidden */
	}
	w->cut |= j->groups_cut;
	return 0;
}

/* Whether an error means the group is no longer there (its end) rather
 * than that it could not be read now (EMFILE, ENOMEM, EACCES: retried). */
static int removed(int rc)
{
	return rc == -ENOENT || rc == -ENODEV;
}

/* The group's directory in the hierarchy that lists its members, kept
 * open from then on (no path walk a sample). 0 or -errno. */
static int open_dir(struct rt_cgjob *j)
{
	char rel[700], p[4800];
	if (j->dfd >= 0)
		return 0;
	if (rel_path(rel, sizeof(rel), j->members_mount, j->path, NULL) ||
	    rt_path(p, sizeof(p), RT_SYS, rel))
		return -ENAMETOOLONG;
	/* raw: the job's cgroup directory (cgroupfs, the kernel's), read-only */
	j->dfd = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return j->dfd >= 0 ? 0 : errno == ENODEV ? -ENOENT : -errno;
}

uint64_t rt_cgjob_ino(struct rt_cgjob *j)
{
	struct stat st;
	uint64_t ino = open_dir(j) == 0 && fstat(j->dfd, &st) == 0 ? (uint64_t)st.st_ino : 0;
	if (j->lean)
		rt_cgjob_close(j);
	return ino;
}

/* The walk that lists: the job's group, then each group below, breadth
 * first, the groups walked kept for the next. 0, or -errno of the job's
 * own group. */
static int walk_listing(struct rt_cgjob *j, struct member_walk *w)
{
	rt_buf_reset(&j->groups);
	w->rec = &j->groups;
	/* a group removed (even if one is made again at its path) is gone */
	int rc = walk_group(w, "", 0);
	size_t head = 0;
	while (!rc && w->at < w->cap && head < w->q.len) {
		if (w->st->groups >= MEMBER_GROUPS) {
			w->cut |= RT_CGWALK_GROUPS;
			break;
		}
		char sub[PATH_MAX + 1];
		unsigned depth = (unsigned char)w->q.p[head];
		snprintf(sub, sizeof(sub), "%s", w->q.p + head + 1);
		head += strlen(w->q.p + head + 1) + 2;
		int src = walk_group(w, sub, depth);
		if (src && !removed(src) && !w->err)
			w->err = src; /* a subgroup unread: members may be hidden */
	}
	/* (kept only whole: every group below read, none unread for an error) */
	j->groups_ok = !rc && !w->err && w->at < w->cap && !j->groups.oom && !w->q.oom;
	j->groups_cut = w->cut & (RT_CGWALK_DEPTH | RT_CGWALK_GROUPS);
	rt_buf_free(&w->q);
	return rc;
}

ssize_t rt_cgjob_members(struct rt_cgjob *j, pid_t *out, size_t cap)
{
	struct rt_cgjob_walk *st = &j->walk;
	memset(st, 0, sizeof(*st));
	int orc = open_dir(j);
	if (orc)
		return st->err = orc;
	struct member_walk w = {.top = j->dfd, .out = out, .st = st};
	w.capped = cap >= MEMBER_CAP;
	w.cap = w.capped ? MEMBER_CAP : cap;
	int rc = j->groups_ok ? walk_kept(j, &w) : 1;
	if (rc == 1) { /* (the groups changed: read again, listing) */
		w.at = 0, w.cut = w.err = 0;
		st->groups = 0;
		rc = walk_listing(j, &w);
	}
	if (j->lean)
		rt_cgjob_close(j);
	st->cut = w.cut;
	st->err = rc ? (removed(rc) ? -ENOENT : rc) : w.err;
	return rc ? st->err : (ssize_t)w.at;
}

void rt_cgjob_close(struct rt_cgjob *j)
{
	if (j->dfd >= 0)
		close(j->dfd);
	j->dfd = -1;
}

void rt_cgjob_free(struct rt_cgjob *j)
{
	rt_cgjob_close(j);
	rt_buf_free(&j->groups);
}

const char *rt_env_lookup(const char *env, size_t len, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = env, *end = env ? env + len : NULL; p && p < end;
	     p += strnlen(p, (size_t)(end - p)) + 1)
		if ((size_t)(end - p) > n && !strncmp(p, name, n) && p[n] == '=')
			/* a value that ends within the block, or none */
			return memchr(p + n + 1, '\0', (size_t)(end - p) - n - 1) ? p + n + 1
			                                                          : NULL;
	return NULL;
}

/* A member's environment into who, pointing at buf of cap bytes (0), or
 * -1 (gone, not ours to read). */
static int read_environ(pid_t pid, struct rt_cgjob_who *who, char *buf, size_t cap)
{
	char rel[48];
	snprintf(rel, sizeof(rel), "%d/environ", (int)pid);
	int fd = rt_open(RT_PROC, rel);
	if (fd < 0)
		return -1;
	ssize_t n = rt_pread_to_eof(fd, buf, cap);
	close(fd);
	if (n <= 0)
		return -1;
	who->env = buf;
	who->envlen = (size_t)n;
	who->member = pid;
	return 0;
}

/* The member's real uid (status "Uid:"); -1 when unreadable. */
static long member_uid(pid_t pid)
{
	char rel[48], buf[4096];
	snprintf(rel, sizeof(rel), "%d/status", (int)pid);
	ssize_t n = rt_read_small(RT_PROC, rel, buf, sizeof(buf));
	const char *u = n > 0 ? strstr(buf, "\nUid:\t") : NULL;
	return u ? (long)strtoul(u + 6, NULL, 10) : -1;
}

/* The most common non-root real uid among the members (root's are the
 * scheduler's own: slurmstepd, a pod's pause), -1 when none. */
static long members_uid(const pid_t *pids, ssize_t n)
{
	long uid[64];
	int count[64], k = 0, best = -1;
	for (ssize_t i = 0; i < n && i < 64; i++) {
		long u = member_uid(pids[i]);
		int at = 0;
		while (at < k && uid[at] != u)
			at++;
		if (u <= 0)
			continue;
		if (at == k)
			uid[k] = u, count[k++] = 0;
		if (++count[at] > (best < 0 ? 0 : count[best]))
			best = at;
	}
	return best < 0 ? -1 : uid[best];
}

/* A user's name from /etc/passwd (read here, bounded: no name service is
 * asked from root's node mode), else the number, into out. */
static void uid_text(long uid, char *out, size_t cap)
{
	static char pw[65536];
	/* raw: the system's user list (root's), read-only, never blocking */
	int fd = open("/etc/passwd", O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? rt_pread_to_eof(fd, pw, sizeof(pw)) : -1;
	if (fd >= 0)
		close(fd);
	snprintf(out, cap, "%ld", uid);
	for (char *line = n > 0 ? pw : NULL, *end; line && *line; line = end) {
		end = strchr(line, '\n');
		if (end)
			*end++ = '\0';
		char *f[4] = {line, NULL, NULL, NULL};
		for (int i = 1; i < 4 && f[i - 1]; i++)
			if ((f[i] = strchr(f[i - 1], ':')))
				*f[i]++ = '\0';
		if (f[3] && !strcmp(f[2], out)) { /* its uid field is the number, exactly */
			rt_copy_text(out, cap, f[0]);
			return;
		}
	}
}

/* Who owns the job, from what its processes cannot forge: the path's
 * uid_N (Slurm's v1 layout), else the most common non-root real uid of
 * its members, else its group directory's owner. */
static void job_user(const struct rt_cgjob *j, const pid_t *pids, ssize_t n, char *out, size_t cap)
{
	struct stat st;
	long uid = j->uid[0] ? strtol(j->uid, NULL, 10) : members_uid(pids, n);
	if (uid < 0 && j->dfd >= 0 && fstat(j->dfd, &st) == 0)
		uid = (long)st.st_uid;
	out[0] = '\0';
	if (uid >= 0)
		uid_text(uid, out, cap);
}

void rt_cgjob_who_free(struct rt_cgjob_who *who)
{
	free(who->env);
	who->env = NULL;
	who->envlen = 0;
}

void rt_cgjob_who_copy(struct rt_cgjob_who *to, const struct rt_cgjob_who *from)
{
	rt_cgjob_who_free(to);
	to->member = from->member;
	if (from->envlen && (to->env = malloc(from->envlen)))
		to->envlen = from->envlen;
	if (to->env)
		memcpy(to->env, from->env, from->envlen);
	memcpy(to->name, from->name, sizeof(to->name));
	memcpy(to->user, from->user, sizeof(to->user));
	memcpy(to->pod, from->pod, sizeof(to->pod));
	memcpy(to->ns, from->ns, sizeof(to->ns));
	to->named = from->named;
}

void rt_cgjob_identify(struct rt_cgjob *j, struct rt_cgjob_who *who)
{
	pid_t pids[64];
	ssize_t n = rt_cgjob_members(j, pids, 64);
	const char *want = !strcmp(j->scheduler, "slurm")        ? "SLURM_JOB_NAME"
	                   : !strcmp(j->scheduler, "kubernetes") ? "HOSTNAME"
	                                                         : NULL;
	static char env[RT_ENV_MAX];
	rt_cgjob_who_free(who);
	who->member = 0;
	who->named = 0;
	who->name[0] = who->user[0] = who->pod[0] = who->ns[0] = '\0';
	for (ssize_t i = 0; i < n; i++) {
		struct rt_cgjob_who one = {0};
		if (read_environ(pids[i], &one, env, sizeof(env)))
			continue;
		int named = want && rt_env_lookup(one.env, one.envlen, want);
		if (!who->member || named) {
			rt_cgjob_who_copy(who, &one);
			who->named = named;
		}
		if (named || !want)
			break;
	}
	const char *name = NULL;
	if (!strcmp(j->scheduler, "slurm"))
		name = rt_env_lookup(who->env, who->envlen, "SLURM_JOB_NAME");
	else if (!strcmp(j->scheduler, "kubernetes"))
		name = rt_env_lookup(who->env, who->envlen, "HOSTNAME");
	struct rt_oci_names oci;
	if ((!strcmp(j->scheduler, "podman") || !strcmp(j->scheduler, "docker")) &&
	    rt_oci_names(j->scheduler, j->job_id, &oci) == 0) {
		name = oci.container;
		who->named = 1; /* (by its runtime's files: no environment to wait for) */
		rt_copy_text(who->pod, sizeof(who->pod), oci.pod);
		rt_copy_text(who->ns, sizeof(who->ns), oci.ns);
	}
	/* a name is the job's to choose; who it is (SLURM_JOB_USER) is not */
	rt_copy_text(who->name, sizeof(who->name), name ? name : j->job_id);
	job_user(j, pids, n, who->user, sizeof(who->user));
}
