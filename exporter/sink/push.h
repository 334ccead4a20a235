/*
 * push.h - what the metrics engines' encoders share (push.c: the series,
 * the checkpoint, the retries; push_prom.c: Prometheus remote write;
 * push_otlp.c: OTLP/HTTP JSON).
 */
#ifndef RT_SINK_PUSH_H
#define RT_SINK_PUSH_H

#include <stddef.h>
#include <stdint.h>

#include "net/net.h"
#include "rt/fields.h"
#include "rt/fmt.h"

#define RT_PUSH_MAX_ATTRS 24

struct rt_point {
	double v;
	int64_t ns; /* the sample's wall clock */
	int64_t ms; /* the same in ms, strictly increasing per series */
	int stale;  /* the run's end: Prometheus's staleness marker, OTLP's no
	               recorded value (v is NaN) */
};

struct rt_push_series {
	const struct rt_value_info *v; /* the row (or a device kind's) fleet names */
	unsigned id;                   /* value id; RT_NV for a device's series */
	char dkey[32], dval[96];       /* a device's attribute ("": none) */
	char name[128];                /* the Prometheus name */
	double sum;                    /* a counter: so far */
	double constant;               /* a run value (the allocation): NaN when a row's */
	int64_t last_ms, last_ns;      /* the last line's point (0: none yet) */
	size_t n, cap;                 /* points of the batch */
	struct rt_point *pt;
};

struct rt_push;

/* One request's body and headers. */
struct rt_push_sink {
	const char *name; /* --to */
	const char *what; /* in messages: "remote write", "OTLP" */
	const char *wire; /* the body's encoding, as said: "protobuf, snappy" */
	int zero_start;   /* counters start with a 0 at the run's first record
	                     (remote write: PromQL's increase and rate see the
	                     first interval) */
	int sigv4;        /* signed for Amazon Managed Prometheus when its
	                     region is set (TRACKER_REMOTE_WRITE_SIGV4_REGION) */
	/* The engine's URL from the environment (buf: room for one made from
	 * it), NULL when none; then needs_url is said. */
	const char *(*env_url)(char *buf, size_t cap);
	const char *needs_url;
	/* The request's headers from p->headers[*nh] on (its content type and
	 * encoding, its credentials; auth: room for one): 0, or 2 (said) when
	 * the environment's are unusable. */
	int (*headers)(struct rt_push *p, char *auth, size_t cap, size_t *nh);
	/* The run's resource made ready (OTLP's attributes from OTEL_*): 0, or
	 * 2 (said); NULL: nothing to do. */
	int (*resource)(struct rt_push *p);
	/* The batch's body into out; 0 or -ENOMEM. */
	int (*encode)(const struct rt_push *p, struct rt_buf *out);
	/* Whether an answer is worth another try. */
	int (*retryable)(long status, const char *body);
	/* A 2xx answer's body: what it says (OTLP's partial success). */
	void (*accepted)(struct rt_push *p, const char *body);
};

/* The longest header line ("Name: value") and URL sent; longer ones are
 * refused with one line, never cut. */
#define RT_PUSH_HEADER_MAX 1000
#define RT_PUSH_URL_MAX 2000

struct rt_push {
	const struct rt_push_sink *sink;
	const char *url;
	const char *headers[32];    /* "Name: value", NULL-terminated */
	struct rt_push_series *ser; /* the rows', then devices' (TRACKER_PUSH_PER_DEVICE) */
	unsigned nser, capser;
	int devices;
	uint32_t dev_gen; /* the inventory generation dev_ser maps */
	int *dev_ser;     /* [kind][slot] -> series, -1: not looked up yet */
	/* the run's resource, OpenTelemetry attribute names */
	char akey[RT_PUSH_MAX_ATTRS][64], aval[RT_PUSH_MAX_ATTRS][256];
	unsigned nattr;
	int64_t start_ns; /* the run's first record: counters start there */
	uint64_t next_seq;
	uint64_t batch_last, batch_wall0;
	size_t batch_lines, batch_max;
	uint64_t sent_lines, sent_bytes, requests;
	char ckpt[4200];     /* the checkpoint's path, for messages */
	char ckpt_name[128]; /* its name in the push directory */
	int ckpt_dfd;        /* <store>/push, held open (O_PATH) */
	int failed, said_partial, live, verbose;
	int zero_start; /* counters start with a 0 at the run's first record
	                   (remote write: PromQL's increase and rate see the first
	                   interval) */
	int first_line; /* the line being observed is the run's first */
	uint64_t lines_seen;
	uint64_t seen_seq; /* the last line observed */
	/* stepped (the node's exporter, rt_push_run_step): one try a batch,
	 * nothing said; the answer kept for the caller */
	int once;
	long last_status;                          /* 0: no answer */
	char last_why[201];                        /* the answer, or why there was none */
	char hdr_store[8][RT_PUSH_HEADER_MAX + 1]; /* headers from the environment */
};

extern const struct rt_push_sink rt_push_prometheus, rt_push_otlp;
/* Every sink push --to names, NULL-terminated (sinks.c). */
extern const struct rt_push_sink *const rt_push_sinks[];

/* How far a run is, for a sink that follows it step by step. */
enum rt_sink_end {
	RT_SINK_LIVE,   /* still recorded */
	RT_SINK_ENDED,  /* over: its sinks finish it */
	RT_SINK_HANDED, /* its node stopped, the job lives: the node started next goes on */
};

/* One run's push step by step, for the node's exporter (nodesinks.c):
 * opened (the engine from the environment, to "prometheus" or "otlp",
 * the run's checkpoint locked; NULL with the exit code in *rc, said: 1
 * also when another push of it holds the lock), then each step sends the
 * lines recorded since the last (a request every 10 s of samples, one try
 * each: a failed one waits for a later step); a run that ended ends its
 * series. A step: 0 (more to come), 1 (this run is done here), or an
 * error (RT_E_NET or RT_E_HTTP: rt_push_run_answer says what came back). */
struct rt_push_run;
struct rt_store;
struct rt_push_run *rt_push_run_open(struct rt_store *s, uint64_t run, const char *to, int *rc);
int rt_push_run_step(struct rt_push_run *r, enum rt_sink_end end);
const char *rt_push_run_answer(const struct rt_push_run *r, long *status);
/* The requests the engine took so far (an outage is over at the next). */
uint64_t rt_push_run_oks(const struct rt_push_run *r);
void rt_push_run_close(struct rt_push_run *r);

/* Attribute key of the resource, NULL when absent. */
const char *rt_push_attr(const struct rt_push *p, const char *key);

#endif
