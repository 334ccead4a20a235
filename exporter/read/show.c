/*
 * show.c - the `show` verb: one run's metadata as JSON, with its status,
 * exact start and end, sample count and store. In rt-export-full (cJSON).
 */
#define _GNU_SOURCE
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>

#include "export.h"
#include "rt/common.h"

int rt_cmd_show(struct rt_store *s, const char *spec)
{
	struct rt_runinfo ri;
	int rc = rt_run_resolve(s, spec, &ri);
	if (rc)
		return rc;
	cJSON *o = cJSON_Parse(ri.meta_json);
	if (!o) {
		rt_say("run %llu has corrupt metadata; raw text: %.200s", (unsigned long long)ri.id,
		       ri.meta_json);
		rt_run_free(&ri);
		return RT_E_CORRUPT;
	}
	uint64_t first, last;
	cJSON_DeleteItemFromObjectCaseSensitive(o, "status");
	cJSON_AddStringToObject(o, "status", ri.status);
	/* ns since the epoch need 61 bits: printed exactly, not as doubles */
	char ns[24];
	cJSON_DeleteItemFromObjectCaseSensitive(o, "start_ns");
	cJSON_DeleteItemFromObjectCaseSensitive(o, "end_ns");
	snprintf(ns, sizeof(ns), "%llu", (unsigned long long)ri.start_ns);
	cJSON_AddRawToObject(o, "start_ns", ri.start_ns ? ns : "null");
	snprintf(ns, sizeof(ns), "%llu", (unsigned long long)ri.end_ns);
	cJSON_AddRawToObject(o, "end_ns", ri.end_ns ? ns : "null");
	if (rt_run_bounds(s, ri.id, &first, &last) == 0) {
		char t[32];
		cJSON_AddNumberToObject(o, "samples", (double)(last - first));
		rt_fmt_iso8601(t, sizeof(t), rt_run_sample_wall(s, ri.id, first));
		cJSON_AddStringToObject(o, "first_sample", t);
		rt_fmt_iso8601(t, sizeof(t), rt_run_sample_wall(s, ri.id, last));
		cJSON_AddStringToObject(o, "last_sample", t);
	} else {
		cJSON_AddNumberToObject(o, "samples", 0);
	}
	cJSON_AddStringToObject(o, "store", rt_store_dir(s));
	char *txt = cJSON_Print(o);
	if (txt)
		printf("%s\n", txt);
	free(txt);
	cJSON_Delete(o);
	rt_run_free(&ri);
	return 0;
}
