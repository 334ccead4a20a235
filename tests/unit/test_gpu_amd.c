/* AMD per-process GPU use from fdinfo on a fixture /proc tree. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpu_amd.h"
#include "proctree.h"
#include "rt/sysroot.h"

static char root[256];

static void put(const char *rel, const char *text)
{
	char p[600], cmd[700];
	snprintf(p, sizeof(p), "%s/proc/%s", root, rel);
	snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\"", p);
	cr_assert_eq(system(cmd), 0);
	FILE *f = fopen(p, "w");
	fputs(text, f);
	fclose(f);
}

static const char *fdinfo(unsigned client, unsigned vram_kib, unsigned long long ns)
{
	static char b[256];
	snprintf(b, sizeof(b),
	         "pos:\t0\nflags:\t02100002\ndrm-driver:\tamdgpu\ndrm-client-id:\t%u\n"
	         "drm-memory-vram:\t%u KiB\ndrm-engine-gfx:\t%llu ns\n",
	         client, vram_kib, ns);
	return b;
}

static void setup(void)
{
	snprintf(root, sizeof(root), "/tmp/rt-test-amd-%d", getpid());
	char cmd[600], p[300];
	snprintf(cmd, sizeof(cmd), "rm -rf %s && mkdir -p %s/proc", root, root);
	cr_assert_eq(system(cmd), 0);
	snprintf(p, sizeof(p), "%s/proc", root);
	setenv("RT_PROC_ROOT", p, 1);
	rt_sysroot_init();
	put("100/stat", "100 (job) S 1 1 1 0 -1 0 0 0 0 0 5 1 0 0 20 0 1 0 10 1000 25\n");
	put("100/task/100/children", "");
	put("100/fdinfo/3", fdinfo(7, 1024, 1000000000ull));
	put("100/fdinfo/4", fdinfo(7, 1024, 1000000000ull)); /* dup of fd 3 */
	put("100/fdinfo/5", fdinfo(8, 2048, 500000000ull));
	put("100/fdinfo/6", "drm-driver:\ti915\ndrm-client-id:\t9\ndrm-engine-render:\t1 ns\n");
}

static void teardown(void)
{
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	if (system(cmd)) {
	}
	unsetenv("RT_PROC_ROOT");
	rt_sysroot_init();
}

TestSuite(gpu_amd, .init = setup, .fini = teardown);

Test(gpu_amd, fdinfo_parser_reads_amdgpu_clients_only)
{
	uint64_t c, v, e;
	const char *t = fdinfo(7, 1024, 42);
	cr_expect(rt_amd_parse_fdinfo(t, strlen(t), &c, &v, &e));
	cr_expect_eq(c, 7);
	cr_expect_eq(v, 1048576);
	cr_expect_eq(e, 42);
	const char *o = "drm-driver:\ti915\ndrm-client-id:\t9\n";
	cr_expect(!rt_amd_parse_fdinfo(o, strlen(o), &c, &v, &e));
	cr_expect(!rt_amd_parse_fdinfo("drm-driver:\tamdgpu\n", 19, &c, &v, &e), "no client id");
}

Test(gpu_amd, dupd_descriptors_count_once_and_engine_time_becomes_a_share)
{
	struct rt_proctree *t;
	struct rt_rec_process r;
	cr_assert_eq(rt_proctree_open(&t, 100), 0);
	static struct rt_amd a;
	memset(&a, 0, sizeof(a));
	a.n = 1; /* one AMD GPU on the host */
	memset(&r, 0, sizeof(r));
	rt_proctree_sample(t, &r);
	rt_amd_tree(&a, t, 1000000000ull, &r);
	cr_expect_eq(r.gpu_vram_bytes, 3ull << 20, "client 7 once (1 MiB) + client 8 (2 MiB)");
	cr_expect_eq(r.gpu_util_pct_x100, 0, "no previous sample yet");
	cr_expect_eq(r.gpu_count, 1);
	/* one second later: client 7 ran 0.5 s on the gfx engine, client 8 0.1 s */
	put("100/fdinfo/3", fdinfo(7, 1024, 1500000000ull));
	put("100/fdinfo/4", fdinfo(7, 1024, 1500000000ull));
	put("100/fdinfo/5", fdinfo(8, 2048, 600000000ull));
	memset(&r, 0, sizeof(r));
	rt_proctree_sample(t, &r);
	rt_amd_tree(&a, t, 2000000000ull, &r);
	cr_expect_eq(r.gpu_util_pct_x100, 6000, "60 %% of one GPU");
	rt_proctree_close(t);
}
