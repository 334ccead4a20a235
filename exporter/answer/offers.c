/*
 * offers.c - the servers that fit a recommendation and what they cost: from
 * Keeper or the cloud's price list, as text and JSON.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "answer/answer.h"
#include "answer/summary_int.h"
#include "rt/common.h"
#include "rt/runmeta.h"
#include "rt/sysroot.h"

/* ---- servers and cost --------------------------------------------------- */
void rt_offer_fetch(struct rt_store *s, const struct rt_answer *a,
                    const struct rt_recommendation *r, unsigned n, struct rt_offer *o)
{
	memset(o, 0, sizeof(*o));
	o->asked = n;
	o->price_here = NAN;
	o->duration = a->st.duration;
	long deadline = rt_keeper_now_ms() + 10000; /* everything Keeper, 10 s */
	/* the Keeper filters on the VRAM of all the GPUs together */
	int rc = rt_keeper_servers(r->cpu, r->memory_mib, r->gpu, r->vram_mib * r->gpu, n, deadline,
	                           &o->servers, &o->nservers, o->why, sizeof(o->why));
	if (rc)
		rt_say("no server list: %s; the recommendation stands on its own", o->why);
	else
		o->ok = 1;
	rt_offer_cloud(s, a, o);
	if (!o->cloud.vendor[0] || !o->cloud.instance_type[0] || rc == RT_E_NET)
		return;
	double price;
	if (rt_keeper_price(o->cloud.vendor, o->cloud.instance_type, o->cloud.region, deadline,
	                    &price, o->price_why, sizeof(o->price_why)) == 0)
		o->price_here = price;
	else
		rt_say("no price for this run's server: %s", o->price_why);
}

void rt_offer_cloud(struct rt_store *s, const struct rt_answer *a, struct rt_offer *o)
{
	/* the instance the run was recorded on: remembered, else found now if
	 * the run was recorded on this machine */
	const char *hid = rt_meta_str(a->meta, "host", "host_id");
	if (!hid || !s)
		return;
	if (rt_cloud_load(rt_store_dir(s), hid, &o->cloud) == 0) {
		o->cloud_known = 1;
		return;
	}
	char here[128];
	rt_host_id(here, sizeof(here));
	if (!strcmp(here, hid)) {
		rt_cloud_discover(&o->cloud, 2000);
		rt_cloud_save(rt_store_dir(s), hid, &o->cloud);
		o->cloud_known = 1;
	}
}

void rt_offer_free(struct rt_offer *o)
{
	free(o->servers);
	memset(o, 0, sizeof(*o));
}

static double cheapest_price(const struct rt_offer *o)
{
	for (size_t i = 0; i < o->nservers; i++)
		if (isfinite(o->servers[i].min_price_ondemand))
			return o->servers[i].min_price_ondemand;
	return NAN;
}

void rt_print_offer(FILE *f, const struct rt_offer *o)
{
	if (!o->asked)
		return;
	if (o->ok && !o->nservers)
		fputs("no server in the Spare Cores catalog fits this recommendation\n", f);
	if (o->ok && o->nservers) {
		fprintf(f, "cheapest servers that fit (Spare Cores Keeper, on-demand):\n");
		fprintf(f, "  %-10s %-24s %6s %10s %5s %11s\n", "VENDOR", "INSTANCE", "VCPUS",
		        "MEMORY", "GPUS", "USD/HOUR");
		for (size_t i = 0; i < o->nservers; i++) {
			const struct rt_server *v = &o->servers[i];
			char mem[32], price[32] = "-";
			rt_fmt_bytes(mem, sizeof(mem),
			             isfinite(v->memory_amount) ? v->memory_amount * 1048576.0 : 0);
			if (isfinite(v->min_price_ondemand))
				snprintf(price, sizeof(price), "%.4f", v->min_price_ondemand);
			fprintf(f, "  %-10s %-24s %6.0f %10s %5.0f %11s\n", v->vendor_id,
			        v->api_reference, isfinite(v->vcpus) ? v->vcpus : 0, mem,
			        isfinite(v->gpu_count) ? v->gpu_count : 0, price);
		}
	}
	if (!isfinite(o->price_here))
		return;
	char dur[32];
	rt_fmt_duration(dur, sizeof(dur), o->duration);
	double here = o->price_here * o->duration / 3600.0;
	fprintf(f, "this run on %s %s%s%s: %.4f USD/hour, %.4f USD for %s", o->cloud.vendor,
	        o->cloud.instance_type, o->cloud.region[0] ? " in " : "", o->cloud.region,
	        o->price_here, here, dur);
	double best = cheapest_price(o);
	if (isfinite(best)) {
		double there = best * o->duration / 3600.0;
		fprintf(f, "; on the cheapest fit %.4f USD, saving %.4f USD (%.0f %%)", there,
		        here - there, here > 0 ? (here - there) / here * 100 : 0);
	}
	fputc('\n', f);
}

/* The rest of Keeper's record (server_id, gpu_memory_total, status, ...),
 * as Keeper gave it: the reference's recommend_server() returns it whole. */
static void add_keeper_fields(cJSON *x, const char *raw)
{
	cJSON *k = raw[0] ? cJSON_Parse(raw) : NULL, *f;
	cJSON_ArrayForEach(f, k)
	{
		if (f->string && !cJSON_HasObjectItem(x, f->string))
			cJSON_AddItemToObject(x, f->string, cJSON_Duplicate(f, 1));
	}
	cJSON_Delete(k);
}

void rt_json_offer(cJSON *obj, const struct rt_offer *o)
{
	if (!o->asked)
		return;
	if (!o->ok) {
		cJSON_AddNullToObject(obj, "servers");
		cJSON_AddStringToObject(obj, "servers_error", o->why);
	} else {
		cJSON *arr = cJSON_AddArrayToObject(obj, "servers");
		for (size_t i = 0; i < o->nservers; i++) {
			const struct rt_server *v = &o->servers[i];
			cJSON *x = cJSON_CreateObject();
			cJSON_AddStringToObject(x, "vendor_id", v->vendor_id);
			cJSON_AddStringToObject(x, "api_reference", v->api_reference);
			ans_add_str_or_null(x, "display_name", v->display_name);
			ans_add_num_or_null(x, "vcpus", v->vcpus);
			ans_add_num_or_null(x, "memory_amount", v->memory_amount);
			ans_add_num_or_null(x, "gpu_count", v->gpu_count);
			ans_add_num_or_null(x, "min_price_ondemand", v->min_price_ondemand);
			add_keeper_fields(x, v->raw);
			cJSON_AddItemToArray(arr, x);
		}
	}
	if (!isfinite(o->price_here)) {
		cJSON_AddNullToObject(obj, "cost");
		return;
	}
	cJSON *c = cJSON_AddObjectToObject(obj, "cost");
	double here = o->price_here * o->duration / 3600.0;
	cJSON_AddStringToObject(c, "vendor_id", o->cloud.vendor);
	ans_add_str_or_null(c, "region_id", o->cloud.region);
	cJSON_AddStringToObject(c, "instance_type", o->cloud.instance_type);
	cJSON_AddNumberToObject(c, "price_per_hour", o->price_here);
	cJSON_AddNumberToObject(c, "run_cost", here);
	double best = cheapest_price(o);
	if (isfinite(best)) {
		cJSON_AddNumberToObject(c, "cheapest_price_per_hour", best);
		cJSON_AddNumberToObject(c, "cheapest_run_cost", best * o->duration / 3600.0);
		cJSON_AddNumberToObject(c, "saving", here - best * o->duration / 3600.0);
	}
}
