/*
 * delay.c - rt-bench delay: the wait for a CPU (schedstat run_delay) per
 * sample of a tree of one process with N threads, beside its floor.
 */
#include "bench.h"

static void *sleep_thread(void *arg)
{
	(void)arg;
	pause();
	return NULL;
}

static void start_threads(void *arg)
{
	int n = *(int *)arg;
	for (int i = 1; i < n; i++) {
		pthread_t th;
		if (pthread_create(&th, NULL, sleep_thread, NULL))
			break;
	}
}

/* One process with n threads, all asleep; its pid (kill_tree ends it). */
static pid_t make_threads(int n)
{
	return fork_ready(start_threads, &n);
}

/* CPU us per sample of tree t, over reps samples. */
static double tree_sample_us(struct rt_proctree *t, int reps)
{
	struct rt_rec_process r;
	return sample_cpu(t, &r, reps) / reps * 1e6;
}

static void bench_delay(int n, int reps)
{
	pid_t p = make_threads(n);
	if (p <= 0)
		return;
	usleep(100000);
	struct rt_proctree *t;
	if (rt_proctree_open(&t, p)) {
		kill_tree(p);
		return;
	}
	tree_sample_us(t, 2); /* descriptors kept from the second sample */
	rt_proctree_read_delay(t, 0);
	double off = tree_sample_us(t, reps);
	rt_proctree_read_delay(t, 1);
	double on = tree_sample_us(t, reps);
	rt_proctree_close(t);
	/* the floor: each thread's schedstat, kept open, one pread a sample */
	int *fds = malloc((size_t)n * sizeof(int));
	int nf = 0;
	char path[128], buf[256];
	snprintf(path, sizeof(path), "/proc/%d/task", (int)p);
	DIR *d = opendir(path);
	struct dirent *de;
	while (d && nf < n && (de = readdir(d)))
		if (de->d_name[0] >= '0' && de->d_name[0] <= '9') {
			snprintf(path, sizeof(path), "/proc/%d/task/%.16s/schedstat", (int)p,
			         de->d_name);
			int fd = open(path, O_RDONLY | O_CLOEXEC);
			if (fd >= 0)
				fds[nf++] = fd;
		}
	if (d)
		closedir(d);
	double fl = 0;
	for (int i = 0; i < reps; i++) {
		double t0 = cpu_now();
		for (int k = 0; k < nf; k++)
			if (pread(fds[k], buf, sizeof(buf), 0) < 0)
				break;
		fl += cpu_now() - t0;
	}
	for (int k = 0; k < nf; k++)
		close(fds[k]);
	free(fds);
	kill_tree(p);
	printf("  %-12d %11.1f us %11.1f us %11.1f us %11.1f us\n", n, off, on, on - off,
	       fl / reps * 1e6);
}

int bench_delay_section(const struct bench_ctx *c)
{
	printf("The wait for a CPU (schedstat run_delay), CPU per sample of a tree of one\n"
	       "process with N threads: the tree's sample with and without it, beside the\n"
	       "floor of preading each thread's schedstat through a kept descriptor:\n");
	printf("  %-12s %14s %14s %14s %14s\n", "threads", "without", "with", "its cost", "floor");
	int sizes[4] = {1, 100, 1000, 5000};
	for (int i = 0; i < 4; i++)
		bench_delay(sizes[i], c->quick ? 20 : 200);
	printf("\n");
	return 0;
}
