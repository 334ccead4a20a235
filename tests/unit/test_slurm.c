/* What Slurm's commands say of a job's end (exporter/sched/slurm.c): the
 * fields Slurm writes, never the job owner's imitation of them. */
#include <criterion/criterion.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched/admincomment.h"
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

/* made by Python's zlib and base64.b32encode (lowercased, unpadded): the
 * format as docs/slurm.md says it, not as rt's own encoder writes it */
static const char *const made_elsewhere =
    "rt1:pcoc2t6lblbdaeh4sus6blmrvvjilaqxwu3ywhxuanvlfqnajusgs7ba7v3zh2c6mz3wo5wy7gyapk5bfsabsk"
    "6jy77mgtezyecrheonlesdxy474tjbqpcjybuqkvsbbhbdvawojcmccqvl25utx75v2ekr5g6d5fdvpc2mh5w3qsmq"
    "gz47u4zxrbf7fzc43sb6o53sptupy5kvaltt35nlpdkwmjjjsv2mtlkrjifu2rv4nouhbcryjefdemql63wwdvy4tn"
    "wqd5gsin6e6etaru44feecf3yv7yzypyauymsfcq";

Test(admincomment, reads_what_another_encoder_made_in_either_case)
{
	cJSON *doc = NULL;
	cr_assert_eq(rt_ac_decode(made_elsewhere, strlen(made_elsewhere), &doc), 0);
	cr_assert(rt_ac_has(doc, "n1", "3", 1700000000));
	const cJSON *p = cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "nodes"), "n1");
	cr_assert_str_eq(cJSON_GetObjectItem(p, "sbatch")->valuestring,
	                 "--cpus-per-task=1 --mem=256M");
	cJSON_Delete(doc);
	char up[400];
	snprintf(up, sizeof(up), "%s", made_elsewhere);
	for (char *c = up; *c; c++)
		*c = (char)toupper((unsigned char)*c); /* (RT1:..., as another tool might) */
	cr_assert_eq(rt_ac_decode(up, strlen(up), &doc), 0);
	cr_assert(rt_ac_has(doc, "n1", "3", 1700000000));
	cJSON_Delete(doc);
}

Test(admincomment, nodes_merge_and_survive_lowercasing)
{
	cJSON *doc = NULL;
	cr_assert_eq(rt_ac_decode("", 0, &doc), 0);
	const char *nodes[] = {"node-A1", "node-b2"};
	for (int i = 0; i < 2; i++) {
		cJSON *p = cJSON_CreateObject();
		cJSON_AddStringToObject(p, "run", i ? "9" : "4");
		cJSON_AddStringToObject(p, "sbatch", "--cpus-per-task=2 --mem=4G");
		cJSON_AddNumberToObject(p, "at", 1700000000 + i);
		cr_assert_eq(rt_ac_put(doc, nodes[i], p), 0);
	}
	char *t = rt_ac_encode(doc);
	cr_assert(t && !strncmp(t, "rt1:", 4));
	for (char *c = t; *c; c++)
		cr_assert(!isupper((unsigned char)*c), "written lower case: sacctmgr lowercases");
	cJSON_Delete(doc);
	cr_assert_eq(rt_ac_decode(t, strlen(t), &doc), 0);
	free(t);
	cr_assert(rt_ac_has(doc, "node-A1", "4", 1700000000));
	cr_assert(rt_ac_has(doc, "node-b2", "9", 1700000001));
	cr_assert(!rt_ac_has(doc, "node-b2", "9", 1700000002));
	cJSON *again = cJSON_CreateObject();
	cJSON_AddStringToObject(again, "run", "5");
	cJSON_AddNumberToObject(again, "at", 1700000009);
	cr_assert_eq(rt_ac_put(doc, "node-A1", again), 0); /* its own piece replaced alone */
	cr_assert(rt_ac_has(doc, "node-A1", "5", 1700000009));
	cr_assert(rt_ac_has(doc, "node-b2", "9", 1700000001));
	cJSON_Delete(doc);
}

Test(admincomment, another_tools_value_and_damage_are_told_apart)
{
	cJSON *doc = NULL;
	const char *js = "JS1:H4sIAAAAAAAAA6tWKkktLlGyUlAqS8wpTVWqBQBVzDVHEwAAAA==";
	cr_assert_eq(rt_ac_decode(js, strlen(js), &doc), 1);
	cr_assert_null(doc);
	char cut[200];
	snprintf(cut, sizeof(cut), "%.120s", made_elsewhere);
	cr_assert_eq(rt_ac_decode(cut, strlen(cut), &doc), -1);
	cr_assert_eq(rt_ac_decode("rt1:not base32!", 15, &doc), -1);
	cr_assert_null(doc);
}
