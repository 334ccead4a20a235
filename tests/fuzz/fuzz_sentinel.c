/* libFuzzer target: Sentinel start responses and checkpoint files, both
 * hostile JSON that ends up in object keys and file names. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "net/net.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *b = malloc(size + 1);
	memcpy(b, data, size);
	b[size] = '\0';
	struct rt_checkpoint cp;
	memset(&cp, 0, sizeof(cp));
	if (rt_sentinel_parse_start(b, &cp) == 0) {
		/* what passed validation must be safe as a key and a path: no
		 * slash in the run id, no ".." segment or leading slash in the prefix */
		if (strchr(cp.sentinel_run, '/') || !strcmp(cp.sentinel_run, "..") ||
		    cp.prefix[0] == '/')
			abort();
		char seg[512];
		for (const char *p = cp.prefix; *p;) {
			size_t n = strcspn(p, "/");
			if (n < sizeof(seg)) {
				memcpy(seg, p, n);
				seg[n] = '\0';
				if (!strcmp(seg, ".."))
					abort();
			}
			p += n;
			p += *p == '/';
		}
	}
	struct rt_checkpoint c2;
	if (rt_checkpoint_parse(b, &c2) == 0)
		rt_checkpoint_free(&c2);
	free(b);
	return 0;
}
