/*
 * ocistate.h - a container's name from what its runtime wrote on the node
 * (no API server, no daemon asked): the OCI bundle's annotations, the
 * Kubernetes names the CRI runtimes put there, else the runtime's own
 * record of its containers.
 *
 *   podman: /var/lib/containers/storage/overlay-containers/ID/userdata/
 *           config.json (annotations), then overlay-containers/
 *           containers.json (the container's "names")
 *   docker: /var/lib/docker/containers/ID/config.v2.json ("Name", and
 *           the labels dockershim and cri-dockerd set)
 *   a pod's containers (Kubernetes): containerd's bundle,
 *           /run/containerd/io.containerd.runtime.v2.task/k8s.io/ID/
 *           config.json; CRI-O's, /run/containers/storage/
 *           overlay-containers/ID/userdata/config.json, then the same
 *           below /var/lib/containers/storage (CRI-O's storage and
 *           podman's are one layout)
 *
 * The files are root's (checked: a file another user could write names
 * nothing); their values are the container's owner's bytes (annotations,
 * names, labels): scanned by a bounded JSON tokenizer, fuzzed.
 */
#ifndef RT_OCISTATE_H
#define RT_OCISTATE_H

#include <stddef.h>

/* The names a container's runtime wrote: its own ("" when none), the
 * pod's and its namespace's (Kubernetes; "" otherwise). */
struct rt_oci_names {
	char container[128], pod[128], ns[128];
};

/* runtime "podman" or "docker", id the container's full id (hex): 0 with
 * n filled (at least n->container), -1 when nothing names it. Runtime
 * "kubernetes": a pod's container by its CRI runtime's bundle, 0 when
 * it names the container or its pod (a pod's sandbox names only the
 * pod). */
int rt_oci_names(const char *runtime, const char *id, struct rt_oci_names *n);

/* The scans, of len bytes of any text: the CRI names among a document's
 * keys (config.json's annotations, config.v2.json's labels) into n, and
 * docker's "Name" without its '/' (0 when one was found, else -1); the
 * "names" of the containers.json entry whose "id" is id (0, else -1). */
int rt_oci_scan_names(const char *text, size_t len, struct rt_oci_names *n);
int rt_oci_scan_podman(const char *text, size_t len, const char *id, char *out, size_t cap);

#endif
