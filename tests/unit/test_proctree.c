/* Accounting of process trees on fixture /proc trees, step by step. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proctree.h"
#include "rt/sysroot.h"

static char root[256];
static long hz;
/* what proc() writes into the next stat files: resident pages, minor faults */
static unsigned long fx_rss = 25, fx_minflt;

static void sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void sh(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
}

/* Write /proc/<pid>: stat (ticks), children, io. */
static void proc(int pid, int ppid, unsigned long start, unsigned long ut, unsigned long st,
                 unsigned long cut, unsigned long cst, const char *children, const char *state)
{
	char dir[512], path[600];
	snprintf(dir, sizeof(dir), "%s/proc/%d/task/%d", root, pid, pid);
	sh("mkdir -p '%s'", dir);
	snprintf(path, sizeof(path), "%s/proc/%d/stat", root, pid);
	FILE *f = fopen(path, "w");
	fprintf(f,
	        "%d (odd) name) %s %d 1 1 0 -1 0 %lu 0 0 0 %lu %lu %lu %lu 20 0 1 0 %lu 1000 %lu\n",
	        pid, state, ppid, fx_minflt, ut, st, cut, cst, start, fx_rss);
	fclose(f);
	snprintf(path, sizeof(path), "%s/children", dir);
	f = fopen(path, "w");
	fprintf(f, "%s", children);
	fclose(f);
	snprintf(path, sizeof(path), "%s/proc/%d/io", root, pid);
	f = fopen(path, "w");
	/* like the kernel, a reaper's I/O includes its reaped children's */
	fprintf(f, "rchar: 1\nwchar: 1\nread_bytes: %lu\nwrite_bytes: %lu\n", (ut + cut) * 10,
	        (st + cst) * 10);
	fclose(f);
}

/* A reaped process: like the kernel's, descriptors kept open on its files
 * read nothing any more. */
static void gone(int pid)
{
	sh("find '%s/proc/%d' -type f -exec truncate -s 0 {} + && rm -rf '%s/proc/%d'", root, pid,
	   root, pid);
}

static void setup(void)
{
	snprintf(root, sizeof(root), "/tmp/rt-test-proctree-%d", getpid());
	sh("rm -rf '%s' && mkdir -p '%s/proc'", root, root);
	char p[300];
	snprintf(p, sizeof(p), "%s/proc", root);
	setenv("RT_PROC_ROOT", p, 1);
	rt_sysroot_init();
	hz = sysconf(_SC_CLK_TCK);
	fx_rss = 25;
	fx_minflt = 0;
}

static void teardown(void)
{
	sh("rm -rf '%s'", root);
	unsetenv("RT_PROC_ROOT");
	rt_sysroot_init();
}

TestSuite(proctree, .init = setup, .fini = teardown);

/* tree CPU in ticks (utime + stime) */
static unsigned long cpu(struct rt_proctree *t, struct rt_rec_process *r)
{
	rt_proctree_sample(t, r);
	return (unsigned long)((r->utime_us + r->stime_us) * (unsigned long)hz / 1000000u);
}

Test(proctree, new_child_counts_all_its_ticks_in_the_interval_it_appears)
{
	struct rt_proctree *t;
	struct rt_rec_process r;
	proc(100, 1, 10, 100, 10, 0, 0, "", "S");
	cr_assert_eq(rt_proctree_open(&t, 100), 0);
	unsigned long c0 = cpu(t, &r);
	cr_expect_eq(c0, 110);
	cr_expect_eq(r.nprocs, 1);
	proc(100, 1, 10, 120, 10, 0, 0, "200 ", "S");
	proc(200, 100, 50, 40, 5, 0, 0, "", "R");
	cr_expect_eq(cpu(t, &r) - c0, 20 + 45, "the child's 45 ticks since birth count now");
	cr_expect_eq(r.nprocs, 2);
	cr_expect_eq(r.read_bytes, 1600, "I/O of both");
	rt_proctree_close(t);
}

Test(proctree, reaped_child_ticks_move_to_parent_without_spike)
{
	struct rt_proctree *t;
	struct rt_rec_process r;
	proc(100, 1, 10, 100, 0, 0, 0, "200 ", "S");
	proc(200, 100, 50, 500, 100, 0, 0, "", "R");
	cr_assert_eq(rt_proctree_open(&t, 100), 0);
	unsigned long c0 = cpu(t, &r);
	uint64_t io0 = r.read_bytes + r.write_bytes;
	/* the child ran 10 more ticks, exited and was reaped by 100 */
	gone(200);
	proc(100, 1, 10, 100, 0, 510, 100, "", "S");
	unsigned long c1 = cpu(t, &r);
	cr_expect_eq(c1 - c0, 10, "only the 10 new ticks, not the child's lifetime");
	cr_expect_eq(r.nprocs, 1);
	cr_expect_eq(r.read_bytes + r.write_bytes - io0, 100,
	             "reaped child's I/O not counted twice");
	rt_proctree_close(t);
}

Test(proctree, zombie_is_counted_until_reaped)
{
	struct rt_proctree *t;
	struct rt_rec_process r;
	proc(100, 1, 10, 0, 0, 0, 0, "200 ", "S");
	proc(200, 100, 50, 30, 0, 0, 0, "", "R");
	cr_assert_eq(rt_proctree_open(&t, 100), 0);
	unsigned long c0 = cpu(t, &r);
	proc(200, 100, 50, 35, 0, 0, 0, "", "Z");
	cr_expect_eq(cpu(t, &r) - c0, 5);
	cr_expect_eq(r.nprocs, 2);
	gone(200);
	proc(100, 1, 10, 0, 0, 35, 0, "", "S");
	cr_expect_eq(cpu(t, &r) - c0, 5, "reaping moves ticks, adds none");
	rt_proctree_close(t);
}

Test(proctree, grandchild_reparented_to_a_member_stays_counted)
{
	struct rt_proctree *t;
	struct rt_rec_process r;
	proc(100, 1, 10, 0, 0, 0, 0, "200 ", "S");
	proc(200, 100, 20, 10, 0, 0, 0, "300 ", "S");
	proc(300, 200, 30, 10, 0, 0, 0, "", "R");
	cr_assert_eq(rt_proctree_open(&t, 100), 0);
	unsigned long c0 = cpu(t, &r);
	/* 200 exits (reaped by 100 with its 10 ticks); 300 moves under 100 */
	gone(200);
	proc(100, 1, 10, 0, 0, 10, 0, "300 ", "S");
	proc(300, 100, 30, 25, 0, 0, 0, "", "R");
	cr_expect_eq(cpu(t, &r) - c0, 15);
	cr_expect_eq(r.nprocs, 2);
	rt_proctree_close(t);
}

Test(proctree, pid_reuse_is_a_new_process)
{
	struct rt_proctree *t;
	struct rt_rec_process r;
	proc(100, 1, 10, 0, 0, 0, 0, "300 ", "S");
	proc(300, 100, 30, 40, 0, 0, 0, "", "R");
	cr_assert_eq(rt_proctree_open(&t, 100), 0);
	unsigned long c0 = cpu(t, &r);
	/* 300 was reaped by 100 (40 ticks), a new 300 (born later) has 5 */
	proc(100, 1, 10, 0, 0, 40, 0, "300 ", "S");
	proc(300, 100, 99, 5, 0, 0, 0, "", "R");
	cr_expect_eq(cpu(t, &r) - c0, 5);
	rt_proctree_close(t);
}

Test(proctree, root_exit_keeps_totals_and_zeroes_the_tree)
{
	struct rt_proctree *t;
	struct rt_rec_process r;
	proc(100, 1, 10, 70, 0, 0, 0, "", "S");
	cr_assert_eq(rt_proctree_open(&t, 100), 0);
	unsigned long c0 = cpu(t, &r);
	gone(100); /* reaped by its parent, outside the tree */
	cr_expect_eq(cpu(t, &r), c0, "no drop, no jump");
	cr_expect_eq(r.nprocs, 0);
	cr_expect_eq(r.pss_kb, 0);
	rt_proctree_close(t);
}

Test(proctree, hostile_stat_and_children_files_are_survived)
{
	struct rt_proctree *t;
	struct rt_rec_process r;
	proc(100, 1, 10, 5, 0, 0, 0, "100 100 99999999999 abc 200", "S");
	proc(200, 100, 20, 5, 0, 0, 0, "", "S");
	char path[600];
	snprintf(path, sizeof(path), "%s/proc/200/stat", root);
	FILE *f = fopen(path, "w");
	fprintf(f, "200 (unterminated");
	fclose(f);
	cr_assert_eq(rt_proctree_open(&t, 100), 0);
	cr_expect_eq(cpu(t, &r), 5, "a loop and garbage: root counted once, garbage skipped");
	cr_expect_eq(r.nprocs, 1);
	rt_proctree_close(t);
}

Test(proctree, kernels_without_children_files_fall_back_to_a_scan)
{
	struct rt_proctree *t;
	struct rt_rec_process r;
	proc(100, 1, 10, 5, 0, 0, 0, "", "S");
	proc(200, 100, 20, 7, 0, 0, 0, "", "S");
	proc(300, 1, 30, 1000, 0, 0, 0, "", "S"); /* not ours */
	sh("rm -f %s/proc/*/task/*/children", root);
	cr_assert_eq(rt_proctree_open(&t, 100), 0);
	cr_expect_eq(cpu(t, &r), 12);
	cr_expect_eq(r.nprocs, 2);
	rt_proctree_close(t);
}

Test(proctree, quick_walk_while_no_process_is_born)
{
	struct rt_proctree *t;
	struct rt_rec_process r;
	proc(100, 1, 10, 5, 0, 0, 0, "200 ", "S");
	proc(200, 100, 20, 7, 0, 0, 0, "", "S");
	cr_assert_eq(rt_proctree_open(&t, 100), 0);
	rt_proctree_host_forks(t, 1000);
	cr_expect_eq(cpu(t, &r), 12);
	rt_proctree_host_forks(t, 1000);
	cr_expect_eq(cpu(t, &r), 12, "second sample");
	/* a child listed without a fork on the host: the quick walk reads
	 * stats alone, so it cannot be there (nor in any real kernel) */
	proc(200, 100, 20, 9, 0, 0, 0, "300 ", "S");
	proc(300, 200, 30, 4, 0, 0, 0, "", "S");
	rt_proctree_host_forks(t, 1000);
	cr_expect_eq(cpu(t, &r), 14, "members' stats re-read, children files not");
	cr_expect_eq(r.nprocs, 2);
	/* the host forked: a full walk finds the new process */
	rt_proctree_host_forks(t, 1001);
	cr_expect_eq(cpu(t, &r), 18);
	cr_expect_eq(r.nprocs, 3);
	rt_proctree_close(t);
}

Test(proctree, quick_walk_falls_back_when_a_member_dies)
{
	struct rt_proctree *t;
	struct rt_rec_process r;
	proc(100, 1, 10, 10, 0, 0, 0, "200 ", "S");
	proc(200, 100, 20, 30, 0, 0, 0, "300 ", "S");
	proc(300, 200, 30, 50, 0, 0, 0, "", "S");
	cr_assert_eq(rt_proctree_open(&t, 100), 0);
	rt_proctree_host_forks(t, 7);
	unsigned long c0 = cpu(t, &r);
	rt_proctree_host_forks(t, 7);
	cpu(t, &r);
	/* 200 exits, reaped by 100; its child 300 moves to 100 (a subreaper
	 * here): no fork anywhere, yet the children files changed */
	gone(200);
	proc(100, 1, 10, 10, 0, 30, 0, "300 ", "S");
	proc(300, 100, 30, 52, 0, 0, 0, "", "S");
	rt_proctree_host_forks(t, 7);
	cr_expect_eq(cpu(t, &r) - c0, 2, "the dead member sends the sample to a full walk");
	cr_expect_eq(r.nprocs, 2, "the orphan is found under its new parent");
	rt_proctree_close(t);
}

Test(proctree, pid_reuse_without_a_fork_count_is_caught)
{
	struct rt_proctree *t;
	struct rt_rec_process r;
	proc(100, 1, 10, 10, 0, 0, 0, "200 ", "S");
	proc(200, 100, 20, 30, 0, 0, 0, "", "S");
	cr_assert_eq(rt_proctree_open(&t, 100), 0);
	rt_proctree_host_forks(t, 7);
	unsigned long c0 = cpu(t, &r);
	rt_proctree_host_forks(t, 7);
	cpu(t, &r);
	/* 200 reaped by 100, its pid reused in place by a new child of 100
	 * (new start time) while the fixture's fork count stands still */
	proc(100, 1, 10, 10, 0, 30, 0, "200 ", "S");
	proc(200, 100, 99, 1, 0, 0, 0, "", "S");
	rt_proctree_host_forks(t, 7);
	cr_expect_eq(cpu(t, &r) - c0, 1, "the old 200 moved into 100's cutime, the new one adds 1");
	cr_expect_eq(r.nprocs, 2);
	rt_proctree_close(t);
}

Test(proctree, threads_of_the_live_members_are_summed)
{
	struct rt_proctree *t;
	struct rt_rec_process r;
	proc(100, 1, 10, 5, 0, 0, 0, "200 ", "S");
	proc(200, 100, 20, 7, 0, 0, 0, "", "S");
	cr_assert_eq(rt_proctree_open(&t, 100), 0);
	cpu(t, &r);
	cr_expect_eq(r.threads, 2, "one thread each in the fixture");
	cr_expect_eq(r.majflt, 0);
	rt_proctree_close(t);
}

static void status(int pid, unsigned long vcs, unsigned long ivcs, unsigned long hwm_kb)
{
	char path[600];
	snprintf(path, sizeof(path), "%s/proc/%d/status", root, pid);
	FILE *f = fopen(path, "w");
	fprintf(f,
	        "Name:\tx\nVmHWM:\t%lu kB\nVmRSS:\t1 kB\nvoluntary_ctxt_switches:\t%lu\n"
	        "nonvoluntary_ctxt_switches:\t%lu\n",
	        hwm_kb, vcs, ivcs);
	fclose(f);
}

Test(proctree, context_switches_peak_rss_and_open_fds)
{
	struct rt_proctree *t;
	struct rt_rec_process r;
	proc(100, 1, 10, 5, 0, 0, 0, "", "S");
	status(100, 10, 2, 5000);
	sh("mkdir -p '%s/proc/100/fd' && touch '%s/proc/100/fd/0' '%s/proc/100/fd/1' "
	   "'%s/proc/100/fd/7'",
	   root, root, root, root);
	cr_assert_eq(rt_proctree_open(&t, 100), 0);
	rt_proctree_cadence(t, 1, 1);
	cpu(t, &r);
	cr_expect_eq(r.ext_valid, RT_PROC_X_STATUS | RT_PROC_X_FDS);
	cr_expect_eq(r.vol_ctxt, 0, "what it did before tracking is the baseline");
	cr_expect_eq(r.peak_rss_kb, 25 * (unsigned long)sysconf(_SC_PAGESIZE) / 1024,
	             "a mark reached before tracking is not the job's: its RSS is the floor");
	cr_expect_eq(rt_proctree_hwm_before_kb(t), 5000, "and it is said");
	cr_expect_eq(r.open_fds, 3);
	/* 100 switched 5 more times and forked 200, which switched 7 times */
	proc(100, 1, 10, 5, 0, 0, 0, "200 ", "S");
	status(100, 15, 3, 4000);
	proc(200, 100, 20, 1, 0, 0, 0, "", "S");
	status(200, 7, 1, 9000);
	cpu(t, &r);
	cr_expect_eq(r.vol_ctxt, 12, "5 of the root's, 7 of the child born since");
	cr_expect_eq(r.invol_ctxt, 2);
	cr_expect_eq(r.peak_rss_kb, 9000,
	             "the largest VmHWM of the tree (the child's, born since)");
	status(100, 15, 3, 12000);
	cpu(t, &r);
	cr_expect_eq(r.peak_rss_kb, 12000, "the root's mark above its base of before: the job's");
	cr_expect_eq(r.open_fds, 3, "the child has no fd directory: none counted");
	/* not asked: carried */
	rt_proctree_cadence(t, 0, 0);
	status(100, 100, 3, 4000);
	cpu(t, &r);
	cr_expect_eq(r.vol_ctxt, 12);
	rt_proctree_close(t);
}

/* /proc/<pid>/smaps_rollup with these Rss and Pss (kB) */
static void smaps(int pid, unsigned long rss_kb, unsigned long pss_kb)
{
	char path[600];
	snprintf(path, sizeof(path), "%s/proc/%d/smaps_rollup", root, pid);
	FILE *f = fopen(path, "w");
	cr_assert(f, "%s", path);
	fprintf(f,
	        "55d0-7ffe ---p 00000000 00:00 0 [rollup]\nRss: %lu kB\nPss: %lu kB\n"
	        "Pss_Anon: %lu kB\nShared_Clean: 0 kB\n",
	        rss_kb, pss_kb, pss_kb);
	fclose(f);
}

Test(proctree, a_forked_child_counts_its_pss_in_the_sample_it_appears)
{
	struct rt_proctree *t;
	struct rt_rec_process r;
	long page_kb = sysconf(_SC_PAGESIZE) / 1024;
	fx_rss = 614400 / (unsigned long)page_kb; /* 600 MiB resident */
	proc(100, 1, 10, 5, 0, 0, 0, "", "S");
	smaps(100, 614400, 614400);
	cr_assert_eq(rt_proctree_open(&t, 100), 0);
	cpu(t, &r);
	cr_expect_eq(r.pss_kb, 614400);
	/* three workers forked: every page shared four ways, RSS unchanged */
	proc(100, 1, 10, 5, 0, 0, 0, "200 201 202 ", "S");
	smaps(100, 614400, 153600);
	for (int c = 200; c <= 202; c++) {
		proc(c, 100, 20, 0, 0, 0, 0, "", "S");
		smaps(c, 614400, 153600);
	}
	cpu(t, &r);
	cr_expect_eq(r.nprocs, 4);
	cr_expect_eq(r.pss_kb, 614400, "shared pages counted once, not once per worker");
	cr_expect_eq(r.rss_kb, 4 * 614400, "RSS counts them in each");
	/* worker 201 writes 3000 kB of its copy: faults, its RSS unchanged;
	 * those pages were shared four ways, now its own and three ways */
	fx_minflt = 1000;
	proc(201, 100, 20, 0, 0, 0, 0, "", "S");
	fx_minflt = 0;
	smaps(201, 614400, 153600 - 750 + 3000);
	smaps(100, 614400, 153600 - 750 + 1000);
	smaps(200, 614400, 153600 - 750 + 1000);
	smaps(202, 614400, 153600 - 750 + 1000);
	cpu(t, &r);
	cr_expect_eq(r.pss_kb, 614400 + 3000, "every member re-read after one member's fault");
	/* two workers exit: the pages they shared go back to the others,
	 * whose RSS and faults stand still */
	proc(100, 1, 10, 5, 0, 0, 0, "201 ", "S");
	gone(200);
	gone(202);
	smaps(100, 614400, 306450);
	smaps(201, 614400, 310950);
	cpu(t, &r);
	cr_expect_eq(r.nprocs, 2);
	cr_expect_eq(r.pss_kb, 617400, "re-read after a departure");
	/* the departed ones' address spaces may still be on their way out (a
	 * reader of their smaps held the last reference): read once more */
	smaps(100, 614400, 306500);
	cpu(t, &r);
	cr_expect_eq(r.pss_kb, 306500 + 310950, "re-read in the sample after a departure too");
	/* nothing moves: carried (what processes outside the tree do to
	 * shared pages is the cadence's) */
	smaps(100, 614400, 1);
	cpu(t, &r);
	cr_expect_eq(r.pss_kb, 306500 + 310950);
	rt_proctree_cadence(t, 1, 0);
	cpu(t, &r);
	cr_expect_eq(r.pss_kb, 1 + 310950, "the cadence re-reads every member");
	rt_proctree_close(t);
}

Test(proctree, a_short_job_has_its_status_and_fds_from_its_first_sample)
{
	struct rt_proctree *t;
	struct rt_rec_process r;
	cr_assert_eq(rt_proctree_open(&t, 100), 0);
	cpu(t, &r); /* no job yet: its counts are zero, and known */
	cr_expect_eq(r.ext_valid, RT_PROC_X_STATUS | RT_PROC_X_FDS | RT_PROC_X_DELAY);
	cr_expect_eq(r.nprocs, 0);
	proc(100, 1, 10, 5, 0, 0, 0, "", "S");
	status(100, 10, 2, 5000);
	sh("mkdir -p '%s/proc/100/fd' && touch '%s/proc/100/fd/0' '%s/proc/100/fd/1'", root, root,
	   root);
	cpu(t, &r); /* off the 5 s cadence: read because it is new */
	cr_expect_eq(r.ext_valid, RT_PROC_X_STATUS | RT_PROC_X_FDS);
	cr_expect_eq(r.vol_ctxt, 10, "born while tracked: all of its switches");
	cr_expect_eq(r.open_fds, 2);
	cr_expect_eq(r.peak_rss_kb, 5000);
	rt_proctree_close(t);
}

Test(proctree, the_peak_is_never_below_what_a_member_holds_or_a_reaped_one_reached)
{
	struct rt_proctree *t;
	struct rt_rec_process r;
	long page_kb = sysconf(_SC_PAGESIZE) / 1024;
	fx_rss = 8000 / (unsigned long)page_kb;
	proc(100, 1, 10, 5, 0, 0, 0, "", "S");
	status(100, 1, 1, 3000); /* a status older than the RSS now */
	cr_assert_eq(rt_proctree_open(&t, 100), 0);
	cpu(t, &r);
	cr_expect_eq(r.peak_rss_kb, 8000, "VmHWM >= the RSS seen");
	struct rusage ru = {0};
	ru.ru_maxrss = 50000; /* a descendant peaked between two reads */
	rt_proctree_reaped(t, 300, &ru);
	cpu(t, &r);
	cr_expect_eq(r.peak_rss_kb, 50000);
	rt_proctree_close(t);
}

/* The reaper's report for member 200 arrives during the sample that read
 * 200 alive (the kill came between its read and the end of the walk). */
static struct rt_proctree *hook_tree;
static int hook_syncs;
static int report_200(void *arg, int ms)
{
	(void)arg;
	if (ms >= 0 || hook_syncs++ != 1)
		return ms < 0;
	struct rusage ru = {0};
	ru.ru_utime.tv_sec = 1; /* exact: 1.0 s; the walk read 0.9 s */
	gone(200);
	rt_proctree_reaped(hook_tree, 200, &ru);
	return 1;
}

Test(proctree, a_member_read_alive_and_reported_in_the_same_sample_counts_once)
{
	struct rt_proctree *t;
	struct rt_rec_process r;
	proc(50, 1, 5, 0, 0, 0, 0, "200 ", "S"); /* the reaper, not a member */
	proc(200, 50, 50, 80, 0, 0, 0, "", "R");
	cr_assert_eq(rt_proctree_open_under(&t, 50), 0);
	hook_tree = t;
	hook_syncs = 0;
	rt_proctree_on_unreported(t, report_200, NULL);
	cr_expect_eq(cpu(t, &r), 80);
	proc(200, 50, 50, 90, 0, 0, 0, "", "R");
	cr_expect_eq(cpu(t, &r), (unsigned long)hz, "1.0 s exact, not 0.9 + 1.0");
	cr_expect_eq(r.nprocs, 0, "no live member left");
	cr_expect_eq(cpu(t, &r), (unsigned long)hz, "and it stays");
	rt_proctree_close(t);
}

Test(proctree, no_sample_shows_more_cpu_than_the_host_could_give)
{
	struct rt_proctree *t;
	struct rt_rec_process r;
	const uint64_t s = 1000000000u;
	proc(100, 1, 10, 0, 0, 0, 0, "", "R");
	cr_assert_eq(rt_proctree_open(&t, 100), 0);
	rt_proctree_bound(t, 2, 10 * s);
	cr_expect_eq(cpu(t, &r), 0);
	/* a walk that read its members long after the sample's time: 5 s of
	 * CPU shows up 1 s later on a 2-CPU host */
	proc(100, 1, 10, 4 * hz, hz, 0, 0, "", "R");
	rt_proctree_bound(t, 2, 11 * s);
	rt_proctree_sample(t, &r);
	cr_expect_eq(r.utime_us + r.stime_us, 2000000u, "capped at 2 CPUs x 1 s");
	cr_expect_eq(r.utime_us, 1600000u, "user and system keep their shares");
	rt_proctree_bound(t, 2, 12 * s);
	rt_proctree_sample(t, &r);
	cr_expect_eq(r.utime_us + r.stime_us, 4000000u, "what was held back follows");
	rt_proctree_bound(t, 2, 13 * s);
	rt_proctree_sample(t, &r);
	cr_expect_eq(r.utime_us + r.stime_us, 5000000u, "and meets the kernel's total");
	cr_expect_eq(r.utime_us, 4000000u);
	rt_proctree_bound(t, 2, 14 * s);
	proc(100, 1, 10, 4 * hz, hz, 0, 0, "", "R");
	rt_proctree_sample(t, &r);
	cr_expect_eq(r.utime_us + r.stime_us, 5000000u, "never more");
	rt_proctree_close(t);
}

/* Member 100 reaps its child 200 after the walk read 100 and before it
 * came to 200: the sync hook (after the walk) rewrites 100's stat the way
 * the kernel would have it by then. */
static int reap_200_late(void *arg, int ms)
{
	(void)arg;
	if (ms < 0 && hook_syncs++ == 1)
		proc(100, 50, 10, 15, 0, 40, 10, "", "S");
	return ms < 0;
}

Test(proctree, a_member_reaped_by_a_member_mid_walk_is_not_lost)
{
	struct rt_proctree *t;
	struct rt_rec_process r;
	proc(50, 1, 5, 0, 0, 0, 0, "100 ", "S"); /* the reaper, not a member */
	proc(100, 50, 10, 10, 0, 0, 0, "200 ", "S");
	proc(200, 100, 50, 40, 10, 0, 0, "", "R");
	cr_assert_eq(rt_proctree_open_under(&t, 50), 0);
	hook_syncs = 0;
	rt_proctree_on_unreported(t, reap_200_late, NULL);
	cr_expect_eq(cpu(t, &r), 60);
	gone(200); /* the walk will not find it; 100's stat still says cutime 0 */
	proc(100, 50, 10, 15, 0, 0, 0, "", "S"); /* and 100 ran 5 ticks */
	cr_expect_eq(cpu(t, &r), 65, "200's 50 ticks are in 100's cutime, read again");
	cr_expect_eq(r.nprocs, 1);
	cr_expect_eq(cpu(t, &r), 65);
	rt_proctree_close(t);
}

static void schedstat(int pid, unsigned long long run, unsigned long long delay)
{
	char path[600];
	snprintf(path, sizeof(path), "%s/proc/%d/schedstat", root, pid);
	FILE *f = fopen(path, "w");
	fprintf(f, "%llu %llu 7\n", run, delay);
	fclose(f);
}

Test(proctree, the_wait_for_a_cpu_is_summed_kept_when_members_leave_and_never_drops)
{
	struct rt_proctree *t;
	struct rt_rec_process r;
	proc(100, 1, 10, 5, 0, 0, 0, "200 ", "S");
	proc(200, 100, 50, 5, 0, 0, 0, "", "R");
	schedstat(100, 1000, 3000000);
	schedstat(200, 1000, 5000000);
	cr_assert_eq(rt_proctree_open(&t, 100), 0);
	cpu(t, &r);
	cr_expect(r.ext_valid & RT_PROC_X_DELAY);
	cr_expect_eq(r.run_delay_ns, 8000000u);
	/* 200 waited 2 ms more, then was reaped by 100: its wait stays */
	schedstat(200, 1000, 7000000);
	cpu(t, &r);
	cr_expect_eq(r.run_delay_ns, 10000000u);
	gone(200);
	proc(100, 1, 10, 5, 0, 10, 0, "", "S");
	cpu(t, &r);
	cr_expect_eq(r.run_delay_ns, 10000000u, "no reaper's figure holds a wait: kept");
	/* a member's figure never goes down (a thread of it ended) */
	schedstat(100, 1000, 1000000);
	cpu(t, &r);
	cr_expect_eq(r.run_delay_ns, 10000000u);
	rt_proctree_close(t);
}

/* The kernel shows a process's own utime and stime in whole ticks, each cut
 * down: a thousand members that ran 9 ms each read as nothing. schedstat's
 * time on a CPU (ns) is exact for the live threads. */
Test(proctree, a_member_s_own_time_is_exact_to_the_ns_not_cut_to_ticks)
{
	struct rt_proctree *t;
	struct rt_rec_process r;
	proc(100, 1, 10, 0, 0, 0, 0, "200 ", "S");
	proc(200, 100, 50, 0, 0, 0, 0, "", "S");
	schedstat(100, 9000000, 0); /* 9 ms, 0 ticks */
	schedstat(200, 9000000, 0);
	cr_assert_eq(rt_proctree_open(&t, 100), 0);
	rt_proctree_sample(t, &r);
	cr_expect_eq(r.utime_us + r.stime_us, 18000u, "2 x 9 ms, not 0");
	cr_expect_eq(r.stime_us, 0u, "no tick to split by: user, as the kernel does");
	/* 200 ran on: 2 user and 1 system tick, 35 ms exact: split 2:1 */
	proc(200, 100, 50, 2, 1, 0, 0, "", "S");
	schedstat(200, 35000000, 0);
	rt_proctree_sample(t, &r);
	cr_expect_eq(r.utime_us + r.stime_us, 44000u);
	/* a thread of 100 ended: its live threads' time drops, the figure not */
	schedstat(100, 1000000, 0);
	rt_proctree_sample(t, &r);
	cr_expect_eq(r.utime_us + r.stime_us, 44000u, "never lower");
	/* 100 reaps 200 (cutime 3 ticks): 200 leaves, 100's cutime holds it */
	gone(200);
	proc(100, 1, 10, 0, 0, 2, 1, "", "S");
	rt_proctree_sample(t, &r);
	cr_expect_eq(r.utime_us + r.stime_us, 44000u,
	             "not counted twice (35 ms shown, 30 in cutime)");
	rt_proctree_close(t);
}

/* Under the wrapper's reaper, a member whose parents are all gone was
 * orphaned to the reaper: its report counts it, its last live figure must
 * not as well (1000 processes killed at once counted 0.9 s twice). */
static int report_300_late(void *arg, int ms)
{
	(void)arg;
	if (ms < 0 && hook_syncs++ == 2) {
		struct rusage ru = {0};
		ru.ru_utime.tv_sec = 1;
		rt_proctree_reaped(hook_tree, 300, &ru);
	}
	return 0; /* the reaper does not answer in time */
}

Test(proctree, an_orphan_reaped_by_the_reaper_counts_once_when_its_report_is_late)
{
	struct rt_proctree *t;
	struct rt_rec_process r;
	proc(50, 1, 5, 0, 0, 0, 0, "100 ", "S"); /* the reaper, not a member */
	proc(100, 50, 10, 0, 0, 0, 0, "200 ", "S");
	proc(200, 100, 20, 0, 0, 0, 0, "300 ", "S");
	proc(300, 200, 30, 90, 0, 0, 0, "", "R");
	cr_assert_eq(rt_proctree_open_under(&t, 50), 0);
	hook_tree = t;
	hook_syncs = 0;
	rt_proctree_on_unreported(t, report_300_late, NULL);
	cr_expect_eq(cpu(t, &r), 90);
	/* 200 and 300 killed at once: 200 reaped by 100, 300 by the reaper,
	 * whose report comes a sample later */
	gone(200);
	gone(300);
	proc(100, 50, 10, 0, 0, 0, 0, "", "S");
	cpu(t, &r);
	cpu(t, &r);
	cr_expect_eq(cpu(t, &r), (unsigned long)hz,
	             "1.0 s, its exact rusage alone (not 0.9 + 1.0)");
	rt_proctree_close(t);
}

/* A one-thread member whose schedstat (time on a CPU, time waiting for
 * one, timeslices) has not moved has not run: its stat is not read again
 * (here its stat file changes behind it, which no kernel does, to show
 * that); once its schedstat moves, both are read. */
Test(proctree, a_member_that_has_not_run_since_its_last_sample_is_not_read_again)
{
	struct rt_proctree *t;
	struct rt_rec_process r;
	proc(100, 1, 10, 5, 0, 0, 0, "", "S");
	schedstat(100, 50000000, 0);
	cr_assert_eq(rt_proctree_open(&t, 100), 0);
	rt_proctree_host_forks(t, 1000);
	rt_proctree_sample(t, &r);
	rt_proctree_host_forks(t, 1000);
	rt_proctree_sample(t, &r); /* descriptors kept from here */
	cr_expect_eq(r.utime_us + r.stime_us, 50000u);
	proc(100, 1, 10, 9, 0, 0, 0, "", "S");
	rt_proctree_host_forks(t, 1000);
	rt_proctree_sample(t, &r);
	cr_expect_eq(r.utime_us + r.stime_us, 50000u, "schedstat still: stat not read");
	cr_expect_eq(r.nprocs, 1u);
	schedstat(100, 95000000, 2000000);
	rt_proctree_host_forks(t, 1000);
	rt_proctree_sample(t, &r);
	cr_expect_eq(r.utime_us + r.stime_us, 95000u, "it ran: 95 ms exact (9 ticks read)");
	cr_expect_eq(r.run_delay_ns, 2000000u);
	/* a member killed since: its kept descriptors read nothing, it is gone */
	gone(100);
	rt_proctree_host_forks(t, 1000);
	rt_proctree_sample(t, &r);
	cr_expect_eq(r.nprocs, 0u);
	rt_proctree_close(t);
}

/* A reaper that answers every sync; no report is due here. */
static int no_report(void *arg, int ms)
{
	(void)arg;
	return ms < 0;
}

/*
 * A children file can miss a live child: member 200 dies and hands its
 * child 300 to the reaper after the walk read the reaper's children file
 * and before it read 200's. 300 is alive in the tree all along: it is
 * counted once, live, never as departed and then again when found (CI:
 * 1000 processes killed at once, 0.8 s counted twice and kept).
 */
Test(proctree, a_live_member_the_children_files_miss_is_counted_once)
{
	struct rt_proctree *t;
	struct rt_rec_process r;
	proc(50, 1, 5, 0, 0, 0, 0, "100 ", "S"); /* the reaper, not a member */
	proc(100, 50, 10, 0, 0, 0, 0, "200 ", "S");
	proc(200, 100, 20, 0, 0, 0, 0, "300 ", "S");
	proc(300, 200, 30, 90, 0, 0, 0, "", "R");
	cr_assert_eq(rt_proctree_open_under(&t, 50), 0);
	rt_proctree_on_unreported(t, no_report, NULL);
	cr_expect_eq(cpu(t, &r), 90);
	/* 200 is a zombie now; 300 is the reaper's, in no children file read */
	proc(200, 100, 20, 0, 0, 0, 0, "", "Z");
	proc(300, 50, 30, 95, 0, 0, 0, "", "R");
	cr_expect_eq(cpu(t, &r), 95, "300 read alive, though no children file listed it");
	cr_expect_eq(r.nprocs, 3u);
	proc(50, 1, 5, 0, 0, 0, 0, "100 300 ", "S");
	cr_expect_eq(cpu(t, &r), 95, "found by the walk: the same member, not a second one");
	/* 300 killed and reaped by the reaper: its exact rusage alone */
	gone(300);
	proc(50, 1, 5, 0, 0, 0, 0, "100 ", "S");
	struct rusage ru = {0};
	ru.ru_utime.tv_sec = 1;
	rt_proctree_reaped(t, 300, &ru);
	cr_expect_eq(cpu(t, &r), (unsigned long)hz, "1.0 s: 300 counted once");
	rt_proctree_close(t);
}

/*
 * The job reaps its last worker and exits at once: the walk finds the
 * worker gone and the job a zombie, on its way out. The reaper answered the
 * sample's sync with no report of the worker, so the job reaped it: its
 * ticks are in the job's cutime (and then in the job's own report), never
 * held for a report of its own that will not come (the starved shape under
 * the sanitizers: +3.12 % CPU).
 */
Test(proctree, a_member_its_exiting_parent_reaped_counts_once)
{
	struct rt_proctree *t;
	struct rt_rec_process r;
	proc(50, 1, 5, 0, 0, 0, 0, "100 ", "S"); /* the reaper, not a member */
	proc(100, 50, 10, 0, 0, 0, 0, "200 ", "S");
	proc(200, 100, 20, 90, 0, 0, 0, "", "R");
	cr_assert_eq(rt_proctree_open_under(&t, 50), 0);
	rt_proctree_on_unreported(t, no_report, NULL);
	cr_expect_eq(cpu(t, &r), 90);
	gone(200);
	proc(100, 50, 10, 0, 0, 100, 0, "", "Z");
	cr_expect_eq(cpu(t, &r), 100, "200's 100 ticks in 100's cutime, once");
	gone(100);
	proc(50, 1, 5, 0, 0, 0, 0, "", "S");
	struct rusage ru = {0};
	ru.ru_utime.tv_sec = 1; /* 100's rusage: its own and what it reaped */
	rt_proctree_reaped(t, 100, &ru);
	cr_expect_eq(cpu(t, &r), (unsigned long)hz, "1.0 s: the job's exact rusage alone");
	rt_proctree_close(t);
}
