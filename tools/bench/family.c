/*
 * family.c - rt-bench family: the default mode at 1 Hz (recorder and
 * printer) beside the floor and sysstat's sadc over the same window, CPU
 * per sample from schedstat, then each process's memory.
 */
#include "bench.h"

/* The children of pid (its exporters, for the recorder). */
static int children_of(pid_t pid, pid_t *out, int cap)
{
	char p[96];
	snprintf(p, sizeof(p), "/proc/%d/task/%d/children", pid, pid);
	FILE *f = fopen(p, "r");
	int n = 0, v;
	while (f && n < cap && fscanf(f, "%d", &v) == 1)
		out[n++] = v;
	if (f)
		fclose(f);
	return n;
}

static long long family_ns(pid_t rec, const pid_t *kids, int nk, long long *own)
{
	long long sum = *own = sched_ns(rec);
	for (int i = 0; i < nk; i++) {
		long long k = sched_ns(kids[i]);
		sum += k > 0 ? k : 0;
	}
	return sum;
}

static void proc_name(pid_t pid, char *buf, size_t cap)
{
	char p[64];
	snprintf(p, sizeof(p), "/proc/%d/comm", pid);
	FILE *f = fopen(p, "r");
	if (!f || !fgets(buf, (int)cap, f))
		snprintf(buf, cap, "?");
	buf[strcspn(buf, "\n")] = '\0';
	if (f)
		fclose(f);
}

/* A measurement made in a child process at the same time as the parent's:
 * fn(n, out) there, its doubles back through a pipe. */
struct kid {
	pid_t pid;
	int fd[2];
};

static void kid_start(struct kid *k, void (*fn)(int n, double *out), int n, size_t nout)
{
	k->pid = pipe(k->fd) == 0 ? fork() : -1;
	if (k->pid != 0)
		return;
	double out[4] = {-1, 0, 0, 0};
	fn(n, out);
	if (write(k->fd[1], out, nout * sizeof(double)) != (ssize_t)(nout * sizeof(double)))
		_exit(1);
	_exit(0);
}

/* The kid's doubles into out (out[0] -1 when none came). */
static void kid_collect(struct kid *k, double *out, size_t nout)
{
	if (k->pid <= 0)
		return;
	if (read(k->fd[0], out, nout * sizeof(double)) != (ssize_t)(nout * sizeof(double)))
		out[0] = -1;
	waitpid(k->pid, NULL, 0);
	close(k->fd[0]);
	close(k->fd[1]);
}

/* The floor of the 5 files the reference's system metrics read: its CPU
 * us and syscalls per sample. */
static void five_floor(int n, double *out)
{
	floor_of = -1;
	out[0] = bench_pread(n);
	out[1] = floor_calls;
}

/* The printer's floor: a process woken once a second that writes one line
 * of a live line's size (3 KiB) to /dev/null, and nothing else: its CPU us
 * per sample. */
static void printer_floor(int n, double *out)
{
	static char line[3072];
	memset(line, 'x', sizeof(line));
	int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
	double dl = wall_now(), t0 = 0;
	for (int i = 0; i < n + 1; i++) {
		pace_wait(&dl);
		if (i == 1)
			t0 = cpu_now(); /* after the first wake: its pages are in */
		if (write(null, line, sizeof(line)) < 0) {
			out[0] = -1;
			return;
		}
	}
	out[0] = (cpu_now() - t0) / n * 1e6;
}

/* Each process of the family (the recorder and its children): VmRSS and
 * PSS, and the family's PSS. */
static void family_memory(pid_t rec, const pid_t *kids, int nk, int n)
{
	printf("Memory of the family (default mode, %d s into the run):\n", n + 2);
	long pss_sum = 0;
	pid_t all[9] = {rec};
	for (int i = 0; i < nk; i++)
		all[i + 1] = kids[i];
	for (int i = 0; i <= nk; i++) {
		char name[64];
		proc_name(all[i], name, sizeof(name));
		long rss = status_kb(all[i], "VmRSS:"), pss = smaps_kb(all[i], "Pss:");
		pss_sum += pss > 0 ? pss : 0;
		printf("  %-12s (pid %7d)  VmRSS %6ld KiB  PSS %6ld KiB\n", name, all[i], rss, pss);
	}
	printf("  family PSS                                         %8ld KiB  (%.2f MiB)\n\n",
	       pss_sum, pss_sum / 1024.0);
}

/*
 * The whole family at 1 Hz in the default mode (JSON lines to stderr: the
 * recorder and the rt-export it starts to print them), sysstat's sadc at
 * the same 1 s pace, and the floor paced at 1 Hz in this process, all three
 * over the same window after a 2 s warm-up: CPU per sample from the
 * kernel's run-time counters (schedstat), then each process's memory.
 */
static void bench_family(const char *rec_bin, const char *tmp, int n)
{
	char store[4300], sa[4300], count[32], sacount[32];
	snprintf(store, sizeof(store), "%s/store-family", tmp);
	snprintf(sa, sizeof(sa), "%s/sa.data", tmp);
	snprintf(count, sizeof(count), "%d", n + 4);
	snprintf(sacount, sizeof(sacount), "%d", n + 4);
	char *rargv[] = {(char *)rec_bin, "-i", "1", "--count", count, "--store", store, NULL};
	char sadc[] = "/usr/lib/sysstat/sadc";
	char *sargv[] = {sadc, "1", sacount, sa, NULL};
	int have_sadc = access(sadc, X_OK) == 0;
	pid_t rec = spawn_quiet(rargv), sad = have_sadc ? spawn_quiet(sargv) : -1;
	usleep(2200000);
	pid_t kids[8];
	int nk = children_of(rec, kids, 8);
	long long rec0, rec1, fam0 = family_ns(rec, kids, nk, &rec0);
	long long sad0 = sad > 0 ? sched_ns(sad) : -1;
	double w0 = wall_now();
	/* the two floors in the same window: the 5 files in a child, the
	 * recorder's own in this process */
	pace = 1.0;
	double five[2] = {-1, 0};
	struct kid fivek;
	kid_start(&fivek, five_floor, n, 2);
	double wake = -1;
	struct kid wakek;
	kid_start(&wakek, printer_floor, n, 1);
	floor_of = rec;
	double fl = bench_pread(n);
	floor_of = 0;
	pace = 0;
	double w1 = wall_now();
	long long fam1 = family_ns(rec, kids, nk, &rec1);
	long long sad1 = sad > 0 ? sched_ns(sad) : -1;
	kid_collect(&fivek, five, 2);
	kid_collect(&wakek, &wake, 1);
	double samples = (w1 - w0) / 1.0;
	double fam = (double)(fam1 - fam0) / samples / 1e3,
	       own = (double)(rec1 - rec0) / samples / 1e3;
	printf("Default mode at 1 Hz (JSON lines to stderr), %d samples, side by side:\n", n);
	printf("  floor of the %2d files the recorder keeps open       %8.1f us  (%.1f syscalls)\n",
	       floor_nfiles, fl, floor_calls);
	if (five[0] > 0)
		printf("  floor of the  5 files the reference's metrics read  %8.1f us  (%.1f "
		       "syscalls)\n",
		       five[0], five[1]);
	printf("  rt family: rt-recorder + rt-export live             %8.1f us  (%.2fx floor of "
	       "its files)\n",
	       fam, fam / fl);
	printf("    of which rt-recorder / its printer                %8.1f / %.1f us\n", own,
	       fam - own);
	if (wake > 0)
		printf("  the printer's floor: woken at 1 Hz, writes 3 KiB    %8.1f us  (printer "
		       "%.2fx)\n",
		       wake, (fam - own) / wake);
	printf("  (the recorder's files: %s)\n", floor_list);
	if (sad0 >= 0 && sad1 >= 0) {
		double sd = (double)(sad1 - sad0) / samples / 1e3;
		printf(
		    "  sysstat sadc 1 (same pace, same window)             %8.1f us  (%.2fx floor, "
		    "%.2fx rt family)\n",
		    sd, sd / fl, sd / fam);
	} else {
		printf("  sysstat sadc: not installed (apt-get install sysstat to compare)\n");
	}
	printf("  (the Python packages: rt-bench peers)\n");
	family_memory(rec, kids, nk, n);
	int st;
	waitpid(rec, &st, 0);
	if (sad > 0)
		waitpid(sad, &st, 0);
}

int bench_family_section(const struct bench_ctx *c)
{
	bench_family(c->rec_bin, c->tmp, c->quick ? 6 : 60);
	return 0;
}
