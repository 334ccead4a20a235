#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <errno.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rt/common.h"
#include "rt/ring.h"

static char path[256];

static void setup(void)
{
	snprintf(path, sizeof(path), "/tmp/rt-test-ring-%d-%ld", getpid(), random());
}

static void teardown(void)
{
	unlink(path);
}

TestSuite(ring, .init = setup, .fini = teardown);

Test(ring, reader_sees_published_samples_in_order)
{
	struct rt_ring *w, *r;
	cr_assert_eq(rt_ring_create(path, 9, 64, 4, &w), 0);
	cr_assert_eq(rt_ring_open(path, &r), 0);
	uint64_t v;
	char out[64];
	size_t len;
	cr_expect_eq(rt_ring_read(r, 0, out, sizeof(out), &len), RT_E_AGAIN);
	for (v = 0; v < 3; v++)
		cr_assert_eq(rt_ring_publish(w, v, &v, sizeof(v)), 0);
	cr_expect_eq(rt_ring_head(r), 3);
	cr_expect_eq(rt_ring_run_id(r), 9);
	for (uint64_t s = 0; s < 3; s++) {
		cr_assert_eq(rt_ring_read(r, s, out, sizeof(out), &len), 0);
		cr_expect_eq(len, sizeof(uint64_t));
		cr_expect_eq(memcmp(out, &s, sizeof(s)), 0);
	}
	rt_ring_close(r, 0);
	rt_ring_close(w, 0);
}

Test(ring, lapped_reader_is_told_so)
{
	struct rt_ring *w, *r;
	cr_assert_eq(rt_ring_create(path, 1, 16, 4, &w), 0);
	cr_assert_eq(rt_ring_open(path, &r), 0);
	for (uint64_t v = 0; v < 10; v++)
		rt_ring_publish(w, v, &v, sizeof(v));
	char out[16];
	size_t len;
	cr_expect_eq(rt_ring_read(r, 2, out, sizeof(out), &len), RT_E_LAPPED);
	cr_expect_eq(rt_ring_read(r, 9, out, sizeof(out), &len), 0);
	cr_expect_eq(rt_ring_read(r, 10, out, sizeof(out), &len), RT_E_AGAIN);
	rt_ring_close(r, 0);
	rt_ring_close(w, 0);
}

Test(ring, oversized_sample_is_refused)
{
	struct rt_ring *w;
	char big[100] = {0};
	cr_assert_eq(rt_ring_create(path, 1, 16, 4, &w), 0);
	cr_expect_eq(rt_ring_publish(w, 0, big, sizeof(big)), -EMSGSIZE);
	rt_ring_close(w, 1);
}

Test(ring, file_is_private_and_never_reused)
{
	struct rt_ring *w, *w2;
	cr_assert_eq(rt_ring_create(path, 1, 16, 4, &w), 0);
	struct stat st;
	cr_assert_eq(stat(path, &st), 0);
	cr_expect_eq(st.st_mode & 0777, 0600);
	cr_expect_eq(rt_ring_create(path, 1, 16, 4, &w2), -EEXIST);
	rt_ring_close(w, 0);
}

Test(ring, dead_writer_is_detected_and_ring_stays_readable)
{
	pid_t pid = fork();
	if (pid == 0) {
		struct rt_ring *w;
		if (rt_ring_create(path, 5, 16, 4, &w))
			_exit(1);
		uint64_t v = 77;
		rt_ring_publish(w, 0, &v, sizeof(v));
		pause(); /* killed below, never finishes */
		_exit(0);
	}
	struct rt_ring *r = NULL;
	for (int i = 0; i < 200 && rt_ring_open(path, &r) != 0; i++)
		usleep(10000);
	cr_assert(r);
	while (rt_ring_head(r) < 1)
		usleep(1000);
	cr_expect_eq(rt_ring_writer_alive(r), 1);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	cr_expect_eq(rt_ring_writer_alive(r), 0);
	cr_expect_eq(rt_ring_state(r), RT_RING_RUNNING);
	uint64_t v;
	size_t len;
	cr_expect_eq(rt_ring_read(r, 0, &v, sizeof(v), &len), 0);
	cr_expect_eq(v, 77);
	rt_ring_close(r, 0);
}

Test(ring, hostile_header_is_rejected)
{
	int fd = open(path, O_CREAT | O_WRONLY, 0600);
	char junk[300];
	memset(junk, 0x5a, sizeof(junk));
	cr_assert_eq(write(fd, junk, sizeof(junk)), (ssize_t)sizeof(junk));
	close(fd);
	struct rt_ring *r;
	cr_expect_eq(rt_ring_open(path, &r), RT_E_CORRUPT);
	/* a valid ring cut short is rejected too */
	unlink(path);
	struct rt_ring *w;
	cr_assert_eq(rt_ring_create(path, 1, 64, 8, &w), 0);
	cr_assert_eq(truncate(path, 400), 0);
	cr_expect_eq(rt_ring_open(path, &r), RT_E_CORRUPT);
	rt_ring_close(w, 0);
}

/* A reader asleep in rt_ring_wait is woken by the publish (not by its
 * 20 s timeout), and one waiting for the end by the state change. */
Test(ring, sleeping_readers_are_woken_by_the_writer)
{
	struct rt_ring *w;
	cr_assert_eq(rt_ring_create(path, 9, 64, 4, &w), 0);
	int res[2];
	cr_assert_eq(pipe(res), 0);
	pid_t kid = fork();
	if (kid == 0) {
		struct rt_ring *r;
		if (rt_ring_open(path, &r))
			_exit(2);
		char c =
		    rt_ring_wait(r, 0, 20000000000ull) == 0 && rt_ring_head(r) == 1 ? 'w' : 't';
		char d = rt_ring_wait_end(r, 20000000000ull) == 0 ? 'e' : 't';
		if (write(res[1], &c, 1) != 1 || write(res[1], &d, 1) != 1)
			_exit(3);
		_exit(0);
	}
	usleep(200000); /* the reader is asleep by now */
	uint64_t v = 1;
	cr_assert_eq(rt_ring_publish(w, 0, &v, sizeof(v)), 0);
	usleep(100000);
	rt_ring_set_state(w, RT_RING_FINISHED);
	char got[2] = {0, 0};
	close(res[1]);
	for (size_t n = 0; n < 2;) {
		ssize_t k = read(res[0], got + n, 2 - n);
		cr_assert_gt(k, 0, "the reader stopped early");
		n += (size_t)k;
	}
	int st;
	waitpid(kid, &st, 0);
	cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	cr_expect_eq(got[0], 'w', "woken by the publish, head 1");
	cr_expect_eq(got[1], 'e', "woken by the end of the run");
	rt_ring_close(w, 1);
}

/* Nobody asleep: the writer makes no wake call (strace would show it; here
 * the waiter count stays 0), and a waiter that times out says so. */
Test(ring, a_wait_without_a_sample_times_out)
{
	struct rt_ring *w, *r;
	cr_assert_eq(rt_ring_create(path, 9, 64, 4, &w), 0);
	cr_assert_eq(rt_ring_open(path, &r), 0);
	cr_expect_eq(rt_ring_wait(r, 0, 20000000ull), RT_E_AGAIN);
	uint64_t v = 1;
	cr_assert_eq(rt_ring_publish(w, 0, &v, sizeof(v)), 0);
	cr_expect_eq(rt_ring_wait(r, 0, 20000000ull), 0, "head already past: no sleep");
	cr_expect_eq(rt_ring_wait_end(r, 20000000ull), RT_E_AGAIN);
	rt_ring_close(r, 0);
	rt_ring_close(w, 1);
}

/* A FIFO planted at a ring's name (names can be guessed) never blocks a
 * reader or a recorder: refused at once. */
Test(ring, fifo_at_the_ring_name_is_refused_without_blocking)
{
	cr_assert_eq(mkfifo(path, 0666), 0);
	struct rt_ring *r = NULL;
	alarm(5); /* a blocked open would end the test here */
	int rc = rt_ring_open(path, &r);
	alarm(0);
	cr_assert_neq(rc, 0);
	cr_assert_null(r);
	cr_assert_neq(rt_ring_create(path, 1, 256, 8, &r), 0, "O_EXCL: never reused");
}
