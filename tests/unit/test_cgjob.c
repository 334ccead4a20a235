/* Who a job group is, from its path (recorder/cgjob.c): the layouts of
 * Slurm (v1, v2, multiple-slurmd, SLUID), Kubernetes (both drivers, every
 * QoS class) and systemd; a path of none of them is nobody's. */
#include <criterion/criterion.h>
#include <fnmatch.h>
#include <string.h>

#include "cgjob.h"
#include "ocistate.h"

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

#define ID "20cb854884b21a489ed55b8262f92dffe903e0f2ea46cd4fe01b6e522e59fb16"

Test(cgjob, podman_and_docker_containers_both_drivers)
{
	struct rt_cgjob j = who("/libpod_parent/libpod-" ID); /* podman, cgroupfs */
	cr_expect_str_eq(j.scheduler, "podman");
	cr_expect_str_eq(j.job_id, ID);
	j = who("/machine.slice/libpod-" ID ".scope/container"); /* podman, systemd */
	cr_expect_str_eq(j.scheduler, "podman");
	cr_expect_str_eq(j.job_id, ID);
	j = who("/docker/" ID);
	cr_expect_str_eq(j.scheduler, "docker");
	cr_expect_str_eq(j.job_id, ID);
	j = who("/system.slice/docker-" ID ".scope");
	cr_expect_str_eq(j.scheduler, "docker"); /* not the systemd scope */
	cr_expect_str_eq(j.job_id, ID);
	j = who("/kubepods/burstable/pod0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9/libpod-" ID);
	cr_expect_str_eq(j.scheduler, "kubernetes"); /* a pod's container is a part of it */
	j = who("/libpod_parent/libpod-conmon-x");   /* not an id */
	cr_expect_str_eq(j.scheduler, "");
	j = who("/system.slice/docker.service");
	cr_expect_str_eq(j.scheduler, "systemd");
}

/* what podman wrote here (config.json's annotations, containers.json),
 * cut to what the scan reads */
Test(cgjob, a_containers_names_from_its_runtimes_files)
{
	const char *config = "{\"ociVersion\": \"1.0.2-dev\", \"hostname\": \"20cb854884b2\",\n"
	                     " \"annotations\": {\"io.container.manager\": \"libpod\",\n"
	                     "  \"io.kubernetes.cri.container-name\": \"web\",\n"
	                     "  \"io.kubernetes.cri.sandbox-name\": \"shop-7d9\",\n"
	                     "  \"io.kubernetes.cri.sandbox-namespace\": \"prod\"}}";
	struct rt_oci_names n;
	cr_assert_eq(rt_oci_scan_names(config, strlen(config), &n), 0);
	cr_expect_str_eq(n.container, "web");
	cr_expect_str_eq(n.pod, "shop-7d9");
	cr_expect_str_eq(n.ns, "prod");
	const char *plain = "{\"annotations\": {\"io.container.manager\": \"libpod\"}}";
	cr_expect_eq(rt_oci_scan_names(plain, strlen(plain), &n), -1);
	const char *list = "[{\"id\": \"aaaa\", \"names\": [\"other\"]},\n"
	                   " {\"id\": \"" ID "\", \"names\": [\"rtc1\"], \"metadata\": "
	                   "\"{\\\"name\\\":\\\"rtc1\\\"}\"}]";
	char name[64];
	cr_assert_eq(rt_oci_scan_podman(list, strlen(list), ID, name, sizeof(name)), 0);
	cr_expect_str_eq(name, "rtc1");
	cr_expect_eq(rt_oci_scan_podman(list, strlen(list), "bbbb", name, sizeof(name)), -1);
	const char *docker = "{\"State\": {\"Running\": true}, \"HostConfig\": {\"LogConfig\": "
	                     "{\"Name\": \"/x\"}}, \"Name\": \"/api-1\"}";
	cr_assert_eq(rt_oci_scan_names(docker, strlen(docker), &n), 0);
	cr_expect_str_eq(n.container, "api-1"); /* the top's Name, not a nested one */
}

/* each preset's layouts: an example of each glob is a group of that
 * scheduler's, as the classifier tells (one table, one truth) */
Test(cgjob, every_preset_layout_classifies_as_its_scheduler)
{
	static const struct {
		const char *preset, *examples[6];
	} want[] = {
	    {"slurm",
	     {"slurm/uid_1000/job_42", "slurm_n1/uid_1000/job_42",
	      "system.slice/slurmstepd.scope/job_42", "system.slice/n1_slurmstepd.scope/job_42"}},
	    {"kubernetes",
	     {"kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1f2e3d4c_5b6a.slice",
	      "kubepods.slice/kubepods-pod1f2e3d4c_5b6a.slice",
	      "kubepods/besteffort/pod1f2e3d4c-5b6a", "kubepods/burstable/pod1f2e3d4c-5b6a",
	      "kubepods/pod1f2e3d4c-5b6a"}},
	    {"systemd", {"system.slice/cron.service", "system.slice/run-r1.scope"}},
	    {"podman", {"libpod_parent/libpod-" ID, "machine.slice/libpod-" ID ".scope"}},
	    {"docker", {"docker/" ID, "system.slice/docker-" ID ".scope"}},
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const char *const *g = rt_cgjob_preset(want[i].preset);
		cr_assert_not_null(g, "%s", want[i].preset);
		size_t n = 0;
		for (; g[n]; n++) {
			const char *ex = want[i].examples[n];
			cr_assert_not_null(ex, "%s: no example of %s", want[i].preset, g[n]);
			cr_expect_eq(fnmatch(g[n], ex, FNM_PATHNAME), 0, "%s does not match %s", ex,
			             g[n]);
			struct rt_cgjob j;
			rt_cgjob_classify(ex, &j);
			cr_expect_str_eq(j.scheduler, want[i].preset, "%s", ex);
		}
		cr_expect_null(want[i].examples[n], "%s: more examples than layouts",
		               want[i].preset);
	}
	cr_expect_null(rt_cgjob_preset("batch/*"));
}

/* the directory names a pod's containers' groups have under each
 * runtime and driver, and what is not a container */
Test(cgjob, a_pods_part_names_its_container)
{
	char id[80];
	cr_assert_eq(rt_cgjob_part_container(ID, id, sizeof(id)), 0); /* cgroupfs */
	cr_expect_str_eq(id, ID);
	cr_assert_eq(rt_cgjob_part_container("cri-containerd-" ID ".scope", id, sizeof(id)), 0);
	cr_expect_str_eq(id, ID);
	cr_assert_eq(rt_cgjob_part_container("crio-" ID ".scope", id, sizeof(id)), 0);
	cr_expect_str_eq(id, ID);
	cr_assert_eq(rt_cgjob_part_container("libpod-" ID, id, sizeof(id)), 0);
	cr_expect_str_eq(id, ID);
	cr_expect_eq(rt_cgjob_part_container("crio-conmon-" ID ".scope", id, sizeof(id)), -1);
	cr_expect_eq(rt_cgjob_part_container("step_batch", id, sizeof(id)), -1);
	cr_expect_eq(rt_cgjob_part_container("abc123", id, sizeof(id)), -1); /* too short */
	cr_expect_eq(rt_cgjob_part_container(ID, id, 16), -1);               /* too long */
	cr_expect_eq(rt_cgjob_part_container("", id, sizeof(id)), -1);
}

/* CRI-O's names (its infra container, "POD", names the pod too) */
Test(cgjob, a_crio_containers_names)
{
	const char *config = "{\"annotations\": {\"io.kubernetes.container.name\": \"web\",\n"
	                     "  \"io.kubernetes.pod.name\": \"shop-7d9\",\n"
	                     "  \"io.kubernetes.pod.namespace\": \"prod\"}}";
	struct rt_oci_names n;
	cr_assert_eq(rt_oci_scan_names(config, strlen(config), &n), 0);
	cr_expect_str_eq(n.container, "web");
	cr_expect_str_eq(n.pod, "shop-7d9");
	cr_expect_str_eq(n.ns, "prod");
}

Test(cgjob, an_annotation_value_never_reads_as_a_key)
{
	/* a user's annotation whose value imitates the CRI key, escapes and
	 * control characters in names, a string cut short */
	const char *forged = "{\"annotations\": {\"mine\": \"\\\"io.kubernetes.cri.container-name"
	                     "\\\": \\\"forged\\\"\", \"io.kubernetes.cri.container-name\": "
	                     "\"we\\tb\\u0007\"}}";
	struct rt_oci_names n;
	cr_assert_eq(rt_oci_scan_names(forged, strlen(forged), &n), 0);
	cr_expect_str_eq(n.container, "we?b?");
	const char *cut = "{\"io.kubernetes.cri.container-name\": \"abc";
	cr_expect_eq(rt_oci_scan_names(cut, strlen(cut), &n), -1);
	cr_expect_eq(rt_oci_scan_names("\"\\", 2, &n), -1);
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
