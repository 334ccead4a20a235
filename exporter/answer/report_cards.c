/*
 * report_cards.c - the report's cards (the job, the host, what it was given, the
 * cloud), its summary table and the recommendation's section.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "answer/answer.h"
#include "answer/report_int.h"
#include "rt/common.h"
#include "rt/runmeta.h"
#include "rt/safefile.h"

/* ---- cards and tables ------------------------------------------------------ */
static void card_row(struct rt_buf *b, const char *k, const char *v)
{
	rt_buf_puts(b, "<tr><th>");
	rep_html(b, k);
	rt_buf_puts(b, "</th><td>");
	rep_html(b, v && *v ? v : "-");
	rt_buf_puts(b, "</td></tr>\n");
}

static void card_num(struct rt_buf *b, const char *k, double v, int prec, const char *unit)
{
	char t[64] = "-";
	if (isfinite(v))
		snprintf(t, sizeof(t), "%.*f%s%s", prec, v, *unit ? " " : "", unit);
	card_row(b, k, t);
}

/* The run's state in the words the reference's report uses: Pending while
 * it is recorded, Finished, Failed (or Unknown: its end was not seen). */
static const char *status_word(const char *status)
{
	switch (rt_run_status_of(status)) {
	case RT_RUN_RUNNING: return "Pending";
	case RT_RUN_FINISHED:
	case RT_RUN_UNTRACKED: return "Finished";
	case RT_RUN_UNKNOWN: return "Unknown";
	default: return "Failed";
	}
}

void rep_job_card(struct rt_buf *b, const struct rt_answer *a)
{
	char t[512], u[64];
	rt_buf_puts(b, "<section class=card><h2>Job</h2><table>\n");
	card_row(b, "name", a->ri.job_name);
	t[0] = '\0';
	struct rt_buf cb = {0}; /* shell-quoted: it can be pasted back */
	rt_shell_join(&cb, cJSON_GetObjectItemCaseSensitive(a->meta, "command"));
	rt_buf_put(&cb, "", 0);
	card_row(b, "command", cb.len ? cb.p : "(standalone: the whole system)");
	rt_buf_free(&cb);
	snprintf(t, sizeof(t), "%s (%s%s)", status_word(a->ri.status), a->ri.status,
	         a->partial ? ", partial" : "");
	card_row(b, "status", t);
	if (a->has_exit_code)
		snprintf(t, sizeof(t), "%d", a->exit_code);
	card_row(b, "exit code", a->has_exit_code ? t : NULL);
	rt_fmt_iso8601(t, sizeof(t), a->ri.start_ns);
	card_row(b, "start", a->ri.start_ns ? t : NULL);
	rt_fmt_iso8601(t, sizeof(t), a->ri.end_ns);
	card_row(b, "end", a->ri.end_ns ? t : NULL);
	rt_fmt_duration(u, sizeof(u), a->st.duration);
	snprintf(t, sizeof(t), "%s (%llu sample%s every %g s)", u, (unsigned long long)a->st.lines,
	         a->st.lines == 1 ? "" : "s", a->ri.interval);
	card_row(b, "duration", t);
	rt_buf_puts(b, "</table></section>\n");
}

void rep_host_card(struct rt_buf *b, const struct rt_answer *a)
{
	char t[256];
	const cJSON *m = a->meta;
	rt_buf_puts(b, "<section class=card><h2>Host</h2><table>\n");
	card_row(b, "hostname", rt_meta_str(m, "host", "hostname"));
	card_row(b, "OS", "Linux");
	card_num(b, "vCPUs", rt_meta_num(m, "host", "vcpus"), 0, "");
	card_row(b, "CPU", rt_meta_str(m, "host", "cpu_model"));
	card_num(b, "memory", rt_meta_num(m, "host", "memory_mib"), 0, "MiB");
	/* the devices' size: a filesystem on it has less (the summary's "of N
	 * GB" is the filesystem's, as df says) */
	card_num(b, "storage (devices)", rt_meta_num(m, "host", "storage_gb"), 1, "GB");
	double g = rt_meta_num(m, "host", "gpu_count");
	const char *gm = rt_meta_str(m, "host", "gpu_model");
	if (g > 0)
		snprintf(t, sizeof(t), "%.0f x %s", g, gm ? gm : "GPU");
	else
		snprintf(t, sizeof(t), "none");
	card_row(b, "GPUs", t);
	card_num(b, "VRAM", g > 0 ? rt_meta_num(m, "host", "gpu_memory_mib") : NAN, 0, "MiB");
	char why[200], alloc[260];
	const char *name = rt_allocation_name(rt_stats_allocation_why(&a->st, why, sizeof(why)));
	if (name)
		snprintf(alloc, sizeof(alloc), "%s: %s", name, why);
	card_row(b, "allocation", name ? alloc : NULL);
	rt_buf_puts(b, "</table></section>\n");
}

/* What the job was given against what it used (the run's allocation). */
void rep_given_card(struct rt_buf *b, const struct rt_answer *a)
{
	struct rt_efficiency e;
	struct rt_recommendation r;
	rt_recommend(&a->st, &r);
	rt_efficiency(&a->st, a->meta, &e);
	char line[300], eff[6][RT_EFF_LEN];
	rt_buf_puts(b, "<section class=card><h2>Given against used</h2><table>\n");
	if (a->st.lines) {
		rt_answer_line(line, sizeof(line), &a->st, &e, &r);
		card_row(b, "answer", line);
	}
	size_t n = rt_efficiency_text(&e, &r, eff, 6);
	for (size_t i = 0; i < n; i++)
		card_row(b, i ? "" : "allocation", eff[i]);
	if (!e.known)
		card_row(b, "allocation", "not recorded (a run of an rt before 0.3)");
	else if (!n)
		card_row(b, "allocation", "the whole host; nothing was asked or limited");
	rt_buf_puts(b, "</table></section>\n");
}

void rep_cloud_card(struct rt_buf *b, const struct rt_offer *o)
{
	rt_buf_puts(b, "<section class=card><h2>Cloud</h2><table>\n");
	if (!o->cloud.vendor[0]) { /* what discovery found, or why it could not run */
		card_row(b, "vendor",
		         o->cloud_known
		             ? "none: not a cloud instance (no metadata service answered)"
		             : "not known: the run was recorded on another host, never "
		               "discovered from there");
	} else {
		card_row(b, "vendor", o->cloud.vendor);
		card_row(b, "region", o->cloud.region);
		card_row(b, "zone", o->cloud.zone);
		card_row(b, "instance type", o->cloud.instance_type);
		card_num(b, "price", o->price_here, 4, "USD/hour");
		double cost = isfinite(o->price_here) ? o->price_here * o->duration / 3600.0 : NAN;
		/* a short run costs fractions of a cent: shown, not as 0.0000 */
		card_num(b, "run cost", cost, isfinite(cost) && cost < 0.01 ? 6 : 4, "USD");
	}
	rt_buf_puts(b, "</table></section>\n");
}

void rep_summary_table(struct rt_buf *b, const struct rt_answer *a)
{
	struct rt_summary_row rows[RT_SUMMARY_ROWS];
	size_t n = rt_summary_rows(&a->st, a->meta, rows, RT_SUMMARY_ROWS);
	char v[64];
	rt_buf_puts(
	    b, "<section class=wide><h2>Summary</h2><table class=stats>\n"
	       "<tr><th></th><th>mean</th><th>p95</th><th>max</th><th>total, note</th></tr>\n");
	for (size_t i = 0; i < n; i++) {
		const struct rt_summary_row *r = &rows[i];
		rt_buf_puts(b, "<tr><th>");
		rep_html(b, r->label);
		rt_buf_puts(b, "</th>");
		if (r->c) {
			double vals[3] = {r->c->mean, r->c->p95, r->c->max};
			for (int k = 0; k < 3; k++) {
				snprintf(v, sizeof(v), "%.*f", r->prec, vals[k]);
				rt_buf_puts(b, "<td>");
				rep_html(b, v);
				rt_buf_puts(b, "</td>");
			}
		} else {
			rt_buf_puts(b, "<td colspan=3></td>");
		}
		rt_buf_puts(b, "<td>");
		rep_html(b, r->note);
		rt_buf_puts(b, "</td></tr>\n");
	}
	rt_buf_puts(b, "</table></section>\n");
}

void rep_reco_section(struct rt_buf *b, const struct rt_recommendation *r, const struct rt_offer *o)
{
	char t[256];
	rt_buf_puts(b, "<section class=wide><h2>Recommended for the next run</h2><p class=reco>");
	const char *least = r->memory_at_least ? "at least " : "";
	if (r->cpu_p95 > r->cpu)
		snprintf(t, sizeof(t), "%ld vCPU%s (%ld at the p95 of its use), %s%ld MiB memory",
		         r->cpu, r->cpu == 1 ? "" : "s", r->cpu_p95, least, r->memory_mib);
	else
		snprintf(t, sizeof(t), "%ld vCPU%s, %s%ld MiB memory", r->cpu,
		         r->cpu == 1 ? "" : "s", least, r->memory_mib);
	rep_html(b, t);
	rt_gpu_reco_text(t, sizeof(t), r);
	rep_html(b, t);
	rt_buf_puts(b, "</p><p class=note>");
	rep_html(b, r->from_system ? "From the whole system's use: this run tracked no process."
	            : r->gpu       ? "From the process tree: mean CPU rounded, peak PSS + 20 % "
	                             "rounded up to a server size, as many GPUs as it held at once "
	                             "with its peak VRAM on one GPU + 20 %."
	                           : "From the process tree: mean CPU rounded, peak PSS + 20 % "
	                             "rounded up to a server size.");
	rt_buf_puts(b, "</p>\n");
	if (r->why[0]) {
		rt_buf_puts(b, "<p class=note>Raised above the use measured: ");
		rep_html(b, r->why);
		rt_buf_puts(b, ".</p>\n");
	}
	if (o->asked && !o->ok) {
		rt_buf_puts(b, "<p class=note>No server list: ");
		rep_html(b, o->why);
		rt_buf_puts(b, "</p>\n");
	} else if (o->asked && o->nservers) {
		rt_buf_puts(b,
		            "<table class=servers><tr><th>vendor</th><th>instance</th><th>name</th>"
		            "<th>vCPUs</th><th>memory</th><th>GPUs</th><th>USD/hour</th>"
		            "<th>this run</th></tr>\n");
		for (size_t i = 0; i < o->nservers; i++) {
			const struct rt_server *v = &o->servers[i];
			char mem[32], price[32] = "-", cost[32] = "-";
			rt_fmt_bytes(mem, sizeof(mem),
			             isfinite(v->memory_amount) ? v->memory_amount * 1048576.0 : 0);
			if (isfinite(v->min_price_ondemand)) {
				snprintf(price, sizeof(price), "%.4f", v->min_price_ondemand);
				snprintf(cost, sizeof(cost), "%.4f",
				         v->min_price_ondemand * o->duration / 3600.0);
			}
			const char *cells[] = {v->vendor_id, v->api_reference, v->display_name};
			rt_buf_puts(b, "<tr>");
			for (int c = 0; c < 3; c++) {
				rt_buf_puts(b, "<td>");
				rep_html(b, cells[c]);
				rt_buf_puts(b, "</td>");
			}
			rt_buf_printf(b, "<td>%.0f</td><td>", isfinite(v->vcpus) ? v->vcpus : 0);
			rep_html(b, mem);
			rt_buf_printf(b, "</td><td>%.0f</td><td>%s</td><td>%s</td></tr>\n",
			              isfinite(v->gpu_count) ? v->gpu_count : 0, price, cost);
		}
		rt_buf_puts(b, "</table>\n");
		if (isfinite(o->price_here) && isfinite(o->servers[0].min_price_ondemand)) {
			double here = o->price_here * o->duration / 3600.0;
			double there = o->servers[0].min_price_ondemand * o->duration / 3600.0;
			int pr = here < 0.01 ? 6 : 4;
			snprintf(t, sizeof(t),
			         "This run cost %.*f USD on %s %s; on the cheapest fit %.*f USD "
			         "(saving %.*f USD).",
			         pr, here, o->cloud.vendor, o->cloud.instance_type, pr, there, pr,
			         here - there);
			rt_buf_puts(b, "<p class=note>");
			rep_html(b, t);
			rt_buf_puts(b, "</p>\n");
		}
	}
	rt_buf_puts(b, "</section>\n");
}
