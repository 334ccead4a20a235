/*
 * push_otlp.c - a batch as an OTLP/HTTP metrics request in the JSON
 * encoding (ExportMetricsServiceRequest), gzip-compressed. The JSON
 * mapping's rules: lowerCamelCase keys, 64-bit integers as strings, enums
 * as numbers; counters are cumulative monotonic sums starting at the run's
 * first record, levels are gauges. Points of one metric name (the rows that
 * differ only in their attribute) are one metric.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "rt/common.h"
#include "sink/batch.h"
#include "sink/push.h"
#include "sink/push_int.h"

static void str(struct rt_buf *b, const char *s)
{
	rt_buf_json_str(b, s);
}

static void kv_string(struct rt_buf *b, const char *k, const char *v)
{
	rt_buf_puts(b, "{\"key\":");
	str(b, k);
	rt_buf_puts(b, ",\"value\":{\"stringValue\":");
	str(b, v);
	rt_buf_puts(b, "}}");
}

/* ,"key":"ns" (a 64-bit integer as a string, as the JSON mapping wants) */
static void nanos(struct rt_buf *b, const char *key, int64_t ns)
{
	rt_buf_puts(b, ",\"");
	rt_buf_puts(b, key);
	rt_buf_puts(b, "\":\"");
	rt_buf_i64(b, ns);
	rt_buf_putc(b, '"');
}

static int encode(const struct rt_push *p, struct rt_buf *out)
{
	struct rt_buf j = {0};
	rt_buf_puts(&j, "{\"resourceMetrics\":[{\"resource\":{\"attributes\":[");
	for (unsigned i = 0; i < p->nattr; i++) {
		if (i)
			rt_buf_putc(&j, ',');
		kv_string(&j, p->akey[i], p->aval[i]);
	}
	rt_buf_puts(&j, "]},\"scopeMetrics\":[{\"scope\":{\"name\":\"rt\",\"version\":\"" RT_VERSION
	                "\"},\"metrics\":[");
	int first_metric = 1;
	for (unsigned k = 0; k < p->nser; k++) {
		const struct rt_value_info *v = p->ser[k].v;
		int seen = 0, any = 0; /* one metric per name: the first row with it writes it */
		for (unsigned q = 0; q < k && !seen; q++)
			seen = !strcmp(p->ser[q].v->fleet, v->fleet);
		for (unsigned q = k; q < p->nser && !any; q++)
			any = p->ser[q].n && !strcmp(p->ser[q].v->fleet, v->fleet);
		if (seen || !any)
			continue;
		if (!first_metric)
			rt_buf_putc(&j, ',');
		first_metric = 0;
		rt_buf_puts(&j, "{\"name\":");
		str(&j, v->fleet);
		rt_buf_puts(&j, ",\"unit\":");
		str(&j, v->fleet_unit);
		rt_buf_puts(&j, v->fleet_sum ? ",\"sum\":{" : ",\"gauge\":{");
		rt_buf_puts(&j, "\"dataPoints\":[");
		int first_point = 1;
		for (unsigned q = k; q < p->nser; q++) {
			const struct rt_push_series *s = &p->ser[q];
			const struct rt_value_info *w = s->v;
			if (strcmp(w->fleet, v->fleet))
				continue;
			for (size_t i = 0; i < s->n; i++) {
				if (!first_point)
					rt_buf_putc(&j, ',');
				first_point = 0;
				rt_buf_puts(&j, "{\"attributes\":[");
				if (w->fleet_attr)
					kv_string(&j, w->fleet_attr, w->fleet_attr_value);
				if (s->dkey[0]) {
					if (w->fleet_attr)
						rt_buf_putc(&j, ',');
					kv_string(&j, s->dkey, s->dval);
				}
				rt_buf_putc(&j, ']');
				if (v->fleet_sum)
					nanos(&j, "startTimeUnixNano", p->start_ns);
				nanos(&j, "timeUnixNano", s->pt[i].ns);
				if (s->pt[i].stale) { /* DATA_POINT_FLAGS_NO_RECORDED_VALUE */
					rt_buf_puts(&j, ",\"flags\":1}");
					continue;
				}
				rt_buf_puts(&j, ",\"asDouble\":");
				rt_buf_f64_json(&j, s->pt[i].v);
				rt_buf_putc(&j, '}');
			}
		}
		rt_buf_putc(&j, ']');
		if (v->fleet_sum) /* AGGREGATION_TEMPORALITY_CUMULATIVE */
			rt_buf_puts(&j, ",\"aggregationTemporality\":2,\"isMonotonic\":true");
		rt_buf_puts(&j, "}}");
	}
	rt_buf_puts(&j, "]}]}]}");
	int rc = j.oom ? -ENOMEM : rt_gzip(j.p, j.len, out);
	rt_buf_free(&j);
	return rc;
}

/* The OTLP specification's retryable answers. */
static int retryable(long st, const char *body)
{
	(void)body;
	return st == 429 || st == 502 || st == 503 || st == 504;
}

/* A 2xx may still say that some points were rejected (partial success):
 * they never will be taken, so it is said once per run and the push goes
 * on. */
static void accepted(struct rt_push *p, const char *body)
{
	cJSON *r = cJSON_Parse(body);
	const cJSON *ps = cJSON_GetObjectItemCaseSensitive(r, "partialSuccess");
	const cJSON *n = cJSON_GetObjectItemCaseSensitive(ps, "rejectedDataPoints");
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(ps, "errorMessage");
	double rejected = cJSON_IsNumber(n)                     ? n->valuedouble
	                  : cJSON_IsString(n) && n->valuestring ? strtod(n->valuestring, NULL)
	                                                        : 0;
	if ((rejected > 0 || (cJSON_IsString(m) && *m->valuestring)) && !p->said_partial) {
		p->said_partial = 1;
		rt_say("the OTLP endpoint took samples %llu..%llu but rejected %.0f data points "
		       "(%.200s); "
		       "they are not sent again",
		       (unsigned long long)p->next_seq, (unsigned long long)p->batch_last, rejected,
		       cJSON_IsString(m) ? m->valuestring : "no reason given");
	}
	cJSON_Delete(r);
}

const struct rt_push_sink rt_push_otlp = {
    .name = "otlp",
    .what = "OTLP",
    .wire = "JSON, gzip",
    .env_url = push_otlp_env_url,
    .needs_url = "push --to otlp needs --url URL, OTEL_EXPORTER_OTLP_METRICS_ENDPOINT or "
                 "OTEL_EXPORTER_OTLP_ENDPOINT (e.g. http://HOST:4318)",
    .headers = push_otlp_headers,
    .resource = push_otlp_resource,
    .encode = encode,
    .retryable = retryable,
    .accepted = accepted,
};
