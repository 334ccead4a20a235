/*
 * ocistate.c - a container's name from its runtime's files (ocistate.h).
 */
#define _GNU_SOURCE
#include "ocistate.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rt/fmt.h"
#include "rt/safefile.h"
#include "rt/sysroot.h"

#define FILE_MAX (2u << 20) /* a runtime's file read, at most */
#define PODMAN_DIR "/var/lib/containers/storage/overlay-containers"
#define DOCKER_DIR "/var/lib/docker/containers"

/* A JSON string at p (its opening quote) into out (cap bytes, cut; its
 * control characters and escapes of them as '?'), the position after its
 * closing quote; NULL when it does not close before end. */
static const char *json_string(const char *p, const char *end, char *out, size_t cap)
{
	size_t n = 0;
	for (p++; p < end; p++) {
		char c = *p;
		if (c == '"') {
			out[n < cap ? n : cap - 1] = '\0';
			return p + 1;
		}
		if (c == '\\') {
			if (++p >= end)
				return NULL;
			c = *p == 'u'                   ? (end - p > 4 ? (p += 4, '?') : '\0')
			    : *p && strchr("\"\\/", *p) ? *p
			                                : '?';
			if (!c)
				return NULL;
		}
		if ((unsigned char)c < 0x20)
			c = '?';
		if (n + 1 < cap)
			out[n++] = c;
	}
	return NULL;
}

static const char *skip_ws(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r'))
		p++;
	return p;
}

/* fn(arg, depth, key, value) for each key whose value is a string, or an
 * array that starts with one (that string); depth: objects around it.
 * fn's 1 ends the walk. Strings are whole tokens: a value never reads as
 * a key, whatever it holds. */
typedef int (*pair_fn)(void *arg, int depth, const char *key, const char *val);
static void json_pairs(const char *p, const char *end, pair_fn fn, void *arg)
{
	char key[192], val[256];
	int depth = 0;
	while (p < end) {
		if (*p == '{' || *p == '}')
			depth += *p == '{' ? 1 : -1;
		if (*p != '"') {
			p++;
			continue;
		}
		const char *q = json_string(p, end, key, sizeof(key));
		if (!q)
			return;
		p = skip_ws(q, end);
		if (p >= end || *p != ':')
			continue; /* (a value) */
		p = skip_ws(p + 1, end);
		if (p < end && *p == '[')
			p = skip_ws(p + 1, end);
		if (p >= end || *p != '"')
			continue;
		if (!(q = json_string(p, end, val, sizeof(val))))
			return;
		if (fn(arg, depth, key, val))
			return;
		p = q;
	}
}

/* The CRI names (containerd's, then CRI-O's and dockershim's), and
 * docker's own "Name" at the top. */
static int take_name(void *arg, int depth, const char *key, const char *val)
{
	static const struct {
		const char *key;
		size_t at;
	} keys[] = {
	    {"io.kubernetes.cri.container-name", offsetof(struct rt_oci_names, container)},
	    {"io.kubernetes.container.name", offsetof(struct rt_oci_names, container)},
	    {"io.kubernetes.cri.sandbox-name", offsetof(struct rt_oci_names, pod)},
	    {"io.kubernetes.pod.name", offsetof(struct rt_oci_names, pod)},
	    {"io.kubernetes.cri.sandbox-namespace", offsetof(struct rt_oci_names, ns)},
	    {"io.kubernetes.pod.namespace", offsetof(struct rt_oci_names, ns)},
	};
	struct rt_oci_names *n = arg;
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		char *to = (char *)n + keys[i].at;
		if (!strcmp(key, keys[i].key) && !to[0] && val[0])
			rt_copy_text(to, sizeof(n->container), val);
	}
	if (depth == 1 && !strcmp(key, "Name") && val[0] == '/' && val[1] && !n->container[0])
		rt_copy_text(n->container, sizeof(n->container), val + 1);
	return 0;
}

int rt_oci_scan_names(const char *text, size_t len, struct rt_oci_names *n)
{
	memset(n, 0, sizeof(*n));
	json_pairs(text, text + len, take_name, n);
	return n->container[0] ? 0 : -1;
}

struct podman_scan {
	const char *id;
	int mine; /* the entry being read is the container's */
	char *out;
	size_t cap;
};

static int take_podman(void *arg, int depth, const char *key, const char *val)
{
	struct podman_scan *s = arg;
	if (depth != 1)
		return 0;
	if (!strcmp(key, "id"))
		s->mine = !strcmp(val, s->id);
	else if (s->mine && !strcmp(key, "names") && val[0]) {
		rt_copy_text(s->out, s->cap, val);
		return 1;
	}
	return 0;
}

int rt_oci_scan_podman(const char *text, size_t len, const char *id, char *out, size_t cap)
{
	struct podman_scan s = {id, 0, out, cap};
	out[0] = '\0';
	json_pairs(text, text + len, take_podman, &s);
	return out[0] ? 0 : -1;
}

/* A root-owned file of the runtime's, at most FILE_MAX of it (malloc'd,
 * *len), or NULL (not there, not root's alone). */
static char *read_state(const char *path, size_t *len)
{
	char why[256];
	int fd = rt_open_own(path, O_RDONLY, 0, why, sizeof(why));
	if (fd < 0)
		return NULL;
	char *buf = malloc(FILE_MAX);
	ssize_t n = buf ? rt_pread_to_eof(fd, buf, FILE_MAX) : -1;
	close(fd);
	if (n <= 0) {
		free(buf);
		return NULL;
	}
	*len = (size_t)n;
	return buf;
}

/* Where a runtime keeps a container's OCI bundle config (annotations):
 * the id between a directory and a tail, tried in order: containerd's
 * CRI namespace; CRI-O's run root, then its storage (podman's too, which
 * is the same containers/storage layout). */
struct bundle_at {
	const char *dir, *tail;
};
static const struct bundle_at cri_bundles[] = {
    {"/run/containerd/io.containerd.runtime.v2.task/k8s.io", "config.json"},
    {"/run/containers/storage/overlay-containers", "userdata/config.json"},
    {PODMAN_DIR, "userdata/config.json"},
    {NULL, NULL}};
static const struct bundle_at podman_bundles[] = {{PODMAN_DIR, "userdata/config.json"},
                                                  {NULL, NULL}};
static const struct bundle_at docker_bundles[] = {{DOCKER_DIR, "config.v2.json"}, {NULL, NULL}};

/* The names in the first of the bundle files that is there and root's. */
static void scan_bundles(const struct bundle_at *at, const char *id, struct rt_oci_names *n)
{
	char path[512];
	size_t len = 0;
	for (; at->dir; at++) {
		snprintf(path, sizeof(path), "%s/%s/%s", at->dir, id, at->tail);
		char *text = read_state(path, &len);
		if (!text)
			continue;
		rt_oci_scan_names(text, len, n);
		free(text);
		return;
	}
}

int rt_oci_names(const char *runtime, const char *id, struct rt_oci_names *n)
{
	size_t len = 0;
	memset(n, 0, sizeof(*n));
	if (strspn(id, "0123456789abcdef") != strlen(id) || strlen(id) > 128)
		return -1;
	int podman = !strcmp(runtime, "podman"), cri = !strcmp(runtime, "kubernetes");
	scan_bundles(cri ? cri_bundles : podman ? podman_bundles : docker_bundles, id, n);
	if (cri)
		return n->container[0] || n->pod[0] ? 0 : -1;
	if (n->container[0] || !podman)
		return n->container[0] ? 0 : -1;
	char *text = read_state(PODMAN_DIR "/containers.json", &len);
	if (!text)
		return -1;
	int rc = rt_oci_scan_podman(text, len, id, n->container, sizeof(n->container));
	free(text);
	return rc;
}
