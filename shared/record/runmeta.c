/* runmeta.c - the JSON writer and reader of run metadata (see runmeta.h). */
#include "rt/runmeta.h"

#include "rt/alloc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rt/common.h"

static void key(struct rt_buf *b, const char *k)
{
	rt_buf_putc(b, ',');
	rt_buf_json_str(b, k);
	rt_buf_putc(b, ':');
}

static void str_or_null(struct rt_buf *b, const char *s)
{
	if (s)
		rt_buf_json_str(b, s);
	else
		rt_buf_puts(b, "null");
}

static void time_or_null(struct rt_buf *b, uint64_t ns)
{
	char iso[32];
	if (!ns) {
		rt_buf_puts(b, "null");
		return;
	}
	rt_fmt_iso8601(iso, sizeof(iso), ns);
	rt_buf_json_str(b, iso);
}

static void write_command(struct rt_buf *b, const struct rt_run_meta *m)
{
	key(b, "command");
	if (m->command) {
		rt_buf_putc(b, '[');
		for (int i = 0; i < m->ncommand; i++) {
			if (i)
				rt_buf_putc(b, ',');
			rt_buf_json_str(b, m->command[i]);
		}
		rt_buf_putc(b, ']');
	} else {
		rt_buf_puts(b, "null");
	}
}

/* The metadata object (job name, project, ...; only the keys set). */
static void write_metadata(struct rt_buf *b, const struct rt_run_meta *m)
{
	key(b, "metadata");
	rt_buf_putc(b, '{');
	int first = 1;
	for (int k = 0; k < RT_META_COUNT; k++) {
		if (!m->meta[k])
			continue;
		if (!first)
			rt_buf_putc(b, ',');
		first = 0;
		rt_buf_json_str(b, rt_meta_name((enum rt_meta_key)k));
		rt_buf_putc(b, ':');
		rt_buf_json_str(b, m->meta[k]);
	}
	rt_buf_putc(b, '}');
}

static void write_tags_and_host(struct rt_buf *b, const struct rt_run_meta *m)
{
	key(b, "tags");
	rt_buf_putc(b, '[');
	for (int i = 0; i < m->ntags; i++) {
		if (i)
			rt_buf_putc(b, ',');
		rt_buf_json_str(b, m->tags[i]);
	}
	rt_buf_putc(b, ']');
	key(b, "host");
	rt_buf_puts(b, "{\"hostname\":");
	str_or_null(b, m->hostname);
	rt_buf_puts(b, ",\"vcpus\":");
	rt_buf_u64(b, m->vcpus);
	rt_buf_puts(b, ",\"cpu_model\":");
	str_or_null(b, m->cpu_model);
	rt_buf_puts(b, ",\"memory_mib\":");
	rt_buf_u64(b, m->memory_mib);
	rt_buf_puts(b, ",\"host_id\":");
	str_or_null(b, m->host_id);
	rt_buf_puts(b, ",\"ip\":");
	str_or_null(b, m->ip);
	rt_buf_puts(b, ",\"storage_gb\":");
	rt_buf_f64_json(b, m->storage_gb);
	rt_buf_puts(b, ",\"gpu_model\":");
	str_or_null(b, m->gpu_model);
	rt_buf_puts(b, ",\"gpu_count\":");
	rt_buf_u64(b, m->gpu_count);
	rt_buf_puts(b, ",\"gpu_memory_mib\":");
	rt_buf_u64(b, m->gpu_memory_mib);
	rt_buf_putc(b, '}');
}

/* The last sample, and what was not stored, waited or skipped. */
static void write_counts(struct rt_buf *b, const struct rt_run_meta *m)
{
	key(b, "last_seq");
	if (m->has_last_seq)
		rt_buf_u64(b, m->last_seq);
	else
		rt_buf_puts(b, "null");
	if (m->samples_not_stored) {
		key(b, "samples_not_stored");
		rt_buf_u64(b, m->samples_not_stored);
	}
	if (m->samples_waited) {
		key(b, "samples_waited");
		rt_buf_u64(b, m->samples_waited);
	}
	if (m->samples_skipped) {
		key(b, "samples_skipped");
		rt_buf_u64(b, m->samples_skipped);
	}
}

/* What the job was given (alloc.h). */
/* "budget": {"cpu": cores|null, "memory_bytes": bytes|null}: what the job
 * may use before the tracker exits 3 (only when one was set: older readers
 * never meet it) */
static void write_budget(struct rt_buf *b, const struct rt_run_meta *m)
{
	key(b, "budget");
	rt_buf_puts(b, "{\"cpu\":");
	if (m->has_budget_cpu)
		rt_buf_f64_json(b, m->budget_cpu);
	else
		rt_buf_puts(b, "null");
	rt_buf_puts(b, ",\"memory_bytes\":");
	if (m->has_budget_mem)
		rt_buf_u64(b, m->budget_mem);
	else
		rt_buf_puts(b, "null");
	rt_buf_putc(b, '}');
}

static void write_allocation(struct rt_buf *b, const struct rt_alloc *a)
{
	key(b, "allocation");
	rt_buf_puts(b, "{\"cpu\":");
	rt_buf_f64_json(b, a->cpu);
	rt_buf_puts(b, ",\"cpu_from\":");
	rt_buf_json_str(b, a->cpu_from);
	rt_buf_puts(b, ",\"memory_bytes\":");
	rt_buf_u64(b, a->mem);
	rt_buf_puts(b, ",\"memory_from\":");
	rt_buf_json_str(b, a->mem_from);
	rt_buf_puts(b, ",\"gpu\":");
	rt_buf_u64(b, a->gpu);
	rt_buf_puts(b, ",\"gpu_from\":");
	rt_buf_json_str(b, a->gpu_from);
	rt_buf_puts(b, ",\"cpus_allowed\":");
	rt_buf_u64(b, a->cpus_allowed);
	rt_buf_puts(b, ",\"cgroup_cpu\":");
	if (a->cgroup_cpu > 0)
		rt_buf_f64_json(b, a->cgroup_cpu);
	else
		rt_buf_puts(b, "null");
	static const char *const lim[] = {"cgroup_memory_bytes", "cgroup_memory_high_bytes",
	                                  "pids_max"};
	const int64_t lv[] = {a->cgroup_mem, a->cgroup_mem_high, a->pids_max};
	for (int i = 0; i < 3; i++) {
		rt_buf_printf(b, ",\"%s\":", lim[i]);
		if (lv[i] >= 0)
			rt_buf_i64(b, lv[i]);
		else
			rt_buf_puts(b, "null");
	}
	rt_buf_puts(b, ",\"slurm_job_id\":");
	str_or_null(b, a->slurm_job_id[0] ? a->slurm_job_id : NULL);
	rt_buf_puts(b, ",\"note\":");
	str_or_null(b, a->note[0] ? a->note : NULL);
	if (a->claim_cpu > 0 || a->claim_mem || a->claim_gpu >= 0) {
		/* only when the job claimed something: other runs' unchanged */
		rt_buf_puts(b, ",\"claims\":{\"from\":\"environment\",\"cpu\":");
		if (a->claim_cpu > 0)
			rt_buf_f64_json(b, a->claim_cpu);
		else
			rt_buf_puts(b, "null");
		rt_buf_puts(b, ",\"memory_bytes\":");
		if (a->claim_mem)
			rt_buf_u64(b, a->claim_mem);
		else
			rt_buf_puts(b, "null");
		rt_buf_puts(b, ",\"gpu\":");
		if (a->claim_gpu >= 0)
			rt_buf_i64(b, a->claim_gpu);
		else
			rt_buf_puts(b, "null");
		rt_buf_putc(b, '}');
	}
	rt_buf_putc(b, '}');
}

/* The end's figures of a job's group: its memory, its parts. */
static void write_cgroup_end(struct rt_buf *b, const struct rt_run_cgroup *g)
{
	if (g->array_job_id && g->array_task_id) {
		key(b, "array_job_id");
		str_or_null(b, g->array_job_id);
		key(b, "array_task_id");
		str_or_null(b, g->array_task_id);
	}
	if (!g->ended || !g->mem_known)
		return; /* (older runs' metadata unchanged) */
	key(b, "oom_kills");
	rt_buf_u64(b, g->oom_kills);
	key(b, "mem_peak_bytes");
	rt_buf_u64(b, g->mem_peak);
	key(b, "mem_limit_bytes");
	if (g->mem_limit >= 0)
		rt_buf_i64(b, g->mem_limit);
	else
		rt_buf_puts(b, "null");
	key(b, "limit_hits");
	rt_buf_u64(b, g->limit_hits);
	key(b, "parts");
	rt_buf_putc(b, '[');
	for (unsigned i = 0; i < g->nparts; i++) {
		const struct rt_run_part *p = &g->parts[i];
		rt_buf_puts(b, i ? ",{\"name\":" : "{\"name\":");
		str_or_null(b, p->name);
		if (p->container) {
			key(b, "container");
			str_or_null(b, p->container);
		}
		key(b, "cpu_secs");
		if (p->cpu_secs >= 0)
			rt_buf_f64_json(b, p->cpu_secs);
		else
			rt_buf_puts(b, "null");
		key(b, "mem_peak_bytes");
		rt_buf_u64(b, p->mem_peak);
		key(b, "mem_limit_bytes");
		if (p->mem_limit >= 0)
			rt_buf_i64(b, p->mem_limit);
		else
			rt_buf_puts(b, "null");
		key(b, "oom_kills");
		rt_buf_u64(b, p->oom_kills);
		rt_buf_putc(b, '}');
	}
	rt_buf_putc(b, ']');
}

/* "cgroup": the job's group and who it is in its scheduler's terms. */
static void write_cgroup(struct rt_buf *b, const struct rt_run_cgroup *g)
{
	key(b, "cgroup");
	rt_buf_puts(b, "{\"path\":");
	str_or_null(b, g->path);
	key(b, "scheduler");
	str_or_null(b, g->scheduler);
	key(b, "job_id");
	str_or_null(b, g->job_id);
	key(b, "user");
	str_or_null(b, g->user);
	key(b, "name");
	str_or_null(b, g->name);
	key(b, "qos");
	str_or_null(b, g->qos);
	if (g->pod || g->ns) { /* (a container's, named by its runtime: others' unchanged) */
		key(b, "pod");
		str_or_null(b, g->pod);
		key(b, "namespace");
		str_or_null(b, g->ns);
	}
	key(b, "idle");
	rt_buf_puts(b, g->idle ? "true" : "false");
	key(b, "cpu_before_secs");
	if (g->cpu_before >= 0)
		rt_buf_f64_json(b, g->cpu_before);
	else
		rt_buf_puts(b, "null");
	if (g->bounds) { /* only when one was met: older runs' metadata unchanged */
		static const char *const what[] = {"depth", "groups", "members", "environment"};
		key(b, "bounds_hit");
		for (unsigned i = 0, first = 1; i < 4; i++)
			if (g->bounds & (1u << i)) {
				rt_buf_puts(b, first ? "[\"" : ",\"");
				rt_buf_puts(b, what[i]);
				rt_buf_putc(b, '"');
				first = 0;
			}
		rt_buf_putc(b, ']');
	}
	write_cgroup_end(b, g);
	rt_buf_putc(b, '}');
}

/* "resume": a node job's run, to be gone on with (runmeta.h). */
static void write_resume(struct rt_buf *b, const struct rt_run_resume *r)
{
	key(b, "resume");
	rt_buf_puts(b, "{\"group_ino\":");
	rt_buf_u64(b, r->group_ino);
	if (r->cg_cpu) {
		key(b, "cpu_offset_user_us");
		rt_buf_i64(b, r->off_user_us);
		key(b, "cpu_offset_sys_us");
		rt_buf_i64(b, r->off_sys_us);
	}
	key(b, "cpu_before_us");
	rt_buf_u64(b, r->before_us);
	key(b, "samples_skipped");
	rt_buf_u64(b, r->skipped);
	key(b, "oom_below");
	rt_buf_u64(b, r->oom_below);
	if (r->handover) {
		key(b, "handover");
		rt_buf_puts(b, "1");
	}
	rt_buf_putc(b, '}');
}

void rt_runmeta_write(struct rt_buf *b, const struct rt_run_meta *m)
{
	rt_buf_puts(b, "{\"run_id\":");
	rt_buf_u64(b, m->run_id);
	key(b, "status");
	str_or_null(b, m->status);
	key(b, "start");
	time_or_null(b, m->start_ns);
	key(b, "end");
	time_or_null(b, m->end_ns);
	key(b, "start_ns");
	rt_buf_u64(b, m->start_ns);
	key(b, "end_ns");
	if (m->end_ns)
		rt_buf_u64(b, m->end_ns);
	else
		rt_buf_puts(b, "null");
	key(b, "interval_secs");
	rt_buf_f64_json(b, m->interval_secs);
	key(b, "recorder_pid");
	rt_buf_i64(b, m->recorder_pid);
	write_command(b, m);
	key(b, "tracked_pid");
	if (m->tracked_pid > 0)
		rt_buf_i64(b, m->tracked_pid);
	else
		rt_buf_puts(b, "null");
	key(b, "exit_code");
	if (m->has_exit_code)
		rt_buf_i64(b, m->exit_code);
	else
		rt_buf_puts(b, "null");
	if (m->peak_before_kb) { /* only when set: other runs' metadata unchanged */
		key(b, "peak_before_tracking_mib");
		rt_buf_f64_json(b, (double)m->peak_before_kb / 1024.0);
	}
	if (m->store_note) { /* only when set: older readers never meet it */
		key(b, "store_note");
		rt_buf_json_str(b, m->store_note);
	}
	write_metadata(b, m);
	write_tags_and_host(b, m);
	write_counts(b, m);
	if (m->alloc)
		write_allocation(b, m->alloc);
	if (m->has_budget_cpu || m->has_budget_mem)
		write_budget(b, m);
	if (m->cgroup && m->cgroup->path)
		write_cgroup(b, m->cgroup);
	if (m->resume)
		write_resume(b, m->resume);
	key(b, "version");
	rt_buf_json_str(b, RT_VERSION);
	rt_buf_putc(b, '}');
}

/* ---- reader: a bounded scanner, enough for the fields we act on ---- */

#define MAX_DEPTH 32

struct scan {
	const char *p, *end, *base;
};

static void ws(struct scan *s)
{
	while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
		s->p++;
}

static int hex4(const char *p, const char *end, unsigned *out)
{
	if (end - p < 4)
		return -1;
	unsigned v = 0;
	for (int i = 0; i < 4; i++) {
		int h = rt_hexval((unsigned char)p[i]);
		if (h < 0)
			return -1;
		v = v << 4 | (unsigned)h;
	}
	*out = v;
	return 0;
}

/* Where a string's unescaped bytes go: dst (cap, may be NULL) gets whole
 * characters while they fit; n counts them all. */
struct sink {
	char *dst;
	size_t cap, w, n;
	int full;
};

static void put(struct sink *o, const unsigned char *u, size_t k)
{
	if (o->dst && !o->full && o->w + k < o->cap) {
		memcpy(o->dst + o->w, u, k);
		o->w += k;
	} else {
		o->full = 1;
	}
	o->n += k;
}

static void put_utf8(struct sink *o, unsigned cp)
{
	unsigned char u[4];
	put(o, u, rt_utf8_encode(cp, u));
}

/* A string at s->p ('"'); its unescaped bytes go to dst (cap, may be NULL),
 * cut at a character boundary when they do not fit. Returns the unescaped
 * length or -1. */
static long string(struct scan *s, char *dst, size_t cap)
{
	struct sink o = {.dst = dst, .cap = cap};
	if (s->p >= s->end || *s->p != '"')
		return -1;
	s->p++;
	while (s->p < s->end) {
		unsigned char c = (unsigned char)*s->p++;
		if (c == '"') {
			if (dst && cap)
				dst[o.full ? rt_utf8_cut(dst, o.w) : o.w] = '\0';
			return (long)o.n;
		}
		if (c < 0x20)
			return -1;
		if (c != '\\') {
			put(&o, &c, 1);
			continue;
		}
		if (s->p >= s->end)
			return -1;
		char e = *s->p++;
		unsigned cp;
		switch (e) {
		case '"':
		case '\\':
		case '/': cp = (unsigned char)e; break;
		case 'b': cp = '\b'; break;
		case 'f': cp = '\f'; break;
		case 'n': cp = '\n'; break;
		case 'r': cp = '\r'; break;
		case 't': cp = '\t'; break;
		case 'u':
			if (hex4(s->p, s->end, &cp))
				return -1;
			s->p += 4;
			if (cp >= 0xd800 && cp < 0xdc00) { /* a surrogate pair, or U+FFFD */
				unsigned lo;
				if (s->end - s->p >= 6 && s->p[0] == '\\' && s->p[1] == 'u' &&
				    hex4(s->p + 2, s->end, &lo) == 0 && lo >= 0xdc00 &&
				    lo < 0xe000) {
					cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
					s->p += 6;
				} else {
					cp = 0xfffd;
				}
			} else if (cp >= 0xdc00 && cp < 0xe000) {
				cp = 0xfffd;
			}
			break;
		default: return -1;
		}
		put_utf8(&o, cp);
	}
	return -1;
}

/* A number token: its text (bounded copy) in buf. */
static int number(struct scan *s, char *buf, size_t cap)
{
	const char *q = s->p;
	while (s->p < s->end && strchr("+-0123456789.eE", *s->p) && *s->p)
		s->p++;
	size_t n = (size_t)(s->p - q);
	if (n == 0 || n >= cap)
		return -1;
	memcpy(buf, q, n);
	buf[n] = '\0';
	return 0;
}

static int literal(struct scan *s, const char *word)
{
	size_t n = strlen(word);
	if ((size_t)(s->end - s->p) < n || memcmp(s->p, word, n))
		return -1;
	s->p += n;
	return 0;
}

static int skip_value(struct scan *s, int depth);

static int skip_container(struct scan *s, int depth, char close)
{
	if (depth > MAX_DEPTH)
		return -1;
	s->p++;
	ws(s);
	if (s->p < s->end && *s->p == close) {
		s->p++;
		return 0;
	}
	for (;;) {
		ws(s);
		if (close == '}') {
			if (string(s, NULL, 0) < 0)
				return -1;
			ws(s);
			if (s->p >= s->end || *s->p++ != ':')
				return -1;
		}
		if (skip_value(s, depth + 1))
			return -1;
		ws(s);
		if (s->p >= s->end)
			return -1;
		char c = *s->p++;
		if (c == close)
			return 0;
		if (c != ',')
			return -1;
	}
}

static int skip_value(struct scan *s, int depth)
{
	char num[64];
	ws(s);
	if (s->p >= s->end)
		return -1;
	switch (*s->p) {
	case '{': return skip_container(s, depth, '}');
	case '[': return skip_container(s, depth, ']');
	case '"': return string(s, NULL, 0) < 0 ? -1 : 0;
	case 't': return literal(s, "true");
	case 'f': return literal(s, "false");
	case 'n': return literal(s, "null");
	default: return number(s, num, sizeof(num));
	}
}

/* An unsigned integer value exactly (ns counters exceed a double). */
static int parse_u64_text(const char *t, uint64_t *out)
{
	if (*t < '0' || *t > '9')
		return -1;
	uint64_t v = 0;
	for (; *t >= '0' && *t <= '9'; t++) {
		if (v > (UINT64_MAX - (uint64_t)(*t - '0')) / 10)
			return -1;
		v = v * 10 + (uint64_t)(*t - '0');
	}
	if (*t)
		return -1;
	*out = v;
	return 0;
}

static int parse_i64_text(const char *t, int64_t *out)
{
	uint64_t v;
	int neg = *t == '-';
	if (parse_u64_text(t + neg, &v) || v > (uint64_t)INT64_MAX)
		return -1;
	*out = neg ? -(int64_t)v : (int64_t)v;
	return 0;
}

/* A key of an object whose string value is wanted, into buf. */
struct flat_want {
	const char *key;
	char *buf;
	size_t cap;
};

/* The object at s->p skipped; a second pass takes the string values of
 * the wanted keys at its top level (*got: 1 when the first was found).
 * -1 when the object itself is malformed; a value that is not a string,
 * or a malformed member, ends the pass quietly. */
static int flat_strings(struct scan *s, const struct flat_want *w, size_t nw, int *got)
{
	struct scan m = *s;
	if (skip_value(s, 1))
		return -1;
	m.p++;
	for (;;) {
		ws(&m);
		char key[32];
		if (m.p >= m.end || *m.p == '}' || string(&m, key, sizeof(key)) < 0)
			return 0;
		ws(&m);
		if (m.p >= m.end || *m.p++ != ':')
			return 0;
		ws(&m);
		size_t i = 0;
		while (i < nw && strcmp(key, w[i].key))
			i++;
		if (i < nw && m.p < m.end && *m.p == '"') {
			if (string(&m, w[i].buf, w[i].cap) < 0)
				return 0;
			*got |= i == 0;
		} else if (skip_value(&m, 2)) {
			return 0;
		}
		ws(&m);
		if (m.p >= m.end || *m.p++ != ',')
			return 0;
	}
}

/* "resume": its integers (runmeta.h); a member that is not one ends the
 * read quietly, as flat_strings does. -1 when the object is malformed. */
static int read_resume(struct scan *s, struct rt_run_fields *f)
{
	struct scan m = *s;
	if (skip_value(s, 1))
		return -1;
	struct rt_run_resume *r = &f->resume;
	int offs = 0;
	for (m.p++;;) {
		char key[32], num[64];
		uint64_t u;
		int64_t i;
		ws(&m);
		if (m.p >= m.end || *m.p == '}' || string(&m, key, sizeof(key)) < 0)
			break;
		ws(&m);
		if (m.p >= m.end || *m.p++ != ':')
			break;
		ws(&m);
		size_t at = (size_t)(m.p - m.base);
		if (m.p >= m.end || number(&m, num, sizeof(num)))
			break;
		if (!strcmp(key, "group_ino") && parse_u64_text(num, &u) == 0 && u)
			r->group_ino = u, f->has_resume = 1;
		else if (!strcmp(key, "cpu_offset_user_us") && parse_i64_text(num, &i) == 0)
			r->off_user_us = i, offs |= 1;
		else if (!strcmp(key, "cpu_offset_sys_us") && parse_i64_text(num, &i) == 0)
			r->off_sys_us = i, offs |= 2;
		else if (!strcmp(key, "cpu_before_us") && parse_u64_text(num, &u) == 0)
			r->before_us = u;
		else if (!strcmp(key, "samples_skipped") && parse_u64_text(num, &u) == 0)
			r->skipped = u;
		else if (!strcmp(key, "oom_below") && parse_u64_text(num, &u) == 0)
			r->oom_below = u;
		else if (!strcmp(key, "handover") && parse_u64_text(num, &u) == 0)
			r->handover = u == 1, f->handover_at = !strcmp(num, "1") ? at : 0;
		ws(&m);
		if (m.p >= m.end || *m.p++ != ',')
			break;
	}
	r->cg_cpu = offs == 3;
	return 0;
}

/* Top-level key k with its value at s->p: record what we know. */
static int field(struct scan *s, const char *k, struct rt_run_fields *f)
{
	char num[64];
	ws(s);
	if (s->p >= s->end)
		return -1;
	const char *at = s->p;
	if (!strcmp(k, "status") && *at == '"') {
		char st[64];
		long n = string(s, st, sizeof(st));
		if (n < 0)
			return -1;
		f->status_at = (size_t)(at - s->base);
		f->status_end = (size_t)(s->p - s->base);
		if (n < (long)sizeof(f->status))
			memcpy(f->status, st, (size_t)n + 1);
		return 0;
	}
	if (!strcmp(k, "metadata") && *at == '{') {
		const struct flat_want w[] = {{"job_name", f->job_name, sizeof(f->job_name)}};
		if (flat_strings(s, w, 1, &f->has_job_name))
			return -1;
		return 0;
	}
	if (!strcmp(k, "cgroup") && *at == '{') {
		int got = 0;
		const struct flat_want w[] = {
		    {"scheduler", f->cg_scheduler, sizeof(f->cg_scheduler)},
		    {"job_id", f->cg_job_id, sizeof(f->cg_job_id)},
		    {"user", f->cg_user, sizeof(f->cg_user)},
		    {"array_job_id", f->cg_array_job, sizeof(f->cg_array_job)},
		    {"path", f->cg_path, sizeof(f->cg_path)},
		    {"pod", f->cg_pod, sizeof(f->cg_pod)},
		    {"namespace", f->cg_ns, sizeof(f->cg_ns)}};
		return flat_strings(s, w, 7, &got);
	}
	if (!strcmp(k, "resume") && *at == '{')
		return read_resume(s, f);
	if (*at != '-' && (*at < '0' || *at > '9'))
		return skip_value(s, 1);
	if (number(s, num, sizeof(num)))
		return -1;
	uint64_t u;
	int64_t i;
	if (!strcmp(k, "start_ns") && parse_u64_text(num, &u) == 0)
		f->start_ns = u;
	else if (!strcmp(k, "end_ns") && parse_u64_text(num, &u) == 0)
		f->end_ns = u;
	else if (!strcmp(k, "last_seq") && parse_u64_text(num, &u) == 0)
		f->has_last_seq = 1, f->last_seq = u;
	else if (!strcmp(k, "samples_not_stored") && parse_u64_text(num, &u) == 0)
		f->samples_not_stored = u;
	else if (!strcmp(k, "recorder_pid") && parse_i64_text(num, &i) == 0)
		f->recorder_pid = i;
	else if (!strcmp(k, "tracked_pid") && parse_i64_text(num, &i) == 0 && i > 0)
		f->tracked_pid = i;
	else if (!strcmp(k, "exit_code") && parse_i64_text(num, &i) == 0 && i >= INT32_MIN &&
	         i <= INT32_MAX)
		f->has_exit_code = 1, f->exit_code = (int)i;
	else if (!strcmp(k, "interval_secs")) {
		char *end;
		double d = strtod(num, &end);
		if (!*end && d >= 0.001 && d < 1e9)
			f->interval_secs = d;
	}
	return 0;
}

int rt_runmeta_read(const char *json, size_t len, struct rt_run_fields *f)
{
	memset(f, 0, sizeof(*f));
	f->interval_secs = 1.0;
	struct scan s = {json, json + len, json};
	ws(&s);
	if (s.p >= s.end || *s.p != '{')
		return RT_E_SYNTAX;
	s.p++;
	ws(&s);
	if (s.p < s.end && *s.p == '}')
		return 0;
	for (;;) {
		char k[32];
		ws(&s);
		if (string(&s, k, sizeof(k)) < 0)
			return RT_E_SYNTAX;
		ws(&s);
		if (s.p >= s.end || *s.p++ != ':')
			return RT_E_SYNTAX;
		if (field(&s, k, f))
			return RT_E_SYNTAX;
		ws(&s);
		if (s.p >= s.end)
			return RT_E_SYNTAX;
		char c = *s.p++;
		if (c == '}')
			return 0;
		if (c != ',')
			return RT_E_SYNTAX;
	}
}

int rt_runmeta_set_status(const char *json, size_t len, const char *status, struct rt_buf *out)
{
	struct rt_run_fields f;
	if (rt_runmeta_read(json, len, &f))
		return RT_E_SYNTAX;
	if (!f.status_at)
		return RT_E_NOTFOUND;
	rt_buf_reset(out);
	rt_buf_put(out, json, f.status_at);
	rt_buf_json_str(out, status);
	rt_buf_put(out, json + f.status_end, len - f.status_end);
	return out->oom ? -ENOMEM : 0;
}

int rt_runmeta_clear_handover(const char *json, size_t len, struct rt_buf *out)
{
	struct rt_run_fields f;
	if (rt_runmeta_read(json, len, &f))
		return RT_E_SYNTAX;
	if (!f.handover_at || f.handover_at >= len)
		return RT_E_NOTFOUND;
	rt_buf_reset(out);
	rt_buf_put(out, json, len);
	if (!out->oom)
		out->p[f.handover_at] = '0'; /* (the same length: "handover":0) */
	return out->oom ? -ENOMEM : 0;
}

static const char *const status_names[] = {
    [RT_RUN_UNKNOWN] = "unknown",     [RT_RUN_RUNNING] = "running", [RT_RUN_FINISHED] = "finished",
    [RT_RUN_FAILED] = "failed",       [RT_RUN_KILLED] = "killed",   [RT_RUN_CRASHED] = "crashed",
    [RT_RUN_UNTRACKED] = "untracked",
};

const char *rt_run_status_name(enum rt_run_status st)
{
	return (unsigned)st < sizeof(status_names) / sizeof(status_names[0]) ? status_names[st]
	                                                                     : "unknown";
}

enum rt_run_status rt_run_status_of(const char *name)
{
	for (unsigned i = RT_RUN_RUNNING;
	     name && i < sizeof(status_names) / sizeof(status_names[0]); i++)
		if (!strcmp(name, status_names[i]))
			return (enum rt_run_status)i;
	return RT_RUN_UNKNOWN;
}
