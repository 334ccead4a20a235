/*
 * summary_notes.c - what every form of the summary says: its rows (one table for text,
 * JSON and the report), the findings, and the notes (given against used,
 * CPU wanted, the server allocation, the recommendation and why, the
 * budget, each GPU).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "answer/answer.h"
#include "answer/summary_int.h"
#include "rt/common.h"
#include "rt/runmeta.h"
#include "rt/sysroot.h"

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
	const struct rt_colstat *c = ans_col(st, RT_V_GPU_UTILIZED);
	return (n > 0) || (c && c->max > 0);
}

/* "CPU time T s (user U, system S)" from the sums of two columns. */
static void cpu_time(char *buf, size_t cap, const struct rt_runstats *st, unsigned ucol,
                     unsigned scol)
{
	double u = ans_sum_of(st, ucol), s = ans_sum_of(st, scol);
	snprintf(buf, cap, "CPU time %.2f s (user %.2f, system %.2f)", u + s, u, s);
}

/* A job found by its cgroup after it started (the node mode finds a
 * group within a quarter second): the CPU its group's counter had at the
 * first sample, which no interval holds, said beside the sum. */
static void cpu_before(char *buf, size_t cap, const struct rt_runstats *st, const cJSON *meta)
{
	double before = rt_meta_num(meta, "cgroup", "cpu_before_secs");
	double in = ans_sum_of(st, RT_V_PROC_UTIME) + ans_sum_of(st, RT_V_PROC_STIME);
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
			const struct rt_colstat *ca = ans_col(st, d->id), *cb = ans_col(st, d->id2);
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
		if (!(r->c = ans_col(st, d->id)))
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

cJSON *rt_json_summary_rows(const struct rt_runstats *st, const cJSON *meta)
{
	struct rt_summary_row rows[RT_SUMMARY_ROWS];
	size_t n = rt_summary_rows(st, meta, rows, RT_SUMMARY_ROWS);
	cJSON *arr = cJSON_CreateArray();
	for (size_t i = 0; i < n; i++) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "label", rows[i].label);
		double nan = NAN;
		ans_add_num_or_null(o, "mean", rows[i].c ? rows[i].c->mean : nan);
		ans_add_num_or_null(o, "p95", rows[i].c ? rows[i].c->p95 : nan);
		ans_add_num_or_null(o, "max", rows[i].c ? rows[i].c->max : nan);
		ans_add_str_or_null(o, "note", rows[i].note);
		cJSON_AddItemToArray(arr, o);
	}
	return arr;
}

void ans_reco_text(char *buf, size_t cap, const struct rt_recommendation *r)
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

/* " at hh:mm:ss" of a moment secs into the run, "" when unknown. */
static void at_clock(char *buf, size_t cap, uint64_t start_ns, double secs)
{
	char iso[32];
	buf[0] = '\0';
	if (secs < 0 || !start_ns)
		return;
	rt_fmt_iso8601(iso, sizeof(iso), start_ns + (uint64_t)(secs * 1e9));
	snprintf(buf, cap, " at %.8s", iso + 11); /* hh:mm:ss */
}

/* The job OOM-killed in its cgroup: when, and what its limit was. */
static void oom_text(const struct rt_runstats *st, const struct rt_findings *x, uint64_t start_ns,
                     char *out)
{
	char when[32], used[64] = "";
	at_clock(when, sizeof(when), start_ns, x->oom_at);
	if (st->oom_part[0]) /* (a part's own limit, below the job's) */
		snprintf(
		    out, RT_FINDING_LEN,
		    "OOM-killed in its %s %s's cgroup%s: its %.0f MiB limit was too small (%.0f "
		    "kill%s)",
		    st->oom_part_kind, st->oom_part, when, st->oom_part_limit_mib, x->oom_kills,
		    x->oom_kills == 1 ? "" : "s");
	else if (st->job_oom_kills > 0 && x->mem_limit_mib > 0) /* (a job's own group) */
		snprintf(out, RT_FINDING_LEN,
		         "OOM-killed in its cgroup%s: its %.0f MiB limit was too small (%.0f "
		         "kill%s)",
		         when, x->mem_limit_mib, x->oom_kills, x->oom_kills == 1 ? "" : "s");
	else {
		if (x->mem_used_max_mib > 0 && x->mem_limit_mib > 0)
			snprintf(used, sizeof(used), " with %.2f of %.2f GiB in use",
			         x->mem_used_max_mib / 1024.0, x->mem_limit_mib / 1024.0);
		snprintf(out, RT_FINDING_LEN,
		         "the job was OOM-killed%s%s (%.0f kill%s in its cgroup)", when, used,
		         x->oom_kills, x->oom_kills == 1 ? "" : "s");
	}
}

int rt_host_oom_text(const struct rt_runstats *st, uint64_t start_ns, char *out, size_t cap)
{
	struct rt_findings x;
	char when[32];
	rt_findings(st, &x);
	if (x.host_oom_kills <= 0)
		return 0;
	at_clock(when, sizeof(when), start_ns, x.oom_in_cgroup ? -1 : x.oom_at);
	snprintf(out, cap,
	         "%.0f process%s elsewhere on the host %s OOM-killed during the run%s (not "
	         "this job's)",
	         x.host_oom_kills, x.host_oom_kills == 1 ? "" : "es",
	         x.host_oom_kills == 1 ? "was" : "were", when);
	return 1;
}

size_t rt_findings_text(const struct rt_runstats *st, uint64_t start_ns, char out[][RT_FINDING_LEN],
                        size_t max)
{
	struct rt_findings x;
	rt_findings(st, &x);
	size_t n = 0;
	if (x.oom_kills > 0 && x.oom_in_cgroup && n < max)
		oom_text(st, &x, start_ns, out[n++]);
	if (x.limit_hits > 0 && !x.oom_kills && n < max)
		snprintf(out[n++], RT_FINDING_LEN,
		         "reached its %.0f MiB limit %.0f time%s (the kernel reclaimed its page "
		         "cache to stay under it; no process was killed)",
		         x.mem_limit_mib, x.limit_hits, x.limit_hits == 1 ? "" : "s");
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
	const struct rt_colstat *jw = ans_col(st, RT_V_PROC_WRITE);
	const struct rt_colstat *hw = ans_col(st, RT_V_DISK_WRITE);
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

/* What the member walk's bounds left unread (cgroup.bounds_hit), in one
 * sentence: 0 when none was met. */
static size_t bounds_text(const cJSON *meta, char *buf, size_t cap)
{
	static const char *const what[][2] = {
	    {"depth", "its groups nest deeper than 64 levels"},
	    {"groups", "it has more than 512 groups"},
	    {"members", "it has 256 processes or more (256 are read a sample)"},
	    {"environment", "no process's environment named it in 10 samples (not read again)"}};
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(meta, "cgroup");
	const cJSON *b = cJSON_GetObjectItemCaseSensitive(c, "bounds_hit"), *v;
	size_t at = 0;
	int partial = 0;
	if (!cJSON_IsArray(b))
		return 0;
	cJSON_ArrayForEach(v, b)
	{
		for (size_t i = 0; i < 4 && at < cap; i++)
			if (cJSON_IsString(v) && !strcmp(v->valuestring, what[i][0])) {
				at += (size_t)snprintf(buf + at, cap - at, "%s%s", at ? "; " : "",
				                       what[i][1]);
				partial |= i < 3;
			}
	}
	if (!at || at >= cap)
		return 0;
	if (partial)
		snprintf(buf + at, cap - at,
		         ": its CPU and memory are its group's counters; its processes were read "
		         "in part (PSS partial)");
	return strlen(buf);
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

/* A job's steps or containers, a line each (their own groups' figures),
 * and a pod's containers' own resources. */
static size_t parts_notes(const struct rt_answer *a, struct rt_note *out, size_t max)
{
	struct rt_job_part p[16];
	size_t np = rt_job_parts(a->meta, p, 16), n = 0;
	const char *label = rt_job_parts_label(a->meta);
	struct rt_note *x;
	const struct rt_runstats *st = &a->st;
	if (st->job_mem_peak_mib > 0 && st->job_oom_kills <= 0 &&
	    st->job_mem_peak_mib > st->mem_peak_mib + 1 && (x = note(out, &n, max, "cgroup peak")))
		snprintf(x->text, sizeof(x->text),
		         "%.0f MiB: its group's high-water mark since it was made, page cache "
		         "included (the answer goes by its processes' %.0f MiB)",
		         st->job_mem_peak_mib, st->mem_peak_mib > 0 ? st->mem_peak_mib : 0);
	for (size_t i = 0; i < np; i++)
		if ((x = note(out, &n, max, i ? "" : label)) &&
		    !rt_job_part_text(&p[i], x->text, sizeof(x->text)))
			n--;
	size_t first = n;
	for (size_t i = 0; i < np && !strcmp(label, "containers"); i++)
		if ((x = note(out, &n, max, n > first ? "" : "per container")) &&
		    !rt_container_line(&p[i], a->st.duration, x->text, sizeof(x->text)))
			n--;
	return n;
}

/* A Slurm job: how Slurm saw its end, and seff's figures beside rt's. */
static size_t slurm_notes(const struct rt_answer *a, struct rt_note *out, size_t max)
{
	struct rt_slurm_end e;
	struct rt_seff f;
	size_t n = 0;
	struct rt_note *x;
	if (rt_slurm_end(a->meta, &e) && (x = note(out, &n, max, "Slurm says")) &&
	    !rt_slurm_end_text(&e, x->text, sizeof(x->text)))
		n--;
	if (rt_seff(&a->st, a->meta, &f) && (x = note(out, &n, max, "seff's way")) &&
	    !rt_seff_text(&f, x->text, sizeof(x->text)))
		n--;
	return n;
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
	if (e.known && e.whole_host && e.note && *e.note && (x = note(out, &n, max, "given")))
		snprintf(x->text, sizeof(x->text), "the whole host; %s", e.note); /* a claim */
	n += parts_notes(a, out + n, max - n);
	n += slurm_notes(a, out + n, max - n);
	if ((x = note(out, &n, max, "processes read")) &&
	    !bounds_text(a->meta, x->text, sizeof(x->text)))
		n--;
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
	if ((x = note(out, &n, max, "on the host")) &&
	    !rt_host_oom_text(st, a->ri.start_ns, x->text, sizeof(x->text)))
		n--;
	if ((x = note(out, &n, max, "recommended")))
		ans_reco_text(x->text, sizeof(x->text), &r);
	if (r.mem_note[0] && (x = note(out, &n, max, "")))
		snprintf(x->text, sizeof(x->text), "%s", r.mem_note);
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
