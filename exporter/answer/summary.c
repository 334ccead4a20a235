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
#include "summary_int.h"
#include "rt/common.h"
#include "rt/fmt.h"
#include "rt/runmeta.h"
#include "rt/sysroot.h"

/* ---- computing ----------------------------------------------------------- */

/* A job whose processes were read in part (the member walk's bounds:
 * depth, groups, members) never gets a smaller memory answer from the
 * processes that were read: its peak is its group's high-water mark. */
static void partial_tree_memory(struct rt_answer *a)
{
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(a->meta, "cgroup");
	const cJSON *b = cJSON_GetObjectItemCaseSensitive(c, "bounds_hit"), *v;
	int partial = 0, k = rt_stats_col(RT_V_CG_MEM_PEAK);
	if (!cJSON_IsArray(b))
		return;
	cJSON_ArrayForEach(v, b)
	{
		partial |= cJSON_IsString(v) && strcmp(v->valuestring, "environment") != 0;
	}
	if (!partial || k < 0 || !a->st.col[k].present)
		return;
	if (a->st.col[k].max > a->st.mem_peak_mib)
		a->st.mem_peak_mib = a->st.col[k].max;
}

/* The part killed under a limit of its own, below the job's (a pod's
 * container): the one the kill is said of. */
static void killed_part(struct rt_answer *a, double job_limit_mib)
{
	struct rt_job_part p[16];
	size_t n = rt_job_parts(a->meta, p, 16);
	const char *label = rt_job_parts_label(a->meta);
	for (size_t i = 0; i < n; i++)
		if (p[i].oom_kills > 0 && p[i].limit_mib > 0 &&
		    (job_limit_mib <= 0 || p[i].limit_mib < job_limit_mib)) {
			rt_copy_text(a->st.oom_part, sizeof(a->st.oom_part), p[i].name);
			a->st.oom_part_limit_mib = p[i].limit_mib;
			a->st.oom_part_kind = !strcmp(label, "steps")        ? "step"
			                      : !strcmp(label, "containers") ? "container"
			                                                     : "part";
			return;
		}
}

/* A job known by its cgroup: what its group said at the run's end. */
static void job_group_memory(struct rt_answer *a)
{
	double kills = rt_meta_num(a->meta, "cgroup", "oom_kills");
	double peak = rt_meta_num(a->meta, "cgroup", "mem_peak_bytes");
	double limit = rt_meta_num(a->meta, "cgroup", "mem_limit_bytes");
	double hits = rt_meta_num(a->meta, "cgroup", "limit_hits");
	if (!isfinite(kills) || kills < 0)
		return; /* a run of an older rt, or a group whose memory was unread */
	killed_part(a, limit > 0 ? limit / 1048576.0 : 0);
	a->st.job_oom_kills = kills;
	a->st.job_limit_hits = isfinite(hits) && hits >= 0 ? hits : -1;
	a->st.job_mem_limit_mib = isfinite(limit) && limit > 0 ? limit / 1048576.0 : 0;
	a->st.job_mem_peak_mib = isfinite(peak) && peak > 0 ? peak / 1048576.0 : -1;
	/* the group's high-water mark since it was made is the job's peak
	 * when it was killed (a growth killed between samples); otherwise it
	 * holds the page cache the kernel let fill the limit, said beside */
	if (kills > 0 && a->st.job_mem_peak_mib > a->st.mem_peak_mib)
		a->st.mem_peak_mib = a->st.job_mem_peak_mib;
}

static void answer_finish(struct rt_answer *a)
{
	rt_stats_compute(&a->series, &a->st);
	a->meta = a->ri.meta_json ? cJSON_Parse(a->ri.meta_json) : NULL;
	partial_tree_memory(a);
	job_group_memory(a);
	double before = rt_meta_num(a->meta, NULL, "peak_before_tracking_mib");
	a->st.hwm_before_mib = isfinite(before) && before > 0 ? before : 0;
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
	const struct rt_answer_opts *o;
	uint64_t *ids;
	size_t n, cap;
};

/* Whether a run's metadata is one of the runs o selects: its job, and its
 * stage and external run id when o names them. */
static int selected(const struct rt_answer_opts *o, const char *meta, size_t len)
{
	struct rt_run_fields f;
	if (rt_runmeta_read(meta, len, &f) || !rt_run_who_matches(o, meta, len))
		return 0;
	if (!o->any_name && (!f.has_job_name || strcmp(f.job_name, o->job)))
		return 0;
	if (!o->stage && !o->ext_run)
		return 1;
	cJSON *m = cJSON_ParseWithLength(meta, len);
	const char *stage = rt_meta_str(m, "metadata", "stage_name");
	const char *ext = rt_meta_str(m, "metadata", "external_run_id");
	int ok = (!o->stage || (stage && !strcmp(stage, o->stage))) &&
	         (!o->ext_run || (ext && !strcmp(ext, o->ext_run)));
	cJSON_Delete(m);
	return ok;
}

static int job_cb(void *vctx, uint64_t run, const char *meta, size_t len)
{
	struct job_ctx *c = vctx;
	if (!selected(c->o, meta, len))
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

/* "job 'J'", with the stage and the external run id o names. */
static void selection_name(const struct rt_answer_opts *o, char *out, size_t cap)
{
	if (o->any_name) { /* (selected by who ran it: --job-id, --user, --scheduler) */
		snprintf(out, cap, "%s%s%s%s%s%s%s%s%s%s", o->job_id ? "job id " : "",
		         o->job_id ? o->job_id : "", o->user ? " of user " : "",
		         o->user ? o->user : "", o->pod ? " pod " : "", o->pod ? o->pod : "",
		         o->ns ? " in namespace " : "", o->ns ? o->ns : "",
		         o->scheduler ? " under " : "", o->scheduler ? o->scheduler : "");
		return;
	}
	snprintf(out, cap, "job '%s'%s%s%s%s%s", o->job, o->stage ? ", stage '" : "",
	         o->stage ? o->stage : "", o->stage ? "'" : "",
	         o->ext_run ? ", external run id " : "", o->ext_run ? o->ext_run : "");
}

/* rt_answer_job; quiet: nothing said when no run is there. */
static int answer_job(struct rt_store *s, const struct rt_answer_opts *o, struct rt_answer **out,
                      size_t *n, int quiet)
{
	struct job_ctx c = {o, NULL, 0, 0};
	unsigned long last = o->last;
	char what[600];
	selection_name(o, what, sizeof(what));
	*out = NULL;
	*n = 0;
	int rc = rt_store_list_runs(s, job_cb, &c);
	if (rc) {
		rt_say("cannot list the runs in %s: %s", rt_store_dir(s), rt_strerror(rc));
		free(c.ids);
		return 1;
	}
	if (!c.n) {
		if (!quiet)
			rt_say("no stored run of %s in %s (see rt-export runs)", what,
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
		if (!quiet)
			rt_say("no readable run of %s in %s (see rt-export runs)", what,
			       rt_store_dir(s));
		return 1;
	}
	*out = v;
	*n = k;
	return 0;
}

int rt_answer_job(struct rt_store *s, const struct rt_answer_opts *o, struct rt_answer **out,
                  size_t *n)
{
	return answer_job(s, o, out, n, 0);
}

int rt_answer_job_quiet(struct rt_store *s, const struct rt_answer_opts *o, struct rt_answer **out,
                        size_t *n)
{
	return answer_job(s, o, out, n, 1);
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

const struct rt_colstat *ans_col(const struct rt_runstats *st, unsigned name)
{
	int c = rt_stats_col(name);
	return c >= 0 && st->col[c].present ? &st->col[c] : NULL;
}

double ans_sum_of(const struct rt_runstats *st, unsigned name)
{
	const struct rt_colstat *c = ans_col(st, name);
	return c ? c->sum : 0;
}

/* s with control characters (newlines, tabs, terminal escapes: names and
 * commands are the user's bytes) as single spaces, into buf[cap]. */
void ans_clean(char *buf, size_t cap, const char *s)
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

void ans_command_line(const cJSON *meta, char *buf, size_t cap)
{
	struct rt_buf b = {0};
	cJSON *cmd = cJSON_GetObjectItemCaseSensitive(meta, "command");
	cJSON *shown = cJSON_IsArray(cmd) ? one_line_args(cmd) : NULL;
	rt_shell_join(&b, shown ? shown : cmd);
	cJSON_Delete(shown);
	rt_buf_put(&b, "", 0);
	ans_clean(buf, cap, b.p ? b.p : "");
	if (b.len > cap && cap > 4)
		strcpy(buf + rt_utf8_cut(buf, cap - 4), "...");
	rt_buf_free(&b);
}
