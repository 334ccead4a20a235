/* The cloud vendors' metadata answers, parsed apart from the requests
 * (exporter/cloud.c, rt_cloud_take). */
#include <criterion/criterion.h>
#include <string.h>

#include "net/cloud.h"

static int take(enum rt_cloud_answer what, const char *body, struct rt_cloud *c)
{
	return rt_cloud_take(what, body, strlen(body), c);
}

Test(cloud, plain_text_values_stop_at_a_control_byte)
{
	struct rt_cloud c = {0};
	cr_assert_eq(take(RT_CLOUD_REGION, "eu-west-1\r\nX-Evil: 1", &c), 1);
	cr_assert_str_eq(c.region, "eu-west-1");
	cr_assert_eq(take(RT_CLOUD_TYPE, "m5.large\x1b[31m", &c), 1);
	cr_assert_str_eq(c.instance_type, "m5.large");
	cr_assert_eq(take(RT_CLOUD_ZONE, "", &c), 0, "an empty answer is no vendor");
	cr_assert_eq(take(RT_CLOUD_ACCOUNT, "\n5678", &c), 0);
}

Test(cloud, values_are_cut_to_their_field)
{
	struct rt_cloud c = {0};
	char long_region[300];
	memset(long_region, 'r', sizeof(long_region) - 1);
	long_region[sizeof(long_region) - 1] = '\0';
	cr_assert_eq(take(RT_CLOUD_REGION, long_region, &c), 1);
	cr_assert_eq(strlen(c.region), sizeof(c.region) - 1);
}

Test(cloud, no_nul_needed)
{
	struct rt_cloud c = {0};
	const char body[] = {'e', 'u', '-', '1', 'X'}; /* only 4 bytes are the answer */
	cr_assert_eq(rt_cloud_take(RT_CLOUD_REGION, body, 4, &c), 1);
	cr_assert_str_eq(c.region, "eu-1");
}

Test(cloud, gcp_paths)
{
	struct rt_cloud c = {0};
	cr_assert_eq(take(RT_CLOUD_GCP_ZONE, "projects/987/zones/us-central1-a", &c), 1);
	cr_assert_str_eq(c.zone, "us-central1-a");
	cr_assert_str_eq(c.region, "us-central1");
	cr_assert_eq(take(RT_CLOUD_GCP_TYPE, "projects/987/machineTypes/e2-small\n", &c), 1);
	cr_assert_str_eq(c.instance_type, "e2-small");
	struct rt_cloud d = {0};
	cr_assert_eq(take(RT_CLOUD_GCP_ZONE, "projects/987/regions/x", &d), 0, "not a zone");
	cr_assert_eq(take(RT_CLOUD_GCP_ZONE, "zones/", &d), 0, "a zone without a name");
}

Test(cloud, json_answers_need_their_shape)
{
	struct rt_cloud c = {0};
	cr_assert_eq(take(RT_CLOUD_AZURE,
	                  "{\"compute\":{\"location\":\"westeurope\","
	                  "\"vmSize\":\"D2\",\"zone\":\"2\"}}",
	                  &c),
	             1);
	cr_assert_str_eq(c.region, "westeurope");
	cr_assert_str_eq(c.instance_type, "D2");
	struct rt_cloud d = {0};
	cr_assert_eq(take(RT_CLOUD_AZURE, "{\"compute\":\"x\"}", &d), 0);
	cr_assert_eq(take(RT_CLOUD_UPCLOUD, "{\"cloud_name\":\"other\",\"region\":\"x\"}", &d), 0);
	cr_assert_eq(take(RT_CLOUD_VULTR, "{\"region\":{\"regioncode\":\"EWR\"}}", &d), 0,
	             "no instance-v2-id");
	cr_assert_eq(take(RT_CLOUD_OVH, "[1,2]", &d), 0);
	cr_assert_eq(take(RT_CLOUD_AWS_ACCOUNT, "{\"AccountId\":\"12\\n34\"}", &d), 1);
	cr_assert_str_eq(d.account, "12", "an escaped newline ends the value");
	cr_assert_eq(take(RT_CLOUD_OVH, "{\"uuid\":\"u\",\"availability_zone\":\"gra11\"}", &d), 1);
	cr_assert_str_eq(d.region, "gra11", "OVH's region falls back to its zone");
}

Test(cloud, hetzner_lines)
{
	struct rt_cloud c = {0};
	cr_assert_eq(
	    take(RT_CLOUD_HCLOUD,
	         "availability-zone: fsn1-dc14\ninstance-id: 42\nregion: \"eu-central\" \n", &c),
	    1);
	cr_assert_str_eq(c.zone, "fsn1-dc14");
	cr_assert_str_eq(c.region, "eu-central");
	struct rt_cloud d = {0};
	cr_assert_eq(take(RT_CLOUD_HCLOUD, "region: eu-central\n", &d), 0, "no instance-id");
	cr_assert_eq(take(RT_CLOUD_HCLOUD, "instance-id: 1\nregion:", &d), 1);
	cr_assert_str_eq(d.region, "", "a key with no value");
}
