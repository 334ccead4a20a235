/* libFuzzer target: the TOML reader, and the other config input: a
 * request (--request, TRACKER_REQUEST) and its sizes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rt/alloc.h"
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
	char *s = malloc(size + 1); /* as a command line or variable gives it */
	memcpy(s, data, size);
	s[size] = '\0';
	struct rt_request r;
	char why[200];
	if (rt_request_parse(s, &r, why, sizeof(why)) == 0 && r.has_mem && !r.mem)
		abort(); /* a request's memory is never 0 */
	uint64_t bytes;
	rt_parse_size(s, size, &bytes);
	free(s);
	return 0;
}
