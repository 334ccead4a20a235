/* clock.c - real or fake time, and the one wait primitive (clock.h). */
#define _GNU_SOURCE
#include "rt/clock.h"

#include <errno.h>
#include <poll.h>
#include <time.h>

static int fake;
static uint64_t fake_mono, fake_wall0;

void rt_clock_set_fake(uint64_t wall_ns)
{
	fake = 1;
	fake_mono = 1000000000ull;
	fake_wall0 = wall_ns - fake_mono;
}

int rt_clock_is_fake(void)
{
	return fake;
}

static uint64_t ts_ns(const struct timespec *ts)
{
	return (uint64_t)ts->tv_sec * 1000000000ull + (uint64_t)ts->tv_nsec;
}

uint64_t rt_clock_mono_real(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts_ns(&ts);
}

void rt_clock_now(struct rt_time *t)
{
	if (fake) {
		t->mono_ns = fake_mono;
		t->wall_ns = fake_wall0 + fake_mono;
		return;
	}
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	t->mono_ns = ts_ns(&ts);
	clock_gettime(CLOCK_REALTIME, &ts);
	t->wall_ns = ts_ns(&ts);
}

void rt_clock_now_steady(struct rt_time *t)
{
	static uint64_t wall0, boot0;
	struct timespec ts;
	rt_clock_now(t);
	if (fake || clock_gettime(CLOCK_BOOTTIME, &ts) != 0)
		return;
	uint64_t boot = ts_ns(&ts);
	if (!wall0) {
		wall0 = t->wall_ns;
		boot0 = boot;
		return;
	}
	t->wall_ns = wall0 + (boot - boot0);
}

int rt_clock_wait(uint64_t deadline_ns, int fd)
{
	struct pollfd pfd = {.fd = fd, .events = POLLIN};
	if (fake) {
		if (fd >= 0 && poll(&pfd, 1, 0) > 0)
			return 1;
		if (deadline_ns > fake_mono)
			fake_mono = deadline_ns;
		return 0;
	}
	for (;;) {
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		uint64_t n = ts_ns(&now);
		if (n >= deadline_ns)
			return (fd >= 0 && poll(&pfd, 1, 0) > 0) ? 1 : 0;
		uint64_t left = deadline_ns - n;
		struct timespec to = {(time_t)(left / 1000000000ull), (long)(left % 1000000000ull)};
		int rc = ppoll(fd >= 0 ? &pfd : NULL, fd >= 0 ? 1 : 0, &to, NULL);
		if (rc > 0)
			return 1;
		if (rc == 0)
			return 0; /* the timeout ran out: the deadline has passed */
		if (rc < 0 && errno != EINTR)
			return 0;
	}
}
