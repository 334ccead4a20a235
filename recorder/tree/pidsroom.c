/* pidsroom.c - the room left for processes (pidsroom.h). */
#define _GNU_SOURCE
#include "pidsroom.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static long read_long(const char *dir, const char *name, int *is_max)
{
	char p[4200], buf[64];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	/* raw: /proc and cgroupfs, read-only */
	FILE *f = fopen(p, "re");
	if (!f)
		return -1;
	long v = -1;
	if (fgets(buf, sizeof(buf), f)) {
		if (is_max && !strncmp(buf, "max", 3))
			*is_max = 1;
		else
			v = strtol(buf, NULL, 10);
	}
	fclose(f);
	return v;
}

/* This process's pids cgroup directory: v1's pids hierarchy, or v2's. */
static int pids_dir(char *out, size_t cap)
{
	/* raw: /proc, read-only */
	FILE *f = fopen("/proc/self/cgroup", "re");
	char line[4200];
	int found = 0;
	while (f && !found && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2)
			continue;
		*c2 = '\0';
		const char *ctl = c1 + 1, *path = c2 + 1;
		if (strstr(ctl, "pids") && strlen(ctl) < 40) /* v1: N:pids:/path */
			found = snprintf(out, cap, "/sys/fs/cgroup/pids%s", path) < (int)cap;
		else if (!strcmp(line, "0") && !*ctl &&
		         access("/sys/fs/cgroup/cgroup.controllers", F_OK) == 0)
			found = snprintf(out, cap, "/sys/fs/cgroup%s", path) < (int)cap;
	}
	if (f)
		fclose(f);
	return found;
}

/* The least room of the pids cgroups from this one up to the root. */
static long cgroup_room(char *why, size_t cap)
{
	char dir[4200];
	if (!pids_dir(dir, sizeof(dir)))
		return -1;
	long best = -1;
	for (;;) {
		int unlimited = 0;
		long max = read_long(dir, "pids.max", &unlimited);
		long cur = read_long(dir, "pids.current", NULL);
		if (max >= 0 && cur >= 0 && !unlimited && (best < 0 || max - cur < best)) {
			best = max > cur ? max - cur : 0;
			snprintf(why, cap, "the pids cgroup %s allows %ld, %ld in use", dir, max,
			         cur);
		}
		char *slash = strrchr(dir, '/');
		if (!slash || slash == dir || !strcmp(dir, "/sys/fs/cgroup") ||
		    !strcmp(dir, "/sys/fs/cgroup/pids"))
			break;
		*slash = '\0';
	}
	return best;
}

/* The user's tasks, as RLIMIT_NPROC counts them (by real uid). */
static long user_tasks(uid_t uid)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	long n = 0;
	while (d && (e = readdir(d))) {
		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		char p[300], line[256];
		snprintf(p, sizeof(p), "/proc/%s/status", e->d_name);
		/* raw: /proc, read-only */
		FILE *f = fopen(p, "re");
		unsigned long ruid = (unsigned long)-1;
		long threads = 1;
		while (f && fgets(line, sizeof(line), f)) {
			sscanf(line, "Uid: %lu", &ruid);
			sscanf(line, "Threads: %ld", &threads);
		}
		if (f)
			fclose(f);
		if (ruid == (unsigned long)uid)
			n += threads;
	}
	if (d)
		closedir(d);
	return n;
}

static long nproc_room(char *why, size_t cap)
{
	struct rlimit rl;
	if (getuid() == 0 || getrlimit(RLIMIT_NPROC, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY ||
	    rl.rlim_cur > 1000000)
		return -1;
	long used = user_tasks(getuid());
	long room = (long)rl.rlim_cur > used ? (long)rl.rlim_cur - used : 0;
	snprintf(why, cap, "RLIMIT_NPROC allows %ld processes, %ld in use", (long)rl.rlim_cur,
	         used);
	return room;
}

long rt_pids_room(char *why, size_t cap)
{
	char w1[4400] = "", w2[200] = "";
	long a = cgroup_room(w1, sizeof(w1)), b = nproc_room(w2, sizeof(w2));
	if (a < 0 && b < 0)
		return -1;
	int first = a >= 0 && (b < 0 || a <= b);
	snprintf(why, cap, "%s", first ? w1 : w2);
	return first ? a : b;
}
