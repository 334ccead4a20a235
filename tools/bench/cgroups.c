/*
 * cgroups.c - the job groups the node benchmarks make (node.c, jobcaps.c)
 * in this machine's real hierarchies, the processes they put in them, and
 * their removal. Not a benchmark: helpers (bench.h).
 */
#include "bench.h"

#include "cgjob.h"

/* fs/cgroup<mount><top>[/g<i>] into p (i < 0: top itself). */
static void group_path(char *p, size_t cap, const char *mount, const char *top, int i)
{
	if (i < 0)
		snprintf(p, cap, "/sys/fs/cgroup%s%s", mount, top);
	else
		snprintf(p, cap, "/sys/fs/cgroup%s%s/g%d", mount, top, i);
}

/* (cpuset takes no task until it is given CPUs: left out) */
static int usable(const char *mount)
{
	return !strstr(mount, "cpuset") && rt_cgroup_exists(mount, "/");
}

int bench_cg_make(const char *top, int n)
{
	for (int m = 0; rt_cgroup_mounts[m]; m++) {
		if (!usable(rt_cgroup_mounts[m]))
			continue;
		char p[600];
		for (int i = -1; i < n; i++) {
			group_path(p, sizeof(p), rt_cgroup_mounts[m], top, i);
			if (mkdir(p, 0755) && errno != EEXIST)
				return -1;
		}
	}
	return 0;
}

void bench_cg_join(const char *top, int i)
{
	for (int m = 0; rt_cgroup_mounts[m]; m++) {
		char p[640];
		if (!usable(rt_cgroup_mounts[m]))
			continue;
		group_path(p, sizeof(p) - 16, rt_cgroup_mounts[m], top, i);
		strcat(p, "/cgroup.procs");
		FILE *f = fopen(p, "w");
		if (f) {
			fprintf(f, "%d\n", (int)getpid());
			fclose(f);
		}
	}
}

void bench_cg_remove(const char *top, int n, pid_t *members, int nmembers)
{
	for (int i = 0; i < nmembers; i++)
		if (members[i] > 0) {
			kill(members[i], SIGKILL);
			waitpid(members[i], NULL, 0);
		}
	for (int m = 0; rt_cgroup_mounts[m]; m++) {
		char p[600];
		for (int i = n - 1; i >= -1; i--) {
			group_path(p, sizeof(p), rt_cgroup_mounts[m], top, i);
			for (int t = 0; t < 50 && rmdir(p) && errno == EBUSY; t++)
				usleep(20000); /* its last task is still leaving */
		}
	}
}
