/* libFuzzer target: a Slurm job's AdminComment as rt reads it back (any
 * bytes: written by administrators and other tools, damaged, cut). What
 * decodes encodes again to a text that decodes to the same document. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sched/admincomment.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* an exact-size copy: a decoder reading past len trips ASan */
	char *b = malloc(size ? size : 1);
	memcpy(b, data, size);
	cJSON *doc = NULL;
	if (rt_ac_decode(b, size, &doc) == 0) {
		char *t = rt_ac_encode(doc);
		cJSON *again = NULL;
		if (t && (rt_ac_decode(t, strlen(t), &again) != 0 || !cJSON_Compare(doc, again, 1)))
			abort();
		cJSON_Delete(again);
		free(t);
	}
	cJSON_Delete(doc);
	free(b);
	return 0;
}
