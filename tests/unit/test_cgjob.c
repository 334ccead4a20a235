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

/* The member walk keeps the groups it found and reads them again while
 * each one's link count (kernfs's, and a tmpfs's: its subdirectories and
 * 2) says the same groups are below; a group made, removed, or removed
 * and another made in its place is found. On a fixture tree under
 * RT_SYS_ROOT: a v1 memory hierarchy. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rt/sysroot.h"

static char root[256];

static void group(const char *rel, const char *pids)
{
	char p[512];
	snprintf(p, sizeof(p), "%s/fs/cgroup/memory/job%s", root, rel);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/fs/cgroup/memory/job%s/cgroup.procs", root, rel);
	FILE *f = fopen(p, "w");
	cr_assert(f);
	fputs(pids, f);
	fclose(f);
}

static void ungroup(const char *rel)
{
	char p[512];
	snprintf(p, sizeof(p), "%s/fs/cgroup/memory/job%s/cgroup.procs", root, rel);
	unlink(p);
	snprintf(p, sizeof(p), "%s/fs/cgroup/memory/job%s", root, rel);
	cr_assert_eq(rmdir(p), 0);
}

/* The members' pids summed (order aside), their count in *n. */
static long members(struct rt_cgjob *j, ssize_t *n)
{
	pid_t out[64];
	*n = rt_cgjob_members(j, out, 64);
	long sum = 0;
	for (ssize_t i = 0; i < *n; i++)
		sum += out[i];
	return sum;
}

Test(cgjob, the_walk_finds_groups_made_and_removed_below_between_samples)
{
	snprintf(root, sizeof(root), "/tmp/rt-cgjob-XXXXXX");
	cr_assert(mkdtemp(root));
	char p[512];
	snprintf(p, sizeof(p), "%s/fs", root);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/fs/cgroup", root);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/fs/cgroup/memory", root);
	mkdir(p, 0755);
	setenv("RT_SYS_ROOT", root, 1);
	rt_sysroot_init();
	group("", "10\n");
	group("/a", "20\n21\n");
	struct rt_cgjob j;
	char err[256];
	cr_assert_eq(rt_cgjob_resolve("/job", &j, err, sizeof(err)), 0, "%s", err);
	ssize_t n;
	cr_expect_eq(members(&j, &n), 51);
	cr_expect_eq(n, 3);
	cr_expect(j.groups_ok);
	cr_expect_eq(members(&j, &n), 51); /* (read again without listing) */
	group("/a/deep", "30\n");          /* made below a group below */
	cr_expect_eq(members(&j, &n), 81);
	ungroup("/a/deep");
	cr_expect_eq(members(&j, &n), 51);
	ungroup("/a"); /* one removed, another made: the same count below */
	group("/b", "40\n");
	cr_expect_eq(members(&j, &n), 50);
	cr_expect_eq(n, 2);
	rt_cgjob_free(&j);
	char rm[400];
	snprintf(rm, sizeof(rm), "rm -rf '%s'", root);
	cr_expect_eq(system(rm), 0);
	unsetenv("RT_SYS_ROOT");
	rt_sysroot_init();
}
