/*
 * golden_run.c - record a fixture host into a real store, step by step.
 *
 *   golden_run FIXTURE_DIR WORK_DIR STORE_DIR
 *
 * FIXTURE_DIR holds step0/, step1/, ... Each step is copied over WORK_DIR
 * (in place, so files the collectors keep open see the new content) before
 * one sample is taken on the fake clock (2026-01-01T00:00:00Z, +1 s per
 * step). statvfs answers come from WORK_DIR/statvfs.txt
 * ("mount_point total free avail" per line; the mount point may contain
 * spaces). The test then replays the store with the real rt-export.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "rt/clock.h"
#include "rt/runmeta.h"
#include "rt/store.h"
#include "rt/sysroot.h"
#include "sampler.h"

static char statvfs_file[4096];

static int fixture_statvfs(const char *mp, struct rt_fsstat *out)
{
	FILE *f = fopen(statvfs_file, "r");
	char line[1024];
	int rc = -1;
	while (f && fgets(line, sizeof(line), f)) {
		unsigned long long t, fr, av;
		char *p = line + strlen(line);
		/* the three numbers are the last fields */
		int fields = 0;
		while (p > line && fields < 3) {
			p--;
			if (*p == ' ' && p[1] != ' ')
				fields++;
		}
		if (fields < 3 || sscanf(p, " %llu %llu %llu", &t, &fr, &av) != 3)
			continue;
		*p = '\0';
		if (!strcmp(line, mp)) {
			out->total = t;
			out->free = fr;
			out->avail = av;
			rc = 0;
			break;
		}
	}
	if (f)
		fclose(f);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: golden_run FIXTURE_DIR WORK_DIR STORE_DIR\n");
		return 2;
	}
	const char *fx = argv[1], *work = argv[2], *store_dir = argv[3];
	char cmd[8192], path[4096];
	snprintf(path, sizeof(path), "%s/proc", work);
	setenv("RT_PROC_ROOT", path, 1);
	snprintf(path, sizeof(path), "%s/sys", work);
	setenv("RT_SYS_ROOT", path, 1);
	rt_sysroot_init();
	snprintf(statvfs_file, sizeof(statvfs_file), "%s/statvfs.txt", work);
	rt_statvfs_use(fixture_statvfs);
	rt_clock_set_fake(1767225600ull * 1000000000ull);
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s' && cp -a '%s/step0/.' '%s/'", work, fx, work);
	if (system(cmd) != 0)
		return 1;

	struct rt_store *s;
	if (rt_store_open(store_dir, RT_STORE_RDWR, &s))
		return 1;
	const char *tags[] = {"fixture=yes"};
	struct rt_run_meta m = {.status = "running",
	                        .start_ns = 1767225600ull * 1000000000ull,
	                        .interval_secs = 1.0,
	                        .recorder_pid = 1,
	                        .tags = tags,
	                        .ntags = 1,
	                        .hostname = "fixture",
	                        .vcpus = 2};
	m.meta[RT_META_JOB_NAME] = "golden";
	struct rt_buf b = {0};
	rt_runmeta_write(&b, &m);
	if (rt_store_new_run(s, b.p, b.len, &m.run_id))
		return 1;
	struct rt_sampler sm;
	if (rt_sampler_init(&sm, s, m.run_id, 16))
		return 1;
	char warn[512];
	for (int step = 0;; step++) {
		snprintf(path, sizeof(path), "%s/step%d", fx, step);
		struct stat st;
		if (stat(path, &st) != 0)
			break;
		if (step > 0) {
			snprintf(cmd, sizeof(cmd), "cp -a '%s/.' '%s/'", path, work);
			if (system(cmd) != 0)
				return 1;
		}
		if (rt_sampler_take(&sm, 0, warn, sizeof(warn)))
			return 1;
		if (warn[0])
			fprintf(stderr, "%s\n", warn);
		rt_clock_wait(sm.last.mono_ns + 1000000000ull, -1);
	}
	m.status = "finished";
	m.end_ns = sm.last.wall_ns;
	m.has_last_seq = 1;
	m.last_seq = sm.seq - 1;
	rt_buf_reset(&b);
	rt_runmeta_write(&b, &m);
	rt_store_put_meta(s, m.run_id, b.p, b.len);
	rt_sampler_finish(&sm);
	rt_sampler_close(&sm, 1);
	rt_store_close(s);
	rt_buf_free(&b);
	return 0;
}
