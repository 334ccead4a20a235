/*
 * disk.c - rt-bench --disk: the bytes the store makes a disk write per
 * sample (a 512 MB ext4 loop device holding only the store), beside the
 * anchor of appending the same bytes to a plain file with the same
 * fdatasync cadence. Its loop device helpers serve peers.c too.
 */
#include "bench.h"

/* Sectors written by block device dev (e.g. "loop3"). */
long long dev_write_sectors(const char *dev)
{
	char p[128];
	snprintf(p, sizeof(p), "/sys/block/%s/stat", dev);
	FILE *f = fopen(p, "r");
	long long v[7] = {0};
	int n = f ? fscanf(f, "%lld %lld %lld %lld %lld %lld %lld", &v[0], &v[1], &v[2], &v[3],
	                   &v[4], &v[5], &v[6])
	          : 0;
	if (f)
		fclose(f);
	return n == 7 ? v[6] : -1;
}

/* A 1 GB (sparse) ext4 loop device, mkfs's defaults (4 KiB blocks), mounted at <tmp>/<name> (default mount
 * options); its sysfs name into dev. 0 or -1. */
int make_loop(const char *tmp, const char *name, char *mnt, size_t mntcap, char dev[64])
{
	char img[4200], cmd[32768];
	snprintf(img, sizeof(img), "%s/%s.img", tmp, name);
	snprintf(mnt, mntcap, "%s/%s", tmp, name);
	mkdir(mnt, 0700);
	/* inode tables and journal zeroed now, not by ext4lazyinit during the
	 * measurement (it writes ~100 KB/s for minutes after the mount) */
	snprintf(cmd, sizeof(cmd),
	         "truncate -s 1G '%s' && losetup -f --show '%s' > '%s.dev' && mkfs.ext4 -q "
	         "-E lazy_itable_init=0,lazy_journal_init=0 "
	         "$(cat '%s.dev') && mount $(cat '%s.dev') '%s'",
	         img, img, img, img, img, mnt);
	if (system(cmd) != 0)
		return -1;
	snprintf(cmd, sizeof(cmd), "%s.dev", img);
	FILE *f = fopen(cmd, "r");
	int ok = f && fscanf(f, "/dev/%63s", dev) == 1;
	if (f)
		fclose(f);
	return ok ? 0 : -1;
}

void drop_loop(const char *tmp, const char *name)
{
	char cmd[16384];
	snprintf(cmd, sizeof(cmd),
	         "umount '%s/%s' 2>/dev/null; losetup -d $(cat '%s/%s.img.dev') 2>/dev/null", tmp,
	         name, tmp, name);
	if (system(cmd) != 0)
		printf("rt-bench --disk: cleanup of %s/%s failed\n", tmp, name);
}

/* The anchor at a real 1 Hz: per bytes appended to plain each second for
 * secs, fdatasync every 30. */
static void append_paced(const char *plain, size_t per, int secs)
{
	static char buf[65536];
	memset(buf, 'x', sizeof(buf));
	int fd = open(plain, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	struct timespec next;
	clock_gettime(CLOCK_MONOTONIC, &next);
	for (int k = 0; fd >= 0 && k < secs; k++) {
		if (write(fd, buf, per) < 0)
			break;
		if (k % 30 == 29)
			fdatasync(fd);
		next.tv_sec++;
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
	}
	if (fd >= 0)
		fdatasync(fd);
}

/*
 * The same at a real 1 Hz for secs seconds (the kernel's own periodic work,
 * writeback and the journal's commits, at its real pace), three devices
 * side by side in the same seconds: the recorder --quiet, the recorder with
 * its default live printer (rt-export reading the ring and the store), and
 * the anchor appending per bytes a second to a plain file with an
 * fdatasync every 30 s.
 */
static void bench_disk_real(const char *rec_bin, const char *tmp, size_t per, int secs)
{
	enum { FRESH, QUIET, PRINTER, ANCHOR, N };
	static const char *const names[N] = {"fresh", "quiet", "printer", "anchor"};
	char mnt[N][4200], dev[N][64];
	int made = 0;
	for (; made < N; made++)
		if (make_loop(tmp, names[made], mnt[made], sizeof(mnt[made]), dev[made]))
			break;
	if (made < N) {
		printf(
		    "rt-bench --disk: cannot make the loop devices (losetup, mkfs.ext4, mount)\n");
		for (int i = 0; i < made; i++)
			drop_loop(tmp, names[i]);
		return;
	}
	char count[16], store[N][4300], plain[4300];
	snprintf(count, sizeof(count), "%d", secs);
	for (int i = 0; i < N; i++)
		snprintf(store[i], sizeof(store[i]), "%.4199s/store", mnt[i]);
	snprintf(plain, sizeof(plain), "%s/plain.dat", mnt[ANCHOR]);
	/* a store that already holds a run, as a user's store does after the
	 * first: its creation is not what a run costs */
	for (int i = QUIET; i <= PRINTER; i++) {
		char *pre[] = {(char *)rec_bin, "--quiet", "-i", "0.01", "--count", "3",
		               "--store",       store[i],  NULL};
		double c, w;
		run_cmd(pre, &c, &w);
	}
	sync();
	sleep(6); /* the journal's own commit of what the sync left */
	long long s0[N];
	for (int i = 0; i < N; i++)
		s0[i] = dev_write_sectors(dev[i]);
	pid_t pid[N];
	for (int i = 0; i < N; i++) {
		if ((pid[i] = fork()) != 0)
			continue;
		int null = open("/dev/null", O_WRONLY);
		dup2(null, 1);
		dup2(null, 2);
		if (i != ANCHOR) {
			char *q[] = {(char *)rec_bin, "--quiet", "-i",     "1", "--count",
			             count,           "--store", store[i], NULL};
			char *d[] = {(char *)rec_bin, "-i",      "1",      "--count",
			             count,           "--store", store[i], NULL};
			execv(rec_bin, i == PRINTER ? d : q);
			_exit(127);
		}
		append_paced(plain, per, secs);
		_exit(0);
	}
	for (int i = 0; i < N; i++)
		waitpid(pid[i], NULL, 0);
	sync();
	double b[N];
	for (int i = 0; i < N; i++)
		b[i] = (double)(dev_write_sectors(dev[i]) - s0[i]) * 512 / secs;
	printf("Disk writes at a real 1 Hz (%d s; ext4, mkfs and mount defaults, 4 KiB blocks;\n"
	       "four devices side by side, target 1024 B/sample):\n",
	       secs);
	printf("  plain file: append %zu B/s, fdatasync every 30 s     %7.0f B/sample  (anchor)\n",
	       per, b[ANCHOR]);
	printf("  rt-recorder --quiet, a store that holds a run        %7.0f B/sample  (%.2fx "
	       "anchor)\n",
	       b[QUIET], b[QUIET] / b[ANCHOR]);
	printf("  rt-recorder, default live printer, the same          %7.0f B/sample  (%.2fx "
	       "anchor)\n",
	       b[PRINTER], b[PRINTER] / b[ANCHOR]);
	printf("  rt-recorder --quiet, its first run (creates the store) %5.0f B/sample  (%.2fx "
	       "anchor)\n",
	       b[FRESH], b[FRESH] / b[ANCHOR]);
	for (int i = 0; i < N; i++)
		drop_loop(tmp, names[i]);
}

/* 2,000 samples at 1 Hz on the fake clock into store (on dev), beside the
 * anchor of appending the bytes rt stored to plain with the same syncs:
 * printed. Returns the bytes stored per sample. */
static size_t disk_fake_clock(const char *rec_bin, const char *store, const char *plain,
                              const char *dev)
{
	const int n = 2000;
	char count[16];
	snprintf(count, sizeof(count), "%d", n);
	setenv("RT_TEST_CLOCK", "1795000000", 1);
	setenv("RT_TEST_HOOKS", "1", 1);
	char *rec[] = {(char *)rec_bin, "--quiet", "-i",          "1", "--count",
	               count,           "--store", (char *)store, NULL};
	sync();
	long long s0 = dev_write_sectors(dev);
	double cpu, wall;
	run_cmd(rec, &cpu, &wall);
	sync();
	long long s1 = dev_write_sectors(dev);
	unsetenv("RT_TEST_CLOCK");
	/* the anchor: the bytes rt stored, appended to a plain file with the
	 * same syncs (one per 30 samples: rt's group commit at 1 Hz) */
	struct stat st;
	char data[4400];
	snprintf(data, sizeof(data), "%s/data.mdb", store);
	long long stored = stat(data, &st) == 0 ? (long long)st.st_size : -1;
	uint64_t used = 0;
	struct rt_store *sto;
	if (rt_store_open(store, RT_STORE_RDONLY, &sto) == 0) {
		rt_store_used_bytes(sto, &used);
		rt_store_close(sto);
	}
	size_t per = used ? (size_t)(used / n) : 64;
	static char buf[65536];
	memset(buf, 'x', sizeof(buf));
	int fd = open(plain, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	sync();
	long long p0 = dev_write_sectors(dev);
	for (int i = 0; fd >= 0 && i < n; i++) {
		if (write(fd, buf, per) < 0)
			break;
		if (i % 30 == 29)
			fdatasync(fd);
	}
	if (fd >= 0)
		close(fd);
	sync();
	long long p1 = dev_write_sectors(dev);
	printf("Disk writes at 1 Hz (%d samples, ext4 on %s holding only the store):\n", n, dev);
	printf("  plain file: append %zu B/sample, fdatasync every 30  %7.0f B/sample  "
	       "(anchor)\n",
	       per, (double)(p1 - p0) * 512 / n);
	printf("  rt-recorder store (LMDB, a commit + sync per 30 s)   %7.0f B/sample  "
	       "(%.1fx anchor)\n",
	       (double)(s1 - s0) * 512 / n, (double)(s1 - s0) / (double)(p1 - p0));
	printf("  stored: LMDB pages in use per sample              %8.0f B\n", (double)used / n);
	printf("  stored: data.mdb size per sample (zeroed pages ahead) %4.0f B\n\n",
	       (double)stored / n);
	return per;
}

static int bench_disk(const char *rec_bin, int secs)
{
	if (geteuid() != 0) {
		printf("rt-bench --disk needs root (it makes a loop device)\n");
		return 1;
	}
	char tmp[] = "/tmp/rt-bench-XXXXXX";
	if (!mkdtemp(tmp))
		return 1;
	char img[4200], mnt[4200], store[4300], shm[4300], plain[4300], dev[64] = "";
	snprintf(img, sizeof(img), "%s/disk.img", tmp);
	snprintf(mnt, sizeof(mnt), "%s/mnt", tmp);
	snprintf(store, sizeof(store), "%s/store", mnt);
	snprintf(plain, sizeof(plain), "%s/plain.dat", mnt);
	snprintf(shm, sizeof(shm), "%s/shm", tmp);
	mkdir(mnt, 0700);
	mkdir(shm, 0700);
	setenv("RT_SHM_DIR", shm, 1);
	char cmd[32768];
	snprintf(cmd, sizeof(cmd),
	         "truncate -s 512M '%s' && losetup -f --show '%s' > '%s.dev' && mkfs.ext4 -q "
	         "-E lazy_itable_init=0,lazy_journal_init=0 "
	         "$(cat '%s.dev') && mount $(cat '%s.dev') '%s'",
	         img, img, img, img, img, mnt);
	int rc = system(cmd);
	FILE *f = NULL;
	snprintf(cmd, sizeof(cmd), "%s.dev", img);
	if (rc == 0 && (f = fopen(cmd, "r")) && fscanf(f, "/dev/%63s", dev) == 1) {
		size_t per = disk_fake_clock(rec_bin, store, plain, dev);
		fflush(stdout);
		bench_disk_real(rec_bin, tmp, per, secs);
	} else {
		printf(
		    "rt-bench --disk: cannot make the loop device (losetup, mkfs.ext4, mount)\n");
	}
	if (f)
		fclose(f);
	snprintf(cmd, sizeof(cmd),
	         "umount '%s' 2>/dev/null; losetup -d $(cat '%s.dev') 2>/dev/null", mnt, img);
	if (system(cmd) != 0)
		printf("rt-bench --disk: cleanup of %s failed\n", mnt);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	return system(cmd) != 0;
}

/* rt-bench --disk [SECONDS of the real 1 Hz part, default 150] */
int bench_disk_mode(const struct bench_ctx *c)
{
	return bench_disk(c->rec_bin, c->secs);
}
