/*
 * answers.c - rt-bench --answers: summary --json, recommend and report of
 * a day at 1 Hz and an hour at 100 Hz (the fake clock), beside the anchor
 * of the same run's replay -f csv, with the report's size.
 */
#include "bench.h"

/* Best wall time of 5 runs of argv, and the largest RSS (KiB). */
static double best_of(char *const argv[], long *maxrss)
{
	double best = 1e9;
	*maxrss = 0;
	for (int i = 0; i < 5; i++) {
		double cpu, wall;
		long rss;
		if (run_cmd_rss(argv, &cpu, &wall, &rss))
			return -1;
		best = wall < best ? wall : best;
		*maxrss = rss > *maxrss ? rss : *maxrss;
	}
	return best;
}

static void bench_answers_run(const char *rec_bin, const char *exp_bin, const char *tmp,
                              const char *what, const char *interval, const char *count)
{
	char store[4300], html[4400];
	snprintf(store, sizeof(store), "%s/answers-%s", tmp, interval);
	snprintf(html, sizeof(html), "%s/report.html", store);
	double wall;
	int rc = record_fake_clock(rec_bin, store, interval, count, "1795000000", &wall);
	if (rc) {
		printf("  %s: recording failed\n", what);
		return;
	}
	char *replay[] = {(char *)exp_bin, "--store", store, "replay", "1", "-f", "csv", NULL};
	char *summary[] = {(char *)exp_bin, "--store", store, "summary", "1", "--json", NULL};
	char *reco[] = {(char *)exp_bin, "--store", store, "recommend", "1", NULL};
	char *report[] = {(char *)exp_bin, "--store", store, "report", "1", "-o", html, NULL};
	long r0, r1, r2, r3;
	double t_replay = best_of(replay, &r0), t_sum = best_of(summary, &r1),
	       t_reco = best_of(reco, &r2), t_rep = best_of(report, &r3);
	struct stat st;
	long size = stat(html, &st) == 0 ? (long)st.st_size : -1;
	printf("%s (%s samples, recorded in %.1f s with the fake clock):\n", what, count, wall);
	printf("  replay -f csv > /dev/null (anchor)                 %8.0f ms  %6ld KiB max RSS\n",
	       t_replay * 1e3, r0);
	printf("  summary --json                                     %8.0f ms  %6ld KiB  "
	       "(%.2fx replay)\n",
	       t_sum * 1e3, r1, t_sum / t_replay);
	printf("  recommend                                          %8.0f ms  %6ld KiB  "
	       "(%.2fx replay)\n",
	       t_reco * 1e3, r2, t_reco / t_replay);
	printf("  report                                             %8.0f ms  %6ld KiB  "
	       "(%.2fx replay)\n",
	       t_rep * 1e3, r3, t_rep / t_replay);
	printf("  report size                                        %8.2f MB\n\n",
	       (double)size / 1e6);
}

static int bench_answers(const char *rec_bin, const char *exp_bin)
{
	char tmp[] = "/tmp/rt-bench-XXXXXX";
	if (!mkdtemp(tmp))
		return 1;
	char shm[4200];
	snprintf(shm, sizeof(shm), "%s/shm", tmp);
	mkdir(shm, 0700);
	setenv("RT_SHM_DIR", shm, 1);
	printf("rt-bench --answers: best of 5 runs each (wall time), this process tracked\n\n");
	bench_answers_run(rec_bin, exp_bin, tmp, "24 h at 1 Hz", "1", "86400");
	bench_answers_run(rec_bin, exp_bin, tmp, "1 h at 100 Hz", "0.01", "360000");
	char cmd[4300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	return system(cmd) != 0;
}

int bench_answers_mode(const struct bench_ctx *c)
{
	return bench_answers(c->rec_bin, c->exp_bin);
}
