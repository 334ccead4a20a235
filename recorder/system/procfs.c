/*
 * procfs.c - bounded parsers of /proc text (see procfs.h).
 *
 * Style: a cursor (p, end) walks the buffer; helpers never look past end.
 * Numbers saturate instead of overflowing.
 */
#include "procfs.h"

#include <string.h>

#include "rt/common.h"

static void skip_sp(const char **p, const char *end)
{
	while (*p < end && (**p == ' ' || **p == '\t'))
		(*p)++;
}

static const char *line_end(const char *p, const char *end)
{
	const char *nl = memchr(p, '\n', (size_t)(end - p));
	return nl ? nl : end;
}

int rt_scan_u64(const char **p, const char *end, uint64_t *out)
{
	skip_sp(p, end);
	const char *s = *p;
	uint64_t v = 0;
	while (s < end && *s >= '0' && *s <= '9') {
		unsigned d = (unsigned)(*s - '0');
		v = v > (UINT64_MAX - d) / 10 ? UINT64_MAX : v * 10 + d;
		s++;
	}
	if (s == *p)
		return -1;
	*p = s;
	*out = v;
	return 0;
}

/* Copy a whitespace-delimited token of at most cap-1 bytes; -1 if empty
 * or too long. */
static int scan_word(const char **p, const char *end, char *dst, size_t cap)
{
	skip_sp(p, end);
	const char *s = *p;
	while (s < end && *s != ' ' && *s != '\t' && *s != '\n')
		s++;
	size_t n = (size_t)(s - *p);
	if (n == 0 || n >= cap)
		return -1;
	memcpy(dst, *p, n);
	dst[n] = '\0';
	*p = s;
	return 0;
}

static int starts(const char *p, const char *end, const char *lit)
{
	size_t n = strlen(lit);
	return (size_t)(end - p) >= n && memcmp(p, lit, n) == 0;
}

void rt_parse_proc_stat(const char *buf, size_t len, struct rt_stat_parse *out)
{
	const char *p = buf, *end = buf + len;
	out->have_agg = 0;
	out->ncpu = 0;
	out->procs_running = 0;
	out->have_forks = out->have_ctxt = out->have_blocked = out->have_intr = 0;
	while (p < end) {
		const char *le = line_end(p, end);
		if (starts(p, le, "cpu")) {
			const char *q = p + 3;
			uint64_t id = 0, v[RT_CPU_NFIELDS] = {0};
			int agg = q < le && (*q == ' ' || *q == '\t');
			if (agg || rt_scan_u64(&q, le, &id) == 0) {
				int n = 0;
				while (n < RT_CPU_NFIELDS && rt_scan_u64(&q, le, &v[n]) == 0)
					n++;
				if (n >= 4) { /* user nice system idle at least */
					if (agg) {
						memcpy(out->agg, v, sizeof(v));
						out->have_agg = 1;
					} else if (out->ncpu < RT_MAX_CPUS && id < 65536) {
						struct rt_stat_cpu *c = &out->cpu[out->ncpu++];
						c->id = (uint16_t)id;
						c->total = 0;
						for (int f = 0; f < RT_CPU_NFIELDS; f++)
							c->total += v[f];
						c->idle = v[RT_CPU_IDLE] + v[RT_CPU_IOWAIT];
					}
				}
			}
		} else if (starts(p, le, "ctxt ")) {
			const char *q = p + 5;
			out->have_ctxt = rt_scan_u64(&q, le, &out->ctxt) == 0;
		} else if (starts(p, le, "intr ")) {
			const char *q = p + 5;
			out->have_intr = rt_scan_u64(&q, le, &out->intr) == 0;
		} else if (starts(p, le, "procs_blocked ")) {
			const char *q = p + 14;
			uint64_t v;
			if ((out->have_blocked = rt_scan_u64(&q, le, &v) == 0))
				out->procs_blocked = v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
		} else if (starts(p, le, "processes ")) {
			const char *q = p + 10;
			out->have_forks = rt_scan_u64(&q, le, &out->forks) == 0;
		} else if (starts(p, le, "procs_running ")) {
			const char *q = p + 14;
			uint64_t v;
			if (rt_scan_u64(&q, le, &v) == 0)
				out->procs_running = v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
		}
		p = le + 1;
	}
}

static const struct {
	const char *key;
	int field;
} meminfo_keys[] = {
    {"MemTotal:", RT_MEM_TOTAL},         {"MemFree:", RT_MEM_FREE},
    {"MemAvailable:", RT_MEM_AVAILABLE}, {"Buffers:", RT_MEM_BUFFERS},
    {"Cached:", RT_MEM_CACHED},          {"SReclaimable:", RT_MEM_SRECLAIMABLE},
    {"Active:", RT_MEM_ACTIVE},          {"Inactive:", RT_MEM_INACTIVE},
    {"SwapTotal:", RT_MEM_SWAP_TOTAL},   {"SwapFree:", RT_MEM_SWAP_FREE},
    {"Dirty:", RT_MEMINFO_DIRTY},
};

unsigned rt_parse_meminfo(const char *buf, size_t len, uint64_t kb[RT_MEMINFO_N])
{
	const char *p = buf, *end = buf + len;
	unsigned found = 0, all = 0;
	for (size_t k = 0; k < RT_ARRAY_LEN(meminfo_keys); k++)
		all |= 1u << meminfo_keys[k].field;
	memset(kb, 0, sizeof(uint64_t) * RT_MEMINFO_N);
	while (p < end) {
		const char *le = line_end(p, end);
		for (size_t k = 0; k < RT_ARRAY_LEN(meminfo_keys); k++) {
			if (!starts(p, le, meminfo_keys[k].key))
				continue;
			const char *q = p + strlen(meminfo_keys[k].key);
			uint64_t v;
			if (rt_scan_u64(&q, le, &v) == 0) {
				kb[meminfo_keys[k].field] = v;
				found |= 1u << meminfo_keys[k].field;
			}
			break;
		}
		if (found == all)
			break; /* the rest of the file holds nothing we keep */
		p = le + 1;
	}
	return found;
}

unsigned rt_parse_pressure(const char *buf, size_t len, uint64_t *some_us, uint64_t *full_us)
{
	const char *p = buf, *end = buf + len;
	unsigned found = 0;
	while (p < end) {
		const char *le = line_end(p, end);
		int some = starts(p, le, "some "), full = starts(p, le, "full ");
		/* "some avg10=0.00 avg60=0.00 avg300=0.00 total=12345" */
		for (const char *q = p; (some || full) && q + 6 <= le; q++) {
			if (memcmp(q, "total=", 6) != 0)
				continue;
			const char *v = q + 6;
			uint64_t x;
			if (rt_scan_u64(&v, le, &x) == 0) {
				*(some ? some_us : full_us) = x;
				found |= some ? 1u : 2u;
			}
			break;
		}
		p = le + 1;
	}
	return found;
}

unsigned rt_parse_vmstat(const char *buf, size_t len, uint64_t out[RT_VMSTAT_N])
{
	static const char *const keys[RT_VMSTAT_N] = {"pgmajfault ", "pswpin ", "pswpout ",
	                                              "oom_kill "};
	const char *p = buf, *end = buf + len;
	unsigned found = 0;
	while (p < end && found != (1u << RT_VMSTAT_N) - 1) {
		const char *le = line_end(p, end);
		for (unsigned k = 0; k < RT_VMSTAT_N; k++) {
			if (!starts(p, le, keys[k]))
				continue;
			const char *q = p + strlen(keys[k]);
			if (rt_scan_u64(&q, le, &out[k]) == 0)
				found |= 1u << k;
			break;
		}
		p = le + 1;
	}
	return found;
}

int rt_parse_field_u64(const char *buf, size_t len, const char *key, uint64_t *out)
{
	const char *p = buf, *end = buf + len;
	size_t kl = strlen(key);
	while (p < end) {
		const char *le = line_end(p, end);
		if ((size_t)(le - p) >= kl && memcmp(p, key, kl) == 0) {
			const char *q = p + kl;
			return rt_scan_u64(&q, le, out);
		}
		p = le + 1;
	}
	return -1;
}

int rt_parse_pid_stat(const char *b, size_t len, struct rt_pid_stat *ps)
{
	const char *end = b + len, *p = NULL;
	for (const char *q = b; q < end; q++)
		if (*q == ')')
			p = q;
	if (!p)
		return -1;
	p++;
	/* field 3 is the state letter, then numbers from field 4 (ppid) */
	while (p < end && *p == ' ')
		p++;
	if (p >= end)
		return -1;
	char state = *p++;
	uint64_t f[21];
	for (int i = 0; i < 21; i++)
		if (rt_scan_u64_signed(&p, end, &f[i]))
			return -1;
	/* f[0]=ppid(4) f[6]=minflt(10) f[8]=majflt(12) f[9]=cmajflt f[10]=utime(14) f[11]=stime
	 * f[12]=cutime f[13]=cstime f[16]=num_threads(20) f[18]=starttime(22)
	 * f[20]=rss(24) */
	ps->ppid = (int32_t)f[0];
	ps->mf = f[8] + f[9];
	ps->flt = f[6] + f[8];
	/* f[5]=flags(9): PF_EXITING (0x4) while its memory is being released */
	ps->exiting = state == 'Z' || state == 'X' || state == 'x' || (f[5] & 0x4) != 0;
	ps->own_ut = f[10];
	ps->own_st = f[11];
	ps->ut = f[10] + f[12];
	ps->st = f[11] + f[13];
	ps->threads = (uint32_t)f[16];
	ps->start = f[18];
	ps->rss_pages = f[20];
	return 0;
}

int rt_parse_max_or_u64(const char *buf, size_t len, int64_t *out)
{
	const char *p = buf, *end = buf + len;
	skip_sp(&p, end);
	if (end - p >= 3 && memcmp(p, "max", 3) == 0 && (end - p == 3 || p[3] == '\n')) {
		*out = -1;
		return 0;
	}
	uint64_t v;
	if (p == end || *p < '0' || *p > '9' || rt_scan_u64(&p, end, &v))
		return -1;
	/* the kernel's grammar: "max" or an integer, then the newline; "1e3"
	 * or "12M" is not a limit (it read as 1 and 12) */
	while (p < end && (*p == ' ' || *p == '\n'))
		p++;
	if (p != end)
		return -1;
	*out = v >= (1ull << 62) ? -1 : (int64_t)v;
	return 0;
}

/* Copy the path field of a /proc/<pid>/cgroup line into dst (cap). */
static void cg_path(char *dst, size_t cap, const char *s, const char *le)
{
	size_t n = (size_t)(le - s);
	if (n >= cap)
		n = 0; /* too long to be ours: as if absent */
	memcpy(dst, s, n);
	dst[n] = '\0';
}

void rt_parse_proc_cgroup(const char *buf, size_t len, struct rt_cgroup_paths *out)
{
	const char *p = buf, *end = buf + len;
	out->v2[0] = out->memory[0] = out->cpu[0] = out->cpuacct[0] = out->pids[0] = '\0';
	while (p < end) {
		const char *le = line_end(p, end);
		/* hierarchy-id:controllers:path */
		const char *c1 = memchr(p, ':', (size_t)(le - p));
		const char *c2 = c1 ? memchr(c1 + 1, ':', (size_t)(le - c1 - 1)) : NULL;
		if (c2) {
			const char *path = c2 + 1;
			if (c1 - p == 1 && *p == '0' && c2 == c1 + 1)
				cg_path(out->v2, sizeof(out->v2), path, le);
			for (const char *t = c1 + 1; t < c2;) {
				const char *e = memchr(t, ',', (size_t)(c2 - t));
				if (!e)
					e = c2;
				size_t n = (size_t)(e - t);
				if (n == 6 && !memcmp(t, "memory", 6))
					cg_path(out->memory, sizeof(out->memory), path, le);
				if (n == 3 && !memcmp(t, "cpu", 3))
					cg_path(out->cpu, sizeof(out->cpu), path, le);
				if (n == 7 && !memcmp(t, "cpuacct", 7))
					cg_path(out->cpuacct, sizeof(out->cpuacct), path, le);
				if (n == 4 && !memcmp(t, "pids", 4))
					cg_path(out->pids, sizeof(out->pids), path, le);
				t = e + 1;
			}
		}
		p = le + 1;
	}
}

size_t rt_parse_diskstats(const char *buf, size_t len, struct rt_diskstat *out, size_t cap)
{
	const char *p = buf, *end = buf + len;
	size_t n = 0;
	while (p < end && n < cap) {
		const char *le = line_end(p, end);
		const char *q = p;
		uint64_t maj, min, f[11] = {0};
		struct rt_diskstat *d = &out[n];
		int ok = rt_scan_u64(&q, le, &maj) == 0 && rt_scan_u64(&q, le, &min) == 0 &&
		         scan_word(&q, le, d->name, sizeof(d->name)) == 0;
		/* reads, reads merged, sectors read, ms, writes, merged, sectors written */
		for (int i = 0; ok && i < 7; i++)
			ok = rt_scan_u64(&q, le, &f[i]) == 0;
		/* then ms writing, in flight, io_ticks, time_in_queue (since 2.6) */
		for (int i = 7; ok && i < 11 && rt_scan_u64(&q, le, &f[i]) == 0; i++)
			;
		if (ok && maj <= UINT32_MAX && min <= UINT32_MAX) {
			d->major = (uint32_t)maj;
			d->minor = (uint32_t)min;
			d->rd_sectors = f[2];
			d->wr_sectors = f[6];
			d->rd_ios = f[0];
			d->rd_ms = f[3];
			d->wr_ios = f[4];
			d->wr_ms = f[7];
			d->io_ms = f[9];
			d->weighted_ms = f[10];
			n++;
		}
		p = le + 1;
	}
	return n;
}

size_t rt_parse_netdev(const char *buf, size_t len, struct rt_netdev *out, size_t cap)
{
	const char *p = buf, *end = buf + len;
	size_t n = 0;
	while (p < end && n < cap) {
		const char *le = line_end(p, end);
		const char *colon = memchr(p, ':', (size_t)(le - p));
		if (colon) {
			const char *s = p;
			while (s < colon && (*s == ' ' || *s == '\t'))
				s++;
			size_t nlen = (size_t)(colon - s);
			struct rt_netdev *d = &out[n];
			const char *q = colon + 1;
			uint64_t f[12] = {0};
			int ok = nlen > 0 && nlen < sizeof(d->name) && !memchr(s, ' ', nlen);
			for (int i = 0; ok && i < 9; i++) /* 8 receive fields, then tx bytes */
				ok = rt_scan_u64(&q, le, &f[i]) == 0;
			/* tx packets, errs, drop */
			for (int i = 9; ok && i < 12 && rt_scan_u64(&q, le, &f[i]) == 0; i++)
				;
			if (ok) {
				memcpy(d->name, s, nlen);
				d->name[nlen] = '\0';
				d->rx_bytes = f[0];
				d->rx_packets = f[1];
				d->rx_errs = f[2];
				d->rx_drop = f[3];
				d->tx_bytes = f[8];
				d->tx_packets = f[9];
				d->tx_errs = f[10];
				d->tx_drop = f[11];
				n++;
			}
		}
		p = le + 1;
	}
	return n;
}

/* Copy a mountinfo field decoding \ooo escapes; -1 if too long. */
static int scan_escaped(const char **p, const char *end, char *dst, size_t cap)
{
	skip_sp(p, end);
	const char *s = *p;
	size_t n = 0;
	while (s < end && *s != ' ' && *s != '\t' && *s != '\n') {
		char c = *s++;
		if (c == '\\' && end - s >= 3 && s[0] >= '0' && s[0] <= '3' && s[1] >= '0' &&
		    s[1] <= '7' && s[2] >= '0' && s[2] <= '7') {
			c = (char)((s[0] - '0') * 64 + (s[1] - '0') * 8 + (s[2] - '0'));
			s += 3;
		}
		if (n + 1 >= cap || c == '\0')
			return -1;
		dst[n++] = c;
	}
	if (n == 0)
		return -1;
	dst[n] = '\0';
	*p = s;
	return 0;
}

size_t rt_parse_mountinfo(const char *buf, size_t len,
                          void (*cb)(void *ctx, const struct rt_mountinfo *m), void *ctx)
{
	const char *p = buf, *end = buf + len;
	size_t n = 0;
	while (p < end) {
		const char *le = line_end(p, end);
		const char *q = p;
		uint64_t id, parent, maj, min;
		struct rt_mountinfo m;
		char opts[512];
		int ok = rt_scan_u64(&q, le, &id) == 0 && rt_scan_u64(&q, le, &parent) == 0 &&
		         rt_scan_u64(&q, le, &maj) == 0 && q < le && *q++ == ':' &&
		         rt_scan_u64(&q, le, &min) == 0 &&
		         scan_escaped(&q, le, m.root, sizeof(m.root)) == 0 &&
		         scan_escaped(&q, le, m.mount_point, sizeof(m.mount_point)) == 0;
		/* skip mount options and optional fields up to the " - " separator */
		while (ok) {
			if (scan_word(&q, le, opts, sizeof(opts)) < 0) {
				ok = 0;
				break;
			}
			if (!strcmp(opts, "-"))
				break;
		}
		ok = ok && scan_escaped(&q, le, m.fstype, sizeof(m.fstype)) == 0;
		if (ok && maj <= UINT32_MAX && min <= UINT32_MAX) {
			m.major = (uint32_t)maj;
			m.minor = (uint32_t)min;
			cb(ctx, &m);
			n++;
		}
		p = le + 1;
	}
	return n;
}

int rt_parse_cg_usage_v2(const char *buf, size_t len, uint64_t *usec)
{
	const char *p = buf, *end = buf + len;
	while (p < end) {
		const char *le = line_end(p, end);
		if (starts(p, le, "usage_usec ")) {
			const char *q = p + 11;
			return rt_scan_u64(&q, le, usec);
		}
		p = le + 1;
	}
	return -1;
}

int rt_parse_cg_usage_v1(const char *buf, size_t len, uint64_t *usec)
{
	const char *p = buf;
	uint64_t ns;
	if (rt_scan_u64(&p, buf + len, &ns))
		return -1;
	*usec = ns / 1000;
	return 0;
}

int rt_parse_cg_max(const char *buf, size_t len, int64_t *quota, uint64_t *period)
{
	const char *p = buf, *end = buf + len;
	uint64_t q, per;
	skip_sp(&p, end);
	if (starts(p, end, "max")) {
		*quota = -1;
		p += 3;
	} else if (rt_scan_u64(&p, end, &q) == 0 && q <= INT64_MAX) {
		*quota = (int64_t)q;
	} else {
		return -1;
	}
	if (rt_scan_u64(&p, end, &per) || per == 0)
		return -1;
	*period = per;
	return 0;
}

uint64_t rt_name_hash(uint64_t h, const char *s)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return (h ^ 0xff) * 1099511628211ull; /* name separator */
}

int rt_scan_u64_signed(const char **p, const char *end, uint64_t *out)
{
	skip_sp(p, end);
	int neg = *p < end && **p == '-';
	if (neg)
		(*p)++;
	if (rt_scan_u64(p, end, out))
		return -1;
	if (neg) /* only ppid 0 / priority-like fields are negative: clamp */
		*out = 0;
	return 0;
}

int rt_parse_loadavg(const char *buf, size_t len, uint32_t x100[3])
{
	const char *p = buf, *end = buf + len;
	for (int k = 0; k < 3; k++) {
		while (p < end && *p == ' ')
			p++;
		uint64_t v = 0;
		int digits = 0, frac = -1;
		for (; p < end && *p != ' ' && *p != '\n'; p++) {
			if (*p == '.' && frac < 0) {
				frac = 0;
				continue;
			}
			if (*p < '0' || *p > '9' || v > UINT32_MAX)
				return -1;
			if (frac >= 2)
				continue; /* more decimals than the kernel prints: cut */
			v = v * 10 + (uint64_t)(*p - '0');
			digits++;
			if (frac >= 0)
				frac++;
		}
		if (!digits)
			return -1;
		for (int f = frac < 0 ? 0 : frac; f < 2; f++)
			v *= 10;
		if (v > UINT32_MAX)
			return -1;
		x100[k] = (uint32_t)v;
	}
	return 0;
}
