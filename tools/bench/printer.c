/*
 * printer.c - rt-bench printer: the live printer's memory over a long run,
 * with --summary and without it.
 */
#include "bench.h"

/*
 * The live printer's memory over a long run: the recorder on the fake
 * clock (as fast as it can sample) at -i 0.01 for n samples, printing JSON
 * to /dev/null, with --summary and without it (the anchor: a printer that
 * keeps nothing); VmRSS at a quarter, half and three quarters of the run,
 * and VmHWM at its end (the summary, read from the store then, included).
 */
static void printer_rss(const char *rec_bin, const char *tmp, int n, int summary, long out[4])
{
	char store[4300], count[32];
	snprintf(store, sizeof(store), "%s/store-printer-%d", tmp, summary);
	snprintf(count, sizeof(count), "%d", n);
	pid_t r = fork();
	if (r == 0) {
		int null = open("/dev/null", O_RDWR);
		dup2(null, 1);
		dup2(null, 2);
		setenv("RT_TEST_CLOCK", "1795000000", 1);
		setenv("RT_TEST_HOOKS", "1", 1);
		execl(rec_bin, rec_bin, "--count", count, "-i", "0.01", "--store", store, "-o",
		      "/dev/null", summary ? "--summary" : NULL, (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 4; i++)
		out[i] = -1;
	pid_t p = -1;
	struct timespec nap = {0, 20000000};
	double t0 = wall_now();
	while (p < 0 && wall_now() - t0 < 10) {
		p = first_child(r);
		nanosleep(&nap, NULL);
	}
	int st;
	long hwm = -1;
	/* how far the printer is: its write() calls, about one per line */
	uint64_t last_seq = 0;
	for (int q = 1; q <= 3 && p > 0;) {
		char buf[512];
		if (proc_text(p, "io", buf, sizeof(buf)) <= 0)
			break;
		const char *w = strstr(buf, "syscw:");
		last_seq = w ? strtoull(w + 6, NULL, 10) : 0;
		if (last_seq >= (uint64_t)n * (uint64_t)q / 4) {
			out[q - 1] = status_kb(p, "VmRSS:");
			q++;
		}
		hwm = status_kb(p, "VmHWM:") > hwm ? status_kb(p, "VmHWM:") : hwm;
		nanosleep(&nap, NULL);
	}
	while (p > 0 && kill(p, 0) == 0) {
		long h = status_kb(p, "VmHWM:");
		hwm = h > hwm ? h : hwm;
		nanosleep(&nap, NULL);
	}
	waitpid(r, &st, 0);
	out[3] = hwm;
}

static void bench_printer(const char *rec_bin, const char *tmp, int quick)
{
	int n = quick ? 40000 : 400000;
	long with[4], without[4];
	printer_rss(rec_bin, tmp, n, 0, without);
	printer_rss(rec_bin, tmp, n, 1, with);
	printf("The live printer over %d samples (fake clock, -i 0.01, JSON to /dev/null):\n", n);
	printf("  %-34s %8s %8s %8s %10s\n", "VmRSS KiB at", "1/4", "1/2", "3/4", "VmHWM end");
	printf("  %-34s %8ld %8ld %8ld %10ld\n", "printer (anchor)", without[0], without[1],
	       without[2], without[3]);
	printf("  %-34s %8ld %8ld %8ld %10ld\n\n", "printer --summary", with[0], with[1], with[2],
	       with[3]);
}

int bench_printer_section(const struct bench_ctx *c)
{
	bench_printer(c->rec_bin, c->tmp, c->quick);
	return 0;
}
