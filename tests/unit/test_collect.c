/* The node's split sample (recorder/system/collect.c): the host's sources
 * read once, each job's cgroup read over a copy of that record, gives the
 * very record a full sample with the job's group gives, on fixture host-a
 * (cgroup v2, its job.slice group with counters and limits). */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "collect.h"
#include "sampler.h"
#include "rt/record.h"
#include "rt/sysroot.h"

/* The fixture's mounts have no sizes of their own: statvfs would read
 * this machine's disks, whose free space other tests change between the
 * two samples compared. Fixed sizes instead. */
static int fixed_statvfs(const char *mount_point, struct rt_fsstat *out)
{
	(void)mount_point;
	*out = (struct rt_fsstat){.total = 100ull << 30, .free = 40ull << 30, .avail = 35ull << 30};
	return 0;
}

static void on_host_a(void)
{
	setenv("RT_PROC_ROOT", RT_FIXTURES "/host-a/step0/proc", 1);
	setenv("RT_SYS_ROOT", RT_FIXTURES "/host-a/step0/sys", 1);
	unsetenv("RT_NVML_LIBRARY");
	rt_sysroot_init();
	rt_statvfs_use(fixed_statvfs);
}

TestSuite(collect, .init = on_host_a);

static _Alignas(8) unsigned char full_buf[1 << 16], host_buf[1 << 16], job_buf[1 << 16];

Test(collect, a_jobs_part_over_the_hosts_record_is_the_full_sample)
{
	static struct rt_cgroup_paths cp = {.v2 = "/job.slice"};
	struct rt_collector full, host, job;
	struct rt_record a, h, b;
	int changed;
	cr_assert_eq(rt_collector_open(&full, &rt_sampler_sources), 0);
	full.cg_fixed = &cp;
	cr_assert_eq(rt_collector_sample(&full, full_buf, sizeof(full_buf), &a, &changed), 0);
	cr_assert_eq(changed, 1);
	cr_assert(a.h->flags & RT_REC_HAS_CGROUP, "the full sample read the job's group");

	cr_assert_eq(rt_collector_open(&host, &rt_sampler_sources), 0);
	host.part = RT_PART_HOST;
	cr_assert_eq(rt_collector_sample(&host, host_buf, sizeof(host_buf), &h, &changed), 0);
	cr_assert_eq(h.h->flags & RT_REC_HAS_CGROUP, 0, "the host's part reads no group");
	rt_record_seal(&h);
	cr_assert_eq(rt_collector_open_job(&job, &host), 0);
	job.cg_fixed = &cp;
	cr_assert_eq(rt_collector_sample_job(&job, &h, job_buf, sizeof(job_buf), &b), 0);

	cr_assert_eq(a.h->size, b.h->size);
	a.h->crc = b.h->crc = 0;
	cr_assert_eq(memcmp(a.h, b.h, a.h->size), 0, "the split record differs from the full one");
	cr_assert_eq(b.sys->cg_mem_used, a.sys->cg_mem_used);
	cr_assert_neq(b.sys->cg_mem_used, 0);
	rt_collector_close_job(&job);
	rt_collector_close(&host);
	rt_collector_close(&full);
}

Test(collect, the_hosts_record_is_copied_never_changed)
{
	static struct rt_cgroup_paths cp = {.v2 = "/job.slice"};
	struct rt_collector host, job;
	struct rt_record h, b;
	int changed;
	cr_assert_eq(rt_collector_open(&host, &rt_sampler_sources), 0);
	host.part = RT_PART_HOST;
	cr_assert_eq(rt_collector_sample(&host, host_buf, sizeof(host_buf), &h, &changed), 0);
	rt_record_seal(&h);
	static _Alignas(8) unsigned char before[1 << 16];
	memcpy(before, h.h, h.h->size);
	cr_assert_eq(rt_collector_open_job(&job, &host), 0);
	job.cg_fixed = &cp;
	for (int i = 0; i < 3; i++)
		cr_assert_eq(rt_collector_sample_job(&job, &h, job_buf, sizeof(job_buf), &b), 0);
	cr_assert_eq(memcmp(before, h.h, h.h->size), 0);
	cr_assert_eq(rt_collector_sample_job(&job, &h, job_buf, 64, &b), -ENOSPC);
	rt_collector_close_job(&job);
	rt_collector_close(&host);
}
