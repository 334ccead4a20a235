/* host.c - host facts recorded once per run (hostname, CPU model, memory). */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "collect.h"
#include "rt/sysroot.h"

void rt_host_info(struct rt_host_info *h)
{
	memset(h, 0, sizeof(*h));
	if (gethostname(h->hostname, sizeof(h->hostname) - 1) < 0)
		h->hostname[0] = '\0';
	char rel[] = "cpuinfo", p[4096];
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
				snprintf(h->cpu_model, sizeof(h->cpu_model), "%s", v);
			}
		}
	}
	if (f)
		fclose(f);
	char mem[8192];
	uint64_t kb[RT_MEM_NFIELDS];
	ssize_t n = rt_read_small(RT_PROC, "meminfo", mem, sizeof(mem));
	if (n > 0 && (rt_parse_meminfo(mem, (size_t)n, kb) & (1u << RT_MEM_TOTAL)))
		h->memory_mib = kb[RT_MEM_TOTAL] / 1024;
}
