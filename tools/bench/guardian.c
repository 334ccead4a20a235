/*
 * guardian.c - rt-bench guardian: wrapper mode's guardian beside the rest
 * of the family at 10 Hz: CPU per sample and PSS of each.
 */
#include "bench.h"

/* CPU time a process has run, ns (/proc/PID/schedstat: exact, not ticks) */
static uint64_t oncpu_ns(pid_t pid)
{
	char buf[128];
	return proc_text(pid, "schedstat", buf, sizeof(buf)) > 0 ? strtoull(buf, NULL, 10) : 0;
}

/*
 * Wrapper mode's guardian (the process that waits for the job) beside the
 * rest of the family, at 10 Hz with JSON lines to /dev/null: each one's
 * CPU per sample (schedstat, between two readings after start-up) and PSS.
 */
static void bench_guardian(const char *rec_bin, const char *tmp, int quick)
{
	char store[4300], secs_s[16];
	int secs = quick ? 6 : 30;
	snprintf(store, sizeof(store), "%s/store-guardian", tmp);
	snprintf(secs_s, sizeof(secs_s), "%d", secs);
	pid_t g = fork();
	if (g == 0) {
		int null = open("/dev/null", O_RDWR);
		dup2(null, 1);
		dup2(null, 2);
		execl(rec_bin, rec_bin, "-i", "0.1", "--store", store, "--", "sleep", secs_s,
		      (char *)NULL);
		_exit(127);
	}
	struct timespec nap = {1, 500000000};
	nanosleep(&nap, NULL);
	pid_t r = first_child(g), p = r > 0 ? first_child(r) : -1;
	pid_t who[3] = {g, r, p};
	uint64_t c0[3], c1[3];
	double w0 = wall_now();
	for (int i = 0; i < 3; i++)
		c0[i] = oncpu_ns(who[i]);
	struct timespec rest = {secs - 3, 0};
	nanosleep(&rest, NULL);
	double w1 = wall_now();
	long pss[3];
	for (int i = 0; i < 3; i++) {
		c1[i] = oncpu_ns(who[i]);
		pss[i] = smaps_kb(who[i], "Pss:");
	}
	int st;
	waitpid(g, &st, 0);
	double samples = (w1 - w0) / 0.1;
	static const char *const names[3] = {"guardian (waits for the job)", "recorder",
	                                     "printer (rt-export live)"};
	printf("Wrapper mode's processes, -i 0.1 with JSON lines, %.0f samples:\n", samples);
	double fam = 0;
	long fpss = 0;
	for (int i = 0; i < 3; i++) {
		double us = (double)(c1[i] - c0[i]) / samples / 1e3;
		fam += us;
		fpss += pss[i];
		printf("  %-30s %8.2f us/sample  PSS %6ld KiB\n", names[i], us, pss[i]);
	}
	printf("  %-30s %8.2f us/sample  PSS %6ld KiB\n\n", "the family", fam, fpss);
}

int bench_guardian_section(const struct bench_ctx *c)
{
	bench_guardian(c->rec_bin, c->tmp, c->quick);
	return 0;
}
