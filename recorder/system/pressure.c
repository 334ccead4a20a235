/*
 * pressure.c - pressure stall information (/proc/pressure/{cpu,memory,io},
 * Linux 4.20 with PSI enabled): the "some" and "full" total= counters, µs
 * during which some (or all non-idle) tasks were stalled. Readers turn two
 * samples into the % of the interval stalled, exactly, instead of the
 * kernel's decaying avg10. Files that are missing, or that refuse reads
 * (booted with psi=0), leave their ext_valid bit clear: null in JSON.
 */
#include <errno.h>
#include <stdlib.h>

#include "collect.h"
#include "rt/sysroot.h"

static const char *const files[] = {"pressure/cpu", "pressure/memory", "pressure/io"};
#define NFILES 3

struct pressure_state {
	int fd[NFILES];
};

static int pressure_open(struct rt_collector *c, void **self)
{
	(void)c;
	struct pressure_state *st = malloc(sizeof(*st));
	if (!st)
		return -ENOMEM;
	for (int i = 0; i < NFILES; i++)
		st->fd[i] = rt_open(RT_PROC, files[i]);
	*self = st;
	return 0;
}

static void pressure_close(struct rt_collector *c, void *self)
{
	(void)c;
	struct pressure_state *st = self;
	if (!st)
		return;
	for (int i = 0; i < NFILES; i++)
		rt_close_fd(&st->fd[i]);
	free(st);
}

static void pressure_fill(struct rt_collector *c, void *self, struct rt_record *rec)
{
	struct pressure_state *st = self;
	static const unsigned bit[NFILES] = {RT_SYS_X_PSI_CPU, RT_SYS_X_PSI_MEM, RT_SYS_X_PSI_IO};
	static const int some[NFILES] = {RT_PSI_CPU_SOME, RT_PSI_MEM_SOME, RT_PSI_IO_SOME};
	static const int full[NFILES] = {-1, RT_PSI_MEM_FULL, RT_PSI_IO_FULL};
	for (int i = 0; i < NFILES; i++) {
		size_t len;
		uint64_t s = 0, f = 0;
		if (st->fd[i] < 0 || rt_read_fd(c, st->fd[i], &len))
			continue;
		unsigned found = rt_parse_pressure(c->buf, len, &s, &f);
		/* memory and io need both lines; cpu's "full" is newer and unused */
		if (!(found & 1u) || (full[i] >= 0 && !(found & 2u)))
			continue;
		rec->sys->psi_us[some[i]] = s;
		if (full[i] >= 0)
			rec->sys->psi_us[full[i]] = f;
		rec->sys->ext_valid |= bit[i];
	}
}

const struct rt_source rt_source_pressure = {
    .name = "pressure", .open = pressure_open, .fill = pressure_fill, .close = pressure_close};
