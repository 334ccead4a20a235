#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/stat.h>
#include <string.h>

#include "procfs.h"
#include "rt/sysroot.h"

Test(procfs, stat_reads_totals_and_per_cpu_lines)
{
	static struct rt_stat_parse st;
	const char *t = "cpu  10 1 2 30 4 0 0 0 0 0\ncpu0 5 1 1 15 2 0 0 0\ncpu3 5 0 1 15 2\n"
	                "intr 1\nprocs_running 7\n";
	rt_parse_proc_stat(t, strlen(t), &st);
	cr_expect(st.have_agg);
	cr_expect_eq(st.agg[0], 10);
	cr_expect_eq(st.ncpu, 2);
	cr_expect_eq(st.cpu[1].id, 3);
	cr_expect_eq(st.cpu[0].total, 24);
	cr_expect_eq(st.cpu[0].idle, 17);
	cr_expect_eq(st.procs_running, 7);
}

Test(procfs, stat_without_final_newline_or_with_short_lines)
{
	static struct rt_stat_parse st;
	const char *t = "cpu0 1 2\ncpu1 1 2 3 4";
	rt_parse_proc_stat(t, strlen(t), &st);
	cr_expect_eq(st.ncpu, 1, "a cpu line with < 4 fields is ignored");
	cr_expect_eq(st.cpu[0].id, 1);
	rt_parse_proc_stat(t, 12, &st); /* cut in the middle: no overread */
	cr_expect_eq(st.ncpu, 0);
}

Test(procfs, numbers_saturate_instead_of_overflowing)
{
	const char *t = "99999999999999999999999";
	const char *p = t;
	uint64_t v;
	cr_assert_eq(rt_scan_u64(&p, t + strlen(t), &v), 0);
	cr_expect_eq(v, UINT64_MAX);
}

Test(procfs, diskstats_and_netdev)
{
	struct rt_diskstat ds[4];
	const char *d = " 259 0 nvme0n1 1 2 3 4 5 6 7 8 9\n 8 0 sda 1 2\n";
	cr_assert_eq(rt_parse_diskstats(d, strlen(d), ds, 4), 1);
	cr_expect_str_eq(ds[0].name, "nvme0n1");
	cr_expect_eq(ds[0].rd_sectors, 3);
	cr_expect_eq(ds[0].wr_sectors, 7);
	struct rt_netdev nd[4];
	const char *n =
	    "Inter-| x\n face |y\n  eth0:100 1 0 0 0 0 0 0 200 2 0 0 0 0 0 0\n"
	    "bad line\n verylonginterfacenamethatdoesnotfit0123456789: 1 2 3 4 5 6 7 8 9\n";
	cr_assert_eq(rt_parse_netdev(n, strlen(n), nd, 4), 1);
	cr_expect_str_eq(nd[0].name, "eth0");
	cr_expect_eq(nd[0].rx_bytes, 100);
	cr_expect_eq(nd[0].tx_bytes, 200);
}

static int nm;
static struct rt_mountinfo last;
static void mcb(void *ctx, const struct rt_mountinfo *m)
{
	(void)ctx;
	nm++;
	last = *m;
}

Test(procfs, mountinfo_decodes_escapes_and_optional_fields)
{
	const char *t = "36 35 98:0 / /mnt\\040x rw,noatime master:1 shared:2 - ext3 /dev/root rw\n"
	                "junk\n";
	nm = 0;
	cr_expect_eq(rt_parse_mountinfo(t, strlen(t), mcb, NULL), 1);
	cr_expect_str_eq(last.mount_point, "/mnt x");
	cr_expect_str_eq(last.fstype, "ext3");
	cr_expect_eq(last.major, 98);
}

Test(procfs, cgroup_files)
{
	uint64_t u;
	int64_t q;
	uint64_t p;
	cr_expect_eq(rt_parse_cg_usage_v2("usage_usec 42\nuser_usec 1\n", 26, &u), 0);
	cr_expect_eq(u, 42);
	cr_expect_eq(rt_parse_cg_usage_v1("5000\n", 5, &u), 0);
	cr_expect_eq(u, 5);
	cr_expect_eq(rt_parse_cg_max("max 100000\n", 11, &q, &p), 0);
	cr_expect_eq(q, -1);
	cr_expect_eq(rt_parse_cg_max("200000 100000", 13, &q, &p), 0);
	cr_expect_eq(q, 200000);
	cr_expect_eq(rt_parse_cg_max("x", 1, &q, &p), -1);
}

Test(procfs, meminfo_ignores_garbage)
{
	uint64_t kb[RT_MEMINFO_N];
	const char *t = "MemTotal: 100 kB\ngarbage\nMemFree:\nCached: 7 kB\n";
	unsigned f = rt_parse_meminfo(t, strlen(t), kb);
	cr_expect(f & (1u << RT_MEM_TOTAL));
	cr_expect(!(f & (1u << RT_MEM_FREE)));
	cr_expect_eq(kb[RT_MEM_CACHED], 7);
}

Test(procfs, loadavg_in_hundredths_and_nothing_from_garbage)
{
	uint32_t x[3];
	const char *ok = "0.52 12.05 1234.00 3/77 31985\n";
	cr_assert_eq(rt_parse_loadavg(ok, strlen(ok), x), 0);
	cr_expect_eq(x[0], 52);
	cr_expect_eq(x[1], 1205);
	cr_expect_eq(x[2], 123400);
	const char *lax = "1 2.5 3.999";
	cr_assert_eq(rt_parse_loadavg(lax, strlen(lax), x), 0);
	cr_expect(x[0] == 100 && x[1] == 250 && x[2] == 399);
	const char *bad[] = {"", "0.52 0.58", "0.52 x 0.59", "99999999999.0 1 1", "- 1 1", ". 1 1"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_expect_eq(rt_parse_loadavg(bad[i], strlen(bad[i]), x), -1, "%s", bad[i]);
}

/* A seq_file of many records hands over about a page per read: the short
 * read rule must not take the first page for the end. /proc/self/smaps of
 * this process spans several pages. */
Test(procfs, multi_page_seq_files_are_read_whole)
{
	static char a[1 << 20], b[1 << 20];
	int fd = open("/proc/self/smaps", O_RDONLY);
	cr_assert(fd >= 0);
	ssize_t n1 = rt_pread_to_eof(fd, b, sizeof(b));
	ssize_t n2 = rt_pread_all(fd, a, sizeof(a));
	close(fd);
	cr_assert_gt(n1, 8192, "smaps is %zd bytes: too small to test", n1);
	/* the same VMAs (values may move a little: compare the line count) */
	int la = 0, lb = 0;
	for (ssize_t i = 0; i < n2; i++)
		la += a[i] == '\n';
	for (ssize_t i = 0; i < n1; i++)
		lb += b[i] == '\n';
	cr_expect_eq(la, lb, "%d lines against %d", la, lb);
}

Test(procfs, a_short_small_read_is_the_end)
{
	char tmpl[] = "/tmp/rt-test-pread-XXXXXX", buf[64];
	int fd = mkstemp(tmpl);
	cr_assert(fd >= 0);
	cr_assert_eq(write(fd, "up\n", 3), 3);
	cr_expect_eq(rt_pread_all(fd, buf, sizeof(buf)), 3);
	cr_expect_str_eq(buf, "up\n");
	cr_expect_eq(rt_pread_once(fd, buf, 3), 2, "cap-1 bytes at most");
	cr_expect_str_eq(buf, "up");
	close(fd);
	unlink(tmpl);
}

Test(procfs, pressure_totals_of_some_and_full)
{
	uint64_t s = 0, f = 0;
	const char *t = "some avg10=1.50 avg60=0.20 avg300=0.00 total=123456\n"
	                "full avg10=0.00 avg60=0.00 avg300=0.00 total=789\n";
	cr_expect_eq(rt_parse_pressure(t, strlen(t), &s, &f), 3u);
	cr_expect_eq(s, 123456);
	cr_expect_eq(f, 789);
	const char *cpu_old = "some avg10=0.00 avg60=0.00 avg300=0.00 total=5\n"; /* < 5.13 */
	cr_expect_eq(rt_parse_pressure(cpu_old, strlen(cpu_old), &s, &f), 1u);
	const char *bad[] = {"", "some avg10=0.00", "some total=", "other total=5", "sometotal=5"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_expect_eq(rt_parse_pressure(bad[i], strlen(bad[i]), &s, &f), 0u, "%s", bad[i]);
}

Test(procfs, vmstat_keys_and_nothing_from_lookalikes)
{
	uint64_t v[RT_VMSTAT_N] = {0};
	const char *t = "pgmajfault_x 9\nnr_free_pages 1\npswpin 4\npswpout 5\npgmajfault 77\n"
	                "oom_kill 2\n";
	cr_expect_eq(rt_parse_vmstat(t, strlen(t), v), 0xfu);
	cr_expect_eq(v[RT_VMSTAT_PGMAJFAULT], 77);
	cr_expect_eq(v[RT_VMSTAT_PSWPIN], 4);
	cr_expect_eq(v[RT_VMSTAT_PSWPOUT], 5);
	cr_expect_eq(v[RT_VMSTAT_OOM_KILL], 2);
	const char *old = "pgmajfault 1\npswpin 0\npswpout 0\n"; /* before 4.13 */
	cr_expect_eq(rt_parse_vmstat(old, strlen(old), v), 0x7u);
}

Test(procfs, diskstats_and_netdev_carry_ops_time_packets_errors)
{
	struct rt_diskstat ds[2];
	const char *d = " 259 0 nvme0n1 200 0 3048 50 400 0 6096 300 0 400 700 0 0 0 0\n"
	                "   8 0 sda 5 0 40 1 2 0 16\n"; /* an old short line */
	cr_assert_eq(rt_parse_diskstats(d, strlen(d), ds, 2), 2);
	cr_expect(ds[0].rd_ios == 200 && ds[0].rd_ms == 50 && ds[0].wr_ios == 400 &&
	          ds[0].wr_ms == 300 && ds[0].io_ms == 400 && ds[0].weighted_ms == 700);
	cr_expect(ds[1].rd_ios == 5 && ds[1].wr_ios == 2 && ds[1].wr_ms == 0 && ds[1].io_ms == 0);
	struct rt_netdev nd[1];
	const char *n = "  eth0: 1 2 3 4 0 0 0 0 5 6 7 8 0 0 0 0\n";
	cr_assert_eq(rt_parse_netdev(n, strlen(n), nd, 1), 1);
	cr_expect(nd[0].rx_bytes == 1 && nd[0].rx_packets == 2 && nd[0].rx_errs == 3 &&
	          nd[0].rx_drop == 4 && nd[0].tx_bytes == 5 && nd[0].tx_packets == 6 &&
	          nd[0].tx_errs == 7 && nd[0].tx_drop == 8);
}

Test(procfs, stat_context_switches_forks_and_blocked)
{
	static struct rt_stat_parse st;
	const char *t = "cpu 1 2 3 4\nintr 4242 0 17 25\nctxt 99\nprocesses 7\nprocs_running 2\n"
	                "procs_blocked 3\n";
	rt_parse_proc_stat(t, strlen(t), &st);
	cr_expect(st.have_intr && st.intr == 4242, "the intr line's first number is the total");
	cr_expect(st.have_ctxt && st.ctxt == 99);
	cr_expect(st.have_forks && st.forks == 7);
	cr_expect(st.have_blocked && st.procs_blocked == 3);
	const char *none = "cpu 1 2 3 4\n";
	rt_parse_proc_stat(none, strlen(none), &st);
	cr_expect(!st.have_ctxt && !st.have_forks && !st.have_blocked && !st.have_intr);
}

Test(procfs, sysfs_attributes_are_whole_numbers_or_nothing)
{
	uint64_t u;
	int64_t i;
	cr_expect(rt_parse_attr_u64("45000\n", 6, &u) == 0 && u == 45000);
	cr_expect(rt_parse_attr_i64("-1\n", 3, &i) == 0 && i == -1, "speed of a down NIC");
	cr_expect(rt_parse_attr_i64(" 9223372036854775807", 20, &i) == 0 && i == INT64_MAX);
	cr_expect_eq(rt_parse_attr_i64("9223372036854775808", 19, &i), -1);
	cr_expect(rt_parse_attr_i64("-9223372036854775808", 20, &i) == 0 && i == INT64_MIN);
	cr_expect_eq(rt_parse_attr_u64("18446744073709551616", 20, &u), -1, "past 2^64");
	const char *bad[] = {"", "\n", "-", "12 abc", "0x10", "-5", "1.5"};
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++)
		cr_expect_eq(rt_parse_attr_u64(bad[k], strlen(bad[k]), &u), -1, "'%s'", bad[k]);
}

/* cgroup limits in the kernel's grammar: "max" or an integer */
Test(procfs, cgroup_limits_are_max_or_an_integer)
{
	int64_t v;
	cr_expect_eq(rt_parse_max_or_u64("max\n", 4, &v), 0);
	cr_expect_eq(v, -1);
	cr_expect_eq(rt_parse_max_or_u64("536870912\n", 10, &v), 0);
	cr_expect_eq(v, 536870912);
	static const char *const bad[] = {"1e3\n", "12M\n", "-1\n", "0x10\n", "max2\n", "\n", "1.5\n"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_expect_neq(rt_parse_max_or_u64(bad[i], strlen(bad[i]), &v), 0, "'%s' taken", bad[i]);
}
