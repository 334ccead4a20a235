/*
 * report_int.h - what the report's files share (report.c: the page and
 * rt-export report; report_charts.c, report_cards.c: its parts;
 * report_job.c: a job's runs). Only exporter/answer/ includes it.
 */
#ifndef RT_REPORT_INT_H
#define RT_REPORT_INT_H

#include <stddef.h>
#include <stdio.h>

#include "answer/answer.h"
#include "rt/common.h"

#define RT_REPORT_BUCKETS 1200
#define DYGRAPHS_DIR "/usr/share/javascript/dygraphs"

/* report.c: text escaped for HTML, for a JS string; a number; the page
 * written, its head and tail with the charting library */
void rep_html(struct rt_buf *b, const char *s);
void rep_js_str(struct rt_buf *b, const char *s);
void rep_num(struct rt_buf *b, double v);
/* report_charts.c: the GPU section, the charts' data, what they leave out */
void rep_gpu_section(struct rt_buf *b, const struct rt_runstats *st);
void rep_charts_json(struct rt_buf *b, const struct rt_answer *a);
/* report_cards.c: the cards, the summary table, the recommendation */
void rep_job_card(struct rt_buf *b, const struct rt_answer *a);
void rep_host_card(struct rt_buf *b, const struct rt_answer *a);
void rep_given_card(struct rt_buf *b, const struct rt_answer *a);
void rep_cloud_card(struct rt_buf *b, const struct rt_offer *o);
void rep_summary_table(struct rt_buf *b, const struct rt_answer *a);
void rep_reco_section(struct rt_buf *b, const struct rt_recommendation *r,
                      const struct rt_offer *o);
/* report.c */
int rep_emit(const char *path, const struct rt_buf *b, const char *what);
void rep_page_head(struct rt_buf *b, const char *dir, const char *title, const char *sub);
void rep_page_tail(struct rt_buf *b, struct rt_buf *lib);
int rep_load_dygraphs(struct rt_buf *lib, const char **dir);
/* report_job.c: a table of runs; the report of a job's runs */
void rep_runs_table(struct rt_buf *b, const char *title, const struct rt_answer *runs, size_t n);
int rep_job_report(struct rt_store *s, const struct rt_answer_opts *o);
/* report_charts.c: one line for the charts with nothing to show */
void rep_left_out_line(struct rt_buf *b, const struct rt_answer *a);

#endif
