/*
 * gpu_nvml.c - rt-bench gpu: what NVML costs the recorder per sample, on
 * the fake NVML spending what each call took on an NVIDIA H100 (driver
 * 580; tests/fake_nvml/h100_costs.h), beside the floor: the cost of the
 * calls the values need, from the same table.
 *
 * Three jobs on a host with one GPU: a CPU-only job (another process
 * holds the GPU), a job alone on its GPU, and a job sharing it with a
 * process outside the tree. Each is recorded twice (SHORT and LONG
 * samples, --pid, real clock): the difference is the steady cost per
 * sample, the rest the once-per-run cost (identity, the energy counter's
 * first and last reading, buffer sizing). The recorder's CPU with NVML
 * less its CPU without (the same runs with no NVML) is what NVML costs;
 * the fake counts the calls (FAKE_NVML_STATS).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../tests/fake_nvml/h100_costs.h"
#include "gpu_nvml.h"

static const char *const call_name[] = {
#define H100_NAME(id, fn, cpu, wall) fn,
    H100_COSTS(H100_NAME)
#undef H100_NAME
};
static const double call_cpu[] = {
#define H100_CPU(id, fn, cpu, wall) cpu,
    H100_COSTS(H100_CPU)
#undef H100_CPU
};

enum shape { CPU_ONLY, ALONE, SHARED, NSHAPES };
static const char *const shape_name[NSHAPES] = {"CPU-only job, GPU host", "GPU job alone",
                                                "GPU job sharing its GPU"};

struct cost {
	double calls, cpu_us; /* calls and CPU (µs) */
};

/* The floor per sample at interval secs: the gauges (util, memory,
 * temperature, power, two clocks, event reasons), the device count, the
 * two process lists; and the tree's busy: none, the device's samples
 * once per NVML period (200 ms) or sample, or every process's once per
 * period. */
static struct cost floor_per_sample(enum shape s, double secs)
{
	static const enum h100_call each[] = {
	    H100_CALL_count,   H100_CALL_util,    H100_CALL_memory, H100_CALL_temperature,
	    H100_CALL_power,   H100_CALL_clock,   H100_CALL_clock,  H100_CALL_throttle,
	    H100_CALL_compute, H100_CALL_graphics};
	struct cost f = {0, 0};
	for (size_t i = 0; i < sizeof(each) / sizeof(each[0]); i++) {
		f.calls++;
		f.cpu_us += call_cpu[each[i]];
	}
	double periods = secs / 0.2; /* NVML's samples per interval */
	if (s == ALONE) {
		double c = periods < 1 ? periods : 1;
		f.calls += c;
		f.cpu_us += c * call_cpu[H100_CALL_samples];
	} else if (s == SHARED) {
		f.calls += periods;
		f.cpu_us += periods * call_cpu[H100_CALL_putil];
	}
	return f;
}

/* Once per run: the identity, a fan speed the board does not support
 * asked once, and the energy counter at the first and the last sample. */
static struct cost floor_per_run(void)
{
	static const enum h100_call once[] = {
	    H100_CALL_handle, H100_CALL_driver, H100_CALL_uuid,      H100_CALL_name,
	    H100_CALL_pci,    H100_CALL_cores,  H100_CALL_max_clock, H100_CALL_fan,
	    H100_CALL_energy, H100_CALL_energy};
	struct cost f = {0, 0};
	for (size_t i = 0; i < sizeof(once) / sizeof(once[0]); i++) {
		f.calls++;
		f.cpu_us += call_cpu[once[i]];
	}
	return f;
}

/* ---- the floor, measured: the same fake calls made directly ---- */

typedef int (*fn_v)(void *, void *);
typedef int (*fn_u)(unsigned *);
typedef int (*fn_dt)(void *, int, unsigned *);
typedef int (*fn_list)(void *, unsigned *, void *);
typedef int (*fn_samples)(void *, int, unsigned long long, int *, unsigned *, void *);
typedef int (*fn_putil)(void *, void *, unsigned *, unsigned long long);

struct fake {
	void *lib, *dev;
	fn_u count;
	fn_v util, memory, power, throttle;
	fn_dt temperature, clock;
	fn_list compute, graphics;
	fn_samples samples;
	fn_putil putil;
};

static int fake_open(struct fake *f, const char *path)
{
	memset(f, 0, sizeof(*f));
	f->lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!f->lib)
		return -1;
	int (*init)(void) = (int (*)(void))dlsym(f->lib, "nvmlInit_v2");
	int (*handle)(unsigned, void **) =
	    (int (*)(unsigned, void **))dlsym(f->lib, "nvmlDeviceGetHandleByIndex_v2");
	*(void **)&f->count = dlsym(f->lib, "nvmlDeviceGetCount_v2");
	*(void **)&f->util = dlsym(f->lib, "nvmlDeviceGetUtilizationRates");
	*(void **)&f->memory = dlsym(f->lib, "nvmlDeviceGetMemoryInfo");
	*(void **)&f->power = dlsym(f->lib, "nvmlDeviceGetPowerUsage");
	*(void **)&f->throttle = dlsym(f->lib, "nvmlDeviceGetCurrentClocksThrottleReasons");
	*(void **)&f->temperature = dlsym(f->lib, "nvmlDeviceGetTemperature");
	*(void **)&f->clock = dlsym(f->lib, "nvmlDeviceGetClockInfo");
	*(void **)&f->compute = dlsym(f->lib, "nvmlDeviceGetComputeRunningProcesses_v3");
	*(void **)&f->graphics = dlsym(f->lib, "nvmlDeviceGetGraphicsRunningProcesses_v3");
	*(void **)&f->samples = dlsym(f->lib, "nvmlDeviceGetSamples");
	*(void **)&f->putil = dlsym(f->lib, "nvmlDeviceGetProcessUtilization");
	if (!init || !handle || !f->count || !f->util || !f->memory || !f->power || !f->throttle ||
	    !f->temperature || !f->clock || !f->compute || !f->graphics || !f->samples ||
	    !f->putil || init() != 0 || handle(0, &f->dev) != 0)
		return -1;
	return 0;
}

static double thread_cpu_us(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static double now_us(void)
{
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

/* One sample's floor calls, as the recorder's values need them. */
static void floor_calls(struct fake *f, enum shape s, int iter, double secs)
{
	static unsigned char buf[256 * 48];
	unsigned u, cnt;
	int vt;
	f->count(&u);
	f->util(f->dev, buf);
	f->memory(f->dev, buf);
	f->temperature(f->dev, 0, &u);
	f->power(f->dev, &u);
	f->clock(f->dev, 0, &u);
	f->clock(f->dev, 2, &u);
	f->throttle(f->dev, buf);
	cnt = 64;
	f->compute(f->dev, &cnt, buf);
	cnt = 64;
	f->graphics(f->dev, &cnt, buf);
	double periods = secs / 0.2;
	/* the busy calls this sample makes: the device's samples once (all of
	 * them since the last call), each process's once a period; at an
	 * interval shorter than the period, one every 1/periods samples */
	int calls = periods < 1  ? (iter % (int)(1 / periods + 0.5)) == 0
	            : s == ALONE ? 1
	                         : (int)(periods + 0.5);
	for (int k = 0; k < calls && s != CPU_ONLY; k++) {
		cnt = 128;
		unsigned long long last = (unsigned long long)(now_us() - secs * 1e6);
		if (s == ALONE)
			f->samples(f->dev, 1, last, &vt, &cnt, buf);
		else
			f->putil(f->dev, buf, &cnt, (unsigned long long)(now_us() - 200000));
	}
}

/* The floor's CPU per sample (µs): its calls made at the sample interval
 * (where caches cool between samples, as in the recorder), 10 s of them. */
static double floor_measured(const char *fake, enum shape s, double secs)
{
	struct fake f;
	if (fake_open(&f, fake))
		return -1;
	int iters = (int)(10 / secs);
	long ns = (long)(secs * 1e9);
	struct timespec gap = {ns / 1000000000L, ns % 1000000000L};
	double cpu = 0;
	for (int i = 0; i < iters; i++) {
		double t0 = thread_cpu_us();
		floor_calls(&f, s, i, secs);
		cpu += thread_cpu_us() - t0;
		nanosleep(&gap, NULL);
	}
	dlclose(f.lib);
	return cpu / iters;
}

/* ---- the anchor of rt's own part: one request to a worker thread and
 * its answer (what a sample pays to keep NVML off the sampling thread) ---- */

struct pingpong {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int want, done, stop;
};

static void *pong(void *arg)
{
	struct pingpong *p = arg;
	pthread_mutex_lock(&p->mu);
	while (!p->stop) {
		while (!p->want && !p->stop)
			pthread_cond_wait(&p->cv, &p->mu);
		p->want = 0;
		p->done++;
		pthread_cond_broadcast(&p->cv);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

/* CPU (µs, both threads) of one round trip, paced as samples are. */
static double round_trip_us(void)
{
	struct pingpong p = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0};
	pthread_t th;
	if (pthread_create(&th, NULL, pong, &p))
		return -1;
	int n = 200;
	struct timespec gap = {0, 2000000}, c0, c1;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
	for (int i = 0; i < n; i++) {
		pthread_mutex_lock(&p.mu);
		int before = p.done;
		p.want = 1;
		pthread_cond_broadcast(&p.cv);
		while (p.done == before)
			pthread_cond_wait(&p.cv, &p.mu);
		pthread_mutex_unlock(&p.mu);
		nanosleep(&gap, NULL); /* both sleep between samples: caches and all */
	}
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
	pthread_mutex_lock(&p.mu);
	p.stop = 1;
	pthread_cond_broadcast(&p.cv);
	pthread_mutex_unlock(&p.mu);
	pthread_join(th, NULL);
	/* less the nanosleep calls' own CPU, measured alone */
	struct timespec s0, s1;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &s0);
	for (int i = 0; i < n; i++)
		nanosleep(&gap, NULL);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &s1);
	double all = (c1.tv_sec - c0.tv_sec) * 1e6 + (c1.tv_nsec - c0.tv_nsec) / 1e3;
	double sleeps = (s1.tv_sec - s0.tv_sec) * 1e6 + (s1.tv_nsec - s0.tv_nsec) / 1e3;
	return (all - sleeps) / n;
}

static pid_t spawn_sleep(void)
{
	pid_t p = fork();
	if (p == 0) {
		execlp("sleep", "sleep", "600", (char *)NULL);
		_exit(127);
	}
	return p;
}

/* The calls the fake counted, weighted by their H100 cost. */
static struct cost read_stats(const char *path)
{
	struct cost c = {0, 0};
	FILE *f = fopen(path, "r");
	char name[128];
	unsigned long n;
	while (f && fscanf(f, "%127s %lu", name, &n) == 2)
		for (int i = 0; i < H100_NCALLS; i++)
			if (!strcmp(name, call_name[i])) {
				c.calls += (double)n;
				c.cpu_us += (double)n * call_cpu[i];
			}
	if (f)
		fclose(f);
	return c;
}

/* CPU (µs) of the recorder's NVML worker thread (named rt-nvml) so far,
 * from its schedstat; 0 when there is none (yet). */
static double nvml_thread_us(pid_t pid)
{
	char dir[64], path[160], buf[128];
	snprintf(dir, sizeof(dir), "/proc/%d/task", (int)pid);
	DIR *d = opendir(dir);
	struct dirent *e;
	double us = 0;
	while (d && (e = readdir(d))) {
		snprintf(path, sizeof(path), "%s/%.20s/comm", dir, e->d_name);
		FILE *f = fopen(path, "r");
		int is = f && fgets(buf, sizeof(buf), f) && !strncmp(buf, "rt-nvml", 7);
		if (f)
			fclose(f);
		snprintf(path, sizeof(path), "%s/%.20s/schedstat", dir, e->d_name);
		unsigned long long ns;
		if (is && (f = fopen(path, "r"))) {
			if (fscanf(f, "%llu", &ns) == 1)
				us = ns / 1e3;
			fclose(f);
		}
	}
	if (d)
		closedir(d);
	return us;
}

/* One recording of count samples: the recorder's CPU (µs), its NVML
 * thread's, and with NVML the calls. */
static int record(const char *rec, const char *dir, pid_t job, const char *interval, int count,
                  int nvml, double *cpu_us, double *thread_us, struct cost *calls)
{
	char store[4200], stats[4200], cnt[16], pidarg[16];
	snprintf(store, sizeof(store), "%s/store", dir);
	snprintf(stats, sizeof(stats), "%s/stats", dir);
	snprintf(cnt, sizeof(cnt), "%d", count);
	snprintf(pidarg, sizeof(pidarg), "%d", (int)job);
	unlink(stats);
	pid_t p = fork();
	if (p == 0) {
		int null = open("/dev/null", O_WRONLY);
		dup2(null, 1);
		dup2(null, 2);
		if (!nvml)
			setenv("RT_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
		setenv("FAKE_NVML_STATS", stats, 1);
		execl(rec, rec, "--quiet", "--store", store, "--pid", pidarg, "-i", interval,
		      "--count", cnt, (char *)NULL);
		_exit(127);
	}
	int st;
	struct rusage ru;
	*thread_us = 0;
	while (wait4(p, &st, WNOHANG, &ru) == 0) { /* the rt-nvml thread's CPU, to the end */
		double t = nvml_thread_us(p);
		if (t > *thread_us)
			*thread_us = t;
		struct timespec gap = {0, 20000000};
		nanosleep(&gap, NULL);
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		return -1;
	*cpu_us = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 + ru.ru_utime.tv_usec +
	          ru.ru_stime.tv_usec;
	if (calls)
		*calls = read_stats(stats);
	return 0;
}

/* The processes on the GPU for a shape: the job's and another's. */
static void set_pids(enum shape s, pid_t job, pid_t other)
{
	char spec[128];
	if (s == CPU_ONLY)
		snprintf(spec, sizeof(spec), "%d:0:3072:30", (int)other);
	else if (s == ALONE)
		snprintf(spec, sizeof(spec), "%d:0:20480:99", (int)job);
	else
		snprintf(spec, sizeof(spec), "%d:0:20480:70,%d:0:3072:20", (int)job, (int)other);
	setenv("FAKE_NVML_PIDS", spec, 1);
}

struct measured {
	struct cost per_sample, per_run; /* calls from the fake; cpu_us from rusage */
	double thread_us;                /* per sample, the rt-nvml thread's (schedstat) */
	int ok;
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* One repetition: two lengths with and without NVML; the steady cost per
 * sample and the once-per-run rest. */
static int measure_once(const char *rec, const char *dir, pid_t job, const char *interval,
                        int shortn, int longn, struct measured *m)
{
	double c[2][2], th[2], unused;
	struct cost k[2];
	int n[2] = {shortn, longn};
	for (int i = 0; i < 2; i++)
		if (record(rec, dir, job, interval, n[i], 1, &c[i][1], &th[i], &k[i]) ||
		    record(rec, dir, job, interval, n[i], 0, &c[i][0], &unused, NULL))
			return -1;
	double d = longn - shortn;
	m->per_sample.calls = (k[1].calls - k[0].calls) / d;
	m->per_sample.cpu_us = ((c[1][1] - c[1][0]) - (c[0][1] - c[0][0])) / d;
	m->per_run.calls = k[0].calls - shortn * m->per_sample.calls;
	m->per_run.cpu_us = (c[0][1] - c[0][0]) - shortn * m->per_sample.cpu_us;
	m->thread_us = (th[1] - th[0]) / d;
	return 0;
}

/* The median of REPS repetitions (a whole recorder's CPU is noisy). */
#define REPS 3
static struct measured measure(const char *rec, const char *dir, pid_t job, const char *interval,
                               int shortn, int longn)
{
	struct measured r[REPS], m;
	memset(&m, 0, sizeof(m));
	double cpu[REPS], run[REPS], th[REPS];
	for (int i = 0; i < REPS; i++) {
		if (measure_once(rec, dir, job, interval, shortn, longn, &r[i]))
			return m;
		cpu[i] = r[i].per_sample.cpu_us;
		run[i] = r[i].per_run.cpu_us;
		th[i] = r[i].thread_us;
	}
	qsort(cpu, REPS, sizeof(double), cmp_double);
	qsort(run, REPS, sizeof(double), cmp_double);
	qsort(th, REPS, sizeof(double), cmp_double);
	m = r[0];
	m.per_sample.cpu_us = cpu[REPS / 2];
	m.per_run.cpu_us = run[REPS / 2];
	m.thread_us = th[REPS / 2];
	m.ok = 1;
	return m;
}

/* measured (floor): calls; CPU (the whole recorder's, median of REPS)
 * beside the floor's calls made directly on the same fake, the ratio; the
 * rt-nvml thread's own CPU; on the H100: the table's floor plus what rt
 * spends beyond the calls; once per run beside the table's floor. */
static void print_row(const char *label, const char *interval, const struct measured *m,
                      struct cost fs, double fmeas, struct cost fr)
{
	double own = m->per_sample.cpu_us - fmeas;
	printf(
	    "  %-24s -i %-4s %5.1f (%4.1f) %7.0f (%6.0f) %5.2fx %7.0f %8.0f (%5.0f) %3.0f (%2.0f) "
	    "%6.0f (%5.0f)\n",
	    label, interval, m->per_sample.calls, fs.calls, m->per_sample.cpu_us, fmeas,
	    fmeas > 0 ? m->per_sample.cpu_us / fmeas : 0, m->thread_us, fs.cpu_us + own, fs.cpu_us,
	    m->per_run.calls, fr.calls, m->per_run.cpu_us, fr.cpu_us);
}

int rt_bench_gpu(const char *rec_bin, const char *fake, int seconds)
{
	const char *rec = getenv("RT_BENCH_RECORDER") ? getenv("RT_BENCH_RECORDER") : rec_bin;
	if (access(fake, R_OK) != 0) {
		fprintf(stderr, "rt-bench gpu: no fake NVML at %s (build the tests)\n", fake);
		return 1;
	}
	char dir[] = "/tmp/rt-bench-gpu-XXXXXX";
	if (!mkdtemp(dir))
		return 1;
	setenv("RT_NVML_LIBRARY", fake, 1);
	setenv("FAKE_NVML_GPUS", "1", 1);
	setenv("FAKE_NVML_COST", "h100", 1);
	pid_t job = spawn_sleep(), other = spawn_sleep();
	printf("NVML per sample on the fake H100 (%s; real clock, one GPU):\n"
	       "  rt (floor): calls per sample; the recorder's CPU us per sample with NVML less\n"
	       "  without (median of %d), beside the floor's calls made directly on the same fake\n"
	       "  at the same interval; of it, the rt-nvml thread's (schedstat); on the H100: its\n"
	       "  table's floor + what rt spends beyond the calls; once per run (identity, energy\n"
	       "  twice, buffer sizing) beside the table's floor\n",
	       rec, REPS);
	printf("  %-24s %-7s %-12s %-14s %-6s %-7s %-16s %-8s %s\n", "", "", "calls", "CPU us",
	       "ratio", "thread", "on H100 us", "once", "CPU us once");
	static const char *const intervals[] = {"1", "0.1"};
	int rc = 0;
	for (int iv = 0; iv < 2; iv++)
		for (int s = 0; s < NSHAPES; s++) {
			set_pids((enum shape)s, job, other);
			double secs = atof(intervals[iv]);
			int longn = (int)(seconds / secs), shortn = longn / 5;
			struct measured m = measure(rec, dir, job, intervals[iv], shortn, longn);
			if (!m.ok) {
				printf("  %-26s -i %-4s failed\n", shape_name[s], intervals[iv]);
				rc = 1;
				continue;
			}
			print_row(shape_name[s], intervals[iv], &m,
			          floor_per_sample((enum shape)s, secs),
			          floor_measured(fake, (enum shape)s, secs), floor_per_run());
		}
	kill(job, SIGKILL);
	kill(other, SIGKILL);
	waitpid(job, NULL, 0);
	waitpid(other, NULL, 0);
	char cmd[200];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		rc = 1;
	printf("  a worker thread's round trip (the anchor of rt's own part)  %6.1f us CPU\n",
	       round_trip_us());
	printf("  (goals: at most 1.2x the floor; on the H100 at -i 1, under 3000 us for a job\n"
	       "   alone on its GPU, under 300 us for a CPU-only job)\n\n");
	return rc;
}
