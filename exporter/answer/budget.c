/*
 * budget.c - the job against its budget (resource-tracker --max-memory,
 * --max-cpu, kept in the run's metadata as "budget"): its peak memory as
 * the recommendation takes it, its mean CPU over its life (cores), beside
 * what it was allowed. The recorder runs `rt-export budget RUN` when the
 * job has ended, and exits 3 when the job went over; the summary and the
 * step summary say the same beside the use.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "answer/answer.h"

struct budget_use {
	int has_cpu, has_mem;
	double cpu, mem_mib;   /* allowed */
	double cpu_used, peak; /* used: mean cores, peak MiB */
};

/* The run's budget and its use; 0 when it set none. */
static int budget_of(const struct rt_answer *a, struct budget_use *u)
{
	memset(u, 0, sizeof(*u));
	const cJSON *b = a->meta ? cJSON_GetObjectItemCaseSensitive(a->meta, "budget") : NULL;
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(b, "cpu");
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(b, "memory_bytes");
	u->has_cpu = cJSON_IsNumber(c) && c->valuedouble > 0;
	u->has_mem = cJSON_IsNumber(m) && m->valuedouble > 0;
	if (!u->has_cpu && !u->has_mem)
		return 0;
	u->cpu = u->has_cpu ? c->valuedouble : 0;
	u->mem_mib = u->has_mem ? m->valuedouble / 1048576.0 : 0;
	int sys = !a->st.has_proc;
	int k = rt_stats_col(sys ? RT_V_CPU_UTIL : RT_V_PROC_CORES);
	u->cpu_used = k >= 0 && a->st.col[k].present ? a->st.col[k].mean : 0;
	u->peak = rt_stats_mem_peak(&a->st);
	return 1;
}

/* "2.00 GiB" or "512 MiB" */
static void fmt_mib(char *buf, size_t cap, double mib)
{
	if (mib >= 1024)
		snprintf(buf, cap, "%.2f GiB", mib / 1024);
	else
		snprintf(buf, cap, "%.0f MiB", mib);
}

int rt_budget_text(const struct rt_answer *a, char *buf, size_t cap, int *over)
{
	struct budget_use u;
	buf[0] = '\0';
	*over = 0;
	if (!a->st.lines || !budget_of(a, &u))
		return 0;
	size_t n = 0;
	if (u.has_mem) {
		char allowed[32], peak[32], by[32];
		fmt_mib(allowed, sizeof(allowed), u.mem_mib);
		fmt_mib(peak, sizeof(peak), u.peak);
		fmt_mib(by, sizeof(by), u.peak - u.mem_mib);
		int o = u.peak > u.mem_mib;
		*over |= o;
		n += (size_t)snprintf(buf + n, cap - n, "memory %s: peak %s, %s%s", allowed, peak,
		                      o ? "over by " : "within", o ? by : "");
	}
	if (u.has_cpu && n < cap) {
		int o = u.cpu_used > u.cpu;
		*over |= o;
		n += (size_t)snprintf(buf + n, cap - n, "%sCPU %g cores: mean %.2f, ",
		                      n ? "; " : "", u.cpu, u.cpu_used);
		if (n < cap)
			n += (size_t)(o ? snprintf(buf + n, cap - n, "over by %.2f",
			                           u.cpu_used - u.cpu)
			                : snprintf(buf + n, cap - n, "within"));
	}
	return n < cap ? 1 : 0;
}
