/* libFuzzer target: the inventory decoder (re-encode what decodes). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rt/inventory.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct rt_inventory inv;
	static unsigned char out[1 << 20];
	unsigned char *b = malloc(size ? size : 1);
	memcpy(b, data, size);
	if (rt_inventory_decode(b, size, &inv) == 0) {
		long n = rt_inventory_encode(&inv, out, sizeof(out));
		if (n != (long)size || memcmp(out, b, size) != 0)
			abort(); /* decode/encode must round-trip */
	}
	free(b);
	return 0;
}
