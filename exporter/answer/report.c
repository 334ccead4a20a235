/*
 * report.c - `rt-export report RUN`: one self-contained HTML page.
 *
 * The page carries everything it needs: the dygraphs library (Debian's
 * libjs-dygraphs, read from its installed path when the report is made and
 * inlined, never a link), the run's cards and tables, and the chart data.
 * It opens offline from file:// and fetches nothing.
 *
 * Long runs stay small: each chart gets at most RT_REPORT_BUCKETS points,
 * each a time bucket with the minimum, the time-weighted mean and the
 * maximum of the lines in it (dygraphs' custom bars), so a one-second spike
 * in a day-long run still shows as a band reaching up to it.
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
#include "report_int.h"
#include "rt/common.h"
#include "rt/runmeta.h"
#include "rt/safefile.h"

/* ---- text helpers --------------------------------------------------------- */

void rep_html(struct rt_buf *b, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '<': rt_buf_puts(b, "&lt;"); break;
		case '>': rt_buf_puts(b, "&gt;"); break;
		case '&': rt_buf_puts(b, "&amp;"); break;
		case '"': rt_buf_puts(b, "&quot;"); break;
		case '\'': rt_buf_puts(b, "&#39;"); break;
		default:
			/* control bytes: shown, never passed on */
			if ((unsigned char)*s < 0x20 || *s == 0x7f)
				rt_buf_printf(b, "\\x%02x", (unsigned char)*s);
			else
				rt_buf_putc(b, *s);
		}
	}
}

/* A JSON string safe inside <script>: no "</" can close the element. */
void rep_js_str(struct rt_buf *b, const char *s)
{
	struct rt_buf t = {0};
	rt_buf_json_str(&t, s ? s : "");
	for (size_t i = 0; i < t.len; i++) {
		if (t.p[i] == '<')
			rt_buf_puts(b, "\\u003c");
		else
			rt_buf_putc(b, t.p[i]);
	}
	rt_buf_free(&t);
}

/* Append a file of the library, without its source-map comment (the page
 * must not ask for anything) and with "</" made harmless. */
static int inline_file(struct rt_buf *b, const char *dir, const char *name, int script)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	/* raw: reads a charting library's file of the system's, never writes */
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	struct rt_buf t = {0};
	char chunk[65536];
	ssize_t n;
	while ((n = read(fd, chunk, sizeof(chunk))) > 0)
		rt_buf_put(&t, chunk, (size_t)n);
	int err = n < 0 ? -errno : 0;
	close(fd);
	if (err || t.oom) {
		rt_buf_free(&t);
		return err ? err : -ENOMEM;
	}
	rt_buf_put(&t, "", 0);
	const char *end_tag = script ? "</script" : "</style";
	for (char *line = t.p; line && *line;) {
		char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line + 1) : strlen(line);
		if (!memmem(line, len, "sourceMappingURL=", 17)) {
			for (size_t i = 0; i < len; i++) {
				if (line[i] == '<' &&
				    !strncasecmp(line + i, end_tag, strlen(end_tag)))
					rt_buf_puts(b, "<\\");
				else
					rt_buf_putc(b, line[i]);
			}
		}
		line = nl ? nl + 1 : NULL;
	}
	rt_buf_putc(b, '\n');
	rt_buf_free(&t);
	return 0;
}

/* A number for the chart data: short, and null when not finite. */
void rep_num(struct rt_buf *b, double v)
{
	if (!isfinite(v))
		rt_buf_puts(b, "null");
	else
		rt_buf_printf(b, "%.6g", v);
}

/* ---- the page --------------------------------------------------------------- */

static const char page_css[] =
    "body{font:14px/1.4 system-ui,-apple-system,Segoe "
    "UI,sans-serif;margin:0;background:#f6f7f9;color:#1d232b}"
    "header{background:#1d3557;color:#fff;padding:14px 24px}"
    "header h1{margin:0;font-size:20px}header p{margin:2px 0 0;opacity:.85}"
    "main{display:flex;flex-wrap:wrap;gap:16px;padding:16px 24px}"
    ".card,.wide,.chartbox{background:#fff;border:1px solid #dde1e6;border-radius:6px;"
    "padding:10px 14px}"
    ".card{flex:1 1 280px}.wide{flex:1 1 100%}.chartbox{flex:1 1 560px;min-width:0}"
    "h2{font-size:15px;margin:0 0 8px}"
    "table{border-collapse:collapse}th,td{padding:2px 10px 2px 0;text-align:left;"
    "vertical-align:top}"
    ".card th{color:#58606b;font-weight:500}.stats td,.servers td{text-align:right}"
    ".stats{width:100%}.stats th{text-align:right}.stats th:first-child{text-align:left}"
    ".stats td:last-child,.stats th:last-child{text-align:left;padding-left:24px;width:50%}"
    ".runs td,.runs th{white-space:nowrap}.runs td{text-align:right}"
    ".runs td:nth-child(2),.runs td:nth-child(4){text-align:left}.runs th{font-weight:600}"
    ".stats th,.servers th{font-weight:600}.reco{font-size:18px;font-weight:600;margin:4px 0}"
    ".note{color:#58606b;margin:4px 0}.chart{height:220px}.legend{min-height:20px;"
    "font-size:12px}"
    ".legend span{margin-right:8px}footer{padding:8px 24px 20px;color:#58606b;font-size:12px}";

static const char page_js[] =
    "(function(){'use strict';\n"
    "var D=JSON.parse(document.getElementById('rt-data').textContent);\n"
    "function pad(n){return(n<10?'0':'')+n;}\n"
    "function elapsed(s){if(D.span<120)return s.toFixed(D.span<10?2:1)+' s';"
    "s=Math.max(0,Math.round(s));var h=Math.floor(s/3600),"
    "m=Math.floor(s/60)%60,x=s%60;return h?h+':'+pad(m)+':'+pad(x):m+':'+pad(x);}\n"
    "function clock(s){var d=new Date(D.wall0_ms+s*1000);return d.getFullYear()+'-'+"
    "pad(d.getMonth()+1)+'-'+pad(d.getDate())+' '+pad(d.getHours())+':'+pad(d.getMinutes())+"
    "':'+pad(d.getSeconds());}\n"
    "function day(s){var d=new Date(s*1000),m=pad(d.getMonth()+1)+'-'+pad(d.getDate());"
    "var hm=pad(d.getHours())+':'+pad(d.getMinutes());"
    "return D.span<3600?hm+':'+pad(d.getSeconds()):D.span<172800?m+' '+hm:d.getFullYear()+'-'+m;}\n"
    "function clockAt(s){var d=new Date(s*1000);return d.getFullYear()+'-'+pad(d.getMonth()+1)+"
    "'-'+pad(d.getDate())+' '+pad(d.getHours())+':'+pad(d.getMinutes())+':'+pad(d.getSeconds());}\n"
    "function human(v,u){if(v===null||v===undefined||isNaN(v))return '-';"
    "if(u==='B/s'){var k=['B/s','KiB/s','MiB/s','GiB/s','TiB/s'],i=0;"
    "while(Math.abs(v)>=1024&&i<4){v/=1024;i++;}return v.toFixed(i||Math.abs(v)<10?1:0)+' '+k[i];}"
    "var p=Math.abs(v)>=100?0:Math.abs(v)>=10?1:2;return v.toFixed(p)+(u?' '+u:'');}\n"
    /* round ticks in the unit they are labeled in: 1, 2 or 5 x 10^k of
     * KiB/s, MiB/s... for bytes, of the chart's unit otherwise */
    "function ticks(u){return function(min,max,px){var k=['B/s','KiB/s','MiB/s','GiB/s','TiB/s'],"
    "i=0,s=1;if(u==='B/s'){var m=Math.max(Math.abs(min),Math.abs(max));"
    "while(m>=1024&&i<4){m/=1024;s*=1024;i++;}}var lo=min/s,hi=max/s;if(!(hi>lo))hi=lo+1;"
    "var "
    "raw=(hi-lo)/Math.max(2,Math.floor(px/50)),p=Math.pow(10,Math.floor(Math.log(raw)/Math.LN10)),"
    "st=p*(raw<=p?1:raw<=2*p?2:raw<=5*p?5:10),t=[];"
    "for(var v=Math.ceil(lo/st-1e-9)*st;v<=hi+st*1e-9&&t.length<50;v+=st){"
    "var "
    "r=parseFloat(v.toPrecision(12)),w=u==='B/"
    "s'?k[i]:r===1&&(u==='cores'||u==='GPUs')?u.slice(0,-1):u;"
    "t.push({v:r*s,label:String(r)+' '+w});}"
    "return t;};}\n"
    "var box=document.getElementById('charts'),gs=[];\n"
    "D.charts.forEach(function(c){\n"
    " var s=document.createElement('section');s.className='chartbox';"
    " var h=document.createElement('h2');h.textContent=c.title;"
    " var el=document.createElement('div');el.className='chart';el.id='chart-'+c.id;"
    " var lg=document.createElement('div');lg.className='legend';"
    " s.appendChild(h);s.appendChild(el);s.appendChild(lg);box.appendChild(s);\n"
    /* a limit or request: a dashed line; the job page: dates on the x
     * axis (seconds since the epoch), a point per run */
    " var ser={};(c.dashed||[]).forEach(function(l){ser[l]={strokePattern:[6,4],"
    "strokeWidth:1.5};});\n"
    " var xa=D.dates?{axisLabelWidth:96,axisLabelFormatter:function(x){return day(x);},"
    "valueFormatter:function(x){return clockAt(x);}}"
    ":{axisLabelFormatter:function(x){return elapsed(x);},"
    "valueFormatter:function(x){return clock(x)+' (+'+elapsed(x)+')';}};\n"
    " var o={labels:['time'].concat(c.labels),customBars:true,includeZero:true,"
    "labelsDiv:lg,legend:'always',labelsSeparateLines:false,fillAlpha:0.2,strokeWidth:1.5,"
    "drawPoints:!!D.dates,pointSize:3,series:ser,"
    "colors:['#1d6fd8','#e4572e','#2a9d8f','#f4a261','#6e7781'].slice(0,c.labels.length),"
    "axes:{x:xa,"
    "y:{axisLabelWidth:84,ticker:ticks(c.unit),valueFormatter:function(v){return "
    "human(v,c.unit);}}},"
    "plugins:[new Dygraph.Plugins.Crosshair({direction:'vertical'})]};\n"
    /* one run: a day either side, not an axis of no width */
    " if(D.dates&&c.data.length===1)o.dateWindow=[c.data[0][0]-43200,c.data[0][0]+43200];\n"
    " var g=new Dygraph(el,c.data,o);\n"
    " gs.push(g);});\n"
    "if(gs.length>1)Dygraph.synchronize(gs,{selection:true,zoom:true,range:false});\n"
    "window.rtCharts=gs;\n"
    "})();\n";
/* A regular file is replaced atomically; /dev/null, a FIFO or
 * /dev/stdout is written where it is (safefile.h). */
static int write_page(const char *path, const struct rt_buf *b)
{
	struct rt_outfile o;
	char why[512];
	int rc = rt_outfile_open(&o, path, 0644, why, sizeof(why));
	if (rc)
		return rc;
	if ((rc = rt_write_all(o.fd, b->p, b->len, 60000))) {
		rt_outfile_abort(&o);
		return rc;
	}
	return rt_outfile_commit(&o);
}

/* The page to path ("-": stdout), and one line saying where. */
int rep_emit(const char *path, const struct rt_buf *b, const char *what)
{
	int rc = b->oom ? -ENOMEM : 0;
	if (!rc && !strcmp(path, "-")) {
		size_t off = 0;
		while (off < b->len) {
			ssize_t n = write(1, b->p + off, b->len - off);
			if (n <= 0) {
				rc = -errno;
				break;
			}
			off += (size_t)n;
		}
	} else if (!rc) {
		rc = write_page(path, b);
	}
	if (rc)
		rt_say("cannot write the report to %s: %s (choose another path with -o FILE)", path,
		       strerror(-rc));
	else if (strcmp(path, "-"))
		rt_say("report of %s written to %s (%zu KiB)", what, path, (b->len + 1023) / 1024);
	return rc;
}

/* The page's head up to <main>: title, the inlined styles, the header. */
void rep_page_head(struct rt_buf *b, const char *dir, const char *title, const char *sub)
{
	rt_buf_puts(b, "<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>\n"
	               "<meta name=viewport content=\"width=device-width,initial-scale=1\">\n"
	               "<meta http-equiv=Content-Security-Policy content=\"default-src 'none'; "
	               "script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:\">\n"
	               "<title>");
	rep_html(b, title);
	rt_buf_puts(b, "</title>\n<style>\n");
	inline_file(b, dir, "dygraph.min.css", 0);
	rt_buf_puts(b, page_css);
	rt_buf_puts(b, "\n</style></head><body>\n<header><h1>");
	rep_html(b, title);
	rt_buf_puts(b, "</h1><p>");
	rep_html(b, sub);
	rt_buf_puts(b, "</p></header>\n<main>\n");
}

/* After the page's data object: the charting library and the page's script
 * (lib is freed). */
void rep_page_tail(struct rt_buf *b, struct rt_buf *lib)
{
	rt_buf_puts(b, "}</script>\n<script>\n");
	rt_buf_put(b, lib->p, lib->len);
	rt_buf_puts(b, page_js);
	rt_buf_puts(b, "</script>\n</body></html>\n");
	rt_buf_free(lib);
}

int rep_load_dygraphs(struct rt_buf *lib, const char **dir)
{
	*dir = getenv("RT_DYGRAPHS_DIR");
	if (!*dir || !**dir)
		*dir = DYGRAPHS_DIR;
	if (inline_file(lib, *dir, "dygraph.min.js", 1) ||
	    inline_file(lib, *dir, "extras/synchronizer.js", 1) ||
	    inline_file(lib, *dir, "extras/crosshair.js", 1)) {
		rt_buf_free(lib);
		rt_say("the report needs the dygraphs charting library in %s (install it: apt-get "
		       "install libjs-dygraphs)",
		       *dir);
		return 1;
	}
	return 0;
}

/* Up to this many earlier runs of the job's stage beside the run */
#define HISTORY_RUNS 5
/* The run beside the earlier runs of its job and stage (a Metaflow step's
 * runs of its flow): none when it is the first. */
static void history_section(struct rt_buf *b, struct rt_store *s, const struct rt_answer *a)
{
	struct rt_answer *h;
	size_t n;
	if (rt_answer_history(s, a, HISTORY_RUNS, &h, &n) || !n)
		return;
	struct rt_answer *all = calloc(n + 1, sizeof(*all));
	if (all) {
		memcpy(all, h, n * sizeof(*h));
		all[n] = *a; /* (shallow: this run stays the caller's) */
		const char *stage = rt_meta_str(a->meta, "metadata", "stage_name");
		char title[300];
		snprintf(title, sizeof(title), "This run and the %zu before it (job %s%s%s)", n,
		         a->ri.job_name, stage ? ", step " : "", stage ? stage : "");
		rep_runs_table(b, title, all, n + 1);
		free(all);
	}
	for (size_t i = 0; i < n; i++)
		rt_answer_free(&h[i]);
	free(h);
}

/* The recommendation as the scheduler that ran the job takes it. */
static void scheduler_section(struct rt_buf *b, const struct rt_answer *a,
                              const struct rt_recommendation *r)
{
	char line[256];
	const char *name;
	if (!a->st.lines || !rt_scheduler_line(a->meta, r, line, sizeof(line), &name))
		return;
	int mf = !strcmp(name, "metaflow"), k8s = !strcmp(name, "kubernetes");
	rt_buf_puts(b, mf    ? "<section class=wide><h2>For the step's decorator</h2>"
	               : k8s ? "<section class=wide><h2>For the pod's container</h2>"
	                     : "<section class=wide><h2>For the next sbatch</h2>");
	rt_buf_puts(b, "<p class=reco><code id=scheduler-line>");
	rep_html(b, line);
	rt_buf_puts(b, mf ? "</code></p><p class=note>The recommendation above, as Metaflow's "
	                    "@resources takes it (memory in MiB); the reason for any raised value "
	                    "is beside it.</p></section>\n"
	               : k8s
	                   ? "</code></p><p class=note>The recommendation above, as a container's "
	                     "resources: the CPU requested and not limited (a limit throttles "
	                     "bursts), memory requested and limited alike.</p></section>\n"
	                   : "</code></p><p class=note>The recommendation above, as Slurm's "
	                     "options (--time once Slurm said how the job ended: its elapsed "
	                     "time x 1.2).</p></section>\n");
}

/* A line of the job section's list, escaped. */
static void item(struct rt_buf *b, const char *label, const char *text)
{
	rt_buf_puts(b, "<li>");
	if (label) {
		rt_buf_puts(b, "<b>");
		rep_html(b, label);
		rt_buf_puts(b, "</b> ");
	}
	rep_html(b, text);
	rt_buf_puts(b, "</li>");
}

/* A job known by its cgroup: how Slurm saw its end and seff's figures,
 * its steps or containers (each its own figures; a container its own
 * resources). None when the run says none of it. */
static void parts_section(struct rt_buf *b, const struct rt_answer *a)
{
	struct rt_job_part p[16];
	struct rt_slurm_end e;
	struct rt_seff f;
	char line[400];
	size_t n = rt_job_parts(a->meta, p, 16);
	int said = rt_slurm_end(a->meta, &e), seff = rt_seff(&a->st, a->meta, &f);
	const char *label = rt_job_parts_label(a->meta);
	if (!n && !said && !seff)
		return;
	rt_buf_puts(b, "<section class=wide><h2>The job as its scheduler ran it</h2><ul>");
	if (said && rt_slurm_end_text(&e, line, sizeof(line)))
		item(b, "Slurm says", line);
	if (seff && rt_seff_text(&f, line, sizeof(line)))
		item(b, "seff's way", line);
	for (size_t i = 0; i < n; i++)
		if (rt_job_part_text(&p[i], line, sizeof(line)))
			item(b, i ? NULL : label, line);
	int shown = 0;
	for (size_t i = 0; i < n && !strcmp(label, "containers"); i++)
		if (rt_container_line(&p[i], a->st.duration, line, sizeof(line)))
			item(b, shown++ ? NULL : "per container", line);
	rt_buf_puts(b, "</ul></section>\n");
}

static void free_answers(struct rt_answer *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		rt_answer_free(&v[i]);
	free(v);
}

/* "so far of the 3 recorded (1 still running)", or "of all 3, every one
 * ended" when the caller's count of branches (--branches) is reached. */
static void branches_so_far(char *out, size_t cap, const struct rt_largest *by, size_t n,
                            unsigned total)
{
	if (total && n >= total && !by->running)
		snprintf(out, cap, "of all %zu branches, every one ended", n);
	else if (total)
		snprintf(out, cap, "so far of %u branches (%zu recorded, %zu still running)", total,
		         n, by->running);
	else
		snprintf(out, cap, "so far of the %zu branches recorded (%zu still running)", n,
		         by->running);
}

/* A branch of a step (a Metaflow foreach's task): the step's one line, the
 * largest any of its branches needs, beside this task's own above; and the
 * branches, each with its task. */
static void branches_section(struct rt_buf *b, struct rt_store *s, const struct rt_answer *a,
                             unsigned total)
{
	struct rt_answer *br;
	size_t n;
	rt_answer_branches(s, a, &br, &n);
	if (n < 2 && total < 2) {
		free_answers(br, n);
		return;
	}
	struct rt_recommendation r;
	struct rt_largest by;
	rt_recommend_largest(br, n, &r, &by);
	char line[256], sofar[160], note[600];
	const char *name;
	rt_buf_puts(b, "<section class=wide><h2>For the step, all its branches</h2>");
	if (by.measured && rt_scheduler_line(a->meta, &r, line, sizeof(line), &name)) {
		rt_buf_puts(b, "<p class=reco><code id=step-line>");
		rep_html(b, line);
		rt_buf_puts(b, "</code></p>");
	}
	branches_so_far(sofar, sizeof(sofar), &by, n, total);
	snprintf(note, sizeof(note),
	         "The largest any one branch needs, resource by resource, %s: CPU from run "
	         "%llu, memory from run %llu. Each branch runs on a server of its own, so the "
	         "step needs its largest; the decorator's line above is this branch's own.",
	         sofar, (unsigned long long)by.cpu_run, (unsigned long long)by.memory_run);
	rt_buf_puts(b, "<p class=note>");
	rep_html(b, note);
	rt_buf_puts(b, "</p></section>\n");
	rep_runs_table(b, "The step's branches", br, n);
	free_answers(br, n);
}

/* What held the job back, a line each (none: no section). */
static void findings_section(struct rt_buf *b, const struct rt_answer *a)
{
	char found[8][RT_FINDING_LEN];
	size_t nfound = rt_findings_text(&a->st, a->ri.start_ns, found, 8);
	if (!nfound)
		return;
	rt_buf_puts(b, "<section class=wide><h2>What held the job back</h2><ul>");
	for (size_t i = 0; i < nfound; i++) {
		rt_buf_puts(b, "<li>");
		rep_html(b, found[i]);
		rt_buf_puts(b, "</li>");
	}
	rt_buf_puts(b, "</ul></section>\n");
}

/* The recommendation, or why there is none. */
static void reco_or_none(struct rt_buf *b, const struct rt_answer *a,
                         const struct rt_recommendation *r, const struct rt_offer *off)
{
	if (a->st.lines)
		rep_reco_section(b, r, off);
	else if (rt_run_status_of(a->ri.status) == RT_RUN_RUNNING)
		rt_buf_puts(b, "<section class=wide><h2>No samples yet</h2><p class=note>The run "
		               "is still running and has no full interval yet: nothing to chart or "
		               "recommend so far.</p></section>\n");
	else
		rt_buf_puts(
		    b, "<section class=wide><h2>No samples</h2><p class=note>The run ended "
		       "before its first sample: nothing to chart or recommend.</p></section>\n");
}

int rt_cmd_report(struct rt_store *s, const struct rt_answer_opts *o)
{
	if (o->job)
		return rep_job_report(s, o);
	const char *dir;
	struct rt_buf lib = {0};
	if (rep_load_dygraphs(&lib, &dir))
		return 1;
	struct rt_answer a;
	if (rt_answer_run(s, o->run, 1, &a)) {
		rt_buf_free(&lib);
		return 1;
	}
	if (o->failed) /* the caller's word: the job failed (a Metaflow step) */
		snprintf(a.ri.status, sizeof(a.ri.status), "%s", rt_run_status_name(RT_RUN_FAILED));
	struct rt_recommendation r;
	rt_recommend(&a.st, &r);
	struct rt_offer off = {0};
	off.price_here = NAN;
	off.duration = a.st.duration;
	if (o->servers) {
		rt_offer_fetch(s, &a, &r, o->servers, &off);
	} else {
		rt_offer_cloud(s, &a, &off);
	}

	struct rt_buf b = {0};
	char title[512], t[64];
	snprintf(title, sizeof(title), "rt report: run %llu%s%s", (unsigned long long)a.ri.id,
	         a.ri.job_name ? " " : "", a.ri.job_name ? a.ri.job_name : "");
	rt_fmt_iso8601(t, sizeof(t), a.ri.start_ns);
	char sub[160];
	snprintf(sub, sizeof(sub), "%s%s, started %s", a.ri.status,
	         a.partial ? " (partial: the figures cover the samples so far)" : "", t);
	rep_page_head(&b, dir, title, sub);
	rep_job_card(&b, &a);
	rep_host_card(&b, &a);
	rep_given_card(&b, &a);
	rep_cloud_card(&b, &off);
	rep_summary_table(&b, &a);
	findings_section(&b, &a);
	rep_gpu_section(&b, &a.st);
	reco_or_none(&b, &a, &r, &off);
	scheduler_section(&b, &a, &r);
	parts_section(&b, &a);
	branches_section(&b, s, &a, o->branches);
	history_section(&b, s, &a);
	rt_buf_puts(&b, "<div id=charts style=\"display:contents\"></div>\n");
	rep_left_out_line(&b, &a);
	rt_buf_puts(&b, "</main>\n<footer>Made by rt-export " RT_VERSION);
	if (o->integration && *o->integration) { /* the binding that asked: R, Metaflow */
		rt_buf_puts(&b, " from <code>");
		rep_html(&b, o->integration);
		rt_buf_puts(&b, "</code>");
	}
	rt_buf_puts(&b,
	            ". Charts: drag to zoom, double-click to reset; each point is a time bucket "
	            "(band: min to max, line: mean).</footer>\n"
	            "<script type=\"application/json\" id=rt-data>");
	rt_buf_printf(&b, "{\"wall0_ms\":%.0f,\"span\":%.3f,\"charts\":",
	              (double)a.series.wall0_ns / 1e6, a.st.duration);
	rep_charts_json(&b, &a);
	rep_page_tail(&b, &lib);

	char def[64], what[96];
	snprintf(def, sizeof(def), "rt-report-%llu.html", (unsigned long long)a.ri.id);
	snprintf(what, sizeof(what), "run %llu", (unsigned long long)a.ri.id);
	int rc = rep_emit(o->output ? o->output : def, &b, what);
	rt_buf_free(&b);
	rt_offer_free(&off);
	rt_answer_free(&a);
	return rc ? 1 : 0;
}
