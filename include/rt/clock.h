/*
 * clock.h - the one source of time.
 *
 * Every timestamp and every wait goes through here, so tests can run the
 * sampler on a fake clock that advances only when the sampler waits.
 */
#ifndef RT_CLOCK_H
#define RT_CLOCK_H

#include <stdint.h>

struct rt_time {
	uint64_t mono_ns; /* CLOCK_MONOTONIC */
	uint64_t wall_ns; /* CLOCK_REALTIME */
};

void rt_clock_now(struct rt_time *t);

/*
 * The same, with a wall time that never steps: the wall clock at this
 * process's first call, plus CLOCK_BOOTTIME since (which counts suspend
 * and is slewed, never stepped, with the wall clock). A run's timestamps
 * come from here: a clock set back or forward mid-run moves no sample out
 * of order, and END never comes before START. Equal to rt_clock_now() on
 * the fake clock and on a clock nobody steps.
 */
void rt_clock_now_steady(struct rt_time *t);

/* The real CLOCK_MONOTONIC in ns, even on the fake clock: for bounded
 * waits on other processes and peers, which fake time cannot shorten. */
uint64_t rt_clock_mono_real(void);

/*
 * Wait until the monotonic clock reaches deadline_ns, or until fd (if >= 0)
 * becomes readable. Returns 1 when fd is readable, 0 at the deadline.
 * On the fake clock, time jumps to the deadline and fd is only polled.
 */
int rt_clock_wait(uint64_t deadline_ns, int fd);

/* Switch to the fake clock: wall time starts at wall_ns, monotonic at
 * 1e9 ns. For tests (the recorder honours $RT_TEST_CLOCK=epoch seconds). */
void rt_clock_set_fake(uint64_t wall_ns);
/* 1 on the fake clock, else 0. */
int rt_clock_is_fake(void);

#endif
