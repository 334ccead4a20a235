/*
 * push_prom.c - a batch as a Prometheus remote write 1.0 request: our
 * remote_write.proto through protoc-c, snappy-compressed.
 */
#include <errno.h>
#include <snappy-c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remote_write.pb-c.h"
#include "sink/push.h"

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
 * them: service.name is job, host.name is instance (and host_name). */
static size_t resource_labels(const struct rt_push *p, char names[][64], const char *values[])
{
	size_t n = 0;
	for (unsigned i = 0; i < p->nattr && n + 2 < MAX_LABELS; i++) {
		if (!strcmp(p->akey[i], "service.name")) {
			snprintf(names[n], 64, "job");
		} else {
			if (!strcmp(p->akey[i], "host.name")) {
				snprintf(names[n], 64, "instance");
				values[n++] = p->aval[i];
			}
			label_name(names[n], 64, p->akey[i]);
		}
		values[n++] = p->aval[i];
	}
	return n;
}

static int encode(const struct rt_push *p, struct rt_buf *out)
{
	static Prometheus__TimeSeries ts[RT_NV];
	static Prometheus__TimeSeries *tsp[RT_NV];
	static Prometheus__Label lab[RT_NV][MAX_LABELS], *labp[RT_NV][MAX_LABELS];
	static char attr[RT_NV][64];
	char rnames[MAX_LABELS][64];
	const char *rvalues[MAX_LABELS];
	size_t nres = resource_labels(p, rnames, rvalues);
	Prometheus__Sample *samples[RT_NV] = {0};
	Prometheus__Sample **sp[RT_NV] = {0};
	size_t nts = 0;
	int rc = 0;
	for (unsigned k = 0; k < p->nser && !rc; k++) {
		const struct rt_push_series *s = &p->ser[k];
		if (!s->n)
			continue;
		const struct rt_value_info *v = rt_value_info(s->id);
		prometheus__time_series__init(&ts[nts]);
		size_t nl = 0;
		prometheus__label__init(&lab[nts][nl]);
		lab[nts][nl].name = "__name__";
		lab[nts][nl++].value = (char *)s->name;
		if (v->fleet_attr) {
			label_name(attr[nts], sizeof(attr[nts]), v->fleet_attr);
			prometheus__label__init(&lab[nts][nl]);
			lab[nts][nl].name = attr[nts];
			lab[nts][nl++].value = (char *)v->fleet_attr_value;
		}
		for (size_t i = 0; i < nres && nl < MAX_LABELS; i++) {
			prometheus__label__init(&lab[nts][nl]);
			lab[nts][nl].name = rnames[i];
			lab[nts][nl++].value = (char *)rvalues[i];
		}
		for (size_t i = 0; i < nl; i++)
			labp[nts][i] = &lab[nts][i];
		qsort(labp[nts], nl, sizeof(labp[nts][0]), cmp_label); /* sorted by name */
		ts[nts].n_labels = nl;
		ts[nts].labels = labp[nts];
		samples[nts] = malloc(s->n * sizeof(Prometheus__Sample));
		sp[nts] = malloc(s->n * sizeof(Prometheus__Sample *));
		if (!samples[nts] || !sp[nts]) {
			rc = -ENOMEM;
			nts++;
			break;
		}
		for (size_t i = 0; i < s->n; i++) {
			prometheus__sample__init(&samples[nts][i]);
			samples[nts][i].value = s->pt[i].v;
			samples[nts][i].timestamp = s->pt[i].ms;
			sp[nts][i] = &samples[nts][i];
		}
		ts[nts].n_samples = s->n;
		ts[nts].samples = sp[nts];
		tsp[nts] = &ts[nts];
		nts++;
	}
	if (!rc) {
		Prometheus__WriteRequest wr;
		prometheus__write_request__init(&wr);
		wr.n_timeseries = nts;
		wr.timeseries = tsp;
		size_t plen = prometheus__write_request__get_packed_size(&wr);
		size_t clen = snappy_max_compressed_length(plen);
		uint8_t *raw = malloc(plen ? plen : 1);
		char *comp = malloc(clen);
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
	}
	for (size_t i = 0; i < nts; i++) {
		free(samples[i]);
		free(sp[i]);
	}
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

const struct rt_push_sink rt_push_prometheus = {"prometheus", encode, retryable, NULL};
