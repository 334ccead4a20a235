/*
 * push_int.h - what push.c (rt-export push: the series, the batches, the
 * checkpoint), push_http.c (the endpoint, its headers and credentials, the
 * sinks' table) and the sinks (push_prom.c, push_otlp.c: each one's
 * entry in it) share. Internal to exporter/sink/.
 */
#ifndef RT_PUSH_INT_H
#define RT_PUSH_INT_H

#include "export.h"
#include "sink/push.h"

/* push.c: set a resource attribute (a later set replaces it) */
void push_set_attr(struct rt_push *p, const char *key, const char *value, size_t vlen);
/* push_http.c: a value with a control character; the OTLP resource as
 * headers go; the sink a name means; its URL; the request's headers */
int push_has_control(const char *v, size_t n);
int push_otlp_resource(struct rt_push *p);
/* ... each sink's URL rule and headers (the sinks' table) */
const char *push_prom_env_url(char *buf, size_t cap);
const char *push_otlp_env_url(char *buf, size_t cap);
int push_prom_headers(struct rt_push *p, char *auth, size_t cap, size_t *nh);
int push_otlp_headers(struct rt_push *p, char *auth, size_t cap, size_t *nh);
/* sinks.c: the sink a name means (NULL: said) */
const struct rt_push_sink *push_sink_named(const char *to);
const char *push_url(const struct rt_push_sink *sink, const char *url, char *buf, size_t cap);
int push_headers(struct rt_push *p, char *auth, size_t cap);

#endif
