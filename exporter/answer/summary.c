/*
 * summary.c - what a run needed: the `summary` and `recommend` verbs, the
 * server list and the run's cost (answer.h).
 *
 * A run's lines come from a replay without text (an observer on the
 * emitter), so they are the very numbers `replay -f csv` prints, before
 * rounding. The human summary is a short table a person reads in five
 * seconds; --json has the same numbers for programs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "answer/answer.h"
#include "rt/common.h"
#include "rt/runmeta.h"
#include "rt/sysroot.h"

/* ---- computing ----------------------------------------------------------- */

static void answer_finish(struct rt_answer *a)
{
	rt_stats_compute(&a->series, &a->st);
	a->meta = a->ri.meta_json ? cJSON_Parse(a->ri.meta_json) : NULL;
	a->has_exit_code = a->ri.has_exit_code;
	a->exit_code = a->ri.exit_code;
	enum rt_run_status st = rt_run_status_of(a->ri.status);
	a->partial = st != RT_RUN_FINISHED && st != RT_RUN_FAILED && st != RT_RUN_KILLED;
}

/* The lines of a resolved run into ser. */
static int run_series(struct rt_store *s, const struct rt_runinfo *ri, struct rt_series *ser)
{
	struct rt_emitter e;
	if (rt_emitter_init(&e, s, ri, RT_FMT_CSV, NULL))
		return -ENOMEM;
	e.observe = rt_series_observe;
	e.observe_ctx = ser;
	uint64_t first, last;
	if (rt_store_seq_bounds(s, ri->id, &first, &last) == 0 && last > first)
		rt_series_reserve(ser, (size_t)(last - first));
	struct rt_replay_opts o = {0, 0, 1};
	int rc = rt_replay(&e, &o);
	rt_say_read_notes(&e.notes, ri->id, e.lines);
	rt_emitter_free(&e);
	return rc;
}

static int compute(struct rt_store *s, struct rt_answer *a, int keep_series)
{
	int rc = run_series(s, &a->ri, &a->series);
	if (rc)
		return rc;
	answer_finish(a);
	if (!keep_series)
		rt_series_free(&a->series);
	return 0;
}

const char *rt_run_allocation(struct rt_store *s, const struct rt_runinfo *ri)
{
	struct rt_series ser = {0};
	struct rt_runstats st;
	int rc = run_series(s, ri, &ser);
	rt_stats_compute(&ser, &st);
	rt_series_free(&ser);
	return rc ? NULL : rt_allocation_name(rt_stats_allocation(&st));
}

int rt_answer_run(struct rt_store *s, const char *spec, int keep_series, struct rt_answer *a)
{
	memset(a, 0, sizeof(*a));
	if (rt_run_resolve(s, spec, &a->ri))
		return 1;
	int rc = compute(s, a, keep_series);
	if (rc) {
		rt_say("run %llu cannot be read: %s", (unsigned long long)a->ri.id,
		       rt_strerror(rc));
		rt_answer_free(a);
		return 1;
	}
	return 0;
}

int rt_answer_from_series(const char *meta_json, size_t len, struct rt_series *ser,
                          struct rt_answer *a)
{
	memset(a, 0, sizeof(*a));
	if (rt_runinfo_from_meta(meta_json, len, &a->ri))
		return RT_E_CORRUPT;
	a->series = *ser;
	memset(ser, 0, sizeof(*ser));
	answer_finish(a);
	double id = rt_meta_num(a->meta, NULL, "run_id");
	if (id > 0)
		a->ri.id = (uint64_t)id;
	return 0;
}

void rt_answer_free(struct rt_answer *a)
{
	rt_run_free(&a->ri);
	cJSON_Delete(a->meta);
	rt_series_free(&a->series);
	memset(a, 0, sizeof(*a));
}

struct job_ctx {
	const char *job;
	uint64_t *ids;
	size_t n, cap;
};

static int job_cb(void *vctx, uint64_t run, const char *meta, size_t len)
{
	struct job_ctx *c = vctx;
	struct rt_run_fields f;
	if (rt_runmeta_read(meta, len, &f) || !f.has_job_name || strcmp(f.job_name, c->job))
		return 0;
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 16;
		uint64_t *p = realloc(c->ids, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		c->ids = p;
		c->cap = cap;
	}
	c->ids[c->n++] = run;
	return 0;
}

int rt_answer_job(struct rt_store *s, const char *job, unsigned long last, struct rt_answer **out,
                  size_t *n)
{
	struct job_ctx c = {job, NULL, 0, 0};
	*out = NULL;
	*n = 0;
	int rc = rt_store_list_runs(s, job_cb, &c);
	if (rc) {
		rt_say("cannot list the runs in %s: %s", rt_store_dir(s), rt_strerror(rc));
		free(c.ids);
		return 1;
	}
	if (!c.n) {
		rt_say("no stored run of job '%s' in %s (see rt-export runs)", job,
		       rt_store_dir(s));
		free(c.ids);
		return 1;
	}
	size_t from = last && last < c.n ? c.n - last : 0;
	struct rt_answer *v = calloc(c.n - from, sizeof(*v));
	if (!v) {
		free(c.ids);
		rt_say("out of memory");
		return 1;
	}
	size_t k = 0;
	for (size_t i = from; i < c.n; i++) {
		struct rt_answer *a = &v[k];
		memset(a, 0, sizeof(*a));
		if (rt_run_load(s, c.ids[i], &a->ri))
			continue; /* deleted by the size cap meanwhile */
		rc = compute(s, a, 0);
		if (rc) {
			if (rc != RT_E_LAYOUT)
				rt_say("run %llu cannot be read (%s); left out",
				       (unsigned long long)c.ids[i], rt_strerror(rc));
			rt_answer_free(a);
			continue;
		}
		k++;
	}
	free(c.ids);
	if (!k) {
		free(v);
		rt_say("no readable run of job '%s' in %s (see rt-export runs)", job,
		       rt_store_dir(s));
		return 1;
	}
	*out = v;
	*n = k;
	return 0;
}

/* ---- formatting helpers ------------------------------------------------- */

void rt_fmt_duration(char *buf, size_t cap, double secs)
{
	if (!(secs >= 0))
		secs = 0;
	if (secs < 60) {
		snprintf(buf, cap, "%.*f s", secs < 10 ? 2 : 1, secs);
		return;
	}
	unsigned long t = (unsigned long)(secs + 0.5);
	if (t >= 86400)
		snprintf(buf, cap, "%lud %02luh %02lum", t / 86400, t / 3600 % 24, t / 60 % 60);
	else if (t >= 3600)
		snprintf(buf, cap, "%luh %02lum %02lus", t / 3600, t / 60 % 60, t % 60);
	else
		snprintf(buf, cap, "%lum %02lus", t / 60, t % 60);
}

void rt_fmt_bytes(char *buf, size_t cap, double b)
{
	static const char *units[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
	if (!(b >= 0))
		b = 0;
	if (b < 1024) {
		snprintf(buf, cap, "%.0f B", b);
		return;
	}
	int u = -1;
	while (b >= 1024 && u < 4) {
		b /= 1024;
		u++;
	}
	snprintf(buf, cap, "%.*f %s", b < 10 ? 2 : b < 100 ? 1 : 0, b, units[u]);
}

const char *rt_meta_str(const cJSON *meta, const char *section, const char *key)
{
	const cJSON *o = section ? cJSON_GetObjectItemCaseSensitive(meta, section) : meta;
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

double rt_meta_num(const cJSON *meta, const char *section, const char *key)
{
	const cJSON *o = section ? cJSON_GetObjectItemCaseSensitive(meta, section) : meta;
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static const struct rt_colstat *col(const struct rt_runstats *st, unsigned name)
{
	int c = rt_stats_col(name);
	return c >= 0 && st->col[c].present ? &st->col[c] : NULL;
}

static double sum_of(const struct rt_runstats *st, unsigned name)
{
	const struct rt_colstat *c = col(st, name);
	return c ? c->sum : 0;
}

/* s with control characters (newlines, tabs, terminal escapes: names and
 * commands are the user's bytes) as single spaces, into buf[cap]. */
static void clean(char *buf, size_t cap, const char *s)
{
	size_t n = 0;
	for (; s && *s && n + 1 < cap; s++) {
		unsigned char c = (unsigned char)*s;
		int ctl = c < 0x20 || c == 0x7f;
		if (ctl && (n == 0 || buf[n - 1] == ' '))
			continue;
		buf[n++] = ctl ? ' ' : (char)c;
	}
	buf[s && *s ? rt_utf8_cut(buf, n) : n] = '\0'; /* cut: on a character's boundary */
}

void rt_shell_join(struct rt_buf *b, const cJSON *argv)
{
	const cJSON *w;
	cJSON_ArrayForEach(w, argv)
	{
		if (!cJSON_IsString(w))
			continue;
		if (b->len)
			rt_buf_putc(b, ' ');
		const char *s = w->valuestring;
		size_t plain = strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
		                         "0123456789_./:=@%+,-");
		int ctl = 0;
		for (const char *p = s; *p; p++)
			ctl |= (unsigned char)*p < 0x20 || *p == 0x7f;
		if (*s && !s[plain]) {
			rt_buf_puts(b, s);
		} else if (!ctl) { /* '...' with each ' as '\'' */
			rt_buf_putc(b, '\'');
			for (const char *p = s; *p; p++)
				rt_buf_puts(b, *p == '\'' ? "'\\''" : (char[2]){*p, 0});
			rt_buf_putc(b, '\'');
		} else { /* $'...': newlines and tabs stay what they were */
			rt_buf_puts(b, "$'");
			for (const char *p = s; *p; p++) {
				unsigned char c = (unsigned char)*p;
				if (c == '\n')
					rt_buf_puts(b, "\\n");
				else if (c == '\t')
					rt_buf_puts(b, "\\t");
				else if (c < 0x20 || c == 0x7f)
					rt_buf_printf(b, "\\x%02x", c);
				else if (c == '\'' || c == '\\')
					rt_buf_printf(b, "\\%c", c);
				else
					rt_buf_putc(b, (char)c);
			}
			rt_buf_putc(b, '\'');
		}
	}
}

/* The command as one line, shell-quoted (paste it back), at most cap bytes. */
/* Whether argument a is the script of a shell's -c (sh -c '...'). */
static int shell_script(const cJSON *cmd, const cJSON *a)
{
	const cJSON *sh = cJSON_GetArrayItem(cmd, 0), *prev = a->prev;
	if (!cJSON_IsString(sh) || a == cmd->child || !prev || !cJSON_IsString(prev) ||
	    strcmp(prev->valuestring, "-c"))
		return 0;
	const char *base = strrchr(sh->valuestring, '/');
	base = base ? base + 1 : sh->valuestring;
	return !strcmp(base, "sh") || !strcmp(base, "bash") || !strcmp(base, "dash") ||
	       !strcmp(base, "zsh") || !strcmp(base, "ksh");
}

/* The command as a person reads it in one line (the demo's script was
 * shown as $'\n\t...'): a shell's -c script with each line break as "; "
 * where it ended a command, else a space, and runs of blanks as one space;
 * every other argument exactly as it was (the line reads back into the
 * same words but for such a script's layout). */
static cJSON *one_line_args(const cJSON *cmd)
{
	cJSON *out = cJSON_CreateArray(), *a;
	cJSON_ArrayForEach(a, cmd)
	{
		const char *v = cJSON_IsString(a) ? a->valuestring : "";
		if (!shell_script(cmd, a)) {
			cJSON_AddItemToArray(out, cJSON_CreateString(v));
			continue;
		}
		size_t n = strlen(v), k = 0;
		char *t = malloc(n + 1);
		if (!t)
			break;
		char *t2 = t ? realloc(t, 2 * n + 1) : NULL;
		if (!t2) {
			free(t);
			break;
		}
		t = t2;
		for (size_t i = 0; i < n; i++) {
			int ws = v[i] == '\n' || v[i] == '\t' || v[i] == '\r' || v[i] == ' ';
			while (k && ws && t[k - 1] == ' ')
				k--; /* blanks before a break go */
			char last = k ? t[k - 1] : 0;
			if (!ws)
				t[k++] = v[i];
			else if (v[i] == '\n' && last && !strchr("&|;{(", last))
				t[k++] = ';', t[k++] = ' ';
			else if (last)
				t[k++] = ' ';
		}
		while (k && (t[k - 1] == ' ' || t[k - 1] == ';'))
			k--;
		t[k] = '\0';
		cJSON_AddItemToArray(out, cJSON_CreateString(t));
		free(t);
	}
	return out;
}

static void command_line(const cJSON *meta, char *buf, size_t cap)
{
	struct rt_buf b = {0};
	cJSON *cmd = cJSON_GetObjectItemCaseSensitive(meta, "command");
	cJSON *shown = cJSON_IsArray(cmd) ? one_line_args(cmd) : NULL;
	rt_shell_join(&b, shown ? shown : cmd);
	cJSON_Delete(shown);
	rt_buf_put(&b, "", 0);
	clean(buf, cap, b.p ? b.p : "");
	if (b.len > cap && cap > 4)
		strcpy(buf + rt_utf8_cut(buf, cap - 4), "...");
	rt_buf_free(&b);
}

/* ---- the human summary ------------------------------------------------- */

static void add_num_or_null(cJSON *o, const char *k, double v);
static void add_str_or_null(cJSON *o, const char *k, const char *v);

/* The summary's rows, one table for text, JSON and the report. */
enum { W_ALL, W_JOB, W_GPU, W_JOB_GPU };
enum { N_NONE, N_CPU_JOB, N_CPU_HOST, N_RSS, N_MEM_TOTAL, N_VRAM_TOTAL, N_SPACE };
static const struct {
	const char *label;
	unsigned id, id2; /* id2: a total row's second counter (0: a stats row) */
	int prec;
	uint8_t when, note;
	const char *an, *bn; /* a total row's words for id and id2 */
} summary_rows[] = {
    {"CPU cores, job", RT_V_PROC_CORES, 0, 2, W_JOB, N_CPU_JOB, NULL, NULL},
    {"CPU cores, host", RT_V_CPU_UTIL, 0, 2, W_ALL, N_CPU_HOST, NULL, NULL},
    {"memory MiB, job (PSS)", RT_V_PROC_PSS, 0, 0, W_JOB, N_RSS, NULL, NULL},
    {"memory MiB, host used", RT_V_MEM_USED, 0, 0, W_ALL, N_MEM_TOTAL, NULL, NULL},
    {"GPUs busy, job", RT_V_PROC_GPU_USAGE, 0, 2, W_JOB_GPU, N_NONE, NULL, NULL},
    {"VRAM MiB, job", RT_V_PROC_GPU_VRAM, 0, 0, W_JOB_GPU, N_NONE, NULL, NULL},
    {"GPUs busy, host", RT_V_GPU_USAGE, 0, 2, W_GPU, N_NONE, NULL, NULL},
    {"VRAM MiB, host", RT_V_GPU_VRAM, 0, 0, W_GPU, N_VRAM_TOTAL, NULL, NULL},
    {"disk space in use GB", RT_V_SPACE_DF_USED, 0, 1, W_ALL, N_SPACE, NULL, NULL},
    {"disk I/O, job", RT_V_PROC_READ, RT_V_PROC_WRITE, 0, W_JOB, N_NONE, "read", "written"},
    {"disk I/O, host", RT_V_DISK_READ, RT_V_DISK_WRITE, 0, W_ALL, N_NONE, "read", "written"},
    {"network, host", RT_V_NET_RX, RT_V_NET_TX, 0, W_ALL, N_NONE, "received", "sent"},
};

static int has_gpu(const struct rt_runstats *st, const cJSON *meta)
{
	double n = rt_meta_num(meta, "host", "gpu_count");
	const struct rt_colstat *c = col(st, RT_V_GPU_UTILIZED);
	return (n > 0) || (c && c->max > 0);
}

/* "CPU time T s (user U, system S)" from the sums of two columns. */
static void cpu_time(char *buf, size_t cap, const struct rt_runstats *st, unsigned ucol,
                     unsigned scol)
{
	double u = sum_of(st, ucol), s = sum_of(st, scol);
	snprintf(buf, cap, "CPU time %.2f s (user %.2f, system %.2f)", u + s, u, s);
}

/* A job found by its cgroup after it started (the node mode finds a
 * group within a quarter second): the CPU its group's counter had at the
 * first sample, which no interval holds, said beside the sum. */
static void cpu_before(char *buf, size_t cap, const struct rt_runstats *st, const cJSON *meta)
{
	double before = rt_meta_num(meta, "cgroup", "cpu_before_secs");
	double in = sum_of(st, RT_V_PROC_UTIME) + sum_of(st, RT_V_PROC_STIME);
	size_t n = strlen(buf);
	if (before >= 0.005 && n < cap)
		snprintf(buf + n, cap - n,
		         "; %.2f s more in its cgroup before the first sample: %.2f s in all",
		         before, before + in);
}

/* "of N MiB" from host metadata, "" when unknown. */
static void of_total(char *buf, size_t cap, const cJSON *meta, const char *key)
{
	double total = rt_meta_num(meta, "host", key);
	buf[0] = '\0';
	if (total > 0)
		snprintf(buf, cap, "of %.0f MiB", total);
}

size_t rt_summary_rows(const struct rt_runstats *st, const cJSON *meta, struct rt_summary_row *out,
                       size_t max)
{
	size_t n = 0;
	int gpu = has_gpu(st, meta);
	for (size_t i = 0; i < RT_ARRAY_LEN(summary_rows) && n < max; i++) {
		const __typeof__(summary_rows[0]) *d = &summary_rows[i];
		int job = d->when == W_JOB || d->when == W_JOB_GPU;
		if ((job && !st->has_proc) || (d->when >= W_GPU && !gpu))
			continue;
		struct rt_summary_row *r = &out[n];
		memset(r, 0, sizeof(*r));
		r->label = d->label;
		r->prec = d->prec;
		if (d->id2) { /* a total: present when its first counter is */
			const struct rt_colstat *ca = col(st, d->id), *cb = col(st, d->id2);
			if (!ca)
				continue;
			char x[32], y[32], rx[32], ry[32];
			double dur = rt_stats_secs(st, d->id), a = ca->sum;
			dur = dur > 0 ? dur : 1;
			double b = cb ? cb->sum : 0;
			rt_fmt_bytes(x, sizeof(x), a);
			rt_fmt_bytes(y, sizeof(y), b);
			rt_fmt_bytes(rx, sizeof(rx), a / dur);
			rt_fmt_bytes(ry, sizeof(ry), b / dur);
			/* what stays on the host (lo) is no network a server needs */
			snprintf(r->note, sizeof(r->note), "%s %s, %s %s (%s/s, %s/s on average)%s",
			         d->an, x, d->bn, y, rx, ry,
			         d->id == RT_V_NET_RX ? "; loopback left out" : "");
			n++;
			continue;
		}
		if (!(r->c = col(st, d->id)))
			continue;
		switch (d->note) {
		case N_CPU_JOB:
			cpu_time(r->note, sizeof(r->note), st, RT_V_PROC_UTIME, RT_V_PROC_STIME);
			cpu_before(r->note, sizeof(r->note), st, meta);
			break;
		case N_CPU_HOST:
			cpu_time(r->note, sizeof(r->note), st, RT_V_UTIME, RT_V_STIME);
			break;
		case N_RSS:
			if (st->rss_max_mib >= 0)
				/* the members' RSS added up: a page a fork pool shares
				 * counts once per worker (PSS divides it among them) */
				snprintf(
				    r->note, sizeof(r->note),
				    "RSS peak %.0f MiB (its processes' RSS summed: shared pages "
				    "count in each)",
				    st->rss_max_mib);
			break;
		case N_MEM_TOTAL: of_total(r->note, sizeof(r->note), meta, "memory_mib"); break;
		case N_VRAM_TOTAL:
			of_total(r->note, sizeof(r->note), meta, "gpu_memory_mib");
			break;
		case N_SPACE: rt_disk_space_note(st, r->note, sizeof(r->note)); break;
		}
		n++;
	}
	return n;
}

static void print_table(FILE *f, const struct rt_runstats *st, const cJSON *meta)
{
	struct rt_summary_row rows[RT_SUMMARY_ROWS];
	size_t n = rt_summary_rows(st, meta, rows, RT_SUMMARY_ROWS);
	fprintf(f, "  %-24s %10s %10s %10s\n", "", "mean", "p95", "max");
	for (size_t i = 0; i < n; i++) {
		const struct rt_summary_row *r = &rows[i];
		if (!r->c) {
			fprintf(f, "  %-24s %s\n", r->label, r->note);
			continue;
		}
		fprintf(f, "  %-24s %10.*f %10.*f %10.*f%s%s\n", r->label, r->prec, r->c->mean,
		        r->prec, r->c->p95, r->prec, r->c->max, r->note[0] ? "  " : "", r->note);
	}
}

cJSON *rt_json_summary_rows(const struct rt_runstats *st, const cJSON *meta)
{
	struct rt_summary_row rows[RT_SUMMARY_ROWS];
	size_t n = rt_summary_rows(st, meta, rows, RT_SUMMARY_ROWS);
	cJSON *arr = cJSON_CreateArray();
	for (size_t i = 0; i < n; i++) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "label", rows[i].label);
		double nan = NAN;
		add_num_or_null(o, "mean", rows[i].c ? rows[i].c->mean : nan);
		add_num_or_null(o, "p95", rows[i].c ? rows[i].c->p95 : nan);
		add_num_or_null(o, "max", rows[i].c ? rows[i].c->max : nan);
		add_str_or_null(o, "note", rows[i].note);
		cJSON_AddItemToArray(arr, o);
	}
	return arr;
}

static void reco_text(char *buf, size_t cap, const struct rt_recommendation *r)
{
	size_t n = (size_t)snprintf(buf, cap, "%ld vCPU%s", r->cpu, r->cpu == 1 ? "" : "s");
	if (n < cap && r->cpu_p95 > r->cpu)
		n += (size_t)snprintf(buf + n, cap - n, " (%ld at the p95 of its use)", r->cpu_p95);
	if (n < cap)
		n += (size_t)snprintf(buf + n, cap - n, ", %s%ld MiB memory",
		                      r->memory_at_least ? "at least " : "", r->memory_mib);
	if (n < cap) {
		rt_gpu_reco_text(buf + n, cap - n, r);
		n += strlen(buf + n);
	}
	if (n < cap && r->from_system)
		snprintf(buf + n, cap - n, " (from the whole system: this run tracked no process)");
}

size_t rt_findings_text(const struct rt_runstats *st, uint64_t start_ns, char out[][RT_FINDING_LEN],
                        size_t max)
{
	struct rt_findings x;
	rt_findings(st, &x);
	size_t n = 0;
	if (x.oom_kills > 0 && n < max) {
		char when[32] = "", used[64] = "";
		if (x.oom_at >= 0 && start_ns) {
			char iso[32];
			rt_fmt_iso8601(iso, sizeof(iso), start_ns + (uint64_t)(x.oom_at * 1e9));
			snprintf(when, sizeof(when), " at %.8s", iso + 11); /* hh:mm:ss */
		}
		if (x.mem_used_max_mib > 0 && x.mem_limit_mib > 0)
			snprintf(used, sizeof(used), " with %.2f of %.2f GiB in use",
			         x.mem_used_max_mib / 1024.0, x.mem_limit_mib / 1024.0);
		if (x.oom_in_cgroup)
			snprintf(out[n++], RT_FINDING_LEN,
			         "the job was OOM-killed%s%s (%.0f kill%s in its cgroup)", when,
			         used, x.oom_kills, x.oom_kills == 1 ? "" : "s");
		else
			snprintf(out[n++], RT_FINDING_LEN,
			         "%.0f process%s on the host %s OOM-killed during the run%s",
			         x.oom_kills, x.oom_kills == 1 ? "" : "es",
			         x.oom_kills == 1 ? "was" : "were", when);
	}
	if (x.throttled_pct >= RT_THROTTLED_PCT && n < max)
		snprintf(out[n++], RT_FINDING_LEN,
		         "CPU throttled %.0f %% of the run: the quota (%.2g cores), not the work, "
		         "set the "
		         "pace",
		         x.throttled_pct, x.cpu_limit);
	if (x.psi_mem >= RT_MEM_STALL_PCT && n < max)
		snprintf(out[n++], RT_FINDING_LEN,
		         "stalled waiting for memory %.0f %% of the time: it wanted more memory",
		         x.psi_mem);
	if (x.psi_io >= RT_IO_STALL_PCT && n < max)
		snprintf(out[n++], RT_FINDING_LEN,
		         "waited on I/O %.0f %% of the time: the disk set the pace", x.psi_io);
	/* a verdict needs evidence: slow p95 over enough intervals with I/O,
	 * not one fsync'd write (where p95 is that one interval) */
	int slow_r =
	    x.disk_rlat_p95 >= RT_DISK_SLOW_MS && x.disk_rlat_n >= RT_DISK_SLOW_MIN_INTERVALS;
	int slow_w =
	    x.disk_wlat_p95 >= RT_DISK_SLOW_MS && x.disk_wlat_n >= RT_DISK_SLOW_MIN_INTERVALS;
	if ((slow_r || slow_w) && n < max)
		snprintf(
		    out[n++], RT_FINDING_LEN,
		    "the disk was slow: %s took %.1f ms on average (p95 %.1f) over %zu intervals "
		    "with I/O",
		    slow_w ? "writes" : "reads", slow_w ? x.disk_wlat : x.disk_rlat,
		    slow_w ? x.disk_wlat_p95 : x.disk_rlat_p95,
		    slow_w ? x.disk_wlat_n : x.disk_rlat_n);
	/* the job's write_bytes count pages it dirtied; a file deleted (or
	 * truncated) before write-back never reaches a disk */
	const struct rt_colstat *jw = col(st, RT_V_PROC_WRITE);
	const struct rt_colstat *hw = col(st, RT_V_DISK_WRITE);
	if (jw && hw && jw->sum > hw->sum * 1.05 + 1e6 && n < max)
		snprintf(out[n++], RT_FINDING_LEN,
		         "the job wrote %.0f MB but the disks only %.0f MB: files deleted or "
		         "truncated before the kernel wrote them back never reached a disk",
		         jw->sum / 1e6, hw->sum / 1e6);
	n = rt_gpu_held_text(st, out, n, max);
	if (x.psi_cpu >= 2 * RT_IO_STALL_PCT && n < max)
		snprintf(out[n++], RT_FINDING_LEN,
		         "waited for a CPU %.0f %% of the time: the host was busy", x.psi_cpu);
	return n;
}

/* What held the job back, each a plain sentence, only when it matters. */
static struct rt_note *note(struct rt_note *out, size_t *n, size_t max, const char *label)
{
	if (*n >= max)
		return NULL;
	out[*n].label = label;
	out[*n].text[0] = '\0';
	return &out[(*n)++];
}

size_t rt_summary_notes(const struct rt_answer *a, struct rt_note *out, size_t max)
{
	const struct rt_runstats *st = &a->st;
	size_t n = 0;
	struct rt_note *x;
	if (!st->lines)
		return 0;
	struct rt_recommendation r;
	struct rt_efficiency e;
	rt_recommend(st, &r);
	rt_efficiency(st, a->meta, &e);
	char eff[6][RT_EFF_LEN];
	if ((x = note(out, &n, max, "idle")) && !rt_idle_text(a->meta, x->text, sizeof(x->text)))
		n--; /* not a job group that stayed empty */
	size_t ne = rt_efficiency_text(&e, &r, eff, 6);
	for (size_t i = 0; i < ne; i++)
		if ((x = note(out, &n, max, i ? "" : "given against used")))
			snprintf(x->text, sizeof(x->text), "%.*s", RT_EFF_LEN, eff[i]);
	if (!e.known && (x = note(out, &n, max, "given against used")))
		snprintf(x->text, sizeof(x->text), "not recorded (a run of an rt before 0.3)");
	/* said in tenths that add up (0.4 got + 0.1 waited = 0.5 wanted), and
	 * only when a tenth of a core or more waited */
	double used, waited;
	if (rt_cpu_demand(st, &used, &waited) == 0 && round(waited * 10) >= 1 &&
	    (x = note(out, &n, max, "CPU wanted"))) {
		double got = round(used * 10) / 10, wait = round(waited * 10) / 10;
		snprintf(x->text, sizeof(x->text),
		         "%.1f cores, got %.1f: its threads waited for a CPU %.1f cores' worth on "
		         "average",
		         got + wait, got, wait);
	}
	char why[200];
	const char *alloc = rt_allocation_name(rt_stats_allocation_why(st, why, sizeof(why)));
	if (alloc && (x = note(out, &n, max, "server allocation")))
		snprintf(x->text, sizeof(x->text), "%s: %s", alloc, why);
	char found[8][RT_FINDING_LEN];
	size_t nf = rt_findings_text(st, a->ri.start_ns, found, 8);
	for (size_t i = 0; i < nf; i++)
		if ((x = note(out, &n, max, "!")))
			snprintf(x->text, sizeof(x->text), "%.*s", RT_FINDING_LEN, found[i]);
	if ((x = note(out, &n, max, "recommended")))
		reco_text(x->text, sizeof(x->text), &r);
	if (r.why[0] && (x = note(out, &n, max, "raised because")))
		snprintf(x->text, sizeof(x->text), "%s", r.why);
	int over;
	char btext[RT_NOTE_LEN];
	if (rt_budget_text(a, btext, sizeof(btext), &over) && (x = note(out, &n, max, "budget")))
		snprintf(x->text, sizeof(x->text), "%s", btext);
	/* each GPU: its model, and what the job did on it */
	static const char *const gpu_label[RT_MAX_GPUS] = {
	    "GPU 0", "GPU 1", "GPU 2",  "GPU 3",  "GPU 4",  "GPU 5",  "GPU 6",  "GPU 7",
	    "GPU 8", "GPU 9", "GPU 10", "GPU 11", "GPU 12", "GPU 13", "GPU 14", "GPU 15"};
	for (unsigned i = 0; i < st->ngpu && i < RT_MAX_GPUS; i++)
		if (st->gpu[i].w > 0 && (x = note(out, &n, max, gpu_label[i])))
			rt_gpu_note_text(x->text, sizeof(x->text), st, i);
	return n;
}

/* What the figures cover: samples skipped, a run not finished, a tracked
 * process that ended before the tracker did. */
static void print_coverage(FILE *f, const struct rt_answer *a)
{
	const struct rt_runstats *st = &a->st;
	const cJSON *sk =
	    a->meta ? cJSON_GetObjectItemCaseSensitive(a->meta, "samples_skipped") : NULL;
	if (cJSON_IsNumber(sk) && sk->valuedouble > 0)
		fprintf(f,
		        "  skipped: %.0f samples (%.1f %%): the host was too busy to sample every "
		        "%g s; the figures cover the samples taken\n",
		        sk->valuedouble,
		        100.0 * sk->valuedouble / (sk->valuedouble + (double)st->lines),
		        a->ri.interval);
	if (a->partial)
		fprintf(f, "  partial: the run %s; these figures cover the samples so far\n",
		        rt_run_status_of(a->ri.status) == RT_RUN_RUNNING
		            ? "is still being recorded"
		            : "ended without its recorder finishing it");
	if (st->has_proc && st->tail_after > 0) {
		char life[32], tail[32];
		rt_fmt_duration(life, sizeof(life), st->job_duration);
		rt_fmt_duration(tail, sizeof(tail), st->tail_after);
		fprintf(
		    f,
		    "  tracked: its processes ended after %s, and the tracker ran on %s without "
		    "them; the job's figures cover their life\n",
		    life, tail);
	}
}

void rt_print_summary(FILE *f, const struct rt_answer *a)
{
	const struct rt_runstats *st = &a->st;
	char start[32] = "?", dur[32], cmd[160];
	if (a->ri.start_ns)
		rt_fmt_iso8601(start, sizeof(start), a->ri.start_ns);
	rt_fmt_duration(dur, sizeof(dur), st->duration);
	char job[256];
	clean(job, sizeof(job), a->ri.job_name);
	struct rt_recommendation r;
	struct rt_efficiency e;
	rt_recommend(st, &r);
	rt_efficiency(st, a->meta, &e);
	if (st->lines) { /* the answer first: a log reader sees it first */
		char line[300];
		rt_answer_line(line, sizeof(line), st, &e, &r);
		fprintf(f, "%s\n", line);
	}
	fprintf(f, "run %llu", (unsigned long long)a->ri.id);
	if (job[0])
		fprintf(f, " (%s)", job);
	fprintf(f, ": %s", a->ri.status);
	if (a->has_exit_code)
		fprintf(f, ", exit code %d", a->exit_code);
	fprintf(f, ", started %s, %s, %llu sample%s every %g s\n", start, dur,
	        (unsigned long long)st->lines, st->lines == 1 ? "" : "s", a->ri.interval);
	print_coverage(f, a);
	command_line(a->meta, cmd, sizeof(cmd));
	if (cmd[0])
		fprintf(f, "  command: %s\n", cmd);
	if (!st->lines) {
		fputs("  no samples: nothing to summarize\n", f);
		return;
	}
	print_table(f, st, a->meta);
	struct rt_note notes[RT_NOTES_MAX];
	size_t nn = rt_summary_notes(a, notes, RT_NOTES_MAX);
	for (size_t i = 0; i < nn; i++)
		if (!strcmp(notes[i].label, "!"))
			fprintf(f, "  ! %s\n", notes[i].text);
		else
			fprintf(f, "  %-24s %s\n", notes[i].label, notes[i].text);
}

/* Markdown: a table a person pastes into a ticket or a pull request.
 * Text written into it is text, whoever wrote it: a job name from a branch
 * name must not become HTML, an image or a link on a job's page, so every
 * character that makes Markdown or HTML of it is escaped (CommonMark's
 * backslash escape: the page shows the character itself). */
static void md_cell(FILE *f, const char *s)
{
	for (const char *p = s; p && *p; p++) {
		/* ':' and the '.' of "www." too: GitHub makes links of bare
		 * "https://" and "www." addresses */
		int www = *p == '.' && p - s >= 3 && !strncasecmp(p - 3, "www", 3);
		if ((*p && strchr("\\`*_[]()<>!|~&#:", *p)) || www)
			fputc('\\', f);
		fputc((unsigned char)*p < 0x20 ? ' ' : *p, f);
	}
}

void rt_print_summary_markdown(FILE *f, const struct rt_answer *a)
{
	const struct rt_runstats *st = &a->st;
	struct rt_recommendation r;
	struct rt_efficiency e;
	rt_recommend(st, &r);
	rt_efficiency(st, a->meta, &e);
	char job[256], dur[32], line[300];
	clean(job, sizeof(job), a->ri.job_name);
	rt_fmt_duration(dur, sizeof(dur), st->duration);
	fprintf(f, "### rt: run %llu", (unsigned long long)a->ri.id);
	if (job[0]) {
		fputs(" (", f);
		md_cell(f, job);
		fputc(')', f);
	}
	fputs(", ", f);
	md_cell(f, a->ri.status);
	if (a->has_exit_code)
		fprintf(f, ", exit code %d", a->exit_code);
	fprintf(f, ", %s\n\n", dur);
	if (!st->lines) {
		fputs("No samples: nothing to summarize.\n", f);
		return;
	}
	rt_answer_line(line, sizeof(line), st, &e, &r);
	fputs("**", f);
	md_cell(f, line);
	fputs("**\n\n", f);
	struct rt_summary_row rows[RT_SUMMARY_ROWS];
	size_t n = rt_summary_rows(st, a->meta, rows, RT_SUMMARY_ROWS);
	fputs("| | mean | p95 | max | |\n|---|---:|---:|---:|---|\n", f);
	for (size_t i = 0; i < n; i++) {
		fputs("| ", f);
		md_cell(f, rows[i].label);
		if (rows[i].c)
			fprintf(f, " | %.*f | %.*f | %.*f | ", rows[i].prec, rows[i].c->mean,
			        rows[i].prec, rows[i].c->p95, rows[i].prec, rows[i].c->max);
		else
			fputs(" | | | | ", f);
		md_cell(f, rows[i].note);
		fputs(" |\n", f);
	}
	/* the same lines as the text summary's, each with its label */
	struct rt_note notes[RT_NOTES_MAX];
	size_t nn = rt_summary_notes(a, notes, RT_NOTES_MAX);
	fputc('\n', f);
	const char *label = "";
	for (size_t i = 0; i < nn; i++) {
		if (notes[i].label[0])
			label = notes[i].label;
		fputs(!strcmp(label, "!") ? "- :warning: " : "- **", f);
		if (strcmp(label, "!")) {
			md_cell(f, label);
			fputs("**: ", f);
		}
		md_cell(f, notes[i].text);
		fputc('\n', f);
	}
}

void rt_print_job_summary(FILE *f, const char *job, const struct rt_answer *runs, size_t n)
{
	char name[128];
	clean(name, sizeof(name), job);
	fprintf(f, "job %s: %zu run%s\n", name, n, n == 1 ? "" : "s");
	fprintf(f, "  %-6s %-20s %12s %5s %8s %8s %9s %8s %9s\n", "RUN", "START", "DURATION",
	        "EXIT", "CPU MEAN", "CPU MAX", "PSS MiB", "GPU MAX", "VRAM MiB");
	struct rt_runstats *all = calloc(n ? n : 1, sizeof(*all));
	for (size_t i = 0; i < n; i++) {
		const struct rt_answer *a = &runs[i];
		const struct rt_runstats *st = &a->st;
		int p = st->has_proc;
		const struct rt_colstat *cpu = col(st, p ? RT_V_PROC_CORES : RT_V_CPU_UTIL);
		const struct rt_colstat *mem = col(st, p ? RT_V_PROC_PSS : RT_V_MEM_USED);
		const struct rt_colstat *gpu = col(st, p ? RT_V_PROC_GPU_USAGE : RT_V_GPU_USAGE);
		const struct rt_colstat *vram = col(st, p ? RT_V_PROC_GPU_VRAM : RT_V_GPU_VRAM);
		char start[32] = "?", dur[32], ex[16] = "-";
		if (a->ri.start_ns)
			rt_fmt_iso8601(start, sizeof(start), a->ri.start_ns);
		rt_fmt_duration(dur, sizeof(dur), st->duration);
		if (a->has_exit_code)
			snprintf(ex, sizeof(ex), "%d", a->exit_code);
		else if (a->partial)
			snprintf(ex, sizeof(ex), "%s", a->ri.status);
		fprintf(f, "  %-6llu %-20s %12s %5s %8.2f %8.2f %9.0f %8.2f %9.0f\n",
		        (unsigned long long)a->ri.id, start, dur, ex, cpu ? cpu->mean : 0,
		        cpu ? cpu->max : 0, mem ? mem->max : 0, gpu ? gpu->max : 0,
		        vram ? vram->max : 0);
		if (all)
			all[i] = *st;
	}
	if (!all)
		return;
	struct rt_runstats agg;
	rt_stats_aggregate(all, n, &agg);
	free(all);
	fprintf(f, "all runs (means and durations averaged, maxima and totals the largest):\n");
	print_table(f, &agg, runs[n - 1].meta);
	struct rt_recommendation r;
	rt_recommend(&agg, &r);
	/* the aggregate against what the newest run was given */
	struct rt_efficiency e;
	char eff[6][RT_EFF_LEN];
	rt_efficiency(&agg, runs[n - 1].meta, &e);
	size_t ne = rt_efficiency_text(&e, &r, eff, 6);
	for (size_t i = 0; i < ne; i++)
		fprintf(f, "  %-24s %s\n", i ? "" : "given (newest run)", eff[i]);
	char reco[RT_NOTE_LEN];
	reco_text(reco, sizeof(reco), &r);
	fprintf(f, "  %-24s %s\n", "recommended", reco);
	if (r.why[0])
		fprintf(f, "  %-24s %s\n", "raised because", r.why);
}

void rt_print_recommendation(FILE *f, const char *what, const struct rt_runstats *st,
                             const struct rt_recommendation *r)
{
	int sys = r->from_system;
	const struct rt_colstat *cpu = col(st, sys ? RT_V_CPU_UTIL : RT_V_PROC_CORES);
	const struct rt_colstat *mem = col(st, sys ? RT_V_MEM_USED : RT_V_PROC_PSS);
	const struct rt_colstat *gpu = col(st, sys ? RT_V_GPU_USAGE : RT_V_PROC_GPU_USAGE);
	const struct rt_colstat *vram = col(st, sys ? RT_V_GPU_VRAM : RT_V_PROC_GPU_VRAM);
	fprintf(f, "recommended for %s, from %s:\n", what,
	        sys ? "the whole system's use (a standalone run tracks no process)"
	            : "the process tree's use");
	char v[32];
	snprintf(v, sizeof(v), "%ld", r->cpu);
	/* a value raised above the use says why, as the summary does */
	if (r->why_cpu[0])
		fprintf(f, "  %-8s %-10s raised: %s (mean use %.2f cores)", "vCPUs", v, r->why_cpu,
		        cpu ? cpu->mean : 0);
	else
		fprintf(f, "  %-8s %-10s mean use %.2f cores, rounded (at least 1)", "vCPUs", v,
		        cpu ? cpu->mean : 0);
	if (r->cpu_p95 > r->cpu) /* the reference's rule, and what p95 would ask */
		fprintf(f, "; its p95 (%.2f cores) would ask for %ld", cpu ? cpu->p95 : 0,
		        r->cpu_p95);
	fputc('\n', f);
	snprintf(v, sizeof(v), "%ld MiB", r->memory_mib);
	if (r->why_mem[0])
		fprintf(f, "  %-8s %-10s raised: %s\n", "memory", v, r->why_mem);
	else
		fprintf(f, "  %-8s %-10s peak %s %.0f MiB + 20 %%, rounded up to a server size\n",
		        "memory", v, sys ? "used" : "PSS", mem ? mem->max : 0);
	snprintf(v, sizeof(v), "%ld", r->gpu);
	if (r->gpu && !sys)
		fprintf(
		    f, "  %-8s %-10s as many as it held at once; busy peak %.2f GPUs (mean %.2f)\n",
		    "GPUs", v, gpu ? gpu->max : 0, gpu ? gpu->mean : 0);
	else if (r->gpu)
		fprintf(f, "  %-8s %-10s peak %.2f GPUs busy (mean %.2f)\n", "GPUs", v,
		        gpu ? gpu->max : 0, gpu ? gpu->mean : 0);
	else
		fprintf(f, "  %-8s %-10s no GPU was used\n", "GPUs", v);
	snprintf(v, sizeof(v), "%ld MiB", r->vram_mib);
	double one = rt_gpu_vram_one(st);
	if (r->vram_mib && !sys && one >= 0)
		fprintf(f, "  %-8s %-10s peak %.0f MiB on one GPU + 20 %%, rounded up%s\n", "VRAM",
		        v, one, r->gpu > 1 ? " (each GPU)" : "");
	else if (r->vram_mib)
		fprintf(f, "  %-8s %-10s peak %.0f MiB + 20 %%, rounded up\n", "VRAM", v,
		        vram ? vram->max : 0);
}

/* ---- JSON --------------------------------------------------------------- */

static void add_num_or_null(cJSON *o, const char *k, double v)
{
	if (isfinite(v))
		cJSON_AddNumberToObject(o, k, v);
	else
		cJSON_AddNullToObject(o, k);
}

static void add_str_or_null(cJSON *o, const char *k, const char *v)
{
	if (v && *v)
		cJSON_AddStringToObject(o, k, v);
	else
		cJSON_AddNullToObject(o, k);
}

cJSON *rt_json_run(const struct rt_answer *a)
{
	cJSON *o = cJSON_CreateObject();
	char t[32];
	cJSON_AddNumberToObject(o, "id", (double)a->ri.id);
	add_str_or_null(o, "job_name", a->ri.job_name);
	cJSON_AddStringToObject(o, "status", a->ri.status);
	if (a->has_exit_code)
		cJSON_AddNumberToObject(o, "exit_code", a->exit_code);
	else
		cJSON_AddNullToObject(o, "exit_code");
	cJSON_AddNumberToObject(o, "duration_secs", a->st.duration);
	cJSON_AddNumberToObject(o, "job_duration_secs",
	                        a->st.has_proc ? a->st.job_duration : a->st.duration);
	cJSON_AddNumberToObject(o, "samples", (double)a->st.lines);
	const cJSON *sk =
	    a->meta ? cJSON_GetObjectItemCaseSensitive(a->meta, "samples_skipped") : NULL;
	cJSON_AddNumberToObject(o, "samples_skipped", cJSON_IsNumber(sk) ? sk->valuedouble : 0);
	cJSON_AddNumberToObject(o, "interval_secs", a->ri.interval);
	cJSON_AddBoolToObject(o, "partial", a->partial);
	rt_fmt_iso8601(t, sizeof(t), a->ri.start_ns);
	add_str_or_null(o, "start", a->ri.start_ns ? t : NULL);
	rt_fmt_iso8601(t, sizeof(t), a->ri.end_ns);
	add_str_or_null(o, "end", a->ri.end_ns ? t : NULL);
	return o;
}

cJSON *rt_json_stats(const struct rt_runstats *st)
{
	cJSON *o = cJSON_CreateObject();
	for (unsigned c = 0; c < RT_CSV_COLUMNS; c++) {
		const struct rt_colstat *cs = &st->col[c];
		cJSON *x = cJSON_AddObjectToObject(o, rt_csv_column_name(c));
		double nan = NAN;
		add_num_or_null(x, "mean", cs->present ? cs->mean : nan);
		add_num_or_null(x, "max", cs->present ? cs->max : nan);
		add_num_or_null(x, "p95", cs->present ? cs->p95 : nan);
		add_num_or_null(x, "sum", cs->present ? cs->sum : nan);
	}
	return o;
}

cJSON *rt_json_recommendation(const struct rt_recommendation *r)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "cpu", (double)r->cpu);
	cJSON_AddNumberToObject(o, "cpu_at_p95", (double)r->cpu_p95);
	cJSON_AddNumberToObject(o, "memory_mib", (double)r->memory_mib);
	cJSON_AddBoolToObject(o, "memory_at_least", r->memory_at_least);
	cJSON_AddNumberToObject(o, "gpu", (double)r->gpu);
	cJSON_AddNumberToObject(o, "vram_mib", (double)r->vram_mib);
	cJSON_AddStringToObject(o, "based_on", r->from_system ? "system" : "process");
	if (r->why[0])
		cJSON_AddStringToObject(o, "raised_because", r->why);
	else
		cJSON_AddNullToObject(o, "raised_because");
	return o;
}

/* "findings": what held the job back (null where unknown). */
cJSON *rt_json_findings(const struct rt_runstats *st)
{
	struct rt_findings x;
	rt_findings(st, &x);
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "oom_kills", x.oom_kills);
	cJSON_AddBoolToObject(o, "oom_in_job_cgroup", x.oom_in_cgroup);
	if (x.oom_at >= 0)
		cJSON_AddNumberToObject(o, "oom_at_secs", x.oom_at);
	else
		cJSON_AddNullToObject(o, "oom_at_secs");
#define NUM_OR_NULL(k, v, ok)                                                                      \
	do {                                                                                       \
		if (ok)                                                                            \
			cJSON_AddNumberToObject(o, k, v);                                          \
		else                                                                               \
			cJSON_AddNullToObject(o, k);                                               \
	} while (0)
	NUM_OR_NULL("cgroup_memory_limit_mib", x.mem_limit_mib, x.mem_limit_mib > 0);
	NUM_OR_NULL("cgroup_memory_peak_mib", x.mem_used_max_mib, x.mem_used_max_mib > 0);
	NUM_OR_NULL("cpu_throttled_pct", x.throttled_pct, x.throttled_pct >= 0);
	NUM_OR_NULL("cgroup_cpu_limit_cores", x.cpu_limit, x.cpu_limit > 0);
	NUM_OR_NULL("cpu_pressure_pct", x.psi_cpu, x.psi_cpu >= 0);
	NUM_OR_NULL("memory_pressure_pct", x.psi_mem, x.psi_mem >= 0);
	NUM_OR_NULL("io_pressure_pct", x.psi_io, x.psi_io >= 0);
	NUM_OR_NULL("disk_read_latency_ms", x.disk_rlat, x.disk_rlat >= 0);
	NUM_OR_NULL("disk_write_latency_ms", x.disk_wlat, x.disk_wlat >= 0);
	NUM_OR_NULL("gpus_throttled", x.gpus_throttled, x.gpus_throttled >= 0);
#undef NUM_OR_NULL
	return o;
}

static void add_allocation(cJSON *o, const struct rt_runstats *st)
{
	char why[200];
	add_str_or_null(o, "allocation",
	                rt_allocation_name(rt_stats_allocation_why(st, why, sizeof(why))));
	add_str_or_null(o, "allocation_because", why[0] ? why : NULL);
}

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
			add_str_or_null(x, "display_name", v->display_name);
			add_num_or_null(x, "vcpus", v->vcpus);
			add_num_or_null(x, "memory_amount", v->memory_amount);
			add_num_or_null(x, "gpu_count", v->gpu_count);
			add_num_or_null(x, "min_price_ondemand", v->min_price_ondemand);
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
	add_str_or_null(c, "region_id", o->cloud.region);
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

/* ---- the verbs ------------------------------------------------------------ */

static int print_json(cJSON *o)
{
	char *t = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	if (!t) {
		rt_say("out of memory");
		return 1;
	}
	int ok = puts(t) >= 0 && fflush(stdout) == 0;
	free(t);
	if (!ok) {
		rt_say("cannot write to stdout: %s", strerror(errno));
		return 1;
	}
	return 0;
}

int rt_answer_job_stats(const struct rt_answer *runs, size_t n, struct rt_runstats *agg)
{
	struct rt_runstats *all = calloc(n, sizeof(*all));
	if (!all)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		all[i] = runs[i].st;
	rt_stats_aggregate(all, n, agg);
	free(all);
	return 0;
}

static void free_runs(struct rt_answer *runs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		rt_answer_free(&runs[i]);
	free(runs);
}

/* summary --job --json: each run, then the aggregate and its answer. */
static cJSON *json_job_summary(const char *job, const struct rt_answer *runs, size_t n,
                               const struct rt_runstats *agg)
{
	cJSON *j = cJSON_CreateObject();
	cJSON_AddStringToObject(j, "job", job);
	cJSON *arr = cJSON_AddArrayToObject(j, "runs");
	for (size_t i = 0; i < n; i++) {
		cJSON *x = cJSON_CreateObject();
		cJSON_AddItemToObject(x, "run", rt_json_run(&runs[i]));
		cJSON_AddItemToObject(x, "stats", rt_json_stats(&runs[i].st));
		add_allocation(x, &runs[i].st);
		struct rt_efficiency eff;
		rt_efficiency(&runs[i].st, runs[i].meta, &eff);
		rt_json_add_efficiency(x, &eff);
		cJSON_AddItemToArray(arr, x);
	}
	struct rt_recommendation r;
	rt_recommend(agg, &r);
	cJSON_AddItemToObject(j, "stats", rt_json_stats(agg));
	cJSON_AddItemToObject(j, "table", rt_json_summary_rows(agg, runs[n - 1].meta));
	/* the aggregate against what the newest run was given */
	struct rt_efficiency eff;
	rt_efficiency(agg, runs[n - 1].meta, &eff);
	rt_json_add_efficiency(j, &eff);
	add_allocation(j, agg);
	cJSON_AddItemToObject(j, "findings", rt_json_findings(agg));
	cJSON_AddItemToObject(j, "gpus", rt_json_gpus(agg));
	cJSON_AddItemToObject(j, "recommendation", rt_json_recommendation(&r));
	return j;
}

static int cmd_job_summary(struct rt_store *s, const struct rt_answer_opts *o)
{
	struct rt_answer *runs;
	size_t n;
	struct rt_runstats agg;
	if (rt_answer_job(s, o->job, o->last, &runs, &n))
		return 1;
	if (rt_answer_job_stats(runs, n, &agg)) {
		free_runs(runs, n);
		rt_say("out of memory");
		return 1;
	}
	int rc = 0;
	if (o->json)
		rc = print_json(json_job_summary(o->job, runs, n, &agg));
	else
		rt_print_job_summary(stdout, o->job, runs, n);
	free_runs(runs, n);
	return rc;
}

/* The lines below the table, as the text and Markdown say them. */
static void add_notes(cJSON *j, const struct rt_answer *a)
{
	struct rt_note notes[RT_NOTES_MAX];
	size_t nn = rt_summary_notes(a, notes, RT_NOTES_MAX);
	cJSON *na = cJSON_AddArrayToObject(j, "notes");
	for (size_t i = 0; na && i < nn; i++) {
		cJSON *no = cJSON_CreateObject();
		cJSON_AddStringToObject(no, "label", notes[i].label);
		cJSON_AddStringToObject(no, "text", notes[i].text);
		cJSON_AddItemToArray(na, no);
	}
}

/* summary --json of one run. */
static cJSON *json_run_summary(const struct rt_answer *a)
{
	cJSON *j = cJSON_CreateObject();
	struct rt_recommendation r;
	rt_recommend(&a->st, &r);
	cJSON_AddItemToObject(j, "run", rt_json_run(a));
	cJSON_AddItemToObject(j, "stats", rt_json_stats(&a->st));
	cJSON_AddItemToObject(j, "table", rt_json_summary_rows(&a->st, a->meta));
	struct rt_efficiency eff;
	rt_efficiency(&a->st, a->meta, &eff);
	rt_json_add_efficiency(j, &eff);
	char line[300];
	rt_answer_line(line, sizeof(line), &a->st, &eff, &r);
	cJSON_AddStringToObject(j, "answer", line);
	add_num_or_null(j, "process_rss_peak_mib",
	                a->st.rss_max_mib >= 0 ? a->st.rss_max_mib : NAN);
	add_num_or_null(j, "process_memory_peak_mib",
	                a->st.mem_peak_mib >= 0 ? a->st.mem_peak_mib : NAN);
	add_notes(j, a);
	add_allocation(j, &a->st);
	cJSON_AddItemToObject(j, "findings", rt_json_findings(&a->st));
	cJSON_AddItemToObject(j, "gpus", rt_json_gpus(&a->st));
	if (a->st.lines)
		cJSON_AddItemToObject(j, "recommendation", rt_json_recommendation(&r));
	else /* nothing was measured: nothing to recommend */
		cJSON_AddNullToObject(j, "recommendation");
	return j;
}

int rt_cmd_summary(struct rt_store *s, const struct rt_answer_opts *o)
{
	if (o->job)
		return cmd_job_summary(s, o);
	struct rt_answer a;
	if (rt_answer_run(s, o->run, 0, &a))
		return 1;
	int rc = 0;
	if (o->json)
		rc = print_json(json_run_summary(&a));
	else if (o->markdown)
		rt_print_summary_markdown(stdout, &a);
	else
		rt_print_summary(stdout, &a);
	rt_answer_free(&a);
	return rc;
}

/* recommend --json: the run (or the job's runs), its allocation,
 * findings, recommendation and offers. */
static int recommend_json(const struct rt_answer_opts *o, const struct rt_answer *runs, size_t n,
                          const struct rt_runstats *st, const struct rt_recommendation *r,
                          const struct rt_offer *off)
{
	cJSON *j = cJSON_CreateObject();
	if (o->job) {
		cJSON *x = cJSON_AddObjectToObject(j, "job");
		cJSON_AddStringToObject(x, "name", o->job);
		cJSON *ids = cJSON_AddArrayToObject(x, "runs");
		for (size_t i = 0; i < n; i++)
			cJSON_AddItemToArray(ids, cJSON_CreateNumber((double)runs[i].ri.id));
		cJSON_AddNumberToObject(x, "duration_secs", st->duration);
	} else {
		cJSON_AddItemToObject(j, "run", rt_json_run(&runs[0]));
	}
	add_allocation(j, st);
	cJSON_AddItemToObject(j, "findings", rt_json_findings(st));
	cJSON_AddItemToObject(j, "recommendation", rt_json_recommendation(r));
	char line[256];
	const char *name;
	if (rt_scheduler_line(runs[0].meta, r, line, sizeof(line), &name)) {
		cJSON *x = cJSON_AddObjectToObject(j, "scheduler"); /* the same, as it takes it */
		cJSON_AddStringToObject(x, "name", name);
		cJSON_AddStringToObject(x, "line", line);
	}
	rt_json_offer(j, off);
	return print_json(j);
}

/* recommend: the recommendation's lines; for one run, what it was given
 * against what it used; the offers. */
static void recommend_text(const struct rt_answer_opts *o, const struct rt_answer *runs, size_t n,
                           const struct rt_runstats *st, const struct rt_recommendation *r,
                           const struct rt_offer *off)
{
	const struct rt_answer *one = &runs[0];
	char what[320], name[128];
	clean(name, sizeof(name), o->job ? o->job : one->ri.job_name);
	if (o->job)
		snprintf(what, sizeof(what), "job %s (%zu run%s)", name, n, n == 1 ? "" : "s");
	else if (name[0])
		snprintf(what, sizeof(what), "run %llu (%s)", (unsigned long long)one->ri.id, name);
	else
		snprintf(what, sizeof(what), "run %llu", (unsigned long long)one->ri.id);
	rt_print_recommendation(stdout, what, st, r);
	char line[256];
	const char *sched;
	/* (for --job: as its latest run's scheduler takes it) */
	if (rt_scheduler_line(one->meta, r, line, sizeof(line), &sched))
		printf("  %-19s %s\n", rt_scheduler_label(sched), line);
	if (!o->job) { /* the reasons: what it was given against what it used */
		struct rt_efficiency e;
		char eff[6][RT_EFF_LEN];
		rt_efficiency(st, one->meta, &e);
		size_t ne = rt_efficiency_text(&e, r, eff, 6);
		for (size_t i = 0; i < ne; i++)
			printf("  %-19s %s\n", i ? "" : "given against used", eff[i]);
	}
	rt_print_offer(stdout, off);
	fflush(stdout);
}

int rt_cmd_recommend(struct rt_store *s, const struct rt_answer_opts *o)
{
	struct rt_answer *runs = NULL, one;
	size_t n = 1;
	struct rt_runstats st;
	if (o->job) {
		if (rt_answer_job(s, o->job, o->last, &runs, &n))
			return 1;
		if (rt_answer_job_stats(runs, n, &st)) {
			free_runs(runs, n);
			rt_say("out of memory");
			return 1;
		}
	} else {
		if (rt_answer_run(s, o->run, 0, &one))
			return 1;
		runs = &one;
		st = one.st;
	}
	if (!st.lines) {
		char id[32];
		snprintf(id, sizeof(id), "%llu", (unsigned long long)runs[n - 1].ri.id);
		rt_say("%s %s has no samples (%s): nothing to recommend", o->job ? "job" : "run",
		       o->job ? o->job : id,
		       !o->job && rt_run_status_of(runs[n - 1].ri.status) == RT_RUN_RUNNING
		           ? "it is still running and has no full interval yet"
		           : "it ended before its first one");
		if (o->job)
			free_runs(runs, n);
		else
			rt_answer_free(&one);
		return 1;
	}
	struct rt_recommendation r;
	rt_recommend(&st, &r);
	struct rt_offer off = {0};
	if (o->servers) {
		/* the run's cost: the newest run of a job says where it ran */
		struct rt_answer base = runs[n - 1];
		base.st.duration = st.duration;
		rt_offer_fetch(s, &base, &r, o->servers, &off);
	}
	int rc = 0;
	if (o->json) {
		rc = recommend_json(o, runs, n, &st, &r, &off);
	} else {
		recommend_text(o, runs, n, &st, &r, &off);
	}
	rt_offer_free(&off);
	if (o->job)
		free_runs(runs, n);
	else
		rt_answer_free(&one);
	return rc;
}

/* ---- given against used (the run's allocation) --------------------------- */

static double meta_alloc(const cJSON *meta, const char *key)
{
	return rt_meta_num(meta, "allocation", key);
}

void rt_efficiency(const struct rt_runstats *st, const cJSON *meta, struct rt_efficiency *e)
{
	memset(e, 0, sizeof(*e));
	e->vram_given_mib = e->vram_peak_mib = e->vram_pct = -1;
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(meta, "allocation");
	if (!cJSON_IsObject(a) || !st->lines)
		return;
	e->known = 1;
	e->cpu_from = rt_meta_str(meta, "allocation", "cpu_from");
	e->mem_from = rt_meta_str(meta, "allocation", "memory_from");
	e->gpu_from = rt_meta_str(meta, "allocation", "gpu_from");
	e->note = rt_meta_str(meta, "allocation", "note");
	e->whole_host = e->cpu_from && e->mem_from && e->gpu_from && !strcmp(e->cpu_from, "host") &&
	                !strcmp(e->mem_from, "host") && !strcmp(e->gpu_from, "host");
	int p = st->has_proc;
	double d = p ? rt_stats_secs(st, RT_V_PROC_UTIME) : st->duration;
	d = d > 0 ? d : 1;
	e->cpu_given = meta_alloc(meta, "cpu");
	double secs = p ? sum_of(st, RT_V_PROC_UTIME) + sum_of(st, RT_V_PROC_STIME)
	                : sum_of(st, RT_V_UTIME) + sum_of(st, RT_V_STIME);
	e->cpu_mean = secs / d;
	e->cpu_pct = e->cpu_given > 0 ? secs / (e->cpu_given * d) * 100.0 : NAN;
	e->mem_given_mib = meta_alloc(meta, "memory_bytes") / 1048576.0;
	/* the answer's peak: peaks between samples included */
	e->mem_peak_mib = st->mem_peak_mib >= 0 ? st->mem_peak_mib : NAN;
	e->mem_pct = e->mem_given_mib > 0 && isfinite(e->mem_peak_mib)
	                 ? e->mem_peak_mib / e->mem_given_mib * 100.0
	                 : NAN;
	double g = meta_alloc(meta, "gpu");
	e->gpu_given = g > 0 ? (unsigned)g : 0;
	const struct rt_colstat *gu = col(st, p ? RT_V_PROC_GPU_USAGE : RT_V_GPU_USAGE);
	const struct rt_colstat *gn = col(st, p ? RT_V_PROC_GPU_UTILIZED : RT_V_GPU_UTILIZED);
	e->gpu_mean = gu ? gu->mean : 0;
	e->gpu_used = gn ? gn->max : 0;
	e->gpu_pct = e->gpu_given ? e->gpu_mean / e->gpu_given * 100.0 : NAN;
	double per_gpu =
	    rt_meta_num(meta, "host", "gpu_memory_mib") / rt_meta_num(meta, "host", "gpu_count");
	const struct rt_colstat *vr = col(st, p ? RT_V_PROC_GPU_VRAM : RT_V_GPU_VRAM);
	if (e->gpu_given && per_gpu > 0 && isfinite(per_gpu) && vr) {
		e->vram_given_mib = per_gpu * e->gpu_given;
		e->vram_peak_mib = vr->max;
		e->vram_pct = vr->max / e->vram_given_mib * 100.0;
	}
}

/* "16 GiB", "512 MiB", "2.1 GiB" */
static void mib_text(char *buf, size_t cap, double mib)
{
	if (mib >= 1024)
		snprintf(buf, cap, "%.*f GiB", mib >= 10240 || fmod(mib, 1024) == 0 ? 0 : 1,
		         mib / 1024);
	else
		snprintf(buf, cap, "%.0f MiB", mib);
}

static const char *from_words(const char *from)
{
	return !from                        ? ""
	       : !strcmp(from, "request")   ? " (asked)"
	       : !strcmp(from, "cgroup")    ? " (its cgroup's limit)"
	       : !strcmp(from, "slurm")     ? " (Slurm)"
	       : !strcmp(from, "visible")   ? " (visible devices)"
	       : !strcmp(from, "container") ? " (the container's GPUs)"
	                                    : " (the host)";
}

size_t rt_efficiency_text(const struct rt_efficiency *e, const struct rt_recommendation *r,
                          char out[][RT_EFF_LEN], size_t max)
{
	size_t n = 0;
	if (!e->known || e->whole_host)
		return 0;
	char a[32], b[32], c[32];
	if (n < max && e->cpu_given > 0)
		snprintf(out[n++], RT_EFF_LEN, "given %g core%s%s, used %.1f on average (%.0f %%)",
		         e->cpu_given, e->cpu_given == 1 ? "" : "s", from_words(e->cpu_from),
		         e->cpu_mean, e->cpu_pct);
	if (n < max && e->mem_given_mib > 0 && isfinite(e->mem_peak_mib)) {
		mib_text(a, sizeof(a), e->mem_given_mib);
		mib_text(b, sizeof(b), e->mem_peak_mib);
		mib_text(c, sizeof(c), (double)r->memory_mib);
		snprintf(out[n++], RT_EFF_LEN, "given %s%s, peaked at %s (%.0f %%): %s would do", a,
		         from_words(e->mem_from), b, e->mem_pct, c);
	}
	if (n < max && e->gpu_given)
		snprintf(out[n++], RT_EFF_LEN,
		         "%u GPU%s given%s, %.0f used (busy %.0f %% on average)", e->gpu_given,
		         e->gpu_given == 1 ? "" : "s", from_words(e->gpu_from), e->gpu_used,
		         e->gpu_pct);
	if (n < max && e->vram_pct >= 0) {
		mib_text(a, sizeof(a), e->vram_given_mib);
		mib_text(b, sizeof(b), e->vram_peak_mib);
		snprintf(out[n++], RT_EFF_LEN, "VRAM: %s given, peaked at %s (%.0f %%)", a, b,
		         e->vram_pct);
	}
	if (n < max && e->note && *e->note)
		snprintf(out[n++], RT_EFF_LEN, "%s", e->note);
	return n;
}

void rt_answer_line(char *buf, size_t cap, const struct rt_runstats *st,
                    const struct rt_efficiency *e, const struct rt_recommendation *r)
{
	char used[32], given[32], reco[48];
	int p = st->has_proc;
	double d = p ? rt_stats_secs(st, RT_V_PROC_UTIME) : st->duration;
	d = d > 0 ? d : 1;
	double cores = (p ? sum_of(st, RT_V_PROC_UTIME) + sum_of(st, RT_V_PROC_STIME)
	                  : sum_of(st, RT_V_UTIME) + sum_of(st, RT_V_STIME)) /
	               d;
	mib_text(used, sizeof(used), st->mem_peak_mib > 0 ? st->mem_peak_mib : 0);
	mib_text(reco + (r->memory_at_least ? 9 : 0), sizeof(reco) - 9, (double)r->memory_mib);
	if (r->memory_at_least)
		memcpy(reco, "at least ", 9);
	size_t n = 0;
	if (e->known && e->cpu_given > 0)
		n += (size_t)snprintf(buf, cap, "used %.1f of %g cores", cores, e->cpu_given);
	else
		n += (size_t)snprintf(buf, cap, "used %.1f cores", cores);
	if (n < cap && e->known && e->mem_given_mib > 0) {
		mib_text(given, sizeof(given), e->mem_given_mib);
		n += (size_t)snprintf(buf + n, cap - n, " and %s of %s", used, given);
	} else if (n < cap) {
		n += (size_t)snprintf(buf + n, cap - n, " and %s at the peak", used);
	}
	if (n < cap && r->gpu) {
		char vram[32];
		mib_text(vram, sizeof(vram), (double)r->vram_mib);
		snprintf(buf + n, cap - n, ": %ld vCPU%s, %s and %ld GPU%s with %s VRAM%s would do",
		         r->cpu, r->cpu == 1 ? "" : "s", reco, r->gpu, r->gpu == 1 ? "" : "s", vram,
		         r->gpu == 1 ? "" : " each");
	} else if (n < cap) {
		snprintf(buf + n, cap - n, ": %ld vCPU%s and %s would do", r->cpu,
		         r->cpu == 1 ? "" : "s", reco);
	}
}

void rt_json_add_efficiency(cJSON *obj, const struct rt_efficiency *e)
{
	if (!e->known) { /* a run of an rt before 0.3 */
		cJSON_AddNullToObject(obj, "allocation_given");
		cJSON_AddNullToObject(obj, "efficiency");
		return;
	}
	cJSON *g = cJSON_AddObjectToObject(obj, "allocation_given");
	cJSON_AddNumberToObject(g, "cpu", e->cpu_given);
	add_str_or_null(g, "cpu_from", e->cpu_from);
	add_num_or_null(g, "memory_mib", e->mem_given_mib);
	add_str_or_null(g, "memory_from", e->mem_from);
	cJSON_AddNumberToObject(g, "gpu", e->gpu_given);
	add_str_or_null(g, "gpu_from", e->gpu_from);
	add_num_or_null(g, "vram_mib", e->vram_given_mib >= 0 ? e->vram_given_mib : NAN);
	cJSON_AddBoolToObject(g, "whole_host", e->whole_host);
	add_str_or_null(g, "note", e->note);
	cJSON *o = cJSON_AddObjectToObject(obj, "efficiency");
	add_num_or_null(o, "cpu_pct", e->cpu_pct);
	add_num_or_null(o, "cpu_mean_cores", e->cpu_mean);
	add_num_or_null(o, "memory_pct", e->mem_pct);
	add_num_or_null(o, "memory_peak_mib", e->mem_peak_mib);
	add_num_or_null(o, "gpu_pct", e->gpu_given ? e->gpu_pct : NAN);
	add_num_or_null(o, "gpus_used", e->gpu_given ? e->gpu_used : NAN);
	add_num_or_null(o, "vram_pct", e->vram_pct >= 0 ? e->vram_pct : NAN);
}

/* The ticks Mermaid draws on a numeric axis from lo to hi: d3's linear
 * ticks for a count of 10 (a step of 1, 2 or 5 x 10^k; from 10 to 16 of
 * them, labels running into each other past 12). */
static int d3_ticks(double lo, double hi)
{
	double step = (hi - lo) / 10;
	if (!(step > 0))
		return 1;
	double power = floor(log10(step)), error = step / pow(10, power);
	double factor = error >= sqrt(50) ? 10 : error >= sqrt(10) ? 5 : error >= sqrt(2) ? 2 : 1;
	double inc = pow(10, power) * factor;
	double i1 = round(lo / inc), i2 = round(hi / inc);
	if (i1 * inc < lo)
		i1++;
	if (i2 * inc > hi)
		i2--;
	return (int)(i2 - i1 + 1);
}

/* One Mermaid xychart-beta of column id over the run (GitHub renders it),
 * at most 100 points: a bucket's mean (agg 0) or max (agg 1), each at its
 * last line's time. */
static void mermaid(FILE *f, const struct rt_answer *a, unsigned id, const char *title,
                    const char *unit, int agg)
{
	const struct rt_series *s = &a->series;
	int c = rt_stats_col(id);
	if (c < 0 || !s->n || !a->st.col[c].present)
		return;
	size_t per = (s->n + 99) / 100, nb = (s->n + per - 1) / per;
	double top = 0;
	for (size_t i = 0; i < s->n; i++)
		if (!isnan(s->col[c][i]) && s->col[c][i] > top)
			top = s->col[c][i];
	/* a numeric x axis (a label per point ran together: "0.51.01.52.0..."):
	 * Mermaid spreads the points evenly from its start to its end, so it
	 * runs from the first point's time to the last's (or from 0 when that
	 * is the same to a point), in seconds, minutes past 5 minutes, hours
	 * past 5 hours, or the next unit when that gives at most 12 labels */
	double first = s->elapsed[per - 1 < s->n ? per - 1 : s->n - 1], end = s->elapsed[s->n - 1];
	static const char *const uname[] = {"seconds", "minutes", "hours"};
	static const double usec[] = {1, 60, 3600};
	int pref = end > 5 * 3600 ? 2 : end > 300 ? 1 : 0, u = pref, xp = 0;
	double lo = 0, hi = end;
	for (int k = 0; k < 6; k++) {
		int cand = (pref + k / 2) % 3;
		double l = (k % 2 ? first : 0) / usec[cand], h = end / usec[cand], span = h - l;
		int p = span < 0.1 ? 3 : span < 1 ? 2 : span < 10 ? 1 : 0;
		l = round(l * pow(10, p)) / pow(10, p); /* as printed */
		h = round(h * pow(10, p)) / pow(10, p);
		if (k == 0 || d3_ticks(l, h) <= 12) {
			u = cand, xp = p, lo = l, hi = h;
			if (d3_ticks(l, h) <= 12)
				break;
		}
	}
	/* an explicit theme: the line in a blue and the text in a grey that
	 * read on GitHub's light and dark backgrounds (the default theme drew
	 * the line in #ECECFF, nearly white); y from 0 */
	fprintf(f,
	        "\n```mermaid\n%%%%{init: {\"theme\": \"base\", \"themeVariables\": {\"xyChart\": "
	        "{\"backgroundColor\": \"transparent\", \"plotColorPalette\": \"#2f81f7\", "
	        "\"titleColor\": \"#8b949e\", \"xAxisLabelColor\": \"#8b949e\", "
	        "\"xAxisTitleColor\": \"#8b949e\", \"xAxisTickColor\": \"#8b949e\", "
	        "\"xAxisLineColor\": \"#8b949e\", \"yAxisLabelColor\": \"#8b949e\", "
	        "\"yAxisTitleColor\": \"#8b949e\", \"yAxisTickColor\": \"#8b949e\", "
	        "\"yAxisLineColor\": \"#8b949e\"}}}}%%%%\nxychart-beta\n  title \"%s\"\n"
	        "  x-axis \"%s\" %.*f --> %.*f\n  y-axis \"%s\" 0 --> %.*f\n  line [",
	        title, uname[u], xp, lo, xp, hi, unit, top < 10 ? 2 : 0, top > 0 ? top * 1.1 : 1);
	for (size_t b = 0; b < nb; b++) {
		double v = 0, w = 0, mx = 0;
		for (size_t i = b * per; i < s->n && i < (b + 1) * per; i++) {
			double x = s->col[c][i];
			if (isnan(x))
				continue;
			v += x;
			w += 1;
			if (x > mx || w == 1)
				mx = x;
		}
		fprintf(f, "%s%.2f", b ? ", " : "", agg ? mx : w > 0 ? v / w : 0);
	}
	fputs("]\n```\n", f);
}

void rt_print_step_summary(FILE *f, const struct rt_answer *a)
{
	rt_print_summary_markdown(f, a);
	int p = a->st.has_proc;
	mermaid(f, a, p ? RT_V_PROC_CORES : RT_V_CPU_UTIL, p ? "CPU cores, job" : "CPU cores, host",
	        "cores", 0);
	mermaid(f, a, p ? RT_V_PROC_PSS : RT_V_MEM_USED,
	        p ? "memory MiB, job (PSS)" : "memory MiB, host used", "MiB", 1);
	fputc('\n', f);
}
