/* alloc.c - parsing what a job asked for (alloc.h). */
#include "rt/alloc.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Whether s starts with a decimal number (digits, at most one '.'
 * between digits) and what follows is not more of a number. */
static int decimal_prefix(const char *s)
{
	size_t a = strspn(s, "0123456789");
	if (!a)
		return 0;
	if (s[a] == '.') {
		size_t b = strspn(s + a + 1, "0123456789");
		if (!b)
			return 0;
		a += 1 + b;
	}
	char c = s[a];
	return !(c == '.' || c == 'e' || c == 'E' || c == 'x' || c == 'X' || c == 'p' || c == 'P');
}

int rt_parse_size(const char *s, size_t len, uint64_t *bytes)
{
	char buf[64];
	if (!len || len >= sizeof(buf))
		return -1;
	memcpy(buf, s, len);
	buf[len] = '\0';
	char *end;
	if (!decimal_prefix(buf))
		return -1; /* 0x10G, 1e3M, inf: not what a person means by a size */
	errno = 0;
	double v = strtod(buf, &end);
	if (end == buf || errno || !(v > 0) || !isfinite(v) || buf[0] == '-' || buf[0] == '+')
		return -1;
	static const struct {
		const char *unit;
		double mul;
	} units[] = {
	    {"", 1},
	    {"B", 1},
	    {"K", 1024.0},
	    {"Ki", 1024.0},
	    {"KiB", 1024.0},
	    {"KB", 1e3},
	    {"M", 1048576.0},
	    {"Mi", 1048576.0},
	    {"MiB", 1048576.0},
	    {"MB", 1e6},
	    {"G", 1073741824.0},
	    {"Gi", 1073741824.0},
	    {"GiB", 1073741824.0},
	    {"GB", 1e9},
	    {"T", 1099511627776.0},
	    {"Ti", 1099511627776.0},
	    {"TiB", 1099511627776.0},
	    {"TB", 1e12},
	};
	while (*end == ' ')
		end++;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(end, units[i].unit)) {
			double b = v * units[i].mul;
			if (b < 1 || b > 9.2e18)
				return -1;
			*bytes = (uint64_t)b;
			return 0;
		}
	return -1;
}

int rt_request_parse(const char *s, struct rt_request *r, char *err, size_t cap)
{
	memset(r, 0, sizeof(*r));
	if (!s || !*s) {
		snprintf(err, cap, "is empty (use cpu=N,memory=SIZE,gpu=N)");
		return -1;
	}
	while (*s) {
		const char *e = strchr(s, ','), *end = e ? e : s + strlen(s);
		const char *eq = memchr(s, '=', (size_t)(end - s));
		int n = (int)(end - s);
		if (!eq) {
			snprintf(err, cap, "has '%.*s', not KEY=VALUE (keys: cpu, memory, gpu)", n,
			         s);
			return -1;
		}
		size_t kl = (size_t)(eq - s), vl = (size_t)(end - eq - 1);
		char v[64];
		snprintf(v, sizeof(v), "%.*s", (int)(vl < 63 ? vl : 63), eq + 1);
		char *x;
		int twice = (kl == 3 && !strncmp(s, "cpu", 3) && r->has_cpu) ||
		            (kl == 6 && !strncmp(s, "memory", 6) && r->has_mem) ||
		            (kl == 3 && !strncmp(s, "gpu", 3) && r->has_gpu);
		if (twice) {
			snprintf(err, cap, "names %.*s twice: give each of cpu, memory, gpu once",
			         (int)kl, s);
			return -1;
		}
		if (kl == 3 && !strncmp(s, "cpu", 3)) {
			errno = 0;
			double c = strtod(v, &x);
			if (!decimal_prefix(v) || x == v || *x || errno || !(c > 0) || c > 100000) {
				snprintf(err, cap,
				         "has cpu='%s': a number of cores > 0 (e.g. cpu=4)", v);
				return -1;
			}
			r->has_cpu = 1;
			r->cpu = c;
		} else if (kl == 6 && !strncmp(s, "memory", 6)) {
			if (rt_parse_size(eq + 1, vl, &r->mem)) {
				snprintf(err, cap,
				         "has memory='%s': a size such as 16GiB, 512MiB or 2G", v);
				return -1;
			}
			r->has_mem = 1;
		} else if (kl == 3 && !strncmp(s, "gpu", 3)) {
			errno = 0;
			long g = strtol(v, &x, 10);
			if (v[0] < '0' || v[0] > '9' || x == v || *x || errno || g < 0 ||
			    g > 1024) {
				snprintf(err, cap,
				         "has gpu='%s': a whole number of GPUs (e.g. gpu=1)", v);
				return -1;
			}
			r->has_gpu = 1;
			r->gpu = (unsigned)g;
		} else {
			snprintf(err, cap, "has '%.*s': the keys are cpu, memory and gpu", (int)kl,
			         s);
			return -1;
		}
		s = e ? e + 1 : end;
	}
	return 0;
}
