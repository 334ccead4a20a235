/*
 * clockstep.c - an LD_PRELOAD fixture: the wall clock stepped mid-run, as
 * an NTP step or an administrator's `date -s` would, without touching the
 * machine's clock (other tests run beside). RT_TEST_STEP="AFTER_S OFFSET_S":
 * AFTER_S seconds after the process starts, CLOCK_REALTIME jumps by
 * OFFSET_S (negative: back). Other clocks are untouched.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <time.h>

typedef int (*cg_fn)(clockid_t, struct timespec *);

int clock_gettime(clockid_t id, struct timespec *ts)
{
	static cg_fn real;
	static double after = -1, offset;
	static struct timespec start;
	if (!real) {
		real = (cg_fn)dlsym(RTLD_NEXT, "clock_gettime");
		const char *e = getenv("RT_TEST_STEP");
		char *end;
		if (e) {
			after = strtod(e, &end);
			offset = strtod(end, NULL);
		}
		real(CLOCK_MONOTONIC, &start);
	}
	int rc = real(id, ts);
	if (rc || id != CLOCK_REALTIME || after < 0)
		return rc;
	struct timespec now;
	real(CLOCK_MONOTONIC, &now);
	double since = (double)(now.tv_sec - start.tv_sec) + (now.tv_nsec - start.tv_nsec) / 1e9;
	if (since >= after)
		ts->tv_sec += (time_t)offset;
	return rc;
}
