/* libFuzzer target: the eight cloud vendors' metadata answers (whatever
 * listens on the link-local address may answer anything). The first byte
 * picks the answer's kind, the rest is the body, not NUL-terminated. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "net/cloud.h"

static void check(const char *s, size_t cap)
{
	size_t n = strnlen(s, cap);
	if (n == cap)
		abort(); /* not terminated inside its field */
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			abort(); /* a control byte reached a value */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!size)
		return 0;
	enum rt_cloud_answer what = (enum rt_cloud_answer)(data[0] % RT_CLOUD_ANSWERS);
	size_t len = size - 1;
	/* an exact-size copy: a parser reading past len trips ASan */
	char *b = malloc(len ? len : 1);
	memcpy(b, data + 1, len);
	struct rt_cloud c;
	memset(&c, 0, sizeof(c));
	rt_cloud_take(what, b, len, &c);
	check(c.vendor, sizeof(c.vendor));
	check(c.account, sizeof(c.account));
	check(c.region, sizeof(c.region));
	check(c.zone, sizeof(c.zone));
	check(c.instance_type, sizeof(c.instance_type));
	free(b);
	return 0;
}
