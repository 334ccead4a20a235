/*
 * slurm.h - what Slurm's own commands on the node say of a job's end:
 * `scontrol show job ID` while slurmctld still knows it, else `sacct`
 * (slurmdbd's record). The commands' output is read as hostile: some of
 * its fields are the job owner's (its name, comment, command, paths), so
 * only fields Slurm itself writes are taken (see slurm.c). Pure parsers
 * (fuzzed: tests/fuzz/fuzz_slurm.c) and one bounded asker.
 */
#ifndef RT_SCHED_SLURM_H
#define RT_SCHED_SLURM_H

#include <stddef.h>

/* How a job ended, as Slurm said it. */
struct rt_slurm_said {
	char state[32], exit_code[16], from[16]; /* from: "scontrol", "sacct" */
	double time_limit, elapsed;              /* seconds; -1: unknown or none */
	double cpus, mem_bytes;                  /* what it allocated; -1: unknown */
};

/* `scontrol show job`'s lines; `sacct -X -n -P -o
 * State,ExitCode,TimelimitRaw,AllocCPUS,ReqMem,ElapsedRaw`'s first line.
 * Any bytes, len of them. 0 with e filled, -1 when they say no state. */
int rt_slurm_parse_scontrol(const char *text, size_t len, struct rt_slurm_said *e);
int rt_slurm_parse_sacct(const char *text, size_t len, struct rt_slurm_said *e);

/* Whether a state is still on its way to its end (PENDING, RUNNING,
 * COMPLETING...). */
int rt_slurm_ending(const char *state);

/* Ask once, each command bounded by RT_SLURM_ASK_MS (Slurm's own default
 * MessageTimeout): scontrol, else sacct. 0 with e filled, 1 when neither
 * said anything of the job (why: scontrol's first line), 2 when scontrol
 * did not answer in time (a busy controller), -1 when neither command is
 * there. */
#define RT_SLURM_ASK_MS 10000
int rt_slurm_ask(const char *job, struct rt_slurm_said *e, char *why, size_t cap);

/* Job's record in slurmdbd (a job id of digits), sacct given wait_ms: its
 * AdminComment into out
 * and how many nodes it ran on into *nodes (0: unknown) (`sacct`; 0), 1
 * when the database has no record of it (yet), 2 when sacct did not
 * answer in time (a busy slurmdbd: ask again), -2 when this cluster keeps
 * no database (accounting storage disabled), -1 when sacct cannot say
 * otherwise (not installed, an error; why says which). */
#define RT_SLURM_RECORD_MAX 65536
int rt_slurm_record_read(const char *job, int wait_ms, char *out, size_t cap, int *nodes, char *why,
                         size_t wcap);
/* text as job's AdminComment in slurmdbd (`sacctmgr update job`, which
 * lowercases it): 0, 1 when nothing was modified (no record yet), 2 when
 * it did not answer in time (it may have landed), -1 when sacctmgr cannot
 * (why). */
int rt_slurm_record_write(const char *job, const char *text, char *why, size_t wcap);

#endif
