/*
 * syscalls.c - rt-bench syscalls: the recorder's syscalls per sample
 * (strace -c of two run lengths) beside the floor's.
 */
#include "bench.h"

/* Syscalls per sample: strace -c of two run lengths, the difference
 * divided by the extra samples (startup cancels out). */
static double strace_calls(char *const argv[], const char *out)
{
	pid_t pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
		char *sargv[32] = {"strace", "-f", "-c", "-o", (char *)out};
		int a = 5;
		for (int i = 0; argv[i] && a < 31; i++)
			sargv[a++] = argv[i];
		sargv[a] = NULL;
		execvp("strace", sargv);
		_exit(127);
	}
	int st;
	waitpid(pid, &st, 0);
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		return -1;
	FILE *f = fopen(out, "r");
	char line[512];
	double calls = -1;
	while (f && fgets(line, sizeof(line), f)) {
		double pct, secs, usec, c;
		if (strstr(line, " total") &&
		    sscanf(line, "%lf %lf %lf %lf", &pct, &secs, &usec, &c) == 4)
			calls = c;
	}
	if (f)
		fclose(f);
	return calls;
}

static void bench_syscalls(const char *rec_bin, const char *tmp)
{
	if (system("command -v strace > /dev/null 2>&1") != 0) {
		printf("Syscalls per sample: strace not installed\n\n");
		return;
	}
	char store[4300], out[4300];
	snprintf(store, sizeof(store), "%s/store-strace", tmp);
	snprintf(out, sizeof(out), "%s/strace.txt", tmp);
	printf("Syscalls per sample at 100 Hz (strace -c, 600 minus 100 samples, over 500):\n");
	printf("  floor (preads, statvfs, getdents, the sleep)        %8.1f\n", floor_calls);
	for (int quiet = 1; quiet >= 0; quiet--) {
		double c[2];
		for (int k = 0; k < 2; k++) {
			char count[16];
			snprintf(count, sizeof(count), "%d", k ? 600 : 100);
			char *q[] = {(char *)rec_bin, "-i",  "0.01",    "--count", count,
			             "--store",       store, "--quiet", NULL};
			if (!quiet)
				q[7] = NULL;
			c[k] = strace_calls(q, out);
		}
		printf("  %-50s %8.1f\n",
		       quiet ? "rt-recorder --quiet"
		             : "rt-recorder + rt-export live (default mode)",
		       c[0] < 0 || c[1] < 0 ? -1 : (c[1] - c[0]) / 500);
	}
	printf("\n");
}

int bench_syscalls_section(const struct bench_ctx *c)
{
	pace = 0.01; /* the floor's calls, the sleep included */
	bench_pread(10);
	pace = 0;
	bench_syscalls(c->rec_bin, c->tmp);
	return 0;
}
