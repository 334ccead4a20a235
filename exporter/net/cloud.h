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

#include <stddef.h>

struct rt_cloud {
	char vendor[16]; /* Spare Cores Navigator vendor id, "" when none answered */
	char account[128];
	char region[64];
	char zone[64];
	char instance_type[64];
};

void rt_cloud_discover(struct rt_cloud *out, long timeout_ms);

/*
 * The vendors' answers, parsed apart from the requests: whatever listens on
 * the link-local address may answer anything. rt_cloud_take reads len bytes
 * (no NUL needed), fills what it finds into c (values are cut at the first
 * control byte and at their field's size), and returns 1 when the answer
 * has the vendor's shape (a non-empty value for the plain-text ones).
 */
enum rt_cloud_answer {
	RT_CLOUD_REGION,      /* plain text (AWS, Alibaba Cloud) */
	RT_CLOUD_ZONE,        /* plain text */
	RT_CLOUD_TYPE,        /* plain text (AWS, Alibaba Cloud, OVH) */
	RT_CLOUD_ACCOUNT,     /* plain text (Alibaba Cloud, GCP's project id) */
	RT_CLOUD_AWS_ACCOUNT, /* JSON of identity-credentials/ec2/info */
	RT_CLOUD_GCP_ZONE,    /* projects/N/zones/us-central1-a */
	RT_CLOUD_GCP_TYPE,    /* projects/N/machineTypes/e2-small */
	RT_CLOUD_AZURE,       /* JSON of /metadata/instance */
	RT_CLOUD_HCLOUD,      /* Hetzner's "key: value" lines */
	RT_CLOUD_UPCLOUD,     /* JSON of /metadata/v1.json */
	RT_CLOUD_VULTR,       /* JSON of /v1.json */
	RT_CLOUD_OVH,         /* OpenStack's meta_data.json */
	RT_CLOUD_ANSWERS
};
int rt_cloud_take(enum rt_cloud_answer what, const char *body, size_t len, struct rt_cloud *c);

/*
 * What discovery found, kept as <store>/cloud.json with the id of the host
 * it belongs to (rt_host_id), so that summary, recommend and report can
 * price a run recorded here without probing again (vendor "" remembers
 * that no cloud answered). Save replaces the file atomically; load returns
 * 0 only for the same host_id.
 */
int rt_cloud_save(const char *store_dir, const char *host_id, const struct rt_cloud *c);
int rt_cloud_load(const char *store_dir, const char *host_id, struct rt_cloud *c);
/* The same from the file's text (hostile bytes). */
int rt_cloud_parse(const char *text, size_t len, const char *host_id, struct rt_cloud *c);

#endif
