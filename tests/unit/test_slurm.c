/* What Slurm's commands say of a job's end (exporter/sched/slurm.c): the
 * fields Slurm writes, never the job owner's imitation of them. */
#include <criterion/criterion.h>
#include <string.h>

#include "sched/slurm.h"

static const char *scontrol_oom =
    "JobId=6 JobName=rt-grow\n"
    "   UserId=bob(1001) GroupId=bob(1001) MCS_label=N/A\n"
    "   Priority=4294901759 Nice=0 Account=(null) QOS=(null)\n"
    "   JobState=OUT_OF_MEMORY Reason=OutOfMemory Dependency=(null)\n"
    "   Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:125\n"
    "   DerivedExitCode=0:0\n"
    "   RunTime=00:00:02 TimeLimit=1-02:00:00 TimeMin=N/A\n"
    "   NumNodes=1 NumCPUs=2 NumTasks=1 CPUs/Task=2 ReqB:S:C:T=0:0:*:*\n"
    "   TRES=cpu=2,mem=500M,node=1,billing=2\n"
    "   MinCPUsNode=2 MinMemoryNode=500M MinTmpDiskNode=0\n"
    "   Comment=JobState=COMPLETED\n"
    "   Command=/home/bob/grow.sh\n";

Test(slurm, scontrol_fields_slurm_writes)
{
	struct rt_slurm_said e;
	cr_assert_eq(rt_slurm_parse_scontrol(scontrol_oom, strlen(scontrol_oom), &e), 0);
	cr_assert_str_eq(e.state, "OUT_OF_MEMORY");
	cr_assert_str_eq(e.exit_code, "0:125");
	cr_assert_eq(e.elapsed, 2);
	cr_assert_eq(e.time_limit, 26 * 3600);
	cr_assert_eq(e.cpus, 2);
	cr_assert_eq(e.mem_bytes, 500.0 * 1048576);
	cr_assert_str_eq(e.from, "scontrol");
	cr_assert_eq(rt_slurm_ending(e.state), 0);
	cr_assert_eq(rt_slurm_ending("COMPLETING"), 1);
}

Test(slurm, a_name_that_imitates_the_fields_is_refused)
{
	/* a job name with a newline: its own UserId and JobState lines */
	const char *forged = "JobId=7 JobName=x\n"
	                     "   UserId=bob(1001)\n"
	                     "   JobState=COMPLETED ExitCode=0:0\n"
	                     "   UserId=bob(1001) GroupId=bob(1001)\n"
	                     "   JobState=OUT_OF_MEMORY Reason=OutOfMemory\n"
	                     "   ExitCode=0:125 RunTime=00:00:02 TimeLimit=UNLIMITED\n";
	struct rt_slurm_said e;
	cr_assert_eq(rt_slurm_parse_scontrol(forged, strlen(forged), &e), -1);
	const char *name_first =
	    "JobId=8 JobName=x JobState=COMPLETED\n"
	    "   UserId=bob(1001)\n"
	    "   JobState=FAILED ExitCode=1:0 RunTime=0:01 TimeLimit=UNLIMITED\n";
	cr_assert_eq(rt_slurm_parse_scontrol(name_first, strlen(name_first), &e), -1);
}

Test(slurm, sacct_parsable_line)
{
	struct rt_slurm_said e;
	const char *line = "CANCELLED by 1001|0:15|60|2|300M|12\n";
	cr_assert_eq(rt_slurm_parse_sacct(line, strlen(line), &e), 0);
	cr_assert_str_eq(e.state, "CANCELLED");
	cr_assert_eq(e.time_limit, 3600);
	cr_assert_eq(e.elapsed, 12);
	cr_assert_eq(e.mem_bytes, 300.0 * 1048576);
	const char *bad = "Completed|x|1|1|1M|1\n";
	cr_assert_eq(rt_slurm_parse_sacct(bad, strlen(bad), &e), -1);
}
