/*
 * history.c - the earlier runs of a run's job and stage: a Metaflow step's
 * runs of its flow (job_name the flow, stage_name the step), a CI job's
 * runs, as the store holds them. The report shows them beside the run.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "answer/answer.h"
#include "rt/common.h"

struct hist_ctx {
	const char *job, *stage; /* stage NULL: runs without one */
	uint64_t before;
	uint64_t *ids;
	size_t n, cap;
	int oom;
};

static int same_stage(const char *a, const char *b)
{
	return a && b ? !strcmp(a, b) : !a && !b;
}

static int hist_cb(void *vctx, uint64_t run, const char *meta, size_t len)
{
	struct hist_ctx *c = vctx;
	if (run >= c->before)
		return 0;
	cJSON *m = cJSON_ParseWithLength(meta, len);
	const char *job = rt_meta_str(m, "metadata", "job_name");
	int match = job && !strcmp(job, c->job) &&
	            same_stage(rt_meta_str(m, "metadata", "stage_name"), c->stage);
	cJSON_Delete(m);
	if (!match)
		return 0;
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 16;
		uint64_t *p = realloc(c->ids, cap * sizeof(*p));
		if (!p) {
			c->oom = 1;
			return 1;
		}
		c->ids = p;
		c->cap = cap;
	}
	c->ids[c->n++] = run;
	return 0;
}

int rt_answer_history(struct rt_store *s, const struct rt_answer *a, size_t max,
                      struct rt_answer **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	if (!a->ri.job_name || !max)
		return 0;
	struct hist_ctx c = {a->ri.job_name,
	                     rt_meta_str(a->meta, "metadata", "stage_name"),
	                     a->ri.id,
	                     NULL,
	                     0,
	                     0,
	                     0};
	rt_store_list_runs(s, hist_cb, &c);
	size_t from = c.n > max ? c.n - max : 0, k = 0;
	struct rt_answer *v = c.n > from ? calloc(c.n - from, sizeof(*v)) : NULL;
	for (size_t i = from; v && i < c.n; i++) {
		char spec[32];
		snprintf(spec, sizeof(spec), "%llu", (unsigned long long)c.ids[i]);
		if (rt_answer_run(s, spec, 0, &v[k]) == 0)
			k++;
	}
	free(c.ids);
	if (!k) {
		free(v);
		return c.oom || (c.n > from && !v) ? -ENOMEM : 0;
	}
	*out = v;
	*n = k;
	return 0;
}
