/* libFuzzer target: answers of the Keeper API (the server list and an
 * instance's prices) and the remembered cloud (STORE/cloud.json): bytes
 * from a server or a file, not NUL-terminated. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "net/cloud.h"
#include "net/net.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* an exact-size copy: a parser reading past len trips ASan */
	char *b = malloc(size ? size : 1);
	memcpy(b, data, size);
	struct rt_server *v;
	size_t n;
	if (rt_keeper_parse_servers(b, size, 5, &v, &n) == 0) {
		if (n > 5)
			abort();
		for (size_t i = 0; i < n; i++)
			if (!v[i].vendor_id[0] || !v[i].api_reference[0] ||
			    strlen(v[i].display_name) >= sizeof(v[i].display_name))
				abort();
		free(v);
	}
	double price;
	if (rt_keeper_parse_prices(b, size, "eu-west-1", &price) == 0 &&
	    (isnan(price) || price < 0))
		abort();
	struct rt_cloud c;
	if (rt_cloud_parse(b, size, "host-1", &c) == 0 && strlen(c.vendor) >= sizeof(c.vendor))
		abort();
	free(b);
	return 0;
}
