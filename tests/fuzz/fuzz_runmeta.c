/* libFuzzer target: the run-metadata scanner (rt_runmeta_read) and the
 * status rewrite (rt_runmeta_set_status) on hostile JSON, as a reader of a
 * damaged store or stream would meet it; not NUL-terminated. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rt/common.h"
#include "rt/runmeta.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* an exact-size copy: a scanner reading past len trips ASan */
	char *j = malloc(size ? size : 1);
	memcpy(j, data, size);
	struct rt_run_fields f;
	if (rt_runmeta_read(j, size, &f) == 0) {
		if (strnlen(f.status, sizeof(f.status)) == sizeof(f.status) ||
		    strnlen(f.job_name, sizeof(f.job_name)) == sizeof(f.job_name))
			abort();
		if (f.status_at && (f.status_at >= f.status_end || f.status_end > size))
			abort();
		/* a rewritten status reads back, the rest unchanged */
		struct rt_buf out = {0};
		if (rt_runmeta_set_status(j, size, "crashed", &out) == 0) {
			struct rt_run_fields g;
			if (rt_runmeta_read(out.p, out.len, &g) || strcmp(g.status, "crashed") ||
			    g.recorder_pid != f.recorder_pid || g.start_ns != f.start_ns)
				abort();
		}
		rt_buf_free(&out);
	}
	free(j);
	return 0;
}
