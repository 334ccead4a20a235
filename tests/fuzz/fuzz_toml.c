/* libFuzzer target: the TOML reader. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rt/toml.h"

static void cb(void *ctx, const char *t, const char *k, const struct rt_toml_value *v)
{
	(void)ctx;
	(void)strlen(t);
	(void)strlen(k);
	if (v->type == RT_TOML_STRING)
		(void)strlen(v->str);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *b = malloc(size ? size : 1);
	memcpy(b, data, size);
	int line;
	char err[64];
	rt_toml_parse(b, size, cb, NULL, &line, err, sizeof(err));
	free(b);
	return 0;
}
