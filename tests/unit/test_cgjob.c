/* Who a job group is, from its path (recorder/cgjob.c): the layouts of
 * Slurm (v1, v2, multiple-slurmd, SLUID), Kubernetes (both drivers, every
 * QoS class) and systemd; a path of none of them is nobody's. */
#include <criterion/criterion.h>
#include <string.h>

#include "cgjob.h"

static struct rt_cgjob who(const char *path)
{
	struct rt_cgjob j;
	memset(&j, 0x55, sizeof(j));
	rt_cgjob_classify(path, &j);
	return j;
}

Test(cgjob, slurm_v1_job_step_and_task_fold_into_the_job_with_its_owner)
{
	struct rt_cgjob j = who("/slurm/uid_1000/job_4242/step_0/task_1");
	cr_expect_str_eq(j.scheduler, "slurm");
	cr_expect_str_eq(j.job_id, "4242");
	cr_expect_str_eq(j.uid, "1000");
	j = who("/slurm_node7/uid_5/job_9"); /* enable-multiple-slurmd */
	cr_expect_str_eq(j.job_id, "9");
	cr_expect_str_eq(j.uid, "5");
}

Test(cgjob, slurm_v2_under_slurmstepd_scope_and_sluid_names)
{
	struct rt_cgjob j = who("/system.slice/slurmstepd.scope/job_77/step_batch/user/task_0");
	cr_expect_str_eq(j.scheduler, "slurm");
	cr_expect_str_eq(j.job_id, "77");
	cr_expect_str_eq(j.uid, "");
	j = who("/system.slice/node3_slurmstepd.scope/job_sAB12CD34EF/step_0");
	cr_expect_str_eq(j.scheduler, "slurm"); /* not the systemd scope */
	cr_expect_str_eq(j.job_id, "sAB12CD34EF");
}

Test(cgjob, kubernetes_both_drivers_and_every_qos)
{
	struct rt_cgjob j = who("/kubepods.slice/kubepods-besteffort.slice/"
	                        "kubepods-besteffort-pod0a1b2c3d_4e5f_6071_8293_a4b5c6d7e8f9.slice/"
	                        "cri-containerd-abc.scope");
	cr_expect_str_eq(j.scheduler, "kubernetes");
	cr_expect_str_eq(j.job_id, "0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9");
	cr_expect_str_eq(j.qos, "besteffort");
	j = who("/kubepods.slice/kubepods-pod0a1b2c3d_4e5f_6071_8293_a4b5c6d7e8f9.slice");
	cr_expect_str_eq(j.qos, "guaranteed");
	cr_expect_str_eq(j.job_id, "0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9");
	j = who("/kubepods/burstable/pod0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9/d2f1e0");
	cr_expect_str_eq(j.scheduler, "kubernetes");
	cr_expect_str_eq(j.qos, "burstable");
	cr_expect_str_eq(j.job_id, "0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9");
	j = who("/kubepods/pod0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9");
	cr_expect_str_eq(j.qos, "guaranteed");
}

Test(cgjob, systemd_units_and_paths_of_no_known_layout)
{
	struct rt_cgjob j = who("/system.slice/run-r0123.scope");
	cr_expect_str_eq(j.scheduler, "systemd");
	cr_expect_str_eq(j.job_id, "run-r0123.scope");
	j = who("/batch/job_1"); /* job_ outside Slurm's layout */
	cr_expect_str_eq(j.scheduler, "");
	cr_expect_str_eq(j.job_id, "");
	j = who("/kubepods/besteffort"); /* a QoS level is not a pod */
	cr_expect_str_eq(j.scheduler, "");
	cr_expect_str_eq(j.qos, "");
	j = who("");
	cr_expect_str_eq(j.scheduler, "");
}

Test(cgjob, an_environment_block_is_read_within_its_length)
{
	const char env[] = "A=1\0SLURM_JOB_NAME=train\0SLURM_JOB";
	cr_expect_str_eq(rt_env_lookup(env, sizeof(env) - 1, "SLURM_JOB_NAME"), "train");
	cr_expect_null(rt_env_lookup(env, sizeof(env) - 1, "SLURM_JOB"));
	cr_expect_null(rt_env_lookup(env, 3, "A"));
	cr_expect_null(rt_env_lookup(NULL, 0, "A"));
}
