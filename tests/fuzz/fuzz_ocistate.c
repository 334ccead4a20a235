/* libFuzzer target: a container runtime's files as the node reads them
 * for a container's name (config.json, containers.json, config.v2.json),
 * whose values are the container's owner's: any bytes, not NUL-terminated;
 * and a pod's part's directory name, whose container id it gives. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cgjob.h"
#include "ocistate.h"

static void check(const char *s, size_t cap)
{
	size_t n = strnlen(s, cap);
	if (n == cap)
		abort(); /* not terminated within its buffer */
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20)
			abort(); /* a control character kept */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* an exact-size copy: a scan reading past len trips ASan */
	char *b = malloc(size ? size : 1);
	memcpy(b, data, size);
	struct rt_oci_names n;
	if (rt_oci_scan_names(b, size, &n) == 0 && !n.container[0])
		abort();
	check(n.container, sizeof(n.container));
	check(n.pod, sizeof(n.pod));
	check(n.ns, sizeof(n.ns));
	char name[64];
	if (rt_oci_scan_podman(b, size, "aaaa", name, sizeof(name)) == 0)
		check(name, sizeof(name));
	/* the same bytes as a pod's part, its group's directory name: a
	 * container id comes out, all hex, or nothing */
	char dir[96], id[80];
	size_t dn = strnlen(b, size < sizeof(dir) - 1 ? size : sizeof(dir) - 1);
	memcpy(dir, b, dn);
	dir[dn] = '\0';
	if (rt_cgjob_part_container(dir, id, sizeof(id)) == 0 &&
	    (strlen(id) < 12 || strspn(id, "0123456789abcdef") != strlen(id)))
		abort();
	free(b);
	return 0;
}
