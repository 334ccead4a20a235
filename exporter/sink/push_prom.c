/*
 * push_prom.c - a batch as a Prometheus remote write 1.0 request: our
 * remote_write.proto through protoc-c, snappy-compressed.
 */
#include <errno.h>
#include <snappy-c.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remote_write.pb-c.h"
#include "sink/push.h"
#include "sink/push_int.h"

#define MAX_LABELS (RT_PUSH_MAX_ATTRS + 4)

/* A label name from an OpenTelemetry attribute (host.name -> host_name). */
static void label_name(char *out, size_t cap, const char *attr)
{
	size_t n = 0;
	for (; *attr && n + 1 < cap; attr++)
		out[n++] = (*attr >= 'a' && *attr <= 'z') || (*attr >= 'A' && *attr <= 'Z') ||
		                   (*attr >= '0' && *attr <= '9')
		               ? *attr
		               : '_';
	out[n] = '\0';
}

static int cmp_label(const void *a, const void *b)
{
	const Prometheus__Label *x = *(Prometheus__Label *const *)a;
	const Prometheus__Label *y = *(Prometheus__Label *const *)b;
	return strcmp(x->name, y->name);
}

/* The resource as labels, as OpenTelemetry's Prometheus translation names
 * them: service.name is job, service.instance.id is instance. */
static size_t resource_labels(const struct rt_push *p, char names[][64], const char *values[])
{
	size_t n = 0;
	for (unsigned i = 0; i < p->nattr && n + 1 < MAX_LABELS; i++) {
		if (!strcmp(p->akey[i], "service.name"))
			snprintf(names[n], 64, "job");
		else if (!strcmp(p->akey[i], "service.instance.id"))
			snprintf(names[n], 64, "instance");
		else
			label_name(names[n], 64, p->akey[i]);
		values[n++] = p->aval[i];
	}
	return n;
}

/* One series' labels, sorted by name: __name__, the row's attribute, the
 * device's, the resource's. */
struct labels {
	Prometheus__Label l[MAX_LABELS + 2], *lp[MAX_LABELS + 2];
	char attr[64], dev[64];
};

/* A series' labels, sorted by name: __name__, the row's attribute, the
 * device, the run's resource. Their count. */
static size_t series_labels(struct labels *L, const struct rt_push_series *s,
                            const struct rt_value_info *v, char rnames[][64],
                            const char *const *rvalues, size_t nres)
{
	size_t nl = 0;
	prometheus__label__init(&L->l[nl]);
	L->l[nl].name = "__name__";
	L->l[nl++].value = (char *)s->name;
	if (v->fleet_attr) {
		label_name(L->attr, sizeof(L->attr), v->fleet_attr);
		prometheus__label__init(&L->l[nl]);
		L->l[nl].name = L->attr;
		L->l[nl++].value = (char *)v->fleet_attr_value;
	}
	if (s->dkey[0]) {
		label_name(L->dev, sizeof(L->dev), s->dkey);
		prometheus__label__init(&L->l[nl]);
		L->l[nl].name = L->dev;
		L->l[nl++].value = (char *)s->dval;
	}
	for (size_t i = 0; i < nres && nl < MAX_LABELS + 2; i++) {
		prometheus__label__init(&L->l[nl]);
		L->l[nl].name = rnames[i];
		L->l[nl++].value = (char *)rvalues[i];
	}
	for (size_t i = 0; i < nl; i++)
		L->lp[i] = &L->l[i];
	qsort(L->lp, nl, sizeof(L->lp[0]), cmp_label); /* sorted by name */
	return nl;
}

/* A series' points as samples (a stale point: Prometheus's marker). */
static void series_samples(const struct rt_push_series *s, Prometheus__Sample *samples,
                           Prometheus__Sample **sp)
{
	for (size_t i = 0; i < s->n; i++) {
		prometheus__sample__init(&samples[i]);
		/* Prometheus's staleness marker: a NaN with these bits */
		union {
			uint64_t u;
			double d;
		} stale = {0x7ff0000000000002ull};
		samples[i].value = s->pt[i].stale ? stale.d : s->pt[i].v;
		samples[i].timestamp = s->pt[i].ms;
		sp[i] = &samples[i];
	}
}

/* The write request of nts series, packed and snappy-compressed onto out. */
static int pack_request(Prometheus__TimeSeries **tsp, size_t nts, struct rt_buf *out)
{
	Prometheus__WriteRequest wr;
	prometheus__write_request__init(&wr);
	wr.n_timeseries = nts;
	wr.timeseries = tsp;
	size_t plen = prometheus__write_request__get_packed_size(&wr);
	size_t clen = snappy_max_compressed_length(plen);
	uint8_t *raw = malloc(plen ? plen : 1);
	char *comp = malloc(clen);
	int rc = 0;
	if (!raw || !comp) {
		rc = -ENOMEM;
	} else {
		prometheus__write_request__pack(&wr, raw);
		if (snappy_compress((const char *)raw, plen, comp, &clen) != SNAPPY_OK)
			rc = -EIO;
		else
			rt_buf_put(out, comp, clen);
	}
	free(raw);
	free(comp);
	return rc;
}

static int encode(const struct rt_push *p, struct rt_buf *out)
{
	char rnames[MAX_LABELS][64];
	const char *rvalues[MAX_LABELS];
	size_t nres = resource_labels(p, rnames, rvalues);
	size_t m = p->nser ? p->nser : 1;
	Prometheus__TimeSeries *ts = calloc(m, sizeof(*ts));
	Prometheus__TimeSeries **tsp = calloc(m, sizeof(*tsp));
	struct labels *lab = calloc(m, sizeof(*lab));
	Prometheus__Sample **samples = calloc(m, sizeof(*samples));
	Prometheus__Sample ***sp = calloc(m, sizeof(*sp));
	size_t nts = 0;
	int rc = ts && tsp && lab && samples && sp ? 0 : -ENOMEM;
	for (unsigned k = 0; k < p->nser && !rc; k++) {
		const struct rt_push_series *s = &p->ser[k];
		if (!s->n)
			continue;
		const struct rt_value_info *v = s->v;
		struct labels *L = &lab[nts];
		prometheus__time_series__init(&ts[nts]);
		size_t nl = series_labels(L, s, v, rnames, rvalues, nres);
		ts[nts].n_labels = nl;
		ts[nts].labels = L->lp;
		samples[nts] = malloc(s->n * sizeof(Prometheus__Sample));
		sp[nts] = malloc(s->n * sizeof(Prometheus__Sample *));
		tsp[nts] = &ts[nts];
		if (!samples[nts] || !sp[nts]) {
			rc = -ENOMEM;
			nts++;
			break;
		}
		series_samples(s, samples[nts], sp[nts]);
		ts[nts].n_samples = s->n;
		ts[nts].samples = sp[nts];
		nts++;
	}
	if (!rc)
		rc = pack_request(tsp, nts, out);
	for (size_t i = 0; i < nts && samples && sp; i++) {
		free(samples[i]);
		free(sp[i]);
	}
	free(ts);
	free(tsp);
	free(lab);
	free(samples);
	free(sp);
	return rc;
}

/* 429 and 5xx; but Prometheus before 2.45 answers 500 for samples older
 * than it takes ("too old sample", "out of bounds"): no retry helps those */
static int retryable(long st, const char *body)
{
	if (strstr(body, "too old") || strstr(body, "out of bounds"))
		return 0;
	return st == 429 || st >= 500;
}

const struct rt_push_sink rt_push_prometheus = {
    .name = "prometheus",
    .what = "remote write",
    .wire = "protobuf, snappy",
    .zero_start = 1,
    .sigv4 = 1,
    .env_url = push_prom_env_url,
    .needs_url = "push --to prometheus needs --url URL or TRACKER_REMOTE_WRITE_URL (e.g. "
                 "http://HOST:9090/api/v1/write)",
    .headers = push_prom_headers,
    .encode = encode,
    .retryable = retryable,
};
