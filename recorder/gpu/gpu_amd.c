/* gpu_amd.c - amdgpu through sysfs and fdinfo (see gpu_amd.h). */
#define _GNU_SOURCE
#include "gpu_amd.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "procfs.h"
#include "proctree.h"
#include "rt/common.h"
#include "rt/sysroot.h"

static int cmp_name(const void *a, const void *b)
{
	return strcmp(a, b);
}

unsigned rt_amd_inventory(struct rt_amd *a, struct rt_inventory *inv)
{
	a->n = 0;
	char p[4200];
	if (rt_path(p, sizeof(p), RT_SYS, "module/amdgpu") || access(p, F_OK) != 0)
		return 0; /* no amdgpu driver: the AMD path is skipped entirely */
	if (rt_path(p, sizeof(p), RT_SYS, "class/drm"))
		return 0;
	DIR *d = opendir(p);
	if (!d)
		return 0;
	char names[RT_MAX_GPUS][64];
	unsigned nn = 0;
	struct dirent *e;
	while ((e = readdir(d)) && nn < RT_MAX_GPUS) {
		const char *s = e->d_name;
		if (strncmp(s, "card", 4) || !s[4] || strspn(s + 4, "0123456789") != strlen(s + 4))
			continue; /* card0, not card0-DP-1 */
		snprintf(names[nn++], sizeof(names[0]), "%.60s", s);
	}
	closedir(d);
	qsort(names, nn, sizeof(names[0]), cmp_name);
	char version[48] = "";
	rt_read_small(RT_SYS, "module/amdgpu/version", version, sizeof(version));
	for (unsigned i = 0; i < nn && inv->ngpu < RT_MAX_GPUS; i++) {
		char rel[256], link[4096], full[4200];
		snprintf(rel, sizeof(rel), "class/drm/%.60s/device/driver", names[i]);
		if (rt_path(full, sizeof(full), RT_SYS, rel))
			continue;
		ssize_t l = readlink(full, link, sizeof(link) - 1);
		if (l <= 0)
			continue;
		link[l] = '\0';
		const char *drv = strrchr(link, '/');
		if (strcmp(drv ? drv + 1 : link, "amdgpu"))
			continue;
		struct rt_inv_gpu *g = &inv->gpu[inv->ngpu];
		memset(g, 0, sizeof(*g));
		/* the PCI address names the device: uuid and host id */
		snprintf(rel, sizeof(rel), "class/drm/%.60s/device", names[i]);
		if (rt_path(full, sizeof(full), RT_SYS, rel) == 0 &&
		    (l = readlink(full, link, sizeof(link) - 1)) > 0) {
			link[l] = '\0';
			const char *b = strrchr(link, '/');
			b = b ? b + 1 : link;
			rt_strlcpy_n(g->pci_bus_id, sizeof(g->pci_bus_id), b, strlen(b));
		}
		rt_strlcpy_n(g->uuid, sizeof(g->uuid), g->pci_bus_id, strlen(g->pci_bus_id));
		rt_strlcpy_n(g->host_id, sizeof(g->host_id), g->pci_bus_id, strlen(g->pci_bus_id));
		snprintf(rel, sizeof(rel), "class/drm/%.60s/device/product_name", names[i]);
		if (rt_read_small(RT_SYS, rel, g->name, sizeof(g->name)) <= 0) {
			char id[32] = "";
			snprintf(rel, sizeof(rel), "class/drm/%.60s/device/device", names[i]);
			rt_read_small(RT_SYS, rel, id, sizeof(id));
			snprintf(g->name, sizeof(g->name), "AMD GPU %s", id);
		}
		rt_strlcpy_n(g->driver_version, sizeof(g->driver_version), version,
		             strlen(version));
		/* the first hwmon directory of the device */
		a->hwmon[a->n][0] = '\0';
		snprintf(rel, sizeof(rel), "class/drm/%.60s/device/hwmon", names[i]);
		DIR *h = rt_path(full, sizeof(full), RT_SYS, rel) == 0 ? opendir(full) : NULL;
		while (h && (e = readdir(h)))
			if (!strncmp(e->d_name, "hwmon", 5)) {
				snprintf(a->hwmon[a->n], sizeof(a->hwmon[0]), "%.100s/%.20s", rel,
				         e->d_name);
				break;
			}
		if (h)
			closedir(h);
		snprintf(a->dev[a->n], sizeof(a->dev[0]), "%.60s", names[i]);
		a->n++;
		inv->ngpu++;
	}
	return a->n;
}

void rt_amd_fill(struct rt_amd *a, unsigned k, struct rt_rec_gpu *out)
{
	memset(out, 0, sizeof(*out));
	if (k >= a->n)
		return;
	char rel[256];
	uint64_t v, t;
	snprintf(rel, sizeof(rel), "class/drm/%.60s/device/gpu_busy_percent", a->dev[k]);
	if (rt_sys_attr_u64(&v, "%s", rel) == 0 && v <= 100) {
		out->util_pct = (uint32_t)v;
		out->valid |= RT_GPU_V_UTIL;
	}
	snprintf(rel, sizeof(rel), "class/drm/%.60s/device/mem_info_vram_used", a->dev[k]);
	if (rt_sys_attr_u64(&v, "%s", rel) == 0) {
		snprintf(rel, sizeof(rel), "class/drm/%.60s/device/mem_info_vram_total", a->dev[k]);
		if (rt_sys_attr_u64(&t, "%s", rel) == 0 && v <= t) {
			out->vram_used = v;
			out->vram_total = t;
			out->valid |= RT_GPU_V_MEM;
		}
	}
	if (!a->hwmon[k][0])
		return;
	snprintf(rel, sizeof(rel), "%.120s/temp1_input", a->hwmon[k]); /* millidegrees */
	if (rt_sys_attr_u64(&v, "%s", rel) == 0 && v < 1000000) {
		out->temp_c = (int32_t)(v / 1000);
		out->valid |= RT_GPU_V_TEMP;
	}
	snprintf(rel, sizeof(rel), "%.120s/power1_average", a->hwmon[k]); /* µW */
	if (rt_sys_attr_u64(&v, "%s", rel) != 0) {
		snprintf(rel, sizeof(rel), "%.120s/power1_input", a->hwmon[k]);
		if (rt_sys_attr_u64(&v, "%s", rel) != 0)
			v = UINT64_MAX;
	}
	if (v != UINT64_MAX && v / 1000 <= UINT32_MAX) {
		out->power_mw = (uint32_t)(v / 1000);
		out->valid |= RT_GPU_V_POWER;
	}
	snprintf(rel, sizeof(rel), "%.120s/freq1_input", a->hwmon[k]); /* Hz, sclk */
	if (rt_sys_attr_u64(&v, "%s", rel) == 0) {
		out->clock_mhz = (uint32_t)(v / 1000000);
		out->valid |= RT_GPU_V_CLOCK;
	}
	snprintf(rel, sizeof(rel), "%.120s/freq2_input", a->hwmon[k]); /* Hz, mclk (dGPUs) */
	if (rt_sys_attr_u64(&v, "%s", rel) == 0) {
		out->mem_clock_mhz = (uint32_t)(v / 1000000);
		out->valid |= RT_GPU_V_MEM_CLOCK;
	}
	snprintf(rel, sizeof(rel), "%.120s/pwm1", a->hwmon[k]); /* fan duty, 0..255 */
	if (rt_sys_attr_u64(&v, "%s", rel) == 0 && v <= 255) {
		out->fan_pct = (uint32_t)((v * 100 + 127) / 255);
		out->valid |= RT_GPU_V_FAN;
	}
}

int rt_amd_parse_fdinfo(const char *buf, size_t len, uint64_t *client, uint64_t *vram_bytes,
                        uint64_t *engine_ns)
{
	const char *p = buf, *end = buf + len;
	int amd = 0, have_id = 0;
	*client = *vram_bytes = *engine_ns = 0;
	while (p < end) {
		const char *le = memchr(p, '\n', (size_t)(end - p));
		le = le ? le : end;
		const char *colon = memchr(p, ':', (size_t)(le - p));
		if (colon) {
			size_t klen = (size_t)(colon - p);
			const char *v = colon + 1;
			uint64_t x;
			if (klen == 10 && !memcmp(p, "drm-driver", 10)) {
				while (v < le && (*v == ' ' || *v == '\t'))
					v++;
				amd = (size_t)(le - v) >= 6 && !memcmp(v, "amdgpu", 6);
			} else if (klen == 13 && !memcmp(p, "drm-client-id", 13)) {
				have_id = rt_scan_u64(&v, le, client) == 0;
			} else if (klen == 15 && !memcmp(p, "drm-memory-vram", 15) &&
			           rt_scan_u64(&v, le, &x) == 0) {
				while (v < le && *v == ' ')
					v++;
				uint64_t mul = (le - v >= 3 && !memcmp(v, "KiB", 3))   ? 1024
				               : (le - v >= 3 && !memcmp(v, "MiB", 3)) ? 1048576
				                                                       : 1;
				*vram_bytes = x * mul;
			} else if (klen == 14 && !memcmp(p, "drm-engine-gfx", 14) &&
			           rt_scan_u64(&v, le, &x) == 0) {
				*engine_ns = x;
			}
		}
		p = le + 1;
	}
	return amd && have_id;
}

void rt_amd_tree(struct rt_amd *a, struct rt_proctree *tree, uint64_t mono_ns,
                 struct rt_rec_process *out)
{
	if (!a->n || !tree)
		return;
	static pid_t pids[4096];
	size_t np = rt_proctree_members(tree, pids, 4096);
	uint64_t seen[RT_AMD_MAX_CLIENTS], eng[RT_AMD_MAX_CLIENTS], vram = 0, busy_ns = 0;
	unsigned ns = 0;
	char buf[4096];
	for (size_t i = 0; i < np; i++) {
		char rel[64], dir[4200];
		snprintf(rel, sizeof(rel), "%d/fdinfo", pids[i]);
		DIR *d = rt_path(dir, sizeof(dir), RT_PROC, rel) == 0 ? opendir(dir) : NULL;
		struct dirent *e;
		while (d && (e = readdir(d))) {
			if (e->d_name[0] < '0' || e->d_name[0] > '9')
				continue;
			char f[128];
			snprintf(f, sizeof(f), "%d/fdinfo/%.20s", pids[i], e->d_name);
			int fd = rt_open(RT_PROC, f);
			if (fd < 0)
				continue;
			ssize_t len = rt_pread_all(fd, buf, sizeof(buf));
			close(fd);
			uint64_t client, v, en;
			if (len <= 0 || !rt_amd_parse_fdinfo(buf, (size_t)len, &client, &v, &en))
				continue;
			unsigned k = 0; /* dup'd descriptors share the client: count it once */
			while (k < ns && seen[k] != client)
				k++;
			if (k < ns || ns == RT_AMD_MAX_CLIENTS)
				continue;
			seen[ns] = client;
			eng[ns++] = en;
			vram += v;
		}
		if (d)
			closedir(d);
	}
	/* engine time since the previous call, for clients seen both times */
	for (unsigned k = 0; k < ns; k++)
		for (unsigned j = 0; j < a->nclients; j++)
			if (a->client[j] == seen[k] && eng[k] >= a->engine_ns[j])
				busy_ns += eng[k] - a->engine_ns[j];
	uint64_t dt = a->last_mono_ns && mono_ns > a->last_mono_ns ? mono_ns - a->last_mono_ns : 0;
	uint64_t pct_x100 = dt ? busy_ns * 10000 / dt : 0;
	if (pct_x100 > 10000ull * a->n)
		pct_x100 = 10000ull * a->n;
	memcpy(a->client, seen, ns * sizeof(seen[0]));
	memcpy(a->engine_ns, eng, ns * sizeof(eng[0]));
	a->nclients = ns;
	a->last_mono_ns = mono_ns;
	out->gpu_vram_bytes += vram;
	out->gpu_util_pct_x100 += (uint32_t)pct_x100;
	out->gpu_count += ns > 0;
}
