/* libFuzzer target: what Slurm's commands print of a job's end (scontrol
 * show job, sacct -P), where the job's owner writes some of the fields:
 * any bytes, not NUL-terminated. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sched/slurm.h"

static void check(const struct rt_slurm_said *e)
{
	if (!e->state[0] || strlen(e->state) >= sizeof(e->state) ||
	    strlen(e->exit_code) >= sizeof(e->exit_code) ||
	    strspn(e->state, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_") != strlen(e->state))
		abort();
	if (e->time_limit < -1 || e->elapsed < -1)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* an exact-size copy: a parser reading past len trips ASan */
	char *b = malloc(size ? size : 1);
	memcpy(b, data, size);
	struct rt_slurm_said e;
	if (rt_slurm_parse_scontrol(b, size, &e) == 0)
		check(&e);
	if (rt_slurm_parse_sacct(b, size, &e) == 0)
		check(&e);
	(void)rt_slurm_ending(e.state);
	free(b);
	return 0;
}
