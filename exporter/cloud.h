/*
 * cloud.h - cloud discovery through each vendor's instance metadata
 * service (aws, gcp, azure, hcloud, upcloud, vultr, alicloud, ovh).
 *
 * All probes run in parallel threads and the whole discovery is bounded
 * (2 s by default). It runs in rt-export only, when streaming starts a run
 * or when asked (`rt-export discover`), never in the recorder. The testing
 * aid RT_IMDS_ADDR=host:port sends every probe to one test server.
 */
#ifndef RT_CLOUD_H
#define RT_CLOUD_H

struct rt_cloud {
	char vendor[16]; /* Spare Cores Navigator vendor id, "" when none answered */
	char account[128];
	char region[64];
	char zone[64];
	char instance_type[64];
};

void rt_cloud_discover(struct rt_cloud *out, long timeout_ms);

#endif
