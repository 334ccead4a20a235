/*
 * summary_int.h - what the summary's files share (summary.c computes the
 * answer; summary_notes.c what every form says; summary_text.c,
 * summary_md.c and summary_json.c its forms; offers.c servers and cost;
 * efficiency.c given against used; summary_verbs.c the verbs). Only
 * exporter/answer/ includes it.
 */
#ifndef RT_SUMMARY_INT_H
#define RT_SUMMARY_INT_H

#include <stddef.h>
#include <stdio.h>

#include "answer/answer.h"

/* summary.c: a column's stats (NULL: absent), its sum; text made safe
 * for a terminal; the command as one line */
const struct rt_colstat *ans_col(const struct rt_runstats *st, unsigned name);
double ans_sum_of(const struct rt_runstats *st, unsigned name);
void ans_clean(char *buf, size_t cap, const char *s);
void ans_command_line(const cJSON *meta, char *buf, size_t cap);
/* summary_text.c: the summary's table */
void ans_print_table(FILE *f, const struct rt_runstats *st, const cJSON *meta);
/* summary_notes.c: the recommendation in one line */
void ans_reco_text(char *buf, size_t cap, const struct rt_recommendation *r);
/* summary_json.c: a number or null, a string or null; the allocation */
void ans_add_num_or_null(cJSON *o, const char *k, double v);
void ans_add_str_or_null(cJSON *o, const char *k, const char *v);
void ans_add_allocation(cJSON *o, const struct rt_runstats *st);

#endif
