/*
 * binaries.c - rt-bench binaries: the stripped size of each program.
 */
#include "bench.h"

static long stripped_size(const char *bin)
{
	char tmp[] = "/tmp/rt-bench-strip-XXXXXX", cmd[8400];
	int fd = mkstemp(tmp);
	if (fd < 0)
		return -1;
	close(fd);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s' && strip '%s'", bin, tmp, tmp);
	struct stat st;
	long sz = (system(cmd) == 0 && stat(tmp, &st) == 0) ? (long)st.st_size : -1;
	unlink(tmp);
	return sz;
}

int bench_binaries(const struct bench_ctx *c)
{
	printf("Stripped binaries:\n");
	printf("  rt-recorder                                        %8ld B\n",
	       stripped_size(c->rec_bin));
	printf("  rt-export                                          %8ld B\n",
	       stripped_size(c->exp_bin));
	char full[4300];
	snprintf(full, sizeof(full), "%s/rt-export-full", c->dir);
	if (access(full, X_OK) == 0)
		printf("  rt-export-full                                     %8ld B\n",
		       stripped_size(full));
	return 0;
}
