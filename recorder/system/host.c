/* host.c - host facts recorded once per run (hostname, CPU model, memory). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collect.h"
#include "rt/sysroot.h"
#include "rt/fmt.h"

void rt_host_info(struct rt_host_info *h)
{
	memset(h, 0, sizeof(*h));
	if (gethostname(h->hostname, sizeof(h->hostname) - 1) < 0)
		h->hostname[0] = '\0';
	char rel[] = "cpuinfo", p[4096];
	/* raw: /proc, read-only */
	FILE *f = rt_path(p, sizeof(p), RT_PROC, rel) == 0 ? fopen(p, "r") : NULL;
	char line[1024];
	while (f && fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "processor", 9))
			h->vcpus++;
		if (!h->cpu_model[0] && !strncmp(line, "model name", 10)) {
			char *v = strchr(line, ':');
			if (v) {
				v += 1 + strspn(v + 1, " \t");
				v[strcspn(v, "\n")] = '\0';
				rt_copy_text(h->cpu_model, sizeof(h->cpu_model), v);
			}
		}
	}
	if (f)
		fclose(f);
	rt_host_id(h->host_id, sizeof(h->host_id));
	struct ifaddrs *ifa = NULL;
	if (getifaddrs(&ifa) == 0) {
		for (struct ifaddrs *i = ifa; i && !h->ip[0]; i = i->ifa_next) {
			if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET)
				continue;
			const struct sockaddr_in *sin = (const struct sockaddr_in *)i->ifa_addr;
			if ((ntohl(sin->sin_addr.s_addr) >> 24) == 127)
				continue;
			inet_ntop(AF_INET, &sin->sin_addr, h->ip, sizeof(h->ip));
		}
		freeifaddrs(ifa);
	}
	/* storage: whole disks only (not loop/ram/zram, not dm/md built on them) */
	char dir[4096];
	DIR *d = rt_path(dir, sizeof(dir), RT_SYS, "block") == 0 ? opendir(dir) : NULL;
	struct dirent *e;
	while (d && (e = readdir(d))) {
		const char *n = e->d_name;
		if (n[0] == '.' || !strncmp(n, "loop", 4) || !strncmp(n, "ram", 3) ||
		    !strncmp(n, "zram", 4) || !strncmp(n, "dm-", 3) || !strncmp(n, "md", 2))
			continue;
		char srel[300], v[64];
		snprintf(srel, sizeof(srel), "block/%s/size", n);
		if (rt_read_small(RT_SYS, srel, v, sizeof(v)) > 0)
			h->storage_gb += (double)strtoull(v, NULL, 10) * 512.0 / 1e9;
	}
	if (d)
		closedir(d);
	char mem[8192];
	uint64_t kb[RT_MEMINFO_N];
	ssize_t n = rt_read_small(RT_PROC, "meminfo", mem, sizeof(mem));
	if (n > 0 && (rt_parse_meminfo(mem, (size_t)n, kb) & (1u << RT_MEM_TOTAL)))
		h->memory_mib = kb[RT_MEM_TOTAL] / 1024;
}
